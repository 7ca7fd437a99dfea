/* SgSolver: one physics solver (vlasov, md, dft, boussinesq, ...), PETSc-style object.

   Life cycle: SgSolverCreate -> SgSolverSetType / SgSolverSetFromOptions -> SgSolverSetUp ->
   (SgSolverGetTimeStep, SgSolverStep, SgSolverDiagnose, SgSolverWriteFields)* -> SgSolverReport ->
   SgSolverDestroy.  The driver (SgSim) owns time t and the step counter; a solver owns its state.

   An implementation registers a constructor with SgSolverRegister(); the constructor fills
   solver->ops and solver->data.  During setfromoptions/setup the implementation declares
   - its diagnostics (scalar time series, e.g. mass, energy) with SgSolverAddDiagnostic,
   - the slots it offers (swappable operators, e.g. md.forces) with SgSolverDeclareSlot,
   - what it checkpoints (SgCheckpoint* calls in ops->checkpoint / ops->restart). */
#pragma once
#include <petscsys.h>
#include <petscviewer.h>
#include "sgsys.h"

typedef struct _p_SgSolver   *SgSolver;
typedef struct _n_SgOutput   *SgOutput;     /* io/h5/sgoutput.h */
typedef struct _n_SgCheckpoint *SgCheckpoint; /* io/h5/sgcheckpoint.h */
typedef struct _n_SgSlot     *SgSlot;       /* src/base/include/sgslot.h */
typedef const char *SgSolverType;

PETSC_EXTERN PetscClassId      SG_SOLVER_CLASSID;
PETSC_EXTERN PetscFunctionList SgSolverList;

PETSC_EXTERN PetscErrorCode SgSolverRegister(const char[], PetscErrorCode (*)(SgSolver));
PETSC_EXTERN PetscErrorCode SgSolverCreate(MPI_Comm, SgSolver *);
PETSC_EXTERN PetscErrorCode SgSolverSetType(SgSolver, SgSolverType);
PETSC_EXTERN PetscErrorCode SgSolverGetType(SgSolver, SgSolverType *);
PETSC_EXTERN PetscErrorCode SgSolverSetFromOptions(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverSetUp(SgSolver);
/* Largest stable step from the current state at time t (CFL etc.). PETSC_MAX_REAL if unlimited. */
PETSC_EXTERN PetscErrorCode SgSolverGetTimeStep(SgSolver, PetscReal t, PetscReal *dtmax);
/* Advance the state from t to t + dt. */
PETSC_EXTERN PetscErrorCode SgSolverStep(SgSolver, PetscReal t, PetscReal dt);
/* Fill values[] (length = number of declared diagnostics); collective, identical on all ranks. */
PETSC_EXTERN PetscErrorCode SgSolverDiagnose(SgSolver, PetscReal t, PetscReal values[]);
PETSC_EXTERN PetscErrorCode SgSolverWriteFields(SgSolver, SgOutput);
/* Write a checkpoint / restore from one: the same op of the type does both (the checkpoint knows its
   direction), so what is written and what is read cannot drift apart. */
PETSC_EXTERN PetscErrorCode SgSolverCheckpoint(SgSolver, SgCheckpoint);
PETSC_EXTERN PetscErrorCode SgSolverRestart(SgSolver, SgCheckpoint);
/* Ask the solver to write training samples of `kind` (beyond its field snapshots, which every run
   output holds) to path during the run; an error naming the solver if it cannot. Call after
   SetFromOptions, before SetUp. SgSolverTypeContributes: whether a registered type can (no object
   needed by the caller), for checks made before anything runs. */
PETSC_EXTERN PetscErrorCode SgSolverContribute(SgSolver, const char kind[], const char path[]);
PETSC_EXTERN PetscErrorCode SgSolverTypeContributes(SgSolverType, const char kind[], PetscBool *);
/* End-of-run summary: printed on rank 0 and stored under /report in the output. */
PETSC_EXTERN PetscErrorCode SgSolverReport(SgSolver, SgOutput);
PETSC_EXTERN PetscErrorCode SgSolverView(SgSolver, PetscViewer);
PETSC_EXTERN PetscErrorCode SgSolverDestroy(SgSolver *);

/* Declarations made by implementations. */
PETSC_EXTERN PetscErrorCode SgSolverAddDiagnostic(SgSolver, const char name[], const char units[], PetscInt *index);
PETSC_EXTERN PetscErrorCode SgSolverGetDiagnostics(SgSolver, PetscInt *n, const char *const **names, const char *const **units);
/* The diagnostic shown in the rank-0 progress line (default: none). */
PETSC_EXTERN PetscErrorCode SgSolverSetProgressDiagnostic(SgSolver, PetscInt index);
PETSC_EXTERN PetscErrorCode SgSolverGetProgressDiagnostic(SgSolver, PetscInt *index);
PETSC_EXTERN PetscErrorCode SgSolverDeclareSlot(SgSolver, SgSlot);
PETSC_EXTERN PetscErrorCode SgSolverGetSlot(SgSolver, const char name[], SgSlot *);

/* What the driver tells a solver about the run, before SgSolverSetFromOptions: a solver learns these
   here, never by reading the driver's options (-restart, -sim_output, -sim_dt) from the database. A
   solver used outside a run (a test, surge train) sees the zero defaults. */
typedef struct {
  PetscBool restarting;                 /* the run continues from a checkpoint: append, do not truncate */
  char      output[PETSC_MAX_PATH_LEN]; /* the run's output base name ("" outside a run) */
  PetscReal dt;                         /* the driver's fixed step (0: the solver's stable step) */
} SgSolverRunInfo;
PETSC_EXTERN PetscErrorCode SgSolverSetRunInfo(SgSolver, const SgSolverRunInfo *);
PETSC_EXTERN PetscErrorCode SgSolverGetRunInfo(SgSolver, const SgSolverRunInfo **);

/* Log events shared by all solvers (each type may add its own phases). */
PETSC_EXTERN PetscLogEvent SG_SOLVER_Step, SG_SOLVER_Diagnose, SG_SOLVER_Output, SG_SOLVER_Checkpoint;
