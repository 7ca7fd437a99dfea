/* SgSlot: a swappable operator a solver exposes, of one slot kind with a typed signature.

   A slot has two providers: the solver's own (the reference) and a surrogate; a swap policy chooses
   which one serves each call, counts the calls and logs every switch. Slot kinds and their signatures:
     "md.forces"      (positions, types, box) -> energy, forces, virial               sgforces.h
     "field.superres" (coarse space-time block) -> field values at any (t, z, x)       sgfield.h
     "field.advance"  (history of H snapshots) -> the next K snapshots                sgfield.h
   Each kind has typed setters and a typed call:
     md.forces       SgSlotSetForcesProvider, SgSlotSetForcesSurrogate, SgSlotComputeForces
     field.superres  SgSlotSetFieldSuperresProvider, SgSlotSetFieldSuperresSurrogate, SgSlotFieldSuperres
     field.advance   SgSlotSetFieldAdvanceProvider, SgSlotSetFieldAdvanceSurrogate, SgSlotFieldAdvance
   No provider is ever passed through a cast function pointer. Everything else below (policies,
   counts, switch log, checkpointed state) is the same for every kind, one piece of code. */
#pragma once
#include <petscsys.h>
#include "sgsolver.h"
#include "sgforces.h"
#include "sgfield.h"

PETSC_EXTERN PetscErrorCode SgSlotCreate(const char name[], SgSlot *);
PETSC_EXTERN PetscErrorCode SgSlotGetName(SgSlot, const char **);
/* md.forces: the solver's own provider (the reference a swap policy falls back to) and a surrogate
   provider with, optionally, its uncertainty estimate (the adaptive policy needs one). The slot must
   be of kind md.forces. */
PETSC_EXTERN PetscErrorCode SgSlotSetForcesProvider(SgSlot, const char pname[], SgForcesFn fn, void *ctx);
PETSC_EXTERN PetscErrorCode SgSlotSetForcesSurrogate(SgSlot, const char pname[], SgForcesFn fn, SgForcesUncertaintyFn uncertainty, void *ctx);

/* field.superres and field.advance: the solver's own provider and a surrogate provider with, optionally,
   its uncertainty estimate. The slot must be of that kind. */
PETSC_EXTERN PetscErrorCode SgSlotSetFieldSuperresProvider(SgSlot, const char pname[], SgFieldSuperresFn fn, void *ctx);
PETSC_EXTERN PetscErrorCode SgSlotSetFieldSuperresSurrogate(SgSlot, const char pname[], SgFieldSuperresFn fn, SgFieldSuperresUncertaintyFn uncertainty, void *ctx);
PETSC_EXTERN PetscErrorCode SgSlotSetFieldAdvanceProvider(SgSlot, const char pname[], SgFieldAdvanceFn fn, void *ctx);
PETSC_EXTERN PetscErrorCode SgSlotSetFieldAdvanceSurrogate(SgSlot, const char pname[], SgFieldAdvanceFn fn, SgFieldAdvanceUncertaintyFn uncertainty, void *ctx);

/* Swap policies: who serves each call.
     static    always the one named by <prefix>swap_use (solver | surrogate)
     schedule  the solver until step <prefix>swap_step, the surrogate from then on
     adaptive  the surrogate while its uncertainty (max over ranks) < trust_lo; the solver when it is
               above trust_hi (such calls are flagged for retraining); in between the surrogate
               serves and the call is flagged. With <prefix>swap_check_every N > 1 the uncertainty
               is evaluated on steps divisible by N only (it costs K model evaluations for an
               ensemble); the steps in between keep the last check's provider, unflagged.
   Whatever the policy, a surrogate answer with NaN/Inf or a value above the kind's sanity bound
   (md.forces: <prefix>swap_max_force on every force component; field kinds: <prefix>swap_max_value
   on every value) is rejected for that call and the solver serves it. Every switch of provider is
   printed on rank 0 of comm. Options are read with the given prefix (e.g. "md_" gives
   -md_swap_policy, "boussinesq_superres_" -boussinesq_superres_swap_policy). */
typedef enum { SG_SWAP_STATIC, SG_SWAP_SCHEDULE, SG_SWAP_ADAPTIVE } SgSwapPolicy;
PETSC_EXTERN const char *const SgSwapPolicies[];
PETSC_EXTERN PetscErrorCode SgSlotSetFromOptions(SgSlot, MPI_Comm comm, const char prefix[]);
/* max_value: the kind's sanity bound (md.forces: the largest force component accepted) */
PETSC_EXTERN PetscErrorCode SgSlotSetPolicy(SgSlot, SgSwapPolicy, PetscBool use_surrogate, PetscInt switch_step, PetscReal trust_lo, PetscReal trust_hi, PetscReal max_value);
/* The solver's step number, for the schedule policy and the switch log (default: call count). */
PETSC_EXTERN PetscErrorCode SgSlotSetStep(SgSlot, PetscInt step);
/* Whether the surrogate can serve the next call (one call only; e.g. false while a field.advance
   history is still shorter than the surrogate needs): if not, the solver serves it whatever the
   policy, the uncertainty is not evaluated, and a switch to the solver is logged with `why`. */
PETSC_EXTERN PetscErrorCode SgSlotSetSurrogateAvailable(SgSlot, PetscBool available, const char why[]);

/* Serve one call with the provider the policy chooses. Collective on the slot's comm when a surrogate
   is set (the decision is the same on every rank). */
PETSC_EXTERN PetscErrorCode SgSlotComputeForces(SgSlot, const SgForcesInput *, SgForcesOutput *);
PETSC_EXTERN PetscErrorCode SgSlotFieldSuperres(SgSlot, const SgFieldSuperresInput *, SgFieldSuperresOutput *);
PETSC_EXTERN PetscErrorCode SgSlotFieldAdvance(SgSlot, const SgFieldAdvanceInput *, SgFieldAdvanceOutput *);

/* What the last call did: served_by_surrogate, flagged (the solver's frame should be kept for
   retraining, or the surrogate served in the uncertain band), the uncertainty (-1 if none). */
PETSC_EXTERN PetscErrorCode SgSlotGetLastCall(SgSlot, PetscBool *served_by_surrogate, PetscBool *flagged, PetscReal *uncertainty);
/* Whether the last call switched providers (the provider that served it is not the one that served
   the call before), and whether its surrogate answer was rejected (so the surrogate's energy at that
   configuration is unusable). A caller that carries a conserved quantity across switches (the MD
   engine's econserved) evaluates both providers there. */
PETSC_EXTERN PetscErrorCode SgSlotGetLastSwitch(SgSlot, PetscBool *switched, PetscBool *rejected);
/* Totals: calls served by the solver and by the surrogate, switches, rejected surrogate calls. */
PETSC_EXTERN PetscErrorCode SgSlotGetCounts(SgSlot, PetscInt *solver_calls, PetscInt *surrogate_calls, PetscInt *switches, PetscInt *rejected);
/* The slot's history as SG_SLOT_NSTATE reals (counts, who served the last call, its flag and
   uncertainty, the adaptive policy's last decision) for a solver's checkpoint: a restarted run continues the counts and logs a switch
   only where the uninterrupted run would. */
#define SG_SLOT_NSTATE 9
PETSC_EXTERN PetscErrorCode SgSlotGetState(SgSlot, PetscReal state[SG_SLOT_NSTATE]);
PETSC_EXTERN PetscErrorCode SgSlotSetState(SgSlot, const PetscReal state[SG_SLOT_NSTATE]);
PETSC_EXTERN PetscErrorCode SgSlotDestroy(SgSlot *);
