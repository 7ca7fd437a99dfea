/* One job per output name (sgwrite.h SgWriteLockAcquire): an exclusive flock(2) on BASE.lock.

   flock rather than a pid file: the kernel drops the lock when its process ends, however it ends
   (SIGKILL, a crash, a node's job killed), so a lock file left behind never blocks the next job -- it
   opens the same file, takes the lock and, when it ends, removes the file. The holder writes "pid P
   host H" into the file so a refused job can name it.

   Removing the file on release races with a job that opened it just before: that job would lock an
   inode no longer named BASE.lock while a third job creates and locks a new one. So a job that got
   the lock checks that the file it locked is still the one named BASE.lock (same device and inode)
   and starts again otherwise; the release removes the file before closing (while still holding).

   Holding BASE.lock, the job also removes what Open MPI's MPI-IO left beside BASE.* when a job on
   that output was killed (SgWriteMPIIOLeftover): no other job writes BASE.* now. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sgsys.h"
#include "sgwrite.h"

/* Whether the n bytes read from a held lock file name a holder that may be alive: not empty, and not
   a process of this host that is gone (a name left by a job that died holding the lock; its successor
   has taken the lock and not yet written its own). */
static int NamesLiveHolder(char who[], ssize_t n)
{
  char host[256] = "", mine[256] = "";
  long pid       = 0;

  if (n <= 0) return 0;
  who[n] = 0;
  if (sscanf(who, "process %ld on host %255s", &pid, host) != 2) return 1; /* not ours to judge */
  (void)gethostname(mine, sizeof mine - 1);
  return strcmp(host, mine) || !SgProcessGone(pid);
}

/* The lock on path for this process: the open file descriptor (>= 0), -1 with msg set when another
   process holds it, or -2 when it cannot be created or the file system cannot lock (the job goes on
   unlocked; the write checks report a directory that cannot be written). */
static int TryLock(const char path[], char msg[], size_t len)
{
  for (int attempt = 0; attempt < 16; attempt++) {
    struct stat held, named;
    int         fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);

    if (fd < 0) return -2; /* no such directory, not writable: the output's own check says so in its words */
    if (flock(fd, LOCK_EX | LOCK_NB)) {
      int     e        = errno;
      char    who[256] = "";
      ssize_t n        = e == EWOULDBLOCK ? pread(fd, who, sizeof who - 1, 0) : -1;
      /* the holder writes its name just after it takes the lock: a job refused in between finds the
         file empty, or the name of a job that died holding it, and waits for the new name, up to 1 s
         (seen in a loaded test run: "another process (just starting)" where the holder was a
         training already under way) */
      for (int wait = 0; e == EWOULDBLOCK && !NamesLiveHolder(who, n) && wait < 100; wait++) {
        (void)usleep(10000);
        n = pread(fd, who, sizeof who - 1, 0);
      }
      (void)close(fd);
      if (e != EWOULDBLOCK) return -2; /* ENOLCK, EOPNOTSUPP: a file system without locks */
      who[n > 0 ? n : 0]          = 0;
      who[strcspn(who, "\n")]     = 0;
      (void)snprintf(msg, len, "%s%s holds %s", who[0] ? who : "another process", who[0] ? "" : " (just starting)", path);
      return -1;
    }
    if (!fstat(fd, &held) && !stat(path, &named) && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      char    id[320], host[256] = "?";
      ssize_t n;
      (void)gethostname(host, sizeof host - 1);
      n = snprintf(id, sizeof id, "process %ld on host %s\n", (long)getpid(), host);
      /* written over the old name, then cut to length: a refused job reads the old name or the new
         one, never an empty file (only a name for messages: the lock holds without it) */
      if (pwrite(fd, id, (size_t)n, 0) == n) (void)!ftruncate(fd, n);
      return fd;
    }
    (void)close(fd); /* the holder released and removed it meanwhile: lock the file named path now */
  }
  (void)snprintf(msg, len, "%s keeps being replaced (another job starting and ending on it)", path);
  return -1;
}

int SgWriteMPIIOLeftover(const char tail[], long *pid)
{
  char *end;
  long  job;

  *pid = 0;
  if (!strncmp(tail, ".locktest.", 10)) { /* PATH.locktest.RANK */
    if (!tail[10]) return 0;
    (void)strtol(tail + 10, &end, 10);
    return !*end;
  }
  if (tail[0] != '-') return 0; /* PATH-JOB-PID.lock */
  job = strtol(tail + 1, &end, 10);
  if (end == tail + 1 || job < 0 || *end != '-') return 0;
  tail = end + 1;
  *pid = strtol(tail, &end, 10);
  return end != tail && *pid > 0 && !strcmp(end, ".lock");
}

/* BASE.*-JOB-PID.lock of a process gone from this host, and any BASE.*.locktest.RANK (base's job
   holds BASE.lock: no live job is opening a BASE.* file) */
static void RemoveMPIIOLeftovers(const char base[])
{
  const char    *slash = strrchr(base, '/');
  const char    *name  = slash ? slash + 1 : base;
  size_t         nb    = strlen(name);
  char           dir[PETSC_MAX_PATH_LEN], f[2 * PETSC_MAX_PATH_LEN + 8];
  DIR           *dp;
  struct dirent *ent;

  if (slash) (void)snprintf(dir, sizeof dir, "%.*s", (int)(slash - base), base);
  else (void)snprintf(dir, sizeof dir, ".");
  if (!dir[0]) (void)snprintf(dir, sizeof dir, "/");
  if (!(dp = opendir(dir))) return;
  while ((ent = readdir(dp))) {
    const char *at = ent->d_name + nb, *probe;
    long        pid;
    if (strncmp(ent->d_name, name, nb) || at[0] != '.') continue;
    probe = strstr(at, ".locktest.");
    for (const char *c = probe ? NULL : strchr(at, '-'); c && !probe; c = strchr(c + 1, '-')) /* PATH may hold '-' itself */
      if (SgWriteMPIIOLeftover(c, &pid)) probe = c;
    if (!probe || !SgWriteMPIIOLeftover(probe, &pid)) continue;
    if (pid && !SgProcessGone(pid)) continue; /* its process is alive */
    (void)snprintf(f, sizeof f, "%s/%s", dir, ent->d_name);
    (void)unlink(f);
  }
  closedir(dp);
}

/* The locks this process holds, for a job that ends without unwinding (SgErrorFinish's exit when a
   rank is stuck, a failed output's exit, a crash): SgErrorRunOnExit runs ReleaseHeld, which removes
   BASE.lock as SgWriteLockRelease would (the kernel drops the flock anyway; this leaves no file). */
#define SG_LOCKS_HELD 8
static struct {
  char path[PETSC_MAX_PATH_LEN + 8];
  int  fd;
} held[SG_LOCKS_HELD];

static void ReleaseHeld(void)
{
  for (int i = 0; i < SG_LOCKS_HELD; i++) {
    if (held[i].fd < 0 || !held[i].path[0]) continue;
    (void)unlink(held[i].path);
    (void)close(held[i].fd);
    held[i].fd      = -1;
    held[i].path[0] = 0;
  }
}

static void NoteHeld(const char path[], int fd)
{
  for (int i = 0; i < SG_LOCKS_HELD; i++) {
    if (held[i].path[0]) continue;
    (void)snprintf(held[i].path, sizeof held[i].path, "%s", path);
    held[i].fd = fd;
    SgErrorOnExit(ReleaseHeld);
    return;
  }
}

static void ForgetHeld(int fd)
{
  for (int i = 0; i < SG_LOCKS_HELD; i++)
    if (held[i].path[0] && held[i].fd == fd) held[i].path[0] = 0;
}

PetscErrorCode SgWriteLockAcquire(MPI_Comm comm, const char option[], const char base[], int *fd)
{
  PetscMPIInt rank;
  char        path[PETSC_MAX_PATH_LEN + 8], msg[PETSC_MAX_PATH_LEN + 600] = "";

  PetscFunctionBegin;
  *fd = -1;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    char why[PETSC_MAX_PATH_LEN + 320] = "";
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.lock", base));
    *fd = TryLock(path, why, sizeof why);
    if (*fd >= 0) RemoveMPIIOLeftovers(base);
    if (*fd >= 0) NoteHeld(path, *fd);
    if (*fd == -1) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s '%s' is being written by another surge job (%s): wait for it to end or choose another %s", option, base, why, option));
    if (*fd < 0) *fd = -1;
  }
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgWriteLockRelease(const char base[], int *fd)
{
  char path[PETSC_MAX_PATH_LEN + 8];

  if (*fd < 0) return;
  ForgetHeld(*fd);
  (void)snprintf(path, sizeof path, "%s.lock", base);
  (void)unlink(path); /* while still held: no other job can see it free and then lose it */
  (void)close(*fd);
  *fd = -1;
}
