/* The one write path: every file surge creates or replaces is checked and committed here.

   A file surge writes has a kind (SgFileKind: "run output", "run checkpoint", "model", ...), stored
   in the file: HDF5 files carry the root attribute surge_file = KIND, text files the token
   "surge-file: KIND" in their first line (a comment in the file's own syntax). Then:

   (a) SgWriteCheck refuses a path that is one of the run's inputs (registered by SgOptionsPath and
       the deck, src/base sgsys.h: same device and inode, or the same canonical path);
   (b) it refuses an existing file that is not surge's file of the same kind, unless the user passed
       -overwrite (an input is refused even then);
   (c) the file is written to a temporary PATH.tmp.PID in the same directory (SgWriteTempName) and SgWriteCommit flushes it to disk
       (fsync), checks the close, and renames it over PATH; any failure -- disk full included --
       removes PATH.tmp and leaves PATH as it was (SgWriteDiscard does the same on an error path);
   (d) drivers call SgWriteCheck for every file of the run before the first step (SgSimSetUp,
       SgEnsembleRun, the trainers' set-up), so a refused run has written nothing.

   Every refusal is one PETSC_ERR_FILE_OPEN error, agreed on every rank of comm, naming the option,
   the path, what is wrong and the fix. */
#pragma once
#include <stdio.h>
#include <petscsys.h>
#include "sgcompat.h"

/* Kinds of file surge writes (the value of the surge_file attribute / text token). */
#define SG_FILE_RUN_OUTPUT     "run output"
#define SG_FILE_RUN_XDMF       "run xdmf"
#define SG_FILE_RUN_CHECKPOINT "run checkpoint"
#define SG_FILE_NN_CHECKPOINT  "training checkpoint"
#define SG_FILE_MODEL          "model"
#define SG_FILE_DATASET        "dataset"
#define SG_FILE_WINDOWS        "podlstm windows"
#define SG_FILE_SEARCH_LOG     "podlstm search log"
#define SG_FILE_LCURVE         "learning curve"
#define SG_FILE_TRAJECTORY     "md trajectory"
#define SG_FILE_MODEL_DEVI     "model deviation"
#define SG_FILE_RDF            "rdf"
#define SG_FILE_TEXT           "text report"
#define SG_FILE_RUN_LOG        "run log"
#define SG_FILE_ENSEMBLE_MARKER "ensemble member marker"
/* DeePMD-kit's model format: a .dp is left unmarked (byte-identical to DeePMD-kit's) and is surge's when
   its json attribute begins {"software":"surge" (one DeePMD-kit wrote is foreign); a .yaml export
   carries the text token in a first-line comment */
#define SG_FILE_DP             "deepmd-kit model"
#define SG_FILE_DP_DETAIL      "dp test detail"

/* The kind of the surge file at path (not collective): "" when it does not exist, and "foreign"
   when it is not a file surge wrote. Files written before the surge_file attribute existed are
   recognised by their layout (a dataset's surge_dataset_version, a checkpoint's /layout, ...). */
PETSC_EXTERN PetscErrorCode SgFileKind(const char path[], char kind[], size_t len);

/* (a), (b) and writability of the directory, for one file; collective on comm (rank 0 decides).
   option names the option in the message (e.g. "-sim_output"); kind is what will be written. */
PETSC_EXTERN PetscErrorCode SgWriteCheck(MPI_Comm comm, const char option[], const char path[], const char kind[]);
/* The same check done on one rank only (for files one rank owns); returns the refusal in msg
   (empty: allowed) instead of raising it, so the caller can agree on it across its ranks. */
PETSC_EXTERN PetscErrorCode SgWriteCheckMessage(const char option[], const char path[], const char kind[], char msg[], size_t len);

/* (c) for a temporary a caller has written and closed: fsync tmp, then rename it over path; on
   any failure tmp is removed and one error names path (and "disk full" for ENOSPC). Not collective. */
PETSC_EXTERN PetscErrorCode SgWriteCommit(const char tmp[], const char path[]);
/* The same without raising (for one rank of a collective operation, which then agrees on the
   result): 0 or the errno of the failure (ENOSPC: disk full); tmp is gone either way. */
PETSC_EXTERN int SgWriteCommitErrno(const char tmp[], const char path[]);
/* Copy src to dst (created or truncated), not collective: 0 or the errno of the failure (dst is
   removed then). The run output uses it to start its next temporary from the committed file. */
PETSC_EXTERN int SgWriteCopyErrno(const char src[], const char dst[]);
/* 0 when a file can be created in directory dir, else the errno that says why (root passes access() on
   any directory, so only creating one tells). An unnamed O_TMPFILE file where the file system has
   them: nothing is ever named, so a crash signal at that moment leaves nothing behind; elsewhere a
   .surge-probe-PID.tmp created and removed at once. */
PETSC_EXTERN int SgWriteDirectoryErrno(const char dir[]);
/* A set of files replaced together or not at all (a run's BASE.h5, BASE.xmf, BASE.chk.h5): tmp[i] is
   the new, closed file of path[i] (NULL: path[i] is not in the new set and is removed). Every tmp is
   flushed to disk, each current path is kept under a second name (PATH.prev.tmp, a hard link; or
   PATH.none.tmp when it does not exist), then the renames run; a failure anywhere -- disk full
   included -- removes the temporaries and puts the earlier set back whole. 0 or the errno of the
   failure. Not collective (the caller's one rank). SgWriteSetRecover undoes a commit a killed process
   left half done (its .prev/.none names): the earlier set comes back; call it, holding the output's
   lock, before reading or checking the set. */
PETSC_EXTERN int SgWriteSetCommitErrno(int n, const char *const tmp[], const char *const path[]);
/* The members' names are journalled in PATH0.set.tmp (path[0]'s) while the commit runs, so
   SgWriteSetRecover(n, path) also restores members beyond path[0..n) that a killed commit named. */
PETSC_EXTERN int SgWriteSetRecover(int n, const char *const path[]);
/* Is nobody holding path open through HDF5 (a reader's shared flock)? A file of an earlier commit kept
   by a hard link is continued in place only then (sim.c's BASE.h5, h5md.c's trajectory). */
PETSC_EXTERN PetscBool SgWriteNoReader(const char path[]);
/* A file of a run's set is staged as BASE.X.tmp and committed into place with the set; messages
   name the file the user knows: printf("%.*s", SgWriteShownLength(p), p) drops a trailing ".tmp". */
PETSC_EXTERN int SgWriteShownLength(const char path[]);
/* Files written beside a run's set (an MD trajectory, model deviation, g(r) table, retraining
   dataset) join its commit (io/h5/members.c): a writer with a staged temporary registers close
   (collective: close the temporary; rank 0 fills tmp/path, "" tmp: nothing to commit) and resume
   (collective: continue from the committed file after a commit that is not the run's last); a
   one-shot closed temporary is added with SgWriteMemberAdd (rank 0). The run's commit calls
   SgWriteMembersClose (collective), renames the returned members with its set in one
   SgWriteSetCommitErrno, then SgWriteMembersResume(more) (collective); on an error path
   SgWriteMembersDiscard removes one-shot temporaries (registered writers discard their own). */
#define SG_WRITE_MAX_MEMBERS 8
PETSC_EXTERN PetscErrorCode SgWriteMemberRegister(void *ctx, PetscErrorCode (*close)(void *, char[], char[], size_t), PetscErrorCode (*resume)(void *));
PETSC_EXTERN void           SgWriteMemberUnregister(void *ctx);
PETSC_EXTERN PetscErrorCode SgWriteMemberAdd(const char tmp[], const char path[]);
PETSC_EXTERN PetscErrorCode SgWriteMembersClose(int *n, const char *const **tmp, const char *const **path);
PETSC_EXTERN PetscErrorCode SgWriteMembersResume(PetscBool more);
PETSC_EXTERN void           SgWriteMembersDiscard(void);
/* Test builds: whether this commit is the SURGE_TEST_ENOSPC-th of the process (counts it). */
PETSC_EXTERN int SgWriteTestENOSPC(void);
/* Test builds: the fault (0, EIO, ENOSPC) SURGE_TEST_CATCHUP_FAIL/_ENOSPC put into this trajectory catch-up. */
PETSC_EXTERN int SgWriteTestCatchUpFault(void);
/* Remove path's temporaries of processes gone from this host (PATH.tmp.PID, PATH.tmp). */
PETSC_EXTERN void SgWriteDropStaleTemps(const char path[]);
/* Remove a temporary (error paths); missing is fine. */
PETSC_EXTERN PetscErrorCode SgWriteDiscard(const char tmp[]);
/* The temporary name of path for this job: PATH.tmp.PID, PID the process id of the job's world rank 0
   (SgPathsSetFromOptions agrees on it; this process's own before that), so two jobs writing one file
   at once never share a temporary -- the last rename wins and the file is whole either way.
   Temporaries of path left by a process that no longer exists on this host (PATH.tmp.PID, and
   PATH.tmp of earlier surge versions) are removed here, when the next writer of path names its own; one
   of another host is left alone (its process may live: remove it by hand). */
PETSC_EXTERN PetscErrorCode SgWriteTempName(const char path[], char tmp[], size_t len);

/* One job per output name: rank 0 of comm takes an exclusive flock(2) on BASE.lock, held until
   SgWriteLockRelease (or the process ends, however it ends: a lock file left by a killed job is
   taken over and removed by the next). A second job on BASE is refused, collectively, with one line
   naming the process that holds it (option names the output option). Where BASE.lock cannot be made
   or locked (no such directory: the output checks say so; a file system without locks) the job goes
   on without (fd -1). fd: rank 0's descriptor, -1 elsewhere. */
PETSC_EXTERN PetscErrorCode SgWriteLockAcquire(MPI_Comm comm, const char option[], const char base[], int *fd);
/* Open MPI's MPI-IO (OMPIO) keeps files of its own beside every file it has open: PATH-JOB-PID.lock
   (the "lockedfile" shared-file-pointer component: a singleton's, or ranks on several nodes) and
   PATH.locktest.RANK (its probe at each open). A killed job leaves them. Whether the name tail after
   PATH is one of those: 1 with *pid the PID of a .lock (0 for a probe), 0 otherwise. The job that
   takes BASE.lock removes BASE.*'s (a dead PID's .lock, any probe). */
PETSC_EXTERN int SgWriteMPIIOLeftover(const char tail[], long *pid);
/* Release: removes BASE.lock while holding it, then closes; -1 is fine. A job that ends without
   unwinding releases every lock it holds through the base layer's SgErrorRunOnExit (registered here). */
PETSC_EXTERN void SgWriteLockRelease(const char base[], int *fd);

/* Text files through the write path: SgTextFileOpen checks (a)/(b) on this rank, opens PATH.tmp
   and writes the first line "<comment> surge-file: KIND" (comment: "#" for column files); with
   append, the existing file's content (if it is surge's file of this kind) is copied first, so a
   resumed run continues it. SgTextFileClose commits (c); SgTextFileDiscard removes the temporary. */
typedef struct _n_SgTextFile *SgTextFile;
PETSC_EXTERN PetscErrorCode SgTextFileOpen(const char option[], const char path[], const char kind[], const char comment[], PetscBool append, SgTextFile *);
PETSC_EXTERN PetscErrorCode SgTextFileGetFILE(SgTextFile, FILE **);
PETSC_EXTERN PetscErrorCode SgTextFileClose(SgTextFile *);
PETSC_EXTERN PetscErrorCode SgTextFileDiscard(SgTextFile *);
/* Close the temporary (checked) without committing it: its names for a set commit (SgWriteMember*);
   on failure it is removed and one error names path. */
PETSC_EXTERN PetscErrorCode SgTextFileFinish(SgTextFile *, char tmp[], char path[], size_t len);
/* Hand the open temporary to a caller that commits it itself, later and without PETSc (the run log,
   committed after PetscFinalize with SgWriteCommitErrno): its FILE and the two names; the object is freed. */
PETSC_EXTERN PetscErrorCode SgTextFileDetach(SgTextFile *, FILE **fp, char tmp[], size_t tmplen, char path[], size_t pathlen);

/* The run log BASE.log (kind SG_FILE_RUN_LOG; "#" comments): opened on world rank 0 (collective on
   comm, which holds it) and attached to the terminal copy (src/base termlog.c), which fills it with
   everything the run prints and commits it when the process ends. A copy never stops a run: none is
   made when BASE.log is the run's own stdout/stderr, and a BASE.log surge may not write (an input, a
   file that is not a run log) is left alone with one warning line. append continues an earlier log
   of the same run (a restart, a resumed ensemble). option names the output option in messages. */
PETSC_EXTERN PetscErrorCode SgRunLogOpen(MPI_Comm comm, const char option[], const char base[], PetscBool append);

/* Directories surge creates whole -- an export in another code's layout (DeePMD-kit's system
   directory), whose files cannot carry a kind. The directory is refused if it is an input of the run,
   an existing file, or a directory that holds anything (never merged into or replaced, -overwrite or
   not); DIR.tmp/ is created (exclusively: one left by an interrupted export is refused, named) and
   filled through SgWriteDirMkdir / SgWriteDirFileOpen (a new file under DIR.tmp/) / SgWriteDirFileClose
   (flush, fsync, checked close); SgWriteDirCommit renames DIR.tmp to DIR; SgWriteDirDiscard (and a
   failed commit) removes DIR.tmp and everything in it. Not collective: the caller's one rank. */
typedef struct _n_SgWriteDir *SgWriteDir;
PETSC_EXTERN PetscErrorCode SgWriteDirCheckMessage(const char option[], const char dir[], char msg[], size_t len);
PETSC_EXTERN PetscErrorCode SgWriteDirBegin(const char option[], const char dir[], SgWriteDir *);
PETSC_EXTERN PetscErrorCode SgWriteDirMkdir(SgWriteDir, const char rel[]);
PETSC_EXTERN PetscErrorCode SgWriteDirFileOpen(SgWriteDir, const char rel[], FILE **);
PETSC_EXTERN PetscErrorCode SgWriteDirFileClose(SgWriteDir, FILE **);
PETSC_EXTERN PetscErrorCode SgWriteDirCommit(SgWriteDir *);
PETSC_EXTERN PetscErrorCode SgWriteDirDiscard(SgWriteDir *);

/* Test builds: SURGE_TEST_ENOSPC=N makes the N-th SgWriteCommit of the process (1-based) fail
   as a full disk would, after the data was written, so tests can check that a failure at the last
   moment leaves the earlier file whole (the tmpfs tests cover real ENOSPC where mounting works). */
