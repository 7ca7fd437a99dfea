/* params.c -- a model's parameters in ONE contiguous slab (and gradients in
 * a second), so a data-parallel gradient sum is a single allreduce and a
 * checkpoint is a single dataset. Each parameter is a view into the slab. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

/* Buckets of one slab: their storages, their first parameter (nb + 1 entries), each view's slab
   offset and bucket, and whether the views are bound to them */
typedef struct {
  int nb, bound;
  SgnnStorage **bst;
  int *bfirst, *vbucket;
  long *voff;
} SgnnBucketSet;

struct SgnnParams_ {
  SgnnBackend *be;
  SgnnDType dtype;
  int n, cap, ready;
  char **names;
  SgnnTensor *views;
  long total;
  SgnnTensor values, grads; /* 1-d slabs */
  /* ZeRO by buckets: bk[0] the parameter values' buckets (stage 3, sgnn_params_bucket_setup), bk[1]
     the gradients' (stages 2 and 3, sgnn_params_grad_bucket_setup) */
  SgnnBucketSet bk[2];
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
  t->param = P->n + 1;
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

/* ---- ZeRO by buckets ------------------------------------------------------------------ */
void sgnn_storage_use(SgnnStorage *st)
{
  int rc = st->fill(st->fill_ctx, st->bucket);
  if (rc || !st->ptr) { /* a use has no way to return an error: the run cannot go on */
    sgnn_logmsg("sgnn: filling bucket %d of a parameter or gradient slab failed (code %d); aborting\n", st->bucket, rc);
    abort();
  }
}

/* The tensor a bucket set re-points: parameter i's value view (which 0) or its gradient view (1). */
static SgnnTensor bucket_view(SgnnParams P, int which, int i) { return which ? P->views[i]->grad : P->views[i]; }
static SgnnTensor bucket_slab(SgnnParams P, int which) { return which ? P->grads : P->values; }

static int bucket_bind(SgnnParams P, int which, int bind);

/* the views back on the slab, the buckets' storages released (views an op made may still hold one:
   its fill is cleared, and its last reference frees it) */
static void buckets_free(SgnnParams P, int which)
{
  SgnnBucketSet *B = &P->bk[which];
  if (B->nb && B->bound) bucket_bind(P, which, 0);
  for (int k = 0; k < B->nb; k++) {
    B->bst[k]->fill = NULL;
    if (--B->bst[k]->refcount == 0) {
      sgnn_be_free(B->bst[k]->be, B->bst[k]->ptr, B->bst[k]->bytes);
      free(B->bst[k]);
    }
  }
  free(B->bst);
  free(B->bfirst);
  free(B->vbucket);
  free(B->voff);
  B->bst = NULL;
  B->bfirst = B->vbucket = NULL;
  B->voff = NULL;
  B->nb = 0;
}

/* A second call (a new trainer on the same model) replaces the buckets; nb 0 removes them. */
static int bucket_setup(SgnnParams P, int which, int nb, const int *first, SgnnBucketFill fill, void *ctx)
{
  SGNN_CHECK(P && P->ready, SGNN_ERR_ARG, "params_bucket_setup: params not set up");
  SgnnBucketSet *B = &P->bk[which];
  buckets_free(P, which);
  if (!nb) return 0;
  SGNN_CHECK(first && fill, SGNN_ERR_ARG, "params_bucket_setup: NULL argument");
  SGNN_CHECK(nb >= 1 && first[0] == 0 && first[nb] == P->n, SGNN_ERR_ARG, "params_bucket_setup: %d buckets must cover parameters 0..%d", nb, P->n - 1);
  for (int k = 0; k < nb; k++) SGNN_CHECK(first[k] < first[k + 1], SGNN_ERR_ARG, "params_bucket_setup: bucket %d is empty", k);
  B->bst = calloc((size_t)nb, sizeof *B->bst);
  B->bfirst = malloc(sizeof(int) * (size_t)(nb + 1));
  B->vbucket = malloc(sizeof(int) * (size_t)P->n);
  B->voff = malloc(sizeof(long) * (size_t)P->n);
  SGNN_CHECK(B->bst && B->bfirst && B->vbucket && B->voff, SGNN_ERR_MEM, "params_bucket_setup: out of memory");
  for (int k = 0; k <= nb; k++) B->bfirst[k] = first[k];
  for (int k = 0; k < nb; k++) {
    long lo = P->views[first[k]]->offset, hi = first[k + 1] < P->n ? P->views[first[k + 1]]->offset : P->total;
    B->bst[k] = calloc(1, sizeof(SgnnStorage));
    SGNN_CHECK(B->bst[k], SGNN_ERR_MEM, "params_bucket_setup: out of memory");
    B->bst[k]->be = P->be;
    B->bst[k]->bytes = (size_t)(hi - lo) * sgnn_esize(P->dtype);
    B->bst[k]->refcount = 1; /* the params' own reference */
    B->bst[k]->fill = fill;
    B->bst[k]->fill_ctx = ctx;
    B->bst[k]->bucket = k;
    for (int i = first[k]; i < first[k + 1]; i++) {
      B->vbucket[i] = k;
      B->voff[i] = bucket_view(P, which, i)->offset;
    }
  }
  B->nb = nb;
  return 0;
}

/* The views to their buckets (bind 1) or back to the slab (0). A view an op made of a parameter
   keeps the storage it was made with, which stays valid: a bucket's storage fills itself. */
static int bucket_bind(SgnnParams P, int which, int bind)
{
  SgnnBucketSet *B = &P->bk[which];
  SGNN_CHECK(P && B->nb, SGNN_ERR_STATE, "params_bucket_bind: no buckets (sgnn_params_%sbucket_setup)", which ? "grad_" : "");
  if (!!bind == B->bound) return 0;
  for (int i = 0; i < P->n; i++) {
    SgnnTensor t = bucket_view(P, which, i);
    SgnnStorage *bs = B->bst[B->vbucket[i]];
    t->st->refcount--; /* never the last: the slab tensor or the params hold each storage */
    t->st = bind ? bs : bucket_slab(P, which)->st;
    t->st->refcount++;
    t->offset = bind ? B->voff[i] - B->voff[B->bfirst[B->vbucket[i]]] : B->voff[i];
  }
  B->bound = !!bind;
  return 0;
}

static int bucket_range(SgnnParams P, int which, int k, long *lo, long *n)
{
  SgnnBucketSet *B = P ? &P->bk[which] : NULL;
  SGNN_CHECK(B && k >= 0 && k < B->nb && lo && n, SGNN_ERR_ARG, "params_bucket_range: no bucket %d", k);
  *lo = B->voff[B->bfirst[k]];
  *n = (long)(B->bst[k]->bytes / sgnn_esize(P->dtype));
  return 0;
}

static int bucket_alloc(SgnnParams P, int which, int k, void **mem)
{
  SgnnBucketSet *B = P ? &P->bk[which] : NULL;
  SGNN_CHECK(B && k >= 0 && k < B->nb && mem, SGNN_ERR_ARG, "params_bucket_alloc: no bucket %d", k);
  SgnnStorage *st = B->bst[k];
  if (!st->ptr) st->ptr = sgnn_be_alloc(st->be, st->bytes);
  SGNN_CHECK(st->ptr, SGNN_ERR_MEM, "params_bucket_alloc: out of memory for a bucket of %zu bytes", st->bytes);
  *mem = st->ptr;
  return 0;
}

static int bucket_free(SgnnParams P, int which, int k)
{
  SgnnBucketSet *B = P ? &P->bk[which] : NULL;
  SGNN_CHECK(B && k >= 0 && k < B->nb, SGNN_ERR_ARG, "params_bucket_free: no bucket %d", k);
  SgnnStorage *st = B->bst[k];
  sgnn_be_free(st->be, st->ptr, st->bytes);
  st->ptr = NULL;
  return 0;
}

static void *bucket_mem(SgnnParams P, int which, int k) { return P && k >= 0 && k < P->bk[which].nb ? P->bk[which].bst[k]->ptr : NULL; }

/* the parameter values' buckets (ZeRO stage 3) */
int sgnn_params_bucket_setup(SgnnParams P, int nb, const int *first, SgnnBucketFill fill, void *ctx) { return bucket_setup(P, 0, nb, first, fill, ctx); }
int sgnn_params_bucket_bind(SgnnParams P, int bind) { return P ? bucket_bind(P, 0, bind) : SGNN_ERR_ARG; }
int sgnn_params_bucket_range(SgnnParams P, int k, long *lo, long *n) { return bucket_range(P, 0, k, lo, n); }
void *sgnn_params_bucket_mem(SgnnParams P, int k) { return bucket_mem(P, 0, k); }
int sgnn_params_bucket_alloc(SgnnParams P, int k, void **mem) { return bucket_alloc(P, 0, k, mem); }
int sgnn_params_bucket_free(SgnnParams P, int k) { return bucket_free(P, 0, k); }

/* the gradients' buckets (ZeRO stages 2 and 3 by buckets) */
int sgnn_params_grad_bucket_setup(SgnnParams P, int nb, const int *first, SgnnBucketFill fill, void *ctx) { return bucket_setup(P, 1, nb, first, fill, ctx); }
int sgnn_params_grad_bucket_bind(SgnnParams P, int bind) { return P ? bucket_bind(P, 1, bind) : SGNN_ERR_ARG; }
void *sgnn_params_grad_bucket_mem(SgnnParams P, int k) { return bucket_mem(P, 1, k); }
int sgnn_params_grad_bucket_alloc(SgnnParams P, int k, void **mem) { return bucket_alloc(P, 1, k, mem); }
int sgnn_params_grad_bucket_free(SgnnParams P, int k) { return bucket_free(P, 1, k); }

/* Called for every leaf in every backward (the gradient buckets' hook): the view knows its index, so
   no search (offsets do not order the views: binding buckets makes them bucket-relative). */
int sgnn_params_index(SgnnParams P, SgnnTensor view)
{
  int i = view ? view->param - 1 : -1;

  return P && i >= 0 && i < P->n && P->views[i] == view ? i : -1;
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
  if (P->ready) { /* the views back on their slabs while they exist */
    buckets_free(P, 0);
    buckets_free(P, 1);
  }
  for (int i = 0; i < P->n; i++) {
    free(P->names[i]);
    if (!P->views[i]->st) { /* never set up: only the header exists */
      free(P->views[i]);
      continue;
    }
    sgnn_tensor_free(&P->views[i]);
  }
  free(P->names);
  free(P->views);
  sgnn_tensor_free(&P->values);
  sgnn_tensor_free(&P->grads);
  free(P);
  *Pp = NULL;
}
