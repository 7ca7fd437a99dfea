/* SgSim: one run — communicator, deck, output file, clock, the solver.

   SgSimCreate -> SgSimSetFromOptions (reads sim_*, creates and configures the solver) -> SgSimSetUp
   (solver setup, rejects unused options, opens output or restarts) -> SgSimRun -> SgSimDestroy.
   Nothing is written before SgSimSetUp has validated every option. */
#pragma once
#include "sgsolver.h"

typedef struct _p_SgSim *SgSim;
PETSC_EXTERN PetscClassId SG_SIM_CLASSID;

PETSC_EXTERN PetscErrorCode SgSimCreate(MPI_Comm, SgSim *);
/* The deck path and the command line, recorded as provenance and used for error messages. */
PETSC_EXTERN PetscErrorCode SgSimSetDeck(SgSim, const char deck[], int argc, char **argv);
PETSC_EXTERN PetscErrorCode SgSimSetFromOptions(SgSim);
/* Quiet runs (ensemble members) print no progress lines. */
PETSC_EXTERN PetscErrorCode SgSimSetQuiet(SgSim, PetscBool);
/* A quiet run that still stops on SIGTERM/SIGUSR1 at a step boundary with its checkpoint (an ensemble
   member: its ensemble resumes it); SgSimGetStopped gives the step it stopped at (0: it did not). */
PETSC_EXTERN PetscErrorCode SgSimSetStopOnSignal(SgSim, PetscBool);
PETSC_EXTERN PetscErrorCode SgSimGetStopped(SgSim, PetscInt *step);
PETSC_EXTERN PetscErrorCode SgSimSetUp(SgSim);
/* True when -help was given: options were listed, nothing should run. */
PETSC_EXTERN PetscErrorCode SgSimHelpOnly(SgSim, PetscBool *);
PETSC_EXTERN PetscErrorCode SgSimRun(SgSim);
PETSC_EXTERN PetscErrorCode SgSimGetSolver(SgSim, SgSolver *);
PETSC_EXTERN PetscErrorCode SgSimGetTime(SgSim, PetscReal *t, PetscInt *step);
PETSC_EXTERN PetscErrorCode SgSimDestroy(SgSim *);
