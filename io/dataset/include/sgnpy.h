/* Minimal NumPy .npy reader and writer (format versions 1.0, 2.0 and 3.0 on read; 1.0 on write).

   Only what DeePMD-kit data directories need: little-endian float64 ('<f8') or float32 ('<f4'),
   C order, any number of dimensions up to SG_NPY_MAXDIM. Anything else (big-endian, Fortran order,
   integers, objects, structured dtypes) is rejected with an error naming the file and the field
   of the header that is not supported. Format reference:
   https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html */
#pragma once
#include <petscsys.h>
#include <stdint.h>
#include <stdio.h>
#include "sgcompat.h"

#define SG_NPY_MAXDIM 8

typedef struct {
  int     esize;                 /* bytes per element: 4 ('<f4') or 8 ('<f8') */
  int     ndim;
  int64_t shape[SG_NPY_MAXDIM];
  int64_t count;                 /* product of shape (1 for a 0-d array) */
} SgNpyInfo;

/* Reads the whole array. *data is PetscMalloc'ed (free with PetscFree); count*esize bytes. */
PETSC_EXTERN PetscErrorCode SgNpyRead(const char path[], SgNpyInfo *info, void **data);
/* Writes a C-order little-endian array to fp, a file the caller opened through the write path
   (sgwrite.h: SgWriteDirFileOpen) and closes; path names it in errors. esize 4 or 8. The header is
   padded so the data starts on a 64-byte boundary, as NumPy >= 1.x writes it, so files round-trip
   byte for byte. */
PETSC_EXTERN PetscErrorCode SgNpyWrite(FILE *fp, const char path[], int esize, int ndim, const int64_t shape[], const void *data);
