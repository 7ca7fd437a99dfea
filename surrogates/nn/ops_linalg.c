/* ops_linalg.c -- matmul (2-d or batched 3-d, optional transposes, a 2-d
 * operand shared across the batch) and linear. The backward of a matmul is
 * two matmuls, so double backward is automatic. Without create_graph the
 * backward calls GEMM directly and lets a shared operand's gradient
 * accumulate across the batch inside the kernel (no [B,..] temporary). */
#include "sgnn_impl.h"

typedef struct {
  int batch, M, N, K;
} MMDims;

static int mm_dims(SgnnTensor a, SgnnTensor b, int ta, int tb, MMDims *d)
{
  SGNN_CHECK(a->ndim >= 2 && a->ndim <= 3 && b->ndim >= 2 && b->ndim <= 3, SGNN_ERR_SHAPE,
             "matmul: operands must be 2-d or 3-d, got %s and %s", SHP(a), SHP(b));
  int ar = a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
  int br = b->shape[b->ndim - 2], bc = b->shape[b->ndim - 1];
  int M = ta ? ac : ar, K = ta ? ar : ac, K2 = tb ? bc : br, N = tb ? br : bc;
  SGNN_CHECK(K == K2, SGNN_ERR_SHAPE, "matmul: inner dimensions differ: %s%s x %s%s (%d vs %d)", SHP(a), ta ? "^T" : "",
             SHP(b), tb ? "^T" : "", K, K2);
  int ba = a->ndim == 3 ? a->shape[0] : 0, bb = b->ndim == 3 ? b->shape[0] : 0;
  SGNN_CHECK(!ba || !bb || ba == bb, SGNN_ERR_SHAPE, "matmul: batch sizes differ: %s vs %s", SHP(a), SHP(b));
  d->batch = ba ? ba : bb;
  d->M = M;
  d->N = N;
  d->K = K;
  return 0;
}

/* op(X) op(Y) into a tensor of the target shape; a 2-d target under a batched
 * product is the sum over the batch */
static int mm_raw(SgnnTensor X, SgnnTensor Y, int tx, int ty, int tnd, const int *tshape, SgnnTensor *out)
{
  MMDims d = {0, 0, 0, 0};
  SGNN_TRY(mm_dims(X, Y, tx, ty, &d));
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(X), X->dtype, tnd, tshape, 0, &o));
  int nb = d.batch ? d.batch : 1;
  long sX = X->ndim == 3 ? (long)d.M * d.K : 0, sY = Y->ndim == 3 ? (long)d.K * d.N : 0;
  long sO = tnd == 3 ? (long)d.M * d.N : 0;
  int rc = sgnn_be(X)->gemm(X->dtype, tx, ty, d.M, d.N, d.K, 1.0, sgnn_ptr(X), sX, sgnn_ptr(Y), sY, 0.0, sgnn_ptr(o),
                            sO, nb);
  if (rc) sgnn_tensor_free(&o);
  else *out = o;
  return rc;
}

/* gradient term op(X) op(Y) shaped like input i of node n */
static int mm_term(SgnnNode *n, int i, SgnnTensor X, SgnnTensor Y, int tx, int ty, int cg, SgnnTensor *out)
{
  if (!cg) return mm_raw(X, Y, tx, ty, n->in_ndim[i], n->in_shape[i], out);
  SgnnTensor t;
  SGNN_TRY(sgnn_matmul(X, Y, tx, ty, &t));
  if (t->ndim == n->in_ndim[i]) {
    *out = t;
    return 0;
  }
  int ax = 0, rc = sgnn_sum(t, 1, &ax, 0, out);
  sgnn_tensor_free(&t);
  return rc;
}

static int matmul_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  SgnnTensor A = n->saved[0], B = n->saved[1];
  int ta = n->ip[0], tb = n->ip[1];
  if ((need[0] && !B) || (need[1] && !A))
    return sgnn_seterr(SGNN_ERR_STATE, "backward of 'matmul': saved inputs already freed (backward twice?)");
  if (need[0]) { /* dA */
    if (!ta) SGNN_TRY(mm_term(n, 0, g, B, 0, !tb, cg, &gin[0]));   /* g op(B)^T */
    else SGNN_TRY(mm_term(n, 0, B, g, tb, 1, cg, &gin[0]));        /* op(B) g^T */
  }
  if (need[1]) { /* dB */
    if (!tb) SGNN_TRY(mm_term(n, 1, A, g, !ta, 0, cg, &gin[1]));   /* op(A)^T g */
    else SGNN_TRY(mm_term(n, 1, g, A, 1, ta, cg, &gin[1]));        /* g^T op(A) */
  }
  return 0;
}

int sgnn_matmul(SgnnTensor a, SgnnTensor b, int ta, int tb, SgnnTensor *out)
{
  SGNN_CHECK(out, SGNN_ERR_ARG, "matmul: NULL output");
  SGNN_TRY(sgnn_check_pair("matmul", a, b));
  MMDims d = {0, 0, 0, 0};
  SGNN_TRY(mm_dims(a, b, ta, tb, &d));
  int shape[3] = {d.batch, d.M, d.N};
  SgnnTensor o;
  SGNN_TRY(d.batch ? mm_raw(a, b, ta, tb, 3, shape, &o) : mm_raw(a, b, ta, tb, 2, shape + 1, &o));
  SgnnTensor in[2] = {a, b};
  SgnnNode *n = sgnn_record(o, "matmul", 2, in, matmul_bw);
  if (n) {
    n->ip[0] = ta ? 1 : 0;
    n->ip[1] = tb ? 1 : 0;
    if (b->requires_grad) sgnn_node_save(n, 0, a);
    if (a->requires_grad) sgnn_node_save(n, 1, b);
  }
  *out = o;
  return 0;
}

int sgnn_linear(SgnnTensor x, SgnnTensor W, SgnnTensor bias, SgnnTensor *out)
{
  SGNN_CHECK(x && W && out, SGNN_ERR_ARG, "linear: NULL argument");
  SGNN_CHECK(x->ndim == 2 && W->ndim == 2 && x->shape[1] == W->shape[1], SGNN_ERR_SHAPE,
             "linear: x %s and W %s (expected x [N,in], W [out,in])", SHP(x), SHP(W));
  if (bias)
    SGNN_CHECK(bias->ndim == 1 && bias->shape[0] == W->shape[0], SGNN_ERR_SHAPE, "linear: bias %s for W %s", SHP(bias),
               SHP(W));
  SgnnTensor y;
  SGNN_TRY(sgnn_matmul(x, W, 0, 1, &y));
  if (!bias) {
    *out = y;
    return 0;
  }
  int rc = sgnn_add(y, bias, out);
  sgnn_tensor_free(&y);
  return rc;
}
