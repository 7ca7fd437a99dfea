/* Swap policies of an md.forces slot, with two synthetic providers whose answers are known:
   solver F = -x, surrogate F = -1.5 x, and a scripted uncertainty per call (and per rank).
   Checks who serves each call, the flags, switch and rejection counts, and that the decision is
   global across ranks. Exact comparisons: the providers are simple products, no round-off. */
#include "sgslot.h"

typedef struct {
  const PetscReal *dev; /* uncertainty for call k (this rank) */
  PetscInt         k, nan_at, ghost_nan_at, nunc; /* nunc: uncertainty evaluations */
} Ctx;

static PetscErrorCode Solver(void *ctx, const SgForcesInput *in, SgForcesOutput *out)
{
  (void)ctx;
  for (PetscInt i = 0; i < 3 * (in->n + in->nghost); i++) out->f[i] = -in->x[i];
  out->energy = 1;
  return PETSC_SUCCESS;
}

static PetscErrorCode Surrogate(void *ctx, const SgForcesInput *in, SgForcesOutput *out)
{
  Ctx *c = (Ctx *)ctx;
  for (PetscInt i = 0; i < 3 * (in->n + in->nghost); i++) out->f[i] = -1.5 * in->x[i];
  if (c->k == c->nan_at) out->f[0] = NAN;
  if (c->k == c->ghost_nan_at) out->f[3 * in->n] = NAN; /* garbage on a ghost reaches its owner by reverse communication */
  out->energy = 2;
  return PETSC_SUCCESS;
}

static PetscErrorCode Uncertainty(void *ctx, const SgForcesInput *in, PetscReal *dev)
{
  Ctx *c = (Ctx *)ctx;
  (void)in;
  *dev = c->dev[c->k];
  c->nunc++;
  return PETSC_SUCCESS;
}

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_PLIB, __VA_ARGS__); \
  } while (0)

/* Run ncalls calls; served[k] receives 1 if the surrogate served call k. */
static PetscErrorCode Drive(SgSlot slot, Ctx *c, PetscInt ncalls, PetscInt served[], PetscInt flagged[])
{
  PetscReal      x[9] = {1, 2, 3, -1, -2, -3, 0.5, 0.5, 0.5}, f[9];
  PetscInt       type[3] = {0, 0, 0};
  SgForcesInput  in = {.n = 2, .nghost = 1, .x = x, .type = type};
  SgForcesOutput out = {.f = f};

  PetscFunctionBegin;
  for (PetscInt k = 0; k < ncalls; k++) {
    PetscBool s, fl;
    c->k = k;
    PetscCall(SgSlotSetStep(slot, k));
    PetscCall(SgSlotComputeForces(slot, &in, &out));
    PetscCall(SgSlotGetLastCall(slot, &s, &fl, NULL));
    served[k]  = s;
    flagged[k] = fl;
    /* the forces must be exactly the serving provider's */
    for (PetscInt i = 0; i < 9; i++) CHECK(f[i] == (s ? -1.5 : -1.0) * x[i], "call %" PetscInt_FMT ": force %g is not the %s's", k, (double)f[i], s ? "surrogate" : "solver");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank;
  SgSlot      slot;
  PetscInt    served[8], flagged[8], ns, nsur, nsw, nrej;
  /* rank 0's and rank 1's uncertainties: they differ at call 4, where only rank 1 is unsure */
  const PetscReal dev0[8] = {0.01, 0.10, 0.30, 0.01, 0.01, 0.01, 0.01, 0.01};
  const PetscReal dev1[8] = {0.01, 0.10, 0.30, 0.01, 0.40, 0.01, 0.01, 0.01};
  Ctx         c = {.nan_at = -1, .ghost_nan_at = -1};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  c.dev = rank ? dev1 : dev0;

  /* schedule: the solver until step 3 */
  PetscCall(SgSlotCreate("md.forces", &slot));
  PetscCall(SgSlotSetForcesProvider(slot, "ref", Solver, &c));
  PetscCall(SgSlotSetForcesSurrogate(slot, "sur", Surrogate, Uncertainty, &c));
  PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "sched_"));
  PetscCall(SgSlotSetPolicy(slot, SG_SWAP_SCHEDULE, PETSC_FALSE, 3, 0, 0, 1e3));
  PetscCall(Drive(slot, &c, 6, served, flagged));
  for (PetscInt k = 0; k < 6; k++) CHECK(served[k] == (k >= 3), "schedule: call %" PetscInt_FMT " served by the wrong provider", k);
  PetscCall(SgSlotGetCounts(slot, &ns, &nsur, &nsw, &nrej));
  CHECK(ns == 3 && nsur == 3 && nsw == 1 && nrej == 0, "schedule counts %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT, ns, nsur, nsw, nrej);
  PetscCall(SgSlotDestroy(&slot));

  /* adaptive, trust band [0.05, 0.15]: sure -> surrogate; band -> surrogate flagged; unsure ->
     solver flagged; call 4 is unsure on rank 1 only, so every rank must use the solver */
  PetscCall(SgSlotCreate("md.forces", &slot));
  PetscCall(SgSlotSetForcesProvider(slot, "ref", Solver, &c));
  PetscCall(SgSlotSetForcesSurrogate(slot, "sur", Surrogate, Uncertainty, &c));
  PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "adapt_"));
  PetscCall(SgSlotSetPolicy(slot, SG_SWAP_ADAPTIVE, PETSC_FALSE, 0, 0.05, 0.15, 1e3));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    const PetscInt want1[8] = {1, 1, 0, 1, 0, 1, 1, 1}, want_single[8] = {1, 1, 0, 1, 1, 1, 1, 1};
    const PetscInt flag1[8] = {0, 1, 1, 0, 1, 0, 0, 0}, flag_single[8] = {0, 1, 1, 0, 0, 0, 0, 0};
    const PetscInt *want = size > 1 ? want1 : want_single, *flag = size > 1 ? flag1 : flag_single;
    c.nan_at       = 6; /* the surrogate answers NaN at call 6: rejected, the solver serves */
    c.ghost_nan_at = 7; /* ... and at call 7 only on a ghost atom: rejected too */
    PetscCall(Drive(slot, &c, 8, served, flagged));
    for (PetscInt k = 0; k < 8; k++) {
      PetscInt w = k >= 6 ? 0 : want[k], fl = k >= 6 ? 1 : flag[k];
      CHECK(served[k] == w, "adaptive: call %" PetscInt_FMT " served by %s, expected %s", k, served[k] ? "surrogate" : "solver", w ? "surrogate" : "solver");
      CHECK(flagged[k] == fl, "adaptive: call %" PetscInt_FMT " flag %" PetscInt_FMT ", expected %" PetscInt_FMT, k, flagged[k], fl);
    }
    PetscCall(SgSlotGetCounts(slot, &ns, &nsur, &nsw, &nrej));
    CHECK(nrej == 2, "two rejected surrogate answers expected, got %" PetscInt_FMT, nrej);
    CHECK(nsw == (size > 1 ? 5 : 3), "switch count %" PetscInt_FMT, nsw);
  }
  PetscCall(SgSlotDestroy(&slot));

  /* adaptive with swap_check_every 3: the uncertainty is evaluated at steps 0, 3, 6 only; the steps in
     between keep that check's provider, unflagged (rank 1's unsure call 4 is not a check step) */
  PetscCall(SgSlotCreate("md.forces", &slot));
  PetscCall(SgSlotSetForcesProvider(slot, "ref", Solver, &c));
  PetscCall(SgSlotSetForcesSurrogate(slot, "sur", Surrogate, Uncertainty, &c));
  PetscCall(PetscOptionsSetValue(NULL, "-every_swap_policy", "adaptive"));
  PetscCall(PetscOptionsSetValue(NULL, "-every_swap_trust_lo", "0.05"));
  PetscCall(PetscOptionsSetValue(NULL, "-every_swap_trust_hi", "0.15"));
  PetscCall(PetscOptionsSetValue(NULL, "-every_swap_check_every", "3"));
  PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "every_"));
  {
    /* deviations per step: 0.01 (check: surrogate), 0.10, 0.30, 0.01 (check: surrogate), ..., and the
       check at step 6 sees 0.30 -> solver for 6, 7 */
    const PetscReal devc[8] = {0.01, 0.30, 0.30, 0.01, 0.40, 0.01, 0.30, 0.01};
    const PetscInt  want[8] = {1, 1, 1, 1, 1, 1, 0, 0}, flag[8] = {0, 0, 0, 0, 0, 0, 1, 0};
    c.dev = devc;
    c.nan_at = -1;
    c.ghost_nan_at = -1;
    c.nunc = 0;
    PetscCall(Drive(slot, &c, 8, served, flagged));
    for (PetscInt k = 0; k < 8; k++) {
      CHECK(served[k] == want[k], "check_every: call %" PetscInt_FMT " served by %s", k, served[k] ? "surrogate" : "solver");
      CHECK(flagged[k] == flag[k], "check_every: call %" PetscInt_FMT " flag %" PetscInt_FMT ", expected %" PetscInt_FMT, k, flagged[k], flag[k]);
    }
    CHECK(c.nunc == 3, "check_every 3 over 8 calls: %" PetscInt_FMT " uncertainty evaluations, expected 3", c.nunc);
    c.dev = rank ? dev1 : dev0;
  }
  PetscCall(SgSlotDestroy(&slot));

  /* adaptive without an uncertainty estimate is refused */
  PetscCall(SgSlotCreate("md.forces", &slot));
  PetscCall(SgSlotSetForcesProvider(slot, "ref", Solver, &c));
  PetscCall(SgSlotSetForcesSurrogate(slot, "sur", Surrogate, NULL, &c));
  PetscCall(PetscOptionsSetValue(NULL, "-bad_swap_policy", "adaptive"));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  {
    PetscErrorCode ierr = SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "bad_");
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_USER_INPUT, "adaptive policy without uncertainty must be refused (got %d)", (int)ierr);
  }
  PetscCall(SgSlotDestroy(&slot));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "slot policies: schedule, adaptive (global decision), rejection, check_every, refusal: ok\n"));
  PetscCall(PetscFinalize());
  return 0;
}
