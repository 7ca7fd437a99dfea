/* MeshfreeFlowNet's model and PDE residual (surrogates/mffn), on a tiny configuration (encoder widths
   2 3 4, two poolings, latent 3, ImNet 5 4) in float64. What it checks, and why it can fail:

   test_mffn grad
     1. d(sum W . out)/d(weights) by backward against central differences (h = 1e-6) at 48 slab
        entries spread over every parameter tensor: relative error < 1e-5 (central differences in f64
        are good to ~1e-8 of the gradient scale; a wrong adjoint is off by O(1));
     2. first derivatives of the decoded fields w.r.t. the query coordinates (sgnn_grad) against
        central differences of the output, and second derivatives (zz, xx, by double backward)
        against central differences of the first ones (points kept 0.2 away from cell faces, where
        the trilinear blend's derivative jumps): relative error < 1e-6;
     3. d(sum W . residual)/d(weights) -- the PDE loss path, backward through the double-backward
        graph -- against central differences: relative error < 1e-5;
     3b. with residual (ImNet corrects trilinear interpolation of the input): a fresh model decodes
        exactly sgnn_interp_trilinear of the input at the points (|d| < 1e-14: the last layer starts
        at zero and the corners' input values are blended with the same weights), and after a
        random last layer the weight gradients of the output and of the residual pass 1. and 3.
     3c. the gradient loss terms with targets = the model's own normalised derivatives + offsets
        (u, w: 0.5, -0.25, 0.125, -0.75; b: 0.375, -0.5): the l1 misfit is the velocity offsets' mean
        |.| 0.40625, the energy mismatches |mean d^2 - mean (d + off)^2| of the velocity and of
        the buoyancy gradients and the heat-flux mismatch |mean w b - mean w* b*| / (std_w std_b)
        (field targets offset by one std) their closed forms, to 1e-12, whatever the physical
        scales and normalisation (a wrong channel, axis or unit conversion moves them at O(1)); each
        term's weight gradient passes 1.'s check;
   test_mffn pde
     4. Taylor-Green vortex (u = sin kx cos kz F, w = -cos kx sin kz F, F = exp(-2 nu k^2 t),
        p = (cos 2kx + cos 2kz) F^2 / 4 + c z, b = c: an exact solution of the Boussinesq equations)
        fed with its exact derivatives to the residual: |r| < 1e-14; with F decaying 1.5 x too fast
        the momentum residuals must equal their analytic values -nu k^2 u and -nu k^2 w to 1e-14;
     5. an exact polynomial solution (u = A z (1 - z) Poiseuille flow with its pressure gradient
        -2 nu A, b = 1/2 - z + e (z^2 + 2 kappa t) diffusing, hydrostatic pressure), written as a
        function of the query coordinates with distinct scales in t, z, x and a normalisation
        (mean, std) per channel, through SgMFFNDerivatives (double backward): |r| < 1e-11 of the
        largest term; with the pressure gradient 10% too large the x-momentum residual must be
        -0.2 nu A to 1e-11 -- a slip in any coordinate scaling or normalisation breaks one of them.
   test_mffn io DIR
     6. a model (with residual) saved (SgMFFNSave) and loaded back has the same weights bit for bit and decodes the
        same output bit for bit; the surrogate type's SgSurrogateLoad + SgSurrogateSave keep them too.
   test_mffn data DIR
     7. a field_snapshots dataset (2 members x 6 snapshots, 8 x 12) whose channels are distinct linear
        functions of (t, z, x): the per-channel mean and standard deviation equal the closed-form
        ones (1e-12), and for every crop trilinear interpolation of the low-res input at the query
        points reproduces the high-res targets (1e-12; exact for linear data -- a slip in an axis,
        an offset or a factor breaks it), the gradient targets (u, w, b) equal the slopes x factor / std
        (1e-12: central and one-sided differences are exact on linear data), and SgMFFNEvaluate's
        trilinear NMAE is ~0 (< 1e-12) while a member run shorter than the crop is refused; crops
        read from the files equal those in memory bit for bit, gradient targets included.
   test_mffn compare A.h5 B.h5 [TOL | --changed | --other-architecture]
        for tests/regression/mffn/train.sh and train_grid.sh: prints one line ("identical", "differ R"
        with R the largest weight difference relative to the largest weight, or "different
        architectures") and decides by its exit status, so no script has to read a number back:
          TOL (default 0: bit for bit)  exit 0 only for the same architecture and R <= TOL;
          --changed                     exit 0 only for the same architecture and weights not identical;
          --other-architecture          exit 0 only when the architectures differ.
        Any other outcome (a NaN R, a file that does not load) exits non-zero. */
#include <math.h>
#include <string.h>
#include "sgmffn.h"
#include "sgtrainer.h"
#include "sgsurrogate.h"
#include "sgmffndata.h"
#include "sgdataset.h"

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_MFFN(SgSurrogate);

#include "../../lib/sgtestcheck.h"

#define NP 5
typedef struct {
  SgMFFN        m;
  SgnnTensor    x;
  double        pts[NP * 3], wout[NP * 4];
  double        tgt[NP * 4], gtgt[NP * SG_MFFN_NGRAD]; /* mode 2: field and gradient targets */
  PetscReal     gw[SG_MFFN_NGW];           /* mode 2: the weights beyond the paper's (velocity-gradient l1, velocity energy, buoyancy energy, heat flux, vorticity energy) */
  SgMFFNPhysics ph;
} Setup;

static PetscErrorCode SetupCreate(Setup *s, PetscBool residual, PetscBool stream)
{
  SgMFFNConfig c;
  SgnnBackend *be;
  SgnnRng      r;
  int          xs[5] = {1, 4, 2, 4, 8};
  double       xv[4 * 2 * 4 * 8];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof *s)); /* fields a test does not set (ph.length: the box, 0 = not recorded) must not be stack garbage: a save writes what is set */
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
  c.stream = stream;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &s->m));
  PetscCall(SgMFFNInitWeights(s->m, 5));
  sgnn_rng_init(&r, 99);
  for (size_t i = 0; i < sizeof xv / sizeof *xv; i++) xv[i] = sgnn_rng_normal(&r);
  SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 5, xs, xv, &s->x));
  for (int p = 0; p < NP; p++) { /* inside cells, 0.2 from every face */
    int dims[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) s->pts[3 * p + k] = floor(sgnn_rng_uniform(&r) * (dims[k] - 1)) + 0.2 + 0.6 * sgnn_rng_uniform(&r);
  }
  for (int i = 0; i < NP * 4; i++) s->wout[i] = sgnn_rng_normal(&r);
  s->ph.nu = 0.03;
  s->ph.kappa = 0.02; /* large enough that the diffusion terms matter in test 3 */
  for (int k = 0; k < 3; k++) s->ph.scale[k] = 0.5 + 0.25 * k;
  for (int c = 0; c < 4; c++) {
    s->ph.mean[c] = 0.1 * c;
    s->ph.std[c] = 1 + 0.5 * c;
  }
  PetscCall(SgMFFNSetPhysics(s->m, &s->ph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mode 0: L = sum W . out; mode 1: L = sum W . residual; mode 2: the training loss with the
   gradient terms alone (SgMFFNCropLossPart, gamma 0, weights gw, targets tgt and gtgt) */
static PetscErrorCode Loss(Setup *s, int mode, const double *pts, SgnnTensor *L, SgnnTensor *ptsT)
{
  SgnnTensor lat, out, W, prod, res = NULL;
  int        ps[2] = {NP, 3}, ws[2] = {NP, 4};

  PetscFunctionBegin;
  if (mode == 2) {
    PetscReal reg, pde, gt[SG_MFFN_NGW];
    *ptsT = NULL;
    PetscCall(SgMFFNCropLossPart(s->m, &s->ph, NULL, s->x, NP, NP, pts, s->tgt, 0, NULL, s->gtgt, s->gw, L, &reg, &pde, gt));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  SgCallNN(sgnn_tensor_from_f64(s->m->be, SGNN_F64, 2, ps, pts, ptsT));
  SgCallNN(sgnn_tensor_set_requires_grad(*ptsT, 1));
  PetscCall(SgMFFNEncode(s->m, s->x, &lat));
  PetscCall(SgMFFNDecode(s->m, lat, *ptsT, &out));
  SgCallNN(sgnn_tensor_from_f64(s->m->be, SGNN_F64, 2, ws, s->wout, &W));
  if (mode == 1) {
    SgMFFNJet J;
    PetscCall(SgMFFNDerivatives(&s->ph, out, *ptsT, &J));
    PetscCall(SgMFFNResidual(&s->ph, &J, &res));
    SgMFFNJetFree(&J);
  }
  SgCallNN(sgnn_mul(mode ? res : out, W, &prod));
  SgCallNN(sgnn_sum(prod, 0, NULL, 0, L));
  SgnnTensor *fr[] = {&lat, &out, &W, &prod, &res};
  for (size_t q = 0; q < sizeof fr / sizeof *fr; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LossValue(Setup *s, int mode, const double *pts, double *v)
{
  SgnnTensor L, p;

  PetscFunctionBegin;
  PetscCall(Loss(s, mode, pts, &L, &p));
  SgCallNN(sgnn_tensor_item(L, v));
  sgnn_tensor_free(&L);
  sgnn_tensor_free(&p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* backward vs central differences at 48 slab entries; returns the max relative error */
static PetscErrorCode CheckWeightGradient(Setup *s, int mode, double *maxrel)
{
  long       n;
  double    *v, *g, gmax = 0;
  SgnnTensor L, p;
  SgnnRng    r;

  PetscFunctionBegin;
  SgCallNN(sgnn_params_count(s->m->P, &n));
  PetscCall(PetscMalloc2(n, &v, n, &g));
  SgCallNN(sgnn_params_zero_grad(s->m->P));
  PetscCall(Loss(s, mode, s->pts, &L, &p));
  SgCallNN(sgnn_backward(L));
  sgnn_tensor_free(&L);
  sgnn_tensor_free(&p);
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_grads(s->m->P), g));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(s->m->P), v));
  for (long i = 0; i < n; i++) gmax = PetscMax(gmax, fabs(g[i]));
  *maxrel = 0;
  sgnn_rng_init(&r, 3);
  int np = sgnn_params_num(s->m->P);
  for (int q = 0; q < 48; q++) {
    int    t   = q % np; /* every tensor at least once, a random entry of it */
    long   off = sgnn_params_offset(s->m->P, t), len = sgnn_tensor_numel(sgnn_params_get(s->m->P, t));
    long   i   = off + (long)(sgnn_rng_uniform(&r) * len);
    double h = 1e-6, lp, lm, v0 = v[i], fd;
    v[i] = v0 + h;
    SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(s->m->P), v));
    PetscCall(LossValue(s, mode, s->pts, &lp));
    v[i] = v0 - h;
    SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(s->m->P), v));
    PetscCall(LossValue(s, mode, s->pts, &lm));
    v[i] = v0;
    fd      = (lp - lm) / (2 * h);
    *maxrel = PetscMax(*maxrel, fabs(fd - g[i]) / PetscMax(fabs(fd), 1e-3 * gmax));
  }
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(s->m->P), v));
  PetscCall(PetscFree2(v, g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the decoded output [NP, 4] at pts */
static PetscErrorCode Decoded(Setup *s, const double *pts, double *o)
{
  SgnnTensor lat, out, p;
  int        ps[2] = {NP, 3};

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_f64(s->m->be, SGNN_F64, 2, ps, pts, &p));
  PetscCall(SgMFFNEncode(s->m, s->x, &lat));
  PetscCall(SgMFFNDecode(s->m, lat, p, &out));
  SgCallNN(sgnn_tensor_to_f64(out, o));
  sgnn_tensor_free(&lat);
  sgnn_tensor_free(&out);
  sgnn_tensor_free(&p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the unit-scale jet at pts: d1[c][k][p], d2[c][k][p] (k = zz, xx) */
static PetscErrorCode Jet(Setup *s, const double *pts, double d1[4][3][NP], double d2[4][2][NP])
{
  SgnnTensor    lat, out, p;
  SgMFFNJet     J;
  SgMFFNPhysics unit = {0};
  int           ps[2] = {NP, 3};

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) unit.scale[k] = 1;
  for (int c = 0; c < 4; c++) unit.std[c] = 1;
  SgCallNN(sgnn_tensor_from_f64(s->m->be, SGNN_F64, 2, ps, pts, &p));
  SgCallNN(sgnn_tensor_set_requires_grad(p, 1));
  PetscCall(SgMFFNEncode(s->m, s->x, &lat));
  PetscCall(SgMFFNDecode(s->m, lat, p, &out));
  PetscCall(SgMFFNDerivatives(&unit, out, p, &J));
  for (int c = 0; c < 4; c++) {
    for (int k = 0; k < 3; k++) SgCallNN(sgnn_tensor_to_f64(J.d1[c][k], d1[c][k]));
    for (int k = 0; k < 2; k++)
      if (c) SgCallNN(sgnn_tensor_to_f64(J.d2[c][k], d2[c][k]));
  }
  SgMFFNJetFree(&J);
  sgnn_tensor_free(&lat);
  sgnn_tensor_free(&out);
  sgnn_tensor_free(&p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* first (t, z, x) and second (zz, xx) query-coordinate derivatives of the unit jet against central
   differences of the decoded output and of the first derivatives; errors relative to the largest */
static PetscErrorCode CheckJet(Setup *s, double *e2a, double *e2b)
{
  double d1[4][3][NP], d2[4][2][NP], d1p[4][3][NP], d1m[4][3][NP], d2x[4][2][NP], op[NP * 4], om[NP * 4], pp[NP * 3], s1 = 0, s2 = 0;

  PetscFunctionBegin;
  *e2a = *e2b = 0;
  PetscCall(Jet(s, s->pts, d1, d2));
  for (int c = 0; c < 4; c++)
    for (int k = 0; k < 3; k++)
      for (int p = 0; p < NP; p++) s1 = PetscMax(s1, fabs(d1[c][k][p]));
  for (int c = 1; c < 4; c++)
    for (int k = 0; k < 2; k++)
      for (int p = 0; p < NP; p++) s2 = PetscMax(s2, fabs(d2[c][k][p]));
  for (int k = 0; k < 3; k++) {
    double h = 1e-5;
    PetscCall(PetscArraycpy(pp, s->pts, NP * 3));
    for (int p = 0; p < NP; p++) pp[3 * p + k] = s->pts[3 * p + k] + h;
    PetscCall(Decoded(s, pp, op));
    if (k) PetscCall(Jet(s, pp, d1p, d2x));
    for (int p = 0; p < NP; p++) pp[3 * p + k] = s->pts[3 * p + k] - h;
    PetscCall(Decoded(s, pp, om));
    if (k) PetscCall(Jet(s, pp, d1m, d2x));
    for (int c = 0; c < 4; c++)
      for (int p = 0; p < NP; p++) {
        *e2a = PetscMax(*e2a, fabs((op[4 * p + c] - om[4 * p + c]) / (2 * h) - d1[c][k][p]) / s1);
        if (k && c) *e2b = PetscMax(*e2b, fabs((d1p[c][k][p] - d1m[c][k][p]) / (2 * h) - d2[c][k - 1][p]) / s2);
      }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestGrad(void)
{
  Setup  s;
  double e1, e3, e2a, e2b;
  double d1[4][3][NP], d2[4][2][NP];
  long   n;

  PetscFunctionBegin;
  PetscCall(SetupCreate(&s, PETSC_FALSE, PETSC_FALSE));
  SgCallNN(sgnn_params_count(s.m->P, &n));
  PetscCall(CheckWeightGradient(&s, 0, &e1));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "1. %ld weights; d(W.out)/d(weights), backward vs central differences at 48 entries: max relative error %.2e\n", n, e1));
  CHECK(e1 < 1e-5, "weight gradient of the output: relative error %g", e1);
  s.m->cfg.batchnorm = PETSC_FALSE;
  { /* zero biases and a dead ReLU channel put a pre-activation exactly on the kink, where central
       differences average the two slopes: move every vector parameter off zero */
    SgnnRng r;
    sgnn_rng_init(&r, 17);
    for (int i = 0; i < sgnn_params_num(s.m->P); i++)
      if (sgnn_tensor_ndim(sgnn_params_get(s.m->P, i)) == 1) SgCallNN(sgnn_init_uniform(sgnn_params_get(s.m->P, i), 0.05, 0.15, &r));
  }
  PetscCall(CheckWeightGradient(&s, 0, &e1));
  s.m->cfg.batchnorm = PETSC_TRUE;
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "   the same with batchnorm off (BN's scale and shift only): %.2e\n", e1));
  CHECK(e1 < 1e-5, "weight gradient with batchnorm off: relative error %g", e1);
  /* 2. coordinate derivatives */
  PetscCall(CheckJet(&s, &e2a, &e2b));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "2. query-coordinate derivatives vs central differences: first (t, z, x) %.2e, second (zz, xx, double backward) %.2e (relative to the largest)\n", e2a, e2b));
  CHECK(e2a < 1e-6 && e2b < 1e-6, "coordinate derivatives: first %g, second %g", e2a, e2b);
  PetscCall(CheckWeightGradient(&s, 1, &e3));
  { /* the paper's configuration: a 4 x 16 x 16 crop reaches a 1 x 1 x 1 grid at the deepest level */
    SgMFFNConfig c;
    SgMFFN       mp;
    SgnnTensor   xp, lat;
    int          xs[5] = {1, 4, 4, 16, 16};
    long         npw;
    PetscCall(SgMFFNConfigDefault(&c));
    PetscCall(SgMFFNCreate(&c, s.m->be, SGNN_F64, &mp));
    PetscCall(SgMFFNInitWeights(mp, 2));
    SgCallNN(sgnn_params_count(mp->P, &npw));
    SgCallNN(sgnn_tensor_full(s.m->be, SGNN_F64, 5, xs, 0.5, &xp));
    PetscCall(SgMFFNEncode(mp, xp, &lat));
    const int *ls = sgnn_tensor_shape(lat);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "   the paper's configuration: %ld weights; a 4 x 16 x 16 crop encodes to [%d, %d, %d, %d, %d]\n", npw, ls[0], ls[1], ls[2], ls[3], ls[4]));
    CHECK(ls[1] == 32 && ls[2] == 4 && ls[3] == 16 && ls[4] == 16, "the paper's configuration gives a wrong latent grid");
    sgnn_tensor_free(&xp);
    sgnn_tensor_free(&lat);
    PetscCall(SgMFFNDestroy(&mp));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "3. d(W.residual)/d(weights) through the double-backward graph vs central differences: max relative error %.2e\n", e3));
  CHECK(e3 < 1e-5, "weight gradient of the PDE residual: relative error %g", e3);
  { /* 3c. the gradient terms: targets = the model's own normalised derivatives (the unit jet d1,
       checked in 2.) + known offsets, so the l1 misfit is exactly the velocity offsets' mean |.| and
       the energy mismatches |mean d^2 - mean (d + off)^2| (velocity; buoyancy) are known, whatever
       ph's scales and normalisation -- a wrong channel, axis or unit conversion in the loss changes
       them at O(1); the enstrophy mismatch |mean om^2 - mean om*^2|, om = (u_z - w_x) h / (2 sqrt(std_u
       std_w)) in physical units, likewise; then the weight gradient of each term against central
       differences (the offsets keep every L1 term 0.1 or more from its kink, and the energy
       mismatches away from zero) */
    const double off[6] = {0.5, -0.25, 0.125, -0.75, 0.375, -0.5}; /* u_z, u_x, w_z, w_x, b_z, b_x */
    const int    ch[3]  = {2, 3, 1};
    const double *sd = s.ph.std, *sk = s.ph.scale, so = PetscSqrtReal(sk[1] * sk[2]) / (2 * PetscSqrtReal(sd[2] * sd[3]));
    double       o[NP * 4], e4[SG_MFFN_NGW], em[2] = {0, 0}, fl = 0, ens = 0, ensg, eng;
    PetscReal    reg, pde, gt[SG_MFFN_NGW];
    SgnnTensor   L;
    PetscCall(Jet(&s, s.pts, d1, d2));
    PetscCall(Decoded(&s, s.pts, o));
    for (int p = 0; p < NP; p++)
      for (int c = 0; c < 3; c++)
        for (int k = 1; k <= 2; k++) {
          double g = d1[ch[c]][k][p], t = g + off[2 * c + k - 1];
          s.gtgt[SG_MFFN_NGRAD * p + 2 * c + k - 1] = t;
          em[c / 2] += (g * g - t * t) / ((c < 2 ? 4.0 : 2.0) * NP);
        }
    for (int p = 0; p < NP; p++) { /* physical u_z - w_x of the model's and of the targets' normalised gradients */
      const double *t = &s.gtgt[SG_MFFN_NGRAD * p];
      double        om = so * (d1[2][1][p] * sd[2] / sk[1] - d1[3][2][p] * sd[3] / sk[2]), omt = so * (t[0] * sd[2] / sk[1] - t[3] * sd[3] / sk[2]);
      ens += (om * om - omt * omt) / NP;
    }
    for (int i = 0; i < NP * 4; i++) s.tgt[i] = o[i] + (i % 2 ? 1 : -1);
    for (int p = 0; p < NP; p++) { /* the heat-flux mismatch: physical w b decoded against the targets' */
      const double *m = s.ph.mean;
      fl += ((m[3] + sd[3] * o[4 * p + 3]) * (m[1] + sd[1] * o[4 * p + 1]) - (m[3] + sd[3] * s.tgt[4 * p + 3]) * (m[1] + sd[1] * s.tgt[4 * p + 1])) / (NP * sd[1] * sd[3]);
    }
    for (int t = 0; t < SG_MFFN_NGW; t++) s.gw[t] = 1;
    PetscCall(SgMFFNCropLossPart(s.m, &s.ph, NULL, s.x, NP, NP, s.pts, s.tgt, 0, NULL, s.gtgt, s.gw, &L, &reg, &pde, gt));
    sgnn_tensor_free(&L);
    for (int t = 0; t < SG_MFFN_NGW; t++) {
      for (int k = 0; k < SG_MFFN_NGW; k++) s.gw[k] = k == t;
      PetscCall(CheckWeightGradient(&s, 2, &e4[t]));
    }
    CHECK(fabs(gt[4] - fabs(ens)) < 1e-12 * (1 + fabs(ens)) && fabs(ens) > 0.01, "enstrophy term %g (expected %g, away from 0)", (double)gt[4], fabs(ens));
    { /* the targets differ from the model by a gradient field (phys u_z, w_x offset by the same
         phi_xz; u_x, w_z by anything): the enstrophy term is 0 to round-off, the gradient energy's not */
      const double a = 0.7;
      for (int p = 0; p < NP; p++) {
        double *t = &s.gtgt[SG_MFFN_NGRAD * p];
        t[0] = d1[2][1][p] + a * sk[1] / sd[2];
        t[1] = d1[2][2][p] + 0.3;
        t[2] = d1[3][1][p] - 0.4;
        t[3] = d1[3][2][p] + a * sk[2] / sd[3];
      }
      PetscReal gtg[SG_MFFN_NGW], rg, pg;
      for (int t = 0; t < SG_MFFN_NGW; t++) s.gw[t] = 1;
      PetscCall(SgMFFNCropLossPart(s.m, &s.ph, NULL, s.x, NP, NP, s.pts, s.tgt, 0, NULL, s.gtgt, s.gw, &L, &rg, &pg, gtg));
      sgnn_tensor_free(&L);
      ensg = gtg[4];
      eng = gtg[1];
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "3c. terms beyond the paper's: l1 misfit %.15f (expected 0.40625), velocity energy mismatch %.15f (expected %.15f), buoyancy %.15f (expected %.15f), heat flux %.15f (expected %.15f), regression %.15f (expected 1); weight gradients vs central differences: l1 %.2e, energy %.2e, buoyancy energy %.2e, heat flux %.2e, enstrophy %.2e (max relative); enstrophy mismatch %.15f (expected %.15f), against targets off by a gradient field %.1e (velocity energy %.3f)\n", (double)gt[0], (double)gt[1], fabs(em[0]), (double)gt[2], fabs(em[1]), (double)gt[3], fabs(fl), (double)reg, e4[0], e4[1], e4[2], e4[3], e4[4], (double)gt[4], fabs(ens), ensg, eng));
    CHECK(fabs(gt[3] - fabs(fl)) < 1e-12 * (1 + fabs(fl)) && fabs(fl) > 0.1, "heat-flux term %g (expected %g, away from 0)", (double)gt[3], fabs(fl));
    CHECK(fabs(gt[0] - 0.40625) < 1e-12 && fabs(gt[1] - fabs(em[0])) < 1e-12 * (1 + fabs(em[0])) && fabs(gt[2] - fabs(em[1])) < 1e-12 * (1 + fabs(em[1])) && fabs(reg - 1) < 1e-12 && pde == 0, "gradient terms: l1 %g, energy %g (expected %g), buoyancy energy %g (expected %g), regression %g, pde %g", (double)gt[0], (double)gt[1], fabs(em[0]), (double)gt[2], fabs(em[1]), (double)reg, (double)pde);
    CHECK(e4[0] < 1e-5 && e4[1] < 1e-5 && e4[2] < 1e-5 && e4[3] < 1e-5 && e4[4] < 1e-5, "weight gradients of the terms: relative errors %g, %g, %g, %g, %g", e4[0], e4[1], e4[2], e4[3], e4[4]);
    CHECK(ensg < 1e-12 && eng > 0.01, "targets off by a gradient field: enstrophy mismatch %g (expected 0: a projection keeps the vorticity), velocity energy %g (expected away from 0)", ensg, eng);
  }
  sgnn_tensor_free(&s.x);
  PetscCall(SgMFFNDestroy(&s.m));
  { /* 3b. residual: trilinear interpolation at the start, then the gradients */
    double     o[NP * 4], tri[NP * 4], ea = 0, eo, er;
    int        p3[3] = {1, NP, 3};
    SgnnTensor pt;
    SgnnRng    r;
    PetscCall(SetupCreate(&s, PETSC_TRUE, PETSC_FALSE));
    PetscCall(Decoded(&s, s.pts, o));
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 3, p3, s.pts, &pt));
    {
      SgnnTensor ti;
      SgCallNN(sgnn_interp_trilinear(s.x, pt, &ti));
      SgCallNN(sgnn_tensor_to_f64(ti, tri));
      sgnn_tensor_free(&ti);
    }
    for (int i = 0; i < NP * 4; i++) ea = PetscMax(ea, fabs(o[i] - tri[i]));
    sgnn_rng_init(&r, 23);
    SgCallNN(sgnn_init_normal(s.m->mlp_w[s.m->cfg.nmlp], 0, 0.5, &r));
    PetscCall(CheckWeightGradient(&s, 0, &eo));
    PetscCall(CheckWeightGradient(&s, 1, &er));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "3b. residual: a fresh model vs trilinear interpolation of the input: max |difference| %.1e; weight gradients of the output %.2e and of the PDE residual %.2e (relative)\n", ea, eo, er));
    CHECK(ea < 1e-14, "a fresh residual model is not trilinear interpolation: %g", ea);
    CHECK(eo < 1e-5 && er < 1e-5, "residual model: weight gradients off by %g, %g", eo, er);
    sgnn_tensor_free(&pt);
    sgnn_tensor_free(&s.x);
    PetscCall(SgMFFNDestroy(&s.m));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a [n,1] tensor of values */
static PetscErrorCode Col(SgnnBackend *be, int n, const double *v, SgnnTensor *t)
{
  int s[2] = {n, 1};

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 2, s, v, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define NQ 16
/* Taylor-Green with decay rate fac * 2 nu k^2: the jet, exact derivatives */
static PetscErrorCode TaylorGreen(SgnnBackend *be, const SgMFFNPhysics *ph, double fac, SgMFFNJet *J, double uex[NQ], double wex[NQ])
{
  double k = M_PI / 2, c0 = 0.3, v[4][NQ], d1[4][3][NQ], d2[4][2][NQ];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(J, sizeof *J));
  PetscCall(PetscMemzero(d1, sizeof d1));
  PetscCall(PetscMemzero(d2, sizeof d2));
  for (int q = 0; q < NQ; q++) {
    double t = 0.37 * q, z = 0.061 * q, x = 4.0 * q / NQ + 0.1, F = exp(-fac * 2 * ph->nu * k * k * t), Ft = -fac * 2 * ph->nu * k * k * F;
    double sx = sin(k * x), cx = cos(k * x), sz = sin(k * z), cz = cos(k * z);
    v[0][q] = 0.25 * (cos(2 * k * x) + cos(2 * k * z)) * F * F + c0 * z;
    v[1][q] = c0;
    v[2][q] = sx * cz * F;
    v[3][q] = -cx * sz * F;
    d1[0][0][q] = 0.25 * (cos(2 * k * x) + cos(2 * k * z)) * 2 * F * Ft;
    d1[0][1][q] = -0.5 * k * sin(2 * k * z) * F * F + c0;
    d1[0][2][q] = -0.5 * k * sin(2 * k * x) * F * F;
    d1[2][0][q] = sx * cz * Ft;
    d1[2][1][q] = -k * sx * sz * F;
    d1[2][2][q] = k * cx * cz * F;
    d1[3][0][q] = -cx * sz * Ft;
    d1[3][1][q] = -k * cx * cz * F;
    d1[3][2][q] = k * sx * sz * F;
    d2[2][0][q] = d2[2][1][q] = -k * k * v[2][q];
    d2[3][0][q] = d2[3][1][q] = -k * k * v[3][q];
    uex[q] = v[2][q];
    wex[q] = v[3][q];
  }
  for (int c = 0; c < 4; c++) {
    PetscCall(Col(be, NQ, v[c], &J->val[c]));
    for (int kk = 0; kk < 3; kk++) PetscCall(Col(be, NQ, d1[c][kk], &J->d1[c][kk]));
    for (int kk = 0; kk < 2; kk++)
      if (c) PetscCall(Col(be, NQ, d2[c][kk], &J->d2[c][kk]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the polynomial solution as normalised outputs of leaf pts [NQ, 3]; dp_fac scales the pressure gradient */
static PetscErrorCode Polynomial(SgnnBackend *be, const SgMFFNPhysics *ph, const double X0[3], double A, double eps, double dp_fac, SgnnTensor pts, SgnnTensor *out)
{
  SgnnTensor T, Z, X, s, y[4], a, b, c, d;

  PetscFunctionBegin;
  SgCallNN(sgnn_slice(pts, 1, 0, 1, &s));
  SgCallNN(sgnn_affine(s, ph->scale[0], X0[0], &T));
  sgnn_tensor_free(&s);
  SgCallNN(sgnn_slice(pts, 1, 1, 2, &s));
  SgCallNN(sgnn_affine(s, ph->scale[1], X0[1], &Z));
  sgnn_tensor_free(&s);
  SgCallNN(sgnn_slice(pts, 1, 2, 3, &s));
  SgCallNN(sgnn_affine(s, ph->scale[2], X0[2], &X));
  sgnn_tensor_free(&s);
  /* b = 1/2 - z + eps (z^2 + 2 kappa t) */
  SgCallNN(sgnn_mul(Z, Z, &a));
  SgCallNN(sgnn_affine(T, 2 * ph->kappa, 0, &b));
  SgCallNN(sgnn_add(a, b, &c));
  SgCallNN(sgnn_affine(c, eps, 0.5, &d));
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  sgnn_tensor_free(&c);
  SgCallNN(sgnn_sub(d, Z, &y[1]));
  sgnn_tensor_free(&d);
  /* u = A z (1 - z); w = 0 t */
  SgCallNN(sgnn_affine(Z, -1, 1, &a));
  SgCallNN(sgnn_mul(Z, a, &b));
  SgCallNN(sgnn_affine(b, A, 0, &y[2]));
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  SgCallNN(sgnn_affine(T, 0, 0, &y[3]));
  /* p = -2 nu A dp_fac x + eps (z^3/3 + 2 kappa t z) + z/2 - z^2/2 */
  SgCallNN(sgnn_mul(Z, Z, &a));
  SgCallNN(sgnn_affine(T, 6 * ph->kappa, 0, &b));
  SgCallNN(sgnn_add(a, b, &c)); /* z^2 + 6 kappa t */
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  SgCallNN(sgnn_mul(c, Z, &a)); /* z^3 + 6 kappa t z */
  sgnn_tensor_free(&c);
  SgCallNN(sgnn_affine(a, eps / 3, 0, &b));
  sgnn_tensor_free(&a);
  SgCallNN(sgnn_mul(Z, Z, &a));
  SgCallNN(sgnn_affine(a, -0.5, 0, &c));
  sgnn_tensor_free(&a);
  SgCallNN(sgnn_affine(Z, 0.5, 0, &a));
  SgCallNN(sgnn_add(b, c, &d));
  sgnn_tensor_free(&b);
  sgnn_tensor_free(&c);
  SgCallNN(sgnn_add(d, a, &b));
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&d);
  SgCallNN(sgnn_affine(X, -2 * ph->nu * A * dp_fac, 0, &a));
  SgCallNN(sgnn_add(b, a, &y[0]));
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  for (int ch = 0; ch < 4; ch++) { /* normalise */
    SgCallNN(sgnn_affine(y[ch], 1 / ph->std[ch], -ph->mean[ch] / ph->std[ch], &a));
    sgnn_tensor_free(&y[ch]);
    y[ch] = a;
  }
  SgCallNN(sgnn_concat(4, y, 1, out));
  for (int ch = 0; ch < 4; ch++) sgnn_tensor_free(&y[ch]);
  sgnn_tensor_free(&T);
  sgnn_tensor_free(&Z);
  sgnn_tensor_free(&X);
  (void)be;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MaxAbsCol(SgnnTensor res, int col, const double *minus, double *m)
{
  double v[NQ * 4];

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_to_f64(res, v));
  *m = 0;
  for (int q = 0; q < NQ; q++) *m = PetscMax(*m, fabs(v[4 * q + col] - (minus ? minus[q] : 0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestPDE(void)
{
  SgnnBackend  *be;
  SgMFFNPhysics ph = {0};
  SgMFFNJet     J;
  SgnnTensor    res;
  double        uex[NQ], wex[NQ], r[4], ru, rw, ref[NQ];

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  ph.nu = 1e-3;
  ph.kappa = 1e-3; /* Ra = 1e6, Pr = 1 */
  PetscCall(TaylorGreen(be, &ph, 1.0, &J, uex, wex));
  PetscCall(SgMFFNResidual(&ph, &J, &res));
  for (int c = 0; c < 4; c++) PetscCall(MaxAbsCol(res, c, NULL, &r[c]));
  sgnn_tensor_free(&res);
  SgMFFNJetFree(&J);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "4. Taylor-Green vortex, exact derivatives: max |residual| b %.1e, x-momentum %.1e, z-momentum %.1e, continuity %.1e\n", r[0], r[1], r[2], r[3]));
  CHECK(r[0] < 1e-14 && r[1] < 1e-14 && r[2] < 1e-14 && r[3] < 1e-14, "Taylor-Green residual not ~0");
  PetscCall(TaylorGreen(be, &ph, 1.5, &J, uex, wex));
  PetscCall(SgMFFNResidual(&ph, &J, &res));
  for (int q = 0; q < NQ; q++) ref[q] = -ph.nu * M_PI * M_PI / 4 * uex[q];
  PetscCall(MaxAbsCol(res, 1, ref, &ru));
  for (int q = 0; q < NQ; q++) ref[q] = -ph.nu * M_PI * M_PI / 4 * wex[q];
  PetscCall(MaxAbsCol(res, 2, ref, &rw));
  PetscCall(MaxAbsCol(res, 1, NULL, &r[1]));
  { /* the loss's weight per equation (-mffn_pde_weights) scales exactly its own column */
    const PetscReal wt[4] = {2, 0.5, 3, 10};
    SgnnTensor      rw4;
    double          a[4 * NQ], b[4 * NQ], off = 0;
    PetscCall(SgMFFNResidualWeighted(&ph, &J, wt, &rw4));
    SgCallNN(sgnn_tensor_to_f64(res, a));
    SgCallNN(sgnn_tensor_to_f64(rw4, b));
    for (int q = 0; q < 4 * NQ; q++) off = PetscMax(off, fabs(b[q] - wt[q % 4] * a[q]));
    sgnn_tensor_free(&rw4);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "   weighted residual (2, 0.5, 3, 10): off weight x residual by %.1e\n", off));
    CHECK(off < 1e-15, "SgMFFNResidualWeighted: column e is not weight[e] x residual (off by %g)", off);
  }
  sgnn_tensor_free(&res);
  SgMFFNJetFree(&J);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "   decay 1.5x too fast: max |x-momentum residual| %.2e; differs from -nu k^2 u by %.1e, z-momentum from -nu k^2 w by %.1e\n", r[1], ru, rw));
  CHECK(r[1] > 1e-4 && ru < 1e-14 && rw < 1e-14, "perturbed Taylor-Green: residual %g, off the analytic value by %g, %g", r[1], ru, rw);
  { /* 5. polynomial solution through the double-backward path */
    double     X0[3] = {3.0, 0.1, 0.7}, A = 0.8, eps = 0.3, pv[NQ * 3], big;
    SgnnTensor pts, out;
    int        ps[2] = {NQ, 3};
    ph.nu = 2e-3;
    ph.kappa = 5e-4; /* distinct, so swapping them is seen */
    ph.scale[0] = 0.5;
    ph.scale[1] = 1.0 / 16;
    ph.scale[2] = 4.0 / 64;
    for (int c = 0; c < 4; c++) {
      ph.mean[c] = 0.05 * (c + 1);
      ph.std[c] = 0.2 + 0.3 * c;
    }
    for (int q = 0; q < NQ; q++) {
      pv[3 * q] = 0.3 * q;
      pv[3 * q + 1] = 0.9 * q;
      pv[3 * q + 2] = 1.7 * q;
    }
    for (int pass = 0; pass < 2; pass++) {
      double fac = pass ? 1.1 : 1.0;
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 2, ps, pv, &pts));
      SgCallNN(sgnn_tensor_set_requires_grad(pts, 1));
      PetscCall(Polynomial(be, &ph, X0, A, eps, fac, pts, &out));
      PetscCall(SgMFFNDerivatives(&ph, out, pts, &J));
      PetscCall(SgMFFNResidual(&ph, &J, &res));
      big = 2 * ph.nu * A + 1; /* the largest terms: viscous 2 nu A, buoyancy and p_z ~ 1 */
      for (int c = 0; c < 4; c++) PetscCall(MaxAbsCol(res, c, NULL, &r[c]));
      if (!pass) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "5. polynomial solution through SgMFFNDerivatives (scales t %g z %g x %g, normalised): max |residual| b %.1e, x-mom %.1e, z-mom %.1e, continuity %.1e\n", ph.scale[0], ph.scale[1], ph.scale[2], r[0], r[1], r[2], r[3]));
        CHECK(r[0] < 1e-11 * big && r[1] < 1e-11 * big && r[2] < 1e-11 * big && r[3] < 1e-11 * big, "polynomial residual not ~0");
      } else {
        for (int q = 0; q < NQ; q++) ref[q] = -0.2 * ph.nu * A;
        PetscCall(MaxAbsCol(res, 1, ref, &ru));
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "   pressure gradient 10%% too large: x-momentum residual %.4e (expected -0.2 nu A = %.4e, off by %.1e); others %.1e %.1e %.1e\n", r[1] ? -r[1] : 0, -0.2 * ph.nu * A, ru, r[0], r[2], r[3]));
        CHECK(ru < 1e-11 * big && r[0] < 1e-11 * big && r[2] < 1e-11 * big, "perturbed polynomial: x-momentum off its analytic value by %g", ru);
      }
      sgnn_tensor_free(&res);
      SgMFFNJetFree(&J);
      sgnn_tensor_free(&out);
      sgnn_tensor_free(&pts);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Slab(SgMFFN m, double **v, long *n)
{
  PetscFunctionBegin;
  SgCallNN(sgnn_params_count(m->P, n));
  PetscCall(PetscMalloc1(*n, v));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), *v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestIO(const char dir[])
{
  Setup         s;
  SgMFFN        m2, m3;
  SgMFFNPhysics ph2, ph3;
  PetscInt      fac[3] = {4, 8, 8}, f2[3], f3[3];
  char          a[PETSC_MAX_PATH_LEN], b[PETSC_MAX_PATH_LEN];
  double       *v1, *v2, *v3, o1[NP * 4], o2[NP * 4];
  long          n1, n2, n3;
  SgSurrogate   sur;

  PetscFunctionBegin;
  PetscCall(SetupCreate(&s, PETSC_TRUE, PETSC_FALSE));
  PetscCall(PetscSNPrintf(a, sizeof a, "%s/io_a.h5", dir));
  PetscCall(PetscSNPrintf(b, sizeof b, "%s/io_b.h5", dir));
  PetscCall(SgMFFNSave(s.m, &s.ph, fac, a));
  PetscCall(SgMFFNLoad(a, s.m->be, &m2, &ph2, f2));
  PetscCall(Slab(s.m, &v1, &n1));
  PetscCall(Slab(m2, &v2, &n2));
  PetscCall(Decoded(&s, s.pts, o1));
  {
    SgMFFN keep = s.m;
    s.m = m2;
    PetscCall(Decoded(&s, s.pts, o2));
    s.m = keep;
  }
  PetscBool same = (PetscBool)(n1 == n2 && !memcmp(v1, v2, n1 * sizeof *v1) && !memcmp(o1, o2, sizeof o1) && !memcmp(&ph2, &s.ph, sizeof ph2) && f2[0] == 4 && f2[1] == 8 && f2[2] == 8);
  /* through the surrogate type */
  PetscCall(SgSurrogateRegister("mffn", SgSurrogateCreate_MFFN));
  PetscCall(SgSurrogateCreate(PETSC_COMM_SELF, &sur));
  PetscCall(SgSurrogateSetType(sur, "mffn"));
  PetscCall(SgSurrogateLoad(sur, a));
  PetscCall(SgSurrogateSave(sur, b));
  PetscCall(SgSurrogateDestroy(&sur));
  PetscCall(SgMFFNLoad(b, s.m->be, &m3, &ph3, f3));
  PetscCall(Slab(m3, &v3, &n3));
  PetscBool same2 = (PetscBool)(n3 == n1 && !memcmp(v1, v3, n1 * sizeof *v1) && !memcmp(&ph3, &s.ph, sizeof ph3));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "6. model file round trip (%ld weights): weights, physics and decoded output %s; through SgSurrogateLoad/Save: %s\n", n1, same ? "bit-identical" : "DIFFERENT", same2 ? "bit-identical" : "DIFFERENT"));
  CHECK(same && same2, "the model file does not round-trip");
  PetscCall(PetscFree(v1));
  PetscCall(PetscFree(v2));
  PetscCall(PetscFree(v3));
  PetscCall(SgMFFNDestroy(&m2));
  PetscCall(SgMFFNDestroy(&m3));
  sgnn_tensor_free(&s.x);
  PetscCall(SgMFFNDestroy(&s.m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum { CMP_WITHIN, CMP_CHANGED, CMP_OTHER_ARCH } CompareWant;

/* sets *ok to whether A and B stand in the relation `want` (tolerance tol for CMP_WITHIN) */
static PetscErrorCode Compare(const char a[], const char b[], CompareWant want, double tol, PetscBool *ok)
{
  SgnnBackend  *be;
  SgMFFN        ma, mb;
  SgMFFNPhysics pa, pb;
  PetscInt      fa[3], fb[3];
  double       *va, *vb, dmax = 0, vmax = 0;
  long          na, nb;

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNLoad(a, be, &ma, &pa, fa));
  PetscCall(SgMFFNLoad(b, be, &mb, &pb, fb));
  PetscCall(Slab(ma, &va, &na));
  PetscCall(Slab(mb, &vb, &nb));
  *ok = PETSC_FALSE;
  if (na != nb || ma->cfg.stream != mb->cfg.stream) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "different architectures (%ld vs %ld weights, stream function %d vs %d)\n", na, nb, (int)ma->cfg.stream, (int)mb->cfg.stream));
    *ok = (PetscBool)(want == CMP_OTHER_ARCH);
  } else if (!memcmp(va, vb, na * sizeof *va)) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "identical (%ld weights)\n", na));
    *ok = (PetscBool)(want == CMP_WITHIN);
  } else {
    for (long i = 0; i < na; i++) {
      dmax = PetscMax(dmax, fabs(va[i] - vb[i]));
      vmax = PetscMax(vmax, fabs(va[i]));
    }
    double r = dmax / vmax; /* NaN when a weight is NaN or all of A's are 0: then no relation holds */
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "differ %.3e (%ld weights)\n", r, na));
    if (want == CMP_WITHIN) *ok = (PetscBool)(r <= tol);
    else if (want == CMP_CHANGED) *ok = (PetscBool)(r > 0);
  }
  PetscCall(PetscFree(va));
  PetscCall(PetscFree(vb));
  PetscCall(SgMFFNDestroy(&ma));
  PetscCall(SgMFFNDestroy(&mb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* channel c at (time t, z index, x index): linear */
static double Lin(int c, double t, double z, double x) { return 0.1 * c - 0.3 + (0.5 + c) * t + (0.2 - 0.07 * c) * z + 0.03 * (c + 1) * x; }

/* nm member runs of ns snapshots 0.25 apart on nz x nx: f[c] = fn(c, member, t, z, x) */
static void FillSnapshots(int nm, int ns, int nz, int nx, double (*fn)(int, int, double, int, int), double *const f[4], double *tm, int64_t *mem)
{
  for (int m = 0; m < nm; m++)
    for (int s = 0; s < ns; s++) {
      int i = m * ns + s;
      tm[i] = 0.25 * s;
      mem[i] = m;
      for (int z = 0; z < nz; z++)
        for (int x = 0; x < nx; x++)
          for (int c = 0; c < 4; c++) f[c][((long)i * nz + z) * nx + x] = fn(c, m, tm[i], z, x);
    }
}
static double LinMember(int c, int m, double t, int z, int x) { return Lin(c, t, z, x) + 3.0 * m; } /* members differ */

/* a field_snapshots file of n samples: p, b, u, w on shape[0] x shape[1], time, member */
static PetscErrorCode WriteSnapshots(const char path[], const char what[], PetscInt n, const PetscInt shape[2], double *const f[4], const double *tm, const int64_t *mem)
{
  const char *nm[4] = {"p", "b", "u", "w"};
  SgDataset   ds;

  PetscFunctionBegin;
  PetscCall(SgDatasetCreate(PETSC_COMM_SELF, path, "field_snapshots", PETSC_TRUE, &ds));
  PetscCall(SgDatasetSetProvenance(ds, NULL, what));
  for (int c = 0; c < 4; c++) PetscCall(SgDatasetDefineField(ds, nm[c], SG_DTYPE_F64, 2, shape, "1", 1));
  PetscCall(SgDatasetDefineField(ds, "time", SG_DTYPE_F64, 0, NULL, "1", 16));
  PetscCall(SgDatasetDefineField(ds, "member", SG_DTYPE_I64, 0, NULL, "1", 16));
  PetscCall(SgDatasetAppendBegin(ds, n));
  for (int c = 0; c < 4; c++) PetscCall(SgDatasetAppendField(ds, nm[c], SG_DTYPE_F64, f[c]));
  PetscCall(SgDatasetAppendField(ds, "time", SG_DTYPE_F64, tm));
  PetscCall(SgDatasetAppendField(ds, "member", SG_DTYPE_I64, mem));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestData(const char dir[])
{
  enum { NM = 2, NS = 6, NZ = 8, NX = 12 };
  char        path[PETSC_MAX_PATH_LEN];
  PetscInt    shape[2] = {NZ, NX}, crop[3] = {4, 4, 8}, factor[3] = {2, 2, 4}, P = 40;
  double     *f[4], tm[NM * NS], low[4 * 2 * 2 * 2], pts[3 * 40], tgt[4 * 40], err = 0, emean = 0, gerr = 0;
  int64_t     mem[NM * NS];
  SgMFFNData  D;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/lin.h5", dir));
  for (int c = 0; c < 4; c++) PetscCall(PetscMalloc1(NM * NS * NZ * NX, &f[c]));
  FillSnapshots(NM, NS, NZ, NX, LinMember, f, tm, mem);
  for (int bad = 0; bad < 2; bad++) { /* lin.h5, and linbad.h5 with a NaN in u at sample 7 */
    char bpath[PETSC_MAX_PATH_LEN];
    PetscCall(PetscSNPrintf(bpath, sizeof bpath, "%s/linbad.h5", dir));
    if (bad) f[2][(7 * NZ + 3) * NX + 5] = NAN;
    PetscCall(WriteSnapshots(bad ? bpath : path, "test_mffn linear fields", NM * NS, shape, f, tm, mem));
    if (bad) f[2][(7 * NZ + 3) * NX + 5] = Lin(2, tm[7], 3, 5) + 3.0;
  }
  { /* the data read crop by crop from the files (SG_MFFN_READ_CROPS) is the data held in memory: the
       same statistics and crops to the bit, over two files (lin.h5 twice: the runs restart at the
       second file's first sample) */
    const char *files[2] = {path, path};
    SgMFFNData  Dm, Dc;
    double      low2[4 * 2 * 2 * 2], pts2[3 * 40], tgt2[4 * 40], g[SG_MFFN_NGRAD * 40], g2[SG_MFFN_NGRAD * 40];
    PetscInt    ndiff = 0, ncrops = 0, pown, pown2;
    PetscCall(SgMFFNDataLoadPart(PETSC_COMM_SELF, 2, files, crop[0], NULL, crop, factor, SG_MFFN_READ_MEMORY, &Dm));
    PetscCall(SgMFFNDataLoadPart(PETSC_COMM_SELF, 2, files, crop[0], NULL, crop, factor, SG_MFFN_READ_CROPS, &Dc));
    CHECK(!Dm.crops && Dc.crops && !Dc.f[0], "read modes: memory %d, crops %d", (int)Dm.crops, (int)Dc.crops);
    for (int c = 0; c < 4; c++) ndiff += (Dm.mean[c] != Dc.mean[c]) + (Dm.std[c] != Dc.std[c]);
    for (int64_t id = 0; id < 2 * NM * NS; id++)
      for (PetscInt step = 0; step < 3; step++, ncrops++) {
        PetscCall(SgMFFNDataCropPart(&Dm, crop, factor, P, 5, step, id, NULL, low, &pown, pts, tgt, g));
        PetscCall(SgMFFNDataCropPart(&Dc, crop, factor, P, 5, step, id, NULL, low2, &pown2, pts2, tgt2, g2));
        ndiff += pown != pown2 || memcmp(low, low2, sizeof low) || memcmp(pts, pts2, sizeof pts) || memcmp(tgt, tgt2, sizeof tgt) || memcmp(g, g2, sizeof g);
      }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "7. reading crops from the files: statistics and %" PetscInt_FMT " crops of 2 files (with gradient targets) vs the data in memory: %" PetscInt_FMT " differences (bit for bit)\n", ncrops, ndiff));
    CHECK(ndiff == 0, "crops read from the files differ from the data in memory in %" PetscInt_FMT " places", ndiff);
    PetscCall(SgMFFNDataFree(&Dm));
    PetscCall(SgMFFNDataFree(&Dc));
  }
  for (int mode = SG_MFFN_READ_MEMORY; mode <= SG_MFFN_READ_CROPS; mode++) { /* a NaN is refused either way */
    char           bpath[PETSC_MAX_PATH_LEN];
    const char    *files[1] = {bpath};
    PetscErrorCode e;
    SgMFFNData     Db;
    PetscCall(PetscSNPrintf(bpath, sizeof bpath, "%s/linbad.h5", dir));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    e = SgMFFNDataLoadPart(PETSC_COMM_SELF, 1, files, crop[0], NULL, crop, factor, (SgMFFNRead)mode, &Db);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "   a NaN in u at sample 7, reading %s: error %d (expected %d)\n", SgMFFNReads[mode], (int)e, (int)PETSC_ERR_USER_INPUT));
    CHECK(e == PETSC_ERR_USER_INPUT, "a NaN in the data was accepted (reading %s)", SgMFFNReads[mode]);
    if (!e) PetscCall(SgMFFNDataFree(&Db));
  }
  {
    const char *files[1] = {path};
    PetscCall(SgMFFNDataLoad(PETSC_COMM_SELF, 1, files, crop[0], &D));
  }
  for (int c = 0; c < 4; c++) { /* closed form: the mean of a linear function over a symmetric grid is its centre value */
    double mc = Lin(c, 0.25 * (NS - 1) / 2, (NZ - 1) / 2.0, (NX - 1) / 2.0) + 1.5, v = 0;
    for (long i = 0; i < NM * NS * NZ * NX; i++) v += (f[c][i] - mc) * (f[c][i] - mc);
    emean = PetscMax(emean, PetscMax(fabs(D.mean[c] - mc), fabs(D.std[c] - sqrt(v / (NM * NS * NZ * NX)))));
  }
  for (int64_t id = 0; id < NM * NS; id++)
    for (PetscInt step = 0; step < 3; step++) {
      SgnnBackend *be;
      SgnnTensor   g, p, o;
      int          gs[5] = {1, 4, 2, 2, 2}, ps[3] = {1, (int)P, 3};
      double       ov[4 * 40], gt[SG_MFFN_NGRAD * 40];
      PetscInt     pown;
      PetscCall(SgMFFNDataCropPart(&D, crop, factor, P, 5, step, id, NULL, low, &pown, pts, tgt, gt));
      for (int q = 0; q < P; q++) /* exact for linear data, central or one-sided: slope per index x factor / std */
        for (int c = 0; c < 3; c++)
          for (int k = 1; k <= 2; k++) {
            const int ch = (int[]){2, 3, 1}[c]; /* u, w, b: the targets' order */
            double    slope = k == 1 ? Lin(ch, 0, 1, 0) - Lin(ch, 0, 0, 0) : Lin(ch, 0, 0, 1) - Lin(ch, 0, 0, 0);
            gerr = PetscMax(gerr, fabs(gt[SG_MFFN_NGRAD * q + 2 * c + k - 1] - slope * factor[k] / D.std[ch]));
          }
      SgCallNN(sgnn_backend_get("cpu", &be));
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 5, gs, low, &g));
      SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 3, ps, pts, &p));
      SgCallNN(sgnn_interp_trilinear(g, p, &o));
      SgCallNN(sgnn_tensor_to_f64(o, ov));
      for (int q = 0; q < 4 * P; q++) err = PetscMax(err, fabs(ov[q] - tgt[q]));
      sgnn_tensor_free(&g);
      sgnn_tensor_free(&p);
      sgnn_tensor_free(&o);
    }
  {
    Setup      s;
    SgMFFNEval E;
    double     worst = 0;
    PetscCall(SetupCreate(&s, PETSC_FALSE, PETSC_FALSE)); /* any model: only the trilinear column is checked */
    for (int c = 0; c < 4; c++) {
      s.ph.mean[c] = D.mean[c];
      s.ph.std[c] = D.std[c];
    }
    {
      SgMFFNConfig c  = s.m->cfg;
      SgnnBackend *be = s.m->be;
      c.pool[0][1] = 1;
      c.pool[1][1] = 1;
      c.pool[0][2] = 1;
      c.pool[1][2] = 1; /* a 2 x 2 x 2 input */
      PetscCall(SgMFFNDestroy(&s.m));
      PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &s.m));
      PetscCall(SgMFFNInitWeights(s.m, 1));
    }
    PetscCall(SgMFFNEvaluate(s.m, &s.ph, &D, crop, factor, 4, 32, 9, &E));
    for (int c = 0; c < 4; c++) worst = PetscMax(worst, E.nmae[1][c]);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "7. linear fields: mean/std vs closed form %.1e; trilinear of the low-res crops vs targets %.1e (36 crops x %" PetscInt_FMT " points); gradient targets (u, w, b) vs the slopes %.1e; evaluation's trilinear NMAE %.1e, R2 %.15f\n", emean, err, P, gerr, worst, (double)E.r2[1][0]));
    CHECK(emean < 1e-12 && err < 1e-12 && gerr < 1e-12 && worst < 1e-12, "linear data: statistics %g, crops %g, gradient targets %g, evaluation %g", emean, err, gerr, worst);
    sgnn_tensor_free(&s.x);
    PetscCall(SgMFFNDestroy(&s.m));
  }
  PetscCall(SgMFFNDataFree(&D));
  { /* runs of 6 snapshots, a crop of 8 */
    const char    *files[1] = {path};
    PetscErrorCode e;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    e = SgMFFNDataLoad(PETSC_COMM_SELF, 1, files, 8, &D);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "   a crop of 8 snapshots on runs of 6: error %d (expected %d)\n", (int)e, (int)PETSC_ERR_USER_INPUT));
    CHECK(e == PETSC_ERR_USER_INPUT, "a crop longer than the runs was accepted");
    if (!e) PetscCall(SgMFFNDataFree(&D));
  }
  for (int c = 0; c < 4; c++) PetscCall(PetscFree(f[c]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The correction's gain (calibrate.c) on sinusoidal data that trilinear interpolation does not
   reproduce, with a residual model whose last layer is random (a non-zero correction):
   (a) folding the gains into the last layer makes the model decode trilinear + gain * correction,
       group by group (p, b, u and w), at points of crops it was not fitted on;
   (b) the gains are the least-squares scales: fitted again on the scaled model they are 1;
   (c) a model without residual decoding is refused. */
static double Wave(int c, double t, double z, double x) { return sin(0.9 * t + 0.7 * (c + 1) * z + 0.4 * x) + 0.3 * cos(1.3 * x - 0.5 * c * t); }
static double WaveMember(int c, int m, double t, int z, int x) { return Wave(c, t + m, z, x); }

static PetscErrorCode TestGain(const char dir[])
{
  enum { NM = 2, NS = 8, NZ = 16, NX = 32 };
  char        path[PETSC_MAX_PATH_LEN];
  const char *files[1] = {path};
  PetscInt    shape[2] = {NZ, NX}, crop[3] = {4, 8, 16}, factor[3] = {2, 2, 2}, P = 30;
  double     *f[4], tm[NM * NS], low[4 * 2 * 4 * 8], pts[3 * 30], tgt[4 * 30], o0[4 * 30], o1[4 * 30], ob[4 * 30], efold = 0;
  int64_t     mem[NM * NS];
  PetscReal   g[SG_MFFN_NGAIN], g2[SG_MFFN_NGAIN], eone = 0;
  SgMFFNData  D;
  Setup       s;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/wave.h5", dir));
  for (int c = 0; c < 4; c++) PetscCall(PetscMalloc1(NM * NS * NZ * NX, &f[c]));
  FillSnapshots(NM, NS, NZ, NX, WaveMember, f, tm, mem);
  PetscCall(WriteSnapshots(path, "test_mffn gain: sinusoidal fields", NM * NS, shape, f, tm, mem));
  PetscCall(SgMFFNDataLoad(PETSC_COMM_SELF, 1, files, crop[0], &D));
  PetscCall(SetupCreate(&s, PETSC_TRUE, PETSC_FALSE)); /* input 2 x 4 x 8: the low-res crop */
  {                                                    /* a random correction (a fresh residual model's is zero) */
    SgnnTensor W = s.m->mlp_w[s.m->cfg.nmlp], b = s.m->mlp_b[s.m->cfg.nmlp];
    long       nw = sgnn_tensor_numel(W);
    double     wv[4 * 64], bv[4];
    SgnnRng    r;
    PetscCheck(nw <= 4 * 64, PETSC_COMM_SELF, PETSC_ERR_PLIB, "test: last layer of %ld weights", nw);
    sgnn_rng_init(&r, 17);
    for (long i = 0; i < nw; i++) wv[i] = 0.2 * sgnn_rng_normal(&r);
    for (int i = 0; i < 4; i++) bv[i] = 0.05 * sgnn_rng_normal(&r);
    SgCallNN(sgnn_tensor_set_f64(W, wv));
    SgCallNN(sgnn_tensor_set_f64(b, bv));
  }
  PetscCall(SgMFFNCorrectionGain(s.m, &D, crop, factor, 6, P, 3, g));
  { /* (a): a crop of another seed, before and after the fold */
    int        ls[5] = {1, 4, 2, 4, 8}, ps[2] = {(int)P, 3}, p3[3] = {1, (int)P, 3};
    SgnnTensor x, lat, pt, pt3, y, yb;
    PetscCall(SgMFFNDataCrop(&D, crop, factor, P, 11, -1, 5, low, pts, tgt));
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 5, ls, low, &x));
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 2, ps, pts, &pt));
    SgCallNN(sgnn_reshape(pt, 3, p3, &pt3));
    SgCallNN(sgnn_interp_trilinear(x, pt3, &yb));
    SgCallNN(sgnn_tensor_to_f64(yb, ob));
    for (int pass = 0; pass < 2; pass++) {
      if (pass) PetscCall(SgMFFNScaleCorrection(s.m, g));
      PetscCall(SgMFFNEncode(s.m, x, &lat));
      PetscCall(SgMFFNDecode(s.m, lat, pt, &y));
      SgCallNN(sgnn_tensor_to_f64(y, pass ? o1 : o0));
      sgnn_tensor_free(&lat);
      sgnn_tensor_free(&y);
    }
    for (int j = 0; j < 4 * P; j++) efold = PetscMax(efold, fabs(o1[j] - (ob[j] + g[(int[]){0, 1, 2, 2}[j % 4]] * (o0[j] - ob[j]))));
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&pt);
    sgnn_tensor_free(&pt3);
    sgnn_tensor_free(&yb);
  }
  PetscCall(SgMFFNCorrectionGain(s.m, &D, crop, factor, 6, P, 3, g2)); /* (b) */
  for (int k = 0; k < SG_MFFN_NGAIN; k++) eone = PetscMax(eone, PetscAbsReal(g2[k] - 1));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "8. correction gain on 6 crops x %" PetscInt_FMT " points: p %.4f, b %.4f, u and w %.4f; folded model vs trilinear + gain * correction %.1e; gains refitted on the folded model - 1: %.1e\n", P, (double)g[0], (double)g[1], (double)g[2], efold, (double)eone));
  CHECK(efold < 1e-12 && eone < 1e-12, "correction gain: fold %g, refit %g", efold, (double)eone);
  CHECK(PetscAbsReal(g[0] - 1) > 1e-3 && PetscAbsReal(g[2] - 1) > 1e-3, "correction gain: a random correction fitted gains %g, %g: the test does not exercise the fold", (double)g[0], (double)g[2]);
  {
    PetscErrorCode e;
    Setup          s2;
    PetscCall(SetupCreate(&s2, PETSC_FALSE, PETSC_FALSE));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    e = SgMFFNCorrectionGain(s2.m, &D, crop, factor, 6, P, 3, g2);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "   a model without residual decoding: error %d (expected %d)\n", (int)e, (int)PETSC_ERR_SUP));
    CHECK(e == PETSC_ERR_SUP, "the correction gain of a non-residual model was accepted");
    sgnn_tensor_free(&s2.x);
    PetscCall(SgMFFNDestroy(&s2.m));
  }
  sgnn_tensor_free(&s.x);
  PetscCall(SgMFFNDestroy(&s.m));
  PetscCall(SgMFFNDataFree(&D));
  for (int c = 0; c < 4; c++) PetscCall(PetscFree(f[c]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max |u_x + w_z| (physical units, through SgMFFNDerivatives) and max |u_x| at the setup's points */
static PetscErrorCode Continuity(Setup *s, double *cont, double *ux)
{
  SgnnTensor lat, out, p, res;
  SgMFFNJet  J;
  double     r[NP * 4], uxv[NP];

  PetscFunctionBegin;
  *cont = *ux = 0;
  SgCallNN(sgnn_tensor_from_f64(s->m->be, SGNN_F64, 2, (int[]){NP, 3}, s->pts, &p));
  SgCallNN(sgnn_tensor_set_requires_grad(p, 1));
  PetscCall(SgMFFNEncode(s->m, s->x, &lat));
  PetscCall(SgMFFNDecode(s->m, lat, p, &out));
  PetscCall(SgMFFNDerivatives(&s->ph, out, p, &J));
  PetscCall(SgMFFNResidual(&s->ph, &J, &res));
  SgCallNN(sgnn_tensor_to_f64(res, r));
  SgCallNN(sgnn_tensor_to_f64(J.d1[2][2], uxv));
  for (int q = 0; q < NP; q++) {
    *cont = PetscMax(*cont, fabs(r[4 * q + 3]));
    *ux = PetscMax(*ux, fabs(uxv[q]));
  }
  SgMFFNJetFree(&J);
  sgnn_tensor_free(&lat);
  sgnn_tensor_free(&out);
  sgnn_tensor_free(&p);
  sgnn_tensor_free(&res);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream-function decoder (cfg.stream, -mffn_stream_function): u = d psi / dz, w = -d psi / dx */
static PetscErrorCode TestStream(const char dir[])
{
  Setup         s;
  double        e2a, e2b, eo, er, cont = 0, ux = 0, jump = 0, oscale = 0, ext = 0, noglue = 0;
  double        o[NP * 4], o2[NP * 4], pp[NP * 3];
  const double  d = 1e-9;
  SgMFFN        m2;
  SgMFFNPhysics ph2;
  PetscInt      fac[3] = {4, 8, 8}, f2[3];
  char          a[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(SetupCreate(&s, PETSC_FALSE, PETSC_TRUE));
  PetscCall(Continuity(&s, &cont, &ux)); /* 1. */
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "1. stream function: max |u_x + w_z| = %.2e with max |u_x| = %.2e (physical units)\n", cont, ux));
  CHECK(ux > 1e-3 && cont < 1e-12 * ux, "the stream model's velocity is not divergence-free: |u_x + w_z| %g against |u_x| %g", cont, ux);
  /* 2. u and w are now first derivatives of psi: their first and second coordinate derivatives
     (psi's second and third) against central differences */
  PetscCall(CheckJet(&s, &e2a, &e2b));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "2. coordinate derivatives vs central differences: first %.2e, second %.2e (u, w: psi's third)\n", e2a, e2b));
  CHECK(e2a < 1e-6 && e2b < 1e-6, "stream model, coordinate derivatives: first %g, second %g", e2a, e2b);
  /* 3. the velocity is continuous across latent cells (psi is C1: smoothstep weights; with
     trilinear ones u and w jump by O(1) at every face) and into the extrapolation band */
  {
    const double pair[5][3] = {{0.5, 2 - d, 3.37}, {0.5, 1.41, 4 - d}, {0.7, 3 - d, 5.2}, {0.3, 0.6, d}, {0.5, 1.5, 6.5}};
    for (int q = 0; q < NP; q++)
      for (int k = 0; k < 3; k++) pp[3 * q + k] = pair[q][k];
    PetscCall(Decoded(&s, pp, o));
    for (int q = 0; q < 2; q++) pp[3 * q + 1 + q] += 2 * d; /* across a z face, an x face */
    s.m->extrapolate = 0.5;
    pp[3 * 2 + 1] += 2 * d;
    pp[3 * 3 + 2] -= 2 * d; /* out of the grid at the top, on the left */
    PetscCall(Decoded(&s, pp, o2));
    for (int i = 0; i < NP * 4; i++) oscale = PetscMax(oscale, fabs(o[i]));
    for (int q = 0; q < 4; q++)
      for (int c = 0; c < 4; c++) jump = PetscMax(jump, fabs(o2[4 * q + c] - o[4 * q + c]));
    pp[3 * 3 + 2] = -0.45;
    pp[3 * 2 + 1] = 3.45; /* deep in the band: finite */
    PetscCall(Decoded(&s, pp, o2));
    for (int i = 0; i < NP * 4; i++) ext = PetscMax(ext, PetscIsInfOrNanReal(o2[i]) ? PETSC_INFINITY : fabs(o2[i]));
    s.m->extrapolate = 0;
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "3. p, b, u, w across latent faces and the grid's edge (2e-9 apart): max jump %.2e (values up to %.2e); 0.45 cells out: max |value| %.2e\n", jump, oscale, ext));
  CHECK(jump < 1e-6 * oscale && ext < 1e3 * oscale, "stream model: the fields jump by %g across a face (values %g) or blow up outside (%g)", jump, oscale, ext);
  { /* 4. with recording off (inference) the same values, and no graph */
    int was = sgnn_set_grad_enabled(0);
    SgnnTensor lat, out, p;
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 2, (int[]){NP, 3}, s.pts, &p));
    PetscCall(SgMFFNEncode(s.m, s.x, &lat));
    PetscCall(SgMFFNDecode(s.m, lat, p, &out));
    SgCallNN(sgnn_tensor_to_f64(out, o2));
    PetscBool graph = (PetscBool)sgnn_tensor_requires_grad(out);
    sgnn_tensor_free(&lat);
    sgnn_tensor_free(&out);
    sgnn_tensor_free(&p);
    sgnn_set_grad_enabled(was);
    PetscCall(Decoded(&s, s.pts, o));
    for (int i = 0; i < NP * 4; i++) noglue = PetscMax(noglue, fabs(o2[i] - o[i]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "4. decoding with recording off: max |difference| %.1e, output %s\n", noglue, graph ? "ON THE TAPE" : "off the tape"));
    CHECK(noglue < 1e-13 * oscale && !graph, "stream model with recording off: difference %g, graph %d", noglue, (int)graph);
  }
  PetscCall(CheckWeightGradient(&s, 0, &eo));
  PetscCall(CheckWeightGradient(&s, 1, &er));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "5. weight gradients vs central differences: of the output %.2e, of the PDE residual (fourth order through the decoder) %.2e\n", eo, er));
  CHECK(eo < 1e-5 && er < 1e-5, "stream model: weight gradients off by %g, %g", eo, er);
  { /* 6. the model file keeps the flag (and Load sets the physics) */
    PetscCall(PetscSNPrintf(a, sizeof a, "%s/stream.h5", dir));
    PetscCall(SgMFFNSave(s.m, &s.ph, fac, a));
    PetscCall(SgMFFNLoad(a, s.m->be, &m2, &ph2, f2));
    PetscCall(Decoded(&s, s.pts, o));
    SgMFFN keep = s.m;
    s.m = m2;
    PetscCall(Decoded(&s, s.pts, o2));
    s.m = keep;
    PetscBool same = (PetscBool)(m2->cfg.stream && !memcmp(o, o2, sizeof o));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "6. model file round trip: %s\n", same ? "a stream model, decoded output bit-identical" : "DIFFERENT"));
    CHECK(same, "the stream model does not round-trip");
    PetscCall(SgMFFNDestroy(&m2));
  }
  sgnn_tensor_free(&s.x);
  PetscCall(SgMFFNDestroy(&s.m));
  { /* 7. with the residual option, a fresh model (last ImNet layer zero): p and b are trilinear
       interpolation of the input's; psi is cubic Hermite interpolation of the input's stream function
       (least squares on the edges) with the input's u, w as slopes. On an input whose edge averages
       of the slopes are the differences of some psi0 (discretely divergence-free: built so here) the
       least squares recover psi0, and then u is linear in z on every input column, w linear in x on
       every input row, both the input's at its points; then continuity, and the weight gradients */
    double     tri[NP * 4], xv[4 * 2 * 4 * 8], ea = 0, eu = 0, cont7, ux7;
    SgnnTensor pt, ti;
    SgnnRng    r;
    const double q7[NP][3] = {{1, 1.3, 2}, {0, 2, 4.6}, {1, 0.25, 7}, {0, 3, 5}, {1, 1, 2}};
    PetscCall(SetupCreate(&s, PETSC_TRUE, PETSC_TRUE));
    SgCallNN(sgnn_tensor_to_f64(s.x, xv));
#define XV(c, t, z, x) xv[(((c) * 2 + (t)) * 4 + (z)) * 8 + (x)]
    sgnn_rng_init(&r, 31);
    for (int t = 0; t < 2; t++) { /* psi0 random; slopes A (z), B (x) with edge averages = its differences */
      double p0[4][8], A[4][8], B[4][8];
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++) p0[j][k] = sgnn_rng_normal(&r);
      for (int k = 0; k < 8; k++) {
        A[0][k] = sgnn_rng_normal(&r);
        for (int j = 0; j < 3; j++) A[j + 1][k] = 2 * (p0[j + 1][k] - p0[j][k]) - A[j][k];
      }
      for (int j = 0; j < 4; j++) {
        B[j][0] = sgnn_rng_normal(&r);
        for (int k = 0; k < 7; k++) B[j][k + 1] = 2 * (p0[j][k + 1] - p0[j][k]) - B[j][k];
      }
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++) XV(2, t, j, k) = s.m->vel[0] * A[j][k] + s.m->vel[2], XV(3, t, j, k) = s.m->vel[1] * B[j][k] + s.m->vel[3];
    }
    sgnn_tensor_free(&s.x);
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 5, (int[]){1, 4, 2, 4, 8}, xv, &s.x));
    for (int q = 0; q < NP; q++)
      for (int k = 0; k < 3; k++) pp[3 * q + k] = q7[q][k];
    PetscCall(Decoded(&s, pp, o));
    SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 3, (int[]){1, NP, 3}, pp, &pt));
    SgCallNN(sgnn_interp_trilinear(s.x, pt, &ti));
    SgCallNN(sgnn_tensor_to_f64(ti, tri));
    sgnn_tensor_free(&ti);
    sgnn_tensor_free(&pt);
    for (int q = 0; q < NP; q++)
      for (int c = 0; c < 2; c++) ea = PetscMax(ea, fabs(o[4 * q + c] - tri[4 * q + c]));
    eu = PetscMax(eu, fabs(o[4 * 0 + 2] - (0.7 * XV(2, 1, 1, 2) + 0.3 * XV(2, 1, 2, 2))));  /* u, linear in z */
    eu = PetscMax(eu, fabs(o[4 * 2 + 2] - (0.75 * XV(2, 1, 0, 7) + 0.25 * XV(2, 1, 1, 7)))); /* on the last column */
    eu = PetscMax(eu, fabs(o[4 * 1 + 3] - (0.4 * XV(3, 0, 2, 4) + 0.6 * XV(3, 0, 2, 5))));  /* w, linear in x on an inner row */
    for (int q = 3; q < 5; q++) /* at the input's points: its u and w */
      for (int c = 2; c < 4; c++) eu = PetscMax(eu, fabs(o[4 * q + c] - XV(c, (int)q7[q][0], (int)q7[q][1], (int)q7[q][2])));
#undef XV
    sgnn_rng_init(&r, 23);
    SgCallNN(sgnn_init_normal(s.m->mlp_w[s.m->cfg.nmlp], 0, 0.5, &r));
    PetscCall(Continuity(&s, &cont7, &ux7)); /* with the correction on */
    { /* the baseline is C1 across cells: the fields on both sides of a z face and an x face */
      double jp[NP * 3] = {0.5, 2 - d, 3.37, 0.5, 1.41, 4 - d, 0.5, 2 + d, 3.37, 0.5, 1.41, 4 + d, 0.2, 0.5, 0.5}, oj[NP * 4];
      PetscCall(Decoded(&s, jp, oj));
      for (int q = 0; q < 2; q++)
        for (int c = 0; c < 4; c++) jump = PetscMax(jump, fabs(oj[4 * (q + 2) + c] - oj[4 * q + c]));
    }
    PetscCall(CheckJet(&s, &e2a, &e2b));
    PetscCall(CheckWeightGradient(&s, 0, &eo));
    PetscCall(CheckWeightGradient(&s, 1, &er));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "7a. residual stream model, last layer random: max jump across a z and an x face (2e-9 apart) %.1e; coordinate derivatives vs central differences: first %.2e, second %.2e\n", jump, e2a, e2b));
    CHECK(jump < 1e-6 * oscale && e2a < 1e-6 && e2b < 1e-6, "stream + residual: jump %g, coordinate derivatives %g, %g", jump, e2a, e2b);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "7b. with the residual option, a fresh model: p, b vs trilinear interpolation of the input: max |difference| %.1e; on a discretely divergence-free input u linear in z, w linear in x, both the input's at its points: %.1e; trained-like (last layer random): |u_x + w_z| %.1e, weight gradients of the output %.2e and of the PDE residual %.2e\n", ea, eu, cont7, eo, er));
    CHECK(ea < 1e-14 && eu < 1e-12 && cont7 < 1e-12 * ux7 && eo < 1e-5 && er < 1e-5, "stream + residual: p, b differ from trilinear by %g, u, w from linear by %g, continuity %g, weight gradients %g, %g", ea, eu, cont7, eo, er);
    { /* 7c. the input's stream function (the latent grid's last channel) on a random input, whose
         divergence is not zero: the edge mismatches e = (psi difference - slope average) satisfy the
         normal equations D^T e = 0 at every point (least squares), and psi's mean is zero */
      SgnnTensor lat, x0;
      double     lv[(3 + 4 + 1) * 2 * 4 * 8], x7[4 * 2 * 4 * 8], nrm = 0, res = 0, mean = 0;
      SgnnRng    r2;
      sgnn_rng_init(&r2, 41);
      for (size_t i = 0; i < sizeof x7 / sizeof *x7; i++) x7[i] = sgnn_rng_normal(&r2);
      SgCallNN(sgnn_tensor_from_f64(s.m->be, SGNN_F64, 5, (int[]){1, 4, 2, 4, 8}, x7, &x0));
      PetscCall(SgMFFNEncode(s.m, x0, &lat));
      SgCallNN(sgnn_tensor_to_f64(lat, lv));
      for (int t = 0; t < 2; t++) {
        const double *q = lv + (7 * 2 + t) * 32, *u = x7 + (2 * 2 + t) * 32, *w = x7 + (3 * 2 + t) * 32;
        double        dte[32] = {0};
        for (int j = 0; j < 4; j++)
          for (int k = 0; k < 8; k++) {
            int i = j * 8 + k;
            mean += q[i] / 64;
            if (j < 3) {
              double e = q[i + 8] - q[i] - (0.5 * (u[i] + u[i + 8]) - s.m->vel[2]) / s.m->vel[0];
              dte[i + 8] += e;
              dte[i] -= e;
              nrm = PetscMax(nrm, fabs(q[i + 8] - q[i]));
            }
            if (k < 7) {
              double e = q[i + 1] - q[i] - (0.5 * (w[i] + w[i + 1]) - s.m->vel[3]) / s.m->vel[1];
              dte[i + 1] += e;
              dte[i] -= e;
              nrm = PetscMax(nrm, fabs(q[i + 1] - q[i]));
            }
          }
        for (int i = 0; i < 32; i++) res = PetscMax(res, fabs(dte[i]));
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "7c. the input's stream function (least squares on the edges) of a random input: max |D^T e| %.1e (psi differences up to %.1e), mean %.1e\n", res, nrm, mean));
      CHECK(res < 1e-10 * nrm && fabs(mean) < 1e-12 * nrm, "the input's stream function is not the least-squares one: |D^T e| %g, mean %g (differences %g)", res, mean, nrm);
      sgnn_tensor_free(&lat);
      sgnn_tensor_free(&x0);
    }
    sgnn_tensor_free(&s.x);
    PetscCall(SgMFFNDestroy(&s.m));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_mffn grad|pde|io DIR|stream DIR|data DIR|gain DIR|compare A.h5 B.h5 [TOL|--changed|--other-architecture]");
  if (!strcmp(argv[1], "grad")) PetscCall(TestGrad());
  else if (!strcmp(argv[1], "pde")) PetscCall(TestPDE());
  else if (!strcmp(argv[1], "io") && argc >= 3) PetscCall(TestIO(argv[2]));
  else if (!strcmp(argv[1], "stream") && argc >= 3) PetscCall(TestStream(argv[2]));
  else if (!strcmp(argv[1], "data") && argc >= 3) PetscCall(TestData(argv[2]));
  else if (!strcmp(argv[1], "gain") && argc >= 3) PetscCall(TestGain(argv[2]));
  else if (!strcmp(argv[1], "compare") && (argc == 4 || argc == 5)) {
    CompareWant want = CMP_WITHIN;
    double      tol  = 0;
    PetscBool   ok;
    if (argc == 5 && !strcmp(argv[4], "--changed")) want = CMP_CHANGED;
    else if (argc == 5 && !strcmp(argv[4], "--other-architecture")) want = CMP_OTHER_ARCH;
    else if (argc == 5) {
      char *end;
      tol = strtod(argv[4], &end);
      PetscCheck(end != argv[4] && !*end && tol >= 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "compare: '%s' is not a tolerance (a number >= 0), --changed or --other-architecture", argv[4]);
    }
    PetscCall(Compare(argv[2], argv[3], want, tol, &ok));
    PetscCall(PetscFinalize());
    return ok ? 0 : 1;
  }
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown mode %s: grad, pde, io DIR, stream DIR, data DIR, gain DIR or compare A B", argv[1]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
