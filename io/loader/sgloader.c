/* SgLoader object: settings, set-up, delivery of batches, the I/O thread (see sgloader.h).

   Threading rule: between SgLoaderSetUp and SgLoaderDestroy every HDF5 call of the loader happens
   on the I/O thread (or, with prefetch 0, inside SgLoaderNext). Debian's HDF5 is not built
   thread-safe, so the caller must not use HDF5 on another thread while a threaded loader is
   between two SgLoaderNext calls; see docs/loader.md. The I/O thread never calls PETSc or MPI
   except through HDF5's MPI-IO driver, which is only selected when MPI provides
   MPI_THREAD_MULTIPLE. */
#include "sgloaderimpl.h"
#include "../dataset/sgdataset_h5.h"
#include <string.h>

PetscClassId  SG_LOADER_CLASSID;
PetscLogEvent SG_LOADER_Read, SG_LOADER_Plan, SG_LOADER_Wait;
static PetscBool registered = PETSC_FALSE;

PetscErrorCode SgLoaderInitializePackage(void)
{
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(PETSC_SUCCESS);
  registered = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("SgLoader", &SG_LOADER_CLASSID));
  PetscCall(PetscLogEventRegister("SgLoaderRead", SG_LOADER_CLASSID, &SG_LOADER_Read));
  PetscCall(PetscLogEventRegister("SgLoaderPlan", SG_LOADER_CLASSID, &SG_LOADER_Plan));
  PetscCall(PetscLogEventRegister("SgLoaderWait", SG_LOADER_CLASSID, &SG_LOADER_Wait));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderCreate(MPI_Comm comm, SgLoader *out)
{
  SgLoader l;

  PetscFunctionBegin;
  PetscCall(SgLoaderInitializePackage());
  PetscCall(PetscHeaderCreate(l, SG_LOADER_CLASSID, "SgLoader", "SOLAR-style dataset loader", "SgLoader", comm, SgLoaderDestroy, SgLoaderView));
  l->batch    = 32;
  l->epochs   = 1;
  l->seed     = 42;
  l->budget   = 256 << 20;
  l->prefetch = 2;
  l->window   = 0;
  l->mpiio    = PETSC_TRUE;
  l->held     = -1;
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)l, "loader_"));
  PetscCallMPI(MPI_Comm_rank(comm, &l->rank));
  PetscCallMPI(MPI_Comm_size(comm, &l->size));
  *out = l;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define CHECK_NOT_SETUP(l) PetscCheck(!(l)->setupcalled, PetscObjectComm((PetscObject)(l)), PETSC_ERR_ARG_WRONGSTATE, "SgLoader: settings are fixed after SgLoaderSetUp")

static PetscErrorCode StrListSet(PetscInt n, const char *const in[], PetscInt *nout, char ***out)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < *nout; i++) PetscCall(PetscFree((*out)[i]));
  PetscCall(PetscFree(*out));
  PetscCall(PetscMalloc1(n, out));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscStrallocpy(in[i], &(*out)[i]));
  *nout = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetFiles(SgLoader l, PetscInt n, const char *const files[])
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(n > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoaderSetFiles: no files");
  PetscCall(StrListSet(n, files, &l->nfiles, &l->files));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetFields(SgLoader l, PetscInt n, const char *const names[])
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(n > 0 && n <= SG_LOADER_MAXFIELDS, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoaderSetFields: %d fields (1..%d)", (int)n, SG_LOADER_MAXFIELDS);
  PetscCall(StrListSet(n, names, &l->nsel, &l->sel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetBatchSize(SgLoader l, PetscInt b)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(b > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: batch size %d must be positive", (int)b);
  l->batch = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetEpochs(SgLoader l, PetscInt e)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(e > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: epochs %d must be positive", (int)e);
  l->epochs = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetSeed(SgLoader l, uint64_t seed)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  l->seed = seed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetBufferBytes(SgLoader l, int64_t bytes)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(bytes >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: buffer budget %lld bytes must be >= 0", (long long)bytes);
  l->budget = bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetPrefetch(SgLoader l, PetscInt depth)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(depth >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: prefetch depth %d must be >= 0", (int)depth);
  l->prefetch = depth;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetOrderWindow(SgLoader l, int64_t w)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(w >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: order window %lld must be >= 0 (0 = a quarter of the dataset)", (long long)w);
  l->window = w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetMPIIO(SgLoader l, PetscBool on)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  l->mpiio = on;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetIOMode(SgLoader l, PetscBool *mpiio, PetscBool *threaded)
{
  PetscFunctionBegin;
  PetscCheck(l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "SgLoaderGetIOMode before SgLoaderSetUp");
  if (mpiio) *mpiio = l->used_mpiio;
  if (threaded) *threaded = l->threaded;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- set-up -------------------------------------------------------------------------------- */

static PetscErrorCode SetUpFields(SgLoader l)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)l);
  PetscInt nf0;

  PetscFunctionBegin;
  PetscCall(SgDatasetGetNumFields(l->ds[0], &nf0));
  l->nfields = l->sel ? l->nsel : nf0;
  PetscCheck(l->nfields > 0 && l->nfields <= SG_LOADER_MAXFIELDS, comm, PETSC_ERR_SUP, "%s: %d per-sample fields (1..%d supported)", l->files[0], (int)l->nfields, SG_LOADER_MAXFIELDS);
  l->slotbytes = 0;
  for (PetscInt f = 0; f < l->nfields; f++) {
    const char     *name;
    const PetscInt *shape;
    int64_t         re;
    PetscInt        idx = f;
    if (l->sel) {
      PetscCall(SgDatasetFindField(l->ds[0], l->sel[f], &idx));
      PetscCheck(idx >= 0, comm, PETSC_ERR_USER_INPUT, "%s: has no per-sample field '%s' (asked for by SgLoaderSetFields)", l->files[0], l->sel[f]);
    }
    PetscCall(SgDatasetGetFieldInfo(l->ds[0], idx, &name, &l->ftype[f], &l->frank[f], &shape, &re));
    PetscCall(PetscStrncpy(l->fname[f], name, sizeof l->fname[f]));
    for (PetscInt d = 0; d < l->frank[f]; d++) l->fshape[f][d] = (hsize_t)shape[d];
    l->frow[f]  = re * (int64_t)SgDTypeSize(l->ftype[f]);
    l->foffs[f] = l->slotbytes;
    l->slotbytes += l->frow[f];
  }
  /* every file must offer the same fields with the same layout: a batch is one array per field */
  PetscCall(PetscMalloc2((size_t)l->nfiles * l->nfields, &l->dset, (size_t)l->nfiles * l->nfields, &l->fspace));
  for (PetscInt i = 0; i < l->nfiles * l->nfields; i++) l->fspace[i] = H5I_INVALID_HID;
  for (PetscInt i = 0; i < l->nfiles; i++) {
    for (PetscInt f = 0; f < l->nfields; f++) {
      PetscInt        idx, rd;
      SgDType         dt;
      const PetscInt *shape;
      int64_t         hid;
      PetscCall(SgDatasetFindField(l->ds[i], l->fname[f], &idx));
      PetscCheck(idx >= 0, comm, PETSC_ERR_USER_INPUT, "%s: lacks the per-sample field '%s' that %s has; all files of one loader need the same fields", l->files[i], l->fname[f], l->files[0]);
      PetscCall(SgDatasetGetFieldInfo(l->ds[i], idx, NULL, &dt, &rd, &shape, NULL));
      PetscBool same = (PetscBool)(dt == l->ftype[f] && rd == l->frank[f]);
      for (PetscInt d = 0; same && d < rd; d++) same = (PetscBool)((hsize_t)shape[d] == l->fshape[f][d]);
      PetscCheck(same, comm, PETSC_ERR_USER_INPUT, "%s: field '%s' has a different type or shape than in %s", l->files[i], l->fname[f], l->files[0]);
      PetscCall(SgDatasetGetFieldHid(l->ds[i], idx, &hid));
      l->dset[i * l->nfields + f]   = (hid_t)hid;
      SgHDF5Lock();
      l->fspace[i * l->nfields + f] = H5Dget_space((hid_t)hid);
      SgHDF5Unlock();
      SgH5Call(l->fspace[i * l->nfields + f], l->files[i], "cannot get the dataspace of /samples/%s", l->fname[f]);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void *IOThread(void *arg);

PetscErrorCode SgLoaderSetUp(SgLoader l)
{
  MPI_Comm comm;
  int      provided = MPI_THREAD_SINGLE;
  MPI_Comm fcomm;
  int64_t  maxrow = 0;

  PetscFunctionBegin;
  if (l->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  comm = PetscObjectComm((PetscObject)l);
  PetscCheck(l->nfiles > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "SgLoader: no dataset files (SgLoaderSetFiles or -loader_files)");
  PetscCallMPI(MPI_Query_thread(&provided));
  /* MPI-IO from the I/O thread needs MPI_THREAD_MULTIPLE; otherwise each rank opens the shared file
     on its own (POSIX driver), which is always correct for reading. */
  l->used_mpiio = (PetscBool)(l->mpiio && l->size > 1 && (l->prefetch == 0 || provided == MPI_THREAD_MULTIPLE));
  fcomm         = l->used_mpiio ? comm : PETSC_COMM_SELF;
  PetscCall(PetscCalloc2(l->nfiles, &l->ds, l->nfiles + 1, &l->foff));
  for (PetscInt i = 0; i < l->nfiles; i++) {
    int64_t n;
    PetscCall(SgDatasetOpen(fcomm, l->files[i], SG_DATASET_READ, &l->ds[i]));
    PetscCall(SgDatasetGetNumSamples(l->ds[i], &n));
    l->foff[i + 1] = l->foff[i] + n;
  }
  l->nsamples = l->foff[l->nfiles];
  PetscCheck(l->nsamples > 0, comm, PETSC_ERR_USER_INPUT, "SgLoader: the dataset files hold no committed samples (%s ...)", l->files[0]);
  PetscCall(SetUpFields(l));
  l->capacity = l->slotbytes ? PetscMin(l->budget / l->slotbytes, l->nsamples) : 0;

  PetscCall(PetscLogEventBegin(SG_LOADER_Plan, l, 0, 0, 0));
  PetscCall(SgLoaderPlanBuild(l));
  PetscCall(PetscLogEventEnd(SG_LOADER_Plan, l, 0, 0, 0));

  for (PetscInt f = 0; f < l->nfields; f++) maxrow = PetscMax(maxrow, l->frow[f]);
  PetscCall(PetscMalloc1((size_t)(l->capacity * l->slotbytes) + 1, &l->cache));
  PetscCall(PetscMalloc1((size_t)(l->plan.maxlocal * maxrow) + 1, &l->stage));
  PetscCall(PetscMalloc1(2 * l->plan.maxlocal + 2, &l->order));
  l->nring = PetscMax(1, l->prefetch);
  PetscCall(PetscCalloc1(l->nring, &l->ring));
  for (PetscInt s = 0; s < l->nring; s++) {
    PetscCall(PetscMalloc1(l->plan.maxlocal + 1, &l->ring[s].ids));
    for (PetscInt f = 0; f < l->nfields; f++) PetscCall(PetscMalloc1((size_t)(l->plan.maxlocal * l->frow[f]) + 1, &l->ring[s].data[f]));
    l->ring[s].g = -1;
  }
  l->threaded = (PetscBool)(l->prefetch > 0);
  if (l->threaded) {
    PetscCheck(!pthread_mutex_init(&l->mtx, NULL) && !pthread_cond_init(&l->cv, NULL), comm, PETSC_ERR_SYS, "SgLoader: cannot initialise the I/O thread's lock");
    PetscCheck(!pthread_create(&l->thread, NULL, IOThread, l), comm, PETSC_ERR_SYS, "SgLoader: cannot start the I/O thread");
  }
  l->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the I/O side: plain C, runs on the I/O thread ----------------------------------------- */

static int CmpPair(const void *a, const void *b)
{
  int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
  return (x > y) - (x < y);
}

static int FileOf(SgLoader l, int64_t id)
{
  int i = 0;
  while (id >= l->foff[i + 1]) i++;
  return i;
}

int SgLoaderFillBatch(SgLoader l, PetscInt g, SgLoaderSlot *s)
{
  const SgLoaderPlan *pl = &l->plan;
  const int64_t       k0 = pl->lstart[g], n = pl->lstart[g + 1] - k0;
  const PetscInt      nf = l->nfields;
  int64_t             nmiss = 0;

  for (int64_t i = 0; i < n; i++) s->ids[i] = pl->lid[k0 + i];
  /* 1. hits, before any store of this batch can overwrite their slots */
  for (int64_t i = 0; i < n; i++) {
    int32_t a = pl->act[k0 + i];
    if (a >= 0) {
      const char *src = l->cache + (int64_t)a * l->slotbytes;
      for (PetscInt f = 0; f < nf; f++) memcpy(s->data[f] + i * l->frow[f], src + l->foffs[f], (size_t)l->frow[f]);
      l->st_hits++;
    } else {
      l->order[2 * nmiss]     = s->ids[i];
      l->order[2 * nmiss + 1] = i;
      nmiss++;
    }
  }
  /* 2. misses, sorted, read run by run: one hyperslab per run of consecutive ids in one file */
  qsort(l->order, (size_t)nmiss, 2 * sizeof(int64_t), CmpPair);
  for (int64_t a = 0; a < nmiss;) {
    int64_t b  = a + 1;
    int     fi = FileOf(l, l->order[2 * a]);
    while (b < nmiss && l->order[2 * b] == l->order[2 * (b - 1)] + 1 && l->order[2 * b] < l->foff[fi + 1]) b++;
    SgHDF5Lock(); /* per run, so other threads' HDF5 calls interleave between runs */
    for (PetscInt f = 0; f < nf; f++) {
      hid_t   fs = l->fspace[fi * nf + f], ms;
      hsize_t start[SG_DATASET_MAXDIM + 1] = {0}, count[SG_DATASET_MAXDIM + 1], mcount;
      herr_t  st;
      start[0] = (hsize_t)(l->order[2 * a] - l->foff[fi]);
      count[0] = (hsize_t)(b - a);
      for (PetscInt d = 0; d < l->frank[f]; d++) count[d + 1] = l->fshape[f][d];
      mcount = (hsize_t)((b - a) * l->frow[f] / (int64_t)SgDTypeSize(l->ftype[f]));
      ms     = H5Screate_simple(1, &mcount, NULL);
      st     = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
      if (st >= 0 && ms >= 0) st = H5Dread(l->dset[fi * nf + f], SgH5MemType(l->ftype[f]), ms, fs, H5P_DEFAULT, l->stage);
      if (ms >= 0) H5Sclose(ms);
      if (st < 0 || ms < 0) {
        char h5[512];
        SgH5LastError(h5, sizeof h5);
        SgHDF5Unlock();
        snprintf(l->ioerrmsg, sizeof l->ioerrmsg, "%s: cannot read samples [%lld,%lld) of /samples/%s (HDF5: %s)", l->files[fi], (long long)start[0], (long long)(start[0] + count[0]), l->fname[f], h5);
        return -1;
      }
      for (int64_t j = a; j < b; j++) memcpy(s->data[f] + l->order[2 * j + 1] * l->frow[f], l->stage + (j - a) * l->frow[f], (size_t)l->frow[f]);
      l->st_reads++;
    }
    SgHDF5Unlock();
    l->st_runs++;
    l->st_bytes += (b - a) * l->slotbytes;
    a = b;
  }
  l->st_misses += nmiss;
  /* 3. keep the misses the plan keeps, in delivery order (a later store may reuse a slot) */
  for (int64_t i = 0; i < n; i++) {
    int32_t a = pl->act[k0 + i];
    if (a <= -2) {
      char *dst = l->cache + (int64_t)(-a - 2) * l->slotbytes;
      for (PetscInt f = 0; f < nf; f++) memcpy(dst + l->foffs[f], s->data[f] + i * l->frow[f], (size_t)l->frow[f]);
    }
  }
  s->g = g;
  return 0;
}

static void *IOThread(void *arg)
{
  SgLoader l = (SgLoader)arg;
  for (PetscInt g = 0; g < l->plan.nbatches; g++) {
    SgLoaderSlot *s = &l->ring[g % l->nring];
    int           rc;
    pthread_mutex_lock(&l->mtx);
    while (s->state != 0 && !l->stop) pthread_cond_wait(&l->cv, &l->mtx);
    if (l->stop) {
      pthread_mutex_unlock(&l->mtx);
      break;
    }
    s->state = 1;
    pthread_mutex_unlock(&l->mtx);
    rc = SgLoaderFillBatch(l, g, s);
    pthread_mutex_lock(&l->mtx);
    if (rc) l->ioerr = 1;
    else s->state = 2;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mtx);
    if (rc) break;
  }
  return NULL;
}

/* ---- delivery ------------------------------------------------------------------------------ */

PetscErrorCode SgLoaderNext(SgLoader l, SgLoaderBatch *b, PetscBool *done)
{
  SgLoaderSlot *s;
  PetscInt      g = l->next_g, ri;

  PetscFunctionBegin;
  PetscCheck(l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "SgLoaderNext before SgLoaderSetUp");
  if (l->held >= 0) { /* the previous batch goes back to the I/O side */
    if (l->threaded) pthread_mutex_lock(&l->mtx);
    l->ring[l->held].state = 0;
    if (l->threaded) {
      pthread_cond_broadcast(&l->cv);
      pthread_mutex_unlock(&l->mtx);
    }
    l->held = -1;
  }
  *done = (PetscBool)(g >= l->plan.nbatches);
  if (*done) {
    PetscCall(PetscMemzero(b, sizeof *b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  ri = g % l->nring;
  s  = &l->ring[ri];
  if (l->threaded) {
    int ok;
    PetscCall(PetscLogEventBegin(SG_LOADER_Wait, l, 0, 0, 0));
    pthread_mutex_lock(&l->mtx);
    while (!(s->state == 2 && s->g == g) && !l->ioerr) pthread_cond_wait(&l->cv, &l->mtx);
    ok = s->state == 2 && s->g == g;
    pthread_mutex_unlock(&l->mtx);
    PetscCall(PetscLogEventEnd(SG_LOADER_Wait, l, 0, 0, 0));
    PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "SgLoader I/O thread: %s", l->ioerrmsg);
  } else {
    int rc;
    PetscCall(PetscLogEventBegin(SG_LOADER_Read, l, 0, 0, 0));
    rc = SgLoaderFillBatch(l, g, s);
    PetscCall(PetscLogEventEnd(SG_LOADER_Read, l, 0, 0, 0));
    PetscCheck(!rc, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "SgLoader: %s", l->ioerrmsg);
    s->state = 2;
  }
  l->held = ri;
  for (PetscInt f = 0; f < l->nfields; f++) l->dptr[f] = s->data[f];
  b->epoch   = g / l->plan.nb_epoch;
  b->batch   = g % l->plan.nb_epoch;
  b->nglobal = (PetscInt)(l->plan.bstart[g + 1] - l->plan.bstart[g]);
  b->counts  = l->plan.counts + (size_t)g * l->size;
  b->nlocal  = b->counts[l->rank];
  b->ids     = s->ids;
  b->data    = l->dptr;
  l->next_g++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- getters, view, destroy ---------------------------------------------------------------- */

PetscErrorCode SgLoaderGetNumSamples(SgLoader l, int64_t *n)
{
  PetscFunctionBegin;
  *n = l->nsamples;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetNumBatches(SgLoader l, PetscInt *per_epoch, PetscInt *total)
{
  PetscFunctionBegin;
  if (per_epoch) *per_epoch = l->plan.nb_epoch;
  if (total) *total = l->plan.nbatches;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetNumFields(SgLoader l, PetscInt *n)
{
  PetscFunctionBegin;
  *n = l->nfields;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetFieldInfo(SgLoader l, PetscInt f, const char **name, SgDType *dt, int64_t *rowelems)
{
  PetscFunctionBegin;
  PetscCheck(f >= 0 && f < l->nfields, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: field %d out of [0,%d)", (int)f, (int)l->nfields);
  if (name) *name = l->fname[f];
  if (dt) *dt = l->ftype[f];
  if (rowelems) *rowelems = l->frow[f] / (int64_t)SgDTypeSize(l->ftype[f]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetSequence(SgLoader l, const uint32_t **seq, const PetscInt **eperm)
{
  PetscFunctionBegin;
  if (seq) *seq = l->seq;
  if (eperm) *eperm = l->eperm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetCapacity(SgLoader l, int64_t *c)
{
  PetscFunctionBegin;
  *c = l->capacity;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Counters are written by the I/O thread; read them between batches for a consistent picture
   (the values are whole-batch totals up to the batches prepared so far). */
PetscErrorCode SgLoaderGetStats(SgLoader l, int64_t *hits, int64_t *misses, int64_t *bytes, int64_t *reads, int64_t *runs)
{
  PetscFunctionBegin;
  if (l->threaded) pthread_mutex_lock(&l->mtx);
  if (hits) *hits = l->st_hits;
  if (misses) *misses = l->st_misses;
  if (bytes) *bytes = l->st_bytes;
  if (reads) *reads = l->st_reads;
  if (runs) *runs = l->st_runs;
  if (l->threaded) pthread_mutex_unlock(&l->mtx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderGetPlannedHits(SgLoader l, int64_t *hits, int64_t *accesses)
{
  PetscFunctionBegin;
  if (hits) *hits = l->plan.hits;
  if (accesses) *accesses = l->plan.accesses;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderView(SgLoader l, PetscViewer v)
{
  PetscBool iascii;

  PetscFunctionBegin;
  if (!v) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)l), &v));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(v, "SgLoader: %d file(s), batch %d (global), %d epoch(s), seed %llu, %d rank(s)\n", (int)l->nfiles, (int)l->batch, (int)l->epochs, (unsigned long long)l->seed, (int)l->size));
  if (!l->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(v, "  %lld samples of %lld bytes (", (long long)l->nsamples, (long long)l->slotbytes));
  for (PetscInt f = 0; f < l->nfields; f++) PetscCall(PetscViewerASCIIPrintf(v, "%s%s %s", f ? ", " : "", l->fname[f], SgDTypes[l->ftype[f]]));
  PetscCall(PetscViewerASCIIPrintf(v, "), %d batches per epoch\n", (int)l->plan.nb_epoch));
  PetscCall(PetscViewerASCIIPrintf(v, "  buffer: %lld samples = %.1f MiB of a %.1f MiB budget; prefetch ring %d x %lld samples; I/O %s, %s\n", (long long)l->capacity, l->capacity * l->slotbytes / 1048576.0, l->budget / 1048576.0, (int)l->nring,
                                   (long long)l->plan.maxlocal, l->threaded ? "on a background thread" : "in SgLoaderNext", l->used_mpiio ? "MPI-IO (parallel HDF5, independent)" : "one POSIX handle per rank"));
  PetscCall(PetscViewerASCIIPrintf(v, "  epoch order (drawn shuffle of each delivered epoch):"));
  for (PetscInt e = 0; e < PetscMin(l->epochs, 32); e++) PetscCall(PetscViewerASCIIPrintf(v, " %d", (int)l->eperm[e]));
  PetscCall(PetscViewerASCIIPrintf(v, "%s\n", l->epochs > 32 ? " ..." : ""));
  PetscCall(PetscViewerASCIIPrintf(v, "  rank %d plan: %lld accesses, %lld buffer hits (%.2f%%)\n", l->rank, (long long)l->plan.accesses, (long long)l->plan.hits, l->plan.accesses ? 100.0 * l->plan.hits / l->plan.accesses : 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderDestroy(SgLoader *l)
{
  PetscFunctionBegin;
  if (!*l) PetscFunctionReturn(PETSC_SUCCESS);
  PetscValidHeaderSpecific(*l, SG_LOADER_CLASSID, 1);
  if (--((PetscObject)(*l))->refct > 0) {
    *l = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((*l)->setupcalled && (*l)->threaded) {
    pthread_mutex_lock(&(*l)->mtx);
    (*l)->stop = 1;
    pthread_cond_broadcast(&(*l)->cv);
    pthread_mutex_unlock(&(*l)->mtx);
    pthread_join((*l)->thread, NULL);
    pthread_mutex_destroy(&(*l)->mtx);
    pthread_cond_destroy(&(*l)->cv);
  }
  if ((*l)->ring) {
    for (PetscInt s = 0; s < (*l)->nring; s++) {
      PetscCall(PetscFree((*l)->ring[s].ids));
      for (PetscInt f = 0; f < (*l)->nfields; f++) PetscCall(PetscFree((*l)->ring[s].data[f]));
    }
    PetscCall(PetscFree((*l)->ring));
  }
  if ((*l)->fspace) {
    SgHDF5Lock();
    for (PetscInt i = 0; i < (*l)->nfiles * (*l)->nfields; i++)
      if ((*l)->fspace[i] >= 0) H5Sclose((*l)->fspace[i]);
    SgHDF5Unlock();
  }
  PetscCall(PetscFree2((*l)->dset, (*l)->fspace));
  if ((*l)->ds)
    for (PetscInt i = 0; i < (*l)->nfiles; i++) PetscCall(SgDatasetClose(&(*l)->ds[i]));
  PetscCall(PetscFree2((*l)->ds, (*l)->foff));
  PetscCall(PetscFree((*l)->cache));
  PetscCall(PetscFree((*l)->stage));
  PetscCall(PetscFree((*l)->order));
  PetscCall(PetscFree((*l)->seq));
  PetscCall(PetscFree((*l)->eperm));
  PetscCall(SgLoaderPlanDestroy(&(*l)->plan));
  for (PetscInt i = 0; i < (*l)->nfiles; i++) PetscCall(PetscFree((*l)->files[i]));
  PetscCall(PetscFree((*l)->files));
  for (PetscInt i = 0; i < (*l)->nsel; i++) PetscCall(PetscFree((*l)->sel[i]));
  PetscCall(PetscFree((*l)->sel));
  PetscCall(PetscHeaderDestroy(l));
  PetscFunctionReturn(PETSC_SUCCESS);
}
