/* MeshfreeFlowNet's network on the NN engine: the U-Net encoder and the ImNet decoder (sgmffn.h).
   Architecture from Jiang, Esmaeilzadeh et al., "MeshfreeFlowNet", SC20, section III and fig. 2:
   bottleneck residual blocks, pooling [1,2,2], [1,2,2], [2,2,2], [2,2,2], nearest upsampling with
   skip concatenations, a 32-channel latent grid, ImNet 35 -> 512 -> 256 -> 128 -> 64 -> 32 -> 4 with
   the input re-fed to every layer and softplus, trilinear blending of the 8 corner outputs.
   The encoder runs on a whole crop or on a rank's slab of a crop partitioned over spatial ranks (one
   layer code, dispatched to surrogates/parallel), and the decoder on the query points a rank owns
   (issue 18, docs/parallel.md). */
#include "sgmffn.h"
#include "sgtrainer.h"
#include <math.h>

PetscErrorCode SgMFFNConfigDefault(SgMFFNConfig *c)
{
  static const PetscInt ch[5] = {16, 32, 64, 128, 256}, pool[4][3] = {{1, 2, 2}, {1, 2, 2}, {2, 2, 2}, {2, 2, 2}}, mlp[5] = {512, 256, 128, 64, 32};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(c, sizeof *c));
  c->in_channels = SG_MFFN_NCH;
  c->out_channels = SG_MFFN_NCH;
  c->latent = 32;
  c->neck_div = 4;
  c->batchnorm = PETSC_TRUE;
  c->nlevels = 4;
  c->nmlp = 5;
  for (int i = 0; i < 5; i++) {
    c->channels[i] = ch[i];
    c->mlp[i] = mlp[i];
  }
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
  PetscCheck(!c->stream || c->out_channels == SG_MFFN_NCH, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_stream_function needs the %d channels p, b, u, w (out_channels %" PetscInt_FMT ")", SG_MFFN_NCH, c->out_channels);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt SgMFFNLatentChannels(const SgMFFNConfig *c) { return c->latent + (c->residual ? c->in_channels + (c->stream ? 1 : 0) : 0); }

/* The latent channels ImNet sees: not the input's stream function (a residual stream model's last
   channel), whose level is arbitrary (it depends on where the crop or domain starts) and only its
   Hermite interpolation uses */
static PetscInt ImNetCodes(const SgMFFNConfig *c) { return c->latent + (c->residual ? c->in_channels : 0); }

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
  m->cfg = *cfg;
  m->be = be;
  m->dt = dt;
  c = &m->cfg;
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
    PetscInt nin = (k ? c->mlp[k - 1] : 0) + 3 + ImNetCodes(c), nout = k < c->nmlp ? c->mlp[k] : c->out_channels - (c->stream ? 1 : 0); /* stream: psi for u and w */
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

PetscErrorCode SgMFFNSetPhysics(SgMFFN m, const SgMFFNPhysics *ph)
{
  enum { CU = 2, CW = 3, KZ = 1, KX = 2 };

  PetscFunctionBegin;
  if (!m->cfg.stream) PetscFunctionReturn(PETSC_SUCCESS);
  for (int k = 1; k < 3; k++) PetscCheck(ph->scale[k] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: latent step %d is %g: a stream-function model needs positive steps", k, (double)ph->scale[k]);
  PetscCheck(ph->std[CU] > 0 && ph->std[CW] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: the velocity's normalisation (std u %g, w %g) must be positive", (double)ph->std[CU], (double)ph->std[CW]);
  /* psi in units of std_u x (z step): u = d psi / dz gives u_hat + mean_u / std_u = d psi_hat / d l_z, and
     w = -d psi / dx gives w_hat = -(std_u scale_z) / (std_w scale_x) d psi_hat / d l_x - mean_w / std_w */
  m->vel[0]  = 1;
  m->vel[1]  = -ph->std[CU] * ph->scale[KZ] / (ph->std[CW] * ph->scale[KX]);
  m->vel[2]  = -ph->mean[CU] / ph->std[CU];
  m->vel[3]  = -ph->mean[CW] / ph->std[CW];
  m->vel_set = PETSC_TRUE;
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

static const int one3[3] = {1, 1, 1};

/* The encoder's layers, serial or on a partitioned crop (surrogates/parallel, docs/parallel.md): one
   code path, so the partitioned model is the serial one by construction. A layer context holds the
   grid (NULL: serial, also for one spatial rank, so data parallelism alone stays bit for bit the
   serial arithmetic) and the split of the tensor at hand (pooling and upsampling rescale it). */
typedef struct {
  SgparGrid  g;
  SgparSplit s;
} Layers;

static void LayersInit(const SgMFFNPart *part, Layers *L)
{
  L->g = part && part->grid && sgpar_grid_spatial_size(part->grid) > 1 ? part->grid : NULL;
  if (L->g) L->s = part->split;
}

static PetscErrorCode Conv(Layers *L, SgnnTensor x, SgnnTensor w, SgnnTensor b, int pad, SgnnTensor *out)
{
  int p[3] = {pad, pad, pad};

  PetscFunctionBegin;
  if (L->g) SgCallPar(sgpar_conv3d(L->g, &L->s, x, w, b, one3, p, out));
  else SgCallNN(sgnn_conv3d(x, w, b, one3, p, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* values per channel of the whole crop (all slabs) */
static long ChannelCount(const Layers *L, SgnnTensor x)
{
  long n = sgnn_tensor_numel(x) / sgnn_tensor_shape(x)[1];
  for (int k = 0; L->g && k < L->s.naxes; k++) n = n / L->s.ax[k].n * L->s.ax[k].global;
  return n;
}

/* conv (no bias: BN follows) -> BN with this crop's statistics (over every slab of it: the spatial
   group's reduction), or only BN's scale and shift with norm off (-> ReLU) */
static PetscErrorCode ConvBN(Layers *L, PetscBool norm, SgnnTensor x, SgnnTensor w, SgnnTensor g, SgnnTensor b, int pad, PetscBool relu, SgnnTensor *out)
{
  SgnnTensor c, n;

  PetscFunctionBegin;
  PetscCall(Conv(L, x, w, NULL, pad, &c));
  if (!norm || ChannelCount(L, c) == 1) { /* norm off, or one value per channel (a 1^3 grid, e.g. the paper's
                                            deepest level on a 4 x 16 x 16 input): the affine part only */
    int        cs[5] = {1, sgnn_tensor_shape(c)[1], 1, 1, 1};
    SgnnTensor gv, bv, t;
    SgCallNN(sgnn_reshape(g, 5, cs, &gv));
    SgCallNN(sgnn_reshape(b, 5, cs, &bv));
    SgCallNN(sgnn_mul(c, gv, &t));
    SgCallNN(sgnn_add(t, bv, &n));
    sgnn_tensor_free(&gv);
    sgnn_tensor_free(&bv);
    sgnn_tensor_free(&t);
  } else if (L->g) SgCallPar(sgpar_batch_norm(L->g, c, g, b, NULL, NULL, 0, 0.1, 1e-5, &n));
  else SgCallNN(sgnn_batch_norm(c, g, b, NULL, NULL, 1, 0.1, 1e-5, &n));
  sgnn_tensor_free(&c);
  if (relu) {
    SgCallNN(sgnn_relu(n, out));
    sgnn_tensor_free(&n);
  } else *out = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* relu(BN(1^3 conv(relu(BN(3^3 conv(relu(BN(1^3 conv x)))))))) + 1^3 shortcut(x)) */
static PetscErrorCode ResBlock(Layers *L, PetscBool norm, const SgMFFNResBlock *r, SgnnTensor x, SgnnTensor *out)
{
  SgnnTensor a, b, c, s, t;

  PetscFunctionBegin;
  PetscCall(ConvBN(L, norm, x, r->w1, r->g1, r->b1, 0, PETSC_TRUE, &a));
  PetscCall(ConvBN(L, norm, a, r->w2, r->g2, r->b2, 1, PETSC_TRUE, &b));
  PetscCall(ConvBN(L, norm, b, r->w3, r->g3, r->b3, 0, PETSC_FALSE, &c));
  PetscCall(Conv(L, x, r->ws, r->bs, 0, &s));
  SgCallNN(sgnn_add(c, s, &t));
  SgCallNN(sgnn_relu(t, out));
  SgnnTensor *fr[] = {&a, &b, &c, &s, &t};
  for (size_t q = 0; q < sizeof fr / sizeof *fr; q++) sgnn_tensor_free(fr[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Pool(Layers *L, SgnnTensor x, const int k[3], SgnnTensor *out)
{
  PetscFunctionBegin;
  if (L->g) SgCallPar(sgpar_maxpool3d(&L->s, x, k, &L->s, out));
  else SgCallNN(sgnn_maxpool3d(x, k, k, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* nearest upsampling of h, then [upsampled, skip] along the channels (skip has split ss) */
static PetscErrorCode UpCat(Layers *L, SgnnTensor h, const int k[3], SgnnTensor skip, const SgparSplit *ss, SgnnTensor *out)
{
  SgnnTensor u, cat[2];

  PetscFunctionBegin;
  if (L->g) SgCallPar(sgpar_upsample_nearest3d(&L->s, h, k, &L->s, &u));
  else SgCallNN(sgnn_upsample_nearest3d(h, k, &u));
  cat[0] = u;
  cat[1] = skip;
  if (L->g) {
    SgparSplit s2[2] = {L->s, *ss};
    SgCallPar(sgpar_concat(2, s2, cat, out));
  } else SgCallNN(sgnn_concat(2, cat, 1, out));
  sgnn_tensor_free(&u);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* L q = D^T D q for the differences D along the z and x edges of a Z x X grid: the 5-point graph
   Laplacian, Neumann at the grid's edges */
static void GridLaplacian(int Z, int X, const double *q, double *Lq)
{
  for (int j = 0; j < Z; j++)
    for (int k = 0; k < X; k++) {
      double v = q[j * X + k], a = 0;
      if (j > 0) a += v - q[(j - 1) * X + k];
      if (j < Z - 1) a += v - q[(j + 1) * X + k];
      if (k > 0) a += v - q[j * X + k - 1];
      if (k < X - 1) a += v - q[j * X + k + 1];
      Lq[j * X + k] = a;
    }
}

static void RemoveMean(long n, double *v)
{
  double m = 0;
  for (long i = 0; i < n; i++) m += v[i];
  m /= n;
  for (long i = 0; i < n; i++) v[i] -= m;
}

/* The low-res input's stream function in psi's units (sgmffn.h, cfg.stream): per time level, the
   psi on the Z x X input points whose differences along every z edge and x edge best match (least
   squares) the trapezoidal averages of the slopes d psi_hat / d l_z = (u_hat - vel[2]) / vel[0] and
   d psi_hat / d l_x = (w_hat - vel[3]) / vel[1] -- the input's discrete divergence is not zero, so no
   psi matches both exactly; a path sum up the columns would put the whole mismatch into w. The normal
   equations are the grid's graph Laplacian (5-point, Neumann at the edges), solved by conjugate
   gradients from the path sum (the Laplacian's null space, a constant, is projected out: psi's level
   is arbitrary, ImNet never sees it). x [1, 4, T, Z, X] -> [1, 1, T, Z, X], data only (no graph). */
static PetscErrorCode InputStream(SgMFFN m, SgnnTensor x, SgnnTensor *psi)
{
  const int *sh = sgnn_tensor_shape(x);
  int        T = sh[2], Z = sh[3], X = sh[4], s1[5] = {1, 1, sh[2], sh[3], sh[4]};
  long       n = (long)Z * X;
  double    *v, *q, *rhs, *r, *d, *Ld;

  PetscFunctionBegin;
  PetscCheck(m->vel_set, PETSC_COMM_SELF, PETSC_ERR_ORDER, "mffn: a stream-function model needs its data's physics (SgMFFNSetPhysics) before encoding");
  PetscCall(PetscMalloc6(4 * n * T, &v, n * T, &q, n, &rhs, n, &r, n, &d, n, &Ld));
  SgCallNN(sgnn_tensor_to_f64(x, v));
  for (int t = 0; t < T; t++) {
    const double *u = v + (2L * T + t) * n, *w = v + (3L * T + t) * n;
    double       *qt = q + t * n, rr = 0, rr0, bb = 0;
    /* right-hand side D^T g: g = the edge averages of the slopes */
    PetscCall(PetscArrayzero(rhs, n));
    for (int j = 0; j < Z; j++)
      for (int k = 0; k < X; k++) {
        long i = (long)j * X + k;
        if (j < Z - 1) {
          double g = (0.5 * (u[i] + u[i + X]) - m->vel[2]) / m->vel[0];
          rhs[i + X] += g;
          rhs[i] -= g;
        }
        if (k < X - 1) {
          double g = (0.5 * (w[i] + w[i + 1]) - m->vel[3]) / m->vel[1];
          rhs[i + 1] += g;
          rhs[i] -= g;
        }
      }
    /* the start: the path sum along the bottom row, then up each column */
    qt[0] = 0;
    for (int k = 1; k < X; k++) qt[k] = qt[k - 1] + (0.5 * (w[k - 1] + w[k]) - m->vel[3]) / m->vel[1];
    for (int j = 1; j < Z; j++)
      for (int k = 0; k < X; k++) qt[j * X + k] = qt[(j - 1) * X + k] + (0.5 * (u[(j - 1) * X + k] + u[j * X + k]) - m->vel[2]) / m->vel[0];
    GridLaplacian(Z, X, qt, Ld);
    for (long i = 0; i < n; i++) {
      r[i] = rhs[i] - Ld[i];
      bb += rhs[i] * rhs[i];
    }
    RemoveMean(n, r); /* rhs and L q sum to zero: keep round-off out of the null space */
    for (long i = 0; i < n; i++) {
      d[i] = r[i];
      rr += r[i] * r[i];
    }
    rr0 = rr;
    for (long it = 0; it < 4 * n && rr > 1e-28 * PetscMax(bb, rr0); it++) {
      double dLd = 0, a, rn = 0;
      GridLaplacian(Z, X, d, Ld);
      for (long i = 0; i < n; i++) dLd += d[i] * Ld[i];
      if (dLd <= 0) break;
      a = rr / dLd;
      for (long i = 0; i < n; i++) {
        qt[i] += a * d[i];
        r[i] -= a * Ld[i];
        rn += r[i] * r[i];
      }
      for (long i = 0; i < n; i++) d[i] = r[i] + (rn / rr) * d[i];
      rr = rn;
    }
    RemoveMean(n, qt);
  }
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 5, s1, q, psi));
  PetscCall(PetscFree6(v, q, rhs, r, d, Ld));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNEncode(SgMFFN m, SgnnTensor x, SgnnTensor *latent)
{
  PetscFunctionBegin;
  PetscCall(SgMFFNEncodePart(m, NULL, x, latent));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNEncodePart(SgMFFN m, const SgMFFNPart *part, SgnnTensor x, SgnnTensor *latent)
{
  const SgMFFNConfig *c = &m->cfg;
  SgnnTensor          skip[SG_MFFN_MAXLEVELS + 1], h, t;
  SgparSplit          ss[SG_MFFN_MAXLEVELS + 1];
  const int          *sh = sgnn_tensor_shape(x);
  int                 gs[3];
  PetscInt            mult[3];
  Layers              L;

  PetscFunctionBegin;
  LayersInit(part, &L);
  PetscCall(SgMFFNConfigGridMultiple(c, mult));
  PetscCheck(sgnn_tensor_ndim(x) == 5 && sh[0] == 1 && sh[1] == c->in_channels, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the encoder takes one crop [1, %" PetscInt_FMT ", T, Z, X]", c->in_channels);
  for (int k = 0; k < 3; k++) gs[k] = sh[2 + k];
  for (int k = 0; L.g && k < L.s.naxes; k++) gs[L.s.ax[k].axis - 2] = L.s.ax[k].global; /* the whole crop */
  for (int k = 0; k < 3; k++) PetscCheck(gs[k] % mult[k] == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: low-res grid %d x %d x %d (t, z, x) is not a multiple of the poolings' %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, gs[0], gs[1], gs[2], mult[0], mult[1], mult[2]);
  PetscCall(Conv(&L, x, m->in_w, m->in_b, 1, &skip[0]));
  ss[0] = L.s;
  for (PetscInt l = 0; l < c->nlevels; l++) {
    int k[3] = {(int)c->pool[l][0], (int)c->pool[l][1], (int)c->pool[l][2]};
    PetscCall(Pool(&L, skip[l], k, &t));
    PetscCall(ResBlock(&L, c->batchnorm, &m->down[l], t, &skip[l + 1]));
    ss[l + 1] = L.s;
    sgnn_tensor_free(&t);
  }
  h = sgnn_tensor_ref(skip[c->nlevels]);
  for (PetscInt l = c->nlevels - 1; l >= 0; l--) {
    int k[3] = {(int)c->pool[l][0], (int)c->pool[l][1], (int)c->pool[l][2]};
    PetscCall(UpCat(&L, h, k, skip[l], &ss[l], &t));
    sgnn_tensor_free(&h);
    PetscCall(ResBlock(&L, c->batchnorm, &m->up[l], t, &h));
    sgnn_tensor_free(&t);
  }
  PetscCall(Conv(&L, h, m->out_w, m->out_b, 0, &t));
  sgnn_tensor_free(&h);
  if (c->residual && c->stream) { /* the input's channels and its stream function after the codes */
    SgnnTensor cat[3] = {t, x, NULL};
    PetscCheck(!L.g || sgpar_grid_spatial_size(L.g) == 1, PETSC_COMM_SELF, PETSC_ERR_SUP, "mffn: a residual stream-function model on spatial ranks is not implemented (the input's stream function is a least-squares solve over the whole crop)");
    PetscCall(InputStream(m, x, &cat[2]));
    SgCallNN(sgnn_concat(3, cat, 1, latent));
    sgnn_tensor_free(&t);
    sgnn_tensor_free(&cat[2]);
  } else if (c->residual) { /* the input's channels after the codes: the decoder adds its correction to them */
    SgnnTensor cat[2] = {t, x};
    if (L.g) {
      SgparSplit s2[2] = {L.s, ss[0]};
      SgCallPar(sgpar_concat(2, s2, cat, latent));
    } else SgCallNN(sgnn_concat(2, cat, 1, latent));
    sgnn_tensor_free(&t);
  } else *latent = t;
  for (PetscInt l = 0; l <= c->nlevels; l++) sgnn_tensor_free(&skip[l]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgMFFNPartOwns(const SgMFFNPart *part, const double pt[3])
{
  if (!part || !part->grid || sgpar_grid_spatial_size(part->grid) == 1) return PETSC_TRUE;
  for (int k = 0; k < part->split.naxes; k++) {
    const SgparAxisSplit *q  = &part->split.ax[k];
    int                   i0 = PetscMin((int)floor(pt[q->axis - 2]), q->global - 2); /* the cell's lower vertex, as Corners */
    if (i0 < q->offset || i0 >= q->offset + q->n) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

PetscErrorCode SgMFFNLatentBlockCreate(SgMFFN m, const SgMFFNPart *part, SgnnTensor latent, SgMFFNLatentBlock *B)
{
  const int *ls = sgnn_tensor_shape(latent);
  Layers     L;

  PetscFunctionBegin;
  PetscCheck(sgnn_tensor_ndim(latent) == 5 && ls[0] == 1 && ls[1] == SgMFFNLatentChannels(&m->cfg), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the decoder takes one latent grid [1, %" PetscInt_FMT ", T, Z, X]", SgMFFNLatentChannels(&m->cfg));
  LayersInit(part, &L);
  B->t = sgnn_tensor_ref(latent);
  for (int k = 0; k < 3; k++) {
    B->origin[k] = 0;
    B->gdims[k] = ls[2 + k];
  }
  for (int k = 0; L.g && k < L.s.naxes; k++) {
    /* the vertex plane above the slab, from the neighbour that owns it (zeros past the crop's end, never
       used there): a point whose cell starts on this slab's last plane needs it. The second axis's
       exchange carries the first one's plane, so the corner vertex arrives too. */
    const SgparAxisSplit *q = &L.s.ax[k];
    SgnnTensor            hz, t;
    SgCallPar(sgpar_halo(L.g, q, B->t, 1, &hz));
    SgCallNN(sgnn_slice(hz, q->axis, 1, q->n + 2, &t));
    sgnn_tensor_free(&hz);
    sgnn_tensor_free(&B->t);
    B->t                     = t;
    B->origin[q->axis - 2] = q->offset;
    B->gdims[q->axis - 2]  = q->global;
  }
  for (int k = 0; k < 3; k++) PetscCheck(B->gdims[k] >= 2, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the latent grid needs >= 2 points per axis (has %d x %d x %d)", B->gdims[0], B->gdims[1], B->gdims[2]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgMFFNLatentBlockFree(SgMFFNLatentBlock *B)
{
  sgnn_tensor_free(&B->t);
}

/* The 8 corners of the latent cell holding each point: for corner q = 4 a + 2 b + e (offsets a, b, e
   in t, z, x) its flat vertex index in the block (dims ld from global index origin), its global
   coordinates and the point's cell base. The cell is clamped to the whole grid (gd) so a point on the
   last plane uses the cell below it (fraction 1); a point up to ext cells outside the grid
   (m->extrapolate, 0 in training) uses the edge cell, its fraction beyond [0, 1]: the trilinear blend
   extrapolates linearly. */
static PetscErrorCode Corners(const int gd[3], const int origin[3], const int ld[3], PetscReal ext, PetscInt P, const double *pts, long *idx, double *corner, double *base)
{
  PetscFunctionBegin;
  for (PetscInt p = 0; p < P; p++) {
    int i0[3];
    for (int k = 0; k < 3; k++) {
      double v = pts[3 * p + k];
      PetscCheck(v >= -ext && v <= gd[k] - 1 + ext, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: query point %" PetscInt_FMT " coordinate %d is %g, outside the latent grid [0, %d]%s", p, k, v, gd[k] - 1, ext > 0 ? " and its extrapolation band" : "");
      i0[k] = PetscMax(0, PetscMin((int)floor(v), gd[k] - 2));
      PetscCheck(i0[k] >= origin[k] && i0[k] + 1 < origin[k] + ld[k], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: query point %" PetscInt_FMT " (cell %d on axis %d) is not owned by this rank's latent block [%d, %d)", p, i0[k], k, origin[k], origin[k] + ld[k] - 1);
      base[3 * p + k] = i0[k];
    }
    for (int q = 0; q < 8; q++) {
      int c[3] = {i0[0] + (q >> 2 & 1), i0[1] + (q >> 1 & 1), i0[2] + (q & 1)};
      idx[8 * p + q] = ((long)(c[0] - origin[0]) * ld[1] + (c[1] - origin[1])) * ld[2] + (c[2] - origin[2]);
      for (int k = 0; k < 3; k++) corner[(8 * p + q) * 3 + k] = c[k];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDecode(SgMFFN m, SgnnTensor latent, SgnnTensor pts, SgnnTensor *out)
{
  SgMFFNLatentBlock B;

  PetscFunctionBegin;
  PetscCall(SgMFFNLatentBlockCreate(m, NULL, latent, &B));
  PetscCall(SgMFFNDecodeBlock(m, &B, pts, out));
  SgMFFNLatentBlockFree(&B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The blend weights [P, 8, 1] of the corners q = 4 a + 2 b + e: prod_k (offset_k ? w_k : 1 - w_k) of
   per-axis weights w_k of the fraction f_k = pts_k - base_k, differentiable in pts. hp NULL: w = f
   (trilinear; beyond the cell it extrapolates linearly). hp (the points on the host): w_t = f_t and
   the smoothstep w = s(f) = f^2 (3 - 2 f) in z and x, whose s' = 0 at the vertices makes a blended
   field C1 across cells (s(1 - f) = 1 - s(f): the same form serves both ends); beyond the cell f is
   held at 0 or 1, where the smoothstep would turn back. fac_out, w_out (NULL: not wanted): the
   per-corner fractions [P, 8, 3] (f or 1 - f) and the z, x weights [P, 8, 2]. */
static PetscErrorCode BlendWeights(SgMFFN m, PetscInt P, SgnnTensor pts, const double *base, const double *hp, SgnnTensor *wq, SgnnTensor *fac_out, SgnnTensor *w_out)
{
  int        s3[3] = {(int)P, 1, 3}, s8[3] = {(int)P, 8, 3}, sc[2] = {8, 3};
  double     sel[24], off[24], *fmul, *fadd;
  SgnnTensor fm, fa, fp, fr, fv, fx, S, O, fs, fac, fz, f1, f2, prod;

  PetscFunctionBegin;
  for (int q = 0; q < 8; q++)
    for (int k = 0; k < 3; k++) {
      int a = (q >> (2 - k)) & 1;
      sel[3 * q + k] = 2 * a - 1;
      off[3 * q + k] = 1 - a;
    }
  PetscCall(PetscMalloc2(3 * (size_t)P, &fmul, 3 * (size_t)P, &fadd));
  for (PetscInt p = 0; p < 3 * P; p++) {
    double f = hp ? hp[p] - base[p] : 0; /* trilinear weights are never clamped */
    if (hp && p % 3 && (f < 0 || f > 1)) {
      fmul[p] = 0;
      fadd[p] = f < 0 ? 0 : 1;
    } else {
      fmul[p] = 1;
      fadd[p] = -base[p];
    }
  }
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, (int[]){(int)P, 3}, fmul, &fm));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, (int[]){(int)P, 3}, fadd, &fa));
  SgCallNN(sgnn_mul(pts, fm, &fp));
  SgCallNN(sgnn_add(fp, fa, &fr));
  SgCallNN(sgnn_reshape(fr, 3, s3, &fv));
  SgCallNN(sgnn_expand(fv, 3, s8, &fx));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, sc, sel, &S));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, sc, off, &O));
  SgCallNN(sgnn_mul(fx, S, &fs));
  SgCallNN(sgnn_add(fs, O, &fac)); /* f or 1 - f */
  if (hp) {
    SgnnTensor zx, sq, lin;
    SgCallNN(sgnn_slice(fac, 2, 1, 3, &zx));
    SgCallNN(sgnn_mul(zx, zx, &sq));
    SgCallNN(sgnn_affine(zx, -2, 3, &lin));
    SgCallNN(sgnn_mul(sq, lin, &fz));
    sgnn_tensor_free(&zx);
    sgnn_tensor_free(&sq);
    sgnn_tensor_free(&lin);
  } else SgCallNN(sgnn_slice(fac, 2, 1, 3, &fz));
  SgCallNN(sgnn_slice(fac, 2, 0, 1, &f1));
  SgCallNN(sgnn_slice(fz, 2, 0, 1, &f2));
  SgCallNN(sgnn_mul(f1, f2, &prod));
  sgnn_tensor_free(&f1);
  sgnn_tensor_free(&f2);
  SgCallNN(sgnn_slice(fz, 2, 1, 2, &f1));
  SgCallNN(sgnn_mul(prod, f1, wq));
  if (fac_out) *fac_out = sgnn_tensor_ref(fac);
  if (w_out) *w_out = sgnn_tensor_ref(fz);
  SgnnTensor *frs[] = {&fm, &fa, &fp, &fr, &fv, &fx, &S, &O, &fs, &fac, &fz, &f1, &prod};
  for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  PetscCall(PetscFree2(fmul, fadd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = f[0] f[1] ... f[n-1] (elementwise, broadcasting; n >= 2) */
static PetscErrorCode Product(int n, const SgnnTensor *f, SgnnTensor *out)
{
  SgnnTensor acc, t;

  PetscFunctionBegin;
  SgCallNN(sgnn_mul(f[0], f[1], &acc));
  for (int i = 2; i < n; i++) {
    SgCallNN(sgnn_mul(acc, f[i], &t));
    sgnn_tensor_free(&acc);
    acc = t;
  }
  *out = acc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A residual stream model's baseline per corner [P, 8, 1] (summed with the corrections by the blend):
   the input's stream function interpolated by cubic Hermite in z and x (linear in t) from its values
   psi_in and its slopes A = d psi / d l_z = (u_hat - vel[2]) / vel[0], B = d psi / d l_x = (w_hat -
   vel[3]) / vel[1] at the corners:
     w_t [S_z S_x psi_in + r_z F_z^2 S_x A + S_z r_x F_x^2 B]
   with F = f or 1 - f the corner's fraction (fac), S = F^2 (3 - 2 F) (wzx: the value basis) and r the
   signed offset point - corner (rel: r F^2 is the slope basis f (1 - f)^2 or -f^2 (1 - f)). u and w
   are the input's at its points; where psi_in's increments equal the slopes' trapezoidal averages (a
   discretely divergence-free input), u is linear in z on the input's x columns and w linear in x on
   its z rows. It is C1 across cells (a face's values and
   normal slopes come from its own corners only) and divergence-free like any psi. */
static PetscErrorCode HermiteBase(SgMFFN m, PetscInt P, SgnnTensor fac, SgnnTensor wzx, SgnnTensor rel, SgnnTensor in3, SgnnTensor *hb)
{
  int        s8[3] = {(int)P, 8, 3};
  SgnnTensor r3, i3, rz, rx, uh, wh, pin, A, B, wt, Fz, Fx, Sz, Sx, t1, t2, t3, a1, sum;

  PetscFunctionBegin;
  SgCallNN(sgnn_reshape(rel, 3, s8, &r3));
  SgCallNN(sgnn_reshape(in3, 3, s8, &i3));
  SgCallNN(sgnn_slice(r3, 2, 1, 2, &rz));
  SgCallNN(sgnn_slice(r3, 2, 2, 3, &rx));
  SgCallNN(sgnn_slice(i3, 2, 0, 1, &uh));
  SgCallNN(sgnn_slice(i3, 2, 1, 2, &wh));
  SgCallNN(sgnn_slice(i3, 2, 2, 3, &pin));
  SgCallNN(sgnn_affine(uh, 1 / m->vel[0], -m->vel[2] / m->vel[0], &A));
  SgCallNN(sgnn_affine(wh, 1 / m->vel[1], -m->vel[3] / m->vel[1], &B));
  SgCallNN(sgnn_slice(fac, 2, 0, 1, &wt));
  SgCallNN(sgnn_slice(fac, 2, 1, 2, &Fz));
  SgCallNN(sgnn_slice(fac, 2, 2, 3, &Fx));
  SgCallNN(sgnn_slice(wzx, 2, 0, 1, &Sz));
  SgCallNN(sgnn_slice(wzx, 2, 1, 2, &Sx));
  { /* S_z S_x psi_in + r_z F_z^2 S_x A + S_z r_x F_x^2 B */
    SgnnTensor v[] = {Sz, Sx, pin}, za[] = {rz, Fz, Fz, Sx, A}, xb[] = {Sz, rx, Fx, Fx, B};
    PetscCall(Product(3, v, &t1));
    PetscCall(Product(5, za, &t2));
    PetscCall(Product(5, xb, &t3));
    SgCallNN(sgnn_add(t1, t2, &a1));
    SgCallNN(sgnn_add(a1, t3, &sum));
    sgnn_tensor_free(&t1);
    sgnn_tensor_free(&t2);
    sgnn_tensor_free(&t3);
    sgnn_tensor_free(&a1);
  }
  SgCallNN(sgnn_mul(sum, wt, hb));
  SgnnTensor *frs[] = {&r3, &i3, &rz, &rx, &uh, &wh, &pin, &A, &B, &wt, &Fz, &Fx, &Sz, &Sx, &sum};
  for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A stream model's velocity: u_hat, w_hat from the gradient of psi = the last of the blended outputs
   (y [P, 3] = p, b, psi) with respect to the leaf pts -> out [P, 4]. create_graph keeps u and w
   differentiable (in the weights for the loss, in pts for the PDE residual's derivatives). */
static PetscErrorCode VelocityFromStream(SgMFFN m, SgnnTensor y, SgnnTensor pts, int create_graph, SgnnTensor *out)
{
  SgnnTensor psi, g, gz, gx, pb, uw[4];

  PetscFunctionBegin;
  SgCallNN(sgnn_slice(y, 1, 2, 3, &psi));
  SgCallNN(sgnn_grad(1, &psi, NULL, 1, &pts, create_graph, &g)); /* points do not interact: row p is psi_p's gradient */
  SgCallNN(sgnn_slice(g, 1, 1, 2, &gz));
  SgCallNN(sgnn_slice(g, 1, 2, 3, &gx));
  SgCallNN(sgnn_slice(y, 1, 0, 2, &pb));
  uw[0] = pb;
  SgCallNN(sgnn_affine(gz, m->vel[0], m->vel[2], &uw[1]));
  SgCallNN(sgnn_affine(gx, m->vel[1], m->vel[3], &uw[2]));
  SgCallNN(sgnn_concat(3, uw, 1, out));
  SgnnTensor *frs[] = {&psi, &g, &gz, &gx, &pb, &uw[1], &uw[2]};
  for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDecodeBlock(SgMFFN m, const SgMFFNLatentBlock *B, SgnnTensor pts_in, SgnnTensor *out)
{
  const SgMFFNConfig *c  = &m->cfg;
  const int          *ls = sgnn_tensor_shape(B->t);
  const int           nout = (int)(c->out_channels - (c->stream ? 1 : 0));
  int                 dims[3], L, P, was = 1;
  long               *idx;
  double             *hp, *corner, *base;
  SgnnTensor          pts = pts_in, lat2, latT, codes, cor, rel, in0, h = NULL, y = NULL, yb = NULL;

  PetscFunctionBegin;
  PetscCheck(sgnn_tensor_ndim(pts) == 2 && sgnn_tensor_shape(pts)[1] == 3, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: query points are [P, 3]");
  PetscCheck(!c->stream || m->vel_set, PETSC_COMM_SELF, PETSC_ERR_ORDER, "mffn: a stream-function model needs its data's physics (SgMFFNSetPhysics) before decoding");
  if (c->stream) { /* u and w are derivatives in pts: record even at inference, on a leaf of our own if the caller's is not one */
    was = sgnn_set_grad_enabled(1);
    if (!sgnn_tensor_requires_grad(pts)) {
      SgCallNN(sgnn_tensor_clone(pts_in, &pts));
      SgCallNN(sgnn_tensor_set_requires_grad(pts, 1));
    } else pts = sgnn_tensor_ref(pts_in);
  }
  L = ls[1];
  P = sgnn_tensor_shape(pts)[0];
  for (int k = 0; k < 3; k++) dims[k] = ls[2 + k];
  PetscCall(PetscMalloc4(8 * (size_t)P, &idx, 3 * (size_t)P, &hp, 24 * (size_t)P, &corner, 3 * (size_t)P, &base));
  SgCallNN(sgnn_tensor_to_f64(pts, hp));
  PetscCall(Corners(B->gdims, B->origin, dims, m->extrapolate, P, hp, idx, corner, base));
  { /* latent codes of the 8 corners: [8P, L] */
    int s2[2] = {L, dims[0] * dims[1] * dims[2]};
    SgCallNN(sgnn_reshape(B->t, 2, s2, &lat2));
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
    SgnnTensor cat[2] = {rel, NULL};
    if (ImNetCodes(c) < L) SgCallNN(sgnn_slice(codes, 1, 0, (int)ImNetCodes(c), &cat[1]));
    else cat[1] = sgnn_tensor_ref(codes);
    SgCallNN(sgnn_concat(2, cat, 1, &in0));
    sgnn_tensor_free(&cat[1]);
    sgnn_tensor_free(&pv);
    sgnn_tensor_free(&px);
    sgnn_tensor_free(&rr);
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
  if (c->residual) { /* each corner's output corrects the input's value there: the blend is trilinear interpolation + a correction
                        (a stream model's p and b; its psi corrects the input's stream function, HermiteBase) */
    SgnnTensor xin, t;
    SgCallNN(sgnn_slice(codes, 1, (int)c->latent, (int)(c->latent + (c->stream ? 2 : c->in_channels)), &xin));
    if (c->stream) { /* p and b; psi's baseline is the input's stream function, added after the blend (HermiteBase) */
      SgnnTensor pb, psi, cat[2];
      SgCallNN(sgnn_slice(y, 1, 0, 2, &pb));
      SgCallNN(sgnn_slice(y, 1, 2, 3, &psi));
      SgCallNN(sgnn_add(pb, xin, &cat[0]));
      cat[1] = psi;
      SgCallNN(sgnn_concat(2, cat, 1, &t));
      sgnn_tensor_free(&pb);
      sgnn_tensor_free(&psi);
      sgnn_tensor_free(&cat[0]);
    } else SgCallNN(sgnn_add(y, xin, &t));
    sgnn_tensor_free(&y);
    sgnn_tensor_free(&xin);
    y = t;
  }
  { /* blend the 8 corners' outputs: trilinear weights, and for a stream model's psi the C1 ones */
    int        so[3] = {P, 8, nout};
    SgnnTensor ywr, yw3, wl;
    SgCallNN(sgnn_reshape(y, 3, so, &ywr));
    PetscCall(BlendWeights(m, P, pts, base, NULL, &wl, NULL, NULL));
    if (c->stream) {
      SgnnTensor ws, pb, psi, cat[2], fac = NULL, wzx = NULL;
      PetscCall(BlendWeights(m, P, pts, base, hp, &ws, c->residual ? &fac : NULL, c->residual ? &wzx : NULL));
      SgCallNN(sgnn_slice(ywr, 2, 0, 2, &pb));
      SgCallNN(sgnn_slice(ywr, 2, 2, 3, &psi));
      SgCallNN(sgnn_mul(pb, wl, &cat[0]));
      SgCallNN(sgnn_mul(psi, ws, &cat[1]));
      if (c->residual) { /* + the input's stream function, interpolated (Hermite) on its own */
        SgnnTensor in3, hb, t2;
        SgCallNN(sgnn_slice(codes, 1, (int)c->latent + 2, (int)c->latent + 5, &in3)); /* u_hat, w_hat, psi_in */
        PetscCall(HermiteBase(m, P, fac, wzx, rel, in3, &hb));
        SgCallNN(sgnn_add(cat[1], hb, &t2));
        sgnn_tensor_free(&cat[1]);
        sgnn_tensor_free(&in3);
        sgnn_tensor_free(&hb);
        cat[1] = t2;
      }
      SgCallNN(sgnn_concat(2, cat, 2, &yw3));
      SgnnTensor *frs[] = {&ws, &pb, &psi, &cat[0], &cat[1], &fac, &wzx};
      for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
    } else SgCallNN(sgnn_mul(ywr, wl, &yw3));
    SgCallNN(sgnn_sum(yw3, 1, (int[]){1}, 0, &yb)); /* [P, nout] */
    sgnn_tensor_free(&ywr);
    sgnn_tensor_free(&yw3);
    sgnn_tensor_free(&wl);
  }
  if (c->stream) {
    SgnnTensor o;
    PetscCall(VelocityFromStream(m, yb, pts, was, &o));
    if (!was) { /* the caller records nothing: hand back plain values */
      SgCallNN(sgnn_tensor_detach(o, out));
      sgnn_tensor_free(&o);
    } else *out = o;
    sgnn_tensor_free(&yb);
    sgnn_set_grad_enabled(was);
  } else *out = yb;
  SgnnTensor *frs[] = {&lat2, &latT, &codes, &cor, &rel, &in0, &y};
  for (size_t q = 0; q < sizeof frs / sizeof *frs; q++) sgnn_tensor_free(frs[q]);
  if (c->stream) sgnn_tensor_free(&pts);
  PetscCall(PetscFree4(idx, hp, corner, base));
  PetscFunctionReturn(PETSC_SUCCESS);
}
