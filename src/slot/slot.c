/* SgSlot: a named, typed, swappable operator. This file holds the provider bookkeeping; the swap
   policies (static/schedule/adaptive) arrive with the surrogates and will live beside it. */
#include <string.h>
#include "sgslot.h"

#define SG_SLOT_MAX_PROVIDERS 8

struct _n_SgSlot {
  char   *name;
  char   *provider;
  void  (*fn)(void);
  void   *ctx;
  /* calls served per provider name, so the output can say who served what */
  PetscInt nprov;
  char    *prov_name[SG_SLOT_MAX_PROVIDERS];
  PetscInt prov_calls[SG_SLOT_MAX_PROVIDERS];
};

static const char *const known_slots[] = {"md.forces", "field.advance", "field.superres", NULL};

PetscErrorCode SgSlotCreate(const char name[], SgSlot *slot)
{
  PetscBool known = PETSC_FALSE;

  PetscFunctionBegin;
  for (const char *const *k = known_slots; *k; k++)
    if (!strcmp(*k, name)) known = PETSC_TRUE;
  PetscCheck(known, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Unknown slot signature '%s' (known: md.forces, field.advance, field.superres)", name);
  PetscCall(PetscNew(slot));
  PetscCall(PetscStrallocpy(name, &(*slot)->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetName(SgSlot slot, const char **name)
{
  PetscFunctionBegin;
  *name = slot->name;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotSetProvider(SgSlot slot, const char pname[], void (*fn)(void), void *ctx)
{
  PetscFunctionBegin;
  PetscCheck(fn, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Slot %s: provider %s has no function", slot->name, pname);
  PetscCall(PetscFree(slot->provider));
  PetscCall(PetscStrallocpy(pname, &slot->provider));
  slot->fn  = fn;
  slot->ctx = ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotGetProvider(SgSlot slot, const char **pname, void (**fn)(void), void **ctx)
{
  PetscFunctionBegin;
  if (pname) *pname = slot->provider;
  if (fn) *fn = slot->fn;
  if (ctx) *ctx = slot->ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CountCall(SgSlot slot)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < slot->nprov; i++)
    if (!strcmp(slot->prov_name[i], slot->provider)) {
      slot->prov_calls[i]++;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  PetscCheck(slot->nprov < SG_SLOT_MAX_PROVIDERS, PETSC_COMM_SELF, PETSC_ERR_SUP, "Slot %s: too many providers", slot->name);
  PetscCall(PetscStrallocpy(slot->provider, &slot->prov_name[slot->nprov]));
  slot->prov_calls[slot->nprov++] = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotComputeForces(SgSlot slot, const SgForcesInput *in, SgForcesOutput *out)
{
  PetscFunctionBegin;
  PetscCheck(!strcmp(slot->name, "md.forces"), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Slot %s is not an md.forces slot", slot->name);
  PetscCheck(slot->fn, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Slot md.forces has no provider: choose one in the deck (e.g. md: {forces: lj})");
  PetscCall(CountCall(slot));
  PetscCall(((SgForcesFn)slot->fn)(slot->ctx, in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSlotDestroy(SgSlot *slot)
{
  PetscFunctionBegin;
  if (!*slot) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < (*slot)->nprov; i++) PetscCall(PetscFree((*slot)->prov_name[i]));
  PetscCall(PetscFree((*slot)->provider));
  PetscCall(PetscFree((*slot)->name));
  PetscCall(PetscFree(*slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}
