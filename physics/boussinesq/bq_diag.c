/* Diagnostics and field output of the Boussinesq solver.

   Volume means of products are exact for the discrete fields: in x by Parseval over the kept modes
   (<f g>_x = f_0 g_0 + 2 Re sum_{m>=1} f_m conj(g_m)), in z by Clenshaw-Curtis quadrature on the
   collocation points. With Lz = 1 and the buoyancy jump 1, the exact relations of Rayleigh-Benard
   convection (Shraiman & Siggia, Phys. Rev. A 42, 1990; Siggia, Annu. Rev. Fluid Mech. 26, 1994)
   read, in the time mean: Nu_bottom = Nu_top = Nu_volume, kappa <|grad b|^2> = kappa Nu, and
   nu <|grad u|^2> = <w b> = kappa (Nu - 1). The state is replicated, so every rank computes the
   same values without communication. */
#include "bq.h"
#include "sgoutput.h"


/* volume mean of f g for coefficient arrays f, g (all rows) */
static PetscReal Mean2(const Bq *bq, const PetscReal *f, const PetscReal *g)
{
  const PetscInt n = bq->n;
  PetscReal      s = 0;

  for (PetscInt j = 0; j < n; j++) {
    PetscReal x = f[j] * g[j];
    for (PetscInt c = 2; c < bq->ncol; c++) x += 2 * f[c * n + j] * g[c * n + j];
    s += bq->wq[j] * x;
  }
  return s / bq->Lz;
}

PetscErrorCode SgBqDiagnose(SgSolver s, PetscReal t, PetscReal v[])
{
  Bq            *bq = (Bq *)s->data;
  const PetscInt n = bq->n;
  PetscReal     *U = bq->work[0], *W = bq->work[1], *Uz = bq->work[2], *Wz = bq->work[3], *Ux = bq->work[4], *Wx = bq->work[5], *Bx = bq->work[6], *Bz = bq->work[7];
  PetscReal      db0 = 0, db1 = 0, gu, gb, divmax = 0;

  PetscFunctionBegin;
  PetscCall(SgBqVelocity(bq, 0, n, U, W, Uz, Wz));
  PetscCall(SgBqIkx(bq, U, Ux, 0, n));
  PetscCall(SgBqIkx(bq, W, Wx, 0, n));
  PetscCall(SgBqIkx(bq, bq->b, Bx, 0, n));
  PetscCall(SgBqDz(bq, 1, bq->b, Bz, 0, n));
  for (PetscInt k = 0; k < n; k++) {
    db0 += bq->D[0 + k * n] * bq->b[k];
    db1 += bq->D[(n - 1) + k * n] * bq->b[k];
  }
  v[bq->d_nub] = -bq->Lz * db0;
  v[bq->d_nut] = -bq->Lz * db1;
  v[bq->d_nuv] = bq->Lz * (Mean2(bq, W, bq->b) + bq->kappa / bq->Lz) / bq->kappa; /* <db/dz> = -1/Lz */
  v[bq->d_ke]  = 0.5 * (Mean2(bq, U, U) + Mean2(bq, W, W));
  gu           = Mean2(bq, Ux, Ux) + Mean2(bq, Uz, Uz) + Mean2(bq, Wx, Wx) + Mean2(bq, Wz, Wz);
  gb           = Mean2(bq, Bx, Bx) + Mean2(bq, Bz, Bz);
  v[bq->d_epsu] = bq->nu * gu;
  v[bq->d_epsb] = bq->kappa * gb;
  v[bq->d_nueu] = 1 + bq->nu * gu * bq->Lz * bq->Lz / bq->kappa;
  v[bq->d_nueb] = gb * bq->Lz * bq->Lz;
  /* divergence on the grid by a second path: du/dx from the spectral derivative, dw/dz by
     collocation of the physical w in each grid column; it vanishes only if u and w are the
     derivatives of one streamfunction (and mode 0 carries no w), to round-off */
  {
    const PetscInt nx = bq->nx;
    PetscReal     *ux, *wp;
    PetscCall(PetscMalloc2(n * nx, &ux, n * nx, &wp));
    for (PetscInt j = 0; j < n; j++) {
      PetscCall(SgBqToPhysicalRow(bq, Ux, n, j, 0, PETSC_FALSE, bq->rbuf));
      for (PetscInt i = 0; i < nx; i++) ux[j * nx + i] = bq->rbuf[i];
      PetscCall(SgBqToPhysicalRow(bq, W, n, j, 0, PETSC_FALSE, bq->rbuf));
      for (PetscInt i = 0; i < nx; i++) wp[j * nx + i] = bq->rbuf[i];
    }
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt i = 0; i < nx; i++) {
        PetscReal d = ux[j * nx + i];
        for (PetscInt k = 0; k < n; k++) d += bq->D[j + k * n] * wp[k * nx + i];
        divmax = PetscMax(divmax, PetscAbsReal(d));
      }
    PetscCall(PetscFree2(ux, wp));
  }
  v[bq->d_div] = divmax;
  {
    /* |b_1| at the node nearest mid-depth: the linear-stability tests fit its growth */
    const PetscInt jm = (n - 1) / 2;
    v[bq->d_bmid] = bq->nk > 1 ? PetscSqrtReal(PetscSqr(bq->b[2 * n + jm]) + PetscSqr(bq->b[3 * n + jm])) : 0;
  }
  if (SgBqSuperresOn(bq)) SgBqSuperresDiagnose(bq, v);
  for (PetscInt i = 0; i < s->ndiag && i < 16; i++) bq->last[i] = v[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One field: interpolate the coefficients to the uniform z points, transform each owned output row
   to the cell-centred x points, store in the DMDA vector. */
static PetscErrorCode WriteOne(Bq *bq, SgOutput out, const char *name, const PetscReal *f)
{
  PetscReal    *g = bq->work[9], **a, lo[2] = {0, 0}, hi[2] = {bq->Lx, bq->Lz}, one = 1, zero = 0;
  PetscInt      xs, ys, xm, ym;
  PetscBLASInt  no, n, nc;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(bq->out_nz, &no));
  PetscCall(PetscBLASIntCast(bq->n, &n));
  PetscCall(PetscBLASIntCast(bq->ncol, &nc));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &no, &nc, &n, &one, bq->Iout, &no, f, &n, &zero, g, &no));
  PetscCall(DMDAGetCorners(bq->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArray(bq->da, bq->vout, &a));
  for (PetscInt k = ys; k < ys + ym; k++) {
    PetscCall(SgBqToPhysicalRow(bq, g, bq->out_nz, k, 0.5, PETSC_FALSE, bq->rbuf));
    for (PetscInt i = xs; i < xs + xm; i++) a[k][i] = bq->rbuf[i];
  }
  PetscCall(DMDAVecRestoreArray(bq->da, bq->vout, &a));
  PetscCall(PetscObjectSetName((PetscObject)bq->vout, name));
  PetscCall(SgOutputWriteField(out, name, bq->vout, lo, hi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqWriteFields(SgSolver s, SgOutput out)
{
  Bq            *bq = (Bq *)s->data;
  const PetscInt n = bq->n;
  PetscReal     *Nu = bq->work[4], *Nw = bq->work[5], *p = bq->work[6];

  PetscFunctionBegin;
  if (!bq->da) {
    PetscCall(DMDACreate2d(bq->comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, bq->nx, bq->out_nz, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &bq->da));
    PetscCall(DMSetUp(bq->da));
    PetscCall(DMCreateGlobalVector(bq->da, &bq->vout));
  }
  PetscCall(SgBqMomentumAdvection(bq, Nu, Nw));
  PetscCall(SgBqPressure(bq, Nu, Nw, p));
  PetscCall(SgBqGatherModes(bq, p));
  PetscCall(WriteOne(bq, out, "p", p));
  PetscCall(WriteOne(bq, out, "b", bq->b));
  PetscCall(SgBqVelocity(bq, 0, n, bq->work[0], bq->work[1], bq->work[2], bq->work[3]));
  PetscCall(WriteOne(bq, out, "u", bq->work[0]));
  PetscCall(WriteOne(bq, out, "w", bq->work[1]));
  if (SgBqSuperresOn(bq)) PetscCall(SgBqSuperresWriteFields(bq, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}
