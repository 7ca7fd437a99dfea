/* The loader's plan: sequence, epoch order, sample-to-rank assignment and buffer decisions, all
   computed up front, identically on every rank, from the seed and the buffer capacity.

   Sequence. Epoch e's shuffle is SgShuffle(seed, e). The delivered order of epochs is a greedy tour:
   start with shuffle 0, then repeatedly take the unused shuffle whose first accesses best reuse the
   last accesses of the current one, scored by the number of samples whose reuse distance across
   the boundary is below the order window W (SOLAR's epoch-ordering idea; the score does not involve
   the buffer size, so the sequence does not either). Batches never straddle epochs.

   Assignment. Every rank simulates every rank's buffer (pure arithmetic, no communication), so all
   agree. In a global batch, a sample held by some rank goes to it; each miss goes to the rank with
   the smallest local count so far (ties: lowest rank). A sample is never held by two ranks: it is
   only inserted on a miss, i.e. when nobody holds it. Hence a held sample's next access is on the
   rank that holds it, and the rank-local Belady decision (evict the furthest next use, or bypass the
   incoming sample if it is needed later than everything held) uses exact next-use times.

   Within a batch a miss can never evict a sample still to be delivered in that batch (its next use
   is inside the batch, the incoming sample's is in a later epoch), but it can evict a sample that
   was a hit earlier in the batch; the I/O side therefore copies all hits out before storing misses. */
#include "sgloaderimpl.h"
#include "sgbeladyheap.h"

typedef struct {
  SgHeap   heap;
  int64_t  held;
  int32_t *freeslots;
  int64_t  nfree;
} RankCache;

/* Greedy epoch tour. perms[e*N..] is shuffle e. */
static PetscErrorCode OrderEpochs(PetscInt E, int64_t N, int64_t W, const uint32_t *perms, PetscInt *order)
{
  uint32_t *pos;
  PetscBool *used;

  PetscFunctionBegin;
  order[0] = 0;
  if (E == 1) PetscFunctionReturn(PETSC_SUCCESS);
  W = PetscMin(W, N);
  PetscCall(PetscMalloc2((size_t)E * N, &pos, E, &used));
  for (PetscInt e = 0; e < E; e++) {
    used[e] = PETSC_FALSE;
    for (int64_t p = 0; p < N; p++) pos[e * N + perms[e * N + p]] = (uint32_t)p;
  }
  used[0] = PETSC_TRUE;
  for (PetscInt k = 1; k < E; k++) {
    const uint32_t *cur = perms + (int64_t)order[k - 1] * N;
    PetscInt        best = -1;
    int64_t         bestscore = -1;
    for (PetscInt j = 0; j < E; j++) {
      int64_t score = 0;
      if (used[j]) continue;
      for (int64_t d1 = 0; d1 < W; d1++) { /* d1: accesses from the end of the current epoch */
        uint32_t s = cur[N - 1 - d1];
        score += (int64_t)pos[j * N + s] < W - d1;
      }
      if (score > bestscore) {
        bestscore = score;
        best = j;
      }
    }
    order[k]   = best;
    used[best] = PETSC_TRUE;
  }
  PetscCall(PetscFree2(pos, used));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LocalPush(SgLoaderPlan *p, int64_t *cap, uint32_t id, int32_t act)
{
  PetscFunctionBegin;
  if (p->accesses == *cap) {
    *cap = *cap ? 2 * *cap : 1024;
    PetscCall(PetscRealloc(sizeof(uint32_t) * (size_t)*cap, &p->lid));
    PetscCall(PetscRealloc(sizeof(int32_t) * (size_t)*cap, &p->act));
  }
  p->lid[p->accesses] = id;
  p->act[p->accesses] = act;
  p->accesses++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderPlanBuild(SgLoader l)
{
  const int64_t N = l->nsamples, T = (int64_t)l->epochs * N;
  const PetscInt E = l->epochs, B = l->batch, P = l->size, me = l->rank;
  SgLoaderPlan *pl = &l->plan;
  uint32_t     *perms, *next, *key;
  int32_t      *holder, *slotof, *assign;
  RankCache    *rc;
  int64_t       lcap = 0, C = l->capacity;

  PetscFunctionBegin;
  PetscCheck(T < (int64_t)UINT32_MAX, l->hdr.comm, PETSC_ERR_SUP, "epochs x samples = %lld exceeds 2^32-1 accesses", (long long)T);
  /* 1. shuffles and their order */
  PetscCall(PetscMalloc1(T, &perms));
  for (PetscInt e = 0; e < E; e++) PetscCall(SgShuffle(l->seed, (uint64_t)e, N, perms + (int64_t)e * N));
  PetscCall(PetscMalloc1(E, &l->eperm));
  PetscCall(OrderEpochs(E, N, l->window > 0 ? l->window : PetscMax(1, N / 4), perms, l->eperm));
  PetscCall(PetscMalloc1(T, &l->seq));
  for (PetscInt k = 0; k < E; k++) PetscCall(PetscArraycpy(l->seq + (int64_t)k * N, perms + (int64_t)l->eperm[k] * N, N));
  PetscCall(PetscFree(perms));

  /* 2. batches */
  pl->nb_epoch = (PetscInt)((N + B - 1) / B);
  pl->nbatches = pl->nb_epoch * E;
  PetscCall(PetscMalloc3(pl->nbatches + 1, &pl->bstart, (size_t)pl->nbatches * P, &pl->counts, pl->nbatches + 1, &pl->lstart));
  for (PetscInt g = 0; g < pl->nbatches; g++) {
    PetscInt e = g / pl->nb_epoch, b = g % pl->nb_epoch;
    pl->bstart[g] = (int64_t)e * N + (int64_t)b * B;
  }
  pl->bstart[pl->nbatches] = T;

  /* 3. simulate every rank's buffer */
  PetscCall(PetscMalloc5(T, &next, N, &key, N, &holder, N, &slotof, B, &assign));
  PetscCall(SgNextUse(T, l->seq, N, next));
  for (int64_t s = 0; s < N; s++) holder[s] = -1;
  PetscCall(PetscCalloc1(P, &rc));
  for (PetscInt r = 0; r < P; r++) {
    PetscCall(PetscMalloc1(PetscMax(C, 1), &rc[r].freeslots));
    for (int64_t k = 0; k < C; k++) rc[r].freeslots[k] = (int32_t)(C - 1 - k);
    rc[r].nfree = C;
  }
  pl->hits = pl->accesses = pl->maxlocal = 0;
  for (PetscInt g = 0; g < pl->nbatches; g++) {
    int64_t   t0 = pl->bstart[g], t1 = pl->bstart[g + 1];
    PetscInt *cnt = pl->counts + (size_t)g * P;
    for (PetscInt r = 0; r < P; r++) cnt[r] = 0;
    for (int64_t t = t0; t < t1; t++) {
      int32_t h = holder[l->seq[t]];
      assign[t - t0] = h;
      if (h >= 0) cnt[h]++;
    }
    for (int64_t t = t0; t < t1; t++) {
      if (assign[t - t0] >= 0) continue;
      PetscInt best = 0;
      for (PetscInt r = 1; r < P; r++)
        if (cnt[r] < cnt[best]) best = r;
      assign[t - t0] = (int32_t)best;
      cnt[best]++;
    }
    pl->lstart[g] = pl->accesses;
    pl->maxlocal  = PetscMax(pl->maxlocal, (int64_t)cnt[me]);
    for (int64_t t = t0; t < t1; t++) {
      uint32_t   s = l->seq[t], nu = next[t];
      PetscInt   r = assign[t - t0];
      RankCache *c = &rc[r];
      int32_t    act;
      if (holder[s] >= 0) { /* hit: refresh its next use */
        act    = slotof[s];
        key[s] = nu;
        PetscCall(SgHeapPush(&c->heap, ((uint64_t)nu << 32) | s));
        if (r == me) pl->hits++;
      } else {
        int32_t slot = -1;
        if (nu != SG_LOADER_INF && C > 0) {
          if (c->nfree) slot = c->freeslots[--c->nfree];
          else {
            uint64_t top;
            uint32_t v;
            for (;;) { /* drop stale heap entries */
              top = c->heap.a[0];
              v   = (uint32_t)top;
              if (holder[v] == r && key[v] == (uint32_t)(top >> 32)) break;
              SgHeapPop(&c->heap);
            }
            if ((uint32_t)(top >> 32) > nu) {
              SgHeapPop(&c->heap);
              holder[v] = -1;
              slot      = slotof[v];
              c->held--;
            }
          }
        }
        if (slot >= 0) {
          holder[s] = (int32_t)r;
          slotof[s] = slot;
          key[s]    = nu;
          c->held++;
          PetscCall(SgHeapPush(&c->heap, ((uint64_t)nu << 32) | s));
        }
        act = slot >= 0 ? -slot - 2 : -1;
      }
      if (r == me) PetscCall(LocalPush(pl, &lcap, s, act));
      /* keep stale entries from piling up: rebuild from the live ones now and then */
      if (c->heap.n > 4 * (C + 16)) {
        int64_t k = 0;
        for (int64_t i = 0; i < c->heap.n; i++) {
          uint32_t v = (uint32_t)c->heap.a[i];
          if (holder[v] == r && key[v] == (uint32_t)(c->heap.a[i] >> 32)) c->heap.a[k++] = c->heap.a[i];
        }
        c->heap.n = 0;
        {
          uint64_t *tmp;
          PetscCall(PetscMalloc1(PetscMax(k, 1), &tmp));
          PetscCall(PetscArraycpy(tmp, c->heap.a, k));
          for (int64_t i = 0; i < k; i++) PetscCall(SgHeapPush(&c->heap, tmp[i]));
          PetscCall(PetscFree(tmp));
        }
      }
    }
  }
  pl->lstart[pl->nbatches] = pl->accesses;
  for (PetscInt r = 0; r < P; r++) {
    PetscCall(PetscFree(rc[r].heap.a));
    PetscCall(PetscFree(rc[r].freeslots));
  }
  PetscCall(PetscFree(rc));
  PetscCall(PetscFree5(next, key, holder, slotof, assign));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderPlanDestroy(SgLoaderPlan *pl)
{
  PetscFunctionBegin;
  PetscCall(PetscFree3(pl->bstart, pl->counts, pl->lstart));
  PetscCall(PetscFree(pl->lid));
  PetscCall(PetscFree(pl->act));
  PetscFunctionReturn(PETSC_SUCCESS);
}
