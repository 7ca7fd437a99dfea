/* The search's record on disk, what makes it resumable after a kill -9:
     LOGDIR/rank_R.h5   one surge dataset per rank (field_snapshots schema, one sample per evaluated
                        candidate: id, rank, session, epochs, nparams, arch, r2, t_start, t_end,
                        seconds), appended with the dataset's crash-safe commit, so a killed writer
                        leaves every committed evaluation readable and nothing half-written;
                        the provenance "source" holds the search's fingerprint (a resumed search
                        must be the same search);
     LOGDIR/cand_ID.h5  the weights of candidate ID (written to a temporary name and renamed).
   Each rank writes only its own file, so no two processes ever write one HDF5 file. */
#include <dirent.h>
#include <unistd.h>
#include "sgpodlstm.h"
#include "sgdataset.h"
#include "sgh5file.h"
#include "sgtrainer.h"

const char *const SgPodLstmSearchTypes[] = {"aging", "random"};

#define NARCH (1 + 2 * SG_PODLSTM_MAXLAYERS)
static const char *const IntFields[] = {"id", "rank", "session", "epochs", "nparams"};
static const char *const RealFields[] = {"r2", "t_start", "t_end", "seconds"};

void SgPodLstmEvalPack(const SgPodLstmEval *e, PetscReal b[SG_PODLSTM_EVAL_NREAL])
{
  PetscInt i = 0;
  b[i++] = (PetscReal)e->id;
  b[i++] = (PetscReal)e->rank;
  b[i++] = (PetscReal)e->session;
  b[i++] = (PetscReal)e->epochs;
  b[i++] = (PetscReal)e->nparams;
  b[i++] = (PetscReal)e->arch.nlayers;
  for (PetscInt l = 0; l < SG_PODLSTM_MAXLAYERS; l++) {
    b[i++] = (PetscReal)e->arch.units[l];
    b[i++] = (PetscReal)e->arch.skip[l];
  }
  b[i++] = e->r2;
  b[i++] = e->t_start;
  b[i++] = e->t_end;
  b[i++] = e->seconds; /* 6 + 2 MAXLAYERS + 4 */
  (void)i;
}

void SgPodLstmEvalUnpack(const PetscReal b[SG_PODLSTM_EVAL_NREAL], SgPodLstmEval *e)
{
  PetscInt i = 0;
  PetscMemzero(e, sizeof *e);
  e->id = (PetscInt)b[i++];
  e->rank = (PetscInt)b[i++];
  e->session = (PetscInt)b[i++];
  e->epochs = (PetscInt)b[i++];
  e->nparams = (PetscInt)b[i++];
  e->arch.nlayers = (PetscInt)b[i++];
  for (PetscInt l = 0; l < SG_PODLSTM_MAXLAYERS; l++) {
    e->arch.units[l] = (PetscInt)b[i++];
    e->arch.skip[l] = (PetscInt)b[i++];
  }
  e->r2 = b[i++];
  e->t_start = b[i++];
  e->t_end = b[i++];
  e->seconds = b[i++];
}

static void ArchToInts(const SgPodLstmArch *a, int64_t v[NARCH])
{
  v[0] = a->nlayers;
  for (PetscInt l = 0; l < SG_PODLSTM_MAXLAYERS; l++) {
    v[1 + l] = a->units[l];
    v[1 + SG_PODLSTM_MAXLAYERS + l] = a->skip[l];
  }
}

static void ArchFromInts(const int64_t v[NARCH], SgPodLstmArch *a)
{
  a->nlayers = (PetscInt)v[0];
  for (PetscInt l = 0; l < SG_PODLSTM_MAXLAYERS; l++) {
    a->units[l] = (PetscInt)v[1 + l];
    a->skip[l] = (PetscInt)v[1 + SG_PODLSTM_MAXLAYERS + l];
  }
}

PetscErrorCode SgPodLstmLogAppend(const char logdir[], PetscMPIInt rank, const char fingerprint[], const SgPodLstmEval *e)
{
  char      path[PETSC_MAX_PATH_LEN];
  SgDataset ds;
  int64_t   iv[5] = {e->id, e->rank, e->session, e->epochs, e->nparams}, arch[NARCH];
  PetscReal rv[4] = {e->r2, e->t_start, e->t_end, e->seconds};

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/rank_%d.h5", logdir, (int)rank));
  if (access(path, F_OK)) {
    PetscInt na = NARCH;
    PetscCall(SgDatasetCreateAs(PETSC_COMM_SELF, path, "field_snapshots", SG_FILE_SEARCH_LOG, PETSC_FALSE, &ds));
    PetscCall(SgDatasetSetProvenance(ds, "", fingerprint));
    for (int f = 0; f < 5; f++) PetscCall(SgDatasetDefineField(ds, IntFields[f], SG_DTYPE_I64, 0, NULL, "", 0));
    PetscCall(SgDatasetDefineField(ds, "arch", SG_DTYPE_I64, 1, &na, "nlayers, units of each layer (0: identity), skip bits of each layer", 0));
    for (int f = 0; f < 4; f++) PetscCall(SgDatasetDefineField(ds, RealFields[f], SG_DTYPE_F64, 0, NULL, f ? "s" : "validation R2", 0));
  } else PetscCall(SgDatasetOpenStaged(PETSC_COMM_SELF, path, &ds)); /* a copy, committed at close: the log on disk is never written in place */
  ArchToInts(&e->arch, arch);
  PetscCall(SgDatasetAppendBegin(ds, 1));
  for (int f = 0; f < 5; f++) PetscCall(SgDatasetAppendField(ds, IntFields[f], SG_DTYPE_I64, &iv[f]));
  PetscCall(SgDatasetAppendField(ds, "arch", SG_DTYPE_I64, arch));
  for (int f = 0; f < 4; f++) PetscCall(SgDatasetAppendField(ds, RealFields[f], SG_DTYPE_F64, &rv[f]));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int ByCompletion(const void *a, const void *b)
{
  const SgPodLstmEval *x = (const SgPodLstmEval *)a, *y = (const SgPodLstmEval *)b;
  if (x->t_end != y->t_end) return x->t_end < y->t_end ? -1 : 1;
  return (int)(x->id - y->id);
}

PetscErrorCode SgPodLstmLogRead(MPI_Comm comm, const char logdir[], const char fingerprint[], PetscInt *n, SgPodLstmEval **evals)
{
  DIR           *d = opendir(logdir);
  struct dirent *de;

  PetscFunctionBegin;
  *n = 0, *evals = NULL;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  while ((de = readdir(d))) {
    char      path[PETSC_MAX_PATH_LEN], *src = NULL;
    int       r;
    int64_t   m, *iv[5], *arch;
    PetscReal *rv[4];
    SgDataset ds;
    if (sscanf(de->d_name, "rank_%d.h5", &r) != 1 || strstr(de->d_name, ".tmp")) continue;
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s", logdir, de->d_name));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetProvenance(ds, "source", &src));
    PetscCheck(src && !strcmp(src, fingerprint), comm, PETSC_ERR_USER_INPUT, "podlstm: the search log %s belongs to another search (%s; this one: %s): remove %s or choose another -podlstm_prefix", path, src ? src : "no fingerprint", fingerprint, logdir);
    PetscCall(PetscFree(src));
    PetscCall(SgDatasetGetNumSamples(ds, &m));
    PetscCall(PetscRealloc(sizeof(SgPodLstmEval) * (*n + m + 1), evals));
    for (int f = 0; f < 5; f++) PetscCall(PetscMalloc1(m + 1, &iv[f]));
    for (int f = 0; f < 4; f++) PetscCall(PetscMalloc1(m + 1, &rv[f]));
    PetscCall(PetscMalloc1(NARCH * (m + 1), &arch));
    if (m) {
      for (int f = 0; f < 5; f++) PetscCall(SgDatasetReadField(ds, IntFields[f], 0, m, SG_DTYPE_I64, iv[f]));
      for (int f = 0; f < 4; f++) PetscCall(SgDatasetReadField(ds, RealFields[f], 0, m, SG_DTYPE_F64, rv[f]));
      PetscCall(SgDatasetReadField(ds, "arch", 0, m, SG_DTYPE_I64, arch));
    }
    for (int64_t i = 0; i < m; i++) {
      SgPodLstmEval *e = &(*evals)[*n + i];
      PetscCall(PetscMemzero(e, sizeof *e));
      e->id = (PetscInt)iv[0][i];
      e->rank = (PetscInt)iv[1][i];
      e->session = (PetscInt)iv[2][i];
      e->epochs = (PetscInt)iv[3][i];
      e->nparams = (PetscInt)iv[4][i];
      ArchFromInts(arch + NARCH * i, &e->arch);
      e->r2 = rv[0][i];
      e->t_start = rv[1][i];
      e->t_end = rv[2][i];
      e->seconds = rv[3][i];
    }
    *n += (PetscInt)m;
    for (int f = 0; f < 5; f++) PetscCall(PetscFree(iv[f]));
    for (int f = 0; f < 4; f++) PetscCall(PetscFree(rv[f]));
    PetscCall(PetscFree(arch));
    PetscCall(SgDatasetClose(&ds));
  }
  closedir(d);
  if (*n) qsort(*evals, (size_t)*n, sizeof(SgPodLstmEval), ByCompletion);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmWeightsWrite(const char path[], const SgPodLstmArch *a, PetscInt K, SgPodLstmNet net)
{
  SgH5File   f;
  char       s[256];
  PetscInt   np;
  PetscReal *w;
  int        k = (int)K;

  PetscFunctionBegin;
  PetscCall(SgPodLstmArchToString(a, s, sizeof s));
  PetscCall(SgPodLstmNetNumParams(net, &np));
  PetscCall(PetscMalloc1(np, &w));
  SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(net->P), w));
  PetscCall(SgH5FileCreate(path, SG_FILE_SEARCH_LOG, &f));
  PetscCall(SgH5FileWriteAttrString(f, "/", "arch", s));
  PetscCall(SgH5FileWriteAttr(f, "/", "K", SG_H5_INT, 0, &k));
  {
    PetscInt64 d[1] = {np};
    PetscCall(SgH5FileWrite(f, "params", SG_H5_DOUBLE, 1, d, w));
  }
  PetscCall(SgH5FileClose(&f));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmWeightsRead(const char path[], SgPodLstmNet net)
{
  SgH5File      f;
  char          s[256];
  SgPodLstmArch a;
  PetscInt      np;
  PetscReal    *w;

  PetscFunctionBegin;
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileReadAttrString(f, "/", "arch", s, sizeof s));
  PetscCall(SgPodLstmArchFromString(PETSC_COMM_SELF, s, &a));
  PetscCheck(SgPodLstmArchEqual(&a, &net->arch), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s holds the weights of '%s', not of the network asked for", path, s);
  PetscCall(SgPodLstmNetNumParams(net, &np));
  PetscCall(PetscMalloc1(np, &w));
  PetscCall(SgH5FileRead(f, "params", SG_H5_DOUBLE, np, w));
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(net->P), w));
  PetscCall(PetscFree(w));
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}
