/* ops_reduce.c -- sum/mean over axes, expand (broadcast copy) and sum_to
 * (its adjoint, used by every broadcasting op's backward). sum's backward
 * is expand and expand's is sum_to, so all orders of derivatives close. */
#include "sgnn_impl.h"
#include <string.h>

/* strides of a tensor of shape tshape (ndim tn, broadcastable into the
 * iteration shape of ndim n) padded to 5 dims: 0 where it broadcasts */
static void bstrides(int tn, const int *tshape, long *st)
{
  int pad = SGNN_MAX_DIMS - tn;
  long s = 1;
  for (int d = SGNN_MAX_DIMS - 1; d >= 0; d--) {
    int e = d >= pad ? tshape[d - pad] : 1;
    st[d] = e == 1 ? 0 : s;
    s *= e;
  }
}

static int check_bcast(const char *op, int xn, const int *xs, int n, const int *shape)
{
  SGNN_CHECK(n <= SGNN_MAX_DIMS && xn <= n, SGNN_ERR_SHAPE, "%s: cannot broadcast %s to %s", op,
             sgnn_shape_str(xn, xs), sgnn_shape_str(n, shape));
  for (int i = 0; i < xn; i++) {
    int e = xs[i], t = shape[i + n - xn];
    SGNN_CHECK(e == t || e == 1, SGNN_ERR_SHAPE, "%s: cannot broadcast %s to %s", op, sgnn_shape_str(xn, xs),
               sgnn_shape_str(n, shape));
  }
  return 0;
}

static int expand_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  return sgnn_sum_to(g, n->in_ndim[0], n->in_shape[0], &gin[0]);
}

int sgnn_expand(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out)
{
  SGNN_CHECK(x && out && (shape || !ndim), SGNN_ERR_ARG, "expand: NULL argument");
  SGNN_CHECK_ST("expand", x);
  SGNN_TRY(check_bcast("expand", x->ndim, x->shape, ndim, shape));
  if (x->ndim == ndim && !memcmp(x->shape, shape, sizeof(int) * ndim)) {
    *out = sgnn_tensor_ref(x);
    return 0;
  }
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, ndim, shape, 0, &o));
  SgnnIter it;
  sgnn_iter_init(&it, ndim, shape);
  bstrides(x->ndim, x->shape, it.sa);
  int rc = sgnn_be(x)->copy_strided(x->dtype, &it, sgnn_ptr(x), sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  sgnn_record(o, "expand", 1, &x, expand_bw);
  *out = o;
  return 0;
}

static int sum_to_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  return sgnn_expand(g, n->in_ndim[0], n->in_shape[0], &gin[0]);
}

int sgnn_sum_to(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out)
{
  SGNN_CHECK(x && out && (shape || !ndim), SGNN_ERR_ARG, "sum_to: NULL argument");
  SGNN_CHECK_ST("sum_to", x);
  SGNN_TRY(check_bcast("sum_to", ndim, shape, x->ndim, x->shape));
  if (x->ndim == ndim && !memcmp(x->shape, shape, sizeof(int) * ndim)) {
    *out = sgnn_tensor_ref(x);
    return 0;
  }
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, ndim, shape, 1, &o));
  SgnnIter it;
  sgnn_iter_init(&it, x->ndim, x->shape);
  bstrides(ndim, shape, it.so);
  int rc = sgnn_be(x)->reduce_sum(x->dtype, &it, sgnn_ptr(x), sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  sgnn_record(o, "sum_to", 1, &x, sum_to_bw);
  *out = o;
  return 0;
}

/* keepdim shape of a reduction; returns the reduced element count */
static int reduce_shape(const char *op, SgnnTensor x, int naxes, const int *axes, int *kshape, long *count, int *red)
{
  for (int d = 0; d < SGNN_MAX_DIMS; d++) red[d] = 0;
  SGNN_CHECK(naxes >= 0 && naxes <= x->ndim && (naxes == 0 || axes), SGNN_ERR_ARG, "%s: bad axis list (%d axes) for %s",
             op, naxes, SHP(x));
  for (int i = 0; i < naxes; i++) {
    int a;
    SGNN_TRY(sgnn_normalize_axis(op, axes[i], x->ndim, &a));
    SGNN_CHECK(!red[a], SGNN_ERR_ARG, "%s: axis %d repeated", op, axes[i]);
    red[a] = 1;
  }
  *count = 1;
  for (int d = 0; d < x->ndim; d++) {
    int r = red[d] = naxes == 0 || red[d];
    kshape[d] = r ? 1 : x->shape[d];
    if (r) *count *= x->shape[d];
  }
  return 0;
}

int sgnn_sum(SgnnTensor x, int naxes, const int *axes, int keepdim, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "sum: NULL argument");
  SGNN_CHECK_ST("sum", x);
  int ks[SGNN_MAX_DIMS], os[SGNN_MAX_DIMS], red[SGNN_MAX_DIMS], on = 0;
  long cnt;
  SGNN_TRY(reduce_shape("sum", x, naxes, axes, ks, &cnt, red));
  for (int d = 0; d < x->ndim; d++)
    if (keepdim || !red[d]) os[on++] = ks[d];
  SgnnTensor k, o;
  SGNN_TRY(sgnn_sum_to(x, x->ndim, ks, &k));
  int rc = sgnn_reshape(k, on, os, &o);
  sgnn_tensor_free(&k);
  if (!rc) *out = o;
  return rc;
}

int sgnn_mean(SgnnTensor x, int naxes, const int *axes, int keepdim, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "mean: NULL argument");
  int ks[SGNN_MAX_DIMS], red[SGNN_MAX_DIMS];
  long cnt;
  SGNN_TRY(reduce_shape("mean", x, naxes, axes, ks, &cnt, red));
  SGNN_CHECK(cnt > 0, SGNN_ERR_SHAPE, "mean: empty reduction over %s", SHP(x));
  SgnnTensor s;
  SGNN_TRY(sgnn_sum(x, naxes, axes, keepdim, &s));
  int rc = sgnn_affine(s, 1.0 / (double)cnt, 0.0, out);
  sgnn_tensor_free(&s);
  return rc;
}
