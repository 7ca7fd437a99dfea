/* surrogates/podlstm unit tests.

   test_podlstm pod      (1 or 2 ranks) SLEPc's POD of a 600 x 48 snapshot matrix (rank 6 signal +
                         small noise, rows split over the ranks) against LAPACK's dense SVD of the
                         whole matrix on every rank: singular values to 1e-10 relative, every mode
                         parallel to LAPACK's (|cos| > 1 - 1e-10), the projection error of the data
                         on K = 6 modes equal to sqrt(sum_{k>K} sigma_k^2) (Eckart-Young) to 1e-9
                         relative; projection then reconstruction equal to the dense Phi Phi^T A to
                         1e-12; both SLEPc solvers (cross = method of snapshots, trlanczos). On 2
                         ranks the coefficients also equal a 1-rank POD of the same data (rank 0 on
                         COMM_SELF) to 1e-11 relative: projection and reconstruction in parallel.
   test_podlstm grad     the network's gradient (LSTM, identity and skip-projection layers; the step
                         head and the window head) against central finite differences of every
                         parameter: max relative error < 1e-6; the same for the rollout loss of 3
                         windows (podlstm: {rollout: 3}: forecasts fed back, gradients through them),
                         and of a residual network on a random affine base (base: var with rollout)
                         (h = 1e-6 in double precision: truncation ~h^2, round-off ~1e-16/h).
   test_podlstm arch     random architectures lie in the paper's space; a mutation changes exactly
                         one decision; text forms round-trip; bad strings are refused.
   test_podlstm interp   the grid maps of the field.advance provider: trigonometric interpolation exact
                         (1e-13) for a band-limited periodic function, the polynomial through 33
                         Chebyshev nodes exact (1e-12) for a degree-20 polynomial, cubic Lagrange exact
                         (1e-12) for a cubic and 4th order for a smooth function (error ratio > 12 per
                         halving).
   test_podlstm advance MODEL.h5 DATA.h5 FIELD SKIP NTRAIN   (1 or 2 ranks)
                         the field.advance provider of a trained model (created by type name through
                         the slot API, options in an options block) on the test period of the
                         dataset it was trained on, served through an SgSlot whose "solver" replays the
                         data: (a) static surrogate, one call: equal to SgPodLstmModelAdvance on the
                         same snapshots to 1e-12, and its checksum printed (for numpy); (a2) with -podlstm_forecast mean the model's and the
                         provider's forecast is the average of the k networks' own to 1e-12; (b) the adaptive policy (a trust band the spread never
                         leaves) with the surrogate held back every third call as a solver re-syncs:
                         exactly that pattern, finite spreads where the surrogate serves; prints the RMSE against the data per call and a checksum that the
                         2-rank run must reproduce. */
#include <math.h>
#include <stdlib.h>
#include "sgpodlstm.h"
#include <petscblaslapack.h>
#include "sgtrainer.h"
#include "sgdataset.h"
#include "sgsys.h"
#include "sgslot.h"
#include "sgsurrogate.h"

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_PodLstm(SgSurrogate);

#include "../../lib/sgtestcheck.h"

#define NROW 600
#define NCOL 48
#define KM   6

/* entry (i, j): six smooth spatial patterns with decaying amplitudes and time signals, plus noise */
static PetscReal Entry(PetscInt i, PetscInt j)
{
  PetscReal x = (i + 0.5) / NROW, t = (PetscReal)j, v = 3.0;
  for (int k = 0; k < 6; k++) v += PetscPowReal(0.5, k) * PetscSinReal((k + 1) * PETSC_PI * x + 0.3 * k) * PetscCosReal(0.17 * (k + 1) * t + k);
  return v + 1e-3 * (SgRandomUniform(7, (uint64_t)i, (uint64_t)j) - 0.5);
}

static PetscErrorCode PodTest(void)
{
  MPI_Comm     comm = PETSC_COMM_WORLD;
  PetscMPIInt  size, rank;
  PetscInt     nlocal = PETSC_DECIDE, N = NROW, rstart;
  PetscReal   *X, *A, *S, *U, *VT, *work, *coef, *R, mean[NROW];
  PetscBLASInt m = NROW, n = NCOL, lwork = 10 * NROW, info;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSplitOwnership(comm, &nlocal, &N));
  PetscCallMPI(MPI_Scan(&nlocal, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  rstart -= nlocal;
  PetscCall(PetscMalloc3(nlocal * NCOL, &X, NROW * NCOL, &A, NCOL, &S));
  PetscCall(PetscMalloc5(NROW * NCOL, &U, NCOL * NCOL, &VT, lwork, &work, NCOL * KM, &coef, nlocal * NCOL, &R));
  for (PetscInt j = 0; j < NCOL; j++)
    for (PetscInt i = 0; i < nlocal; i++) X[j * nlocal + i] = Entry(rstart + i, j);
  /* the dense reference: every rank builds the whole anomaly matrix */
  for (PetscInt i = 0; i < NROW; i++) {
    mean[i] = 0;
    for (PetscInt j = 0; j < NCOL; j++) mean[i] += Entry(i, j) / NCOL;
    for (PetscInt j = 0; j < NCOL; j++) A[j * NROW + i] = Entry(i, j) - mean[i];
  }
  LAPACKgesvd_("S", "S", &m, &n, A, &m, S, U, &m, VT, &n, work, &lwork, &info);
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "dgesvd failed: %d", (int)info);
  for (int sv = 0; sv < 2; sv++) {
    const char *solver = sv ? "trlanczos" : "cross";
    SgPOD       pod;
    PetscReal   es = 0, ec = 0, tail = 0, err2 = 0, err2g, dr = 0, drg, scale = 0;
    PetscCall(SgPODCreate(comm, nlocal, KM, &pod));
    PetscCall(SgPODCompute(pod, NCOL, X, solver));
    for (PetscInt k = 0; k < KM; k++) {
      PetscReal dot = 0, g;
      es = PetscMax(es, PetscAbsReal(pod->sigma[k] - S[k]) / S[k]);
      for (PetscInt i = 0; i < nlocal; i++) dot += pod->phi[k * nlocal + i] * U[k * NROW + rstart + i];
      PetscCallMPI(MPI_Allreduce(&dot, &g, 1, MPIU_REAL, MPIU_SUM, comm));
      ec = PetscMax(ec, 1 - PetscAbsReal(g));
    }
    for (PetscInt k = KM; k < NCOL; k++) tail += S[k] * S[k];
    /* projection + reconstruction vs the data and vs the dense U_K U_K^T A */
    PetscCall(SgPODProject(pod, NCOL, X, coef));
    PetscCall(SgPODReconstruct(pod, NCOL, coef, R));
    for (PetscInt j = 0; j < NCOL; j++)
      for (PetscInt i = 0; i < nlocal; i++) {
        PetscReal dense = mean[rstart + i];
        for (PetscInt k = 0; k < KM; k++) dense += S[k] * VT[j * NCOL + k] * U[k * NROW + rstart + i]; /* mean + U_K S_K V_K^T */
        err2 += PetscSqr(R[j * nlocal + i] - X[j * nlocal + i]);
        dr    = PetscMax(dr, PetscAbsReal(R[j * nlocal + i] - dense));
        scale = PetscMax(scale, PetscAbsReal(X[j * nlocal + i]));
      }
    PetscCallMPI(MPI_Allreduce(&err2, &err2g, 1, MPIU_REAL, MPIU_SUM, comm));
    PetscCallMPI(MPI_Allreduce(&dr, &drg, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCall(PetscPrintf(comm, "pod %-9s on %d rank(s): sigma rel. error %.1e, 1 - |cos(mode, LAPACK)| %.1e, projection error %.10e vs Eckart-Young %.10e, reconstruction vs dense %.1e\n", solver, size, (double)es, (double)ec, (double)PetscSqrtReal(err2g), (double)PetscSqrtReal(tail), (double)drg));
    if (!sv) PetscCall(SgPODView(pod, "pod"));
    CHECK(es < 1e-10, "%s: singular values differ from LAPACK by %g", solver, (double)es);
    CHECK(ec < 1e-10, "%s: a mode is not parallel to LAPACK's (1 - |cos| = %g)", solver, (double)ec);
    CHECK(PetscAbsReal(PetscSqrtReal(err2g) - PetscSqrtReal(tail)) < 1e-9 * PetscSqrtReal(tail), "%s: projection error %g, Eckart-Young %g", solver, (double)PetscSqrtReal(err2g), (double)PetscSqrtReal(tail));
    CHECK(drg < 1e-12 * scale, "%s: reconstruction differs from the dense U U^T A by %g", solver, (double)drg);
    if (size > 1 && !sv) { /* the same POD on one rank: coefficients agree to round-off */
      PetscReal *Xall, *c1, d = 0, cs = 0;
      SgPOD      p1;
      PetscCall(PetscMalloc2(NROW * NCOL, &Xall, NCOL * KM, &c1));
      for (PetscInt j = 0; j < NCOL; j++)
        for (PetscInt i = 0; i < NROW; i++) Xall[j * NROW + i] = Entry(i, j);
      if (!rank) {
        PetscCall(SgPODCreate(PETSC_COMM_SELF, NROW, KM, &p1));
        PetscCall(SgPODCompute(p1, NCOL, Xall, solver));
        PetscCall(SgPODProject(p1, NCOL, Xall, c1));
        PetscCall(SgPODDestroy(&p1));
        for (PetscInt q = 0; q < NCOL * KM; q++) d = PetscMax(d, PetscAbsReal(c1[q] - coef[q])), cs = PetscMax(cs, PetscAbsReal(c1[q]));
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "pod: 2 ranks vs 1 rank, max |coefficient difference| %.2e (largest coefficient %.2e)\n", (double)d, (double)cs));
        CHECK(d < 1e-11 * cs, "2-rank and 1-rank coefficients differ by %g", (double)d);
      }
      PetscCall(PetscFree2(Xall, c1));
    }
    PetscCall(SgPODDestroy(&pod));
  }
  PetscCall(PetscFree3(X, A, S));
  PetscCall(PetscFree5(U, VT, work, coef, R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R = 0: loss = sum(y * w) for a fixed random w (its gradient is the network's vector-Jacobian
   product); R > 0: the rollout loss of R windows against targets t [B, R L, K] (the training loss of
   podlstm: {rollout: R}: the forecasts fed back as inputs, gradients through them) */
static PetscErrorCode NetLoss(SgPodLstmNet net, SgnnTensor x, SgnnTensor w, SgnnTensor t, PetscInt R, SgnnTensor *loss)
{
  SgnnTensor y, p;

  PetscFunctionBegin;
  if (R) {
    PetscCall(SgPodLstmNetRolloutLoss(net, x, t, R, loss));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SgPodLstmNetForward(net, x, &y));
  SgCallNN(sgnn_mul(y, w, &p));
  SgCallNN(sgnn_sum(p, 0, NULL, 0, loss));
  sgnn_tensor_free(&y);
  sgnn_tensor_free(&p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The quadratic base acting on scaled coefficients (SgPodLstmVARScaled, what the rollout's tape
   iterates) against the model on unscaled ones: Vs(s) = scale(V(unscale(s))) over a window of 6 steps
   (K = 4, random W, lo, hi), to 1e-12 of the largest value (the map is exact algebra) */
static PetscErrorCode QuadScaledTest(void)
{
  const PetscInt    K = 4, L = 6, nq = K * (K + 1) / 2, q = 1 + 2 * K + nq;
  SgPodLstmVARModel V = {2, K, nq, 1e-3, NULL}, Vs;
  PetscReal         lo[4], hi[4], s[24], a[24], fs[24], fa[24], err = 0, big = 0;
  SgnnRng           r;

  PetscFunctionBegin;
  sgnn_rng_init(&r, 7);
  PetscCall(PetscMalloc1(q * K, &V.W));
  for (PetscInt i = 0; i < q * K; i++) V.W[i] = 0.2 * sgnn_rng_normal(&r);
  for (PetscInt k = 0; k < K; k++) {
    lo[k] = -1 - sgnn_rng_uniform(&r);
    hi[k] = 1 + 2 * sgnn_rng_uniform(&r);
  }
  for (PetscInt i = 0; i < L * K; i++) {
    s[i] = sgnn_rng_uniform(&r);
    a[i] = lo[i % K] + s[i] * (hi[i % K] - lo[i % K]);
  }
  PetscCall(SgPodLstmVARScaled(&V, lo, hi, &Vs));
  SgPodLstmVARIterate(&V, L, a, fa);
  SgPodLstmVARIterate(&Vs, L, s, fs);
  for (PetscInt i = 0; i < L * K; i++) {
    PetscReal sa = (fa[i] - lo[i % K]) / (hi[i % K] - lo[i % K]);
    err = PetscMax(err, PetscAbsReal(sa - fs[i]));
    big = PetscMax(big, PetscAbsReal(sa));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "grad: the quadratic base on scaled coefficients vs scaling its forecast of the unscaled ones: max difference %.2e (largest %.2e)\n", (double)err, (double)big));
  CHECK(err < 1e-12 * PetscMax(1, big), "the scaled quadratic base differs by %g", (double)err);
  PetscCall(SgPodLstmVARFree(&V));
  PetscCall(SgPodLstmVARFree(&Vs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GradTest(void)
{
  const char  *archs[] = {"L8 I+1 L6+3 I+2 L5+1", "I L4 I+3"};
  SgnnBackend *be;
  SgnnRng      r;

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  for (int c = 0; c < 6; c++) { /* both architectures (step head, window head), plain and rollout of 3;
                                   c = 4: the rollout of a residual network on an affine base (base: var);
                                   c = 5: the same on a quadratic base (base: quadratic), iterated on the tape */
    const int     a = c % 2, R = c < 2 ? 0 : 3;
    SgPodLstmArch arch;
    SgPodLstmNet  net;
    const int     B = 2, L = 4, K = 3, shape[3] = {B, L, K}, tshape[3] = {B, 3 * L, K};
    PetscReal     xv[24], wv[24], tv[72], *p0, *g, worst = 0;
    SgnnTensor    x, w, t, loss;
    long          np;
    PetscCall(SgPodLstmArchFromString(PETSC_COMM_SELF, archs[a], &arch));
    PetscCall(SgPodLstmNetCreate(&arch, K, L, (SgPodLstmHead)a, be, SGNN_F64, &net));
    PetscCall(SgPodLstmNetInit(net, 5 + a));
    sgnn_rng_init(&r, 99);
    for (int i = 0; i < B * L * K; i++) {
      xv[i] = sgnn_rng_uniform(&r);
      wv[i] = sgnn_rng_normal(&r);
    }
    for (int i = 0; i < 3 * B * L * K; i++) tv[i] = sgnn_rng_uniform(&r);
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, shape, xv, &x));
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, shape, wv, &w));
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, tshape, tv, &t));
    if (c == 4) { /* a random affine base G x + g of the window (constants: no gradient of their own) */
      const int nlk = L * K, sG[2] = {nlk, nlk};
      PetscReal Gv[144], gv[12];
      for (int i = 0; i < nlk * nlk; i++) Gv[i] = 0.3 * sgnn_rng_normal(&r);
      for (int i = 0; i < nlk; i++) gv[i] = 0.1 * sgnn_rng_normal(&r);
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 2, sG, Gv, &net->baseW));
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 1, &nlk, gv, &net->baseb));
    }
    if (c == 5) { /* a random quadratic base of 2 lags on scaled coefficients (SgPodLstmVARModel, nq = K(K+1)/2) */
      SgPodLstmVARModel Q = {2, K, K * (K + 1) / 2, 0, NULL};
      const PetscInt    q = 1 + 2 * K + Q.nq;
      PetscCall(PetscMalloc1(q * K, &Q.W));
      for (PetscInt i = 0; i < q * K; i++) Q.W[i] = 0.1 * sgnn_rng_normal(&r); /* small: the 4 steps stay O(1) */
      PetscCall(SgPodLstmNetSetPolyBase(net, &Q));
      PetscCall(SgPodLstmVARFree(&Q));
    }
    SgCallNN(sgnn_params_count(net->P, &np));
    PetscCall(PetscMalloc2(np, &p0, np, &g));
    SgCallNN(sgnn_params_zero_grad(net->P));
    PetscCall(NetLoss(net, x, w, t, R, &loss));
    SgCallNN(sgnn_backward(loss));
    sgnn_tensor_free(&loss);
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_grads(net->P), g));
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(net->P), p0));
    sgnn_set_grad_enabled(0);
    for (long i = 0; i < np; i++) {
      const PetscReal h = 1e-6;
      double          lp, lm, fd;
      p0[i] += h;
      SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(net->P), p0));
      PetscCall(NetLoss(net, x, w, t, R, &loss));
      SgCallNN(sgnn_tensor_item(loss, &lp));
      sgnn_tensor_free(&loss);
      p0[i] -= 2 * h;
      SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(net->P), p0));
      PetscCall(NetLoss(net, x, w, t, R, &loss));
      SgCallNN(sgnn_tensor_item(loss, &lm));
      sgnn_tensor_free(&loss);
      p0[i] += h;
      fd    = (lp - lm) / (2 * h);
      worst = PetscMax(worst, PetscAbsReal(fd - g[i]) / PetscMax(1e-3, PetscAbsReal(fd)));
    }
    sgnn_set_grad_enabled(1);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "grad: architecture '%s'%s, %ld parameters: max relative error vs central differences %.2e\n", archs[a], c == 4 ? ", rollout loss of 3 windows on an affine base" : c == 5 ? ", rollout loss of 3 windows on a quadratic base" : (R ? ", rollout loss of 3 windows" : ""), np, (double)worst));
    CHECK(worst < 1e-6, "gradient of '%s' (rollout %d) differs from finite differences by %g", archs[a], R, (double)worst);
    PetscCall(PetscFree2(p0, g));
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&w);
    sgnn_tensor_free(&t);
    sgnn_tensor_free(&net->baseW);
    sgnn_tensor_free(&net->baseb);
    PetscCall(SgPodLstmNetSetPolyBase(net, NULL));
    PetscCall(SgPodLstmNetDestroy(&net));
  }
  PetscCall(QuadScaledTest());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ArchTest(void)
{
  SgPodLstmSpace sp = {5, 16, 96, 16};
  PetscInt       units[7] = {0}, ndiff_hist[4] = {0};
  char           buf[128];

  PetscFunctionBegin;
  for (uint64_t key = 0; key < 400; key++) {
    SgPodLstmArch a, b, c;
    PetscInt      ndiff = 0;
    PetscCall(SgPodLstmArchRandom(&sp, 3, key, &a));
    PetscCall(SgPodLstmArchCheck(PETSC_COMM_SELF, &a));
    for (PetscInt i = 0; i < 5; i++) units[a.units[i] / 16]++;
    PetscCall(SgPodLstmArchMutate(&sp, &a, 3, key + 1000, &b));
    PetscCall(SgPodLstmArchCheck(PETSC_COMM_SELF, &b));
    for (PetscInt i = 0; i < 5; i++) ndiff += (a.units[i] != b.units[i]) + (PetscInt)__builtin_popcountll((unsigned long long)(a.skip[i] ^ b.skip[i]));
    ndiff_hist[PetscMin(ndiff, 3)]++;
    PetscCall(SgPodLstmArchToString(&b, buf, sizeof buf));
    PetscCall(SgPodLstmArchFromString(PETSC_COMM_SELF, buf, &c));
    CHECK(SgPodLstmArchEqual(&b, &c), "'%s' does not round-trip", buf);
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "arch: 400 random architectures, layer operations I/16/32/48/64/80/96 drawn %d/%d/%d/%d/%d/%d/%d times; mutations changing 0/1/2+ decisions: %d/%d/%d\n", (int)units[0], (int)units[1], (int)units[2], (int)units[3], (int)units[4], (int)units[5], (int)units[6], (int)ndiff_hist[0], (int)ndiff_hist[1], (int)(ndiff_hist[2] + ndiff_hist[3])));
  for (int u = 0; u < 7; u++) CHECK(units[u] > 200 && units[u] < 380, "operation %d drawn %d times of 2000 (expected ~286)", u, (int)units[u]);
  CHECK(ndiff_hist[1] == 400, "a mutation must change exactly one decision (%d did)", (int)ndiff_hist[1]);
  {
    const char    *bad[] = {"L64 X", "L0", "L64+1", "I I+4", "L16 L16 L16 L16 L16 L16 L16 L16 L16"};
    SgPodLstmArch  a;
    for (int i = 0; i < 5; i++) {
      PetscErrorCode e;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      e = SgPodLstmArchFromString(PETSC_COMM_SELF, bad[i], &a);
      PetscCall(PetscPopErrorHandler());
      CHECK(e == PETSC_ERR_USER_INPUT, "architecture '%s' was accepted", bad[i]);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode InterpTest(void)
{
  PetscReal xs[16], xq[7], T[7 * 16], zs[33], zq[9], Bm[9 * 33], e = 0;

  PetscFunctionBegin;
  for (int j = 0; j < 16; j++) xs[j] = 4.0 * j / 16; /* periodic, period 4 */
  for (int i = 0; i < 7; i++) xq[i] = 0.3 + 0.55 * i;
  SgPodLstmTrigInterp(7, xq, 16, xs, 4.0, T);
  for (int i = 0; i < 7; i++) { /* modes 0..7 (7 < 16/2) */
    PetscReal v = 0, f = 0;
    for (int j = 0; j < 16; j++) v += T[i * 16 + j] * (1 + PetscSinReal(2 * PETSC_PI * 3 * xs[j] / 4) + 0.5 * PetscCosReal(2 * PETSC_PI * 7 * xs[j] / 4));
    f = 1 + PetscSinReal(2 * PETSC_PI * 3 * xq[i] / 4) + 0.5 * PetscCosReal(2 * PETSC_PI * 7 * xq[i] / 4);
    e = PetscMax(e, PetscAbsReal(v - f));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "interp: trigonometric, band-limited function: max error %.2e\n", (double)e));
  CHECK(e < 1e-13, "trigonometric interpolation error %g", (double)e);
  e = 0;
  for (int j = 0; j < 33; j++) zs[j] = 0.5 * (1 - PetscCosReal(PETSC_PI * j / 32)); /* Chebyshev-Gauss-Lobatto on [0, 1] */
  for (int i = 0; i < 9; i++) zq[i] = (i + 0.5) / 9;
  SgPodLstmBaryInterp(9, zq, 33, zs, Bm);
  for (int i = 0; i < 9; i++) {
    PetscReal v = 0;
    for (int j = 0; j < 33; j++) v += Bm[i * 33 + j] * PetscPowRealInt(zs[j] - 0.3, 20);
    e = PetscMax(e, PetscAbsReal(v - PetscPowRealInt(zq[i] - 0.3, 20)));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "interp: barycentric through 33 Chebyshev nodes, (z - 0.3)^20: max error %.2e\n", (double)e));
  CHECK(e < 1e-12, "barycentric interpolation error %g", (double)e);
  {
    PetscReal err[3] = {0};
    for (int lev = 0; lev < 3; lev++) {
      int       n = 16 << lev;
      PetscReal zu[64], C[9 * 64], ec = 0;
      for (int k = 0; k < n; k++) zu[k] = (k + 0.5) / n; /* cell centres */
      SgPodLstmCubicInterp(9, zq, n, zu, C);
      for (int i = 0; i < 9; i++) {
        PetscReal v = 0, c3 = 0;
        for (int k = 0; k < n; k++) v += C[i * n + k] * PetscSinReal(3 * zu[k]), c3 += C[i * n + k] * (1 + zu[k] - 2 * PetscPowRealInt(zu[k], 3));
        err[lev] = PetscMax(err[lev], PetscAbsReal(v - PetscSinReal(3 * zq[i])));
        ec       = PetscMax(ec, PetscAbsReal(c3 - (1 + zq[i] - 2 * PetscPowRealInt(zq[i], 3))));
      }
      CHECK(ec < 1e-12, "cubic Lagrange is not exact for a cubic (%g)", (double)ec);
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "interp: cubic Lagrange on 16/32/64 cell centres, sin(3z): max errors %.2e %.2e %.2e (ratios %.1f %.1f)\n", (double)err[0], (double)err[1], (double)err[2], (double)(err[0] / err[1]), (double)(err[1] / err[2])));
    CHECK(err[0] / err[1] > 12 && err[1] / err[2] > 12, "cubic Lagrange is not 4th order");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the "solver" of the slot test: the true snapshots that follow the history */
typedef struct {
  const PetscReal *X; /* [nsnap][n] the data */
  PetscInt         n, first;
  PetscReal        t0, dt;
} Replay;

static PetscErrorCode ReplayAdvance(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  Replay  *r = (Replay *)ctx;
  PetscInt j0 = (PetscInt)PetscFloorReal((in->tnext[0] - r->t0) / r->dt + 0.5);

  PetscFunctionBegin;
  for (PetscInt k = 0; k < in->nnext; k++) PetscCall(PetscArraycpy(out->v + k * r->n, r->X + (j0 + k) * r->n, r->n)); /* one channel */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AdvanceTest(const char model[], const char data[], const char field[], PetscInt skip, PetscInt ntrain)
{
  MPI_Comm                comm = PETSC_COMM_WORLD;
  SgDataset               ds;
  int64_t                 nall;
  PetscInt                id, rd, nz, nx, n, L;
  const PetscInt         *rs;
  PetscReal              *X, *t, *zc, *xc, *blk, *v, sum = 0;
  const char *const       chan[1] = {field};
  SgFieldAdvanceProvider  p;
  SgPodLstmModel          M;
  SgnnBackend            *be;

  PetscFunctionBegin;
  PetscCall(SgSurrogateRegister("podlstm", SgSurrogateCreate_PodLstm));
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, data, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, &nall));
  PetscCall(SgDatasetFindField(ds, field, &id));
  PetscCall(SgDatasetGetFieldInfo(ds, id, NULL, NULL, &rd, &rs, NULL));
  nz = rs[0];
  nx = rs[1];
  n = nz * nx;
  PetscCall(PetscMalloc4(nall * n, &X, nall, &t, nz, &zc, nx, &xc));
  PetscCall(SgDatasetReadField(ds, field, 0, nall, SG_DTYPE_F64, X));
  PetscCall(SgDatasetReadField(ds, "time", 0, nall, SG_DTYPE_F64, t));
  PetscCall(SgDatasetClose(&ds));
  for (PetscInt k = 0; k < nz; k++) zc[k] = -90 + (k + 0.5) * 180.0 / nz; /* the SST grid: latitude, longitude cell centres */
  for (PetscInt i = 0; i < nx; i++) xc[i] = (i + 0.5) * 360.0 / nx;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgPodLstmModelLoad(comm, model, be, &M));
  L = M.L;
  PetscCall(PetscOptionsSetValue(NULL, "-test_podlstm_model", model));
  {
    SgFieldProviderInfo info = {comm, 1, chan, 0, NULL, NULL, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "test_", NULL};
    PetscOptionsBegin(comm, "test_", "field.advance test", NULL);
    info.PetscOptionsObject = PetscOptionsObject;
    PetscCall(SgFieldAdvanceProviderCreate("podlstm", &info, &p));
    PetscOptionsEnd();
  }
  CHECK(p.history == L && p.nnext == L && p.dt == M.dt, "the provider needs %" PetscInt_FMT " snapshots %g apart", p.history, (double)p.dt);
  PetscCall(PetscMalloc2(L * n, &blk, L * n, &v));
  { /* (a) one call against the model's own forecast */
    const PetscInt s0 = skip + ntrain - L; /* the history ends at the last training snapshot */
    SgFieldBlock         B  = {1, chan, {L, nz, nx}, {t + s0, zc, xc}, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, X + s0 * n};
    PetscReal            tn[64], spread, d = 0, *ref, *hist;
    SgFieldAdvanceInput  in  = {&B, L, tn};
    SgFieldAdvanceOutput out = {v};
    SgSlot               slot;
    PetscInt             nl = M.pod->nlocal;
    for (PetscInt k = 0; k < L; k++) tn[k] = t[s0 + L - 1] + (k + 1) * M.dt;
    PetscCall(SgSlotCreate("field.advance", &slot));
    PetscCall(SgSlotSetFieldAdvanceProvider(slot, "replay", ReplayAdvance, NULL));
    PetscCall(SgSlotSetFieldAdvanceSurrogate(slot, p.name, p.fn, p.uncertainty, p.ctx));
    PetscCall(SgSlotSetPolicy(slot, SG_SWAP_STATIC, PETSC_TRUE, 0, 0, 0, 1e6));
    PetscCall(SgSlotFieldAdvance(slot, &in, &out));
    PetscCall(SgSlotDestroy(&slot));
    PetscCall(PetscMalloc2(L * nl, &ref, L * nl, &hist));
    for (PetscInt k = 0; k < L; k++) PetscCall(PetscArraycpy(hist + k * nl, X + (s0 + k) * n + M.pod->rstart, nl));
    PetscCall(SgPodLstmModelAdvance(&M, hist, ref, &spread));
    for (PetscInt k = 0; k < L; k++)
      for (PetscInt i = 0; i < nl; i++) d = PetscMax(d, PetscAbsReal(v[k * n + M.pod->rstart + i] - ref[k * nl + i]));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCall(PetscPrintf(comm, "advance: one call through the slot vs SgPodLstmModelAdvance: max difference %.2e (spread %.4f)\n", (double)d, (double)spread));
    CHECK(d < 1e-12, "the provider's forecast differs from the model's by %g", (double)d);
    { /* a weighted sum of this forecast, for a check by numpy (e.g. of a fallback VAR) */
      PetscReal cs = 0;
      for (PetscInt k = 0; k < L; k++)
        for (PetscInt i = 0; i < nl; i++) cs += v[k * n + M.pod->rstart + i] * ((k * n + M.pod->rstart + i) % 7 + 1);
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &cs, 1, MPIU_REAL, MPIU_SUM, comm));
      PetscCall(PetscPrintf(comm, "advance: one call from the history ending at snapshot %" PetscInt_FMT ": weighted forecast sum %.15e (v[k n + i] ((k n + i) mod 7 + 1))%s\n", s0 + L - 1, (double)cs, M.fallback.p ? " -- the model serves its fallback VAR" : ""));
    }
    { /* (a2) forecast: mean -- the mean of the k networks' forecasts (each one's through a one-network
         copy of the model: the reconstruction is linear), and the provider serves it when asked */
      SgPodLstmModel         M1 = M;
      SgFieldAdvanceProvider p2;
      PetscReal             *avg, *one, dm = 0, dp = 0, sp;
      PetscCall(PetscCalloc2(L * nl, &avg, L * nl, &one));
      M1.nmodels = 1;
      for (PetscInt m = 0; m < M.nmodels; m++) {
        M1.nets[0] = M.nets[m];
        PetscCall(SgPodLstmModelAdvance(&M1, hist, one, &sp));
        for (PetscInt i = 0; i < L * nl; i++) avg[i] += one[i] / M.nmodels;
      }
      M.mean_forecast = PETSC_TRUE;
      PetscCall(SgPodLstmModelAdvance(&M, hist, ref, &spread));
      M.mean_forecast = PETSC_FALSE;
      for (PetscInt i = 0; i < L * nl; i++) dm = PetscMax(dm, PetscAbsReal(ref[i] - avg[i]));
      PetscCall(PetscOptionsSetValue(NULL, "-test_podlstm_forecast", "mean"));
      {
        SgFieldProviderInfo info = {comm, 1, chan, 0, NULL, NULL, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "test_", NULL};
        PetscOptionsBegin(comm, "test_", "field.advance test", NULL);
        info.PetscOptionsObject = PetscOptionsObject;
        PetscCall(SgFieldAdvanceProviderCreate("podlstm", &info, &p2));
        PetscOptionsEnd();
      }
      PetscCall(PetscOptionsClearValue(NULL, "-test_podlstm_forecast"));
      PetscCall(p2.fn(p2.ctx, &in, &out));
      for (PetscInt k = 0; k < L; k++)
        for (PetscInt i = 0; i < nl; i++) dp = PetscMax(dp, PetscAbsReal(v[k * n + M.pod->rstart + i] - avg[k * nl + i]));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dm, 1, MPIU_REAL, MPIU_MAX, comm));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dp, 1, MPIU_REAL, MPIU_MAX, comm));
      PetscCall(PetscPrintf(comm, "advance: forecast mean of %" PetscInt_FMT " networks vs the average of their own forecasts: max difference %.2e; through the provider (-podlstm_forecast mean) %.2e\n", M.nmodels, (double)dm, (double)dp));
      CHECK(M.nmodels >= 2, "the model has %" PetscInt_FMT " network(s): the mean forecast is not tested", M.nmodels);
      CHECK(dm < 1e-12 && dp < 1e-12, "the mean forecast differs from the average of the networks' by %g (model), %g (provider)", (double)dm, (double)dp);
      PetscCall(SgFieldAdvanceProviderDestroy(&p2));
      PetscCall(PetscFree2(avg, one));
    }
    PetscCall(PetscFree2(ref, hist));
  }
  { /* (b) the adaptive policy, resync every 2L: replay the test period through the slot */
    Replay       R = {X, n, 0, t[0], M.dt};
    SgSlot       slot;
    PetscInt     hist0 = skip + ntrain - 2 * L, ncall = 0, pattern[64], nsur = 0, nsol = 0;
    PetscReal   *state, unc[64];
    PetscCall(PetscMalloc1((skip + ntrain + 64 * L) * n, &state));
    PetscCall(SgSlotCreate("field.advance", &slot));
    PetscCall(SgSlotSetFieldAdvanceProvider(slot, "replay", ReplayAdvance, &R));
    PetscCall(SgSlotSetFieldAdvanceSurrogate(slot, p.name, p.fn, p.uncertainty, p.ctx));
    PetscCall(SgSlotSetPolicy(slot, SG_SWAP_ADAPTIVE, PETSC_TRUE, 0, 1e20, 1e20, 1e6));
    /* the run's snapshots so far: the data up to hist0 + L, then whatever the slot returns */
    PetscCall(PetscArraycpy(state, X, (hist0 + L) * n));
    for (PetscInt end = hist0 + L; ncall < 7 && end + L <= (PetscInt)nall; ncall++, end += L) {
      SgFieldBlock         B  = {1, chan, {L, nz, nx}, {t + end - L, zc, xc}, {0, -90, 0}, {0, 90, 360}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, state + (end - L) * n};
      PetscReal            tn[64], e2 = 0;
      SgFieldAdvanceInput  in  = {&B, L, tn};
      SgFieldAdvanceOutput out = {state + end * n};
      PetscBool            sur;
      for (PetscInt k = 0; k < L; k++) tn[k] = t[end + k];
      PetscCall(SgSlotSetStep(slot, ncall));
      PetscCall(SgSlotSetSurrogateAvailable(slot, (PetscBool)(ncall % 3 != 2), "re-synchronisation (the test's solver)"));
      PetscCall(SgSlotFieldAdvance(slot, &in, &out));
      PetscCall(SgSlotGetLastCall(slot, &sur, NULL, &unc[ncall]));
      pattern[ncall] = sur;
      nsur += sur;
      nsol += !sur;
      for (PetscInt q = 0; q < L * n; q++) e2 += PetscSqr(state[end * n + q] - X[end * n + q]), sum += state[end * n + q] * (q % 7 + 1);
      PetscCall(PetscPrintf(comm, "advance: call %" PetscInt_FMT " served by %-8s uncertainty %.3e, RMSE vs the data %.4f\n", ncall, sur ? "podlstm" : "replay", (double)unc[ncall], (double)PetscSqrtReal(e2 / (L * n))));
    }
    PetscCall(SgSlotDestroy(&slot));
    /* re-synchronised every third call: surrogate, surrogate, solver, ... */
    for (PetscInt c = 0; c < ncall; c++) CHECK(pattern[c] == (c % 3 != 2), "call %" PetscInt_FMT " served by the %s", c, pattern[c] ? "surrogate" : "solver");
    for (PetscInt c = 0; c < ncall; c++) CHECK(c % 3 == 2 ? unc[c] == -1 : (unc[c] >= 0 && unc[c] < 1e3), "uncertainty %g at call %" PetscInt_FMT, (double)unc[c], c);
    PetscCall(PetscPrintf(comm, "advance: %" PetscInt_FMT " surrogate and %" PetscInt_FMT " solver calls; checksum %.12e\n", nsur, nsol, (double)sum));
    PetscCall(PetscFree(state));
  }
  PetscCall(SgFieldAdvanceProviderDestroy(&p));
  PetscCall(SgPodLstmModelFree(&M));
  PetscCall(PetscFree2(blk, v));
  PetscCall(PetscFree4(X, t, zc, xc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_podlstm pod|grad|arch");
  if (!strcmp(argv[1], "pod")) PetscCall(PodTest());
  else if (!strcmp(argv[1], "grad")) PetscCall(GradTest());
  else if (!strcmp(argv[1], "arch")) PetscCall(ArchTest());
  else if (!strcmp(argv[1], "interp")) PetscCall(InterpTest());
  else if (!strcmp(argv[1], "advance")) {
    PetscCheck(argc >= 7, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_podlstm advance MODEL.h5 DATA.h5 FIELD SKIP NTRAIN");
    PetscCall(AdvanceTest(argv[2], argv[3], argv[4], atoi(argv[5]), atoi(argv[6])));
  }
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown mode %s", argv[1]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
