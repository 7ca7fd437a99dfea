/* KIM API model driver SURGE_DP__MD: a surge Deep Potential (any file `surge model` accepts, imported
   DeePMD-kit models included) evaluated for a KIM simulator (LAMMPS `pair_style kim`, ASE, ...).

   Written from the KIM API 2 documentation (ModelDriverCreate, ModelComputeArgumentsCreate,
   ModelCompute, the "contributing"/padding particle convention). The parameterized model (one per
   model file, e.g. SURGE_DP_water) embeds the surge .h5 as its only parameter file; this driver loads
   it with SgDeepmdLoad and evaluates through SgDeepmdComputeNeighbors, the evaluator of surge's own MD
   provider (owned + ghost atoms) given the simulator's neighbour list.

   Neighbours: the model runs on the simulator's neighbour list (KIM_ModelComputeArguments_
   GetNeighborList), one full list (every neighbour of a particle, not half: the descriptor of a centre
   needs all of its own) with cutoff = influence distance = rcut. A simulator's list may hold more
   (LAMMPS adds its skin): those beyond rcut are passed over, and the neighbours within rcut are sorted
   per type by distance (se_e2_a sections), as surge's own cell-list search does, so the results are
   those of surge's evaluator bit for bit when the list is complete. Only contributing particles are
   centres (their energies are the model's energy), so the driver asks for their lists only and
   declares modelWillNotRequestNeighborsOfNoncontributingParticles = 1: LAMMPS then builds no lists
   for its ghost (padding) atoms, which is cheaper, and padding particles enter as neighbours only.
   The list is copied once per call into surge's numbering (contributing particles first).

   Energy of contributing particles only; forces on all particles (padding forces go back to their
   owners through the simulator's reverse communication: Newton's third law across sub-domains, no
   periodic images inside the model). Virial convention: -sum_ij r_ij (x) dE/dr_ij, KIM's (and LAMMPS'),
   Voigt order xx yy zz yz xz xy; per-particle virials (partialParticleVirial) are DeePMD-kit's atomic
   virials in the same order. Units: Angstrom and eV (those of the model's training data, metal). */
#include <string.h>
#include <petscsys.h>
#include "KIM_ModelDriverHeaders.h"
#include "sgdeepmd.h"

#define LOG_ERROR(obj, kind, msg) KIM_##kind##_LogEntry(obj, KIM_LOG_VERBOSITY_error, msg, __LINE__, __FILE__)

typedef struct {
  SgDeepmd   model;
  double     rcut;             /* influence distance and neighbour-list cutoff */
  int        will_not_request; /* no neighbours of padding particles are needed */
  PetscInt   cap;              /* capacity of the work arrays below (particles) */
  PetscInt  *order;            /* contributing particles first, then padding */
  PetscInt  *inv;              /* inverse of order: the simulator's particle -> surge's */
  PetscInt  *nboff, *nbr;      /* the simulator's neighbour lists of the contributing particles, CSR, surge's numbering */
  PetscInt   nbcap;            /* capacity of nbr */
  PetscInt  *type;
  PetscReal *x, *f, *eatom, *avir; /* avir: DeePMD-kit's atomic virials [cap][9], when the simulator asks */
} SurgeKIM;

/* PETSc is needed by surge's library (PetscMalloc, error handling). Inside an MPI simulator each
   process evaluates its own particles: PETSc is started on MPI_COMM_SELF so that creating the model is
   not a collective call, and its signal handler is removed so the simulator's crash handling stays its own. */
static int StartPetsc(void)
{
  PetscBool petsc_up;
  int       mpi_up;

  if (PetscInitialized(&petsc_up)) return 1;
  if (petsc_up) return 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up) PETSC_COMM_WORLD = MPI_COMM_SELF;
  if (PetscInitializeNoArguments()) return 1;
  if (PetscPopSignalHandler()) return 1;
  return 0;
}

static int Ensure(SurgeKIM *s, PetscInt n)
{
  if (n <= s->cap) return 0;
  PetscFree6(s->order, s->type, s->x, s->f, s->eatom, s->avir);
  PetscFree2(s->inv, s->nboff);
  s->cap = n + n / 4 + 16;
  if (PetscMalloc6(s->cap, &s->order, s->cap, &s->type, 3 * s->cap, &s->x, 3 * s->cap, &s->f, s->cap, &s->eatom, 9 * s->cap, &s->avir)) return 1;
  if (PetscMalloc2(s->cap, &s->inv, s->cap + 1, &s->nboff)) return 1;
  return 0;
}

/* The simulator's neighbour lists of the nc contributing particles, renumbered (s->inv) into CSR */
static int GatherNeighbors(KIM_ModelCompute const *const mc, KIM_ModelComputeArguments const *const ma, SurgeKIM *s, PetscInt nc, PetscInt n)
{
  PetscInt m = 0;

  s->nboff[0] = 0;
  for (PetscInt k = 0; k < nc; k++) {
    int        num;
    const int *list;
    if (KIM_ModelComputeArguments_GetNeighborList(ma, 0, (int)s->order[k], &num, &list)) {
      LOG_ERROR(mc, ModelCompute, "surge: error: the simulator did not give the neighbour list of a contributing particle");
      return 1;
    }
    if (m + num > s->nbcap) {
      s->nbcap = 2 * (m + num) + 1024;
      if (PetscRealloc(sizeof(PetscInt) * s->nbcap, &s->nbr)) {
        LOG_ERROR(mc, ModelCompute, "surge: error: out of memory for the neighbour list");
        return 1;
      }
    }
    for (int q = 0; q < num; q++) {
      if (list[q] < 0 || list[q] >= n) {
        LOG_ERROR(mc, ModelCompute, "surge: error: the simulator's neighbour list names a particle that does not exist");
        return 1;
      }
      s->nbr[m++] = s->inv[list[q]];
    }
    s->nboff[k + 1] = m;
  }
  return 0;
}

static int Compute(KIM_ModelCompute const *const mc, KIM_ModelComputeArguments const *const ma)
{
  SurgeKIM *s;
  int      *n_ptr, *species, *contributing;
  double   *coords, *energy = NULL, *forces = NULL, *particle_energy = NULL, *virial = NULL, *particle_virial = NULL;
  PetscInt  n, nc = 0, k;
  PetscReal e, v[9];

  KIM_ModelCompute_GetModelBufferPointer(mc, (void **)&s);
  if (KIM_ModelComputeArguments_GetArgumentPointerInteger(ma, KIM_COMPUTE_ARGUMENT_NAME_numberOfParticles, &n_ptr) ||
      KIM_ModelComputeArguments_GetArgumentPointerInteger(ma, KIM_COMPUTE_ARGUMENT_NAME_particleSpeciesCodes, &species) ||
      KIM_ModelComputeArguments_GetArgumentPointerInteger(ma, KIM_COMPUTE_ARGUMENT_NAME_particleContributing, &contributing) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_coordinates, &coords) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_partialEnergy, &energy) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_partialForces, &forces) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_partialParticleEnergy, &particle_energy) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_partialVirial, &virial) ||
      KIM_ModelComputeArguments_GetArgumentPointerDouble(ma, KIM_COMPUTE_ARGUMENT_NAME_partialParticleVirial, &particle_virial)) {
    LOG_ERROR(mc, ModelCompute, "surge: error: cannot get the compute arguments");
    return 1;
  }
  n = *n_ptr;
  if (Ensure(s, n)) {
    LOG_ERROR(mc, ModelCompute, "surge: error: out of memory for the work arrays");
    return 1;
  }
  /* surge's evaluator takes the centres first: contributing particles, then the padding ones */
  for (PetscInt i = 0; i < n; i++)
    if (contributing[i]) s->order[nc++] = i;
  k = nc;
  for (PetscInt i = 0; i < n; i++)
    if (!contributing[i]) s->order[k++] = i;
  for (k = 0; k < n; k++) {
    PetscInt i = s->order[k];
    s->inv[i]  = k;
    s->type[k] = species[i];
    for (int a = 0; a < 3; a++) s->x[3 * k + a] = coords[3 * i + a];
  }
  if (GatherNeighbors(mc, ma, s, nc, n)) return 1;
  if (SgDeepmdComputeNeighbors(s->model, nc, n, s->x, s->type, s->nboff, s->nbr, &e, s->f, v, s->eatom, particle_virial ? s->avir : NULL)) {
    LOG_ERROR(mc, ModelCompute, "surge: error: the Deep Potential evaluation failed (message above)");
    return 1;
  }
  if (energy) *energy = e;
  if (forces)
    for (k = 0; k < n; k++)
      for (int a = 0; a < 3; a++) forces[3 * s->order[k] + a] = s->f[3 * k + a];
  if (particle_energy)
    for (k = 0; k < n; k++) particle_energy[s->order[k]] = k < nc ? s->eatom[k] : 0.0;
  /* per-particle virial (LAMMPS: compute stress/atom): DeePMD-kit's atomic virial, atom j gets
     -sum_i r_ij (x) dE/dr_ij over the centres i that have it as a neighbour, padding particles included
     (the simulator folds theirs onto the owners); they sum to the virial below. Voigt order, symmetrised. */
  if (particle_virial)
    for (k = 0; k < n; k++) {
      const PetscReal *a = s->avir + 9 * k;
      double          *p = particle_virial + 6 * s->order[k];
      p[0]               = a[0];
      p[1]               = a[4];
      p[2]               = a[8];
      p[3]               = 0.5 * (a[5] + a[7]);
      p[4]               = 0.5 * (a[2] + a[6]);
      p[5]               = 0.5 * (a[1] + a[3]);
    }
  if (virial) {
    virial[0] = v[0];
    virial[1] = v[4];
    virial[2] = v[8];
    virial[3] = 0.5 * (v[5] + v[7]);
    virial[4] = 0.5 * (v[2] + v[6]);
    virial[5] = 0.5 * (v[1] + v[3]);
  }
  return 0;
}

static int ComputeArgumentsCreate(KIM_ModelCompute const *const mc, KIM_ModelComputeArgumentsCreate *const mac)
{
  const KIM_ComputeArgumentName optional[] = {KIM_COMPUTE_ARGUMENT_NAME_partialEnergy, KIM_COMPUTE_ARGUMENT_NAME_partialForces, KIM_COMPUTE_ARGUMENT_NAME_partialParticleEnergy, KIM_COMPUTE_ARGUMENT_NAME_partialVirial, KIM_COMPUTE_ARGUMENT_NAME_partialParticleVirial};

  for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
    if (KIM_ModelComputeArgumentsCreate_SetArgumentSupportStatus(mac, optional[i], KIM_SUPPORT_STATUS_optional)) {
      LOG_ERROR(mc, ModelCompute, "surge: error: cannot declare the supported compute arguments");
      return 1;
    }
  return 0;
}

static int ComputeArgumentsDestroy(KIM_ModelCompute const *const mc, KIM_ModelComputeArgumentsDestroy *const mad)
{
  (void)mc;
  (void)mad;
  return 0;
}

static int Destroy(KIM_ModelDestroy *const md)
{
  SurgeKIM *s;

  KIM_ModelDestroy_GetModelBufferPointer(md, (void **)&s);
  if (!s) return 0;
  SgDeepmdDestroy(&s->model);
  PetscFree6(s->order, s->type, s->x, s->f, s->eatom, s->avir);
  PetscFree2(s->inv, s->nboff);
  PetscFree(s->nbr);
  PetscFree(s);
  return 0;
}

/* KIM_ModelDriverCreateFunction, the driver's entry point (named in the driver's schema) */
int SurgeDP_DriverCreate(KIM_ModelDriverCreate *const mdc, KIM_LengthUnit const lu, KIM_EnergyUnit const eu, KIM_ChargeUnit const cu, KIM_TemperatureUnit const tu, KIM_TimeUnit const su)
{
  SurgeKIM   *s;
  int         nfiles;
  const char *dir, *base;
  char        path[PETSC_MAX_PATH_LEN];
  PetscReal   rcut;
  PetscInt    ntypes;

  (void)lu; /* the model works in its own units (Angstrom, eV); the simulator converts or refuses */
  (void)eu;
  (void)cu;
  (void)tu;
  (void)su;
  if (StartPetsc()) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: PETSc could not be initialised");
    return 1;
  }
  KIM_ModelDriverCreate_GetNumberOfParameterFiles(mdc, &nfiles);
  if (nfiles != 1) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: a SURGE_DP__MD model needs exactly one parameter file (a surge Deep Potential .h5)");
    return 1;
  }
  KIM_ModelDriverCreate_GetParameterFileDirectoryName(mdc, &dir);
  if (KIM_ModelDriverCreate_GetParameterFileBasename(mdc, 0, &base)) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: cannot get the parameter file's name");
    return 1;
  }
  snprintf(path, sizeof(path), "%s/%s", dir, base);
  if (PetscCalloc1(1, &s)) return 1;
  if (SgDeepmdLoad(path, &s->model) || SgDeepmdGetInfo(s->model, &rcut, &ntypes, NULL, NULL)) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: the parameter file is not a surge Deep Potential model (message above)");
    PetscFree(s);
    return 1;
  }
  s->rcut             = rcut;
  s->will_not_request = 1;
  for (PetscInt t = 0; t < ntypes; t++) {
    const char     *name;
    KIM_SpeciesName sp;
    SgDeepmdGetTypeName(s->model, t, &name);
    sp = KIM_SpeciesName_FromString(name);
    if (KIM_SpeciesName_Known(sp) == 0 || KIM_ModelDriverCreate_SetSpeciesCode(mdc, sp, (int)t)) {
      LOG_ERROR(mdc, ModelDriverCreate, "surge: error: a type name of the model's type_map is not a KIM species (chemical symbol)");
      SgDeepmdDestroy(&s->model);
      PetscFree(s);
      return 1;
    }
  }
  if (KIM_ModelDriverCreate_SetUnits(mdc, KIM_LENGTH_UNIT_A, KIM_ENERGY_UNIT_eV, KIM_CHARGE_UNIT_unused, KIM_TEMPERATURE_UNIT_unused, KIM_TIME_UNIT_unused) ||
      KIM_ModelDriverCreate_SetModelNumbering(mdc, KIM_NUMBERING_zeroBased)) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: cannot set the model's units or numbering");
    return 1;
  }
  KIM_ModelDriverCreate_SetInfluenceDistancePointer(mdc, &s->rcut);
  KIM_ModelDriverCreate_SetNeighborListPointers(mdc, 1, &s->rcut, &s->will_not_request);
  if (KIM_ModelDriverCreate_SetRoutinePointer(mdc, KIM_MODEL_ROUTINE_NAME_ComputeArgumentsCreate, KIM_LANGUAGE_NAME_c, 1, (KIM_Function *)ComputeArgumentsCreate) ||
      KIM_ModelDriverCreate_SetRoutinePointer(mdc, KIM_MODEL_ROUTINE_NAME_Compute, KIM_LANGUAGE_NAME_c, 1, (KIM_Function *)Compute) ||
      KIM_ModelDriverCreate_SetRoutinePointer(mdc, KIM_MODEL_ROUTINE_NAME_ComputeArgumentsDestroy, KIM_LANGUAGE_NAME_c, 1, (KIM_Function *)ComputeArgumentsDestroy) ||
      KIM_ModelDriverCreate_SetRoutinePointer(mdc, KIM_MODEL_ROUTINE_NAME_Destroy, KIM_LANGUAGE_NAME_c, 1, (KIM_Function *)Destroy)) {
    LOG_ERROR(mdc, ModelDriverCreate, "surge: error: cannot register the model's routines");
    return 1;
  }
  KIM_ModelDriverCreate_SetModelBufferPointer(mdc, s);
  return 0;
}
