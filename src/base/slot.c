/* SgSlot: a named, typed, swappable operator with a solver provider, an optional surrogate, and a
   swap policy that picks one of them per call (see sgslot.h for the policies). */
#include <string.h>
#include "sgslot.h"

const char *const SgSwapPolicies[] = {"static", "schedule", "adaptive", "SgSwapPolicy", "SG_SWAP_", NULL};

struct _n_SgSlot {
  char        *name;
  MPI_Comm     comm;
  /* the solver's provider (reference) and the surrogate */
  char        *provider, *surrogate;
  void        *ctx, *sctx;
  /* typed functions of each kind (only the slot's own kind is set) */
  SgForcesFn            forces, sforces;
  SgForcesUncertaintyFn sforces_unc;
  /* policy */
  SgSwapPolicy policy;
  PetscBool    use_surrogate;
  PetscInt     switch_step, step;
  PetscBool    step_set;
  PetscReal    trust_lo, trust_hi, max_force;
  PetscInt     check_every; /* adaptive: the uncertainty is evaluated on steps divisible by this */
  PetscInt     decision;    /* adaptive: provider chosen at the last check (-1 none yet, 0 solver, 1 surrogate) */
  /* bookkeeping */
  PetscInt     calls, solver_calls, surrogate_calls, switches, rejected;
  PetscInt     last_served; /* -1 none yet, 0 solver, 1 surrogate */
  PetscBool    last_flagged;
  PetscReal    last_uncertainty;
  PetscBool    last_switched, last_rejected; /* the last call switched providers; its surrogate answer was rejected */
};

static const char *const known_slots[] = {"md.forces", "field.advance", "field.superres", NULL};

PetscErrorCode SgSlotCreate(const char name[], SgSlot *slot)
{
  PetscBool known = PETSC_FALSE;

  PetscFunctionBegin;
  for (const char *const *k = known_slots; *k; k++)
    if (!strcmp(*k, name)) known = PETSC_TRUE;
  PetscCheck(known, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown slot signature '%s' (known: md.forces, field.advance, field.superres)", name);
  PetscCall(PetscNew(slot));
  PetscCall(PetscStrallocpy(name, &(*slot)->name));
  (*slot)->comm             = PETSC_COMM_SELF;
  (*slot)->policy           = SG_SWAP_STATIC;
  (*slot)->max_force        = PETSC_MAX_REAL;
  (*slot)->trust_lo         = PETSC_MAX_REAL;
  (*slot)->trust_hi         = PETSC_MAX_REAL;
  (*slot)->last_served      = -1;
  (*slot)->last_uncertainty = -1;
  (*slot)->check_every      = 1;
  (*slot)->decision         = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetName(SgSlot slot, const char **name)
{
  PetscFunctionBegin;
  *name = slot->name;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckKind(SgSlot slot, const char kind[])
{
  PetscFunctionBegin;
  PetscCheck(!strcmp(slot->name, kind), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Slot %s is not of kind %s", slot->name, kind);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetNames(char **dst, const char pname[])
{
  PetscFunctionBegin;
  PetscCall(PetscFree(*dst));
  PetscCall(PetscStrallocpy(pname, dst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetForcesProvider(SgSlot slot, const char pname[], SgForcesFn fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(CheckKind(slot, "md.forces"));
  PetscCheck(fn, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Slot %s: provider %s has no function", slot->name, pname);
  PetscCall(SetNames(&slot->provider, pname));
  slot->forces = fn;
  slot->ctx    = ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetForcesSurrogate(SgSlot slot, const char pname[], SgForcesFn fn, SgForcesUncertaintyFn uncertainty, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(CheckKind(slot, "md.forces"));
  PetscCheck(fn, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Slot %s: surrogate %s has no function", slot->name, pname);
  PetscCall(SetNames(&slot->surrogate, pname));
  slot->sforces     = fn;
  slot->sforces_unc = uncertainty;
  slot->sctx        = ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetPolicy(SgSlot slot, SgSwapPolicy policy, PetscBool use_surrogate, PetscInt switch_step, PetscReal trust_lo, PetscReal trust_hi, PetscReal max_force)
{
  PetscFunctionBegin;
  PetscCheck(policy != SG_SWAP_ADAPTIVE || trust_lo <= trust_hi, slot->comm, PETSC_ERR_USER_INPUT, "Slot %s: adaptive swap needs trust_lo (%g) <= trust_hi (%g)", slot->name, (double)trust_lo, (double)trust_hi);
  PetscCheck(max_force > 0, slot->comm, PETSC_ERR_USER_INPUT, "Slot %s: swap max_force must be positive", slot->name);
  slot->policy        = policy;
  slot->use_surrogate = use_surrogate;
  slot->switch_step   = switch_step;
  slot->trust_lo      = trust_lo;
  slot->trust_hi      = trust_hi;
  slot->max_force     = max_force;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFromOptions(SgSlot slot, MPI_Comm comm, const char prefix[])
{
  PetscInt  pidx = slot->policy, uidx = slot->use_surrogate;
  PetscReal lo = slot->trust_lo < PETSC_MAX_REAL ? slot->trust_lo : 0.05, hi = slot->trust_hi < PETSC_MAX_REAL ? slot->trust_hi : 0.15;
  PetscReal fmax = slot->max_force;
  PetscInt  step = slot->switch_step, every = slot->check_every;
  const char *const use[] = {"solver", "surrogate"};

  PetscFunctionBegin;
  slot->comm = comm;
  PetscOptionsBegin(comm, prefix, "Swap policy of a slot", "SgSlot");
  PetscCall(SgOptionsEList("-swap_policy", "Who serves each call: static, schedule (solver until swap_step), adaptive (by the surrogate's uncertainty)", SgSwapPolicies, 3, SgSwapPolicies[pidx], &pidx, NULL));
  PetscCall(SgOptionsEList("-swap_use", "Static policy: the provider that serves", use, 2, use[uidx], &uidx, NULL));
  PetscCall(SgOptionsInt("-swap_step", "Schedule policy: first step served by the surrogate", step, &step, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-swap_trust_lo", "Adaptive: below this uncertainty the surrogate serves unflagged", "force units", lo, &lo, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-swap_trust_hi", "Adaptive: above this uncertainty the solver serves (frame kept for retraining)", "force units", hi, &hi, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-swap_check_every", "Adaptive: evaluate the uncertainty on steps divisible by N only; in between, the provider chosen at the last check serves (unflagged)", every, &every, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-swap_max_force", "Sanity bound: a surrogate force component above this is rejected and the solver serves", "force units", fmax, &fmax, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscOptionsEnd();
  PetscCall(SgSlotSetPolicy(slot, (SgSwapPolicy)pidx, uidx ? PETSC_TRUE : PETSC_FALSE, step, lo, hi, fmax));
  slot->check_every = every;
  PetscCheck(!(slot->policy != SG_SWAP_STATIC || slot->use_surrogate) || slot->surrogate, comm, PETSC_ERR_USER_INPUT, "Slot %s: swap policy %s%s needs a surrogate, and none is set", slot->name, SgSwapPolicies[slot->policy], slot->policy == SG_SWAP_STATIC ? " (use surrogate)" : "");
  PetscCheck(slot->policy != SG_SWAP_ADAPTIVE || slot->sforces_unc, comm, PETSC_ERR_USER_INPUT, "Slot %s: the adaptive swap policy needs an uncertainty estimate from surrogate %s (e.g. several models for a model deviation)", slot->name, slot->surrogate ? slot->surrogate : "(none)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetStep(SgSlot slot, PetscInt step)
{
  PetscFunctionBegin;
  slot->step     = step;
  slot->step_set = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A surrogate answer is usable when the energy and virial are finite and every force component is
   finite and within the bound -- on ghost atoms too: a Newton provider's ghost forces are added to
   their owners (possibly on another rank) after this check. The verdict is reduced over ranks so that
   all ranks agree on who serves. */
static PetscErrorCode ForcesSane(SgSlot slot, const SgForcesInput *in, const SgForcesOutput *out, PetscBool *sane)
{
  PetscInt  n = 3 * (in->n + in->nghost);
  PetscReal bad = 0, gbad;

  PetscFunctionBegin;
  if (PetscIsInfOrNanReal(out->energy)) bad = 1;
  for (int k = 0; k < 9; k++)
    if (PetscIsInfOrNanReal(out->virial[k])) bad = 1;
  for (PetscInt i = 0; i < n && !bad; i++)
    if (PetscIsInfOrNanReal(out->f[i]) || PetscAbsReal(out->f[i]) > slot->max_force) bad = 1;
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPIU_REAL, MPIU_MAX, slot->comm));
  *sane = gbad == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LogSwitch(SgSlot slot, PetscInt served, const char *why)
{
  PetscFunctionBegin;
  if (slot->last_served >= 0 && slot->last_served != served) {
    slot->switches++;
    slot->last_switched = PETSC_TRUE;
    PetscCall(PetscPrintf(slot->comm, "%s: step %" PetscInt_FMT ": %s -> %s (%s)\n", slot->name, slot->step_set ? slot->step : slot->calls, slot->last_served ? slot->surrogate : slot->provider, served ? slot->surrogate : slot->provider, why));
  }
  slot->last_served = served;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotComputeForces(SgSlot slot, const SgForcesInput *in, SgForcesOutput *out)
{
  PetscBool   want_surrogate = PETSC_FALSE, flagged = PETSC_FALSE;
  PetscReal   unc = -1;
  PetscInt    step;
  char        why[128] = "";

  PetscFunctionBegin;
  PetscCall(CheckKind(slot, "md.forces"));
  PetscCheck(slot->forces, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Slot md.forces has no provider: choose one in the deck (e.g. md: {forces: lj})");
  step = slot->step_set ? slot->step : slot->calls;
  slot->last_switched = slot->last_rejected = PETSC_FALSE;
  if (slot->sforces) {
    switch (slot->policy) {
    case SG_SWAP_STATIC:
      want_surrogate = slot->use_surrogate;
      PetscCall(PetscSNPrintf(why, sizeof why, "static"));
      break;
    case SG_SWAP_SCHEDULE:
      want_surrogate = step >= slot->switch_step ? PETSC_TRUE : PETSC_FALSE;
      PetscCall(PetscSNPrintf(why, sizeof why, "schedule: switch at step %" PetscInt_FMT, slot->switch_step));
      break;
    case SG_SWAP_ADAPTIVE: {
      PetscReal local;
      if (slot->decision >= 0 && step % slot->check_every) { /* between checks: keep the last decision */
        want_surrogate = slot->decision ? PETSC_TRUE : PETSC_FALSE;
        PetscCall(PetscSNPrintf(why, sizeof why, "adaptive: decision of the last check (every %" PetscInt_FMT " steps)", slot->check_every));
        break;
      }
      PetscCall(slot->sforces_unc(slot->sctx, in, &local));
      PetscCallMPI(MPI_Allreduce(&local, &unc, 1, MPIU_REAL, MPIU_MAX, slot->comm));
      want_surrogate = unc <= slot->trust_hi ? PETSC_TRUE : PETSC_FALSE;
      flagged        = unc > slot->trust_lo ? PETSC_TRUE : PETSC_FALSE;
      slot->decision = want_surrogate ? 1 : 0;
      PetscCall(PetscSNPrintf(why, sizeof why, "uncertainty %.4g, trust band [%.4g, %.4g]", (double)unc, (double)slot->trust_lo, (double)slot->trust_hi));
    } break;
    }
  }
  if (want_surrogate) {
    PetscBool sane = PETSC_FALSE;
    PetscCall(slot->sforces(slot->sctx, in, out));
    PetscCall(ForcesSane(slot, in, out, &sane));
    if (sane) {
      PetscCall(LogSwitch(slot, 1, why));
      slot->surrogate_calls++;
    } else {
      /* never continue on garbage: the solver redoes this call */
      slot->rejected++;
      PetscCall(PetscPrintf(slot->comm, "%s: step %" PetscInt_FMT ": surrogate %s returned NaN/Inf or a force above %g; the solver serves this step\n", slot->name, step, slot->surrogate, (double)slot->max_force));
      PetscCall(PetscArrayzero(out->f, 3 * (in->n + in->nghost)));
      out->energy = 0;
      PetscCall(PetscArrayzero(out->virial, 9));
      want_surrogate = PETSC_FALSE;
      flagged        = PETSC_TRUE;
      slot->last_rejected = PETSC_TRUE;
      PetscCall(PetscSNPrintf(why, sizeof why, "surrogate rejected"));
    }
  }
  if (!want_surrogate) {
    PetscCall(slot->forces(slot->ctx, in, out));
    if (slot->sforces) PetscCall(LogSwitch(slot, 0, why));
    else slot->last_served = 0;
    slot->solver_calls++;
  }
  slot->calls++;
  slot->last_flagged     = flagged;
  slot->last_uncertainty = unc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetLastCall(SgSlot slot, PetscBool *served_by_surrogate, PetscBool *flagged, PetscReal *uncertainty)
{
  PetscFunctionBegin;
  if (served_by_surrogate) *served_by_surrogate = slot->last_served == 1 ? PETSC_TRUE : PETSC_FALSE;
  if (flagged) *flagged = slot->last_flagged;
  if (uncertainty) *uncertainty = slot->last_uncertainty;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetLastSwitch(SgSlot slot, PetscBool *switched, PetscBool *rejected)
{
  PetscFunctionBegin;
  if (switched) *switched = slot->last_switched;
  if (rejected) *rejected = slot->last_rejected;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetCounts(SgSlot slot, PetscInt *solver_calls, PetscInt *surrogate_calls, PetscInt *switches, PetscInt *rejected)
{
  PetscFunctionBegin;
  if (solver_calls) *solver_calls = slot->solver_calls;
  if (surrogate_calls) *surrogate_calls = slot->surrogate_calls;
  if (switches) *switches = slot->switches;
  if (rejected) *rejected = slot->rejected;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetState(SgSlot slot, PetscReal s[SG_SLOT_NSTATE])
{
  PetscFunctionBegin;
  s[0] = (PetscReal)slot->calls, s[1] = (PetscReal)slot->solver_calls, s[2] = (PetscReal)slot->surrogate_calls;
  s[3] = (PetscReal)slot->switches, s[4] = (PetscReal)slot->rejected, s[5] = (PetscReal)slot->last_served;
  s[6] = (PetscReal)slot->last_flagged, s[7] = slot->last_uncertainty, s[8] = (PetscReal)slot->decision;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetState(SgSlot slot, const PetscReal s[SG_SLOT_NSTATE])
{
  PetscFunctionBegin;
  for (int k = 0; k < 5; k++) PetscCheck(s[k] >= 0 && s[k] == (PetscReal)(PetscInt)s[k], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Slot %s: saved state entry %d (%g) is not a count: damaged checkpoint", slot->name, k, (double)s[k]);
  for (int k = 5; k < 9; k += 3) PetscCheck(s[k] == -1 || s[k] == 0 || s[k] == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Slot %s: saved provider choice %g (entry %d) is not -1, 0 or 1: damaged checkpoint", slot->name, (double)s[k], k);
  slot->calls = (PetscInt)s[0], slot->solver_calls = (PetscInt)s[1], slot->surrogate_calls = (PetscInt)s[2];
  slot->switches = (PetscInt)s[3], slot->rejected = (PetscInt)s[4], slot->last_served = (PetscInt)s[5];
  slot->last_flagged = s[6] != 0 ? PETSC_TRUE : PETSC_FALSE, slot->last_uncertainty = s[7], slot->decision = (PetscInt)s[8];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotDestroy(SgSlot *slot)
{
  PetscFunctionBegin;
  if (!*slot) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree((*slot)->provider));
  PetscCall(PetscFree((*slot)->surrogate));
  PetscCall(PetscFree((*slot)->name));
  PetscCall(PetscFree(*slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}
