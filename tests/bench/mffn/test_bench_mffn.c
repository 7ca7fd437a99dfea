/* MeshfreeFlowNet training-step cost at the paper's size (figures, not pass/fail): the default
   configuration (U-Net 16..256, latent 32, ImNet 512 256 128 64 32; the weight count is printed),
   one crop 4 x 16 x 16 of random normalised input, P query points, gamma 0.0125 and 0: CPU seconds
   of this process for the loss (encoder, decoder, derivatives by double backward, residual) and for the backward, the mean
   of N steps after one warm-up, float64, this process's threads (OPENBLAS_NUM_THREADS,
   SGNN_NUM_THREADS).
     build/tests/test_bench_mffn [P] [N]      (run.sh in this folder runs it on one core) */
#include <time.h>
#include "sgmffn.h"
#include "sgtrainer.h"

/* CPU time of this process: the shared machine's load inflates wall times */
static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
  SgMFFNConfig  c;
  SgMFFN        m;
  SgnnBackend  *be;
  SgMFFNPhysics ph = {1e-3, 1e-3, {1.0, 1.0 / 16, 4.0 / 64}, {0, 0, 0, 0}, {1, 1, 1, 1}};
  SgnnRng       r;
  int           P = argc > 1 ? atoi(argv[1]) : 512, N = argc > 2 ? atoi(argv[2]) : 3, xs[5] = {1, 4, 4, 16, 16};
  double       *x, *pts, *tgt, tl = 0, tb = 0, tl0 = 0, tb0 = 0;
  long          np;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(SgMFFNConfigDefault(&c));
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &m));
  PetscCall(SgMFFNInitWeights(m, 1));
  SgCallNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc3(4 * 4 * 16 * 16, &x, 3 * P, &pts, 4 * P, &tgt));
  sgnn_rng_init(&r, 1);
  for (int i = 0; i < 4 * 4 * 16 * 16; i++) x[i] = sgnn_rng_normal(&r);
  for (int p = 0; p < P; p++) {
    pts[3 * p] = 3 * sgnn_rng_uniform(&r), pts[3 * p + 1] = 15 * sgnn_rng_uniform(&r), pts[3 * p + 2] = 15 * sgnn_rng_uniform(&r);
    for (int k = 0; k < 4; k++) tgt[4 * p + k] = sgnn_rng_normal(&r);
  }
  for (int gam = 1; gam >= 0; gam--) {
    tl = tb = 0;
    for (int it = 0; it <= N; it++) {
      SgnnTensor X, L;
      PetscReal  reg, pde;
      double     t0 = Now(), t1, t2;
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 5, xs, x, &X));
      PetscCall(SgMFFNCropLoss(m, &ph, X, P, pts, tgt, gam ? 0.0125 : 0, &L, &reg, &pde));
      t1 = Now();
      SgCallNN(sgnn_params_zero_grad(m->P));
      SgCallNN(sgnn_backward(L));
      t2 = Now();
      if (it) tl += t1 - t0, tb += t2 - t1;
      sgnn_tensor_free(&X), sgnn_tensor_free(&L);
    }
    if (gam) tl0 = tl / N, tb0 = tb / N;
    else PetscCall(PetscPrintf(PETSC_COMM_SELF, "mffn paper size: %ld weights, 1 crop 4x16x16, %d points, CPU time: gamma 0.0125: loss %.3f s + backward %.3f s = %.3f s/crop; gamma 0: %.3f + %.3f = %.3f s/crop\n", np, P, tl0, tb0, tl0 + tb0, tl / N, tb / N, (tl + tb) / N));
  }
  PetscCall(PetscFree3(x, pts, tgt));
  PetscCall(SgMFFNDestroy(&m));
  PetscCall(PetscFinalize());
  return 0;
}
