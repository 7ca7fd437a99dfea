/* One submatrix of the submatrix method, solved densely.

   Standard problem (S = NULL): A = Z L Z^T (LAPACK syevd).  Pair (A, S) restricted to the same rows
   (the non-orthogonal Kohn-Sham and overlap matrices): A c = l S c through the Cholesky factor
   S = L L^T, the standard problem L^-1 A L^-T z = l z (sygst + syevd) and c = L^-T z; this is the
   local problem of Yang's divide-and-conquer method (W. Yang, PRL 66, 1438 (1991)), i.e. the submatrix
   method applied to the pair instead of S^-1/2 A S^-1/2.

   The caller orders the kept functions (the cluster's own columns) last.  Because L^-T is upper
   triangular, the kept rows of the eigenvectors are C[keep,:] = L22^-T Z[keep,:] (L22 the trailing
   m x m block of L) and (S C)[keep,:] = L[keep,:] Z, so the weights w_k = sum_{r in keep} C_rk (S C)_rk
   (the Mulliken weight of eigenvector k on the cluster, summing to m) and the kept columns
   P[:,keep] = C f C[keep,:]^T = L^-T (Z f C[keep,:]^T) cost O(n^2 m) beyond the factorisations.

   Single precision (Lass et al. use reduced precision for the submatrices): the factorisations run
   in float (spotrf, ssygst, ssyevd: twice the flop rate of double on AVX-512), the factors are
   widened to double, and the kept columns are refined by one McWeeny step in the S metric,
   P' = 3 P S P - 2 P S P S P, applied to the kept columns only (O(n^2 m)).  The single-precision
   eigenvectors are orthonormal only to ~1e-7; the step makes P a projector again to second order,
   which removes the first-order energy error, and what is left (the rotation of the occupied
   subspace by ~1e-7 ||A|| / gap) enters the energy at second order.  Energies and electron counts
   are then taken from the refined columns, 2 sum_{j in keep} (A P')_jj and 2 sum_{j in keep} (S P')_jj. */
#include "subsolve.h"
#include <petscblaslapack.h>

PETSC_EXTERN void dsyevd_(const char *, const char *, const PetscBLASInt *, double *, const PetscBLASInt *, double *, double *, const PetscBLASInt *, PetscBLASInt *, const PetscBLASInt *, PetscBLASInt *);
PETSC_EXTERN void ssyevd_(const char *, const char *, const PetscBLASInt *, float *, const PetscBLASInt *, float *, float *, const PetscBLASInt *, PetscBLASInt *, const PetscBLASInt *, PetscBLASInt *);
PETSC_EXTERN void dsygst_(const PetscBLASInt *, const char *, const PetscBLASInt *, double *, const PetscBLASInt *, const double *, const PetscBLASInt *, PetscBLASInt *);
PETSC_EXTERN void ssygst_(const PetscBLASInt *, const char *, const PetscBLASInt *, float *, const PetscBLASInt *, const float *, const PetscBLASInt *, PetscBLASInt *);
PETSC_EXTERN void dpotrf_(const char *, const PetscBLASInt *, double *, const PetscBLASInt *, PetscBLASInt *);
PETSC_EXTERN void spotrf_(const char *, const PetscBLASInt *, float *, const PetscBLASInt *, PetscBLASInt *);

/* syevd in the requested precision; Z (n x n) holds the matrix on entry, eigenvectors on exit. */
static PetscErrorCode Syevd(PetscInt n, PetscReal *Z, PetscReal *lam, float *Zs, float *lams)
{
  PetscBLASInt bn, lwork = -1, liwork = -1, info, iq, *iwork;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn));
  if (Zs) {
    float wq, *work;
    ssyevd_("V", "L", &bn, Zs, &bn, lams, &wq, &lwork, &iq, &liwork, &info);
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "ssyevd workspace query failed: info %d", (int)info);
    lwork = (PetscBLASInt)wq + 1; liwork = iq;
    PetscCall(PetscMalloc2(lwork, &work, liwork, &iwork));
    ssyevd_("V", "L", &bn, Zs, &bn, lams, work, &lwork, iwork, &liwork, &info);
    PetscCall(PetscFree2(work, iwork));
  } else {
    double wq, *work;
    dsyevd_("V", "L", &bn, Z, &bn, lam, &wq, &lwork, &iq, &liwork, &info);
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsyevd workspace query failed: info %d", (int)info);
    lwork = (PetscBLASInt)wq + 1; liwork = iq;
    PetscCall(PetscMalloc2(lwork, &work, liwork, &iwork));
    dsyevd_("V", "L", &bn, Z, &bn, lam, work, &lwork, iwork, &liwork, &info);
    PetscCall(PetscFree2(work, iwork));
  }
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "%ssyevd failed on a %" PetscInt_FMT "x%" PetscInt_FMT " submatrix: info %d", Zs ? "s" : "d", n, n, (int)info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubSolve(PetscInt n, PetscInt m, const PetscReal *A, const PetscReal *S, PetscBool single, SgTBSub *u)
{
  PetscBLASInt bn, bm, info;
  PetscInt     n0 = n - m;
  PetscReal    one = 1, zero = 0;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(m, &bm));
  u->n = n; u->m = m; u->single = single;
  PetscCall(PetscMalloc2(n, &u->lam, n, &u->w));
  PetscCall(PetscMalloc2((size_t)n * n, &u->Z, (size_t)m * n, &u->Ck));
  u->L = NULL;
  PetscCall(PetscMalloc2((size_t)m * n, &u->Ak, (size_t)m * n, &u->Sk));
  /* kept rows of the input (the last m), for energies and counts from the columns */
  for (PetscInt j = 0; j < n; j++)
    for (PetscInt q = 0; q < m; q++) {
      u->Ak[j * m + q] = A[j * n + n0 + q];
      u->Sk[j * m + q] = S ? S[j * n + n0 + q] : (n0 + q == j ? 1.0 : 0.0);
    }
  if (S) PetscCall(PetscMalloc1((size_t)n * n, &u->L));
  if (single) {
    float *Zs, *Ls = NULL, *ls;
    PetscCall(PetscMalloc2((size_t)n * n, &Zs, n, &ls));
    for (size_t k = 0; k < (size_t)n * n; k++) Zs[k] = (float)A[k];
    if (S) {
      PetscBLASInt one_i = 1;
      PetscCall(PetscMalloc1((size_t)n * n, &Ls));
      for (size_t k = 0; k < (size_t)n * n; k++) Ls[k] = (float)S[k];
      spotrf_("L", &bn, Ls, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "The overlap submatrix (%" PetscInt_FMT "x%" PetscInt_FMT ") is not positive definite in single precision (spotrf info %d): check the S file or use precision double", n, n, (int)info);
      ssygst_(&one_i, "L", &bn, Zs, &bn, Ls, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "ssygst failed: info %d", (int)info);
    }
    PetscCall(Syevd(n, NULL, NULL, Zs, ls));
    for (size_t k = 0; k < (size_t)n * n; k++) u->Z[k] = Zs[k];
    for (PetscInt k = 0; k < n; k++) u->lam[k] = ls[k];
    if (S) {
      for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < n; i++) u->L[j * n + i] = i >= j ? Ls[j * n + i] : 0;
      PetscCall(PetscFree(Ls));
    }
    PetscCall(PetscFree2(Zs, ls));
  } else {
    PetscCall(PetscArraycpy(u->Z, A, (size_t)n * n));
    if (S) {
      PetscBLASInt one_i = 1;
      PetscCall(PetscArraycpy(u->L, S, (size_t)n * n));
      dpotrf_("L", &bn, u->L, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "The overlap submatrix (%" PetscInt_FMT "x%" PetscInt_FMT ") is not positive definite (dpotrf info %d): check the S file", n, n, (int)info);
      for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < j; i++) u->L[j * n + i] = 0;
      dsygst_(&one_i, "L", &bn, u->Z, &bn, u->L, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsygst failed: info %d", (int)info);
    }
    PetscCall(Syevd(n, u->Z, u->lam, NULL, NULL));
  }
  /* Ck = C[keep,:] (m x n) and the weights */
  for (PetscInt k = 0; k < n; k++) for (PetscInt q = 0; q < m; q++) u->Ck[k * m + q] = u->Z[k * n + n0 + q];
  if (S) {
    PetscReal   *SC, *Lk;
    PetscBLASInt ldl = bn;
    PetscCall(PetscMalloc2((size_t)m * n, &SC, (size_t)m * n, &Lk));
    for (PetscInt j = 0; j < n; j++) for (PetscInt q = 0; q < m; q++) Lk[j * m + q] = u->L[j * n + n0 + q];
    BLASgemm_("N", "N", &bm, &bn, &bn, &one, Lk, &bm, u->Z, &bn, &zero, SC, &bm); /* (L Z)[keep,:] = (S C)[keep,:] */
    BLAStrsm_("L", "L", "T", "N", &bm, &bn, &one, u->L + (size_t)n0 * n + n0, &ldl, u->Ck, &bm); /* L22^T Ck = Z[keep,:] */
    for (PetscInt k = 0; k < n; k++) {
      PetscReal wk = 0;
      for (PetscInt q = 0; q < m; q++) wk += u->Ck[k * m + q] * SC[k * m + q];
      u->w[k] = wk;
    }
    PetscCall(PetscFree2(SC, Lk));
  } else {
    for (PetscInt k = 0; k < n; k++) {
      PetscReal wk = 0;
      for (PetscInt q = 0; q < m; q++) wk += u->Ck[k * m + q] * u->Ck[k * m + q];
      u->w[k] = wk;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y (n x m) <- P X for P = C diag(f) C^T in factored form: L^-T Z f Z^T L^-1 X. */
static PetscErrorCode ApplyP(const SgTBSub *u, const PetscReal *f, PetscReal *X, PetscReal *T, PetscReal *Y)
{
  PetscBLASInt bn, bm, bk;
  PetscInt     n = u->n, m = u->m, nk = 0;
  PetscReal    one = 1, zero = 0;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(m, &bm));
  if (u->L) BLAStrsm_("L", "L", "N", "N", &bn, &bm, &one, u->L, &bn, X, &bn); /* X <- L^-1 X */
  for (PetscInt k = 0; k < n; k++) if (f[k] != 0) nk = k + 1; /* occupied eigenvectors come first (ascending) */
  PetscCall(PetscBLASIntCast(nk, &bk));
  if (nk) {
    BLASgemm_("T", "N", &bk, &bm, &bn, &one, u->Z, &bn, X, &bn, &zero, T, &bk);
    for (PetscInt q = 0; q < m; q++) for (PetscInt k = 0; k < nk; k++) T[q * nk + k] *= f[k];
    BLASgemm_("N", "N", &bn, &bm, &bk, &one, u->Z, &bn, T, &bk, &zero, Y, &bn);
  } else PetscCall(PetscArrayzero(Y, (size_t)n * m));
  if (u->L) BLAStrsm_("L", "L", "T", "N", &bn, &bm, &one, u->L, &bn, Y, &bn); /* Y <- L^-T Y */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubColumns(const SgTBSub *u, const PetscReal *f, const PetscReal *S, PetscReal *Pk, PetscReal *eband, PetscReal *ne)
{
  PetscInt     n = u->n, m = u->m, nk = 0;
  PetscReal    one = 1, zero = 0, e = 0, c = 0;
  PetscBLASInt bn, bm, bk;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(m, &bm));
  for (PetscInt k = 0; k < n; k++) if (f[k] != 0) nk = k + 1;
  PetscCall(PetscBLASIntCast(nk, &bk));
  /* P[:,keep] = L^-T (Z f Ck^T) */
  if (nk) {
    PetscReal *T;
    PetscCall(PetscMalloc1((size_t)nk * m, &T));
    for (PetscInt k = 0; k < nk; k++) for (PetscInt q = 0; q < m; q++) T[q * nk + k] = f[k] * u->Ck[k * m + q];
    BLASgemm_("N", "N", &bn, &bm, &bk, &one, u->Z, &bn, T, &bk, &zero, Pk, &bn);
    PetscCall(PetscFree(T));
    if (u->L) BLAStrsm_("L", "L", "T", "N", &bn, &bm, &one, u->L, &bn, Pk, &bn);
  } else PetscCall(PetscArrayzero(Pk, (size_t)n * m));
  if (u->single) {
    /* one McWeeny step in the S metric on the kept columns: P' = 3 P S P - 2 P S P S P */
    PetscReal *V, *W, *X, *T;
    PetscCall(PetscMalloc4((size_t)n * m, &V, (size_t)n * m, &W, (size_t)n * m, &X, (size_t)n * m, &T));
    for (int pass = 0; pass < 2; pass++) {
      const PetscReal *in = pass ? V : Pk;
      PetscReal       *out = pass ? W : V;
      if (S) BLASgemm_("N", "N", &bn, &bm, &bn, &one, S, &bn, in, &bn, &zero, X, &bn);
      else PetscCall(PetscArraycpy(X, in, (size_t)n * m));
      PetscCall(ApplyP(u, f, X, T, out));
    }
    for (size_t k = 0; k < (size_t)n * m; k++) Pk[k] = 3 * V[k] - 2 * W[k];
    PetscCall(PetscFree4(V, W, X, T));
  }
  /* 2 sum_{j in keep} (A P)_jj and 2 sum_{j in keep} (S P)_jj from the kept rows of A and S */
  for (PetscInt q = 0; q < m; q++)
    for (PetscInt r = 0; r < n; r++) {
      e += u->Ak[r * m + q] * Pk[q * n + r];
      c += u->Sk[r * m + q] * Pk[q * n + r];
    }
  *eband = 2 * e;
  *ne = 2 * c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Newton-Schulz sign iteration X <- X (3 IB - X^2) / 2 on X = (mu IB - A)/||.||, P = (IB + sign)/2.
   Needs mu (no eigenvalues to bisect on). Returns the full dense P (n x n) in A. */
PetscErrorCode SgTBSubNewtonSchulz(PetscInt n, PetscReal *A, PetscReal mu)
{
  PetscReal   *X, *X2, *T, nrm = 0, one = 1, zero = 0;
  PetscBLASInt bn;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn));
  PetscCall(PetscMalloc3(n * n, &X, n * n, &X2, n * n, &T));
  for (PetscInt j = 0; j < n; j++) A[j * n + j] -= mu;
  for (PetscInt i = 0; i < n; i++) { PetscReal r = 0; for (PetscInt j = 0; j < n; j++) r += PetscAbsReal(A[j * n + i]); nrm = PetscMax(nrm, r); } /* Gershgorin bound */
  for (PetscInt k = 0; k < n * n; k++) X[k] = -A[k] / nrm;
  for (int it = 0; it < 200; it++) {
    PetscReal err = 0, half = 0.5;
    BLASgemm_("N", "N", &bn, &bn, &bn, &one, X, &bn, X, &bn, &zero, X2, &bn);
    for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < n; i++) { PetscReal v = X2[j * n + i] - (i == j); err += v * v; }
    for (PetscInt k = 0; k < n * n; k++) X2[k] = -X2[k];
    for (PetscInt j = 0; j < n; j++) X2[j * n + j] += 3;
    BLASgemm_("N", "N", &bn, &bn, &bn, &half, X, &bn, X2, &bn, &zero, T, &bn);
    PetscCall(PetscArraycpy(X, T, n * n));
    if (PetscSqrtReal(err) < 1e-10 * n) break;
  }
  for (PetscInt k = 0; k < n * n; k++) A[k] = 0.5 * X[k];
  for (PetscInt j = 0; j < n; j++) A[j * n + j] += 0.5;
  PetscCall(PetscFree3(X, X2, T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubFreeFactors(SgTBSub *u)
{
  PetscFunctionBegin;
  PetscCall(PetscFree2(u->Z, u->Ck));
  PetscCall(PetscFree2(u->Ak, u->Sk));
  PetscCall(PetscFree(u->L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubDestroy(SgTBSub *u)
{
  PetscFunctionBegin;
  PetscCall(SgTBSubFreeFactors(u));
  PetscCall(PetscFree2(u->lam, u->w));
  PetscFunctionReturn(PETSC_SUCCESS);
}
