/* test_learn_mlp.c -- an MLP 2 -> 32 -> 32 -> 1 (tanh, f64) learns
 * f(x,y) = sin(x) cos(y) on [-pi,pi]^2 from 400 random samples with Adam
 * and a cosine schedule. Pass: RMS error on 1000 fresh points < 0.03
 * (f has RMS 0.5; a network that learned nothing scores ~0.5, a linear fit
 * ~0.5, so the bar needs the nonlinear fit to work). */
#include "testutil.h"

static SgnnTensor W[3], B[3];

static int forward(SgnnTensor x, SgnnTensor *out)
{
  SgnnTensor h = sgnn_tensor_ref(x);
  for (int l = 0; l < 3; l++) {
    SgnnTensor z, a;
    OK(sgnn_linear(h, W[l], B[l], &z));
    sgnn_tensor_free(&h);
    if (l < 2) {
      OK(sgnn_tanh(z, &a));
      sgnn_tensor_free(&z);
      h = a;
    } else
      h = z;
  }
  *out = h;
  return 0;
}

static void sample(SgnnRng *r, int n, double *x, double *y)
{
  for (int i = 0; i < n; i++) {
    x[2 * i] = M_PI * (2 * sgnn_rng_uniform(r) - 1);
    x[2 * i + 1] = M_PI * (2 * sgnn_rng_uniform(r) - 1);
    y[i] = sin(x[2 * i]) * cos(x[2 * i + 1]);
  }
}

int main(int argc, char **argv)
{
  SgnnBackend *be = t_backend(argc, argv);
  SgnnRng r;
  sgnn_rng_init(&r, 2024);
  SgnnParams P;
  OK(sgnn_params_create(be, SGNN_F64, &P));
  int dims[4] = {2, 32, 32, 1};
  for (int l = 0; l < 3; l++) {
    int ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char n[16];
    snprintf(n, sizeof n, "W%d", l);
    OK(sgnn_params_add(P, n, 2, ws, &W[l]));
    snprintf(n, sizeof n, "b%d", l);
    OK(sgnn_params_add(P, n, 1, bs, &B[l]));
  }
  OK(sgnn_params_setup(P));
  for (int l = 0; l < 3; l++) OK(sgnn_init_xavier_uniform(W[l], 1.0, &r));

  enum { NT = 400, NV = 1000 };
  static double xt[2 * NT], yt[NT], xv[2 * NV], yv[NV], pv[NV];
  sample(&r, NT, xt, yt);
  sample(&r, NV, xv, yv);
  int xs[2] = {NT, 2}, ys[2] = {NT, 1}, vs[2] = {NV, 2};
  SgnnTensor X, Y, XV;
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, xs, xt, &X));
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, ys, yt, &Y));
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, vs, xv, &XV));

  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAM, &c);
  SgnnOptim o;
  OK(sgnn_optim_create(P, &c, &o));
  const int steps = 3000;
  SgnnLRSchedule sched = {.kind = SGNN_LR_COSINE, .lr0 = 1e-2, .warmup = 50, .decay_steps = steps - 50, .lr_min = 1e-4};
  double t0 = t_now(), loss = 0;
  for (int it = 0; it < steps; it++) {
    SgnnTensor pred, L;
    OK(forward(X, &pred));
    OK(sgnn_mse_loss(pred, Y, &L));
    OK(sgnn_params_zero_grad(P));
    OK(sgnn_backward(L));
    OK(sgnn_optim_set_lr(o, sgnn_lr_at(&sched, it)));
    OK(sgnn_optim_step(o));
    loss = t_item(L);
    sgnn_tensor_free(&pred);
    sgnn_tensor_free(&L);
  }
  SgnnTensor PV;
  sgnn_set_grad_enabled(0);
  OK(forward(XV, &PV));
  OK(sgnn_tensor_to_f64(PV, pv));
  double se = 0;
  for (int i = 0; i < NV; i++) se += (pv[i] - yv[i]) * (pv[i] - yv[i]);
  double rms = sqrt(se / NV);
  printf("sin(x)cos(y): %d Adam steps in %.2f s, train MSE %.3g, test RMS %.4f\n", steps, t_now() - t0, loss, rms);
  CHECK(rms < 0.03, "test RMS error %.4f >= 0.03", rms);
  sgnn_tensor_free(&PV);
  sgnn_tensor_free(&X);
  sgnn_tensor_free(&Y);
  sgnn_tensor_free(&XV);
  sgnn_optim_destroy(&o);
  sgnn_params_destroy(&P);
  return t_summary("test_learn_mlp");
}
