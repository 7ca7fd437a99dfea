/* dp.c -- bucketed, overlapped data-parallel gradient allreduce (see sgpar.h). */
#include "sgpar_impl.h"
#include <stdlib.h>

typedef struct {
  long lo, hi;     /* slab range [lo, hi) */
  int nparam, nready;
  int started;
  MPI_Request req;
} Bucket;

struct SgparDP_ {
  MPI_Comm comm;
  SgnnParams P;
  MPI_Datatype type;
  size_t esize;
  int nb, next;    /* buckets; next bucket index allowed to start */
  Bucket *b;
  int np;
  SgnnTensor *param; /* parameter views, for the hook's lookup */
  int *bucket_of;
  int *ready, *involved;
  int sweeping;
  long local, global;
  MPI_Request count_req;
  int overlapped, active;
  int divide; /* scale the summed gradient by 1/global count in sgpar_dp_end */
};

/* start every consecutive ready bucket from `next` on: a fixed order, so all
 * ranks issue identical collective sequences */
static int launch(SgparDP dp)
{
  char *g = sgnn_tensor_data(sgnn_params_grads(dp->P));
  while (dp->next < dp->nb && dp->b[dp->next].nready == dp->b[dp->next].nparam) {
    Bucket *B = &dp->b[dp->next++];
    MPICHK(MPI_Iallreduce(MPI_IN_PLACE, g + B->lo * dp->esize, (int)(B->hi - B->lo), dp->type, MPI_SUM, dp->comm, &B->req));
    B->started = 1;
  }
  return 0;
}

static void mark_ready(SgparDP dp, int i)
{
  if (dp->ready[i]) return;
  dp->ready[i] = 1;
  dp->b[dp->bucket_of[i]].nready++;
}

static void on_ready(SgnnTensor leaf, int final, void *ctx)
{
  SgparDP dp = ctx;
  if (!final) { /* announcement: this parameter will get a gradient */
    for (int i = 0; i < dp->np; i++)
      if (dp->param[i] == leaf) dp->involved[i] = 1;
    return;
  }
  if (!dp->sweeping) { /* sweep started: parameters nobody announced stay zero */
    dp->sweeping = 1;
    for (int i = 0; i < dp->np; i++)
      if (!dp->involved[i]) mark_ready(dp, i);
  }
  for (int i = 0; i < dp->np; i++)
    if (dp->param[i] == leaf && !dp->ready[i]) {
      mark_ready(dp, i);
      if (launch(dp) == 0) { /* Open MPI progresses non-blocking collectives inside MPI calls */
        int flag;
        for (int k = 0; k < dp->next; k++)
          if (dp->b[k].req != MPI_REQUEST_NULL) MPI_Test(&dp->b[k].req, &flag, MPI_STATUS_IGNORE);
      }
      return;
    }
}

int sgpar_dp_create(MPI_Comm comm, SgnnParams P, size_t bucket_bytes, SgparDP *out)
{
  if (!P || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_dp_create: NULL argument");
  SgnnTensor vals = sgnn_params_values(P);
  if (!vals) return sgpar_fail(SGNN_ERR_STATE, "sgpar_dp_create: parameters not set up");
  SgparDP dp = calloc(1, sizeof *dp);
  if (!dp) return sgpar_fail(SGNN_ERR_MEM, "sgpar_dp_create: out of memory");
  dp->comm = comm;
  dp->P = P;
  dp->type = sgnn_tensor_dtype(vals) == SGNN_F64 ? MPI_DOUBLE : MPI_FLOAT;
  dp->esize = sgnn_tensor_dtype(vals) == SGNN_F64 ? 8 : 4;
  dp->np = sgnn_params_num(P);
  dp->divide = 1;
  dp->param = calloc(dp->np, sizeof *dp->param);
  dp->bucket_of = calloc(dp->np, sizeof(int));
  dp->ready = calloc(dp->np, sizeof(int));
  dp->involved = calloc(dp->np, sizeof(int));
  dp->b = calloc(dp->np, sizeof *dp->b);
  if (!dp->param || !dp->bucket_of || !dp->ready || !dp->involved || !dp->b) {
    sgpar_dp_destroy(&dp);
    return sgpar_fail(SGNN_ERR_MEM, "sgpar_dp_create: out of memory");
  }
  /* buckets from the LAST parameter backwards: backward finishes those first */
  long cap = (long)(bucket_bytes / dp->esize);
  if (cap < 1) cap = 1;
  Bucket *cur = NULL;
  for (int i = dp->np - 1; i >= 0; i--) {
    SgnnTensor t = sgnn_params_get(P, i);
    long off = sgnn_params_offset(P, i), n = sgnn_tensor_numel(t);
    dp->param[i] = t;
    if (!cur || cur->hi - cur->lo >= cap) {
      cur = &dp->b[dp->nb++];
      cur->hi = off + n;
      cur->req = MPI_REQUEST_NULL;
    }
    cur->lo = off; /* parameters are contiguous in declaration order */
    cur->nparam++;
    dp->bucket_of[i] = (int)(cur - dp->b);
  }
  *out = dp;
  return 0;
}

int sgpar_dp_begin(SgparDP dp, long local_count)
{
  if (!dp || local_count < 0) return sgpar_fail(SGNN_ERR_ARG, "sgpar_dp_begin: bad arguments (count %ld)", local_count);
  if (dp->active) return sgpar_fail(SGNN_ERR_STATE, "sgpar_dp_begin: previous step not ended");
  for (int i = 0; i < dp->np; i++) dp->ready[i] = dp->involved[i] = 0;
  dp->sweeping = 0;
  for (int k = 0; k < dp->nb; k++) {
    dp->b[k].nready = 0;
    dp->b[k].started = 0;
    dp->b[k].req = MPI_REQUEST_NULL;
  }
  dp->next = 0;
  dp->local = local_count;
  dp->overlapped = 0;
  dp->active = 1;
  /* the global count travels while backward runs */
  MPICHK(MPI_Iallreduce(&dp->local, &dp->global, 1, MPI_LONG, MPI_SUM, dp->comm, &dp->count_req));
  sgnn_set_grad_ready_hook(on_ready, dp);
  return 0;
}

int sgpar_dp_end(SgparDP dp, long *global_count)
{
  if (!dp || !dp->active) return sgpar_fail(SGNN_ERR_STATE, "sgpar_dp_end: no step begun");
  sgnn_set_grad_ready_hook(NULL, NULL);
  dp->active = 0;
  dp->overlapped = dp->next;
  /* parameters that received no gradient this step (unused, or a rank with
   * no samples) contribute their zeros: mark them ready and start the rest */
  for (int i = 0; i < dp->np; i++) mark_ready(dp, i);
  int rc = launch(dp);
  if (rc) return rc;
  for (int k = 0; k < dp->nb; k++) MPICHK(MPI_Wait(&dp->b[k].req, MPI_STATUS_IGNORE));
  MPICHK(MPI_Wait(&dp->count_req, MPI_STATUS_IGNORE));
  if (dp->global <= 0) return sgpar_fail(SGNN_ERR_ARG, "sgpar_dp_end: global sample count is %ld", dp->global);
  if (global_count) *global_count = dp->global;
  if (dp->divide && sgnn_tensor_scale(sgnn_params_grads(dp->P), 1.0 / (double)dp->global))
    return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_dp_end: %s", sgnn_last_error());
  return 0;
}

int sgpar_dp_set_divide(SgparDP dp, int divide)
{
  if (!dp) return sgpar_fail(SGNN_ERR_ARG, "sgpar_dp_set_divide: NULL argument");
  if (dp->active) return sgpar_fail(SGNN_ERR_STATE, "sgpar_dp_set_divide: inside a step");
  dp->divide = divide != 0;
  return 0;
}

int sgpar_dp_overlapped(SgparDP dp) { return dp ? dp->overlapped : 0; }
int sgpar_dp_nbuckets(SgparDP dp) { return dp ? dp->nb : 0; }

void sgpar_dp_destroy(SgparDP *pdp)
{
  SgparDP dp = pdp ? *pdp : NULL;
  if (!dp) return;
  if (dp->active) sgnn_set_grad_ready_hook(NULL, NULL);
  free(dp->param);
  free(dp->bucket_of);
  free(dp->ready);
  free(dp->involved);
  free(dp->b);
  free(dp);
  *pdp = NULL;
}
