/* The Boussinesq solver's data-level core: set-up of a Bq from its options, the CFL step, one IMEX
   step, destruction. The SgSolver (bq_solver.c) wraps it; the field.superres fine solve
   (bq_superres.c) runs a second Bq of its own through it. Units and equations: bq_solver.c. */
#include "bq.h"

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

/* Everything a Bq needs to step from its options (nx, nz, Ra, ...): grids, operators, buffers, plans,
   the initial state. The log events are the caller's (SgBqRegisterEvents). */
PetscErrorCode SgBqSetUpData(Bq *bq, MPI_Comm comm)
{
  PetscInt *cnt, *off, own;

  PetscFunctionBegin;
  bq->comm  = comm;
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
    for (PetscInt q = 0; q < SG_BQ_NCH; q++) PetscCall(PetscCalloc1(sz, &bq->fc[q]));
  }
  bq->cbuf = fftw_alloc_complex(bq->mx / 2 + 1);
  bq->rbuf = fftw_alloc_real(5 * bq->mx);
  PetscCheck(bq->cbuf && bq->rbuf, PETSC_COMM_SELF, PETSC_ERR_MEM, "boussinesq: cannot allocate FFTW buffers");
  /* FFTW_ESTIMATE: the plan (hence the round-off) is the same in every run, for bit-identical restarts */
  bq->c2r_pad = fftw_plan_dft_c2r_1d((int)bq->mx, bq->cbuf, bq->rbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  bq->r2c_pad = fftw_plan_dft_r2c_1d((int)bq->mx, bq->rbuf, bq->cbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  bq->c2r_out = fftw_plan_dft_c2r_1d((int)bq->nx, bq->cbuf, bq->rbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  bq->r2c_out = fftw_plan_dft_r2c_1d((int)bq->nx, bq->rbuf, bq->cbuf, FFTW_ESTIMATE | FFTW_UNALIGNED);
  PetscCheck(bq->c2r_pad && bq->r2c_pad && bq->c2r_out && bq->r2c_out, PETSC_COMM_SELF, PETSC_ERR_LIB, "boussinesq: FFTW could not plan transforms of %" PetscInt_FMT " and %" PetscInt_FMT " points", bq->mx, bq->nx);
  PetscCall(InitialState(bq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqRegisterEvents(Bq *bq)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("BqTransform", SG_SOLVER_CLASSID, &bq->ev_fft));
  PetscCall(PetscLogEventRegister("BqDz", SG_SOLVER_CLASSID, &bq->ev_dz));
  PetscCall(PetscLogEventRegister("BqGather", SG_SOLVER_CLASSID, &bq->ev_gather));
  PetscCall(PetscLogEventRegister("BqSolve", SG_SOLVER_CLASSID, &bq->ev_solve));
  PetscCall(PetscLogEventRegister("BqFactor", SG_SOLVER_CLASSID, &bq->ev_factor));
  PetscCall(PetscLogEventRegister("BqLinear", SG_SOLVER_CLASSID, &bq->ev_lin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step size: cfl over the fastest explicit rate, advection or buoyancy. The buoyancy rate is N in
   the inviscid limit and N^2 / (nu q^2) once viscosity damps the gravity waves (Stokes balance;
   q^2 = (2 pi/Lx)^2 + (pi/Lz)^2 the smallest wavenumber of a mode), whichever is smaller: at large
   Pr the second bound is the one that keeps the explicit buoyancy coupling stable.
   Hysteresis: dt is kept until the limit falls below it or exceeds it by (1 + threshold)^2, since
   each change costs a refactorisation of every mode's operators. */
PetscErrorCode SgBqTimeStepData(Bq *bq, PetscReal *dt)
{
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
PetscErrorCode SgBqStepData(Bq *bq, PetscReal dt)
{
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

/* Frees what SgBqSetUpData (and the output/pressure buffers) allocated; not bq itself. */
PetscErrorCode SgBqDestroyData(Bq *bq)
{

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
    for (PetscInt q = 0; q < SG_BQ_NCH; q++) PetscCall(PetscFree(bq->fc[q]));
  }
  if (bq->c2r_pad) fftw_destroy_plan(bq->c2r_pad);
  if (bq->r2c_pad) fftw_destroy_plan(bq->r2c_pad);
  if (bq->c2r_out) fftw_destroy_plan(bq->c2r_out);
  if (bq->r2c_out) fftw_destroy_plan(bq->r2c_out);
  if (bq->cbuf) fftw_free(bq->cbuf);
  if (bq->rbuf) fftw_free(bq->rbuf);
  PetscCall(VecDestroy(&bq->vout));
  PetscCall(DMDestroy(&bq->da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

