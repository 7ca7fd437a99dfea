/* Gradient-sync strategies of SgTrainer, chosen by name (-PREFIX_sync):
     bucketed   surrogates/parallel: the gradient slab in buckets (last layers first), each bucket's
                MPI_Iallreduce started from the engine's grad-ready hook while backward goes on
     allreduce  one blocking MPI_Allreduce of the whole slab after backward
     hybrid     the buckets of bucketed over the process grid (data groups x spatial ranks): every rank
                holds partial weight gradients (its data group's samples, its slab of each), the sum
                over all ranks is the global gradient, and each sample is counted once (on spatial
                rank 0 of its group), so the division by the global count stays exact
   With a loss normalised by the global count (SG_TRAINER_LOSS_GLOBAL_MEAN) both only sum; with a
   SUM loss both divide the summed gradient by the global count afterwards, the same way. Summing two
   ranks' values is one IEEE addition, whichever collective does it, so both strategies give the same
   bits on 2 ranks (tests/unit/train). The allreduce strategy divides by the loader's global count and
   so is exact on any grid too; bucketed, which counts every rank's samples, becomes hybrid when the
   grid has spatial ranks. */
#include "sgtrainerimpl.h"
#include "sgpar.h"

PetscFunctionList SgTrainerSyncList = NULL;

PetscErrorCode SgTrainerSyncRegister(const char name[], PetscErrorCode (*create)(SgTrainerSync))
{
  static PetscBool builtin = PETSC_FALSE;

  PetscFunctionBegin;
  if (!builtin) {
    PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Bucketed(SgTrainerSync);
    PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Allreduce(SgTrainerSync);
    PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Hybrid(SgTrainerSync);
    builtin = PETSC_TRUE;
    PetscCall(PetscFunctionListAdd(&SgTrainerSyncList, "bucketed", SgTrainerSyncCreate_Bucketed));
    PetscCall(PetscFunctionListAdd(&SgTrainerSyncList, "allreduce", SgTrainerSyncCreate_Allreduce));
    PetscCall(PetscFunctionListAdd(&SgTrainerSyncList, "hybrid", SgTrainerSyncCreate_Hybrid));
  }
  if (name) PetscCall(PetscFunctionListAdd(&SgTrainerSyncList, name, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncCreate(SgTrainer t, SgTrainerSync *out)
{
  PetscErrorCode (*create)(SgTrainerSync) = NULL;
  SgTrainerSync s;

  PetscFunctionBegin;
  PetscCall(SgTrainerSyncRegister(NULL, NULL));
  if (strcmp(sgnn_backend_name(sgnn_tensor_backend(sgnn_params_grads(t->P))), "cpu") && !strcmp(t->synctype, "bucketed")) {
    /* the buckets are reduced in place and MPI here is not CUDA-aware: a device slab goes through
       the host in one piece */
    PetscCall(PetscInfo(t, "the gradient slab is in device memory: bucketed sync replaced by allreduce staged through the host\n"));
    PetscCall(PetscStrncpy(t->synctype, "allreduce", sizeof t->synctype));
  }
  if (t->grid && sgpar_grid_spatial_size(t->grid) > 1 && !strcmp(t->synctype, "bucketed")) {
    /* the same buckets; only the sample count changes (each sample once, not once per spatial rank) */
    PetscCall(PetscInfo(t, "%d spatial ranks per data group: bucketed sync replaced by hybrid\n", sgpar_grid_spatial_size(t->grid)));
    PetscCall(PetscStrncpy(t->synctype, "hybrid", sizeof t->synctype));
  }
  PetscCall(PetscFunctionListFind(SgTrainerSyncList, t->synctype, &create));
  if (t->shard >= 2) create = SgTrainerSyncCreate_ReduceScatter; /* ZeRO stages 2 and 3 (zero.c) replace the allreduce */
  if (t->shard >= 2 && t->z3bucket > 0) create = SgTrainerSyncCreate_GradBuckets; /* by buckets: summed into the owners' blocks during backward (zerograd.c) */
  if (t->shard >= 2 && SgTrainerIsSdp4bit(t)) create = SgTrainerSyncCreate_Sdp4bit; /* the quantized two-level reduce-scatter (sdp4bit.c) */
  if (SgTrainerIsLionCub(t)) create = SgTrainerSyncCreate_Local; /* the ranks vote instead (lioncub.c) */
  PetscCheck(create, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: unknown gradient sync '%s': use bucketed, allreduce or hybrid", t->name, t->synctype);
  PetscCall(PetscNew(&s));
  PetscCallMPI(MPI_Comm_dup(PetscObjectComm((PetscObject)t), &s->comm));
  s->P            = t->P;
  s->scaling      = t->scaling;
  s->bucket_bytes = t->bucket_bytes;
  s->grid         = t->grid;
  s->data         = t; /* the reduce-scatter's blocks; the other strategies set their own data */
  PetscCall(create(s));
  *out = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncDestroy(SgTrainerSync *ps)
{
  PetscFunctionBegin;
  if (!*ps) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*ps)->destroy) PetscCall((*ps)->destroy(*ps));
  PetscCallMPI(MPI_Comm_free(&(*ps)->comm));
  PetscCall(PetscFree(*ps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- strategies that act only after backward (allreduce, ZeRO's reduce-scatter, lion_cub's local
   gradients): begin does nothing; the line describes them ---- */
static PetscErrorCode Begin_None(SgTrainerSync s, PetscInt nlocal)
{
  PetscFunctionBegin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Describe_Line(SgTrainerSync s, char buf[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf, len, "%s\n", s->line));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncSetEndOnly(SgTrainerSync s, PetscErrorCode (*end)(SgTrainerSync, PetscInt), const char line[])
{
  PetscFunctionBegin;
  s->begin    = Begin_None;
  s->end      = end;
  s->line     = line;
  s->describe = line ? Describe_Line : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- allreduce: one blocking collective on the whole slab ---- */
static PetscErrorCode End_Allreduce(SgTrainerSync s, PetscInt nglobal)
{
  SgnnTensor   g  = sgnn_params_grads(s->P);
  long         n  = sgnn_tensor_numel(g);
  PetscBool    f32 = (PetscBool)(sgnn_tensor_dtype(g) == SGNN_F32);
  MPI_Datatype dt = f32 ? MPI_FLOAT : MPI_DOUBLE;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  if (size > 1 && !strcmp(sgnn_backend_name(sgnn_tensor_backend(g)), "cpu")) {
    /* in place on the host slab, in its own precision: a float32 model sends half the bytes */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sgnn_tensor_data(g), (PetscMPIInt)n, dt, MPI_SUM, s->comm));
  } else if (size > 1) { /* device slab: through the host (the float32 -> double -> float32 trip is exact) */
    char   *h;
    double *d;
    PetscCall(PetscMalloc2(n * (f32 ? sizeof(float) : sizeof(double)), &h, n, &d));
    SgCallNN(sgnn_tensor_to_host(g, h));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, h, (PetscMPIInt)n, dt, MPI_SUM, s->comm));
    for (long i = 0; i < n; i++) d[i] = f32 ? (double)((float *)h)[i] : ((double *)h)[i];
    SgCallNN(sgnn_tensor_set_f64(g, d));
    PetscCall(PetscFree2(h, d));
  }
  if (s->scaling == SG_TRAINER_LOSS_SUM) SgCallNN(sgnn_tensor_scale(g, 1.0 / (double)nglobal));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Allreduce(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerSyncSetEndOnly(s, End_Allreduce, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- bucketed: surrogates/parallel ---- */
static PetscErrorCode Begin_Bucketed(SgTrainerSync s, PetscInt nlocal)
{
  PetscFunctionBegin;
  SgCallPar(sgpar_dp_begin((SgparDP)s->data, (long)nlocal));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* hybrid: nlocal is the data group's count on each of its spatial ranks; it counts once */
static PetscErrorCode Begin_Hybrid(SgTrainerSync s, PetscInt nlocal)
{
  PetscFunctionBegin;
  SgCallPar(sgpar_dp_begin((SgparDP)s->data, sgpar_grid_sample_count(s->grid, (long)nlocal)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode End_Bucketed(SgTrainerSync s, PetscInt nglobal)
{
  long n;

  PetscFunctionBegin;
  SgCallPar(sgpar_dp_end((SgparDP)s->data, &n));
  PetscCheck(n == nglobal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "gradient sync: the ranks hold %ld samples, the loader says %" PetscInt_FMT, n, nglobal);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what the buckets did in the last step, for SgTrainerView and -info */
static PetscErrorCode Describe_Bucketed(SgTrainerSync s, char buf[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf, len, "%s sync: %d buckets of up to %zu bytes; %d started during the last backward\n", s->begin == Begin_Hybrid ? "hybrid" : "bucketed", sgpar_dp_nbuckets((SgparDP)s->data), s->bucket_bytes, sgpar_dp_overlapped((SgparDP)s->data)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy_Bucketed(SgTrainerSync s)
{
  PetscFunctionBegin;
  sgpar_dp_destroy((SgparDP *)&s->data);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Bucketed(SgTrainerSync s)
{
  SgparDP dp;

  PetscFunctionBegin;
  /* the sync's own duplicate of the trainer's communicator: the same ranks as the grid's */
  SgCallPar(sgpar_dp_create(s->comm, s->P, s->bucket_bytes, &dp));
  SgCallPar(sgpar_dp_set_divide(dp, s->scaling == SG_TRAINER_LOSS_SUM));
  s->data    = dp;
  s->begin   = Begin_Bucketed;
  s->end     = End_Bucketed;
  s->describe = Describe_Bucketed;
  s->destroy = Destroy_Bucketed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgTrainerSyncCreate_Hybrid(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCheck(s->grid, PETSC_COMM_SELF, PETSC_ERR_ORDER, "hybrid sync: the trainer has no process grid");
  PetscCall(SgTrainerSyncCreate_Bucketed(s));
  s->begin = Begin_Hybrid;
  PetscFunctionReturn(PETSC_SUCCESS);
}
