/* SgTrainer with a surrogate of its own: linear least squares y = x.w + b (3 features), written on the
   trainer exactly as a real surrogate is (parameter slab, SUM loss, monitor; the default io/nn
   checkpoint). What it checks, and why it can fail:

   test_trainer fit DIR   (1 rank)
     1. full-batch gradient descent reaches the least-squares solution computed independently (normal
        equations, Cramer's rule): |w - w_ls| < 1e-9 after 600 steps at lr 0.3 (the GD error contracts
        by (1 - lr*lambda_min) per step; the data's lambda_min ~ 0.5 gives 1e-30, so 1e-9 only leaves
        round-off and a wrong gradient scale, sum vs mean, fails it by orders of magnitude);
     2. two streams (files of 40 and 24 samples), batch 8, Adam, staircase schedule: 30 steps equal
        15 steps, a checkpoint, and a restart for 15 (a new model from another init: the checkpoint
        restores weights, Adam and the loaders' position), bit for bit; the lcurve has one line per
        progress step and no second header after the restart; a max_time stop after step 1 writes a
        checkpoint there, and its restart ends bit for bit where the uninterrupted run does;
        a stop the monitor requests (early stopping) at the progress line of step 10 ends the run
        there, with its checkpoint at step 10;
     3. a training set with a NaN label stops the run (the surrogate's check) with the error, and an
        unknown sync name is refused;
     3b. gradient clipping and plateau decay of the learning rate (plateau.c): full-batch SGD (lr 0.3)
        with the gradient clipped to norm 0.2 (torch's clip_grad_norm_: scale max/(norm + 1e-6)) and
        the rule of PyTorch's ReduceLROnPlateau (mode min, relative threshold 1e-4; window 5 steps,
        patience 1, factor 0.5) ends, after 150 steps, where a plain loop written here from PyTorch's
        documented rules ends (|dw| < 1e-12). The run clips and cuts: 5 cuts, the first after step
        105, when the loss stalls near the minimum; the closest decision is 2.8e-5 (relative) from its
        threshold, far above round-off, and one cut a window late moves the weights by 1e-5. And the
        150 steps equal 107 + a checkpoint taken mid-window (after the first cut) + a restart whose 4
        cuts depend on the restored state (factor, best loss, counter, window sum), bit for bit.
        The same restart with -plateau_fresh_on_restart ends where the reference loop ends whose
        scheduler starts afresh at step 107 (best, counter and window reset, the rate kept), and not
        where the plain restart ends.
   test_trainer mpi DIR   (2 ranks)
     4. the two-stream run on 2 ranks with the bucketed sync (1-parameter buckets, so both start during
        backward) equals the blocking allreduce sync bit for bit, and the 1-rank run (rank 0 on
        COMM_SELF) to round-off (5e-13 relative: only the order of the sum of 8 terms differs);
     5. a 2-rank checkpoint is refused on 1 rank, naming the rank count.
   test_trainer grid DIR   (4 ranks)
     6. the model split over the spatial ranks of a process grid as a partitioned CNN is: spatial rank s
        of S reads only features [3s/S, 3(s+1)/S) of every sample (its loader shard of x) and holds
        their gradients; the prediction is the sum of the ranks' partial products (sgpar_allreduce_sum
        over the spatial group), the bias added on the last spatial rank. 2 data groups x 2 spatial
        ranks (hybrid sync, chosen by itself) and 4 x 1 (hybrid named) equal the 1-rank run to 5e-13
        relative: only wrong sample ids (spatial ranks of a group getting different samples), a
        sample counted once per spatial rank, or a lost shard fail it by O(1). The spatial ranks of
        a group are checked to get the same sample ids at every step, and local batches to differ
        between groups (uneven: exact normalisation by the global count);
     7. data_groups 3 x spatial_ranks 2 on 4 ranks is refused naming both options, and the 2 x 2 run's
        checkpoint is refused by a 4 x 1 run, naming the grid. */
#include <math.h>
#include "sgtrainer.h"
#include "sgdataset.h"
#include "sgnncheckpoint.h"

#define NF 3
#include "../../lib/sgtestcheck.h"

static const double wtrue[NF] = {1.5, -2.0, 0.5}, btrue = 0.25;

/* n samples: x uniform-ish in [-1, 1] from a fixed sequence, y = x.wtrue + btrue + noise (nan_at: a NaN label) */
static PetscErrorCode MakeData(const char path[], PetscInt n, PetscInt first, PetscInt nan_at)
{
  SgDataset ds;
  PetscInt  shape[1] = {NF};
  double   *x, *y;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n * NF, &x, n, &y));
  for (PetscInt i = 0; i < n; i++) {
    y[i] = btrue;
    for (int j = 0; j < NF; j++) {
      x[i * NF + j] = sin(0.37 * (first + i + 1) * (j + 2) + j) * 0.9; /* frequencies differ per feature: full rank */
      y[i] += wtrue[j] * x[i * NF + j];
    }
    y[i] += 0.05 * cos(3.1 * (first + i)); /* noise: the LS solution is not wtrue */
    if (i == nan_at) y[i] = NAN;
  }
  PetscCall(SgDatasetCreate(PETSC_COMM_SELF, path, "field_snapshots", PETSC_TRUE, &ds));
  PetscCall(SgDatasetSetProvenance(ds, NULL, "SgTrainer test data"));
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

/* the file's samples: x [n][NF], y [n] (PetscFree2 them) */
static PetscErrorCode ReadSamples(const char path[], int64_t *n, double **x, double **y)
{
  SgDataset ds;

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, n));
  PetscCall(PetscMalloc2(*n * NF, x, *n, y));
  PetscCall(SgDatasetReadField(ds, "x", 0, *n, SG_DTYPE_F64, *x));
  PetscCall(SgDatasetReadField(ds, "y", 0, *n, SG_DTYPE_F64, *y));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The least-squares solution of the file's samples: normal equations for (w, b), Gauss-Jordan. */
static PetscErrorCode LeastSquares(const char path[], double sol[NF + 1])
{
  int64_t n;
  double *x, *y, A[NF + 1][NF + 2] = {{0}};

  PetscFunctionBegin;
  PetscCall(ReadSamples(path, &n, &x, &y));
  for (int64_t i = 0; i < n; i++) {
    double a[NF + 1] = {x[i * NF], x[i * NF + 1], x[i * NF + 2], 1.0};
    for (int r = 0; r <= NF; r++) {
      for (int c = 0; c <= NF; c++) A[r][c] += a[r] * a[c];
      A[r][NF + 1] += a[r] * y[i];
    }
  }
  for (int k = 0; k <= NF; k++) {
    double p = A[k][k];
    for (int c = k; c <= NF + 1; c++) A[k][c] /= p;
    for (int r = 0; r <= NF; r++)
      if (r != k)
        for (int c = NF + 1; c >= k; c--) A[r][c] -= A[r][k] * A[k][c];
  }
  for (int r = 0; r <= NF; r++) sol[r] = A[r][NF + 1];
  PetscCall(PetscFree2(x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  SgnnBackend *be;
  SgnnParams   P;
  SgnnTensor   w, b;
  PetscInt     stop_at, steps_done; /* the monitor asks to stop from step stop_at on (0: never); steps run */
} Model;

static PetscErrorCode ModelCreate(Model *m, double init)
{
  int       sw[2] = {NF, 1}, sb[1] = {1};
  long      np;
  double    v[NF + 1];

  PetscFunctionBegin;
  m->stop_at = m->steps_done = 0;
  SgCallNN(sgnn_backend_get("cpu", &m->be));
  SgCallNN(sgnn_params_create(m->be, SGNN_F64, &m->P));
  SgCallNN(sgnn_params_add(m->P, "w", 2, sw, &m->w));
  SgCallNN(sgnn_params_add(m->P, "b", 1, sb, &m->b));
  SgCallNN(sgnn_params_setup(m->P));
  SgCallNN(sgnn_params_count(m->P, &np));
  for (long i = 0; i < np; i++) v[i] = init * (i + 1);
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModelValues(Model *m, double v[NF + 1])
{
  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* loss = 1/2 sum over the local samples (pred - y)^2; sums: squared error, samples */
static PetscErrorCode Loss(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  Model     *m = (Model *)ctx;
  int        sx[2] = {(int)b->nlocal, NF}, sy[2] = {(int)b->nlocal, 1};
  SgnnTensor X, Y, P0, P1, D, D2, S;
  double     v;

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sx, b->data[0], &X));
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sy, b->data[1], &Y));
  SgCallNN(sgnn_matmul(X, m->w, 0, 0, &P0));
  SgCallNN(sgnn_expand(m->b, 2, sy, &P1));
  SgCallNN(sgnn_add(P0, P1, &D2));
  SgCallNN(sgnn_sub(D2, Y, &D));
  sgnn_tensor_free(&D2);
  SgCallNN(sgnn_mul(D, D, &D2));
  SgCallNN(sgnn_sum(D2, 0, NULL, 0, &S));
  SgCallNN(sgnn_tensor_item(S, &v));
  sums[0] += v;
  sums[1] += b->nlocal;
  SgCallNN(sgnn_affine(S, 0.5, 0.0, loss));
  SgnnTensor *fr[] = {&X, &Y, &P0, &P1, &D, &D2, &S};
  for (int q = 0; q < 7; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* grid mode (6.): this rank's share of the features; ids of every step checked against the group */
static int grid_id_mismatch, grid_nmin = 1 << 30, grid_nmax;
static PetscErrorCode LossGrid(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  Model     *m = (Model *)ctx;
  SgparGrid  g;
  int        S, s, f0, f1, sx[2], sy[2] = {(int)b->nlocal, 1}, mine[2], lo[2], hi[2];
  SgnnTensor X, Y, Ws, P0, P1, Pb, Pr, D, D2, Sum;
  double     v, h = 0;

  PetscFunctionBegin;
  PetscCall(SgTrainerGetProcessGrid(tr, &g));
  S = sgpar_grid_spatial_size(g);
  s = sgpar_grid_spatial_rank(g);
  f0 = NF * s / S;
  f1 = NF * (s + 1) / S;
  sx[0] = (int)b->nlocal;
  sx[1] = f1 - f0;
  for (PetscInt i = 0; i < b->nlocal; i++) h = h * 1.000001 + (double)b->ids[i] + 1; /* the same ids in the same order */
  mine[0] = (int)b->nlocal;
  mine[1] = (int)fmod(h, 1e9);
  PetscCallMPI(MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, sgpar_grid_spatial_comm(g)));
  PetscCallMPI(MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, sgpar_grid_spatial_comm(g)));
  grid_id_mismatch += lo[0] != hi[0] || lo[1] != hi[1];
  grid_nmin = PetscMin(grid_nmin, (int)b->nlocal);
  grid_nmax = PetscMax(grid_nmax, (int)b->nlocal);
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sx, b->data[0], &X)); /* the shard: [n, f1 - f0] */
  SgCallNN(sgnn_tensor_from_host(m->be, SGNN_F64, 2, sy, b->data[1], &Y));
  SgCallNN(sgnn_slice(m->w, 0, f0, f1, &Ws));
  SgCallNN(sgnn_matmul(X, Ws, 0, 0, &P0));
  if (s == S - 1) {
    SgCallNN(sgnn_expand(m->b, 2, sy, &P1));
    SgCallNN(sgnn_add(P0, P1, &Pb));
    sgnn_tensor_free(&P1);
  } else Pb = sgnn_tensor_ref(P0);
  if (sgpar_allreduce_sum(sgpar_grid_spatial_comm(g), Pb, &Pr)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", sgpar_last_error());
  SgCallNN(sgnn_sub(Pr, Y, &D));
  SgCallNN(sgnn_mul(D, D, &D2));
  SgCallNN(sgnn_sum(D2, 0, NULL, 0, &Sum));
  SgCallNN(sgnn_tensor_item(Sum, &v));
  sums[0] += v / S;
  sums[1] += s == 0 ? b->nlocal : 0; /* summed over the grid: once per sample */
  SgCallNN(sgnn_affine(Sum, 0.5 / S, 0.0, loss));     /* replicated on the S ranks: 1/S each */
  SgnnTensor *fr[] = {&X, &Y, &Ws, &P0, &Pb, &Pr, &D, &D2, &Sum};
  for (int q = 0; q < 9; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Check(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b)
{
  int bad = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < b->nlocal; i++) bad |= !isfinite(((const double *)b->data[1])[i]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)tr)));
  PetscCheck(!bad, PetscObjectComm((PetscObject)tr), PETSC_ERR_FILE_UNEXPECTED, "test: a label is not finite");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Monitor(SgTrainer tr, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[])
{
  PetscFunctionBegin;
  cols[0] = sqrt(sums[0] / PetscMax(sums[1], 1));
  cols[1] = NAN; /* no validation: n/a */
  if (((Model *)ctx)->stop_at && step >= ((Model *)ctx)->stop_at) PetscCall(SgTrainerRequestStop(tr, "early stop (test)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt    nfiles, batch, steps, ckpt_every;
  const char *files[2], *sync, *lcurve, *ckpt, *restart;
  PetscBool   sgd;
  PetscReal   max_time;
  PetscInt    groups, spatial; /* process grid (0, 0: the trainer's default) */
} Run;

/* view: NULL, or where the trainer's view goes (the sync's buckets) */
static PetscErrorCode Train(MPI_Comm comm, Model *m, const Run *r, char view[], size_t len)
{
  PetscViewer     v;
  SgTrainer       tr;
  SgTrainerOps    ops    = {r->spatial ? LossGrid : Loss, Check, Monitor, NULL};
  const char     *cols[] = {"rmse_trn", "rmse_val"}, *fields[] = {"x", "y"};
  SgnnOptimConfig oc;
  SgnnLRSchedule  sc = {0};

  PetscFunctionBegin;
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "test"));
  PetscCall(SgTrainerSetModel(tr, m->P));
  PetscCall(SgTrainerSetOps(tr, &ops, m));
  PetscCall(SgTrainerSetMetrics(tr, 2, 2, cols, "# step rmse_trn rmse_val lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 2, fields));
  for (PetscInt f = 0; f < r->nfiles; f++) {
    SgDataset ds;
    int64_t   n;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, r->files[f], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(SgTrainerAddStream(tr, 1, &r->files[f], n, NULL));
  }
  PetscCall(SgTrainerSetBatchSize(tr, r->batch));
  PetscCall(SgTrainerSetSeed(tr, 11));
  PetscCall(SgTrainerSetNumSteps(tr, r->steps));
  sgnn_optim_defaults(r->sgd ? SGNN_SGD : SGNN_ADAM, &oc);
  sc.kind = r->sgd ? SGNN_LR_CONST : SGNN_LR_EXP;
  sc.lr0 = r->sgd ? 0.3 : 0.05;
  sc.decay_rate = 0.5;
  sc.decay_steps = 10;
  oc.lr = sc.lr0;
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, 5));
  if (r->lcurve) PetscCall(SgTrainerSetLCurve(tr, r->lcurve));
  if (r->ckpt) PetscCall(SgTrainerSetCheckpoint(tr, r->ckpt, r->ckpt_every));
  if (r->restart) PetscCall(SgTrainerSetRestart(tr, r->restart));
  if (r->max_time > 0) PetscCall(SgTrainerSetMaxTime(tr, r->max_time));
  PetscCall(SgTrainerSetFromOptions(tr));
  PetscCall(SgTrainerSetSyncType(tr, r->sync, 8)); /* 8 bytes: one bucket per parameter (w, b) */
  if (r->spatial) {
    PetscMPIInt rk;
    PetscInt    S = r->spatial, s, start[1], count[1];
    PetscCallMPI(MPI_Comm_rank(comm, &rk));
    s = rk % S;
    start[0] = NF * s / S;
    count[0] = NF * (s + 1) / S - start[0];
    PetscCall(SgTrainerSetProcessGrid(tr, r->groups, r->spatial));
    PetscCall(SgTrainerSetFieldShard(tr, "x", 1, start, count));
  }
  PetscCall(SgTrainerSetQuiet(tr, (PetscBool)(m->stop_at > 0)));
  PetscCall(SgTrainerTrain(tr));
  PetscCall(SgTrainerGetStep(tr, &m->steps_done));
  if (view) { /* rank 0's view, through a file */
    char  fn[PETSC_MAX_PATH_LEN];
    FILE *fp;
    PetscMPIInt rk;
    PetscCallMPI(MPI_Comm_rank(comm, &rk));
    PetscCall(PetscSNPrintf(fn, sizeof fn, "%s.view%d", r->files[0], rk));
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, fn, &v));
    PetscCall(SgTrainerView(tr, v));
    PetscCall(PetscViewerDestroy(&v));
    fp = fopen(fn, "r");
    view[0] = 0;
    if (fp) {
      size_t n = fread(view, 1, len - 1, fp);
      view[n] = 0;
      fclose(fp);
    }
  } else PetscCall(SgTrainerView(tr, NULL));
  PetscCall(SgTrainerDestroy(&tr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TrainExpectError(MPI_Comm comm, Model *m, const Run *r, PetscErrorCode *ierr)
{
  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = Train(comm, m, r, NULL, 0);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a fresh model (init 0.1) trained by run r on comm: its weights */
static PetscErrorCode TrainedValues(MPI_Comm comm, const Run *r, char view[], size_t len, double v[NF + 1])
{
  Model m;

  PetscFunctionBegin;
  PetscCall(ModelCreate(&m, 0.1));
  PetscCall(Train(comm, &m, r, view, len));
  PetscCall(ModelValues(&m, v));
  sgnn_params_destroy(&m.P);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reference of 3b: full-batch gradient descent on the file's samples, loss 1/2 mean (pred - y)^2,
   the gradient scaled to norm <= clip, and the learning rate cut by PyTorch's ReduceLROnPlateau rule
   (torch.optim.lr_scheduler, mode "min", threshold_mode "rel", min_lr 0) applied to the mean loss of
   every window of steps; *ncut: the cuts made. fresh_at >= 0: before that step the scheduler's
   best, bad-window count and window start afresh (the learning rate kept): a new scheduler. */
static PetscErrorCode ClippedPlateauGD(const char path[], PetscInt steps, double lr, double clip, PetscInt window, PetscInt patience, double factor, double threshold, PetscInt fresh_at, double w[NF + 1], PetscInt *ncut)
{
  int64_t  n;
  double  *x, *y, best = INFINITY, wsum = 0;
  PetscInt bad = 0, inwin = 0;

  PetscFunctionBegin;
  PetscCall(ReadSamples(path, &n, &x, &y));
  *ncut = 0;
  for (PetscInt k = 0; k < steps; k++) {
    double g[NF + 1] = {0}, loss = 0, norm = 0;
    if (k == fresh_at) {
      best = INFINITY;
      bad = 0;
      wsum = 0;
      inwin = 0;
    }
    for (int64_t i = 0; i < n; i++) {
      double a[NF + 1] = {x[i * NF], x[i * NF + 1], x[i * NF + 2], 1.0}, r = -y[i];
      for (int j = 0; j <= NF; j++) r += a[j] * w[j];
      loss += 0.5 * r * r / n;
      for (int j = 0; j <= NF; j++) g[j] += r * a[j] / n;
    }
    for (int j = 0; j <= NF; j++) norm += g[j] * g[j];
    norm = sqrt(norm);
    for (int j = 0; j <= NF; j++) w[j] -= lr * g[j] * (norm > clip ? clip / (norm + 1e-6) : 1);
    wsum += loss;
    if (++inwin == window) { /* scheduler.step(mean loss of the window) */
      double m = wsum / window;
      wsum = 0;
      inwin = 0;
      if (m < best * (1 - threshold)) {
        best = m;
        bad = 0;
      } else if (++bad > patience) {
        lr *= factor;
        bad = 0;
        (*ncut)++;
      }
    }
  }
  PetscCall(PetscFree2(x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetPlateauOptions(PetscBool on)
{
  const char *k[] = {"-plateau_window", "-plateau_patience", "-plateau_factor", "-plateau_threshold", "-clip_norm"}, *v[] = {"5", "1", "0.5", "1e-4", "0.2"};

  PetscFunctionBegin;
  for (int i = 0; i < 5; i++) PetscCall(on ? PetscOptionsSetValue(NULL, k[i], v[i]) : PetscOptionsClearValue(NULL, k[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Same(const double *a, const double *b) { return (PetscBool)!memcmp(a, b, sizeof(double) * (NF + 1)); }

int main(int argc, char **argv)
{
  char        dir[PETSC_MAX_PATH_LEN], fa[PETSC_MAX_PATH_LEN], fb[PETSC_MAX_PATH_LEN], fn[PETSC_MAX_PATH_LEN], ck[PETSC_MAX_PATH_LEN], lc[PETSC_MAX_PATH_LEN];
  PetscMPIInt rank, size;
  Model       m;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_trainer fit|mpi DIR");
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscSNPrintf(dir, sizeof dir, "%s", argv[2]));
  PetscCall(PetscSNPrintf(fa, sizeof fa, "%s/lsq_a.h5", dir));
  PetscCall(PetscSNPrintf(fb, sizeof fb, "%s/lsq_b.h5", dir));
  PetscCall(PetscSNPrintf(fn, sizeof fn, "%s/lsq_nan.h5", dir));
  PetscCall(PetscSNPrintf(ck, sizeof ck, "%s/lsq_ckpt.h5", dir));
  PetscCall(PetscSNPrintf(lc, sizeof lc, "%s/lsq_lcurve.txt", dir));
  if (!rank) {
    PetscCall(MakeData(fa, 40, 0, -1));
    PetscCall(MakeData(fb, 24, 100, -1));
    PetscCall(MakeData(fn, 16, 200, 9));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  Run two = {2, 8, 30, 0, {fa, fb}, "", NULL, NULL, NULL, PETSC_FALSE};
  if (!strcmp(argv[1], "fit")) {
    double   ls[NF + 1], v[NF + 1], va[NF + 1], vb[NF + 1], err = 0;
    /* 1. full-batch GD -> least squares */
    Run gd = {1, 40, 600, 0, {fa}, "allreduce", NULL, NULL, NULL, PETSC_TRUE};
    PetscCall(LeastSquares(fa, ls));
    PetscCall(ModelCreate(&m, 0.1));
    PetscCall(Train(PETSC_COMM_SELF, &m, &gd, NULL, 0));
    PetscCall(ModelValues(&m, v));
    for (int i = 0; i <= NF; i++) err = PetscMax(err, fabs(v[i] - ls[i]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "1. full-batch GD: w %.12f %.12f %.12f b %.12f; least squares %.12f %.12f %.12f %.12f; max error %.2e\n", v[0], v[1], v[2], v[3], ls[0], ls[1], ls[2], ls[3], err));
    CHECK(err < 1e-9, "GD does not reach the least-squares solution: error %g", err);
    sgnn_params_destroy(&m.P);
    /* 2. restart: 30 steps vs 15 + checkpoint + 15 */
    PetscCall(ModelCreate(&m, 0.1));
    PetscCall(Train(PETSC_COMM_SELF, &m, &two, NULL, 0));
    PetscCall(ModelValues(&m, va));
    sgnn_params_destroy(&m.P);
    {
      Run half = two, rest = two;
      half.ckpt = ck;
      half.ckpt_every = 15;
      half.lcurve = lc;
      rest.restart = ck;
      rest.lcurve = lc;
      (void)remove(ck);
      PetscCall(ModelCreate(&m, 0.1));
      PetscCall(Train(PETSC_COMM_SELF, &m, &half, NULL, 0)); /* writes the checkpoint at 15, trains on to 30 */
      sgnn_params_destroy(&m.P);
      PetscCall(ModelCreate(&m, -0.7)); /* other weights: the checkpoint must restore them */
      PetscCall(Train(PETSC_COMM_SELF, &m, &rest, NULL, 0));
      PetscCall(ModelValues(&m, vb));
      sgnn_params_destroy(&m.P);
    }
    {
      FILE *fp = fopen(lc, "r");
      char  line[512];
      int   nl = 0, nh = 0, nk = 0;
      /* '# surge-file: learning curve' (the write path's kind mark, first line) and the column header
         '# step ...' are written once; the restart appends rows only */
      while (fp && fgets(line, sizeof line, fp)) {
        if (!strncmp(line, "# surge-file:", 13)) nk++;
        else if (line[0] == '#') nh++;
        else nl++;
      }
      if (fp) fclose(fp);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "2. two streams, Adam: 30 steps vs 15 + checkpoint + restart 15: %s; lcurve %d lines, %d header(s)\n", Same(va, vb) ? "bit-identical" : "DIFFERENT", nl, nh));
      CHECK(Same(va, vb), "the restarted run differs: b %.17g vs %.17g", va[3], vb[3]);
      CHECK(nl == 6 + 3 && nh == 1 && nk == 1, "lcurve: %d lines (expected 9: 6 of the first run, 3 after the restart), %d column headers and %d kind marks (1 each)", nl, nh, nk);
    }
    { /* a max_time stop after the first step writes a checkpoint; the restart finishes the 30 steps */
      Run     stop = two, rest = two;
      double  vc[NF + 1];
      PetscInt at = -1;
      stop.ckpt = ck;
      stop.max_time = 1e-12;
      rest.restart = ck;
      (void)remove(ck);
      PetscCall(ModelCreate(&m, 0.1));
      PetscCall(Train(PETSC_COMM_SELF, &m, &stop, NULL, 0));
      sgnn_params_destroy(&m.P);
      PetscCall(ModelCreate(&m, 0.3));
      { /* the checkpoint's step, read with io/nn directly */
        long      s0 = -1;
        SgNNState st = {0, NULL, NULL, m.P, NULL, 0, NULL, &s0};
        PetscCall(SgNNCheckpointRead(PETSC_COMM_SELF, ck, &st));
        at = (PetscInt)s0;
      }
      PetscCall(Train(PETSC_COMM_SELF, &m, &rest, NULL, 0));
      PetscCall(ModelValues(&m, vc));
      sgnn_params_destroy(&m.P);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "2b. max_time stop: checkpoint at step %" PetscInt_FMT "; restart to 30: %s\n", at, Same(va, vc) ? "bit-identical to the uninterrupted run" : "DIFFERENT"));
      CHECK(at == 1, "the max_time stop wrote its checkpoint at step %" PetscInt_FMT ", expected 1", at);
      CHECK(Same(va, vc), "the run stopped by max_time and restarted differs from the uninterrupted one");
    }
    { /* the monitor asks to stop at its progress line of step 10 (of 30): the run ends there and writes its checkpoint */
      Run      stop = two;
      PetscInt at   = -1, done;
      stop.ckpt = ck;
      (void)remove(ck);
      PetscCall(ModelCreate(&m, 0.1));
      m.stop_at = 8;
      PetscCall(Train(PETSC_COMM_SELF, &m, &stop, NULL, 0));
      done = m.steps_done;
      {
        long      s0 = -1;
        SgNNState st = {0, NULL, NULL, m.P, NULL, 0, NULL, &s0};
        PetscCall(SgNNCheckpointRead(PETSC_COMM_SELF, ck, &st));
        at = (PetscInt)s0;
      }
      sgnn_params_destroy(&m.P);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "2c. stop requested by the monitor from step 8: the run ended after %" PetscInt_FMT " steps (progress every 5), checkpoint at step %" PetscInt_FMT "\n", done, at));
      CHECK(done == 10 && at == 10, "a stop requested at the progress line of step 10 ended the run at step %" PetscInt_FMT " (checkpoint %" PetscInt_FMT ")", done, at);
    }
    /* 3. a NaN label, an unknown sync */
    {
      Run            bad = {1, 8, 10, 0, {fn}, "", NULL, NULL, NULL, PETSC_FALSE}, unk = two;
      PetscErrorCode e1, e2;
      unk.sync = "magic";
      PetscCall(ModelCreate(&m, 0.1));
      PetscCall(TrainExpectError(PETSC_COMM_SELF, &m, &bad, &e1));
      PetscCall(TrainExpectError(PETSC_COMM_SELF, &m, &unk, &e2));
      sgnn_params_destroy(&m.P);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "3. NaN label: error %d (expected %d); sync 'magic': error %d (expected %d)\n", (int)e1, (int)PETSC_ERR_FILE_UNEXPECTED, (int)e2, (int)PETSC_ERR_USER_INPUT));
      CHECK(e1 == PETSC_ERR_FILE_UNEXPECTED, "a NaN label was not refused");
      CHECK(e2 == PETSC_ERR_USER_INPUT, "an unknown sync was not refused");
    }
    { /* 3b. clipping + plateau decay against the reference loop; restart with the plateau state */
      Run      gd = {1, 40, 150, 0, {fa}, "allreduce", NULL, NULL, NULL, PETSC_TRUE}, half, rest;
      double   ref[NF + 1], ref2[NF + 1], e = 0, e2 = 0, pa[NF + 1], pb[NF + 1], pc[NF + 1];
      PetscInt ncut = 0, ncut2 = 0;
      PetscCall(SetPlateauOptions(PETSC_TRUE));
      PetscCall(ModelCreate(&m, 0.1));
      PetscCall(ModelValues(&m, ref)); /* the same start */
      PetscCall(Train(PETSC_COMM_SELF, &m, &gd, NULL, 0));
      PetscCall(ModelValues(&m, v));
      sgnn_params_destroy(&m.P);
      PetscCall(PetscArraycpy(ref2, ref, NF + 1));
      PetscCall(ClippedPlateauGD(fa, 150, 0.3, 0.2, 5, 1, 0.5, 1e-4, -1, ref, &ncut));
      PetscCall(ClippedPlateauGD(fa, 150, 0.3, 0.2, 5, 1, 0.5, 1e-4, 107, ref2, &ncut2));
      for (int i = 0; i <= NF; i++) e = PetscMax(e, fabs(v[i] - ref[i]));
      half = gd;
      rest = gd;
      half.ckpt = ck;
      half.ckpt_every = 107;
      rest.restart = ck;
      (void)remove(ck);
      for (int r = 0; r < 3; r++) { /* the whole run, the run that checkpoints at 107, its restart */
        PetscCall(ModelCreate(&m, r < 2 ? 0.1 : -0.7));
        PetscCall(Train(PETSC_COMM_SELF, &m, r == 0 ? &gd : r == 1 ? &half : &rest, NULL, 0));
        PetscCall(ModelValues(&m, r == 0 ? pa : pb));
        sgnn_params_destroy(&m.P);
      }
      /* the restart again with -plateau_fresh_on_restart: the reference scheduler started afresh at step 107 */
      PetscCall(PetscOptionsSetValue(NULL, "-plateau_fresh_on_restart", "1"));
      PetscCall(ModelCreate(&m, -0.7));
      PetscCall(Train(PETSC_COMM_SELF, &m, &rest, NULL, 0));
      PetscCall(ModelValues(&m, pc));
      sgnn_params_destroy(&m.P);
      PetscCall(PetscOptionsClearValue(NULL, "-plateau_fresh_on_restart"));
      for (int i = 0; i <= NF; i++) e2 = PetscMax(e2, fabs(pc[i] - ref2[i]));
      PetscCall(SetPlateauOptions(PETSC_FALSE));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "3b. clipped SGD + plateau decay: %" PetscInt_FMT " learning-rate cuts in the reference; weights vs the reference loop: max difference %.1e; 150 steps vs 107 + checkpoint + restart 43: %s\n", ncut, e, Same(pa, pb) ? "bit-identical" : "DIFFERENT"));
      CHECK(ncut == 5 && e < 1e-12, "clipping/plateau: %" PetscInt_FMT " cuts, weights differ from the reference by %g", ncut, e);
      CHECK(Same(pa, pb), "the plateau run restarted from a checkpoint differs");
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "3b. restart at 107 with plateau_fresh_on_restart: %" PetscInt_FMT " cuts in its reference (a scheduler started afresh at 107); weights vs it: max difference %.1e; vs the plain restart: %s\n", ncut2, e2, Same(pb, pc) ? "the same" : "different"));
      CHECK(e2 < 1e-12 && !Same(pb, pc), "plateau_fresh_on_restart: weights differ from its reference by %g, or equal the plain restart's", e2);
    }
  } else if (!strcmp(argv[1], "mpi")) {
    double bu[NF + 1], al[NF + 1], se[NF + 1], err = 0;
    char   view[512] = "";
    Run    rb = two, ra = two, rs = two;
    PetscCheck(size == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "run the mpi test on 2 ranks");
    rb.sync = "bucketed";
    ra.sync = "allreduce";
    rb.ckpt = ck;
    rb.ckpt_every = 15;
    PetscCall(TrainedValues(PETSC_COMM_WORLD, &rb, view, sizeof view, bu));
    PetscCall(TrainedValues(PETSC_COMM_WORLD, &ra, NULL, 0, al));
    if (!rank) {
      PetscErrorCode e;
      PetscCall(ModelCreate(&m, 0.1));
      PetscCall(Train(PETSC_COMM_SELF, &m, &rs, NULL, 0));
      PetscCall(ModelValues(&m, se));
      rs.restart = ck;
      PetscCall(TrainExpectError(PETSC_COMM_SELF, &m, &rs, &e));
      sgnn_params_destroy(&m.P);
      for (int i = 0; i <= NF; i++) err = PetscMax(err, fabs(bu[i] - se[i]) / PetscMax(fabs(se[i]), 1));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "4. 2 ranks: bucketed vs allreduce %s; vs 1 rank: max relative difference %.1e\n", Same(bu, al) ? "bit-identical" : "DIFFERENT", err));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "5. 2-rank checkpoint restarted on 1 rank: error %d (expected %d)\n", (int)e, (int)PETSC_ERR_USER_INPUT));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "   the bucketed run's %s", strstr(view, "bucketed sync") ? strstr(view, "bucketed sync") : "(no sync view)\n"));
      CHECK(strstr(view, "2 buckets") && strstr(view, "2 started during"), "the bucketed sync did not start its 2 buckets during backward");
      CHECK(Same(bu, al), "bucketed and allreduce syncs differ");
      CHECK(err < 5e-13, "2 ranks and 1 rank differ by %g", err);
      CHECK(e == PETSC_ERR_USER_INPUT, "a 2-rank checkpoint was accepted on 1 rank");
    }
  } else if (!strcmp(argv[1], "grid")) {
    double         se[NF + 1], g22[NF + 1], g41[NF + 1], e22 = 0, e41 = 0;
    char           view[1024] = "";
    Run            r22 = two, r41 = two, bad = two, rest = two;
    PetscErrorCode e1, e2;
    PetscCheck(size == 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "run the grid test on 4 ranks");
    r22.groups = 2;
    r22.spatial = 2;
    r22.ckpt = ck;
    r22.ckpt_every = 15;
    r41.groups = 4;
    r41.spatial = 1;
    r41.sync = "hybrid";
    (void)remove(ck);
    PetscCall(TrainedValues(PETSC_COMM_WORLD, &r22, view, sizeof view, g22));
    PetscCall(TrainedValues(PETSC_COMM_WORLD, &r41, NULL, 0, g41));
    bad.groups = 3;
    bad.spatial = 2;
    rest.groups = 4;
    rest.spatial = 1;
    rest.restart = ck;
    PetscCall(ModelCreate(&m, 0.1));
    PetscCall(TrainExpectError(PETSC_COMM_WORLD, &m, &bad, &e1));
    PetscCall(TrainExpectError(PETSC_COMM_WORLD, &m, &rest, &e2));
    sgnn_params_destroy(&m.P);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &grid_id_mismatch, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &grid_nmin, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &grid_nmax, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
    if (!rank) {
      PetscCall(TrainedValues(PETSC_COMM_SELF, &two, NULL, 0, se));
      for (int i = 0; i <= NF; i++) {
        e22 = PetscMax(e22, fabs(g22[i] - se[i]) / PetscMax(fabs(se[i]), 1));
        e41 = PetscMax(e41, fabs(g41[i] - se[i]) / PetscMax(fabs(se[i]), 1));
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "6. feature-split model vs 1 rank: 2 x 2 grid %.1e, 4 x 1 grid %.1e (max relative difference); spatial ranks with other sample ids than their group: %d steps; local batches %d..%d of 8\n", e22, e41, grid_id_mismatch, grid_nmin, grid_nmax));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "   the 2 x 2 run's view: %s", strstr(view, "process grid") ? strstr(view, "process grid") : "(none)\n"));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "7. 3 x 2 grid on 4 ranks: error %d; the 2 x 2 checkpoint restarted on 4 x 1: error %d (expected %d)\n", (int)e1, (int)e2, (int)PETSC_ERR_USER_INPUT));
      CHECK(e22 < 5e-13 && e41 < 5e-13, "the grid runs differ from 1 rank: %g, %g", e22, e41);
      CHECK(!grid_id_mismatch, "spatial ranks of a group got different samples");
      CHECK(grid_nmin != grid_nmax, "the local batches were all equal: the uneven case was not exercised");
      CHECK(strstr(view, "process grid: 2 data groups x 2 spatial ranks") && strstr(view, "hybrid sync"), "the 2 x 2 run did not report its grid and the hybrid sync");
      CHECK(e1 == PETSC_ERR_USER_INPUT && e2 == PETSC_ERR_USER_INPUT, "a grid not covering the ranks, or a checkpoint of another grid, was accepted");
    }
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown mode %s: fit, mpi or grid", argv[1]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
