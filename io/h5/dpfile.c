/* DeePMD-kit's .dp model file (sgdpfile.h) on SgH5File. */
#include <string.h>
#include "sgdpfile.h"
#include "sgh5file.h"

#define SG_DP_JSON_MAX (64 << 20) /* the dictionary without its arrays: kilobytes in practice */

/* DeePMD-kit marks as variables everything below an "@variables" key (traverse_model_dict) */
static PetscErrorCode Resolve(SgH5File f, SgTree t, PetscBool var)
{
  PetscFunctionBegin;
  if (t->kind == SG_TREE_DICT) {
    for (PetscInt q = 0; q < t->n; q++) PetscCall(Resolve(f, t->items[q], (PetscBool)(var || !strcmp(t->keys[q], "@variables"))));
  } else if (t->kind == SG_TREE_LIST) {
    for (PetscInt q = 0; q < t->n; q++) PetscCall(Resolve(f, t->items[q], var));
  } else if (var && t->kind == SG_TREE_STRING) {
    const char *path;
    PetscInt    rank;
    PetscInt64  dims[SG_H5_MAXDIM], n = 1;
    PetscBool   has;
    double     *v;
    char        name[256];

    PetscCall(SgH5FileGetPath(f, &path));
    PetscCall(PetscStrncpy(name, t->s, sizeof name));
    PetscCheck(strlen(t->s) < sizeof name, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: the JSON names an array '%.40s...' that is no dataset name", path, t->s);
    PetscCall(SgH5FileHas(f, name, &has));
    PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: the JSON names array %s, which the file does not hold (a damaged or truncated .dp file)", path, name);
    PetscCall(SgH5FileGetDims(f, name, &rank, dims));
    for (PetscInt k = 0; k < rank; k++) n *= dims[k];
    PetscCheck(n <= ((PetscInt64)1 << 31), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: dataset %s has %lld values, more than a model holds", path, name, (long long)n);
    PetscCall(PetscMalloc1(PetscMax(n, 1), &v));
    PetscCall(SgH5FileRead(f, name, SG_H5_DOUBLE, n, v));
    PetscCall(SgTreeSetArray(t, "float64", rank, dims, v));
    PetscCall(PetscFree(v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPFileRead(const char path[], SgTree *out)
{
  SgH5File  f;
  PetscBool has;
  char     *json;

  PetscFunctionBegin;
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileHasAttr(f, "/", "json", &has));
  if (!has) {
    PetscCall(SgH5FileClose(&f));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is no DeePMD-kit .dp model: it has no root attribute 'json' (write one with dp convert-backend MODEL OUT.dp)", path);
  }
  PetscCall(SgH5FileReadAttrText(f, "/", "json", SG_DP_JSON_MAX, &json));
  {
    char name[PETSC_MAX_PATH_LEN + 16];
    PetscCall(PetscSNPrintf(name, sizeof name, "%s (attribute json)", path));
    PetscCall(SgTreeParseJSON(name, json, strlen(json), out));
  }
  PetscCall(PetscFree(json));
  PetscCheck((*out)->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: attribute json is not a JSON object (no DeePMD-kit model)", path);
  PetscCall(Resolve(f, *out, PETSC_FALSE));
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Store(SgH5File f, SgTree t, int *counter)
{
  PetscFunctionBegin;
  if (t->kind == SG_TREE_DICT || t->kind == SG_TREE_LIST) {
    for (PetscInt q = 0; q < t->n; q++) PetscCall(Store(f, t->items[q], counter));
  } else if (t->kind == SG_TREE_ARRAY) {
    char name[32];
    PetscCall(PetscSNPrintf(name, sizeof name, "/variable_%04d", (*counter)++));
    PetscCall(SgH5FileWrite(f, name, SG_H5_DOUBLE, t->rank, t->dims, t->data));
    PetscCall(PetscFree(t->data));
    PetscCall(PetscFree(t->s));
    PetscCall(PetscStrallocpy(name, &t->s));
    t->kind = SG_TREE_STRING;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPFileWrite(const char path[], SgTree t)
{
  SgH5File f;
  int      counter = 0;
  char    *json;

  PetscFunctionBegin;
  PetscCall(SgH5FileCreate(path, SG_FILE_DP, &f));
  { /* a failure part-way leaves no PATH.tmp behind */
    PetscErrorCode ierr = Store(f, t, &counter);
    if (!ierr) ierr = SgTreeEmitJSON(t, &json);
    if (!ierr) {
      ierr = SgH5FileWriteAttrText(f, "/", "json", json);
      PetscCall(PetscFree(json));
    }
    if (ierr) PetscCall(SgH5FileDiscard(&f));
    PetscCall(ierr);
  }
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}
