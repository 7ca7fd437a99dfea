/* The ks solver's field.advance slot (sgfield.h): a history of H snapshots of u -> the next K, served by
   the solver or by a surrogate (POD-LSTM) as the slot's swap policy says. The options, the history,
   the warm-up, the re-synchronisation every M snapshots and the checkpoint are the shared
   SgAdvanceLoop's (io/slot, sgslotio.h); this file supplies the solver's provider, the snapshot layout
   and what happens to the state when the surrogate serves.

   With ks: {advance: {dt: D}} (D > 0) every driver step is one slot call advancing K =
   advance_snapshots snapshots D apart. The solver's provider takes each interval D in the fewest
   equal ETDRK4 steps no longer than ks dt (D a multiple of dt: exactly the steps of a plain run, so a
   solver-served run equals it bit for bit). When the surrogate serves, the spectral state is the
   transform of its last snapshot (the Lyapunov pair keeps its offset from the state: no growth is
   counted over a surrogate's call).

   A snapshot is u at x_j = j L / N (N values), replicated on every rank, as the block (t, z, x) with one
   z point; the x cells are centred on the x_j (lo = -L / 2N, hi = L - L / 2N, periodic), the cells the
   run's field output names, so a model trained on the written fields is on the same grid. */
#include "ks.h"
#include "sgslotio.h"

static const char *const Channels[1]   = {"u"};
static const char *const ParamNames[1] = {"length"};

struct _n_KsAdvance {
  SgAdvanceLoop loop;
  PetscReal     par[1], zc[1];
  PetscReal    *xc, *snap, *out;
};

static void Domain(const Ks *k, PetscReal lo[3], PetscReal hi[3])
{
  lo[0] = 0;
  hi[0] = 0;
  lo[1] = 0;
  hi[1] = 1;
  lo[2] = -0.5 * k->L / k->N;
  hi[2] = k->L + lo[2];
}

PetscErrorCode KsAdvanceSetFromOptions(SgSolver sv, PetscOptionItems *PetscOptionsObject)
{
  Ks                    *k = (Ks *)sv->data;
  SgFieldProviderInfo    info;
  const SgSolverRunInfo *run;

  PetscFunctionBegin;
  if (!k->adv) {
    PetscCall(PetscNew(&k->adv));
    k->adv->loop.K = 8;
    k->adv->loop.H = 8;
  }
  k->adv->par[0] = k->L;
  PetscCall(PetscMemzero(&info, sizeof info));
  info.comm               = PetscObjectComm((PetscObject)sv);
  info.nch                = 1;
  info.channel            = Channels;
  info.nparam             = 1;
  info.param_name         = ParamNames;
  info.param              = k->adv->par;
  info.periodic[2]        = PETSC_TRUE;
  info.prefix             = "ks_";
  info.PetscOptionsObject = PetscOptionsObject;
  Domain(k, info.lo, info.hi);
  PetscCall(SgSolverGetRunInfo(sv, &run));
  PetscCall(SgAdvanceLoopSetFromOptions(&k->adv->loop, PetscOptionsObject, "ks", "time units", &info, run->dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Export(Ks *k, PetscReal *snap)
{
  PetscFunctionBegin;
  PetscCall(KsEtdToPhysical(k->etd, k->v, snap));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the state from a snapshot; the Lyapunov pair moved with it */
static PetscErrorCode Import(Ks *k, const PetscReal *snap)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < k->N; j++) k->etd->x[j] = snap[j];
  fftw_execute(k->etd->fwd);
  for (PetscInt m = 0; m < k->N / 2 + 1; m++) {
    k->w[m] = k->etd->tk[m] + (k->w[m] - k->v[m]);
    k->v[m] = k->etd->tk[m];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ETDRK4 steps from *t to target: the fewest equal steps no longer than ks dt */
static PetscErrorCode StepTo(SgSolver sv, PetscReal *t, PetscReal target)
{
  Ks       *k = (Ks *)sv->data;
  PetscInt  n = PetscMax((PetscInt)PetscCeilReal((target - *t) / k->dt - 1e-9), 1);
  PetscReal h = (target - *t) / n;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCall(KsStepOnce(sv, *t + i * h, h));
  *t = target;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AdvanceBySolver(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  SgSolver  sv = (SgSolver)ctx;
  Ks       *k  = (Ks *)sv->data;
  PetscReal t  = in->history->coord[0][in->history->n[0] - 1];

  PetscFunctionBegin;
  PetscCheck(in->history->n[1] == 1 && in->history->n[2] == k->N, PetscObjectComm((PetscObject)sv), PETSC_ERR_ARG_SIZ, "ks advance: a history of %" PetscInt_FMT " x %" PetscInt_FMT " points, not the solver's 1 x %" PetscInt_FMT, in->history->n[1], in->history->n[2], k->N);
  for (PetscInt i = 0; i < in->nnext; i++) {
    PetscCall(StepTo(sv, &t, in->tnext[i]));
    PetscCall(Export(k, out->v + i * k->N));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsAdvanceSetUp(SgSolver sv)
{
  Ks        *k = (Ks *)sv->data;
  KsAdvance *A = k->adv;

  PetscFunctionBegin;
  if (A->loop.dt > 0) {
    PetscCall(PetscCalloc3(k->N, &A->xc, k->N, &A->snap, A->loop.K * k->N, &A->out));
    for (PetscInt j = 0; j < k->N; j++) A->xc[j] = j * k->L / k->N;
    A->zc[0] = 0.5;
    PetscCall(Export(k, A->snap));
    { /* the grid of the blocks to come: a surrogate checks it now (SgAdvanceLoopSetGrid), not at its
         first call mid-run (as boussinesq and sst do) */
      SgFieldBlock grid = {1, Channels, {0, 1, k->N}, {NULL, A->zc, A->xc}, {0}, {0}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, NULL};
      Domain(k, grid.lo, grid.hi);
      PetscCall(SgAdvanceLoopSetGrid(&A->loop, &grid));
    }
  }
  PetscCall(SgAdvanceLoopSetUp(&A->loop, PetscObjectComm((PetscObject)sv), "ks", "ks_", AdvanceBySolver, sv, k->N, A->snap));
  PetscCall(SgSolverDeclareSlot(sv, A->loop.slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool KsAdvanceOn(const Ks *k) { return k->adv ? SgAdvanceLoopOn(&k->adv->loop) : PETSC_FALSE; }
PetscReal KsAdvanceSegment(const Ks *k) { return SgAdvanceLoopSegment(&k->adv->loop); }

/* one driver step: one slot call from t to t + dt */
PetscErrorCode KsAdvanceStep(SgSolver sv, PetscReal t, PetscReal dt)
{
  Ks                  *k = (Ks *)sv->data;
  KsAdvance           *A = k->adv;
  SgAdvanceLoop       *L = &A->loop;
  PetscBool            sur;
  SgFieldBlock         hist;
  SgFieldAdvanceInput  in;
  SgFieldAdvanceOutput out = {A->out};

  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopBegin(L, t, dt));
  hist = (SgFieldBlock){1, Channels, {L->nh, 1, k->N}, {L->htime, A->zc, A->xc}, {0}, {0}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, L->hval};
  Domain(k, hist.lo, hist.hi);
  in = (SgFieldAdvanceInput){&hist, L->nt, L->tn};
  PetscCall(SgSlotFieldAdvance(L->slot, &in, &out));
  PetscCall(SgAdvanceLoopEnd(L, &sur));
  if (sur) {
    PetscCall(Import(k, A->out + (L->nt - 1) * k->N));
    k->st[3] = t + dt;
  }
  for (PetscInt i = 0; i < L->nt; i++) PetscCall(SgAdvanceLoopPush(L, L->tn[i], A->out + i * k->N));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsAdvanceCheckpoint(SgSolver sv, SgCheckpoint chk)
{
  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopCheckpoint(&((Ks *)sv->data)->adv->loop, chk, "ks_"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsAdvanceReport(SgSolver sv, SgOutput out)
{
  PetscFunctionBegin;
  PetscCall(SgAdvanceLoopReport(&((Ks *)sv->data)->adv->loop, PetscObjectComm((PetscObject)sv), "ks", out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsAdvanceDestroy(Ks *k)
{
  KsAdvance *A = k->adv;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgAdvanceLoopDestroy(&A->loop));
  PetscCall(PetscFree3(A->xc, A->snap, A->out));
  PetscCall(PetscFree(k->adv)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}
