/* The deck reader alone on many files: for each file, SgDeckInsert either accepts it or refuses it
   with a user-input error; anything else (another error code, a crash, a sanitizer report) is a bug.
   One line per file: "accept FILE", "refuse FILE", or "BUG FILE code N"; tests/fuzz/fuzz.py --reader
   drives it with mutated decks (no solver runs, so a hundred thousand cases take a minute).

     test_deck_parse FILE [FILE ...] */
#include "sgsys.h"

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* quiet: the verdict is the code */
  for (int i = 1; i < argc; i++) {
    PetscErrorCode e = SgDeckInsert(PETSC_COMM_WORLD, argv[i]);
    if (!e) printf("accept %s\n", argv[i]);
    else if (e == PETSC_ERR_USER_INPUT || e == PETSC_ERR_FILE_OPEN) printf("refuse %s\n", argv[i]);
    else printf("BUG %s code %d\n", argv[i], (int)e);
    PetscCall(PetscOptionsClear(NULL)); /* each file starts from an empty database */
  }
  PetscCall(PetscPopErrorHandler());
  PetscCall(SgDeckDestroy());
  PetscCall(PetscFinalize());
  return 0;
}
