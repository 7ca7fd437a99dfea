/* The one place that knows every built-in solver, surrogate and slot provider. */
#include "sgsolver.h"
#include "sgsurrogate.h"
#include "sgforces.h"

PETSC_EXTERN PetscErrorCode SgSolverCreate_Heat(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_MD(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_Vlasov(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_DFT(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_Boussinesq(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_SST(SgSolver);
PETSC_EXTERN PetscErrorCode SgSolverCreate_KS(SgSolver);
PETSC_EXTERN PetscErrorCode SgSurrogateCreate_DeepMD(SgSurrogate);
PETSC_EXTERN PetscErrorCode SgSurrogateCreate_MFFN(SgSurrogate);
PETSC_EXTERN PetscErrorCode SgSurrogateCreate_PodLstm(SgSurrogate);
PETSC_EXTERN PetscErrorCode SgForcesProviderCreate_LJ(const SgForcesProviderInfo *, SgForcesProvider *);
PETSC_EXTERN PetscErrorCode SgForcesProviderCreate_TB(const SgForcesProviderInfo *, SgForcesProvider *);

PetscErrorCode SgRegisterAll(void)
{
  PetscFunctionBegin; /* registering a name again replaces it: calling this twice is harmless */
  /* solvers */
  PetscCall(SgSolverRegister("heat", SgSolverCreate_Heat));
  PetscCall(SgSolverRegister("md", SgSolverCreate_MD));
  PetscCall(SgSolverRegister("vlasov", SgSolverCreate_Vlasov));
  PetscCall(SgSolverRegister("dft", SgSolverCreate_DFT));
  PetscCall(SgSolverRegister("boussinesq", SgSolverCreate_Boussinesq));
  PetscCall(SgSolverRegister("sst", SgSolverCreate_SST));
  PetscCall(SgSolverRegister("ks", SgSolverCreate_KS));
  /* surrogates (each serves the slot kinds it has ops for: deepmd serves md.forces) */
  PetscCall(SgSurrogateRegister("deepmd", SgSurrogateCreate_DeepMD));
  PetscCall(SgSurrogateRegister("mffn", SgSurrogateCreate_MFFN));
  PetscCall(SgSurrogateRegister("podlstm", SgSurrogateCreate_PodLstm));
  /* the solvers' own md.forces providers: the MD engine's Lennard-Jones, tight binding from physics/dft */
  PetscCall(SgForcesProviderRegister("lj", SgForcesProviderCreate_LJ));
  PetscCall(SgForcesProviderRegister("tb", SgForcesProviderCreate_TB));
  PetscFunctionReturn(PETSC_SUCCESS);
}
