/* testutil.h -- tiny test harness shared by the nn tests: every check
 * prints what failed and is counted; main returns nonzero on any failure. */
#ifndef SGNN_TESTUTIL_H
#define SGNN_TESTUTIL_H
#include "sgnn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int t_fail, t_pass;
#define CHECK(cond, ...)                                                                                \
  do {                                                                                                \
    if (cond) t_pass++;                                                                               \
    else {                                                                                            \
      t_fail++;                                                                                       \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                     \
      printf(__VA_ARGS__);                                                                            \
      printf("\n");                                                                                   \
    }                                                                                                 \
  } while (0)
/* a call that must succeed; on failure report and abort the test program */
#define OK(call)                                                                                        \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    if (rc_) {                                                                                        \
      printf("FAIL %s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, rc_, sgnn_last_error());        \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)
static inline int t_summary(const char *name)
{
  printf("%s: %d checks passed, %d failed\n", name, t_pass, t_fail);
  return t_fail ? 1 : 0;
}
static inline double t_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
static inline SgnnBackend *t_backend(int argc, char **argv)
{
  SgnnBackend *be;
  const char *name = argc > 1 ? argv[1] : (getenv("SGNN_BACKEND") ? getenv("SGNN_BACKEND") : "cpu");
  OK(sgnn_backend_get(name, &be));
  return be;
}
static inline double t_item(SgnnTensor t)
{
  double v;
  OK(sgnn_tensor_item(t, &v));
  return v;
}
#endif
