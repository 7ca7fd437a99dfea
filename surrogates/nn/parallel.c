/* parallel.c -- a minimal static parallel-for on POSIX threads for the
 * direct conv kernels (conv_direct.c). Threads are created per call and
 * joined before it returns: no pool, so nothing spins between calls on a
 * shared machine (why OpenMP stays opt-in, see the Makefile); the kernels
 * it runs take milliseconds, the ~20 us of thread start-up is noise.
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
  int i0, i1;
} Job;

static void *run_job(void *p)
{
  Job *j = p;
  j->fn(j->ctx, j->i0, j->i1);
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
  Job job[64];
  pthread_t th[64];
  int started[64] = {0};
  for (int t = 0; t < nt; t++) job[t] = (Job){fn, ctx, (int)((long)n * t / nt), (int)((long)n * (t + 1) / nt)};
  for (int t = 1; t < nt; t++) started[t] = pthread_create(&th[t], NULL, run_job, &job[t]) == 0;
  run_job(&job[0]);
  for (int t = 1; t < nt; t++) /* a thread that failed to start: its range runs here */
    if (started[t])
      pthread_join(th[t], NULL);
    else
      run_job(&job[t]);
}
