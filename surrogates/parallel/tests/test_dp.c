/* test_dp.c -- data-parallel gradients equal serial ones (run on 2 ranks).
 * Model: MLP 3 -> 32 -> 32 -> 1 (tanh, f64) with 256-byte buckets (5 buckets)
 * so several allreduces start while backward runs. Global batch
 * of 2B = 40 samples. Cases:
 *   equal split (B, B) and unequal splits (3, 37) and (40, 0): the reduced
 *   gradient must match a serial full-batch gradient computed on every rank
 *   to round-off (rel. 1e-13: summation order differs), and after an Adam
 *   step all ranks hold bit-identical parameters;
 *   a force loss (double backward): same checks;
 *   divide 0 (sgpar_dp_set_divide) with a loss already scaled by 1/(global count), the Deep Potential's
 *   arithmetic: the bucketed gradient equals a blocking MPI_Allreduce of the same local gradients bit
 *   for bit (two ranks: each element is one IEEE addition, whoever does it). */
#include "sgpar.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails, rank, size;
#define CHECK(c, ...)                                                                                   \
  do {                                                                                                \
    if (!(c)) {                                                                                       \
      fails++;                                                                                        \
      printf("[%d] FAIL %s:%d: ", rank, __FILE__, __LINE__);                                          \
      printf(__VA_ARGS__);                                                                            \
      printf("\n");                                                                                   \
    }                                                                                                 \
  } while (0)
#define OK(call)                                                                                        \
  do {                                                                                                \
    if (call) {                                                                                       \
      printf("[%d] %s failed: %s | %s\n", rank, #call, sgnn_last_error(), sgpar_last_error());       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

enum { NG = 40, L = 3 };
static SgnnBackend *be;
static SgnnParams P;
static SgnnTensor W[L], B[L];
static double X[NG * 3], Y[NG], FT[NG * 3];

static SgnnTensor mlp(SgnnTensor x)
{
  SgnnTensor h = sgnn_tensor_ref(x);
  for (int l = 0; l < L; l++) {
    SgnnTensor z, a;
    OK(sgnn_linear(h, W[l], B[l], &z));
    sgnn_tensor_free(&h);
    if (l < L - 1) {
      OK(sgnn_tanh(z, &a));
      sgnn_tensor_free(&z);
      h = a;
    } else
      h = z;
  }
  return h;
}

/* SUM of per-sample losses over samples [lo, hi) */
static SgnnTensor local_loss(int lo, int hi, int force)
{
  int n = hi - lo, xs[2] = {n, 3}, ys[2] = {n, force ? 3 : 1};
  SgnnTensor x, y, p, d, d2, Ls;
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, xs, X + 3 * lo, &x));
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, ys, force ? FT + 3 * lo : Y + lo, &y));
  if (force) {
    SgnnTensor E, g;
    OK(sgnn_tensor_set_requires_grad(x, 1));
    E = mlp(x);
    OK(sgnn_grad(1, &E, NULL, 1, &x, 1, &g));
    OK(sgnn_affine(g, -1.0, 0.0, &p));
    sgnn_tensor_free(&E);
    sgnn_tensor_free(&g);
  } else
    p = mlp(x);
  OK(sgnn_sub(p, y, &d));
  OK(sgnn_mul(d, d, &d2));
  OK(sgnn_sum(d2, 0, NULL, 0, &Ls));
  SgnnTensor *all[] = {&x, &y, &p, &d, &d2};
  for (int i = 0; i < 5; i++) sgnn_tensor_free(all[i]);
  return Ls;
}

static void run_case(const char *name, const int *split, int force)
{
  long np;
  OK(sgnn_params_count(P, &np));
  double *p0 = malloc(8 * np), *gref = malloc(8 * np), *g = malloc(8 * np), *pp = malloc(8 * np), *pr = malloc(8 * np);
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), p0));
  /* serial reference: full batch on this rank, no communication */
  SgnnTensor Lt = local_loss(0, NG, force);
  OK(sgnn_params_zero_grad(P));
  OK(sgnn_backward(Lt));
  sgnn_tensor_free(&Lt);
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), gref));
  for (long i = 0; i < np; i++) gref[i] /= NG;

  SgparDP dp;
  OK(sgpar_dp_create(MPI_COMM_WORLD, P, 256, &dp));
  int lo = rank ? split[0] : 0, hi = rank ? NG : split[0];
  OK(sgnn_params_zero_grad(P));
  OK(sgpar_dp_begin(dp, hi - lo));
  if (hi > lo) {
    SgnnTensor Ll = local_loss(lo, hi, force);
    OK(sgnn_backward(Ll));
    sgnn_tensor_free(&Ll);
  }
  long gc;
  OK(sgpar_dp_end(dp, &gc));
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), g));
  double num = 0, den = 0;
  for (long i = 0; i < np; i++) num += (g[i] - gref[i]) * (g[i] - gref[i]), den += gref[i] * gref[i];
  double rel = sqrt(num / den);
  CHECK(gc == NG, "%s: global count %ld", name, gc);
  CHECK(rel < 1e-13, "%s: data-parallel gradient differs from serial: rel %.3g", name, rel);
  if (hi > lo && split[0] > 0 && split[0] < NG)
    CHECK(sgpar_dp_overlapped(dp) > 0, "%s: no bucket started during backward (of %d)", name, sgpar_dp_nbuckets(dp));
  /* an optimizer step keeps the replicas identical */
  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAM, &c);
  SgnnOptim o;
  OK(sgnn_optim_create(P, &c, &o));
  OK(sgnn_optim_step(o));
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), pp));
  MPI_Bcast(pp, (int)np, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), pr));
  CHECK(!memcmp(pp, pr, 8 * np), "%s: replicas diverged after a step", name);
  if (rank == 0)
    printf("%-22s split (%d,%d): rel diff %.2e, %d buckets, %d started during backward\n", name, split[0],
           NG - split[0], rel, sgpar_dp_nbuckets(dp), sgpar_dp_overlapped(dp));
  OK(sgnn_tensor_set_f64(sgnn_params_values(P), p0)); /* restore for the next case */
  sgnn_optim_destroy(&o);
  sgpar_dp_destroy(&dp);
  free(p0);
  free(gref);
  free(g);
  free(pp);
  free(pr);
}

/* divide 0: local loss scaled by 1/NG before backward; bucketed sum vs one blocking allreduce */
static void run_prescaled(const int *split)
{
  long np;
  OK(sgnn_params_count(P, &np));
  double *g = malloc(8 * np), *gb = malloc(8 * np);
  int lo = rank ? split[0] : 0, hi = rank ? NG : split[0];
  for (int pass = 0; pass < 2; pass++) { /* 0: bucketed, divide 0; 1: plain backward + MPI_Allreduce */
    SgparDP dp = NULL;
    OK(sgnn_params_zero_grad(P));
    if (!pass) {
      OK(sgpar_dp_create(MPI_COMM_WORLD, P, 256, &dp));
      OK(sgpar_dp_set_divide(dp, 0));
      OK(sgpar_dp_begin(dp, hi - lo));
    }
    if (hi > lo) {
      SgnnTensor Ll = local_loss(lo, hi, 1), Ls;
      OK(sgnn_affine(Ll, 1.0 / NG, 0.0, &Ls));
      OK(sgnn_backward(Ls));
      sgnn_tensor_free(&Ll);
      sgnn_tensor_free(&Ls);
    }
    if (!pass) {
      long gc;
      OK(sgpar_dp_end(dp, &gc));
      CHECK(sgpar_dp_overlapped(dp) > 0 || hi == lo, "prescaled: no bucket started during backward");
      sgpar_dp_destroy(&dp);
    } else
      MPI_Allreduce(MPI_IN_PLACE, sgnn_tensor_data(sgnn_params_grads(P)), (int)np, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    OK(sgnn_tensor_to_f64(sgnn_params_grads(P), pass ? g : gb));
  }
  CHECK(!memcmp(g, gb, 8 * np), "prescaled (divide 0): bucketed gradient differs from a blocking allreduce");
  if (rank == 0) printf("%-22s split (%d,%d): bucketed (divide 0) vs blocking allreduce: %s\n", "prescaled force loss", split[0], NG - split[0], memcmp(g, gb, 8 * np) ? "DIFFERENT" : "bit-identical");
  free(g);
  free(gb);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (!rank) printf("test_dp needs exactly 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 1;
  }
  OK(sgnn_backend_get("cpu", &be));
  SgnnRng r;
  sgnn_rng_init(&r, 5); /* same seed on every rank: identical replicas */
  OK(sgnn_params_create(be, SGNN_F64, &P));
  int dims[L + 1] = {3, 32, 32, 1};
  for (int l = 0; l < L; l++) {
    int ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char n[8];
    snprintf(n, sizeof n, "W%d", l);
    OK(sgnn_params_add(P, n, 2, ws, &W[l]));
    snprintf(n, sizeof n, "b%d", l);
    OK(sgnn_params_add(P, n, 1, bs, &B[l]));
  }
  OK(sgnn_params_setup(P));
  OK(sgnn_init_normal(sgnn_params_values(P), 0, 0.5, &r));
  for (int i = 0; i < NG * 3; i++) X[i] = 2 * sgnn_rng_uniform(&r) - 1, FT[i] = sgnn_rng_normal(&r);
  for (int i = 0; i < NG; i++) Y[i] = sin(3 * X[3 * i]) + X[3 * i + 1] * X[3 * i + 2];
  const int eq[1] = {NG / 2}, uneq[1] = {3}, empty[1] = {NG};
  run_case("energy MSE", eq, 0);
  run_case("energy MSE", uneq, 0);
  run_case("energy MSE", empty, 0);
  run_case("force loss (2nd order)", eq, 1);
  run_case("force loss (2nd order)", uneq, 1);
  run_prescaled(eq);
  run_prescaled(uneq);
  sgnn_params_destroy(&P);
  int all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (!rank) printf("test_dp: %s\n", all ? "FAILED" : "all checks passed");
  MPI_Finalize();
  return all ? 1 : 0;
}
