/* bench_nn.c -- time per training step (forward + backward + Adam) and
 * peak memory of surge's NN engine on the shapes of the NN-engine issue.
 * Usage: bench_nn BENCH [steps]   BENCH = dp | conv | lstm | force
 * Prints one line: "BENCH median_ms peak_tensor_MB maxrss_MB".
 *        bench_nn convpass [reps]
 * times the conv block's layers pass by pass, Winograd against the direct
 * kernels (SGNN_CONV_WINOGRAD=1/0): lines "convpass C Co algo forward_ms
 * backward_ms" (backward = input + weight + bias gradient), best of reps.
 * Thread count comes from OPENBLAS_NUM_THREADS (set by run.sh). Compare
 * with bench_torch.py, which builds the same models in PyTorch.
 * SGNN_BACKEND=cuda runs on the GPU (the binary from make -C surrogates/nn
 * cuda: build/cuda/bench_nn; tests/bench/nn/run_cuda.sh against PyTorch CUDA). */
#include "sgnn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define OK(call)                                                                                        \
  do {                                                                                                \
    if (call) {                                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, sgnn_last_error());              \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static SgnnBackend *be;
static SgnnParams P;
static SgnnRng rng;

static SgnnTensor param(const char *name, int nd, const int *s)
{
  SgnnTensor t;
  OK(sgnn_params_add(P, name, nd, s, &t));
  return t;
}
static SgnnTensor randn(SgnnDType dt, int nd, const int *s)
{
  SgnnTensor t;
  OK(sgnn_tensor_zeros(be, dt, nd, s, &t));
  OK(sgnn_init_normal(t, 0, 1, &rng));
  return t;
}
static void drop(SgnnTensor *t) { sgnn_tensor_free(t); }
/* y = act(x W^T + b), consuming nothing */
static SgnnTensor dense(SgnnTensor x, SgnnTensor W, SgnnTensor b, int act)
{
  SgnnTensor z, a;
  OK(sgnn_linear(x, W, b, &z));
  if (!act) return z;
  OK(act == 1 ? sgnn_tanh(z, &a) : sgnn_relu(z, &a));
  drop(&z);
  return a;
}

/* ---- models --------------------------------------------------------------- */
static SgnnTensor Wl[8], Bl[8], X, Y;
static int nlayer;

static void mlp_setup(SgnnDType dt, int n, const int *dims)
{
  nlayer = n;
  for (int l = 0; l < n; l++) {
    int ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char nm[8];
    snprintf(nm, sizeof nm, "W%d", l);
    Wl[l] = param(nm, 2, ws);
    snprintf(nm, sizeof nm, "b%d", l);
    Bl[l] = param(nm, 1, bs);
  }
  (void)dt;
}
static void mlp_init(void)
{
  for (int l = 0; l < nlayer; l++) OK(sgnn_init_xavier_uniform(Wl[l], 1.0, &rng));
}
static SgnnTensor mlp(SgnnTensor x)
{
  SgnnTensor h = sgnn_tensor_ref(x);
  for (int l = 0; l < nlayer; l++) {
    SgnnTensor o = dense(h, Wl[l], Bl[l], l < nlayer - 1 ? 1 : 0);
    drop(&h);
    h = o;
  }
  return h;
}

static SgnnTensor loss_dp(void)
{
  SgnnTensor p = mlp(X), L;
  OK(sgnn_mse_loss(p, Y, &L));
  drop(&p);
  return L;
}

static SgnnTensor CW1, CB1, CW2, CB2;
static SgnnTensor loss_conv(void)
{
  int st[3] = {1, 1, 1}, pd[3] = {1, 1, 1};
  SgnnTensor a, b, c, d, L;
  OK(sgnn_conv3d(X, CW1, CB1, st, pd, &a));
  OK(sgnn_relu(a, &b));
  drop(&a);
  OK(sgnn_conv3d(b, CW2, CB2, st, pd, &c));
  drop(&b);
  OK(sgnn_relu(c, &d));
  drop(&c);
  OK(sgnn_mse_loss(d, Y, &L));
  drop(&d);
  return L;
}

enum { LT = 8, LB = 32, LI = 5, LH = 64 };
static SgnnTensor Wih[2], Whh[2], Bg[2], HW, HB, Xs[LT], H0;
static SgnnTensor loss_lstm(void)
{
  SgnnTensor h[2], c[2], L;
  for (int l = 0; l < 2; l++) {
    h[l] = sgnn_tensor_ref(H0);
    c[l] = sgnn_tensor_ref(H0);
  }
  for (int t = 0; t < LT; t++) {
    SgnnTensor in = sgnn_tensor_ref(Xs[t]);
    for (int l = 0; l < 2; l++) {
      SgnnTensor hn, cn;
      OK(sgnn_lstm_cell(in, h[l], c[l], Wih[l], Whh[l], Bg[l], &hn, &cn));
      drop(&h[l]);
      drop(&c[l]);
      drop(&in);
      h[l] = hn;
      c[l] = cn;
      in = sgnn_tensor_ref(hn);
    }
    drop(&in);
  }
  SgnnTensor p = dense(h[1], HW, HB, 0);
  OK(sgnn_mse_loss(p, Y, &L));
  drop(&p);
  for (int l = 0; l < 2; l++) {
    drop(&h[l]);
    drop(&c[l]);
  }
  return L;
}

static SgnnTensor loss_force(void)
{
  SgnnTensor E = mlp(X), g, F, L;
  OK(sgnn_grad(1, &E, NULL, 1, &X, 1, &g)); /* dE/dx, recorded */
  OK(sgnn_affine(g, -1.0, 0.0, &F));
  OK(sgnn_mse_loss(F, Y, &L));
  drop(&E);
  drop(&g);
  drop(&F);
  return L;
}

/* the conv block's layers, one pass at a time, under both algorithms */
static int convpass(int reps)
{
  const int shapes[2][2] = {{32, 64}, {64, 32}}, st[3] = {1, 1, 1}, pd[3] = {1, 1, 1};
  for (int sh = 0; sh < 2; sh++)
    for (int a = 0; a < 2; a++) {
      const int C = shapes[sh][0], Co = shapes[sh][1];
      int xs[5] = {8, C, 4, 16, 16}, ws[5] = {Co, C, 3, 3, 3}, bs[1] = {Co};
      setenv("SGNN_CONV_WINOGRAD", a ? "1" : "0", 1);
      SgnnTensor x = randn(SGNN_F32, 5, xs), w = randn(SGNN_F32, 5, ws), b = randn(SGNN_F32, 1, bs), y, g = NULL;
      OK(sgnn_tensor_set_requires_grad(x, 1));
      OK(sgnn_tensor_set_requires_grad(w, 1));
      OK(sgnn_tensor_set_requires_grad(b, 1));
      double fwd = 1e30, bwd = 1e30;
      for (int r = 0; r < reps; r++) {
        SgnnTensor in[3] = {x, w, b}, gr[3] = {NULL, NULL, NULL};
        double t0 = now();
        OK(sgnn_conv3d(x, w, b, st, pd, &y));
        double t1 = now();
        if (!g) g = randn(SGNN_F32, 5, (int[5]){8, Co, 4, 16, 16});
        double t2 = now();
        OK(sgnn_grad(1, &y, &g, 3, in, 0, gr));
        double t3 = now();
        fwd = fmin(fwd, t1 - t0);
        bwd = fmin(bwd, t3 - t2);
        for (int j = 0; j < 3; j++) drop(&gr[j]);
        drop(&y);
      }
      printf("convpass %d %d %s %.3f %.3f\n", C, Co, a ? "winograd" : "direct", 1e3 * fwd, 1e3 * bwd);
      drop(&x), drop(&w), drop(&b), drop(&g);
    }
  unsetenv("SGNN_CONV_WINOGRAD");
  return 0;
}

int main(int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "dp";
  int steps = argc > 2 ? atoi(argv[2]) : 30;
  OK(sgnn_backend_get(getenv("SGNN_BACKEND") ? getenv("SGNN_BACKEND") : "cpu", &be));
  sgnn_rng_init(&rng, 1);
  if (!strcmp(name, "convpass")) return convpass(argc > 2 ? atoi(argv[2]) : 30);
  SgnnTensor (*lossfn)(void) = NULL;
  SgnnDType dt = SGNN_F64;
  if (!strcmp(name, "dp")) {
    int dims[5] = {1600, 240, 240, 240, 1}, xs[2] = {192, 1600}, ys[2] = {192, 1};
    OK(sgnn_params_create(be, dt, &P));
    mlp_setup(dt, 4, dims);
    OK(sgnn_params_setup(P));
    mlp_init();
    X = randn(dt, 2, xs);
    Y = randn(dt, 2, ys);
    lossfn = loss_dp;
  } else if (!strcmp(name, "conv")) {
    dt = SGNN_F32;
    int w1[5] = {32, 4, 3, 3, 3}, b1[1] = {32}, w2[5] = {64, 32, 3, 3, 3}, b2[1] = {64};
    int xs[5] = {8, 4, 4, 16, 16}, ys[5] = {8, 64, 4, 16, 16};
    OK(sgnn_params_create(be, dt, &P));
    CW1 = param("w1", 5, w1);
    CB1 = param("b1", 1, b1);
    CW2 = param("w2", 5, w2);
    CB2 = param("b2", 1, b2);
    OK(sgnn_params_setup(P));
    OK(sgnn_init_he_normal(CW1, &rng));
    OK(sgnn_init_he_normal(CW2, &rng));
    X = randn(dt, 5, xs);
    Y = randn(dt, 5, ys);
    lossfn = loss_conv;
  } else if (!strcmp(name, "lstm")) {
    dt = SGNN_F32; /* torch's default dtype, as in its nn.LSTM */
    OK(sgnn_params_create(be, dt, &P));
    for (int l = 0; l < 2; l++) {
      int wi[2] = {4 * LH, l ? LH : LI}, wh[2] = {4 * LH, LH}, bg[1] = {4 * LH};
      char nm[8];
      snprintf(nm, sizeof nm, "Wih%d", l);
      Wih[l] = param(nm, 2, wi);
      snprintf(nm, sizeof nm, "Whh%d", l);
      Whh[l] = param(nm, 2, wh);
      snprintf(nm, sizeof nm, "b%d", l);
      Bg[l] = param(nm, 1, bg);
    }
    int hw[2] = {1, LH}, hb[1] = {1};
    HW = param("head_W", 2, hw);
    HB = param("head_b", 1, hb);
    OK(sgnn_params_setup(P));
    double k = 1.0 / sqrt(LH);
    OK(sgnn_init_uniform(sgnn_params_values(P), -k, k, &rng));
    int xs[2] = {LB, LI}, hs[2] = {LB, LH}, ys[2] = {LB, 1};
    for (int t = 0; t < LT; t++) Xs[t] = randn(dt, 2, xs);
    OK(sgnn_tensor_zeros(be, dt, 2, hs, &H0));
    Y = randn(dt, 2, ys);
    lossfn = loss_lstm;
  } else if (!strcmp(name, "force")) {
    int dims[4] = {3, 64, 64, 1}, xs[2] = {256, 3};
    OK(sgnn_params_create(be, dt, &P));
    mlp_setup(dt, 3, dims);
    OK(sgnn_params_setup(P));
    mlp_init();
    X = randn(dt, 2, xs);
    OK(sgnn_tensor_set_requires_grad(X, 1));
    Y = randn(dt, 2, xs);
    lossfn = loss_force;
  } else {
    fprintf(stderr, "unknown benchmark '%s' (dp, conv, lstm, force, convpass)\n", name);
    return 2;
  }
  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAM, &c);
  SgnnOptim opt;
  OK(sgnn_optim_create(P, &c, &opt));
  double *t = malloc(sizeof(double) * steps);
  size_t peak = 0;
  for (int it = -3; it < steps; it++) {
    sgnn_mem_reset_peak(be);
    double t0 = now();
    SgnnTensor L = lossfn();
    OK(sgnn_params_zero_grad(P));
    OK(sgnn_backward(L));
    OK(sgnn_optim_step(opt));
    /* reading the loss waits for the device (CUDA kernels are asynchronous and run in order on one
     * stream), so the time is the step's, not its launch's; on the CPU it costs nothing */
    double lv;
    OK(sgnn_tensor_item(L, &lv));
    drop(&L);
    double dt_ = now() - t0;
    if (it >= 0) t[it] = dt_;
    if (sgnn_mem_peak(be) > peak) peak = sgnn_mem_peak(be);
  }
  qsort(t, steps, sizeof *t, cmpd);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%s %.3f %.1f %.1f\n", name, 1e3 * t[steps / 2], peak / 1048576.0, ru.ru_maxrss / 1024.0);
  free(t);
  sgnn_optim_destroy(&opt);
  sgnn_params_destroy(&P);
  return 0;
}
