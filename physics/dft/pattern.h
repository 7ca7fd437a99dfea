/* physics/dft internal: patterns of the submatrix method (pattern.c). */
#pragma once
#include "sgtb.h"

/* Global block graph (CSR by block row, sorted) of A, or of A and S united, after dropping blocks
   with Frobenius norm < eps (the diagonal is always kept); every rank gets all of it. */
PetscErrorCode SgTBBlockGraph(Mat A, Mat S, const SgTBBlocks *, PetscReal eps, PetscInt **gs, PetscInt **gi);
/* Sorted union of the column patterns of the nb blocks members (mark: nblk zeros, left zero). */
PetscErrorCode SgTBClusterRows(PetscInt nb, const PetscInt *members, const PetscInt *ps, const PetscInt *pi, PetscInt *mark, PetscInt *nr, PetscInt **rows);
/* One refinement of the column patterns from the density matrix held on each rank. */
PetscErrorCode SgTBPatternRefine(MPI_Comm, const SgTBBlocks *, const SgTBDensity *, PetscReal eps, const PetscInt *gs, const PetscInt *gi, PetscInt *mark, PetscInt **ps, PetscInt **pi, PetscBool *changed);
