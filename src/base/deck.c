/* The deck reader: a YAML deck is parsed and checked here, with libyaml, before the options
   database sees any of it.

   PETSc's own reader (PetscOptionsInsertFileYAML) stops at a syntax error with a traceback that
   names neither the file nor the line, lets a repeated key silently win, merges repeated sections
   and drops whatever follows a NUL byte. Here every mistake is one message "DECK:LINE:COL: what,
   and the fix", raised identically on every rank (rank 0 reads the file, every rank parses the
   same bytes). The accepted language is the subset of YAML a deck needs, mapped onto options the
   way PETSc maps it:

     sim: {t_end: 25}          -> -sim_t_end 25           (a mapping adds "key_" to the prefix)
     vlasov: {cells: [32, 16]} -> -vlasov_cells 32,16     (a list becomes comma-separated values)

   Everything else (a top-level list or value, lists of lists or of mappings, anchors, aliases,
   tags, more than one document, keys that are not option names, deeper nesting than any deck
   needs) is refused with its line and column. The location of every key is kept so that the
   unknown-key check (SgOptionsCheckUnused) can point at the deck line. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>
#include "sgsys.h"

#define SG_DECK_MAX_DEPTH 8         /* sections inside sections; the decks in inputs/ need 3 */
#define SG_DECK_MAX_BYTES (1 << 20) /* a deck is a page of text; a bigger file is not a deck */
#define SG_DECK_MAX_KEYS  2000      /* far above any real deck, and it bounds the options database */
#define SG_DECK_MAX_NAME  200       /* option names stay well inside PETSc's 512 and our 256 buffers */

/* Where each option set by the deck came from. Lives as long as the options database it describes
   (freed by SgFinalize), like the option catalogue in options.c. */
typedef struct {
  char *name; /* option name without the dash, as inserted */
  int   line, col;
} SgDeckKey;
static struct {
  SgDeckKey *keys;
  PetscInt   n;
  char       file[PETSC_MAX_PATH_LEN];
} decktable;

/* One key while parsing: its full option name, the mapping it belongs to, and whether its value
   is a section (mapping) rather than a value. Sorted afterwards to find repeats. */
typedef struct {
  char    *name;
  PetscInt map, order;
  int      line, col;
  int      section;
} KeyRec;

/* One open mapping or list. */
typedef struct {
  int      list;       /* 0: mapping, 1: list */
  char     prefix[SG_DECK_MAX_NAME + 2];
  PetscInt map;        /* mapping id (for repeated keys) */
  int      want_value; /* mapping: the key has been read, its value comes next */
  char     key[SG_DECK_MAX_NAME + 1];
  int      key_line, key_col;
  PetscInt rec;   /* list: its record, which gets the joined value at the end */
  char    *items; /* list: comma-separated so far */
  size_t   len, cap;
  int      nitems;
} Frame;

typedef struct {
  MPI_Comm    comm;
  const char *file;
  Frame       stack[SG_DECK_MAX_DEPTH + 2];
  int         depth;
  PetscInt    nmaps;
  KeyRec     *recs;
  PetscInt    nrec, caprec;
  char      **values; /* value of recs[i] when it is a leaf (NULL for sections) */
} Parse;

/* A short, printable copy of user text for a message: one line, at most ~40 characters. */
static void Quote(const char *s, size_t n, char out[64])
{
  size_t j = 0;
  for (size_t i = 0; i < n && s[i] && j < 40; i++) out[j++] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
  out[j] = 0;
  if (j == 40) strcpy(out + j, "...");
}

/* ---- byte-level checks: NUL, UTF-8, control characters, tabs in indentation ---------------- */

/* Length of the UTF-8 sequence at p (1..4), or 0 if it is not valid UTF-8 (RFC 3629: no
   overlong forms, no surrogates, nothing above U+10FFFF). */
static int Utf8Length(const unsigned char *p, size_t left)
{
  unsigned c = p[0], cp;
  int      n;

  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else return 0;
  if ((size_t)n > left) return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  return n;
}

static PetscErrorCode CheckBytes(MPI_Comm comm, const char file[], const unsigned char *s, size_t n)
{
  int       line = 1, col = 1;
  PetscBool indent = PETSC_TRUE; /* still in the leading blanks of the line */

  PetscFunctionBegin;
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    int      len;
    PetscCheck(c != 0, comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: NUL byte in the deck: a deck is plain UTF-8 text; remove it (is this a binary or damaged file?)", file, line, col);
    len = Utf8Length(s + i, n - i);
    PetscCheck(len, comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: invalid UTF-8 byte 0x%02X in the deck: save the deck as UTF-8 text (or remove the character)", file, line, col, c);
    if (c == '\n' || (c == '\r' && !(i + 1 < n && s[i + 1] == '\n'))) {
      line++;
      col = 1;
      indent = PETSC_TRUE;
      i++;
      continue;
    }
    if (c == '\r') { /* the \r of \r\n */
      i++;
      continue;
    }
    PetscCheck(!(c == '\t' && indent), comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: tab in the indentation: YAML indents with spaces only; replace the tab with spaces", file, line, col);
    PetscCheck(c >= 32 || c == '\t', comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: control character 0x%02X in the deck: remove it (decks are plain text)", file, line, col, c);
    PetscCheck(c != 0x7F, comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: control character 0x7F in the deck: remove it (decks are plain text)", file, line, col);
    if (c != ' ') indent = PETSC_FALSE;
    i += (size_t)len;
    col++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- libyaml's syntax errors, said with a fix ------------------------------------------------ */

static PetscErrorCode SyntaxError(Parse *P, yaml_parser_t *y, const unsigned char *s, size_t n)
{
  const char *problem = y->problem ? y->problem : "unknown problem", *context = y->context ? y->context : "";
  int         line = (int)y->problem_mark.line + 1, col = (int)y->problem_mark.column + 1;
  int         cline = (int)y->context_mark.line + 1, ccol = (int)y->context_mark.column + 1;
  char        fix[512];

  PetscFunctionBegin;
  if (y->error == YAML_READER_ERROR) { /* CheckBytes catches these first; locate by the offset */
    line = 1;
    col = 1;
    for (size_t i = 0; i < y->problem_offset && i < n; i++) {
      if (s[i] == '\n') {
        line++;
        col = 1;
      } else if ((s[i] & 0xC0) != 0x80) col++;
    }
    PetscCall(PetscSNPrintf(fix, sizeof fix, "%s: save the deck as UTF-8 text", problem));
  } else if (strstr(problem, "expected ',' or ']'")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "the list opened with '[' at line %d column %d is not closed: add the ']' (and separate entries with ',')", cline, ccol));
  } else if (strstr(problem, "expected ',' or '}'")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "the mapping opened with '{' at line %d column %d is not closed: add the '}' (and separate 'key: value' pairs with ',')", cline, ccol));
  } else if (strstr(context, "quoted scalar")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "the quoted value opened at line %d column %d is not closed (%s): add the closing quote", cline, ccol, problem));
  } else if (strstr(problem, "mapping values are not allowed")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "unexpected ':': this line is probably indented deeper than the key above it, or a key lost its ':' on the line before; give every key of a section the same indentation (quote a value that contains ': ')"));
  } else if (strstr(problem, "did not find expected key") && y->problem_mark.index < n && s[y->problem_mark.index] == ':') {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "a ':' with no key before it: write 'key: value'"));
  } else if (strstr(problem, "did not find expected key") || strstr(problem, "did not find expected '-' indicator")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "this line does not line up with the keys of its section (which starts at line %d): indent every key of a section by the same number of spaces", cline));
  } else if (strstr(problem, "could not find expected ':'")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "the key at line %d column %d has no ':': write 'key: value'", cline, ccol));
  } else if (strstr(problem, "tab")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "tab character (%s): indent and separate with spaces", problem));
  } else if (strstr(problem, "cannot start any token")) {
    size_t off = y->problem_mark.index; /* character index; equals the byte offset for ASCII */
    char   ch  = off < n && s[off] >= 32 && s[off] < 127 ? (char)s[off] : '?';
    PetscCall(PetscSNPrintf(fix, sizeof fix, "'%c' cannot start a value: quote the value (e.g. key: \"%c...\")", ch, ch));
  } else if (strstr(problem, "document start") || strstr(problem, "<document start>")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "text after the end of the deck's mapping: every line must be a 'key: value' of a section, a comment (#) or blank"));
  } else if (strstr(problem, "block sequence entries are not allowed")) {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "a '- ' list entry where a key was expected: write lists as key: [a, b]"));
  } else {
    PetscCall(PetscSNPrintf(fix, sizeof fix, "YAML syntax error: %s%s%s%s: check the YAML here (sections are 'name:' lines, values 'key: value' indented below them)", problem, context[0] ? " (" : "", context, context[0] ? ")" : ""));
  }
  SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: %s", P->file, line, col, fix);
}

/* ---- building the option list ---------------------------------------------------------------- */

static PetscErrorCode AddRec(Parse *P, const char name[], PetscInt map, int line, int col, int section, const char *value)
{
  PetscFunctionBegin;
  PetscCheck(P->nrec < SG_DECK_MAX_KEYS, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: the deck has more than %d keys: this is not a surge deck (decks have a few dozen keys)", P->file, line, col, SG_DECK_MAX_KEYS);
  if (P->nrec == P->caprec) {
    P->caprec = P->caprec ? 2 * P->caprec : 64;
    PetscCall(PetscRealloc(sizeof(KeyRec) * (size_t)P->caprec, &P->recs));
    PetscCall(PetscRealloc(sizeof(char *) * (size_t)P->caprec, &P->values));
  }
  PetscCall(PetscStrallocpy(name, &P->recs[P->nrec].name));
  P->recs[P->nrec].map     = map;
  P->recs[P->nrec].order   = P->nrec;
  P->recs[P->nrec].line    = line;
  P->recs[P->nrec].col     = col;
  P->recs[P->nrec].section = section;
  P->values[P->nrec]       = NULL;
  if (value) PetscCall(PetscStrallocpy(value, &P->values[P->nrec]));
  P->nrec++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A scalar event's text, its place (1-based) and a printable copy for messages. */
typedef struct {
  const char *s;
  size_t      n;
  int         line, col;
  char        q[64];
} Scalar;

static void GetScalar(const yaml_event_t *ev, Scalar *x)
{
  x->s    = (const char *)ev->data.scalar.value;
  x->n    = ev->data.scalar.length;
  x->line = (int)ev->start_mark.line + 1;
  x->col  = (int)ev->start_mark.column + 1;
  Quote(x->s, x->n, x->q);
}

/* A key must be an option name piece: letters, digits, underscores. */
static PetscErrorCode CheckKey(Parse *P, const yaml_event_t *ev, const char prefix[])
{
  Scalar x;

  PetscFunctionBegin;
  GetScalar(ev, &x);
  PetscCheck(x.n > 0, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: empty key: every value needs a name ('key: value')", P->file, x.line, x.col);
  for (size_t i = 0; i < x.n; i++) PetscCheck(isalnum((unsigned char)x.s[i]) || x.s[i] == '_', P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: key '%s' is not a name: keys are letters, digits and '_' (did a value lose its 'key: '?)", P->file, x.line, x.col, x.q);
  PetscCheck(x.n + strlen(prefix) <= SG_DECK_MAX_NAME, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: key '%s' makes an option name longer than %d characters: shorten it", P->file, x.line, x.col, x.q, SG_DECK_MAX_NAME);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Anchors, aliases and tags (other than YAML's own core tags such as !!str) have no option meaning. */
static PetscErrorCode CheckPlainNode(Parse *P, const yaml_event_t *ev, const yaml_char_t *anchor, const yaml_char_t *tag)
{
  int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;

  PetscFunctionBegin;
  PetscCheck(!anchor, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: anchor '&%s': decks use no anchors or aliases; write the values out", P->file, line, col, (const char *)anchor);
  PetscCheck(!tag || !strncmp((const char *)tag, "tag:yaml.org,2002:", 18), P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: tag '%s': decks use no YAML tags; remove it", P->file, line, col, (const char *)tag);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckValue(Parse *P, const yaml_event_t *ev, PetscBool item)
{
  Scalar x;

  PetscFunctionBegin;
  GetScalar(ev, &x);
  /* libyaml keeps the NUL of an escaped "\0" inside the value; the options database would cut it */
  PetscCheck(strlen(x.s) == x.n, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: value contains a NUL character (\\0): remove it", P->file, x.line, x.col);
  for (size_t i = 0; i < x.n; i++) {
    PetscCheck(x.s[i] != '\n' && x.s[i] != '\r', P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: value '%s' spans several lines: write it on one line", P->file, x.line, x.col, x.q);
    PetscCheck((unsigned char)x.s[i] >= 32 || x.s[i] == '\t', P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: value '%s' contains a control character: remove it", P->file, x.line, x.col, x.q);
  }
  if (item) {
    PetscCheck(x.n > 0, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: empty list entry: remove it or give it a value", P->file, x.line, x.col);
    PetscCheck(!strchr(x.s, ','), P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: list entry '%s' contains ',': list entries are single values (write [a, b], not [\"a,b\"])", P->file, x.line, x.col, x.q);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Push(Parse *P, const yaml_event_t *ev, int list)
{
  Frame *parent = P->depth ? &P->stack[P->depth - 1] : NULL, *f;
  int    line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;

  PetscFunctionBegin;
  if (!parent) {
    PetscCheck(!list, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: the deck is a list: a deck is a mapping of sections, e.g. 'sim:' then '  solver: heat' on the next line", P->file, line, col);
  } else if (parent->list) {
    SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: %s inside a list: list entries are single values; write key: [1, 2] (no nested lists or mappings)", P->file, line, col, list ? "a list" : "a mapping");
  } else {
    PetscCheck(parent->want_value, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: a %s used as a key: keys are plain names ('key: value')", P->file, line, col, list ? "list" : "mapping");
  }
  PetscCheck(P->depth <= SG_DECK_MAX_DEPTH, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: sections nested %d deep: decks nest at most %d levels (section: {subsection: {key: value}}); check the indentation", P->file, line, col, P->depth, SG_DECK_MAX_DEPTH);
  f = &P->stack[P->depth++];
  memset(f, 0, sizeof *f);
  f->list = list;
  if (parent) PetscCall(PetscSNPrintf(f->prefix, sizeof f->prefix, "%s%s%s", parent->prefix, parent->key, list ? "" : "_"));
  if (!list) f->map = P->nmaps++;
  if (parent) {
    char name[2 * SG_DECK_MAX_NAME + 4];
    PetscCall(PetscSNPrintf(name, sizeof name, "%s%s", parent->prefix, parent->key));
    f->rec = P->nrec;
    PetscCall(AddRec(P, name, parent->map, parent->key_line, parent->key_col, !list, list ? "" : NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ListAppend(Parse *P, Frame *f, const char *v, size_t n)
{
  PetscFunctionBegin;
  if (f->len + n + 2 > f->cap) {
    f->cap = 2 * (f->len + n + 2);
    PetscCall(PetscRealloc(f->cap, &f->items));
  }
  if (f->nitems++) f->items[f->len++] = ',';
  memcpy(f->items + f->len, v, n);
  f->len += n;
  f->items[f->len] = 0;
  (void)P;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Event(Parse *P, const yaml_event_t *ev, PetscInt *ndocs)
{
  Frame *top = P->depth ? &P->stack[P->depth - 1] : NULL;
  int    line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
  char   q[64];

  PetscFunctionBegin;
  switch (ev->type) {
  case YAML_DOCUMENT_START_EVENT:
    PetscCheck(++*ndocs == 1, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: a second YAML document ('---'): a deck is one document; remove the '---' line or split the file into two decks", P->file, line, col);
    break;
  case YAML_ALIAS_EVENT:
    SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: alias '*%s': decks use no anchors or aliases; write the value out", P->file, line, col, (const char *)ev->data.alias.anchor);
  case YAML_MAPPING_START_EVENT:
    PetscCall(CheckPlainNode(P, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag));
    PetscCall(Push(P, ev, 0));
    break;
  case YAML_SEQUENCE_START_EVENT:
    PetscCall(CheckPlainNode(P, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag));
    PetscCall(Push(P, ev, 1));
    break;
  case YAML_MAPPING_END_EVENT:
    P->depth--;
    if (P->depth) P->stack[P->depth - 1].want_value = 0;
    break;
  case YAML_SEQUENCE_END_EVENT: {
    Frame *parent = &P->stack[P->depth - 2];
    if (top->items) { /* the list's record was added at its start (value ""); give it the entries */
      PetscCall(PetscFree(P->values[top->rec]));
      P->values[top->rec] = top->items;
      top->items          = NULL;
    }
    P->depth--;
    parent->want_value = 0;
  } break;
  case YAML_SCALAR_EVENT:
    PetscCall(CheckPlainNode(P, ev, ev->data.scalar.anchor, ev->data.scalar.tag));
    if (!top) { /* the whole document is one value; an empty document is an empty deck */
      Quote((const char *)ev->data.scalar.value, ev->data.scalar.length, q);
      PetscCheck(ev->data.scalar.length == 0, P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: the deck is the single value '%s': a deck is a mapping of sections, e.g. 'sim:' then '  solver: heat' on the next line", P->file, line, col, q);
    } else if (top->list) {
      PetscCall(CheckValue(P, ev, PETSC_TRUE));
      PetscCall(ListAppend(P, top, (const char *)ev->data.scalar.value, ev->data.scalar.length));
    } else if (!top->want_value) {
      PetscCall(CheckKey(P, ev, top->prefix));
      PetscCall(PetscStrncpy(top->key, (const char *)ev->data.scalar.value, sizeof top->key));
      top->key_line   = line;
      top->key_col    = col;
      top->want_value = 1;
    } else {
      char name[2 * SG_DECK_MAX_NAME + 4];
      PetscCall(CheckValue(P, ev, PETSC_FALSE));
      PetscCall(PetscSNPrintf(name, sizeof name, "%s%s", top->prefix, top->key));
      PetscCall(AddRec(P, name, top->map, top->key_line, top->key_col, 0, (const char *)ev->data.scalar.value));
      top->want_value = 0;
    }
    break;
  default:
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CompareRec(const void *a, const void *b)
{
  const KeyRec *x = (const KeyRec *)a, *y = (const KeyRec *)b;
  int           c = strcasecmp(x->name, y->name); /* PETSc option names ignore case */
  if (c) return c;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* A key given twice in one mapping (or one section twice), or two keys that end up as the same
   option (vlasov: {elc_k: 1, elc: {k: 2}}): the earliest second occurrence is reported. */
static PetscErrorCode CheckRepeats(Parse *P)
{
  KeyRec   *r;
  PetscInt  bad = -1, first = -1;

  PetscFunctionBegin;
  if (!P->nrec) PetscFunctionReturn(PETSC_SUCCESS); /* an empty deck (qsort must not see NULL) */
  PetscCall(PetscMalloc1(P->nrec, &r));
  PetscCall(PetscArraycpy(r, P->recs, P->nrec));
  qsort(r, (size_t)P->nrec, sizeof *r, CompareRec);
  for (PetscInt i = 0; i < P->nrec; i++)
    for (PetscInt j = i + 1; j < P->nrec && !strcasecmp(r[i].name, r[j].name); j++) {
      PetscBool clash = (r[i].map == r[j].map || (!r[i].section && !r[j].section)) ? PETSC_TRUE : PETSC_FALSE;
      if (clash && (bad < 0 || r[j].order < r[bad].order)) {
        bad = j;
        first = i;
      }
    }
  if (bad >= 0) {
    KeyRec a = r[first], b = r[bad];
    PetscCall(PetscFree(r));
    if (a.map == b.map && a.section && b.section)
      SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: section '%s' appears twice (first at line %d): merge the two into one section", P->file, b.line, b.col, a.name, a.line);
    if (a.map == b.map)
      SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: duplicate key: -%s is also set at line %d: keep one of the two lines", P->file, b.line, b.col, a.name, a.line);
    SETERRQ(P->comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: this key sets option -%s, which line %d already sets: keep one of the two", P->file, b.line, b.col, a.name, a.line);
  }
  PetscCall(PetscFree(r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ParseFree(Parse *P)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < P->nrec; i++) {
    PetscCall(PetscFree(P->recs[i].name));
    PetscCall(PetscFree(P->values[i]));
  }
  PetscCall(PetscFree(P->recs));
  PetscCall(PetscFree(P->values));
  for (int d = 0; d < P->depth; d++) PetscCall(PetscFree(P->stack[d].items));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parse and check the text; on success P holds one leaf record per option with its value. */
static PetscErrorCode ParseText(Parse *P, const unsigned char *s, size_t n)
{
  yaml_parser_t  y;
  yaml_event_t   ev;
  PetscInt       ndocs = 0;
  PetscErrorCode ierr  = PETSC_SUCCESS;
  PetscBool      done  = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(CheckBytes(P->comm, P->file, s, n));
  PetscCheck(yaml_parser_initialize(&y), P->comm, PETSC_ERR_MEM, "libyaml could not initialise a parser (out of memory)");
  yaml_parser_set_input_string(&y, s, n);
  while (!done && !ierr) {
    if (!yaml_parser_parse(&y, &ev)) {
      ierr = SyntaxError(P, &y, s, n);
      break;
    }
    done = ev.type == YAML_STREAM_END_EVENT;
    ierr = Event(P, &ev, &ndocs);
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&y);
  PetscCall(ierr);
  PetscCall(CheckRepeats(P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 reads the file; every rank gets the bytes (or the reason there are none). */
static PetscErrorCode ReadDeck(MPI_Comm comm, const char deck[], unsigned char **text, size_t *n)
{
  PetscMPIInt rank;
  long long   info[2] = {0, 0}; /* {status, length}; status 0 ok, 1 unreadable, 2 not a file, 3 too big */
  struct stat st;

  PetscFunctionBegin;
  *text = NULL;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    FILE *fp = NULL;
    if (stat(deck, &st)) info[0] = 1;
    else if (!S_ISREG(st.st_mode)) info[0] = 2;
    else if (st.st_size > SG_DECK_MAX_BYTES) {
      info[0] = 3;
      info[1] = (long long)st.st_size;
    } else if (!(fp = fopen(deck, "rb"))) info[0] = 1;
    else {
      PetscCall(PetscMalloc1((size_t)st.st_size + 1, text));
      info[1] = (long long)fread(*text, 1, (size_t)st.st_size, fp);
      if (ferror(fp)) info[0] = 1;
      fclose(fp);
    }
  }
  PetscCallMPI(MPI_Bcast(info, 2, MPI_LONG_LONG, 0, comm));
  if (info[0]) PetscCall(PetscFree(*text));
  PetscCheck(info[0] != 1, comm, PETSC_ERR_FILE_OPEN, "Cannot read deck '%s': check the path (decks are YAML files, e.g. inputs/vlasov/landau.yaml)", deck);
  PetscCheck(info[0] != 2, comm, PETSC_ERR_FILE_OPEN, "Deck '%s' is not a regular file (a directory?): give the path of a YAML deck, e.g. inputs/vlasov/landau.yaml", deck);
  PetscCheck(info[0] != 3, comm, PETSC_ERR_FILE_OPEN, "Deck '%s' is %lld bytes: decks are small YAML text files (at most %d bytes); is this the right file?", deck, info[1], SG_DECK_MAX_BYTES);
  if (rank) PetscCall(PetscMalloc1((size_t)info[1] + 1, text));
  PetscCallMPI(MPI_Bcast(*text, (PetscMPIInt)info[1], MPI_UNSIGNED_CHAR, 0, comm));
  (*text)[info[1]] = 0;
  *n               = (size_t)info[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeckInsert(MPI_Comm comm, const char deck[])
{
  Parse          P;
  unsigned char *text;
  size_t         n = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(ReadDeck(comm, deck, &text, &n));
  PetscCall(SgInputRegister(deck, SG_PATH_IN)); /* no output may replace the deck */
  memset(&P, 0, sizeof P);
  P.comm = comm;
  P.file = deck;
  ierr   = ParseText(&P, text, n);
  PetscCall(PetscFree(text));
  if (!ierr) {
    PetscCall(SgDeckDestroy());
    PetscCall(PetscStrncpy(decktable.file, deck, sizeof decktable.file));
    PetscCall(PetscMalloc1(P.nrec, &decktable.keys));
    for (PetscInt i = 0; i < P.nrec; i++) {
      char opt[SG_DECK_MAX_NAME + 2];
      if (P.recs[i].section) continue;
      PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s", P.recs[i].name));
      PetscCall(PetscOptionsSetValue(NULL, opt, P.values[i]));
      decktable.keys[decktable.n].name = P.recs[i].name;
      decktable.keys[decktable.n].line = P.recs[i].line;
      decktable.keys[decktable.n].col  = P.recs[i].col;
      decktable.n++;
      P.recs[i].name = NULL; /* now owned by the table */
    }
  }
  PetscCall(ParseFree(&P));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeckKeyLocation(const char option[], const char **deck, PetscInt *line, PetscInt *col)
{
  PetscFunctionBegin;
  *line = *col = -1;
  if (deck) *deck = decktable.file;
  if (option[0] == '-') option++;
  for (PetscInt i = 0; i < decktable.n; i++)
    if (!strcasecmp(decktable.keys[i].name, option)) {
      *line = decktable.keys[i].line;
      *col  = decktable.keys[i].col;
      break;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeckDestroy(void)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < decktable.n; i++) PetscCall(PetscFree(decktable.keys[i].name));
  PetscCall(PetscFree(decktable.keys));
  decktable.n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
