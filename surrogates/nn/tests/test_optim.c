/* test_optim.c -- optimizers against steps computed by hand (the formulas
 * below are written out independently of optim.c, in double), LR
 * schedules, global-norm clipping, and the counter-based RNG (known-answer
 * vector from the Philox paper's reference implementation, save/restore). */
#include "testutil.h"
#include "../../../src/base/include/sgrng.h"

static SgnnBackend *BE;

/* run two steps with gradients g1 then g2 on p0; return p after each step */
static void two_steps(SgnnOptimConfig *c, const double *p0, const double *g1, const double *g2, double *p1, double *p2)
{
  SgnnParams P;
  SgnnTensor w;
  int s[1] = {3};
  OK(sgnn_params_create(BE, SGNN_F64, &P));
  OK(sgnn_params_add(P, "w", 1, s, &w));
  OK(sgnn_params_setup(P));
  OK(sgnn_tensor_set_f64(sgnn_params_values(P), p0));
  SgnnOptim o;
  OK(sgnn_optim_create(P, c, &o));
  OK(sgnn_tensor_set_f64(sgnn_params_grads(P), g1));
  OK(sgnn_optim_step(o));
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), p1));
  OK(sgnn_tensor_set_f64(sgnn_params_grads(P), g2));
  OK(sgnn_optim_step(o));
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), p2));
  CHECK(sgnn_optim_steps(o) == 2, "step counter");
  sgnn_optim_destroy(&o);
  sgnn_params_destroy(&P);
}

static double sgn(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

static void check3(const char *what, const double *got, const double *want, double tol)
{
  double e = 0;
  for (int i = 0; i < 3; i++) e = fmax(e, fabs(got[i] - want[i]));
  CHECK(e < tol, "%s: max err %.3g (got %.15g %.15g %.15g, want %.15g %.15g %.15g)", what, e, got[0], got[1], got[2],
        want[0], want[1], want[2]);
}

static void test_optimizers(void)
{
  const double p0[3] = {1.0, -2.0, 0.5}, g1[3] = {0.5, -1.0, 0.0}, g2[3] = {0.25, 2.0, -0.5};
  double p1[3], p2[3], w1[3], w2[3];
  SgnnOptimConfig c;

  /* SGD with momentum 0.9, weight decay 0.1, lr 0.1 (torch: buf = g on step 1) */
  sgnn_optim_defaults(SGNN_SGD, &c);
  c.lr = 0.1;
  c.momentum = 0.9;
  c.weight_decay = 0.1;
  two_steps(&c, p0, g1, g2, p1, p2);
  for (int i = 0; i < 3; i++) {
    double d1 = g1[i] + 0.1 * p0[i], b = d1;
    w1[i] = p0[i] - 0.1 * b;
    double d2 = g2[i] + 0.1 * w1[i];
    b = 0.9 * b + d2;
    w2[i] = w1[i] - 0.1 * b;
  }
  check3("sgd momentum step 1", p1, w1, 1e-15);
  check3("sgd momentum step 2", p2, w2, 1e-15);

  /* Nesterov */
  c.nesterov = 1;
  c.weight_decay = 0;
  two_steps(&c, p0, g1, g2, p1, p2);
  for (int i = 0; i < 3; i++) {
    double b = g1[i];
    w1[i] = p0[i] - 0.1 * (g1[i] + 0.9 * b);
    b = 0.9 * b + g2[i];
    w2[i] = w1[i] - 0.1 * (g2[i] + 0.9 * b);
  }
  check3("sgd nesterov step 2", p2, w2, 1e-15);

  /* Adam lr 0.01: step 1 moves every coordinate with g != 0 by lr*sign(g) */
  sgnn_optim_defaults(SGNN_ADAM, &c);
  c.lr = 0.01;
  two_steps(&c, p0, g1, g2, p1, p2);
  for (int i = 0; i < 3; i++) {
    double m = 0.1 * g1[i], v = 0.001 * g1[i] * g1[i];
    w1[i] = p0[i] - 0.01 * (m / 0.1) / (sqrt(v / 0.001) + 1e-8);
    m = 0.9 * m + 0.1 * g2[i];
    v = 0.999 * v + 0.001 * g2[i] * g2[i];
    w2[i] = w1[i] - 0.01 * (m / (1 - 0.81)) / (sqrt(v / (1 - 0.999 * 0.999)) + 1e-8);
  }
  CHECK(fabs(p1[0] - 0.99) < 1e-9 && fabs(p1[1] + 1.99) < 1e-9 && p1[2] == 0.5, "adam first step is lr*sign(g)");
  check3("adam step 2", p2, w2, 1e-14);

  /* AdamW: decoupled decay 0.1 */
  sgnn_optim_defaults(SGNN_ADAMW, &c);
  c.lr = 0.01;
  c.weight_decay = 0.1;
  two_steps(&c, p0, g1, g2, p1, p2);
  for (int i = 0; i < 3; i++) {
    double m = 0.1 * g1[i], v = 0.001 * g1[i] * g1[i];
    w1[i] = p0[i] * (1 - 0.001) - 0.01 * (m / 0.1) / (sqrt(v / 0.001) + 1e-8);
    m = 0.9 * m + 0.1 * g2[i];
    v = 0.999 * v + 0.001 * g2[i] * g2[i];
    w2[i] = w1[i] * (1 - 0.001) - 0.01 * (m / (1 - 0.81)) / (sqrt(v / (1 - 0.999 * 0.999)) + 1e-8);
  }
  check3("adamw step 1", p1, w1, 1e-14);
  check3("adamw step 2", p2, w2, 1e-14);

  /* Lion (Chen et al. 2023): p -= lr (sign(b1 m + (1-b1) g) + wd p); m = b2 m + (1-b2) g */
  sgnn_optim_defaults(SGNN_LION, &c);
  c.lr = 0.01;
  c.weight_decay = 0.5;
  two_steps(&c, p0, g1, g2, p1, p2);
  for (int i = 0; i < 3; i++) {
    double m = 0;
    double u = 0.9 * m + 0.1 * g1[i];
    w1[i] = p0[i] - 0.01 * 0.5 * p0[i] - 0.01 * sgn(u);
    m = 0.99 * m + 0.01 * g1[i];
    u = 0.9 * m + 0.1 * g2[i];
    w2[i] = w1[i] - 0.01 * 0.5 * w1[i] - 0.01 * sgn(u);
  }
  check3("lion step 1", p1, w1, 1e-15);
  check3("lion step 2", p2, w2, 1e-15);

  /* bad configuration is refused with a message */
  sgnn_optim_defaults(SGNN_ADAM, &c);
  c.beta1 = 1.0;
  SgnnParams P;
  SgnnTensor w;
  int s[1] = {2};
  OK(sgnn_params_create(BE, SGNN_F64, &P));
  OK(sgnn_params_add(P, "w", 1, s, &w));
  OK(sgnn_params_setup(P));
  SgnnOptim o;
  CHECK(sgnn_optim_create(P, &c, &o) == SGNN_ERR_ARG && strstr(sgnn_last_error(), "betas"), "beta1=1 refused: %s",
        sgnn_last_error());
  /* clipping: grad (3,4) has norm 5 -> scaled to norm 1 */
  double g[2] = {3, 4}, out[2], nrm;
  OK(sgnn_tensor_set_f64(sgnn_params_grads(P), g));
  OK(sgnn_clip_grad_norm(P, 1.0, &nrm));
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), out));
  CHECK(nrm == 5 && fabs(out[0] - 0.6) < 1e-6 && fabs(out[1] - 0.8) < 1e-6, "clip to norm 1: %g %g (norm %g)", out[0],
        out[1], nrm);
  OK(sgnn_clip_grad_norm(P, 10.0, &nrm));
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), g));
  CHECK(g[0] == out[0] && g[1] == out[1], "no clipping below the threshold");
  sgnn_params_destroy(&P);
}

static void test_schedules(void)
{
  SgnnLRSchedule s = {.kind = SGNN_LR_EXP, .lr0 = 1e-3, .warmup = 0, .decay_rate = 0.5, .decay_steps = 100, .lr_min = 1e-5};
  CHECK(sgnn_lr_at(&s, 0) == 1e-3 && sgnn_lr_at(&s, 99) == 1e-3 && fabs(sgnn_lr_at(&s, 250) - 2.5e-4) < 1e-18,
        "exponential staircase");
  CHECK(sgnn_lr_at(&s, 100000) == 1e-5, "exponential floor");
  SgnnLRSchedule c = {.kind = SGNN_LR_COSINE, .lr0 = 1.0, .warmup = 10, .decay_steps = 100, .lr_min = 0.1};
  CHECK(fabs(sgnn_lr_at(&c, 0) - 0.1) < 1e-15 && fabs(sgnn_lr_at(&c, 4) - 0.5) < 1e-15, "linear warm-up");
  CHECK(fabs(sgnn_lr_at(&c, 10) - 1.0) < 1e-15, "cosine start");
  CHECK(fabs(sgnn_lr_at(&c, 60) - 0.55) < 1e-12, "cosine midpoint: %g", sgnn_lr_at(&c, 60));
  CHECK(fabs(sgnn_lr_at(&c, 110) - 0.1) < 1e-15 && fabs(sgnn_lr_at(&c, 5000) - 0.1) < 1e-15, "cosine end");
}

static void test_rng(void)
{
  /* Random123 known-answer vector: philox4x32-10, counter 0, key 0 ->
   * 6627e8d5 e169c58d bc57ac4c 9b00dbd8; our first 64 bits are words 0,1 */
  SgnnRng r;
  sgnn_rng_init(&r, 0);
  double u = sgnn_rng_uniform(&r);
  unsigned long long want = 0x6627e8d5e169c58dULL;
  CHECK(u == (double)(want >> 11) * 0x1.0p-53, "philox known answer: %.17g", u);
  /* the shared header itself (src/base/include/sgrng.h, also used by io/loader, src/base, physics):
   * Random123's kat_vectors for philox4x32-10 (all four words, non-zero keys) and the first outputs
   * of SplitMix64 from state 0 (Vigna's reference splitmix64.c) */
  {
    const uint32_t c1[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, k1[2] = {0xffffffffu, 0xffffffffu};
    const uint32_t c2[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, k2[2] = {0xa4093822u, 0x299f31d0u};
    const uint32_t w1[4] = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}, w2[4] = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
    const uint64_t sm[3] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL};
    uint32_t       o1[4], o2[4];
    uint64_t       st = 0;
    SgRngPhilox4x32(c1, k1, o1);
    SgRngPhilox4x32(c2, k2, o2);
    for (int i = 0; i < 4; i++) CHECK(o1[i] == w1[i] && o2[i] == w2[i], "philox kat word %d: %08x %08x", i, o1[i], o2[i]);
    for (int i = 0; i < 3; i++) {
      st += 0x9e3779b97f4a7c15ULL;
      CHECK(SgRngSplitMix64(st) == sm[i], "splitmix64 output %d: %016llx", i, (unsigned long long)SgRngSplitMix64(st));
    }
    /* Box-Muller: u1 = 1 gives 0; u1 = exp(-1/2) gives cos(2 pi u2) (radius 1), to round-off */
    CHECK(SgRngBoxMuller(1.0, 0.3) == 0.0, "box-muller at u1 = 1");
    CHECK(fabs(SgRngBoxMuller(exp(-0.5), 0.125) - cos(0.25 * M_PI)) < 1e-15, "box-muller radius 1: %.17g", SgRngBoxMuller(exp(-0.5), 0.125));
  }
  /* save/restore reproduces the stream */
  sgnn_rng_init(&r, 42);
  for (int i = 0; i < 10; i++) sgnn_rng_normal(&r);
  SgnnRng saved = r;
  double a[5], b[5];
  for (int i = 0; i < 5; i++) a[i] = sgnn_rng_normal(&r);
  r = saved;
  for (int i = 0; i < 5; i++) b[i] = sgnn_rng_normal(&r);
  CHECK(!memcmp(a, b, sizeof a), "restored RNG state reproduces the draws");
  /* moments of 2e5 draws: standard errors 6.5e-4 (uniform mean), 2.2e-3 (normal mean) */
  double su = 0, sn = 0, sn2 = 0;
  int n = 200000;
  sgnn_rng_init(&r, 7);
  for (int i = 0; i < n; i++) {
    double x = sgnn_rng_normal(&r);
    su += sgnn_rng_uniform(&r);
    sn += x;
    sn2 += x * x;
  }
  CHECK(fabs(su / n - 0.5) < 5e-3 && fabs(sn / n) < 0.01 && fabs(sn2 / n - 1) < 0.02, "moments: %g %g %g", su / n,
        sn / n, sn2 / n);
  /* Xavier bound and He spread, same seed -> same weights */
  int s[2] = {64, 100};
  SgnnTensor w1, w2;
  OK(sgnn_tensor_zeros(BE, SGNN_F64, 2, s, &w1));
  OK(sgnn_tensor_zeros(BE, SGNN_F64, 2, s, &w2));
  sgnn_rng_init(&r, 3);
  OK(sgnn_init_xavier_uniform(w1, 1.0, &r));
  sgnn_rng_init(&r, 3);
  OK(sgnn_init_xavier_uniform(w2, 1.0, &r));
  double h1[6400], h2[6400], bound = sqrt(6.0 / 164), mx = 0, var = 0;
  OK(sgnn_tensor_to_f64(w1, h1));
  OK(sgnn_tensor_to_f64(w2, h2));
  for (int i = 0; i < 6400; i++) {
    mx = fmax(mx, fabs(h1[i]));
    var += h1[i] * h1[i] / 6400;
  }
  CHECK(!memcmp(h1, h2, sizeof h1), "same seed, same Xavier weights");
  CHECK(mx <= bound && mx > 0.95 * bound && fabs(var / (bound * bound / 3) - 1) < 0.05, "Xavier range/variance");
  OK(sgnn_init_he_normal(w1, &r));
  OK(sgnn_tensor_to_f64(w1, h1));
  var = 0;
  for (int i = 0; i < 6400; i++) var += h1[i] * h1[i] / 6400;
  CHECK(fabs(var / (2.0 / 100) - 1) < 0.06, "He variance %g", var);
  sgnn_tensor_free(&w1);
  sgnn_tensor_free(&w2);
}

/* A checkpoint is (parameter slab, optimizer moments, step, RNG state):
 * restoring it into fresh objects must continue training bit-identically. */
typedef struct {
  SgnnParams P;
  SgnnTensor W, b;
  SgnnOptim o;
} Model;
static void model_new(Model *m, SgnnRng *r)
{
  int ws[2] = {4, 3}, bs[1] = {4};
  OK(sgnn_params_create(BE, SGNN_F64, &m->P));
  OK(sgnn_params_add(m->P, "W", 2, ws, &m->W));
  OK(sgnn_params_add(m->P, "b", 1, bs, &m->b));
  OK(sgnn_params_setup(m->P));
  if (r) OK(sgnn_init_xavier_uniform(m->W, 1.0, r));
  SgnnOptimConfig c;
  sgnn_optim_defaults(SGNN_ADAMW, &c);
  c.lr = 0.05;
  OK(sgnn_optim_create(m->P, &c, &m->o));
}
static void train(Model *m, SgnnRng *r, int steps)
{
  for (int s = 0; s < steps; s++) {
    double xb[6 * 3];
    int xs[2] = {6, 3};
    for (int i = 0; i < 18; i++) xb[i] = sgnn_rng_normal(r); /* data drawn from the RNG */
    SgnnTensor x, y, t, L;
    OK(sgnn_tensor_from_f64(BE, SGNN_F64, 2, xs, xb, &x));
    OK(sgnn_linear(x, m->W, m->b, &y));
    OK(sgnn_tanh(y, &t));
    OK(sgnn_sum(t, 0, NULL, 0, &L));
    OK(sgnn_params_zero_grad(m->P));
    OK(sgnn_backward(L));
    OK(sgnn_optim_step(m->o));
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&y);
    sgnn_tensor_free(&t);
    sgnn_tensor_free(&L);
  }
}
static void model_free(Model *m)
{
  sgnn_optim_destroy(&m->o);
  sgnn_params_destroy(&m->P);
}
static void test_resume(void)
{
  SgnnRng r;
  sgnn_rng_init(&r, 2718);
  Model a, b;
  model_new(&a, &r);
  train(&a, &r, 5);
  /* checkpoint */
  double p[16], m[16], v[16];
  SgnnTensor tm, tv;
  long *step;
  OK(sgnn_tensor_to_f64(sgnn_params_values(a.P), p));
  OK(sgnn_optim_state(a.o, &tm, &tv, &step));
  OK(sgnn_tensor_to_f64(tm, m));
  OK(sgnn_tensor_to_f64(tv, v));
  long saved_step = *step;
  SgnnRng saved_rng = r;
  train(&a, &r, 5);
  /* restore into fresh objects and continue */
  model_new(&b, NULL);
  OK(sgnn_tensor_set_f64(sgnn_params_values(b.P), p));
  OK(sgnn_optim_state(b.o, &tm, &tv, &step));
  OK(sgnn_tensor_set_f64(tm, m));
  OK(sgnn_tensor_set_f64(tv, v));
  *step = saved_step;
  r = saved_rng;
  train(&b, &r, 5);
  double pa[16], pb[16];
  OK(sgnn_tensor_to_f64(sgnn_params_values(a.P), pa));
  OK(sgnn_tensor_to_f64(sgnn_params_values(b.P), pb));
  CHECK(!memcmp(pa, pb, sizeof pa) && sgnn_optim_steps(a.o) == sgnn_optim_steps(b.o) && memcmp(pa, p, sizeof p),
        "resumed training is bit-identical");
  model_free(&a);
  model_free(&b);
}

int main(int argc, char **argv)
{
  BE = t_backend(argc, argv);
  test_optimizers();
  test_schedules();
  test_rng();
  test_resume();
  return t_summary("test_optim");
}
