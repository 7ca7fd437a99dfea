/* ops_loss.c -- mean squared error and mean absolute error (0-d results).
 * mse_loss is one node: built from sub/mul/mean its backward took four
 * full-size passes (expand the mean's gradient, two products g*d, their
 * sum); as a node it takes two, d = p - t and d * (2 g / n), written with
 * differentiable ops so create_graph (forces in a loss, second order)
 * works unchanged. On the CPU backend both directions are also single
 * loops (no temporaries): the forward sums (p - t)^2 in double (8 partial sums), the
 * backward without create_graph writes (p - t) 2g/n directly. l1_loss stays
 * composite. */
#include "sgnn_impl.h"
#include <stdlib.h>

static int check(const char *op, SgnnTensor p, SgnnTensor t, SgnnTensor *out)
{
  SGNN_CHECK(out, SGNN_ERR_ARG, "%s: NULL output", op);
  SGNN_TRY(sgnn_check_pair(op, p, t));
  SGNN_CHECK(sgnn_same_shape(p, t), SGNN_ERR_SHAPE, "%s: prediction %s and target %s differ", op, SHP(p), SHP(t));
  return 0;
}

/* d(mean((p - t)^2)) = (2 g / n) (p - t) dp - the same dt */
#define MSE_LOOPS(T)                                                                                    \
  static double mse_sum_##T(long n, const T *p, const T *t)                                            \
  {                                                                                                   \
    double s[8] = {0}, tot = 0; /* 8 partial sums: one chain was latency-bound (4 cycles per add) */  \
    long i = 0;                                                                                       \
    for (; i + 8 <= n; i += 8)                                                                        \
      for (int l = 0; l < 8; l++) s[l] += (double)(p[i + l] - t[i + l]) * (double)(p[i + l] - t[i + l]); \
    for (; i < n; i++) s[0] += (double)(p[i] - t[i]) * (double)(p[i] - t[i]);                         \
    for (int l = 0; l < 8; l++) tot += s[l];                                                          \
    return tot;                                                                                       \
  }                                                                                                   \
  static void mse_grad_##T(long n, const T *p, const T *t, T sc, T *gp, T *gt)                          \
  {                                                                                                   \
    for (long i = 0; i < n; i++) {                                                                    \
      T v = (p[i] - t[i]) * sc;                                                                       \
      if (gp) gp[i] = v;                                                                              \
      if (gt) gt[i] = -v;                                                                             \
    }                                                                                                 \
  }
MSE_LOOPS(float)
MSE_LOOPS(double)

/* Longer than two pieces, the CPU loops run in SGNN_PIECE pieces (backend_cpu.c explains), on the
 * threads when there are several; the sum adds the pieces' partial sums in piece order, so it is the
 * same for every thread count. */
typedef struct {
  int f64;
  long n;
  const void *p, *t;
  double sc, *part;
  void *gp, *gt;
} MseJob;

static void mse_piece(void *ctx, int i0, int i1)
{
  MseJob *J = ctx;
  const size_t es = J->f64 ? 8 : 4;
  for (int k = i0; k < i1; k++) {
    long a = (long)k * SGNN_PIECE, m = J->n - a < SGNN_PIECE ? J->n - a : SGNN_PIECE;
    const char *p = (const char *)J->p + a * es, *t = (const char *)J->t + a * es;
    char *gp = J->gp ? (char *)J->gp + a * es : NULL, *gt = J->gt ? (char *)J->gt + a * es : NULL;
    if (J->part)
      J->part[k] = J->f64 ? mse_sum_double(m, (const double *)p, (const double *)t) : mse_sum_float(m, (const float *)p, (const float *)t);
    else if (J->f64) mse_grad_double(m, (const double *)p, (const double *)t, J->sc, (double *)gp, (double *)gt);
    else mse_grad_float(m, (const float *)p, (const float *)t, (float)J->sc, (float *)gp, (float *)gt);
  }
}

/* part != NULL: returns the sum of squares; else writes the gradients */
static double mse_cpu(int f64, long n, const void *p, const void *t, double sc, void *gp, void *gt, int sum)
{
  long np = (n + SGNN_PIECE - 1) / SGNN_PIECE;
  if (np < 2) {
    if (sum) return f64 ? mse_sum_double(n, p, t) : mse_sum_float(n, p, t);
    if (f64) mse_grad_double(n, p, t, sc, gp, gt);
    else mse_grad_float(n, p, t, (float)sc, gp, gt);
    return 0;
  }
  double *part = sum ? malloc(sizeof(double) * (size_t)np) : NULL, tot = 0;
  if (sum && !part) return f64 ? mse_sum_double(n, p, t) : mse_sum_float(n, p, t);
  MseJob J = {.f64 = f64, .n = n, .p = p, .t = t, .sc = sc, .part = part, .gp = gp, .gt = gt};
  if (sgnn_num_threads() < 2) mse_piece(&J, 0, (int)np); /* the same pieces: the same sum */
  else sgnn_parallel_for((int)np, mse_piece, &J);
  for (long k = 0; sum && k < np; k++) tot += part[k];
  free(part);
  return tot;
}

static int mse_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  SgnnTensor p = n->saved[0], t = n->saved[1], d = NULL, s = NULL, gd = NULL;
  SGNN_CHECK(p && t, SGNN_ERR_STATE, "backward of 'mse_loss': saved inputs already freed (backward twice?)");
  int rc = 0;
  SgnnBackend *be = sgnn_be(p);
  if (!cg && be == sgnn_backend_cpu()) { /* one loop, no temporaries */
    if (need[0]) SGNN_TRY(sgnn_tensor_new(be, p->dtype, p->ndim, p->shape, 0, &gin[0]));
    if (need[1]) SGNN_TRY(sgnn_tensor_new(be, p->dtype, p->ndim, p->shape, 0, &gin[1]));
    const int f64 = p->dtype == SGNN_F64;
    const double gv = f64 ? *(const double *)sgnn_ptr(g) : (double)*(const float *)sgnn_ptr(g);
    mse_cpu(f64, p->numel, sgnn_ptr(p), sgnn_ptr(t), 2.0 * gv / (double)p->numel, need[0] ? sgnn_ptr(gin[0]) : NULL,
            need[1] ? sgnn_ptr(gin[1]) : NULL, 0);
    return 0;
  }
  /* differentiable ops: they record exactly when create_graph is on */
  SGNN_TRYG(sgnn_sub(p, t, &d));
  SGNN_TRYG(sgnn_affine(g, 2.0 / (double)p->numel, 0.0, &s)); /* 0-d */
  SGNN_TRYG(sgnn_mul(d, s, &gd));
  if (need[1]) SGNN_TRYG(sgnn_affine(gd, -1.0, 0.0, &gin[1]));
  if (need[0]) {
    gin[0] = gd;
    gd = NULL;
  }
done:
  sgnn_tensor_free(&d);
  sgnn_tensor_free(&s);
  sgnn_tensor_free(&gd);
  return rc;
}

int sgnn_mse_loss(SgnnTensor pred, SgnnTensor target, SgnnTensor *out)
{
  SGNN_TRY(check("mse_loss", pred, target, out));
  int rc = 0, prev = sgnn_set_grad_enabled(0);
  SgnnTensor d = NULL, e = NULL, o = NULL;
  SgnnBackend *be = sgnn_be(pred);
  if (be == sgnn_backend_cpu()) {
    double v = mse_cpu(pred->dtype == SGNN_F64, pred->numel, sgnn_ptr(pred), sgnn_ptr(target), 0, NULL, NULL, 1);
    v /= (double)pred->numel;
    SGNN_TRYG(sgnn_tensor_from_f64(be, pred->dtype, 0, NULL, &v, &o));
  } else {
    SGNN_TRYG(sgnn_sub(pred, target, &d));
    SGNN_TRYG(sgnn_mul(d, d, &e));
    SGNN_TRYG(sgnn_mean(e, 0, NULL, 0, &o));
  }
  sgnn_set_grad_enabled(prev);
  SgnnTensor in[2] = {pred, target};
  SgnnNode *n = sgnn_record(o, "mse_loss", 2, in, mse_bw);
  if (n) {
    sgnn_node_save(n, 0, pred);
    sgnn_node_save(n, 1, target);
  }
  *out = o;
  o = NULL;
done:
  sgnn_set_grad_enabled(prev);
  sgnn_tensor_free(&d);
  sgnn_tensor_free(&e);
  sgnn_tensor_free(&o);
  return rc;
}

int sgnn_l1_loss(SgnnTensor p, SgnnTensor t, SgnnTensor *out)
{
  SGNN_TRY(check("l1_loss", p, t, out));
  int rc = 0;
  SgnnTensor d = NULL, e = NULL;
  SGNN_TRYG(sgnn_sub(p, t, &d));
  SGNN_TRYG(sgnn_abs(d, &e));
  SGNN_TRYG(sgnn_mean(e, 0, NULL, 0, out));
done:
  sgnn_tensor_free(&d);
  sgnn_tensor_free(&e);
  return rc;
}
