/* The NN engine's backend chosen by option, wherever a surrogate trains or predicts:
     -nn_backend cpu|cuda   (deck: top-level key nn_backend; default cpu)
   cuda is refused, collectively and with one line naming the fix, where the engine has no CUDA
   backend (surge linked without it) or no GPU is visible on some rank. */
#pragma once
#include <petscsys.h>
#include "sgnn.h"

PETSC_EXTERN PetscErrorCode SgNNBackendFromOptions(MPI_Comm, SgnnBackend **);
/* the same for a given name (cpu, cuda); collective on comm */
PETSC_EXTERN PetscErrorCode SgNNBackendGet(MPI_Comm, const char name[], SgnnBackend **);
