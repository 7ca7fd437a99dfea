/* SgSurrogate: a trainable model that can serve a slot in place of a solver (PETSc-style object;
   PetscRegressor is the closest model).

   Life cycle: SgSurrogateCreate -> SgSurrogateSetType / SetFromOptions -> SgSurrogateSetUp ->
   SgSurrogateTrain (reads its datasets, trains, checkpoints) and/or SgSurrogateLoad ->
   SgSurrogateGetProvider (a slot-typed function the slot calls) -> SgSurrogateSave -> Destroy.

   A type registers with SgSurrogateRegister(name, SgSurrogateCreate_Xxx); options prefix is the
   type name + "_" (deck section `deepmd:` for type deepmd). `surge train DECK` drives it:
     train: {surrogate: deepmd, output: water_model}   -> writes water_model.h5 */
#pragma once
#include <petscsys.h>
#include <petscviewer.h>
#include "sgsys.h"
#include "sgslot.h"

typedef struct _p_SgSurrogate *SgSurrogate;
typedef const char            *SgSurrogateType;

PETSC_EXTERN PetscClassId      SG_SURROGATE_CLASSID;
PETSC_EXTERN PetscFunctionList SgSurrogateList;
PETSC_EXTERN PetscLogEvent     SG_SURROGATE_Train, SG_SURROGATE_Predict;

PETSC_EXTERN PetscErrorCode SgSurrogateRegister(const char[], PetscErrorCode (*)(SgSurrogate));
PETSC_EXTERN PetscErrorCode SgSurrogateCreate(MPI_Comm, SgSurrogate *);
PETSC_EXTERN PetscErrorCode SgSurrogateSetType(SgSurrogate, SgSurrogateType);
PETSC_EXTERN PetscErrorCode SgSurrogateGetType(SgSurrogate, SgSurrogateType *);
PETSC_EXTERN PetscErrorCode SgSurrogateSetFromOptions(SgSurrogate);
PETSC_EXTERN PetscErrorCode SgSurrogateSetUp(SgSurrogate);
/* Train on the datasets the type's options name; collective (data-parallel over the comm). */
PETSC_EXTERN PetscErrorCode SgSurrogateTrain(SgSurrogate);
/* Model files are HDF5: config as attributes, weights (one slab), normalisation statistics. */
PETSC_EXTERN PetscErrorCode SgSurrogateSave(SgSurrogate, const char path[]);
PETSC_EXTERN PetscErrorCode SgSurrogateLoad(SgSurrogate, const char path[]);
/* A provider for slot `slot` (e.g. "md.forces": fn is an SgForcesFn); fails clearly if the type
   cannot serve that slot. uncertainty (may be NULL) estimates the provider's error for the same
   input (for md.forces: the max force deviation of a model ensemble, SgForcesUncertaintyFn). */
PETSC_EXTERN PetscErrorCode SgSurrogateGetProvider(SgSurrogate, const char slot[], void (**fn)(void), void (**uncertainty)(void), void **ctx);
PETSC_EXTERN PetscErrorCode SgSurrogateView(SgSurrogate, PetscViewer);
PETSC_EXTERN PetscErrorCode SgSurrogateDestroy(SgSurrogate *);
