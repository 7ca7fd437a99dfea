/* surge: command-line entry point.

     surge run      DECK.yaml [-opt value ...]   run one simulation
     surge info     FILE.h5                      what an output, checkpoint or dataset file holds
     surge dataset  import OUT.h5 DIR...         DeePMD-kit system directories -> one md_frames dataset
     surge dataset  export IN.h5 DIR [-set_size N]   an md_frames dataset -> a DeePMD-kit directory
     surge ensemble DECK.yaml [-opt value ...]   run perturbed members, gather one dataset
     surge train    DECK.yaml [-opt value ...]   train a surrogate on datasets, write its model file
     surge model    test|compress|info|devi ...  what dp test / dp compress / dp model_devi do, on model files
                    import|export ...            DeePMD-kit's .dp/.yaml models in and out (dp convert-backend)

   All jobs run under mpiexec -n P; rank 0 prints. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "sgsim.h"
#include "sgensemble.h"
#include "sgsurrogate.h"
#include "sgdataset.h"
#include "sgdeepmd.h" /* surge model: the Deep Potential tools */
#include "sgoutput.h"
#include "sgwrite.h"
#include "sgcli.h"

PETSC_EXTERN PetscErrorCode SgRegisterAll(void);
PETSC_EXTERN PetscErrorCode SgInfoFile(MPI_Comm, const char file[]);

static const char usage[] = "usage: surge run DECK.yaml [-option value ...]\n"
                            "       surge ensemble DECK.yaml [-option value ...]\n"
                            "       surge train DECK.yaml [-option value ...]\n"
                            "       surge info FILE.h5\n"
                            "       surge dataset import OUT.h5 DEEPMD_DIR [DEEPMD_DIR ...] [-overwrite]\n"
                            "       surge dataset export IN.h5 DEEPMD_DIR [-set_size N]\n"
                            "       surge model test MODEL.h5 DATA.h5 ... [-detail PREFIX] | compress MODEL.h5 OUT.h5 [-step S]\n"
                            "       surge model info MODEL.h5 | devi MODEL1.h5 MODEL2.h5 ... TRAJ.h5md OUT\n"
                            "       surge model import IN.dp|IN.yaml OUT.h5 | export IN.h5 OUT.dp|OUT.yaml  (DeePMD-kit's format)\n"
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

/* A user-input error ends with one line on every rank, even one raised on a single rank while the
   others wait in a collective (SgErrorFinish, src/base/agree.c); anything else is a bug that may
   have stopped one rank only, and only an abort is safe then. */
static int Finish(PetscErrorCode ierr)
{
  if (!ierr) {
    ierr = SgFinalize();
    return ierr ? 1 : 0;
  }
  if (SgErrorIsUserClass(ierr)) return SgErrorFinish(); /* one line, no rank left waiting */
  SgTermLogCrash(); /* a bug: PETSc's traceback is in BASE.log; no BASE.log.tmp stays behind */
  SgErrorRunOnExit(); /* nor BASE.lock */
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

/* The training proper, under the output's lock: set-up checks, train, write BASE.h5. */
static PetscErrorCode TrainLocked(SgSurrogate sur, const char deck[], const char output[])
{
  const char *const suffix[] = {".h5"};
  char              path[PETSC_MAX_PATH_LEN + 8];

  PetscFunctionBegin;
  PetscCall(SgSurrogateSetUp(sur));
  PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, deck));
  /* the model is written after training: a bad path must not cost the whole training */
  PetscCall(SgOutputCheckPath(PETSC_COMM_WORLD, "-train_output", output, 1, suffix));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s.h5", output));
  PetscCall(SgDatasetCheckNotOverwritten(PETSC_COMM_WORLD, "-train_output", path)); /* e.g. the data itself */
  PetscCall(SgWriteCheck(PETSC_COMM_WORLD, "-train_output", path, SG_FILE_MODEL));   /* e.g. another kind's output: refused now, not after training */
  PetscCall(SgRunLogOpen(PETSC_COMM_WORLD, "-train_output", output, PETSC_FALSE)); /* BASE.log: the training's terminal output */
  PetscCall(SgStopSignalSetCheckpointBase(output)); /* a signal stop without save_ckpt writes BASE.chk.h5 */
  PetscCall(SgSurrogateTrain(sur));
  if (!SgStopSignalCaught()) { /* stopped by a signal: the checkpoint is written, the model comes with the restart */
    PetscCall(SgSurrogateSave(sur, path));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Wrote model %s\n", path));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* surge train: deck section train: {surrogate: TYPE, output: BASE}; the type's own section names
   its data and hyperparameters. Everything is validated before training starts. */
static PetscErrorCode Train(int *argc, char ***argv, const char deck[])
{
  SgSurrogate sur;
  char        type[64] = "", output[PETSC_MAX_PATH_LEN] = "";
  PetscBool   help, set;
  int         lockfd = -1;

  PetscFunctionBegin;
  PetscCall(SgRegisterAll());
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscOptionsBegin(PETSC_COMM_WORLD, "train_", "Surrogate training (deck section train:)", "SgSurrogate");
  PetscCall(SgOptionsString("-surrogate", "Surrogate type to train (e.g. deepmd)", type, type, sizeof type, &set));
  PetscCall(SgOptionsPath("-output", "Model file base name: writes BASE.h5", SG_PATH_OUT_BASE, "model", output, sizeof output, NULL));
  PetscOptionsEnd();
  PetscCheck(help || type[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "No surrogate chosen: set 'train: {surrogate: TYPE}' in the deck (or -train_surrogate TYPE)");
  PetscCall(SgSurrogateCreate(PETSC_COMM_WORLD, &sur));
  if (type[0]) {
    PetscCall(SgSurrogateSetType(sur, type));
    PetscCall(SgSurrogateSetFromOptions(sur));
  }
  if (help) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge: options listed above; nothing was trained.\n"));
  else {
    PetscErrorCode ierr;
    if (output[0]) PetscCall(SgWriteLockAcquire(PETSC_COMM_WORLD, "-train_output", output, &lockfd)); /* one job per output name, before any work */
    ierr = TrainLocked(sur, deck, output);
    /* released on a refusal too: a refused job leaves no BASE.lock (it wrote nothing else either) */
    SgWriteLockRelease(output, &lockfd);
    PetscCall(ierr);
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

/* The files a model command reads are the run's inputs (sgwrite.h (a)): no output may replace them,
   e.g. `surge model compress m.h5 m.h5` or `surge model devi m1 m2 t.h5md t.h5md`. All but the last
   positional argument are read, but for test, which reads them all, and info. */
static PetscErrorCode RegisterModelInputs(const char verb[], int npaths, char *paths[])
{
  PetscBool all = (PetscBool)(!strcmp(verb, "test") || !strcmp(verb, "info"));

  PetscFunctionBegin;
  for (int i = 0; i < (all ? npaths : npaths - 1); i++) PetscCall(SgInputRegister(paths[i], SG_PATH_IN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An output that is one of the registered inputs, refused on every rank alike (for a writer that
   does not go through SgWriteCheck itself). */
static PetscErrorCode RefuseInputAsOutput(const char what[], const char path[])
{
  PetscBool   isin;
  SgPathRole  role;
  const char *name;

  PetscFunctionBegin;
  PetscCall(SgInputFind(path, &isin, &role, &name));
  PetscCheck(!isin, PETSC_COMM_WORLD, PETSC_ERR_FILE_OPEN, "%s '%s' is %s, an input of this run: choose another name for the output", what, path, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* surge model test|compress|info|devi: the user commands on model files (Deep Potential models, as
   DeePMD-kit's dp test, dp compress, model summary, dp model_devi). */
static PetscErrorCode Model(int argc, char **argv)
{
  const char *verb = argc > 2 ? argv[2] : "";
  char       *paths[256], detail[PETSC_MAX_PATH_LEN] = "";
  int         npaths = 0;
  PetscReal   step = 0.01, rmin = 0.5, tstep = 0;

  PetscFunctionBegin;
  for (int i = 3; i < argc; i++) { /* positional arguments: the words that are not options or their values */
    if (argv[i][0] == '-') {
      i++;
      continue;
    }
    PetscCheck(npaths < 256, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model: at most 255 files at once");
    paths[npaths++] = argv[i];
  }
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "surge model", "SgSurrogate");
  PetscCall(SgOptionsPath("-detail", "test: prefix of DeePMD-kit's dp test -d files (PREFIX.e.out, .e_peratom.out, .f.out, .v.out, .v_peratom.out)", SG_PATH_OUT_BASE, detail, detail, sizeof detail, NULL));
  PetscCall(SgOptionsReal("-compress", "test: tabulate the embedding with this step first (0: the model as it is)", "", tstep, &tstep, NULL, 0, 1));
  PetscCall(SgOptionsReal("-step", "compress: table step in the normalised embedding input (dp compress -s)", "", step, &step, NULL, 1e-5, 1));
  PetscCall(SgOptionsReal("-rmin", "compress: smallest distance the table covers; below it the nets serve", "length", rmin, &rmin, NULL, 1e-3, 100));
  PetscOptionsEnd();
  PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, NULL));
  PetscCall(RegisterModelInputs(verb, npaths, paths));
  if (!strcmp(verb, "test")) {
    PetscCheck(npaths >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model test MODEL.h5 DATA.h5 [DATA.h5 ...] [-detail PREFIX]: give the model and at least one md_frames dataset");
    PetscCall(SgDeepmdModelTest(PETSC_COMM_WORLD, paths[0], npaths - 1, (const char *const *)paths + 1, detail[0] ? detail : NULL, tstep));
  } else if (!strcmp(verb, "compress")) {
    PetscCheck(npaths == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model compress MODEL.h5 OUT.h5 [-step S] [-rmin R]: give the model and the output file");
    PetscCall(SgDeepmdModelCompress(PETSC_COMM_WORLD, paths[0], paths[1], step, rmin));
  } else if (!strcmp(verb, "info")) {
    PetscCheck(npaths == 1, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model info MODEL.h5: give one model file");
    PetscCall(SgDeepmdModelInfo(PETSC_COMM_WORLD, paths[0]));
  } else if (!strcmp(verb, "devi")) {
    PetscCheck(npaths >= 4, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model devi MODEL1.h5 MODEL2.h5 [...] TRAJ.h5md OUT: give at least two models, an H5MD trajectory and the output file (model_devi.out format)");
    PetscCall(RefuseInputAsOutput("surge model devi OUT", paths[npaths - 1]));
    PetscCall(SgDeepmdModelDevi(PETSC_COMM_WORLD, npaths - 2, (const char *const *)paths, paths[npaths - 2], paths[npaths - 1]));
  } else if (!strcmp(verb, "import") || !strcmp(verb, "export")) { /* DeePMD-kit's dp convert-backend formats */
    PetscBool imp = (PetscBool)!strcmp(verb, "import");
    PetscCheck(npaths == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "%s: give the input and the output file", imp ? "surge model import IN.dp|IN.yaml OUT.h5" : "surge model export IN.h5 OUT.dp|OUT.yaml");
    PetscCall((imp ? SgDeepmdModelImport : SgDeepmdModelExport)(PETSC_COMM_WORLD, paths[0], paths[1]));
  } else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "surge model: unknown verb '%s' (use test, compress, info, devi, import or export)", verb);
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

/* Started without mpiexec (a singleton), Open MPI 4.1 spends ~0.35 s in MPI_Init: it launches a helper
   daemon (orted) and probes every network transport (UCX, OFI, ...) although a singleton only ever
   talks to itself. Measured on the project's VMs: 0.33-0.37 s, and 0.02 s with the daemon off
   (ess_singleton_isolated: no MPI_Comm_spawn, which surge never calls) and the shared-memory/self
   transport layer (pml ob1); then MPI-IO's shared-file-pointer component "sm" (no session directory) is left out. Whole
   demo-deck run: 0.42 s -> 0.07 s for a one-step run. So for a singleton whose user has not chosen otherwise, set those;
   under mpiexec (or any PMI launcher) nothing is changed. */
static void FastSingletonMPI(void)
{
  const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_STEP_ID"};
  for (size_t k = 0; k < sizeof launched / sizeof launched[0]; k++)
    if (getenv(launched[k])) return;
  if (getenv("SURGE_KEEP_MPI_ENV")) return;
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_sharedfp", "^sm", 0); /* its session-directory files do not exist without the daemon */
  /* Every isolated singleton names its session directory /tmp/ompi.HOST.UID/jf.0/1 (job family 0,
     job 1: there is no daemon to hand out numbers) and removes it at exit, so two singletons started
     together race: one's clean-up removed the directory the other was creating, and MPI_Init failed
     ("A call to mkdir was unable to create the desired directory", seen once in make check beside
     other runs; strace shows the shared path). A singleton needs no session directory (no daemon,
     no peers, no shared-memory segments with anyone): do not create one. */
  setenv("OMPI_MCA_orte_create_session_dirs", "0", 0);
}

/* A mistake on the command line, found before PETSc starts: one line from one rank. Under a launcher
   every rank reaches this; MPI is started just long enough that rank 0 prints before any rank exits
   (mpiexec stops the job at the first non-zero exit, which could otherwise be before the line). */
static int UsageError(const char fmt[], const char a[], const char b[])
{
  char        line[2048];
  int         rank = 0;
  const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_STEP_ID"};
  PetscBool   mpi = PETSC_FALSE;

  for (size_t k = 0; k < sizeof launched / sizeof launched[0]; k++)
    if (getenv(launched[k])) mpi = PETSC_TRUE;
  if (mpi && MPI_Init(NULL, NULL) == MPI_SUCCESS) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  else mpi = PETSC_FALSE;
  snprintf(line, sizeof line, fmt, a, b);
  if (!rank) {
    fprintf(stderr, "surge: error: %s\n", line); /* one write: nothing interleaves with it */
    fflush(stderr);
  }
  if (mpi) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
  }
  return 1;
}

/* Words that are neither options nor option values: argv[first] is the one positional argument a job
   takes; a second word that follows it (or another positional word) is refused. A word after an
   option is that option's value (PETSc's rule), so '-log_view x' is not a positional word. */
static const char *ExtraPositional(int argc, char **argv, int first)
{
  for (int i = first + 1; i < argc; i++) {
    if (argv[i][0] == '-') continue;
    if (argv[i - 1][0] != '-' || i - 1 == first) return argv[i];
  }
  return NULL;
}

static const char jobs_help[] = "surge: simulation with in-process neural surrogates (docs: README.md, docs/run.md; man surge)\n\n"
                                "jobs:\n"
                                "  run DECK.yaml        one simulation; writes BASE.h5, BASE.xmf (fields), BASE.chk.h5\n"
                                "  ensemble DECK.yaml   perturbed members of a run gathered into one dataset (resumable)\n"
                                "  train DECK.yaml      train a surrogate (deepmd, mffn, podlstm) on datasets; writes BASE.h5\n"
                                "  info FILE.h5         what an output, checkpoint, dataset, model or trajectory holds\n"
                                "  dataset import|export   DeePMD-kit data directories to and from surge datasets\n"
                                "  model test|compress|info|devi   the Deep Potential model tools\n\n"
                                "Every option of a deck, with units, ranges and defaults, by section:\n"
                                "  surge run DECK.yaml -help        (also surge ensemble|train DECK.yaml -help)\n"
                                "  surge run DECK.yaml -help_petsc  the same followed by PETSc's generic options\n\n";

int main(int argc, char **argv)
{
  const char *job = argc > 1 ? argv[1] : "";
  const char *extra;

  FixOpenBLASCore(argv);
  FastSingletonMPI();
  if (!strcmp(job, "--version") || !strcmp(job, "version")) {
    printf("surge %s (OpenBLAS kernels: %s)\n", SURGE_VERSION, openblas_get_corename());
    return 0;
  }
  if (!strcmp(job, "--help") || !strcmp(job, "-help") || !strcmp(job, "help") || !strcmp(job, "-h")) {
    printf("%s%s", jobs_help, usage);
    return 0;
  }
  const char *help = SgHelpBegin(argc, argv, usage);
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-help_petsc")) argv[i] = (char *)"-help"; /* PETSc's own printer (SgHelpBegin) */
  if (!strcmp(job, "run") || !strcmp(job, "ensemble") || !strcmp(job, "train")) {
    if (argc < 3 || argv[2][0] == '-') return UsageError("surge %s needs a deck: surge %s DECK.yaml [-option value ...] (surge --help lists the jobs)", job, job);
    if ((extra = ExtraPositional(argc, argv, 2))) return UsageError("surge %s takes one deck; '%s' is a second one (options start with '-'; run the decks one after the other)", job, extra);
    PetscErrorCode ierr = SgInitialize(&argc, &argv, argv[2], help);
    if (ierr) { /* a bad deck: PETSc and MPI are up, so shut them down like any other user error */
      PetscBool up = PETSC_FALSE;
      (void)PetscInitialized(&up);
      return up ? Finish(ierr) : 1;
    }
    if ((ierr = SgHelpOpen(job, argv[2]))) return Finish(ierr);
    if (!strcmp(job, "run")) return Finish(Run(&argc, &argv, argv[2]));
    if (!strcmp(job, "ensemble")) return Finish(Ensemble(&argc, &argv, argv[2]));
    return Finish(Train(&argc, &argv, argv[2]));
  }
  if (!strcmp(job, "dataset")) {
    if (SgInitialize(&argc, &argv, NULL, help)) return 1;
    if (SgHelpOpen(job, argc > 2 ? argv[2] : "")) return Finish(1);
    return Finish(Dataset(argc, argv));
  }
  if (!strcmp(job, "model")) {
    if (SgInitialize(&argc, &argv, NULL, help)) return 1;
    if (SgHelpOpen(job, argc > 2 ? argv[2] : "")) return Finish(1);
    return Finish(Model(argc, argv));
  }
  if (!strcmp(job, "info")) {
    if (argc < 3 || argv[2][0] == '-') return UsageError("surge info needs a file: surge info FILE.h5 (an output, checkpoint, dataset, model or .h5md trajectory)%s%s", "", "");
    if ((extra = ExtraPositional(argc, argv, 2))) return UsageError("surge info takes one file; '%s' is a second one (run surge info once per file)%s", extra, "");
    if (SgInitialize(&argc, &argv, NULL, help)) return 1;
    return Finish(SgInfoFile(PETSC_COMM_WORLD, argv[2]));
  }
  if (!job[0]) {
    fprintf(stderr, "%s%s", jobs_help, usage);
    return 1;
  }
  return UsageError("unknown job '%s': the jobs are run, ensemble, train, info, dataset, model (surge --help)%s", job, "");
}
