/* SgCheckpoint: restart files written to NAME.tmp and renamed into place when complete.

   Layout quantities are attributes of the group /layout; the restart side compares each one with
   its own value and fails with both values named, so a checkpoint from another deck is refused
   before any state is touched. Vectors go through PETSc's HDF5 viewer (bit-exact doubles). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <petscviewerhdf5.h>
#include "sgcheckpoint.h"
#include "h5util.h"
#include "sgwrite.h"

struct _n_SgCheckpoint {
  MPI_Comm         comm;
  SgCheckpointMode mode;
  char             filename[PETSC_MAX_PATH_LEN], tmpname[PETSC_MAX_PATH_LEN + 8];
  PetscViewer      viewer;
  hid_t            file, layout;
};

PetscErrorCode SgCheckpointOpen(MPI_Comm comm, const char filename[], SgCheckpointMode mode, SgCheckpoint *chkp)
{
  SgCheckpoint chk;

  PetscFunctionBegin;
  PetscCall(PetscNew(&chk));
  chk->comm = comm;
  chk->mode = mode;
  PetscCall(PetscStrncpy(chk->filename, filename, sizeof chk->filename));
  PetscCall(PetscSNPrintf(chk->tmpname, sizeof chk->tmpname, "%s.tmp", filename));
  if (mode == SG_CHECKPOINT_WRITE) {
    PetscCall(PetscViewerHDF5Open(comm, chk->tmpname, FILE_MODE_WRITE, &chk->viewer));
    PetscCall(PetscViewerHDF5GetFileId(chk->viewer, &chk->file));
    PetscCall(SgH5MarkKind(chk->tmpname, chk->file, SG_FILE_RUN_CHECKPOINT));
    PetscCall(SgH5OpenOrCreateGroup(chk->file, "/layout", &chk->layout));
    PetscCall(SgH5WriteAttrString(chk->tmpname, chk->layout, "surge_version", SURGE_VERSION));
  } else {
    PetscCall(SgH5CheckReadable(comm, filename, "Restart file"));
    PetscCall(PetscViewerHDF5Open(comm, filename, FILE_MODE_READ, &chk->viewer));
    PetscCall(PetscViewerHDF5GetFileId(chk->viewer, &chk->file));
    PetscCheck(H5Lexists(chk->file, "/layout", H5P_DEFAULT) > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "'%s' is an HDF5 file but not a surge checkpoint (no /layout group)", filename);
    chk->layout = H5Gopen2(chk->file, "/layout", H5P_DEFAULT);
    SgCheckH5Id(chk->layout, "/layout");
  }
  *chkp = chk;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointGetMode(SgCheckpoint chk, SgCheckpointMode *mode)
{
  PetscFunctionBegin;
  *mode = chk->mode;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointLayoutReal(SgCheckpoint chk, const char name[], PetscReal value)
{
  PetscReal stored;
  PetscBool found;

  PetscFunctionBegin;
  if (chk->mode == SG_CHECKPOINT_WRITE) PetscCall(SgH5WriteAttrReals(chk->layout, name, 1, &value));
  else {
    PetscCall(SgH5ReadAttrReals(chk->layout, name, 1, &stored, &found));
    PetscCheck(found, chk->comm, PETSC_ERR_FILE_UNEXPECTED, "Restart file '%s' does not record '%s': it was written by a different solver or deck", chk->filename, name);
    PetscCheck(stored == value, chk->comm, PETSC_ERR_USER_INPUT, "Restart file '%s' was written with %s = %.17g but this run has %s = %.17g: restart with the deck that wrote it, or start a fresh run", chk->filename, name, (double)stored, name, (double)value);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointLayoutInt(SgCheckpoint chk, const char name[], PetscInt value)
{
  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutReal(chk, name, (PetscReal)value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointLayoutString(SgCheckpoint chk, const char name[], const char value[])
{
  char     *stored = NULL;
  PetscBool found, same;

  PetscFunctionBegin;
  if (chk->mode == SG_CHECKPOINT_WRITE) PetscCall(SgH5WriteAttrString(chk->tmpname, chk->layout, name, value));
  else {
    found = H5Aexists(chk->layout, name) > 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCheck(found, chk->comm, PETSC_ERR_FILE_UNEXPECTED, "Restart file '%s' does not record '%s': it was written by a different solver or deck", chk->filename, name);
    PetscCall(SgH5ReadAttrString(chk->filename, chk->layout, name, &stored));
    same = !strcmp(stored, value) ? PETSC_TRUE : PETSC_FALSE;
    PetscCheck(same, chk->comm, PETSC_ERR_USER_INPUT, "Restart file '%s' was written with %s = '%s' but this run has %s = '%s': restart with the deck that wrote it, or start a fresh run", chk->filename, name, stored, name, value);
    PetscCall(PetscFree(stored));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointLayoutHas(SgCheckpoint chk, const char name[], PetscBool *has)
{
  PetscFunctionBegin;
  *has = chk->mode == SG_CHECKPOINT_READ && H5Aexists(chk->layout, name) > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointWriteVec(SgCheckpoint chk, const char name[], Vec v)
{
  const char *old;
  char       *keep;

  PetscFunctionBegin;
  PetscCheck(chk->mode == SG_CHECKPOINT_WRITE, chk->comm, PETSC_ERR_ORDER, "Checkpoint opened for reading");
  {
    PetscInt n;
    char     what[300];
    PetscCall(VecGetSize(v, &n));
    PetscCall(PetscSNPrintf(what, sizeof what, "the checkpoint's %s", name));
    PetscCall(SgH5CheckRoom(chk->comm, chk->filename, (double)n * sizeof(PetscScalar), what));
  }
  PetscCall(PetscObjectGetName((PetscObject)v, &old));
  PetscCall(PetscStrallocpy(old, &keep));
  PetscCall(PetscObjectSetName((PetscObject)v, name));
  PetscCall(PetscViewerHDF5PushGroup(chk->viewer, "/state"));
  PetscCall(VecView(v, chk->viewer));
  PetscCall(PetscViewerHDF5PopGroup(chk->viewer));
  PetscCall(PetscObjectSetName((PetscObject)v, keep));
  PetscCall(PetscFree(keep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointReadVec(SgCheckpoint chk, const char name[], Vec v)
{
  const char *old;
  char       *keep, path[256];

  PetscFunctionBegin;
  PetscCheck(chk->mode == SG_CHECKPOINT_READ, chk->comm, PETSC_ERR_ORDER, "Checkpoint opened for writing");
  PetscCall(PetscSNPrintf(path, sizeof path, "/state/%s", name));
  PetscCheck(H5Lexists(chk->file, "/state", H5P_DEFAULT) > 0 && H5Lexists(chk->file, path, H5P_DEFAULT) > 0, chk->comm, PETSC_ERR_FILE_UNEXPECTED, "Restart file '%s' has no state vector '%s'", chk->filename, name);
  PetscCall(PetscObjectGetName((PetscObject)v, &old));
  PetscCall(PetscStrallocpy(old, &keep));
  PetscCall(PetscObjectSetName((PetscObject)v, name));
  PetscCall(PetscViewerHDF5PushGroup(chk->viewer, "/state"));
  PetscCall(VecLoad(v, chk->viewer));
  PetscCall(PetscViewerHDF5PopGroup(chk->viewer));
  PetscCall(PetscObjectSetName((PetscObject)v, keep));
  PetscCall(PetscFree(keep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointWriteReals(SgCheckpoint chk, const char name[], PetscInt n, const PetscReal v[])
{
  hid_t g;

  PetscFunctionBegin;
  PetscCheck(chk->mode == SG_CHECKPOINT_WRITE, chk->comm, PETSC_ERR_ORDER, "Checkpoint opened for reading");
  PetscCall(SgH5OpenOrCreateGroup(chk->file, "/values", &g));
  PetscCall(SgH5WriteRootReals(chk->comm, g, name, n, v));
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointReadReals(SgCheckpoint chk, const char name[], PetscInt n, PetscReal v[])
{
  hid_t g;

  PetscFunctionBegin;
  PetscCheck(chk->mode == SG_CHECKPOINT_READ, chk->comm, PETSC_ERR_ORDER, "Checkpoint opened for writing");
  PetscCheck(H5Lexists(chk->file, "/values", H5P_DEFAULT) > 0, chk->comm, PETSC_ERR_FILE_UNEXPECTED, "Restart file '%s' has no /values group: it is damaged or not a surge checkpoint", chk->filename);
  g = H5Gopen2(chk->file, "/values", H5P_DEFAULT);
  SgCheckH5Id(g, "/values");
  PetscCall(SgH5ReadReals(g, name, n, v, chk->filename));
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Integers travel as doubles: exact below 2^53, which covers steps, counters and seeds we keep. */
PetscErrorCode SgCheckpointWriteInts(SgCheckpoint chk, const char name[], PetscInt n, const PetscInt v[])
{
  PetscReal *r;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &r));
  for (PetscInt i = 0; i < n; i++) r[i] = (PetscReal)v[i];
  PetscCall(SgCheckpointWriteReals(chk, name, n, r));
  PetscCall(PetscFree(r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointReadInts(SgCheckpoint chk, const char name[], PetscInt n, PetscInt v[])
{
  PetscReal *r;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &r));
  PetscCall(SgCheckpointReadReals(chk, name, n, r));
  for (PetscInt i = 0; i < n; i++) v[i] = (PetscInt)r[i];
  PetscCall(PetscFree(r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointIsReading(SgCheckpoint chk, PetscBool *reading)
{
  SgCheckpointMode mode;

  PetscFunctionBegin;
  PetscCall(SgCheckpointGetMode(chk, &mode));
  *reading = mode == SG_CHECKPOINT_READ ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointVec(SgCheckpoint chk, const char name[], Vec v)
{
  PetscBool reading;

  PetscFunctionBegin;
  PetscCall(SgCheckpointIsReading(chk, &reading));
  if (reading) PetscCall(SgCheckpointReadVec(chk, name, v));
  else PetscCall(SgCheckpointWriteVec(chk, name, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointReals(SgCheckpoint chk, const char name[], PetscInt n, PetscReal v[])
{
  PetscBool reading;

  PetscFunctionBegin;
  PetscCall(SgCheckpointIsReading(chk, &reading));
  if (reading) PetscCall(SgCheckpointReadReals(chk, name, n, v));
  else PetscCall(SgCheckpointWriteReals(chk, name, n, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointInts(SgCheckpoint chk, const char name[], PetscInt n, PetscInt v[])
{
  PetscBool reading;

  PetscFunctionBegin;
  PetscCall(SgCheckpointIsReading(chk, &reading));
  if (reading) PetscCall(SgCheckpointReadInts(chk, name, n, v));
  else PetscCall(SgCheckpointWriteInts(chk, name, n, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointClose(SgCheckpoint *chkp)
{
  SgCheckpoint chk = *chkp;
  PetscMPIInt  rank;

  PetscFunctionBegin;
  if (!chk) PetscFunctionReturn(PETSC_SUCCESS);
  SgCallH5(H5Gclose(chk->layout));
  if (chk->mode == SG_CHECKPOINT_WRITE) {
    hid_t root = H5Gopen2(chk->file, "/", H5P_DEFAULT);
    /* the completion mark is written last: a file without it was interrupted mid-write */
    PetscCall(SgH5WriteAttrString(chk->tmpname, root, "complete", "yes"));
    SgCallH5(H5Gclose(root));
  }
  PetscCall(PetscViewerDestroy(&chk->viewer));
  if (chk->mode == SG_CHECKPOINT_WRITE) {
    PetscCallMPI(MPI_Barrier(chk->comm));
    PetscCallMPI(MPI_Comm_rank(chk->comm, &rank));
    {
      int err = 0; /* fsync + rename on rank 0 (sgwrite.h); every rank learns the outcome */
      if (!rank) err = SgWriteCommitErrno(chk->tmpname, chk->filename);
      PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, chk->comm));
      /* a run stages its checkpoint as BASE.chk.h5.tmp (a member of its set): the user knows BASE.chk.h5 */
      PetscCheck(!err, chk->comm, PETSC_ERR_FILE_OPEN, "cannot write the checkpoint %.*s (%s%s): the earlier checkpoint is unchanged", SgWriteShownLength(chk->filename), chk->filename, strerror(err), err == ENOSPC ? ", disk full" : "");
    }
  }
  PetscCall(PetscFree(*chkp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointWriteString(SgCheckpoint chk, const char name[], const char value[])
{
  PetscFunctionBegin;
  PetscCall(SgH5WriteRootString(chk->tmpname, chk->file, name, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgCheckpointReadString(SgCheckpoint chk, const char name[], char value[], size_t len)
{
  hid_t root;
  char *v = NULL;

  PetscFunctionBegin;
  value[0] = 0;
  root     = H5Gopen2(chk->file, "/", H5P_DEFAULT);
  SgCheckH5Id(root, "/");
  if (H5Aexists(root, name) > 0) PetscCall(SgH5ReadAttrString(chk->filename, root, name, &v));
  if (v) PetscCall(PetscStrncpy(value, v, len));
  PetscCall(PetscFree(v));
  SgCallH5(H5Gclose(root));
  PetscFunctionReturn(PETSC_SUCCESS);
}
