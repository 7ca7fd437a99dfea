/* ops_elementwise.c -- broadcasting binary ops (add, sub, mul, div) and
 * unary ops (affine, pow, tanh, sigmoid, relu, softplus, exp, log, sqrt,
 * abs). Backward: with create_graph the gradient is built from these same
 * ops (so it can be differentiated again; tanh's is the internal binary op
 * tanh_bw(g, y) = g (1 - y^2)); otherwise a fused kernel computes g*f'(x)
 * in one pass. */
#include "sgnn_impl.h"
#include <string.h>

static const char *bin_name[] = {"add", "sub", "mul", "div", "tanh_bw"};

int sgnn_broadcast_shape(const char *op, SgnnTensor a, SgnnTensor b, int *ndim, int *shape)
{
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
    int ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
    SGNN_CHECK(ea == eb || ea == 1 || eb == 1, SGNN_ERR_SHAPE, "%s: shapes %s and %s do not broadcast (axis %d: %d vs %d)",
               op, SHP(a), SHP(b), i, ea, eb);
    shape[i] = ea == 1 ? eb : ea;
  }
  *ndim = n;
  return 0;
}

/* strides of t when broadcast into the 5-padded iteration shape */
static void bcast_strides(SgnnTensor t, int ndim_out, long *st)
{
  int pad = SGNN_MAX_DIMS - t->ndim;
  long s = 1;
  (void)ndim_out;
  for (int d = SGNN_MAX_DIMS - 1; d >= 0; d--) {
    int e = d >= pad ? t->shape[d - pad] : 1;
    st[d] = e == 1 ? 0 : s;
    s *= e;
  }
}

static int binary(int op, SgnnTensor a, SgnnTensor b, SgnnTensor *out);

static int bin_backward(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  int op = n->ip[0], rc = 0;
  SgnnTensor a = n->saved[0], b = n->saved[1], t = NULL, u = NULL;
  (void)cg;
  if ((op == SGNN_B_MUL && ((need[0] && !b) || (need[1] && !a))) ||
      ((op == SGNN_B_DIV || op == SGNN_B_TANHBW) && (!b || (need[1] && !a))))
    return sgnn_seterr(SGNN_ERR_STATE, "backward of '%s': saved inputs already freed (backward twice without create_graph?)",
                       n->name);
  for (int i = 0; i < 2; i++) {
    if (!need[i]) continue;
    SgnnTensor term = NULL;
    switch (op) {
    case SGNN_B_ADD: term = sgnn_tensor_ref(g); break;
    case SGNN_B_SUB: rc = i == 0 ? (term = sgnn_tensor_ref(g), 0) : sgnn_affine(g, -1.0, 0.0, &term); break;
    case SGNN_B_MUL: rc = sgnn_mul(g, i == 0 ? b : a, &term); break;
    case SGNN_B_TANHBW: /* o = a (1 - b^2): do/da = 1 - b^2 (the same op again), do/db = -2 a b */
      if (i == 0) rc = binary(SGNN_B_TANHBW, g, b, &term);
      else {
        rc = sgnn_mul(g, a, &t);
        if (!rc) rc = sgnn_mul(t, b, &u);
        if (!rc) rc = sgnn_affine(u, -2.0, 0.0, &term);
        sgnn_tensor_free(&t);
        sgnn_tensor_free(&u);
      }
      break;
    case SGNN_B_DIV:
      if (i == 0)
        rc = sgnn_div(g, b, &term);
      else { /* -g a / b^2 */
        rc = sgnn_div(g, b, &t);
        if (!rc) rc = sgnn_mul(t, a, &u);
        if (!rc) rc = sgnn_div(u, b, &term);
        if (!rc) {
          SgnnTensor neg;
          rc = sgnn_affine(term, -1.0, 0.0, &neg);
          sgnn_tensor_free(&term);
          term = neg;
        }
        sgnn_tensor_free(&t);
        sgnn_tensor_free(&u);
      }
      break;
    }
    if (rc) return rc;
    rc = sgnn_sum_to(term, n->in_ndim[i], n->in_shape[i], &gin[i]);
    sgnn_tensor_free(&term);
    if (rc) return rc;
  }
  return 0;
}

static int binary(int op, SgnnTensor a, SgnnTensor b, SgnnTensor *out)
{
  const char *name = bin_name[op];
  SGNN_CHECK(out, SGNN_ERR_ARG, "%s: NULL output", name);
  SGNN_TRY(sgnn_check_pair(name, a, b));
  int nd, shape[SGNN_MAX_DIMS];
  SGNN_TRY(sgnn_broadcast_shape(name, a, b, &nd, shape));
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(a), a->dtype, nd, shape, 0, &o));
  SgnnIter it;
  sgnn_iter_init(&it, nd, shape);
  bcast_strides(a, nd, it.sa);
  bcast_strides(b, nd, it.sb);
  int rc = sgnn_be(a)->binary(op, a->dtype, &it, sgnn_ptr(a), sgnn_ptr(b), sgnn_ptr(o));
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnTensor in[2] = {a, b};
  SgnnNode *n = sgnn_record(o, name, 2, in, bin_backward);
  if (n) {
    n->ip[0] = op;
    if (op == SGNN_B_MUL || op == SGNN_B_DIV || op == SGNN_B_TANHBW) {
      /* keep only what the gradients will read: d/da needs b, d/db needs a (and b for div and tanh_bw) */
      if (b->requires_grad) sgnn_node_save(n, 0, a);
      if (a->requires_grad || op == SGNN_B_DIV || op == SGNN_B_TANHBW) sgnn_node_save(n, 1, b);
    }
  }
  *out = o;
  return 0;
}

int sgnn_add(SgnnTensor a, SgnnTensor b, SgnnTensor *out) { return binary(SGNN_B_ADD, a, b, out); }
int sgnn_sub(SgnnTensor a, SgnnTensor b, SgnnTensor *out) { return binary(SGNN_B_SUB, a, b, out); }
int sgnn_mul(SgnnTensor a, SgnnTensor b, SgnnTensor *out) { return binary(SGNN_B_MUL, a, b, out); }
int sgnn_div(SgnnTensor a, SgnnTensor b, SgnnTensor *out) { return binary(SGNN_B_DIV, a, b, out); }

/* ---- unary -------------------------------------------------------------- */
static const char *un_name[SGNN_U_COUNT] = {"affine", "pow", "tanh", "sigmoid", "relu", "softplus",
                                            "exp",    "log", "sqrt", "abs",     "step", "sign"};

/* f(x) computed without recording (constants such as relu's mask) */
static int unary_const(int op, SgnnTensor x, SgnnTensor *out)
{
  int prev = sgnn_set_grad_enabled(0);
  int rc = sgnn_unary_op(op, x, 0, 0, out);
  sgnn_set_grad_enabled(prev);
  return rc;
}

static int un_backward(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  int op = n->ip[0], rc = 0;
  double p0 = n->dp[0];
  SgnnTensor x = n->saved[0], y = NULL, t = NULL, u = NULL;
  if (!need[0]) return 0;
  int uses_y = op == SGNN_U_TANH || op == SGNN_U_SIGMOID || op == SGNN_U_EXP || op == SGNN_U_SQRT;
  int uses_x = !uses_y && op != SGNN_U_AFFINE;
  if ((uses_x && !x) || (uses_y && !n->out_alias))
    return sgnn_seterr(SGNN_ERR_STATE, "backward of '%s': saved tensors already freed (backward twice without create_graph?)",
                       n->name);
  if (uses_y) y = sgnn_node_output(n, cg);
  if (!cg) { /* fused: one pass, no temporaries */
    SgnnBackend *be = sgnn_be(g);
    rc = sgnn_tensor_new(be, g->dtype, g->ndim, g->shape, 0, &gin[0]);
    if (!rc)
      rc = be->unary_bw(op, g->dtype, g->numel, x ? sgnn_ptr(x) : NULL, y ? sgnn_ptr(y) : NULL, sgnn_ptr(g),
                        sgnn_ptr(gin[0]), p0, n->dp[1]);
    sgnn_tensor_free(&y);
    return rc;
  }
  switch (op) {
  case SGNN_U_AFFINE: rc = sgnn_affine(g, p0, 0.0, &gin[0]); break;
  case SGNN_U_POW: /* g * p x^(p-1) */
    rc = sgnn_pow(x, p0 - 1.0, &t);
    if (!rc) rc = sgnn_affine(t, p0, 0.0, &u);
    if (!rc) rc = sgnn_mul(g, u, &gin[0]);
    break;
  case SGNN_U_TANH: /* g (1 - y^2) as one node: one pass and one buffer (mul, affine, mul took three of
                     * each, and six more passes in the next backward; the DP training step spent ~20 % there) */
    rc = binary(SGNN_B_TANHBW, g, y, &gin[0]);
    break;
  case SGNN_U_SIGMOID: /* g y (1 - y) */
    rc = sgnn_affine(y, -1.0, 1.0, &t);
    if (!rc) rc = sgnn_mul(y, t, &u);
    if (!rc) rc = sgnn_mul(g, u, &gin[0]);
    break;
  case SGNN_U_RELU: /* g * [x > 0]: the mask is piecewise constant */
    rc = unary_const(SGNN_U_STEP, x, &t);
    if (!rc) rc = sgnn_mul(g, t, &gin[0]);
    break;
  case SGNN_U_SOFTPLUS:
    rc = sgnn_sigmoid(x, &t);
    if (!rc) rc = sgnn_mul(g, t, &gin[0]);
    break;
  case SGNN_U_EXP: rc = sgnn_mul(g, y, &gin[0]); break;
  case SGNN_U_LOG: rc = sgnn_div(g, x, &gin[0]); break;
  case SGNN_U_SQRT:
    rc = sgnn_affine(g, 0.5, 0.0, &t);
    if (!rc) rc = sgnn_div(t, y, &gin[0]);
    break;
  case SGNN_U_ABS:
    rc = unary_const(SGNN_U_SIGN, x, &t);
    if (!rc) rc = sgnn_mul(g, t, &gin[0]);
    break;
  default: /* step, sign: derivative zero almost everywhere */
    rc = sgnn_zeros_like(g, &gin[0]);
  }
  sgnn_tensor_free(&t);
  sgnn_tensor_free(&u);
  sgnn_tensor_free(&y);
  return rc;
}

int sgnn_unary_op(int op, SgnnTensor x, double p0, double p1, SgnnTensor *out)
{
  const char *name = (op >= 0 && op < SGNN_U_COUNT) ? un_name[op] : "unary";
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "%s: NULL argument", name);
  SGNN_CHECK_ST(name, x);
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, x->ndim, x->shape, 0, &o));
  int rc = sgnn_be(x)->unary(op, x->dtype, x->numel, sgnn_ptr(x), sgnn_ptr(o), p0, p1);
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  if (op != SGNN_U_STEP && op != SGNN_U_SIGN) {
    SgnnNode *n = sgnn_record(o, name, 1, &x, un_backward);
    if (n) {
      n->ip[0] = op;
      n->dp[0] = p0;
      n->dp[1] = p1;
      if (op == SGNN_U_TANH || op == SGNN_U_SIGMOID || op == SGNN_U_EXP || op == SGNN_U_SQRT)
        sgnn_node_save_output(n, o);
      else if (op != SGNN_U_AFFINE)
        sgnn_node_save(n, 0, x);
    }
  }
  *out = o;
  return 0;
}

int sgnn_affine(SgnnTensor x, double a, double b, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_AFFINE, x, a, b, out); }
int sgnn_pow(SgnnTensor x, double p, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_POW, x, p, 0, out); }
int sgnn_tanh(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_TANH, x, 0, 0, out); }
int sgnn_sigmoid(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_SIGMOID, x, 0, 0, out); }
int sgnn_relu(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_RELU, x, 0, 0, out); }
int sgnn_softplus(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_SOFTPLUS, x, 0, 0, out); }
int sgnn_exp(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_EXP, x, 0, 0, out); }
int sgnn_log(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_LOG, x, 0, 0, out); }
int sgnn_sqrt(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_SQRT, x, 0, 0, out); }
int sgnn_abs(SgnnTensor x, SgnnTensor *out) { return sgnn_unary_op(SGNN_U_ABS, x, 0, 0, out); }
