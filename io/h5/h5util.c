/* Small HDF5 helpers with checked return codes, the HDF5 lock, error-stack capture. */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include "h5util.h"
#include "sghdf5.h"

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

static PetscBool IsLockFailure(const char msg[])
{
  return strstr(msg, "unable to lock file") ? PETSC_TRUE : PETSC_FALSE;
}

PetscErrorCode SgH5ErrorClass(const char msg[])
{
  return IsLockFailure(msg) ? PETSC_ERR_FILE_OPEN : PETSC_ERR_LIB;
}

const char *SgH5ErrorHint(const char msg[])
{
  return IsLockFailure(msg) ? ": another process has the file open (an earlier run still going, or the ranks of a killed mpiexec): stop it and run again" : "";
}

PetscErrorCode SgH5RemoveForCreate(MPI_Comm comm, const char path[])
{
  PetscMPIInt rank;
  int         err = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank && unlink(path) && errno != ENOENT) err = errno;
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "%s exists and cannot be replaced (%s): check the permissions of its directory", path, strerror(err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5CheckRoom(MPI_Comm comm, const char path[], double bytes, const char what[])
{
  PetscMPIInt rank;
  double      have[2] = {-1, 0}; /* free bytes (-1: unknown), needed */

  PetscFunctionBegin;
  if (getenv("SURGE_TEST_NO_ROOM_CHECK")) PetscFunctionReturn(PETSC_SUCCESS); /* tests: as a file system that does not say */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    char           dir[PETSC_MAX_PATH_LEN];
    const char    *slash = strrchr(path, '/');
    struct statvfs fs;
    if (slash) (void)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
    else (void)snprintf(dir, sizeof dir, ".");
    have[1] = bytes + bytes / 16 + 256.0 * 1024;
    if (!statvfs(dir, &fs)) have[0] = (double)fs.f_bavail * (double)fs.f_frsize;
  }
  PetscCallMPI(MPI_Bcast(have, 2, MPI_DOUBLE, 0, comm));
  PetscCheck(have[0] < 0 || have[0] >= have[1], comm, PETSC_ERR_FILE_OPEN, "cannot write %s to %s: its file system has %.3g MiB free and the write needs about %.3g MiB (disk full): free space and run again", what, path, have[0] / 1048576, have[1] / 1048576);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* HDF5 prints its whole error stack by default; we report one message through PETSc instead. */
void SgH5Quiet(void)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
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


PetscErrorCode SgH5WriteAttrReals(hid_t obj, const char name[], PetscInt n, const PetscReal v[])
{
  hsize_t dims = (hsize_t)n;
  hid_t   space, attr;

  PetscFunctionBegin;
  if (H5Aexists(obj, name) > 0) SgCallH5(H5Adelete(obj, name));
  space = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dims, NULL);
  SgCheckH5Id(space, "H5Screate");
  attr = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
  SgCheckH5Id(attr, name);
  SgCallH5(H5Awrite(attr, H5T_NATIVE_DOUBLE, v));
  SgCallH5(H5Aclose(attr));
  SgCallH5(H5Sclose(space));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5ReadAttrReals(hid_t obj, const char name[], PetscInt n, PetscReal v[], PetscBool *found)
{
  hid_t    attr, space;
  hssize_t npts;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (H5Aexists(obj, name) <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  attr = H5Aopen(obj, name, H5P_DEFAULT);
  SgCheckH5Id(attr, name);
  space = H5Aget_space(attr);
  npts  = H5Sget_simple_extent_npoints(space);
  PetscCheck(npts == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Attribute %s has %lld values, expected %" PetscInt_FMT, name, (long long)npts, n);
  SgCallH5(H5Aread(attr, H5T_NATIVE_DOUBLE, v));
  SgCallH5(H5Sclose(space));
  SgCallH5(H5Aclose(attr));
  *found = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5WriteRootReals(MPI_Comm comm, hid_t loc, const char name[], PetscInt n, const PetscReal v[])
{
  hsize_t     dims = (hsize_t)(n > 0 ? n : 0);
  hid_t       space, dset;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (H5Lexists(loc, name, H5P_DEFAULT) > 0) SgCallH5(H5Ldelete(loc, name, H5P_DEFAULT));
  space = H5Screate_simple(1, &dims, NULL);
  dset  = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  if (rank) SgCallH5(H5Sselect_none(space));
  if (n > 0) SgCallH5(H5Dwrite(dset, H5T_NATIVE_DOUBLE, rank ? space : H5S_ALL, space, H5P_DEFAULT, v));
  SgCallH5(H5Dclose(dset));
  SgCallH5(H5Sclose(space));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5ReadReals(hid_t loc, const char name[], PetscInt n, PetscReal v[], const char file[])
{
  hid_t    dset, space;
  hssize_t npts;

  PetscFunctionBegin;
  PetscCheck(H5Lexists(loc, name, H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s has no dataset '%s': it was not written by this kind of run, or it is damaged", file, name);
  dset = H5Dopen2(loc, name, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  space = H5Dget_space(dset);
  npts  = H5Sget_simple_extent_npoints(space);
  PetscCheck(npts == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset '%s' has %lld values, this run expects %" PetscInt_FMT, file, name, (long long)npts, n);
  if (n > 0) SgCallH5(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
  SgCallH5(H5Sclose(space));
  SgCallH5(H5Dclose(dset));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5CheckReadable(MPI_Comm comm, const char file[], const char what[])
{
  PetscMPIInt rank;
  int         state = 0; /* 0 ok, 1 missing, 2 not HDF5, 3 cannot open */

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    if (access(file, R_OK)) state = 1;
    else {
      H5E_auto2_t func;
      void       *data;
      H5Eget_auto2(H5E_DEFAULT, &func, &data);
      H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
      if (H5Fis_hdf5(file) <= 0) state = 2;
      else {
        hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0) state = 3;
        else H5Fclose(f);
      }
      H5Eset_auto2(H5E_DEFAULT, func, data);
    }
  }
  PetscCallMPI(MPI_Bcast(&state, 1, MPI_INT, 0, comm));
  PetscCheck(state != 1, comm, PETSC_ERR_FILE_OPEN, "%s '%s' does not exist or is not readable", what, file);
  PetscCheck(state != 2, comm, PETSC_ERR_FILE_UNEXPECTED, "%s '%s' is not an HDF5 file (or is truncated before its header): use a file written by surge", what, file);
  PetscCheck(state != 3, comm, PETSC_ERR_FILE_UNEXPECTED, "%s '%s' cannot be opened by HDF5: it is probably truncated or damaged", what, file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5OpenOrCreateGroup(hid_t file, const char path[], hid_t *group)
{
  char  buf[PETSC_MAX_PATH_LEN], *p;
  hid_t g;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(buf, path, sizeof buf));
  /* create each intermediate component in turn */
  for (p = strchr(buf + 1, '/');; p = strchr(p + 1, '/')) {
    if (p) *p = 0;
    if (H5Lexists(file, buf, H5P_DEFAULT) <= 0) {
      g = H5Gcreate2(file, buf, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      SgCheckH5Id(g, buf);
      SgCallH5(H5Gclose(g));
    }
    if (!p) break;
    *p = '/';
  }
  *group = H5Gopen2(file, path, H5P_DEFAULT);
  SgCheckH5Id(*group, path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5WriteRootString(const char path[], hid_t file, const char name[], const char value[])
{
  hid_t root;

  PetscFunctionBegin;
  root = H5Gopen2(file, "/", H5P_DEFAULT);
  SgH5Call(root, path, "cannot open the root group");
  PetscCall(SgH5WriteAttrString(path, root, name, value));
  H5Gclose(root);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MarkKind(const char path[], hid_t file, const char kind[])
{
  PetscFunctionBegin;
  PetscCall(SgH5WriteRootString(path, file, "surge_file", kind));
  PetscFunctionReturn(PETSC_SUCCESS);
}
