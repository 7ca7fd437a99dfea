/* boussinesq: 2-D Rayleigh-Benard convection, Boussinesq equations in free-fall units.

     du/dt + u.grad u = -grad p + b z^ + nu lap u,   div u = 0,   db/dt + u.grad b = kappa lap b,
     nu = (Ra/Pr)^-1/2, kappa = (Ra Pr)^-1/2, on [0, Lx) x [0, Lz], periodic in x,
     b = +1/2 at z = 0 and -1/2 at z = Lz, walls no-slip (u = w = 0) or free-slip (du/dz = w = 0).
   Length unit: the depth for Lz = 1 (the deck's lengths are in that unit); velocity: the free-fall
   velocity sqrt(g alpha dT H); time: H / that velocity; buoyancy: g alpha dT. These are the units
   of MeshfreeFlowNet's data (Jiang et al., SC20) and of Dedalus' Rayleigh-Benard example.

   Discretisation (bq.h): streamfunction psi for m >= 1 and the mean flow u0, so div u = 0 holds
   identically (the only residue is the round-off of evaluating it); Fourier in x with 3/2
   dealiasing, Chebyshev-Gauss-Lobatto collocation in z with boundary rows; IMEX RK222 / RK443
   (diffusion implicit, advection and buoyancy explicit), one LU per mode and per time step size;
   CFL-adaptive dt with a hysteresis so that the LU factors are rebuilt only when dt changes. */
#include "bq.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"

static const char *const Walls[] = {"noslip", "freeslip"};

static PetscErrorCode BqSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Bq      *bq = (Bq *)s->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);
  PetscInt nxz[2] = {bq->nx, bq->nz}, n2 = 2;
  PetscReal len[2] = {bq->Lx, bq->Lz};
  PetscInt  nl = 2;
  PetscBool set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "boussinesq: 2-D Rayleigh-Benard convection (free-fall units)");
  PetscCall(SgOptionsReal("-rayleigh", "Rayleigh number Ra = g alpha dT H^3 / (nu kappa)", "", bq->Ra, &bq->Ra, NULL, PETSC_SMALL, 1e15));
  PetscCall(SgOptionsReal("-prandtl", "Prandtl number Pr = nu / kappa", "", bq->Pr, &bq->Pr, NULL, 1e-6, 1e6));
  PetscCall(SgOptionsIntArray("-cells", "Grid [nx, nz]: nx Fourier points in x (even; nx/2 modes kept, products on 3nx/2), nz Chebyshev-Gauss-Lobatto points in z", nxz, &n2, &set, 4, 1 << 16));
  PetscCheck(!set || n2 == 2, comm, PETSC_ERR_USER_INPUT, "-boussinesq_cells needs two entries [nx, nz], got %" PetscInt_FMT, n2);
  PetscCall(SgOptionsRealArray("-length", "Domain [Lx, Lz]", "free-fall length units (the depth when Lz = 1)", len, &nl, &set, PETSC_SMALL, 1e6));
  PetscCheck(!set || nl == 2, comm, PETSC_ERR_USER_INPUT, "-boussinesq_length needs two entries [Lx, Lz], got %" PetscInt_FMT, nl);
  PetscCall(SgOptionsEList("-walls", "Velocity boundary condition at z = 0 and z = Lz", Walls, 2, Walls[bq->walls], &bq->walls, NULL));
  PetscCall(SgOptionsEList("-scheme", "IMEX Runge-Kutta scheme (Ascher, Ruuth & Spiteri 1997)", SgBqSchemes, 2, SgBqSchemes[bq->scheme], &bq->scheme, NULL));
  PetscCall(SgOptionsReal("-cfl", "CFL number: dt = cfl / max(|u|/dx + |w|/dz, buoyancy rate min(N, N^2/(nu q^2)))", "", bq->cfl, &bq->cfl, NULL, PETSC_SMALL, 10));
  PetscCall(SgOptionsReal("-max_dt", "Largest time step (the buoyancy and advection terms are explicit)", "free-fall times", bq->max_dt, &bq->max_dt, NULL, PETSC_SMALL, 1e3));
  PetscCall(SgOptionsReal("-dt_threshold", "Step hysteresis: a new dt is the limit / (1 + threshold), kept until the limit leaves [dt, dt (1 + threshold)^2] (each change refactors the z-operators)", "", bq->dt_threshold, &bq->dt_threshold, NULL, 0, 10));
  PetscCall(SgOptionsReal("-noise", "Amplitude of the seeded noise on b (uniform in [-1,1] times 4 z (Lz - z) / Lz^2, zero at the walls)", "buoyancy units", bq->noise, &bq->noise, NULL, 0, 1));
  PetscCall(SgOptionsInt("-seed", "Seed of the initial noise (ensembles vary it)", bq->seed, &bq->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsBool("-conductive", "Start from the conductive profile b = 1/2 - z/Lz (else b = 0 inside, +-1/2 at the walls)", bq->conductive, &bq->conductive, NULL));
  PetscCall(SgOptionsInt("-output_nz", "Uniform cell-centred z points of the written fields (0: nz); Chebyshev values are interpolated to them", bq->out_nz, &bq->out_nz, NULL, 0, 1 << 16));
  /* the grid first: the slots' options are checked against it (superres factors divide by out_nz) */
  bq->nx = nxz[0];
  bq->nz = nxz[1];
  bq->Lx = len[0];
  bq->Lz = len[1];
  PetscCheck(bq->nx % 2 == 0, comm, PETSC_ERR_USER_INPUT, "-boussinesq_cells: nx = %" PetscInt_FMT " must be even (nx/2 Fourier modes are kept); use %" PetscInt_FMT, bq->nx, bq->nx + 1);
  PetscCheck(bq->nz >= 6, comm, PETSC_ERR_USER_INPUT, "-boussinesq_cells: nz = %" PetscInt_FMT " is too small: the fourth-order streamfunction equation needs at least 6 Chebyshev points", bq->nz);
  {
    /* two dense n x n LU factors per x-mode, spread over the ranks */
    PetscMPIInt size;
    PetscReal   gb;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    gb = 2.0 * 8.0 * bq->nz * (PetscReal)bq->nz * PetscCeilReal(0.5 * bq->nx / size) / 1e9;
    PetscCheck(gb <= 16, comm, PETSC_ERR_USER_INPUT, "-boussinesq_cells %" PetscInt_FMT ",%" PetscInt_FMT ": the dense per-mode z-operators need %.1f GB per rank (over 16): use fewer z points or more ranks", bq->nx, bq->nz, (double)gb);
  }
  if (!bq->out_nz) bq->out_nz = bq->nz;
  PetscCall(SgBqAdvanceSetFromOptions(s, PetscOptionsObject));
  PetscCall(SgBqSuperresSetFromOptions(s, PetscOptionsObject));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqSetUp(SgSolver s)
{
  Bq *bq = (Bq *)s->data;

  PetscFunctionBegin;
  PetscCall(SgBqSetUpData(bq, PetscObjectComm((PetscObject)s)));
  PetscCall(SgBqRegisterEvents(bq));

  PetscCall(SgSolverAddDiagnostic(s, "nu_bottom", "Nusselt number at z = 0: -Lz db0/dz", &bq->d_nub));
  PetscCall(SgSolverAddDiagnostic(s, "nu_top", "Nusselt number at z = Lz: -Lz db0/dz", &bq->d_nut));
  PetscCall(SgSolverAddDiagnostic(s, "nu_volume", "Nusselt number (<w b> - kappa <db/dz>) Lz / kappa", &bq->d_nuv));
  PetscCall(SgSolverAddDiagnostic(s, "kinetic_energy", "volume mean of (u^2 + w^2)/2, free-fall velocity^2", &bq->d_ke));
  PetscCall(SgSolverAddDiagnostic(s, "eps_viscous", "nu <|grad u|^2>, free-fall units", &bq->d_epsu));
  PetscCall(SgSolverAddDiagnostic(s, "eps_thermal", "kappa <|grad b|^2>, free-fall units", &bq->d_epsb));
  PetscCall(SgSolverAddDiagnostic(s, "nu_eps_viscous", "1 + eps_viscous Lz^2 / kappa (= Nu in the time mean)", &bq->d_nueu));
  PetscCall(SgSolverAddDiagnostic(s, "nu_eps_thermal", "eps_thermal Lz^2 / kappa (= Nu in the time mean)", &bq->d_nueb));
  PetscCall(SgSolverAddDiagnostic(s, "max_div", "max over the grid of |du/dx + dw/dz|, 1/free-fall time", &bq->d_div));
  PetscCall(SgSolverAddDiagnostic(s, "b_mode1", "|b_1| at mid-depth: amplitude of the first x-mode (linear growth)", &bq->d_bmid));
  PetscCall(SgSolverSetProgressDiagnostic(s, bq->d_nuv));
  PetscCall(SgBqAdvanceSetUp(s));
  PetscCall(SgBqSuperresSetUp(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqTimeStep(SgSolver s, PetscReal t, PetscReal *dt)
{
  PetscFunctionBegin;
  if (SgBqAdvanceOn((Bq *)s->data)) *dt = SgBqAdvanceSegment((Bq *)s->data); /* one field.advance call per driver step */
  else if (SgBqSuperresOn((Bq *)s->data)) PetscCall(SgBqSuperresTimeStep((Bq *)s->data, t, dt)); /* lands on the block times */
  else PetscCall(SgBqTimeStepData((Bq *)s->data, dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqStep(SgSolver s, PetscReal t, PetscReal dt)
{
  PetscFunctionBegin;
  if (SgBqAdvanceOn((Bq *)s->data)) PetscCall(SgBqAdvanceStep(s, t, dt));
  else PetscCall(SgBqStepData((Bq *)s->data, dt));
  if (SgBqSuperresOn((Bq *)s->data)) PetscCall(SgBqSuperresAfterStep((Bq *)s->data, t + dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Checkpoint in both directions: the layout is stored or compared, the state written or read. */
static PetscErrorCode BqCheckpointIO(SgSolver s, SgCheckpoint chk)
{
  Bq              *bq = (Bq *)s->data;
  SgCheckpointMode mode;
  const PetscInt   sz = bq->n * bq->ncol;
  PetscReal        sc[2] = {bq->dt_held, (PetscReal)bq->nsteps};

  PetscFunctionBegin;
  PetscCall(SgCheckpointGetMode(chk, &mode));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_nx", bq->nx));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_nz", bq->nz));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_Lx", bq->Lx));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_Lz", bq->Lz));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_rayleigh", bq->Ra));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_prandtl", bq->Pr));
  PetscCall(SgCheckpointLayoutString(chk, "boussinesq_walls", Walls[bq->walls]));
  PetscCall(SgCheckpointLayoutString(chk, "boussinesq_scheme", SgBqSchemes[bq->scheme]));
  PetscCall(SgCheckpointReals(chk, "boussinesq_psi", sz, bq->psi));
  PetscCall(SgCheckpointReals(chk, "boussinesq_b", sz, bq->b));
  PetscCall(SgCheckpointReals(chk, "boussinesq_u0", bq->n, bq->u0));
  PetscCall(SgCheckpointReals(chk, "boussinesq_scalars", 2, sc));
  if (mode == SG_CHECKPOINT_READ) {
    bq->dt_held = sc[0];
    bq->nsteps  = (PetscInt)sc[1];
    bq->dt_fact = 0;
  }
  PetscCall(SgBqAdvanceCheckpoint(s, chk));
  PetscCall(SgBqSuperresCheckpoint(s, chk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Final diagnostics with 17 digits (restart and rank-count comparisons read them). */
static PetscErrorCode BqReport(SgSolver s, SgOutput out)
{
  Bq                *bq = (Bq *)s->data;
  PetscInt           nd;
  const char *const *names;

  PetscFunctionBegin;
  PetscCall(SgSolverGetDiagnostics(s, &nd, &names, NULL));
  nd = PetscMin(nd, 16);
  for (PetscInt i = 0; i < nd; i++) PetscCall(PetscPrintf(bq->comm, "boussinesq final: %s %.17g\n", names[i], (double)bq->last[i]));
  PetscCall(PetscPrintf(bq->comm, "boussinesq: Ra %g Pr %g, %s walls, %s, %" PetscInt_FMT " x %" PetscInt_FMT " (nx x nz), %" PetscInt_FMT " steps (%" PetscInt_FMT " factorisations in this run) on %d rank(s)\n", (double)bq->Ra, (double)bq->Pr, Walls[bq->walls], bq->tab.name, bq->nx, bq->nz, bq->nsteps, bq->nfactor, bq->size));
  PetscCall(SgOutputWriteReport(out, "final_diagnostics", "as /diagnostics, in declaration order", nd, bq->last));
  PetscCall(SgBqAdvanceReport(s, out));
  PetscCall(SgBqSuperresReport(s, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqView(SgSolver s, PetscViewer v)
{
  Bq *bq = (Bq *)s->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "boussinesq: Ra %g Pr %g nu %g kappa %g, %g x %g, %" PetscInt_FMT " x %" PetscInt_FMT ", %s walls, %s\n", (double)bq->Ra, (double)bq->Pr, (double)bq->nu, (double)bq->kappa, (double)bq->Lx, (double)bq->Lz, bq->nx, bq->nz, Walls[bq->walls], SgBqSchemes[bq->scheme]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqDestroy(SgSolver s)
{
  PetscFunctionBegin;
  PetscCall(SgBqAdvanceDestroy((Bq *)s->data));
  PetscCall(SgBqSuperresDestroy((Bq *)s->data));
  PetscCall(SgBqDestroyData((Bq *)s->data));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_Boussinesq(SgSolver s)
{
  Bq *bq;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bq));
  bq->Ra           = 1e4;
  bq->Pr           = 1;
  bq->Lx           = 4;
  bq->Lz           = 1;
  bq->nx           = 64;
  bq->nz           = 24;
  bq->walls        = BQ_NOSLIP;
  bq->scheme       = 0;
  bq->cfl          = 0.5;
  bq->max_dt       = 0.05;
  bq->dt_threshold = 0.1;
  bq->noise        = 1e-3;
  bq->seed         = 1;
  bq->conductive   = PETSC_TRUE;
  s->data          = bq;
  s->ops->setfromoptions = BqSetFromOptions;
  s->ops->setup          = BqSetUp;
  s->ops->timestep       = BqTimeStep;
  s->ops->step           = BqStep;
  s->ops->diagnose       = SgBqDiagnose;
  s->ops->writefields    = SgBqWriteFields;
  s->ops->checkpoint     = BqCheckpointIO;
  s->ops->report         = BqReport;
  s->ops->view           = BqView;
  s->ops->destroy        = BqDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
