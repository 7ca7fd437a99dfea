/* sgpar_impl.h -- internal helpers shared by the files of surrogates/parallel. */
#ifndef SGPAR_IMPL_H
#define SGPAR_IMPL_H
#include "sgpar.h"

/* record the message for sgpar_last_error and return code */
int sgpar_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* x must be a [N,C,D,H,W] slab of s->n planes along s->axis (halo.c) */
int sgpar_check_slab(const char *op, const SgparSplit *s, SgnnTensor x);
/* all ranks of the grid, for statistics reduced inside forward/backward (grid.c) */
MPI_Comm sgpar_grid_stats_comm(SgparGrid g);
/* the grid's trace (grid.c): events go in only while tracing is on (sgpar_grid_trace) */
typedef struct SgparTrace_ SgparTrace;
SgparTrace *sgpar_grid_trace_ptr(SgparGrid g);
void sgpar_trace_add(SgparTrace *t, int layer, int kind, double t0, double t1); /* t may be NULL */
int sgpar_trace_layer(SgparTrace *t);     /* the current layer (-1 without a trace) */
int sgpar_trace_new_layer(SgparTrace *t); /* a partitioned layer starts: its id */
/* sgpar_allreduce_sum with its forward and backward times in a trace */
int sgpar_allreduce_sum_traced(MPI_Comm comm, SgparTrace *trace, int layer, SgnnTensor x, SgnnTensor *out);
/* interior pieces of an overlapped convolution (grid.c; 0: blocking halo) */
int sgpar_grid_overlap_chunks(SgparGrid g);
#define MPICHK(call)                                                                                    \
  do {                                                                                                \
    int e_ = (call);                                                                                  \
    if (e_ != MPI_SUCCESS) {                                                                          \
      char s_[MPI_MAX_ERROR_STRING];                                                                  \
      int l_;                                                                                         \
      MPI_Error_string(e_, s_, &l_);                                                                  \
      return sgpar_fail(SGNN_ERR_BACKEND, "%s: %s", #call, s_);                                       \
    }                                                                                                 \
  } while (0)
/* an engine call: its own message, prefixed with the caller */
#define NNCHK(op, call)                                                                                 \
  do {                                                                                                \
    if (call) return sgpar_fail(SGNN_ERR_BACKEND, "%s: %s", op, sgnn_last_error());                   \
  } while (0)
/* the same, jumping to a cleanup label with rc set */
#define NNTRYG(op, call)                                                                                \
  do {                                                                                                \
    if (call) {                                                                                       \
      rc = sgpar_fail(SGNN_ERR_BACKEND, "%s: %s", op, sgnn_last_error());                             \
      goto done;                                                                                      \
    }                                                                                                 \
  } while (0)
#endif
