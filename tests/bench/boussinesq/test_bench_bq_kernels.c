/* The two kernels of a Boussinesq step timed alone, for tests/bench/boussinesq/run.sh: FFTW (the
   x-transforms) and LAPACK getrs (the z-solves), with the sizes, counts and plan flags of the
   solver (physics/boussinesq), so that the benchmark can say which share of a step they take.

   FFTW: per z row and IMEX stage the solver transforms u, w and, for each of the 3 advected
   quantities (vorticity, b, u), d/dx and d/dz backward and the product forward: 8 c2r + 3 r2c of
   mx = 3 nx / 2 points: the transforms inside the solver's step (its log event SgSolverStep). The
   step-size estimate, outside that event, adds 3 c2r per row per step (u, w, db/dz) and is not
   counted here. Same plans as
   the solver (FFTW_ESTIMATE | FFTW_UNALIGNED, one 1-D row at a time). A c2r destroys its input,
   so each transform gets a fresh copy of a precomputed row; the copies alone are timed in an
   identical loop and subtracted, so the figure is FFTW's time only.
   z-solves: per stage, for each of the nk = nx / 2 modes, one getrs with the n x n LU factors of
   the buoyancy operator and one with those of the streamfunction operator (real and imaginary
   parts: 2 right-hand sides each), plus the mean flow (1 right-hand side), n = nz. Distinct factors
   per mode, as in the solver (2 nk n^2 doubles: memory traffic is part of the cost). The right-hand
   sides are refreshed by one copy per stage (2 n (2 nk + 1) doubles, < 1% of the solves' traffic).
   Each figure is the fastest of TRIALS trials of REPS steps.
   Usage: test_bench_bq_kernels NX NZ STAGES REPS
   prints  "FFTW   nx nz stages seconds_per_step transforms_per_step ns_per_transform"
           "ZSOLVE nx nz stages seconds_per_step solves_per_step ns_per_solve" */
#include <complex.h>
#include <math.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv, double *b, const int *ldb, int *info);

/* CPU time of the process: on the shared development machine the wall clock counts the time other
   processes hold the core; the solver's figures in run.sh are scaled to CPU time the same way */
static double Now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define NPOOL 8  /* distinct input rows, cycled */
#define TRIALS 5 /* each figure is the fastest of 5 trials: the development machine is shared, and
                    the minimum is the best estimate of the uncontended cost */

/* one step's transforms; with fft = 0 only the input copies (the subtracted overhead) */
static double FftStep(int nz, int stages, int mx, fftw_plan b, fftw_plan f, fftw_complex *pool, double *rpool, fftw_complex *c, double *r, int fft)
{
  const size_t cb = (mx / 2 + 1) * sizeof(fftw_complex), rb = mx * sizeof(double);
  double       sink = 0;
  int          k = 0;
  for (int j = 0; j < nz; j++) {
    for (int s = 0; s < stages; s++) {
      for (int q = 0; q < 8; q++, k++) { /* u, w, 3 x (d/dx, d/dz): backward */
        memcpy(c, pool + (k % NPOOL) * (mx / 2 + 1), cb);
        if (fft) fftw_execute_dft_c2r(b, c, r);
        sink += r[q];
      }
      for (int q = 0; q < 3; q++, k++) { /* 3 products: forward */
        memcpy(r, rpool + (k % NPOOL) * mx, rb);
        if (fft) fftw_execute_dft_r2c(f, r, c);
        sink += creal(c[1]);
      }
    }
  }
  return sink;
}

int main(int argc, char **argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: %s NX NZ STAGES REPS\n", argv[0]);
    return 1;
  }
  const int nx = atoi(argv[1]), nz = atoi(argv[2]), stages = atoi(argv[3]), reps = atoi(argv[4]), mx = 3 * nx / 2, nk = nx / 2;
  if (nx < 4 || nx % 2 || nz < 5 || stages < 1 || reps < 1) {
    fprintf(stderr, "test_bench_bq_kernels: bad arguments\n");
    return 1;
  }
  /* FFTW */
  fftw_complex *c = fftw_alloc_complex(mx / 2 + 1), *pool = fftw_alloc_complex(NPOOL * (mx / 2 + 1));
  double       *r = fftw_alloc_real(mx), *rpool = fftw_alloc_real(NPOOL * mx);
  fftw_plan     b = fftw_plan_dft_c2r_1d(mx, c, r, FFTW_ESTIMATE | FFTW_UNALIGNED);
  fftw_plan     f = fftw_plan_dft_r2c_1d(mx, r, c, FFTW_ESTIMATE | FFTW_UNALIGNED);
  if (!c || !r || !pool || !rpool || !b || !f) return 1;
  for (int p = 0; p < NPOOL; p++) {
    for (int m = 0; m <= mx / 2; m++) pool[p * (mx / 2 + 1) + m] = (m < nk) ? (1.0 + p) / (1 + m) + I * 0.5 / (1 + m + p) : 0;
    for (int i = 0; i < mx; i++) rpool[p * mx + i] = (double)((i * (p + 3)) % 7) - 3;
  }
  double sink = FftStep(nz, stages, mx, b, f, pool, rpool, c, r, 1); /* warm-up */
  double tall = 1e30, tcopy = 1e30, t0, tfft;
  for (int trial = 0; trial < TRIALS; trial++) {
    t0 = Now();
    for (int k = 0; k < reps; k++) sink += FftStep(nz, stages, mx, b, f, pool, rpool, c, r, 1);
    tall = fmin(tall, Now() - t0);
    t0 = Now();
    for (int k = 0; k < reps; k++) sink += FftStep(nz, stages, mx, b, f, pool, rpool, c, r, 0);
    tcopy = fmin(tcopy, Now() - t0);
  }
  tfft = (tall - tcopy) / reps;
  const int ntr = nz * 11 * stages;
  printf("FFTW   %d %d %d %.6e %d %.1f (checksum %g)\n", nx, nz, stages, tfft, ntr, 1e9 * tfft / ntr, sink);
  fftw_destroy_plan(b);
  fftw_destroy_plan(f);
  fftw_free(c);
  fftw_free(r);
  fftw_free(pool);
  fftw_free(rpool);

  /* LAPACK z-solves */
  const int n = nz, nn = n * n, nmat = 2 * nk + 1;
  double   *A = malloc(sizeof(double) * nn * nmat), *x = malloc(sizeof(double) * 2 * n * nmat), *x0 = malloc(sizeof(double) * 2 * n * nmat);
  int      *piv = malloc(sizeof(int) * n * nmat), info, two = 2, one = 1;
  if (!A || !x || !x0 || !piv) return 1;
  srand(1);
  for (int q = 0; q < nmat; q++) { /* diagonally dominant: LU with pivoting like the solver's operators */
    double *a = A + (size_t)q * nn;
    for (int i = 0; i < nn; i++) a[i] = (double)rand() / RAND_MAX - 0.5;
    for (int i = 0; i < n; i++) a[i + i * n] += n;
    dgetrf_(&n, &n, a, &n, piv + q * n, &info);
    if (info) return 1;
  }
  for (int i = 0; i < 2 * n * nmat; i++) x0[i] = (double)rand() / RAND_MAX;
  double sinkz = 0, tz = 1e30;
  for (int trial = 0; trial < TRIALS; trial++) {
    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
      if (rep == 0) t0 = Now();
      for (int s = 0; s < stages; s++) {
        memcpy(x, x0, sizeof(double) * 2 * n * nmat); /* fresh right-hand sides (repeated solves would underflow) */
        for (int m = 0; m < nk; m++) {
          dgetrs_("N", &n, &two, A + (size_t)(2 * m) * nn, &n, piv + 2 * m * n, x + (size_t)(2 * m) * 2 * n, &n, &info);
          dgetrs_("N", &n, &two, A + (size_t)(2 * m + 1) * nn, &n, piv + (2 * m + 1) * n, x + (size_t)(2 * m + 1) * 2 * n, &n, &info);
        }
        dgetrs_("N", &n, &one, A + (size_t)(2 * nk) * nn, &n, piv + 2 * nk * n, x + (size_t)(2 * nk) * 2 * n, &n, &info);
        sinkz += x[0];
      }
    }
    tz = fmin(tz, (Now() - t0) / reps);
  }
  const int nsol = stages * (2 * nk + 1);
  printf("ZSOLVE %d %d %d %.6e %d %.1f (checksum %g)\n", nx, nz, stages, tz, nsol, 1e9 * tz / nsol, sinkz);
  free(A);
  free(x);
  free(x0);
  free(piv);
  return 0;
}
