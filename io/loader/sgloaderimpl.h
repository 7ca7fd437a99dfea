/* Private definition of SgLoader (io/loader only). */
#pragma once
#include <petsc/private/petscimpl.h>
#include <pthread.h>
#include <hdf5.h>
#include "sgloader.h"

#define SG_LOADER_MAXFIELDS 32
#define SG_LOADER_INF       UINT32_MAX

/* The plan of one rank: what the I/O side does for each of its accesses, in delivery order.
   act[k] >= 0: hit, copy from buffer slot act[k]; act[k] == -1: miss, read, do not keep;
   act[k] <= -2: miss, read, then store into slot -act[k]-2 (evicting whatever was there). */
typedef struct {
  PetscInt  nbatches, nb_epoch;   /* global batches in total and per epoch */
  int64_t  *bstart;               /* [nbatches+1] offset of each global batch in seq */
  PetscInt *counts;               /* [nbatches*size] local count of every rank in every batch */
  int64_t  *lstart;               /* [nbatches+1] offset of this rank's entries of each batch */
  uint32_t *lid;                  /* [nlocal total] sample ids of this rank, in order */
  int32_t  *act;                  /* [nlocal total] see above */
  int64_t   hits, accesses;       /* planned, this rank */
  int64_t   maxlocal;             /* largest local batch of this rank */
} SgLoaderPlan;

typedef struct {
  int      state; /* 0 free, 1 being filled, 2 ready */
  PetscInt g;     /* global batch it holds */
  int64_t *ids;
  char    *data[SG_LOADER_MAXFIELDS];
} SgLoaderSlot;

typedef struct {
  PetscErrorCode (*view)(SgLoader, PetscViewer); /* PETSc objects carry an ops table; ours is trivial */
} SgLoaderOps;

/* A helper thread that shares the raw reads of a batch with the I/O thread (pread and
   MPI_File_read_at are thread-safe; HDF5 is only entered under SgHDF5Lock). */
typedef struct {
  SgLoader  l;
  int       id;         /* 1..nworkers; the I/O thread itself is 0 */
  pthread_t thread;
  char     *stage;      /* own staging buffer for multi-row runs */
  char      err[1024];
  int64_t   reads;
} SgLoaderWorker;

struct _p_SgLoader {
  PETSCHEADER(SgLoaderOps);
  PetscBool setupcalled;
  /* settings */
  PetscInt  nfiles;
  char    **files;
  PetscInt  nsel;
  char    **sel;              /* requested field names, or NULL for all */
  PetscInt  batch, epochs, prefetch;
  PetscInt  start;            /* first global batch to deliver (resume) */
  uint64_t  seed;
  int64_t   budget, window;
  PetscBool mpiio;            /* use MPI-IO when the file is shared and MPI allows it */
  /* data */
  SgDataset *ds;              /* [nfiles] */
  int64_t   *foff;            /* [nfiles+1] global id offsets */
  int64_t    nsamples;
  PetscInt   nfields;
  char       fname[SG_LOADER_MAXFIELDS][64];
  SgDType    ftype[SG_LOADER_MAXFIELDS];
  int64_t    frow[SG_LOADER_MAXFIELDS];    /* bytes per row */
  int64_t    foffs[SG_LOADER_MAXFIELDS];   /* offset of the field inside a buffer slot */
  PetscInt   frank[SG_LOADER_MAXFIELDS];
  hsize_t    fshape[SG_LOADER_MAXFIELDS][SG_DATASET_MAXDIM];
  /* spatial shards (SgLoaderSetFieldShard): the block of each row this rank reads, by field name
     before set-up, by delivered field after it */
  PetscInt   nshard;
  char       shname[SG_LOADER_MAXFIELDS][64];
  PetscInt   shdim[SG_LOADER_MAXFIELDS], shstart[SG_LOADER_MAXFIELDS][SG_DATASET_MAXDIM], shcount[SG_LOADER_MAXFIELDS][SG_DATASET_MAXDIM];
  PetscInt   fshard[SG_LOADER_MAXFIELDS]; /* -1: whole rows, else an index into sh* */
  int64_t    planbytes;                   /* whole-sample bytes: the buffer capacity of the plan */
  hid_t     *fspace;          /* [nfiles*nfields] file dataspaces, selections set by the I/O side */
  hsize_t   *fchunk;          /* [nfiles*nfields] rows per chunk */
  haddr_t  **caddr;           /* [nfiles*nfields][nchunks] chunk file addresses, filled lazily (0 = not yet) */
  int       *fd;              /* [nfiles] plain descriptors: raw reads (POSIX mode) and read-ahead */
  MPI_File  *mfh;             /* [nfiles] MPI-IO handles (MPI-IO mode) */
  PetscBool *raw;             /* [nfiles*nfields] rows readable as raw bytes at known offsets */
  PetscBool *contig;          /* [nfiles*nfields] contiguous layout (one "chunk" of all rows) */
  int64_t   *nchunks;         /* [nfiles*nfields] chunks holding committed rows */
  PetscBool  rawio;           /* allow raw reads (default true); false forces H5Dread for everything */
  PetscInt   readahead;       /* batches whose misses are announced to the kernel ahead of reading */
  PetscInt   advised;         /* last batch announced */
  int64_t    st_advised, st_lookups;
  char      *vbuf;            /* 2*vbytes scratch for confirming guessed chunk addresses */
  int64_t    vbytes;
  hid_t     *dset;            /* [nfiles*nfields] */
  int64_t    slotbytes;       /* bytes of one sample over all fields */
  int64_t    capacity;        /* buffer slots */
  PetscMPIInt rank, size;
  PetscBool  used_mpiio;
  /* sequence and plan */
  uint32_t    *seq;           /* [epochs*nsamples] */
  PetscInt    *eperm;         /* [epochs] which drawn shuffle each delivered epoch uses */
  SgLoaderPlan plan;
  /* I/O side (owned by the I/O thread while it runs) */
  char        *cache;         /* capacity*slotbytes */
  char        *stage;         /* maxlocal*max row bytes */
  int64_t      stagebytes;    /* size of every reader's staging buffer (maxlocal*max row bytes) */
  int64_t     *order;         /* scratch [2*maxlocal]: (id, position) of local misses, sorted */
  int64_t      st_hits, st_misses, st_bytes, st_reads, st_runs;
  /* ring of prepared batches */
  PetscInt      nring;
  SgLoaderSlot *ring;
  PetscInt      next_g;       /* next batch the consumer gets */
  PetscInt      held;         /* ring slot the consumer holds, -1 none */
  const void   *dptr[SG_LOADER_MAXFIELDS];
  /* helper threads for raw reads */
  PetscInt        iothreads;  /* threads reading a batch (1 = the I/O thread alone) */
  PetscInt        nworkers;
  SgLoaderWorker *workers;
  int64_t        *runs;       /* [3*maxlocal] (first, end, file) of each run of the current batch */
  int64_t         nruns;
  SgLoaderSlot   *jobslot;
  int             jobgen, jobpending, joberr, wstop;
  pthread_mutex_t wmtx;
  pthread_cond_t  wcv, wdone;
  /* thread */
  PetscBool       threaded;
  pthread_t       thread;
  pthread_mutex_t mtx;
  pthread_cond_t  cv;
  int             stop, ioerr;
  char            ioerrmsg[1024];
};

PETSC_INTERN PetscErrorCode SgLoaderPlanBuild(SgLoader);
PETSC_INTERN PetscErrorCode SgLoaderPlanDestroy(SgLoaderPlan *);
/* Fill ring slot s with global batch g. Plain C with an error string: it runs on the I/O thread,
   where PETSc's error machinery must not be used. Returns 0 or -1 (message in l->ioerrmsg). */
PETSC_INTERN int SgLoaderFillBatch(SgLoader, PetscInt g, SgLoaderSlot *s);
