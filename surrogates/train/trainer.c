/* SgTrainer object: settings, options, set-up, view, destroy (the step loop is in train.c). */
#include "sgtrainerimpl.h"
#include "sgsys.h"

PETSC_INTERN PetscFunctionList SgTrainerSyncList;
PetscClassId                   SG_TRAINER_CLASSID;
PetscLogEvent SG_TRAINER_Step, SG_TRAINER_Loss, SG_TRAINER_Backward, SG_TRAINER_Sync, SG_TRAINER_Update, SG_TRAINER_Monitor, SG_TRAINER_Checkpoint;
static PetscBool registered = PETSC_FALSE;

PetscErrorCode SgTrainerInitializePackage(void)
{
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(PETSC_SUCCESS);
  registered = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("SgTrainer", &SG_TRAINER_CLASSID));
  /* -log_view: one event per stage of a step, so the cost of each shows */
  PetscCall(PetscLogEventRegister("SgTrainStep", SG_TRAINER_CLASSID, &SG_TRAINER_Step));
  PetscCall(PetscLogEventRegister("SgTrainLoss", SG_TRAINER_CLASSID, &SG_TRAINER_Loss));
  PetscCall(PetscLogEventRegister("SgTrainBackward", SG_TRAINER_CLASSID, &SG_TRAINER_Backward));
  PetscCall(PetscLogEventRegister("SgTrainSync", SG_TRAINER_CLASSID, &SG_TRAINER_Sync));
  PetscCall(PetscLogEventRegister("SgTrainUpdate", SG_TRAINER_CLASSID, &SG_TRAINER_Update));
  PetscCall(PetscLogEventRegister("SgTrainMonitor", SG_TRAINER_CLASSID, &SG_TRAINER_Monitor));
  PetscCall(PetscLogEventRegister("SgTrainCheckpoint", SG_TRAINER_CLASSID, &SG_TRAINER_Checkpoint));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerCreate(MPI_Comm comm, SgTrainer *out)
{
  SgTrainer t;

  PetscFunctionBegin;
  PetscCall(SgTrainerInitializePackage());
  PetscCall(PetscHeaderCreate(t, SG_TRAINER_CLASSID, "SgTrainer", "Surrogate training pipeline", "SgTrainer", comm, SgTrainerDestroy, SgTrainerView));
  PetscCall(PetscStrncpy(t->name, "train", sizeof t->name));
  PetscCall(PetscStrncpy(t->synctype, "bucketed", sizeof t->synctype));
  t->bucket_bytes = 1 << 20; /* 1 MiB: a few buckets for models of 10^5..10^6 parameters */
  t->scaling      = SG_TRAINER_LOSS_SUM;
  t->batch        = 1;
  t->disp         = 100;
  t->nsteps       = 1;
  t->sranks       = 1; /* and dgroups 0: every rank its own data group */
  PetscCall(PetscStrncpy(t->compress, "none", sizeof t->compress));
  t->zgb_open = 3;  /* gradient buckets open at once (zerograd.c; -train_shard_grad_open_buckets) */
  t->cub_sync = 10; /* lion_cub: momenta averaged every 10 steps (our default; -train_lion_cub_sync) */
  sgnn_optim_defaults(SGNN_ADAM, &t->oc);
  t->sched.kind = SGNN_LR_CONST;
  t->sched.lr0 = t->oc.lr;
  PetscCall(SgTrainerPlateauDefault(&t->plateau));
  PetscCall(SgTrainerPlateauReset(t));
  *out = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define SG_TRAINER_SETTER_CHECK(t) \
  do { \
    PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1); \
    PetscCheck(!(t)->setupcalled, PetscObjectComm((PetscObject)(t)), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()"); \
  } while (0)

PetscErrorCode SgTrainerSetModel(SgTrainer t, SgnnParams P)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->P = P;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetOps(SgTrainer t, const SgTrainerOps *ops, void *ctx)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->ops_s = *ops;
  t->ctx   = ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetLossScaling(SgTrainer t, SgTrainerLossScaling s)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->scaling = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetName(SgTrainer t, const char name[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCall(PetscStrncpy(t->name, name, sizeof t->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetMetrics(SgTrainer t, PetscInt nsums, PetscInt ncols, const char *const cols[], const char lcurve_header[])
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(nsums >= 0 && ncols >= 0 && ncols <= SG_TRAINER_MAXCOLS, PetscObjectComm((PetscObject)t), PETSC_ERR_ARG_OUTOFRANGE, "SgTrainer: %" PetscInt_FMT " sums and %" PetscInt_FMT " columns; at most %d columns", nsums, ncols, SG_TRAINER_MAXCOLS);
  for (PetscInt i = 0; i < t->ncols; i++) PetscCall(PetscFree(t->cols[i]));
  PetscCall(PetscFree(t->lcurve_header));
  t->nsums = nsums;
  t->ncols = ncols;
  for (PetscInt i = 0; i < ncols; i++) PetscCall(PetscStrallocpy(cols[i], &t->cols[i]));
  PetscCall(PetscStrallocpy(lcurve_header, &t->lcurve_header));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetFields(SgTrainer t, PetscInt n, const char *const names[])
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(n >= 1 && n <= SG_TRAINER_MAXFIELDS, PetscObjectComm((PetscObject)t), PETSC_ERR_ARG_OUTOFRANGE, "SgTrainer: %" PetscInt_FMT " fields; between 1 and %d", n, SG_TRAINER_MAXFIELDS);
  for (PetscInt i = 0; i < t->nfields; i++) PetscCall(PetscFree(t->fields[i]));
  for (PetscInt i = 0; i < SG_TRAINER_MAXFIELDS; i++) t->sharded[i] = PETSC_FALSE;
  t->nfields = n;
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscStrallocpy(names[i], &t->fields[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetFieldShard(SgTrainer t, const char field[], PetscInt ndim, const PetscInt start[], const PetscInt count[])
{
  PetscInt f = -1;

  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  for (PetscInt i = 0; i < t->nfields; i++)
    if (!strcmp(t->fields[i], field)) f = i;
  PetscCheck(f >= 0, PetscObjectComm((PetscObject)t), PETSC_ERR_ARG_WRONG, "%s: shard of '%s', which is not one of the fields (SgTrainerSetFields first)", t->name, field);
  PetscCheck(ndim >= 0 && ndim <= SG_DATASET_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: shard of '%s' over %" PetscInt_FMT " axes", t->name, field, ndim);
  t->sharded[f] = PETSC_TRUE;
  t->shdim[f]   = ndim;
  for (PetscInt d = 0; d < ndim; d++) {
    t->shstart[f][d] = start[d];
    t->shcount[f][d] = count[d];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerAddStream(SgTrainer t, PetscInt nfiles, const char *const files[], int64_t nsamples, PetscInt *stream)
{
  SgTrainerStream *s;

  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(t->nstreams < SG_TRAINER_MAXSTREAMS, PetscObjectComm((PetscObject)t), PETSC_ERR_SUP, "%s: more than %d data streams (systems)", t->name, SG_TRAINER_MAXSTREAMS);
  PetscCheck(nfiles >= 1 && nsamples >= 1, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: a data stream of %" PetscInt_FMT " files and %" PetscInt64_FMT " samples: it needs at least one of each", t->name, nfiles, (PetscInt64)nsamples);
  s = &t->streams[t->nstreams];
  PetscCall(PetscMemzero(s, sizeof *s));
  PetscCall(PetscMalloc1(nfiles, &s->files));
  for (PetscInt i = 0; i < nfiles; i++) PetscCall(PetscStrallocpy(files[i], &s->files[i]));
  s->nfiles   = nfiles;
  s->nsamples = nsamples;
  t->nsamples += nsamples;
  if (stream) *stream = t->nstreams;
  t->nstreams++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetBatchSize(SgTrainer t, PetscInt b)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(b >= 1, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: batch size %" PetscInt_FMT ": it must be at least 1", t->name, b);
  t->batch = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetSeed(SgTrainer t, uint64_t seed)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->seed = seed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetNumSteps(SgTrainer t, PetscInt n)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(n >= 1, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: %" PetscInt_FMT " training steps: at least 1", t->name, n);
  t->nsteps = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetOptimizer(SgTrainer t, const SgnnOptimConfig *oc)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->oc = *oc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetSchedule(SgTrainer t, const SgnnLRSchedule *s)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(s->lr0 > 0, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: initial learning rate %g: it must be positive", t->name, s->lr0);
  t->sched = *s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetMonitorFrequency(SgTrainer t, PetscInt n)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(n >= 1, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: progress every %" PetscInt_FMT " steps: at least 1", t->name, n);
  t->disp = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetLCurve(SgTrainer t, const char path[])
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCall(PetscStrncpy(t->lcurve, path ? path : "", sizeof t->lcurve));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetCheckpoint(SgTrainer t, const char path[], PetscInt every)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCheck(every >= 0, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: checkpoint every %" PetscInt_FMT " steps: 0 (never) or more", t->name, every);
  PetscCall(PetscStrncpy(t->ckpt, path ? path : "", sizeof t->ckpt));
  t->ckpt_every = every;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetRestart(SgTrainer t, const char path[])
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscCall(PetscStrncpy(t->restart, path ? path : "", sizeof t->restart));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetMaxTime(SgTrainer t, PetscReal s)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  t->max_time = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetQuiet(SgTrainer t, PetscBool q)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  t->quiet = q;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetStopOnSignal(SgTrainer t, PetscBool on)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  t->stop_on_signal = on;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerRequestStop(SgTrainer t, const char reason[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCall(PetscStrncpy(t->stop_reason, reason && reason[0] ? reason : "stop requested", sizeof t->stop_reason));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetOptionsPrefix(SgTrainer t, const char prefix[])
{
  PetscFunctionBegin;
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)t, prefix));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetSyncType(SgTrainer t, const char type[], PetscInt bucket_bytes)
{
  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  if (type && type[0]) {
    PetscErrorCode (*create)(SgTrainerSync) = NULL;
    char all[128];
    PetscCall(SgTrainerSyncRegister(NULL, NULL));
    PetscCall(PetscFunctionListFind(SgTrainerSyncList, type, &create));
    PetscCall(SgFunctionListNames(SgTrainerSyncList, all, sizeof all));
    PetscCheck(create, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: unknown gradient sync '%s': use one of %s", t->name, type, all);
    PetscCall(PetscStrncpy(t->synctype, type, sizeof t->synctype));
  }
  if (bucket_bytes > 0) t->bucket_bytes = (size_t)bucket_bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The trainer's options inside the caller's options block (its prefix): a surrogate declares them in
   its own SetFromOptions, so they are read (and listed by -help) with the rest of its deck section. */
PetscErrorCode SgTrainerOptionsSync(PetscOptionItems *PetscOptionsObject, char sync[], size_t len, PetscInt *kb)
{
  const char **names;
  int          n;
  PetscInt     idx = 0;

  PetscFunctionBegin;
  PetscCall(SgTrainerSyncRegister(NULL, NULL)); /* the built-in strategies */
  PetscCall(PetscFunctionListGet(SgTrainerSyncList, &names, &n));
  for (int i = 0; i < n; i++) /* PETSc's list may hold an empty entry: drop it */
    if (!names[i] || !names[i][0]) names[i--] = names[--n];
  if (!sync[0]) PetscCall(PetscStrncpy(sync, "bucketed", len));
  for (int i = 0; i < n; i++) {
    PetscBool same;
    PetscCall(PetscStrcmp(names[i], sync, &same));
    if (same) idx = i;
  }
  if (*kb <= 0) *kb = 1024;
  PetscCall(SgOptionsEList("-sync", "Gradient sync between ranks: bucketed (non-blocking allreduce of gradient buckets overlapped with backward), allreduce (one blocking allreduce after backward; the same results), or hybrid (the buckets over data groups x spatial ranks, chosen by itself when spatial_ranks > 1)", names, n, names[idx], &idx, NULL));
  PetscCall(SgOptionsInt("-sync_bucket_kb", "Size of one gradient bucket of the bucketed sync (KiB)", *kb, kb, NULL, 1, 1 << 20));
  PetscCall(PetscStrncpy(sync, names[idx], len));
  PetscCall(PetscFree(names));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetFromOptions(SgTrainer t)
{
  PetscInt kb = (PetscInt)(t->bucket_bytes >> 10);

  PetscFunctionBegin;
  SG_TRAINER_SETTER_CHECK(t);
  PetscObjectOptionsBegin((PetscObject)t);
  PetscCall(SgTrainerOptionsSync(PetscOptionsObject, t->synctype, sizeof t->synctype, &kb));
  PetscCall(SgTrainerOptionsGrid(PetscOptionsObject, &t->dgroups, &t->sranks));
  PetscCall(SgTrainerOptionsPlateau(PetscOptionsObject, &t->plateau, &t->clip));
  PetscCall(SgTrainerOptionsOptimizer(PetscOptionsObject, &t->oc, &t->shard, t->compress, sizeof t->compress, &t->cub_sync));
  PetscCall(SgTrainerOptionsSdp4bit(PetscOptionsObject, &t->sdp_node));
  PetscCall(SgTrainerOptionsShardBucket(PetscOptionsObject, &t->z3bucket));
  PetscCall(SgTrainerOptionsShardGradOpen(PetscOptionsObject, &t->zgb_open));
  PetscOptionsEnd();
  PetscCall(SgTrainerSetPlateau(t, &t->plateau)); /* its checks */
  t->bucket_bytes = (size_t)kb << 10;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream that step `step` draws from: in proportion to the streams' sample counts, by a hash of
   (seed, step), so every rank and every restart agrees without communication. */
PetscErrorCode SgTrainerStreamOfStep(SgTrainer t, PetscInt step, PetscInt *stream)
{
  uint64_t key[2] = {t->seed, (uint64_t)step};
  double   u;
  int64_t  acc = 0;

  PetscFunctionBegin;
  *stream = t->nstreams - 1;
  if (t->nstreams == 1) {
    *stream = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  u = (double)(SgHash64(key, sizeof key, 0x5eed5) >> 11) * 0x1p-53 * (double)t->nsamples;
  for (PetscInt k = 0; k < t->nstreams; k++) {
    acc += t->streams[k].nsamples;
    if (u < (double)acc) {
      *stream = k;
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetUp(SgTrainer t)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  PetscMPIInt rank;
  PetscInt    before[SG_TRAINER_MAXSTREAMS] = {0};

  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  if (t->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(t->P, comm, PETSC_ERR_ORDER, "%s: SgTrainerSetModel() before SgTrainerSetUp()", t->name);
  PetscCheck(t->ops_s.loss, comm, PETSC_ERR_ORDER, "%s: SgTrainerSetOps() with a loss before SgTrainerSetUp()", t->name);
  PetscCheck(t->nstreams >= 1 && t->nfields >= 1, comm, PETSC_ERR_USER_INPUT, "%s: no training data: add a data stream and its fields", t->name);
  PetscCheck(!t->ckpt_every || t->ckpt[0], comm, PETSC_ERR_USER_INPUT, "%s: a checkpoint every %" PetscInt_FMT " steps needs a file name", t->name, t->ckpt_every);
  { /* the files this training writes, checked on every rank before it starts (sgwrite.h) */
    char opt[96];
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s_lcurve", t->name));
    if (t->lcurve[0]) PetscCall(SgWriteCheck(comm, opt, t->lcurve, SG_FILE_LCURVE));
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s_save_ckpt", t->name));
    if (t->ckpt[0]) PetscCall(SgWriteCheck(comm, opt, t->ckpt, SG_FILE_NN_CHECKPOINT));
  }
  PetscCall(SgTrainerGridSetUp(t));
  for (PetscInt k = 0; k < t->nstreams; k++) PetscCall(SgTrainerGetStreamSteps(t, k, &t->streams[k].nsteps));
  PetscCheck(!t->ops_s.checkpoint || !(t->plateau.window || t->clip > 0) || !(t->ckpt[0] || t->restart[0]), comm, PETSC_ERR_USER_INPUT, "%s: plateau decay and gradient clipping keep their state in the trainer's own checkpoint, and this surrogate writes its own: turn them off (plateau_window 0, clip_norm 0) or do not checkpoint", t->name);
  PetscCall(SgTrainerPlateauReset(t));
  PetscCall(SgTrainerSyncCreate(t, &t->sync));
  PetscCall(SgTrainerZeroSetUp(t)); /* the optimizer (of this rank's block when sharded), zero.c */
  if (t->restart[0]) { /* the optimizer's state and the step; the caller has restored the weights */
    PetscCall(PetscLogEventBegin(SG_TRAINER_Checkpoint, t, 0, 0, 0));
    if (t->ops_s.checkpoint) PetscCall(t->ops_s.checkpoint(t, t->ctx, SG_TRAINER_CKPT_READ, t->restart, &t->step0)); /* every rank: its part of the state */
    else PetscCall(SgTrainerCheckpointDefault(t, SG_TRAINER_CKPT_READ, t->restart, &t->step0));
    PetscCall(PetscLogEventEnd(SG_TRAINER_Checkpoint, t, 0, 0, 0));
    PetscCheck(t->step0 < t->nsteps, comm, PETSC_ERR_USER_INPUT, "%s: restart: %s is at step %" PetscInt_FMT ", the run has %" PetscInt_FMT " steps: nothing left to do", t->name, t->restart, t->step0, t->nsteps);
  }
  t->step = t->step0;
  /* one loader per stream, each started at the number of global batches it delivered before step0;
     enough epochs for its share of the steps (+1: the last epoch may be partly used). The loaders run
     on the grid's data communicator: a batch is split over the data groups, and all spatial ranks of
     a group (same position in their data communicators, same plan) get the same samples. */
  for (PetscInt step = 0; step < t->step0; step++) {
    PetscInt k;
    PetscCall(SgTrainerStreamOfStep(t, step, &k));
    before[k]++;
  }
  for (PetscInt k = 0; k < t->nstreams; k++) {
    SgTrainerStream *s      = &t->streams[k];
    PetscInt         epochs = (PetscInt)((s->nsteps * (int64_t)t->batch + s->nsamples - 1) / s->nsamples) + 1;
    PetscCall(SgLoaderCreate(sgpar_grid_data_comm(t->grid), &s->ld));
    PetscCall(SgLoaderSetFiles(s->ld, s->nfiles, (const char *const *)s->files));
    PetscCall(SgLoaderSetFields(s->ld, t->nfields, (const char *const *)t->fields));
    for (PetscInt f = 0; f < t->nfields; f++)
      if (t->sharded[f]) PetscCall(SgLoaderSetFieldShard(s->ld, t->fields[f], t->shdim[f], t->shstart[f], t->shcount[f]));
    PetscCall(SgLoaderSetBatchSize(s->ld, t->batch));
    PetscCall(SgLoaderSetEpochs(s->ld, epochs));
    PetscCall(SgLoaderSetSeed(s->ld, t->seed + 1000003ULL * (uint64_t)k)); /* independent orders per stream */
    PetscCall(SgLoaderSetStartBatch(s->ld, before[k]));                    /* one global batch per step */
    PetscCall(SgLoaderSetUp(s->ld));
  }
  if (!rank && t->lcurve[0]) { /* a restart appends, like DeePMD-kit's lcurve.out */
    char opt[96];
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s_lcurve", t->name));
    PetscCall(SgTextFileOpen(opt, t->lcurve, SG_FILE_LCURVE, "#", t->step0 ? PETSC_TRUE : PETSC_FALSE, &t->lctf));
    PetscCall(SgTextFileGetFILE(t->lctf, &t->lc));
    if (!t->step0 && t->lcurve_header) fprintf(t->lc, "%s\n", t->lcurve_header);
  }
  t->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stop the loaders' I/O threads and close the lcurve: before an error leaves the trainer, so a
   refused or diverged run exits cleanly (no thread reading HDF5 while the process ends). */
PetscErrorCode SgTrainerStopStreams(SgTrainer t)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < t->nstreams; k++) PetscCall(SgLoaderDestroy(&t->streams[k].ld));
  t->lc = NULL;
  PetscCall(SgTextFileClose(&t->lctf)); /* commit: flush, fsync, rename over the earlier curve */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerView(SgTrainer t, PetscViewer v)
{
  PetscBool ascii;

  PetscFunctionBegin;
  if (!v) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)t), &v));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(v, "SgTrainer %s: %" PetscInt_FMT " steps (from %" PetscInt_FMT "), global batch %" PetscInt_FMT ", %" PetscInt_FMT " stream(s) of %" PetscInt64_FMT " samples, gradient sync %s\n", t->name, t->nsteps, t->step0, t->batch, t->nstreams, (PetscInt64)t->nsamples, t->synctype));
  PetscCall(PetscViewerASCIIPrintf(v, "  optimizer %s, ZeRO stage %" PetscInt_FMT ", compression %s\n", t->oc.type == SGNN_LION ? "lion" : (t->oc.type == SGNN_ADAM ? "adam" : (t->oc.type == SGNN_ADAMW ? "adamw" : "sgd")), t->shard, t->compress));
  if (t->grid) PetscCall(PetscViewerASCIIPrintf(v, "  process grid: %" PetscInt_FMT " data groups x %" PetscInt_FMT " spatial ranks\n", t->dgroups, t->sranks));
  if (t->sync && t->sync->describe) {
    char line[256];
    PetscCall(t->sync->describe(t->sync, line, sizeof line));
    PetscCall(PetscViewerASCIIPushTab(v));
    PetscCall(PetscViewerASCIIPrintf(v, "%s", line));
    PetscCall(PetscViewerASCIIPopTab(v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerDestroy(SgTrainer *pt)
{
  SgTrainer t;

  PetscFunctionBegin;
  if (!pt || !*pt) PetscFunctionReturn(PETSC_SUCCESS);
  t = *pt;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  if (--((PetscObject)t)->refct > 0) {
    *pt = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* a learning curve still open here belongs to a run an error ended: the earlier curve stays */
  t->lc = NULL;
  PetscCall(SgTextFileDiscard(&t->lctf));
  PetscCall(SgTrainerStopStreams(t));
  for (PetscInt k = 0; k < t->nstreams; k++) {
    for (PetscInt i = 0; i < t->streams[k].nfiles; i++) PetscCall(PetscFree(t->streams[k].files[i]));
    PetscCall(PetscFree(t->streams[k].files));
  }
  for (PetscInt i = 0; i < t->nfields; i++) PetscCall(PetscFree(t->fields[i]));
  for (PetscInt i = 0; i < t->ncols; i++) PetscCall(PetscFree(t->cols[i]));
  PetscCall(PetscFree(t->lcurve_header));
  PetscCall(SgTrainerSyncDestroy(&t->sync));
  sgpar_grid_destroy(&t->grid);
  sgnn_optim_destroy(&t->opt);
  PetscCall(PetscFree2(t->zcount, t->zdispl));
  if (t->z3b) PetscCall(SgTrainerZero3BucketDestroy(t)); /* the block lives in its window */
  else PetscCall(PetscFree(t->z3block));
  PetscCall(SgTrainerGradBucketDestroy(t)); /* so does the gradient's block (zerograd.c) */
  PetscCall(PetscFree(t->cub_bits));
  PetscCall(PetscFree(t->cub_all));
  PetscCall(PetscFree(t->cub_votes));
  PetscCall(SgTrainerSdp4bitDestroy(t));
  PetscCall(PetscHeaderDestroy(pt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetLoader(SgTrainer t, PetscInt k, SgLoader *ld)
{
  PetscFunctionBegin;
  PetscCheck(k >= 0 && k < t->nstreams, PetscObjectComm((PetscObject)t), PETSC_ERR_ARG_OUTOFRANGE, "%s: stream %" PetscInt_FMT " of %" PetscInt_FMT, t->name, k, t->nstreams);
  *ld = t->streams[k].ld;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetOptimizer(SgTrainer t, SgnnOptim *o)
{
  PetscFunctionBegin;
  PetscCheck(t->opt, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "%s: no optimizer before SgTrainerSetUp()", t->name);
  *o = t->opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetNumSteps(SgTrainer t, PetscInt *n)
{
  PetscFunctionBegin;
  *n = t->nsteps;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetStep(SgTrainer t, PetscInt *n)
{
  PetscFunctionBegin;
  *n = t->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetStreamSteps(SgTrainer t, PetscInt k, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCheck(k >= 0 && k < t->nstreams, PetscObjectComm((PetscObject)t), PETSC_ERR_ARG_OUTOFRANGE, "%s: stream %" PetscInt_FMT " of %" PetscInt_FMT, t->name, k, t->nstreams);
  *n = 0;
  for (PetscInt step = 0; step < t->nsteps; step++) {
    PetscInt j;
    PetscCall(SgTrainerStreamOfStep(t, step, &j));
    *n += j == k;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
