/* Diagnostics and fields of the field.superres answer on the fine output grid (bq_superres.h).

   From the fine fields at the nxo x nzo cell-centred points (this rank's rows, then summed over ranks):
     kinetic energy   KE = <(u^2 + w^2)/2>, the mean over the grid (midpoint rule);
     Nusselt number   Nu = 1 + Lz <w b> / kappa (the volume form of bq_diag.c; <db/dz> = -1/Lz);
     KE spectrum      E_m = <(|u_m|^2 + |w_m|^2)/2>_z c_m, m = 0 .. nxo/2, with u_m the x-DFT / nxo of
                      a row and c_m = 1 at m = 0 and nxo/2, 2 between: sum_m E_m = KE (Parseval), so the
                      spectrum is the split of KE over the x-wavenumbers k_m = 2 pi m / Lx.
   The same formulas serve every provider's answer, so the fine solve's and a surrogate's diagnostics
   compare like with like. */
#include "bq_superres.h"
#include "sgoutput.h"

PetscErrorCode SgBqSuperresDiagSetUp(Bq *bq, BqSuperres *sr)
{
  const PetscInt nxo = sr->out[0], nzo = sr->out[1];
  PetscInt       ys, ym;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nzo, &sr->zo, nxo, &sr->xo));
  for (PetscInt j = 0; j < nzo; j++) sr->zo[j] = (j + 0.5) * bq->Lz / nzo;
  for (PetscInt i = 0; i < nxo; i++) sr->xo[i] = (i + 0.5) * bq->Lx / nxo;
  /* rows of the fine grid spread over the ranks, whole x lines on each (the spectrum needs them) */
  PetscCall(DMDACreate2d(bq->comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nxo, nzo, 1, PETSC_DECIDE, 1, 1, NULL, NULL, &sr->da));
  PetscCall(DMSetUp(sr->da));
  PetscCall(DMCreateGlobalVector(sr->da, &sr->vout));
  PetscCall(DMDAGetCorners(sr->da, NULL, &ys, NULL, NULL, &ym, NULL));
  sr->r0 = ys;
  sr->r1 = ys + ym;
  PetscCall(PetscCalloc1(SG_BQ_NCH * PetscMax(1, ym) * nxo, &sr->fv));
  sr->nko  = nxo / 2 + 1;
  sr->row  = fftw_alloc_real(nxo);
  sr->spec = fftw_alloc_complex(nxo / 2 + 1);
  PetscCheck(sr->row && sr->spec, PETSC_COMM_SELF, PETSC_ERR_MEM, "boussinesq superres: cannot allocate FFTW buffers");
  sr->r2c = fftw_plan_dft_r2c_1d((int)nxo, sr->row, sr->spec, FFTW_ESTIMATE);
  PetscCheck(sr->r2c, PETSC_COMM_SELF, PETSC_ERR_LIB, "boussinesq superres: FFTW could not plan a transform of %" PetscInt_FMT " points", nxo);
  sr->ftime = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add (|f_m|^2 / nxo^2) c_m / 2 of one row to E */
static void AddRowSpectrum(BqSuperres *sr, const PetscReal *f, PetscReal *E)
{
  const PetscInt nxo = sr->out[0];

  for (PetscInt i = 0; i < nxo; i++) sr->row[i] = f[i];
  fftw_execute(sr->r2c);
  for (PetscInt m = 0; m < sr->nko; m++) {
    const PetscReal cm = (m == 0 || 2 * m == nxo) ? 1 : 2, a = cabs(sr->spec[m]) / nxo;
    E[m] += 0.5 * cm * a * a;
  }
}

PetscErrorCode SgBqSuperresRecord(Bq *bq, BqSuperres *sr, PetscReal t, PetscBool by_surrogate, PetscReal uncertainty)
{
  const PetscInt nxo = sr->out[0], nzo = sr->out[1], nr = sr->r1 - sr->r0, W = BQ_SR_WIDTH(sr), npl = nr * nxo;
  const PetscReal *b = sr->fv + npl, *u = sr->fv + 2 * npl, *w = sr->fv + 3 * npl;
  PetscReal       *loc, *e;

  PetscFunctionBegin;
  if (sr->ns == sr->cap) {
    PetscReal *bigger;
    sr->cap = sr->cap ? 2 * sr->cap : 64;
    PetscCall(PetscCalloc1(sr->cap * W, &bigger));
    if (sr->ns) PetscCall(PetscArraycpy(bigger, sr->ser, sr->ns * W));
    PetscCall(PetscFree(sr->ser));
    sr->ser = bigger;
  }
  e = sr->ser + sr->ns * W;
  PetscCall(PetscCalloc1(2 + sr->nko, &loc));
  for (PetscInt j = 0; j < nr; j++) {
    for (PetscInt i = 0; i < nxo; i++) {
      const PetscInt q = j * nxo + i;
      loc[0] += u[q] * u[q] + w[q] * w[q];
      loc[1] += w[q] * b[q];
    }
    AddRowSpectrum(sr, u + j * nxo, loc + 2);
    AddRowSpectrum(sr, w + j * nxo, loc + 2);
  }
  PetscCallMPI(MPI_Allreduce(loc, e + 3, 2 + sr->nko, MPIU_REAL, MPIU_SUM, bq->comm));
  PetscCall(PetscFree(loc));
  e[0] = t;
  e[1] = by_surrogate ? 1 : 0;
  e[2] = uncertainty;
  {
    const PetscReal s_uw = e[3], s_wb = e[4];
    e[3] = 1 + bq->Lz * (s_wb / (nzo * nxo)) / bq->kappa; /* Nu */
    e[4] = 0.5 * s_uw / (nzo * nxo);                      /* KE */
    for (PetscInt m = 0; m < sr->nko; m++) e[5 + m] /= nzo;
  }
  sr->ns++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresWriteFine(Bq *bq, BqSuperres *sr, SgOutput out)
{
  const PetscInt nxo = sr->out[0], npl = (sr->r1 - sr->r0) * nxo;
  PetscReal      lo[2] = {0, 0}, hi[2] = {bq->Lx, bq->Lz}, **a;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < SG_BQ_NCH; c++) {
    char name[32];
    PetscCall(DMDAVecGetArray(sr->da, sr->vout, &a));
    for (PetscInt j = sr->r0; j < sr->r1; j++)
      for (PetscInt i = 0; i < nxo; i++) a[j][i] = sr->fv[c * npl + (j - sr->r0) * nxo + i];
    PetscCall(DMDAVecRestoreArray(sr->da, sr->vout, &a));
    PetscCall(PetscSNPrintf(name, sizeof name, "%s_fine", SgBqChannels[c]));
    PetscCall(PetscObjectSetName((PetscObject)sr->vout, name));
    PetscCall(SgOutputWriteField(out, name, sr->vout, lo, hi));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
