/* Helper for the deepmd scripts (not a test by itself):
     import OUT.h5 DIR...                       DeePMD-kit system dirs -> md_frames dataset
     dptest MODEL.h5 [-compress STEP] [-detail PREFIX] FILE.h5...  dp test RMSEs of a model on datasets
                                                (-detail: DeePMD-kit's detail files PREFIX.e.out, .f.out, ...)
     xyz DATA.h5 FRAME REP OUT.xyz              a frame, replicated, as extended XYZ for md read_xyz
     energy MODEL.h5 DATA.h5 FRAME REP [F.txt]  C-API energy (and forces) of a replicated frame
     eval MODEL.h5 IN.txt OUT.txt [open]        C-API energy, virial (9), forces and atomic energies (n lines
                                                "fx fy fz e") of IN.txt: n, the box (9 numbers, rows a b c;
                                                ignored with `open`: a cluster), n lines "type x y z" (the KIM tests)
 */
#include <stdlib.h>
#include "../../../surrogates/deepmd/deepmd_train.h"
#include "sgdataset.h"
#include "sgdeepmd.h"

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: %s import OUT.h5 DIR... | dptest MODEL.h5 [-compress STEP] FILE.h5...", argv[0]);
  if (!strcmp(argv[1], "import")) PetscCall(SgDeepmdImport(PETSC_COMM_SELF, argc - 3, (const char *const *)argv + 3, argv[2], PETSC_TRUE));
  else if (!strcmp(argv[1], "dptest")) { /* what surge model test does, with the options first */
    int         a = 3;
    const char *detail = NULL;
    PetscReal   step = 0;
    while (a + 1 < argc && argv[a][0] == '-') {
      if (!strcmp(argv[a], "-compress")) step = atof(argv[a + 1]);
      else if (!strcmp(argv[a], "-detail")) detail = argv[a + 1];
      else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "dptest: unknown option %s (-compress STEP, -detail PREFIX)", argv[a]);
      a += 2;
    }
    PetscCall(SgDeepmdModelTest(PETSC_COMM_WORLD, argv[2], argc - a, (const char *const *)argv + a, detail, step));
  } else if (!strcmp(argv[1], "xyz")) { /* xyz DATA.h5 FRAME REP OUT.xyz: frame replicated REP^3 times */
    SgDataset ds;
    int64_t   n = 0;
    int32_t  *t;
    double   *x, box[9];
    char    **tm;
    PetscInt  nt, fr = atoi(argv[3]), rep = atoi(argv[4]);
    FILE     *fp;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, argv[2], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, NULL));
    PetscCall(PetscMalloc2(n, &t, 3 * n, &x));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, t));
    PetscCall(SgDatasetReadStrings(ds, "type_map", &nt, &tm));
    PetscCall(SgDatasetReadField(ds, "coord", fr, 1, SG_DTYPE_F64, x));
    PetscCall(SgDatasetReadField(ds, "box", fr, 1, SG_DTYPE_F64, box));
    fp = fopen(argv[5], "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", argv[5]);
    fprintf(fp, "%ld\nLattice=\"", (long)(n * rep * rep * rep));
    for (int q = 0; q < 9; q++) fprintf(fp, "%s%.10f", q ? " " : "", box[q] * rep);
    fprintf(fp, "\" Properties=species:S:1:pos:R:3\n");
    for (int a = 0; a < rep; a++)
      for (int b = 0; b < rep; b++)
        for (int c = 0; c < rep; c++)
          for (int64_t i = 0; i < n; i++) {
            fprintf(fp, "%s", tm[t[i]]);
            for (int q = 0; q < 3; q++) fprintf(fp, " %.10f", x[3 * i + q] + a * box[q] + b * box[3 + q] + c * box[6 + q]);
            fprintf(fp, "\n");
          }
    fclose(fp);
    PetscCall(SgDatasetStringsFree(nt, &tm));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(PetscFree2(t, x));
  } else if (!strcmp(argv[1], "scan")) { /* scan MODEL.h5 R0 R1 NPT: 3-atom cluster, atom 2 moved along z */
    SgDeepmd  m;
    PetscReal x[9] = {0, 0, 0, 0.97, 0, 0, 0, 0, 0}, f[9], e, r0 = atof(argv[3]), r1 = atof(argv[4]);
    PetscInt  t[3] = {0, 1, 1}, np = atoi(argv[5]);
    PetscCall(SgDeepmdLoad(argv[2], &m));
    for (PetscInt k = 0; k < np; k++) {
      x[8] = r0 + (r1 - r0) * k / (np - 1);
      PetscCall(SgDeepmdCompute(m, 3, x, t, NULL, &e, f, NULL, NULL));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "%.10f %.15e %.15e\n", x[8], e, f[8]));
    }
    PetscCall(SgDeepmdDestroy(&m));
  } else if (!strcmp(argv[1], "energy")) { /* energy MODEL.h5 DATA.h5 FRAME REP: C-API energy of a replicated frame */
    SgDeepmd   m;
    SgDataset  ds;
    int64_t    n = 0;
    int32_t   *t;
    double    *x, box[9], *xr, *fr, e, br[9];
    PetscInt   fr0 = atoi(argv[4]), rep = atoi(argv[5]), *tr, k = 0;
    PetscCall(SgDeepmdLoad(argv[2], &m));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, argv[3], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, NULL));
    PetscCall(PetscMalloc2(n, &t, 3 * n, &x));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, t));
    PetscCall(SgDatasetReadField(ds, "coord", fr0, 1, SG_DTYPE_F64, x));
    PetscCall(SgDatasetReadField(ds, "box", fr0, 1, SG_DTYPE_F64, box));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(PetscMalloc3(3 * n * rep * rep * rep, &xr, n * rep * rep * rep, &tr, 3 * n * rep * rep * rep, &fr));
    for (int a = 0; a < rep; a++)
      for (int b = 0; b < rep; b++)
        for (int c = 0; c < rep; c++)
          for (int64_t i = 0; i < n; i++, k++) {
            for (int q = 0; q < 3; q++) xr[3 * k + q] = x[3 * i + q] + a * box[q] + b * box[3 + q] + c * box[6 + q];
            tr[k] = t[i];
          }
    for (int q = 0; q < 9; q++) br[q] = box[q] * rep;
    PetscCall(SgDeepmdCompute(m, k, xr, tr, br, &e, fr, NULL, NULL));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%.12f\n", e));
    if (argc > 6) { /* forces to a text file */
      FILE *fp = fopen(argv[6], "w");
      PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", argv[6]);
      for (PetscInt i = 0; i < k; i++) fprintf(fp, "%.15e %.15e %.15e\n", fr[3 * i], fr[3 * i + 1], fr[3 * i + 2]);
      fclose(fp);
    }
    PetscCall(PetscFree3(xr, tr, fr));
    PetscCall(PetscFree2(t, x));
    PetscCall(SgDeepmdDestroy(&m));
  } else if (!strcmp(argv[1], "eval")) {
    SgDeepmd   m;
    PetscInt   n, *t;
    PetscReal *x, *f, *ea, *av, box[9], v[9], e;
    PetscBool  open = (PetscBool)(argc > 5 && !strcmp(argv[5], "open"));
    FILE      *fp   = fopen(argv[3], "r");
    PetscCheck(fp && fscanf(fp, "%" PetscInt_FMT, &n) == 1 && n > 0 && n < 10000000, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "cannot read %s", argv[3]);
    for (int q = 0; q < 9; q++) PetscCheck(fscanf(fp, "%lf", &box[q]) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: box", argv[3]);
    PetscCall(PetscMalloc4(n, &t, 3 * n, &x, 3 * n, &f, n, &ea));
    for (PetscInt i = 0; i < n; i++) PetscCheck(fscanf(fp, "%" PetscInt_FMT " %lf %lf %lf", &t[i], &x[3 * i], &x[3 * i + 1], &x[3 * i + 2]) == 4, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: atom %" PetscInt_FMT, argv[3], i);
    fclose(fp);
    PetscCall(SgDeepmdLoad(argv[2], &m));
    PetscCall(PetscMalloc1(9 * n, &av));
    if (open) PetscCall(SgDeepmdComputeGhostsAtomic(m, n, n, x, t, &e, f, v, ea, av)); /* open: with the atomic virials */
    else PetscCall(SgDeepmdCompute(m, n, x, t, box, &e, f, v, ea));
    fp = fopen(argv[4], "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", argv[4]);
    fprintf(fp, "%.17g\n", e);
    for (int q = 0; q < 9; q++) fprintf(fp, "%.17g%c", v[q], q == 8 ? '\n' : ' ');
    for (PetscInt i = 0; i < n; i++) {
      fprintf(fp, "%.17g %.17g %.17g %.17g", f[3 * i], f[3 * i + 1], f[3 * i + 2], ea[i]);
      for (int q = 0; open && q < 9; q++) fprintf(fp, " %.17g", av[9 * i + q]);
      fprintf(fp, "\n");
    }
    fclose(fp);
    PetscCall(PetscFree(av));
    PetscCall(PetscFree4(t, x, f, ea));
    PetscCall(SgDeepmdDestroy(&m));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown command %s", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
