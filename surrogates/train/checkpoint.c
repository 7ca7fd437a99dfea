/* SgTrainer's own checkpoint, for surrogates without a checkpoint format of their own: io/nn's
   training checkpoint (weights, optimizer moments and step, the trainer's step) plus the rank count
   in /config, because the loaders' data stream depends on it: a restart must use the same ranks to
   continue bit for bit. With spatial ranks the entry also names the process grid ("4 = 2 data groups
   x 2 spatial ranks"); a plain count means every rank was its own data group. With plateau decay or
   clipping on, their state (plateau.c) is in /config too. Written to a temporary name and renamed by
   io/nn. */
#include "sgtrainerimpl.h"
#include "sgnncheckpoint.h"

PetscErrorCode SgTrainerCheckpointDefault(SgTrainer t, SgTrainerCkptMode mode, const char path[], PetscInt *step)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  char        ranks[128], mine[128], sched[256];
  const char *keys[2] = {"trainer_ranks", "trainer_schedule"}, *vals[2] = {ranks, sched};
  long        s       = (long)*step;
  PetscBool   pl      = (PetscBool)(t->plateau.window || t->clip > 0); /* plateau.c's state, only when on */
  SgNNState   st      = {pl ? 2 : 1, keys, vals, t->P, t->opt, 0, NULL, &s};
  SgnnOptim   full    = NULL; /* sharded (zero.c): the whole state, gathered, so any stage restarts */

  PetscFunctionBegin;
  if (t->shard) {
    if (mode == SG_TRAINER_CKPT_WRITE) PetscCall(SgTrainerZeroGather(t, &full));
    else SgCallNN(sgnn_optim_create(t->P, &t->oc, &full));
    st.optim = full;
  }
  PetscCall(SgTrainerGridDescribe(t, mine, sizeof mine));
  if (mode == SG_TRAINER_CKPT_WRITE) {
    PetscCall(PetscStrncpy(ranks, mine, sizeof ranks));
    if (pl) PetscCall(SgTrainerPlateauEncode(t, sched, sizeof sched));
    PetscCall(SgNNCheckpointWrite(comm, path, &st));
  } else {
    PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_ranks", ranks, sizeof ranks));
    PetscCheck(!strcmp(ranks, mine), comm, PETSC_ERR_USER_INPUT, "%s: restart: %s was written by a run on %s rank(s), this one has %s; the data stream differs: restart on %s rank(s)", t->name, path, ranks, mine, ranks);
    if (pl) {
      PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_schedule", sched, sizeof sched));
      PetscCall(SgTrainerPlateauDecode(t, path, sched));
    }
    PetscCall(SgNNCheckpointRead(comm, path, &st));
    *step = (PetscInt)s;
    if (full) PetscCall(SgTrainerZeroScatter(t, full));
  }
  sgnn_optim_destroy(&full);
  PetscFunctionReturn(PETSC_SUCCESS);
}
