/* surge system layer: error helpers, the option catalogue and checked option getters.

   Every option surge reads goes through the SgOptions* macros below (inside a
   PetscOptionsBegin/End block, like the PetscOptions* macros they wrap). They add three things
   to PETSc's getters:
     - the full option name is recorded in the option catalogue, so a misspelled deck key can be
       answered with the nearest valid one (SgOptionsCheckUnused);
     - the raw string is parsed by us first, so a wrong type fails with the option's name;
     - numeric values are range checked, and the allowed range is printed in -help and errors. */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"

/* Version of surge, written into every output file as provenance. */
#define SURGE_VERSION "0.1.0"

/* ---- option catalogue ---------------------------------------------------------------------- */
PETSC_EXTERN PetscErrorCode SgOptionsCatalogAdd(const char prefix[], const char name[]);
PETSC_EXTERN PetscErrorCode SgOptionsCatalogDestroy(void);
/* Fails (PETSC_ERR_USER_INPUT, one line) if any option in the database was never read, naming it,
   DECK:LINE:COL where the deck set it (deck may be NULL), and the nearest catalogued option. */
PETSC_EXTERN PetscErrorCode SgOptionsCheckUnused(MPI_Comm comm, const char deck[]);
/* The same check restricted to options whose name starts with prefix (e.g. "sim_"): run it as soon
   as a section has been read, before that section's values are checked against each other, so a
   misspelled key is reported as such rather than as the missing value it was meant to set. */
PETSC_EXTERN PetscErrorCode SgOptionsCheckUnusedPrefix(MPI_Comm comm, const char deck[], const char prefix[]);
/* For the error handler, when a user-input error is raised before the unknown-key check has run:
   is there an unread option that looks like a misspelling of an option that was read and not set
   (t_ned for t_end)? Then that, not its consequence, is the error to report: msg gets the
   unknown-key message. Not collective. */
PETSC_EXTERN PetscErrorCode SgOptionsNearMiss(char msg[], size_t len, PetscBool *found);

/* ---- decks (deck.c) ------------------------------------------------------------------------ */
/* Read the YAML deck on rank 0, check it (syntax, UTF-8, repeated keys, shape) and set its options
   in the database: 'vlasov: {cfl: 0.8}' is -vlasov_cfl 0.8, lists become comma-separated values.
   Every problem is one PETSC_ERR_USER_INPUT "DECK:LINE:COL: what, and the fix" on every rank, and
   then nothing is inserted. */
PETSC_EXTERN PetscErrorCode SgDeckInsert(MPI_Comm comm, const char deck[]);
/* Line and column (1-based) of the deck key that set option (with or without the dash); -1 if the
   deck did not set it. deck (may be NULL) gets the deck's file name. */
PETSC_EXTERN PetscErrorCode SgDeckKeyLocation(const char option[], const char **deck, PetscInt *line, PetscInt *col);
PETSC_EXTERN PetscErrorCode SgDeckDestroy(void);

/* ---- checked getters (use inside PetscOptionsBegin/End) -------------------------------------- */
PETSC_EXTERN PetscErrorCode SgOptionsReal_Private(PetscOptionItems *, const char[], const char[], const char[], PetscReal, PetscReal *, PetscBool *, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode SgOptionsInt_Private(PetscOptionItems *, const char[], const char[], PetscInt, PetscInt *, PetscBool *, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode SgOptionsBool_Private(PetscOptionItems *, const char[], const char[], PetscBool, PetscBool *, PetscBool *);
PETSC_EXTERN PetscErrorCode SgOptionsString_Private(PetscOptionItems *, const char[], const char[], const char[], char *, size_t, PetscBool *);
PETSC_EXTERN PetscErrorCode SgOptionsEList_Private(PetscOptionItems *, const char[], const char[], const char *const *, PetscInt, const char[], PetscInt *, PetscBool *);
PETSC_EXTERN PetscErrorCode SgOptionsRealArray_Private(PetscOptionItems *, const char[], const char[], const char[], PetscReal *, PetscInt *, PetscBool *, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode SgOptionsStringArray_Private(PetscOptionItems *, const char[], const char[], char *[], PetscInt *, PetscBool *);
PETSC_EXTERN PetscErrorCode SgOptionsIntArray_Private(PetscOptionItems *, const char[], const char[], PetscInt *, PetscInt *, PetscBool *, PetscInt, PetscInt);

/* SgOptionsReal(name, help, units, default, &value, &set, lo, hi): value in [lo, hi].
   Pass PETSC_MIN_REAL / PETSC_MAX_REAL for an open side. */
#define SgOptionsReal(opt, text, units, cur, val, set, lo, hi)  SgOptionsReal_Private(PetscOptionsObject, opt, text, units, cur, val, set, lo, hi)
/* SgOptionsInt(name, help, default, &value, &set, lo, hi): value in [lo, hi]. */
#define SgOptionsInt(opt, text, cur, val, set, lo, hi)          SgOptionsInt_Private(PetscOptionsObject, opt, text, cur, val, set, lo, hi)
#define SgOptionsBool(opt, text, cur, val, set)                 SgOptionsBool_Private(PetscOptionsObject, opt, text, cur, val, set)
#define SgOptionsString(opt, text, cur, buf, len, set)          SgOptionsString_Private(PetscOptionsObject, opt, text, cur, buf, len, set)
/* SgOptionsEList(name, help, list, nlist, default string, &index, &set): value must be one of list. */
#define SgOptionsEList(opt, text, list, n, cur, idx, set)       SgOptionsEList_Private(PetscOptionsObject, opt, text, list, n, cur, idx, set)
/* Arrays: *n is the capacity on entry and the count read on exit. Each entry in [lo, hi]. */
#define SgOptionsRealArray(opt, text, units, vals, n, set, lo, hi) SgOptionsRealArray_Private(PetscOptionsObject, opt, text, units, vals, n, set, lo, hi)
#define SgOptionsIntArray(opt, text, vals, n, set, lo, hi)          SgOptionsIntArray_Private(PetscOptionsObject, opt, text, vals, n, set, lo, hi)
/* Strings are PetscMalloc'ed; free each with PetscFree. */
#define SgOptionsStringArray(opt, text, vals, n, set)               SgOptionsStringArray_Private(PetscOptionsObject, opt, text, vals, n, set)

/* ---- path options and the run's inputs (paths.c) -------------------------------------------- */
/* What a path option names, so the write path (io/include/sgwrite.h) and the file-safety fuzzer know
   which options are files the run reads and which are files it writes:
     SG_PATH_IN       a file (or DeePMD-kit directory) the run reads and never writes;
     SG_PATH_RESUME   a checkpoint the run continues from and may replace with its own newer state
                      (only by the same kind of file, e.g. -restart X.chk.h5 with output X);
     SG_PATH_OUT      a file the run creates or replaces;
     SG_PATH_OUT_BASE a base name or prefix the run appends suffixes to (BASE.h5, BASE.xmf, ...). */
typedef enum { SG_PATH_IN, SG_PATH_RESUME, SG_PATH_OUT, SG_PATH_OUT_BASE } SgPathRole;
PETSC_EXTERN const char *const SgPathRoles[];
PETSC_EXTERN PetscErrorCode SgOptionsPath_Private(PetscOptionItems *, const char[], const char[], SgPathRole, const char[], char *, size_t, PetscBool *);
PETSC_EXTERN PetscErrorCode SgOptionsPathArray_Private(PetscOptionItems *, const char[], const char[], SgPathRole, char *[], PetscInt *, PetscBool *);
/* SgOptionsPath(name, help, role, default, buf, len, &set): a string option that names a file. The
   catalogue records the role, -help shows it ("[input path]", "[output path]", ...), and an input's
   value (IN, RESUME) is registered as one of the run's inputs (SgInputRegister) when it is set. */
#define SgOptionsPath(opt, text, role, cur, buf, len, set)   SgOptionsPath_Private(PetscOptionsObject, opt, text, role, cur, buf, len, set)
/* Comma-separated list of paths (strings PetscMalloc'ed, as SgOptionsStringArray). */
#define SgOptionsPathArray(opt, text, role, vals, n, set)    SgOptionsPathArray_Private(PetscOptionsObject, opt, text, role, vals, n, set)
/* Whether the catalogued option `name` (full name, with or without the dash) is a path, and its role. */
PETSC_EXTERN PetscErrorCode SgOptionsCatalogGetPathRole(const char name[], PetscBool *ispath, SgPathRole *role);

/* The run's inputs: every file the run reads is registered (by the path options, the deck, and the
   io/ readers as they open files), so the write path can refuse an output that is one of them --
   the same file by device and inode, or by canonical path when it does not exist yet. Not collective:
   every rank registers the same names. role is SG_PATH_IN or SG_PATH_RESUME. */
PETSC_EXTERN PetscErrorCode SgInputRegister(const char path[], SgPathRole role);
/* Is path one of the registered inputs? *found, and (if found, may be NULL) its role and the name it
   was registered under. */
PETSC_EXTERN PetscErrorCode SgInputFind(const char path[], PetscBool *found, SgPathRole *role, const char **name);
/* The real directory of path joined with its base name ("" if the directory does not resolve): one
   string for ./a.h5, a.h5, $PWD/a.h5 and dir/../a.h5, even for a file that does not exist yet. */
PETSC_EXTERN void SgPathCanonical(const char path[], char out[], size_t len);
PETSC_EXTERN PetscErrorCode SgInputsDestroy(void);
/* -overwrite (read once by SgInitialize): the user allows replacing an existing file that is not
   surge's output of the same kind (never one of the run's inputs). */
PETSC_EXTERN PetscErrorCode SgPathsSetFromOptions(MPI_Comm comm);
PETSC_EXTERN PetscErrorCode SgPathsGetOverwrite(PetscBool *);
/* The job's process id for names of its temporaries: world rank 0's (agreed by SgPathsSetFromOptions),
   this process's before that. */
PETSC_EXTERN long SgPathsJobPid(void);
/* Process pid of this host no longer runs: it does not exist, or it is a zombie (exited, not yet
   reaped: it holds no file open and writes nothing more). */
PETSC_EXTERN PetscBool SgProcessGone(long pid);

/* Holding errors back: between SgErrorHoldPush and SgErrorHoldPop, PETSc errors are recorded in the
   SgErrorHold (first code and the first line of its message) instead of printed, so the caller can
   agree on a failure across ranks (a write on rank 0 only) and report it once, as one line. */
typedef struct {
  char           msg[1024];
  PetscErrorCode code;
} SgErrorHold;
PETSC_EXTERN PetscErrorCode SgErrorHoldPush(SgErrorHold *);
PETSC_EXTERN PetscErrorCode SgErrorHoldPop(void);
/* An error on one rank of comm (ierr, with h's message) becomes one PETSC_ERR_FILE_OPEN error on every
   rank ("what: message"); collective. */
PETSC_EXTERN PetscErrorCode SgErrorAgree(MPI_Comm comm, PetscErrorCode ierr, const SgErrorHold *h, const char what[]);

/* The blocks of an array distributed over the ranks of comm (a sharded training state), streamed to
   rank 0 one rank at a time for the one file it writes: rank 0 hands its own block (mine) and then each
   other rank's, in rank order, to sink(ctx, r, block); rank r sends counts[r] values of type. Rank 0
   holds one other block at a time, never the whole array (gathering it would cost rank 0 the memory
   sharding saves). *err is rank 0's outcome: once set (before the call, or by a sink) the remaining
   blocks are received and dropped, so no sender waits forever. Collective on comm. */
typedef PetscErrorCode (*SgBlockSink)(void *ctx, PetscMPIInt rank, const void *block);
PETSC_EXTERN PetscErrorCode SgBlocksToRoot(MPI_Comm comm, const void *mine, const PetscMPIInt counts[], MPI_Datatype type, SgBlockSink sink, void *ctx, PetscErrorCode *err);

/* Register surge's classes and log events (idempotent); called by SgInitialize. */
PETSC_EXTERN PetscErrorCode SgInitialize(int *argc, char ***argv, const char deck[], const char help[]);
PETSC_EXTERN PetscErrorCode SgFinalize(void);

/* Errors agreed across ranks (agree.c). Local checks go between SgAgreeBegin() and
   SgAgreeEnd(comm, ierr): errors raised there are kept quiet, and SgAgreeEnd (collective) raises the
   first failing rank's error on every rank of comm, printed once:
       PetscCall(SgAgreeBegin());
       ierr = ReadMyPart(...);
       PetscCall(SgAgreeEnd(comm, ierr));
   SgErrorFinish() ends a run with a user-class error without deadlocking ranks that did not fail
   (one line, exit status returned); SgErrorRecord is the error handler's hook. SgAgreeAllFailed, on
   a rank that failed in an operation every rank entered, says (waiting a bounded time, without a
   collective the others could mismatch) whether every rank failed, so all can end normally.
   SgErrorOnExit registers a clean-up (no arguments, safe to run once more) that a job ending without
   unwinding runs first (SgErrorRunOnExit: SgErrorFinish, either way it ends; a failed output's lone
   exit; main's abort of a bug; the crash signal handler -- so async-signal-safe calls only). */
/* The error classes surge reports as one "surge: error:" line, the message alone, instead of PETSc's
   traceback: the user's to fix, not ours to debug. A deck or option mistake (PETSC_ERR_USER_INPUT), a
   file that cannot be opened, read or is not what it should be (PETSC_ERR_FILE_*), a floating-point
   trap (PETSC_ERR_FP), and a computation that diverged or did not converge (PETSC_ERR_NOT_CONVERGED:
   a training whose loss is no longer finite, a solver whose stable step is NaN, an SVD short of its
   modes; the message names the input to change). Anything else is a bug and keeps the traceback. */
PETSC_EXTERN PetscBool      SgErrorIsUserClass(PetscErrorCode);
PETSC_EXTERN PetscErrorCode SgAgreeSetUp(void);
PETSC_EXTERN PetscErrorCode SgAgreeBegin(void);
PETSC_EXTERN PetscErrorCode SgAgreeEnd(MPI_Comm comm, PetscErrorCode ierr);
PETSC_EXTERN int            SgErrorFinish(void);
PETSC_EXTERN PetscBool      SgAgreeAllFailed(void);
PETSC_EXTERN void           SgErrorOnExit(void (*fn)(void));
PETSC_EXTERN void           SgErrorRunOnExit(void);

/* Stop on SIGTERM/SIGUSR1 at the next step boundary with a checkpoint (stopsig.c). Install/Remove
   bracket a loop that can stop (they nest); SgStopSignalAgree (collective) returns the signal noted on
   any rank, 0 if none, and remembers it for SgStopSignalCaught (the job then skips its end-of-run
   output). The job's output base (surge train's -train_output) names the checkpoint of a loop that
   has no checkpoint file of its own: BASE.chk.h5. */
PETSC_EXTERN PetscErrorCode SgStopSignalInstall(void);
PETSC_EXTERN PetscErrorCode SgStopSignalRemove(void);
PETSC_EXTERN PetscErrorCode SgStopSignalAgree(MPI_Comm comm, int *sig);
PETSC_EXTERN int            SgStopSignalCaught(void);
PETSC_EXTERN const char    *SgStopSignalName(int sig);
PETSC_EXTERN PetscErrorCode SgStopSignalSetCheckpointBase(const char base[]);
PETSC_EXTERN const char    *SgStopSignalCheckpointBase(void);

/* The terminal copy (termlog.c): what a run prints also goes to BASE.log. SgTermSetUp (called by
   SgInitialize) routes PETSc's printing through it; SgTermPrintf is the same for surge's direct
   writes to stdout/stderr. The driver attaches the log file when it knows the output name (io:
   SgRunLogOpen); SgTermLogEnd (SgFinalize, SgErrorFinish; after PetscFinalize) closes it and commits
   it with commit(tmp, path) (the write path's SgWriteCommitErrno): 0, or 1 after one error line.
   With failed (a run ended by an error) a log that replaces an earlier BASE.log is discarded: a failure
   leaves the earlier files whole. SgTermLogNoteTemp gives every rank the temporary's name, so that
   SgTermLogAbandon (any rank, before an MPI_Abort) can remove it.
   SgTermSetPrefix begins every line printed on this rank with p (an ensemble member's id; "" none). */
PETSC_EXTERN PetscErrorCode SgTermSetUp(void);
PETSC_EXTERN void           SgTermPrintf(FILE *fd, const char fmt[], ...) PETSC_ATTRIBUTE_FORMAT(2, 3);
PETSC_EXTERN void           SgTermSetPrefix(const char p[]);
PETSC_EXTERN PetscErrorCode SgTermLogAttach(FILE *fp, const char tmp[], const char path[], int (*commit)(const char[], const char[]));
PETSC_EXTERN int            SgTermLogEnd(PetscBool failed);
PETSC_EXTERN void           SgTermLogNoteTemp(const char tmp[]);
PETSC_EXTERN void           SgTermLogAbandon(void);
PETSC_EXTERN void           SgTermLogCrash(void); /* before an abort: commit (rank 0) or remove the log's temporary */
PETSC_EXTERN void           SgTermLogCrashSignal(const char line[]); /* the same from a signal handler (async-signal-safe), after printing line */
PETSC_EXTERN PetscBool      SgErrorRecord(const char mess[], PetscBool rank0);

/* The names in a type registry, comma-separated ("(none)" when empty): for "unknown type" errors. */
PETSC_EXTERN PetscErrorCode SgFunctionListNames(PetscFunctionList, char names[], size_t len);
/* Levenshtein distance, for "did you mean" suggestions. */
PETSC_EXTERN PetscInt SgEditDistance(const char a[], const char b[]);
/* Counter-based random numbers: the same (seed, stream, counter) gives the same value on any rank
   count, thread count or restart (splitmix64 finaliser over a mixed key). Uniform in [0, 1). */
PETSC_EXTERN double SgRandomUniform(uint64_t seed, uint64_t stream, uint64_t counter);
PETSC_EXTERN uint64_t SgRandomBits(uint64_t seed, uint64_t stream, uint64_t counter);
/* Fingerprint (64-bit FNV-1a) of a byte string: used to tie checkpoints to the deck that wrote them. */
PETSC_EXTERN uint64_t SgHash64(const void *data, size_t len, uint64_t seed);
/* The fingerprint (16 hex digits) of a job's effective configuration (fingerprint.c): every option in
   the database (the deck after the command line's overrides; only those starting with prefix when it
   is not NULL) but output names, logging, help and those starting with an entry of skip (NULL-ended),
   and the identity of every input file an option's value names (content up to 64 MiB, found as given
   or next to deck). Collective: rank 0 reads the files. Work done under another fingerprint is not
   reused. */
PETSC_EXTERN PetscErrorCode SgConfigFingerprint(MPI_Comm comm, const char deck[], const char prefix[], const char *const skip[], char fp[], size_t len);
/* The numeric options starting with prefix ("boussinesq_") after the command line's overrides, as a
   record "solver=boussinesq;rayleigh=1e6;length=4,1" (prefix without its '_' as the solver; options
   starting with an entry of skip left out; "" if it does not fit): what a solver was run with, for a
   model trained on its output to check against (POD-LSTM's trained_physics). */
PETSC_EXTERN PetscErrorCode SgConfigRecord(const char prefix[], const char *const skip[], char rec[], size_t len);
/* The effective configuration as a list, one option a line, sorted by name: "-name value", with
   " #HASH" when the value names input files (their content, as SgConfigFingerprint folds it); output
   names, logging, help and options starting with an entry of skip left out. Collective (rank 0 reads
   the files); *list is PetscFree'd by the caller. What a checkpoint records so that a restart with
   other options is refused, naming the option. */
PETSC_EXTERN PetscErrorCode SgConfigList(MPI_Comm comm, const char deck[], const char *const skip[], char **list);
/* The first option that differs between two SgConfigList lists, in words ("-x was 1, now 2"), or "".
   A value naming files is compared by their identity (device and inode; where none exists, the
   canonical path), so ./d.h5, d.h5, $PWD/d.h5 and a symlink to it are one value; relative paths
   are found as SgConfigList finds them (deck: the deck, or NULL). Collective: rank 0 looks. */
PETSC_EXTERN PetscErrorCode SgConfigListDiff(MPI_Comm comm, const char deck[], const char then[], const char now[], char what[], size_t len);

/* Before allocating `count` items of `bytes_per_item` bytes (count computed in floating point, so
   it cannot wrap): one user-input error naming `option` and the memory it would need if the count
   is past the index limit or the rank's share past this machine's memory. */
PETSC_EXTERN PetscErrorCode SgCheckCount(MPI_Comm comm, const char option[], const char items[], PetscReal count, PetscReal bytes_per_item);

/* What a file says, checked before it is trusted (trust.c): integers v[0..n) in [lo, hi] (sizes read
   from a model, before anything is allocated from them), reals finite and in [lo, hi]; a user error
   naming FILE, WHAT and the index otherwise. SgTrustWeights: a model about to be written after
   training holds no NaN or Inf (WHO: the surrogate; FILE: the model that is then not written). */
PETSC_EXTERN PetscErrorCode SgTrustInt(const char file[], const char what[], PetscInt n, const PetscInt v[], PetscInt lo, PetscInt hi);
PETSC_EXTERN PetscErrorCode SgTrustReal(const char file[], const char what[], PetscInt64 n, const PetscReal v[], PetscReal lo, PetscReal hi);
PETSC_EXTERN PetscErrorCode SgTrustWeights(const char who[], const char file[], PetscInt64 n, const PetscReal w[]);
/* The first damaged value of an array whose blocks are read by different ranks (a sharded checkpoint's
   optimizer moments): it is found in one rank's block, yet every rank must refuse it alike, or the
   others train on and wait. Each rank scans what it read (SgTrustScan: NaN, infinite, or negative
   where nonneg, at global index offset + i; slot tells the caller's arrays apart); SgTrustAgree
   (collective) then gives every rank the first over all ranks, and SgTrustBadKind words it. */
typedef struct {
  int index; /* global index of the first damaged value; INT_MAX: none */
  int what;  /* 3 * slot + kind: kind 0 NaN, 1 infinite, 2 negative */
} SgTrustBad;
PETSC_EXTERN void           SgTrustBadInit(SgTrustBad *);
PETSC_EXTERN void           SgTrustScan(PetscInt64 n, const PetscReal v[], PetscInt64 offset, PetscBool nonneg, int slot, SgTrustBad *);
PETSC_EXTERN PetscErrorCode SgTrustAgree(MPI_Comm comm, SgTrustBad *);
PETSC_EXTERN const char    *SgTrustBadKind(const SgTrustBad *);
