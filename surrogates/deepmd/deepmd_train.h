/* Private: statistics and training of the Deep Potential (stats.c, train.c). */
#pragma once
#include "deepmd.h"
#include "sgdataset.h"

typedef struct {
  PetscReal sr[SG_DP_MAXT], sr2[SG_DP_MAXT], sa[SG_DP_MAXT], sa2[SG_DP_MAXT], n[SG_DP_MAXT];
  PetscInt  overflow;
} SgDPStats;
PETSC_INTERN PetscErrorCode SgDPStatsBegin(SgDPStats *);
PETSC_INTERN PetscErrorCode SgDPStatsAddFrame(SgDPModel, SgDPStats *, PetscInt N, const PetscReal *x, const PetscInt *type, const PetscReal *box);
PETSC_INTERN PetscErrorCode SgDPStatsEnd(SgDPModel, SgDPStats *, MPI_Comm);
PETSC_INTERN PetscErrorCode SgDPPerTypeFit(PetscInt T, PetscInt nf, const PetscReal *counts, const PetscReal *E, PetscReal out[]);

/* md_frames files outside the loader (frames.c): a file opened once for all its reads; its atom types
   mapped onto the model's type map (checked by element name); frames [start, start+count) read as
   doubles (NULL arrays are not read; v only where the file has virials) */
typedef struct {
  SgDataset   ds;
  const char *path; /* borrowed */
  PetscInt    N, *type;
  PetscBool   has_virial;
  int64_t     nf;
} SgDPFrames;
PETSC_INTERN PetscErrorCode SgDPFramesOpen(SgDPModel, const char path[], SgDPFrames *);
PETSC_INTERN PetscErrorCode SgDPFramesRead(SgDPFrames *, int64_t start, int64_t count, PetscReal *x, PetscReal *box, PetscReal *e, PetscReal *f, PetscReal *v);
PETSC_INTERN PetscErrorCode SgDPFramesClose(SgDPFrames *);
PETSC_INTERN PetscBool      SgDPBoxIsZero(const PetscReal *box); /* an all-zero box is an open system */

/* Training hyper-parameters (DeePMD-kit's names) */
typedef struct {
  PetscInt  nfiles, nvalid;
  char      files[16][PETSC_MAX_PATH_LEN], valid[16][PETSC_MAX_PATH_LEN];
  PetscInt  numb_steps, batch_size, disp_freq, decay_steps, stat_frames, valid_frames, seed;
  PetscReal start_lr, stop_lr;
  PetscReal start_pref_e, limit_pref_e, start_pref_f, limit_pref_f, start_pref_v, limit_pref_v;
  PetscReal max_time; /* seconds; 0 = no limit */
  PetscInt  save_freq;                      /* write the model to save_ckpt every save_freq steps (0 = never) */
  char      save_ckpt[PETSC_MAX_PATH_LEN];
  char      lcurve[PETSC_MAX_PATH_LEN];
  char      sync[64];                       /* the trainer's gradient sync ("" = bucketed) and bucket size (0 = default) */
  PetscInt  sync_bucket_kb;
  SgnnOptimConfig oc;                       /* the trainer's optimizer (Adam by default; lr from start_lr), ZeRO stage and compressor */
  PetscInt  shard;
  char      compress[32];
  PetscInt  cub_sync;                       /* lion_cub: momenta averaged every this many steps (< 0: the trainer's default) */
  PetscInt  sdp_node;                       /* sdp4bit: ranks a node (0: the ranks sharing memory) */
  PetscInt  shard_bucket;                   /* shard 3: bytes of a parameter bucket (0: the whole slab per step) */
  PetscInt  grad_open;                      /* shard 2/3 by buckets: gradient buckets open at once (0: the trainer's default) */
  char      init_model[PETSC_MAX_PATH_LEN]; /* continue from this model file: its weights and statistics */
  PetscBool change_bias;                    /* no training: refit init_model's energy bias on the data */
  char      test_detail[PETSC_MAX_PATH_LEN]; /* prefix of the dp test detail files of the final validation */
  char      restart[PETSC_MAX_PATH_LEN];    /* continue this run from a save_ckpt checkpoint: step, Adam, data position (the
                                               model must already hold the checkpoint's weights) */
} SgDPTrainOpts;
PETSC_INTERN PetscErrorCode SgDPTrain(SgDPModel, const SgDPTrainOpts *, MPI_Comm);
/* dp test: RMSEs of a model on md_frames files (each rank a share of the frames) */
typedef struct {
  PetscInt  nframes, natoms;
  PetscReal e_rmse, e_mae, e_rmse_atom, e_mae_atom, f_rmse, f_mae, v_rmse, v_rmse_atom;
  PetscBool has_virial;
} SgDPTestResult;
/* detail: NULL, or a prefix for DeePMD-kit's dp test -d files (PREFIX.e.out, .e_peratom.out, .f.out,
   .v.out, .v_peratom.out) written by rank 0 in frame order */
PETSC_INTERN PetscErrorCode SgDPTest(SgDPModel, PetscInt nfiles, const char (*files)[PETSC_MAX_PATH_LEN], PetscInt maxframes, const char detail[], MPI_Comm, SgDPTestResult *);
PETSC_INTERN PetscErrorCode SgDPTestPrint(MPI_Comm, const SgDPTestResult *);
/* the detail files' write-path check (sgwrite.h), on every rank of comm before any work */
PETSC_INTERN PetscErrorCode SgDPTestDetailCheck(MPI_Comm, const char prefix[]);
/* dp change-bias: shift the per-type energy bias so the model's energies fit the frames of files */
PETSC_INTERN PetscErrorCode SgDPChangeBias(SgDPModel, PetscInt nfiles, const char (*files)[PETSC_MAX_PATH_LEN], MPI_Comm);
