/* The md.forces provider registry (see sgforces.h): solver providers by name, and surrogates that
   serve md.forces through SgSurrogate. */
#include <string.h>
#include "sgforces.h"
#include "sgsurrogate.h"

static PetscFunctionList SgForcesProviderList = NULL;

static PetscErrorCode SgForcesFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&SgForcesProviderList));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgForcesProviderRegister(const char name[], SgForcesProviderCreateFn create)
{
  PetscFunctionBegin;
  if (!SgForcesProviderList) PetscCall(PetscRegisterFinalize(SgForcesFinalizePackage));
  PetscCall(PetscFunctionListAdd(&SgForcesProviderList, name, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgForcesProviderNames(char names[], size_t len)
{
  char sur[512];

  PetscFunctionBegin;
  PetscCall(SgFunctionListNames(SgForcesProviderList, names, len));
  PetscCall(SgSurrogateTypeNamesServing("md.forces", sur, sizeof sur));
  if (strcmp(sur, "(none)")) {
    if (names[0]) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, sur, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgForcesProviderCreate(const char name[], const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  SgForcesProviderCreateFn create = NULL;
  PetscBool                serves = PETSC_FALSE, issur;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscCall(PetscFunctionListFind(SgForcesProviderList, name, &create));
  if (create) PetscCall((*create)(info, p));
  else {
    PetscCall(SgSurrogateTypeRegistered(name, &issur));
    if (issur) PetscCall(SgSurrogateTypeServes(name, "md.forces", &serves));
    if (!serves) {
      char names[512];
      PetscCall(SgForcesProviderNames(names, sizeof names));
      SETERRQ(info->comm, PETSC_ERR_USER_INPUT, "md.forces: no force provider '%s' is registered%s (known: %s)", name, issur ? " (a surrogate type of that name exists but cannot serve md.forces)" : " and no surrogate type of that name serves md.forces", names);
    }
    PetscCall(SgSurrogateCreate(info->comm, &p->surrogate));
    PetscCall(SgSurrogateSetType(p->surrogate, name));
    PetscCall(SgSurrogateGetForcesProvider(p->surrogate, info, p));
  }
  PetscCheck(p->fn, info->comm, PETSC_ERR_PLIB, "md.forces: provider '%s' set no force function", name);
  PetscCheck(p->cutoff > 0, info->comm, PETSC_ERR_PLIB, "md.forces: provider '%s' reported cutoff %g; it must be positive", name, (double)p->cutoff);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgForcesProviderDestroy(SgForcesProvider *p)
{
  PetscFunctionBegin;
  if (p->destroy) PetscCall(p->destroy(p->ctx));
  PetscCall(SgSurrogateDestroy(&p->surrogate));
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
