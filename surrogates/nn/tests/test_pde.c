/* test_pde.c -- derivatives of a network's output w.r.t. its input
 * coordinates inside a loss (MeshfreeFlowNet's PDE residual), to third
 * order overall:
 *   u(x, y) = MLP 2 -> 16 -> 16 -> 1 (tanh, f64, fixed random weights)
 *   u_x, u_y  = first derivatives  (sgnn_grad, create_graph)
 *   u_xx, u_yy = second derivatives (grad of grad, create_graph)
 *   loss = mean((u_xx + u_yy - f)^2) -> d loss / d params (sgnn_backward)
 * Checks (f64, central differences with step h):
 *   u_x, u_y    vs (u(x+h) - u(x-h)) / 2h, h = 1e-5: truncation ~h^2 u''' ~ 1e-10,
 *               rounding ~1e-16/h ~ 1e-11 -> abs err < 1e-8;
 *   u_xx, u_yy  vs the 5-point 4th-order stencil, h = 1e-3: truncation
 *               h^4 u^(6)/90 ~ 1e-12 |u^(6)|, rounding 64 eps |u|/(12 h^2) ~ 1e-9
 *               -> abs err < 1e-6 (3-point stencils were truncation-bound
 *               at 6e-7 here: |u''''| reaches ~100 with these weights);
 *   d loss/d theta for 6 parameters vs central differences of the loss,
 *               h = 1e-6 -> rel err < 1e-6. */
#include "testutil.h"

static SgnnTensor W[3], B[3];
static SgnnParams P;
static SgnnBackend *BE;
enum { NPT = 32 };
static double pts[NPT * 2], fsrc[NPT];

static SgnnTensor net(SgnnTensor x)
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
  return h;
}

/* u at host points (no graph) */
static void eval_u(const double *p, double *u)
{
  int s[2] = {NPT, 2};
  SgnnTensor x, y;
  int prev = sgnn_set_grad_enabled(0);
  OK(sgnn_tensor_from_f64(BE, SGNN_F64, 2, s, p, &x));
  y = net(x);
  OK(sgnn_tensor_to_f64(y, u));
  sgnn_tensor_free(&x);
  sgnn_tensor_free(&y);
  sgnn_set_grad_enabled(prev);
}

/* first and second derivatives via autodiff; returns the loss tensor (graph kept) */
static SgnnTensor derivs(double *ux, double *uxx)
{
  int s[2] = {NPT, 2}, fs[2] = {NPT, 1};
  SgnnTensor x, u, g, lap = NULL, F, L;
  OK(sgnn_tensor_from_f64(BE, SGNN_F64, 2, s, pts, &x));
  OK(sgnn_tensor_set_requires_grad(x, 1));
  u = net(x);
  OK(sgnn_grad(1, &u, NULL, 1, &x, 1, &g)); /* [NPT,2]: (u_x, u_y) */
  if (ux) OK(sgnn_tensor_to_f64(g, ux));
  for (int d = 0; d < 2; d++) {
    SgnnTensor gd, h, hd, t;
    OK(sgnn_slice(g, 1, d, d + 1, &gd));
    OK(sgnn_grad(1, &gd, NULL, 1, &x, 1, &h)); /* row i: d(u_d)/dx at point i */
    OK(sgnn_slice(h, 1, d, d + 1, &hd));       /* u_dd */
    if (uxx) {
      double tmp[NPT];
      OK(sgnn_tensor_to_f64(hd, tmp));
      for (int i = 0; i < NPT; i++) uxx[2 * i + d] = tmp[i];
    }
    if (lap) {
      OK(sgnn_add(lap, hd, &t));
      sgnn_tensor_free(&lap);
      lap = t;
    } else
      lap = sgnn_tensor_ref(hd);
    sgnn_tensor_free(&gd);
    sgnn_tensor_free(&h);
    sgnn_tensor_free(&hd);
  }
  OK(sgnn_tensor_from_f64(BE, SGNN_F64, 2, fs, fsrc, &F));
  OK(sgnn_mse_loss(lap, F, &L));
  SgnnTensor *all[] = {&x, &u, &g, &lap, &F};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) sgnn_tensor_free(all[i]);
  return L;
}

int main(int argc, char **argv)
{
  BE = t_backend(argc, argv);
  SgnnRng r;
  sgnn_rng_init(&r, 31);
  OK(sgnn_params_create(BE, SGNN_F64, &P));
  int dims[4] = {2, 16, 16, 1};
  for (int l = 0; l < 3; l++) {
    int ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char n[8];
    snprintf(n, sizeof n, "W%d", l);
    OK(sgnn_params_add(P, n, 2, ws, &W[l]));
    snprintf(n, sizeof n, "b%d", l);
    OK(sgnn_params_add(P, n, 1, bs, &B[l]));
  }
  OK(sgnn_params_setup(P));
  OK(sgnn_init_normal(sgnn_params_values(P), 0, 0.7, &r));
  for (int i = 0; i < NPT * 2; i++) pts[i] = 2 * sgnn_rng_uniform(&r) - 1;
  for (int i = 0; i < NPT; i++) fsrc[i] = sin(3 * pts[2 * i]) * pts[2 * i + 1];

  double ux[NPT * 2], uxx[NPT * 2], q[NPT * 2], us[5][NPT];
  SgnnTensor L = derivs(ux, uxx);
  double e1 = 0, e2 = 0, m1 = 0, m2 = 0;
  for (int d = 0; d < 2; d++) {
    double h1 = 1e-5, h2 = 1e-3;
    for (int k = -2; k <= 2; k++) { /* u at x + k h2 (and x +- h1 below) */
      memcpy(q, pts, sizeof q);
      for (int i = 0; i < NPT; i++) q[2 * i + d] += k * h2;
      eval_u(q, us[k + 2]);
    }
    double up[NPT], um[NPT];
    memcpy(q, pts, sizeof q);
    for (int i = 0; i < NPT; i++) q[2 * i + d] += h1;
    eval_u(q, up);
    memcpy(q, pts, sizeof q);
    for (int i = 0; i < NPT; i++) q[2 * i + d] -= h1;
    eval_u(q, um);
    for (int i = 0; i < NPT; i++) {
      e1 = fmax(e1, fabs((up[i] - um[i]) / (2 * h1) - ux[2 * i + d]));
      m1 = fmax(m1, fabs(ux[2 * i + d]));
      double fd2 = (-us[0][i] + 16 * us[1][i] - 30 * us[2][i] + 16 * us[3][i] - us[4][i]) / (12 * h2 * h2);
      e2 = fmax(e2, fabs(fd2 - uxx[2 * i + d]));
      m2 = fmax(m2, fabs(uxx[2 * i + d]));
    }
  }
  CHECK(e1 < 1e-8 && m1 > 0.1, "first input derivatives: max err %.3g (max |u_x| %.3g)", e1, m1);
  CHECK(e2 < 1e-6 && m2 > 0.1, "second input derivatives: max err %.3g (max |u_xx| %.3g)", e2, m2);

  /* d loss / d theta through the twice-differentiated network */
  OK(sgnn_params_zero_grad(P));
  OK(sgnn_backward(L));
  sgnn_tensor_free(&L);
  long np;
  OK(sgnn_params_count(P, &np));
  double *theta = malloc(sizeof(double) * np), *grad = malloc(sizeof(double) * np);
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), theta));
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), grad));
  const long probe[6] = {0, 5, 40, 100, 300, np - 1};
  double worst = 0, gmax = 0;
  for (int k = 0; k < 6; k++) {
    long j = probe[k];
    double t0 = theta[j], Lp, Lm, h = 1e-6;
    theta[j] = t0 + h;
    OK(sgnn_tensor_set_f64(sgnn_params_values(P), theta));
    L = derivs(NULL, NULL);
    Lp = t_item(L);
    sgnn_tensor_free(&L);
    theta[j] = t0 - h;
    OK(sgnn_tensor_set_f64(sgnn_params_values(P), theta));
    L = derivs(NULL, NULL);
    Lm = t_item(L);
    sgnn_tensor_free(&L);
    theta[j] = t0;
    double fd = (Lp - Lm) / (2 * h);
    worst = fmax(worst, fabs(fd - grad[j]) / fmax(fabs(fd), 1e-3));
    gmax = fmax(gmax, fabs(fd));
  }
  OK(sgnn_tensor_set_f64(sgnn_params_values(P), theta));
  CHECK(worst < 1e-6 && gmax > 1e-3, "d(PDE loss)/d(theta) vs finite differences: rel err %.3g", worst);
  printf("u_x err %.2e, u_xx err %.2e, d loss/d theta rel err %.2e\n", e1, e2, worst);
  free(theta);
  free(grad);
  sgnn_params_destroy(&P);
  return t_summary("test_pde");
}
