/* parallel.c -- a minimal parallel-for on POSIX threads for the direct conv
 * kernels (conv_direct.c) and long element-wise loops. A small pool of
 * workers sleeps on a condition variable between calls: nothing spins on a
 * shared machine (why OpenMP stays opt-in, see the Makefile), and a call
 * costs a wake-up (~5 us) instead of a thread start and join (~28 us
 * measured here, ~20 calls per conv training step).
 * fn must tolerate any split of [0, n) into ranges (items independent).
 * Thread count: SGNN_NUM_THREADS, else OMP_NUM_THREADS, else
 * OPENBLAS_NUM_THREADS (the same knobs as the GEMMs), else 1. */
#include "sgnn_impl.h"
#include <pthread.h>
#include <stdint.h>
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

/* The pool: workers are started on first use, up to the largest thread count
 * asked for, and live as long as the process. One call at a time uses it (a
 * concurrent or nested call runs inline). The caller never waits for a worker
 * that has not started on the job: it closes the job when all items are
 * claimed and waits only for workers inside it, so a worker that lost its core
 * on a loaded machine delays nothing. */
static struct {
  pthread_mutex_t m;
  pthread_cond_t  wake, idle;
  Job            *job;     /* the open job, NULL when closed */
  unsigned long   gen;     /* bumped per job */
  int             nw;      /* workers started */
  int             want;    /* workers with id < want take part in the open job */
  int             inside;  /* workers running the open job */
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0};
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
  const int     id   = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&P.m);
  seen = P.gen;
  for (;;) {
    while (P.gen == seen) pthread_cond_wait(&P.wake, &P.m);
    seen = P.gen;
    Job *j = id < P.want ? P.job : NULL;
    if (!j) continue;
    P.inside++;
    pthread_mutex_unlock(&P.m);
    run_job(j);
    pthread_mutex_lock(&P.m);
    if (--P.inside == 0) pthread_cond_signal(&P.idle);
  }
  return NULL;
}

void sgnn_parallel_for(int n, void (*fn)(void *ctx, int i0, int i1), void *ctx) { sgnn_parallel_for_grain(n, 0, fn, ctx); }

void sgnn_parallel_for_grain(int n, int grain, void (*fn)(void *ctx, int i0, int i1), void *ctx)
{
  int nt = sgnn_num_threads();
  if (nt > n) nt = n;
  if (nt <= 1 || pthread_mutex_trylock(&busy)) { /* one thread, or the pool is in use (nested/concurrent) */
    if (n > 0) fn(ctx, 0, n);
    return;
  }
  /* default: ~8 claims per thread, balance without an atomic per tiny item */
  if (grain <= 0) grain = n / (8 * nt) > 1 ? n / (8 * nt) : 1;
  Job job = {fn, ctx, n, grain, 0};
  pthread_mutex_lock(&P.m);
  while (P.nw < nt - 1 && P.nw < 63) { /* grow the pool; a worker that cannot start is simply absent */
    pthread_t      th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int ok = pthread_create(&th, &at, worker, (void *)(intptr_t)P.nw) == 0;
    pthread_attr_destroy(&at);
    if (!ok) break;
    P.nw++;
  }
  P.job  = &job;
  P.want = nt - 1;
  P.gen++;
  pthread_cond_broadcast(&P.wake);
  pthread_mutex_unlock(&P.m);
  run_job(&job);
  pthread_mutex_lock(&P.m);
  P.job = NULL; /* closed: late workers skip it */
  while (P.inside > 0) pthread_cond_wait(&P.idle, &P.m);
  pthread_mutex_unlock(&P.m);
  pthread_mutex_unlock(&busy);
}
