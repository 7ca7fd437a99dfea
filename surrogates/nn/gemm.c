/* gemm.c -- batched GEMM for the CPU backend: CBLAS when the build found one
 * (SGNN_HAVE_CBLAS), otherwise a plain C kernel. The fallback is blocked
 * and written so the inner loop vectorises (i-k-j order, unit stride on C and
 * B); it is correct for every shape, just slower than OpenBLAS. */
#include "sgnn_impl.h"
#ifdef SGNN_HAVE_CBLAS
#include <cblas.h>
#endif

#ifndef SGNN_HAVE_CBLAS
#define GEMM_PLAIN(T, NAME)                                                                             \
  static void NAME(int ta, int tb, int M, int N, int K, T alpha, const T *A, const T *B, T beta, T *C)   \
  {                                                                                                   \
    /* C = beta C first, then C += alpha op(A) op(B) */                                               \
    for (long i = 0; i < (long)M * N; i++) C[i] = beta == 0 ? (T)0 : beta * C[i];                     \
    const int KB = 128;                                                                               \
    for (int k0 = 0; k0 < K; k0 += KB) {                                                              \
      int k1 = k0 + KB < K ? k0 + KB : K;                                                             \
      for (int i = 0; i < M; i++) {                                                                   \
        T *c = C + (long)i * N;                                                                       \
        for (int k = k0; k < k1; k++) {                                                               \
          T a = alpha * (ta ? A[(long)k * M + i] : A[(long)i * K + k]);                               \
          if (!tb) {                                                                                  \
            const T *b = B + (long)k * N;                                                             \
            for (int j = 0; j < N; j++) c[j] += a * b[j];                                             \
          } else {                                                                                    \
            for (int j = 0; j < N; j++) c[j] += a * B[(long)j * K + k];                               \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
  }
GEMM_PLAIN(float, gemm_plain_f)
GEMM_PLAIN(double, gemm_plain_d)
#endif

int sgnn_cpu_gemm(SgnnDType dt, int ta, int tb, int M, int N, int K, double alpha, const void *A, long sA,
                  const void *B, long sB, double beta, void *C, long sC, int batch)
{
  for (int b = 0; b < batch; b++) {
    /* a shared C accumulates over the batch: only the first product sees beta */
    double bt = (sC == 0 && b > 0) ? 1.0 : beta;
    if (dt == SGNN_F64) {
      const double *a = (const double *)A + b * sA, *bb = (const double *)B + b * sB;
      double *c = (double *)C + b * sC;
#ifdef SGNN_HAVE_CBLAS
      if (M && N)
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, a,
                    ta ? M : K, bb, tb ? K : N, bt, c, N);
#else
      gemm_plain_d(ta, tb, M, N, K, alpha, a, bb, bt, c);
#endif
    } else {
      const float *a = (const float *)A + b * sA, *bb = (const float *)B + b * sB;
      float *c = (float *)C + b * sC;
#ifdef SGNN_HAVE_CBLAS
      if (M && N)
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K,
                    (float)alpha, a, ta ? M : K, bb, tb ? K : N, (float)bt, c, N);
#else
      gemm_plain_f(ta, tb, M, N, K, (float)alpha, a, bb, (float)bt, c);
#endif
    }
  }
  return 0;
}
