/* Adapter: tight binding as the md.forces provider "tb" (the core's slot kind, sgforces.h; registered
   in src/cli/register.c).  Deck:  md: {forces: tb, tb: {elements: Si, method: submatrix, kt: 0.05}}
   (options -md_tb_*).  The elements default to the MD type names.  TB gathers the owned atoms itself,
   so it needs no ghost atoms and writes no ghost forces (newton false); metal units only. */
#include "sgtb.h"
#include "sgforces.h"

static PetscErrorCode TBDestroyCtx(void *ctx)
{
  SgTB t = (SgTB)ctx;

  PetscFunctionBegin;
  PetscCall(SgTBDestroy(&t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgForcesProviderCreate_TB(const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  char      prefix[256], el[256] = "";
  PetscBool metal;
  SgTB      t;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(info->units, "metal", &metal));
  PetscCheck(metal, info->comm, PETSC_ERR_USER_INPUT, "The tb force provider works in metal units (A, eV, ps, amu); the md solver uses '%s': set md units metal", info->units);
  PetscCall(PetscSNPrintf(prefix, sizeof prefix, "%stb_", info->prefix ? info->prefix : ""));
  for (PetscInt k = 0; k < info->ntypes; k++) {
    if (k) PetscCall(PetscStrlcat(el, ",", sizeof el));
    PetscCall(PetscStrlcat(el, info->tname && info->tname[k][0] ? info->tname[k] : "Si", sizeof el));
  }
  PetscCall(SgTBCreateWithElements(info->comm, prefix, info->ntypes ? el : "Si", &t));
  PetscCall(PetscStrncpy(p->name, "tb", sizeof p->name));
  p->fn      = SgTBComputeForces;
  p->ctx     = t;
  p->cutoff  = 4.16; /* longest model range (Kwon Si); ghosts are not used */
  p->newton  = PETSC_FALSE;
  p->destroy = TBDestroyCtx;
  p->lazy_energy = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
