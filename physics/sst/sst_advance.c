/* The sst solver's field.advance slot (sgfield.h): a history of H weekly (say) snapshots of T -> the
   next K snapshots, served by the solver or by a surrogate (POD-LSTM) as the slot's swap policy says.

   With sst: {advance: {dt: D}} (D > 0) every driver step is one slot call advancing K =
   advance_snapshots snapshots D apart (the driver's step is K D, the last one shortened to t_end).
   The solver's provider integrates: each interval D in the fewest equal RK3 steps the stability
   bound allows (7/17 day for weekly snapshots on the 1-degree grid, so a solver-served run equals the
   plain weekly run bit for bit). When the surrogate serves, T continues from its last snapshot (land
   stays 0) and the stochastic forcing is advanced over the same steps the solver would have taken,
   so the weather and ENSO go on exactly as in a run of the solver alone; the heat budget restarts
   from the imported state (a surrogate conserves nothing). The surrogate is held back while t is
   before advance_warmup (the solver warms up), while the history is shorter than it needs, and, with
   advance_resync_every M, for the call after M of its snapshots in a row: the solver advances again
   and the surrogate goes on from its snapshots (re-synchronisation; the count is checkpointed).

   Snapshots are T [nlat][nlon] on the solver's grid (cell centres, latitude then longitude, degrees),
   replicated on every rank. The history and the slot's counts are checkpointed. */
#include "sst.h"
#include "sgslot.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"

static const char *const Channels[1] = {"T"};

struct _n_SstAdvance {
  PetscReal              dt, warmup;  /* snapshot spacing, days; 0: the slot is not in the loop */
  PetscInt               K, H, nh, nsub; /* snapshots per call, history kept and held, RK3 steps per snapshot */
  PetscInt               resync, nsur;   /* re-synchronise after resync surrogate snapshots in a row; the count */
  char                   surname[64];
  SgFieldAdvanceProvider sur;
  SgSlot                 slot;
  PetscReal              t, *htime, *hval, *lat, *lon, *snap, *out, *tn;
};

PetscErrorCode SgSstAdvanceSetFromOptions(SgSolver sv, PetscOptionItems *PetscOptionsObject)
{
  Sst       *s    = (Sst *)sv->data;
  MPI_Comm   comm = PetscObjectComm((PetscObject)sv);
  SstAdvance *A;
  PetscBool  set;

  PetscFunctionBegin;
  if (!s->adv) {
    PetscCall(PetscNew(&s->adv));
    s->adv->K = 8, s->adv->H = 8;
  }
  A = s->adv;
  PetscCall(SgOptionsReal("-advance_dt", "field.advance slot: snapshot spacing; > 0 puts the slot in the loop (each driver step is one call of advance_snapshots snapshots)", "days", A->dt, &A->dt, NULL, 0, 1e6));
  PetscCall(SgOptionsInt("-advance_snapshots", "field.advance: snapshots K per slot call", A->K, &A->K, NULL, 1, 4096));
  PetscCall(SgOptionsInt("-advance_history", "field.advance: snapshots of history handed to the provider (at least what the surrogate needs)", A->H, &A->H, NULL, 1, 4096));
  PetscCall(SgOptionsReal("-advance_warmup", "field.advance: the solver serves every call that starts before this time", "days", A->warmup, &A->warmup, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-advance_resync_every", "field.advance: after this many snapshots of the surrogate in a row the solver serves the next call (re-synchronisation; 0: never)", A->resync, &A->resync, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsString("-advance_surrogate", "field.advance: surrogate type that may serve the slot (policy: advance_swap_policy)", A->surname, A->surname, sizeof A->surname, &set));
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  if (A->surname[0]) {
    SgFieldProviderInfo info = {comm, 1, Channels, 0, NULL, NULL, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "sst_", PetscOptionsObject};
    PetscCheck(A->dt > 0, comm, PETSC_ERR_USER_INPUT, "sst advance surrogate %s needs the slot in the loop: set sst: {advance: {dt: D}} (the snapshot spacing, days)", A->surname);
    PetscCall(SgFieldAdvanceProviderCreate(A->surname, &info, &A->sur));
    PetscCheck(!A->sur.dt || PetscAbsReal(A->sur.dt - A->dt) <= 1e-9 * A->dt, comm, PETSC_ERR_USER_INPUT, "sst advance dt %g: surrogate %s was made for snapshots %g apart; set advance: {dt: %g}", (double)A->dt, A->surname, (double)A->sur.dt, (double)A->sur.dt);
    PetscCheck(!A->sur.nnext || A->K <= A->sur.nnext, comm, PETSC_ERR_USER_INPUT, "sst advance snapshots %" PetscInt_FMT ": surrogate %s answers at most %" PetscInt_FMT " per call", A->K, A->surname, A->sur.nnext);
    A->H = PetscMax(A->H, A->sur.history);
  }
  if (A->dt > 0) {
    PetscReal sdt = 0;
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-sim_dt", &sdt, &set));
    PetscCheck(!set || sdt == 0, comm, PETSC_ERR_USER_INPUT, "sst advance dt %g puts the field.advance slot in the loop: the driver's step is advance_snapshots x advance_dt, so sim dt (%g) cannot be set", (double)A->dt, (double)sdt);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* T as a replicated [nlat][nlon] array, and back */
static PetscErrorCode Export(Sst *s, MPI_Comm comm, PetscReal *snap)
{
  const PetscScalar **x;
  const PetscInt      n = s->nlon * s->nlat;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(snap, n));
  PetscCall(DMDAVecGetArrayRead(s->da, s->T, &x));
  for (PetscInt j = s->ys; j < s->ys + s->ym; j++)
    for (PetscInt i = s->xs; i < s->xs + s->xm; i++) snap[j * s->nlon + i] = x[j][i];
  PetscCall(DMDAVecRestoreArrayRead(s->da, s->T, &x));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, snap, (PetscMPIInt)n, MPIU_REAL, MPIU_SUM, comm)); /* each entry has one owner: exact */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Import(Sst *s, const PetscReal *snap)
{
  PetscScalar **x;

  PetscFunctionBegin;
  PetscCall(DMDAVecGetArray(s->da, s->T, &x));
  for (PetscInt j = s->ys; j < s->ys + s->ym; j++)
    for (PetscInt i = s->xs; i < s->xs + s->xm; i++) x[j][i] = s->ocean[(j - s->ys) * s->xm + (i - s->xs)] ? snap[j * s->nlon + i] : 0;
  PetscCall(DMDAVecRestoreArray(s->da, s->T, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* RK3 steps from *t to target: the interval's share of nsub equal steps per snapshot spacing */
static PetscErrorCode StepTo(SgSolver sv, PetscReal *t, PetscReal target, PetscBool forcing_only)
{
  Sst     *s = (Sst *)sv->data;
  PetscInt n = (PetscInt)PetscCeilReal((target - *t) / s->adv->dt * s->adv->nsub - 1e-9);
  PetscReal h;

  PetscFunctionBegin;
  n = PetscMax(n, 1);
  h = (target - *t) / n;
  for (PetscInt k = 0; k < n; k++) {
    if (forcing_only) PetscCall(SgSstForcingAdvance(s, h)); /* the weather goes on while the surrogate serves */
    else PetscCall(SgSstStep(sv, *t + k * h, h));
  }
  *t = target;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AdvanceBySolver(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  SgSolver  sv = (SgSolver)ctx;
  Sst      *s  = (Sst *)sv->data;
  PetscReal t  = in->history->coord[0][in->history->n[0] - 1];
  PetscInt  n  = s->nlon * s->nlat;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < in->nnext; k++) {
    PetscCall(StepTo(sv, &t, in->tnext[k], PETSC_FALSE));
    PetscCall(Export(s, PetscObjectComm((PetscObject)sv), out->v + k * n));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Push(SstAdvance *A, PetscInt n, PetscReal t, const PetscReal *snap)
{
  PetscFunctionBegin;
  if (A->nh == A->H) { /* drop the oldest */
    if (A->H > 1) PetscCall(PetscArraymove(A->hval, A->hval + n, (A->H - 1) * n));
    if (A->H > 1) PetscCall(PetscArraymove(A->htime, A->htime + 1, A->H - 1));
    A->nh--;
  }
  PetscCall(PetscArraycpy(A->hval + A->nh * n, snap, n));
  A->htime[A->nh++] = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceSetUp(SgSolver sv)
{
  Sst        *s    = (Sst *)sv->data;
  SstAdvance *A    = s->adv;
  MPI_Comm    comm = PetscObjectComm((PetscObject)sv);
  PetscInt    n    = s->nlon * s->nlat;
  PetscReal   stable;

  PetscFunctionBegin;
  PetscCall(SgSlotCreate("field.advance", &A->slot));
  PetscCall(SgSlotSetFieldAdvanceProvider(A->slot, "sst", AdvanceBySolver, sv));
  if (A->sur.fn) PetscCall(SgSlotSetFieldAdvanceSurrogate(A->slot, A->sur.name, A->sur.fn, A->sur.uncertainty, A->sur.ctx));
  PetscCall(SgSlotSetFromOptions(A->slot, comm, "sst_advance_")); /* -sst_advance_swap_policy, ... */
  PetscCall(SgSolverDeclareSlot(sv, A->slot));
  if (A->dt <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgSstStableStep(sv, &stable));
  A->nsub = (PetscInt)PetscCeilReal(A->dt / stable - 1e-9);
  PetscCall(PetscCalloc5(A->H, &A->htime, A->H * n, &A->hval, s->nlat, &A->lat, s->nlon, &A->lon, n, &A->snap));
  PetscCall(PetscMalloc2(A->K * n, &A->out, A->K + 1, &A->tn));
  for (PetscInt j = 0; j < s->nlat; j++) A->lat[j] = -90 + (j + 0.5) * 180.0 / s->nlat;
  for (PetscInt i = 0; i < s->nlon; i++) A->lon[i] = (i + 0.5) * 360.0 / s->nlon;
  PetscCall(Export(s, comm, A->snap));
  PetscCall(Push(A, n, 0, A->snap));
  A->t = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgSstAdvanceOn(const Sst *s) { return s->adv && s->adv->dt > 0 ? PETSC_TRUE : PETSC_FALSE; }
PetscReal SgSstAdvanceSegment(const Sst *s) { return s->adv->K * s->adv->dt; }

/* one driver step: one slot call from t to t + dt */
PetscErrorCode SgSstAdvanceStep(SgSolver sv, PetscReal t, PetscReal dt)
{
  Sst                 *s    = (Sst *)sv->data;
  SstAdvance          *A    = s->adv;
  MPI_Comm             comm = PetscObjectComm((PetscObject)sv);
  const PetscReal      te   = t + dt;
  const PetscInt       n    = s->nlon * s->nlat;
  PetscInt             nt   = 0;
  PetscBool            sur;
  char                 why[128] = "";
  SgFieldBlock         hist;
  SgFieldAdvanceInput  in;
  SgFieldAdvanceOutput out = {A->out};

  PetscFunctionBegin;
  for (PetscInt k = 1; k <= A->K; k++) {
    const PetscReal tk = t + k * A->dt;
    if (tk >= te - 1e-9 * A->dt) {
      A->tn[nt++] = te;
      break;
    }
    A->tn[nt++] = tk;
  }
  hist = (SgFieldBlock){1, Channels, {A->nh, s->nlat, s->nlon}, {A->htime, A->lat, A->lon}, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, A->hval};
  in   = (SgFieldAdvanceInput){&hist, nt, A->tn};
  if (A->sur.fn) {
    if (t < A->warmup) PetscCall(PetscSNPrintf(why, sizeof why, "warm-up until t = %g", (double)A->warmup));
    else if (A->nh < A->sur.history) PetscCall(PetscSNPrintf(why, sizeof why, "a history of %" PetscInt_FMT " of the %" PetscInt_FMT " snapshots %s needs", A->nh, A->sur.history, A->surname));
    else if (PetscAbsReal(A->tn[nt - 1] - t - nt * A->dt) > 1e-9 * A->dt) PetscCall(PetscSNPrintf(why, sizeof why, "a shortened last segment"));
    else if (A->resync && A->nsur >= A->resync) PetscCall(PetscSNPrintf(why, sizeof why, "re-synchronisation after %" PetscInt_FMT " snapshots of %s", A->nsur, A->surname));
    PetscCall(SgSlotSetSurrogateAvailable(A->slot, why[0] ? PETSC_FALSE : PETSC_TRUE, why));
  }
  PetscCall(SgSlotSetStep(A->slot, (PetscInt)PetscFloorReal(t / (A->K * A->dt) + 0.5)));
  PetscCall(SgSlotFieldAdvance(A->slot, &in, &out));
  PetscCall(SgSlotGetLastCall(A->slot, &sur, NULL, NULL));
  A->nsur = sur ? A->nsur + nt : 0;
  if (sur) { /* T from the surrogate's last snapshot; the forcing as the solver would have had it */
    PetscReal tt = t, heat, mean;
    for (PetscInt k = 0; k < nt; k++) PetscCall(StepTo(sv, &tt, A->tn[k], PETSC_TRUE));
    PetscCall(Import(s, A->out + (nt - 1) * n));
    PetscCall(SgSstHeat(s, s->T, comm, &heat, &mean, NULL));
    s->heat0 = heat - s->sources; /* the budget restarts here */
    s->last_t = te;
  }
  for (PetscInt k = 0; k < nt; k++) PetscCall(Push(A, n, A->tn[k], A->out + k * n));
  A->t = te;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceCheckpoint(SgSolver sv, SgCheckpoint chk)
{
  Sst        *s = (Sst *)sv->data;
  SstAdvance *A = s->adv;
  PetscReal   sc[3], st[SG_SLOT_NSTATE];
  PetscBool   reading;

  PetscFunctionBegin;
  if (!SgSstAdvanceOn(s)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgCheckpointIsReading(chk, &reading));
  PetscCall(SgCheckpointLayoutReal(chk, "sst_advance_dt", A->dt));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_advance_history", A->H));
  sc[0] = A->nh, sc[1] = A->t, sc[2] = A->nsur;
  if (!reading) PetscCall(SgSlotGetState(A->slot, st));
  PetscCall(SgCheckpointReals(chk, "sst_advance_scalars", 3, sc));
  PetscCall(SgCheckpointReals(chk, "sst_advance_time", A->H, A->htime));
  PetscCall(SgCheckpointReals(chk, "sst_advance_history", A->H * s->nlon * s->nlat, A->hval));
  PetscCall(SgCheckpointReals(chk, "sst_advance_slot", SG_SLOT_NSTATE, st));
  if (reading) {
    A->nh = (PetscInt)sc[0], A->t = sc[1], A->nsur = (PetscInt)sc[2];
    PetscCall(SgSlotSetState(A->slot, st));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceReport(SgSolver sv, SgOutput out)
{
  Sst        *s = (Sst *)sv->data;
  SstAdvance *A = s->adv;
  PetscInt    ns, nu, nsw, nrej;
  PetscReal   v[5];

  PetscFunctionBegin;
  if (!SgSstAdvanceOn(s)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgSlotGetCounts(A->slot, &ns, &nu, &nsw, &nrej));
  v[0] = ns, v[1] = nu, v[2] = nsw, v[3] = nrej, v[4] = ns + nu ? (PetscReal)nu / (ns + nu) : 0;
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)sv), "sst advance: the solver served %" PetscInt_FMT " calls, %s %" PetscInt_FMT " (fraction %.4f); %" PetscInt_FMT " switches, %" PetscInt_FMT " surrogate answers rejected\n", ns, A->surname[0] ? A->surname : "(no surrogate)", nu, (double)v[4], nsw, nrej));
  PetscCall(SgOutputWriteReport(out, "advance_counts", "solver calls, surrogate calls, switches, rejected, surrogate fraction", 5, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceDestroy(Sst *s)
{
  SstAdvance *A = s->adv;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  if (A->htime) {
    PetscCall(PetscFree5(A->htime, A->hval, A->lat, A->lon, A->snap));
    PetscCall(PetscFree2(A->out, A->tn));
  }
  PetscCall(PetscFree(s->adv)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}
