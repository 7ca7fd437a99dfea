/* parallel.c -- a minimal static parallel-for on POSIX threads for the
 * direct conv kernels (conv_direct.c). Threads are created per call and
 * joined before it returns: no pool, so nothing spins between calls on a
 * shared machine (why OpenMP stays opt-in, see the Makefile); the kernels
 * it runs take milliseconds, the ~20 us of thread start-up is noise.
 * fn must tolerate any split of [0, n) into ranges (items independent).
 * Thread count: SGNN_NUM_THREADS, else OMP_NUM_THREADS, else
 * OPENBLAS_NUM_THREADS (the same knobs as the GEMMs), else 1. */
#include "sgnn_impl.h"
#include <pthread.h>
#include <stdlib.h>

int sgnn_num_threads(void)
{
  const char *names[3] = {"SGNN_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"};
  for (int i = 0; i < 3; i++) {
    const char *e = getenv(names[i]);
    if (e && atoi(e) > 0) return atoi(e) > 64 ? 64 : atoi(e);
  }
  return 1;
}

typedef struct {
  void (*fn)(void *, int, int);
  void *ctx;
  int n, grain;
  int next; /* next unclaimed item (atomic) */
} Job;

/* items are claimed dynamically, grain at a time: on a shared machine a
 * thread that loses its core leaves its remaining items to the others
 * instead of stalling the whole op behind a static split */
static void *run_job(void *p)
{
  Job *j = p;
  for (;;) {
    int i0 = __atomic_fetch_add(&j->next, j->grain, __ATOMIC_RELAXED);
    if (i0 >= j->n) break;
    j->fn(j->ctx, i0, i0 + j->grain < j->n ? i0 + j->grain : j->n);
  }
  return NULL;
}

void sgnn_parallel_for(int n, void (*fn)(void *ctx, int i0, int i1), void *ctx)
{
  int nt = sgnn_num_threads();
  if (nt > n) nt = n;
  if (nt <= 1) {
    if (n > 0) fn(ctx, 0, n);
    return;
  }
  /* ~8 claims per thread: balance without an atomic per tiny item */
  Job job = {fn, ctx, n, n / (8 * nt) > 1 ? n / (8 * nt) : 1, 0};
  pthread_t th[64];
  int started[64] = {0};
  for (int t = 1; t < nt; t++) started[t] = pthread_create(&th[t], NULL, run_job, &job) == 0;
  run_job(&job); /* a thread that failed to start simply claims nothing */
  for (int t = 1; t < nt; t++)
    if (started[t]) pthread_join(th[t], NULL);
}
