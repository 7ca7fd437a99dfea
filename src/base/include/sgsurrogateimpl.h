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
  PetscErrorCode (*forcesprovider)(SgSurrogate, const SgForcesProviderInfo *, SgForcesProvider *); /* md.forces */
  PetscErrorCode (*view)(SgSurrogate, PetscViewer);
  PetscErrorCode (*destroy)(SgSurrogate);
};

struct _p_SgSurrogate {
  PETSCHEADER(struct _SgSurrogateOps);
  PetscBool setupcalled, trained;
  void     *data;
};
