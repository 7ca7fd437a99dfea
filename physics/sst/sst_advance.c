/* The sst solver's field.advance slot (sgfield.h): a history of H weekly (say) snapshots of T -> the
   next K snapshots, served by the solver or by a surrogate (POD-LSTM) as the slot's swap policy says.
   The options, the history, the warm-up, the re-synchronisation every M snapshots and the checkpoint
   are the shared SgAdvanceLoop's (io/slot, sgslotio.h); this file supplies the solver's provider and
   what happens to T and the forcing when the surrogate serves.

   With sst: {advance: {dt: D}} (D > 0) every driver step is one slot call advancing K =
   advance_snapshots snapshots D apart. The solver's provider integrates: each interval D in the
   fewest equal RK3 steps the stability bound allows (7/17 day for weekly snapshots on the 1-degree
   grid, so a solver-served run equals the plain weekly run bit for bit). When the surrogate serves,
   T continues from its last snapshot (land stays 0) and the stochastic forcing is advanced over the
   same steps the solver would have taken, so the weather and ENSO go on exactly as in a run of the
   solver alone; the heat budget restarts from the imported state (a surrogate conserves nothing).

   Snapshots are T [nlat][nlon] on the solver's grid (cell centres, latitude then longitude, degrees),
   replicated on every rank. */
#include "sst.h"
#include "sgslotio.h"

static const char *const Channels[1] = {"T"};

struct _n_SstAdvance {
  SgAdvanceLoop loop;
  PetscInt      nsub;                /* RK3 steps per snapshot interval */
  PetscReal    *lat, *lon, *snap, *out;
};

PetscErrorCode SgSstAdvanceSetFromOptions(SgSolver sv, PetscOptionItems *PetscOptionsObject)
{
  Sst                *s = (Sst *)sv->data;
  SgFieldProviderInfo info = {PetscObjectComm((PetscObject)sv), 1, Channels, 0, NULL, NULL, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "sst_", PetscOptionsObject};
  const SgSolverRunInfo *run;

  PetscFunctionBegin;
  if (!s->adv) {
    PetscCall(PetscNew(&s->adv));
    s->adv->loop.K = 8;
    s->adv->loop.H = 8;
  }
  PetscCall(SgSolverGetRunInfo(sv, &run));
  PetscCall(SgAdvanceLoopSetFromOptions(&s->adv->loop, PetscOptionsObject, "sst", "days", &info, run->dt));
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
  Sst      *s = (Sst *)sv->data;
  PetscInt  n = (PetscInt)PetscCeilReal((target - *t) / s->adv->loop.dt * s->adv->nsub - 1e-9);
  PetscReal h;

  PetscFunctionBegin;
  n = PetscMax(n, 1);
  h = (target - *t) / n;
  for (PetscInt k = 0; k < n; k++) {
    if (forcing_only) PetscCall(SgSstForcingAdvance(s, *t + k * h, h)); /* the weather goes on while the surrogate serves */
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

PetscErrorCode SgSstAdvanceSetUp(SgSolver sv)
{
  Sst        *s    = (Sst *)sv->data;
  SstAdvance *A    = s->adv;
  MPI_Comm    comm = PetscObjectComm((PetscObject)sv);
  PetscInt    n    = s->nlon * s->nlat;
  PetscReal   stable;

  PetscFunctionBegin;
  if (A->loop.dt > 0) {
    PetscCall(SgSstStableStep(sv, &stable));
    A->nsub = (PetscInt)PetscCeilReal(A->loop.dt / stable - 1e-9);
    PetscCall(PetscCalloc4(s->nlat, &A->lat, s->nlon, &A->lon, n, &A->snap, A->loop.K * n, &A->out));
    for (PetscInt j = 0; j < s->nlat; j++) A->lat[j] = -90 + (j + 0.5) * 180.0 / s->nlat;
    for (PetscInt i = 0; i < s->nlon; i++) A->lon[i] = (i + 0.5) * 360.0 / s->nlon;
    PetscCall(Export(s, comm, A->snap));
    { /* the grid of the blocks to come: a surrogate checks it now, not at its first call */
      const SgFieldBlock grid = {1, Channels, {0, s->nlat, s->nlon}, {NULL, A->lat, A->lon}, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, NULL};
      PetscCall(SgAdvanceLoopSetGrid(&A->loop, &grid));
    }
  }
  PetscCall(SgAdvanceLoopSetUp(&A->loop, comm, "sst", "sst_", AdvanceBySolver, sv, n, A->snap));
  PetscCall(SgSolverDeclareSlot(sv, A->loop.slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgSstAdvanceOn(const Sst *s) { return s->adv ? SgAdvanceLoopOn(&s->adv->loop) : PETSC_FALSE; }
PetscReal SgSstAdvanceSegment(const Sst *s) { return SgAdvanceLoopSegment(&s->adv->loop); }

/* one driver step: one slot call from t to t + dt */
PetscErrorCode SgSstAdvanceStep(SgSolver sv, PetscReal t, PetscReal dt)
{
  Sst                 *s    = (Sst *)sv->data;
  SstAdvance          *A    = s->adv;
  SgAdvanceLoop       *L    = &A->loop;
  MPI_Comm             comm = PetscObjectComm((PetscObject)sv);
  const PetscInt       n    = s->nlon * s->nlat;
  PetscBool            sur;
  SgFieldBlock         hist;
  SgFieldAdvanceInput  in;
  SgFieldAdvanceOutput out = {A->out};

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopBegin(L, t, dt));
  hist = (SgFieldBlock){1, Channels, {L->nh, s->nlat, s->nlon}, {L->htime, A->lat, A->lon}, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, L->hval};
  in   = (SgFieldAdvanceInput){&hist, L->nt, L->tn};
  PetscCall(SgSlotSetStep(L->slot, (PetscInt)PetscFloorReal(t / (L->K * L->dt) + 0.5)));
  PetscCall(SgSlotFieldAdvance(L->slot, &in, &out));
  PetscCall(SgAdvanceLoopEnd(L, &sur));
  if (sur) { /* T from the surrogate's last snapshot; the forcing as the solver would have had it */
    PetscReal tt = t, heat, mean;
    for (PetscInt k = 0; k < L->nt; k++) PetscCall(StepTo(sv, &tt, L->tn[k], PETSC_TRUE));
    PetscCall(Import(s, A->out + (L->nt - 1) * n));
    PetscCall(SgSstHeat(s, s->T, comm, &heat, &mean, NULL));
    s->heat0  = heat - s->sources; /* the budget restarts here */
    s->last_t = t + dt;
  }
  for (PetscInt k = 0; k < L->nt; k++) PetscCall(SgAdvanceLoopPush(L, L->tn[k], A->out + k * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceCheckpoint(SgSolver sv, SgCheckpoint chk)
{
  Sst *s = (Sst *)sv->data;

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopCheckpoint(&s->adv->loop, chk, "sst_"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceReport(SgSolver sv, SgOutput out)
{
  Sst *s = (Sst *)sv->data;

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopReport(&s->adv->loop, PetscObjectComm((PetscObject)sv), "sst", out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstAdvanceDestroy(Sst *s)
{
  SstAdvance *A = s->adv;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgAdvanceLoopDestroy(&A->loop));
  PetscCall(PetscFree4(A->lat, A->lon, A->snap, A->out));
  PetscCall(PetscFree(s->adv)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}
