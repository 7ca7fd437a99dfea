/* surge info: a readable summary of any HDF5 file surge writes (output, checkpoint, dataset). */
#include <hdf5.h>
#include <string.h>
#include "sgsys.h"
#include "h5util.h"
#include "sgdataset.h"

/* A string attribute, fixed or variable length (H5MD writes arrays of variable-length strings, e.g.
   boundary = periodic x 3), scalar or a short array: its values, the first line of each (a deck is
   shown by its first line). A value HDF5 cannot convert is named, never an HDF5 error stack. */
static void PrintStringAttr(hid_t a, hid_t type, hssize_t n, const char *name, const char *indent)
{
  htri_t vlen = H5Tis_variable_str(type);
  size_t sz   = H5Tget_size(type);
  hid_t  m    = H5Tcopy(H5T_C_S1);
  char **vv   = NULL, *fixed = NULL;
  herr_t err  = -1;

  if (n < 1 || n > 16 || vlen < 0) {
    printf("%s@%s [%lld strings]\n", indent, name, (long long)n);
    H5Tclose(m);
    return;
  }
  H5E_BEGIN_TRY
  {
    if (vlen) {
      H5Tset_size(m, H5T_VARIABLE);
      vv = (char **)calloc((size_t)n, sizeof(char *));
      if (vv) err = H5Aread(a, m, vv);
    } else {
      H5Tset_size(m, sz + 1); /* room for the terminator: null-padded strings fill all sz bytes */
      fixed = (char *)calloc((size_t)n, sz + 1);
      if (fixed) err = H5Aread(a, m, fixed);
    }
  }
  H5E_END_TRY;
  if (err < 0) printf("%s@%s (a string HDF5 cannot read)\n", indent, name);
  else {
    printf("%s@%s =", indent, name);
    for (hssize_t k = 0; k < n; k++) {
      char *v  = vlen ? vv[k] : fixed + k * (sz + 1);
      char *nl = v ? strchr(v, '\n') : NULL;
      printf(" \"%.*s\"%s", nl ? (int)(nl - v) : (int)(v ? strlen(v) : 0), v ? v : "", nl ? " ..." : "");
    }
    printf("\n");
  }
  if (vv && err >= 0) {
    hid_t s = H5Screate_simple(1, (hsize_t[]){(hsize_t)n}, NULL);
    H5Dvlen_reclaim(m, s, H5P_DEFAULT, vv);
    H5Sclose(s);
  }
  free(vv);
  free(fixed);
  H5Tclose(m);
}

static void PrintAttrs(hid_t obj, const char *indent)
{
  H5O_info_t info;
  if (H5Oget_info(obj, &info) < 0) return;
  for (hsize_t i = 0; i < info.num_attrs; i++) {
    hid_t   a = H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
    char    name[256];
    hid_t   type = H5Aget_type(a), space = H5Aget_space(a);
    hssize_t n   = H5Sget_simple_extent_npoints(space);
    H5Aget_name(a, sizeof name, name);
    if (H5Tget_class(type) == H5T_STRING) PrintStringAttr(a, type, n, name, indent);
    else if (H5Tget_class(type) == H5T_FLOAT || H5Tget_class(type) == H5T_INTEGER) {
      double v[8];
      herr_t err = -1;
      H5E_BEGIN_TRY
      {
        if (n <= 8) err = H5Aread(a, H5T_NATIVE_DOUBLE, v);
      }
      H5E_END_TRY;
      if (err >= 0) {
        printf("%s@%s =", indent, name);
        for (hssize_t k = 0; k < n; k++) printf(" %.10g", v[k]);
        printf("\n");
      } else printf("%s@%s [%lld values]\n", indent, name, (long long)n);
    }
    H5Sclose(space);
    H5Tclose(type);
    H5Aclose(a);
  }
}

static herr_t Visit(hid_t root, const char *name, const H5O_info_t *info, void *ctx)
{
  (void)ctx;
  if (!strcmp(name, ".")) return 0;
  if (info->type == H5O_TYPE_GROUP) {
    printf("%s/\n", name);
    hid_t g = H5Gopen2(root, name, H5P_DEFAULT);
    PrintAttrs(g, "    ");
    H5Gclose(g);
  } else if (info->type == H5O_TYPE_DATASET) {
    hid_t   d = H5Dopen2(root, name, H5P_DEFAULT), s = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t dims[8];
    int     nd = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    printf("%s  %s[", name, H5Tget_class(t) == H5T_FLOAT ? (H5Tget_size(t) == 8 ? "f64" : "f32") : H5Tget_class(t) == H5T_INTEGER ? "int" : "other");
    for (int i = 0; i < nd; i++) printf("%s%llu", i ? " x " : "", (unsigned long long)dims[i]);
    printf("]\n");
    PrintAttrs(d, "    ");
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
  }
  return 0;
}

PetscErrorCode SgInfoFile(MPI_Comm comm, const char file[])
{
  PetscMPIInt rank;
  hid_t       f;

  PetscFunctionBegin;
  PetscCall(SgH5CheckReadable(comm, file, "File"));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank) PetscFunctionReturn(PETSC_SUCCESS);
  f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  SgCheckH5Id(f, file);
  if (H5Aexists(f, "surge_dataset_version") > 0) { /* a training dataset: validate it and summarise */
    SgDataset ds;
    SgCallH5(H5Fclose(f));
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, file, SG_DATASET_READ, &ds));
    PetscCall(SgDatasetView(ds, PETSC_VIEWER_STDOUT_SELF));
    PetscCall(SgDatasetClose(&ds));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  printf("%s\n", file);
  PrintAttrs(f, "  ");
  SgCallH5(H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, Visit, NULL));
  SgCallH5(H5Fclose(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}
