/* Private definition of SgTrainer (surrogates/train only). */
#pragma once
#include "sgwrite.h"
#include <petsc/private/petscimpl.h>
#include <stdio.h>
#include "sgtrainer.h"

#define SG_TRAINER_MAXSTREAMS 16
#define SG_TRAINER_MAXFIELDS  16
#define SG_TRAINER_MAXCOLS    16

typedef struct {
  PetscInt    nfiles;
  char      **files;
  int64_t     nsamples;
  PetscInt    nsteps; /* steps of the schedule that draw from this stream */
  SgLoader    ld;
} SgTrainerStream;

typedef struct _SgTrainerOpsTable {
  int dummy; /* PetscHeaderCreate needs an ops table; the surrogate's functions are in SgTrainerOps */
} SgTrainerObjOps;

struct _p_SgTrainer {
  PETSCHEADER(SgTrainerObjOps);
  char                 name[64];
  SgnnParams           P;
  SgTrainerOps         ops_s;
  void                *ctx;
  SgTrainerLossScaling scaling;
  /* data */
  PetscInt        nfields;
  char           *fields[SG_TRAINER_MAXFIELDS];
  /* spatial shards of fields (SgTrainerSetFieldShard): this rank's block of each row */
  PetscInt        shdim[SG_TRAINER_MAXFIELDS], shstart[SG_TRAINER_MAXFIELDS][SG_DATASET_MAXDIM], shcount[SG_TRAINER_MAXFIELDS][SG_DATASET_MAXDIM];
  PetscBool       sharded[SG_TRAINER_MAXFIELDS];
  PetscInt        nstreams;
  SgTrainerStream streams[SG_TRAINER_MAXSTREAMS];
  int64_t         nsamples; /* over all streams */
  PetscInt        batch;
  uint64_t        seed;
  /* optimization */
  PetscInt        nsteps, step0, step;
  SgnnOptimConfig oc;
  SgnnLRSchedule  sched;
  SgnnOptim       opt;
  char            synctype[64];
  size_t          bucket_bytes;
  SgTrainerSync   sync;
  /* ZeRO sharding (zero.c): stage, compressor, the slab's blocks over the ranks, counters */
  PetscInt        shard;
  char            compress[32];
  PetscMPIInt     zn, *zcount, *zdispl;
  double          zbytes, zsteps, zmem[3];
  /* stage 3 (zero3.c): this rank's block of the parameters between steps, its length, and what the
     rank held at the peak of a step and between steps (weights, gradients, optimizer state, bytes) */
  void           *z3block;
  long            z3n;
  double          z3peak[3], z3rest[3];
  PetscInt        z3bucket;          /* -PREFIX_shard_bucket_bytes (0: the whole slab gathered per step) */
  struct _SgTrainerZ3b *z3b;         /* its buckets, window and counters (zero3b.c) */
  struct _SgTrainerZgb *zgb;         /* stages 2 and 3 by buckets: the gradient's buckets, the block's window (zerograd.c) */
  PetscInt        zgb_open;          /* -PREFIX_shard_grad_open_buckets: the most gradient buckets open at once (zerograd.c) */
  /* lion_cub (lioncub.c): the momentum-sync interval, this step's rate, the packed votes (this rank's,
     all ranks' for the all-gather; the counts for lion_cub_allreduce, vote.c) */
  PetscInt        cub_sync;
  double          cub_lr;
  unsigned char  *cub_bits, *cub_all;
  uint16_t       *cub_votes;
  struct _SgTrainerSdp4bit *sdp; /* -PREFIX_compress sdp4bit (sdp4bit.c): its nodes, master block, buffers */
  PetscInt        sdp_node;      /* its ranks a node (-PREFIX_sdp4bit_node_ranks; 0: the ranks sharing memory) */
  /* process grid: data groups x spatial ranks (0: ranks / spatial ranks) */
  PetscInt        dgroups, sranks;
  SgparGrid       grid;
  SgTrainerPlateau plateau; /* plateau decay (window 0: off) and clipping (clip 0: off), plateau.c */
  PetscReal        clip;
  struct {
    PetscReal scale, best, sum, maxnorm; /* lr factor, best windowed loss, running window sum, largest gradient norm */
    PetscInt  nbad, n, ndecay, nclip;    /* windows without improvement, steps in the window, cuts, clipped steps */
  } pl;
  /* progress, checkpoints */
  PetscInt  nsums, ncols, disp;
  char     *cols[SG_TRAINER_MAXCOLS];
  char     *lcurve_header;
  char      lcurve[PETSC_MAX_PATH_LEN], ckpt[PETSC_MAX_PATH_LEN], restart[PETSC_MAX_PATH_LEN];
  PetscInt  ckpt_every;
  PetscReal max_time;
  FILE     *lc;   /* the learning curve being written (PATH.tmp, committed when the streams stop) */
  SgTextFile lctf;
  PetscBool setupcalled, quiet;
  PetscBool stop_on_signal; /* SIGTERM/SIGUSR1 stop the loop with a checkpoint (src/base/stopsig.c) */
  char      stop_reason[128]; /* set by SgTrainerRequestStop: the loop ends after the current step */
};

PETSC_INTERN PetscErrorCode SgTrainerSyncCreate(SgTrainer, SgTrainerSync *);
PETSC_INTERN PetscErrorCode SgTrainerSyncDestroy(SgTrainerSync *);
PETSC_INTERN PetscErrorCode SgTrainerCheckpointDefault(SgTrainer, SgTrainerCkptMode, const char path[], PetscInt *step);
PETSC_INTERN PetscErrorCode SgTrainerStopStreams(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGridSetUp(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGridDescribe(SgTrainer, char buf[], size_t len);
PETSC_INTERN PetscErrorCode SgTrainerPlateauReset(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZeroSetUp(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZeroSummary(SgTrainer, char line[], size_t len);
PETSC_INTERN PetscErrorCode SgTrainerZeroUpdate(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3SetUp(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3Acquire(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3Release(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3AcquireWhole(SgTrainer);
PETSC_INTERN PetscBool      SgTrainerZero3Bucketed(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketSetUp(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketDestroy(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketBegin(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketDrain(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketPublish(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerZero3BucketUnbind(SgTrainer);
PETSC_INTERN void           SgTrainerZero3BucketStats(SgTrainer, int *nb, double *fills, double *bytes, double *wpeak, double *cur);
PETSC_INTERN double         SgTrainerZero3BucketBytes(SgTrainer, int k);
PETSC_INTERN void           SgTrainerScaleBlock(void *x, long n, size_t es, double a);
PETSC_INTERN PetscErrorCode SgTrainerShardBucketGroups(SgTrainer, size_t es, int *nb, int **first);
PETSC_INTERN PetscBool      SgTrainerGradBucketed(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGradBucketSetUp(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGradBucketRestore(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGradBucketDestroy(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerGradBucketReset(SgTrainer);
PETSC_INTERN void          *SgTrainerGradBucketBlock(SgTrainer);
PETSC_INTERN void           SgTrainerGradBucketMem(SgTrainer, double *block, double *cur, double *peak, int *nb, double *bound);
PETSC_INTERN double         SgTrainerGradBucketFlushes(SgTrainer);
PETSC_INTERN double         SgTrainerGradBucketFlushBytes(SgTrainer);
PETSC_INTERN int            SgTrainerGradBucketOpenLimit(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerSyncCreate_GradBuckets(SgTrainerSync);
PETSC_INTERN PetscErrorCode SgTrainerSyncCreate_ReduceScatter(SgTrainerSync);
PETSC_INTERN PetscErrorCode SgTrainerSyncCreate_Local(SgTrainerSync);
PETSC_INTERN PetscErrorCode SgTrainerSyncSetEndOnly(SgTrainerSync, PetscErrorCode (*end)(SgTrainerSync, PetscInt), const char line[]);
PETSC_INTERN PetscErrorCode SgTrainerLionCubUpdate(SgTrainer);
PETSC_INTERN double         SgTrainerLionCubBytes(SgTrainer, PetscMPIInt size, PetscBool sync_step);
/* -PREFIX_compress lion_cub or lion_cub_allreduce: the same Lion Cub step, two ways to count the votes */
static inline PetscBool SgTrainerIsLionCub(SgTrainer t) { return (PetscBool)(!strcmp(t->compress, "lion_cub") || !strcmp(t->compress, "lion_cub_allreduce")); }
PETSC_INTERN PetscErrorCode SgTrainerSdp4bitSetUp(SgTrainer, const char p[]);
PETSC_INTERN PetscErrorCode SgTrainerSdp4bitUpdate(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerSdp4bitDestroy(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerSyncCreate_Sdp4bit(SgTrainerSync);
PETSC_INTERN PetscInt       SgTrainerSdp4bitNodeRanks(SgTrainer);
PETSC_INTERN void           SgTrainerSdp4bitWorkBytes(SgTrainer, double w[2]);
PETSC_INTERN double         SgTrainerSdp4bitTakeGradBytes(SgTrainer);
static inline PetscBool SgTrainerIsSdp4bit(SgTrainer t) { return (PetscBool)!strcmp(t->compress, "sdp4bit"); }
PETSC_INTERN PetscErrorCode SgTrainerPlateauStep(SgTrainer, PetscInt step, double loss, int64_t nglobal);
PETSC_INTERN PetscErrorCode SgTrainerClipStep(SgTrainer);
PETSC_INTERN PetscErrorCode SgTrainerPlateauReport(SgTrainer, PetscInt steps);
PETSC_INTERN PetscErrorCode SgTrainerPlateauEncode(SgTrainer, char buf[], size_t len);
PETSC_INTERN PetscErrorCode SgTrainerPlateauDecode(SgTrainer, const char path[], const char buf[]);
