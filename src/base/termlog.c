/* The terminal copy: every run also writes what it printed to BASE.log (LAMMPS users expect log.lammps).

   PETSc prints through one function pointer, PetscVFPrintf (PetscPrintf, PetscFPrintf, the ASCII
   viewers of -log_view and -help): SgInitialize replaces it with TermVFPrintf, which writes the text
   to the terminal as PETSc's default does and, on world rank 0, keeps a copy. surge's own direct
   writes to the terminal (the "surge: error:" line of agree.c and init.c, the ensemble's member
   lines) go through SgTermPrintf for the same reason. The copy is held in memory until the driver
   knows the output name and attaches the log file (io: SgRunLogOpen, through the write path: a
   PATH.tmp that is committed by rename when the process ends -- after PetscFinalize, so -log_view's
   table is in it; on a user error too, so the log ends with the error line). No PETSc call here
   after attachment: SgTermLogEnd runs after PetscFinalize.

   A line prefix (SgTermSetPrefix) marks the lines an ensemble member prints with its id, on every
   rank that prints them. BASE.log holds world rank 0's lines: in an ensemble, lines that another
   group's leader prints reach the terminal only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sgsys.h"

#define SG_TERM_PENDING_MAX (4 << 20) /* bytes kept before the log is attached; beyond, the oldest part is dropped */

static PetscBool capture;            /* world rank 0 keeps a copy */
static char     *pending;            /* the copy before the log file is attached */
static size_t    npending, cappending;
static PetscBool dropped;            /* the pending copy outgrew its bound */
static FILE     *sink;               /* the attached log (its temporary) */
static char      sink_tmp[PETSC_MAX_PATH_LEN + 32], sink_path[PETSC_MAX_PATH_LEN];
static int (*sink_commit)(const char[], const char[]);
static PetscBool sink_replaces;     /* BASE.log existed: a failed run leaves it as it was */
static char      log_tmp[PETSC_MAX_PATH_LEN + 32]; /* every rank: the temporary's name (SgTermLogAbandon) */
static char      prefix[64];
static PetscBool line_start = PETSC_TRUE;
static int       registered;

static void Keep(const char *s, size_t n)
{
  if (!capture || !n) return;
  if (sink) {
    (void)fwrite(s, 1, n, sink);
    return;
  }
  if (npending + n > SG_TERM_PENDING_MAX) { /* only a runaway start-up prints this much */
    dropped  = PETSC_TRUE;
    npending = 0;
    if (n > SG_TERM_PENDING_MAX) return;
  }
  if (npending + n > cappending) {
    size_t cap = cappending ? cappending : 16384;
    char  *p;
    while (cap < npending + n) cap *= 2;
    if (!(p = realloc(pending, cap))) return;
    pending    = p;
    cappending = cap;
  }
  memcpy(pending + npending, s, n);
  npending += n;
}

/* text to fd (the terminal) and the copy, each line begun with the prefix when one is set */
static void TermWrite(FILE *fd, const char *text)
{
  const char *s = text;
  PetscBool   term = (fd == stdout || fd == stderr || fd == PETSC_STDOUT) ? PETSC_TRUE : PETSC_FALSE;

  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t      n  = nl ? (size_t)(nl - s) + 1 : strlen(s);
    if (line_start && prefix[0]) {
      (void)fputs(prefix, fd);
      if (term) Keep(prefix, strlen(prefix));
    }
    (void)fwrite(s, 1, n, fd);
    if (term) Keep(s, n);
    line_start = nl ? PETSC_TRUE : PETSC_FALSE;
    s += n;
  }
  (void)fflush(fd);
  if (sink && term) (void)fflush(sink); /* the log follows the terminal: tail -f BASE.log.tmp */
}

static void TermVWrite(FILE *fd, const char fmt[], va_list ap)
{
  char    buf[8192], *text = buf;
  va_list aq;
  int     n;

  va_copy(aq, ap);
  n = vsnprintf(buf, sizeof buf, fmt, aq);
  va_end(aq);
  if (n < 0) return;
  if ((size_t)n >= sizeof buf) {
    if (!(text = malloc((size_t)n + 1))) return;
    (void)vsnprintf(text, (size_t)n + 1, fmt, ap);
  }
  TermWrite(fd, text);
  if (text != buf) free(text);
}

/* PETSc's printing: files other than the terminal (an ASCII viewer on a file) are written unchanged */
static PetscErrorCode TermVFPrintf(FILE *fd, const char fmt[], va_list ap)
{
  if (fd != stdout && fd != stderr && fd != PETSC_STDOUT) {
    (void)vfprintf(fd, fmt, ap);
    return fflush(fd) ? PETSC_ERR_FILE_WRITE : PETSC_SUCCESS;
  }
  TermVWrite(fd, fmt, ap);
  return PETSC_SUCCESS;
}

void SgTermPrintf(FILE *fd, const char fmt[], ...)
{
  va_list ap;

  va_start(ap, fmt);
  TermVWrite(fd, fmt, ap);
  va_end(ap);
}

PetscErrorCode SgTermSetUp(void)
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  capture       = rank ? PETSC_FALSE : PETSC_TRUE;
  PetscVFPrintf = TermVFPrintf;
  if (!registered++) (void)atexit(SgTermLogCrash); /* an exit() that skipped SgTermLogEnd */
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgTermSetPrefix(const char p[])
{
  (void)snprintf(prefix, sizeof prefix, "%s", p ? p : "");
}

PetscErrorCode SgTermLogAttach(FILE *fp, const char tmp[], const char path[], int (*commit)(const char[], const char[]))
{
  PetscFunctionBegin;
  PetscCheck(!sink, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "a run log is already attached (%s)", sink_path);
  sink = fp;
  PetscCall(PetscStrncpy(sink_tmp, tmp, sizeof sink_tmp));
  PetscCall(PetscStrncpy(sink_path, path, sizeof sink_path));
  sink_commit = commit;
  sink_replaces = access(path, F_OK) ? PETSC_FALSE : PETSC_TRUE;
  if (dropped) (void)fputs("# (the start of the terminal output was longer than the log keeps and is left out)\n", sink);
  if (npending) (void)fwrite(pending, 1, npending, sink);
  (void)fflush(sink);
  free(pending);
  pending    = NULL;
  npending   = 0;
  cappending = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgTermLogNoteTemp(const char tmp[])
{
  (void)snprintf(log_tmp, sizeof log_tmp, "%s", tmp ? tmp : "");
}

void SgTermLogAbandon(void)
{
  if (sink) {
    (void)fclose(sink);
    sink = NULL;
  }
  if (log_tmp[0]) (void)unlink(log_tmp);
  capture = PETSC_FALSE;
}

/* A process that ends in an abort (a bug: PETSc's traceback then MPI_Abort) never reaches
   SgTermLogEnd: its BASE.log.tmp would stay behind. The rank that holds the log closes it as a failed
   run's (kept, with the traceback, unless it replaced an earlier log); any other rank removes the
   temporary, since the abort is about to end rank 0 as well. Called by main before its abort and at
   exit. */
void SgTermLogCrash(void)
{
  if (sink) (void)SgTermLogEnd(PETSC_TRUE);
  else if (log_tmp[0]) (void)unlink(log_tmp);
  log_tmp[0] = 0;
}

/* The same from a signal handler (a crash: SIGSEGV, SIGBUS, ...), which may have interrupted malloc or
   stdio: only async-signal-safe calls (write, rename, unlink), no fclose. The log is flushed after
   every terminal write (TermWrite), so its file holds everything up to the crash; `line` is written
   to the terminal and to the log, then the temporary is renamed into place (plain rename: the
   write path's commit is not safe here) or removed. */
void SgTermLogCrashSignal(const char line[])
{
  size_t n = strlen(line);

  (void)!write(STDERR_FILENO, line, n);
  if (sink) {
    int fd = fileno(sink);
    (void)!write(fd, line, n);
    if (sink_replaces) (void)unlink(sink_tmp);
    else (void)rename(sink_tmp, sink_path);
    sink = NULL; /* not closed: the process ends in the abort */
  } else if (log_tmp[0]) (void)unlink(log_tmp);
  log_tmp[0] = 0;
  capture    = PETSC_FALSE;
}

int SgTermLogEnd(PetscBool failed)
{
  int bad, err;

  free(pending);
  pending  = NULL;
  npending = 0;
  capture  = PETSC_FALSE;
  log_tmp[0] = 0; /* ended here: nothing left for SgTermLogCrash */
  if (!sink) return 0;
  bad  = fflush(sink) != 0 || ferror(sink);
  bad  = fclose(sink) != 0 || bad;
  sink = NULL;
  if (failed && sink_replaces) { /* like the run's other files: a failure leaves the earlier log whole */
    (void)remove(sink_tmp);
    return 0;
  }
  if (bad) {
    (void)remove(sink_tmp);
    fprintf(stderr, "surge: error: cannot write the run log %s (disk full?); the run's other files are written\n", sink_path);
    return 1;
  }
  err = sink_commit(sink_tmp, sink_path);
  if (err) fprintf(stderr, "surge: error: cannot write the run log %s: %s; the run's other files are written\n", sink_path, strerror(err));
  return err ? 1 : 0;
}
