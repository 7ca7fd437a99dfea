/* SST diagnostics: area-weighted mean and heat, the budget residual, the ENSO index and, where an
   exact solution exists, the error against it and the amplitude of the harmonic. */
#include "sst.h"

PetscErrorCode SgSstHeat(Sst *s, Vec X, MPI_Comm comm, PetscReal *heat, PetscReal *mean, PetscReal *absheat)
{
  const PetscScalar **x;
  PetscReal           loc[3] = {0, 0, 0}, g[3];

  PetscFunctionBegin;
  PetscCall(DMDAVecGetArrayRead(s->da, X, &x));
  for (PetscInt j = 0; j < s->ym; j++)
    for (PetscInt i = 0; i < s->xm; i++)
      if (s->ocean[j * s->xm + i]) {
        loc[0] += s->area[s->ys + j] * x[s->ys + j][s->xs + i];
        loc[1] += s->area[s->ys + j];
        loc[2] += s->area[s->ys + j] * PetscAbsReal(x[s->ys + j][s->xs + i]);
      }
  PetscCall(DMDAVecRestoreArrayRead(s->da, X, &x));
  PetscCallMPI(MPI_Allreduce(loc, g, 3, MPIU_REAL, MPIU_SUM, comm));
  *heat = g[0];
  *mean = g[1] > 0 ? g[0] / g[1] : 0;
  if (absheat) *absheat = g[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstDiagnose(SgSolver sv, PetscReal t, PetscReal v[])
{
  Sst     *s    = (Sst *)sv->data;
  MPI_Comm comm = PetscObjectComm((PetscObject)sv);

  PetscFunctionBegin;
  PetscCall(SgSstHeat(s, s->T, comm, &v[s->d_heat], &v[s->d_mean], NULL));
  v[s->d_budget] = v[s->d_heat] - s->heat0 - s->sources;
  v[s->d_enso]   = s->ex;
  if (s->exact) {
    const PetscScalar **x;
    PetscReal           loc[3] = {0, 0, 0}, g[3], amp0 = s->amplitude;
    PetscCall(DMDAVecGetArrayRead(s->da, s->T, &x));
    for (PetscInt j = s->ys; j < s->ys + s->ym; j++)
      for (PetscInt i = s->xs; i < s->xs + s->xm; i++) {
        PetscReal e, y;
        PetscCall(SgSstExact(s, i, j, t, &e, &y));
        loc[0] = PetscMax(loc[0], PetscAbsReal(x[j][i] - e));
        loc[1] += s->area[j] * x[j][i] * y;
        loc[2] += s->area[j] * y * y;
      }
    PetscCall(DMDAVecRestoreArrayRead(s->da, s->T, &x));
    PetscCallMPI(MPI_Allreduce(&loc[0], &g[0], 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCallMPI(MPI_Allreduce(&loc[1], &g[1], 2, MPIU_REAL, MPIU_SUM, comm));
    v[s->d_err] = g[0];
    v[s->d_amp] = g[2] > 0 ? amp0 * g[1] / g[2] : 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
