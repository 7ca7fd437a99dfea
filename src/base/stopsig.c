/* Stop on a signal: a batch system's warning before a time limit (Slurm's --signal=USR1@120, or the
   SIGTERM it sends at the limit) becomes a clean stop with a checkpoint, in `surge run` (src/driver/
   sim.c) and `surge train` (surrogates/train/train.c). The handler only notes the signal; the loop
   looks at the next step (or batch) boundary, where the ranks agree (one of them may have seen it a
   step later), writes the checkpoint and stops with one line saying how to continue. PETSc's own
   handler (a traceback and an abort) is replaced for these two signals only, and only while a loop
   that can stop runs (SgStopSignalInstall .. SgStopSignalRemove). */
#include "sgsys.h"
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t noted;
static int                   installed, caught;
static struct sigaction      old_term, old_usr1;
static char                  chk_base[PETSC_MAX_PATH_LEN];

static void Note(int sig)
{
  noted = sig;
}

PetscErrorCode SgStopSignalInstall(void)
{
  struct sigaction sa;

  PetscFunctionBegin;
  if (installed++) PetscFunctionReturn(PETSC_SUCCESS);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = Note;
  sigemptyset(&sa.sa_mask);
  noted = 0;
  PetscCheck(!sigaction(SIGTERM, &sa, &old_term) && !sigaction(SIGUSR1, &sa, &old_usr1), PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot install the checkpoint-on-signal handler");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgStopSignalRemove(void)
{
  PetscFunctionBegin;
  if (!installed || --installed) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!sigaction(SIGTERM, &old_term, NULL) && !sigaction(SIGUSR1, &old_usr1, NULL), PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot restore the signal handlers");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgStopSignalAgree(MPI_Comm comm, int *sig)
{
  PetscMPIInt size;
  int         mine = (int)noted;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1) PetscCallMPI(MPI_Allreduce(&mine, sig, 1, MPI_INT, MPI_MAX, comm));
  else *sig = mine;
  if (*sig) caught = *sig;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int SgStopSignalCaught(void)
{
  return caught;
}

const char *SgStopSignalName(int sig)
{
  return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "a signal";
}

PetscErrorCode SgStopSignalSetCheckpointBase(const char base[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(chk_base, base ? base : "", sizeof chk_base));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *SgStopSignalCheckpointBase(void)
{
  return chk_base;
}
