/* SgOutput: the HDF5 output file of one run, with an XDMF sidecar for ParaView/VisIt.

   File layout (documented for users in docs/run.md):
     /provenance            attributes: surge version, date, deck text, command line
     /diagnostics/time      [nrec] simulation time of each diagnostics record
     /diagnostics/step      [nrec] step number
     /diagnostics/<name>    [nrec] one scalar time series per solver diagnostic (attribute "units")
     /fields/<name>/<k>     snapshot k of field <name>, as written by VecView of a DMDA vector
                            (attributes time, step); the XDMF file lists every snapshot
     /report/<name>         end-of-run results (e.g. fitted growth rate), attributes "units"
   All calls are collective on the output's communicator. */
#pragma once
#include <petscdmda.h>
#include "sgsolver.h"

/* Before anything is written: can BASE + suffix[i] be created or replaced for every i? One
   PETSC_ERR_FILE_OPEN error on every rank naming `option` (e.g. "sim output") and the path if not
   (missing or unwritable directory, a directory in the way, an empty base). Touches no file. */
PETSC_EXTERN PetscErrorCode SgOutputCheckPath(MPI_Comm, const char option[], const char base[], PetscInt n, const char *const suffix[]);
/* Create the output (marked as a surge run output, sgwrite.h). staged: everything is written to
   FILE.tmp and BASE.xmf.tmp (the XDMF refers to FILE) and the driver renames the set into place
   (SgWriteCommit) at its checkpoints and at the end; FILE itself is never edited in place, so a
   kill -9 at any moment leaves it as it was last committed. Unstaged (FILE written in place) is
   for tools that write a scratch output of their own. */
PETSC_EXTERN PetscErrorCode SgOutputCreate(MPI_Comm, const char filename[], PetscBool staged, SgOutput *);
/* BASE.xmf (or BASE.xmf.tmp when staged) for the output file BASE.h5. */
PETSC_EXTERN PetscErrorCode SgOutputXdmfName(const char filename[], PetscBool staged, char xmf[], size_t len);
/* Which run wrote an output: its solver and a run id that its checkpoints carry too, so a restart
   never continues into the output of another run or solver. Get: collective; "" when absent. */
PETSC_EXTERN PetscErrorCode SgOutputSetIdentity(SgOutput, const char solver[], const char run_id[]);
PETSC_EXTERN PetscErrorCode SgOutputGetIdentity(MPI_Comm, const char filename[], char solver[], char run_id[], size_t len);
/* Continue the committed output FILE of an interrupted run: FILE is copied to FILE.tmp (FILE itself
   is only read), and the copy keeps the first nrec diagnostics records and the first nsnap field
   snapshots and drops the rest and the end-of-run report (they belong to the interrupted future).
   The result is staged, as SgOutputCreate's. */
PETSC_EXTERN PetscErrorCode SgOutputReopen(MPI_Comm, const char filename[], PetscInt nrec, PetscInt nsnap, SgOutput *);
PETSC_EXTERN PetscErrorCode SgOutputGetCounts(SgOutput, PetscInt *nrec, PetscInt *nsnap);
PETSC_EXTERN PetscErrorCode SgOutputWriteProvenance(SgOutput, const char deck[], int argc, char **argv);
PETSC_EXTERN PetscErrorCode SgOutputDeclareDiagnostics(SgOutput, PetscInt n, const char *const names[], const char *const units[]);
PETSC_EXTERN PetscErrorCode SgOutputAppendDiagnostics(SgOutput, PetscInt step, PetscReal t, const PetscReal values[]);
/* Field snapshots: Begin, one WriteField per field, End (which rewrites the XDMF sidecar of an
   unstaged output; a staged one's is written once per commit, by Suspend). */
PETSC_EXTERN PetscErrorCode SgOutputBeginSnapshot(SgOutput, PetscInt step, PetscReal t);
/* v lives on a DMDA of dimension 1-3 with dof components; lo/hi are the physical extents per
   dimension (cell-centred data: the DMDA point i sits at lo + (i + 1/2) (hi - lo) / N). */
PETSC_EXTERN PetscErrorCode SgOutputWriteField(SgOutput, const char name[], Vec v, const PetscReal lo[], const PetscReal hi[]);
PETSC_EXTERN PetscErrorCode SgOutputEndSnapshot(SgOutput);
/* Whether the run wrote field snapshots, and so an XDMF sidecar BASE.xmf (MD runs write none). */
PETSC_EXTERN PetscErrorCode SgOutputHasFields(SgOutput, PetscBool *has);
PETSC_EXTERN PetscErrorCode SgOutputWriteReport(SgOutput, const char name[], const char units[], PetscInt n, const PetscReal values[]);
PETSC_EXTERN PetscErrorCode SgOutputFlush(SgOutput);
/* Commit points of a staged output (the driver renames between the two calls). Suspend: flush, write
   BASE.xmf.tmp and close FILE.tmp. Resume: open FILE.tmp again; the driver has put there either
   a copy of the committed FILE or (catchup) the file it committed before, an earlier state of the
   same output, which is brought up to FILE by copying only what was added since (new snapshots and
   groups, appended records): a commit costs what the interval wrote, not the size of the output. */
PETSC_EXTERN PetscErrorCode SgOutputSuspend(SgOutput);
PETSC_EXTERN PetscErrorCode SgOutputResume(SgOutput, PetscBool catchup);
PETSC_EXTERN PetscErrorCode SgOutputDestroy(SgOutput *);
