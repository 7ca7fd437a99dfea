/* Optimal caching check: Belady's rule as used by the loader reaches the brute-force optimum.

   Brute force: dynamic programming over every possible buffer content (a bitmask of items) along
   the trace; on a miss every choice is tried (bypass, fill a free slot, or evict any held item).
   This enumerates all caching policies for the model "a miss is delivered whether or not it is
   kept", so its result is the true maximum number of hits.
   1. 300 random traces (4-10 items, length 6-30, capacity 1-5): SgBeladyHits == brute force.
   2. Real loader plans on one rank: 7 samples, 4 epochs, batch 3, capacities 1-5, three seeds:
      the loader's planned hits (and the hits its I/O side counts) == brute force on its sequence. */
#include "sgloader.h"
#include "loader_testdata.h"

static int64_t BruteForce(int64_t n, const uint32_t *trace, int nitems, int cap)
{
  int      nm = 1 << nitems;
  int64_t *dp, *nd, best = 0;

  dp = (int64_t *)malloc(sizeof(int64_t) * nm);
  nd = (int64_t *)malloc(sizeof(int64_t) * nm);
  for (int m = 0; m < nm; m++) dp[m] = -1;
  dp[0] = 0;
  for (int64_t t = 0; t < n; t++) {
    int s = (int)trace[t], bit = 1 << s;
    for (int m = 0; m < nm; m++) nd[m] = -1;
    for (int m = 0; m < nm; m++) {
      if (dp[m] < 0) continue;
      if (m & bit) {
        if (dp[m] + 1 > nd[m]) nd[m] = dp[m] + 1;
        continue;
      }
      if (dp[m] > nd[m]) nd[m] = dp[m]; /* bypass */
      if (__builtin_popcount(m) < cap) {
        if (dp[m] > nd[m | bit]) nd[m | bit] = dp[m];
      } else
        for (int v = 0; v < nitems; v++)
          if (m & (1 << v)) {
            int mm = (m & ~(1 << v)) | bit;
            if (dp[m] > nd[mm]) nd[mm] = dp[m];
          }
    }
    int64_t *tmp = dp;
    dp           = nd;
    nd           = tmp;
  }
  for (int m = 0; m < nm; m++) best = dp[m] > best ? dp[m] : best;
  free(dp);
  free(nd);
  return best;
}

int main(int argc, char **argv)
{
  uint64_t    st = 12345;
  int         ntr = 0;
  char        f[PETSC_MAX_PATH_LEN];
  const char *files[1] = {f};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* 1. random traces */
  for (int k = 0; k < 300; k++) {
    uint32_t tr[30];
    int      nitems, n, cap;
    int64_t  h, bf;
#define RND() (st = st * 6364136223846793005ull + 1442695040888963407ull, (int)(st >> 33))
    nitems = 4 + RND() % 7;
    n      = 6 + RND() % 25;
    cap    = 1 + RND() % 5;
    for (int i = 0; i < n; i++) tr[i] = (uint32_t)(RND() % nitems);
    PetscCall(SgBeladyHits(n, tr, nitems, cap, &h));
    bf = BruteForce(n, tr, nitems, cap);
    PetscCheck(h == bf, PETSC_COMM_SELF, PETSC_ERR_PLIB, "trace %d (n %d, items %d, cap %d): Belady %lld, optimum %lld", k, n, nitems, cap, (long long)h, (long long)bf);
    ntr++;
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   %d random traces: Belady MIN hits == brute-force optimum\n", ntr));

  /* 2. the loader's own plans */
  snprintf(f, sizeof f, "%s/belady.h5", argc > 1 ? argv[1] : ".");
  PetscCall(TdCreate(f, 0, 7, 2));
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (int cap = 1; cap <= 5; cap++) {
      SgLoader        l;
      SgLoaderBatch   b;
      PetscBool       done;
      const uint32_t *seq;
      int64_t         planned, hits, bf, slot = TD_NX * TD_NY * 8 + 4;
      PetscCall(SgLoaderCreate(PETSC_COMM_SELF, &l));
      PetscCall(SgLoaderSetFiles(l, 1, files));
      PetscCall(SgLoaderSetBatchSize(l, 3));
      PetscCall(SgLoaderSetEpochs(l, 4));
      PetscCall(SgLoaderSetSeed(l, seed));
      PetscCall(SgLoaderSetBufferBytes(l, cap * slot));
      PetscCall(SgLoaderSetPrefetch(l, 1));
      PetscCall(SgLoaderSetUp(l));
      do PetscCall(SgLoaderNext(l, &b, &done));
      while (!done);
      PetscCall(SgLoaderGetSequence(l, &seq, NULL));
      PetscCall(SgLoaderGetPlannedHits(l, &planned, NULL));
      PetscCall(SgLoaderGetStats(l, &hits, NULL, NULL, NULL, NULL));
      bf = BruteForce(28, seq, 7, cap);
      PetscCheck(planned == bf && hits == bf, PETSC_COMM_SELF, PETSC_ERR_PLIB, "seed %d cap %d: loader planned %lld, counted %lld, optimum %lld", (int)seed, cap, (long long)planned, (long long)hits, (long long)bf);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   loader plan, seed %d, buffer %d of 7 samples: %2lld hits of 28 == brute-force optimum\n", (int)seed, cap, (long long)hits));
      PetscCall(SgLoaderDestroy(&l));
    }
  }
  PetscCall(PetscFinalize());
  return 0;
}
