/* Small utilities shared by the core: edit distance for suggestions, a stable hash. */
#include <string.h>
#include "sgsys.h"
#include "sgrng.h"

PetscInt SgEditDistance(const char a[], const char b[])
{
  size_t   la = strlen(a), lb = strlen(b);
  PetscInt row[256], prev, tmp;

  if (lb >= 256) return PETSC_MAX_INT; /* option names are short; a huge one is no suggestion */
  for (size_t j = 0; j <= lb; j++) row[j] = (PetscInt)j;
  for (size_t i = 1; i <= la; i++) {
    prev   = row[0];
    row[0] = (PetscInt)i;
    for (size_t j = 1; j <= lb; j++) {
      PetscInt cost = a[i - 1] == b[j - 1] ? 0 : 1;
      tmp           = row[j];
      row[j]        = PetscMin(PetscMin(row[j] + 1, row[j - 1] + 1), prev + cost);
      prev          = tmp;
    }
  }
  return row[lb];
}

uint64_t SgHash64(const void *data, size_t len, uint64_t seed)
{
  const unsigned char *p = (const unsigned char *)data;
  uint64_t             h = 1469598103934665603ULL ^ seed; /* FNV-1a offset basis */

  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 1099511628211ULL; /* FNV prime */
  }
  return h;
}

uint64_t SgRandomBits(uint64_t seed, uint64_t stream, uint64_t counter)
{
  /* three rounds of the splitmix64 finaliser over the key, each fed with a golden-ratio step */
  uint64_t z = SgRngSplitMix64(seed + 0x9e3779b97f4a7c15ULL);
  z          = SgRngSplitMix64(z ^ (stream + 0x3c6ef372fe94f82aULL));
  return SgRngSplitMix64(z ^ (counter + 0xdaa66d2c7ddf743fULL));
}

double SgRandomUniform(uint64_t seed, uint64_t stream, uint64_t counter)
{
  return (double)(SgRandomBits(seed, stream, counter) >> 11) * 0x1.0p-53; /* 53 random mantissa bits */
}

PetscErrorCode SgFunctionListNames(PetscFunctionList list, char names[], size_t len)
{
  const char **all;
  int          n;

  PetscFunctionBegin;
  names[0] = 0;
  PetscCall(PetscFunctionListGet(list, &all, &n));
  for (int i = 0; i < n; i++) {
    if (!all[i] || !all[i][0]) continue; /* PETSc lists can hold an empty entry */
    if (names[0]) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, all[i], len));
  }
  if (!names[0]) PetscCall(PetscStrncpy(names, "(none)", len));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}
