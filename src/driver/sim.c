/* SgSim: the time loop every solver shares — step choice, output cadence, checkpoints, progress.

   Bit-identical restarts: the loop's only state is (t, step, output record counts), all stored in
   the checkpoint; dt is recomputed from the restored solver state exactly as the original run did. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <petsc/private/petscimpl.h>
#include "sgsim.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"
#include "sgdataset.h" /* SgDatasetCheckNotOverwritten */
#include "sgwrite.h"

PetscClassId SG_SIM_CLASSID;

struct _SgSimOps {
  int dummy;
};

struct _p_SgSim {
  PETSCHEADER(struct _SgSimOps);
  SgSolver  solver;
  SgOutput  out;
  char      deck[PETSC_MAX_PATH_LEN];
  int       argc;
  char    **argv;
  char      solver_type[64], output[PETSC_MAX_PATH_LEN], restart[PETSC_MAX_PATH_LEN];
  PetscReal t, t_end, dt_fixed;
  PetscInt  step, max_steps, field_every, diag_every, checkpoint_every, progress_every;
  PetscBool help, restarted, quiet, complete;
  PetscBool stop_on_signal; /* a quiet run (ensemble member) that still stops on a signal */
  PetscInt  stopped;        /* stopped by a signal at this step (0: not stopped) */
  PetscBool failed;   /* an output operation failed (reported once) */
  int       lockfd;   /* rank 0: BASE.lock, held (flock) while this run writes BASE.* */
  PetscBool staged;   /* writing: the set goes to *.tmp and is renamed into place (committed) */
  PetscBool commit_each; /* commit at every checkpoint (not when replacing an earlier run's output: that stays until the end) */
  PetscBool have_prev;   /* the committed BASE.h5 is this run's own previous commit (an earlier state of BASE.h5.tmp) */
  PetscInt  ncommit;     /* commits made by this run */
  char      run_id[64]; /* carried by the output and its checkpoints: a restart continues its own run only */
  char     *config;     /* the run's options (SgConfigList), recorded in its checkpoints: a restart must have the same */
  PetscBool locked;     /* BASE.lock taken and an interrupted set commit undone (LockOutput) */
  PetscBool new_options; /* -restart_new_options: a restart may change options on purpose (a variant branched from a checkpoint) */
  PetscInt  ndiag, progress_diag, diag_step; /* diag_step: the step diag[] was computed at */
  PetscReal *diag;
  PetscLogDouble wall0, eta_wall; /* eta_wall, eta_frac: wall time and run fraction at the first progress line */
  PetscReal      eta_frac;
};

PetscErrorCode SgSimCreate(MPI_Comm comm, SgSim *sim)
{
  SgSim s;

  PetscFunctionBegin;
  if (!SG_SIM_CLASSID) PetscCall(PetscClassIdRegister("SgSim", &SG_SIM_CLASSID));
  PetscCall(PetscHeaderCreate(s, SG_SIM_CLASSID, "SgSim", "Simulation run", "SgSim", comm, SgSimDestroy, NULL));
  s->t_end            = PETSC_MAX_REAL;
  s->max_steps        = PETSC_MAX_INT;
  s->diag_every       = 1;
  s->progress_every   = 0;
  s->diag_step        = -1; /* no diagnostics yet (a restart computes its first at diag_every) */
  s->lockfd           = -1;
  *sim                = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimSetDeck(SgSim sim, const char deck[], int argc, char **argv)
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(sim->deck, deck ? deck : "", sizeof sim->deck));
  sim->argc = argc;
  sim->argv = argv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Default output base name: the deck's file name without directory and extension. */
static PetscErrorCode DefaultOutput(SgSim sim, char base[], size_t len)
{
  const char *slash = strrchr(sim->deck, '/'), *name = slash ? slash + 1 : sim->deck;
  char       *dot;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(base, name[0] ? name : "surge", len));
  dot = strrchr(base, '.');
  if (dot && dot != base) *dot = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimSetFromOptions(SgSim sim)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)sim);
  PetscBool set;
  char      base[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscOptionsHasHelp(NULL, &sim->help));
  PetscCall(DefaultOutput(sim, base, sizeof base));
  PetscOptionsBegin(comm, "sim_", "Run control (deck section sim:)", "SgSim");
  PetscCall(SgOptionsString("-solver", "Solver type (vlasov, md, dft, ...)", sim->solver_type, sim->solver_type, sizeof sim->solver_type, &set));
  PetscCall(SgOptionsReal("-t_end", "Final simulation time", "solver time units", sim->t_end, &sim->t_end, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-max_steps", "Maximum number of steps", sim->max_steps, &sim->max_steps, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsReal("-dt", "Fixed time step (0: the solver's stable step; a fixed step larger than the stable one is an error)", "solver time units", sim->dt_fixed, &sim->dt_fixed, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsPath("-output", "Output base name: writes BASE.h5 and BASE.xmf (default: deck name)", SG_PATH_OUT_BASE, base, sim->output, sizeof sim->output, &set));
  if (!set) PetscCall(PetscStrncpy(sim->output, base, sizeof sim->output));
  PetscCall(SgOptionsInt("-field_every", "Write field snapshots every K steps (0: first and last only)", sim->field_every, &sim->field_every, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-diag_every", "Record diagnostics every K steps", sim->diag_every, &sim->diag_every, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-checkpoint_every", "Write BASE.chk.h5 every K steps (0: only at the end)", sim->checkpoint_every, &sim->checkpoint_every, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-progress_every", "Print a progress line every K steps (0: about 20 lines per run)", sim->progress_every, &sim->progress_every, NULL, 0, PETSC_MAX_INT));
  PetscOptionsEnd();
  PetscOptionsBegin(comm, NULL, "Restart", "SgSim");
  PetscCall(SgOptionsPath("-restart", "Continue the run from this checkpoint file (written by the same deck)", SG_PATH_RESUME, sim->restart, sim->restart, sizeof sim->restart, NULL));
  PetscCall(SgOptionsBool("-restart_new_options", "Continue from -restart with options that differ from its run's on purpose (a variant branched from one checkpoint); without it such a restart is refused", sim->new_options, &sim->new_options, NULL));
  PetscOptionsEnd();

  /* a misspelled sim key (t_ned) must be reported as such, not as the missing value it was meant to set */
  if (!sim->help) PetscCall(SgOptionsCheckUnusedPrefix(comm, sim->deck[0] ? sim->deck : NULL, "sim_"));
  PetscCheck(sim->help || sim->solver_type[0], comm, PETSC_ERR_USER_INPUT, "No solver chosen: set 'sim: {solver: NAME}' in the deck (or -sim_solver NAME)");
  PetscCheck(sim->help || sim->t_end < PETSC_MAX_REAL || sim->max_steps < PETSC_MAX_INT, comm, PETSC_ERR_USER_INPUT, "The run has no end: set sim t_end (simulation time) or sim max_steps in the deck");
  PetscCall(SgSolverCreate(comm, &sim->solver));
  {
    SgSolverRunInfo run = {sim->restart[0] ? PETSC_TRUE : PETSC_FALSE, "", sim->dt_fixed};
    PetscCall(PetscStrncpy(run.output, sim->output, sizeof run.output));
    PetscCall(SgSolverSetRunInfo(sim->solver, &run));
  }
  if (sim->solver_type[0]) {
    PetscCall(SgSolverSetType(sim->solver, sim->solver_type));
    PetscCall(SgSolverSetFromOptions(sim->solver));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimSetQuiet(SgSim sim, PetscBool quiet)
{
  PetscFunctionBegin;
  sim->quiet = quiet;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimSetStopOnSignal(SgSim sim, PetscBool on)
{
  PetscFunctionBegin;
  sim->stop_on_signal = on;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimGetStopped(SgSim sim, PetscInt *step)
{
  PetscFunctionBegin;
  *step = sim->stopped;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimHelpOnly(SgSim sim, PetscBool *help)
{
  PetscFunctionBegin;
  *help = sim->help;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The checkpoint as written (BASE.chk.h5.tmp while staged) or as committed (BASE.chk.h5). */
static PetscErrorCode CheckpointName(SgSim sim, PetscBool committed, char name[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, len, "%s.chk.h5%s", sim->output, sim->staged && !committed ? ".tmp" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Options that a restart may change: how far the run goes, how often it writes and reports, where
   (output names are left out of the list anyway), and an ensemble's own (it compares its members'
   configurations itself). Every other option -- the solver's physics and numerics, sim dt, PETSc's
   solver options, the input files' content -- must be what the checkpoint's run had. */
static const char *const RestartMayChange[] = {"sim_t_end", "sim_max_steps", "sim_field_every", "sim_diag_every", "sim_checkpoint_every", "sim_progress_every", "restart", "ensemble_", "md_thermo_every", "md_traj_every", "md_rdf_every", "md_model_devi_every", "dft_verbose", "podlstm_verbose", NULL};

/* A restart continues the run its checkpoint was written by: the same options (RestartMayChange aside)
   and input files. A checkpoint written before checkpoints recorded their options is accepted with
   one warning (its layout, solver and run id are still checked). */
static PetscErrorCode CheckSameConfig(SgSim sim, SgCheckpoint chk)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)sim);
  const int cap  = 1 << 16;
  char     *then, what[1024] = "";

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(cap, &then));
  PetscCall(SgCheckpointReadString(chk, "config", then, (size_t)cap));
  if (!then[0]) PetscCall(PetscPrintf(comm, "surge: warning: the checkpoint %s records no options (written by an older surge): a restart with other options than its run's is not detected\n", sim->restart));
  else PetscCall(SgConfigListDiff(comm, sim->deck[0] ? sim->deck : NULL, then, sim->config, what, sizeof what));
  PetscCall(PetscFree(then));
  PetscCheck(!what[0] || sim->new_options, comm, PETSC_ERR_USER_INPUT, "-restart %s was written by a run with other options: %s; restart with that run's options (only -sim_t_end, -sim_max_steps, output names and output cadence may change), start a fresh run with another -sim_output, or add -restart_new_options to branch a variant on purpose", sim->restart, what);
  if (what[0]) PetscCall(PetscPrintf(comm, "surge: note: -restart_new_options: continuing %s with other options than its run's (%s)\n", sim->restart, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Driver-level layout and loop state, then the solver's own. Used both ways (write/read). */
static PetscErrorCode CheckpointDriver(SgSim sim, SgCheckpoint chk)
{
  SgCheckpointMode mode;
  PetscInt         nrec, nsnap;
  PetscReal        v[4];

  PetscFunctionBegin;
  PetscCall(SgCheckpointGetMode(chk, &mode));
  PetscCall(SgCheckpointLayoutString(chk, "solver", sim->solver_type));
  if (mode == SG_CHECKPOINT_WRITE) {
    PetscCall(SgOutputGetCounts(sim->out, &nrec, &nsnap));
    v[0] = sim->t;
    v[1] = (PetscReal)sim->step;
    v[2] = (PetscReal)nrec;
    v[3] = (PetscReal)nsnap;
    PetscCall(SgCheckpointWriteReals(chk, "driver", 4, v));
    PetscCall(SgCheckpointWriteString(chk, "run_id", sim->run_id));
    PetscCall(SgCheckpointWriteString(chk, "config", sim->config));
    PetscCall(SgSolverCheckpoint(sim->solver, chk));
  } else {
    PetscCall(SgCheckpointReadReals(chk, "driver", 4, v));
    PetscCall(SgCheckpointReadString(chk, "run_id", sim->run_id, sizeof sim->run_id));
    sim->t    = v[0];
    sim->step = (PetscInt)v[1];
    PetscCall(SgSolverRestart(sim->solver, chk)); /* its layout checks first: they name the quantity */
    PetscCall(CheckSameConfig(sim, chk));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CommitSet(SgSim, PetscBool);

/* A checkpoint, then the commit of the set (h5, xmf, chk) it belongs to: at every checkpoint of a run
   that commits each (a fresh output, a restart), at the last one (the end, a stop on a signal) always. */
static PetscErrorCode WriteCheckpoint(SgSim sim, PetscBool last)
{
  SgCheckpoint chk;
  char         name[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(SgOutputFlush(sim->out));
  PetscCall(CheckpointName(sim, PETSC_FALSE, name, sizeof name));
  PetscCall(SgCheckpointOpen(PetscObjectComm((PetscObject)sim), name, SG_CHECKPOINT_WRITE, &chk));
  PetscCall(CheckpointDriver(sim, chk));
  PetscCall(SgCheckpointClose(&chk));
  if (last || sim->commit_each) PetscCall(CommitSet(sim, last ? PETSC_FALSE : PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Is the run at its end (t_end reached up to round-off of the step sum, or max_steps done)? */
static PetscBool AtEnd(SgSim sim)
{
  return sim->step >= sim->max_steps || sim->t >= sim->t_end - 1e-12 * PetscMax(1, PetscAbsReal(sim->t_end)) ? PETSC_TRUE : PETSC_FALSE;
}

/* A fixed step above the stable one would be refused at the first step; refuse it now, before any
   file is written (the loop checks again each step, since the stable step changes with the state). */
static PetscErrorCode CheckFixedStep(SgSim sim)
{
  PetscReal dtmax;

  PetscFunctionBegin;
  PetscCall(SgSolverGetTimeStep(sim->solver, sim->t, &dtmax));
  PetscCheck(dtmax > 0 && !PetscIsInfOrNanReal(dtmax), PetscObjectComm((PetscObject)sim), PETSC_ERR_USER_INPUT, "the solver's stable time step at t = %g is %g: the grid or its bounds are degenerate (check the deck's cells, lower and upper)", (double)sim->t, (double)dtmax);
  PetscCheck(sim->dt_fixed <= 0 || sim->dt_fixed <= dtmax * (1 + 1e-12), PetscObjectComm((PetscObject)sim), PETSC_ERR_USER_INPUT, "sim dt = %g exceeds the solver's stable step %g at t = %g: lower dt or remove it to let the solver choose", (double)sim->dt_fixed, (double)dtmax, (double)sim->t);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A run killed while writing its XDMF sidecar or a checkpoint leaves BASE.xmf.tmp or BASE.chk.h5.tmp
   (the files they replace are intact: both are renamed into place only when complete). They are
   this output's own half-written files, so the next run with the same output removes them. */
static PetscErrorCode RemoveStaleTemporaries(SgSim sim, PetscInt n, const char *const suffix[])
{
  PetscMPIInt rank;
  char        tmp[PETSC_MAX_PATH_LEN + 16];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)sim), &rank));
  if (rank) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i <= n + 1; i++) { /* and BASE.chk.h5.tmp.tmp, the temporary of a staged checkpoint, and BASE.h5.old.tmp (CommitSet) */
    PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s%s.tmp", sim->output, i < n ? suffix[i] : i == n ? ".chk.h5.tmp" : ".h5.old"));
    if (!access(tmp, F_OK) && !unlink(tmp) && !sim->quiet) PetscCall(PetscPrintf(PETSC_COMM_SELF, "Removed %s, left by an interrupted run\n", tmp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The output is this job's (BASE.lock: one job per output name, a second is refused, not interleaved),
   and a set commit a killed run left half done is undone (the earlier set, whole). A restart does this
   before it reads its checkpoint: killed after the checkpoint's rename but before the commit ended,
   BASE.chk.h5 is the new one while the recovery puts back the earlier output. */
static PetscErrorCode LockOutput(SgSim sim, const char *const suffix[])
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)sim);
  PetscMPIInt rank;

  PetscFunctionBegin;
  if (sim->locked) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(SgWriteLockAcquire(comm, "-sim_output", sim->output, &sim->lockfd));
  { /* ours now: a set commit a killed run left half done is undone (the earlier set, whole) */
    char msg[PETSC_MAX_PATH_LEN + 200] = "";
    if (!rank) {
      char        files[3][PETSC_MAX_PATH_LEN + 16];
      const char *path[3];
      for (PetscInt i = 0; i < 3; i++) {
        PetscCall(PetscSNPrintf(files[i], sizeof files[i], "%s%s", sim->output, suffix[i]));
        path[i] = files[i];
      }
      if (SgWriteSetRecover(3, path)) PetscCall(PetscSNPrintf(msg, sizeof msg, "-sim_output '%s': cannot put back the earlier output from its %s.prev.tmp files (left by a run killed while committing): rename each over the file it names and run again", sim->output, sim->output));
    }
    PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
    PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg);
  }
  sim->locked = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run's set of files through the write path (sgwrite.h), before the first step: none may be an
   input of the run or a file of another kind (-overwrite for the latter). Every run writes the set
   under temporary names (staged) and renames it into place (CommitSet): a fresh output and a restart
   at every checkpoint, a fresh run over an existing output only at the end, so a failure -- a full
   disk included -- leaves the earlier run's files whole. */
static PetscErrorCode CheckOutputSet(SgSim sim, PetscInt n, const char *const suffix[])
{
  MPI_Comm          comm    = PetscObjectComm((PetscObject)sim);
  const char *const kinds[] = {SG_FILE_RUN_OUTPUT, SG_FILE_RUN_XDMF, SG_FILE_RUN_CHECKPOINT};
  char              file[PETSC_MAX_PATH_LEN + 16];
  PetscMPIInt       rank;
  int               exists = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(LockOutput(sim, suffix));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscSNPrintf(file, sizeof file, "%s%s", sim->output, suffix[i]));
    PetscCall(SgWriteCheck(comm, "-sim_output", file, kinds[i]));
    if (!rank && !access(file, F_OK)) exists = 1;
  }
  PetscCallMPI(MPI_Bcast(&exists, 1, MPI_INT, 0, comm));
  sim->staged      = PETSC_TRUE;
  sim->commit_each = (sim->restarted || !exists) ? PETSC_TRUE : PETSC_FALSE;
  sim->have_prev   = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A restart continues its own output only: the output must carry the checkpoint's run id (outputs and
   checkpoints written before run ids existed are compared by solver, when the output names one). */
static PetscErrorCode CheckSameRun(SgSim sim, const char file[])
{
  MPI_Comm comm = PetscObjectComm((PetscObject)sim);
  char     solver[256], id[256];

  PetscFunctionBegin;
  PetscCall(SgOutputGetIdentity(comm, file, solver, id, sizeof id));
  PetscCheck(!solver[0] || !strcmp(solver, sim->solver_type), comm, PETSC_ERR_FILE_OPEN, "-sim_output '%s' is the output of a %s run, and the checkpoint %s is of a %s run: restart with the -sim_output the checkpoint's run wrote, or start a fresh run", file, solver, sim->restart, sim->solver_type);
  PetscCheck(!id[0] || !sim->run_id[0] || !strcmp(id, sim->run_id), comm, PETSC_ERR_FILE_OPEN, "-sim_output '%s' is the output of another run (run id %s) than the checkpoint %s (run id %s): restart with the -sim_output that run wrote, or start a fresh run", file, id, sim->restart, sim->run_id);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A run id: rank 0's host, process id and start time, the same on every rank. */
static PetscErrorCode NewRunId(SgSim sim)
{
  char host[64] = "";

  PetscFunctionBegin;
  (void)gethostname(host, sizeof host - 1);
  PetscCall(PetscSNPrintf(sim->run_id, sizeof sim->run_id, "%.24s-%ld-%ld", host, (long)getpid(), (long)time(NULL)));
  PetscCallMPI(MPI_Bcast(sim->run_id, (int)sizeof sim->run_id, MPI_CHAR, 0, PetscObjectComm((PetscObject)sim)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What a failed write leaves, for its one line. */
static const char *StateAfterFailure(SgSim sim)
{
  if (!sim->commit_each) return "the earlier output is unchanged; free space and run again";
  if (sim->restarted || sim->ncommit) return "the output as of the last checkpoint is intact; free space and restart from it";
  return "nothing was committed yet (no checkpoint); free space and run again";
}

/* Commit the staged set: h5 and xmf first, the checkpoint last (a restart from the new checkpoint
   finds the new output; one from the old finds an output that holds at least what it counted).
   Rank 0 renames, after the collective close of the output and an fsync of the whole set, so no
   rename happens unless the whole set is on disk. BASE.h5 is only ever replaced by rename, never
   edited: a kill -9 at any moment leaves the previous commit or this one.
   more: the run goes on, in a BASE.h5.tmp that must again be the committed state. Copying the
   committed file would cost its whole size at every checkpoint; instead the file committed the
   previous time (a hard link keeps it: BASE.h5.old.tmp) becomes the temporary and SgOutputResume
   copies into it only what this interval added. A byte copy is made when there is no such file
   of this run's (the first commit, the first after a restart) or a reader holds it open. */
static PetscErrorCode CommitSet(SgSim sim, PetscBool more)
{
  MPI_Comm          comm     = PetscObjectComm((PetscObject)sim);
  const char *const suffix[] = {".h5", ".xmf", ".chk.h5"};
  PetscMPIInt       rank;
  int               err[2] = {0, 0}; /* errno, and whether the previous commit is reused */
  char              tmp[PETSC_MAX_PATH_LEN + 32], old[PETSC_MAX_PATH_LEN + 32], h5[PETSC_MAX_PATH_LEN + 16];
  int               nm;
  const char *const *mtmp, *const *mpath;

  PetscFunctionBegin;
  if (!sim->staged) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgOutputSuspend(sim->out)); /* closes the HDF5 file (collective) */
  PetscCall(SgWriteMembersClose(&nm, &mtmp, &mpath)); /* files written beside the set join it (collective) */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(h5, sizeof h5, "%s.h5", sim->output));
  PetscCall(PetscSNPrintf(old, sizeof old, "%s.h5.old.tmp", sim->output));
  if (!rank) {
    char        files[3][PETSC_MAX_PATH_LEN + 16], tmps[3][PETSC_MAX_PATH_LEN + 32];
    const char *newf[3 + SG_WRITE_MAX_MEMBERS], *path[3 + SG_WRITE_MAX_MEMBERS];
    for (PetscInt i = 0; i < 3; i++) {
      PetscCall(PetscSNPrintf(files[i], sizeof files[i], "%s%s", sim->output, suffix[i]));
      PetscCall(PetscSNPrintf(tmps[i], sizeof tmps[i], "%s.tmp", files[i]));
      path[i] = files[i];
      newf[i] = access(tmps[i], F_OK) ? NULL : tmps[i]; /* no XDMF without field snapshots: the earlier sidecar goes */
      if (!newf[i] && i != 1 && !err[0]) err[0] = ENOENT;
    }
    (void)unlink(old);
    if (!err[0] && more && sim->have_prev && !link(h5, old)) err[1] = SgWriteNoReader(old) ? 1 : 0;
    if (!err[1]) (void)unlink(old);
    /* the three and the files beside them (an MD trajectory, ...) replaced together or not at all
       (io/h5/writeset.c); the checkpoint's rename stays the last */
    newf[2 + nm] = newf[2];
    path[2 + nm] = path[2];
    for (int k = 0; k < nm; k++) {
      newf[2 + k] = mtmp[k];
      path[2 + k] = mpath[k];
    }
    if (!err[0]) err[0] = SgWriteSetCommitErrno(3 + nm, newf, path);
    else
      for (int k = 0; k < nm; k++) (void)unlink(mtmp[k]);
    if (!err[0] && more) {
      PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", h5));
      if (err[1]) err[0] = rename(old, tmp) ? errno : 0;
      else err[0] = SgWriteCopyErrno(h5, tmp);
    }
    if (err[0]) (void)unlink(old);
  }
  PetscCallMPI(MPI_Bcast(err, 2, MPI_INT, 0, comm));
  PetscCheck(!err[0], comm, PETSC_ERR_FILE_OPEN, "cannot write the output %s (%s%s): %s", sim->output, strerror(err[0]), err[0] == ENOSPC ? ", disk full" : "", StateAfterFailure(sim));
  sim->ncommit++;
  if (more) {
    PetscCall(SgOutputResume(sim->out, err[1] ? PETSC_TRUE : PETSC_FALSE));
    sim->have_prev = PETSC_TRUE;
  } else {
    PetscCall(SgOutputDestroy(&sim->out));
    sim->staged = PETSC_FALSE;
  }
  PetscCall(SgWriteMembersResume(more)); /* the side writers continue from their committed files */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A staged run that failed: its temporaries go, the earlier files stay (rank 0, or any rank when
   that rank alone knows of the failure). */
static void DiscardStaged(SgSim sim, PetscBool anyrank)
{
  const char *const suffix[] = {".h5.tmp", ".xmf.tmp", ".xmf.tmp.tmp", ".chk.h5.tmp", ".chk.h5.tmp.tmp", ".h5.old.tmp"};
  PetscMPIInt       rank = 0;
  char              tmp[PETSC_MAX_PATH_LEN + 32];

  if (!sim->staged) return;
  SgWriteMembersDiscard(); /* a one-shot side file's temporary (registered writers remove their own) */
  MPI_Comm_rank(PetscObjectComm((PetscObject)sim), &rank);
  if (rank && !anyrank) return;
  for (int i = 0; i < 6; i++) {
    (void)snprintf(tmp, sizeof tmp, "%s%s", sim->output, suffix[i]);
    (void)unlink(tmp);
  }
}

/* Writing the output can fail for reasons outside the run (a full disk, a quota): such a failure is
   one line, not a traceback. Output operations run with PETSc's error printing held back; a user-class
   error (agreed on every rank) is raised again as it was, anything else becomes one line naming the
   output. With several ranks, a full disk in a collective HDF5 call usually fails on every rank: they
   agree on it (SgAgreeAllFailed, a bounded wait) and all end through the normal error path -- the
   staged temporaries removed, the output lock released, MPI finalised, one line. One rank may be alone
   in knowing (an MPI-IO write that failed on it only): the others may be waiting in a collective, so
   after the wait it removes the temporaries and the lock and exits, and mpiexec ends the others. */
static PetscErrorCode OutputFailed(SgSim sim, PetscErrorCode code, const SgErrorHold *h)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)sim);
  PetscMPIInt size;
  char        line[1400];

  PetscFunctionBegin;
  if (SgErrorIsUserClass(code)) SETERRQ(comm, code, "%s", h->msg);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscSNPrintf(line, sizeof line, "cannot write the output %s (%s; disk full?): %s", sim->output, h->msg, StateAfterFailure(sim)));
  DiscardStaged(sim, PETSC_TRUE);
  sim->staged = PETSC_FALSE;
  sim->failed = PETSC_TRUE;
  if (size == 1) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s", line);
  if (SgAgreeAllFailed()) SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s", line); /* printed once, by rank 0 */
  SgTermPrintf(stderr, "surge: error: %s\n", line);
  (void)fflush(stderr);
  SgTermLogAbandon(); /* the run log's temporary too (the earlier BASE.log stays) */
  SgErrorRunOnExit(); /* the output lock (io/h5/lock.c registered it) */
  /* then end as SgErrorFinish ends a rank whose peers are stuck (mpiexec ends them), not by MPI_Abort,
     whose notice and ORTE_ERROR_LOG lines followed the one line */
  (void)fflush(stdout);
  _exit(1);
}

#define OutputCall(sim, call) \
  do { \
    SgErrorHold    held_; \
    PetscErrorCode e_; \
    PetscCall(SgErrorHoldPush(&held_)); \
    e_ = (call); \
    PetscCall(SgErrorHoldPop()); \
    if (e_) PetscCall(OutputFailed(sim, e_, &held_)); \
  } while (0)

/* Everything that can be checked is checked before the output is created or reopened, so a refused
   run leaves every existing file byte-identical: solver set-up (inputs read), unused options, the
   restart file, the first step, and the output paths. */
PetscErrorCode SgSimSetUp(SgSim sim)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)sim);
  char               file[PETSC_MAX_PATH_LEN];
  const char *const *names, *const *units;
  const char *const  suffix[] = {".h5", ".xmf", ".chk.h5"};
  PetscReal          v[4] = {0, 0, 0, 0};

  PetscFunctionBegin;
  if (sim->help) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgSolverSetUp(sim->solver));
  /* every option must have been read by now; refuse to run (and to write anything) otherwise */
  PetscCall(SgOptionsCheckUnused(comm, sim->deck[0] ? sim->deck : NULL));
  PetscCall(SgSolverGetDiagnostics(sim->solver, &sim->ndiag, &names, &units));
  PetscCall(SgSolverGetProgressDiagnostic(sim->solver, &sim->progress_diag));
  PetscCall(PetscCalloc1(sim->ndiag + 1, &sim->diag));
  PetscCall(PetscSNPrintf(file, sizeof file, "%s.h5", sim->output));
  PetscCall(SgConfigList(comm, sim->deck[0] ? sim->deck : NULL, RestartMayChange, &sim->config));
  if (sim->restart[0]) {
    SgCheckpoint chk;
    PetscCall(SgOutputCheckPath(comm, "-sim_output", sim->output, 3, suffix));
    PetscCall(LockOutput(sim, suffix)); /* before the checkpoint is read: it may be one a killed commit left */
    PetscCall(SgCheckpointOpen(comm, sim->restart, SG_CHECKPOINT_READ, &chk));
    PetscCall(CheckpointDriver(sim, chk));
    PetscCall(SgCheckpointReadReals(chk, "driver", 4, v));
    PetscCall(SgCheckpointClose(&chk));
    sim->restarted = PETSC_TRUE;
    /* a finished run restarted with the same end: nothing to do, and nothing of the run may change;
       a half-written BASE.chk.h5.tmp of a run killed while rewriting its final checkpoint is no file of
       the run's and goes */
    sim->complete = AtEnd(sim);
    if (sim->complete) {
      PetscCall(RemoveStaleTemporaries(sim, 3, suffix));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(CheckFixedStep(sim));
  PetscCall(SgOutputCheckPath(comm, "-sim_output", sim->output, 3, suffix));
  PetscCall(SgDatasetCheckNotOverwritten(comm, "-sim_output", file));
  PetscCall(CheckOutputSet(sim, 3, suffix));
  if (sim->restarted) PetscCall(CheckSameRun(sim, file));
  /* BASE.log: the terminal output of the run (an ensemble member's goes to the ensemble's log);
     a restart continues the earlier run's log */
  if (!sim->quiet) PetscCall(SgRunLogOpen(comm, "-sim_output", sim->output, sim->restarted));
  PetscCall(RemoveStaleTemporaries(sim, 3, suffix));
  if (sim->restarted) PetscCall(SgOutputReopen(comm, file, (PetscInt)v[2], (PetscInt)v[3], &sim->out));
  else {
    PetscCall(NewRunId(sim));
    PetscCall(SgOutputCreate(comm, file, sim->staged, &sim->out));
    PetscCall(SgOutputSetIdentity(sim->out, sim->solver_type, sim->run_id));
    PetscCall(SgOutputWriteProvenance(sim->out, sim->deck[0] ? sim->deck : NULL, sim->argc, sim->argv));
  }
  PetscCall(SgOutputDeclareDiagnostics(sim->out, sim->ndiag, names, units));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Diagnose(SgSim sim)
{
  const char *const *names;

  PetscFunctionBegin;
  if (!sim->ndiag) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgSolverDiagnose(sim->solver, sim->t, sim->diag));
  PetscCall(SgSolverGetDiagnostics(sim->solver, NULL, &names, NULL));
  for (PetscInt i = 0; i < sim->ndiag; i++)
    PetscCheck(!PetscIsInfOrNanReal(sim->diag[i]), PetscObjectComm((PetscObject)sim), PETSC_ERR_FP, "Diagnostic %s is %g at step %" PetscInt_FMT " (t = %g): the solution has blown up. Output up to the previous record is intact; reduce the time step (CFL) or check the deck", names[i], (double)sim->diag[i], sim->step, (double)sim->t);
  PetscCall(SgOutputAppendDiagnostics(sim->out, sim->step, sim->t, sim->diag));
  sim->diag_step = sim->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteFields(SgSim sim)
{
  PetscFunctionBegin;
  PetscCall(SgOutputBeginSnapshot(sim->out, sim->step, sim->t));
  PetscCall(SgSolverWriteFields(sim->solver, sim->out));
  PetscCall(SgOutputEndSnapshot(sim->out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fraction of the run done since (t0, step0), by time or by steps, whichever is further along. */
static PetscReal RunFraction(SgSim sim, PetscReal t0, PetscInt step0)
{
  PetscReal frac = 0;

  if (sim->t_end < PETSC_MAX_REAL && sim->t_end > t0) frac = (sim->t - t0) / (sim->t_end - t0);
  if (sim->max_steps < PETSC_MAX_INT) frac = PetscMax(frac, (PetscReal)(sim->step - step0) / (PetscReal)PetscMax(1, sim->max_steps - step0));
  return frac;
}

static PetscErrorCode Progress(SgSim sim, PetscReal dt, PetscReal t0, PetscInt step0)
{
  PetscLogDouble now;
  PetscReal      frac = RunFraction(sim, t0, step0), eta = -1;
  char           fig[128] = "", etas[32] = "ETA -";

  PetscFunctionBegin;
  if (sim->quiet) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscTime(&now));
  if (sim->eta_wall <= 0) { /* once: what the columns of the progress lines are, with units */
    const char *const *names, *const *units;
    char               what[256] = "";
    PetscCall(SgSolverGetDiagnostics(sim->solver, NULL, &names, &units));
    if (sim->progress_diag >= 0) PetscCall(PetscSNPrintf(what, sizeof what, ", %s [%s]", names[sim->progress_diag], units[sim->progress_diag][0] ? units[sim->progress_diag] : "1"));
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)sim), "progress columns: step, t and dt [the solver's time unit, docs/%s.md]%s, wall [s], ETA [s]\n", sim->solver_type, what));
  }
  /* The rate is measured from the first progress line on: the first step carries the set-up's
     one-off costs (first diagnostics and field snapshot, FFT plans, first-touch of memory), and
     extrapolating it gave 171 s for a 2 s run. The first line has no estimate. */
  if (sim->eta_wall <= 0) {
    sim->eta_wall = now;
    sim->eta_frac = frac;
  } else if (frac > sim->eta_frac) {
    eta = (PetscReal)(now - sim->eta_wall) * (1 - frac) / (frac - sim->eta_frac);
    PetscCall(PetscSNPrintf(etas, sizeof etas, "ETA %.1fs", (double)PetscMax(eta, 0)));
  }
  if (sim->progress_diag >= 0 && sim->diag_step >= 0) {
    const char *const *names;
    PetscCall(SgSolverGetDiagnostics(sim->solver, NULL, &names, NULL));
    char at[48] = ""; /* the diagnostic is computed every diag_every steps: say when it is older than the line */
    if (sim->diag_step != sim->step) PetscCall(PetscSNPrintf(at, sizeof at, " (step %" PetscInt_FMT ")", sim->diag_step));
    PetscCall(PetscSNPrintf(fig, sizeof fig, "  %s %.6e%s", names[sim->progress_diag], (double)sim->diag[sim->progress_diag], at));
  }
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)sim), "step %8" PetscInt_FMT "  t %.6e  dt %.3e%s  wall %.2fs  %s\n", sim->step, (double)sim->t, (double)dt, fig, (double)(now - sim->wall0), etas));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Checkpoint on a signal (src/base/stopsig.c): at a step boundary the ranks agree, the run writes the
   checkpoint it would have written at that step with checkpoint_every, commits its files and stops
   with one line saying how to continue. */
static PetscErrorCode StopOnSignal(SgSim sim, int sig)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)sim);
  char     chk[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  OutputCall(sim, WriteCheckpoint(sim, PETSC_TRUE)); /* the files so far become the run's, so the restart finds them */
  sim->stopped = sim->step;
  if (sim->quiet) PetscFunctionReturn(PETSC_SUCCESS); /* an ensemble member: its ensemble says how to continue */
  PetscCall(CheckpointName(sim, PETSC_TRUE, chk, sizeof chk));
  PetscCall(PetscPrintf(comm, "surge: stopped by %s at step %" PetscInt_FMT " (t = %.6e): checkpoint %s written; continue with the same command and -restart %s\n", SgStopSignalName(sig), sim->step, (double)sim->t, chk, chk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimRun(SgSim sim)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)sim);
  PetscReal t0, dt = 0, next_progress;
  PetscInt  step0;
  PetscBool fields_fresh = PETSC_FALSE, diag_fresh = PETSC_FALSE, xmf;

  PetscFunctionBegin;
  PetscCheck(!sim->help, comm, PETSC_ERR_ORDER, "-help was given: nothing to run");
  if (sim->complete) {
    PetscCall(PetscPrintf(comm, "surge: the run in %s is already complete (step %" PetscInt_FMT ", t = %.6e): nothing to do, no file changed. Raise -sim_t_end or -sim_max_steps to continue it\n", sim->restart, sim->step, (double)sim->t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* a top-level run, or an ensemble member (whose ensemble resumes it), stops cleanly on SIGTERM/SIGUSR1 */
  if (!sim->quiet || sim->stop_on_signal) PetscCall(SgStopSignalInstall());
  PetscCall(PetscTime(&sim->wall0));
  t0    = sim->t;
  step0 = sim->step;
  if (!sim->restarted) {
    OutputCall(sim, Diagnose(sim));
    OutputCall(sim, WriteFields(sim));
    fields_fresh = diag_fresh = PETSC_TRUE;
  } else PetscCall(PetscPrintf(comm, "Restarted from %s at step %" PetscInt_FMT ", t = %.6e\n", sim->restart, sim->step, (double)sim->t));
  next_progress = 0;
  /* t_end is reached when the remaining interval is round-off of the step sum */
  while (!AtEnd(sim)) {
    PetscReal dtmax;
    PetscCall(SgSolverGetTimeStep(sim->solver, sim->t, &dtmax));
    if (sim->dt_fixed > 0) {
      PetscCheck(sim->dt_fixed <= dtmax * (1 + 1e-12), comm, PETSC_ERR_USER_INPUT, "sim dt = %g exceeds the solver's stable step %g at t = %g: lower dt or remove it to let the solver choose", (double)sim->dt_fixed, (double)dtmax, (double)sim->t);
      dt = sim->dt_fixed;
    } else dt = dtmax;
    if (sim->t_end < PETSC_MAX_REAL) {
      /* the last step ends on t_end; one shorter than dt only by the round-off of the step sum keeps
         dt (AtEnd accepts that round-off), or a solver that factors for its step size (boussinesq's
         implicit part) would refactor for a step 1e-16 shorter */
      PetscReal rem = sim->t_end - sim->t;
      if (rem < dt - 1e-12 * PetscMax(1, PetscAbsReal(sim->t_end))) dt = rem;
    }
    PetscCall(SgSolverStep(sim->solver, sim->t, dt));
    sim->t += dt;
    sim->step++;
    diag_fresh = fields_fresh = PETSC_FALSE;
    if (sim->step % sim->diag_every == 0) {
      OutputCall(sim, Diagnose(sim));
      diag_fresh = PETSC_TRUE;
    }
    if (sim->field_every && sim->step % sim->field_every == 0) {
      OutputCall(sim, WriteFields(sim));
      fields_fresh = PETSC_TRUE;
    }
    if (sim->checkpoint_every && sim->step % sim->checkpoint_every == 0 && !AtEnd(sim)) OutputCall(sim, WriteCheckpoint(sim, PETSC_FALSE));
    if ((!sim->quiet || sim->stop_on_signal) && !AtEnd(sim)) {
      int sig;
      PetscCall(SgStopSignalAgree(comm, &sig));
      if (sig) {
        PetscCall(StopOnSignal(sim, sig));
        PetscFunctionReturn(PETSC_SUCCESS);
      }
    }
    /* the last step's line is printed after the loop, with the final diagnostics: one line, not two */
    if ((sim->progress_every ? sim->step % sim->progress_every == 0 : 1) && !AtEnd(sim)) {
      PetscReal frac = RunFraction(sim, t0, step0);
      if (sim->progress_every || frac >= next_progress) {
        PetscCall(Progress(sim, dt, t0, step0));
        next_progress = frac + 0.05;
      }
    }
  }
  if (!diag_fresh) OutputCall(sim, Diagnose(sim));
  if (!fields_fresh) OutputCall(sim, WriteFields(sim));
  PetscCall(Progress(sim, dt, t0, step0));
  OutputCall(sim, SgOutputFlush(sim->out));
  OutputCall(sim, SgSolverReport(sim->solver, sim->out));
  OutputCall(sim, SgOutputFlush(sim->out));
  /* the final checkpoint comes last: a run killed before it restarts from an earlier one and
     redoes the report, and a restart from it ("already complete") finds the report written */
  PetscCall(SgOutputHasFields(sim->out, &xmf)); /* before the commit closes the output */
  OutputCall(sim, WriteCheckpoint(sim, PETSC_TRUE));
  if (!sim->quiet) {
    char chk[PETSC_MAX_PATH_LEN];
    PetscCall(CheckpointName(sim, PETSC_TRUE, chk, sizeof chk));
    if (xmf) PetscCall(PetscPrintf(comm, "Wrote %s.h5 (+ %s.xmf for ParaView) and checkpoint %s\n", sim->output, sim->output, chk));
    else PetscCall(PetscPrintf(comm, "Wrote %s.h5 and checkpoint %s\n", sim->output, chk));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimGetSolver(SgSim sim, SgSolver *solver)
{
  PetscFunctionBegin;
  *solver = sim->solver;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimGetTime(SgSim sim, PetscReal *t, PetscInt *step)
{
  PetscFunctionBegin;
  if (t) *t = sim->t;
  if (step) *step = sim->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSimDestroy(SgSim *sim)
{
  PetscErrorCode failed = PETSC_SUCCESS;

  PetscFunctionBegin;
  if (!*sim) PetscFunctionReturn(PETSC_SUCCESS);
  if (--((PetscObject)(*sim))->refct > 0) {
    *sim = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((*sim)->out) { /* closing flushes: on a full disk that fails too, and is reported once */
    SgErrorHold    held;
    PetscErrorCode ierr;
    PetscCall(SgErrorHoldPush(&held));
    ierr = SgOutputDestroy(&(*sim)->out);
    PetscCall(SgErrorHoldPop());
    if (ierr && !(*sim)->failed) failed = OutputFailed(*sim, ierr, &held); /* returned once the rest is freed */
  }
  DiscardStaged(*sim, PETSC_FALSE); /* an error ended a staged run: the earlier output stays, its temporaries go */
  SgWriteLockRelease((*sim)->output, &(*sim)->lockfd);
  PetscCall(SgSolverDestroy(&(*sim)->solver));
  PetscCall(PetscFree((*sim)->diag));
  PetscCall(PetscFree((*sim)->config));
  PetscCall(PetscHeaderDestroy(sim));
  PetscCall(failed);
  PetscFunctionReturn(PETSC_SUCCESS);
}
