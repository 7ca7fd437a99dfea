/* Private helpers shared by io/h5 files: checked HDF5 calls and small collective writers. */
#pragma once
#include <hdf5.h>
#include <petscsys.h>
#include "sgcompat.h"

/* Check an HDF5 return (negative = failure) and name the call. */
#define SgCallH5(call) \
  do { \
    if ((call) < 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5 call failed: %s", #call); \
  } while (0)

/* Checked id-returning HDF5 call: id = SgH5Id(call). */
#define SgCheckH5Id(id, what) PetscCheck((id) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5: %s failed", what)

/* Write a scalar/array attribute of doubles (collective when the file is opened with MPI-IO:
   every rank passes the same values). */
PETSC_INTERN PetscErrorCode SgH5WriteAttrReals(hid_t obj, const char name[], PetscInt n, const PetscReal v[]);
PETSC_INTERN PetscErrorCode SgH5AttrWriteString(hid_t obj, const char name[], const char value[]);
/* Read an attribute; *found says whether it exists. */
PETSC_INTERN PetscErrorCode SgH5ReadAttrReals(hid_t obj, const char name[], PetscInt n, PetscReal v[], PetscBool *found);
PETSC_INTERN PetscErrorCode SgH5AttrReadString(hid_t obj, const char name[], char value[], size_t len, PetscBool *found);
/* Create (collectively) a 1D dataset of n doubles that rank 0 fills. */
PETSC_INTERN PetscErrorCode SgH5WriteRootReals(MPI_Comm, hid_t loc, const char name[], PetscInt n, const PetscReal v[]);
PETSC_INTERN PetscErrorCode SgH5ReadReals(hid_t loc, const char name[], PetscInt n, PetscReal v[], const char file[]);
/* Checks that `file` exists and opens as HDF5 (on rank 0; result broadcast), with a clear error. */
PETSC_INTERN PetscErrorCode SgH5CheckReadable(MPI_Comm, const char file[], const char what[]);
/* Ensure a group path exists (creating intermediate groups). Returns an open group id. */
PETSC_INTERN PetscErrorCode SgH5OpenOrCreateGroup(hid_t file, const char path[], hid_t *group);
