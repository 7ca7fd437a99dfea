/* Private helpers shared by the dataset and loader code: HDF5 status checks that name the file,
   HDF5 error-stack capture, string attributes. Not part of the public API. */
#pragma once
#include <hdf5.h>
#include <petscsys.h>
#include "sgdataset.h"

/* Turn a negative HDF5 status into a PETSc error naming the file, what we were doing, and the
   innermost message of HDF5's error stack (which is silenced so the user sees one message). */
#define SgH5Call(call, path, ...) \
  do { \
    if ((call) < 0) { \
      char sg_h5msg_[512], sg_what_[512]; \
      SgH5LastError(sg_h5msg_, sizeof sg_h5msg_); \
      snprintf(sg_what_, sizeof sg_what_, __VA_ARGS__); \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s (HDF5: %s)", path, sg_what_, sg_h5msg_); \
    } \
  } while (0)

PETSC_INTERN void           SgH5LastError(char *buf, size_t len);
PETSC_INTERN void           SgH5Quiet(void);
PETSC_INTERN hid_t          SgH5FileType(SgDType);
PETSC_INTERN hid_t          SgH5MemType(SgDType);
PETSC_INTERN PetscErrorCode SgH5WriteAttrString(const char path[], hid_t loc, const char name[], const char value[]);
PETSC_INTERN PetscErrorCode SgH5ReadAttrString(const char path[], hid_t loc, const char name[], char **value);
