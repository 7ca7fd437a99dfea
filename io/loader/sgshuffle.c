/* The epoch shuffles, drawn from Philox4x32-10 (SgRngPhilox4x32, src/base/include/sgrng.h) keyed by
   the seed. Being counter based, the shuffle of epoch e is a pure function of (seed, e): nothing
   depends on how many numbers were drawn before, on which rank, or in which thread. */
#include "sgloader.h"
#include "sgrng.h"

/* Uniform integer in [0, m) from the 64-bit draw number i of a stream: Lemire's multiply-shift with
   his rejection step, so the result is exactly uniform. A rejected draw moves to the next
   counter word (ctr[3]), keeping everything a function of (seed, stream, i). */
static uint64_t Bounded(const uint32_t key[2], uint64_t stream, uint64_t i, uint64_t m)
{
  for (uint32_t attempt = 0;; attempt++) {
    uint32_t    ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream, ((uint32_t)(stream >> 32) & 0xffffu) | (attempt << 16)}, o[4];
    uint64_t    x;
    __uint128_t prod;
    SgRngPhilox4x32(ctr, key, o);
    x    = ((uint64_t)o[0] << 32) | o[1];
    prod = (__uint128_t)x * m;
    if ((uint64_t)prod >= m || (uint64_t)prod >= (-m) % m) return (uint64_t)(prod >> 64);
  }
}

PetscErrorCode SgShuffle(uint64_t seed, uint64_t stream, int64_t n, uint32_t perm[])
{
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};

  PetscFunctionBegin;
  PetscCheck(n >= 0 && n < (int64_t)UINT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "SgShuffle: %lld items (at most 2^32-2)", (long long)n);
  for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
  for (int64_t i = n - 1; i > 0; i--) {
    uint64_t j = Bounded(key, stream, (uint64_t)i, (uint64_t)i + 1);
    uint32_t t = perm[i];
    perm[i]    = perm[j];
    perm[j]    = t;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
