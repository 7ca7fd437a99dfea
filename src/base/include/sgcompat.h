/* Compatibility shims: names newer PETSc releases have that Debian 12's PETSc 3.18 lacks.
   Code is written against the newer names; this header maps them when they are missing. */
#pragma once
#include <petscsys.h>

#ifndef PETSC_SUCCESS
  #define PETSC_SUCCESS ((PetscErrorCode)0)
#endif
#ifndef PETSC_ERR_RETURN
  #define PETSC_ERR_RETURN 99
#endif
