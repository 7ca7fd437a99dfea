/* Spectral <-> physical transforms in x and the dealiased advection terms.

   Products are formed on mx = 3 nx / 2 points (the 3/2 rule: modes |m| <= nx/2 - 1 multiply into
   |m| <= nx - 2, and mx >= 3 (nx/2 - 1) + 1 keeps the aliases out of the kept modes; Orszag, J.
   Atmos. Sci. 28, 1971). Each rank transforms the z rows [j0, j1) for all modes and the rows are
   then gathered, so every rank holds the whole right-hand side; the transforms are single 1-D
   FFTW plans (FFTW_ESTIMATE) executed row by row, so a row's arithmetic does not depend on the
   rank count or on the run. */
#include "bq.h"


/* df(j0:j1, :) = D^order(j0:j1, :) f for all columns */
PetscErrorCode SgBqDz(Bq *bq, PetscInt order, const PetscReal *f, PetscReal *df, PetscInt j0, PetscInt j1)
{
  const PetscReal *A = order == 1 ? bq->D : order == 2 ? bq->D2 : bq->D3;
  PetscBLASInt     n, nr, nc;
  PetscReal        one = 1, zero = 0;

  PetscFunctionBegin;
  if (j1 <= j0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscBLASIntCast(bq->n, &n));
  PetscCall(PetscBLASIntCast(j1 - j0, &nr));
  PetscCall(PetscBLASIntCast(bq->ncol, &nc));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &nr, &nc, &n, &one, A + j0, &n, f, &n, &zero, df + j0, &n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g = i k f (x-derivative) on rows [j0, j1); g may alias f */
PetscErrorCode SgBqIkx(Bq *bq, const PetscReal *f, PetscReal *g, PetscInt j0, PetscInt j1)
{
  const PetscInt n = bq->n;

  PetscFunctionBegin;
  for (PetscInt m = 0; m < bq->nk; m++) {
    const PetscReal k = Wavenumber(bq, m);
    for (PetscInt j = j0; j < j1; j++) {
      const PetscReal re = f[2 * m * n + j], im = f[(2 * m + 1) * n + j];
      g[2 * m * n + j]       = -k * im;
      g[(2 * m + 1) * n + j] = k * re;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Physical values of row j of the coefficient array f (leading dimension ld) on the padded grid
   (mx points at x_i = i Lx / mx) or the output grid (nx points at (i + shift) Lx / nx). */
PetscErrorCode SgBqToPhysicalRow(Bq *bq, const PetscReal *f, PetscInt ld, PetscInt j, PetscReal shift, PetscBool padded, double *out)
{
  const PetscInt npts = padded ? bq->mx : bq->nx;

  PetscFunctionBegin;
  for (PetscInt m = 0; m <= npts / 2; m++) bq->cbuf[m] = 0;
  for (PetscInt m = 0; m < bq->nk; m++) {
    double complex c = f[2 * m * ld + j] + I * f[(2 * m + 1) * ld + j];
    if (shift != 0) c *= cexp(I * 2 * PETSC_PI * m * shift / npts);
    bq->cbuf[m] = c;
  }
  fftw_execute_dft_c2r(padded ? bq->c2r_pad : bq->c2r_out, bq->cbuf, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The velocity coefficients on rows [j0, j1): u = -dpsi/dz (+ u0 in mode 0), w = dpsi/dx, and
   their z-derivatives. */
PetscErrorCode SgBqVelocity(Bq *bq, PetscInt j0, PetscInt j1, PetscReal *U, PetscReal *W, PetscReal *Uz, PetscReal *Wz)
{
  const PetscInt n = bq->n;

  PetscFunctionBegin;
  PetscCall(SgBqDz(bq, 1, bq->psi, U, j0, j1));
  PetscCall(SgBqDz(bq, 2, bq->psi, Uz, j0, j1));
  PetscCall(SgBqIkx(bq, U, Wz, j0, j1));
  PetscCall(SgBqIkx(bq, bq->psi, W, j0, j1));
  for (PetscInt c = 0; c < bq->ncol; c++)
    for (PetscInt j = j0; j < j1; j++) {
      U[c * n + j]  = -U[c * n + j];
      Uz[c * n + j] = -Uz[c * n + j];
    }
  for (PetscInt j = j0; j < j1; j++) { /* mode 0: the mean flow (psi_0 = 0) */
    PetscReal du = 0;
    for (PetscInt k = 0; k < n; k++) du += bq->D[j + k * n] * bq->u0[k];
    U[j]      = bq->u0[j];
    Uz[j]     = du;
    U[n + j]  = Uz[n + j] = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The advection terms u dA_q/dx + w dA_q/dz, q < nq, of coefficient arrays A[q] whose z-derivatives
   Az[q] are given, on rows [j0, j1) of this rank; the rows of all ranks are gathered and returned
   as coefficient arrays out[q] (all rows, modes < nk). */
static PetscErrorCode Advect(Bq *bq, PetscInt nq, PetscReal *const A[], PetscReal *const Az[], const PetscReal *U, const PetscReal *W, PetscReal *const out[])
{
  const PetscInt n = bq->n, mx = bq->mx, nc = bq->ncol, stride = nq * nc;
  double        *u = bq->rbuf, *w = u + mx, *fx = w + mx, *fz = fx + mx, *prod = fz + mx;
  PetscMPIInt   *cnt, *dsp;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(bq->ev_fft, 0, 0, 0, 0));
  for (PetscInt j = bq->j0; j < bq->j1; j++) {
    PetscReal *row = bq->rows + j * stride;
    PetscCall(SgBqToPhysicalRow(bq, U, n, j, 0, PETSC_TRUE, u));
    PetscCall(SgBqToPhysicalRow(bq, W, n, j, 0, PETSC_TRUE, w));
    for (PetscInt q = 0; q < nq; q++) {
      /* d/dx of A[q] at row j, built in place in the complex buffer */
      for (PetscInt m = 0; m <= mx / 2; m++) bq->cbuf[m] = 0;
      for (PetscInt m = 0; m < bq->nk; m++) bq->cbuf[m] = I * Wavenumber(bq, m) * (A[q][2 * m * n + j] + I * A[q][(2 * m + 1) * n + j]);
      fftw_execute_dft_c2r(bq->c2r_pad, bq->cbuf, fx);
      PetscCall(SgBqToPhysicalRow(bq, Az[q], n, j, 0, PETSC_TRUE, fz));
      for (PetscInt i = 0; i < mx; i++) prod[i] = u[i] * fx[i] + w[i] * fz[i];
      fftw_execute_dft_r2c(bq->r2c_pad, prod, bq->cbuf);
      for (PetscInt m = 0; m < bq->nk; m++) {
        row[q * nc + 2 * m]     = creal(bq->cbuf[m]) / mx;
        row[q * nc + 2 * m + 1] = cimag(bq->cbuf[m]) / mx;
      }
    }
  }
  PetscCall(PetscLogEventEnd(bq->ev_fft, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(bq->ev_gather, 0, 0, 0, 0));
  PetscCall(PetscMalloc2(bq->size, &cnt, bq->size, &dsp));
  for (PetscMPIInt r = 0; r < bq->size; r++) {
    cnt[r] = (PetscMPIInt)(bq->rcount[r] * stride);
    dsp[r] = (PetscMPIInt)(bq->rdispl[r] * stride);
  }
  if (bq->size > 1) PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bq->rows, cnt, dsp, MPIU_REAL, bq->comm));
  PetscCall(PetscFree2(cnt, dsp));
  for (PetscInt q = 0; q < nq; q++)
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt c = 0; c < nc; c++) out[q][c * n + j] = bq->rows[j * stride + q * nc + c];
  PetscCall(PetscLogEventEnd(bq->ev_gather, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* F(X) of the IMEX split: psi: i k b - (u.grad zeta)_k (m >= 1), b: -(u.grad b)_k, u0: -<u.grad u>_0,
   with zeta = lap psi the vorticity (and -du0/dz in mode 0). All rows, all modes, every rank. */
PetscErrorCode SgBqNonlinear(Bq *bq, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, PetscReal *Fp, PetscReal *Fb, PetscReal *Fu)
{
  const PetscInt n = bq->n, j0 = bq->j0, j1 = bq->j1;
  PetscReal     *U = bq->work[0], *W = bq->work[1], *Uz = bq->work[2], *Wz = bq->work[3], *Z = bq->work[4], *Zz = bq->work[5], *Bz = bq->work[7];

  PetscFunctionBegin;
  PetscCheck(psi == bq->psi && b == bq->b && u0 == bq->u0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "boussinesq: nonlinear terms of the current state only");
  PetscCall(PetscLogEventBegin(bq->ev_dz, 0, 0, 0, 0));
  PetscCall(SgBqVelocity(bq, j0, j1, U, W, Uz, Wz));
  /* zeta = D^2 psi - k^2 psi = -Uz - k^2 psi; dzeta/dz = D^3 psi - k^2 D psi = D^3 psi + k^2 U */
  PetscCall(SgBqDz(bq, 3, psi, Zz, j0, j1));
  for (PetscInt m = 0; m < bq->nk; m++) {
    const PetscReal k2 = PetscSqr(Wavenumber(bq, m));
    for (PetscInt c = 2 * m; c < 2 * m + 2; c++)
      for (PetscInt j = j0; j < j1; j++) {
        const PetscInt q = c * n + j;
        Z[q]  = m ? -Uz[q] - k2 * psi[q] : 0;
        Zz[q] = m ? Zz[q] + k2 * U[q] : 0;
      }
  }
  for (PetscInt j = j0; j < j1; j++) { /* mode 0: zeta_0 = -du0/dz, dzeta_0/dz = -d2u0/dz2 */
    PetscReal d2 = 0;
    for (PetscInt k = 0; k < n; k++) d2 += bq->D2[j + k * n] * u0[k];
    Z[j]  = -Uz[j];
    Zz[j] = -d2;
  }
  PetscCall(SgBqDz(bq, 1, b, Bz, j0, j1));
  PetscCall(PetscLogEventEnd(bq->ev_dz, 0, 0, 0, 0));
  {
    PetscReal *const A[3] = {Z, (PetscReal *)b, U}, *const Az[3] = {Zz, Bz, Uz}, *const out[3] = {Fp, Fb, bq->work[8]};
    PetscCall(Advect(bq, 3, A, Az, U, W, out));
  }
  for (PetscInt m = 0; m < bq->nk; m++) {
    const PetscReal k = Wavenumber(bq, m);
    for (PetscInt j = 0; j < n; j++) {
      const PetscInt r = 2 * m * n + j, i = r + n;
      Fb[r] = -Fb[r];
      Fb[i] = -Fb[i];
      if (m == 0) {
        Fp[r] = Fp[i] = 0;
      } else {
        Fp[r] = -Fp[r] - k * b[i];
        Fp[i] = -Fp[i] + k * b[r];
      }
    }
  }
  for (PetscInt j = 0; j < n; j++) Fu[j] = -bq->work[8][j];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* u.grad u and u.grad w of the current state (for the pressure), all rows and modes. */
PetscErrorCode SgBqMomentumAdvection(Bq *bq, PetscReal *Nu, PetscReal *Nw)
{
  PetscReal *U = bq->work[0], *W = bq->work[1], *Uz = bq->work[2], *Wz = bq->work[3];

  PetscFunctionBegin;
  PetscCall(SgBqVelocity(bq, bq->j0, bq->j1, U, W, Uz, Wz));
  {
    PetscReal *const A[2] = {U, W}, *const Az[2] = {Uz, Wz}, *const out[2] = {Nu, Nw};
    PetscCall(Advect(bq, 2, A, Az, U, W, out));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rates that limit the explicit terms, maxima over the padded grid (every rank gets them):
   advection: |u|/dx + |w|/dz_j (dz_j: the smaller gap to a neighbouring node);
   buoyancy: N^2 = max |db/dz| (squared buoyancy frequency where stratified; the explicit coupling
   of b and psi has eigenvalues of size N in the inviscid limit). */
PetscErrorCode SgBqMaxRates(Bq *bq, PetscReal *adv, PetscReal *N2)
{
  PetscReal *U = bq->work[0], *W = bq->work[1], *Uz = bq->work[2], *Wz = bq->work[3], *Bz = bq->work[4], loc[2] = {0, 0}, glob[2];
  double    *u = bq->rbuf, *w = u + bq->mx, *bz = w + bq->mx;
  const PetscReal dx = bq->Lx / bq->nx;

  PetscFunctionBegin;
  PetscCall(SgBqVelocity(bq, bq->j0, bq->j1, U, W, Uz, Wz));
  PetscCall(SgBqDz(bq, 1, bq->b, Bz, bq->j0, bq->j1));
  for (PetscInt j = bq->j0; j < bq->j1; j++) {
    PetscReal dz = PETSC_MAX_REAL;
    if (j > 0) dz = PetscMin(dz, bq->z[j] - bq->z[j - 1]);
    if (j < bq->n - 1) dz = PetscMin(dz, bq->z[j + 1] - bq->z[j]);
    PetscCall(SgBqToPhysicalRow(bq, U, bq->n, j, 0, PETSC_TRUE, u));
    PetscCall(SgBqToPhysicalRow(bq, W, bq->n, j, 0, PETSC_TRUE, w));
    PetscCall(SgBqToPhysicalRow(bq, Bz, bq->n, j, 0, PETSC_TRUE, bz));
    for (PetscInt i = 0; i < bq->mx; i++) {
      loc[0] = PetscMax(loc[0], PetscAbsReal(u[i]) / dx + PetscAbsReal(w[i]) / dz);
      loc[1] = PetscMax(loc[1], PetscAbsReal(bz[i]));
    }
  }
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_MAX, bq->comm));
  *adv = glob[0];
  *N2  = glob[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gather the own modes' columns of a coefficient array from every rank. */
PetscErrorCode SgBqGatherModes(Bq *bq, PetscReal *a)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(bq->ev_gather, 0, 0, 0, 0));
  if (bq->size > 1) PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, bq->mcount, bq->mdispl, MPIU_REAL, bq->comm));
  PetscCall(PetscLogEventEnd(bq->ev_gather, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
