/* BASE.log: the run's terminal output, kept by src/base termlog.c, written through the write path.

   The log is a copy; it never stops a run. When BASE.log is the run's own standard output or error
   ('surge run D -sim_output x > x.log', as tests and batch scripts do) the terminal already goes
   there and no copy is made. When it is a file surge may not write (an input of the run, or a file
   that is not surge's run log: the file of '| tee x.log', a user's notes) it is left alone and one
   warning line says so; -overwrite lets surge replace the latter, as for any output. */
#include <sys/stat.h>
#include <unistd.h>
#include "sgsys.h"
#include "sgwrite.h"

static PetscErrorCode Attach(const char option[], const char path[], PetscBool append)
{
  char       tmp[PETSC_MAX_PATH_LEN + 32], name[PETSC_MAX_PATH_LEN];
  SgTextFile tf;
  FILE      *fp;

  PetscFunctionBegin;
  PetscCall(SgTextFileOpen(option, path, SG_FILE_RUN_LOG, "#", append, &tf));
  PetscCall(SgTextFileDetach(&tf, &fp, tmp, sizeof tmp, name, sizeof name));
  PetscCall(SgTermLogAttach(fp, tmp, name, SgWriteCommitErrno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* is path the file that fd 1 or 2 writes to? */
static PetscBool IsTerminalFile(const char path[])
{
  struct stat p, s;

  if (stat(path, &p)) return PETSC_FALSE;
  for (int fd = 1; fd <= 2; fd++)
    if (!fstat(fd, &s) && s.st_dev == p.st_dev && s.st_ino == p.st_ino) return PETSC_TRUE;
  return PETSC_FALSE;
}

PetscErrorCode SgRunLogOpen(MPI_Comm comm, const char option[], const char base[], PetscBool append)
{
  char           path[PETSC_MAX_PATH_LEN], msg[2 * PETSC_MAX_PATH_LEN] = "";
  PetscMPIInt    wrank;
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof path, "%s.log", base));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &wrank));
  { /* every rank knows the temporary's name before it exists: a crash signal or an abort between its
       creation and SgTermLogAttach removes it (SgTermLogCrashSignal, SgTermLogAbandon) */
    char tmp[PETSC_MAX_PATH_LEN + 32];
    PetscCall(SgWriteTempName(path, tmp, sizeof tmp));
    SgTermLogNoteTemp(tmp);
  }
  PetscCall(SgAgreeBegin()); /* e.g. the temporary cannot be created: one line on every rank */
  if (!wrank && !IsTerminalFile(path)) {
    ierr = SgWriteCheckMessage(option, path, SG_FILE_RUN_LOG, msg, sizeof msg);
    if (!ierr && msg[0]) SgTermPrintf(stderr, "surge: warning: no run log: %s\n", msg);
    else if (!ierr) ierr = Attach(option, path, append);
  }
  PetscCall(SgAgreeEnd(comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
