/* Private definition of SgSolver, for implementations of solver types only. */
#pragma once
#include <petsc/private/petscimpl.h>
#include "sgsolver.h"

#define SG_SOLVER_MAX_DIAG 64
#define SG_SOLVER_MAX_SLOTS 8

typedef struct _SgSolverOps *SgSolverOps;
struct _SgSolverOps {
  PetscErrorCode (*setfromoptions)(SgSolver, PetscOptionItems *);
  PetscErrorCode (*setup)(SgSolver);
  PetscErrorCode (*timestep)(SgSolver, PetscReal, PetscReal *);
  PetscErrorCode (*step)(SgSolver, PetscReal, PetscReal);
  PetscErrorCode (*diagnose)(SgSolver, PetscReal, PetscReal[]);
  PetscErrorCode (*writefields)(SgSolver, SgOutput);
  /* one op for both directions: it reads or writes as the checkpoint was opened (SgCheckpointIsReading) */
  PetscErrorCode (*checkpoint)(SgSolver, SgCheckpoint);
  /* training samples of a kind other than the run output's field snapshots (e.g. "md_frames"): the
     solver writes them to path in that kind's file format (md_frames: H5MD); NULL path asks only
     whether it can (*can) */
  PetscErrorCode (*contribute)(SgSolver, const char kind[], const char path[], PetscBool *can);
  PetscErrorCode (*report)(SgSolver, SgOutput);
  PetscErrorCode (*view)(SgSolver, PetscViewer);
  PetscErrorCode (*destroy)(SgSolver);
};

struct _p_SgSolver {
  PETSCHEADER(struct _SgSolverOps);
  PetscBool   setupcalled;
  void       *data;
  PetscInt    ndiag, progress_diag;
  char       *diag_name[SG_SOLVER_MAX_DIAG];
  char       *diag_units[SG_SOLVER_MAX_DIAG];
  PetscInt    nslots;
  SgSlot      slots[SG_SOLVER_MAX_SLOTS];
  SgSolverRunInfo run; /* from the driver (SgSolverSetRunInfo) */
};
