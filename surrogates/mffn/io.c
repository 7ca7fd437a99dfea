/* MeshfreeFlowNet model files (sgmffn.h): HDF5 through SgH5File, configuration and physics as
   attributes of "/", the weights as one float64 slab "params" (the order of SgMFFNCreate). */
#include "sgmffn.h"
#include "sgtrainer.h"
#include "sgh5file.h"

#define SG_MFFN_FILE_VERSION 1

PetscErrorCode SgMFFNSave(SgMFFN m, const SgMFFNPhysics *ph, const PetscInt factor[3], const char path[])
{
  const SgMFFNConfig *c = &m->cfg;
  SgH5File            f;
  long                n;
  double             *slab;
  int                 iv[3 * SG_MFFN_MAXLEVELS + 8], ver = SG_MFFN_FILE_VERSION;

  PetscFunctionBegin;
  SgCallNN(sgnn_params_count(m->P, &n));
  PetscCall(PetscMalloc1(n, &slab));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), slab));
  PetscCall(SgTrustWeights("mffn", path, n, slab)); /* a diverged training writes no model */
  PetscCall(SgH5FileCreate(path, SG_FILE_MODEL, &f));
  PetscCall(SgH5FileWriteAttrString(f, "/", "surge_model", "mffn"));
  PetscCall(SgH5FileWriteAttr(f, "/", "version", SG_H5_INT, 0, &ver));
#define WI(name, cnt, expr) \
  do { \
    for (PetscInt _i = 0; _i < (cnt); _i++) iv[_i] = (int)(expr); \
    PetscCall(SgH5FileWriteAttr(f, "/", name, SG_H5_INT, cnt, iv)); \
  } while (0)
  WI("in_channels", 1, c->in_channels);
  WI("out_channels", 1, c->out_channels);
  WI("channels", c->nlevels + 1, c->channels[_i]);
  if (c->nlevels) WI("pool", 3 * c->nlevels, c->pool[_i / 3][_i % 3]);
  WI("neck_div", 1, c->neck_div);
  WI("latent", 1, c->latent);
  WI("imnet", c->nmlp, c->mlp[_i]);
  WI("factor", 3, factor[_i]);
  WI("batchnorm", 1, c->batchnorm);
  WI("residual", 1, c->residual);
  WI("stream_function", 1, c->stream);
#undef WI
  PetscCall(SgH5FileWriteAttr(f, "/", "nu", SG_H5_DOUBLE, 0, &ph->nu));
  PetscCall(SgH5FileWriteAttr(f, "/", "kappa", SG_H5_DOUBLE, 0, &ph->kappa));
  PetscCall(SgH5FileWriteAttr(f, "/", "scale", SG_H5_DOUBLE, 3, ph->scale));
  PetscCall(SgH5FileWriteAttr(f, "/", "mean", SG_H5_DOUBLE, SG_MFFN_NCH, ph->mean));
  PetscCall(SgH5FileWriteAttr(f, "/", "std", SG_H5_DOUBLE, SG_MFFN_NCH, ph->std));
  if (ph->length[0] > 0) PetscCall(SgH5FileWriteAttr(f, "/", "length", SG_H5_DOUBLE, 2, ph->length));
  {
    PetscInt64 d[1] = {n};
    PetscCall(SgH5FileWrite(f, "params", SG_H5_DOUBLE, 1, d, slab));
  }
  PetscCall(SgH5FileClose(&f));
  PetscCall(PetscFree(slab));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNLoad(const char path[], SgnnBackend *be, SgMFFN *out, SgMFFNPhysics *ph, PetscInt factor[3])
{
  SgMFFNConfig c;
  SgH5File     f;
  char         kind[32];
  int          iv[3 * SG_MFFN_MAXLEVELS + 8], ver;
  PetscInt     n;
  PetscBool    has;
  long         np;
  double      *slab;

  PetscFunctionBegin;
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileReadAttrString(f, "/", "surge_model", kind, sizeof kind));
  PetscCheck(!strcmp(kind, "mffn"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mffn: %s is a '%s' model file, not a MeshfreeFlowNet one", path, kind);
  PetscCall(SgH5FileReadAttr(f, "/", "version", SG_H5_INT, 1, &ver, NULL));
  PetscCheck(ver == SG_MFFN_FILE_VERSION, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mffn: %s has model file version %d; this surge reads %d", path, ver, SG_MFFN_FILE_VERSION);
  PetscCall(SgMFFNConfigDefault(&c));
#define RI(name, cap, dst) \
  do { \
    PetscCall(SgH5FileReadAttr(f, "/", name, SG_H5_INT, cap, iv, &n)); \
    for (PetscInt _i = 0; _i < n; _i++) dst; \
  } while (0)
  RI("in_channels", 1, c.in_channels = iv[_i]);
  RI("out_channels", 1, c.out_channels = iv[_i]);
  RI("channels", SG_MFFN_MAXLEVELS + 1, c.channels[_i] = iv[_i]);
  PetscCheck(n >= 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mffn: %s: the channels attribute is empty: the file is damaged", path);
  c.nlevels = n - 1;
  if (c.nlevels) RI("pool", 3 * SG_MFFN_MAXLEVELS, c.pool[_i / 3][_i % 3] = iv[_i]);
  RI("neck_div", 1, c.neck_div = iv[_i]);
  RI("latent", 1, c.latent = iv[_i]);
  RI("imnet", SG_MFFN_MAXMLP, c.mlp[_i] = iv[_i]);
  c.nmlp = n;
  RI("factor", 3, factor[_i] = iv[_i]);
  RI("batchnorm", 1, c.batchnorm = (PetscBool)(iv[_i] != 0));
  {
    PetscBool has;
    PetscCall(SgH5FileHasAttr(f, "/", "residual", &has)); /* absent in files written before the option */
    if (has) RI("residual", 1, c.residual = (PetscBool)(iv[_i] != 0));
    PetscCall(SgH5FileHasAttr(f, "/", "stream_function", &has)); /* likewise */
    if (has) RI("stream_function", 1, c.stream = (PetscBool)(iv[_i] != 0));
  }
#undef RI
  /* sizes before the network is allocated from them (a 2^30-wide latent is a damaged file, not a
     request): bounds far above any MeshfreeFlowNet (the paper's widest level is 256) */
  PetscCall(SgTrustInt(path, "in_channels", 1, &c.in_channels, 1, 64));
  PetscCall(SgTrustInt(path, "out_channels", 1, &c.out_channels, 1, 64));
  PetscCall(SgTrustInt(path, "channels", c.nlevels + 1, c.channels, 1, 4096));
  PetscCall(SgTrustInt(path, "pool", 3 * c.nlevels, &c.pool[0][0], 1, 64));
  PetscCall(SgTrustInt(path, "neck_div", 1, &c.neck_div, 1, 4096));
  PetscCall(SgTrustInt(path, "latent", 1, &c.latent, 1, 4096));
  PetscCall(SgTrustInt(path, "imnet", c.nmlp, c.mlp, 1, 4096));
  PetscCall(SgTrustInt(path, "factor", 3, factor, 1, 1024));
  PetscCall(SgH5FileReadAttr(f, "/", "nu", SG_H5_DOUBLE, 1, &ph->nu, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "kappa", SG_H5_DOUBLE, 1, &ph->kappa, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "scale", SG_H5_DOUBLE, 3, ph->scale, &n));
  PetscCall(SgH5FileReadAttr(f, "/", "mean", SG_H5_DOUBLE, SG_MFFN_NCH, ph->mean, &n));
  PetscCall(SgH5FileReadAttr(f, "/", "std", SG_H5_DOUBLE, SG_MFFN_NCH, ph->std, &n));
  PetscCall(SgTrustReal(path, "nu", 1, &ph->nu, 1e-300, 1e300));
  PetscCall(SgTrustReal(path, "kappa", 1, &ph->kappa, 1e-300, 1e300));
  PetscCall(SgTrustReal(path, "scale", 3, ph->scale, 1e-300, 1e300));
  PetscCall(SgTrustReal(path, "mean", SG_MFFN_NCH, ph->mean, -1e300, 1e300));
  PetscCall(SgTrustReal(path, "std", SG_MFFN_NCH, ph->std, 1e-300, 1e300));
  ph->length[0] = 0;
  ph->length[1] = 0;
  PetscCall(SgH5FileHasAttr(f, "/", "length", &has));
  if (has) { /* the box it was trained on; older models lack it */
    PetscCall(SgH5FileReadAttr(f, "/", "length", SG_H5_DOUBLE, 2, ph->length, &n));
    PetscCheck(n == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute length has %" PetscInt_FMT " values, not 2 (Lx, Lz): the file is damaged", path, n);
    PetscCall(SgTrustReal(path, "length", 2, ph->length, 1e-12, 1e12));
  }
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, out));
  SgCallNN(sgnn_params_count((*out)->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  PetscCall(SgH5FileRead(f, "params", SG_H5_DOUBLE, np, slab));
  PetscCall(SgTrustReal(path, "params", np, slab, -PETSC_MAX_REAL, PETSC_MAX_REAL));
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values((*out)->P), slab));
  PetscCall(PetscFree(slab));
  PetscCall(SgH5FileClose(&f));
  PetscCall(SgMFFNSetPhysics(*out, ph));
  PetscFunctionReturn(PETSC_SUCCESS);
}
