/* Machine roofs measured in the same benchmark run as the Vlasov kernels (tests/bench/vlasov/run.sh):
   STREAM-like triad bandwidth (one thread, arrays far larger than cache) and OpenBLAS DGEMM rate.
   Prints "triad_GBs X" and "dgemm_GFlops Y" (best of 5). Not a pass/fail test. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cblas.h>

static double Now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(void)
{
  const size_t n = (size_t)1 << 23; /* 64 MiB per array */
  double      *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c), best = 0;
  if (!a || !b || !c) return 1;
  for (size_t i = 0; i < n; i++) { a[i] = 0; b[i] = 1.0 + i % 7; c[i] = 2.0 - i % 5; }
  for (int r = 0; r < 5; r++) {
    double t0 = Now();
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    double t = Now() - t0, bw = 3.0 * n * sizeof(double) / t / 1e9;
    if (bw > best) best = bw;
  }
  printf("triad_GBs %.3f (check %g)\n", best, a[n / 2]);
  free(a); free(b); free(c);
  const int m = 1024;
  double   *A = malloc(sizeof(double) * m * m), *B = malloc(sizeof(double) * m * m), *C = malloc(sizeof(double) * m * m);
  if (!A || !B || !C) return 1;
  for (int i = 0; i < m * m; i++) { A[i] = 1.0 / (1 + i % 13); B[i] = 1.0 / (1 + i % 11); C[i] = 0; }
  best = 0;
  for (int r = 0; r < 5; r++) {
    double t0 = Now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, A, m, B, m, 0.0, C, m);
    double t = Now() - t0, gf = 2.0 * m * m * (double)m / t / 1e9;
    if (gf > best) best = gf;
  }
  printf("dgemm_GFlops %.3f (check %g)\n", best, C[m + 1]);
  free(A); free(B); free(C);
  return 0;
}
