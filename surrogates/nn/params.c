/* params.c -- a model's parameters in ONE contiguous slab (and gradients in
 * a second), so a data-parallel gradient sum is a single allreduce and a
 * checkpoint is a single dataset. Each parameter is a view into the slab. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

struct SgnnParams_ {
  SgnnBackend *be;
  SgnnDType dtype;
  int n, cap, ready;
  char **names;
  SgnnTensor *views;
  long total;
  SgnnTensor values, grads; /* 1-d slabs */
  /* ZeRO stage 3 by buckets (sgnn_params_bucket_setup): the buckets' storages, their first
     parameter (nb + 1 entries), each view's slab offset and bucket, and whether the views are bound */
  int nb, bound;
  SgnnStorage **bst;
  int *bfirst, *vbucket;
  long *voff;
};

int sgnn_params_create(SgnnBackend *be, SgnnDType dt, SgnnParams *Pp)
{
  SGNN_CHECK(be && Pp, SGNN_ERR_ARG, "params_create: NULL argument");
  SgnnParams P = calloc(1, sizeof *P);
  SGNN_CHECK(P, SGNN_ERR_MEM, "params_create: out of memory");
  P->be = be;
  P->dtype = dt;
  *Pp = P;
  return 0;
}

int sgnn_params_add(SgnnParams P, const char *name, int ndim, const int *shape, SgnnTensor *view)
{
  SGNN_CHECK(P && name && view && (shape || !ndim), SGNN_ERR_ARG, "params_add: NULL argument");
  SGNN_CHECK(!P->ready, SGNN_ERR_STATE, "params_add: '%s' added after params_setup", name);
  SGNN_CHECK(ndim >= 0 && ndim <= SGNN_MAX_DIMS, SGNN_ERR_SHAPE, "params_add: '%s' has %d dims", name, ndim);
  for (int i = 0; i < ndim; i++)
    SGNN_CHECK(shape[i] > 0, SGNN_ERR_SHAPE, "params_add: '%s' has shape %s", name, sgnn_shape_str(ndim, shape));
  for (int i = 0; i < P->n; i++) SGNN_CHECK(strcmp(P->names[i], name), SGNN_ERR_ARG, "params_add: duplicate name '%s'", name);
  if (P->n == P->cap) {
    P->cap = P->cap ? 2 * P->cap : 16;
    P->names = realloc(P->names, sizeof(char *) * P->cap);
    P->views = realloc(P->views, sizeof(SgnnTensor) * P->cap);
    SGNN_CHECK(P->names && P->views, SGNN_ERR_MEM, "params_add: out of memory");
  }
  SgnnTensor t = calloc(1, sizeof *t); /* storage attached in setup */
  SGNN_CHECK(t, SGNN_ERR_MEM, "params_add: out of memory");
  t->refcount = 1;
  t->dtype = P->dtype;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  t->numel = sgnn_numel_of(ndim, shape);
  t->offset = P->total;
  t->requires_grad = 1;
  P->total += t->numel;
  P->names[P->n] = strdup(name);
  P->views[P->n++] = t;
  *view = t;
  return 0;
}

int sgnn_params_setup(SgnnParams P)
{
  SGNN_CHECK(P, SGNN_ERR_ARG, "params_setup: NULL params");
  SGNN_CHECK(!P->ready, SGNN_ERR_STATE, "params_setup: called twice");
  SGNN_CHECK(P->total > 0 && P->total <= 0x7fffffff, SGNN_ERR_SHAPE, "params_setup: %ld scalars", P->total);
  int n = (int)P->total;
  SGNN_TRY(sgnn_tensor_new(P->be, P->dtype, 1, &n, 1, &P->values));
  SGNN_TRY(sgnn_tensor_new(P->be, P->dtype, 1, &n, 1, &P->grads));
  for (int i = 0; i < P->n; i++) {
    SgnnTensor t = P->views[i];
    t->st = P->values->st;
    t->st->refcount++;
    SGNN_TRY(sgnn_tensor_view(P->grads, t->offset, t->ndim, t->shape, &t->grad));
  }
  P->ready = 1;
  return 0;
}

int sgnn_params_count(SgnnParams P, long *n)
{
  SGNN_CHECK(P && n, SGNN_ERR_ARG, "params_count: NULL argument");
  *n = P->total;
  return 0;
}
SgnnTensor sgnn_params_values(SgnnParams P) { return P ? P->values : NULL; }
SgnnTensor sgnn_params_grads(SgnnParams P) { return P ? P->grads : NULL; }
int sgnn_params_num(SgnnParams P) { return P ? P->n : 0; }
long sgnn_params_offset(SgnnParams P, int i) { return P && i >= 0 && i < P->n ? P->views[i]->offset : -1; }
const char *sgnn_params_name(SgnnParams P, int i) { return P && i >= 0 && i < P->n ? P->names[i] : NULL; }
SgnnTensor sgnn_params_get(SgnnParams P, int i) { return P && i >= 0 && i < P->n ? P->views[i] : NULL; }

/* ZeRO stage 3 (surrogates/train/zero3.c) frees a slab's memory between uses. Every view (each
 * parameter, its gradient, any view of those an op made) holds the slab's one storage and computes its
 * address from storage->ptr at each use, so swapping the pointer keeps them all valid; released, the
 * storage has no memory and any use of a parameter is the caller's error. Acquired again, the memory
 * is uninitialised (the caller fills it). */
static SgnnStorage *slab_storage(SgnnParams P, int which) { return which ? P->grads->st : P->values->st; }

int sgnn_params_release(SgnnParams P, int which)
{
  SGNN_CHECK(P && P->ready && (which == 0 || which == 1), SGNN_ERR_STATE, "params_release: params not set up or slab %d", which);
  SgnnStorage *st = slab_storage(P, which);
  sgnn_be_free(st->be, st->ptr, st->bytes);
  st->ptr = NULL;
  return 0;
}

int sgnn_params_acquire(SgnnParams P, int which)
{
  SGNN_CHECK(P && P->ready && (which == 0 || which == 1), SGNN_ERR_STATE, "params_acquire: params not set up or slab %d", which);
  SgnnStorage *st = slab_storage(P, which);
  if (st->ptr) return 0;
  st->ptr = sgnn_be_alloc(st->be, st->bytes);
  SGNN_CHECK(st->ptr, SGNN_ERR_MEM, "params_acquire: out of memory for a slab of %zu bytes", st->bytes);
  return 0;
}

int sgnn_params_resident(SgnnParams P, int which) { return P && P->ready && (which == 0 || which == 1) && slab_storage(P, which)->ptr; }

/* ---- ZeRO stage 3 by buckets ------------------------------------------------------------------ */
void sgnn_storage_use(SgnnStorage *st)
{
  int rc = st->fill(st->fill_ctx, st->bucket);
  if (rc || !st->ptr) { /* a use has no way to return an error: the run cannot go on */
    sgnn_logmsg("sgnn: filling parameter bucket %d failed (code %d); aborting\n", st->bucket, rc);
    abort();
  }
}

/* the views back on the slab, the buckets' storages released (views an op made may still hold one:
   its fill is cleared, and its last reference frees it) */
static void buckets_free(SgnnParams P)
{
  if (P->nb && P->bound) sgnn_params_bucket_bind(P, 0);
  for (int k = 0; k < P->nb; k++) {
    P->bst[k]->fill = NULL;
    if (--P->bst[k]->refcount == 0) {
      sgnn_be_free(P->bst[k]->be, P->bst[k]->ptr, P->bst[k]->bytes);
      free(P->bst[k]);
    }
  }
  free(P->bst);
  free(P->bfirst);
  free(P->vbucket);
  free(P->voff);
  P->bst = NULL;
  P->bfirst = P->vbucket = NULL;
  P->voff = NULL;
  P->nb = 0;
}

/* A second call (a new trainer on the same model) replaces the buckets; nb 0 removes them. */
int sgnn_params_bucket_setup(SgnnParams P, int nb, const int *first, SgnnBucketFill fill, void *ctx)
{
  SGNN_CHECK(P && P->ready, SGNN_ERR_ARG, "params_bucket_setup: params not set up");
  buckets_free(P);
  if (!nb) return 0;
  SGNN_CHECK(first && fill, SGNN_ERR_ARG, "params_bucket_setup: NULL argument");
  SGNN_CHECK(nb >= 1 && first[0] == 0 && first[nb] == P->n, SGNN_ERR_ARG, "params_bucket_setup: %d buckets must cover parameters 0..%d", nb, P->n - 1);
  for (int k = 0; k < nb; k++) SGNN_CHECK(first[k] < first[k + 1], SGNN_ERR_ARG, "params_bucket_setup: bucket %d is empty", k);
  P->bst = calloc((size_t)nb, sizeof *P->bst);
  P->bfirst = malloc(sizeof(int) * (size_t)(nb + 1));
  P->vbucket = malloc(sizeof(int) * (size_t)P->n);
  P->voff = malloc(sizeof(long) * (size_t)P->n);
  SGNN_CHECK(P->bst && P->bfirst && P->vbucket && P->voff, SGNN_ERR_MEM, "params_bucket_setup: out of memory");
  for (int k = 0; k <= nb; k++) P->bfirst[k] = first[k];
  for (int k = 0; k < nb; k++) {
    long lo = P->views[first[k]]->offset, hi = first[k + 1] < P->n ? P->views[first[k + 1]]->offset : P->total;
    P->bst[k] = calloc(1, sizeof(SgnnStorage));
    SGNN_CHECK(P->bst[k], SGNN_ERR_MEM, "params_bucket_setup: out of memory");
    P->bst[k]->be = P->be;
    P->bst[k]->bytes = (size_t)(hi - lo) * sgnn_esize(P->dtype);
    P->bst[k]->refcount = 1; /* the params' own reference */
    P->bst[k]->fill = fill;
    P->bst[k]->fill_ctx = ctx;
    P->bst[k]->bucket = k;
    for (int i = first[k]; i < first[k + 1]; i++) {
      P->vbucket[i] = k;
      P->voff[i] = P->views[i]->offset;
    }
  }
  P->nb = nb;
  return 0;
}

/* The views to their buckets (bind 1) or back to the value slab (0). A view an op made of a
   parameter keeps the storage it was made with, which stays valid: a bucket's storage fills itself. */
int sgnn_params_bucket_bind(SgnnParams P, int bind)
{
  SGNN_CHECK(P && P->nb, SGNN_ERR_STATE, "params_bucket_bind: no buckets (sgnn_params_bucket_setup)");
  if (!!bind == P->bound) return 0;
  for (int i = 0; i < P->n; i++) {
    SgnnTensor t = P->views[i];
    SgnnStorage *bs = P->bst[P->vbucket[i]];
    t->st->refcount--; /* never the last: the slab tensor or the params hold each storage */
    t->st = bind ? bs : P->values->st;
    t->st->refcount++;
    t->offset = bind ? P->voff[i] - P->voff[P->bfirst[P->vbucket[i]]] : P->voff[i];
  }
  P->bound = !!bind;
  return 0;
}

int sgnn_params_bucket_range(SgnnParams P, int k, long *lo, long *n)
{
  SGNN_CHECK(P && k >= 0 && k < P->nb && lo && n, SGNN_ERR_ARG, "params_bucket_range: no bucket %d", k);
  *lo = P->voff[P->bfirst[k]];
  *n = (long)(P->bst[k]->bytes / sgnn_esize(P->dtype));
  return 0;
}

void *sgnn_params_bucket_mem(SgnnParams P, int k) { return P && k >= 0 && k < P->nb ? P->bst[k]->ptr : NULL; }

int sgnn_params_bucket_alloc(SgnnParams P, int k, void **mem)
{
  SGNN_CHECK(P && k >= 0 && k < P->nb && mem, SGNN_ERR_ARG, "params_bucket_alloc: no bucket %d", k);
  SgnnStorage *st = P->bst[k];
  if (!st->ptr) st->ptr = sgnn_be_alloc(st->be, st->bytes);
  SGNN_CHECK(st->ptr, SGNN_ERR_MEM, "params_bucket_alloc: out of memory for a bucket of %zu bytes", st->bytes);
  *mem = st->ptr;
  return 0;
}

int sgnn_params_bucket_free(SgnnParams P, int k)
{
  SGNN_CHECK(P && k >= 0 && k < P->nb, SGNN_ERR_ARG, "params_bucket_free: no bucket %d", k);
  SgnnStorage *st = P->bst[k];
  sgnn_be_free(st->be, st->ptr, st->bytes);
  st->ptr = NULL;
  return 0;
}

int sgnn_params_zero_grad(SgnnParams P)
{
  SGNN_CHECK(P && P->ready, SGNN_ERR_STATE, "params_zero_grad: params not set up");
  return sgnn_tensor_fill(P->grads, 0.0);
}

void sgnn_params_destroy(SgnnParams *Pp)
{
  SgnnParams P = Pp ? *Pp : NULL;
  if (!P) return;
  for (int i = 0; i < P->n; i++) {
    free(P->names[i]);
    if (!P->views[i]->st) { /* never set up: only the header exists */
      free(P->views[i]);
      continue;
    }
    sgnn_tensor_free(&P->views[i]);
  }
  buckets_free(P);
  free(P->names);
  free(P->views);
  sgnn_tensor_free(&P->values);
  sgnn_tensor_free(&P->grads);
  free(P);
  *Pp = NULL;
}
