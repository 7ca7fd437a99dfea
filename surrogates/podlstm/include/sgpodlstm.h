/* POD-LSTM with neural architecture search (Maulik, Egele, Lusch, Balaprakash, SC20, "Recurrent neural
   network architecture search for geophysical emulation"), on surge's NN engine (docs/podlstm.md).

     field snapshots x_t --POD (SLEPc)--> coefficients a_t (first K modes) --min-max scaling-->
     window of L steps --stacked LSTM (searched architecture)--> next L steps --> reconstruct x

   Pieces, each its own file:
     pod.c       SgPOD: the POD of distributed snapshots with SLEPc, projection, reconstruction
     data.c      SgPodLstmData: snapshots of a field_snapshots dataset (rows split over ranks), the
                 split into training / validation / test periods, scaling, windows
     arch.c      SgPodLstmArch: the paper's search space, random architectures, mutations, text form
     net.c       SgPodLstmNet: an architecture as a network of the engine (LSTM cells, projections)
     fit.c       training one network through SgTrainer: MSE, Adam, early stopping on validation R^2
     search.c    aging evolution and random search, asynchronous over MPI ranks, HDF5 log, resume
     baselines.c persistence, climatology, vector autoregression; test RMSE of reconstructed fields
     model.c     the model file (POD basis, scaler, top-k networks)
     provider.c  serving the field.advance slot (grids, re-synchronisation, top-k spread)
     surrogate.c the SgSurrogate type "podlstm" */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"
#include "sgfield.h"
#include "sgnn.h"

/* ---------------------------------------------------------------- POD (pod.c) */
typedef struct _n_SgPOD *SgPOD;
struct _n_SgPOD {
  MPI_Comm   comm;
  PetscInt   n, nlocal, rstart, nmodes; /* state length, this rank's rows [rstart, rstart + nlocal) */
  PetscReal *mean;                     /* [nlocal] temporal mean of the snapshots */
  PetscReal *phi;                      /* [nmodes][nlocal] orthonormal modes, this rank's rows */
  PetscReal *sigma;                    /* [nmodes] singular values of the anomaly matrix */
  PetscReal  total;                    /* ||anomalies||_F^2: the energy of mode k is sigma_k^2 / total */
};
PETSC_EXTERN const char *const SgPODSolvers[]; /* cross (method of snapshots), trlanczos, lanczos */
PETSC_EXTERN PetscErrorCode SgPODCreate(MPI_Comm, PetscInt nlocal, PetscInt nmodes, SgPOD *);
/* X: m snapshots, this rank's rows, column-major (snapshot j at X + j nlocal); collective */
PETSC_EXTERN PetscErrorCode SgPODCompute(SgPOD, PetscInt m, const PetscReal X[], const char solver[]);
/* coef[j][k] = phi_k . (x_j - mean), replicated on every rank; collective */
PETSC_EXTERN PetscErrorCode SgPODProject(SgPOD, PetscInt m, const PetscReal X[], PetscReal coef[]);
/* x_j = mean + sum_k coef[j][k] phi_k on this rank's rows */
PETSC_EXTERN PetscErrorCode SgPODReconstruct(SgPOD, PetscInt m, const PetscReal coef[], PetscReal X[]);
PETSC_EXTERN PetscErrorCode SgPODView(SgPOD, const char who[]);
PETSC_EXTERN PetscErrorCode SgPODDestroy(SgPOD *);

/* ---------------------------------------------------------------- data (data.c) */
#define SG_PODLSTM_MAXFIELDS 8
typedef struct {
  MPI_Comm   comm;
  PetscInt   nfields;
  char       field[SG_PODLSTM_MAXFIELDS][64];
  PetscInt   fsize[SG_PODLSTM_MAXFIELDS];  /* values per snapshot of each field */
  PetscInt   fshape[SG_PODLSTM_MAXFIELDS][2];
  PetscReal  fscale[SG_PODLSTM_MAXFIELDS]; /* the state holds value / fscale (1 for a single field) */
  PetscInt   n, nlocal, rstart;            /* the state: fields concatenated, rows split over ranks */
  PetscInt   nsnap, ntrain, nvalid, ntest; /* snapshots kept (after skip) = ntrain + ntest */
  PetscReal *time;                         /* [nsnap] */
  PetscReal  dt;                           /* snapshot spacing */
  PetscReal *X;                            /* [nsnap][nlocal] this rank's rows of every snapshot */
  PetscInt   nactive;                      /* state entries that vary over the training period (not land) */
  PetscBool *active;                       /* [nlocal] */
  PetscInt   nharm;                        /* 2H + 1 with a harmonic climatology (SgPodLstmHarmonicsFit), else 0 */
  PetscReal  year;                         /* its period */
  PetscReal *harm;                         /* [nlocal][nharm]: per entry, the mean and H cos/sin pairs */
  char       physics[1024];                /* the data's physics (physics.c), "" when unknown */
} SgPodLstmData;
/* The climatology of each entry: its mean and H harmonics of the calendar year (period `year`, in the
   data's time units), least squares over the training period. It stays in phase however long the
   test period (a climatology of snapshot-spaced bins of a 365.25-day year drifts: 52 weeks are 364
   days). Used by the climatology baseline, the LIM baselines and the anomaly correlations. */
PETSC_EXTERN PetscErrorCode SgPodLstmHarmonicsFit(SgPodLstmData *, PetscInt H, PetscReal year);
/* the harmonic regressors at time t: h[0] = 1, h[2i-1], h[2i] = cos, sin(2 pi i t / year), i = 1..H */
PETSC_EXTERN void           SgPodLstmHarmonics(const SgPodLstmData *, PetscReal t, PetscReal h[]);
/* Read `member` of the datasets (-1: the first member of the first file), skip its first `skip`
   snapshots, keep ntrain + ntest (ntest 0: all the rest); the last valid_fraction of the training
   period is for validation. Collective: each rank keeps its rows. */
PETSC_EXTERN PetscErrorCode SgPodLstmDataLoad(MPI_Comm, PetscInt nfiles, const char *const files[], PetscInt nfields, const char *const fields[], PetscInt member, PetscInt skip, PetscInt ntrain, PetscInt ntest, PetscReal valid_fraction, PetscReal npy_dt, SgPodLstmData *);
PETSC_EXTERN PetscErrorCode SgPodLstmDataFree(SgPodLstmData *);

/* Scaled coefficient series and their windows: L steps in, the next L out. */
typedef struct {
  PetscInt   K, L, nsnap;
  PetscReal *lo, *hi;  /* [K] min and max of each coefficient over the training period only */
  PetscReal *s;        /* [nsnap][K] scaled coefficients (a - lo) / (hi - lo) */
  PetscReal *a;        /* [nsnap][K] the coefficients themselves */
  PetscReal *fb;       /* residual networks (SgPodLstmSeriesSetBase): [nsnap - 2L + 1][L][K] the base's
                          forecast of every window, scaled like s; NULL otherwise */
  const struct _SgPodLstmVARModel *V; /* that base (not owned) */
  PetscReal *fG, *fg;  /* (SgPodLstmSeriesSetRollout) on an affine base (a VAR): the base as
                          an affine map of a scaled window, fb = fG x + fg, fG [LK][LK]; NULL otherwise */
  struct _SgPodLstmVARModel *Vs; /* (SgPodLstmSeriesSetRollout) on a quadratic base: that base acting on scaled
                          coefficients (SgPodLstmVARScaled), iterated on the tape; NULL otherwise */
  /* window starts: training windows have their targets in [0, ntrain - nvalid), validation windows
     in [ntrain - nvalid, ntrain), test windows in [ntrain, ntrain + ntest) */
  PetscInt   ntr, nva, nte, s_tr0, s_va0, s_te0;
  PetscInt   R;        /* windows of the training targets (SgPodLstmSeriesSetRollout; 1 by default) */
} SgPodLstmSeries;
PETSC_EXTERN PetscErrorCode SgPodLstmSeriesCreate(const SgPodLstmData *, PetscInt K, PetscInt L, const PetscReal coef[], SgPodLstmSeries *);
/* copy window starting at s: x [L][K] = s[s..s+L), y [L][K] = s[s+L..s+2L), less the base's forecast
   of the window when the series has a base (what a residual network learns) */
PETSC_EXTERN void           SgPodLstmSeriesWindow(const SgPodLstmSeries *, PetscInt s, PetscReal x[], PetscReal y[]);
PETSC_EXTERN void           SgPodLstmSeriesUnscale(const SgPodLstmSeries *, PetscInt n, const PetscReal s[], PetscReal a[]);
/* training targets of R windows (the rollout loss): y of a training window holds the next R L steps,
   all in the fitting period, so there are (R - 1) L fewer training windows; with a base the first
   window is the residual on it and the later ones the truth (the loss adds the base, fG fg) */
PETSC_EXTERN PetscErrorCode SgPodLstmSeriesSetRollout(SgPodLstmSeries *, PetscInt R);
/* the training windows as a field_snapshots dataset (fields x [L, K], y [R L, K]) for SgTrainer's loader; rank 0 writes */
PETSC_EXTERN PetscErrorCode SgPodLstmSeriesWriteWindows(MPI_Comm, const SgPodLstmSeries *, const char path[]);
PETSC_EXTERN PetscErrorCode SgPodLstmSeriesFree(SgPodLstmSeries *);

/* ---------------------------------------------------------------- the linear model (baselines.c) */
/* A vector autoregression a_t = c + sum_{j<=p} A_j a_{t-j} of the (unscaled) coefficients: W [1 + pK][K]
   column-major, the constant first. It is the VAR baseline, and the base of a residual POD-LSTM
   (option base: var): its networks learn the scaled difference between the truth and the VAR's
   forecast, start at zero (an untrained network is the VAR) and are kept only when they beat it on
   the validation windows. */
typedef struct _SgPodLstmVARModel {
  PetscInt   p, K;
  PetscInt   nq;    /* 0: a VAR. K(K+1)/2: the quadratic regression (option base: quadratic), whose last nq
                       regressors are the products a_{t-1}[i] a_{t-1}[j], i <= j, in the row-major order
                       of the upper triangle (numpy's triu_indices) */
  PetscReal  ridge; /* the quadratic regression's ridge (relative to the mean diagonal of the normal
                       equations), chosen on validation; the VAR's is 1e-12 */
  PetscReal *W;     /* [1 + pK + nq][K] column-major */
} SgPodLstmVARModel;
/* p in 1..L chosen by the error of the L-step forecasts of the validation windows when fitted on the
   fitting period (the training period less its validation part); then refitted on the whole training
   period (whole: the baseline) or kept as fitted (the base: the validation stays unseen) */
PETSC_EXTERN PetscErrorCode SgPodLstmVARFit(const SgPodLstmData *, const SgPodLstmSeries *, const PetscReal coef[], PetscBool whole, SgPodLstmVARModel *);
/* the next L steps out [L][K] from the last L in [L][K] (lags beyond the inputs are earlier forecasts) */
PETSC_EXTERN void           SgPodLstmVARIterate(const SgPodLstmVARModel *, PetscInt L, const PetscReal in[], PetscReal out[]);
PETSC_EXTERN PetscErrorCode SgPodLstmVARFree(SgPodLstmVARModel *);
/* The quadratic regression a_t = W [1, a_{t-1} .. a_{t-p}, a_{t-1}[i] a_{t-1}[j] (i <= j)] (the KS
   study's nonlinear baseline has p = 2; the base of option base: quadratic), fitted on the fitting
   period with a ridge of lambda times the normal equations' mean diagonal; p in 1..L and lambda in
   1e-6 .. 1 chosen by the error of the L-step forecasts of the validation windows; then refitted on
   the whole training period (whole) or kept. nfree > 0: only the lags and ridges (then 4 per decade)
   whose free run of nfree steps from the validation period's start stays on the fitting period's
   attractor (bounded, not collapsed) are candidates. Refuses (user input) fewer fitting snapshots than
   twice its regressors per coefficient with p = 1, and a free-run check no candidate passes. */
PETSC_EXTERN PetscErrorCode SgPodLstmQuadFit(const SgPodLstmData *, const SgPodLstmSeries *, const PetscReal coef[], PetscBool whole, PetscInt nfree, SgPodLstmVARModel *);
/* Is the free run f [nfree][K] on the attractor of the fitting series a [nfit][K]: every value within
   a's range per mode widened by half its width, every mode's standard deviation over the run's second
   half at least half a's (invariant under the per-mode scaling: scaled or unscaled alike) */
PETSC_EXTERN PetscBool      SgPodLstmFreeRunStays(const PetscReal a[], PetscInt K, PetscInt nfit, const PetscReal f[], PetscInt nfree);
/* the same model acting on scaled coefficients s = (a - lo) / (hi - lo): Vs (allocated) has V's form,
   Vs(s) = scale(V(unscale(s))) exactly (the scaling is affine, the model a polynomial of degree <= 2) */
PETSC_EXTERN PetscErrorCode SgPodLstmVARScaled(const SgPodLstmVARModel *V, const PetscReal lo[], const PetscReal hi[], SgPodLstmVARModel *Vs);
/* make the series' windows residual on the base's forecasts (S->fb); NULL: none */
PETSC_EXTERN PetscErrorCode SgPodLstmSeriesSetBase(SgPodLstmSeries *, const SgPodLstmVARModel *);

/* ---------------------------------------------------------------- architectures (arch.c) */
#define SG_PODLSTM_MAXLAYERS 8
#define SG_PODLSTM_NSKIP     2 /* skip connections into node i may come from nodes i-2 and i-3 */
/* Node 0 is the input; node i (1..nlayers) is layer i applied to node i-1: identity (units 0) or an
   LSTM of `units` returning its whole sequence. Bit b of skip[i] adds a connection from node i-2-b;
   a node with skips is ReLU(its layer's output + sum of linear projections of the skip sources). */
typedef struct {
  PetscInt nlayers;
  PetscInt units[SG_PODLSTM_MAXLAYERS];
  PetscInt skip[SG_PODLSTM_MAXLAYERS];
} SgPodLstmArch;
/* The search space: nlayers layers, each identity or LSTM of umin, umin + ustep, ..., umax units
   (the paper: 5 layers, 16..96 by 16, skips from the previous 2 nodes). */
typedef struct {
  PetscInt nlayers, umin, umax, ustep;
} SgPodLstmSpace;
PETSC_EXTERN PetscErrorCode SgPodLstmArchRandom(const SgPodLstmSpace *, uint64_t seed, uint64_t key, SgPodLstmArch *);
/* one decision of the parent (a layer's operation or a skip bit) changed to another value */
PETSC_EXTERN PetscErrorCode SgPodLstmArchMutate(const SgPodLstmSpace *, const SgPodLstmArch *parent, uint64_t seed, uint64_t key, SgPodLstmArch *);
/* text form, e.g. "L64 I L32+1 I L96+3": L<units> or I per layer, +<skip bits> */
PETSC_EXTERN PetscErrorCode SgPodLstmArchToString(const SgPodLstmArch *, char buf[], size_t len);
PETSC_EXTERN PetscErrorCode SgPodLstmArchFromString(MPI_Comm, const char str[], SgPodLstmArch *);
PETSC_EXTERN PetscErrorCode SgPodLstmArchCheck(MPI_Comm, const SgPodLstmArch *);
PETSC_EXTERN PetscBool      SgPodLstmArchEqual(const SgPodLstmArch *, const SgPodLstmArch *);

/* ---------------------------------------------------------------- network (net.c) */
/* The output head: `step` applies one linear map to every step of the last node (the paper's
   time-distributed dense: output step t sees input steps <= t only); `window` maps the whole last
   node [L, width] to the L x K outputs (every output step sees the whole input window). */
typedef enum { SG_PODLSTM_HEAD_STEP, SG_PODLSTM_HEAD_WINDOW } SgPodLstmHead;
PETSC_EXTERN const char *const SgPodLstmHeads[];
typedef struct _n_SgPodLstmNet *SgPodLstmNet;
struct _n_SgPodLstmNet {
  SgPodLstmArch arch;
  SgPodLstmHead head;
  PetscInt      K, L;                             /* coefficients in and out per step, steps */
  PetscInt      width[SG_PODLSTM_MAXLAYERS + 1];  /* node widths, width[0] = K */
  SgnnBackend  *be;
  SgnnDType     dt;
  SgnnParams    P;
  SgnnTensor    Wih[SG_PODLSTM_MAXLAYERS], Whh[SG_PODLSTM_MAXLAYERS], b[SG_PODLSTM_MAXLAYERS];
  SgnnTensor    proj[SG_PODLSTM_MAXLAYERS][SG_PODLSTM_NSKIP];
  SgnnTensor    Wout, bout;
  SgnnTensor    baseW, baseb; /* during a residual rollout fit: the base as an affine map of the scaled
                                 window (constants, no gradient); NULL otherwise */
  SgnnTensor    baseQW, baseQb; /* or a polynomial base (SgPodLstmVARModel of scaled coefficients, nq > 0)
                                 iterated L steps on the tape: W [K][pK + nq] (the torch layout of
                                 sgnn_linear), b [K]; constants, no gradient; NULL otherwise */
  PetscInt      baseQp, baseQnq; /* its lags and quadratic regressors */
};
PETSC_EXTERN PetscErrorCode SgPodLstmNetCreate(const SgPodLstmArch *, PetscInt K, PetscInt L, SgPodLstmHead, SgnnBackend *, SgnnDType, SgPodLstmNet *);
/* PyTorch's LSTM initialisation (uniform +-1/sqrt(units)) with forget-gate bias 1 (Keras'), Xavier
   for projections and output, zero output bias; from a Philox seed */
PETSC_EXTERN PetscErrorCode SgPodLstmNetInit(SgPodLstmNet, unsigned long long seed);
/* x [B, L, K] -> y [B, L, K], recorded on the tape */
PETSC_EXTERN PetscErrorCode SgPodLstmNetForward(SgPodLstmNet, SgnnTensor x, SgnnTensor *y);
/* The rollout loss, recorded on the tape: the network forecasts the next window from x [B, L, K], then
   R - 1 more from its own forecasts (gradients flow back through every forecast fed in, as in
   backpropagation through time over the windows); loss = sum over the B windows of the mean over the
   R L K outputs of (forecast - y)^2, y [B, R L, K] the truth of the R windows. R = 1: the one-window
   MSE. A residual network (n->baseW set): its first window's y is the residual on the base; each
   forecast fed back (and compared with the later windows' truth) is the network's plus the base's,
   the base's computed from the window fed in (itself a forecast after the first). */
PETSC_EXTERN PetscErrorCode SgPodLstmNetRolloutLoss(SgPodLstmNet, SgnnTensor x, SgnnTensor y, PetscInt R, SgnnTensor *loss);
/* put a polynomial base (a SgPodLstmVARModel of scaled coefficients) on the network for its rollout
   loss (n->baseQW), or take it off (NULL) */
PETSC_EXTERN PetscErrorCode SgPodLstmNetSetPolyBase(SgPodLstmNet, const struct _SgPodLstmVARModel *);
/* host arrays, no tape: x [B][L][K] -> y [B][L][K] */
PETSC_EXTERN PetscErrorCode SgPodLstmNetPredict(SgPodLstmNet, PetscInt B, PetscInt L, const PetscReal x[], PetscReal y[]);
PETSC_EXTERN PetscErrorCode SgPodLstmNetNumParams(SgPodLstmNet, PetscInt *);
PETSC_EXTERN PetscErrorCode SgPodLstmNetDestroy(SgPodLstmNet *);

/* ---------------------------------------------------------------- training (fit.c) */
typedef struct {
  const char      *windows;       /* training windows file (SgPodLstmSeriesWriteWindows) */
  PetscInt         ntrain;        /* its windows */
  PetscInt         nvalid;        /* validation windows, [nvalid][L][K] scaled, in memory */
  const PetscReal *vx, *vy;
  PetscInt         L, K;
  SgPodLstmHead    head;
  PetscInt         max_epochs, patience, batch;
  PetscReal        lr;
  uint64_t         seed;
  PetscBool        quiet;         /* no progress lines (search candidates) */
  PetscBool        residual;      /* the targets are residuals on a base: the output layer starts at zero
                                     and the untrained network (the base alone) is the first candidate
                                     of early stopping */
  const char      *lcurve;        /* or NULL */
  const SgnnOptimConfig *optim;   /* the optimizer (its lr is replaced by lr); NULL: Adam */
  PetscInt         shard;         /* the trainer's ZeRO stage (sgtrainer.h) and compressor (NULL: none) */
  const char      *compress;
  PetscInt         cub_sync;      /* lion_cub's momentum-sync interval (0: never; < 0: the trainer's default, 10) */
  PetscInt         sdp_node;      /* sdp4bit: ranks a node (0: the ranks sharing memory) */
  PetscInt         shard_bucket;  /* stage 3: bytes a parameter bucket (0: the whole slab gathered) */
  PetscInt         grad_open;     /* gradient buckets open at once (0: the trainer's default, 3) */
  PetscInt         rollout;       /* windows of the rollout loss (SgPodLstmNetRolloutLoss; 0 or 1: one);
                                     the training windows' y hold rollout x L steps */
  const PetscReal *base_G, *base_g; /* residual networks with a rollout: the base's forecast of a window as
                                     an affine map of the scaled window, G [LK][LK], g [LK]
                                     (SgPodLstmSeriesSetRollout), added in the loss to every fed-back forecast */
  const struct _SgPodLstmVARModel *base_scaled; /* or, for a quadratic base, that base acting on scaled
                                     coefficients (SgPodLstmSeries.Vs), iterated on the tape in the loss */
  PetscInt         nvalid_r;      /* rollout > 1: validation windows whose R windows of targets lie in the
                                     validation period; vyr [nvalid_r][R L][K] (first window as vy, the
                                     later ones the truth): early stopping on the rollout's R^2 (the same
                                     forecast fed back as in the loss), vx's first nvalid_r as inputs */
  const PetscReal *vyr;
  PetscInt         free_run;      /* > 0: model selection by free runs (option free_run): an epoch's weights
                                     are early stopping's best only if the network's own window-to-window
                                     iteration (plus its base's, as served) of free_run snapshots from 4
                                     starts over the fitting period stays on its attractor
                                     (SgPodLstmFreeRunStays); a staying epoch beats any that leaves */
  const PetscReal *fit_s;         /* with free_run: the scaled coefficients of the fitting period [nfit][K] */
  PetscReal        input_noise;   /* > 0: Gaussian noise of this standard deviation (scaled units) on the
                                     training windows' inputs, the targets the truth (option input_noise) */
  PetscInt         nfit;
  SgnnLRKind       schedule;      /* learning rate over the max_epochs: constant, cosine to lr_min, or
                                     step (x decay_rate every decay_epochs, not below lr_min) */
  PetscReal        lr_min, decay_rate;
  PetscInt         decay_epochs;
} SgPodLstmFitConfig;
typedef struct {
  PetscReal r2, seconds; /* best validation R^2 (the weights kept), wall time */
  PetscInt  epochs;      /* epochs run (early stopping may end before max_epochs) */
  PetscInt  best_epoch;  /* the epoch whose weights were kept (0: a residual network's base) */
  PetscBool free_stays;  /* with free_run: the kept weights' free run stays on the attractor */
  PetscInt  free_left;   /* with free_run: epochs of a better validation R^2 passed over: their free runs left it */
} SgPodLstmFitResult;
/* R^2 = 1 - sum (y - yhat)^2 / sum (y - mean_w y)^2 over n windows (the mean per output element over windows) */
PETSC_EXTERN PetscReal      SgPodLstmR2(PetscInt n, PetscInt m, const PetscReal y[], const PetscReal yhat[]);
/* Train net through SgTrainer on comm (data parallel over its ranks): MSE, Adam, one validation per
   epoch, early stopping after `patience` epochs without a better validation R^2; the net ends with
   the best weights. */
PETSC_EXTERN PetscErrorCode SgPodLstmFit(MPI_Comm, SgPodLstmNet, const SgPodLstmFitConfig *, SgPodLstmFitResult *);

/* ---------------------------------------------------------------- architecture search (search.c, naslog.c) */
typedef enum { SG_PODLSTM_SEARCH_AGING, SG_PODLSTM_SEARCH_RANDOM } SgPodLstmSearchType;
PETSC_EXTERN const char *const SgPodLstmSearchTypes[];
/* One evaluated candidate, as logged and as sent between ranks. Times are seconds since the start of
   the search (accumulated over resumed sessions). */
typedef struct {
  PetscInt      id, rank, session, epochs, nparams;
  SgPodLstmArch arch;
  PetscReal     r2, t_start, t_end, seconds;
} SgPodLstmEval;
#define SG_PODLSTM_EVAL_NREAL (10 + 2 * SG_PODLSTM_MAXLAYERS)
PETSC_EXTERN void SgPodLstmEvalPack(const SgPodLstmEval *, PetscReal buf[SG_PODLSTM_EVAL_NREAL]);
PETSC_EXTERN void SgPodLstmEvalUnpack(const PetscReal buf[SG_PODLSTM_EVAL_NREAL], SgPodLstmEval *);

typedef struct {
  SgPodLstmSearchType type;
  PetscInt            evaluations;  /* completed evaluations the search stops at (over all sessions) */
  PetscInt            population;   /* aging evolution: population size (also the random start) */
  PetscInt            sample;       /* aging evolution: tournament size */
  uint64_t            seed;
  SgPodLstmSpace      space;
  SgPodLstmFitConfig  fit;          /* how a candidate trains (quiet; its seed is set per candidate) */
  char                logdir[PETSC_MAX_PATH_LEN]; /* LOGDIR/rank_R.h5 logs, LOGDIR/cand_ID.h5 weights */
  char                fingerprint[384]; /* what must match to resume (data, windows, space, strategy, effective configuration) */
  PetscBool           verbose;      /* one line per finished candidate */
} SgPodLstmSearchConfig;
typedef struct {
  PetscInt       n;                 /* every evaluation known (all sessions), in order of completion */
  SgPodLstmEval *evals;
  PetscInt       resumed;           /* of them, found in the logs at the start */
  PetscReal      wall, busy, utilisation; /* this session: wall time, summed training time of all ranks, busy / (ranks x wall) */
  PetscReal     *rank_busy;         /* [size] training seconds per rank this session */
} SgPodLstmSearchResult;
/* The search, collective on comm: every rank runs its own loop (claim an evaluation from a shared
   counter, propose, train on PETSC_COMM_SELF, log, send the result to every other rank, take in
   whatever results have arrived) and never waits for another rank's candidate; the only waits are
   the final exchange. Resumes from the logs in logdir (a kill -9 loses only the candidates in
   training then). */
PETSC_EXTERN PetscErrorCode SgPodLstmSearch(MPI_Comm, const SgPodLstmSearchConfig *, SgnnBackend *, SgPodLstmSearchResult *);
PETSC_EXTERN PetscErrorCode SgPodLstmSearchResultFree(SgPodLstmSearchResult *);
/* naslog.c: the per-rank logs (surge datasets, appended crash-safely) and the candidates' weights */
PETSC_EXTERN PetscErrorCode SgPodLstmLogRead(MPI_Comm, const char logdir[], const char fingerprint[], PetscInt *n, SgPodLstmEval **evals);
PETSC_EXTERN PetscErrorCode SgPodLstmLogAppend(const char logdir[], PetscMPIInt rank, const char fingerprint[], const SgPodLstmEval *);
PETSC_EXTERN PetscErrorCode SgPodLstmWeightsWrite(const char path[], const SgPodLstmArch *, PetscInt K, SgPodLstmNet);
PETSC_EXTERN PetscErrorCode SgPodLstmWeightsRead(const char path[], SgPodLstmNet);

/* ---------------------------------------------------------------- forecasts and scores (baselines.c) */
#define SG_PODLSTM_MAXMETHODS 12
/* Test RMSE of the reconstructed fields, per method: over the test windows (each forecasts L steps
   from the L true snapshots before them), the L leads and the active entries (land excluded), per
   field in its physical units; also per lead. */
typedef struct {
  PetscInt  nmethods, nfields, L, nwindows;
  char      method[SG_PODLSTM_MAXMETHODS][64];
  PetscReal rmse[SG_PODLSTM_MAXMETHODS][SG_PODLSTM_MAXFIELDS];
  PetscReal lead[SG_PODLSTM_MAXMETHODS][SG_PODLSTM_MAXFIELDS][64];
  PetscBool has_acc; /* the data have a harmonic climatology: anomaly correlations are scored */
  PetscReal acc[SG_PODLSTM_MAXMETHODS][SG_PODLSTM_MAXFIELDS][64]; /* per lead: sum f'o' / sqrt(sum f'^2 sum o'^2), anomalies from the climatology, over windows and entries */
  PetscReal accall[SG_PODLSTM_MAXMETHODS][SG_PODLSTM_MAXFIELDS];    /* the same over all leads */
} SgPodLstmScores;
/* forecasts as coefficients: ahat [nwindows][L][K] (unscaled), for the test windows */
PETSC_EXTERN PetscErrorCode SgPodLstmScoreCoefficients(const SgPodLstmData *, SgPOD, const SgPodLstmSeries *, const char name[], const PetscReal ahat[], SgPodLstmScores *);
/* forecasts in field space: persistence (the last input snapshot), climatology (the training mean of
   the same phase of a cycle of length `year`, in bins of one snapshot spacing) */
PETSC_EXTERN PetscErrorCode SgPodLstmScorePersistence(const SgPodLstmData *, const SgPodLstmSeries *, SgPodLstmScores *);
PETSC_EXTERN PetscErrorCode SgPodLstmScoreClimatology(const SgPodLstmData *, const SgPodLstmSeries *, PetscReal year, SgPodLstmScores *);
/* a vector autoregression a_t = c + sum_{j<=p} A_j a_{t-j} of the coefficients, least squares on the
   training period; p in 1..L chosen by the error on the validation windows; forecasts of the test
   windows by iterating it L steps: ahat [nwindows][L][K] */
PETSC_EXTERN PetscErrorCode SgPodLstmVAR(const SgPodLstmData *, const SgPodLstmSeries *, const PetscReal coef[], PetscInt *order, PetscReal ahat[]);
/* the linear inverse model family (needs SgPodLstmHarmonicsFit): the coefficients' harmonic
   climatology plus (a) a VAR of the anomalies, order chosen on validation, refitted on the training
   period (*order); (b) a direct linear map per lead from the last L anomalies and the target's season
   (the harmonics of its time), least squares over the training windows. ahat [nte][L][K] each */
PETSC_EXTERN PetscErrorCode SgPodLstmLIM(const SgPodLstmData *, const SgPodLstmSeries *, const PetscReal coef[], PetscInt *order, PetscReal ahat_var[], PetscReal ahat_map[]);
/* network forecasts of the test windows (plus the base's when the series has one): unscaled ahat [nte][L][K] */
PETSC_EXTERN PetscErrorCode SgPodLstmForecast(SgPodLstmNet, const SgPodLstmSeries *, PetscReal ahat[]);
/* the same for the n windows starting at snapshots s0 .. s0 + n - 1 (e.g. the validation windows) */
PETSC_EXTERN PetscErrorCode SgPodLstmForecastWindows(SgPodLstmNet, const SgPodLstmSeries *, PetscInt s0, PetscInt n, PetscReal ahat[]);

/* ---------------------------------------------------------------- the model (model.c) */
#define SG_PODLSTM_MAXMODELS 16
/* What a trained POD-LSTM is: the data layout, the POD basis (rows split over the comm's ranks), the
   scaler, and the top-k searched networks (nets[0] the best: it forecasts, or with mean_forecast the
   mean of all k does; their spread measures the forecast's uncertainty). */
typedef struct {
  SgPodLstmHead head;
  PetscInt     K, L, nfields, fsize[SG_PODLSTM_MAXFIELDS], fshape[SG_PODLSTM_MAXFIELDS][2];
  char         field[SG_PODLSTM_MAXFIELDS][64];
  PetscReal    fscale[SG_PODLSTM_MAXFIELDS], dt;
  PetscReal   *lo, *hi;  /* [K] */
  SgPodLstmVARModel base; /* the networks' base (p = 0: none): they forecast the residual on its forecast */
  SgPodLstmVARModel fallback; /* p > 0: the networks lost to this VAR on validation and it is served
                                 instead (podlstm: {fallback: baseline}); the networks stay for the record */
  SgPOD        pod;
  PetscInt     nmodels;
  SgPodLstmNet nets[SG_PODLSTM_MAXMODELS];
  PetscBool    mean_forecast; /* serve the mean of the k networks' forecasts (default: the best's) */
  char         physics[1024]; /* what it was trained for (attribute trained_physics; physics.c), "" unknown */
} SgPodLstmModel;
/* HDF5 model file (rank 0 writes; mean and modes gathered): configuration as attributes, /mean, /modes,
   /params_i per network; optional /search (every evaluation: id, rank, R2, times, architecture) and
   /scores (test RMSE per method and lead) for the record and the plots */
PETSC_EXTERN PetscErrorCode SgPodLstmModelSave(MPI_Comm, const SgPodLstmModel *, const char path[], const SgPodLstmScores *, const SgPodLstmSearchResult *);
/* every rank reads; the POD rows are split over comm's ranks as PetscSplitOwnership splits n */
PETSC_EXTERN PetscErrorCode SgPodLstmModelLoad(MPI_Comm, const char path[], SgnnBackend *, SgPodLstmModel *);
PETSC_EXTERN PetscErrorCode SgPodLstmModelFree(SgPodLstmModel *);
/* The next L states from the last L (this rank's rows of the scaled state, [L][nlocal] each; the
   field values divided by fscale): project, scale, forecast with every network, unscale,
   reconstruct with nets[0]. *spread: the RMS over the state entries and leads of the networks'
   standard deviation around their mean, in scaled-state units (0 with one network). Collective. */
PETSC_EXTERN PetscErrorCode SgPodLstmModelAdvance(const SgPodLstmModel *, const PetscReal hist[], PetscReal next[], PetscReal *spread);

/* ---------------------------------------------------------------- field.advance (provider.c) */
/* the podlstm surrogate's provider of the field.advance slot kind (sgfield.h), with the options
   <prefix>podlstm_model and <prefix>podlstm_resync_every read in the solver's options block */
PETSC_EXTERN PetscErrorCode SgPodLstmAdvanceProvider(SgSurrogate, const SgFieldProviderInfo *, SgFieldAdvanceProvider *);
/* grid.c: interpolation matrices (target = M source, M [nq][n] row-major):
   trigonometric through n periodic samples at xs (period P) -- exact for the n lowest Fourier modes;
   the polynomial through n nodes zs (barycentric; stable on Chebyshev-like nodes, at most 1024);
   cubic Lagrange through the 4 nearest of n increasing nodes (extrapolating beyond the end ones) */
PETSC_EXTERN void SgPodLstmTrigInterp(PetscInt nq, const PetscReal xq[], PetscInt n, const PetscReal xs[], PetscReal P, PetscReal M[]);
PETSC_EXTERN void SgPodLstmBaryInterp(PetscInt nq, const PetscReal zq[], PetscInt n, const PetscReal zs[], PetscReal M[]);
PETSC_EXTERN void SgPodLstmCubicInterp(PetscInt nq, const PetscReal zq[], PetscInt n, const PetscReal zs[], PetscReal M[]);

/* ---------------------------------------------------------------- physics (physics.c) */
/* The record "solver=S;key=v;key=v1,v2" of the numeric keys of a deck's solver section (the keys the
   ensemble varies left out); "" when the deck does not say. */
PETSC_EXTERN PetscErrorCode SgPodLstmPhysicsFromDeck(const char deck[], char rec[], size_t len);
/* Refuse (one user-input error on info->comm) a solver whose parameters (info->param_name) or box
   (the record's length = Lx,Lz against info's domain) are not the record's; "" is not checked. */
PETSC_EXTERN PetscErrorCode SgPodLstmPhysicsCheck(const char model[], const char rec[], const SgFieldProviderInfo *info);
