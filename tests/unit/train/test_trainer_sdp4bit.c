/* -train_compress sdp4bit (issue 38; surrogates/train/sdp4bit.c) against a serial reference written
   here from the format stated in sgtrainer.h, not from the library's code.

   test_trainer_sdp4bit codec DIR (1, 2 or 3 ranks)
     the codec: for n = 1, 7, 128, 129, 300, 2049, 4100 values (whole and partial groups), 4 and 8
       bits, groups of 128 and 2048, values with an outlier: SgTrainerQuantPack's bytes equal the
       reference's byte for byte (the scales as float32 first, then the codes, low nibble first),
       SgTrainerQuantBytes = 4 ceil(n/g) + ceil(n bits/8), the decoded values equal the reference's
       exactly and lie within half a step (scale/2) of the input;
     the smoother: SgTrainerHadamard on 300 values equals the dense H/sqrt(128) (H_ij =
       (-1)^popcount(i & j)) on the two whole groups to 1e-14 and leaves the last 44 values alone;
     the reduce-scatter (two levels) on the rank count, with G = 1 (4 bits + smoother between all
       ranks) and G = N (8 bits, one node): every rank's gradient is a hash of (rank, i) with outliers,
       so each rank emulates the whole algorithm serially with the reference codec and the dense
       Hadamard; its block must equal the emulation to 1e-13 relative (round-off of the two Hadamard
       codes only), and the bytes it counted equal the sizes of its messages by the formula;
     the all-gather of the weight differences: every rank ends with the same slab bit for bit, equal to
       the serial decode exactly, and counted (N-1) x its packed block.
   test_trainer_sdp4bit train DIR (1, 2 or 3 ranks; both: codec then train, one launch)
     an MLP 3 -> 100 (tanh) -> 1 (501 parameters, so the gradient blocks hold whole Hadamard groups:
     250 + 251 on 2 ranks, 167 x 3 on 3), Adam, 60 steps of batch 8 of 40 samples, lr 0.01 constant,
     ZeRO stage 2 without and with sdp4bit (-train_sdp4bit_node_ranks 1 and N):
       every rank holds the same weights bit for bit after the run (the owner applies the dequantized
       difference it sends, not its exact weights);
       the bytes counted per step equal the formula for this rank: (N-1) (4 ceil(b_r/2048) + ceil(b_r/2))
       for the weights + the all-to-all messages (8 bits: 4 ceil(b/128) + b per block; 4 bits: 4
       ceil(b/128) + ceil(b/2));
       1 rank: sdp4bit is stage 2 bit for bit (nothing is sent, nothing quantized);
       2 and 3 ranks: the rms error over the 40 samples is below 0.7 x the initial one and within 1 %
       of stage 2's uncompressed run (measured: at most 0.17 %, on 2 ranks with G = 1; the bound is
       about 5x that, so a broken scale or smoother, which costs far more, shows). */
#include "../../lib/sgtestcheck.h"

#define NF 3
#define NH 100
#include "mlp_net.h"
#define NP (NF * NH + NH + NH + 1)

/* ---------------- the reference (serial, from the stated format) ---------------- */
static size_t RefBytes(long n, int bits, long g) { return n > 0 ? 4 * (size_t)((n + g - 1) / g) + (size_t)((n * bits + 7) / 8) : 0; }

static void RefPack(const double *x, long n, int bits, long g, unsigned char *buf)
{
  int  qmax = bits == 4 ? 7 : 127;
  long ng   = (n + g - 1) / g;
  memset(buf, 0, RefBytes(n, bits, g));
  for (long k = 0; k < ng; k++) {
    double amax = 0;
    float  s;
    for (long i = k * g; i < n && i < (k + 1) * g; i++)
      if (fabs(x[i]) > amax) amax = fabs(x[i]);
    s = (float)(amax / qmax);
    memcpy(buf + 4 * k, &s, 4);
    for (long i = k * g; i < n && i < (k + 1) * g; i++) {
      long q = 0;
      if (s > 0) { /* round to nearest, ties to even */
        double v = x[i] / (double)s, f = floor(v), r = v - f;
        q = (long)(r > 0.5 ? f + 1 : (r < 0.5 ? f : (fmod(f, 2) == 0 ? f : f + 1)));
      }
      if (q > qmax) q = qmax;
      if (q < -qmax) q = -qmax;
      if (bits == 8) buf[4 * ng + i] = (unsigned char)(q & 0xFF);
      else buf[4 * ng + i / 2] |= (unsigned char)((q & 0xF) << (i % 2 ? 4 : 0));
    }
  }
}

static void RefDecode(const unsigned char *buf, long n, int bits, long g, double *y)
{
  long ng = (n + g - 1) / g;
  for (long i = 0; i < n; i++) {
    float s;
    int   q;
    memcpy(&s, buf + 4 * (i / g), 4);
    if (bits == 8) q = buf[4 * ng + i] >= 128 ? buf[4 * ng + i] - 256 : buf[4 * ng + i];
    else {
      int nib = (buf[4 * ng + i / 2] >> (i % 2 ? 4 : 0)) & 0xF;
      q       = nib >= 8 ? nib - 16 : nib;
    }
    y[i] = q * (double)s;
  }
}

/* dense H/sqrt(g) on whole groups of g */
static void RefHadamard(double *x, long n, long g)
{
  double *y = malloc(sizeof(double) * g);
  for (long lo = 0; lo + g <= n; lo += g) {
    for (long i = 0; i < g; i++) {
      y[i] = 0;
      for (long j = 0; j < g; j++) y[i] += (__builtin_popcountl((unsigned long)(i & j)) % 2 ? -1 : 1) * x[lo + j];
      y[i] /= sqrt((double)g);
    }
    memcpy(x + lo, y, sizeof(double) * g);
  }
  free(y);
}

/* a reproducible value of (a, i): in (-1, 1), and every 37th value an outlier of 30 */
static double Hash(long a, long i)
{
  uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(a + 7) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (i % 37 == 5 ? 30.0 : 1.0) * ((double)(h >> 11) / 9007199254740992.0 * 2 - 1);
}

static PetscErrorCode ModeCodec(void)
{
  MPI_Comm    comm = PETSC_COMM_WORLD;
  PetscMPIInt size, rank;
  const long  ns[] = {1, 7, 128, 129, 300, 2049, 4100};
  double      x[4100], y[4100], z[4100], worst = 0;
  unsigned char a[8192], b[8192];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (int k = 0; k < 7; k++)
    for (int bits = 4; bits <= 8; bits += 4)
      for (long g = 128; g <= 2048; g *= 16) {
        long   n = ns[k];
        size_t nb = RefBytes(n, bits, g);
        for (long i = 0; i < n; i++) x[i] = Hash(k, i);
        PetscCall(PetscArrayzero(y, n));
        RefPack(x, n, bits, g, a);
        PetscCall(SgTrainerQuantPack(x, n, bits, g, b));
        PetscCall(SgTrainerQuantUnpackAdd(b, n, bits, g, y));
        RefDecode(a, n, bits, g, z);
        CHECK(SgTrainerQuantBytes(n, bits, g) == nb, "codec: %ld values, %d bits, groups of %ld: %zu bytes, want %zu", n, bits, g, SgTrainerQuantBytes(n, bits, g), nb);
        CHECK(!memcmp(a, b, nb), "codec: %ld values, %d bits, groups of %ld: the packed bytes differ from the reference's", n, bits, g);
        CHECK(!memcmp(y, z, n * sizeof(double)), "codec: %ld values, %d bits, groups of %ld: the decoded values differ from the reference's", n, bits, g);
        for (long i = 0; i < n; i++) {
          float s;
          memcpy(&s, a + 4 * (i / g), 4);
          CHECK(fabs(y[i] - x[i]) <= 0.5 * s * (1 + 1e-6), "codec: value %ld of %ld (%d bits): error %g, over half a step %g", i, n, bits, fabs(y[i] - x[i]), 0.5 * s);
          if (bits == 4) worst = PetscMax(worst, fabs(y[i] - x[i]));
        }
      }
  { /* the smoother */
    double d = 0;
    for (long i = 0; i < 300; i++) x[i] = y[i] = Hash(99, i);
    PetscCall(SgTrainerHadamard(x, 300, 128));
    RefHadamard(y, 300, 128);
    for (long i = 0; i < 300; i++) d = PetscMax(d, fabs(x[i] - y[i]));
    CHECK(d <= 1e-14 * 30, "Hadamard: differs from the dense H/sqrt(128) by %g", d);
    for (long i = 256; i < 300; i++) CHECK(x[i] == Hash(99, i), "Hadamard: value %ld of the partial last group moved", i);
    PetscCall(PetscPrintf(comm, "codec: 7 sizes x 4/8 bits x groups 128/2048 = the reference byte for byte; 4-bit error at most %.3g (outliers of 30); Hadamard - dense %.2g\n", worst, d));
  }
  /* the two-level reduce-scatter, G = 1 and G = N */
  for (int pass = 0; pass < 2; pass++) {
    int          G = pass ? size : 1, M = size / G, l = rank % G, nd = rank / G;
    const long   psi = 1000;
    PetscMPIInt  cnt[8], dsp[8];
    double      *gr, *all, *em, bytes, want = 0, rel = 0, err = 0, nrm = 0;
    MPI_Comm     intra, inter;
    if (pass && size == 1) break;
    PetscCall(PetscMalloc3(psi, &gr, psi * size, &all, psi, &em));
    for (int r = 0; r < size; r++) {
      dsp[r] = (PetscMPIInt)(psi * r / size);
      cnt[r] = (PetscMPIInt)(psi * (r + 1) / size - dsp[r]);
      for (long i = 0; i < psi; i++) all[r * psi + i] = Hash(100 + r, i);
    }
    PetscCall(PetscArraycpy(gr, all + rank * psi, psi));
    PetscCallMPI(MPI_Comm_split(comm, rank / G, rank % G, &intra));
    PetscCallMPI(MPI_Comm_split(comm, rank % G, rank / G, &inter));
    PetscCall(SgTrainerSdp4bitReduceScatter(intra, inter, cnt, dsp, gr, &bytes));
    PetscCallMPI(MPI_Comm_free(&intra));
    PetscCallMPI(MPI_Comm_free(&inter));
    { /* the emulation of my block: level 1 per node (own exact + the others' 8-bit), level 2 */
      int     me = rank, c = cnt[me];
      double *part = malloc(sizeof(double) * M * c), *tmp = malloc(sizeof(double) * c), *acc = calloc(c, sizeof(double));
      for (int m = 0; m < M; m++) { /* node m's partial sum of my block, as rank (m, l) computes it */
        for (long i = 0; i < c; i++) part[m * c + i] = all[(m * G + l) * psi + dsp[me] + i];
        for (int q = 0; q < G; q++) {
          if (q == l) continue;
          RefPack(all + (m * G + q) * psi + dsp[me], c, 8, 128, a);
          RefDecode(a, c, 8, 128, tmp);
          for (long i = 0; i < c; i++) part[m * c + i] += tmp[i];
        }
      }
      for (int m = 0; m < M; m++) {
        if (m == nd) continue;
        memcpy(tmp, part + m * c, sizeof(double) * c);
        RefHadamard(tmp, c, 128);
        RefPack(tmp, c, 4, 128, a);
        RefDecode(a, c, 4, 128, tmp);
        for (long i = 0; i < c; i++) acc[i] += tmp[i];
      }
      RefHadamard(acc, c, 128);
      for (long i = 0; i < c; i++) {
        double ex = 0;
        em[i] = part[nd * c + i] + acc[i];
        for (int r = 0; r < size; r++) ex += all[r * psi + dsp[me] + i];
        rel = PetscMax(rel, fabs(em[i] - gr[dsp[me] + i]));
        err = PetscMax(err, fabs(ex - gr[dsp[me] + i]));
        nrm = PetscMax(nrm, fabs(ex));
      }
      for (int q = 0; q < G; q++)
        for (int m = 0; m < M && q != l; m++) want += RefBytes(cnt[m * G + q], 8, 128);
      for (int m = 0; m < M; m++)
        if (m != nd) want += RefBytes(cnt[m * G + l], 4, 128);
      free(part);
      free(tmp);
      free(acc);
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rel, 1, MPI_DOUBLE, MPI_MAX, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nrm, 1, MPI_DOUBLE, MPI_MAX, comm));
    CHECK(rel <= 1e-13 * nrm, "reduce-scatter, %d rank(s), %d a node: differs from the serial emulation by %g (sum up to %g)", size, G, rel, nrm);
    CHECK(bytes == want, "reduce-scatter, %d rank(s), %d a node: rank %d counted %g bytes, its messages are %g", size, G, rank, bytes, want);
    PetscCall(PetscPrintf(comm, "reduce-scatter: %d rank(s), %d a node (%s): - emulation %.2g, - exact sum %.3g of max %.3g; rank 0 sent %g bytes (float32 reduce-scatter: %g)\n", size, G, M > 1 ? (G > 1 ? "8 then 4 bits" : "4 bits + Hadamard") : (size > 1 ? "8 bits" : "nothing to send"), rel, err, nrm, bytes, 4.0 * (size - 1) / size * psi));
    { /* the all-gather of 4-bit differences */
      double *d = malloc(sizeof(double) * psi), *x0 = malloc(sizeof(double) * psi), *xr = malloc(sizeof(double) * psi), *xall = malloc(sizeof(double) * psi * size);
      double  wb;
      int     same = 1;
      for (long i = 0; i < psi; i++) x0[i] = xr[i] = Hash(7, i);
      for (long i = 0; i < cnt[rank]; i++) d[i] = 1e-3 * Hash(200 + rank, i);
      PetscCall(SgTrainerSdp4bitAllGather(comm, cnt, dsp, d, x0, &wb));
      for (int r = 0; r < size; r++) {
        double *dr = malloc(sizeof(double) * cnt[r]), *t = malloc(sizeof(double) * cnt[r]);
        for (long i = 0; i < cnt[r]; i++) dr[i] = 1e-3 * Hash(200 + r, i);
        RefPack(dr, cnt[r], 4, 2048, a);
        RefDecode(a, cnt[r], 4, 2048, t);
        for (long i = 0; i < cnt[r]; i++) xr[dsp[r] + i] += t[i];
        free(dr);
        free(t);
      }
      PetscCallMPI(MPI_Allgather(x0, (PetscMPIInt)psi, MPI_DOUBLE, xall, (PetscMPIInt)psi, MPI_DOUBLE, comm));
      for (int r = 0; r < size; r++) same = same && !memcmp(xall + r * psi, x0, psi * sizeof(double));
      CHECK(same, "all-gather: the ranks' slabs differ after adding the 4-bit differences");
      CHECK(!memcmp(xr, x0, psi * sizeof(double)), "all-gather: rank %d's slab differs from the serial decode", rank);
      CHECK(wb == (size - 1) * (double)RefBytes(cnt[rank], 4, 2048), "all-gather: rank %d counted %g bytes, want %g", rank, wb, (size - 1) * (double)RefBytes(cnt[rank], 4, 2048));
      if (!pass) PetscCall(PetscPrintf(comm, "all-gather: %d rank(s): slabs identical %s, = serial decode; rank 0 sent %g bytes (float32: %g)\n", size, same ? "yes" : "NO", wb, 4.0 * (size - 1) / size * psi));
      free(d);
      free(x0);
      free(xr);
      free(xall);
    }
    PetscCall(PetscFree3(gr, all, em));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------- training (the network: mlp_net.h) ---------------- */

static PetscReal shard_rest[3], shard_peak[3]; /* the last Train's SgTrainerGetShardResident (stage 3) */
static PetscInt  train_batch = 8;                /* global batch of Train */

/* 60 steps of Adam with opts; out: the final slab; st: bytes per step, weights/gradient/state bytes */
static PetscErrorCode Train(MPI_Comm comm, const char data[], const char opts[], double out[], PetscReal st[4])
{
  SgTrainer       tr;
  SgTrainerOps    ops    = {MlpLoss, NULL, MlpMonitor, NULL};
  const char     *cols[] = {"rmse"}, *fields[] = {"x", "y"};
  SgnnOptimConfig oc;
  SgnnLRSchedule  sc = {0};
  Net             m;

  PetscFunctionBegin;
  PetscCall(MlpNetCreate(&m, 0, 0.3));
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "sdp"));
  PetscCall(SgTrainerSetOptionsPrefix(tr, "train_"));
  PetscCall(SgTrainerSetModel(tr, m.P));
  PetscCall(SgTrainerSetOps(tr, &ops, &m));
  PetscCall(SgTrainerSetMetrics(tr, 2, 1, cols, "# step rmse lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 2, fields));
  PetscCall(SgTrainerAddStream(tr, 1, &data, 40, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, train_batch));
  PetscCall(SgTrainerSetSeed(tr, 7));
  PetscCall(SgTrainerSetNumSteps(tr, 60));
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  sc.kind = SGNN_LR_CONST;
  sc.lr0  = 0.01;
  oc.lr   = sc.lr0;
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, 60));
  PetscCall(SgTrainerSetQuiet(tr, PETSC_TRUE));
  PetscCall(SgTrainerSetFromOptions(tr));
  PetscCall(SgTrainerTrain(tr));
  PetscCall(SgTrainerGetCommStats(tr, &st[0], &st[1]));
  PetscCall(SgTrainerGetShardResident(tr, shard_rest, shard_peak));
  PetscCall(SgTrainerDestroy(&tr));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m.P), out));
  sgnn_params_destroy(&m.P);
  {
    const char *names[] = {"-train_optimizer", "-train_shard", "-train_compress", "-train_sdp4bit_node_ranks"};
    for (int i = 0; i < 4; i++) PetscCall(PetscOptionsClearValue(NULL, names[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the formula: what rank r of N sends in one step with G ranks a node (weights: stage 2's 4-bit
   differences; without them, the gradient's all-to-alls only, as at stage 3) */
static double WantBytesW(int N, int r, int G, int weights)
{
  int    M = N / G, l = r % G, n = r / G;
  double b = 0;
  if (N == 1) return 0;
#define BLK(q) ((long)NP * ((q) + 1) / N - (long)NP * (q) / N)
  if (weights) b = (N - 1) * (4.0 * ((BLK(r) + 2047) / 2048) + (BLK(r) + 1) / 2);
  for (int q = 0; q < G; q++)
    for (int m = 0; m < M && q != l; m++) b += 4.0 * ((BLK(m * G + q) + 127) / 128) + BLK(m * G + q);
  for (int m = 0; m < M; m++)
    if (m != n) b += 4.0 * ((BLK(m * G + l) + 127) / 128) + (BLK(m * G + l) + 1) / 2;
#undef BLK
  return b;
}

static double WantBytes(int N, int r, int G) { return WantBytesW(N, r, G, 1); }

static PetscErrorCode ModeTrain(const char dir[])
{
  MPI_Comm    comm = PETSC_COMM_WORLD;
  PetscMPIInt size, rank;
  char        data[PETSC_MAX_PATH_LEN], opts[256];
  double      w0[NP], ws[NP], wq[NP], *all, e0, es, eq;
  PetscReal   st[4];
  Net         m;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(data, sizeof data, "%s/sdp.h5", dir));
  if (!rank) PetscCall(MlpWriteData(data, 40, "SgTrainer sdp4bit test data"));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscMalloc1(NP * size, &all));
  PetscCall(MlpNetCreate(&m, 0, 0.3));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m.P), w0));
  sgnn_params_destroy(&m.P);
  PetscCall(MlpRmse(data, 40, w0, &e0));
  PetscCall(Train(comm, data, "-train_optimizer adam -train_shard 2", ws, st));
  PetscCall(MlpRmse(data, 40, ws, &es));
  for (int pass = 0; pass < 2; pass++) {
    int  G = pass ? size : 1, same = 1;
    long blk = (long)NP * (rank + 1) / size - (long)NP * rank / size;
    if (pass && size == 1) break;
    PetscCall(PetscSNPrintf(opts, sizeof opts, "-train_optimizer adam -train_shard 2 -train_compress sdp4bit -train_sdp4bit_node_ranks %d", G));
    PetscCall(Train(comm, data, opts, wq, st));
    PetscCall(MlpRmse(data, 40, wq, &eq));
    PetscCallMPI(MPI_Allgather(wq, NP, MPI_DOUBLE, all, NP, MPI_DOUBLE, comm));
    for (int r = 0; r < size; r++) same = same && !memcmp(all + r * NP, wq, sizeof wq);
    CHECK(same, "sdp4bit, %d rank(s), %d a node: the ranks' weights differ after 60 steps (want bit for bit)", size, G);
    CHECK(st[0] == WantBytes(size, rank, G), "sdp4bit, %d rank(s), %d a node: rank %d counted %.17g bytes per step, the formula %.17g", size, G, rank, (double)st[0], WantBytes(size, rank, G));
    /* the slab, sdp4bit's float64 copy x, and of its block: the master, x's old values, the difference d */
    CHECK(st[1] == 8.0 * (2 * NP + 3 * blk), "sdp4bit: rank %d counts %g bytes of weights, want 8 x (2 x %d + 3 x its block %ld)", rank, (double)st[1], NP, blk);
    CHECK(st[2] == 16.0 * NP, "sdp4bit: rank %d counts %g bytes of gradients, want 16 x %d (the slab and its float64 copy)", rank, (double)st[2], NP);
    if (size == 1) CHECK(!memcmp(wq, ws, sizeof wq), "sdp4bit on 1 rank differs from stage 2 (want bit for bit: nothing is sent)");
    else {
      CHECK(eq < 0.7 * e0, "sdp4bit (%d a node) does not converge: rms %g from %g", G, eq, e0);
      CHECK(fabs(eq - es) <= 0.01 * es, "sdp4bit (%d a node): rms %g, stage 2 uncompressed %g: gap %.2g %%, want <= 1 %%", G, eq, es, 100 * fabs(eq - es) / es);
    }
    PetscCall(PetscPrintf(comm, "train: %d rank(s), %d a node: rms initial %.4f, stage 2 %.5f, sdp4bit %.5f (gap %+.2f %%); weights identical on all ranks: %s; bytes per step rank 0 %.0f (formula %.0f; float32 stage 2 %.0f, float64 %.0f)\n", size, G, e0, es, eq, 100 * (eq - es) / es, same ? "yes" : "NO", (double)st[0], WantBytes(size, 0, G), 2.0 * (size - 1) / size * 4 * NP, 2.0 * (size - 1) / size * 8 * NP));
  }
  /* stage 3: the gradient reduce-scattered by sdp4bit's two levels, the weights gathered exactly
     (the 4-bit differences need the previous whole weights on every rank, which stage 3 frees) */
  {
    int    same = 1;
    long   blk  = (long)NP * (rank + 1) / size - (long)NP * rank / size;
    double want = WantBytesW(size, rank, 1, 0) + (double)(size - 1) / size * NP * 8.0;
    PetscCall(Train(comm, data, "-train_optimizer adam -train_shard 3 -train_compress sdp4bit -train_sdp4bit_node_ranks 1", wq, st));
    PetscCall(MlpRmse(data, 40, wq, &eq));
    PetscCallMPI(MPI_Allgather(wq, NP, MPI_DOUBLE, all, NP, MPI_DOUBLE, comm));
    for (int r = 0; r < size; r++) same = same && !memcmp(all + r * NP, wq, sizeof wq);
    CHECK(same, "stage 3 + sdp4bit, %d rank(s): the ranks' weights differ after 60 steps (want bit for bit)", size);
    CHECK(fabs(st[0] - want) <= 1e-12 * want, "stage 3 + sdp4bit: rank %d counted %.17g bytes per step, the formula %.17g (4-bit gradient + exact gather)", rank, (double)st[0], want);
    CHECK(shard_rest[0] == 8.0 * blk && shard_rest[1] == 0, "stage 3 + sdp4bit: rank %d holds between steps weights %g (want %g) and gradients %g (want 0)", rank, (double)shard_rest[0], 8.0 * blk, (double)shard_rest[1]);
    CHECK(shard_peak[1] == (size > 1 ? 16.0 : 8.0) * NP, "stage 3 + sdp4bit: rank %d's gradients at the peak %g, want %g (the slab%s)", rank, (double)shard_peak[1], (size > 1 ? 16.0 : 8.0) * NP, size > 1 ? " and its float64 copy" : "");
    if (size == 1) CHECK(!memcmp(wq, ws, sizeof wq), "stage 3 + sdp4bit on 1 rank differs from stage 2 (want bit for bit: nothing is sent)");
    else {
      CHECK(eq < 0.7 * e0, "stage 3 + sdp4bit does not converge: rms %g from %g", eq, e0);
      CHECK(fabs(eq - es) <= 0.01 * es, "stage 3 + sdp4bit: rms %g, stage 2 uncompressed %g: gap %.2g %%, want <= 1 %%", eq, es, 100 * fabs(eq - es) / es);
    }
    if (size == 3) { /* global batch 2 on 3 ranks: one rank has no sample in every step and must still take part in every collective */
      train_batch = 2;
      PetscCall(Train(comm, data, "-train_optimizer adam -train_shard 3 -train_compress sdp4bit -train_sdp4bit_node_ranks 1", wq, st));
      train_batch = 8;
      PetscCallMPI(MPI_Allgather(wq, NP, MPI_DOUBLE, all, NP, MPI_DOUBLE, comm));
      for (int r = 0; r < size; r++) same = same && !memcmp(all + r * NP, wq, sizeof wq);
      CHECK(same, "stage 3 + sdp4bit, batch 2 on 3 ranks (one empty local batch): the ranks' weights differ");
      PetscCall(PetscPrintf(comm, "train: stage 3 + sdp4bit, batch 2 on 3 ranks (local 1 + 1 + 0): finished, weights identical on all ranks: %s\n", same ? "yes" : "NO"));
    }
    PetscCall(PetscPrintf(comm, "train: stage 3 + sdp4bit, %d rank(s), 1 a node: rms %.5f (stage 2 %.5f, gap %+.2f %%); weights identical on all ranks: %s; bytes per step rank 0 %.0f (float64 stage 3 %.0f); rank 0 between steps %g + %g bytes, gradients at the peak %g\n", size, eq, es, 100 * (eq - es) / es, same ? "yes" : "NO", (double)st[0], 2.0 * (size - 1) / size * 8 * NP, (double)shard_rest[0], (double)shard_rest[1], (double)shard_peak[1]));
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "usage: test_trainer_sdp4bit codec|train|both DIR");
  if (strcmp(argv[1], "train")) PetscCall(ModeCodec());
  if (strcmp(argv[1], "codec")) PetscCall(ModeTrain(argv[2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAILED" : "all checks passed"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
