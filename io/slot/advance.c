/* SgAdvanceLoop (sgslotio.h): the solver's side of the field.advance slot -- options, the history of
   snapshots, when the surrogate is held back (warm-up, history, spacing, re-synchronisation every M
   snapshots), and the checkpoint of it all. One piece of code for every solver that offers the slot. */
#include "sgslotio.h"
#include "sgsys.h"

PetscErrorCode SgAdvanceLoopSetFromOptions(SgAdvanceLoop *A, PetscOptionItems *PetscOptionsObject, const char solver[], const char units[], const SgFieldProviderInfo *info, PetscReal sim_dt)
{
  MPI_Comm  comm = info->comm;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(SgOptionsReal("-advance_dt", "field.advance slot: snapshot spacing; > 0 puts the slot in the loop (each driver step is one call of advance_snapshots snapshots)", units, A->dt, &A->dt, NULL, 0, 1e6));
  PetscCall(SgOptionsInt("-advance_snapshots", "field.advance: snapshots K per slot call (the driver's step is K advance_dt)", A->K, &A->K, NULL, 1, 4096));
  PetscCall(SgOptionsInt("-advance_history", "field.advance: snapshots of history handed to the provider (at least what the surrogate needs)", A->H, &A->H, NULL, 1, 4096));
  PetscCall(SgOptionsReal("-advance_warmup", "field.advance: the solver serves every call that starts before this time", units, A->warmup, &A->warmup, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-advance_resync_every", "field.advance: after this many snapshots of the surrogate in a row the solver serves the next call (re-synchronisation; 0: never)", A->resync, &A->resync, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsString("-advance_surrogate", "field.advance: surrogate type that may serve the slot (policy: advance_swap_policy)", A->surname, A->surname, sizeof A->surname, &set));
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  if (A->surname[0]) {
    PetscCheck(A->dt > 0, comm, PETSC_ERR_USER_INPUT, "%s advance surrogate %s needs the slot in the loop: set %s: {advance: {dt: D}} (the snapshot spacing, %s)", solver, A->surname, solver, units);
    PetscCall(SgFieldAdvanceProviderCreate(A->surname, info, &A->sur));
    PetscCheck(!A->sur.dt || PetscAbsReal(A->sur.dt - A->dt) <= 1e-9 * A->dt, comm, PETSC_ERR_USER_INPUT, "%s advance dt %g: surrogate %s was made for snapshots %g apart; set advance: {dt: %g}", solver, (double)A->dt, A->surname, (double)A->sur.dt, (double)A->sur.dt);
    PetscCheck(!A->sur.nnext || A->K <= A->sur.nnext, comm, PETSC_ERR_USER_INPUT, "%s advance snapshots %" PetscInt_FMT ": surrogate %s answers at most %" PetscInt_FMT " per call", solver, A->K, A->surname, A->sur.nnext);
    A->H = PetscMax(A->H, A->sur.history);
  }
  if (A->dt > 0) {
    PetscCheck(sim_dt == 0, comm, PETSC_ERR_USER_INPUT, "%s advance dt %g puts the field.advance slot in the loop: the driver's step is advance_snapshots x advance_dt, so sim dt (%g) cannot be set", solver, (double)A->dt, (double)sim_dt);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopPush(SgAdvanceLoop *A, PetscReal t, const PetscReal snap[])
{
  PetscFunctionBegin;
  if (A->nh == A->H) { /* drop the oldest */
    if (A->H > 1) PetscCall(PetscArraymove(A->hval, A->hval + A->size, (A->H - 1) * A->size));
    if (A->H > 1) PetscCall(PetscArraymove(A->htime, A->htime + 1, A->H - 1));
    A->nh--;
  }
  PetscCall(PetscArraycpy(A->hval + A->nh * A->size, snap, A->size));
  A->htime[A->nh++] = t;
  A->t              = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopSetGrid(SgAdvanceLoop *A, const SgFieldBlock *grid)
{
  PetscFunctionBegin;
  if (A->sur.fn && A->sur.grid) PetscCall(A->sur.grid(A->sur.ctx, grid));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopSetUp(SgAdvanceLoop *A, MPI_Comm comm, const char solver[], const char prefix[], SgFieldAdvanceFn fn, void *ctx, PetscInt size, const PetscReal snap0[])
{
  char pre[128];

  PetscFunctionBegin;
  PetscCall(SgSlotCreate("field.advance", &A->slot));
  PetscCall(SgSlotSetFieldAdvanceProvider(A->slot, solver, fn, ctx));
  if (A->sur.fn) PetscCall(SgSlotSetFieldAdvanceSurrogate(A->slot, A->sur.name, A->sur.fn, A->sur.uncertainty, A->sur.ctx));
  PetscCall(PetscSNPrintf(pre, sizeof pre, "%sadvance_", prefix)); /* PREFIXadvance_swap_*: read always, so a swap option without a surrogate is refused */
  PetscCall(SgSlotSetFromOptions(A->slot, comm, pre));
  if (A->dt <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  A->size = size;
  PetscCall(PetscCalloc3(A->H, &A->htime, A->H * size, &A->hval, A->K, &A->tn));
  A->nh = 0;
  A->nsur = 0;
  PetscCall(SgAdvanceLoopPush(A, 0, snap0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgAdvanceLoopOn(const SgAdvanceLoop *A) { return A && A->dt > 0 ? PETSC_TRUE : PETSC_FALSE; }
PetscReal SgAdvanceLoopSegment(const SgAdvanceLoop *A) { return A->K * A->dt; }

PetscErrorCode SgAdvanceLoopBegin(SgAdvanceLoop *A, PetscReal t, PetscReal dt)
{
  const PetscReal te = t + dt;
  char            why[160] = "";

  PetscFunctionBegin;
  PetscCheck(PetscAbsReal(t - A->t) <= 1e-9 * PetscMax(1, PetscAbsReal(t)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "field.advance: the driver is at t = %.17g, the newest snapshot at %.17g", (double)t, (double)A->t);
  A->nt = 0;
  for (PetscInt k = 1; k <= A->K; k++) { /* K snapshots dt apart, the last at te */
    const PetscReal tk = t + k * A->dt;
    if (tk >= te - 1e-9 * A->dt) {
      A->tn[A->nt++] = te;
      break;
    }
    A->tn[A->nt++] = tk;
  }
  if (!A->sur.fn) PetscFunctionReturn(PETSC_SUCCESS);
  if (t < A->warmup) PetscCall(PetscSNPrintf(why, sizeof why, "warm-up until t = %g", (double)A->warmup));
  else if (A->nh < A->sur.history) PetscCall(PetscSNPrintf(why, sizeof why, "a history of %" PetscInt_FMT " of the %" PetscInt_FMT " snapshots %s needs", A->nh, A->sur.history, A->surname));
  else if (PetscAbsReal(A->tn[A->nt - 1] - t - A->nt * A->dt) > 1e-9 * A->dt) PetscCall(PetscSNPrintf(why, sizeof why, "a shortened last segment (snapshots %g apart, %s was made for %g)", (double)(A->tn[A->nt - 1] - (A->nt > 1 ? A->tn[A->nt - 2] : t)), A->surname, (double)A->dt));
  else if (A->resync && A->nsur >= A->resync) PetscCall(PetscSNPrintf(why, sizeof why, "re-synchronisation after %" PetscInt_FMT " snapshots of %s", A->nsur, A->surname));
  PetscCall(SgSlotSetSurrogateAvailable(A->slot, why[0] ? PETSC_FALSE : PETSC_TRUE, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopEnd(SgAdvanceLoop *A, PetscBool *sur)
{
  PetscFunctionBegin;
  PetscCall(SgSlotGetLastCall(A->slot, sur, NULL, NULL));
  A->nsur = *sur ? A->nsur + A->nt : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopCheckpoint(SgAdvanceLoop *A, SgCheckpoint chk, const char prefix[])
{
  PetscReal sc[3], st[SG_SLOT_NSTATE];
  PetscBool reading;
  char      name[128];

  PetscFunctionBegin;
  if (!SgAdvanceLoopOn(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgCheckpointIsReading(chk, &reading));
  PetscCall(PetscSNPrintf(name, sizeof name, "%sadvance_dt", prefix));
  PetscCall(SgCheckpointLayoutReal(chk, name, A->dt));
  PetscCall(PetscSNPrintf(name, sizeof name, "%sadvance_history", prefix));
  PetscCall(SgCheckpointLayoutInt(chk, name, A->H));
  PetscCall(SgCheckpointReals(chk, name, A->H * A->size, A->hval));
  sc[0] = A->nh;
  sc[1] = A->t;
  sc[2] = A->nsur;
  if (!reading) PetscCall(SgSlotGetState(A->slot, st));
  PetscCall(PetscSNPrintf(name, sizeof name, "%sadvance_scalars", prefix));
  PetscCall(SgCheckpointReals(chk, name, 3, sc));
  PetscCall(PetscSNPrintf(name, sizeof name, "%sadvance_time", prefix));
  PetscCall(SgCheckpointReals(chk, name, A->H, A->htime));
  PetscCall(PetscSNPrintf(name, sizeof name, "%sadvance_slot", prefix));
  PetscCall(SgCheckpointReals(chk, name, SG_SLOT_NSTATE, st));
  if (reading) {
    A->nh = (PetscInt)sc[0];
    A->t = sc[1];
    A->nsur = (PetscInt)sc[2];
    PetscCall(SgSlotSetState(A->slot, st));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopReport(SgAdvanceLoop *A, MPI_Comm comm, const char solver[], SgOutput out)
{
  PetscFunctionBegin;
  if (SgAdvanceLoopOn(A)) PetscCall(SgSlotReport(comm, A->slot, "advance", solver, A->surname, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAdvanceLoopDestroy(SgAdvanceLoop *A)
{
  PetscFunctionBegin;
  PetscCall(SgFieldAdvanceProviderDestroy(&A->sur));
  PetscCall(PetscFree3(A->htime, A->hval, A->tn));
  PetscFunctionReturn(PETSC_SUCCESS);
}
