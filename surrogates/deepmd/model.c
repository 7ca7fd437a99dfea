/* Deep Potential model: configuration, parameters (one sgnn slab), initialisation as DeePMD-kit,
   host copies for inference, and the HDF5 model file. */
#include <unistd.h>
#include <hdf5.h>
#include <math.h>
#include "deepmd.h"
#include "sgdataset.h"

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
  SgNN(sgnn_backend_get("cpu", &m->be));
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
    PetscInt in = c->emb[c->nemb - 1] * c->axis;
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
    for (int k = 0; k < 4; k++) m->davg[t][k] = 0, m->dstd[t][k] = 1;
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
      L->in = in, L->out = c->emb[l], L->res = ResKind(in, c->emb[l]), L->act = PETSC_TRUE;
      L->W = TAKE(m->eW[t][l]);
      L->b = TAKE(m->eb[t][l]);
      L->idt = TAKE(m->eidt[t][l]);
      in = c->emb[l];
    }
  }
  for (PetscInt t = 0; t < c->ntypes; t++) {
    PetscInt in = c->emb[c->nemb - 1] * c->axis;
    m->fnet[t].nl = c->nfit + 1;
    for (PetscInt l = 0; l <= c->nfit; l++) {
      SgDPLayer *L = &m->fnet[t].l[l];
      PetscInt   out = l < c->nfit ? c->fit[l] : 1;
      L->in = in, L->out = out, L->res = (l > 0 && l < c->nfit && out == in) ? 1 : 0, L->act = l < c->nfit;
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
  for (PetscInt t = 0; t < SG_DP_MAXE; t++) PetscCall(PetscFree(m->tab.c[t]));
  PetscCall(PetscFree(m));
  *mm = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- HDF5 model file --------------------------------------------------------------------------
   /  attrs: surge_model = "deepmd_se_e2_a", version = 1, type_map (comma list), rcut, rcut_smth,
             sel[], neuron[], axis_neuron, fitting_neuron[], resnet_dt_embedding, resnet_dt_fitting,
             type_one_side (1: embedding nets per neighbour type; 0: per (centre, neighbour) pair;
             absent in files before it: 1)
   /params [np] f64   the parameter slab, in the order SgDPModelCreate declares it
   /davg, /dstd [ntypes,4] f64  environment statistics;  /bias_atom_e [ntypes] f64
   /training (checkpoints of save_ckpt only)  attrs step, optim_step, ranks; /training/adam_m,
             /training/adam_v [np] f64  -- what `restart` needs besides the model */
#define H5OK(call, what) \
  do { \
    if ((call) < 0) { \
      SgHDF5Unlock(); \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "deepmd: HDF5 failed to %s (%s)", what, path); \
    } \
  } while (0)

static herr_t AttrWrite(hid_t loc, const char *name, hid_t type, hsize_t n, const void *v)
{
  hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
  hid_t a  = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t e = a < 0 ? -1 : H5Awrite(a, type, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return e;
}

static herr_t DataWrite(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *v)
{
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t d  = H5Dcreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t e = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  return e;
}

PetscErrorCode SgDPModelSaveCheckpoint(SgDPModel m, const char path[], const SgDPTrainState *ts)
{
  const SgDPConfig *c = &m->cfg;
  long              np;
  double           *slab, st[SG_DP_MAXT * 4];
  char              tmp[PETSC_MAX_PATH_LEN + 8], tm[SG_DP_MAXT * 17] = "";
  int               iv[SG_DP_MAXL];
  hid_t             f, s;

  PetscFunctionBegin;
  SgNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), slab));
  for (PetscInt t = 0; t < c->ntypes; t++) {
    if (t) PetscCall(PetscStrlcat(tm, ",", sizeof tm));
    PetscCall(PetscStrlcat(tm, c->type_map[t], sizeof tm));
  }
  PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", path)); /* write then rename: never a broken model */
  SgHDF5Lock();
  f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5OK(f, "create the model file");
  s = H5Tcopy(H5T_C_S1);
  H5Tset_size(s, strlen(tm) + 1);
  H5OK(AttrWrite(f, "type_map", s, 0, tm), "write type_map");
  H5Tclose(s);
  {
    const char *k = "deepmd_se_e2_a";
    s             = H5Tcopy(H5T_C_S1);
    H5Tset_size(s, strlen(k) + 1);
    H5OK(AttrWrite(f, "surge_model", s, 0, k), "write surge_model");
    H5Tclose(s);
  }
  int    ver = 1, ax = (int)c->axis, r1 = c->emb_resnet_dt, r2 = c->fit_resnet_dt, seed = (int)c->seed;
  double rc = c->rcut, rs = c->rcut_smth;
  H5OK(AttrWrite(f, "version", H5T_NATIVE_INT, 0, &ver), "write version");
  H5OK(AttrWrite(f, "rcut", H5T_NATIVE_DOUBLE, 0, &rc), "write rcut");
  H5OK(AttrWrite(f, "rcut_smth", H5T_NATIVE_DOUBLE, 0, &rs), "write rcut_smth");
  for (PetscInt t = 0; t < c->ntypes; t++) iv[t] = (int)c->sel[t];
  H5OK(AttrWrite(f, "sel", H5T_NATIVE_INT, c->ntypes, iv), "write sel");
  for (PetscInt l = 0; l < c->nemb; l++) iv[l] = (int)c->emb[l];
  H5OK(AttrWrite(f, "neuron", H5T_NATIVE_INT, c->nemb, iv), "write neuron");
  for (PetscInt l = 0; l < c->nfit; l++) iv[l] = (int)c->fit[l];
  H5OK(AttrWrite(f, "fitting_neuron", H5T_NATIVE_INT, c->nfit, iv), "write fitting_neuron");
  H5OK(AttrWrite(f, "axis_neuron", H5T_NATIVE_INT, 0, &ax), "write axis_neuron");
  H5OK(AttrWrite(f, "resnet_dt_embedding", H5T_NATIVE_INT, 0, &r1), "write resnet_dt");
  H5OK(AttrWrite(f, "resnet_dt_fitting", H5T_NATIVE_INT, 0, &r2), "write resnet_dt");
  H5OK(AttrWrite(f, "seed", H5T_NATIVE_INT, 0, &seed), "write seed");
  {
    int one_side = !c->type_pair;
    H5OK(AttrWrite(f, "type_one_side", H5T_NATIVE_INT, 0, &one_side), "write type_one_side");
  }
  hsize_t d1[1] = {(hsize_t)np}, d2[2] = {(hsize_t)c->ntypes, 4}, d3[1] = {(hsize_t)c->ntypes};
  H5OK(DataWrite(f, "params", 1, d1, slab), "write params");
  for (PetscInt t = 0; t < c->ntypes; t++)
    for (int k = 0; k < 4; k++) st[4 * t + k] = m->davg[t][k];
  H5OK(DataWrite(f, "davg", 2, d2, st), "write davg");
  for (PetscInt t = 0; t < c->ntypes; t++)
    for (int k = 0; k < 4; k++) st[4 * t + k] = m->dstd[t][k];
  H5OK(DataWrite(f, "dstd", 2, d2, st), "write dstd");
  H5OK(DataWrite(f, "bias_atom_e", 1, d3, m->bias), "write bias_atom_e");
  if (ts) {
    hid_t  g  = H5Gcreate2(f, "training", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    long   lv[2] = {ts->step, ts->optim_step};
    int    rk    = (int)ts->ranks;
    hsize_t dn[1] = {(hsize_t)ts->n};
    H5OK(g, "create /training");
    H5OK(AttrWrite(g, "step", H5T_NATIVE_LONG, 0, &lv[0]), "write /training step");
    H5OK(AttrWrite(g, "optim_step", H5T_NATIVE_LONG, 0, &lv[1]), "write /training optim_step");
    H5OK(AttrWrite(g, "ranks", H5T_NATIVE_INT, 0, &rk), "write /training ranks");
    {
      long fr = ts->frames;
      int  ns = (int)ts->systems;
      H5OK(AttrWrite(g, "data_frames", H5T_NATIVE_LONG, 0, &fr), "write /training data_frames");
      H5OK(AttrWrite(g, "data_systems", H5T_NATIVE_INT, 0, &ns), "write /training data_systems");
    }
    H5OK(DataWrite(g, "adam_m", 1, dn, ts->m), "write /training/adam_m");
    H5OK(DataWrite(g, "adam_v", 1, dn, ts->v), "write /training/adam_v");
    H5OK(H5Gclose(g), "close /training");
  }
  H5OK(H5Fclose(f), "close the model file");
  SgHDF5Unlock();
  PetscCheck(!rename(tmp, path), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "deepmd: cannot rename %s to %s", tmp, path);
  PetscCall(PetscFree(slab));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPModelSave(SgDPModel m, const char path[])
{
  PetscFunctionBegin;
  PetscCall(SgDPModelSaveCheckpoint(m, path, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static herr_t AttrRead(hid_t loc, const char *name, hid_t type, void *v, hsize_t *n)
{
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return -1;
  if (n) {
    hid_t sp = H5Aget_space(a);
    *n       = (hsize_t)H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
  }
  herr_t e = H5Aread(a, type, v);
  H5Aclose(a);
  return e;
}

static herr_t DataRead(hid_t loc, const char *name, double *v, hsize_t want)
{
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t   sp = H5Dget_space(d);
  hsize_t n  = (hsize_t)H5Sget_simple_extent_npoints(sp);
  H5Sclose(sp);
  herr_t e = n != want ? -1 : H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  return e;
}

#undef H5OK
#define H5OK(call, what) \
  do { \
    if ((call) < 0) { \
      SgHDF5Unlock(); \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "deepmd: model file %s: cannot %s (is it a surge deepmd model written by SgSurrogateSave?)", path, what); \
    } \
  } while (0)


/* Open a model file for reading under the HDF5 lock (released by the caller's H5OK path as before).
   A missing file is named in one line; for a file that is not HDF5, HDF5's own error-stack dump is
   switched off so the user sees only our message. */
static PetscErrorCode QuietOpen(const char path[], hid_t *f)
{
  H5E_auto2_t func;
  void       *data;

  PetscFunctionBegin;
  PetscCheck(!access(path, R_OK), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "deepmd: model file %s does not exist or is not readable: check deepmd init_model / restart (or the swap provider's model)", path);
  SgHDF5Lock();
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPModelLoad(const char path[], SgDPModel *mm)
{
  SgDPConfig c;
  SgDPModel  m;
  hid_t      f, s;
  int        iv[SG_DP_MAXL], ax, r1, r2, seed, ver;
  hsize_t    n;
  char       tm[SG_DP_MAXT * 17 + 1], kind[64];
  long       np;
  double    *slab, st[SG_DP_MAXT * 4];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof c));
  PetscCall(QuietOpen(path, &f));
  H5OK(f, "open it");
  s = H5Tcopy(H5T_C_S1);
  H5Tset_size(s, sizeof kind);
  H5OK(AttrRead(f, "surge_model", s, kind, NULL), "read attribute surge_model");
  H5Tset_size(s, sizeof tm);
  memset(tm, 0, sizeof tm);
  H5OK(AttrRead(f, "type_map", s, tm, NULL), "read attribute type_map");
  H5Tclose(s);
  H5OK(AttrRead(f, "version", H5T_NATIVE_INT, &ver, NULL), "read version");
  H5OK(AttrRead(f, "rcut", H5T_NATIVE_DOUBLE, &c.rcut, NULL), "read rcut");
  H5OK(AttrRead(f, "rcut_smth", H5T_NATIVE_DOUBLE, &c.rcut_smth, NULL), "read rcut_smth");
  H5OK(AttrRead(f, "sel", H5T_NATIVE_INT, iv, &n), "read sel");
  c.ntypes = (PetscInt)n;
  for (PetscInt t = 0; t < c.ntypes; t++) c.sel[t] = iv[t];
  H5OK(AttrRead(f, "neuron", H5T_NATIVE_INT, iv, &n), "read neuron");
  c.nemb = (PetscInt)n;
  for (PetscInt l = 0; l < c.nemb; l++) c.emb[l] = iv[l];
  H5OK(AttrRead(f, "fitting_neuron", H5T_NATIVE_INT, iv, &n), "read fitting_neuron");
  c.nfit = (PetscInt)n;
  for (PetscInt l = 0; l < c.nfit; l++) c.fit[l] = iv[l];
  H5OK(AttrRead(f, "axis_neuron", H5T_NATIVE_INT, &ax, NULL), "read axis_neuron");
  H5OK(AttrRead(f, "resnet_dt_embedding", H5T_NATIVE_INT, &r1, NULL), "read resnet_dt_embedding");
  H5OK(AttrRead(f, "resnet_dt_fitting", H5T_NATIVE_INT, &r2, NULL), "read resnet_dt_fitting");
  H5OK(AttrRead(f, "seed", H5T_NATIVE_INT, &seed, NULL), "read seed");
  if (H5Aexists(f, "type_one_side") > 0) {
    int one_side;
    H5OK(AttrRead(f, "type_one_side", H5T_NATIVE_INT, &one_side, NULL), "read type_one_side");
    c.type_pair = (PetscBool)!one_side;
  }
  SgHDF5Unlock();
  PetscCheck(!strcmp(kind, "deepmd_se_e2_a") && ver == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s holds model '%s' version %d, expected deepmd_se_e2_a version 1", path, kind, ver);
  c.axis = ax, c.emb_resnet_dt = (PetscBool)r1, c.fit_resnet_dt = (PetscBool)r2, c.seed = seed;
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
  SgHDF5Lock();
  H5OK(DataRead(f, "params", slab, (hsize_t)np), "read /params (size must match the configuration)");
  H5OK(DataRead(f, "davg", st, (hsize_t)(4 * c.ntypes)), "read /davg");
  for (PetscInt t = 0; t < c.ntypes; t++)
    for (int k = 0; k < 4; k++) m->davg[t][k] = st[4 * t + k];
  H5OK(DataRead(f, "dstd", st, (hsize_t)(4 * c.ntypes)), "read /dstd");
  for (PetscInt t = 0; t < c.ntypes; t++)
    for (int k = 0; k < 4; k++) m->dstd[t][k] = st[4 * t + k];
  H5OK(DataRead(f, "bias_atom_e", m->bias, (hsize_t)c.ntypes), "read /bias_atom_e");
  H5OK(H5Fclose(f), "close it");
  SgHDF5Unlock();
  SgNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), slab));
  PetscCall(PetscFree(slab));
  PetscCall(SgDPModelSync(m));
  *mm = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTrainStateRead(const char path[], long np, SgDPTrainState *ts)
{
  hid_t f, g;
  int   rk;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ts, sizeof *ts));
  PetscCall(QuietOpen(path, &f));
  H5OK(f, "open it");
  if (H5Lexists(f, "training", H5P_DEFAULT) <= 0) {
    H5Fclose(f);
    SgHDF5Unlock();
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: restart: %s is a model without training state (not a checkpoint written by save_freq/save_ckpt); to train on from its weights with a new schedule use init_model", path);
  }
  g = H5Gopen2(f, "training", H5P_DEFAULT);
  H5OK(g, "open /training");
  H5OK(AttrRead(g, "step", H5T_NATIVE_LONG, &ts->step, NULL), "read /training step");
  H5OK(AttrRead(g, "optim_step", H5T_NATIVE_LONG, &ts->optim_step, NULL), "read /training optim_step");
  H5OK(AttrRead(g, "ranks", H5T_NATIVE_INT, &rk, NULL), "read /training ranks");
  ts->frames = -1, ts->systems = -1;
  if (H5Aexists(g, "data_frames") > 0 && H5Aexists(g, "data_systems") > 0) {
    int ns;
    H5OK(AttrRead(g, "data_frames", H5T_NATIVE_LONG, &ts->frames, NULL), "read /training data_frames");
    H5OK(AttrRead(g, "data_systems", H5T_NATIVE_INT, &ns, NULL), "read /training data_systems");
    ts->systems = ns;
  }
  SgHDF5Unlock();
  ts->ranks = rk, ts->n = np;
  PetscCall(PetscMalloc2(np, &ts->m, np, &ts->v));
  SgHDF5Lock();
  H5OK(DataRead(g, "adam_m", ts->m, (hsize_t)np), "read /training/adam_m (size must match the model)");
  H5OK(DataRead(g, "adam_v", ts->v, (hsize_t)np), "read /training/adam_v (size must match the model)");
  H5OK(H5Gclose(g), "close /training");
  H5OK(H5Fclose(f), "close it");
  SgHDF5Unlock();
  PetscFunctionReturn(PETSC_SUCCESS);
}
