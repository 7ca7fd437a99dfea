/* SgLoaderSetFromOptions: the loader's deck keys. The object's options prefix defaults to
   "loader_" (deck section `loader:`); a trainer that owns a loader may prepend its own prefix with
   PetscObjectAppendOptionsPrefix / SetOptionsPrefix. Every key documented in docs/loader.md is read
   here, so none can be reported as unused. */
#include "sgloaderimpl.h"
#include "sgsys.h"

#define SG_LOADER_MAXFILES 64

PetscErrorCode SgLoaderSetFromOptions(SgLoader l)
{
  char     *files[SG_LOADER_MAXFILES];
  PetscInt  nfiles = SG_LOADER_MAXFILES, seed = (PetscInt)(l->seed & 0x7fffffff), window = (PetscInt)PetscMin(l->window, PETSC_MAX_INT);
  PetscReal mb = (PetscReal)l->budget / 1048576.0;
  PetscBool set;

  PetscFunctionBegin;
  PetscCheck(!l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "SgLoaderSetFromOptions after SgLoaderSetUp");
  PetscObjectOptionsBegin((PetscObject)l);
  PetscCall(SgOptionsPathArray("-files", "Dataset files (surge dataset schema, docs/datasets.md), comma separated", SG_PATH_IN, files, &nfiles, &set));
  if (set) {
    PetscCall(SgLoaderSetFiles(l, nfiles, (const char *const *)files));
    for (PetscInt i = 0; i < nfiles; i++) PetscCall(PetscFree(files[i]));
  }
  PetscCall(SgOptionsInt("-batch_size", "Global batch size: samples per step over all data-parallel ranks", l->batch, &l->batch, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-epochs", "Passes over the data", l->epochs, &l->epochs, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-seed", "Seed of the epoch shuffles (the whole sequence depends only on it)", seed, &seed, &set, 0, PETSC_MAX_INT));
  if (set) l->seed = (uint64_t)seed;
  PetscCall(SgOptionsReal("-buffer_mb", "Per-rank sample buffer (Belady cache) budget", "MiB", mb, &mb, &set, 0, PETSC_MAX_REAL));
  if (set) l->budget = (int64_t)(mb * 1048576.0);
  PetscCall(SgOptionsInt("-prefetch", "Batches prepared ahead on the I/O thread (0: read inside SgLoaderNext, no thread)", l->prefetch, &l->prefetch, NULL, 0, 1024));
  PetscCall(SgOptionsInt("-readahead", "Batches ahead whose buffer misses are announced to the kernel for asynchronous reading (0: off)", l->readahead, &l->readahead, NULL, 0, 1 << 20));
  PetscCall(SgOptionsInt("-order_window", "Accesses each side of an epoch boundary that epoch ordering scores (0: a quarter of the dataset)", window, &window, &set, 0, PETSC_MAX_INT));
  if (set) l->window = window;
  PetscCall(SgOptionsInt("-io_threads", "Threads sharing the raw reads of a batch", l->iothreads, &l->iothreads, NULL, 1, 64));
  PetscCall(SgOptionsBool("-raw", "Read rows at their known file offsets (HDF5 locates them) instead of one H5Dread per run", l->rawio, &l->rawio, NULL));
  PetscCall(SgOptionsBool("-mpiio", "Read a file shared by ranks through MPI-IO (needs MPI_THREAD_MULTIPLE with prefetch)", l->mpiio, &l->mpiio, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}
