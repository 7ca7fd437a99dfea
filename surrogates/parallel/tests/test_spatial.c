/* test_spatial.c -- spatially partitioned layers equal the serial engine.
 *
 *   mpiexec -n P test_spatial G [--fault halo|bn]
 *
 * P ranks form G data groups x P/G spatial ranks. Every rank also runs the
 * serial model on the whole batch (the reference), then the partitioned model
 * on its data group's samples and its slab; loss = sum(y * R) for a fixed
 * random R, so every output element gets a distinct gradient. Checked per
 * case: the output slab, the input gradient slab and the weight gradients
 * summed over the grid equal the serial ones. Splits: as even as possible, and
 * uneven ones with 1-plane slabs (odd and thin: the halo then covers the whole
 * slab). Cases: conv3d 3x3x3 split along D and along H, conv3d with an
 * unpadded even kernel on an unsplit axis, a 1x1x1 conv, batch norm (running
 * statistics too), max-pool 2 + nearest upsample 2, a U-Net-like stack
 * (conv-BN-ReLU, pool, conv-BN-ReLU, upsample, skip concat, 1x1 conv), and 3
 * Adam steps of that stack with the bucketed data-parallel gradient sum over
 * the whole grid (global-mean loss with uneven local batches).
 *
 * Tolerance: 1e-11 relative to the largest reference magnitude, f64. Only
 * the summation order differs from serial (the weight-gradient sum over ranks
 * and over the slab's three convolution pieces, the statistics' allreduce);
 * each value sums at most a few thousand terms, so the expected difference is
 * ~1e3 * 2^-53 ~ 1e-13; 1e-11 leaves room for the Adam steps' amplification
 * and still catches a single missing halo plane (differences of O(1)).
 *
 * --chunks N: the interior of one-axis convolutions in N pieces overlapped
 * with the halo exchange (default 4; the thin slabs get fewer), 0: blocking.
 *
 * --fault halo|bn (needs >= 2 spatial ranks): the backward halo exchange or
 * the batch-norm reduction is switched off (sgpar_test_set_fault); the run
 * then passes only if some comparison FAILS: this shows the checks bite. */
#include "sgpar.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, fails, checks;
static SgparGrid grid;
static SgnnBackend *be;
static const double TOL = 1e-11;

#define OK(call)                                                                                        \
  do {                                                                                                \
    if (call) {                                                                                       \
      printf("[%d] %s:%d %s failed: %s | %s\n", rank, __FILE__, __LINE__, #call, sgnn_last_error(),  \
             sgpar_last_error());                                                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

/* ---- the models: one code path, serial (sgnn_*) or partitioned (sgpar_*) -- */
static int serial;        /* 1: whole sample, engine ops */
static SgparSplit split;  /* partitioned: the current tensor's split (pool/upsample change it) */
static int across_data;   /* batch norm over the data groups too */

static SgnnTensor conv(SgnnTensor x, SgnnTensor w, SgnnTensor b, const int pad[3])
{
  static const int one[3] = {1, 1, 1};
  SgnnTensor y;
  if (serial)
    OK(sgnn_conv3d(x, w, b, one, pad, &y));
  else
    OK(sgpar_conv3d(grid, &split, x, w, b, one, pad, &y));
  return y;
}
static SgnnTensor bn(SgnnTensor x, SgnnTensor gm, SgnnTensor bt, SgnnTensor rm, SgnnTensor rv)
{
  SgnnTensor y;
  if (serial)
    OK(sgnn_batch_norm(x, gm, bt, rm, rv, 1, 0.1, 1e-5, &y));
  else
    OK(sgpar_batch_norm(grid, x, gm, bt, rm, rv, across_data, 0.1, 1e-5, &y));
  return y;
}
static SgnnTensor pool2(SgnnTensor x)
{
  static const int k[3] = {2, 2, 2};
  SgnnTensor y;
  if (serial)
    OK(sgnn_maxpool3d(x, k, k, &y));
  else
    OK(sgpar_maxpool3d(&split, x, k, &split, &y));
  return y;
}
static SgnnTensor up2(SgnnTensor x)
{
  static const int f[3] = {2, 2, 2};
  SgnnTensor y;
  if (serial)
    OK(sgnn_upsample_nearest3d(x, f, &y));
  else
    OK(sgpar_upsample_nearest3d(&split, x, f, &split, &y));
  return y;
}
static SgnnTensor cat2(SgnnTensor a, SgnnTensor b, const SgparSplit *sa)
{
  SgnnTensor xs[2] = {a, b}, y;
  if (serial)
    OK(sgnn_concat(2, xs, 1, &y));
  else {
    SgparSplit ss[2] = {*sa, split};
    OK(sgpar_concat(2, ss, xs, &y));
  }
  return y;
}
static SgnnTensor relu(SgnnTensor x)
{
  SgnnTensor y;
  OK(sgnn_relu(x, &y));
  return y;
}
#define DROP(t) sgnn_tensor_free(&(t))

/* query points for the decoder case: [8][NQ][3] index coordinates inside the 12x8x4 grid; this
 * rank's samples are [q_n0, q_n0 + q_c0) */
enum { NQ = 7 };
static double qpts[8 * NQ * 3]; /* up to 8 samples (the test uses at most 5) */
static int q_n0, q_c0, q_nt;
static double loss_weight = 1; /* the loss is replicated on the spatial ranks after a gather */

/* parameters of all models live in one slab */
static SgnnParams P;
static SgnnTensor w33, b33, w_even, w11, b11, g1, be1, u_w1, u_g1, u_be1, u_w2, u_g2, u_be2,
    u_w3, u_b3;
static SgnnTensor rmean[2], rvar[2], rm1, rv1; /* running statistics (not parameters) */

typedef SgnnTensor (*Model)(SgnnTensor x);
static SgnnTensor m_conv33(SgnnTensor x) { return conv(x, w33, b33, (int[3]){1, 1, 1}); }
/* kernel 3x3x2, no padding on W (W shrinks by 1): any padding on unsplit axes */
static SgnnTensor m_conv_even(SgnnTensor x) { return conv(x, w_even, NULL, (int[3]){1, 1, 0}); }
static SgnnTensor m_conv11(SgnnTensor x) { return conv(x, w11, b11, (int[3]){0, 0, 0}); }
static SgnnTensor m_bn(SgnnTensor x) { return bn(x, g1, be1, rm1, rv1); }
static SgnnTensor m_poolup(SgnnTensor x)
{
  SgnnTensor p = pool2(x), y = up2(p);
  DROP(p);
  return y;
}
/* MeshfreeFlowNet-like decoder: the latent grid gathered on every spatial rank, then interpolated at
 * query points anywhere in the sample; output [N, NQ, C, 1, 1] */
static SgnnTensor m_decoder(SgnnTensor x)
{
  SgnnTensor c = conv(x, w33, b33, (int[3]){1, 1, 1}), a = relu(c), full, pts, q, y;
  int n = serial ? q_nt : q_c0, n0 = serial ? 0 : q_n0;
  if (serial)
    full = sgnn_tensor_ref(a);
  else {
    OK(sgpar_gather(grid, &split, a, &full));
    int C = sgnn_tensor_shape(full)[1];
    split = (SgparSplit){1, {{2, C, 0, C, C, C, MPI_PROC_NULL, MPI_PROC_NULL}}}; /* whole output: no split */
    loss_weight = 1.0 / sgpar_grid_spatial_size(grid);
  }
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 3, (int[3]){n, NQ, 3}, qpts + (long)n0 * NQ * 3, &pts));
  OK(sgnn_interp_trilinear(full, pts, &q));
  OK(sgnn_reshape(q, 5, (int[5]){n, NQ, -1, 1, 1}, &y));
  SgnnTensor *t[] = {&c, &a, &full, &pts, &q};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) sgnn_tensor_free(t[i]);
  return y;
}

/* no conv bias before a batch norm: it cancels, its gradient is round-off, and Adam would blow that up */
static SgnnTensor m_unet(SgnnTensor x)
{
  SgnnTensor c1 = conv(x, u_w1, NULL, (int[3]){1, 1, 1}), n1 = bn(c1, u_g1, u_be1, rmean[0], rvar[0]), s1 = relu(n1);
  SgparSplit s_skip = split;
  SgnnTensor p = pool2(s1), c2 = conv(p, u_w2, NULL, (int[3]){1, 1, 1}), n2 = bn(c2, u_g2, u_be2, rmean[1], rvar[1]),
             a2 = relu(n2), u = up2(a2), cat = cat2(s1, u, &s_skip), y = conv(cat, u_w3, u_b3, (int[3]){0, 0, 0});
  SgnnTensor *t[] = {&c1, &n1, &s1, &p, &c2, &n2, &a2, &u, &cat};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) sgnn_tensor_free(t[i]);
  return y;
}

static void setup_params(void)
{
  SgnnRng rng;
  sgnn_rng_init(&rng, 2024);
  OK(sgnn_params_create(be, SGNN_F64, &P));
  OK(sgnn_params_add(P, "w33", 5, (int[5]){4, 3, 3, 3, 3}, &w33));
  OK(sgnn_params_add(P, "b33", 1, (int[1]){4}, &b33));
  OK(sgnn_params_add(P, "w_even", 5, (int[5]){2, 3, 3, 3, 2}, &w_even));
  OK(sgnn_params_add(P, "w11", 5, (int[5]){2, 3, 1, 1, 1}, &w11));
  OK(sgnn_params_add(P, "b11", 1, (int[1]){2}, &b11));
  OK(sgnn_params_add(P, "g1", 1, (int[1]){3}, &g1));
  OK(sgnn_params_add(P, "be1", 1, (int[1]){3}, &be1));
  OK(sgnn_params_add(P, "u_w1", 5, (int[5]){4, 3, 3, 3, 3}, &u_w1));
  OK(sgnn_params_add(P, "u_g1", 1, (int[1]){4}, &u_g1));
  OK(sgnn_params_add(P, "u_be1", 1, (int[1]){4}, &u_be1));
  OK(sgnn_params_add(P, "u_w2", 5, (int[5]){4, 4, 3, 3, 3}, &u_w2));
  OK(sgnn_params_add(P, "u_g2", 1, (int[1]){4}, &u_g2));
  OK(sgnn_params_add(P, "u_be2", 1, (int[1]){4}, &u_be2));
  OK(sgnn_params_add(P, "u_w3", 5, (int[5]){2, 8, 1, 1, 1}, &u_w3));
  OK(sgnn_params_add(P, "u_b3", 1, (int[1]){2}, &u_b3));
  OK(sgnn_params_setup(P));
  OK(sgnn_init_uniform(sgnn_params_values(P), -0.5, 0.5, &rng));
  for (int i = 0; i < 2; i++) {
    OK(sgnn_tensor_zeros(be, SGNN_F64, 1, (int[1]){4}, &rmean[i]));
    OK(sgnn_tensor_full(be, SGNN_F64, 1, (int[1]){4}, 1.0, &rvar[i]));
  }
  OK(sgnn_tensor_zeros(be, SGNN_F64, 1, (int[1]){3}, &rm1));
  OK(sgnn_tensor_full(be, SGNN_F64, 1, (int[1]){3}, 1.0, &rv1));
}

/* running statistics start from (0, 1) for each run */
static void reset_stats(void)
{
  for (int i = 0; i < 2; i++) {
    OK(sgnn_tensor_fill(rmean[i], 0));
    OK(sgnn_tensor_fill(rvar[i], 1));
  }
  OK(sgnn_tensor_fill(rm1, 0));
  OK(sgnn_tensor_fill(rv1, 1));
}

/* ---- host boxes: samples [n0, n0+c0) and the slab of split s of a [5]-shaped array -- */
static void box(const double *full, const int *shape, int n0, int c0, const SgparSplit *s, double *out, int *bs)
{
  int off[5] = {n0, 0, 0, 0, 0};
  memcpy(bs, shape, 5 * sizeof(int));
  bs[0] = c0;
  for (int k = 0; k < s->naxes; k++) {
    bs[s->ax[k].axis] = s->ax[k].n;
    off[s->ax[k].axis] = s->ax[k].offset;
  }
  long k = 0;
  for (int i0 = 0; i0 < bs[0]; i0++)
    for (int i1 = 0; i1 < bs[1]; i1++)
      for (int i2 = 0; i2 < bs[2]; i2++)
        for (int i3 = 0; i3 < bs[3]; i3++)
          for (int i4 = 0; i4 < bs[4]; i4++) {
            int j[5] = {i0 + off[0], i1, i2 + off[2], i3 + off[3], i4 + off[4]};
            out[k++] = full[(((long)(j[0] * shape[1] + j[1]) * shape[2] + j[2]) * shape[3] + j[3]) * shape[4] + j[4]];
          }
}

/* how a case splits the sample: one axis over all spatial ranks, or two over a ranks[0] x ranks[1] layout;
 * counts[k] NULL: even */
typedef struct {
  int naxes, axes[2], ranks[2];
  const int *counts[2];
} Spec;
static void make_split(const Spec *sp, const int *shape, SgparSplit *s)
{
  if (sp->naxes == 1)
    OK(sgpar_split_create(grid, sp->axes[0], shape[sp->axes[0]], sp->counts[0], s));
  else
    OK(sgpar_split2_create(grid, sp->ranks, sp->axes, (int[2]){shape[sp->axes[0]], shape[sp->axes[1]]}, sp->counts, s));
}
static void describe(const Spec *sp, char *cs, size_t len)
{
  int k = 0;
  for (int a = 0; a < sp->naxes; a++) {
    int P = sp->naxes == 1 ? sgpar_grid_spatial_size(grid) : sp->ranks[a];
    k += snprintf(cs + k, len - k, "%sax%d:", a ? " " : "", sp->axes[a]);
    if (!sp->counts[a]) k += snprintf(cs + k, len - k, "even/%d", P);
    for (int i = 0; sp->counts[a] && i < P; i++) k += snprintf(cs + k, len - k, "%s%d", i ? "," : "", sp->counts[a][i]);
  }
}

/* max |a-b| / max |ref| over all ranks; counts a failure above TOL */
static double compare(const char *what, const char *cs, const double *ref, const double *got, long n)
{
  double d = 0, m = 0, dm, mm;
  for (long i = 0; i < n; i++) {
    d = fmax(d, fabs(ref[i] - got[i]));
    m = fmax(m, fabs(ref[i]));
  }
  MPI_Allreduce(&d, &dm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&m, &mm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double rel = dm / (mm > 0 ? mm : 1);
  checks++;
  if (!(rel <= TOL) || !(mm > 0)) fails++;
  if (rank == 0)
    printf("  %-4s %-22s %-14s rel.err %.2e (max ref %.3g)\n", rel <= TOL && mm > 0 ? "ok" : "FAIL", cs, what, rel, mm);
  return rel;
}

static double *dalloc(long n)
{
  double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  if (!p) MPI_Abort(MPI_COMM_WORLD, 1);
  return p;
}

/* loss sum(y * R) with R (host, y's shape); backward; y, x's gradient and the parameter gradients to host */
static void weighted_backward(SgnnTensor x, SgnnTensor y, const double *Rh, double *yh, double *gx, double *gp)
{
  SgnnTensor R0, R, yR, L;
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 5, sgnn_tensor_shape(y), Rh, &R0));
  OK(sgnn_affine(R0, loss_weight, 0, &R));
  DROP(R0);
  OK(sgnn_mul(y, R, &yR));
  OK(sgnn_sum(yR, 0, NULL, 0, &L));
  OK(sgnn_backward(L));
  OK(sgnn_tensor_to_f64(y, yh));
  OK(sgnn_tensor_to_f64(sgnn_tensor_grad(x), gx));
  OK(sgnn_tensor_to_f64(sgnn_params_grads(P), gp));
  DROP(R), DROP(yR), DROP(L);
}

/* one case: model on global input [Ntot,C,D,H,W]; counts: the slab sizes along axis (NULL: even);
 * group_n: samples per data group */
static void run_case(const char *name, Model model, const int *shape, const Spec *sp, const int *group_n)
{
  SgnnRng rng;
  sgnn_rng_init(&rng, 77);
  long nx = 1, np;
  for (int i = 0; i < 5; i++) nx *= shape[i];
  OK(sgnn_params_count(P, &np));
  double *X = dalloc(nx), *p0 = dalloc(np), *rs0 = dalloc(16);
  for (long i = 0; i < nx; i++) X[i] = 2 * sgnn_rng_uniform(&rng) - 1;
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), p0));
  reset_stats();

  /* serial reference */
  serial = 1;
  loss_weight = 1;
  q_nt = shape[0];
  SgnnTensor x, y;
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 5, shape, X, &x));
  OK(sgnn_tensor_set_requires_grad(x, 1));
  OK(sgnn_params_zero_grad(P));
  y = model(x);
  int ys[5];
  memcpy(ys, sgnn_tensor_shape(y), sizeof ys);
  long ny = sgnn_tensor_numel(y);
  double *Y = dalloc(ny), *Rh = dalloc(ny), *GX = dalloc(nx), *GP = dalloc(np), *RS = dalloc(16);
  for (long i = 0; i < ny; i++) Rh[i] = 2 * sgnn_rng_uniform(&rng) - 1;
  weighted_backward(x, y, Rh, Y, GX, GP);
  OK(sgnn_tensor_to_f64(rm1, RS));
  OK(sgnn_tensor_to_f64(rv1, RS + 3));
  DROP(x), DROP(y);
  reset_stats();

  /* partitioned */
  serial = 0;
  int G = sgpar_grid_data_groups(grid), dg = sgpar_grid_data_group(grid), n0 = 0;
  for (int i = 0; i < dg; i++) n0 += group_n[i];
  q_n0 = n0;
  q_c0 = group_n[dg];
  across_data = G > 1;
  make_split(sp, shape, &split);
  SgparSplit s_in = split;
  int bs[5], rbs[5];
  double *xb = dalloc(nx);
  box(X, shape, n0, group_n[dg], &s_in, xb, bs);
  OK(sgnn_tensor_from_f64(be, SGNN_F64, 5, bs, xb, &x));
  OK(sgnn_tensor_set_requires_grad(x, 1));
  OK(sgnn_params_zero_grad(P));
  y = model(x);
  double *rb = dalloc(ny), *yb = dalloc(ny), *gb = dalloc(nx), *gx = dalloc(nx), *gp = dalloc(np);
  box(Rh, ys, n0, group_n[dg], &split, rb, rbs);
  if (memcmp(rbs, sgnn_tensor_shape(y), sizeof rbs)) {
    printf("[%d] %s: partitioned output has the wrong shape\n", rank, name);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  weighted_backward(x, y, rb, yb, gx, gp);
  MPI_Allreduce(MPI_IN_PLACE, gp, (int)np, MPI_DOUBLE, MPI_SUM, sgpar_grid_comm(grid));
  char cs[64];
  describe(sp, cs, sizeof cs);
  if (rank == 0) printf("%s (%d data groups x %d spatial ranks)\n", name, G, sgpar_grid_spatial_size(grid));
  box(Y, ys, n0, group_n[dg], &split, rb, rbs);
  compare("output", cs, rb, yb, sgnn_tensor_numel(y));
  box(GX, shape, n0, group_n[dg], &s_in, gb, bs);
  compare("input grad", cs, gb, gx, sgnn_tensor_numel(x));
  int any = 0;
  for (long i = 0; i < np; i++) any |= GP[i] != 0;
  if (any) compare("weight grads", cs, GP, gp, np);
  if (model == m_bn) {
    OK(sgnn_tensor_to_f64(rm1, rs0));
    OK(sgnn_tensor_to_f64(rv1, rs0 + 3));
    compare("running stats", cs, RS, rs0, 6);
  }
  DROP(x), DROP(y);
  loss_weight = 1;
  double *fr[] = {X, p0, rs0, Y, Rh, GX, GP, RS, xb, rb, yb, gb, gx, gp};
  for (size_t i = 0; i < sizeof fr / sizeof *fr; i++) free(fr[i]);
}

/* a few Adam steps of the U-Net stack with a global-mean loss: the bucketed
 * allreduce over the whole grid (each sample counted once per data group)
 * against the serial steps on the whole batch */
static void run_training(const int *shape, const Spec *sp, const int *group_n)
{
  SgnnRng rng;
  sgnn_rng_init(&rng, 99);
  long nx = 1, np;
  for (int i = 0; i < 5; i++) nx *= shape[i];
  OK(sgnn_params_count(P, &np));
  double *X = dalloc(nx), *p0 = dalloc(np), *pser = dalloc(np), *ppar = dalloc(np), *xb = dalloc(nx);
  for (long i = 0; i < nx; i++) X[i] = 2 * sgnn_rng_uniform(&rng) - 1;
  OK(sgnn_tensor_to_f64(sgnn_params_values(P), p0));
  int G = sgpar_grid_data_groups(grid), dg = sgpar_grid_data_group(grid), n0 = 0, bs[5];
  for (int i = 0; i < dg; i++) n0 += group_n[i];
  SgnnOptimConfig oc;
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = 1e-2;
  for (int mode = 0; mode < 2; mode++) {
    SgnnOptim o;
    SgparDP dp = NULL;
    OK(sgnn_tensor_set_f64(sgnn_params_values(P), p0));
    OK(sgnn_optim_create(P, &oc, &o));
    serial = mode == 0;
    across_data = G > 1;
    if (!serial) OK(sgpar_dp_create(sgpar_grid_comm(grid), P, 1024, &dp));
    for (int step = 0; step < 3; step++) {
      SgnnTensor x, y, y2, L;
      make_split(sp, shape, &split);
      if (serial) {
        OK(sgnn_tensor_from_f64(be, SGNN_F64, 5, shape, X, &x));
      } else {
        box(X, shape, n0, group_n[dg], &split, xb, bs);
        OK(sgnn_tensor_from_f64(be, SGNN_F64, 5, bs, xb, &x));
      }
      OK(sgnn_params_zero_grad(P));
      if (dp) OK(sgpar_dp_begin(dp, sgpar_grid_sample_count(grid, group_n[dg])));
      y = m_unet(x);
      OK(sgnn_mul(y, y, &y2)); /* loss: sum over samples of sum(y^2), then / sample count */
      OK(sgnn_sum(y2, 0, NULL, 0, &L));
      OK(sgnn_backward(L));
      if (dp)
        OK(sgpar_dp_end(dp, NULL));
      else
        OK(sgnn_tensor_scale(sgnn_params_grads(P), 1.0 / shape[0]));
      OK(sgnn_optim_step(o));
      DROP(x), DROP(y), DROP(y2), DROP(L);
    }
    OK(sgnn_tensor_to_f64(sgnn_params_values(P), serial ? pser : ppar));
    sgnn_optim_destroy(&o);
    sgpar_dp_destroy(&dp);
  }
  char cs[64];
  describe(sp, cs, sizeof cs);
  if (rank == 0) printf("U-Net, 3 Adam steps (%d data groups x %d spatial ranks)\n", G, sgpar_grid_spatial_size(grid));
  compare("parameters", cs, pser, ppar, np);
  OK(sgnn_tensor_set_f64(sgnn_params_values(P), p0));
  double *fr[] = {X, p0, pser, ppar, xb};
  for (size_t i = 0; i < sizeof fr / sizeof *fr; i++) free(fr[i]);
}

/* misuse is refused with a message on every rank (the refusals depend only on numbers all ranks
 * share, so no rank waits for a neighbour that gave up) */
static void run_refusals(const int *c11)
{
  SgparGrid g2;
  SgparSplit sp;
  SgnnTensor x, y, w5;
  int got;
  if (rank == 0) printf("refusals\n");
#define REFUSED(call, what)                                                                             \
  do {                                                                                                \
    int r_ = (call) != 0;                                                                             \
    MPI_Allreduce(&r_, &got, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);                                    \
    checks++;                                                                                         \
    if (!got) fails++;                                                                         \
    if (rank == 0) printf("  %-4s %-40s %s\n", got ? "ok" : "FAIL", what, got ? sgpar_last_error() : "accepted"); \
  } while (0)
  REFUSED(sgpar_grid_create(MPI_COMM_WORLD, size + 1, 1, &g2), "grid not covering the ranks");
  REFUSED(sgpar_split_create(grid, 2, 11, (int[4]){20, 20, 20, 20}, &sp), "counts not summing to the extent");
  REFUSED(sgpar_split_create(grid, 1, 11, NULL, &sp), "split along the channel axis");
  OK(sgpar_split_create(grid, 2, 11, c11, &sp));
  OK(sgnn_tensor_zeros(be, SGNN_F64, 5, (int[5]){1, 3, sp.ax[0].n, 4, 4}, &x));
  REFUSED(sgpar_conv3d(grid, &sp, x, w33, NULL, (int[3]){2, 1, 1}, (int[3]){1, 1, 1}, &y), "conv stride 2 on the split axis");
  REFUSED(sgpar_conv3d(grid, &sp, x, w33, NULL, (int[3]){1, 1, 1}, (int[3]){0, 1, 1}, &y), "conv without padding on the split axis");
  REFUSED(sgpar_maxpool3d(&sp, x, (int[3]){2, 2, 2}, &sp, &y), "pooling 2 over slabs of gcd 1");
  OK(sgnn_tensor_zeros(be, SGNN_F64, 5, (int[5]){3, 3, 2 * sp.ax[0].min_n + 3, 3, 3}, &w5));
  if (sgpar_grid_spatial_size(grid) > 1) /* one spatial rank needs no halo: the engine pads */
    REFUSED(sgpar_conv3d(grid, &sp, x, w5, NULL, (int[3]){1, 1, 1}, (int[3]){sp.ax[0].min_n + 1, 1, 1}, &y),
            "halo wider than the thinnest slab");
#undef REFUSED
  DROP(x), DROP(w5);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int G = argc > 1 ? atoi(argv[1]) : 1, fault = 0, chunks = 4;
  if (argc > 3 && !strcmp(argv[2], "--fault"))
    fault = !strcmp(argv[3], "halo") ? SGPAR_FAULT_BWD_HALO : !strcmp(argv[3], "bn") ? SGPAR_FAULT_BN_REDUCE : -1;
  if (argc > 3 && !strcmp(argv[2], "--chunks")) chunks = atoi(argv[3]);
  if (G < 1 || size % G || fault < 0 || chunks < 0 || (argc > 2 && !fault && strcmp(argv[2], "--chunks"))) {
    if (rank == 0) fprintf(stderr, "usage: test_spatial DATA_GROUPS [--fault halo|bn | --chunks N] (DATA_GROUPS divides the ranks)\n");
    MPI_Finalize();
    return 2;
  }
  int S = size / G;
  if (fault && S < 2) {
    if (rank == 0) fprintf(stderr, "test_spatial: --fault needs >= 2 spatial ranks (got %d)\n", S);
    MPI_Finalize();
    return 2;
  }
  SgnnRng qr;
  sgnn_rng_init(&qr, 5);
  for (int i = 0; i < 8 * NQ; i++) { /* inside [0, 11] x [0, 7] x [0, 3] */
    qpts[3 * i] = 11 * sgnn_rng_uniform(&qr);
    qpts[3 * i + 1] = 7 * sgnn_rng_uniform(&qr);
    qpts[3 * i + 2] = 3 * sgnn_rng_uniform(&qr);
  }
  OK(sgnn_backend_get("cpu", &be));
  OK(sgpar_grid_create(MPI_COMM_WORLD, G, S, &grid));
  OK(sgpar_grid_set_overlap(grid, chunks));
  if (rank == 0) printf("one-axis convolutions: %s\n", chunks ? "interior in pieces overlapped with the halo" : "blocking halo");
  setup_params();
  sgpar_test_set_fault(fault);

  /* uneven slabs with 1-plane (thinner than the 3-plane window) ranks: 11 and 9 planes over S ranks,
   * and 12 planes in even slabs (pooling by 2 stays local) */
  static const int c11[5][4] = {{0}, {11}, {3, 8}, {1, 6, 4}, {2, 1, 5, 3}};
  static const int c9[5][4] = {{0}, {9}, {8, 1}, {2, 1, 6}, {1, 3, 1, 4}};
  static const int c12[5][4] = {{0}, {12}, {4, 8}, {2, 6, 4}, {2, 4, 2, 4}};
  static const int c8[5][4] = {{0}, {8}, {2, 6}, {4, 2, 2}, {2, 2, 2, 2}};
  /* samples per data group: uneven (global batch 3 over 2 groups, 5 over 4) */
  static const int gn[5][4] = {{0}, {2}, {1, 2}, {1, 1, 1}, {2, 1, 1, 1}};
  int Nt = 0;
  for (int i = 0; i < G; i++) Nt += gn[G][i];
  if (S > 4 || G > 4) {
    if (rank == 0) fprintf(stderr, "test_spatial: written for at most 4 ranks per grid axis\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#define ONE(ax, c) (&(Spec){1, {ax, 0}, {0, 0}, {c, NULL}})
  /* two axes when the spatial ranks form a 2-D layout: 4 = 2 x 2 (D and H, uneven), 2 = 2 x 1, 3 = 1 x 3 */
  static const int l2[5][2] = {{0}, {1, 1}, {2, 1}, {1, 3}, {2, 2}};
  static const int cd[4] = {4, 8}, ch[4] = {6, 2}, ch3[4] = {2, 2, 4};
  Spec two = {2, {2, 3}, {l2[S][0], l2[S][1]}, {l2[S][0] == 2 ? cd : NULL, l2[S][1] == 2 ? ch : l2[S][1] == 3 ? ch3 : NULL}};
  if (fault == SGPAR_FAULT_BN_REDUCE) {
    run_case("batch norm", m_bn, (int[5]){Nt, 3, 11, 3, 4}, ONE(2, c11[S]), gn[G]);
  } else if (fault == SGPAR_FAULT_BWD_HALO) {
    run_case("conv3d 3x3x3", m_conv33, (int[5]){Nt, 3, 11, 5, 4}, ONE(2, c11[S]), gn[G]);
    run_case("U-Net stack", m_unet, (int[5]){Nt, 3, 12, 4, 4}, ONE(2, c12[S]), gn[G]);
    run_case("U-Net stack, 2 split axes", m_unet, (int[5]){Nt, 3, 12, 8, 4}, &two, gn[G]);
  } else {
    run_case("conv3d 3x3x3", m_conv33, (int[5]){Nt, 3, 11, 5, 4}, ONE(2, NULL), gn[G]);
    run_case("conv3d 3x3x3", m_conv33, (int[5]){Nt, 3, 11, 5, 4}, ONE(2, c11[S]), gn[G]);
    run_case("conv3d 3x3x3", m_conv33, (int[5]){Nt, 3, 4, 9, 5}, ONE(3, c9[S]), gn[G]);
    run_case("conv3d 3x3x2 W unpadded", m_conv_even, (int[5]){Nt, 3, 9, 4, 5}, ONE(2, c9[S]), gn[G]);
    run_case("conv3d 1x1x1", m_conv11, (int[5]){Nt, 3, 11, 3, 2}, ONE(2, c11[S]), gn[G]);
    run_case("batch norm", m_bn, (int[5]){Nt, 3, 11, 3, 4}, ONE(2, c11[S]), gn[G]);
    run_case("batch norm", m_bn, (int[5]){Nt, 3, 4, 9, 2}, ONE(3, c9[S]), gn[G]);
    run_case("maxpool 2 + upsample 2", m_poolup, (int[5]){Nt, 3, 12, 4, 2}, ONE(2, c12[S]), gn[G]);
    run_case("U-Net stack", m_unet, (int[5]){Nt, 3, 12, 4, 4}, ONE(2, c12[S]), gn[G]);
    run_case("U-Net stack", m_unet, (int[5]){Nt, 3, 4, 8, 6}, ONE(3, c8[S]), gn[G]);
    run_case("conv3d 3x3x3, 2 split axes", m_conv33, (int[5]){Nt, 3, 12, 8, 3}, &two, gn[G]);
    run_case("U-Net stack, 2 split axes", m_unet, (int[5]){Nt, 3, 12, 8, 4}, &two, gn[G]);
    run_case("gather + query-point decoder", m_decoder, (int[5]){Nt, 3, 12, 8, 4}, ONE(2, c12[S]), gn[G]);
    run_case("gather + query-point decoder", m_decoder, (int[5]){Nt, 3, 12, 8, 4}, &two, gn[G]);
    run_training((int[5]){Nt, 3, 12, 4, 4}, ONE(2, c12[S]), gn[G]);
    run_training((int[5]){Nt, 3, 12, 8, 4}, &two, gn[G]);
    run_refusals(c11[S]);
  }
  int rc;
  if (fault) {
    if (rank == 0)
      printf("%s: %d of %d comparisons fail with the %s switched off (expected: some)\n", fails ? "PASS" : "FAIL",
             fails, checks, fault == SGPAR_FAULT_BWD_HALO ? "backward halo exchange" : "batch-norm reduction");
    rc = fails ? 0 : 1;
  } else {
    if (rank == 0) printf("%s: %d of %d comparisons within %.0e\n", fails ? "FAIL" : "PASS", checks - fails, checks, TOL);
    rc = fails ? 1 : 0;
  }
  for (int i = 0; i < 2; i++) DROP(rmean[i]), DROP(rvar[i]);
  DROP(rm1), DROP(rv1);
  sgnn_params_destroy(&P);
  sgpar_grid_destroy(&grid);
  MPI_Finalize();
  return rc;
}
