/* Plateau decay of the learning rate and gradient-norm clipping: generic SgTrainer options that any
   surrogate may turn on (docs/train.md).

   Plateau (PyTorch's ReduceLROnPlateau, mode "min", relative threshold): the monitored value is the
   global mean training loss over each window of `window` steps (summed over ranks every step, so
   every rank holds the same value and takes the same decision). After a window whose mean is not
   below best * (1 - threshold), a counter grows; when it exceeds `patience`, the learning-rate
   factor is multiplied by `factor` (not below min_lr / lr0) and the counter restarts. The learning
   rate of a step is the schedule's times that factor, so plateau decay combines with warm-up or a
   staircase. The state (factor, best, counter, the running window) is part of the trainer's own
   checkpoint, so a restart continues bit for bit — unless fresh_on_restart: then the restart keeps
   the factor and the counts of cuts and clipped steps and starts the best, the bad-window counter
   and the window afresh, as a new scheduler would (a restart that changes the loss: MeshfreeFlowNet's
   second stage adds the PDE term, and stage 1's best is out of its reach, so every `patience`
   windows would cut the rate).

   Clipping: after the gradient sync (the slab holds the global gradient, the same on every rank)
   the slab is scaled so that its 2-norm is at most max_norm (sgnn_clip_grad_norm); the steps that
   were clipped and the largest norm seen are reported at the end of training. */
#include "sgtrainerimpl.h"
#include "sgsys.h"
#include <math.h>

PetscErrorCode SgTrainerSetPlateau(SgTrainer t, const SgTrainerPlateau *p)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)t);

  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, comm, PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  PetscCheck(p->window >= 0 && p->patience >= 0, comm, PETSC_ERR_USER_INPUT, "%s: plateau window (%" PetscInt_FMT ") and patience (%" PetscInt_FMT ") must be >= 0", t->name, p->window, p->patience);
  PetscCheck(!p->window || (p->factor > 0 && p->factor < 1), comm, PETSC_ERR_USER_INPUT, "%s: plateau factor %g must lie in (0, 1)", t->name, (double)p->factor);
  PetscCheck(!p->window || (p->threshold >= 0 && p->threshold < 1 && p->min_lr >= 0), comm, PETSC_ERR_USER_INPUT, "%s: plateau threshold %g must lie in [0, 1) and min_lr %g be >= 0", t->name, (double)p->threshold, (double)p->min_lr);
  t->plateau = *p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetClipNorm(SgTrainer t, PetscReal max_norm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  PetscCheck(max_norm >= 0, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: clip norm %g must be >= 0 (0: no clipping)", t->name, (double)max_norm);
  t->clip = max_norm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetLRFactor(SgTrainer t, PetscReal *f)
{
  PetscFunctionBegin;
  *f = t->pl.scale;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Inside a surrogate's options block (its prefix): -plateau_window, -plateau_patience,
   -plateau_factor, -plateau_threshold, -plateau_min_lr, -clip_norm. */
PetscErrorCode SgTrainerOptionsPlateau(PetscOptionItems *PetscOptionsObject, SgTrainerPlateau *p, PetscReal *clip)
{
  PetscFunctionBegin;
  PetscCall(SgOptionsInt("-plateau_window", "Plateau decay of the learning rate: steps per evaluation of the mean training loss (0: off)", p->window, &p->window, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-plateau_patience", "Plateau decay: windows without improvement tolerated before the learning rate is cut", p->patience, &p->patience, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-plateau_factor", "Plateau decay: factor applied to the learning rate at a plateau", "", p->factor, &p->factor, NULL, 1e-6, 1 - 1e-12));
  PetscCall(SgOptionsReal("-plateau_threshold", "Plateau decay: relative fall of the windowed loss below its best that counts as an improvement", "", p->threshold, &p->threshold, NULL, 0, 1 - 1e-12));
  PetscCall(SgOptionsReal("-plateau_min_lr", "Plateau decay: the learning rate is never cut below this", "", p->min_lr, &p->min_lr, NULL, 0, 10));
  PetscCall(SgOptionsBool("-plateau_fresh_on_restart", "Plateau decay: a restart keeps the learning-rate factor but forgets the best windowed loss (for a restart that changes the loss)", p->fresh_on_restart, &p->fresh_on_restart, NULL));
  PetscCall(SgOptionsReal("-clip_norm", "Scale the global gradient to this 2-norm when it is larger (0: no clipping)", "", *clip, clip, NULL, 0, 1e300));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PyTorch's defaults (ReduceLROnPlateau: factor 0.1, patience 10, threshold 1e-4); window 0 = off */
PetscErrorCode SgTrainerPlateauDefault(SgTrainerPlateau *p)
{
  PetscFunctionBegin;
  p->window = 0;
  p->patience = 10;
  p->factor = 0.1;
  p->threshold = 1e-4;
  p->min_lr = 0;
  p->fresh_on_restart = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerPlateauReset(SgTrainer t)
{
  PetscFunctionBegin;
  t->pl.scale = 1;
  t->pl.best = PETSC_MAX_REAL;
  t->pl.nbad = 0;
  t->pl.sum = 0;
  t->pl.n = 0;
  t->pl.ndecay = 0;
  t->pl.nclip = 0;
  t->pl.maxnorm = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the step's loss is known (every rank, collective when plateau is on): loss is this rank's
   loss tensor value (0 with no local samples), nglobal the global sample count. */
PetscErrorCode SgTrainerPlateauStep(SgTrainer t, PetscInt step, double loss, int64_t nglobal)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)t);
  double   g;

  PetscFunctionBegin;
  if (!t->plateau.window) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Allreduce(&loss, &g, 1, MPI_DOUBLE, MPI_SUM, comm));
  if (t->scaling == SG_TRAINER_LOSS_SUM) g /= (double)nglobal; /* the global mean per sample */
  t->pl.sum += g;
  t->pl.n++;
  if (t->pl.n < t->plateau.window) PetscFunctionReturn(PETSC_SUCCESS);
  {
    double mean = t->pl.sum / t->pl.n;
    t->pl.sum = 0;
    t->pl.n = 0;
    if (mean < t->pl.best * (1 - t->plateau.threshold)) {
      t->pl.best = mean;
      t->pl.nbad = 0;
    } else if (++t->pl.nbad > t->plateau.patience) {
      double lr0 = t->sched.lr0, old = t->pl.scale, s = old * t->plateau.factor;
      if (lr0 > 0 && lr0 * s < t->plateau.min_lr) s = t->plateau.min_lr / lr0;
      t->pl.nbad = 0;
      if (s < old) {
        t->pl.scale = s;
        t->pl.ndecay++;
        PetscCall(PetscInfo(t, "%s: plateau after step %" PetscInt_FMT " (window mean %g, best %g): learning-rate factor %g -> %g\n", t->name, step + 1, mean, t->pl.best, old, s));
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the sync: the global gradient clipped to max_norm (identical on every rank) */
PetscErrorCode SgTrainerClipStep(SgTrainer t)
{
  double norm;

  PetscFunctionBegin;
  if (!(t->clip > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  SgCallNN(sgnn_clip_grad_norm(t->P, t->clip, &norm));
  if (norm > t->clip) t->pl.nclip++;
  if (norm > t->pl.maxnorm) t->pl.maxnorm = norm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerPlateauReport(SgTrainer t, PetscInt steps)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)t);

  PetscFunctionBegin;
  /* best stays at PETSC_MAX_REAL until a whole window has been seen (a run shorter than one window) */
  if (t->plateau.window && t->pl.best < PETSC_MAX_REAL) PetscCall(PetscPrintf(comm, "%s: plateau decay: %" PetscInt_FMT " cut(s), learning-rate factor %g (best windowed loss %g)\n", t->name, t->pl.ndecay, (double)t->pl.scale, (double)t->pl.best));
  else if (t->plateau.window) PetscCall(PetscPrintf(comm, "%s: plateau decay: %" PetscInt_FMT " cut(s), learning-rate factor %g (no window of %" PetscInt_FMT " steps completed yet)\n", t->name, t->pl.ndecay, (double)t->pl.scale, t->plateau.window));
  if (t->clip > 0) PetscCall(PetscPrintf(comm, "%s: gradient clipped to norm %g at %" PetscInt_FMT " of %" PetscInt_FMT " steps (largest norm %g)\n", t->name, (double)t->clip, t->pl.nclip, steps, (double)t->pl.maxnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The state in the checkpoint's /config as one string; %.17g round-trips a double exactly */
PetscErrorCode SgTrainerPlateauEncode(SgTrainer t, char buf[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf, len, "%.17g %.17g %" PetscInt_FMT " %.17g %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %.17g", (double)t->pl.scale, (double)t->pl.best, t->pl.nbad, (double)t->pl.sum, t->pl.n, t->pl.ndecay, t->pl.nclip, (double)t->pl.maxnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerPlateauDecode(SgTrainer t, const char path[], const char buf[])
{
  double   scale, best, sum, maxnorm;
  long     nbad, n, ndecay, nclip;

  PetscFunctionBegin;
  PetscCheck(sscanf(buf, "%lg %lg %ld %lg %ld %ld %ld %lg", &scale, &best, &nbad, &sum, &n, &ndecay, &nclip, &maxnorm) == 8, PetscObjectComm((PetscObject)t), PETSC_ERR_FILE_UNEXPECTED, "%s: restart: %s has a damaged trainer_schedule entry '%s'", t->name, path, buf);
  t->pl.scale = scale;
  t->pl.best = best;
  t->pl.nbad = nbad;
  t->pl.sum = sum;
  t->pl.n = n;
  t->pl.ndecay = ndecay;
  t->pl.nclip = nclip;
  t->pl.maxnorm = maxnorm;
  if (t->plateau.fresh_on_restart) {
    t->pl.best = PETSC_MAX_REAL;
    t->pl.nbad = 0;
    t->pl.sum = 0;
    t->pl.n = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
