/* Synthetic field_snapshots datasets for the loader tests: every value encodes its sample id, so a
   delivered row can be checked against both the id the loader claims and a plain read. */
#pragma once
#include "sgdataset.h"

#define TD_NX 3
#define TD_NY 5

static inline double TdX(int64_t id, int e)
{
  return 1000.0 * (double)id + (double)e + 0.25;
}

/* n samples, ids first..first+n-1: field x f64 [3,5], field y i32 scalar (= 7*id + 1). */
static inline PetscErrorCode TdCreate(const char path[], int64_t first, int64_t n, PetscInt chunk_rows)
{
  SgDataset ds;
  PetscInt  shape[2] = {TD_NX, TD_NY};
  double   *x;
  int32_t  *y;

  PetscFunctionBegin;
  PetscCall(SgDatasetCreate(PETSC_COMM_SELF, path, "field_snapshots", PETSC_TRUE, &ds));
  PetscCall(SgDatasetSetProvenance(ds, NULL, "loader test data"));
  PetscCall(SgDatasetDefineField(ds, "x", SG_DTYPE_F64, 2, shape, "1", chunk_rows));
  PetscCall(SgDatasetDefineField(ds, "y", SG_DTYPE_I32, 0, NULL, "1", chunk_rows));
  PetscCall(PetscMalloc2(n * TD_NX * TD_NY, &x, n, &y));
  for (int64_t i = 0; i < n; i++) {
    for (int e = 0; e < TD_NX * TD_NY; e++) x[i * TD_NX * TD_NY + e] = TdX(first + i, e);
    y[i] = (int32_t)(7 * (first + i) + 1);
  }
  /* two appends, to exercise the committed-count bookkeeping */
  PetscCall(SgDatasetAppendBegin(ds, n / 2));
  PetscCall(SgDatasetAppendField(ds, "x", SG_DTYPE_F64, x));
  PetscCall(SgDatasetAppendField(ds, "y", SG_DTYPE_I32, y));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(SgDatasetAppendBegin(ds, n - n / 2));
  PetscCall(SgDatasetAppendField(ds, "x", SG_DTYPE_F64, x + (n / 2) * TD_NX * TD_NY));
  PetscCall(SgDatasetAppendField(ds, "y", SG_DTYPE_I32, y + n / 2));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscFree2(x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}
