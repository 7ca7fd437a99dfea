/* One submatrix of the submatrix method, solved densely.

   Standard problem (S = NULL): A = Z L Z^T.  Pair (A, S) restricted to the same rows (the non-
   orthogonal Kohn-Sham and overlap matrices): A c = l S c through the Cholesky factor S = L L^T, the
   standard problem L^-1 A L^-T z = l z (potrf + sygst) and c = L^-T z; this is the local problem of
   Yang's divide-and-conquer method (W. Yang, PRL 66, 1438 (1991)), i.e. the submatrix method applied
   to the pair instead of to S^-1/2 A S^-1/2.

   Only m columns of an n x n submatrix are kept, so the n x n eigenvectors are never formed: the
   matrix is reduced to tridiagonal form, A' = Q T Q^T (sytrd; Q held as Householder reflectors),
   T = Y L Y^T (stedc), and every use of Z = Q Y is an application of Q to m vectors (ormtr,
   O(n^2 m)).  This drops the back-transformation of syevd (its ormtr on all n vectors, 2 n^3 flops).

   The caller orders the kept functions (the cluster's own columns) last.  Because L^-T is upper
   triangular, the kept rows of the eigenvectors are C[keep,:] = L22^-T Z[keep,:] (L22 the trailing
   m x m block of L) and (S C)[keep,:] = L[keep,:] Z, so the weights w_k = sum_{r in keep} C_rk (S C)_rk
   (the Mulliken weight of eigenvector k on the cluster, summing to m) and the kept columns
   P[:,keep] = C f C[keep,:]^T = L^-T Q Y (f C[keep,:]^T) cost O(n^2 m) beyond the factorisations.

   Single precision (Lass et al. use reduced precision for the submatrices): the factorisations run
   in float (spotrf, ssygst, ssytrd, sstedc: twice the flop rate of double on AVX-512), the factors
   are widened to double, and the kept columns are refined by one McWeeny step in the S metric,
   P' = 3 P S P - 2 P S P S P, applied to the kept columns only (O(n^2 m)).  The single-precision
   eigenvectors are orthonormal only to ~1e-7; the step makes P a projector again to second order,
   which removes the first-order energy error, and what is left (the rotation of the occupied
   subspace by ~1e-7 ||A|| / gap) enters the energy at second order.  Energies and electron counts
   are then taken from the refined columns, 2 sum_{j in keep} (A P')_jj and 2 sum_{j in keep} (S P')_jj. */
#include "subsolve.h"
#include <petscblaslapack.h>

typedef PetscBLASInt BI;
PETSC_EXTERN void dsygst_(const BI *, const char *, const BI *, double *, const BI *, const double *, const BI *, BI *);
PETSC_EXTERN void ssygst_(const BI *, const char *, const BI *, float *, const BI *, const float *, const BI *, BI *);
PETSC_EXTERN void dpotrf_(const char *, const BI *, double *, const BI *, BI *);
PETSC_EXTERN void spotrf_(const char *, const BI *, float *, const BI *, BI *);
PETSC_EXTERN void dsytrd_(const char *, const BI *, double *, const BI *, double *, double *, double *, double *, const BI *, BI *);
PETSC_EXTERN void ssytrd_(const char *, const BI *, float *, const BI *, float *, float *, float *, float *, const BI *, BI *);
PETSC_EXTERN void dstedc_(const char *, const BI *, double *, double *, double *, const BI *, double *, const BI *, BI *, const BI *, BI *);
PETSC_EXTERN void sstedc_(const char *, const BI *, float *, float *, float *, const BI *, float *, const BI *, BI *, const BI *, BI *);
PETSC_EXTERN void dormtr_(const char *, const char *, const char *, const BI *, const BI *, const double *, const BI *, const double *, double *, const BI *, double *, const BI *, BI *);

/* Householder tridiagonalisation and the eigenvectors of T by divide and conquer, in one precision:
   M (n x n) holds the matrix on entry, the reflectors on exit; lam (n) the eigenvalues (ascending),
   Y (n x n) the eigenvectors of T, tau (n).  (MRRR, stemr, is O(n^2) in theory but was 1.5x slower
   than stedc on these submatrices of n ~ 250, whose deflation makes divide and conquer cheap.) */
#define TRIDIAG_EIGEN(NAME, T, sytrd, stedc) \
  static PetscErrorCode NAME(BI n, T *M, T *lam, T *tau, T *Y) \
  { \
    BI  info, lwork = -1, liwork = -1, iq, *iwork; \
    T   wq, *e, *work; \
    PetscFunctionBegin; \
    PetscCall(PetscMalloc1(n + 1, &e)); \
    sytrd("L", &n, M, &n, lam, e, tau, &wq, &lwork, &info); \
    lwork = (BI)wq + 1; \
    PetscCall(PetscMalloc1(lwork, &work)); \
    sytrd("L", &n, M, &n, lam, e, tau, work, &lwork, &info); \
    PetscCall(PetscFree(work)); \
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, #sytrd " failed: info %d", (int)info); \
    lwork = -1; \
    stedc("I", &n, lam, e, Y, &n, &wq, &lwork, &iq, &liwork, &info); \
    lwork = (BI)wq + 1; liwork = iq; \
    PetscCall(PetscMalloc2(lwork, &work, liwork, &iwork)); \
    stedc("I", &n, lam, e, Y, &n, work, &lwork, iwork, &liwork, &info); \
    PetscCall(PetscFree2(work, iwork)); \
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, #stedc " failed on a %dx%d submatrix: info %d", (int)n, (int)n, (int)info); \
    PetscCall(PetscFree(e)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
TRIDIAG_EIGEN(TridiagEigenD, double, dsytrd_, dstedc_)
TRIDIAG_EIGEN(TridiagEigenS, float, ssytrd_, sstedc_)

/* X (n x k) <- Q X (trans "N") or Q^T X (trans "T").  For a few vectors the reflectors are applied
   one by one (workspace k makes ormtr unblocked): the blocked form rebuilds its n x 32 triangular
   factors on every call, which costs more than the product itself when k is small. */
static PetscErrorCode ApplyQ(const SgTBSub *u, const char *trans, PetscInt k, PetscReal *X)
{
  BI        n, bk, info, lwork = -1;
  PetscReal wq, *work;

  PetscFunctionBegin;
  if (!k) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscBLASIntCast(u->n, &n)); PetscCall(PetscBLASIntCast(k, &bk));
  if (k < 32) lwork = bk;
  else {
    dormtr_("L", "L", trans, &n, &bk, u->Qr, &n, u->tau, X, &n, &wq, &lwork, &info);
    lwork = (BI)wq + 1;
  }
  PetscCall(PetscMalloc1(lwork, &work));
  dormtr_("L", "L", trans, &n, &bk, u->Qr, &n, u->tau, X, &n, work, &lwork, &info);
  PetscCall(PetscFree(work));
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "dormtr failed: info %d", (int)info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out (m x n) = R Z = (R Q) Y for an m x n matrix R given as its transpose Rt (n x m, destroyed). */
static PetscErrorCode RowsTimesZ(const SgTBSub *u, PetscReal *Rt, PetscReal *out)
{
  BI        n, m;
  PetscReal one = 1, zero = 0;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(u->n, &n)); PetscCall(PetscBLASIntCast(u->m, &m));
  PetscCall(ApplyQ(u, "T", u->m, Rt)); /* Q^T R^T */
  BLASgemm_("T", "N", &m, &n, &n, &one, Rt, &n, u->Y, &n, &zero, out, &m); /* (R Q) Y */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubSolve(PetscInt n, PetscInt m, PetscReal *A, PetscReal *S, PetscBool single, SgTBSub *u)
{
  BI        bn, info, one_i = 1;
  PetscInt  n0 = n - m;
  PetscBool all = (m == n && !single) ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn));
  PetscCall(PetscMemzero(u, sizeof(*u)));
  u->n = n; u->m = m; u->single = single;
  PetscCall(PetscMalloc2(n, &u->lam, n, &u->w));
  PetscCall(PetscMalloc2((size_t)n * n, &u->Y, n, &u->tau));
  u->Qr = A; u->L = S; /* taken over: factorised in place */
  if (single) {
    /* kept rows of A and S for energies and counts from the refined columns, and S itself */
    PetscCall(PetscMalloc2((size_t)m * n, &u->Ak, (size_t)m * n, &u->Sk));
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt q = 0; q < m; q++) {
        u->Ak[j * m + q] = A[j * n + n0 + q];
        u->Sk[j * m + q] = S ? S[j * n + n0 + q] : (n0 + q == j ? 1.0 : 0.0);
      }
    if (S) {
      PetscCall(PetscMalloc1((size_t)n * n, &u->S));
      PetscCall(PetscArraycpy(u->S, S, (size_t)n * n));
    }
    {
      float *Ms, *Ls = NULL, *ds, *ts, *Ys;
      PetscCall(PetscMalloc4((size_t)n * n, &Ms, n, &ds, n, &ts, (size_t)n * n, &Ys));
      for (size_t k = 0; k < (size_t)n * n; k++) Ms[k] = (float)A[k];
      if (S) {
        PetscCall(PetscMalloc1((size_t)n * n, &Ls));
        for (size_t k = 0; k < (size_t)n * n; k++) Ls[k] = (float)S[k];
        spotrf_("L", &bn, Ls, &bn, &info);
        PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "The overlap submatrix (%" PetscInt_FMT "x%" PetscInt_FMT ") is not positive definite in single precision (spotrf info %d): check the S file or use precision double", n, n, (int)info);
        ssygst_(&one_i, "L", &bn, Ms, &bn, Ls, &bn, &info);
        PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "ssygst failed: info %d", (int)info);
        for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < n; i++) u->L[j * n + i] = i >= j ? Ls[j * n + i] : 0;
        PetscCall(PetscFree(Ls));
      }
      PetscCall(TridiagEigenS(bn, Ms, ds, ts, Ys));
      for (size_t k = 0; k < (size_t)n * n; k++) { u->Qr[k] = Ms[k]; u->Y[k] = Ys[k]; }
      for (PetscInt k = 0; k < n; k++) { u->lam[k] = ds[k]; u->tau[k] = ts[k]; }
      PetscCall(PetscFree4(Ms, ds, ts, Ys));
    }
  } else {
    if (S) {
      dpotrf_("L", &bn, u->L, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "The overlap submatrix (%" PetscInt_FMT "x%" PetscInt_FMT ") is not positive definite (dpotrf info %d): check the S file", n, n, (int)info);
      for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < j; i++) u->L[j * n + i] = 0;
      dsygst_(&one_i, "L", &bn, u->Qr, &bn, u->L, &bn, &info);
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsygst failed: info %d", (int)info);
    }
    PetscCall(TridiagEigenD(bn, u->Qr, u->lam, u->tau, u->Y));
  }
  if (all) { /* everything kept (dense): C^T S C = I, every weight is 1; columns by AllColumns */
    for (PetscInt k = 0; k < n; k++) u->w[k] = 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* Ck = Z[keep,:] = (E_keep^T Q) Y, then L22^-T Ck; weights with (S C)[keep,:] = (L[keep,:] Q) Y */
  {
    PetscReal *Rt;
    PetscCall(PetscMalloc1((size_t)m * n, &u->Ck));
    PetscCall(PetscCalloc1((size_t)n * m, &Rt));
    for (PetscInt q = 0; q < m; q++) Rt[(size_t)q * n + n0 + q] = 1;
    PetscCall(RowsTimesZ(u, Rt, u->Ck));
    if (S) {
      PetscReal *SC;
      BI         bm, ldl = bn;
      PetscReal  one = 1;
      PetscCall(PetscBLASIntCast(m, &bm));
      PetscCall(PetscMalloc1((size_t)m * n, &SC));
      for (PetscInt q = 0; q < m; q++) for (PetscInt j = 0; j < n; j++) Rt[(size_t)q * n + j] = u->L[(size_t)j * n + n0 + q];
      PetscCall(RowsTimesZ(u, Rt, SC));
      BLAStrsm_("L", "L", "T", "N", &bm, &bn, &one, u->L + (size_t)n0 * n + n0, &ldl, u->Ck, &bm); /* L22^T Ck = Z[keep,:] */
      for (PetscInt k = 0; k < n; k++) {
        PetscReal wk = 0;
        for (PetscInt q = 0; q < m; q++) wk += u->Ck[k * m + q] * SC[k * m + q];
        u->w[k] = wk;
      }
      PetscCall(PetscFree(SC));
    } else {
      for (PetscInt k = 0; k < n; k++) {
        PetscReal wk = 0;
        for (PetscInt q = 0; q < m; q++) wk += u->Ck[k * m + q] * u->Ck[k * m + q];
        u->w[k] = wk;
      }
    }
    PetscCall(PetscFree(Rt));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y (n x m) <- P X for P = C diag(f) C^T in factored form: L^-T Q Y f Y^T Q^T L^-1 X (X destroyed). */
static PetscErrorCode ApplyP(const SgTBSub *u, const PetscReal *f, PetscReal *X, PetscReal *T, PetscReal *out)
{
  BI        bn, bm, bk;
  PetscInt  n = u->n, m = u->m, nk = 0;
  PetscReal one = 1, zero = 0;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(m, &bm));
  if (u->L) BLAStrsm_("L", "L", "N", "N", &bn, &bm, &one, u->L, &bn, X, &bn); /* X <- L^-1 X */
  for (PetscInt k = 0; k < n; k++) if (f[k] != 0) nk = k + 1; /* occupied eigenvectors come first (ascending) */
  PetscCall(PetscBLASIntCast(nk, &bk));
  if (nk) {
    PetscCall(ApplyQ(u, "T", m, X));
    BLASgemm_("T", "N", &bk, &bm, &bn, &one, u->Y, &bn, X, &bn, &zero, T, &bk);
    for (PetscInt q = 0; q < m; q++) for (PetscInt k = 0; k < nk; k++) T[q * nk + k] *= f[k];
    BLASgemm_("N", "N", &bn, &bm, &bk, &one, u->Y, &bn, T, &bk, &zero, out, &bn);
    PetscCall(ApplyQ(u, "N", m, out));
  } else PetscCall(PetscArrayzero(out, (size_t)n * m));
  if (u->L) BLAStrsm_("L", "L", "T", "N", &bn, &bm, &one, u->L, &bn, out, &bn); /* out <- L^-T out */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything kept (dense): P = C_o diag(f) C_o^T with C_o = L^-T Q Y[:, occupied] (n x nk). */
static PetscErrorCode AllColumns(const SgTBSub *u, const PetscReal *f, PetscInt nk, PetscReal *P)
{
  BI         bn, bk;
  PetscInt   n = u->n;
  PetscReal *C, *Cf, one = 1, zero = 0;
  PetscBool  step = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(nk, &bk));
  PetscCall(PetscMalloc1((size_t)n * nk, &C));
  PetscCall(PetscArraycpy(C, u->Y, (size_t)n * nk));
  PetscCall(ApplyQ(u, "N", nk, C));
  if (u->L) BLAStrsm_("L", "L", "T", "N", &bn, &bk, &one, u->L, &bn, C, &bn);
  for (PetscInt k = 0; k < nk; k++) if (f[k] != 1) step = PETSC_FALSE;
  if (step) { /* projector: C_o C_o^T, one triangle, mirrored */
    BLASsyrk_("L", "N", &bn, &bk, &one, C, &bn, &zero, P, &bn);
    for (PetscInt j = 0; j < n; j++) for (PetscInt i = 0; i < j; i++) P[(size_t)j * n + i] = P[(size_t)i * n + j];
  } else {
    PetscCall(PetscMalloc1((size_t)n * nk, &Cf));
    for (PetscInt k = 0; k < nk; k++) for (PetscInt r = 0; r < n; r++) Cf[(size_t)k * n + r] = f[k] * C[(size_t)k * n + r];
    BLASgemm_("N", "T", &bn, &bn, &bk, &one, Cf, &bn, C, &bn, &zero, P, &bn);
    PetscCall(PetscFree(Cf));
  }
  PetscCall(PetscFree(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubColumns(const SgTBSub *u, const PetscReal *f, PetscReal *Pk, PetscReal *eband, PetscReal *ne)
{
  PetscInt  n = u->n, m = u->m, nk = 0;
  PetscReal one = 1, zero = 0, e = 0, c = 0;
  BI        bn, bm, bk;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &bn)); PetscCall(PetscBLASIntCast(m, &bm));
  for (PetscInt k = 0; k < n; k++) if (f[k] != 0) nk = k + 1;
  PetscCall(PetscBLASIntCast(nk, &bk));
  if (m == n && !u->single) PetscCall(AllColumns(u, f, nk, Pk));
  else if (nk) { /* P[:,keep] = L^-T Q Y (f Ck^T) */
    PetscReal *T;
    PetscCall(PetscMalloc1((size_t)nk * m, &T));
    for (PetscInt k = 0; k < nk; k++) for (PetscInt q = 0; q < m; q++) T[q * nk + k] = f[k] * u->Ck[k * m + q];
    BLASgemm_("N", "N", &bn, &bm, &bk, &one, u->Y, &bn, T, &bk, &zero, Pk, &bn);
    PetscCall(PetscFree(T));
    PetscCall(ApplyQ(u, "N", m, Pk));
    if (u->L) BLAStrsm_("L", "L", "T", "N", &bn, &bm, &one, u->L, &bn, Pk, &bn);
  } else PetscCall(PetscArrayzero(Pk, (size_t)n * m));
  if (!u->single) {
    /* exact eigenpairs: 2 Tr_keep(A P) = 2 sum_k f_k l_k w_k, 2 Tr_keep(S P) = 2 sum_k f_k w_k */
    for (PetscInt k = 0; k < n; k++) { e += f[k] * u->lam[k] * u->w[k]; c += f[k] * u->w[k]; }
  } else {
    /* one McWeeny step in the S metric on the kept columns, P' = 3 P S P - 2 P S P S P; then the
       energy and count from the refined columns and the kept rows of A and S */
    PetscReal *V, *W, *X, *T;
    PetscCall(PetscMalloc4((size_t)n * m, &V, (size_t)n * m, &W, (size_t)n * m, &X, (size_t)n * m, &T));
    for (int pass = 0; pass < 2; pass++) {
      const PetscReal *in = pass ? V : Pk;
      PetscReal       *out = pass ? W : V;
      if (u->S) BLASgemm_("N", "N", &bn, &bm, &bn, &one, u->S, &bn, in, &bn, &zero, X, &bn);
      else PetscCall(PetscArraycpy(X, in, (size_t)n * m));
      PetscCall(ApplyP(u, f, X, T, out));
    }
    for (size_t k = 0; k < (size_t)n * m; k++) Pk[k] = 3 * V[k] - 2 * W[k];
    PetscCall(PetscFree4(V, W, X, T));
    for (PetscInt q = 0; q < m; q++)
      for (PetscInt r = 0; r < n; r++) {
        e += u->Ak[r * m + q] * Pk[q * n + r];
        c += u->Sk[r * m + q] * Pk[q * n + r];
      }
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
  PetscCall(PetscFree(u->Qr)); PetscCall(PetscFree(u->L)); PetscCall(PetscFree(u->S));
  PetscCall(PetscFree2(u->Y, u->tau));
  PetscCall(PetscFree(u->Ck));
  PetscCall(PetscFree2(u->Ak, u->Sk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubDestroy(SgTBSub *u)
{
  PetscFunctionBegin;
  PetscCall(SgTBSubFreeFactors(u));
  PetscCall(PetscFree2(u->lam, u->w));
  PetscFunctionReturn(PETSC_SUCCESS);
}
