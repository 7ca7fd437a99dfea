/* SgLoader: a SOLAR-style loader of training samples from surge dataset files (docs/loader.md).

   SOLAR (Sun et al., "SOLAR: A Highly Optimized Data Loading Framework for Distributed Training of
   CNN-based Scientific Surrogates", VLDB 2023) rests on one observation: with the shuffles of all
   epochs drawn up front from a seed, the whole future access sequence is known. So
     1. epochs are ordered so that the end of one overlaps the start of the next, and the per-rank
        buffer evicts by Belady's rule (the sample needed furthest in the future goes first);
     2. within a global batch each rank gets the samples it already holds; misses are spread so the
        local batch sizes are as equal as possible; the trainer divides the gradient sum by the
        GLOBAL count (SgLoaderBatch.nglobal), so uneven local batches are exact;
     3. runs of consecutive sample indices are read as one hyperslab, on a background I/O thread that
        prefetches whole batches; ranks that share a file read it through MPI-IO (parallel HDF5,
        independent transfers) when MPI is initialised with MPI_THREAD_MULTIPLE.
   Guarantees (tests in tests/unit/loader, tests/mpi/loader): every sample exactly once per epoch,
   across ranks; the global sequence of batches depends only on (seed, epochs, batch size, dataset
   size, order window), never on the buffer size, the rank count or thread timing; the hit count on
   one rank equals the optimal (Belady) hit count for its buffer; the bytes delivered equal plain reads.

   Life cycle, PETSc style:
     SgLoaderCreate(comm, &l); SgLoaderSetFiles(l, n, files); SgLoaderSetBatchSize(l, 64); ...
     SgLoaderSetFromOptions(l); SgLoaderSetUp(l);
     while (SgLoaderNext(l, &batch, &done), !done) { ... batch.data[f] ... }
     SgLoaderDestroy(&l);
   All calls are collective on comm except SgLoaderNext and the getters. */
#pragma once
#include <petscviewer.h>
#include <stdint.h>
#include "sgdataset.h"

typedef struct _p_SgLoader *SgLoader;
PETSC_EXTERN PetscClassId SG_LOADER_CLASSID;
PETSC_EXTERN PetscLogEvent SG_LOADER_Read, SG_LOADER_Plan, SG_LOADER_Wait;

/* One local batch. Pointers stay valid until the next SgLoaderNext or SgLoaderDestroy. */
typedef struct {
  PetscInt        epoch;    /* 0-based, in delivery order */
  PetscInt        batch;    /* 0-based within the epoch */
  PetscInt        nglobal;  /* samples in this global batch, over all ranks: divide gradient sums by this */
  PetscInt        nlocal;   /* samples on this rank (may be 0) */
  const PetscInt *counts;   /* [size] local counts of every rank */
  const int64_t  *ids;      /* [nlocal] global sample ids (file offsets concatenated in file order) */
  const void    **data;     /* [nfields] nlocal rows of field f, C order, the field's stored dtype */
} SgLoaderBatch;

PETSC_EXTERN PetscErrorCode SgLoaderInitializePackage(void);
PETSC_EXTERN PetscErrorCode SgLoaderCreate(MPI_Comm, SgLoader *);
PETSC_EXTERN PetscErrorCode SgLoaderSetFiles(SgLoader, PetscInt n, const char *const files[]);
/* Fields to deliver (default: every per-sample field of the first file, in its order). */
PETSC_EXTERN PetscErrorCode SgLoaderSetFields(SgLoader, PetscInt n, const char *const names[]);
PETSC_EXTERN PetscErrorCode SgLoaderSetBatchSize(SgLoader, PetscInt global_batch);
/* Spatial shard: deliver (and read) only the block [start[d], start[d]+count[d]) of each row of
   `field` (ndim = the row's rank), as [nlocal][count...] in C order -- the part of a sample one
   spatial rank of a partitioned model needs (docs/parallel.md). Shards change only what is read:
   the buffer capacity of the plan counts whole samples, so ranks holding different shards of the
   same samples (the spatial ranks of one data group, each with its own loader on the data
   communicator) draw identical plans. A sharded field is read through one HDF5 hyperslab per run
   (the raw path reads whole rows). */
PETSC_EXTERN PetscErrorCode SgLoaderSetFieldShard(SgLoader, const char field[], PetscInt ndim, const PetscInt start[], const PetscInt count[]);
PETSC_EXTERN PetscErrorCode SgLoaderSetEpochs(SgLoader, PetscInt epochs);
PETSC_EXTERN PetscErrorCode SgLoaderSetSeed(SgLoader, uint64_t seed);
/* Per-rank budget of the sample buffer (the Belady cache), bytes. The prefetch ring (depth local
   batches) and a staging area of one batch come on top; SgLoaderView prints all three. */
PETSC_EXTERN PetscErrorCode SgLoaderSetBufferBytes(SgLoader, int64_t bytes);
/* Batches prepared ahead by the I/O thread; 0 = no thread, read inside SgLoaderNext. Default 2. */
PETSC_EXTERN PetscErrorCode SgLoaderSetPrefetch(SgLoader, PetscInt depth);
/* Epoch ordering looks at reuse across an epoch boundary within this many accesses (default: a
   quarter of the dataset). It is part of the definition of the sequence, like the seed. */
PETSC_EXTERN PetscErrorCode SgLoaderSetOrderWindow(SgLoader, int64_t window);
/* Batches ahead whose misses are announced to the kernel (posix_fadvise WILLNEED) so storage
   serves them with many requests in flight; 0 = off, default 8 (measured best, docs/loader.md).
   It uses the page cache, not the budget. */
PETSC_EXTERN PetscErrorCode SgLoaderSetReadAhead(SgLoader, PetscInt batches);
/* Resume a run at global batch g (as counted by the batches SgLoaderNext delivered before): the
   buffer is refilled with exactly what an uninterrupted run would hold there, so the batches, their
   bytes and the hits that follow are identical (tested). For training restarts: store the number
   of batches consumed in the checkpoint. */
PETSC_EXTERN PetscErrorCode SgLoaderSetStartBatch(SgLoader, PetscInt g);
/* Read a field whose rows sit at computable file offsets (unfiltered chunked or contiguous, stored
   in the native type) as raw bytes at those offsets, located through HDF5 (default true); false
   sends every read through H5Dread. Both give the same bytes (tested). */
PETSC_EXTERN PetscErrorCode SgLoaderSetRawReads(SgLoader, PetscBool);
/* Threads that share the raw reads of a batch (default 2: the I/O thread and one helper). */
PETSC_EXTERN PetscErrorCode SgLoaderSetIOThreads(SgLoader, PetscInt n);
/* Read files shared by several ranks through MPI-IO (default true). Used only where it is safe:
   with the prefetch thread it needs MPI_THREAD_MULTIPLE, otherwise each rank opens the file itself. */
PETSC_EXTERN PetscErrorCode SgLoaderSetMPIIO(SgLoader, PetscBool);
/* After set-up: whether MPI-IO and the I/O thread are in use. */
PETSC_EXTERN PetscErrorCode SgLoaderGetIOMode(SgLoader, PetscBool *mpiio, PetscBool *threaded);
/* Options (prefix "loader_" + the object's prefix): -loader_batch_size, -loader_epochs,
   -loader_seed, -loader_buffer_mb, -loader_prefetch, -loader_readahead, -loader_order_window,
   -loader_mpiio, -loader_raw, -loader_io_threads, -loader_files. */
PETSC_EXTERN PetscErrorCode SgLoaderSetFromOptions(SgLoader);
PETSC_EXTERN PetscErrorCode SgLoaderSetUp(SgLoader);
PETSC_EXTERN PetscErrorCode SgLoaderNext(SgLoader, SgLoaderBatch *, PetscBool *done);
PETSC_EXTERN PetscErrorCode SgLoaderView(SgLoader, PetscViewer);
PETSC_EXTERN PetscErrorCode SgLoaderDestroy(SgLoader *);

/* Getters. */
PETSC_EXTERN PetscErrorCode SgLoaderGetNumSamples(SgLoader, int64_t *);
PETSC_EXTERN PetscErrorCode SgLoaderGetNumBatches(SgLoader, PetscInt *per_epoch, PetscInt *total);
PETSC_EXTERN PetscErrorCode SgLoaderGetFieldInfo(SgLoader, PetscInt f, const char **name, SgDType *, int64_t *rowelems);
PETSC_EXTERN PetscErrorCode SgLoaderGetNumFields(SgLoader, PetscInt *);
/* The global access sequence (epochs*nsamples ids, in delivery order) and which drawn shuffle each
   delivered epoch uses. Owned by the loader. */
PETSC_EXTERN PetscErrorCode SgLoaderGetSequence(SgLoader, const uint32_t **seq, const PetscInt **epoch_perm);
/* Buffer capacity in samples, and counters so far on this rank: hits, misses, bytes read from
   files, HDF5 read calls (one per field per run of consecutive samples), runs. */
PETSC_EXTERN PetscErrorCode SgLoaderGetCapacity(SgLoader, int64_t *);
PETSC_EXTERN PetscErrorCode SgLoaderGetStats(SgLoader, int64_t *hits, int64_t *misses, int64_t *bytes_read, int64_t *reads, int64_t *runs);
/* Hits the plan predicts for this rank over the whole run (equals the final GetStats hits). */
PETSC_EXTERN PetscErrorCode SgLoaderGetPlannedHits(SgLoader, int64_t *hits, int64_t *accesses);

/* ---- building blocks, exposed for tests and benchmarks ---------------------------------------- */
/* Fisher-Yates shuffle of 0..n-1 whose swap i uses counter (i, stream). */
PETSC_EXTERN PetscErrorCode SgShuffle(uint64_t seed, uint64_t stream, int64_t n, uint32_t perm[]);
/* Hits of Belady's MIN policy (with bypass) for a cache of cap items on trace[0..n-1] of item ids
   in [0, nitems). */
PETSC_EXTERN PetscErrorCode SgBeladyHits(int64_t n, const uint32_t trace[], int64_t nitems, int64_t cap, int64_t *hits);
