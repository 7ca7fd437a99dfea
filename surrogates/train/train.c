/* SgTrainerTrain: the step loop of every surrogate.

   A step: the stream of the step (hash of seed and step) -> its loader's next global batch (this
   rank's share, maybe empty) -> the surrogate's loss -> sync begin -> backward (the bucketed sync
   starts allreduces from inside it) -> sync end (the slab holds the global gradient) -> the
   surrogate's data check and a finite-loss check, both collective, before anything is updated or
   written -> plateau decay and gradient clipping (plateau.c, when on) -> optimizer step at the schedule's learning rate -> progress line (every disp steps, the
   last, and at a max_time stop) -> checkpoint (every ckpt_every steps and at a max_time stop; the
   end is the surrogate's model file, written by its caller). */
#include "sgsys.h"
#include <math.h>
#include "sgtrainerimpl.h"

/* The progress line: screen (fixed-width, n/a for NaN) and the lcurve (rank 0, %.6e) */
static PetscErrorCode Monitor(SgTrainer t, PetscInt step, PetscReal sums[], PetscReal lr, double wall)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)t);
  PetscReal cols[SG_TRAINER_MAXCOLS], *g = NULL;
  char      line[1024] = "", cell[32];

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(SG_TRAINER_Monitor, t, 0, 0, 0));
  for (PetscInt i = 0; i < t->ncols; i++) cols[i] = NAN;
  if (t->nsums) {
    PetscCall(PetscMalloc1(t->nsums, &g));
    PetscCallMPI(MPI_Allreduce(sums, g, (PetscMPIInt)t->nsums, MPIU_REAL, MPIU_SUM, comm));
  }
  if (t->ops_s.monitor) PetscCall(t->ops_s.monitor(t, t->ctx, step, g, cols));
  PetscCall(PetscFree(g));
  for (PetscInt i = 0; i < t->ncols; i++) {
    if (isnan(cols[i])) PetscCall(PetscSNPrintf(cell, sizeof cell, " %12s", "n/a"));
    else PetscCall(PetscSNPrintf(cell, sizeof cell, " %12.4e", (double)cols[i]));
    PetscCall(PetscStrlcat(line, cell, sizeof line));
  }
  if (!t->quiet) PetscCall(PetscPrintf(comm, "%8" PetscInt_FMT "%s %10.3e %8.1f\n", step, line, (double)lr, wall));
  if (t->lc) {
    fprintf(t->lc, "%" PetscInt_FMT, step);
    for (PetscInt i = 0; i < t->ncols; i++) fprintf(t->lc, " %.6e", (double)cols[i]);
    fprintf(t->lc, " %.4e %.2f\n", (double)lr, wall);
    fflush(t->lc);
  }
  for (PetscInt i = 0; i < t->nsums; i++) sums[i] = 0;
  PetscCall(PetscLogEventEnd(SG_TRAINER_Monitor, t, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Header(SgTrainer t)
{
  char line[1024] = "", cell[64];

  PetscFunctionBegin;
  if (t->quiet) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < t->ncols; i++) {
    PetscCall(PetscSNPrintf(cell, sizeof cell, " %12s", t->cols[i]));
    PetscCall(PetscStrlcat(line, cell, sizeof line));
  }
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)t), "%8s%s %10s %8s\n", "step", line, "lr", "wall_s"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One step's forward, loss and backward with the sync around backward. *bad: the loss or a metric is
   not finite on this rank. */
static PetscErrorCode Step(SgTrainer t, PetscInt k, const SgLoaderBatch *b, const SgTrainerStepInfo *info, PetscReal sums[], PetscBool *bad, double *lv)
{
  SgnnTensor loss = NULL;

  PetscFunctionBegin;
  *bad = PETSC_FALSE;
  *lv  = 0;
  if (!SgTrainerGradBucketed(t)) SgCallNN(sgnn_params_zero_grad(t->P)); /* gradient buckets zero themselves at first use (zerograd.c) */
  if (b->nlocal > 0) {
    double v;
    PetscCall(PetscLogEventBegin(SG_TRAINER_Loss, t, 0, 0, 0));
    PetscCall(t->ops_s.loss(t, t->ctx, k, b, info, &loss, sums));
    PetscCall(PetscLogEventEnd(SG_TRAINER_Loss, t, 0, 0, 0));
    SgCallNN(sgnn_tensor_item(loss, &v));
    *bad = (PetscBool)!isfinite(v);
    *lv  = v;
    for (PetscInt i = 0; i < t->nsums; i++) *bad = (PetscBool)(*bad || !isfinite(sums[i]));
  }
  /* begin after the loss: a surrogate's forward may itself differentiate (forces), and only the
     final backward's gradients are the ones to send */
  PetscCall(t->sync->begin(t->sync, b->nlocal));
  if (loss) {
    PetscCall(PetscLogEventBegin(SG_TRAINER_Backward, t, 0, 0, 0));
    SgCallNN(sgnn_backward(loss));
    sgnn_tensor_free(&loss);
    PetscCall(PetscLogEventEnd(SG_TRAINER_Backward, t, 0, 0, 0));
  }
  PetscCall(SgTrainerZero3BucketDrain(t)); /* stage 3 by buckets: this rank's reads done before any owner updates its block (zero3b.c) */
  PetscCall(PetscLogEventBegin(SG_TRAINER_Sync, t, 0, 0, 0));
  PetscCall(t->sync->end(t->sync, b->nglobal));
  PetscCall(PetscLogEventEnd(SG_TRAINER_Sync, t, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Checkpoint(SgTrainer t, PetscInt step)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(SG_TRAINER_Checkpoint, t, 0, 0, 0));
  PetscCall(SgTrainerZero3AcquireWhole(t)); /* stage 3: whole weights to write (collective) */
  if (t->ops_s.checkpoint) { /* collective: rank 0 writes; a failure there (a full disk) ends every rank with one line */
    SgErrorHold    held = {"", 0};
    PetscErrorCode ierr;
    char           what[PETSC_MAX_PATH_LEN + 64];
    PetscCall(SgErrorHoldPush(&held));
    ierr = t->ops_s.checkpoint(t, t->ctx, SG_TRAINER_CKPT_WRITE, t->ckpt, &step);
    PetscCall(SgErrorHoldPop());
    PetscCall(PetscSNPrintf(what, sizeof what, "%s: checkpoint %s not written", t->name, t->ckpt));
    PetscCall(SgErrorAgree(PetscObjectComm((PetscObject)t), ierr, &held, what));
  } else PetscCall(SgTrainerCheckpointDefault(t, SG_TRAINER_CKPT_WRITE, t->ckpt, &step)); /* collective */
  PetscCall(PetscLogEventEnd(SG_TRAINER_Checkpoint, t, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the checkpoint of a signal stop when the run has no save_ckpt: BASE.chk.h5 of the job's output
   (surge train's -train_output), else NAME.chk.h5 in the working directory */
static PetscErrorCode SignalCheckpointName(SgTrainer t)
{
  const char *base = SgStopSignalCheckpointBase();

  PetscFunctionBegin;
  if (base[0]) PetscCall(PetscSNPrintf(t->ckpt, sizeof t->ckpt, "%s.chk.h5", base));
  else PetscCall(PetscSNPrintf(t->ckpt, sizeof t->ckpt, "%s.chk.h5", t->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerTrain(SgTrainer t)
{
  MPI_Comm   comm = PetscObjectComm((PetscObject)t);
  PetscReal *sums = NULL;
  double     t0   = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(SgTrainerSetUp(t));
  if (t->restart[0]) PetscCall(PetscPrintf(comm, "%s: restarting from %s after step %" PetscInt_FMT " of %" PetscInt_FMT " (lr %.4g)\n", t->name, t->restart, t->step0, t->nsteps, sgnn_lr_at(&t->sched, t->step0) * t->pl.scale));
  PetscCall(PetscCalloc1(t->nsums + 1, &sums));
  if (t->stop_on_signal) PetscCall(SgStopSignalInstall()); /* stays until exit: a signal while the model is written is noted, not fatal */
  PetscCall(Header(t));
  for (PetscInt step = t->step0; step < t->nsteps; step++) {
    SgTrainerStepInfo info = {step, sgnn_lr_at(&t->sched, step) * t->pl.scale, t->sched.lr0}; /* plateau factor: 1 unless cut */
    SgLoaderBatch     b;
    PetscBool         done, bad, last = (PetscBool)(step == t->nsteps - 1), stop = PETSC_FALSE;
    PetscInt          k;
    double            lv;
    int               sig = 0;

    PetscCall(PetscLogEventBegin(SG_TRAINER_Step, t, 0, 0, 0));
    PetscCall(SgTrainerStreamOfStep(t, step, &k));
    PetscCall(SgLoaderNext(t->streams[k].ld, &b, &done));
    PetscCheck(!done, comm, PETSC_ERR_PLIB, "%s: the loader of stream %" PetscInt_FMT " ran out of batches at step %" PetscInt_FMT, t->name, k, step);
    PetscCall(SgTrainerZero3Acquire(t)); /* stage 3: the whole slab from the ranks' blocks, or the views to their buckets (zero3.c); else nothing */
    PetscCall(Step(t, k, &b, &info, sums, &bad, &lv));
    /* before the update: bad data, or a loss that is no longer finite, stop the run here (collective)
       so no checkpoint or model with NaN weights is written */
    {
      PetscErrorCode ierr = t->ops_s.check ? t->ops_s.check(t, t->ctx, k, &b) : PETSC_SUCCESS;
      int            d    = bad ? 1 : 0;
      if (!ierr) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_INT, MPI_MAX, comm));
      if (ierr || d) {
        PetscCall(PetscFree(sums));
        PetscCall(SgTrainerStopStreams(t));
        PetscCall(ierr);
        SETERRQ(comm, PETSC_ERR_NOT_CONVERGED, "%s: the loss is not finite at step %" PetscInt_FMT " (lr %g): training diverged; the weights of the last checkpoint%s%s are intact: continue from it (restart) with a smaller start_lr, or check the model's statistics", t->name, step + 1, (double)info.lr, t->ckpt[0] ? " " : "", t->ckpt[0] ? t->ckpt : " (none written: set save_freq/save_ckpt)");
      }
    }
    PetscCall(SgTrainerPlateauStep(t, step, lv, b.nglobal)); /* plateau.c: both off by default */
    PetscCall(SgTrainerClipStep(t));
    PetscCall(PetscLogEventBegin(SG_TRAINER_Update, t, 0, 0, 0));
    SgCallNN(sgnn_optim_set_lr(t->opt, info.lr));
    t->cub_lr = info.lr; /* lion_cub's scale */
    PetscCall(SgTrainerZeroUpdate(t)); /* sharded: this rank's block, then the all-gather (zero.c) */
    PetscCall(PetscLogEventEnd(SG_TRAINER_Update, t, 0, 0, 0));
    t->step = step + 1;
    if (t->max_time > 0) { /* rank 0's clock decides, so every rank stops at the same step */
      PetscInt s = (MPI_Wtime() - t0) > t->max_time;
      PetscCallMPI(MPI_Bcast(&s, 1, MPIU_INT, 0, comm));
      stop = (PetscBool)s;
    }
    if (t->stop_on_signal && !last) PetscCall(SgStopSignalAgree(comm, &sig)); /* collective: the ranks stop at the same step */
    if (sig) stop = PETSC_TRUE;
    PetscCall(PetscLogEventEnd(SG_TRAINER_Step, t, 0, 0, 0));
    if ((step + 1) % t->disp == 0 || last || stop) {
      PetscCall(SgTrainerZero3AcquireWhole(t)); /* the monitor may evaluate the model; without buckets the next step reuses the gather */
      PetscCall(Monitor(t, step + 1, sums, info.lr, MPI_Wtime() - t0));
    }
    /* the monitor may ask to stop (early stopping); so may the clock */
    if (t->stop_reason[0] && !last) stop = PETSC_TRUE;
    if (sig && !t->ckpt[0]) PetscCall(SignalCheckpointName(t));
    if (t->ckpt[0] && ((t->ckpt_every > 0 && (step + 1) % t->ckpt_every == 0 && !last) || stop)) PetscCall(Checkpoint(t, step + 1));
    if (stop && sig) {
      PetscCall(PetscPrintf(comm, "surge: stopped by %s after step %" PetscInt_FMT " of %" PetscInt_FMT ": checkpoint %s written; continue with the same command and -%s_restart %s\n", SgStopSignalName(sig), step + 1, t->nsteps, t->ckpt, t->name, t->ckpt));
      break;
    }
    if (stop) {
      if (t->stop_reason[0]) {
        if (!t->quiet) PetscCall(PetscPrintf(comm, "%s: stopping after %" PetscInt_FMT " steps: %s\n", t->name, step + 1, t->stop_reason));
      } else PetscCall(PetscPrintf(comm, "%s: stopping after %" PetscInt_FMT " steps: max_time %g s reached\n", t->name, step + 1, (double)t->max_time));
      break;
    }
  }
  PetscCall(PetscFree(sums));
  PetscCall(SgTrainerZero3AcquireWhole(t)); /* the caller gets whole weights back (stage 3) */
  PetscCall(SgTrainerGradBucketRestore(t));  /* and a gradient slab (by buckets it had no memory) */
  PetscCall(SgTrainerStopStreams(t));
  PetscCall(SgTrainerPlateauReport(t, t->step));
  if (t->sync->describe) {
    char line[256];
    PetscCall(t->sync->describe(t->sync, line, sizeof line));
    PetscCall(PetscInfo(t, "%s", line));
  }
  if (t->shard == 3) { /* what the ranks held, measured over the run (the start-up line's figures are from the sizes before any step) */
    PetscReal rest[3], peak[3], mx[6];
    PetscCall(SgTrainerGetShardResident(t, rest, peak));
    for (int i = 0; i < 3; i++) {
      mx[i]     = rest[i];
      mx[3 + i] = peak[i];
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mx, 6, MPIU_REAL, MPIU_MAX, comm));
    if (!t->quiet) PetscCall(PetscPrintf(comm, "%s: ZeRO stage 3 measured per rank (largest): between steps weights %.4g + gradients %.4g + optimizer state %.4g KiB; at the peak of a step %.4g + %.4g + %.4g KiB\n", t->name, (double)mx[0] / 1024, (double)mx[1] / 1024, (double)mx[2] / 1024, (double)mx[3] / 1024, (double)mx[4] / 1024, (double)mx[5] / 1024));
    if (SgTrainerZero3Bucketed(t) && !t->quiet) { /* zero3b.c: what the one-sided reads brought, per step of this run */
      PetscInt  nb;
      PetscReal fb[3];
      PetscCall(SgTrainerGetShardBucketStats(t, &nb, &fb[0], &fb[1], &fb[2]));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, fb, 3, MPIU_REAL, MPIU_MAX, comm));
      PetscCall(PetscPrintf(comm, "%s: ZeRO stage 3 by buckets (largest rank): %.4g fills of its %" PetscInt_FMT " buckets per step (%.0f%% of them fetched ahead), %.4g KiB read per step from the other ranks' blocks\n", t->name, (double)fb[0] / PetscMax(1, t->step - t->step0), nb, 100 * (double)fb[2] / PetscMax(1, (double)fb[0]), (double)fb[1] / 1024 / PetscMax(1, t->step - t->step0)));
      { /* the replayed order (each step after a rank's first that used the model, zero3b.c): the rank that fetched the fewest ahead */
        PetscReal rf, ra, frac;
        PetscCall(SgTrainerGetShardBucketReplayStats(t, &rf, &ra));
        frac = rf > 0 ? ra / rf : 2; /* 2: this rank replayed no fill */
        PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &frac, 1, MPIU_REAL, MPIU_MIN, comm));
        if (frac <= 1) PetscCall(PetscPrintf(comm, "%s: ZeRO stage 3 by buckets, the steps that replayed the previous step's order of uses: %.1f%% of the fills fetched ahead (the rank with the fewest)\n", t->name, 100 * (double)frac));
      }
    }
  }
  if (SgTrainerGradBucketed(t) && !t->quiet) { /* zerograd.c: the gradient held, measured over the run */
    int       nb;
    double    gb, gpeak, big;
    PetscReal x[6];
    SgTrainerGradBucketMem(t, &gb, NULL, &gpeak, &nb, &big);
    PetscCall(SgTrainerGetShardGradStats(t, NULL, NULL, &x[2], &x[3]));
    x[0] = gb;
    x[1] = gpeak;
    x[4] = SgTrainerGradBucketFlushes(t);
    x[5] = SgTrainerGradBucketFlushBytes(t);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, x, 6, MPIU_REAL, MPIU_MAX, comm));
    PetscCall(PetscPrintf(comm, "%s: ZeRO stage %" PetscInt_FMT " gradient by buckets measured (largest rank): the block %.4g KiB + at most %.4g KiB of its %d buckets open at once (the bound, %d largest, %.4g KiB; the whole slab %.4g KiB); %.4g bucket sums (%.4g of them partial, sent early to keep at most %d open: %.4g KiB of whole buckets) and %.4g KiB sent to the other ranks per step\n", t->name, t->shard, (double)x[0] / 1024, (double)x[1] / 1024, nb, SgTrainerGradBucketOpenLimit(t), big / 1024, (double)sgnn_tensor_numel(sgnn_params_values(t->P)) * (double)(sgnn_tensor_dtype(sgnn_params_values(t->P)) == SGNN_F32 ? 4 : 8) / 1024, (double)x[2] / PetscMax(1, t->step - t->step0), (double)x[4] / PetscMax(1, t->step - t->step0), SgTrainerGradBucketOpenLimit(t), (double)x[5] / 1024 / PetscMax(1, t->step - t->step0), (double)x[3] / 1024 / PetscMax(1, t->step - t->step0)));
  }
  if (!t->quiet) PetscCall(PetscPrintf(comm, "%s: training took %.1f s\n", t->name, MPI_Wtime() - t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
