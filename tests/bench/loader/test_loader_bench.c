/* Loader benchmark driver (tests/bench/loader/run.sh calls it; figures, not pass/fail).
     create FILE NSAMPLES NATOMS          md_frames file of synthetic frames (f32), fsync'ed
     loader FILE B E SEED BUDGET PREFETCH SEQ   SgLoader over FILE; writes the delivered sequence
                                          (uint32 ids, batch by batch) to SEQ for the other readers
     naive  FILE B E SEQ                  the same sequence read sample by sample through HDF5
                                          (one H5Dread per field per sample), into batch arrays
     curve  FILE B E SEED                 hit rate against buffer size: Belady on the loader's
                                          sequence with and without epoch ordering, and LRU
     raw    FILE B E SEQ MODE             the floor under any loader on this storage: the same rows
                                          in the same order read at their byte offsets (found through
                                          HDF5 before the clock starts) with no HDF5, no buffer, no
                                          bookkeeping. MODE pread: two threads, one pread per row,
                                          read-ahead (WILLNEED) 8 batches ahead, as the loader does;
                                          uring: one thread, a batch's reads in one io_uring
                                          submission, same read-ahead; seq: the whole file in 4 MiB
                                          O_DIRECT reads per epoch (storage bandwidth, no shuffle)
   Both readers drop FILE from the page cache (posix_fadvise DONTNEED) before every epoch, so every
   epoch's reads go to storage, and print one line "RESULT key=value ...". */
#define _GNU_SOURCE
#include "sgloader.h"
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
      st ^= st << 13;
      st ^= st >> 7;
      st ^= st << 17;
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

/* ---- raw: the storage floor under any loader (see the top comment) ---- */
typedef struct {
  int             fd, nf, B, stop, gen, done;
  int64_t         rowb[4];
  int64_t        *off[4]; /* byte offset of every row of every field */
  const uint32_t *ids;    /* this batch's sample ids */
  int64_t         k;      /* this batch's size */
  char           *dst[4];
  pthread_mutex_t m;
  pthread_cond_t  cv, dcv;
} RawCtx;

static void RawReadRange(RawCtx *c, int64_t i0, int64_t i1)
{
  for (int64_t i = i0; i < i1; i++)
    for (int f = 0; f < c->nf; f++)
      if (pread(c->fd, c->dst[f] + i * c->rowb[f], (size_t)c->rowb[f], (off_t)c->off[f][c->ids[i]]) != (ssize_t)c->rowb[f]) {
        fprintf(stderr, "raw: short read\n");
        exit(1);
      }
}

static void *RawHelper(void *arg)
{
  RawCtx *c    = (RawCtx *)arg;
  int     seen = 0;
  for (;;) {
    pthread_mutex_lock(&c->m);
    while (!c->stop && c->gen == seen) pthread_cond_wait(&c->cv, &c->m);
    if (c->stop) {
      pthread_mutex_unlock(&c->m);
      return NULL;
    }
    seen = c->gen;
    pthread_mutex_unlock(&c->m);
    RawReadRange(c, c->k / 2, c->k);
    pthread_mutex_lock(&c->m);
    c->done = seen;
    pthread_cond_signal(&c->dcv);
    pthread_mutex_unlock(&c->m);
  }
}

/* A minimal io_uring (raw system calls; the bench only): submit n reads, wait for all. */
typedef struct {
  int                  fd;
  unsigned            *stail, *smask, *sarr, *chead, *ctail, *cmask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
} Ring;

static PetscErrorCode RingInit(Ring *r, unsigned n)
{
  struct io_uring_params p;
  size_t                 sz;
  char                  *q;
  PetscFunctionBegin;
  memset(&p, 0, sizeof p);
  r->fd = (int)syscall(SYS_io_uring_setup, n, &p);
  PetscCheck(r->fd >= 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "io_uring_setup failed (%s): kernel without io_uring?", strerror(errno));
  sz = PetscMax(p.sq_off.array + p.sq_entries * sizeof(unsigned), p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe));
  PetscCheck(p.features & IORING_FEAT_SINGLE_MMAP, PETSC_COMM_SELF, PETSC_ERR_SUP, "io_uring without IORING_FEAT_SINGLE_MMAP");
  q       = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  PetscCheck(q != MAP_FAILED && r->sqes != MAP_FAILED, PETSC_COMM_SELF, PETSC_ERR_SYS, "io_uring mmap failed");
  r->stail = (unsigned *)(q + p.sq_off.tail);
  r->smask = (unsigned *)(q + p.sq_off.ring_mask);
  r->sarr = (unsigned *)(q + p.sq_off.array);
  r->chead = (unsigned *)(q + p.cq_off.head);
  r->ctail = (unsigned *)(q + p.cq_off.tail);
  r->cmask = (unsigned *)(q + p.cq_off.ring_mask);
  r->cqes  = (struct io_uring_cqe *)(q + p.cq_off.cqes);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void RingReadBatch(Ring *r, RawCtx *c)
{
  unsigned t = *r->stail, h = *r->chead, m = 0, got = 0;
  for (int64_t i = 0; i < c->k; i++)
    for (int f = 0; f < c->nf; f++, m++) {
      unsigned             ix = (t + m) & *r->smask;
      struct io_uring_sqe *s  = &r->sqes[ix];
      memset(s, 0, sizeof *s);
      s->opcode = IORING_OP_READ;
      s->fd = c->fd;
      s->addr = (uint64_t)(uintptr_t)(c->dst[f] + i * c->rowb[f]);
      s->len = (unsigned)c->rowb[f];
      s->off = (uint64_t)c->off[f][c->ids[i]];
      r->sarr[ix] = ix;
    }
  atomic_store_explicit((_Atomic unsigned *)r->stail, t + m, memory_order_release);
  if (syscall(SYS_io_uring_enter, r->fd, m, m, IORING_ENTER_GETEVENTS, NULL, 0) < 0) exit(1);
  for (;;) {
    unsigned tl = atomic_load_explicit((_Atomic unsigned *)r->ctail, memory_order_acquire);
    for (; h != tl; h++, got++)
      if (r->cqes[h & *r->cmask].res <= 0) {
        fprintf(stderr, "raw: io_uring read failed (%d)\n", r->cqes[h & *r->cmask].res);
        exit(1);
      }
    atomic_store_explicit((_Atomic unsigned *)r->chead, h, memory_order_release);
    if (got == m) break;
    if (syscall(SYS_io_uring_enter, r->fd, 0, m - got, IORING_ENTER_GETEVENTS, NULL, 0) < 0) exit(1);
  }
}

static PetscErrorCode RunRaw(const char *path, PetscInt B, PetscInt E, const char *seqpath, const char *mode)
{
  SgDataset   ds;
  const char *names[4] = {"coord", "box", "energy", "force"};
  int64_t     N, n = 0;
  uint32_t   *seq;
  FILE       *fp;
  RawCtx      c;
  pthread_t   th;
  Ring        ring;
  double      t0, t, chk = 0;
  const int   RA = 8, useq = !strcmp(mode, "seq"), uring = !strcmp(mode, "uring");

  PetscFunctionBegin;
  PetscCheck(useq || uring || !strcmp(mode, "pread"), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "raw: MODE is pread, uring or seq, not %s", mode);
  memset(&c, 0, sizeof c);
  memset(&ring, 0, sizeof ring);
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, &N));
  c.nf = 4;
  c.B = (int)B;
  for (int f = 0; f < 4; f++) { /* byte offset of every row: chunk addresses by index (untimed) */
    PetscInt idx;
    int64_t  hid, rowe;
    hid_t    d, fs, dcpl;
    hsize_t  cd[4], nc, o[4], sz;
    haddr_t  addr;
    unsigned mask;
    int64_t *base;
    PetscCall(SgDatasetFindField(ds, names[f], &idx));
    PetscCall(SgDatasetGetFieldInfo(ds, idx, NULL, NULL, NULL, NULL, &rowe));
    PetscCall(SgDatasetGetFieldHid(ds, idx, &hid));
    d = (hid_t)hid;
    fs = H5Dget_space(d);
    dcpl = H5Dget_create_plist(d);
    PetscCheck(H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 4, cd) >= 1 && H5Pget_nfilters(dcpl) == 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "raw: %s must be unfiltered chunks", names[f]);
    PetscCheck(H5Dget_num_chunks(d, fs, &nc) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "H5Dget_num_chunks");
    c.rowb[f] = rowe * (int64_t)sizeof(float);
    PetscCall(PetscCalloc1((N + cd[0] - 1) / cd[0], &base));
    for (hsize_t i = 0; i < nc; i++) {
      PetscCheck(H5Dget_chunk_info(d, fs, i, o, &mask, &addr, &sz) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "H5Dget_chunk_info");
      if (o[0] < (hsize_t)N) base[o[0] / cd[0]] = (int64_t)addr;
    }
    PetscCall(PetscMalloc1(N, &c.off[f]));
    for (int64_t r = 0; r < N; r++) c.off[f][r] = base[r / cd[0]] + (r % (int64_t)cd[0]) * c.rowb[f];
    PetscCall(PetscFree(base));
    PetscCall(PetscMalloc1(B * c.rowb[f], &c.dst[f]));
    H5Pclose(dcpl);
    H5Sclose(fs);
  }
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscMalloc1(E * N, &seq));
  fp = fopen(seqpath, "rb");
  PetscCheck(fp && fread(seq, sizeof(uint32_t), (size_t)(E * N), fp) == (size_t)(E * N), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s", seqpath);
  fclose(fp);
  c.fd = open(path, O_RDONLY | (useq ? O_DIRECT : 0));
  PetscCheck(c.fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open", path);
  pthread_mutex_init(&c.m, NULL);
  pthread_cond_init(&c.cv, NULL);
  pthread_cond_init(&c.dcv, NULL);
  if (uring) PetscCall(RingInit(&ring, (unsigned)(4 * B)));
  else if (!useq) pthread_create(&th, NULL, RawHelper, &c);
  t0 = Now();
  for (PetscInt e = 0; e < E; e++) {
    PetscCall(DropCache(path));
    if (useq) {
      const size_t S = 4 << 20;
      char        *buf;
      ssize_t      k;
      off_t        o = 0;
      PetscCheck(posix_memalign((void **)&buf, 4096, S) == 0, PETSC_COMM_SELF, PETSC_ERR_MEM, "alloc");
      while ((k = pread(c.fd, buf, S, o)) > 0) {
        o += k;
        chk += buf[0];
      }
      free(buf);
      n += N;
      continue;
    }
    for (int64_t s = 0, adv = 0; s < N; s += B) {
      for (; adv < PetscMin(N, s + (RA + 1) * B); adv++) /* announce the big rows of coming batches */
        for (int f = 0; f < 4; f++)
          if (c.rowb[f] >= 1024) (void)posix_fadvise(c.fd, (off_t)c.off[f][seq[e * N + adv]], (off_t)c.rowb[f], POSIX_FADV_WILLNEED);
      c.ids = seq + e * N + s;
      c.k = PetscMin((int64_t)B, N - s);
      if (uring) RingReadBatch(&ring, &c);
      else {
        pthread_mutex_lock(&c.m);
        c.gen++;
        pthread_cond_signal(&c.cv);
        pthread_mutex_unlock(&c.m);
        RawReadRange(&c, 0, c.k / 2);
        pthread_mutex_lock(&c.m);
        while (c.done != c.gen) pthread_cond_wait(&c.dcv, &c.m);
        pthread_mutex_unlock(&c.m);
      }
      chk += ((float *)c.dst[2])[0];
      n += c.k;
    }
  }
  t = Now() - t0;
  if (!uring && !useq) {
    pthread_mutex_lock(&c.m);
    c.stop = 1;
    pthread_cond_signal(&c.cv);
    pthread_mutex_unlock(&c.m);
    pthread_join(th, NULL);
  }
  close(c.fd);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "RESULT method=raw_%s samples=%lld seconds=%.3f rate=%.1f check=%g\n", mode, (long long)n, t, n / t, chk));
  for (int f = 0; f < 4; f++) {
    PetscCall(PetscFree(c.off[f]));
    PetscCall(PetscFree(c.dst[f]));
  }
  PetscCall(PetscFree(seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "usage: see the comment at the top of %s", __FILE__);
  if (!strcmp(argv[1], "create")) PetscCall(Create(argv[2], atoll(argv[3]), atoi(argv[4])));
  else if (!strcmp(argv[1], "loader")) PetscCall(RunLoader(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10), atoll(argv[6]), atoi(argv[7]), argv[8]));
  else if (!strcmp(argv[1], "naive")) PetscCall(RunNaive(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]));
  else if (!strcmp(argv[1], "raw")) PetscCall(RunRaw(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argv[6]));
  else if (!strcmp(argv[1], "curve")) PetscCall(Curve(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10)));
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "unknown mode %s", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
