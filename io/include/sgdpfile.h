/* DeePMD-kit's .dp model file (the HDF5 form of its backend-independent serialized model, written by
   `dp convert-backend IN OUT.dp`): the model dictionary as JSON text in the root attribute "json", every
   array of it as a root dataset /variable_NNNN (numbered in traversal order) named in the JSON in its
   place. Layout from deepmd-kit's deepmd/dpmodel/utils/serialization.py (save_dp_model/load_dp_model). */
#pragma once
#include "sgtree.h"

/* Reads the dictionary with its arrays resolved into array nodes. Refused with one message: not HDF5,
   no "json" attribute, JSON that does not parse, an array reference to a missing dataset. */
PETSC_EXTERN PetscErrorCode SgDPFileRead(const char path[], SgTree *);
/* Writes the dictionary (its array nodes become "/variable_NNNN" strings: the tree is consumed) to
   PATH.tmp, renamed to PATH when complete. */
PETSC_EXTERN PetscErrorCode SgDPFileWrite(const char path[], SgTree);
