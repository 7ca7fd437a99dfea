/* For tests of what surge refuses to read: a copy of an HDF5 file with one value of a 1-D float
   dataset replaced (a NaN where a diverged run or a damaged disk would leave one). Header-only: the
   unit tests of several folders include it. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <hdf5.h>
#include <petscsys.h>

/* dst = src with dataset[at] = value; rank 0 of comm writes it, every rank returns after it exists. */
static inline PetscErrorCode SgTestDamagedCopy(MPI_Comm comm, const char src[], const char dst[], const char dataset[], hsize_t at, double value)
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    FILE   *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    char    buf[4096];
    size_t  n;
    hsize_t one = 1;
    hid_t   f, d, fs, ms;
    PetscCheck(in && out, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot copy %s to %s", src, dst);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) PetscCheck(fwrite(buf, 1, n, out) == n, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", dst);
    fclose(in);
    fclose(out);
    f  = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    d  = f >= 0 ? H5Dopen2(f, dataset, H5P_DEFAULT) : -1;
    fs = d >= 0 ? H5Dget_space(d) : -1;
    ms = H5Screate_simple(1, &one, NULL);
    PetscCheck(fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL) >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &value) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "cannot damage %s[%llu] of %s", dataset, (unsigned long long)at, dst);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Fclose(f);
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
