/* NumPy .npy reader/writer: see sgnpy.h. The header is a Python dict literal; we parse only the
   three keys NumPy writes ('descr', 'fortran_order', 'shape') and refuse anything unexpected rather
   than guess. Data are copied verbatim: this host is little-endian (checked), so '<f4'/'<f8' need no
   byte swapping and a read-write cycle is bit-exact. */
#include "sgnpy.h"
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>

static int HostIsLittleEndian(void)
{
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* Finds 'key' in the header dict and returns a pointer just after the ':' that follows it. */
static const char *FindKey(const char *hdr, const char *key)
{
  char        pat[64];
  const char *p;
  snprintf(pat, sizeof pat, "'%s'", key);
  p = strstr(hdr, pat);
  if (!p) {
    snprintf(pat, sizeof pat, "\"%s\"", key);
    p = strstr(hdr, pat);
  }
  if (!p) return NULL;
  p += strlen(pat);
  while (*p && isspace((unsigned char)*p)) p++;
  if (*p != ':') return NULL;
  p++;
  while (*p && isspace((unsigned char)*p)) p++;
  return p;
}

static PetscErrorCode ParseHeader(const char path[], const char *hdr, SgNpyInfo *info)
{
  const char *p;
  char        descr[32];
  size_t      n = 0;

  PetscFunctionBegin;
  p = FindKey(hdr, "descr");
  PetscCheck(p && (*p == '\'' || *p == '"'), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy header has no 'descr' string (header: %s)", path, hdr);
  {
    char q = *p++;
    while (*p && *p != q && n + 1 < sizeof descr) descr[n++] = *p++;
    descr[n] = 0;
  }
  if (!strcmp(descr, "<f8")) info->esize = 8;
  else if (!strcmp(descr, "<f4")) info->esize = 4;
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy dtype '%s' is not supported: only little-endian float64 '<f8' and float32 '<f4' are (convert with numpy: a.astype('<f8'))", path, descr);

  p = FindKey(hdr, "fortran_order");
  PetscCheck(p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy header has no 'fortran_order' (header: %s)", path, hdr);
  PetscCheck(!strncmp(p, "False", 5), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy array is in Fortran order; only C order is supported (save it with numpy.ascontiguousarray)", path);

  p = FindKey(hdr, "shape");
  PetscCheck(p && *p == '(', PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy header has no 'shape' tuple (header: %s)", path, hdr);
  p++;
  info->ndim  = 0;
  info->count = 1;
  for (;;) {
    char *end;
    long long v;
    while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
    if (*p == ')') break;
    PetscCheck(isdigit((unsigned char)*p), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: cannot parse the .npy shape (header: %s)", path, hdr);
    PetscCheck(info->ndim < SG_NPY_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy array has more than %d dimensions", path, SG_NPY_MAXDIM);
    errno = 0;
    v     = strtoll(p, &end, 10);
    PetscCheck(!errno && end != p && v >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad .npy shape entry (header: %s)", path, hdr);
    /* the byte count (count * 8) must fit int64: a corrupt shape must not overflow it */
    PetscCheck(v == 0 || info->count <= INT64_MAX / 8 / v, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: .npy shape is too large to be real (header: %s)", path, hdr);
    info->shape[info->ndim++] = v;
    info->count *= v;
    p = end;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgNpyRead(const char path[], SgNpyInfo *info, void **data)
{
  FILE         *fp;
  unsigned char pre[12];
  uint32_t      hlen;
  size_t        prelen;
  char         *hdr;
  long          fsize;

  PetscFunctionBegin;
  PetscCheck(HostIsLittleEndian(), PETSC_COMM_SELF, PETSC_ERR_SUP, "SgNpyRead: big-endian hosts are not supported");
  *data = NULL;
  fp    = fopen(path, "rb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open .npy file: %s", path, strerror(errno));
  if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not a .npy file (no \\x93NUMPY magic)", path);
  }
  if (pre[6] == 1) {
    hlen   = (uint32_t)pre[8] | ((uint32_t)pre[9] << 8);
    prelen = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, fp) != 2) {
      fclose(fp);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: truncated .npy header", path);
    }
    hlen   = (uint32_t)pre[8] | ((uint32_t)pre[9] << 8) | ((uint32_t)pre[10] << 16) | ((uint32_t)pre[11] << 24);
    prelen = 12;
  } else {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are)", path, pre[6], pre[7]);
  }
  if (hlen > (1u << 20)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: implausible .npy header length %u", path, hlen);
  }
  PetscCall(PetscMalloc1(hlen + 1, &hdr));
  if (fread(hdr, 1, hlen, fp) != hlen) {
    fclose(fp);
    PetscCall(PetscFree(hdr));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: truncated .npy header", path);
  }
  hdr[hlen] = 0;
  /* the header is quoted in errors: one line, printable (a corrupt file's bytes stay off the terminal) */
  for (char *c = hdr; *c; c++)
    if ((unsigned char)*c < 32 || (unsigned char)*c > 126) *c = ' ';
  for (size_t l = strlen(hdr); l > 0 && hdr[l - 1] == ' '; l--) hdr[l - 1] = 0;
  {
    PetscErrorCode ierr = ParseHeader(path, hdr, info);
    PetscCall(PetscFree(hdr));
    if (ierr) fclose(fp);
    PetscCall(ierr);
  }
  /* The data must fill the rest of the file exactly: a shorter file is truncated, a longer one
     is not what the header says it is. */
  fseek(fp, 0, SEEK_END);
  fsize = ftell(fp);
  if ((int64_t)fsize != (int64_t)(prelen + hlen) + info->count * info->esize) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: .npy file holds %ld bytes but its header promises %lld (truncated or corrupt)", path, fsize,
            (long long)((int64_t)(prelen + hlen) + info->count * info->esize));
  }
  fseek(fp, (long)(prelen + hlen), SEEK_SET);
  PetscCall(PetscMalloc((size_t)(info->count * info->esize) + 1, data));
  if (fread(*data, (size_t)info->esize, (size_t)info->count, fp) != (size_t)info->count) {
    fclose(fp);
    PetscCall(PetscFree(*data));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: short read of .npy data", path);
  }
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgNpyWrite(FILE *fp, const char path[], int esize, int ndim, const int64_t shape[], const void *data)
{
  char    dict[512], shp[256] = "";
  size_t  len, total, pad;
  int64_t count = 1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};

  PetscFunctionBegin;
  PetscCheck(HostIsLittleEndian(), PETSC_COMM_SELF, PETSC_ERR_SUP, "SgNpyWrite: big-endian hosts are not supported");
  PetscCheck(esize == 4 || esize == 8, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "SgNpyWrite(%s): element size %d not supported (4 or 8)", path, esize);
  PetscCheck(ndim >= 0 && ndim <= SG_NPY_MAXDIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "SgNpyWrite(%s): ndim %d", path, ndim);
  /* Same text as numpy.lib.format: "(80, 576)", "(80,)", "()". */
  for (int d = 0; d < ndim; d++) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, d ? ", %lld" : "%lld", (long long)shape[d]);
    PetscCall(PetscStrlcat(shp, tmp, sizeof shp));
    count *= shape[d];
  }
  if (ndim == 1) PetscCall(PetscStrlcat(shp, ",", sizeof shp));
  snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': False, 'shape': (%s), }", esize, shp);
  len   = strlen(dict);
  total = 10 + len + 1;
  pad   = (64 - total % 64) % 64;
  PetscCheck(len + pad + 1 < 65536, PETSC_COMM_SELF, PETSC_ERR_SUP, "SgNpyWrite(%s): header too long", path);
  pre[8] = (unsigned char)((len + pad + 1) & 0xff);
  pre[9] = (unsigned char)((len + pad + 1) >> 8);
  {
    int ok = fwrite(pre, 1, 10, fp) == 10 && fwrite(dict, 1, len, fp) == len;
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', fp) != EOF;
    ok = ok && fputc('\n', fp) != EOF;
    ok = ok && (count == 0 || fwrite(data, (size_t)esize, (size_t)count, fp) == (size_t)count);
    PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: write failed: %s (disk full?)", path, strerror(errno));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
