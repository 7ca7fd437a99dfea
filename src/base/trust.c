/* What a file says is checked before it is trusted (issue 33): a model's or checkpoint's sizes
   against sane bounds before anything is allocated from them, its numbers finite. One user error
   each, naming the file, the attribute or dataset, the index and the fix; raised on PETSC_COMM_SELF
   (every rank reads its files itself; the error handler and SgErrorFinish print it once). */
#include <limits.h>
#include "sgsys.h"

PetscErrorCode SgTrustInt(const char file[], const char what[], PetscInt n, const PetscInt v[], PetscInt lo, PetscInt hi)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    char at[32] = "";
    if (n > 1) PetscCall(PetscSNPrintf(at, sizeof at, "[%" PetscInt_FMT "]", i));
    PetscCheck(v[i] >= lo && v[i] <= hi, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s%s = %" PetscInt_FMT " is outside [%" PetscInt_FMT ", %" PetscInt_FMT "]: the file is damaged or not written by surge; retrain or copy it again", file, what, at, v[i], lo, hi);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrustReal(const char file[], const char what[], PetscInt64 n, const PetscReal v[], PetscReal lo, PetscReal hi)
{
  PetscFunctionBegin;
  for (PetscInt64 i = 0; i < n; i++) {
    char at[32] = "";
    if (n > 1) PetscCall(PetscSNPrintf(at, sizeof at, "[%" PetscInt64_FMT "]", i));
    PetscCheck(!PetscIsInfOrNanReal(v[i]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s%s is %s: the model or data was saved from a diverged run or the file is damaged; retrain or copy it again", file, what, at, PetscIsNanReal(v[i]) ? "NaN" : "infinite");
    PetscCheck(v[i] >= lo && v[i] <= hi, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s%s = %g is outside [%g, %g]: the file is damaged or not written by surge; retrain or copy it again", file, what, at, (double)v[i], (double)lo, (double)hi);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrustWeights(const char who[], const char file[], PetscInt64 n, const PetscReal w[])
{
  PetscInt64 bad = 0, first = -1;

  PetscFunctionBegin;
  for (PetscInt64 i = 0; i < n; i++)
    if (PetscIsInfOrNanReal(w[i])) {
      if (first < 0) first = i;
      bad++;
    }
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FP, "%s: training diverged: %" PetscInt64_FMT " of %" PetscInt64_FMT " weights are NaN or Inf (the first: %" PetscInt64_FMT "); %s is not written: lower the learning rate, or restart from an earlier checkpoint", who, bad, n, first, file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgTrustBadInit(SgTrustBad *bad)
{
  bad->index = INT_MAX;
  bad->what  = 0;
}

void SgTrustScan(PetscInt64 n, const PetscReal v[], PetscInt64 offset, PetscBool nonneg, int slot, SgTrustBad *bad)
{
  for (PetscInt64 i = 0; i < n && bad->index == INT_MAX; i++) {
    int kind = PetscIsNanReal(v[i]) ? 0 : PetscIsInfReal(v[i]) ? 1 : nonneg && v[i] < 0 ? 2 : -1;
    if (kind < 0) continue;
    bad->index = (int)(offset + i);
    bad->what  = 3 * slot + kind;
  }
}

PetscErrorCode SgTrustAgree(MPI_Comm comm, SgTrustBad *bad)
{
  SgTrustBad first;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(bad, &first, 1, MPI_2INT, MPI_MINLOC, comm)); /* the lowest index, and its what */
  *bad = first;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *SgTrustBadKind(const SgTrustBad *bad)
{
  static const char *kind[3] = {"NaN", "infinite", "negative, but it holds squared gradients"};
  return kind[bad->what % 3];
}
