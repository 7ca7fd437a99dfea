/* SgTree: an ordered document tree (null, bool, int, real, string, list, dict, and a numeric
   n-dimensional array) read from YAML or JSON text and written back as either.

   It carries DeePMD-kit's backend-independent model dictionary (surrogates/deepmd/interop.c): the
   same dictionary is YAML text with arrays inline ({"@class": "np.ndarray", "dtype", "value"}) or,
   in a .dp file, JSON text with arrays stored beside it (io/: sgdpfile.h). Arrays get their own node
   kind so that a million weights are one block of doubles, not a million nodes; dict keys keep their
   order (DeePMD-kit numbers the arrays of a .dp file in traversal order).

   YAML: libyaml (the deck reader's library); the accepted language is YAML's JSON-like core: block
   and flow collections, plain and quoted scalars; anchors, aliases, tags and multiple documents are
   refused. JSON: Jansson (Debian libjansson). Every error is one message naming the file and line. */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"

typedef enum { SG_TREE_NULL, SG_TREE_BOOL, SG_TREE_INT, SG_TREE_REAL, SG_TREE_STRING, SG_TREE_LIST, SG_TREE_DICT, SG_TREE_ARRAY } SgTreeKind;

typedef struct _n_SgTree *SgTree;
struct _n_SgTree {
  SgTreeKind kind;
  PetscBool  b;
  long long  i;
  double     r;
  char      *s;      /* string; dtype of an array ("float64", "float32", ...) */
  PetscInt   n;      /* list / dict entries */
  SgTree    *items;  /* list items, dict values */
  char     **keys;   /* dict keys */
  int        line;   /* 1-based source line (0: made in memory) */
  PetscInt   rank;   /* array */
  PetscInt64 dims[8], numel;
  double    *data;   /* array values, row-major */
};

PETSC_EXTERN PetscErrorCode SgTreeCreate(SgTreeKind, SgTree *);
PETSC_EXTERN PetscErrorCode SgTreeDestroy(SgTree *);
/* constructors for writing (the node is appended to a dict or list, which owns it) */
PETSC_EXTERN PetscErrorCode SgTreeDictAdd(SgTree dict, const char key[], SgTreeKind, SgTree *);
PETSC_EXTERN PetscErrorCode SgTreeListAdd(SgTree list, SgTreeKind, SgTree *);
PETSC_EXTERN PetscErrorCode SgTreeDictAddString(SgTree dict, const char key[], const char value[]);
PETSC_EXTERN PetscErrorCode SgTreeDictAddInt(SgTree dict, const char key[], long long value);
PETSC_EXTERN PetscErrorCode SgTreeDictAddReal(SgTree dict, const char key[], double value);
PETSC_EXTERN PetscErrorCode SgTreeDictAddBool(SgTree dict, const char key[], PetscBool value);
PETSC_EXTERN PetscErrorCode SgTreeDictAddNull(SgTree dict, const char key[]);
/* an array node: copies data (numel = product of dims) */
PETSC_EXTERN PetscErrorCode SgTreeDictAddArray(SgTree dict, const char key[], const char dtype[], PetscInt rank, const PetscInt64 dims[], const double *data);
PETSC_EXTERN PetscErrorCode SgTreeSetArray(SgTree node, const char dtype[], PetscInt rank, const PetscInt64 dims[], const double *data);

/* look-up: NULL when absent */
PETSC_EXTERN SgTree SgTreeGet(SgTree dict, const char key[]);

/* Parse YAML or JSON text (name: for messages). DeePMD-kit's inline arrays ({"@class": "np.ndarray",
   "dtype": ..., "value": nested lists}) become SG_TREE_ARRAY nodes; a ragged or non-numeric value
   is an error naming its line. */
PETSC_EXTERN PetscErrorCode SgTreeParseYAML(const char name[], const char *text, size_t len, SgTree *);
PETSC_EXTERN PetscErrorCode SgTreeParseJSON(const char name[], const char *text, size_t len, SgTree *);
/* Read a whole text file (at most maxbytes; larger is refused before reading). */
PETSC_EXTERN PetscErrorCode SgTreeReadText(const char path[], size_t maxbytes, char **text, size_t *len);
/* Emit: YAML with arrays inline as DeePMD-kit writes them (values with 17 significant digits: they
   read back bit for bit); JSON compact, arrays must have been replaced by strings first. Caller frees. */
PETSC_EXTERN PetscErrorCode SgTreeEmitYAML(SgTree, char **text, size_t *len);
PETSC_EXTERN PetscErrorCode SgTreeEmitJSON(SgTree, char **text);
