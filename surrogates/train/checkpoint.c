/* SgTrainer's own checkpoint, for surrogates without a checkpoint format of their own: io/nn's
   training checkpoint (weights, optimizer moments and step, the trainer's step) plus the rank count
   in /config, because the loaders' data stream depends on it: a restart must use the same ranks to
   continue bit for bit; with plateau decay or clipping on, their state (plateau.c) in /config too.
   Written to a temporary name and renamed by io/nn. */
#include "sgtrainerimpl.h"
#include "sgnncheckpoint.h"

PetscErrorCode SgTrainerCheckpointDefault(SgTrainer t, SgTrainerCkptMode mode, const char path[], PetscInt *step)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);
  PetscMPIInt size;
  char        ranks[32], sched[256];
  const char *keys[2] = {"trainer_ranks", "trainer_schedule"}, *vals[2] = {ranks, sched};
  long        s       = (long)*step;
  PetscBool   pl      = (PetscBool)(t->plateau.window || t->clip > 0); /* plateau.c's state, only when on */
  SgNNState   st      = {pl ? 2 : 1, keys, vals, t->P, t->opt, 0, NULL, &s};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (mode == SG_TRAINER_CKPT_WRITE) {
    PetscCall(PetscSNPrintf(ranks, sizeof ranks, "%d", size));
    if (pl) PetscCall(SgTrainerPlateauEncode(t, sched, sizeof sched));
    PetscCall(SgNNCheckpointWrite(comm, path, &st));
  } else {
    PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_ranks", ranks, sizeof ranks));
    PetscCheck(atoi(ranks) == size, comm, PETSC_ERR_USER_INPUT, "%s: restart: %s was written by a run on %s rank(s), this one has %d; the data stream differs: restart on %s rank(s)", t->name, path, ranks, size, ranks);
    if (pl) {
      PetscCall(SgNNCheckpointReadConfig(comm, path, "trainer_schedule", sched, sizeof sched));
      PetscCall(SgTrainerPlateauDecode(t, path, sched));
    }
    PetscCall(SgNNCheckpointRead(comm, path, &st));
    *step = (PetscInt)s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
