/* MeshfreeFlowNet (Jiang, Esmaeilzadeh et al., SC20): continuous space-time super-resolution of
   Rayleigh-Benard fields with a PDE loss, on surge's NN engine (docs/mffn.md).

     low-res crop [1, 4, T, Z, X] (p, b, u, w normalised)
       -> encoder: 3-D U-Net of bottleneck residual blocks -> latent grid [1, latent, T, Z, X]
       -> decoder (ImNet): per query point, the 8 surrounding latent vertices each give
          (relative coordinate, latent code) to an MLP whose input is re-fed to every layer;
          the 8 outputs are blended with trilinear weights -> [P, 4] (normalised p, b, u, w)

   Query points are in latent index units (t, z, x): point (1.5, 0, 2) lies halfway between the
   low-res time levels 1 and 2, on z level 0 and x column 2. Derivatives with respect to them come
   from the engine's double backward (SgMFFNDerivatives); SgMFFNResidual turns them into the
   residuals of the Boussinesq equations in the solver's free-fall units. */
#pragma once
#include <petscsys.h>
#include "sgnn.h"
#include "sgfield.h"
#include "sgpar.h"

#define SG_MFFN_MAXLEVELS 6
#define SG_MFFN_MAXMLP    8
#define SG_MFFN_NCH       4 /* p, b, u, w: the order of the solver's fields and of every channel axis */
#define SG_MFFN_NGRAD     6 /* gradient targets per query point: u_z, u_x, w_z, w_x, b_z, b_x */
#define SG_MFFN_NGW       5 /* loss terms beyond the paper's (SgMFFNCropLossPart's grad_weight): velocity-gradient l1,
                               velocity energy, buoyancy energy, heat flux, vorticity energy */

typedef struct {
  PetscInt in_channels;                  /* 4 */
  PetscInt nlevels;                      /* number of poolings (4 in the paper) */
  PetscInt channels[SG_MFFN_MAXLEVELS + 1]; /* level widths, 16 32 64 128 256 in the paper */
  PetscInt pool[SG_MFFN_MAXLEVELS][3];   /* (t, z, x) factors of each pooling */
  PetscInt neck_div;                     /* bottleneck width = max(1, cout / neck_div) */
  PetscInt latent;                       /* 32 */
  PetscInt nmlp;                         /* hidden layers of ImNet */
  PetscInt mlp[SG_MFFN_MAXMLP];          /* 512 256 128 64 32 */
  PetscInt out_channels;                 /* 4 */
  PetscBool batchnorm;                   /* per-crop batch statistics in the residual blocks (the paper's BN); off: BN's scale and shift only */
  PetscBool residual;                    /* decode a correction to trilinear interpolation of the low-res input (not in the paper):
                                            the latent grid carries the input's channels after its own, ImNet sees them at each
                                            corner, and each corner's output is added to them before the blend; the last ImNet
                                            layer starts at zero, so an untrained model is trilinear interpolation */
  PetscBool stream;                      /* decode a stream function psi in place of u and w (not in the paper): ImNet gives
                                            p, b, psi, blended with C1 (cubic smoothstep) weights in z and x, and
                                            u = d psi / dz, w = -d psi / dx by the engine's backward: continuity holds by
                                            construction and the velocity is continuous across latent cells. With
                                            residual, p and b are corrections to the input's, and psi corrects the
                                            input's stream function (least squares on the input's z and x edges, an
                                            extra latent channel ImNet does not see, interpolated by cubic Hermite
                                            with the input's u and w as slopes). Needs the
                                            data's physics (SgMFFNSetPhysics) to convert psi's derivatives to the
                                            normalised u and w */
} SgMFFNConfig;

typedef struct {
  SgnnTensor w1, g1, b1, w2, g2, b2, w3, g3, b3, ws, bs; /* 1^3, 3^3, 1^3 convs + BN; 1^3 shortcut */
} SgMFFNResBlock;

typedef struct _n_SgMFFN *SgMFFN;
struct _n_SgMFFN {
  SgMFFNConfig   cfg;
  SgnnBackend   *be;
  SgnnDType      dt;
  SgnnParams     P;
  SgnnTensor     in_w, in_b, out_w, out_b;
  SgMFFNResBlock down[SG_MFFN_MAXLEVELS], up[SG_MFFN_MAXLEVELS];
  SgnnTensor     mlp_w[SG_MFFN_MAXMLP + 1], mlp_b[SG_MFFN_MAXMLP + 1];
  PetscReal      extrapolate; /* SgMFFNDecode accepts points this many latent cells outside the grid (0: none) */
  PetscBool      vel_set;     /* stream models: vel holds u_hat = vel[0] psi_l_z + vel[2], w_hat = vel[1] psi_l_x + vel[3] */
  PetscReal      vel[4];
};

/* The paper's architecture. */
PETSC_EXTERN PetscErrorCode SgMFFNConfigDefault(SgMFFNConfig *);
/* Refuses (PETSC_ERR_USER_INPUT, naming the option) a configuration that cannot be built. */
PETSC_EXTERN PetscErrorCode SgMFFNConfigCheck(MPI_Comm, const SgMFFNConfig *);
/* Channels of the latent grid SgMFFNEncode returns: latent, plus in_channels with residual, plus the
   input's stream function with residual and stream. */
PETSC_EXTERN PetscInt SgMFFNLatentChannels(const SgMFFNConfig *);
/* The smallest low-res grid (t, z, x) the encoder accepts: the product of the pool factors. */
PETSC_EXTERN PetscErrorCode SgMFFNConfigGridMultiple(const SgMFFNConfig *, PetscInt mult[3]);
PETSC_EXTERN PetscErrorCode SgMFFNCreate(const SgMFFNConfig *, SgnnBackend *, SgnnDType, SgMFFN *);
/* He-normal convolution and linear weights, unit BN scales, zero biases; from a Philox seed */
PETSC_EXTERN PetscErrorCode SgMFFNInitWeights(SgMFFN, unsigned long long seed);
PETSC_EXTERN PetscErrorCode SgMFFNDestroy(SgMFFN *);

/* x [1, in_channels, T, Z, X] -> latent [1, SgMFFNLatentChannels, T, Z, X]. Batch normalisation uses the statistics
   of this one crop (training and inference alike), so a result never depends on how a batch is split
   over ranks; where a level's grid is a single point it applies only BN's scale and shift (no
   statistics exist). T, Z, X must be multiples of SgMFFNConfigGridMultiple. */
PETSC_EXTERN PetscErrorCode SgMFFNEncode(SgMFFN, SgnnTensor x, SgnnTensor *latent);
/* latent [1, L, T, Z, X] (each of T, Z, X >= 2), pts [P, 3] in latent index units inside the grid
   (or up to m->extrapolate cells outside it: the edge cell's blend extrapolates)
   -> out [P, out_channels]: differentiable with respect to the weights, the latent grid and pts (a
   stream model's u and w are first derivatives of psi: differentiating them again goes one order
   deeper through the decoder, which the engine does to any order). */
PETSC_EXTERN PetscErrorCode SgMFFNDecode(SgMFFN, SgnnTensor latent, SgnnTensor pts, SgnnTensor *out);

/* ---- spatially partitioned crops (issue 18, docs/parallel.md) ------------------------------------
   A crop cut over the spatial ranks of a process grid (surrogates/parallel): grid NULL, or a grid with
   one spatial rank, is the whole crop (the serial code). split: the low-res crop's slabs along one or
   two of the axes 2, 3, 4 (t, z, x of [1, C, T, Z, X]); every slab along an axis must be a multiple of
   the product of that axis's pooling factors (pooling stays local), and at least 1 plane. */
typedef struct {
  SgparGrid  grid;
  SgparSplit split;
} SgMFFNPart;

/* The encoder on this rank's slab x [1, in_channels, t, z, x] of the crop -> its slab of the latent
   grid (same split). Collective over the spatial group: halo exchanges in the 3^3 convolutions, batch
   statistics reduced over the whole crop; backward likewise. Equal to SgMFFNEncode on the whole crop
   to round-off (tests/unit/mffn/test_mffn_spatial.c). */
PETSC_EXTERN PetscErrorCode SgMFFNEncodePart(SgMFFN, const SgMFFNPart *, SgnnTensor x, SgnnTensor *latent);

/* Owner-local decoding (no gather): a query point belongs to the rank whose latent slab holds the
   lower vertex of its cell (along every split axis), and that rank evaluates it from its slab plus the
   one vertex plane above it. */
typedef struct {
  SgnnTensor t;         /* [1, L, ...]: the slab with the plane above it along each split axis */
  int        origin[3]; /* global latent index of its first vertex (t, z, x) */
  int        gdims[3];  /* the whole latent grid */
} SgMFFNLatentBlock;
/* collective over the spatial group (the upper plane comes from the neighbour, and its gradient goes
   back in backward): every spatial rank must create its block, whether it owns points or not */
PETSC_EXTERN PetscErrorCode SgMFFNLatentBlockCreate(SgMFFN, const SgMFFNPart *, SgnnTensor latent, SgMFFNLatentBlock *);
PETSC_EXTERN void           SgMFFNLatentBlockFree(SgMFFNLatentBlock *);
/* pts [P >= 1, 3] (global latent index units), all owned by this rank -> out [P, out_channels] */
PETSC_EXTERN PetscErrorCode SgMFFNDecodeBlock(SgMFFN, const SgMFFNLatentBlock *, SgnnTensor pts, SgnnTensor *out);
PETSC_EXTERN PetscBool      SgMFFNPartOwns(const SgMFFNPart *, const double pt[3]);

/* Physical set-up of a crop: free-fall units of physics/boussinesq. */
typedef struct {
  PetscReal nu, kappa;          /* (Ra/Pr)^-1/2, (Ra Pr)^-1/2 */
  PetscReal scale[3];           /* physical length of one latent index step in t, z, x (factor x spacing) */
  PetscReal mean[SG_MFFN_NCH], std[SG_MFFN_NCH]; /* physical = mean + std * normalised */
  PetscReal length[2];          /* the box of the data, Lx Lz (0: not recorded, a model written before it was) */
} SgMFFNPhysics;

/* A stream-function model (cfg.stream) decodes normalised u and w from psi's derivatives in latent
   index units, so it needs the latent steps and the normalisation of its data: set once after
   SgMFFNCreate (SgMFFNLoad does it from the file); a no-op for the other models. */
PETSC_EXTERN PetscErrorCode SgMFFNSetPhysics(SgMFFN, const SgMFFNPhysics *);

/* Physical fields and their derivatives at P points: val[c] [P, 1]; d1[c][k] [P, 1] for k = t, z, x;
   d2[c][k] [P, 1] for k = zz, xx (c = b, u, w; p's entries are NULL). */
typedef struct {
  SgnnTensor val[SG_MFFN_NCH], d1[SG_MFFN_NCH][3], d2[SG_MFFN_NCH][2];
} SgMFFNJet;

/* out [P, 4] (normalised) computed from the leaf pts [P, 3] (latent index units, requires grad) ->
   the physical jet, by first and second derivatives through the engine's double backward; every
   tensor is on the tape (create_graph), so a loss on it trains the model. */
PETSC_EXTERN PetscErrorCode SgMFFNDerivatives(const SgMFFNPhysics *, SgnnTensor out, SgnnTensor pts, SgMFFNJet *);
PETSC_EXTERN void           SgMFFNJetFree(SgMFFNJet *);
/* The residuals [P, 4] of b transport, x- and z-momentum and continuity:
     b_t + u b_x + w b_z - kappa (b_xx + b_zz)
     u_t + u u_x + w u_z + p_x - nu (u_xx + u_zz)
     w_t + u w_x + w w_z + p_z - b - nu (w_xx + w_zz)
     u_x + w_z */
PETSC_EXTERN PetscErrorCode SgMFFNResidual(const SgMFFNPhysics *, const SgMFFNJet *, SgnnTensor *res);
/* The same with column e multiplied by weight[e] (NULL: all 1): the loss's weight per equation */
PETSC_EXTERN PetscErrorCode SgMFFNResidualWeighted(const SgMFFNPhysics *, const SgMFFNJet *, const PetscReal weight[4], SgnnTensor *res);
/* acc[e] += sum over the P points of |residual e| of the decoded out(pts) (pts a leaf requiring grad) */
PETSC_EXTERN PetscErrorCode SgMFFNResidualSums(const SgMFFNPhysics *, SgnnTensor out, SgnnTensor pts, PetscInt P, double acc[4]);

/* MeshfreeFlowNet's loss on one crop: mean |out - target| over the P x 4 normalised values at the
   query points + gamma * mean |weight[e] residual_e| over the P x 4 physical PDE residuals
   (SgMFFNResidualWeighted; weight NULL: the paper's, all 1). lowres [1, 4, T, Z, X] normalised;
   pts [P, 3] latent index units; target [P, 4] normalised. reg and pde receive the two means (for
   monitoring; loss = reg + gamma pde). */
PETSC_EXTERN PetscErrorCode SgMFFNCropLoss(SgMFFN, const SgMFFNPhysics *, SgnnTensor lowres, PetscInt P, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], SgnnTensor *loss, PetscReal *reg, PetscReal *pde);
/* The same on a partitioned crop: lowres is this rank's slab, pts/target the Pown of the crop's P query
   points this rank owns (SgMFFNPartOwns; Pown may be 0). The loss, reg and pde are this rank's shares:
   sums over its points divided by the crop's P x 4, so they add up over the spatial group to the
   crop's values. Collective over the spatial group, forward and backward.
   grad_weight (NULL: none) adds grad_weight[0] * mean |d out / d l - grad| over the Pown x 4 velocity
   gradients (u_z, u_x, w_z, w_x, normalised per latent index step: SgMFFNDataCropPart's grad
   [Pown][SG_MFFN_NGRAD]), grad_weight[1] * |mean (d out / d l)^2 - mean grad^2| over the same (the
   crop's viscous dissipation), grad_weight[2] * the same over b_z, b_x (its thermal
   dissipation), grad_weight[3] * |mean w b - mean w* b*| / (std_w std_b) (its convective heat
   flux) and grad_weight[4] * |mean om^2 - mean om*^2| (the vorticity om = u_z - w_x, scaled by
   h / (2 sqrt(std_u std_w)), h = sqrt(scale_z scale_x): the crop's enstrophy, which a
   divergence-free projection of the answer leaves unchanged); gterm (NULL: not wanted) receives
   those SG_MFFN_NGW, as reg and pde theirs. They need an unpartitioned crop (Pown = P). */
PETSC_EXTERN PetscErrorCode SgMFFNCropLossPart(SgMFFN, const SgMFFNPhysics *, const SgMFFNPart *, SgnnTensor lowres, PetscInt P, PetscInt Pown, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], const double grad[], const PetscReal grad_weight[SG_MFFN_NGW], SgnnTensor *loss, PetscReal *reg, PetscReal *pde, PetscReal gterm[SG_MFFN_NGW]);

/* The SgSurrogate op serving field.superres (superres.c): inference on a whole domain, the PDE
   residual as uncertainty. */
typedef struct _p_SgSurrogate *SgSurrogate;
/* The divergence-free projection of a velocity on a grid periodic in x (nx points, period Lx) and
   uniform in z (nz rows hz apart): (u, w) <- (D psi, -d_x psi) for the least-squares psi, Fourier in
   x, fourth-order differences D in z (project.c). u, w, div: [nt][nz][nx]. Divergence: d_x u + D w,
   the operator the projection zeroes. */
typedef struct _p_SgMFFNProjector *SgMFFNProjector;
PETSC_EXTERN PetscErrorCode SgMFFNProjectorCreate(PetscInt nz, PetscInt nx, PetscReal hz, PetscReal Lx, SgMFFNProjector *);
PETSC_EXTERN PetscErrorCode SgMFFNProjectorApply(SgMFFNProjector, PetscInt nt, PetscReal *u, PetscReal *w);
PETSC_EXTERN PetscErrorCode SgMFFNProjectorDivergence(SgMFFNProjector, PetscInt nt, const PetscReal *u, const PetscReal *w, PetscReal *div);
PETSC_EXTERN PetscErrorCode SgMFFNProjectorDestroy(SgMFFNProjector *);
PETSC_EXTERN PetscErrorCode SgMFFNSuperresProvider(SgSurrogate, const SgFieldProviderInfo *, SgFieldSuperresProvider *);

/* Model file (HDF5, written to PATH.tmp and renamed): the configuration, the physics of the data it
   was trained on (nu, kappa, latent-step scales, normalisation), the subsampling factors (t, z, x)
   and the weight slab. Load creates the model on backend be in float64. */
PETSC_EXTERN PetscErrorCode SgMFFNSave(SgMFFN, const SgMFFNPhysics *, const PetscInt factor[3], const char path[]);
PETSC_EXTERN PetscErrorCode SgMFFNLoad(const char path[], SgnnBackend *be, SgMFFN *, SgMFFNPhysics *, PetscInt factor[3]);
