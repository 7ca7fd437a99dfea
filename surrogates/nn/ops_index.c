/* ops_index.c -- index_select (gather along an axis) and scatter_add (its
 * adjoint). Each is the other's backward; the index buffer lives on the
 * backend and is shared between the forward and backward nodes. These two
 * also carry max pooling, nearest/trilinear upsampling and point
 * interpolation (see ops_pool.c), which is how those get double backward. */
#include "sgnn_impl.h"
#include <string.h>

static void split(SgnnTensor x, int a, long *outer, long *inner)
{
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < a; d++) *outer *= x->shape[d];
  for (int d = a + 1; d < x->ndim; d++) *inner *= x->shape[d];
}

static int index_select_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  SGNN_CHECK(n->ix, SGNN_ERR_STATE, "backward of 'index_select': index already freed (backward twice?)");
  return sgnn_scatter_add_ix(g, n->ip[0], n->ix, n->in_shape[0][n->ip[0]], &gin[0]);
}

static int scatter_add_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  SGNN_CHECK(n->ix, SGNN_ERR_STATE, "backward of 'scatter_add': index already freed (backward twice?)");
  return sgnn_index_select_ix(g, n->ip[0], n->ix, &gin[0]);
}

int sgnn_index_select_ix(SgnnTensor x, int axis, SgnnIndex *ix, SgnnTensor *out)
{
  int a, shape[SGNN_MAX_DIMS];
  SGNN_TRY(sgnn_normalize_axis("index_select", axis, x->ndim, &a));
  memcpy(shape, x->shape, sizeof shape);
  SGNN_CHECK(ix->n <= 0x7fffffff, SGNN_ERR_SHAPE, "index_select: %ld indices is too many", ix->n);
  shape[a] = (int)ix->n;
  long outer, inner;
  split(x, a, &outer, &inner);
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, shape, 0, &o));
  int rc = sgnn_be(x)->index_select(x->dtype, outer, x->shape[a], inner, sgnn_ptr(x), ix->dev, ix->n, sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "index_select", 1, &x, index_select_bw);
  if (n) {
    n->ip[0] = a;
    n->ix = ix;
    ix->refcount++;
  }
  *out = o;
  return 0;
}

int sgnn_scatter_add_ix(SgnnTensor x, int axis, SgnnIndex *ix, int dim_size, SgnnTensor *out)
{
  int a, shape[SGNN_MAX_DIMS];
  SGNN_TRY(sgnn_normalize_axis("scatter_add", axis, x->ndim, &a));
  SGNN_CHECK(x->shape[a] == ix->n, SGNN_ERR_SHAPE, "scatter_add: %ld indices for axis %d of extent %d in %s", ix->n, a,
             x->shape[a], SHP(x));
  memcpy(shape, x->shape, sizeof shape);
  shape[a] = dim_size;
  long outer, inner;
  split(x, a, &outer, &inner);
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, shape, 1, &o));
  int rc = sgnn_be(x)->scatter_add(x->dtype, outer, ix->n, inner, sgnn_ptr(x), ix->dev, dim_size, sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "scatter_add", 1, &x, scatter_add_bw);
  if (n) {
    n->ip[0] = a;
    n->ix = ix;
    ix->refcount++;
  }
  *out = o;
  return 0;
}

static int check_idx(const char *op, long n, const long *idx, long lim, SgnnTensor x)
{
  SGNN_CHECK(n >= 0 && (idx || !n), SGNN_ERR_ARG, "%s: bad index list (n=%ld)", op, n);
  for (long i = 0; i < n; i++)
    SGNN_CHECK(idx[i] >= 0 && idx[i] < lim, SGNN_ERR_ARG, "%s: index %ld (position %ld) out of range [0,%ld) for %s", op,
               idx[i], i, lim, SHP(x));
  return 0;
}

int sgnn_index_select(SgnnTensor x, int axis, long n, const long *idx, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "index_select: NULL argument");
  SGNN_CHECK_ST("index_select", x);
  int a;
  SGNN_TRY(sgnn_normalize_axis("index_select", axis, x->ndim, &a));
  SGNN_TRY(check_idx("index_select", n, idx, x->shape[a], x));
  SgnnIndex *ix;
  SGNN_TRY(sgnn_index_create(sgnn_be(x), n, idx, &ix));
  int rc = sgnn_index_select_ix(x, a, ix, out);
  sgnn_index_release(&ix);
  return rc;
}

int sgnn_scatter_add(SgnnTensor x, int axis, long n, const long *idx, int dim_size, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "scatter_add: NULL argument");
  SGNN_CHECK_ST("scatter_add", x);
  SGNN_CHECK(dim_size >= 0, SGNN_ERR_ARG, "scatter_add: negative dim_size %d", dim_size);
  SGNN_TRY(check_idx("scatter_add", n, idx, dim_size, x));
  SgnnIndex *ix;
  SGNN_TRY(sgnn_index_create(sgnn_be(x), n, idx, &ix));
  int rc = sgnn_scatter_add_ix(x, axis, ix, dim_size, out);
  sgnn_index_release(&ix);
  return rc;
}
