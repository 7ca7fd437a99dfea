/* Start-up: PETSc, the deck, surge's classes.

   Precedence is deck < command line: PetscInitialize has already put argv into the options
   database, so the deck (read and checked by SgDeckInsert, deck.c) is inserted next (it would
   override argv) and argv is inserted once more on top. tests/regression/core/options_test.py
   checks the precedence. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include "sgsys.h"
#include "sgsolver.h"

PETSC_EXTERN PetscErrorCode SgSolverInitializePackage(void);

PetscBool SgErrorIsUserClass(PetscErrorCode n)
{
  return (n == PETSC_ERR_USER_INPUT || n == PETSC_ERR_FILE_OPEN || n == PETSC_ERR_FILE_UNEXPECTED || n == PETSC_ERR_FILE_READ || n == PETSC_ERR_FP || n == PETSC_ERR_NOT_CONVERGED) ? PETSC_TRUE : PETSC_FALSE;
}

/* Deck and file mistakes are the user's to fix, not ours to debug (SgErrorIsUserClass): print the
   message alone, once per communicator, instead of PETSc's stack trace. Everything else keeps the
   full trace. */
static PetscErrorCode SgErrorHandler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  PetscMPIInt rank = 0;
  PetscBool   user = SgErrorIsUserClass(n);

  if (!user) return PetscTraceBackErrorHandler(comm, line, fun, file, n, p, mess, ctx);
  if (p == PETSC_ERROR_INITIAL) {
    /* raised before the unknown-key check ran: a misspelled key is the cause to report (its
       consequence, e.g. "the run has no end", is what tripped) */
    char      near[1024];
    PetscBool miss = PETSC_FALSE;
    PetscMPIInt wrank = 0;
    if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(PETSC_COMM_WORLD, &wrank);
    if (SgOptionsNearMiss(near, sizeof near, &miss)) miss = PETSC_FALSE;
    /* kept for the ranks' agreement (agree.c). Printed now by world rank 0 when it is its
       communicator's rank 0; raised elsewhere (a rank's own check on PETSC_COMM_SELF, a sub-group)
       it is printed once by SgErrorFinish, so every rank failing alike still gives one line */
    if (SgErrorRecord(miss ? near : mess, rank || wrank ? PETSC_FALSE : PETSC_TRUE)) {
      SgTermPrintf(stderr, "surge: error: %s\n", miss ? near : mess); /* flushed; kept for BASE.log */
    }
  }
  return n;
}

/* A crash (SIGSEGV, SIGBUS, SIGFPE, ... or a SIGTERM outside a loop that stops on it), in place of
   PETSc's handler: one line, the run log closed as a failed run's (termlog.c: no BASE.log.tmp stays
   behind), and the process ends by the signal. */
static PetscErrorCode SgSignalHandler(int sig, void *ctx)
{
  /* a handler may have interrupted malloc or stdio: fixed strings and async-signal-safe calls only */
  static const struct {
    int         sig;
    const char *line;
  } lines[] = {
    {SIGSEGV, "surge: crashed: caught signal SIGSEGV (segmentation fault); this is a bug: please report it with the command and this output\n"},
    {SIGBUS, "surge: crashed: caught signal SIGBUS (bus error); this is a bug: please report it with the command and this output\n"},
    {SIGFPE, "surge: crashed: caught signal SIGFPE (arithmetic exception); this is a bug: please report it with the command and this output\n"},
    {SIGILL, "surge: crashed: caught signal SIGILL (illegal instruction); this is a bug: please report it with the command and this output\n"},
    {SIGABRT, "surge: crashed: caught signal SIGABRT (abort); this is a bug: please report it with the command and this output\n"},
    {SIGTERM, "surge: killed by SIGTERM where the run cannot stop at a step: no checkpoint written\n"},
    {SIGINT, "surge: killed by SIGINT where the run cannot stop at a step: no checkpoint written\n"},
    {SIGUSR1, "surge: killed by SIGUSR1 where the run cannot stop at a step: no checkpoint written\n"},
  };
  const char *line = "surge: killed by a signal: no checkpoint written\n";

  for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++)
    if (lines[k].sig == sig) line = lines[k].line;
  SgTermLogCrashSignal(line);
  SgErrorRunOnExit(); /* BASE.lock (unlink, close: async-signal-safe) -- also on a rank mpiexec ends */
  /* then die of the signal itself: PETSc's default handler prints and calls MPI_Abort, which are not
     async-signal-safe and hung (in malloc) when the crash had interrupted malloc; a process killed
     by a signal makes mpiexec end the job's other ranks */
  (void)ctx;
  (void)signal(sig, SIG_DFL);
  (void)raise(sig);
  return PETSC_SUCCESS;
}

PetscErrorCode SgInitialize(int *argc, char ***argv, const char deck[], const char help[])
{
  PetscFunctionBegin;
  /* The training loader reads with MPI-IO from its prefetch thread; without full thread support it
     falls back to per-rank POSIX reads (correct, slower on shared file systems). */
  PETSC_MPI_THREAD_REQUIRED = MPI_THREAD_MULTIPLE;
  PetscCall(PetscInitialize(argc, argv, NULL, help));
  PetscCall(PetscPushErrorHandler(SgErrorHandler, NULL));
  PetscCall(SgTermSetUp()); /* the terminal copy for BASE.log (termlog.c) */
  {
    PetscBool nosig;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-no_signal_handler", &nosig));
    if (!nosig) PetscCall(PetscPushSignalHandler(SgSignalHandler, NULL));
  }
  /* 'surge info X | head -1': the reader closing the pipe is no error of the run. PETSc's handler
     turned SIGPIPE into a traceback and MPI_ABORT. Blocked (not ignored: PetscFinalize puts the
     default action back, and exit() flushes stdout after it), a write to the closed pipe fails
     quietly and the job ends as it would have, its files written. */
  {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
  }
  PetscCall(SgAgreeSetUp());
  if (deck) {
    PetscCall(SgDeckInsert(PETSC_COMM_WORLD, deck));
    PetscCall(PetscOptionsInsertArgs(NULL, *argc - 1, *argv + 1));
  }
  PetscCall(SgPathsSetFromOptions(PETSC_COMM_WORLD));
  PetscCall(SgSolverInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Standard output whose reader has gone (SIGPIPE is blocked, see SgInitialize): PetscFinalize checks
   its own fflush of stdout, so point the stream at /dev/null first; what the reader no longer
   wanted is dropped, as it would have been. */
static void DetachClosedStdout(void)
{
  if (fflush(stdout) == 0 || errno != EPIPE) return;
  if (!freopen("/dev/null", "w", stdout)) clearerr(stdout);
}

PetscErrorCode SgFinalize(void)
{
  PetscFunctionBegin;
  DetachClosedStdout();
  PetscCall(SgOptionsCatalogDestroy());
  PetscCall(SgInputsDestroy());
  PetscCall(SgDeckDestroy());
  PetscCall(PetscFinalize());
  if (SgTermLogEnd(PETSC_FALSE)) return PETSC_ERR_FILE_WRITE; /* after PetscFinalize: -log_view's table is in BASE.log */
  PetscFunctionReturn(PETSC_SUCCESS);
}
