/* Small utilities shared by the core: edit distance for suggestions, a stable hash. */
#include <string.h>
#include "sgsys.h"

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
