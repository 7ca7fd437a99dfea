/* ops_shape.c -- reshape (a view: no copy), permute/transpose, slice,
 * zero padding along an axis, concat. All are linear; each backward is
 * another op of this file (slice <-> pad, permute <-> inverse permute),
 * so derivatives of every order exist. */
#include "sgnn_impl.h"
#include <string.h>

/* contiguous strides of shape, right-aligned into 5 dims */
static void cstrides(int ndim, const int *shape, long *st)
{
  int pad = SGNN_MAX_DIMS - ndim;
  long s = 1;
  for (int d = SGNN_MAX_DIMS - 1; d >= 0; d--) {
    st[d] = s;
    if (d >= pad) s *= shape[d - pad];
  }
}

static int reshape_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  return sgnn_reshape(g, n->in_ndim[0], n->in_shape[0], &gin[0]);
}

int sgnn_reshape(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out)
{
  SGNN_CHECK(x && out && (shape || !ndim), SGNN_ERR_ARG, "reshape: NULL argument");
  SGNN_CHECK_ST("reshape", x);
  SGNN_CHECK(ndim >= 0 && ndim <= SGNN_MAX_DIMS, SGNN_ERR_SHAPE, "reshape: %d dims (max %d)", ndim, SGNN_MAX_DIMS);
  int s[SGNN_MAX_DIMS], infer = -1;
  long known = 1;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (s[i] == -1) {
      SGNN_CHECK(infer < 0, SGNN_ERR_SHAPE, "reshape: more than one -1 in %s", sgnn_shape_str(ndim, shape));
      infer = i;
    } else {
      SGNN_CHECK(s[i] >= 0, SGNN_ERR_SHAPE, "reshape: bad extent in %s", sgnn_shape_str(ndim, shape));
      known *= s[i];
    }
  }
  if (infer >= 0) {
    SGNN_CHECK(known > 0 && x->numel % known == 0, SGNN_ERR_SHAPE, "reshape: cannot infer -1 reshaping %s to %s", SHP(x),
               sgnn_shape_str(ndim, shape));
    s[infer] = (int)(x->numel / known);
    known *= s[infer];
  }
  SGNN_CHECK(known == x->numel, SGNN_ERR_SHAPE, "reshape: %s (%ld elements) cannot become %s", SHP(x), x->numel,
             sgnn_shape_str(ndim, shape));
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_view(x, 0, ndim, s, &o));
  sgnn_record(o, "reshape", 1, &x, reshape_bw);
  *out = o;
  return 0;
}

static int permute_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  int inv[SGNN_MAX_DIMS];
  (void)cg;
  if (!need[0]) return 0;
  for (int i = 0; i < n->out_ndim; i++) inv[n->ip[i]] = i;
  return sgnn_permute(g, inv, &gin[0]);
}

int sgnn_permute(SgnnTensor x, const int *perm, SgnnTensor *out)
{
  SGNN_CHECK(x && out && (perm || !x->ndim), SGNN_ERR_ARG, "permute: NULL argument");
  SGNN_CHECK_ST("permute", x);
  int seen[SGNN_MAX_DIMS] = {0}, shape[SGNN_MAX_DIMS];
  long xs[SGNN_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    SGNN_CHECK(perm[i] >= 0 && perm[i] < x->ndim && !seen[perm[i]], SGNN_ERR_ARG,
               "permute: %s is not a permutation of the %d axes of %s", sgnn_shape_str(x->ndim, perm), x->ndim, SHP(x));
    seen[perm[i]] = 1;
    shape[i] = x->shape[perm[i]];
  }
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, shape, 0, &o));
  SgnnIter it;
  sgnn_iter_init(&it, x->ndim, shape);
  cstrides(x->ndim, x->shape, xs);
  int pad = SGNN_MAX_DIMS - x->ndim;
  for (int i = 0; i < x->ndim; i++) it.sa[pad + i] = xs[pad + perm[i]];
  int rc = sgnn_be(x)->copy_strided(x->dtype, &it, sgnn_ptr(x), sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "permute", 1, &x, permute_bw);
  if (n)
    for (int i = 0; i < x->ndim; i++) n->ip[i] = perm[i];
  *out = o;
  return 0;
}

int sgnn_transpose(SgnnTensor x, int d0, int d1, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "transpose: NULL argument");
  int a, b, perm[SGNN_MAX_DIMS];
  SGNN_TRY(sgnn_normalize_axis("transpose", d0, x->ndim, &a));
  SGNN_TRY(sgnn_normalize_axis("transpose", d1, x->ndim, &b));
  for (int i = 0; i < x->ndim; i++) perm[i] = i;
  perm[a] = b;
  perm[b] = a;
  return sgnn_permute(x, perm, out);
}

static int slice_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  int axis = n->ip[0], start = n->ip[1], stop = n->ip[2];
  return sgnn_pad_axis(g, axis, start, n->in_shape[0][axis] - stop, &gin[0]);
}

int sgnn_slice(SgnnTensor x, int axis, int start, int stop, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "slice: NULL argument");
  SGNN_CHECK_ST("slice", x);
  int a;
  SGNN_TRY(sgnn_normalize_axis("slice", axis, x->ndim, &a));
  SGNN_CHECK(0 <= start && start <= stop && stop <= x->shape[a], SGNN_ERR_ARG,
             "slice: range [%d,%d) out of bounds for axis %d of %s", start, stop, axis, SHP(x));
  int shape[SGNN_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[a] = stop - start;
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, shape, 0, &o));
  SgnnIter it;
  sgnn_iter_init(&it, x->ndim, shape);
  cstrides(x->ndim, x->shape, it.sa);
  int pad = SGNN_MAX_DIMS - x->ndim;
  const char *src = (const char *)sgnn_ptr(x) + (size_t)start * it.sa[pad + a] * sgnn_esize(x->dtype);
  int rc = o->numel ? sgnn_be(x)->copy_strided(x->dtype, &it, src, sgnn_ptr(o)) : 0;
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "slice", 1, &x, slice_bw);
  if (n) {
    n->ip[0] = a;
    n->ip[1] = start;
    n->ip[2] = stop;
  }
  *out = o;
  return 0;
}

static int pad_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  int axis = n->ip[0], before = n->ip[1];
  return sgnn_slice(g, axis, before, before + n->in_shape[0][axis], &gin[0]);
}

/* copy x into the region of o starting at `at` along axis a (o contiguous) */
static int place(SgnnTensor x, SgnnTensor o, int a, int at)
{
  if (!x->numel) return 0;
  SgnnIter it;
  sgnn_iter_init(&it, x->ndim, x->shape);
  cstrides(o->ndim, o->shape, it.so);
  int pad = SGNN_MAX_DIMS - x->ndim;
  char *dst = (char *)sgnn_ptr(o) + (size_t)at * it.so[pad + a] * sgnn_esize(o->dtype);
  return sgnn_be(x)->copy_strided(x->dtype, &it, sgnn_ptr(x), dst);
}

int sgnn_pad_axis(SgnnTensor x, int axis, int before, int after, SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "pad_axis: NULL argument");
  SGNN_CHECK_ST("pad_axis", x);
  int a;
  SGNN_TRY(sgnn_normalize_axis("pad_axis", axis, x->ndim, &a));
  SGNN_CHECK(before >= 0 && after >= 0, SGNN_ERR_ARG, "pad_axis: negative padding (%d,%d) for %s", before, after, SHP(x));
  int shape[SGNN_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[a] += before + after;
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, shape, 1, &o));
  int rc = place(x, o, a, before);
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "pad_axis", 1, &x, pad_bw);
  if (n) {
    n->ip[0] = a;
    n->ip[1] = before;
  }
  *out = o;
  return 0;
}

static int concat_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  int a = n->ip[0], at = 0;
  for (int i = 0; i < n->nin; i++) {
    int e = n->in_shape[i][a];
    if (need[i]) SGNN_TRY(sgnn_slice(g, a, at, at + e, &gin[i]));
    at += e;
  }
  return 0;
}

int sgnn_concat(int nx, SgnnTensor *xs, int axis, SgnnTensor *out)
{
  SGNN_CHECK(nx > 0 && xs && out, SGNN_ERR_ARG, "concat: no inputs");
  for (int i = 0; i < nx; i++) SGNN_CHECK(xs[i], SGNN_ERR_ARG, "concat: input %d is NULL", i);
  int a;
  SGNN_TRY(sgnn_normalize_axis("concat", axis, xs[0]->ndim, &a));
  int shape[SGNN_MAX_DIMS];
  memcpy(shape, xs[0]->shape, sizeof shape);
  shape[a] = 0;
  for (int i = 0; i < nx; i++) {
    SGNN_TRY(sgnn_check_pair("concat", xs[0], xs[i]));
    SGNN_CHECK(xs[i]->ndim == xs[0]->ndim, SGNN_ERR_SHAPE, "concat: input %d is %s, input 0 is %s", i, SHP(xs[i]),
               SHP(xs[0]));
    for (int d = 0; d < xs[0]->ndim; d++)
      SGNN_CHECK(d == a || xs[i]->shape[d] == xs[0]->shape[d], SGNN_ERR_SHAPE,
                 "concat: input %d %s differs from input 0 %s off axis %d", i, SHP(xs[i]), SHP(xs[0]), a);
    shape[a] += xs[i]->shape[a];
  }
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(xs[0]), xs[0]->dtype, xs[0]->ndim, shape, 0, &o));
  for (int i = 0, at = 0; i < nx; at += xs[i]->shape[a], i++) {
    int rc = place(xs[i], o, a, at);
    if (rc) {
      sgnn_tensor_free(&o);
      return rc;
    }
  }
  SgnnNode *n = sgnn_record(o, "concat", nx, xs, concat_bw);
  if (n) n->ip[0] = a;
  *out = o;
  return 0;
}
