/* Continuing a committed trajectory without copying it whole (h5md.c MemberResume, docs/run.md).

   After the run's commit k the trajectory goes on in a temporary that must hold what commit k holds.
   A byte copy of the committed file costs its whole size at every commit (the square of the run's
   length in all). Instead the file of commit k-1, kept by a hard link when commit k began (FILE.old.tmp:
   no longer the committed file once commit k renamed the new one over FILE), is brought up to date
   here: the frames commit k added -- rows [n(k-1), n(k)) of every time-dependent element's step, time
   and value -- are read from FILE and appended. Only the interval's frames are copied. FILE itself is
   only read, so a crash or a full disk during this leaves it whole; a failure here (or an element
   commit k-1 did not have) returns an error and the caller falls back to the byte copy. */
#include <hdf5.h>
#include <stdlib.h>
#include "sgh5md.h"
#include "sgwrite.h"

static int CopyRows(hid_t src, hid_t dst, const char name[], hsize_t n0, hsize_t n1)
{
  hid_t   ds = -1, dd = -1, fs = -1, ms = -1, ft = -1, mt = -1;
  hsize_t dims[4], start[4] = {0}, count[4];
  int     rank, err = -1;
  size_t  row = 1;
  void   *buf = NULL;

  if ((ds = H5Dopen2(src, name, H5P_DEFAULT)) < 0 || (dd = H5Dopen2(dst, name, H5P_DEFAULT)) < 0) goto done;
  if ((fs = H5Dget_space(ds)) < 0 || (rank = H5Sget_simple_extent_ndims(fs)) < 1 || rank > 4) goto done;
  if (H5Sget_simple_extent_dims(fs, dims, NULL) < 0 || dims[0] != n1) goto done;
  if ((ft = H5Dget_type(ds)) < 0 || (mt = H5Tget_native_type(ft, H5T_DIR_ASCEND)) < 0) goto done;
  for (int k = 1; k < rank; k++) row *= dims[k];
  row *= H5Tget_size(mt);
  start[0] = n0;
  count[0] = n1 - n0;
  for (int k = 1; k < rank; k++) count[k] = dims[k];
  if (!(buf = malloc(row * count[0] + 1))) goto done;
  if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) goto done;
  if ((ms = H5Screate_simple(rank, count, NULL)) < 0 || H5Dread(ds, mt, ms, fs, H5P_DEFAULT, buf) < 0) goto done;
  (void)H5Sclose(fs);
  fs = -1;
  if (H5Dset_extent(dd, dims) < 0 || (fs = H5Dget_space(dd)) < 0) goto done;
  if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 || H5Dwrite(dd, mt, ms, fs, H5P_DEFAULT, buf) < 0) goto done;
  err = 0;
done:
  free(buf);
  if (ms >= 0) (void)H5Sclose(ms);
  if (fs >= 0) (void)H5Sclose(fs);
  if (mt >= 0) (void)H5Tclose(mt);
  if (ft >= 0) (void)H5Tclose(ft);
  if (dd >= 0) (void)H5Dclose(dd);
  if (ds >= 0) (void)H5Dclose(ds);
  return err;
}

/* The frame count of an element's step dataset (-1: none or unreadable). */
static long long Frames(hid_t f, const char step[])
{
  hid_t     d, s;
  hsize_t   n;
  long long r = -1;

  if (H5Lexists(f, step, H5P_DEFAULT) <= 0 || (d = H5Dopen2(f, step, H5P_DEFAULT)) < 0) return -1;
  if ((s = H5Dget_space(d)) >= 0) {
    if (H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1) r = (long long)n;
    (void)H5Sclose(s);
  }
  (void)H5Dclose(d);
  return r;
}

int SgH5MDCatchUp(const char committed[], const char older[])
{
  const char *elems[] = {"particles/all/box/edges", "particles/all/position", "particles/all/velocity", "particles/all/force", "particles/all/image", "observables/potential_energy", "observables/virial"};
  const char *parts[] = {"step", "time", "value"};
  hid_t       src, dst;
  int         err = 0, fault = SgWriteTestCatchUpFault(), done = 0;

  H5E_BEGIN_TRY
  {
    src = H5Fopen(committed, H5F_ACC_RDONLY, H5P_DEFAULT);
    dst = src < 0 ? -1 : H5Fopen(older, H5F_ACC_RDWR, H5P_DEFAULT);
    if (src < 0 || dst < 0) err = -1;
    for (size_t e = 0; e < sizeof elems / sizeof elems[0] && !err; e++) {
      char      name[128];
      long long n0, n1;
      (void)snprintf(name, sizeof name, "%s/step", elems[e]);
      n1 = Frames(src, name);
      n0 = Frames(dst, name);
      if (n1 < 0 && n0 < 0) continue;            /* an element neither file has (no velocities written) */
      if (n1 < 0 || n0 < 0 || n0 > n1) err = -1; /* an element new since commit k-1: the byte copy */
      for (int p = 0; p < 3 && !err && n1 > n0; p++) {
        (void)snprintf(name, sizeof name, "%s/%s", elems[e], parts[p]);
        err = CopyRows(src, dst, name, (hsize_t)n0, (hsize_t)n1);
      }
      if (!err && fault && ++done == 1) err = -1; /* a test's fault: after the first element, the older file half appended */
    }
    if (dst >= 0 && H5Fclose(dst) < 0) err = -1; /* HDF5 writes its last metadata at close */
    if (src >= 0) (void)H5Fclose(src);
  }
  H5E_END_TRY
  return err;
}
