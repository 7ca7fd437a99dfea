/* md_frames files as the Deep Potential reads them outside the loader (statistics, dp test,
   change_bias): each file opened ONCE through the dataset layer (io/dataset) for all its reads, its
   atom types mapped onto the model's type map (checked by element name), frames read as doubles in
   runs of consecutive frames. */
#include "deepmd_train.h"

PetscBool SgDPBoxIsZero(const PetscReal *b)
{
  for (int k = 0; k < 9; k++)
    if (b[k] != 0) return PETSC_FALSE;
  return PETSC_TRUE;
}

PetscErrorCode SgDPFramesOpen(SgDPModel m, const char path[], SgDPFrames *fr)
{
  int64_t  n = 0;
  PetscInt nt, fi;
  char   **tm;
  int32_t *t32;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fr, sizeof *fr));
  fr->path = path;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &fr->ds));
  PetscCall(SgDatasetReadStatic(fr->ds, "type", SG_DTYPE_I32, &n, NULL));
  PetscCall(PetscMalloc1(n, &t32));
  PetscCall(SgDatasetReadStatic(fr->ds, "type", SG_DTYPE_I32, &n, t32));
  PetscCall(SgDatasetReadStrings(fr->ds, "type_map", &nt, &tm));
  PetscCall(PetscMalloc1(n, &fr->type));
  for (int64_t i = 0; i < n; i++) {
    PetscInt t = t32[i], mt = -1;
    PetscCheck(t >= 0 && t < nt, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s: atom %" PetscInt64_FMT " has type %d outside its type_map", path, (PetscInt64)i, (int)t);
    for (PetscInt k = 0; k < m->cfg.ntypes; k++)
      if (!strcmp(m->cfg.type_map[k], tm[t])) mt = k;
    PetscCheck(mt >= 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: %s has element '%s' that the model's type_map does not list (set deepmd: {type_map: [...]})", path, tm[t]);
    fr->type[i] = mt;
  }
  PetscCall(SgDatasetStringsFree(nt, &tm));
  PetscCall(PetscFree(t32));
  PetscCall(SgDatasetFindField(fr->ds, "virial", &fi));
  fr->has_virial = (PetscBool)(fi >= 0);
  PetscCall(SgDatasetGetNumSamples(fr->ds, &fr->nf));
  fr->N = (PetscInt)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPFramesRead(SgDPFrames *fr, int64_t start, int64_t count, PetscReal *x, PetscReal *box, PetscReal *e, PetscReal *f, PetscReal *v)
{
  PetscFunctionBegin;
  if (x) PetscCall(SgDatasetReadField(fr->ds, "coord", start, count, SG_DTYPE_F64, x));
  if (box) PetscCall(SgDatasetReadField(fr->ds, "box", start, count, SG_DTYPE_F64, box));
  if (e) PetscCall(SgDatasetReadField(fr->ds, "energy", start, count, SG_DTYPE_F64, e));
  if (f) PetscCall(SgDatasetReadField(fr->ds, "force", start, count, SG_DTYPE_F64, f));
  if (v && fr->has_virial) PetscCall(SgDatasetReadField(fr->ds, "virial", start, count, SG_DTYPE_F64, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPFramesClose(SgDPFrames *fr)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(fr->type));
  PetscCall(SgDatasetClose(&fr->ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}
