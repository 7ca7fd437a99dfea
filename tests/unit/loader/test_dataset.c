/* md_frames schema: create, append, read back; crash-safe append.
     test_dataset basic FILE    create an f64 dataset with virial and member parameters, append 3+2
                                frames, reopen, check every value exactly (stored as written: f64 in,
                                f64 out, so equality is exact), check statics and the row checks.
     test_dataset crash FILE    (after basic) open for append, reserve 4 rows, write only some
                                fields, then _exit() as if killed: the commit never happens.
     test_dataset verify FILE   (after crash) the 5 committed frames are intact and visible, the
                                half-written ones are not; a new append reuses the rows and commits. */
#include "sgdataset.h"
#include <unistd.h>

#define NAT 4

/* Deterministic, distinct value for (frame, field, element). */
static double Val(int64_t frame, int field, int64_t e)
{
  return 1000.0 * (double)frame + 100.0 * field + 0.001 * (double)e + 0.5;
}

static PetscErrorCode AppendFrames(SgDataset ds, int64_t first, int64_t k, PetscBool partial)
{
  double  *c, *b, *e, *f, *v, *p;
  int64_t *m;

  PetscFunctionBegin;
  PetscCall(PetscMalloc7(k * NAT * 3, &c, k * 9, &b, k, &e, k * NAT * 3, &f, k * 9, &v, k * 2, &p, k, &m));
  for (int64_t i = 0; i < k; i++) {
    for (int j = 0; j < NAT * 3; j++) {
      c[i * NAT * 3 + j] = Val(first + i, 0, j);
      f[i * NAT * 3 + j] = Val(first + i, 3, j);
    }
    for (int j = 0; j < 9; j++) {
      b[i * 9 + j] = Val(first + i, 1, j);
      v[i * 9 + j] = Val(first + i, 4, j);
    }
    e[i]         = Val(first + i, 2, 0);
    p[2 * i]     = Val(first + i, 5, 0);
    p[2 * i + 1] = Val(first + i, 5, 1);
    m[i]         = 10 + first + i;
  }
  PetscCall(SgDatasetAppendBegin(ds, k));
  PetscCall(SgDatasetAppendField(ds, "coord", SG_DTYPE_F64, c));
  PetscCall(SgDatasetAppendField(ds, "box", SG_DTYPE_F64, b));
  if (partial) _exit(0); /* simulated crash: no commit, no close */
  PetscCall(SgDatasetAppendField(ds, "energy", SG_DTYPE_F64, e));
  PetscCall(SgDatasetAppendField(ds, "force", SG_DTYPE_F64, f));
  PetscCall(SgDatasetAppendField(ds, "virial", SG_DTYPE_F64, v));
  PetscCall(SgDatasetAppendField(ds, "member", SG_DTYPE_I64, m));
  PetscCall(SgDatasetAppendField(ds, "params", SG_DTYPE_F64, p));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(PetscFree7(c, b, e, f, v, p, m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckFrames(SgDataset ds, int64_t n)
{
  double  *c, *b, *e, *f, *v, *p;
  int64_t *m, bad = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc7(n * NAT * 3, &c, n * 9, &b, n, &e, n * NAT * 3, &f, n * 9, &v, n * 2, &p, n, &m));
  PetscCall(SgDatasetReadField(ds, "coord", 0, n, SG_DTYPE_F64, c));
  PetscCall(SgDatasetReadField(ds, "box", 0, n, SG_DTYPE_F64, b));
  PetscCall(SgDatasetReadField(ds, "energy", 0, n, SG_DTYPE_F64, e));
  PetscCall(SgDatasetReadField(ds, "force", 0, n, SG_DTYPE_F64, f));
  PetscCall(SgDatasetReadField(ds, "virial", 0, n, SG_DTYPE_F64, v));
  PetscCall(SgDatasetReadField(ds, "params", 0, n, SG_DTYPE_F64, p));
  PetscCall(SgDatasetReadField(ds, "member", 0, n, SG_DTYPE_I64, m));
  for (int64_t i = 0; i < n; i++) {
    for (int j = 0; j < NAT * 3; j++) bad += (c[i * NAT * 3 + j] != Val(i, 0, j)) + (f[i * NAT * 3 + j] != Val(i, 3, j));
    for (int j = 0; j < 9; j++) bad += (b[i * 9 + j] != Val(i, 1, j)) + (v[i * 9 + j] != Val(i, 4, j));
    bad += (e[i] != Val(i, 2, 0)) + (p[2 * i] != Val(i, 5, 0)) + (p[2 * i + 1] != Val(i, 5, 1)) + (m[i] != 10 + i);
  }
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%lld values differ from what was appended", (long long)bad);
  PetscCall(PetscFree7(c, b, e, f, v, p, m));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   %lld frames read back exactly\n", (long long)n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgDataset   ds;
  int64_t     n;
  const char *mode, *file;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc == 3, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "usage: %s basic|crash|verify FILE", argv[0]);
  mode = argv[1];
  file = argv[2];
  if (!strcmp(mode, "basic")) {
    PetscInt    type[NAT] = {0, 1, 1, 0};
    const char *tm[2] = {"O", "H"}, *pn[2] = {"temperature", "density"};
    int32_t     t32[NAT];
    int64_t     nt = NAT;
    PetscInt    nn;
    char      **names;
    PetscErrorCode ierr;

    PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, file, PETSC_TRUE, NAT, type, 2, tm, SG_DTYPE_F64, PETSC_TRUE, 2, pn, &ds));
    PetscCall(SgDatasetSetProvenance(ds, "sim: {solver: md}\n", "test_dataset basic"));
    PetscCall(AppendFrames(ds, 0, 3, PETSC_FALSE));
    PetscCall(AppendFrames(ds, 3, 2, PETSC_FALSE));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    PetscCheck(n == 5, PETSC_COMM_SELF, PETSC_ERR_PLIB, "nsamples %lld, expected 5", (long long)n);
    PetscCall(CheckFrames(ds, n));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &nt, t32));
    for (int i = 0; i < NAT; i++) PetscCheck(t32[i] == type[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "type[%d]", i);
    PetscCall(SgDatasetReadStrings(ds, "param_names", &nn, &names));
    PetscCheck(nn == 2 && !strcmp(names[1], "density"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "param_names");
    PetscCall(SgDatasetStringsFree(nn, &names));
    {
      char *deck;
      PetscCall(SgDatasetGetProvenance(ds, "deck", &deck));
      PetscCheck(!strcmp(deck, "sim: {solver: md}\n"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "provenance deck '%s'", deck);
      PetscCall(PetscFree(deck));
    }
    /* reading past the committed count must fail, not return garbage */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    {
      double buf[64];
      ierr = SgDatasetReadField(ds, "energy", 4, 2, SG_DTYPE_F64, buf);
    }
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "read past nsamples did not fail");
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   read past the committed count fails\n"));
    PetscCall(SgDatasetView(ds, PETSC_VIEWER_STDOUT_SELF));
    PetscCall(SgDatasetClose(&ds));
  } else if (!strcmp(mode, "crash")) {
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_APPEND, &ds));
    PetscCall(AppendFrames(ds, 5, 4, PETSC_TRUE)); /* does not return */
  } else if (!strcmp(mode, "verify")) {
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    PetscCheck(n == 5, PETSC_COMM_SELF, PETSC_ERR_PLIB, "after the crash nsamples is %lld, expected the 5 committed", (long long)n);
    PetscCall(CheckFrames(ds, n));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_APPEND, &ds));
    PetscCall(AppendFrames(ds, 5, 1, PETSC_FALSE));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    PetscCheck(n == 6, PETSC_COMM_SELF, PETSC_ERR_PLIB, "after the re-append nsamples is %lld, expected 6", (long long)n);
    PetscCall(CheckFrames(ds, n));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   crash left no visible half frame; re-append commits 6\n"));
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "unknown mode %s", mode);
  PetscCall(PetscFinalize());
  return 0;
}
