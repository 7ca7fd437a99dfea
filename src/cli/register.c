/* The one place that knows every built-in solver and surrogate type. */
#include "sgsolver.h"

PETSC_EXTERN PetscErrorCode SgSolverCreate_Heat(SgSolver);

PetscErrorCode SgRegisterAll(void)
{
  PetscFunctionBegin;
  PetscCall(SgSolverRegister("heat", SgSolverCreate_Heat));
  { PETSC_EXTERN PetscErrorCode SgSolverCreate_MD(SgSolver); PetscCall(SgSolverRegister("md", SgSolverCreate_MD)); }
  { PETSC_EXTERN PetscErrorCode SgSolverCreate_Vlasov(SgSolver); PetscCall(SgSolverRegister("vlasov", SgSolverCreate_Vlasov)); }
  PetscFunctionReturn(PETSC_SUCCESS);
}
