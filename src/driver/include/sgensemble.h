/* SgEnsemble: N members = the deck + perturbations of some of its options, run concurrently on MPI
   sub-communicators and gathered into one training dataset (docs/ensemble.md).

   Members are handed out dynamically (a shared counter in an MPI window), so uneven members do not
   leave groups idle. Each member runs an ordinary SgSim writing ENS.members/member_NNNNN.h5 and,
   when it has finished, a marker member_NNNNN.done (written atomically). A rerun of the same command
   skips members that have their marker, so a killed ensemble finishes only what is missing. The
   dataset ENS.h5 is assembled from the members' files by rank 0 at the end, written to a temporary
   name and renamed, so it never holds half a member. Several jobs may share one ensemble directory
   (a job array): a group runs a member only after claiming it (claim.c: O_CREAT|O_EXCL claim files
   with a heartbeat, stale ones taken over), and the job that finds every member done merges. */
#pragma once
#include "sgsim.h"

typedef enum { SG_SAMPLER_GRID, SG_SAMPLER_UNIFORM, SG_SAMPLER_LHS } SgSamplerType;
PETSC_EXTERN const char *const SgSamplerTypes[];

/* Unit-cube sample points u[m*d + j] in [0,1) for member m, parameter j. For grid, points[j]
   per dimension (members = product, first parameter fastest) and u are cell centres. */
PETSC_EXTERN PetscErrorCode SgSamplerUnitPoints(SgSamplerType, PetscInt members, PetscInt d, const PetscInt points[], uint64_t seed, PetscReal u[]);

typedef struct _p_SgEnsemble *SgEnsemble;
PETSC_EXTERN PetscErrorCode SgEnsembleCreate(MPI_Comm, SgEnsemble *);
PETSC_EXTERN PetscErrorCode SgEnsembleSetDeck(SgEnsemble, const char deck[], int argc, char **argv);
PETSC_EXTERN PetscErrorCode SgEnsembleSetFromOptions(SgEnsemble);
PETSC_EXTERN PetscErrorCode SgEnsembleRun(SgEnsemble);
PETSC_EXTERN PetscErrorCode SgEnsembleDestroy(SgEnsemble *);
