/* SgSurrogate: the generic part of every surrogate (life cycle, registry). */
#include <string.h>
#include "sgsurrogateimpl.h"

PetscClassId      SG_SURROGATE_CLASSID;
PetscFunctionList SgSurrogateList;
PetscLogEvent     SG_SURROGATE_Train, SG_SURROGATE_Predict;
static PetscBool  initialized;

static PetscErrorCode SgSurrogateFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&SgSurrogateList));
  initialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgSurrogateInitializePackage(void)
{
  PetscFunctionBegin;
  if (initialized) PetscFunctionReturn(PETSC_SUCCESS);
  initialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("SgSurrogate", &SG_SURROGATE_CLASSID));
  PetscCall(PetscLogEventRegister("SgSurrogateTrain", SG_SURROGATE_CLASSID, &SG_SURROGATE_Train));
  PetscCall(PetscLogEventRegister("SgSurrogatePredict", SG_SURROGATE_CLASSID, &SG_SURROGATE_Predict));
  PetscCall(PetscRegisterFinalize(SgSurrogateFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateRegister(const char name[], PetscErrorCode (*create)(SgSurrogate))
{
  PetscFunctionBegin;
  PetscCall(SgSurrogateInitializePackage());
  PetscCall(PetscFunctionListAdd(&SgSurrogateList, name, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateCreate(MPI_Comm comm, SgSurrogate *sur)
{
  SgSurrogate s;

  PetscFunctionBegin;
  PetscValidPointer(sur, 2);
  PetscCall(SgSurrogateInitializePackage());
  PetscCall(PetscHeaderCreate(s, SG_SURROGATE_CLASSID, "SgSurrogate", "Trainable surrogate model", "SgSurrogate", comm, SgSurrogateDestroy, SgSurrogateView));
  *sur = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateSetType(SgSurrogate s, SgSurrogateType type)
{
  PetscErrorCode (*create)(SgSurrogate);
  PetscBool match;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SURROGATE_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)s, type, &match));
  if (match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFunctionListFind(SgSurrogateList, type, &create));
  if (!create) {
    char known[512];
    PetscCall(SgFunctionListNames(SgSurrogateList, known, sizeof known));
    SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "Unknown surrogate type '%s'; this build has: %s", type, known);
  }
  PetscCheck(!s->data, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "SgSurrogateSetType() may be called once per surrogate");
  PetscCall(PetscObjectChangeTypeName((PetscObject)s, type));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)s, type));
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)s, "_"));
  PetscCall((*create)(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateGetType(SgSurrogate s, SgSurrogateType *type)
{
  PetscFunctionBegin;
  *type = ((PetscObject)s)->type_name;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateSetFromOptions(SgSurrogate s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SURROGATE_CLASSID, 1);
  PetscCheck(((PetscObject)s)->type_name, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "Set the surrogate type before SgSurrogateSetFromOptions()");
  PetscObjectOptionsBegin((PetscObject)s);
  if (s->ops->setfromoptions) PetscCall((*s->ops->setfromoptions)(s, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateSetUp(SgSurrogate s)
{
  PetscFunctionBegin;
  if (s->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  if (s->ops->setup) PetscCall((*s->ops->setup)(s));
  s->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateTrain(SgSurrogate s)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->train, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Surrogate type %s cannot be trained", ((PetscObject)s)->type_name);
  PetscCall(SgSurrogateSetUp(s));
  PetscCall(PetscLogEventBegin(SG_SURROGATE_Train, s, 0, 0, 0));
  PetscCall((*s->ops->train)(s));
  PetscCall(PetscLogEventEnd(SG_SURROGATE_Train, s, 0, 0, 0));
  s->trained = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateSave(SgSurrogate s, const char path[])
{
  PetscFunctionBegin;
  PetscCheck(s->ops->save, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Surrogate type %s cannot be saved", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->save)(s, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateLoad(SgSurrogate s, const char path[])
{
  PetscFunctionBegin;
  PetscCheck(s->ops->load, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Surrogate type %s cannot be loaded", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->load)(s, path));
  s->trained = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateServes(SgSurrogate s, const char kind[], PetscBool *serves)
{
  PetscBool f, r, a;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(kind, "md.forces", &f));
  PetscCall(PetscStrcmp(kind, "field.superres", &r));
  PetscCall(PetscStrcmp(kind, "field.advance", &a));
  PetscCheck(f || r || a, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown slot kind '%s' (known: md.forces, field.superres, field.advance)", kind);
  *serves = (f && s->ops->forcesprovider) || (r && s->ops->superresprovider) || (a && s->ops->advanceprovider) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateServesForces(SgSurrogate s, PetscBool *serves)
{
  PetscFunctionBegin;
  PetscCall(SgSurrogateServes(s, "md.forces", serves));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateTypeServes(const char type[], const char kind[], PetscBool *serves)
{
  SgSurrogate s;

  PetscFunctionBegin;
  PetscCall(SgSurrogateCreate(PETSC_COMM_SELF, &s));
  PetscCall(SgSurrogateSetType(s, type));
  PetscCall(SgSurrogateServes(s, kind, serves));
  PetscCall(SgSurrogateDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateTypeNamesServing(const char kind[], char names[], size_t len)
{
  char sur[512], *tok, *save = NULL;

  PetscFunctionBegin;
  names[0] = 0;
  PetscCall(SgSurrogateTypeNames(sur, sizeof sur));
  for (tok = strtok_r(sur, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    PetscBool serves, none;
    PetscCall(PetscStrcmp(tok, "(none)", &none));
    if (none) continue;
    PetscCall(SgSurrogateTypeServes(tok, kind, &serves));
    if (!serves) continue;
    if (names[0]) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, tok, len));
  }
  if (!names[0]) PetscCall(PetscStrncpy(names, "(none)", len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateGetFieldSuperresProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldSuperresProvider *p)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->superresprovider, info->comm, PETSC_ERR_USER_INPUT, "Surrogate type %s cannot serve the field.superres slot", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->superresprovider)(s, info, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateGetFieldAdvanceProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldAdvanceProvider *p)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->advanceprovider, info->comm, PETSC_ERR_USER_INPUT, "Surrogate type %s cannot serve the field.advance slot", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->advanceprovider)(s, info, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateGetForcesProvider(SgSurrogate s, const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->forcesprovider, info->comm, PETSC_ERR_USER_INPUT, "Surrogate type %s cannot serve the md.forces slot", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->forcesprovider)(s, info, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateTypeNames(char names[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(SgFunctionListNames(SgSurrogateList, names, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateTypeRegistered(const char type[], PetscBool *registered)
{
  PetscErrorCode (*create)(SgSurrogate) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListFind(SgSurrogateList, type, &create));
  *registered = create ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateView(SgSurrogate s, PetscViewer viewer)
{
  PetscFunctionBegin;
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)s), &viewer));
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)s, viewer));
  if (s->ops->view) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall((*s->ops->view)(s, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSurrogateDestroy(SgSurrogate *s)
{
  PetscFunctionBegin;
  if (!*s) PetscFunctionReturn(PETSC_SUCCESS);
  PetscValidHeaderSpecific(*s, SG_SURROGATE_CLASSID, 1);
  if (--((PetscObject)(*s))->refct > 0) {
    *s = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((*s)->ops->destroy) PetscCall((*(*s)->ops->destroy)(*s));
  PetscCall(PetscHeaderDestroy(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}
