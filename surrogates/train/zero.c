/* The optimizer choice and ZeRO sharding of SgTrainer (issue 38).

   ZeRO (Rajbhandari et al., SC20, "ZeRO: Memory optimizations toward training trillion parameter
   models") removes the data-parallel replicas of the training state. With N data-parallel ranks the
   parameter slab (Psi values) is cut into N contiguous blocks, as even as possible (block r is
   [Psi r/N, Psi (r+1)/N)), and rank r owns block r:
     stage 1  (P_os)    the optimizer state (Adam's m and v, Lion's or SGD's momentum) of its block
                        only; the gradient is still summed by the trainer's sync (every rank gets the
                        whole gradient), each rank updates its block, and the ranks all-gather the
                        updated parameters;
     stage 2  (P_os+g)  as 1, but the gradient is reduce-scattered instead of allreduced: each rank
                        receives only the sum of its block (in place in the gradient slab);
     stage 3  (P_os+g+p) as 2, and between steps each rank keeps only its block of the parameters
                        (zero3.c: the whole slab is all-gathered before a step instead of after the
                        update, and freed with the gradient slab after the update).
   The update is elementwise, so a rank's block is updated exactly as the whole-slab optimizer
   updates it: stage 1 gives the same bits as stage 0; stage 2 differs only where the reduce-scatter
   adds the ranks' gradients in another order than the allreduce (3 ranks and more).

   What is counted: the bytes of the training state this rank allocates (the weight and gradient
   slabs, the optimizer's moments) against ZeRO's formula in one precision of b bytes (b = 8 for
   float64 models, 4 for float32; no mixed precision, so no fp32 master copy): stage 0 bPsi + bPsi +
   KPsi, stage 1 bPsi + bPsi + KPsi/N, stage 2 bPsi + bPsi/N + KPsi/N (K = b x the moments: 2b Adam,
   b Lion or SGD with momentum). The engine's backward writes the whole gradient slab, so stage 2
   still holds bPsi of gradients during backward (the summary says so), unless the gradient is by
   buckets (-PREFIX_shard_bucket_bytes, zerograd.c: the block + the buckets backward has open). Bytes sent per step: every
   collective the trainer issues is tallied by what a bandwidth-optimal (ring) algorithm sends per
   rank, on average over the ranks: allreduce 2(N-1)/N S, reduce-scatter and all-gather (N-1)/N S, for
   a message of S bytes in all. */
#include "sgtrainerimpl.h"
#include "sgsys.h"

/* bytes per value of the slab */
static size_t ESize(SgnnTensor v) { return sgnn_tensor_dtype(v) == SGNN_F32 ? sizeof(float) : sizeof(double); }

static MPI_Datatype DType(SgnnTensor v) { return sgnn_tensor_dtype(v) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE; }

/* the moments the optimizer keeps, in slabs (K / b) */
static int Moments(const SgnnOptimConfig *oc)
{
  if (oc->type == SGNN_ADAM || oc->type == SGNN_ADAMW) return 2;
  if (oc->type == SGNN_LION) return 1;
  return oc->momentum > 0 ? 1 : 0;
}

static const char *OptimName(SgnnOptimType k)
{
  static const char *const names[] = {"sgd", "adam", "adamw", "lion"};
  return names[k];
}

/* -PREFIX_optimizer and its hyper-parameters, -PREFIX_shard, -PREFIX_compress, -PREFIX_lion_cub_sync
   (in: the surrogate's default, < 0 for the trainer's 10), in the caller's options block. The optimizer keeps the caller's learning rate (the schedule sets it every step). */
PetscErrorCode SgTrainerOptionsOptimizer(PetscOptionItems *PetscOptionsObject, SgnnOptimConfig *oc, PetscInt *shard, char compress[], size_t len, PetscInt *cub_sync)
{
  static const char *const optims[] = {"sgd", "adam", "adamw", "lion"}, *const comps[] = {"none", "lion_cub", "lion_cub_allreduce", "sdp4bit"};
  PetscInt                 idx = (PetscInt)oc->type, cidx = 0;
  PetscReal                lr = oc->lr, wd = oc->weight_decay, mu = oc->momentum;
  PetscBool                set;

  PetscFunctionBegin;
  PetscCall(SgOptionsEList("-optimizer", "Optimizer: sgd (with -sgd_momentum), adam, adamw (decoupled weight decay) or lion (Chen et al. 2023: the sign of an interpolated momentum; take a learning rate 3-10x smaller than Adam's)", optims, 4, optims[idx], &idx, &set));
  if (set && idx != (PetscInt)oc->type) { /* the new type's defaults (betas, eps), the caller's rate and decay */
    sgnn_optim_defaults((SgnnOptimType)idx, oc);
    oc->lr = lr;
    oc->weight_decay = wd;
    oc->momentum = mu;
  }
  if (oc->type == SGNN_LION) {
    PetscCall(SgOptionsReal("-lion_beta1", "Lion: interpolation between momentum and gradient whose sign is the update (Chen et al.: 0.9)", "", oc->beta1, &oc->beta1, NULL, 0, 1 - 1e-12));
    PetscCall(SgOptionsReal("-lion_beta2", "Lion: decay of the momentum that is carried between steps (Chen et al.: 0.99)", "", oc->beta2, &oc->beta2, NULL, 0, 1 - 1e-12));
  }
  PetscCall(SgOptionsReal("-weight_decay", "Weight decay: L2 added to the gradient for sgd and adam, decoupled (p -= lr wd p) for adamw and lion", "", oc->weight_decay, &oc->weight_decay, NULL, 0, 1e6));
  if (oc->type == SGNN_SGD) PetscCall(SgOptionsReal("-sgd_momentum", "SGD momentum (PyTorch's convention; 0: plain SGD, which keeps no optimizer state)", "", oc->momentum, &oc->momentum, NULL, 0, 1 - 1e-12));
  PetscCall(SgOptionsInt("-shard", "ZeRO stage of data-parallel training: 0 replicated (plain data parallelism), 1 optimizer state partitioned over the ranks, 2 also the gradients reduce-scattered, 3 also the parameters partitioned between steps (all-gathered whole at the start of a step: the peak within a step is stage 2's)", *shard, shard, NULL, 0, 3));
  for (PetscInt i = 0; i < 4; i++)
    if (!strcmp(compress, comps[i])) cidx = i;
  PetscCall(SgOptionsEList("-compress", "Compressed communication: none, lion_cub (with -optimizer lion: 1-bit sign updates, majority vote over the ranks, momentum averaged every -lion_cub_sync steps; the ranks all-gather their packed bits: ~32x fewer bytes than a float32 allreduce on 2 ranks, growing as N), lion_cub_allreduce (the same votes summed by one allreduce of ceil(log2(N+1))-bit counters: 32/ceil(log2(N+1))x fewer, fewer than lion_cub's all-gather from 16 ranks on) or sdp4bit (with -shard 2 or 3, Jia et al. 2024: the gradient reduce-scattered in 8 bits inside a node and 4 bits with a Hadamard smoother between nodes, groups of 128; -sdp4bit_node_ranks G sets the node, 0 = ranks sharing memory; at stage 2 also the weight differences all-gathered in 4 bits, groups of 2048: ~7.7x fewer bytes than float32 stage 2 with G 1; at stage 3 the weights are gathered exactly, since the differences need the previous whole weights on every rank, which stage 3 frees)", comps, 4, comps[cidx], &cidx, NULL));
  PetscCall(PetscStrncpy(compress, comps[cidx], len));
  if (*cub_sync < 0) *cub_sync = 10; /* our default (the surrogate left it unset) */
  PetscCall(SgOptionsInt("-lion_cub_sync", "lion_cub: average the ranks' Lion momenta every this many steps (0: never; each rank otherwise keeps its own)", *cub_sync, cub_sync, NULL, 0, PETSC_MAX_INT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetShard(SgTrainer t, PetscInt stage, const char compress[], PetscInt cub_sync)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  t->shard = stage;
  if (cub_sync >= 0) t->cub_sync = cub_sync;
  PetscCall(PetscStrncpy(t->compress, compress && compress[0] ? compress : "none", sizeof t->compress));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The checks of the combination, the partition, the optimizer (of this rank's block when sharded)
   and the start-up summary; collective, the same decision on every rank. */
PetscErrorCode SgTrainerZeroSetUp(SgTrainer t)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  const char *pre;
  char        p[64];
  SgnnTensor  v   = sgnn_params_values(t->P);
  long        psi = sgnn_tensor_numel(v);
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)t, &pre));
  PetscCall(PetscSNPrintf(p, sizeof p, "-%s", pre ? pre : ""));
  PetscCheck(t->shard >= 0 && t->shard <= 3, comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT ": ZeRO stages are 0, 1, 2 and 3", p, t->shard);
  PetscCheck(!t->shard || Moments(&t->oc), comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT " partitions the optimizer state, and plain SGD (momentum 0) keeps none: set %ssgd_momentum > 0, choose %soptimizer adam or lion, or use %sshard 0", p, t->shard, p, p, p);
  if (SgTrainerIsLionCub(t)) {
    PetscCheck(t->oc.type == SGNN_LION, comm, PETSC_ERR_USER_INPUT, "%scompress %s sends Lion's 1-bit sign updates, and the optimizer is %s: add %soptimizer lion, or use %scompress none", p, t->compress, OptimName(t->oc.type), p, p);
    PetscCheck(!t->shard, comm, PETSC_ERR_USER_INPUT, "%scompress %s votes on the whole update and keeps a momentum per rank: use it with %sshard 0 (this run has %sshard %" PetscInt_FMT ")", p, t->compress, p, p, t->shard);
    PetscCheck(!(t->grid && sgpar_grid_spatial_size(t->grid) > 1), comm, PETSC_ERR_USER_INPUT, "%scompress %s with spatial ranks is not implemented: use %sspatial_ranks 1 or %scompress none", p, t->compress, p, p);
    PetscCheck(!strcmp(sgnn_backend_name(sgnn_tensor_backend(v)), "cpu"), comm, PETSC_ERR_USER_INPUT, "%scompress %s needs the model on the host (-nn_backend cpu)", p, t->compress);
    PetscCheck(!(t->clip > 0), comm, PETSC_ERR_USER_INPUT, "%scompress %s: each rank has only its own gradient, and clipping to a global norm is not implemented on it: use %sclip_norm 0", p, t->compress, p);
  }
  if (!strcmp(t->compress, "sdp4bit")) {
    PetscCheck(t->shard >= 2, comm, PETSC_ERR_USER_INPUT, "%scompress sdp4bit quantizes the reduce-scatter and all-gather of sharded training: it needs %sshard 2 or 3 (this run has %sshard %" PetscInt_FMT ")", p, p, p, t->shard);
  }
  PetscCheck(!strcmp(t->compress, "none") || SgTrainerIsLionCub(t) || SgTrainerIsSdp4bit(t), comm, PETSC_ERR_USER_INPUT, "%scompress %s: unknown; use none, lion_cub, lion_cub_allreduce or sdp4bit", p, t->compress);
  if (t->shard) {
    PetscCheck(!(t->grid && sgpar_grid_spatial_size(t->grid) > 1), comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT " with spatial ranks: ZeRO over a process grid is not implemented; use %sspatial_ranks 1 or %sshard 0", p, t->shard, p, p);
    PetscCheck(!strcmp(sgnn_backend_name(sgnn_tensor_backend(v)), "cpu"), comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT " needs the model on the host (-nn_backend cpu): Open MPI here is not CUDA-aware", p, t->shard);
    PetscCheck(!(t->shard >= 2 && t->clip > 0), comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT " leaves each rank only its block of the gradient, and clipping to a global norm is not implemented on blocks: use %sclip_norm 0 or %sshard 1", p, t->shard, p, p);
    PetscCheck(psi >= size, comm, PETSC_ERR_USER_INPUT, "%sshard %" PetscInt_FMT ": the model has %ld parameters, fewer than the %d ranks: use %sshard 0", p, t->shard, psi, size, p);
  }
  PetscCheck(!t->z3bucket || t->shard >= 2, comm, PETSC_ERR_USER_INPUT, "%sshard_bucket_bytes %" PetscInt_FMT " partitions the gradients (stage 2) and gathers the parameters (stage 3) by buckets, and this run has %sshard %" PetscInt_FMT ": use %sshard 2 or 3, or %sshard_bucket_bytes 0", p, t->z3bucket, p, t->shard, p, p);
  PetscCheck(!t->z3bucket || !SgTrainerIsSdp4bit(t), comm, PETSC_ERR_USER_INPUT, "%sshard_bucket_bytes with %scompress sdp4bit is not implemented: use %sshard_bucket_bytes 0 (the whole slab gathered per step) or %scompress none", p, p, p, p);
  t->zn = t->shard ? size : 1;
  PetscCall(PetscMalloc2(size, &t->zcount, size, &t->zdispl));
  for (PetscMPIInt r = 0; r < size; r++) {
    long lo = t->shard ? psi * r / size : 0, hi = t->shard ? psi * (r + 1) / size : psi;
    PetscCheck(hi - lo < PETSC_MPI_INT_MAX, comm, PETSC_ERR_SUP, "%sshard: a block of %ld values is too large for one MPI message", p, hi - lo);
    t->zdispl[r] = (PetscMPIInt)lo; /* Psi < 2^31: the engine's slabs are indexed by int shapes */
    t->zcount[r] = (PetscMPIInt)(hi - lo);
  }
  SgCallNN(sgnn_optim_create_range(t->P, &t->oc, t->zdispl[t->shard ? rank : 0], t->zcount[t->shard ? rank : 0], &t->opt));
  PetscCall(SgTrainerZero3SetUp(t)); /* stage 3: this rank's block of the parameters (zero3.c) */
  PetscCall(SgTrainerGradBucketSetUp(t)); /* stages 2 and 3 by buckets: the gradient's buckets and block (zerograd.c) */
  if (SgTrainerIsSdp4bit(t)) PetscCall(SgTrainerSdp4bitSetUp(t, p)); /* its nodes and buffers (sdp4bit.c) */
  PetscCall(SgTrainerZeroSummary(t, NULL, 0));
  { /* on screen when sharded (as DeepSpeed prints its partition), else under -info */
    char line[1536];
    PetscCall(SgTrainerZeroSummary(t, line, sizeof line));
    if ((t->shard || strcmp(t->compress, "none")) && !t->quiet) PetscCall(PetscPrintf(comm, "%s\n", line));
    else PetscCall(PetscInfo(t, "%s\n", line));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The bytes sent per step by the collectives of this stage (see the top of the file), per rank */
static double StepBytes(SgTrainer t, PetscMPIInt size)
{
  double S = (double)sgnn_tensor_numel(sgnn_params_values(t->P)) * (double)ESize(sgnn_params_values(t->P)), f = (double)(size - 1) / size;
  if (size == 1) return 0;
  if (SgTrainerIsLionCub(t)) return SgTrainerLionCubBytes(t, size, PETSC_FALSE); /* + a momentum allreduce every lion_cub_sync steps */
  if (SgTrainerIsSdp4bit(t)) { /* this rank's (the blocks differ by one value at most) */
    PetscMPIInt rank;
    long        psi = sgnn_tensor_numel(sgnn_params_values(t->P));
    MPI_Comm_rank(PetscObjectComm((PetscObject)t), &rank);
    if (t->shard == 3) return SgTrainerSdp4bitGradBytes(psi, size, rank, SgTrainerSdp4bitNodeRanks(t)) + f * S; /* + the exact gather before the step */
    return SgTrainerSdp4bitStepBytes(psi, size, rank, SgTrainerSdp4bitNodeRanks(t));
  }
  if (t->shard == 0) return 2 * f * S;     /* gradient allreduce */
  if (t->shard == 1) return 2 * f * S + f * S; /* gradient allreduce + parameter all-gather */
  return f * S + f * S;                    /* gradient reduce-scatter + parameter all-gather (stage 3: before the step, zero3.c) */
}

/* by gradient buckets (zerograd.c): what the start-up line says of them; "" without */
static PetscErrorCode GradBucketWords(SgTrainer t, char w[], size_t len)
{
  int    nb;
  double big, psib = (double)sgnn_tensor_numel(sgnn_params_values(t->P)) * (double)ESize(sgnn_params_values(t->P));

  PetscFunctionBegin;
  w[0] = 0;
  if (!SgTrainerGradBucketed(t)) PetscFunctionReturn(PETSC_SUCCESS);
  SgTrainerGradBucketMem(t, NULL, NULL, NULL, &nb, &big);
  PetscCall(PetscSNPrintf(w, len, "; the gradient in %d buckets of >= %" PetscInt_FMT " bytes, each summed one-sidedly into its owners' blocks (MPI_Raccumulate) and freed when backward has finished it: during backward + at most %d open buckets, %.4g KiB (the %d largest; one more sends the least recently used one's partial sum early; the whole slab is %.4g KiB)", nb, t->z3bucket, SgTrainerGradBucketOpenLimit(t), big / 1024, SgTrainerGradBucketOpenLimit(t), psib / 1024));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The start-up line (line non-NULL), or, with line NULL, the measured memory into t->zmem:
   weights, gradients, optimizer state of this rank, in bytes. */
PetscErrorCode SgTrainerZeroSummary(SgTrainer t, char line[], size_t len)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  SgnnTensor  v = sgnn_params_values(t->P), m = NULL, w = NULL;
  double      b = (double)ESize(v), psi = (double)sgnn_tensor_numel(v), K, N, f[3], mx[3], tot, ftot;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  N = (double)size;
  if (!line) {
    SgCallNN(sgnn_optim_state(t->opt, &m, &w, NULL));
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    double sw[2];
    SgTrainerSdp4bitWorkBytes(t, sw); /* sdp4bit's working copies (0 without it): the weights and gradient as doubles, the master block */
    t->zmem[0] = psi * b + (double)t->z3n * b + sw[0]; /* stage 3: + this rank's block, kept between steps (zero3.c) */
    t->zmem[1] = psi * b + sw[1]; /* the slab backward writes (stage 2 reduces it in place) */
    if (SgTrainerGradBucketed(t)) SgTrainerGradBucketMem(t, &t->zmem[1], NULL, NULL, NULL, NULL); /* by buckets: the block; the buckets come and go within a step (zerograd.c) */
    t->zmem[2] = (m ? (double)sgnn_tensor_numel(m) : 0) * b + (w ? (double)sgnn_tensor_numel(w) : 0) * b;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Allreduce(t->zmem, mx, 3, MPI_DOUBLE, MPI_MAX, comm)); /* the rank with the largest block */
  char gw[512];
  PetscCall(GradBucketWords(t, gw, sizeof gw));
  K    = b * Moments(&t->oc);
  f[0] = b * psi;
  f[1] = t->shard >= 2 ? b * psi / N : b * psi;
  f[2] = t->shard >= 1 ? K * psi / N : K * psi;
  tot  = mx[0] + mx[1] + mx[2];
  ftot = f[0] + f[1] + f[2];
  if (SgTrainerZero3Bucketed(t)) { /* by buckets (zero3b.c): the peak's bound from the bucket sizes */
    int    nb;
    double big[4] = {0, 0, 0, 0}, bound = 0;
    SgTrainerZero3BucketStats(t, &nb, NULL, NULL, NULL, NULL);
    for (int k = 0; k < nb; k++) { /* the 4 largest: 3 in use + 1 fetched ahead */
      double x = SgTrainerZero3BucketBytes(t, k);
      for (int j = 0; j < 4; j++)
        if (x > big[j]) {
          double y = big[j];
          big[j] = x;
          x = y;
        }
    }
    for (int j = 0; j < 4; j++) bound += big[j];
    PetscCall(PetscSNPrintf(line, len, "%s: ZeRO stage 3 by buckets on %d rank(s), %s, %s, %.0f parameters in %d buckets of >= %" PetscInt_FMT " bytes, read one-sidedly at first use (MPI_Rget from the owners' blocks; the next bucket fetched ahead): per rank (largest) between steps weights %.4g + gradients %.4g (the block of the summed gradient) + optimizer state %.4g KiB; during a step weights at most %.4g KiB (the block + 3 buckets in use + 1 fetched ahead, the 4 largest %.4g KiB; the whole slab is %.4g KiB) + gradients %.4g + the buckets open + optimizer state %.4g KiB; sends (bucket - own part) per fill, the fills set by the model's uses, + (bucket - own part) per gradient bucket, %.4g KiB per step when every bucket has a gradient", t->name, size, OptimName(t->oc.type), b == 4 ? "float32" : "float64", psi, nb, t->z3bucket, (mx[0] - psi * b) / 1024, mx[1] / 1024, mx[2] / 1024, (mx[0] - psi * b + bound) / 1024, bound / 1024, psi * b / 1024, mx[1] / 1024, mx[2] / 1024, StepBytes(t, size) / 2 / 1024));
    PetscCall(PetscStrlcat(line, gw, len));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (t->shard == 3) { /* the step's peak and what stays between steps (zero3.c) */
    double rest = (mx[0] - psi * b) + mx[2];
    PetscBool q = SgTrainerIsSdp4bit(t);
    PetscCall(PetscSNPrintf(line, len, "%s: ZeRO stage 3%s on %d rank(s), %s, %s, %.0f parameters: per rank (largest) between steps weights %.4g + gradients 0 + optimizer state %.4g = %.4g KiB (ZeRO's bPsi/N + bPsi/N + KPsi/N = %.4g KiB); during a step the whole slab is gathered: weights %.4g + gradients %.4g + optimizer state %.4g = %.4g KiB (stage 2's peak + the rank's block%s); sends %.4g KiB per step (%s)", t->name, q ? (size == 1 ? " + sdp4bit (one rank: nothing is sent, the gradient is not quantized)" : SgTrainerSdp4bitNodeRanks(t) == size ? " + sdp4bit (8-bit gradients: one node; weights gathered exactly)" : (SgTrainerSdp4bitNodeRanks(t) == 1 ? " + sdp4bit (4-bit Hadamard-smoothed gradients; weights gathered exactly)" : " + sdp4bit (gradients 8-bit in a node, 4-bit Hadamard-smoothed between nodes; weights gathered exactly)")) : "", size, OptimName(t->oc.type), b == 4 ? "float32" : "float64", psi, (mx[0] - psi * b) / 1024, mx[2] / 1024, rest / 1024, (2 * b + K) * psi / N / 1024, mx[0] / 1024, mx[1] / 1024, mx[2] / 1024, tot / 1024, q && size > 1 ? " + sdp4bit's gradient as doubles" : "", StepBytes(t, size) / 1024, q ? "exact all-gather + quantized reduce-scatter" : "all-gather + reduce-scatter, as stage 2"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscSNPrintf(line, len, "%s: ZeRO stage %" PetscInt_FMT "%s on %d rank(s), %s, %s, %.0f parameters%s: per rank (largest) weights %.4g + gradients %.4g + optimizer state %.4g = %.4g KiB (ZeRO's %s = %.4g KiB%s); sends %.4g KiB per step", t->name, t->shard, strcmp(t->compress, "none") ? (!strcmp(t->compress, "lion_cub") ? " + lion_cub (1-bit majority vote, all-gather)" : (SgTrainerIsLionCub(t) ? " + lion_cub_allreduce (1-bit majority vote, allreduce of counts)" : (SgTrainerSdp4bitNodeRanks(t) == size ? " + sdp4bit (4-bit weight differences; 8-bit gradients: one node)" : (SgTrainerSdp4bitNodeRanks(t) == 1 ? " + sdp4bit (4-bit weight differences; 4-bit Hadamard-smoothed gradients)" : " + sdp4bit (4-bit weight differences; gradients 8-bit in a node, 4-bit Hadamard-smoothed between nodes)")))) : "", size, OptimName(t->oc.type), b == 4 ? "float32" : "float64", psi, SgTrainerIsSdp4bit(t) ? " (weights and gradients with sdp4bit's float64 working copies and exact block)" : "", mx[0] / 1024, mx[1] / 1024, mx[2] / 1024, tot / 1024,
                          t->shard == 0 ? "2bPsi + KPsi" : (t->shard == 1 ? "2bPsi + KPsi/N" : "bPsi + bPsi/N + KPsi/N"), ftot / 1024, t->shard >= 2 && !SgTrainerGradBucketed(t) ? "; backward still writes the whole gradient slab" : "", StepBytes(t, size) / 1024));
  PetscCall(PetscStrlcat(line, gw, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The update: the optimizer on this rank's block, then (sharded) the all-gather of the blocks.
   Counts the step's bytes. */
PetscErrorCode SgTrainerZeroUpdate(SgTrainer t)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  PetscMPIInt size;

  PetscFunctionBegin;
  if (SgTrainerIsLionCub(t)) {
    PetscCall(SgTrainerLionCubUpdate(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (SgTrainerIsSdp4bit(t) && t->shard == 2) { /* the master block, the quantized differences all-gathered (sdp4bit.c); stage 3 gathers before the step, as without sdp4bit */
    PetscCall(SgTrainerSdp4bitUpdate(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (SgTrainerGradBucketed(t)) { /* the gradient is the block summed by the buckets (zerograd.c); the values the block in its window (stage 3) or in the slab */
    PetscMPIInt rank;
    SgnnTensor  v = sgnn_params_values(t->P);
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    SgCallNN(sgnn_optim_step_with(t->opt, SgTrainerZero3Bucketed(t) ? t->z3block : (char *)sgnn_tensor_data(v) + (size_t)t->zdispl[rank] * ESize(v), SgTrainerGradBucketBlock(t)));
    if (t->shard == 2) PetscCall(SgTrainerGradBucketReset(t)); /* zeroed before the all-gather below, which every rank enters before any starts its next step; stage 3: in its release */
  } else if (SgTrainerZero3Bucketed(t)) SgCallNN(sgnn_optim_step_at(t->opt, t->z3block)); /* the block in its window (zero3b.c) */
  else SgCallNN(sgnn_optim_step(t->opt));
  if (t->shard && t->shard < 3 && size > 1) {
    SgnnTensor v = sgnn_params_values(t->P);
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sgnn_tensor_data(v), t->zcount, t->zdispl, DType(v), t->sync->comm));
  }
  if (t->shard == 3) { /* no all-gather now: the block is kept, the slabs freed; the next acquire gathers and counts its bytes */
    PetscCall(SgTrainerZero3Release(t));
    if (SgTrainerIsSdp4bit(t)) t->zbytes += SgTrainerSdp4bitTakeGradBytes(t); /* what its quantized reduce-scatter sent (sdp4bit.c) */
    else if (!SgTrainerGradBucketed(t)) t->zbytes += StepBytes(t, size) / 2; /* the reduce-scatter; by gradient buckets each bucket counted what it sent */
  } else t->zbytes += SgTrainerGradBucketed(t) ? StepBytes(t, size) / 2 : StepBytes(t, size); /* stage 2 by buckets: the all-gather here, the buckets' sends counted as sent */
  t->zsteps++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetCommStats(SgTrainer t, PetscReal *bytes_per_step, PetscReal mem[3])
{
  PetscFunctionBegin;
  if (bytes_per_step) *bytes_per_step = t->zsteps ? t->zbytes / t->zsteps : 0;
  if (mem)
    for (int i = 0; i < 3; i++) mem[i] = t->zmem[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- stage 2: the gradient reduce-scattered, in place; each rank keeps the sum of its block ---- */
static PetscErrorCode End_ReduceScatter(SgTrainerSync s, PetscInt nglobal)
{
  SgTrainer   t = (SgTrainer)s->data;
  SgnnTensor  g = sgnn_params_grads(s->P);
  size_t      e = ESize(g);
  char       *d = (char *)sgnn_tensor_data(g);
  PetscMPIInt rank, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  if (size > 1) {
    /* in place: the block's sum lands at the top of the slab, then moves to the block's place */
    PetscCallMPI(MPI_Reduce_scatter(MPI_IN_PLACE, d, t->zcount, DType(g), MPI_SUM, s->comm));
    memmove(d + (size_t)t->zdispl[rank] * e, d, (size_t)t->zcount[rank] * e);
  }
  if (s->scaling == SG_TRAINER_LOSS_SUM) SgTrainerScaleBlock(d + (size_t)t->zdispl[rank] * e, t->zcount[rank], e, 1.0 / (double)nglobal);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a block of the gradient scaled as sgnn_tensor_scale does the whole slab: x = a x (+ 0.0, as its kernel) */
void SgTrainerScaleBlock(void *d, long n, size_t es, double a)
{
  if (es == sizeof(float)) {
    float *x = (float *)d;
    for (long i = 0; i < n; i++) x[i] = (float)(a * x[i] + 0.0);
  } else {
    double *x = (double *)d;
    for (long i = 0; i < n; i++) x[i] = a * x[i] + 0.0;
  }
}

PetscErrorCode SgTrainerSyncCreate_ReduceScatter(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerSyncSetEndOnly(s, End_ReduceScatter, "reduce-scatter sync (ZeRO stage 2): each rank receives the sum of its block of the gradient"));
  PetscFunctionReturn(PETSC_SUCCESS);
}
