// backend_cuda.cu -- the "cuda" backend: device memory, cuBLAS GEMM and
// one kernel per table entry, templated on the element type. Built only when
// nvcc exists: linked into build/cuda/libsgnn.a for the engine's own tests (make check-cuda), and
// built with SGNN_CUDA_PLUGIN as libsgnn_cuda.so, the plugin surge opens (backend_cudaload.c).
// maxpool_idx is deliberately absent: the dispatcher runs it on the CPU and
// logs that it did (backend.c), which keeps the fallback path exercised.
#include "sgnn_impl.h"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>

#define CU(call)                                                                                       \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) return sgnn_seterr(SGNN_ERR_BACKEND, "cuda: %s: %s", #call, cudaGetErrorString(e_)); \
  } while (0)
#define LAUNCH_CHECK() CU(cudaGetLastError())

static const int TPB = 256;
static inline unsigned nblocks(long n) { return (unsigned)((n + TPB - 1) / TPB > 65535 * 16 ? 65535 * 16 : (n + TPB - 1) / TPB); }
#define GRID_LOOP(i, n) for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)blockDim.x * gridDim.x)

static cublasHandle_t handle;

static void *cu_alloc(size_t bytes)
{
  void *p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}
static void cu_free(void *p, size_t) { cudaFree(p); }
static int cu_h2d(void *d, const void *s, size_t b)
{
  if (b) CU(cudaMemcpy(d, s, b, cudaMemcpyHostToDevice));
  return 0;
}
static int cu_d2h(void *d, const void *s, size_t b)
{
  if (b) CU(cudaMemcpy(d, s, b, cudaMemcpyDeviceToHost));
  return 0;
}
static int cu_d2d(void *d, const void *s, size_t b)
{
  if (b) CU(cudaMemcpy(d, s, b, cudaMemcpyDeviceToDevice));
  return 0;
}

template <typename T> __global__ void k_fill(long n, T *x, T v) { GRID_LOOP(i, n) x[i] = v; }
static int cu_fill(SgnnDType dt, long n, void *x, double v)
{
  if (!n) return 0;
  if (dt == SGNN_F64) k_fill<double><<<nblocks(n), TPB>>>(n, (double *)x, v);
  else k_fill<float><<<nblocks(n), TPB>>>(n, (float *)x, (float)v);
  LAUNCH_CHECK();
  return 0;
}

template <typename T> __device__ T dsig(T v) { return (T)1 / ((T)1 + exp(-v)); }
template <typename T> __global__ void k_unary(int op, long n, const T *x, T *y, T a, T b)
{
  GRID_LOOP(i, n)
  {
    T v = x[i], r;
    switch (op) {
    case SGNN_U_AFFINE: r = a * v + b; break;
    case SGNN_U_POW: r = pow(v, a); break;
    case SGNN_U_TANH: r = tanh(v); break;
    case SGNN_U_SIGMOID: r = dsig(v); break;
    case SGNN_U_RELU: r = v > 0 ? v : (T)0; break;
    case SGNN_U_SOFTPLUS: r = v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)); break;
    case SGNN_U_EXP: r = exp(v); break;
    case SGNN_U_LOG: r = log(v); break;
    case SGNN_U_SQRT: r = sqrt(v); break;
    case SGNN_U_ABS: r = fabs(v); break;
    case SGNN_U_STEP: r = v > 0 ? (T)1 : (T)0; break;
    default: r = v > 0 ? (T)1 : (v < 0 ? (T)-1 : (T)0); /* SIGN */
    }
    y[i] = r;
  }
}
static int cu_unary(int op, SgnnDType dt, long n, const void *x, void *y, double p0, double p1)
{
  if (op < 0 || op >= SGNN_U_COUNT) return sgnn_seterr(SGNN_ERR_ARG, "cuda unary: unknown op %d", op);
  if (!n) return 0;
  if (dt == SGNN_F64) k_unary<double><<<nblocks(n), TPB>>>(op, n, (const double *)x, (double *)y, p0, p1);
  else k_unary<float><<<nblocks(n), TPB>>>(op, n, (const float *)x, (float *)y, (float)p0, (float)p1);
  LAUNCH_CHECK();
  return 0;
}

template <typename T> __global__ void k_unary_bw(int op, long n, const T *X, const T *Y, const T *G, T *O, T a)
{
  GRID_LOOP(i, n)
  {
    T v = X ? X[i] : (T)0, w = Y ? Y[i] : (T)0, g = G[i], r;
    switch (op) {
    case SGNN_U_AFFINE: r = g * a; break;
    case SGNN_U_POW: r = g * a * pow(v, a - 1); break;
    case SGNN_U_TANH: r = g * ((T)1 - w * w); break;
    case SGNN_U_SIGMOID: r = g * w * ((T)1 - w); break;
    case SGNN_U_RELU: r = v > 0 ? g : (T)0; break;
    case SGNN_U_SOFTPLUS: r = g * dsig(v); break;
    case SGNN_U_EXP: r = g * w; break;
    case SGNN_U_LOG: r = g / v; break;
    case SGNN_U_SQRT: r = g * (T)0.5 / w; break;
    case SGNN_U_ABS: r = v > 0 ? g : (v < 0 ? -g : (T)0); break;
    default: r = 0;
    }
    O[i] = r;
  }
}
static int cu_unary_bw(int op, SgnnDType dt, long n, const void *x, const void *y, const void *g, void *out, double p0,
                       double)
{
  if (!n) return 0;
  if (dt == SGNN_F64)
    k_unary_bw<double><<<nblocks(n), TPB>>>(op, n, (const double *)x, (const double *)y, (const double *)g,
                                            (double *)out, p0);
  else
    k_unary_bw<float><<<nblocks(n), TPB>>>(op, n, (const float *)x, (const float *)y, (const float *)g, (float *)out,
                                           (float)p0);
  LAUNCH_CHECK();
  return 0;
}

/* decompose a linear index over the 5-d iteration shape into strided offsets */
__device__ inline void offsets(const SgnnIter &it, long i, long *oa, long *ob, long *oo)
{
  long a = 0, b = 0, o = 0;
  for (int d = SGNN_MAX_DIMS - 1; d >= 0; d--) {
    long k = i % it.shape[d];
    i /= it.shape[d];
    a += k * it.sa[d];
    b += k * it.sb[d];
    o += k * it.so[d];
  }
  *oa = a;
  *ob = b;
  *oo = o;
}
static long iter_n(const SgnnIter *it)
{
  long n = 1;
  for (int d = 0; d < SGNN_MAX_DIMS; d++) n *= it->shape[d];
  return n;
}

template <typename T> __global__ void k_binary(int op, SgnnIter it, long n, const T *A, const T *B, T *O)
{
  GRID_LOOP(i, n)
  {
    long a, b, o;
    offsets(it, i, &a, &b, &o);
    T x = A[a], y = B[b];
    O[o] = op == SGNN_B_ADD      ? x + y
           : op == SGNN_B_SUB    ? x - y
           : op == SGNN_B_MUL    ? x * y
           : op == SGNN_B_TANHBW ? x * (T(1) - y * y)
                                 : x / y;
  }
}
static int cu_binary(int op, SgnnDType dt, const SgnnIter *it, const void *a, const void *b, void *out)
{
  long n = iter_n(it);
  if (!n) return 0;
  if (dt == SGNN_F64) k_binary<double><<<nblocks(n), TPB>>>(op, *it, n, (const double *)a, (const double *)b, (double *)out);
  else k_binary<float><<<nblocks(n), TPB>>>(op, *it, n, (const float *)a, (const float *)b, (float *)out);
  LAUNCH_CHECK();
  return 0;
}

template <typename T> __global__ void k_copy(SgnnIter it, long n, const T *S, T *D)
{
  GRID_LOOP(i, n)
  {
    long a, b, o;
    offsets(it, i, &a, &b, &o);
    D[o] = S[a];
  }
}
static int cu_copy_strided(SgnnDType dt, const SgnnIter *it, const void *src, void *dst)
{
  long n = iter_n(it);
  if (!n) return 0;
  if (dt == SGNN_F64) k_copy<double><<<nblocks(n), TPB>>>(*it, n, (const double *)src, (double *)dst);
  else k_copy<float><<<nblocks(n), TPB>>>(*it, n, (const float *)src, (float *)dst);
  LAUNCH_CHECK();
  return 0;
}

template <typename T> __global__ void k_reduce(SgnnIter it, long n, const T *S, T *D)
{
  GRID_LOOP(i, n)
  {
    long a, b, o;
    offsets(it, i, &a, &b, &o);
    atomicAdd(D + o, S[a]);
  }
}
static int cu_reduce_sum(SgnnDType dt, const SgnnIter *it, const void *src, void *dst)
{
  long n = iter_n(it);
  if (!n) return 0;
  if (dt == SGNN_F64) k_reduce<double><<<nblocks(n), TPB>>>(*it, n, (const double *)src, (double *)dst);
  else k_reduce<float><<<nblocks(n), TPB>>>(*it, n, (const float *)src, (float *)dst);
  LAUNCH_CHECK();
  return 0;
}

/* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap operands */
static int cu_gemm(SgnnDType dt, int ta, int tb, int M, int N, int K, double alpha, const void *A, long sA, const void *B,
                   long sB, double beta, void *C, long sC, int batch)
{
  if (!M || !N) return 0;
  cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = ta ? M : K, ldb = tb ? K : N;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  if (sC == 0 && batch > 1) { /* shared output: accumulate the batch sequentially */
    for (int b = 0; b < batch && st == CUBLAS_STATUS_SUCCESS; b++) {
      double bt = b ? 1.0 : beta;
      if (dt == SGNN_F64)
        st = cublasDgemm(handle, opB, opA, N, M, K, &alpha, (const double *)B + b * sB, ldb, (const double *)A + b * sA,
                         lda, &bt, (double *)C, N);
      else {
        float al = (float)alpha, be = (float)bt;
        st = cublasSgemm(handle, opB, opA, N, M, K, &al, (const float *)B + b * sB, ldb, (const float *)A + b * sA, lda,
                         &be, (float *)C, N);
      }
    }
  } else if (dt == SGNN_F64) {
    st = cublasDgemmStridedBatched(handle, opB, opA, N, M, K, &alpha, (const double *)B, ldb, sB, (const double *)A, lda,
                                   sA, &beta, (double *)C, N, sC, batch);
  } else {
    float al = (float)alpha, be = (float)beta;
    st = cublasSgemmStridedBatched(handle, opB, opA, N, M, K, &al, (const float *)B, ldb, sB, (const float *)A, lda, sA,
                                   &be, (float *)C, N, sC, batch);
  }
  if (st != CUBLAS_STATUS_SUCCESS) return sgnn_seterr(SGNN_ERR_BACKEND, "cuda gemm: cuBLAS status %d (M=%d N=%d K=%d)", (int)st, M, N, K);
  return 0;
}

template <typename T>
__global__ void k_index_select(long outer, long nsrc, long inner, const T *S, const long *idx, long nidx, T *O)
{
  GRID_LOOP(i, outer * nidx * inner)
  {
    long in = i % inner, j = (i / inner) % nidx, o = i / (inner * nidx);
    O[i] = S[(o * nsrc + idx[j]) * inner + in];
  }
}
static int cu_index_select(SgnnDType dt, long outer, long nsrc, long inner, const void *src, const long *idx, long nidx,
                           void *out)
{
  long n = outer * nidx * inner;
  if (!n) return 0;
  if (dt == SGNN_F64) k_index_select<double><<<nblocks(n), TPB>>>(outer, nsrc, inner, (const double *)src, idx, nidx, (double *)out);
  else k_index_select<float><<<nblocks(n), TPB>>>(outer, nsrc, inner, (const float *)src, idx, nidx, (float *)out);
  LAUNCH_CHECK();
  return 0;
}

template <typename T>
__global__ void k_scatter_add(long outer, long nidx, long inner, const T *S, const long *idx, long ndst, T *O)
{
  GRID_LOOP(i, outer * nidx * inner)
  {
    long in = i % inner, j = (i / inner) % nidx, o = i / (inner * nidx);
    atomicAdd(O + (o * ndst + idx[j]) * inner + in, S[i]);
  }
}
static int cu_scatter_add(SgnnDType dt, long outer, long nidx, long inner, const void *src, const long *idx, long ndst,
                          void *out)
{
  long n = outer * nidx * inner;
  if (!n) return 0;
  if (dt == SGNN_F64) k_scatter_add<double><<<nblocks(n), TPB>>>(outer, nidx, inner, (const double *)src, idx, ndst, (double *)out);
  else k_scatter_add<float><<<nblocks(n), TPB>>>(outer, nidx, inner, (const float *)src, idx, ndst, (float *)out);
  LAUNCH_CHECK();
  return 0;
}

/* one thread per column entry; layout [c, kd, kh, kw][n][od, oh, ow] */
template <typename T> __global__ void k_im2col(SgnnConvGeom g, int q0, int nq, long n, const T *X, T *C)
{
  GRID_LOOP(i, n)
  {
    long r = i;
    int ow = r % g.Wo; r /= g.Wo;
    int q = q0 + (int)(r % nq); r /= nq;
    int oh = q % g.Ho, od = q / g.Ho;
    int n = r % g.N; r /= g.N;
    int e = r % g.k[2]; r /= g.k[2];
    int b = r % g.k[1]; r /= g.k[1];
    int a = r % g.k[0]; r /= g.k[0];
    int c = (int)r;
    int id = od * g.s[0] - g.p[0] + a, ih = oh * g.s[1] - g.p[1] + b, iw = ow * g.s[2] - g.p[2] + e;
    bool in = id >= 0 && id < g.D && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
    C[i] = in ? X[((((long)n * g.C + c) * g.D + id) * g.H + ih) * g.W + iw] : (T)0;
  }
}
static int cu_im2col(SgnnDType dt, const SgnnConvGeom *g, const void *x, void *cols)
{
  int q0 = g->r0, nq = (g->r1 ? g->r1 : g->Do * g->Ho) - q0;
  long n = (long)g->N * g->C * g->k[0] * g->k[1] * g->k[2] * nq * g->Wo;
  if (!n) return 0;
  if (dt == SGNN_F64) k_im2col<double><<<nblocks(n), TPB>>>(*g, q0, nq, n, (const double *)x, (double *)cols);
  else k_im2col<float><<<nblocks(n), TPB>>>(*g, q0, nq, n, (const float *)x, (float *)cols);
  LAUNCH_CHECK();
  return 0;
}

/* one thread per input element gathers every column entry (of the row
 * chunk) that read it and adds them: deterministic, no atomics */
template <typename T> __global__ void k_col2im(SgnnConvGeom g, int q0, int nq, long n, const T *Cl, T *X)
{
  GRID_LOOP(i, n)
  {
    long r = i;
    int iw = r % g.W; r /= g.W;
    int ih = r % g.H; r /= g.H;
    int id = r % g.D; r /= g.D;
    int c = r % g.C;
    long nn = r / g.C;
    long S_out = (long)nq * g.Wo, K = (long)g.k[0] * g.k[1] * g.k[2];
    T s = 0;
    for (int a = 0; a < g.k[0]; a++) {
      int t = id + g.p[0] - a;
      if (t < 0 || t % g.s[0] || t / g.s[0] >= g.Do) continue;
      int od = t / g.s[0];
      for (int b = 0; b < g.k[1]; b++) {
        int u = ih + g.p[1] - b;
        if (u < 0 || u % g.s[1] || u / g.s[1] >= g.Ho) continue;
        int oh = u / g.s[1];
        for (int e = 0; e < g.k[2]; e++) {
          int v = iw + g.p[2] - e;
          if (v < 0 || v % g.s[2] || v / g.s[2] >= g.Wo) continue;
          int ow = v / g.s[2], q = od * g.Ho + oh;
          if (q < q0 || q >= q0 + nq) continue;
          long row = ((long)c * K + (a * g.k[1] + b) * g.k[2] + e) * g.N + nn;
          s += Cl[row * S_out + (long)(q - q0) * g.Wo + ow];
        }
      }
    }
    X[i] += s;
  }
}
static int cu_col2im(SgnnDType dt, const SgnnConvGeom *g, const void *cols, void *x)
{
  int q0 = g->r0, nq = (g->r1 ? g->r1 : g->Do * g->Ho) - q0;
  long n = (long)g->N * g->C * g->D * g->H * g->W;
  if (!n) return 0;
  if (dt == SGNN_F64) k_col2im<double><<<nblocks(n), TPB>>>(*g, q0, nq, n, (const double *)cols, (double *)x);
  else k_col2im<float><<<nblocks(n), TPB>>>(*g, q0, nq, n, (const float *)cols, (float *)x);
  LAUNCH_CHECK();
  return 0;
}

template <typename T> __global__ void k_sumsq(long n, const T *X, double *res)
{
  __shared__ double part[256];
  double s = 0;
  GRID_LOOP(i, n) s += (double)X[i] * X[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(res, part[0]);
}
static int cu_sumsq(SgnnDType dt, long n, const void *x, double *res)
{
  double *d;
  CU(cudaMalloc(&d, sizeof(double)));
  CU(cudaMemset(d, 0, sizeof(double)));
  unsigned nb = nblocks(n) > 1024 ? 1024 : (nblocks(n) ? nblocks(n) : 1);
  if (dt == SGNN_F64) k_sumsq<double><<<nb, TPB>>>(n, (const double *)x, d);
  else k_sumsq<float><<<nb, TPB>>>(n, (const float *)x, d);
  LAUNCH_CHECK();
  CU(cudaMemcpy(res, d, sizeof(double), cudaMemcpyDeviceToHost));
  CU(cudaFree(d));
  return 0;
}

template <typename T> __global__ void k_optim(SgnnOptimArgs A, T *p, const T *g, T *m, T *v)
{
  const T lr = (T)A.lr, b1 = (T)A.b1, b2 = (T)A.b2, eps = (T)A.eps, wd = (T)A.wd, mu = (T)A.momentum;
  GRID_LOOP(i, A.n)
  {
    if (A.type == SGNN_SGD) {
      T gi = g[i] + wd * p[i];
      if (m) {
        m[i] = A.first ? gi : mu * m[i] + gi;
        gi = A.nesterov ? gi + mu * m[i] : m[i];
      }
      p[i] -= lr * gi;
    } else if (A.type == SGNN_LION) {
      T c = b1 * m[i] + (1 - b1) * g[i];
      p[i] -= lr * wd * p[i];
      p[i] -= lr * (c > 0 ? (T)1 : (c < 0 ? (T)-1 : (T)0));
      m[i] = b2 * m[i] + (1 - b2) * g[i];
    } else {
      T gi = g[i];
      if (A.type == SGNN_ADAMW) p[i] -= lr * wd * p[i];
      else gi += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      p[i] -= lr * (m[i] / (T)A.bc1) / (sqrt(v[i] / (T)A.bc2) + eps);
    }
  }
}
static int cu_optim(const SgnnOptimArgs *A)
{
  if (!A->n) return 0;
  if (A->dtype == SGNN_F64)
    k_optim<double><<<nblocks(A->n), TPB>>>(*A, (double *)A->p, (const double *)A->g, (double *)A->m, (double *)A->v);
  else
    k_optim<float><<<nblocks(A->n), TPB>>>(*A, (float *)A->p, (const float *)A->g, (float *)A->m, (float *)A->v);
  LAUNCH_CHECK();
  return 0;
}

static SgnnBackend cuda_backend;
static int cuda_state; /* 0 untried, 1 ready, -1 unusable */
static char cuda_why[256] = "not probed yet";

static SgnnBackend *cuda_probe(void)
{
  if (cuda_state == 0) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    cuda_state = -1;
    if (e != cudaSuccess) snprintf(cuda_why, sizeof cuda_why, "no CUDA device: cudaGetDeviceCount failed: %s (no GPU or no NVIDIA driver on this node)", cudaGetErrorString(e));
    else if (n <= 0) snprintf(cuda_why, sizeof cuda_why, "no CUDA device: cudaGetDeviceCount found 0 devices (check CUDA_VISIBLE_DEVICES)");
    else if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) snprintf(cuda_why, sizeof cuda_why, "no usable CUDA device: cuBLAS could not be initialised on the %d device(s) found", n);
    else {
      SgnnBackend *b = &cuda_backend;
      b->name = "cuda";
      b->alloc = cu_alloc;
      b->free = cu_free;
      b->h2d = cu_h2d;
      b->d2h = cu_d2h;
      b->d2d = cu_d2d;
      b->fill = cu_fill;
      b->unary = cu_unary;
      b->unary_bw = cu_unary_bw;
      b->binary = cu_binary;
      b->copy_strided = cu_copy_strided;
      b->reduce_sum = cu_reduce_sum;
      b->gemm = cu_gemm;
      b->index_select = cu_index_select;
      b->scatter_add = cu_scatter_add;
      b->im2col = cu_im2col;
      b->col2im = cu_col2im;
      b->maxpool_idx = NULL; /* CPU fallback, logged */
      b->sumsq = cu_sumsq;
      b->optim = cu_optim;
      cuda_state = 1;
    }
  }
  return cuda_state == 1 ? &cuda_backend : NULL;
}

#ifdef SGNN_CUDA_PLUGIN
/* The plugin: built with hidden visibility, so this sgnn_seterr is its own and forwards the message
   to the host library's (sgnn_last_error there); only the entry point is exported. */
static int (*host_seterr)(int, const char *, ...);

int sgnn_seterr(int code, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return host_seterr ? host_seterr(code, "%s", msg) : code;
}

extern "C" __attribute__((visibility("default"))) SgnnBackend *sgnn_cuda_plugin_open(int abi, int (*seterr)(int, const char *, ...), const char **why)
{
  if (abi != SGNN_CUDA_PLUGIN_ABI) {
    *why = "the CUDA plugin was built from other engine sources than this program: rebuild both (make)";
    return NULL;
  }
  host_seterr = seterr;
  SgnnBackend *b = cuda_probe();
  if (!b) *why = cuda_why;
  return b;
}
#else
/* why "cuda" is unusable, for the caller's error line: the device probe's own answer (no driver, no
   device, cuBLAS failed), so a user sees that the backend is in the program and what is missing */
extern "C" const char *sgnn_cuda_unavailable_reason(void) { return cuda_why; }
extern "C" SgnnBackend *sgnn_backend_cuda(void) { return cuda_probe(); }
#endif
