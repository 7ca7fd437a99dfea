/* The one copy of the counter-based random-number pieces surge uses: every draw is a pure function of
   integers (seed, stream, counter), so a run gives the same numbers on any rank or thread count and
   after a restart. Header-only and libc-only on purpose: surrogates/nn (no PETSc, no MPI) uses it
   as well as src/base, io/loader and the physics modules; tests/unit/core/layering.py allows the
   engine this one header of src/base and refuses any project include in it.

     SgRngPhilox4x32  Philox4x32-10 (J. Salmon, M. Moraes, R. Dror, D. Shaw, "Parallel random
                      numbers: as easy as 1, 2, 3", SC'11): a keyed bijection of a 128-bit counter,
                      ten rounds, the constants of the paper / Random123. Used where a stream needs
                      a cryptographic-strength-free but statistically strong generator (the training
                      loader's shuffles, the engine's initialisers).
     SgRngSplitMix64  SplitMix64's output function (Steele, Lea, Flood, OOPSLA 2014): the 64-bit
                      finaliser (no golden-ratio step; callers add theirs to the key). Chained over
                      the counters it passes BigCrush for sequential keys (src/base, physics/md).
     SgRngBoxMuller   one standard normal number from two uniforms (Box & Muller, Ann. Math. Stat.
                      29, 610 (1958)); u1 must lie in (0, 1] so that log(u1) is finite. */
#pragma once
#include <math.h>
#include <stdint.h>

static inline void SgRngPhilox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = ctr[0];
  uint32_t c1 = ctr[1];
  uint32_t c2 = ctr[2];
  uint32_t c3 = ctr[3];
  uint32_t k0 = key[0];
  uint32_t k1 = key[1];

  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0; /* the round's two 32x32->64 multipliers */
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;

    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
    k0 += 0x9E3779B9u; /* the Weyl key schedule: golden ratio and sqrt(3) - 1 */
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static inline uint64_t SgRngSplitMix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline double SgRngBoxMuller(double u1, double u2)
{
  return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
