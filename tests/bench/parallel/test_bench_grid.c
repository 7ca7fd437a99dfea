/* Training steps of 3-D CNNs on a process grid of G data groups x S spatial ranks (issue 18,
   docs/parallel.md): figures, not pass/fail. One step = forward, backward, gradient sum over the grid
   (bucketed allreduce started during backward), the global batch shared by the data groups and each
   sample split along one axis over the spatial ranks of its group.

     mpiexec -n G*S test_bench_grid MODEL G S NGLOBAL D H W [options]
       MODEL stack  3 conv layers 3x3x3 (8 -> 8 channels, padding 1) + ReLU, float32, loss sum(y^2),
                    samples [8, D, H, W] split along D
             mffn   the MeshfreeFlowNet encoder at the paper's widths (U-Net 16..256, bottleneck residual
                    blocks with batch norm over each crop, poolings [1,2,2] [1,2,2] [2,2,2] [2,2,2],
                    latent 32), float64, loss sum(latent * R), low-res crops [4, D(t), H(z), W(x)]
                    split along z
       -steps N       timed steps after one warm-up (default 3); the step time is the max over ranks
       -chunks K      interior pieces of an overlapped convolution (default 4; 0: blocking halo)
       -trace FILE    write the last step's timeline (per rank: the layers' spans, halo waits,
                      allreduces, the phases of the step) to FILE.RANK
     mpiexec -n 1 test_bench_grid layers FILE   forward + backward time of each layer listed in FILE
                                                (perfmodel.py writes it; on 2 ranks: side by side)
     mpiexec -n 2 test_bench_grid pingpong  point-to-point and allreduce times for the alpha-beta model

   Every run prints one "RESULT key=value ..." line (rank 0) that tests/bench/parallel/run.sh and
   perfmodel.py read. Wall-clock times (MPI_Wtime): on a loaded machine they include waiting for a
   core, which is what a rank experiences. */
#include <math.h>
#include "sgmffn.h"
#include "sgtrainer.h"

#define CALLPAR(call) \
  do { \
    if (call) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", sgpar_last_error()); \
  } while (0)

static double MaxAll(double t)
{
  double m;
  (void)MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return m;
}

static int CmpD(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- the models -------------------------------------------------------------------------------- */
typedef struct {
  int          mffn; /* 0: conv stack, 1: MeshfreeFlowNet encoder */
  SgnnBackend *be;
  SgnnDType    dt;
  SgnnParams   P;
  SgnnTensor   w[3], b[3]; /* stack */
  SgMFFN       m;          /* mffn */
  int          C;          /* input channels */
} Model;

static PetscErrorCode ModelCreate(int mffn, Model *M)
{
  SgnnRng r;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(M, sizeof *M));
  M->mffn = mffn;
  SgCallNN(sgnn_backend_get("cpu", &M->be));
  sgnn_rng_init(&r, 1);
  if (mffn) {
    SgMFFNConfig c;
    PetscCall(SgMFFNConfigDefault(&c));
    M->dt = SGNN_F64;
    M->C = 4;
    PetscCall(SgMFFNCreate(&c, M->be, M->dt, &M->m));
    PetscCall(SgMFFNInitWeights(M->m, 1));
    M->P = M->m->P;
  } else {
    M->dt = SGNN_F32;
    M->C = 8;
    SgCallNN(sgnn_params_create(M->be, M->dt, &M->P));
    for (int l = 0; l < 3; l++) {
      char nm[16];
      PetscCall(PetscSNPrintf(nm, sizeof nm, "w%d", l));
      SgCallNN(sgnn_params_add(M->P, nm, 5, (int[5]){8, 8, 3, 3, 3}, &M->w[l]));
      PetscCall(PetscSNPrintf(nm, sizeof nm, "b%d", l));
      SgCallNN(sgnn_params_add(M->P, nm, 1, (int[1]){8}, &M->b[l]));
    }
    SgCallNN(sgnn_params_setup(M->P));
    SgCallNN(sgnn_init_uniform(sgnn_params_values(M->P), -0.1, 0.1, &r));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModelDestroy(Model *M)
{
  PetscFunctionBegin;
  if (M->mffn) PetscCall(SgMFFNDestroy(&M->m));
  else sgnn_params_destroy(&M->P);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the loss of one local sample slab x (shape [1, C, ...]) */
static PetscErrorCode SampleLoss(Model *M, const SgMFFNPart *part, SgnnTensor x, SgnnTensor *loss)
{
  SgnnTensor y, y2;

  PetscFunctionBegin;
  if (M->mffn) {
    SgnnTensor lat;
    PetscCall(SgMFFNEncodePart(M->m, part, x, &lat));
    SgCallNN(sgnn_mul(lat, lat, &y2)); /* a loss that weighs every latent value */
    sgnn_tensor_free(&lat);
  } else {
    static const int one[3] = {1, 1, 1}, pad[3] = {1, 1, 1};
    SgnnTensor       h = sgnn_tensor_ref(x);
    for (int l = 0; l < 3; l++) {
      SgnnTensor z;
      if (part->grid && sgpar_grid_spatial_size(part->grid) > 1) CALLPAR(sgpar_conv3d(part->grid, &part->split, h, M->w[l], M->b[l], one, pad, &z));
      else SgCallNN(sgnn_conv3d(h, M->w[l], M->b[l], one, pad, &z));
      sgnn_tensor_free(&h);
      SgCallNN(sgnn_relu(z, &h));
      sgnn_tensor_free(&z);
    }
    y = h;
    SgCallNN(sgnn_mul(y, y, &y2));
    sgnn_tensor_free(&y);
  }
  SgCallNN(sgnn_sum(y2, 0, NULL, 0, loss));
  sgnn_tensor_free(&y2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- grid runs --------------------------------------------------------------------------------- */
static PetscErrorCode WriteTrace(SgparGrid g, const char *file, const double ph[4])
{
  const SgparTraceEvent *ev;
  int                    n, rank;
  char                   fn[PETSC_MAX_PATH_LEN];
  FILE                  *fp;

  PetscFunctionBegin;
  CALLPAR(sgpar_grid_trace_events(g, &ev, &n));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(fn, sizeof fn, "%s.%d", file, rank));
  fp = fopen(fn, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", fn);
  fprintf(fp, "# rank %d: layer kind t0 t1 (s from the step's start); phases: forward end, backward end, sync end\n", rank);
  fprintf(fp, "phase -1 forward %.6f %.6f\nphase -1 backward %.6f %.6f\nphase -1 sync %.6f %.6f\n", 0.0, ph[1] - ph[0], ph[1] - ph[0], ph[2] - ph[0], ph[2] - ph[0], ph[3] - ph[0]);
  for (int i = 0; i < n; i++) fprintf(fp, "event %d %s %.6f %.6f\n", ev[i].layer, sgpar_trace_kind_name(ev[i].kind), ev[i].t0 - ph[0], ev[i].t1 - ph[0]);
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunGrid(int mffn, int G, int S, int NG, const int dims[3], int steps, int chunks, const char *trace)
{
  Model      M;
  SgparGrid  g;
  SgparDP    dp;
  SgMFFNPart part;
  SgnnRng    r;
  int        rank, dg, nloc, axis = mffn ? 3 : 2, xs[5], ntimes = 0;
  double    *times, ph[4], best[3] = {0, 0, 0}, tbest = 1e30;
  SgnnTensor x;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(ModelCreate(mffn, &M));
  CALLPAR(sgpar_grid_create(PETSC_COMM_WORLD, G, S, &g));
  CALLPAR(sgpar_grid_set_overlap(g, chunks));
  dg = sgpar_grid_data_group(g);
  nloc = NG / G + (dg < NG % G);
  part.grid = g;
  CALLPAR(sgpar_split_create(g, axis, dims[axis - 2], NULL, &part.split));
  xs[0] = 1;
  xs[1] = M.C;
  xs[2] = dims[0];
  xs[3] = dims[1];
  xs[4] = dims[2];
  xs[axis] = part.split.ax[0].n;
  sgnn_rng_init(&r, 7 + rank);
  SgCallNN(sgnn_tensor_zeros(M.be, M.dt, 5, xs, &x));
  SgCallNN(sgnn_init_uniform(x, -1, 1, &r));
  CALLPAR(sgpar_dp_create(sgpar_grid_comm(g), M.P, 1 << 20, &dp));
  PetscCall(PetscMalloc1(steps, &times));
  for (int s = 0; s <= steps; s++) {
    SgnnTensor acc = NULL;
    double     t;
    if (trace && s == steps) CALLPAR(sgpar_grid_trace(g, 1));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    ph[0] = MPI_Wtime();
    SgCallNN(sgnn_params_zero_grad(M.P));
    for (int i = 0; i < nloc; i++) { /* every local sample: its own loss, summed */
      SgnnTensor l, a;
      PetscCall(SampleLoss(&M, &part, x, &l));
      if (acc) {
        SgCallNN(sgnn_add(acc, l, &a));
        sgnn_tensor_free(&acc);
        sgnn_tensor_free(&l);
        acc = a;
      } else acc = l;
    }
    ph[1] = MPI_Wtime();
    CALLPAR(sgpar_dp_begin(dp, sgpar_grid_sample_count(g, nloc)));
    if (acc) SgCallNN(sgnn_backward(acc));
    ph[2] = MPI_Wtime();
    CALLPAR(sgpar_dp_end(dp, NULL));
    ph[3] = MPI_Wtime();
    sgnn_tensor_free(&acc);
    if (trace && s == steps) {
      CALLPAR(sgpar_grid_trace(g, 0));
      PetscCall(WriteTrace(g, trace, ph));
    }
    t = MaxAll(ph[3] - ph[0]);
    if (!s) continue; /* warm-up: allocator caches, page faults */
    times[ntimes++] = t;
    if (t < tbest) {
      tbest = t;
      best[0] = MaxAll(ph[1] - ph[0]);
      best[1] = MaxAll(ph[2] - ph[1]);
      best[2] = MaxAll(ph[3] - ph[2]);
    } /* the fastest step's phases */
  }
  qsort(times, (size_t)ntimes, sizeof *times, CmpD);
  {
    long np;
    SgCallNN(sgnn_params_count(M.P, &np));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT model=%s G=%d S=%d batch=%d dims=%dx%dx%d chunks=%d steps=%d min=%.4f median=%.4f forward=%.4f backward=%.4f syncwait=%.4f weights=%ld buckets=%d overlapped=%d\n", mffn ? "mffn" : "stack", G, S, NG, dims[0], dims[1], dims[2], chunks, ntimes, times[0], times[ntimes / 2], best[0], best[1], best[2], np, sgpar_dp_nbuckets(dp), sgpar_dp_overlapped(dp)));
  }
  PetscCall(PetscFree(times));
  sgnn_tensor_free(&x);
  sgpar_dp_destroy(&dp);
  sgpar_grid_destroy(&g);
  PetscCall(ModelDestroy(&M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- layer times for the performance model (1 rank, or several side by side: the time each gets
   under that contention) ---------------------------------------------------------------------------
   The model (perfmodel.py) writes the layers of the architectures it predicts, one per line:
     OP DTYPE C1 C2 K D H W      OP: conv (no bias) | convb (bias) | conv_in, convb_in (the network's
                                 first layer: no input gradient) | bnrelu | bn | addrelu | relu |
                                 pool (max, 1x2x2 or 2x2x2: K = 1 or 2 in D) | upcat (nearest x2 of C1
                                 channels at the coarse D H W, concatenated with C2 fine channels) |
                                 sumsq (the loss)
   and gets each line's forward + backward time back (median of the repetitions). */
/* evict the caches (64 MiB written) before a timed layer: inside a network its input and weights come
   from memory, not from the cache a repeated call leaves them in */
static void Flush(void)
{
  static char *junk;
  if (!junk) junk = malloc(64 << 20);
  if (junk) memset(junk, (int)(MPI_Wtime() * 1e3) & 0xff, 64 << 20);
}

static PetscErrorCode TimeLayer(SgnnBackend *be, const char *op, SgnnDType dt, int c1, int c2, int k, const int d[3], int reps, double *t)
{
  SgnnRng    r;
  SgnnTensor x, x2 = NULL, w = NULL, bias = NULL, g = NULL, be_ = NULL;
  int        xs[5] = {1, c1, d[0], d[1], d[2]}, one[3] = {1, 1, 1};
  double     ts[32];

  PetscFunctionBegin;
  sgnn_rng_init(&r, 3);
  SgCallNN(sgnn_tensor_zeros(be, dt, 5, xs, &x));
  SgCallNN(sgnn_init_uniform(x, -1, 1, &r));
  /* "conv_in", "convb_in": the first layer of a network reads its input, which needs no gradient */
  SgCallNN(sgnn_tensor_set_requires_grad(x, !strstr(op, "_in")));
  if (!strncmp(op, "conv", 4)) {
    int ws[5] = {c2, c1, k, k, k};
    SgCallNN(sgnn_tensor_zeros(be, dt, 5, ws, &w));
    SgCallNN(sgnn_init_uniform(w, -1, 1, &r));
    SgCallNN(sgnn_tensor_set_requires_grad(w, 1));
    if (!strncmp(op, "convb", 5)) {
      SgCallNN(sgnn_tensor_zeros(be, dt, 1, &c2, &bias));
      SgCallNN(sgnn_tensor_set_requires_grad(bias, 1));
    }
  } else if (!strncmp(op, "bn", 2)) {
    SgCallNN(sgnn_tensor_full(be, dt, 1, &c1, 1.0, &g));
    SgCallNN(sgnn_tensor_zeros(be, dt, 1, &c1, &be_));
    SgCallNN(sgnn_tensor_set_requires_grad(g, 1));
    SgCallNN(sgnn_tensor_set_requires_grad(be_, 1));
  } else if (!strcmp(op, "addrelu") || !strcmp(op, "upcat")) {
    int s2[5] = {1, c2, d[0], d[1], d[2]};
    if (!strcmp(op, "upcat")) {
      s2[2] *= k;
      s2[3] *= 2;
      s2[4] *= 2;
    } /* the fine level */
    SgCallNN(sgnn_tensor_zeros(be, dt, 5, s2, &x2));
    SgCallNN(sgnn_init_uniform(x2, -1, 1, &r));
    SgCallNN(sgnn_tensor_set_requires_grad(x2, 1));
  }
  PetscCheck(reps <= 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "at most 32 repetitions");
  for (int i = 0; i <= reps; i++) {
    SgnnTensor y = NULL, z = NULL, s;
    double     t0;
    Flush();
    t0 = MPI_Wtime();
    if (!strncmp(op, "conv", 4)) {
      int pad[3] = {(k - 1) / 2, (k - 1) / 2, (k - 1) / 2};
      SgCallNN(sgnn_conv3d(x, w, bias, one, pad, &y));
    } else if (!strcmp(op, "bnrelu") || !strcmp(op, "bn")) {
      SgCallNN(sgnn_batch_norm(x, g, be_, NULL, NULL, 1, 0.1, 1e-5, &z));
      if (!strcmp(op, "bnrelu")) SgCallNN(sgnn_relu(z, &y));
      else y = sgnn_tensor_ref(z);
    } else if (!strcmp(op, "addrelu")) {
      SgCallNN(sgnn_add(x, x2, &z));
      SgCallNN(sgnn_relu(z, &y));
    } else if (!strcmp(op, "relu")) SgCallNN(sgnn_relu(x, &y));
    else if (!strcmp(op, "pool")) {
      int kk[3] = {k, 2, 2};
      SgCallNN(sgnn_maxpool3d(x, kk, kk, &y));
    } else if (!strcmp(op, "upcat")) {
      int        f[3] = {k, 2, 2};
      SgnnTensor cat[2];
      SgCallNN(sgnn_upsample_nearest3d(x, f, &z));
      cat[0] = z;
      cat[1] = x2;
      SgCallNN(sgnn_concat(2, cat, 1, &y));
    } else if (!strcmp(op, "sumsq")) SgCallNN(sgnn_mul(x, x, &y));
    else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "unknown layer '%s'", op);
    SgCallNN(sgnn_sum(y, 0, NULL, 0, &s));
    SgCallNN(sgnn_backward(s));
    if (i) ts[i - 1] = MPI_Wtime() - t0;
    sgnn_tensor_free(&y);
    sgnn_tensor_free(&z);
    sgnn_tensor_free(&s);
  }
  qsort(ts, (size_t)reps, sizeof *ts, CmpD);
  *t = ts[reps / 2];
  SgnnTensor *fr[] = {&x, &x2, &w, &bias, &g, &be_};
  for (size_t i = 0; i < sizeof fr / sizeof *fr; i++) sgnn_tensor_free(fr[i]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Layers(const char *file, int reps)
{
  SgnnBackend *be;
  int          size;
  char         line[256];
  FILE        *fp = fopen(file, "r");

  PetscFunctionBegin;
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read the layer list %s", file);
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  SgCallNN(sgnn_backend_get("cpu", &be));
  while (fgets(line, sizeof line, fp)) {
    char   op[16], dts[8];
    int    c1, c2, k, d[3];
    double t;
    if (line[0] == '#' || sscanf(line, "%15s %7s %d %d %d %d %d %d", op, dts, &c1, &c2, &k, &d[0], &d[1], &d[2]) != 8) continue;
    PetscCall(TimeLayer(be, op, strcmp(dts, "f32") ? SGNN_F64 : SGNN_F32, c1, c2, k, d, reps, &t));
    t = MaxAll(t);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT layer=%s,%s,%d,%d,%d,%d,%d,%d ranks=%d time=%.6e\n", op, dts, c1, c2, k, d[0], d[1], d[2], size, t));
  }
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* alpha-beta: ping-pong (half the round trip) and allreduce on 2 ranks, medians of 20 */
static PetscErrorCode PingPong(void)
{
  int    rank, size;
  char  *buf;
  size_t maxb = 8 << 20;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "pingpong runs on 2 ranks");
  PetscCall(PetscCalloc1(2 * maxb, &buf));
  for (size_t b = 8; b <= maxb; b *= 8) {
    double tp[20], ta[20];
    for (int i = 0; i < 20; i++) {
      double t0;
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      t0 = MPI_Wtime();
      if (!rank) {
        PetscCallMPI(MPI_Send(buf, (int)b, MPI_BYTE, 1, 1, PETSC_COMM_WORLD));
        PetscCallMPI(MPI_Recv(buf, (int)b, MPI_BYTE, 1, 1, PETSC_COMM_WORLD, MPI_STATUS_IGNORE));
      } else {
        PetscCallMPI(MPI_Recv(buf, (int)b, MPI_BYTE, 0, 1, PETSC_COMM_WORLD, MPI_STATUS_IGNORE));
        PetscCallMPI(MPI_Send(buf, (int)b, MPI_BYTE, 0, 1, PETSC_COMM_WORLD));
      }
      tp[i] = (MPI_Wtime() - t0) / 2;
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      t0 = MPI_Wtime();
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, buf, (int)(b / 4 ? b / 4 : 1), MPI_FLOAT, MPI_SUM, PETSC_COMM_WORLD));
      ta[i] = MaxAll(MPI_Wtime() - t0);
    }
    qsort(tp, 20, sizeof *tp, CmpD);
    qsort(ta, 20, sizeof *ta, CmpD);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT comm=p2p bytes=%zu time=%.3e\nRESULT comm=allreduce bytes=%zu time=%.3e\n", b, tp[10], b, ta[10]));
  }
  /* a synchronisation between compute: what a blocking exchange costs on this machine as loaded now
     (a rank that finished waits for its partner, who may be off the core), for compute of about 0.02,
     0.2 and 2 ms between synchronisations */
  for (int work = 4000; work <= 400000; work *= 10) {
    double t[2];
    int    n = (int)(40000000 / work) < 2000 ? (int)(40000000 / work) : 2000;
    for (int with = 0; with < 2; with++) {
      volatile double a = 1;
      double          t0;
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      t0 = MPI_Wtime();
      for (int i = 0; i < n; i++) {
        for (int k = 0; k < work; k++) a = a * 1.0000001 + 1e-9;
        if (with) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
      }
      t[with] = MaxAll(MPI_Wtime() - t0);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT comm=sync compute=%.3e time=%.3e\n", t[0] / n, (t[1] - t[0]) / n));
  }
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt  steps = 3, chunks = 4;
  char      trace[PETSC_MAX_PATH_LEN] = "";
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &steps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-chunks", &chunks, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-trace", trace, sizeof trace, &has));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_grid stack|mffn G S NGLOBAL D H W [-steps N] [-chunks K] [-trace FILE] | layers FILE | pingpong");
  if (!strcmp(argv[1], "layers")) {
    PetscCheck(argc >= 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_grid layers FILE [-steps N]");
    PetscCall(Layers(argv[2], (int)PetscMin(steps, 32)));
  } else if (!strcmp(argv[1], "pingpong")) PetscCall(PingPong());
  else {
    int G, S, NG, d[3];
    PetscCheck(argc >= 8, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_grid stack|mffn G S NGLOBAL D H W [-steps N] [-chunks K] [-trace FILE]");
    G = atoi(argv[2]);
    S = atoi(argv[3]);
    NG = atoi(argv[4]);
    d[0] = atoi(argv[5]);
    d[1] = atoi(argv[6]);
    d[2] = atoi(argv[7]);
    PetscCall(RunGrid(!strcmp(argv[1], "mffn"), G, S, NG, d, (int)PetscMax(steps, 1), (int)chunks, has ? trace : NULL));
  }
  PetscCall(PetscFinalize());
  return 0;
}
