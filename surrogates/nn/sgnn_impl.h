/* sgnn_impl.h -- internal structures shared by the engine's source files:
 * tensor/storage layout, the autodiff node, the backend kernel table, and the
 * error macros. Not installed; users include sgnn.h only. */
#ifndef SGNN_IMPL_H
#define SGNN_IMPL_H

#include "sgnn_op.h"
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---------------------------------------------------------- */
void sgnn_logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* TRY that jumps to a cleanup label (for functions holding temporaries) */
#define SGNN_TRYG(call)                                                                                 \
  do {                                                                                                \
    rc = (call);                                                                                      \
    if (rc) goto done;                                                                                \
  } while (0)

#define SHP(t) sgnn_shape_str((t)->ndim, (t)->shape)
static inline size_t sgnn_esize(SgnnDType d) { return d == SGNN_F64 ? 8 : 4; }
static inline const char *sgnn_dtype_name(SgnnDType d) { return d == SGNN_F64 ? "f64" : "f32"; }

/* ---- storage, tensor --------------------------------------------------- */
typedef struct {
  SgnnBackend *be;
  void *ptr;
  size_t bytes;
  int refcount;
  /* a bucket of a parameter slab whose memory comes and goes (ZeRO stage 3 by buckets, params.c):
     every use calls fill(ctx, bucket) first, which makes ptr valid (filling it if absent) */
  SgnnBucketFill fill;
  void *fill_ctx;
  int bucket;
} SgnnStorage;


struct SgnnTensor_ {
  int refcount;
  SgnnDType dtype;
  int ndim;
  int shape[SGNN_MAX_DIMS];
  long numel;
  SgnnStorage *st;
  long offset;       /* in elements: views share storage */
  int requires_grad; /* leaf flag, or "has a node" for results */
  SgnnTensor grad;   /* leaves: accumulated gradient (may be a slab view) */
  SgnnNode *node;    /* producing op; NULL for leaves/constants */
  int pending;       /* backward scratch: contributions still to come */
  int param;         /* a parameter view: 1 + its index in its SgnnParams (sgnn_params_index); else 0 */
};

void sgnn_storage_use(SgnnStorage *st); /* params.c: a bucket's fill; aborts with a message if it fails */
static inline void *sgnn_ptr(SgnnTensor t)
{
  if (t->st->fill) sgnn_storage_use(t->st);
  return (char *)t->st->ptr + (size_t)t->offset * sgnn_esize(t->dtype);
}
static inline SgnnBackend *sgnn_be(SgnnTensor t) { return t->st->be; }
long sgnn_numel_of(int ndim, const int *shape);
int sgnn_same_shape(SgnnTensor a, SgnnTensor b);
/* common input checks; op names the op in the message */
int sgnn_check_in(const char *op, SgnnTensor t, const char *what);
int sgnn_check_pair(const char *op, SgnnTensor a, SgnnTensor b);
/* a parameter view used before sgnn_params_setup has no storage yet */
#define SGNN_CHECK_ST(op, t)                                                                            \
  SGNN_CHECK((t)->st, SGNN_ERR_STATE, "%s: tensor %s has no storage (parameter used before sgnn_params_setup?)", \
             op, SHP(t))

/* ---- index buffers (device-resident, shared by forward and backward) --- */
typedef struct {
  int refcount;
  SgnnBackend *be;
  long n;
  long *dev;
} SgnnIndex;
int sgnn_index_create(SgnnBackend *be, long n, const long *host, SgnnIndex **out);
void sgnn_index_release(SgnnIndex **ix);
int sgnn_index_select_ix(SgnnTensor x, int axis, SgnnIndex *ix, SgnnTensor *out);
int sgnn_scatter_add_ix(SgnnTensor x, int axis, SgnnIndex *ix, int dim_size, SgnnTensor *out);

/* ---- autodiff node ------------------------------------------------------ */
typedef struct {
  SgnnNode *fn;      /* producing node of the input, or */
  SgnnTensor leaf;   /* the input itself if it is a leaf requiring grad */
} SgnnEdge;

#define SGNN_MAX_SAVED 4
struct SgnnNode {
  const char *name;
  long seq; /* tape position: backward visits nodes in decreasing seq */
  int refcount;
  int nin;
  SgnnEdge *edge;
  int *in_ndim;                  /* input shapes, for checks and reshapes */
  int (*in_shape)[SGNN_MAX_DIMS];
  SgnnTensor saved[SGNN_MAX_SAVED];
  SgnnTensor out_alias; /* output data without a node (see sgnn_node_output) */
  int out_ndim, out_shape[SGNN_MAX_DIMS];
  SgnnDType dtype;
  int ip[16];
  double dp[4];
  SgnnIndex *ix;
  SgnnBackwardFn backward;
  /* backward-pass scratch */
  SgnnTensor gacc;
  long mark;
  int needed;
};

int sgnn_recording(void);
void sgnn_node_save_output(SgnnNode *n, SgnnTensor out);
/* The op's output as seen from its backward: differentiable (pointing back at
 * this node) when create_graph, plain data otherwise. New reference. */
SgnnTensor sgnn_node_output(SgnnNode *n, int create_graph);
void sgnn_node_release(SgnnNode **n);

/* ---- backend kernel table ------------------------------------------------ */
enum {
  SGNN_U_AFFINE, /* p0*x + p1 */
  SGNN_U_POW,    /* x^p0 */
  SGNN_U_TANH,
  SGNN_U_SIGMOID,
  SGNN_U_RELU,
  SGNN_U_SOFTPLUS,
  SGNN_U_EXP,
  SGNN_U_LOG,
  SGNN_U_SQRT,
  SGNN_U_ABS,
  SGNN_U_STEP, /* x > 0 */
  SGNN_U_SIGN,
  SGNN_U_COUNT
};
enum { SGNN_B_ADD, SGNN_B_SUB, SGNN_B_MUL, SGNN_B_DIV, SGNN_B_TANHBW /* a (1 - b^2): tanh's backward */ };

/* an n-d loop padded to 5 dims; strides in elements (0 = broadcast/reduced) */
typedef struct {
  int shape[SGNN_MAX_DIMS];
  long sa[SGNN_MAX_DIMS], sb[SGNN_MAX_DIMS], so[SGNN_MAX_DIMS];
} SgnnIter;

/* im2col geometry. r0, r1 select output rows q = od*Ho + oh in [r0, r1)
 * (r1 == 0: all rows), so a conv can stream cache-sized column chunks;
 * columns are then [C*K, N, (r1-r0)*Wo]. */
typedef struct {
  int N, C, D, H, W;
  int k[3], s[3], p[3];
  int Do, Ho, Wo;
  int r0, r1;
} SgnnConvGeom;

typedef struct {
  SgnnOptimType type;
  SgnnDType dtype;
  long n;
  void *p;
  const void *g;
  void *m, *v;
  double lr, b1, b2, eps, wd, momentum, bc1, bc2;
  int nesterov, first;
} SgnnOptimArgs;

struct SgnnBackend_ {
  const char *name;
  size_t mem_cur, mem_peak;
  void *(*alloc)(size_t bytes);
  void (*free)(void *p, size_t bytes);
  int (*h2d)(void *dst, const void *src, size_t bytes);
  int (*d2h)(void *dst, const void *src, size_t bytes);
  int (*d2d)(void *dst, const void *src, size_t bytes);
  int (*fill)(SgnnDType dt, long n, void *x, double v);
  int (*unary)(int op, SgnnDType dt, long n, const void *x, void *y, double p0, double p1);
  /* out = g * f'(x) (y = f(x) given too; fused path when not creating a graph) */
  int (*unary_bw)(int op, SgnnDType dt, long n, const void *x, const void *y, const void *g, void *out,
                  double p0, double p1);
  int (*binary)(int op, SgnnDType dt, const SgnnIter *it, const void *a, const void *b, void *out);
  int (*copy_strided)(SgnnDType dt, const SgnnIter *it, const void *src, void *dst); /* sa -> so */
  int (*reduce_sum)(SgnnDType dt, const SgnnIter *it, const void *src, void *dst);   /* dst += */
  /* C_b = alpha op(A_b) op(B_b) + beta C_b, b < batch; stride 0 = shared; a
   * shared C accumulates over the batch */
  int (*gemm)(SgnnDType dt, int ta, int tb, int M, int N, int K, double alpha, const void *A, long sA,
              const void *B, long sB, double beta, void *C, long sC, int batch);
  int (*index_select)(SgnnDType dt, long outer, long nsrc, long inner, const void *src, const long *idx,
                      long nidx, void *out);
  int (*scatter_add)(SgnnDType dt, long outer, long nidx, long inner, const void *src, const long *idx,
                     long ndst, void *out); /* out += */
  int (*im2col)(SgnnDType dt, const SgnnConvGeom *g, const void *x, void *cols);
  int (*col2im)(SgnnDType dt, const SgnnConvGeom *g, const void *cols, void *x); /* x += */
  int (*maxpool_idx)(SgnnDType dt, const SgnnConvGeom *g, const void *x, long *idx);
  int (*sumsq)(SgnnDType dt, long n, const void *x, double *res);
  int (*optim)(const SgnnOptimArgs *a);
};

SgnnBackend *sgnn_backend_cpu(void);
/* Scratch buffers of the CPU kernels (conv_direct.c, conv_winograd.c) from the CPU backend's caching
 * allocator: the same sizes recur every training step, and fresh multi-MiB blocks cost a page fault per
 * 4 KiB. They are not tensors, so the tensor-byte counters do not see them. */
static inline void *sgnn_scratch(size_t bytes, int zero)
{
  void *p = sgnn_backend_cpu()->alloc(bytes ? bytes : 1);
  if (p && zero) memset(p, 0, bytes);
  return p;
}
static inline void sgnn_scratch_free(void *p, size_t bytes)
{
  if (p) sgnn_backend_cpu()->free(p, bytes ? bytes : 1);
}
SgnnBackend *sgnn_backend_cuda(void); /* NULL when not compiled in or no usable device */
const char *sgnn_cuda_unavailable_reason(void); /* why sgnn_backend_cuda() is NULL */
/* the CUDA plugin's entry point (backend_cudaload.c opens it, backend_cuda.cu defines it): the ABI
   check (this header's layout of SgnnBackend), the host's error setter (the plugin's messages land in
   sgnn_last_error), and on failure *why says what is missing */
#define SGNN_CUDA_PLUGIN_ABI ((int)(1000 * 1 + sizeof(SgnnBackend)))
typedef SgnnBackend *(*SgnnCudaPluginOpen)(int abi, int (*seterr)(int, const char *, ...), const char **why);
void *sgnn_be_alloc(SgnnBackend *be, size_t bytes);
void sgnn_be_free(SgnnBackend *be, void *p, size_t bytes);
/* dispatch helpers: run on the tensor's backend, falling back to the CPU
 * (with a logged message) where the backend lacks the kernel */
int sgnn_k_maxpool_idx(SgnnBackend *be, SgnnDType dt, const SgnnConvGeom *g, const void *x, long *idx);
int sgnn_k_missing(SgnnBackend *be, const char *kernel);

/* cpu kernels usable by other backends' fallbacks and by optim.c */
int sgnn_cpu_gemm(SgnnDType dt, int ta, int tb, int M, int N, int K, double alpha, const void *A, long sA,
                  const void *B, long sB, double beta, void *C, long sC, int batch);

/* Winograd F(2x2x2, 3x3x3) stride-1 conv on host memory (conv_winograd.c), padding <= 2:
 * sgnn_winograd_conv3:    y [N,Co,Do,Ho,Wo] = conv(x [N,C,D,H,W], w [Co,C,3,3,3]) + bias, all outputs written
 * sgnn_winograd_conv3_dw: dw [Co,C,3,3,3] += sum over n and positions of y (read: the output gradient) times
 *                         the matching x values; db [Co] += sum of y (db may be NULL) */
typedef struct {
  SgnnDType dt;
  int N, C, D, H, W, Co;
  int pad[3];
  const void *x, *w, *bias;
  void *y, *dw, *db;
} SgnnWinogradArgs;
int sgnn_winograd_conv3(const SgnnWinogradArgs *a);
int sgnn_winograd_conv3_dw(const SgnnWinogradArgs *a);

/* direct stride-1 conv on host memory (conv_direct.c), any kernel size:
 * sgnn_direct_conv3:    y [N,Co,Do,Ho,Wo] = conv(x [N,C,D,H,W], w [Co,C,k0,k1,k2]) + bias (bias may be NULL)
 * sgnn_direct_conv3_dw: dw [Co,C,k0,k1,k2] += sum over n and positions of y (read: the output gradient)
 *                       times the matching x values; db [Co] += sum of y over n and positions (db may be NULL) */
typedef struct {
  SgnnDType dt;
  int N, C, D, H, W, Co;
  int k[3], pad[3];
  const void *x, *w, *bias;
  void *y;  /* output (forward) or output gradient (dw) */
  void *dw; /* weight gradient, accumulated (dw only) */
  void *db; /* bias gradient, accumulated (dw only; NULL: not wanted) */
} SgnnDirectArgs;
int sgnn_direct_conv3(const SgnnDirectArgs *a);
int sgnn_direct_conv3_dw(const SgnnDirectArgs *a);

/* parallel.c: fn(ctx, i0, i1) over a static split of [0, n) on
 * sgnn_num_threads() POSIX threads (created and joined per call) */
int sgnn_num_threads(void);
/* element-wise loops longer than two pieces are split into pieces of this many elements (fixed, so
 * any reduction over pieces has the same order for every thread count) */
#define SGNN_PIECE 32768
void sgnn_parallel_for(int n, void (*fn)(void *ctx, int i0, int i1), void *ctx);
/* the same with grain items per claim (<= 0: the default), for ops whose items share data that a
 * claim of several consecutive items reads once */
void sgnn_parallel_for_grain(int n, int grain, void (*fn)(void *ctx, int i0, int i1), void *ctx);

/* iterator builders */
void sgnn_iter_init(SgnnIter *it, int ndim, const int *shape);

/* ---- internal op helpers ---------------------------------------------- */
int sgnn_unary_op(int op, SgnnTensor x, double p0, double p1, SgnnTensor *out);
int sgnn_zeros_like(SgnnTensor t, SgnnTensor *out);
int sgnn_scalar_like(SgnnTensor t, double v, SgnnTensor *out); /* 0-d, same dtype/backend */
/* broadcast result shape; returns 0 or error naming op */
int sgnn_broadcast_shape(const char *op, SgnnTensor a, SgnnTensor b, int *ndim, int *shape);
/* accumulate: *acc = *acc + g (in place when safe and not recording) */
int sgnn_accumulate(SgnnTensor *acc, SgnnTensor g, int create_graph);
int sgnn_normalize_axis(const char *op, int axis, int ndim, int *out);

#ifdef __cplusplus
}
#endif
#endif
