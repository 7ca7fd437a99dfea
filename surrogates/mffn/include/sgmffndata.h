/* Training data of the mffn surrogate: field_snapshots datasets held in memory, cut into
   space-time crops, and the held-out evaluation (surrogates/mffn; tests use it directly). */
#pragma once
#include "sgmffn.h"

typedef struct {
  PetscInt   nsamp, nz, nx;         /* samples (all files, in file order = the loader's global ids), grid */
  double    *f[SG_MFFN_NCH];        /* [nsamp][nz][nx] physical p, b, u, w */
  PetscInt   nruns;                 /* member runs: consecutive samples of one member of one file */
  PetscInt  *run_start, *run_len;   /* [nruns] */
  PetscInt  *run_of;                /* [nsamp] */
  PetscReal  dt;                    /* snapshot spacing, the same in every run */
  PetscReal  mean[SG_MFFN_NCH], std[SG_MFFN_NCH];
} SgMFFNData;

/* Reads p, b, u, w, time, member of every file (each rank reads all: the crops need whole member
   runs), checks them (same grid, uniform spacing, finite values, runs at least crop_t long) and
   computes the per-channel mean and standard deviation. Errors name the file. */
PETSC_EXTERN PetscErrorCode SgMFFNDataLoad(MPI_Comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, SgMFFNData *);
PETSC_EXTERN PetscErrorCode SgMFFNDataFree(SgMFFNData *);

/* One crop for global sample id and step: a deterministic function of (seed, step, id), so the
   same on any number of ranks and after a restart. The crop's first snapshot is the sample's own
   position in its run modulo the number of valid starts; its spatial offset and the P query points
   (high-res grid points inside the hull of the low-res grid) are drawn from Philox.
   lowres: [4][crop/factor] normalised; pts [P][3] latent index units; target [P][4] normalised. */
PETSC_EXTERN PetscErrorCode SgMFFNDataCrop(const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, double *lowres, double *pts, double *target);

/* Held-out evaluation: ncrops crops of D (ids spread evenly, crop draws from step -1), P points each.
   Per channel (p, b, u, w), for the model and for trilinear interpolation of the low-res crop:
   NMAE = mean |pred - truth| / (max - min of the truth over all points) and R^2 = 1 - SS_res/SS_tot
   (physical units), and the mean |residual| of each PDE (b, x-mom, z-mom, continuity) at the points. */
typedef struct {
  PetscReal nmae[2][SG_MFFN_NCH], r2[2][SG_MFFN_NCH], pde[2][4]; /* [0] model, [1] trilinear */
  PetscInt  ncrops, npoints;
} SgMFFNEval;
PETSC_EXTERN PetscErrorCode SgMFFNEvaluate(SgMFFN, const SgMFFNPhysics *, const SgMFFNData *, const PetscInt crop[3], const PetscInt factor[3], PetscInt ncrops, PetscInt P, uint64_t seed, SgMFFNEval *);
