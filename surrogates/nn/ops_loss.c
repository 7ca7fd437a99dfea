/* ops_loss.c -- mean squared error and mean absolute error (0-d results).
 * mse_loss is one node: built from sub/mul/mean its backward took four
 * full-size passes (expand the mean's gradient, two products g*d, their
 * sum); as a node it takes two, d = p - t and d * (2 g / n), written with
 * differentiable ops so create_graph (forces in a loss, second order)
 * works unchanged. l1_loss stays composite. */
#include "sgnn_impl.h"

static int check(const char *op, SgnnTensor p, SgnnTensor t, SgnnTensor *out)
{
  SGNN_CHECK(out, SGNN_ERR_ARG, "%s: NULL output", op);
  SGNN_TRY(sgnn_check_pair(op, p, t));
  SGNN_CHECK(sgnn_same_shape(p, t), SGNN_ERR_SHAPE, "%s: prediction %s and target %s differ", op, SHP(p), SHP(t));
  return 0;
}

/* d(mean((p - t)^2)) = (2 g / n) (p - t) dp - the same dt */
static int mse_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg; /* the ops below record exactly when create_graph is on */
  SgnnTensor p = n->saved[0], t = n->saved[1], d = NULL, s = NULL, gd = NULL;
  SGNN_CHECK(p && t, SGNN_ERR_STATE, "backward of 'mse_loss': saved inputs already freed (backward twice?)");
  int rc = 0;
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
  SGNN_TRYG(sgnn_sub(pred, target, &d));
  SGNN_TRYG(sgnn_mul(d, d, &e));
  SGNN_TRYG(sgnn_mean(e, 0, NULL, 0, &o));
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
