/* The process-wide HDF5 lock. Debian's HDF5 is built without its thread-safety option, so two
   threads must never be inside HDF5 at once: the training loader reads on a background thread,
   so every HDF5 user that may run beside it (datasets, checkpoints) holds this recursive lock. */
#pragma once
#include <petscsys.h>

PETSC_EXTERN void SgHDF5Lock(void);
PETSC_EXTERN void SgHDF5Unlock(void);
