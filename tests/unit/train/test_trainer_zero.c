/* SgTrainer's optimizer option and ZeRO sharding (issue 38) on a small network: an MLP 3 -> 5 (tanh)
   -> 1, 26 parameters in four tensors, SUM loss 1/2 sum (pred - y)^2 divided by the global count.

   test_trainer_zero lion DIR   (1 rank)
     -train_optimizer lion -train_lion_beta1 0.8 -train_lion_beta2 0.95 -train_weight_decay 0.1, full
     batch (24 samples), constant lr 0.01, 20 steps: writes DIR/lion_data.txt (x, y), lion_init.txt
     (the initial slab) and lion_traj.txt (the slab after each step). tests/regression/train/
     lion_torch.py runs the same 20 steps in PyTorch (its own Lion, written from Chen et al. 2023) and
     requires |dw| < 1e-12 at every step: a Lion update is +-lr per weight plus the decay, so a wrong
     beta, a wrong momentum order or coupled decay moves a weight by ~lr = 1e-2 at once.
   test_trainer_zero shard DIR  (1, 2 or 3 ranks)
     batch 7 of 40 samples (local batches 7 / 3+4 / 2+2+3), 30 steps, staircase schedule, for Adam and
     Lion: stage 1 equals stage 0 bit for bit (the same gradient, the same elementwise update of each
     block) and stage 2 equals stage 0 to 1e-13 relative (the reduce-scatter may add the ranks'
     gradients in another order: round-off only); all three equal the 1-rank run (rank 0 alone) to
     1e-12 relative (the local sums differ in order). With 26 parameters the blocks are 13+13 on 2
     ranks and 8+9+9 on 3 (uneven). The optimizer state held per rank is exactly 2 x 8 x its block
     (Adam, float64) at stage 1 and 2, and 2 x 8 x 26 at stage 0; the bytes counted per step are
     2(N-1)/N x 208 (stage 0), 3(N-1)/N x 208 (1), 2(N-1)/N x 208 (2). Checkpoints: 15 steps at
     stage 1 + a checkpoint, restarted at stage 0 and at stage 2 for 15, equal 30 steps at stage 0
     (bit for bit for stage 0; stage 2 to round-off): the checkpoint holds the whole state.
     Stage 3 (parameters partitioned between steps, zero3.c) equals stage 2 bit for bit (the same
     reduce-scatter and update; the all-gather copies); between steps a rank holds 8 x its block of
     weights, no gradient and 16 x its block of Adam's state, at the step's peak 208 + 8 x block of
     weights and 208 of gradients; 2(N-1)/N x 208 bytes per step. A stage-3 checkpoint at step 15
     restarted at stage 3 and at stage 0 equals 30 steps at stage 2 (bit for bit) and stage 0 (round-off).
     Stage 3 by buckets (-train_shard_bucket_bytes, zero3b.c), one bucket per tensor and one of the
     whole slab: stage 3 bit for bit; between steps 8 x block of weights; at the peak the block + the
     3 largest tensors (200 bytes; 208 with one bucket); the bytes a step = the fills' reads of the
     other ranks' values + the gradient buckets' sends + the monitor's gathers; 3 of the 4 fills a step
     found their bucket fetched ahead (the overlap), in the first step by the guess and then by
     replaying the step before's order of uses (the first fill of a step is read at its use). The gradient is by buckets too (zerograd.c): bit
     for bit on 1-2 ranks, to 1e-15 on 3 (the accumulates' order); the block held between steps, the
     block + the largest tensor (+ 208 with one bucket) at the peak. Stage 2 by gradient buckets (Adam,
     one per tensor) = stage 2 likewise, with its memory, buckets sent and bytes; the stage-1
     checkpoint's restart at stage 2 runs by gradient buckets.
   test_trainer_zero cub DIR (1, 2 or 3 ranks): -train_compress lion_cub and lion_cub_allreduce (at
     ModeCub below).
   test_trainer_zero vote DIR (any rank count): SgTrainerVoteSum, the vote allreduce of
     lion_cub_allreduce, against a dense count (VoteCheck below). */
#define NF 3
#define NH 5
#include "mlp_net.h"
#include "../../lib/sgtestcheck.h"
#include "../../lib/sgtesth5damage.h"

typedef struct {
  const char *data, *opts, *ckpt, *restart;
  PetscInt    batch, steps, ckpt_every, disp;
  PetscBool   const_lr;
  double     *mom; /* if set: the optimizer's first moment at the end (this rank's) */
  double      l2;  /* > 0: the loss adds l2/2 |w|^2 per local sample, built before the network (LossL2) */
} Run;

/* MlpLoss + l2/2 x nlocal x |w|^2 (coupled L2, the same global loss on any rank count). The penalty's
   nodes are made before the network's, so backward sweeps them last: every tensor receives its last
   contribution at the very end of backward, as the Deep Potential's do (its loss differentiates its
   forces). A gradient bucket therefore stays open from its first accumulation to the end, and the
   limit on open buckets (-train_shard_grad_open_buckets, zerograd.c) sends early partial sums. */
static double loss_l2;

static PetscErrorCode LossL2(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  Net       *m    = (Net *)ctx;
  SgnnTensor w[4] = {m->w1, m->b1, m->w2, m->b2}, acc = NULL, pen, data;

  PetscFunctionBegin;
  for (int i = 0; i < 4; i++) {
    SgnnTensor sq, s, t;
    SgCallNN(sgnn_mul(w[i], w[i], &sq));
    SgCallNN(sgnn_sum(sq, 0, NULL, 0, &s));
    sgnn_tensor_free(&sq);
    if (acc) {
      SgCallNN(sgnn_add(acc, s, &t));
      sgnn_tensor_free(&acc);
      sgnn_tensor_free(&s);
      acc = t;
    } else acc = s;
  }
  SgCallNN(sgnn_affine(acc, 0.5 * loss_l2 * (double)b->nlocal, 0.0, &pen));
  sgnn_tensor_free(&acc);
  PetscCall(MlpLoss(tr, ctx, k, b, info, &data, sums));
  SgCallNN(sgnn_add(data, pen, loss));
  sgnn_tensor_free(&data);
  sgnn_tensor_free(&pen);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one training; out: the final slab; stats: bytes per step and this rank's memory */
static PetscReal shard_rest[3], shard_peak[3]; /* the last Train's SgTrainerGetShardResident */
static PetscReal bucket_fills, bucket_ahead;    /* and SgTrainerGetShardBucketStats' fills, those fetched ahead */
static PetscReal replay_fills, replay_ahead;    /* and the same over the steps that replayed the step before's uses */
static PetscReal grad_sends, grad_sent;         /* and SgTrainerGetShardGradStats' buckets sent, bytes sent to others */

static PetscErrorCode Train(MPI_Comm comm, Net *m, const Run *r, double out[], PetscReal stats[4])
{
  SgTrainer       tr;
  SgTrainerOps    ops    = {MlpLoss, NULL, MlpMonitor, NULL};
  const char     *cols[] = {"rmse"}, *fields[] = {"x", "y"};
  SgnnOptimConfig oc;
  SgnnLRSchedule  sc = {0};
  SgDataset       ds;
  int64_t         n;

  PetscFunctionBegin;
  PetscCall(PetscOptionsClearValue(NULL, "-train_optimizer"));
  PetscCall(PetscOptionsInsertString(NULL, r->opts));
  loss_l2 = r->l2;
  if (r->l2 > 0) ops.loss = LossL2;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, r->data, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, &n));
  PetscCall(SgDatasetClose(&ds));
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "zero"));
  PetscCall(SgTrainerSetOptionsPrefix(tr, "train_"));
  PetscCall(SgTrainerSetModel(tr, m->P));
  PetscCall(SgTrainerSetOps(tr, &ops, m));
  PetscCall(SgTrainerSetMetrics(tr, 2, 1, cols, "# step rmse lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 2, fields));
  PetscCall(SgTrainerAddStream(tr, 1, &r->data, n, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, r->batch));
  PetscCall(SgTrainerSetSeed(tr, 7));
  PetscCall(SgTrainerSetNumSteps(tr, r->steps));
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  if (r->const_lr) {
    sc.kind = SGNN_LR_CONST;
    sc.lr0 = 0.01;
  }
  else {
    sc.kind = SGNN_LR_EXP;
    sc.lr0 = 0.02;
    sc.decay_rate = 0.5;
    sc.decay_steps = 10;
  }
  oc.lr = sc.lr0;
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, r->disp));
  if (r->ckpt) PetscCall(SgTrainerSetCheckpoint(tr, r->ckpt, r->ckpt_every));
  if (r->restart) PetscCall(SgTrainerSetRestart(tr, r->restart));
  PetscCall(SgTrainerSetQuiet(tr, PETSC_TRUE));
  PetscCall(SgTrainerSetFromOptions(tr));
  PetscCall(SgTrainerTrain(tr));
  if (stats) PetscCall(SgTrainerGetCommStats(tr, &stats[0], &stats[1]));
  PetscCall(SgTrainerGetShardResident(tr, shard_rest, shard_peak));
  PetscCall(SgTrainerGetShardBucketStats(tr, NULL, &bucket_fills, NULL, &bucket_ahead));
  PetscCall(SgTrainerGetShardBucketReplayStats(tr, &replay_fills, &replay_ahead));
  PetscCall(SgTrainerGetShardGradStats(tr, NULL, NULL, &grad_sends, &grad_sent));
  if (r->mom) {
    SgnnOptim  o;
    SgnnTensor mt = NULL;
    PetscCall(SgTrainerGetOptimizer(tr, &o));
    SgCallNN(sgnn_optim_state(o, &mt, NULL, NULL));
    PetscCheck(mt, comm, PETSC_ERR_PLIB, "the optimizer keeps no momentum");
    SgCallNN(sgnn_tensor_to_f64(mt, r->mom));
  }
  PetscCall(SgTrainerDestroy(&tr));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), out));
  /* the options of this run must not leak into the next */
  {
    const char *names[] = {"-train_optimizer", "-train_shard", "-train_lion_beta1", "-train_lion_beta2", "-train_weight_decay", "-train_compress", "-train_lion_cub_sync", "-train_shard_bucket_bytes", "-train_shard_grad_open_buckets"};
    for (int i = 0; i < 9; i++) PetscCall(PetscOptionsClearValue(NULL, names[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModeLion(const char dir[])
{
  Net    m;
  Run    r   = {0};
  char   data[PETSC_MAX_PATH_LEN], fn[PETSC_MAX_PATH_LEN];
  double out[64], x[24 * NF], y[24], v[64];
  FILE  *fp;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(data, sizeof data, "%s/lion.h5", dir));
  PetscCall(MlpWriteData(data, 24, "SgTrainer ZeRO test data"));
  PetscCall(MlpNetCreate(&m, 0, 0.6));
  { /* the reference's inputs: the data and the initial slab (names and shapes in slab order) */
    SgDataset ds;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, data, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetReadField(ds, "x", 0, 24, SG_DTYPE_F64, x));
    PetscCall(SgDatasetReadField(ds, "y", 0, 24, SG_DTYPE_F64, y));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(PetscSNPrintf(fn, sizeof fn, "%s/lion_data.txt", dir));
    fp = fopen(fn, "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", fn);
    for (int i = 0; i < 24; i++) fprintf(fp, "%.17g %.17g %.17g %.17g\n", x[i * NF], x[i * NF + 1], x[i * NF + 2], y[i]);
    fclose(fp);
    PetscCall(PetscSNPrintf(fn, sizeof fn, "%s/lion_init.txt", dir));
    fp = fopen(fn, "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", fn);
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m.P), v));
    for (long i = 0; i < m.np; i++) fprintf(fp, "%.17g\n", v[i]);
    fclose(fp);
  }
  PetscCall(PetscSNPrintf(fn, sizeof fn, "%s/lion_traj.txt", dir));
  m.traj = fopen(fn, "w");
  PetscCheck(m.traj, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", fn);
  r.data = data;
  r.batch = 24;
  r.steps = 20;
  r.disp = 1;
  r.const_lr = PETSC_TRUE;
  r.opts = "-train_optimizer lion -train_lion_beta1 0.8 -train_lion_beta2 0.95 -train_weight_decay 0.1";
  PetscCall(Train(PETSC_COMM_SELF, &m, &r, out, NULL));
  fclose(m.traj);
  sgnn_params_destroy(&m.P);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "lion: 20 steps written to %s (compare: tests/regression/train/lion_torch.py %s)\n", fn, dir));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max |a - b| / max |a| */
static double RelDiff(const double a[], const double b[], long n)
{
  double d = 0, s = 0;
  for (long i = 0; i < n; i++) {
    d = PetscMax(d, fabs(a[i] - b[i]));
    s = PetscMax(s, fabs(a[i]));
  }
  return d / s;
}


static long blk3(int rank, int size) { return 26 * (rank + 1) / size - 26 * rank / size; }

/* A sharded restart reads only its own block of the moments (io/nn), so a damaged value is seen by one
   rank: every rank must refuse with the same message. The checkpoint of 26 parameters gets a NaN at
   /optim/v[25], in the last rank's block; a rank that did not hear of it would train on and wait for
   the others in the first reduce-scatter. */
static PetscErrorCode DamagedShard(MPI_Comm comm, const char ck[], const char dir[], Run *r)
{
  char           bad[PETSC_MAX_PATH_LEN];
  const char    *text = NULL;
  PetscMPIInt    rank;
  PetscErrorCode ierr;
  Net            m;
  double         wr[64];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(bad, sizeof bad, "%s/ck_nan_v25.h5", dir));
  PetscCall(SgTestDamagedCopy(comm, ck, bad, "/optim/v", 25, NAN));
  r->restart = bad;
  r->opts    = "-train_optimizer adam -train_shard 1";
  PetscCall(MlpNetCreate(&m, 0, 0.6));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = Train(comm, &m, r, wr, NULL);
  PetscCall(PetscPopErrorHandler());
  if (ierr) (void)PetscErrorMessage(ierr, NULL, (char **)&text);
  sgnn_params_destroy(&m.P);
  PetscCall(PetscOptionsClearValue(NULL, "-train_shard"));
  CHECK(ierr && text && strstr(text, "/optim/v[25] is NaN"), "rank %d: a stage-1 restart from a checkpoint whose /optim/v[25] is NaN: error %d '%s'; want every rank to refuse it naming /optim/v[25]", rank, (int)ierr, text ? text : "");
  PetscCall(PetscPrintf(comm, "a NaN at /optim/v[25] (the last rank's block): every rank refuses (%s)\n", text ? text : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModeShard(const char dir[])
{
  MPI_Comm    comm = PETSC_COMM_WORLD;
  PetscMPIInt size, rank;
  char        data[PETSC_MAX_PATH_LEN], ck[PETSC_MAX_PATH_LEN], opts[256];
  const char *optim[2] = {"adam", "lion"};
  double      w[4][64], w1[64], wr[64], wadam[4][64];
  Net         m;
  Run         r = {0};
  PetscReal   st[4];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(data, sizeof data, "%s/shard.h5", dir));
  PetscCall(PetscSNPrintf(ck, sizeof ck, "%s/shard_ck%d.h5", dir, size));
  if (!rank) PetscCall(MlpWriteData(data, 40, "SgTrainer ZeRO test data"));
  PetscCallMPI(MPI_Barrier(comm));
  r.data = data;
  r.batch = 7;
  r.steps = 30;
  r.disp = 10;
  for (int o = 0; o < 2; o++) {
    for (PetscInt stage = 0; stage < 4; stage++) {
      long   blk = 26 * (rank + 1) / size - 26 * rank / size;
      double f   = (double)(size - 1) / size, want_b = (stage == 1 ? 3 : 2) * f * 208, want_m = (o ? 1 : 2) * 8.0 * (stage ? blk : 26), want_w = 208 + (stage == 3 ? 8.0 * blk : 0);
      PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer %s -train_shard %" PetscInt_FMT, optim[o], stage));
      r.opts = opts;
      PetscCall(MlpNetCreate(&m, 0, 0.6));
      PetscCall(Train(comm, &m, &r, w[stage], st));
      sgnn_params_destroy(&m.P);
      CHECK(fabs(st[0] - want_b) < 1e-9, "%s stage %" PetscInt_FMT " on %d ranks: %g bytes per step counted, the collectives move %g", optim[o], stage, size, (double)st[0], want_b);
      CHECK(st[3] == want_m && st[1] == want_w && st[2] == 208, "%s stage %" PetscInt_FMT " rank %d: optimizer state %g bytes (want %g), weights %g (want %g), gradients %g (want 208)", optim[o], stage, rank, (double)st[3], want_m, (double)st[1], want_w, (double)st[2]);
      if (stage == 3) { /* measured by zero3.c from what is allocated after a release and at the step's peak */
        CHECK(shard_rest[0] == 8.0 * blk && shard_rest[1] == 0 && shard_rest[2] == want_m, "%s stage 3 rank %d: between steps weights %g (want %g), gradients %g (want 0), optimizer state %g (want %g)", optim[o], rank, (double)shard_rest[0], 8.0 * blk, (double)shard_rest[1], (double)shard_rest[2], want_m);
        CHECK(shard_peak[0] == want_w && shard_peak[1] == 208 && shard_peak[2] == want_m, "%s stage 3 rank %d: at the peak weights %g (want %g), gradients %g (want 208), optimizer state %g (want %g)", optim[o], rank, (double)shard_peak[0], want_w, (double)shard_peak[1], (double)shard_peak[2], want_m);
      }
    }
    { /* stage 3 by buckets (zero3b.c): one bucket per tensor (8 bytes: each closes at once) and one bucket
         of the whole slab (1 MB). The update and the reduce-scatter are stage 3's, and a bucket holds the
         owners' values copied: stage 3 bit for bit. One bucket: one fill a step, whose one-sided reads
         bring the 26 - block values the rank does not own. Per tensor: the most buckets whole at once is
         3 in use + 1 fetched ahead of the 4 (120 + 40 + 40 + 8 bytes), so at most 208 bytes + the block. */
      double wb[64], fills8 = 0;
      PetscInt bb[2] = {8, 1 << 20};
      for (int j = 0; j < 2 - o; j++) { /* one bucket: Adam only (the bytes and peak do not depend on the optimizer) */
        PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer %s -train_shard 3 -train_shard_bucket_bytes %" PetscInt_FMT, optim[o], bb[j]));
        r.opts = opts;
        PetscCall(MlpNetCreate(&m, 0, 0.6));
        PetscCall(Train(comm, &m, &r, wb, st));
        sgnn_params_destroy(&m.P);
        /* the gradient by buckets too (zerograd.c): on 1 and 2 ranks each value is 0 + a (+ b), the
           reduce-scatter's sum bit for bit; on 3 the accumulates' order of arrival sets the order of
           the sum: round-off (measured 1.3e-16; 1e-15 is a few ulps through 30 Adam steps) */
        if (size <= 2) CHECK(!memcmp(wb, w[3], 26 * sizeof(double)), "%s: stage 3 by buckets of %" PetscInt_FMT " bytes differs from stage 3 by %g (relative) on %d ranks: want bit for bit", optim[o], bb[j], RelDiff(w[3], wb, 26), size);
        else CHECK(RelDiff(w[3], wb, 26) <= 1e-15, "%s: stage 3 by buckets of %" PetscInt_FMT " bytes differs from stage 3 by %g (relative) on %d ranks: want <= 1e-15", optim[o], bb[j], RelDiff(w[3], wb, 26), size);
        CHECK(shard_rest[0] == 8.0 * blk3(rank, size) && shard_rest[1] == 8.0 * blk3(rank, size), "%s stage 3 by buckets rank %d: between steps weights %g (want %g), gradients %g (want %g: the gradient's block)", optim[o], rank, (double)shard_rest[0], 8.0 * blk3(rank, size), (double)shard_rest[1], 8.0 * blk3(rank, size));
        { /* one bucket: F fills (a step whose local batch is empty reads nothing), each bringing the
             26 - block values of the other ranks; + the reduce-scatter; + the monitor's whole gathers at
             steps 10, 20, 30 (the next step frees them). One bucket per tensor: the MLP uses W1, b1, W2,
             b2 forward (backward needs only W2 again), and with 3 in use none is read twice: the same
             bytes, and at the peak the 3 largest whole (W1 120 + b1 40 + W2 40 bytes; one bucket: all
             208); each of 1, 2, 3 is fetched ahead while the one before is used */
          double f = (double)(size - 1) / size, want_pk = 8.0 * blk3(rank, size) + (j ? 208 : 200), want_b, want_gpk = 8.0 * blk3(rank, size) + (j ? 208 : 120);
          if (j == 0) fills8 = bucket_fills;
          /* F = fills8 / 4 steps with frames: each reads the 26 - block values of others and sends its
             gradient's 26 - block values to their owners; + the monitor's 3 whole gathers */
          want_b = (2 * fills8 / 4 * 8.0 * (26 - blk3(rank, size)) + 3 * f * 208) / 30;
          CHECK(grad_sends == fills8 / 4 * (j ? 1 : 4) && grad_sent == fills8 / 4 * 8.0 * (26 - blk3(rank, size)), "%s stage 3 by buckets of %" PetscInt_FMT " bytes rank %d: %g gradient buckets sent with %g bytes to others, want %g (every bucket in a step with frames) with %g", optim[o], bb[j], rank, (double)grad_sends, (double)grad_sent, fills8 / 4 * (j ? 1 : 4), fills8 / 4 * 8.0 * (26 - blk3(rank, size)));
          CHECK(j == 1 || bucket_ahead == bucket_fills * 3 / 4, "%s: %g of %g fills found their bucket fetched ahead: want 3 of 4 a step (forward uses buckets 0, 1, 2, 3 in order; 0 is fetched at its use)", optim[o], (double)bucket_ahead, (double)bucket_fills);
          CHECK(j == 1 || (replay_fills == bucket_fills - 4 && replay_ahead == replay_fills * 3 / 4), "%s: in the steps that replayed the step before's uses %g of %g fills found their bucket fetched ahead: want 3 of 4 a step in all steps but the first with frames (%g fills)", optim[o], (double)replay_ahead, (double)replay_fills, (double)bucket_fills);
          CHECK(j == 0 || fills8 == 4 * bucket_fills, "%s: one bucket per tensor made %g fills, one bucket %g: want 4 per step that uses the model", optim[o], fills8, (double)bucket_fills);
          CHECK(j == 0 || (bucket_fills <= 30 && bucket_fills >= 20), "%s stage 3 by buckets rank %d: %g fills of one bucket in 30 steps", optim[o], rank, (double)bucket_fills);
          CHECK(fabs(st[0] - want_b) < 1e-9, "%s stage 3 by buckets of %" PetscInt_FMT " bytes rank %d: %g bytes per step counted, want %g ((26 - block) x 8 a fill + the reduce-scatter + the monitor's gathers)", optim[o], bb[j], rank, (double)st[0], want_b);
          /* gradients at the peak: the block + the buckets open at once; per tensor the MLP's backward
             finishes each tensor before it starts the next, so the largest (W1, 120 bytes) */
          CHECK(shard_peak[0] == want_pk && shard_peak[1] == want_gpk, "%s stage 3 by buckets of %" PetscInt_FMT " bytes rank %d: at the peak weights %g (want %g), gradients %g (want %g)", optim[o], bb[j], rank, (double)shard_peak[0], want_pk, (double)shard_peak[1], want_gpk);
        }
        PetscCall(PetscPrintf(comm, "%s stage 3 by buckets of %" PetscInt_FMT " bytes on %d ranks: - stage 3 %g; rank 0 weights between steps %g, at the peak %g bytes (whole stage 3: %g); %g bytes per step\n", optim[o], bb[j], size, RelDiff(w[3], wb, 26), (double)shard_rest[0], (double)shard_peak[0], 208 + 8.0 * blk3(rank, size), (double)st[0]));
      }
      if (o == 0) { /* stage 2 by gradient buckets, one per tensor (zerograd.c), at most 1 open
                       (-train_shard_grad_open_buckets 1), on a loss whose tensors all stay open to the end
                       of backward (LossL2, the Deep Potential's case), 10 steps: = plain stage 2 on the
                       same loss to round-off (early partial sums re-associate the sum; without them the
                       gradient by buckets is the reduce-scatter bit for bit: the stage-3 runs above). In a
                       step with frames backward opens b2, W2, b1, W1 in turn (3 partial sums: each opening
                       sends the open one), then the penalty reopens b2 (W1's partial sum) and finishes b2,
                       W2, b1, W1: 8 sums, each bucket twice, so 2 x (26 - block) x 8 bytes to others per
                       8 sums, + the all-gather every step; a step may have no frames (a rank's share of an
                       epoch's last batch): 8 sums in each of the steps but at most one. The gradient held at
                       the peak is the block + the largest bucket (W1, 120 bytes; 3 open would hold
                       120 + 40 + 40). Until 29 Nov this run was the MLP's own loss with 3 open, which never
                       has two open (its backward finishes each tensor before the next). */
        double    f = (double)(size - 1) / size, blk = 8.0 * blk3(rank, size), wl[64], want_sent, want_b;
        r.l2    = 0.05;
        r.steps = 10;
        r.opts  = "-train_optimizer adam -train_shard 2";
        PetscCall(MlpNetCreate(&m, 0, 0.6));
        PetscCall(Train(comm, &m, &r, wl, NULL));
        sgnn_params_destroy(&m.P);
        r.opts = "-train_optimizer adam -train_shard 2 -train_shard_bucket_bytes 8 -train_shard_grad_open_buckets 1";
        PetscCall(MlpNetCreate(&m, 0, 0.6));
        PetscCall(Train(comm, &m, &r, wb, st));
        sgnn_params_destroy(&m.P);
        r.l2      = 0;
        r.steps   = 30;
        want_sent = grad_sends / 4 * 8.0 * (26 - blk3(rank, size));
        want_b    = (want_sent + 10 * f * 208) / 10;
        CHECK(RelDiff(wl, wb, 26) <= 1e-13, "adam, L2 loss: stage 2 by buckets of 8 bytes with 1 open differs from stage 2 by %g (relative) on %d ranks: want <= 1e-13", RelDiff(wl, wb, 26), size);
        CHECK(st[2] == blk && shard_peak[1] == blk + 120, "adam, L2 loss, stage 2 by buckets with 1 open, rank %d: gradients held %g bytes (want the block, %g), at the peak %g (want the block + the largest bucket, 120)", rank, (double)st[2], blk, (double)shard_peak[1]);
        CHECK(fmod((double)grad_sends, 8) == 0 && grad_sends >= 8 * 9 && grad_sends <= 8 * 10 && grad_sent == want_sent && fabs(st[0] - want_b) < 1e-9, "adam, L2 loss, stage 2 by buckets with 1 open, rank %d: %g bucket sums sent in 10 steps (want 8 in each step with frames: 4 partial + 4 final), %g bytes to others (want %g: each bucket twice), %g bytes per step counted (want %g)", rank, (double)grad_sends, (double)grad_sent, want_sent, (double)st[0], want_b);
        PetscCall(PetscPrintf(comm, "adam, L2 loss, stage 2 by buckets of 8 bytes, 1 open, 10 steps, on %d ranks: - stage 2 %g; rank 0 gradients %g bytes held, %g at the peak (whole slab 208); %g bucket sums and %g bytes sent per step\n", size, RelDiff(wl, wb, 26), (double)st[2], (double)shard_peak[1], (double)grad_sends / 10, (double)st[0]));
      }
    }
    /* the 1-rank run: at 1 rank it is stage 0's run above; Lion's is not retrained on 2-3 ranks (since
       29 Nov: the gradient sums are Adam's, checked against 1 rank below, and Lion's sign update left
       them at 0 difference from the 1-rank run on 2 and 3 ranks); the time goes to stage 2 by buckets */
    if (size == 1 || o == 1) PetscCall(PetscArraycpy(w1, w[0], 26));
    else if (!rank) { /* the 1-rank run */
      PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer %s", optim[o]));
      r.opts = opts;
      PetscCall(MlpNetCreate(&m, 0, 0.6));
      PetscCall(Train(PETSC_COMM_SELF, &m, &r, w1, NULL));
      sgnn_params_destroy(&m.P);
    }
    PetscCallMPI(MPI_Bcast(w1, 26, MPI_DOUBLE, 0, comm));
    CHECK(!memcmp(w[1], w[0], 26 * sizeof(double)), "%s: stage 1 differs from stage 0 by %g (relative) on %d ranks: want bit for bit", optim[o], RelDiff(w[0], w[1], 26), size);
    CHECK(RelDiff(w[0], w[2], 26) <= 1e-13, "%s: stage 2 differs from stage 0 by %g (relative) on %d ranks: want < 1e-13", optim[o], RelDiff(w[0], w[2], 26), size);
    CHECK(RelDiff(w1, w[2], 26) <= 1e-12, "%s: stage 2 on %d ranks differs from 1 rank by %g (relative): want < 1e-12", optim[o], size, RelDiff(w1, w[2], 26));
    CHECK(!memcmp(w[3], w[2], 26 * sizeof(double)), "%s: stage 3 differs from stage 2 by %g (relative) on %d ranks: want bit for bit", optim[o], RelDiff(w[2], w[3], 26), size);
    PetscCall(PetscPrintf(comm, "%s on %d ranks: stage 1 - stage 0 %g, stage 2 - stage 0 %g, stage 3 - stage 0 %g, stage 2 - 1 rank %g (max relative)\n", optim[o], size, RelDiff(w[0], w[1], 26), RelDiff(w[0], w[2], 26), RelDiff(w[0], w[3], 26), RelDiff(w1, w[2], 26)));
    if (o == 0) PetscCall(PetscArraycpy(&wadam[0][0], &w[0][0], 4 * 64)); /* Adam's 30 steps at stages 0-3, for the restarts below */
  }
  /* Adam: 15 steps at stage 1 + checkpoint (the whole state, gathered), restarted at stage 0 and 2 by gradient buckets
     (the checkpoint restores the weights too); w[] holds Adam's 30 steps at stages 0, 1, 2 */
  r.ckpt = ck, r.ckpt_every = 15, r.steps = 30; /* the checkpoint at 15, then on to 30 */
  r.opts = "-train_optimizer adam -train_shard 1";
  PetscCall(MlpNetCreate(&m, 0, 0.6));
  PetscCall(Train(comm, &m, &r, wr, NULL));
  sgnn_params_destroy(&m.P);
  PetscCall(PetscArraycpy(&w[0][0], &wadam[0][0], 4 * 64)); /* the same runs as above (until 29 Nov trained again here) */
  r.ckpt = NULL;
  r.restart = ck;
  r.steps = 30;
  for (PetscInt stage = 0; stage < 3; stage += 2) {
    PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer adam -train_shard %" PetscInt_FMT "%s", stage, stage ? " -train_shard_bucket_bytes 8" : "")); /* stage 2 by gradient buckets */
    r.opts = opts;
    PetscCall(MlpNetCreate(&m, 0, 0.6));
    PetscCall(Train(comm, &m, &r, wr, NULL));
    sgnn_params_destroy(&m.P);
    if (stage == 0) CHECK(!memcmp(wr, w[0], 26 * sizeof(double)), "a stage-1 checkpoint at step 15 restarted at stage 0 differs from 30 steps at stage 0 by %g: want bit for bit", RelDiff(w[0], wr, 26));
    else CHECK(RelDiff(w[0], wr, 26) <= 1e-13, "a stage-1 checkpoint at step 15 restarted at stage 2 by buckets differs from 30 steps at stage 0 by %g: want < 1e-13", RelDiff(w[0], wr, 26));
    PetscCall(PetscPrintf(comm, "checkpoint at stage 1, restart at stage %" PetscInt_FMT " on %d ranks: %g from 30 steps at stage 0\n", stage, size, RelDiff(w[0], wr, 26)));
  }
  /* a stage-3 checkpoint (the weights gathered from the blocks) restarted at stage 3 and at stage 0 */
  r.ckpt = ck, r.ckpt_every = 15, r.restart = NULL;
  r.opts = "-train_optimizer adam -train_shard 3";
  PetscCall(MlpNetCreate(&m, 0, 0.6));
  PetscCall(Train(comm, &m, &r, wr, NULL));
  sgnn_params_destroy(&m.P);
  r.ckpt = NULL;
  r.restart = ck;
  for (PetscInt stage = 3; stage >= 0; stage -= 3) {
    PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer adam -train_shard %" PetscInt_FMT, stage));
    r.opts = opts;
    PetscCall(MlpNetCreate(&m, 0, 0.6));
    PetscCall(Train(comm, &m, &r, wr, NULL));
    sgnn_params_destroy(&m.P);
    if (stage == 3) CHECK(!memcmp(wr, w[3], 26 * sizeof(double)), "a stage-3 checkpoint at step 15 restarted at stage 3 differs from 30 steps at stage 3 by %g: want bit for bit", RelDiff(w[3], wr, 26));
    else CHECK(RelDiff(w[0], wr, 26) <= 1e-13, "a stage-3 checkpoint at step 15 restarted at stage 0 differs from 30 steps at stage 0 by %g: want < 1e-13", RelDiff(w[0], wr, 26));
    PetscCall(PetscPrintf(comm, "checkpoint at stage 3, restart at stage %" PetscInt_FMT " on %d ranks: %g from 30 steps at stage 0\n", stage, size, RelDiff(w[0], wr, 26)));
  }
  PetscCall(DamagedShard(comm, ck, dir, &r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vote allreduce (SgTrainerVoteSum, vote.c) against a dense count: every rank draws every rank's
   bits from one hash of (value, rank), so each rank can count the votes of value i serially, rank by
   rank, and the packed allreduce must give that count exactly (integers: no tolerance). Every 13th value
   is set on every rank: its lane sums to N, the largest count a lane holds (on 7 ranks the 3-bit lane
   is full: a carry into the next lane would show); every 11th is set on none. n = 1000 and 197 are not
   multiples of the lanes a word holds (32 on 2-3 ranks, 21 on 4-7), so the last word is partial. The
   bytes counted equal 2 (N-1)/N x 8 ceil(n / floor(64 / ceil(log2(N+1)))), written out here again. */
static int VoteBit(long i, int r)
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)(r + 1) * 0xC2B2AE3D27D4EB4Full;
  if (i % 13 == 0) return 1;
  if (i % 11 == 0) return 0;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (int)(h & 1);
}

static PetscErrorCode VoteCheck(MPI_Comm comm, double *bytes, double *want)
{
  const long     ns[2] = {1000, 197};
  PetscMPIInt    size, rank;
  unsigned char *bits;
  uint16_t      *votes;
  int            bad = 0, w = 1;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  while ((1 << w) - 1 < size) w++;
  for (int k = 0; k < 2; k++) {
    long n = ns[k], badi = -1;
    PetscCall(PetscCalloc2((n + 7) / 8, &bits, n, &votes));
    for (long i = 0; i < n; i++)
      if (VoteBit(i, rank)) bits[i >> 3] |= (unsigned char)(1u << (i & 7));
    PetscCall(SgTrainerVoteSum(comm, n, bits, votes));
    for (long i = 0; i < n; i++) {
      int ref = 0;
      for (int r = 0; r < size; r++) ref += VoteBit(i, r);
      if (votes[i] != ref && badi < 0) badi = i;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &badi, 1, MPI_LONG, MPI_MAX, comm));
    if (badi >= 0) bad++;
    CHECK(badi < 0, "vote allreduce on %d ranks, %ld values: value %ld counted %d votes, the dense count says otherwise", size, n, badi, badi >= 0 && badi < n ? votes[badi] : -1);
    bytes[k] = SgTrainerVoteBytes(n, size);
    want[k]  = size > 1 ? 2.0 * (size - 1) / size * 8.0 * (double)((n + 64 / w - 1) / (64 / w)) : 0;
    CHECK(bytes[k] == want[k], "vote allreduce on %d ranks, %ld values: %g bytes counted, want %g", size, n, bytes[k], want[k]);
    PetscCall(PetscFree2(bits, votes));
  }
  PetscCall(PetscPrintf(comm, "vote: %d rank(s), %d-bit counters: 1000 and 197 values counted as the dense count%s; bytes per rank %g and %g (all-gather of bits %g and %g, float32 allreduce %g and %g)\n", size, w, bad ? " NOT everywhere" : "", bytes[0], bytes[1], (size - 1) * 125.0, (size - 1) * 25.0, 2.0 * (size - 1) / size * 4000, 2.0 * (size - 1) / size * 788));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModeVote(void)
{
  double b[2], w[2];

  PetscFunctionBegin;
  PetscCall(VoteCheck(PETSC_COMM_WORLD, b, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* test_trainer_zero cub DIR (1, 2 or 3 ranks): -train_compress lion_cub. 60 steps of batch 8 of 40
   samples at lr 0.01, momenta averaged every 10 steps. The net has 3 more values the loss never uses
   (gradient and momentum exactly 0: c = 0 on every rank, every step). 1 rank: equal to plain Lion bit
   for bit (one vote is the sign itself). Every rank count: the bytes the trainer counted per step
   equal the formula (N-1) ceil(29/8) + (6 sync steps / 60) 2(N-1)/N 8 x 29 exactly (same double
   arithmetic, bound 1e-12 relative). 2 and 3 ranks: it converges sanely: the rms error drops below
   0.7 x the initial one and stays within 1.5 x plain Lion's. The tie rule: the unused values do not
   move at all on 1 and 2 ranks (Lion's sign(0) = 0; sending 0 as -1 moved them by 60 lr = 0.6), and
   by at most lr on 3 ranks (the odd vote alternates). The momentum sync: after step 60 (a sync step
   of -train_lion_cub_sync 10) every rank holds the same momentum bit for bit; with sync 0 (never)
   they differ (each rank's momentum follows its own gradients), so the check sees a missing sync.
   -train_compress lion_cub_allreduce (the votes summed by an allreduce of packed counters, vote.c):
   the counts are the all-gather's, so its weights equal lion_cub's bit for bit on 1, 2 and 3 ranks,
   and it counts 2(N-1)/N x 8 (one 64-bit word of 2-bit counters for 29 values) + the syncs per step;
   the vote itself is checked against a dense count (VoteCheck) on the same ranks. */
static PetscErrorCode ModeCub(const char dir[])
{
  MPI_Comm    comm = PETSC_COMM_WORLD;
  PetscMPIInt size, rank;
  char        data[PETSC_MAX_PATH_LEN];
  double      wl[64], wc[64], wn[64], w0[64], wa[64], mom[64], mom0[64], e0, el, ec, want, wanta, dm[2], ddead = 0, da = 0, vb[2], vw[2];
  Net         m;
  Run         r = {0};
  PetscReal   st[4], sta[4];
  const int   nd = 3, np = 26 + nd;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(data, sizeof data, "%s/cub.h5", dir));
  if (!rank) PetscCall(MlpWriteData(data, 40, "SgTrainer ZeRO test data"));
  PetscCallMPI(MPI_Barrier(comm));
  r.data = data;
  r.batch = 8;
  r.steps = 60;
  r.disp = 60;
  r.const_lr = PETSC_TRUE;
  PetscCall(MlpNetCreate(&m, nd, 0.6));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m.P), w0));
  r.opts = "-train_optimizer lion";
  PetscCall(Train(comm, &m, &r, wl, NULL));
  sgnn_params_destroy(&m.P);
  for (int k = 0; k < 2; k++) { /* k = 0: sync every 10 steps, 1: never */
    PetscCall(MlpNetCreate(&m, nd, 0.6));
    r.opts = k ? "-train_optimizer lion -train_compress lion_cub -train_lion_cub_sync 0" : "-train_optimizer lion -train_compress lion_cub -train_lion_cub_sync 10";
    r.mom = mom;
    PetscCall(Train(comm, &m, &r, k ? wn : wc, k ? NULL : st));
    r.mom = NULL;
    sgnn_params_destroy(&m.P);
    PetscCall(PetscArraycpy(mom0, mom, np));
    PetscCallMPI(MPI_Bcast(mom0, np, MPI_DOUBLE, 0, comm));
    dm[k] = 0;
    for (int i = 0; i < np; i++) dm[k] = PetscMax(dm[k], fabs(mom[i] - mom0[i]));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dm[k], 1, MPI_DOUBLE, MPI_MAX, comm));
  }
  PetscCall(MlpNetCreate(&m, nd, 0.6));
  r.opts = "-train_optimizer lion -train_compress lion_cub_allreduce -train_lion_cub_sync 10";
  PetscCall(Train(comm, &m, &r, wa, sta));
  sgnn_params_destroy(&m.P);
  for (int i = 0; i < np; i++) da = PetscMax(da, fabs(wa[i] - wc[i]));
  wanta = size > 1 ? 2.0 * (size - 1) / size * 8.0 + 6.0 / 60.0 * 2.0 * (size - 1) / size * 8 * np : 0;
  PetscCall(PetscPrintf(comm, "cub allreduce: %d rank(s): weights differ from the all-gather's by %g; bytes per step %.4f (formula %.4f)\n", size, da, (double)sta[0], wanta));
  CHECK(da == 0, "lion_cub_allreduce differs from lion_cub (all-gather) by %g on %d ranks: the same votes, want bit for bit", da, size);
  CHECK(fabs(sta[0] - wanta) <= 1e-12 * PetscMax(wanta, 1), "lion_cub_allreduce: bytes per step %.17g, formula %.17g", (double)sta[0], wanta);
  PetscCall(VoteCheck(comm, vb, vw));
  for (int i = 26; i < np; i++) ddead = PetscMax(ddead, fabs(wc[i] - w0[i]));
  PetscCall(MlpRmse(data, 40, w0, &e0));
  PetscCall(MlpRmse(data, 40, wl, &el));
  PetscCall(MlpRmse(data, 40, wc, &ec));
  want = size > 1 ? (size - 1) * 4.0 + 6.0 / 60.0 * 2.0 * (size - 1) / size * 8 * np : 0;
  PetscCall(PetscPrintf(comm, "cub: %d rank(s): rms error initial %.4f, Lion %.4f, Lion Cub %.4f; bytes per step %.4f (formula %.4f; a float32 allreduce %.1f, a float64 one %.1f); unused values moved %g; momenta differ across ranks by %g after a sync step, %g without sync\n", size, e0, el, ec, (double)st[0], want, 2.0 * (size - 1) / size * 4 * np, 2.0 * (size - 1) / size * 8 * np, ddead, dm[0], dm[1]));
  CHECK(fabs(st[0] - want) <= 1e-12 * PetscMax(want, 1), "bytes per step %.17g, formula %.17g", (double)st[0], want);
  CHECK(size == 1 || dm[1] > 0, "with -train_lion_cub_sync 0 the ranks' momenta are equal after 60 steps: the check of the sync would not see it missing");
  CHECK(dm[0] == 0, "momenta differ across ranks by %g after step 60, a sync step of -train_lion_cub_sync 10: want bit for bit", dm[0]);
  CHECK(ddead <= (size % 2 ? 0.01 * (1 + 1e-12) : 0) * (size > 1), "values with gradient 0 moved by %g on %d ranks: want 0 on 1 and 2 ranks (Lion's sign(0) = 0), at most lr = 0.01 on 3", ddead, size);
  if (size == 1) {
    double d = 0;
    for (int i = 0; i < np; i++) d = PetscMax(d, fabs(wl[i] - wc[i]));
    CHECK(d == 0, "1 rank: lion_cub differs from plain Lion by %g", d);
  } else {
    CHECK(ec < 0.7 * e0, "lion_cub does not converge: rms %g from %g", ec, e0);
    CHECK(ec < 1.5 * el, "lion_cub %g much worse than Lion %g", ec, el);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "usage: test_trainer_zero lion|shard|cub|vote DIR");
  if (!strcmp(argv[1], "lion")) PetscCall(ModeLion(argv[2]));
  else if (!strcmp(argv[1], "cub")) PetscCall(ModeCub(argv[2]));
  else if (!strcmp(argv[1], "vote")) PetscCall(ModeVote());
  else PetscCall(ModeShard(argv[2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAILED" : "all checks passed"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
