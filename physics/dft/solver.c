/* Solver type "dft": single-point tight-binding (or CP2K-matrix) energy and forces from a deck.

   sim: {solver: dft, t_end: 1, max_steps: 1}
   dft: {element: Si, lattice: 5.43, cells: [2,2,2], displace: 0.05, seed: 1,     # diamond builder
         xyz: FILE,                                                               # or extended XYZ
         ks_csr: FILE, s_csr: FILE, block_size: 6, nelec_per_block: 8,            # or CP2K matrices
         method: submatrix, eps_filter: 1e-5, kt: 0, ...}                         # density matrix
   One step evaluates everything; diagnostics: total energy per atom, band energy, repulsion,
   chemical potential, largest force (TB) — energies in eV (CP2K matrices: their units, Hartree). */
#include "sgsolverimpl.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"
#include "sgtb.h"

typedef struct {
  char          element[8], xyz[PETSC_MAX_PATH_LEN], ks[PETSC_MAX_PATH_LEN], s[PETSC_MAX_PATH_LEN];
  PetscReal     lattice, displace, nelec_per_block;
  PetscInt      cells[3], seed, block_size;
  SgTBDMOptions o;
  SgTBModel     model;
  SgTBGeom      g;
  SgTBEnergy    E;
  PetscReal     fmax, tdm;
  PetscBool     done, csr;
  Mat           H, S; /* CP2K matrices, read at set-up (before any output exists) */
  PetscInt      d_e, d_eb, d_rep, d_mu, d_f, d_t;
} DFT;

static PetscErrorCode DFTSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  DFT      *d = (DFT *)s->data;
  PetscInt  nc = 3;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "dft: tight-binding single point");
  PetscCall(SgOptionsString("-element", "Element of the diamond lattice or of the XYZ atoms (Si, C)", d->element, d->element, sizeof d->element, NULL));
  PetscCall(SgOptionsReal("-lattice", "Cubic lattice constant of the diamond builder", "A", d->lattice, &d->lattice, NULL, 1.0, 100.0));
  PetscCall(SgOptionsIntArray("-cells", "Conventional cells of the diamond builder along x, y, z", d->cells, &nc, NULL, 1, 1000));
  PetscCall(SgOptionsReal("-displace", "Random displacement amplitude (uniform in [-a, a] per coordinate)", "A", d->displace, &d->displace, NULL, 0, 1.0));
  PetscCall(SgOptionsInt("-seed", "Seed of the displacements", d->seed, &d->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsPath("-xyz", "Extended XYZ structure (Lattice=\"ax ay az bx by bz cx cy cz\" on the comment line)", SG_PATH_IN, d->xyz, d->xyz, sizeof d->xyz, NULL));
  PetscCall(SgOptionsPath("-ks_csr", "CP2K Kohn-Sham matrix (KS_CSR_WRITE: text, full or the upper triangle, or BINARY T)", SG_PATH_IN, d->ks, d->ks, sizeof d->ks, NULL));
  PetscCall(SgOptionsPath("-s_csr", "CP2K overlap matrix (S_CSR_WRITE: text, full or the upper triangle, or BINARY T)", SG_PATH_IN, d->s, d->s, sizeof d->s, NULL));
  PetscCall(SgOptionsInt("-block_size", "CP2K matrices: functions per block (molecule), e.g. 6 for DFTB water", d->block_size, &d->block_size, NULL, 1, 64));
  PetscCall(SgOptionsReal("-nelec_per_block", "CP2K matrices: electrons per block, e.g. 8 for water", "electrons", d->nelec_per_block, &d->nelec_per_block, NULL, 0, 128));
  PetscCall(SgTBDMOptionsRead(PetscOptionsObject, &d->o));
  PetscOptionsHeadEnd();
  d->csr = d->ks[0] ? PETSC_TRUE : PETSC_FALSE;
  PetscCheck(!d->csr || d->s[0], PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "dft ks_csr is set but s_csr is not: both CP2K matrices are needed");
  PetscCheck(d->csr || !d->s[0], PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "dft s_csr is set but ks_csr is not: give both CP2K matrices, or neither for a tight-binding structure");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ReadXYZ(MPI_Comm comm, const char file[], const char element[], SgTBGeom *g)
{
  FILE *fp;
  char  line[1024], *lat;
  long  n;

  PetscFunctionBegin;
  fp = fopen(file, "r");
  PetscCheck(fp, comm, PETSC_ERR_FILE_OPEN, "dft xyz: cannot open '%s'", file);
  PetscCheck(fgets(line, sizeof line, fp) && sscanf(line, "%ld", &n) == 1 && n > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "dft xyz '%s': first line must be the atom count", file);
  PetscCheck(fgets(line, sizeof line, fp), comm, PETSC_ERR_FILE_UNEXPECTED, "dft xyz '%s': missing comment line", file);
  lat = strstr(line, "Lattice=\"");
  PetscCheck(lat, comm, PETSC_ERR_FILE_UNEXPECTED, "dft xyz '%s': the comment line needs Lattice=\"ax ay az bx by bz cx cy cz\" (periodic cell)", file);
  {
    double b[9];
    PetscCheck(sscanf(lat + 9, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8]) == 9, comm, PETSC_ERR_FILE_UNEXPECTED, "dft xyz '%s': Lattice needs 9 numbers", file);
    for (int q = 0; q < 9; q++) g->box[q] = b[q];
  }
  g->n = n;
  PetscCall(PetscMalloc1(3 * n, &g->x));
  for (long i = 0; i < n; i++) {
    char   el[16];
    double x, y, z;
    PetscCheck(fgets(line, sizeof line, fp) && sscanf(line, "%15s %lf %lf %lf", el, &x, &y, &z) == 4, comm, PETSC_ERR_FILE_UNEXPECTED, "dft xyz '%s': atom line %ld unreadable", file, i + 1);
    PetscCheck(!strcmp(el, element), comm, PETSC_ERR_USER_INPUT, "dft xyz '%s': atom %ld is '%s' but dft element is '%s' (one element per system: the TB models have no cross terms)", file, i + 1, el, element);
    g->x[3 * i] = x; g->x[3 * i + 1] = y; g->x[3 * i + 2] = z;
  }
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTSetUp(SgSolver s)
{
  DFT     *d = (DFT *)s->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  if (d->csr) {
    PetscInt N;
    PetscCall(SgTBReadCSR(comm, d->ks, -1, &d->H));
    PetscCall(MatGetSize(d->H, &N, NULL));
    PetscCall(SgTBReadCSR(comm, d->s, N, &d->S));
    PetscCheck(N % d->block_size == 0, comm, PETSC_ERR_USER_INPUT, "dft: matrix size %" PetscInt_FMT " in '%s' is not a multiple of dft block_size %" PetscInt_FMT ": wrong block_size or a truncated file", N, d->ks, d->block_size);
  } else {
    PetscCall(SgTBModelGet(comm, d->element, &d->model));
    if (d->xyz[0]) PetscCall(ReadXYZ(comm, d->xyz, d->element, &d->g));
    else {
      unsigned long long st = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)d->seed;
      PetscCall(SgTBDiamond(d->lattice, d->cells[0], d->cells[1], d->cells[2], &d->g));
      for (PetscInt k = 0; k < 3 * d->g.n; k++) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        d->g.x[k] += d->displace * 2 * (((st >> 11) * (1.0 / 9007199254740992.0)) - 0.5);
      }
    }
  }
  PetscCall(SgSolverAddDiagnostic(s, d->csr ? "energy_per_block" : "energy_per_atom", d->csr ? "Hartree/block" : "eV/atom", &d->d_e));
  PetscCall(SgSolverAddDiagnostic(s, "band_energy", d->csr ? "Hartree" : "eV", &d->d_eb));
  PetscCall(SgSolverAddDiagnostic(s, "repulsive_energy", "eV", &d->d_rep));
  PetscCall(SgSolverAddDiagnostic(s, "mu", d->csr ? "Hartree" : "eV", &d->d_mu));
  PetscCall(SgSolverAddDiagnostic(s, "max_force", "eV/A", &d->d_f));
  PetscCall(SgSolverAddDiagnostic(s, "density_matrix_time", "s", &d->d_t));
  PetscCall(SgSolverSetProgressDiagnostic(s, d->d_e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTTimeStep(SgSolver s, PetscReal t, PetscReal *dt)
{
  PetscFunctionBegin;
  *dt = PETSC_MAX_REAL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTStep(SgSolver s, PetscReal t, PetscReal dt)
{
  DFT     *d = (DFT *)s->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  if (d->done) PetscFunctionReturn(PETSC_SUCCESS); /* single point: later steps change nothing */
  if (d->csr) {
    Mat         H, S;
    SgTBBlocks  b;
    SgTBDensity dm;
    PetscInt    N;
    H = d->H;
    S = d->S;
    PetscCall(MatGetSize(H, &N, NULL));
    b.nblk = N / d->block_size;
    PetscCall(PetscMalloc1(b.nblk + 1, &b.off));
    for (PetscInt k = 0; k <= b.nblk; k++) b.off[k] = k * d->block_size;
    if (d->o.nelec <= 0) d->o.nelec = d->nelec_per_block * b.nblk;
    d->o.nelec_tol *= b.nblk;
    PetscCall(SgTBNonOrthogonalEnergy(H, S, &b, &d->o, &d->E.eband, &dm));
    d->E.etot = d->E.eband; d->E.mu = dm.mu; d->tdm = dm.t_total;
    d->g.n = b.nblk;
    PetscCall(SgTBDensityDestroy(&dm));
    PetscCall(PetscFree(b.off));
    PetscCall(MatDestroy(&d->H)); PetscCall(MatDestroy(&d->S));
  } else {
    PetscReal  *f, W[9], t0 = MPI_Wtime();
    PetscCall(PetscMalloc1(3 * d->g.n, &f));
    PetscCall(SgTBCompute(comm, &d->model, &d->g, &d->o, &d->E, f, W, NULL));
    d->tdm = MPI_Wtime() - t0;
    d->fmax = 0;
    for (PetscInt i = 0; i < d->g.n; i++) d->fmax = PetscMax(d->fmax, PetscSqrtReal(f[3 * i] * f[3 * i] + f[3 * i + 1] * f[3 * i + 1] + f[3 * i + 2] * f[3 * i + 2]));
    PetscCall(PetscFree(f));
  }
  d->done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTDiagnose(SgSolver s, PetscReal t, PetscReal v[])
{
  DFT *d = (DFT *)s->data;

  PetscFunctionBegin;
  v[d->d_e]   = d->g.n ? d->E.etot / d->g.n : 0;
  v[d->d_eb]  = d->E.eband;
  v[d->d_rep] = d->E.erep;
  v[d->d_mu]  = d->E.mu;
  v[d->d_f]   = d->fmax;
  v[d->d_t]   = d->tdm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTReport(SgSolver s, SgOutput out)
{
  DFT      *d = (DFT *)s->data;
  PetscReal r[6] = {d->E.etot, d->E.eband, d->E.erep, d->E.entropy, d->E.mu, d->fmax};

  PetscFunctionBegin;
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s), "dft: %" PetscInt_FMT " %s, E = %.10g %s (band %.10g, repulsive %.10g, -TS %.3g), mu = %.6g %s, max |F| = %.4g eV/A, %.3f s (%s)\n", d->g.n, d->csr ? "blocks" : "atoms",
                        (double)d->E.etot, d->csr ? "Ha" : "eV", (double)d->E.eband, (double)d->E.erep, (double)d->E.entropy, (double)d->E.mu, d->csr ? "Ha" : "eV", (double)d->fmax, (double)d->tdm, d->o.method == SG_TB_DENSE ? "dense" : "submatrix"));
  if (out) PetscCall(SgOutputWriteReport(out, "dft_energy", "eV (Hartree for CP2K matrices): [total, band, repulsive, -TS, mu, max force eV/A]", 6, r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A single point's state is its result: the checkpoint stores it, tied to the input that made it. */
static PetscErrorCode DFTLayout(DFT *d, SgCheckpoint chk)
{
  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutString(chk, "dft_input", d->csr ? d->ks : (d->xyz[0] ? d->xyz : d->element)));
  PetscCall(SgCheckpointLayoutInt(chk, "dft_method", (PetscInt)d->o.method));
  PetscCall(SgCheckpointLayoutReal(chk, "dft_eps_filter", d->o.eps_filter));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Writes or restores the result, as the checkpoint was opened. */
static PetscErrorCode DFTCheckpoint(SgSolver s, SgCheckpoint chk)
{
  DFT      *d = (DFT *)s->data;
  PetscReal r[9] = {d->E.etot, d->E.eband, d->E.erep, d->E.entropy, d->E.mu, d->fmax, d->tdm, (PetscReal)d->done, (PetscReal)d->g.n};
  PetscBool reading;

  PetscFunctionBegin;
  PetscCall(DFTLayout(d, chk));
  PetscCall(SgCheckpointReals(chk, "dft_result", 9, r));
  PetscCall(SgCheckpointIsReading(chk, &reading));
  if (reading) {
    d->E.etot = r[0]; d->E.eband = r[1]; d->E.erep = r[2]; d->E.entropy = r[3]; d->E.mu = r[4]; d->fmax = r[5]; d->tdm = r[6];
    d->done = r[7] != 0 ? PETSC_TRUE : PETSC_FALSE;
    if (d->csr) d->g.n = (PetscInt)r[8];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DFTDestroy(SgSolver s)
{
  DFT *d = (DFT *)s->data;

  PetscFunctionBegin;
  if (!d->csr) PetscCall(SgTBGeomDestroy(&d->g));
  PetscCall(MatDestroy(&d->H));
  PetscCall(MatDestroy(&d->S));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_DFT(SgSolver s)
{
  DFT *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  PetscCall(PetscStrcpy(d->element, "Si"));
  d->lattice = 5.43; d->cells[0] = d->cells[1] = d->cells[2] = 2;
  d->block_size = 6; d->nelec_per_block = 8;
  PetscCall(SgTBDMOptionsDefault(&d->o));
  s->data = d;
  s->ops->setfromoptions = DFTSetFromOptions;
  s->ops->setup          = DFTSetUp;
  s->ops->timestep       = DFTTimeStep;
  s->ops->step           = DFTStep;
  s->ops->diagnose       = DFTDiagnose;
  s->ops->report         = DFTReport;
  s->ops->checkpoint     = DFTCheckpoint;
  s->ops->destroy        = DFTDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
