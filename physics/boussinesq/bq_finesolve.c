/* The solver's own field.superres provider: a fine solve of the block's segment.

   A second Bq on the fine grid (superres cells) with the coarse run's physics starts from the coarse
   state at the block time just before the earliest one any query point asks for (at that time itself
   when it is the block's first), spectrally interpolated (SgBqInterpolateState: the same Chebyshev
   polynomial in z, the coarse Fourier modes zero-padded in x), and is advanced with its own CFL step
   (superres cfl, max_dt) through the block's times; at each of them it answers the query points that
   ask for that time, evaluated exactly from its spectral state (SgBqGridEval, or SgBqEvalPoint for
   scattered points). So a block of T snapshots asked at its last time costs one segment D, not
   T - 1 of them, and the fine answer has left the coarse trajectory for one segment only. Each call
   starts afresh (step hysteresis and LU factors reset), so an answer depends only on the block:
   restarts and rank counts do not change it. */
#include "bq_superres.h"

PetscErrorCode SgBqFineCreate(Bq *c, BqSuperres *sr)
{
  Bq *f;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sr->fine));
  f               = sr->fine;
  f->Ra           = c->Ra;
  f->Pr           = c->Pr;
  f->Lx           = c->Lx;
  f->Lz           = c->Lz;
  f->walls        = c->walls;
  f->scheme       = c->scheme;
  f->dt_threshold = c->dt_threshold;
  f->conductive   = c->conductive;
  f->seed         = c->seed;
  f->cfl          = sr->cfl;
  f->max_dt       = sr->max_dt;
  f->nx           = sr->cells[0];
  f->nz           = sr->cells[1];
  f->out_nz       = sr->out[1];
  PetscCall(SgBqSetUpData(f, c->comm));
  f->ev_fft = c->ev_fft;
  f->ev_dz = c->ev_dz;
  f->ev_gather = c->ev_gather;
  f->ev_solve = c->ev_solve;
  f->ev_factor = c->ev_factor;
  f->ev_lin = c->ev_lin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* index of block time t among the block's times (-1 if none) */
static PetscInt BlockIndex(const SgFieldBlock *B, PetscReal t, PetscReal tol)
{
  for (PetscInt k = 0; k < B->n[0]; k++)
    if (PetscAbsReal(t - B->coord[0][k]) <= tol) return k;
  return -1;
}

PetscErrorCode SgBqSuperresByFineSolve(void *ctx, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  Bq                 *bq = (Bq *)ctx;
  BqSuperres         *sr = bq->sr;
  Bq                 *f  = sr->fine;
  const SgFieldBlock *B  = in->coarse;
  const SgFieldQuery *q  = in->query;
  const PetscInt      nq = SgFieldQueryCount(q);
  const PetscReal     tol = 1e-9 * PetscMax(1, sr->dt);
  const PetscReal    *st = NULL;
  PetscInt            kq[2] = {PETSC_MAX_INT, -1}, kall[2], k0;
  PetscReal           tf, *Irow;
  SgBqGridEval        ge;

  PetscFunctionBegin;
  PetscCheck(B->nch == SG_BQ_NCH, bq->comm, PETSC_ERR_ARG_SIZ, "boussinesq superres: the fine solve answers p, b, u, w (the block has %" PetscInt_FMT " channels)", B->nch);
  /* the earliest and the latest block time any rank asks for: every rank starts one block time before
     the first and steps the fine solve to the last (max of -k and k in one reduction) */
  for (PetscInt p = 0; p < nq; p++) {
    PetscReal pt[3];
    PetscInt  k;
    SgFieldQueryPoint(q, p, pt);
    k = BlockIndex(B, pt[0], tol);
    PetscCheck(k >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "boussinesq superres: the fine solve answers at the block's times only; point %" PetscInt_FMT " asks for t = %g", p, (double)pt[0]);
    kq[0] = PetscMin(kq[0], k);
    kq[1] = PetscMax(kq[1], k);
  }
  kq[0] = -kq[0];
  PetscCallMPI(MPI_Allreduce(kq, kall, 2, MPIU_INT, MPI_MAX, bq->comm));
  if (kall[1] < 0) PetscFunctionReturn(PETSC_SUCCESS); /* no rank asks for anything */
  k0 = PetscMax(-kall[0] - 1, 0);
  tf = B->coord[0][k0];
  /* the coarse state there: a held block snapshot */
  for (PetscInt i = 0; i < sr->nb; i++)
    if (PetscAbsReal(sr->btime[i] - tf) <= tol) st = sr->bstate + i * sr->nstate;
  PetscCheck(st, bq->comm, PETSC_ERR_ARG_WRONG, "boussinesq superres: no coarse state at the block time %g", (double)tf);
  PetscCall(SgBqInterpolateState(bq, st, st + bq->n * bq->ncol, st + 2 * bq->n * bq->ncol, f));
  f->dt_held = 0;
  f->dt_fact = 0;
  PetscCall(PetscMalloc1(f->n, &Irow));
  if (q->grid) PetscCall(SgBqGridEvalCreate(f, q->n[1], q->coord[1], q->n[2], q->coord[2], &ge));
  for (PetscInt k = k0; k <= kall[1]; k++) {
    PetscCall(SgBqAdvanceTo(f, &tf, B->coord[0][k]));
    PetscCall(SgBqFieldCoefficients(f, f->fc));
    if (q->grid) {
      const PetscInt nzx = q->n[1] * q->n[2];
      for (PetscInt it = 0; it < q->n[0]; it++) {
        if (BlockIndex(B, q->coord[0][it], tol) != k) continue;
        for (PetscInt c = 0; c < SG_BQ_NCH; c++) PetscCall(SgBqGridEvalApply(f, &ge, f->fc[c], 0, q->n[1], out->v + c * nq + it * nzx));
      }
    } else
      for (PetscInt p = 0; p < nq; p++) {
        const PetscReal *pt = q->pts + 3 * p;
        if (BlockIndex(B, pt[0], tol) != k) continue;
        for (PetscInt c = 0; c < SG_BQ_NCH; c++) out->v[c * nq + p] = SgBqEvalPoint(f, f->fc[c], pt[1], pt[2], Irow);
      }
  }
  if (q->grid) PetscCall(SgBqGridEvalDestroy(&ge));
  PetscCall(PetscFree(Irow));
  PetscFunctionReturn(PETSC_SUCCESS);
}
