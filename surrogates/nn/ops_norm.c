/* ops_norm.c -- group norm and batch norm, composed from reductions and
 * elementwise ops so that second derivatives (needed when a loss contains
 * input derivatives of a normalised network) come for free. */
#include "sgnn_impl.h"
#include <stdlib.h>

/* (x - mean) / sqrt(var + eps) over the given axes of x3, biased variance */
static int normalize(SgnnTensor x3, int nax, const int *axes, double eps, SgnnTensor mu_in, SgnnTensor var_in,
                     SgnnTensor *xh, SgnnTensor *mu_out, SgnnTensor *var_out)
{
  int rc = 0;
  SgnnTensor mu = NULL, xc = NULL, sq = NULL, var = NULL, ve = NULL, inv = NULL;
  if (mu_in) mu = sgnn_tensor_ref(mu_in);
  else SGNN_TRYG(sgnn_mean(x3, nax, axes, 1, &mu));
  SGNN_TRYG(sgnn_sub(x3, mu, &xc));
  if (var_in) var = sgnn_tensor_ref(var_in);
  else {
    SGNN_TRYG(sgnn_mul(xc, xc, &sq));
    SGNN_TRYG(sgnn_mean(sq, nax, axes, 1, &var));
  }
  SGNN_TRYG(sgnn_affine(var, 1.0, eps, &ve));
  SGNN_TRYG(sgnn_pow(ve, -0.5, &inv));
  SGNN_TRYG(sgnn_mul(xc, inv, xh));
  if (mu_out) *mu_out = sgnn_tensor_ref(mu);
  if (var_out) *var_out = sgnn_tensor_ref(var);
done:
  sgnn_tensor_free(&mu);
  sgnn_tensor_free(&xc);
  sgnn_tensor_free(&sq);
  sgnn_tensor_free(&var);
  sgnn_tensor_free(&ve);
  sgnn_tensor_free(&inv);
  return rc;
}

/* y3 [N,C,S] * gamma[C] + beta[C], reshaped back to x's shape */
static int affine_out(SgnnTensor y3, SgnnTensor gamma, SgnnTensor beta, SgnnTensor x, SgnnTensor *out)
{
  int rc = 0, cs[2] = {y3->shape[1], 1};
  SgnnTensor g2 = NULL, b2 = NULL, t = NULL, u = NULL;
  t = sgnn_tensor_ref(y3);
  if (gamma) {
    SGNN_TRYG(sgnn_reshape(gamma, 2, cs, &g2));
    SGNN_TRYG(sgnn_mul(t, g2, &u));
    sgnn_tensor_free(&t);
    t = u;
    u = NULL;
  }
  if (beta) {
    SGNN_TRYG(sgnn_reshape(beta, 2, cs, &b2));
    SGNN_TRYG(sgnn_add(t, b2, &u));
    sgnn_tensor_free(&t);
    t = u;
    u = NULL;
  }
  SGNN_TRYG(sgnn_reshape(t, x->ndim, x->shape, out));
done:
  sgnn_tensor_free(&g2);
  sgnn_tensor_free(&b2);
  sgnn_tensor_free(&t);
  sgnn_tensor_free(&u);
  return rc;
}

static int check_affine(const char *op, SgnnTensor x, SgnnTensor p, const char *what)
{
  if (!p) return 0;
  SGNN_TRY(sgnn_check_pair(op, x, p));
  SGNN_CHECK(p->ndim == 1 && p->shape[0] == x->shape[1], SGNN_ERR_SHAPE, "%s: %s %s does not match channels of %s", op,
             what, SHP(p), SHP(x));
  return 0;
}

int sgnn_group_norm(SgnnTensor x, int groups, SgnnTensor gamma, SgnnTensor beta, double eps, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "group_norm: NULL argument");
  SGNN_CHECK(x->ndim >= 2, SGNN_ERR_SHAPE, "group_norm: input must be [N,C,...], got %s", SHP(x));
  SGNN_CHECK(groups >= 1 && x->shape[1] % groups == 0, SGNN_ERR_ARG, "group_norm: %d groups do not divide %d channels of %s",
             groups, x->shape[1], SHP(x));
  SGNN_CHECK(eps >= 0, SGNN_ERR_ARG, "group_norm: negative eps %g", eps);
  SGNN_TRY(check_affine("group_norm", x, gamma, "gamma"));
  SGNN_TRY(check_affine("group_norm", x, beta, "beta"));
  int N = x->shape[0], C = x->shape[1], S = (int)(x->numel / ((long)N * C)), rc = 0, ax = 2;
  int gs[3] = {N, groups, C / groups * S}, cs[3] = {N, C, S};
  SgnnTensor xg = NULL, xh = NULL, y3 = NULL;
  SGNN_TRYG(sgnn_reshape(x, 3, gs, &xg));
  SGNN_TRYG(normalize(xg, 1, &ax, eps, NULL, NULL, &xh, NULL, NULL));
  SGNN_TRYG(sgnn_reshape(xh, 3, cs, &y3));
  SGNN_TRYG(affine_out(y3, gamma, beta, x, out));
done:
  sgnn_tensor_free(&xg);
  sgnn_tensor_free(&xh);
  sgnn_tensor_free(&y3);
  return rc;
}

int sgnn_batch_norm(SgnnTensor x, SgnnTensor gamma, SgnnTensor beta, SgnnTensor running_mean, SgnnTensor running_var,
                    int training, double momentum, double eps, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "batch_norm: NULL argument");
  SGNN_CHECK(x->ndim >= 2, SGNN_ERR_SHAPE, "batch_norm: input must be [N,C,...], got %s", SHP(x));
  SGNN_TRY(check_affine("batch_norm", x, gamma, "gamma"));
  SGNN_TRY(check_affine("batch_norm", x, beta, "beta"));
  SGNN_TRY(check_affine("batch_norm", x, running_mean, "running_mean"));
  SGNN_TRY(check_affine("batch_norm", x, running_var, "running_var"));
  SGNN_CHECK(training || (running_mean && running_var), SGNN_ERR_ARG,
             "batch_norm: evaluation mode needs running_mean and running_var");
  int N = x->shape[0], C = x->shape[1], S = (int)(x->numel / ((long)N * C)), rc = 0, axes[2] = {0, 2};
  int cs[3] = {N, C, S}, ks[3] = {1, C, 1};
  long cnt = (long)N * S;
  SgnnTensor x3 = NULL, xh = NULL, mu = NULL, var = NULL, rm = NULL, rv = NULL;
  SGNN_TRYG(sgnn_reshape(x, 3, cs, &x3));
  if (training) {
    SGNN_CHECK(cnt > 1, SGNN_ERR_SHAPE, "batch_norm: training needs more than one value per channel, got %s", SHP(x));
    SGNN_TRYG(normalize(x3, 2, axes, eps, NULL, NULL, &xh, &mu, &var));
    if (running_mean && running_var) { /* statistics are not part of the graph */
      int prev = sgnn_set_grad_enabled(0);
      double *hm = NULL, *hv = NULL, *rmh = NULL, *rvh = NULL;
      hm = malloc(sizeof(double) * 4 * C);
      if (!hm) rc = sgnn_seterr(SGNN_ERR_MEM, "batch_norm: out of memory");
      if (!rc) {
        hv = hm + C;
        rmh = hv + C;
        rvh = rmh + C;
        rc = sgnn_tensor_to_f64(mu, hm);
      }
      if (!rc) rc = sgnn_tensor_to_f64(var, hv);
      if (!rc) rc = sgnn_tensor_to_f64(running_mean, rmh);
      if (!rc) rc = sgnn_tensor_to_f64(running_var, rvh);
      for (int c = 0; !rc && c < C; c++) {
        rmh[c] = (1 - momentum) * rmh[c] + momentum * hm[c];
        rvh[c] = (1 - momentum) * rvh[c] + momentum * hv[c] * (double)cnt / (double)(cnt - 1);
      }
      if (!rc) rc = sgnn_tensor_set_f64(running_mean, rmh);
      if (!rc) rc = sgnn_tensor_set_f64(running_var, rvh);
      free(hm);
      sgnn_set_grad_enabled(prev);
      if (rc) goto done;
    }
  } else {
    SGNN_TRYG(sgnn_reshape(running_mean, 3, ks, &rm));
    SGNN_TRYG(sgnn_reshape(running_var, 3, ks, &rv));
    SGNN_TRYG(normalize(x3, 2, axes, eps, rm, rv, &xh, NULL, NULL));
  }
  SGNN_TRYG(affine_out(xh, gamma, beta, x, out));
done:
  sgnn_tensor_free(&x3);
  sgnn_tensor_free(&xh);
  sgnn_tensor_free(&mu);
  sgnn_tensor_free(&var);
  sgnn_tensor_free(&rm);
  sgnn_tensor_free(&rv);
  return rc;
}
