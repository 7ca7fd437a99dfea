/* SgTree (sgtree.h): ordered document trees from YAML (libyaml) and JSON (Jansson), and back. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>
#include <jansson.h>
#include "sgtree.h"

#define SG_TREE_MAX_DEPTH 64

PetscErrorCode SgTreeCreate(SgTreeKind k, SgTree *t)
{
  PetscFunctionBegin;
  PetscCall(PetscNew(t));
  (*t)->kind = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDestroy(SgTree *tt)
{
  SgTree t = *tt;

  PetscFunctionBegin;
  if (!t) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < t->n; k++) {
    PetscCall(SgTreeDestroy(&t->items[k]));
    if (t->keys) PetscCall(PetscFree(t->keys[k]));
  }
  PetscCall(PetscFree(t->items));
  PetscCall(PetscFree(t->keys));
  PetscCall(PetscFree(t->s));
  PetscCall(PetscFree(t->data));
  PetscCall(PetscFree(t));
  *tt = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* append a child (and key); capacity grows by doubling (n is a power of two at each growth) */
static PetscErrorCode Append(SgTree p, const char key[], SgTree c)
{
  PetscFunctionBegin;
  if (!(p->n & (p->n - 1))) { /* n is 0 or a power of two: grow to 2n (at least 4) */
    PetscInt cap = PetscMax(4, 2 * p->n);
    SgTree  *it;
    PetscCall(PetscMalloc1(cap, &it));
    if (p->n) PetscCall(PetscArraycpy(it, p->items, p->n));
    PetscCall(PetscFree(p->items));
    p->items = it;
    if (p->kind == SG_TREE_DICT) {
      char **ks;
      PetscCall(PetscMalloc1(cap, &ks));
      if (p->n) PetscCall(PetscArraycpy(ks, p->keys, p->n));
      PetscCall(PetscFree(p->keys));
      p->keys = ks;
    }
  }
  p->items[p->n] = c;
  if (p->kind == SG_TREE_DICT) PetscCall(PetscStrallocpy(key, &p->keys[p->n]));
  p->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAdd(SgTree d, const char key[], SgTreeKind k, SgTree *c)
{
  PetscFunctionBegin;
  PetscCheck(d->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "SgTreeDictAdd: not a dict");
  PetscCall(SgTreeCreate(k, c));
  PetscCall(Append(d, key, *c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeListAdd(SgTree l, SgTreeKind k, SgTree *c)
{
  PetscFunctionBegin;
  PetscCheck(l->kind == SG_TREE_LIST, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "SgTreeListAdd: not a list");
  PetscCall(SgTreeCreate(k, c));
  PetscCall(Append(l, NULL, *c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddString(SgTree d, const char key[], const char v[])
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_STRING, &c));
  PetscCall(PetscStrallocpy(v, &c->s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddInt(SgTree d, const char key[], long long v)
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_INT, &c));
  c->i = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddReal(SgTree d, const char key[], double v)
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_REAL, &c));
  c->r = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddBool(SgTree d, const char key[], PetscBool v)
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_BOOL, &c));
  c->b = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddNull(SgTree d, const char key[])
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_NULL, &c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeSetArray(SgTree c, const char dtype[], PetscInt rank, const PetscInt64 dims[], const double *data)
{
  PetscFunctionBegin;
  PetscCheck(rank >= 0 && rank <= 8, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "SgTree: array rank %" PetscInt_FMT " (0..8)", rank);
  c->kind  = SG_TREE_ARRAY;
  c->rank  = rank;
  c->numel = 1;
  for (PetscInt k = 0; k < rank; k++) {
    c->dims[k] = dims[k];
    c->numel *= dims[k];
  }
  PetscCall(PetscFree(c->s));
  PetscCall(PetscStrallocpy(dtype, &c->s));
  PetscCall(PetscFree(c->data));
  PetscCall(PetscMalloc1(PetscMax(c->numel, 1), &c->data));
  if (c->numel) PetscCall(PetscArraycpy(c->data, data, c->numel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeDictAddArray(SgTree d, const char key[], const char dtype[], PetscInt rank, const PetscInt64 dims[], const double *data)
{
  SgTree c;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_ARRAY, &c));
  PetscCall(SgTreeSetArray(c, dtype, rank, dims, data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

SgTree SgTreeGet(SgTree d, const char key[])
{
  if (!d || d->kind != SG_TREE_DICT) return NULL;
  for (PetscInt k = 0; k < d->n; k++)
    if (!strcmp(d->keys[k], key)) return d->items[k];
  return NULL;
}

PetscErrorCode SgTreeReadText(const char path[], size_t maxbytes, char **text, size_t *len)
{
  struct stat st;
  FILE       *fp;
  char       *buf;

  PetscFunctionBegin;
  PetscCheck(!stat(path, &st), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot read %s: %s", path, errno == ENOENT ? "no such file (check the path)" : strerror(errno));
  PetscCheck(S_ISREG(st.st_mode), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s is not a regular file", path);
  PetscCheck((size_t)st.st_size <= maxbytes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is %lld bytes, more than the %zu this reader takes", path, (long long)st.st_size, maxbytes);
  fp = fopen(path, "rb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s: %s", path, strerror(errno));
  PetscCall(PetscMalloc1(st.st_size + 1, &buf));
  size_t got = fread(buf, 1, st.st_size, fp);
  fclose(fp);
  if (got != (size_t)st.st_size) {
    PetscCall(PetscFree(buf));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read all of %s (%zu of %lld bytes)", path, got, (long long)st.st_size);
  }
  buf[got] = 0;
  *text    = buf;
  *len     = got;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- DeePMD-kit's inline arrays -> array nodes ------------------------------------------------ */
static PetscErrorCode Shape(SgTree v, PetscInt depth, PetscInt *rank, PetscInt64 dims[])
{
  PetscFunctionBegin;
  if (v->kind != SG_TREE_LIST) {
    *rank = depth;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(depth < 8, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "more than 8 dimensions");
  dims[depth] = v->n;
  if (!v->n) {
    *rank = depth + 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(Shape(v->items[0], depth + 1, rank, dims));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Flatten(const char name[], SgTree v, PetscInt depth, PetscInt rank, const PetscInt64 dims[], double *out, PetscInt64 *k)
{
  PetscFunctionBegin;
  if (depth == rank) {
    PetscCheck(v->kind == SG_TREE_REAL || v->kind == SG_TREE_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d: an array value that is not a number", name, v->line);
    out[(*k)++] = v->kind == SG_TREE_REAL ? v->r : (double)v->i;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(v->kind == SG_TREE_LIST && v->n == dims[depth], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d: a ragged array (dimension %" PetscInt_FMT " should have %lld entries everywhere)", name, v->line, depth, (long long)dims[depth]);
  for (PetscInt q = 0; q < v->n; q++) PetscCall(Flatten(name, v->items[q], depth + 1, rank, dims, out, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Arrays(const char name[], SgTree t)
{
  PetscFunctionBegin;
  if (t->kind == SG_TREE_DICT) {
    SgTree cls = SgTreeGet(t, "@class");
    if (cls && cls->kind == SG_TREE_STRING && !strcmp(cls->s, "np.ndarray")) {
      SgTree     dt = SgTreeGet(t, "dtype"), v = SgTreeGet(t, "value");
      PetscInt   rank = 0;
      PetscInt64 dims[8], numel = 1, k = 0;
      double    *buf;
      PetscCheck(dt && dt->kind == SG_TREE_STRING && v, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d: an np.ndarray without dtype or value", name, t->line);
      PetscCall(Shape(v, 0, &rank, dims));
      for (PetscInt q = 0; q < rank; q++) numel *= dims[q];
      PetscCheck(numel <= ((PetscInt64)1 << 31), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d: array of %lld values is too large", name, t->line, (long long)numel);
      PetscCall(PetscMalloc1(PetscMax(numel, 1), &buf));
      PetscCall(Flatten(name, v, 0, rank, dims, buf, &k));
      char dtype[32];
      PetscCall(PetscStrncpy(dtype, dt->s, sizeof dtype));
      for (PetscInt q = 0; q < t->n; q++) {
        PetscCall(SgTreeDestroy(&t->items[q]));
        PetscCall(PetscFree(t->keys[q]));
      }
      t->n = 0;
      PetscCall(SgTreeSetArray(t, dtype, rank, dims, buf));
      PetscCall(PetscFree(buf));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (t->kind == SG_TREE_DICT || t->kind == SG_TREE_LIST)
    for (PetscInt q = 0; q < t->n; q++) PetscCall(Arrays(name, t->items[q]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Copy(SgTree a, SgTree *out)
{
  SgTree t;

  PetscFunctionBegin;
  PetscCall(SgTreeCreate(a->kind, &t));
  t->b = a->b;
  t->i = a->i;
  t->r = a->r;
  t->line = a->line;
  if (a->s) PetscCall(PetscStrallocpy(a->s, &t->s));
  if (a->kind == SG_TREE_ARRAY) PetscCall(SgTreeSetArray(t, a->s, a->rank, a->dims, a->data));
  for (PetscInt q = 0; q < a->n; q++) {
    SgTree c;
    PetscCall(Copy(a->items[q], &c));
    PetscCall(Append(t, a->keys ? a->keys[q] : NULL, c));
  }
  *out = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- YAML ------------------------------------------------------------------------------------ */
#define SG_TREE_MAX_ANCHORS 1024
static int IsInt(const char *s)
{
  const char *p = s;
  if (*p == '-' || *p == '+') p++;
  if (!*p) return 0;
  for (; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

/* YAML 1.1 floats as PyYAML writes them: digits with '.', exponent, .inf, .nan */
static int IsReal(const char *s, double *v)
{
  const char *p = s;
  char       *end;
  if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) return *v = NAN, 1;
  if (*p == '-' || *p == '+') p++;
  if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) return *v = (*s == '-' ? -INFINITY : INFINITY), 1;
  if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))) return 0;
  for (const char *q = p; *q; q++)
    if (!strchr("0123456789.eE+-", *q)) return 0;
  errno = 0;
  *v    = strtod(s, &end);
  return *end == 0 && errno != ERANGE;
}

static PetscErrorCode Scalar(const char name[], yaml_event_t *ev, SgTree *out)
{
  const char *s = (const char *)ev->data.scalar.value;
  SgTree      t;
  double      r;

  PetscFunctionBegin;
  PetscCall(SgTreeCreate(SG_TREE_STRING, &t));
  t->line = (int)ev->start_mark.line + 1;
  if (ev->data.scalar.plain_implicit) {
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")) t->kind = SG_TREE_NULL;
    else if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
      t->kind = SG_TREE_BOOL;
      t->b = PETSC_TRUE;
    } else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
      t->kind = SG_TREE_BOOL;
      t->b = PETSC_FALSE;
    } else if (IsInt(s)) {
      errno = 0;
      t->i  = strtoll(s, NULL, 10);
      PetscCheck(errno != ERANGE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d: integer %s out of range", name, t->line, s);
      t->kind = SG_TREE_INT;
    } else if (IsReal(s, &r)) {
      t->kind = SG_TREE_REAL;
      t->r = r;
    }
  }
  if (t->kind == SG_TREE_STRING) PetscCall(PetscStrallocpy(s, &t->s));
  *out = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeParseYAML(const char name[], const char *text, size_t len, SgTree *out)
{
  yaml_parser_t p;
  yaml_event_t  ev;
  SgTree        stack[SG_TREE_MAX_DEPTH], root = NULL;
  char         *pend[SG_TREE_MAX_DEPTH]; /* dict: key waiting for its value */
  int           depth = 0, done = 0, ndoc = 0, nanchor = 0;
  struct {
    char  *name;
    SgTree node;   /* owned by the tree; an alias copies it (PyYAML writes anchors for shared lists) */
    int    closed; /* aliases to a collection still open would make a cycle */
  } anchors[SG_TREE_MAX_ANCHORS];
  char          msg[512] = "";

  PetscFunctionBegin;
  PetscCheck(yaml_parser_initialize(&p), PETSC_COMM_SELF, PETSC_ERR_MEM, "libyaml: cannot initialise a parser");
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  while (!done && !msg[0]) {
    if (!yaml_parser_parse(&p, &ev)) {
      PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d:%d: YAML: %s", name, (int)p.problem_mark.line + 1, (int)p.problem_mark.column + 1, p.problem ? p.problem : "syntax error"));
      break;
    }
    int    line = (int)ev.start_mark.line + 1;
    SgTree node = NULL;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
      done = 1;
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (++ndoc > 1) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: more than one YAML document", name, line));
      break;
    case YAML_ALIAS_EVENT: {
      int hit = -1;
      for (int q = 0; q < nanchor; q++)
        if (!strcmp(anchors[q].name, (const char *)ev.data.alias.anchor)) hit = q;
      if (hit < 0 || !anchors[hit].closed) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: alias *%s names no complete anchor", name, line, (const char *)ev.data.alias.anchor));
      else if (depth && stack[depth - 1]->kind == SG_TREE_DICT && !pend[depth - 1]) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: an alias as a mapping key", name, line));
      else PetscCall(Copy(anchors[hit].node, &node));
    } break;
    case YAML_SCALAR_EVENT:
      if (ev.data.scalar.tag && !ev.data.scalar.plain_implicit && !ev.data.scalar.quoted_implicit) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: YAML tags are not accepted here", name, line));
      else if (depth && stack[depth - 1]->kind == SG_TREE_DICT && !pend[depth - 1]) PetscCall(PetscStrallocpy((const char *)ev.data.scalar.value, &pend[depth - 1]));
      else PetscCall(Scalar(name, &ev, &node));
      break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
      if (depth >= SG_TREE_MAX_DEPTH) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: nested deeper than %d levels", name, line, SG_TREE_MAX_DEPTH));
      else if (depth && stack[depth - 1]->kind == SG_TREE_DICT && !pend[depth - 1]) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: a mapping key must be a scalar", name, line));
      else {
        PetscCall(SgTreeCreate(ev.type == YAML_SEQUENCE_START_EVENT ? SG_TREE_LIST : SG_TREE_DICT, &node));
        node->line = line;
      }
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      depth--;
      for (int q = 0; q < nanchor; q++)
        if (anchors[q].node == stack[depth]) anchors[q].closed = 1;
      break;
    default:
      break;
    }
    /* a scalar or an opened collection is attached to its parent at once (an error then frees it
       with the root); an opened collection is pushed */
    if (node) {
      if (!depth) {
        if (root) PetscCall(SgTreeDestroy(&root));
        root = node;
      } else if (stack[depth - 1]->kind == SG_TREE_DICT) {
        SgTree par = stack[depth - 1];
        if (SgTreeGet(par, pend[depth - 1]) && !msg[0]) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: key '%s' repeated", name, line, pend[depth - 1]));
        PetscCall(Append(par, pend[depth - 1], node));
        PetscCall(PetscFree(pend[depth - 1]));
      } else PetscCall(Append(stack[depth - 1], NULL, node));
      {
        const char *anc = ev.type == YAML_SCALAR_EVENT ? (const char *)ev.data.scalar.anchor : ev.type == YAML_SEQUENCE_START_EVENT ? (const char *)ev.data.sequence_start.anchor : ev.type == YAML_MAPPING_START_EVENT ? (const char *)ev.data.mapping_start.anchor : NULL;
        if (anc && nanchor < SG_TREE_MAX_ANCHORS) {
          PetscCall(PetscStrallocpy(anc, &anchors[nanchor].name));
          anchors[nanchor].node   = node;
          anchors[nanchor].closed = ev.type == YAML_SCALAR_EVENT;
          nanchor++;
        } else if (anc && !msg[0]) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%d: more than %d YAML anchors", name, line, SG_TREE_MAX_ANCHORS));
      }
      if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
        pend[depth]    = NULL;
        stack[depth++] = node;
      }
    }
    yaml_event_delete(&ev);
  }
  for (int d = 0; d < depth; d++) PetscCall(PetscFree(pend[d]));
  for (int q = 0; q < nanchor; q++) PetscCall(PetscFree(anchors[q].name));
  yaml_parser_delete(&p);
  if (!msg[0] && !root) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s: empty YAML document", name));
  if (msg[0]) {
    PetscCall(SgTreeDestroy(&root));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  }
  PetscCall(Arrays(name, root)); /* (an error here leaves the tree to the exiting process) */
  *out = root;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- JSON (Jansson) -------------------------------------------------------------------------- */
static PetscErrorCode FromJansson(json_t *j, int depth, SgTree *out)
{
  SgTree t;

  PetscFunctionBegin;
  PetscCheck(depth < SG_TREE_MAX_DEPTH, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "JSON nested deeper than %d levels", SG_TREE_MAX_DEPTH);
  PetscCall(SgTreeCreate(SG_TREE_NULL, &t));
  *out = t;
  switch (json_typeof(j)) {
  case JSON_OBJECT: {
    const char *k;
    json_t     *v;
    t->kind = SG_TREE_DICT;
    json_object_foreach(j, k, v)
    {
      SgTree c;
      PetscCall(FromJansson(v, depth + 1, &c));
      PetscCall(Append(t, k, c));
    }
  } break;
  case JSON_ARRAY:
    t->kind = SG_TREE_LIST;
    for (size_t q = 0; q < json_array_size(j); q++) {
      SgTree c;
      PetscCall(FromJansson(json_array_get(j, q), depth + 1, &c));
      PetscCall(Append(t, NULL, c));
    }
    break;
  case JSON_STRING:
    t->kind = SG_TREE_STRING;
    PetscCall(PetscStrallocpy(json_string_value(j), &t->s));
    break;
  case JSON_INTEGER:
    t->kind = SG_TREE_INT;
    t->i = json_integer_value(j);
    break;
  case JSON_REAL:
    t->kind = SG_TREE_REAL;
    t->r = json_real_value(j);
    break;
  case JSON_TRUE:
  case JSON_FALSE:
    t->kind = SG_TREE_BOOL;
    t->b = json_is_true(j) ? PETSC_TRUE : PETSC_FALSE;
    break;
  default:
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeParseJSON(const char name[], const char *text, size_t len, SgTree *out)
{
  json_error_t e;
  json_t      *j;

  PetscFunctionBegin;
  j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  PetscCheck(j, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%d:%d: JSON: %s", name, e.line, e.column, e.text);
  PetscErrorCode ierr = FromJansson(j, 0, out);
  json_decref(j);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ToJansson(SgTree t, json_t **out)
{
  json_t *j = NULL;

  PetscFunctionBegin;
  switch (t->kind) {
  case SG_TREE_NULL:
    j = json_null();
    break;
  case SG_TREE_BOOL:
    j = json_boolean(t->b);
    break;
  case SG_TREE_INT:
    j = json_integer(t->i);
    break;
  case SG_TREE_REAL:
    PetscCheck(isfinite(t->r), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "JSON cannot hold a non-finite number");
    j = json_real(t->r);
    break;
  case SG_TREE_STRING:
    j = json_string(t->s);
    break;
  case SG_TREE_LIST:
    j = json_array();
    for (PetscInt q = 0; q < t->n; q++) {
      json_t *c;
      PetscCall(ToJansson(t->items[q], &c));
      json_array_append_new(j, c);
    }
    break;
  case SG_TREE_DICT:
    j = json_object();
    for (PetscInt q = 0; q < t->n; q++) {
      json_t *c;
      PetscCall(ToJansson(t->items[q], &c));
      json_object_set_new(j, t->keys[q], c);
    }
    break;
  case SG_TREE_ARRAY:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "SgTreeEmitJSON: an array node (store arrays beside the JSON first)");
  }
  PetscCheck(j, PETSC_COMM_SELF, PETSC_ERR_MEM, "Jansson: out of memory");
  *out = j;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeEmitJSON(SgTree t, char **text)
{
  json_t *j;
  char   *s;

  PetscFunctionBegin;
  PetscCall(ToJansson(t, &j));
  s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENSURE_ASCII);
  json_decref(j);
  PetscCheck(s, PETSC_COMM_SELF, PETSC_ERR_MEM, "Jansson: cannot write JSON");
  PetscCall(PetscStrallocpy(s, text));
  free(s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- YAML output ------------------------------------------------------------------------------ */
typedef struct {
  char  *s;
  size_t n, cap;
} Buf;

static PetscErrorCode Put(Buf *b, const char *s, size_t n)
{
  PetscFunctionBegin;
  if (b->n + n + 1 > b->cap) {
    size_t cap = PetscMax(2 * b->cap, b->n + n + 4096);
    char  *t;
    PetscCall(PetscMalloc1(cap, &t));
    if (b->n) PetscCall(PetscArraycpy(t, b->s, b->n));
    PetscCall(PetscFree(b->s));
    b->s = t;
    b->cap = cap;
  }
  PetscCall(PetscArraycpy(b->s + b->n, s, n));
  b->n += n;
  b->s[b->n] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode PutS(Buf *b, const char *s)
{
  PetscFunctionBegin;
  PetscCall(Put(b, s, strlen(s)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode Indent(Buf *b, int ind)
{
  PetscFunctionBegin;
  for (int k = 0; k < ind; k++) PetscCall(Put(b, " ", 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a double that reads back bit for bit, and as a float (never as an int) */
static void RealText(double v, char *w, size_t n)
{
  if (isnan(v)) snprintf(w, n, ".nan");
  else if (isinf(v)) snprintf(w, n, v < 0 ? "-.inf" : ".inf");
  else {
    snprintf(w, n, "%.17g", v);
    if (!strpbrk(w, ".eE")) strncat(w, ".0", n - strlen(w) - 1);
    else if (!strchr(w, '.')) { /* 1e-05 is a string to YAML 1.1 readers (PyYAML): write 1.0e-05 */
      char *e = strpbrk(w, "eE"), tail[40];
      snprintf(tail, sizeof tail, "%s", e);
      snprintf(e, n - (e - w), ".0%s", tail);
    }
  }
}

/* strings always double-quoted with JSON escapes (a subset of YAML's) */
static PetscErrorCode Quoted(Buf *b, const char *s)
{
  PetscFunctionBegin;
  PetscCall(Put(b, "\"", 1));
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char w[8];
    if (*p == '"' || *p == '\\') {
      w[0] = '\\';
      w[1] = (char)*p;
      w[2] = 0;
      PetscCall(PutS(b, w));
    } else if (*p < 0x20) {
      snprintf(w, sizeof w, "\\x%02x", *p);
      PetscCall(PutS(b, w));
    } else PetscCall(Put(b, (const char *)p, 1));
  }
  PetscCall(Put(b, "\"", 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ArrayValue(Buf *b, SgTree t, PetscInt d, PetscInt64 *k)
{
  char w[40];

  PetscFunctionBegin;
  if (d == t->rank) {
    RealText(t->data[(*k)++], w, sizeof w);
    PetscCall(PutS(b, w));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(Put(b, "[", 1));
  for (PetscInt64 q = 0; q < t->dims[d]; q++) {
    if (q) PetscCall(Put(b, ", ", 2));
    PetscCall(ArrayValue(b, t, d + 1, k));
  }
  PetscCall(Put(b, "]", 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Inline(SgTree t)
{
  if (t->kind == SG_TREE_DICT || t->kind == SG_TREE_ARRAY) return t->n == 0 && t->kind == SG_TREE_DICT;
  if (t->kind == SG_TREE_LIST)
    for (PetscInt q = 0; q < t->n; q++)
      if (!Inline(t->items[q])) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscErrorCode InlineValue(Buf *b, SgTree t)
{
  char w[48];

  PetscFunctionBegin;
  switch (t->kind) {
  case SG_TREE_NULL:
    PetscCall(PutS(b, "null"));
    break;
  case SG_TREE_BOOL:
    PetscCall(PutS(b, t->b ? "true" : "false"));
    break;
  case SG_TREE_INT:
    snprintf(w, sizeof w, "%lld", t->i);
    PetscCall(PutS(b, w));
    break;
  case SG_TREE_REAL:
    RealText(t->r, w, sizeof w);
    PetscCall(PutS(b, w));
    break;
  case SG_TREE_STRING:
    PetscCall(Quoted(b, t->s));
    break;
  case SG_TREE_LIST:
    PetscCall(Put(b, "[", 1));
    for (PetscInt q = 0; q < t->n; q++) {
      if (q) PetscCall(Put(b, ", ", 2));
      PetscCall(InlineValue(b, t->items[q]));
    }
    PetscCall(Put(b, "]", 1));
    break;
  case SG_TREE_DICT:
    PetscCall(PutS(b, "{}"));
    break;
  default:
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* block style; each dict entry on its own line at indentation ind */
static PetscErrorCode Block(Buf *b, SgTree t, int ind);
static PetscErrorCode Entry(Buf *b, SgTree v, int ind)
{
  PetscFunctionBegin;
  if (v->kind == SG_TREE_ARRAY) {
    PetscInt64 k = 0;
    PetscCall(PutS(b, "\n"));
    PetscCall(Indent(b, ind + 2));
    PetscCall(PutS(b, "\"@class\": \"np.ndarray\"\n"));
    PetscCall(Indent(b, ind + 2));
    PetscCall(PutS(b, "\"@is_variable\": true\n"));
    PetscCall(Indent(b, ind + 2));
    PetscCall(PutS(b, "\"@version\": 1\n"));
    PetscCall(Indent(b, ind + 2));
    PetscCall(PutS(b, "dtype: "));
    PetscCall(Quoted(b, v->s));
    PetscCall(PutS(b, "\n"));
    PetscCall(Indent(b, ind + 2));
    PetscCall(PutS(b, "value: "));
    PetscCall(ArrayValue(b, v, 0, &k));
    PetscCall(PutS(b, "\n"));
  } else if (Inline(v)) {
    PetscCall(PutS(b, " "));
    PetscCall(InlineValue(b, v));
    PetscCall(PutS(b, "\n"));
  } else {
    PetscCall(PutS(b, "\n"));
    PetscCall(Block(b, v, ind + 2));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Block(Buf *b, SgTree t, int ind)
{
  PetscFunctionBegin;
  for (PetscInt q = 0; q < t->n; q++) {
    PetscCall(Indent(b, ind));
    if (t->kind == SG_TREE_DICT) {
      PetscCall(Quoted(b, t->keys[q]));
      PetscCall(PutS(b, ":"));
    } else PetscCall(PutS(b, "-"));
    PetscCall(Entry(b, t->items[q], ind));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTreeEmitYAML(SgTree t, char **text, size_t *len)
{
  Buf b = {0};

  PetscFunctionBegin;
  PetscCheck(t->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "SgTreeEmitYAML: the root must be a dict");
  PetscCall(Block(&b, t, 0));
  *text = b.s;
  *len  = b.n;
  PetscFunctionReturn(PETSC_SUCCESS);
}
