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

   The error handler (init.c) calls SgErrorRecord for every user-class error: it keeps the first
   message and says whether to print it now. */
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
  PetscMPIInt size = 1, rank = 0, done = 0, nprinted = 0, mine, first;
  MPI_Request req;
  double      t0;
  const char *wait = getenv("SURGE_ERROR_AGREE_SECONDS");
  double      limit = wait ? atof(wait) : 10.0;

  if (agree_comm == MPI_COMM_NULL) goto finalize;
  MPI_Comm_size(agree_comm, &size);
  MPI_Comm_rank(agree_comm, &rank);
  if (size == 1) goto report;
  if (MPI_Ibarrier(agree_comm, &req)) goto finalize;
  t0 = MPI_Wtime();
  while (!done && MPI_Wtime() - t0 < limit) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) usleep(2000);
  }
  if (!done) { /* another rank is stuck where this one failed: one line, then let mpiexec end it */
    if (!printed && have_msg) SgTermPrintf(stderr, "surge: error: %s\n", first_msg);
    fflush(stderr);
    fflush(stdout);
    (void)SgTermLogEnd(PETSC_TRUE);
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
  fflush(stderr);
  if (agree_comm != MPI_COMM_NULL) MPI_Comm_free(&agree_comm);
  (void)PetscFinalize();
  (void)SgTermLogEnd(PETSC_TRUE); /* BASE.log of a failed run ends with its error line (kept unless it replaced an earlier log) */
  return 1;
}
