/* The solver's field.advance slot (sgfield.h): (a history of H snapshots) -> the next K snapshots.
   The options, the history, the warm-up, the re-synchronisation every M snapshots and the checkpoint
   are the shared SgAdvanceLoop's (io/slot, sgslotio.h); this file supplies the solver's provider,
   the snapshot layout and what happens to the state when the surrogate serves.

   With boussinesq: {advance: {dt: D}} (D > 0) the slot is in the loop: every driver step is one slot
   call that advances the state by K = advance_snapshots snapshots D apart (the driver's step is
   K D; the last one is shortened to sim t_end). Who serves is the slot's swap policy
   (boussinesq_advance_swap_*, sgslot.h), held back as SgAdvanceLoop says (advance: {warmup: T0,
   resync_every: M}): the solver's own provider "boussinesq" steps the solver with its CFL step to
   each snapshot time (SgBqAdvanceTo); a surrogate (advance: {surrogate: TYPE}) predicts the
   snapshots, and the state continues from its last one (SgBqImportNative). The slot's "step" is the
   call number.

   Snapshots are the fields p, b, u, w on the solver's native grid (advance: {grid: native}, the
   default: x_i = i Lx / nx, the Chebyshev nodes z_j), so a snapshot the solver wrote and read back is
   its state to round-off; or on the grid the run writes (grid: output: x_i = (i + 1/2) Lx / nx,
   z_k = (k + 1/2) Lz / output_nz, the grid of the ensembles' field_snapshots a surrogate learns
   from), read back by interpolation in z (SgBqImportOutput: O(h^6)). The history holds them
   snapshot-major ([H][4][nz][nx]); the slot gets them channel-major. */
#include "bq.h"
#include "sgslotio.h"

struct _n_BqAdvance {
  SgAdvanceLoop loop;
  PetscInt      grid, nz;  /* 0 native, 1 output; z points of a snapshot */
  PetscReal    *xc, *zc, *blk, *outv, *snap; /* zc: part of the xc allocation */
};

static const char *const Grids[] = {"native", "output"};

PetscErrorCode SgBqAdvanceSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Bq                 *bq = (Bq *)s->data;
  BqAdvance          *A;
  SgFieldProviderInfo info;
  PetscReal           par[2];
  const SgSolverRunInfo *run;

  PetscFunctionBegin;
  if (!bq->adv) {
    PetscCall(PetscNew(&bq->adv));
    bq->adv->loop.K = 1;
    bq->adv->loop.H = 1;
  }
  A = bq->adv;
  PetscCall(SgOptionsEList("-advance_grid", "field.advance: the grid of the snapshots: native (x_i = i Lx/nx, the Chebyshev nodes; exact) or output (the written uniform grid, output_nz; read back by interpolation in z)", Grids, 2, Grids[A->grid], &A->grid, NULL));
  SgBqProviderInfo(bq, PetscObjectComm((PetscObject)s), PetscOptionsObject, par, &info);
  PetscCall(SgSolverGetRunInfo(s, &run));
  PetscCall(SgAdvanceLoopSetFromOptions(&A->loop, PetscOptionsObject, "boussinesq", "free-fall times", &info, run->dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Copy snapshot q (layout [4][n][nx]) out of, or into, slot k of a channel-major [4][nt][n][nx] array. */
static PetscErrorCode Gather(const Bq *bq, const PetscReal *cm, PetscInt nt, PetscInt k, PetscReal *snap)
{
  const PetscInt sz = bq->adv->nz * bq->nx;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < SG_BQ_NCH; c++) PetscCall(PetscArraycpy(snap + c * sz, cm + (c * nt + k) * sz, sz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode Scatter(const Bq *bq, const PetscReal *snap, PetscInt nt, PetscInt k, PetscReal *cm)
{
  const PetscInt sz = bq->adv->nz * bq->nx;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < SG_BQ_NCH; c++) PetscCall(PetscArraycpy(cm + (c * nt + k) * sz, snap + c * sz, sz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Export(Bq *bq, PetscReal *v)
{
  PetscFunctionBegin;
  if (bq->adv->grid) PetscCall(SgBqExportOutput(bq, v));
  else PetscCall(SgBqExportNative(bq, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's provider: step the solver to each requested time and export the state there. The
   history's newest snapshot is the solver's current state (the caller keeps them in step). */
static PetscErrorCode AdvanceBySolver(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  Bq       *bq = (Bq *)ctx;
  PetscReal t  = in->history->coord[0][in->history->n[0] - 1];

  PetscFunctionBegin;
  PetscCheck(in->history->n[1] == bq->adv->nz && in->history->n[2] == bq->nx, bq->comm, PETSC_ERR_ARG_SIZ, "boussinesq advance: a history of %" PetscInt_FMT " x %" PetscInt_FMT " points, not the solver's snapshot grid", in->history->n[1], in->history->n[2]);
  for (PetscInt k = 0; k < in->nnext; k++) {
    PetscCall(SgBqAdvanceTo(bq, &t, in->tnext[k]));
    PetscCall(Export(bq, bq->adv->snap));
    PetscCall(Scatter(bq, bq->adv->snap, in->nnext, k, out->v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceSetUp(SgSolver s)
{
  Bq        *bq   = (Bq *)s->data;
  BqAdvance *A    = bq->adv;
  MPI_Comm   comm = PetscObjectComm((PetscObject)s);
  PetscInt   sz   = 0;

  PetscFunctionBegin;
  if (A->loop.dt > 0) {
    A->nz = A->grid ? bq->out_nz : bq->n;
    sz    = SG_BQ_NCH * A->nz * bq->nx;
    PetscCall(PetscCalloc4(bq->nx + A->nz, &A->xc, A->loop.H * sz, &A->blk, A->loop.K * sz, &A->outv, sz, &A->snap));
    A->zc = A->xc + bq->nx;
    for (PetscInt i = 0; i < bq->nx; i++) A->xc[i] = (i + (A->grid ? 0.5 : 0)) * bq->Lx / bq->nx;
    for (PetscInt k = 0; k < A->nz; k++) A->zc[k] = A->grid ? (k + 0.5) * bq->Lz / A->nz : bq->z[k];
    PetscCall(Export(bq, A->snap));
    { /* the grid of the blocks to come: a surrogate checks it now, not at its first call */
      const SgFieldBlock grid = {SG_BQ_NCH, SgBqChannels, {0, A->nz, bq->nx}, {NULL, A->zc, A->xc}, {0, 0, 0}, {0, bq->Lz, bq->Lx}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, NULL};
      PetscCall(SgAdvanceLoopSetGrid(&A->loop, &grid));
    }
  }
  PetscCall(SgAdvanceLoopSetUp(&A->loop, comm, "boussinesq", "boussinesq_", AdvanceBySolver, bq, sz, A->snap));
  PetscCall(SgSolverDeclareSlot(s, A->loop.slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One driver step: one slot call from t to t + dt (K snapshots D apart, the last at t + dt). */
PetscErrorCode SgBqAdvanceStep(SgSolver s, PetscReal t, PetscReal dt)
{
  Bq                  *bq = (Bq *)s->data;
  BqAdvance           *A  = bq->adv;
  SgAdvanceLoop       *L  = &A->loop;
  const PetscInt       sz = SG_BQ_NCH * A->nz * bq->nx;
  PetscBool            sur;
  SgFieldBlock         hist;
  SgFieldAdvanceInput  in;
  SgFieldAdvanceOutput out = {A->outv};

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopBegin(L, t, dt));
  /* the history as a channel-major block */
  for (PetscInt i = 0; i < L->nh; i++) PetscCall(Scatter(bq, L->hval + i * sz, L->nh, i, A->blk));
  hist = (SgFieldBlock){SG_BQ_NCH, SgBqChannels, {L->nh, A->nz, bq->nx}, {L->htime, A->zc, A->xc}, {0, 0, 0}, {0, bq->Lz, bq->Lx}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, A->blk};
  in   = (SgFieldAdvanceInput){&hist, L->nt, L->tn};
  PetscCall(SgSlotFieldAdvance(L->slot, &in, &out));
  PetscCall(SgAdvanceLoopEnd(L, &sur));
  if (sur) { /* the state continues from the surrogate's last snapshot */
    PetscCall(Gather(bq, A->outv, L->nt, L->nt - 1, A->snap));
    if (A->grid) PetscCall(SgBqImportOutput(bq, A->snap));
    else PetscCall(SgBqImportNative(bq, A->snap));
  }
  for (PetscInt k = 0; k < L->nt; k++) {
    PetscCall(Gather(bq, A->outv, L->nt, k, A->snap));
    PetscCall(SgAdvanceLoopPush(L, L->tn[k], A->snap));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceCheckpoint(SgSolver s, SgCheckpoint chk)
{
  Bq *bq = (Bq *)s->data;

  PetscFunctionBegin;
  if (!SgBqAdvanceOn(bq)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgCheckpointLayoutString(chk, "boussinesq_advance_grid", Grids[bq->adv->grid]));
  PetscCall(SgAdvanceLoopCheckpoint(&bq->adv->loop, chk, "boussinesq_"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceReport(SgSolver s, SgOutput out)
{
  Bq *bq = (Bq *)s->data;

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopReport(&bq->adv->loop, bq->comm, "boussinesq", out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceDestroy(Bq *bq)
{
  BqAdvance *A = bq->adv;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgAdvanceLoopDestroy(&A->loop));
  PetscCall(PetscFree4(A->xc, A->blk, A->outv, A->snap));
  PetscCall(PetscFree(bq->adv)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgBqAdvanceOn(const Bq *bq) { return bq->adv ? SgAdvanceLoopOn(&bq->adv->loop) : PETSC_FALSE; }

PetscReal SgBqAdvanceSegment(const Bq *bq) { return SgAdvanceLoopSegment(&bq->adv->loop); }
