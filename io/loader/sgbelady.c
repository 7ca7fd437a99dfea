/* Belady's MIN replacement (L. A. Belady, "A study of replacement algorithms for a virtual-storage
   computer", IBM Systems Journal 5(2), 1966) on a fully known trace.

   Cache model used everywhere in the loader: a miss delivers the item whether or not it is kept, so
   the cache may bypass it. MIN with bypass (keep the incoming item only if its next use is sooner
   than the furthest next use in the cache, evicting that one) maximises hits for this model; the
   brute-force checker in tests/unit/loader/test_loader_belady.c confirms it on small traces.

   The heap holds (next use << 32 | item) so the max-heap top is the item needed furthest ahead.
   Entries go stale when an item is used again or evicted; they are dropped lazily on pop. */
#include "sgloader.h"
#include "sgbeladyheap.h"

PetscErrorCode SgHeapPush(SgHeap *h, uint64_t v)
{
  int64_t i;

  PetscFunctionBegin;
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 64;
    PetscCall(PetscRealloc(sizeof(uint64_t) * (size_t)h->cap, &h->a));
  }
  i = h->n++;
  while (i > 0) {
    int64_t p = (i - 1) / 2;
    if (h->a[p] >= v) break;
    h->a[i] = h->a[p];
    i       = p;
  }
  h->a[i] = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

uint64_t SgHeapPop(SgHeap *h)
{
  uint64_t top = h->a[0], v = h->a[--h->n];
  int64_t  i = 0;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->a[c + 1] > h->a[c]) c++;
    if (h->a[c] <= v) break;
    h->a[i] = h->a[c];
    i       = c;
  }
  if (h->n) h->a[i] = v;
  return top;
}

PetscErrorCode SgNextUse(int64_t n, const uint32_t trace[], int64_t nitems, uint32_t next[])
{
  uint32_t *last;

  PetscFunctionBegin;
  PetscCheck(n < (int64_t)UINT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "trace of %lld accesses is longer than 2^32-1", (long long)n);
  PetscCall(PetscMalloc1(nitems, &last));
  for (int64_t s = 0; s < nitems; s++) last[s] = UINT32_MAX;
  for (int64_t t = n - 1; t >= 0; t--) {
    next[t]         = last[trace[t]];
    last[trace[t]]  = (uint32_t)t;
  }
  PetscCall(PetscFree(last));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBeladyHits(int64_t n, const uint32_t trace[], int64_t nitems, int64_t cap, int64_t *hits)
{
  uint32_t *next, *key;
  char     *in;
  SgHeap    h = {0};
  int64_t   held = 0;

  PetscFunctionBegin;
  *hits = 0;
  PetscCall(PetscMalloc3(n, &next, nitems, &key, nitems, &in));
  PetscCall(SgNextUse(n, trace, nitems, next));
  PetscCall(PetscArrayzero(in, nitems));
  for (int64_t t = 0; t < n; t++) {
    uint32_t s = trace[t], nu = next[t];
    if (in[s]) {
      (*hits)++;
      key[s] = nu;
      PetscCall(SgHeapPush(&h, ((uint64_t)nu << 32) | s));
      continue;
    }
    if (nu == UINT32_MAX || cap == 0) continue; /* never needed again, or no cache: bypass */
    if (held == cap) {
      uint64_t top;
      uint32_t v;
      for (;;) { /* drop stale entries */
        top = h.a[0];
        v   = (uint32_t)top;
        if (in[v] && key[v] == (uint32_t)(top >> 32)) break;
        SgHeapPop(&h);
      }
      if ((uint32_t)(top >> 32) < nu) continue; /* everything cached is needed sooner: bypass */
      SgHeapPop(&h);
      in[v] = 0;
      held--;
    }
    in[s]  = 1;
    key[s] = nu;
    held++;
    PetscCall(SgHeapPush(&h, ((uint64_t)nu << 32) | s));
  }
  PetscCall(PetscFree(h.a));
  PetscCall(PetscFree3(next, key, in));
  PetscFunctionReturn(PETSC_SUCCESS);
}
