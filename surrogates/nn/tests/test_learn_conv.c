/* test_learn_conv.c -- a conv layer (f32, 3x3 kernel on a 16x16 grid as a
 * 3-d conv with a size-1 depth, padding 1) learns a known filter (a Sobel
 * edge detector plus a centre weight) and bias from input/output pairs.
 * Pass: every learned weight within 1e-4 of the true one (a random init is
 * ~0.5 off; we reach ~1e-6, the f32 rounding floor of the data). */
#include "testutil.h"

int main(int argc, char **argv)
{
  SgnnBackend *be = t_backend(argc, argv);
  SgnnRng r;
  sgnn_rng_init(&r, 77);
  const double ktrue[9] = {-1, 0, 1, -2, 0.5, 2, -1, 0, 1}, btrue = 0.1;
  int N = 8, xs[5] = {N, 1, 1, 16, 16}, ks[5] = {1, 1, 1, 3, 3}, bs[1] = {1};
  static double x[8 * 256];
  for (int i = 0; i < N * 256; i++) x[i] = 2 * sgnn_rng_uniform(&r) - 1;
  SgnnTensor X, KT, BT, Y;
  int st[3] = {1, 1, 1}, pd[3] = {0, 1, 1};
  OK(sgnn_tensor_from_f64(be, SGNN_F32, 5, xs, x, &X));
  OK(sgnn_tensor_from_f64(be, SGNN_F32, 5, ks, ktrue, &KT));
  OK(sgnn_tensor_from_f64(be, SGNN_F32, 1, bs, &btrue, &BT));
  OK(sgnn_conv3d(X, KT, BT, st, pd, &Y)); /* targets */

  SgnnParams P;
  SgnnTensor K, B;
  OK(sgnn_params_create(be, SGNN_F32, &P));
  OK(sgnn_params_add(P, "kernel", 5, ks, &K));
  OK(sgnn_params_add(P, "bias", 1, bs, &B));
  OK(sgnn_params_setup(P));
  OK(sgnn_init_he_normal(K, &r));
  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAM, &c);
  SgnnOptim o;
  OK(sgnn_optim_create(P, &c, &o));
  const int steps = 600;
  SgnnLRSchedule sched = {.kind = SGNN_LR_COSINE, .lr0 = 0.05, .warmup = 10, .decay_steps = steps - 10, .lr_min = 1e-4};
  double t0 = t_now(), loss = 0;
  for (int it = 0; it < steps; it++) {
    SgnnTensor pred, L;
    OK(sgnn_conv3d(X, K, B, st, pd, &pred));
    OK(sgnn_mse_loss(pred, Y, &L));
    OK(sgnn_params_zero_grad(P));
    OK(sgnn_backward(L));
    OK(sgnn_optim_set_lr(o, sgnn_lr_at(&sched, it)));
    OK(sgnn_optim_step(o));
    loss = t_item(L);
    sgnn_tensor_free(&pred);
    sgnn_tensor_free(&L);
  }
  double k[9], b, err = 0;
  OK(sgnn_tensor_to_f64(K, k));
  OK(sgnn_tensor_to_f64(B, &b));
  for (int i = 0; i < 9; i++) err = fmax(err, fabs(k[i] - ktrue[i]));
  err = fmax(err, fabs(b - btrue));
  printf("conv filter: %d steps in %.2f s, loss %.3g, max weight error %.2e\n", steps, t_now() - t0, loss, err);
  CHECK(err < 1e-4, "learned filter off by %.3g", err);
  sgnn_optim_destroy(&o);
  sgnn_params_destroy(&P);
  SgnnTensor *all[] = {&X, &KT, &BT, &Y};
  for (int i = 0; i < 4; i++) sgnn_tensor_free(all[i]);
  return t_summary("test_learn_conv");
}
