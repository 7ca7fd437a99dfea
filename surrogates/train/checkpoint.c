/* SgTrainer's own checkpoint, for surrogates without a checkpoint format of their own: io/nn's
   training checkpoint (weights, optimizer moments and step, the trainer's step) plus the rank count
   in /config, because the loaders' data stream depends on it: a restart must use the same ranks to
   continue bit for bit. With spatial ranks the entry also names the process grid ("4 = 2 data groups
   x 2 spatial ranks"); a plain count means every rank was its own data group. With plateau decay or
   clipping on, their state (plateau.c) is in /config too. Written to a temporary name and renamed by
   io/nn. */
#include "sgtrainerimpl.h"
#include "sgnncheckpoint.h"
#include "sgsys.h"

/* The training's options (SgConfigList: deck after command-line overrides, data and model files by
   content) but what a restart may change: how long it trains, how often it reports and checkpoints,
   where it writes (output names are left out anyway), the plateau's fresh start, and how the state is
   laid out over the ranks -- the ZeRO stage (the checkpoint holds the whole state, so any stage
   restarts) and the gradient sync (the same sums) -- while the rank grid is checked by itself. */
static PetscErrorCode TrainOptions(SgTrainer t, char **list)
{
  const char *const budget[] = {"numb_steps", "epochs", "max_time", "disp_freq", "save_freq", "save_ckpt", "restart", "lcurve", "verbose", "plateau_fresh_on_restart", "shard", "sync", "data_groups", "spatial_ranks", NULL};
  char              skip[16][96];
  const char       *names[17];
  const char       *prefix;
  int               k = 0;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)t, &prefix));
  for (; budget[k]; k++) {
    PetscCall(PetscSNPrintf(skip[k], sizeof skip[k], "%s%s", prefix ? prefix : "", budget[k]));
    names[k] = skip[k];
  }
  names[k++] = "train_output";
  names[k]   = NULL;
  PetscCall(SgConfigList(PetscObjectComm((PetscObject)t), NULL, names, list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A restart continues its own training: the options recorded in the checkpoint (a checkpoint written
   before they were recorded is accepted with a warning: its architecture, rank grid and schedule are
   still checked). */
static PetscErrorCode CheckTrainOptions(SgTrainer t, const char path[], const char now[])
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)t);
  const int cap  = 1 << 16;
  char     *then, what[1024] = "";

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(cap, &then));
  PetscCall(SgNNCheckpointReadConfig(comm, path, "?trainer_options", then, (size_t)cap));
  if (!then[0]) PetscCall(PetscPrintf(comm, "surge: warning: the training checkpoint %s records no options (written by an older surge): a restart with other options than its training's is not detected\n", path));
  else PetscCall(SgConfigListDiff(comm, NULL, then, now, what, sizeof what));
  PetscCall(PetscFree(then));
  PetscCheck(!what[0], comm, PETSC_ERR_USER_INPUT, "%s: restart: %s was written by a training with other options: %s; restart with that training's options (only the step count, reporting, checkpoint cadence and output names may change), or start a new training (init from its weights where the surrogate offers it)", t->name, path, what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerCheckpointDefault(SgTrainer t, SgTrainerCkptMode mode, const char path[], PetscInt *step)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  char        ranks[128], mine[128], sched[256];
  char       *opts    = NULL;
  const char *keys[3] = {"trainer_ranks", "trainer_options", "trainer_schedule"}, *vals[3] = {ranks, NULL, sched};
  long        s       = (long)*step;
  PetscBool   pl      = (PetscBool)(t->plateau.window || t->clip > 0); /* plateau.c's state, only when on */
  SgNNState   st      = {pl ? 3 : 2, keys, vals, t->P, t->opt, 0, NULL, &s};

  PetscFunctionBegin;
  if (t->shard) { /* zero.c: each rank's block of the moments; the file holds the whole slabs, so any stage restarts */
    st.optim_counts = t->zcount;
    st.optim_displs = t->zdispl;
  }
  PetscCall(SgTrainerGridDescribe(t, mine, sizeof mine));
  PetscCall(TrainOptions(t, &opts));
  vals[1] = opts;
  if (mode == SG_TRAINER_CKPT_WRITE) {
    PetscCall(PetscStrncpy(ranks, mine, sizeof ranks));
    if (pl) PetscCall(SgTrainerPlateauEncode(t, sched, sizeof sched));
    PetscCall(SgNNCheckpointWrite(comm, path, &st));
  } else {
    PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_ranks", ranks, sizeof ranks));
    PetscCheck(!strcmp(ranks, mine), comm, PETSC_ERR_USER_INPUT, "%s: restart: %s was written by a run on %s rank(s), this one has %s; the data stream differs: restart on %s rank(s)", t->name, path, ranks, mine, ranks);
    PetscCall(CheckTrainOptions(t, path, opts));
    if (pl) {
      PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_schedule", sched, sizeof sched));
      PetscCall(SgTrainerPlateauDecode(t, path, sched));
    }
    PetscCall(SgNNCheckpointRead(comm, path, &st));
    *step = (PetscInt)s;
  }
  PetscCall(PetscFree(opts));
  PetscFunctionReturn(PETSC_SUCCESS);
}
