/* ZeRO stage 3 of SgTrainer (-PREFIX_shard 3): the parameters partitioned too (Rajbhandari et al.,
   SC20, P_os+g+p).

   Between steps rank r keeps only its block [Psi r/N, Psi (r+1)/N) of the parameters (in its own
   buffer of Psi/N values), its block of the optimizer state (zero.c, as at stage 1 and 2), and no
   gradient: the engine's value and gradient slabs have no memory then (sgnn_params_release; every
   parameter view computes its address from the slab's storage at each use, so the views stay valid).
   At the start of a step the ranks all-gather their blocks into a fresh value slab and allocate a zero
   gradient slab (Acquire); forward and backward run on the whole slab; the gradient is reduce-scattered
   as at stage 2; each rank updates its block in the slab, copies it into its buffer, and both slabs are
   freed again (Release, after the update).

   What this is, plainly: the gather is of the whole slab, once per step, kept for forward AND
   backward. DeepSpeed's stage 3 gathers each layer just before its forward, frees it after, and
   gathers it again for its backward, so its peak holds one or two layers; here the peak within a step
   is the whole slab, as at stage 2 (b Psi of weights + b Psi/N of the rank's buffer + b Psi of
   gradients + K Psi/N), and the saving is between steps (b Psi/N + K Psi/N). The bytes are those of
   stage 2 (a reduce-scatter and an all-gather of Psi values per step), not DeepSpeed's 1.5x.
   Per-layer gathers are not done because they would be collectives issued from inside a surrogate's
   forward: a rank with no samples in a step, or whose batch leaves a type's sub-network unused, would
   not issue them and the ranks would wait on each other for ever; a schedule recorded once and run by
   every rank whatever its batch would be needed, with a pre-use hook in every engine op.

   The trainer calls Acquire before anything that reads the parameters between steps (the progress
   monitor, which may evaluate the model; checkpoints) and after the last step, so a surrogate always
   sees whole parameters and the caller gets them back when SgTrainerTrain returns. An acquire that
   finds the slab resident does nothing, so a monitor's gather serves the next step too. */
#include "sgtrainerimpl.h"
#include "sgsys.h"

static size_t ESize3(SgnnTensor v) { return sgnn_tensor_dtype(v) == SGNN_F32 ? sizeof(float) : sizeof(double); }

/* what this rank holds now (weights, gradients, optimizer state), in bytes, into the running maxima */
static PetscErrorCode Account(SgTrainer t, double mx[3])
{
  SgnnTensor v = sgnn_params_values(t->P), m = NULL, w = NULL;
  double     b = (double)ESize3(v), psi = (double)sgnn_tensor_numel(v);

  PetscFunctionBegin;
  SgCallNN(sgnn_optim_state(t->opt, &m, &w, NULL));
  double cur;
  SgTrainerZero3BucketStats(t, NULL, NULL, NULL, NULL, &cur); /* buckets resident now (0 without them) */
  mx[0] = PetscMax(mx[0], (sgnn_params_resident(t->P, 0) ? psi * b : 0) + (double)t->z3n * b + cur);
  double sw[2];
  SgTrainerSdp4bitWorkBytes(t, sw); /* sdp4bit: its sync holds the gradient as doubles during the step */
  double gb, gcur;
  SgTrainerGradBucketMem(t, &gb, &gcur, NULL, NULL, NULL); /* by gradient buckets: the block + the buckets open now (zerograd.c) */
  mx[1] = PetscMax(mx[1], (sgnn_params_resident(t->P, 1) ? psi * b + sw[1] : 0) + gb + gcur);
  mx[2] = PetscMax(mx[2], (m ? (double)sgnn_tensor_numel(m) * b : 0) + (w ? (double)sgnn_tensor_numel(w) * b : 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rank's buffer, filled from the (whole, identical on every rank) initial slab; the slabs stay
   until the first step's update releases them. */
PetscErrorCode SgTrainerZero3SetUp(SgTrainer t)
{
  SgnnTensor  v = sgnn_params_values(t->P);
  PetscMPIInt rank;

  PetscFunctionBegin;
  if (t->shard != 3) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)t), &rank));
  t->z3n = t->zcount[rank];
  PetscCall(PetscMalloc(t->z3n * ESize3(v), &t->z3block));
  PetscCall(PetscArraycpy((char *)t->z3block, (char *)sgnn_tensor_data(v) + (size_t)t->zdispl[rank] * ESize3(v), t->z3n * ESize3(v)));
  for (int i = 0; i < 3; i++) t->z3peak[i] = t->z3rest[i] = 0;
  PetscCall(SgTrainerZero3BucketSetUp(t)); /* -PREFIX_shard_bucket_bytes > 0: buckets, the block in a window (zero3b.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The whole slab from the ranks' blocks, and a zero gradient slab. Collective; counts the bytes.
   For the monitor, checkpoints and the end of training, and for every step without buckets. */
PetscErrorCode SgTrainerZero3AcquireWhole(SgTrainer t)
{
  SgnnTensor  v = sgnn_params_values(t->P);
  PetscMPIInt size;

  PetscFunctionBegin;
  if (t->shard != 3 || sgnn_params_resident(t->P, 0)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
  if (SgTrainerZero3Bucketed(t)) PetscCall(SgTrainerZero3BucketUnbind(t)); /* the views to the slab again */
  SgCallNN(sgnn_params_acquire(t->P, 0));
  PetscCallMPI(MPI_Allgatherv(t->z3block, (PetscMPIInt)t->z3n, sgnn_tensor_dtype(v) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE, sgnn_tensor_data(v), t->zcount, t->zdispl, sgnn_tensor_dtype(v) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE, t->sync->comm));
  if (!SgTrainerGradBucketed(t)) {
    SgCallNN(sgnn_params_acquire(t->P, 1));
    SgCallNN(sgnn_params_zero_grad(t->P));
  }
  if (size > 1) t->zbytes += (double)(size - 1) / size * (double)sgnn_tensor_numel(v) * (double)ESize3(v); /* a ring all-gather */
  if (!SgTrainerZero3Bucketed(t)) PetscCall(Account(t, t->z3peak)); /* with buckets z3peak is a step's: this whole gather is the monitor's, a checkpoint's or the end's */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a step. Without buckets: the whole slab (above). With buckets (zero3b.c): no weights are
   gathered now (a whole slab left by the monitor is freed), the views address their buckets, which
   fill themselves at first use; the gradient slab is allocated and zeroed. Not collective then. */
PetscErrorCode SgTrainerZero3Acquire(SgTrainer t)
{
  PetscFunctionBegin;
  if (!SgTrainerZero3Bucketed(t)) {
    PetscCall(SgTrainerZero3AcquireWhole(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (sgnn_params_resident(t->P, 0)) SgCallNN(sgnn_params_release(t->P, 0));
  PetscCall(SgTrainerZero3BucketBegin(t));
  if (!SgTrainerGradBucketed(t)) {
    SgCallNN(sgnn_params_acquire(t->P, 1));
    SgCallNN(sgnn_params_zero_grad(t->P));
  }
  PetscCall(Account(t, t->z3peak));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the update: this rank's block (just updated in the slab) into its buffer; both slabs freed.
   With buckets the update was made in the block itself (the window): the buckets are freed, the block
   published to the other ranks (collective), the gradient slab freed. */
PetscErrorCode SgTrainerZero3Release(SgTrainer t)
{
  SgnnTensor  v = sgnn_params_values(t->P);
  PetscMPIInt rank;

  PetscFunctionBegin;
  if (SgTrainerZero3Bucketed(t)) {
    double wpeak;
    PetscCall(Account(t, t->z3peak));
    SgTrainerZero3BucketStats(t, NULL, NULL, NULL, &wpeak, NULL);
    t->z3peak[0] = PetscMax(t->z3peak[0], wpeak + (double)t->z3n * (double)ESize3(v)); /* the most buckets resident at once in any step, + the block */
    if (SgTrainerGradBucketed(t)) { /* the same for the gradient's buckets (zerograd.c) */
      double gb, gpeak;
      SgTrainerGradBucketMem(t, &gb, NULL, &gpeak, NULL, NULL);
      t->z3peak[1] = PetscMax(t->z3peak[1], gb + gpeak);
    }
    PetscCall(SgTrainerGradBucketReset(t)); /* the gradient's block zeroed before the publish barrier below */
    PetscCall(SgTrainerZero3BucketDrain(t));
    if (sgnn_params_resident(t->P, 0)) SgCallNN(sgnn_params_release(t->P, 0));
    if (sgnn_params_resident(t->P, 1)) SgCallNN(sgnn_params_release(t->P, 1));
    PetscCall(SgTrainerZero3BucketPublish(t));
    PetscCall(Account(t, t->z3rest));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (t->shard != 3 || !sgnn_params_resident(t->P, 0)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(t->sync->comm, &rank));
  PetscCall(Account(t, t->z3peak)); /* the step's peak: both slabs, the buffer, the state */
  PetscCall(PetscArraycpy((char *)t->z3block, (char *)sgnn_tensor_data(v) + (size_t)t->zdispl[rank] * ESize3(v), t->z3n * ESize3(v)));
  SgCallNN(sgnn_params_release(t->P, 0));
  SgCallNN(sgnn_params_release(t->P, 1));
  PetscCall(Account(t, t->z3rest));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetShardResident(SgTrainer t, PetscReal rest[3], PetscReal peak[3])
{
  PetscFunctionBegin;
  for (int i = 0; i < 3; i++) {
    if (rest) rest[i] = t->shard == 3 ? t->z3rest[i] : t->zmem[i];
    if (peak) peak[i] = t->shard == 3 ? t->z3peak[i] : t->zmem[i];
  }
  if (peak && t->shard == 2 && SgTrainerGradBucketed(t)) { /* by gradient buckets: the block + the most bucket bytes open at once, measured */
    double gb, gpeak;
    SgTrainerGradBucketMem(t, &gb, NULL, &gpeak, NULL, NULL);
    peak[1] = gb + gpeak;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
