/* SgEnsemble: run perturbed members of a deck on sub-communicators, gather them into one dataset.
   See sgensemble.h for the protocol (markers, resume, atomic dataset) and docs/ensemble.md. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <petsc/private/petscimpl.h>
#include "sgensemble.h"
#include "sgdataset.h"
#include "sgh5file.h"
#include "sgh5md.h"
#include "sgoutput.h"
#include "sgwrite.h"
#include "sgclaim.h"
#include <sys/file.h>
#include <fcntl.h>

#define SG_ENS_MAX_PARAMS 16
#define SG_ENS_MAX_FIELDS 16

static PetscClassId SG_ENSEMBLE_CLASSID;
struct _SgEnsembleOps {
  int dummy;
};

typedef enum { SG_CONTRIB_FIELDS, SG_CONTRIB_MD_FRAMES } SgContribution;
static const char *const contributions[] = {"fields", "md_frames"};

struct _p_SgEnsemble {
  PETSCHEADER(struct _SgEnsembleOps);
  char           deck[PETSC_MAX_PATH_LEN];
  int            argc;
  char         **argv;
  PetscInt       members, ranks_per_member, nvary, npoints, nfields;
  SgSamplerType  sampler;
  PetscInt       seed;
  char          *vary[SG_ENS_MAX_PARAMS], *fields[SG_ENS_MAX_FIELDS];
  PetscReal      lo[SG_ENS_MAX_PARAMS], hi[SG_ENS_MAX_PARAMS];
  PetscInt       points[SG_ENS_MAX_PARAMS];
  char           output[PETSC_MAX_PATH_LEN], memberdir[PETSC_MAX_PATH_LEN + 16], seed_option[256];
  SgContribution contribution;
  PetscReal     *params; /* members x nvary */
  char           fingerprint[32]; /* of the options that fix the members' content (Fingerprint) */
  PetscBool      rerun_stale;
  PetscReal      claim_stale; /* seconds without a heartbeat after which another job's member claim is taken over */
};

PetscErrorCode SgEnsembleCreate(MPI_Comm comm, SgEnsemble *ens)
{
  SgEnsemble e;

  PetscFunctionBegin;
  if (!SG_ENSEMBLE_CLASSID) PetscCall(PetscClassIdRegister("SgEnsemble", &SG_ENSEMBLE_CLASSID));
  PetscCall(PetscHeaderCreate(e, SG_ENSEMBLE_CLASSID, "SgEnsemble", "Ensemble of runs", "SgEnsemble", comm, SgEnsembleDestroy, NULL));
  e->members          = 1;
  e->ranks_per_member = 1;
  e->sampler          = SG_SAMPLER_LHS;
  e->seed             = 1;
  e->claim_stale      = 300;
  *ens                = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgEnsembleSetDeck(SgEnsemble e, const char deck[], int argc, char **argv)
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(e->deck, deck, sizeof e->deck));
  e->argc = argc;
  e->argv = argv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Options that do not change what a member computes or where the ensemble's members live. */
static const char *const NotContent[] = {"ensemble_output", "ensemble_ranks_per_member", "ensemble_rerun_stale", "ensemble_claim_stale", NULL};

/* The fingerprint of the effective configuration (SgConfigFingerprint: every option after the
   command line's overrides, seeds included, and the identity of every input file an option's value
   names): a member marked done is reused only by a rerun whose fingerprint is the same -- not after
   an option, or the model or data a deck reads, has changed. */
static PetscErrorCode Fingerprint(SgEnsemble e)
{
  PetscFunctionBegin;
  PetscCall(SgConfigFingerprint(PetscObjectComm((PetscObject)e), e->deck, NULL, NotContent, e->fingerprint, sizeof e->fingerprint));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgEnsembleSetFromOptions(SgEnsemble e)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)e);
  PetscInt    nlo = SG_ENS_MAX_PARAMS, nhi = SG_ENS_MAX_PARAMS, idx = e->sampler, cidx = 0;
  PetscBool   set, points_set;
  PetscMPIInt size;
  char        base[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  { /* default dataset name: the deck's file name without directory and extension, + "_ensemble" */
    const char *slash = strrchr(e->deck, '/');
    char       *dot;
    PetscCall(PetscStrncpy(base, slash ? slash + 1 : e->deck, sizeof base));
    dot = strrchr(base, '.');
    if (dot && dot != base) *dot = 0;
    PetscCall(PetscStrlcat(base, "_ensemble", sizeof base));
  }
  e->nvary = SG_ENS_MAX_PARAMS;
  e->npoints = SG_ENS_MAX_PARAMS;
  e->nfields = SG_ENS_MAX_FIELDS;
  PetscOptionsBegin(comm, "ensemble_", "Ensemble generation (deck section ensemble:)", "SgEnsemble");
  PetscCall(SgOptionsInt("-members", "Number of members", e->members, &e->members, NULL, 1, 1000000));
  PetscCall(SgOptionsEList("-sampler", "How parameters are sampled: grid, uniform (random), lhs (Latin hypercube)", SgSamplerTypes, 3, SgSamplerTypes[e->sampler], &idx, NULL));
  e->sampler = (SgSamplerType)idx;
  PetscCall(SgOptionsInt("-seed", "Seed of the uniform and lhs samplers", e->seed, &e->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-ranks_per_member", "MPI ranks that run one member together (must divide the rank count)", e->ranks_per_member, &e->ranks_per_member, NULL, 1, 1 << 20));
  PetscCall(SgOptionsStringArray("-vary", "Options to perturb, without the dash (e.g. heat_kappa)", e->vary, &e->nvary, &set));
  if (!set) e->nvary = 0;
  PetscCall(SgOptionsRealArray("-lower", "Lower end of each varied option's range", "the option's units", e->lo, &nlo, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsRealArray("-upper", "Upper end of each varied option's range", "the option's units", e->hi, &nhi, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsIntArray("-points", "Grid sampler: points per varied option (members = their product)", e->points, &e->npoints, &points_set, 1, 1 << 20));
  PetscCall(SgOptionsString("-seed_option", "Option (without dash) that receives a distinct seed per member, e.g. md_seed", e->seed_option, e->seed_option, sizeof e->seed_option, NULL));
  PetscCall(SgOptionsPath("-output", "Dataset base name: writes BASE.h5 and member files under BASE.members/", SG_PATH_OUT_BASE, base, e->output, sizeof e->output, &set));
  if (!set) PetscCall(PetscStrncpy(e->output, base, sizeof e->output));
  PetscCall(SgOptionsEList("-contribute", "What each member adds to the dataset: fields (every field snapshot) or md_frames (every MD trajectory frame)", contributions, 2, contributions[0], &cidx, NULL));
  e->contribution = (SgContribution)cidx;
  PetscCall(SgOptionsStringArray("-fields", "Fields whose snapshots become samples (names as in the run's /fields)", e->fields, &e->nfields, &set));
  if (!set) e->nfields = 0;
  PetscCall(SgOptionsBool("-rerun_stale", "Rerun members done under other options (deck, overrides, seeds) instead of refusing to mix them", e->rerun_stale, &e->rerun_stale, NULL));
  PetscCall(SgOptionsReal("-claim_stale", "A member claimed by another job whose claim was not refreshed for this long is taken over (jobs sharing one ensemble directory refresh theirs every claim_stale/5)", "s", e->claim_stale, &e->claim_stale, NULL, 10, 1e9));
  PetscOptionsEnd();
  PetscCall(Fingerprint(e));

  PetscCheck(nlo == e->nvary && nhi == e->nvary, comm, PETSC_ERR_USER_INPUT, "ensemble vary has %" PetscInt_FMT " options but lower has %" PetscInt_FMT " and upper %" PetscInt_FMT " values: give one range per varied option", e->nvary, nlo, nhi);
  for (PetscInt j = 0; j < e->nvary; j++) {
    PetscCheck(e->lo[j] <= e->hi[j], comm, PETSC_ERR_USER_INPUT, "ensemble range of %s is empty: lower %g > upper %g", e->vary[j], (double)e->lo[j], (double)e->hi[j]);
    PetscCheck(strncmp(e->vary[j], "sim_", 4) && strcmp(e->vary[j], "restart"), comm, PETSC_ERR_USER_INPUT, "ensemble vary: %s is run control, not a physical parameter; vary solver options", e->vary[j]);
  }
  PetscCheck(e->nvary > 0 || e->seed_option[0], comm, PETSC_ERR_USER_INPUT, "ensemble: nothing distinguishes the members: set vary (with lower/upper) or seed_option");
  if (e->sampler == SG_SAMPLER_GRID) {
    PetscCheck(points_set && e->npoints == e->nvary, comm, PETSC_ERR_USER_INPUT, "ensemble sampler grid needs points: one count per varied option (%" PetscInt_FMT ")", e->nvary);
  }
  PetscCheck(e->contribution != SG_CONTRIB_FIELDS || e->nfields > 0, comm, PETSC_ERR_USER_INPUT, "ensemble contribute fields needs 'fields: [name, ...]' naming the fields to gather");
  if (e->contribution != SG_CONTRIB_FIELDS) { /* samples the member's solver writes itself: ask its type now */
    char      solver[64] = "", able[256] = "", known[512], *tok, *save = NULL;
    PetscBool isset, can = PETSC_FALSE;
    PetscInt  nable = 0;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-sim_solver", solver, sizeof solver, &isset));
    if (isset) PetscCall(SgSolverTypeContributes(solver, contributions[e->contribution], &can));
    if (!can) {
      PetscCall(SgFunctionListNames(SgSolverList, known, sizeof known));
      for (tok = strtok_r(known, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        PetscBool c;
        PetscCall(SgSolverTypeContributes(tok, contributions[e->contribution], &c));
        if (!c) continue;
        if (nable++) PetscCall(PetscStrlcat(able, ", ", sizeof able));
        PetscCall(PetscStrlcat(able, tok, sizeof able));
      }
      SETERRQ(comm, PETSC_ERR_USER_INPUT, "ensemble contribute %s: the deck's solver must be %s%s (sim: {solver: ...}), not '%s'", contributions[e->contribution], nable > 1 ? "one of " : "", able, solver);
    }
    PetscCheck(e->nfields == 0, comm, PETSC_ERR_USER_INPUT, "ensemble fields applies to contribute fields; contribute %s takes every sample the solver writes (e.g. md: {traj_every: K} for the cadence)", contributions[e->contribution]);
  }
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(size % e->ranks_per_member == 0, comm, PETSC_ERR_USER_INPUT, "ensemble ranks_per_member = %" PetscInt_FMT " does not divide the %d ranks of this run", e->ranks_per_member, size);
  PetscCall(PetscSNPrintf(e->memberdir, sizeof e->memberdir, "%s.members", e->output));

  PetscCall(PetscMalloc1(e->members * PetscMax(e->nvary, 1), &e->params));
  if (e->nvary) {
    PetscReal *u;
    PetscCall(PetscMalloc1(e->members * e->nvary, &u));
    PetscCall(SgSamplerUnitPoints(e->sampler, e->members, e->nvary, e->points, (uint64_t)e->seed, u));
    for (PetscInt m = 0; m < e->members; m++)
      for (PetscInt j = 0; j < e->nvary; j++) e->params[m * e->nvary + j] = e->lo[j] + u[m * e->nvary + j] * (e->hi[j] - e->lo[j]);
    PetscCall(PetscFree(u));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MemberPath(SgEnsemble e, PetscInt m, const char ext[], char path[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, len, "%s/member_%05" PetscInt_FMT "%s", e->memberdir, m, ext));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The file of a member's solver-written samples: BASE + the extension of the kind's format. */
static const char *SampleExtension(SgEnsemble e)
{
  return e->contribution == SG_CONTRIB_MD_FRAMES ? ".h5md" : ".h5";
}

/* While a member runs, a user-class error (a bad sampled value, an unreadable input) is kept quiet:
   the ensemble reports it once, on every rank, after all groups have stopped. Anything else is a bug
   and keeps PETSc's trace (and the abort below). */
static PetscErrorCode MemberErrorHandler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  if (SgErrorIsUserClass(n)) return n;
  return PetscTraceBackErrorHandler(comm, line, fun, file, n, p, mess, ctx);
}

/* One member: set its options, run an ordinary simulation on the group's communicator. A member
   stopped by a signal in an earlier run of this ensemble (resume) continues from its checkpoint; one
   stopped now by a signal (stopsig.c: the group's ranks agree at a step) has written its checkpoint
   and returns *stopped = step. */
static PetscErrorCode RunMember(SgEnsemble e, MPI_Comm group, PetscInt m, PetscBool resume, PetscInt *stopped)
{
  char  name[64], value[64], base[PETSC_MAX_PATH_LEN + 32], chk[PETSC_MAX_PATH_LEN + 40];
  SgSim sim;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < e->nvary; j++) {
    PetscCall(PetscSNPrintf(name, sizeof name, "-%s", e->vary[j]));
    PetscCall(PetscSNPrintf(value, sizeof value, "%.17g", (double)e->params[m * e->nvary + j]));
    PetscCall(PetscOptionsSetValue(NULL, name, value));
  }
  if (e->seed_option[0]) {
    PetscCall(PetscSNPrintf(name, sizeof name, "-%s", e->seed_option));
    PetscCall(PetscSNPrintf(value, sizeof value, "%" PetscInt_FMT, (PetscInt)(SgRandomBits((uint64_t)e->seed, 7, (uint64_t)m) % 2147483647u)));
    PetscCall(PetscOptionsSetValue(NULL, name, value));
  }
  PetscCall(MemberPath(e, m, "", base, sizeof base));
  PetscCall(PetscOptionsSetValue(NULL, "-sim_output", base));
  PetscCall(MemberPath(e, m, ".chk.h5", chk, sizeof chk));
  if (resume) PetscCall(PetscOptionsSetValue(NULL, "-restart", chk));
  else PetscCall(PetscOptionsClearValue(NULL, "-restart")); /* not the previous member's */
  PetscCall(SgSimCreate(group, &sim));
  PetscCall(SgSimSetQuiet(sim, PETSC_TRUE));
  PetscCall(SgSimSetStopOnSignal(sim, PETSC_TRUE));
  PetscCall(SgSimSetDeck(sim, e->deck, e->argc, e->argv));
  PetscCall(SgSimSetFromOptions(sim));
  if (e->contribution != SG_CONTRIB_FIELDS) { /* each member its own sample file: BASE + the kind's extension */
    char     file[PETSC_MAX_PATH_LEN + 40];
    SgSolver solver;
    PetscCall(MemberPath(e, m, SampleExtension(e), file, sizeof file));
    PetscCall(SgSimGetSolver(sim, &solver));
    PetscCall(SgSolverContribute(solver, contributions[e->contribution], file));
  }
  PetscCall(SgSimSetUp(sim));
  PetscCall(SgSimRun(sim));
  PetscCall(SgSimGetStopped(sim, stopped));
  PetscCall(SgSimDestroy(&sim));
  PetscCall(PetscOptionsClearValue(NULL, "-restart"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The member's marker, written by the group leader after the member's files are complete, through
   the write path (sgwrite.h: MARKER.tmp renamed into place; first line "# surge-file: ensemble member
   marker", then the record). */
static PetscErrorCode WriteMarker(SgEnsemble e, PetscInt m, PetscReal seconds, PetscInt stopped)
{
  char       path[PETSC_MAX_PATH_LEN + 32];
  SgTextFile tf;
  FILE      *fp;

  PetscFunctionBegin;
  /* a member stopped by a signal gets BASE.members/member_N.stop (its checkpoint is the member's
     .chk.h5): a rerun with the same fingerprint continues it from there (ClaimMember) */
  PetscCall(MemberPath(e, m, stopped ? ".stop" : ".done", path, sizeof path));
  PetscCall(SgTextFileOpen("-ensemble_output", path, SG_FILE_ENSEMBLE_MARKER, "#", PETSC_FALSE, &tf));
  PetscCall(SgTextFileGetFILE(tf, &fp));
  if (stopped) fprintf(fp, "member %" PetscInt_FMT " stopped at step %" PetscInt_FMT " params", m, stopped);
  else fprintf(fp, "member %" PetscInt_FMT " seconds %.3f params", m, (double)seconds);
  for (PetscInt j = 0; j < e->nvary; j++) fprintf(fp, " %s=%.17g", e->vary[j], (double)e->params[m * e->nvary + j]);
  fprintf(fp, " fingerprint %s\n", e->fingerprint);
  PetscCall(SgTextFileClose(&tf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gather every member's field snapshots into one field_snapshots dataset, through the write path
   (SgDatasetCreate: OUT.h5.tmp, renamed over OUT.h5 by SgDatasetClose; checked against the run's
   inputs and other kinds of file before the first member ran). Rank 0 alone; member files are read
   with the serial HDF5 driver. */
static PetscErrorCode MergeMDFrames(SgEnsemble, const char out[], const char decktext[], const char source[]);

static PetscErrorCode MergeInto(SgEnsemble e)
{
  SgDataset  ds;
  char       out[PETSC_MAX_PATH_LEN + 8], path[PETSC_MAX_PATH_LEN + 32], source[512];
  char      *decktext = NULL;
  int64_t    rowelems[SG_ENS_MAX_FIELDS];
  PetscInt64 dims[SG_ENS_MAX_FIELDS][4];
  int        ndims[SG_ENS_MAX_FIELDS];
  const char *const *param_names = (const char *const *)e->vary;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(out, sizeof out, "%s.h5", e->output));
  { /* the deck's text, as provenance */
    FILE *fp = fopen(e->deck, "rb");
    long  n  = 0;
    if (fp) {
      fseek(fp, 0, SEEK_END);
      n = ftell(fp);
      fseek(fp, 0, SEEK_SET);
      PetscCall(PetscMalloc1(n + 1, &decktext));
      n           = (long)fread(decktext, 1, (size_t)n, fp);
      decktext[n] = 0;
      fclose(fp);
    }
  }
  PetscCall(PetscSNPrintf(source, sizeof source, "surge ensemble: %" PetscInt_FMT " members, sampler %s, seed %" PetscInt_FMT ", fingerprint %s", e->members, SgSamplerTypes[e->sampler], e->seed, e->fingerprint));
  if (e->contribution == SG_CONTRIB_MD_FRAMES) {
    PetscCall(MergeMDFrames(e, out, decktext, source));
    PetscCall(PetscFree(decktext));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SgDatasetCreate(PETSC_COMM_SELF, out, "field_snapshots", PETSC_TRUE, &ds)); /* OUT.h5.tmp (an interrupted merge's is replaced) */
  PetscCall(SgDatasetSetProvenance(ds, decktext, source));
  PetscCall(PetscFree(decktext));
  { /* the solver's numeric parameters after the command line's overrides (the deck's text alone would
       give the deck's value of an option overridden on the command line), less what the members vary:
       a model trained on the dataset records them (POD-LSTM's trained_physics) */
    char        solver[64] = "", prefix[72], rec[1024];
    const char *skip[SG_ENS_MAX_PARAMS + 2];
    PetscInt    ns = 0;
    PetscBool   set;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-sim_solver", solver, sizeof solver, &set));
    for (PetscInt j = 0; j < e->nvary; j++) skip[ns++] = e->vary[j];
    if (e->seed_option[0]) skip[ns++] = e->seed_option;
    skip[ns] = NULL;
    if (set && solver[0]) {
      PetscCall(PetscSNPrintf(prefix, sizeof prefix, "%s_", solver));
      PetscCall(SgConfigRecord(prefix, skip, rec, sizeof rec));
      PetscCall(SgDatasetSetProvenanceItem(ds, "physics", rec));
    }
  }

  for (PetscInt m = 0; m < e->members; m++) {
    SgH5File f;
    PetscInt nsnap = 0;
    char     d[300];

    PetscCall(MemberPath(e, m, ".h5", path, sizeof path));
    PetscCall(SgH5FileOpen(path, &f));
    for (PetscInt i = 0; i < e->nfields; i++) {
      PetscBool has;
      PetscCall(PetscSNPrintf(d, sizeof d, "/fields/%s", e->fields[i]));
      PetscCall(SgH5FileHas(f, d, &has));
      PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "ensemble fields: member file %s has no field '%s' (check ensemble fields against the solver's output: surge info %s)", path, e->fields[i], path);
    }
    for (PetscBool has = PETSC_TRUE; has; nsnap++) { /* snapshots are numbered 0.. without gaps */
      PetscCall(PetscSNPrintf(d, sizeof d, "/fields/%s/%" PetscInt_FMT, e->fields[0], nsnap));
      PetscCall(SgH5FileHas(f, d, &has));
      if (!has) break;
    }
    if (m == 0) { /* the first member fixes the sample shapes */
      for (PetscInt i = 0; i < e->nfields; i++) {
        PetscInt   shape[4], rank;
        PetscInt64 dd[SG_H5_MAXDIM];
        PetscCall(PetscSNPrintf(d, sizeof d, "/fields/%s/0", e->fields[i]));
        PetscCall(SgH5FileGetDims(f, d, &rank, dd));
        PetscCheck(rank >= 1 && rank <= 4, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%s has rank %" PetscInt_FMT, path, d, rank);
        ndims[i]     = (int)rank;
        rowelems[i]  = 1;
        for (int k = 0; k < ndims[i]; k++) {
          dims[i][k] = dd[k];
          shape[k]   = (PetscInt)dd[k];
          rowelems[i] *= (int64_t)dd[k];
        }
        PetscCall(SgDatasetDefineField(ds, e->fields[i], SG_DTYPE_F64, ndims[i], shape, "", 0));
      }
      PetscCall(SgDatasetDefineField(ds, "time", SG_DTYPE_F64, 0, NULL, "simulation time", 0));
      PetscCall(SgDatasetDefineField(ds, "member", SG_DTYPE_I64, 0, NULL, "ensemble member id", 0));
      if (e->nvary) {
        PetscCall(SgDatasetDefineField(ds, "params", SG_DTYPE_F64, 1, &e->nvary, "member parameters, see /static/param_names", 0));
        PetscCall(SgDatasetSetParamNames(ds, e->nvary, param_names));
      }
    }
    if (nsnap) {
      double  *buf, *times, *params;
      int64_t *member;
      PetscCall(SgDatasetAppendBegin(ds, nsnap));
      for (PetscInt i = 0; i < e->nfields; i++) {
        PetscCall(PetscMalloc1(nsnap * rowelems[i], &buf));
        for (PetscInt k = 0; k < nsnap; k++) {
          PetscInt   rank;
          PetscInt64 kd[SG_H5_MAXDIM];
          PetscBool  has;
          PetscCall(PetscSNPrintf(d, sizeof d, "/fields/%s/%" PetscInt_FMT, e->fields[i], k));
          PetscCall(SgH5FileHas(f, d, &has));
          PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: field %s lacks snapshot %" PetscInt_FMT " that %s has", path, e->fields[i], k, e->fields[0]);
          PetscCall(SgH5FileGetDims(f, d, &rank, kd));
          for (int q = 0; q < ndims[i]; q++) PetscCheck(rank == ndims[i] && kd[q] == dims[i][q], PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "ensemble: member %" PetscInt_FMT " field %s has another shape than member 0: vary only options that keep the grid", m, e->fields[i]);
          PetscCall(SgH5FileRead(f, d, SG_H5_DOUBLE, rowelems[i], buf + k * rowelems[i]));
        }
        PetscCall(SgDatasetAppendField(ds, e->fields[i], SG_DTYPE_F64, buf));
        PetscCall(PetscFree(buf));
      }
      PetscCall(PetscMalloc3(nsnap, &times, nsnap, &member, nsnap * PetscMax(e->nvary, 1), &params));
      for (PetscInt k = 0; k < nsnap; k++) {
        PetscCall(PetscSNPrintf(d, sizeof d, "/fields/%s/%" PetscInt_FMT, e->fields[0], k));
        PetscCall(SgH5FileReadAttr(f, d, "time", SG_H5_DOUBLE, 1, &times[k], NULL));
        member[k] = m;
        for (PetscInt j = 0; j < e->nvary; j++) params[k * e->nvary + j] = e->params[m * e->nvary + j];
      }
      PetscCall(SgDatasetAppendField(ds, "time", SG_DTYPE_F64, times));
      PetscCall(SgDatasetAppendField(ds, "member", SG_DTYPE_I64, member));
      if (e->nvary) PetscCall(SgDatasetAppendField(ds, "params", SG_DTYPE_F64, params));
      PetscCall(SgDatasetAppendCommit(ds));
      PetscCall(PetscFree3(times, member, params));
    }
    PetscCall(SgH5FileClose(&f));
  }
  PetscCall(SgDatasetClose(&ds)); /* commits OUT.h5.tmp to OUT.h5 */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A merge that failed leaves the earlier OUT.h5 (if any) and no OUT.h5.tmp. */
static PetscErrorCode Merge(SgEnsemble e)
{
  PetscErrorCode ierr = MergeInto(e);
  char           out[PETSC_MAX_PATH_LEN + 8], tmp[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  if (ierr) {
    PetscCall(PetscSNPrintf(out, sizeof out, "%s.h5", e->output));
    PetscCall(SgWriteTempName(out, tmp, sizeof tmp));
    PetscCall(SgWriteDiscard(tmp));
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Each member's MD trajectory (the file its solver named when asked to contribute md_frames, H5MD)
   gives one md_frames sample per frame: coord, box, energy, force, virial, with the member id and its
   parameters. The first member fixes the atoms (count, types, type names); every other member must
   have the same (vary temperature, density, seeds - not the structure). Rank 0 alone. */
static PetscErrorCode MergeMDFrames(SgEnsemble e, const char out[], const char decktext[], const char source[])
{
  SgDataset ds   = NULL;
  PetscInt  N0   = -1, *type0 = NULL, nt0 = 0;
  char    **names0 = NULL;

  PetscFunctionBegin;
  for (PetscInt m = 0; m < e->members; m++) {
    char         path[PETSC_MAX_PATH_LEN + 32];
    SgH5MDFrames fr;
    PetscInt     N, F;
    PetscReal   *params;
    int64_t     *member;

    PetscCall(MemberPath(e, m, SampleExtension(e), path, sizeof path));
    PetscCall(SgH5MDReadFrames(path, PETSC_TRUE, &fr));
    N = fr.N;
    F = fr.F;
    if (m == 0) {
      PetscCall(PetscMalloc1(N, &type0));
      for (PetscInt i = 0; i < N; i++) type0[i] = fr.species[i];
      N0  = N;
      nt0 = fr.ntypes;
      PetscCall(PetscMalloc1(nt0, &names0));
      for (PetscInt t = 0; t < nt0; t++) PetscCall(PetscStrallocpy(fr.names[t], &names0[t]));
      PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, out, PETSC_TRUE, N, type0, nt0, (const char *const *)names0, SG_DTYPE_F64, PETSC_TRUE, e->nvary, (const char *const *)e->vary, &ds));
      PetscCall(SgDatasetSetProvenance(ds, decktext, source));
      /* the trajectory's units label the fields: metal runs match the md_frames default (Angstrom,
         eV), lj runs are relabelled sigma, epsilon */
      if (strcmp(fr.length_unit, "Angstrom") || strcmp(fr.energy_unit, "eV")) PetscCall(SgDatasetSetMDFramesUnits(ds, fr.length_unit, fr.energy_unit));
    } else {
      PetscBool same = (N == N0 && fr.ntypes == nt0) ? PETSC_TRUE : PETSC_FALSE;
      for (PetscInt i = 0; same && i < N; i++) same = fr.species[i] == type0[i] ? PETSC_TRUE : PETSC_FALSE;
      for (PetscInt t = 0; same && t < nt0; t++) same = strcmp(fr.names[t], names0[t]) ? PETSC_FALSE : PETSC_TRUE;
      PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "ensemble md_frames: member %" PetscInt_FMT " has %" PetscInt_FMT " atoms of %" PetscInt_FMT " types (%s...) but member 0 has %" PetscInt_FMT " atoms of %" PetscInt_FMT " types (%s...), or the atoms' types differ: one md_frames dataset needs the same atoms in the same order in every member; vary temperature, density (lattice constant) or seeds, not the structure", m, N, fr.ntypes, fr.ntypes ? fr.names[0] : "", N0, nt0, nt0 ? names0[0] : "");
    }
    if (F) {
      PetscCall(PetscMalloc2(F, &member, F * PetscMax(e->nvary, 1), &params));
      for (PetscInt k = 0; k < F; k++) {
        member[k] = m;
        for (PetscInt j = 0; j < e->nvary; j++) params[k * e->nvary + j] = e->params[m * e->nvary + j];
      }
      PetscCall(SgDatasetAppendBegin(ds, F));
      PetscCall(SgDatasetAppendField(ds, "coord", SG_DTYPE_F64, fr.coord));
      PetscCall(SgDatasetAppendField(ds, "box", SG_DTYPE_F64, fr.box));
      PetscCall(SgDatasetAppendField(ds, "energy", SG_DTYPE_F64, fr.energy));
      PetscCall(SgDatasetAppendField(ds, "force", SG_DTYPE_F64, fr.force));
      PetscCall(SgDatasetAppendField(ds, "virial", SG_DTYPE_F64, fr.virial));
      PetscCall(SgDatasetAppendField(ds, "member", SG_DTYPE_I64, member));
      if (e->nvary) PetscCall(SgDatasetAppendField(ds, "params", SG_DTYPE_F64, params));
      PetscCall(SgDatasetAppendCommit(ds));
      PetscCall(PetscFree2(member, params));
    }
    PetscCall(SgH5MDFramesDestroy(&fr));
  }
  PetscCall(SgDatasetClose(&ds));
  for (PetscInt t = 0; t < nt0; t++) PetscCall(PetscFree(names0[t]));
  PetscCall(PetscFree(names0));
  PetscCall(PetscFree(type0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* BASE.log for the first ensemble process on this directory (it holds BASE.members/log.lock until it
   exits, after the log is committed); a second one running at the same time (another job of an array
   sharing the directory) writes BASE.HOST-PID.log instead of interleaving with it. */
static PetscErrorCode OpenLog(SgEnsemble e, MPI_Comm comm)
{
  char        base[PETSC_MAX_PATH_LEN + 300], lock[PETSC_MAX_PATH_LEN + 32];
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscStrncpy(base, e->output, sizeof base));
  if (!rank) {
    int fd;
    PetscCall(PetscSNPrintf(lock, sizeof lock, "%s/log.lock", e->memberdir));
    fd = open(lock, O_CREAT | O_RDWR, 0644); /* left open on purpose: the lock lasts as long as the process */
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB)) {
      char host[256] = "host";
      if (fd >= 0) close(fd);
      (void)gethostname(host, sizeof host - 1);
      PetscCall(PetscSNPrintf(base, sizeof base, "%s.%s-%ld", e->output, host, (long)getpid()));
    }
  }
  PetscCallMPI(MPI_Bcast(base, (int)sizeof base, MPI_CHAR, 0, comm));
  PetscCall(SgRunLogOpen(comm, "-ensemble_output", base, PETSC_TRUE)); /* a resumed ensemble continues it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a member's marker (.done, .stop) was written under this ensemble's fingerprint: the
   record is the first line that is not a comment (the kind's), its fingerprint compared exactly. */
static PetscBool MarkerIsOurs(SgEnsemble e, const char marker[])
{
  char        line[4096] = "";
  const char *f;
  FILE       *fp = fopen(marker, "r");

  if (!fp) return PETSC_FALSE;
  while (fgets(line, sizeof line, fp) && line[0] == '#') line[0] = 0;
  if (line[0] == '#') line[0] = 0;
  fclose(fp);
  f = strstr(line, " fingerprint ");
  return f && !strncmp(f + 13, e->fingerprint, strlen(e->fingerprint)) ? PETSC_TRUE : PETSC_FALSE;
}

/* The group leader's claim on member m (claim.c): none when another job holds it or has finished it
   meanwhile. With the claim, the member's files left by an interrupted run of it are removed -- but
   for a member stopped by a signal under this fingerprint (its .stop marker and committed checkpoint
   present), which resumes from the checkpoint (only the temporaries go). */
static PetscErrorCode ClaimMember(SgEnsemble e, PetscInt m, PetscBool *got, PetscBool *resume, char owner[], size_t len)
{
  char claim[PETSC_MAX_PATH_LEN + 32], marker[PETSC_MAX_PATH_LEN + 32], stop[PETSC_MAX_PATH_LEN + 32], chk[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  PetscCall(MemberPath(e, m, ".claim", claim, sizeof claim));
  PetscCall(MemberPath(e, m, ".done", marker, sizeof marker));
  PetscCall(SgClaimTry(claim, e->claim_stale, got, owner, len));
  if (!*got) PetscFunctionReturn(PETSC_SUCCESS);
  if (!access(marker, F_OK)) { /* done by another job between our scan and our claim */
    SgClaimRelease(claim);
    *got = PETSC_FALSE;
    PetscCall(PetscStrncpy(owner, "done by another job", len));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MemberPath(e, m, ".stop", stop, sizeof stop));
  PetscCall(MemberPath(e, m, ".chk.h5", chk, sizeof chk));
  *resume = MarkerIsOurs(e, stop) && !access(chk, F_OK) ? PETSC_TRUE : PETSC_FALSE;
  {
    const char *const ext[] = {".h5.tmp", ".xmf.tmp", ".chk.h5.tmp", ".h5md.tmp", ".h5", ".xmf", ".chk.h5", ".h5md", ".stop"};
    for (int k = 0; k < (*resume ? 4 : 9); k++) {
      char f[PETSC_MAX_PATH_LEN + 32];
      PetscCall(MemberPath(e, m, ext[k], f, sizeof f));
      (void)unlink(f);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgEnsembleRun(SgEnsemble e)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)e), group;
  PetscMPIInt    rank, size, grank;
  PetscInt       nrun = 0, *torun, done_here = 0, ngroups;
  MPI_Win        win;
  SgClaimBeat    beat = NULL;
  char           claim[PETSC_MAX_PATH_LEN + 32];
  PetscInt       missing = 0, ran = 0, nstopped = 0;
  long          *counter;
  PetscLogDouble t0, t1, busy = 0, busy_all;
  PetscInt       fail_member = -1;
  PetscErrorCode fail_code   = 0;
  char           fail_msg[1024] = "";
  const char *const out_suffix[] = {".h5"}; /* BASE.members/ sits in the same folder */
  char              stale[PETSC_MAX_PATH_LEN + 64] = ""; /* the first member done under other options */
  PetscMPIInt       current = 0; /* the dataset exists and was merged by this ensemble (same fingerprint) */

  PetscFunctionBegin;
  PetscCall(SgOutputCheckPath(comm, "-ensemble_output", e->output, 1, out_suffix));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  ngroups = size / e->ranks_per_member;
  PetscCall(PetscMalloc1(e->members, &torun));
  if (!rank) { /* resume: members with a marker are done -- if their fingerprint is this run's */
    PetscCheck(!mkdir(e->memberdir, 0775) || errno == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot create %s: %s", e->memberdir, strerror(errno));
    for (PetscInt m = 0; m < e->members; m++) {
      char marker[PETSC_MAX_PATH_LEN + 32];
      PetscCall(MemberPath(e, m, ".done", marker, sizeof marker));
      if (access(marker, F_OK)) {
        torun[nrun++] = m;
        continue;
      }
      if (MarkerIsOurs(e, marker)) continue;
      if (e->rerun_stale) {
        (void)unlink(marker);
        torun[nrun++] = m;
      } else if (!stale[0]) PetscCall(PetscSNPrintf(stale, sizeof stale, "%s", marker));
    }
  }
  PetscCallMPI(MPI_Bcast(stale, (int)sizeof stale, MPI_CHAR, 0, comm));
  if (stale[0]) PetscCall(PetscFree(torun));
  PetscCheck(!stale[0], comm, PETSC_ERR_FILE_OPEN, "member %s was computed with other options (deck, command-line overrides or seeds) or other contents of the files it reads than this run: remove %s or choose another -ensemble_output to keep both, or pass -ensemble_rerun_stale to redo such members", stale, e->memberdir);
  { /* the dataset: never an input, never another kind of file, and an existing ensemble dataset only
       if it is this ensemble's (same fingerprint; -overwrite replaces any) */
    char out[PETSC_MAX_PATH_LEN + 8], msg[2 * PETSC_MAX_PATH_LEN] = "";
    PetscCall(PetscSNPrintf(out, sizeof out, "%s.h5", e->output));
    PetscCall(SgWriteCheck(comm, "-ensemble_output", out, SG_FILE_DATASET));
    if (!rank && !access(out, F_OK)) {
      PetscBool overwrite;
      SgDataset ds;
      char     *src = NULL;
      PetscCall(SgPathsGetOverwrite(&overwrite));
      PetscCall(SgDatasetOpen(PETSC_COMM_SELF, out, SG_DATASET_READ, &ds));
      PetscCall(SgDatasetGetProvenance(ds, "source", &src));
      PetscCall(SgDatasetClose(&ds));
      if (!overwrite && (!src || !strstr(src, e->fingerprint)) && !(e->rerun_stale && src && !strncmp(src, "surge ensemble:", 15))) PetscCall(PetscSNPrintf(msg, sizeof msg, "-ensemble_output '%s' is a dataset this ensemble did not write (other deck, options or seed): choose another -ensemble_output, remove it, or pass -overwrite to replace it", out));
      current = src && strstr(src, e->fingerprint) ? 1 : 0;
      PetscCall(PetscFree(src));
    }
    PetscCallMPI(MPI_Bcast(&current, 1, MPI_INT, 0, comm));
    PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
    if (msg[0]) PetscCall(PetscFree(torun));
    PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg);
  }
  PetscCallMPI(MPI_Bcast(&nrun, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(torun, (PetscMPIInt)nrun, MPIU_INT, 0, comm));
  PetscCall(OpenLog(e, comm));
  PetscCall(PetscPrintf(comm, "surge ensemble: %" PetscInt_FMT " members (%" PetscInt_FMT " to run, %" PetscInt_FMT " already done), %" PetscInt_FMT " groups of %" PetscInt_FMT " rank(s), sampler %s\n", e->members, nrun, e->members - nrun, ngroups, e->ranks_per_member, SgSamplerTypes[e->sampler]));

  PetscCallMPI(MPI_Comm_split(comm, rank / (PetscMPIInt)e->ranks_per_member, rank, &group));
  PetscCallMPI(MPI_Comm_rank(group, &grank));
  /* the shared counter: members are taken in order by whichever group is free first */
  PetscCallMPI(MPI_Win_allocate(rank ? 0 : (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &counter, &win));
  if (!rank) *counter = 0;
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t0));
  /* SIGTERM/SIGUSR1 (a batch system's warning before a time limit) stop the ensemble cleanly: the
     running members checkpoint at their next step, no new member starts, the finished ones stay */
  PetscCall(SgStopSignalInstall());
  for (;;) {
    long           one = 1, idx = 0;
    PetscLogDouble m0, m1;
    PetscBool      resume  = PETSC_FALSE;
    PetscInt       stopped = 0;
    {
      int sig;
      PetscCall(SgStopSignalAgree(group, &sig));
      if (sig) break;
    }
    if (!grank) {
      PetscCallMPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
      PetscCallMPI(MPI_Fetch_and_op(&one, &idx, MPI_LONG, 0, 0, MPI_SUM, win));
      PetscCallMPI(MPI_Win_unlock(0, win));
    }
    PetscCallMPI(MPI_Bcast(&idx, 1, MPI_LONG, 0, group));
    if (idx >= nrun) break;
    { /* jobs sharing the directory: the member is this group's only with its claim */
      PetscBool got = PETSC_TRUE;
      char      owner[512] = "";
      if (!grank) PetscCall(ClaimMember(e, torun[idx], &got, &resume, owner, sizeof owner));
      PetscCallMPI(MPI_Bcast(&got, 1, MPIU_BOOL, 0, group));
      PetscCallMPI(MPI_Bcast(&resume, 1, MPIU_BOOL, 0, group));
      if (!got) {
        if (!grank) SgTermPrintf(stdout, "  member %5" PetscInt_FMT " skipped: claimed by %s\n", torun[idx], owner[0] ? owner : "another job");
        continue;
      }
      PetscCall(MemberPath(e, torun[idx], ".claim", claim, sizeof claim));
      if (!grank) PetscCall(SgClaimBeatStart(claim, e->claim_stale / 5, &beat));
    }
    PetscCall(PetscTime(&m0));
    {
      PetscErrorCode ierr;
      char           tag[32];
      PetscCall(PetscSNPrintf(tag, sizeof tag, "[member %" PetscInt_FMT "] ", torun[idx]));
      SgTermSetPrefix(tag); /* what the member's solver prints says whose it is */
      PetscCall(PetscPushErrorHandler(MemberErrorHandler, NULL));
      ierr = RunMember(e, group, torun[idx], resume, &stopped);
      PetscCall(PetscPopErrorHandler());
      SgTermSetPrefix("");
      if (!grank) PetscCall(SgClaimBeatStop(&beat));
      if (ierr && !SgErrorIsUserClass(ierr)) {
        /* a bug, possibly on one rank only: other groups are busy, only an abort stops them all */
        if (!grank) SgTermPrintf(stderr, "surge ensemble: member %" PetscInt_FMT " failed (error above); members already marked done are kept, rerun to continue\n", torun[idx]);
        PETSCABORT(comm, ierr);
      }
      if (ierr) { /* the user's: stop handing out members, let the other groups finish theirs, report once */
        const char *text;
        long        stop = (long)nrun;
        PetscCall(PetscErrorMessage(ierr, NULL, (char **)&text));
        PetscCall(PetscStrncpy(fail_msg, text ? text : "", sizeof fail_msg));
        fail_member = torun[idx];
        fail_code   = ierr;
        if (!grank) SgClaimRelease(claim); /* a rerun (after the fix) takes it again */
        if (!grank) {
          PetscCallMPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
          PetscCallMPI(MPI_Accumulate(&stop, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_REPLACE, win));
          PetscCallMPI(MPI_Win_unlock(0, win));
        }
        break;
      }
    }
    PetscCall(PetscTime(&m1));
    busy += m1 - m0;
    if (!grank) {
      PetscCall(WriteMarker(e, torun[idx], (PetscReal)(m1 - m0), stopped));
      SgClaimRelease(claim); /* after the marker: a job that claims it next sees the marker */
      if (stopped) SgTermPrintf(stdout, "  member %5" PetscInt_FMT " stopped at step %" PetscInt_FMT " on group %d: checkpoint written\n", torun[idx], stopped, rank / (int)e->ranks_per_member);
      else SgTermPrintf(stdout, "  member %5" PetscInt_FMT " done in %.2fs on group %d%s\n", torun[idx], (double)(m1 - m0), rank / (int)e->ranks_per_member, resume ? " (resumed from its checkpoint)" : "");
    }
    if (stopped) {
      nstopped++;
      break;
    }
    done_here++;
  }
  PetscCall(SgStopSignalRemove());
  PetscCall(PetscTime(&t1));
  PetscCallMPI(MPI_Win_free(&win));
  PetscCallMPI(MPI_Comm_free(&group));
  { /* a member's user error, raised on every rank with the member's own message */
    struct {
      PetscInt m;
      int      rank;
    } mine = {fail_member, rank}, first;
    PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPIU_INT == MPI_INT ? MPI_2INT : MPI_LONG_INT, MPI_MAXLOC, comm));
    if (first.m >= 0) {
      PetscCallMPI(MPI_Bcast(fail_msg, (int)sizeof fail_msg, MPI_CHAR, first.rank, comm));
      PetscCallMPI(MPI_Bcast(&fail_code, 1, MPI_INT, first.rank, comm));
      PetscCall(PetscFree(torun));
      SETERRQ(comm, fail_code, "ensemble member %" PetscInt_FMT ": %s (members already done are kept: fix the deck and rerun to continue)", first.m, fail_msg);
    }
  }
  { /* stopped by a signal: no dataset (members are missing); one line says how to continue */
    PetscInt mine = grank ? 0 : nstopped, stops = 0, done = 0;
    int      sig  = SgStopSignalCaught(), any;
    PetscCallMPI(MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
      PetscCallMPI(MPI_Allreduce(&mine, &stops, 1, MPIU_INT, MPI_SUM, comm));
      if (!rank) {
        char marker[PETSC_MAX_PATH_LEN + 32];
        for (PetscInt m = 0; m < e->members; m++) {
          PetscCall(MemberPath(e, m, ".done", marker, sizeof marker));
          if (!access(marker, F_OK)) done++;
        }
      }
      PetscCallMPI(MPI_Bcast(&done, 1, MPIU_INT, 0, comm));
      PetscCall(PetscPrintf(comm, "surge: ensemble stopped by %s: %" PetscInt_FMT " of %" PetscInt_FMT " members done, %" PetscInt_FMT " checkpointed in %s; continue with the same command (finished members are kept, stopped ones resume from their checkpoints)\n", SgStopSignalName(any), done, e->members, stops, e->memberdir));
      PetscCall(PetscFree(torun));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  /* idle fraction: group time not spent in members, over all groups (busy counted once per group) */
  if (grank) busy = 0;
  PetscCallMPI(MPI_Allreduce(&busy, &busy_all, 1, MPI_DOUBLE, MPI_SUM, comm));
  { /* the makespan is the last group's finish: a group that found no more work stops earlier */
    PetscLogDouble mine = t1 - t0, span;
    PetscCallMPI(MPI_Allreduce(&mine, &span, 1, MPI_DOUBLE, MPI_MAX, comm));
    t1 = t0 + span;
  }
  { /* members this job ran (counted once per group) */
    PetscInt mine = grank ? 0 : done_here;
    PetscCallMPI(MPI_Allreduce(&mine, &ran, 1, MPIU_INT, MPI_SUM, comm));
  }
  /* the dataset needs every member: another job sharing the directory may still run some; the job
     that finds them all done merges (one job at a time: the merge has a claim of its own). A rerun
     that found every member done and the dataset merged under the same fingerprint leaves the file
     as it is: a merge would give the same samples under a new creation time, and the new bytes would
     make everything fingerprinted by that file's content (a POD-LSTM search log) look stale. */
  if (!nrun && current) missing = -2;
  else if (!rank) {
    char marker[PETSC_MAX_PATH_LEN + 32], mclaim[PETSC_MAX_PATH_LEN + 32];
    for (PetscInt m = 0; m < e->members; m++) {
      PetscCall(MemberPath(e, m, ".done", marker, sizeof marker));
      if (access(marker, F_OK)) missing++;
    }
    if (!missing) {
      PetscBool got;
      PetscCall(PetscSNPrintf(mclaim, sizeof mclaim, "%s/merge.claim", e->memberdir));
      PetscCall(SgClaimTry(mclaim, e->claim_stale, &got, NULL, 0));
      if (got) {
        PetscErrorCode ierr = Merge(e);
        SgClaimRelease(mclaim);
        PetscCall(ierr);
      } else missing = -1; /* another job is merging */
    }
  }
  PetscCallMPI(MPI_Bcast(&missing, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Barrier(comm));
  {
    PetscReal wall = (PetscReal)(t1 - t0), idle = wall > 0 && ran ? 1 - (PetscReal)busy_all / (ngroups * wall) : 0;
    char      what[PETSC_MAX_PATH_LEN + 200];
    if (!missing) PetscCall(PetscSNPrintf(what, sizeof what, "wrote %s.h5", e->output));
    else if (missing == -2) PetscCall(PetscSNPrintf(what, sizeof what, "%s.h5 is up to date (every member was done and merged under these options)", e->output));
    else if (missing < 0) PetscCall(PetscSNPrintf(what, sizeof what, "another job sharing %s is writing %s.h5", e->memberdir, e->output));
    else PetscCall(PetscSNPrintf(what, sizeof what, "%" PetscInt_FMT " member(s) not done yet (claimed by other jobs sharing %s): the job that finishes the last one writes %s.h5, or rerun this command after they end", missing, e->memberdir, e->output));
    PetscCall(PetscPrintf(comm, "surge ensemble: ran %" PetscInt_FMT " members in %.2fs (%.1f members/hour), idle fraction of groups %.3f; %s\n", ran, (double)wall, wall > 0 ? (double)(ran * 3600.0 / wall) : 0.0, (double)idle, what));
  }
  PetscCall(PetscFree(torun));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgEnsembleDestroy(SgEnsemble *e)
{
  PetscFunctionBegin;
  if (!*e) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt j = 0; j < (*e)->nvary; j++) PetscCall(PetscFree((*e)->vary[j]));
  for (PetscInt i = 0; i < (*e)->nfields; i++) PetscCall(PetscFree((*e)->fields[i]));
  PetscCall(PetscFree((*e)->params));
  PetscCall(PetscHeaderDestroy(e));
  PetscFunctionReturn(PETSC_SUCCESS);
}
