/* bench_spatial.c -- one training step (forward + backward + gradient sum) of
 * a 3-D conv stack on 64^3 samples under a data x spatial process grid.
 *
 *   mpiexec -n G*S bench_spatial G S NGLOBAL [overlap|blocking] [STEPS] [DEPTH]
 *
 * Model: L layers of conv 3x3x3 (C -> C channels, padding 1) + ReLU, f32,
 * loss sum(y^2), on samples of DEPTH x 64 x 64 (DEPTH 64 by default; 128 on
 * 2 spatial ranks is weak scaling of the sample size). G data groups share the NGLOBAL samples (as evenly as
 * possible), each sample split along D over S spatial ranks. "blocking"
 * waits for the halo before convolving (no overlap) for comparison.
 * Prints the step time (max over ranks; min and mean over STEPS after one
 * warm-up), and the exchange alone: one forward halo of the first layer's
 * input and the gradient allreduce, timed without compute. Figures only. */
#include "sgpar.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                                                        \
  do {                                                                                                \
    if (call) {                                                                                       \
      fprintf(stderr, "%s failed: %s | %s\n", #call, sgnn_last_error(), sgpar_last_error());         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

enum { L = 3, C = 8, E = 64 };

static double maxall(double t)
{
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    if (!rank) fprintf(stderr, "usage: bench_spatial G S NGLOBAL [blocking] [STEPS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int G = atoi(argv[1]), S = atoi(argv[2]), NG = atoi(argv[3]), blocking = argc > 4 && !strcmp(argv[4], "blocking");
  int steps = argc > 5 ? atoi(argv[5]) : 3, depth = argc > 6 ? atoi(argv[6]) : E;
  SgparGrid grid;
  SgnnBackend *be;
  OK(sgnn_backend_get("cpu", &be));
  OK(sgpar_grid_create(MPI_COMM_WORLD, G, S, &grid));
  int dg = sgpar_grid_data_group(grid), nloc = NG / G + (dg < NG % G);
  SgparSplit sp;
  OK(sgpar_split_create(grid, 2, depth, NULL, &sp));
  SgnnParams P;
  SgnnTensor w[L], b[L];
  OK(sgnn_params_create(be, SGNN_F32, &P));
  for (int l = 0; l < L; l++) {
    char nm[16];
    snprintf(nm, sizeof nm, "w%d", l);
    OK(sgnn_params_add(P, nm, 5, (int[5]){C, C, 3, 3, 3}, &w[l]));
    snprintf(nm, sizeof nm, "b%d", l);
    OK(sgnn_params_add(P, nm, 1, (int[1]){C}, &b[l]));
  }
  OK(sgnn_params_setup(P));
  SgnnRng rng;
  sgnn_rng_init(&rng, 1);
  OK(sgnn_init_uniform(sgnn_params_values(P), -0.1, 0.1, &rng));
  SgparDP dp;
  OK(sgpar_dp_create(sgpar_grid_comm(grid), P, 1 << 20, &dp));
  int xs[5] = {nloc, C, sp.ax[0].n, E, E}, one[3] = {1, 1, 1}, pad[3] = {1, 1, 1}, pad0[3] = {0, 1, 1};
  SgnnTensor x;
  OK(sgnn_tensor_zeros(be, SGNN_F32, 5, xs, &x));
  OK(sgnn_init_uniform(x, -1, 1, &rng));
  double tmin = 1e30, tsum = 0, best[3] = {0, 0, 0}; /* phases of the fastest step: forward, backward, sync wait */
  for (int s = 0; s <= steps; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    OK(sgnn_params_zero_grad(P));
    OK(sgpar_dp_begin(dp, sgpar_grid_sample_count(grid, nloc)));
    SgnnTensor h = sgnn_tensor_ref(x), y, L2, loss;
    for (int l = 0; l < L; l++) {
      SgnnTensor z, hp;
      if (blocking && S > 1) { /* halo first, then one convolution: nothing overlaps */
        OK(sgpar_halo(grid, &sp.ax[0], h, 1, &hp));
        OK(sgnn_conv3d(hp, w[l], b[l], one, pad0, &z));
        sgnn_tensor_free(&hp);
      } else
        OK(sgpar_conv3d(grid, &sp, h, w[l], b[l], one, pad, &z));
      sgnn_tensor_free(&h);
      OK(sgnn_relu(z, &h));
      sgnn_tensor_free(&z);
    }
    y = h;
    OK(sgnn_mul(y, y, &L2));
    OK(sgnn_sum(L2, 0, NULL, 0, &loss));
    double t1 = MPI_Wtime();
    OK(sgnn_backward(loss));
    double t2 = MPI_Wtime();
    OK(sgpar_dp_end(dp, NULL));
    double t3 = MPI_Wtime(), t = maxall(t3 - t0), ph[3] = {t1 - t0, t2 - t1, t3 - t2};
    MPI_Allreduce(MPI_IN_PLACE, ph, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    sgnn_tensor_free(&y);
    sgnn_tensor_free(&L2);
    sgnn_tensor_free(&loss);
    if (s == 0) continue; /* warm-up: allocator caches, page faults */
    if (t < tmin) memcpy(best, ph, sizeof best);
    tmin = t < tmin ? t : tmin;
    tsum += t;
  }
  /* the exchanges alone (no compute to hide them) */
  double th = 0, ta = 0;
  for (int r = 0; r < 5; r++) {
    SgnnTensor hp;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (S > 1) {
      OK(sgpar_halo(grid, &sp.ax[0], x, 1, &hp));
      sgnn_tensor_free(&hp);
    }
    double t1 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, sgnn_tensor_data(sgnn_params_grads(P)), (int)sgnn_tensor_numel(sgnn_params_grads(P)),
                  MPI_FLOAT, MPI_SUM, sgpar_grid_comm(grid));
    double t2 = MPI_Wtime();
    th += maxall(t1 - t0) / 5;
    ta += maxall(t2 - t1) / 5;
  }
  long halo_bytes = S > 1 ? 2L * nloc * C * E * E * 4 : 0; /* one plane to each side, interior ranks */
  if (!rank)
    printf("grid %dx%d  global batch %d x %dx%dx%d  %-8s  step min %.3f s  mean %.3f s  (forward %.3f, backward %.3f, sync wait "
           "%.4f)  | halo alone %.2f ms (%ld KiB out per "
           "rank per layer), grad allreduce alone %.2f ms (%d buckets, %d started in backward)\n",
           G, S, NG, depth, E, E, blocking ? "blocking" : "overlap", tmin, tsum / steps, best[0], best[1], best[2], 1e3 * th, halo_bytes / 1024, 1e3 * ta,
           sgpar_dp_nbuckets(dp), sgpar_dp_overlapped(dp));
  sgnn_tensor_free(&x);
  sgpar_dp_destroy(&dp);
  sgnn_params_destroy(&P);
  sgpar_grid_destroy(&grid);
  MPI_Finalize();
  return 0;
}
