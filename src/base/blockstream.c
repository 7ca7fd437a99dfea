/* SgBlocksToRoot (sgsys.h): the blocks of an array distributed over the ranks, streamed to rank 0 one
   rank at a time -- how a sharded training state (ZeRO) reaches the one file rank 0 writes. */
#include "sgsys.h"

PetscErrorCode SgBlocksToRoot(MPI_Comm comm, const void *mine, const PetscMPIInt counts[], MPI_Datatype type, SgBlockSink sink, void *ctx, PetscErrorCode *err)
{
  MPI_Comm    dcomm;
  PetscMPIInt rank, size, most = 0, esize;
  void       *buf;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Type_size(type, &esize));
  PetscCallMPI(MPI_Comm_dup(comm, &dcomm)); /* a context of its own: no other message can match */
  if (rank) {
    PetscCallMPI(MPI_Send(mine, counts[rank], type, 0, 0, dcomm));
    PetscCallMPI(MPI_Comm_free(&dcomm));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!*err) *err = sink(ctx, 0, mine);
  for (PetscMPIInt r = 1; r < size; r++) most = PetscMax(most, counts[r]);
  PetscCall(PetscMalloc((size_t)esize * (size_t)most + 1, &buf));
  for (PetscMPIInt r = 1; r < size; r++) { /* every block received, even after a failure: no sender waits forever */
    PetscCallMPI(MPI_Recv(buf, counts[r], type, r, 0, dcomm, MPI_STATUS_IGNORE));
    if (!*err) *err = sink(ctx, r, buf);
  }
  PetscCall(PetscFree(buf));
  PetscCallMPI(MPI_Comm_free(&dcomm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
