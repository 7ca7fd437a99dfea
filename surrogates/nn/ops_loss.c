/* ops_loss.c -- mean squared error and mean absolute error (0-d results). */
#include "sgnn_impl.h"

static int loss(const char *op, int l1, SgnnTensor p, SgnnTensor t, SgnnTensor *out)
{
  SGNN_CHECK(out, SGNN_ERR_ARG, "%s: NULL output", op);
  SGNN_TRY(sgnn_check_pair(op, p, t));
  SGNN_CHECK(sgnn_same_shape(p, t), SGNN_ERR_SHAPE, "%s: prediction %s and target %s differ", op, SHP(p), SHP(t));
  int rc = 0;
  SgnnTensor d = NULL, e = NULL;
  SGNN_TRYG(sgnn_sub(p, t, &d));
  SGNN_TRYG(l1 ? sgnn_abs(d, &e) : sgnn_mul(d, d, &e));
  SGNN_TRYG(sgnn_mean(e, 0, NULL, 0, out));
done:
  sgnn_tensor_free(&d);
  sgnn_tensor_free(&e);
  return rc;
}

int sgnn_mse_loss(SgnnTensor pred, SgnnTensor target, SgnnTensor *out) { return loss("mse_loss", 0, pred, target, out); }
int sgnn_l1_loss(SgnnTensor pred, SgnnTensor target, SgnnTensor *out) { return loss("l1_loss", 1, pred, target, out); }
