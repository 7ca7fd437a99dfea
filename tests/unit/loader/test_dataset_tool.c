/* Small command-line front end to the dataset C API, standing in for the future
   `surge dataset import/export` and `surge info` (docs/datasets.md):
     test_dataset_tool import OUT.h5 DIR [DIR ...]     DeePMD-kit system dirs -> md_frames file
     test_dataset_tool export IN.h5 DIR [SET_SIZE]      md_frames file -> DeePMD-kit system dir
     test_dataset_tool info FILE.h5                     validate and describe
   Errors go to stderr as PETSc messages and the exit code is nonzero. */
#include "sgdataset.h"

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: %s import OUT.h5 DIR... | export IN.h5 DIR [SET_SIZE] | info FILE.h5", argv[0]);
  if (!strcmp(argv[1], "import")) {
    PetscCheck(argc >= 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "import OUT.h5 DIR [DIR ...]");
    PetscCall(SgDeepmdImport(PETSC_COMM_SELF, argc - 3, (const char *const *)argv + 3, argv[2], PETSC_TRUE));
  } else if (!strcmp(argv[1], "export")) {
    PetscCheck(argc >= 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "export IN.h5 DIR [SET_SIZE]");
    PetscCall(SgDeepmdExport(PETSC_COMM_SELF, argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 0));
  } else if (!strcmp(argv[1], "info")) {
    SgDataset ds;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, argv[2], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetView(ds, PETSC_VIEWER_STDOUT_SELF));
    PetscCall(SgDatasetClose(&ds));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown command '%s' (import, export, info)", argv[1]);
  PetscCall(PetscFinalize());
  return 0;
}
