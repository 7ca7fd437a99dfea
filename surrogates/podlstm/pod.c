/* Proper orthogonal decomposition of distributed snapshots with SLEPc.

   The snapshots are the columns of X (n x m, n = the length of a state vector, split over the ranks
   by rows: each rank holds rows [rstart, rstart + nlocal) of every snapshot, column-major). The POD
   modes are the leading left singular vectors of the anomaly matrix A = X - mean 1^T: SLEPc's SVD of
   A as a distributed dense matrix, by default the "cross" solver with the explicit m x m matrix
   A^T A -- Sirovich's method of snapshots -- or thin Lanczos bidiagonalisation (trlanczos).
   The energy of mode k is sigma_k^2 / ||A||_F^2. Projection (a = Phi^T (x - mean)) is a local
   product and one allreduce of K numbers; reconstruction (x = mean + Phi a) is local. */
#include <slepcsvd.h>
#include <petscblaslapack.h>
#include "sgpodlstm.h"

const char *const SgPODSolvers[] = {"cross", "trlanczos", "lanczos"};

/* SLEPc registers its classes in SlepcInitialize; surge starts PETSc itself, so SLEPc starts here,
   the first time it is needed, and is finalised with PETSc */
static PetscErrorCode SlepcStart(void)
{
  PetscBool on;

  PetscFunctionBegin;
  PetscCall(SlepcInitialized(&on));
  if (!on) {
    PetscCall(SlepcInitializeNoArguments());
    PetscCall(PetscRegisterFinalize(SlepcFinalize));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPODCreate(MPI_Comm comm, PetscInt nlocal, PetscInt nmodes, SgPOD *out)
{
  SgPOD p;

  PetscFunctionBegin;
  PetscCall(PetscNew(&p));
  p->comm   = comm;
  p->nlocal = nlocal;
  p->nmodes = nmodes;
  PetscCallMPI(MPI_Allreduce(&nlocal, &p->n, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Scan(&nlocal, &p->rstart, 1, MPIU_INT, MPI_SUM, comm));
  p->rstart -= nlocal;
  PetscCall(PetscCalloc3(nlocal, &p->mean, nlocal * nmodes, &p->phi, nmodes, &p->sigma));
  *out = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPODDestroy(SgPOD *p)
{
  PetscFunctionBegin;
  if (!*p) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree3((*p)->mean, (*p)->phi, (*p)->sigma));
  PetscCall(PetscFree(*p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPODCompute(SgPOD p, PetscInt m, const PetscReal X[], const char solver[])
{
  Mat       A;
  SVD       svd;
  Vec       u, v;
  PetscReal *a, fro;
  PetscInt  nconv, K = p->nmodes;
  PetscBool cross, lanczos;

  PetscFunctionBegin;
  PetscCall(SlepcStart());
  PetscCheck(K >= 1 && K <= m, p->comm, PETSC_ERR_USER_INPUT, "POD: %" PetscInt_FMT " modes from %" PetscInt_FMT " snapshots: ask for 1 to %" PetscInt_FMT " modes", K, m, m);
  /* the temporal mean, then the anomalies as a distributed dense matrix (local rows, column-major) */
  PetscCall(PetscMalloc1(p->nlocal * m, &a));
  for (PetscInt i = 0; i < p->nlocal; i++) {
    PetscReal s = 0;
    for (PetscInt j = 0; j < m; j++) s += X[j * p->nlocal + i];
    p->mean[i] = s / m;
  }
  for (PetscInt j = 0; j < m; j++)
    for (PetscInt i = 0; i < p->nlocal; i++) a[j * p->nlocal + i] = X[j * p->nlocal + i] - p->mean[i];
  PetscCall(MatCreateDense(p->comm, p->nlocal, PETSC_DECIDE, p->n, m, a, &A));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &fro));
  p->total = fro * fro;
  PetscCall(SVDCreate(p->comm, &svd));
  PetscCall(SVDSetOperators(svd, A, NULL));
  PetscCall(PetscStrcmp(solver, "cross", &cross));
  PetscCall(PetscStrcmp(solver, "lanczos", &lanczos));
  PetscCall(SVDSetType(svd, cross ? SVDCROSS : lanczos ? SVDLANCZOS : SVDTRLANCZOS));
  if (cross) PetscCall(SVDCrossSetExplicitMatrix(svd, PETSC_TRUE)); /* the m x m matrix A^T A: the method of snapshots */
  PetscCall(SVDSetDimensions(svd, K, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(SVDSetWhichSingularTriplets(svd, SVD_LARGEST));
  PetscCall(SVDSetTolerances(svd, 1e-12, 1000));
  PetscCall(SVDSolve(svd));
  PetscCall(SVDGetConverged(svd, &nconv));
  PetscCheck(nconv >= K, p->comm, PETSC_ERR_NOT_CONVERGED, "POD: SLEPc's %s SVD converged %" PetscInt_FMT " of %" PetscInt_FMT " singular triplets: ask for fewer modes or use -podlstm_svd trlanczos", solver, nconv, K);
  PetscCall(MatCreateVecs(A, &v, &u));
  for (PetscInt k = 0; k < K; k++) {
    const PetscScalar *uu;
    PetscReal          sum = 0, g;
    PetscCall(SVDGetSingularTriplet(svd, k, &p->sigma[k], u, v));
    /* a fixed sign (positive sum of the entries), so that modes do not depend on the solver's start
       vector or the rank count */
    PetscCall(VecGetArrayRead(u, &uu));
    for (PetscInt i = 0; i < p->nlocal; i++) sum += uu[i];
    PetscCallMPI(MPI_Allreduce(&sum, &g, 1, MPIU_REAL, MPIU_SUM, p->comm));
    for (PetscInt i = 0; i < p->nlocal; i++) p->phi[k * p->nlocal + i] = g < 0 ? -uu[i] : uu[i];
    PetscCall(VecRestoreArrayRead(u, &uu));
  }
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&v));
  PetscCall(SVDDestroy(&svd));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree(a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* coef[j][k] = phi_k . (x_j - mean) for the m snapshots x_j (local rows, column-major); collective */
PetscErrorCode SgPODProject(SgPOD p, PetscInt m, const PetscReal X[], PetscReal coef[])
{
  const PetscInt K = p->nmodes;
  PetscReal     *loc;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(m * K, &loc));
  for (PetscInt j = 0; j < m; j++)
    for (PetscInt k = 0; k < K; k++) {
      const PetscReal *f = p->phi + k * p->nlocal, *x = X + j * p->nlocal;
      PetscReal        s = 0;
      for (PetscInt i = 0; i < p->nlocal; i++) s += f[i] * (x[i] - p->mean[i]);
      loc[j * K + k] = s;
    }
  PetscCallMPI(MPI_Allreduce(loc, coef, (PetscMPIInt)(m * K), MPIU_REAL, MPIU_SUM, p->comm));
  PetscCall(PetscFree(loc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* X[:, j] = mean + sum_k coef[j][k] phi_k on this rank's rows (no communication) */
PetscErrorCode SgPODReconstruct(SgPOD p, PetscInt m, const PetscReal coef[], PetscReal X[])
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < m; j++) {
    PetscReal *x = X + j * p->nlocal;
    for (PetscInt i = 0; i < p->nlocal; i++) x[i] = p->mean[i];
    for (PetscInt k = 0; k < p->nmodes; k++) {
      const PetscReal  c = coef[j * p->nmodes + k];
      const PetscReal *f = p->phi + k * p->nlocal;
      for (PetscInt i = 0; i < p->nlocal; i++) x[i] += c * f[i];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPODView(SgPOD p, const char who[])
{
  PetscReal cum = 0;

  PetscFunctionBegin;
  PetscCall(PetscPrintf(p->comm, "%s: POD of a %" PetscInt_FMT "-long state, %" PetscInt_FMT " modes\n%s:   mode  singular value  energy   cumulative\n", who, p->n, p->nmodes, who));
  for (PetscInt k = 0; k < p->nmodes; k++) {
    PetscReal e = p->total > 0 ? p->sigma[k] * p->sigma[k] / p->total : 0;
    cum += e;
    PetscCall(PetscPrintf(p->comm, "%s:   %4" PetscInt_FMT "  %14.6e  %7.4f  %9.4f\n", who, k + 1, (double)p->sigma[k], (double)e, (double)cum));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
