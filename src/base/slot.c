/* SgSlot: a named, typed, swappable operator with a solver provider, an optional surrogate, and a
   swap policy that picks one of them per call (see sgslot.h for the policies). The policy, the
   counts, the switch log and the checkpointed state are one piece of code (SlotCall) for every slot
   kind; a kind contributes only typed adapters (SlotKind). */
#include <string.h>
#include "sgslot.h"

const char *const SgSwapPolicies[] = {"static", "schedule", "adaptive", "SgSwapPolicy", "SG_SWAP_", NULL};

/* What a slot kind supplies to the one policy core below (SlotCall): calls of its typed provider
   functions on the kind's own input and output structs, passed as data pointers. No provider
   function is ever cast; each adapter knows its kind's types. */
typedef struct {
  const char *name;
  const char *hint;        /* how a missing solver provider is set */
  const char *bound_opt;   /* option of the sanity bound, e.g. "-swap_max_force" */
  const char *bound_what;  /* "force", "value": what the bound applies to */
  const char *unit;        /* units of the bound */
  const char *per;         /* "step" or "call": what the solver serves after a rejection */
  const char *unc_unit;    /* units of the trust band (the surrogate's uncertainty) */
  PetscErrorCode (*serve)(SgSlot, PetscBool surrogate, const void *in, void *out);
  PetscErrorCode (*uncertainty)(SgSlot, const void *in, PetscReal *local);
  /* the surrogate's answer is usable on every rank (a collective verdict) */
  PetscErrorCode (*sane)(SgSlot, const void *in, const void *out, PetscBool *sane);
  /* after a rejected answer, before the solver serves (NULL: nothing to do) */
  PetscErrorCode (*clear)(SgSlot, const void *in, void *out);
} SlotKind;

struct _n_SgSlot {
  char           *name;
  const SlotKind *kind;
  MPI_Comm        comm;
  /* the solver's provider (reference) and the surrogate */
  char        *provider, *surrogate;
  void        *ctx, *sctx;
  PetscBool    has_unc;  /* the surrogate has an uncertainty estimate */
  /* typed functions of each kind (only the slot's own kind is set) */
  SgForcesFn                   forces, sforces;
  SgForcesUncertaintyFn        sforces_unc;
  SgFieldSuperresFn            superres, ssuperres;
  SgFieldSuperresUncertaintyFn ssuperres_unc;
  SgFieldAdvanceFn             advance, sadvance;
  SgFieldAdvanceUncertaintyFn  sadvance_unc;
  /* policy */
  SgSwapPolicy policy;
  PetscBool    use_surrogate;
  PetscInt     switch_step, step;
  PetscBool    step_set;
  PetscReal    trust_lo, trust_hi, max_value; /* max_value: the kind's sanity bound (md.forces: max_force) */
  PetscInt     check_every; /* adaptive: the uncertainty is evaluated on steps divisible by this */
  PetscInt     decision;    /* adaptive: provider chosen at the last check (-1 none yet, 0 solver, 1 surrogate) */
  char         unavailable[128]; /* non-empty: the surrogate cannot serve the next call, and why */
  /* bookkeeping */
  PetscInt     calls, solver_calls, surrogate_calls, switches, rejected;
  PetscInt     last_served; /* -1 none yet, 0 solver, 1 surrogate */
  PetscBool    last_flagged;
  PetscReal    last_uncertainty;
  PetscBool    last_switched, last_rejected; /* the last call switched providers; its surrogate answer was rejected */
};

/* ---------- md.forces ---------- */
static PetscErrorCode ForcesServe(SgSlot slot, PetscBool sur, const void *in, void *out)
{
  PetscFunctionBegin;
  PetscCall((sur ? slot->sforces : slot->forces)(sur ? slot->sctx : slot->ctx, (const SgForcesInput *)in, (SgForcesOutput *)out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ForcesUncertainty(SgSlot slot, const void *in, PetscReal *local)
{
  PetscFunctionBegin;
  PetscCall(slot->sforces_unc(slot->sctx, (const SgForcesInput *)in, local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A surrogate answer is usable when the energy and virial are finite and every force component is
   finite and within the bound -- on ghost atoms too: a Newton provider's ghost forces are added to
   their owners (possibly on another rank) after this check. The verdict is reduced over ranks so that
   all ranks agree on who serves. */
static PetscErrorCode ForcesSane(SgSlot slot, const void *vin, const void *vout, PetscBool *sane)
{
  const SgForcesInput  *in  = (const SgForcesInput *)vin;
  const SgForcesOutput *out = (const SgForcesOutput *)vout;
  PetscInt              n   = 3 * (in->n + in->nghost);
  PetscReal             bad = 0, gbad;

  PetscFunctionBegin;
  if (PetscIsInfOrNanReal(out->energy)) bad = 1;
  for (int k = 0; k < 9; k++)
    if (PetscIsInfOrNanReal(out->virial[k])) bad = 1;
  for (PetscInt i = 0; i < n && !bad; i++)
    if (PetscIsInfOrNanReal(out->f[i]) || PetscAbsReal(out->f[i]) > slot->max_value) bad = 1;
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPIU_REAL, MPIU_MAX, slot->comm));
  *sane = gbad == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the solver's provider may accumulate into the outputs: it starts from zero */
static PetscErrorCode ForcesClear(SgSlot slot, const void *vin, void *vout)
{
  const SgForcesInput *in  = (const SgForcesInput *)vin;
  SgForcesOutput      *out = (SgForcesOutput *)vout;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(out->f, 3 * (in->n + in->nghost)));
  out->energy = 0;
  PetscCall(PetscArrayzero(out->virial, 9));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- field kinds: an answer is usable when every value is finite and within the bound ---------- */
static PetscErrorCode ValuesSane(SgSlot slot, PetscInt n, const PetscReal *v, PetscBool *sane)
{
  PetscReal bad = 0, gbad;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n && !bad; i++)
    if (PetscIsInfOrNanReal(v[i]) || PetscAbsReal(v[i]) > slot->max_value) bad = 1;
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPIU_REAL, MPIU_MAX, slot->comm));
  *sane = gbad == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- field.superres ---------- */
static PetscErrorCode SuperresServe(SgSlot slot, PetscBool sur, const void *in, void *out)
{
  PetscFunctionBegin;
  PetscCall((sur ? slot->ssuperres : slot->superres)(sur ? slot->sctx : slot->ctx, (const SgFieldSuperresInput *)in, (SgFieldSuperresOutput *)out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SuperresUncertainty(SgSlot slot, const void *in, PetscReal *local)
{
  PetscFunctionBegin;
  PetscCall(slot->ssuperres_unc(slot->sctx, (const SgFieldSuperresInput *)in, local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SuperresSane(SgSlot slot, const void *vin, const void *vout, PetscBool *sane)
{
  const SgFieldSuperresInput *in = (const SgFieldSuperresInput *)vin;

  PetscFunctionBegin;
  PetscCall(ValuesSane(slot, in->coarse->nch * SgFieldQueryCount(in->query), ((const SgFieldSuperresOutput *)vout)->v, sane));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- field.advance ---------- */
static PetscErrorCode AdvanceServe(SgSlot slot, PetscBool sur, const void *in, void *out)
{
  PetscFunctionBegin;
  PetscCall((sur ? slot->sadvance : slot->advance)(sur ? slot->sctx : slot->ctx, (const SgFieldAdvanceInput *)in, (SgFieldAdvanceOutput *)out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AdvanceUncertainty(SgSlot slot, const void *in, PetscReal *local)
{
  PetscFunctionBegin;
  PetscCall(slot->sadvance_unc(slot->sctx, (const SgFieldAdvanceInput *)in, local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AdvanceSane(SgSlot slot, const void *vin, const void *vout, PetscBool *sane)
{
  const SgFieldAdvanceInput *in = (const SgFieldAdvanceInput *)vin;
  const SgFieldBlock        *h  = in->history;

  PetscFunctionBegin;
  PetscCall(ValuesSane(slot, h->nch * in->nnext * h->n[1] * h->n[2], ((const SgFieldAdvanceOutput *)vout)->v, sane));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const SlotKind kinds[] = {
  {"md.forces", "choose one in the deck (e.g. md: {forces: lj})", "-swap_max_force", "force", "force units", "step", "force units", ForcesServe, ForcesUncertainty, ForcesSane, ForcesClear},
  {"field.superres", "the solver sets it (SgSlotSetFieldSuperresProvider)", "-swap_max_value", "value", "field units", "call", "units of the surrogate's uncertainty (mffn: mean |PDE residual|)", SuperresServe, SuperresUncertainty, SuperresSane, NULL},
  {"field.advance", "the solver sets it (SgSlotSetFieldAdvanceProvider)", "-swap_max_value", "value", "field units", "call", "units of the surrogate's uncertainty (e.g. ensemble spread, field units)", AdvanceServe, AdvanceUncertainty, AdvanceSane, NULL},
};

PetscErrorCode SgSlotCreate(const char name[], SgSlot *slot)
{
  const SlotKind *kind = NULL;

  PetscFunctionBegin;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (!strcmp(kinds[k].name, name)) kind = &kinds[k];
  PetscCheck(kind, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown slot signature '%s' (known: md.forces, field.advance, field.superres)", name);
  PetscCall(PetscNew(slot));
  PetscCall(PetscStrallocpy(name, &(*slot)->name));
  (*slot)->kind             = kind;
  (*slot)->comm             = PETSC_COMM_SELF;
  (*slot)->policy           = SG_SWAP_STATIC;
  (*slot)->max_value        = PETSC_MAX_REAL;
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

/* The kind-independent part of every typed setter: the kind matches, a function is given, the name
   and context are kept. */
static PetscErrorCode SetProvider(SgSlot slot, const char kind[], PetscBool surrogate, const char pname[], PetscBool has_fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(CheckKind(slot, kind));
  PetscCheck(has_fn, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Slot %s: %s %s has no function", slot->name, surrogate ? "surrogate" : "provider", pname);
  if (surrogate) {
    PetscCall(PetscFree(slot->surrogate));
    PetscCall(PetscStrallocpy(pname, &slot->surrogate));
    slot->sctx = ctx;
  } else {
    PetscCall(PetscFree(slot->provider));
    PetscCall(PetscStrallocpy(pname, &slot->provider));
    slot->ctx = ctx;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetForcesProvider(SgSlot slot, const char pname[], SgForcesFn fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "md.forces", PETSC_FALSE, pname, fn != NULL, ctx));
  slot->forces = fn;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetForcesSurrogate(SgSlot slot, const char pname[], SgForcesFn fn, SgForcesUncertaintyFn uncertainty, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "md.forces", PETSC_TRUE, pname, fn != NULL, ctx));
  slot->sforces     = fn;
  slot->sforces_unc = uncertainty;
  slot->has_unc     = uncertainty ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFieldSuperresProvider(SgSlot slot, const char pname[], SgFieldSuperresFn fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "field.superres", PETSC_FALSE, pname, fn != NULL, ctx));
  slot->superres = fn;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFieldSuperresSurrogate(SgSlot slot, const char pname[], SgFieldSuperresFn fn, SgFieldSuperresUncertaintyFn uncertainty, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "field.superres", PETSC_TRUE, pname, fn != NULL, ctx));
  slot->ssuperres     = fn;
  slot->ssuperres_unc = uncertainty;
  slot->has_unc       = uncertainty ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFieldAdvanceProvider(SgSlot slot, const char pname[], SgFieldAdvanceFn fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "field.advance", PETSC_FALSE, pname, fn != NULL, ctx));
  slot->advance = fn;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFieldAdvanceSurrogate(SgSlot slot, const char pname[], SgFieldAdvanceFn fn, SgFieldAdvanceUncertaintyFn uncertainty, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SetProvider(slot, "field.advance", PETSC_TRUE, pname, fn != NULL, ctx));
  slot->sadvance     = fn;
  slot->sadvance_unc = uncertainty;
  slot->has_unc      = uncertainty ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetPolicy(SgSlot slot, SgSwapPolicy policy, PetscBool use_surrogate, PetscInt switch_step, PetscReal trust_lo, PetscReal trust_hi, PetscReal max_value)
{
  PetscFunctionBegin;
  PetscCheck(policy != SG_SWAP_ADAPTIVE || trust_lo <= trust_hi, slot->comm, PETSC_ERR_USER_INPUT, "Slot %s: adaptive swap needs trust_lo (%g) <= trust_hi (%g)", slot->name, (double)trust_lo, (double)trust_hi);
  PetscCheck(max_value > 0, slot->comm, PETSC_ERR_USER_INPUT, "Slot %s: swap max_%s must be positive", slot->name, slot->kind->bound_what);
  slot->policy        = policy;
  slot->use_surrogate = use_surrogate;
  slot->switch_step   = switch_step;
  slot->trust_lo      = trust_lo;
  slot->trust_hi      = trust_hi;
  slot->max_value     = max_value;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetFromOptions(SgSlot slot, MPI_Comm comm, const char prefix[])
{
  PetscInt  pidx = slot->policy, uidx = slot->use_surrogate;
  PetscReal lo = slot->trust_lo < PETSC_MAX_REAL ? slot->trust_lo : 0.05, hi = slot->trust_hi < PETSC_MAX_REAL ? slot->trust_hi : 0.15;
  PetscReal vmax = slot->max_value;
  PetscInt  step = slot->switch_step, every = slot->check_every;
  const char *const use[] = {"solver", "surrogate"};
  const char *unc = slot->kind->unc_unit;
  char        bound[128];

  PetscFunctionBegin;
  slot->comm = comm;
  PetscCall(PetscSNPrintf(bound, sizeof bound, "Sanity bound: a surrogate %s component above this is rejected and the solver serves", slot->kind->bound_what));
  PetscOptionsBegin(comm, prefix, "Swap policy of a slot", "SgSlot");
  PetscCall(SgOptionsEList("-swap_policy", "Who serves each call: static, schedule (solver until swap_step), adaptive (by the surrogate's uncertainty)", SgSwapPolicies, 3, SgSwapPolicies[pidx], &pidx, NULL));
  PetscCall(SgOptionsEList("-swap_use", "Static policy: the provider that serves", use, 2, use[uidx], &uidx, NULL));
  PetscCall(SgOptionsInt("-swap_step", "Schedule policy: first step served by the surrogate", step, &step, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-swap_trust_lo", "Adaptive: below this uncertainty the surrogate serves unflagged", unc, lo, &lo, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-swap_trust_hi", "Adaptive: above this uncertainty the solver serves (frame kept for retraining)", unc, hi, &hi, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-swap_check_every", "Adaptive: evaluate the uncertainty on steps divisible by N only; in between, the provider chosen at the last check serves (unflagged)", every, &every, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsReal(slot->kind->bound_opt, bound, slot->kind->unit, vmax, &vmax, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscOptionsEnd();
  PetscCall(SgSlotSetPolicy(slot, (SgSwapPolicy)pidx, uidx ? PETSC_TRUE : PETSC_FALSE, step, lo, hi, vmax));
  slot->check_every = every;
  PetscCheck(!(slot->policy != SG_SWAP_STATIC || slot->use_surrogate) || slot->surrogate, comm, PETSC_ERR_USER_INPUT, "Slot %s: swap policy %s%s needs a surrogate, and none is set", slot->name, SgSwapPolicies[slot->policy], slot->policy == SG_SWAP_STATIC ? " (use surrogate)" : "");
  PetscCheck(slot->policy != SG_SWAP_ADAPTIVE || slot->has_unc, comm, PETSC_ERR_USER_INPUT, "Slot %s: the adaptive swap policy needs an uncertainty estimate from surrogate %s (e.g. several models for a model deviation)", slot->name, slot->surrogate ? slot->surrogate : "(none)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetStep(SgSlot slot, PetscInt step)
{
  PetscFunctionBegin;
  slot->step     = step;
  slot->step_set = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetSurrogateAvailable(SgSlot slot, PetscBool available, const char why[])
{
  PetscFunctionBegin;
  slot->unavailable[0] = 0;
  if (!available) PetscCall(PetscStrncpy(slot->unavailable, why && why[0] ? why : "surrogate unavailable", sizeof slot->unavailable));
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

/* The policy core of every kind: decide who serves (static / schedule / adaptive, or the solver when
   the caller said the surrogate cannot serve this call), serve, reject an unusable surrogate answer
   (the solver redoes the call), count and log switches. */
static PetscErrorCode SlotCall(SgSlot slot, const char kind[], const void *in, void *out)
{
  const SlotKind *K = slot->kind;
  PetscBool       want_surrogate = PETSC_FALSE, flagged = PETSC_FALSE;
  PetscReal       unc = -1;
  PetscInt        step;
  char            why[128] = "";

  PetscFunctionBegin;
  PetscCall(CheckKind(slot, kind));
  PetscCheck(slot->provider, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Slot %s has no provider: %s", slot->name, K->hint);
  step = slot->step_set ? slot->step : slot->calls;
  slot->last_switched = slot->last_rejected = PETSC_FALSE;
  if (slot->surrogate && slot->unavailable[0]) PetscCall(PetscStrncpy(why, slot->unavailable, sizeof why));
  else if (slot->surrogate) {
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
      PetscCall(K->uncertainty(slot, in, &local));
      PetscCallMPI(MPI_Allreduce(&local, &unc, 1, MPIU_REAL, MPIU_MAX, slot->comm));
      want_surrogate = unc <= slot->trust_hi ? PETSC_TRUE : PETSC_FALSE;
      flagged        = unc > slot->trust_lo ? PETSC_TRUE : PETSC_FALSE;
      slot->decision = want_surrogate ? 1 : 0;
      PetscCall(PetscSNPrintf(why, sizeof why, "uncertainty %.4g, trust band [%.4g, %.4g]", (double)unc, (double)slot->trust_lo, (double)slot->trust_hi));
    } break;
    }
  }
  slot->unavailable[0] = 0; /* applies to one call */
  if (want_surrogate) {
    PetscBool sane = PETSC_FALSE;
    PetscCall(K->serve(slot, PETSC_TRUE, in, out));
    PetscCall(K->sane(slot, in, out, &sane));
    if (sane) {
      PetscCall(LogSwitch(slot, 1, why));
      slot->surrogate_calls++;
    } else {
      /* never continue on garbage: the solver redoes this call */
      slot->rejected++;
      PetscCall(PetscPrintf(slot->comm, "%s: step %" PetscInt_FMT ": surrogate %s returned NaN/Inf or a %s above %g; the solver serves this %s\n", slot->name, step, slot->surrogate, K->bound_what, (double)slot->max_value, K->per));
      if (K->clear) PetscCall(K->clear(slot, in, out));
      want_surrogate      = PETSC_FALSE;
      flagged             = PETSC_TRUE;
      slot->last_rejected = PETSC_TRUE;
      PetscCall(PetscSNPrintf(why, sizeof why, "surrogate rejected"));
    }
  }
  if (!want_surrogate) {
    PetscCall(K->serve(slot, PETSC_FALSE, in, out));
    if (slot->surrogate) PetscCall(LogSwitch(slot, 0, why));
    else slot->last_served = 0;
    slot->solver_calls++;
  }
  slot->calls++;
  slot->last_flagged     = flagged;
  slot->last_uncertainty = unc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotComputeForces(SgSlot slot, const SgForcesInput *in, SgForcesOutput *out)
{
  PetscFunctionBegin;
  PetscCall(SlotCall(slot, "md.forces", in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotFieldSuperres(SgSlot slot, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  PetscFunctionBegin;
  PetscCall(SlotCall(slot, "field.superres", in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotFieldAdvance(SgSlot slot, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  PetscFunctionBegin;
  PetscCall(SlotCall(slot, "field.advance", in, out));
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
  s[0] = (PetscReal)slot->calls;
  s[1] = (PetscReal)slot->solver_calls;
  s[2] = (PetscReal)slot->surrogate_calls;
  s[3] = (PetscReal)slot->switches;
  s[4] = (PetscReal)slot->rejected;
  s[5] = (PetscReal)slot->last_served;
  s[6] = (PetscReal)slot->last_flagged;
  s[7] = slot->last_uncertainty;
  s[8] = (PetscReal)slot->decision;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetState(SgSlot slot, const PetscReal s[SG_SLOT_NSTATE])
{
  PetscFunctionBegin;
  for (int k = 0; k < 5; k++) PetscCheck(s[k] >= 0 && s[k] == (PetscReal)(PetscInt)s[k], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Slot %s: saved state entry %d (%g) is not a count: damaged checkpoint", slot->name, k, (double)s[k]);
  for (int k = 5; k < 9; k += 3) PetscCheck(s[k] == -1 || s[k] == 0 || s[k] == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Slot %s: saved provider choice %g (entry %d) is not -1, 0 or 1: damaged checkpoint", slot->name, (double)s[k], k);
  slot->calls = (PetscInt)s[0];
  slot->solver_calls = (PetscInt)s[1];
  slot->surrogate_calls = (PetscInt)s[2];
  slot->switches = (PetscInt)s[3];
  slot->rejected = (PetscInt)s[4];
  slot->last_served = (PetscInt)s[5];
  slot->last_flagged = s[6] != 0 ? PETSC_TRUE : PETSC_FALSE;
  slot->last_uncertainty = s[7];
  slot->decision = (PetscInt)s[8];
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
