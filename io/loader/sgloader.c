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
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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
  l->readahead = 8; /* measured: 8 batches beat 0, 4, 16, 32 and 128 in every alternating round (docs/loader.md) */
  l->rawio     = PETSC_TRUE;
  l->iothreads = 2;
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

PetscErrorCode SgLoaderSetFieldShard(SgLoader l, const char field[], PetscInt ndim, const PetscInt start[], const PetscInt count[])
{
  PetscInt k;

  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(ndim >= 0 && ndim <= SG_DATASET_MAXDIM, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoaderSetFieldShard: '%s' with %d row axes (0..%d)", field, (int)ndim, SG_DATASET_MAXDIM);
  for (k = 0; k < l->nshard; k++)
    if (!strcmp(l->shname[k], field)) break;
  PetscCheck(k < SG_LOADER_MAXFIELDS, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoaderSetFieldShard: more than %d sharded fields", SG_LOADER_MAXFIELDS);
  PetscCall(PetscStrncpy(l->shname[k], field, sizeof l->shname[k]));
  l->shdim[k] = ndim;
  for (PetscInt d = 0; d < ndim; d++) {
    l->shstart[k][d] = start[d];
    l->shcount[k][d] = count[d];
  }
  if (k == l->nshard) l->nshard++;
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

PetscErrorCode SgLoaderSetReadAhead(SgLoader l, PetscInt batches)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(batches >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: read-ahead %d batches must be >= 0", (int)batches);
  l->readahead = batches;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetRawReads(SgLoader l, PetscBool on)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  l->rawio = on;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetStartBatch(SgLoader l, PetscInt g)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(g >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: start batch %d must be >= 0", (int)g);
  l->start = g;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgLoaderSetIOThreads(SgLoader l, PetscInt n)
{
  PetscFunctionBegin;
  CHECK_NOT_SETUP(l);
  PetscCheck(n >= 1 && n <= 64, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: %d reader threads (1..64)", (int)n);
  l->iothreads = n;
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
    l->planbytes += re * (int64_t)SgDTypeSize(l->ftype[f]);
    l->fshard[f] = -1;
    for (PetscInt k = 0; k < l->nshard; k++)
      if (!strcmp(l->shname[k], name)) l->fshard[f] = k;
    if (l->fshard[f] >= 0) { /* a block of each row: checked here, on every rank, before any read */
      const PetscInt k = l->fshard[f];
      PetscCheck(l->shdim[k] == l->frank[f], PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: shard of field '%s' has %d axes, its rows have %d", l->files[0], name, (int)l->shdim[k], (int)l->frank[f]);
      re = 1;
      for (PetscInt d = 0; d < l->frank[f]; d++) {
        PetscCheck(l->shstart[k][d] >= 0 && l->shcount[k][d] >= 1 && l->shstart[k][d] + l->shcount[k][d] <= shape[d], PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: shard [%d,%d) of axis %d of field '%s' is outside its %d entries", l->files[0], (int)l->shstart[k][d], (int)(l->shstart[k][d] + l->shcount[k][d]), (int)d, name, (int)shape[d]);
        re *= l->shcount[k][d];
      }
    }
    l->frow[f]  = re * (int64_t)SgDTypeSize(l->ftype[f]);
    l->foffs[f] = l->slotbytes;
    l->slotbytes += l->frow[f];
  }
  for (PetscInt k = 0; k < l->nshard; k++) {
    PetscBool used = PETSC_FALSE;
    for (PetscInt f = 0; f < l->nfields; f++) used = (PetscBool)(used || l->fshard[f] == k);
    PetscCheck(used, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: a shard is set for field '%s', which the loader does not deliver", l->files[0], l->shname[k]);
  }
  /* every file must offer the same fields with the same layout: a batch is one array per field */
  PetscCall(PetscMalloc2((size_t)l->nfiles * l->nfields, &l->dset, (size_t)l->nfiles * l->nfields, &l->fspace));
  PetscCall(PetscCalloc5((size_t)l->nfiles * l->nfields, &l->fchunk, (size_t)l->nfiles * l->nfields, &l->caddr, (size_t)l->nfiles * l->nfields, &l->raw, (size_t)l->nfiles * l->nfields, &l->contig, (size_t)l->nfiles * l->nfields, &l->nchunks));
  for (PetscInt i = 0; i < l->nfiles * l->nfields; i++) l->fspace[i] = l->dset[i] = H5I_INVALID_HID;
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
      {
        /* Our own handle on the field with HDF5's chunk cache switched off: a random sample is
           then read as exactly its own bytes, instead of its whole chunk being pulled into a cache
           that the shuffled order would almost never hit again. */
        hid_t   fid, dapl, dcpl, d;
        char    name[128];
        hsize_t cdims[SG_DATASET_MAXDIM + 1];
        snprintf(name, sizeof name, "/samples/%s", l->fname[f]);
        SgHDF5Lock(); /* before the first HDF5 call: another loader's I/O thread may be reading */
        fid  = H5Iget_file_id((hid_t)hid);
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        H5Pset_chunk_cache(dapl, 0, 0, 1.0);
        d = H5Dopen2(fid, name, dapl);
        H5Pclose(dapl);
        H5Fclose(fid);
        l->dset[i * l->nfields + f]   = d;
        l->fspace[i * l->nfields + f] = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
        dcpl                          = d >= 0 ? H5Dget_create_plist(d) : H5I_INVALID_HID;
        /* Raw reads need rows at computable offsets in the memory format: an unfiltered chunked
           layout (row = chunk address + row in chunk x row bytes) or a contiguous one, and a
           stored type equal to the native one (no conversion). */
        {
          const PetscInt j  = i * l->nfields + f;
          hid_t          ft = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
          H5D_layout_t   lay = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
          int64_t        n   = 0;
          PetscBool      native = (PetscBool)(ft >= 0 && H5Tequal(ft, SgH5MemType(l->ftype[f])) > 0);
          PetscCall(SgDatasetGetNumSamples(l->ds[i], &n));
          l->contig[j] = (PetscBool)(lay == H5D_CONTIGUOUS);
          if (lay == H5D_CHUNKED && H5Pget_nfilters(dcpl) == 0 && H5Pget_chunk(dcpl, (int)rd + 1, cdims) > 0) l->fchunk[j] = cdims[0];
          else if (lay == H5D_CONTIGUOUS) l->fchunk[j] = (hsize_t)PetscMax(n, 1);
          l->raw[j] = (PetscBool)(l->rawio && native && l->fchunk[j] > 0 && l->fshard[f] < 0); /* a shard: one hyperslab per run */
          if (ft >= 0) H5Tclose(ft);
          if (dcpl >= 0) H5Pclose(dcpl);
          SgHDF5Unlock();
          SgH5Call(l->fspace[j], l->files[i], "cannot open /samples/%s for reading", l->fname[f]);
          if (l->fchunk[j]) {
            l->nchunks[j] = (n + (int64_t)l->fchunk[j] - 1) / (int64_t)l->fchunk[j];
            PetscCall(PetscCalloc1(l->nchunks[j] + 1, &l->caddr[j]));
          }
        }
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void *IOThread(void *arg);
static int   FileOf(SgLoader l, int64_t id);
static void *WorkerThread(void *arg);

/* Resume at batch l->start: replay the plan's buffer stores up to there (no I/O) to learn which
   sample each slot holds, then read exactly those samples. The batches that follow, their contents
   and the hits are then those of an uninterrupted run. */
static PetscErrorCode Restore(SgLoader l)
{
  const SgLoaderPlan *pl = &l->plan;
  int64_t            *held, nread = 0;

  PetscFunctionBegin;
  PetscCheck(l->start < pl->nbatches, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "SgLoader: start batch %d is past the last batch (%d in all)", (int)l->start, (int)pl->nbatches);
  PetscCall(PetscMalloc1(l->capacity + 1, &held));
  for (int64_t k = 0; k < l->capacity; k++) held[k] = -1;
  for (int64_t k = 0; k < pl->lstart[l->start]; k++)
    if (pl->act[k] <= -2) held[-pl->act[k] - 2] = pl->lid[k];
  for (int64_t k = 0; k < l->capacity; k++) {
    int64_t id = held[k];
    int     fi;
    if (id < 0) continue;
    fi = FileOf(l, id);
    for (PetscInt f = 0; f < l->nfields; f++) {
      char *dst = l->cache + k * l->slotbytes + l->foffs[f];
      if (l->fshard[f] >= 0) PetscCall(SgDatasetReadFieldBlock(l->ds[fi], l->fname[f], id - l->foff[fi], 1, l->shstart[l->fshard[f]], l->shcount[l->fshard[f]], l->ftype[f], dst));
      else PetscCall(SgDatasetReadField(l->ds[fi], l->fname[f], id - l->foff[fi], 1, l->ftype[f], dst));
    }
    nread++;
  }
  PetscCall(PetscInfo(l, "resumed at batch %d: refilled %lld buffer slots\n", (int)l->start, (long long)nread));
  PetscCall(PetscFree(held));
  l->next_g  = l->start;
  l->advised = l->start - 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
  l->used_mpiio = (PetscBool)(l->mpiio && l->size > 1 && ((l->prefetch == 0 && l->iothreads == 1) || provided == MPI_THREAD_MULTIPLE));
  fcomm         = l->used_mpiio ? comm : PETSC_COMM_SELF;
  PetscCall(PetscCalloc2(l->nfiles, &l->ds, l->nfiles + 1, &l->foff));
  for (PetscInt i = 0; i < l->nfiles; i++) {
    int64_t n;
    PetscCall(SgDatasetOpen(fcomm, l->files[i], SG_DATASET_READ, &l->ds[i]));
    PetscCall(SgDatasetGetNumSamples(l->ds[i], &n));
    l->foff[i + 1] = l->foff[i] + n;
  }
  l->nsamples = l->foff[l->nfiles];
  PetscCall(PetscMalloc2(l->nfiles, &l->fd, l->nfiles, &l->mfh));
  for (PetscInt i = 0; i < l->nfiles; i++) {
    l->fd[i]  = open(l->files[i], O_RDONLY);
    l->mfh[i] = MPI_FILE_NULL;
    PetscCheck(l->fd[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open for reading: %s", l->files[i], strerror(errno));
    if (l->used_mpiio) PetscCallMPI(MPI_File_open(comm, l->files[i], MPI_MODE_RDONLY, MPI_INFO_NULL, &l->mfh[i]));
  }
  l->advised = -1;
  PetscCheck(l->nsamples > 0, comm, PETSC_ERR_USER_INPUT, "SgLoader: the dataset files hold no committed samples (%s ...)", l->files[0]);
  PetscCall(SetUpFields(l));
  /* whole samples, shards or not: the plan (and so which rank gets which sample) must not depend on
     which block of a sample this rank reads */
  l->capacity = l->planbytes ? PetscMin(l->budget / l->planbytes, l->nsamples) : 0;

  PetscCall(PetscLogEventBegin(SG_LOADER_Plan, l, 0, 0, 0));
  PetscCall(SgLoaderPlanBuild(l));
  PetscCall(PetscLogEventEnd(SG_LOADER_Plan, l, 0, 0, 0));

  for (PetscInt f = 0; f < l->nfields; f++) maxrow = PetscMax(maxrow, l->frow[f]);
  /* scratch for confirming guessed chunk addresses: two chunks of the largest field, at most 4 MiB each */
  l->vbytes = 0;
  for (PetscInt j = 0; j < l->nfiles * l->nfields; j++)
    if (l->raw[j] && !l->contig[j]) l->vbytes = PetscMax(l->vbytes, (int64_t)l->fchunk[j] * l->frow[j % l->nfields]);
  l->vbytes = PetscMin(l->vbytes, (int64_t)4 << 20);
  PetscCall(PetscMalloc1(2 * l->vbytes + 1, &l->vbuf));
  PetscCall(PetscMalloc1((size_t)(l->capacity * l->slotbytes) + 1, &l->cache));
  l->stagebytes = l->plan.maxlocal * maxrow;
  PetscCall(PetscMalloc1((size_t)l->stagebytes + 1, &l->stage));
  PetscCall(PetscMalloc1(2 * l->plan.maxlocal + 2, &l->order));
  PetscCall(PetscMalloc1(3 * l->plan.maxlocal + 3, &l->runs));
  l->nring = PetscMax(1, l->prefetch);
  PetscCall(PetscCalloc1(l->nring, &l->ring));
  for (PetscInt s = 0; s < l->nring; s++) {
    PetscCall(PetscMalloc1(l->plan.maxlocal + 1, &l->ring[s].ids));
    for (PetscInt f = 0; f < l->nfields; f++) PetscCall(PetscMalloc1((size_t)(l->plan.maxlocal * l->frow[f]) + 1, &l->ring[s].data[f]));
    l->ring[s].g = -1;
  }
  if (l->start > 0) PetscCall(Restore(l));
  {
    PetscInt nraw = 0;
    for (PetscInt j = 0; j < l->nfiles * l->nfields; j++) nraw += l->raw[j];
    l->nworkers = nraw ? l->iothreads - 1 : 0;
  }
  if (l->nworkers > 0) {
    PetscCheck(!pthread_mutex_init(&l->wmtx, NULL) && !pthread_cond_init(&l->wcv, NULL) && !pthread_cond_init(&l->wdone, NULL), comm, PETSC_ERR_SYS, "SgLoader: cannot initialise the reader threads' lock");
    PetscCall(PetscCalloc1(l->nworkers, &l->workers));
    for (PetscInt w = 0; w < l->nworkers; w++) {
      l->workers[w].l  = l;
      l->workers[w].id = (int)w + 1;
      PetscCall(PetscMalloc1((size_t)(l->plan.maxlocal * maxrow) + 1, &l->workers[w].stage));
      PetscCheck(!pthread_create(&l->workers[w].thread, NULL, WorkerThread, &l->workers[w]), comm, PETSC_ERR_SYS, "SgLoader: cannot start reader thread %d", (int)w + 1);
    }
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

/* The file holding global sample id: binary search over the file offsets (an ensemble may give
   the loader hundreds of member files). */
static int FileOf(SgLoader l, int64_t id)
{
  int lo = 0, hi = (int)l->nfiles - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (l->foff[mid] <= id) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Guess the address of chunk c from the nearest chunk below it whose address is known, assuming the
   chunks in between were allocated back to back (our appends write each field's rows in one
   H5Dwrite, which allocates its chunks one after another), and confirm the guess by content: the
   raw chunk as HDF5 returns it (H5Dread_chunk, an indexed lookup) must equal the bytes at the
   guessed address. Equal bytes are all that raw reads need, so a confirmed guess is safe. Returns
   the address or HADDR_UNDEF. This exists because HDF5 1.10's H5Dget_chunk_info_by_coord walks the
   whole chunk index (O(chunks) per call, O(chunks^2) to map a field); 1.12.3+ has H5Dchunk_iter. */
/* dir = -1: from the nearest confirmed chunk below c; dir = +1: from the nearest one above. */
static haddr_t Guess(SgLoader l, PetscInt j, int64_t c, int dir)
{
  const int64_t S = (int64_t)l->fchunk[j] * l->frow[j % l->nfields];
  const int64_t n = l->nchunks[j];
  int64_t       k = c + dir;

  if (l->contig[j] || S > l->vbytes) return HADDR_UNDEF;
  while (k >= 0 && k < n && l->caddr[j][k] <= 1) k += dir;
  if (k < 0 || k >= n) return HADDR_UNDEF;
  if (dir > 0 && l->caddr[j][k] < (haddr_t)((k - c) * S)) return HADDR_UNDEF;
  return l->caddr[j][k] + (haddr_t)((c - k) * S);
}

static int SameBytesAt(SgLoader l, PetscInt j, haddr_t guess, int64_t S)
{
  int64_t n = S, o = (int64_t)guess;
  char   *p = l->vbuf + S;
  while (n > 0) {
    ssize_t r = pread(l->fd[j / l->nfields], p, (size_t)n, (off_t)o);
    if (r <= 0) return 0;
    n -= r;
    o += r;
    p += r;
  }
  return !memcmp(l->vbuf, l->vbuf + S, (size_t)S);
}

static haddr_t GuessChunk(SgLoader l, PetscInt j, int64_t c)
{
  const int64_t S = (int64_t)l->fchunk[j] * l->frow[j % l->nfields];
  hsize_t       off[SG_DATASET_MAXDIM + 1] = {0};
  uint32_t      filters = 0;
  haddr_t       below = Guess(l, j, c, -1), above = Guess(l, j, c, +1);
  herr_t        st;

  if (below == HADDR_UNDEF && above == HADDR_UNDEF) return HADDR_UNDEF;
  off[0] = (hsize_t)c * l->fchunk[j];
  SgHDF5Lock();
  st = H5Dread_chunk(l->dset[j], H5P_DEFAULT, off, &filters, l->vbuf);
  SgHDF5Unlock();
  if (st < 0 || filters) return HADDR_UNDEF;
  if (below != HADDR_UNDEF && SameBytesAt(l, j, below, S)) return below;
  if (above != HADDR_UNDEF && above != below && SameBytesAt(l, j, above, S)) return above;
  return HADDR_UNDEF;
}

/* File address of chunk c of field slot j (contiguous layout: c = 0 is the data's start).
   Found once and remembered; 1 marks "no address" (never a real chunk's). Several reader threads
   may ask at once: the lookup runs under the HDF5 lock, the table entries are read and written
   atomically. */
static int ChunkAddr(SgLoader l, PetscInt j, int64_t c, haddr_t *addr, char *err, size_t errlen)
{
  haddr_t a = __atomic_load_n(&l->caddr[j][c], __ATOMIC_ACQUIRE);
  if (!a) {
    SgHDF5Lock();
    a = __atomic_load_n(&l->caddr[j][c], __ATOMIC_ACQUIRE);
    if (!a) {
      hsize_t  off[SG_DATASET_MAXDIM + 1] = {0};
      unsigned mask;
      hsize_t  size;
      a = GuessChunk(l, j, c);
      if (a == HADDR_UNDEF) {
        off[0] = (hsize_t)c * l->fchunk[j];
        if (l->contig[j]) a = H5Dget_offset(l->dset[j]);
        else if (H5Dget_chunk_info_by_coord(l->dset[j], off, &mask, &a, &size) < 0) a = HADDR_UNDEF;
        l->st_lookups++;
      }
      if (a == HADDR_UNDEF) a = 1;
      __atomic_store_n(&l->caddr[j][c], a, __ATOMIC_RELEASE);
    }
    SgHDF5Unlock();
  }
  *addr = a;
  if (a == 1) {
    snprintf(err, errlen, "%s: /samples/%s has no storage for rows from %lld (unallocated chunk in a committed range: damaged file)", l->files[j / l->nfields], l->fname[j % l->nfields], (long long)(c * (int64_t)l->fchunk[j]));
    return -1;
  }
  return 0;
}

/* Raw read of n bytes at a file offset: MPI-IO where the file is shared through MPI-IO, else pread. */
static int ReadAt(SgLoader l, int fi, int64_t off, int64_t n, char *buf, char *err, size_t errlen)
{
  if (l->used_mpiio) {
    MPI_Status st;
    int        got = 0;
    if (MPI_File_read_at(l->mfh[fi], (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st) != MPI_SUCCESS || MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != n) {
      snprintf(err, errlen, "%s: MPI_File_read_at of %lld bytes at offset %lld returned %d bytes (truncated file?)", l->files[fi], (long long)n, (long long)off, got);
      return -1;
    }
    return 0;
  }
  while (n > 0) {
    ssize_t k = pread(l->fd[fi], buf, (size_t)n, (off_t)off);
    if (k <= 0) {
      snprintf(err, errlen, "%s: read of %lld bytes at offset %lld failed: %s", l->files[fi], (long long)n, (long long)off, k ? strerror(errno) : "end of file (truncated file?)");
      return -1;
    }
    n -= k;
    off += k;
    buf += k;
  }
  return 0;
}

/* Reads runs [r0, r1) of the current batch into slot s: the raw fields (raw = 1) or the fields read
   through H5Dread (raw = 0; I/O thread only). */
/* Rows of at most this many bytes are "small" (energies, boxes, ...): reads of a field's small rows
   that lie in one chunk with gaps of at most SG_LOADER_GAP bytes between them are merged into one
   pread of the whole span. A system call costs ~1 us plus a page-cache lookup, copying a few KiB of
   gap costs less (profile in docs/loader.md: the loader is bound by per-pread kernel work). */
#define SG_LOADER_SMALLROW 256
#define SG_LOADER_GAP      4096

/* All reads of the small raw field f over runs [r0, r1) (see SG_LOADER_SMALLROW): runs inside one
   chunk are merged while the gaps are small; a run that crosses a chunk boundary is read piece by
   piece. Files where f is not raw are skipped (ReadRuns does them through H5Dread). */
static int ReadSmallMerged(SgLoader l, SgLoaderSlot *s, PetscInt f, int64_t r0, int64_t r1, char *stage, char *err, size_t errlen, int64_t *reads)
{
  const PetscInt nf = l->nfields;
  const int64_t  rb = l->frow[f], cap = l->stagebytes;
  for (int64_t r = r0; r < r1;) {
    const int      fi = (int)l->runs[3 * r + 2];
    const PetscInt j  = fi * nf + f;
    const int64_t  ck = (int64_t)l->fchunk[j];
    int64_t        lo = l->order[2 * l->runs[3 * r]] - l->foff[fi], hi, c, re = r;
    haddr_t        base;
    if (!l->raw[j]) {
      r++;
      continue;
    }
    c  = lo / ck;
    hi = lo;
    while (re < r1 && (int)l->runs[3 * re + 2] == fi) {
      const int64_t qs = l->order[2 * l->runs[3 * re]] - l->foff[fi], qe = qs + l->runs[3 * re + 1] - l->runs[3 * re];
      if ((qe - 1) / ck != c || qs / ck != c) break;        /* whole run inside chunk c */
      if (re > r && (qs - hi) * rb > SG_LOADER_GAP) break;  /* gap too large: a new read is cheaper */
      if ((qe - lo) * rb > cap) break;                      /* span must fit the staging buffer */
      hi = qe;
      re++;
    }
    if (re == r) { /* run r crosses a chunk boundary: one read per chunk piece */
      const int64_t a = l->runs[3 * r], b = l->runs[3 * r + 1];
      for (int64_t q = lo; q < lo + (b - a);) {
        int64_t cq = q / ck, e = PetscMin(lo + (b - a), (cq + 1) * ck);
        if (ChunkAddr(l, j, cq, &base, err, errlen)) return -1;
        if (ReadAt(l, fi, (int64_t)base + (q - cq * ck) * rb, (e - q) * rb, stage + (q - lo) * rb, err, errlen)) return -1;
        (*reads)++;
        q = e;
      }
      for (int64_t q = a; q < b; q++) memcpy(s->data[f] + l->order[2 * q + 1] * rb, stage + (q - a) * rb, (size_t)rb);
      r++;
      continue;
    }
    if (ChunkAddr(l, j, c, &base, err, errlen)) return -1;
    if (ReadAt(l, fi, (int64_t)base + (lo - c * ck) * rb, (hi - lo) * rb, stage, err, errlen)) return -1;
    (*reads)++;
    for (int64_t x = r; x < re; x++)
      for (int64_t q = l->runs[3 * x]; q < l->runs[3 * x + 1]; q++) memcpy(s->data[f] + l->order[2 * q + 1] * rb, stage + (l->order[2 * q] - l->foff[fi] - lo) * rb, (size_t)rb);
    r = re;
  }
  return 0;
}

static int ReadRuns(SgLoader l, SgLoaderSlot *s, int64_t r0, int64_t r1, int raw, char *stage, char *err, size_t errlen, int64_t *reads)
{
  const PetscInt nf = l->nfields;
  if (raw)
    for (PetscInt f = 0; f < nf; f++)
      if (l->frow[f] <= SG_LOADER_SMALLROW && ReadSmallMerged(l, s, f, r0, r1, stage, err, errlen, reads)) return -1;
  for (int64_t r = r0; r < r1; r++) {
    const int64_t a = l->runs[3 * r], b = l->runs[3 * r + 1];
    const int     fi = (int)l->runs[3 * r + 2];
    const int64_t q0 = l->order[2 * a] - l->foff[fi], nr = b - a;
    for (PetscInt f = 0; f < nf; f++) {
      const PetscInt j = fi * nf + f;
      if ((int)l->raw[j] != raw) continue;
      if (raw && l->frow[f] <= SG_LOADER_SMALLROW) continue; /* done by ReadSmallMerged */
      if (raw) {
        int64_t ck = (int64_t)l->fchunk[j];
        haddr_t base;
        if (nr == 1) { /* the common case of a shuffled order: straight into the batch, no staging copy */
          int64_t c = q0 / ck;
          if (ChunkAddr(l, j, c, &base, err, errlen)) return -1;
          if (ReadAt(l, fi, (int64_t)base + (q0 - c * ck) * l->frow[f], l->frow[f], s->data[f] + l->order[2 * a + 1] * l->frow[f], err, errlen)) return -1;
          (*reads)++;
          continue;
        }
        for (int64_t q = q0; q < q0 + nr;) {
          int64_t c = q / ck, e = PetscMin(q0 + nr, (c + 1) * ck);
          if (ChunkAddr(l, j, c, &base, err, errlen)) return -1;
          if (ReadAt(l, fi, (int64_t)base + (q - c * ck) * l->frow[f], (e - q) * l->frow[f], stage + (q - q0) * l->frow[f], err, errlen)) return -1;
          (*reads)++;
          q = e;
        }
      } else {
        hid_t   fs = l->fspace[j], ms;
        hsize_t start[SG_DATASET_MAXDIM + 1] = {0}, count[SG_DATASET_MAXDIM + 1];
        herr_t  st;
        start[0] = (hsize_t)q0;
        count[0] = (hsize_t)nr;
        for (PetscInt d = 0; d < l->frank[f]; d++) { /* whole rows, or this rank's shard of each */
          const PetscInt k = l->fshard[f];
          start[d + 1] = k >= 0 ? (hsize_t)l->shstart[k][d] : 0;
          count[d + 1] = k >= 0 ? (hsize_t)l->shcount[k][d] : l->fshape[f][d];
        }
        SgHDF5Lock(); /* per read, so other threads' HDF5 calls can interleave */
        ms = H5Screate_simple((int)l->frank[f] + 1, count, NULL); /* same shape as the file selection: HDF5's fast path */
        st = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        if (st >= 0 && ms >= 0) st = H5Dread(l->dset[j], SgH5MemType(l->ftype[f]), ms, fs, H5P_DEFAULT, stage);
        if (ms >= 0) H5Sclose(ms);
        if (st < 0 || ms < 0) {
          char h5[512];
          SgH5LastError(h5, sizeof h5);
          SgHDF5Unlock();
          snprintf(err, errlen, "%s: cannot read samples [%lld,%lld) of /samples/%s (HDF5: %s)", l->files[fi], (long long)q0, (long long)(q0 + nr), l->fname[f], h5);
          return -1;
        }
        SgHDF5Unlock();
        (*reads)++;
      }
      for (int64_t q = a; q < b; q++) memcpy(s->data[f] + l->order[2 * q + 1] * l->frow[f], stage + (q - a) * l->frow[f], (size_t)l->frow[f]);
    }
  }
  return 0;
}

static void *WorkerThread(void *arg)
{
  SgLoaderWorker *w = (SgLoaderWorker *)arg;
  SgLoader        l = w->l;
  int             seen = 0;
  for (;;) {
    int64_t r0, r1, T = l->nworkers + 1;
    int     rc;
    pthread_mutex_lock(&l->wmtx);
    while (!l->wstop && l->jobgen == seen) pthread_cond_wait(&l->wcv, &l->wmtx);
    if (l->wstop) {
      pthread_mutex_unlock(&l->wmtx);
      return NULL;
    }
    seen = l->jobgen;
    r0   = l->nruns * w->id / T;
    r1   = l->nruns * (w->id + 1) / T;
    pthread_mutex_unlock(&l->wmtx);
    rc = ReadRuns(l, l->jobslot, r0, r1, 1, w->stage, w->err, sizeof w->err, &w->reads);
    pthread_mutex_lock(&l->wmtx);
    if (rc && !l->joberr) {
      l->joberr = 1;
      snprintf(l->ioerrmsg, sizeof l->ioerrmsg, "%s", w->err);
    }
    if (--l->jobpending == 0) pthread_cond_signal(&l->wdone);
    pthread_mutex_unlock(&l->wmtx);
  }
}

/* Read-ahead from the known future: the byte ranges of the misses of a coming batch are handed to
   the kernel (posix_fadvise WILLNEED), which fetches them asynchronously with many requests in
   flight, so the reads that follow find them in memory instead of waiting one request at a time. */
static void Advise(SgLoader l, PetscInt g)
{
  const SgLoaderPlan *pl = &l->plan;
  const PetscInt      nf = l->nfields;

  for (int64_t k = pl->lstart[g]; k < pl->lstart[g + 1]; k++) {
    int64_t id = pl->lid[k], loc;
    int     fi;
    if (pl->act[k] >= 0) continue; /* a buffer hit needs no I/O */
    fi  = FileOf(l, id);
    loc = id - l->foff[fi];
    if (l->fd[fi] < 0) continue;
    for (PetscInt f = 0; f < nf; f++) {
      PetscInt j  = fi * nf + f;
      int64_t  ck = (int64_t)l->fchunk[j], c;
      haddr_t  base;
      /* small rows share pages with many other samples: after the first touch in an epoch they are
         in memory anyway, so announcing them only costs system calls */
      if (!l->raw[j] || l->frow[f] < 1024) continue;
      c = loc / ck;
      base = __atomic_load_n(&l->caddr[j][c], __ATOMIC_ACQUIRE);
      if (!base) { /* address not confirmed yet: fetch the whole guessed chunk, which the
                                confirmation will read (a wrong guess only wastes a read-ahead) */
        haddr_t guess = Guess(l, j, c, -1);
        if (guess != HADDR_UNDEF) (void)posix_fadvise(l->fd[fi], (off_t)guess, (off_t)(ck * l->frow[f]), POSIX_FADV_WILLNEED);
        l->st_advised++;
        continue;
      }
      if (base == 1) continue;
      (void)posix_fadvise(l->fd[fi], (off_t)(base + (haddr_t)((loc - c * ck) * l->frow[f])), (off_t)l->frow[f], POSIX_FADV_WILLNEED);
      l->st_advised++;
    }
  }
}

int SgLoaderFillBatch(SgLoader l, PetscInt g, SgLoaderSlot *s)
{
  const SgLoaderPlan *pl = &l->plan;
  const int64_t       k0 = pl->lstart[g], n = pl->lstart[g + 1] - k0;
  const PetscInt      nf = l->nfields;
  int64_t             nmiss = 0;

  if (l->readahead > 0)
    for (; l->advised < PetscMin(g + l->readahead, pl->nbatches - 1); l->advised++) Advise(l, l->advised + 1);
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
  /* 2. misses, sorted by id, read run by run (a run: consecutive ids in one file). A field whose
     rows lie at known file offsets (unfiltered chunks or contiguous, native type) is read as raw
     bytes at those offsets, one pread or MPI_File_read_at per stretch of a run inside one chunk:
     this skips HDF5's per-call cost (~11 us per H5Dread, which dominates samples of a few KiB)
     while HDF5 still tells where the data are. Other fields take one H5Dread of the run's
     hyperslab. With helper threads the raw reads of a batch are shared out by runs. */
  qsort(l->order, (size_t)nmiss, 2 * sizeof(int64_t), CmpPair);
  l->nruns = 0;
  for (int64_t a = 0; a < nmiss;) {
    int64_t b  = a + 1;
    int     fi = FileOf(l, l->order[2 * a]);
    while (b < nmiss && l->order[2 * b] == l->order[2 * (b - 1)] + 1 && l->order[2 * b] < l->foff[fi + 1]) b++;
    l->runs[3 * l->nruns]     = a;
    l->runs[3 * l->nruns + 1] = b;
    l->runs[3 * l->nruns + 2] = fi;
    l->nruns++;
    l->st_bytes += (b - a) * l->slotbytes;
    a = b;
  }
  l->st_runs += l->nruns;
  {
    char    err[1024];
    int64_t reads = 0, T = l->nworkers + 1;
    int     share = l->nworkers > 0 && l->nruns >= 2 * T, rc;
    if (share) {
      pthread_mutex_lock(&l->wmtx);
      l->jobslot    = s;
      l->jobpending = (int)l->nworkers;
      l->joberr     = 0;
      l->jobgen++;
      pthread_cond_broadcast(&l->wcv);
      pthread_mutex_unlock(&l->wmtx);
    }
    rc = ReadRuns(l, s, 0, share ? l->nruns / T : l->nruns, 1, l->stage, err, sizeof err, &reads);
    if (!rc) rc = ReadRuns(l, s, 0, l->nruns, 0, l->stage, err, sizeof err, &reads);
    if (share) {
      pthread_mutex_lock(&l->wmtx);
      while (l->jobpending > 0) pthread_cond_wait(&l->wdone, &l->wmtx);
      for (PetscInt w = 0; w < l->nworkers; w++) {
        reads += l->workers[w].reads;
        l->workers[w].reads = 0;
      }
      if (rc) snprintf(l->ioerrmsg, sizeof l->ioerrmsg, "%s", err);
      else if (l->joberr) rc = -1; /* the helper's message is in ioerrmsg */
      pthread_mutex_unlock(&l->wmtx);
    } else if (rc) snprintf(l->ioerrmsg, sizeof l->ioerrmsg, "%s", err);
    l->st_reads += reads;
    if (rc) return -1;
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
  for (PetscInt g = l->next_g; g < l->plan.nbatches; g++) {
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
  for (PetscInt f = 0; f < l->nfields; f++) {
    const PetscInt k = l->fshard[f];
    if (k < 0) continue;
    PetscCall(PetscViewerASCIIPrintf(v, "  rank %d reads the shard", l->rank));
    for (PetscInt d = 0; d < l->frank[f]; d++) PetscCall(PetscViewerASCIIPrintf(v, "%s[%d,%d)", d ? " x " : " ", (int)l->shstart[k][d], (int)(l->shstart[k][d] + l->shcount[k][d])));
    PetscCall(PetscViewerASCIIPrintf(v, " of each row of %s\n", l->fname[f]));
  }
  PetscCall(PetscViewerASCIIPrintf(v, "  buffer: %lld samples = %.1f MiB of a %.1f MiB budget; prefetch ring %d x %lld samples; I/O %s, %s\n", (long long)l->capacity, l->capacity * l->slotbytes / 1048576.0, l->budget / 1048576.0, (int)l->nring,
                                   (long long)l->plan.maxlocal, l->threaded ? "on a background thread" : "in SgLoaderNext", l->used_mpiio ? "MPI-IO (parallel HDF5, independent)" : "one POSIX handle per rank"));
  PetscCall(PetscViewerASCIIPrintf(v, "  epoch order (drawn shuffle of each delivered epoch):"));
  for (PetscInt e = 0; e < PetscMin(l->epochs, 32); e++) PetscCall(PetscViewerASCIIPrintf(v, " %d", (int)l->eperm[e]));
  PetscCall(PetscViewerASCIIPrintf(v, "%s\n", l->epochs > 32 ? " ..." : ""));
  {
    PetscInt nraw = 0;
    for (PetscInt j = 0; j < l->nfiles * l->nfields; j++) nraw += l->raw[j];
    PetscCall(PetscViewerASCIIPrintf(v, "  reads: %d of %d file fields as raw bytes at HDF5-located offsets (%lld chunk-index walks so far), the rest through H5Dread; read-ahead %d batches; %d reader thread(s)\n", (int)nraw, (int)(l->nfiles * l->nfields), (long long)l->st_lookups, (int)l->readahead, (int)(l->nworkers + 1)));
  }
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
  if ((*l)->workers) {
    pthread_mutex_lock(&(*l)->wmtx);
    (*l)->wstop = 1;
    pthread_cond_broadcast(&(*l)->wcv);
    pthread_mutex_unlock(&(*l)->wmtx);
    for (PetscInt w = 0; w < (*l)->nworkers; w++) {
      pthread_join((*l)->workers[w].thread, NULL);
      PetscCall(PetscFree((*l)->workers[w].stage));
    }
    pthread_mutex_destroy(&(*l)->wmtx);
    pthread_cond_destroy(&(*l)->wcv);
    pthread_cond_destroy(&(*l)->wdone);
    PetscCall(PetscFree((*l)->workers));
  }
  PetscCall(PetscFree((*l)->runs));
  if ((*l)->ring) {
    for (PetscInt s = 0; s < (*l)->nring; s++) {
      PetscCall(PetscFree((*l)->ring[s].ids));
      for (PetscInt f = 0; f < (*l)->nfields; f++) PetscCall(PetscFree((*l)->ring[s].data[f]));
    }
    PetscCall(PetscFree((*l)->ring));
  }
  if ((*l)->fspace) {
    SgHDF5Lock();
    for (PetscInt i = 0; i < (*l)->nfiles * (*l)->nfields; i++) {
      if ((*l)->fspace[i] >= 0) H5Sclose((*l)->fspace[i]);
      if ((*l)->dset[i] >= 0) H5Dclose((*l)->dset[i]);
    }
    SgHDF5Unlock();
  }
  if ((*l)->caddr)
    for (PetscInt i = 0; i < (*l)->nfiles * (*l)->nfields; i++) PetscCall(PetscFree((*l)->caddr[i]));
  PetscCall(PetscFree5((*l)->fchunk, (*l)->caddr, (*l)->raw, (*l)->contig, (*l)->nchunks));
  if ((*l)->mfh)
    for (PetscInt i = 0; i < (*l)->nfiles; i++)
      if ((*l)->mfh[i] != MPI_FILE_NULL) PetscCallMPI(MPI_File_close(&(*l)->mfh[i]));
  if ((*l)->fd)
    for (PetscInt i = 0; i < (*l)->nfiles; i++)
      if ((*l)->fd[i] >= 0) close((*l)->fd[i]);
  PetscCall(PetscFree2((*l)->fd, (*l)->mfh));
  PetscCall(PetscFree2((*l)->dset, (*l)->fspace));
  if ((*l)->ds)
    for (PetscInt i = 0; i < (*l)->nfiles; i++) PetscCall(SgDatasetClose(&(*l)->ds[i]));
  PetscCall(PetscFree2((*l)->ds, (*l)->foff));
  PetscCall(PetscFree((*l)->cache));
  PetscCall(PetscFree((*l)->stage));
  PetscCall(PetscFree((*l)->vbuf));
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
