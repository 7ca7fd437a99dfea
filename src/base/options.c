/* Checked option getters and the option catalogue.

   PETSc's getters accept a value silently when it parses, and say little when it does not. A deck
   user needs more: the option's full name in every error, the allowed range, and for a key nobody
   reads, the nearest key that is read. So every surge getter records the full option name in a
   catalogue (a registry of known option names, the one piece of global state besides the type
   registries), parses the raw string itself, and range-checks the value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "sgsys.h"

typedef struct {
  char   **names;
  PetscInt n, cap;
} SgCatalog;
static SgCatalog catalog;

PetscErrorCode SgOptionsCatalogAdd(const char prefix[], const char name[])
{
  char full[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(full, sizeof full, "%s%s", prefix ? prefix : "", name[0] == '-' ? name + 1 : name));
  for (PetscInt i = 0; i < catalog.n; i++)
    if (!strcmp(catalog.names[i], full)) PetscFunctionReturn(PETSC_SUCCESS);
  if (catalog.n == catalog.cap) {
    catalog.cap   = catalog.cap ? 2 * catalog.cap : 128;
    catalog.names = (char **)realloc(catalog.names, (size_t)catalog.cap * sizeof(char *));
    PetscCheck(catalog.names, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory growing the option catalogue");
  }
  catalog.names[catalog.n++] = strdup(full);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsCatalogDestroy(void)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < catalog.n; i++) free(catalog.names[i]);
  free(catalog.names);
  memset(&catalog, 0, sizeof catalog);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Options PETSc itself consumes late (at PetscFinalize) or that only steer the run's bookkeeping:
   they are valid although no surge getter has read them yet when the check runs. */
static const char *const late_options[] = {"log_view", "log_view_memory", "log_trace", "log_all", "options_left", "options_view", "malloc_dump", "malloc_view", "memory_view", "objects_dump", "help", "version", NULL};

static PetscBool IsLateOption(const char name[])
{
  for (const char *const *p = late_options; *p; p++)
    if (!strcmp(name, *p)) return PETSC_TRUE;
  return PETSC_FALSE;
}

static PetscBool unknown_raised; /* set when SgOptionsCheckUnused* raises its error */

/* The nearest catalogued option to name, if near enough to be a plausible misspelling. */
static const char *Suggest(const char name[])
{
  const char *best  = NULL;
  PetscInt    bestd = PETSC_MAX_INT;

  for (PetscInt j = 0; j < catalog.n; j++) {
    PetscInt d = SgEditDistance(name, catalog.names[j]);
    if (d < bestd) {
      bestd = d;
      best = catalog.names[j];
    }
  }
  return best && bestd <= PetscMax(2, (PetscInt)strlen(name) / 3) ? best : NULL;
}

/* One line for one unknown option: where it was set and what was probably meant. */
static PetscErrorCode Describe(const char deck[], const char name[], char out[], size_t len)
{
  PetscInt    line, col;
  const char *best = Suggest(name), *file;
  char        hint[300];

  PetscFunctionBegin;
  PetscCall(SgDeckKeyLocation(name, &file, &line, &col));
  if (!deck && file[0]) deck = file;
  if (best) PetscCall(PetscSNPrintf(hint, sizeof hint, "did you mean -%s?", best));
  else PetscCall(PetscSNPrintf(hint, sizeof hint, "no option has a similar name (surge run DECK -help lists them)"));
  if (line > 0 && deck) PetscCall(PetscSNPrintf(out, len, "%s:%" PetscInt_FMT ":%" PetscInt_FMT ": unknown key -%s; %s", deck, line, col, name, hint));
  else PetscCall(PetscSNPrintf(out, len, "unknown option -%s (command line); %s", name, hint));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsCheckUnusedPrefix(MPI_Comm comm, const char deck[], const char prefix[])
{
  PetscInt N, nbad = 0, first = -1, firstline = PETSC_MAX_INT;
  char   **names, **values;
  char     msg[2048], one[600], more[1024] = "";
  size_t   plen = prefix ? strlen(prefix) : 0;

  PetscFunctionBegin;
  PetscCall(PetscOptionsLeftGet(NULL, &N, &names, &values));
  /* report the one set earliest in the deck (command-line ones after the deck's); name the rest */
  for (PetscInt i = 0; i < N; i++) {
    PetscInt line, col;
    if (IsLateOption(names[i]) || (prefix && strncasecmp(names[i], prefix, plen))) continue;
    PetscCall(SgDeckKeyLocation(names[i], NULL, &line, &col));
    if (line < 0) line = PETSC_MAX_INT - 1;
    if (line < firstline) {
      firstline = line;
      first = i;
    }
    nbad++;
  }
  if (nbad) {
    PetscCall(Describe(deck, names[first], msg, sizeof msg));
    for (PetscInt i = 0, listed = 0; i < N; i++) {
      if (i == first || IsLateOption(names[i]) || (prefix && strncasecmp(names[i], prefix, plen))) continue;
      if (listed++ < 8) {
        const char *best = Suggest(names[i]);
        PetscCall(PetscSNPrintf(one, sizeof one, "%s -%s%s%s%s", listed > 1 ? "," : "", names[i], best ? " (-" : "", best ? best : "", best ? "?)" : ""));
        PetscCall(PetscStrlcat(more, one, sizeof more));
      } else if (listed == 9) PetscCall(PetscStrlcat(more, ", ...", sizeof more));
    }
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &N, &names, &values));
  if (!nbad) PetscFunctionReturn(PETSC_SUCCESS);
  unknown_raised = PETSC_TRUE; /* this error is the full report: SgOptionsNearMiss must not replace it */
  if (nbad > 1) SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s; also unknown:%s (nothing was run or written)", msg, more);
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s (nothing was run or written)", msg);
}

PetscErrorCode SgOptionsNearMiss(char msg[], size_t len, PetscBool *found)
{
  PetscInt N, pick = -1, pickline = PETSC_MAX_INT;
  char   **names, **values;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (unknown_raised) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsLeftGet(NULL, &N, &names, &values));
  for (PetscInt i = 0; i < N; i++) {
    /* only a typo (at most two edits) of an option that was read: "vlasov_basis" not read yet is no
       misspelling of "vlasov_ranks" (4 edits), "heat_kapa" is one of "heat_kappa" */
    const char *best = IsLateOption(names[i]) ? NULL : Suggest(names[i]);
    char        opt[300];
    if (best && SgEditDistance(names[i], best) > 2) best = NULL;
    PetscBool   set;
    PetscInt    line, col;
    if (!best) continue;
    /* the near option was read and is not set: what the user meant went missing */
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s", best));
    PetscCall(PetscOptionsHasName(NULL, NULL, opt, &set));
    if (set) continue;
    PetscCall(SgDeckKeyLocation(names[i], NULL, &line, &col));
    if (line < 0) line = PETSC_MAX_INT - 1;
    if (line < pickline) {
      pickline = line;
      pick = i;
    }
  }
  if (pick >= 0) {
    PetscCall(Describe(NULL, names[pick], msg, len));
    *found = PETSC_TRUE;
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &N, &names, &values));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsCheckUnused(MPI_Comm comm, const char deck[])
{
  PetscFunctionBegin;
  PetscCall(SgOptionsCheckUnusedPrefix(comm, deck, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- getters ----------------------------------------------------------------------------------- */

static PetscErrorCode FullName(PetscOptionItems *po, const char opt[], char full[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(full, len, "-%s%s", po->prefix ? po->prefix : "", opt + (opt[0] == '-')));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RawValue(PetscOptionItems *po, const char opt[], char buf[], size_t len, PetscBool *set)
{
  PetscFunctionBegin;
  buf[0] = 0;
  PetscCall(PetscOptionsGetString(po->options, po->prefix, opt, buf, len, set));
  if (*set && strlen(buf) == len - 1) { /* cut to fit: a shortened number would parse as another */
    char full[256];
    PetscCall(FullName(po, opt, full, sizeof full));
    SETERRQ(po->comm, PETSC_ERR_USER_INPUT, "Option %s: the value is longer than %zu characters: give a shorter value", full, len - 2);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool ParseReal(const char *s, PetscReal *v)
{
  char *end;
  errno = 0;
  if (!s || !*s) return PETSC_FALSE;
  *v = (PetscReal)strtod(s, &end);
  while (*end == ' ') end++;
  return (!*end && errno != ERANGE && !PetscIsInfOrNanReal(*v)) ? PETSC_TRUE : PETSC_FALSE;
}

static PetscBool ParseInt(const char *s, PetscInt *v)
{
  char *end;
  long long x;
  errno = 0;
  if (!s || !*s) return PETSC_FALSE;
  x = strtoll(s, &end, 10);
  while (*end == ' ') end++;
  if (*end || errno == ERANGE || x > PETSC_MAX_INT || x < PETSC_MIN_INT) return PETSC_FALSE;
  *v = (PetscInt)x;
  return PETSC_TRUE;
}

static void RangeText(char buf[], size_t len, PetscReal lo, PetscReal hi)
{
  if (lo <= PETSC_MIN_REAL && hi >= PETSC_MAX_REAL) snprintf(buf, len, "any value");
  else if (lo == PETSC_SMALL && hi >= PETSC_MAX_REAL) snprintf(buf, len, "> 0");
  else if (lo == PETSC_SMALL) snprintf(buf, len, "in (0, %g]", (double)hi);
  else if (lo <= PETSC_MIN_REAL) snprintf(buf, len, "<= %g", (double)hi);
  else if (hi >= PETSC_MAX_REAL) snprintf(buf, len, ">= %g", (double)lo);
  else snprintf(buf, len, "in [%g, %g]", (double)lo, (double)hi);
}

PetscErrorCode SgOptionsReal_Private(PetscOptionItems *po, const char opt[], const char text[], const char units[], PetscReal cur, PetscReal *val, PetscBool *set, PetscReal lo, PetscReal hi)
{
  char      raw[256], full[256], help[512], range[64];
  PetscBool flg;
  PetscReal v;

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(FullName(po, opt, full, sizeof full));
  RangeText(range, sizeof range, lo, hi);
  PetscCall(RawValue(po, opt, raw, sizeof raw, &flg));
  if (flg) {
    PetscCheck(ParseReal(raw, &v), po->comm, PETSC_ERR_USER_INPUT, "Option %s: '%s' is not a real number (expected %s%s%s)", full, raw, range, units ? " " : "", units ? units : "");
    PetscCheck(v >= lo && v <= hi, po->comm, PETSC_ERR_USER_INPUT, "Option %s = %g is out of range: it must be %s%s%s", full, (double)v, range, units ? " " : "", units ? units : "");
  }
  PetscCall(PetscSNPrintf(help, sizeof help, "%s [%s; %s]", text, units && units[0] ? units : "dimensionless", range));
  PetscCall(PetscOptionsReal_Private(po, opt, help, NULL, cur, val, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsInt_Private(PetscOptionItems *po, const char opt[], const char text[], PetscInt cur, PetscInt *val, PetscBool *set, PetscInt lo, PetscInt hi)
{
  char      raw[256], full[256], help[512], range[64];
  PetscBool flg;
  PetscInt  v;

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(FullName(po, opt, full, sizeof full));
  if (lo <= PETSC_MIN_INT && hi >= PETSC_MAX_INT) PetscCall(PetscSNPrintf(range, sizeof range, "any integer"));
  else if (hi >= PETSC_MAX_INT) PetscCall(PetscSNPrintf(range, sizeof range, "an integer >= %" PetscInt_FMT, lo));
  else PetscCall(PetscSNPrintf(range, sizeof range, "an integer in [%" PetscInt_FMT ", %" PetscInt_FMT "]", lo, hi));
  PetscCall(RawValue(po, opt, raw, sizeof raw, &flg));
  if (flg) {
    PetscCheck(ParseInt(raw, &v), po->comm, PETSC_ERR_USER_INPUT, "Option %s: '%s' is not an integer (expected %s)", full, raw, range);
    PetscCheck(v >= lo && v <= hi, po->comm, PETSC_ERR_USER_INPUT, "Option %s = %" PetscInt_FMT " is out of range: it must be %s", full, v, range);
  }
  PetscCall(PetscSNPrintf(help, sizeof help, "%s [%s]", text, range));
  PetscCall(PetscOptionsInt_Private(po, opt, help, NULL, cur, val, set, PETSC_MIN_INT, PETSC_MAX_INT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsBool_Private(PetscOptionItems *po, const char opt[], const char text[], PetscBool cur, PetscBool *val, PetscBool *set)
{
  char      raw[256], full[256];
  PetscBool flg, isbool;

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(FullName(po, opt, full, sizeof full));
  PetscCall(RawValue(po, opt, raw, sizeof raw, &flg));
  if (flg && raw[0]) {
    const char *ok[] = {"true", "false", "yes", "no", "on", "off", "1", "0", NULL};
    isbool = PETSC_FALSE;
    for (const char **p = ok; *p; p++) {
      PetscBool eq;
      PetscCall(PetscStrcasecmp(raw, *p, &eq));
      if (eq) isbool = PETSC_TRUE;
    }
    PetscCheck(isbool, po->comm, PETSC_ERR_USER_INPUT, "Option %s: '%s' is not a boolean (use true or false)", full, raw);
  }
  PetscCall(PetscOptionsBool_Private(po, opt, text, NULL, cur, val, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsString_Private(PetscOptionItems *po, const char opt[], const char text[], const char cur[], char *buf, size_t len, PetscBool *set)
{
  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(PetscOptionsString_Private(po, opt, text, NULL, cur, buf, len, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsEList_Private(PetscOptionItems *po, const char opt[], const char text[], const char *const *list, PetscInt n, const char cur[], PetscInt *idx, PetscBool *set)
{
  char      raw[256], full[256], choices[512] = "";
  PetscBool flg, found = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(FullName(po, opt, full, sizeof full));
  for (PetscInt i = 0; i < n; i++) {
    if (i) PetscCall(PetscStrlcat(choices, ", ", sizeof choices));
    PetscCall(PetscStrlcat(choices, list[i], sizeof choices));
  }
  PetscCall(RawValue(po, opt, raw, sizeof raw, &flg));
  if (flg) {
    for (PetscInt i = 0; i < n; i++) {
      PetscBool eq;
      PetscCall(PetscStrcasecmp(raw, list[i], &eq));
      if (eq) found = PETSC_TRUE;
    }
    PetscCheck(found, po->comm, PETSC_ERR_USER_INPUT, "Option %s: '%s' is not one of: %s", full, raw, choices);
  }
  PetscCall(PetscOptionsEList_Private(po, opt, text, NULL, list, n, cur, idx, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Split a comma-separated raw value; YAML lists arrive this way. */
static PetscErrorCode CheckArray(PetscOptionItems *po, const char opt[], const char *kind, PetscBool isint, PetscReal lo, PetscReal hi, const char units[], PetscInt cap)
{
  char      raw[4096], full[256], range[64], *tok, *save;
  PetscBool flg;
  PetscInt  count = 0;

  PetscFunctionBegin;
  PetscCall(FullName(po, opt, full, sizeof full));
  RangeText(range, sizeof range, lo, hi);
  PetscCall(RawValue(po, opt, raw, sizeof raw, &flg));
  if (!flg) PetscFunctionReturn(PETSC_SUCCESS);
  for (tok = strtok_r(raw, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    PetscReal v;
    PetscInt  iv;
    while (*tok == ' ') tok++;
    if (isint) {
      PetscCheck(ParseInt(tok, &iv), po->comm, PETSC_ERR_USER_INPUT, "Option %s: entry %" PetscInt_FMT " '%s' is not an integer", full, count, tok);
      v = (PetscReal)iv;
    } else PetscCheck(ParseReal(tok, &v), po->comm, PETSC_ERR_USER_INPUT, "Option %s: entry %" PetscInt_FMT " '%s' is not a real number", full, count, tok);
    PetscCheck(v >= lo && v <= hi, po->comm, PETSC_ERR_USER_INPUT, "Option %s: entry %" PetscInt_FMT " = %g is out of range: each %s must be %s%s%s", full, count, (double)v, kind, range, units ? " " : "", units ? units : "");
    count++;
  }
  PetscCheck(count <= cap, po->comm, PETSC_ERR_USER_INPUT, "Option %s has %" PetscInt_FMT " entries; at most %" PetscInt_FMT " are allowed", full, count, cap);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsRealArray_Private(PetscOptionItems *po, const char opt[], const char text[], const char units[], PetscReal *vals, PetscInt *n, PetscBool *set, PetscReal lo, PetscReal hi)
{
  char help[512], range[64];

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(CheckArray(po, opt, "entry", PETSC_FALSE, lo, hi, units, *n));
  RangeText(range, sizeof range, lo, hi);
  PetscCall(PetscSNPrintf(help, sizeof help, "%s [%s; each %s; comma-separated]", text, units && units[0] ? units : "dimensionless", range));
  PetscCall(PetscOptionsRealArray_Private(po, opt, help, NULL, vals, n, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsIntArray_Private(PetscOptionItems *po, const char opt[], const char text[], PetscInt *vals, PetscInt *n, PetscBool *set, PetscInt lo, PetscInt hi)
{
  char help[512];

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(CheckArray(po, opt, "entry", PETSC_TRUE, lo <= PETSC_MIN_INT ? PETSC_MIN_REAL : (PetscReal)lo, hi >= PETSC_MAX_INT ? PETSC_MAX_REAL : (PetscReal)hi, NULL, *n));
  PetscCall(PetscSNPrintf(help, sizeof help, "%s [integers; comma-separated]", text));
  PetscCall(PetscOptionsIntArray_Private(po, opt, help, NULL, vals, n, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOptionsStringArray_Private(PetscOptionItems *po, const char opt[], const char text[], char *vals[], PetscInt *n, PetscBool *set)
{
  char help[512];

  PetscFunctionBegin;
  PetscCall(SgOptionsCatalogAdd(po->prefix, opt));
  PetscCall(PetscSNPrintf(help, sizeof help, "%s [comma-separated]", text));
  PetscCall(PetscOptionsStringArray_Private(po, opt, help, NULL, vals, n, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}
