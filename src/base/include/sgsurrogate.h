/* SgSurrogate: a trainable model that can serve a slot in place of a solver (PETSc-style object;
   PetscRegressor is the closest model).

   Life cycle: SgSurrogateCreate -> SgSurrogateSetType / SetFromOptions -> SgSurrogateSetUp ->
   SgSurrogateTrain (reads its datasets, trains, checkpoints) and/or SgSurrogateLoad ->
   SgSurrogateGetForcesProvider (a provider of the md.forces slot kind, typed as sgforces.h declares),
   SgSurrogateGetFieldSuperresProvider (field.superres) or SgSurrogateGetFieldAdvanceProvider
   (field.advance, both sgfield.h): one call per slot kind a type can serve -> SgSurrogateSave -> Destroy.

   A type registers with SgSurrogateRegister(name, SgSurrogateCreate_Xxx); options prefix is the
   type name + "_" (deck section `deepmd:` for type deepmd). `surge train DECK` drives it:
     train: {surrogate: deepmd, output: water_model}   -> writes water_model.h5 */
#pragma once
#include <petscsys.h>
#include <petscviewer.h>
#include "sgsys.h"
#include "sgforces.h"
#include "sgfield.h"

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
/* The md.forces provider this surrogate serves (the type reads its own options, e.g. the model files,
   from info's options block); an error naming the type if it cannot serve md.forces. */
PETSC_EXTERN PetscErrorCode SgSurrogateGetForcesProvider(SgSurrogate, const SgForcesProviderInfo *, SgForcesProvider *);
PETSC_EXTERN PetscErrorCode SgSurrogateServesForces(SgSurrogate, PetscBool *);
/* The field.superres / field.advance provider this surrogate serves; an error naming the type if it
   cannot serve that kind. */
PETSC_EXTERN PetscErrorCode SgSurrogateGetFieldSuperresProvider(SgSurrogate, const SgFieldProviderInfo *, SgFieldSuperresProvider *);
PETSC_EXTERN PetscErrorCode SgSurrogateGetFieldAdvanceProvider(SgSurrogate, const SgFieldProviderInfo *, SgFieldAdvanceProvider *);
/* Whether a surrogate (or a registered type, without loading anything) serves slot kind `kind`
   ("md.forces", "field.superres", "field.advance"); an unknown kind is an error. */
PETSC_EXTERN PetscErrorCode SgSurrogateServes(SgSurrogate, const char kind[], PetscBool *);
PETSC_EXTERN PetscErrorCode SgSurrogateTypeServes(const char type[], const char kind[], PetscBool *);
/* comma-separated registered types that serve `kind` ("(none)" if none) */
PETSC_EXTERN PetscErrorCode SgSurrogateTypeNamesServing(const char kind[], char names[], size_t len);
/* comma-separated registered types; whether one is registered */
PETSC_EXTERN PetscErrorCode SgSurrogateTypeNames(char names[], size_t len);
PETSC_EXTERN PetscErrorCode SgSurrogateTypeRegistered(const char type[], PetscBool *);
PETSC_EXTERN PetscErrorCode SgSurrogateView(SgSurrogate, PetscViewer);
PETSC_EXTERN PetscErrorCode SgSurrogateDestroy(SgSurrogate *);
