/* A `surge run` for the runtime-swap tests (tests/regression/swap/swap_test.py): the same driver as
   bin/surge run, plus a test-only md.forces provider "lj_scaled" that stands in for a surrogate
   with known behaviour:

     forces, energy, virial = (1 + md_swaptest_delta) x those of the built-in "lj" provider (the same
       as LJ with epsilon scaled by 1 + delta: a surrogate with a known, small, systematic error);
     uncertainty(step) = md_swaptest_unc_amp * (step mod P) / P, P = md_swaptest_unc_period (a
       sawtooth in the step whose configuration is evaluated: the test knows exactly when it
       crosses the trust band);
     at the steps listed in md_swaptest_nan_steps it returns NaN forces and energy (a broken
       surrogate answer that the slot must reject);
     with md_swaptest_newton it declares newton = true and moves 0.5 (force units, x component)
       from every owned atom to each of its periodic/ghost images held on the same rank: correct
       only if the engine reverse-communicates ghost forces for this provider's calls (and for
       them only), which the swap test checks against the plain provider.

   It is not registered in src/cli/register.c: it is useful to tests only.
   Usage: test_md_swap DECK.yaml [-option value ...] (as surge run). */
#include "../../lib/sgtestrun.h"
#include "sgforces.h"
#include "../../../physics/md/mdimpl.h" /* the engine's step counter (md->fstep) */

typedef struct {
  SgForcesProvider lj;
  SgMD             *md;
  PetscReal         scale, amp;
  PetscInt          period, nnan, nan[64];
  PetscBool         newton;
} ScaledCtx;

static PetscErrorCode ScaledForces(void *ctx, const SgForcesInput *in, SgForcesOutput *out)
{
  ScaledCtx *c = (ScaledCtx *)ctx;
  PetscInt   n = 3 * (in->n + in->nghost);

  PetscFunctionBegin;
  PetscCall(c->lj.fn(c->lj.ctx, in, out));
  for (PetscInt k = 0; k < c->nnan; k++)
    if (c->nan[k] == c->md->fstep) {
      for (PetscInt i = 0; i < n; i++) out->f[i] = NAN;
      out->energy = NAN;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  for (PetscInt i = 0; i < n; i++) out->f[i] *= c->scale;
  out->energy *= c->scale;
  for (int k = 0; k < 9; k++) out->virial[k] *= c->scale;
  if (c->newton) { /* ghost k: an image of atom id[k]; if that atom is owned here, shift 0.5 */
    SgMDDomain *dom = c->md->dom;
    PetscInt    maxid = 0, *loc;
    for (PetscInt i = 0; i < in->n; i++) maxid = PetscMax(maxid, dom->id[i]);
    PetscCall(PetscMalloc1(maxid + 1, &loc));
    for (PetscInt i = 0; i <= maxid; i++) loc[i] = -1;
    for (PetscInt i = 0; i < in->n; i++) loc[dom->id[i]] = i;
    for (PetscInt k = in->n; k < in->n + in->nghost; k++) {
      PetscInt id = dom->id[k];
      if (id <= maxid && loc[id] >= 0) {
        out->f[3 * loc[id]] -= 0.5;
        out->f[3 * k] += 0.5;
      }
    }
    PetscCall(PetscFree(loc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ScaledUncertainty(void *ctx, const SgForcesInput *in, PetscReal *dev)
{
  ScaledCtx *c = (ScaledCtx *)ctx;

  PetscFunctionBegin;
  *dev = c->amp * (PetscReal)(c->md->fstep % c->period) / (PetscReal)c->period;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ScaledDestroy(void *ctx)
{
  ScaledCtx *c = (ScaledCtx *)ctx;

  PetscFunctionBegin;
  if (c->lj.destroy) PetscCall(c->lj.destroy(c->lj.ctx));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateScaled(const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  ScaledCtx        *c;
  PetscReal         delta = 0.01;

  PetscFunctionBegin;
  PetscCall(PetscNew(&c));
  c->md     = (SgMD *)info->engine;
  c->amp    = 1.0;
  c->period = 10;
  c->nnan   = 64;
  PetscCall(SgOptionsReal("-swaptest_delta", "test surrogate: relative force error", "", delta, &delta, NULL, -0.5, 0.5));
  PetscCall(SgOptionsReal("-swaptest_unc_amp", "test surrogate: sawtooth amplitude of the uncertainty", "force", c->amp, &c->amp, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-swaptest_unc_period", "test surrogate: sawtooth period (steps)", c->period, &c->period, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsIntArray("-swaptest_nan_steps", "test surrogate: steps at which it returns NaN", c->nan, &c->nnan, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsBool("-swaptest_newton", "test surrogate: declare newton and put force on ghost images", c->newton, &c->newton, NULL));
  c->scale = 1 + delta;
  PetscCall(SgForcesProviderCreate("lj", info, &c->lj));
  *p             = c->lj;
  p->fn          = ScaledForces;
  p->ctx         = c;
  p->destroy     = ScaledDestroy;
  p->uncertainty = ScaledUncertainty;
  if (c->newton) p->newton = PETSC_TRUE;
  PetscCall(PetscStrncpy(p->name, "lj_scaled", sizeof p->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Register(void)
{
  PetscFunctionBegin;
  PetscCall(SgForcesProviderRegister("lj_scaled", CreateScaled));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  return SgTestRun(argc, argv, "test_md_swap", Register);
}
