/* H5MD trajectory writer: see include/sgh5md.h for the file layout.  Time-dependent elements are
   extendible chunked datasets, one chunk per frame; step/time are written by rank 0, values by
   every rank for its id block, all collectively (MPI-IO). */
#include <hdf5.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "sgh5md.h"
#include "sgcompat.h"
#include "sgwrite.h"
#include "../h5/h5util.h" /* checked HDF5 calls */

struct _n_SgH5MD {
  MPI_Comm    comm;
  PetscMPIInt rank;
  hid_t       file, dxpl;
  PetscInt    N, step;
  PetscReal   time;
  char        lunit[32], tunit[32];
  char        path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 32]; /* the trajectory and its temporary */
  hid_t       fapl;
  /* a member of the run's set: FILE.old.tmp, a hard link to the file of this run's previous commit,
     continued after the next commit by appending that interval's frames (h5md_catchup.c) */
  char      old[PETSC_MAX_PATH_LEN + 32];
  PetscBool have_prev, kept;
};

static PetscErrorCode AttrString(hid_t obj, const char name[], const char value[])
{
  hid_t t, s, a;
  PetscFunctionBegin;
  SgH5Assign(t, H5Tcopy(H5T_C_S1));
  SgCallH5(H5Tset_size(t, strlen(value) + 1));
  SgH5Assign(s, H5Screate(H5S_SCALAR));
  SgH5Assign(a, H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT));
  SgCallH5(H5Awrite(a, t, value));
  SgCallH5(H5Aclose(a));
  SgCallH5(H5Sclose(s));
  SgCallH5(H5Tclose(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AttrInts(hid_t obj, const char name[], hsize_t n, const int v[])
{
  hid_t s, a;
  PetscFunctionBegin;
  SgH5Assign(s, H5Screate_simple(1, &n, NULL));
  SgH5Assign(a, H5Acreate2(obj, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT));
  SgCallH5(H5Awrite(a, H5T_NATIVE_INT, v));
  SgCallH5(H5Aclose(a));
  SgCallH5(H5Sclose(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* H5Lexists fails (noisily) when an intermediate group is missing: test each prefix in turn. */
static htri_t PathExists(hid_t loc, const char path[])
{
  char buf[256];
  size_t n = strlen(path);
  if (n >= sizeof buf) return -1;
  for (size_t i = 0; i <= n; i++) {
    if (path[i] == '/' || path[i] == 0) {
      htri_t e;
      memcpy(buf, path, i);
      buf[i] = 0;
      if (!i) continue;
      e = H5Lexists(loc, buf, H5P_DEFAULT);
      if (e <= 0) return e;
    }
  }
  return 1;
}

static PetscErrorCode Group(hid_t loc, const char path[], hid_t *g)
{
  PetscFunctionBegin;
  if (PathExists(loc, path) > 0) SgH5Assign(*g, H5Gopen2(loc, path, H5P_DEFAULT));
  else {
    hid_t lcpl;
    SgH5Assign(lcpl, H5Pcreate(H5P_LINK_CREATE));
    SgCallH5(H5Pset_create_intermediate_group(lcpl, 1));
    SgH5Assign(*g, H5Gcreate2(loc, path, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    SgCallH5(H5Pclose(lcpl));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDCreate(MPI_Comm comm, const char file[], PetscInt N, const char lunit[], const char tunit[], PetscBool append, SgH5MD *hp)
{
  SgH5MD h;
  hid_t  fapl, g;
  int    exists = 0;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  h->comm = comm;
  h->N    = N;
  PetscCallMPI(MPI_Comm_rank(comm, &h->rank));
  PetscCall(PetscStrncpy(h->lunit, lunit, sizeof h->lunit));
  PetscCall(PetscStrncpy(h->tunit, tunit, sizeof h->tunit));
  SgH5Assign(fapl, H5Pcreate(H5P_FILE_ACCESS));
  SgCallH5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
  PetscCall(PetscStrncpy(h->path, file, sizeof h->path));
  h->fapl = fapl;
  /* through the write path: PATH.tmp (a copy of the earlier trajectory when continuing it), renamed
     over PATH by SgH5MDCommit or, joined to a run's set (SgH5MDJoinRunSet), with the set */
  { /* a refusal (or a failed copy/create) frees what was made so far: the caller may go on (a test, an ensemble) */
    PetscErrorCode ierr = SgH5StagedOpen(comm, "-md_traj_file", file, SG_FILE_TRAJECTORY, append, fapl, &h->file, h->tmp, sizeof h->tmp);
    if (ierr) {
      (void)H5Pclose(fapl);
      PetscCall(PetscFree(h));
      PetscCall(ierr);
    }
  }
  exists = H5Lexists(h->file, "/h5md", H5P_DEFAULT) > 0;
  if (!exists) {
    {
      int ver[2] = {1, 1}, dim = 3;
      hid_t a;
      PetscCall(Group(h->file, "h5md", &g));
      PetscCall(AttrInts(g, "version", 2, ver));
      PetscCall(Group(g, "author", &a));
      PetscCall(AttrString(a, "name", "surge"));
      SgCallH5(H5Gclose(a));
      PetscCall(Group(g, "creator", &a));
      PetscCall(AttrString(a, "name", "surge md"));
      PetscCall(AttrString(a, "version", "0.1.0"));
      SgCallH5(H5Gclose(a));
      SgCallH5(H5Gclose(g));
      PetscCall(Group(h->file, "particles/all/box", &g));
      PetscCall(AttrInts(g, "dimension", 1, &dim));
      {
        hid_t t, s, at;
        hsize_t n = 3;
        const char *bd[3] = {"periodic", "periodic", "periodic"};
        SgH5Assign(t, H5Tcopy(H5T_C_S1));
        SgCallH5(H5Tset_size(t, H5T_VARIABLE));
        SgH5Assign(s, H5Screate_simple(1, &n, NULL));
        SgH5Assign(at, H5Acreate2(g, "boundary", t, s, H5P_DEFAULT, H5P_DEFAULT));
        SgCallH5(H5Awrite(at, t, bd));
        SgCallH5(H5Aclose(at));
        SgCallH5(H5Sclose(s));
        SgCallH5(H5Tclose(t));
      }
      SgCallH5(H5Gclose(g));
    }
  }
  SgH5Assign(h->dxpl, H5Pcreate(H5P_DATASET_XFER));
  SgCallH5(H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE));
  *hp = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Write rows [off, off+cnt) of a fixed [N] dataset. */
static PetscErrorCode WriteFixed(SgH5MD h, const char path[], hid_t ftype, hid_t mtype, PetscInt off, PetscInt cnt, const void *buf)
{
  hid_t   d, fs, ms;
  hsize_t n = (hsize_t)h->N, o = (hsize_t)off, c = (hsize_t)cnt;
  PetscFunctionBegin;
  SgH5Assign(fs, H5Screate_simple(1, &n, NULL));
  SgH5Assign(d, H5Dcreate2(h->file, path, ftype, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  SgH5Assign(ms, H5Screate_simple(1, &c, NULL));
  if (cnt) SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &o, NULL, &c, NULL));
  else {
    SgCallH5(H5Sselect_none(fs));
    SgCallH5(H5Sselect_none(ms));
  }
  SgCallH5(H5Dwrite(d, mtype, ms, fs, h->dxpl, buf));
  SgCallH5(H5Sclose(ms));
  SgCallH5(H5Sclose(fs));
  SgCallH5(H5Dclose(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDWriteSpecies(SgH5MD h, PetscInt off, PetscInt cnt, const PetscInt sp[], PetscInt ntypes, const char (*names)[16], const PetscReal mt[])
{
  int    *isp;
  double *m;
  hid_t   g;
  char    all[16 * 17] = "";

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(cnt + 1, &isp, cnt + 1, &m));
  for (PetscInt i = 0; i < cnt; i++) {
    isp[i] = (int)sp[i];
    m[i]   = mt[sp[i]];
  }
  PetscCall(WriteFixed(h, "particles/all/species", H5T_STD_I32LE, H5T_NATIVE_INT, off, cnt, isp));
  PetscCall(WriteFixed(h, "particles/all/mass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, off, cnt, m));
  PetscCall(PetscFree2(isp, m));
  for (PetscInt t = 0; t < ntypes; t++) {
    if (t) PetscCall(PetscStrlcat(all, ",", sizeof all));
    PetscCall(PetscStrlcat(all, names[t], sizeof all));
  }
  PetscCall(Group(h->file, "parameters", &g));
  PetscCall(AttrString(g, "species_names", all));
  SgCallH5(H5Gclose(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Open (or create) the time-dependent H5MD element at path -- value [F, shape...] (vrank dimensions,
   the per-frame shape has vrank - 1), step [F], time [F] -- extend it by one frame, write step and
   time (rank 0), and return the value dataset and the new frame index. Particle data use frames of
   [N][3] chunked a frame at a time; observables [n] or scalars, 64 frames a chunk. */
static PetscErrorCode AppendFrame(SgH5MD h, const char path[], int vrank, const hsize_t shape[], hsize_t chunk_frames, hid_t ftype, const char unit[], hid_t *dval, hsize_t *frame)
{
  hid_t   g, ds, dt, dv;
  char    p[256];
  hsize_t one = 1;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(p, sizeof p, "%s/value", path));
  if (PathExists(h->file, p) > 0) {
    SgH5Assign(g, H5Gopen2(h->file, path, H5P_DEFAULT));
    SgH5Assign(ds, H5Dopen2(g, "step", H5P_DEFAULT));
    SgH5Assign(dt, H5Dopen2(g, "time", H5P_DEFAULT));
    SgH5Assign(dv, H5Dopen2(g, "value", H5P_DEFAULT));
  } else {
    hsize_t cur1 = 0, max1 = H5S_UNLIMITED, ch1 = 64, cur[3] = {0}, max[3] = {H5S_UNLIMITED}, ch[3] = {chunk_frames};
    hid_t   s, pl;
    for (int k = 1; k < vrank; k++) cur[k] = max[k] = ch[k] = shape[k - 1];
    PetscCall(Group(h->file, path, &g));
    SgH5Assign(pl, H5Pcreate(H5P_DATASET_CREATE));
    SgCallH5(H5Pset_chunk(pl, 1, &ch1));
    SgH5Assign(s, H5Screate_simple(1, &cur1, &max1));
    SgH5Assign(ds, H5Dcreate2(g, "step", H5T_STD_I64LE, s, H5P_DEFAULT, pl, H5P_DEFAULT));
    SgH5Assign(dt, H5Dcreate2(g, "time", H5T_IEEE_F64LE, s, H5P_DEFAULT, pl, H5P_DEFAULT));
    SgCallH5(H5Sclose(s));
    SgCallH5(H5Pclose(pl));
    SgH5Assign(pl, H5Pcreate(H5P_DATASET_CREATE));
    SgCallH5(H5Pset_chunk(pl, vrank, ch));
    SgH5Assign(s, H5Screate_simple(vrank, cur, max));
    SgH5Assign(dv, H5Dcreate2(g, "value", ftype, s, H5P_DEFAULT, pl, H5P_DEFAULT));
    SgCallH5(H5Sclose(s));
    SgCallH5(H5Pclose(pl));
    if (unit) PetscCall(AttrString(dv, "unit", unit));
    PetscCall(AttrString(dt, "unit", h->tunit));
  }
  {
    hid_t     fs, ms;
    hsize_t   n, o, cur[3];
    long long st = h->step;
    double    tm = h->time;
    SgH5Assign(fs, H5Dget_space(ds));
    SgCallH5(H5Sget_simple_extent_dims(fs, &n, NULL));
    SgCallH5(H5Sclose(fs));
    *frame = n;
    n++;
    SgCallH5(H5Dset_extent(ds, &n));
    SgCallH5(H5Dset_extent(dt, &n));
    o = n - 1;
    for (int q = 0; q < 2; q++) {
      hid_t d = q ? dt : ds;
      SgH5Assign(fs, H5Dget_space(d));
      SgH5Assign(ms, H5Screate_simple(1, &one, NULL));
      if (!h->rank) SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &o, NULL, &one, NULL));
      else {
        SgCallH5(H5Sselect_none(fs));
        SgCallH5(H5Sselect_none(ms));
      }
      SgCallH5(H5Dwrite(d, q ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG, ms, fs, h->dxpl, q ? (const void *)&tm : (const void *)&st));
      SgCallH5(H5Sclose(ms));
      SgCallH5(H5Sclose(fs));
    }
    SgH5Assign(fs, H5Dget_space(dv));
    SgCallH5(H5Sget_simple_extent_dims(fs, cur, NULL));
    SgCallH5(H5Sclose(fs));
    cur[0] = n;
    SgCallH5(H5Dset_extent(dv, cur));
  }
  SgCallH5(H5Dclose(ds));
  SgCallH5(H5Dclose(dt));
  SgCallH5(H5Gclose(g));
  *dval = dv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDBeginFrame(SgH5MD h, PetscInt step, PetscReal time, const PetscReal box[9])
{
  hid_t   dv, fs, ms;
  hsize_t fr, o[3], c[3] = {1, 3, 3};

  PetscFunctionBegin;
  h->step = step;
  h->time = time;
  PetscCall(AppendFrame(h, "particles/all/box/edges", 3, (const hsize_t[]){3, 3}, 1, H5T_IEEE_F64LE, h->lunit, &dv, &fr));
  o[0] = fr; o[1] = 0; o[2] = 0;
  SgH5Assign(fs, H5Dget_space(dv));
  SgH5Assign(ms, H5Screate_simple(3, c, NULL));
  if (!h->rank) SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, o, NULL, c, NULL));
  else {
    SgCallH5(H5Sselect_none(fs));
    SgCallH5(H5Sselect_none(ms));
  }
  SgCallH5(H5Dwrite(dv, H5T_NATIVE_DOUBLE, ms, fs, h->dxpl, box));
  SgCallH5(H5Sclose(ms));
  SgCallH5(H5Sclose(fs));
  SgCallH5(H5Dclose(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDWriteFrameData(SgH5MD h, const char name[], PetscInt off, PetscInt cnt, const PetscReal data[])
{
  hid_t     dv, fs, ms;
  hsize_t   fr, o[3], c[3] = {1, (hsize_t)cnt, 3};
  char      path[128];
  PetscBool isimg;
  int      *ibuf = NULL;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(name, "image", &isimg));
  PetscCall(PetscSNPrintf(path, sizeof path, "particles/all/%s", name));
  PetscCall(AppendFrame(h, path, 3, (const hsize_t[]){(hsize_t)h->N, 3}, 1, isimg ? H5T_STD_I32LE : H5T_IEEE_F64LE, isimg ? NULL : (!strcmp(name, "position") ? h->lunit : NULL), &dv, &fr));
  o[0] = fr; o[1] = (hsize_t)off; o[2] = 0;
  SgH5Assign(fs, H5Dget_space(dv));
  SgH5Assign(ms, H5Screate_simple(3, c, NULL));
  if (cnt) SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, o, NULL, c, NULL));
  else {
    SgCallH5(H5Sselect_none(fs));
    SgCallH5(H5Sselect_none(ms));
  }
  if (isimg) {
    PetscCall(PetscMalloc1(3 * cnt + 1, &ibuf));
    for (PetscInt i = 0; i < 3 * cnt; i++) ibuf[i] = (int)data[i];
    SgCallH5(H5Dwrite(dv, H5T_NATIVE_INT, ms, fs, h->dxpl, ibuf));
    PetscCall(PetscFree(ibuf));
  } else SgCallH5(H5Dwrite(dv, H5T_NATIVE_DOUBLE, ms, fs, h->dxpl, data));
  SgCallH5(H5Sclose(ms));
  SgCallH5(H5Sclose(fs));
  SgCallH5(H5Dclose(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDWriteObservable(SgH5MD h, const char name[], PetscInt n, const PetscReal value[], const char unit[])
{
  hid_t   dv = -1, fs, ms;
  hsize_t fr = 0, o[2], c[2] = {1, (hsize_t)n};
  char    path[128];
  int     rank = n > 1 ? 2 : 1;

  PetscFunctionBegin;
  PetscCheck(n >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "H5MD observable %s: %" PetscInt_FMT " values", name, n);
  PetscCall(PetscSNPrintf(path, sizeof path, "observables/%s", name));
  PetscCall(AppendFrame(h, path, rank, (const hsize_t[]){(hsize_t)n}, 64, H5T_IEEE_F64LE, unit, &dv, &fr));
  o[0] = fr;
  o[1] = 0;
  SgH5Assign(fs, H5Dget_space(dv));
  SgH5Assign(ms, H5Screate_simple(rank, c, NULL));
  if (!h->rank) SgCallH5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, o, NULL, c, NULL));
  else {
    SgCallH5(H5Sselect_none(fs));
    SgCallH5(H5Sselect_none(ms));
  }
  SgCallH5(H5Dwrite(dv, H5T_NATIVE_DOUBLE, ms, fs, h->dxpl, value));
  SgCallH5(H5Sclose(ms));
  SgCallH5(H5Sclose(fs));
  SgCallH5(H5Dclose(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDEndFrame(SgH5MD h)
{
  PetscFunctionBegin;
  SgCallH5(H5Fflush(h->file, H5F_SCOPE_GLOBAL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDTruncate(SgH5MD h, PetscInt laststep)
{
  const char *elems[] = {"particles/all/box/edges", "particles/all/position", "particles/all/velocity", "particles/all/force", "particles/all/image", "observables/potential_energy", "observables/virial"};

  PetscFunctionBegin;
  for (size_t e = 0; e < sizeof(elems) / sizeof(elems[0]); e++) {
    hid_t      g, ds, fs;
    hsize_t    n, keep = 0, dims[3];
    long long *st;
    if (PathExists(h->file, elems[e]) <= 0) continue;
    SgH5Assign(g, H5Gopen2(h->file, elems[e], H5P_DEFAULT));
    SgH5Assign(ds, H5Dopen2(g, "step", H5P_DEFAULT));
    SgH5Assign(fs, H5Dget_space(ds));
    SgCallH5(H5Sget_simple_extent_dims(fs, &n, NULL));
    SgCallH5(H5Sclose(fs));
    PetscCall(PetscMalloc1(n + 1, &st));
    SgCallH5(H5Dread(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, st));
    while (keep < n && st[keep] <= laststep) keep++;
    PetscCall(PetscFree(st));
    SgCallH5(H5Dset_extent(ds, &keep));
    SgCallH5(H5Dclose(ds));
    SgH5Assign(ds, H5Dopen2(g, "time", H5P_DEFAULT));
    SgCallH5(H5Dset_extent(ds, &keep));
    SgCallH5(H5Dclose(ds));
    SgH5Assign(ds, H5Dopen2(g, "value", H5P_DEFAULT));
    SgH5Assign(fs, H5Dget_space(ds));
    SgCallH5(H5Sget_simple_extent_dims(fs, dims, NULL));
    SgCallH5(H5Sclose(fs));
    dims[0] = keep;
    SgCallH5(H5Dset_extent(ds, dims));
    SgCallH5(H5Dclose(ds));
    SgCallH5(H5Gclose(g));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDCommit(SgH5MD h, PetscBool reopen)
{
  PetscFunctionBegin;
  SgCallH5(H5Pclose(h->dxpl));
  h->dxpl = -1;
  PetscCall(SgH5StagedCommit(h->comm, &h->file, h->tmp, h->path));
  if (reopen) {
    PetscCall(SgH5StagedOpen(h->comm, "-md_traj_file", h->path, SG_FILE_TRAJECTORY, PETSC_TRUE, h->fapl, &h->file, h->tmp, sizeof h->tmp));
    SgH5Assign(h->dxpl, H5Pcreate(H5P_DATASET_XFER));
    SgCallH5(H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SURGE_TEST_CATCHUP_READER=N: the N-th commit of this process's trajectory waits (30 s at most)
   until another process holds the committed file as a reader (flock), so that a test's reader is
   in place when the commit decides whether to keep that file for the catch-up. */
static void WaitForTestReader(const char path[])
{
  static int  count;
  const char *v = getenv("SURGE_TEST_CATCHUP_READER");

  if (!v || atoi(v) != ++count) return;
  for (int i = 0; i < 3000 && SgWriteNoReader(path); i++) (void)usleep(10000);
}

/* A member of the run's set (sgwrite.h SgWriteMemberRegister): closed at the run's commit and
   renamed with its set, then continued from the committed file. */
static PetscErrorCode MemberClose(void *ctx, char tmp[], char path[], size_t len)
{
  SgH5MD h   = (SgH5MD)ctx;
  int    err = 0, any = 0;

  PetscFunctionBegin;
  if (h->file < 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->dxpl >= 0) (void)H5Pclose(h->dxpl);
  h->dxpl = -1;
  if (H5Fclose(h->file) < 0) err = EIO; /* HDF5 writes its last metadata at close */
  h->file = -1;
  PetscCallMPI(MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, h->comm));
  if (any && !h->rank) PetscCall(SgWriteDiscard(h->tmp));
  PetscCheck(!any, h->comm, PETSC_ERR_FILE_OPEN, "cannot write %s (disk full?): the earlier file (if any) is unchanged", h->path);
  if (h->rank) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(tmp, h->tmp, len));
  PetscCall(PetscStrncpy(path, h->path, len));
  /* FILE as this run committed it last: kept under FILE.old.tmp for MemberResume, unless a reader
     holds it open (it must not change under the reader) */
  PetscCall(PetscSNPrintf(h->old, sizeof h->old, "%s.old.tmp", h->path));
  PetscCall(SgWriteDiscard(h->old));
  WaitForTestReader(h->path);
  h->kept = h->have_prev && !link(h->path, h->old) ? PETSC_TRUE : PETSC_FALSE;
  if (h->kept && !SgWriteNoReader(h->old)) {
    h->kept = PETSC_FALSE;
    PetscCall(SgWriteDiscard(h->old));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the run's commit: the temporary again holds what FILE holds. The previous commit's file
   (FILE.old.tmp, no longer FILE) gets the frames this commit added and becomes the temporary; the
   whole file is copied only where there is no such file (the run's first commit, a reader held it)
   or the catch-up fails. FILE is only read either way. */
static PetscErrorCode MemberResume(void *ctx)
{
  SgH5MD h     = (SgH5MD)ctx;
  int    ready = 0;

  PetscFunctionBegin;
  if (!h->rank && h->kept) {
    if (!SgH5MDCatchUp(h->path, h->old) && !rename(h->old, h->tmp)) ready = 1;
    else PetscCall(SgWriteDiscard(h->old));
  }
  h->kept = PETSC_FALSE;
  PetscCallMPI(MPI_Bcast(&ready, 1, MPI_INT, 0, h->comm));
  if (ready) {
    SgH5Quiet();
    h->file = H5Fopen(h->tmp, H5F_ACC_RDWR, h->fapl);
    ready   = h->file >= 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, h->comm));
    if (!ready && h->file >= 0) (void)H5Fclose(h->file);
    if (!ready) h->file = -1;
  }
  if (!ready) PetscCall(SgH5StagedOpen(h->comm, "-md_traj_file", h->path, SG_FILE_TRAJECTORY, PETSC_TRUE, h->fapl, &h->file, h->tmp, sizeof h->tmp));
  h->have_prev = PETSC_TRUE;
  SgH5Assign(h->dxpl, H5Pcreate(H5P_DATASET_XFER));
  SgCallH5(H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDJoinRunSet(SgH5MD h)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(h->old, sizeof h->old, "%s.old.tmp", h->path));
  if (!h->rank) PetscCall(SgWriteDiscard(h->old)); /* one a run killed inside its commit left */
  PetscCall(SgWriteMemberRegister(h, MemberClose, MemberResume));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDDestroy(SgH5MD *hp)
{
  SgH5MD h = *hp;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  *hp = NULL;
  SgWriteMemberUnregister(h);
  if (h->kept) (void)SgWriteDiscard(h->old); /* a commit that failed: the kept link goes */
  if (h->dxpl >= 0) (void)H5Pclose(h->dxpl);
  (void)H5Pclose(h->fapl);
  SgH5StagedDiscard(&h->file, h->tmp); /* not committed: an error ended the run, PATH keeps the last commit */
  PetscCall(PetscFree(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}
