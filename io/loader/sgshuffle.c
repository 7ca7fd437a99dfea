/* Counter-based random numbers and the epoch shuffles.

   Philox4x32-10 (J. Salmon, M. Moraes, R. Dror, D. Shaw, "Parallel random numbers: as easy as 1, 2,
   3", SC'11): output = bijection(counter) keyed by the seed, ten rounds. Being counter based, the
   shuffle of epoch e is a pure function of (seed, e): nothing depends on how many numbers were drawn
   before, on which rank, or in which thread. Constants are those of the paper / Random123. */
#include "sgloader.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void SgPhilox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* Uniform integer in [0, m) from the 64-bit draw number i of a stream: Lemire's multiply-shift with
   his rejection step, so the result is exactly uniform. A rejected draw moves to the next
   counter word (ctr[3]), keeping everything a function of (seed, stream, i). */
static uint64_t Bounded(const uint32_t key[2], uint64_t stream, uint64_t i, uint64_t m)
{
  for (uint32_t attempt = 0;; attempt++) {
    uint32_t    ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream, ((uint32_t)(stream >> 32) & 0xffffu) | (attempt << 16)}, o[4];
    uint64_t    x;
    __uint128_t prod;
    SgPhilox4x32(ctr, key, o);
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
