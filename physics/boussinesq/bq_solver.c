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
  PetscOptionsHeadEnd();
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Split [0, N) in nearly equal contiguous blocks; block r is [off[r], off[r] + cnt[r]) */
static void Split(PetscInt N, PetscMPIInt size, PetscInt cnt[], PetscInt off[])
{
  for (PetscMPIInt r = 0, o = 0; r < size; r++) {
    cnt[r] = N / size + (r < N % size);
    off[r] = o;
    o += cnt[r];
  }
}

static PetscErrorCode InitialState(Bq *bq)
{
  const PetscInt n = bq->n, mx = bq->mx;
  double        *row = bq->rbuf;

  PetscFunctionBegin;
  /* the noise is drawn on the padded grid from (seed, point): the same field on any rank count */
  for (PetscInt j = 0; j < n; j++) {
    const PetscReal zz = bq->z[j], env = 4 * zz * (bq->Lz - zz) / (bq->Lz * bq->Lz);
    for (PetscInt i = 0; i < mx; i++) row[i] = bq->noise * env * (2 * SgRandomUniform((uint64_t)bq->seed, 16, (uint64_t)(j * mx + i)) - 1);
    fftw_execute_dft_r2c(bq->r2c_pad, row, bq->cbuf);
    for (PetscInt m = 0; m < bq->nk; m++) {
      bq->b[2 * m * n + j]       = creal(bq->cbuf[m]) / mx;
      bq->b[(2 * m + 1) * n + j] = m ? cimag(bq->cbuf[m]) / mx : 0;
    }
    if (bq->conductive) bq->b[j] += 0.5 - zz / bq->Lz;
    else if (j == 0 || j == n - 1) bq->b[j] = j ? -0.5 : 0.5;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BqSetUp(SgSolver s)
{
  Bq      *bq = (Bq *)s->data;
  PetscInt *cnt, *off, own;

  PetscFunctionBegin;
  bq->comm  = PetscObjectComm((PetscObject)s);
  PetscCallMPI(MPI_Comm_size(bq->comm, &bq->size));
  PetscCallMPI(MPI_Comm_rank(bq->comm, &bq->rank));
  bq->nu    = 1 / PetscSqrtReal(bq->Ra / bq->Pr);
  bq->kappa = 1 / PetscSqrtReal(bq->Ra * bq->Pr);
  bq->n     = bq->nz;
  bq->nk    = bq->nx / 2;
  bq->mx    = 3 * bq->nx / 2;
  bq->ncol  = 2 * bq->nk;
  PetscCall(SgBqTableauGet(bq->scheme, &bq->tab));
  PetscCall(SgBqChebSetUp(bq));
  PetscCall(PetscMalloc2(bq->size, &cnt, bq->size, &off));
  PetscCall(PetscMalloc4(bq->size, &bq->rcount, bq->size, &bq->rdispl, bq->size, &bq->mcount, bq->size, &bq->mdispl));
  Split(bq->n, bq->size, cnt, off);
  for (PetscMPIInt r = 0; r < bq->size; r++) {
    bq->rcount[r] = (PetscMPIInt)cnt[r];
    bq->rdispl[r] = (PetscMPIInt)off[r];
  }
  bq->j0 = off[bq->rank];
  bq->j1 = off[bq->rank] + cnt[bq->rank];
  Split(bq->nk, bq->size, cnt, off);
  for (PetscMPIInt r = 0; r < bq->size; r++) {
    PetscCall(PetscMPIIntCast(2 * cnt[r] * bq->n, &bq->mcount[r]));
    PetscCall(PetscMPIIntCast(2 * off[r] * bq->n, &bq->mdispl[r]));
  }
  bq->m0 = off[bq->rank];
  bq->m1 = off[bq->rank] + cnt[bq->rank];
  PetscCall(PetscFree2(cnt, off));
  own = PetscMax(1, bq->m1 - bq->m0);
  PetscCall(PetscMalloc6(own * bq->n * bq->n, &bq->Lb, own * bq->n * bq->n, &bq->Lp, bq->n * bq->n, &bq->Lu, own * bq->n, &bq->pb, own * bq->n, &bq->pp, bq->n, &bq->pu));
  {
    const PetscInt sz = bq->n * bq->ncol;
    PetscCall(PetscCalloc3(sz, &bq->psi, sz, &bq->b, bq->n, &bq->u0));
    for (PetscInt i = 0; i <= bq->tab.stages; i++) PetscCall(PetscCalloc6(sz, &bq->Fp[i], sz, &bq->Fb[i], bq->n, &bq->Fu[i], sz, &bq->LXp[i], sz, &bq->LXb[i], bq->n, &bq->LXu[i]));
    PetscCall(PetscCalloc3(sz, &bq->MXp, sz, &bq->MXb, bq->n, &bq->MXu));
    for (PetscInt i = 0; i < 10; i++) PetscCall(PetscCalloc1(PetscMax(bq->n, bq->out_nz) * bq->ncol, &bq->work[i])); /* [9] holds the output-grid interpolant */
    PetscCall(PetscCalloc1(bq->n * 3 * bq->ncol, &bq->rows));
  }
  bq->cbuf = fftw_alloc_complex(bq->mx / 2 + 1);
  bq->rbuf = fftw_alloc_real(5 * bq->mx);
  PetscCheck(bq->cbuf && bq->rbuf, PETSC_COMM_SELF, PETSC_ERR_MEM, "boussinesq: cannot allocate FFTW buffers");
  /* FFTW_ESTIMATE: the plan (hence the round-off) is the same in every run, for bit-identical restarts */
  bq->c2r_pad = fftw_plan_dft_c2r_1d((int)bq->mx, bq->cbuf, bq->rbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  bq->r2c_pad = fftw_plan_dft_r2c_1d((int)bq->mx, bq->rbuf, bq->cbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  bq->c2r_out = fftw_plan_dft_c2r_1d((int)bq->nx, bq->cbuf, bq->rbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  PetscCheck(bq->c2r_pad && bq->r2c_pad && bq->c2r_out, PETSC_COMM_SELF, PETSC_ERR_LIB, "boussinesq: FFTW could not plan transforms of %" PetscInt_FMT " and %" PetscInt_FMT " points", bq->mx, bq->nx);
  PetscCall(InitialState(bq));
  PetscCall(PetscLogEventRegister("BqTransform", SG_SOLVER_CLASSID, &bq->ev_fft));
  PetscCall(PetscLogEventRegister("BqDz", SG_SOLVER_CLASSID, &bq->ev_dz));
  PetscCall(PetscLogEventRegister("BqGather", SG_SOLVER_CLASSID, &bq->ev_gather));
  PetscCall(PetscLogEventRegister("BqSolve", SG_SOLVER_CLASSID, &bq->ev_solve));
  PetscCall(PetscLogEventRegister("BqFactor", SG_SOLVER_CLASSID, &bq->ev_factor));
  PetscCall(PetscLogEventRegister("BqLinear", SG_SOLVER_CLASSID, &bq->ev_lin));

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
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step size: cfl over the fastest explicit rate, advection or buoyancy. The buoyancy rate is N in
   the inviscid limit and N^2 / (nu q^2) once viscosity damps the gravity waves (Stokes balance;
   q^2 = (2 pi/Lx)^2 + (pi/Lz)^2 the smallest wavenumber of a mode), whichever is smaller: at large
   Pr the second bound is the one that keeps the explicit buoyancy coupling stable.
   Hysteresis: dt is kept until the limit falls below it or exceeds it by (1 + threshold)^2, since
   each change costs a refactorisation of every mode's operators. */
static PetscErrorCode BqTimeStep(SgSolver s, PetscReal t, PetscReal *dt)
{
  Bq       *bq = (Bq *)s->data;
  PetscReal adv, N2, rb, q2 = PetscSqr(2 * PETSC_PI / bq->Lx) + PetscSqr(PETSC_PI / bq->Lz), lim = PETSC_MAX_REAL, target;

  PetscFunctionBegin;
  PetscCall(SgBqMaxRates(bq, &adv, &N2));
  rb = PetscMin(PetscSqrtReal(N2), N2 / (bq->nu * q2));
  if (adv > 0) lim = PetscMin(lim, bq->cfl / adv);
  if (rb > 0) lim = PetscMin(lim, bq->cfl / rb);
  /* a new step is lim / (1 + threshold) (or max_dt): it then stays valid while the limit drifts
     within [dt, dt (1 + threshold)^2], so small fluctuations do not refactor every step */
  target = PetscMin(bq->max_dt, lim / (1 + bq->dt_threshold));
  if (bq->dt_held == 0 || bq->dt_held > lim || target > bq->dt_held * (1 + bq->dt_threshold)) bq->dt_held = target;
  *dt = bq->dt_held;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One IMEX step (bq.h: the tableau's form). The state is replicated: each stage computes F on the
   own z rows (gathered), solves the own modes, and gathers the new state's modes. */
static PetscErrorCode BqStep(SgSolver s, PetscReal t, PetscReal dt)
{
  Bq             *bq = (Bq *)s->data;
  const BqTableau *T = &bq->tab;
  const PetscInt  n = bq->n, c0 = 2 * bq->m0 * n, c1 = 2 * bq->m1 * n;

  PetscFunctionBegin;
  if (dt != bq->dt_fact) {
    PetscCall(PetscLogEventBegin(bq->ev_factor, 0, 0, 0, 0));
    PetscCall(SgBqFactor(bq, dt * T->H[1][1]));
    PetscCall(PetscLogEventEnd(bq->ev_factor, 0, 0, 0, 0));
    bq->dt_fact = dt;
    bq->nfactor++;
  }
  PetscCall(PetscLogEventBegin(bq->ev_lin, 0, 0, 0, 0));
  PetscCall(SgBqApplyML(bq, bq->psi, bq->b, bq->u0, bq->MXp, bq->MXb, bq->MXu, bq->LXp[0], bq->LXb[0], bq->LXu[0]));
  PetscCall(PetscLogEventEnd(bq->ev_lin, 0, 0, 0, 0));
  PetscCall(SgBqNonlinear(bq, bq->psi, bq->b, bq->u0, bq->Fp[0], bq->Fb[0], bq->Fu[0]));
  for (PetscInt i = 1; i <= T->stages; i++) {
    PetscCall(PetscLogEventBegin(bq->ev_solve, 0, 0, 0, 0));
    for (PetscInt q = c0; q < c1; q++) {
      PetscReal sp = bq->MXp[q], sb = bq->MXb[q];
      for (PetscInt j = 0; j < i; j++) {
        sp += dt * (T->A[i][j] * bq->Fp[j][q] - T->H[i][j] * bq->LXp[j][q]);
        sb += dt * (T->A[i][j] * bq->Fb[j][q] - T->H[i][j] * bq->LXb[j][q]);
      }
      bq->psi[q] = sp;
      bq->b[q]   = sb;
    }
    if (bq->m0 == 0)
      for (PetscInt q = 0; q < n; q++) {
        PetscReal su = bq->MXu[q];
        for (PetscInt j = 0; j < i; j++) su += dt * (T->A[i][j] * bq->Fu[j][q] - T->H[i][j] * bq->LXu[j][q]);
        bq->u0[q] = su;
      }
    PetscCall(SgBqSolve(bq, bq->psi, bq->b, bq->u0));
    PetscCall(PetscLogEventEnd(bq->ev_solve, 0, 0, 0, 0));
    PetscCall(SgBqGatherModes(bq, bq->psi));
    PetscCall(SgBqGatherModes(bq, bq->b));
    PetscCallMPI(MPI_Bcast(bq->u0, (PetscMPIInt)n, MPIU_REAL, 0, bq->comm));
    if (i < T->stages) {
      PetscCall(PetscLogEventBegin(bq->ev_lin, 0, 0, 0, 0));
      PetscCall(SgBqApplyML(bq, bq->psi, bq->b, bq->u0, bq->work[0], bq->work[1], bq->work[2], bq->LXp[i], bq->LXb[i], bq->LXu[i]));
      PetscCall(PetscLogEventEnd(bq->ev_lin, 0, 0, 0, 0));
      PetscCall(SgBqNonlinear(bq, bq->psi, bq->b, bq->u0, bq->Fp[i], bq->Fb[i], bq->Fu[i]));
    }
  }
  bq->nsteps++;
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
  Bq *bq = (Bq *)s->data;

  PetscFunctionBegin;
  if (bq->z) {
    PetscCall(PetscFree5(bq->z, bq->wq, bq->D, bq->D2, bq->D3));
    PetscCall(PetscFree(bq->Iout));
  }
  if (bq->rcount) PetscCall(PetscFree4(bq->rcount, bq->rdispl, bq->mcount, bq->mdispl));
  if (bq->Lb) PetscCall(PetscFree6(bq->Lb, bq->Lp, bq->Lu, bq->pb, bq->pp, bq->pu));
  if (bq->Pp) PetscCall(PetscFree2(bq->Pp, bq->ppiv));
  if (bq->psi) {
    PetscCall(PetscFree3(bq->psi, bq->b, bq->u0));
    for (PetscInt i = 0; i <= bq->tab.stages; i++) PetscCall(PetscFree6(bq->Fp[i], bq->Fb[i], bq->Fu[i], bq->LXp[i], bq->LXb[i], bq->LXu[i]));
    PetscCall(PetscFree3(bq->MXp, bq->MXb, bq->MXu));
    for (PetscInt i = 0; i < 10; i++) PetscCall(PetscFree(bq->work[i]));
    PetscCall(PetscFree(bq->rows));
  }
  if (bq->c2r_pad) fftw_destroy_plan(bq->c2r_pad);
  if (bq->r2c_pad) fftw_destroy_plan(bq->r2c_pad);
  if (bq->c2r_out) fftw_destroy_plan(bq->c2r_out);
  if (bq->cbuf) fftw_free(bq->cbuf);
  if (bq->rbuf) fftw_free(bq->rbuf);
  PetscCall(VecDestroy(&bq->vout));
  PetscCall(DMDestroy(&bq->da));
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
