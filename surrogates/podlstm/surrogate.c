/* SgSurrogate type "podlstm": POD-LSTM with architecture search (Maulik et al., SC20), trained by
   `surge train` on a field_snapshots time series (docs/podlstm.md). Deck section `podlstm:`.

   Train: read the series (rows over the ranks) -> POD of the training period (SLEPc) -> scaled
   coefficients and windows -> architecture search over the ranks (aging evolution or random; or
   one given architecture) -> the top-k networks (as searched, or retrained) and the hand-designed
   baseline -> test RMSE of every method -> the model file. */
#include "sgpodlstm.h"
#include "sgsurrogateimpl.h"
#include "sgtrainer.h"
#include "sgwrite.h"
#include "sgnnbackend.h"
#include <errno.h>
#include <sys/stat.h>

typedef struct {
  char           files[16][PETSC_MAX_PATH_LEN], fields[SG_PODLSTM_MAXFIELDS][64], prefix[PETSC_MAX_PATH_LEN];
  char           arch[256], hand[256], svd[32], networks[PETSC_MAX_PATH_LEN];
  PetscInt       nfiles, nfields, member, skip, ntrain, ntest, K, L, search, evaluations, population, sample;
  PetscInt       epochs, patience, batch, rollout, retrain_epochs, retrain_patience, topk, seed, head, base, fallback, harmonics;
  PetscInt       schedule, decay_epochs, quad_free, free_run;
  PetscReal      valid_fraction, lr, year, step, field_points, lr_min, decay_rate, input_noise;
  PetscBool      verbose, baselines;
  SgPodLstmSpace space;
  SgnnBackend   *be;
  SgPodLstmModel M;
  SgPodLstmScores scores;
  SgPodLstmSearchResult sr;
  PetscBool      have_model, have_search;
  SgnnOptimConfig oc;      /* the trainer's optimizer, ZeRO stage and compressor (-podlstm_optimizer, _shard, _compress) */
  PetscInt       shard;
  char           compress[32];
  PetscInt       cub_sync;
  PetscInt       sdp_node; /* -podlstm_sdp4bit_node_ranks */
  PetscInt       shard_bucket; /* -podlstm_shard_bucket_bytes (stage 3 by buckets, zero3b.c) */
  PetscInt       grad_open;    /* -podlstm_shard_grad_open_buckets (gradient buckets open at once, zerograd.c) */
} SgSurrogate_PodLstm;

static const char *const SearchChoices[] = {"aging", "random", "none"};
static const char *const BaseChoices[]   = {"none", "var", "quadratic"};
static const char *const FallbackChoices[] = {"none", "baseline"};
static const char *const ScheduleChoices[] = {"const", "exp", "cosine"}; /* SgnnLRKind's order */

/* A list of strings; isfile: they name the run's input files (catalogued as input paths). */
static PetscErrorCode StringList(PetscOptionItems *PetscOptionsObject, const char opt[], const char help[], PetscBool isfile, PetscInt cap, size_t len, char *out, PetscInt *n)
{
  char     *strs[16];
  PetscInt  m = PetscMin(cap, 16);
  PetscBool set;

  PetscFunctionBegin;
  if (isfile) PetscCall(SgOptionsPathArray(opt, help, SG_PATH_IN, strs, &m, &set));
  else PetscCall(SgOptionsStringArray(opt, help, strs, &m, &set));
  if (!set) PetscFunctionReturn(PETSC_SUCCESS);
  *n = m;
  for (PetscInt i = 0; i < m; i++) {
    PetscCall(PetscStrncpy(out + i * len, strs[i], len));
    PetscCall(PetscFree(strs[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetFromOptions_PodLstm(SgSurrogate s, PetscOptionItems *PetscOptionsObject)
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "POD-LSTM with architecture search (deck section podlstm:)");
  PetscCall(StringList(PetscOptionsObject, "-data", "field_snapshots datasets holding the time series (surge ensemble of sst or boussinesq)", PETSC_TRUE, 16, PETSC_MAX_PATH_LEN, &d->files[0][0], &d->nfiles));
  PetscCall(StringList(PetscOptionsObject, "-fields", "Fields of the state, concatenated (several: each scaled by its RMS anomaly)", PETSC_FALSE, SG_PODLSTM_MAXFIELDS, 64, &d->fields[0][0], &d->nfields));
  PetscCall(SgOptionsInt("-member", "Ensemble member whose time series is used (-1: the first in the data)", d->member, &d->member, NULL, -1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-skip", "Snapshots skipped at the start (spin-up)", d->skip, &d->skip, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-ntrain", "Snapshots of the training period (POD, scaler and networks see only these)", d->ntrain, &d->ntrain, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-ntest", "Snapshots of the test period after it (0: all the rest)", d->ntest, &d->ntest, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-valid_fraction", "Last fraction of the training period used for validation (early stopping, the search's objective)", "", d->valid_fraction, &d->valid_fraction, NULL, 0.01, 0.9));
  PetscCall(SgOptionsInt("-modes", "POD modes K whose coefficients the networks forecast", d->K, &d->K, NULL, 1, 1000));
  PetscCall(SgOptionsInt("-window", "Steps L in and L out of a forecast", d->L, &d->L, NULL, 1, 64));
  {
    PetscInt idx = 0;
    for (PetscInt i = 0; i < 3; i++)
      if (!strcmp(d->svd, SgPODSolvers[i])) idx = i;
    PetscCall(SgOptionsEList("-svd", "SLEPc SVD of the snapshots: trlanczos or lanczos (thin bidiagonalisation), or cross (the method of snapshots: eigenvectors of A^T A; it refuses when A^T A shows its zero eigenvalue -- the anomalies have rank m - 1 -- as a tiny negative one, which happens with few snapshots)", SgPODSolvers, 3, SgPODSolvers[idx], &idx, NULL));
    PetscCall(PetscStrncpy(d->svd, SgPODSolvers[idx], sizeof d->svd));
  }
  {
    PetscInt idx = d->search;
    PetscCall(SgOptionsEList("-search", "Architecture search: aging (regularised evolution), random, or none (train -podlstm_arch)", SearchChoices, 3, SearchChoices[d->search], &idx, NULL));
    d->search = idx;
  }
  PetscCall(SgOptionsInt("-evaluations", "Candidates the search trains (over all ranks and resumed sessions)", d->evaluations, &d->evaluations, NULL, 1, 1000000));
  PetscCall(SgOptionsInt("-population", "Aging evolution: population size (the first candidates are random)", d->population, &d->population, NULL, 2, 100000));
  PetscCall(SgOptionsInt("-sample", "Aging evolution: candidates drawn from the population per tournament", d->sample, &d->sample, NULL, 1, 64));
  PetscCall(SgOptionsInt("-layers", "Search space: variable layers (the paper: 5)", d->space.nlayers, &d->space.nlayers, NULL, 1, SG_PODLSTM_MAXLAYERS));
  PetscCall(SgOptionsInt("-units_min", "Search space: fewest LSTM units", d->space.umin, &d->space.umin, NULL, 1, 4096));
  PetscCall(SgOptionsInt("-units_max", "Search space: most LSTM units", d->space.umax, &d->space.umax, NULL, 1, 4096));
  PetscCall(SgOptionsInt("-units_step", "Search space: step of the LSTM units", d->space.ustep, &d->space.ustep, NULL, 1, 4096));
  {
    PetscInt idx = d->head;
    PetscCall(SgOptionsEList("-head", "Output head: step (one linear map per step, the paper's; output t sees inputs <= t) or window (all steps of the last layer -> all outputs)", SgPodLstmHeads, 2, SgPodLstmHeads[d->head], &idx, NULL));
    d->head = idx;
  }
  {
    PetscInt idx = d->base;
    PetscCall(SgOptionsEList("-base", "What the networks forecast: none (the coefficients, the paper's form), var (the residual on the VAR's forecast: the VAR baseline fitted on the training period less its validation part; the output layer starts at zero, so an untrained network is the VAR, and one that does not beat it on the validation windows stays the VAR) or quadratic (the same on a quadratic regression a_t = W [1, a_{t-1} .. a_{t-p}, a_{t-1}[i] a_{t-1}[j]], p and its ridge chosen on validation). Not in the paper", BaseChoices, 3, BaseChoices[d->base], &idx, NULL));
    d->base = idx;
  }
  PetscCall(SgOptionsInt("-quad_free_run", "base quadratic: 0, or choose its lags and ridge only among those whose free run of this many snapshots from the validation period's start stays on the training attractor (every coefficient within its fitting range widened by half its width, every mode's standard deviation over the run's second half at least half the fitting period's); then ridges 4 per decade from 1e-6 to 1. Not in the paper", d->quad_free, &d->quad_free, NULL, 0, 1000000));
  {
    PetscInt idx = d->fallback;
    PetscCall(SgOptionsEList("-fallback", "Where the served network loses to the best baseline on the validation windows (the VAR; with base quadratic the better of the VAR and the quadratic regression): none (serve it anyway; the comparison is printed) or baseline (the model serves that baseline, refitted on the whole training period, instead)", FallbackChoices, 2, FallbackChoices[d->fallback], &idx, NULL));
    d->fallback = idx;
  }
  PetscCall(SgOptionsString("-arch", "Architecture trained when search is none (layers L<units> or I, +<skip bits>)", d->arch, d->arch, sizeof d->arch, NULL));
  PetscCall(SgOptionsPath("-networks", "With search none: score the networks of this POD-LSTM model file (made from the same data and deck) instead of training -podlstm_arch: today's code re-scores a stored model's networks", SG_PATH_IN, d->networks, d->networks, sizeof d->networks, NULL));
  PetscCall(SgOptionsString("-hand_arch", "The hand-designed LSTM baseline", d->hand, d->hand, sizeof d->hand, NULL));
  PetscCall(SgOptionsInt("-epochs", "Most epochs a network trains (early stopping may end sooner)", d->epochs, &d->epochs, NULL, 1, 1000000));
  PetscCall(SgOptionsInt("-rollout", "Windows of the training loss: the network forecasts the next window, then rollout - 1 more from its own forecasts, and the error of all of them is minimised with gradients through the forecasts fed back (1: the paper's one-window loss; with base var each forecast fed back is the network's plus the VAR's of the window fed in). Not in the paper", d->rollout, &d->rollout, NULL, 1, 64));
  PetscCall(SgOptionsInt("-free_run", "Model selection by free runs (snapshots; 0: off, the paper's early stopping on validation R2 alone): an epoch's weights are kept only if the network's own window-to-window iteration (plus its base's, as the field.advance slot serves it) of this many snapshots from 4 starts over the fitting period stays on the training attractor (the test of quad_free_run); a residual network none of whose epochs stays is served as its base. Not in the paper", d->free_run, &d->free_run, NULL, 0, 1000000));
  PetscCall(SgOptionsReal("-input_noise", "Standard deviation of Gaussian noise added to the training windows' inputs, in scaled units (each coefficient's training range is 1); the targets stay the truth (for a residual network the truth less its base's forecast of the noisy input), so the network learns to pull perturbed states back towards the data, as its own fed-back forecasts need (noise regularisation of surrogates of chaotic systems: Vlachas et al. 2020, Pathak et al. 2017); validation uses the clean windows. 0: the paper's training. Not in the paper", "scaled units", d->input_noise, &d->input_noise, NULL, 0, 1));
  PetscCall(SgOptionsInt("-patience", "Epochs without a better validation R2 before training stops", d->patience, &d->patience, NULL, 1, 1000000));
  PetscCall(SgOptionsInt("-batch_size", "Windows per batch", d->batch, &d->batch, NULL, 1, 1 << 20));
  PetscCall(SgOptionsReal("-start_lr", "Learning rate (of -podlstm_optimizer, Adam by default)", "", d->lr, &d->lr, NULL, 1e-8, 1));
  {
    PetscInt idx = d->schedule;
    PetscCall(SgOptionsEList("-lr_schedule", "Learning rate over the -podlstm_epochs of a training: const (the paper's), exp (a staircase: x -podlstm_lr_decay_rate every -podlstm_lr_decay_epochs epochs, not below -podlstm_lr_min) or cosine (from -podlstm_start_lr down to -podlstm_lr_min at the last epoch; Loshchilov & Hutter 2017, no restarts). Early stopping may end a training before the schedule does", ScheduleChoices, 3, ScheduleChoices[d->schedule], &idx, NULL));
    d->schedule = idx;
  }
  PetscCall(SgOptionsReal("-lr_min", "Learning rate at the end of the cosine schedule, and the floor of the exp one", "", d->lr_min, &d->lr_min, NULL, 0, 1));
  PetscCall(SgOptionsReal("-lr_decay_rate", "exp schedule: factor of the learning rate every -podlstm_lr_decay_epochs", "", d->decay_rate, &d->decay_rate, NULL, 1e-6, 1));
  PetscCall(SgOptionsInt("-lr_decay_epochs", "exp schedule: epochs between two decays of the learning rate", d->decay_epochs, &d->decay_epochs, NULL, 1, 1000000));
  PetscCall(SgTrainerOptionsOptimizer(PetscOptionsObject, &d->oc, &d->shard, d->compress, sizeof d->compress, &d->cub_sync)); /* -podlstm_optimizer, _lion_beta*, _weight_decay, _shard, _compress */
  PetscCall(SgTrainerOptionsSdp4bit(PetscOptionsObject, &d->sdp_node));
  PetscCall(SgTrainerOptionsShardBucket(PetscOptionsObject, &d->shard_bucket)); /* -podlstm_shard_bucket_bytes */
  PetscCall(SgTrainerOptionsShardGradOpen(PetscOptionsObject, &d->grad_open)); /* -podlstm_shard_grad_open_buckets */
  PetscCall(SgOptionsInt("-top_k", "Searched networks kept in the model (the best forecasts, all give the uncertainty)", d->topk, &d->topk, NULL, 1, SG_PODLSTM_MAXMODELS));
  PetscCall(SgOptionsInt("-retrain_epochs", "Retrain the top-k and the baseline this many epochs after the search (0: keep the searched weights)", d->retrain_epochs, &d->retrain_epochs, NULL, 0, 1000000));
  PetscCall(SgOptionsInt("-retrain_patience", "Patience (epochs) of the retraining", d->retrain_patience, &d->retrain_patience, NULL, 1, 1000000));
  PetscCall(SgOptionsInt("-seed", "Seed of the search, the weights and the data order", d->seed, &d->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsPath("-prefix", "Work files: PREFIX.windows.h5, PREFIX.search/ (the resumable search log)", SG_PATH_OUT_BASE, d->prefix, d->prefix, sizeof d->prefix, NULL));
  PetscCall(SgOptionsReal("-year", "Period of the climatology baseline in the data's time units (0: no climatology)", "time units", d->year, &d->year, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-harmonics", "Climatology from this many harmonics of the year (in phase however long the test period; 0: the mean of snapshot-spaced bins of the year); > 0 also scores the linear inverse models and anomaly correlations", d->harmonics, &d->harmonics, NULL, 0, 16));
  PetscCall(SgOptionsReal("-step", "Spacing of the steps of .npy coefficient series (data: [a.npy, ...], float64 [modes][steps]) in the time units of year", "time units", d->step, &d->step, NULL, 1e-300, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-field_points", "The data are POD coefficients of a field of this many points (orthonormal modes): scores by lead are also printed as the field RMSE beyond the modes' floor, RMSE x sqrt(entries / field_points) (0: not)", "", d->field_points, &d->field_points, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsBool("-baselines", "Score persistence, climatology, VAR and the hand-designed LSTM on the test period too", d->baselines, &d->baselines, NULL));
  PetscCall(SgOptionsBool("-verbose", "One line per search candidate", d->verbose, &d->verbose, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* everything the deck decides, checked before anything is read or written */
static PetscErrorCode CheckOptions(SgSurrogate s)
{
  SgSurrogate_PodLstm *d    = (SgSurrogate_PodLstm *)s->data;
  MPI_Comm             comm = PetscObjectComm((PetscObject)s);
  SgPodLstmArch        a;

  PetscFunctionBegin;
  PetscCheck(d->nfiles > 0, comm, PETSC_ERR_USER_INPUT, "podlstm: no data: set podlstm: {data: [sst_weekly.h5]} (field_snapshots from surge ensemble, e.g. inputs/sst/ensemble_weekly.yaml)");
  { /* coefficient series (.npy) have one state, "a"; datasets need their fields named */
    size_t n = strlen(d->files[0]);
    PetscCheck(d->nfields > 0 || (n > 4 && !strcmp(d->files[0] + n - 4, ".npy")), comm, PETSC_ERR_USER_INPUT, "podlstm: no fields: set podlstm: {fields: [T]} (the dataset's fields that make the state)");
  }
  PetscCheck(!d->harmonics || d->year > 0, comm, PETSC_ERR_USER_INPUT, "podlstm: harmonics %" PetscInt_FMT " need the year's length: set podlstm: {year: 365.25}", d->harmonics);
  PetscCheck(d->space.umin <= d->space.umax, comm, PETSC_ERR_USER_INPUT, "podlstm: units_min %" PetscInt_FMT " > units_max %" PetscInt_FMT, d->space.umin, d->space.umax);
  if (d->search != 2) { /* the search trains distinct architectures: no more than the space holds */
    PetscReal size = 1;
    for (PetscInt i = 0; i < d->space.nlayers; i++) size *= (2 + (d->space.umax - d->space.umin) / d->space.ustep) * PetscPowReal(2, PetscMin(SG_PODLSTM_NSKIP, i)); /* identity or an LSTM width, times the skip bits into node i (arch.c) */
    PetscCheck(d->evaluations <= size, comm, PETSC_ERR_USER_INPUT, "podlstm: -podlstm_evaluations %" PetscInt_FMT " is more than the %.0f architectures of the search space (-podlstm_layers %" PetscInt_FMT ", units %" PetscInt_FMT "..%" PetscInt_FMT " by %" PetscInt_FMT "): give at most %.0f, or widen the space", d->evaluations, (double)size, d->space.nlayers, d->space.umin, d->space.umax, d->space.ustep, (double)size);
  }
  PetscCheck(d->sample <= d->population, comm, PETSC_ERR_USER_INPUT, "podlstm: sample %" PetscInt_FMT " is larger than the population %" PetscInt_FMT, d->sample, d->population);
  PetscCall(SgPodLstmArchFromString(comm, d->hand, &a));
  if (d->search == 2) PetscCall(SgPodLstmArchFromString(comm, d->arch, &a));
  PetscCheck(!d->networks[0] || d->search == 2, comm, PETSC_ERR_USER_INPUT, "podlstm: networks %s are scored, not searched: set podlstm: {search: none}", d->networks);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUp_PodLstm(SgSurrogate s)
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;

  PetscFunctionBegin;
  PetscCall(SgNNBackendFromOptions(PetscObjectComm((PetscObject)s), &d->be));
  if (!d->have_model) PetscCall(CheckOptions(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the windows of one period as arrays: x, y [n][L][K] */
static PetscErrorCode Windows(const SgPodLstmSeries *S, PetscInt s0, PetscInt n, PetscReal **x, PetscReal **y)
{
  const PetscInt m = S->L * S->K;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n * m, x, n * m, y));
  for (PetscInt w = 0; w < n; w++) SgPodLstmSeriesWindow(S, s0 + w, *x + w * m, *y + w * m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Train the networks of `archs` (task t on rank t mod size, PETSC_COMM_SELF) for retrain_epochs
   with retrain_patience if retraining was asked for, else as the search's candidates; every rank
   ends with every network (weights passed through files in the log directory). */
static PetscErrorCode TrainTasks(SgSurrogate s, const SgPodLstmFitConfig *fc0, PetscInt n, const SgPodLstmArch archs[], SgPodLstmNet nets[], PetscReal r2[])
{
  SgSurrogate_PodLstm *d    = (SgSurrogate_PodLstm *)s->data;
  MPI_Comm             comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt          rank, size;
  PetscReal           *mine;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (!rank) { /* the weights travel through files next to the search log */
    char dir[PETSC_MAX_PATH_LEN + 16];
    int  e;
    PetscCall(PetscSNPrintf(dir, sizeof dir, "%s.search", d->prefix));
    e = mkdir(dir, 0777) ? errno : 0;
    PetscCheck(!e || e == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "podlstm: cannot create %s: %s", dir, strerror(e));
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscCalloc1(n, &mine));
  for (PetscInt t = 0; t < n; t++) {
    char path[PETSC_MAX_PATH_LEN + 64];
    PetscCall(SgPodLstmNetCreate(&archs[t], d->K, d->L, (SgPodLstmHead)d->head, d->be, SGNN_F64, &nets[t]));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.search/final_%" PetscInt_FMT ".h5", d->prefix, t));
    if (t % size == rank) {
      SgPodLstmFitConfig fc = *fc0;
      SgPodLstmFitResult fr;
      if (d->retrain_epochs) {
        fc.max_epochs = d->retrain_epochs;
        fc.patience = d->retrain_patience;
      }
      fc.seed = (uint64_t)d->seed * 31ULL + (uint64_t)t;
      fc.quiet = (PetscBool)(size > 1 || n > 1 || !d->verbose);
      PetscCall(SgPodLstmNetInit(nets[t], (unsigned long long)d->seed * 131ULL + (unsigned long long)t));
      PetscCall(SgPodLstmFit(PETSC_COMM_SELF, nets[t], &fc, &fr));
      mine[t] = fr.r2;
      if (fc.free_run) { /* the selection's outcome, from the rank that trained it */
        char a[256];
        PetscCall(SgPodLstmArchToString(&archs[t], a, sizeof a));
        if (fr.free_stays) PetscCall(PetscPrintf(PETSC_COMM_SELF, "podlstm: free-run selection ('%s'): kept epoch %" PetscInt_FMT "%s, validation R2 %.5f: its free runs of %" PetscInt_FMT " snapshots stay on the training attractor; %" PetscInt_FMT " epoch(s) of a better R2 passed over (their runs left it)\n", a, fr.best_epoch, fr.best_epoch ? "" : " (the base alone)", (double)fr.r2, fc.free_run, fr.free_left));
        else PetscCall(PetscPrintf(PETSC_COMM_SELF, "podlstm: free-run selection ('%s'): no epoch's free run of %" PetscInt_FMT " snapshots stays on the training attractor; kept the best validation R2 (epoch %" PetscInt_FMT ", %.5f)\n", a, fc.free_run, fr.best_epoch, (double)fr.r2));
      }
      PetscCall(SgPodLstmWeightsWrite(path, &archs[t], d->K, nets[t]));
    }
  }
  PetscCallMPI(MPI_Allreduce(mine, r2, (PetscMPIInt)n, MPIU_REAL, MPIU_SUM, comm));
  for (PetscInt t = 0; t < n; t++) {
    char path[PETSC_MAX_PATH_LEN + 64];
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.search/final_%" PetscInt_FMT ".h5", d->prefix, t));
    if (t % size != rank) PetscCall(SgPodLstmWeightsRead(path, nets[t]));
  }
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the base option a model's base stands for: 0 none, 1 var, 2 quadratic */
static PetscInt BaseOf(const SgPodLstmVARModel *V)
{
  return V->p ? (V->nq ? 2 : 1) : 0;
}

/* The networks of a model file made from the same data and deck (option networks), to be scored by
   today's code: the file's K, L, head and base must be the deck's (the POD and scaler are today's,
   recomputed from the data; a model of other data would be scored in the wrong basis). Read and
   checked before anything is computed or written. */
static PetscErrorCode NetworksFromModel(SgSurrogate s, PetscInt *ntop, SgPodLstmArch top[], SgPodLstmNet nets[])
{
  SgSurrogate_PodLstm *d    = (SgSurrogate_PodLstm *)s->data;
  MPI_Comm             comm = PetscObjectComm((PetscObject)s);
  SgPodLstmModel       M;

  PetscFunctionBegin;
  PetscCall(SgPodLstmModelLoad(comm, d->networks, d->be, &M));
  PetscCheck(M.K == d->K && M.L == d->L && M.head == (SgPodLstmHead)d->head && BaseOf(&M.base) == d->base, comm, PETSC_ERR_USER_INPUT, "podlstm: the networks of %s have modes %" PetscInt_FMT ", window %" PetscInt_FMT ", head %s, base %s; the deck has %" PetscInt_FMT ", %" PetscInt_FMT ", %s, %s: score them with the deck they were trained by", d->networks, M.K, M.L, SgPodLstmHeads[M.head], BaseChoices[BaseOf(&M.base)], d->K, d->L, SgPodLstmHeads[d->head], BaseChoices[d->base]);
  *ntop = M.nmodels;
  for (PetscInt t = 0; t < M.nmodels; t++) { /* the model's networks move here */
    top[t]    = M.nets[t]->arch;
    nets[t]   = M.nets[t];
    M.nets[t] = NULL;
  }
  M.nmodels = 0;
  PetscCall(SgPodLstmModelFree(&M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The served network (nets[0]) against the best baseline on the validation windows: the VAR of the
   order chosen there and, with base quadratic, the quadratic regression of the ridge chosen there, each
   fitted on the fitting period (none has seen the validation windows); coefficient RMSE over the
   windows, leads and modes (the modes are orthonormal: the field error beyond the POD floor, in the
   scaled state's units). One line says who wins; with fallback: baseline a losing network is replaced
   by the winning baseline refitted on the whole training period. A residual network starts as its base
   and is kept only if its validation R^2 beats the base's; this check, in unscaled coefficients,
   catches what that scaled measure lets through. */
static PetscErrorCode Fallback(SgSurrogate s, const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], SgPodLstmNet net)
{
  SgSurrogate_PodLstm *d    = (SgSurrogate_PodLstm *)s->data;
  MPI_Comm             comm = PetscObjectComm((PetscObject)s);
  const PetscInt       n    = S->L * S->K;
  SgPodLstmVARModel    V[2] = {{0}, {0}};
  PetscReal           *fn, *fv, en = 0, ev[2] = {0, 0};
  PetscInt             nb = 1, b = 0;
  char                 name[2][96];

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(S->nva * n, &fn, n, &fv));
  PetscCall(SgPodLstmForecastWindows(net, S, S->s_va0, S->nva, fn));
  PetscCall(SgPodLstmVARFit(D, S, coef, PETSC_FALSE, &V[0]));
  PetscCall(PetscSNPrintf(name[0], sizeof name[0], "VAR(%" PetscInt_FMT ")", V[0].p));
  if (d->M.base.nq) { /* base quadratic: its base is a baseline too */
    PetscCall(SgPodLstmQuadFit(D, S, coef, PETSC_FALSE, d->quad_free, &V[1]));
    PetscCall(PetscSNPrintf(name[1], sizeof name[1], "the quadratic regression (%" PetscInt_FMT " lags, ridge %g)", V[1].p, (double)V[1].ridge));
    nb = 2;
  }
  for (PetscInt w = 0; w < S->nva; w++) {
    const PetscReal *truth = coef + (S->s_va0 + w + S->L) * S->K;
    for (PetscInt i = 0; i < n; i++) en += PetscSqr(fn[w * n + i] - truth[i]);
    for (PetscInt k = 0; k < nb; k++) {
      SgPodLstmVARIterate(&V[k], S->L, coef + (S->s_va0 + w) * S->K, fv);
      for (PetscInt i = 0; i < n; i++) ev[k] += PetscSqr(fv[i] - truth[i]);
    }
  }
  en = PetscSqrtReal(en / (S->nva * n));
  for (PetscInt k = 0; k < nb; k++) ev[k] = PetscSqrtReal(ev[k] / (S->nva * n));
  if (nb == 2 && ev[1] < ev[0]) b = 1;
  if (en <= ev[b]) PetscCall(PetscPrintf(comm, "podlstm: on the %" PetscInt_FMT " validation windows the served network beats %s: coefficient RMSE %.6g against %.6g; it is served\n", S->nva, name[b], (double)en, (double)ev[b]));
  else if (!d->fallback) PetscCall(PetscPrintf(comm, "podlstm: on the %" PetscInt_FMT " validation windows the served network loses to %s: coefficient RMSE %.6g against %.6g (+%.1f %%); it is served anyway (podlstm: {fallback: baseline} would serve %s)\n", S->nva, name[b], (double)en, (double)ev[b], (double)(100 * (en / ev[b] - 1)), b ? "the quadratic regression" : "the VAR"));
  else {
    PetscCall(PetscPrintf(comm, "podlstm: on the %" PetscInt_FMT " validation windows the served network loses to %s: coefficient RMSE %.6g against %.6g (+%.1f %%); fallback: the model serves %s refitted on the whole training period\n", S->nva, name[b], (double)en, (double)ev[b], (double)(100 * (en / ev[b] - 1)), name[b]));
    if (b) PetscCall(SgPodLstmQuadFit(D, S, coef, PETSC_TRUE, d->quad_free, &d->M.fallback)); /* the same ridge (chosen on validation), all training snapshots */
    else PetscCall(SgPodLstmVARFit(D, S, coef, PETSC_TRUE, &d->M.fallback));   /* the same order (chosen on validation), all training snapshots */
    PetscCheck(d->M.fallback.p == V[b].p && d->M.fallback.ridge == V[b].ridge, comm, PETSC_ERR_PLIB, "podlstm: the baseline's order or ridge changed on refitting");
  }
  for (PetscInt k = 0; k < nb; k++) PetscCall(SgPodLstmVARFree(&V[k]));
  PetscCall(PetscFree2(fn, fv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every lead's score: RMSE (or, for POD coefficients of a field of N points, the field RMSE beyond
   the floor: RMSE x sqrt(entries / N)), then the anomaly correlation when there is a climatology */
static PetscErrorCode PrintLeads(MPI_Comm comm, const SgPodLstmScores *sc, PetscInt f, const char field[], PetscReal scale, PetscBool beyond)
{
  char line[1024];

  PetscFunctionBegin;
  for (PetscInt what = 0; what < (sc->has_acc ? 2 : 1); what++) {
    PetscCall(PetscPrintf(comm, "podlstm: %s of %s by lead%s:\n", what ? "anomaly correlation" : beyond ? "RMSE beyond the POD floor (field units)" : "test RMSE", field, what ? " (anomalies from the harmonic climatology)" : ""));
    PetscCall(PetscSNPrintf(line, sizeof line, "podlstm:   %-40s %8s", "method", "all"));
    for (PetscInt l = 0; l < sc->L; l++) PetscCall(PetscSNPrintf(line + strlen(line), sizeof line - strlen(line), " %7" PetscInt_FMT, l + 1));
    PetscCall(PetscPrintf(comm, "%s\n", line));
    for (PetscInt m = 0; m < sc->nmethods; m++) {
      PetscCall(PetscSNPrintf(line, sizeof line, "podlstm:   %-40s %8.4f", sc->method[m], (double)(what ? sc->accall[m][f] : sc->rmse[m][f] * scale)));
      for (PetscInt l = 0; l < sc->L; l++) PetscCall(PetscSNPrintf(line + strlen(line), sizeof line - strlen(line), " %7.4f", (double)(what ? sc->acc[m][f][l] : sc->lead[m][f][l] * scale)));
      PetscCall(PetscPrintf(comm, "%s\n", line));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the best validation R2 after each evaluation, as the search's progress */
static PetscErrorCode ReportSearch(SgSurrogate s, const SgPodLstmSearchResult *sr)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);
  PetscReal best = -PETSC_MAX_REAL;
  PetscInt  every = PetscMax(1, sr->n / 10);

  PetscFunctionBegin;
  PetscCall(PetscPrintf(comm, "podlstm search: %" PetscInt_FMT " evaluations (%" PetscInt_FMT " from the log), wall %.1f s this session, worker utilisation %.3f (training time %.1f s over the ranks)\n", sr->n, sr->resumed, (double)sr->wall, (double)sr->utilisation, (double)sr->busy));
  PetscCall(PetscPrintf(comm, "podlstm search:   evaluations  best validation R2  at time (s)\n"));
  for (PetscInt i = 0; i < sr->n; i++) {
    best = PetscMax(best, sr->evals[i].r2);
    if ((i + 1) % every == 0 || i == sr->n - 1) PetscCall(PetscPrintf(comm, "podlstm search:   %11" PetscInt_FMT "  %18.5f  %11.1f\n", i + 1, (double)best, (double)sr->evals[i].t_end));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Train_PodLstm(SgSurrogate s)
{
  SgSurrogate_PodLstm *d    = (SgSurrogate_PodLstm *)s->data;
  MPI_Comm             comm = PetscObjectComm((PetscObject)s);
  const char          *files[16], *fields[SG_PODLSTM_MAXFIELDS];
  SgPodLstmData        D;
  SgPodLstmSeries      S;
  SgPodLstmFitConfig   fc = {0};
  SgPodLstmArch        top[SG_PODLSTM_MAXMODELS + 1];
  SgPodLstmNet         nets[SG_PODLSTM_MAXMODELS + 1] = {NULL};
  PetscReal           *coef, *vx, *vy, *vyr = NULL, *ahat, r2[SG_PODLSTM_MAXMODELS + 1];
  PetscInt             ntop = 0;
  char                 windows[PETSC_MAX_PATH_LEN + 16], s1[256];
  PetscMPIInt          size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  for (PetscInt i = 0; i < d->nfiles; i++) files[i] = d->files[i];
  for (PetscInt i = 0; i < d->nfields; i++) fields[i] = d->fields[i];
  /* the work file is checked on every rank before anything is computed or written (sgwrite.h) */
  PetscCall(PetscSNPrintf(windows, sizeof windows, "%s.windows.h5", d->prefix));
  PetscCall(SgWriteCheck(comm, "-podlstm_prefix", windows, SG_FILE_WINDOWS));
  if (d->networks[0]) PetscCall(NetworksFromModel(s, &ntop, top, nets));
  PetscCall(SgPodLstmDataLoad(comm, d->nfiles, files, d->nfields, fields, d->member, d->skip, d->ntrain, d->ntest, d->valid_fraction, d->step, &D));
  if (d->harmonics) PetscCall(SgPodLstmHarmonicsFit(&D, d->harmonics, d->year));
  PetscCall(PetscPrintf(comm, "podlstm: %" PetscInt_FMT " snapshots of %" PetscInt_FMT " values (%" PetscInt_FMT " vary), every %g: %" PetscInt_FMT " train (the last %" PetscInt_FMT " validate), %" PetscInt_FMT " test; %d rank(s)\n", D.nsnap, D.n, D.nactive, (double)D.dt, D.ntrain, D.nvalid, D.ntest, (int)size));
  /* POD of the training period, coefficients of every snapshot */
  PetscCall(SgPODCreate(comm, D.nlocal, d->K, &d->M.pod));
  PetscCall(SgPODCompute(d->M.pod, D.ntrain, D.X, d->svd));
  PetscCall(SgPODView(d->M.pod, "podlstm"));
  PetscCall(PetscMalloc1(D.nsnap * d->K, &coef));
  PetscCall(SgPODProject(d->M.pod, D.nsnap, D.X, coef));
  PetscCall(SgPodLstmSeriesCreate(&D, d->K, d->L, coef, &S));
  if (d->base == 1) { /* residual networks: the VAR fitted on the fitting period only (validation stays unseen) */
    PetscCall(SgPodLstmVARFit(&D, &S, coef, PETSC_FALSE, &d->M.base));
    PetscCall(SgPodLstmSeriesSetBase(&S, &d->M.base));
    PetscCall(PetscPrintf(comm, "podlstm: the networks forecast the residual on VAR(%" PetscInt_FMT ") (fitted on the %" PetscInt_FMT " snapshots before the validation part)\n", d->M.base.p, D.ntrain - D.nvalid));
  } else if (d->base == 2) { /* the same on the quadratic regression */
    PetscCall(SgPodLstmQuadFit(&D, &S, coef, PETSC_FALSE, d->quad_free, &d->M.base));
    PetscCall(SgPodLstmSeriesSetBase(&S, &d->M.base));
    PetscCall(PetscPrintf(comm, "podlstm: the networks forecast the residual on the quadratic regression (%" PetscInt_FMT " lags, ridge %g, both chosen on validation%s; %" PetscInt_FMT " regressors; fitted on the %" PetscInt_FMT " snapshots before the validation part)\n", d->M.base.p, (double)d->M.base.ridge, d->quad_free ? " among those whose free run stays on the training attractor" : "", 1 + d->M.base.p * d->K + d->M.base.nq, D.ntrain - D.nvalid));
  }
  PetscCall(SgPodLstmSeriesSetRollout(&S, d->rollout));
  PetscCall(PetscSNPrintf(windows, sizeof windows, "%s.windows.h5", d->prefix));
  PetscCall(SgPodLstmSeriesWriteWindows(comm, &S, windows));
  PetscCall(Windows(&S, S.s_va0, S.nva, &vx, &vy));
  if (d->rollout > 1) { /* validation on the rollout: the windows whose R windows lie in the validation period */
    const PetscInt m = S.L * S.K, ny = d->rollout * m;
    fc.nvalid_r = S.nva - (d->rollout - 1) * S.L;
    PetscCall(PetscMalloc1(fc.nvalid_r * ny, &vyr));
    for (PetscInt w = 0; w < fc.nvalid_r; w++) {
      PetscCall(PetscArraycpy(vyr + w * ny, vy + w * m, m));
      for (PetscInt i = m; i < ny; i++) vyr[w * ny + i] = S.s[(S.s_va0 + w + S.L) * S.K + i];
    }
    fc.vyr = vyr;
  }
  PetscCall(PetscPrintf(comm, "podlstm: windows of %" PetscInt_FMT " -> %" PetscInt_FMT " steps: %" PetscInt_FMT " train, %" PetscInt_FMT " validate, %" PetscInt_FMT " test\n", d->L, d->L, S.ntr, S.nva, S.nte));
  fc.windows = windows;
  fc.ntrain = S.ntr;
  fc.nvalid = S.nva;
  fc.vx = vx;
  fc.vy = vy;
  fc.L = d->L;
  fc.K = d->K;
  fc.head = (SgPodLstmHead)d->head;
  fc.max_epochs = d->epochs;
  fc.patience = d->patience;
  fc.batch = d->batch;
  fc.lr = d->lr;
  fc.residual = (PetscBool)(d->base > 0);
  fc.optim = &d->oc;
  fc.shard = d->shard;
  fc.compress = d->compress;
  fc.cub_sync = d->cub_sync;
  fc.sdp_node = d->sdp_node;
  fc.shard_bucket = d->shard_bucket;
  fc.grad_open = d->grad_open;
  fc.rollout = d->rollout;
  fc.base_G = d->rollout > 1 || d->free_run || d->input_noise > 0 ? S.fG : NULL; /* NULL without a base */
  fc.base_g = d->rollout > 1 || d->free_run || d->input_noise > 0 ? S.fg : NULL;
  fc.base_scaled = d->rollout > 1 || d->free_run || d->input_noise > 0 ? S.Vs : NULL; /* a quadratic base */
  fc.input_noise = d->input_noise;
  fc.free_run = d->free_run;
  fc.fit_s = S.s; /* the fitting period: the first nfit scaled snapshots */
  fc.nfit = D.ntrain - D.nvalid;
  fc.schedule = (SgnnLRKind)d->schedule;
  fc.lr_min = d->lr_min;
  fc.decay_rate = d->decay_rate;
  fc.decay_epochs = d->decay_epochs;
  /* the search, or the one architecture asked for */
  if (d->search < 2) {
    SgPodLstmSearchConfig sc;
    PetscCall(PetscMemzero(&sc, sizeof sc));
    sc.type = (SgPodLstmSearchType)d->search;
    sc.evaluations = d->evaluations;
    sc.population = d->population;
    sc.sample = d->sample;
    sc.seed = (uint64_t)d->seed;
    sc.space = d->space;
    sc.fit = fc;
    sc.verbose = d->verbose;
    PetscCall(PetscSNPrintf(sc.logdir, sizeof sc.logdir, "%s.search", d->prefix));
    PetscCall(PetscSNPrintf(sc.fingerprint, sizeof sc.fingerprint, "podlstm search %s seed %" PetscInt_FMT ": n %" PetscInt_FMT " snapshots %" PetscInt_FMT "+%" PetscInt_FMT " K %" PetscInt_FMT " L %" PetscInt_FMT " head %s space %" PetscInt_FMT "x%" PetscInt_FMT "..%" PetscInt_FMT "/%" PetscInt_FMT " epochs %" PetscInt_FMT " patience %" PetscInt_FMT " batch %" PetscInt_FMT " lr %g pop %" PetscInt_FMT " sample %" PetscInt_FMT "%s", SgPodLstmSearchTypes[d->search], d->seed, D.n, D.ntrain, D.ntest, d->K, d->L, SgPodLstmHeads[d->head], d->space.nlayers, d->space.umin, d->space.umax, d->space.ustep, d->epochs, d->patience, d->batch, (double)d->lr, d->population, d->sample, d->base ? (d->base == 1 ? " base var" : " base quadratic") : ""));
    { /* and the effective configuration: every podlstm option that decides what the search computes
         (the deck after the command line's overrides) and the content of the data files -- a log of
         another data set of the same shape, or another -podlstm_skip, is not resumed */
      const char *const skip[] = {"podlstm_evaluations", "podlstm_verbose", "podlstm_top_k", "podlstm_retrain", "podlstm_baselines", "podlstm_hand_arch", "podlstm_fallback", "podlstm_year", "podlstm_harmonics", "podlstm_field_points", "podlstm_arch", NULL};
      const char *deck = NULL;
      PetscInt    line, col;
      char        config[32];
      PetscCall(SgDeckKeyLocation("podlstm_data", &deck, &line, &col));
      PetscCall(SgConfigFingerprint(comm, line >= 0 ? deck : NULL, "podlstm_", skip, config, sizeof config));
      PetscCall(PetscStrlcat(sc.fingerprint, " config ", sizeof sc.fingerprint));
      PetscCall(PetscStrlcat(sc.fingerprint, config, sizeof sc.fingerprint));
    }
    PetscCall(SgPodLstmSearch(comm, &sc, d->be, &d->sr));
    d->have_search = PETSC_TRUE;
    PetscCall(ReportSearch(s, &d->sr));
    { /* the top-k distinct architectures */
      PetscInt *order;
      PetscCall(PetscMalloc1(d->sr.n, &order));
      for (PetscInt i = 0; i < d->sr.n; i++) order[i] = i;
      for (PetscInt i = 1; i < d->sr.n; i++) { /* by R2, best first */
        PetscInt x = order[i], j = i - 1;
        while (j >= 0 && d->sr.evals[order[j]].r2 < d->sr.evals[x].r2) {
          order[j + 1] = order[j];
          j--;
        }
        order[j + 1] = x;
      }
      for (PetscInt i = 0; i < d->sr.n && ntop < d->topk; i++) {
        PetscBool dup = PETSC_FALSE;
        for (PetscInt t = 0; t < ntop; t++) dup = (PetscBool)(dup || SgPodLstmArchEqual(&top[t], &d->sr.evals[order[i]].arch));
        if (dup) continue;
        top[ntop] = d->sr.evals[order[i]].arch;
        if (!d->retrain_epochs) { /* the searched weights */
          char path[PETSC_MAX_PATH_LEN + 64];
          PetscCall(SgPodLstmNetCreate(&top[ntop], d->K, d->L, (SgPodLstmHead)d->head, d->be, SGNN_F64, &nets[ntop]));
          PetscCall(PetscSNPrintf(path, sizeof path, "%s/cand_%" PetscInt_FMT ".h5", sc.logdir, d->sr.evals[order[i]].id));
          PetscCall(SgPodLstmWeightsRead(path, nets[ntop]));
          r2[ntop] = d->sr.evals[order[i]].r2;
        }
        ntop++;
      }
      PetscCall(PetscFree(order));
    }
    if (d->retrain_epochs) PetscCall(TrainTasks(s, &fc, ntop, top, nets, r2));
  } else if (d->networks[0]) { /* read above: their validation R2 */
    PetscReal *yhat;
    PetscCall(PetscMalloc1(S.nva * d->L * d->K, &yhat));
    for (PetscInt t = 0; t < ntop; t++) {
      PetscCall(SgPodLstmNetPredict(nets[t], S.nva, d->L, vx, yhat));
      r2[t] = SgPodLstmR2(S.nva, d->L * d->K, vy, yhat);
    }
    PetscCall(PetscFree(yhat));
  } else {
    PetscCall(SgPodLstmArchFromString(comm, d->arch, &top[0]));
    ntop = 1;
    PetscCall(TrainTasks(s, &fc, 1, top, nets, r2));
  }
  for (PetscInt t = 0; t < ntop; t++) {
    PetscCall(SgPodLstmArchToString(&top[t], s1, sizeof s1));
    PetscCall(PetscPrintf(comm, "podlstm: model %" PetscInt_FMT ": '%s', validation R2 %.5f\n", t, s1, (double)r2[t]));
  }
  PetscCall(Fallback(s, &D, &S, coef, nets[0]));
  /* the model */
  d->M.K = d->K;
  d->M.L = d->L;
  d->M.head = (SgPodLstmHead)d->head;
  d->M.nfields = D.nfields;
  d->M.dt = D.dt;
  d->M.nmodels = ntop;
  PetscCall(PetscStrncpy(d->M.physics, D.physics, sizeof d->M.physics));
  for (PetscInt f = 0; f < D.nfields; f++) {
    PetscCall(PetscStrncpy(d->M.field[f], D.field[f], sizeof d->M.field[f]));
    d->M.fsize[f] = D.fsize[f];
    d->M.fshape[f][0] = D.fshape[f][0];
    d->M.fshape[f][1] = D.fshape[f][1];
    d->M.fscale[f] = D.fscale[f];
  }
  PetscCall(PetscMalloc2(d->K, &d->M.lo, d->K, &d->M.hi));
  PetscCall(PetscArraycpy(d->M.lo, S.lo, d->K));
  PetscCall(PetscArraycpy(d->M.hi, S.hi, d->K));
  for (PetscInt t = 0; t < ntop; t++) d->M.nets[t] = nets[t];
  d->have_model = PETSC_TRUE;
  /* scores on the test period */
  PetscCall(PetscMemzero(&d->scores, sizeof d->scores));
  PetscCall(PetscMalloc1(S.nte * d->L * d->K, &ahat));
  for (PetscInt w = 0; w < S.nte; w++) PetscCall(PetscArraycpy(ahat + w * d->L * d->K, coef + (S.s_te0 + w + d->L) * d->K, d->L * d->K));
  PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, "POD truth (the floor)", ahat, &d->scores));
  PetscCall(SgPodLstmForecast(nets[0], &S, ahat));
  PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, d->search < 2 ? "POD-LSTM (searched)" : "POD-LSTM", ahat, &d->scores));
  if (ntop > 1) { /* the mean of the top-k */
    PetscReal *acc;
    PetscCall(PetscCalloc1(S.nte * d->L * d->K, &acc));
    for (PetscInt t = 0; t < ntop; t++) {
      PetscCall(SgPodLstmForecast(nets[t], &S, ahat));
      for (PetscInt i = 0; i < S.nte * d->L * d->K; i++) acc[i] += ahat[i] / ntop;
    }
    PetscCall(PetscSNPrintf(s1, sizeof s1, "POD-LSTM (top-%" PetscInt_FMT " mean)", ntop));
    PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, s1, acc, &d->scores));
    PetscCall(PetscFree(acc));
  }
  if (d->baselines) {
    SgPodLstmArch hand;
    SgPodLstmNet  hnet[1];
    PetscReal     hr2;
    PetscInt      p;
    PetscCall(SgPodLstmArchFromString(comm, d->hand, &hand));
    PetscCall(TrainTasks(s, &fc, 1, &hand, hnet, &hr2));
    PetscCall(SgPodLstmForecast(hnet[0], &S, ahat));
    PetscCall(PetscSNPrintf(s1, sizeof s1, "hand LSTM (%s)", d->hand));
    PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, s1, ahat, &d->scores));
    PetscCall(PetscPrintf(comm, "podlstm: hand-designed baseline '%s', validation R2 %.5f\n", d->hand, (double)hr2));
    PetscCall(SgPodLstmNetDestroy(&hnet[0]));
    PetscCall(SgPodLstmVAR(&D, &S, coef, &p, ahat));
    PetscCall(PetscSNPrintf(s1, sizeof s1, "VAR(%" PetscInt_FMT ") on coefficients", p));
    PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, s1, ahat, &d->scores));
    if (d->M.base.nq) { /* the quadratic base alone (fitted on the fitting period, as the networks saw it) */
      for (PetscInt w = 0; w < S.nte; w++) SgPodLstmVARIterate(&d->M.base, d->L, coef + (S.s_te0 + w) * d->K, ahat + w * d->L * d->K);
      PetscCall(PetscSNPrintf(s1, sizeof s1, "quadratic regression (%" PetscInt_FMT " lags, ridge %g)", d->M.base.p, (double)d->M.base.ridge));
      PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, s1, ahat, &d->scores));
    }
    PetscCall(SgPodLstmScorePersistence(&D, &S, &d->scores));
    if (d->year > 0) PetscCall(SgPodLstmScoreClimatology(&D, &S, d->year, &d->scores));
    if (d->harmonics) { /* the linear inverse models */
      PetscReal *amap;
      PetscCall(PetscMalloc1(S.nte * d->L * d->K, &amap));
      PetscCall(SgPodLstmLIM(&D, &S, coef, &p, ahat, amap));
      PetscCall(PetscSNPrintf(s1, sizeof s1, "LIM: climatology + VAR(%" PetscInt_FMT ") of anomalies", p));
      PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, s1, ahat, &d->scores));
      PetscCall(SgPodLstmScoreCoefficients(&D, d->M.pod, &S, "LIM: map of anomalies + season", amap, &d->scores));
      PetscCall(PetscFree(amap));
    }
  }
  {
    const SgPodLstmScores *sc = &d->scores;
    for (PetscInt f = 0; f < D.nfields; f++) {
      PetscCall(PetscPrintf(comm, "podlstm: test RMSE of %s over %" PetscInt_FMT " windows x %" PetscInt_FMT " steps (its units):\n", D.field[f], sc->nwindows, sc->L));
      PetscCall(PetscPrintf(comm, "podlstm:   %-34s %11s %11s %11s\n", "method", "all leads", "lead 1", "lead L"));
      for (PetscInt m = 0; m < sc->nmethods; m++) PetscCall(PetscPrintf(comm, "podlstm:   %-34s %11.5f %11.5f %11.5f\n", sc->method[m], (double)sc->rmse[m][f], (double)sc->lead[m][f][0], (double)sc->lead[m][f][sc->L - 1]));
      if (sc->L <= 16) PetscCall(PrintLeads(comm, sc, f, D.field[f], d->field_points > 0 ? PetscSqrtReal(D.nactive / d->field_points) : 1, d->field_points > 0));
    }
  }
  PetscCall(PetscFree(ahat));
  PetscCall(PetscFree(coef));
  PetscCall(PetscFree2(vx, vy));
  PetscCall(PetscFree(vyr));
  PetscCall(SgPodLstmSeriesFree(&S));
  PetscCall(SgPodLstmDataFree(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Save_PodLstm(SgSurrogate s, const char path[])
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;

  PetscFunctionBegin;
  PetscCheck(d->have_model, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "podlstm: nothing to save: train or load a model first");
  PetscCall(SgPodLstmModelSave(PetscObjectComm((PetscObject)s), &d->M, path, d->scores.nmethods ? &d->scores : NULL, d->have_search ? &d->sr : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Load_PodLstm(SgSurrogate s, const char path[])
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;
  SgnnBackend         *be;

  PetscFunctionBegin;
  if (d->have_model) PetscCall(SgPodLstmModelFree(&d->M));
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgPodLstmModelLoad(PetscObjectComm((PetscObject)s), path, d->be ? d->be : be, &d->M));
  d->have_model = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode View_PodLstm(SgSurrogate s, PetscViewer v)
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "POD-LSTM: %" PetscInt_FMT " modes, windows %" PetscInt_FMT " -> %" PetscInt_FMT ", search %s, %" PetscInt_FMT " network(s)\n", d->K, d->L, d->L, SearchChoices[d->search], d->have_model ? d->M.nmodels : 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy_PodLstm(SgSurrogate s)
{
  SgSurrogate_PodLstm *d = (SgSurrogate_PodLstm *)s->data;

  PetscFunctionBegin;
  if (d->have_model) PetscCall(SgPodLstmModelFree(&d->M));
  else {
    PetscCall(SgPODDestroy(&d->M.pod));
    PetscCall(SgPodLstmVARFree(&d->M.base));
    PetscCall(SgPodLstmVARFree(&d->M.fallback));
  }
  if (d->have_search) PetscCall(SgPodLstmSearchResultFree(&d->sr));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_PodLstm(SgSurrogate s)
{
  SgSurrogate_PodLstm *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->member = -1;
  d->ntrain = 427;
  d->valid_fraction = 0.2;
  d->K = 5;
  d->L = 8;
  d->evaluations = 40;
  d->population = 10;
  d->sample = 3;
  d->epochs = 20;
  d->patience = 5;
  d->rollout = 1;
  d->batch = 32;
  d->lr = 1e-3;
  d->lr_min = 1e-5;
  d->decay_rate = 0.5;
  d->decay_epochs = 20;
  d->step = 7;
  sgnn_optim_defaults(SGNN_ADAM, &d->oc);
  d->oc.lr = d->lr;
  PetscCall(PetscStrncpy(d->compress, "none", sizeof d->compress));
  d->cub_sync = -1; /* the trainer's */
  d->grad_open = 3;  /* the trainer's default */
  d->topk = 5;
  d->retrain_patience = 15;
  d->seed = 1;
  d->baselines = PETSC_TRUE;
  d->verbose = PETSC_TRUE;
  d->head = SG_PODLSTM_HEAD_WINDOW;
  d->space.nlayers = 5;
  d->space.umin = 16;
  d->space.umax = 96;
  d->space.ustep = 16;
  PetscCall(PetscStrncpy(d->svd, "trlanczos", sizeof d->svd));
  PetscCall(PetscStrncpy(d->arch, "L64 L64", sizeof d->arch));
  PetscCall(PetscStrncpy(d->hand, "L64 L64", sizeof d->hand));
  PetscCall(PetscStrncpy(d->prefix, "podlstm", sizeof d->prefix));
  s->data                = d;
  s->ops->setfromoptions = SetFromOptions_PodLstm;
  s->ops->setup          = SetUp_PodLstm;
  s->ops->train          = Train_PodLstm;
  s->ops->save           = Save_PodLstm;
  s->ops->load           = Load_PodLstm;
  s->ops->view           = View_PodLstm;
  s->ops->advanceprovider = SgPodLstmAdvanceProvider; /* provider.c */
  s->ops->destroy        = Destroy_PodLstm;
  PetscFunctionReturn(PETSC_SUCCESS);
}
