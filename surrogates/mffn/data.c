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
   which is exact, and every rank adds the points up in the same order as a serial run.

   Reading crops (SG_MFFN_READ_CROPS, for data larger than memory: the paper's set is 4.2 GB): the
   files stay open and each crop reads, per channel, the one hyperslab (snapshots x rows x columns)
   that this rank's part of it touches; the load streams the window through memory a block of
   samples at a time for the checks and the statistics. The arithmetic is the in-memory path's, in
   the same order, so crops, statistics and a training are the same to the bit. */
#include "sgmffndata.h"
#include "sgdataset.h"
#include "sgtrainer.h"
#include <math.h>

static const char *const chname[SG_MFFN_NCH] = {"p", "b", "u", "w"};
const char *const        SgMFFNReads[]         = {"auto", "memory", "crops", "SgMFFNRead", "SG_MFFN_READ_", NULL};

/* samples read at a time while streaming the window (checks, statistics) */
#define STREAM_SAMPLES 16

/* A view of the values: channel arrays of [i1 - i0][nz][nx] holding samples from i0, rows from z0,
   columns from x0 (the in-memory window, or one crop's hyperslabs). */
typedef struct {
  const double *f[SG_MFFN_NCH];
  PetscInt      i0, z0, x0, nz, nx;
} View;
#define ViewAt(V, c, i, z, x) ((V)->f[c][((size_t)((i) - (V)->i0) * (V)->nz + (size_t)((z) - (V)->z0)) * (V)->nx + (size_t)((x) - (V)->x0)])

/* The file holding global sample i */
static PetscInt FileOf(const SgMFFNData *D, PetscInt i)
{
  PetscInt f = 0;
  while (D->file_start[f + 1] <= i) f++;
  return f;
}

/* Channel arrays of samples [i0, i0 + n) over rows [z0, z0 + nz) x columns [x0, x0 + nx) into D->buf
   (all n samples in one file); the view of them */
static PetscErrorCode ReadBlock(const SgMFFNData *D, PetscInt i0, PetscInt n, PetscInt z0, PetscInt nz, PetscInt x0, PetscInt nx, View *V)
{
  const PetscInt fi = FileOf(D, i0), rs[2] = {z0, x0}, rc[2] = {nz, nx};
  const size_t   each = (size_t)n * nz * nx;

  PetscFunctionBegin;
  PetscCheck(i0 + n <= D->file_start[fi + 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "mffn: a block of samples crosses a file boundary");
  PetscCheck(SG_MFFN_NCH * each <= D->nbuf, PETSC_COMM_SELF, PETSC_ERR_PLIB, "mffn: crop buffer too small");
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    double *dst = D->buf + c * each;
    PetscCall(SgDatasetReadFieldBlock(D->ds[fi], chname[c], i0 - D->file_start[fi], n, rs, rc, SG_DTYPE_F64, dst));
    V->f[c] = dst;
  }
  V->i0 = i0;
  V->z0 = z0;
  V->x0 = x0;
  V->nz = nz;
  V->nx = nx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The in-memory window, as a view */
static void MemoryView(const SgMFFNData *D, View *V)
{
  for (int c = 0; c < SG_MFFN_NCH; c++) V->f[c] = D->f[c];
  V->i0 = 0;
  V->z0 = D->z0;
  V->x0 = D->x0;
  V->nz = D->nzw;
  V->nx = D->nxw;
}

/* A view of samples [i, i + n) of the window: in memory, or read (n <= STREAM_SAMPLES, one file) */
static PetscErrorCode WindowView(const SgMFFNData *D, PetscInt i, PetscInt n, View *V)
{
  PetscFunctionBegin;
  if (!D->crops) MemoryView(D, V);
  else PetscCall(ReadBlock(D, i, n, D->z0, D->nzw, D->x0, D->nxw, V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* samples from i to the end of i's block: STREAM_SAMPLES at most, never across a file */
static PetscInt BlockLen(const SgMFFNData *D, PetscInt i)
{
  if (!D->crops) return D->nsamp - i;
  return PetscMin(STREAM_SAMPLES, D->file_start[FileOf(D, i) + 1] - i);
}

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
  PetscCall(SgMFFNDataLoadPart(comm, nfiles, files, crop_t, NULL, NULL, NULL, SG_MFFN_READ_MEMORY, D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataLoadPart(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscInt crop_t, const SgMFFNPart *part, const PetscInt crop[3], const PetscInt factor[3], SgMFFNRead read, SgMFFNData *D)
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
      if (!D->nz) {
        D->nz = rs[0];
        D->nx = rs[1];
      }
      PetscCheck(rs[0] == D->nz && rs[1] == D->nx, comm, PETSC_ERR_USER_INPUT, "mffn: %s: field '%s' is %" PetscInt_FMT " x %" PetscInt_FMT " (z, x) but %s is %" PetscInt_FMT " x %" PetscInt_FMT ": all data must share one grid", files[fi], nm, rs[0], rs[1], files[0], D->nz, D->nx);
    }
    PetscCall(SgDatasetClose(&ds));
    D->nsamp += (PetscInt)n;
  }
  PetscCheck(D->nsamp > 0, comm, PETSC_ERR_USER_INPUT, "mffn: the data files hold no samples");
  if (crop) PetscCheck(crop[1] <= D->nz && crop[2] <= D->nx, comm, PETSC_ERR_USER_INPUT, "mffn: crop %" PetscInt_FMT " x %" PetscInt_FMT " (z, x) is larger than the data's %" PetscInt_FMT " x %" PetscInt_FMT " grid: lower -mffn_crop", crop[1], crop[2], D->nz, D->nx);
  /* this rank's window of the (z, x) grid: all of it, or what its slab of a crop can touch */
  D->z0 = 0;
  D->nzw = D->nz;
  D->x0 = 0;
  D->nxw = D->nx;
  own[0][0] = own[1][0] = 0;
  own[0][1] = D->nz;
  own[1][1] = D->nx;
  for (int k = 0; split && k < part->split.naxes; k++) {
    const SgparAxisSplit *q = &part->split.ax[k];
    PetscInt              a = q->axis - 3, r0, r1, N = a ? D->nx : D->nz;
    if (q->axis == 2) { /* a slab of snapshots: every rank reads them all; the statistics count once */
      owner = (PetscBool)(q->offset == 0);
      continue;
    }
    AxisWindow(N, crop[1 + a], factor[1 + a], q->offset, q->n, &r0, &r1, &own[a][0], &own[a][1]);
    if (a) {
      D->x0 = r0;
      D->nxw = r1 - r0;
    } else {
      D->z0 = r0;
      D->nzw = r1 - r0;
    }
  }
  plane = (long)D->nzw * D->nxw;
  rs[0] = D->z0;
  rs[1] = D->x0;
  rc[0] = D->nzw;
  rc[1] = D->nxw;
  D->crops = (PetscBool)(read == SG_MFFN_READ_CROPS || (read == SG_MFFN_READ_AUTO && crop && SG_MFFN_NCH * 8.0 * D->nsamp * plane > SG_MFFN_READ_AUTO_BYTES));
  PetscCheck(!D->crops || crop, comm, PETSC_ERR_ARG_NULL, "mffn: reading crops needs the crop and factor");
  if (D->crops) { /* the files stay open; a buffer for a crop's hyperslabs or a block of the window */
    D->nfiles = nfiles;
    PetscCall(PetscCalloc2(nfiles, &D->ds, nfiles + 1, &D->file_start));
    D->nbuf = SG_MFFN_NCH * (size_t)PetscMax((long)crop[0] * crop[1] * crop[2], STREAM_SAMPLES * plane);
    PetscCall(PetscMalloc1(D->nbuf, &D->buf));
  } else
    for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscMalloc1((size_t)D->nsamp * plane, &D->f[c]));
  PetscCall(PetscMalloc2(D->nsamp, &time, D->nsamp, &member));
  PetscCall(PetscMalloc3(D->nsamp, &D->run_start, D->nsamp, &D->run_len, D->nsamp, &D->run_of));
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    SgDataset ds;
    int64_t   n;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    if (!D->crops)
      for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(SgDatasetReadFieldBlock(ds, chname[c], 0, n, rs, rc, SG_DTYPE_F64, D->f[c] + off * plane));
    PetscCall(SgDatasetReadField(ds, "time", 0, n, SG_DTYPE_F64, time + off));
    PetscCall(SgDatasetReadField(ds, "member", 0, n, SG_DTYPE_I64, member + off));
    if (D->crops) {
      D->ds[fi] = ds;
      D->file_start[fi] = (PetscInt)off;
      D->file_start[fi + 1] = (PetscInt)(off + n);
    } else PetscCall(SgDatasetClose(&ds));
    for (int64_t i = off; i < off + n; i++) { /* a run continues while the member stays and time advances */
      if (i == off || member[i] != member[i - 1] || !(time[i] > time[i - 1])) {
        D->run_start[D->nruns] = (PetscInt)i;
        D->run_len[D->nruns++] = 0;
      }
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
  /* Two sweeps over the window, a block of samples at a time (all of it at once in memory). Sweep 0
     checks every value (the first non-finite sample of each channel; the verdict is collective, so a
     bad value stops every rank with the same message) and sums each owned grid point over the
     samples in sample order; sweep 1 sums the squared deviations from the mean. Then the points are
     added in (z, x) order: the same numbers on any partition and either way of reading. */
  PetscCall(PetscMalloc1((size_t)SG_MFFN_NCH * D->nz * D->nx, &S));
  for (int pass = 0; pass < 2; pass++) {
    long firstbad[SG_MFFN_NCH];
    for (int c = 0; c < SG_MFFN_NCH; c++) firstbad[c] = PETSC_MAX_INT;
    PetscCall(PetscArrayzero(S, (size_t)SG_MFFN_NCH * D->nz * D->nx));
    for (PetscInt i0 = 0; i0 < D->nsamp;) {
      const PetscInt n = BlockLen(D, i0);
      View           V = {{NULL}, 0, 0, 0, 0, 0};
      if (!pass || owner) PetscCall(WindowView(D, i0, n, &V));
      for (int c = 0; c < SG_MFFN_NCH; c++) {
        double *Sc = S + (size_t)c * D->nz * D->nx;
        for (PetscInt i = i0; !pass && i < i0 + n && firstbad[c] == PETSC_MAX_INT; i++)
          for (long k = 0; k < plane; k++)
            if (!isfinite(V.f[c][(size_t)(i - V.i0) * plane + k])) {
              firstbad[c] = i;
              break;
            }
        for (PetscInt i = i0; owner && i < i0 + n; i++) /* each point's sum in sample order */
          for (PetscInt z = own[0][0]; z < own[0][1]; z++)
            for (PetscInt x = own[1][0]; x < own[1][1]; x++) {
              double v = ViewAt(&V, c, i, z, x);
              Sc[z * D->nx + x] += pass ? (v - D->mean[c]) * (v - D->mean[c]) : v;
            }
      }
      i0 += n;
    }
    if (!pass) {
      for (int c = 0; c < SG_MFFN_NCH; c++)
        if (firstbad[c] < bad[0]) {
          bad[0] = firstbad[c];
          bad[1] = c;
        }
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad[0], 1, MPI_LONG, MPI_MIN, comm));
      if (bad[0] == PETSC_MAX_INT) bad[1] = SG_MFFN_NCH;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad[1], 1, MPI_LONG, MPI_MIN, comm));
      PetscCheck(bad[0] == PETSC_MAX_INT, comm, PETSC_ERR_USER_INPUT, "mffn: field %s of the data is not finite at sample %ld", chname[bad[1] < SG_MFFN_NCH ? bad[1] : 0], bad[0]);
    }
    for (int c = 0; c < SG_MFFN_NCH; c++) {
      const long n  = (long)D->nsamp * D->nz * D->nx;
      double    *Sc = S + (size_t)c * D->nz * D->nx, acc = 0;
      if (split) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, Sc, (PetscMPIInt)(D->nz * D->nx), MPI_DOUBLE, MPI_SUM, sgpar_grid_spatial_comm(part->grid)));
      for (long j = 0; j < (long)D->nz * D->nx; j++) acc += Sc[j];
      if (pass) D->std[c] = sqrt(acc / n);
      else D->mean[c] = acc / n;
    }
  }
  for (int c = 0; c < SG_MFFN_NCH; c++)
    if (D->std[c] == 0) D->std[c] = 1; /* a constant field: keep it unscaled */
  PetscCall(PetscFree(S));
  PetscCall(PetscFree2(time, member));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataFree(SgMFFNData *D)
{
  PetscFunctionBegin;
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCall(PetscFree(D->f[c]));
  PetscCall(PetscFree3(D->run_start, D->run_len, D->run_of));
  for (PetscInt fi = 0; fi < D->nfiles; fi++) PetscCall(SgDatasetClose(&D->ds[fi]));
  PetscCall(PetscFree2(D->ds, D->file_start));
  PetscCall(PetscFree(D->buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDataCrop(const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, double *lowres, double *pts, double *target)
{
  PetscInt Pown;

  PetscFunctionBegin;
  PetscCall(SgMFFNDataCropPart(D, crop, factor, P, seed, step, id, NULL, lowres, &Pown, pts, target, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The high-res gradients at crop point h (crop-relative high-res indices) in normalised units per
   latent index step: u_z, u_x, w_z, w_x, b_z, b_x. Central differences inside the crop's hull [0,
   factor (lo - 1)], one-sided at its faces (np.gradient's rule, which the evaluation's statistics
   use): the hull is all a crop read crop by crop holds, so both read modes give the same bits. */
static void FieldGradients(const SgMFFNData *D, const View *V, const PetscInt factor[3], const PetscInt lo[3], PetscInt s, PetscInt z0, PetscInt x0, const PetscInt h[3], double g[SG_MFFN_NGRAD])
{
  const int ch[3] = {2, 3, 1}; /* u, w, b */

  for (int c = 0; c < 3; c++)
    for (int k = 1; k <= 2; k++) {
      PetscInt m[3] = {h[0], h[1], h[2]}, p[3] = {h[0], h[1], h[2]};
      if (m[k] > 0) m[k]--;
      if (p[k] < factor[k] * (lo[k] - 1)) p[k]++;
      double fp = ViewAt(V, ch[c], s + p[0], z0 + p[1], x0 + p[2]), fm = ViewAt(V, ch[c], s + m[0], z0 + m[1], x0 + m[2]);
      g[2 * c + k - 1] = (fp - fm) / (double)(p[k] - m[k]) * (double)factor[k] / D->std[ch[c]];
    }
}

PetscErrorCode SgMFFNDataCropPart(const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, PetscInt step, int64_t id, const SgMFFNPart *part, double *lowres, PetscInt *Pown, double *pts, double *target, double *grad)
{
  SgnnRng  r;
  PetscInt lo[3], o[3] = {0, 0, 0}, n[3], run = D->run_of[id], s0, z0, x0;
  View     V;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) lo[k] = n[k] = crop[k] / factor[k];
  PetscCheck(!grad || !part || !part->grid || sgpar_grid_spatial_size(part->grid) == 1, PETSC_COMM_SELF, PETSC_ERR_SUP, "mffn: gradient targets on a crop split over spatial ranks are not implemented");
  if (part && part->grid && sgpar_grid_spatial_size(part->grid) > 1) /* this rank's slab of the low-res crop */
    for (int a = 0; a < part->split.naxes; a++) {
      o[part->split.ax[a].axis - 2] = part->split.ax[a].offset;
      n[part->split.ax[a].axis - 2] = part->split.ax[a].n;
    }
  /* a counter-based stream per (seed, step, sample): no state to checkpoint, no rank dependence */
  sgnn_rng_init(&r, seed * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)step * 0xC2B2AE3D27D4EB4FULL + (uint64_t)id * 0x165667B19E3779F9ULL + 1));
  s0 = D->run_start[run] + (PetscInt)((id - D->run_start[run]) % (D->run_len[run] - crop[0] + 1));
  z0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nz - crop[1] + 1));
  x0 = (PetscInt)(sgnn_rng_uniform(&r) * (D->nx - crop[2] + 1));
  if (D->crops) { /* what this rank's part touches: per axis from its first low-res plane to the last high-res
                     point of its owned cells, start + f min(o + n, lo - 1) (AxisWindow's hull) */
    PetscInt a0[3], a1[3], st[3] = {s0, z0, x0};
    for (int k = 0; k < 3; k++) {
      a0[k] = st[k] + factor[k] * o[k];
      a1[k] = st[k] + factor[k] * PetscMin(o[k] + n[k], lo[k] - 1) + 1;
    }
    PetscCall(ReadBlock(D, a0[0], a1[0] - a0[0], a0[1], a1[1] - a0[1], a0[2], a1[2] - a0[2], &V));
  } else MemoryView(D, &V);
  for (int c = 0; c < SG_MFFN_NCH; c++)
    for (PetscInt i = 0; i < n[0]; i++)
      for (PetscInt j = 0; j < n[1]; j++)
        for (PetscInt k = 0; k < n[2]; k++) {
          double v = ViewAt(&V, c, s0 + factor[0] * (o[0] + i), z0 + factor[1] * (o[1] + j), x0 + factor[2] * (o[2] + k));
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
    for (int c = 0; c < SG_MFFN_NCH; c++) target[SG_MFFN_NCH * *Pown + c] = (ViewAt(&V, c, s0 + h[0], z0 + h[1], x0 + h[2]) - D->mean[c]) / D->std[c];
    if (grad) FieldGradients(D, &V, factor, lo, s0, z0, x0, h, &grad[SG_MFFN_NGRAD * *Pown]);
    (*Pown)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
