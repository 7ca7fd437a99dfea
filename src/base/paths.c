/* Path options and the run's inputs.

   A path option is a string option whose value names a file; SgOptionsPath records what the file is
   to the run (an input it reads, a checkpoint it resumes, an output it writes, an output base name),
   so that -help says so, the file-safety fuzzer can find every output option, and every input is
   known to the write path (io/include/sgwrite.h) before anything is written. The two lists here are
   registries of names, like the option catalogue. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sgsys.h"

const char *const SgPathRoles[] = {"input path", "resumed checkpoint path", "output path", "output base name", "SgPathRole", "SG_PATH_", NULL};

typedef struct {
  char      *name;
  SgPathRole role;
} PathOption;

typedef struct {
  char      *name, *canon; /* as given; canonical (real directory + base name) */
  SgPathRole role;
  dev_t      dev;
  ino_t      ino;
  PetscBool  exists;
} Input;

static struct {
  PetscBool   overwrite;
  PathOption *opt;
  PetscInt    nopt, capopt;
  Input      *in;
  PetscInt    nin, capin;
  long        jobpid; /* world rank 0's process id: the temporaries' suffix (SgWriteTempName) */
} reg;

static PetscErrorCode Grow(void **p, PetscInt *cap, PetscInt n, size_t size)
{
  PetscFunctionBegin;
  if (n < *cap) PetscFunctionReturn(PETSC_SUCCESS);
  *cap = *cap ? 2 * *cap : 32;
  *p   = realloc(*p, (size_t)*cap * size);
  PetscCheck(*p, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory growing a path registry");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddPathOption(const char prefix[], const char opt[], SgPathRole role)
{
  char full[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(full, sizeof full, "%s%s", prefix ? prefix : "", opt[0] == '-' ? opt + 1 : opt));
  for (PetscInt i = 0; i < reg.nopt; i++)
    if (!strcmp(reg.opt[i].name, full)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Grow((void **)&reg.opt, &reg.capopt, reg.nopt, sizeof *reg.opt));
  reg.opt[reg.nopt].name = strdup(full);
  reg.opt[reg.nopt].role = role;
  reg.nopt++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsCatalogGetPathRole(const char name[], PetscBool *ispath, SgPathRole *role)
{
  const char *n = name[0] == '-' ? name + 1 : name;

  PetscFunctionBegin;
  *ispath = PETSC_FALSE;
  for (PetscInt i = 0; i < reg.nopt; i++)
    if (!strcmp(reg.opt[i].name, n)) {
      *ispath = PETSC_TRUE;
      if (role) *role = reg.opt[i].role;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TaggedHelp(const char text[], SgPathRole role, char help[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(help, len, "%s [%s]", text, SgPathRoles[role]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether option `full` (no dash) was given on the command line, which beats the deck. */
static PetscBool OnCommandLine(const char full[])
{
  int    argc = 0;
  char **args = NULL;

  if (PetscGetArgs(&argc, &args)) return PETSC_FALSE;
  for (int i = 1; i < argc; i++)
    if (args[i][0] == '-' && !strcasecmp(args[i] + 1, full)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* A relative input path written in a deck names a file next to the deck (a model, a structure, a
   matrix shipped beside it), so a deck copied into a job directory, or run from anywhere, finds
   them: it is looked up in the deck's directory first and, when not there, in the working directory
   (data an earlier job wrote there, as the recipes in the decks' comments do). Paths given on the
   command line, outputs and absolute paths are taken as they are. Rank 0 looks, every rank agrees. */
static PetscErrorCode ResolveDeckPath(PetscOptionItems *po, const char opt[], char *buf, size_t len)
{
  char        full[256], cand[PATH_MAX], dir[PATH_MAX];
  const char *deck;
  PetscInt    line, col;
  PetscMPIInt rank;
  int         use = 0;

  PetscFunctionBegin;
  if (!buf[0] || buf[0] == '/') PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSNPrintf(full, sizeof full, "%s%s", po->prefix ? po->prefix : "", opt[0] == '-' ? opt + 1 : opt));
  PetscCall(SgDeckKeyLocation(full, &deck, &line, &col));
  if (line < 0 || !deck || !deck[0] || OnCommandLine(full)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(dir, deck, sizeof dir));
  {
    char *slash = strrchr(dir, '/');
    if (!slash) PetscFunctionReturn(PETSC_SUCCESS); /* the deck is in the working directory */
    *slash = 0;
  }
  PetscCall(PetscSNPrintf(cand, sizeof cand, "%s/%s", dir[0] ? dir : "/", buf));
  PetscCallMPI(MPI_Comm_rank(po->comm, &rank));
  if (!rank) use = !access(cand, F_OK) && strlen(cand) < len;
  PetscCallMPI(MPI_Bcast(&use, 1, MPI_INT, 0, po->comm));
  if (use) PetscCall(PetscStrncpy(buf, cand, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same for the entries of a list option (PetscMalloc'ed strings, replaced when resolved). */
static PetscErrorCode ResolveDeckPaths(PetscOptionItems *po, const char opt[], char *vals[], PetscInt n)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    char path[PATH_MAX];
    if (!vals[i] || !vals[i][0]) continue;
    PetscCall(PetscStrncpy(path, vals[i], sizeof path));
    PetscCall(ResolveDeckPath(po, opt, path, sizeof path));
    if (strcmp(path, vals[i])) {
      PetscCall(PetscFree(vals[i]));
      PetscCall(PetscStrallocpy(path, &vals[i]));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsPath_Private(PetscOptionItems *po, const char opt[], const char text[], SgPathRole role, const char cur[], char *buf, size_t len, PetscBool *set)
{
  char      help[600];
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(AddPathOption(po->prefix, opt, role));
  PetscCall(TaggedHelp(text, role, help, sizeof help));
  PetscCall(SgOptionsString_Private(po, opt, help, cur, buf, len, &flg));
  if (set) *set = flg;
  if (flg && (role == SG_PATH_IN || role == SG_PATH_RESUME)) PetscCall(ResolveDeckPath(po, opt, buf, len));
  if ((role == SG_PATH_IN || role == SG_PATH_RESUME) && buf[0]) PetscCall(SgInputRegister(buf, role));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsPathArray_Private(PetscOptionItems *po, const char opt[], const char text[], SgPathRole role, char *vals[], PetscInt *n, PetscBool *set)
{
  char      help[600];
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(AddPathOption(po->prefix, opt, role));
  PetscCall(TaggedHelp(text, role, help, sizeof help));
  PetscCall(SgOptionsStringArray_Private(po, opt, help, vals, n, &flg));
  if (set) *set = flg;
  if (flg && (role == SG_PATH_IN || role == SG_PATH_RESUME)) PetscCall(ResolveDeckPaths(po, opt, vals, *n));
  if (flg && (role == SG_PATH_IN || role == SG_PATH_RESUME))
    for (PetscInt i = 0; i < *n; i++)
      if (vals[i] && vals[i][0]) PetscCall(SgInputRegister(vals[i], role));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The real directory of path joined with its base name: two spellings of one file (./a.h5, a.h5,
   dir/../a.h5) become one string even when the file does not exist yet. Empty if the directory
   does not resolve. */
void SgPathCanonical(const char path[], char out[], size_t len)
{
  char copy1[PATH_MAX], copy2[PATH_MAX], real[PATH_MAX];

  out[0] = 0;
  snprintf(copy1, sizeof copy1, "%s", path);
  snprintf(copy2, sizeof copy2, "%s", path);
  if (!realpath(dirname(copy1), real)) return;
  snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", basename(copy2));
}

PetscErrorCode SgInputRegister(const char path[], SgPathRole role)
{
  char        canon[2 * PATH_MAX];
  struct stat st;
  PetscBool   found;

  PetscFunctionBegin;
  if (!path || !path[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgInputFind(path, &found, NULL, NULL));
  if (found) PetscFunctionReturn(PETSC_SUCCESS);
  SgPathCanonical(path, canon, sizeof canon);
  PetscCall(Grow((void **)&reg.in, &reg.capin, reg.nin, sizeof *reg.in));
  memset(&reg.in[reg.nin], 0, sizeof reg.in[reg.nin]);
  reg.in[reg.nin].name  = strdup(path);
  reg.in[reg.nin].canon = strdup(canon);
  reg.in[reg.nin].role  = role;
  if (!stat(path, &st)) {
    reg.in[reg.nin].exists = PETSC_TRUE;
    reg.in[reg.nin].dev    = st.st_dev;
    reg.in[reg.nin].ino    = st.st_ino;
  }
  reg.nin++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgInputFind(const char path[], PetscBool *found, SgPathRole *role, const char **name)
{
  char        canon[2 * PATH_MAX];
  struct stat st;
  PetscBool   exists;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (!path || !path[0]) PetscFunctionReturn(PETSC_SUCCESS);
  exists = stat(path, &st) ? PETSC_FALSE : PETSC_TRUE;
  SgPathCanonical(path, canon, sizeof canon);
  for (PetscInt i = 0; i < reg.nin && !*found; i++) {
    const Input *in = &reg.in[i];
    if ((exists && in->exists && in->dev == st.st_dev && in->ino == st.st_ino) || !strcmp(in->name, path) || (canon[0] && !strcmp(in->canon, canon))) {
      *found = PETSC_TRUE;
      if (role) *role = in->role;
      if (name) *name = in->name;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgInputsDestroy(void)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < reg.nin; i++) {
    free(reg.in[i].name);
    free(reg.in[i].canon);
  }
  for (PetscInt i = 0; i < reg.nopt; i++) free(reg.opt[i].name);
  free(reg.in);
  free(reg.opt);
  memset(&reg, 0, sizeof reg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPathsSetFromOptions(MPI_Comm comm)
{
  PetscFunctionBegin;
  PetscOptionsBegin(comm, NULL, "Files", "SgWrite");
  PetscCall(SgOptionsBool("-overwrite", "Replace an existing file that is not surge's output of the same kind (the run's inputs are never replaced)", reg.overwrite, &reg.overwrite, NULL));
  PetscOptionsEnd();
  reg.jobpid = (long)getpid(); /* every rank names a temporary alike (collective writers open it together) */
  PetscCallMPI(MPI_Bcast(&reg.jobpid, 1, MPI_LONG, 0, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

long SgPathsJobPid(void)
{
  return reg.jobpid ? reg.jobpid : (long)getpid();
}

PetscErrorCode SgPathsGetOverwrite(PetscBool *overwrite)
{
  PetscFunctionBegin;
  *overwrite = reg.overwrite;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HoldHandler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  SgErrorHold *h = (SgErrorHold *)ctx;
  (void)comm;
  (void)line;
  (void)fun;
  (void)file;
  if (p == PETSC_ERROR_INITIAL && !h->code) {
    (void)snprintf(h->msg, sizeof h->msg, "%s", mess ? mess : "");
    h->msg[strcspn(h->msg, "\n")] = 0;
    h->code = n;
  }
  return n;
}

PetscErrorCode SgErrorHoldPush(SgErrorHold *h)
{
  PetscFunctionBegin;
  h->msg[0] = 0;
  h->code   = 0;
  PetscCall(PetscPushErrorHandler(HoldHandler, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgErrorHoldPop(void)
{
  PetscFunctionBegin;
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgErrorAgree(MPI_Comm comm, PetscErrorCode ierr, const SgErrorHold *h, const char what[])
{
  struct {
    int bad, rank;
  } mine, first;
  char        msg[1024] = "";
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  mine.bad  = ierr ? 1 : 0;
  mine.rank = rank;
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MAXLOC, comm));
  if (!first.bad) PetscFunctionReturn(PETSC_SUCCESS);
  if (rank == first.rank) (void)snprintf(msg, sizeof msg, "%s", h->msg);
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first.rank, comm));
  SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s: %s", what, msg);
}
