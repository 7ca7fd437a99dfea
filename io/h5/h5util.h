/* Private helpers shared by io/h5 files: checked HDF5 calls and small collective writers. */
#pragma once
#include <hdf5.h>
#include <petscsys.h>
#include "sgcompat.h"
#include "sghdf5.h"

/* Check an HDF5 return (negative = failure) and name the call. */
#define SgCallH5(call) \
  do { \
    if ((call) < 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5 call failed: %s", #call); \
  } while (0)

/* Checked id-returning HDF5 calls: SgCheckH5Id(id, "what") after the call, or SgH5Assign(id, call). */
#define SgCheckH5Id(id, what) PetscCheck((id) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5: %s failed", what)
#define SgH5Assign(id, call) \
  do { \
    (id) = (call); \
    if ((id) < 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5 call failed: %s", #call); \
  } while (0)

/* Run a PETSc-style function while holding the process-wide HDF5 lock (sghdf5.h): the lock is released
   before an error propagates. */
#define SgH5Locked(call) \
  do { \
    PetscErrorCode sg_ierr_; \
    SgHDF5Lock(); \
    sg_ierr_ = (call); \
    SgHDF5Unlock(); \
    PetscCall(sg_ierr_); \
  } while (0)

/* Turn a negative HDF5 status into a PETSc error naming the file, what we were doing, and the
   innermost message of HDF5's error stack (which is silenced so the user sees one message). */
#define SgH5Call(call, path, ...) \
  do { \
    if ((call) < 0) { \
      char sg_h5msg_[512], sg_what_[512]; \
      SgH5LastError(sg_h5msg_, sizeof sg_h5msg_); \
      snprintf(sg_what_, sizeof sg_what_, __VA_ARGS__); \
      SETERRQ(PETSC_COMM_SELF, SgH5ErrorClass(sg_h5msg_), "%s: %s (HDF5: %s)%s", path, sg_what_, sg_h5msg_, SgH5ErrorHint(sg_h5msg_)); \
    } \
  } while (0)

/* The innermost message of HDF5's error stack; and silencing HDF5's own stack printing. */
PETSC_INTERN void SgH5LastError(char *buf, size_t len);
PETSC_INTERN void SgH5Quiet(void);
/* The PETSc class of an HDF5 failure and a hint for the user: a file another process holds (HDF5's
   file lock) is the user's to fix (PETSC_ERR_FILE_OPEN: one line), anything else a library error. */
PETSC_INTERN PetscErrorCode SgH5ErrorClass(const char msg[]);
PETSC_INTERN const char    *SgH5ErrorHint(const char msg[]);
/* Before creating `path` afresh (collective on comm; rank 0 acts): remove an existing file, so that a
   process still reading it (a viewer, a rank of a killed job) keeps the old inode and the new file is
   a new one. Creating with H5F_ACC_TRUNC instead truncates the old file under that reader first and
   then fails on HDF5's file lock: the old data lost, the new file not written. */
PETSC_INTERN PetscErrorCode SgH5RemoveForCreate(MPI_Comm comm, const char path[]);
/* String attributes; path names the file in errors. Read returns a PetscMalloc'ed string and fails
   if the attribute is missing (check H5Aexists first where it is optional). */
PETSC_INTERN PetscErrorCode SgH5WriteAttrString(const char path[], hid_t loc, const char name[], const char value[]);
PETSC_INTERN PetscErrorCode SgH5ReadAttrString(const char path[], hid_t loc, const char name[], char **value);

/* Write a scalar/array attribute of doubles (collective when the file is opened with MPI-IO:
   every rank passes the same values). */
PETSC_INTERN PetscErrorCode SgH5WriteAttrReals(hid_t obj, const char name[], PetscInt n, const PetscReal v[]);
/* Read an attribute; *found says whether it exists. */
PETSC_INTERN PetscErrorCode SgH5ReadAttrReals(hid_t obj, const char name[], PetscInt n, PetscReal v[], PetscBool *found);
/* Create (collectively) a 1D dataset of n doubles that rank 0 fills. */
PETSC_INTERN PetscErrorCode SgH5WriteRootReals(MPI_Comm, hid_t loc, const char name[], PetscInt n, const PetscReal v[]);
PETSC_INTERN PetscErrorCode SgH5ReadReals(hid_t loc, const char name[], PetscInt n, PetscReal v[], const char file[]);
/* Checks that `file` exists and opens as HDF5 (on rank 0; result broadcast), with a clear error. */
PETSC_INTERN PetscErrorCode SgH5CheckReadable(MPI_Comm, const char file[], const char what[]);
/* Ensure a group path exists (creating intermediate groups). Returns an open group id. */
PETSC_INTERN PetscErrorCode SgH5OpenOrCreateGroup(hid_t file, const char path[], hid_t *group);
/* Mark an HDF5 file as surge's file of `kind` (sgwrite.h): the root attribute surge_file. */
PETSC_INTERN PetscErrorCode SgH5MarkKind(const char path[], hid_t file, const char kind[]);
/* A string attribute of the root group. */
PETSC_INTERN PetscErrorCode SgH5WriteRootString(const char path[], hid_t file, const char name[], const char value[]);

/* HDF5 files of the write path (sgwrite.h) that are written over a run, for io/ writers holding an
   hid_t (the H5MD trajectory with MPI-IO, training checkpoints): SgH5StagedOpen checks path
   (SgWriteCheck, collective on comm), and creates PATH.tmp marked with kind -- or, with cont and an
   existing file of that kind, copies it to PATH.tmp and opens that, so the run continues it; fapl
   is the caller's (H5P_DEFAULT or MPI-IO). SgH5StagedCommit closes the file and renames PATH.tmp
   over PATH (collective; one error on every rank, the earlier file whole on failure);
   SgH5StagedDiscard closes and removes the temporary (error paths; any rank). */
PETSC_INTERN PetscErrorCode SgH5StagedOpen(MPI_Comm comm, const char option[], const char path[], const char kind[], PetscBool cont, hid_t fapl, hid_t *file, char tmp[], size_t len);
PETSC_INTERN PetscErrorCode SgH5StagedCommit(MPI_Comm comm, hid_t *file, const char tmp[], const char path[]);
PETSC_INTERN void           SgH5StagedDiscard(hid_t *file, const char tmp[]);

/* Room for a collective write of about `bytes` more into `path` (collective; rank 0 asks statvfs(3)
   of its directory and tells the others). A full disk met inside a collective HDF5 call can fail on one
   rank only (rank 0 allocating a dataset's chunks while the others wait in HDF5's barrier), which no
   agreement can reach; checked before the call, every rank refuses together with one line instead.
   The margin (1/16 + 256 KiB) covers HDF5's metadata. A file system that does not say (statvfs fails)
   passes; the write path's own checks still catch a later failure (SURGE_TEST_NO_ROOM_CHECK=1 makes
   every file system such a one, for the tests of that later failure). */
PETSC_INTERN PetscErrorCode SgH5CheckRoom(MPI_Comm comm, const char path[], double bytes, const char what[]);
