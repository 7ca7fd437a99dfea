/* The state <-> field conversions of physics/boussinesq that its field slots use (bq_state.c), on
   random states (every kept mode, every Chebyshev node; mode 0 real, no psi in mode 0):
   - export to the native grid then import gives back psi, b, u0 to round-off (1e-12 relative to the
     largest coefficient: one forward and one inverse FFT of nx points, and w / (i k) for psi);
   - the spectral interpolation coarse (64 x 17) -> fine (128 x 33) is exact: the fine state is the same
     function, so at 190 random points its b, psi and u0 equal the coarse ones to 1e-12 relative (and
     at points 0.01 outside [0, Lz], where both extrapolate the same polynomial, to 1e-11 relative to
     the value there);
   - the grid evaluator (SgBqGridEval: one matrix product in z, a Fourier sum in x) equals the point
     evaluator on a grid of arbitrary points, and a row block of the grid equals the whole grid's rows
     (1e-13);
   - exported fields on the native grid equal the point evaluator at the grid points (1e-12);
   - the written (output) grid: a state whose every mode is a degree-5 polynomial in z comes back from
     export to the 64 x 16 uniform grid and import (6-point Lagrange from the uniform points to the
     17 Chebyshev nodes, exact for degree 5) to 1e-12 relative (the other states of this test would
     not: the import is an interpolation in z; its accuracy on a flow is in slots_test.py). */
#include <math.h>
#include "../../../physics/boussinesq/bq.h"

static int Check(const char *what, double err, double tol)
{
  int bad = !(err <= tol);
  PetscPrintf(PETSC_COMM_WORLD, "%s %-70s error %.2e (tol %.0e)\n", bad ? "FAIL" : "ok  ", what, err, tol);
  return bad;
}

static PetscErrorCode NewBq(PetscInt nx, PetscInt nz, Bq **out)
{
  Bq *bq;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bq));
  bq->Ra = 1e5;
  bq->Pr = 1;
  bq->Lx = 4;
  bq->Lz = 1;
  bq->nx = nx;
  bq->nz = nz;
  bq->out_nz = nz - 1;
  bq->cfl = 0.5;
  bq->max_dt = 0.01;
  bq->dt_threshold = 0.1;
  bq->noise = 0;
  bq->seed = 1;
  bq->conductive = PETSC_TRUE;
  PetscCall(SgBqSetUpData(bq, PETSC_COMM_WORLD));
  PetscCall(SgBqRegisterEvents(bq));
  *out = bq;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static double Rand(uint64_t i, uint64_t s) { return 2 * SgRandomUniform(99, s, i) - 1; }

/* a random state with decaying modes (smooth enough that the pressure solve is well posed) */
static void RandomState(Bq *bq)
{
  const PetscInt n = bq->n;
  for (PetscInt c = 0; c < bq->ncol; c++)
    for (PetscInt j = 0; j < n; j++) {
      const PetscInt m = c / 2;
      const double   damp = 1.0 / (1 + m * m);
      bq->b[c * n + j]   = (c == 1) ? 0 : damp * Rand(c * n + j, 1);
      bq->psi[c * n + j] = (m == 0) ? 0 : damp * Rand(c * n + j, 2);
    }
  for (PetscInt j = 0; j < n; j++) bq->u0[j] = Rand(j, 3);
}

static double MaxAbs(const PetscReal *a, PetscInt n)
{
  double m = 0;
  for (PetscInt i = 0; i < n; i++) m = PetscMax(m, PetscAbsReal(a[i]));
  return m;
}

int main(int argc, char **argv)
{
  Bq       *c, *f;
  int       bad = 0;
  PetscReal *keep, *v, *Irow;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(NewBq(64, 17, &c));
  PetscCall(NewBq(128, 33, &f));
  RandomState(c);
  { /* export -> import */
    const PetscInt S = c->n * c->ncol;
    double         e = 0, scale;
    PetscCall(PetscMalloc2(2 * S + c->n, &keep, SG_BQ_NCH * c->n * c->nx, &v));
    PetscCall(PetscArraycpy(keep, c->psi, S));
    PetscCall(PetscArraycpy(keep + S, c->b, S));
    PetscCall(PetscArraycpy(keep + 2 * S, c->u0, c->n));
    scale = MaxAbs(keep, 2 * S + c->n);
    PetscCall(SgBqExportNative(c, v));
    PetscCall(PetscArrayzero(c->psi, S));
    PetscCall(PetscArrayzero(c->b, S));
    PetscCall(PetscArrayzero(c->u0, c->n));
    PetscCall(SgBqImportNative(c, v));
    for (PetscInt i = 0; i < S; i++) e = PetscMax(e, PetscMax(PetscAbsReal(c->psi[i] - keep[i]), PetscAbsReal(c->b[i] - keep[S + i])));
    for (PetscInt j = 0; j < c->n; j++) e = PetscMax(e, PetscAbsReal(c->u0[j] - keep[2 * S + j]));
    bad |= Check("export to the native grid, import: psi, b, u0 back", e / scale, 1e-12);
  }
  { /* the exported fields are the point evaluation of the field coefficients at the grid points */
    PetscReal *cf[SG_BQ_NCH];
    double     e = 0, scale = MaxAbs(v, SG_BQ_NCH * c->n * c->nx);
    PetscCall(PetscMalloc1(c->n, &Irow));
    for (int q = 0; q < SG_BQ_NCH; q++) PetscCall(PetscMalloc1(c->n * c->ncol, &cf[q]));
    PetscCall(SgBqFieldCoefficients(c, cf));
    for (int q = 0; q < SG_BQ_NCH; q++)
      for (PetscInt j = 0; j < c->n; j += 3)
        for (PetscInt i = 0; i < c->nx; i += 5) e = PetscMax(e, PetscAbsReal(v[(q * c->n + j) * c->nx + i] - SgBqEvalPoint(c, cf[q], c->z[j], i * c->Lx / c->nx, Irow)));
    bad |= Check("exported p, b, u, w = point evaluation at the native grid points", e / scale, 1e-12);
    for (int q = 0; q < SG_BQ_NCH; q++) PetscCall(PetscFree(cf[q]));
  }
  { /* coarse -> fine interpolation is exact */
    const PetscInt S = c->n * c->ncol;
    PetscReal     *If;
    double         e = 0, eo = 0, so = 0, scale = MaxAbs(keep, 2 * S + c->n);
    PetscCall(PetscMalloc1(f->n, &If));
    PetscCall(SgBqInterpolateState(c, c->psi, c->b, c->u0, f));
    for (PetscInt k = 0; k < 200; k++) { /* the last 10 points lie 0.01 outside the walls */
      PetscReal z = (k < 190 ? 0.5 + 0.5 * Rand(k, 4) : (k % 2 ? -0.01 : 1.01)) * c->Lz, x = (1 + Rand(k, 5)) * 0.5 * c->Lx;
      PetscReal d = PetscMax(PetscAbsReal(SgBqEvalPoint(c, c->b, z, x, Irow) - SgBqEvalPoint(f, f->b, z, x, If)), PetscAbsReal(SgBqEvalPoint(c, c->psi, z, x, Irow) - SgBqEvalPoint(f, f->psi, z, x, If)));
      if (k < 190) e = PetscMax(e, d);
      else {
        eo = PetscMax(eo, d);
        so = PetscMax(so, PetscAbsReal(SgBqEvalPoint(c, c->b, z, x, Irow)));
      }
    }
    /* outside, the random degree-16 polynomial grows (to |b| = so) and so does the round-off of
       evaluating it through two different node sets */
    bad |= Check("64 x 17 -> 128 x 33: b, psi at 10 points 0.01 outside [0, Lz] (relative to |b| there)", eo / so, 1e-11);
    for (PetscInt j = 0; j < f->n; j++) {
      PetscReal cu = 0;
      SgBqChebInterpMatrix(c, 1, &f->z[j], Irow);
      for (PetscInt k = 0; k < c->n; k++) cu += Irow[k] * c->u0[k];
      e = PetscMax(e, PetscAbsReal(cu - f->u0[j]));
    }
    bad |= Check("64 x 17 -> 128 x 33: b, psi at 190 random points, u0 at the fine nodes: same function", e / scale, 1e-12);
    PetscCall(PetscFree(If));
  }
  { /* grid evaluator = point evaluator; a row block = the rows of the whole grid */
    const PetscInt nzq = 7, nxq = 11;
    PetscReal      zq[7], xq[11], full[77], part[77];
    SgBqGridEval   ge;
    double         e = 0, scale = MaxAbs(c->b, c->n * c->ncol);
    for (PetscInt j = 0; j < nzq; j++) zq[j] = (0.5 + 0.49 * Rand(j, 6)) * c->Lz;
    for (PetscInt i = 0; i < nxq; i++) xq[i] = 2 * c->Lx * Rand(i, 7); /* outside [0, Lx) too: periodic */
    PetscCall(SgBqGridEvalCreate(c, nzq, zq, nxq, xq, &ge));
    PetscCall(SgBqGridEvalApply(c, &ge, c->b, 0, nzq, full));
    PetscCall(SgBqGridEvalApply(c, &ge, c->b, 2, 5, part));
    for (PetscInt j = 0; j < nzq; j++)
      for (PetscInt i = 0; i < nxq; i++) e = PetscMax(e, PetscAbsReal(full[j * nxq + i] - SgBqEvalPoint(c, c->b, zq[j], xq[i], Irow)));
    for (PetscInt j = 2; j < 5; j++)
      for (PetscInt i = 0; i < nxq; i++) e = PetscMax(e, PetscAbsReal(full[j * nxq + i] - part[(j - 2) * nxq + i]));
    bad |= Check("grid evaluation = point evaluation (7 x 11 points), row block = rows", e / scale, 1e-13);
    PetscCall(SgBqGridEvalDestroy(&ge));
  }
  { /* the output grid: exact for degree-5 polynomials in z */
    const PetscInt S = c->n * c->ncol;
    PetscReal     *w;
    double         e = 0, scale;
    for (PetscInt col = 0; col < c->ncol; col++)
      for (PetscInt j = 0; j < c->n; j++) {
        const PetscInt m = col / 2;
        PetscReal      z = c->z[j], pb = 0, pp = 0;
        for (int d = 5; d >= 0; d--) {
          pb = pb * z + Rand(col * 6 + d, 8) / (1 + m * m);
          pp = pp * z + Rand(col * 6 + d, 9) / (1 + m * m);
        }
        c->b[col * c->n + j]   = col == 1 ? 0 : pb;
        c->psi[col * c->n + j] = m == 0 ? 0 : pp;
      }
    for (PetscInt j = 0; j < c->n; j++) c->u0[j] = 0.3 - c->z[j] * (1 - c->z[j]) * (1 + 2 * c->z[j]);
    PetscCall(PetscArraycpy(keep, c->psi, S));
    PetscCall(PetscArraycpy(keep + S, c->b, S));
    PetscCall(PetscArraycpy(keep + 2 * S, c->u0, c->n));
    scale = MaxAbs(keep, 2 * S + c->n);
    PetscCall(PetscMalloc1(SG_BQ_NCH * c->out_nz * c->nx, &w));
    PetscCall(SgBqExportOutput(c, w));
    PetscCall(SgBqImportOutput(c, w));
    for (PetscInt i = 0; i < S; i++) e = PetscMax(e, PetscMax(PetscAbsReal(c->psi[i] - keep[i]), PetscAbsReal(c->b[i] - keep[S + i])));
    for (PetscInt j = 0; j < c->n; j++) e = PetscMax(e, PetscAbsReal(c->u0[j] - keep[2 * S + j]));
    bad |= Check("written grid 64 x 16 and back: degree-5 polynomials in z exact", e / scale, 1e-12);
    PetscCall(PetscFree(w));
  }
  PetscCall(PetscFree(Irow));
  PetscCall(PetscFree2(keep, v));
  PetscCall(SgBqDestroyData(c));
  PetscCall(SgBqDestroyData(f));
  PetscCall(PetscFree(c));
  PetscCall(PetscFree(f));
  PetscCall(PetscFinalize());
  return bad;
}
