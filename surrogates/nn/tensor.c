/* tensor.c -- tensor headers and reference-counted storage. A tensor is a
 * contiguous row-major block (dtype f32/f64, up to 5 dims) at an element
 * offset inside a storage; views (reshape, slab parameters) share storage. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

long sgnn_numel_of(int ndim, const int *shape)
{
  long n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static int check_shape(const char *op, int ndim, const int *shape)
{
  SGNN_CHECK(ndim >= 0 && ndim <= SGNN_MAX_DIMS, SGNN_ERR_SHAPE, "%s: ndim %d out of range 0..%d", op, ndim,
             SGNN_MAX_DIMS);
  SGNN_CHECK(ndim == 0 || shape, SGNN_ERR_ARG, "%s: NULL shape", op);
  for (int i = 0; i < ndim; i++)
    SGNN_CHECK(shape[i] >= 0, SGNN_ERR_SHAPE, "%s: negative extent in shape %s", op, sgnn_shape_str(ndim, shape));
  return 0;
}

int sgnn_tensor_new(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, int zero, SgnnTensor *out)
{
  SGNN_CHECK(be && out, SGNN_ERR_ARG, "tensor_new: NULL backend or output");
  SGNN_CHECK(dt == SGNN_F32 || dt == SGNN_F64, SGNN_ERR_DTYPE, "tensor_new: unknown dtype %d", (int)dt);
  SGNN_TRY(check_shape("tensor_new", ndim, shape));
  SgnnTensor t = calloc(1, sizeof *t);
  SgnnStorage *s = calloc(1, sizeof *s);
  long n = sgnn_numel_of(ndim, shape);
  size_t bytes = (size_t)n * sgnn_esize(dt);
  void *p = (t && s) ? sgnn_be_alloc(be, bytes) : NULL;
  if (!p) {
    free(t);
    free(s);
    return sgnn_seterr(SGNN_ERR_MEM, "tensor_new: cannot allocate %zu bytes for %s on '%s'", bytes,
                       sgnn_shape_str(ndim, shape), be->name);
  }
  s->be = be;
  s->ptr = p;
  s->bytes = bytes;
  s->refcount = 1;
  t->refcount = 1;
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  t->numel = n;
  t->st = s;
  if (zero && n) {
    int rc = be->fill(dt, n, p, 0.0);
    if (rc) {
      sgnn_tensor_free(&t);
      return rc;
    }
  }
  *out = t;
  return 0;
}

int sgnn_tensor_view(SgnnTensor base, long offset, int ndim, const int *shape, SgnnTensor *out)
{
  SGNN_CHECK_ST("view", base);
  SGNN_TRY(check_shape("view", ndim, shape));
  long n = sgnn_numel_of(ndim, shape);
  SGNN_CHECK(offset >= 0 && (size_t)(base->offset + offset + n) * sgnn_esize(base->dtype) <= base->st->bytes,
             SGNN_ERR_SHAPE, "view: %s at offset %ld exceeds storage of %s", sgnn_shape_str(ndim, shape), offset,
             SHP(base));
  SgnnTensor t = calloc(1, sizeof *t);
  SGNN_CHECK(t, SGNN_ERR_MEM, "view: out of memory");
  t->refcount = 1;
  t->dtype = base->dtype;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  t->numel = n;
  t->st = base->st;
  t->st->refcount++;
  t->offset = base->offset + offset;
  *out = t;
  return 0;
}

static void storage_release(SgnnStorage *s)
{
  if (!s || --s->refcount > 0) return;
  sgnn_be_free(s->be, s->ptr, s->bytes);
  free(s);
}

void sgnn_tensor_free(SgnnTensor *tp)
{
  if (!tp || !*tp) return;
  SgnnTensor t = *tp;
  *tp = NULL;
  if (--t->refcount > 0) return;
  sgnn_node_release(&t->node);
  sgnn_tensor_free(&t->grad);
  storage_release(t->st);
  free(t);
}

SgnnTensor sgnn_tensor_ref(SgnnTensor t)
{
  if (t) t->refcount++;
  return t;
}

int sgnn_tensor_zeros(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, SgnnTensor *out)
{
  return sgnn_tensor_new(be, dt, ndim, shape, 1, out);
}

int sgnn_tensor_full(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, double v, SgnnTensor *out)
{
  SGNN_TRY(sgnn_tensor_new(be, dt, ndim, shape, 0, out));
  int rc = be->fill(dt, (*out)->numel, sgnn_ptr(*out), v);
  if (rc) sgnn_tensor_free(out);
  return rc;
}

int sgnn_tensor_from_host(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, const void *data,
                          SgnnTensor *out)
{
  SGNN_CHECK(data, SGNN_ERR_ARG, "tensor_from_host: NULL data");
  SGNN_TRY(sgnn_tensor_new(be, dt, ndim, shape, 0, out));
  int rc = be->h2d(sgnn_ptr(*out), data, (size_t)(*out)->numel * sgnn_esize(dt));
  if (rc) sgnn_tensor_free(out);
  return rc;
}

int sgnn_tensor_from_f64(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, const double *data,
                         SgnnTensor *out)
{
  SGNN_CHECK(data, SGNN_ERR_ARG, "tensor_from_f64: NULL data");
  SGNN_TRY(sgnn_tensor_new(be, dt, ndim, shape, 0, out));
  int rc = sgnn_tensor_set_f64(*out, data);
  if (rc) sgnn_tensor_free(out);
  return rc;
}

int sgnn_tensor_set_f64(SgnnTensor t, const double *data)
{
  SGNN_CHECK(t && data, SGNN_ERR_ARG, "tensor_set_f64: NULL argument");
  SGNN_CHECK_ST("tensor_set_f64", t);
  SgnnBackend *be = sgnn_be(t);
  if (t->dtype == SGNN_F64) return be->h2d(sgnn_ptr(t), data, (size_t)t->numel * 8);
  float *tmp = malloc((size_t)t->numel * 4 + 4);
  SGNN_CHECK(tmp, SGNN_ERR_MEM, "tensor_set_f64: out of memory");
  for (long i = 0; i < t->numel; i++) tmp[i] = (float)data[i];
  int rc = be->h2d(sgnn_ptr(t), tmp, (size_t)t->numel * 4);
  free(tmp);
  return rc;
}

int sgnn_tensor_to_host(SgnnTensor t, void *buf)
{
  SGNN_CHECK(t && buf, SGNN_ERR_ARG, "tensor_to_host: NULL argument");
  SGNN_CHECK_ST("tensor_to_host", t);
  return sgnn_be(t)->d2h(buf, sgnn_ptr(t), (size_t)t->numel * sgnn_esize(t->dtype));
}

int sgnn_tensor_to_f64(SgnnTensor t, double *buf)
{
  SGNN_CHECK(t && buf, SGNN_ERR_ARG, "tensor_to_f64: NULL argument");
  SGNN_CHECK_ST("tensor_to_f64", t);
  if (t->dtype == SGNN_F64) return sgnn_tensor_to_host(t, buf);
  float *tmp = malloc((size_t)t->numel * 4 + 4);
  SGNN_CHECK(tmp, SGNN_ERR_MEM, "tensor_to_f64: out of memory");
  int rc = sgnn_tensor_to_host(t, tmp);
  for (long i = 0; !rc && i < t->numel; i++) buf[i] = tmp[i];
  free(tmp);
  return rc;
}

int sgnn_tensor_item(SgnnTensor t, double *v)
{
  SGNN_CHECK(t && v, SGNN_ERR_ARG, "tensor_item: NULL argument");
  SGNN_CHECK(t->numel == 1, SGNN_ERR_SHAPE, "tensor_item: tensor %s has %ld elements, not 1", SHP(t), t->numel);
  return sgnn_tensor_to_f64(t, v);
}

int sgnn_tensor_fill(SgnnTensor t, double v)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "tensor_fill: NULL tensor");
  SGNN_CHECK_ST("tensor_fill", t);
  return sgnn_be(t)->fill(t->dtype, t->numel, sgnn_ptr(t), v);
}

int sgnn_tensor_scale(SgnnTensor t, double a)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "tensor_scale: NULL tensor");
  SGNN_CHECK_ST("tensor_scale", t);
  return sgnn_be(t)->unary(SGNN_U_AFFINE, t->dtype, t->numel, sgnn_ptr(t), sgnn_ptr(t), a, 0.0);
}

void *sgnn_tensor_data(SgnnTensor t) { return t && t->st ? sgnn_ptr(t) : NULL; }

int sgnn_tensor_ndim(SgnnTensor t) { return t ? t->ndim : -1; }
const int *sgnn_tensor_shape(SgnnTensor t) { return t ? t->shape : NULL; }
long sgnn_tensor_numel(SgnnTensor t) { return t ? t->numel : -1; }
SgnnDType sgnn_tensor_dtype(SgnnTensor t) { return t->dtype; }
SgnnBackend *sgnn_tensor_backend(SgnnTensor t) { return t ? sgnn_be(t) : NULL; }
SgnnTensor sgnn_tensor_grad(SgnnTensor t) { return t ? t->grad : NULL; }
int sgnn_tensor_requires_grad(SgnnTensor t) { return t ? t->requires_grad : 0; }

int sgnn_tensor_set_requires_grad(SgnnTensor t, int on)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "tensor_set_requires_grad: NULL tensor");
  SGNN_CHECK(!t->node, SGNN_ERR_STATE,
             "tensor_set_requires_grad: tensor %s is the result of op '%s'; only leaves can be marked (detach first)",
             SHP(t), t->node->name);
  t->requires_grad = on ? 1 : 0;
  return 0;
}

int sgnn_tensor_detach(SgnnTensor t, SgnnTensor *out)
{
  SGNN_CHECK(t && out, SGNN_ERR_ARG, "tensor_detach: NULL argument");
  return sgnn_tensor_view(t, 0, t->ndim, t->shape, out);
}

int sgnn_tensor_clone(SgnnTensor t, SgnnTensor *out)
{
  SGNN_CHECK(t && out, SGNN_ERR_ARG, "tensor_clone: NULL argument");
  SGNN_TRY(sgnn_tensor_new(sgnn_be(t), t->dtype, t->ndim, t->shape, 0, out));
  int rc = sgnn_be(t)->d2d(sgnn_ptr(*out), sgnn_ptr(t), (size_t)t->numel * sgnn_esize(t->dtype));
  if (rc) sgnn_tensor_free(out);
  return rc;
}

int sgnn_tensor_to_backend(SgnnTensor t, SgnnBackend *be, SgnnTensor *out)
{
  SGNN_CHECK(t && be && out, SGNN_ERR_ARG, "tensor_to_backend: NULL argument");
  size_t bytes = (size_t)t->numel * sgnn_esize(t->dtype);
  void *tmp = malloc(bytes + 8);
  SGNN_CHECK(tmp, SGNN_ERR_MEM, "tensor_to_backend: out of memory");
  int rc = sgnn_tensor_to_host(t, tmp);
  if (!rc) rc = sgnn_tensor_from_host(be, t->dtype, t->ndim, t->shape, tmp, out);
  free(tmp);
  return rc;
}

int sgnn_same_shape(SgnnTensor a, SgnnTensor b)
{
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

int sgnn_check_in(const char *op, SgnnTensor t, const char *what)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "%s: %s is NULL", op, what);
  return 0;
}

int sgnn_check_pair(const char *op, SgnnTensor a, SgnnTensor b)
{
  SGNN_CHECK(a && b, SGNN_ERR_ARG, "%s: NULL input", op);
  SGNN_CHECK_ST(op, a);
  SGNN_CHECK_ST(op, b);
  SGNN_CHECK(a->dtype == b->dtype, SGNN_ERR_DTYPE, "%s: dtypes differ (%s %s vs %s %s)", op, sgnn_dtype_name(a->dtype),
             SHP(a), sgnn_dtype_name(b->dtype), SHP(b));
  SGNN_CHECK(sgnn_be(a) == sgnn_be(b), SGNN_ERR_BACKEND, "%s: inputs on different backends (%s vs %s)", op,
             sgnn_be(a)->name, sgnn_be(b)->name);
  return 0;
}

int sgnn_zeros_like(SgnnTensor t, SgnnTensor *out) { return sgnn_tensor_new(sgnn_be(t), t->dtype, t->ndim, t->shape, 1, out); }

int sgnn_scalar_like(SgnnTensor t, double v, SgnnTensor *out)
{
  return sgnn_tensor_full(sgnn_be(t), t->dtype, 0, NULL, v, out);
}

int sgnn_normalize_axis(const char *op, int axis, int ndim, int *out)
{
  int a = axis < 0 ? axis + ndim : axis;
  SGNN_CHECK(a >= 0 && a < ndim, SGNN_ERR_ARG, "%s: axis %d out of range for %d-d tensor", op, axis, ndim);
  *out = a;
  return 0;
}

int sgnn_index_create(SgnnBackend *be, long n, const long *host, SgnnIndex **out)
{
  SgnnIndex *ix = calloc(1, sizeof *ix);
  SGNN_CHECK(ix, SGNN_ERR_MEM, "index: out of memory");
  ix->refcount = 1;
  ix->be = be;
  ix->n = n;
  ix->dev = sgnn_be_alloc(be, (size_t)n * sizeof(long));
  if (!ix->dev) {
    free(ix);
    return sgnn_seterr(SGNN_ERR_MEM, "index: cannot allocate %ld indices", n);
  }
  if (host && n) {
    int rc = be->h2d(ix->dev, host, (size_t)n * sizeof(long));
    if (rc) {
      sgnn_index_release(&ix);
      return rc;
    }
  }
  *out = ix;
  return 0;
}

void sgnn_index_release(SgnnIndex **ixp)
{
  SgnnIndex *ix = *ixp;
  *ixp = NULL;
  if (!ix || --ix->refcount > 0) return;
  sgnn_be_free(ix->be, ix->dev, (size_t)ix->n * sizeof(long));
  free(ix);
}
