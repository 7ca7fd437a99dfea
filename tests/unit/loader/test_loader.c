/* SgLoader guarantees on one rank (exact checks, no tolerances: the loader moves bytes).
   Data: 37 samples in two files (20 + 17), fields x f64[3,5] and y i32, chunks of 4 rows.
   1. every epoch delivers every sample exactly once;
   2. the delivered sequence is the same for buffer budgets of 0, 5, 13 and 37 samples, with and
      without the prefetch thread (it depends only on the seed); another seed gives another one;
   3. buffer hits counted by the I/O side == hits the plan predicted == Belady's MIN hits on the
      delivered sequence (independent implementation, SgBeladyHits);
   4. every delivered row is byte-identical to a plain per-sample read of that id, and its values
      encode the id the loader reports;
   5. with no buffer and a batch of a whole epoch, the sorted misses form one run per file, so the
      I/O side makes exactly (2 files x 2 fields) hyperslab reads per epoch through H5Dread, and one
      raw read per piece of a run inside one chunk on the raw path.
   6. a run resumed at batch g0 (SgLoaderSetStartBatch) continues exactly like an uninterrupted one.
   Runs with prefetch use raw reads, runs without use H5Dread, so both paths are checked. */
#include "sgloader.h"
#include "loader_testdata.h"

#define N1 20
#define N2 17
#define N  (N1 + N2)
#define E  5

typedef struct {
  uint32_t ids[E * N];
  int64_t  hits, misses, bytes, reads, runs, planned, cap;
} Result;

static PetscErrorCode Run(const char *const files[], PetscInt B, uint64_t seed, int64_t budget_samples, PetscInt prefetch, PetscBool raw, Result *r)
{
  SgLoader      l;
  SgLoaderBatch b;
  PetscBool     done;
  SgDataset     ds[2];
  int64_t       k = 0, slot = (TD_NX * TD_NY * 8 + 4);
  int           seen[N];

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[0], SG_DATASET_READ, &ds[0]));
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[1], SG_DATASET_READ, &ds[1]));
  PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
  PetscCall(SgLoaderSetFiles(l, 2, files));
  PetscCall(SgLoaderSetBatchSize(l, B));
  PetscCall(SgLoaderSetEpochs(l, E));
  PetscCall(SgLoaderSetSeed(l, seed));
  PetscCall(SgLoaderSetBufferBytes(l, budget_samples * slot + slot / 2));
  PetscCall(SgLoaderSetPrefetch(l, prefetch));
  PetscCall(SgLoaderSetRawReads(l, raw));
  PetscCall(SgLoaderSetIOThreads(l, prefetch ? 3 : 1)); /* with prefetch: two helper threads share the reads */
  PetscCall(SgLoaderSetReadAhead(l, prefetch ? 4 : 0));   /* and the kernel is told about misses 4 batches ahead */
  PetscCall(SgLoaderSetUp(l));
  PetscCall(SgLoaderGetCapacity(l, &r->cap));
  PetscCheck(r->cap == budget_samples, PETSC_COMM_SELF, PETSC_ERR_PLIB, "capacity %lld, expected %lld", (long long)r->cap, (long long)budget_samples);
  for (;;) {
    PetscCall(SgLoaderNext(l, &b, &done));
    if (done) break;
    PetscCheck(b.nlocal == b.nglobal && b.counts[0] == b.nlocal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "one rank must get the whole batch");
    if (b.batch == 0) PetscCall(PetscArrayzero(seen, N));
    for (PetscInt i = 0; i < b.nlocal; i++) {
      int64_t id = b.ids[i], f = id < N1 ? 0 : 1, loc = id - (f ? N1 : 0);
      double  x[TD_NX * TD_NY];
      int32_t y;
      const double  *dx = (const double *)b.data[0] + i * TD_NX * TD_NY;
      const int32_t *dy = (const int32_t *)b.data[1] + i;
      PetscCheck(id >= 0 && id < N, PETSC_COMM_SELF, PETSC_ERR_PLIB, "id %lld out of range", (long long)id);
      seen[id]++;
      r->ids[k++] = (uint32_t)id;
      PetscCall(SgDatasetReadField(ds[f], "x", loc, 1, SG_DTYPE_F64, x));
      PetscCall(SgDatasetReadField(ds[f], "y", loc, 1, SG_DTYPE_I32, &y));
      PetscCheck(!memcmp(x, dx, sizeof x) && y == *dy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld: delivered bytes differ from a plain read", (long long)id);
      for (int e = 0; e < TD_NX * TD_NY; e++) PetscCheck(dx[e] == TdX(id, e), PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld: value %d is %g, not the id's", (long long)id, e, dx[e]);
      PetscCheck(*dy == 7 * id + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld: y", (long long)id);
    }
    if (b.batch == (N + B - 1) / B - 1)
      for (int s = 0; s < N; s++) PetscCheck(seen[s] == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "epoch %d: sample %d delivered %d times", (int)b.epoch, s, seen[s]);
  }
  PetscCheck(k == E * N, PETSC_COMM_SELF, PETSC_ERR_PLIB, "delivered %lld samples, expected %d", (long long)k, E * N);
  PetscCall(SgLoaderGetStats(l, &r->hits, &r->misses, &r->bytes, &r->reads, &r->runs));
  PetscCall(SgLoaderGetPlannedHits(l, &r->planned, NULL));
  PetscCheck(r->bytes == r->misses * slot, PETSC_COMM_SELF, PETSC_ERR_PLIB, "bytes read %lld != misses x sample bytes", (long long)r->bytes);
  if (budget_samples == 13 && prefetch) PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_SELF));
  PetscCall(SgLoaderDestroy(&l));
  PetscCall(SgDatasetClose(&ds[0]));
  PetscCall(SgDatasetClose(&ds[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 6. resume: a loader started at batch g0 delivers exactly the batches (ids, bytes, epoch/batch
   numbers) of an uninterrupted run from g0 on, and makes exactly the hits that run made after g0. */
static PetscErrorCode Resume(const char *const files[], PetscInt g0)
{
  SgLoader      l;
  SgLoaderBatch b;
  PetscBool     done;
  const int64_t slot = TD_NX * TD_NY * 8 + 4, xb = TD_NX * TD_NY * 8;
  char         *ref;
  int64_t      *rid, k = 0, h0 = 0, hall, hres;
  PetscInt     *rep, *rbt, g = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(E * N * xb, &ref, E * N, &rid, 64, &rep, 64, &rbt));
  for (int pass = 0; pass < 2; pass++) {
    PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
    PetscCall(SgLoaderSetFiles(l, 2, files));
    PetscCall(SgLoaderSetBatchSize(l, 8));
    PetscCall(SgLoaderSetEpochs(l, E));
    PetscCall(SgLoaderSetSeed(l, 11));
    PetscCall(SgLoaderSetBufferBytes(l, 13 * slot));
    PetscCall(SgLoaderSetPrefetch(l, pass ? 2 : 0));
    if (pass) PetscCall(SgLoaderSetStartBatch(l, g0));
    PetscCall(SgLoaderSetUp(l));
    g = pass ? g0 : 0;
    for (;;) {
      PetscCall(SgLoaderNext(l, &b, &done));
      if (done) break;
      if (!pass) {
        if (g == g0) PetscCall(SgLoaderGetStats(l, &h0, NULL, NULL, NULL, NULL)); /* hits of batches < g0 and g0 itself */
        rep[g] = b.epoch;
        rbt[g] = b.batch;
        for (PetscInt i = 0; i < b.nlocal; i++, k++) {
          rid[k] = b.ids[i];
          memcpy(ref + k * xb, (const char *)b.data[0] + i * xb, xb);
        }
      } else {
        int64_t off = 0;
        for (PetscInt q = 0; q < g; q++) off += (q % 5 == 4) ? N - 4 * 8 : 8; /* batches of 8, last of an epoch 5 */
        PetscCheck(b.epoch == rep[g] && b.batch == rbt[g], PETSC_COMM_SELF, PETSC_ERR_PLIB, "resumed batch %d numbered differently", (int)g);
        for (PetscInt i = 0; i < b.nlocal; i++)
          PetscCheck(b.ids[i] == rid[off + i] && !memcmp(ref + (off + i) * xb, (const char *)b.data[0] + i * xb, xb), PETSC_COMM_SELF, PETSC_ERR_PLIB, "resumed batch %d sample %d differs", (int)g, (int)i);
      }
      g++;
    }
    if (!pass) PetscCall(SgLoaderGetStats(l, &hall, NULL, NULL, NULL, NULL));
    else PetscCall(SgLoaderGetStats(l, &hres, NULL, NULL, NULL, NULL));
    PetscCall(SgLoaderDestroy(&l));
  }
  /* h0 counts batches 0..g0 (the stats include the batch just delivered); the resumed run's hits
     must equal those of batches g0.. in the full run */
  {
    SgLoader l2;
    int64_t  hbefore = 0;
    SgLoaderBatch bb;
    PetscBool     dd;
    PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l2));
    PetscCall(SgLoaderSetFiles(l2, 2, files));
    PetscCall(SgLoaderSetBatchSize(l2, 8));
    PetscCall(SgLoaderSetEpochs(l2, E));
    PetscCall(SgLoaderSetSeed(l2, 11));
    PetscCall(SgLoaderSetBufferBytes(l2, 13 * slot));
    PetscCall(SgLoaderSetPrefetch(l2, 0));
    PetscCall(SgLoaderSetUp(l2));
    for (PetscInt q = 0; q < g0; q++) PetscCall(SgLoaderNext(l2, &bb, &dd));
    PetscCall(SgLoaderGetStats(l2, &hbefore, NULL, NULL, NULL, NULL));
    PetscCall(SgLoaderDestroy(&l2));
    PetscCheck(hres == hall - hbefore, PETSC_COMM_SELF, PETSC_ERR_PLIB, "resumed run made %lld hits, the full run %lld after batch %d", (long long)hres, (long long)(hall - hbefore), (int)g0);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   resume at batch %d of %d: same batches, bytes and numbering; hits %lld = full run's %lld after it\n", (int)g0, (int)g, (long long)hres, (long long)(hall - hbefore)));
  }
  (void)h0;
  PetscCall(PetscFree4(ref, rid, rep, rbt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        f1[PETSC_MAX_PATH_LEN], f2[PETSC_MAX_PATH_LEN];
  const char *files[2] = {f1, f2};
  const char *dir;
  Result     *ref, *r;
  int64_t     budgets[4] = {0, 5, 13, N};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  dir = argc > 1 ? argv[1] : ".";
  snprintf(f1, sizeof f1, "%s/loader_a.h5", dir);
  snprintf(f2, sizeof f2, "%s/loader_b.h5", dir);
  PetscCall(TdCreate(f1, 0, N1, 4));
  PetscCall(TdCreate(f2, N1, N2, 4));
  PetscCall(PetscNew(&ref));
  PetscCall(PetscNew(&r));

  PetscCall(Run(files, 8, 7, 0, 0, PETSC_FALSE, ref));
  for (int bi = 0; bi < 4; bi++) {
    for (PetscInt pf = 0; pf <= 3; pf += 3) {
      int64_t opt;
      PetscCall(Run(files, 8, 7, budgets[bi], pf, (PetscBool)(pf > 0), r));
      PetscCheck(!memcmp(r->ids, ref->ids, sizeof r->ids), PETSC_COMM_SELF, PETSC_ERR_PLIB, "budget %lld prefetch %d: the sequence changed", (long long)budgets[bi], (int)pf);
      PetscCall(SgBeladyHits(E * N, r->ids, N, budgets[bi], &opt));
      PetscCheck(r->hits == r->planned && r->hits == opt, PETSC_COMM_SELF, PETSC_ERR_PLIB, "budget %lld: hits %lld, planned %lld, Belady %lld", (long long)budgets[bi], (long long)r->hits, (long long)r->planned, (long long)opt);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   buffer %2lld samples, prefetch %d, %s reads: same sequence; hits %3lld = planned = Belady MIN %3lld of %d; %lld runs\n", (long long)budgets[bi], (int)pf, pf ? "raw" : "H5Dread", (long long)r->hits, (long long)opt, E * N, (long long)r->runs));
    }
  }
  PetscCheck(ref->hits == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no buffer but %lld hits", (long long)ref->hits);
  PetscCall(Run(files, 8, 8, 5, 2, PETSC_TRUE, r));
  PetscCheck(memcmp(r->ids, ref->ids, sizeof r->ids), PETSC_COMM_SELF, PETSC_ERR_PLIB, "seed 8 gave the same sequence as seed 7");
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   another seed gives another sequence\n"));
  PetscCall(Run(files, N, 7, 0, 1, PETSC_FALSE, r));
  PetscCheck(r->runs == 2 * E && r->reads == 2 * 2 * E, PETSC_COMM_SELF, PETSC_ERR_PLIB, "whole-epoch batches: %lld runs, %lld reads; expected %d and %d", (long long)r->runs, (long long)r->reads, 2 * E, 4 * E);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   whole-epoch batch without buffer, H5Dread: %lld hyperslab runs (one per file per epoch), %lld reads (runs x fields)\n", (long long)r->runs, (long long)r->reads));
  /* raw reads split a run at chunk boundaries: 20 rows in chunks of 4 -> 5 pieces, 17 -> 5; x 2 fields */
  PetscCall(Run(files, N, 7, 0, 1, PETSC_TRUE, r));
  PetscCheck(r->runs == 2 * E && r->reads == 20 * E, PETSC_COMM_SELF, PETSC_ERR_PLIB, "whole-epoch batches, raw: %lld runs, %lld reads; expected %d and %d", (long long)r->runs, (long long)r->reads, 2 * E, 20 * E);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   whole-epoch batch without buffer, raw: %lld runs, %lld reads (one per chunk piece per field)\n", (long long)r->runs, (long long)r->reads));
  PetscCall(Resume(files, 7));
  PetscCall(Resume(files, 13));
  PetscCall(PetscFree(ref));
  PetscCall(PetscFree(r));
  PetscCall(PetscFinalize());
  return 0;
}
