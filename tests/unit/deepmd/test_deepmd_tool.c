/* Helper for the deepmd scripts (not a test by itself):
     import OUT.h5 DIR...                       DeePMD-kit system dirs -> md_frames dataset
     dptest MODEL.h5 [-compress STEP] FILE.h5...  dp test-style RMSEs of a model on datasets */
#include <stdlib.h>
#include "../../../surrogates/deepmd/deepmd_train.h"
#include "sgdataset.h"
#include "sgdeepmd.h"

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: %s import OUT.h5 DIR... | dptest MODEL.h5 [-compress STEP] FILE.h5...", argv[0]);
  if (!strcmp(argv[1], "import")) PetscCall(SgDeepmdImport(PETSC_COMM_SELF, argc - 3, (const char *const *)argv + 3, argv[2], PETSC_TRUE));
  else if (!strcmp(argv[1], "dptest")) {
    SgDPModel      m;
    SgDPTestResult r;
    int            a = 3;
    char(*files)[PETSC_MAX_PATH_LEN];
    PetscCall(SgDPModelLoad(argv[2], &m));
    if (!strcmp(argv[3], "-compress")) {
      PetscCall(SgDeepmdCompress(m, atof(argv[4]), 0.5));
      a = 5;
    }
    PetscCall(PetscMalloc1(argc - a, &files));
    for (int i = a; i < argc; i++) PetscCall(PetscStrncpy(files[i - a], argv[i], PETSC_MAX_PATH_LEN));
    PetscCall(SgDPTest(m, argc - a, (const char(*)[PETSC_MAX_PATH_LEN])files, 0, PETSC_COMM_WORLD, &r));
    PetscCall(SgDPTestPrint(PETSC_COMM_WORLD, &r));
    PetscCall(PetscFree(files));
    PetscCall(SgDPModelDestroy(&m));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown command %s", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
