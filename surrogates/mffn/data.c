/* The mffn surrogate's data (mffn_data.h): field_snapshots datasets from surge ensemble
   (docs/datasets.md: /samples/{p,b,u,w} [n, z, x], /samples/time, /samples/member) and the
   MeshfreeFlowNet crops: a high-res space-time block, its low-res version by taking every
   factor-th point (the paper's 4x in t, 8x in z and x), and random query points with their
   high-res values. */
#include "sgmffndata.h"
#include "sgdataset.h"
#include "sgtrainer.h"
#include <math.h>

static const char *const chname[SG_MFFN_NCH] = {"p", "b", "u", "w"};

PetscErrorCode SgMFFNDataLoad(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, SgMFFNData *D)
{
  int64_t  off = 0;
  double  *time;
  int64_t *member;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(D, sizeof *D));
  for (PetscInt fi = 0; fi < nfiles; fi++) { /* sizes and grid first */
    SgDataset       ds;
    int64_t         n;
    PetscInt        id, rd;
    const PetscInt *rs;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    for (int c = 0; c < SG_MFFN_NCH + 2; c++) {
      const char *nm = c < SG_MFFN_NCH ? chname[c] : c == SG_MFFN_NCH ? "time" : "member";
      PetscCall(SgDatasetFindField(ds, nm, &id));
      PetscCheck(id >= 0, comm, PETSC_ERR_USER_INPUT, "mffn: %s has no field '%s': MeshfreeFlowNet trains on field_snapshots of p, b, u, w with time and member (surge ensemble with fields: [p, b, u, w], e.g. inputs/boussinesq/ensemble_small.yaml)", files[fi], nm);
      if (c >= SG_MFFN_NCH) continue;
      PetscCall(SgDatasetGetFieldInfo(ds, id, NULL, NULL, &rd, &rs, NULL));
      PetscCheck(rd == 2, comm, PETSC_ERR_USER_INPUT, "mffn: %s: field '%s' has %" PetscInt_FMT "-d samples; a 2-D (z, x) field is needed", files[fi], nm, rd);
      if (!D->nz) D->nz = rs[0], D->nx = rs[1];
      PetscCheck(rs[0] == D->nz && rs[1] == D->nx, comm, PETSC_ERR_USER_INPUT, "mffn: %s: field '%s' is %" PetscInt_FMT " x %" PetscInt_FMT " (z, x) but %s is %" PetscInt_FMT " x %" PetscInt_FMT ": all data must share one grid", files[fi], nm, rs[0], rs[1], files[0], D->nz, D->nx);
    }
    PetscCall(SgDatasetClose(&ds));
    D->nsamp += (PetscInt)n;
  }
  PetscCheck(D->nsamp > 0, comm, PETSC_ERR_USER_INPUT, "mffn: the data files hold no samples");
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscMalloc1((size_t)D->nsamp * D->nz * D->nx, &D->f[c]));
  PetscCall(PetscMalloc2(D->nsamp, &time, D->nsamp, &member));
  PetscCall(PetscMalloc3(D->nsamp, &D->run_start, D->nsamp, &D->run_len, D->nsamp, &D->run_of));
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    SgDataset ds;
    int64_t   n;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(SgDatasetReadField(ds, chname[c], 0, n, SG_DTYPE_F64, D->f[c] + off * D->nz * D->nx));
    PetscCall(SgDatasetReadField(ds, "time", 0, n, SG_DTYPE_F64, time + off));
    PetscCall(SgDatasetReadField(ds, "member", 0, n, SG_DTYPE_I64, member + off));
    PetscCall(SgDatasetClose(&ds));
    for (int64_t i = off; i < off + n; i++) { /* a run continues while the member stays and time advances */
      if (i == off || member[i] != member[i - 1] || !(time[i] > time[i - 1])) D->run_start[D->nruns] = (PetscInt)i, D->run_len[D->nruns++] = 0;
      D->run_of[i] = D->nruns - 1;
      D->run_len[D->nruns - 1]++;
      if (i > D->run_start[D->nruns - 1]) {
        double dt = time[i] - time[i - 1];
        if (D->dt == 0) D->dt = dt;
        PetscCheck(fabs(dt - D->dt) <= 1e-9 * D->dt, comm, PETSC_ERR_USER_INPUT, "mffn: %s: snapshot spacing %g at sample %" PetscInt64_FMT " differs from %g: the time derivative of the PDE loss needs uniformly spaced snapshots", files[fi], dt, (PetscInt64)(i - off), (double)D->dt);
      }
    }
    off += n;
  }
  PetscCheck(D->dt > 0, comm, PETSC_ERR_USER_INPUT, "mffn: no member has two snapshots: nothing to learn a time dependence from");
  for (PetscInt r = 0; r < D->nruns; r++) PetscCheck(D->run_len[r] >= crop_t, comm, PETSC_ERR_USER_INPUT, "mffn: member run %" PetscInt_FMT " of the data (samples %" PetscInt_FMT "..) has %" PetscInt_FMT " snapshots, fewer than the crop's %" PetscInt_FMT ": lower -mffn_crop's first entry or make longer runs", r, D->run_start[r], D->run_len[r], crop_t);
  for (int c = 0; c < SG_MFFN_NCH; c++) { /* mean and standard deviation, in a fixed order: the same on every rank */
    long   n = (long)D->nsamp * D->nz * D->nx;
    double s = 0, s2 = 0;
    for (long i = 0; i < n; i++) {
      PetscCheck(isfinite(D->f[c][i]), comm, PETSC_ERR_USER_INPUT, "mffn: field %s of the data is not finite at sample %ld", chname[c], i / ((long)D->nz * D->nx));
      s += D->f[c][i];
    }
    D->mean[c] = s / n;
    for (long i = 0; i < n; i++) s2 += (D->f[c][i] - D->mean[c]) * (D->f[c][i] - D->mean[c]);
    D->std[c] = sqrt(s2 / n);
    if (D->std[c] == 0) D->std[c] = 1; /* a constant field: keep it unscaled */
  }
  PetscCall(PetscFree2(time, member));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataFree(SgMFFNData *D)
{
  PetscFunctionBegin;
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscFree(D->f[c]));
  PetscCall(PetscFree3(D->run_start, D->run_len, D->run_of));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataCrop(const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, double *lowres, double *pts, double *target)
{
  SgnnRng  r;
  PetscInt lo[3], run = D->run_of[id], s0, z0, x0;
  size_t   plane = (size_t)D->nz * D->nx;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) lo[k] = crop[k] / factor[k];
  /* a counter-based stream per (seed, step, sample): no state to checkpoint, no rank dependence */
  sgnn_rng_init(&r, seed * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)step * 0xC2B2AE3D27D4EB4FULL + (uint64_t)id * 0x165667B19E3779F9ULL + 1));
  s0 = D->run_start[run] + (PetscInt)((id - D->run_start[run]) % (D->run_len[run] - crop[0] + 1));
  z0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nz - crop[1] + 1));
  x0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nx - crop[2] + 1));
  for (int c = 0; c < SG_MFFN_NCH; c++)
    for (PetscInt i = 0; i < lo[0]; i++)
      for (PetscInt j = 0; j < lo[1]; j++)
        for (PetscInt k = 0; k < lo[2]; k++) {
          double v = D->f[c][(size_t)(s0 + factor[0] * i) * plane + (size_t)(z0 + factor[1] * j) * D->nx + (x0 + factor[2] * k)];
          lowres[((c * lo[0] + i) * lo[1] + j) * lo[2] + k] = (v - D->mean[c]) / D->std[c];
        }
  for (PetscInt p = 0; p < P; p++) {
    PetscInt h[3];
    for (int k = 0; k < 3; k++) { /* a high-res grid point inside the low-res hull [0, factor (lo - 1)] */
      h[k]           = (PetscInt)(sgnn_rng_uniform(&r) * (factor[k] * (lo[k] - 1) + 1));
      pts[3 * p + k] = (double)h[k] / factor[k];
    }
    for (int c = 0; c < SG_MFFN_NCH; c++) target[SG_MFFN_NCH * p + c] = (D->f[c][(size_t)(s0 + h[0]) * plane + (size_t)(z0 + h[1]) * D->nx + (x0 + h[2])] - D->mean[c]) / D->std[c];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
