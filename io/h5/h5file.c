/* SgH5File (sgh5file.h): small single-process HDF5 files behind a handle, so that layers above io/
   never include <hdf5.h>. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include "sgh5file.h"
#include "sghdf5.h"
#include "h5util.h"
#include "sgwrite.h"

struct _n_SgH5File {
  hid_t     id;
  char      path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 32];
  PetscBool writing;
};

/* Run an HDF5 status/id expression under the lock; on failure unlock and raise SgH5Call's error. */
#define Locked(expr, f, ...) \
  do { \
    SgHDF5Lock(); \
    if ((expr) < 0) { \
      char sg_msg_[512], sg_what_[512]; \
      SgH5LastError(sg_msg_, sizeof sg_msg_); \
      SgHDF5Unlock(); \
      snprintf(sg_what_, sizeof sg_what_, __VA_ARGS__); \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s (HDF5: %s)", (f)->path, sg_what_, sg_msg_); \
    } \
    SgHDF5Unlock(); \
  } while (0)

static hid_t MemType(SgH5Type t)
{
  return t == SG_H5_INT ? H5T_NATIVE_INT : t == SG_H5_LONG ? H5T_NATIVE_LONG : H5T_NATIVE_DOUBLE; /* DOUBLE, DOUBLE_AS_F32 */
}
static hid_t FileType(SgH5Type t)
{
  return t == SG_H5_DOUBLE ? H5T_IEEE_F64LE : t == SG_H5_DOUBLE_AS_F32 ? H5T_IEEE_F32LE : MemType(t);
}

PetscErrorCode SgH5FileCreate(const char path[], const char kind[], SgH5File *file)
{
  SgH5File f;
  char     msg[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(SgWriteCheckMessage("the output", path, kind, msg, sizeof msg));
  PetscCheck(!msg[0], PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s", msg);
  PetscCall(PetscNew(&f));
  PetscCall(PetscStrncpy(f->path, path, sizeof f->path));
  PetscCall(SgWriteTempName(path, f->tmp, sizeof f->tmp));
  f->writing = PETSC_TRUE;
  SgH5Quiet();
  SgHDF5Lock();
  f->id = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  SgHDF5Unlock();
  if (f->id < 0) {
    PetscCall(PetscFree(f));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot create the temporary of %s: check that the directory exists and is writable", path);
  }
  *file = f;
  if (strcmp(kind, SG_FILE_DP)) PetscCall(SgH5FileWriteAttrString(f, "/", "surge_file", kind)); /* .dp stays DeePMD-kit's format */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileOpen(const char path[], SgH5File *file)
{
  SgH5File f;
  char     msg[512] = "";

  PetscFunctionBegin;
  PetscCheck(!access(path, R_OK), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot read %s: %s", path, errno == ENOENT ? "no such file (check the path)" : "permission denied");
  PetscCall(PetscNew(&f));
  PetscCall(PetscStrncpy(f->path, path, sizeof f->path));
  SgH5Quiet();
  SgHDF5Lock();
  f->id = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f->id < 0) SgH5LastError(msg, sizeof msg);
  SgHDF5Unlock();
  if (f->id < 0) {
    PetscCall(PetscFree(f));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s as HDF5 (HDF5: %s): check the path, or whether the file is complete", path, msg);
  }
  *file = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Finish(SgH5File *file, PetscBool keep)
{
  SgH5File f = *file;
  herr_t   e;

  PetscFunctionBegin;
  if (!f) PetscFunctionReturn(PETSC_SUCCESS);
  *file = NULL;
  SgHDF5Lock();
  e = H5Fclose(f->id);
  SgHDF5Unlock();
  if (f->writing) {
    if (e >= 0 && keep) {
      PetscErrorCode ierr = SgWriteCommit(f->tmp, f->path); /* fsync + rename; removes the temporary on failure */
      if (ierr) PetscCall(PetscFree(f));
      PetscCall(ierr);
      PetscCall(PetscFree(f));
      PetscFunctionReturn(PETSC_SUCCESS);
    } else (void)remove(f->tmp);
  }
  PetscCheck(e >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: closing the file failed (disk full?)", f->path);
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileClose(SgH5File *file)
{
  PetscFunctionBegin;
  PetscCall(Finish(file, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileDiscard(SgH5File *file)
{
  PetscFunctionBegin;
  PetscCall(Finish(file, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileGetPath(SgH5File f, const char **path)
{
  PetscFunctionBegin;
  *path = f->path;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every intermediate link must exist for H5Lexists to answer about the last one. */
PetscErrorCode SgH5FileHas(SgH5File f, const char obj[], PetscBool *has)
{
  char   part[PETSC_MAX_PATH_LEN];
  htri_t e = 1;

  PetscFunctionBegin;
  if (!strcmp(obj, "/")) {
    *has = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  SgHDF5Lock();
  for (const char *s = obj + 1; e > 0; s++) {
    const char *slash = strchr(s, '/');
    size_t      n     = slash ? (size_t)(slash - obj) : strlen(obj);
    if (n >= sizeof part) n = sizeof part - 1;
    memcpy(part, obj, n);
    part[n] = 0;
    e = H5Lexists(f->id, part, H5P_DEFAULT);
    if (!slash) break;
    s = slash;
  }
  SgHDF5Unlock();
  *has = e > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileHasAttr(SgH5File f, const char obj[], const char name[], PetscBool *has)
{
  htri_t e = 0;

  PetscFunctionBegin;
  PetscCall(SgH5FileHas(f, obj, has));
  if (!*has) PetscFunctionReturn(PETSC_SUCCESS);
  SgHDF5Lock();
  e = H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT);
  SgHDF5Unlock();
  *has = e > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileCreateGroup(SgH5File f, const char path[])
{
  hid_t g;

  PetscFunctionBegin;
  Locked(g = H5Gcreate2(f->id, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), f, "cannot create group %s", path);
  Locked(H5Gclose(g), f, "cannot close group %s", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteAttrTyped(SgH5File f, const char obj[], const char name[], hid_t ftype, hid_t mtype, PetscInt n, const void *v)
{
  hsize_t hn = (hsize_t)n;
  hid_t   sp, a;

  PetscFunctionBegin;
  Locked(sp = n ? H5Screate_simple(1, &hn, NULL) : H5Screate(H5S_SCALAR), f, "cannot make the space of attribute %s", name);
  Locked(a = H5Acreate_by_name(f->id, obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), f, "cannot create attribute %s of %s", name, obj);
  Locked(H5Awrite(a, mtype, v), f, "cannot write attribute %s of %s", name, obj);
  Locked(H5Aclose(a), f, "cannot close attribute %s", name);
  Locked(H5Sclose(sp), f, "cannot close a dataspace");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileWriteAttr(SgH5File f, const char obj[], const char name[], SgH5Type t, PetscInt n, const void *v)
{
  PetscFunctionBegin;
  PetscCall(WriteAttrTyped(f, obj, name, FileType(t), MemType(t), n, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileWriteAttrString(SgH5File f, const char obj[], const char name[], const char value[])
{
  hid_t s;

  PetscFunctionBegin;
  Locked(s = H5Tcopy(H5T_C_S1), f, "H5Tcopy");
  Locked(H5Tset_size(s, strlen(value) + 1), f, "H5Tset_size");
  PetscCall(WriteAttrTyped(f, obj, name, s, s, 0, value));
  Locked(H5Tclose(s), f, "H5Tclose");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpenAttr(SgH5File f, const char obj[], const char name[], hid_t *a, PetscInt64 *n)
{
  PetscBool has;
  hid_t     sp;
  hssize_t  np;

  PetscFunctionBegin;
  PetscCall(SgH5FileHasAttr(f, obj, name, &has));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' of %s is missing", f->path, name, obj);
  Locked(*a = H5Aopen_by_name(f->id, obj, name, H5P_DEFAULT, H5P_DEFAULT), f, "cannot open attribute %s of %s", name, obj);
  Locked(sp = H5Aget_space(*a), f, "cannot read the space of attribute %s", name);
  Locked(np = H5Sget_simple_extent_npoints(sp), f, "cannot size attribute %s", name);
  Locked(H5Sclose(sp), f, "cannot close a dataspace");
  *n = (PetscInt64)np;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileReadAttr(SgH5File f, const char obj[], const char name[], SgH5Type t, PetscInt cap, void *v, PetscInt *n)
{
  hid_t      a;
  PetscInt64 np;

  PetscFunctionBegin;
  PetscCall(OpenAttr(f, obj, name, &a, &np));
  if (np > (n ? cap : 1)) {
    SgHDF5Lock();
    H5Aclose(a);
    SgHDF5Unlock();
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' of %s has %" PetscInt64_FMT " values, at most %" PetscInt_FMT " expected", f->path, name, obj, np, n ? cap : 1);
  }
  Locked(H5Aread(a, MemType(t), v), f, "cannot read attribute %s of %s", name, obj);
  Locked(H5Aclose(a), f, "cannot close attribute %s", name);
  if (n) *n = (PetscInt)np;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The type probe of the two string readers: opens attribute `name` and its type and tells whether it
   is one string (*one: a string class and a single value), its size in bytes and whether that size
   is variable. The caller decides what it accepts and closes both (CloseAttr) on every path. */
static PetscErrorCode OpenStringAttr(SgH5File f, const char obj[], const char name[], hid_t *a, hid_t *t, PetscBool *one, size_t *size, PetscBool *isvar)
{
  PetscInt64  np;
  htri_t      var;
  H5T_class_t cls;

  PetscFunctionBegin;
  PetscCall(OpenAttr(f, obj, name, a, &np));
  Locked(*t = H5Aget_type(*a), f, "cannot read the type of attribute %s", name);
  SgHDF5Lock();
  *size = H5Tget_size(*t);
  var   = H5Tis_variable_str(*t);
  cls   = H5Tget_class(*t);
  SgHDF5Unlock();
  *one   = (cls == H5T_STRING && np == 1) ? PETSC_TRUE : PETSC_FALSE;
  *isvar = var > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* closes an attribute and its type on a path that is about to raise its own error */
static void CloseAttr(hid_t a, hid_t t)
{
  SgHDF5Lock();
  H5Tclose(t);
  H5Aclose(a);
  SgHDF5Unlock();
}

PetscErrorCode SgH5FileReadAttrString(SgH5File f, const char obj[], const char name[], char value[], size_t len)
{
  hid_t     a, t, m;
  size_t    sz;
  PetscBool one, isvar;

  PetscFunctionBegin;
  PetscCall(OpenStringAttr(f, obj, name, &a, &t, &one, &sz, &isvar));
  if (!one || isvar || sz >= len) {
    CloseAttr(a, t);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' of %s is not a fixed-length string shorter than %zu bytes", f->path, name, obj, len);
  }
  memset(value, 0, len);
  Locked(m = H5Tcopy(H5T_C_S1), f, "H5Tcopy");
  Locked(H5Tset_size(m, len), f, "H5Tset_size");
  Locked(H5Aread(a, m, value), f, "cannot read attribute %s of %s", name, obj);
  value[len - 1] = 0;
  Locked(H5Tclose(m), f, "H5Tclose");
  Locked(H5Tclose(t), f, "H5Tclose");
  Locked(H5Aclose(a), f, "cannot close attribute %s", name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileWrite(SgH5File f, const char path[], SgH5Type t, PetscInt rank, const PetscInt64 dims[], const void *v)
{
  hsize_t hd[SG_H5_MAXDIM];
  hid_t   sp, d, dc;

  PetscFunctionBegin;
  PetscCheck(rank >= 1 && rank <= SG_H5_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: dataset %s of rank %" PetscInt_FMT, f->path, path, rank);
  for (PetscInt k = 0; k < rank; k++) hd[k] = (hsize_t)dims[k];
  Locked(sp = H5Screate_simple((int)rank, hd, NULL), f, "cannot make the space of %s", path);
  /* no object timestamps: the same content gives the same bytes (surge model export/import round trips) */
  Locked(dc = H5Pcreate(H5P_DATASET_CREATE), f, "cannot make a dataset property list");
  Locked(H5Pset_obj_track_times(dc, 0), f, "H5Pset_obj_track_times");
  Locked(d = H5Dcreate2(f->id, path, FileType(t), sp, H5P_DEFAULT, dc, H5P_DEFAULT), f, "cannot create dataset %s", path);
  Locked(H5Pclose(dc), f, "H5Pclose");
  Locked(H5Dwrite(d, MemType(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, v), f, "cannot write dataset %s", path);
  Locked(H5Dclose(d), f, "cannot close dataset %s", path);
  Locked(H5Sclose(sp), f, "cannot close a dataspace");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpenData(SgH5File f, const char path[], hid_t *d)
{
  PetscBool has;

  PetscFunctionBegin;
  PetscCall(SgH5FileHas(f, path, &has));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset %s is missing", f->path, path);
  Locked(*d = H5Dopen2(f->id, path, H5P_DEFAULT), f, "cannot open dataset %s", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileGetDims(SgH5File f, const char path[], PetscInt *rank, PetscInt64 dims[SG_H5_MAXDIM])
{
  hsize_t hd[SG_H5_MAXDIM];
  hid_t   d, sp;
  int     r;

  PetscFunctionBegin;
  PetscCall(OpenData(f, path, &d));
  Locked(sp = H5Dget_space(d), f, "cannot read the space of %s", path);
  Locked(r = H5Sget_simple_extent_ndims(sp), f, "cannot read the rank of %s", path);
  PetscCheck(r <= SG_H5_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset %s has rank %d > %d", f->path, path, r, SG_H5_MAXDIM);
  Locked(H5Sget_simple_extent_dims(sp, hd, NULL), f, "cannot read the dims of %s", path);
  Locked(H5Sclose(sp), f, "cannot close a dataspace");
  Locked(H5Dclose(d), f, "cannot close dataset %s", path);
  *rank = r;
  for (int k = 0; k < r; k++) dims[k] = (PetscInt64)hd[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileRead(SgH5File f, const char path[], SgH5Type t, PetscInt64 n, void *v)
{
  PetscInt   rank;
  PetscInt64 dims[SG_H5_MAXDIM], total = 1;
  hid_t      d;

  PetscFunctionBegin;
  PetscCall(SgH5FileGetDims(f, path, &rank, dims));
  for (PetscInt k = 0; k < rank; k++) total *= dims[k];
  PetscCheck(total == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset %s has %" PetscInt64_FMT " values, %" PetscInt64_FMT " expected", f->path, path, total, n);
  PetscCall(OpenData(f, path, &d));
  Locked(H5Dread(d, MemType(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, v), f, "cannot read dataset %s", path);
  Locked(H5Dclose(d), f, "cannot close dataset %s", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A 1-D dataset of total values written in blocks (the shards of a state distributed over ranks):
   created unwritten, each block a hyperslab. */
PetscErrorCode SgH5FileCreateSlab(SgH5File f, const char path[], SgH5Type t, PetscInt64 total)
{
  hsize_t n = (hsize_t)total;
  hid_t   sp, d, dc;

  PetscFunctionBegin;
  PetscCheck(total >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: dataset %s of %" PetscInt64_FMT " values", f->path, path, total);
  Locked(sp = H5Screate_simple(1, &n, NULL), f, "cannot make the space of %s", path);
  Locked(dc = H5Pcreate(H5P_DATASET_CREATE), f, "cannot make a dataset property list");
  Locked(H5Pset_obj_track_times(dc, 0), f, "H5Pset_obj_track_times");
  Locked(d = H5Dcreate2(f->id, path, FileType(t), sp, H5P_DEFAULT, dc, H5P_DEFAULT), f, "cannot create dataset %s", path);
  Locked(H5Pclose(dc), f, "H5Pclose");
  Locked(H5Dclose(d), f, "cannot close dataset %s", path);
  Locked(H5Sclose(sp), f, "cannot close a dataspace");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hyperslab [offset, offset + count) of the 1-D dataset path of total values, read or written. */
static PetscErrorCode Block(SgH5File f, const char path[], SgH5Type t, PetscInt64 total, PetscInt64 offset, PetscInt64 count, PetscBool write, void *v)
{
  hsize_t o = (hsize_t)offset, c = (hsize_t)count;
  hid_t   d, fs, ms;
  PetscInt   rank;
  PetscInt64 dims[SG_H5_MAXDIM];

  PetscFunctionBegin;
  PetscCall(SgH5FileGetDims(f, path, &rank, dims));
  PetscCheck(rank == 1 && dims[0] == total, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset %s is not a list of %" PetscInt64_FMT " values: written by another model, or damaged", f->path, path, total);
  PetscCheck(offset >= 0 && count >= 0 && offset + count <= total, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: block [%" PetscInt64_FMT ", %" PetscInt64_FMT ") outside dataset %s of %" PetscInt64_FMT " values", f->path, offset, offset + count, path, total);
  if (!count) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(OpenData(f, path, &d));
  Locked(fs = H5Dget_space(d), f, "cannot read the space of %s", path);
  Locked(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &o, NULL, &c, NULL), f, "cannot select a block of %s", path);
  Locked(ms = H5Screate_simple(1, &c, NULL), f, "cannot make the space of a block of %s", path);
  if (write) Locked(H5Dwrite(d, MemType(t), ms, fs, H5P_DEFAULT, v), f, "cannot write a block of dataset %s", path);
  else Locked(H5Dread(d, MemType(t), ms, fs, H5P_DEFAULT, v), f, "cannot read a block of dataset %s", path);
  Locked(H5Sclose(ms), f, "cannot close a dataspace");
  Locked(H5Sclose(fs), f, "cannot close a dataspace");
  Locked(H5Dclose(d), f, "cannot close dataset %s", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileWriteBlock(SgH5File f, const char path[], SgH5Type t, PetscInt64 total, PetscInt64 offset, PetscInt64 count, const void *v)
{
  PetscFunctionBegin;
  PetscCall(Block(f, path, t, total, offset, count, PETSC_TRUE, (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5FileReadBlock(SgH5File f, const char path[], SgH5Type t, PetscInt64 total, PetscInt64 offset, PetscInt64 count, void *v)
{
  PetscFunctionBegin;
  PetscCall(Block(f, path, t, total, offset, count, PETSC_FALSE, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A text attribute of any length, stored as h5py stores a Python str (variable-length UTF-8): how
   DeePMD-kit keeps the JSON dictionary of a .dp model. */
PetscErrorCode SgH5FileWriteAttrText(SgH5File f, const char obj[], const char name[], const char value[])
{
  hid_t s;

  PetscFunctionBegin;
  Locked(s = H5Tcopy(H5T_C_S1), f, "H5Tcopy");
  Locked(H5Tset_size(s, H5T_VARIABLE), f, "H5Tset_size");
  Locked(H5Tset_cset(s, H5T_CSET_UTF8), f, "H5Tset_cset");
  PetscCall(WriteAttrTyped(f, obj, name, s, s, 0, &value));
  Locked(H5Tclose(s), f, "H5Tclose");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads a fixed- or variable-length scalar string attribute of at most maxlen bytes into *text
   (PetscFree it). */
PetscErrorCode SgH5FileReadAttrText(SgH5File f, const char obj[], const char name[], size_t maxlen, char **text)
{
  hid_t     a, t, sp, m;
  size_t    sz;
  PetscBool one, isvar;

  PetscFunctionBegin;
  *text = NULL;
  PetscCall(OpenStringAttr(f, obj, name, &a, &t, &one, &sz, &isvar));
  if (!one || (!isvar && sz > maxlen)) {
    CloseAttr(a, t);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' of %s is not one string of at most %zu bytes", f->path, name, obj, maxlen);
  }
  if (isvar) {
    char *v = NULL;
    Locked(m = H5Tcopy(H5T_C_S1), f, "H5Tcopy");
    Locked(H5Tset_size(m, H5T_VARIABLE), f, "H5Tset_size");
    Locked(H5Tset_cset(m, H5Tget_cset(t)), f, "H5Tset_cset");
    Locked(H5Aread(a, m, &v), f, "cannot read attribute %s of %s", name, obj);
    if (v && strlen(v) <= maxlen) PetscCall(PetscStrallocpy(v, text));
    Locked(sp = H5Aget_space(a), f, "cannot read the space of attribute %s", name);
    SgHDF5Lock();
    if (v) H5Dvlen_reclaim(m, sp, H5P_DEFAULT, &v);
    H5Sclose(sp);
    SgHDF5Unlock();
    Locked(H5Tclose(m), f, "H5Tclose");
  } else {
    PetscCall(PetscCalloc1(sz + 1, text));
    Locked(m = H5Tcopy(H5T_C_S1), f, "H5Tcopy");
    Locked(H5Tset_size(m, sz + 1), f, "H5Tset_size");
    Locked(H5Aread(a, m, *text), f, "cannot read attribute %s of %s", name, obj);
    Locked(H5Tclose(m), f, "H5Tclose");
  }
  Locked(H5Tclose(t), f, "H5Tclose");
  Locked(H5Aclose(a), f, "cannot close attribute %s", name);
  PetscCheck(*text, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute '%s' of %s is empty or longer than %zu bytes", f->path, name, obj, maxlen);
  PetscFunctionReturn(PETSC_SUCCESS);
}
