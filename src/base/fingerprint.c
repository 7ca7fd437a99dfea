/* The fingerprint of a job's effective configuration (the deck after the command line's overrides,
   and the identity of the input files its options name): what decides whether work already done
   (ensemble members, a POD-LSTM search log) may be reused by a rerun. Output names, logging and
   help options are not content. */
#include "sgsys.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SG_FP_PRIME    1099511628211UL
#define SG_FP_HASH_MAX (64L << 20) /* files up to 64 MiB are hashed whole; larger ones by size, mtime, inode */

static unsigned long FnvBytes(unsigned long h, const void *p, size_t n)
{
  const unsigned char *c = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * SG_FP_PRIME;
  return h;
}

/* Options that never change what a job computes. */
static PetscBool NotContent(const char name[], const char *const skip[])
{
  const char *const never[] = {"overwrite", "log_", "options_", "malloc", "memory_", "objects_", "help", "version", NULL};
  for (const char *const *p = never; *p; p++)
    if (!strncmp(name, *p, strlen(*p))) return PETSC_TRUE;
  for (const char *const *p = skip; p && *p; p++)
    if (!strncmp(name, *p, strlen(*p))) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Options whose value is a file the run writes (or a base name for them): its content is not an
   input. The names of the path options marked SG_PATH_OUT / SG_PATH_OUT_BASE. */
static PetscBool OutputOption(const char name[])
{
  const char *const out[] = {"output", "_file", "detail", "save_ckpt", "lcurve", "prefix", NULL};
  size_t            n     = strlen(name);
  for (const char *const *p = out; *p; p++)
    if (n >= strlen(*p) && !strcmp(name + n - strlen(*p), *p)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Whether a token of PetscOptionsGetAll's string is an option's name (-name), not a value (-1.5). */
static PetscBool IsOptionName(const char tok[])
{
  return (PetscBool)(tok[0] == '-' && ((tok[1] >= 'a' && tok[1] <= 'z') || (tok[1] >= 'A' && tok[1] <= 'Z')));
}

/* Fold the identity of the regular file a value names (as given, or next to the deck for a relative
   path, as the deck's paths are found) into h; values that name no file change nothing. The identity
   is the content for files up to SG_FP_HASH_MAX: exact, and it survives what mtimes do not (cp -p and
   rsync -t keep them, a rewrite within one timestamp tick, an inode reused), and a copy of the same
   model in another job directory keeps the work done. A larger file (a dataset of GiBs, which would
   be read whole at every start) is identified by device, inode, size and mtime in ns: surge rewrites
   a file only through a temporary and a rename (sgwrite.h), so a new inode, and an edit by another
   program changes the mtime. */
/* The file a value names, as given or next to the deck for a relative path (as the deck's paths are
   found): its path and stat; PETSC_FALSE if there is none. */
static PetscBool FindFile(const char deck[], const char value[], char path[], size_t len, struct stat *st)
{
  if (!value[0] || strlen(value) >= len) return PETSC_FALSE;
  snprintf(path, len, "%s", value);
  if (stat(path, st) && value[0] != '/') { /* a deck path is looked up next to the deck */
    const char *slash = deck ? strrchr(deck, '/') : NULL;
    if (!slash || (int)(slash - deck) + 1 + strlen(value) >= len) return PETSC_FALSE;
    snprintf(path, len, "%.*s/%s", (int)(slash - deck), deck, value);
    if (stat(path, st)) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

static unsigned long FoldFile(unsigned long h, const char deck[], const char value[])
{
  char        path[PETSC_MAX_PATH_LEN];
  struct stat st;

  if (!FindFile(deck, value, path, sizeof path, &st) || !S_ISREG(st.st_mode)) return h;
  h = FnvBytes(h, "file", 4);
  if (st.st_size <= SG_FP_HASH_MAX) {
    FILE  *fp = fopen(path, "rb");
    char   buf[65536];
    size_t n;
    if (!fp) return FnvBytes(h, "unreadable", 10);
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) h = FnvBytes(h, buf, n);
    fclose(fp);
  } else {
    const long id[5] = {(long)st.st_dev, (long)st.st_ino, (long)st.st_size, (long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec};
    h = FnvBytes(h, id, sizeof id);
  }
  return h;
}

PetscErrorCode SgConfigFingerprint(MPI_Comm comm, const char deck[], const char prefix[], const char *const skip[], char fp[], size_t len)
{
  char         *all, *tok, *save = NULL;
  unsigned long h    = 1469598103934665603UL;
  PetscBool     keep = PETSC_TRUE, output = PETSC_FALSE;
  PetscMPIInt   rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const PetscBool name = IsOptionName(tok);
    if (name) {
      keep   = NotContent(tok + 1, skip) || (prefix && strncmp(tok + 1, prefix, strlen(prefix))) ? PETSC_FALSE : PETSC_TRUE;
      output = OutputOption(tok + 1);
    }
    if (!keep) continue;
    h = FnvBytes(h, tok, strlen(tok));
    h = (h ^ ' ') * SG_FP_PRIME;
    if (!name && !output && !rank) { /* each entry of a comma-separated list */
      char item[PETSC_MAX_PATH_LEN], *isave = NULL;
      PetscCall(PetscStrncpy(item, tok, sizeof item));
      for (char *it = strtok_r(item, ",", &isave); it; it = strtok_r(NULL, ",", &isave)) h = FoldFile(h, deck, it);
    }
  }
  PetscCall(PetscFree(all));
  PetscCallMPI(MPI_Bcast(&h, 1, MPI_UNSIGNED_LONG, 0, comm));
  PetscCall(PetscSNPrintf(fp, len, "%016lx", h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether s is a number or a comma-separated list of numbers */
static PetscBool NumberList(const char s[])
{
  const char *q = s;
  if (!s[0]) return PETSC_FALSE;
  for (;;) {
    char *end;
    (void)strtod(q, &end);
    if (end == q) return PETSC_FALSE;
    if (!*end) return PETSC_TRUE;
    if (*end != ',') return PETSC_FALSE;
    q = end + 1;
  }
}

PetscErrorCode SgConfigRecord(const char prefix[], const char *const skip[], char rec[], size_t len)
{
  char  *all, *tok, *save = NULL;
  char   name[256] = "";
  size_t used;

  PetscFunctionBegin;
  used = (size_t)snprintf(rec, len, "solver=%.*s", (int)(strlen(prefix) - 1), prefix);
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const PetscBool isname = IsOptionName(tok);
    if (isname) {
      name[0] = 0;
      if (!strncmp(tok + 1, prefix, strlen(prefix)) && !NotContent(tok + 1, skip)) snprintf(name, sizeof name, "%s", tok + 1 + strlen(prefix));
      continue;
    }
    if (!name[0] || !NumberList(tok)) continue;
    if (used < len) used += (size_t)snprintf(rec + used, len - used, ";%s=%s", name, tok);
    name[0] = 0;
  }
  PetscCall(PetscFree(all));
  if (used >= len) rec[0] = 0; /* too long to keep whole: nothing rather than a cut list */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One entry of a configuration list: "-name value", the name without its dash for sorting. */
typedef struct {
  const char *name;
  char       *value;
} ConfigEntry;

static int CompareEntry(const void *a, const void *b)
{
  return strcmp(((const ConfigEntry *)a)->name, ((const ConfigEntry *)b)->name);
}

PetscErrorCode SgConfigList(MPI_Comm comm, const char deck[], const char *const skip[], char **list)
{
  char        *all, *tok, *save = NULL, *out = NULL;
  ConfigEntry *e, *cur = NULL;
  size_t       n = 0, cap, len = 1, used = 0;
  int          total = 0;
  PetscMPIInt  rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  cap = strlen(all) / 2 + 1; /* every name takes at least two characters */
  PetscCall(PetscCalloc1(cap, &e));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const PetscBool isname = IsOptionName(tok);
    if (isname) {
      cur = NULL;
      if (NotContent(tok + 1, skip) || OutputOption(tok + 1) || n >= cap) continue;
      e[n].name = tok + 1;
      cur       = &e[n++];
    } else if (cur && !cur->value) cur->value = tok;
    else if (cur) tok[-1] = ' '; /* a value with spaces: the separator strtok_r cut goes back */
  }
  qsort(e, n, sizeof *e, CompareEntry);
  for (size_t i = 0; i < n; i++) len += strlen(e[i].name) + (e[i].value ? 25 * (strlen(e[i].value) + 1) : 0) + 24; /* a number may grow to 25 characters */
  if (!rank) { /* rank 0 reads the files; the list is the same on every rank */
    PetscCall(PetscMalloc1(len, &out));
    for (size_t i = 0; i < n; i++) {
      unsigned long h0 = 1469598103934665603UL, h = h0;
      if (e[i].value) {
        char item[PETSC_MAX_PATH_LEN], *isave = NULL;
        PetscCall(PetscStrncpy(item, e[i].value, sizeof item));
        for (char *it = strtok_r(item, ",", &isave); it; it = strtok_r(NULL, ",", &isave)) h = FoldFile(h, deck, it);
      }
      used += (size_t)snprintf(out + used, len - used, "-%s", e[i].name);
      if (e[i].value && NumberList(e[i].value)) { /* 1.0 and 1 are the same value */
        const char *q = e[i].value;
        for (char *end;; q = end + 1) {
          const double x = strtod(q, &end);
          char         num[32];
          (void)snprintf(num, sizeof num, "%.15g", x); /* the shortest of 15 and 17 digits that gives x back */
          if (strtod(num, NULL) != x) (void)snprintf(num, sizeof num, "%.17g", x);
          used += (size_t)snprintf(out + used, len - used, "%s%s", q == e[i].value ? " " : ",", num);
          if (*end != ',') break;
        }
      } else if (e[i].value) used += (size_t)snprintf(out + used, len - used, " %s", e[i].value);
      if (h != h0) used += (size_t)snprintf(out + used, len - used, " #%016lx", h); /* the files' content */
      used += (size_t)snprintf(out + used, len - used, "\n");
    }
    out[used] = 0;
    total     = (int)used + 1;
  }
  PetscCallMPI(MPI_Bcast(&total, 1, MPI_INT, 0, comm));
  if (rank) PetscCall(PetscMalloc1(total, &out));
  PetscCallMPI(MPI_Bcast(out, total, MPI_CHAR, 0, comm));
  PetscCall(PetscFree(e));
  PetscCall(PetscFree(all));
  *list = out;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The name of the line at p ("-name value #hash\n"): its length up to the first space or newline. */
static size_t NameLength(const char *p)
{
  return strcspn(p, " \n");
}

/* Whether two entries of a value name the same thing: the same text, the same file (device and
   inode: a relative and an absolute path, a symlink, "./" or not), or, where no file exists, the
   same canonical path (SgPathCanonical). Values that are not paths differ in their text and name no file. */
static PetscBool SameItem(const char deck[], const char a[], size_t na, const char b[], size_t nb)
{
  char        x[PETSC_MAX_PATH_LEN], y[PETSC_MAX_PATH_LEN], px[PETSC_MAX_PATH_LEN], py[PETSC_MAX_PATH_LEN];
  struct stat sx, sy;
  PetscBool   fx, fy;

  if (na == nb && !strncmp(a, b, na)) return PETSC_TRUE;
  if (na >= sizeof x || nb >= sizeof y) return PETSC_FALSE;
  snprintf(x, sizeof x, "%.*s", (int)na, a);
  snprintf(y, sizeof y, "%.*s", (int)nb, b);
  fx = FindFile(deck, x, px, sizeof px, &sx);
  fy = FindFile(deck, y, py, sizeof py, &sy);
  if (fx || fy) return (PetscBool)(fx && fy && sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino);
  SgPathCanonical(x, px, sizeof px);
  SgPathCanonical(y, py, sizeof py);
  return (PetscBool)(px[0] && !strcmp(px, py));
}

/* Whether two values (comma-separated lists) are the same entry by entry, paths by identity. */
static PetscBool SameValue(const char deck[], const char a[], size_t na, const char b[], size_t nb)
{
  for (;;) {
    const char *ca = memchr(a, ',', na), *cb = memchr(b, ',', nb);
    size_t      ia = ca ? (size_t)(ca - a) : na, ib = cb ? (size_t)(cb - b) : nb;
    if (!SameItem(deck, a, ia, b, ib)) return PETSC_FALSE;
    if (!ca || !cb) return (PetscBool)(!ca && !cb);
    a += ia + 1;
    na -= ia + 1;
    b += ib + 1;
    nb -= ib + 1;
  }
}

PetscErrorCode SgConfigListDiff(MPI_Comm comm, const char deck[], const char then[], const char now[], char what[], size_t len)
{
  const char *a = then, *b = now;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  what[0] = 0;
  while (!rank && (*a || *b)) { /* rank 0 looks at the files; every rank gets its answer */
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n"), na = NameLength(a), nb = NameLength(b);
    int    c  = !*a ? 1 : !*b ? -1 : strncmp(a, b, PetscMin(na, nb));
    if (!c && na != nb) c = na < nb ? -1 : 1;
    if (c < 0) { /* set then, not now */
      (void)snprintf(what, len, "%.*s was set (%.*s), this run leaves it out", (int)na, a, (int)(la > na ? la - na - 1 : 0), a + na + (la > na));
      break;
    }
    if (c > 0) {
      (void)snprintf(what, len, "%.*s is set now (%.*s), the checkpoint's run left it out", (int)nb, b, (int)(lb > nb ? lb - nb - 1 : 0), b + nb + (lb > nb));
      break;
    }
    if (la != lb || strncmp(a, b, la)) {
      const char *ha = memchr(a, '#', la), *hb = memchr(b, '#', lb);
      size_t      va = ha ? (size_t)(ha - a) - 1 : la, vb = hb ? (size_t)(hb - b) - 1 : lb; /* the values without the files' hash */
      size_t      sa = va > na ? va - na - 1 : 0, sb = vb > nb ? vb - nb - 1 : 0;        /* the values' lengths */
      PetscBool   same = SameValue(deck, a + na + (va > na), sa, b + nb + (vb > nb), sb);
      PetscBool   hash = (PetscBool)(!ha == !hb && (!ha || (la - (size_t)(ha - a) == lb - (size_t)(hb - b) && !strncmp(ha, hb, la - (size_t)(ha - a)))));
      if (same && !hash) (void)snprintf(what, len, "%.*s: the file's content has changed since", (int)va, a);
      else if (!same) (void)snprintf(what, len, "%.*s was %.*s, now %.*s", (int)na, a, (int)sa, a + na + (va > na), (int)sb, b + nb + (vb > nb));
      if (what[0]) break;
    }
    a += la + (a[la] == '\n');
    b += lb + (b[lb] == '\n');
  }
  PetscCallMPI(MPI_Bcast(what, (PetscMPIInt)len, MPI_CHAR, 0, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
