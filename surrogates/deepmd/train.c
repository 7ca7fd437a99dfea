/* Training of the Deep Potential as DeePMD-kit does it (ener loss, se_e2_a):
     loss = pe/N <dE^2> + pf/(3N) <|dF|^2> + pv/(9N) <|dW|^2>       (<> over the frames of a batch)
     p(lr) = p_limit (1 - lr/lr0) + p_start lr/lr0                   (prefactors follow the LR)
     lr(step) = lr0 * decay_rate^floor(step/decay_steps), decay_rate = (stop_lr/lr0)^(decay_steps/numb_steps)
   with Adam, on the shared pipeline SgTrainer (surrogates/train: loaders, sync, schedule, progress,
   checkpoints); this file supplies the loss, the data check, the progress columns and the checkpoint
   format. Data come from md_frames files through the SOLAR-style loader; over MPI every rank
   computes the gradient SUM of its local frames divided by the GLOBAL frame count, and the
   trainer's allreduce of the parameter-gradient slab gives exactly the serial gradient (up to the
   order of the floating-point sum). Statistics (davg/dstd from the first stat_frames frames of each system, the energy
   bias by least squares on all training energies) are computed identically on every rank.
   Checkpoints (save_freq/save_ckpt, and at a max_time stop) also hold the step, Adam's moments and
   the ranks, so `restart` continues a run bit for bit: the loader resumes at the same global batch.
   Systems (DeePMD-kit's term; the trainer's streams): data files with the same atom list form one
   system, with its own loader; files of different sizes or compositions are different systems. Each step draws its batch
   from one system, chosen with probability proportional to its frame count (DeePMD-kit's default
   prob_sys_size) by a hash of (seed, step): the same on every rank and after a restart. */
#include <math.h>
#include "deepmd_train.h"
#include "sgdeepmd.h"
#include "sgloader.h"
#include "sgdataset.h"
#include "sgsys.h"
#include "sgtrainer.h"

static PetscErrorCode AsReals(SgDType dt, const void *src, size_t n, PetscReal *dst)
{
  PetscFunctionBegin;
  if (dt == SG_DTYPE_F32)
    for (size_t i = 0; i < n; i++) dst[i] = ((const float *)src)[i];
  else if (dt == SG_DTYPE_F64)
    for (size_t i = 0; i < n; i++) dst[i] = ((const double *)src)[i];
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "deepmd: float field expected");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* davg/dstd from the first stat_frames frames of each system (sysof[file]), the energy bias from all
   frames of all files; each file's frames in two reads from its open handle */
static PetscErrorCode Statistics(SgDPModel m, const SgDPTrainOpts *o, SgDPFrames *fr, const PetscInt *sysof)
{
  SgDPStats  st;
  PetscInt   nftot = 0, used[16] = {0};
  PetscReal *counts = NULL, *E = NULL;

  PetscFunctionBegin;
  PetscCall(SgDPStatsBegin(&st));
  for (PetscInt fi = 0; fi < o->nfiles; fi++) {
    const PetscInt  n = fr[fi].N, *t = fr[fi].type;
    const int64_t   nf = fr[fi].nf, take = PetscMin(nf, (int64_t)PetscMax(o->stat_frames - used[sysof[fi]], 0));
    PetscReal      *x, *box;
    PetscCall(PetscMalloc2(3 * n * take, &x, 9 * take, &box));
    PetscCall(SgDPFramesRead(&fr[fi], 0, take, x, box, NULL, NULL, NULL));
    for (int64_t k = 0; k < take; k++) PetscCall(SgDPStatsAddFrame(m, &st, n, x + 3 * n * k, t, SgDPBoxIsZero(box + 9 * k) ? NULL : box + 9 * k));
    used[sysof[fi]] += (PetscInt)take;
    PetscCall(PetscFree2(x, box));
    /* energies and compositions for the bias */
    PetscCall(PetscRealloc(sizeof(PetscReal) * (nftot + nf), &E));
    PetscCall(PetscRealloc(sizeof(PetscReal) * (nftot + nf) * m->cfg.ntypes, &counts));
    PetscCall(SgDPFramesRead(&fr[fi], 0, nf, NULL, NULL, E + nftot, NULL, NULL));
    for (int64_t k = 0; k < nf; k++) PetscCheck(isfinite(E[nftot + k]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: training frame %" PetscInt64_FMT " of %s has energy %g: remove or fix that frame", (PetscInt64)k, o->files[fi], (double)E[nftot + k]);
    for (int64_t k = 0; k < nf; k++) {
      for (PetscInt q = 0; q < m->cfg.ntypes; q++) counts[(nftot + k) * m->cfg.ntypes + q] = 0;
      for (PetscInt i = 0; i < n; i++) counts[(nftot + k) * m->cfg.ntypes + t[i]] += 1;
    }
    nftot += (PetscInt)nf;
  }
  PetscCall(SgDPStatsEnd(m, &st, PETSC_COMM_SELF));
  if (st.overflow) PetscCall(PetscInfo(NULL, "deepmd: up to %" PetscInt_FMT " neighbours beyond sel were dropped in the statistics frames\n", st.overflow));
  PetscCheck(!st.overflow, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: a neighbour section overflows by %" PetscInt_FMT " atoms: raise deepmd_sel (DeePMD-kit drops them, which breaks the smoothness at rcut)", st.overflow);
  PetscCall(SgDPPerTypeFit(m->cfg.ntypes, nftot, counts, E, m->bias));
  PetscCall(PetscFree(E));
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One system: the data files that share an atom list (a stream of the trainer), with its batch buffers. */
typedef struct {
  PetscInt   N, *type, nfiles;
  const char *files[16];
  int64_t    fileframes[16]; /* frames of each file (sample ids run through the files in order) */
  int64_t    nframes;
  SgDPBatch  bt;
  PetscInt   Bcap;
  PetscReal *xb, *fb, *vb, *eb, *boxb;
} System;

/* What the trainer's functions need: the model, the options, the systems. */
typedef struct {
  SgDPModel            m;
  const SgDPTrainOpts *o;
  System               sys[16];
  PetscInt             nsys;
  PetscBool            hv; /* every file has virials */
  int64_t              ntot;
  char                *options; /* what the checkpoints record (DPTrainOptions); NULL without one */
} DPTrain;

/* Group the files (open handles) into systems by atom list. */
static PetscErrorCode FindSystems(const SgDPTrainOpts *o, const SgDPFrames *fr, System *sys, PetscInt *nsys, PetscInt *sysof, PetscBool *hv, int64_t *ntot)
{
  PetscFunctionBegin;
  *nsys = 0;
  *hv = PETSC_TRUE;
  *ntot = 0;
  for (PetscInt fi = 0; fi < o->nfiles; fi++) {
    const PetscInt n = fr[fi].N, *t = fr[fi].type;
    const int64_t  nf = fr[fi].nf;
    PetscInt       k;
    for (k = 0; k < *nsys; k++) {
      PetscBool same = (PetscBool)(n == sys[k].N);
      for (PetscInt i = 0; same && i < n; i++) same = (PetscBool)(t[i] == sys[k].type[i]);
      if (same) break;
    }
    if (k == *nsys) {
      PetscCall(PetscMemzero(&sys[k], sizeof sys[k]));
      sys[k].N = n;
      (*nsys)++;
      PetscCall(PetscMalloc1(n, &sys[k].type));
      PetscCall(PetscArraycpy(sys[k].type, t, n));
    }
    sys[k].fileframes[sys[k].nfiles] = nf;
    sys[k].files[sys[k].nfiles++]    = o->files[fi];
    sys[k].nframes += nf;
    sysof[fi] = k;
    *hv = (PetscBool)(*hv && fr[fi].has_virial);
    *ntot += nf;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DestroySystems(System *sys, PetscInt nsys)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < nsys; k++) {
    PetscCall(PetscFree5(sys[k].xb, sys[k].fb, sys[k].vb, sys[k].eb, sys[k].boxb));
    if (sys[k].Bcap) PetscCall(SgDPBatchFree(&sys[k].bt));
    PetscCall(PetscFree(sys[k].type));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The trainer's loss: DeePMD-kit's ener loss of the local frames, each term already divided by the
   GLOBAL frame count (SG_TRAINER_LOSS_GLOBAL_MEAN), so the summed gradient is the serial one. sums:
   sum dE^2/N^2, sum |dF|^2, frames, force components (the training RMSEs of the progress line). */
static PetscErrorCode LossDP(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *lossout, PetscReal trn[])
{
  DPTrain             *D = (DPTrain *)ctx;
  SgDPModel            m = D->m;
  const SgDPTrainOpts *o = D->o;
  System              *S = &D->sys[k];
  const PetscInt       N = S->N, B = b->nlocal;
  PetscReal            fr = info->lr / info->lr0;
  PetscReal            pe = o->limit_pref_e * (1 - fr) + o->start_pref_e * fr, pf = o->limit_pref_f * (1 - fr) + o->start_pref_f * fr;
  PetscReal            pv = D->hv ? o->limit_pref_v * (1 - fr) + o->start_pref_v * fr : 0;
  SgLoader             ld;
  SgDType              dt;
  int64_t              re;
  SgDPBatch           *bt = &S->bt;

  PetscFunctionBegin;
  PetscCall(SgTrainerGetLoader(tr, k, &ld));
  if (B > S->Bcap) {
    if (S->Bcap) PetscCall(SgDPBatchFree(bt));
    PetscCall(PetscFree5(S->xb, S->fb, S->vb, S->eb, S->boxb));
    PetscCall(SgDPBatchAlloc(&m->cfg, B, N, bt));
    PetscCall(PetscMalloc5(3 * N * B, &S->xb, 3 * N * B, &S->fb, 9 * B, &S->vb, B, &S->eb, 9 * B, &S->boxb));
    S->Bcap = B;
  }
  bt->B = B;
  PetscCall(PetscArraycpy(bt->type, S->type, N));
  PetscCall(SgLoaderGetFieldInfo(ld, 0, NULL, &dt, &re));
  PetscCall(AsReals(dt, b->data[0], (size_t)B * 3 * N, S->xb));
  PetscCall(SgLoaderGetFieldInfo(ld, 1, NULL, &dt, &re));
  PetscCall(AsReals(dt, b->data[1], (size_t)B * 9, S->boxb));
  PetscCall(SgLoaderGetFieldInfo(ld, 2, NULL, &dt, &re));
  PetscCall(AsReals(dt, b->data[2], (size_t)B, S->eb));
  PetscCall(SgLoaderGetFieldInfo(ld, 3, NULL, &dt, &re));
  PetscCall(AsReals(dt, b->data[3], (size_t)B * 3 * N, S->fb));
  if (D->hv) {
    PetscCall(SgLoaderGetFieldInfo(ld, 4, NULL, &dt, &re));
    PetscCall(AsReals(dt, b->data[4], (size_t)B * 9, S->vb));
  }
  for (PetscInt q = 0; q < B; q++) PetscCall(SgDPBatchSetFrame(m, bt, q, S->xb + 3 * N * q, SgDPBoxIsZero(S->boxb + 9 * q) ? NULL : S->boxb + 9 * q));
  SgnnTensor E, F, V = NULL, El, Fl, Vl, dE, dF, dV, s2, t, loss, acc;
  int        sB[1] = {(int)B}, sF[2] = {(int)(B * N), 3}, sV[2] = {(int)B, 9};
  double     v;
  PetscCall(SgDPGraph(m, bt, (PetscBool)(pv > 0), 1, &E, &F, &V));
  SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 1, sB, S->eb, &El));
  SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sF, S->fb, &Fl));
  SgNN(sgnn_sub(E, El, &dE));
  SgNN(sgnn_sub(F, Fl, &dF));
  SgNN(sgnn_mul(dE, dE, &s2));
  SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
  sgnn_tensor_free(&s2);
  SgNN(sgnn_tensor_item(t, &v));
  trn[0] += v / ((double)N * N);
  SgNN(sgnn_affine(t, pe / N / b->nglobal, 0.0, &loss));
  sgnn_tensor_free(&t);
  SgNN(sgnn_mul(dF, dF, &s2));
  SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
  sgnn_tensor_free(&s2);
  SgNN(sgnn_tensor_item(t, &v));
  trn[1] += v;
  SgNN(sgnn_affine(t, pf / (3.0 * N) / b->nglobal, 0.0, &s2));
  sgnn_tensor_free(&t);
  SgNN(sgnn_add(loss, s2, &acc));
  sgnn_tensor_free(&s2);
  sgnn_tensor_free(&loss);
  loss = acc;
  if (V) {
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sV, S->vb, &Vl));
    SgNN(sgnn_sub(V, Vl, &dV));
    SgNN(sgnn_mul(dV, dV, &s2));
    SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
    sgnn_tensor_free(&s2);
    SgNN(sgnn_affine(t, pv / (9.0 * N) / b->nglobal, 0.0, &s2));
    SgNN(sgnn_add(loss, s2, &acc));
    sgnn_tensor_free(&loss);
    loss = acc;
    SgnnTensor *fr2[] = {&t, &s2, &Vl, &dV, &V};
    for (int q = 0; q < 5; q++) sgnn_tensor_free(fr2[q]);
  }
  SgnnTensor *fr1[] = {&E, &F, &El, &Fl, &dE, &dF};
  for (int q = 0; q < 6; q++) sgnn_tensor_free(fr1[q]);
  trn[2] += B;
  trn[3] += 3.0 * N * B;
  *lossout = loss;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Labels and coordinates of the local batch must be finite: a NaN in the data would silently turn
   every weight into NaN. Collective: every rank stops with the same message naming the first bad frame. */
static PetscErrorCode CheckDP(SgTrainer tr, void *ctx, PetscInt k, const SgLoaderBatch *b)
{
  DPTrain       *D = (DPTrain *)ctx;
  const System  *S = &D->sys[k];
  const PetscInt N = S->N;
  int64_t        bad = INT64_MAX, gbad;
  MPI_Comm       comm = PetscObjectComm((PetscObject)tr);

  PetscFunctionBegin;
  for (PetscInt q = 0; q < b->nlocal && bad == INT64_MAX; q++) {
    PetscBool ok = (PetscBool)isfinite(S->eb[q]);
    for (PetscInt c = 0; ok && c < 3 * N; c++) ok = (PetscBool)(isfinite(S->xb[3 * N * q + c]) && isfinite(S->fb[3 * N * q + c]));
    for (int c = 0; ok && D->hv && c < 9; c++) ok = (PetscBool)isfinite(S->vb[9 * q + c]);
    for (int c = 0; ok && c < 9; c++) ok = (PetscBool)isfinite(S->boxb[9 * q + c]);
    if (!ok) bad = b->ids[q];
  }
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPI_INT64_T, MPI_MIN, comm));
  if (gbad != INT64_MAX) {
    int64_t  id = gbad;
    PetscInt f  = 0;
    while (f < S->nfiles - 1 && id >= S->fileframes[f]) id -= S->fileframes[f++];
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "deepmd: training frame %" PetscInt64_FMT " of %s has a non-finite coordinate, box, energy, force or virial: remove or fix that frame (nothing was trained on it)", (PetscInt64)id, S->files[f]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Progress columns: validation RMSEs (dp test on valid_frames of valid_data; n/a without validation
   data, not zeros) and the training RMSEs since the last line. */
static PetscErrorCode MonitorDP(SgTrainer tr, void *ctx, PetscInt step, const PetscReal tr4[], PetscReal cols[])
{
  DPTrain       *D = (DPTrain *)ctx;
  SgDPTestResult r = {0};

  PetscFunctionBegin;
  PetscCall(SgDPModelSync(D->m));
  if (D->o->nvalid) PetscCall(SgDPTest(D->m, D->o->nvalid, D->o->valid, D->o->valid_frames, NULL, PetscObjectComm((PetscObject)tr), &r));
  cols[0] = D->o->nvalid ? r.e_rmse_atom : NAN;
  cols[1] = sqrt(tr4[0] / PetscMax(tr4[2], 1));
  cols[2] = D->o->nvalid ? r.f_rmse : NAN;
  cols[3] = sqrt(tr4[1] / PetscMax(tr4[3], 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The training's options as its checkpoints record them (SgConfigList: the deck after command-line
   overrides, input files by content) but what a restart may change, as the SgTrainer's own
   checkpoint (surrogates/train/checkpoint.c) leaves out: how long it trains, how often it reports
   and checkpoints, where it writes, the data (other files continue with a warning, CheckpointDP),
   the statistics' and validation frames (not used by a restart), init_model (the checkpoint holds
   the weights), and how the state is laid out over the ranks (checked by itself). Collective. */
static PetscErrorCode DPTrainOptions(MPI_Comm comm, char **list)
{
  const char *const skip[] = {"deepmd_numb_steps", "deepmd_max_time", "deepmd_disp_freq", "deepmd_save_freq", "deepmd_save_ckpt", "deepmd_restart", "deepmd_lcurve", "deepmd_test_detail", "deepmd_data", "deepmd_valid_", "deepmd_stat_frames", "deepmd_init_model", "deepmd_verbose", "deepmd_shard", "deepmd_sync", "deepmd_spatial_ranks", "train_output", NULL};

  PetscFunctionBegin;
  PetscCall(SgConfigList(comm, NULL, skip, list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Deep Potential's checkpoint is a model file with a /training group (step, Adam's moments, ranks,
   data size): init_model can start a new run from it, restart continues this one. Collective: rank 0
   writes the file, every rank its block of Adam's moments (the trainer's, by blocks when sharded). */
static PetscErrorCode CheckpointDP(SgTrainer tr, void *ctx, SgTrainerCkptMode mode, const char path[], PetscInt *step)
{
  const char *const adam[2] = {"training/adam_m", "training/adam_v"};
  DPTrain          *D       = (DPTrain *)ctx;
  SgDPModel         m       = D->m;
  MPI_Comm          comm    = PetscObjectComm((PetscObject)tr);
  PetscMPIInt       rank, size;
  SgDPTrainState    ts = {0};
  SgnnOptim         opt;
  long             *os;
  PetscInt          nsteps;
  SgH5File          f = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SgTrainerGetOptimizer(tr, &opt));
  PetscCall(SgTrainerGetNumSteps(tr, &nsteps));
  SgNN(sgnn_optim_state(opt, NULL, NULL, &os)); /* Adam's step counter; its moments are the trainer's to write and read */
  if (mode == SG_TRAINER_CKPT_WRITE) {
    PetscErrorCode werr = PETSC_SUCCESS;
    if (!rank) { /* the model and the /training attributes; a failure is carried through the moments' exchange, which every rank enters */
      ts.step       = *step;
      ts.optim_step = *os;
      ts.ranks      = size;
      ts.frames     = (long)D->ntot;
      ts.systems    = D->nsys;
      ts.options    = D->options;
      werr          = SgDPModelSync(m);
      if (!werr) werr = SgDPModelCheckpointCreate(m, path, &ts, &f);
    }
    PetscCall(SgTrainerWriteMoments(tr, f, adam, &werr));
    if (!rank && f) {
      if (!werr) werr = SgH5FileClose(&f); /* committed: PATH.tmp renamed */
      else PetscCall(SgH5FileDiscard(&f));
    }
    PetscCall(werr);
  } else { /* every rank; the model already holds the checkpoint's weights */
    PetscErrorCode cerr;
    PetscCall(SgDPTrainStateRead(path, &ts));
    PetscCheck(ts.ranks == size, comm, PETSC_ERR_USER_INPUT, "deepmd: restart: %s was written by a run on %" PetscInt_FMT " rank(s), this one has %d; the data stream differs. Restart on %" PetscInt_FMT " rank(s), or use init_model for a new run from its weights", path, ts.ranks, size, ts.ranks);
    PetscCheck(ts.step < nsteps, comm, PETSC_ERR_USER_INPUT, "deepmd: restart: %s is at step %ld, numb_steps is %" PetscInt_FMT ": nothing left to do: raise numb_steps to train on (the learning rate then decays to stop_lr at the new numb_steps: the schedule from here on is not the one the first numb_steps set)", path, ts.step, nsteps);
    if (!ts.options) PetscCall(PetscPrintf(comm, "surge: warning: the training checkpoint %s records no options (written by an older surge): a restart with other options than its training's is not detected\n", path));
    else {
      char what[1024];
      PetscCall(SgConfigListDiff(comm, NULL, ts.options, D->options, what, sizeof what));
      PetscCall(PetscFree(ts.options));
      PetscCheck(!what[0], comm, PETSC_ERR_USER_INPUT, "deepmd: restart: %s was written by a training with other options: %s; restart with that training's options (only numb_steps, max_time, reporting, checkpoint cadence, the data and output names may change), or start a new training from its weights with -deepmd_init_model", path, what);
    }
    if (ts.frames >= 0 && (ts.frames != (long)D->ntot || ts.systems != D->nsys))
      PetscCall(PetscPrintf(comm, "deepmd: restart: WARNING: %s was written by a run on %ld training frames in %" PetscInt_FMT " system(s), this one has %" PetscInt64_FMT " in %" PetscInt_FMT ": the schedule and Adam continue, the order of the data does not\n", path, ts.frames, ts.systems, (PetscInt64)D->ntot, D->nsys));
    PetscCall(SgH5FileOpen(path, &f));
    cerr = SgTrainerReadMoments(tr, f, adam); /* this rank's block when sharded; collective */
    PetscCall(SgH5FileClose(&f));
    PetscCall(cerr);
    *os   = ts.optim_step;
    *step = (PetscInt)ts.step;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The SgTrainer of a Deep Potential run: one stream per system, Adam, DeePMD-kit's staircase schedule. */
static PetscErrorCode TrainerCreate(DPTrain *D, MPI_Comm comm, SgTrainer *out)
{
  const SgDPTrainOpts *o                = D->o;
  const char          *fields[5]        = {"coord", "box", "energy", "force", "virial"};
  const char          *cols[4]          = {"rmse_e_val", "rmse_e_trn", "rmse_f_val", "rmse_f_trn"};
  SgTrainerOps         ops              = {LossDP, CheckDP, MonitorDP, CheckpointDP};
  SgnnOptimConfig      oc;
  SgnnLRSchedule       sc               = {0};
  SgTrainer            tr;

  PetscFunctionBegin;
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "deepmd"));
  PetscCall(SgTrainerSetModel(tr, D->m->P));
  PetscCall(SgTrainerSetOps(tr, &ops, D));
  PetscCall(SgTrainerSetLossScaling(tr, SG_TRAINER_LOSS_GLOBAL_MEAN));
  PetscCall(SgTrainerSetMetrics(tr, 4, 4, cols, "# step rmse_e_val(eV/atom) rmse_e_trn(eV/atom) rmse_f_val(eV/A) rmse_f_trn(eV/A) lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, D->hv ? 5 : 4, fields));
  for (PetscInt k = 0; k < D->nsys; k++) PetscCall(SgTrainerAddStream(tr, D->sys[k].nfiles, D->sys[k].files, D->sys[k].nframes, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, o->batch_size));
  PetscCall(SgTrainerSetSeed(tr, (uint64_t)o->seed));
  PetscCall(SgTrainerSetNumSteps(tr, o->numb_steps));
  if (o->oc.lr > 0) oc = o->oc; /* the deck's optimizer (surrogate.c); a zeroed SgDPTrainOpts means Adam */
  else sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = o->start_lr;
  PetscCheck(oc.type == SGNN_ADAM || oc.type == SGNN_ADAMW || !(o->save_ckpt[0] || o->restart[0]), comm, PETSC_ERR_USER_INPUT, "deepmd: the checkpoint (save_ckpt, restart) holds Adam's two moments, and -deepmd_optimizer is not adam: use -deepmd_optimizer adam or adamw, or no checkpoint");
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetShard(tr, o->shard, o->compress, o->cub_sync));
  PetscCall(SgTrainerSetSdp4bit(tr, o->sdp_node));
  PetscCall(SgTrainerSetShardBucket(tr, o->shard_bucket));
  if (o->grad_open) PetscCall(SgTrainerSetShardGradOpen(tr, o->grad_open)); /* 0 (options zeroed by a program): the trainer's default */
  PetscCall(SgTrainerSetOptionsPrefix(tr, "deepmd_")); /* its refusals name -deepmd_shard etc. */
  sc.kind = SGNN_LR_EXP;
  sc.lr0 = o->start_lr;
  sc.decay_steps = o->decay_steps;
  sc.decay_rate = pow(o->stop_lr / o->start_lr, (double)o->decay_steps / (double)o->numb_steps);
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, o->disp_freq));
  PetscCall(SgTrainerSetLCurve(tr, o->lcurve));
  PetscCall(SgTrainerSetCheckpoint(tr, o->save_ckpt, o->save_freq));
  PetscCall(SgTrainerSetRestart(tr, o->restart));
  PetscCall(SgTrainerSetMaxTime(tr, o->max_time));
  PetscCall(SgTrainerSetStopOnSignal(tr, PETSC_TRUE)); /* a batch system's signal: checkpoint and stop */
  PetscCall(SgTrainerSetSyncType(tr, o->sync, o->sync_bucket_kb * 1024));
  *out = tr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTrain(SgDPModel m, const SgDPTrainOpts *o, MPI_Comm comm)
{
  PetscMPIInt    size;
  PetscInt       sysof[16];
  SgDPFrames     fr[16];
  DPTrain        D = {0};
  SgTrainer      tr;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(!o->save_freq || o->save_ckpt[0], comm, PETSC_ERR_USER_INPUT, "deepmd: save_freq %" PetscInt_FMT " needs a file: set deepmd: {save_ckpt: model_ckpt.h5}", o->save_freq);
  PetscCheck(o->nfiles >= 1, comm, PETSC_ERR_USER_INPUT, "deepmd: no training data: set deepmd: {data: [file.h5, ...]} (md_frames datasets; 'surge dataset import-deepmd' converts DeePMD-kit directories)");
  PetscCheck(o->nfiles <= 16, comm, PETSC_ERR_USER_INPUT, "deepmd: %" PetscInt_FMT " data files; at most 16", o->nfiles);
  D.m = m;
  D.o = o;
  for (PetscInt fi = 0; fi < o->nfiles; fi++) PetscCall(SgDPFramesOpen(m, o->files[fi], &fr[fi])); /* each file once for the systems and statistics */
  PetscCall(FindSystems(o, fr, D.sys, &D.nsys, sysof, &D.hv, &D.ntot));
  if (!o->init_model[0] && !o->restart[0]) PetscCall(Statistics(m, o, fr, sysof)); /* else keep the loaded model's davg/dstd/bias */
  for (PetscInt fi = 0; fi < o->nfiles; fi++) PetscCall(SgDPFramesClose(&fr[fi])); /* the trainer's loaders read the training */
  if (o->save_ckpt[0] || o->restart[0]) PetscCall(DPTrainOptions(comm, &D.options));
  PetscCall(TrainerCreate(&D, comm, &tr));
  PetscCall(SgDPModelSync(m));
  if (D.nsys == 1) PetscCall(PetscPrintf(comm, "deepmd: %" PetscInt64_FMT " training frames of %" PetscInt_FMT " atoms in %" PetscInt_FMT " file(s)%s; %d rank(s)\n", (PetscInt64)D.ntot, D.sys[0].N, o->nfiles, D.hv ? " with virials" : "", size));
  else {
    PetscCall(PetscPrintf(comm, "deepmd: %" PetscInt64_FMT " training frames in %" PetscInt_FMT " systems (a batch comes from one system, chosen in proportion to its frames)%s; %d rank(s)\n", (PetscInt64)D.ntot, D.nsys, D.hv ? " with virials" : "", size));
    for (PetscInt k = 0; k < D.nsys; k++) {
      PetscInt ns;
      PetscCall(SgTrainerGetStreamSteps(tr, k, &ns));
      PetscCall(PetscPrintf(comm, "deepmd:   system %" PetscInt_FMT ": %" PetscInt64_FMT " frames of %" PetscInt_FMT " atoms (%s%s), %" PetscInt_FMT " of the %" PetscInt_FMT " steps\n", k, (PetscInt64)D.sys[k].nframes, D.sys[k].N, D.sys[k].files[0], D.sys[k].nfiles > 1 ? ", ..." : "", ns, o->numb_steps));
    }
  }
  for (PetscInt t = 0; t < m->cfg.ntypes; t++)
    PetscCall(PetscPrintf(comm, "deepmd: type %s: davg %.5f dstd %.5f %.5f  bias_atom_e %.6f\n", m->cfg.type_map[t], (double)m->davg[t][0], (double)m->dstd[t][0], (double)m->dstd[t][1], (double)m->bias[t]));
  if (!D.hv && (o->start_pref_v > 0 || o->limit_pref_v > 0)) PetscCall(PetscPrintf(comm, "deepmd: the data have no virials: virial prefactors ignored\n"));
  ierr = SgTrainerTrain(tr); /* on an error the trainer has stopped its loaders; free the rest, then return it */
  if (!ierr) PetscCall(SgDPModelSync(m));
  PetscCall(SgTrainerDestroy(&tr));
  PetscCall(DestroySystems(D.sys, D.nsys));
  PetscCall(PetscFree(D.options));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
