/* SgSurrogate type "deepmd": the Deep Potential (se_e2_a) as a trainable surrogate.
   Deck section `deepmd:` (options -deepmd_*), DeePMD-kit's names and defaults where they exist
   (its water example: rcut 6, rcut_smth 0.5, sel [46, 92], neuron [25, 50, 100], axis_neuron 16,
   fitting_net [240, 240, 240], start_lr 1e-3, stop_lr 3.51e-8, decay_steps 5000, batch 1,
   prefactors e 0.02 -> 1, f 1000 -> 1, v 0 -> 0). See docs/deepmd.md. */
#include "deepmd_train.h"
#include "sgdeepmd.h"
#include "sgsurrogateimpl.h"
#include "sgdataset.h"
#include "sgtrainer.h"
#include "sgnnbackend.h"
#include <sys/stat.h>
#include <stdlib.h>

typedef struct {
  SgDPConfig     cfg;
  SgDPTrainOpts  opt;
  PetscInt       ntm;
  SgDPModel      model;
  SgnnBackend    *be; /* -nn_backend */
} SgSurrogate_DeepMD;

static PetscErrorCode SetFromOptions_DeepMD(SgSurrogate s, PetscOptionItems *PetscOptionsObject)
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;
  SgDPConfig         *c = &d->cfg;
  SgDPTrainOpts      *o = &d->opt;
  char               *strs[SG_DP_MAXT > 16 ? SG_DP_MAXT : 16];
  PetscInt            n;
  PetscBool           set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Deep Potential se_e2_a (deck section deepmd:)");
  n = 16;
  PetscCall(SgOptionsPathArray("-data", "Training md_frames datasets (HDF5) or DeePMD-kit system directories (imported); files with different atom lists are separate systems, trained together", SG_PATH_IN, strs, &n, &set));
  o->nfiles = set ? n : 0;
  for (PetscInt i = 0; i < o->nfiles; i++) {
    PetscCall(PetscStrncpy(o->files[i], strs[i], PETSC_MAX_PATH_LEN));
    PetscCall(PetscFree(strs[i]));
  }
  n = 16;
  PetscCall(SgOptionsPathArray("-valid_data", "Validation md_frames datasets or DeePMD-kit directories (dp test at the end)", SG_PATH_IN, strs, &n, &set));
  o->nvalid = set ? n : 0;
  for (PetscInt i = 0; i < o->nvalid; i++) {
    PetscCall(PetscStrncpy(o->valid[i], strs[i], PETSC_MAX_PATH_LEN));
    PetscCall(PetscFree(strs[i]));
  }
  n = SG_DP_MAXT;
  PetscCall(SgOptionsStringArray("-type_map", "Element of each model type (default: the first dataset's type_map)", strs, &n, &set));
  d->ntm = set ? n : 0;
  for (PetscInt i = 0; i < d->ntm; i++) {
    PetscCall(PetscStrncpy(c->type_map[i], strs[i], sizeof c->type_map[i]));
    PetscCall(PetscFree(strs[i]));
  }
  PetscCall(SgOptionsReal("-rcut", "Cutoff radius", "length (Angstrom)", c->rcut, &c->rcut, NULL, 1e-3, 1e3));
  PetscCall(SgOptionsReal("-rcut_smth", "Start of the C2 switching region", "length (Angstrom)", c->rcut_smth, &c->rcut_smth, NULL, 0, 1e3));
  n = SG_DP_MAXT;
  PetscCall(SgOptionsIntArray("-sel", "Maximum neighbours of each type within rcut (one per type)", c->sel, &n, &set, 1, 100000));
  if (set) c->ntypes = n;
  n = SG_DP_MAXL;
  PetscCall(SgOptionsIntArray("-neuron", "Embedding net widths", c->emb, &n, &set, 1, 4096));
  if (set) c->nemb = n;
  PetscCall(SgOptionsInt("-axis_neuron", "Embedding columns in the second factor of the descriptor (M2)", c->axis, &c->axis, NULL, 1, 4096));
  n = SG_DP_MAXL;
  PetscCall(SgOptionsIntArray("-fitting_neuron", "Fitting net widths", c->fit, &n, &set, 1, 4096));
  if (set) c->nfit = n;
  PetscCall(SgOptionsBool("-resnet_dt", "Trainable timestep on the fitting net's residual layers", c->fit_resnet_dt, &c->fit_resnet_dt, NULL));
  PetscCall(SgOptionsBool("-embedding_resnet_dt", "Trainable timestep on the embedding net's residual layers", c->emb_resnet_dt, &c->emb_resnet_dt, NULL));
  {
    PetscBool one_side = (PetscBool)!c->type_pair;
    PetscCall(SgOptionsBool("-type_one_side", "Embedding nets per neighbour type (true) or per (centre, neighbour) type pair (false, DeePMD-kit's default)", one_side, &one_side, NULL));
    c->type_pair = (PetscBool)!one_side;
  }
  {
    static const char *const kinds[] = {"se_e2_a", "se_e2_r"};
    PetscInt                 ki = c->radial ? 1 : 0;
    PetscCall(SgOptionsEList("-descriptor", "Descriptor (DeePMD-kit's descriptor type): se_e2_a (radial and angular, D = T T<^T) or se_e2_r (radial only, D = mean embedding / 5; axis_neuron unused)", kinds, 2, kinds[ki], &ki, NULL));
    c->radial = ki ? PETSC_TRUE : PETSC_FALSE;
    if (c->radial) c->axis = 1;
  }
  { /* DeePMD-kit's descriptor.activation_function, fitting_net.activation_function and
       descriptor.exclude_types (a deck has no nested lists: the pairs flattened, [[0, 1]] -> [0, 1]) */
    PetscInt ex[2 * SG_DP_MAXT * SG_DP_MAXT], nex = 2 * SG_DP_MAXT * SG_DP_MAXT;
    PetscCall(SgOptionsEList("-activation_function", "Activation of the embedding nets (DeePMD-kit's descriptor.activation_function)", SgDPActNames, SG_DP_NACT, SgDPActNames[c->act], &c->act, NULL));
    PetscCall(SgOptionsEList("-fitting_activation_function", "Activation of the fitting nets (DeePMD-kit's fitting_net.activation_function)", SgDPActNames, SG_DP_NACT, SgDPActNames[c->fit_act], &c->fit_act, NULL));
    PetscCall(SgOptionsIntArray("-exclude_types", "Type pairs whose neighbours do not enter the descriptor, flattened: [0, 1, 1, 1] is DeePMD-kit's [[0, 1], [1, 1]] (se_e2_a)", ex, &nex, &set, 0, SG_DP_MAXT - 1));
    if (set) {
      PetscCheck(nex % 2 == 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "deepmd: exclude_types has %" PetscInt_FMT " entries: give pairs of type indices, [[0, 1]] flattened to [0, 1]", nex);
      for (PetscInt q = 0; q < nex; q += 2) c->excl[ex[q]][ex[q + 1]] = c->excl[ex[q + 1]][ex[q]] = PETSC_TRUE;
    }
  }
  {
    static const char *const precisions[] = {"float64", "float32"};
    PetscInt                 pi = c->precision == 32 ? 1 : 0;
    PetscCall(SgOptionsEList("-precision", "Floats of the training graph and its weights (model files and inference stay float64)", precisions, 2, precisions[pi], &pi, NULL));
    c->precision = pi ? 32 : 64;
  }
  PetscCall(SgOptionsInt("-seed", "Seed of the weight initialisation and the data order", o->seed, &o->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-numb_steps", "Training steps (batches); 0 with init_model: no training, only dp test of the model on valid_data", o->numb_steps, &o->numb_steps, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-batch_size", "Frames per (global) batch", o->batch_size, &o->batch_size, NULL, 1, 100000));
  PetscCall(SgOptionsInt("-disp_freq", "Steps between progress lines (validation RMSE)", o->disp_freq, &o->disp_freq, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-decay_steps", "Steps per learning-rate decay", o->decay_steps, &o->decay_steps, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-start_lr", "Initial learning rate", "", o->start_lr, &o->start_lr, NULL, 0, 10));
  PetscCall(SgOptionsReal("-stop_lr", "Learning rate reached at numb_steps (sets the decay rate)", "", o->stop_lr, &o->stop_lr, NULL, 0, 10));
  PetscCall(SgOptionsReal("-start_pref_e", "Energy loss prefactor at the start", "", o->start_pref_e, &o->start_pref_e, NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-limit_pref_e", "Energy loss prefactor at lr -> 0", "", o->limit_pref_e, &o->limit_pref_e, NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-start_pref_f", "Force loss prefactor at the start", "", o->start_pref_f, &o->start_pref_f, NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-limit_pref_f", "Force loss prefactor at lr -> 0", "", o->limit_pref_f, &o->limit_pref_f, NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-start_pref_v", "Virial loss prefactor at the start", "", o->start_pref_v, &o->start_pref_v, NULL, 0, 1e6));
  PetscCall(SgOptionsReal("-limit_pref_v", "Virial loss prefactor at lr -> 0", "", o->limit_pref_v, &o->limit_pref_v, NULL, 0, 1e6));
  PetscCall(SgOptionsInt("-stat_frames", "Frames used for the environment statistics (davg/dstd)", o->stat_frames, &o->stat_frames, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-valid_frames", "Validation frames used at each progress line, shared among the valid_data files in proportion to their sizes (0 = all)", o->valid_frames, &o->valid_frames, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-max_time", "Stop training after this wall time (0 = no limit)", "s", o->max_time, &o->max_time, NULL, 0, 1e9));
  PetscCall(SgOptionsInt("-save_freq", "Write a checkpoint (model + step, Adam state: restart continues from it) to save_ckpt every this many steps (0 = only at a max_time stop)", o->save_freq, &o->save_freq, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsPath("-save_ckpt", "Checkpoint file written every save_freq steps (continue the run with restart, or start a new one from it with init_model)", SG_PATH_OUT, o->save_ckpt, o->save_ckpt, sizeof o->save_ckpt, NULL));
  PetscCall(SgOptionsPath("-init_model", "Start from this model file (weights and statistics; its architecture wins over the deck's)", SG_PATH_IN, o->init_model, o->init_model, sizeof o->init_model, NULL));
  PetscCall(SgOptionsBool("-change_bias", "Do not train: shift init_model's per-type energy bias to fit the energies of data by least squares (DeePMD-kit's dp change-bias) and write it to the output", o->change_bias, &o->change_bias, NULL));
  PetscCall(SgOptionsPath("-restart", "Continue an interrupted run from its save_ckpt checkpoint (step, Adam state, data position; same deck and ranks)", SG_PATH_RESUME, o->restart, o->restart, sizeof o->restart, NULL));
  PetscCall(SgOptionsPath("-test_detail", "Prefix of dp test's detail files for valid_data at the end (PREFIX.e.out, .e_peratom.out, .f.out, .v.out, .v_peratom.out, DeePMD-kit's format)", SG_PATH_OUT_BASE, o->test_detail, o->test_detail, sizeof o->test_detail, NULL));
  PetscCall(SgOptionsPath("-lcurve", "Learning-curve file written by rank 0 (empty = none)", SG_PATH_OUT, o->lcurve, o->lcurve, sizeof o->lcurve, NULL));
  PetscCall(SgTrainerOptionsSync(PetscOptionsObject, o->sync, sizeof o->sync, &o->sync_bucket_kb)); /* -deepmd_sync, -deepmd_sync_bucket_kb */
  PetscCall(SgTrainerOptionsOptimizer(PetscOptionsObject, &o->oc, &o->shard, o->compress, sizeof o->compress, &o->cub_sync)); /* -deepmd_optimizer, _lion_beta*, _weight_decay, _shard, _compress */
  PetscCall(SgTrainerOptionsSdp4bit(PetscOptionsObject, &o->sdp_node));
  PetscCall(SgTrainerOptionsShardBucket(PetscOptionsObject, &o->shard_bucket)); /* -deepmd_shard_bucket_bytes */
  PetscCall(SgTrainerOptionsShardGradOpen(PetscOptionsObject, &o->grad_open)); /* -deepmd_shard_grad_open_buckets */
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A DeePMD-kit system directory given as data is imported (rank 0) into an md_frames file in
   $TMPDIR (or /tmp) named after the directory's hash, and that file is used instead. */
static PetscErrorCode ImportDirs(MPI_Comm comm, PetscInt n, char (*files)[PETSC_MAX_PATH_LEN])
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (PetscInt i = 0; i < n; i++) {
    struct stat st;
    if (stat(files[i], &st) || !S_ISDIR(st.st_mode)) continue;
    const char *tmp = getenv("TMPDIR");
    char        out[PETSC_MAX_PATH_LEN];
    const char *dirs[1] = {files[i]};
    PetscCall(PetscSNPrintf(out, sizeof out, "%s/surge_deepmd_%016llx.h5", tmp && tmp[0] ? tmp : "/tmp", (unsigned long long)SgHash64(files[i], strlen(files[i]), 7)));
    if (!rank) PetscCall(SgDeepmdImport(PETSC_COMM_SELF, 1, dirs, out, PETSC_TRUE));
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscPrintf(comm, "deepmd: imported DeePMD-kit directory %s -> %s\n", files[i], out));
    PetscCall(PetscStrncpy(files[i], out, PETSC_MAX_PATH_LEN));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The model's training graph must live on the -nn_backend backend: never train silently elsewhere. */
static PetscErrorCode CheckBackend(SgSurrogate s)
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;

  PetscFunctionBegin;
  PetscCheck(d->be == d->model->be, PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "deepmd: -nn_backend %s: the Deep Potential's model is built on the %s backend in this version; use -nn_backend %s", sgnn_backend_name(d->be), sgnn_backend_name(d->model->be), sgnn_backend_name(d->model->be));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUp_DeepMD(SgSurrogate s)
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;
  MPI_Comm            comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  PetscCall(SgNNBackendFromOptions(comm, &d->be)); /* refused here, on every rank, where it is not available */
  if (d->model) PetscCall(CheckBackend(s));
  if (d->model) PetscFunctionReturn(PETSC_SUCCESS); /* loaded */
  PetscCheck(d->opt.nfiles > 0 || (d->opt.numb_steps == 0 && !d->opt.change_bias), comm, PETSC_ERR_USER_INPUT, "deepmd: no training data: set deepmd: {data: [train.h5, ...]}");
  PetscCall(ImportDirs(comm, d->opt.nfiles, d->opt.files));
  PetscCall(ImportDirs(comm, d->opt.nvalid, d->opt.valid));
  PetscCheck(!d->opt.init_model[0] || !d->opt.restart[0], comm, PETSC_ERR_USER_INPUT, "deepmd: both init_model (%s) and restart (%s) given: init_model starts a new schedule from a model's weights, restart continues an interrupted run; choose one", d->opt.init_model, d->opt.restart);
  PetscCheck(!d->opt.change_bias || (d->opt.init_model[0] && !d->opt.restart[0]), comm, PETSC_ERR_USER_INPUT, "deepmd: change_bias refits the energy bias of a trained model: set deepmd: {init_model: MODEL.h5} (and no restart)");
  PetscCheck(d->opt.numb_steps > 0 || (d->opt.init_model[0] && d->opt.nvalid > 0), comm, PETSC_ERR_USER_INPUT, "deepmd: numb_steps 0 trains nothing; it tests a trained model (dp test): set deepmd: {init_model: MODEL.h5, valid_data: [frames.h5]}");
  if (d->opt.init_model[0] || d->opt.restart[0]) {
    const char *from = d->opt.restart[0] ? d->opt.restart : d->opt.init_model;
    PetscCall(SgDPModelLoad(from, &d->model));
    PetscCall(SgDPModelSetPrecision(&d->model, d->cfg.precision ? d->cfg.precision : 64)); /* the deck's */
    d->cfg = d->model->cfg;
    PetscCall(PetscPrintf(comm, "deepmd: continuing from %s (its architecture, statistics and weights)\n", from));
    PetscCall(CheckBackend(s));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!d->ntm) { /* the first dataset's element names */
    SgDataset ds;
    PetscInt  nt;
    char    **tm;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, d->opt.files[0], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetReadStrings(ds, "type_map", &nt, &tm));
    PetscCheck(nt <= SG_DP_MAXT, comm, PETSC_ERR_SUP, "deepmd: %" PetscInt_FMT " types in %s; at most %d", nt, d->opt.files[0], SG_DP_MAXT);
    for (PetscInt i = 0; i < nt; i++) PetscCall(PetscStrncpy(d->cfg.type_map[i], tm[i], sizeof d->cfg.type_map[i]));
    PetscCall(SgDatasetStringsFree(nt, &tm));
    PetscCall(SgDatasetClose(&ds));
    d->ntm = nt;
  }
  PetscCheck(d->ntm == d->cfg.ntypes, comm, PETSC_ERR_USER_INPUT, "deepmd: sel has %" PetscInt_FMT " entries but there are %" PetscInt_FMT " types (%s, ...): give one sel per type", d->cfg.ntypes, d->ntm, d->cfg.type_map[0]);
  d->cfg.seed = d->opt.seed;
  PetscCall(SgDPModelCreate(&d->cfg, &d->model));
  PetscCall(SgDPModelInitWeights(d->model, (unsigned long long)d->opt.seed * 7919ULL + 1));
  PetscCall(CheckBackend(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Train_DeepMD(SgSurrogate s)
{
  SgSurrogate_DeepMD *d    = (SgSurrogate_DeepMD *)s->data;
  MPI_Comm            comm = PetscObjectComm((PetscObject)s);
  SgDPTestResult      r;

  PetscFunctionBegin;
  if (d->opt.nvalid && d->opt.test_detail[0]) PetscCall(SgDPTestDetailCheck(comm, d->opt.test_detail)); /* before the first step */
  if (d->opt.change_bias) PetscCall(SgDPChangeBias(d->model, d->opt.nfiles, d->opt.files, comm));
  else if (d->opt.numb_steps > 0) PetscCall(SgDPTrain(d->model, &d->opt, comm));
  if (d->opt.nvalid) {
    PetscCall(SgDPTest(d->model, d->opt.nvalid, d->opt.valid, 0, d->opt.test_detail[0] ? d->opt.test_detail : NULL, comm, &r));
    PetscCall(PetscPrintf(comm, "deepmd: validation (dp test) on %s%s:\n", d->opt.valid[0], d->opt.nvalid > 1 ? ", ..." : ""));
    PetscCall(SgDPTestPrint(comm, &r));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Save_DeepMD(SgSurrogate s, const char path[])
{
  SgSurrogate_DeepMD *d    = (SgSurrogate_DeepMD *)s->data;
  MPI_Comm            comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt         rank;

  PetscFunctionBegin;
  PetscCheck(d->model, comm, PETSC_ERR_ORDER, "deepmd: nothing to save: train or load a model first");
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0 writes; its refusal (NaN weights) or failure is every rank's (src/base/agree.c) */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = SgDPModelSave(d->model, path);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Load_DeepMD(SgSurrogate s, const char path[])
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;

  PetscFunctionBegin;
  PetscCall(SgDPModelDestroy(&d->model));
  PetscCall(SgDPModelLoad(path, &d->model));
  d->cfg = d->model->cfg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* md.forces: the models named by -md_deepmd_models (a K-model ensemble gives the model deviation) */
static PetscErrorCode ForcesProvider_DeepMD(SgSurrogate s, const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  PetscFunctionBegin;
  (void)s;
  PetscCall(SgDeepmdForcesProviderCreate(info, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode View_DeepMD(SgSurrogate s, PetscViewer v)
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;
  const SgDPConfig   *c = &d->cfg;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "Deep Potential %s: rcut %g (smooth from %g), %" PetscInt_FMT " types, nnei %" PetscInt_FMT ", M %" PetscInt_FMT ", axis %" PetscInt_FMT ", %" PetscInt_FMT " embedding nets (%s)\n", c->radial ? "se_e2_r" : "se_e2_a", (double)c->rcut, (double)c->rcut_smth, c->ntypes, c->nnei, c->emb[c->nemb - 1], c->axis, SgDPNumEmbed(c), c->type_pair ? "per type pair" : "per neighbour type"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy_DeepMD(SgSurrogate s)
{
  SgSurrogate_DeepMD *d = (SgSurrogate_DeepMD *)s->data;

  PetscFunctionBegin;
  PetscCall(SgDPModelDestroy(&d->model));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_DeepMD(SgSurrogate s)
{
  SgSurrogate_DeepMD *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  SgDPConfig *c = &d->cfg;
  c->ntypes = 2;
  c->sel[0] = 46;
  c->sel[1] = 92;
  c->rcut = 6.0;
  c->rcut_smth = 0.5;
  c->nemb = 3;
  c->emb[0] = 25;
  c->emb[1] = 50;
  c->emb[2] = 100;
  c->axis = 16;
  c->nfit = 3;
  c->fit[0] = c->fit[1] = c->fit[2] = 240;
  c->fit_resnet_dt = PETSC_TRUE;
  c->emb_resnet_dt = PETSC_FALSE;
  SgDPTrainOpts *o = &d->opt;
  o->numb_steps = 1000;
  o->batch_size = 1;
  o->disp_freq = 100;
  o->decay_steps = 5000;
  o->stat_frames = 100;
  o->valid_frames = 20;
  o->seed = 1;
  o->start_lr = 1e-3;
  sgnn_optim_defaults(SGNN_ADAM, &o->oc); /* DeePMD-kit's Adam */
  PetscCall(PetscStrncpy(o->compress, "none", sizeof o->compress));
  o->cub_sync = -1; /* the trainer's */
  o->grad_open = 3; /* the trainer's default, shown in -help */
  o->stop_lr = 3.51e-8;
  o->start_pref_e = 0.02;
  o->limit_pref_e = 1;
  o->start_pref_f = 1000;
  o->limit_pref_f = 1;
  o->start_pref_v = 0;
  o->limit_pref_v = 0;
  s->data                = d;
  s->ops->setfromoptions = SetFromOptions_DeepMD;
  s->ops->setup          = SetUp_DeepMD;
  s->ops->train          = Train_DeepMD;
  s->ops->save           = Save_DeepMD;
  s->ops->load           = Load_DeepMD;
  s->ops->forcesprovider = ForcesProvider_DeepMD;
  s->ops->view           = View_DeepMD;
  s->ops->destroy        = Destroy_DeepMD;
  PetscFunctionReturn(PETSC_SUCCESS);
}
