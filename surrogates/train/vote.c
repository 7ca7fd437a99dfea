/* The vote allreduce (-PREFIX_compress lion_cub_allreduce, issue 38): how many ranks set bit i, for
   every i, with one MPI_Allreduce of packed counters.

   Lion Cub (Ishikawa et al., ICML 2025) replaces Distributed Lion's all-gather of every rank's 1-bit
   update by an allreduce of the votes: a sum of N votes takes N + 1 values, so it needs
   w = ceil(log2(N + 1)) bits per value, not 32. Our own packing, from that description: the counters
   are w-bit lanes of 64-bit words (L = floor(64 / w) lanes a word; a lane never straddles two words);
   rank r puts its bit i (0 or 1) in lane i mod L of word i / L and MPI_SUM over MPI_UINT64_T adds the
   words. No lane can carry into the next: a lane's sum is at most N <= 2^w - 1. Integer sums are
   exact and do not depend on the order in which the allreduce adds, so every rank decodes the same
   counts, equal to those of counting the all-gathered bits one by one (lioncub.c's other path) --
   the test checks both against a dense count.

   Bytes per rank (what a bandwidth-optimal allreduce sends): 2 (N-1)/N S with S = 8 ceil(Psi / L):
   Psi/4 on 2 ranks and Psi/3 on 3 (w = 2), against the all-gather's (N-1) ceil(Psi/8). The ratio is
   2w/N: the all-gather sends fewer bytes below 8 ranks (2x fewer on 2, 1.3x on 3, 1.5x on 4), the
   same on 8, and the allreduce fewer beyond (0.63 on 16, 0.02 on 1,024: the all-gather grows as N,
   the allreduce as log2 N), as the model of docs/parallel.md predicts. Against a float32 gradient
   allreduce, 2 (N-1)/N 4 Psi, it sends 32/w times fewer bytes (16x on 2 and 3 ranks, 2.5x on 1,024 with the unused bits of the words). */
#include "sgtrainerimpl.h"

/* the counter width for size ranks: the smallest w with 2^w - 1 >= size */
static int LaneBits(PetscMPIInt size)
{
  int w = 1;
  while (((1L << w) - 1) < (long)size) w++;
  return w;
}

/* the 64-bit words of the message for n values on size ranks */
static long Words(long n, PetscMPIInt size)
{
  long L = 64 / LaneBits(size);
  return (n + L - 1) / L;
}

double SgTrainerVoteBytes(long n, PetscMPIInt size)
{
  if (size == 1) return 0;
  return 2.0 * (size - 1) / size * 8.0 * (double)Words(n, size);
}

PetscErrorCode SgTrainerVoteSum(MPI_Comm comm, long n, const unsigned char bits[], uint16_t votes[])
{
  PetscMPIInt size;
  int         w;
  long        L, nw;
  uint64_t   *word, mask;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  w    = LaneBits(size);
  L    = 64 / w;
  nw   = Words(n, size);
  mask = ((uint64_t)1 << w) - 1;
  PetscCheck(size < 65536, comm, PETSC_ERR_SUP, "vote allreduce: %d ranks, more than the 16-bit counts hold", size);
  PetscCheck(nw < PETSC_MPI_INT_MAX, comm, PETSC_ERR_SUP, "vote allreduce: %ld values need %ld words, more than one MPI message holds", n, nw);
  PetscCall(PetscCalloc1(nw, &word));
  for (long j = 0; j < nw; j++) {
    long lo = j * L, hi = PetscMin(n, lo + L);
    for (long i = lo; i < hi; i++) word[j] |= (uint64_t)((bits[i >> 3] >> (i & 7)) & 1) << ((i - lo) * w);
  }
  if (size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, word, (PetscMPIInt)nw, MPI_UINT64_T, MPI_SUM, comm));
  for (long j = 0; j < nw; j++) {
    long lo = j * L, hi = PetscMin(n, lo + L);
    for (long i = lo; i < hi; i++) votes[i] = (uint16_t)((word[j] >> ((i - lo) * w)) & mask);
  }
  PetscCall(PetscFree(word));
  PetscFunctionReturn(PETSC_SUCCESS);
}
