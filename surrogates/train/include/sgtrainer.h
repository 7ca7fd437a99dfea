/* SgTrainer: the one training pipeline of surge's surrogates (docs/train.md).

     loader -> batch -> surrogate's loss (forward) -> backward -> gradient sync -> optimizer + schedule
            -> progress line / lcurve (surrogate's metrics and validation) -> checkpoint (io/nn)

   A surrogate supplies its parameter slab (SgnnParams), its loss (a function of one local batch), and
   optionally its metrics/validation, a data check and its own checkpoint format; it never writes a
   training loop. Data arrive in "streams": each stream is a set of dataset files read by its own
   SOLAR-style loader (io/loader); every step draws one global batch from one stream, chosen in
   proportion to the stream's sample count by a hash of (seed, step), the same on every rank and after
   a restart (DeePMD-kit's systems are streams; a surrogate with one dataset has one stream).

   Gradient sync is a strategy chosen by name (-PREFIX_sync): "bucketed" (default: surrogates/parallel,
   non-blocking allreduce of gradient buckets started while backward runs), "allreduce" (one blocking
   allreduce of the slab after backward) or "hybrid" (the buckets over a process grid of data groups x
   spatial ranks, each sample counted once per data group). Bucketed and allreduce give bit-identical
   gradients on 2 ranks.

   Process grid (SgTrainerSetProcessGrid, options -PREFIX_data_groups, -PREFIX_spatial_ranks): the
   ranks form data_groups x spatial_ranks (surrogates/parallel, docs/parallel.md). The loaders split
   every global batch over the data groups only, so all spatial ranks of a group get the same sample
   ids; the surrogate takes the grid (SgTrainerGetProcessGrid) to partition each sample over the
   spatial ranks of its group. Default: every rank its own data group (pure data parallelism).

   Depends on: src/base (options, logging), io/loader, io/nn, surrogates/nn, surrogates/parallel. */
#pragma once
#include <petscsys.h>
#include "sgnn.h"
#include "sgloader.h"
#include "sgh5file.h"
#include "sgcompat.h"
#include "sgpar.h"

/* an NN-engine call inside a PETSc function: its error becomes a PETSc error with the engine's message */
#define SgCallNN(call) \
  do { \
    int _e = (call); \
    PetscCheck(!_e, PETSC_COMM_SELF, PETSC_ERR_LIB, "NN engine: %s", sgnn_last_error()); \
  } while (0)

/* a surrogates/parallel call inside a PETSc function: its error becomes a PETSc error with its message */
#define SgCallPar(call) \
  do { \
    int _e = (call); \
    PetscCheck(!_e, PETSC_COMM_SELF, PETSC_ERR_LIB, "parallel: %s", sgpar_last_error()); \
  } while (0)

typedef struct _p_SgTrainer *SgTrainer;
PETSC_EXTERN PetscClassId  SG_TRAINER_CLASSID;
PETSC_EXTERN PetscLogEvent SG_TRAINER_Step, SG_TRAINER_Loss, SG_TRAINER_Backward, SG_TRAINER_Sync, SG_TRAINER_Update, SG_TRAINER_Monitor, SG_TRAINER_Checkpoint;

/* How the surrogate's loss is normalised. SUM (the default): the loss is the SUM over the rank's local
   samples and the sync divides the summed gradient by the global sample count. GLOBAL_MEAN: the loss
   already carries 1/(global sample count) (from SgLoaderBatch.nglobal), so the sync only sums; this is
   the Deep Potential's arithmetic, kept so its results stay bit for bit. */
typedef enum {
  SG_TRAINER_LOSS_SUM,
  SG_TRAINER_LOSS_GLOBAL_MEAN
} SgTrainerLossScaling;

/* What one step tells the loss: the step (0-based), its learning rate and the schedule's initial one
   (DeePMD-kit's loss prefactors follow lr/lr0). */
typedef struct {
  PetscInt  step;
  PetscReal lr, lr0;
} SgTrainerStepInfo;

typedef enum {
  SG_TRAINER_CKPT_WRITE,
  SG_TRAINER_CKPT_READ
} SgTrainerCkptMode;

/* The surrogate's side. Every function gets the ctx given to SgTrainerSetOps. */
typedef struct {
  /* Required. The loss of the local batch b of `stream` (b->nlocal may be 0: then the function is not
     called). Creates *loss (one element, recorded on the tape); may add its training metrics to sums
     (nsums of them, zeroed after each progress line, summed over ranks before the monitor sees them). */
  PetscErrorCode (*loss)(SgTrainer, void *ctx, PetscInt stream, const SgLoaderBatch *b, const SgTrainerStepInfo *, SgnnTensor *loss, PetscReal sums[]);
  /* Optional, collective: check the batch just trained on (e.g. finite labels); an error stops the run
     with every loader stopped and nothing written. */
  PetscErrorCode (*check)(SgTrainer, void *ctx, PetscInt stream, const SgLoaderBatch *b);
  /* Optional, collective: the columns of a progress line after `step` steps (NaN prints n/a), from
     the rank-summed training sums (validation belongs here). */
  PetscErrorCode (*monitor)(SgTrainer, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[]);
  /* Optional, collective: the surrogate's own checkpoint. WRITE after *step steps: rank 0 writes its
     file, and every rank hands the optimizer's moments to it with SgTrainerWriteMoments (its block when
     the optimizer is sharded); READ restores the optimizer state (SgTrainerReadMoments) and sets *step.
     Without it the trainer writes io/nn's checkpoint. */
  PetscErrorCode (*checkpoint)(SgTrainer, void *ctx, SgTrainerCkptMode, const char path[], PetscInt *step);
} SgTrainerOps;

PETSC_EXTERN PetscErrorCode SgTrainerInitializePackage(void);
PETSC_EXTERN PetscErrorCode SgTrainerCreate(MPI_Comm, SgTrainer *);
/* the model's parameter slab (borrowed) and the surrogate's side */
PETSC_EXTERN PetscErrorCode SgTrainerSetModel(SgTrainer, SgnnParams);
PETSC_EXTERN PetscErrorCode SgTrainerSetOps(SgTrainer, const SgTrainerOps *, void *ctx);
PETSC_EXTERN PetscErrorCode SgTrainerSetLossScaling(SgTrainer, SgTrainerLossScaling);
/* name used in messages ("deepmd: ..."); column names of the progress line and the lcurve header */
PETSC_EXTERN PetscErrorCode SgTrainerSetName(SgTrainer, const char name[]);
PETSC_EXTERN PetscErrorCode SgTrainerSetMetrics(SgTrainer, PetscInt nsums, PetscInt ncols, const char *const cols[], const char lcurve_header[]);
/* data: fields read from every file (same names in every stream), then one stream per set of files */
PETSC_EXTERN PetscErrorCode SgTrainerSetFields(SgTrainer, PetscInt n, const char *const names[]);
/* spatial shard of field (one of SetFields): every loader reads and delivers only this rank's block
   [start, start + count) of each row (SgLoaderSetFieldShard); for a model partitioned over the
   spatial ranks of the process grid */
PETSC_EXTERN PetscErrorCode SgTrainerSetFieldShard(SgTrainer, const char field[], PetscInt ndim, const PetscInt start[], const PetscInt count[]);
PETSC_EXTERN PetscErrorCode SgTrainerAddStream(SgTrainer, PetscInt nfiles, const char *const files[], int64_t nsamples, PetscInt *stream);
PETSC_EXTERN PetscErrorCode SgTrainerSetBatchSize(SgTrainer, PetscInt global_batch);
PETSC_EXTERN PetscErrorCode SgTrainerSetSeed(SgTrainer, uint64_t seed);
/* optimization: steps, optimizer (SGD/Adam/AdamW/Lion), learning-rate schedule */
PETSC_EXTERN PetscErrorCode SgTrainerSetNumSteps(SgTrainer, PetscInt steps);
PETSC_EXTERN PetscErrorCode SgTrainerSetOptimizer(SgTrainer, const SgnnOptimConfig *);
PETSC_EXTERN PetscErrorCode SgTrainerSetSchedule(SgTrainer, const SgnnLRSchedule *);
/* Plateau decay of the learning rate (PyTorch's ReduceLROnPlateau, mode min, relative threshold) on
   the global mean training loss of each window of `window` steps: after more than `patience` windows
   without a fall below best * (1 - threshold), the learning-rate factor is multiplied by `factor`
   (lr = schedule(step) x factor, never below min_lr); window 0: off. Gradient clipping: the global
   gradient is scaled to 2-norm max_norm when larger (0: off). Both are saved in the trainer's own
   checkpoint (surrogates with their own checkpoint format cannot combine them with checkpoints).
   fresh_on_restart: a restart keeps the learning-rate factor but forgets the best windowed loss, the
   count of bad windows and the partial window (for a restart that changes the loss, whose values do
   not compare with the checkpoint's best). Options -PREFIX_plateau_window, _patience, _factor,
   _threshold, _min_lr, _fresh_on_restart and -PREFIX_clip_norm, read by SgTrainerSetFromOptions or
   declared in a surrogate's own block by SgTrainerOptionsPlateau. */
typedef struct {
  PetscInt  window, patience;
  PetscReal factor, threshold, min_lr;
  PetscBool fresh_on_restart;
} SgTrainerPlateau;
PETSC_EXTERN PetscErrorCode SgTrainerPlateauDefault(SgTrainerPlateau *);
PETSC_EXTERN PetscErrorCode SgTrainerSetPlateau(SgTrainer, const SgTrainerPlateau *);
PETSC_EXTERN PetscErrorCode SgTrainerSetClipNorm(SgTrainer, PetscReal max_norm);
PETSC_EXTERN PetscErrorCode SgTrainerOptionsPlateau(PetscOptionItems *, SgTrainerPlateau *, PetscReal *clip);
PETSC_EXTERN PetscErrorCode SgTrainerGetLRFactor(SgTrainer, PetscReal *); /* the plateau factor now (1: no cut yet) */
/* progress, checkpoints, stop */
PETSC_EXTERN PetscErrorCode SgTrainerSetMonitorFrequency(SgTrainer, PetscInt steps);
PETSC_EXTERN PetscErrorCode SgTrainerSetLCurve(SgTrainer, const char path[]);
PETSC_EXTERN PetscErrorCode SgTrainerSetCheckpoint(SgTrainer, const char path[], PetscInt every);
PETSC_EXTERN PetscErrorCode SgTrainerSetRestart(SgTrainer, const char path[]);
PETSC_EXTERN PetscErrorCode SgTrainerSetMaxTime(SgTrainer, PetscReal seconds);
/* no progress lines on screen (the lcurve, if set, is still written): for many small trainings,
   e.g. the candidates of an architecture search */
PETSC_EXTERN PetscErrorCode SgTrainerSetQuiet(SgTrainer, PetscBool);
/* SIGTERM/SIGUSR1 (a batch system's time limit) stop the run at the next step boundary, the ranks
   agreed, with a checkpoint: the save_ckpt file, or BASE.chk.h5 of the job's output base
   (SgStopSignalSetCheckpointBase), or NAME.chk.h5; one line names it and the -NAME_restart to
   continue with. SgStopSignalCaught() then tells the caller not to write the model. Off by default
   (for a surrogate that can restart from the checkpoint: deepmd, mffn). */
PETSC_EXTERN PetscErrorCode SgTrainerSetStopOnSignal(SgTrainer, PetscBool);
/* From the surrogate's monitor: end the run after this step, as a max_time stop does (progress line,
   checkpoint if one is configured), e.g. early stopping on a validation metric. Collective in effect:
   every rank must ask at the same step (the monitor sees the same rank-summed values everywhere). */
PETSC_EXTERN PetscErrorCode SgTrainerRequestStop(SgTrainer, const char reason[]);
/* gradient sync by name (NULL/"": keep) and bucket size in bytes (<= 0: keep); options -PREFIX_sync
   bucketed|allreduce and -PREFIX_sync_bucket_kb, read by SgTrainerSetFromOptions or declared inside a
   surrogate's own options block by SgTrainerOptionsSync (sync "" and kb 0 in: the defaults) */
PETSC_EXTERN PetscErrorCode SgTrainerSetOptionsPrefix(SgTrainer, const char prefix[]);
PETSC_EXTERN PetscErrorCode SgTrainerSetSyncType(SgTrainer, const char type[], PetscInt bucket_bytes);
PETSC_EXTERN PetscErrorCode SgTrainerSetFromOptions(SgTrainer);
/* Optimizer by name and ZeRO sharding (zero.c, docs/train.md): options -PREFIX_optimizer
   sgd|adam|adamw|lion, -PREFIX_lion_beta1, -PREFIX_lion_beta2, -PREFIX_weight_decay,
   -PREFIX_sgd_momentum, -PREFIX_shard 0|1|2|3 (ZeRO stage: 1 optimizer state, 2 also gradients,
   3 also the parameters between steps partitioned over the ranks), -PREFIX_compress none|lion_cub|lion_cub_allreduce|sdp4bit, -PREFIX_lion_cub_sync M, read by SgTrainerSetFromOptions or declared in a
   surrogate's own block by SgTrainerOptionsOptimizer (the optimizer's learning rate is kept). Bad
   combinations are refused at SgTrainerSetUp with one line. SgTrainerGetCommStats: bytes sent per
   step (counted as bandwidth-optimal collectives send them, per rank) and this rank's weights,
   gradient and optimizer-state bytes. */
PETSC_EXTERN PetscErrorCode SgTrainerOptionsOptimizer(PetscOptionItems *, SgnnOptimConfig *, PetscInt *shard, char compress[], size_t len, PetscInt *lion_cub_sync);
/* lion_cub_sync < 0: the trainer's default (10) */
PETSC_EXTERN PetscErrorCode SgTrainerSetShard(SgTrainer, PetscInt stage, const char compress[], PetscInt lion_cub_sync);
/* -PREFIX_shard_bucket_bytes B: at stages 2 and 3 the gradient lives in buckets of >= B bytes while
   backward accumulates them, each added one-sidedly into its owners' blocks when it is final
   (zerograd.c); at stage 3 the parameters are also read by buckets at first use (one-sided, from the
   owners' blocks, zero3b.c) instead of all-gathered whole per step; 0 (the default): whole slabs */
PETSC_EXTERN PetscErrorCode SgTrainerOptionsShardBucket(PetscOptionItems *, PetscInt *bytes);
PETSC_EXTERN PetscErrorCode SgTrainerSetShardBucket(SgTrainer, PetscInt bytes);
/* -PREFIX_shard_grad_open_buckets N (>= 1, default 3): with the gradient by buckets, at most N buckets
   open at once; opening one more first sends the least recently used one's partial sum (zerograd.c).
   The gradient held during backward is at most the block + the N largest buckets; a smaller N costs
   bytes (early partial sums) where the model keeps many tensors open to the end of backward. */
PETSC_EXTERN PetscErrorCode SgTrainerOptionsShardGradOpen(PetscOptionItems *, PetscInt *open);
PETSC_EXTERN PetscErrorCode SgTrainerSetShardGradOpen(SgTrainer, PetscInt open);
/* its buckets, the fills this rank made over the run, the bytes they read from other ranks, and how
   many of the fills found their bucket fetched ahead (0 without buckets) */
PETSC_EXTERN PetscErrorCode SgTrainerGetShardBucketStats(SgTrainer, PetscInt *nbuckets, PetscReal *fills, PetscReal *bytes_read, PetscReal *ahead);
/* the same two counts over the steps that replayed the previous step's order of uses (every step
   after this rank's first that used the model; zero3b.c) */
PETSC_EXTERN PetscErrorCode SgTrainerGetShardBucketReplayStats(SgTrainer, PetscReal *fills, PetscReal *ahead);
/* stages 2 and 3 by buckets (zerograd.c): the gradient's buckets, the most bucket bytes open at once in
   any step, the buckets this rank sent over the run and the bytes they sent to other ranks (0 without) */
PETSC_EXTERN PetscErrorCode SgTrainerGetShardGradStats(SgTrainer, PetscInt *nbuckets, PetscReal *peak_bytes, PetscReal *sends, PetscReal *bytes_sent);
PETSC_EXTERN PetscErrorCode SgTrainerGetCommStats(SgTrainer, PetscReal *bytes_per_step, PetscReal mem[3]);
/* -PREFIX_shard 3: what this rank held between steps (rest) and at the peak of a step (weights,
   gradients, optimizer state, bytes; zero3.c); other stages: SgTrainerGetCommStats' mem in both */
PETSC_EXTERN PetscErrorCode SgTrainerGetShardResident(SgTrainer, PetscReal rest[3], PetscReal peak[3]);
/* The vote allreduce of -PREFIX_compress lion_cub_allreduce (vote.c): votes[i] = the number of ranks of
   comm whose bit i (bits[i >> 3] >> (i & 7) & 1) is set, for n values, by one MPI_Allreduce of
   ceil(log2(N + 1))-bit counters packed in 64-bit words; collective; N < 65,536. SgTrainerVoteBytes: what it
   sends per rank (a bandwidth-optimal allreduce: 2 (N-1)/N x the message). */
PETSC_EXTERN PetscErrorCode SgTrainerVoteSum(MPI_Comm, long n, const unsigned char bits[], uint16_t votes[]);
PETSC_EXTERN double         SgTrainerVoteBytes(long n, PetscMPIInt size);
/* -PREFIX_compress sdp4bit's pieces (sdp4bit.c, docs/train.md), public for the tests. The codec: n values
   in groups of g, a float32 scale max|x|/qmax a group (first), then round(x/scale) in [-qmax, qmax]
   (qmax 7 for bits 4, two codes a byte, low nibble first; 127 for bits 8); SgTrainerQuantBytes is its
   size, SgTrainerQuantUnpackAdd adds the decoded values to y. SgTrainerHadamard: x <- H x / sqrt(g) on
   each whole group of g (a power of 2). SgTrainerSdp4bitReduceScatter: the two-level gradient
   reduce-scatter over intra (the ranks of a node, 8 bits) and inter (the ranks of one local index,
   4 bits + Hadamard), rank r = node x G + local index; g is the whole slab in, and holds the sum
   on this rank's block [displ, displ + count) out. SgTrainerSdp4bitAllGather: every rank's block of
   4-bit differences d (this rank's block) added to x (the whole slab), from the same gathered bytes
   on every rank. bytes: what this rank sent to other ranks. SgTrainerSdp4bitStepBytes: the sum of
   both for rank `rank` of size with even blocks of a Psi-value slab and G ranks a node;
   SgTrainerSdp4bitGradBytes the gradient's part alone (all that is quantized at ZeRO stage 3, whose
   weights are gathered exactly). */
/* -PREFIX_sdp4bit_node_ranks G (ranks a node for sdp4bit's two levels; 0, the default: the ranks that
   share memory), read by SgTrainerSetFromOptions or declared in a surrogate's own block */
PETSC_EXTERN PetscErrorCode SgTrainerOptionsSdp4bit(PetscOptionItems *, PetscInt *node_ranks);
PETSC_EXTERN PetscErrorCode SgTrainerSetSdp4bit(SgTrainer, PetscInt node_ranks);
PETSC_EXTERN size_t         SgTrainerQuantBytes(long n, int bits, long g);
PETSC_EXTERN PetscErrorCode SgTrainerQuantPack(const double x[], long n, int bits, long g, unsigned char buf[]);
PETSC_EXTERN PetscErrorCode SgTrainerQuantUnpackAdd(const unsigned char buf[], long n, int bits, long g, double y[]);
PETSC_EXTERN PetscErrorCode SgTrainerHadamard(double x[], long n, long g);
PETSC_EXTERN PetscErrorCode SgTrainerSdp4bitReduceScatter(MPI_Comm intra, MPI_Comm inter, const PetscMPIInt count[], const PetscMPIInt displ[], double g[], double *bytes);
PETSC_EXTERN PetscErrorCode SgTrainerSdp4bitAllGather(MPI_Comm, const PetscMPIInt count[], const PetscMPIInt displ[], const double d[], double x[], double *bytes);
PETSC_EXTERN double         SgTrainerSdp4bitStepBytes(long psi, PetscMPIInt size, PetscMPIInt rank, PetscInt G);
PETSC_EXTERN double         SgTrainerSdp4bitGradBytes(long psi, PetscMPIInt size, PetscMPIInt rank, PetscInt G);
PETSC_EXTERN PetscErrorCode SgTrainerOptionsSync(PetscOptionItems *, char sync[], size_t len, PetscInt *bucket_kb);
/* Process grid: data_groups x spatial_ranks must equal the trainer's rank count (data_groups 0: ranks /
   spatial_ranks). Options -PREFIX_data_groups, -PREFIX_spatial_ranks, read by SgTrainerSetFromOptions or
   declared in a surrogate's own options block by SgTrainerOptionsGrid (0 and 1 in: the defaults).
   SgTrainerCheckProcessGrid refuses a grid that does not cover comm with one line naming both options
   (-PREFIX_...), on every rank: call it before anything is read or written. */
PETSC_EXTERN PetscErrorCode SgTrainerSetProcessGrid(SgTrainer, PetscInt data_groups, PetscInt spatial_ranks);
PETSC_EXTERN PetscErrorCode SgTrainerOptionsGrid(PetscOptionItems *, PetscInt *data_groups, PetscInt *spatial_ranks);
PETSC_EXTERN PetscErrorCode SgTrainerCheckProcessGrid(MPI_Comm, const char prefix[], PetscInt data_groups, PetscInt spatial_ranks, PetscInt *groups_out);
/* collective: creates the loaders (positioned after a restart's step), the optimizer and the sync */
PETSC_EXTERN PetscErrorCode SgTrainerSetUp(SgTrainer);
PETSC_EXTERN PetscErrorCode SgTrainerTrain(SgTrainer);
PETSC_EXTERN PetscErrorCode SgTrainerView(SgTrainer, PetscViewer);
PETSC_EXTERN PetscErrorCode SgTrainerDestroy(SgTrainer *);

/* for the surrogate's functions */
PETSC_EXTERN PetscErrorCode SgTrainerGetLoader(SgTrainer, PetscInt stream, SgLoader *);
PETSC_EXTERN PetscErrorCode SgTrainerGetOptimizer(SgTrainer, SgnnOptim *);
/* The optimizer's moments in the surrogate's own checkpoint file, as whole f64 datasets names[0] (the
   first moment) and names[1] (the second; NULL where the optimizer has none), whatever the shard stage:
   a checkpoint restarts at any stage. Write: collective; f is the file being written on rank 0 (unused
   elsewhere). With a sharded optimizer (-PREFIX_shard >= 1) each rank's block reaches rank 0 one rank at
   a time, so no rank holds the whole state. *err is rank 0's outcome, in and out: once set (the file
   failed before), nothing more is written but every rank still takes part. Read: collective; every rank
   opens f and reads its part (its block when sharded), every value checked (finite; the second moment
   not negative): a damaged value in any rank's part is refused by every rank with one line. */
PETSC_EXTERN PetscErrorCode SgTrainerWriteMoments(SgTrainer, SgH5File f, const char *const names[2], PetscErrorCode *err);
PETSC_EXTERN PetscErrorCode SgTrainerReadMoments(SgTrainer, SgH5File f, const char *const names[2]);
PETSC_EXTERN PetscErrorCode SgTrainerGetNumSteps(SgTrainer, PetscInt *);
PETSC_EXTERN PetscErrorCode SgTrainerGetStep(SgTrainer, PetscInt *); /* steps done (after Train: where it stopped) */
PETSC_EXTERN PetscErrorCode SgTrainerGetStreamSteps(SgTrainer, PetscInt stream, PetscInt *steps); /* steps of the schedule that draw from it */
PETSC_EXTERN PetscErrorCode SgTrainerStreamOfStep(SgTrainer, PetscInt step, PetscInt *stream);
/* the process grid (after SgTrainerSetUp; owned by the trainer): the surrogate partitions each sample
   over sgpar_grid_spatial_comm; b->nlocal counts its data group's samples on every spatial rank */
PETSC_EXTERN PetscErrorCode SgTrainerGetProcessGrid(SgTrainer, SgparGrid *);

/* Gradient-sync strategies: begin before backward (the rank's sample count), end after it (the
   gradient slab then holds the global gradient). A strategy's create fills the ops and its data. */
typedef struct _p_SgTrainerSync *SgTrainerSync;
struct _p_SgTrainerSync {
  MPI_Comm             comm; /* the trainer's communicator, duplicated: a strategy's collectives never mix with the surrogate's */
  SgparGrid            grid; /* the trainer's process grid (data groups x spatial ranks) */
  SgnnParams           P;
  SgTrainerLossScaling scaling;
  size_t               bucket_bytes;
  void                *data;
  PetscErrorCode (*begin)(SgTrainerSync, PetscInt nlocal);
  PetscErrorCode (*end)(SgTrainerSync, PetscInt nglobal);
  PetscErrorCode (*describe)(SgTrainerSync, char buf[], size_t len); /* one line for SgTrainerView and -info (optional) */
  PetscErrorCode (*destroy)(SgTrainerSync);
  const char *line; /* the line of a strategy that describes itself by a fixed text (SgTrainerSyncSetEndOnly) */
};
PETSC_EXTERN PetscErrorCode SgTrainerSyncRegister(const char name[], PetscErrorCode (*create)(SgTrainerSync));
