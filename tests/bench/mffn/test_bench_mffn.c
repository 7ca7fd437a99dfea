/* MeshfreeFlowNet training-step cost (figures, not pass/fail): one crop 4 x 16 x 16 of random
   normalised input, P random query points inside it, gamma 0.0125 and 0: CPU seconds of this process
   for the loss (encoder, decoder, derivatives by double backward, residual) and for the backward, the
   mean of N steps after one warm-up, float64, this process's threads (OPENBLAS_NUM_THREADS,
   SGNN_NUM_THREADS). The configuration defaults to the paper's (U-Net 16..256 with four poolings,
   latent 32, ImNet 512 256 128 64 32, BN with batch statistics; the weight count is printed).

     build/tests/test_bench_mffn [P] [N] [-channels 16,32,64 -pool 1,2,2,1,2,2 -latent 32
                                  -imnet 128,64,32 -batchnorm 0 -residual 1] [-dump DIR]

   -dump DIR writes the model (DIR/model.h5, SgMFFNSave), the crop (DIR/crop.f64: the 4 x 4 x 16 x 16
   input, then P x 3 points, then P x 4 targets, float64) and the loss of the first step and the
   gradient slab after it (DIR/ref.f64: loss, regression, PDE terms, then the gradient), so that
   torch_ref.py (this folder) can check it builds the same network before it compares step times. */
#include <time.h>
#include "sgmffn.h"
#include "sgtrainer.h"
#include "sgsys.h"

/* CPU time of this process: the shared machine's load inflates wall times */
static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static PetscErrorCode Config(SgMFFNConfig *c, char dump[], size_t len)
{
  PetscInt  iv[3 * SG_MFFN_MAXLEVELS], n;
  PetscBool set;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MeshfreeFlowNet step benchmark", "");
  n = SG_MFFN_MAXLEVELS + 1;
  PetscCall(SgOptionsIntArray("-channels", "U-Net widths", c->channels, &n, &set, 1, 4096));
  if (set) c->nlevels = n - 1;
  n = 3 * SG_MFFN_MAXLEVELS;
  PetscCall(SgOptionsIntArray("-pool", "poolings t z x, flattened", iv, &n, &set, 1, 64));
  if (set)
    for (PetscInt i = 0; i < n; i++) c->pool[i / 3][i % 3] = iv[i];
  PetscCall(SgOptionsInt("-latent", "latent channels", c->latent, &c->latent, NULL, 1, 4096));
  n = SG_MFFN_MAXMLP;
  PetscCall(SgOptionsIntArray("-imnet", "ImNet widths", c->mlp, &n, &set, 1, 8192));
  if (set) c->nmlp = n;
  PetscCall(SgOptionsBool("-batchnorm", "BN with batch statistics", c->batchnorm, &c->batchnorm, NULL));
  PetscCall(SgOptionsBool("-residual", "correction to trilinear interpolation", c->residual, &c->residual, NULL));
  PetscCall(SgOptionsString("-dump", "write model, crop and reference loss/gradient here", dump, dump, len, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Dump(const char dir[], SgMFFN m, const SgMFFNPhysics *ph, const double *x, int nx, const double *pts, const double *tgt, int P, const double loss[3])
{
  char     path[PETSC_MAX_PATH_LEN];
  PetscInt fac[3] = {4, 4, 4};
  long     n;
  double  *g;
  FILE    *fp;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/model.h5", dir));
  PetscCall(SgMFFNSave(m, ph, fac, path));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/crop.f64", dir));
  fp = fopen(path, "wb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fwrite(x, sizeof(double), nx, fp);
  fwrite(pts, sizeof(double), 3 * P, fp);
  fwrite(tgt, sizeof(double), 4 * P, fp);
  fclose(fp);
  SgCallNN(sgnn_params_count(m->P, &n));
  PetscCall(PetscMalloc1(n, &g));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_grads(m->P), g));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/ref.f64", dir));
  fp = fopen(path, "wb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fwrite(loss, sizeof(double), 3, fp);
  fwrite(g, sizeof(double), n, fp);
  fclose(fp);
  PetscCall(PetscFree(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgMFFNConfig  c;
  SgMFFN        m;
  SgnnBackend  *be;
  SgMFFNPhysics ph = {1e-3, 1e-3, {1.0, 1.0 / 16, 4.0 / 64}, {0.01, -0.02, 0.03, 0.04}, {0.5, 0.2, 0.1, 0.15}};
  SgnnRng       r;
  int           P = argc > 1 && argv[1][0] != '-' ? atoi(argv[1]) : 512, N = argc > 2 && argv[2][0] != '-' ? atoi(argv[2]) : 3, xs[5] = {1, 4, 4, 16, 16};
  double       *x, *pts, *tgt, tl = 0, tb = 0, tl0 = 0, tb0 = 0;
  char          dump[PETSC_MAX_PATH_LEN] = "";
  long          np;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(SgMFFNConfigDefault(&c));
  PetscCall(Config(&c, dump, sizeof dump));
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &m));
  PetscCall(SgMFFNInitWeights(m, 1));
  if (c.residual) { /* a trained model's last layer is not zero: give the correction some weight */
    SgnnRng rw;
    sgnn_rng_init(&rw, 5);
    SgCallNN(sgnn_init_normal(m->mlp_w[c.nmlp], 0, 0.05, &rw));
  }
  SgCallNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc3(4 * 4 * 16 * 16, &x, 3 * P, &pts, 4 * P, &tgt));
  sgnn_rng_init(&r, 1);
  for (int i = 0; i < 4 * 4 * 16 * 16; i++) x[i] = sgnn_rng_normal(&r);
  for (int p = 0; p < P; p++) {
    pts[3 * p] = 3 * sgnn_rng_uniform(&r);
    pts[3 * p + 1] = 15 * sgnn_rng_uniform(&r);
    pts[3 * p + 2] = 15 * sgnn_rng_uniform(&r);
    for (int k = 0; k < 4; k++) tgt[4 * p + k] = sgnn_rng_normal(&r);
  }
  for (int gam = 1; gam >= 0; gam--) {
    tl = tb = 0;
    for (int it = 0; it <= N; it++) {
      SgnnTensor X, L;
      PetscReal  reg, pde;
      double     t0 = Now(), t1, t2, lv;
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 5, xs, x, &X));
      PetscCall(SgMFFNCropLoss(m, &ph, X, P, pts, tgt, gam ? 0.0125 : 0, NULL, &L, &reg, &pde));
      t1 = Now();
      SgCallNN(sgnn_params_zero_grad(m->P));
      SgCallNN(sgnn_backward(L));
      t2 = Now();
      if (it) {
        tl += t1 - t0;
        tb += t2 - t1;
      } else if (gam && dump[0]) {
        double ref[3];
        SgCallNN(sgnn_tensor_item(L, &lv));
        ref[0] = lv;
        ref[1] = reg;
        ref[2] = pde;
        PetscCall(Dump(dump, m, &ph, x, 4 * 4 * 16 * 16, pts, tgt, P, ref));
      }
      sgnn_tensor_free(&X);
      sgnn_tensor_free(&L);
    }
    if (gam) {
      tl0 = tl / N;
      tb0 = tb / N;
    } else PetscCall(PetscPrintf(PETSC_COMM_SELF, "mffn step: %ld weights, 1 crop 4x16x16, %d points, CPU time: gamma 0.0125: loss %.4f s + backward %.4f s = %.4f s/crop; gamma 0: %.4f + %.4f = %.4f s/crop\n", np, P, tl0, tb0, tl0 + tb0, tl / N, tb / N, (tl + tb) / N));
  }
  PetscCall(PetscFree3(x, pts, tgt));
  PetscCall(SgMFFNDestroy(&m));
  PetscCall(PetscFinalize());
  return 0;
}
