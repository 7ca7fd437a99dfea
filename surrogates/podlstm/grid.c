/* Interpolation matrices between the grids of a field.advance history and the model's (provider.c):
   rows are target points, columns source points, so target = M source. */
#include "sgpodlstm.h"

/* the trigonometric interpolant of n periodic samples at xs[j] (period P) evaluated at xq[i]: T[i][j] */
void SgPodLstmTrigInterp(PetscInt nq, const PetscReal xq[], PetscInt n, const PetscReal xs[], PetscReal P, PetscReal T[])
{
  for (PetscInt i = 0; i < nq; i++)
    for (PetscInt j = 0; j < n; j++) {
      /* (1/n) sum_{|m| < n/2} e^{i k_m (xq - xs)} (+ the Nyquist term cos for even n): the Dirichlet kernel */
      PetscReal d = 2 * PETSC_PI * (xq[i] - xs[j]) / P, s = 1;
      for (PetscInt m = 1; 2 * m < n; m++) s += 2 * PetscCosReal(m * d);
      if (n % 2 == 0) s += PetscCosReal(n / 2 * d);
      T[i * n + j] = s / n;
    }
}

/* the polynomial through (zs, .) evaluated at zq: barycentric form, B[i][j] */
void SgPodLstmBaryInterp(PetscInt nq, const PetscReal zq[], PetscInt n, const PetscReal zs[], PetscReal B[])
{
  PetscReal w[1024];
  for (PetscInt j = 0; j < n; j++) {
    w[j] = 1;
    for (PetscInt k = 0; k < n; k++)
      if (k != j) w[j] /= (zs[j] - zs[k]);
  }
  for (PetscInt i = 0; i < nq; i++) {
    PetscInt hit = -1;
    PetscReal den = 0;
    for (PetscInt j = 0; j < n; j++)
      if (zq[i] == zs[j]) hit = j;
    for (PetscInt j = 0; j < n; j++) B[i * n + j] = 0;
    if (hit >= 0) {
      B[i * n + hit] = 1;
      continue;
    }
    for (PetscInt j = 0; j < n; j++) den += w[j] / (zq[i] - zs[j]);
    for (PetscInt j = 0; j < n; j++) B[i * n + j] = w[j] / (zq[i] - zs[j]) / den;
  }
}

/* cubic Lagrange through the 4 nearest of n uniform cell centres zs, at zq: C[i][j] */
void SgPodLstmCubicInterp(PetscInt nq, const PetscReal zq[], PetscInt n, const PetscReal zs[], PetscReal C[])
{
  for (PetscInt i = 0; i < nq; i++) {
    PetscInt j0 = 0;
    for (PetscInt j = 0; j < n; j++) C[i * n + j] = 0;
    while (j0 + 1 < n && zs[j0 + 1] <= zq[i]) j0++;
    j0 = PetscMin(PetscMax(j0 - 1, 0), PetscMax(n - 4, 0));
    for (PetscInt a = j0; a < PetscMin(j0 + 4, n); a++) {
      PetscReal l = 1;
      for (PetscInt b = j0; b < PetscMin(j0 + 4, n); b++)
        if (b != a) l *= (zq[i] - zs[b]) / (zs[a] - zs[b]);
      C[i * n + a] = l;
    }
  }
}

