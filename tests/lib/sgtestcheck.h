/* CHECK(cond, fmt, ...) for test programs: a failed condition prints "FAIL: <message>" on this rank and
   counts in `fails` (the program's exit status at the end), so one run reports every failed check
   instead of stopping at the first. Header-only: each test program is one file. */
#pragma once
#include <petscsys.h>

static int fails;
#define CHECK(c, ...) \
  do { \
    if (!(c)) { \
      fails++; \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n")); \
    } \
  } while (0)
