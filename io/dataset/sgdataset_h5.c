/* HDF5 helpers for the dataset schema and the loader (see sgdataset_h5.h). */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "sgdataset_h5.h"
#include <string.h>
#include <pthread.h>

/* Debian's HDF5 is built without its thread-safety option, so two threads must never be inside
   HDF5 at once. The loader's I/O thread and every SgDataset call take this lock; it is recursive
   because dataset functions call each other. (The only process-wide state of this module.) */
static pthread_mutex_t sg_hdf5_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void SgHDF5Lock(void)
{
  pthread_mutex_lock(&sg_hdf5_lock);
}

void SgHDF5Unlock(void)
{
  pthread_mutex_unlock(&sg_hdf5_lock);
}

const char *const SgDTypes[] = {"f32", "f64", "i32", "i64", "SgDType", "SG_DTYPE_", NULL};

size_t SgDTypeSize(SgDType t)
{
  return (t == SG_DTYPE_F32 || t == SG_DTYPE_I32) ? 4 : 8;
}

typedef struct {
  char  *buf;
  size_t len;
} ErrCapture;

/* Walking downward ends at the innermost record: the one that says what is actually wrong
   (e.g. "truncated file: eof = ..."), which is the one worth showing. */
static herr_t WalkCb(unsigned n, const H5E_error2_t *e, void *ctx)
{
  ErrCapture *c = (ErrCapture *)ctx;
  (void)n;
  if (e->desc && e->desc[0]) snprintf(c->buf, c->len, "%s", e->desc);
  return 0;
}

void SgH5LastError(char *buf, size_t len)
{
  ErrCapture c = {buf, len};
  snprintf(buf, len, "no detail");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, WalkCb, &c);
}

/* HDF5 prints its whole error stack by default; we report one message through PETSc instead. */
void SgH5Quiet(void)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
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

PetscErrorCode SgH5WriteAttrString(const char path[], hid_t loc, const char name[], const char value[])
{
  hid_t  type, space, attr;
  size_t n = strlen(value);

  PetscFunctionBegin;
  if (H5Aexists(loc, name) > 0) SgH5Call(H5Adelete(loc, name), path, "cannot replace attribute %s", name);
  type = H5Tcopy(H5T_C_S1);
  SgH5Call(type, path, "H5Tcopy");
  SgH5Call(H5Tset_size(type, n ? n : 1), path, "H5Tset_size");
  SgH5Call(H5Tset_strpad(type, H5T_STR_NULLPAD), path, "H5Tset_strpad");
  space = H5Screate(H5S_SCALAR);
  attr  = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(attr, path, "cannot create attribute %s", name);
  SgH5Call(H5Awrite(attr, type, n ? value : ""), path, "cannot write attribute %s", name);
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5ReadAttrString(const char path[], hid_t loc, const char name[], char **value)
{
  hid_t  attr, type, mtype;
  size_t n;

  PetscFunctionBegin;
  *value = NULL;
  PetscCheck(H5Aexists(loc, name) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' is missing", path, name);
  attr = H5Aopen(loc, name, H5P_DEFAULT);
  SgH5Call(attr, path, "cannot open attribute %s", name);
  type = H5Aget_type(attr);
  PetscCheck(H5Tget_class(type) == H5T_STRING, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' is not a string", path, name);
  if (H5Tis_variable_str(type) > 0) {
    char *vs = NULL;
    mtype    = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, H5T_VARIABLE);
    SgH5Call(H5Aread(attr, mtype, &vs), path, "cannot read attribute %s", name);
    PetscCall(PetscStrallocpy(vs ? vs : "", value));
    if (vs) H5free_memory(vs);
    H5Tclose(mtype);
  } else {
    n = H5Tget_size(type);
    PetscCall(PetscCalloc1(n + 1, value));
    mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, n);
    H5Tset_strpad(mtype, H5T_STR_NULLPAD);
    SgH5Call(H5Aread(attr, mtype, *value), path, "cannot read attribute %s", name);
    H5Tclose(mtype);
  }
  H5Tclose(type);
  H5Aclose(attr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
