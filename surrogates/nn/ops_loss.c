/* ops_loss.c -- mean squared error and mean absolute error (0-d results).
 * mse_loss is one node: built from sub/mul/mean its backward took four
 * full-size passes (expand the mean's gradient, two products g*d, their
 * sum); as a node it takes two, d = p - t and d * (2 g / n), written with
 * differentiable ops so create_graph (forces in a loss, second order)
 * works unchanged. On the CPU backend both directions are also single
 * loops (no temporaries): the forward sums (p - t)^2 in double, the
 * backward without create_graph writes (p - t) 2g/n directly. l1_loss stays
 * composite. */
#include "sgnn_impl.h"

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
    double s = 0;                                                                                     \
    for (long i = 0; i < n; i++) s += (double)(p[i] - t[i]) * (double)(p[i] - t[i]);                  \
    return s;                                                                                         \
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

static int mse_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  SgnnTensor p = n->saved[0], t = n->saved[1], d = NULL, s = NULL, gd = NULL;
  SGNN_CHECK(p && t, SGNN_ERR_STATE, "backward of 'mse_loss': saved inputs already freed (backward twice?)");
  int rc = 0;
  SgnnBackend *be = sgnn_be(p);
  if (!cg && be == sgnn_backend_cpu()) { /* one loop, no temporaries */
    if (need[0]) SGNN_TRY(sgnn_tensor_new(be, p->dtype, p->ndim, p->shape, 0, &gin[0]));
    if (need[1]) SGNN_TRY(sgnn_tensor_new(be, p->dtype, p->ndim, p->shape, 0, &gin[1]));
    if (p->dtype == SGNN_F64)
      mse_grad_double(p->numel, sgnn_ptr(p), sgnn_ptr(t), 2.0 * *(const double *)sgnn_ptr(g) / (double)p->numel,
                      need[0] ? sgnn_ptr(gin[0]) : NULL, need[1] ? sgnn_ptr(gin[1]) : NULL);
    else
      mse_grad_float(p->numel, sgnn_ptr(p), sgnn_ptr(t),
                     (float)(2.0 * *(const float *)sgnn_ptr(g) / (double)p->numel), need[0] ? sgnn_ptr(gin[0]) : NULL,
                     need[1] ? sgnn_ptr(gin[1]) : NULL);
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
    double v = pred->dtype == SGNN_F64 ? mse_sum_double(pred->numel, sgnn_ptr(pred), sgnn_ptr(target))
                                       : mse_sum_float(pred->numel, sgnn_ptr(pred), sgnn_ptr(target));
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
