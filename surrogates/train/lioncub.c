/* -PREFIX_compress lion_cub: data-parallel Lion that sends 1-bit sign updates (issue 38).

   After Distributed Lion (Liu et al. 2024, majority vote of the workers' binary updates) and Lion
   Cub (Ishikawa et al., ICML 2025, "Lion Cub: Minimizing Communication Overhead in Distributed
   Lion": 1-bit communication of Lion's update vector, momentum synchronized only now and then).
   Our own code, from the papers' descriptions:
     every rank keeps its own momentum m_r and uses its own (local) gradient g_r (no gradient
     allreduce: the "local" sync below only scales it as the global one would, by N / nglobal);
     c = b1 m_r + (1 - b1) g_r; the sign of c is one bit (1: c > 0, 0: c < 0). Lion's sign(0) is 0,
     which one bit cannot say; sending it as -1 (as this file first did) biased every vote: a weight
     whose gradient and momentum are exactly 0 on every rank (an unused type embedding, a masked
     weight, the first step of a zero-initialised layer) got N votes for -1 and moved by +lr each
     step, where Lion leaves it alone. The tie rule: rank r sends c == 0 at step k as the bit
     (r + i + k) mod 2 for value i, so the ranks split their zeros evenly. With an even number of
     ranks a value that is 0 everywhere gets as many +1 as -1 votes, the vote is 0 and the weight
     stays put, as in Lion; with an odd number the odd vote flips sign every step, so the weight
     steps back and forth by lr instead of drifting (a sum of an odd number of +-1 is never 0: no
     1-bit code can do better; a ternary 2-bit code would, at twice the bytes). Distributed Lion
     (Liu et al. 2024) and Lion Cub treat the worker's update as sign(c) in {-1, +1} and do not
     say what a 0 becomes; this rule keeps their one bit per value and removes the drift;
     the ranks all-gather the packed bits (ceil(Psi/8) bytes each, MPI_BYTE) and every rank counts
     the votes: the update is u = sign(sum of the ranks' +-1) (majority vote; a tie, possible for
     even N, moves nothing); the scale is the learning rate: p -= lr (u + wd p), as Lion's;
     m_r = b2 m_r + (1 - b2) g_r; every M steps (-PREFIX_lion_cub_sync, 0: never) the momenta are
     averaged by an allreduce.
   On 1 rank there is nothing to vote on: u = sign(c) exactly, and the step is plain Lion's, bit
   for bit (the test checks it). Bytes per step: the all-gather of N blocks of B = ceil(Psi/8)
   bytes sends (N-1) B per rank (ring), plus 2(N-1)/N b Psi on a momentum-sync step. Against a
   float32 allreduce of the gradient, 2(N-1)/N 4 Psi, that is 32x fewer on 2 ranks; the all-gather
   grows with N (16x on 3 ranks... 64/N), which is why Lion Cub's paper reduces votes with a
   low-bit allreduce at scale: -PREFIX_compress lion_cub_allreduce sums the votes by one allreduce of
   ceil(log2(N + 1))-bit counters (vote.c) instead of the all-gather; the counts, and so every step,
   are the same bits as the all-gather's (the same tie rule, the same vote), only the message
   differs: 2 (N-1)/N Psi w/8 bytes, fewer than the all-gather from 16 ranks on. */
#include "sgtrainerimpl.h"
#include "sgsys.h"

/* ---- the local sync: each rank keeps its own gradient, scaled as the global sum would be ---- */
static PetscErrorCode End_Local(SgTrainerSync s, PetscInt nglobal)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  if (s->scaling == SG_TRAINER_LOSS_SUM) SgCallNN(sgnn_tensor_scale(sgnn_params_grads(s->P), (double)size / (double)nglobal));
  else if (size > 1) SgCallNN(sgnn_tensor_scale(sgnn_params_grads(s->P), (double)size));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncCreate_Local(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerSyncSetEndOnly(s, End_Local, "local gradients (lion_cub: the ranks vote on 1-bit updates instead of summing gradients)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the bytes one step sends per rank (see the top of the file) */
double SgTrainerLionCubBytes(SgTrainer t, PetscMPIInt size, PetscBool sync_step)
{
  SgnnTensor v   = sgnn_params_values(t->P);
  double     psi = (double)sgnn_tensor_numel(v), b = sgnn_tensor_dtype(v) == SGNN_F32 ? 4 : 8;
  double     B   = (double)((sgnn_tensor_numel(v) + 7) / 8);
  if (size == 1) return 0;
  if (!strcmp(t->compress, "lion_cub_allreduce")) return SgTrainerVoteBytes(sgnn_tensor_numel(v), size) + (sync_step ? 2.0 * (size - 1) / size * b * psi : 0);
  return (size - 1) * B + (sync_step ? 2.0 * (size - 1) / size * b * psi : 0);
}

#define CUB_STEP(T, MPIT) \
  do { \
    T *p = (T *)sgnn_tensor_data(v), *m = (T *)sgnn_tensor_data(mt); \
    const T *g = (const T *)sgnn_tensor_data(gt); \
    const T  b1 = (T)t->oc.beta1, b2 = (T)t->oc.beta2, lr = (T)t->cub_lr, wd = (T)t->oc.weight_decay; \
    if (size > 1) { \
      PetscCall(PetscArrayzero(t->cub_bits, B)); \
      for (long i = 0; i < n; i++) { \
        const T c = b1 * m[i] + (1 - b1) * g[i]; \
        if (c > 0 || (c == 0 && ((rank + i + *s) & 1))) t->cub_bits[i >> 3] |= (unsigned char)(1u << (i & 7)); \
      } \
      if (vote_ar) PetscCall(SgTrainerVoteSum(comm, n, t->cub_bits, t->cub_votes)); \
      else PetscCallMPI(MPI_Allgather(t->cub_bits, (PetscMPIInt)B, MPI_BYTE, t->cub_all, (PetscMPIInt)B, MPI_BYTE, comm)); \
    } \
    for (long i = 0; i < n; i++) { \
      T u; \
      if (size > 1) { \
        int votes = 0; \
        if (vote_ar) votes = t->cub_votes[i]; /* the allreduce counted them (vote.c) */ \
        else \
          for (PetscMPIInt r = 0; r < size; r++) votes += (t->cub_all[(size_t)r * B + (i >> 3)] >> (i & 7)) & 1; \
        votes = 2 * votes - size; \
        u     = votes > 0 ? (T)1 : (votes < 0 ? (T)-1 : (T)0); \
      } else { \
        T c = b1 * m[i] + (1 - b1) * g[i]; \
        u   = c > 0 ? (T)1 : (c < 0 ? (T)-1 : (T)0); \
      } \
      p[i] -= lr * wd * p[i]; /* the same operations, in the same order, as the engine's Lion */ \
      p[i] -= lr * u; \
      m[i] = b2 * m[i] + (1 - b2) * g[i]; \
    } \
    if (sync && size > 1) { \
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m, (PetscMPIInt)n, MPIT, MPI_SUM, comm)); \
      for (long i = 0; i < n; i++) m[i] /= (T)size; \
    } \
  } while (0)

/* one Lion Cub step on the whole slab (the trainer has set t->cub_lr for this step) */
PetscErrorCode SgTrainerLionCubUpdate(SgTrainer t)
{
  MPI_Comm    comm = t->sync->comm;
  SgnnTensor  v = sgnn_params_values(t->P), gt = sgnn_params_grads(t->P), mt = NULL, wt = NULL;
  long        n = sgnn_tensor_numel(v), *s = NULL, B = (n + 7) / 8;
  PetscMPIInt size, rank;
  PetscBool   sync, vote_ar = (PetscBool)!strcmp(t->compress, "lion_cub_allreduce");

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  SgCallNN(sgnn_optim_state(t->opt, &mt, &wt, &s));
  PetscCheck(mt && n * (long)size < PETSC_MPI_INT_MAX, comm, PETSC_ERR_SUP, "%s: lion_cub: no Lion momentum, or a slab too large for one all-gather", t->name);
  if (!t->cub_bits && size > 1) {
    PetscCall(PetscMalloc1(B, &t->cub_bits));
    if (vote_ar) PetscCall(PetscMalloc1(n, &t->cub_votes)); /* the counts (2 bytes a value), not the N x B bits */
    else PetscCall(PetscMalloc1(B * size, &t->cub_all));
  }
  (*s)++;
  sync = (PetscBool)(t->cub_sync > 0 && *s % t->cub_sync == 0);
  if (sgnn_tensor_dtype(v) == SGNN_F32) CUB_STEP(float, MPI_FLOAT);
  else CUB_STEP(double, MPI_DOUBLE);
  t->zbytes += SgTrainerLionCubBytes(t, size, sync);
  t->zsteps++;
  PetscFunctionReturn(PETSC_SUCCESS);
}
