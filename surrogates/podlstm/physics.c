/* The physics a POD-LSTM model was trained for, and the refusal of a solver outside it.

   A field.advance provider is told the solver's physical parameters (SgFieldProviderInfo: param_name,
   param, the domain lo/hi); a model must know the values of its training data to be checked against
   them, as MeshfreeFlowNet's superres provider checks nu, kappa and the box. The data are datasets of
   surge ensemble, whose provenance holds the deck that made them: the record is the numeric keys of
   that deck's solver section ("rayleigh=5e5;prandtl=1;length=4,1" for boussinesq: sim: {solver: S},
   S: {key: number or [numbers]}), less the keys the ensemble varies across members (ensemble: {vary:
   [S_key]}), which have no one value. The record is the model attribute trained_physics; a model
   without it (written before it existed) is not checked.
   Datasets surge ensemble writes now carry the record itself (provenance item "physics", the options
   after command-line overrides: SgConfigRecord); data.c reads the deck only for older datasets, whose
   record gives the deck's value of an option overridden on the command line. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "sgpodlstm.h"

static yaml_node_t *MapGet(yaml_document_t *doc, yaml_node_t *map, const char key[])
{
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) return yaml_document_get_node(doc, p->value);
  }
  return NULL;
}

static PetscBool IsNumber(const char s[])
{
  char *end;
  if (!s[0]) return PETSC_FALSE;
  (void)strtod(s, &end);
  return *end ? PETSC_FALSE : PETSC_TRUE;
}

/* whether ensemble: {vary: [...]} holds "<solver>_<key>" */
static PetscBool Varied(yaml_document_t *doc, yaml_node_t *root, const char solver[], const char key[])
{
  yaml_node_t *vary = MapGet(doc, MapGet(doc, root, "ensemble"), "vary");
  char         full[256];
  if (!vary) return PETSC_FALSE;
  snprintf(full, sizeof full, "%s_%s", solver, key);
  if (vary->type == YAML_SCALAR_NODE) return strstr((const char *)vary->data.scalar.value, full) ? PETSC_TRUE : PETSC_FALSE;
  if (vary->type != YAML_SEQUENCE_NODE) return PETSC_FALSE;
  for (yaml_node_item_t *i = vary->data.sequence.items.start; i < vary->data.sequence.items.top; i++) {
    yaml_node_t *v = yaml_document_get_node(doc, *i);
    if (v && v->type == YAML_SCALAR_NODE && !strcmp((const char *)v->data.scalar.value, full)) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

PetscErrorCode SgPodLstmPhysicsFromDeck(const char deck[], char rec[], size_t len)
{
  yaml_parser_t   parser;
  yaml_document_t doc;
  yaml_node_t    *root, *solver, *sec;

  PetscFunctionBegin;
  rec[0] = 0;
  if (!deck || !deck[0]) PetscFunctionReturn(PETSC_SUCCESS);
  if (!yaml_parser_initialize(&parser)) PetscFunctionReturn(PETSC_SUCCESS);
  yaml_parser_set_input_string(&parser, (const unsigned char *)deck, strlen(deck));
  if (!yaml_parser_load(&parser, &doc)) { /* not a deck we can read: nothing recorded */
    yaml_parser_delete(&parser);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  root   = yaml_document_get_root_node(&doc);
  solver = MapGet(&doc, MapGet(&doc, root, "sim"), "solver");
  sec    = solver && solver->type == YAML_SCALAR_NODE ? MapGet(&doc, root, (const char *)solver->data.scalar.value) : NULL;
  if (sec && sec->type == YAML_MAPPING_NODE) {
    const char *sname = (const char *)solver->data.scalar.value;
    size_t      used  = (size_t)snprintf(rec, len, "solver=%s", sname);
    for (yaml_node_pair_t *p = sec->data.mapping.pairs.start; p < sec->data.mapping.pairs.top && used < len; p++) {
      yaml_node_t *k = yaml_document_get_node(&doc, p->key), *v = yaml_document_get_node(&doc, p->value);
      char         val[256] = "";
      PetscBool    ok       = PETSC_TRUE;
      if (!k || !v || k->type != YAML_SCALAR_NODE || Varied(&doc, root, sname, (const char *)k->data.scalar.value)) continue;
      if (v->type == YAML_SCALAR_NODE) {
        ok = IsNumber((const char *)v->data.scalar.value);
        snprintf(val, sizeof val, "%s", (const char *)v->data.scalar.value);
      } else if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = v->data.sequence.items.start; ok && i < v->data.sequence.items.top; i++) {
          yaml_node_t *e = yaml_document_get_node(&doc, *i);
          ok             = (PetscBool)(e && e->type == YAML_SCALAR_NODE && IsNumber((const char *)e->data.scalar.value) && strlen(val) + e->data.scalar.length + 2 < sizeof val);
          if (ok) snprintf(val + strlen(val), sizeof val - strlen(val), "%s%s", val[0] ? "," : "", (const char *)e->data.scalar.value);
        }
      } else ok = PETSC_FALSE;
      if (ok && val[0]) used += (size_t)snprintf(rec + used, len - used, ";%s=%s", (const char *)k->data.scalar.value, val);
    }
    if (used >= len) rec[0] = 0; /* too long to keep whole: record nothing rather than a cut list */
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the values of `key` in a record (at most cap; *n = 0 when absent) */
static void RecordGet(const char rec[], const char key[], PetscInt cap, PetscReal v[], PetscInt *n)
{
  const size_t kl = strlen(key);
  *n              = 0;
  for (const char *p = rec; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
    if (strncmp(p, key, kl) || p[kl] != '=') continue;
    for (const char *q = p + kl + 1; *n < cap;) {
      char *end;
      v[(*n)++] = strtod(q, &end);
      if (*end != ',') break;
      q = end + 1;
    }
    return;
  }
}

PetscErrorCode SgPodLstmPhysicsCheck(const char model[], const char rec[], const SgFieldProviderInfo *info)
{
  PetscReal v[4];
  PetscInt  n;

  PetscFunctionBegin;
  if (!rec[0]) {
    PetscCall(PetscInfo(NULL, "podlstm: model %s does not record the physics of its training data: not checked\n", model));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt k = 0; k < info->nparam; k++) {
    const PetscReal x = info->param[k];
    RecordGet(rec, info->param_name[k], 1, v, &n);
    if (!n) continue;
    PetscCheck(PetscAbsReal(x - v[0]) <= 1e-9 * PetscMax(PetscAbsReal(v[0]), PetscAbsReal(x)), info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s was trained on data at %s = %g; the solver has %s = %g: set -%s%s %g, or train a model on data at %s = %g (surge ensemble, then surge train with podlstm)", model, info->param_name[k], (double)v[0], info->param_name[k], (double)x, info->prefix, info->param_name[k], (double)v[0], info->param_name[k], (double)x);
  }
  RecordGet(rec, "length", 2, v, &n);
  if (n == 2 && info->hi[1] > info->lo[1] && info->hi[2] > info->lo[2]) { /* the box Lx, Lz (boussinesq's length: [Lx, Lz]) */
    const PetscReal Lx = info->hi[2] - info->lo[2], Lz = info->hi[1] - info->lo[1];
    PetscCheck(PetscAbsReal(Lx - v[0]) <= 1e-9 * v[0] && PetscAbsReal(Lz - v[1]) <= 1e-9 * v[1], info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s was trained on a box Lx x Lz = %g x %g; the solver's is %g x %g: set -%slength %g,%g, or train a model on data of this box (surge ensemble, then surge train with podlstm)", model, (double)v[0], (double)v[1], (double)Lx, (double)Lz, info->prefix, (double)v[0], (double)v[1]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
