/* physics/dft internal: one submatrix of the submatrix method, solved densely (subsolve.c). */
#pragma once
#include "sgtb.h"

typedef struct {
  PetscInt   n, m;     /* dimension; kept functions = the last m */
  PetscBool  single;   /* factorised in single precision (columns refined by a McWeeny step) */
  PetscReal *lam, *w;  /* eigenvalues (ascending), weights on the kept functions */
  PetscReal *Qr, *tau; /* Householder reflectors of the tridiagonal reduction A' = Q T Q^T (sytrd),
                          A' = A, or L^-1 A L^-T with S */
  PetscReal *Y;        /* n x n eigenvectors of T: those of A' are Z = Q Y */
  PetscReal *L;        /* n x n Cholesky factor of S (lower), NULL without S */
  PetscReal *Ck;       /* m x n: rows keep of the eigenvectors C = L^-T Z */
  PetscReal *Ak, *Sk;  /* single: m x n, rows keep of A and of S (identity rows without S) */
  PetscReal *S;        /* single: the n x n submatrix of S (for the McWeeny step), NULL without S */
} SgTBSub;

/* Factorise the n x n submatrix A (and S, may be NULL), column-major, kept functions last.  A and S
   must come from PetscMalloc1: they are taken over (factorised in place, freed with the factors). */
PetscErrorCode SgTBSubSolve(PetscInt n, PetscInt m, PetscReal *A, PetscReal *S, PetscBool single, SgTBSub *);
/* Kept columns Pk (n x m) of C diag(f) C^T (refined if single); 2 Tr over the kept functions of A P
   and of S P (band energy and electron count of the kept columns). */
PetscErrorCode SgTBSubColumns(const SgTBSub *, const PetscReal *f, PetscReal *Pk, PetscReal *eband, PetscReal *nelec);
/* Free the factors (Z, L, kept rows), keep the eigenvalues and weights (for the chemical potential). */
PetscErrorCode SgTBSubFreeFactors(SgTBSub *);
PetscErrorCode SgTBSubDestroy(SgTBSub *);

/* Occupation of a level e at chemical potential mu: step (kT = 0) or Fermi. */
PetscReal SgTBOcc(PetscReal e, PetscReal mu, PetscReal kT);
/* Chemical potential from the eigenvalues and weights of the ns submatrices held on each rank
   (mu.c).  strict: a partly filled level at kT = 0 is an error (exact, dense occupations). */
PetscErrorCode SgTBFindMu(MPI_Comm, PetscInt ns, SgTBSub *const *s, const SgTBDMOptions *, PetscBool strict, PetscReal *mu);
/* Newton-Schulz sign iteration on an n x n submatrix: A is replaced by P = (I + sign(mu I - A))/2. */
PetscErrorCode SgTBSubNewtonSchulz(PetscInt n, PetscReal *A, PetscReal mu);
