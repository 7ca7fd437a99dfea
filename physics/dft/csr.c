/* CP2K matrices: reader for `&KS_CSR_WRITE` / `&S_CSR_WRITE` text output (lines "row col value",
   1-based): the full matrix, as CP2K writes it by default, or the upper triangle incl. the diagonal
   (UPPER_TRIANGULAR T). A full matrix must be symmetric: each entry below the diagonal needs its
   mirror above, equal to SG_CSR_SYMM_TOL relative to the largest |entry| (CP2K prints 14 significant
   digits of one symmetric matrix, so honest files agree to ~1e-14); the upper triangle is kept. And the band
   energy of a non-orthogonal H, S pair by the submatrix method:
     S^(-1/2) by the submatrix machinery (eigenvalues^(-1/2) instead of the step function),
     H_orth = S^(-1/2) H S^(-1/2) (MatPtAP), P_orth from H_orth, E_band = 2 Tr(P_orth H_orth)
   (= 2 Tr(P H) with P = S^(-1/2) P_orth S^(-1/2)), as CP2K's LS_SCF does with its sign methods. */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include "sgtb.h"

#define SG_CSR_SYMM_TOL 1e-10

typedef struct {
  PetscInt  i, j; /* the entry's position folded to the upper triangle (i <= j) */
  PetscBool lower;
  PetscReal v;
  long      line;
} CSREntry;

static int CompareEntry(const void *pa, const void *pb)
{
  const CSREntry *a = (const CSREntry *)pa, *b = (const CSREntry *)pb;
  if (a->i != b->i) return a->i < b->i ? -1 : 1;
  if (a->j != b->j) return a->j < b->j ? -1 : 1;
  return (int)a->lower - (int)b->lower; /* the upper one first */
}

/* A full matrix: every entry below the diagonal must have its mirror within the tolerance; keeps
   the upper triangle in ri/ci/v (rank 0 only). A problem is written to msg (the caller broadcasts it). */
static PetscErrorCode FoldFullMatrix(const char file[], PetscInt *nnz, PetscInt *ri, PetscInt *ci, PetscReal *v, const long *lineof, char msg[], size_t len)
{
  CSREntry *e;
  PetscInt  n = *nnz, m = 0;
  PetscReal vmax = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &e));
  for (PetscInt k = 0; k < n; k++) {
    e[k].lower = ri[k] > ci[k] ? PETSC_TRUE : PETSC_FALSE;
    e[k].i = PetscMin(ri[k], ci[k]), e[k].j = PetscMax(ri[k], ci[k]), e[k].v = v[k], e[k].line = lineof[k];
    vmax = PetscMax(vmax, PetscAbsReal(v[k]));
  }
  qsort(e, (size_t)n, sizeof *e, CompareEntry);
  for (PetscInt k = 0; k < n; k++) {
    const CSREntry *a = &e[k];
    PetscBool       paired = k + 1 < n && e[k + 1].i == a->i && e[k + 1].j == a->j ? PETSC_TRUE : PETSC_FALSE;
    if (a->i == a->j) { /* diagonal: once */
      if (paired) PetscCall(PetscSNPrintf(msg, len, "%s:%ld: diagonal entry (%" PetscInt_FMT ",%" PetscInt_FMT ") appears twice (also line %ld)", file, e[k + 1].line, a->i + 1, a->i + 1, a->line));
    } else if (!(paired && !a->lower && e[k + 1].lower)) {
      PetscCall(PetscSNPrintf(msg, len, "%s:%ld: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") has no mirror (%" PetscInt_FMT ",%" PetscInt_FMT "): a full CP2K matrix holds both triangles (or write only the upper one with UPPER_TRIANGULAR T)", file, a->line, a->lower ? a->j + 1 : a->i + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->j + 1 : a->i + 1));
    } else if (PetscAbsReal(a->v - e[k + 1].v) > SG_CSR_SYMM_TOL * vmax) {
      PetscCall(PetscSNPrintf(msg, len, "%s:%ld: the matrix is not symmetric: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g but (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g (line %ld); tolerance %g of the largest |entry| %g", file, e[k + 1].line, a->j + 1, a->i + 1, (double)e[k + 1].v, a->i + 1, a->j + 1, (double)a->v, a->line, SG_CSR_SYMM_TOL, (double)vmax));
    }
    if (msg[0]) break;
    ri[m] = a->i, ci[m] = a->j, v[m] = a->v, m++;
    if (paired) k++;
  }
  *nnz = m;
  PetscCall(PetscFree(e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBReadCSR(MPI_Comm comm, const char file[], PetscInt n, Mat *A)
{
  PetscMPIInt rank;
  PetscInt    nnz = 0, cap = 0, *ri = NULL, *ci = NULL, nmax = 0, r0, r1;
  PetscReal  *v = NULL;
  long       *lineof = NULL;
  PetscBool   full = PETSC_FALSE;
  Mat         M;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  /* rank 0 reads; a problem is described in msg and raised on every rank after the broadcast, so
     a bad file is one clean error on all ranks, not an abort or a hang */
  if (rank == 0) {
    FILE *fp = fopen(file, "r");
    char  line[512];
    long  lineno = 0;
    if (!fp) PetscCall(PetscSNPrintf(msg, sizeof msg, "Cannot open CP2K CSR file '%s' (%s): check dft ks_csr / s_csr", file, strerror(errno)));
    while (fp && !msg[0] && fgets(line, sizeof line, fp)) {
      long   a, b;
      double x;
      char   rest;
      size_t len = strlen(line);
      lineno++;
      if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
      if (sscanf(line, "%ld %ld %lf %c", &a, &b, &x, &rest) != 3) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: expected 'row col value', got '%.60s': not a CP2K CSR text file (or damaged)", file, lineno, line));
      else if (len && line[len - 1] != '\n' && feof(fp)) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: the last line has no end of line: the file is truncated", file, lineno));
      else if (a < 1 || b < 1) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: indices are 1-based, got %ld %ld", file, lineno, a, b));
      else if (PetscMax(a, b) > PETSC_MAX_INT) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: index %ld exceeds the largest matrix this build holds (%d)", file, lineno, PetscMax(a, b), PETSC_MAX_INT));
      else if (n > 0 && PetscMax(a, b) > n) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: index %ld exceeds the expected matrix size %" PetscInt_FMT ": the CSR file does not match the system (wrong file, or wrong block sizes/number of molecules)", file, lineno, PetscMax(a, b), n));
      else if (PetscIsInfOrNanReal(x)) PetscCall(PetscSNPrintf(msg, sizeof msg, "%s:%ld: value %g is not a finite number", file, lineno, x));
      if (msg[0]) break;
      if (b < a) full = PETSC_TRUE; /* CP2K's default: the full matrix */
      if (nnz == cap) {
        cap = cap ? 2 * cap : 65536;
        PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &ri)); PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &ci)); PetscCall(PetscRealloc(sizeof(PetscReal) * cap, &v));
        PetscCall(PetscRealloc(sizeof(long) * cap, &lineof));
      }
      ri[nnz] = (PetscInt)(a - 1); ci[nnz] = (PetscInt)(b - 1); v[nnz] = x; lineof[nnz] = lineno; nnz++;
      nmax = PetscMax(nmax, (PetscInt)PetscMax(a, b));
    }
    if (fp) fclose(fp);
    if (!msg[0] && nnz == 0) PetscCall(PetscSNPrintf(msg, sizeof msg, "CP2K CSR file '%s' holds no entries", file));
    if (!msg[0] && full) PetscCall(FoldFullMatrix(file, &nnz, ri, ci, v, lineof, msg, sizeof msg));
    PetscCall(PetscFree(lineof));
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
