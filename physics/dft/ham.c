/* Tight-binding Hamiltonian as a PETSc MATMPIAIJ with 4x4 atom blocks (block size 4).
   Rows are distributed by atoms; each rank fills the rows of its atoms from the replicated geometry.
   H_ij = sum over the images L of j of the Slater-Koster block at d = x_j + L - x_i (Gamma point). */
#include "sgtb.h"

PetscErrorCode SgTBHamiltonian(MPI_Comm comm, const SgTBModel *m, const SgTBGeom *g, const SgTBNeigh *nl, Mat *H)
{
  PetscInt  nloc = PETSC_DECIDE, n = g->n, a0, a1, *dnz, *onz, *mark;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscSplitOwnership(comm, &nloc, &n));
  PetscCallMPI(MPI_Scan(&nloc, &a1, 1, MPIU_INT, MPI_SUM, comm));
  a0 = a1 - nloc;
  PetscCall(PetscMalloc3(nloc, &dnz, nloc, &onz, n, &mark));
  for (PetscInt j = 0; j < n; j++) mark[j] = -1;
  for (PetscInt i = a0; i < a1; i++) {
    PetscInt d = 1, o = 0;
    mark[i] = i;
    for (PetscInt p = nl->start[i]; p < nl->start[i + 1]; p++) {
      PetscInt j = nl->j[p];
      if (mark[j] == i) continue;
      mark[j] = i;
      if (j >= a0 && j < a1) d++; else o++;
    }
    dnz[i - a0] = d; onz[i - a0] = o;
  }
  PetscCall(MatCreate(comm, H));
  PetscCall(MatSetSizes(*H, 4 * nloc, 4 * nloc, 4 * n, 4 * n));
  PetscCall(MatSetType(*H, MATAIJ));
  PetscCall(MatSetBlockSize(*H, 4));
  PetscCall(MatXAIJSetPreallocation(*H, 4, dnz, onz, NULL, NULL));
  PetscCall(MatSetOption(*H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (PetscInt i = a0; i < a1; i++) {
    PetscScalar on[16] = {0};
    on[0] = m->Es; on[5] = on[10] = on[15] = m->Ep;
    PetscCall(MatSetValuesBlocked(*H, 1, &i, 1, &i, on, ADD_VALUES));
    for (PetscInt p = nl->start[i]; p < nl->start[i + 1]; p++) {
      PetscReal V[4], dV[4], h[16], r;
      const PetscReal *d = nl->d + 3 * p;
      r = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      SgTBModelHop(m, r, V, dV);
      SgTBSlaterKoster(d, V, dV, h, NULL);
      PetscCall(MatSetValuesBlocked(*H, 1, &i, 1, &nl->j[p], h, ADD_VALUES)); /* h is row-major a*4+b */
    }
  }
  PetscCall(MatAssemblyBegin(*H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*H, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree3(dnz, onz, mark));
  PetscFunctionReturn(PETSC_SUCCESS);
}
