/* The divergence-free projection of a super-resolved velocity (not in the paper; docs/mffn.md
   "Projecting the velocity").

   The boussinesq solver holds the velocity as a stream function, so its fields are divergence-free;
   a super-resolved (u, w) is not, whatever the loss. The projection replaces (u, w) on a grid
   periodic in x and uniform in z by the nearest divergence-free field in the least-squares sense:

       psi = argmin sum |D psi - u|^2 + |-d_x psi - w|^2,    u' = D psi,   w' = -d_x psi,

   d_x spectral (Fourier in x), D fourth-order finite differences in z (central inside, one-sided
   fourth-order in the two rows at each end: no wall condition is imposed, the rows need not reach
   the walls). Per x-mode m >= 1 (k = 2 pi m / Lx) that is the normal equations

       (D^T D + k^2 I) psi_m = D^T u_m + i k w_m,

   real symmetric positive definite (D^T D is only semi-definite: D kills constants), factored once
   per mode by Cholesky. Mode 0 (the x mean): the mean flow u_0(z) is divergence-free as it is and
   kept; the mean vertical velocity w_0 has zero divergence only if constant in z and vanishes at the
   walls, so it is set to 0. For even nx the Nyquist mode, whose x-derivative is not defined on the
   grid, is set to 0 in both.

   Properties (tests/unit/mffn/test_mffn_project.c): the output's discrete divergence (d_x u' + D w')
   is zero to round-off; a field of the form (D psi, -d_x psi) is returned unchanged; the projection
   is idempotent and orthogonal (what it removes is orthogonal, on the grid, to what it keeps); a smooth
   divergence-free field changes by O(h^4). */
#include "sgmffn.h"
#include <fftw3.h>
#include <petscblaslapack.h>

struct _p_SgMFFNProjector {
  PetscInt      nz, nx, nh, nm; /* rows, columns, complex modes nx/2 + 1, projected modes 1 .. nm */
  PetscReal     hz, Lx;
  PetscReal    *chol;           /* nm Cholesky factors (nz x nz, column-major, lower) */
  double       *re;             /* nz x nx */
  double       *U, *W;          /* nz x nh complex numbers (re, im) */
  fftw_plan     fwd, bwd;       /* re -> U (many: nz rows), U -> re */
};

/* the stencils of D (times h) */
static const double Central[5] = {1. / 12, -8. / 12, 0, 8. / 12, -1. / 12}, Edge0[5] = {-25. / 12, 48. / 12, -36. / 12, 16. / 12, -3. / 12}, Edge1[5] = {-3. / 12, -10. / 12, 18. / 12, -6. / 12, 1. / 12};

/* row i of D (times h): its 5 coefficients and the first column they apply to */
static void DRow(PetscInt n, PetscInt i, double c[5], PetscInt *j0)
{
  if (i >= 2 && i < n - 2) {
    for (int k = 0; k < 5; k++) c[k] = Central[k];
    *j0 = i - 2;
  } else if (i < 2) {
    for (int k = 0; k < 5; k++) c[k] = (i == 0 ? Edge0 : Edge1)[k];
    *j0 = 0;
  } else { /* the mirror image, negated */
    for (int k = 0; k < 5; k++) c[k] = -(i == n - 1 ? Edge0 : Edge1)[4 - k];
    *j0 = n - 5;
  }
}

/* y[i * stride] = (D x)_i or (D^T x)_i, x and y strided (complex parts of spectra) */
static void ApplyD(PetscInt n, PetscReal h, PetscBool transpose, const double *x, PetscInt sx, double *y, PetscInt sy)
{
  for (PetscInt i = 0; i < n; i++) y[i * sy] = 0;
  for (PetscInt i = 0; i < n; i++) {
    double   c[5];
    PetscInt j0;
    DRow(n, i, c, &j0);
    for (int k = 0; k < 5; k++) {
      if (!transpose) y[i * sy] += c[k] / h * x[(j0 + k) * sx];
      else y[(j0 + k) * sy] += c[k] / h * x[i * sx];
    }
  }
}

PetscErrorCode SgMFFNProjectorCreate(PetscInt nz, PetscInt nx, PetscReal hz, PetscReal Lx, SgMFFNProjector *out)
{
  SgMFFNProjector P;
  PetscReal      *Dm;
  int             n = (int)nx;

  PetscFunctionBegin;
  PetscCheck(nz >= 5, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn project: %" PetscInt_FMT " z rows; the fourth-order differences need >= 5", nz);
  PetscCheck(nx >= 3, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn project: %" PetscInt_FMT " x points; at least 3", nx);
  PetscCheck(hz > 0 && Lx > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn project: z spacing %g and x period %g must be positive", (double)hz, (double)Lx);
  PetscCall(PetscNew(&P));
  P->nz = nz;
  P->nx = nx;
  P->nh = nx / 2 + 1;
  P->nm = (nx - 1) / 2;
  P->hz = hz;
  P->Lx = Lx;
  PetscCall(PetscMalloc1(P->nm * nz * nz, &P->chol));
  PetscCall(PetscMalloc1(nz * nz, &Dm));
  PetscCall(PetscArrayzero(Dm, nz * nz));
  for (PetscInt i = 0; i < nz; i++) { /* D, column-major */
    double   c[5];
    PetscInt j0;
    DRow(nz, i, c, &j0);
    for (int k = 0; k < 5; k++) Dm[(j0 + k) * nz + i] = c[k] / hz;
  }
  for (PetscInt m = 1; m <= P->nm; m++) {
    const PetscReal k = 2 * PETSC_PI * m / Lx;
    PetscReal      *A = P->chol + (m - 1) * nz * nz;
    PetscBLASInt    bn, info;
    for (PetscInt j = 0; j < nz; j++)
      for (PetscInt i = 0; i < nz; i++) {
        PetscReal s = i == j ? k * k : 0;
        for (PetscInt r = 0; r < nz; r++) s += Dm[i * nz + r] * Dm[j * nz + r]; /* (D^T D)_ij */
        A[j * nz + i] = s;
      }
    PetscCall(PetscBLASIntCast(nz, &bn));
    PetscCallBLAS("LAPACKpotrf", LAPACKpotrf_("L", &bn, A, &bn, &info));
    PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "mffn project: Cholesky of mode %" PetscInt_FMT " failed (info %d)", m, (int)info);
  }
  PetscCall(PetscFree(Dm));
  P->re = fftw_malloc(sizeof(double) * nz * nx);
  P->U  = fftw_malloc(sizeof(fftw_complex) * nz * P->nh);
  P->W  = fftw_malloc(sizeof(fftw_complex) * nz * P->nh);
  PetscCheck(P->re && P->U && P->W, PETSC_COMM_SELF, PETSC_ERR_MEM, "mffn project: out of memory for %" PetscInt_FMT " x %" PetscInt_FMT " spectra", nz, nx);
  P->fwd = fftw_plan_many_dft_r2c(1, &n, (int)nz, P->re, NULL, 1, n, (fftw_complex *)P->U, NULL, 1, (int)P->nh, FFTW_ESTIMATE);
  P->bwd = fftw_plan_many_dft_c2r(1, &n, (int)nz, (fftw_complex *)P->U, NULL, 1, (int)P->nh, P->re, NULL, 1, n, FFTW_ESTIMATE);
  PetscCheck(P->fwd && P->bwd, PETSC_COMM_SELF, PETSC_ERR_LIB, "mffn project: FFTW could not plan %" PetscInt_FMT " transforms of %" PetscInt_FMT, nz, nx);
  *out = P;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNProjectorDestroy(SgMFFNProjector *P)
{
  PetscFunctionBegin;
  if (!*P) PetscFunctionReturn(PETSC_SUCCESS);
  fftw_destroy_plan((*P)->fwd);
  fftw_destroy_plan((*P)->bwd);
  fftw_free((*P)->re);
  fftw_free((*P)->U);
  fftw_free((*P)->W);
  PetscCall(PetscFree((*P)->chol));
  PetscCall(PetscFree(*P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the complex coefficient (re, im) of row i, mode m in a spectrum of nh modes per row */
#define Mode(S, i, m) ((S) + 2 * ((i) * nh + (m)))

/* spectra of one level: re <- f, S <- FFT(re) (row by row) */
static void Forward(SgMFFNProjector P, const PetscReal *f, double *S)
{
  for (PetscInt i = 0; i < P->nz * P->nx; i++) P->re[i] = f[i];
  fftw_execute_dft_r2c(P->fwd, P->re, (fftw_complex *)S);
}

/* f <- inverse FFT of S / nx (S is overwritten by FFTW) */
static void Backward(SgMFFNProjector P, double *S, PetscReal *f)
{
  fftw_execute_dft_c2r(P->bwd, (fftw_complex *)S, P->re);
  for (PetscInt i = 0; i < P->nz * P->nx; i++) f[i] = P->re[i] / P->nx;
}

PetscErrorCode SgMFFNProjectorApply(SgMFFNProjector P, PetscInt nt, PetscReal *u, PetscReal *w)
{
  const PetscInt nz = P->nz, nh = P->nh, lev = nz * P->nx;
  PetscReal     *rhs, *tmp;
  PetscBLASInt   bn, two = 2, info;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(nz, &bn));
  PetscCall(PetscMalloc2(2 * nz, &rhs, nz, &tmp));
  for (PetscInt t = 0; t < nt; t++) {
    Forward(P, u + t * lev, P->U);
    Forward(P, w + t * lev, P->W);
    for (PetscInt m = 1; m <= P->nm; m++) {
      const PetscReal k = 2 * PETSC_PI * m / P->Lx;
      /* rhs = D^T u_m + i k w_m: real part in rhs[0..nz), imaginary in rhs[nz..2nz) */
      for (int part = 0; part < 2; part++) {
        ApplyD(nz, P->hz, PETSC_TRUE, &Mode(P->U, 0, m)[part], 2 * nh, rhs + part * nz, 1);
        for (PetscInt i = 0; i < nz; i++) rhs[part * nz + i] += part ? k * Mode(P->W, i, m)[0] : -k * Mode(P->W, i, m)[1];
      }
      PetscCallBLAS("LAPACKpotrs", LAPACKpotrs_("L", &bn, &two, P->chol + (m - 1) * nz * nz, &bn, rhs, &bn, &info));
      PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "mffn project: solve of mode %" PetscInt_FMT " failed (info %d)", m, (int)info);
      /* u_m = D psi, w_m = -i k psi */
      for (int part = 0; part < 2; part++) {
        ApplyD(nz, P->hz, PETSC_FALSE, rhs + part * nz, 1, tmp, 1);
        for (PetscInt i = 0; i < nz; i++) Mode(P->U, i, m)[part] = tmp[i];
      }
      for (PetscInt i = 0; i < nz; i++) {
        Mode(P->W, i, m)[0] = k * rhs[nz + i];
        Mode(P->W, i, m)[1] = -k * rhs[i];
      }
    }
    for (PetscInt i = 0; i < nz; i++) {
      Mode(P->W, i, 0)[0] = Mode(P->W, i, 0)[1] = 0; /* no mean vertical velocity */
      if (2 * P->nm + 1 < P->nx) Mode(P->U, i, nh - 1)[0] = Mode(P->U, i, nh - 1)[1] = Mode(P->W, i, nh - 1)[0] = Mode(P->W, i, nh - 1)[1] = 0; /* Nyquist */
    }
    Backward(P, P->U, u + t * lev);
    Backward(P, P->W, w + t * lev);
  }
  PetscCall(PetscFree2(rhs, tmp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNProjectorDivergence(SgMFFNProjector P, PetscInt nt, const PetscReal *u, const PetscReal *w, PetscReal *div)
{
  const PetscInt nz = P->nz, nh = P->nh, lev = nz * P->nx;
  PetscReal     *col, *dcol;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nz, &col, nz, &dcol));
  for (PetscInt t = 0; t < nt; t++) {
    Forward(P, u + t * lev, P->U);
    Forward(P, w + t * lev, P->W);
    for (PetscInt m = 0; m < nh; m++) {
      const PetscReal k = m <= P->nm ? 2 * PETSC_PI * m / P->Lx : 0; /* the Nyquist mode has no x-derivative */
      for (int part = 0; part < 2; part++) {
        for (PetscInt i = 0; i < nz; i++) col[i] = Mode(P->W, i, m)[part];
        ApplyD(nz, P->hz, PETSC_FALSE, col, 1, dcol, 1);
        for (PetscInt i = 0; i < nz; i++) Mode(P->W, i, m)[part] = dcol[i];
      }
      for (PetscInt i = 0; i < nz; i++) { /* + i k u_m */
        const PetscReal a = Mode(P->U, i, m)[0], b = Mode(P->U, i, m)[1];
        Mode(P->W, i, m)[0] -= k * b;
        Mode(P->W, i, m)[1] += k * a;
      }
    }
    Backward(P, P->W, div + t * lev);
  }
  PetscCall(PetscFree2(col, dcol));
  PetscFunctionReturn(PETSC_SUCCESS);
}
