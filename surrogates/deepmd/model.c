/* Deep Potential model: configuration, parameters (one sgnn slab), initialisation as DeePMD-kit,
   host copies for inference, and the HDF5 model file. */
#include <math.h>
#include "deepmd.h"
#include "sgdataset.h"
#include "sgh5file.h"
#include "sgnnbackend.h"
#include "sgdeepmd.h" /* SgDeepmdCompress */

PetscErrorCode SgDPConfigFinish(SgDPConfig *c)
{
  PetscFunctionBegin;
  PetscCheck(c->ntypes >= 1 && c->ntypes <= SG_DP_MAXT, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: %" PetscInt_FMT " atom types; 1..%d supported", c->ntypes, SG_DP_MAXT);
  PetscCheck(c->rcut > 0 && c->rcut_smth >= 0 && c->rcut_smth < c->rcut, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: need 0 <= rcut_smth (%g) < rcut (%g)", (double)c->rcut_smth, (double)c->rcut);
  PetscCheck(c->nemb >= 1 && c->nemb <= SG_DP_MAXL && c->nfit >= 1 && c->nfit <= SG_DP_MAXL, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: 1..%d embedding and fitting layers supported (got %" PetscInt_FMT ", %" PetscInt_FMT ")", SG_DP_MAXL, c->nemb, c->nfit);
  PetscCheck(c->axis >= 1 && c->axis <= c->emb[c->nemb - 1], PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: axis_neuron %" PetscInt_FMT " must be in 1..%" PetscInt_FMT " (the last embedding width)", c->axis, c->emb[c->nemb - 1]);
  c->sec[0] = 0;
  for (PetscInt t = 0; t < c->ntypes; t++) {
    PetscCheck(c->sel[t] >= 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: sel[%" PetscInt_FMT "] = %" PetscInt_FMT " must be >= 1", t, c->sel[t]);
    c->sec[t + 1] = c->sec[t] + c->sel[t];
  }
  c->nnei = c->sec[c->ntypes];
  PetscCheck(c->act >= 0 && c->act < SG_DP_NACT && c->fit_act >= 0 && c->fit_act < SG_DP_NACT, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: unknown activation function");
  for (PetscInt a = 0; a < SG_DP_MAXT; a++)
    for (PetscInt b = 0; b < SG_DP_MAXT; b++) PetscCheck(!c->excl[a][b] || (a < c->ntypes && b < c->ntypes), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: exclude_types names type %" PetscInt_FMT ", but there are %" PetscInt_FMT " types (0..%" PetscInt_FMT ")", PetscMax(a, b), c->ntypes, c->ntypes - 1);
  /* DeePMD-kit's se_r embeds an excluded neighbour's zeroed row (G(0) != 0); surge drops the row */
  PetscCheck(!c->radial || !SgDPHasExclusions(c), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: exclude_types with the se_e2_r descriptor is not supported (DeePMD-kit embeds the excluded rows there, surge drops them): use se_e2_a or no exclusions");
  if (!c->precision) c->precision = 64;
  PetscCheck(c->precision == 32 || c->precision == 64, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: precision %" PetscInt_FMT " bits: use float64 or float32", c->precision);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt ResKind(PetscInt in, PetscInt out)
{
  return out == in ? 1 : (out == 2 * in ? 2 : 0);
}

PetscErrorCode SgDPModelCreate(const SgDPConfig *cfg, SgDPModel *mm)
{
  SgDPModel m;
  char      name[64];

  PetscFunctionBegin;
  PetscCall(PetscNew(&m));
  m->cfg = *cfg;
  PetscCall(SgDPConfigFinish(&m->cfg));
  const SgDPConfig *c = &m->cfg;
  PetscCall(SgNNBackendFromOptions(PETSC_COMM_SELF, &m->be)); /* -nn_backend (refused where not available) */
  SgNN(sgnn_params_create(m->be, SgDPDType(m), &m->P));
  /* embedding nets in index order (SgDPEmbedIndex): per neighbour type t, or per pair ct*ntypes+t */
  for (PetscInt t = 0; t < SgDPNumEmbed(c); t++) {
    PetscInt in = 1;
    for (PetscInt l = 0; l < c->nemb; l++) {
      int ws[2] = {(int)c->emb[l], (int)in}, bs[1] = {(int)c->emb[l]};
      PetscCall(PetscSNPrintf(name, sizeof name, "emb%d.%d.W", (int)t, (int)l));
      SgNN(sgnn_params_add(m->P, name, 2, ws, &m->eW[t][l]));
      PetscCall(PetscSNPrintf(name, sizeof name, "emb%d.%d.b", (int)t, (int)l));
      SgNN(sgnn_params_add(m->P, name, 1, bs, &m->eb[t][l]));
      if (c->emb_resnet_dt && ResKind(in, c->emb[l])) {
        PetscCall(PetscSNPrintf(name, sizeof name, "emb%d.%d.idt", (int)t, (int)l));
        SgNN(sgnn_params_add(m->P, name, 1, bs, &m->eidt[t][l]));
      }
      in = c->emb[l];
    }
  }
  for (PetscInt t = 0; t < c->ntypes; t++) {
    PetscInt in = SgDPDescDim(c);
    for (PetscInt l = 0; l <= c->nfit; l++) {
      PetscInt out = l < c->nfit ? c->fit[l] : 1;
      int      ws[2] = {(int)out, (int)in}, bs[1] = {(int)out};
      PetscCall(PetscSNPrintf(name, sizeof name, "fit%d.%d.W", (int)t, (int)l));
      SgNN(sgnn_params_add(m->P, name, 2, ws, &m->fW[t][l]));
      PetscCall(PetscSNPrintf(name, sizeof name, "fit%d.%d.b", (int)t, (int)l));
      SgNN(sgnn_params_add(m->P, name, 1, bs, &m->fb[t][l]));
      if (l > 0 && l < c->nfit && out == in && c->fit_resnet_dt) {
        PetscCall(PetscSNPrintf(name, sizeof name, "fit%d.%d.idt", (int)t, (int)l));
        SgNN(sgnn_params_add(m->P, name, 1, bs, &m->fidt[t][l]));
      }
      in = out;
    }
  }
  SgNN(sgnn_params_setup(m->P));
  for (PetscInt t = 0; t < c->ntypes; t++) {
    for (int k = 0; k < 4; k++) {
      m->davg[t][k] = 0;
      m->dstd[t][k] = 1;
    }
    m->bias[t] = 0;
  }
  *mm = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same model with its weights in another precision (rounded when narrowed): training in float32
   from a float64 model file, as DeePMD-kit's precision option; statistics carried over. */
PetscErrorCode SgDPModelSetPrecision(SgDPModel *mm, PetscInt bits)
{
  SgDPModel  m = *mm, n;
  SgDPConfig c = m->cfg;
  long       np;
  double    *slab;

  PetscFunctionBegin;
  if (c.precision == bits) PetscFunctionReturn(PETSC_SUCCESS);
  c.precision = bits;
  PetscCall(SgDPModelCreate(&c, &n));
  SgNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), slab));
  SgNN(sgnn_tensor_set_f64(sgnn_params_values(n->P), slab));
  PetscCall(PetscFree(slab));
  PetscCall(PetscArraycpy(&n->davg[0][0], &m->davg[0][0], SG_DP_MAXT * 4));
  PetscCall(PetscArraycpy(&n->dstd[0][0], &m->dstd[0][0], SG_DP_MAXT * 4));
  PetscCall(PetscArraycpy(n->bias, m->bias, SG_DP_MAXT));
  PetscCall(SgDPModelSync(n));
  PetscCall(SgDPModelDestroy(&m));
  *mm = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DeePMD-kit's initialisation: W ~ N(0, 1/sqrt(in+out)), b ~ N(0, 1), idt ~ N(0.1, 0.001) */
PetscErrorCode SgDPModelInitWeights(SgDPModel m, unsigned long long seed)
{
  SgnnRng r;

  PetscFunctionBegin;
  sgnn_rng_init(&r, seed);
  for (int i = 0; i < sgnn_params_num(m->P); i++) {
    SgnnTensor  p  = sgnn_params_get(m->P, i);
    const char *nm = sgnn_params_name(m->P, i);
    size_t      L  = strlen(nm);
    if (nm[L - 1] == 'W') {
      const int *s = sgnn_tensor_shape(p);
      SgNN(sgnn_init_normal(p, 0.0, 1.0 / sqrt((double)(s[0] + s[1])), &r));
    } else if (nm[L - 1] == 'b') SgNN(sgnn_init_normal(p, 0.0, 1.0, &r));
    else SgNN(sgnn_init_normal(p, 0.1, 0.001, &r));
  }
  PetscCall(SgDPModelSync(m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const PetscReal *Take(SgnnTensor T, PetscReal *host, long *off)
{
  if (!T) return NULL;
  if (sgnn_tensor_to_f64(T, host + *off)) return NULL;
  *off += sgnn_tensor_numel(T);
  return host + *off - sgnn_tensor_numel(T);
}

PetscErrorCode SgDPModelSync(SgDPModel m)
{
  const SgDPConfig *c = &m->cfg;
  long              np, off = 0;

  PetscFunctionBegin;
  SgNN(sgnn_params_count(m->P, &np));
  if (!m->host) PetscCall(PetscMalloc1(np, &m->host));
#define TAKE(T) Take(T, m->host, &off)
  for (PetscInt t = 0; t < SgDPNumEmbed(c); t++) {
    PetscInt in = 1;
    m->enet[t].nl = c->nemb;
    for (PetscInt l = 0; l < c->nemb; l++) {
      SgDPLayer *L = &m->enet[t].l[l];
      L->in = in;
      L->out = c->emb[l];
      L->res = ResKind(in, c->emb[l]);
      L->act = PETSC_TRUE;
      L->fn = c->act;
      L->W = TAKE(m->eW[t][l]);
      L->b = TAKE(m->eb[t][l]);
      L->idt = TAKE(m->eidt[t][l]);
      in = c->emb[l];
    }
  }
  for (PetscInt t = 0; t < c->ntypes; t++) {
    PetscInt in = SgDPDescDim(c);
    m->fnet[t].nl = c->nfit + 1;
    for (PetscInt l = 0; l <= c->nfit; l++) {
      SgDPLayer *L = &m->fnet[t].l[l];
      PetscInt   out = l < c->nfit ? c->fit[l] : 1;
      L->in = in;
      L->out = out;
      L->res = (l > 0 && l < c->nfit && out == in) ? 1 : 0;
      L->act = l < c->nfit;
      L->fn = l < c->nfit ? c->fit_act : SG_DP_LINEAR;
      L->W = TAKE(m->fW[t][l]);
      L->b = TAKE(m->fb[t][l]);
      L->idt = TAKE(m->fidt[t][l]);
      in = out;
    }
  }
#undef TAKE
  PetscCheck(off == np, PETSC_COMM_SELF, PETSC_ERR_PLIB, "deepmd: parameter count mismatch %ld vs %ld", off, np);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPModelDestroy(SgDPModel *mm)
{
  SgDPModel m = *mm;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  sgnn_params_destroy(&m->P);
  PetscCall(PetscFree(m->host));
  PetscCall(PetscFree2(m->sdavg, m->sdstd));
  for (PetscInt t = 0; t < SG_DP_MAXE; t++) PetscCall(PetscFree(m->tab.c[t]));
  PetscCall(PetscFree(m));
  *mm = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the contents of a model file (SgDPModelCheckpointCreate) but Adam's moments (the trainer's) */
static PetscErrorCode WriteModel(SgH5File f, SgDPModel m, const char tm[], const double *slab, long np, const SgDPTrainState *ts)
{
  const SgDPConfig *c = &m->cfg;
  double            st[SG_DP_MAXT * 4];
  int               iv[SG_DP_MAXL];

  PetscFunctionBegin;
  PetscCall(SgH5FileWriteAttrString(f, "/", "type_map", tm));
  PetscCall(SgH5FileWriteAttrString(f, "/", "surge_model", c->radial ? "deepmd_se_e2_r" : "deepmd_se_e2_a"));
  {
    int    ver = 1, ax = (int)c->axis, r1 = c->emb_resnet_dt, r2 = c->fit_resnet_dt, seed = (int)c->seed, one_side = !c->type_pair;
    double rc = c->rcut, rs = c->rcut_smth;
    PetscCall(SgH5FileWriteAttr(f, "/", "version", SG_H5_INT, 0, &ver));
    PetscCall(SgH5FileWriteAttr(f, "/", "rcut", SG_H5_DOUBLE, 0, &rc));
    PetscCall(SgH5FileWriteAttr(f, "/", "rcut_smth", SG_H5_DOUBLE, 0, &rs));
    for (PetscInt t = 0; t < c->ntypes; t++) iv[t] = (int)c->sel[t];
    PetscCall(SgH5FileWriteAttr(f, "/", "sel", SG_H5_INT, c->ntypes, iv));
    for (PetscInt l = 0; l < c->nemb; l++) iv[l] = (int)c->emb[l];
    PetscCall(SgH5FileWriteAttr(f, "/", "neuron", SG_H5_INT, c->nemb, iv));
    for (PetscInt l = 0; l < c->nfit; l++) iv[l] = (int)c->fit[l];
    PetscCall(SgH5FileWriteAttr(f, "/", "fitting_neuron", SG_H5_INT, c->nfit, iv));
    PetscCall(SgH5FileWriteAttr(f, "/", "axis_neuron", SG_H5_INT, 0, &ax));
    PetscCall(SgH5FileWriteAttr(f, "/", "resnet_dt_embedding", SG_H5_INT, 0, &r1));
    PetscCall(SgH5FileWriteAttr(f, "/", "resnet_dt_fitting", SG_H5_INT, 0, &r2));
    PetscCall(SgH5FileWriteAttr(f, "/", "seed", SG_H5_INT, 0, &seed));
    PetscCall(SgH5FileWriteAttr(f, "/", "type_one_side", SG_H5_INT, 0, &one_side));
    /* DeePMD-kit features of imported models, written only where they differ from surge's defaults
       (a file without them is read as before) */
    if (c->act != SG_DP_TANH) PetscCall(SgH5FileWriteAttrString(f, "/", "activation_function", SgDPActNames[c->act]));
    if (c->fit_act != SG_DP_TANH) PetscCall(SgH5FileWriteAttrString(f, "/", "fitting_activation_function", SgDPActNames[c->fit_act]));
    if (SgDPHasExclusions(c)) {
      int ex[2 * SG_DP_MAXT * SG_DP_MAXT], ne = 0;
      for (PetscInt a = 0; a < c->ntypes; a++)
        for (PetscInt b = a; b < c->ntypes; b++)
          if (c->excl[a][b]) ex[2 * ne] = (int)a, ex[2 * ne + 1] = (int)b, ne++;
      PetscCall(SgH5FileWriteAttr(f, "/", "exclude_types", SG_H5_INT, 2 * ne, ex));
    }
    if (m->tab.on) { /* a compressed model (surge model compress): the table is rebuilt from these on load */
      double cs[2] = {m->tab.step, m->tab.rmin};
      PetscCall(SgH5FileWriteAttr(f, "/", "compress", SG_H5_DOUBLE, 2, cs));
    }
  }
  {
    PetscInt64 d1[1] = {np}, d2[2] = {c->ntypes, 4}, d3[1] = {c->ntypes};
    PetscBool single = PETSC_TRUE; /* weights of a float32 training are exact in f32: half the file */
    for (long i = 0; i < np && single; i++) single = (double)(float)slab[i] == slab[i] ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(SgH5FileWrite(f, "params", single ? SG_H5_DOUBLE_AS_F32 : SG_H5_DOUBLE, 1, d1, slab));
    if (m->sdavg) { /* per-slot statistics [ntypes, nnei, 4] */
      PetscInt64 d3s[3] = {c->ntypes, c->nnei, 4};
      PetscCall(SgH5FileWrite(f, "davg", SG_H5_DOUBLE, 3, d3s, m->sdavg));
      PetscCall(SgH5FileWrite(f, "dstd", SG_H5_DOUBLE, 3, d3s, m->sdstd));
    } else {
      for (PetscInt t = 0; t < c->ntypes; t++)
        for (int k = 0; k < 4; k++) st[4 * t + k] = m->davg[t][k];
      PetscCall(SgH5FileWrite(f, "davg", SG_H5_DOUBLE, 2, d2, st));
      for (PetscInt t = 0; t < c->ntypes; t++)
        for (int k = 0; k < 4; k++) st[4 * t + k] = m->dstd[t][k];
      PetscCall(SgH5FileWrite(f, "dstd", SG_H5_DOUBLE, 2, d2, st));
    }
    PetscCall(SgH5FileWrite(f, "bias_atom_e", SG_H5_DOUBLE, 1, d3, m->bias));
  }
  if (ts) {
    long       lv[2] = {ts->step, ts->optim_step};
    int        rk    = (int)ts->ranks;
    PetscCall(SgH5FileCreateGroup(f, "training"));
    PetscCall(SgH5FileWriteAttr(f, "training", "step", SG_H5_LONG, 0, &lv[0]));
    PetscCall(SgH5FileWriteAttr(f, "training", "optim_step", SG_H5_LONG, 0, &lv[1]));
    PetscCall(SgH5FileWriteAttr(f, "training", "ranks", SG_H5_INT, 0, &rk));
    if (ts->frames >= 0) {
      long fr = ts->frames;
      int  ns = (int)ts->systems;
      PetscCall(SgH5FileWriteAttr(f, "training", "data_frames", SG_H5_LONG, 0, &fr));
      PetscCall(SgH5FileWriteAttr(f, "training", "data_systems", SG_H5_INT, 0, &ns));
    }
    if (ts->options) PetscCall(SgH5FileWriteAttrText(f, "training", "options", ts->options));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- HDF5 model file --------------------------------------------------------------------------
   /  attrs: surge_model = "deepmd_se_e2_a", version = 1, type_map (comma list), rcut, rcut_smth,
             sel[], neuron[], axis_neuron, fitting_neuron[], resnet_dt_embedding, resnet_dt_fitting,
             type_one_side (1: embedding nets per neighbour type; 0: per (centre, neighbour) pair;
             absent in files before it: 1)
   /params [np] f64   the parameter slab, in the order SgDPModelCreate declares it; stored as f32 when
             every value is exact in single precision (a float32 training), read back as the same f64
   /davg, /dstd [ntypes,4] f64  environment statistics;  /bias_atom_e [ntypes] f64
   /training (checkpoints of save_ckpt only)  attrs step, optim_step, ranks, data_frames,
             data_systems, options (the training's options, text); /training/adam_m,
             /training/adam_v [np] f64 (Adam's moments, written by the trainer into the open file:
             SgTrainerWriteMoments)  -- what `restart` needs besides the model */
PetscErrorCode SgDPModelCheckpointCreate(SgDPModel m, const char path[], const SgDPTrainState *ts, SgH5File *file)
{
  const SgDPConfig *c = &m->cfg;
  PetscErrorCode    ierr;
  long              np;
  double           *slab;
  char              tm[SG_DP_MAXT * 17] = "";
  SgH5File          f;

  PetscFunctionBegin;
  *file = NULL;
  SgNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), slab));
  ierr = SgTrustWeights("deepmd", path, np, slab); /* a diverged training writes no model */
  if (ierr) PetscCall(PetscFree(slab));
  PetscCall(ierr);
  for (PetscInt t = 0; t < c->ntypes; t++) {
    if (t) PetscCall(PetscStrlcat(tm, ",", sizeof tm));
    PetscCall(PetscStrlcat(tm, c->type_map[t], sizeof tm));
  }
  ierr = SgH5FileCreate(path, ts ? SG_FILE_NN_CHECKPOINT : SG_FILE_MODEL, &f); /* PATH.tmp, committed at close: never a broken model */
  if (!ierr) {
    ierr = WriteModel(f, m, tm, slab, np, ts);
    if (ierr) PetscCall(SgH5FileDiscard(&f)); /* no PATH.tmp left behind */
  }
  PetscCall(PetscFree(slab));
  PetscCall(ierr);
  *file = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPModelSave(SgDPModel m, const char path[])
{
  SgH5File f;

  PetscFunctionBegin;
  PetscCall(SgDPModelCheckpointCreate(m, path, NULL, &f));
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPModelLoad(const char path[], SgDPModel *mm)
{
  SgDPConfig c;
  SgDPModel  m;
  SgH5File   f;
  int        iv[SG_DP_MAXL], ax, r1, r2, seed, ver;
  PetscInt   n;
  char       tm[SG_DP_MAXT * 17 + 1], kind[64];
  long       np;
  double    *slab, st[SG_DP_MAXT * 4], cs[2];
  PetscBool  has;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof c));
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileHasAttr(f, "/", "surge_model", &has));
  if (!has) {
    PetscCall(SgH5FileClose(&f));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s is no surge model file (no attribute surge_model): give a model written by surge train or SgSurrogateSave", path);
  }
  PetscCall(SgH5FileReadAttrString(f, "/", "surge_model", kind, sizeof kind));
  PetscCall(SgH5FileReadAttr(f, "/", "version", SG_H5_INT, 1, &ver, NULL));
  PetscCheck((!strcmp(kind, "deepmd_se_e2_a") || !strcmp(kind, "deepmd_se_e2_r")) && ver == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s holds model '%s' version %d, expected deepmd_se_e2_a or deepmd_se_e2_r version 1", path, kind, ver);
  c.radial = (PetscBool)!strcmp(kind, "deepmd_se_e2_r");
  PetscCall(SgH5FileReadAttrString(f, "/", "type_map", tm, sizeof tm));
  PetscCall(SgH5FileReadAttr(f, "/", "rcut", SG_H5_DOUBLE, 1, &c.rcut, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "rcut_smth", SG_H5_DOUBLE, 1, &c.rcut_smth, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "sel", SG_H5_INT, SG_DP_MAXT, iv, &n));
  c.ntypes = n;
  for (PetscInt t = 0; t < c.ntypes; t++) c.sel[t] = iv[t];
  PetscCall(SgH5FileReadAttr(f, "/", "neuron", SG_H5_INT, SG_DP_MAXL, iv, &n));
  c.nemb = n;
  for (PetscInt l = 0; l < c.nemb; l++) c.emb[l] = iv[l];
  PetscCall(SgH5FileReadAttr(f, "/", "fitting_neuron", SG_H5_INT, SG_DP_MAXL, iv, &n));
  c.nfit = n;
  for (PetscInt l = 0; l < c.nfit; l++) c.fit[l] = iv[l];
  PetscCall(SgH5FileReadAttr(f, "/", "axis_neuron", SG_H5_INT, 1, &ax, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "resnet_dt_embedding", SG_H5_INT, 1, &r1, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "resnet_dt_fitting", SG_H5_INT, 1, &r2, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "seed", SG_H5_INT, 1, &seed, NULL));
  PetscCall(SgH5FileHasAttr(f, "/", "type_one_side", &has)); /* absent in files before it: one side */
  if (has) {
    int one_side;
    PetscCall(SgH5FileReadAttr(f, "/", "type_one_side", SG_H5_INT, 1, &one_side, NULL));
    c.type_pair = (PetscBool)!one_side;
  }
  c.axis = ax;
  c.emb_resnet_dt = (PetscBool)r1;
  c.fit_resnet_dt = (PetscBool)r2;
  c.seed = seed;
  for (int w = 0; w < 2; w++) { /* activations other than tanh (imported models) */
    const char *key = w ? "fitting_activation_function" : "activation_function";
    char        an[32];
    PetscInt    fn = -1;
    PetscCall(SgH5FileHasAttr(f, "/", key, &has));
    if (!has) continue;
    PetscCall(SgH5FileReadAttrString(f, "/", key, an, sizeof an));
    for (PetscInt q = 0; q < SG_DP_NACT; q++)
      if (!strcmp(an, SgDPActNames[q])) fn = q;
    PetscCheck(fn >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s: unknown %s '%s'", path, key, an);
    if (w) c.fit_act = fn;
    else c.act = fn;
  }
  PetscCall(SgH5FileHasAttr(f, "/", "exclude_types", &has));
  if (has) {
    int      ex[2 * SG_DP_MAXT * SG_DP_MAXT];
    PetscInt ne;
    PetscCall(SgH5FileReadAttr(f, "/", "exclude_types", SG_H5_INT, 2 * SG_DP_MAXT * SG_DP_MAXT, ex, &ne));
    for (PetscInt q = 0; q + 1 < ne; q += 2) {
      PetscCheck(ex[q] >= 0 && ex[q] < c.ntypes && ex[q + 1] >= 0 && ex[q + 1] < c.ntypes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s: exclude_types names a type outside 0..%" PetscInt_FMT, path, c.ntypes - 1);
      c.excl[ex[q]][ex[q + 1]] = c.excl[ex[q + 1]][ex[q]] = PETSC_TRUE;
    }
  }
  /* sizes before the networks are allocated from them: far above any se_e2_a model (DeePMD-kit's
     water: sel 46/92, neurons 25-240), far below what would exhaust memory */
  PetscCall(SgTrustInt(path, "sel", c.ntypes, c.sel, 1, 4096));
  PetscCall(SgTrustInt(path, "neuron", c.nemb, c.emb, 1, 4096));
  PetscCall(SgTrustInt(path, "fitting_neuron", c.nfit, c.fit, 1, 4096));
  PetscCall(SgTrustInt(path, "axis_neuron", 1, &c.axis, 1, 4096));
  PetscCall(SgTrustReal(path, "rcut", 1, &c.rcut, 1e-3, 1e3));
  PetscCall(SgTrustReal(path, "rcut_smth", 1, &c.rcut_smth, 0, 1e3));
  {
    char *tok = tm, *p;
    for (PetscInt t = 0; t < c.ntypes; t++) {
      p = strchr(tok, ',');
      if (p) *p = 0;
      PetscCall(PetscStrncpy(c.type_map[t], tok, sizeof c.type_map[t]));
      tok = p ? p + 1 : tok + strlen(tok);
    }
  }
  PetscCall(SgDPModelCreate(&c, &m));
  SgNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  PetscCall(SgH5FileRead(f, "params", SG_H5_DOUBLE, np, slab));
  PetscCall(SgTrustReal(path, "params", np, slab, -PETSC_MAX_REAL, PETSC_MAX_REAL));
  {
    PetscInt   rk;
    PetscInt64 dd[SG_H5_MAXDIM];
    PetscCall(SgH5FileGetDims(f, "davg", &rk, dd));
    if (rk == 3) { /* per-slot statistics of an imported model */
      PetscInt64 nv = 4 * c.ntypes * m->cfg.nnei;
      PetscCall(PetscMalloc2(nv, &m->sdavg, nv, &m->sdstd));
      PetscCall(SgH5FileRead(f, "davg", SG_H5_DOUBLE, nv, m->sdavg));
      PetscCall(SgH5FileRead(f, "dstd", SG_H5_DOUBLE, nv, m->sdstd));
      PetscCall(SgTrustReal(path, "davg", nv, m->sdavg, -1e300, 1e300));
      PetscCall(SgTrustReal(path, "dstd", nv, m->sdstd, 0, 1e300));
    } else {
      PetscCall(SgH5FileRead(f, "davg", SG_H5_DOUBLE, 4 * c.ntypes, st));
      PetscCall(SgTrustReal(path, "davg", 4 * c.ntypes, st, -1e300, 1e300));
      for (PetscInt t = 0; t < c.ntypes; t++)
        for (int k = 0; k < 4; k++) m->davg[t][k] = st[4 * t + k];
      PetscCall(SgH5FileRead(f, "dstd", SG_H5_DOUBLE, 4 * c.ntypes, st));
      PetscCall(SgTrustReal(path, "dstd", 4 * c.ntypes, st, 1e-300, 1e300)); /* divides the environment */
      for (PetscInt t = 0; t < c.ntypes; t++)
        for (int k = 0; k < 4; k++) m->dstd[t][k] = st[4 * t + k];
    }
  }
  PetscCall(SgH5FileRead(f, "bias_atom_e", SG_H5_DOUBLE, c.ntypes, m->bias));
  PetscCall(SgTrustReal(path, "bias_atom_e", c.ntypes, m->bias, -1e300, 1e300));
  PetscCall(SgH5FileHasAttr(f, "/", "compress", &has));
  if (has) {
    PetscInt nc;
    PetscCall(SgH5FileReadAttr(f, "/", "compress", SG_H5_DOUBLE, 2, cs, &nc));
    PetscCheck(nc == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s: attribute compress must hold [step, rmin]", path);
  }
  PetscCall(SgH5FileClose(&f));
  SgNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), slab));
  PetscCall(PetscFree(slab));
  PetscCall(SgDPModelSync(m));
  if (has) PetscCall(SgDeepmdCompress(m, cs[0], cs[1]));
  *mm = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTrainStateRead(const char path[], SgDPTrainState *ts)
{
  SgH5File  f;
  int       rk;
  PetscBool has, hf, hs;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ts, sizeof *ts));
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileHas(f, "training", &has));
  if (!has) {
    PetscCall(SgH5FileClose(&f));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: restart: %s is a model without training state (not a checkpoint written by save_freq/save_ckpt); to train on from its weights with a new schedule use init_model", path);
  }
  PetscCall(SgH5FileReadAttr(f, "training", "step", SG_H5_LONG, 1, &ts->step, NULL));
  PetscCall(SgH5FileReadAttr(f, "training", "optim_step", SG_H5_LONG, 1, &ts->optim_step, NULL));
  PetscCall(SgH5FileReadAttr(f, "training", "ranks", SG_H5_INT, 1, &rk, NULL));
  ts->frames = -1;
  ts->systems = -1;
  PetscCall(SgH5FileHasAttr(f, "training", "data_frames", &hf));
  PetscCall(SgH5FileHasAttr(f, "training", "data_systems", &hs));
  if (hf && hs) {
    int ns;
    PetscCall(SgH5FileReadAttr(f, "training", "data_frames", SG_H5_LONG, 1, &ts->frames, NULL));
    PetscCall(SgH5FileReadAttr(f, "training", "data_systems", SG_H5_INT, 1, &ns, NULL));
    ts->systems = ns;
  }
  PetscCall(SgH5FileHasAttr(f, "training", "options", &hf));
  if (hf) PetscCall(SgH5FileReadAttrText(f, "training", "options", 1 << 20, &ts->options));
  ts->ranks = rk;
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}
