/* Private helpers shared by the dataset and loader code: HDF5 types of the schema's dtypes. The
   general HDF5 helpers (status checks naming the file, error capture, string attributes) are in
   io/h5/h5util.h. Not part of the public API. */
#pragma once
#include <hdf5.h>
#include <petscsys.h>
#include "sgdataset.h"
#include "../h5/h5util.h" /* SgH5Call, error capture, string attributes, the HDF5 lock */

PETSC_INTERN hid_t          SgH5FileType(SgDType);
PETSC_INTERN hid_t          SgH5MemType(SgDType);
