/* MeshfreeFlowNet's evaluation (docs/mffn.md "Evaluation"; driven by eval.py in this folder): the
   whole-domain predictions of a model on held-out data, and the plain 3-D U-Net baseline trained on
   SgTrainer.

     test_bench_mffn_eval predict mffn MODEL.h5 DATA.h5 OUT.f64
     test_bench_mffn_eval predict unet MODEL.h5 DATA.h5 OUT.f64 [-unet_residual]
     test_bench_mffn_eval train-unet -unet_data A.h5 [-unet_* options] -unet_output MODEL.h5
     test_bench_mffn_eval project IN.f64 OUT.f64 SAMPLES NZ NX ROWS LZ LX
     test_bench_mffn_eval calibrate MODEL.h5 DATA.h5 OUT.h5 CT CZ CX CROPS POINTS SEED

   predict: every member run of DATA (field_snapshots, the grid of the training data) is cut into
   windows of 4 low-res snapshots (every factor-th fine snapshot, z row and x column, the whole
   domain: the training crops' extent in t and z, periodic in x), stepped by 3 low-res snapshots so
   windows share their end; every fine snapshot of the run is answered by the first window holding
   it, at every fine grid point inside the low-res hull in z (rows 0 .. factor (Z - 1); the rows above
   the last low-res row are NaN: no method was trained there). mffn answers through the slot kind's
   own entry point, SgFieldSuperresProviderCreate("mffn") (what a coarse run's field.superres gets:
   statistics, periodic halo, encoding, ImNet); unet through its own forward below. OUT: float64
   [samples][4][nz][nx] (p, b, u, w, physical), in DATA's sample order.

   The U-Net baseline ("a plain 3-D U-Net that outputs the fine grid", issue 17): MeshfreeFlowNet's
   encoder (SgMFFNEncode: the same bottleneck residual blocks, poolings and widths) whose last 1^3
   convolution has 4 ft fz fx channels, rearranged into the fine grid (sub-pixel convolution, Shi et
   al., CVPR 2016): fine point (i f + r) of each axis reads channel (c, r) of low-res cell i. With
   -unet_residual the output is added to trilinear interpolation of the low-res input and the last
   convolution starts at zero, as mffn's residual option. Trained with SgTrainer on mffn's own crops
   (SgMFFNDataCrop: the same high-res crops, low-res inputs, query points and L1 loss, no PDE term);
   the model file is an mffn file (SgMFFNSave) whose ImNet is unused.

   project: the divergence-free projection of a prediction's u, w (SgMFFNProjector, the one `mffn
   project` applies to the served field), so that every method's answer, trilinear's and the U-Net's
   included, can be evaluated projected too.

   calibrate: what -mffn_calibrate_crops does at the end of training (calibrate.c), applied to a model
   already trained: the least-squares gain of its correction on CROPS crops (CT x CZ x CX, the training
   crop) x POINTS points of DATA (the training data), folded into ImNet's last layer, saved as OUT. */
#include <math.h>
#include "sgmffn.h"
#include "sgmffndata.h"
#include "sgtrainer.h"
#include "sgsurrogate.h"
#include "sgfield.h"
#include "sgsys.h"

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_MFFN(SgSurrogate);

#define NW 4 /* low-res snapshots per window: the training crops' */
static const char *const Chan[4] = {"p", "b", "u", "w"}, *const Pname[2] = {"rayleigh", "prandtl"};

/* ---------- the U-Net baseline ---------- */
typedef struct {
  SgMFFN        m;
  SgMFFNPhysics ph;
  PetscInt      factor[3], F;
  PetscBool     residual;
} UNet;

/* flat index into the encoder's output [4F, T, Z, X] of channel c at fine position h (fine index
   units, inside the grid [0, f (n - 1)] + r) given the low-res cell shift ox in x */
static long SubPixel(const UNet *u, const int dims[3], int c, const PetscInt h[3])
{
  PetscInt i[3], r[3];
  for (int k = 0; k < 3; k++) {
    i[k] = PetscMin(h[k] / u->factor[k], dims[k] - 1);
    r[k] = h[k] - i[k] * u->factor[k];
  }
  const long ch = c * u->F + (r[0] * u->factor[1] + r[1]) * u->factor[2] + r[2];
  return ((ch * dims[0] + i[0]) * dims[1] + i[1]) * dims[2] + i[2];
}

/* the U-Net's fine grid at P fine points h [P][3] (fine index units of the low-res grid x
   [1, 4, T, Z, X]; pts the same in latent units), from the encoder's output lat = SgMFFNEncode(x)
   -> out [P, 4] normalised, differentiable in the weights */
static PetscErrorCode UNetForward(UNet *u, SgnnTensor x, SgnnTensor lat, PetscInt P, const PetscInt *h, const double *pts, SgnnTensor *out)
{
  const int *xs = sgnn_tensor_shape(x);
  int        dims[3] = {xs[2], xs[3], xs[4]}, flat[1], os[2] = {(int)P, 4};
  long      *idx;
  SgnnTensor lf, g, y;

  PetscFunctionBegin;
  flat[0] = (int)sgnn_tensor_numel(lat);
  SgCallNN(sgnn_reshape(lat, 1, flat, &lf));
  PetscCall(PetscMalloc1(4 * P, &idx));
  for (PetscInt p = 0; p < P; p++)
    for (int c = 0; c < 4; c++) idx[4 * p + c] = SubPixel(u, dims, c, h + 3 * p);
  SgCallNN(sgnn_index_select(lf, 0, 4 * P, idx, &g));
  SgCallNN(sgnn_reshape(g, 2, os, &y));
  if (u->residual) {
    int        ps[3] = {1, (int)P, 3};
    SgnnTensor pt, ti, t2;
    SgCallNN(sgnn_tensor_from_f64(u->m->be, u->m->dt, 3, ps, pts, &pt));
    SgCallNN(sgnn_interp_trilinear(x, pt, &ti));
    SgCallNN(sgnn_reshape(ti, 2, os, &t2));
    SgCallNN(sgnn_add(y, t2, out));
    sgnn_tensor_free(&pt);
    sgnn_tensor_free(&ti);
    sgnn_tensor_free(&t2);
    sgnn_tensor_free(&y);
  } else *out = y;
  sgnn_tensor_free(&lf);
  sgnn_tensor_free(&g);
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  UNet       u;
  SgMFFNData D;
  PetscInt   crop[3], npoints, seed;
} UNetTrain;

static PetscErrorCode UNetLoss(SgTrainer tr, void *ctx, PetscInt stream, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  UNetTrain *t = (UNetTrain *)ctx;
  PetscInt   lo[3], nlo, P = t->npoints, *h;
  double    *low, *pts, *tgt;
  SgnnTensor acc = NULL;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) lo[k] = t->crop[k] / t->u.factor[k];
  nlo = lo[0] * lo[1] * lo[2];
  PetscCall(PetscMalloc4(4 * nlo, &low, 3 * P, &pts, 4 * P, &tgt, 3 * P, &h));
  for (PetscInt i = 0; i < b->nlocal; i++) {
    int        xs[5] = {1, 4, (int)lo[0], (int)lo[1], (int)lo[2]}, ts[2] = {(int)P, 4};
    SgnnTensor x, lat, y, tg, l, s;
    double     v;
    PetscCall(SgMFFNDataCrop(&t->D, t->crop, t->u.factor, P, (uint64_t)t->seed, info->step, b->ids[i], low, pts, tgt));
    for (PetscInt p = 0; p < 3 * P; p++) h[p] = (PetscInt)floor(pts[p] * t->u.factor[p % 3] + 0.5);
    SgCallNN(sgnn_tensor_from_f64(t->u.m->be, SGNN_F64, 5, xs, low, &x));
    PetscCall(SgMFFNEncode(t->u.m, x, &lat));
    PetscCall(UNetForward(&t->u, x, lat, P, h, pts, &y));
    SgCallNN(sgnn_tensor_from_f64(t->u.m->be, SGNN_F64, 2, ts, tgt, &tg));
    SgCallNN(sgnn_l1_loss(y, tg, &l));
    SgCallNN(sgnn_tensor_item(l, &v));
    sums[0] += v;
    sums[1] += 1;
    if (acc) {
      SgCallNN(sgnn_add(acc, l, &s));
      sgnn_tensor_free(&acc);
      sgnn_tensor_free(&l);
      acc = s;
    } else acc = l;
    sgnn_tensor_free(&x);
    sgnn_tensor_free(&lat);
    sgnn_tensor_free(&y);
    sgnn_tensor_free(&tg);
  }
  *loss = acc;
  PetscCall(PetscFree4(low, pts, tgt, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode UNetMonitor(SgTrainer tr, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[])
{
  PetscFunctionBegin;
  cols[0] = sums[1] > 0 ? sums[0] / sums[1] : NAN;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TrainUNet(void)
{
  UNetTrain       t = {0};
  SgMFFNConfig    c;
  SgTrainer       tr;
  SgTrainerOps    ops    = {UNetLoss, NULL, UNetMonitor, NULL};
  const char     *cols[] = {"l1_fields"}, *fields[] = {"time"};
  char           *files[16], out[PETSC_MAX_PATH_LEN] = "unet.h5";
  PetscInt        nfiles = 16, n, iv[12], steps = 1000, batch = 4, disp = 50;
  PetscReal       lr = 1e-3, len[2] = {4, 1};
  PetscBool       set;
  SgnnOptimConfig oc;
  SgnnLRSchedule  sc = {0};
  SgnnBackend    *be;
  long            np;

  PetscFunctionBegin;
  PetscCall(SgMFFNConfigDefault(&c));
  c.nlevels = 2;
  c.channels[0] = 16;
  c.channels[1] = 32;
  c.channels[2] = 64;
  c.batchnorm = PETSC_FALSE;
  c.nmlp = 1;
  c.mlp[0] = 1;
  c.pool[0][0] = c.pool[1][0] = 1;
  c.pool[0][1] = c.pool[0][2] = c.pool[1][1] = c.pool[1][2] = 2;
  t.crop[0] = 16;
  t.crop[1] = 64;
  t.crop[2] = 64;
  t.u.factor[0] = t.u.factor[1] = t.u.factor[2] = 4;
  t.npoints = 512;
  t.seed = 1;
  PetscOptionsBegin(PETSC_COMM_WORLD, "unet_", "U-Net baseline of the MeshfreeFlowNet evaluation", "");
  PetscCall(SgOptionsStringArray("-data", "Training field_snapshots datasets", files, &nfiles, &set));
  PetscCheck(set && nfiles > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "test_bench_mffn_eval train-unet: give -unet_data A.h5[,B.h5]");
  n = 3;
  PetscCall(SgOptionsIntArray("-crop", "High-res crop t z x", t.crop, &n, NULL, 1, 4096));
  n = 3;
  PetscCall(SgOptionsIntArray("-factor", "Subsampling t z x", t.u.factor, &n, NULL, 1, 64));
  n = 3;
  PetscCall(SgOptionsIntArray("-channels", "U-Net widths", iv, &n, &set, 1, 4096));
  if (set) {
    c.nlevels = n - 1;
    for (PetscInt i = 0; i < n; i++) c.channels[i] = iv[i];
  }
  n = 12;
  PetscCall(SgOptionsIntArray("-pool", "Poolings t z x, flattened", iv, &n, &set, 1, 64));
  if (set)
    for (PetscInt i = 0; i < n; i++) c.pool[i / 3][i % 3] = iv[i];
  PetscCall(SgOptionsBool("-residual", "Add the output to trilinear interpolation of the low-res input", t.u.residual, &t.u.residual, NULL));
  PetscCall(SgOptionsInt("-points", "Query points per crop", t.npoints, &t.npoints, NULL, 1, 1 << 20));
  PetscCall(SgOptionsInt("-steps", "Training steps", steps, &steps, NULL, 1, 1 << 30));
  PetscCall(SgOptionsInt("-batch_size", "Crops per step", batch, &batch, NULL, 1, 1 << 20));
  PetscCall(SgOptionsInt("-disp_freq", "Steps between progress lines", disp, &disp, NULL, 1, 1 << 30));
  PetscCall(SgOptionsInt("-seed", "Seed", t.seed, &t.seed, NULL, 0, 1 << 30));
  PetscCall(SgOptionsReal("-start_lr", "Adam learning rate", "", lr, &lr, NULL, 0, 10));
  n = 2;
  PetscCall(SgOptionsRealArray("-length", "Lx Lz", "", len, &n, NULL, 1e-9, 1e9));
  PetscCall(SgOptionsString("-output", "Model file", out, out, sizeof out, NULL));
  PetscOptionsEnd();
  c.latent = 4 * t.u.factor[0] * t.u.factor[1] * t.u.factor[2];
  t.u.F = c.latent / 4;
  PetscCall(SgMFFNDataLoad(PETSC_COMM_WORLD, nfiles, (const char *const *)files, t.crop[0], &t.D));
  t.u.ph.nu = t.u.ph.kappa = 0; /* unused: no PDE term */
  t.u.ph.scale[0] = t.u.factor[0] * t.D.dt;
  t.u.ph.scale[1] = t.u.factor[1] * len[1] / t.D.nz;
  t.u.ph.scale[2] = t.u.factor[2] * len[0] / t.D.nx;
  for (int k = 0; k < 4; k++) {
    t.u.ph.mean[k] = t.D.mean[k];
    t.u.ph.std[k] = t.D.std[k];
  }
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &t.u.m));
  PetscCall(SgMFFNInitWeights(t.u.m, (unsigned long long)t.seed * 7919ULL + 1));
  if (t.u.residual) SgCallNN(sgnn_tensor_fill(t.u.m->out_w, 0.0)); /* starts at trilinear interpolation */
  SgCallNN(sgnn_params_count(t.u.m->P, &np));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "unet: %ld weights (a few unused: the mffn file's ImNet), %" PetscInt_FMT " snapshots, crops %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", factors %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT ", residual %s\n", np, t.D.nsamp, t.crop[0], t.crop[1], t.crop[2], t.u.factor[0], t.u.factor[1], t.u.factor[2], t.u.residual ? "yes" : "no"));
  PetscCall(SgTrainerCreate(PETSC_COMM_WORLD, &tr));
  PetscCall(SgTrainerSetName(tr, "unet"));
  PetscCall(SgTrainerSetOptionsPrefix(tr, "unet_"));
  PetscCall(SgTrainerSetModel(tr, t.u.m->P));
  PetscCall(SgTrainerSetOps(tr, &ops, &t));
  PetscCall(SgTrainerSetMetrics(tr, 2, 1, cols, "# step l1_fields lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 1, fields));
  PetscCall(SgTrainerAddStream(tr, nfiles, (const char *const *)files, t.D.nsamp, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, batch));
  PetscCall(SgTrainerSetSeed(tr, (uint64_t)t.seed));
  PetscCall(SgTrainerSetNumSteps(tr, steps));
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = lr;
  sc.kind = SGNN_LR_CONST;
  sc.lr0 = lr;
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, disp));
  PetscCall(SgTrainerSetFromOptions(tr)); /* -unet_plateau_*, -unet_clip_norm, -unet_sync */
  PetscCall(SgTrainerTrain(tr));
  PetscCall(SgTrainerDestroy(&tr));
  PetscCall(SgMFFNSave(t.u.m, &t.u.ph, t.u.factor, out));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "unet: wrote %s\n", out));
  PetscCall(SgMFFNDestroy(&t.u.m));
  PetscCall(SgMFFNDataFree(&t.D));
  for (PetscInt i = 0; i < nfiles; i++) PetscCall(PetscFree(files[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- whole-domain predictions ---------- */
typedef struct {
  const SgMFFNData *D;
  PetscInt          factor[3], lo[3]; /* lo: the low-res grid of the whole domain in z and x */
  PetscReal         len[2];
} Domain;

/* the low-res block of run r from fine snapshot s0 (NW snapshots), physical, and its coordinates */
static void CoarseBlock(const Domain *d, PetscInt s0, double *v, double *tc, double *zc, double *xc)
{
  const SgMFFNData *D = d->D;
  for (PetscInt i = 0; i < NW; i++) tc[i] = (s0 + d->factor[0] * i) * D->dt;
  for (PetscInt k = 0; k < d->lo[0]; k++) zc[k] = (d->factor[1] * k + 0.5) * d->len[1] / D->nz;
  for (PetscInt k = 0; k < d->lo[1]; k++) xc[k] = (d->factor[2] * k + 0.5) * d->len[0] / D->nx;
  for (int c = 0; c < 4; c++)
    for (PetscInt i = 0; i < NW; i++)
      for (PetscInt k = 0; k < d->lo[0]; k++)
        for (PetscInt j = 0; j < d->lo[1]; j++) v[((c * NW + i) * d->lo[0] + k) * d->lo[1] + j] = D->f[c][((size_t)(s0 + d->factor[0] * i) * D->nz + d->factor[1] * k) * D->nx + d->factor[2] * j];
}

/* The answer of a method for the fine snapshots [j0, j1) of a window starting at fine snapshot s0
   (all in one run), rows 0 .. nzh - 1, every column: vals[(jj * 4 + c) * nzh * nx + ...] */
typedef PetscErrorCode (*AnswerFn)(void *ctx, const Domain *, PetscInt s0, PetscInt j0, PetscInt j1, PetscInt nzh, double *vals);

typedef struct {
  SgFieldSuperresProvider p;
} MFFNCtx;

static PetscErrorCode AnswerMFFN(void *ctx, const Domain *d, PetscInt s0, PetscInt j0, PetscInt j1, PetscInt nzh, double *vals)
{
  MFFNCtx              *m = (MFFNCtx *)ctx;
  const SgMFFNData     *D = d->D;
  PetscReal            *v, *tc, *zc, *xc, *tq, *zq, *xq;
  SgFieldBlock          B;
  SgFieldQuery          Q = {PETSC_TRUE, 0, NULL, {j1 - j0, nzh, D->nx}, {NULL, NULL, NULL}};
  SgFieldSuperresInput  in;
  SgFieldSuperresOutput out;
  const PetscInt        nq = (j1 - j0) * nzh * D->nx;

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(4 * NW * d->lo[0] * d->lo[1], &v, NW, &tc, d->lo[0], &zc, d->lo[1], &xc));
  PetscCall(PetscMalloc4(j1 - j0, &tq, nzh, &zq, D->nx, &xq, 4 * nq, &out.v));
  CoarseBlock(d, s0, v, tc, zc, xc);
  for (PetscInt j = j0; j < j1; j++) tq[j - j0] = j * D->dt;
  for (PetscInt k = 0; k < nzh; k++) zq[k] = (k + 0.5) * d->len[1] / D->nz;
  for (PetscInt i = 0; i < D->nx; i++) xq[i] = (i + 0.5) * d->len[0] / D->nx;
  B.nch = 4;
  B.channel = Chan;
  B.n[0] = NW;
  B.n[1] = d->lo[0];
  B.n[2] = d->lo[1];
  B.coord[0] = tc;
  B.coord[1] = zc;
  B.coord[2] = xc;
  B.v = v;
  B.lo[0] = tc[0];
  B.hi[0] = tc[NW - 1];
  B.lo[1] = 0;
  B.hi[1] = d->len[1];
  B.lo[2] = 0;
  B.hi[2] = d->len[0];
  B.periodic[0] = B.periodic[1] = PETSC_FALSE;
  B.periodic[2] = PETSC_TRUE;
  Q.coord[0] = tq;
  Q.coord[1] = zq;
  Q.coord[2] = xq;
  in.coarse = &B;
  in.query = &Q;
  PetscCall(m->p.fn(m->p.ctx, &in, &out));
  for (PetscInt q = 0; q < nq; q++) { /* provider: [c][t][z][x]; here [t][c][z][x] */
    const PetscInt jj = q / (nzh * D->nx), r = q % (nzh * D->nx);
    for (int c = 0; c < 4; c++) vals[(jj * 4 + c) * nzh * D->nx + r] = out.v[c * nq + q];
  }
  PetscCall(PetscFree4(v, tc, zc, xc));
  PetscCall(PetscFree4(tq, zq, xq, out.v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the U-Net on the window: the block normalised and wrapped periodically in x by `halo` low-res
   columns on each side (as the mffn provider does), encoded once, every fine point gathered */
static PetscErrorCode AnswerUNet(void *ctx, const Domain *d, PetscInt s0, PetscInt j0, PetscInt j1, PetscInt nzh, double *vals)
{
  UNet             *u = (UNet *)ctx;
  const SgMFFNData *D = d->D;
  PetscInt          mult[3], halo, Xl = d->lo[1], Xe, Zl = d->lo[0], nx = D->nx, P = nzh * nx, *h;
  double           *v, *tc, *zc, *xc, *xb, *pts, *o;
  SgnnTensor        x, lat;

  PetscFunctionBegin;
  PetscCall(SgMFFNConfigGridMultiple(&u->m->cfg, mult));
  for (halo = 1; (Xl + 2 * halo) % mult[2]; halo++) {}
  Xe = Xl + 2 * halo;
  PetscCall(PetscMalloc4(4 * NW * Zl * Xl, &v, NW, &tc, Zl, &zc, Xl, &xc));
  PetscCall(PetscMalloc4(4 * NW * Zl * Xe, &xb, 3 * P, &pts, 3 * P, &h, 4 * P, &o));
  CoarseBlock(d, s0, v, tc, zc, xc);
  for (int c = 0; c < 4; c++)
    for (PetscInt k = 0; k < NW * Zl; k++)
      for (PetscInt i = 0; i < Xe; i++) xb[(c * NW * Zl + k) * Xe + i] = (v[(c * NW * Zl + k) * Xl + ((i - halo) % Xl + Xl) % Xl] - u->ph.mean[c]) / u->ph.std[c];
  {
    int xs[5] = {1, 4, NW, (int)Zl, (int)Xe}, was = sgnn_set_grad_enabled(0);
    SgCallNN(sgnn_tensor_from_f64(u->m->be, SGNN_F64, 5, xs, xb, &x));
    PetscCall(SgMFFNEncode(u->m, x, &lat));
    for (PetscInt j = j0; j < j1; j++) { /* one fine snapshot at a time: P points */
      SgnnTensor y;
      for (PetscInt k = 0; k < nzh; k++)
        for (PetscInt i = 0; i < nx; i++) {
          PetscInt p = k * nx + i;
          h[3 * p] = j - s0;
          h[3 * p + 1] = k;
          h[3 * p + 2] = i + halo * u->factor[2];
          for (int a = 0; a < 3; a++) pts[3 * p + a] = (double)h[3 * p + a] / u->factor[a];
        }
      PetscCall(UNetForward(u, x, lat, P, h, pts, &y));
      SgCallNN(sgnn_tensor_to_f64(y, o));
      sgnn_tensor_free(&y);
      for (PetscInt p = 0; p < P; p++)
        for (int c = 0; c < 4; c++) vals[((j - j0) * 4 + c) * P + p] = u->ph.mean[c] + u->ph.std[c] * o[4 * p + c];
    }
    sgnn_set_grad_enabled(was);
  }
  sgnn_tensor_free(&x);
  sgnn_tensor_free(&lat);
  PetscCall(PetscFree4(v, tc, zc, xc));
  PetscCall(PetscFree4(xb, pts, h, o));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every fine snapshot of every run of D by the method, windows of NW low-res snapshots stepped by
   NW - 1; written as float64 [nsamp][4][nz][nx], NaN above the hull */
static PetscErrorCode Predict(const Domain *d, AnswerFn fn, void *ctx, const char out[])
{
  const SgMFFNData *D = d->D;
  const PetscInt    ft = d->factor[0], span = ft * (NW - 1), nzh = d->factor[1] * (d->lo[0] - 1) + 1, plane = D->nz * D->nx;
  double           *all, *w;
  FILE             *fp;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2((size_t)D->nsamp * 4 * plane, &all, (size_t)(span + 1) * 4 * nzh * D->nx, &w));
  for (size_t i = 0; i < (size_t)D->nsamp * 4 * plane; i++) all[i] = NAN;
  for (PetscInt r = 0; r < D->nruns; r++) {
    const PetscInt L = D->run_len[r], first = D->run_start[r];
    PetscCheck(L >= span + 1 && (L - 1) % ft == 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "run %" PetscInt_FMT " has %" PetscInt_FMT " snapshots: the windows need 1 + %" PetscInt_FMT " k >= %" PetscInt_FMT, r, L, ft, span + 1);
    for (PetscInt j0 = 0; j0 < L;) { /* the window holding fine snapshot j0 first */
      const PetscInt s0 = PetscMin(j0 - j0 % ft, L - 1 - span), j1 = PetscMin(s0 + span + 1, L);
      PetscCall(fn(ctx, d, first + s0, first + j0, first + j1, nzh, w));
      for (PetscInt j = j0; j < j1; j++)
        for (int c = 0; c < 4; c++) PetscCall(PetscArraycpy(all + ((size_t)(first + j) * 4 + c) * plane, w + ((j - j0) * 4 + c) * nzh * D->nx, nzh * D->nx));
      j0 = j1;
    }
  }
  fp = fopen(out, "wb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", out);
  PetscCheck(fwrite(all, sizeof(double), (size_t)D->nsamp * 4 * plane, fp) == (size_t)D->nsamp * 4 * plane, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "short write %s", out);
  fclose(fp);
  PetscCall(PetscFree2(all, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PredictMain(const char method[], const char model[], const char data[], const char out[])
{
  SgMFFNData  D;
  Domain      d = {&D, {0, 0, 0}, {0, 0}, {4, 1}};
  SgnnBackend *be;
  UNet         u = {0};
  MFFNCtx      mc;
  PetscInt     mult[3];
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNLoad(model, be, &u.m, &u.ph, u.factor));
  PetscCall(SgMFFNDataLoad(PETSC_COMM_SELF, 1, &data, NW, &D));
  for (int k = 0; k < 3; k++) d.factor[k] = u.factor[k];
  d.len[1] = u.ph.scale[1] * D.nz / u.factor[1];
  d.len[0] = u.ph.scale[2] * D.nx / u.factor[2];
  PetscCheck(D.nz % u.factor[1] == 0 && D.nx % u.factor[2] == 0 && PetscAbsReal(u.ph.scale[0] - u.factor[0] * D.dt) < 1e-9, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: the data's grid (%" PetscInt_FMT " x %" PetscInt_FMT ", dt %g) does not fit the model's factors and steps", data, D.nz, D.nx, (double)D.dt);
  d.lo[0] = (D.nz - 1) / u.factor[1] + 1;
  d.lo[1] = D.nx / u.factor[2];
  PetscCall(SgMFFNConfigGridMultiple(&u.m->cfg, mult));
  PetscCheck(d.lo[0] % mult[1] == 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: %" PetscInt_FMT " low-res rows are not a multiple of the poolings' %" PetscInt_FMT, data, d.lo[0], mult[1]);
  PetscCall(PetscTime(&t0));
  if (!strcmp(method, "unet")) {
    u.F = u.factor[0] * u.factor[1] * u.factor[2];
    PetscOptionsBegin(PETSC_COMM_SELF, "unet_", "U-Net prediction", "");
    PetscCall(SgOptionsBool("-residual", "The model adds trilinear interpolation of the input (as it was trained)", u.residual, &u.residual, NULL));
    PetscOptionsEnd();
    PetscCheck(u.m->cfg.latent == 4 * u.F, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s is not a U-Net of this program (latent %" PetscInt_FMT ", expected 4 x %" PetscInt_FMT ")", model, u.m->cfg.latent, u.F);
    PetscCall(Predict(&d, AnswerUNet, &u, out));
  } else if (!strcmp(method, "mffn")) {
    PetscReal           par[2] = {1 / (u.ph.nu * u.ph.nu), 1}; /* the model's own Ra (Pr = 1): the evaluation may feed it another Ra's data */
    SgFieldProviderInfo info   = {PETSC_COMM_SELF, 4, Chan, 2, Pname, par, {0, 0, 0}, {0, d.len[1], d.len[0]}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "eval_", NULL};
    PetscCall(PetscOptionsSetValue(NULL, "-eval_mffn_model", model));
    PetscOptionsBegin(PETSC_COMM_SELF, "eval_", "mffn prediction", "");
    info.PetscOptionsObject = PetscOptionsObject;
    PetscCall(SgFieldSuperresProviderCreate("mffn", &info, &mc.p));
    PetscOptionsEnd();
    PetscCall(Predict(&d, AnswerMFFN, &mc, out));
    PetscCall(SgFieldSuperresProviderDestroy(&mc.p));
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "predict: method %s: mffn or unet", method);
  PetscCall(PetscTime(&t1));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "predict %s: %" PetscInt_FMT " snapshots of %" PetscInt_FMT " x %" PetscInt_FMT " from %s in %.1f s -> %s\n", method, D.nsamp, D.nz, D.nx, data, t1 - t0, out));
  PetscCall(SgMFFNDestroy(&u.m));
  PetscCall(SgMFFNDataFree(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* project: the divergence-free projection (SgMFFNProjector, what `mffn project` applies to the served
   field) of every snapshot's u, w in a prediction file [samples][4][nz][nx], rows 0 .. rows - 1 (the
   evaluated region; the rows above are copied as they are), z spacing lz / nz, x period lx */
static PetscErrorCode ProjectMain(const char *in, const char *out, PetscInt ns, PetscInt nz, PetscInt nx, PetscInt rows, PetscReal lz, PetscReal lx)
{
  SgMFFNProjector P;
  PetscReal      *a, *u, *w;
  FILE           *f;
  size_t          n = (size_t)ns * 4 * nz * nx;

  PetscFunctionBegin;
  PetscCheck(ns > 0 && nz > 0 && nx > 0 && rows > 0 && rows <= nz && lz > 0 && lx > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "project: samples, nz, nx, rows (<= nz), lz and lx must be positive");
  PetscCall(PetscMalloc3(n, &a, rows * nx, &u, rows * nx, &w));
  f = fopen(in, "rb");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "project: cannot read %s", in);
  PetscCheck(fread(a, sizeof *a, n, f) == n && fgetc(f) == EOF, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "project: %s does not hold %" PetscInt_FMT " x 4 x %" PetscInt_FMT " x %" PetscInt_FMT " doubles", in, ns, nz, nx);
  fclose(f);
  PetscCall(SgMFFNProjectorCreate(rows, nx, lz / nz, lx, &P));
  for (PetscInt s = 0; s < ns; s++) {
    PetscReal *us = a + (s * 4 + 2) * nz * nx, *ws = a + (s * 4 + 3) * nz * nx;
    PetscCall(PetscArraycpy(u, us, rows * nx));
    PetscCall(PetscArraycpy(w, ws, rows * nx));
    PetscCall(SgMFFNProjectorApply(P, 1, u, w));
    PetscCall(PetscArraycpy(us, u, rows * nx));
    PetscCall(PetscArraycpy(ws, w, rows * nx));
  }
  PetscCall(SgMFFNProjectorDestroy(&P));
  f = fopen(out, "wb");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "project: cannot write %s", out);
  PetscCheck(fwrite(a, sizeof *a, n, f) == n && !fclose(f), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "project: writing %s failed", out);
  PetscCall(PetscFree3(a, u, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* calibrate: the correction's gain of a trained model on its training data (calibrate.c), saved as a new
   model file; a[] = MODEL DATA OUT CT CZ CX CROPS POINTS SEED */
static PetscErrorCode CalibrateMain(char **a)
{
  SgnnBackend  *be;
  SgMFFN        m;
  SgMFFNPhysics ph;
  SgMFFNData    D;
  PetscInt      factor[3], crop[3] = {atol(a[3]), atol(a[4]), atol(a[5])};
  PetscReal     g[SG_MFFN_NGAIN];
  const char   *files[1] = {a[1]};

  PetscFunctionBegin;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNLoad(a[0], be, &m, &ph, factor));
  PetscCall(SgMFFNDataLoad(PETSC_COMM_SELF, 1, files, crop[0], &D));
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    D.mean[c] = ph.mean[c];
    D.std[c] = ph.std[c];
  } /* the model's normalisation */
  PetscCall(SgMFFNCorrectionGain(m, &D, crop, factor, atol(a[6]), atol(a[7]), (uint64_t)atol(a[8]), g));
  PetscCall(SgMFFNScaleCorrection(m, g));
  PetscCall(SgMFFNSave(m, &ph, factor, a[2]));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "calibrate %s on %s (%s crops x %s points): gains p %.4f, b %.4f, u and w %.4f -> %s\n", a[0], a[1], a[6], a[7], (double)g[0], (double)g[1], (double)g[2], a[2]));
  PetscCall(SgMFFNDataFree(&D));
  PetscCall(SgMFFNDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(SgSurrogateRegister("mffn", SgSurrogateCreate_MFFN));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_mffn_eval predict mffn|unet MODEL DATA OUT | train-unet -unet_data ...");
  if (!strcmp(argv[1], "predict")) {
    PetscCheck(argc >= 6, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_mffn_eval predict mffn|unet MODEL.h5 DATA.h5 OUT.f64");
    PetscCall(PredictMain(argv[2], argv[3], argv[4], argv[5]));
  } else if (!strcmp(argv[1], "train-unet")) PetscCall(TrainUNet());
  else if (!strcmp(argv[1], "project")) {
    PetscCheck(argc >= 10, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_mffn_eval project IN.f64 OUT.f64 SAMPLES NZ NX ROWS LZ LX");
    PetscCall(ProjectMain(argv[2], argv[3], atol(argv[4]), atol(argv[5]), atol(argv[6]), atol(argv[7]), atof(argv[8]), atof(argv[9])));
  } else if (!strcmp(argv[1], "calibrate")) {
    PetscCheck(argc >= 11, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_bench_mffn_eval calibrate MODEL.h5 DATA.h5 OUT.h5 CT CZ CX CROPS POINTS SEED");
    PetscCall(CalibrateMain(argv + 2));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown mode %s: predict, train-unet, project or calibrate", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
