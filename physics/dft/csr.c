/* CP2K matrices: reader for `&KS_CSR_WRITE` / `&S_CSR_WRITE` text output (lines "row col value",
   1-based): the full matrix, as CP2K writes it by default, or the upper triangle incl. the diagonal
   (UPPER_TRIANGULAR T). A full matrix must be symmetric: each entry below the diagonal needs its
   mirror above, equal to SG_CSR_SYMM_TOL relative to the largest |entry| (CP2K prints 14 significant
   digits of one symmetric matrix, so honest files agree to ~1e-14); the upper triangle is kept. And the band
   energy of a non-orthogonal H, S pair by the submatrix method:
     S^(-1/2) by the submatrix machinery (eigenvalues^(-1/2) instead of the step function),
     H_orth = S^(-1/2) H S^(-1/2) (MatPtAP), P_orth from H_orth, E_band = 2 Tr(P_orth H_orth)
   (= 2 Tr(P H) with P = S^(-1/2) P_orth S^(-1/2)), as CP2K's LS_SCF does with its sign methods. */
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
   the upper triangle in ri/ci/v (rank 0 only). */
static PetscErrorCode FoldFullMatrix(const char file[], PetscInt *nnz, PetscInt *ri, PetscInt *ci, PetscReal *v, const long *lineof)
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
      PetscCheck(!paired, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: diagonal entry (%" PetscInt_FMT ",%" PetscInt_FMT ") appears twice (also line %ld)", file, e[k + 1].line, a->i + 1, a->i + 1, a->line);
    } else {
      PetscCheck(paired && !a->lower && e[k + 1].lower, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") has no mirror (%" PetscInt_FMT ",%" PetscInt_FMT "): a full CP2K matrix holds both triangles (or write only the upper one with UPPER_TRIANGULAR T)", file, a->line, a->lower ? a->j + 1 : a->i + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->i + 1 : a->j + 1, a->lower ? a->j + 1 : a->i + 1);
      PetscCheck(PetscAbsReal(a->v - e[k + 1].v) <= SG_CSR_SYMM_TOL * vmax, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: the matrix is not symmetric: entry (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g but (%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g (line %ld); tolerance %g of the largest |entry| %g", file, e[k + 1].line, a->j + 1, a->i + 1, (double)e[k + 1].v, a->i + 1, a->j + 1, (double)a->v, a->line, SG_CSR_SYMM_TOL, (double)vmax);
    }
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

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    FILE *fp = fopen(file, "r");
    char  line[512];
    long  lineno = 0;
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open CP2K CSR file '%s'", file);
    while (fgets(line, sizeof line, fp)) {
      long   a, b;
      double x;
      lineno++;
      if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
      PetscCheck(sscanf(line, "%ld %ld %lf", &a, &b, &x) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: expected 'row col value', got '%.60s'", file, lineno, line);
      PetscCheck(a >= 1 && b >= 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: indices are 1-based, got %ld %ld", file, lineno, a, b);
      if (b < a) full = PETSC_TRUE;
      PetscCheck(n <= 0 || PetscMax(a, b) <= n, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s:%ld: index %ld exceeds the expected matrix size %" PetscInt_FMT ": the CSR file does not match the system (wrong file, or wrong block sizes/number of molecules)", file, lineno, PetscMax(a, b), n);
      if (nnz == cap) {
        cap = cap ? 2 * cap : 65536;
        PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &ri)); PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &ci)); PetscCall(PetscRealloc(sizeof(PetscReal) * cap, &v));
        PetscCall(PetscRealloc(sizeof(long) * cap, &lineof));
      }
      ri[nnz] = a - 1; ci[nnz] = b - 1; v[nnz] = x; lineof[nnz] = lineno; nnz++;
      nmax = PetscMax(nmax, (PetscInt)PetscMax(a, b));
    }
    fclose(fp);
    PetscCheck(nnz > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "CP2K CSR file '%s' holds no entries", file);
    if (full) PetscCall(FoldFullMatrix(file, &nnz, ri, ci, v, lineof));
    PetscCall(PetscFree(lineof));
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
  PetscCall(SgTBSubmatrixPower(S, b, o, -0.5, &X));
  PetscCall(MatPtAP(H, X, MAT_INITIAL_MATRIX, 2.0, &Ho));
  PetscCall(SgTBDensityCompute(Ho, b, NULL, o, dm));
  *eband = dm->ebandsum;
  PetscCall(MatDestroy(&Ho));
  PetscCall(MatDestroy(&X));
  PetscFunctionReturn(PETSC_SUCCESS);
}
