/* Loader benchmark driver (tests/bench/loader/run.sh calls it; figures, not pass/fail).
     create FILE NSAMPLES NATOMS          md_frames file of synthetic frames (f32), fsync'ed
     loader FILE B E SEED BUDGET PREFETCH SEQ   SgLoader over FILE; writes the delivered sequence
                                          (uint32 ids, batch by batch) to SEQ for the other readers
     naive  FILE B E SEQ                  the same sequence read sample by sample through HDF5
                                          (one H5Dread per field per sample), into batch arrays
     curve  FILE B E SEED                 hit rate against buffer size: Belady on the loader's
                                          sequence with and without epoch ordering, and LRU
   Both readers drop FILE from the page cache (posix_fadvise DONTNEED) before every epoch, so every
   epoch's reads go to storage, and print one line "RESULT key=value ...". */
#define _GNU_SOURCE
#include "sgloader.h"
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>
#include <time.h>

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static PetscErrorCode DropCache(const char *path)
{
  int fd;
  PetscFunctionBegin;
  if (getenv("SG_BENCH_WARM")) PetscFunctionReturn(PETSC_SUCCESS); /* diagnostics only: keep the page cache */
  fd = open(path, O_RDONLY);
  PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open", path);
  PetscCheck(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "posix_fadvise(DONTNEED) failed");
  close(fd);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Create(const char *path, int64_t n, PetscInt natoms)
{
  SgDataset   ds;
  PetscInt   *type;
  const char *tm[2] = {"O", "H"};
  const int64_t chunk = 1024;
  float      *c, *f, *b, *e;
  uint64_t    st = 88172645463325252ull;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(natoms, &type));
  for (PetscInt i = 0; i < natoms; i++) type[i] = i % 3 ? 1 : 0;
  PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, path, PETSC_TRUE, natoms, type, 2, tm, SG_DTYPE_F32, PETSC_FALSE, -1, NULL, &ds));
  PetscCall(PetscMalloc4(chunk * natoms * 3, &c, chunk * natoms * 3, &f, chunk * 9, &b, chunk, &e));
  for (int64_t s = 0; s < n; s += chunk) {
    int64_t k = PetscMin(chunk, n - s);
    for (int64_t i = 0; i < k * natoms * 3; i++) {
      st ^= st << 13, st ^= st >> 7, st ^= st << 17;
      c[i] = (float)(st >> 40) * 1e-6f;
      f[i] = (float)((st >> 16) & 0xffffff) * 1e-6f;
    }
    for (int64_t i = 0; i < k; i++) {
      e[i] = (float)(s + i);
      for (int j = 0; j < 9; j++) b[i * 9 + j] = j % 4 ? 0.0f : 12.4f;
    }
    PetscCall(SgDatasetAppendBegin(ds, k));
    PetscCall(SgDatasetAppendField(ds, "coord", SG_DTYPE_F32, c));
    PetscCall(SgDatasetAppendField(ds, "box", SG_DTYPE_F32, b));
    PetscCall(SgDatasetAppendField(ds, "energy", SG_DTYPE_F32, e));
    PetscCall(SgDatasetAppendField(ds, "force", SG_DTYPE_F32, f));
    PetscCall(SgDatasetAppendCommit(ds));
  }
  PetscCall(SgDatasetClose(&ds));
  {
    int fd = open(path, O_RDONLY);
    fsync(fd); /* dirty pages cannot be dropped: make them clean */
    close(fd);
  }
  PetscCall(PetscFree4(c, f, b, e));
  PetscCall(PetscFree(type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunLoader(const char *path, PetscInt B, PetscInt E, uint64_t seed, int64_t budget, PetscInt prefetch, const char *seqpath)
{
  SgLoader        l;
  SgLoaderBatch   b;
  PetscBool       done;
  const char     *files[1] = {path};
  PetscInt        epoch = -1;
  int64_t         n = 0, hits, misses, bytes, reads, runs, cap, opt, N;
  double          t0, t, chk = 0;
  FILE           *fp;
  const uint32_t *seq;

  PetscFunctionBegin;
  PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
  PetscCall(SgLoaderSetFiles(l, 1, files));
  PetscCall(SgLoaderSetBatchSize(l, B));
  PetscCall(SgLoaderSetEpochs(l, E));
  PetscCall(SgLoaderSetSeed(l, seed));
  PetscCall(SgLoaderSetBufferBytes(l, budget));
  PetscCall(SgLoaderSetPrefetch(l, prefetch));
  PetscCall(SgLoaderSetFromOptions(l));
  t0 = Now();
  PetscCall(DropCache(path));
  PetscCall(SgLoaderSetUp(l));
  for (;;) {
    PetscCall(SgLoaderNext(l, &b, &done));
    if (done) break;
    if (b.epoch != epoch) {
      if (epoch >= 0) PetscCall(DropCache(path));
      if (epoch >= 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "EPOCH %d ends at %.3f s\n", (int)epoch, Now() - t0));
      epoch = b.epoch;
    }
    chk += ((const float *)b.data[2])[0]; /* energy of the first sample: touch the data */
    n += b.nlocal;
  }
  t = Now() - t0;
  PetscCall(SgLoaderGetStats(l, &hits, &misses, &bytes, &reads, &runs));
  PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_SELF));
  PetscCall(SgLoaderGetCapacity(l, &cap));
  PetscCall(SgLoaderGetNumSamples(l, &N));
  PetscCall(SgLoaderGetSequence(l, &seq, NULL));
  PetscCall(SgBeladyHits(E * N, seq, N, cap, &opt));
  fp = fopen(seqpath, "wb");
  PetscCheck(fp && fwrite(seq, sizeof(uint32_t), (size_t)(E * N), fp) == (size_t)(E * N), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s", seqpath);
  fclose(fp);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "RESULT method=loader samples=%lld seconds=%.3f rate=%.1f hits=%lld belady=%lld hitrate=%.5f beladyrate=%.5f capacity=%lld mbread=%.1f reads=%lld runs=%lld check=%g\n", (long long)n, t, n / t, (long long)hits,
                        (long long)opt, (double)hits / n, (double)opt / n, (long long)cap, bytes / 1048576.0, (long long)reads, (long long)runs, chk));
  PetscCall(SgLoaderDestroy(&l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Plain HDF5: per sample, one hyperslab read per field into the batch arrays. */
static PetscErrorCode RunNaive(const char *path, PetscInt B, PetscInt E, const char *seqpath)
{
  SgDataset   ds;
  int64_t     N, n = 0, rowelems[4];
  const char *names[4] = {"coord", "box", "energy", "force"};
  hid_t       dset[4], fs[4], ms[4];
  float      *buf[4];
  uint32_t   *seq;
  FILE       *fp;
  double      t0, t, chk = 0;
  PetscInt    idx;

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, &N));
  PetscCall(PetscMalloc1(E * N, &seq));
  fp = fopen(seqpath, "rb");
  PetscCheck(fp && fread(seq, sizeof(uint32_t), (size_t)(E * N), fp) == (size_t)(E * N), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s", seqpath);
  fclose(fp);
  for (int f = 0; f < 4; f++) {
    int64_t hid;
    hsize_t m;
    PetscCall(SgDatasetFindField(ds, names[f], &idx));
    PetscCall(SgDatasetGetFieldInfo(ds, idx, NULL, NULL, NULL, NULL, &rowelems[f]));
    PetscCall(SgDatasetGetFieldHid(ds, idx, &hid));
    dset[f] = (hid_t)hid;
    fs[f]   = H5Dget_space(dset[f]);
    m       = (hsize_t)rowelems[f];
    ms[f]   = H5Screate_simple(1, &m, NULL);
    PetscCall(PetscMalloc1(B * rowelems[f], &buf[f]));
  }
  t0 = Now();
  for (PetscInt e = 0; e < E; e++) {
    PetscCall(DropCache(path));
    for (int64_t s = 0; s < N; s += B) {
      int64_t k = PetscMin((int64_t)B, N - s);
      for (int64_t i = 0; i < k; i++) {
        for (int f = 0; f < 4; f++) {
          hsize_t start[3] = {seq[e * N + s + i], 0, 0}, count[3] = {1, 0, 0};
          int     rank = H5Sget_simple_extent_ndims(fs[f]);
          hsize_t dims[3];
          H5Sget_simple_extent_dims(fs[f], dims, NULL);
          for (int d = 1; d < rank; d++) count[d] = dims[d];
          PetscCheck(H5Sselect_hyperslab(fs[f], H5S_SELECT_SET, start, NULL, count, NULL) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "select");
          PetscCheck(H5Dread(dset[f], H5T_NATIVE_FLOAT, ms[f], fs[f], H5P_DEFAULT, buf[f] + i * rowelems[f]) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "read");
        }
      }
      chk += buf[2][0];
      n += k;
    }
  }
  t = Now() - t0;
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "RESULT method=naive samples=%lld seconds=%.3f rate=%.1f check=%g\n", (long long)n, t, n / t, chk));
  for (int f = 0; f < 4; f++) {
    H5Sclose(fs[f]);
    H5Sclose(ms[f]);
    PetscCall(PetscFree(buf[f]));
  }
  PetscCall(PetscFree(seq));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LRU with insertion on every miss: what a plain "keep recent samples" cache would get. */
static int64_t LRUHits(int64_t T, const uint32_t *seq, int64_t N, int64_t cap)
{
  int32_t *prev = malloc(sizeof(int32_t) * N), *next = malloc(sizeof(int32_t) * N);
  char    *in   = calloc((size_t)N, 1);
  int32_t  head = -1, tail = -1; /* head: most recent */
  int64_t  held = 0, hits = 0;
  for (int64_t t = 0; t < T && cap > 0; t++) {
    int32_t s = (int32_t)seq[t];
    if (in[s]) {
      hits++;
      if (head == s) continue;
      next[prev[s]] = next[s]; /* unlink */
      if (next[s] >= 0) prev[next[s]] = prev[s];
      else tail = prev[s];
    } else if (held == cap) {
      int32_t v = tail;
      in[v]     = 0;
      tail      = prev[v];
      if (tail >= 0) next[tail] = -1;
      else head = -1;
    } else held++;
    in[s]   = 1;
    prev[s] = -1;
    next[s] = head;
    if (head >= 0) prev[head] = s;
    head = s;
    if (tail < 0) tail = s;
  }
  free(prev);
  free(next);
  free(in);
  return hits;
}

static PetscErrorCode Curve(const char *path, PetscInt B, PetscInt E, uint64_t seed)
{
  const double    fr[] = {0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0};
  const char     *files[1] = {path};
  const uint32_t *seq[2];
  SgLoader        l[2];
  int64_t         N;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) { /* k = 1: order window 1, which leaves the drawn epoch order */
    PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l[k]));
    PetscCall(SgLoaderSetFiles(l[k], 1, files));
    PetscCall(SgLoaderSetBatchSize(l[k], B));
    PetscCall(SgLoaderSetEpochs(l[k], E));
    PetscCall(SgLoaderSetSeed(l[k], seed));
    PetscCall(SgLoaderSetBufferBytes(l[k], 0));
    PetscCall(SgLoaderSetPrefetch(l[k], 0));
    if (k) PetscCall(SgLoaderSetOrderWindow(l[k], 1));
    PetscCall(SgLoaderSetUp(l[k]));
    PetscCall(SgLoaderGetSequence(l[k], &seq[k], NULL));
  }
  PetscCall(SgLoaderGetNumSamples(l[0], &N));
  for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
    int64_t cap = (int64_t)(fr[i] * N), h0, h1;
    PetscCall(SgBeladyHits(E * N, seq[0], N, cap, &h0));
    PetscCall(SgBeladyHits(E * N, seq[1], N, cap, &h1));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "CURVE frac=%.2f belady_ordered=%.5f belady_unordered=%.5f lru=%.5f bound=%.5f\n", fr[i], (double)h0 / (E * N), (double)h1 / (E * N), (double)LRUHits(E * N, seq[0], N, cap) / (E * N),
                          (double)PetscMin((E - 1) * cap, (E - 1) * N) / (E * N)));
  }
  PetscCall(SgLoaderDestroy(&l[0]));
  PetscCall(SgLoaderDestroy(&l[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "usage: see the comment at the top of %s", __FILE__);
  if (!strcmp(argv[1], "create")) PetscCall(Create(argv[2], atoll(argv[3]), atoi(argv[4])));
  else if (!strcmp(argv[1], "loader")) PetscCall(RunLoader(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10), atoll(argv[6]), atoi(argv[7]), argv[8]));
  else if (!strcmp(argv[1], "naive")) PetscCall(RunNaive(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]));
  else if (!strcmp(argv[1], "curve")) PetscCall(Curve(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10)));
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "unknown mode %s", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
