/* Chebyshev-Gauss-Lobatto collocation in z: nodes, differentiation matrices, Clenshaw-Curtis
   weights and the interpolation to a uniform grid.

   Differentiation and interpolation use the barycentric form (Berrut & Trefethen, SIAM Review 46,
   2004): for Chebyshev-Lobatto points the weights are w_j = (-1)^j, halved at both ends, and
   D_ij = (w_j / w_i) / (z_i - z_j), i != j; the diagonal is minus the off-diagonal row sum, which
   makes D exact on constants to round-off (Baltensperger & Trummer, SIAM J. Sci. Comput. 24, 2003).
   Quadrature weights: Clenshaw-Curtis (Trefethen, Spectral Methods in MATLAB, 2000, ch. 12). */
#include "bq.h"

static PetscReal BaryWeight(PetscInt j, PetscInt N)
{
  PetscReal w = (j % 2) ? -1.0 : 1.0;
  return (j == 0 || j == N) ? 0.5 * w : w;
}

/* I (m x n, column-major): the values at zo[0..m-1] of the polynomial through the values at the n
   Chebyshev-Lobatto nodes, barycentric form (exact at a node; valid slightly outside [0, Lz] too). */
void SgBqChebInterpMatrix(const Bq *bq, PetscInt m, const PetscReal zo[], PetscReal *Imat)
{
  const PetscInt n = bq->n, N = n - 1;

  for (PetscInt k = 0; k < m; k++) {
    PetscReal den = 0;
    PetscInt  hit = -1;
    for (PetscInt j = 0; j < n; j++)
      if (zo[k] == bq->z[j]) hit = j;
    for (PetscInt j = 0; j < n; j++) {
      PetscReal c = hit >= 0 ? (j == hit) : BaryWeight(j, N) / (zo[k] - bq->z[j]);
      Imat[k + j * m] = c;
      den += c;
    }
    for (PetscInt j = 0; j < n; j++) Imat[k + j * m] /= den;
  }
}

PetscErrorCode SgBqChebSetUp(Bq *bq)
{
  const PetscInt n = bq->n, N = n - 1;

  PetscFunctionBegin;
  PetscCall(PetscMalloc5(n, &bq->z, n, &bq->wq, n * n, &bq->D, n * n, &bq->D2, n * n, &bq->D3));
  PetscCall(PetscMalloc1(bq->out_nz * n, &bq->Iout));
  /* 1 - cos(theta) written as 2 sin^2(theta/2): exact zero at the bottom wall, no cancellation */
  for (PetscInt j = 0; j < n; j++) bq->z[j] = bq->Lz * PetscSqr(PetscSinReal(0.5 * PETSC_PI * j / N));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal s = 0;
    for (PetscInt j = 0; j < n; j++) {
      if (i == j) continue;
      PetscReal d = (BaryWeight(j, N) / BaryWeight(i, N)) / (bq->z[i] - bq->z[j]);
      bq->D[i + j * n] = d;
      s += d;
    }
    bq->D[i + i * n] = -s;
  }
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 0; j < n; j++) {
      PetscReal s = 0;
      for (PetscInt k = 0; k < n; k++) s += bq->D[i + k * n] * bq->D[k + j * n];
      bq->D2[i + j * n] = s;
    }
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 0; j < n; j++) {
      PetscReal s = 0;
      for (PetscInt k = 0; k < n; k++) s += bq->D[i + k * n] * bq->D2[k + j * n];
      bq->D3[i + j * n] = s;
    }
  /* Clenshaw-Curtis on [-1, 1], scaled to [0, Lz] */
  for (PetscInt j = 0; j < n; j++) {
    PetscReal th = PETSC_PI * j / N, v = 1.0;
    if (j == 0 || j == N) {
      bq->wq[j] = (N % 2 == 0 ? 1.0 / (N * N - 1.0) : 1.0 / (N * (PetscReal)N)) * 0.5 * bq->Lz;
      continue;
    }
    if (N % 2 == 0) {
      for (PetscInt k = 1; k < N / 2; k++) v -= 2 * PetscCosReal(2 * k * th) / (4.0 * k * k - 1);
      v -= PetscCosReal(N * th) / (N * (PetscReal)N - 1);
    } else
      for (PetscInt k = 1; k <= (N - 1) / 2; k++) v -= 2 * PetscCosReal(2 * k * th) / (4.0 * k * k - 1);
    bq->wq[j] = 2 * v / N * 0.5 * bq->Lz;
  }
  /* barycentric interpolation to the cell-centred uniform points (k + 1/2) Lz / out_nz */
  {
    PetscReal *zo;
    PetscCall(PetscMalloc1(bq->out_nz, &zo));
    for (PetscInt k = 0; k < bq->out_nz; k++) zo[k] = (k + 0.5) * bq->Lz / bq->out_nz;
    SgBqChebInterpMatrix(bq, bq->out_nz, zo, bq->Iout);
    PetscCall(PetscFree(zo));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
