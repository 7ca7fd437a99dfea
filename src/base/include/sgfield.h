/* The field slot kinds: "field.superres" and "field.advance" (sgslot.h serves them).

     field.superres   (coarse space-time block of fields) -> the fields at any (t, z, x) points
     field.advance    (history of H snapshots of the state) -> the next K snapshots

   A field solver (physics/boussinesq) exposes them; its own providers are the reference (a fine
   solve of the segment, stepping the solver) and a surrogate may serve them instead (MeshfreeFlowNet
   serves field.superres, POD-LSTM field.advance). As with md.forces (sgforces.h), everything a
   provider and its caller exchange is typed here, in the core, so that physics and surrogates meet
   only through this header:
     - the solver's own provider is set on the slot by the solver (SgSlotSetFieldSuperresProvider,
       SgSlotSetFieldAdvanceProvider); there is nothing to choose by name;
     - a surrogate type that can serve a kind has the SgSurrogate op for it (superresprovider,
       advanceprovider: sgsurrogateimpl.h); SgFieldSuperresProviderCreate / SgFieldAdvanceProviderCreate
       create the surrogate by type name and ask it for its provider.

   Conventions.
   - Axes are (t, z, x) in this order everywhere: t time, z the wall-normal (vertical) coordinate,
     x the horizontal one (periodic for Rayleigh-Benard). Units are the solver's (boussinesq:
     free-fall units, docs/boussinesq.md).
   - Values are stored channel-major, then t, z, x with x fastest: v[((c n_t + i) n_z + j) n_x + k].
   - A block is replicated: every rank of the slot's communicator passes the same block. A query is
     this rank's: each rank asks for its own points and receives their values (the union over ranks is
     the caller's business), so a provider may spread the work over ranks.
   - Every call is collective on the communicator of the provider info (the slot's). */
#pragma once
#include <petscsys.h>
#include "sgsys.h"

typedef struct _p_SgSurrogate *SgSurrogate;

#define SG_FIELD_MAX_CHANNELS 16
#define SG_FIELD_MAX_PARAMS   8

/* A space-time block of fields on a tensor grid: n[a] points along axis a (t, z, x) at the
   increasing coordinates coord[a][0 .. n[a]-1], values v[nch][n_t][n_z][n_x]. lo/hi are the
   spatial domain of the solver per axis (entries 1, 2; entry 0, time, is [coord[0][0],
   coord[0][n_t-1]]); an axis with periodic[a] has period hi[a] - lo[a] (its coordinates lie in
   [lo, hi)). */
typedef struct {
  PetscInt           nch;
  const char *const *channel; /* channel names, e.g. {"p", "b", "u", "w"} */
  PetscInt           n[3];
  const PetscReal   *coord[3];
  PetscReal          lo[3], hi[3];
  PetscBool          periodic[3];
  const PetscReal   *v;
} SgFieldBlock;

/* Points asked of a field provider, this rank's share: either npoints arbitrary points
   pts[npoints][3] (t, z, x), or (grid = PETSC_TRUE) the tensor grid of n[a] points at coord[a][]
   (values then ordered t, z, x with x fastest). */
typedef struct {
  PetscBool        grid;
  PetscInt         npoints;
  const PetscReal *pts;
  PetscInt         n[3];
  const PetscReal *coord[3];
} SgFieldQuery;

/* ---------- field.superres: (coarse space-time block) -> values at the query points ---------- */
typedef struct {
  const SgFieldBlock *coarse; /* replicated */
  const SgFieldQuery *query;  /* this rank's points */
} SgFieldSuperresInput;
typedef struct {
  PetscReal *v; /* [coarse->nch][SgFieldQueryCount(query)]: every channel of the block at this rank's points */
} SgFieldSuperresOutput;
typedef PetscErrorCode (*SgFieldSuperresFn)(void *ctx, const SgFieldSuperresInput *, SgFieldSuperresOutput *);
/* The provider's estimate of its own error for this input, on this rank (the slot takes the max over
   ranks), in the units the provider states (SgFieldSuperresProvider.uncertainty_units); for
   MeshfreeFlowNet the mean |PDE residual| of its super-resolved field. It is evaluated before the
   call it judges, with the same input. */
typedef PetscErrorCode (*SgFieldSuperresUncertaintyFn)(void *ctx, const SgFieldSuperresInput *, PetscReal *uncertainty);

/* ---------- field.advance: (history of H snapshots) -> the next K snapshots ---------- */
typedef struct {
  const SgFieldBlock *history; /* replicated; its time axis holds the H snapshot times, oldest first; the last is the current state */
  PetscInt            nnext;   /* K */
  const PetscReal    *tnext;   /* [K] times of the snapshots asked for, increasing, after the last history time */
} SgFieldAdvanceInput;
typedef struct {
  PetscReal *v; /* [nch][K][n_z][n_x]: the channels and spatial grid of the history; the same on every rank */
} SgFieldAdvanceOutput;
typedef PetscErrorCode (*SgFieldAdvanceFn)(void *ctx, const SgFieldAdvanceInput *, SgFieldAdvanceOutput *);
/* The provider's estimate of its error for this input on this rank (max over ranks taken by the
   slot), e.g. the spread of an ensemble of models, in the units it states. */
typedef PetscErrorCode (*SgFieldAdvanceUncertaintyFn)(void *ctx, const SgFieldAdvanceInput *, PetscReal *uncertainty);

/* What a field provider's constructor is told. It is called inside the solver's options block, so it
   may read its own options with the SgOptions* getters (PetscOptionsObject is passed for that). */
typedef struct {
  MPI_Comm           comm;
  PetscInt           nch;
  const char *const *channel;           /* the channels the solver hands and expects back */
  PetscInt           nparam;
  const char *const *param_name;        /* the solver's physical parameters, e.g. {"rayleigh", "prandtl"} */
  const PetscReal   *param;
  PetscReal          lo[3], hi[3];      /* the domain (entries 1, 2: z, x; entry 0 unused) */
  PetscBool          periodic[3];
  const char        *prefix;            /* options prefix of the calling solver, e.g. "boussinesq_" */
  PetscOptionItems  *PetscOptionsObject;
} SgFieldProviderInfo;

/* A field.superres provider and what it needs of the blocks it is handed (0: anything; the solver
   builds its blocks accordingly and the provider still checks every block it gets). */
typedef struct {
  char                         name[64];
  SgFieldSuperresFn            fn;
  void                        *ctx;
  SgFieldSuperresUncertaintyFn uncertainty;      /* optional; the adaptive policy needs it */
  char                         uncertainty_units[64];
  PetscErrorCode             (*destroy)(void *ctx);
  PetscInt                     block_nt;         /* snapshots per block */
  PetscReal                    block_spacing[3]; /* spacing of the block's (uniform) grid along t, z, x */
  SgSurrogate                  surrogate;        /* set when a surrogate serves: the provider owns it */
} SgFieldSuperresProvider;

/* A field.advance provider and what it needs (0: anything). */
typedef struct {
  char                        name[64];
  SgFieldAdvanceFn            fn;
  void                       *ctx;
  SgFieldAdvanceUncertaintyFn uncertainty;       /* optional; the adaptive policy needs it */
  char                        uncertainty_units[64];
  PetscErrorCode            (*destroy)(void *ctx);
  PetscInt                    history;           /* H: snapshots of history it needs */
  PetscInt                    nnext;             /* K it answers at most (0: any) */
  PetscReal                   dt;                /* the snapshot spacing it was made for (0: any) */
  SgSurrogate                 surrogate;
  /* optional: told once at the solver's set-up the spatial grid of the blocks to come (a block with
     n[0] = 0 and no values), so that it builds its maps and refuses a grid it cannot serve before the
     first step rather than at its first call mid-run; it still checks every block it gets */
  PetscErrorCode            (*grid)(void *ctx, const SgFieldBlock *grid);
} SgFieldAdvanceProvider;

/* A provider served by the surrogate type `type` (created, its options read through info, and asked
   for its provider); one user-input error naming the type and the kinds it serves otherwise. */
PETSC_EXTERN PetscErrorCode SgFieldSuperresProviderCreate(const char type[], const SgFieldProviderInfo *, SgFieldSuperresProvider *);
PETSC_EXTERN PetscErrorCode SgFieldSuperresProviderDestroy(SgFieldSuperresProvider *);
PETSC_EXTERN PetscErrorCode SgFieldAdvanceProviderCreate(const char type[], const SgFieldProviderInfo *, SgFieldAdvanceProvider *);
PETSC_EXTERN PetscErrorCode SgFieldAdvanceProviderDestroy(SgFieldAdvanceProvider *);

/* Helpers for providers and callers. */
/* Number of points of a query (npoints, or the product of the grid sizes). */
PETSC_EXTERN PetscInt       SgFieldQueryCount(const SgFieldQuery *);
/* Point q of a query as (t, z, x). */
PETSC_EXTERN void           SgFieldQueryPoint(const SgFieldQuery *, PetscInt q, PetscReal pt[3]);
/* Number of values of a block (nch n_t n_z n_x). */
PETSC_EXTERN PetscInt       SgFieldBlockSize(const SgFieldBlock *);
/* Index of channel `name` in the block (-1 if absent). */
PETSC_EXTERN PetscInt       SgFieldBlockChannel(const SgFieldBlock *, const char name[]);
/* Whether axis a of the block is uniform (|coord[i+1] - coord[i] - h| <= rtol h for all i) and its
   spacing h (0 for a single point). */
PETSC_EXTERN PetscErrorCode SgFieldBlockSpacing(const SgFieldBlock *, PetscInt axis, PetscReal rtol, PetscBool *uniform, PetscReal *h);
/* Checks a block's shape (sizes >= 1, increasing coordinates, channel names) and finite values;
   a PETSC_ERR_ARG_WRONG error naming `who` and the defect otherwise. */
PETSC_EXTERN PetscErrorCode SgFieldBlockCheck(MPI_Comm, const char who[], const SgFieldBlock *);
