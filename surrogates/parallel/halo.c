/* halo.c -- the two communicating ops of spatial parallelism, recorded on
 * the engine's tape: the halo exchange (forward: neighbours' edge planes;
 * backward: the halo's gradient goes back to the rank that owns those planes)
 * and the allreduce sum (backward: allreduce of the output gradients).
 *
 * Both need the engine's node interface (sgnn_impl.h): a backward that talks
 * to other ranks cannot be composed from public ops. The communicator travels
 * in the node's integer slots as its Fortran handle (MPI_Comm_c2f), the MPI
 * standard's portable integer form. Backward passes block: every rank of the
 * group reaches the same nodes in the same tape order. */
#include "sgpar_impl.h"
#include "sgnn_impl.h"
#include <stdlib.h>

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
  if (x->ndim != 5 || x->shape[s->axis] != s->n)
    return sgpar_fail(SGNN_ERR_SHAPE, "%s: input %s is not a [N,C,D,H,W] slab of %d planes on axis %d", op, SHP(x), s->n,
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

struct SgparHalo_ {
  MPI_Comm comm;
  SgnnTensor x;
  int axis, h, n, lo, hi; /* neighbours' ranks (MPI_PROC_NULL at the sample's edges) */
  long outer, inner;
  size_t es, blk;
  char *buf; /* send lower, send upper, receive lower, receive upper */
  MPI_Request req[4];
};

static void halo_free(SgparHalo *ph)
{
  SgparHalo H = *ph;
  if (!H) return;
  sgnn_tensor_free(&H->x);
  free(H->buf);
  free(H);
  *ph = NULL;
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
  H->es = sgnn_esize(sgnn_tensor_dtype(x));
  outer_inner(ndim, shape, a, &H->outer, &H->inner);
  H->blk = (size_t)H->outer * h * H->inner;
  H->buf = calloc(4 * H->blk + 1, H->es); /* zeros: the halo beyond the sample's edge */
  for (int i = 0; i < 4; i++) H->req[i] = MPI_REQUEST_NULL;
  if (!H->buf) {
    halo_free(&H);
    return sgpar_fail(SGNN_ERR_MEM, "sgpar_halo: out of memory");
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

/* backward: g [..2h..] is the gradient of (lower halo, upper halo); each part
 * goes back to the neighbour that sent those planes, and the neighbours' parts
 * for my edge planes arrive and are added to the input gradient */
static int halo_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg)
    return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_halo: second derivatives through a halo exchange are not implemented");
  int a = nd->ip[0], h = nd->ip[1], lo = nd->ip[2], hi = nd->ip[3], n = nd->in_shape[0][a];
  MPI_Comm comm = MPI_Comm_f2c(nd->ip[4]);
  SgnnDType dt = g->dtype;
  size_t es = sgnn_esize(dt);
  long outer, inner;
  outer_inner(5, nd->in_shape[0], a, &outer, &inner);
  size_t blk = (size_t)outer * h * inner;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(g), dt, 5, nd->in_shape[0], 1, &gin[0]));
  if (fault_mask & SGPAR_FAULT_BWD_HALO) return 0; /* test-only: the halo's gradient is lost */
  char *buf = malloc(4 * blk * es + 1);
  SGNN_CHECK(buf, SGNN_ERR_MEM, "sgpar_halo backward: out of memory");
  char *sl = buf, *sh = sl + blk * es, *rl = sh + blk * es, *rh = rl + blk * es;
  pack(sgnn_ptr(g), outer, 2 * h, inner, es, 0, h, sl);
  pack(sgnn_ptr(g), outer, 2 * h, inner, es, h, h, sh);
  MPI_Request req[4];
  MPI_Datatype T = mpi_type(dt);
  int e = MPI_Irecv(rl, (int)blk, T, lo, TAG_BWD, comm, &req[0]);
  if (!e) e = MPI_Irecv(rh, (int)blk, T, hi, TAG_BWD, comm, &req[1]);
  if (!e) e = MPI_Isend(sl, (int)blk, T, lo, TAG_BWD, comm, &req[2]);
  if (!e) e = MPI_Isend(sh, (int)blk, T, hi, TAG_BWD, comm, &req[3]);
  if (!e) e = MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  if (e) {
    free(buf);
    return sgnn_seterr(SGNN_ERR_BACKEND, "sgpar_halo backward: MPI error %d", e);
  }
  char *d = sgnn_ptr(gin[0]);
  if (lo != MPI_PROC_NULL) unpack_add(rl, outer, n, inner, dt, 0, h, d);
  if (hi != MPI_PROC_NULL) unpack_add(rh, outer, n, inner, dt, n - h, h, d);
  free(buf);
  return 0;
}

int sgpar_halo_end(SgparHalo *ph, SgnnTensor *halos)
{
  SgparHalo H = ph ? *ph : NULL;
  if (!H || !halos) return sgpar_fail(SGNN_ERR_ARG, "sgpar_halo_end: NULL argument");
  *halos = NULL;
  int e = MPI_Waitall(4, H->req, MPI_STATUSES_IGNORE);
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
  SgnnNode *nd = sgnn_record(o, "sgpar_halo", 1, &H->x, halo_bw);
  if (nd) {
    nd->ip[0] = H->axis;
    nd->ip[1] = H->h;
    nd->ip[2] = H->lo;
    nd->ip[3] = H->hi;
    nd->ip[4] = (int)MPI_Comm_c2f(H->comm);
  }
  halo_free(ph);
  *halos = o;
  return 0;
}

int sgpar_halo(SgparGrid g, const SgparAxisSplit *s, SgnnTensor x, int h, SgnnTensor *out)
{
  SgparHalo H;
  SgnnTensor hl = NULL, parts[3] = {NULL, x, NULL};
  int rc = sgpar_halo_begin(g, s, x, h, &H);
  if (rc) return rc;
  rc = sgpar_halo_end(&H, &hl);
  if (rc) return rc;
  NNTRYG("sgpar_halo", sgnn_slice(hl, s->axis, 0, h, &parts[0]));
  NNTRYG("sgpar_halo", sgnn_slice(hl, s->axis, h, 2 * h, &parts[2]));
  NNTRYG("sgpar_halo", sgnn_concat(3, parts, s->axis, out));
done:
  sgnn_tensor_free(&hl);
  sgnn_tensor_free(&parts[0]);
  sgnn_tensor_free(&parts[2]);
  return rc;
}

static int allreduce_bw(SgnnNode *nd, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  if (!need[0]) return 0;
  if (cg)
    return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "sgpar_allreduce_sum: second derivatives are not implemented");
  SGNN_TRY(sgnn_tensor_new(sgnn_be(g), g->dtype, g->ndim, g->shape, 0, &gin[0]));
  int e = MPI_Allreduce(sgnn_ptr(g), sgnn_ptr(gin[0]), (int)g->numel, mpi_type(g->dtype), MPI_SUM,
                        MPI_Comm_f2c(nd->ip[0]));
  SGNN_CHECK(!e, SGNN_ERR_BACKEND, "sgpar_allreduce_sum backward: MPI error %d", e);
  return 0;
}

int sgpar_allreduce_sum(MPI_Comm comm, SgnnTensor x, SgnnTensor *out)
{
  if (!x || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_allreduce_sum: NULL argument");
  int rc = check_cpu("sgpar_allreduce_sum", x);
  if (rc) return rc;
  SgnnTensor o;
  NNCHK("sgpar_allreduce_sum", sgnn_tensor_new(sgnn_tensor_backend(x), x->dtype, x->ndim, x->shape, 0, &o));
  int e = MPI_Allreduce(sgnn_ptr(x), sgnn_ptr(o), (int)x->numel, mpi_type(x->dtype), MPI_SUM, comm);
  if (e) {
    sgnn_tensor_free(&o);
    return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_allreduce_sum: MPI error %d", e);
  }
  SgnnNode *nd = sgnn_record(o, "sgpar_allreduce_sum", 1, &x, allreduce_bw);
  if (nd) nd->ip[0] = (int)MPI_Comm_c2f(comm);
  *out = o;
  return 0;
}
