/* ks: the Kuramoto-Sivashinsky solver (ks.h; docs/ks.md). Nondimensional: length L, time, u.

   Initial state u0 = offset + amplitude cos(q x) (1 + sin(q x)), q = 2 pi / L (the Kassam-Trefethen
   initial condition on our domain), or with -ks_seed S > 0 offset + amplitude sum_{m=1..4} r_m
   cos(m q x + phi_m), r_m in [0, 1) and phi_m in [0, 2 pi) drawn from S (SgRandomUniform): one
   trajectory per seed, which is what `surge ensemble` varies (seed_option: ks_seed). With -ks_lyapunov a second trajectory starts at distance
   lyap_eps (RMS over the grid) and is pulled back to that distance every lyap_every steps; the sum
   of log(distance / eps) over the renormalisations after lyap_start, divided by the time they span,
   is the leading Lyapunov exponent (Benettin et al. 1980). */
#include "ks.h"


static PetscErrorCode KsSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Ks      *k    = (Ks *)s->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "ks: Kuramoto-Sivashinsky u_t + u u_x + u_xx + u_xxxx = 0, periodic (nondimensional)");
  PetscCall(SgOptionsReal("-length", "Period L of the domain (L = 22: the chaotic benchmark of Cvitanovic et al. 2010)", "nondimensional length", k->L, &k->L, NULL, PETSC_SMALL, 1e6));
  PetscCall(SgOptionsInt("-modes", "Grid points N = Fourier modes of the real transform (even; N/3 survive dealiasing)", k->N, &k->N, NULL, 8, 1 << 22));
  PetscCall(SgOptionsReal("-dt", "ETDRK4 step (the driver may take a shorter last step)", "nondimensional time", k->dt, &k->dt, NULL, 1e-8, 10));
  PetscCall(SgOptionsReal("-amplitude", "Amplitude of the initial state cos(q x)(1 + sin(q x)), q = 2 pi / L", "u units", k->amplitude, &k->amplitude, NULL, -1e3, 1e3));
  PetscCall(SgOptionsInt("-seed", "0: the Kassam-Trefethen initial state; S > 0: four random low modes drawn from S (ensembles vary it: seed_option ks_seed)", k->seed, &k->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-offset", "Constant added to the initial state: the mean of u, conserved", "u units", k->offset, &k->offset, NULL, -1e3, 1e3));
  PetscCall(SgOptionsBool("-lyapunov", "Track a perturbed trajectory and estimate the leading Lyapunov exponent", k->lyap, &k->lyap, NULL));
  PetscCall(SgOptionsReal("-lyap_eps", "RMS distance of the perturbed trajectory, restored at each renormalisation", "u units", k->eps, &k->eps, NULL, 1e-14, 1e-2));
  PetscCall(SgOptionsInt("-lyap_every", "Steps between renormalisations", k->lyap_every, &k->lyap_every, NULL, 1, 1 << 30));
  PetscCall(SgOptionsReal("-lyap_start", "Time after which growth is counted (the transient onto the attractor is skipped)", "nondimensional time", k->lyap_start, &k->lyap_start, NULL, 0, PETSC_MAX_REAL));
  PetscCall(KsAdvanceSetFromOptions(s, PetscOptionsObject)); /* after length and modes: the slot's grid needs them */
  PetscOptionsHeadEnd();
  PetscCheck(k->N % 2 == 0, comm, PETSC_ERR_USER_INPUT, "-ks_modes %" PetscInt_FMT " is odd: give an even number of grid points", k->N);
  PetscCall(SgCheckCount(comm, "-ks_modes", "grid points", (PetscReal)k->N, 24 * sizeof(PetscReal)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* RMS over the grid of the difference of two states (b may be NULL: zero), by Parseval on the half
   spectrum of the unnormalised transform */
static PetscReal Distance(const Ks *k, const KsCplx *a, const KsCplx *b)
{
  PetscReal s = 0;
  for (PetscInt m = 0; m < k->N / 2 + 1; m++) {
    const PetscReal d = cabs(a[m] - (b ? b[m] : 0));
    s += (m == 0 || 2 * m == k->N ? 1 : 2) * d * d;
  }
  return PetscSqrtReal(s) / k->N;
}

static PetscErrorCode KsSetUp(SgSolver s)
{
  Ks      *k    = (Ks *)s->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);
  PetscInt nk   = k->N / 2 + 1;

  PetscFunctionBegin;
  PetscCall(KsEtdCreate(k->N, k->L, &k->etd));
  k->v = (KsCplx *)fftw_malloc(sizeof(KsCplx) * nk);
  k->w = (KsCplx *)fftw_malloc(sizeof(KsCplx) * nk);
  k->u = (double *)fftw_malloc(sizeof(double) * k->N);
  for (PetscInt j = 0; j < k->N; j++) {
    const PetscReal x = 2 * PETSC_PI * j / k->N;
    PetscReal       f = PetscCosReal(x) * (1 + PetscSinReal(x));
    if (k->seed > 0) {
      f = 0;
      for (PetscInt m = 1; m <= 4; m++) f += SgRandomUniform((uint64_t)k->seed, (uint64_t)m, 0) * PetscCosReal(m * x + 2 * PETSC_PI * SgRandomUniform((uint64_t)k->seed, (uint64_t)m, 1));
    }
    k->etd->x[j] = k->offset + k->amplitude * f;
  }
  fftw_execute(k->etd->fwd);
  for (PetscInt m = 0; m < nk; m++) k->v[m] = k->etd->tk[m];
  /* the perturbation: modes 1 .. N/3 with fixed, irregular phases, scaled to RMS distance eps */
  for (PetscInt m = 0; m < nk; m++) k->w[m] = (m > 0 && 3 * m < k->N) ? cexp(I * 1.7 * m * m) : 0;
  {
    const PetscReal d = Distance(k, k->w, NULL);
    for (PetscInt m = 0; m < nk; m++) k->w[m] = k->v[m] + (k->eps / d) * k->w[m];
  }
  PetscCall(DMDACreate1d(comm, DM_BOUNDARY_PERIODIC, k->N, 1, 0, NULL, &k->da));
  PetscCall(DMSetUp(k->da));
  PetscCall(DMCreateGlobalVector(k->da, &k->U));
  PetscCall(SgSolverAddDiagnostic(s, "mean", "mean of u over the domain (conserved)", &k->d_mean));
  PetscCall(SgSolverAddDiagnostic(s, "energy", "integral of u^2/2 over the domain", &k->d_energy));
  PetscCall(SgSolverAddDiagnostic(s, "max_abs", "max over the grid of |u|", &k->d_max));
  if (k->lyap) PetscCall(SgSolverAddDiagnostic(s, "lyapunov", "running estimate of the leading Lyapunov exponent, 1/time (0 before lyap_start)", &k->d_lyap));
  PetscCall(SgSolverSetProgressDiagnostic(s, k->d_energy));
  PetscCall(KsAdvanceSetUp(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsTimeStep(SgSolver s, PetscReal t, PetscReal *dt)
{
  PetscFunctionBegin;
  if (KsAdvanceOn((Ks *)s->data)) *dt = KsAdvanceSegment((Ks *)s->data); /* one field.advance call per driver step */
  else *dt = ((Ks *)s->data)->dt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsStepOnce(SgSolver s, PetscReal t, PetscReal dt)
{
  Ks *k = (Ks *)s->data;

  PetscFunctionBegin;
  PetscCall(KsEtdStep(k->etd, k->v, dt));
  k->st[0] += 1;
  k->st[3] = t + dt;
  if (k->lyap) {
    PetscCall(KsEtdStep(k->etd, k->w, dt));
    if ((PetscInt)k->st[0] % k->lyap_every == 0) {
      const PetscReal d = Distance(k, k->w, k->v);
      PetscCheck(d > 0 && PetscIsNormalReal(d), PetscObjectComm((PetscObject)s), PETSC_ERR_NOT_CONVERGED, "ks: the perturbed trajectory's distance is %g at t = %g: lower -ks_lyap_every or -ks_lyap_eps", (double)d, (double)(t + dt));
      if (t + dt > k->lyap_start) {
        k->st[1] += PetscLogReal(d / k->eps);
        k->st[2] += dt * k->lyap_every; /* the steps since the last renormalisation (all of length dt but a last short one) */
      }
      for (PetscInt m = 0; m < k->N / 2 + 1; m++) k->w[m] = k->v[m] + (k->eps / d) * (k->w[m] - k->v[m]);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsStep(SgSolver s, PetscReal t, PetscReal dt)
{
  PetscFunctionBegin;
  if (KsAdvanceOn((Ks *)s->data)) PetscCall(KsAdvanceStep(s, t, dt));
  else PetscCall(KsStepOnce(s, t, dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsDiagnose(SgSolver s, PetscReal t, PetscReal v[])
{
  Ks       *k   = (Ks *)s->data;
  PetscReal sum = 0, sq = 0, mx = 0;

  PetscFunctionBegin;
  PetscCall(KsEtdToPhysical(k->etd, k->v, k->u));
  for (PetscInt j = 0; j < k->N; j++) {
    sum += k->u[j];
    sq += k->u[j] * k->u[j];
    mx = PetscMax(mx, PetscAbsReal(k->u[j]));
  }
  v[k->d_mean]   = sum / k->N;
  v[k->d_energy] = 0.5 * sq * k->L / k->N;
  v[k->d_max]    = mx;
  if (k->lyap) v[k->d_lyap] = k->st[2] > 0 ? k->st[1] / k->st[2] : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsWriteFields(SgSolver s, SgOutput out)
{
  Ks          *k  = (Ks *)s->data;
  PetscReal    lo = -0.5 * k->L / k->N, hi = k->L + lo; /* surge writes cell centres: the cell of x_j = j L / N is centred on it */
  PetscScalar *a;
  PetscInt     xs, xm;

  PetscFunctionBegin;
  PetscCall(KsEtdToPhysical(k->etd, k->v, k->u));
  PetscCall(DMDAGetCorners(k->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(VecGetArray(k->U, &a));
  for (PetscInt i = 0; i < xm; i++) a[i] = k->u[xs + i];
  PetscCall(VecRestoreArray(k->U, &a));
  PetscCall(SgOutputWriteField(out, "u", k->U, &lo, &hi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The spectral states themselves are stored (replicated reals, bit-exact), so a restart continues
   the same trajectory bit for bit; a physical-space copy would lose the last bits in the transform. */
static PetscErrorCode KsCheckpoint(SgSolver s, SgCheckpoint chk)
{
  Ks *k = (Ks *)s->data;

  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutInt(chk, "ks_modes", k->N));
  PetscCall(SgCheckpointLayoutReal(chk, "ks_length", k->L));
  PetscCall(SgCheckpointLayoutInt(chk, "ks_lyapunov", k->lyap));
  PetscCall(SgCheckpointLayoutInt(chk, "ks_seed", k->seed)); /* names the trajectory: what an ensemble member's seed was */
  PetscCall(SgCheckpointReals(chk, "ks_v", 2 * (k->N / 2 + 1), (PetscReal *)k->v));
  PetscCall(SgCheckpointReals(chk, "ks_w", 2 * (k->N / 2 + 1), (PetscReal *)k->w));
  PetscCall(SgCheckpointReals(chk, "ks_state", 4, k->st));
  PetscCall(KsAdvanceCheckpoint(s, chk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsReport(SgSolver s, SgOutput out)
{
  Ks *k = (Ks *)s->data;

  PetscFunctionBegin;
  PetscCall(KsAdvanceReport(s, out));
  if (k->lyap) {
    PetscReal lam[2] = {k->st[2] > 0 ? k->st[1] / k->st[2] : 0, k->st[2]};
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s), "ks: leading Lyapunov exponent %.5f over a time of %g\n", (double)lam[0], (double)lam[1]));
    PetscCall(SgOutputWriteReport(out, "lyapunov", "[leading Lyapunov exponent 1/time, time averaged over]", 2, lam));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KsDestroy(SgSolver s)
{
  Ks *k = (Ks *)s->data;

  PetscFunctionBegin;
  PetscCall(KsAdvanceDestroy(k));
  PetscCall(KsEtdDestroy(&k->etd));
  if (k->v) fftw_free(k->v);
  if (k->w) fftw_free(k->w);
  if (k->u) fftw_free(k->u);
  PetscCall(VecDestroy(&k->U));
  PetscCall(DMDestroy(&k->da));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_KS(SgSolver s)
{
  Ks *k;

  PetscFunctionBegin;
  PetscCall(PetscNew(&k));
  k->N          = 64;
  k->L          = 22;
  k->dt         = 0.25;
  k->amplitude  = 1;
  k->eps        = 1e-8;
  k->lyap_every = 4;
  s->data                = k;
  s->ops->setfromoptions = KsSetFromOptions;
  s->ops->setup          = KsSetUp;
  s->ops->timestep       = KsTimeStep;
  s->ops->step           = KsStep;
  s->ops->diagnose       = KsDiagnose;
  s->ops->writefields    = KsWriteFields;
  s->ops->checkpoint     = KsCheckpoint;
  s->ops->report         = KsReport;
  s->ops->destroy        = KsDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
