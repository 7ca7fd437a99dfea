/* The solver's side of slots, in io/ because it checkpoints (SgCheckpoint) and reports (SgOutput),
   and shared by every solver (physics modules cannot share code otherwise).

   SgSlotReport: a slot's counts (calls per provider, switches, rejected answers, the surrogate's
   fraction), printed and written to the run's report as LABEL_solver_calls, LABEL_surrogate_calls,
   LABEL_switches, LABEL_rejected, LABEL_surrogate_fraction.

   SgAdvanceLoop: the solver's side of the field.advance slot (sgfield.h, sgslot.h) of every solver
   that offers it (physics/sst, physics/boussinesq).

   With PREFIX advance: {dt: D} (D > 0) the slot is in the loop: each driver step is one slot call
   that advances the state by K = advance_snapshots snapshots D apart (the driver's step is K D, the
   last one shortened to the end time). The loop keeps what the solver needs around the call:
   - the options (advance_dt, _snapshots, _history, _warmup, _resync_every, _surrogate) and the
     surrogate's provider, checked against the spacing and the number of snapshots it was made for;
   - the history: the last H = max(advance_history, what the surrogate needs) snapshots, oldest
     first, the current state last (snapshot-major: [H][size], the layout the solver chooses);
   - the times of a call's snapshots;
   - when the surrogate is held back (SgSlotSetSurrogateAvailable, whatever the swap policy): before
     advance_warmup (the solver warms up), while the history is shorter than the surrogate needs,
     for a call whose snapshot spacing is not the surrogate's (the shortened last step), and, with
     advance_resync_every M > 0, for the call after M of the surrogate's snapshots in a row: the
     solver advances again and the surrogate goes on from its snapshots (re-synchronisation);
   - a checkpoint of all of it and of the slot's counts: a restarted run continues bit for bit. */
#pragma once
#include "sgslot.h"
#include "sgfield.h"
#include "sgcheckpoint.h"
#include "sgoutput.h"

PETSC_EXTERN PetscErrorCode SgSlotReport(MPI_Comm, SgSlot, const char label[], const char solver[], const char surrogate[], SgOutput);

typedef struct {
  /* options (set the defaults of K and H before SgAdvanceLoopSetFromOptions) */
  PetscReal              dt;       /* snapshot spacing; 0: the slot is not in the loop */
  PetscReal              warmup;   /* the solver serves every call that starts before this time */
  PetscInt               K, H;     /* snapshots per call; history kept (grown to the surrogate's need) */
  PetscInt               resync;   /* re-synchronise after this many surrogate snapshots in a row (0: never) */
  char                   surname[64];
  SgFieldAdvanceProvider sur;      /* the surrogate's provider (sur.fn NULL: none) */
  SgSlot                 slot;     /* declared to the solver, destroyed with it */
  /* state */
  PetscInt               size;     /* values of one snapshot */
  PetscInt               nh;       /* snapshots held (<= H) */
  PetscInt               nsur;     /* the surrogate's snapshots since the solver last served */
  PetscInt               nt;       /* snapshots of the current call */
  PetscReal              t;        /* time of the newest snapshot */
  PetscReal             *htime;    /* [H] oldest first */
  PetscReal             *hval;     /* [H][size] */
  PetscReal             *tn;       /* [K] times of the current call's snapshots */
} SgAdvanceLoop;

/* The options, inside the solver's options block (PetscOptionsObject: its prefix applies); with a
   surrogate named, its provider is created from info and checked against dt and K. solver names the
   solver in messages, units the time unit in the help. */
/* sim_dt: the driver's fixed step (SgSolverRunInfo.dt; 0 when the solver chooses), which a loop in
   the slot's charge excludes */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopSetFromOptions(SgAdvanceLoop *, PetscOptionItems *PetscOptionsObject, const char solver[], const char units[], const SgFieldProviderInfo *info, PetscReal sim_dt);
/* The slot (the solver's provider fn/ctx, the surrogate, the swap options PREFIXadvance_swap_*); when
   the slot is in the loop, the history with the current state snap0 (size values) at time 0. The
   caller declares the slot to its solver (SgSolverDeclareSlot). */
/* The spatial grid of the snapshots (n[0] = 0, v NULL), for the surrogate to check and prepare for
   (SgFieldAdvanceProvider.grid) before the first step; call it before SgAdvanceLoopSetUp. */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopSetGrid(SgAdvanceLoop *, const SgFieldBlock *grid);
PETSC_EXTERN PetscErrorCode SgAdvanceLoopSetUp(SgAdvanceLoop *, MPI_Comm, const char solver[], const char prefix[], SgFieldAdvanceFn fn, void *ctx, PetscInt size, const PetscReal snap0[]);
PETSC_EXTERN PetscBool      SgAdvanceLoopOn(const SgAdvanceLoop *);
/* The driver's step when the slot is in the loop: K dt. */
PETSC_EXTERN PetscReal      SgAdvanceLoopSegment(const SgAdvanceLoop *);
/* Before a call from t to t + dt: the times of its snapshots (A->tn, A->nt) and whether the surrogate
   may serve it (told to the slot with the reason when not). */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopBegin(SgAdvanceLoop *, PetscReal t, PetscReal dt);
/* After the call: who served it (the re-synchronisation count follows it); then the caller appends
   the call's A->nt snapshots to the history, oldest first (SgAdvanceLoopPush drops the oldest held). */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopEnd(SgAdvanceLoop *, PetscBool *served_by_surrogate);
PETSC_EXTERN PetscErrorCode SgAdvanceLoopPush(SgAdvanceLoop *, PetscReal t, const PetscReal snap[]);
/* The history, the counts and the slot's state, under names PREFIXadvance_* (direction-free). */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopCheckpoint(SgAdvanceLoop *, SgCheckpoint, const char prefix[]);
/* The slot's counts (SgSlotReport with the label "advance"). */
PETSC_EXTERN PetscErrorCode SgAdvanceLoopReport(SgAdvanceLoop *, MPI_Comm, const char solver[], SgOutput);
PETSC_EXTERN PetscErrorCode SgAdvanceLoopDestroy(SgAdvanceLoop *);
