/* SgNNCheckpoint: save and restore a training run of the NN engine bit for bit (see header). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <hdf5.h>
#include "sgnncheckpoint.h"
#include "sgsys.h"
#include "sgwrite.h"
#include "../h5/h5util.h"
#include "sgdataset.h" /* SgHDF5Lock: Debian's HDF5 is not thread-safe, the loader reads on a thread */

#define CHECK_SGNN(call) \
  do { \
    if ((call) != 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "NN engine: %s failed: %s", #call, sgnn_last_error()); \
  } while (0)

static hid_t H5TypeOf(SgnnDType dt) { return dt == SGNN_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

/* Open the 1-D dataset name of a checkpoint: its dataset, dataspace and length, or a clear error. */
static PetscErrorCode OpenSlab(hid_t loc, const char name[], const char path[], hid_t *dset, hid_t *space, hsize_t *n)
{
  PetscFunctionBegin;
  PetscCheck(H5Lexists(loc, name, H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s has no dataset %s", path, name);
  *dset  = H5Dopen2(loc, name, H5P_DEFAULT);
  *space = *dset >= 0 ? H5Dget_space(*dset) : -1;
  PetscCheck(*space >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: %s cannot be read: the file is damaged or truncated", path, name);
  PetscCheck(H5Sget_simple_extent_ndims(*space) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: %s is not a 1-D dataset: damaged, or not a surge NN checkpoint", path, name);
  SgCallH5(H5Sget_simple_extent_dims(*space, n, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the moments of a sharded optimizer (ZeRO stages 1-3): blocks of whole slabs ---------------- */

/* Write count values at [offset, offset + count) of the 1-D dataset dset. */
static PetscErrorCode WriteBlock(hid_t dset, hid_t type, hsize_t offset, hsize_t count, const void *buf)
{
  hid_t fspace, mspace;

  PetscFunctionBegin;
  if (!count) PetscFunctionReturn(PETSC_SUCCESS);
  fspace = H5Dget_space(dset);
  SgCheckH5Id(fspace, "a moment slab");
  SgCallH5(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &offset, NULL, &count, NULL));
  mspace = H5Screate_simple(1, &count, NULL);
  SgCheckH5Id(mspace, "a moment block");
  SgCallH5(H5Dwrite(dset, type, mspace, fspace, H5P_DEFAULT, buf));
  SgCallH5(H5Sclose(mspace));
  SgCallH5(H5Sclose(fspace));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static hsize_t ShardTotal(const SgNNState *st, PetscMPIInt size)
{
  hsize_t n = 0;

  for (PetscMPIInt r = 0; r < size; r++) n += (hsize_t)st->optim_counts[r];
  return n;
}

/* A 1-D dataset of total values of type, not yet written (its blocks come later). */
static PetscErrorCode CreateSlab(hid_t loc, const char name[], hid_t type, hsize_t total)
{
  hid_t space, dset;

  PetscFunctionBegin;
  space = H5Screate_simple(1, &total, NULL);
  SgCheckH5Id(space, name);
  dset = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  SgCallH5(H5Dclose(dset));
  SgCallH5(H5Sclose(space));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Write a 1D dataset from a tensor's host copy, in the tensor's own dtype. */
static PetscErrorCode WriteTensor(hid_t loc, const char name[], SgnnTensor t)
{
  hsize_t n     = (hsize_t)sgnn_tensor_numel(t);
  size_t  esize = sgnn_tensor_dtype(t) == SGNN_F32 ? 4 : 8;
  void   *buf;
  hid_t   dset;

  PetscFunctionBegin;
  PetscCall(PetscMalloc(n * esize + 1, &buf));
  CHECK_SGNN(sgnn_tensor_to_host(t, buf));
  PetscCall(CreateSlab(loc, name, H5TypeOf(sgnn_tensor_dtype(t)), n));
  dset = H5Dopen2(loc, name, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  PetscCall(WriteBlock(dset, H5TypeOf(sgnn_tensor_dtype(t)), 0, n, buf));
  SgCallH5(H5Dclose(dset));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block of a moment into its slab (SgBlocksToRoot's sink on rank 0). */
typedef struct {
  hid_t              dset, type;
  const PetscMPIInt *displs, *counts;
} MomentSink;

static PetscErrorCode WriteMomentBlock(void *ctx, PetscMPIInt r, const void *block)
{
  MomentSink *s = (MomentSink *)ctx;

  PetscFunctionBegin;
  PetscCall(WriteBlock(s->dset, s->type, (hsize_t)s->displs[r], (hsize_t)s->counts[r], block));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every rank's block of a sharded optimizer's moments into the slabs WriteState created, rank 0's and
   then the others' as they reach rank 0 one at a time (SgBlocksToRoot: rank 0 never holds more than
   its own block and one other). *werr is rank 0's outcome (f < 0 or *werr set: nothing is written). */
static PetscErrorCode SendMomentBlocks(MPI_Comm comm, hid_t f, const SgNNState *st, PetscErrorCode *werr)
{
  const char *names[2] = {"/optim/m", "/optim/v"};
  SgnnTensor  mom[2]   = {NULL, NULL};
  long       *step;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  CHECK_SGNN(sgnn_optim_state(st->optim, &mom[0], &mom[1], &step));
  for (int k = 0; k < 2; k++) {
    SgnnTensor t    = mom[k];
    MomentSink sink = {-1, -1, st->optim_displs, st->optim_counts};

    if (!t) continue; /* the same optimizer type on every rank */
    sink.type = H5TypeOf(sgnn_tensor_dtype(t));
    if (!rank && f >= 0 && !*werr) {
      sink.dset = H5Dopen2(f, names[k], H5P_DEFAULT);
      if (sink.dset < 0) *werr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_WRITE, PETSC_ERROR_INITIAL, "the checkpoint being written lost its dataset %s", names[k]);
    }
    PetscCall(SgBlocksToRoot(comm, sgnn_tensor_data(t), st->optim_counts, sgnn_tensor_dtype(t) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE, WriteMomentBlock, &sink, werr));
    if (sink.dset >= 0) H5Dclose(sink.dset);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values [offset, offset + numel(t)) of the 1-D dataset name (total values) into t; f32 travels
   through double exactly. Every value is checked before it is trusted: finite (a checkpoint of a
   diverged run must not train on), and not negative where nonneg (Adam's second moments: their square
   root is taken); the first bad one goes to *bad (slot 0 m, 1 v), not to an error, so that all ranks
   can stop together (SgTrustScan, SgTrustAgree). */
static PetscErrorCode ReadBlock(hid_t loc, const char name[], SgnnTensor t, const char path[], hsize_t total, hsize_t offset, PetscBool nonneg, int slot, SgTrustBad *bad)
{
  hsize_t n = 0, count = (hsize_t)sgnn_tensor_numel(t);
  double *buf;
  hid_t   dset, space, mspace;

  PetscFunctionBegin;
  PetscCall(OpenSlab(loc, name, path, &dset, &space, &n));
  PetscCheck(n == total, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: %s holds %llu values, the model has %llu: it was written by another architecture", path, name, (unsigned long long)n, (unsigned long long)total);
  PetscCall(PetscMalloc1(count + 1, &buf));
  if (count) {
    SgCallH5(H5Sselect_hyperslab(space, H5S_SELECT_SET, &offset, NULL, &count, NULL));
    mspace = H5Screate_simple(1, &count, NULL);
    SgCheckH5Id(mspace, name);
    SgCallH5(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, space, H5P_DEFAULT, buf));
    SgCallH5(H5Sclose(mspace));
  }
  SgTrustScan((PetscInt64)count, buf, (PetscInt64)offset, nonneg, slot, bad);
  CHECK_SGNN(sgnn_tensor_set_f64(t, buf));
  PetscCall(PetscFree(buf));
  SgCallH5(H5Sclose(space));
  SgCallH5(H5Dclose(dset));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A whole 1-D dataset (group/name) into t, refused at its first damaged value. */
static PetscErrorCode ReadTensor(hid_t loc, const char group[], const char name[], SgnnTensor t, const char path[], PetscBool nonneg)
{
  SgTrustBad bad;

  PetscFunctionBegin;
  SgTrustBadInit(&bad);
  PetscCall(ReadBlock(loc, name, t, path, (hsize_t)sgnn_tensor_numel(t), 0, nonneg, 0, &bad));
  PetscCheck(bad.index == INT_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: %s/%s[%d] is %s: the run that saved it had diverged or the file is damaged; restart from an earlier checkpoint or start afresh", path, group, name, bad.index, SgTrustBadKind(&bad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ParamSignature(SgnnParams P, char **names, PetscReal **counts, PetscInt *np)
{
  size_t len = 1;

  PetscFunctionBegin;
  *np = sgnn_params_num(P);
  for (PetscInt i = 0; i < *np; i++) len += strlen(sgnn_params_name(P, (int)i)) + 1;
  PetscCall(PetscCalloc1(len, names));
  PetscCall(PetscMalloc1(PetscMax(*np, 1), counts));
  for (PetscInt i = 0; i < *np; i++) {
    if (i) PetscCall(PetscStrlcat(*names, ",", len));
    PetscCall(PetscStrlcat(*names, sgnn_params_name(P, (int)i), len));
    (*counts)[i] = (PetscReal)sgnn_tensor_numel(sgnn_params_get(P, (int)i));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The content of a checkpoint, into the open temporary f (tmp names it in errors). */
static PetscErrorCode WriteState(hid_t f, const char tmp[], const SgNNState *st, PetscMPIInt size)
{
  hid_t      g;
  char      *names;
  PetscReal *counts, v;
  PetscInt   np;

  PetscFunctionBegin;
  v = 1;
  PetscCall(SgH5WriteAttrReals(f, "sgnn_checkpoint_version", 1, &v));
  PetscCall(SgH5OpenOrCreateGroup(f, "/config", &g));
  for (PetscInt i = 0; i < st->nconfig; i++) PetscCall(SgH5WriteAttrString(tmp, g, st->config_keys[i], st->config_values[i]));
  SgCallH5(H5Gclose(g));

  PetscCall(SgH5OpenOrCreateGroup(f, "/params", &g));
  PetscCall(WriteTensor(g, "values", sgnn_params_values(st->params)));
  PetscCall(ParamSignature(st->params, &names, &counts, &np));
  PetscCall(SgH5WriteAttrString(tmp, g, "names", names));
  PetscCall(SgH5WriteRootReals(PETSC_COMM_SELF, g, "counts", np, counts));
  PetscCall(PetscFree(names));
  PetscCall(PetscFree(counts));
  SgCallH5(H5Gclose(g));

  if (st->optim) {
    SgnnTensor m = NULL, vv = NULL;
    long      *step;
    CHECK_SGNN(sgnn_optim_state(st->optim, &m, &vv, &step));
    PetscCall(SgH5OpenOrCreateGroup(f, "/optim", &g));
    v = (PetscReal)*step;
    PetscCall(SgH5WriteAttrReals(g, "step", 1, &v));
    if (st->optim_counts) { /* sharded: the whole slabs, their blocks written as they reach rank 0 (SendMomentBlocks) */
      if (m) PetscCall(CreateSlab(g, "m", H5TypeOf(sgnn_tensor_dtype(m)), ShardTotal(st, size)));
      if (vv) PetscCall(CreateSlab(g, "v", H5TypeOf(sgnn_tensor_dtype(vv)), ShardTotal(st, size)));
    } else {
      if (m) PetscCall(WriteTensor(g, "m", m));
      if (vv) PetscCall(WriteTensor(g, "v", vv));
    }
    SgCallH5(H5Gclose(g));
  }
  if (st->nrng) {
    hsize_t             dims[2] = {(hsize_t)st->nrng, 2};
    unsigned long long *buf;
    hid_t               space = H5Screate_simple(2, dims, NULL), dset;
    PetscCall(PetscMalloc1(2 * st->nrng, &buf));
    for (PetscInt i = 0; i < st->nrng; i++) {
      buf[2 * i]     = st->rng[i].seed;
      buf[2 * i + 1] = st->rng[i].counter;
    }
    dset = H5Dcreate2(f, "/rng", H5T_NATIVE_ULLONG, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    SgCheckH5Id(dset, "/rng");
    SgCallH5(H5Dwrite(dset, H5T_NATIVE_ULLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    SgCallH5(H5Dclose(dset));
    SgCallH5(H5Sclose(space));
    PetscCall(PetscFree(buf));
  }
  PetscCall(SgH5OpenOrCreateGroup(f, "/training", &g));
  v = st->step ? (PetscReal)*st->step : 0;
  PetscCall(SgH5WriteAttrReals(g, "step", 1, &v));
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 writes through the write path (PATH.tmp, checked, committed by rename; the temporary is
   removed on any failure); every rank ends with the outcome (rank 0 names the error). The blocks of a
   sharded optimizer are sent to rank 0 before it commits. */
static PetscErrorCode SgNNCheckpointWrite_Locked(MPI_Comm comm, const char path[], const SgNNState *st)
{
  PetscMPIInt    rank, size;
  PetscErrorCode ierr = PETSC_SUCCESS;
  int            failed;
  hid_t          f = -1;
  char           tmp[PETSC_MAX_PATH_LEN + 32] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (!rank) {
    ierr = SgH5StagedOpen(PETSC_COMM_SELF, "the training checkpoint", path, SG_FILE_NN_CHECKPOINT, PETSC_FALSE, H5P_DEFAULT, &f, tmp, sizeof tmp);
    if (!ierr) ierr = WriteState(f, tmp, st, size);
  }
  if (st->optim && st->optim_counts) PetscCall(SendMomentBlocks(comm, ierr ? -1 : f, st, &ierr));
  if (!rank) {
    if (!ierr) ierr = SgH5StagedCommit(PETSC_COMM_SELF, &f, tmp, path); /* fsync, rename; removes tmp on failure */
    else SgH5StagedDiscard(&f, tmp);
  }
  failed = ierr ? 1 : 0;
  PetscCallMPI(MPI_Bcast(&failed, 1, MPI_INT, 0, comm));
  PetscCall(ierr);
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write the checkpoint %s: the earlier checkpoint is unchanged (rank 0 says why)", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgNNCheckpointReadConfig_Locked(MPI_Comm comm, const char path[], const char key[], char value[], size_t len)
{
  hid_t     f, g;
  PetscBool found;

  PetscFunctionBegin;
  PetscCall(SgH5CheckReadable(comm, path, "NN checkpoint"));
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  SgCheckH5Id(f, path);
  PetscCheck(H5Lexists(f, "/config", H5P_DEFAULT) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "%s is not an NN checkpoint (no /config)", path);
  g = H5Gopen2(f, "/config", H5P_DEFAULT);
  value[0] = 0;
  if (key[0] == '?') key++; /* an entry older checkpoints lack: "" then */
  else PetscCheck(H5Aexists(g, key) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "NN checkpoint %s has no config entry '%s'", path, key);
  found = H5Aexists(g, key) > 0 ? PETSC_TRUE : PETSC_FALSE;
  if (found) {
    char *v;
    PetscCall(SgH5ReadAttrString(path, g, key, &v));
    PetscCall(PetscStrncpy(value, v, len));
    PetscCall(PetscFree(v));
  }
  SgCallH5(H5Gclose(g));
  SgCallH5(H5Fclose(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgNNCheckpointRead_Locked(MPI_Comm comm, const char path[], SgNNState *st, SgTrustBad *bad)
{
  hid_t     f, g;
  char     *stored, *names;
  PetscReal *counts, *scounts, v;
  PetscInt  np;
  PetscBool found;

  PetscFunctionBegin;
  PetscCall(SgH5CheckReadable(comm, path, "NN checkpoint"));
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  SgCheckH5Id(f, path);
  PetscCall(SgH5ReadAttrReals(f, "sgnn_checkpoint_version", 1, &v, &found));
  PetscCheck(found && v == 1, comm, PETSC_ERR_FILE_UNEXPECTED, "%s is not an NN checkpoint this surge can read (version attribute %s)", path, found ? "unknown" : "missing");
  PetscCheck(H5Lexists(f, "/params", H5P_DEFAULT) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "NN checkpoint %s has no /params: truncated or damaged", path);
  g = H5Gopen2(f, "/params", H5P_DEFAULT);
  PetscCall(ParamSignature(st->params, &names, &counts, &np));
  PetscCall(SgH5ReadAttrString(path, g, "names", &stored));
  PetscCheck(!strcmp(stored, names), comm, PETSC_ERR_USER_INPUT, "NN checkpoint %s holds parameters [%s] but the model has [%s]: it was written by another architecture", path, stored, names);
  PetscCall(PetscFree(stored));
  PetscCall(PetscMalloc1(np, &scounts));
  PetscCall(SgH5ReadReals(g, "counts", np, scounts, path));
  for (PetscInt i = 0; i < np; i++) PetscCheck(scounts[i] == counts[i], comm, PETSC_ERR_USER_INPUT, "NN checkpoint %s: parameter %s has %g values, the model has %g", path, sgnn_params_name(st->params, (int)i), (double)scounts[i], (double)counts[i]);
  PetscCall(ReadTensor(g, "/params", "values", sgnn_params_values(st->params), path, PETSC_FALSE));
  PetscCall(PetscFree(scounts));
  PetscCall(PetscFree(names));
  PetscCall(PetscFree(counts));
  SgCallH5(H5Gclose(g));

  if (st->optim) {
    SgnnTensor m = NULL, vv = NULL;
    long      *step;
    PetscCheck(H5Lexists(f, "/optim", H5P_DEFAULT) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "NN checkpoint %s has no optimizer state", path);
    CHECK_SGNN(sgnn_optim_state(st->optim, &m, &vv, &step));
    g = H5Gopen2(f, "/optim", H5P_DEFAULT);
    PetscCall(SgH5ReadAttrReals(g, "step", 1, &v, &found));
    PetscCheck(found && v >= 0 && v <= 1e15 && v == PetscFloorReal(v), comm, PETSC_ERR_FILE_UNEXPECTED, "NN checkpoint %s: the optimizer's step %g is not a count: the file is damaged", path, (double)v);
    *step = (long)v;
    if (st->optim_counts) { /* sharded: this rank's block; a bad value is reported by all ranks alike */
      PetscMPIInt rank, size;
      PetscCallMPI(MPI_Comm_rank(comm, &rank));
      PetscCallMPI(MPI_Comm_size(comm, &size));
      if (m) PetscCall(ReadBlock(g, "m", m, path, ShardTotal(st, size), (hsize_t)st->optim_displs[rank], PETSC_FALSE, 0, bad));
      if (vv) PetscCall(ReadBlock(g, "v", vv, path, ShardTotal(st, size), (hsize_t)st->optim_displs[rank], PETSC_TRUE, 1, bad));
    } else {
      if (m) PetscCall(ReadTensor(g, "/optim", "m", m, path, PETSC_FALSE));
      if (vv) PetscCall(ReadTensor(g, "/optim", "v", vv, path, PETSC_TRUE));
    }
    SgCallH5(H5Gclose(g));
  }
  if (st->nrng) {
    unsigned long long *buf;
    hid_t               dset, space;
    hsize_t             dims[2];
    PetscCheck(H5Lexists(f, "/rng", H5P_DEFAULT) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "NN checkpoint %s has no RNG state", path);
    dset  = H5Dopen2(f, "/rng", H5P_DEFAULT);
    space = H5Dget_space(dset);
    SgCallH5(H5Sget_simple_extent_dims(space, dims, NULL));
    PetscCheck((PetscInt)dims[0] == st->nrng, comm, PETSC_ERR_USER_INPUT, "NN checkpoint %s holds %llu random generators, the run uses %" PetscInt_FMT, path, (unsigned long long)dims[0], st->nrng);
    PetscCall(PetscMalloc1(2 * st->nrng, &buf));
    SgCallH5(H5Dread(dset, H5T_NATIVE_ULLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    for (PetscInt i = 0; i < st->nrng; i++) {
      st->rng[i].seed    = buf[2 * i];
      st->rng[i].counter = buf[2 * i + 1];
    }
    PetscCall(PetscFree(buf));
    SgCallH5(H5Sclose(space));
    SgCallH5(H5Dclose(dset));
  }
  if (st->step) {
    g = H5Gopen2(f, "/training", H5P_DEFAULT);
    SgCheckH5Id(g, "/training");
    PetscCall(SgH5ReadAttrReals(g, "step", 1, &v, &found));
    *st->step = (long)v;
    SgCallH5(H5Gclose(g));
  }
  SgCallH5(H5Fclose(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every rank opens the checkpoint by its name, and only rank 0 writes the next one: without a
   barrier rank 0 (whose broadcasts do not wait for receivers) can run ahead and rename a newer
   checkpoint over the name before a slower rank has opened it, which then reads the wrong file (seen
   on 2 ranks: a slow rank 1 restored the next checkpoint). The barrier is reached on error too, so a
   rank that failed cannot leave the others waiting in it. */
static PetscErrorCode ReadDone(MPI_Comm comm, PetscErrorCode ierr)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Public entry points hold the process-wide HDF5 lock for the whole file operation. */
PetscErrorCode SgNNCheckpointWrite(MPI_Comm comm, const char path[], const SgNNState *st)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  SgHDF5Lock();
  ierr = SgNNCheckpointWrite_Locked(comm, path, st);
  SgHDF5Unlock();
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgNNCheckpointRead(MPI_Comm comm, const char path[], SgNNState *st)
{
  SgTrustBad     bad;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  SgTrustBadInit(&bad);
  SgHDF5Lock();
  ierr = SgNNCheckpointRead_Locked(comm, path, st, &bad);
  SgHDF5Unlock();
  PetscCall(SgTrustAgree(comm, &bad)); /* the first damaged value of any rank's block, to every rank (also ReadDone's barrier) */
  PetscCall(ierr);
  PetscCheck(bad.index == INT_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: /optim/%s[%d] is %s: the run that saved it had diverged or the file is damaged; restart from an earlier checkpoint or start afresh", path, bad.what / 3 ? "v" : "m", bad.index, SgTrustBadKind(&bad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgNNCheckpointReadConfig(MPI_Comm comm, const char path[], const char key[], char value[], size_t len)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  SgHDF5Lock();
  ierr = SgNNCheckpointReadConfig_Locked(comm, path, key, value, len);
  SgHDF5Unlock();
  PetscCall(ReadDone(comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
