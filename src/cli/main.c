/* surge: command-line entry point.

     surge run      DECK.yaml [-opt value ...]   run one simulation
     surge info     FILE.h5                      what an output, checkpoint or dataset file holds
     surge dataset  import OUT.h5 DIR...         DeePMD-kit system directories -> one md_frames dataset
     surge dataset  export IN.h5 DIR [-set_size N]   an md_frames dataset -> a DeePMD-kit directory
     surge ensemble DECK.yaml [-opt value ...]   run perturbed members, gather one dataset
     surge train    DECK.yaml [-opt value ...]   train a surrogate on datasets, write its model file

   All jobs run under mpiexec -n P; rank 0 prints. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "sgsim.h"
#include "sgensemble.h"
#include "sgsurrogate.h"
#include "sgdataset.h"
#include "sgoutput.h"

PETSC_EXTERN PetscErrorCode SgRegisterAll(void);
PETSC_EXTERN PetscErrorCode SgInfoFile(MPI_Comm, const char file[]);

static const char usage[] = "usage: surge run DECK.yaml [-option value ...]\n"
                            "       surge ensemble DECK.yaml [-option value ...]\n"
                            "       surge train DECK.yaml [-option value ...]\n"
                            "       surge info FILE.h5\n"
                            "       surge dataset import OUT.h5 DEEPMD_DIR [DEEPMD_DIR ...] [-overwrite]\n"
                            "       surge dataset export IN.h5 DEEPMD_DIR [-set_size N]\n"
                            "       surge --version\n"
                            "Options come from the deck (YAML; section 'vlasov: {cfl: 0.8}' is -vlasov_cfl 0.8) and\n"
                            "the command line, which wins. 'surge run DECK.yaml -help' lists every option.\n";

static PetscErrorCode RunSim(SgSim sim, int *argc, char ***argv, const char deck[])
{
  PetscBool help;

  PetscFunctionBegin;
  PetscCall(SgSimSetDeck(sim, deck, *argc, *argv));
  PetscCall(SgSimSetFromOptions(sim));
  PetscCall(SgSimSetUp(sim));
  PetscCall(SgSimHelpOnly(sim, &help));
  if (help) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge: options listed above; nothing was run.\n"));
  else PetscCall(SgSimRun(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run is destroyed on the error path too (its error was already reported): a refused run frees
   what its set-up allocated (e.g. the vlasov FFTW work arrays) instead of leaking it at exit. */
static PetscErrorCode Run(int *argc, char ***argv, const char deck[])
{
  SgSim          sim;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(SgSimCreate(PETSC_COMM_WORLD, &sim));
  ierr = RunSim(sim, argc, argv, deck);
  if (!ierr) PetscCall(SgSimDestroy(&sim));
  else (void)SgSimDestroy(&sim); /* keep the first error */
  PetscFunctionReturn(ierr);
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
    const char *const suffix[] = {".h5"};
    PetscCall(SgSurrogateSetUp(sur));
    PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, deck));
    /* the model is written after training: a bad path must not cost the whole training */
    PetscCall(SgOutputCheckPath(PETSC_COMM_WORLD, "-train_output", output, 1, suffix));
    PetscCall(SgSurrogateTrain(sur));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.h5", output));
    PetscCall(SgSurrogateSave(sur, path));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Wrote model %s\n", path));
  }
  PetscCall(SgSurrogateDestroy(&sur));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* surge dataset import|export: DeePMD-kit data directories to and from surge's md_frames schema. */
static PetscErrorCode Dataset(int argc, char **argv)
{
  const char *verb = argc > 2 ? argv[2] : "";
  PetscBool   overwrite = PETSC_FALSE;
  PetscInt    set_size  = 0;
  char       *paths[256];
  int         npaths = 0;

  PetscFunctionBegin;
  /* positional arguments are the words that are not options (or option values) */
  for (int i = 3; i < argc; i++) {
    if (argv[i][0] == '-') {
      if (!strcmp(argv[i], "-set_size")) i++;
      continue;
    }
    PetscCheck(npaths < 256, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge dataset: at most 255 directories at once");
    paths[npaths++] = argv[i];
  }
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "surge dataset", "SgDataset");
  PetscCall(SgOptionsBool("-overwrite", "import: replace OUT.h5 if it exists", overwrite, &overwrite, NULL));
  PetscCall(SgOptionsInt("-set_size", "export: frames per set.NNN directory (0: one set)", set_size, &set_size, NULL, 0, PETSC_MAX_INT));
  PetscOptionsEnd();
  PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, NULL));
  if (!strcmp(verb, "import")) {
    PetscCheck(npaths >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge dataset import OUT.h5 DIR [DIR ...]: give the output file and at least one DeePMD-kit system directory");
    PetscCall(SgDeepmdImport(PETSC_COMM_WORLD, npaths - 1, (const char *const *)paths + 1, paths[0], overwrite));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Imported %d DeePMD-kit director%s into %s\n", npaths - 1, npaths == 2 ? "y" : "ies", paths[0]));
  } else if (!strcmp(verb, "export")) {
    PetscCheck(npaths == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge dataset export IN.h5 DIR: give the dataset and the output directory");
    PetscCall(SgDeepmdExport(PETSC_COMM_WORLD, paths[0], paths[1], set_size));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Exported %s to %s\n", paths[0], paths[1]));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge dataset: unknown verb '%s' (use import or export)", verb);
  PetscFunctionReturn(PETSC_SUCCESS);
}

char *openblas_get_corename(void); /* OpenBLAS (configure requires it) */

/* OpenBLAS (0.3.21, Debian 12) names a CPU whose cpuid model it does not know "Prescott" and runs its
   SSE3 kernels: on this project's VMs, which hide the model, DGEMM ran at 4.8 instead of 23.8 GFLOP/s
   and a Deep Potential training step 30 % slower than with the AVX-512 kernels. When it fell back like
   that on a CPU with AVX-512 or AVX2 and the user has not chosen (OPENBLAS_CORETYPE unset), name the
   core type and re-execute once, before MPI and PETSc start: OpenBLAS reads the variable when it is
   loaded. SURGE_KEEP_BLAS_CORE=1 turns this off. */
static void FixOpenBLASCore(char **argv)
{
#if defined(__x86_64__)
  if (getenv("OPENBLAS_CORETYPE") || getenv("SURGE_KEEP_BLAS_CORE")) return;
  const char *core = openblas_get_corename();
  if (!core || strcasecmp(core, "Prescott")) return;
  const char *want = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : NULL;
  if (!want || setenv("OPENBLAS_CORETYPE", want, 1)) return;
  execv("/proc/self/exe", argv); /* returns only on failure: carry on with the fallback kernels */
  unsetenv("OPENBLAS_CORETYPE");
#else
  (void)argv;
#endif
}

int main(int argc, char **argv)
{
  const char *job = argc > 1 ? argv[1] : "";

  FixOpenBLASCore(argv);
  if (!strcmp(job, "--version") || !strcmp(job, "version")) {
    printf("surge %s (OpenBLAS kernels: %s)\n", SURGE_VERSION, openblas_get_corename());
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
  if (!strcmp(job, "dataset")) {
    if (SgInitialize(&argc, &argv, NULL, usage)) return 1;
    return Finish(Dataset(argc, argv));
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
