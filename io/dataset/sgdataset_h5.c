/* HDF5 helpers for the dataset schema and the loader (see sgdataset_h5.h). */
#include "sgdataset_h5.h"
#include <string.h>

const char *const SgDTypes[] = {"f32", "f64", "i32", "i64", "SgDType", "SG_DTYPE_", NULL};

size_t SgDTypeSize(SgDType t)
{
  return (t == SG_DTYPE_F32 || t == SG_DTYPE_I32) ? 4 : 8;
}


hid_t SgH5FileType(SgDType t)
{
  switch (t) {
  case SG_DTYPE_F32: return H5T_IEEE_F32LE;
  case SG_DTYPE_F64: return H5T_IEEE_F64LE;
  case SG_DTYPE_I32: return H5T_STD_I32LE;
  default: return H5T_STD_I64LE;
  }
}

hid_t SgH5MemType(SgDType t)
{
  switch (t) {
  case SG_DTYPE_F32: return H5T_NATIVE_FLOAT;
  case SG_DTYPE_F64: return H5T_NATIVE_DOUBLE;
  case SG_DTYPE_I32: return H5T_NATIVE_INT32;
  default: return H5T_NATIVE_INT64;
  }
}

