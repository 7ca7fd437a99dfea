/* Private definition of SgSurrogate, for implementations of surrogate types only. */
#pragma once
#include <petsc/private/petscimpl.h>
#include "sgsurrogate.h"

typedef struct _SgSurrogateOps *SgSurrogateOps;
struct _SgSurrogateOps {
  PetscErrorCode (*setfromoptions)(SgSurrogate, PetscOptionItems *);
  PetscErrorCode (*setup)(SgSurrogate);
  PetscErrorCode (*train)(SgSurrogate);
  PetscErrorCode (*save)(SgSurrogate, const char[]);
  PetscErrorCode (*load)(SgSurrogate, const char[]);
  /* one typed provider op per slot kind a type can serve (NULL: it cannot) */
  PetscErrorCode (*forcesprovider)(SgSurrogate, const SgForcesProviderInfo *, SgForcesProvider *);          /* md.forces */
  PetscErrorCode (*superresprovider)(SgSurrogate, const SgFieldProviderInfo *, SgFieldSuperresProvider *); /* field.superres */
  PetscErrorCode (*advanceprovider)(SgSurrogate, const SgFieldProviderInfo *, SgFieldAdvanceProvider *);   /* field.advance */
  PetscErrorCode (*view)(SgSurrogate, PetscViewer);
  PetscErrorCode (*destroy)(SgSurrogate);
};

struct _p_SgSurrogate {
  PETSCHEADER(struct _SgSurrogateOps);
  PetscBool setupcalled, trained;
  void     *data;
};
