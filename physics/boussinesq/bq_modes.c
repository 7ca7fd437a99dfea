/* The z-operators of each Fourier mode, their LU factorisation, and the implicit solves.

   Per mode k (Dedalus' form M dX/dt + L X = F, collocation rows at the interior points):
     b:    M = I,            L = -kappa (D^2 - k^2)
     psi:  M = D^2 - k^2,    L = -nu (D^2 - k^2)^2        (m >= 1; the vorticity equation)
     u0:   M = I,            L = -nu D^2                  (m = 0; mean flow)
   Boundary conditions replace rows ("boundary bordering", Boyd, Chebyshev and Fourier Spectral
   Methods, 2nd ed., 2001, sec. 6.4): b = +1/2, -1/2 (m = 0) or 0 at the walls; psi = 0 at both walls
   (rows 0, n-1) and dpsi/dz = 0 (no-slip) or d^2psi/dz^2 = 0 (free-slip) at both walls (rows 1,
   n-2; the fourth-order equation is collocated at the n-4 points between them); u0 = 0 (no-slip)
   or du0/dz = 0 (free-slip). These rows have M = 0, so they hold exactly at every stage.
   All matrices are real: a mode's real and imaginary parts are two right-hand sides. */
#include "bq.h"


/* out(:, cols) = alpha * A * in(:, cols) (+ beta out), A n x n, over the own modes' columns */
static PetscErrorCode OwnGemm(Bq *bq, const PetscReal *A, const PetscReal *in, PetscReal *out)
{
  PetscBLASInt n, nc;
  PetscReal    one = 1, zero = 0;

  PetscFunctionBegin;
  if (bq->m1 <= bq->m0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscBLASIntCast(bq->n, &n));
  PetscCall(PetscBLASIntCast(2 * (bq->m1 - bq->m0), &nc));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &n, &nc, &n, &one, A, &n, in + 2 * bq->m0 * bq->n, &n, &zero, out + 2 * bq->m0 * bq->n, &n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LUFactor(PetscInt n_, PetscReal *A, PetscBLASInt *piv, const char *what, PetscInt m)
{
  PetscBLASInt n, info;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n_, &n));
  PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&n, &n, A, &n, piv, &info));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "boussinesq: LAPACK getrf of the %s operator of mode %" PetscInt_FMT " failed (info %d)", what, m, (int)info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LUSolve(PetscInt n_, const PetscReal *A, const PetscBLASInt *piv, PetscReal *x, PetscInt nrhs_)
{
  PetscBLASInt n, nrhs, info;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n_, &n));
  PetscCall(PetscBLASIntCast(nrhs_, &nrhs));
  PetscCallBLAS("LAPACKgetrs", LAPACKgetrs_("N", &n, &nrhs, A, &n, piv, x, &n, &info));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "boussinesq: LAPACK getrs failed (info %d)", (int)info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Replace row r of the n x n column-major A by the row vector v (stride vs) */
static void SetRow(PetscReal *A, PetscInt n, PetscInt r, const PetscReal *v, PetscInt vs)
{
  for (PetscInt j = 0; j < n; j++) A[r + j * n] = v ? v[j * vs] : 0;
}
static void UnitRow(PetscReal *A, PetscInt n, PetscInt r)
{
  SetRow(A, n, r, NULL, 0);
  A[r + r * n] = 1;
}

/* Factor M + h L (h = dt H_ii) with the boundary rows, for every own mode. */
PetscErrorCode SgBqFactor(Bq *bq, PetscReal h)
{
  const PetscInt n = bq->n, nn = n * n;
  PetscReal     *D4;
  const PetscReal *bcrow0 = bq->walls == BQ_NOSLIP ? bq->D : bq->D2, *bcrow1 = bcrow0 + (n - 1);

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nn, &D4));
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 0; j < n; j++) {
      PetscReal s = 0;
      for (PetscInt k = 0; k < n; k++) s += bq->D2[i + k * n] * bq->D2[k + j * n];
      D4[i + j * n] = s;
    }
  for (PetscInt m = bq->m0; m < bq->m1; m++) {
    const PetscReal k = Wavenumber(bq, m), k2 = k * k;
    PetscReal      *Ab = bq->Lb + (m - bq->m0) * nn, *Ap = bq->Lp + (m - bq->m0) * nn;
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt i = 0; i < n; i++) {
        const PetscReal d2 = bq->D2[i + j * n], id = (i == j), lap = d2 - k2 * id;
        Ab[i + j * n] = id - h * bq->kappa * lap;
        Ap[i + j * n] = lap - h * bq->nu * (D4[i + j * n] - 2 * k2 * d2 + k2 * k2 * id);
      }
    UnitRow(Ab, n, 0);
    UnitRow(Ab, n, n - 1);
    PetscCall(LUFactor(n, Ab, bq->pb + (m - bq->m0) * n, "buoyancy", m));
    if (m == 0) { /* psi_0 is not a variable (u0 carries the mean flow): keep it 0 */
      for (PetscInt i = 0; i < nn; i++) Ap[i] = 0;
      for (PetscInt i = 0; i < n; i++) Ap[i + i * n] = 1;
    } else {
      UnitRow(Ap, n, 0);
      UnitRow(Ap, n, n - 1);
      SetRow(Ap, n, 1, bcrow0, n);
      SetRow(Ap, n, n - 2, bcrow1, n);
    }
    PetscCall(LUFactor(n, Ap, bq->pp + (m - bq->m0) * n, "streamfunction", m));
  }
  if (bq->m0 == 0) {
    PetscReal *Au = bq->Lu;
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt i = 0; i < n; i++) Au[i + j * n] = (i == j) - h * bq->nu * bq->D2[i + j * n];
    if (bq->walls == BQ_NOSLIP) {
      UnitRow(Au, n, 0);
      UnitRow(Au, n, n - 1);
    } else {
      SetRow(Au, n, 0, bq->D, n);
      SetRow(Au, n, n - 1, bq->D + (n - 1), n);
    }
    PetscCall(LUFactor(n, Au, bq->pu, "mean-flow", 0));
  }
  PetscCall(PetscFree(D4));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M X and L X of the own modes (all rows; only interior rows are used). */
PetscErrorCode SgBqApplyML(Bq *bq, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, PetscReal *Mp, PetscReal *Mb, PetscReal *Mu, PetscReal *Lp, PetscReal *Lb, PetscReal *Lu)
{
  const PetscInt n = bq->n;

  PetscFunctionBegin;
  PetscCall(OwnGemm(bq, bq->D2, psi, Mp));
  PetscCall(OwnGemm(bq, bq->D2, b, Lb));
  for (PetscInt m = bq->m0; m < bq->m1; m++) {
    const PetscReal k2 = PetscSqr(Wavenumber(bq, m));
    for (PetscInt c = 2 * m; c < 2 * m + 2; c++)
      for (PetscInt j = 0; j < n; j++) {
        const PetscInt q = c * n + j;
        Mp[q] = m ? Mp[q] - k2 * psi[q] : 0;
        Lb[q] = -bq->kappa * (Lb[q] - k2 * b[q]);
        Mb[q] = b[q];
      }
  }
  PetscCall(OwnGemm(bq, bq->D2, Mp, Lp));
  for (PetscInt m = bq->m0; m < bq->m1; m++) {
    const PetscReal k2 = PetscSqr(Wavenumber(bq, m));
    for (PetscInt q = 2 * m * n; q < (2 * m + 2) * n; q++) Lp[q] = -bq->nu * (Lp[q] - k2 * Mp[q]);
  }
  if (bq->m0 == 0) {
    PetscBLASInt nb, one = 1;
    PetscReal    a = 1, z0 = 0;
    PetscCall(PetscBLASIntCast(n, &nb));
    PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &nb, &one, &nb, &a, bq->D2, &nb, u0, &nb, &z0, Lu, &nb));
    for (PetscInt j = 0; j < n; j++) {
      Lu[j] *= -bq->nu;
      Mu[j] = u0[j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Overwrite the boundary rows of the right-hand sides and solve in place for the own modes. */
PetscErrorCode SgBqSolve(Bq *bq, PetscReal *rp, PetscReal *rb, PetscReal *ru)
{
  const PetscInt n = bq->n, nn = n * n;

  PetscFunctionBegin;
  for (PetscInt m = bq->m0; m < bq->m1; m++) {
    PetscReal *p = rp + 2 * m * n, *b = rb + 2 * m * n;
    for (PetscInt part = 0; part < 2; part++) {
      PetscReal *pc = p + part * n, *bc = b + part * n;
      pc[0] = pc[1] = pc[n - 2] = pc[n - 1] = 0;
      bc[0] = (m == 0 && part == 0) ? 0.5 : 0;
      bc[n - 1] = (m == 0 && part == 0) ? -0.5 : 0;
    }
    if (m == 0) for (PetscInt j = 0; j < 2 * n; j++) p[j] = 0;
    PetscCall(LUSolve(n, bq->Lb + (m - bq->m0) * nn, bq->pb + (m - bq->m0) * n, b, 2));
    PetscCall(LUSolve(n, bq->Lp + (m - bq->m0) * nn, bq->pp + (m - bq->m0) * n, p, 2));
    if (m == 0) for (PetscInt j = n; j < 2 * n; j++) b[j] = 0; /* the mean is real */
  }
  if (bq->m0 == 0) {
    ru[0] = ru[n - 1] = 0;
    PetscCall(LUSolve(n, bq->Lu, bq->pu, ru, 1));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Pressure, recovered diagnostically from the Poisson equation lap p = -div(u.grad u) + db/dz with
   the Neumann condition of the vertical momentum equation at the walls (w = 0 there):
   dp/dz = b - (u.grad w) + nu (D^2 - k^2) w. Mode 0 integrates dp0/dz = b0 - <u.grad w>_0 directly
   with zero volume mean. Nu, Nw: the coefficients of u.grad u and u.grad w (all modes). Own modes. */
PetscErrorCode SgBqPressure(Bq *bq, const PetscReal *Nu, const PetscReal *Nw, PetscReal *p)
{
  const PetscInt n = bq->n, nn = n * n;
  PetscReal     *dNw, *db, *lw;

  PetscFunctionBegin;
  if (!bq->Pp) {
    PetscCall(PetscMalloc2(PetscMax(1, bq->m1 - bq->m0) * nn, &bq->Pp, PetscMax(1, bq->m1 - bq->m0) * n, &bq->ppiv));
    for (PetscInt m = bq->m0; m < bq->m1; m++) {
      PetscReal      *A  = bq->Pp + (m - bq->m0) * nn;
      const PetscReal k2 = PetscSqr(Wavenumber(bq, m));
      for (PetscInt j = 0; j < n; j++)
        for (PetscInt i = 0; i < n; i++) A[i + j * n] = m ? bq->D2[i + j * n] - k2 * (i == j) : bq->D[i + j * n];
      if (m) {
        SetRow(A, n, 0, bq->D, n);
        SetRow(A, n, n - 1, bq->D + (n - 1), n);
      } else SetRow(A, n, 0, bq->wq, 1);
      PetscCall(LUFactor(n, A, bq->ppiv + (m - bq->m0) * n, "pressure", m));
    }
  }
  dNw = bq->work[7];
  db  = bq->work[8];
  lw  = bq->work[9];
  PetscCall(OwnGemm(bq, bq->D, Nw, dNw));
  PetscCall(OwnGemm(bq, bq->D, bq->b, db));
  PetscCall(OwnGemm(bq, bq->D2, bq->psi, lw)); /* D^2 psi; w = i k psi */
  for (PetscInt m = bq->m0; m < bq->m1; m++) {
    const PetscReal k = Wavenumber(bq, m), k2 = k * k;
    PetscReal      *pr = p + 2 * m * n, *pi = pr + n;
    const PetscReal *nur = Nu + 2 * m * n, *nui = nur + n, *nwr = Nw + 2 * m * n, *nwi = nwr + n, *br = bq->b + 2 * m * n, *bi = br + n;
    const PetscReal *dnwr = dNw + 2 * m * n, *dnwi = dnwr + n, *dbr = db + 2 * m * n, *dbi = dbr + n;
    const PetscReal *pr_ = bq->psi + 2 * m * n, *pi_ = pr_ + n, *lr = lw + 2 * m * n, *li = lr + n;
    if (m == 0) {
      for (PetscInt j = 0; j < n; j++) {
        pr[j] = br[j] - nwr[j];
        pi[j] = 0;
      }
      pr[0] = 0;
    } else {
      for (PetscInt j = 0; j < n; j++) { /* -(i k Nu + D Nw) + D b */
        pr[j] = k * nui[j] - dnwr[j] + dbr[j];
        pi[j] = -k * nur[j] - dnwi[j] + dbi[j];
      }
      for (PetscInt e = 0; e < 2; e++) {
        const PetscInt j = e ? n - 1 : 0;
        /* nu (D^2 - k^2) w with w = i k psi: real part -k (lap psi)_im, imaginary k (lap psi)_re */
        const PetscReal lapr = lr[j] - k2 * pr_[j], lapi = li[j] - k2 * pi_[j];
        pr[j] = br[j] - nwr[j] - bq->nu * k * lapi;
        pi[j] = bi[j] - nwi[j] + bq->nu * k * lapr;
      }
    }
    PetscCall(LUSolve(n, bq->Pp + (m - bq->m0) * nn, bq->ppiv + (m - bq->m0) * n, pr, 2));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
