/* The mffn surrogate's data (mffn_data.h): field_snapshots datasets from surge ensemble
   (docs/datasets.md: /samples/{p,b,u,w} [n, z, x], /samples/time, /samples/member) and the
   MeshfreeFlowNet crops: a high-res space-time block, its low-res version by taking every
   factor-th point (the paper's 4x in t, 8x in z and x), and random query points with their
   high-res values.

   Partitioned crops (issue 18): a spatial rank reads only the window of the (z, x) grid its slab of
   any crop can touch -- the low-res planes of its slab at every crop offset, and the high-res rows
   of the query points it owns -- as one hyperslab per field and file (SgDatasetReadFieldBlock). The
   normalisation statistics stay exactly those of the whole data: each grid point's sum over the
   samples is taken by the one rank owning it, the spatial group sums the (otherwise zero) arrays,
   which is exact, and every rank adds the points up in the same order as a serial run. */
#include "sgmffndata.h"
#include "sgdataset.h"
#include "sgtrainer.h"
#include <math.h>

static const char *const chname[SG_MFFN_NCH] = {"p", "b", "u", "w"};

/* The window along one axis of the (z, x) grid (N points) for the low-res slab [o, o + n) of lo planes
   of a crop of `crop` points subsampled by f: read [r0, r1), own [w0, w1) for the statistics (a
   partition of [0, N) over the slabs). The crop starts anywhere in [0, N - crop]; its slab's low-res
   planes are start + f [o, o + n), and an owned query point's cell starts on one of them, so its
   high-res row is at most start + f min(o + n, lo - 1) (the hull). */
static void AxisWindow(PetscInt N, PetscInt crop, PetscInt f, PetscInt o, PetscInt n, PetscInt *r0, PetscInt *r1, PetscInt *w0, PetscInt *w1)
{
  PetscInt lo = crop / f;
  *w0 = o ? f * o : 0;
  *w1 = o + n == lo ? N : f * (o + n);
  *r0 = f * o;
  *r1 = PetscMax(PetscMin(N, N - crop + f * PetscMin(o + n, lo - 1) + 1), *w1);
}

PetscErrorCode SgMFFNDataLoad(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, SgMFFNData *D)
{
  PetscFunctionBegin;
  PetscCall(SgMFFNDataLoadPart(comm, nfiles, files, crop_t, NULL, NULL, NULL, D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataLoadPart(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, const SgMFFNPart *part, const PetscInt crop[3], const PetscInt factor[3], SgMFFNData *D)
{
  int64_t   off = 0;
  double   *time, *S;
  int64_t  *member;
  PetscInt  own[2][2], rs[2], rc[2];
  PetscBool owner = PETSC_TRUE, split = (PetscBool)(part && part->grid && sgpar_grid_spatial_size(part->grid) > 1);
  long      bad[2] = {PETSC_MAX_INT, 0}, plane;

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
  if (crop) PetscCheck(crop[1] <= D->nz && crop[2] <= D->nx, comm, PETSC_ERR_USER_INPUT, "mffn: crop %" PetscInt_FMT " x %" PetscInt_FMT " (z, x) is larger than the data's %" PetscInt_FMT " x %" PetscInt_FMT " grid: lower -mffn_crop", crop[1], crop[2], D->nz, D->nx);
  /* this rank's window of the (z, x) grid: all of it, or what its slab of a crop can touch */
  D->z0 = 0, D->nzw = D->nz, D->x0 = 0, D->nxw = D->nx;
  own[0][0] = own[1][0] = 0, own[0][1] = D->nz, own[1][1] = D->nx;
  for (int k = 0; split && k < part->split.naxes; k++) {
    const SgparAxisSplit *q = &part->split.ax[k];
    PetscInt              a = q->axis - 3, r0, r1, N = a ? D->nx : D->nz;
    if (q->axis == 2) { /* a slab of snapshots: every rank reads them all; the statistics count once */
      owner = (PetscBool)(q->offset == 0);
      continue;
    }
    AxisWindow(N, crop[1 + a], factor[1 + a], q->offset, q->n, &r0, &r1, &own[a][0], &own[a][1]);
    if (a) D->x0 = r0, D->nxw = r1 - r0;
    else D->z0 = r0, D->nzw = r1 - r0;
  }
  plane = (long)D->nzw * D->nxw;
  rs[0] = D->z0, rs[1] = D->x0, rc[0] = D->nzw, rc[1] = D->nxw;
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscMalloc1((size_t)D->nsamp * plane, &D->f[c]));
  PetscCall(PetscMalloc2(D->nsamp, &time, D->nsamp, &member));
  PetscCall(PetscMalloc3(D->nsamp, &D->run_start, D->nsamp, &D->run_len, D->nsamp, &D->run_of));
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    SgDataset ds;
    int64_t   n;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(SgDatasetReadFieldBlock(ds, chname[c], 0, n, rs, rc, SG_DTYPE_F64, D->f[c] + off * plane));
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
  /* values are checked on every rank's window and the verdict is collective, so a bad value stops
     every rank with the same message */
  for (int c = 0; c < SG_MFFN_NCH; c++)
    for (long i = 0; i < (long)D->nsamp * plane; i++)
      if (!isfinite(D->f[c][i]) && i / plane < bad[0]) bad[0] = i / plane, bad[1] = c;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad[0], 1, MPI_LONG, MPI_MIN, comm));
  if (bad[0] == PETSC_MAX_INT) bad[1] = SG_MFFN_NCH;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad[1], 1, MPI_LONG, MPI_MIN, comm));
  PetscCheck(bad[0] == PETSC_MAX_INT, comm, PETSC_ERR_USER_INPUT, "mffn: field %s of the data is not finite at sample %ld", chname[bad[1] < SG_MFFN_NCH ? bad[1] : 0], bad[0]);
  /* mean and standard deviation: per grid point the sum over the samples (by its owner), then the
     points in (z, x) order: the same numbers on any partition */
  PetscCall(PetscMalloc1((size_t)D->nz * D->nx, &S));
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    const long n = (long)D->nsamp * D->nz * D->nx;
    for (int pass = 0; pass < 2; pass++) {
      double acc = 0;
      PetscCall(PetscArrayzero(S, (size_t)D->nz * D->nx));
      for (PetscInt i = 0; owner && i < D->nsamp; i++) /* each point's sum in sample order */
        for (PetscInt z = own[0][0]; z < own[0][1]; z++)
          for (PetscInt x = own[1][0]; x < own[1][1]; x++) {
            double v = SgMFFNDataAt(D, c, i, z, x);
            S[z * D->nx + x] += pass ? (v - D->mean[c]) * (v - D->mean[c]) : v;
          }
      if (split) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, S, (PetscMPIInt)(D->nz * D->nx), MPI_DOUBLE, MPI_SUM, sgpar_grid_spatial_comm(part->grid)));
      for (long j = 0; j < (long)D->nz * D->nx; j++) acc += S[j];
      if (pass) D->std[c] = sqrt(acc / n);
      else D->mean[c] = acc / n;
    }
    if (D->std[c] == 0) D->std[c] = 1; /* a constant field: keep it unscaled */
  }
  PetscCall(PetscFree(S));
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
  PetscInt Pown;

  PetscFunctionBegin;
  PetscCall(SgMFFNDataCropPart(D, crop, factor, P, seed, step, id, NULL, lowres, &Pown, pts, target));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataCropPart(const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, const SgMFFNPart *part, double *lowres, PetscInt *Pown, double *pts, double *target)
{
  SgnnRng  r;
  PetscInt lo[3], o[3] = {0, 0, 0}, n[3], run = D->run_of[id], s0, z0, x0;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) lo[k] = n[k] = crop[k] / factor[k];
  if (part && part->grid && sgpar_grid_spatial_size(part->grid) > 1) /* this rank's slab of the low-res crop */
    for (int a = 0; a < part->split.naxes; a++) o[part->split.ax[a].axis - 2] = part->split.ax[a].offset, n[part->split.ax[a].axis - 2] = part->split.ax[a].n;
  /* a counter-based stream per (seed, step, sample): no state to checkpoint, no rank dependence */
  sgnn_rng_init(&r, seed * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)step * 0xC2B2AE3D27D4EB4FULL + (uint64_t)id * 0x165667B19E3779F9ULL + 1));
  s0 = D->run_start[run] + (PetscInt)((id - D->run_start[run]) % (D->run_len[run] - crop[0] + 1));
  z0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nz - crop[1] + 1));
  x0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nx - crop[2] + 1));
  for (int c = 0; c < SG_MFFN_NCH; c++)
    for (PetscInt i = 0; i < n[0]; i++)
      for (PetscInt j = 0; j < n[1]; j++)
        for (PetscInt k = 0; k < n[2]; k++) {
          double v = SgMFFNDataAt(D, c, s0 + factor[0] * (o[0] + i), z0 + factor[1] * (o[1] + j), x0 + factor[2] * (o[2] + k));
          lowres[((c * n[0] + i) * n[1] + j) * n[2] + k] = (v - D->mean[c]) / D->std[c];
        }
  *Pown = 0;
  for (PetscInt p = 0; p < P; p++) { /* all P drawn in order (the stream stays the serial one), the owned kept */
    PetscInt h[3];
    double   q[3];
    for (int k = 0; k < 3; k++) { /* a high-res grid point inside the low-res hull [0, factor (lo - 1)] */
      h[k] = (PetscInt)(sgnn_rng_uniform(&r) * (factor[k] * (lo[k] - 1) + 1));
      q[k] = (double)h[k] / factor[k];
    }
    if (!SgMFFNPartOwns(part, q)) continue;
    for (int k = 0; k < 3; k++) pts[3 * *Pown + k] = q[k];
    for (int c = 0; c < SG_MFFN_NCH; c++) target[SG_MFFN_NCH * *Pown + c] = (SgMFFNDataAt(D, c, s0 + h[0], z0 + h[1], x0 + h[2]) - D->mean[c]) / D->std[c];
    (*Pown)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
