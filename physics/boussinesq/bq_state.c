/* The solver's state as physical fields and back, for the field slots (bq_advance.c, bq_superres.c).

   - Field coefficients: p (the diagnostic pressure), b, u, w as coefficient arrays (bq.h).
   - Evaluation of coefficient arrays at any points: in z the polynomial through the Chebyshev values
     (barycentric, SgBqChebInterpMatrix), in x the Fourier sum f = C_0 + 2 Re sum_{m>=1} C_m e^{i k_m x};
     exact for the discrete solution, on any grid (a tensor grid by one matrix product per field).
   - The native grid (x_i = i Lx / nx, the Chebyshev nodes z_j): export by the solver's own inverse
     FFT, import by the forward FFT: b from b, psi from w (w = i k psi, m >= 1), the mean flow u0 from
     the x-mean of u. Export then import gives back the state to round-off (the nx points carry the
     nx/2 kept modes exactly; the Nyquist mode, never part of the state, is dropped).
   - The written (output) grid (x_i = (i + 1/2) Lx / nx, z_k = (k + 1/2) Lz / out_nz): export exactly
     (SgBqGridEval), import approximately: in x the forward FFT with the half-cell phase undone
     (exact), in z from the uniform points to the Chebyshev nodes by local Lagrange interpolation
     on the 6 nearest points (one-sided at the walls, which lie half a cell outside the grid):
     exact for a degree-5 polynomial in z, O(h^6) otherwise. The next IMEX stage restores the wall
     conditions (boundary rows), which the interpolation meets only to that order.
   - Spectral interpolation of one Bq's state onto another's grid (the coarse -> fine start of the
     field.superres fine solve): the same polynomial in z, zero-padded Fourier modes in x. */
#include "bq.h"

const char *const SgBqChannels[SG_BQ_NCH] = {"p", "b", "u", "w"};

PetscErrorCode SgBqFieldCoefficients(Bq *bq, PetscReal *c[SG_BQ_NCH])
{
  const PetscInt n = bq->n;

  PetscFunctionBegin;
  PetscCall(SgBqMomentumAdvection(bq, bq->work[4], bq->work[5]));
  PetscCall(SgBqPressure(bq, bq->work[4], bq->work[5], c[0]));
  PetscCall(SgBqGatherModes(bq, c[0]));
  PetscCall(PetscArraycpy(c[1], bq->b, n * bq->ncol));
  PetscCall(SgBqVelocity(bq, 0, n, c[2], c[3], bq->work[2], bq->work[3]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqGridEvalCreate(Bq *bq, PetscInt nz, const PetscReal zq[], PetscInt nx, const PetscReal xq[], SgBqGridEval *e)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(e, sizeof *e));
  e->nz = nz;
  e->nx = nx;
  PetscCall(PetscMalloc4(nz * bq->n, &e->Iz, nx * bq->nk, &e->cs, nx * bq->nk, &e->sn, nz * bq->ncol, &e->g));
  SgBqChebInterpMatrix(bq, nz, zq, e->Iz);
  for (PetscInt i = 0; i < nx; i++)
    for (PetscInt m = 0; m < bq->nk; m++) {
      const PetscReal a = Wavenumber(bq, m) * xq[i];
      e->cs[i * bq->nk + m] = (m ? 2 : 1) * PetscCosReal(a);
      e->sn[i * bq->nk + m] = (m ? 2 : 1) * PetscSinReal(a);
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqGridEvalDestroy(SgBqGridEval *e)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(e->Iz, e->cs, e->sn, e->g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out[j nx + i] = f(zq[j], xq[i]) for the rows j in [j0, j1) (out starts at row j0) */
PetscErrorCode SgBqGridEvalApply(Bq *bq, SgBqGridEval *e, const PetscReal *f, PetscInt j0, PetscInt j1, PetscReal *out)
{
  const PetscInt nk = bq->nk;
  PetscBLASInt   m, n, nc;
  PetscReal      one = 1, zero = 0;

  PetscFunctionBegin;
  if (j1 <= j0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscBLASIntCast(j1 - j0, &m));
  PetscCall(PetscBLASIntCast(bq->n, &n));
  PetscCall(PetscBLASIntCast(bq->ncol, &nc));
  { /* g (rows j0..j1, all columns) = Iz(j0..j1, :) f */
    PetscBLASInt ld;
    PetscCall(PetscBLASIntCast(e->nz, &ld));
    PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &m, &nc, &n, &one, e->Iz + j0, &ld, f, &n, &zero, e->g, &m));
  }
  for (PetscInt j = 0; j < j1 - j0; j++)
    for (PetscInt i = 0; i < e->nx; i++) {
      const PetscReal *cs = e->cs + i * nk, *sn = e->sn + i * nk;
      PetscReal        v  = 0;
      for (PetscInt k = 0; k < nk; k++) v += e->g[2 * k * (j1 - j0) + j] * cs[k] - e->g[(2 * k + 1) * (j1 - j0) + j] * sn[k];
      out[j * e->nx + i] = v;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscReal SgBqEvalPoint(const Bq *bq, const PetscReal *f, PetscReal z, PetscReal x, PetscReal *Irow)
{
  const PetscInt n = bq->n;
  PetscReal      v = 0;

  SgBqChebInterpMatrix(bq, 1, &z, Irow);
  for (PetscInt m = 0; m < bq->nk; m++) {
    PetscReal re = 0, im = 0, a = Wavenumber(bq, m) * x;
    for (PetscInt j = 0; j < n; j++) {
      re += Irow[j] * f[2 * m * n + j];
      im += Irow[j] * f[(2 * m + 1) * n + j];
    }
    v += (m ? 2 : 1) * (re * PetscCosReal(a) - im * PetscSinReal(a));
  }
  return v;
}

PetscErrorCode SgBqExportNative(Bq *bq, PetscReal *v)
{
  const PetscInt n = bq->n, nx = bq->nx;
  PetscReal     *c[SG_BQ_NCH] = {bq->fc[0], bq->fc[1], bq->fc[2], bq->fc[3]};

  PetscFunctionBegin;
  PetscCall(SgBqFieldCoefficients(bq, c));
  for (PetscInt q = 0; q < SG_BQ_NCH; q++)
    for (PetscInt j = 0; j < n; j++) {
      PetscCall(SgBqToPhysicalRow(bq, c[q], n, j, 0, PETSC_FALSE, bq->rbuf));
      PetscCall(PetscArraycpy(v + (q * n + j) * nx, bq->rbuf, nx));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* modes m < nk of one row of nx physical values (forward FFT / nx) into column pairs of a */
static void RowToModes(Bq *bq, const PetscReal *row, PetscInt j, PetscReal *a)
{
  const PetscInt n = bq->n;

  for (PetscInt i = 0; i < bq->nx; i++) bq->rbuf[i] = row[i];
  fftw_execute_dft_r2c(bq->r2c_out, bq->rbuf, bq->cbuf);
  for (PetscInt m = 0; m < bq->nk; m++) {
    a[2 * m * n + j]       = creal(bq->cbuf[m]) / bq->nx;
    a[(2 * m + 1) * n + j] = m ? cimag(bq->cbuf[m]) / bq->nx : 0;
  }
}

PetscErrorCode SgBqImportNative(Bq *bq, const PetscReal *v)
{
  const PetscInt n = bq->n, nx = bq->nx;
  PetscReal     *W = bq->work[0], *U = bq->work[1];

  PetscFunctionBegin;
  for (PetscInt j = 0; j < n; j++) {
    RowToModes(bq, v + (1 * n + j) * nx, j, bq->b);
    RowToModes(bq, v + (2 * n + j) * nx, j, U);
    RowToModes(bq, v + (3 * n + j) * nx, j, W);
  }
  for (PetscInt j = 0; j < n; j++) {
    bq->u0[j]      = U[j];
    bq->psi[j]     = bq->psi[n + j] = 0;
    for (PetscInt m = 1; m < bq->nk; m++) { /* psi = w / (i k) */
      const PetscReal k = Wavenumber(bq, m);
      bq->psi[2 * m * n + j]       = W[(2 * m + 1) * n + j] / k;
      bq->psi[(2 * m + 1) * n + j] = -W[2 * m * n + j] / k;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqInterpolateState(const Bq *from, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, Bq *to)
{
  const PetscInt nf = from->n, nt = to->n, ncol = PetscMin(from->ncol, to->ncol);
  PetscReal     *Im;
  PetscBLASInt   m, n, nc, one = 1;
  PetscReal      a = 1, z0 = 0;

  PetscFunctionBegin;
  PetscCheck(from->Lx == to->Lx && from->Lz == to->Lz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "boussinesq: interpolation between boxes %g x %g and %g x %g", (double)from->Lx, (double)from->Lz, (double)to->Lx, (double)to->Lz);
  PetscCall(PetscMalloc1(nt * nf, &Im));
  SgBqChebInterpMatrix(from, nt, to->z, Im);
  PetscCall(PetscBLASIntCast(nt, &m));
  PetscCall(PetscBLASIntCast(nf, &n));
  PetscCall(PetscBLASIntCast(ncol, &nc));
  PetscCall(PetscArrayzero(to->psi, nt * to->ncol));
  PetscCall(PetscArrayzero(to->b, nt * to->ncol));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &m, &nc, &n, &a, Im, &m, psi, &n, &z0, to->psi, &m));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &m, &nc, &n, &a, Im, &m, b, &n, &z0, to->b, &m));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &m, &one, &n, &a, Im, &m, u0, &n, &z0, to->u0, &m));
  PetscCall(PetscFree(Im));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The n x out_nz matrix (column-major) taking values at the uniform cell-centred points to the
   Chebyshev nodes: row j holds the Lagrange weights of the 6 (or out_nz,
   if fewer) points nearest z_j. */
static PetscErrorCode UniformToNodes(Bq *bq, PetscReal **M)
{
  const PetscInt n = bq->n, m = bq->out_nz, w = PetscMin(6, m);
  const PetscReal h = bq->Lz / m;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(n * m, M));
  for (PetscInt j = 0; j < n; j++) {
    PetscInt k0 = (PetscInt)PetscFloorReal(bq->z[j] / h - 0.5) - (w / 2 - 1);
    k0 = PetscMin(PetscMax(k0, 0), m - w);
    for (PetscInt a = 0; a < w; a++) {
      PetscReal l = 1, za = (k0 + a + 0.5) * h;
      for (PetscInt b = 0; b < w; b++)
        if (b != a) l *= (bq->z[j] - (k0 + b + 0.5) * h) / (za - (k0 + b + 0.5) * h);
      (*M)[j + (k0 + a) * n] = l;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqExportOutput(Bq *bq, PetscReal *v)
{
  const PetscInt no = bq->out_nz, nx = bq->nx;
  PetscReal     *c[SG_BQ_NCH] = {bq->fc[0], bq->fc[1], bq->fc[2], bq->fc[3]}, *zq, *xq;
  SgBqGridEval   ge;

  PetscFunctionBegin;
  PetscCall(SgBqFieldCoefficients(bq, c));
  PetscCall(PetscMalloc2(no, &zq, nx, &xq));
  for (PetscInt k = 0; k < no; k++) zq[k] = (k + 0.5) * bq->Lz / no;
  for (PetscInt i = 0; i < nx; i++) xq[i] = (i + 0.5) * bq->Lx / nx;
  PetscCall(SgBqGridEvalCreate(bq, no, zq, nx, xq, &ge));
  for (PetscInt q = 0; q < SG_BQ_NCH; q++) PetscCall(SgBqGridEvalApply(bq, &ge, c[q], 0, no, v + q * no * nx));
  PetscCall(SgBqGridEvalDestroy(&ge));
  PetscCall(PetscFree2(zq, xq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqImportOutput(Bq *bq, const PetscReal *v)
{
  const PetscInt n = bq->n, no = bq->out_nz, nx = bq->nx;
  PetscReal     *M, *modes, *nodes;
  PetscBLASInt   bn, bm, bc;
  PetscReal      one = 1, zero = 0;

  PetscFunctionBegin;
  PetscCall(UniformToNodes(bq, &M));
  PetscCall(PetscMalloc2(no * bq->ncol, &modes, SG_BQ_NCH * n * bq->ncol, &nodes));
  PetscCall(PetscBLASIntCast(n, &bn));
  PetscCall(PetscBLASIntCast(no, &bm));
  PetscCall(PetscBLASIntCast(bq->ncol, &bc));
  for (PetscInt q = 1; q < SG_BQ_NCH; q++) { /* b, u, w: rows to modes (undoing the half-cell shift), then z to the nodes */
    for (PetscInt k = 0; k < no; k++) {
      for (PetscInt i = 0; i < nx; i++) bq->rbuf[i] = v[(q * no + k) * nx + i];
      fftw_execute_dft_r2c(bq->r2c_out, bq->rbuf, bq->cbuf);
      for (PetscInt m = 0; m < bq->nk; m++) {
        double complex c = bq->cbuf[m] / nx * cexp(-I * PETSC_PI * m / nx);
        modes[2 * m * no + k]       = creal(c);
        modes[(2 * m + 1) * no + k] = m ? cimag(c) : 0;
      }
    }
    PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &bn, &bc, &bm, &one, M, &bn, modes, &bm, &zero, nodes + q * n * bq->ncol, &bn));
  }
  {
    const PetscReal *B = nodes + n * bq->ncol, *U = nodes + 2 * n * bq->ncol, *W = nodes + 3 * n * bq->ncol;
    PetscCall(PetscArraycpy(bq->b, B, n * bq->ncol));
    for (PetscInt j = 0; j < n; j++) {
      bq->u0[j]  = U[j];
      bq->psi[j] = bq->psi[n + j] = 0;
      for (PetscInt m = 1; m < bq->nk; m++) {
        const PetscReal k = Wavenumber(bq, m);
        bq->psi[2 * m * n + j]       = W[(2 * m + 1) * n + j] / k;
        bq->psi[(2 * m + 1) * n + j] = -W[2 * m * n + j] / k;
      }
    }
  }
  PetscCall(PetscFree2(modes, nodes));
  PetscCall(PetscFree(M));
  PetscFunctionReturn(PETSC_SUCCESS);
}
