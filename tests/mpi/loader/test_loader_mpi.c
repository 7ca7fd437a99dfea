/* SgLoader on several ranks (run under $MPIEXEC). Exact checks unless stated.
   Data: 45 samples in two files (24 + 21) shared by all ranks; global batch 8; 4 epochs.
   For buffers of 0, 6 and 20 samples per rank, and I/O through MPI-IO or one POSIX handle per
   rank, with and without the prefetch thread:
   1. in every global batch the union of the ranks' samples is exactly that batch of the sequence a
      one-rank loader with the same seed delivers (as a set), each sample on exactly one rank;
      over an epoch every sample appears exactly once; the reported counts match what each rank got;
   2. every delivered row equals a plain read of its id (bytes);
   3. "gradient" exactness: the batch mean of a per-sample quantity computed as
      allreduce(local sum) / nglobal equals the one-rank batch mean to 1e-12 relative (only the
      summation order differs);
   4. hits summed over ranks equal the plan's, and with a buffer the hit-first assignment gives hits.
   5. spatial shards: every rank reads only its block of each sample of x (rows [3r/P, 3(r+1)/P) of
      the 3 and columns 1..3 of the 5), with a loader of its own (a data group of one, as the spatial
      ranks of a trainer's process grid have) and a buffer of 6 samples: all ranks get the same ids in
      every batch (the plan counts whole samples, not the shard), the same capacity, and each delivered
      block equals that block of a plain read; the unsharded field y keeps its raw reads. */
#include "sgloader.h"
#include "../../unit/loader/loader_testdata.h"

#define N1 24
#define N2 21
#define N  (N1 + N2)
#define E  4
#define B  8

static double Quantity(const double *x)
{
  double s = 0;
  for (int e = 0; e < TD_NX * TD_NY; e++) s += x[e] * (1 + 0.01 * e);
  return s;
}

/* One-rank reference: the batch means and the global batch contents. */
static PetscErrorCode Reference(const char *const files[], double *mean, uint32_t *seq)
{
  SgLoader      l;
  SgLoaderBatch b;
  PetscBool     done;
  PetscInt      g = 0;
  int64_t       k = 0;

  PetscFunctionBegin;
  PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
  PetscCall(SgLoaderSetFiles(l, 2, files));
  PetscCall(SgLoaderSetBatchSize(l, B));
  PetscCall(SgLoaderSetEpochs(l, E));
  PetscCall(SgLoaderSetSeed(l, 2024));
  PetscCall(SgLoaderSetBufferBytes(l, 0));
  PetscCall(SgLoaderSetPrefetch(l, 0));
  PetscCall(SgLoaderSetUp(l));
  for (;;) {
    double s = 0;
    PetscCall(SgLoaderNext(l, &b, &done));
    if (done) break;
    for (PetscInt i = 0; i < b.nlocal; i++) {
      s += Quantity((const double *)b.data[0] + i * TD_NX * TD_NY);
      seq[k++] = (uint32_t)b.ids[i];
    }
    mean[g++] = s / b.nglobal;
  }
  PetscCall(SgLoaderDestroy(&l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CmpU32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  char        f1[PETSC_MAX_PATH_LEN], f2[PETSC_MAX_PATH_LEN];
  const char *files[2] = {f1, f2};
  PetscMPIInt rank, size;
  double      refmean[E * ((N + B - 1) / B)];
  uint32_t    refseq[E * N];
  int64_t     slot = TD_NX * TD_NY * 8 + 4, budgets[3] = {0, 6, 20};
  SgDataset   ds[2];
  int         provided;

  /* MPI-IO from the loader's I/O thread needs full thread support; ask for it. */
  PETSC_MPI_THREAD_REQUIRED = MPI_THREAD_MULTIPLE;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Query_thread(&provided));
  snprintf(f1, sizeof f1, "%s/mpi_a.h5", argc > 1 ? argv[1] : ".");
  snprintf(f2, sizeof f2, "%s/mpi_b.h5", argc > 1 ? argv[1] : ".");
  if (!rank) {
    PetscCall(TdCreate(f1, 0, N1, 4));
    PetscCall(TdCreate(f2, N1, N2, 4));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d ranks, MPI thread level %s\n", size, provided == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "below MULTIPLE"));
  PetscCall(Reference(files, refmean, refseq));
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, f1, SG_DATASET_READ, &ds[0]));
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, f2, SG_DATASET_READ, &ds[1]));

  for (int bi = 0; bi < 3; bi++) {
    for (int mode = 0; mode < 3; mode++) { /* 0: raw MPI-IO reads + thread, 1: raw POSIX + thread, 2: parallel HDF5 H5Dread, no thread */
      SgLoader      l;
      SgLoaderBatch b;
      PetscBool     done;
      PetscInt      g = 0;
      int           seen[N];
      int64_t       hits, planned, allhits, allplanned;
      double        maxrel = 0;
      PetscInt      maximb = 0;
      PetscBool     usedmpiio;

      PetscCall(SgLoaderCreate(PETSC_COMM_WORLD, &l));
      PetscCall(SgLoaderSetFiles(l, 2, files));
      PetscCall(SgLoaderSetBatchSize(l, B));
      PetscCall(SgLoaderSetEpochs(l, E));
      PetscCall(SgLoaderSetSeed(l, 2024));
      PetscCall(SgLoaderSetBufferBytes(l, budgets[bi] * slot));
      PetscCall(SgLoaderSetPrefetch(l, mode == 2 ? 0 : 2));
      PetscCall(SgLoaderSetMPIIO(l, mode == 1 ? PETSC_FALSE : PETSC_TRUE));
      PetscCall(SgLoaderSetRawReads(l, mode == 2 ? PETSC_FALSE : PETSC_TRUE)); /* mode 2: parallel HDF5 H5Dread */
      PetscCall(SgLoaderSetUp(l));
      PetscCall(SgLoaderGetIOMode(l, &usedmpiio, NULL));
      if (bi == 1 && mode == 0) PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_WORLD));
      for (;;) {
        PetscMPIInt cnt[64], displ[64];
        uint32_t    all[B], mine[B], want[B];
        double      s = 0, gs;
        PetscCall(SgLoaderNext(l, &b, &done));
        if (done) break;
        if (b.batch == 0) PetscCall(PetscArrayzero(seen, N));
        PetscCheck(b.nlocal == b.counts[rank], PETSC_COMM_SELF, PETSC_ERR_PLIB, "nlocal != counts[rank]");
        {
          PetscInt tot = 0, mx = 0, mn = B;
          for (int r = 0; r < size; r++) tot += b.counts[r], mx = PetscMax(mx, b.counts[r]), mn = PetscMin(mn, b.counts[r]);
          PetscCheck(tot == b.nglobal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "counts sum to %d, batch has %d", (int)tot, (int)b.nglobal);
          maximb = PetscMax(maximb, mx - mn);
        }
        for (PetscInt i = 0; i < b.nlocal; i++) {
          int64_t id = b.ids[i], f = id < N1 ? 0 : 1;
          double  x[TD_NX * TD_NY];
          mine[i] = (uint32_t)id;
          PetscCall(SgDatasetReadField(ds[f], "x", id - (f ? N1 : 0), 1, SG_DTYPE_F64, x));
          PetscCheck(!memcmp(x, (const double *)b.data[0] + i * TD_NX * TD_NY, sizeof x), PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld: bytes differ from a plain read", (long long)id);
          s += Quantity(x);
        }
        for (int r = 0; r < size; r++) {
          cnt[r] = (PetscMPIInt)b.counts[r];
          displ[r] = r ? displ[r - 1] + cnt[r - 1] : 0;
        }
        PetscCallMPI(MPI_Allgatherv(mine, (PetscMPIInt)b.nlocal, MPI_UINT32_T, all, cnt, displ, MPI_UINT32_T, PETSC_COMM_WORLD));
        PetscCall(PetscArraycpy(want, refseq + (int64_t)b.epoch * N + (int64_t)b.batch * B, b.nglobal));
        qsort(all, (size_t)b.nglobal, sizeof(uint32_t), CmpU32);
        qsort(want, (size_t)b.nglobal, sizeof(uint32_t), CmpU32);
        PetscCheck(!memcmp(all, want, sizeof(uint32_t) * b.nglobal), PETSC_COMM_SELF, PETSC_ERR_PLIB, "batch %d: the ranks' samples are not the seed's batch", (int)g);
        for (PetscInt i = 0; i < b.nglobal; i++) seen[all[i]]++;
        if (b.batch == (N + B - 1) / B - 1)
          for (int q = 0; q < N; q++) PetscCheck(seen[q] == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "epoch %d: sample %d seen %d times over all ranks", (int)b.epoch, q, seen[q]);
        PetscCallMPI(MPI_Allreduce(&s, &gs, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
        maxrel = PetscMax(maxrel, PetscAbsReal(gs / b.nglobal - refmean[g]) / PetscAbsReal(refmean[g]));
        g++;
      }
      PetscCheck(maxrel < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "batch mean differs from one rank by %g (relative)", maxrel);
      PetscCall(SgLoaderGetStats(l, &hits, NULL, NULL, NULL, NULL));
      PetscCall(SgLoaderGetPlannedHits(l, &planned, NULL));
      PetscCheck(hits == planned, PETSC_COMM_SELF, PETSC_ERR_PLIB, "rank %d: %lld hits, plan said %lld", rank, (long long)hits, (long long)planned);
      PetscCallMPI(MPI_Allreduce(&hits, &allhits, 1, MPI_INT64_T, MPI_SUM, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Allreduce(&planned, &allplanned, 1, MPI_INT64_T, MPI_SUM, PETSC_COMM_WORLD));
      PetscCheck(budgets[bi] == 0 || allhits > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "buffer of %lld samples per rank but no hits", (long long)budgets[bi]);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   buffer %2lld/rank, %-14s: batches = seed's, once per epoch, bytes = plain reads, mean rel. diff %.1e; hits %3lld of %d; max local imbalance %d\n", (long long)budgets[bi],
                            mode == 0 ? (usedmpiio ? "MPI-IO+thread" : "POSIX+thread") : mode == 1 ? "POSIX+thread" : "pHDF5 H5Dread", maxrel, (long long)allhits, E * N, (int)maximb));
      PetscCall(SgLoaderDestroy(&l));
    }
  }
  { /* 5. shards */
    SgLoader      l;
    SgLoaderBatch b;
    PetscBool     done;
    PetscInt      start[2] = {TD_NX * rank / size, 1}, count[2] = {TD_NX * (rank + 1) / size - TD_NX * rank / size, 3}, nb = 0;
    int64_t       cap, capmin, capmax, hits, planned;
    PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
    PetscCall(SgLoaderSetFiles(l, 2, files));
    PetscCall(SgLoaderSetBatchSize(l, B));
    PetscCall(SgLoaderSetEpochs(l, E));
    PetscCall(SgLoaderSetSeed(l, 2024));
    PetscCall(SgLoaderSetBufferBytes(l, 6 * slot));
    PetscCall(SgLoaderSetFieldShard(l, "x", 2, start, count));
    PetscCall(SgLoaderSetUp(l));
    PetscCall(SgLoaderGetCapacity(l, &cap));
    PetscCallMPI(MPI_Allreduce(&cap, &capmin, 1, MPI_INT64_T, MPI_MIN, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(&cap, &capmax, 1, MPI_INT64_T, MPI_MAX, PETSC_COMM_WORLD));
    PetscCheck(capmin == capmax && cap == 6, PETSC_COMM_SELF, PETSC_ERR_PLIB, "shards: buffer of %lld samples on rank %d (expected 6 on every rank)", (long long)cap, rank);
    if (!rank) PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_SELF));
    for (;;) {
      uint64_t h = 1469598103934665603ULL, hmin, hmax;
      PetscCall(SgLoaderNext(l, &b, &done));
      if (done) break;
      for (PetscInt i = 0; i < b.nlocal; i++) {
        int64_t id = b.ids[i], f = id < N1 ? 0 : 1;
        double  x[TD_NX * TD_NY];
        h = (h ^ (uint64_t)id) * 1099511628211ULL;
        PetscCall(SgDatasetReadField(ds[f], "x", id - (f ? N1 : 0), 1, SG_DTYPE_F64, x));
        for (PetscInt a = 0; a < count[0]; a++)
          for (PetscInt c = 0; c < count[1]; c++) {
            double got = ((const double *)b.data[0])[(i * count[0] + a) * count[1] + c];
            PetscCheck(got == x[(start[0] + a) * TD_NY + start[1] + c], PETSC_COMM_SELF, PETSC_ERR_PLIB, "shard of sample %lld: element (%d, %d) differs from a plain read", (long long)id, (int)(start[0] + a), (int)(start[1] + c));
          }
        PetscCheck(((const int32_t *)b.data[1])[i] == 7 * id + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "shard run: y of sample %lld wrong", (long long)id);
      }
      PetscCallMPI(MPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, PETSC_COMM_WORLD));
      PetscCheck(hmin == hmax, PETSC_COMM_SELF, PETSC_ERR_PLIB, "shards: batch %d holds other samples on rank %d", (int)nb, rank);
      nb++;
    }
    PetscCall(SgLoaderGetStats(l, &hits, NULL, NULL, NULL, NULL));
    PetscCall(SgLoaderGetPlannedHits(l, &planned, NULL));
    PetscCheck(hits == planned && hits > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "shards: rank %d: %lld hits, plan said %lld", rank, (long long)hits, (long long)planned);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   shards on %d ranks: %d batches, the same ids on every rank, blocks = plain reads, buffer 6 samples everywhere, %lld hits = plan\n", size, (int)nb, (long long)hits));
    PetscCall(SgLoaderDestroy(&l));
  }
  PetscCall(SgDatasetClose(&ds[0]));
  PetscCall(SgDatasetClose(&ds[1]));
  PetscCall(PetscFinalize());
  return 0;
}
