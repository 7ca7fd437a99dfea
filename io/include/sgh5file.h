/* SgH5File: a small HDF5 file read or written by one process -- model files, run outputs read back,
   trajectories -- for layers that must not include <hdf5.h> (only io/ does).

   Objects are named by path ("/", "training", "/fields/b/00003"); attributes hang on an object.
   A created file is written to PATH.tmp and committed (fsync, rename) to PATH by SgH5FileClose, so a crash never leaves
   a broken file; SgH5FileDiscard removes the temporary instead. Every call holds the process-wide
   HDF5 lock (sghdf5.h) and turns an HDF5 failure into one PETSc error naming the file, the object
   and HDF5's innermost message. Not collective: call it on the rank that owns the file. */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"
#include "sgwrite.h"

typedef struct _n_SgH5File *SgH5File;
/* Element types of attributes and datasets: C int, C long, double (stored as little-endian IEEE f64).
   SG_H5_DOUBLE_AS_F32: double in memory, stored as IEEE f32 -- for values the caller knows to be exact
   in single precision (weights trained in float32), so the file is half the size and reads back as the
   same doubles; reading any float dataset with SG_H5_DOUBLE converts it. */
typedef enum { SG_H5_INT, SG_H5_LONG, SG_H5_DOUBLE, SG_H5_DOUBLE_AS_F32 } SgH5Type;
#define SG_H5_MAXDIM 8

/* Create through the write path (sgwrite.h): refused if path is an input of the run or an existing
   file that is not surge's file of `kind` (SG_FILE_MODEL, ...; -overwrite allows the latter); the
   file is marked with its kind, written to PATH.tmp, and committed (fsync, rename) by Close. */
PETSC_EXTERN PetscErrorCode SgH5FileCreate(const char path[], const char kind[], SgH5File *);
PETSC_EXTERN PetscErrorCode SgH5FileOpen(const char path[], SgH5File *);
PETSC_EXTERN PetscErrorCode SgH5FileClose(SgH5File *);
PETSC_EXTERN PetscErrorCode SgH5FileDiscard(SgH5File *);
PETSC_EXTERN PetscErrorCode SgH5FileGetPath(SgH5File, const char **);

/* Whether the object (group or dataset) exists; whether obj has attribute name. */
PETSC_EXTERN PetscErrorCode SgH5FileHas(SgH5File, const char obj[], PetscBool *);
PETSC_EXTERN PetscErrorCode SgH5FileHasAttr(SgH5File, const char obj[], const char name[], PetscBool *);
PETSC_EXTERN PetscErrorCode SgH5FileCreateGroup(SgH5File, const char path[]);

/* Attributes: n = 0 writes a scalar, n > 0 a 1-D array. Reading takes at most cap values and returns
   their number in *n (NULL: exactly one value expected). */
PETSC_EXTERN PetscErrorCode SgH5FileWriteAttr(SgH5File, const char obj[], const char name[], SgH5Type, PetscInt n, const void *v);
PETSC_EXTERN PetscErrorCode SgH5FileReadAttr(SgH5File, const char obj[], const char name[], SgH5Type, PetscInt cap, void *v, PetscInt *n);
/* Fixed-length string attributes (length + 1 bytes, NUL-terminated); reading fails if len is too short. */
PETSC_EXTERN PetscErrorCode SgH5FileWriteAttrString(SgH5File, const char obj[], const char name[], const char value[]);
PETSC_EXTERN PetscErrorCode SgH5FileReadAttrString(SgH5File, const char obj[], const char name[], char value[], size_t len);
/* Text of any length: written as a variable-length UTF-8 string (as h5py writes a str), read from a
   fixed- or variable-length string of at most maxlen bytes into *text (PetscFree). */
PETSC_EXTERN PetscErrorCode SgH5FileWriteAttrText(SgH5File, const char obj[], const char name[], const char value[]);
PETSC_EXTERN PetscErrorCode SgH5FileReadAttrText(SgH5File, const char obj[], const char name[], size_t maxlen, char **text);

/* Datasets written whole: rank and dims as given. Reading checks the element count (n) and converts
   to the memory type. */
PETSC_EXTERN PetscErrorCode SgH5FileWrite(SgH5File, const char path[], SgH5Type, PetscInt rank, const PetscInt64 dims[], const void *v);
PETSC_EXTERN PetscErrorCode SgH5FileGetDims(SgH5File, const char path[], PetscInt *rank, PetscInt64 dims[SG_H5_MAXDIM]);
PETSC_EXTERN PetscErrorCode SgH5FileRead(SgH5File, const char path[], SgH5Type, PetscInt64 n, void *v);
/* 1-D datasets of total values in blocks (a state sharded over ranks, written by rank 0 as the blocks
   reach it, read back by each rank for its own block): CreateSlab makes it unwritten, each block is
   [offset, offset + count). Both check that the dataset holds exactly total values. */
PETSC_EXTERN PetscErrorCode SgH5FileCreateSlab(SgH5File, const char path[], SgH5Type, PetscInt64 total);
PETSC_EXTERN PetscErrorCode SgH5FileWriteBlock(SgH5File, const char path[], SgH5Type, PetscInt64 total, PetscInt64 offset, PetscInt64 count, const void *v);
PETSC_EXTERN PetscErrorCode SgH5FileReadBlock(SgH5File, const char path[], SgH5Type, PetscInt64 total, PetscInt64 offset, PetscInt64 count, void *v);
