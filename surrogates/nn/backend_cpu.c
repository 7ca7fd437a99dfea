/* backend_cpu.c -- the "cpu" backend: host memory and plain C kernels,
 * each written once as a macro over the element type (float, double). Inner
 * loops are unit-stride where the layout allows so gcc -O3 vectorises them. */
#include "sgnn_impl.h"
#include "vmath.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A small caching allocator: a training step allocates the same sizes every
 * iteration, and fresh large blocks come from mmap with a page fault per
 * 4 KiB on first touch (measured: ~10% of a small MLP step). Freed blocks
 * are kept per thread, matched by exact rounded size, up to CACHE_MAX bytes.
 * The memory counters count tensor bytes in use, not this cache. */
#define CACHE_SLOTS 512
#define CACHE_MAX ((size_t)1 << 30)
static _Thread_local struct {
  void *p;
  size_t sz;
} cache[CACHE_SLOTS];
static _Thread_local int ncache;
static _Thread_local size_t cached;

static size_t round_sz(size_t b) { return (b + 63) / 64 * 64; }

static void *cpu_alloc(size_t bytes)
{
  size_t sz = round_sz(bytes);
  for (int i = ncache - 1; i >= 0; i--)
    if (cache[i].sz == sz) {
      void *p = cache[i].p;
      cache[i] = cache[--ncache];
      cached -= sz;
      return p;
    }
  return aligned_alloc(64, sz);
}

static void cpu_free(void *p, size_t bytes)
{
  size_t sz = round_sz(bytes ? bytes : 1);
  if (ncache < CACHE_SLOTS && cached + sz <= CACHE_MAX) {
    cache[ncache].p = p;
    cache[ncache++].sz = sz;
    cached += sz;
    return;
  }
  free(p);
}
static int cpu_copy(void *dst, const void *src, size_t bytes)
{
  if (bytes) memcpy(dst, src, bytes);
  return 0;
}

/* OpenMP (when built with it) only pays off on large loops: a parallel
 * region costs a few microseconds, a 64 Ki-element loop tens of them. */
#define PAR_MIN 65536
#ifdef _OPENMP
#define OMP_FOR(n) _Pragma("omp parallel for schedule(static) if ((n) > PAR_MIN)")
#define OMP_ITER _Pragma("omp parallel for collapse(4) schedule(static) if (iter_numel(it) > PAR_MIN)")
#define OMP_CONV _Pragma("omp parallel for schedule(static) if (S_in * g->N * g->C > PAR_MIN)")
#else
#define OMP_FOR(n)
#define OMP_ITER
#define OMP_CONV
#endif

#define FOR_T(dt, ...)                                                                                \
  do {                                                                                                \
    if ((dt) == SGNN_F64) {                                                                           \
      typedef double T;                                                                               \
      __VA_ARGS__                                                                                            \
    } else {                                                                                          \
      typedef float T;                                                                                \
      __VA_ARGS__                                                                                            \
    }                                                                                                 \
  } while (0)

static int cpu_fill(SgnnDType dt, long n, void *x, double v)
{
  FOR_T(dt, {
    T *p = x;
    for (long i = 0; i < n; i++) p[i] = (T)v;
  });
  return 0;
}

/* forward unary ops; math in the element type (tanh for float uses tanhf) */
#define UNARY_LOOP(T, EXPR)                                                                             \
  OMP_FOR(n)                                                                                          \
  for (long i = 0; i < n; i++) {                                                                      \
    T v = X[i];                                                                                       \
    Y[i] = (EXPR);                                                                                    \
  }
#define UNARY_ALL(T, LOGF, SQRTF, POWF, FABSF)                                                          \
  switch (op) {                                                                                       \
  case SGNN_U_AFFINE: UNARY_LOOP(T, a * v + b) break;                                                 \
  case SGNN_U_POW: UNARY_LOOP(T, POWF(v, a)) break;                                                   \
  case SGNN_U_TANH: UNARY_LOOP(T, (T)sg_tanh(v)) break;                                                    \
  case SGNN_U_SIGMOID: UNARY_LOOP(T, (T)sg_sigmoid(v)) break;                                 \
  case SGNN_U_RELU: UNARY_LOOP(T, v > 0 ? v : (T)0) break;                                            \
  case SGNN_U_SOFTPLUS: UNARY_LOOP(T, (T)sg_softplus(v)) break;                                      \
  case SGNN_U_EXP: UNARY_LOOP(T, (T)sg_exp(v)) break;                                                      \
  case SGNN_U_LOG: UNARY_LOOP(T, LOGF(v)) break;                                                      \
  case SGNN_U_SQRT: UNARY_LOOP(T, SQRTF(v)) break;                                                    \
  case SGNN_U_ABS: UNARY_LOOP(T, FABSF(v)) break;                                                     \
  case SGNN_U_STEP: UNARY_LOOP(T, v > 0 ? (T)1 : (T)0) break;                                         \
  case SGNN_U_SIGN: UNARY_LOOP(T, v > 0 ? (T)1 : (v < 0 ? (T)-1 : (T)0)) break;                       \
  default: return sgnn_seterr(SGNN_ERR_ARG, "cpu unary: unknown op %d", op);                          \
  }

static int unary_serial(int op, SgnnDType dt, long n, const void *x, void *y, double p0, double p1)
{
  if (dt == SGNN_F64) {
    const double *X = x;
    double *Y = y, a = p0, b = p1;
    UNARY_ALL(double, log, sqrt, pow, fabs)
  } else {
    const float *X = x;
    float *Y = y, a = (float)p0, b = (float)p1;
    UNARY_ALL(float, logf, sqrtf, powf, fabsf)
  }
  return 0;
}

/* fused out = g * f'(x): the create_graph=off path of unary backward */
#define BW_LOOP(T, EXPR)                                                                                \
  OMP_FOR(n)                                                                                          \
  for (long i = 0; i < n; i++) {                                                                      \
    T v = X ? X[i] : 0, w = Y ? Y[i] : 0, gg = G[i];                                                  \
    (void)v;                                                                                          \
    (void)gg;                                                                                         \
    (void)w;                                                                                          \
    O[i] = (EXPR);                                                                                    \
  }
#define BW_ALL(T, EXPF, POWF)                                                                           \
  switch (op) {                                                                                       \
  case SGNN_U_AFFINE: BW_LOOP(T, gg * a) break;                                                       \
  case SGNN_U_POW: BW_LOOP(T, gg * a * POWF(v, a - 1)) break;                                         \
  case SGNN_U_TANH: BW_LOOP(T, gg * ((T)1 - w * w)) break;                                            \
  case SGNN_U_SIGMOID: BW_LOOP(T, gg * w * ((T)1 - w)) break;                                         \
  case SGNN_U_RELU: BW_LOOP(T, v > 0 ? gg : (T)0) break;                                              \
  case SGNN_U_SOFTPLUS: BW_LOOP(T, gg * (T)sg_sigmoid(v)) break;                                     \
  case SGNN_U_EXP: BW_LOOP(T, gg * w) break;                                                          \
  case SGNN_U_LOG: BW_LOOP(T, gg / v) break;                                                          \
  case SGNN_U_SQRT: BW_LOOP(T, gg * (T)0.5 / w) break;                                                \
  case SGNN_U_ABS: BW_LOOP(T, v > 0 ? gg : (v < 0 ? -gg : (T)0)) break;                               \
  case SGNN_U_STEP:                                                                                   \
  case SGNN_U_SIGN: BW_LOOP(T, (T)0) break;                                                           \
  default: return sgnn_seterr(SGNN_ERR_ARG, "cpu unary_bw: unknown op %d", op);                       \
  }

static int unary_bw_serial(int op, SgnnDType dt, long n, const void *x, const void *y, const void *g, void *out,
                           double p0, double p1)
{
  (void)p1;
  if (dt == SGNN_F64) {
    const double *X = x, *Y = y, *G = g;
    double *O = out, a = p0;
    BW_ALL(double, exp, pow)
  } else {
    const float *X = x, *Y = y, *G = g;
    float *O = out, a = (float)p0;
    BW_ALL(float, expf, powf)
  }
  return 0;
}

/* Large element-wise loops run in fixed pieces of SGNN_PIECE elements shared by the threads of
 * parallel.c (the conv kernels' threads: created per call, nothing spins between ops). Below two
 * pieces, or with one thread, the loop runs inline: thread start-up (~20 us) would cost more.
 * OPENMP=1 builds parallelise these loops with OpenMP instead. */
#ifdef _OPENMP
#define SGNN_OPENMP 1
#else
#define SGNN_OPENMP 0
#endif
typedef struct {
  int op, rc;
  SgnnDType dt;
  long n;
  const void *x, *y, *g;
  void *out;
  double p0, p1;
} UnaryJob;

static const void *piece_ptr(const void *p, SgnnDType dt, long i)
{
  return p ? (const char *)p + i * sgnn_esize(dt) : NULL;
}

static void unary_piece(void *ctx, int i0, int i1)
{
  UnaryJob *J = ctx;
  long a = (long)i0 * SGNN_PIECE, b = (long)i1 * SGNN_PIECE < J->n ? (long)i1 * SGNN_PIECE : J->n;
  int rc = J->g ? unary_bw_serial(J->op, J->dt, b - a, piece_ptr(J->x, J->dt, a), piece_ptr(J->y, J->dt, a),
                                  piece_ptr(J->g, J->dt, a), (void *)piece_ptr(J->out, J->dt, a), J->p0, J->p1)
                : unary_serial(J->op, J->dt, b - a, piece_ptr(J->x, J->dt, a), (void *)piece_ptr(J->out, J->dt, a), J->p0,
                               J->p1);
  if (rc) __atomic_store_n(&J->rc, rc, __ATOMIC_RELAXED);
}

static int cpu_unary(int op, SgnnDType dt, long n, const void *x, void *y, double p0, double p1)
{
  if (n < 2 * SGNN_PIECE || sgnn_num_threads() < 2 || SGNN_OPENMP) return unary_serial(op, dt, n, x, y, p0, p1);
  UnaryJob J = {.op = op, .dt = dt, .n = n, .x = x, .out = y, .p0 = p0, .p1 = p1};
  sgnn_parallel_for((int)((n + SGNN_PIECE - 1) / SGNN_PIECE), unary_piece, &J);
  return J.rc;
}

static int cpu_unary_bw(int op, SgnnDType dt, long n, const void *x, const void *y, const void *g, void *out,
                        double p0, double p1)
{
  if (n < 2 * SGNN_PIECE || sgnn_num_threads() < 2 || SGNN_OPENMP)
    return unary_bw_serial(op, dt, n, x, y, g, out, p0, p1);
  UnaryJob J = {.op = op, .dt = dt, .n = n, .x = x, .y = y, .g = g, .out = out, .p0 = p0, .p1 = p1};
  sgnn_parallel_for((int)((n + SGNN_PIECE - 1) / SGNN_PIECE), unary_piece, &J);
  return J.rc;
}

/* 5-d loop over it->shape; the innermost dimension gets specialised
 * unit-stride / broadcast variants, which covers bias adds and row scalings */
__attribute__((unused)) static long iter_numel(const SgnnIter *it)
{
  long n = 1;
  for (int d = 0; d < SGNN_MAX_DIMS; d++) n *= it->shape[d];
  return n;
}

/* ITER5_PAR may only be used where iterations write distinct outputs
 * (binary, copy); reductions accumulate into shared outputs: ITER5_SEQ. */
#define ITER5_SEQ(it, ...)                                                                                   \
  for (int i0 = 0; i0 < it->shape[0]; i0++)                                                           \
    for (int i1 = 0; i1 < it->shape[1]; i1++)                                                         \
      for (int i2 = 0; i2 < it->shape[2]; i2++)                                                       \
        for (int i3 = 0; i3 < it->shape[3]; i3++) {                                                   \
          long oa = i0 * it->sa[0] + i1 * it->sa[1] + i2 * it->sa[2] + i3 * it->sa[3];                \
          long ob = i0 * it->sb[0] + i1 * it->sb[1] + i2 * it->sb[2] + i3 * it->sb[3];                \
          long oo = i0 * it->so[0] + i1 * it->so[1] + i2 * it->so[2] + i3 * it->so[3];                \
          int n4 = it->shape[4];                                                                      \
          long sa4 = it->sa[4], sb4 = it->sb[4], so4 = it->so[4];                                     \
          (void)ob;                                                                                   \
          (void)sb4;                                                                                  \
          __VA_ARGS__                                                                                 \
        }

#define ITER5_PAR(it, ...) OMP_ITER ITER5_SEQ(it, __VA_ARGS__)

#define BIN_INNER(T, F) /* F(x, y): the element-wise function */                                      \
  {                                                                                                   \
    const T *pa = A + oa, *pb = B + ob;                                                               \
    T *po = O + oo;                                                                                   \
    if (sa4 == 1 && sb4 == 1 && so4 == 1)                                                             \
      for (int j = 0; j < n4; j++) po[j] = F(pa[j], pb[j]);                                           \
    else if (sa4 == 1 && sb4 == 0 && so4 == 1) {                                                      \
      T bv = pb[0];                                                                                   \
      for (int j = 0; j < n4; j++) po[j] = F(pa[j], bv);                                              \
    } else if (sa4 == 0 && sb4 == 1 && so4 == 1) {                                                    \
      T av = pa[0];                                                                                   \
      for (int j = 0; j < n4; j++) po[j] = F(av, pb[j]);                                              \
    } else                                                                                            \
      for (int j = 0; j < n4; j++) po[j * so4] = F(pa[j * sa4], pb[j * sb4]);                         \
  }

#define F_ADD(x, y) ((x) + (y))
#define F_SUB(x, y) ((x) - (y))
#define F_MUL(x, y) ((x) * (y))
#define F_DIV(x, y) ((x) / (y))
#define F_TANHBW(g, y) ((g) * (1 - (y) * (y))) /* tanh's derivative from its output */

static int cpu_binary(int op, SgnnDType dt, const SgnnIter *it, const void *a, const void *b, void *out)
{
  FOR_T(dt, {
    const T *A = a, *B = b;
    T *O = out;
    switch (op) {
    case SGNN_B_ADD: ITER5_PAR(it, BIN_INNER(T, F_ADD)) break;
    case SGNN_B_SUB: ITER5_PAR(it, BIN_INNER(T, F_SUB)) break;
    case SGNN_B_MUL: ITER5_PAR(it, BIN_INNER(T, F_MUL)) break;
    case SGNN_B_DIV: ITER5_PAR(it, BIN_INNER(T, F_DIV)) break;
    case SGNN_B_TANHBW: ITER5_PAR(it, BIN_INNER(T, F_TANHBW)) break;
    default: return sgnn_seterr(SGNN_ERR_ARG, "cpu binary: unknown op %d", op);
    }
  });
  return 0;
}

static int cpu_copy_strided(SgnnDType dt, const SgnnIter *it, const void *src, void *dst)
{
  FOR_T(dt, {
    const T *S = src;
    T *D = dst;
    ITER5_PAR(it, {
      const T *ps = S + oa;
      T *pd = D + oo;
      if (sa4 == 1 && so4 == 1)
        memcpy(pd, ps, sizeof(T) * n4);
      else if (sa4 == 0 && so4 == 1)
        for (int j = 0; j < n4; j++) pd[j] = ps[0];
      else
        for (int j = 0; j < n4; j++) pd[j * so4] = ps[j * sa4];
    })
  });
  return 0;
}

static int cpu_reduce_sum(SgnnDType dt, const SgnnIter *it, const void *src, void *dst)
{
  FOR_T(dt, {
    const T *S = src;
    T *D = dst;
    ITER5_SEQ(it, {
      const T *ps = S + oa;
      T *pd = D + oo;
      if (so4 == 0 && sa4 == 1) {
        T acc = 0;
        for (int j = 0; j < n4; j++) acc += ps[j];
        pd[0] += acc;
      } else if (so4 == 1 && sa4 == 1)
        for (int j = 0; j < n4; j++) pd[j] += ps[j];
      else
        for (int j = 0; j < n4; j++) pd[j * so4] += ps[j * sa4];
    })
  });
  return 0;
}

static int cpu_index_select(SgnnDType dt, long outer, long nsrc, long inner, const void *src, const long *idx,
                            long nidx, void *out)
{
  FOR_T(dt, {
    const T *S = src;
    T *O = out;
    for (long o = 0; o < outer; o++)
      for (long j = 0; j < nidx; j++) {
        const T *ps = S + (o * nsrc + idx[j]) * inner;
        T *po = O + (o * nidx + j) * inner;
        for (long i = 0; i < inner; i++) po[i] = ps[i];
      }
  });
  return 0;
}

static int cpu_scatter_add(SgnnDType dt, long outer, long nidx, long inner, const void *src, const long *idx,
                           long ndst, void *out)
{
  FOR_T(dt, {
    const T *S = src;
    T *O = out;
    for (long o = 0; o < outer; o++)
      for (long j = 0; j < nidx; j++) {
        const T *ps = S + (o * nidx + j) * inner;
        T *po = O + (o * ndst + idx[j]) * inner;
        for (long i = 0; i < inner; i++) po[i] += ps[i];
      }
  });
  return 0;
}

/* im2col: x [N,C,D,H,W] -> cols [C*kd*kh*kw, N, rows*Wo] for the output
 * rows [r0, r1) (all by default), zero outside (padding). col2im is the
 * exact adjoint and accumulates into x. The valid ow range depends only on
 * the kernel offset e, so it is computed once per (c, a, b, e). */
#define CONV_LOOPS(BODY)                                                                                \
  long S_in = (long)g->D * g->H * g->W;                                                                \
  int q0 = g->r0, q1 = g->r1 ? g->r1 : g->Do * g->Ho;                                                  \
  long S_out = (long)(q1 - q0) * g->Wo;                                                                \
  int K = g->k[0] * g->k[1] * g->k[2];                                                                 \
  OMP_CONV                                                                                            \
  for (int c = 0; c < g->C; c++)                                                                      \
    for (int a = 0; a < g->k[0]; a++)                                                                 \
      for (int b = 0; b < g->k[1]; b++)                                                               \
        for (int e = 0; e < g->k[2]; e++) {                                                           \
          int lo = 0, hi = g->Wo; /* 0 <= ow*s - p + e < W */                                         \
          while (lo < hi && lo * g->s[2] - g->p[2] + e < 0) lo++;                                     \
          while (hi > lo && (hi - 1) * g->s[2] - g->p[2] + e >= g->W) hi--;                           \
          for (int n = 0; n < g->N; n++) {                                                            \
            long row = (((long)c * K + (a * g->k[1] + b) * g->k[2] + e) * g->N + n) * S_out;           \
            long xb = ((long)n * g->C + c) * S_in;                                                    \
            int od = q0 / g->Ho, oh = q0 % g->Ho; /* advanced incrementally: no division per row */   \
            for (int q = q0; q < q1; q++, oh = oh + 1 == g->Ho ? (od++, 0) : oh + 1) {                \
              int id = od * g->s[0] - g->p[0] + a;                                                    \
              int ih = oh * g->s[1] - g->p[1] + b;                                                    \
              long cb = row + (long)(q - q0) * g->Wo;                                                 \
              int ok = id >= 0 && id < g->D && ih >= 0 && ih < g->H;                                  \
              long xr = xb + ((long)id * g->H + ih) * g->W;                                           \
              int l0 = ok ? lo : 0, h0 = ok ? hi : 0;                                                 \
              BODY                                                                                    \
            }                                                                                         \
          }                                                                                           \
        }

static int cpu_im2col(SgnnDType dt, const SgnnConvGeom *g, const void *x, void *cols)
{
  FOR_T(dt, {
    const T *X = x;
    T *Cl = cols;
    CONV_LOOPS({
      T *pc = Cl + cb;
      for (int ow = 0; ow < l0; ow++) pc[ow] = 0;
      if (g->s[2] == 1) {
        const T *px = X + xr - g->p[2] + e;
        for (int ow = l0; ow < h0; ow++) pc[ow] = px[ow];
      } else
        for (int ow = l0; ow < h0; ow++) pc[ow] = X[xr + ow * g->s[2] - g->p[2] + e];
      for (int ow = h0 > l0 ? h0 : l0; ow < g->Wo; ow++) pc[ow] = 0;
    })
  });
  return 0;
}

static int cpu_col2im(SgnnDType dt, const SgnnConvGeom *g, const void *cols, void *x)
{
  FOR_T(dt, {
    const T *Cl = cols;
    T *X = x;
    CONV_LOOPS({
      const T *pc = Cl + cb;
      if (g->s[2] == 1) {
        T *px = X + xr - g->p[2] + e;
        for (int ow = l0; ow < h0; ow++) px[ow] += pc[ow];
      } else
        for (int ow = l0; ow < h0; ow++) X[xr + ow * g->s[2] - g->p[2] + e] += pc[ow];
    })
  });
  return 0;
}

/* max pooling (no padding): global flat index of each window's maximum
 * (first one on ties, so the choice is deterministic) */
static int cpu_maxpool_idx(SgnnDType dt, const SgnnConvGeom *g, const void *x, long *idx)
{
  FOR_T(dt, {
    const T *X = x;
    long S_in = (long)g->D * g->H * g->W;
    long o = 0;
    for (long nc = 0; nc < (long)g->N * g->C; nc++)
      for (int od = 0; od < g->Do; od++)
        for (int oh = 0; oh < g->Ho; oh++)
          for (int ow = 0; ow < g->Wo; ow++, o++) {
            long best = -1;
            T bv = 0;
            for (int a = 0; a < g->k[0]; a++)
              for (int b = 0; b < g->k[1]; b++)
                for (int e = 0; e < g->k[2]; e++) {
                  long p = nc * S_in + ((long)(od * g->s[0] + a) * g->H + oh * g->s[1] + b) * g->W + ow * g->s[2] + e;
                  if (best < 0 || X[p] > bv) {
                    best = p;
                    bv = X[p];
                  }
                }
            idx[o] = best;
          }
  });
  return 0;
}

static int cpu_sumsq(SgnnDType dt, long n, const void *x, double *res)
{
  double s = 0;
  FOR_T(dt, {
    const T *X = x;
    for (long i = 0; i < n; i++) s += (double)X[i] * X[i];
  });
  *res = s;
  return 0;
}

static int cpu_optim(const SgnnOptimArgs *A)
{
  FOR_T(A->dtype, {
    T *p = A->p, *m = A->m, *v = A->v;
    const T *g = A->g;
    const T lr = (T)A->lr, b1 = (T)A->b1, b2 = (T)A->b2, eps = (T)A->eps, wd = (T)A->wd, mu = (T)A->momentum;
    switch (A->type) {
    case SGNN_SGD:
      for (long i = 0; i < A->n; i++) {
        T gi = g[i] + wd * p[i];
        if (m) {
          m[i] = A->first ? gi : mu * m[i] + gi; /* torch: buffer starts at g */
          gi = A->nesterov ? gi + mu * m[i] : m[i];
        }
        p[i] -= lr * gi;
      }
      break;
    case SGNN_ADAM:
    case SGNN_ADAMW: {
      const T c1 = (T)(1.0 / A->bc1), c2 = (T)(1.0 / A->bc2);
      const int decoupled = A->type == SGNN_ADAMW;
      for (long i = 0; i < A->n; i++) {
        T gi = g[i];
        if (decoupled)
          p[i] -= lr * wd * p[i];
        else
          gi += wd * p[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        p[i] -= lr * (m[i] * c1) / ((T)sqrt((double)(v[i] * c2)) + eps);
      }
    } break;
    case SGNN_LION:
      for (long i = 0; i < A->n; i++) {
        T c = b1 * m[i] + (1 - b1) * g[i];
        p[i] -= lr * wd * p[i];
        p[i] -= lr * (c > 0 ? (T)1 : (c < 0 ? (T)-1 : (T)0));
        m[i] = b2 * m[i] + (1 - b2) * g[i];
      }
      break;
    default: return sgnn_seterr(SGNN_ERR_ARG, "cpu optim: unknown optimizer %d", (int)A->type);
    }
  });
  return 0;
}

static SgnnBackend cpu_backend = {
  .name = "cpu",
  .alloc = cpu_alloc,
  .free = cpu_free,
  .h2d = cpu_copy,
  .d2h = cpu_copy,
  .d2d = cpu_copy,
  .fill = cpu_fill,
  .unary = cpu_unary,
  .unary_bw = cpu_unary_bw,
  .binary = cpu_binary,
  .copy_strided = cpu_copy_strided,
  .reduce_sum = cpu_reduce_sum,
  .gemm = sgnn_cpu_gemm,
  .index_select = cpu_index_select,
  .scatter_add = cpu_scatter_add,
  .im2col = cpu_im2col,
  .col2im = cpu_col2im,
  .maxpool_idx = cpu_maxpool_idx,
  .sumsq = cpu_sumsq,
  .optim = cpu_optim,
};

SgnnBackend *sgnn_backend_cpu(void) { return &cpu_backend; }

/* contiguous iterator for a shape padded on the left to 5 dims */
void sgnn_iter_init(SgnnIter *it, int ndim, const int *shape)
{
  int pad = SGNN_MAX_DIMS - ndim;
  long s = 1;
  for (int d = SGNN_MAX_DIMS - 1; d >= 0; d--) {
    int e = d >= pad ? shape[d - pad] : 1;
    it->shape[d] = e;
    it->sa[d] = it->sb[d] = it->so[d] = s;
    s *= e;
  }
}
