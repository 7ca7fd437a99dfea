/* A minimal KIM API simulator for kim.sh: what LAMMPS does not exercise (it takes the virial from
   f.r, not from the model), checked directly. Usage: kim_sim MODEL IN.txt OUT.txt
   IN.txt as for `test_deepmd_tool eval` (n, a box that is ignored, n lines "type x y z"): the atoms
   form an open cluster, all contributing, with a full neighbour list (all pairs within the model's
   cutoff, O(n^2): a test). OUT.txt: energy; the virial in KIM's Voigt order xx yy zz yz xz xy;
   n lines "fx fy fz particle_energy" and the particle virial (Voigt, 6 values). Built by kim.sh with the KIM API's pkg-config flags.
   kim_sim MODEL IN.txt OUT.txt I J: the same with J left out of I's neighbour list (one direction
   only, a list a model that searches for itself would not notice): a model on the given list sees
   atom I without its neighbour J and every other atom as before. */
#include <stdio.h>
#include <stdlib.h>
#include "KIM_SimulatorHeaders.h"

typedef struct {
  int     n;
  double  cut;
  double *x;
  int    *num, **list;
} Nbr;

static int GetNeighbors(void *const data, int const nlists, double const *const cutoffs, int const index, int const i, int *const nn, int const **const nbrs)
{
  Nbr *b = (Nbr *)data;
  (void)nlists;
  (void)cutoffs;
  if (index != 0 || i < 0 || i >= b->n) return 1;
  *nn   = b->num[i];
  *nbrs = b->list[i];
  return 0;
}

static int Fail(const char *what)
{
  fprintf(stderr, "kim_sim: error: %s\n", what);
  return 1;
}

int main(int argc, char **argv)
{
  KIM_Model            *model;
  KIM_ComputeArguments *args;
  int                   accepted, n, *species, *contributing, supported, code[2];
  double               *x, *f, *pe, *pv, e, vir[6], box[9];
  const char           *names[2] = {"O", "H"};
  Nbr                   b;
  FILE                 *fp;

  int omit_i = -1, omit_j = -1;
  if (argc != 4 && argc != 6) return Fail("usage: kim_sim MODEL IN.txt OUT.txt [I J]");
  if (argc == 6) {
    omit_i = atoi(argv[4]);
    omit_j = atoi(argv[5]);
  }
  if (KIM_Model_Create(KIM_NUMBERING_zeroBased, KIM_LENGTH_UNIT_A, KIM_ENERGY_UNIT_eV, KIM_CHARGE_UNIT_e, KIM_TEMPERATURE_UNIT_K, KIM_TIME_UNIT_ps, argv[1], &accepted, &model) || !accepted) return Fail("cannot create the model");
  for (int t = 0; t < 2; t++)
    if (KIM_Model_GetSpeciesSupportAndCode(model, KIM_SpeciesName_FromString(names[t]), &supported, &code[t]) || !supported) return Fail("species O, H");
  fp = fopen(argv[2], "r");
  if (!fp || fscanf(fp, "%d", &n) != 1 || n <= 0 || n > 100000) return Fail("cannot read IN.txt");
  for (int q = 0; q < 9; q++)
    if (fscanf(fp, "%lf", &box[q]) != 1) return Fail("IN.txt: box");
  x            = malloc(3 * n * sizeof(double));
  f            = malloc(3 * n * sizeof(double));
  pe           = malloc(n * sizeof(double));
  pv           = malloc(6 * n * sizeof(double));
  species      = malloc(n * sizeof(int));
  contributing = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++) {
    int t;
    if (fscanf(fp, "%d %lf %lf %lf", &t, &x[3 * i], &x[3 * i + 1], &x[3 * i + 2]) != 4 || t < 0 || t > 1) return Fail("IN.txt: atom");
    species[i]      = code[t];
    contributing[i] = 1;
  }
  fclose(fp);
  KIM_Model_GetInfluenceDistance(model, &b.cut);
  b.n    = n;
  b.x    = x;
  b.num  = calloc(n, sizeof(int));
  b.list = malloc(n * sizeof(int *));
  for (int i = 0; i < n; i++) {
    b.list[i] = malloc(n * sizeof(int));
    for (int j = 0; j < n; j++) {
      double d2 = 0;
      for (int a = 0; a < 3; a++) d2 += (x[3 * j + a] - x[3 * i + a]) * (x[3 * j + a] - x[3 * i + a]);
      if (j != i && d2 < b.cut * b.cut && !(i == omit_i && j == omit_j)) b.list[i][b.num[i]++] = j;
    }
  }
  if (KIM_Model_ComputeArgumentsCreate(model, &args)) return Fail("compute arguments");
  if (KIM_ComputeArguments_SetArgumentPointerInteger(args, KIM_COMPUTE_ARGUMENT_NAME_numberOfParticles, &n) ||
      KIM_ComputeArguments_SetArgumentPointerInteger(args, KIM_COMPUTE_ARGUMENT_NAME_particleSpeciesCodes, species) ||
      KIM_ComputeArguments_SetArgumentPointerInteger(args, KIM_COMPUTE_ARGUMENT_NAME_particleContributing, contributing) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_coordinates, x) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_partialEnergy, &e) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_partialForces, f) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_partialParticleEnergy, pe) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_partialVirial, vir) ||
      KIM_ComputeArguments_SetArgumentPointerDouble(args, KIM_COMPUTE_ARGUMENT_NAME_partialParticleVirial, pv) ||
      KIM_ComputeArguments_SetCallbackPointer(args, KIM_COMPUTE_CALLBACK_NAME_GetNeighborList, KIM_LANGUAGE_NAME_c, (KIM_Function *)GetNeighbors, &b))
    return Fail("cannot set the compute arguments");
  if (KIM_Model_Compute(model, args)) return Fail("the model's compute failed");
  fp = fopen(argv[3], "w");
  if (!fp) return Fail("cannot write OUT.txt");
  fprintf(fp, "%.17g\n", e);
  for (int k = 0; k < 6; k++) fprintf(fp, "%.17g%c", vir[k], k == 5 ? '\n' : ' ');
  for (int i = 0; i < n; i++) {
    fprintf(fp, "%.17g %.17g %.17g %.17g", f[3 * i], f[3 * i + 1], f[3 * i + 2], pe[i]);
    for (int k = 0; k < 6; k++) fprintf(fp, " %.17g", pv[6 * i + k]);
    fprintf(fp, "\n");
  }
  fclose(fp);
  KIM_Model_ComputeArgumentsDestroy(model, &args);
  KIM_Model_Destroy(&model);
  return 0;
}
