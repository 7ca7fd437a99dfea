/* Training checkpoints of an NN-engine model in HDF5 (the HDF5 side of surrogates/nn, which itself
   depends on no I/O library).

   Layout (attribute sgnn_checkpoint_version = 1 on "/"):
     /config            string attributes: whatever the model needs to rebuild itself (caller's)
     /params/values     [n] the parameter slab, in the slab's dtype (f32 or f64), bit-exact
     /params/names      attribute: comma-separated parameter names in slab order
     /params/counts     [nparams] scalars per parameter (checks the architecture on load)
     /optim             attributes type, step; datasets m, v (moment slabs, when the optimizer has them)
     /rng               [nrng, 2] uint64 (seed, counter) of each generator the training uses
     /training          attribute step (the caller's step counter)
   Written to PATH.tmp and renamed: a crash never leaves a broken checkpoint. Reading checks that
   names and sizes match the model being restored and says which differ. */
#pragma once
#include <petscsys.h>
#include "sgnn.h"
#include "sgcompat.h"

typedef struct {
  PetscInt     nconfig;
  const char **config_keys, **config_values; /* string attributes of /config */
  SgnnParams   params;
  SgnnOptim    optim;       /* may be NULL */
  PetscInt     nrng;
  SgnnRng     *rng;         /* nrng generators, read and written in place */
  long        *step;        /* the caller's step counter, read and written in place */
  /* A sharded optimizer (ZeRO stages 1-3, surrogates/train/zero.c): when set, optim holds only this
     rank's block [optim_displs[rank], + optim_counts[rank]) of each moment slab; NULL: the whole slab.
     The file is the same either way (whole slabs), so a checkpoint restarts at any stage. */
  const PetscMPIInt *optim_counts, *optim_displs;
} SgNNState;

/* Rank 0 writes (parameters are replicated under data parallelism); collective on comm. The blocks of a
   sharded optimizer reach rank 0 one rank at a time, never the whole state at once. */
PETSC_EXTERN PetscErrorCode SgNNCheckpointWrite(MPI_Comm, const char path[], const SgNNState *);
/* Every rank reads into its own state (a sharded optimizer: only its block of the moments); the model
   must have been built with the same architecture. A damaged value in any rank's block stops every
   rank with the same message. */
PETSC_EXTERN PetscErrorCode SgNNCheckpointRead(MPI_Comm, const char path[], SgNNState *);
/* Read one /config attribute (to rebuild the model before SgNNCheckpointRead); key "?NAME": an entry
   that older checkpoints lack, value "" when absent. */
PETSC_EXTERN PetscErrorCode SgNNCheckpointReadConfig(MPI_Comm, const char path[], const char key[], char value[], size_t len);
