/* The field slot kinds (sgfield.h): providers served by surrogate types, and the block/query helpers
   that callers and providers share. */
#include <string.h>
#include "sgfield.h"
#include "sgsurrogate.h"

/* The surrogate of type `type` for slot kind `kind`, after checking that the type exists and serves
   the kind (one user-input error naming the types that do otherwise). */
static PetscErrorCode SurrogateFor(const char kind[], const char type[], MPI_Comm comm, SgSurrogate *s)
{
  PetscBool registered, serves = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(SgSurrogateTypeRegistered(type, &registered));
  if (registered) PetscCall(SgSurrogateTypeServes(type, kind, &serves));
  if (!serves) {
    char names[512];
    PetscCall(SgSurrogateTypeNamesServing(kind, names, sizeof names));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s: %s '%s' (surrogate types that serve %s: %s)", kind, registered ? "the surrogate type cannot serve this slot:" : "no surrogate type", type, kind, names);
  }
  PetscCall(SgSurrogateCreate(comm, s));
  PetscCall(SgSurrogateSetType(*s, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgFieldSuperresProviderCreate(const char type[], const SgFieldProviderInfo *info, SgFieldSuperresProvider *p)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscCall(SurrogateFor("field.superres", type, info->comm, &p->surrogate));
  PetscCall(SgSurrogateGetFieldSuperresProvider(p->surrogate, info, p));
  PetscCheck(p->fn, info->comm, PETSC_ERR_PLIB, "field.superres: surrogate '%s' set no function", type);
  if (!p->name[0]) PetscCall(PetscStrncpy(p->name, type, sizeof p->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgFieldSuperresProviderDestroy(SgFieldSuperresProvider *p)
{
  PetscFunctionBegin;
  if (p->destroy) PetscCall(p->destroy(p->ctx));
  PetscCall(SgSurrogateDestroy(&p->surrogate));
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgFieldAdvanceProviderCreate(const char type[], const SgFieldProviderInfo *info, SgFieldAdvanceProvider *p)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscCall(SurrogateFor("field.advance", type, info->comm, &p->surrogate));
  PetscCall(SgSurrogateGetFieldAdvanceProvider(p->surrogate, info, p));
  PetscCheck(p->fn, info->comm, PETSC_ERR_PLIB, "field.advance: surrogate '%s' set no function", type);
  if (!p->name[0]) PetscCall(PetscStrncpy(p->name, type, sizeof p->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgFieldAdvanceProviderDestroy(SgFieldAdvanceProvider *p)
{
  PetscFunctionBegin;
  if (p->destroy) PetscCall(p->destroy(p->ctx));
  PetscCall(SgSurrogateDestroy(&p->surrogate));
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt SgFieldQueryCount(const SgFieldQuery *q)
{
  return q->grid ? q->n[0] * q->n[1] * q->n[2] : q->npoints;
}

void SgFieldQueryPoint(const SgFieldQuery *q, PetscInt i, PetscReal pt[3])
{
  if (!q->grid) {
    for (int a = 0; a < 3; a++) pt[a] = q->pts[3 * i + a];
    return;
  }
  pt[2] = q->coord[2][i % q->n[2]];
  pt[1] = q->coord[1][(i / q->n[2]) % q->n[1]];
  pt[0] = q->coord[0][i / (q->n[2] * q->n[1])];
}

PetscInt SgFieldBlockSize(const SgFieldBlock *b)
{
  return b->nch * b->n[0] * b->n[1] * b->n[2];
}

PetscInt SgFieldBlockChannel(const SgFieldBlock *b, const char name[])
{
  for (PetscInt c = 0; c < b->nch; c++)
    if (!strcmp(b->channel[c], name)) return c;
  return -1;
}

PetscErrorCode SgFieldBlockSpacing(const SgFieldBlock *b, PetscInt a, PetscReal rtol, PetscBool *uniform, PetscReal *h)
{
  const PetscReal *x = b->coord[a];
  const PetscInt   n = b->n[a];

  PetscFunctionBegin;
  *uniform = PETSC_TRUE;
  *h       = n > 1 ? (x[n - 1] - x[0]) / (n - 1) : 0;
  for (PetscInt i = 0; i + 1 < n; i++)
    if (PetscAbsReal(x[i + 1] - x[i] - *h) > rtol * PetscAbsReal(*h)) *uniform = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgFieldBlockCheck(MPI_Comm comm, const char who[], const SgFieldBlock *b)
{
  const char *ax[3] = {"t", "z", "x"};
  PetscInt    size;

  PetscFunctionBegin;
  PetscCheck(b->nch >= 1 && b->nch <= SG_FIELD_MAX_CHANNELS && b->channel, comm, PETSC_ERR_ARG_WRONG, "%s: a block needs 1 to %d named channels (has %" PetscInt_FMT ")", who, SG_FIELD_MAX_CHANNELS, b->nch);
  for (int a = 0; a < 3; a++) {
    PetscCheck(b->n[a] >= 1 && b->coord[a], comm, PETSC_ERR_ARG_WRONG, "%s: block axis %s has %" PetscInt_FMT " points and %s coordinates", who, ax[a], b->n[a], b->coord[a] ? "" : "no");
    for (PetscInt i = 0; i + 1 < b->n[a]; i++) PetscCheck(b->coord[a][i + 1] > b->coord[a][i], comm, PETSC_ERR_ARG_WRONG, "%s: block coordinates along %s are not increasing at point %" PetscInt_FMT " (%g, %g)", who, ax[a], i, (double)b->coord[a][i], (double)b->coord[a][i + 1]);
  }
  size = SgFieldBlockSize(b);
  for (PetscInt i = 0; i < size; i++) PetscCheck(!PetscIsInfOrNanReal(b->v[i]), comm, PETSC_ERR_ARG_WRONG, "%s: block value %" PetscInt_FMT " (channel %s) is %g", who, i, b->channel[i / (size / b->nch)], (double)b->v[i]);
  PetscFunctionReturn(PETSC_SUCCESS);
}
