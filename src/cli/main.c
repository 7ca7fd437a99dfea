/* surge: command-line entry point.

     surge run      DECK.yaml [-opt value ...]   run one simulation
     surge info     FILE.h5                      what an output, checkpoint or dataset file holds
     surge ensemble DECK.yaml [-opt value ...]   run perturbed members, gather one dataset
     surge train    DECK.yaml [-opt value ...]   train a surrogate on datasets, write its model file

   All jobs run under mpiexec -n P; rank 0 prints. */
#include <string.h>
#include "sgsim.h"
#include "sgensemble.h"
#include "sgsurrogate.h"

PETSC_EXTERN PetscErrorCode SgRegisterAll(void);
PETSC_EXTERN PetscErrorCode SgInfoFile(MPI_Comm, const char file[]);

static const char usage[] = "usage: surge run DECK.yaml [-option value ...]\n"
                            "       surge ensemble DECK.yaml [-option value ...]\n"
                            "       surge train DECK.yaml [-option value ...]\n"
                            "       surge info FILE.h5\n"
                            "       surge --version\n"
                            "Options come from the deck (YAML; section 'vlasov: {cfl: 0.8}' is -vlasov_cfl 0.8) and\n"
                            "the command line, which wins. 'surge run DECK.yaml -help' lists every option.\n";

static PetscErrorCode Run(int *argc, char ***argv, const char deck[])
{
  SgSim     sim;
  PetscBool help;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(SgSimCreate(PETSC_COMM_WORLD, &sim));
  PetscCall(SgSimSetDeck(sim, deck, *argc, *argv));
  PetscCall(SgSimSetFromOptions(sim));
  PetscCall(SgSimSetUp(sim));
  PetscCall(SgSimHelpOnly(sim, &help));
  if (help) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge: options listed above; nothing was run.\n"));
  else PetscCall(SgSimRun(sim));
  PetscCall(SgSimDestroy(&sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A user-input error is raised on every rank of the run's communicator, so every rank can shut
   down cleanly with a plain message; anything else may have stopped one rank only, and only an
   abort is safe then. */
static int Finish(PetscErrorCode ierr)
{
  if (!ierr) {
    ierr = SgFinalize();
    return ierr ? 1 : 0;
  }
  if (ierr == PETSC_ERR_USER_INPUT || ierr == PETSC_ERR_FILE_OPEN || ierr == PETSC_ERR_FILE_UNEXPECTED || ierr == PETSC_ERR_FILE_READ || ierr == PETSC_ERR_FP) {
    (void)PetscFinalize();
    return 1;
  }
  PETSCABORT(PETSC_COMM_WORLD, ierr);
  return 1;
}

static PetscErrorCode Ensemble(int *argc, char ***argv, const char deck[])
{
  SgEnsemble ens;
  PetscBool  help;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(SgEnsembleCreate(PETSC_COMM_WORLD, &ens));
  PetscCall(SgEnsembleSetDeck(ens, deck, *argc, *argv));
  PetscCall(SgEnsembleSetFromOptions(ens));
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge: ensemble options listed above; 'surge run DECK -help' lists the members' options. Nothing was run.\n"));
  else PetscCall(SgEnsembleRun(ens));
  PetscCall(SgEnsembleDestroy(&ens));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* surge train: deck section train: {surrogate: TYPE, output: BASE}; the type's own section names
   its data and hyperparameters. Everything is validated before training starts. */
static PetscErrorCode Train(int *argc, char ***argv, const char deck[])
{
  SgSurrogate sur;
  char        type[64] = "", output[PETSC_MAX_PATH_LEN] = "", path[PETSC_MAX_PATH_LEN + 8];
  PetscBool   help, set;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscOptionsBegin(PETSC_COMM_WORLD, "train_", "Surrogate training (deck section train:)", "SgSurrogate");
  PetscCall(SgOptionsString("-surrogate", "Surrogate type to train (e.g. deepmd)", type, type, sizeof type, &set));
  PetscCall(SgOptionsString("-output", "Model file base name: writes BASE.h5", "model", output, sizeof output, NULL));
  PetscOptionsEnd();
  PetscCheck(help || type[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "No surrogate chosen: set 'train: {surrogate: TYPE}' in the deck (or -train_surrogate TYPE)");
  PetscCall(SgSurrogateCreate(PETSC_COMM_WORLD, &sur));
  if (type[0]) {
    PetscCall(SgSurrogateSetType(sur, type));
    PetscCall(SgSurrogateSetFromOptions(sur));
  }
  if (help) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge: options listed above; nothing was trained.\n"));
  else {
    PetscCall(SgSurrogateSetUp(sur));
    PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, deck));
    PetscCall(SgSurrogateTrain(sur));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.h5", output));
    PetscCall(SgSurrogateSave(sur, path));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Wrote model %s\n", path));
  }
  PetscCall(SgSurrogateDestroy(&sur));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const char *job = argc > 1 ? argv[1] : "";

  if (!strcmp(job, "--version") || !strcmp(job, "version")) {
    printf("surge %s\n", SURGE_VERSION);
    return 0;
  }
  if (!strcmp(job, "run") || !strcmp(job, "ensemble") || !strcmp(job, "train")) {
    if (argc < 3 || argv[2][0] == '-') {
      fprintf(stderr, "surge %s: missing deck file\n%s", job, usage);
      return 1;
    }
    if (SgInitialize(&argc, &argv, argv[2], usage)) return 1;
    if (!strcmp(job, "run")) return Finish(Run(&argc, &argv, argv[2]));
    if (!strcmp(job, "ensemble")) return Finish(Ensemble(&argc, &argv, argv[2]));
    return Finish(Train(&argc, &argv, argv[2]));
  }
  if (!strcmp(job, "info")) {
    if (argc < 3) {
      fprintf(stderr, "surge info: missing file\n%s", usage);
      return 1;
    }
    if (SgInitialize(&argc, &argv, NULL, usage)) return 1;
    return Finish(SgInfoFile(PETSC_COMM_WORLD, argv[2]));
  }
  fprintf(stderr, "%s%s", job[0] ? "surge: unknown job '" : "", job[0] ? job : "");
  fprintf(stderr, "%s%s", job[0] ? "'\n" : "", usage);
  return 1;
}
