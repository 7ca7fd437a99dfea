/* SgCheckpoint: a restart file. Written to NAME.tmp and renamed over NAME when complete, so a crash
   never leaves a broken latest checkpoint. A checkpoint records a fingerprint of everything that
   fixes the layout of the state (SgCheckpointLayoutInt/Real/String): restarting from a checkpoint
   written by a different deck fails, naming the first quantity that differs.

   The same solver code serves both directions: in write mode the Layout* calls store, in read mode
   they compare; the Write and Read calls move data. Reals are stored bit-exactly (restarts are bit-identical). */
#pragma once
#include <petscvec.h>
#include "sgsolver.h"

typedef enum { SG_CHECKPOINT_WRITE, SG_CHECKPOINT_READ } SgCheckpointMode;

PETSC_EXTERN PetscErrorCode SgCheckpointOpen(MPI_Comm, const char filename[], SgCheckpointMode, SgCheckpoint *);
PETSC_EXTERN PetscErrorCode SgCheckpointGetMode(SgCheckpoint, SgCheckpointMode *);
PETSC_EXTERN PetscErrorCode SgCheckpointLayoutInt(SgCheckpoint, const char name[], PetscInt value);
PETSC_EXTERN PetscErrorCode SgCheckpointLayoutReal(SgCheckpoint, const char name[], PetscReal value);
PETSC_EXTERN PetscErrorCode SgCheckpointLayoutString(SgCheckpoint, const char name[], const char value[]);
/* Read mode: does the checkpoint record layout quantity name? (A quantity recorded only from some
   version on: the solver decides what an older file without it implies.) Write mode: PETSC_FALSE. */
PETSC_EXTERN PetscErrorCode SgCheckpointLayoutHas(SgCheckpoint, const char name[], PetscBool *has);
PETSC_EXTERN PetscErrorCode SgCheckpointWriteVec(SgCheckpoint, const char name[], Vec);
PETSC_EXTERN PetscErrorCode SgCheckpointReadVec(SgCheckpoint, const char name[], Vec);
/* Small arrays replicated on every rank (identical values on all ranks). */
PETSC_EXTERN PetscErrorCode SgCheckpointWriteReals(SgCheckpoint, const char name[], PetscInt n, const PetscReal[]);
PETSC_EXTERN PetscErrorCode SgCheckpointReadReals(SgCheckpoint, const char name[], PetscInt n, PetscReal[]);
PETSC_EXTERN PetscErrorCode SgCheckpointWriteInts(SgCheckpoint, const char name[], PetscInt n, const PetscInt[]);
PETSC_EXTERN PetscErrorCode SgCheckpointReadInts(SgCheckpoint, const char name[], PetscInt n, PetscInt[]);
/* Write mode: flush, close and atomically rename into place. Read mode: close. */
/* Direction-free forms for a solver's single checkpoint op: they write when the checkpoint was opened
   for writing and read (into the same storage) when it was opened for reading, so one list of items
   serves both directions. */
PETSC_EXTERN PetscErrorCode SgCheckpointVec(SgCheckpoint, const char name[], Vec);
PETSC_EXTERN PetscErrorCode SgCheckpointReals(SgCheckpoint, const char name[], PetscInt n, PetscReal[]);
PETSC_EXTERN PetscErrorCode SgCheckpointInts(SgCheckpoint, const char name[], PetscInt n, PetscInt[]);
PETSC_EXTERN PetscErrorCode SgCheckpointIsReading(SgCheckpoint, PetscBool *);
/* A string on the checkpoint (e.g. the run id): written in write mode; read returns "" if absent. */
PETSC_EXTERN PetscErrorCode SgCheckpointWriteString(SgCheckpoint, const char name[], const char value[]);
PETSC_EXTERN PetscErrorCode SgCheckpointReadString(SgCheckpoint, const char name[], char value[], size_t len);
PETSC_EXTERN PetscErrorCode SgCheckpointClose(SgCheckpoint *);
