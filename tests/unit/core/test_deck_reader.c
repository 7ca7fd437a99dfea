/* surge's deck reader (src/base/deck.c) against PETSc's own YAML reader: for every deck named on
   the command line, both must put exactly the same options with exactly the same values into an
   options database, and the reader must know the line of every key. Exact string comparison: both
   readers copy the scalars libyaml gives them.

     test_deck_reader DECK.yaml [DECK.yaml ...] */
#include <string.h>
#include "sgsys.h"

static PetscErrorCode Compare(const char deck[], PetscInt *nopts)
{
  PetscOptions ref;
  PetscInt     N, M = 0;
  char       **names, **values;

  PetscFunctionBegin;
  PetscCall(PetscOptionsClear(NULL));
  PetscCall(SgDeckInsert(PETSC_COMM_WORLD, deck));
  PetscCall(PetscOptionsCreate(&ref));
  PetscCall(PetscOptionsInsertFileYAML(PETSC_COMM_WORLD, ref, deck, PETSC_TRUE));
  /* every option of PETSc's reading is in ours, with the same value and a deck location */
  PetscCall(PetscOptionsLeftGet(ref, &N, &names, &values));
  for (PetscInt i = 0; i < N; i++) {
    char      opt[600], mine[4096] = "";
    PetscBool set;
    PetscInt  line, col;
    PetscCall(PetscSNPrintf(opt, sizeof opt, "-%s", names[i]));
    PetscCall(PetscOptionsGetString(NULL, NULL, opt, mine, sizeof mine, &set));
    PetscCheck(set, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: PETSc's reader sets %s, surge's does not", deck, opt);
    PetscCheck(!strcmp(mine, values[i] ? values[i] : ""), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %s is '%s' in surge's reading, '%s' in PETSc's", deck, opt, mine, values[i] ? values[i] : "");
    PetscCall(SgDeckKeyLocation(opt, NULL, &line, &col));
    PetscCheck(line > 0 && col > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no deck line for %s", deck, opt);
  }
  *nopts = N;
  PetscCall(PetscOptionsLeftRestore(ref, &N, &names, &values));
  /* and ours has nothing more: count the options ours set that are still unread */
  {
    PetscInt Nall;
    PetscCall(PetscOptionsLeftGet(NULL, &Nall, &names, &values));
    for (PetscInt i = 0; i < Nall; i++) {
      PetscInt line, col;
      PetscCall(SgDeckKeyLocation(names[i], NULL, &line, &col));
      if (line > 0) M++;
    }
    PetscCall(PetscOptionsLeftRestore(NULL, &Nall, &names, &values));
  }
  PetscCheck(M == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: surge's reader sets %" PetscInt_FMT " option(s) PETSc's does not", deck, M);
  PetscCall(PetscOptionsDestroy(&ref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt total = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (int i = 1; i < argc; i++) {
    PetscInt n;
    PetscCall(Compare(argv[i], &n));
    PetscCheck(n > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no options read (is it a deck?)", argv[i]);
    total += n;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %d decks, %" PetscInt_FMT " options, identical to PETSc's reader, every key located\n", argc - 1, total));
  PetscCall(SgDeckDestroy());
  PetscCall(PetscFinalize());
  return 0;
}
