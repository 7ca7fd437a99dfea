/* Training data of the mffn surrogate: field_snapshots datasets cut into space-time crops, and the
   held-out evaluation (surrogates/mffn; tests use it directly). The data is either held in memory
   (this rank's window of every sample) or read crop by crop from the files (SG_MFFN_READ_CROPS: each
   crop reads one hyperslab per channel, only the part of the crop this rank's slab needs), with the
   same crops, statistics and checks to the bit either way. */
#pragma once
#include "sgmffn.h"
#include "sgdataset.h"

typedef enum { SG_MFFN_READ_AUTO, SG_MFFN_READ_MEMORY, SG_MFFN_READ_CROPS } SgMFFNRead;
PETSC_EXTERN const char *const SgMFFNReads[];
/* auto reads crops when this rank's window of the data would take more memory than this */
#define SG_MFFN_READ_AUTO_BYTES (1024.0 * 1024.0 * 1024.0)

typedef struct {
  PetscInt   nsamp, nz, nx;         /* samples (all files, in file order = the loader's global ids), grid */
  PetscInt   z0, nzw, x0, nxw;      /* the window of the (z, x) grid this rank's crops touch: all of it, or a spatial rank's */
  double    *f[SG_MFFN_NCH];        /* in memory: [nsamp][nzw][nxw] physical p, b, u, w; NULL when reading crops */
  PetscInt   nruns;                 /* member runs: consecutive samples of one member of one file */
  PetscInt  *run_start, *run_len;   /* [nruns] */
  PetscInt  *run_of;                /* [nsamp] */
  PetscReal  dt;                    /* snapshot spacing, the same in every run */
  PetscReal  mean[SG_MFFN_NCH], std[SG_MFFN_NCH];
  /* reading crops: the open files, the first global sample of each (file_start[nfiles] = nsamp),
     and a buffer of one crop's hyperslabs */
  PetscBool  crops;
  PetscInt   nfiles, *file_start;
  SgDataset *ds;
  double    *buf;
  size_t     nbuf;
} SgMFFNData;

/* Reads p, b, u, w, time, member of every file (each rank reads all: the crops need whole member
   runs), checks them (same grid, uniform spacing, finite values, runs at least crop_t long) and
   computes the per-channel mean and standard deviation. Errors name the file. */
PETSC_EXTERN PetscErrorCode SgMFFNDataLoad(MPI_Comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, SgMFFNData *);
/* The same for a spatial rank of crops partitioned by part (crop, factor: the crops it will cut): it
   reads only the window of the (z, x) grid that its slab of any crop and the query points it owns can
   touch (one hyperslab per field and file); the statistics are those of the whole data, exactly (the
   same bits as a serial load). Collective over comm. part NULL: SgMFFNDataLoad. read: memory holds
   the window; crops keeps the files open and reads each crop when it is cut (the checks and the
   statistics stream through the window sample by sample); auto chooses crops above
   SG_MFFN_READ_AUTO_BYTES of window. */
PETSC_EXTERN PetscErrorCode SgMFFNDataLoadPart(MPI_Comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, const SgMFFNPart *part, const PetscInt crop[3], const PetscInt factor[3], SgMFFNRead read, SgMFFNData *);
PETSC_EXTERN PetscErrorCode SgMFFNDataFree(SgMFFNData *);

/* One crop for global sample id and step: a deterministic function of (seed, step, id), so the
   same on any number of ranks and after a restart. The crop's first snapshot is the sample's own
   position in its run modulo the number of valid starts; its spatial offset and the P query points
   (high-res grid points inside the hull of the low-res grid) are drawn from Philox.
   lowres: [4][crop/factor] normalised; pts [P][3] latent index units; target [P][4] normalised. */
PETSC_EXTERN PetscErrorCode SgMFFNDataCrop(const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, double *lowres, double *pts, double *target);
/* The same crop on a spatial rank: lowres is its slab of the low-res crop ([4][slab] C order), and of
   the P query points (the same draws) the *Pown it owns (SgMFFNPartOwns), in order, with targets.
   grad (NULL: not wanted; only on an unpartitioned crop, whose hull the differences stay inside):
   [Pown][SG_MFFN_NGRAD] the high-res gradients u_z, u_x, w_z, w_x, b_z, b_x at the points, normalised
   and per latent index step (finite differences of the high-res grid), the targets of
   -mffn_grad_weight, -mffn_grad_energy_weight and -mffn_thermal_energy_weight. */
PETSC_EXTERN PetscErrorCode SgMFFNDataCropPart(const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, const SgMFFNPart *part, double *lowres, PetscInt *Pown, double *pts, double *target, double *grad);

/* Held-out evaluation: ncrops crops of D (ids spread evenly, crop draws from step -1), P points each.
   Per channel (p, b, u, w), for the model and for trilinear interpolation of the low-res crop:
   NMAE = mean |pred - truth| / (max - min of the truth over all points) and R^2 = 1 - SS_res/SS_tot
   (physical units), and the mean |residual| of each PDE (b, x-mom, z-mom, continuity) at the points. */
typedef struct {
  PetscReal nmae[2][SG_MFFN_NCH], r2[2][SG_MFFN_NCH], pde[2][4]; /* [0] model, [1] trilinear */
  PetscInt  ncrops, npoints;
} SgMFFNEval;
/* One evaluation crop: the model's answers (out[0]) and trilinear interpolation (out[1]) at its P points, [P, 4] (eval.c) */
PETSC_EXTERN PetscErrorCode SgMFFNCropAnswers(SgMFFN, const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, int64_t id, PetscBool grad, double *low, double *pts, double *tgt, SgnnTensor *pt, SgnnTensor out[2]);
PETSC_EXTERN PetscErrorCode SgMFFNEvaluate(SgMFFN, const SgMFFNPhysics *, const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt ncrops, PetscInt P, uint64_t seed, SgMFFNEval *);

/* The least-squares gain of a residual model's learned correction on ncrops crops (ids spread over D as
   SgMFFNEvaluate spreads them) x P points: gain[g] = sum r.t / sum r.r over the points' channels of group g
   (p, b, and u with w), r = decoded - trilinear, t = truth - trilinear (calibrate.c). */
#define SG_MFFN_NGAIN 3
PETSC_EXTERN PetscErrorCode SgMFFNCorrectionGain(SgMFFN, const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt ncrops, PetscInt P, uint64_t seed, PetscReal gain[SG_MFFN_NGAIN]);
/* Folds the gains into ImNet's last layer: the model then decodes trilinear + gain * correction. */
PETSC_EXTERN PetscErrorCode SgMFFNScaleCorrection(SgMFFN, const PetscReal gain[SG_MFFN_NGAIN]);

/* How the surrogate's crops are cut over the spatial ranks (split.c; deck keys split_axes,
   split_layout, split_counts of the mffn section). */
#define SG_MFFN_MAXSPLIT 64
typedef struct {
  PetscInt naxes, axes[2];              /* 2, 3, 4 = t, z, x of [1, C, T, Z, X]; default z */
  PetscInt layout[2];                   /* spatial ranks along each of two axes (0: the most even) */
  PetscInt ncounts, counts[SG_MFFN_MAXSPLIT]; /* low-res planes of each slab (0 entries: as even as possible) */
} SgMFFNSplitSpec;
PETSC_EXTERN PetscErrorCode SgMFFNSplitOptions(PetscOptionItems *, SgMFFNSplitSpec *);
/* This rank's part of every crop of low-res size lo (pooling products mult) on the spatial ranks of g:
   collective; a split that cannot work (layout, counts, slabs not multiples of the poolings) is
   refused on every rank with one line naming the options. */
PETSC_EXTERN PetscErrorCode SgMFFNPartCreate(SgparGrid, const SgMFFNSplitSpec *, const PetscInt lo[3], const PetscInt mult[3], SgMFFNPart *);
