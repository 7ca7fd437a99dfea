/* Counter-based random numbers: the value for (seed, a, b, c) is a pure function of those four
   integers, so velocities and Langevin kicks depend on (seed, global atom id, step, component)
   only - never on how many ranks run or in which order atoms are stored.  The mixer is
   SplitMix64's finaliser (Steele, Lea, Flood, OOPSLA 2014) applied in a chain over the counters,
   which passes BigCrush for sequential counters; it is not cryptographic, and needs not be. */
#include "mdimpl.h"
#include "sgrng.h"

/* one SplitMix64 step: the golden-ratio increment, then the finaliser */
static inline uint64_t mix64(uint64_t z)
{
  return SgRngSplitMix64(z + 0x9e3779b97f4a7c15ULL);
}

uint64_t SgMDHash4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
  uint64_t h = mix64(seed);
  h = mix64(h ^ a);
  h = mix64(h ^ b);
  h = mix64(h ^ c);
  return h;
}

/* 53 random bits -> (0,1), never 0 (safe for log). */
PetscReal SgMDUniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
  return ((PetscReal)(SgMDHash4(seed, a, b, c) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Box-Muller from two independent counters (the fourth counter's top bit selects the stream). */
PetscReal SgMDGaussian(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
  PetscReal u1 = SgMDUniform(seed, a, b, 2 * c);
  PetscReal u2 = SgMDUniform(seed, a, b, 2 * c + 1);
  return SgRngBoxMuller(u1, u2);
}
