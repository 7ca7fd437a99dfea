/* Environment matrix of se_e2_a: neighbour search (cell lists), periodic images, rows R_ij and
   their exact derivatives dR_ij/dr_ij. Conventions in deepmd.h. */
#include <math.h>
#include <stdlib.h>
#include "deepmd.h"

/* C^2 switch of DeePMD-kit (deepmd/env_mat: spline5_switch) */
void SgDPSwitch(PetscReal r, PetscReal rs, PetscReal rc, PetscReal *sw, PetscReal *dsw)
{
  if (r < rs) {
    *sw  = 1;
    *dsw = 0;
  } else if (r < rc) {
    PetscReal u = (r - rs) / (rc - rs);
    *sw  = u * u * u * (-6 * u * u + 15 * u - 10) + 1;
    *dsw = (3 * u * u * (-6 * u * u + 15 * u - 10) + u * u * u * (-12 * u + 15)) / (rc - rs);
  } else {
    *sw  = 0;
    *dsw = 0;
  }
}

typedef struct {
  PetscReal r2;
  PetscInt  j;
} Cand;

static int CandCmp(const void *a, const void *b)
{
  const Cand *p = a, *q = b;
  if (p->r2 < q->r2) return -1;
  if (p->r2 > q->r2) return 1;
  return (p->j > q->j) - (p->j < q->j); /* deterministic tie-break */
}

PetscErrorCode SgDPEnvFree(SgDPEnv *e)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(e->nlist, e->rij, e->env, e->denv));
  e->cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row and derivative for the displacement d (r = |d| < rc). */
static inline void EnvRow(const PetscReal d[3], PetscReal rs, PetscReal rc, PetscReal R[4], PetscReal dR[12])
{
  PetscReal r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], r = sqrt(r2), sw, dsw;
  SgDPSwitch(r, rs, rc, &sw, &dsw);
  PetscReal u = sw / r, du = dsw / r - sw / r2;         /* s(r) and ds/dr */
  PetscReal v = sw / r2, dv = dsw / r2 - 2 * sw / (r2 * r); /* s/r and d(s/r)/dr */
  R[0] = u;
  for (int a = 0; a < 3; a++) dR[a] = du * d[a] / r;
  for (int k = 0; k < 3; k++) {
    R[1 + k] = v * d[k];
    for (int a = 0; a < 3; a++) dR[3 * (1 + k) + a] = dv * d[a] / r * d[k] + (a == k ? v : 0);
  }
}

PetscErrorCode SgDPEnvBuild(const SgDPConfig *cfg, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, SgDPEnv *e)
{
  PetscFunctionBegin;
  PetscCall(SgDPEnvBuildRange(cfg, 0, n, nall, x, type, NULL, NULL, e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Candidate j of centre a0: kept when within rc (by type, for the per-type sort below) */
static inline PetscErrorCode AddCand(const SgDPConfig *cfg, const PetscReal *x, const PetscInt *type, PetscInt a0, PetscInt j, Cand *cand[], PetscInt cnt[], PetscInt *capc)
{
  PetscReal rc2 = cfg->rcut * cfg->rcut, d0, d1, d2, r2;
  PetscInt  t;

  PetscFunctionBegin;
  if (j == a0) PetscFunctionReturn(PETSC_SUCCESS);
  d0 = x[3 * j] - x[3 * a0];
  d1 = x[3 * j + 1] - x[3 * a0 + 1];
  d2 = x[3 * j + 2] - x[3 * a0 + 2];
  r2 = d0 * d0 + d1 * d1 + d2 * d2;
  if (r2 >= rc2) PetscFunctionReturn(PETSC_SUCCESS);
  t = type[j];
  PetscCheck(t >= 0 && t < cfg->ntypes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: atom %" PetscInt_FMT " has type %" PetscInt_FMT ", the model knows %" PetscInt_FMT " types", j, t, cfg->ntypes);
  if (cnt[t] == *capc) {
    *capc *= 2;
    for (PetscInt s = 0; s < cfg->ntypes; s++) PetscCall(PetscRealloc(sizeof(Cand) * *capc, &cand[s]));
  }
  cand[t][cnt[t]].r2  = r2;
  cand[t][cnt[t]++].j = j;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* centres c0 .. c0+n-1 (row i of e is centre c0+i). With a given neighbour list (nboff != NULL, e.g.
   a KIM simulator's): the candidates of atom a are nbr[nboff[a] .. nboff[a+1]-1] (indices < nall;
   entries beyond rcut and a itself are passed over), otherwise cell lists over all nall atoms find
   them. Either way the kept neighbours are sorted by distance (ties by index), so the same candidates
   give the same environment, bit for bit. */
PetscErrorCode SgDPEnvBuildRange(const SgDPConfig *cfg, PetscInt c0, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, const PetscInt *nboff, const PetscInt *nbr, SgDPEnv *e)
{
  PetscReal lo[3], hi[3], rc = cfg->rcut;
  PetscInt  nc[3], ncell, *head = NULL, *next = NULL, nnei = cfg->nnei, capc = 256;
  Cand     *cand[SG_DP_MAXT];
  PetscInt  cnt[SG_DP_MAXT];

  PetscFunctionBegin;
  if (e->cap < n) {
    PetscCall(SgDPEnvFree(e));
    PetscCall(PetscMalloc4(n * nnei, &e->nlist, n * nnei * 3, &e->rij, n * nnei * 4, &e->env, n * nnei * 12, &e->denv));
    e->cap = n;
  }
  e->n = n;
  e->nall = nall;
  e->nnei = nnei;
  e->overflow = 0;
  e->dropped  = 0;
  for (PetscInt t = 0; t < SG_DP_MAXT; t++) e->maxcnt[t] = 0;
  size_t ns = (size_t)PetscMax(n, 0) * (size_t)nnei;
  for (size_t i = 0; i < ns; i++) e->nlist[i] = -1;
  PetscCall(PetscArrayzero(e->rij, 3 * ns));
  PetscCall(PetscArrayzero(e->env, 4 * ns));
  PetscCall(PetscArrayzero(e->denv, 12 * ns));
  if (!nall) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt t = 0; t < cfg->ntypes; t++) PetscCall(PetscMalloc1(capc, &cand[t]));
  if (!nboff) {
    /* cell lists over the bounding box of all atoms, cells no smaller than rc */
    for (int d = 0; d < 3; d++) lo[d] = hi[d] = x[d];
    for (PetscInt i = 1; i < nall; i++)
      for (int d = 0; d < 3; d++) lo[d] = PetscMin(lo[d], x[3 * i + d]), hi[d] = PetscMax(hi[d], x[3 * i + d]);
    ncell = 1;
    for (int d = 0; d < 3; d++) {
      nc[d] = (PetscInt)((hi[d] - lo[d]) / rc);
      if (nc[d] < 1) nc[d] = 1;
      if (nc[d] > 256) nc[d] = 256;
      ncell *= nc[d];
    }
    PetscCall(PetscMalloc2(ncell, &head, nall, &next));
    for (PetscInt c = 0; c < ncell; c++) head[c] = -1;
  }
#define CELLOF(p, d) PetscMin(nc[d] - 1, (PetscInt)(((p) - lo[d]) / (hi[d] - lo[d] + 1e-300) * nc[d]))
  for (PetscInt i = nall - 1; i >= 0 && !nboff; i--) {
    PetscInt c = (CELLOF(x[3 * i], 0) * nc[1] + CELLOF(x[3 * i + 1], 1)) * nc[2] + CELLOF(x[3 * i + 2], 2);
    next[i] = head[c];
    head[c] = i;
  }
  for (PetscInt i = 0; i < n; i++) {
    PetscInt ci[3], a0 = c0 + i; /* row i, atom a0 */
    for (PetscInt t = 0; t < cfg->ntypes; t++) cnt[t] = 0;
    if (nboff) {
      for (PetscInt q = nboff[a0]; q < nboff[a0 + 1]; q++) {
        PetscCheck(nbr[q] >= 0 && nbr[q] < nall, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: the neighbour list of atom %" PetscInt_FMT " names atom %" PetscInt_FMT "; there are %" PetscInt_FMT, a0, nbr[q], nall);
        PetscCall(AddCand(cfg, x, type, a0, nbr[q], cand, cnt, &capc));
      }
    } else {
      for (int d = 0; d < 3; d++) ci[d] = CELLOF(x[3 * a0 + d], d);
      for (PetscInt a = PetscMax(0, ci[0] - 1); a <= PetscMin(nc[0] - 1, ci[0] + 1); a++)
        for (PetscInt b = PetscMax(0, ci[1] - 1); b <= PetscMin(nc[1] - 1, ci[1] + 1); b++)
          for (PetscInt c = PetscMax(0, ci[2] - 1); c <= PetscMin(nc[2] - 1, ci[2] + 1); c++)
            for (PetscInt j = head[(a * nc[1] + b) * nc[2] + c]; j >= 0; j = next[j]) PetscCall(AddCand(cfg, x, type, a0, j, cand, cnt, &capc));
    }
    for (PetscInt t = 0; t < cfg->ntypes; t++) {
      qsort(cand[t], cnt[t], sizeof(Cand), CandCmp);
      if (cnt[t] > cfg->sel[t]) e->overflow = PetscMax(e->overflow, cnt[t] - cfg->sel[t]);
      if (cnt[t] > cfg->sel[t]) e->dropped += cnt[t] - cfg->sel[t];
      e->maxcnt[t] = PetscMax(e->maxcnt[t], cnt[t]);
      for (PetscInt k = 0; k < PetscMin(cnt[t], cfg->sel[t]); k++) {
        PetscInt  s = i * nnei + cfg->sec[t] + k, j = cand[t][k].j;
        PetscReal *d = e->rij + 3 * s;
        for (int q = 0; q < 3; q++) d[q] = x[3 * j + q] - x[3 * a0 + q];
        e->nlist[s] = j;
        EnvRow(d, cfg->rcut_smth, rc, e->env + 4 * s, e->denv + 12 * s);
      }
    }
  }
#undef CELLOF
  for (PetscInt t = 0; t < cfg->ntypes; t++) PetscCall(PetscFree(cand[t]));
  if (!nboff) PetscCall(PetscFree2(head, next));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Images of a periodic (possibly triclinic) cell: atoms are wrapped into the cell, then every image
   whose fractional coordinates lie within rcut (measured along the cell heights) of the cell is
   added as a ghost. box rows are the cell vectors a, b, c. */
PetscErrorCode SgDPImages(PetscInt n, const PetscReal *x, const PetscInt *type, const PetscReal box[9], PetscReal rcut, PetscInt *nall, PetscReal **xall, PetscInt **tall, PetscInt **map)
{
  const PetscReal *a = box, *b = box + 3, *c = box + 6;
  PetscReal        inv[9], vol, h[3], m[3], cr[3][3];
  PetscInt         ns[3], cap, k;
  PetscReal       *s;

  PetscFunctionBegin;
  /* cross products b x c, c x a, a x b: rows of the inverse (transposed) / volume */
  cr[0][0] = b[1] * c[2] - b[2] * c[1];
  cr[0][1] = b[2] * c[0] - b[0] * c[2];
  cr[0][2] = b[0] * c[1] - b[1] * c[0];
  cr[1][0] = c[1] * a[2] - c[2] * a[1];
  cr[1][1] = c[2] * a[0] - c[0] * a[2];
  cr[1][2] = c[0] * a[1] - c[1] * a[0];
  cr[2][0] = a[1] * b[2] - a[2] * b[1];
  cr[2][1] = a[2] * b[0] - a[0] * b[2];
  cr[2][2] = a[0] * b[1] - a[1] * b[0];
  vol = a[0] * cr[0][0] + a[1] * cr[0][1] + a[2] * cr[0][2];
  PetscCheck(PetscAbsReal(vol) > 1e-12, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "deepmd: periodic box has zero volume (box rows are the cell vectors a, b, c)");
  for (int i = 0; i < 3; i++) {
    PetscReal nn = sqrt(cr[i][0] * cr[i][0] + cr[i][1] * cr[i][1] + cr[i][2] * cr[i][2]);
    h[i]         = PetscAbsReal(vol) / nn;
    ns[i]        = (PetscInt)ceil(rcut / h[i]);
    m[i]         = rcut / h[i];
    for (int j = 0; j < 3; j++) inv[3 * j + i] = cr[i][j] / vol; /* s = x . inv, inv[:, i] = cr[i]/vol */
  }
  PetscCall(PetscMalloc1(3 * n, &s));
  for (PetscInt i = 0; i < n; i++)
    for (int q = 0; q < 3; q++) {
      PetscReal v = x[3 * i] * inv[q] + x[3 * i + 1] * inv[3 + q] + x[3 * i + 2] * inv[6 + q];
      v -= floor(v);
      if (v >= 1) v = 0;
      s[3 * i + q] = v;
    }
  cap = n * (2 * ns[0] + 1) * (2 * ns[1] + 1) * (2 * ns[2] + 1);
  PetscCall(PetscMalloc3(3 * cap, xall, cap, tall, cap, map));
  k = 0;
  for (int pass = 0; pass < 2; pass++) /* originals first, then ghosts */
    for (PetscInt i0 = -ns[0]; i0 <= ns[0]; i0++)
      for (PetscInt i1 = -ns[1]; i1 <= ns[1]; i1++)
        for (PetscInt i2 = -ns[2]; i2 <= ns[2]; i2++) {
          PetscBool zero = (i0 == 0 && i1 == 0 && i2 == 0);
          if ((pass == 0) != zero) continue;
          for (PetscInt i = 0; i < n; i++) {
            PetscReal f0 = s[3 * i] + i0, f1 = s[3 * i + 1] + i1, f2 = s[3 * i + 2] + i2;
            if (!zero && (f0 < -m[0] || f0 > 1 + m[0] || f1 < -m[1] || f1 > 1 + m[1] || f2 < -m[2] || f2 > 1 + m[2])) continue;
            for (int q = 0; q < 3; q++) (*xall)[3 * k + q] = f0 * a[q] + f1 * b[q] + f2 * c[q];
            (*tall)[k] = type[i];
            (*map)[k]  = i;
            k++;
          }
        }
  *nall = k;
  PetscCall(PetscFree(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}
