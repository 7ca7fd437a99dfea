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
  PetscErrorCode (*checkpoint)(SgSolver, SgCheckpoint);
  PetscErrorCode (*restart)(SgSolver, SgCheckpoint);
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
};
