/* Initial conditions: L2 projection of a sum of drifting Maxwellians (or a top-hat) onto the modal basis.

   Every component is separable, n(x) * prod_j G_j(v_j), and the basis functions are products of
   1D Legendre polynomials, so the projection onto the phase basis is the product of the
   projections of n onto the configuration basis and of each G_j onto 1D Legendre polynomials
   (exact for the tensor basis, and for serendipity because its basis is a subset of the same
   products). Those small projections use Gauss-Legendre quadrature at set-up only; the time
   update itself has no quadrature. */
#include "vlasov.h"

#define NQ 16

PetscReal SgVlasovLegendre(PetscInt n, PetscReal x)
{
  PetscReal p0 = 1, p1 = x, p2;
  if (n == 0) return PetscSqrtReal(0.5);
  for (PetscInt k = 2; k <= n; k++) {
    p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
    p0 = p1; p1 = p2;
  }
  return PetscSqrtReal(0.5 * (2 * n + 1)) * p1;
}

/* Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n). */
void SgVlasovGaussLegendre(PetscInt n, PetscReal x[], PetscReal w[])
{
  for (PetscInt i = 0; i < n; i++) {
    PetscReal z = PetscCosReal(PETSC_PI * (i + 0.75) / (n + 0.5)), dp = 1;
    for (int it = 0; it < 100; it++) {
      PetscReal p0 = 1, p1 = z;
      for (PetscInt k = 2; k <= n; k++) {
        PetscReal p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1; p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      PetscReal dz = p1 / dp;
      z -= dz;
      if (PetscAbsReal(dz) < 1e-16) break;
    }
    x[i] = z;
    w[i] = 2 / ((1 - z * z) * dp * dp);
  }
}

static PetscReal Density(const SgVlasovSpecies *s, const SgVlasovMaxwellian *c, PetscInt cdim, const PetscReal x[])
{
  PetscReal kx = 0;
  for (PetscInt d = 0; d < cdim; d++) kx += s->k[d] * x[d];
  return c->density * (1 + s->pert * PetscCosReal(kx));
}

/* The component's 1D velocity factor along v_j at v (Maxwellian or top-hat). */
static PetscReal Gauss1(const SgVlasovMaxwellian *c, PetscInt j, PetscReal v)
{
  if (c->tophat) return PetscAbsReal(v - c->drift[j]) < c->width[j] ? 0.5 / c->width[j] : 0;
  PetscReal u = (v - c->drift[j]) / c->vt;
  return PetscExpReal(-0.5 * u * u) / (PetscSqrtReal(2 * PETSC_PI) * c->vt);
}

/* Legendre moments g[n] = int_{-1}^{1} L_n(eta) G(v(eta)) deta of the component's factor G on the
   velocity cell [lo, lo + dv]. A Maxwellian: NQ-point Gauss (smooth). A top-hat: G is a constant on
   the part of the cell inside it, so Gauss on that sub-interval integrates the polynomial L_n
   exactly: the projection is exact wherever the edges fall (piecewise integration, no need to put
   the edges on faces). */
static void Project1(const SgVlasovMaxwellian *c, PetscInt j, PetscReal lo, PetscReal dv, PetscInt p, const PetscReal xq[], const PetscReal wq[], PetscReal g[])
{
  if (c->tophat) {
    PetscReal a = PetscMax(-1, (c->drift[j] - c->width[j] - lo) / dv * 2 - 1), b = PetscMin(1, (c->drift[j] + c->width[j] - lo) / dv * 2 - 1);
    for (PetscInt n = 0; n <= p; n++) {
      PetscReal sum = 0;
      if (b > a)
        for (PetscInt q = 0; q < NQ; q++) sum += wq[q] * SgVlasovLegendre(n, 0.5 * (a + b) + 0.5 * (b - a) * xq[q]);
      g[n] = 0.5 * (b - a) * sum * 0.5 / c->width[j];
    }
    return;
  }
  for (PetscInt n = 0; n <= p; n++) {
    PetscReal sum = 0;
    for (PetscInt q = 0; q < NQ; q++) sum += wq[q] * SgVlasovLegendre(n, xq[q]) * Gauss1(c, j, lo + (0.5 + 0.5 * xq[q]) * dv);
    g[n] = sum;
  }
}

PetscErrorCode SgVlasovProject(SgVlasov *v, SgVlasovSpecies *s, Vec f)
{
  const SgVlasovKernels *K = v->kern;
  const PetscInt         cd = v->cdim, pd = v->pdim, p = v->order;
  PetscReal              xq[NQ], wq[NQ], Lq[4][NQ];
  PetscScalar           *fa;
  PetscInt               mofk[256];

  PetscFunctionBegin;
  SgVlasovGaussLegendre(NQ, xq, wq);
  for (PetscInt n = 0; n <= p; n++)
    for (PetscInt q = 0; q < NQ; q++) Lq[n][q] = SgVlasovLegendre(n, xq[q]);
  /* config index of each phase basis function */
  for (PetscInt k = 0; k < v->np; k++) {
    mofk[k] = -1;
    for (PetscInt m = 0; m < v->npx; m++) {
      PetscBool eq = PETSC_TRUE;
      for (PetscInt d = 0; d < cd; d++)
        if (K->alpha[k * pd + d] != K->alphax[m * cd + d]) eq = PETSC_FALSE;
      if (eq) mofk[k] = m;
    }
  }
  PetscCall(VecGetArray(f, &fa));
  PetscReal *tab;
  PetscBool *done;
  PetscCheck(v->npx <= 16, PETSC_COMM_SELF, PETSC_ERR_PLIB, "configuration basis larger than the projection table");
  PetscCall(PetscMalloc2(v->ncx * SG_VLASOV_MAX_COMP * 16, &tab, v->ncx, &done));
  for (PetscInt e = 0; e < v->ncx; e++) done[e] = PETSC_FALSE;
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
          PetscScalar *fc = fa + idx * v->np;
          PetscReal    g[SG_VLASOV_MAX_COMP][3][4];
          PetscReal (*np_)[16] = (PetscReal(*)[16])(tab + cx * SG_VLASOV_MAX_COMP * 16);
          /* the configuration projection depends on the configuration cell only: computed once per
             configuration cell (kept per cell, whatever the storage order of the split), instead of
             once per phase cell: 16^3 points each in 3x, the set-up's cost */
          const PetscBool same = done[cx];
          done[cx] = PETSC_TRUE;
          for (PetscInt c = 0; c < s->ncomp && !same; c++) {
            /* configuration projection */
            for (PetscInt m = 0; m < v->npx; m++) np_[c][m] = 0;
            for (PetscInt qa = 0; qa < NQ; qa++)
              for (PetscInt qb = 0; qb < (cd > 1 ? NQ : 1); qb++)
                for (PetscInt qc = 0; qc < (cd > 2 ? NQ : 1); qc++) {
                  PetscReal x[3], wgt = wq[qa] * (cd > 1 ? wq[qb] : 1) * (cd > 2 ? wq[qc] : 1);
                  x[0] = s->lower[0] + (n[0] + 0.5 + 0.5 * xq[qa]) * s->dx[0];
                  if (cd > 1) x[1] = s->lower[1] + (n[1] + 0.5 + 0.5 * xq[qb]) * s->dx[1];
                  if (cd > 2) x[2] = s->lower[2] + (n[2] + 0.5 + 0.5 * xq[qc]) * s->dx[2];
                  PetscReal val = Density(s, &s->comp[c], cd, x);
                  for (PetscInt m = 0; m < v->npx; m++) {
                    PetscReal phi = Lq[K->alphax[m * cd]][qa] * (cd > 1 ? Lq[K->alphax[m * cd + 1]][qb] : 1) * (cd > 2 ? Lq[K->alphax[m * cd + 2]][qc] : 1);
                    np_[c][m] += wgt * val * phi;
                  }
                }
          }
          for (PetscInt c = 0; c < s->ncomp; c++) {
            /* velocity projections */
            for (PetscInt j = 0; j < v->vdim; j++) {
              PetscInt d = cd + j;
              Project1(&s->comp[c], j, s->lower[d] + n[d] * s->dx[d], s->dx[d], p, xq, wq, g[c][j]);
            }
          }
          for (PetscInt k = 0; k < v->np; k++) {
            PetscReal val = 0;
            for (PetscInt c = 0; c < s->ncomp; c++) {
              PetscReal t = np_[c][mofk[k]];
              for (PetscInt j = 0; j < v->vdim; j++) t *= g[c][j][K->alpha[k * pd + cd + j]];
              val += t;
            }
            fc[k] = val;
          }
  });
  PetscCall(PetscFree2(tab, done));
  PetscCall(VecRestoreArray(f, &fa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Relative L2 error against free streaming of the initial condition, f(x - v t, v, 0)
   (1x1v, field none), by Gauss quadrature over every cell. */
PetscErrorCode SgVlasovFreeStreamError(SgVlasov *v, SgVlasovSpecies *s, PetscReal t, MPI_Comm comm, PetscReal *relerr)
{
  const SgVlasovKernels *K = v->kern;
  const PetscInt         nq = 8;
  PetscReal              xq[8], wq[8], L[4][8], e2[2] = {0, 0}, g2[2];
  const PetscScalar     *fa;

  PetscFunctionBegin;
  SgVlasovGaussLegendre(nq, xq, wq);
  for (PetscInt n = 0; n <= v->order; n++)
    for (PetscInt q = 0; q < nq; q++) L[n][q] = SgVlasovLegendre(n, xq[q]);
  PetscCall(VecGetArrayRead(s->f, &fa));
  PetscInt idx = 0;
  for (PetscInt i1 = s->s[1]; i1 < s->s[1] + s->m[1]; i1++)
    for (PetscInt i0 = s->s[0]; i0 < s->s[0] + s->m[0]; i0++, idx++) {
      const PetscScalar *fc = fa + idx * v->np;
      for (PetscInt qa = 0; qa < nq; qa++)
        for (PetscInt qb = 0; qb < nq; qb++) {
          PetscReal x = s->lower[0] + (i0 + 0.5 + 0.5 * xq[qa]) * s->dx[0], vv = s->lower[1] + (i1 + 0.5 + 0.5 * xq[qb]) * s->dx[1];
          PetscReal fh = 0, fe = 0, xs = x - vv * t;
          for (PetscInt k = 0; k < v->np; k++) fh += fc[k] * L[K->alpha[2 * k]][qa] * L[K->alpha[2 * k + 1]][qb];
          for (PetscInt c = 0; c < s->ncomp; c++) fe += Density(s, &s->comp[c], 1, &xs) * Gauss1(&s->comp[c], 0, vv);
          PetscReal wgt = wq[qa] * wq[qb] * 0.25 * s->dx[0] * s->dx[1];
          e2[0] += wgt * (fh - fe) * (fh - fe);
          e2[1] += wgt * fe * fe;
        }
    }
  PetscCall(VecRestoreArrayRead(s->f, &fa));
  PetscCall(MPIU_Allreduce(e2, g2, 2, MPIU_REAL, MPIU_SUM, comm));
  *relerr = PetscSqrtReal(g2[0] / g2[1]);
  PetscFunctionReturn(PETSC_SUCCESS);
}
