/* The one write path (sgwrite.h): what a file is, whether it may be replaced, and the
   temporary-flush-rename that replaces it. */
#define _GNU_SOURCE /* copy_file_range, nftw, O_TMPFILE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sgwrite.h"
#include "sgsys.h"
#include "h5util.h"

#define SG_KIND_LEN 64

/* A .dp file is surge's only if surge exported it: its json begins {"software":"surge" (interop.c
   writes that key first). One that DeePMD-kit wrote is someone else's file, replaced only with
   -overwrite. Called with the HDF5 lock held and errors silenced. */
static int DPIsSurge(hid_t f)
{
  static const char want[] = "{\"software\":\"surge\"";
  hid_t             a = H5Aopen(f, "json", H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, m = -1, sp = -1;
  int               yes = 0;

  if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
    char *v = NULL;
    m       = H5Tcopy(H5T_C_S1);
    H5Tset_size(m, H5T_VARIABLE);
    H5Tset_cset(m, H5Tget_cset(t)); /* UTF-8 as h5py and DeePMD-kit write it: no conversion */
    sp = H5Aget_space(a);
    if (m >= 0 && sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, m, &v) >= 0 && v) {
      yes = !strncmp(v, want, sizeof want - 1);
      H5Dvlen_reclaim(m, sp, H5P_DEFAULT, &v);
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (m >= 0) H5Tclose(m);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return yes;
}

/* Recognise an HDF5 file: the surge_file attribute, else the layout of files written before it. */
static void H5Kind(const char path[], char kind[], size_t len)
{
  hid_t f;

  snprintf(kind, len, "foreign");
  SgHDF5Lock();
  H5E_BEGIN_TRY
  {
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
      if (H5Aexists(f, "surge_file") > 0) {
        hid_t a = H5Aopen(f, "surge_file", H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
        char  v[SG_KIND_LEN] = "";
        if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) <= 0 && H5Tget_size(t) < sizeof v) {
          hid_t m = H5Tcopy(H5T_C_S1);
          H5Tset_size(m, H5Tget_size(t));
          H5Tset_strpad(m, H5T_STR_NULLPAD);
          if (H5Aread(a, m, v) >= 0) snprintf(kind, len, "%s", v);
          H5Tclose(m);
        }
        if (t >= 0) H5Tclose(t);
        if (a >= 0) H5Aclose(a);
      } else if (H5Aexists(f, "surge_dataset_version") > 0) snprintf(kind, len, SG_FILE_DATASET);
      else if (H5Aexists(f, "sgnn_checkpoint_version") > 0) snprintf(kind, len, SG_FILE_NN_CHECKPOINT);
      else if (H5Lexists(f, "/layout", H5P_DEFAULT) > 0) snprintf(kind, len, SG_FILE_RUN_CHECKPOINT);
      else if (H5Lexists(f, "/provenance", H5P_DEFAULT) > 0) snprintf(kind, len, SG_FILE_RUN_OUTPUT);
      else if (H5Aexists(f, "json") > 0 && DPIsSurge(f)) snprintf(kind, len, SG_FILE_DP);
      else if (H5Aexists(f, "surge_model") > 0) snprintf(kind, len, SG_FILE_MODEL); /* a model file older than the mark */
      H5Fclose(f);
    } else { /* HDF5's signature but cannot be opened: another process holds it, or it is damaged */
      char msg[512];
      SgH5LastError(msg, sizeof msg);
      snprintf(kind, len, "%s", strstr(msg, "lock") ? "busy" : "damaged");
    }
  }
  H5E_END_TRY
  SgHDF5Unlock();
}

PetscErrorCode SgFileKind(const char path[], char kind[], size_t len)
{
  struct stat st;
  char        head[256];
  FILE       *fp;
  size_t      n;
  const char *tok;

  PetscFunctionBegin;
  kind[0] = 0;
  if (stat(path, &st)) PetscFunctionReturn(PETSC_SUCCESS);
  (void)snprintf(kind, len, "foreign");
  if (!S_ISREG(st.st_mode) || !(fp = fopen(path, "rb"))) PetscFunctionReturn(PETSC_SUCCESS);
  n = fread(head, 1, sizeof head - 1, fp);
  fclose(fp);
  head[n] = 0;
  if (n >= 8 && !memcmp(head, "\x89HDF\r\n\x1a\n", 8)) {
    H5Kind(path, kind, len);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* text: the token in the first line (XDMF: the second, after the XML declaration) */
  if ((tok = strstr(head, "surge-file: "))) {
    const char *end = tok + 12;
    size_t      k   = strcspn(end, "\n"); /* kinds hold spaces: up to the line's end, less a comment's close */
    while (k && (end[k - 1] == ' ' || end[k - 1] == '>' || end[k - 1] == '-')) k--;
    (void)snprintf(kind, len, "%.*s", (int)k, end);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Can a file be created in path's directory (SgWriteDirectoryErrno)? */
static void DirectoryReason(const char path[], char msg[], size_t len)
{
  char        dir[PETSC_MAX_PATH_LEN];
  const char *slash = strrchr(path, '/');
  struct stat st;
  int         err;

  if (slash) (void)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  else (void)snprintf(dir, sizeof dir, ".");
  if (!dir[0]) (void)snprintf(dir, sizeof dir, "/");
  if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
    (void)snprintf(msg, len, "directory '%s' does not exist: create it (mkdir -p %s)", dir, dir);
    return;
  }
  if ((err = SgWriteDirectoryErrno(dir))) (void)snprintf(msg, len, "cannot create files in directory '%s' (%s)", dir, strerror(err));
}

int SgWriteDirectoryErrno(const char dir[])
{
  char probe[PETSC_MAX_PATH_LEN + 64];
  int  fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

  if (fd >= 0) {
    (void)close(fd); /* unnamed: gone with the descriptor */
    return 0;
  }
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return errno; /* EACCES, EROFS, ENOSPC, EDQUOT: the answer */
  (void)snprintf(probe, sizeof probe, "%s/.surge-probe-%ld.tmp", dir, (long)getpid()); /* no O_TMPFILE here */
  fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  (void)close(fd);
  (void)unlink(probe);
  return 0;
}

PetscErrorCode SgWriteCheckMessage(const char option[], const char path[], const char kind[], char msg[], size_t len)
{
  PetscBool   isin, overwrite;
  SgPathRole  role;
  const char *name;
  char        have[SG_KIND_LEN];
  struct stat st;

  PetscFunctionBegin;
  msg[0] = 0;
  if (!path || !path[0]) {
    (void)snprintf(msg, len, "%s is empty: name the file to write", option);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SgPathsGetOverwrite(&overwrite));
  PetscCall(SgInputFind(path, &isin, &role, &name));
  PetscCall(SgFileKind(path, have, sizeof have));
  if (isin && !(role == SG_PATH_RESUME && !strcmp(have, kind))) {
    (void)snprintf(msg, len, "%s '%s' is %s, an input of this run: choose another name for %s", option, path, name, option);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!stat(path, &st)) {
    if (S_ISDIR(st.st_mode)) (void)snprintf(msg, len, "%s '%s' is a directory: choose a file name", option, path);
    else if (!S_ISREG(st.st_mode)) (void)snprintf(msg, len, "%s '%s' exists and is not a regular file: choose another name", option, path);
    else if (!strcmp(have, "busy")) (void)snprintf(msg, len, "%s '%s' is open in another process (another run writing it?): wait for it or choose another name", option, path);
    else if (strcmp(have, kind) && !overwrite) {
      if (!strcmp(have, "damaged")) (void)snprintf(msg, len, "%s '%s' exists and is a damaged HDF5 file, not a complete surge %s: choose another name, remove it, or pass -overwrite to replace it", option, path, kind);
      else if (!strcmp(have, "foreign")) (void)snprintf(msg, len, "%s '%s' exists and is not a file surge wrote: choose another name, remove it, or pass -overwrite to replace it", option, path);
      else (void)snprintf(msg, len, "%s '%s' is a surge %s, not a %s: choose another name, remove it, or pass -overwrite to replace it", option, path, have, kind);
    }
    if (msg[0]) PetscFunctionReturn(PETSC_SUCCESS);
  }
  DirectoryReason(path, msg, len);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteCheck(MPI_Comm comm, const char option[], const char path[], const char kind[])
{
  PetscMPIInt rank;
  char        msg[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  msg[0] = 0;
  if (!rank) PetscCall(SgWriteCheckMessage(option, path, kind, msg, sizeof msg));
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Remove path's temporaries left by processes gone from this host (SgProcessGone): PATH.tmp (earlier
   versions' name), PATH.tmp.PID with no process PID, and what Open MPI's MPI-IO left beside such a
   temporary while job PID had it open (PATH.tmp.PID-JOB-P.lock with P gone too, PATH.tmp.PID.locktest.R;
   SgWriteMPIIOLeftover). Only job PID ever opens PATH.tmp.PID, so once it is gone they are its leftovers,
   whatever path's name -- the run's lock (io/h5/lock.c) covers only names that begin with its output
   base. Our own job's (mine) and a live process's stay: that job is writing path now and renames its
   temporary when done. */
static void RemoveStaleTemps(const char path[], long mine)
{
  const char    *slash = strrchr(path, '/');
  char           dir[PETSC_MAX_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 8], f[2 * PETSC_MAX_PATH_LEN + 8];
  size_t         np;
  DIR           *dp;
  struct dirent *ent;

  if (slash) (void)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  else (void)snprintf(dir, sizeof dir, ".");
  if (!dir[0]) (void)snprintf(dir, sizeof dir, "/");
  (void)snprintf(prefix, sizeof prefix, "%s.tmp", slash ? slash + 1 : path);
  np = strlen(prefix);
  if (!(dp = opendir(dir))) return;
  while ((ent = readdir(dp))) {
    const char *tail = ent->d_name + np;
    char       *end;
    long        pid;
    if (strncmp(ent->d_name, prefix, np)) continue;
    if (*tail) { /* PATH.tmp.PID: digits only, else another file's name that merely begins alike */
      if (tail[0] != '.' || !tail[1]) continue;
      long mpiio = 0;
      errno      = 0;
      pid        = strtol(tail + 1, &end, 10);
      if (end == tail + 1 || errno || pid <= 0 || pid == mine) continue;
      if (*end && !SgWriteMPIIOLeftover(end, &mpiio)) continue;
      if (!SgProcessGone(pid) || (mpiio && mpiio != pid && !SgProcessGone(mpiio))) continue;
    }
    (void)snprintf(f, sizeof f, "%s/%s", dir, ent->d_name);
    (void)unlink(f);
  }
  closedir(dp);
}

void SgWriteDropStaleTemps(const char path[])
{
  RemoveStaleTemps(path, SgPathsJobPid());
}

PetscErrorCode SgWriteTempName(const char path[], char tmp[], size_t len)
{
  long pid = SgPathsJobPid();

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(tmp, len, "%s.tmp.%ld", path, pid));
  RemoveStaleTemps(path, pid);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDiscard(const char tmp[])
{
  PetscFunctionBegin;
  if (tmp && tmp[0]) (void)unlink(tmp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SURGE_TEST_ENOSPC=N: the N-th commit of this process fails as if the disk were full. */
static int InjectedENOSPC(void)
{
  static int  count;
  const char *v = getenv("SURGE_TEST_ENOSPC");
  return v && atoi(v) > 0 && ++count == atoi(v);
}

int SgWriteTestENOSPC(void)
{
  return InjectedENOSPC();
}

/* Faults inside a trajectory's catch-up (io/h5md/h5md_catchup.c), each counting that process's
   catch-ups: SURGE_TEST_CATCHUP_FAIL=N makes the N-th fail halfway (the byte copy follows);
   SURGE_TEST_CATCHUP_ENOSPC=N makes it fail halfway as if the disk were full, and the disk stays
   full: every later copy (SgWriteCopyErrno) fails with ENOSPC too. */
static int diskStaysFull;

int SgWriteTestCatchUpFault(void)
{
  static int  count;
  const char *f = getenv("SURGE_TEST_CATCHUP_FAIL");
  const char *e = getenv("SURGE_TEST_CATCHUP_ENOSPC");

  count++;
  if (f && atoi(f) == count) return EIO;
  if (e && atoi(e) == count) {
    diskStaysFull = 1;
    return ENOSPC;
  }
  return 0;
}

int SgWriteCommitErrno(const char tmp[], const char path[])
{
  int fd, err = 0;

  fd = open(tmp, O_RDONLY);
  if (fd < 0) err = errno;
  else {
    if (fsync(fd)) err = errno;
    if (close(fd) && !err) err = errno;
  }
  if (!err && InjectedENOSPC()) err = ENOSPC;
  if (!err && rename(tmp, path)) err = errno;
  if (err) (void)unlink(tmp);
  return err;
}

int SgWriteCopyErrno(const char src[], const char dst[])
{
  int     in, out, err = 0;
  ssize_t n;

  if (diskStaysFull) return ENOSPC; /* SgWriteTestCatchUpFault */
  in = open(src, O_RDONLY);
  if (in < 0) return errno;
  out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    err = errno;
    close(in);
    return err;
  }
  /* the kernel copies (a reflink where the file system shares extents); plain reads and writes
     where copy_file_range is refused (another file system, an old kernel) */
  while ((n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0)) > 0) continue;
  if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
    char    buf[1 << 16];
    ssize_t r;
    if (lseek(in, 0, SEEK_SET) < 0 || ftruncate(out, 0) || lseek(out, 0, SEEK_SET) < 0) err = errno;
    while (!err && (r = read(in, buf, sizeof buf)) > 0)
      for (ssize_t off = 0; off < r && !err;) {
        ssize_t w = write(out, buf + off, (size_t)(r - off));
        if (w < 0) err = errno;
        else off += w;
      }
    if (!err && r < 0) err = errno;
  } else if (n < 0) err = errno;
  close(in);
  if (close(out) && !err) err = errno;
  if (err) (void)unlink(dst);
  return err;
}

PetscErrorCode SgWriteCommit(const char tmp[], const char path[])
{
  int err;

  PetscFunctionBegin;
  err = SgWriteCommitErrno(tmp, path);
  if (err) {
    /* the file system's refusal is the user's to fix (one line, not a traceback) */
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s: %s%s; the earlier file (if any) is unchanged", path, strerror(err), err == ENOSPC ? " (disk full: free space and run again)" : "");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

struct _n_SgTextFile {
  FILE *fp;
  char  path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 32];
};

PetscErrorCode SgTextFileOpen(const char option[], const char path[], const char kind[], const char comment[], PetscBool append, SgTextFile *tf)
{
  SgTextFile t;
  char       msg[2 * PETSC_MAX_PATH_LEN], have[SG_KIND_LEN];

  PetscFunctionBegin;
  PetscCall(SgWriteCheckMessage(option, path, kind, msg, sizeof msg));
  PetscCheck(!msg[0], PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s", msg);
  PetscCall(SgFileKind(path, have, sizeof have));
  PetscCall(PetscNew(&t));
  PetscCall(PetscStrncpy(t->path, path, sizeof t->path));
  PetscCall(SgWriteTempName(path, t->tmp, sizeof t->tmp));
  t->fp = fopen(t->tmp, "w");
  if (!t->fp) {
    int e = errno;
    PetscCall(PetscFree(t));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot create the temporary of %s (%s)", option, path, strerror(e));
  }
  if (append && !strcmp(have, kind)) { /* continue the earlier file: copy it, first line included */
    FILE  *in = fopen(path, "r");
    char   buf[8192];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof buf, in)) > 0) (void)fwrite(buf, 1, n, t->fp);
    if (in) fclose(in);
  } else fprintf(t->fp, "%s surge-file: %s\n", comment, kind);
  *tf = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTextFileGetFILE(SgTextFile t, FILE **fp)
{
  PetscFunctionBegin;
  *fp = t->fp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTextFileClose(SgTextFile *tf)
{
  SgTextFile t = *tf;
  int        bad;

  PetscFunctionBegin;
  if (!t) PetscFunctionReturn(PETSC_SUCCESS);
  *tf = NULL;
  bad = fflush(t->fp) != 0 || ferror(t->fp);
  bad = (fclose(t->fp) != 0) || bad;
  if (bad) {
    char path[PETSC_MAX_PATH_LEN];
    (void)unlink(t->tmp);
    PetscCall(PetscStrncpy(path, t->path, sizeof path));
    PetscCall(PetscFree(t));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s (disk full?); the earlier file (if any) is unchanged", path);
  }
  {
    PetscErrorCode ierr = SgWriteCommit(t->tmp, t->path);
    PetscCall(PetscFree(t));
    PetscCall(ierr);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTextFileFinish(SgTextFile *tf, char tmp[], char path[], size_t len)
{
  SgTextFile t = *tf;
  int        bad;

  PetscFunctionBegin;
  tmp[0] = path[0] = 0;
  if (!t) PetscFunctionReturn(PETSC_SUCCESS);
  *tf = NULL;
  bad = fflush(t->fp) != 0 || ferror(t->fp);
  bad = (fclose(t->fp) != 0) || bad;
  PetscCall(PetscStrncpy(path, t->path, len));
  if (bad) (void)unlink(t->tmp);
  else PetscCall(PetscStrncpy(tmp, t->tmp, len));
  PetscCall(PetscFree(t));
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s (disk full?); the earlier file (if any) is unchanged", path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTextFileDiscard(SgTextFile *tf)
{
  SgTextFile t = *tf;

  PetscFunctionBegin;
  if (!t) PetscFunctionReturn(PETSC_SUCCESS);
  *tf = NULL;
  (void)fclose(t->fp);
  (void)unlink(t->tmp);
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTextFileDetach(SgTextFile *tf, FILE **fp, char tmp[], size_t tmplen, char path[], size_t pathlen)
{
  SgTextFile t = *tf;

  PetscFunctionBegin;
  PetscCheck(t, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "no text file to detach");
  *tf = NULL;
  *fp = t->fp;
  PetscCall(PetscStrncpy(tmp, t->tmp, tmplen));
  PetscCall(PetscStrncpy(path, t->path, pathlen));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5StagedOpen(MPI_Comm comm, const char option[], const char path[], const char kind[], PetscBool cont, hid_t fapl, hid_t *file, char tmp[], size_t len)
{
  PetscMPIInt rank;
  int         st[2] = {0, 0}; /* errno of the copy, whether the earlier file is continued */

  PetscFunctionBegin;
  *file = -1;
  PetscCall(SgWriteCheck(comm, option, path, kind));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) PetscCall(SgWriteTempName(path, tmp, len));
  PetscCallMPI(MPI_Bcast(tmp, (int)len, MPI_CHAR, 0, comm)); /* rank 0's name on every rank, SgInitialize or not */
  if (!rank) {
    char have[SG_KIND_LEN];
    (void)unlink(tmp); /* this job's own name: one left by an earlier step of it, never another job's */
    PetscCall(SgFileKind(path, have, sizeof have));
    if (cont && !strcmp(have, kind)) {
      st[1] = 1;
      st[0] = SgWriteCopyErrno(path, tmp);
    }
  }
  PetscCallMPI(MPI_Bcast(st, 2, MPI_INT, 0, comm));
  PetscCheck(!st[0], comm, PETSC_ERR_FILE_OPEN, "%s: cannot copy %s to %s to continue it (%s%s): the earlier file is unchanged", option, path, tmp, strerror(st[0]), st[0] == ENOSPC ? ", disk full: free space and run again" : "");
  SgH5Quiet();
  if (st[1]) *file = H5Fopen(tmp, H5F_ACC_RDWR, fapl);
  else *file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (*file < 0) {
    char msg[512];
    SgH5LastError(msg, sizeof msg);
    if (!rank) (void)unlink(tmp);
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s: cannot %s %s (HDF5: %s): the earlier file (if any) is unchanged", option, st[1] ? "reopen" : "create", tmp, msg);
  }
  if (!st[1]) PetscCall(SgH5MarkKind(tmp, *file, kind));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5StagedCommit(MPI_Comm comm, hid_t *file, const char tmp[], const char path[])
{
  PetscMPIInt rank;
  int         err = 0, any = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (*file >= 0 && H5Fclose(*file) < 0) err = EIO; /* HDF5 writes its last metadata at close */
  *file = -1;
  PetscCallMPI(MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, comm));
  if (!rank) {
    if (any) (void)unlink(tmp);
    else any = SgWriteCommitErrno(tmp, path); /* fsync, rename; removes tmp on failure */
  }
  PetscCallMPI(MPI_Bcast(&any, 1, MPI_INT, 0, comm));
  PetscCheck(!any, comm, PETSC_ERR_FILE_OPEN, "cannot write %s (%s%s): the earlier file (if any) is unchanged", path, strerror(any), any == ENOSPC ? ", disk full: free space and run again" : any == EIO ? ", disk full?" : "");
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgH5StagedDiscard(hid_t *file, const char tmp[])
{
  if (*file >= 0) {
    H5E_BEGIN_TRY { (void)H5Fclose(*file); }
    H5E_END_TRY
  }
  *file = -1;
  if (tmp && tmp[0]) (void)unlink(tmp);
}

/* ---- directories surge creates whole (SgWriteDir) ---- */
struct _n_SgWriteDir {
  char dir[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 8];
};

/* The name without trailing slashes ("out/" and "out" are one directory). */
static void StripSlashes(const char in[], char out[], size_t len)
{
  size_t n;
  (void)snprintf(out, len, "%s", in);
  n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = 0;
}

PetscErrorCode SgWriteDirCheckMessage(const char option[], const char dir[], char msg[], size_t len)
{
  char        d[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 8];
  PetscBool   isin;
  SgPathRole  role;
  const char *name;
  struct stat st;

  PetscFunctionBegin;
  msg[0] = 0;
  if (!dir || !dir[0]) {
    (void)snprintf(msg, len, "%s is empty: name the directory to write", option);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  StripSlashes(dir, d, sizeof d);
  PetscCall(SgInputFind(d, &isin, &role, &name));
  if (isin) {
    (void)snprintf(msg, len, "%s '%s' is %s, an input of this run: choose a new directory for %s", option, dir, name, option);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!stat(d, &st)) {
    DIR           *dp;
    struct dirent *ent;
    PetscBool      empty = PETSC_TRUE;
    if (!S_ISDIR(st.st_mode)) {
      (void)snprintf(msg, len, "%s '%s' exists and is not a directory: choose a new directory name", option, dir);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if ((dp = opendir(d))) {
      while (empty && (ent = readdir(dp)))
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..")) empty = PETSC_FALSE;
      closedir(dp);
    }
    if (!empty) { /* never merged into or replaced, -overwrite or not: its files may be anyone's */
      (void)snprintf(msg, len, "%s '%s' exists and is not empty: choose a new or empty directory (surge does not write into or replace a directory that holds files)", option, dir);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  (void)snprintf(tmp, sizeof tmp, "%s.tmp", d);
  if (!lstat(tmp, &st)) {
    (void)snprintf(msg, len, "%s: '%s' exists (left by an interrupted export?): remove it and run again", option, tmp);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  DirectoryReason(d, msg, len);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDirBegin(const char option[], const char dir[], SgWriteDir *wd)
{
  SgWriteDir w;
  char       msg[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(SgWriteDirCheckMessage(option, dir, msg, sizeof msg));
  PetscCheck(!msg[0], PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s", msg);
  PetscCall(PetscNew(&w));
  StripSlashes(dir, w->dir, sizeof w->dir);
  PetscCall(PetscSNPrintf(w->tmp, sizeof w->tmp, "%s.tmp", w->dir));
  if (mkdir(w->tmp, 0777)) { /* exclusive: DIR.tmp is ours from here on */
    int e = errno;
    PetscCall(PetscFree(w));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot create %s.tmp (%s)", option, dir, strerror(e));
  }
  *wd = w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDirMkdir(SgWriteDir w, const char rel[])
{
  char p[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(p, sizeof p, "%s/%s", w->tmp, rel));
  PetscCheck(!mkdir(p, 0777), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create %s (%s)", p, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDirFileOpen(SgWriteDir w, const char rel[], FILE **fp)
{
  char p[2 * PETSC_MAX_PATH_LEN];
  int  fd;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(p, sizeof p, "%s/%s", w->tmp, rel));
  fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644); /* a new file in our own temporary directory */
  PetscCheck(fd >= 0 && (*fp = fdopen(fd, "wb")), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create %s (%s)", p, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDirFileClose(SgWriteDir w, FILE **fp)
{
  int bad;

  PetscFunctionBegin;
  if (!*fp) PetscFunctionReturn(PETSC_SUCCESS);
  bad = fflush(*fp) != 0 || ferror(*fp) || fsync(fileno(*fp)) != 0;
  bad = (fclose(*fp) != 0) || bad;
  *fp = NULL;
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s (disk full?): nothing was written to %s", w->tmp, w->dir);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int RemoveEntry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(p) ? -1 : 0;
}

PetscErrorCode SgWriteDirDiscard(SgWriteDir *wd)
{
  PetscFunctionBegin;
  if (!*wd) PetscFunctionReturn(PETSC_SUCCESS);
  (void)nftw((*wd)->tmp, RemoveEntry, 16, FTW_DEPTH | FTW_PHYS); /* DIR.tmp and what we wrote in it */
  PetscCall(PetscFree(*wd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteDirCommit(SgWriteDir *wd)
{
  SgWriteDir w = *wd;
  int        err;

  PetscFunctionBegin;
  if (!w) PetscFunctionReturn(PETSC_SUCCESS);
  /* rename(2) moves the directory into place, replacing an empty directory of that name; a file or
     a non-empty directory that appeared since the check makes it fail (ENOTDIR, ENOTEMPTY) */
  err = InjectedENOSPC() ? ENOSPC : (rename(w->tmp, w->dir) ? errno : 0);
  if (err) {
    char dir[PETSC_MAX_PATH_LEN];
    PetscCall(PetscStrncpy(dir, w->dir, sizeof dir));
    PetscCall(SgWriteDirDiscard(wd));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s: %s%s; nothing was written there", dir, strerror(err), err == ENOSPC ? " (disk full: free space and run again)" : "");
  }
  PetscCall(PetscFree(*wd));
  PetscFunctionReturn(PETSC_SUCCESS);
}
