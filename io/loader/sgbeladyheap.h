/* Private: the max-heap and next-use helpers behind Belady's rule (sgbelady.c). */
#pragma once
#include <petscsys.h>
#include <stdint.h>

typedef struct {
  uint64_t *a;
  int64_t   n, cap;
} SgHeap;

PETSC_INTERN PetscErrorCode SgHeapPush(SgHeap *, uint64_t);
PETSC_INTERN uint64_t       SgHeapPop(SgHeap *);
/* next[t] = the next position after t holding trace[t], or UINT32_MAX. */
PETSC_INTERN PetscErrorCode SgNextUse(int64_t n, const uint32_t trace[], int64_t nitems, uint32_t next[]);
