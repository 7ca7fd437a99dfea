/* MeshfreeFlowNet's network on the NN engine: the U-Net encoder and the ImNet decoder (sgmffn.h).
   Architecture from Jiang, Esmaeilzadeh et al., "MeshfreeFlowNet", SC20, section III and fig. 2:
   bottleneck residual blocks, pooling [1,2,2], [1,2,2], [2,2,2], [2,2,2], nearest upsampling with
   skip concatenations, a 32-channel latent grid, ImNet 35 -> 512 -> 256 -> 128 -> 64 -> 32 -> 4 with
   the input re-fed to every layer and softplus, trilinear blending of the 8 corner outputs. */
#include "sgmffn.h"
#include "sgtrainer.h"
#include <math.h>

PetscErrorCode SgMFFNConfigDefault(SgMFFNConfig *c)
{
  static const PetscInt ch[5] = {16, 32, 64, 128, 256}, pool[4][3] = {{1, 2, 2}, {1, 2, 2}, {2, 2, 2}, {2, 2, 2}}, mlp[5] = {512, 256, 128, 64, 32};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(c, sizeof *c));
  c->in_channels = SG_MFFN_NCH, c->out_channels = SG_MFFN_NCH, c->latent = 32, c->neck_div = 4, c->batchnorm = PETSC_TRUE;
  c->nlevels = 4, c->nmlp = 5;
  for (int i = 0; i < 5; i++) c->channels[i] = ch[i], c->mlp[i] = mlp[i];
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++) c->pool[i][k] = pool[i][k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNConfigCheck(MPI_Comm comm, const SgMFFNConfig *c)
{
  PetscFunctionBegin;
  PetscCheck(c->nlevels >= 0 && c->nlevels <= SG_MFFN_MAXLEVELS, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_channels has %" PetscInt_FMT " entries: give 1 to %d (one width per U-Net level)", c->nlevels + 1, SG_MFFN_MAXLEVELS + 1);
  PetscCheck(c->nmlp >= 1 && c->nmlp <= SG_MFFN_MAXMLP, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_imnet has %" PetscInt_FMT " entries: give 1 to %d hidden widths", c->nmlp, SG_MFFN_MAXMLP);
  for (PetscInt l = 0; l <= c->nlevels; l++) PetscCheck(c->channels[l] >= 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_channels entry %" PetscInt_FMT " is %" PetscInt_FMT ": widths must be >= 1", l, c->channels[l]);
  for (PetscInt l = 0; l < c->nlevels; l++)
    for (int k = 0; k < 3; k++) PetscCheck(c->pool[l][k] >= 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_pool factor %" PetscInt_FMT " of level %" PetscInt_FMT " must be >= 1", c->pool[l][k], l);
  for (PetscInt l = 0; l < c->nmlp; l++) PetscCheck(c->mlp[l] >= 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_imnet width %" PetscInt_FMT " must be >= 1", c->mlp[l]);
  PetscCheck(c->latent >= 1 && c->neck_div >= 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_latent (%" PetscInt_FMT ") and -mffn_neck_div (%" PetscInt_FMT ") must be >= 1", c->latent, c->neck_div);
  PetscCheck(!c->residual || c->in_channels == c->out_channels, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_residual needs as many output channels as input channels (%" PetscInt_FMT " vs %" PetscInt_FMT ")", c->out_channels, c->in_channels);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt SgMFFNLatentChannels(const SgMFFNConfig *c) { return c->latent + (c->residual ? c->in_channels : 0); }

PetscErrorCode SgMFFNConfigGridMultiple(const SgMFFNConfig *c, PetscInt mult[3])
{
  PetscFunctionBegin;
  mult[0] = mult[1] = mult[2] = 1;
  for (PetscInt l = 0; l < c->nlevels; l++)
    for (int k = 0; k < 3; k++) mult[k] *= c->pool[l][k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddConv(SgnnParams P, const char *name, PetscInt co, PetscInt ci, int k, SgnnTensor *w)
{
  int  s[5] = {(int)co, (int)ci, k, k, k};
  char nm[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(nm, sizeof nm, "%s", name));
  SgCallNN(sgnn_params_add(P, nm, 5, s, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddVec(SgnnParams P, const char *name, PetscInt n, SgnnTensor *v)
{
  int s[1] = {(int)n};

  PetscFunctionBegin;
  SgCallNN(sgnn_params_add(P, name, 1, s, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddResBlock(SgnnParams P, const char *pre, PetscInt ci, PetscInt co, PetscInt neck_div, SgMFFNResBlock *r)
{
  PetscInt nk = PetscMax(1, co / neck_div);
  char     nm[64];

  PetscFunctionBegin;
#define NM(s) (PetscSNPrintf(nm, sizeof nm, "%s.%s", pre, s), nm)
  PetscCall(AddConv(P, NM("w1"), nk, ci, 1, &r->w1));
  PetscCall(AddVec(P, NM("g1"), nk, &r->g1));
  PetscCall(AddVec(P, NM("b1"), nk, &r->b1));
  PetscCall(AddConv(P, NM("w2"), nk, nk, 3, &r->w2));
  PetscCall(AddVec(P, NM("g2"), nk, &r->g2));
  PetscCall(AddVec(P, NM("b2"), nk, &r->b2));
  PetscCall(AddConv(P, NM("w3"), co, nk, 1, &r->w3));
  PetscCall(AddVec(P, NM("g3"), co, &r->g3));
  PetscCall(AddVec(P, NM("b3"), co, &r->b3));
  PetscCall(AddConv(P, NM("ws"), co, ci, 1, &r->ws));
  PetscCall(AddVec(P, NM("bs"), co, &r->bs));
#undef NM
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNCreate(const SgMFFNConfig *cfg, SgnnBackend *be, SgnnDType dt, SgMFFN *out)
{
  SgMFFN              m;
  const SgMFFNConfig *c;
  char                nm[64];

  PetscFunctionBegin;
  PetscCall(SgMFFNConfigCheck(PETSC_COMM_SELF, cfg));
  PetscCall(PetscNew(&m));
  m->cfg = *cfg, m->be = be, m->dt = dt, c = &m->cfg;
  SgCallNN(sgnn_params_create(be, dt, &m->P));
  PetscCall(AddConv(m->P, "in.w", c->channels[0], c->in_channels, 3, &m->in_w));
  PetscCall(AddVec(m->P, "in.b", c->channels[0], &m->in_b));
  for (PetscInt l = 0; l < c->nlevels; l++) {
    PetscCall(PetscSNPrintf(nm, sizeof nm, "down%" PetscInt_FMT, l));
    PetscCall(AddResBlock(m->P, nm, c->channels[l], c->channels[l + 1], c->neck_div, &m->down[l]));
  }
  for (PetscInt l = c->nlevels - 1; l >= 0; l--) { /* up[l]: level l+1 upsampled, concatenated with the skip of level l */
    PetscCall(PetscSNPrintf(nm, sizeof nm, "up%" PetscInt_FMT, l));
    PetscCall(AddResBlock(m->P, nm, c->channels[l + 1] + c->channels[l], c->channels[l], c->neck_div, &m->up[l]));
  }
  PetscCall(AddConv(m->P, "out.w", c->latent, c->channels[0], 1, &m->out_w));
  PetscCall(AddVec(m->P, "out.b", c->latent, &m->out_b));
  for (PetscInt k = 0; k <= c->nmlp; k++) {
    PetscInt nin = (k ? c->mlp[k - 1] : 0) + 3 + SgMFFNLatentChannels(c), nout = k < c->nmlp ? c->mlp[k] : c->out_channels;
    int      s[2] = {(int)nout, (int)nin};
    PetscCall(PetscSNPrintf(nm, sizeof nm, "imnet%" PetscInt_FMT ".w", k));
    SgCallNN(sgnn_params_add(m->P, nm, 2, s, &m->mlp_w[k]));
    PetscCall(PetscSNPrintf(nm, sizeof nm, "imnet%" PetscInt_FMT ".b", k));
    PetscCall(AddVec(m->P, nm, nout, &m->mlp_b[k]));
  }
  SgCallNN(sgnn_params_setup(m->P));
  *out = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNInitWeights(SgMFFN m, unsigned long long seed)
{
  SgnnRng r;
  int     n = sgnn_params_num(m->P);

  PetscFunctionBegin;
  sgnn_rng_init(&r, seed);
  for (int i = 0; i < n; i++) {
    SgnnTensor  t    = sgnn_params_get(m->P, i);
    const char *leaf = strrchr(sgnn_params_name(m->P, i), '.') + 1; /* every name is "block.leaf" */
    if (sgnn_tensor_ndim(t) > 1) SgCallNN(sgnn_init_he_normal(t, &r));
    else SgCallNN(sgnn_tensor_fill(t, leaf[0] == 'g' ? 1.0 : 0.0)); /* BN scales g*: 1; biases, BN shifts: 0 */
  }
  if (m->cfg.residual) SgCallNN(sgnn_tensor_fill(m->mlp_w[m->cfg.nmlp], 0.0)); /* the correction starts at zero: trilinear interpolation */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDestroy(SgMFFN *m)
{
  PetscFunctionBegin;
  if (!*m) PetscFunctionReturn(PETSC_SUCCESS);
  sgnn_params_destroy(&(*m)->P);
  PetscCall(PetscFree(*m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const int one3[3] = {1, 1, 1}, zero3[3] = {0, 0, 0};

/* conv (no bias: BN follows) -> BN with this crop's statistics, or only BN's scale and shift with norm off (-> ReLU) */
static PetscErrorCode ConvBN(PetscBool norm, SgnnTensor x, SgnnTensor w, SgnnTensor g, SgnnTensor b, int pad, PetscBool relu, SgnnTensor *out)
{
  SgnnTensor c, n;
  int        p[3] = {pad, pad, pad};

  PetscFunctionBegin;
  SgCallNN(sgnn_conv3d(x, w, NULL, one3, p, &c));
  if (!norm || sgnn_tensor_numel(c) == sgnn_tensor_shape(c)[1]) { /* norm off, or one value per channel (a 1^3 grid, e.g. the paper's
                                                                    deepest level on a 4 x 16 x 16 input): the affine part only */
    int        cs[5] = {1, sgnn_tensor_shape(c)[1], 1, 1, 1};
    SgnnTensor gv, bv, t;
    SgCallNN(sgnn_reshape(g, 5, cs, &gv));
    SgCallNN(sgnn_reshape(b, 5, cs, &bv));
    SgCallNN(sgnn_mul(c, gv, &t));
    SgCallNN(sgnn_add(t, bv, &n));
    sgnn_tensor_free(&gv), sgnn_tensor_free(&bv), sgnn_tensor_free(&t);
  } else SgCallNN(sgnn_batch_norm(c, g, b, NULL, NULL, 1, 0.1, 1e-5, &n));
  sgnn_tensor_free(&c);
  if (relu) {
    SgCallNN(sgnn_relu(n, out));
    sgnn_tensor_free(&n);
  } else *out = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* relu(BN(1^3 conv(relu(BN(3^3 conv(relu(BN(1^3 conv x)))))))) + 1^3 shortcut(x)) */
static PetscErrorCode ResBlock(PetscBool norm, const SgMFFNResBlock *r, SgnnTensor x, SgnnTensor *out)
{
  SgnnTensor a, b, c, s, t;

  PetscFunctionBegin;
  PetscCall(ConvBN(norm, x, r->w1, r->g1, r->b1, 0, PETSC_TRUE, &a));
  PetscCall(ConvBN(norm, a, r->w2, r->g2, r->b2, 1, PETSC_TRUE, &b));
  PetscCall(ConvBN(norm, b, r->w3, r->g3, r->b3, 0, PETSC_FALSE, &c));
  SgCallNN(sgnn_conv3d(x, r->ws, r->bs, one3, zero3, &s));
  SgCallNN(sgnn_add(c, s, &t));
  SgCallNN(sgnn_relu(t, out));
  SgnnTensor *fr[] = {&a, &b, &c, &s, &t};
  for (size_t q = 0; q < sizeof fr / sizeof *fr; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNEncode(SgMFFN m, SgnnTensor x, SgnnTensor *latent)
{
  const SgMFFNConfig *c = &m->cfg;
  SgnnTensor          skip[SG_MFFN_MAXLEVELS + 1], h, t;
  const int          *sh = sgnn_tensor_shape(x);
  PetscInt            mult[3];

  PetscFunctionBegin;
  PetscCall(SgMFFNConfigGridMultiple(c, mult));
  PetscCheck(sgnn_tensor_ndim(x) == 5 && sh[0] == 1 && sh[1] == c->in_channels, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the encoder takes one crop [1, %" PetscInt_FMT ", T, Z, X]", c->in_channels);
  for (int k = 0; k < 3; k++) PetscCheck(sh[2 + k] % mult[k] == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: low-res grid %d x %d x %d (t, z, x) is not a multiple of the poolings' %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, sh[2], sh[3], sh[4], mult[0], mult[1], mult[2]);
  {
    int p1[3] = {1, 1, 1};
    SgCallNN(sgnn_conv3d(x, m->in_w, m->in_b, one3, p1, &skip[0]));
  }
  for (PetscInt l = 0; l < c->nlevels; l++) {
    int k[3] = {(int)c->pool[l][0], (int)c->pool[l][1], (int)c->pool[l][2]};
    SgCallNN(sgnn_maxpool3d(skip[l], k, k, &t));
    PetscCall(ResBlock(c->batchnorm, &m->down[l], t, &skip[l + 1]));
    sgnn_tensor_free(&t);
  }
  h = sgnn_tensor_ref(skip[c->nlevels]);
  for (PetscInt l = c->nlevels - 1; l >= 0; l--) {
    int        k[3] = {(int)c->pool[l][0], (int)c->pool[l][1], (int)c->pool[l][2]};
    SgnnTensor u, cat[2];
    SgCallNN(sgnn_upsample_nearest3d(h, k, &u));
    cat[0] = u, cat[1] = skip[l];
    SgCallNN(sgnn_concat(2, cat, 1, &t));
    sgnn_tensor_free(&u);
    sgnn_tensor_free(&h);
    PetscCall(ResBlock(c->batchnorm, &m->up[l], t, &h));
    sgnn_tensor_free(&t);
  }
  SgCallNN(sgnn_conv3d(h, m->out_w, m->out_b, one3, zero3, &t));
  sgnn_tensor_free(&h);
  if (c->residual) { /* the input's channels after the codes: the decoder adds its correction to them */
    SgnnTensor cat[2] = {t, x};
    SgCallNN(sgnn_concat(2, cat, 1, latent));
    sgnn_tensor_free(&t);
  } else *latent = t;
  for (PetscInt l = 0; l <= c->nlevels; l++) sgnn_tensor_free(&skip[l]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The 8 corners of the latent cell holding each point: for corner q = 4 a + 2 b + e (offsets a, b, e
   in t, z, x) its flat vertex index, its coordinates and the point's fraction in the cell. The cell
   is clamped to the grid so a point on the last plane uses the cell below it (fraction 1); a point
   up to ext cells outside the grid (m->extrapolate, 0 in training) uses the edge cell, its fraction
   beyond [0, 1]: the trilinear blend extrapolates linearly. */
static PetscErrorCode Corners(const int dims[3], PetscReal ext, PetscInt P, const double *pts, long *idx, double *corner, double *base)
{
  PetscFunctionBegin;
  for (PetscInt p = 0; p < P; p++) {
    int i0[3];
    for (int k = 0; k < 3; k++) {
      double v = pts[3 * p + k];
      PetscCheck(v >= -ext && v <= dims[k] - 1 + ext, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: query point %" PetscInt_FMT " coordinate %d is %g, outside the latent grid [0, %d]%s", p, k, v, dims[k] - 1, ext > 0 ? " and its extrapolation band" : "");
      i0[k] = PetscMax(0, PetscMin((int)floor(v), dims[k] - 2));
      base[3 * p + k] = i0[k];
    }
    for (int q = 0; q < 8; q++) {
      int c[3] = {i0[0] + (q >> 2 & 1), i0[1] + (q >> 1 & 1), i0[2] + (q & 1)};
      idx[8 * p + q] = ((long)c[0] * dims[1] + c[1]) * dims[2] + c[2];
      for (int k = 0; k < 3; k++) corner[(8 * p + q) * 3 + k] = c[k];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDecode(SgMFFN m, SgnnTensor latent, SgnnTensor pts, SgnnTensor *out)
{
  const SgMFFNConfig *c  = &m->cfg;
  const int          *ls = sgnn_tensor_shape(latent);
  int                 dims[3], L, P;
  long               *idx;
  double             *hp, *corner, *base, sel[24], off[24];
  SgnnTensor          lat2, latT, codes, cor, rel, in0, h = NULL, y = NULL, bt, fr, fac, wq, prod, f1, f2;

  PetscFunctionBegin;
  PetscCheck(sgnn_tensor_ndim(latent) == 5 && ls[0] == 1 && ls[1] == SgMFFNLatentChannels(c), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the decoder takes one latent grid [1, %" PetscInt_FMT ", T, Z, X]", SgMFFNLatentChannels(c));
  PetscCheck(sgnn_tensor_ndim(pts) == 2 && sgnn_tensor_shape(pts)[1] == 3, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: query points are [P, 3]");
  L = ls[1], P = sgnn_tensor_shape(pts)[0];
  for (int k = 0; k < 3; k++) {
    dims[k] = ls[2 + k];
    PetscCheck(dims[k] >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the latent grid needs >= 2 points per axis (has %d x %d x %d)", ls[2], ls[3], ls[4]);
  }
  PetscCall(PetscMalloc4(8 * (size_t)P, &idx, 3 * (size_t)P, &hp, 24 * (size_t)P, &corner, 3 * (size_t)P, &base));
  SgCallNN(sgnn_tensor_to_f64(pts, hp));
  PetscCall(Corners(dims, m->extrapolate, P, hp, idx, corner, base));
  { /* latent codes of the 8 corners: [8P, L] */
    int s2[2] = {L, dims[0] * dims[1] * dims[2]};
    SgCallNN(sgnn_reshape(latent, 2, s2, &lat2));
    SgCallNN(sgnn_transpose(lat2, 0, 1, &latT));
    SgCallNN(sgnn_index_select(latT, 0, 8L * P, idx, &codes));
  }
  { /* relative coordinates (point - corner) [8P, 3], differentiable in pts */
    int s3[3] = {P, 1, 3}, s8[3] = {P, 8, 3}, s2[2] = {8 * P, 3};
    SgnnTensor pv, px, rr;
    SgCallNN(sgnn_reshape(pts, 3, s3, &pv));
    SgCallNN(sgnn_expand(pv, 3, s8, &px));
    SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 3, s8, corner, &cor));
    SgCallNN(sgnn_sub(px, cor, &rr));
    SgCallNN(sgnn_reshape(rr, 2, s2, &rel));
    SgnnTensor cat[2] = {rel, codes};
    SgCallNN(sgnn_concat(2, cat, 1, &in0));
    sgnn_tensor_free(&pv), sgnn_tensor_free(&px), sgnn_tensor_free(&rr);
  }
  for (PetscInt k = 0; k <= c->nmlp; k++) { /* ImNet: softplus hidden layers, the input re-fed to each */
    SgnnTensor x, z;
    if (k) {
      SgnnTensor cat[2] = {h, in0};
      SgCallNN(sgnn_concat(2, cat, 1, &x));
    } else x = sgnn_tensor_ref(in0);
    SgCallNN(sgnn_linear(x, m->mlp_w[k], m->mlp_b[k], &z));
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&h);
    if (k < c->nmlp) {
      SgCallNN(sgnn_softplus(z, &h));
      sgnn_tensor_free(&z);
    } else y = z;
  }
  if (c->residual) { /* each corner's output corrects the input's value there: the blend is trilinear interpolation + a correction */
    SgnnTensor xin, t;
    SgCallNN(sgnn_slice(codes, 1, (int)c->latent, (int)(c->latent + c->in_channels), &xin));
    SgCallNN(sgnn_add(y, xin, &t));
    sgnn_tensor_free(&y), sgnn_tensor_free(&xin);
    y = t;
  }
  { /* trilinear weights: prod_k (corner offset_k ? f_k : 1 - f_k), f = pts - cell base */
    int s3[3] = {P, 1, 3}, s8[3] = {P, 8, 3}, sc[2] = {8, 3}, so[3] = {P, 8, (int)c->out_channels};
    for (int q = 0; q < 8; q++)
      for (int k = 0; k < 3; k++) {
        int a = (q >> (2 - k)) & 1;
        sel[3 * q + k] = 2 * a - 1, off[3 * q + k] = 1 - a;
      }
    SgnnTensor S, O, fv, fx, fs, ywr, yw3;
    SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, (int[]){P, 3}, base, &bt));
    SgCallNN(sgnn_sub(pts, bt, &fr));
    SgCallNN(sgnn_reshape(fr, 3, s3, &fv));
    SgCallNN(sgnn_expand(fv, 3, s8, &fx));
    SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, sc, sel, &S));
    SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, sc, off, &O));
    SgCallNN(sgnn_mul(fx, S, &fs));
    SgCallNN(sgnn_add(fs, O, &fac));
    SgCallNN(sgnn_slice(fac, 2, 0, 1, &f1));
    SgCallNN(sgnn_slice(fac, 2, 1, 2, &f2));
    SgCallNN(sgnn_mul(f1, f2, &prod));
    sgnn_tensor_free(&f1), sgnn_tensor_free(&f2);
    SgCallNN(sgnn_slice(fac, 2, 2, 3, &f1));
    SgCallNN(sgnn_mul(prod, f1, &wq)); /* [P, 8, 1] */
    SgCallNN(sgnn_reshape(y, 3, so, &ywr));
    SgCallNN(sgnn_mul(ywr, wq, &yw3));
    SgCallNN(sgnn_sum(yw3, 1, (int[]){1}, 0, out)); /* [P, out_channels] */
    SgnnTensor *frs[] = {&S, &O, &fv, &fx, &fs, &ywr, &yw3};
    for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  }
  SgnnTensor *frs[] = {&lat2, &latT, &codes, &cor, &rel, &in0, &y, &bt, &fr, &fac, &prod, &f1, &wq};
  for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  PetscCall(PetscFree4(idx, hp, corner, base));
  PetscFunctionReturn(PETSC_SUCCESS);
}
