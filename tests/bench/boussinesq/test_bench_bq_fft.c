/* FFTW alone, for tests/bench/boussinesq/run.sh: the 1-D transforms one Boussinesq step performs,
   timed without the solver. Per z row and IMEX stage the solver transforms u, w and, for each of
   the 3 advected quantities (vorticity, b, u), d/dx and d/dz backward and the product forward:
   11 transforms of 3 nx / 2 points; the CFL estimate adds 2 per row per step. Same plans as the
   solver (FFTW_ESTIMATE | FFTW_UNALIGNED, one row at a time).
   Usage: test_bench_bq_fft NX NZ STAGES REPS  -> prints "BENCH nx nz stages seconds_per_step". */
#include <complex.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double Now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: %s NX NZ STAGES REPS\n", argv[0]);
    return 1;
  }
  const int nx = atoi(argv[1]), nz = atoi(argv[2]), stages = atoi(argv[3]), reps = atoi(argv[4]), mx = 3 * nx / 2;
  if (nx < 4 || nx % 2 || nz < 1 || stages < 1 || reps < 1) {
    fprintf(stderr, "test_bench_bq_fft: bad arguments\n");
    return 1;
  }
  fftw_complex *c = fftw_alloc_complex(mx / 2 + 1);
  double       *r = fftw_alloc_real(mx);
  fftw_plan     b = fftw_plan_dft_c2r_1d(mx, c, r, FFTW_ESTIMATE | FFTW_UNALIGNED);
  fftw_plan     f = fftw_plan_dft_r2c_1d(mx, r, c, FFTW_ESTIMATE | FFTW_UNALIGNED);
  if (!c || !r || !b || !f) return 1;
  for (int i = 0; i < mx; i++) r[i] = (double)(i % 7) - 3;
  fftw_execute(f);
  double t0 = Now(), sink = 0;
  for (int k = 0; k < reps; k++)
    for (int j = 0; j < nz; j++) {
      for (int s = 0; s < stages; s++) {
        for (int q = 0; q < 8; q++) { /* u, w, and 3 x (d/dx, d/dz): backward */
          for (int m = 0; m <= mx / 2; m++) c[m] = (m < nx / 2) ? 1.0 / (1 + m) + I * 0.5 / (1 + m) : 0;
          fftw_execute_dft_c2r(b, c, r);
          sink += r[q % mx];
        }
        for (int q = 0; q < 3; q++) { /* 3 products: forward */
          fftw_execute_dft_r2c(f, r, c);
          sink += creal(c[1]);
        }
      }
      for (int q = 0; q < 2; q++) { /* CFL: u, w */
        for (int m = 0; m <= mx / 2; m++) c[m] = (m < nx / 2) ? 1.0 / (1 + m) : 0;
        fftw_execute_dft_c2r(b, c, r);
        sink += r[0];
      }
    }
  double t = (Now() - t0) / reps;
  printf("BENCH %d %d %d %.6e (checksum %g)\n", nx, nz, stages, t, sink);
  fftw_destroy_plan(b);
  fftw_destroy_plan(f);
  fftw_free(c);
  fftw_free(r);
  return 0;
}
