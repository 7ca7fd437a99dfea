/* Private definitions of the Deep Potential (DeepPot-SE, se_e2_a) surrogate.

   Model (Zhang et al., NeurIPS 2018; DeePMD-kit's se_e2_a descriptor and ener fitting):
     s(r)   = sw(r)/r,  sw C^2: 1 for r<rs, u^3(-6u^2+15u-10)+1 with u=(r-rs)/(rc-rs), 0 for r>=rc
     R_ij   = s(r_ij) [1, x_ij/r_ij, y_ij/r_ij, z_ij/r_ij],  r_ij = x_j - x_i  (neighbour minus centre)
              rows grouped in per-type sections of length sel[t] (nearest first, zero rows padded)
     Rn_ij  = (R_ij - davg[c]) / dstd[c]   (c = centre type; DeePMD-kit statistics, padding included)
     G_ij   = N_t(Rn_ij[0])  embedding net of the NEIGHBOUR type t (residual doubling), M outputs;
              with type_one_side false one net per (centre, neighbour) type pair, N_ct (DeePMD-kit's
              default): twice the embedding weights for water at the same cost per neighbour
     T_i    = (1/nnei) sum_j G_ij^T Rn_ij   [M x 4];  D_i = T_i T_i<^T  [M x M2] (M2 = axis_neuron)
     E_i    = F_c(D_i) + bias[c]            fitting net of the CENTRE type c (residual timestep)
     E      = sum_i E_i;  F = -dE/dx;  virial = -sum_ij r_ij (x) dE/dr_ij
   Units: whatever the data use (metal: Angstrom, eV, eV/Angstrom). */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"
#include "sgnn.h"
#include "sgh5file.h"

#define SG_DP_MAXT 8  /* atom types */
#define SG_DP_MAXL 8  /* layers per net */
#define SG_DP_MAXE (SG_DP_MAXT * SG_DP_MAXT) /* embedding nets: one per type pair at most */

typedef struct {
  PetscInt  ntypes;
  char      type_map[SG_DP_MAXT][16];
  PetscReal rcut, rcut_smth;
  PetscInt  sel[SG_DP_MAXT], sec[SG_DP_MAXT + 1], nnei;
  PetscInt  nemb, emb[SG_DP_MAXL]; /* embedding widths (M = emb[nemb-1]) */
  PetscInt  axis;                  /* axis_neuron M2 */
  PetscInt  nfit, fit[SG_DP_MAXL]; /* fitting hidden widths */
  PetscBool emb_resnet_dt;         /* timestep on the embedding residuals (DeePMD default false) */
  PetscBool fit_resnet_dt;         /* timestep on the fitting residuals (DeePMD default true) */
  PetscBool type_pair;             /* embedding nets per (centre, neighbour) type pair: DeePMD-kit's
                                      type_one_side false; PETSC_FALSE: per neighbour type only */
  PetscInt  seed;
  PetscInt  precision;             /* 64 (default) or 32: the training graph's floats (DeePMD-kit's precision) */
  /* DeePMD-kit model features surge evaluates and trains (activations; exclusions with se_e2_a) */
  PetscInt  act, fit_act;          /* activation of the embedding and of the fitting nets: SgDPAct */
  PetscBool radial;                /* se_e2_r (DeePMD-kit's se_r): D_i = (1/(5 nnei)) sum_j G(Rn_ij[0]), an
                                      M-vector (DeePMD-kit's 1/5 scale) */
  PetscBool excl[SG_DP_MAXT][SG_DP_MAXT]; /* excluded (centre, neighbour) type pairs (symmetric):
                                      their neighbours contribute a zero row (DeePMD-kit exclude_types) */
} SgDPConfig;

/* DeePMD-kit's activation functions (deepmd/dpmodel/utils/network.py: get_activation_fn); gelu is its
   tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
typedef enum { SG_DP_TANH, SG_DP_GELU, SG_DP_RELU, SG_DP_SOFTPLUS, SG_DP_SIGMOID, SG_DP_LINEAR, SG_DP_NACT } SgDPAct;
PETSC_INTERN const char *const SgDPActNames[];
/* value a and derivatives d1, d2 of the activation at z */
PETSC_INTERN void SgDPActivate(PetscInt fn, PetscReal z, PetscReal *a, PetscReal *d1, PetscReal *d2);
/* width of the descriptor the fitting nets read */
static inline PetscInt SgDPDescDim(const SgDPConfig *c) { return c->radial ? c->emb[c->nemb - 1] : c->emb[c->nemb - 1] * c->axis; }
static inline PetscBool SgDPHasExclusions(const SgDPConfig *c)
{
  for (PetscInt a = 0; a < c->ntypes; a++)
    for (PetscInt b = 0; b < c->ntypes; b++)
      if (c->excl[a][b]) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* embedding nets of a configuration, and the one that embeds neighbours of type t of a centre of type ct */
static inline PetscInt SgDPNumEmbed(const SgDPConfig *c) { return c->type_pair ? c->ntypes * c->ntypes : c->ntypes; }
static inline PetscInt SgDPEmbedIndex(const SgDPConfig *c, PetscInt ct, PetscInt t) { return c->type_pair ? ct * c->ntypes + t : t; }

/* One dense layer in torch layout: W [out,in], b [out], optional idt [out]; res: 0 none, 1 x+h, 2 [x,x]+h */
typedef struct {
  PetscInt         in, out, res;
  const PetscReal *W, *b, *idt;
  PetscBool        act; /* activated (the fitting's output layer is linear) */
  PetscInt         fn;  /* SgDPAct */
} SgDPLayer;

typedef struct {
  PetscInt  nl;
  SgDPLayer l[SG_DP_MAXL + 1];
} SgDPNet;

/* Tabulated embedding (the "compressed" model): per embedding net, quintic pieces on a uniform
   grid in x = Rn[0]: G_m(x) = sum_k c[i][m][k] t^k, t = (x - x0 - i h) */
typedef struct {
  PetscBool  on;
  PetscReal  step, rmin; /* as asked for (SgDeepmdCompress): stored in a model file, the table is rebuilt on load */
  PetscReal  x0, h;
  PetscInt   n;       /* intervals */
  PetscReal *c[SG_DP_MAXE]; /* [n][M][6] per embedding net */
} SgDPTable;

typedef struct _SgDPModel {
  SgDPConfig   cfg;
  SgnnBackend *be;
  SgnnParams   P;
  /* sgnn views (training graph) */
  SgnnTensor   eW[SG_DP_MAXE][SG_DP_MAXL], eb[SG_DP_MAXE][SG_DP_MAXL], eidt[SG_DP_MAXE][SG_DP_MAXL];
  SgnnTensor   fW[SG_DP_MAXT][SG_DP_MAXL + 1], fb[SG_DP_MAXT][SG_DP_MAXL + 1], fidt[SG_DP_MAXT][SG_DP_MAXL + 1];
  /* host copies for the hand-written inference (refreshed by SgDPModelSync) */
  PetscReal   *host;
  SgDPNet      enet[SG_DP_MAXE], fnet[SG_DP_MAXT];
  PetscReal    davg[SG_DP_MAXT][4], dstd[SG_DP_MAXT][4], bias[SG_DP_MAXT];
  PetscReal   *sdavg, *sdstd; /* per-slot statistics [ntypes][nnei][4] (an imported DeePMD-kit model
                                 whose slots differ), else NULL: davg/dstd per centre type */
  SgDPTable    tab;
  /* what inference met beyond sel since the model was loaded (this process): neighbours dropped,
     and the most neighbours of each type seen around one atom (an MD run reports them) */
  PetscInt64   sel_dropped;
  PetscInt     sel_maxseen[SG_DP_MAXT];
} *SgDPModel;

/* dtype of the training graph; model files and the hand-written inference are always double */
static inline SgnnDType SgDPDType(const struct _SgDPModel *m) { return m->cfg.precision == 32 ? SGNN_F32 : SGNN_F64; }

#define SgNN(call) \
  do { \
    int _e = (call); \
    PetscCheck(!_e, PETSC_COMM_SELF, PETSC_ERR_LIB, "NN engine: %s", sgnn_last_error()); \
  } while (0)

/* ---- environment (envmat.c) ---- */
/* Neighbour data of n centres among nall atoms (open boundaries: images are explicit atoms).
   nlist[i*nnei+s]: atom index or -1; rij: x_j - x_i; env: raw rows R; denv: dR/dr_ij [4][3]. */
typedef struct {
  PetscInt   n, nall, nnei, cap;
  PetscInt  *nlist;
  PetscReal *rij, *env, *denv;
  PetscInt   overflow; /* neighbours dropped because a section was full (max over centres) */
  PetscInt   dropped;  /* neighbours dropped, summed over centres and sections */
  PetscInt   maxcnt[SG_DP_MAXT]; /* most neighbours of each type within rcut around one centre */
} SgDPEnv;
PETSC_INTERN PetscErrorCode SgDPEnvBuild(const SgDPConfig *, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, SgDPEnv *);
/* nboff/nbr (may be NULL: cell lists): a given neighbour list in CSR form over the atoms (envmat.c) */
PETSC_INTERN PetscErrorCode SgDPEnvBuildRange(const SgDPConfig *, PetscInt c0, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, const PetscInt *nboff, const PetscInt *nbr, SgDPEnv *);
PETSC_INTERN PetscErrorCode SgDPEnvFree(SgDPEnv *);
/* Periodic images of a box within rcut: x_all = wrapped atoms then ghosts; map[k] = original atom. */
PETSC_INTERN PetscErrorCode SgDPImages(PetscInt n, const PetscReal *x, const PetscInt *type, const PetscReal box[9], PetscReal rcut, PetscInt *nall, PetscReal **xall, PetscInt **tall, PetscInt **map);
PETSC_INTERN void SgDPSwitch(PetscReal r, PetscReal rs, PetscReal rc, PetscReal *sw, PetscReal *dsw);

/* ---- model (model.c) ---- */
PETSC_INTERN PetscErrorCode SgDPModelCreate(const SgDPConfig *, SgDPModel *);
PETSC_INTERN PetscErrorCode SgDPModelSetPrecision(SgDPModel *, PetscInt bits);
PETSC_INTERN PetscErrorCode SgDPModelInitWeights(SgDPModel, unsigned long long seed);
PETSC_INTERN PetscErrorCode SgDPModelSync(SgDPModel); /* sgnn slab -> host nets */
PETSC_INTERN PetscErrorCode SgDPModelDestroy(SgDPModel *);
PETSC_INTERN PetscErrorCode SgDPModelSave(SgDPModel, const char path[]);
PETSC_INTERN PetscErrorCode SgDPModelLoad(const char path[], SgDPModel *);
/* A model command's output through the write path, before anything is read (interop.c): the inputs
   registered, out checked for kind (sgwrite.h); collective */
PETSC_INTERN PetscErrorCode SgDPCheckOutput(MPI_Comm, PetscInt nin, const char *const in[], const char out[], const char kind[]);
/* What a training checkpoint holds besides the model, so that `restart` continues the run exactly
   (DeePMD-kit's `dp train --restart`): the step, Adam's step counter, and the number of ranks (the data
   stream depends on it). Adam's moments (/training/adam_m, adam_v) are written and read by the trainer
   (SgTrainerWriteMoments: by blocks when the optimizer is sharded). */
typedef struct {
  long      step;       /* training steps done = global batches consumed */
  long      optim_step; /* Adam's step counter (its bias corrections) */
  PetscInt  ranks;
  long      frames;     /* training frames of the run and its systems (-1: not recorded, older files): */
  PetscInt  systems;    /*   a restart on other data continues the schedule but not the data order */
  char      *options;   /* the training's options (SgConfigList, data and budget left out): a restart
                           with others is refused; NULL: not recorded (older files). Read: PetscFree */
} SgDPTrainState;
/* A checkpoint: the model file with its /training group, left open (*f) for the trainer to add Adam's
   moments; committed by SgH5FileClose (PATH.tmp renamed), or SgH5FileDiscard. Nothing is left behind
   on failure (*f NULL). */
PETSC_INTERN PetscErrorCode SgDPModelCheckpointCreate(SgDPModel, const char path[], const SgDPTrainState *, SgH5File *f);
/* the attributes of the /training group of a checkpoint (not the moments) */
PETSC_INTERN PetscErrorCode SgDPTrainStateRead(const char path[], SgDPTrainState *);
PETSC_INTERN PetscErrorCode SgDPConfigFinish(SgDPConfig *);

/* ---- inference (infer.c): energy of centres 0..n-1, forces on all nall atoms, virial ---- */
PETSC_INTERN PetscErrorCode SgDPEvalOpen(SgDPModel, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, PetscReal *energy, PetscReal *f, PetscReal virial[9], PetscReal *eatom);
PETSC_INTERN PetscErrorCode SgDPEvalOpenAtomic(SgDPModel, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, const PetscInt *nboff, const PetscInt *nbr, PetscReal *energy, PetscReal *f, PetscReal virial[9], PetscReal *eatom, PetscReal *avir);
/* embedding net value (and derivatives to order `order`) at npt inputs: G [npt][M] ... */
PETSC_INTERN void SgDPEmbedEval(const SgDPNet *, PetscInt npt, const PetscReal *x, PetscInt order, PetscReal *G, PetscReal *dG, PetscReal *d2G, PetscReal *work);

/* ---- training graph (graph.c) ---- */
typedef struct {
  PetscInt   B, N;       /* frames, atoms per frame */
  PetscInt  *type;       /* [N] */
  PetscReal *envn;       /* [B*N*nnei*4] normalised rows */
  PetscReal *denvn;      /* [B*N*nnei*4*3] their derivatives */
  PetscReal *rij;        /* [B*N*nnei*3] */
  long      *jidx;       /* [B*N*nnei] batch-global owner atom index of each neighbour (self for padding) */
  PetscInt  *nreal;      /* [B*N*ntypes] real neighbours of each atom per type: the first slots of its section */
  PetscInt   chunk;      /* atoms per block of the embedding graph (0: about 2 MiB of its widest layer) */
} SgDPBatch;
PETSC_INTERN PetscErrorCode SgDPBatchAlloc(const SgDPConfig *, PetscInt B, PetscInt N, SgDPBatch *);
PETSC_INTERN PetscErrorCode SgDPBatchFree(SgDPBatch *);
/* Fill frame b of the batch from coordinates (periodic box or NULL). */
PETSC_INTERN PetscErrorCode SgDPBatchSetFrame(SgDPModel, SgDPBatch *, PetscInt b, const PetscReal *x, const PetscReal *box);
/* Energies [B], forces [B*N,3], virials [B,9] as sgnn tensors; create_graph for training. */
PETSC_INTERN PetscErrorCode SgDPGraph(SgDPModel, SgDPBatch *, PetscBool want_virial, int create_graph, SgnnTensor *E, SgnnTensor *F, SgnnTensor *V);
