/* Claims: which job runs an ensemble member, decided by the file system, so several jobs (a Slurm
   job array, jobs submitted one after another, two mpiexec on one node) sharing one ensemble
   directory never run the same member twice (docs/cluster.md).

   A claim is a file created with O_CREAT|O_EXCL (atomic on a local file system and on NFSv3+, Lustre,
   GPFS): exactly one creator succeeds. It holds "host H pid P job J" (J: SLURM_JOB_ID, with the
   array task, or "-"). While the member runs, a thread of the claiming process touches the claim
   every heartbeat seconds, so its age says whether its owner is alive. A claim is stale, and may
   be taken over, when
     - it was made on this host by a process that no longer runs (SgProcessGone: gone or a zombie), or
     - it was not touched for `stale` seconds (its job was killed, or its node died).
   Taking over is itself atomic: the stale claim is renamed to a name of the taker's own first (one
   rename wins), then the taker creates its claim with O_EXCL as usual. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sgclaim.h"
#include "sgsys.h"

static void Identity(char buf[], size_t len)
{
  char        host[256] = "?";
  const char *job  = getenv("SLURM_JOB_ID");
  const char *ajob = getenv("SLURM_ARRAY_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");

  (void)gethostname(host, sizeof host - 1);
  if (ajob && task) (void)snprintf(buf, len, "host %s pid %ld job %s_%s\n", host, (long)getpid(), ajob, task);
  else (void)snprintf(buf, len, "host %s pid %ld job %s\n", host, (long)getpid(), job ? job : "-");
}

/* the claim's owner, from its content: is it a process of this host that is gone? */
static PetscBool OwnerGone(const char path[])
{
  char  line[512] = "", host[256] = "", me[256] = "";
  long  pid = 0;
  FILE *fp  = fopen(path, "r");

  if (!fp) return PETSC_FALSE;
  if (!fgets(line, sizeof line, fp)) line[0] = 0;
  fclose(fp);
  if (sscanf(line, "host %255s pid %ld", host, &pid) != 2 || pid <= 0) return PETSC_FALSE;
  (void)gethostname(me, sizeof me - 1);
  if (strcmp(host, me)) return PETSC_FALSE;
  return SgProcessGone(pid);
}

static int Create(const char path[])
{
  char id[512];
  int  fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);

  if (fd < 0) return errno;
  Identity(id, sizeof id);
  if (write(fd, id, strlen(id)) != (ssize_t)strlen(id) || fsync(fd)) {
    int e = errno;
    close(fd);
    unlink(path);
    return e ? e : EIO;
  }
  close(fd);
  return 0;
}

PetscErrorCode SgClaimTry(const char path[], PetscReal stale, PetscBool *got, char owner[], size_t len)
{
  int         err;
  struct stat st;

  PetscFunctionBegin;
  *got = PETSC_FALSE;
  if (owner && len) owner[0] = 0;
  err = Create(path);
  if (!err) {
    *got = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(err == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create the claim %s: %s (the ensemble directory must be writable by every job)", path, strerror(err));
  if (!stat(path, &st) && (OwnerGone(path) || difftime(time(NULL), st.st_mtime) > stale)) {
    char away[PETSC_MAX_PATH_LEN + 64];
    (void)snprintf(away, sizeof away, "%s.stale-%ld", path, (long)getpid());
    if (!rename(path, away)) { /* this process won the take-over */
      (void)unlink(away);
      err = Create(path);
      if (!err) {
        *got = PETSC_TRUE;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
    }
  }
  if (owner && len) { /* who holds it, for the progress line */
    FILE *fp = fopen(path, "r");
    if (fp) {
      if (!fgets(owner, (int)len, fp)) owner[0] = 0;
      fclose(fp);
      owner[strcspn(owner, "\n")] = 0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgClaimRelease(const char path[])
{
  (void)unlink(path);
}

struct _n_SgClaimBeat {
  pthread_t       thread;
  pthread_mutex_t lock;
  pthread_cond_t  cond;
  int             stop;
  double          every;
  char            path[PETSC_MAX_PATH_LEN + 64];
};

static void *Beat(void *arg)
{
  SgClaimBeat b = (SgClaimBeat)arg;

  pthread_mutex_lock(&b->lock);
  while (!b->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)b->every;
    (void)pthread_cond_timedwait(&b->cond, &b->lock, &until);
    if (!b->stop) (void)utimensat(AT_FDCWD, b->path, NULL, 0); /* now: the owner is alive */
  }
  pthread_mutex_unlock(&b->lock);
  return NULL;
}

PetscErrorCode SgClaimBeatStart(const char path[], PetscReal every, SgClaimBeat *beat)
{
  SgClaimBeat b;
  sigset_t    all, old;
  int         err;

  PetscFunctionBegin;
  PetscCall(PetscNew(&b));
  PetscCall(PetscStrncpy(b->path, path, sizeof b->path));
  b->every = every < 1 ? 1 : (double)every;
  pthread_mutex_init(&b->lock, NULL);
  pthread_cond_init(&b->cond, NULL);
  sigfillset(&all); /* signals stay with the main thread */
  pthread_sigmask(SIG_BLOCK, &all, &old);
  err = pthread_create(&b->thread, NULL, Beat, b);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    PetscCall(PetscFree(b));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot start the claim heartbeat thread: %s", strerror(err));
  }
  *beat = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgClaimBeatStop(SgClaimBeat *beat)
{
  SgClaimBeat b = *beat;

  PetscFunctionBegin;
  if (!b) PetscFunctionReturn(PETSC_SUCCESS);
  *beat = NULL;
  pthread_mutex_lock(&b->lock);
  b->stop = 1;
  pthread_cond_signal(&b->cond);
  pthread_mutex_unlock(&b->lock);
  pthread_join(b->thread, NULL);
  pthread_mutex_destroy(&b->lock);
  pthread_cond_destroy(&b->cond);
  PetscCall(PetscFree(b));
  PetscFunctionReturn(PETSC_SUCCESS);
}
