/* A `surge run` for the field-slot tests of physics/boussinesq (tests/regression/boussinesq/slots_test.py):
   the same driver as bin/surge run, plus a test-only surrogate type "advance_persist" serving the
   field.advance slot with known behaviour:

     answer       persistence: every requested snapshot is the history's last one (so the solver's state
                  stands still while it serves: the test knows the fields exactly);
     needs        boussinesq_persist_history snapshots of history (default 2: the first call of a run,
                  with the initial snapshot only, must be held back and served by the solver);
     uncertainty  boussinesq_persist_unc_amp x (k mod P) / P, k = round(t_last / boussinesq_advance_dt),
                  P = boussinesq_persist_unc_period: a sawtooth in the time of the newest snapshot, so
                  the test knows when it crosses the trust band (and a restart sees the same values).

   It is not registered in src/cli/register.c: it is useful to tests only.
   Usage: test_bq_slots DECK.yaml [-option value ...] (as surge run). */
#include "../../lib/sgtestrun.h"
#include "sgsurrogateimpl.h"
#include "sgfield.h"

typedef struct {
  PetscInt  history, period;
  PetscReal amp, dt;
} Persist;

static PetscErrorCode PersistAdvance(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  const SgFieldBlock *h  = in->history;
  const PetscInt      sz = h->n[1] * h->n[2], H = h->n[0];

  PetscFunctionBegin;
  (void)ctx;
  for (PetscInt c = 0; c < h->nch; c++)
    for (PetscInt k = 0; k < in->nnext; k++) PetscCall(PetscArraycpy(out->v + (c * in->nnext + k) * sz, h->v + (c * H + H - 1) * sz, sz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PersistUncertainty(void *ctx, const SgFieldAdvanceInput *in, PetscReal *u)
{
  Persist       *p = (Persist *)ctx;
  const PetscInt k = (PetscInt)PetscFloorReal(in->history->coord[0][in->history->n[0] - 1] / p->dt + 0.5);

  PetscFunctionBegin;
  *u = p->amp * (PetscReal)(k % p->period) / p->period;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PersistProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldAdvanceProvider *prov)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  Persist          *p                  = (Persist *)s->data;

  PetscFunctionBegin;
  PetscCall(SgOptionsInt("-persist_history", "test surrogate: history it needs", p->history, &p->history, NULL, 1, 64));
  PetscCall(SgOptionsInt("-persist_unc_period", "test surrogate: sawtooth period (snapshots)", p->period, &p->period, NULL, 1, 1 << 20));
  PetscCall(SgOptionsReal("-persist_unc_amp", "test surrogate: sawtooth amplitude", "", p->amp, &p->amp, NULL, 0, 1e6));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-boussinesq_advance_dt", &p->dt, NULL));
  prov->fn          = PersistAdvance;
  prov->ctx         = p;
  prov->uncertainty = PersistUncertainty;
  prov->history     = p->history;
  prov->dt          = p->dt;
  PetscCall(PetscStrncpy(prov->uncertainty_units, "test units", sizeof prov->uncertainty_units));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PersistDestroy(SgSurrogate s)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PersistCreate(SgSurrogate s)
{
  Persist *p;

  PetscFunctionBegin;
  PetscCall(PetscNew(&p));
  p->history              = 2;
  p->period               = 4;
  p->amp                  = 1;
  p->dt                   = 1;
  s->data                 = p;
  s->ops->advanceprovider = PersistProvider;
  s->ops->destroy         = PersistDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Register(void)
{
  PetscFunctionBegin;
  PetscCall(SgSurrogateRegister("advance_persist", PersistCreate));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  return SgTestRun(argc, argv, "test_bq_slots", Register);
}
