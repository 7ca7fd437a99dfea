/* test_learn_forces.c -- an energy model trained ONLY on forces recovers
 * the energy up to a constant. The model is a pair network
 *   E(x) = sum_{i<j} phi(r_ij),  phi = MLP 1 -> 24 -> 24 -> 1 (tanh, f64),
 * the data are clusters of 6 atoms interacting by a Morse potential
 *   V(r) = D (1 - exp(-a (r - r0)))^2 - D,  D = 1, a = 1.5, r0 = 1.2,
 * and the loss is mean |F_pred - F_true|^2 with F_pred = -dE/dx computed by
 * sgnn_grad(create_graph=1), so each training step differentiates through a
 * backward pass (double backward through tanh, matmul, sqrt, index ops).
 * Pass: on 64 unseen clusters, the RMS of (E_pred - E_true) after removing
 * its mean is < 3% of the spread (std) of E_true, and the force RMS error is
 * < 5% of the force RMS. A model that ignores r scores 100%. */
#include "testutil.h"

enum { NA = 6, NP = NA * (NA - 1) / 2 };
static SgnnTensor W[3], B[3];
static long pi_[256 * NP], pj_[256 * NP];

static double morse(double r, double *dv)
{
  double e = exp(-1.5 * (r - 1.2));
  *dv = 2 * (1 - e) * 1.5 * e;
  return (1 - e) * (1 - e) - 1;
}

/* random cluster: atoms in a 2.6-wide box, no pair closer than 0.85 */
static void cluster(SgnnRng *r, double *x)
{
  for (int i = 0; i < NA; i++) {
    for (;;) {
      for (int d = 0; d < 3; d++) x[3 * i + d] = 2.6 * sgnn_rng_uniform(r);
      int ok = 1;
      for (int j = 0; j < i && ok; j++) {
        double s = 0;
        for (int d = 0; d < 3; d++) s += pow(x[3 * i + d] - x[3 * j + d], 2);
        ok = sqrt(s) > 0.85;
      }
      if (ok) break;
    }
  }
}

static double truth(const double *x, double *f)
{
  double E = 0;
  for (int i = 0; i < 3 * NA; i++) f[i] = 0;
  for (int i = 0; i < NA; i++)
    for (int j = i + 1; j < NA; j++) {
      double d[3], s = 0, dv;
      for (int k = 0; k < 3; k++) {
        d[k] = x[3 * i + k] - x[3 * j + k];
        s += d[k] * d[k];
      }
      double r = sqrt(s);
      E += morse(r, &dv);
      for (int k = 0; k < 3; k++) {
        f[3 * i + k] -= dv * d[k] / r;
        f[3 * j + k] += dv * d[k] / r;
      }
    }
  return E;
}

/* energies [C] of C clusters whose positions are X [C*NA, 3] */
static void energy(SgnnTensor X, int C, SgnnTensor *E)
{
  SgnnTensor xi, xj, d, d2, s, r, h;
  OK(sgnn_index_select(X, 0, (long)C * NP, pi_, &xi));
  OK(sgnn_index_select(X, 0, (long)C * NP, pj_, &xj));
  OK(sgnn_sub(xi, xj, &d));
  OK(sgnn_mul(d, d, &d2));
  int ax = 1;
  OK(sgnn_sum(d2, 1, &ax, 1, &s)); /* [C*NP, 1] */
  OK(sgnn_sqrt(s, &r));
  h = sgnn_tensor_ref(r);
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
  int es[2] = {C, NP};
  SgnnTensor h2;
  OK(sgnn_reshape(h, 2, es, &h2));
  OK(sgnn_sum(h2, 1, &ax, 0, E));
  SgnnTensor *all[] = {&xi, &xj, &d, &d2, &s, &r, &h, &h2};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) sgnn_tensor_free(all[i]);
}

/* forces -dE/dX, differentiable w.r.t. the parameters when cg */
static void forces(SgnnTensor X, int C, int cg, SgnnTensor *E, SgnnTensor *F)
{
  SgnnTensor g;
  energy(X, C, E);
  OK(sgnn_grad(1, E, NULL, 1, &X, cg, &g));
  OK(sgnn_affine(g, -1.0, 0.0, F));
  sgnn_tensor_free(&g);
}

static void make_set(SgnnBackend *be, SgnnRng *r, int C, SgnnTensor *X, SgnnTensor *F, double *E)
{
  double *x = malloc(sizeof(double) * C * NA * 3), *f = malloc(sizeof(double) * C * NA * 3);
  for (int c = 0; c < C; c++) {
    cluster(r, x + c * NA * 3);
    E[c] = truth(x + c * NA * 3, f + c * NA * 3);
  }
  int s[2] = {C * NA, 3};
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, s, x, X));
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 2, s, f, F));
  OK(sgnn_tensor_set_requires_grad(*X, 1));
  free(x);
  free(f);
}

int main(int argc, char **argv)
{
  SgnnBackend *be = t_backend(argc, argv);
  SgnnRng r;
  sgnn_rng_init(&r, 99);
  for (int c = 0, p = 0; c < 256; c++)
    for (int i = 0; i < NA; i++)
      for (int j = i + 1; j < NA; j++, p++) {
        pi_[p] = c * NA + i;
        pj_[p] = c * NA + j;
      }
  SgnnParams P;
  OK(sgnn_params_create(be, SGNN_F64, &P));
  int dims[4] = {1, 24, 24, 1};
  for (int l = 0; l < 3; l++) {
    int ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char n[8];
    snprintf(n, sizeof n, "W%d", l);
    OK(sgnn_params_add(P, n, 2, ws, &W[l]));
    snprintf(n, sizeof n, "b%d", l);
    OK(sgnn_params_add(P, n, 1, bs, &B[l]));
  }
  OK(sgnn_params_setup(P));
  for (int l = 0; l < 3; l++) OK(sgnn_init_xavier_uniform(W[l], 1.0, &r));

  enum { CT = 48, CV = 64 };
  double Et[CT], Ev[CV];
  SgnnTensor Xt, Ft, Xv, Fv;
  make_set(be, &r, CT, &Xt, &Ft, Et);
  make_set(be, &r, CV, &Xv, &Fv, Ev);

  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAM, &c);
  SgnnOptim o;
  OK(sgnn_optim_create(P, &c, &o));
  const int steps = 1500;
  SgnnLRSchedule sched = {.kind = SGNN_LR_COSINE, .lr0 = 1e-2, .warmup = 20, .decay_steps = steps - 20, .lr_min = 1e-4};
  double t0 = t_now(), loss = 0;
  for (int it = 0; it < steps; it++) {
    SgnnTensor E, F, L;
    forces(Xt, CT, 1, &E, &F);
    OK(sgnn_mse_loss(F, Ft, &L));
    OK(sgnn_params_zero_grad(P));
    OK(sgnn_backward(L));
    double gn;
    OK(sgnn_clip_grad_norm(P, 10.0, &gn));
    OK(sgnn_optim_set_lr(o, sgnn_lr_at(&sched, it)));
    OK(sgnn_optim_step(o));
    loss = t_item(L);
    sgnn_tensor_free(&E);
    sgnn_tensor_free(&F);
    sgnn_tensor_free(&L);
  }
  double dt = t_now() - t0;
  /* evaluate on unseen clusters */
  SgnnTensor E, F;
  forces(Xv, CV, 0, &E, &F);
  double ep[CV], fp[CV * NA * 3], ft[CV * NA * 3];
  OK(sgnn_tensor_to_f64(E, ep));
  OK(sgnn_tensor_to_f64(F, fp));
  OK(sgnn_tensor_to_f64(Fv, ft));
  double md = 0, me = 0;
  for (int i = 0; i < CV; i++) {
    md += (ep[i] - Ev[i]) / CV;
    me += Ev[i] / CV;
  }
  double se = 0, sd = 0, fe = 0, fs = 0;
  for (int i = 0; i < CV; i++) {
    se += pow(ep[i] - Ev[i] - md, 2) / CV;
    sd += pow(Ev[i] - me, 2) / CV;
  }
  for (int i = 0; i < CV * NA * 3; i++) {
    fe += pow(fp[i] - ft[i], 2);
    fs += ft[i] * ft[i];
  }
  double erel = sqrt(se / sd), frel = sqrt(fe / fs);
  printf("forces-only training: %d steps in %.2f s (%.2f ms/step), loss %.3g\n", steps, dt, 1e3 * dt / steps, loss);
  printf("unseen clusters: energy RMS error (constant removed) %.4f of std(E) %.3f; offset %.3f; force rel RMS %.4f\n",
         erel, sqrt(sd), md, frel);
  CHECK(erel < 0.03, "energy not recovered: %.4f of its spread", erel);
  CHECK(frel < 0.05, "forces not learned: rel RMS %.4f", frel);
  sgnn_tensor_free(&E);
  sgnn_tensor_free(&F);
  SgnnTensor *all[] = {&Xt, &Ft, &Xv, &Fv};
  for (int i = 0; i < 4; i++) sgnn_tensor_free(all[i]);
  sgnn_optim_destroy(&o);
  sgnn_params_destroy(&P);
  return t_summary("test_learn_forces");
}
