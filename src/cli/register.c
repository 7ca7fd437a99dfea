/* The one place that knows every built-in solver and surrogate type. */
#include "sgsolver.h"
#include "sgsurrogate.h"
#include "sgmdforces.h"

PETSC_EXTERN PetscErrorCode SgSolverCreate_Heat(SgSolver);

PetscErrorCode SgRegisterAll(void)
{
  PetscFunctionBegin;
  PetscCall(SgSolverRegister("heat", SgSolverCreate_Heat));
  { PETSC_EXTERN PetscErrorCode SgSolverCreate_MD(SgSolver); PetscCall(SgSolverRegister("md", SgSolverCreate_MD)); }
  { PETSC_EXTERN PetscErrorCode SgSolverCreate_Vlasov(SgSolver); PetscCall(SgSolverRegister("vlasov", SgSolverCreate_Vlasov)); }
  { PETSC_EXTERN PetscErrorCode SgSolverCreate_Boussinesq(SgSolver); PetscCall(SgSolverRegister("boussinesq", SgSolverCreate_Boussinesq)); }
  { PETSC_EXTERN PetscErrorCode SgSurrogateCreate_DeepMD(SgSurrogate); PetscCall(SgSurrogateRegister("deepmd", SgSurrogateCreate_DeepMD)); }
  { PETSC_EXTERN PetscErrorCode SgMDForceProviderCreate_DeepMD(const SgMDForceInfo *, SgMDForceProvider *); PetscCall(SgMDForceProviderRegister("deepmd", SgMDForceProviderCreate_DeepMD)); }
  { PETSC_EXTERN PetscErrorCode SgDFTRegisterAll(void); PetscCall(SgDFTRegisterAll()); } /* solver "dft", md.forces provider "tb" */
  PetscFunctionReturn(PETSC_SUCCESS);
}
