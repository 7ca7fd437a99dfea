/* test_gradcheck.c -- finite-difference checks of first AND second
 * derivatives of every op, in f64 and f32, on the backend named by argv[1]
 * (default cpu; `make check-cuda` runs it with "cuda").
 *
 * For an op y = f(x1..xn) and fixed random weights R (shape of y):
 *   first order : L(x)  = sum(R * f(x));         dL/dxi   from sgnn_grad
 *   second order: S(x)  = sum_i sum(R2_i * dL/dxi) with dL/dxi from
 *                 sgnn_grad(create_graph=1); dS/dxj (Hessian-vector
 *                 products) from differentiating the recorded backward.
 * Both are compared with central differences of L and S. L and S are summed
 * on the host in double so the differences see only the op's rounding.
 *
 * Error measure: e = |a - n|_2 / max(|n|_2, |a|_2) over all inputs; pass if
 * e < rtol or |a - n|_2 < atol.
 *  f64: h = 1e-6. Truncation h^2 f'''/6 ~ 1e-13, rounding eps|L|/h ~ 2e-10|L|
 *       with |L| = O(10): rtol 1e-6, atol 1e-6 (the atol only matters where the
 *       true derivative is 0, e.g. second derivatives of linear ops).
 *  f32: h = 3e-3 (eps_f32 = 6e-8). Rounding ~ 6e-8*|L|/h ~ 2e-5|L| per
 *       entry, truncation ~ 1.5e-6 f''': rtol 2e-3, atol 1e-3 for both
 *       orders (largest error seen on cpu: 8e-5, batch norm second order).
 * First order is checked twice: through the fused create_graph=off backward
 * kernels and through the recorded (differentiable) backward.
 * Non-smooth ops (relu, abs, max pool, L1, trilinear interpolation) get
 * inputs at least 0.05 >> h away from their kinks. */
#include "testutil.h"

#define MAXIN 6
typedef struct {
  int ndim, shape[5];
  double lo, hi;
  int kind;  /* 0 uniform [lo,hi]; 1 |x| in [lo,hi] random sign; 2 distinct: 0.1-spaced shuffled */
  int diff;  /* 1: differentiate w.r.t. it; 0: constant input */
} InSpec;
typedef int (*OpFn)(SgnnTensor *in, SgnnTensor *out);
typedef struct {
  const char *name;
  OpFn fn;
  int nin;
  InSpec in[MAXIN];
  int smooth_f32; /* 0: skip f32 second order (ops whose f32 FD is too noisy: none so far) */
} Case;

static SgnnBackend *BE;
static SgnnDType DT;

/* ---- op wrappers ------------------------------------------------------- */
static int f_add(SgnnTensor *x, SgnnTensor *y) { return sgnn_add(x[0], x[1], y); }
static int f_sub(SgnnTensor *x, SgnnTensor *y) { return sgnn_sub(x[0], x[1], y); }
static int f_mul(SgnnTensor *x, SgnnTensor *y) { return sgnn_mul(x[0], x[1], y); }
static int f_div(SgnnTensor *x, SgnnTensor *y) { return sgnn_div(x[0], x[1], y); }
static int f_affine(SgnnTensor *x, SgnnTensor *y) { return sgnn_affine(x[0], -1.5, 0.25, y); }
static int f_pow(SgnnTensor *x, SgnnTensor *y) { return sgnn_pow(x[0], 2.5, y); }
static int f_pow3(SgnnTensor *x, SgnnTensor *y) { return sgnn_pow(x[0], 3.0, y); }
static int f_tanh(SgnnTensor *x, SgnnTensor *y) { return sgnn_tanh(x[0], y); }
static int f_sigmoid(SgnnTensor *x, SgnnTensor *y) { return sgnn_sigmoid(x[0], y); }
static int f_relu(SgnnTensor *x, SgnnTensor *y) { return sgnn_relu(x[0], y); }
static int f_softplus(SgnnTensor *x, SgnnTensor *y) { return sgnn_softplus(x[0], y); }
static int f_exp(SgnnTensor *x, SgnnTensor *y) { return sgnn_exp(x[0], y); }
static int f_log(SgnnTensor *x, SgnnTensor *y) { return sgnn_log(x[0], y); }
static int f_sqrt(SgnnTensor *x, SgnnTensor *y) { return sgnn_sqrt(x[0], y); }
static int f_abs(SgnnTensor *x, SgnnTensor *y) { return sgnn_abs(x[0], y); }
/* nonlinear wrappers around linear ops: x*x first, so second derivatives
 * through the linear op are nonzero and actually tested */
static int sq(SgnnTensor x, SgnnTensor *y) { return sgnn_mul(x, x, y); }
#define NL(NAME, CALL)                                                                                  \
  static int NAME(SgnnTensor *x, SgnnTensor *y)                                                       \
  {                                                                                                   \
    SgnnTensor s;                                                                                     \
    int rc = sq(x[0], &s);                                                                            \
    if (rc) return rc;                                                                                \
    rc = CALL;                                                                                        \
    sgnn_tensor_free(&s);                                                                             \
    return rc;                                                                                        \
  }
static const int ax1[1] = {1}, ax02[2] = {0, 2};
NL(f_sum1, sgnn_sum(s, 1, ax1, 0, y))
NL(f_sumall, sgnn_sum(s, 0, NULL, 0, y))
NL(f_mean02, sgnn_mean(s, 2, ax02, 1, y))
static const int exp_shape[3] = {2, 3, 4};
NL(f_expand, sgnn_expand(s, 3, exp_shape, y))
static const int sumto_shape[2] = {3, 1};
NL(f_sum_to, sgnn_sum_to(s, 2, sumto_shape, y))
static const int rs_shape[2] = {4, -1};
NL(f_reshape, sgnn_reshape(s, 2, rs_shape, y))
static const int perm201[3] = {2, 0, 1};
NL(f_permute, sgnn_permute(s, perm201, y))
NL(f_transpose, sgnn_transpose(s, 0, 1, y))
NL(f_slice, sgnn_slice(s, 1, 1, 3, y))
NL(f_pad, sgnn_pad_axis(s, 0, 1, 2, y))
static const long sel_idx[5] = {2, 0, 2, 1, 2};
NL(f_index_select, sgnn_index_select(s, 1, 5, sel_idx, y))
static const long sc_idx[4] = {1, 0, 1, 1};
NL(f_scatter_add, sgnn_scatter_add(s, 1, 4, sc_idx, 3, y))
static int f_concat(SgnnTensor *x, SgnnTensor *y)
{
  SgnnTensor a, b;
  OK(sq(x[0], &a));
  OK(sgnn_mul(x[1], x[0], &b)); /* [2,3]*[2,3] */
  SgnnTensor v[3] = {a, x[1], b};
  int rc = sgnn_concat(3, v, 1, y);
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  return rc;
}
static int f_matmul(SgnnTensor *x, SgnnTensor *y) { return sgnn_matmul(x[0], x[1], 0, 0, y); }
static int f_matmul_tt(SgnnTensor *x, SgnnTensor *y) { return sgnn_matmul(x[0], x[1], 1, 1, y); }
static int f_matmul_tn(SgnnTensor *x, SgnnTensor *y) { return sgnn_matmul(x[0], x[1], 1, 0, y); }
static int f_matmul_nt(SgnnTensor *x, SgnnTensor *y) { return sgnn_matmul(x[0], x[1], 0, 1, y); }
static int f_linear(SgnnTensor *x, SgnnTensor *y) { return sgnn_linear(x[0], x[1], x[2], y); }
static int f_linear_tanh(SgnnTensor *x, SgnnTensor *y)
{
  SgnnTensor z;
  OK(sgnn_linear(x[0], x[1], x[2], &z));
  int rc = sgnn_tanh(z, y);
  sgnn_tensor_free(&z);
  return rc;
}
static const int st1[3] = {1, 1, 1}, pd1[3] = {1, 1, 1}, st2[3] = {1, 2, 1}, pd2[3] = {0, 1, 1};
static int f_conv(SgnnTensor *x, SgnnTensor *y) { return sgnn_conv3d(x[0], x[1], x[2], st1, pd1, y); }
static int f_conv2d(SgnnTensor *x, SgnnTensor *y) { return sgnn_conv3d(x[0], x[1], NULL, st2, pd2, y); }
static int f_conv_sq(SgnnTensor *x, SgnnTensor *y)
{ /* conv of x^2: the second derivative in x passes through im2col/col2im */
  SgnnTensor s;
  OK(sq(x[0], &s));
  int rc = sgnn_conv3d(s, x[1], x[2], st1, pd1, y);
  sgnn_tensor_free(&s);
  return rc;
}
static const int k222[3] = {2, 2, 2}, k133[3] = {1, 3, 3}, s122[3] = {1, 2, 2}, d[3] = {2, 3, 4};
NL(f_col2im, sgnn_col2im3d(s, 2, d, k222, st1, pd1, y))
NL(f_maxpool, sgnn_maxpool3d(s, k222, k222, y))
NL(f_avgpool, sgnn_avgpool3d(s, k133, s122, y))
static const int f221[3] = {2, 2, 1}, f222[3] = {2, 2, 2};
NL(f_up_nearest, sgnn_upsample_nearest3d(s, f221, y))
NL(f_up_trilinear, sgnn_upsample_trilinear3d(s, f222, y))
static int f_interp(SgnnTensor *x, SgnnTensor *y) { return sgnn_interp_trilinear(x[0], x[1], y); }
static int f_interp_sq(SgnnTensor *x, SgnnTensor *y)
{ /* grid^2 sampled at points: mixed grid/point second derivatives */
  SgnnTensor s;
  OK(sq(x[0], &s));
  int rc = sgnn_interp_trilinear(s, x[1], y);
  sgnn_tensor_free(&s);
  return rc;
}
static int f_group_norm(SgnnTensor *x, SgnnTensor *y) { return sgnn_group_norm(x[0], 2, x[1], x[2], 1e-3, y); }
static int f_batch_norm(SgnnTensor *x, SgnnTensor *y) { return sgnn_batch_norm(x[0], x[1], x[2], NULL, NULL, 1, 0.1, 1e-3, y); }
static int f_batch_norm_eval(SgnnTensor *x, SgnnTensor *y)
{
  return sgnn_batch_norm(x[0], x[1], x[2], x[3], x[4], 0, 0.1, 1e-3, y);
}
static int f_lstm(SgnnTensor *x, SgnnTensor *y)
{
  SgnnTensor h, c, v[2];
  OK(sgnn_lstm_cell(x[0], x[1], x[2], x[3], x[4], x[5], &h, &c));
  v[0] = h;
  v[1] = c;
  int rc = sgnn_concat(2, v, 1, y);
  sgnn_tensor_free(&h);
  sgnn_tensor_free(&c);
  return rc;
}
static int f_mse(SgnnTensor *x, SgnnTensor *y) { return sgnn_mse_loss(x[0], x[1], y); }
static int f_l1(SgnnTensor *x, SgnnTensor *y) { return sgnn_l1_loss(x[0], x[1], y); }

#define IN(nd, s0, s1, s2, s3, s4, lo, hi, kind) {nd, {s0, s1, s2, s3, s4}, lo, hi, kind, 1}
#define CIN(nd, s0, s1, s2, s3, s4, lo, hi, kind) {nd, {s0, s1, s2, s3, s4}, lo, hi, kind, 0}
static Case cases[] = {
  {"add(bcast)", f_add, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(1, 4, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"sub(bcast)", f_sub, 2, {IN(3, 2, 3, 1, 0, 0, -1, 1, 0), IN(2, 1, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"mul(bcast)", f_mul, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(2, 3, 1, 0, 0, 0, -1, 1, 0)}, 1},
  {"div(bcast)", f_div, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(1, 4, 0, 0, 0, 0, 0.5, 2, 1)}, 1},
  {"affine", f_affine, 1, {IN(1, 5, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"pow(2.5)", f_pow, 1, {IN(2, 2, 3, 0, 0, 0, 0.5, 2, 0)}, 1},
  {"pow(3)", f_pow3, 1, {IN(2, 2, 3, 0, 0, 0, -1.5, 1.5, 0)}, 1},
  {"tanh", f_tanh, 1, {IN(2, 3, 4, 0, 0, 0, -2, 2, 0)}, 1},
  {"sigmoid", f_sigmoid, 1, {IN(2, 3, 4, 0, 0, 0, -3, 3, 0)}, 1},
  {"relu", f_relu, 1, {IN(2, 3, 4, 0, 0, 0, 0.05, 1, 1)}, 1},
  {"softplus", f_softplus, 1, {IN(2, 3, 4, 0, 0, 0, -3, 3, 0)}, 1},
  {"exp", f_exp, 1, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"log", f_log, 1, {IN(2, 3, 4, 0, 0, 0, 0.5, 2, 0)}, 1},
  {"sqrt", f_sqrt, 1, {IN(2, 3, 4, 0, 0, 0, 0.5, 2, 0)}, 1},
  {"abs", f_abs, 1, {IN(2, 3, 4, 0, 0, 0, 0.05, 1, 1)}, 1},
  {"sum(axis)", f_sum1, 1, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0)}, 1},
  {"sum(all)", f_sumall, 1, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"mean(axes,keepdim)", f_mean02, 1, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0)}, 1},
  {"expand", f_expand, 1, {IN(2, 3, 1, 0, 0, 0, -1, 1, 0)}, 1},
  {"sum_to", f_sum_to, 1, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0)}, 1},
  {"reshape", f_reshape, 1, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0)}, 1},
  {"permute", f_permute, 1, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0)}, 1},
  {"transpose", f_transpose, 1, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"slice", f_slice, 1, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"pad_axis", f_pad, 1, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"concat", f_concat, 2, {IN(2, 2, 3, 0, 0, 0, -1, 1, 0), IN(2, 2, 3, 0, 0, 0, -1, 1, 0)}, 1},
  {"index_select", f_index_select, 1, {IN(3, 2, 3, 2, 0, 0, -1, 1, 0)}, 1},
  {"scatter_add", f_scatter_add, 1, {IN(3, 2, 4, 2, 0, 0, -1, 1, 0)}, 1},
  {"matmul", f_matmul, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(2, 4, 5, 0, 0, 0, -1, 1, 0)}, 1},
  {"matmul(At,Bt)", f_matmul_tt, 2, {IN(2, 4, 3, 0, 0, 0, -1, 1, 0), IN(2, 5, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"matmul(At)", f_matmul_tn, 2, {IN(3, 2, 4, 3, 0, 0, -1, 1, 0), IN(2, 4, 5, 0, 0, 0, -1, 1, 0)}, 1},
  {"matmul(Bt,batched)", f_matmul_nt, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(3, 2, 5, 4, 0, 0, -1, 1, 0)}, 1},
  {"matmul(batched)", f_matmul, 2, {IN(3, 2, 3, 4, 0, 0, -1, 1, 0), IN(3, 2, 4, 2, 0, 0, -1, 1, 0)}, 1},
  {"linear", f_linear, 3, {IN(2, 4, 3, 0, 0, 0, -1, 1, 0), IN(2, 5, 3, 0, 0, 0, -1, 1, 0), IN(1, 5, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"linear+tanh", f_linear_tanh, 3,
   {IN(2, 4, 3, 0, 0, 0, -1, 1, 0), IN(2, 5, 3, 0, 0, 0, -1, 1, 0), IN(1, 5, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"conv3d(s1,p1)", f_conv, 3,
   {IN(5, 2, 2, 3, 3, 4, -1, 1, 0), IN(5, 3, 2, 3, 3, 3, -0.5, 0.5, 0), IN(1, 3, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"conv3d(x^2)", f_conv_sq, 3,
   {IN(5, 1, 2, 2, 3, 3, -1, 1, 0), IN(5, 2, 2, 3, 3, 3, -0.5, 0.5, 0), IN(1, 2, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"conv2d(stride,pad)", f_conv2d, 2, {IN(5, 1, 2, 1, 5, 5, -1, 1, 0), IN(5, 2, 2, 1, 3, 3, -0.5, 0.5, 0)}, 1},
  {"col2im3d", f_col2im, 1, {IN(3, 16, 1, 60, 0, 0, -1, 1, 0)}, 1},
  {"maxpool3d", f_maxpool, 1, {IN(5, 1, 2, 2, 4, 4, 0.3, 0, 2)}, 1},
  {"avgpool3d", f_avgpool, 1, {IN(5, 1, 2, 2, 5, 5, -1, 1, 0)}, 1},
  {"upsample_nearest", f_up_nearest, 1, {IN(5, 1, 2, 2, 2, 3, -1, 1, 0)}, 1},
  {"upsample_trilinear", f_up_trilinear, 1, {IN(5, 1, 1, 2, 3, 3, -1, 1, 0)}, 1},
  {"interp_trilinear", f_interp, 2, {IN(5, 2, 2, 3, 4, 4, -1, 1, 0), IN(3, 2, 5, 3, 0, 0, 0.05, 0.95, 3)}, 1},
  {"interp_trilinear(g^2)", f_interp_sq, 2, {IN(5, 1, 2, 3, 3, 4, -1, 1, 0), IN(3, 1, 6, 3, 0, 0, 0.05, 0.95, 3)}, 1},
  {"group_norm", f_group_norm, 3,
   {IN(4, 2, 4, 3, 2, 0, -1, 1, 0), IN(1, 4, 0, 0, 0, 0, 0.5, 1.5, 0), IN(1, 4, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"batch_norm(train)", f_batch_norm, 3,
   {IN(3, 4, 3, 5, 0, 0, -1, 1, 0), IN(1, 3, 0, 0, 0, 0, 0.5, 1.5, 0), IN(1, 3, 0, 0, 0, 0, -1, 1, 0)}, 1},
  {"batch_norm(eval)", f_batch_norm_eval, 5,
   {IN(3, 4, 3, 5, 0, 0, -1, 1, 0), IN(1, 3, 0, 0, 0, 0, 0.5, 1.5, 0), IN(1, 3, 0, 0, 0, 0, -1, 1, 0),
    CIN(1, 3, 0, 0, 0, 0, -0.2, 0.2, 0), CIN(1, 3, 0, 0, 0, 0, 0.5, 1.5, 0)}, 1},
  {"lstm_cell", f_lstm, 6,
   {IN(2, 2, 3, 0, 0, 0, -1, 1, 0), IN(2, 2, 4, 0, 0, 0, -1, 1, 0), IN(2, 2, 4, 0, 0, 0, -1, 1, 0),
    IN(2, 16, 3, 0, 0, 0, -0.5, 0.5, 0), IN(2, 16, 4, 0, 0, 0, -0.5, 0.5, 0), IN(1, 16, 0, 0, 0, 0, -0.5, 0.5, 0)}, 1},
  {"mse_loss", f_mse, 2, {IN(2, 3, 4, 0, 0, 0, -1, 1, 0), IN(2, 3, 4, 0, 0, 0, -1, 1, 0)}, 1},
  {"l1_loss", f_l1, 2, {IN(2, 3, 4, 0, 0, 0, 0.05, 1, 1), CIN(2, 3, 4, 0, 0, 0, 0, 0, 0)}, 1},
};

/* ---- machinery ----------------------------------------------------------- */
static SgnnRng rng;
typedef struct {
  Case *c;
  double *x[MAXIN];
  long n[MAXIN];
  double *R;  /* output weights */
  long nout;
  int oshape[5], ond;
  double *R2[MAXIN];
} Prob;

static void make_inputs(Prob *p, int requires, SgnnTensor *t)
{
  for (int i = 0; i < p->c->nin; i++) {
    InSpec *s = &p->c->in[i];
    OK(sgnn_tensor_from_f64(BE, DT, s->ndim, s->shape, p->x[i], &t[i]));
    if (requires && s->diff) OK(sgnn_tensor_set_requires_grad(t[i], 1));
  }
}
static void free_all(SgnnTensor *t, int n)
{
  for (int i = 0; i < n; i++) sgnn_tensor_free(&t[i]);
}

static double *to_host(SgnnTensor t)
{
  double *h = malloc(sizeof(double) * (size_t)(sgnn_tensor_numel(t) + 1));
  OK(sgnn_tensor_to_f64(t, h));
  return h;
}
static double dot(const double *a, const double *b, long n)
{
  double s = 0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* L(x) = sum R*f(x), summed on the host in double */
static double eval_L(Prob *p)
{
  SgnnTensor in[MAXIN], y;
  int prev = sgnn_set_grad_enabled(0);
  make_inputs(p, 0, in);
  OK(p->c->fn(in, &y));
  double *h = to_host(y), L = dot(h, p->R, p->nout);
  free(h);
  sgnn_tensor_free(&y);
  free_all(in, p->c->nin);
  sgnn_set_grad_enabled(prev);
  return L;
}

static int diff_inputs(Prob *p, SgnnTensor *in, SgnnTensor *d, int *map)
{
  int k = 0;
  for (int i = 0; i < p->c->nin; i++)
    if (p->c->in[i].diff) {
      map[k] = i;
      d[k++] = in[i];
    }
  return k;
}

/* analytic dL/dx_i (create_graph = cg); returns the grads, inputs in in[] */
static int grads1(Prob *p, SgnnTensor *in, SgnnTensor *g, int cg)
{
  SgnnTensor y, Rt, d[MAXIN];
  int map[MAXIN];
  make_inputs(p, 1, in);
  OK(p->c->fn(in, &y));
  OK(sgnn_tensor_from_f64(BE, DT, p->ond, p->oshape, p->R, &Rt));
  int nd = diff_inputs(p, in, d, map);
  OK(sgnn_grad(1, &y, &Rt, nd, d, cg, g));
  sgnn_tensor_free(&y);
  sgnn_tensor_free(&Rt);
  return nd;
}

/* S(x) = sum_i R2_i . dL/dx_i, on the host in double */
static double eval_S(Prob *p)
{
  SgnnTensor in[MAXIN], g[MAXIN];
  int map[MAXIN], nd = grads1(p, in, g, 0);
  SgnnTensor d[MAXIN];
  diff_inputs(p, in, d, map);
  double S = 0;
  for (int k = 0; k < nd; k++) {
    double *h = to_host(g[k]);
    S += dot(h, p->R2[map[k]], p->n[map[k]]);
    free(h);
  }
  free_all(g, nd);
  free_all(in, p->c->nin);
  return S;
}

static double frand(double lo, double hi) { return lo + (hi - lo) * sgnn_rng_uniform(&rng); }
static double rnd(double v) { return DT == SGNN_F32 ? (double)(float)v : v; }

static void gen_input(InSpec *s, double *x, long n)
{
  for (long k = 0; k < n; k++) {
    switch (s->kind) {
    case 1: x[k] = frand(s->lo, s->hi) * (sgnn_rng_uniform(&rng) < 0.5 ? -1 : 1); break;
    case 2: x[k] = s->lo + 0.1 * k; break;
    case 3: x[k] = (sgnn_rng_uniform(&rng) < 0.5 ? 0 : 1) + frand(s->lo, s->hi); break;
    default: x[k] = frand(s->lo, s->hi);
    }
  }
  if (s->kind == 2) /* shuffle the distinct values */
    for (long k = n - 1; k > 0; k--) {
      long j = (long)(sgnn_rng_uniform(&rng) * (k + 1));
      double t = x[k];
      x[k] = x[j];
      x[j] = t;
    }
  for (long k = 0; k < n; k++) x[k] = rnd(x[k]);
}

static double norm2(const double *a, long n) { return sqrt(dot(a, a, n)); }

/* compare analytic a with numeric n (concatenated over inputs) */
static void compare(const char *what, const char *name, const double *a, const double *num, long n, double rtol,
                    double atol)
{
  double *d = malloc(sizeof(double) * (n + 1));
  for (long i = 0; i < n; i++) d[i] = a[i] - num[i];
  double na = norm2(a, n), nn = norm2(num, n), nd = norm2(d, n);
  double den = na > nn ? na : nn, e = den > 0 ? nd / den : 0;
  CHECK(e < rtol || nd < atol, "%s %s %s: rel err %.3g (rtol %.1g), abs err %.3g (atol %.1g), |analytic| %.3g |numeric| %.3g",
        sgnn_backend_name(BE), DT == SGNN_F64 ? "f64" : "f32", what, e, rtol, nd, atol, na, nn);
  if (getenv("SGNN_GRADCHECK_VERBOSE"))
    printf("  %-22s %s %s rel %.2e abs %.2e |g| %.3g\n", name, DT == SGNN_F64 ? "f64" : "f32", what, e, nd, nn);
  free(d);
}

static void run_case(Case *c)
{
  Prob p = {.c = c};
  long tot = 0;
  for (int i = 0; i < c->nin; i++) {
    p.n[i] = 1;
    for (int k = 0; k < c->in[i].ndim; k++) p.n[i] *= c->in[i].shape[k];
    p.x[i] = malloc(sizeof(double) * (p.n[i] + 1));
    p.R2[i] = malloc(sizeof(double) * (p.n[i] + 1));
    gen_input(&c->in[i], p.x[i], p.n[i]);
    for (long k = 0; k < p.n[i]; k++) p.R2[i][k] = rnd(frand(-1, 1));
    if (c->in[i].diff) tot += p.n[i];
  }
  { /* output shape and weights */
    SgnnTensor in[MAXIN], y;
    make_inputs(&p, 0, in);
    OK(c->fn(in, &y));
    p.nout = sgnn_tensor_numel(y);
    p.ond = sgnn_tensor_ndim(y);
    memcpy(p.oshape, sgnn_tensor_shape(y), sizeof(int) * p.ond);
    p.R = malloc(sizeof(double) * (p.nout + 1));
    for (long k = 0; k < p.nout; k++) p.R[k] = rnd(frand(-1, 1));
    sgnn_tensor_free(&y);
    free_all(in, c->nin);
  }
  const double h = DT == SGNN_F64 ? 1e-6 : 3e-3;
  const double rtol1 = DT == SGNN_F64 ? 1e-6 : 2e-3, rtol2 = rtol1;
  const double atol = DT == SGNN_F64 ? 1e-6 : 1e-3;
  double *a1 = calloc(tot + 1, sizeof(double)), *n1 = calloc(tot + 1, sizeof(double));
  double *a2 = calloc(tot + 1, sizeof(double)), *n2 = calloc(tot + 1, sizeof(double));
  double *a0 = calloc(tot + 1, sizeof(double));

  /* analytic first order through the fused (create_graph off) backward */
  {
    SgnnTensor in[MAXIN], g[MAXIN], d[MAXIN];
    int map[MAXIN], nd = grads1(&p, in, g, 0);
    diff_inputs(&p, in, d, map);
    long o = 0;
    for (int k = 0; k < nd; k++) {
      double *hg = to_host(g[k]);
      memcpy(a0 + o, hg, sizeof(double) * p.n[map[k]]);
      free(hg);
      o += p.n[map[k]];
    }
    free_all(g, nd);
    free_all(in, c->nin);
  }

  /* analytic first and second order */
  {
    SgnnTensor in[MAXIN], g[MAXIN], d[MAXIN], R2t[MAXIN], H[MAXIN];
    int map[MAXIN], nd = grads1(&p, in, g, 1);
    diff_inputs(&p, in, d, map);
    long o = 0;
    for (int k = 0; k < nd; k++) {
      double *hg = to_host(g[k]);
      memcpy(a1 + o, hg, sizeof(double) * p.n[map[k]]);
      free(hg);
      o += p.n[map[k]];
      OK(sgnn_tensor_from_f64(BE, DT, c->in[map[k]].ndim, c->in[map[k]].shape, p.R2[map[k]], &R2t[k]));
    }
    OK(sgnn_grad(nd, g, R2t, nd, d, 0, H));
    o = 0;
    for (int k = 0; k < nd; k++) {
      double *hh = to_host(H[k]);
      memcpy(a2 + o, hh, sizeof(double) * p.n[map[k]]);
      free(hh);
      o += p.n[map[k]];
    }
    free_all(g, nd);
    free_all(R2t, nd);
    free_all(H, nd);
    free_all(in, c->nin);
  }
  /* numeric */
  long o = 0;
  for (int i = 0; i < c->nin; i++) {
    if (!c->in[i].diff) continue;
    for (long k = 0; k < p.n[i]; k++, o++) {
      double x0 = p.x[i][k], xp = rnd(x0 + h), xm = rnd(x0 - h);
      p.x[i][k] = xp;
      double Lp = eval_L(&p), Sp = eval_S(&p);
      p.x[i][k] = xm;
      double Lm = eval_L(&p), Sm = eval_S(&p);
      p.x[i][k] = x0;
      n1[o] = (Lp - Lm) / (xp - xm);
      n2[o] = (Sp - Sm) / (xp - xm);
    }
  }
  char what[96];
  snprintf(what, sizeof what, "%s first order (fused)", c->name);
  compare(what, c->name, a0, n1, tot, rtol1, atol);
  snprintf(what, sizeof what, "%s first order (graph)", c->name);
  compare(what, c->name, a1, n1, tot, rtol1, atol);
  snprintf(what, sizeof what, "%s second order", c->name);
  compare(what, c->name, a2, n2, tot, rtol2, atol);
  /* a gradient check that sees only zeros proves nothing: insist on signal */
  CHECK(norm2(n1, tot) > 1e-3, "%s: first derivative is ~0; the case tests nothing", c->name);
  free(a0);
  free(a1);
  free(n1);
  free(a2);
  free(n2);
  free(p.R);
  for (int i = 0; i < c->nin; i++) {
    free(p.x[i]);
    free(p.R2[i]);
  }
}

/* ops whose second derivative is identically zero (f linear in each input
 * and no product of inputs) are wrapped above so that it is not */
int main(int argc, char **argv)
{
  BE = t_backend(argc, argv);
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  double t0 = t_now();
  for (int pass = 0; pass < 2; pass++) {
    DT = pass == 0 ? SGNN_F64 : SGNN_F32;
    sgnn_rng_init(&rng, 1234);
    for (int i = 0; i < ncase; i++) run_case(&cases[i]);
  }
  printf("%d op cases x {f64,f32} x {first,second order} on '%s' in %.2f s\n", ncase, sgnn_backend_name(BE),
         t_now() - t0);
  return t_summary("test_gradcheck");
}
