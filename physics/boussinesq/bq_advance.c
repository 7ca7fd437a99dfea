/* The solver's field.advance slot (sgfield.h): (a history of H snapshots) -> the next K snapshots.

   With boussinesq: {advance: {dt: D}} (D > 0) the slot is in the loop: every driver step is one slot
   call that advances the state by K = advance_snapshots snapshots D apart (the driver's step is
   K D; the last one is shortened to sim t_end). Who serves is the slot's swap policy
   (boussinesq_advance_swap_*, sgslot.h): the solver's own provider "boussinesq" steps the solver
   with its CFL step to each snapshot time (SgBqAdvanceTo); a surrogate (advance: {surrogate: TYPE})
   predicts the snapshots, and the state continues from its last one (SgBqImportNative). The slot's
   "step" is the call number.

   Snapshots are the fields p, b, u, w on the solver's native grid (advance: {grid: native}, the
   default: x_i = i Lx / nx, the Chebyshev nodes z_j), so a snapshot the solver wrote and read back is
   its state to round-off; or on the grid the run writes (grid: output: x_i = (i + 1/2) Lx / nx,
   z_k = (k + 1/2) Lz / output_nz, the grid of the ensembles' field_snapshots a surrogate learns
   from), read back by interpolation in z (SgBqImportOutput: O(h^6)). The history
   holds the last H = max(advance_history, what the surrogate needs) snapshots, the current state
   last; while it holds fewer than the surrogate needs, or a call's snapshot spacing is not the
   surrogate's (the shortened last step), the solver serves (SgSlotSetSurrogateAvailable). The
   history and the slot's counts are checkpointed: a restart continues bit for bit. */
#include "bq.h"
#include "sgslot.h"
#include "sgcheckpoint.h"

struct _n_BqAdvance {
  PetscReal              dt;        /* snapshot spacing; 0: the slot is not in the loop */
  PetscInt               K, H;      /* snapshots per call; history kept */
  PetscInt               grid, nz;  /* 0 native, 1 output; z points of a snapshot */
  char                   surname[64];
  SgFieldAdvanceProvider sur;
  SgSlot                 slot;
  PetscInt               nh;        /* snapshots held (<= H) */
  PetscReal              t;         /* time of the newest snapshot (the solver's) */
  PetscReal             *htime;     /* [H] oldest first */
  PetscReal             *hval;      /* [H][4][n][nx] */
  PetscReal             *xc, *zc, *blk, *outv, *tn, *snap; /* zc: part of the xc allocation */
};

static const char *const Grids[] = {"native", "output"};

PetscErrorCode SgBqAdvanceSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Bq        *bq   = (Bq *)s->data;
  MPI_Comm   comm = PetscObjectComm((PetscObject)s);
  BqAdvance *A;
  PetscBool  set;

  PetscFunctionBegin;
  if (!bq->adv) {
    PetscCall(PetscNew(&bq->adv));
    bq->adv->K = 1;
    bq->adv->H = 1;
  }
  A = bq->adv;
  PetscCall(SgOptionsReal("-advance_dt", "field.advance slot: snapshot spacing; > 0 puts the slot in the loop (each driver step advances advance_snapshots snapshots through it)", "free-fall times", A->dt, &A->dt, NULL, 0, 1e6));
  PetscCall(SgOptionsInt("-advance_snapshots", "field.advance: snapshots K per slot call (the driver's step is K advance_dt)", A->K, &A->K, NULL, 1, 4096));
  PetscCall(SgOptionsInt("-advance_history", "field.advance: snapshots of history handed to the provider (at least what the surrogate needs)", A->H, &A->H, NULL, 1, 4096));
  PetscCall(SgOptionsEList("-advance_grid", "field.advance: the grid of the snapshots: native (x_i = i Lx/nx, the Chebyshev nodes; exact) or output (the written uniform grid, output_nz; read back by interpolation in z)", Grids, 2, Grids[A->grid], &A->grid, NULL));
  PetscCall(SgOptionsString("-advance_surrogate", "field.advance: surrogate type that may serve the slot (swap policy: advance_swap_policy)", A->surname, A->surname, sizeof A->surname, &set));
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  if (A->surname[0]) {
    SgFieldProviderInfo info;
    PetscReal           par[2];
    PetscCheck(A->dt > 0, comm, PETSC_ERR_USER_INPUT, "boussinesq advance surrogate %s needs the slot in the loop: set boussinesq: {advance: {dt: D}} (the snapshot spacing)", A->surname);
    SgBqProviderInfo(bq, comm, PetscOptionsObject, par, &info);
    PetscCall(SgFieldAdvanceProviderCreate(A->surname, &info, &A->sur));
    PetscCheck(!A->sur.dt || PetscAbsReal(A->sur.dt - A->dt) <= 1e-9 * A->dt, comm, PETSC_ERR_USER_INPUT, "boussinesq advance dt %g: surrogate %s was made for snapshots %g apart; set advance: {dt: %g}", (double)A->dt, A->surname, (double)A->sur.dt, (double)A->sur.dt);
    PetscCheck(!A->sur.nnext || A->K <= A->sur.nnext, comm, PETSC_ERR_USER_INPUT, "boussinesq advance snapshots %" PetscInt_FMT ": surrogate %s answers at most %" PetscInt_FMT " per call", A->K, A->surname, A->sur.nnext);
    A->H = PetscMax(A->H, A->sur.history);
  }
  if (A->dt > 0) {
    PetscReal sdt = 0;
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-sim_dt", &sdt, &set));
    PetscCheck(!set || sdt == 0, comm, PETSC_ERR_USER_INPUT, "boussinesq advance dt %g puts the field.advance slot in the loop: the driver's step is then advance_snapshots x advance_dt, so sim dt (%g) cannot be set; fix the solver's own step with boussinesq max_dt", (double)A->dt, (double)sdt);
  }
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

static PetscErrorCode Push(Bq *bq, PetscReal t, const PetscReal *snap)
{
  BqAdvance     *A  = bq->adv;
  const PetscInt sz = SG_BQ_NCH * A->nz * bq->nx;

  PetscFunctionBegin;
  if (A->nh == A->H) { /* drop the oldest */
    PetscCall(SgBqShiftOut(A->hval, A->H, sz));
    PetscCall(SgBqShiftOut(A->htime, A->H, 1));
    A->nh--;
  }
  PetscCall(PetscArraycpy(A->hval + A->nh * sz, snap, sz));
  A->htime[A->nh++] = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceSetUp(SgSolver s)
{
  Bq        *bq = (Bq *)s->data;
  BqAdvance *A  = bq->adv;
  MPI_Comm   comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  PetscCall(SgSlotCreate("field.advance", &A->slot));
  PetscCall(SgSlotSetFieldAdvanceProvider(A->slot, "boussinesq", AdvanceBySolver, bq));
  if (A->sur.fn) PetscCall(SgSlotSetFieldAdvanceSurrogate(A->slot, A->sur.name, A->sur.fn, A->sur.uncertainty, A->sur.ctx));
  /* boussinesq_advance_swap_* (read always: a swap option without advance_surrogate is an error) */
  PetscCall(SgSlotSetFromOptions(A->slot, comm, "boussinesq_advance_"));
  PetscCall(SgSolverDeclareSlot(s, A->slot));
  if (A->dt <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  A->nz = A->grid ? bq->out_nz : bq->n;
  {
    const PetscInt sz = SG_BQ_NCH * A->nz * bq->nx;
    PetscCall(PetscCalloc5(A->H, &A->htime, A->H * sz, &A->hval, bq->nx + A->nz, &A->xc, A->H * sz, &A->blk, A->K * sz, &A->outv));
    PetscCall(PetscMalloc2(A->K + 1, &A->tn, sz, &A->snap));
  }
  A->zc = A->xc + bq->nx;
  for (PetscInt i = 0; i < bq->nx; i++) A->xc[i] = (i + (A->grid ? 0.5 : 0)) * bq->Lx / bq->nx;
  for (PetscInt k = 0; k < A->nz; k++) A->zc[k] = A->grid ? (k + 0.5) * bq->Lz / A->nz : bq->z[k];
  PetscCall(Export(bq, A->snap));
  PetscCall(Push(bq, 0, A->snap));
  A->t = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One driver step: one slot call from t to t + dt (K snapshots D apart, the last at t + dt). */
PetscErrorCode SgBqAdvanceStep(SgSolver s, PetscReal t, PetscReal dt)
{
  Bq                  *bq = (Bq *)s->data;
  BqAdvance           *A  = bq->adv;
  const PetscReal      te = t + dt;
  const PetscReal     *coord[3];
  const PetscInt       sz = SG_BQ_NCH * A->nz * bq->nx;
  PetscInt             nt = 0;
  PetscBool            sur, avail = PETSC_TRUE;
  char                 why[128] = "";
  SgFieldBlock         hist;
  SgFieldAdvanceInput  in;
  SgFieldAdvanceOutput out = {A->outv};

  PetscFunctionBegin;
  PetscCheck(PetscAbsReal(t - A->t) <= 1e-9 * PetscMax(1, PetscAbsReal(t)), bq->comm, PETSC_ERR_PLIB, "boussinesq advance: the driver is at t = %.17g, the newest snapshot at %.17g", (double)t, (double)A->t);
  for (PetscInt k = 1; k <= A->K; k++) {
    const PetscReal tk = t + k * A->dt;
    if (tk >= te - 1e-9 * A->dt) {
      A->tn[nt++] = te;
      break;
    }
    A->tn[nt++] = tk;
  }
  /* the history as a channel-major block */
  for (PetscInt i = 0; i < A->nh; i++) PetscCall(Scatter(bq, A->hval + i * sz, A->nh, i, A->blk));
  coord[0] = A->htime, coord[1] = A->zc, coord[2] = A->xc;
  hist = (SgFieldBlock){SG_BQ_NCH, SgBqChannels, {A->nh, A->nz, bq->nx}, {coord[0], coord[1], coord[2]}, {0, 0, 0}, {0, bq->Lz, bq->Lx}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, A->blk};
  in   = (SgFieldAdvanceInput){&hist, nt, A->tn};
  if (A->sur.fn) {
    PetscReal prev = t;
    if (A->nh < A->sur.history) PetscCall(PetscSNPrintf(why, sizeof why, "history of %" PetscInt_FMT " of the %" PetscInt_FMT " snapshots surrogate %s needs", A->nh, A->sur.history, A->surname));
    for (PetscInt k = 0; k < nt && !why[0] && A->sur.dt; k++) {
      if (PetscAbsReal(A->tn[k] - prev - A->sur.dt) > 1e-9 * A->sur.dt) PetscCall(PetscSNPrintf(why, sizeof why, "snapshot %g apart, surrogate %s was made for %g", (double)(A->tn[k] - prev), A->surname, (double)A->sur.dt));
      prev = A->tn[k];
    }
    avail = why[0] ? PETSC_FALSE : PETSC_TRUE;
    PetscCall(SgSlotSetSurrogateAvailable(A->slot, avail, why));
  }
  PetscCall(SgSlotFieldAdvance(A->slot, &in, &out));
  PetscCall(SgSlotGetLastCall(A->slot, &sur, NULL, NULL));
  if (sur) { /* the state continues from the surrogate's last snapshot */
    PetscCall(Gather(bq, A->outv, nt, nt - 1, A->snap));
    if (A->grid) PetscCall(SgBqImportOutput(bq, A->snap));
    else PetscCall(SgBqImportNative(bq, A->snap));
  }
  for (PetscInt k = 0; k < nt; k++) {
    PetscCall(Gather(bq, A->outv, nt, k, A->snap));
    PetscCall(Push(bq, A->tn[k], A->snap));
  }
  A->t = te;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceCheckpoint(SgSolver s, SgCheckpoint chk)
{
  Bq        *bq = (Bq *)s->data;
  BqAdvance *A  = bq->adv;
  PetscReal  sc[2], st[SG_SLOT_NSTATE];
  PetscBool  reading;

  PetscFunctionBegin;
  if (A->dt <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgCheckpointIsReading(chk, &reading));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_advance_dt", A->dt));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_advance_history", A->H));
  PetscCall(SgCheckpointLayoutString(chk, "boussinesq_advance_grid", Grids[A->grid]));
  sc[0] = A->nh, sc[1] = A->t;
  if (!reading) PetscCall(SgSlotGetState(A->slot, st));
  PetscCall(SgCheckpointReals(chk, "boussinesq_advance_scalars", 2, sc));
  PetscCall(SgCheckpointReals(chk, "boussinesq_advance_time", A->H, A->htime));
  PetscCall(SgCheckpointReals(chk, "boussinesq_advance_history", A->H * SG_BQ_NCH * A->nz * bq->nx, A->hval));
  PetscCall(SgCheckpointReals(chk, "boussinesq_advance_slot", SG_SLOT_NSTATE, st));
  if (reading) {
    A->nh = (PetscInt)sc[0], A->t = sc[1];
    PetscCall(SgSlotSetState(A->slot, st));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceReport(SgSolver s, SgOutput out)
{
  Bq        *bq = (Bq *)s->data;
  BqAdvance *A  = bq->adv;

  PetscFunctionBegin;
  if (A->dt > 0) PetscCall(SgBqSlotReport(bq->comm, A->slot, "advance", "boussinesq", A->surname, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqAdvanceDestroy(Bq *bq)
{
  BqAdvance *A = bq->adv;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  if (A->htime) {
    PetscCall(PetscFree5(A->htime, A->hval, A->xc, A->blk, A->outv));
    PetscCall(PetscFree2(A->tn, A->snap));
  }
  PetscCall(PetscFree(bq->adv)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgBqAdvanceOn(const Bq *bq) { return bq->adv && bq->adv->dt > 0 ? PETSC_TRUE : PETSC_FALSE; }

PetscReal SgBqAdvanceSegment(const Bq *bq) { return bq->adv->K * bq->adv->dt; }
