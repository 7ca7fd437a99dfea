/* The small network the trainer's option tests train (test_trainer_zero, test_trainer_sdp4bit): an MLP
   NF inputs -> NH (tanh) -> 1 in four float64 tensors (w1 [NF][NH], b1 [NH], w2 [NH][1], b2), SUM loss
   1/2 sum (pred - y)^2 over the local samples, on n samples of a smooth function of 3 inputs (no noise
   needed: the net cannot fit it exactly). MlpRmse recomputes the error of a slab on the host, without
   the engine, so a test checks trained weights independently. The includer defines NF (3) and NH. */
#include <math.h>
#include <stdio.h>
#include "sgtrainer.h"
#include "sgdataset.h"

static PetscErrorCode MlpWriteData(const char path[], PetscInt n, const char provenance[])
{
  SgDataset ds;
  PetscInt  shape[1] = {NF};
  double   *x, *y;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n * NF, &x, n, &y));
  for (PetscInt i = 0; i < n; i++) {
    for (int j = 0; j < NF; j++) x[i * NF + j] = cos(0.71 * (i + 1) * (j + 1) + 0.3 * j);
    y[i] = sin(x[i * NF] + 2 * x[i * NF + 1]) - 0.5 * x[i * NF + 2] * x[i * NF + 2];
  }
  PetscCall(SgDatasetCreate(PETSC_COMM_SELF, path, "field_snapshots", PETSC_TRUE, &ds));
  PetscCall(SgDatasetSetProvenance(ds, NULL, provenance));
  PetscCall(SgDatasetDefineField(ds, "x", SG_DTYPE_F64, 1, shape, "1", 16));
  PetscCall(SgDatasetDefineField(ds, "y", SG_DTYPE_F64, 0, NULL, "1", 16));
  PetscCall(SgDatasetAppendBegin(ds, n));
  PetscCall(SgDatasetAppendField(ds, "x", SG_DTYPE_F64, x));
  PetscCall(SgDatasetAppendField(ds, "y", SG_DTYPE_F64, y));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscFree2(x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  SgnnBackend *be;
  SgnnParams   P;
  SgnnTensor   w1, b1, w2, b2, dead;
  long         np;
  FILE        *traj; /* if set, MlpMonitor writes the slab after every step to it */
} Net;

/* The four tensors (and, ndead > 0, a fifth of ndead values the loss never uses: its gradient is
   exactly 0, like an unused type embedding's), initialised to amplitude sin(1.3 i + 0.4): a fixed
   init that a reference can repeat. */
static PetscErrorCode MlpNetCreate(Net *m, int ndead, double amplitude)
{
  int     s1[2] = {NF, NH}, sb1[1] = {NH}, s2[2] = {NH, 1}, sb2[1] = {1}, sd[1] = {ndead};
  double *v;

  PetscFunctionBegin;
  m->traj = NULL;
  m->dead = NULL;
  SgCallNN(sgnn_backend_get("cpu", &m->be));
  SgCallNN(sgnn_params_create(m->be, SGNN_F64, &m->P));
  SgCallNN(sgnn_params_add(m->P, "w1", 2, s1, &m->w1));
  SgCallNN(sgnn_params_add(m->P, "b1", 1, sb1, &m->b1));
  SgCallNN(sgnn_params_add(m->P, "w2", 2, s2, &m->w2));
  SgCallNN(sgnn_params_add(m->P, "b2", 1, sb2, &m->b2));
  if (ndead > 0) SgCallNN(sgnn_params_add(m->P, "dead", 1, sd, &m->dead));
  SgCallNN(sgnn_params_setup(m->P));
  SgCallNN(sgnn_params_count(m->P, &m->np));
  PetscCall(PetscMalloc1(m->np, &v));
  for (long i = 0; i < m->np; i++) v[i] = amplitude * sin(1.3 * i + 0.4);
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), v));
  PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* loss = 1/2 sum over the local samples (pred - y)^2; pred = tanh(x W1 + b1) W2 + b2 */
static PetscErrorCode MlpLoss(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  Net       *m = (Net *)ctx;
  int        sx[2] = {(int)b->nlocal, NF}, sy[2] = {(int)b->nlocal, 1}, sh[2] = {(int)b->nlocal, NH};
  SgnnTensor X, Y, A, B, Z, H, O, C, P, D, D2, S;
  double     v;

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sx, b->data[0], &X));
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sy, b->data[1], &Y));
  SgCallNN(sgnn_matmul(X, m->w1, 0, 0, &A));
  SgCallNN(sgnn_expand(m->b1, 2, sh, &B));
  SgCallNN(sgnn_add(A, B, &Z));
  SgCallNN(sgnn_tanh(Z, &H));
  SgCallNN(sgnn_matmul(H, m->w2, 0, 0, &O));
  SgCallNN(sgnn_expand(m->b2, 2, sy, &C));
  SgCallNN(sgnn_add(O, C, &P));
  SgCallNN(sgnn_sub(P, Y, &D));
  SgCallNN(sgnn_mul(D, D, &D2));
  SgCallNN(sgnn_sum(D2, 0, NULL, 0, &S));
  SgCallNN(sgnn_tensor_item(S, &v));
  sums[0] += v;
  sums[1] += b->nlocal;
  SgCallNN(sgnn_affine(S, 0.5, 0.0, loss));
  SgnnTensor *fr[] = {&X, &Y, &A, &B, &Z, &H, &O, &C, &P, &D, &D2, &S};
  for (int q = 0; q < 12; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MlpMonitor(SgTrainer tr, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[])
{
  Net *m = (Net *)ctx;

  PetscFunctionBegin;
  cols[0] = sqrt(sums[0] / PetscMax(sums[1], 1));
  if (m->traj) { /* after the update of this step */
    double *v;
    PetscCall(PetscMalloc1(m->np, &v));
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), v));
    for (long i = 0; i < m->np; i++) fprintf(m->traj, "%.17g%c", v[i], i + 1 < m->np ? ' ' : '\n');
    PetscCall(PetscFree(v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rms error of the net of slab w (w1, b1, w2, b2 in that order) on the first n samples of the file */
static PetscErrorCode MlpRmse(const char data[], PetscInt n, const double w[], double *rmse)
{
  SgDataset ds;
  double   *x, *y, e = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n * NF, &x, n, &y));
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, data, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetReadField(ds, "x", 0, n, SG_DTYPE_F64, x));
  PetscCall(SgDatasetReadField(ds, "y", 0, n, SG_DTYPE_F64, y));
  PetscCall(SgDatasetClose(&ds));
  for (PetscInt i = 0; i < n; i++) {
    double p = w[NF * NH + NH + NH];
    for (int h = 0; h < NH; h++) {
      double z = w[NF * NH + h];
      for (int j = 0; j < NF; j++) z += x[i * NF + j] * w[j * NH + h];
      p += tanh(z) * w[NF * NH + NH + h];
    }
    e += (p - y[i]) * (p - y[i]);
  }
  PetscCall(PetscFree2(x, y));
  *rmse = sqrt(e / n);
  PetscFunctionReturn(PETSC_SUCCESS);
}
