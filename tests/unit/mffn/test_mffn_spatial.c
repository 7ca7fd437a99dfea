/* MeshfreeFlowNet on crops partitioned over the spatial ranks of a process grid (issue 18): the
   partitioned encoder (SgMFFNEncodePart: halo exchanges in the 3^3 convolutions, batch statistics of
   the whole crop, local pooling and upsampling, skip concatenations) and owner-local decoding (each
   query point evaluated by the rank owning its cell, from its latent slab plus one neighbour plane)
   against the serial model on the whole crop, which every rank also runs.

     mpiexec -n P test_mffn_spatial G [--fault halo|bn | --residual]   (P = G data groups x P/G spatial ranks)

   Tiny model in float64 (widths 2 3 4, poolings [1,2,2] twice, latent 3, ImNet 5 4, batch norm on),
   crops [1, 4, 5, 16, 8] (t, z, x), 40 query points per crop, some on cell faces and on the last
   planes. Data groups get uneven shares of the global batch (1 + 2 crops, ...).

   1. forward and backward: L = sum W . out + sum V . residual (random W, V: every decoded value and
      every PDE residual -- first and second derivatives by double backward -- gets its own weight).
      Compared: the latent slab (encoder output), the decoded values and residuals of the points the
      rank owns, the gradients of the input slab, of the owned points' coordinates and of all weights
      (summed over the grid); each point owned by exactly one spatial rank.
   2. training: 3 Adam steps of the training loss (SgMFFNCropLossPart, gamma 0.1) summed over the
      group's crops, gradients summed over the grid with the bucketed allreduce and divided by the
      global crop count (sgpar_dp, each crop counted once per group), against serial steps on all
      crops: the weights after 3 steps.
   Splits: along z, uneven (16 = 12 + 4, 4 + 8 + 4, 4 x 4) and even; along t, odd and thin (5 = 3 + 2,
   1 + 3 + 1, 2 + 1 + 1 + 1: one-plane slabs, the halo covers the whole slab); along two axes (z x x:
   12 + 4 by 4 + 4 on 4 ranks; t x z on 2 and 3 ranks).
   Tolerance 1e-10 relative to the largest reference value: only summation orders differ (the
   statistics' and the weight gradients' sums over ranks and slab pieces), expected ~1e-14; a missing
   halo plane or statistics of one slab differ by O(1e-2..1).
   --fault halo|bn (>= 2 spatial ranks): the backward halo exchange or the batch-norm reduction is
   switched off (sgpar_test_set_fault); the run passes only if some comparison FAILS.
   --residual: the same comparisons with the residual decoder (the latent slab carries the input's
   channels, concatenated slab by slab; the decoder adds its correction to their trilinear blend). */
#include <math.h>
#include "sgmffn.h"
#include "sgtrainer.h"

#define NPTS 40
#define NCROP 5 /* at most, over all data groups */
static const int XS[5] = {1, 4, 5, 16, 8};
static const double TOL = 1e-10;

static int           rank_, size_, fails, checks;
static SgparGrid     grid;
static SgMFFN        m;
static SgMFFNPhysics ph;
static double        X[NCROP][4 * 5 * 16 * 8], PT[NCROP][NPTS * 3], W[NCROP][NPTS * 4], V[NCROP][NPTS * 4], TG[NCROP][NPTS * 4];

#define CALLPAR(call) \
  do { \
    if (call) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", sgpar_last_error()); \
  } while (0)

/* a largest difference d against a largest reference value mx, both maxima over every rank: the
   relative difference d / mx, a failure above TOL */
static PetscErrorCode Report(const char *what, const char *cs, double d, double mx)
{
  double rel;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  rel = d / (mx > 0 ? mx : 1);
  checks++;
  if (!(rel <= TOL) || !(mx > 0)) fails++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-4s %-26s %-20s rel.err %.2e (max ref %.3g)\n", rel <= TOL && mx > 0 ? "ok" : "FAIL", cs, what, rel, mx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* running maxima of |ref - got| and |ref| */
static void Acc(double ref, double got, double *d, double *mx)
{
  *d = PetscMax(*d, fabs(ref - got)), *mx = PetscMax(*mx, fabs(ref));
}

/* the slab of split s of a [1, C, T, Z, X] array (C order) */
static void Box(const double *full, const int *shape, const SgparSplit *s, double *out, int *bs)
{
  int  off[5] = {0};
  long k      = 0;
  for (int i = 0; i < 5; i++) bs[i] = shape[i];
  for (int a = 0; a < s->naxes; a++) {
    bs[s->ax[a].axis] = s->ax[a].n;
    off[s->ax[a].axis] = s->ax[a].offset;
  }
  for (int c = 0; c < bs[1]; c++)
    for (int i = 0; i < bs[2]; i++)
      for (int j = 0; j < bs[3]; j++)
        for (int l = 0; l < bs[4]; l++) out[k++] = full[(((long)c * shape[2] + i + off[2]) * shape[3] + j + off[3]) * shape[4] + l + off[4]];
}

typedef struct {
  int        naxes, axes[2], ranks[2];
  const int *counts[2];
  const char *name;
} Spec;

static PetscErrorCode MakePart(const Spec *sp, SgMFFNPart *part)
{
  PetscFunctionBegin;
  part->grid = grid;
  if (sp->naxes == 1) CALLPAR(sgpar_split_create(grid, sp->axes[0], XS[sp->axes[0]], sp->counts[0], &part->split));
  else CALLPAR(sgpar_split2_create(grid, sp->ranks, sp->axes, (int[2]){XS[sp->axes[0]], XS[sp->axes[1]]}, sp->counts, &part->split));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* crops of data group g: [first, first + n) */
static void GroupCrops(const int *gn, int *first, int *n)
{
  int g = sgpar_grid_data_group(grid);
  *first = 0;
  for (int i = 0; i < g; i++) *first += gn[i];
  *n = gn[g];
}

/* L = sum W . out + sum V . residual over the given points of crop c; out/res to host when asked */
static PetscErrorCode PointLoss(int c, SgMFFNLatentBlock *B, int np, const int *idx, SgnnTensor *pt, double *outh, double *resh, SgnnTensor *L)
{
  SgnnTensor out, res, Wt, Vt, a, b, s1, s2;
  SgMFFNJet  J;
  double    *p, *w, *v;
  int        ps[2] = {np, 3}, os[2] = {np, 4};

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(3 * np, &p, 4 * np, &w, 4 * np, &v));
  for (int i = 0; i < np; i++) {
    for (int k = 0; k < 3; k++) p[3 * i + k] = PT[c][3 * idx[i] + k];
    for (int k = 0; k < 4; k++) {
      w[4 * i + k] = W[c][4 * idx[i] + k];
      v[4 * i + k] = V[c][4 * idx[i] + k];
    }
  }
  SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 2, ps, p, pt));
  SgCallNN(sgnn_tensor_set_requires_grad(*pt, 1));
  PetscCall(SgMFFNDecodeBlock(m, B, *pt, &out));
  PetscCall(SgMFFNDerivatives(&ph, out, *pt, &J));
  PetscCall(SgMFFNResidual(&ph, &J, &res));
  SgMFFNJetFree(&J);
  SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 2, os, w, &Wt));
  SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 2, os, v, &Vt));
  SgCallNN(sgnn_mul(out, Wt, &a));
  SgCallNN(sgnn_mul(res, Vt, &b));
  SgCallNN(sgnn_sum(a, 0, NULL, 0, &s1));
  SgCallNN(sgnn_sum(b, 0, NULL, 0, &s2));
  SgCallNN(sgnn_add(s1, s2, L));
  if (outh) SgCallNN(sgnn_tensor_to_f64(out, outh));
  if (resh) SgCallNN(sgnn_tensor_to_f64(res, resh));
  SgnnTensor *fr[] = {&out, &res, &Wt, &Vt, &a, &b, &s1, &s2};
  for (size_t q = 0; q < sizeof fr / sizeof *fr; q++) sgnn_tensor_free(fr[q]);
  PetscCall(PetscFree3(p, w, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddTo(SgnnTensor *acc, SgnnTensor t)
{
  SgnnTensor s;

  PetscFunctionBegin;
  if (!*acc) *acc = sgnn_tensor_ref(t);
  else {
    SgCallNN(sgnn_add(*acc, t, &s));
    sgnn_tensor_free(acc);
    *acc = s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 1. forward and backward of every crop of the global batch (serial) or of the group (partitioned) */
static PetscErrorCode ForwardBackward(const Spec *sp, const int *gn)
{
  const int  lc = (int)SgMFFNLatentChannels(&m->cfg); /* 3, or 3 + 4 input channels with --residual */
  const long nl = lc * 5 * 16 * 8, nx = PetscMax(4 * 5 * 16 * 8, nl); /* slab buffers hold either */
  int        G = sgpar_grid_data_groups(grid), Nt = 0, first, nc, all[1] = {NPTS}, bs[5], ls[5] = {1, lc, 5, 16, 8};
  long       np;
  double    *slab, *ref, *got, *gref, *gw, *lat[NCROP], *out[NCROP], *res[NCROP], *gx[NCROP], *gp[NCROP];
  SgMFFNPart part;
  char       cs[64];

  PetscFunctionBegin;
  for (int i = 0; i < G; i++) Nt += gn[i];
  GroupCrops(gn, &first, &nc);
  SgCallNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc5(nx, &slab, nx, &ref, nx, &got, np, &gref, np, &gw));
  /* serial reference: all crops, every rank */
  SgCallNN(sgnn_params_zero_grad(m->P));
  for (int c = 0; c < Nt; c++) {
    SgnnTensor        x, L, pt, l;
    SgMFFNLatentBlock B;
    int               idx[NPTS];
    for (int i = 0; i < NPTS; i++) idx[i] = i;
    PetscCall(PetscMalloc5(nl, &lat[c], 4 * NPTS, &out[c], 4 * NPTS, &res[c], nx, &gx[c], 3 * NPTS, &gp[c]));
    SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 5, XS, X[c], &x));
    SgCallNN(sgnn_tensor_set_requires_grad(x, 1));
    PetscCall(SgMFFNEncode(m, x, &l));
    SgCallNN(sgnn_tensor_to_f64(l, lat[c]));
    PetscCall(SgMFFNLatentBlockCreate(m, NULL, l, &B));
    PetscCall(PointLoss(c, &B, NPTS, idx, &pt, out[c], res[c], &L));
    SgCallNN(sgnn_backward(L));
    SgCallNN(sgnn_tensor_to_f64(sgnn_tensor_grad(x), gx[c]));
    SgCallNN(sgnn_tensor_to_f64(sgnn_tensor_grad(pt), gp[c]));
    SgMFFNLatentBlockFree(&B);
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&l);
    sgnn_tensor_free(&L);
    sgnn_tensor_free(&pt);
  }
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_grads(m->P), gref));

  /* partitioned: this group's crops, this rank's slab and points */
  PetscCall(MakePart(sp, &part));
  PetscCall(PetscSNPrintf(cs, sizeof cs, "%s", sp->name));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (%d data groups x %d spatial ranks): forward and backward\n", sp->name, G, sgpar_grid_spatial_size(grid)));
  SgCallNN(sgnn_params_zero_grad(m->P));
  {
    double dl = 0, ml = 0, dv = 0, mv = 0, dr = 0, mr = 0, dx = 0, mxx = 0, dp = 0, mp = 0;
    int    owned_total = 0;
    for (int c = first; c < first + nc; c++) {
      SgnnTensor        x, l, L = NULL, pt = NULL;
      SgMFFNLatentBlock B;
      int               idx[NPTS], n = 0, xb[5];
      double            o[4 * NPTS], r[4 * NPTS], g3[3 * NPTS];
      for (int i = 0; i < NPTS; i++)
        if (SgMFFNPartOwns(&part, &PT[c][3 * i])) idx[n++] = i;
      owned_total += n;
      Box(X[c], XS, &part.split, slab, xb);
      SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 5, xb, slab, &x));
      SgCallNN(sgnn_tensor_set_requires_grad(x, 1));
      PetscCall(SgMFFNEncodePart(m, &part, x, &l));
      PetscCall(SgMFFNLatentBlockCreate(m, &part, l, &B));
      if (n) PetscCall(PointLoss(c, &B, n, idx, &pt, o, r, &L));
      else { /* no point here: the tape must still reach the encoder (collective backward) */
        SgnnTensor s;
        SgCallNN(sgnn_sum(B.t, 0, NULL, 0, &s));
        SgCallNN(sgnn_affine(s, 0, 0, &L));
        sgnn_tensor_free(&s);
      }
      SgCallNN(sgnn_backward(L));
      /* latent slab, decoded values, residuals, input gradient slab, point gradients */
      Box(lat[c], ls, &part.split, ref, bs);
      SgCallNN(sgnn_tensor_to_f64(l, got));
      for (long i = 0; i < sgnn_tensor_numel(l); i++) Acc(ref[i], got[i], &dl, &ml);
      for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
          Acc(out[c][4 * idx[i] + k], o[4 * i + k], &dv, &mv);
          Acc(res[c][4 * idx[i] + k], r[4 * i + k], &dr, &mr);
        }
      Box(gx[c], XS, &part.split, ref, bs);
      SgCallNN(sgnn_tensor_to_f64(sgnn_tensor_grad(x), got));
      for (long i = 0; i < sgnn_tensor_numel(x); i++) Acc(ref[i], got[i], &dx, &mxx);
      if (n) {
        SgCallNN(sgnn_tensor_to_f64(sgnn_tensor_grad(pt), g3));
        for (int i = 0; i < n; i++)
          for (int k = 0; k < 3; k++) Acc(gp[c][3 * idx[i] + k], g3[3 * i + k], &dp, &mp);
      }
      SgMFFNLatentBlockFree(&B);
      sgnn_tensor_free(&x);
      sgnn_tensor_free(&l);
      sgnn_tensor_free(&L);
      sgnn_tensor_free(&pt);
    }
    PetscCall(Report("latent slab", cs, dl, ml));
    PetscCall(Report("decoded values", cs, dv, mv));
    PetscCall(Report("PDE residuals", cs, dr, mr));
    PetscCall(Report("input gradient", cs, dx, mxx));
    PetscCall(Report("point gradients", cs, dp, mp));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &owned_total, 1, MPI_INT, MPI_SUM, sgpar_grid_spatial_comm(grid)));
    checks++;
    if (owned_total != nc * all[0]) fails++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-4s %-26s every point owned by exactly one spatial rank\n", owned_total == nc * all[0] ? "ok" : "FAIL", cs));
  }
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_grads(m->P), gw));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, gw, (int)np, MPI_DOUBLE, MPI_SUM, sgpar_grid_comm(grid)));
  {
    double d = 0, mx = 0;
    for (long i = 0; i < np; i++) Acc(gref[i], gw[i], &d, &mx);
    PetscCall(Report("weight gradients", cs, d, mx));
  }
  for (int c = 0; c < Nt; c++) PetscCall(PetscFree5(lat[c], out[c], res[c], gx[c], gp[c]));
  PetscCall(PetscFree5(slab, ref, got, gref, gw));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 2. three Adam steps of the training loss: serial on all crops vs the grid */
static PetscErrorCode Training(const Spec *sp, const int *gn)
{
  int             G = sgpar_grid_data_groups(grid), Nt = 0, first, nc;
  long            np;
  double         *p0, *pser, *ppar, *slab;
  SgnnOptimConfig oc;
  SgMFFNPart      part;

  PetscFunctionBegin;
  for (int i = 0; i < G; i++) Nt += gn[i];
  GroupCrops(gn, &first, &nc);
  PetscCall(MakePart(sp, &part));
  SgCallNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc4(np, &p0, np, &pser, np, &ppar, 4 * 5 * 16 * 8, &slab));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), p0));
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = 1e-2;
  /* Adam's update lr m / (sqrt(v) + eps) has derivative up to lr / eps in a gradient component near
     zero: with the default eps 1e-8 it turns the ~1e-13 round-off of such components into weight
     differences of ~1e-10 after 3 steps (measured 3.5e-10; plain SGD: 4e-17). eps 1e-3 bounds that
     factor by 10, so the comparison stays at round-off and still sees a missing halo (O(1e-3)). */
  oc.eps = getenv("SG_TEST_ADAM_EPS") ? atof(getenv("SG_TEST_ADAM_EPS")) : 1e-3;
  for (int mode = 0; mode < 2; mode++) { /* 0 serial, 1 partitioned */
    SgnnOptim o;
    SgparDP   dp = NULL;
    SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), p0));
    SgCallNN(sgnn_optim_create(m->P, &oc, &o));
    if (mode) CALLPAR(sgpar_dp_create(sgpar_grid_comm(grid), m->P, 4096, &dp));
    for (int step = 0; step < 3; step++) {
      SgnnTensor acc = NULL;
      int        c0 = mode ? first : 0, c1 = mode ? first + nc : Nt;
      SgCallNN(sgnn_params_zero_grad(m->P));
      for (int c = c0; c < c1; c++) {
        SgnnTensor x, l;
        PetscReal  reg, pde;
        double     pts[3 * NPTS], tg[4 * NPTS];
        int        n = 0, xb[5];
        for (int i = 0; i < NPTS; i++) { /* the points this rank owns (all of them serially), in order; other points each step */
          double q[3];
          for (int k = 0; k < 3; k++) q[k] = PT[c][3 * i + k] * (1 - 0.02 * step);
          if (mode && !SgMFFNPartOwns(&part, q)) continue;
          for (int k = 0; k < 3; k++) pts[3 * n + k] = q[k];
          for (int k = 0; k < 4; k++) tg[4 * n + k] = TG[c][4 * i + k];
          n++;
        }
        if (mode) {
          Box(X[c], XS, &part.split, slab, xb);
          SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 5, xb, slab, &x));
        } else SgCallNN(sgnn_tensor_from_f64(m->be, SGNN_F64, 5, XS, X[c], &x));
        PetscCall(SgMFFNCropLossPart(m, &ph, mode ? &part : NULL, x, NPTS, n, pts, tg, 0.1, NULL, NULL, NULL, &l, &reg, &pde, NULL));
        PetscCall(AddTo(&acc, l));
        sgnn_tensor_free(&x);
        sgnn_tensor_free(&l);
      }
      if (dp) CALLPAR(sgpar_dp_begin(dp, sgpar_grid_sample_count(grid, nc)));
      if (acc) SgCallNN(sgnn_backward(acc));
      if (dp) CALLPAR(sgpar_dp_end(dp, NULL));
      else SgCallNN(sgnn_tensor_scale(sgnn_params_grads(m->P), 1.0 / Nt));
      SgCallNN(sgnn_optim_step(o));
      sgnn_tensor_free(&acc);
    }
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), mode ? ppar : pser));
    sgnn_optim_destroy(&o);
    sgpar_dp_destroy(&dp);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (%d data groups x %d spatial ranks): 3 Adam steps of the training loss\n", sp->name, G, sgpar_grid_spatial_size(grid)));
  {
    double d = 0, mx = 0;
    for (long i = 0; i < np; i++) Acc(pser[i], ppar[i], &d, &mx);
    PetscCall(Report("weights", sp->name, d, mx));
  }
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), p0));
  PetscCall(PetscFree4(p0, pser, ppar, slab));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgMFFNConfig c;
  SgnnBackend *be;
  SgnnRng      r;
  int          G, S, fault = 0;
  PetscBool    residual;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank_));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size_));
  G = argc > 1 ? atoi(argv[1]) : 1;
  residual = (PetscBool)(argc > 2 && !strcmp(argv[2], "--residual"));
  if (argc > 3 && !strcmp(argv[2], "--fault")) fault = !strcmp(argv[3], "halo") ? SGPAR_FAULT_BWD_HALO : !strcmp(argv[3], "bn") ? SGPAR_FAULT_BN_REDUCE : -1;
  PetscCheck(G >= 1 && size_ % G == 0 && size_ / G <= 4 && G <= 4 && fault >= 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_mffn_spatial DATA_GROUPS [--fault halo|bn | --residual] (DATA_GROUPS divides the ranks, at most 4 per grid axis)");
  S = size_ / G;
  PetscCheck(!fault || S >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "--fault needs >= 2 spatial ranks");
  CALLPAR(sgpar_grid_create(PETSC_COMM_WORLD, G, S, &grid));
  PetscCall(SgMFFNConfigDefault(&c));
  c.nlevels = 2;
  c.channels[0] = 2;
  c.channels[1] = 3;
  c.channels[2] = 4;
  c.neck_div = 2;
  c.latent = 3;
  c.nmlp = 2;
  c.mlp[0] = 5;
  c.mlp[1] = 4;
  c.pool[0][0] = 1;
  c.pool[0][1] = 2;
  c.pool[0][2] = 2;
  c.pool[1][0] = 1;
  c.pool[1][1] = 2;
  c.pool[1][2] = 2;
  c.residual = residual;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &m));
  PetscCall(SgMFFNInitWeights(m, 5));
  ph.nu = 0.03;
  ph.kappa = 0.02;
  for (int k = 0; k < 3; k++) ph.scale[k] = 0.5 + 0.25 * k;
  for (int k = 0; k < 4; k++) {
    ph.mean[k] = 0.1 * k;
    ph.std[k] = 1 + 0.5 * k;
  }
  sgnn_rng_init(&r, 31);
  for (int cr = 0; cr < NCROP; cr++) {
    for (size_t i = 0; i < sizeof X[0] / sizeof X[0][0]; i++) X[cr][i] = sgnn_rng_normal(&r);
    for (int p = 0; p < NPTS; p++)
      for (int k = 0; k < 3; k++) {
        double hi = XS[2 + k] - 1, v = hi * sgnn_rng_uniform(&r);
        if (p % 5 == 1) v = floor(v); /* on a cell face: the owner is the rank whose slab starts there */
        if (p % 13 == 2) v = hi;      /* on the last plane: the cell below it */
        PT[cr][3 * p + k] = v;
      }
    for (int i = 0; i < NPTS * 4; i++) {
      W[cr][i] = sgnn_rng_normal(&r);
      V[cr][i] = sgnn_rng_normal(&r);
      TG[cr][i] = sgnn_rng_normal(&r);
    }
  }
  {
    /* slabs: z (16, multiples of 4 for the two poolings by 2), t (5, no pooling: 1-plane slabs) */
    static const int z16[5][4] = {{0}, {16}, {12, 4}, {4, 8, 4}, {4, 4, 4, 4}}, t5[5][4] = {{0}, {5}, {3, 2}, {1, 3, 1}, {2, 1, 1, 1}};
    static const int zz[4] = {12, 4}, xx[4] = {4, 4}, tt3[4] = {1, 3, 1}, tt2[4] = {3, 2};
    static const int gn[5][4] = {{0}, {2}, {1, 2}, {1, 1, 1}, {2, 1, 1, 1}}; /* crops per data group */
    Spec zu = {1, {3, 0}, {0, 0}, {z16[S], NULL}, "z uneven"}, ze = {1, {3, 0}, {0, 0}, {NULL, NULL}, "z even"}, tu = {1, {2, 0}, {0, 0}, {t5[S], NULL}, "t odd/thin"};
    Spec two = {2, {3, 4}, {2, 2}, {zz, xx}, "z x x (2 x 2)"};
    if (S == 2) two = (Spec){2, {2, 3}, {2, 1}, {tt2, NULL}, "t x z (2 x 1)"};
    if (S == 3) two = (Spec){2, {2, 3}, {3, 1}, {tt3, NULL}, "t x z (3 x 1)"};
    sgpar_test_set_fault(fault);
    if (fault) {
      PetscCall(ForwardBackward(&zu, gn[G]));
      PetscCall(ForwardBackward(&tu, gn[G]));
    } else {
      PetscCall(ForwardBackward(&zu, gn[G]));
      if (S == 2 || S == 4) PetscCall(ForwardBackward(&ze, gn[G]));
      PetscCall(ForwardBackward(&tu, gn[G]));
      if (S > 1) PetscCall(ForwardBackward(&two, gn[G]));
      PetscCall(Training(&zu, gn[G]));
      PetscCall(Training(&tu, gn[G]));
      if (S > 1) PetscCall(Training(&two, gn[G]));
    }
  }
  if (fault) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %d of %d comparisons fail with the %s switched off (expected: some)\n", fails ? "PASS" : "FAIL", fails, checks, fault == SGPAR_FAULT_BWD_HALO ? "backward halo exchange" : "batch-norm reduction"));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %d of %d comparisons within %.0e\n", fails ? "FAIL" : "PASS", checks - fails, checks, TOL));
  PetscCall(SgMFFNDestroy(&m));
  sgpar_grid_destroy(&grid);
  PetscCall(PetscFinalize());
  return fault ? !fails : fails != 0;
}
