/* SgDataset: one HDF5 file holding the training samples of one surrogate kind (docs/datasets.md).

   Schema version 1 (attribute surge_dataset_version = 1 on "/"):
     /                      attrs: surge_dataset_version (int), kind (string), nsamples (int64: the
                            COMMITTED sample count), sample_fields (comma-separated list)
     /provenance            attrs: surge_version, created (UTC ISO-8601), deck (YAML text, may be
                            empty), source (free text: "deepmd import of ...", "surge ensemble ...")
     /samples/<field>       [nrows, rowshape...] chunked, unlimited leading dimension; row i is sample i.
                            attrs: units. Rows >= nsamples are uncommitted and never read.
     /static/<name>         per-dataset arrays (md_frames: type [natoms] int32, type_map [ntypes] strings)
   Kinds and their fields:
     md_frames        samples: coord [natoms,3], box [9], energy [], force [natoms,3]  (required)
                                virial [9], member [] int64, params [nparams] f64 (optional)
                      static:  type [natoms] int32, type_map [ntypes] strings
     field_snapshots  samples: any fields, optional member/params; static: optional

   Appending is crash safe: rows are written past the committed count, the file is flushed, and only
   then is nsamples bumped (and flushed). A crash before the bump leaves the new rows invisible; the
   next append overwrites them.

   Writes are serial (open with PETSC_COMM_SELF or a one-rank communicator); reads may use any
   communicator (parallel HDF5, independent I/O). Error messages name the file and what is wrong. */
#pragma once
#include <petscviewer.h>
#include <stdint.h>
#include "sgcompat.h"
#include "sgwrite.h"

#define SG_DATASET_VERSION 1
#define SG_DATASET_MAXDIM  6

typedef enum { SG_DTYPE_F32 = 0, SG_DTYPE_F64 = 1, SG_DTYPE_I32 = 2, SG_DTYPE_I64 = 3 } SgDType;
PETSC_EXTERN const char *const SgDTypes[];
PETSC_EXTERN size_t SgDTypeSize(SgDType);

typedef struct _p_SgDataset *SgDataset;

/* Process-wide, recursive lock around HDF5, which Debian builds without thread safety. Every
   SgDataset function and the loader's I/O thread hold it while inside HDF5; any other code that
   calls HDF5 while an SgLoader with prefetch is alive (checkpoint or output writes during training)
   must hold it too. */
#include "sghdf5.h"
typedef enum { SG_DATASET_READ = 0, SG_DATASET_APPEND = 1 } SgDatasetMode;

/* ---- creation ------------------------------------------------------------------------------ */
/* Creates a new file (fails if it exists unless overwrite). Then define fields and statics, then
   SgDatasetAppend*. provenance: deck text (or NULL) and a free-text source. */
PETSC_EXTERN PetscErrorCode SgDatasetCreate(MPI_Comm, const char path[], const char kind[], PetscBool overwrite, SgDataset *);
/* The same for a file that is not training data but holds samples in the dataset layout (podlstm's
   windows, its search log): filekind (sgwrite.h SG_FILE_*) says what it is, so neither may replace
   the other. A created dataset is written to PATH.tmp and committed at SgDatasetClose; it is refused
   if PATH is an input of the run or another kind of file (sgwrite.h). */
PETSC_EXTERN PetscErrorCode SgDatasetCreateAs(MPI_Comm, const char path[], const char kind[], const char filekind[], PetscBool overwrite, SgDataset *);
PETSC_EXTERN PetscErrorCode SgDatasetSetProvenance(SgDataset, const char deck[], const char source[]);
/* One more provenance string (e.g. "physics": the solver's parameters after the command line's
   overrides, written by surge ensemble; read back with SgDatasetGetProvenance). */
PETSC_EXTERN PetscErrorCode SgDatasetSetProvenanceItem(SgDataset, const char key[], const char value[]);
/* Refuses (one error naming `option`) when `file` exists and is a surge dataset: an output that is
   not a dataset (a run's fields, a model) must never replace one, e.g. the training data. */
PETSC_EXTERN PetscErrorCode SgDatasetCheckNotOverwritten(MPI_Comm, const char option[], const char file[]);
/* A per-sample field: rows of shape rowshape[0..rowdim-1] (rowdim 0 = scalar per sample).
   chunk_rows 0 picks about 16 KiB per chunk (at least 1, at most 4096 rows). */
PETSC_EXTERN PetscErrorCode SgDatasetDefineField(SgDataset, const char name[], SgDType, PetscInt rowdim, const PetscInt rowshape[], const char units[], PetscInt chunk_rows);
PETSC_EXTERN PetscErrorCode SgDatasetWriteStatic(SgDataset, const char name[], SgDType, PetscInt ndim, const PetscInt shape[], const void *data);
PETSC_EXTERN PetscErrorCode SgDatasetWriteStrings(SgDataset, const char name[], PetscInt n, const char *const strs[]);
PETSC_EXTERN PetscErrorCode SgDatasetSetParamNames(SgDataset, PetscInt n, const char *const names[]);

/* md_frames in one call: type[natoms], type_map[ntypes]; dtype of the float fields (F32 or F64);
   optional virial; nparams >= 0 adds member (and params if nparams > 0). */
PETSC_EXTERN PetscErrorCode SgDatasetCreateMDFrames(MPI_Comm, const char path[], PetscBool overwrite, PetscInt natoms, const PetscInt type[], PetscInt ntypes, const char *const type_map[], SgDType dtype, PetscBool has_virial, PetscInt nparams, const char *const param_names[], SgDataset *);
/* md_frames are labelled in metal units (Angstrom, eV) at creation; frames from a run in other units
   (LAMMPS lj: sigma, epsilon) relabel the fields here, so the "units" attributes say what the numbers are. */
PETSC_EXTERN PetscErrorCode SgDatasetSetMDFramesUnits(SgDataset, const char length[], const char energy[]);

/* ---- open / inspect ------------------------------------------------------------------------ */
/* Validates: HDF5 readable (truncated/foreign files fail), version known, kind known, every field
   the kind requires present with a consistent shape, every field holds >= nsamples rows. */
PETSC_EXTERN PetscErrorCode SgDatasetOpen(MPI_Comm, const char path[], SgDatasetMode, SgDataset *);
PETSC_EXTERN PetscErrorCode SgDatasetClose(SgDataset *);
/* Appending without touching the committed file (one rank): SgDatasetOpenStaged continues PATH in
   PATH.tmp.PID (a copy), which SgDatasetClose commits over PATH; SgDatasetFinish closes a created or
   staged dataset without the commit and gives its names for a set commit (sgwrite.h SgWriteMember*). */
PETSC_EXTERN PetscErrorCode SgDatasetOpenStaged(MPI_Comm, const char path[], SgDataset *);
PETSC_EXTERN PetscErrorCode SgDatasetFinish(SgDataset *, char tmp[], char path[], size_t len);
PETSC_EXTERN PetscErrorCode SgDatasetGetPath(SgDataset, const char **);
PETSC_EXTERN PetscErrorCode SgDatasetGetKind(SgDataset, const char **);
PETSC_EXTERN PetscErrorCode SgDatasetGetNumSamples(SgDataset, int64_t *);
PETSC_EXTERN PetscErrorCode SgDatasetGetNumFields(SgDataset, PetscInt *);
/* i-th per-sample field: name, stored dtype, row rank and shape, elements per row. */
PETSC_EXTERN PetscErrorCode SgDatasetGetFieldInfo(SgDataset, PetscInt i, const char **name, SgDType *, PetscInt *rowdim, const PetscInt **rowshape, int64_t *rowelems);
/* Index of field 'name' or -1. */
PETSC_EXTERN PetscErrorCode SgDatasetFindField(SgDataset, const char name[], PetscInt *);
/* The HDF5 dataset id of field i (for the loader, which reads hyperslabs itself). */
PETSC_EXTERN PetscErrorCode SgDatasetGetFieldHid(SgDataset, PetscInt i, int64_t *hid);
PETSC_EXTERN PetscErrorCode SgDatasetView(SgDataset, PetscViewer);

/* ---- read ---------------------------------------------------------------------------------- */
/* Rows [start, start+count) of a field, converted to memtype. Fails past the committed count. */
PETSC_EXTERN PetscErrorCode SgDatasetReadField(SgDataset, const char name[], int64_t start, int64_t count, SgDType memtype, void *buf);
/* The same rows restricted to the block [rstart[d], rstart[d]+rcount[d]) of each row axis d (a spatial
   shard: what one spatial rank of a partitioned sample needs), into buf as [count][rcount...]. */
PETSC_EXTERN PetscErrorCode SgDatasetReadFieldBlock(SgDataset, const char name[], int64_t start, int64_t count, const PetscInt rstart[], const PetscInt rcount[], SgDType memtype, void *buf);
/* A static array: *n elements (on entry the capacity of buf, 0 to only query the size). */
PETSC_EXTERN PetscErrorCode SgDatasetReadStatic(SgDataset, const char name[], SgDType memtype, int64_t *n, void *buf);
/* Strings of a static string list: PetscMalloc'ed array of PetscMalloc'ed strings; free with
   PetscStrArrayDestroy-style loop or SgDatasetStringsFree. */
PETSC_EXTERN PetscErrorCode SgDatasetReadStrings(SgDataset, const char name[], PetscInt *n, char ***strs);
PETSC_EXTERN PetscErrorCode SgDatasetStringsFree(PetscInt n, char ***strs);
/* *value: the provenance string (PetscFree it), NULL when the file has none under key */
PETSC_EXTERN PetscErrorCode SgDatasetGetProvenance(SgDataset, const char key[], char **value);

/* ---- append (crash safe) ------------------------------------------------------------------- */
/* Begin: reserve k rows after the committed ones. Field: write those rows of one field (every
   field must be written once). Commit: flush data, then publish by bumping nsamples. */
PETSC_EXTERN PetscErrorCode SgDatasetAppendBegin(SgDataset, int64_t k);
PETSC_EXTERN PetscErrorCode SgDatasetAppendField(SgDataset, const char name[], SgDType memtype, const void *data);
PETSC_EXTERN PetscErrorCode SgDatasetAppendCommit(SgDataset);

/* ---- DeePMD-kit import / export (sgdeepmd.c) ---------------------------------------------- */
/* Import system directories (type.raw, type_map.raw, set.* with coord/box/energy/force[/virial].npy)
   into a new md_frames file; all directories must share type.raw and type_map.raw. Float precision
   follows the .npy files (f4 stays f4). Frames from directory d get member id d. */
PETSC_EXTERN PetscErrorCode SgDeepmdImport(MPI_Comm, PetscInt ndirs, const char *const dirs[], const char out[], PetscBool overwrite);
/* Export an md_frames file to a DeePMD-kit system directory with sets of at most set_size frames
   (0 = one set). Float precision follows the dataset. */
PETSC_EXTERN PetscErrorCode SgDeepmdExport(MPI_Comm, const char in[], const char dir[], PetscInt set_size);
