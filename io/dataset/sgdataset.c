/* SgDataset: the versioned HDF5 training-data schema (sgdataset.h, docs/datasets.md).

   Validation on open is strict on purpose: a training run that silently reads a half-written or
   foreign file wastes hours, so every mismatch is an error naming the file and the field. */
#include <errno.h>
#include "sgdataset_h5.h"
#include "sgsys.h"
#include "sgwrite.h"
#include <petscviewer.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXFIELDS 32
#define NAMELEN   64

typedef struct {
  char     name[NAMELEN];
  SgDType  dtype;
  PetscInt rowdim;
  PetscInt rowshape[SG_DATASET_MAXDIM];
  int64_t  rowelems;
  hid_t    dset;
  int      written; /* during an append */
} SgField;

struct _p_SgDataset {
  MPI_Comm      comm;
  char          path[PETSC_MAX_PATH_LEN];
  char          tmp[PETSC_MAX_PATH_LEN + 32]; /* a created file is written here and committed at close */
  char          kind[NAMELEN];
  hid_t         file, gsamples, gstatic, gprov;
  SgDatasetMode mode;
  int64_t       nsamples; /* committed */
  int64_t       pending;  /* rows reserved by AppendBegin, 0 when no append is open */
  PetscInt      nfields;
  SgField       fields[MAXFIELDS];
};

static const char *const md_required[] = {"coord", "box", "energy", "force"};

static PetscErrorCode KindKnown(const char kind[], PetscBool *known)
{
  PetscFunctionBegin;
  *known = (PetscBool)(!strcmp(kind, "md_frames") || !strcmp(kind, "field_snapshots"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteNSamples(SgDataset ds, int64_t n)
{
  hid_t attr;

  PetscFunctionBegin;
  attr = H5Aopen(ds->file, "nsamples", H5P_DEFAULT);
  SgH5Call(attr, ds->path, "cannot open attribute nsamples");
  SgH5Call(H5Awrite(attr, H5T_NATIVE_INT64, &n), ds->path, "cannot write nsamples");
  H5Aclose(attr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteSampleFieldList(SgDataset ds)
{
  char list[MAXFIELDS * NAMELEN] = "";

  PetscFunctionBegin;
  for (PetscInt i = 0; i < ds->nfields; i++) {
    if (i) PetscCall(PetscStrlcat(list, ",", sizeof list));
    PetscCall(PetscStrlcat(list, ds->fields[i].name, sizeof list));
  }
  PetscCall(SgH5WriteAttrString(ds->path, ds->file, "sample_fields", list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DatasetAlloc(MPI_Comm comm, const char path[], SgDataset *ds)
{
  PetscFunctionBegin;
  PetscCall(PetscNew(ds));
  (*ds)->comm = comm;
  (*ds)->file = (*ds)->gsamples = (*ds)->gstatic = (*ds)->gprov = H5I_INVALID_HID;
  PetscCall(PetscStrncpy((*ds)->path, path, sizeof((*ds)->path)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetCreate_Impl(MPI_Comm comm, const char path[], const char kind[], const char filekind[], PetscBool overwrite, SgDataset *out)
{
  char        msg[2 * PETSC_MAX_PATH_LEN];
  SgDataset   ds;
  PetscMPIInt size;
  PetscBool   known;
  hid_t       space, attr;
  int         version = SG_DATASET_VERSION;
  int64_t     zero    = 0;
  char        date[64];
  time_t      now = time(NULL);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(size == 1, comm, PETSC_ERR_SUP, "%s: datasets are written by one rank; create it on PETSC_COMM_SELF (got %d ranks)", path, size);
  PetscCall(KindKnown(kind, &known));
  PetscCheck(known, comm, PETSC_ERR_USER_INPUT, "%s: unknown dataset kind '%s' (md_frames, field_snapshots)", path, kind);
  PetscCheck(overwrite || access(path, F_OK) != 0, comm, PETSC_ERR_FILE_OPEN, "%s exists and would be replaced: remove it, or allow it (surge dataset import -overwrite)", path);
  /* the write path (sgwrite.h): never an input of the run, never another kind of file */
  PetscCall(SgWriteCheckMessage("the dataset output", path, filekind, msg, sizeof msg));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg);
  SgH5Quiet();
  PetscCall(DatasetAlloc(comm, path, &ds));
  PetscCall(PetscStrncpy(ds->kind, kind, sizeof ds->kind));
  PetscCall(SgWriteTempName(path, ds->tmp, sizeof ds->tmp));
  ds->mode = SG_DATASET_APPEND;
  PetscCall(SgH5RemoveForCreate(comm, ds->tmp)); /* a reader of a stale temporary keeps its inode */
  ds->file = H5Fcreate(ds->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(ds->file, path, "cannot create the dataset file");
  PetscCall(SgH5MarkKind(path, ds->file, filekind));
  space = H5Screate(H5S_SCALAR);
  attr  = H5Acreate2(ds->file, "surge_dataset_version", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(attr, path, "cannot create surge_dataset_version");
  SgH5Call(H5Awrite(attr, H5T_NATIVE_INT, &version), path, "cannot write surge_dataset_version");
  H5Aclose(attr);
  attr = H5Acreate2(ds->file, "nsamples", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(attr, path, "cannot create nsamples");
  SgH5Call(H5Awrite(attr, H5T_NATIVE_INT64, &zero), path, "cannot write nsamples");
  H5Aclose(attr);
  H5Sclose(space);
  PetscCall(SgH5WriteAttrString(path, ds->file, "kind", kind));
  PetscCall(WriteSampleFieldList(ds));
  ds->gsamples = H5Gcreate2(ds->file, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ds->gstatic  = H5Gcreate2(ds->file, "static", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ds->gprov    = H5Gcreate2(ds->file, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(ds->gsamples < 0 || ds->gstatic < 0 || ds->gprov < 0 ? -1 : 0, path, "cannot create groups");
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  PetscCall(SgH5WriteAttrString(path, ds->gprov, "surge_version", SURGE_VERSION));
  PetscCall(SgH5WriteAttrString(path, ds->gprov, "created", date));
  PetscCall(SgH5WriteAttrString(path, ds->gprov, "deck", ""));
  PetscCall(SgH5WriteAttrString(path, ds->gprov, "source", ""));
  *out = ds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetSetProvenance_Impl(SgDataset ds, const char deck[], const char source[])
{
  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: opened read-only", ds->path);
  if (deck) PetscCall(SgH5WriteAttrString(ds->path, ds->gprov, "deck", deck));
  if (source) PetscCall(SgH5WriteAttrString(ds->path, ds->gprov, "source", source));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetSetProvenanceItem_Impl(SgDataset ds, const char key[], const char value[])
{
  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: opened read-only", ds->path);
  PetscCall(SgH5WriteAttrString(ds->path, ds->gprov, key, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetDefineField_Impl(SgDataset ds, const char name[], SgDType dtype, PetscInt rowdim, const PetscInt rowshape[], const char units[], PetscInt chunk_rows)
{
  SgField *f;
  hsize_t  dims[SG_DATASET_MAXDIM + 1], maxdims[SG_DATASET_MAXDIM + 1], chunk[SG_DATASET_MAXDIM + 1];
  hid_t    space, dcpl;
  PetscInt idx;

  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND && !ds->pending, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: fields are defined on a writable dataset outside an append", ds->path);
  PetscCheck(ds->nsamples == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: cannot add field '%s' after samples were committed", ds->path, name);
  PetscCall(SgDatasetFindField(ds, name, &idx));
  PetscCheck(idx < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: field '%s' defined twice", ds->path, name);
  PetscCheck(ds->nfields < MAXFIELDS, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: at most %d fields", ds->path, MAXFIELDS);
  PetscCheck(rowdim >= 0 && rowdim <= SG_DATASET_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: field '%s' row rank %d out of [0,%d]", ds->path, name, (int)rowdim, SG_DATASET_MAXDIM);
  PetscCheck(strlen(name) < NAMELEN && !strchr(name, ',') && !strchr(name, '/'), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: bad field name '%s'", ds->path, name);
  f = &ds->fields[ds->nfields];
  PetscCall(PetscMemzero(f, sizeof *f));
  PetscCall(PetscStrncpy(f->name, name, sizeof f->name));
  f->dtype    = dtype;
  f->rowdim   = rowdim;
  f->rowelems = 1;
  for (PetscInt d = 0; d < rowdim; d++) {
    PetscCheck(rowshape[d] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: field '%s' dimension %d is %d", ds->path, name, (int)d, (int)rowshape[d]);
    f->rowshape[d] = rowshape[d];
    f->rowelems *= rowshape[d];
  }
  if (chunk_rows <= 0) {
    /* ~16 KiB chunks ("a few samples" for MD frames: 7 water frames of 192 atoms): a reader with
       HDF5's default chunk cache (h5py, PyTorch datasets) pulls in the whole chunk for one random
       sample, so chunks must stay small; tiny rows (energies) still get few, larger chunks. */
    int64_t rowbytes = f->rowelems * (int64_t)SgDTypeSize(dtype);
    chunk_rows       = (PetscInt)PetscMax(1, PetscMin(4096, 16384 / rowbytes));
  }
  dims[0]    = 0;
  maxdims[0] = H5S_UNLIMITED;
  chunk[0]   = (hsize_t)chunk_rows;
  for (PetscInt d = 0; d < rowdim; d++) dims[d + 1] = maxdims[d + 1] = chunk[d + 1] = (hsize_t)rowshape[d];
  space = H5Screate_simple((int)rowdim + 1, dims, maxdims);
  dcpl  = H5Pcreate(H5P_DATASET_CREATE);
  SgH5Call(H5Pset_chunk(dcpl, (int)rowdim + 1, chunk), ds->path, "cannot set chunking of field %s", name);
  f->dset = H5Dcreate2(ds->gsamples, name, SgH5FileType(dtype), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  SgH5Call(f->dset, ds->path, "cannot create /samples/%s", name);
  H5Pclose(dcpl);
  H5Sclose(space);
  PetscCall(SgH5WriteAttrString(ds->path, f->dset, "units", units ? units : ""));
  ds->nfields++;
  PetscCall(WriteSampleFieldList(ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetWriteStatic_Impl(SgDataset ds, const char name[], SgDType dtype, PetscInt ndim, const PetscInt shape[], const void *data)
{
  hsize_t dims[SG_DATASET_MAXDIM];
  hid_t   space, dset;

  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: opened read-only", ds->path);
  PetscCheck(ndim >= 1 && ndim <= SG_DATASET_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: static '%s' rank %d", ds->path, name, (int)ndim);
  PetscCheck(H5Lexists(ds->gstatic, name, H5P_DEFAULT) <= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: static '%s' written twice", ds->path, name);
  for (PetscInt d = 0; d < ndim; d++) dims[d] = (hsize_t)shape[d];
  space = H5Screate_simple((int)ndim, dims, NULL);
  dset  = H5Dcreate2(ds->gstatic, name, SgH5FileType(dtype), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(dset, ds->path, "cannot create /static/%s", name);
  SgH5Call(H5Dwrite(dset, SgH5MemType(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ds->path, "cannot write /static/%s", name);
  H5Dclose(dset);
  H5Sclose(space);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetWriteStrings_Impl(SgDataset ds, const char name[], PetscInt n, const char *const strs[])
{
  size_t  w = 1;
  char   *buf;
  hsize_t dims[1] = {(hsize_t)n};
  hid_t   type, space, dset;

  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: opened read-only", ds->path);
  PetscCheck(n >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: empty string list '%s'", ds->path, name);
  for (PetscInt i = 0; i < n; i++) w = PetscMax(w, strlen(strs[i]));
  PetscCall(PetscCalloc1((size_t)n * w, &buf));
  for (PetscInt i = 0; i < n; i++) memcpy(buf + (size_t)i * w, strs[i], strlen(strs[i]));
  type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, w);
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  space = H5Screate_simple(1, dims, NULL);
  dset  = H5Dcreate2(ds->gstatic, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SgH5Call(dset, ds->path, "cannot create /static/%s", name);
  SgH5Call(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), ds->path, "cannot write /static/%s", name);
  H5Dclose(dset);
  H5Sclose(space);
  H5Tclose(type);
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetSetParamNames(SgDataset ds, PetscInt n, const char *const names[])
{
  PetscFunctionBegin;
  PetscCall(SgDatasetWriteStrings(ds, "param_names", n, names));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetCreateMDFrames(MPI_Comm comm, const char path[], PetscBool overwrite, PetscInt natoms, const PetscInt type[], PetscInt ntypes, const char *const type_map[], SgDType dtype, PetscBool has_virial, PetscInt nparams, const char *const param_names[], SgDataset *out)
{
  SgDataset ds;
  PetscInt  xyz[2] = {natoms, 3}, nine = 9, one = natoms;
  int32_t  *t32;

  PetscFunctionBegin;
  PetscCheck(dtype == SG_DTYPE_F32 || dtype == SG_DTYPE_F64, comm, PETSC_ERR_ARG_WRONG, "%s: md_frames floats are f32 or f64", path);
  PetscCheck(natoms > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s: natoms = %d", path, (int)natoms);
  for (PetscInt i = 0; i < natoms; i++)
    PetscCheck(type[i] >= 0 && type[i] < ntypes, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s: atom %d has type %d but type_map has %d names", path, (int)i, (int)type[i], (int)ntypes);
  PetscCall(SgDatasetCreate(comm, path, "md_frames", overwrite, &ds));
  PetscCall(SgDatasetDefineField(ds, "coord", dtype, 2, xyz, "angstrom", 0));
  PetscCall(SgDatasetDefineField(ds, "box", dtype, 1, &nine, "angstrom (rows are cell vectors)", 0));
  PetscCall(SgDatasetDefineField(ds, "energy", dtype, 0, NULL, "eV", 0));
  PetscCall(SgDatasetDefineField(ds, "force", dtype, 2, xyz, "eV/angstrom", 0));
  if (has_virial) PetscCall(SgDatasetDefineField(ds, "virial", dtype, 1, &nine, "eV", 0));
  if (nparams >= 0) PetscCall(SgDatasetDefineField(ds, "member", SG_DTYPE_I64, 0, NULL, "ensemble member id", 0));
  if (nparams > 0) {
    PetscCall(SgDatasetDefineField(ds, "params", SG_DTYPE_F64, 1, &nparams, "member parameters, see /static/param_names", 0));
    PetscCall(SgDatasetSetParamNames(ds, nparams, param_names));
  }
  PetscCall(PetscMalloc1(natoms, &t32));
  for (PetscInt i = 0; i < natoms; i++) t32[i] = (int32_t)type[i];
  PetscCall(SgDatasetWriteStatic(ds, "type", SG_DTYPE_I32, 1, &one, t32));
  PetscCall(PetscFree(t32));
  PetscCall(SgDatasetWriteStrings(ds, "type_map", ntypes, type_map));
  *out = ds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetSetMDFramesUnits(SgDataset ds, const char length[], const char energy[])
{
  char u[5][96];

  PetscFunctionBegin;
  PetscCheck(!strcmp(ds->kind, "md_frames"), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: units of md_frames fields, but the dataset is of kind %s", ds->path, ds->kind);
  PetscCall(PetscSNPrintf(u[0], sizeof u[0], "%s", length));
  PetscCall(PetscSNPrintf(u[1], sizeof u[1], "%s (rows are cell vectors)", length));
  PetscCall(PetscSNPrintf(u[2], sizeof u[2], "%s", energy));
  PetscCall(PetscSNPrintf(u[3], sizeof u[3], "%s/%s", energy, length));
  PetscCall(PetscSNPrintf(u[4], sizeof u[4], "%s", energy));
  for (PetscInt i = 0; i < ds->nfields; i++) {
    const char *const names[5] = {"coord", "box", "energy", "force", "virial"};
    for (int k = 0; k < 5; k++)
      if (!strcmp(ds->fields[i].name, names[k])) PetscCall(SgH5WriteAttrString(ds->path, ds->fields[i].dset, "units", u[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- open ---------------------------------------------------------------------------------- */

static PetscErrorCode DTypeOf(const char path[], const char name[], hid_t dset, SgDType *dt)
{
  hid_t       type = H5Dget_type(dset);
  H5T_class_t cls  = H5Tget_class(type);
  size_t      sz   = H5Tget_size(type);

  PetscFunctionBegin;
  H5Tclose(type);
  if (cls == H5T_FLOAT && sz == 4) *dt = SG_DTYPE_F32;
  else if (cls == H5T_FLOAT && sz == 8) *dt = SG_DTYPE_F64;
  else if (cls == H5T_INTEGER && sz == 4) *dt = SG_DTYPE_I32;
  else if (cls == H5T_INTEGER && sz == 8) *dt = SG_DTYPE_I64;
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s has an unsupported element type (class %d, %zu bytes)", path, name, (int)cls, sz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpenField(SgDataset ds, const char name[])
{
  SgField *f = &ds->fields[ds->nfields];
  hsize_t  dims[SG_DATASET_MAXDIM + 1];
  hid_t    space;
  int      rank;

  PetscFunctionBegin;
  PetscCheck(ds->nfields < MAXFIELDS, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: more than %d sample fields", ds->path, MAXFIELDS);
  PetscCheck(H5Lexists(ds->gsamples, name, H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: field '%s' is listed in sample_fields but /samples/%s is missing", ds->path, name, name);
  PetscCall(PetscMemzero(f, sizeof *f));
  PetscCall(PetscStrncpy(f->name, name, sizeof f->name));
  f->dset = H5Dopen2(ds->gsamples, name, H5P_DEFAULT);
  SgH5Call(f->dset, ds->path, "cannot open /samples/%s", name);
  ds->nfields++; /* from here Close releases it */
  PetscCall(DTypeOf(ds->path, name, f->dset, &f->dtype));
  space = H5Dget_space(f->dset);
  rank  = H5Sget_simple_extent_ndims(space);
  PetscCheck(rank >= 1 && rank <= SG_DATASET_MAXDIM + 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /samples/%s has rank %d", ds->path, name, rank);
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space);
  f->rowdim   = rank - 1;
  f->rowelems = 1;
  for (int d = 1; d < rank; d++) {
    f->rowshape[d - 1] = (PetscInt)dims[d];
    f->rowelems *= (int64_t)dims[d];
  }
  PetscCheck((int64_t)dims[0] >= ds->nsamples, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /samples/%s holds %lld rows but nsamples says %lld were committed (truncated or damaged file)", ds->path, name, (long long)dims[0], (long long)ds->nsamples);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckRow(SgDataset ds, const char name[], PetscInt rowdim, const PetscInt shape[], PetscBool isfloat)
{
  PetscInt i;

  PetscFunctionBegin;
  PetscCall(SgDatasetFindField(ds, name, &i));
  if (i < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(ds->fields[i].rowdim == rowdim, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /samples/%s has rows of rank %d, the md_frames schema says %d", ds->path, name, (int)ds->fields[i].rowdim, (int)rowdim);
  for (PetscInt d = 0; d < rowdim; d++)
    PetscCheck(ds->fields[i].rowshape[d] == shape[d], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /samples/%s row dimension %d is %d, the md_frames schema says %d", ds->path, name, (int)d, (int)ds->fields[i].rowshape[d], (int)shape[d]);
  if (isfloat) PetscCheck(ds->fields[i].dtype == SG_DTYPE_F32 || ds->fields[i].dtype == SG_DTYPE_F64, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /samples/%s is not floating point", ds->path, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ValidateMD(SgDataset ds)
{
  int64_t  natoms = 0;
  PetscInt i, xyz[2], nine = 9;

  PetscFunctionBegin;
  for (size_t k = 0; k < sizeof md_required / sizeof md_required[0]; k++) {
    PetscCall(SgDatasetFindField(ds, md_required[k], &i));
    PetscCheck(i >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: md_frames dataset lacks the required field /samples/%s", ds->path, md_required[k]);
  }
  PetscCheck(H5Lexists(ds->gstatic, "type", H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: md_frames dataset lacks the required field /static/type", ds->path);
  PetscCheck(H5Lexists(ds->gstatic, "type_map", H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: md_frames dataset lacks the required field /static/type_map", ds->path);
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &natoms, NULL));
  xyz[0] = (PetscInt)natoms;
  xyz[1] = 3;
  PetscCall(CheckRow(ds, "coord", 2, xyz, PETSC_TRUE));
  PetscCall(CheckRow(ds, "force", 2, xyz, PETSC_TRUE));
  PetscCall(CheckRow(ds, "box", 1, &nine, PETSC_TRUE));
  PetscCall(CheckRow(ds, "energy", 0, NULL, PETSC_TRUE));
  PetscCall(CheckRow(ds, "virial", 1, &nine, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetOpen_Impl(MPI_Comm comm, const char path[], SgDatasetMode mode, SgDataset *out)
{
  SgDataset      ds;
  PetscMPIInt    size;
  hid_t          fapl, attr;
  htri_t         ish5;
  int            version = -1;
  char          *kind = NULL, *list = NULL;
  PetscBool      known;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *out = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(mode == SG_DATASET_READ || size == 1, comm, PETSC_ERR_SUP, "%s: append on one rank only (got %d)", path, size);
  PetscCheck(access(path, R_OK) == 0, comm, PETSC_ERR_FILE_OPEN, "%s: cannot read the dataset file (missing or no permission)", path);
  SgH5Quiet();
  ish5 = H5Fis_hdf5(path);
  PetscCheck(ish5 > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: not an HDF5 file (no HDF5 signature: a foreign format, or the file was truncated or overwritten)", path);
  PetscCall(DatasetAlloc(comm, path, &ds));
  ds->mode = mode;
  fapl     = H5Pcreate(H5P_FILE_ACCESS);
  if (size > 1) SgH5Call(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), path, "cannot set the MPI-IO driver");
  ds->file = H5Fopen(path, mode == SG_DATASET_APPEND ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
  if (ds->file < 0) {
    char msg[512];
    SgH5LastError(msg, sizeof msg); /* before any other HDF5 call clears the error stack */
    H5Pclose(fapl);
    PetscCall(PetscFree(ds));
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "%s: HDF5 cannot open it: the file is truncated or corrupt (HDF5: %s)", path, msg);
  }
  H5Pclose(fapl);
  /* From here, errors close the file through SgDatasetClose. */
#define CHK(expr) do { ierr = (expr); if (ierr) goto fail; } while (0)
  if (H5Aexists(ds->file, "surge_dataset_version") <= 0) {
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: not a surge dataset: the root group has no surge_dataset_version attribute (a foreign HDF5 file?)", path);
    goto fail;
  }
  attr = H5Aopen(ds->file, "surge_dataset_version", H5P_DEFAULT);
  if (attr < 0 || H5Aread(attr, H5T_NATIVE_INT, &version) < 0) version = -1;
  if (attr >= 0) H5Aclose(attr);
  if (version != SG_DATASET_VERSION) {
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: dataset schema version %d is not known to this surge " SURGE_VERSION " (it reads version %d); use a matching surge or convert the file", path, version, SG_DATASET_VERSION);
    goto fail;
  }
  CHK(SgH5ReadAttrString(path, ds->file, "kind", &kind));
  CHK(KindKnown(kind, &known));
  if (!known) {
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: unknown dataset kind '%s' (this surge knows md_frames, field_snapshots)", path, kind);
    goto fail;
  }
  CHK(PetscStrncpy(ds->kind, kind, sizeof ds->kind));
  if (H5Aexists(ds->file, "nsamples") <= 0) {
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: the nsamples attribute (committed sample count) is missing", path);
    goto fail;
  }
  attr = H5Aopen(ds->file, "nsamples", H5P_DEFAULT);
  if (attr < 0 || H5Aread(attr, H5T_NATIVE_INT64, &ds->nsamples) < 0 || ds->nsamples < 0) {
    if (attr >= 0) H5Aclose(attr);
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: cannot read the nsamples attribute", path);
    goto fail;
  }
  H5Aclose(attr);
  ds->gsamples = H5Gopen2(ds->file, "samples", H5P_DEFAULT);
  ds->gstatic  = H5Gopen2(ds->file, "static", H5P_DEFAULT);
  ds->gprov    = H5Gopen2(ds->file, "provenance", H5P_DEFAULT);
  if (ds->gsamples < 0 || ds->gstatic < 0 || ds->gprov < 0) {
    ierr = PetscError(comm, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "%s: a required group (/samples, /static or /provenance) is missing", path);
    goto fail;
  }
  CHK(SgH5ReadAttrString(path, ds->file, "sample_fields", &list));
  {
    char *save = NULL, *tok = strtok_r(list, ",", &save);
    for (; tok; tok = strtok_r(NULL, ",", &save)) CHK(OpenField(ds, tok));
  }
  if (!strcmp(ds->kind, "md_frames")) CHK(ValidateMD(ds));
  PetscCall(PetscFree(kind));
  PetscCall(PetscFree(list));
  *out = ds;
  PetscFunctionReturn(PETSC_SUCCESS);
fail:
  PetscCall(PetscFree(kind));
  PetscCall(PetscFree(list));
  PetscCall(SgDatasetClose(&ds));
  return ierr;
#undef CHK
}

static PetscErrorCode SgDatasetClose_Impl(SgDataset *ds)
{
  PetscFunctionBegin;
  if (!*ds) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < (*ds)->nfields; i++)
    if ((*ds)->fields[i].dset >= 0) H5Dclose((*ds)->fields[i].dset);
  if ((*ds)->gsamples >= 0) H5Gclose((*ds)->gsamples);
  if ((*ds)->gstatic >= 0) H5Gclose((*ds)->gstatic);
  if ((*ds)->gprov >= 0) H5Gclose((*ds)->gprov);
  if ((*ds)->file >= 0 && H5Fclose((*ds)->file) < 0) {
    char msg[512], path[sizeof((*ds)->path)];
    SgH5LastError(msg, sizeof msg);
    if ((*ds)->tmp[0]) (void)SgWriteDiscard((*ds)->tmp);
    PetscCall(PetscStrncpy(path, (*ds)->path, sizeof path));
    PetscCall(PetscFree(*ds)); /* the object goes with a failed close too (it leaked before) */
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: cannot close the dataset file (HDF5: %s; disk full?)", path, msg);
  }
  if ((*ds)->tmp[0]) {
    PetscErrorCode ierr = SgWriteCommit((*ds)->tmp, (*ds)->path); /* fsync and rename the created file into place */
    PetscCall(PetscFree(*ds));
    PetscCall(ierr);
  } else PetscCall(PetscFree(*ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetPath(SgDataset ds, const char **p)
{
  PetscFunctionBegin;
  *p = ds->path;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetKind(SgDataset ds, const char **k)
{
  PetscFunctionBegin;
  *k = ds->kind;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetNumSamples(SgDataset ds, int64_t *n)
{
  PetscFunctionBegin;
  *n = ds->nsamples;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetNumFields(SgDataset ds, PetscInt *n)
{
  PetscFunctionBegin;
  *n = ds->nfields;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetFieldInfo(SgDataset ds, PetscInt i, const char **name, SgDType *dt, PetscInt *rowdim, const PetscInt **rowshape, int64_t *rowelems)
{
  PetscFunctionBegin;
  PetscCheck(i >= 0 && i < ds->nfields, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: field index %d out of [0,%d)", ds->path, (int)i, (int)ds->nfields);
  if (name) *name = ds->fields[i].name;
  if (dt) *dt = ds->fields[i].dtype;
  if (rowdim) *rowdim = ds->fields[i].rowdim;
  if (rowshape) *rowshape = ds->fields[i].rowshape;
  if (rowelems) *rowelems = ds->fields[i].rowelems;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetFindField(SgDataset ds, const char name[], PetscInt *idx)
{
  PetscFunctionBegin;
  *idx = -1;
  for (PetscInt i = 0; i < ds->nfields; i++)
    if (!strcmp(ds->fields[i].name, name)) *idx = i;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetFieldHid(SgDataset ds, PetscInt i, int64_t *hid)
{
  PetscFunctionBegin;
  PetscCheck(i >= 0 && i < ds->nfields, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: field index %d", ds->path, (int)i);
  *hid = (int64_t)ds->fields[i].dset;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- read ---------------------------------------------------------------------------------- */

/* rows [start, start+count), each restricted to the block [rstart, rstart+rcount) (NULL: whole rows) */
static PetscErrorCode SelectRows(SgDataset ds, SgField *f, int64_t start, int64_t count, const PetscInt rstart[], const PetscInt rcount[], hid_t *fspace, hid_t *mspace)
{
  hsize_t off[SG_DATASET_MAXDIM + 1] = {0}, cnt[SG_DATASET_MAXDIM + 1];

  PetscFunctionBegin;
  off[0] = (hsize_t)start;
  cnt[0] = (hsize_t)count;
  for (PetscInt d = 0; d < f->rowdim; d++) {
    off[d + 1] = rstart ? (hsize_t)rstart[d] : 0;
    cnt[d + 1] = (hsize_t)(rcount ? rcount[d] : f->rowshape[d]);
  }
  *fspace = H5Dget_space(f->dset);
  SgH5Call(*fspace, ds->path, "cannot get the space of /samples/%s", f->name);
  SgH5Call(H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, off, NULL, cnt, NULL), ds->path, "cannot select rows of /samples/%s", f->name);
  *mspace = H5Screate_simple((int)f->rowdim + 1, cnt, NULL);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows [start, start+count), each restricted to the block [rstart, rstart+rcount) (a spatial shard of
   every sample; NULL: whole rows): one hyperslab selection, read into [count][rcount...] C order. */
static PetscErrorCode SgDatasetReadFieldBlock_Impl(SgDataset ds, const char name[], int64_t start, int64_t count, const PetscInt rstart[], const PetscInt rcount[], SgDType memtype, void *buf)
{
  PetscInt i;
  hid_t    fs, ms;

  PetscFunctionBegin;
  PetscCall(SgDatasetFindField(ds, name, &i));
  PetscCheck(i >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: no per-sample field '%s'", ds->path, name);
  PetscCheck(start >= 0 && count >= 0 && start + count <= ds->nsamples, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: rows [%lld,%lld) of %s are past the %lld committed samples", ds->path, (long long)start, (long long)(start + count), name, (long long)ds->nsamples);
  for (PetscInt d = 0; rstart && d < ds->fields[i].rowdim; d++)
    PetscCheck(rstart[d] >= 0 && rcount[d] >= 1 && rstart[d] + rcount[d] <= ds->fields[i].rowshape[d], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: block [%" PetscInt_FMT ",%" PetscInt_FMT ") of row axis %" PetscInt_FMT " of /samples/%s is outside its %" PetscInt_FMT " entries", ds->path, rstart[d], rstart[d] + rcount[d], d, name, ds->fields[i].rowshape[d]);
  if (!count) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SelectRows(ds, &ds->fields[i], start, count, rstart, rcount, &fs, &ms));
  SgH5Call(H5Dread(ds->fields[i].dset, SgH5MemType(memtype), ms, fs, H5P_DEFAULT, buf), ds->path, "cannot read rows [%lld,%lld) of /samples/%s", (long long)start, (long long)(start + count), name);
  H5Sclose(fs);
  H5Sclose(ms);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetReadStatic_Impl(SgDataset ds, const char name[], SgDType memtype, int64_t *n, void *buf)
{
  hid_t   dset, space;
  hssize_t npts;

  PetscFunctionBegin;
  PetscCheck(H5Lexists(ds->gstatic, name, H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /static/%s is missing", ds->path, name);
  dset = H5Dopen2(ds->gstatic, name, H5P_DEFAULT);
  SgH5Call(dset, ds->path, "cannot open /static/%s", name);
  space = H5Dget_space(dset);
  npts  = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  if (buf) {
    PetscCheck(npts <= *n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s: /static/%s has %lld elements, buffer holds %lld", ds->path, name, (long long)npts, (long long)*n);
    SgH5Call(H5Dread(dset, SgH5MemType(memtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), ds->path, "cannot read /static/%s", name);
  }
  *n = npts;
  H5Dclose(dset);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetReadStrings_Impl(SgDataset ds, const char name[], PetscInt *n, char ***strs)
{
  hid_t    dset, space, type, mtype;
  hssize_t npts;
  size_t   w;
  char    *buf;

  PetscFunctionBegin;
  PetscCheck(H5Lexists(ds->gstatic, name, H5P_DEFAULT) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /static/%s is missing", ds->path, name);
  dset = H5Dopen2(ds->gstatic, name, H5P_DEFAULT);
  SgH5Call(dset, ds->path, "cannot open /static/%s", name);
  type = H5Dget_type(dset);
  PetscCheck(H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) <= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /static/%s is not a fixed-length string list", ds->path, name);
  w     = H5Tget_size(type);
  space = H5Dget_space(dset);
  npts  = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  PetscCall(PetscCalloc1((size_t)npts * w + 1, &buf));
  mtype = H5Tcopy(H5T_C_S1);
  H5Tset_size(mtype, w);
  H5Tset_strpad(mtype, H5T_STR_NULLPAD);
  SgH5Call(H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), ds->path, "cannot read /static/%s", name);
  H5Tclose(mtype);
  H5Tclose(type);
  H5Dclose(dset);
  PetscCall(PetscMalloc1(npts + 1, strs));
  for (hssize_t i = 0; i < npts; i++) {
    PetscCall(PetscCalloc1(w + 1, &(*strs)[i]));
    memcpy((*strs)[i], buf + (size_t)i * w, w);
  }
  (*strs)[npts] = NULL;
  *n            = (PetscInt)npts;
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetStringsFree(PetscInt n, char ***strs)
{
  PetscFunctionBegin;
  if (!*strs) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscFree((*strs)[i]));
  PetscCall(PetscFree(*strs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetGetProvenance_Impl(SgDataset ds, const char key[], char **value)
{
  PetscFunctionBegin;
  *value = NULL; /* absent (an item added after the file was written): NULL, as callers expect */
  if (H5Aexists(ds->gprov, key) > 0) PetscCall(SgH5ReadAttrString(ds->path, ds->gprov, key, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetView_Impl(SgDataset ds, PetscViewer v)
{
  char    *s;
  PetscInt n;
  char   **strs;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "surge dataset %s: schema version %d, kind %s, %lld committed samples\n", ds->path, SG_DATASET_VERSION, ds->kind, (long long)ds->nsamples));
  for (PetscInt i = 0; i < ds->nfields; i++) {
    SgField *f = &ds->fields[i];
    char     shp[128] = "";
    for (PetscInt d = 0; d < f->rowdim; d++) {
      char t[24];
      snprintf(t, sizeof t, d ? ",%d" : "%d", (int)f->rowshape[d]);
      PetscCall(PetscStrlcat(shp, t, sizeof shp));
    }
    PetscCall(SgH5ReadAttrString(ds->path, f->dset, "units", &s));
    PetscCall(PetscViewerASCIIPrintf(v, "  /samples/%-8s %s [nsamples%s%s]  %s\n", f->name, SgDTypes[f->dtype], f->rowdim ? "," : "", shp, s));
    PetscCall(PetscFree(s));
  }
  if (H5Lexists(ds->gstatic, "type_map", H5P_DEFAULT) > 0) {
    int64_t natoms = 0;
    PetscCall(SgDatasetReadStrings(ds, "type_map", &n, &strs));
    PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &natoms, NULL));
    PetscCall(PetscViewerASCIIPrintf(v, "  /static/type [%lld atoms], type_map:", (long long)natoms));
    for (PetscInt i = 0; i < n; i++) PetscCall(PetscViewerASCIIPrintf(v, " %s", strs[i]));
    PetscCall(PetscViewerASCIIPrintf(v, "\n"));
    PetscCall(SgDatasetStringsFree(n, &strs));
  }
  const char *keys[] = {"surge_version", "created", "source"};
  for (int k = 0; k < 3; k++) {
    PetscCall(SgH5ReadAttrString(ds->path, ds->gprov, keys[k], &s));
    PetscCall(PetscViewerASCIIPrintf(v, "  provenance %s: %s\n", keys[k], s));
    PetscCall(PetscFree(s));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- append -------------------------------------------------------------------------------- */

static PetscErrorCode SgDatasetAppendBegin_Impl(SgDataset ds, int64_t k)
{
  PetscFunctionBegin;
  PetscCheck(ds->mode == SG_DATASET_APPEND, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: opened read-only", ds->path);
  PetscCheck(!ds->pending, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: an append is already open", ds->path);
  PetscCheck(k > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: append of %lld rows", ds->path, (long long)k);
  PetscCheck(ds->nfields > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: no fields defined", ds->path);
  /* Resizing to exactly committed + k also discards rows a crashed append left behind. */
  for (PetscInt i = 0; i < ds->nfields; i++) {
    hsize_t dims[SG_DATASET_MAXDIM + 1];
    dims[0] = (hsize_t)(ds->nsamples + k);
    for (PetscInt d = 0; d < ds->fields[i].rowdim; d++) dims[d + 1] = (hsize_t)ds->fields[i].rowshape[d];
    SgH5Call(H5Dset_extent(ds->fields[i].dset, dims), ds->path, "cannot extend /samples/%s", ds->fields[i].name);
    ds->fields[i].written = 0;
  }
  /* The extended (still uncommitted) layout reaches the file before any row is written, so a
     crash while rows are written finds consistent metadata that still says nsamples = old. */
  SgH5Call(H5Fflush(ds->file, H5F_SCOPE_GLOBAL), ds->path, "cannot flush the extended layout");
  ds->pending = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetAppendField_Impl(SgDataset ds, const char name[], SgDType memtype, const void *data)
{
  PetscInt i;
  hid_t    fs, ms;

  PetscFunctionBegin;
  PetscCheck(ds->pending, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: SgDatasetAppendField('%s') outside SgDatasetAppendBegin/Commit", ds->path, name);
  PetscCall(SgDatasetFindField(ds, name, &i));
  PetscCheck(i >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: no per-sample field '%s'", ds->path, name);
  PetscCall(SelectRows(ds, &ds->fields[i], ds->nsamples, ds->pending, NULL, NULL, &fs, &ms));
  SgH5Call(H5Dwrite(ds->fields[i].dset, SgH5MemType(memtype), ms, fs, H5P_DEFAULT, data), ds->path, "cannot write /samples/%s", name);
  H5Sclose(fs);
  H5Sclose(ms);
  ds->fields[i].written = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SgDatasetAppendCommit_Impl(SgDataset ds)
{
  PetscFunctionBegin;
  PetscCheck(ds->pending, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: no append open", ds->path);
  for (PetscInt i = 0; i < ds->nfields; i++)
    PetscCheck(ds->fields[i].written, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: append of %lld rows leaves field '%s' unwritten", ds->path, (long long)ds->pending, ds->fields[i].name);
  /* Order matters: data reach the file before the count that makes them visible. */
  SgH5Call(H5Fflush(ds->file, H5F_SCOPE_GLOBAL), ds->path, "cannot flush appended rows");
  PetscCall(WriteNSamples(ds, ds->nsamples + ds->pending));
  SgH5Call(H5Fflush(ds->file, H5F_SCOPE_GLOBAL), ds->path, "cannot flush the committed count");
  ds->nsamples += ds->pending;
  ds->pending = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- public entry points: each holds the process-wide HDF5 lock (see SgHDF5Lock) ---------- */
PetscErrorCode SgDatasetCreate(MPI_Comm comm, const char path[], const char kind[], PetscBool overwrite, SgDataset *out)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetCreate_Impl(comm, path, kind, SG_FILE_DATASET, overwrite, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetCreateAs(MPI_Comm comm, const char path[], const char kind[], const char filekind[], PetscBool overwrite, SgDataset *out)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetCreate_Impl(comm, path, kind, filekind, overwrite, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetCheckNotOverwritten(MPI_Comm comm, const char option[], const char file[])
{
  PetscMPIInt rank;
  int         is = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank && !access(file, F_OK)) {
    hid_t f = -1;
    H5E_BEGIN_TRY
    {
      if (H5Fis_hdf5(file) > 0) f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
      if (f >= 0) is = H5Aexists(f, "surge_dataset_version") > 0;
      if (f >= 0) H5Fclose(f);
    }
    H5E_END_TRY
  }
  PetscCallMPI(MPI_Bcast(&is, 1, MPI_INT, 0, comm));
  PetscCheck(!is, comm, PETSC_ERR_USER_INPUT, "%s would overwrite %s, a surge dataset (training data?): choose another output name", option, file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetSetProvenance(SgDataset ds, const char deck[], const char source[])
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetSetProvenance_Impl(ds, deck, source));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetSetProvenanceItem(SgDataset ds, const char key[], const char value[])
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetSetProvenanceItem_Impl(ds, key, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetDefineField(SgDataset ds, const char name[], SgDType dtype, PetscInt rowdim, const PetscInt rowshape[], const char units[], PetscInt chunk_rows)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetDefineField_Impl(ds, name, dtype, rowdim, rowshape, units, chunk_rows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetWriteStatic(SgDataset ds, const char name[], SgDType dtype, PetscInt ndim, const PetscInt shape[], const void *data)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetWriteStatic_Impl(ds, name, dtype, ndim, shape, data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetWriteStrings(SgDataset ds, const char name[], PetscInt n, const char *const strs[])
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetWriteStrings_Impl(ds, name, n, strs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetOpen(MPI_Comm comm, const char path[], SgDatasetMode mode, SgDataset *out)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetOpen_Impl(comm, path, mode, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Continue a committed dataset in a staged copy (one rank): PATH.tmp.PID, a byte copy of PATH, opened
   for append; SgDatasetClose commits it over PATH, SgDatasetFinish hands it to a set commit. PATH is
   never opened for writing: a crash or a full disk leaves it as committed. */
static PetscErrorCode SgDatasetOpenStaged_Impl(MPI_Comm comm, const char path[], SgDataset *out)
{
  char           tmp[PETSC_MAX_PATH_LEN + 32];
  int            err;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(SgWriteTempName(path, tmp, sizeof tmp));
  err = SgWriteCopyErrno(path, tmp); /* removes tmp on failure */
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "%s: cannot copy it to %s to continue it (%s%s): the file is unchanged", path, tmp, strerror(err), err == ENOSPC ? ", disk full: free space and run again" : "");
  ierr = SgDatasetOpen_Impl(comm, tmp, SG_DATASET_APPEND, out);
  if (ierr) {
    (void)SgWriteDiscard(tmp);
    PetscCall(ierr);
  }
  PetscCall(PetscStrncpy((*out)->path, path, sizeof (*out)->path));
  PetscCall(PetscStrncpy((*out)->tmp, tmp, sizeof (*out)->tmp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Close without the commit: the temporary's names for a set commit ("" when nothing is staged). */
static PetscErrorCode SgDatasetFinish_Impl(SgDataset *ds, char tmp[], char path[], size_t len)
{
  char           t[PETSC_MAX_PATH_LEN + 32];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  tmp[0] = path[0] = 0;
  if (!*ds) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(t, (*ds)->tmp, sizeof t));
  PetscCall(PetscStrncpy(path, (*ds)->path, len));
  (*ds)->tmp[0] = 0; /* SgDatasetClose_Impl: close only */
  ierr          = SgDatasetClose_Impl(ds);
  if (ierr && t[0]) (void)SgWriteDiscard(t);
  PetscCall(ierr);
  PetscCall(PetscStrncpy(tmp, t, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetOpenStaged(MPI_Comm comm, const char path[], SgDataset *out)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetOpenStaged_Impl(comm, path, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetFinish(SgDataset *ds, char tmp[], char path[], size_t len)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetFinish_Impl(ds, tmp, path, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetClose(SgDataset *ds)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetClose_Impl(ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetReadField(SgDataset ds, const char name[], int64_t start, int64_t count, SgDType memtype, void *buf)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetReadFieldBlock_Impl(ds, name, start, count, NULL, NULL, memtype, buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetReadFieldBlock(SgDataset ds, const char name[], int64_t start, int64_t count, const PetscInt rstart[], const PetscInt rcount[], SgDType memtype, void *buf)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetReadFieldBlock_Impl(ds, name, start, count, rstart, rcount, memtype, buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetReadStatic(SgDataset ds, const char name[], SgDType memtype, int64_t *n, void *buf)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetReadStatic_Impl(ds, name, memtype, n, buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetReadStrings(SgDataset ds, const char name[], PetscInt *n, char ***strs)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetReadStrings_Impl(ds, name, n, strs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetGetProvenance(SgDataset ds, const char key[], char **value)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetGetProvenance_Impl(ds, key, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetView(SgDataset ds, PetscViewer v)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetView_Impl(ds, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetAppendBegin(SgDataset ds, int64_t k)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetAppendBegin_Impl(ds, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetAppendField(SgDataset ds, const char name[], SgDType memtype, const void *data)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetAppendField_Impl(ds, name, memtype, data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDatasetAppendCommit(SgDataset ds)
{
  PetscFunctionBegin;
  SgH5Locked(SgDatasetAppendCommit_Impl(ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

