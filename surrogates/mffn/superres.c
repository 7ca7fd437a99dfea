/* The mffn surrogate serving the field.superres slot (sgfield.h): inference on a whole domain.

   A block of the solver's coarse fields (p, b, u, w on a uniform (t, z, x) grid whose spacing is the
   model's latent step: factor x the fine data's spacing, checked) is normalised with the training
   data's statistics, wrapped periodically in x by `halo` points on each side (so the encoder sees
   the periodic domain, and points between the last and the first column lie inside the grid), and
   encoded once — the encoder is fully convolutional, any size whose dimensions are multiples of the
   poolings goes. Each rank then decodes its own query points, 4096 at a time, with recording off:
   a query point (t, z, x) is at latent coordinates ((t - t0)/s_t, (z - z0)/s_z, (x - x0)/s_x + halo),
   x taken modulo the period. Points up to `extrapolate` latent cells outside the block's z range
   (the fine rows between the last block row and the wall) use the edge cell's blend, extrapolated.

   Batch normalisation at inference: the model's own mode. A model trained with `batchnorm: false`
   (BN's learned scale and shift only: the shipped one) computes exactly the function it was trained
   as, on any domain. A model trained with per-crop batch statistics (`batchnorm: true`, the paper's
   BN) normalises with the statistics of the whole block here — there are no running statistics (the
   trainer normalises each crop by its own) — so its answer on a domain larger than its training
   crops departs from the training-time function; prefer `batchnorm: false` models for the swap.

   Uncertainty: the mean |PDE residual| of the super-resolved field (SgMFFNResidual: b transport,
   both momentum equations, continuity, free-fall units) over `residual_points` points drawn
   uniformly (a fixed counter-based sequence) in the block's domain at its last time, spread over
   the ranks and summed: the same value on any rank count up to the order of a sum.

   Projection (option project, not in the paper): the answer's u, w replaced by the nearest
   divergence-free field on the query grid (project.c: a least-squares stream function, Fourier in x,
   fourth-order differences in z), as the solver's own fields are; p and b are untouched, and so is
   the uncertainty (the residual of the network's own field). The rows of a column are coupled, so
   the ranks' rows are gathered; the answer is the same on any rank count.

   Options, read in the solver's options block (deck boussinesq: {mffn: {model: FILE, ...}}):
   model, residual_points, extrapolate, halo, block_snapshots, baseline (trilinear: answer by trilinear
   interpolation of the same block instead of the network, the paper's baseline, for comparisons),
   project. */
#include "sgmffn.h"
#include "sgsurrogateimpl.h"
#include "sgtrainer.h" /* SgCallNN */
#include "sgfield.h"
#include <math.h>
#include <string.h>

typedef struct {
  SgMFFN        model;
  SgMFFNPhysics ph;
  PetscInt      factor[3], mult[3], halo, halo_opt, npts, nt, trilinear; /* halo: of the encoded block */
  PetscReal     extrapolate;
  PetscBool       project;   /* project the answer's u, w onto divergence-free fields (project.c) */
  SgMFFNProjector proj;      /* the projector of the last grid: */
  PetscInt        pn[2];     /* its rows and columns, */
  PetscReal       pspace[2]; /* its z spacing and x period */
  MPI_Comm      comm;
  /* the latest encoding and the block it came from */
  SgnnTensor    lat, low;
  double        key[6];
  PetscInt      kn[3];
} MFFNSuperres;

static const char *const Baselines[] = {"none", "trilinear"};

static PetscErrorCode Destroy(void *ctx)
{
  MFFNSuperres *m = (MFFNSuperres *)ctx;

  PetscFunctionBegin;
  sgnn_tensor_free(&m->lat);
  sgnn_tensor_free(&m->low);
  PetscCall(SgMFFNProjectorDestroy(&m->proj));
  PetscCall(SgMFFNDestroy(&m->model));
  PetscCall(PetscFree(m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block is a cache hit when its sizes, first coordinates and a weighted sum of its values are those
   of the encoded one (the uncertainty and the answer of one call read the same block). */
static void BlockKey(const SgFieldBlock *B, double key[6])
{
  const PetscInt n = SgFieldBlockSize(B);
  double         s = 0, w = 0;

  for (PetscInt i = 0; i < n; i++) {
    s += B->v[i];
    w += B->v[i] * (1 + (i % 97) * 1e-2);
  }
  key[0] = B->coord[0][0];
  key[1] = B->coord[0][B->n[0] - 1];
  key[2] = B->coord[1][0];
  key[3] = B->coord[2][0];
  key[4] = s;
  key[5] = w;
}

/* Check the block against the model and encode it (or reuse the last encoding). */
static PetscErrorCode Encode(MFFNSuperres *m, const SgFieldBlock *B)
{
  const char *ax[3] = {"t", "z", "x"};
  double      key[6];
  PetscInt    T = B->n[0], Z = B->n[1], X = B->n[2], Xe;
  double     *x;

  PetscFunctionBegin;
  PetscCheck(B->nch == SG_MFFN_NCH, m->comm, PETSC_ERR_ARG_SIZ, "mffn: the model reads p, b, u, w; the block has %" PetscInt_FMT " channels", B->nch);
  for (int c = 0; c < SG_MFFN_NCH; c++) PetscCheck(!strcmp(B->channel[c], (const char *[]){"p", "b", "u", "w"}[c]), m->comm, PETSC_ERR_ARG_WRONG, "mffn: block channel %d is %s, the model reads p, b, u, w in this order", c, B->channel[c]);
  PetscCheck(B->periodic[2], m->comm, PETSC_ERR_ARG_WRONG, "mffn: the model was trained on fields periodic in x; the block is not");
  for (int a = 0; a < 3; a++) {
    PetscBool uni;
    PetscReal h;
    PetscCall(SgFieldBlockSpacing(B, a, 1e-9, &uni, &h));
    PetscCheck(B->n[a] >= 2 || a == 0, m->comm, PETSC_ERR_ARG_SIZ, "mffn: the block needs >= 2 points along %s", ax[a]);
    if (B->n[a] < 2) continue;
    PetscCheck(uni && PetscAbsReal(h - m->ph.scale[a]) <= 1e-6 * m->ph.scale[a], m->comm, PETSC_ERR_ARG_WRONG, "mffn: the block's %s spacing is %g%s; the model reads grids %g apart (its factor x the training data's spacing)", ax[a], (double)h, uni ? "" : " (not uniform)", (double)m->ph.scale[a]);
  }
  BlockKey(B, key);
  if (m->lat && m->kn[0] == T && m->kn[1] == Z && m->kn[2] == X && !memcmp(key, m->key, sizeof key)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(T % m->mult[0] == 0 && Z % m->mult[1] == 0, m->comm, PETSC_ERR_ARG_SIZ, "mffn: a block of %" PetscInt_FMT " x %" PetscInt_FMT " (t, z) points; the poolings need multiples of %" PetscInt_FMT " x %" PetscInt_FMT, T, Z, m->mult[0], m->mult[1]);
  m->halo = m->halo_opt;
  if (!m->halo) /* the smallest halo >= 1 that makes the wrapped block a multiple of the x pooling */
    for (m->halo = 1; m->halo < m->mult[2] && (X + 2 * m->halo) % m->mult[2]; m->halo++) {}
  Xe = X + 2 * m->halo;
  PetscCheck(Xe % m->mult[2] == 0, m->comm, PETSC_ERR_ARG_SIZ, "mffn: %" PetscInt_FMT " x points + 2 x halo %" PetscInt_FMT " is not a multiple of the poolings' %" PetscInt_FMT ": set mffn halo (or use a block whose x points are even)", X, m->halo, m->mult[2]);
  sgnn_tensor_free(&m->lat);
  sgnn_tensor_free(&m->low);
  PetscCall(PetscMalloc1(SG_MFFN_NCH * T * Z * Xe, &x));
  for (PetscInt c = 0; c < SG_MFFN_NCH; c++)
    for (PetscInt k = 0; k < T * Z; k++)
      for (PetscInt i = 0; i < Xe; i++) {
        const PetscInt src = ((i - m->halo) % X + X) % X;
        x[(c * T * Z + k) * Xe + i] = (B->v[(c * T * Z + k) * X + src] - m->ph.mean[c]) / m->ph.std[c];
      }
  {
    int shape[5] = {1, SG_MFFN_NCH, (int)T, (int)Z, (int)Xe}, was = sgnn_set_grad_enabled(0);
    SgCallNN(sgnn_tensor_from_f64(m->model->be, m->model->dt, 5, shape, x, &m->low));
    if (!m->trilinear) PetscCall(SgMFFNEncode(m->model, m->low, &m->lat));
    else m->lat = sgnn_tensor_ref(m->low); /* the baseline interpolates the block itself */
    sgnn_set_grad_enabled(was);
  }
  PetscCall(PetscFree(x));
  PetscCall(PetscArraycpy(m->key, key, 6));
  m->kn[0] = T;
  m->kn[1] = Z;
  m->kn[2] = X;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* latent coordinates of physical point pt in block B */
static PetscErrorCode Latent(MFFNSuperres *m, const SgFieldBlock *B, const PetscReal pt[3], double l[3])
{
  const PetscReal X = B->n[2], tol = 1e-9;
  PetscReal       lx;

  PetscFunctionBegin;
  l[0] = B->n[0] > 1 ? (pt[0] - B->coord[0][0]) / m->ph.scale[0] : 0;
  l[1] = (pt[1] - B->coord[1][0]) / m->ph.scale[1];
  lx   = fmod((pt[2] - B->coord[2][0]) / m->ph.scale[2], X);
  if (lx < 0) lx += X;
  l[2] = lx + m->halo;
  PetscCheck(l[0] >= -tol && l[0] <= B->n[0] - 1 + tol, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: query time %g is outside the block's [%g, %g]", (double)pt[0], (double)B->coord[0][0], (double)B->coord[0][B->n[0] - 1]);
  l[0] = PetscMin(PetscMax(l[0], 0), B->n[0] - 1);
  if (m->trilinear) l[1] = PetscMin(PetscMax(l[1], 0), B->n[1] - 1); /* the baseline holds the edge value */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The network (or the trilinear baseline) at P latent points l[P][3] -> out [P, 4] normalised; with
   record, the graph w.r.t. the points is kept (pts becomes a leaf requiring grad). */
static PetscErrorCode Decode(MFFNSuperres *m, PetscInt P, const double *l, PetscBool record, SgnnTensor *pts, SgnnTensor *out)
{
  int ps[2] = {(int)P, 3};

  PetscFunctionBegin;
  if (m->lat && sgnn_tensor_shape(m->lat)[2] == 1) { /* one snapshot: the model needs two time levels */
    SETERRQ(m->comm, PETSC_ERR_ARG_SIZ, "mffn: a block of one snapshot; the model interpolates between >= 2 time levels");
  }
  SgCallNN(sgnn_tensor_from_f64(m->model->be, m->model->dt, 2, ps, l, pts));
  if (record) SgCallNN(sgnn_tensor_set_requires_grad(*pts, 1));
  if (!m->trilinear) PetscCall(SgMFFNDecode(m->model, m->lat, *pts, out));
  else {
    int        p3[3] = {1, (int)P, 3}, os[2] = {(int)P, SG_MFFN_NCH};
    SgnnTensor pt3, o3;
    SgCallNN(sgnn_reshape(*pts, 3, p3, &pt3));
    SgCallNN(sgnn_interp_trilinear(m->low, pt3, &o3));
    SgCallNN(sgnn_reshape(o3, 2, os, out));
    sgnn_tensor_free(&pt3);
    sgnn_tensor_free(&o3);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Project the answer's u, w (out: [c][t][z][x], this rank's rows of a grid query) onto divergence-free
   fields. The projection couples the rows of a column, so every rank gathers all ranks' rows (each
   rank's query is a set of whole rows: the same t levels and x points on every rank, rows anywhere),
   sorts them by z, projects the whole grid and keeps its own rows: the answer does not depend on how
   the rows are spread over the ranks. The grid must span the x period uniformly and its rows be
   uniform in z. Collective on the provider's communicator. */
static PetscErrorCode Project(MFFNSuperres *m, const SgFieldSuperresInput *in, PetscReal *v)
{
  const SgFieldQuery *Q = in->query;
  const PetscReal     period = in->coarse->hi[2] - in->coarse->lo[2];
  const PetscInt      nzl = Q->n[1], nq = Q->n[0] * nzl * Q->n[2];
  PetscMPIInt         size, *cnt, *off, *vcnt, *voff, nzl_mpi;
  PetscInt            nz = 0, *order, nt, nx;
  PetscReal          *z, *gu, *uw, hz = 0;
  PetscBool           bad = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCheck(Q->grid, m->comm, PETSC_ERR_ARG_WRONG, "mffn project: the divergence-free projection needs grid queries (whole rows of x points), not scattered points");
  PetscCallMPI(MPI_Comm_size(m->comm, &size));
  /* the t levels and x points must be every rank's; the x points must span the period uniformly */
  nt = Q->n[0];
  nx = Q->n[2]; /* a rank without rows may say anything about these */
  {
    PetscInt g[2] = {nzl ? nt : 0, nzl ? nx : 0};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPIU_INT, MPI_MAX, m->comm));
    bad = nzl > 0 && (g[0] != nt || g[1] != nx);
    nt = g[0];
    nx = g[1];
  }
  for (PetscInt i = 1; i < nx && nzl && !bad; i++) bad = PetscAbsReal(Q->coord[2][i] - Q->coord[2][i - 1] - period / nx) > 1e-9 * period;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_BOOL, MPI_LOR, m->comm));
  PetscCheck(!bad, m->comm, PETSC_ERR_ARG_WRONG, "mffn project: every rank's query must hold the same t levels and %" PetscInt_FMT " x points %g apart, spanning the x period %g", nx, (double)(period / nx), (double)period);
  PetscCall(PetscMalloc4(size, &cnt, size, &off, size, &vcnt, size, &voff));
  PetscCall(PetscMPIIntCast(nzl, &nzl_mpi));
  PetscCallMPI(MPI_Allgather(&nzl_mpi, 1, MPI_INT, cnt, 1, MPI_INT, m->comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    off[r] = nz;
    nz += cnt[r];
  }
  for (PetscMPIInt r = 0; r < size; r++) {
    vcnt[r] = 2 * cnt[r] * nt * nx;
    voff[r] = 2 * off[r] * nt * nx;
  }
  PetscCall(PetscMalloc4(nz, &z, nz, &order, 2 * nz * nt * nx, &gu, 2 * nz * nt * nx, &uw));
  PetscCallMPI(MPI_Allgatherv(Q->coord[1], nzl_mpi, MPIU_REAL, z, cnt, off, MPIU_REAL, m->comm));
  /* this rank's u, w as [c][t][z][x] -> gathered by rank: [rank block][c][t][zl][x] */
  PetscCall(PetscArraycpy(uw, v + 2 * nq, 2 * nq));
  PetscCallMPI(MPI_Allgatherv(uw, (PetscMPIInt)(2 * nq), MPIU_REAL, gu, vcnt, voff, MPIU_REAL, m->comm));
  for (PetscInt i = 0; i < nz; i++) order[i] = i;
  PetscCall(PetscSortRealWithPermutation(nz, z, order));
  if (nz > 1) hz = z[order[1]] - z[order[0]];
  for (PetscInt i = 1; i < nz && !bad; i++) bad = PetscAbsReal(z[order[i]] - z[order[i - 1]] - hz) > 1e-9 * hz;
  PetscCheck(!bad && hz > 0, m->comm, PETSC_ERR_ARG_WRONG, "mffn project: the %" PetscInt_FMT " queried rows (all ranks) must be distinct and uniformly spaced in z", nz);
  if (!m->proj || m->pn[0] != nz || m->pn[1] != nx || m->pspace[0] != hz || m->pspace[1] != period) {
    PetscCall(SgMFFNProjectorDestroy(&m->proj));
    PetscCall(SgMFFNProjectorCreate(nz, nx, hz, period, &m->proj));
    m->pn[0] = nz;
    m->pn[1] = nx;
    m->pspace[0] = hz;
    m->pspace[1] = period;
  }
  { /* gathered row order[i] of rank r -> row i of the whole grid, [c][t][z][x] */
    PetscMPIInt r = 0;
    for (PetscInt i = 0; i < nz; i++) {
      const PetscInt g = order[i];
      while (g >= off[r] + cnt[r]) r++;
      while (g < off[r]) r--;
      for (int c = 0; c < 2; c++)
        for (PetscInt t = 0; t < nt; t++) PetscCall(PetscArraycpy(uw + ((c * nt + t) * nz + i) * nx, gu + voff[r] + ((c * nt + t) * cnt[r] + g - off[r]) * nx, nx));
    }
  }
  PetscCall(SgMFFNProjectorApply(m->proj, nt, uw, uw + nt * nz * nx));
  { /* this rank's rows back */
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(m->comm, &rank));
    for (PetscInt i = 0; i < nz; i++) {
      const PetscInt g = order[i];
      if (g < off[rank] || g >= off[rank] + cnt[rank]) continue;
      for (int c = 0; c < 2; c++)
        for (PetscInt t = 0; t < nt; t++) PetscCall(PetscArraycpy(v + (2 + c) * nq + (t * nzl + g - off[rank]) * nx, uw + ((c * nt + t) * nz + i) * nx, nx));
    }
  }
  PetscCall(PetscFree4(z, order, gu, uw));
  PetscCall(PetscFree4(cnt, off, vcnt, voff));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Superres(void *ctx, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  MFFNSuperres  *m     = (MFFNSuperres *)ctx;
  const PetscInt nq    = SgFieldQueryCount(in->query), chunk = 4096;
  double        *l, *o;
  int            was;

  PetscFunctionBegin;
  PetscCall(Encode(m, in->coarse));
  PetscCall(PetscMalloc2(3 * chunk, &l, SG_MFFN_NCH * chunk, &o));
  was = sgnn_set_grad_enabled(0);
  for (PetscInt p0 = 0; p0 < nq; p0 += chunk) {
    const PetscInt P = PetscMin(chunk, nq - p0);
    SgnnTensor     pts, y;
    for (PetscInt p = 0; p < P; p++) {
      PetscReal pt[3];
      SgFieldQueryPoint(in->query, p0 + p, pt);
      PetscCall(Latent(m, in->coarse, pt, l + 3 * p));
    }
    PetscCall(Decode(m, P, l, PETSC_FALSE, &pts, &y));
    SgCallNN(sgnn_tensor_to_f64(y, o));
    for (PetscInt p = 0; p < P; p++)
      for (int c = 0; c < SG_MFFN_NCH; c++) out->v[c * nq + p0 + p] = m->ph.mean[c] + m->ph.std[c] * o[SG_MFFN_NCH * p + c];
    sgnn_tensor_free(&pts);
    sgnn_tensor_free(&y);
  }
  sgnn_set_grad_enabled(was);
  PetscCall(PetscFree2(l, o));
  if (m->project) PetscCall(Project(m, in, out->v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mean |PDE residual| over npts points at the block's last time, uniform in its z range and in x */
static PetscErrorCode Uncertainty(void *ctx, const SgFieldSuperresInput *in, PetscReal *unc)
{
  MFFNSuperres       *m = (MFFNSuperres *)ctx;
  const SgFieldBlock *B = in->coarse;
  PetscMPIInt         rank, size;
  PetscInt            P = 0;
  double             *l, acc[5] = {0, 0, 0, 0, 0}, g[5];
  SgnnTensor          pts, y;

  PetscFunctionBegin;
  PetscCall(Encode(m, B));
  PetscCallMPI(MPI_Comm_rank(m->comm, &rank));
  PetscCallMPI(MPI_Comm_size(m->comm, &size));
  PetscCall(PetscMalloc1(3 * (m->npts / size + 1), &l));
  for (PetscInt i = rank; i < m->npts; i += size, P++) {
    l[3 * P + 0] = B->n[0] - 1;
    l[3 * P + 1] = (B->n[1] - 1) * SgRandomUniform(20200, 1, (uint64_t)i);
    l[3 * P + 2] = m->halo + B->n[2] * SgRandomUniform(20200, 2, (uint64_t)i);
  }
  if (P) {
    PetscCall(Decode(m, P, l, PETSC_TRUE, &pts, &y));
    PetscCall(SgMFFNResidualSums(&m->ph, y, pts, P, acc));
    sgnn_tensor_free(&pts);
    sgnn_tensor_free(&y);
  }
  acc[4] = P;
  PetscCallMPI(MPI_Allreduce(acc, g, 5, MPI_DOUBLE, MPI_SUM, m->comm));
  *unc = (g[0] + g[1] + g[2] + g[3]) / (4 * g[4]);
  PetscCall(PetscFree(l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNSuperresProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldSuperresProvider *p)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  MFFNSuperres     *m;
  char              path[PETSC_MAX_PATH_LEN] = "";
  PetscBool         set, readable;
  PetscInt          base = 0;
  SgnnBackend      *be;

  PetscFunctionBegin;
  (void)s;
  PetscCheck(PetscOptionsObject, info->comm, PETSC_ERR_ARG_NULL, "mffn: the field.superres provider reads its options in the solver's options block");
  PetscCall(PetscNew(&m));
  m->comm = info->comm;
  m->npts = 512;
  m->extrapolate = 1;
  PetscCall(SgOptionsPath("-mffn_model", "field.superres by mffn: the model file (surge train with surrogate mffn; shipped: inputs/mffn/models/)", SG_PATH_IN, path, path, sizeof path, &set));
  PetscCall(SgOptionsInt("-mffn_residual_points", "field.superres by mffn: points of the PDE-residual uncertainty (over all ranks)", m->npts, &m->npts, NULL, 1, 1 << 24));
  PetscCall(SgOptionsReal("-mffn_extrapolate", "field.superres by mffn: query points may lie this many block cells outside the block's z range (the fine rows near the walls)", "block cells", m->extrapolate, &m->extrapolate, NULL, 0, 4));
  PetscCall(SgOptionsInt("-mffn_halo", "field.superres by mffn: periodic x halo of the encoded block, in block points per side (0: the smallest that fits the poolings, >= 1)", m->halo_opt, &m->halo_opt, NULL, 0, 1 << 12));
  PetscCall(SgOptionsInt("-mffn_block_snapshots", "field.superres by mffn: snapshots per block (0: the smallest the poolings allow, >= 2)", m->nt, &m->nt, NULL, 0, 64));
  PetscCall(SgOptionsEList("-mffn_baseline", "field.superres by mffn: none (the network), or trilinear (interpolate the block: the paper's baseline, for comparisons)", Baselines, 2, Baselines[0], &base, NULL));
  PetscCall(SgOptionsBool("-mffn_project", "field.superres by mffn: make the served u, w divergence-free: replaced by (d psi/dz, -d psi/dx) for the least-squares stream function psi (Fourier in x, fourth-order differences in z); grid queries spanning the x period on uniform z rows only", m->project, &m->project, NULL));
  m->trilinear = base;
  PetscCheck(set && path[0], info->comm, PETSC_ERR_USER_INPUT, "mffn serving field.superres needs its model file: set %smffn_model (e.g. boussinesq: {mffn: {model: inputs/mffn/models/mffn_rb_superres.h5}})", info->prefix);
  PetscCall(PetscTestFile(path, 'r', &readable));
  PetscCheck(readable, info->comm, PETSC_ERR_USER_INPUT, "mffn: cannot read the model file '%s' (%smffn_model)", path, info->prefix);
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNLoad(path, be, &m->model, &m->ph, m->factor));
  m->model->extrapolate = m->extrapolate;
  PetscCall(SgMFFNConfigGridMultiple(&m->model->cfg, m->mult));
  if (!m->nt) m->nt = PetscMax(2, m->mult[0]);
  /* the solver's physics must be the model's */
  PetscCheck(info->nch == SG_MFFN_NCH, info->comm, PETSC_ERR_USER_INPUT, "mffn: the model serves p, b, u, w; the solver offers %" PetscInt_FMT " channels", info->nch);
  for (PetscInt k = 0; k < info->nparam; k++) {
    PetscBool ra, pr;
    PetscCall(PetscStrcmp(info->param_name[k], "rayleigh", &ra));
    PetscCall(PetscStrcmp(info->param_name[k], "prandtl", &pr));
    if (ra || pr) {
      PetscReal Ra = ra ? info->param[k] : 0, Pr = pr ? info->param[k] : 0;
      for (PetscInt j = 0; j < info->nparam; j++) {
        if (ra && !strcmp(info->param_name[j], "prandtl")) Pr = info->param[j];
        if (pr && !strcmp(info->param_name[j], "rayleigh")) Ra = info->param[j];
      }
      if (Ra > 0 && Pr > 0) {
        const PetscReal nu = 1 / PetscSqrtReal(Ra / Pr), kappa = 1 / PetscSqrtReal(Ra * Pr);
        /* nu kappa = 1/Ra, nu/kappa = Pr: the model's Ra and Pr, named in the user's terms */
        const PetscReal Ram = 1 / (m->ph.nu * m->ph.kappa), Prm = m->ph.nu / m->ph.kappa;
        PetscCheck(PetscAbsReal(nu - m->ph.nu) <= 1e-9 * nu && PetscAbsReal(kappa - m->ph.kappa) <= 1e-9 * kappa, info->comm, PETSC_ERR_USER_INPUT, "mffn: model %s was trained at Ra = %g, Pr = %g (nu = %g, kappa = %g); the solver has Ra = %g, Pr = %g: set -%srayleigh %g and -%sprandtl %g, or train a model at this Ra and Pr (surge train with mffn: {rayleigh: %g, prandtl: %g})", path, (double)Ram, (double)Prm, (double)m->ph.nu, (double)m->ph.kappa, (double)Ra, (double)Pr, info->prefix, (double)Ram, info->prefix, (double)Prm, (double)Ra, (double)Pr);
      }
    }
  }
  if (m->ph.length[0] > 0) { /* the box (and so its aspect ratio) must be the one the model learned */
    const PetscReal Lx = info->hi[2] - info->lo[2], Lz = info->hi[1] - info->lo[1];
    PetscCheck(PetscAbsReal(Lx - m->ph.length[0]) <= 1e-9 * m->ph.length[0] && PetscAbsReal(Lz - m->ph.length[1]) <= 1e-9 * m->ph.length[1], info->comm, PETSC_ERR_USER_INPUT, "mffn: model %s was trained on a box Lx x Lz = %g x %g; the solver's is %g x %g: set -%slength %g,%g, or train a model on data of this box (surge train with mffn: {length: [%g, %g]})", path, (double)m->ph.length[0], (double)m->ph.length[1], (double)Lx, (double)Lz, info->prefix, (double)m->ph.length[0], (double)m->ph.length[1], (double)Lx, (double)Lz);
  } else PetscCall(PetscInfo(NULL, "mffn: model %s does not record its box (written before the length attribute): not checked\n", path));
  p->fn          = Superres;
  p->ctx         = m;
  p->uncertainty = Uncertainty;
  p->destroy     = Destroy;
  p->block_nt    = m->nt;
  for (int a = 0; a < 3; a++) p->block_spacing[a] = m->ph.scale[a];
  PetscCall(PetscStrncpy(p->uncertainty_units, "mean |PDE residual|, free-fall units", sizeof p->uncertainty_units));
  PetscCall(PetscStrncpy(p->name, m->trilinear ? "mffn_trilinear" : "mffn", sizeof p->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}
