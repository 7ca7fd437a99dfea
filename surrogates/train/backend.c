/* -nn_backend: which backend of the NN engine (surrogates/nn) a surrogate's tensors live on. The
   engine chooses at run time by name (libCEED's model); this file turns the name into a checked,
   collective choice with a user-level error. */
#include "sgnnbackend.h"
#include "sgsys.h"
#include <limits.h>

PetscErrorCode SgNNBackendGet(MPI_Comm comm, const char name[], SgnnBackend **be)
{
  int         ok, all, first;
  PetscMPIInt rank;
  char        why[512] = "";

  PetscFunctionBegin;
  PetscCheck(!strcmp(name, "cpu") || !strcmp(name, "cuda"), comm, PETSC_ERR_USER_INPUT, "-nn_backend %s: unknown backend; use cpu or cuda", name);
  ok = sgnn_backend_get(name, be) == 0;
  if (!ok) PetscCall(PetscStrncpy(why, sgnn_last_error(), sizeof why)); /* the engine's reason: no plugin, no driver, no device */
  /* every rank must agree: one rank without a GPU must not leave the others waiting; the line names
     the first rank that refused and its reason */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  if (all) PetscFunctionReturn(PETSC_SUCCESS);
  first = ok ? INT_MAX : (int)rank;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  PetscCallMPI(MPI_Bcast(why, sizeof why, MPI_CHAR, first, comm));
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "-nn_backend %s: %s (rank %d): use -nn_backend cpu", name, why, first);
}

PetscErrorCode SgNNBackendFromOptions(MPI_Comm comm, SgnnBackend **be)
{
  static const char *const names[] = {"cpu", "cuda"};
  PetscInt                 idx     = 0;

  PetscFunctionBegin;
  PetscOptionsBegin(comm, NULL, "Neural-network engine", "SgNN");
  PetscCall(SgOptionsEList("-nn_backend", "Backend of the neural-network engine where a surrogate trains or predicts: cpu (OpenBLAS) or cuda (cuBLAS; needs a CUDA build and a GPU)", names, 2, names[0], &idx, NULL));
  PetscOptionsEnd();
  PetscCall(SgNNBackendGet(comm, names[idx], be));
  PetscFunctionReturn(PETSC_SUCCESS);
}
