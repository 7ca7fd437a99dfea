/* CP2K matrices: reader for `&KS_CSR_WRITE` / `&S_CSR_WRITE` output, text (lines "row col value",
   1-based) or `BINARY T` (Fortran unformatted records, one per entry: ReadBinary): the full matrix,
   as CP2K writes it by default, or the upper triangle incl. the diagonal (UPPER_TRIANGULAR T). A full matrix must be symmetric: each entry below the diagonal needs its
   mirror above, equal to SG_CSR_SYMM_TOL relative to the largest |entry| (CP2K prints 14 significant
   digits of one symmetric matrix, so honest files agree to ~1e-14); the upper triangle is kept. And the band
   energy of a non-orthogonal H, S pair by the submatrix method:
     S^(-1/2) by the submatrix machinery (eigenvalues^(-1/2) instead of the step function),
     H_orth = S^(-1/2) H S^(-1/2) (MatPtAP), P_orth from H_orth, E_band = 2 Tr(P_orth H_orth)
   (= 2 Tr(P H) with P = S^(-1/2) P_orth S^(-1/2)), as CP2K's LS_SCF does with its sign methods. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sgtb.h"

#define SG_CSR_SYMM_TOL 1e-10

typedef struct {
  PetscInt  i, j; /* the entry's position folded to the upper triangle (i <= j) */
  PetscBool lower;
  PetscReal v;
  long      where;
} CSREntry;

/* The entries read so far (rank 0) */
typedef struct {
  PetscInt   nnz, cap, nmax, *ri, *ci;
  PetscReal *v;
  long      *where;  /* the line (text) or record (binary) of each entry, for messages */
  PetscBool  binary; /* the file is CP2K's BINARY T form */
  PetscBool  full;   /* an entry below the diagonal was seen: CP2K's default, the full matrix */
} Triplets;

/* where an entry came from, for messages: "FILE:LINE" or "FILE: record N" */
static void Where(const char file[], PetscBool binary, long k, char buf[], size_t len)
{
  if (binary) snprintf(buf, len, "%s: record %ld", file, k);
  else snprintf(buf, len, "%s:%ld", file, k);
}

static int CompareEntry(const void *pa, const void *pb)
{
  const CSREntry *a = (const CSREntry *)pa, *b = (const CSREntry *)pb;
  if (a->i != b->i) return a->i < b->i ? -1 : 1;
  if (a->j != b->j) return a->j < b->j ? -1 : 1;
  return (int)a->lower - (int)b->lower; /* the upper one first */
}

/* A full matrix: every entry below the diagonal must have its mirror within the tolerance; keeps
   the upper triangle in T (rank 0 only). A problem is written to msg (the caller broadcasts it). */
static PetscErrorCode FoldFullMatrix(const char file[], Triplets *T, char msg[], size_t len)
{
  CSREntry *e;
  PetscInt  n = T->nnz, m = 0;
  PetscReal vmax = 0;
  char      at[PETSC_MAX_PATH_LEN + 32], at2[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &e));
  for (PetscInt k = 0; k < n; k++) {
    e[k].lower = T->ri[k] > T->ci[k] ? PETSC_TRUE : PETSC_FALSE;
    e[k].i = PetscMin(T->ri[k], T->ci[k]);
    e[k].j = PetscMax(T->ri[k], T->ci[k]);
    e[k].v = T->v[k];
    e[k].where = T->where[k];
    vmax = PetscMax(vmax, PetscAbsReal(T->v[k]));
  }
  qsort(e, (size_t)n, sizeof *e, CompareEntry);
  for (PetscInt k = 0; k < n; k++) {
    const CSREntry *a = &e[k];
    PetscBool       paired = k + 1 < n && e[k + 1].i == a->i && e[k + 1].j == a->j ? PETSC_TRUE : PETSC_FALSE;
    Where(file, T->binary, a->where, at, sizeof at);
    if (paired) Where(file, T->binary, e[k + 1].where, at2, sizeof at2);
    if (a->i == a->j) { /* diagonal: once */
      if (paired) PetscCall(PetscSNPrintf(msg, len, "%s: diagonal entry (%" PetscInt_FMT ",%" PetscInt_FMT ") appears twice (also at %s)", at2, a->i + 1, a->i + 1, at));
    } else if (!(paired && !a->lower && e[k + 1].lower)) {
      PetscCall(PetscSNPrintf(msg, len, "%s: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") has no mirror (%" PetscInt_FMT ",%" PetscInt_FMT "): a full CP2K matrix holds both triangles (or write only the upper one with UPPER_TRIANGULAR T)", at, a->lower ? a->j + 1 : a->i + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->j + 1 : a->i + 1));
    } else if (PetscAbsReal(a->v - e[k + 1].v) > SG_CSR_SYMM_TOL * vmax) {
      PetscCall(PetscSNPrintf(msg, len, "%s: the matrix is not symmetric: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g but (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g (at %s); tolerance %g of the largest |entry| %g", at2, a->j + 1, a->i + 1, (double)e[k + 1].v, a->i + 1, a->j + 1, (double)a->v, at, SG_CSR_SYMM_TOL, (double)vmax));
    }
    if (msg[0]) break;
    T->ri[m] = a->i;
    T->ci[m] = a->j;
    T->v[m] = a->v;
    m++;
    if (paired) k++;
  }
  T->nnz = m;
  PetscCall(PetscFree(e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one entry (1-based a, b) from `at`, checked and appended; a problem is described in msg */
static PetscErrorCode AddEntry(const char at[], long where, long a, long b, double x, PetscInt n, Triplets *T, char msg[], size_t len)
{
  PetscFunctionBegin;
  if (a < 1 || b < 1) PetscCall(PetscSNPrintf(msg, len, "%s: indices are 1-based, got %ld %ld", at, a, b));
  else if (PetscMax(a, b) > PETSC_MAX_INT) PetscCall(PetscSNPrintf(msg, len, "%s: index %ld exceeds the largest matrix this build holds (%d)", at, PetscMax(a, b), PETSC_MAX_INT));
  else if (n > 0 && PetscMax(a, b) > n) PetscCall(PetscSNPrintf(msg, len, "%s: index %ld exceeds the expected matrix size %" PetscInt_FMT ": the CSR file does not match the system (wrong file, or wrong block sizes/number of molecules)", at, PetscMax(a, b), n));
  else if (PetscIsInfOrNanReal(x)) PetscCall(PetscSNPrintf(msg, len, "%s: value %g is not a finite number", at, x));
  if (msg[0]) PetscFunctionReturn(PETSC_SUCCESS);
  if (b < a) T->full = PETSC_TRUE;
  if (T->nnz == T->cap) {
    T->cap = T->cap ? 2 * T->cap : 65536;
    PetscCall(PetscRealloc(sizeof(PetscInt) * T->cap, &T->ri)); PetscCall(PetscRealloc(sizeof(PetscInt) * T->cap, &T->ci)); PetscCall(PetscRealloc(sizeof(PetscReal) * T->cap, &T->v));
    PetscCall(PetscRealloc(sizeof(long) * T->cap, &T->where));
  }
  T->ri[T->nnz] = (PetscInt)(a - 1);
  T->ci[T->nnz] = (PetscInt)(b - 1);
  T->v[T->nnz] = x;
  T->where[T->nnz] = where;
  T->nnz++;
  T->nmax = PetscMax(T->nmax, (PetscInt)PetscMax(a, b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ReadText(FILE *fp, const char file[], PetscInt n, Triplets *T, char msg[], size_t len)
{
  char line[512], at[PETSC_MAX_PATH_LEN + 32];
  long lineno = 0;

  PetscFunctionBegin;
  while (!msg[0] && fgets(line, sizeof line, fp)) {
    long   a, b;
    double x;
    char   rest;
    size_t l = strlen(line);
    lineno++;
    if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
    Where(file, PETSC_FALSE, lineno, at, sizeof at);
    if (sscanf(line, "%ld %ld %lf %c", &a, &b, &x, &rest) != 3) PetscCall(PetscSNPrintf(msg, len, "%s: expected 'row col value', got '%.60s': not a CP2K CSR file (text or BINARY T), or damaged", at, line));
    else if (l && line[l - 1] != '\n' && feof(fp)) PetscCall(PetscSNPrintf(msg, len, "%s: the last line has no end of line: the file is truncated", at));
    else PetscCall(AddEntry(at, lineno, a, b, x, n, T, msg, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CP2K's BINARY T: Fortran unformatted sequential records, one per entry, each [int32 16][int32 row]
   [int32 col][float64 value][int32 16] in the writing machine's byte order (checked: CP2K 2023.1 on
   this machine's water matrices, the same entries as its text output, all 17 digits) */
static PetscErrorCode ReadBinary(FILE *fp, const char file[], PetscInt n, Triplets *T, char msg[], size_t len)
{
  unsigned char r[24];
  size_t        got;
  long          k = 0;
  char          at[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  while (!msg[0] && (got = fread(r, 1, sizeof r, fp)) > 0) {
    int32_t m0, m1, a, b;
    double  x;
    Where(file, PETSC_TRUE, ++k, at, sizeof at);
    if (got < sizeof r) {
      PetscCall(PetscSNPrintf(msg, len, "%s: the file ends inside a record (%zu of 24 bytes): it is truncated", at, got));
      break;
    }
    memcpy(&m0, r, 4);
    memcpy(&a, r + 4, 4);
    memcpy(&b, r + 8, 4);
    memcpy(&x, r + 12, 8);
    memcpy(&m1, r + 20, 4);
    if (m0 != 16 || m1 != 16) PetscCall(PetscSNPrintf(msg, len, "%s: not a CP2K BINARY T record (record markers %d and %d, expected 16 and 16): another program's file, another byte order, or damaged", at, (int)m0, (int)m1));
    else PetscCall(AddEntry(at, k, a, b, x, n, T, msg, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBReadCSR(MPI_Comm comm, const char file[], PetscInt n, Mat *A)
{
  PetscMPIInt rank;
  PetscInt    nnz = 0, nmax = 0, r0, r1, *ri = NULL, *ci = NULL;
  PetscReal  *v   = NULL;
  Triplets    T;
  Mat         M;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMemzero(&T, sizeof T));
  /* rank 0 reads; a problem is described in msg and raised on every rank after the broadcast, so
     a bad file is one clean error on all ranks, not an abort or a hang */
  if (rank == 0) {
    FILE   *fp = fopen(file, "rb");
    int32_t head;
    if (!fp) PetscCall(PetscSNPrintf(msg, sizeof msg, "Cannot open CP2K CSR file '%s' (%s): check dft ks_csr / s_csr", file, strerror(errno)));
    else {
      /* a text file starts with blanks or digits; a binary one with its first record's length, 16 */
      T.binary = fread(&head, 1, 4, fp) == 4 && head == 16 ? PETSC_TRUE : PETSC_FALSE;
      rewind(fp);
      if (T.binary) PetscCall(ReadBinary(fp, file, n, &T, msg, sizeof msg));
      else PetscCall(ReadText(fp, file, n, &T, msg, sizeof msg));
      fclose(fp);
    }
    if (!msg[0] && T.nnz == 0) PetscCall(PetscSNPrintf(msg, sizeof msg, "CP2K CSR file '%s' holds no entries", file));
    if (!msg[0] && T.full) PetscCall(FoldFullMatrix(file, &T, msg, sizeof msg));
    PetscCall(PetscFree(T.where));
    nnz = T.nnz;
    nmax = T.nmax;
    ri = T.ri;
    ci = T.ci;
    v = T.v;
  }
  for (char *c = msg; *c; c++)
    if ((unsigned char)*c < 32 || (unsigned char)*c > 126) *c = '?'; /* a binary file's bytes stay off the terminal */
  PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
  if (msg[0]) {
    PetscCall(PetscFree(ri)); PetscCall(PetscFree(ci)); PetscCall(PetscFree(v));
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  }
  PetscCallMPI(MPI_Bcast(&nnz, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&nmax, 1, MPIU_INT, 0, comm));
  PetscCheck(n <= 0 || nmax == n, comm, PETSC_ERR_USER_INPUT, "CP2K CSR file '%s' is %" PetscInt_FMT "x%" PetscInt_FMT " but the system needs %" PetscInt_FMT "x%" PetscInt_FMT ": the sizes do not match", file, nmax, nmax, n, n);
  if (n <= 0) n = nmax;
  if (rank) { PetscCall(PetscMalloc1(nnz, &ri)); PetscCall(PetscMalloc1(nnz, &ci)); PetscCall(PetscMalloc1(nnz, &v)); }
  PetscCallMPI(MPI_Bcast(ri, nnz, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(ci, nnz, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(v, nnz, MPIU_REAL, 0, comm));
  PetscCall(MatCreate(comm, &M));
  PetscCall(MatSetSizes(M, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(M, MATAIJ));
  PetscCall(MatSetUp(M));
  PetscCall(MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(M, &r0, &r1));
  for (PetscInt k = 0; k < nnz; k++) {
    if (ri[k] >= r0 && ri[k] < r1) PetscCall(MatSetValue(M, ri[k], ci[k], v[k], INSERT_VALUES));
    if (ci[k] != ri[k] && ci[k] >= r0 && ci[k] < r1) PetscCall(MatSetValue(M, ci[k], ri[k], v[k], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(ri)); PetscCall(PetscFree(ci)); PetscCall(PetscFree(v));
  *A = M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBNonOrthogonalEnergy(Mat H, Mat S, const SgTBBlocks *b, const SgTBDMOptions *o, PetscReal *eband, SgTBDensity *dm)
{
  Mat      X, Ho;
  PetscInt nh, ns;

  PetscFunctionBegin;
  PetscCall(MatGetSize(H, &nh, NULL));
  PetscCall(MatGetSize(S, &ns, NULL));
  PetscCheck(nh == ns && nh == b->off[b->nblk], PetscObjectComm((PetscObject)H), PETSC_ERR_USER_INPUT, "Sizes do not match: H is %" PetscInt_FMT "x%" PetscInt_FMT ", S is %" PetscInt_FMT "x%" PetscInt_FMT ", the blocks hold %" PetscInt_FMT " functions", nh, nh, ns, ns, b->off[b->nblk]);
  if (o->overlap == SG_TB_OVERLAP_PAIR) {
    PetscCall(SgTBDensityComputePair(H, S, b, NULL, o, dm));
    *eband = dm->ebandsum;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SgTBSubmatrixPower(S, b, o, -0.5, &X));
  {
    PetscReal t0 = (PetscReal)clock() / CLOCKS_PER_SEC; /* CPU seconds, as the phases of dm */
    PetscCall(MatPtAP(H, X, MAT_INITIAL_MATRIX, 2.0, &Ho));
    t0 = (PetscReal)clock() / CLOCKS_PER_SEC - t0;
    PetscCall(SgTBDensityCompute(Ho, b, NULL, o, dm));
    dm->t_orth = t0;
  }
  *eband = dm->ebandsum;
  PetscCall(MatDestroy(&Ho));
  PetscCall(MatDestroy(&X));
  PetscFunctionReturn(PETSC_SUCCESS);
}
