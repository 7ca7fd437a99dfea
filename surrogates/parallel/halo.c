/* halo.c -- the two communicating ops of spatial parallelism, recorded on
 * the engine's tape: the halo exchange (forward: neighbours' edge planes;
 * backward: the halo's gradient goes back to the rank that owns those planes)
 * and the allreduce sum (backward: allreduce of the output gradients).
 *
 * Both need the engine's interface for ops of their own (sgnn_op.h): a backward that talks
 * to other ranks cannot be composed from public ops. What a backward needs
 * (communicator, buffers, requests) lives in the data of a small tensor the
 * node saves, so the engine frees it with the node.
 *
 * A halo records three kinds of node: an anchor (an alias of the input, read
 * by everything the layer computes), progress nodes (aliases of intermediate
 * results: MPI_Testall in forward and backward, so rendezvous messages move
 * while the interior computes) and the halo node itself. In backward the halo
 * node runs first (it only posts the exchange of the halo's gradient), the
 * layer's interior backward next (with the progress nodes between its
 * pieces), the anchor last (it waits and adds the neighbours' contributions):
 * the backward exchange overlaps the interior, as the forward one does.
 * Blocking calls inside backward are matched because every rank of the group
 * reaches the same nodes in the same tape order. */
#include "sgpar_impl.h"
#include "sgnn_op.h"
#include <stdlib.h>
#include <string.h>

static int fault_mask;
void sgpar_test_set_fault(int mask) { fault_mask = mask; }
int sgpar_test_fault(void) { return fault_mask; }

enum { TAG_FWD = 7101, TAG_BWD = 7102 };

static MPI_Datatype mpi_type(SgnnDType dt) { return dt == SGNN_F64 ? MPI_DOUBLE : MPI_FLOAT; }

/* extents before and after axis a of a contiguous tensor shape */
static void outer_inner(int ndim, const int *shape, int a, long *outer, long *inner)
{
  *outer = *inner = 1;
  for (int i = 0; i < a; i++) *outer *= shape[i];
  for (int i = a + 1; i < ndim; i++) *inner *= shape[i];
}

/* copy planes [p0, p0+h) of src (extent n along the axis) to/from a packed buffer [outer][h][inner] */
static void pack(const char *src, long outer, int n, long inner, size_t es, int p0, int h, char *buf)
{
  size_t blk = (size_t)h * inner * es;
  for (long o = 0; o < outer; o++) memcpy(buf + o * blk, src + ((size_t)o * n + p0) * inner * es, blk);
}
static void unpack_add(const char *buf, long outer, int n, long inner, SgnnDType dt, int p0, int h, char *dst)
{
  long m = (long)h * inner;
  for (long o = 0; o < outer; o++) {
    long d0 = ((long)o * n + p0) * inner, b0 = o * m;
    if (dt == SGNN_F64)
      for (long i = 0; i < m; i++) ((double *)dst)[d0 + i] += ((const double *)buf)[b0 + i];
    else
      for (long i = 0; i < m; i++) ((float *)dst)[d0 + i] += ((const float *)buf)[b0 + i];
  }
}

static int check_cpu(const char *op, SgnnTensor x)
{
  if (strcmp(sgnn_backend_name(sgnn_tensor_backend(x)), "cpu"))
    return sgpar_fail(SGNN_ERR_UNSUPPORTED, "%s: tensors on backend '%s'; spatial parallelism exchanges host memory (cpu only)",
                      op, sgnn_backend_name(sgnn_tensor_backend(x)));
  return 0;
}

static int check_axis(const char *op, const SgparAxisSplit *s, SgnnTensor x)
{
  if (sgnn_tensor_ndim(x) != 5 || sgnn_tensor_shape(x)[s->axis] != s->n)
    return sgpar_fail(SGNN_ERR_SHAPE, "%s: input %s is not a [N,C,D,H,W] slab of %d planes on axis %d", op, sgnn_shape_str(sgnn_tensor_ndim(x), sgnn_tensor_shape(x)), s->n,
                      s->axis);
  return 0;
}

int sgpar_check_slab(const char *op, const SgparSplit *s, SgnnTensor x)
{
  if (!s || !x) return sgpar_fail(SGNN_ERR_ARG, "%s: NULL argument", op);
  if (s->naxes < 1 || s->naxes > 2) return sgpar_fail(SGNN_ERR_ARG, "%s: split over %d axes (1 or 2)", op, s->naxes);
  for (int k = 0; k < s->naxes; k++) {
    int rc = check_axis(op, &s->ax[k], x);
    if (rc) return rc;
  }
  return 0;
}

/* The backward exchange's state, shared by the three nodes one halo records (below): it lives in the
 * data of a small tensor the nodes save, so the engine frees it with the last of them. */
typedef struct {
  MPI_Comm comm;
  int axis, h, n, lo, hi, posted, layer;
  long outer, inner;
  size_t es, blk;
  MPI_Request req[4];
  SgparTrace *trace;
  double t_post;
} BwdState;

static size_t state_header(void) { return (sizeof(BwdState) + 63) / 64 * 64; }
static BwdState *state_of(SgnnTensor st) { return (BwdState *)sgnn_tensor_data(st); }
static char *state_buf(SgnnTensor st) { return (char *)sgnn_tensor_data(st) + state_header(); }

struct SgparHalo_ {
  MPI_Comm comm;
  SgnnTensor x, xa, st; /* input, its anchored alias (compute reads it), the backward state (or NULL) */
  int axis, h, n, lo, hi, layer; /* neighbours' ranks (MPI_PROC_NULL at the sample's edges) */
  long outer, inner;
  size_t es, blk;
  char *buf; /* send lower, send upper, receive lower, receive upper */
  MPI_Request req[4];
  SgparTrace *trace;
};

static void halo_free(SgparHalo *ph)
{
  SgparHalo H = *ph;
  if (!H) return;
  sgnn_tensor_free(&H->x);
  sgnn_tensor_free(&H->xa);
  sgnn_tensor_free(&H->st);
  free(H->buf);
  free(H);
  *ph = NULL;
}

/* The anchor: an alias of x whose backward completes the backward exchange (waits for the
 * neighbours' halo gradients and adds them to the edge planes of the gradient). Everything the layer
 * computes from x reads the alias, so this node runs after all of it in backward: the exchange posted
 * by the halo node (which runs first) travels while the layer's interior backward computes. */
static int anchor_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg) return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_halo: second derivatives through a halo exchange are not implemented");
  BwdState *S = state_of(sgnn_node_saved(nd, 0));
  if (!S->posted) { /* nothing sent (no neighbours, or the test-only fault) */
    gin[0] = sgnn_tensor_ref(g);
    return 0;
  }
  double t0 = MPI_Wtime();
  int e = MPI_Waitall(4, S->req, MPI_STATUSES_IGNORE);
  double t1 = MPI_Wtime();
  S->posted = 0;
  SGNN_CHECK(!e, SGNN_ERR_BACKEND, "sgpar_halo backward: MPI error %d", e);
  sgpar_trace_add(S->trace, S->layer, SGPAR_EV_HALO_WAIT_BWD, t0, t1);
  sgpar_trace_add(S->trace, S->layer, SGPAR_EV_CONV_BWD, S->t_post, t1);
  SGNN_TRY(sgnn_tensor_new(sgnn_tensor_backend(g), sgnn_tensor_dtype(g), 5, sgnn_node_in_shape(nd, 0), 0, &gin[0]));
  memcpy(sgnn_tensor_data(gin[0]), sgnn_tensor_data(g), (size_t)sgnn_tensor_numel(g) * S->es);
  char *rl = state_buf(sgnn_node_saved(nd, 0)) + 2 * S->blk * S->es, *rh = rl + S->blk * S->es, *d = sgnn_tensor_data(gin[0]);
  if (S->lo != MPI_PROC_NULL) unpack_add(rl, S->outer, S->n, S->inner, sgnn_tensor_dtype(g), 0, S->h, d);
  if (S->hi != MPI_PROC_NULL) unpack_add(rh, S->outer, S->n, S->inner, sgnn_tensor_dtype(g), S->n - S->h, S->h, d);
  return 0;
}

int sgpar_halo_begin(SgparGrid g, const SgparAxisSplit *s, SgnnTensor x, int h, SgparHalo *out)
{
  if (!g || !s || !x || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_halo_begin: NULL argument");
  *out = NULL;
  int rc = check_cpu("sgpar_halo", x);
  if (rc) return rc;
  rc = check_axis("sgpar_halo", s, x);
  if (rc) return rc;
  const int *shape = sgnn_tensor_shape(x);
  int ndim = 5, a = s->axis;
  if (h < 0 || h > s->min_n)
    return sgpar_fail(SGNN_ERR_ARG,
                      "sgpar_halo: halo of %d planes on axis %d, but the thinnest slab has %d planes (use fewer "
                      "spatial ranks or a more even split)",
                      h, a, s->min_n);
  SgparHalo H = calloc(1, sizeof *H);
  if (!H) return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo: out of memory");
  H->comm = sgpar_grid_spatial_comm(g);
  H->x = sgnn_tensor_ref(x);
  H->axis = a;
  H->h = h;
  H->n = s->n;
  H->lo = s->lo;
  H->hi = s->hi;
  H->trace = sgpar_grid_trace_ptr(g);
  H->layer = sgpar_trace_layer(H->trace);
  H->es = (sgnn_tensor_dtype(x) == SGNN_F64 ? 8 : 4);
  outer_inner(ndim, shape, a, &H->outer, &H->inner);
  H->blk = (size_t)H->outer * h * H->inner;
  H->buf = calloc(4 * H->blk + 1, H->es); /* zeros: the halo beyond the sample's edge */
  for (int i = 0; i < 4; i++) H->req[i] = MPI_REQUEST_NULL;
  if (!H->buf) {
    halo_free(&H);
    return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo: out of memory");
  }
  /* the anchored alias and, when x is differentiated, the backward state with its buffers */
  if (sgnn_tensor_view(x, 0, 5, shape, &H->xa)) {
    halo_free(&H);
    return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo: %s", sgnn_last_error());
  }
  SgnnNode *nd = sgnn_record(H->xa, "sgpar_halo_anchor", 1, &H->x, anchor_bw);
  if (nd) {
    long nb = (long)((state_header() + 4 * H->blk * H->es + 7) / 8);
    if (sgnn_tensor_new(sgnn_tensor_backend(x), SGNN_F64, 1, (int[1]){(int)nb}, 1, &H->st)) {
      halo_free(&H);
      return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo: %s", sgnn_last_error());
    }
    BwdState *S = state_of(H->st);
    *S = (BwdState){H->comm, a, h, H->n, H->lo, H->hi, 0, H->layer, H->outer, H->inner, H->es, H->blk,
                    {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL}, H->trace, 0};
    sgnn_node_save(nd, 0, H->st);
  }
  if (h > 0) {
    char *sl = H->buf, *sh = sl + H->blk * H->es, *rl = sh + H->blk * H->es, *rh = rl + H->blk * H->es;
    MPI_Datatype T = mpi_type(sgnn_tensor_dtype(x));
    const char *src = sgnn_tensor_data(x);
    pack(src, H->outer, H->n, H->inner, H->es, 0, h, sl);
    pack(src, H->outer, H->n, H->inner, H->es, H->n - h, h, sh);
    MPICHK(MPI_Irecv(rl, (int)H->blk, T, H->lo, TAG_FWD, H->comm, &H->req[0]));
    MPICHK(MPI_Irecv(rh, (int)H->blk, T, H->hi, TAG_FWD, H->comm, &H->req[1]));
    MPICHK(MPI_Isend(sl, (int)H->blk, T, H->lo, TAG_FWD, H->comm, &H->req[2]));
    MPICHK(MPI_Isend(sh, (int)H->blk, T, H->hi, TAG_FWD, H->comm, &H->req[3]));
  }
  *out = H;
  return 0;
}

SgnnTensor sgpar_halo_source(SgparHalo H) { return H ? H->xa : NULL; }

/* backward of the halo node: g [..2h..] is the gradient of (lower halo, upper halo); each part goes
 * back to the neighbour that sent those planes. Only posted here: the anchor completes it. */
static int halo_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg)
    return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_halo: second derivatives through a halo exchange are not implemented");
  (void)gin; /* the halo's contribution to x's gradient arrives through the anchor */
  if (fault_mask & SGPAR_FAULT_BWD_HALO) return 0; /* test-only: the halo's gradient is lost */
  BwdState *S = state_of(sgnn_node_saved(nd, 0));
  char *sl = state_buf(sgnn_node_saved(nd, 0)), *sh = sl + S->blk * S->es, *rl = sh + S->blk * S->es, *rh = rl + S->blk * S->es;
  pack(sgnn_tensor_data(g), S->outer, 2 * S->h, S->inner, S->es, 0, S->h, sl);
  pack(sgnn_tensor_data(g), S->outer, 2 * S->h, S->inner, S->es, S->h, S->h, sh);
  MPI_Datatype T = mpi_type(sgnn_tensor_dtype(g));
  int e = MPI_Irecv(rl, (int)S->blk, T, S->lo, TAG_BWD, S->comm, &S->req[0]);
  if (!e) e = MPI_Irecv(rh, (int)S->blk, T, S->hi, TAG_BWD, S->comm, &S->req[1]);
  if (!e) e = MPI_Isend(sl, (int)S->blk, T, S->lo, TAG_BWD, S->comm, &S->req[2]);
  if (!e) e = MPI_Isend(sh, (int)S->blk, T, S->hi, TAG_BWD, S->comm, &S->req[3]);
  SGNN_CHECK(!e, SGNN_ERR_BACKEND, "sgpar_halo backward: MPI error %d", e);
  S->posted = 1;
  S->t_post = MPI_Wtime();
  return 0;
}

/* progress node: an alias whose forward and backward give MPI a chance to move the exchange in flight
 * (Open MPI moves rendezvous messages only inside MPI calls) */
static int progress_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg) return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_halo: second derivatives through a halo exchange are not implemented");
  BwdState *S = state_of(sgnn_node_saved(nd, 0));
  int flag;
  if (S->posted) MPI_Testall(4, S->req, &flag, MPI_STATUSES_IGNORE);
  gin[0] = sgnn_tensor_ref(g);
  return 0;
}

int sgpar_halo_progress(SgparHalo H, SgnnTensor y, SgnnTensor *out)
{
  int flag;
  if (!H || !y || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_halo_progress: NULL argument");
  MPICHK(MPI_Testall(4, H->req, &flag, MPI_STATUSES_IGNORE));
  if (!H->st) {
    *out = sgnn_tensor_ref(y);
    return 0;
  }
  NNCHK("sgpar_halo_progress", sgnn_tensor_view(y, 0, sgnn_tensor_ndim(y), sgnn_tensor_shape(y), out));
  SgnnNode *nd = sgnn_record(*out, "sgpar_halo_progress", 1, &y, progress_bw);
  sgnn_node_save(nd, 0, H->st);
  return 0;
}

int sgpar_halo_end(SgparHalo *ph, SgnnTensor *halos)
{
  SgparHalo H = ph ? *ph : NULL;
  if (!H || !halos) return sgpar_fail(SGNN_ERR_ARG, "sgpar_halo_end: NULL argument");
  *halos = NULL;
  double t0 = MPI_Wtime();
  int e = MPI_Waitall(4, H->req, MPI_STATUSES_IGNORE);
  sgpar_trace_add(H->trace, H->layer, SGPAR_EV_HALO_WAIT_FWD, t0, MPI_Wtime());
  if (e) {
    halo_free(ph);
    return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_halo_end: MPI error %d", e);
  }
  int shape[5];
  memcpy(shape, sgnn_tensor_shape(H->x), sizeof shape);
  shape[H->axis] = 2 * H->h;
  SgnnTensor o;
  if (sgnn_tensor_new(sgnn_tensor_backend(H->x), sgnn_tensor_dtype(H->x), 5, shape, 0, &o)) {
    halo_free(ph);
    return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo_end: %s", sgnn_last_error());
  }
  /* [outer][lower h | upper h][inner] from the two receive buffers */
  char *d = sgnn_tensor_data(o), *rl = H->buf + 2 * H->blk * H->es, *rh = rl + H->blk * H->es;
  size_t b = (size_t)H->h * H->inner * H->es;
  for (long i = 0; i < H->outer; i++) {
    memcpy(d + 2 * i * b, rl + i * b, b);
    memcpy(d + (2 * i + 1) * b, rh + i * b, b);
  }
  if (H->st) sgnn_node_save(sgnn_record(o, "sgpar_halo", 1, &H->xa, halo_bw), 0, H->st);
  halo_free(ph);
  *halos = o;
  return 0;
}

int sgpar_halo(SgparGrid g, const SgparAxisSplit *s, SgnnTensor x, int h, SgnnTensor *out)
{
  SgparHalo H;
  SgnnTensor hl = NULL, parts[3] = {NULL, NULL, NULL};
  int rc = sgpar_halo_begin(g, s, x, h, &H);
  if (rc) return rc;
  parts[1] = sgnn_tensor_ref(sgpar_halo_source(H));
  rc = sgpar_halo_end(&H, &hl);
  if (rc) {
    sgnn_tensor_free(&parts[1]);
    return rc;
  }
  NNTRYG("sgpar_halo", sgnn_slice(hl, s->axis, 0, h, &parts[0]));
  NNTRYG("sgpar_halo", sgnn_slice(hl, s->axis, h, 2 * h, &parts[2]));
  NNTRYG("sgpar_halo", sgnn_concat(3, parts, s->axis, out));
done:
  sgnn_tensor_free(&hl);
  for (int i = 0; i < 3; i++) sgnn_tensor_free(&parts[i]);
  return rc;
}

/* the allreduce node's backward: the sum of the output gradients (traced when the grid traces) */
typedef struct {
  MPI_Comm comm;
  SgparTrace *trace;
  int layer;
} ArState;

static int allreduce_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg)
    return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_allreduce_sum: second derivatives are not implemented");
  ArState *A = (ArState *)sgnn_tensor_data(sgnn_node_saved(nd, 0));
  SGNN_TRY(sgnn_tensor_new(sgnn_tensor_backend(g), sgnn_tensor_dtype(g), sgnn_tensor_ndim(g), sgnn_tensor_shape(g), 0, &gin[0]));
  double t0 = MPI_Wtime();
  int e = MPI_Allreduce(sgnn_tensor_data(g), sgnn_tensor_data(gin[0]), (int)sgnn_tensor_numel(g), mpi_type(sgnn_tensor_dtype(g)), MPI_SUM, A->comm);
  sgpar_trace_add(A->trace, A->layer, SGPAR_EV_ALLREDUCE_BWD, t0, MPI_Wtime());
  SGNN_CHECK(!e, SGNN_ERR_BACKEND, "sgpar_allreduce_sum backward: MPI error %d", e);
  return 0;
}

int sgpar_allreduce_sum_traced(MPI_Comm comm, SgparTrace *trace, int layer, SgnnTensor x, SgnnTensor *out)
{
  if (!x || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_allreduce_sum: NULL argument");
  int rc = check_cpu("sgpar_allreduce_sum", x);
  if (rc) return rc;
  SgnnTensor o;
  NNCHK("sgpar_allreduce_sum", sgnn_tensor_new(sgnn_tensor_backend(x), sgnn_tensor_dtype(x), sgnn_tensor_ndim(x), sgnn_tensor_shape(x), 0, &o));
  double t0 = MPI_Wtime();
  int e = MPI_Allreduce(sgnn_tensor_data(x), sgnn_tensor_data(o), (int)sgnn_tensor_numel(x), mpi_type(sgnn_tensor_dtype(x)), MPI_SUM, comm);
  sgpar_trace_add(trace, layer, SGPAR_EV_ALLREDUCE_FWD, t0, MPI_Wtime());
  if (e) {
    sgnn_tensor_free(&o);
    return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_allreduce_sum: MPI error %d", e);
  }
  SgnnNode *nd = sgnn_record(o, "sgpar_allreduce_sum", 1, &x, allreduce_bw);
  if (nd) {
    SgnnTensor st;
    if (sgnn_tensor_new(sgnn_tensor_backend(x), SGNN_F64, 1, (int[1]){(int)((sizeof(ArState) + 7) / 8)}, 1, &st)) {
      sgnn_tensor_free(&o);
      return sgpar_fail(SGNN_ERR_MEM, "sgpar_allreduce_sum: %s", sgnn_last_error());
    }
    *(ArState *)sgnn_tensor_data(st) = (ArState){comm, trace, layer};
    sgnn_node_save(nd, 0, st);
    sgnn_tensor_free(&st);
  }
  *out = o;
  return 0;
}

int sgpar_allreduce_sum(MPI_Comm comm, SgnnTensor x, SgnnTensor *out)
{
  return sgpar_allreduce_sum_traced(comm, NULL, -1, x, out);
}
