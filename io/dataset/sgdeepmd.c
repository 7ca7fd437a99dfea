/* DeePMD-kit data directories <-> md_frames datasets.

   DeePMD-kit "system" layout (deepmd-kit docs, "Data format"): a directory with
     type.raw       one integer type per atom (whitespace separated)
     type_map.raw   the element name of each type (optional in DeePMD; we name types T0, T1, ... if absent)
     set.XXX/       coord.npy [nframes, natoms*3], box.npy [nframes, 9] (rows are cell vectors),
                    energy.npy [nframes], force.npy [nframes, natoms*3], virial.npy [nframes, 9] (optional)
   Units: Angstrom, eV, eV/Angstrom (DeePMD's convention, kept as is). Sets are read in name order. */
#include "sgdataset.h"
#include "sgnpy.h"
#include "sgwrite.h"
#include "sgsys.h" /* SgAgreeBegin/End */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXNAMES 128

static PetscErrorCode ReadTypes(const char dir[], PetscInt *natoms, PetscInt **type)
{
  char     path[PETSC_MAX_PATH_LEN];
  FILE    *fp;
  PetscInt cap = 256, n = 0;
  long     v;

  PetscFunctionBegin;
  snprintf(path, sizeof path, "%s/type.raw", dir);
  fp = fopen(path, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open (a DeePMD system directory needs type.raw): %s", path, strerror(errno));
  PetscCall(PetscMalloc1(cap, type));
  while (fscanf(fp, "%ld", &v) == 1) {
    if (n == cap) PetscCall(PetscRealloc(sizeof(PetscInt) * (cap *= 2), type));
    (*type)[n++] = (PetscInt)v;
  }
  {
    int bad = !feof(fp);
    fclose(fp);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: non-integer entry after %d types", path, (int)n);
  }
  PetscCheck(n > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no atom types", path);
  *natoms = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ReadTypeMap(const char dir[], PetscInt maxtype, PetscInt *ntypes, char names[][64])
{
  char  path[PETSC_MAX_PATH_LEN], word[64];
  FILE *fp;

  PetscFunctionBegin;
  snprintf(path, sizeof path, "%s/type_map.raw", dir);
  *ntypes = 0;
  fp      = fopen(path, "r");
  if (!fp) { /* optional in DeePMD-kit */
    for (PetscInt t = 0; t <= maxtype && t < MAXNAMES; t++) snprintf(names[(*ntypes)++], 64, "T%d", (int)t);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  while (*ntypes < MAXNAMES && fscanf(fp, "%63s", word) == 1) PetscCall(PetscStrncpy(names[(*ntypes)++], word, 64));
  fclose(fp);
  PetscCheck(*ntypes > maxtype, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: names %d types but type.raw uses type %d", path, (int)*ntypes, (int)maxtype);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int IsSetDir(const struct dirent *e)
{
  return !strncmp(e->d_name, "set.", 4);
}

/* Reads one array of a set and checks it holds nframes*per elements. */
static PetscErrorCode ReadSetArray(const char set[], const char name[], int64_t nframes, int64_t per, PetscBool optional, PetscBool *found, SgNpyInfo *info, void **data)
{
  char path[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  snprintf(path, sizeof path, "%s/%s.npy", set, name);
  *data = NULL;
  if (found) *found = PETSC_TRUE;
  if (optional) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
      *found = PETSC_FALSE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    fclose(fp);
  }
  PetscCall(SgNpyRead(path, info, data));
  PetscCheck(nframes < 0 || info->count == nframes * per, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: holds %lld values, expected %lld frames x %lld = %lld", path, (long long)info->count, (long long)nframes, (long long)per, (long long)(nframes * per));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdImport(MPI_Comm comm, PetscInt ndirs, const char *const dirs[], const char out[], PetscBool overwrite)
{
  SgDataset ds = NULL;
  PetscInt  natoms0 = 0, *type0 = NULL, ntypes0 = 0;
  char      names0[MAXNAMES][64];
  PetscBool virial0 = PETSC_FALSE;
  char      source[4096] = "deepmd-kit import of";

  PetscFunctionBegin;
  PetscCheck(ndirs > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "SgDeepmdImport: no directories given");
  for (PetscInt d = 0; d < ndirs; d++) {
    PetscInt        natoms = 0, *type = NULL, ntypes = 0, maxtype = 0;
    char            names[MAXNAMES][64];
    struct dirent **sets = NULL;
    int             nsets;
    int64_t         frames = 0;

    PetscCall(ReadTypes(dirs[d], &natoms, &type));
    for (PetscInt i = 0; i < natoms; i++) maxtype = PetscMax(maxtype, type[i]);
    PetscCall(ReadTypeMap(dirs[d], maxtype, &ntypes, names));
    nsets = scandir(dirs[d], &sets, IsSetDir, alphasort);
    PetscCheck(nsets > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: no set.* directories (not a DeePMD-kit system directory?)", dirs[d]);
    for (int s = 0; s < nsets; s++) {
      char      set[PETSC_MAX_PATH_LEN + 512];
      SgNpyInfo ie, ic, ib, iff, iv;
      void     *e, *c, *b, *f, *v;
      PetscBool hasv;
      int64_t   nf;
      int64_t  *member;

      snprintf(set, sizeof set, "%s/%s", dirs[d], sets[s]->d_name);
      PetscCall(ReadSetArray(set, "energy", -1, 1, PETSC_FALSE, NULL, &ie, &e));
      nf = ie.count;
      PetscCall(ReadSetArray(set, "coord", nf, 3 * natoms, PETSC_FALSE, NULL, &ic, &c));
      PetscCall(ReadSetArray(set, "box", nf, 9, PETSC_FALSE, NULL, &ib, &b));
      PetscCall(ReadSetArray(set, "force", nf, 3 * natoms, PETSC_FALSE, NULL, &iff, &f));
      PetscCall(ReadSetArray(set, "virial", nf, 9, PETSC_TRUE, &hasv, &iv, &v));
      if (!ds) {
        const char *tm[MAXNAMES];
        for (PetscInt t = 0; t < ntypes; t++) tm[t] = names[t];
        PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, out, overwrite, natoms, type, ntypes, tm, ic.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, hasv, 0, NULL, &ds));
        natoms0 = natoms;
        ntypes0 = ntypes;
        virial0 = hasv;
        PetscCall(PetscMalloc1(natoms, &type0));
        PetscCall(PetscArraycpy(type0, type, natoms));
        for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscStrncpy(names0[t], names[t], 64));
      } else {
        PetscBool same = (PetscBool)(natoms == natoms0 && ntypes == ntypes0);
        for (PetscInt i = 0; same && i < natoms; i++) same = (PetscBool)(type[i] == type0[i]);
        for (PetscInt t = 0; same && t < ntypes; t++) same = (PetscBool)!strcmp(names[t], names0[t]);
        PetscCheck(same, comm, PETSC_ERR_USER_INPUT, "%s: type.raw/type_map.raw differ from %s; import systems with different atoms into separate dataset files (the loader takes several)", dirs[d], dirs[0]);
        PetscCheck(hasv == virial0, comm, PETSC_ERR_USER_INPUT, "%s: virial.npy is %s here but %s in %s; all sets of one dataset must agree", set, hasv ? "present" : "absent", virial0 ? "present" : "absent", dirs[0]);
      }
      PetscCall(PetscMalloc1(nf, &member));
      for (int64_t i = 0; i < nf; i++) member[i] = d;
      PetscCall(SgDatasetAppendBegin(ds, nf));
      PetscCall(SgDatasetAppendField(ds, "coord", ic.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, c));
      PetscCall(SgDatasetAppendField(ds, "box", ib.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, b));
      PetscCall(SgDatasetAppendField(ds, "energy", ie.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, e));
      PetscCall(SgDatasetAppendField(ds, "force", iff.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, f));
      if (hasv) PetscCall(SgDatasetAppendField(ds, "virial", iv.esize == 4 ? SG_DTYPE_F32 : SG_DTYPE_F64, v));
      PetscCall(SgDatasetAppendField(ds, "member", SG_DTYPE_I64, member));
      PetscCall(SgDatasetAppendCommit(ds));
      PetscCall(PetscFree(member));
      PetscCall(PetscFree(e));
      PetscCall(PetscFree(c));
      PetscCall(PetscFree(b));
      PetscCall(PetscFree(f));
      PetscCall(PetscFree(v));
      frames += nf;
      free(sets[s]);
    }
    free(sets);
    {
      char t[PETSC_MAX_PATH_LEN + 64];
      snprintf(t, sizeof t, "%s %s (%d sets, %lld frames, member %d)", d ? ";" : "", dirs[d], nsets, (long long)frames, (int)d);
      PetscCall(PetscStrlcat(source, t, sizeof source));
    }
    PetscCall(PetscFree(type));
  }
  PetscCall(SgDatasetSetProvenance(ds, NULL, source));
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscFree(type0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExportArray(SgWriteDir wd, SgDataset ds, const char set[], const char name[], int64_t start, int64_t cnt, int ndim, const int64_t shape[])
{
  PetscInt idx;
  SgDType  dt;
  int64_t  per;
  void    *buf;
  char     rel[PETSC_MAX_PATH_LEN];
  FILE    *fp;

  PetscFunctionBegin;
  PetscCall(SgDatasetFindField(ds, name, &idx));
  PetscCall(SgDatasetGetFieldInfo(ds, idx, NULL, &dt, NULL, NULL, &per));
  PetscCall(PetscMalloc(SgDTypeSize(dt) * (size_t)(cnt * per) + 1, &buf));
  PetscCall(SgDatasetReadField(ds, name, start, cnt, dt, buf));
  snprintf(rel, sizeof rel, "%s/%s.npy", set, name);
  PetscCall(SgWriteDirFileOpen(wd, rel, &fp));
  {
    PetscErrorCode ierr = SgNpyWrite(fp, rel, (int)SgDTypeSize(dt), ndim, shape, buf);
    if (ierr) (void)fclose(fp); /* the caller discards the whole directory */
    PetscCall(ierr);
  }
  PetscCall(SgWriteDirFileClose(wd, &fp));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0's export into wd (DIR.tmp/): type.raw, type_map.raw, set.NNN/ *.npy. */
static PetscErrorCode ExportInto(SgWriteDir wd, const char in[], PetscInt set_size)
{
  SgDataset   ds;
  const char *kind;
  int64_t     n, natoms = 0;
  int32_t    *type;
  PetscInt    ntypes, vi;
  char      **names;
  FILE       *fp;

  PetscFunctionBegin;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, in, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetKind(ds, &kind));
  PetscCheck(!strcmp(kind, "md_frames"), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: kind %s cannot be exported to DeePMD-kit (only md_frames)", in, kind);
  PetscCall(SgDatasetGetNumSamples(ds, &n));
  PetscCall(SgDatasetFindField(ds, "virial", &vi));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &natoms, NULL));
  PetscCall(PetscMalloc1(natoms, &type));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &natoms, type));
  PetscCall(SgWriteDirFileOpen(wd, "type.raw", &fp));
  for (int64_t i = 0; i < natoms; i++) fprintf(fp, "%d\n", (int)type[i]);
  PetscCall(SgWriteDirFileClose(wd, &fp));
  PetscCall(SgDatasetReadStrings(ds, "type_map", &ntypes, &names));
  PetscCall(SgWriteDirFileOpen(wd, "type_map.raw", &fp));
  for (PetscInt t = 0; t < ntypes; t++) fprintf(fp, "%s\n", names[t]);
  PetscCall(SgWriteDirFileClose(wd, &fp));
  PetscCall(SgDatasetStringsFree(ntypes, &names));
  if (set_size <= 0) set_size = (PetscInt)PetscMax(n, 1);
  for (int64_t start = 0, k = 0; start < n; start += set_size, k++) {
    int64_t cnt = PetscMin((int64_t)set_size, n - start);
    int64_t s2[2], s1[1];
    char    set[32];
    snprintf(set, sizeof set, "set.%03lld", (long long)k);
    PetscCall(SgWriteDirMkdir(wd, set));
    s2[0] = cnt;
    s2[1] = 3 * natoms;
    s1[0] = cnt;
    PetscCall(ExportArray(wd, ds, set, "coord", start, cnt, 2, s2));
    PetscCall(ExportArray(wd, ds, set, "force", start, cnt, 2, s2));
    PetscCall(ExportArray(wd, ds, set, "energy", start, cnt, 1, s1));
    s2[1] = 9;
    PetscCall(ExportArray(wd, ds, set, "box", start, cnt, 2, s2));
    if (vi >= 0) PetscCall(ExportArray(wd, ds, set, "virial", start, cnt, 2, s2));
  }
  PetscCall(PetscFree(type));
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Through the write path (sgwrite.h, SgWriteDir): DIR must be new or empty and not an input; the
   system is written to DIR.tmp/ and renamed to DIR when complete, so a failure (disk full included)
   leaves no DIR and no DIR.tmp. Rank 0 writes; every rank ends with its outcome. */
PetscErrorCode SgDeepmdExport(MPI_Comm comm, const char in[], const char dir[], PetscInt set_size)
{
  PetscMPIInt    rank;
  PetscErrorCode ierr = PETSC_SUCCESS;
  char           msg[2 * PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) PetscCall(SgWriteDirCheckMessage("the export directory", dir, msg, sizeof msg));
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_OPEN, "%s", msg); /* before the dataset is read */
  PetscCall(SgAgreeBegin());
  if (!rank) {
    SgWriteDir wd = NULL;
    ierr          = SgWriteDirBegin("the export directory", dir, &wd);
    if (!ierr) ierr = ExportInto(wd, in, set_size);
    if (ierr) (void)SgWriteDirDiscard(&wd);
    else ierr = SgWriteDirCommit(&wd);
  }
  PetscCall(SgAgreeEnd(comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
