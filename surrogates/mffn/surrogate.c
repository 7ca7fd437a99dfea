/* SgSurrogate type "mffn": MeshfreeFlowNet trained on Rayleigh-Benard field_snapshots with SgTrainer
   (docs/mffn.md). Deck section `mffn:` (options -mffn_*). Defaults are the paper's (Jiang,
   Esmaeilzadeh et al., SC20): high-res crops 16 x 128 x 128 (t, z, x) subsampled 4 x 8 x 8, 512
   query points per crop, gamma 0.0125, Ra 1e6, Pr 1 on a 4 x 1 box. Under MPI the ranks form the
   trainer's process grid (data_groups x spatial_ranks): each crop of a data group is cut over its
   spatial ranks (split.c, docs/parallel.md). */
#include "sgmffndata.h"
#include "sgsurrogateimpl.h"
#include "sgtrainer.h"
#include "sgnnbackend.h"
#include <math.h>

typedef struct {
  SgMFFNConfig  cfg;
  char          files[16][PETSC_MAX_PATH_LEN], valid[16][PETSC_MAX_PATH_LEN];
  PetscInt      nfiles, nvalid, valid_crops, valid_points, calibrate_crops;
  PetscReal     rayleigh, prandtl, length[2], gamma, pde_weight[4], grad_weight[SG_MFFN_NGW], lr, decay_rate, max_time;
  PetscInt      crop[3], factor[3], npoints, seed, numb_steps, batch, disp_freq, decay_steps, save_freq, sync_kb;
  char          save_ckpt[PETSC_MAX_PATH_LEN], restart[PETSC_MAX_PATH_LEN], lcurve[PETSC_MAX_PATH_LEN], sync[32];
  SgnnBackend  *be;
  SgMFFN        model;
  SgMFFNPhysics ph;
  SgMFFNData    data;
  PetscReal     first[3], last[3]; /* monitored means of the first and last progress lines */
  SgTrainerPlateau plateau; /* the trainer's plateau decay and gradient clipping (off by default) */
  PetscReal        clip;
  SgnnOptimConfig  oc;           /* -mffn_optimizer and its hyper-parameters (the rate is start_lr) */
  PetscInt         shard;        /* -mffn_shard: ZeRO stage */
  char             compress[32]; /* -mffn_compress */
  PetscInt         cub_sync;     /* -mffn_lion_cub_sync */
  PetscInt         sdp_node;     /* -mffn_sdp4bit_node_ranks */
  PetscInt         shard_bucket; /* -mffn_shard_bucket_bytes (stage 3 by buckets, zero3b.c) */
  PetscInt         grad_open;    /* -mffn_shard_grad_open_buckets (gradient buckets open at once, zerograd.c) */
  PetscBool     have_first;
  PetscInt        dgroups, sranks; /* process grid */
  PetscInt        read;            /* SgMFFNRead: the data in memory or read crop by crop */
  SgMFFNSplitSpec split;           /* how a crop is cut over the spatial ranks */
  SgMFFNPart      part;            /* this rank's part of a crop (grid: the trainer's, while it trains) */
} SgSurrogate_MFFN;

/* whether the terms beyond the paper's are on: the crops then carry gradient targets, and the
   learning curve SG_MFFN_NGW more columns (l1_grad, energy_grad, energy_b, flux_wb, enstrophy)
   before the crop count */
static PetscBool GradTerms(const SgSurrogate_MFFN *d)
{
  for (int i = 0; i < SG_MFFN_NGW; i++)
    if (d->grad_weight[i] > 0) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* a list of up to 16 input file names (catalogued as input paths) */
static PetscErrorCode FileList(PetscOptionItems *PetscOptionsObject, const char opt[], const char help[], char files[16][PETSC_MAX_PATH_LEN], PetscInt *nfiles)
{
  char     *strs[16];
  PetscInt  n = 16;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(SgOptionsPathArray(opt, help, SG_PATH_IN, strs, &n, &set));
  *nfiles = set ? n : 0;
  for (PetscInt i = 0; i < *nfiles; i++) {
    PetscCall(PetscStrncpy(files[i], strs[i], PETSC_MAX_PATH_LEN));
    PetscCall(PetscFree(strs[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetFromOptions_MFFN(SgSurrogate s, PetscOptionItems *PetscOptionsObject)
{
  SgSurrogate_MFFN *d = (SgSurrogate_MFFN *)s->data;
  SgMFFNConfig     *c = &d->cfg;
  PetscInt          n, iv[3 * SG_MFFN_MAXLEVELS];
  PetscBool         set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "MeshfreeFlowNet (deck section mffn:)");
  PetscCall(FileList(PetscOptionsObject, "-data", "Training field_snapshots datasets with p, b, u, w, time, member (surge ensemble of the boussinesq solver)", d->files, &d->nfiles));
  PetscCall(SgOptionsEList("-data_read", "How the training data is read: memory (each rank holds its window of every sample), crops (the files stay open and every crop reads its hyperslabs: data larger than memory), auto (crops when the window would exceed 1 GiB)", SgMFFNReads, 3, SgMFFNReads[d->read], &d->read, NULL));
  PetscCall(FileList(PetscOptionsObject, "-valid_data", "Held-out field_snapshots datasets: after training, the model and trilinear interpolation are compared with the truth on them", d->valid, &d->nvalid));
  PetscCall(SgOptionsInt("-valid_crops", "Crops of valid_data evaluated (sample ids spread evenly)", d->valid_crops, &d->valid_crops, NULL, 1, 1 << 20));
  PetscCall(SgOptionsInt("-valid_points", "Query points per evaluated crop", d->valid_points, &d->valid_points, NULL, 1, 1 << 24));
  PetscCall(SgOptionsInt("-calibrate_crops", "After training, fit the gain of the learned correction by least squares on this many training crops (valid_points points each; one gain for p, one for b, one for u and w) and fold it into ImNet's last layer: the model then decodes trilinear + gain * correction. Residual models; not in the paper (0: off)", d->calibrate_crops, &d->calibrate_crops, NULL, 0, 1 << 20));
  PetscCall(SgOptionsReal("-rayleigh", "Rayleigh number of the data (nu = (Ra/Pr)^-1/2, kappa = (Ra Pr)^-1/2 in the PDE loss)", "", d->rayleigh, &d->rayleigh, NULL, 1, 1e15));
  PetscCall(SgOptionsReal("-prandtl", "Prandtl number of the data", "", d->prandtl, &d->prandtl, NULL, 1e-6, 1e6));
  n = 2;
  PetscCall(SgOptionsRealArray("-length", "Box of the data: Lx Lz (the grid spacing is L / points)", "free-fall lengths", d->length, &n, &set, 1e-12, 1e12));
  PetscCheck(!set || n == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_length takes 2 values (Lx, Lz), got %" PetscInt_FMT, n);
  n = 3;
  PetscCall(SgOptionsIntArray("-crop", "High-res crop: snapshots, z points, x points", d->crop, &n, &set, 1, 1 << 20));
  PetscCheck(!set || n == 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_crop takes 3 values (t, z, x), got %" PetscInt_FMT, n);
  n = 3;
  PetscCall(SgOptionsIntArray("-factor", "Subsampling of the crop to the low-res input: t, z, x", d->factor, &n, &set, 1, 1 << 20));
  PetscCheck(!set || n == 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_factor takes 3 values (t, z, x), got %" PetscInt_FMT, n);
  PetscCall(SgOptionsInt("-points", "Query points per crop", d->npoints, &d->npoints, NULL, 1, 1 << 24));
  PetscCall(SgOptionsReal("-gamma", "Weight of the L1 PDE residual in the loss (0: regression only)", "", d->gamma, &d->gamma, NULL, 0, 1e6));
  n = 4;
  PetscCall(SgOptionsRealArray("-pde_weights", "Relative weight of each residual in the PDE term: b transport, x-momentum, z-momentum, continuity (the paper's: 1 1 1 1)", "", d->pde_weight, &n, &set, 0, 1e6));
  PetscCheck(!set || n == 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_pde_weights takes 4 values (b transport, x-momentum, z-momentum, continuity), got %" PetscInt_FMT, n);
  PetscCall(SgOptionsReal("-grad_weight", "Weight of the L1 misfit of the velocity gradients u_z, u_x, w_z, w_x (normalised, per latent step; finite differences of the high-res crop) in the loss: a Sobolev term, not in the paper (0: off)", "", d->grad_weight[0], &d->grad_weight[0], NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-grad_energy_weight", "Weight of |mean square of the decoded velocity gradients - the truth's| per crop (the crop's viscous dissipation, normalised) in the loss: not in the paper (0: off)", "", d->grad_weight[1], &d->grad_weight[1], NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-thermal_energy_weight", "Weight of |mean square of the decoded buoyancy gradients - the truth's| per crop (the crop's thermal dissipation, normalised) in the loss: not in the paper (0: off)", "", d->grad_weight[2], &d->grad_weight[2], NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-heat_flux_weight", "Weight of |mean of the decoded w b - the truth's| / (std_w std_b) per crop (the crop's convective heat flux, Nu's <w b>) in the loss: not in the paper (0: off)", "", d->grad_weight[3], &d->grad_weight[3], NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-vorticity_energy_weight", "Weight of |mean square of the decoded vorticity u_z - w_x - the truth's| per crop (the crop's enstrophy, normalised; unchanged by -mffn_project, which the velocity energy is not) in the loss: not in the paper (0: off)", "", d->grad_weight[4], &d->grad_weight[4], NULL, 0, 1e6));
  n = SG_MFFN_MAXLEVELS + 1;
  PetscCall(SgOptionsIntArray("-channels", "U-Net widths, one per level (levels - 1 poolings)", c->channels, &n, &set, 1, 4096));
  if (set) c->nlevels = n - 1;
  n = 3 * SG_MFFN_MAXLEVELS;
  PetscCall(SgOptionsIntArray("-pool", "Pooling factors t z x of each level, flattened (3 per pooling)", iv, &n, &set, 1, 64));
  if (set) {
    PetscCheck(n == 3 * c->nlevels, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_pool has %" PetscInt_FMT " values; %" PetscInt_FMT " poolings need %" PetscInt_FMT " (t z x each)", n, c->nlevels, 3 * c->nlevels);
    for (PetscInt i = 0; i < n; i++) c->pool[i / 3][i % 3] = iv[i];
  }
  PetscCall(SgOptionsInt("-neck_div", "Bottleneck width of a residual block = output width / neck_div", c->neck_div, &c->neck_div, NULL, 1, 4096));
  PetscCall(SgOptionsBool("-batchnorm", "Normalise the residual blocks by each crop's batch statistics (the paper's BN); false: BN's learned scale and shift only", c->batchnorm, &c->batchnorm, NULL));
  PetscCall(SgOptionsInt("-latent", "Channels of the latent grid", c->latent, &c->latent, NULL, 1, 4096));
  PetscCall(SgOptionsBool("-residual", "Decode a correction to trilinear interpolation of the low-res input (ImNet also sees the input at each corner; an untrained model is trilinear interpolation). Not in the paper", c->residual, &c->residual, NULL));
  PetscCall(SgOptionsBool("-stream_function", "Decode a stream function psi in place of u and w: u = dpsi/dz, w = -dpsi/dx (divergence-free by construction), psi blended with C1 smoothstep weights in z and x (with -mffn_residual psi corrects the input's stream function: least squares on the input's edges, interpolated by cubic Hermite with the input's u, w as slopes). Not in the paper; costs one more derivative order in training", c->stream, &c->stream, NULL));
  n = SG_MFFN_MAXMLP;
  PetscCall(SgOptionsIntArray("-imnet", "ImNet hidden widths", c->mlp, &n, &set, 1, 8192));
  if (set) c->nmlp = n;
  PetscCall(SgOptionsInt("-seed", "Seed of the weights, the data order and the crops", d->seed, &d->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-numb_steps", "Training steps", d->numb_steps, &d->numb_steps, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-batch_size", "Crops per global batch", d->batch, &d->batch, NULL, 1, 1 << 20));
  PetscCall(SgOptionsReal("-start_lr", "Learning rate at step 0 (of -mffn_optimizer, Adam by default)", "", d->lr, &d->lr, NULL, 0, 10));
  PetscCall(SgOptionsReal("-decay_rate", "Learning rate factor per decay_steps (exponential schedule)", "", d->decay_rate, &d->decay_rate, NULL, 1e-12, 1));
  PetscCall(SgOptionsInt("-decay_steps", "Steps per decay_rate", d->decay_steps, &d->decay_steps, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-disp_freq", "Steps between progress lines", d->disp_freq, &d->disp_freq, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-max_time", "Stop training after this wall time (0 = no limit)", "s", d->max_time, &d->max_time, NULL, 0, 1e9));
  PetscCall(SgOptionsInt("-save_freq", "Checkpoint to save_ckpt every this many steps (0 = only at a max_time stop)", d->save_freq, &d->save_freq, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsPath("-save_ckpt", "Training checkpoint file (weights, Adam state, step)", SG_PATH_OUT, d->save_ckpt, d->save_ckpt, sizeof d->save_ckpt, NULL));
  PetscCall(SgOptionsPath("-restart", "Continue the run from this checkpoint (same deck and ranks)", SG_PATH_RESUME, d->restart, d->restart, sizeof d->restart, NULL));
  PetscCall(SgOptionsPath("-lcurve", "Learning-curve file written by rank 0 (empty = none)", SG_PATH_OUT, d->lcurve, d->lcurve, sizeof d->lcurve, NULL));
  PetscCall(SgTrainerOptionsSync(PetscOptionsObject, d->sync, sizeof d->sync, &d->sync_kb)); /* -mffn_sync, -mffn_sync_bucket_kb */
  PetscCall(SgTrainerOptionsGrid(PetscOptionsObject, &d->dgroups, &d->sranks));              /* -mffn_data_groups, -mffn_spatial_ranks */
  PetscCall(SgMFFNSplitOptions(PetscOptionsObject, &d->split));                              /* -mffn_split_axes, _layout, _counts */
  PetscCall(SgTrainerOptionsPlateau(PetscOptionsObject, &d->plateau, &d->clip));             /* -mffn_plateau_*, -mffn_clip_norm */
  PetscCall(SgTrainerOptionsOptimizer(PetscOptionsObject, &d->oc, &d->shard, d->compress, sizeof d->compress, &d->cub_sync)); /* -mffn_optimizer, _lion_beta*, _shard, _compress */
  PetscCall(SgTrainerOptionsSdp4bit(PetscOptionsObject, &d->sdp_node));
  PetscCall(SgTrainerOptionsShardBucket(PetscOptionsObject, &d->shard_bucket)); /* -mffn_shard_bucket_bytes */
  PetscCall(SgTrainerOptionsShardGradOpen(PetscOptionsObject, &d->grad_open)); /* -mffn_shard_grad_open_buckets */
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything the deck decides, checked before any data is read or file written. */
static PetscErrorCode CheckOptions(SgSurrogate s)
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  PetscInt          mult[3];
  const char       *ax[3] = {"t", "z", "x"};

  PetscFunctionBegin;
  PetscCall(SgMFFNConfigCheck(comm, &d->cfg));
  PetscCall(SgMFFNConfigGridMultiple(&d->cfg, mult));
  for (int k = 0; k < 3; k++) {
    PetscInt lo = d->crop[k] / d->factor[k];
    PetscCheck(d->crop[k] % d->factor[k] == 0, comm, PETSC_ERR_USER_INPUT, "mffn: crop %" PetscInt_FMT " in %s is not a multiple of factor %" PetscInt_FMT ": set -mffn_crop to a multiple", d->crop[k], ax[k], d->factor[k]);
    PetscCheck(lo >= 2, comm, PETSC_ERR_USER_INPUT, "mffn: the low-res crop has %" PetscInt_FMT " point(s) in %s (crop %" PetscInt_FMT " / factor %" PetscInt_FMT "); it needs >= 2 to interpolate", lo, ax[k], d->crop[k], d->factor[k]);
    PetscCheck(lo % mult[k] == 0, comm, PETSC_ERR_USER_INPUT, "mffn: the low-res crop's %" PetscInt_FMT " points in %s are not a multiple of the poolings' %" PetscInt_FMT ": change -mffn_crop or -mffn_pool", lo, ax[k], mult[k]);
  }
  { /* query points are drawn (with repeats) from the crop's high-res grid points inside the low-res
       hull (data.c): far more than the grid holds is a mistake, and its buffers would be allocated */
    PetscReal hull = 1;
    for (int k = 0; k < 3; k++) hull *= (PetscReal)(d->factor[k] * (d->crop[k] / d->factor[k] - 1) + 1);
    PetscCheck(d->npoints <= hull, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_points %" PetscInt_FMT " query points per crop, but a crop %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (factor %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ") has %.0f distinct high-res points to draw from: give at most %.0f", d->npoints, d->crop[0], d->crop[1], d->crop[2], d->factor[0], d->factor[1], d->factor[2], (double)hull, (double)hull);
  }
  PetscCall(SgTrainerCheckProcessGrid(comm, "mffn_", d->dgroups, d->sranks, &d->dgroups));
  PetscCheck(!(d->cfg.stream && d->cfg.residual) || d->sranks == 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_stream_function with -mffn_residual on -mffn_spatial_ranks %" PetscInt_FMT " is not implemented (the input's stream function is a least-squares solve over the whole crop): train it on data groups only (-mffn_spatial_ranks 1), or without -mffn_residual", d->sranks);
  PetscCheck(!GradTerms(d) || d->sranks == 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_grad_weight, -mffn_grad_energy_weight, -mffn_thermal_energy_weight, -mffn_heat_flux_weight or -mffn_vorticity_energy_weight with -mffn_spatial_ranks %" PetscInt_FMT " is not implemented (the gradient targets need the high-res neighbours of points on a slab's edge): train it on data groups only (-mffn_spatial_ranks 1)", d->sranks);
  PetscCheck(!d->calibrate_crops || (d->cfg.residual && !d->cfg.stream), comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_calibrate_crops %" PetscInt_FMT " scales the correction of a residual model: set -mffn_residual 1 (and -mffn_stream_function 0), or -mffn_calibrate_crops 0", d->calibrate_crops);
  PetscCheck(!d->calibrate_crops || d->sranks == 1, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_calibrate_crops with -mffn_spatial_ranks %" PetscInt_FMT " is not implemented (the gain is fitted on whole crops, and a spatial rank holds only its window of the data): calibrate on data groups only (-mffn_spatial_ranks 1)", d->sranks);
  PetscCheck(d->nfiles > 0, comm, PETSC_ERR_USER_INPUT, "mffn: no training data: set mffn: {data: [rb.h5]} (field_snapshots from surge ensemble, e.g. inputs/boussinesq/ensemble_small.yaml)");
  PetscCheck(!d->save_freq || d->save_ckpt[0], comm, PETSC_ERR_USER_INPUT, "mffn: save_freq %" PetscInt_FMT " needs a file: set mffn: {save_ckpt: mffn_ckpt.h5}", d->save_freq);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The held-out data (-mffn_valid_data), read and checked as the loader checks every dataset (kind,
   fields, shapes, NaN/Inf), and on the training data's grid and dt. SetUp reads it once before the
   first training step (then frees it: a bad file is refused before hours of training, not after),
   Validate again after training. */
static PetscErrorCode LoadValid(SgSurrogate s, SgMFFNData *V)
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  const char       *files[16];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < d->nvalid; i++) files[i] = d->valid[i];
  PetscCall(SgMFFNDataLoad(comm, d->nvalid, files, d->crop[0], V));
  PetscCheck(V->nz == d->data.nz && V->nx == d->data.nx && PetscAbsReal(V->dt - d->data.dt) <= 1e-9 * d->data.dt, comm, PETSC_ERR_USER_INPUT, "mffn: valid_data is %" PetscInt_FMT " x %" PetscInt_FMT " with dt %g; the training data is %" PetscInt_FMT " x %" PetscInt_FMT " with dt %g: evaluate on data of the same grid", V->nz, V->nx, (double)V->dt, d->data.nz, d->data.nx, (double)d->data.dt);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUp_MFFN(SgSurrogate s)
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  const char       *files[16];

  PetscFunctionBegin;
  PetscCall(SgNNBackendFromOptions(comm, &d->be));
  if (d->model) PetscFunctionReturn(PETSC_SUCCESS); /* loaded */
  PetscCall(CheckOptions(s));
  for (PetscInt i = 0; i < d->nfiles; i++) files[i] = d->files[i];
  { /* this rank's part of the crops (the same the trainer's grid gives): it reads only its window */
    SgparGrid  g;
    SgMFFNPart part;
    PetscInt   lo[3], mult[3];
    for (int k = 0; k < 3; k++) lo[k] = d->crop[k] / d->factor[k];
    PetscCall(SgMFFNConfigGridMultiple(&d->cfg, mult));
    PetscCheck(!sgpar_grid_create(comm, (int)d->dgroups, (int)d->sranks, &g), comm, PETSC_ERR_LIB, "mffn: %s", sgpar_last_error());
    PetscCall(SgMFFNPartCreate(g, &d->split, lo, mult, &part));
    PetscCall(SgMFFNDataLoadPart(comm, d->nfiles, files, d->crop[0], &part, d->crop, d->factor, (SgMFFNRead)d->read, &d->data));
    if (d->data.crops) PetscCall(PetscPrintf(comm, "mffn: reading the data crop by crop from the files (-mffn_data_read %s; the window of %" PetscInt_FMT " samples would take %.2f GiB per rank)\n", SgMFFNReads[d->read], d->data.nsamp, SG_MFFN_NCH * 8.0 * d->data.nsamp * d->data.nzw * d->data.nxw / (1024.0 * 1024.0 * 1024.0)));
    if (d->sranks > 1 && sgpar_grid_data_group(g) == 0) /* what each spatial rank holds (the same in every group) */
      PetscCall(PetscSynchronizedPrintf(comm, "mffn: spatial rank %d of %d reads z [%" PetscInt_FMT ", %" PetscInt_FMT ") x x [%" PetscInt_FMT ", %" PetscInt_FMT ") of the %" PetscInt_FMT " x %" PetscInt_FMT " grid (%.0f%%)\n", sgpar_grid_spatial_rank(g), (int)d->sranks, d->data.z0, d->data.z0 + d->data.nzw, d->data.x0, d->data.x0 + d->data.nxw, d->data.nz, d->data.nx, 100.0 * d->data.nzw * d->data.nxw / ((double)d->data.nz * d->data.nx)));
    PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
    sgpar_grid_destroy(&g);
  }
  if (d->nvalid) { /* the held-out data, checked before the first step */
    SgMFFNData V;
    PetscCall(LoadValid(s, &V));
    PetscCall(SgMFFNDataFree(&V));
  }
  d->ph.nu       = 1 / PetscSqrtReal(d->rayleigh / d->prandtl);
  d->ph.kappa    = 1 / PetscSqrtReal(d->rayleigh * d->prandtl);
  d->ph.length[0] = d->length[0];
  d->ph.length[1] = d->length[1];
  d->ph.scale[0] = d->factor[0] * d->data.dt;
  d->ph.scale[1] = d->factor[1] * d->length[1] / d->data.nz;
  d->ph.scale[2] = d->factor[2] * d->length[0] / d->data.nx;
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    d->ph.mean[c] = d->data.mean[c];
    d->ph.std[c] = d->data.std[c];
  }
  PetscCall(SgMFFNCreate(&d->cfg, d->be, SGNN_F64, &d->model));
  PetscCall(SgMFFNSetPhysics(d->model, &d->ph));
  PetscCall(SgMFFNInitWeights(d->model, (unsigned long long)d->seed * 7919ULL + 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sums: L1 regression, L1 PDE residual, loss, crops (per crop means, summed) */
static PetscErrorCode Loss_MFFN(SgTrainer tr, void *ctx, PetscInt stream, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  SgSurrogate_MFFN *d  = (SgSurrogate_MFFN *)ctx;
  PetscInt          lo = (d->crop[0] / d->factor[0]) * (d->crop[1] / d->factor[1]) * (d->crop[2] / d->factor[2]);
  int               ls[5] = {1, SG_MFFN_NCH, (int)(d->crop[0] / d->factor[0]), (int)(d->crop[1] / d->factor[1]), (int)(d->crop[2] / d->factor[2])};
  double           *low, *pts, *tgt, *grad = NULL;
  SgnnTensor        acc = NULL;
  const int         ncnt = GradTerms(d) ? 3 + SG_MFFN_NGW : 3; /* sums[ncnt] counts the crops */

  PetscFunctionBegin;
  if (!d->part.grid) { /* the trainer's grid: this rank's slab of every crop */
    SgparGrid g;
    PetscInt  lc[3], mult[3];
    for (int k = 0; k < 3; k++) lc[k] = d->crop[k] / d->factor[k];
    PetscCall(SgMFFNConfigGridMultiple(&d->cfg, mult));
    PetscCall(SgTrainerGetProcessGrid(tr, &g));
    PetscCall(SgMFFNPartCreate(g, &d->split, lc, mult, &d->part));
  }
  if (sgpar_grid_spatial_size(d->part.grid) > 1)
    for (int k = 0; k < d->part.split.naxes; k++) ls[d->part.split.ax[k].axis] = d->part.split.ax[k].n;
  PetscCall(PetscMalloc3(SG_MFFN_NCH * lo, &low, 3 * d->npoints, &pts, SG_MFFN_NCH * d->npoints, &tgt));
  if (GradTerms(d)) PetscCall(PetscMalloc1(SG_MFFN_NGRAD * d->npoints, &grad));
  for (PetscInt i = 0; i < b->nlocal; i++) {
    SgnnTensor x, l, t;
    PetscReal  reg, pde, gt[SG_MFFN_NGW], v;
    PetscInt   pown;
    PetscCall(SgMFFNDataCropPart(&d->data, d->crop, d->factor, d->npoints, (uint64_t)d->seed, info->step, b->ids[i], &d->part, low, &pown, pts, tgt, grad));
    SgCallNN(sgnn_tensor_from_f64(d->be, SGNN_F64, 5, ls, low, &x));
    PetscCall(SgMFFNCropLossPart(d->model, &d->ph, &d->part, x, d->npoints, pown, pts, tgt, d->gamma, d->pde_weight, grad, d->grad_weight, &l, &reg, &pde, gt));
    v = reg + d->gamma * pde; /* this rank's shares: summed over the grid they are the crop's */
    for (int k = 0; grad && k < SG_MFFN_NGW; k++) {
      v += d->grad_weight[k] * gt[k];
      sums[3 + k] += gt[k];
    }
    sums[0] += reg;
    sums[1] += pde;
    sums[2] += v;
    sums[ncnt] += sgpar_grid_spatial_rank(d->part.grid) == 0;
    if (acc) {
      SgCallNN(sgnn_add(acc, l, &t));
      sgnn_tensor_free(&acc), sgnn_tensor_free(&l);
      acc = t;
    } else acc = l;
    sgnn_tensor_free(&x);
  }
  *loss = acc;
  PetscCall(PetscFree3(low, pts, tgt));
  PetscCall(PetscFree(grad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Monitor_MFFN(SgTrainer tr, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[])
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)ctx;
  const int         ncnt = GradTerms(d) ? 3 + SG_MFFN_NGW : 3; /* the crop count's slot (Loss_MFFN) */

  PetscFunctionBegin;
  for (int k = 0; k < ncnt; k++) cols[k] = sums[ncnt] > 0 ? sums[k] / sums[ncnt] : NAN;
  if (!d->have_first) {
    for (int k = 0; k < 3; k++) d->first[k] = cols[k];
    d->have_first = PETSC_TRUE;
  }
  for (int k = 0; k < 3; k++) d->last[k] = cols[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The held-out comparison with trilinear interpolation (eval.c), printed as a table. */
static PetscErrorCode Validate(SgSurrogate s)
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  const char       *ch[4] = {"p", "b", "u", "w"}, *eq[4] = {"b transport", "x-momentum", "z-momentum", "continuity"};
  SgMFFNData        V;
  SgMFFNEval        E;

  PetscFunctionBegin;
  PetscCall(LoadValid(s, &V));
  for (int c = 0; c < SG_MFFN_NCH; c++) V.mean[c] = d->ph.mean[c], V.std[c] = d->ph.std[c]; /* the model's normalisation */
  PetscCall(SgMFFNEvaluate(d->model, &d->ph, &V, d->crop, d->factor, d->valid_crops, d->valid_points, (uint64_t)d->seed, &E));
  PetscCall(SgMFFNDataFree(&V));
  PetscCall(PetscPrintf(comm, "mffn: held-out evaluation on %s%s: %" PetscInt_FMT " crops x %" PetscInt_FMT " points (physical units)\n", d->valid[0], d->nvalid > 1 ? ", ..." : "", E.ncrops, E.npoints));
  PetscCall(PetscPrintf(comm, "mffn:   field   NMAE model  NMAE trilinear   R2 model  R2 trilinear\n"));
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscPrintf(comm, "mffn:   %-5s   %10.4e  %14.4e  %9.5f  %12.5f\n", ch[c], (double)E.nmae[0][c], (double)E.nmae[1][c], (double)E.r2[0][c], (double)E.r2[1][c]));
  PetscCall(PetscPrintf(comm, "mffn:   mean |PDE residual|   model        trilinear\n"));
  for (int e = 0; e < 4; e++) PetscCall(PetscPrintf(comm, "mffn:   %-12s       %10.4e   %10.4e\n", eq[e], (double)E.pde[0][e], (double)E.pde[1][e]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Train_MFFN(SgSurrogate s)
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  const char       *cols[3 + SG_MFFN_NGW] = {"l1_fields", "l1_pde", "loss", "l1_grad", "energy_grad", "energy_b", "flux_wb", "enstrophy"}, *fields[1] = {"time"}, *files[16];
  SgTrainerOps      ops = {Loss_MFFN, NULL, Monitor_MFFN, NULL};
  SgnnOptimConfig   oc;
  SgnnLRSchedule    sc = {0};
  SgTrainer         tr;
  PetscMPIInt       size;
  long              np;
  PetscErrorCode    ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  for (PetscInt i = 0; i < d->nfiles; i++) files[i] = d->files[i];
  SgCallNN(sgnn_params_count(d->model->P, &np));
  PetscCall(PetscPrintf(comm, "mffn: %" PetscInt_FMT " snapshots (%" PetscInt_FMT " member runs) of %" PetscInt_FMT " x %" PetscInt_FMT " (z, x), dt %g; crops %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " -> %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " points; %ld weights; nu %g kappa %g; %d rank(s) = %" PetscInt_FMT " data group(s) x %" PetscInt_FMT " spatial rank(s)\n", d->data.nsamp, d->data.nruns, d->data.nz, d->data.nx, (double)d->data.dt, d->crop[0], d->crop[1], d->crop[2], d->crop[0] / d->factor[0], d->crop[1] / d->factor[1], d->crop[2] / d->factor[2], d->npoints, np, (double)d->ph.nu, (double)d->ph.kappa, size, d->dgroups, d->sranks));
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "mffn"));
  PetscCall(SgTrainerSetModel(tr, d->model->P));
  PetscCall(SgTrainerSetOps(tr, &ops, d));
  if (GradTerms(d)) PetscCall(SgTrainerSetMetrics(tr, 4 + SG_MFFN_NGW, 3 + SG_MFFN_NGW, cols, "# step l1_fields l1_pde loss l1_grad energy_grad energy_b flux_wb enstrophy lr wall_s"));
  else PetscCall(SgTrainerSetMetrics(tr, 4, 3, cols, "# step l1_fields l1_pde loss lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 1, fields));
  PetscCall(SgTrainerAddStream(tr, d->nfiles, files, d->data.nsamp, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, d->batch));
  PetscCall(SgTrainerSetSeed(tr, (uint64_t)d->seed));
  PetscCall(SgTrainerSetNumSteps(tr, d->numb_steps));
  oc    = d->oc;
  oc.lr = d->lr;
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetShard(tr, d->shard, d->compress, d->cub_sync));
  PetscCall(SgTrainerSetSdp4bit(tr, d->sdp_node));
  PetscCall(SgTrainerSetShardBucket(tr, d->shard_bucket));
  PetscCall(SgTrainerSetShardGradOpen(tr, d->grad_open));
  PetscCall(SgTrainerSetOptionsPrefix(tr, "mffn_")); /* its refusals name -mffn_shard etc. */
  sc.kind = SGNN_LR_EXP;
  sc.lr0 = d->lr;
  sc.decay_rate = d->decay_rate;
  sc.decay_steps = d->decay_steps;
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, d->disp_freq));
  PetscCall(SgTrainerSetLCurve(tr, d->lcurve));
  PetscCall(SgTrainerSetCheckpoint(tr, d->save_ckpt, d->save_freq));
  PetscCall(SgTrainerSetRestart(tr, d->restart));
  PetscCall(SgTrainerSetMaxTime(tr, d->max_time));
  PetscCall(SgTrainerSetStopOnSignal(tr, PETSC_TRUE)); /* a batch system's signal: checkpoint and stop */
  PetscCall(SgTrainerSetSyncType(tr, d->sync, d->sync_kb * 1024));
  PetscCall(SgTrainerSetProcessGrid(tr, d->dgroups, d->sranks));
  PetscCall(SgTrainerSetPlateau(tr, &d->plateau));
  PetscCall(SgTrainerSetClipNorm(tr, d->clip));
  ierr = SgTrainerTrain(tr);
  PetscCall(SgTrainerDestroy(&tr));
  d->part.grid = NULL; /* went with the trainer */
  PetscCall(ierr);
  if (SgStopSignalCaught()) PetscFunctionReturn(PETSC_SUCCESS); /* stopped by a signal: the restart calibrates and validates */
  if (d->have_first) PetscCall(PetscPrintf(comm, "mffn: loss %.6g -> %.6g (L1 fields %.6g -> %.6g, L1 PDE %.6g -> %.6g) from the first to the last progress line\n", (double)d->first[2], (double)d->last[2], (double)d->first[0], (double)d->last[0], (double)d->first[1], (double)d->last[1]));
  if (d->calibrate_crops) { /* every rank fits the same gains on the same crops: no communication */
    PetscReal g[SG_MFFN_NGAIN];
    PetscCall(SgMFFNCorrectionGain(d->model, &d->data, d->crop, d->factor, d->calibrate_crops, d->valid_points, (uint64_t)d->seed, g));
    PetscBool ok = PETSC_TRUE;
    for (int k = 0; k < SG_MFFN_NGAIN; k++) ok = ok && g[k] > 0.1; /* a correction that barely points towards the truth is not worth scaling */
    if (ok) {
      PetscCall(SgMFFNScaleCorrection(d->model, g));
      PetscCall(PetscPrintf(comm, "mffn: the correction's gain on %" PetscInt_FMT " training crops x %" PetscInt_FMT " points (least squares, folded into ImNet's last layer): p %.4f, b %.4f, u and w %.4f\n", d->calibrate_crops, d->valid_points, (double)g[0], (double)g[1], (double)g[2]));
    } else PetscCall(PetscPrintf(comm, "mffn: warning: the model is saved uncalibrated: its correction barely predicts the truth on %" PetscInt_FMT " training crops (least-squares gains p %.4f, b %.4f, u and w %.4f; at most 0.1): train longer\n", d->calibrate_crops, (double)g[0], (double)g[1], (double)g[2]));
  }
  if (d->nvalid) PetscCall(Validate(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Save_MFFN(SgSurrogate s, const char path[])
{
  SgSurrogate_MFFN *d    = (SgSurrogate_MFFN *)s->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt       rank;

  PetscFunctionBegin;
  PetscCheck(d->model, comm, PETSC_ERR_ORDER, "mffn: nothing to save: train or load a model first");
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0 writes; its refusal (NaN weights) or failure is every rank's (src/base/agree.c) */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = SgMFFNSave(d->model, &d->ph, d->factor, path);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Load_MFFN(SgSurrogate s, const char path[])
{
  SgSurrogate_MFFN *d = (SgSurrogate_MFFN *)s->data;
  SgnnBackend      *be;

  PetscFunctionBegin;
  PetscCall(SgMFFNDestroy(&d->model));
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNLoad(path, d->be ? d->be : be, &d->model, &d->ph, d->factor));
  d->cfg = d->model->cfg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode View_MFFN(SgSurrogate s, PetscViewer v)
{
  SgSurrogate_MFFN   *d = (SgSurrogate_MFFN *)s->data;
  const SgMFFNConfig *c = &d->cfg;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "MeshfreeFlowNet: U-Net %" PetscInt_FMT " levels (%" PetscInt_FMT " .. %" PetscInt_FMT " channels), latent %" PetscInt_FMT ", ImNet %" PetscInt_FMT " hidden layers (first %" PetscInt_FMT "), factors %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", gamma %g\n", c->nlevels + 1, c->channels[0], c->channels[c->nlevels], c->latent, c->nmlp, c->mlp[0], d->factor[0], d->factor[1], d->factor[2], (double)d->gamma));
  if (d->pde_weight[0] != 1 || d->pde_weight[1] != 1 || d->pde_weight[2] != 1 || d->pde_weight[3] != 1)
    PetscCall(PetscViewerASCIIPrintf(v, "  PDE weights: b %g, x-momentum %g, z-momentum %g, continuity %g\n", (double)d->pde_weight[0], (double)d->pde_weight[1], (double)d->pde_weight[2], (double)d->pde_weight[3]));
  if (GradTerms(d)) PetscCall(PetscViewerASCIIPrintf(v, "  weights beyond the paper's: velocity-gradient l1 %g, velocity energy %g, buoyancy energy %g, heat flux %g, vorticity energy %g\n", (double)d->grad_weight[0], (double)d->grad_weight[1], (double)d->grad_weight[2], (double)d->grad_weight[3], (double)d->grad_weight[4]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy_MFFN(SgSurrogate s)
{
  SgSurrogate_MFFN *d = (SgSurrogate_MFFN *)s->data;

  PetscFunctionBegin;
  PetscCall(SgMFFNDestroy(&d->model));
  PetscCall(SgMFFNDataFree(&d->data));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_MFFN(SgSurrogate s)
{
  SgSurrogate_MFFN *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  PetscCall(SgMFFNConfigDefault(&d->cfg));
  PetscCall(SgTrainerPlateauDefault(&d->plateau));
  sgnn_optim_defaults(SGNN_ADAM, &d->oc);
  PetscCall(PetscStrncpy(d->compress, "none", sizeof d->compress));
  d->cub_sync = -1; /* the trainer's */
  d->grad_open = 3;  /* the trainer's default */
  d->rayleigh = 1e6;
  d->prandtl = 1;
  d->length[0] = 4;
  d->length[1] = 1;
  d->crop[0] = 16;
  d->crop[1] = 128;
  d->crop[2] = 128;
  d->factor[0] = 4;
  d->factor[1] = 8;
  d->factor[2] = 8;
  d->sranks = 1;
  for (int e = 0; e < 4; e++) d->pde_weight[e] = 1;
  d->valid_crops = 16;
  d->valid_points = 1024;
  d->npoints = 512;
  d->gamma = 0.0125;
  d->seed = 1;
  d->numb_steps = 1000;
  d->batch = 8;
  d->lr = 1e-2;
  d->decay_rate = 0.5;
  d->decay_steps = 1000000;
  d->disp_freq = 100;
  s->data                = d;
  s->ops->setfromoptions = SetFromOptions_MFFN;
  s->ops->setup          = SetUp_MFFN;
  s->ops->train          = Train_MFFN;
  s->ops->save           = Save_MFFN;
  s->ops->load           = Load_MFFN;
  s->ops->superresprovider = SgMFFNSuperresProvider; /* superres.c */
  s->ops->view           = View_MFFN;
  s->ops->destroy        = Destroy_MFFN;
  PetscFunctionReturn(PETSC_SUCCESS);
}
