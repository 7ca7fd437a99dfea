/* Errors agreed across ranks: an error found on one rank ends every rank with one line, never a
   deadlock.

   Two mechanisms, one message store:
   - SgAgreeBegin/SgAgreeEnd bracket work whose checks are local (a rank reads its part of a file,
     validates its share of the data, asks its slab of a grid): errors raised inside are kept, not
     printed; SgAgreeEnd is a collective where every rank says whether it failed, and the first
     failing rank's message and class are raised on every rank of the communicator (the error
     handler then prints it once, on its rank 0). The ensemble's member errors work the same way.
   - SgErrorFinish is the safety net for a user error raised where no bracket was put: the ranks
     that did not fail may be waiting in a collective for the one that did. Every failing rank enters
     a non-blocking barrier on a communicator of its own (so it cannot match a collective the others
     are in) and waits a bounded time. If every rank arrives, they all failed: the lowest rank that
     holds a message prints it unless a rank already did, and MPI shuts down normally. If not, the
     others are stuck: this rank prints its message if it has not, and exits without finalising MPI,
     which makes mpiexec end the stuck ranks (its "exited improperly" banner follows the line).

   - SgAgreeAllFailed asks the same question earlier, for an operation every rank entered (an
     output's collective HDF5 call): when every rank failed in it, they can all end through the
     normal error path (files closed, the output lock released, MPI finalised) instead of aborting.

   The error handler (init.c) calls SgErrorRecord for every user-class error: it keeps the first
   message and says whether to print it now. A job that must end without unwinding (the safety net's
   exit, an abort) first runs the clean-ups layers above registered with SgErrorOnExit (the output
   lock of io/h5/lock.c). */
#include "sgsys.h"
#include <unistd.h>

#define SG_AGREE_MSG 1024

static char     first_msg[SG_AGREE_MSG]; /* the first user-class message raised on this rank */
static PetscBool have_msg, printed, quiet;
static MPI_Comm  agree_comm = MPI_COMM_NULL; /* the safety net's private communicator */

PetscBool SgErrorRecord(const char mess[], PetscBool rank0)
{
  if (!have_msg) {
    (void)PetscStrncpy(first_msg, mess ? mess : "", sizeof first_msg);
    have_msg = PETSC_TRUE;
  }
  if (quiet || !rank0 || printed) return PETSC_FALSE;
  printed = PETSC_TRUE;
  return PETSC_TRUE;
}

#define SG_ON_EXIT_MAX 4
static void (*on_exit_fn[SG_ON_EXIT_MAX])(void);
static int n_on_exit;

void SgErrorOnExit(void (*fn)(void))
{
  for (int i = 0; i < n_on_exit; i++)
    if (on_exit_fn[i] == fn) return;
  if (n_on_exit < SG_ON_EXIT_MAX) on_exit_fn[n_on_exit++] = fn;
}

void SgErrorRunOnExit(void)
{
  while (n_on_exit > 0) on_exit_fn[--n_on_exit]();
}

/* the bounded wait of the safety net: how long a failing rank waits for the others (seconds) */
static double AgreeLimit(void)
{
  const char *wait = getenv("SURGE_ERROR_AGREE_SECONDS");
  return wait ? atof(wait) : 10.0;
}

/* every failing rank enters a non-blocking barrier on the private communicator: true when every rank
   of the job arrived within the limit (they all failed), false when some rank is elsewhere */
static PetscBool AllArrive(void)
{
  MPI_Request req;
  int         done = 0;
  double      t0, limit = AgreeLimit();

  if (MPI_Ibarrier(agree_comm, &req)) return PETSC_FALSE;
  t0 = MPI_Wtime();
  while (!done && MPI_Wtime() - t0 < limit) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) usleep(2000);
  }
  return done ? PETSC_TRUE : PETSC_FALSE;
}

PetscBool SgAgreeAllFailed(void)
{
  PetscMPIInt size = 1;

  if (agree_comm == MPI_COMM_NULL) return PETSC_FALSE;
  MPI_Comm_size(agree_comm, &size);
  return size == 1 ? PETSC_TRUE : AllArrive();
}

PetscErrorCode SgAgreeSetUp(void)
{
  PetscFunctionBegin;
  if (agree_comm == MPI_COMM_NULL) PetscCallMPI(MPI_Comm_dup(PETSC_COMM_WORLD, &agree_comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAgreeBegin(void)
{
  PetscFunctionBegin;
  quiet    = PETSC_TRUE;
  have_msg = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgAgreeEnd(MPI_Comm comm, PetscErrorCode ierr)
{
  PetscMPIInt    rank, size, mine, first;
  PetscErrorCode code = ierr;
  char           msg[SG_AGREE_MSG];

  PetscFunctionBegin;
  quiet = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  mine = ierr ? rank : size;
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  have_msg = PETSC_FALSE; /* the agreed error is raised afresh below */
  if (first == size) PetscFunctionReturn(PETSC_SUCCESS);
  if (rank == first) {
    const char *text = NULL;
    (void)PetscErrorMessage(ierr, NULL, (char **)&text);
    PetscCall(PetscStrncpy(msg, text ? text : "", sizeof msg));
  }
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  SETERRQ(comm, code, "%s", msg);
}

/* Called by main with a user-class error code instead of PetscFinalize. Returns the exit status. */
int SgErrorFinish(void)
{
  PetscMPIInt size = 1, rank = 0, nprinted = 0, mine, first;

  if (agree_comm == MPI_COMM_NULL) goto finalize;
  MPI_Comm_size(agree_comm, &size);
  MPI_Comm_rank(agree_comm, &rank);
  if (size == 1) goto report;
  if (!AllArrive()) { /* another rank is stuck where this one failed: one line, then let mpiexec end it */
    if (!printed && have_msg) SgTermPrintf(stderr, "surge: error: %s\n", first_msg);
    fflush(stderr);
    fflush(stdout);
    (void)SgTermLogEnd(PETSC_TRUE);
    SgErrorRunOnExit(); /* no unwinding follows: the output lock is released here */
    _exit(1);
  }
  /* every rank failed: one of them prints, unless one already has */
  mine = printed;
  MPI_Allreduce(&mine, &nprinted, 1, MPI_INT, MPI_SUM, agree_comm);
  if (nprinted) goto finalize;
  mine = have_msg ? rank : size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, agree_comm);
  if (rank == first) SgTermPrintf(stderr, "surge: error: %s\n", first_msg);
  goto finalize;
report:
  if (!printed && have_msg) SgTermPrintf(stderr, "surge: error: %s\n", first_msg);
finalize:
  SgErrorRunOnExit(); /* a lock an error path returned past before releasing it (an error in SgSimDestroy) */
  fflush(stderr);
  if (agree_comm != MPI_COMM_NULL) MPI_Comm_free(&agree_comm);
  (void)PetscFinalize();
  (void)SgTermLogEnd(PETSC_TRUE); /* BASE.log of a failed run ends with its error line (kept unless it replaced an earlier log) */
  return 1;
}
