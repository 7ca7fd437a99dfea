/* SgSlotReport (sgslotio.h): a slot's counts, printed and written to the run's report. */
#include "sgslotio.h"

PetscErrorCode SgSlotReport(MPI_Comm comm, SgSlot slot, const char label[], const char solver[], const char surrogate[], SgOutput out)
{
  const char *keys[5] = {"solver_calls", "surrogate_calls", "switches", "rejected", "surrogate_fraction"};
  PetscInt    ns, nu, nsw, nrej;
  PetscReal   v[5];

  PetscFunctionBegin;
  PetscCall(SgSlotGetCounts(slot, &ns, &nu, &nsw, &nrej));
  v[0] = ns;
  v[1] = nu;
  v[2] = nsw;
  v[3] = nrej;
  v[4] = ns + nu > 0 ? (PetscReal)nu / (ns + nu) : 0;
  PetscCall(PetscPrintf(comm, "%s: %s (solver) served %" PetscInt_FMT " calls, %s (surrogate) %" PetscInt_FMT " (fraction %.4f); %" PetscInt_FMT " switches, %" PetscInt_FMT " surrogate answers rejected\n", label, solver, ns, surrogate[0] ? surrogate : "(none)", nu, (double)v[4], nsw, nrej));
  for (int k = 0; k < 5 && out; k++) {
    char name[96];
    PetscCall(PetscSNPrintf(name, sizeof name, "%s_%s", label, keys[k]));
    for (char *c = name; *c; c++)
      if (*c == ' ' || *c == '.') *c = '_';
    PetscCall(SgOutputWriteReport(out, name, "", 1, &v[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
