/* The optimizer's moments in a surrogate's own checkpoint file (SgTrainerWriteMoments,
   SgTrainerReadMoments in sgtrainer.h). The file holds whole f64 slabs whatever the shard stage, so a
   checkpoint restarts at any stage; a sharded optimizer (ZeRO, zero.c) writes and reads them by blocks,
   and no rank ever holds the whole state. */
#include <limits.h>
#include "sgtrainerimpl.h"
#include "sgsys.h"

/* rank r's block of a moment into its slab (SgBlocksToRoot's sink, rank 0) */
typedef struct {
  SgH5File           f;
  const char        *name;
  PetscInt64         total;
  const PetscMPIInt *counts, *displs;
} SlabSink;

static PetscErrorCode WriteSlabBlock(void *ctx, PetscMPIInt r, const void *block)
{
  SlabSink *s = (SlabSink *)ctx;

  PetscFunctionBegin;
  PetscCall(SgH5FileWriteBlock(s->f, s->name, SG_H5_DOUBLE, s->total, s->displs[r], s->counts[r], block));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the whole slab's length: the last block's end (unsharded, every rank's "block" is the whole) */
static PetscInt64 SlabTotal(SgTrainer t, PetscMPIInt size)
{
  return (PetscInt64)t->zdispl[size - 1] + t->zcount[size - 1];
}

PetscErrorCode SgTrainerWriteMoments(SgTrainer t, SgH5File f, const char *const names[2], PetscErrorCode *err)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  SgnnTensor  mom[2];
  PetscMPIInt rank, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  SgCallNN(sgnn_optim_state(t->opt, &mom[0], &mom[1], NULL));
  for (int k = 0; k < 2; k++) {
    SlabSink sink = {f, names[k], SlabTotal(t, size), t->zcount, t->zdispl};
    long     n;
    double  *buf;

    if (!mom[k] || (!t->shard && rank)) continue; /* unsharded: rank 0 holds the whole (replicated) state */
    PetscCheck(names[k], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "%s: the optimizer has a moment %d and the checkpoint names no dataset for it", t->name, k + 1);
    n = sgnn_tensor_numel(mom[k]);
    PetscCall(PetscMalloc1(n + 1, &buf)); /* this rank's block in f64: the file's type, whatever the training's */
    SgCallNN(sgnn_tensor_to_f64(mom[k], buf));
    if (!rank && !*err) *err = SgH5FileCreateSlab(f, names[k], SG_H5_DOUBLE, sink.total);
    if (t->shard) PetscCall(SgBlocksToRoot(comm, buf, t->zcount, MPI_DOUBLE, WriteSlabBlock, &sink, err));
    else if (!*err) *err = WriteSlabBlock(&sink, 0, buf);
    PetscCall(PetscFree(buf));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* this rank's part of each moment (its block, or the whole unsharded), checked before it is trusted */
static PetscErrorCode ReadMine(SgTrainer t, SgH5File f, const char *const names[2], SgnnTensor mom[2], SgTrustBad *bad)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  PetscMPIInt rank, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  for (int k = 0; k < 2; k++) {
    PetscInt64 offset = t->shard ? t->zdispl[rank] : 0;
    long       n;
    double    *buf;

    if (!mom[k]) continue;
    PetscCheck(names[k], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "%s: the optimizer has a moment %d and the checkpoint names no dataset for it", t->name, k + 1);
    n = sgnn_tensor_numel(mom[k]);
    PetscCall(PetscMalloc1(n + 1, &buf));
    PetscCall(SgH5FileReadBlock(f, names[k], SG_H5_DOUBLE, SlabTotal(t, size), offset, n, buf));
    /* finite (a checkpoint of a diverged run must not train on); the second moment holds squared
       gradients, and its square root is taken */
    SgTrustScan(n, buf, offset, k == 1 ? PETSC_TRUE : PETSC_FALSE, k, bad);
    SgCallNN(sgnn_tensor_set_f64(mom[k], buf));
    PetscCall(PetscFree(buf));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerReadMoments(SgTrainer t, SgH5File f, const char *const names[2])
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)t);
  SgTrustBad     bad;
  SgnnTensor     mom[2];
  const char    *path;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  SgTrustBadInit(&bad);
  SgCallNN(sgnn_optim_state(t->opt, &mom[0], &mom[1], NULL));
  PetscCall(SgH5FileGetPath(f, &path));
  PetscCall(SgAgreeBegin());
  ierr = ReadMine(t, f, names, mom, &bad);
  PetscCall(SgAgreeEnd(comm, ierr));
  /* a damaged value lies in one rank's block: every rank refuses it alike */
  PetscCall(SgTrustAgree(comm, &bad));
  PetscCheck(bad.index == INT_MAX, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: restart: %s: %s[%d] is %s: the run that saved it had diverged or the file is damaged; restart from an earlier checkpoint or start afresh", t->name, path, names[bad.what / 3], bad.index, SgTrustBadKind(&bad));
  PetscFunctionReturn(PETSC_SUCCESS);
}
