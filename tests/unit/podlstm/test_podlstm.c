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
                         parameter: max relative error < 1e-6
                         (h = 1e-6 in double precision: truncation ~h^2, round-off ~1e-16/h).
   test_podlstm arch     random architectures lie in the paper's space; a mutation changes exactly
                         one decision; text forms round-trip; bad strings are refused. */
#include <math.h>
#include "sgpodlstm.h"
#include <petscblaslapack.h>
#include "sgtrainer.h"
#include "sgsys.h"

static int fails;
#define CHECK(c, ...) \
  do { \
    if (!(c)) { \
      fails++; \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n")); \
    } \
  } while (0)

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

/* loss = sum(y * w) for a fixed random w: its gradient is the network's vector-Jacobian product */
static PetscErrorCode NetLoss(SgPodLstmNet net, SgnnTensor x, SgnnTensor w, SgnnTensor *loss)
{
  SgnnTensor y, p;

  PetscFunctionBegin;
  PetscCall(SgPodLstmNetForward(net, x, &y));
  SgCallNN(sgnn_mul(y, w, &p));
  SgCallNN(sgnn_sum(p, 0, NULL, 0, loss));
  sgnn_tensor_free(&y), sgnn_tensor_free(&p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GradTest(void)
{
  const char  *archs[] = {"L8 I+1 L6+3 I+2 L5+1", "I L4 I+3"};
  SgnnBackend *be;
  SgnnRng      r;

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  for (int a = 0; a < 2; a++) {
    SgPodLstmArch arch;
    SgPodLstmNet  net;
    const int     B = 2, L = 4, K = 3, shape[3] = {B, L, K};
    PetscReal     xv[24], wv[24], *p0, *g, worst = 0;
    SgnnTensor    x, w, loss;
    long          np;
    PetscCall(SgPodLstmArchFromString(PETSC_COMM_SELF, archs[a], &arch));
    PetscCall(SgPodLstmNetCreate(&arch, K, L, (SgPodLstmHead)a, be, SGNN_F64, &net));
    PetscCall(SgPodLstmNetInit(net, 5 + a));
    sgnn_rng_init(&r, 99);
    for (int i = 0; i < B * L * K; i++) xv[i] = sgnn_rng_uniform(&r), wv[i] = sgnn_rng_normal(&r);
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, shape, xv, &x));
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, shape, wv, &w));
    SgCallNN(sgnn_params_count(net->P, &np));
    PetscCall(PetscMalloc2(np, &p0, np, &g));
    SgCallNN(sgnn_params_zero_grad(net->P));
    PetscCall(NetLoss(net, x, w, &loss));
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
      PetscCall(NetLoss(net, x, w, &loss));
      SgCallNN(sgnn_tensor_item(loss, &lp));
      sgnn_tensor_free(&loss);
      p0[i] -= 2 * h;
      SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(net->P), p0));
      PetscCall(NetLoss(net, x, w, &loss));
      SgCallNN(sgnn_tensor_item(loss, &lm));
      sgnn_tensor_free(&loss);
      p0[i] += h;
      fd    = (lp - lm) / (2 * h);
      worst = PetscMax(worst, PetscAbsReal(fd - g[i]) / PetscMax(1e-3, PetscAbsReal(fd)));
    }
    sgnn_set_grad_enabled(1);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "grad: architecture '%s', %ld parameters: max relative error vs central differences %.2e\n", archs[a], np, (double)worst));
    CHECK(worst < 1e-6, "gradient of '%s' differs from finite differences by %g", archs[a], (double)worst);
    PetscCall(PetscFree2(p0, g));
    sgnn_tensor_free(&x), sgnn_tensor_free(&w);
    PetscCall(SgPodLstmNetDestroy(&net));
  }
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

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_podlstm pod|grad|arch");
  if (!strcmp(argv[1], "pod")) PetscCall(PodTest());
  else if (!strcmp(argv[1], "grad")) PetscCall(GradTest());
  else if (!strcmp(argv[1], "arch")) PetscCall(ArchTest());
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown mode %s", argv[1]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
