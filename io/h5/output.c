/* SgOutput: one HDF5 file per run plus an XDMF sidecar (layout in sgoutput.h and docs/run.md).

   Vectors go through PETSc's HDF5 viewer (parallel, natural ordering of the DMDA); everything
   else uses the same file id with plain HDF5 calls. Diagnostics are chunked, extendible 1D
   datasets: every rank extends them (a collective metadata operation), rank 0 writes the value. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <petscviewerhdf5.h>
#include "sgoutput.h"
#include "h5util.h"
#include "sgwrite.h"

#define SG_OUT_MAX_DIAG 80

typedef struct {
  char      field[64];
  PetscInt  k, step, ndim, dims[5], dof;
  PetscReal t, lo[3], hi[3];
} SgSnapRecord;

struct _n_SgOutput {
  MPI_Comm      comm;
  char          filename[PETSC_MAX_PATH_LEN]; /* the file written: FINAL.tmp when staged */
  char          final[PETSC_MAX_PATH_LEN];    /* its name once committed (the XDMF refers to it) */
  PetscBool     staged;
  PetscViewer   viewer;
  hid_t         file;
  PetscInt      ndiag, nrec, nsnap;
  char         *diag_name[SG_OUT_MAX_DIAG];
  PetscBool     in_snapshot;
  PetscInt      snap_step;
  PetscReal     snap_t;
  SgSnapRecord *rec;
  PetscInt      nrecords, caprecords;
  /* diagnostics records not yet in the file: row r holds time, step, then the ndiag values */
  PetscReal    *pending;
  PetscInt      npending, cappending;
};

#define SG_OUT_PENDING_ROWS 512

static PetscErrorCode OpenViewer(SgOutput out, PetscFileMode mode)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerHDF5Open(out->comm, out->filename, mode, &out->viewer));
  PetscCall(PetscViewerHDF5GetFileId(out->viewer, &out->file));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Can `file` be created or replaced? Decided on rank 0 without touching the file: its directory
   must exist and accept a new file (SgWriteDirectoryErrno: access() says yes to root on any
   directory), and `file` itself, if present, must be a writable regular file.
   Returns an empty message when it can, else the reason. */
static void WritableReason(const char file[], char msg[], size_t len)
{
  char        dir[PETSC_MAX_PATH_LEN];
  const char *slash = strrchr(file, '/');
  struct stat st;
  int         err;

  msg[0] = 0;
  if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
  else snprintf(dir, sizeof dir, ".");
  if (!dir[0]) snprintf(dir, sizeof dir, "/");
  if (!(slash ? slash[1] : file[0])) {
    snprintf(msg, len, "'%s' names a directory, not a file", file);
    return;
  }
  if (stat(dir, &st)) {
    /* the name twice fits only for paths under half the buffer: else the message names it once */
    if (snprintf(msg, len, "directory '%s' does not exist: create it (mkdir -p %s)", dir, dir) >= (int)len) snprintf(msg, len, "directory '%s' does not exist: create it", dir);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(msg, len, "'%s' is not a directory", dir);
    return;
  }
  if (!stat(file, &st)) {
    if (S_ISDIR(st.st_mode)) snprintf(msg, len, "'%s' is a directory: remove or rename it, or choose another output name", file);
    else if (!S_ISREG(st.st_mode)) snprintf(msg, len, "'%s' exists and is not a regular file", file);
    else if (access(file, W_OK)) snprintf(msg, len, "'%s' exists and is not writable (%s)", file, strerror(errno));
    if (msg[0]) return;
  }
  if ((err = SgWriteDirectoryErrno(dir))) snprintf(msg, len, "cannot create files in directory '%s' (%s)", dir, strerror(err));
}

PetscErrorCode SgOutputCheckPath(MPI_Comm comm, const char option[], const char base[], PetscInt n, const char *const suffix[])
{
  PetscMPIInt rank;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "", file[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCheck(base && base[0], comm, PETSC_ERR_USER_INPUT, "%s is empty: name the output base, e.g. %s run1 (writes run1.h5)", option, option);
  {
    const char *last = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    PetscCheck(last[0] && strcmp(last, ".") && strcmp(last, ".."), comm, PETSC_ERR_USER_INPUT, "%s '%s' names a directory, not an output base: add a file name, e.g. %s %s%srun1 (writes run1.h5 there)", option, base, option, base, last[0] ? "/" : "");
  }
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    for (PetscInt i = 0; i < n && !msg[0]; i++) {
      PetscCall(PetscSNPrintf(file, sizeof file, "%s%s", base, suffix[i]));
      WritableReason(file, msg, sizeof msg);
    }
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "cannot write the output of %s '%s': %s", option, base, msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputCreate(MPI_Comm comm, const char filename[], PetscBool staged, SgOutput *out)
{
  PetscFunctionBegin;
  PetscCall(PetscNew(out));
  (*out)->comm   = comm;
  (*out)->staged = staged;
  PetscCall(PetscStrncpy((*out)->final, filename, sizeof((*out)->final)));
  /* the run set's temporaries keep fixed names (FILE.tmp): the run holds BASE.lock (SgWriteLockAcquire),
     so no other job writes them, and the driver finds an interrupted run's by name */
  if (staged) PetscCall(PetscSNPrintf((*out)->filename, sizeof((*out)->filename), "%s.tmp", filename));
  else PetscCall(PetscStrncpy((*out)->filename, filename, sizeof((*out)->filename)));
  SgH5Quiet(); /* failures (a full disk) are reported as one PETSc error, not HDF5's stack */
  PetscCall(SgH5RemoveForCreate(comm, (*out)->filename)); /* a reader of the previous run's file keeps it */
  PetscCall(OpenViewer(*out, FILE_MODE_WRITE));
  PetscCall(SgH5MarkKind((*out)->filename, (*out)->file, SG_FILE_RUN_OUTPUT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputXdmfName(const char filename[], PetscBool staged, char xmf[], size_t len)
{
  size_t l;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(xmf, filename, len));
  l = strlen(xmf);
  if (l > 3 && !strcmp(xmf + l - 3, ".h5")) xmf[l - 3] = 0;
  PetscCall(PetscStrlcat(xmf, staged ? ".xmf.tmp" : ".xmf", len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputSetIdentity(SgOutput out, const char solver[], const char run_id[])
{
  PetscFunctionBegin;
  PetscCall(SgH5WriteRootString(out->filename, out->file, "solver", solver));
  PetscCall(SgH5WriteRootString(out->filename, out->file, "run_id", run_id));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputGetIdentity(MPI_Comm comm, const char filename[], char solver[], char run_id[], size_t len)
{
  PetscMPIInt rank;
  char        buf[2][256] = {"", ""};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    hid_t f;
    SgHDF5Lock();
    H5E_BEGIN_TRY
    {
      f = H5Fopen(filename, H5F_ACC_RDONLY, H5P_DEFAULT);
      if (f >= 0) {
        const char *names[2] = {"solver", "run_id"};
        for (int i = 0; i < 2; i++) {
          char *v = NULL;
          if (H5Aexists(f, names[i]) > 0 && !SgH5ReadAttrString(filename, f, names[i], &v) && v) snprintf(buf[i], sizeof buf[i], "%s", v);
          if (v) PetscFree(v);
        }
        H5Fclose(f);
      }
    }
    H5E_END_TRY
    SgHDF5Unlock();
  }
  PetscCallMPI(MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, 0, comm));
  PetscCall(PetscStrncpy(solver, buf[0], len));
  PetscCall(PetscStrncpy(run_id, buf[1], len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputGetCounts(SgOutput out, PetscInt *nrec, PetscInt *nsnap)
{
  PetscFunctionBegin;
  if (nrec) *nrec = out->nrec;
  if (nsnap) *nsnap = out->nsnap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputWriteProvenance(SgOutput out, const char deck[], int argc, char **argv)
{
  hid_t  g;
  char   date[64], cmd[4096] = "";
  time_t now = time(NULL);
  char  *text = NULL;
  size_t len  = 0;

  PetscFunctionBegin;
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  for (int i = 0; i < argc; i++) {
    PetscCall(PetscStrlcat(cmd, argv[i], sizeof cmd));
    PetscCall(PetscStrlcat(cmd, " ", sizeof cmd));
  }
  if (deck) { /* rank 0 reads the deck and broadcasts it so every rank writes the same attribute */
    PetscMPIInt rank;
    long        n = 0;
    PetscCallMPI(MPI_Comm_rank(out->comm, &rank));
    if (!rank) {
      FILE *fp = fopen(deck, "rb");
      if (fp) {
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
      }
      PetscCall(PetscMalloc1(n + 1, &text));
      if (fp) {
        n = (long)fread(text, 1, (size_t)n, fp);
        fclose(fp);
      }
      text[n] = 0;
    }
    PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, out->comm));
    if (rank) PetscCall(PetscMalloc1(n + 1, &text));
    PetscCallMPI(MPI_Bcast(text, (int)n + 1, MPI_CHAR, 0, out->comm));
    len = (size_t)n;
  }
  PetscCall(SgH5OpenOrCreateGroup(out->file, "/provenance", &g));
  PetscCall(SgH5WriteAttrString(out->filename, g, "surge_version", SURGE_VERSION));
  PetscCall(SgH5WriteAttrString(out->filename, g, "date", date));
  PetscCall(SgH5WriteAttrString(out->filename, g, "command", cmd));
  PetscCall(SgH5WriteAttrString(out->filename, g, "deck_file", deck ? deck : ""));
  PetscCall(SgH5WriteAttrString(out->filename, g, "deck", text && len ? text : ""));
  SgCallH5(H5Gclose(g));
  PetscCall(PetscFree(text));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateSeries(const char path[], hid_t g, const char name[], const char units[])
{
  hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = 256;
  hid_t   space, dcpl, dset;

  PetscFunctionBegin;
  if (H5Lexists(g, name, H5P_DEFAULT) > 0) PetscFunctionReturn(PETSC_SUCCESS); /* reopened file */
  space = H5Screate_simple(1, &dims, &maxdims);
  dcpl  = H5Pcreate(H5P_DATASET_CREATE);
  SgCallH5(H5Pset_chunk(dcpl, 1, &chunk));
  dset = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  PetscCall(SgH5WriteAttrString(path, dset, "units", units ? units : ""));
  SgCallH5(H5Dclose(dset));
  SgCallH5(H5Pclose(dcpl));
  SgCallH5(H5Sclose(space));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputDeclareDiagnostics(SgOutput out, PetscInt n, const char *const names[], const char *const units[])
{
  hid_t g;

  PetscFunctionBegin;
  PetscCheck(n + 2 <= SG_OUT_MAX_DIAG, out->comm, PETSC_ERR_SUP, "Too many diagnostics (%" PetscInt_FMT ")", n);
  PetscCall(SgH5OpenOrCreateGroup(out->file, "/diagnostics", &g));
  PetscCall(CreateSeries(out->filename, g, "time", "simulation time units"));
  PetscCall(CreateSeries(out->filename, g, "step", ""));
  for (PetscInt i = 0; i < n; i++) {
    PetscCheck(strcmp(names[i], "time") && strcmp(names[i], "step"), out->comm, PETSC_ERR_ARG_WRONG, "Diagnostic name '%s' is reserved", names[i]);
    PetscCall(CreateSeries(out->filename, g, names[i], units ? units[i] : ""));
    PetscCall(PetscStrallocpy(names[i], &out->diag_name[i]));
  }
  out->ndiag = n;
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Write the pending rows of column `col` of the buffer at records [first, first + count). */
static PetscErrorCode WriteSeriesBlock(SgOutput out, hid_t g, const char name[], PetscInt col, PetscInt first, PetscInt count, PetscReal *scratch)
{
  hsize_t     size = (hsize_t)(first + count), start = (hsize_t)first, n = (hsize_t)count;
  hid_t       dset, fspace, mspace;
  PetscMPIInt rank;
  PetscInt    width = out->ndiag + 2;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(out->comm, &rank));
  for (PetscInt r = 0; r < count; r++) scratch[r] = out->pending[r * width + col];
  dset = H5Dopen2(g, name, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  SgCallH5(H5Dset_extent(dset, &size)); /* collective: every rank extends */
  fspace = H5Dget_space(dset);
  mspace = H5Screate_simple(1, &n, NULL);
  if (!rank) SgCallH5(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &n, NULL));
  else { /* only rank 0 holds the values; the others take part with empty selections */
    SgCallH5(H5Sselect_none(fspace));
    SgCallH5(H5Sselect_none(mspace));
  }
  { /* only rank 0 writes: agree on its outcome, so a full disk ends every rank with one line */
    int bad = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, scratch) < 0, any = bad;
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(out->comm, &size));
    if (size > 1) PetscCallMPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, out->comm));
    PetscCheck(!any, out->comm, PETSC_ERR_FILE_OPEN, "cannot write the diagnostics %s to %s (disk full?); the committed output is unchanged", name, out->filename);
  }
  SgCallH5(H5Sclose(mspace));
  SgCallH5(H5Sclose(fspace));
  SgCallH5(H5Dclose(dset));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FlushDiagnostics(SgOutput out)
{
  hid_t      g;
  PetscReal *scratch;
  PetscInt   first = out->nrec - out->npending;

  PetscFunctionBegin;
  if (!out->npending) PetscFunctionReturn(PETSC_SUCCESS);
  g = H5Gopen2(out->file, "/diagnostics", H5P_DEFAULT);
  SgCheckH5Id(g, "/diagnostics");
  PetscCall(PetscMalloc1(out->npending, &scratch));
  PetscCall(WriteSeriesBlock(out, g, "time", 0, first, out->npending, scratch));
  PetscCall(WriteSeriesBlock(out, g, "step", 1, first, out->npending, scratch));
  for (PetscInt i = 0; i < out->ndiag; i++) PetscCall(WriteSeriesBlock(out, g, out->diag_name[i], i + 2, first, out->npending, scratch));
  PetscCall(PetscFree(scratch));
  SgCallH5(H5Gclose(g));
  out->npending = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Records are buffered and written in blocks (one extend + write per series per block): a write
   per step would cost more than a short solver step. SgOutputFlush forces them out. */
PetscErrorCode SgOutputAppendDiagnostics(SgOutput out, PetscInt step, PetscReal t, const PetscReal values[])
{
  PetscInt width = out->ndiag + 2;

  PetscFunctionBegin;
  if (!out->pending) {
    out->cappending = SG_OUT_PENDING_ROWS;
    PetscCall(PetscMalloc1(out->cappending * width, &out->pending));
  }
  if (out->npending == out->cappending) PetscCall(FlushDiagnostics(out));
  out->pending[out->npending * width + 0] = t;
  out->pending[out->npending * width + 1] = (PetscReal)step;
  for (PetscInt i = 0; i < out->ndiag; i++) out->pending[out->npending * width + 2 + i] = values[i];
  out->npending++;
  out->nrec++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputBeginSnapshot(SgOutput out, PetscInt step, PetscReal t)
{
  PetscFunctionBegin;
  PetscCheck(!out->in_snapshot, out->comm, PETSC_ERR_ORDER, "SgOutputBeginSnapshot called twice");
  out->in_snapshot = PETSC_TRUE;
  out->snap_step   = step;
  out->snap_t      = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddRecord(SgOutput out, const SgSnapRecord *r)
{
  PetscFunctionBegin;
  if (out->nrecords == out->caprecords) {
    SgSnapRecord *bigger;
    out->caprecords = out->caprecords ? 2 * out->caprecords : 64;
    PetscCall(PetscMalloc1(out->caprecords, &bigger));
    if (out->nrecords) PetscCall(PetscArraycpy(bigger, out->rec, out->nrecords));
    PetscCall(PetscFree(out->rec));
    out->rec = bigger;
  }
  out->rec[out->nrecords++] = *r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Describe dataset `path` (its shape and our attributes) as a snapshot record. */
static PetscErrorCode ReadRecord(hid_t file, const char field[], PetscInt k, SgSnapRecord *r)
{
  char      path[256];
  hid_t     dset, space;
  hsize_t   dims[5];
  PetscReal v[3];
  PetscBool found;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(r, sizeof *r));
  PetscCall(PetscStrncpy(r->field, field, sizeof r->field));
  r->k = k;
  PetscCall(PetscSNPrintf(path, sizeof path, "/fields/%s/%" PetscInt_FMT, field, k));
  dset = H5Dopen2(file, path, H5P_DEFAULT);
  SgCheckH5Id(dset, path);
  space   = H5Dget_space(dset);
  r->ndim = H5Sget_simple_extent_ndims(space);
  PetscCheck(r->ndim >= 1 && r->ndim <= 5, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s has rank %" PetscInt_FMT, path, r->ndim);
  SgCallH5(H5Sget_simple_extent_dims(space, dims, NULL));
  for (PetscInt i = 0; i < r->ndim; i++) r->dims[i] = (PetscInt)dims[i];
  SgCallH5(H5Sclose(space));
  PetscCall(SgH5ReadAttrReals(dset, "time", 1, &r->t, &found));
  PetscCall(SgH5ReadAttrReals(dset, "step", 1, v, &found));
  r->step = (PetscInt)v[0];
  PetscCall(SgH5ReadAttrReals(dset, "dof", 1, v, &found));
  r->dof = (PetscInt)v[0];
  PetscCall(SgH5ReadAttrReals(dset, "lo", 3, r->lo, &found));
  PetscCall(SgH5ReadAttrReals(dset, "hi", 3, r->hi, &found));
  SgCallH5(H5Dclose(dset));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputWriteField(SgOutput out, const char name[], Vec v, const PetscReal lo[], const PetscReal hi[])
{
  DM           da;
  PetscInt     dim, M, N, P, dof;
  char         group[256], dname[32], path[300];
  const char  *oldname;
  hid_t        dset;
  PetscReal    lo3[3] = {0, 0, 0}, hi3[3] = {1, 1, 1}, tmp;
  SgSnapRecord r;

  PetscFunctionBegin;
  PetscCheck(out->in_snapshot, out->comm, PETSC_ERR_ORDER, "Call SgOutputBeginSnapshot before SgOutputWriteField");
  PetscCall(VecGetDM(v, &da));
  PetscCheck(da, out->comm, PETSC_ERR_ARG_WRONG, "Field %s: the vector has no DMDA attached", name);
  PetscCall(DMDAGetInfo(da, &dim, &M, &N, &P, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  for (PetscInt d = 0; d < dim; d++) {
    lo3[d] = lo[d];
    hi3[d] = hi[d];
  }
  PetscCall(PetscSNPrintf(group, sizeof group, "/fields/%s", name));
  PetscCall(PetscSNPrintf(dname, sizeof dname, "%" PetscInt_FMT, out->nsnap));
  {
    char what[320];
    PetscCall(PetscSNPrintf(what, sizeof what, "the field %s of snapshot %" PetscInt_FMT, name, out->nsnap));
    PetscCall(SgH5CheckRoom(out->comm, out->final, (double)M * PetscMax(N, 1) * PetscMax(P, 1) * dof * sizeof(PetscScalar), what));
  }
  PetscCall(PetscObjectGetName((PetscObject)v, &oldname));
  {
    char *keep;
    PetscCall(PetscStrallocpy(oldname, &keep));
    PetscCall(PetscObjectSetName((PetscObject)v, dname));
    PetscCall(PetscViewerHDF5PushGroup(out->viewer, group));
    PetscCall(VecView(v, out->viewer));
    PetscCall(PetscViewerHDF5PopGroup(out->viewer));
    PetscCall(PetscObjectSetName((PetscObject)v, keep));
    PetscCall(PetscFree(keep));
  }
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s", group, dname));
  dset = H5Dopen2(out->file, path, H5P_DEFAULT);
  SgCheckH5Id(dset, path);
  PetscCall(SgH5WriteAttrReals(dset, "time", 1, &out->snap_t));
  tmp = (PetscReal)out->snap_step;
  PetscCall(SgH5WriteAttrReals(dset, "step", 1, &tmp));
  tmp = (PetscReal)dof;
  PetscCall(SgH5WriteAttrReals(dset, "dof", 1, &tmp));
  PetscCall(SgH5WriteAttrReals(dset, "lo", 3, lo3));
  PetscCall(SgH5WriteAttrReals(dset, "hi", 3, hi3));
  SgCallH5(H5Dclose(dset));
  PetscCall(ReadRecord(out->file, name, out->nsnap, &r));
  PetscCall(AddRecord(out, &r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The XDMF sidecar: one temporal collection per field, cell-centred data on a co-rectilinear mesh.
   1D fields are shown as a one-cell-thick 2D mesh (XDMF has no 1D structured topology). */
static PetscErrorCode WriteXdmfFile(SgOutput out, char msg[], size_t len)
{
  char        xmf[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 8];
  const char *h5base;
  FILE       *fp;

  PetscFunctionBegin;
  PetscCall(SgOutputXdmfName(out->final, out->staged, xmf, sizeof xmf));
  h5base = strrchr(out->final, '/') ? strrchr(out->final, '/') + 1 : out->final;
  PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", xmf));
  fp = fopen(tmp, "w");
  if (!fp) {
    int e = errno;
    PetscCall(PetscSNPrintf(msg, len, "cannot create %s (%s%s)", tmp, strerror(e), e == ENOSPC ? ": disk full" : ""));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  fprintf(fp, "<?xml version=\"1.0\" ?>\n<!-- surge-file: %s -->\n<Xdmf Version=\"3.0\">\n <Domain>\n", SG_FILE_RUN_XDMF);
  for (PetscInt i = 0; i < out->nrecords; i++) {
    PetscBool first = PETSC_TRUE;
    for (PetscInt j = 0; j < i; j++)
      if (!strcmp(out->rec[j].field, out->rec[i].field)) first = PETSC_FALSE;
    if (!first) continue;
    fprintf(fp, "  <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", out->rec[i].field);
    for (PetscInt j = i; j < out->nrecords; j++) {
      const SgSnapRecord *r = &out->rec[j];
      PetscInt            sdim = r->ndim - (r->dof > 1 ? 1 : 0), cells[3], pd;
      char                dims[128] = "";
      if (strcmp(r->field, out->rec[i].field)) continue;
      /* HDF5 dims are slowest first (z, y, x) */
      for (PetscInt d = 0; d < sdim; d++) cells[d] = r->dims[d];
      pd = sdim < 2 ? 2 : sdim;
      fprintf(fp, "   <Grid Name=\"%s_%" PetscInt_FMT "\" GridType=\"Uniform\">\n    <Time Value=\"%.17g\"/>\n", r->field, r->k, (double)r->t);
      if (sdim == 1) fprintf(fp, "    <Topology TopologyType=\"2DCoRectMesh\" Dimensions=\"2 %" PetscInt_FMT "\"/>\n", cells[0] + 1);
      else if (sdim == 2) fprintf(fp, "    <Topology TopologyType=\"2DCoRectMesh\" Dimensions=\"%" PetscInt_FMT " %" PetscInt_FMT "\"/>\n", cells[0] + 1, cells[1] + 1);
      else fprintf(fp, "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT "\"/>\n", cells[0] + 1, cells[1] + 1, cells[2] + 1);
      fprintf(fp, "    <Geometry GeometryType=\"%s\">\n", pd == 2 ? "ORIGIN_DXDY" : "ORIGIN_DXDYDZ");
      fprintf(fp, "     <DataItem Format=\"XML\" Dimensions=\"%" PetscInt_FMT "\">", pd);
      for (PetscInt d = pd - 1; d >= 0; d--) fprintf(fp, " %.17g", (double)(d < sdim ? r->lo[d] : 0.0));
      fprintf(fp, "</DataItem>\n     <DataItem Format=\"XML\" Dimensions=\"%" PetscInt_FMT "\">", pd);
      for (PetscInt d = pd - 1; d >= 0; d--) {
        PetscInt n = d < sdim ? cells[sdim - 1 - d] : 1;
        fprintf(fp, " %.17g", (double)(d < sdim ? (r->hi[d] - r->lo[d]) / n : 1.0));
      }
      fprintf(fp, "</DataItem>\n    </Geometry>\n");
      if (sdim == 1) PetscCall(PetscSNPrintf(dims, sizeof dims, "1 %" PetscInt_FMT, cells[0]));
      else
        for (PetscInt d = 0; d < sdim; d++) {
          char one[32];
          PetscCall(PetscSNPrintf(one, sizeof one, "%s%" PetscInt_FMT, d ? " " : "", cells[d]));
          PetscCall(PetscStrlcat(dims, one, sizeof dims));
        }
      if (r->dof > 1) {
        char one[32];
        PetscCall(PetscSNPrintf(one, sizeof one, " %" PetscInt_FMT, r->dof));
        PetscCall(PetscStrlcat(dims, one, sizeof dims));
      }
      fprintf(fp, "    <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"Cell\">\n", r->field, r->dof == 1 ? "Scalar" : r->dof == 3 ? "Vector" : "Matrix");
      fprintf(fp, "     <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"8\" Dimensions=\"%s\">%s:/fields/%s/%" PetscInt_FMT "</DataItem>\n", dims, h5base, r->field, r->k);
      fprintf(fp, "    </Attribute>\n   </Grid>\n");
    }
    fprintf(fp, "  </Grid>\n");
  }
  fprintf(fp, " </Domain>\n</Xdmf>\n");
  {
    int bad = fflush(fp) != 0 || ferror(fp);
    bad     = fclose(fp) != 0 || bad;
    if (bad) {
      (void)SgWriteDiscard(tmp);
      PetscCall(PetscSNPrintf(msg, len, "cannot write %.*s (disk full?)", SgWriteShownLength(xmf), xmf));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  {
    int err = SgWriteCommitErrno(tmp, xmf);
    if (err) PetscCall(PetscSNPrintf(msg, len, "cannot write %.*s (%s%s)", SgWriteShownLength(xmf), xmf, strerror(err), err == ENOSPC ? ": disk full" : ""));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 alone writes the sidecar; its failure is broadcast so that every rank stops with the same
   one-line error (a failure known to one rank ended the job with MPI_Abort). Collective. */
static PetscErrorCode WriteXdmf(SgOutput out)
{
  PetscMPIInt rank, size;
  char        msg[2 * PETSC_MAX_PATH_LEN + 128] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(out->comm, &rank));
  PetscCallMPI(MPI_Comm_size(out->comm, &size));
  /* a run without field snapshots (MD: its particles are in the H5MD trajectory) gets no sidecar:
     an XDMF file with an empty Domain is one ParaView opens to nothing */
  if (!out->nrecords) PetscFunctionReturn(PETSC_SUCCESS);
  if (!rank) PetscCall(WriteXdmfFile(out, msg, sizeof msg));
  if (size > 1) PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, out->comm));
  PetscCheck(!msg[0], out->comm, PETSC_ERR_FILE_OPEN, "%s; the committed output is unchanged", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputHasFields(SgOutput out, PetscBool *has)
{
  PetscFunctionBegin;
  *has = out->nrecords ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputEndSnapshot(SgOutput out)
{
  PetscFunctionBegin;
  PetscCheck(out->in_snapshot, out->comm, PETSC_ERR_ORDER, "SgOutputEndSnapshot without SgOutputBeginSnapshot");
  out->in_snapshot = PETSC_FALSE;
  out->nsnap++;
  PetscCall(FlushDiagnostics(out));
  SgCallH5(H5Fflush(out->file, H5F_SCOPE_GLOBAL));
  /* A staged output's sidecar is written when the set is committed (SgOutputSuspend): until then
     nothing can read the snapshots it would list, and rewriting the whole sidecar at every snapshot
     made a run's XDMF writes grow with the square of its snapshot count. */
  if (!out->staged) PetscCall(WriteXdmf(out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputWriteReport(SgOutput out, const char name[], const char units[], PetscInt n, const PetscReal values[])
{
  hid_t g, dset;

  PetscFunctionBegin;
  PetscCall(SgH5OpenOrCreateGroup(out->file, "/report", &g));
  PetscCall(SgH5WriteRootReals(out->comm, g, name, n, values));
  dset = H5Dopen2(g, name, H5P_DEFAULT);
  SgCheckH5Id(dset, name);
  PetscCall(SgH5WriteAttrString(out->filename, dset, "units", units ? units : ""));
  SgCallH5(H5Dclose(dset));
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputFlush(SgOutput out)
{
  PetscFunctionBegin;
  PetscCall(FlushDiagnostics(out));
  SgCallH5(H5Fflush(out->file, H5F_SCOPE_GLOBAL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collect field names under /fields (H5Literate callback). */
typedef struct {
  char     names[64][64];
  PetscInt n;
} FieldNames;
static herr_t CollectName(hid_t g, const char *name, const H5L_info_t *info, void *ctx)
{
  FieldNames *fn = (FieldNames *)ctx;
  (void)g;
  (void)info;
  if (fn->n < 64) snprintf(fn->names[fn->n++], 64, "%s", name);
  return 0;
}

/* Does the output still hold what the checkpoint counted (nrec records, nsnap snapshots)? A later
   fresh run with the same output base rewrites BASE.h5 but leaves an older BASE.chk.h5 in place
   until its own first checkpoint; restarting from that one must be refused before the file is
   opened for writing, not "continued" by extending the newer file with empty records. Rank 0 reads. */
static PetscErrorCode CheckHolds(MPI_Comm comm, const char filename[], PetscInt nrec, PetscInt nsnap)
{
  PetscMPIInt rank;
  long long   have[2] = {0, (long long)nsnap}; /* a solver may write no fields at all (md): then only records count */

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    hid_t f = H5Fopen(filename, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
      if (H5Lexists(f, "/diagnostics", H5P_DEFAULT) > 0 && H5Lexists(f, "/diagnostics/time", H5P_DEFAULT) > 0) {
        hid_t   d = H5Dopen2(f, "/diagnostics/time", H5P_DEFAULT), sp = H5Dget_space(d);
        hsize_t n = 0;
        H5Sget_simple_extent_dims(sp, &n, NULL);
        have[0] = (long long)n;
        H5Sclose(sp);
        H5Dclose(d);
      }
      if (H5Lexists(f, "/fields", H5P_DEFAULT) > 0) {
        FieldNames fn = {.n = 0};
        hid_t      g  = H5Gopen2(f, "/fields", H5P_DEFAULT);
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, CollectName, &fn);
        H5Gclose(g);
        if (fn.n) have[1] = 0;
        for (PetscInt k = 0; k < nsnap && fn.n; k++) {
          char path[256];
          snprintf(path, sizeof path, "/fields/%s/%" PetscInt_FMT, fn.names[0], k);
          if (H5Lexists(f, path, H5P_DEFAULT) <= 0) break;
          have[1] = k + 1;
        }
      }
      H5Fclose(f);
    }
  }
  PetscCallMPI(MPI_Bcast(have, 2, MPI_LONG_LONG, 0, comm));
  PetscCheck(have[0] >= nrec && have[1] >= nsnap, comm, PETSC_ERR_FILE_UNEXPECTED, "'%s' holds %lld diagnostics records and %lld snapshots but the checkpoint was taken after %" PetscInt_FMT " and %" PetscInt_FMT ": the output was rewritten by a later run since that checkpoint (or damaged); start a fresh run", filename, have[0], have[1], nrec, nsnap);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputReopen(MPI_Comm comm, const char filename[], PetscInt nrec, PetscInt nsnap, SgOutput *outp)
{
  SgOutput    out;
  hid_t       g;
  PetscMPIInt rank;
  int         err = 0;

  PetscFunctionBegin;
  PetscCall(SgH5CheckReadable(comm, filename, "Output file of the interrupted run"));
  PetscCall(CheckHolds(comm, filename, nrec, nsnap));
  PetscCall(PetscNew(&out));
  out->comm   = comm;
  out->staged = PETSC_TRUE;
  PetscCall(PetscStrncpy(out->final, filename, sizeof out->final));
  PetscCall(PetscSNPrintf(out->filename, sizeof out->filename, "%s.tmp", filename)); /* the run set's fixed name (SgOutputCreate) */
  /* the committed file is never edited: the run continues in a copy, committed at its checkpoints */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) err = SgWriteCopyErrno(filename, out->filename);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (err) {
    PetscCall(PetscFree(out));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "cannot copy %s to continue it (%s%s); the output is unchanged", filename, strerror(err), err == ENOSPC ? ": disk full, free space and restart" : "");
  }
  SgH5Quiet();
  PetscCall(OpenViewer(out, FILE_MODE_APPEND));
  /* diagnostics: drop records written after the checkpoint */
  if (H5Lexists(out->file, "/diagnostics", H5P_DEFAULT) > 0) {
    FieldNames dn = {.n = 0};
    hsize_t    size = (hsize_t)nrec;
    g               = H5Gopen2(out->file, "/diagnostics", H5P_DEFAULT);
    SgCallH5(H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, CollectName, &dn));
    for (PetscInt i = 0; i < dn.n; i++) {
      hid_t d = H5Dopen2(g, dn.names[i], H5P_DEFAULT);
      SgCheckH5Id(d, dn.names[i]);
      SgCallH5(H5Dset_extent(d, &size));
      SgCallH5(H5Dclose(d));
    }
    SgCallH5(H5Gclose(g));
  }
  out->nrec = nrec;
  /* the end-of-run report belongs to the interrupted future too: the run writes it again */
  if (H5Lexists(out->file, "/report", H5P_DEFAULT) > 0) SgCallH5(H5Ldelete(out->file, "/report", H5P_DEFAULT));
  /* fields: keep snapshots < nsnap, delete the others, rebuild the XDMF records */
  if (H5Lexists(out->file, "/fields", H5P_DEFAULT) > 0) {
    FieldNames fn = {.n = 0};
    g             = H5Gopen2(out->file, "/fields", H5P_DEFAULT);
    SgCallH5(H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, CollectName, &fn));
    SgCallH5(H5Gclose(g));
    for (PetscInt k = 0; k < nsnap; k++)
      for (PetscInt i = 0; i < fn.n; i++) {
        char path[256];
        PetscCall(PetscSNPrintf(path, sizeof path, "/fields/%s/%" PetscInt_FMT, fn.names[i], k));
        if (H5Lexists(out->file, path, H5P_DEFAULT) > 0) {
          SgSnapRecord r;
          PetscCall(ReadRecord(out->file, fn.names[i], k, &r));
          PetscCall(AddRecord(out, &r));
        }
      }
    for (PetscInt i = 0; i < fn.n; i++)
      for (PetscInt k = nsnap;; k++) {
        char path[256];
        PetscCall(PetscSNPrintf(path, sizeof path, "/fields/%s/%" PetscInt_FMT, fn.names[i], k));
        if (H5Lexists(out->file, path, H5P_DEFAULT) <= 0) break;
        SgCallH5(H5Ldelete(out->file, path, H5P_DEFAULT));
      }
  }
  out->nsnap = nsnap;
  PetscCall(WriteXdmf(out));
  *outp = out;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The list of link names of a group, in name order (the same on every rank: collective calls
   that follow it are made in the same order). */
typedef struct {
  char   **name;
  PetscInt n, cap;
  int      oom;
} NameList;
static herr_t ListName(hid_t g, const char *name, const H5L_info_t *info, void *ctx)
{
  NameList *l = (NameList *)ctx;
  (void)g;
  (void)info;
  if (l->n == l->cap) {
    char **bigger = realloc(l->name, (size_t)(l->cap ? 2 * l->cap : 64) * sizeof *bigger);
    if (!bigger) {
      l->oom = 1;
      return -1;
    }
    l->name = bigger;
    l->cap  = l->cap ? 2 * l->cap : 64;
  }
  l->name[l->n] = strdup(name);
  if (!l->name[l->n]) {
    l->oom = 1;
    return -1;
  }
  l->n++;
  return 0;
}
static void NameListFree(NameList *l)
{
  for (PetscInt i = 0; i < l->n; i++) free(l->name[i]);
  free(l->name);
}

/* dst's dataset d extended to src's extent, the new rows copied (rank 0 moves the values, the
   others take part in the collective extend and write with empty selections) */
static PetscErrorCode ExtendFrom(MPI_Comm comm, hid_t src, hid_t dst, const char name[])
{
  hid_t       ds = H5Dopen2(src, name, H5P_DEFAULT), dd = H5Dopen2(dst, name, H5P_DEFAULT), sps, spd, type, fs, fd, ms;
  hsize_t     ns[5], nd[5], start, count;
  int         rank_s, rank_d;
  PetscMPIInt rank;
  char       *buf = NULL;

  PetscFunctionBegin;
  SgCheckH5Id(ds, name);
  SgCheckH5Id(dd, name);
  sps    = H5Dget_space(ds);
  spd    = H5Dget_space(dd);
  rank_s = H5Sget_simple_extent_dims(sps, ns, NULL);
  rank_d = H5Sget_simple_extent_dims(spd, nd, NULL);
  SgCallH5(H5Sclose(sps));
  SgCallH5(H5Sclose(spd));
  PetscCheck(rank_s == rank_d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "dataset %s changed shape between checkpoints", name);
  if (rank_s == 1 && ns[0] > nd[0]) { /* an appended series (diagnostics): written once, only ever extended */
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    start = nd[0];
    count = ns[0] - nd[0];
    type  = H5Dget_type(ds);
    SgCheckH5Id(type, name);
    SgCallH5(H5Dset_extent(dd, ns));
    PetscCall(PetscMalloc1(count * H5Tget_size(type), &buf));
    fs = H5Dget_space(ds);
    fd = H5Dget_space(dd);
    ms = H5Screate_simple(1, &count, NULL);
    if (!rank) {
      SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
      SgCallH5(H5Sselect_hyperslab(fd, H5S_SELECT_SET, &start, NULL, &count, NULL));
    } else {
      SgCallH5(H5Sselect_none(fs));
      SgCallH5(H5Sselect_none(fd));
      SgCallH5(H5Sselect_none(ms));
    }
    SgCallH5(H5Dread(ds, type, ms, fs, H5P_DEFAULT, buf));
    SgCallH5(H5Dwrite(dd, type, ms, fd, H5P_DEFAULT, buf));
    PetscCall(PetscFree(buf));
    SgCallH5(H5Sclose(ms));
    SgCallH5(H5Sclose(fs));
    SgCallH5(H5Sclose(fd));
    SgCallH5(H5Tclose(type));
  } else PetscCheck(rank_s != 1 || ns[0] == nd[0], PETSC_COMM_SELF, PETSC_ERR_PLIB, "dataset %s shrank between checkpoints", name);
  SgCallH5(H5Dclose(ds));
  SgCallH5(H5Dclose(dd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bring group dst up to src, where dst is an earlier state of the same output: what src has and dst
   lacks is copied (H5Ocopy: new snapshots, new groups), appended series are extended. Objects are
   never changed once written, so that is the whole difference. */
static PetscErrorCode SyncGroup(MPI_Comm comm, hid_t src, hid_t dst)
{
  NameList l = {NULL, 0, 0, 0};

  PetscFunctionBegin;
  SgCallH5(H5Literate(src, H5_INDEX_NAME, H5_ITER_INC, NULL, ListName, &l));
  PetscCheck(!l.oom, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory listing an output group");
  for (PetscInt i = 0; i < l.n; i++) {
    if (H5Lexists(dst, l.name[i], H5P_DEFAULT) <= 0) SgCallH5(H5Ocopy(src, l.name[i], dst, l.name[i], H5P_DEFAULT, H5P_DEFAULT));
    else {
      hid_t      o = H5Oopen(src, l.name[i], H5P_DEFAULT);
      H5I_type_t t;
      SgCheckH5Id(o, l.name[i]);
      t = H5Iget_type(o);
      SgCallH5(H5Oclose(o));
      if (t == H5I_GROUP) {
        hid_t gs = H5Gopen2(src, l.name[i], H5P_DEFAULT), gd = H5Gopen2(dst, l.name[i], H5P_DEFAULT);
        SgCheckH5Id(gs, l.name[i]);
        SgCheckH5Id(gd, l.name[i]);
        PetscCall(SyncGroup(comm, gs, gd));
        SgCallH5(H5Gclose(gs));
        SgCallH5(H5Gclose(gd));
      } else if (t == H5I_DATASET) PetscCall(ExtendFrom(comm, src, dst, l.name[i]));
    }
  }
  NameListFree(&l);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputSuspend(SgOutput out)
{
  PetscFunctionBegin;
  PetscCall(FlushDiagnostics(out));
  PetscCall(WriteXdmf(out)); /* the sidecar of the set about to be committed */
  PetscCall(PetscViewerDestroy(&out->viewer)); /* closes the file: everything is in FILE.tmp */
  out->file = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgOutputResume(SgOutput out, PetscBool catchup)
{
  PetscFunctionBegin;
  PetscCheck(out->staged && !out->viewer, out->comm, PETSC_ERR_ORDER, "SgOutputResume: the output was not suspended");
  PetscCall(OpenViewer(out, FILE_MODE_APPEND));
  if (catchup) {
    PetscViewer v;
    hid_t       f, src, dst;
    PetscCall(PetscViewerHDF5Open(out->comm, out->final, FILE_MODE_READ, &v));
    PetscCall(PetscViewerHDF5GetFileId(v, &f));
    src = H5Gopen2(f, "/", H5P_DEFAULT);
    dst = H5Gopen2(out->file, "/", H5P_DEFAULT);
    SgCheckH5Id(src, out->final);
    SgCheckH5Id(dst, out->filename);
    PetscCall(SyncGroup(out->comm, src, dst));
    SgCallH5(H5Gclose(src));
    SgCallH5(H5Gclose(dst));
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A failed flush or close (a full disk) still frees everything; the first error is returned. */
PetscErrorCode SgOutputDestroy(SgOutput *out)
{
  PetscErrorCode flush = PETSC_SUCCESS, shut;

  PetscFunctionBegin;
  if (!*out) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*out)->viewer) flush = FlushDiagnostics(*out);
  PetscCall(PetscFree((*out)->pending));
  for (PetscInt i = 0; i < (*out)->ndiag; i++) PetscCall(PetscFree((*out)->diag_name[i]));
  shut = PetscViewerDestroy(&(*out)->viewer);
  PetscCall(PetscFree((*out)->rec));
  PetscCall(PetscFree(*out));
  PetscCall(flush);
  PetscCall(shut);
  PetscFunctionReturn(PETSC_SUCCESS);
}
