/* md_frames files as the Deep Potential reads them outside the loader: the atom types mapped onto
   the model's type map, and frames as doubles (statistics, dp test, change_bias). */
#include "deepmd_train.h"
#include "sgdataset.h"

PetscBool SgDPBoxIsZero(const PetscReal *b)
{
  for (int k = 0; k < 9; k++)
    if (b[k] != 0) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Atom types of a file, checked against the model's type map (by name when both are named). */
PetscErrorCode SgDPReadTypes(SgDPModel m, const char path[], PetscInt *N, PetscInt **type, PetscBool *has_virial, int64_t *nf)
{
  SgDataset ds;
  int64_t   n = 0;
  PetscInt  nt, fi;
  char    **tm;
  int32_t  *t32;

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, NULL));
  PetscCall(PetscMalloc1(n, &t32));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, t32));
  PetscCall(SgDatasetReadStrings(ds, "type_map", &nt, &tm));
  PetscCall(PetscMalloc1(n, type));
  for (int64_t i = 0; i < n; i++) {
    PetscInt t = t32[i], mt = -1;
    PetscCheck(t >= 0 && t < nt, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: %s: atom %" PetscInt64_FMT " has type %d outside its type_map", path, (PetscInt64)i, (int)t);
    for (PetscInt k = 0; k < m->cfg.ntypes; k++)
      if (!strcmp(m->cfg.type_map[k], tm[t])) mt = k;
    PetscCheck(mt >= 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: %s has element '%s' that the model's type_map does not list (set deepmd: {type_map: [...]})", path, tm[t]);
    (*type)[i] = mt;
  }
  PetscCall(SgDatasetStringsFree(nt, &tm));
  PetscCall(PetscFree(t32));
  PetscCall(SgDatasetFindField(ds, "virial", &fi));
  *has_virial = (PetscBool)(fi >= 0);
  PetscCall(SgDatasetGetNumSamples(ds, nf));
  PetscCall(SgDatasetClose(&ds));
  *N = (PetscInt)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Read frames [start, start+count) of one file as doubles. */
PetscErrorCode SgDPReadFrames(const char path[], int64_t start, int64_t count, PetscInt N, PetscBool virial, PetscReal *x, PetscReal *box, PetscReal *e, PetscReal *f, PetscReal *v)
{
  SgDataset ds;

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  if (x) PetscCall(SgDatasetReadField(ds, "coord", start, count, SG_DTYPE_F64, x));
  if (box) PetscCall(SgDatasetReadField(ds, "box", start, count, SG_DTYPE_F64, box));
  if (e) PetscCall(SgDatasetReadField(ds, "energy", start, count, SG_DTYPE_F64, e));
  if (f) PetscCall(SgDatasetReadField(ds, "force", start, count, SG_DTYPE_F64, f));
  if (v && virial) PetscCall(SgDatasetReadField(ds, "virial", start, count, SG_DTYPE_F64, v));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}
