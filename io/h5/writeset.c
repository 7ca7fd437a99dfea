/* A set of files replaced together or not at all (sgwrite.h, SgWriteSetCommitErrno): a run's BASE.h5,
   BASE.xmf and BASE.chk.h5 describe one state, so a reader (or a restart) must never find the new
   output beside the old checkpoint. rename(2) replaces one file atomically, not several; the set is
   made atomic by keeping the earlier set until the whole new one is in place:

     1. every new member is flushed to disk (fsync) -- a full disk shows here, before anything moves;
     2. each member's current file gets a second name, PATH.prev.tmp (a hard link: no data copied), or,
        when the member does not exist yet, an empty PATH.none.tmp says so;
     3. the new members are renamed over their paths (a member with no new file is removed: a sidecar
        the new set lacks);
     4. the .prev/.none names go.

   A failure in 1-3 removes the new temporaries and puts every member back from its .prev/.none
   (SgWriteSetRecover), so the directory holds the earlier set exactly as it was. A process killed
   between 2 and 4 leaves the .prev/.none names: the next run on the output calls SgWriteSetRecover,
   which brings back the earlier set (whole) before anything else.

   Members beyond the run's three (files written beside the set, io/h5/members.c: an MD trajectory
   ...) are named by the run's options, which a later run may not repeat: before step 2 the commit
   writes every member's name to a journal, PATH0.set.tmp (path[0]'s), and removes it after step 4,
   so SgWriteSetRecover(3, run's paths) also puts back every member a killed commit had reached, and
   removes the PATH.old.tmp a member kept for its catch-up (a second name of an earlier commit) and
   the killed job's PATH.tmp.PID of every member. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sgwrite.h"

#define SG_SET_NAME (PETSC_MAX_PATH_LEN + 16)

static void PrevName(const char path[], char prev[], char none[])
{
  (void)snprintf(prev, SG_SET_NAME, "%s.prev.tmp", path);
  (void)snprintf(none, SG_SET_NAME, "%s.none.tmp", path);
}

/* Put one member back as it was before a set commit began (a no-op when no commit left its names). */
static int RecoverOne(const char path[])
{
  char        prev[SG_SET_NAME], none[SG_SET_NAME];
  struct stat st;
  int         err = 0;

  PrevName(path, prev, none);
  if (!lstat(prev, &st)) {
    /* rename of two links of one file does nothing: the .prev name is then removed by hand */
    if (rename(prev, path)) err = errno;
    else if (!lstat(prev, &st)) (void)unlink(prev);
  } else if (!lstat(none, &st)) { /* the member did not exist: the new one goes */
    if (unlink(path) && errno != ENOENT) err = errno;
    if (!err) (void)unlink(none);
  }
  return err;
}

static void JournalName(const char path0[], char j[]) { (void)snprintf(j, SG_SET_NAME, "%s.set.tmp", path0); }

#define SG_JOURNAL_MAX ((SG_WRITE_MAX_MEMBERS + 4) * SG_SET_NAME)

/* Before step 2: every member's name, NUL-terminated, on disk. */
static int WriteJournal(int n, const char *const path[])
{
  char j[SG_SET_NAME];
  int  fd, err = 0;

  JournalName(path[0], j);
  fd = open(j, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return errno;
  for (int i = 0; i < n && !err; i++) {
    size_t len = strlen(path[i]) + 1;
    if (write(fd, path[i], len) != (ssize_t)len) err = errno ? errno : EIO;
  }
  if (!err && fsync(fd)) err = errno;
  if (close(fd) && !err) err = errno;
  return err;
}

/* The members a killed commit's journal names (they may lie beyond path[0..n)). */
static int RecoverJournal(const char path0[])
{
  char    j[SG_SET_NAME], *buf;
  int     fd, err = 0;
  ssize_t len = 0, r;

  JournalName(path0, j);
  fd = open(j, O_RDONLY);
  if (fd < 0) return 0;
  buf = malloc(SG_JOURNAL_MAX + 1);
  if (!buf) {
    (void)close(fd);
    return ENOMEM;
  }
  while (len < SG_JOURNAL_MAX && (r = read(fd, buf + len, (size_t)(SG_JOURNAL_MAX - len))) > 0) len += r;
  (void)close(fd);
  buf[len] = 0;
  for (ssize_t o = 0; o < len; o += (ssize_t)strlen(buf + o) + 1) { /* a name cut short by a kill has no .prev/.none: nothing to do */
    int e = buf[o] ? RecoverOne(buf + o) : 0;
    if (e && !err) err = e;
    if (buf[o]) { /* a member's older file kept for its catch-up (io/h5md/h5md.c): only a second name;
                     and the killed job's temporary of it, which a next run not naming it never removes */
      char kept[SG_SET_NAME];
      (void)snprintf(kept, sizeof kept, "%s.old.tmp", buf + o);
      (void)unlink(kept);
      SgWriteDropStaleTemps(buf + o);
    }
  }
  free(buf);
  if (!err) (void)unlink(j);
  return err;
}

int SgWriteSetRecover(int n, const char *const path[])
{
  int err = n > 0 ? RecoverJournal(path[0]) : 0;

  for (int i = 0; i < n; i++) {
    int e = RecoverOne(path[i]);
    if (e && !err) err = e;
  }
  return err;
}

/* Step 1: the new member on disk. */
static int SyncFile(const char tmp[])
{
  int fd = open(tmp, O_RDONLY), err = 0;

  if (fd < 0) return errno;
  if (fsync(fd)) err = errno;
  if (close(fd) && !err) err = errno;
  return err;
}

/* Step 2: a second name for the member's current file, or a mark that it has none. */
static int KeepOne(const char path[])
{
  char        prev[SG_SET_NAME], none[SG_SET_NAME];
  struct stat st;
  int         fd;

  PrevName(path, prev, none);
  if (!lstat(path, &st)) return link(path, prev) ? errno : 0;
  fd = open(none, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return errno;
  return close(fd) ? errno : 0;
}

static void DropKept(int n, const char *const path[])
{
  char prev[SG_SET_NAME], none[SG_SET_NAME];

  for (int i = 0; i < n; i++) {
    PrevName(path[i], prev, none);
    (void)unlink(prev);
    (void)unlink(none);
  }
}

static void DropJournal(const char path0[])
{
  char j[SG_SET_NAME];

  JournalName(path0, j);
  (void)unlink(j);
}

/* SURGE_TEST_KILL_COMMIT=N: the process ends by SIGKILL right after the N-th member rename of its set
   commits (a test of what a run killed inside a commit leaves, and of the next run's recovery). */
static void KillAfterRename(void)
{
  static int  count;
  const char *v = getenv("SURGE_TEST_KILL_COMMIT");
  if (v && atoi(v) > 0 && ++count == atoi(v)) (void)raise(SIGKILL);
}

int SgWriteSetCommitErrno(int n, const char *const tmp[], const char *const path[])
{
  int err = 0, i;

  err = SgWriteSetRecover(n, path); /* an interrupted commit's names first: the set they keep is whole */
  for (i = 0; i < n && !err; i++)
    if (tmp[i]) err = SyncFile(tmp[i]);
  if (!err) err = WriteJournal(n, path);
  for (i = 0; i < n && !err; i++) err = KeepOne(path[i]);
  for (i = 0; i < n && !err; i++) {
    if (!tmp[i]) {
      if (unlink(path[i]) && errno != ENOENT) err = errno;
    } else if (SgWriteTestENOSPC()) err = ENOSPC;
    else if (rename(tmp[i], path[i])) err = errno;
    else KillAfterRename();
  }
  if (err) {
    for (i = 0; i < n; i++)
      if (tmp[i]) (void)unlink(tmp[i]);
    (void)SgWriteSetRecover(n, path); /* the earlier set, as it was */
    DropKept(n, path);               /* marks of members step 2 did not reach */
    DropJournal(path[0]);
    return err;
  }
  DropKept(n, path);
  DropJournal(path[0]);
  return 0;
}

int SgWriteShownLength(const char path[])
{
  size_t n = strlen(path);
  return (int)(n > 4 && !strcmp(path + n - 4, ".tmp") ? n - 4 : n);
}

PetscBool SgWriteNoReader(const char path[])
{
  int       fd = open(path, O_RDONLY);
  PetscBool free;

  if (fd < 0) return PETSC_FALSE;
  free = flock(fd, LOCK_EX | LOCK_NB) ? PETSC_FALSE : PETSC_TRUE;
  close(fd); /* releases the lock */
  return free;
}
