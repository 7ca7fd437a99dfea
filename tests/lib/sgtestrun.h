/* `surge run` for test programs that add test-only types (providers, surrogates) before the run:
   main(argc, argv) { return SgTestRun(argc, argv, "test_x", RegisterMine); } runs DECK.yaml [-option
   value ...] exactly as bin/surge run does, after SgRegisterAll() and register(). Header-only: each
   test program is one file (the Makefile builds every tests/.../test_*.c alone). */
#pragma once
#include "sgsim.h"

PETSC_EXTERN PetscErrorCode SgRegisterAll(void);

static PetscErrorCode SgTestRunSim(int argc, char **argv, const char deck[], PetscErrorCode (*reg)(void))
{
  SgSim sim;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(reg());
  PetscCall(SgSimCreate(PETSC_COMM_WORLD, &sim));
  PetscCall(SgSimSetDeck(sim, deck, argc, argv));
  PetscCall(SgSimSetFromOptions(sim));
  PetscCall(SgSimSetUp(sim));
  PetscCall(SgSimRun(sim));
  PetscCall(SgSimDestroy(&sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int SgTestRun(int argc, char **argv, const char name[], PetscErrorCode (*reg)(void))
{
  char usage[256];

  if (argc < 2) {
    fprintf(stderr, "usage: %s DECK.yaml [-option value ...]\n", name);
    return 1;
  }
  snprintf(usage, sizeof usage, "%s DECK.yaml [-option value ...]", name);
  if (SgInitialize(&argc, &argv, argv[1], usage)) return 1;
  if (SgTestRunSim(argc, argv, argv[1], reg)) {
    (void)SgFinalize(); /* commits BASE.log too */
    return 1;
  }
  return SgFinalize() ? 1 : 0;
}
