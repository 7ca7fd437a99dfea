/* Periodic geometry: the full neighbour list of a (possibly triclinic) supercell and a diamond
   lattice builder.  Units: Angstrom.  Cell vectors are the rows of box[9].

   The list holds every ordered pair (i, j, image L) with |x_j + L - x_i| < rcut, including images of
   an atom itself when the box is smaller than 2 rcut (Gamma-point supercell).  A cell list is used
   when each direction holds at least three cells of width >= rcut (then every image is met exactly
   once); smaller boxes loop over all pairs and all images in range. */
#include "sgtb.h"

typedef struct { PetscInt n, cap; PetscInt *j; PetscReal *d; } PairBuf;

static PetscErrorCode PairPush(PairBuf *b, PetscInt j, const PetscReal d[3])
{
  PetscFunctionBegin;
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 1024;
    PetscCall(PetscRealloc(sizeof(PetscInt) * b->cap, &b->j));
    PetscCall(PetscRealloc(sizeof(PetscReal) * 3 * b->cap, &b->d));
  }
  b->j[b->n] = j;
  for (int k = 0; k < 3; k++) b->d[3 * b->n + k] = d[k];
  b->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BoxInverse(MPI_Comm comm, const PetscReal box[9], PetscReal inv[9], PetscReal w[3])
{
  const PetscReal *a = box, *b = box + 3, *c = box + 6;
  PetscReal bc[3] = {b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]};
  PetscReal ca[3] = {c[1] * a[2] - c[2] * a[1], c[2] * a[0] - c[0] * a[2], c[0] * a[1] - c[1] * a[0]};
  PetscReal ab[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  PetscReal vol = a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2];

  PetscFunctionBegin;
  PetscCheck(vol > 1e-8, comm, PETSC_ERR_USER_INPUT, "Box has volume %g A^3: the cell vectors (rows of the box) must be right-handed and not degenerate", (double)vol);
  /* s = x inv with inv = box^{-1}: columns of inv are bc/vol, ca/vol, ab/vol */
  for (int k = 0; k < 3; k++) { inv[k * 3 + 0] = bc[k] / vol; inv[k * 3 + 1] = ca[k] / vol; inv[k * 3 + 2] = ab[k] / vol; }
  w[0] = vol / PetscSqrtReal(bc[0] * bc[0] + bc[1] * bc[1] + bc[2] * bc[2]);
  w[1] = vol / PetscSqrtReal(ca[0] * ca[0] + ca[1] * ca[1] + ca[2] * ca[2]);
  w[2] = vol / PetscSqrtReal(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckPair(MPI_Comm comm, PetscInt i, PetscInt j, PetscReal r, PetscReal rmin)
{
  PetscFunctionBegin;
  PetscCheck(r >= rmin, comm, PETSC_ERR_USER_INPUT, "Overlapping atoms: atoms %" PetscInt_FMT " and %" PetscInt_FMT " (0-based) are %g A apart (or an atom and its periodic image), below the model's minimum %g A; fix the structure or the box", i, j, (double)r, (double)rmin);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBNeighBuild(MPI_Comm comm, const SgTBGeom *g, PetscReal rcut, PetscReal rmin, SgTBNeigh *nl)
{
  PetscReal  inv[9], w[3], *s, rc2 = rcut * rcut;
  PetscInt   n = g->n, nc[3];
  PairBuf    buf = {0, 0, NULL, NULL};
  PetscBool  cells;

  PetscFunctionBegin;
  PetscCall(BoxInverse(comm, g->box, inv, w));
  PetscCall(PetscMalloc1(3 * n, &s));
  for (PetscInt i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      PetscReal v = g->x[3 * i] * inv[k] + g->x[3 * i + 1] * inv[3 + k] + g->x[3 * i + 2] * inv[6 + k];
      s[3 * i + k] = v - PetscFloorReal(v);
    }
  for (int k = 0; k < 3; k++) nc[k] = (PetscInt)PetscFloorReal(w[k] / rcut);
  cells = (nc[0] >= 3 && nc[1] >= 3 && nc[2] >= 3) ? PETSC_TRUE : PETSC_FALSE;
  nl->n = n;
  PetscCall(PetscMalloc1(n + 1, &nl->start));
  nl->start[0] = 0;
  if (cells) {
    PetscInt ncell = nc[0] * nc[1] * nc[2], *head, *next, *cid;
    PetscCall(PetscMalloc3(ncell, &head, n, &next, n, &cid));
    for (PetscInt c = 0; c < ncell; c++) head[c] = -1;
    for (PetscInt i = n - 1; i >= 0; i--) {
      PetscInt c[3];
      for (int k = 0; k < 3; k++) c[k] = PetscMin((PetscInt)(s[3 * i + k] * nc[k]), nc[k] - 1);
      cid[i] = (c[0] * nc[1] + c[1]) * nc[2] + c[2];
      next[i] = head[cid[i]]; head[cid[i]] = i;
    }
    for (PetscInt i = 0; i < n; i++) {
      PetscInt ci[3] = {cid[i] / (nc[1] * nc[2]), (cid[i] / nc[2]) % nc[1], cid[i] % nc[2]};
      for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++)
          for (int dz = -1; dz <= 1; dz++) {
            PetscInt  cj[3] = {ci[0] + dx, ci[1] + dy, ci[2] + dz};
            PetscReal sh[3];
            for (int k = 0; k < 3; k++) {
              sh[k] = 0;
              if (cj[k] < 0) { cj[k] += nc[k]; sh[k] = -1; }
              if (cj[k] >= nc[k]) { cj[k] -= nc[k]; sh[k] = 1; }
            }
            for (PetscInt j = head[(cj[0] * nc[1] + cj[1]) * nc[2] + cj[2]]; j >= 0; j = next[j]) {
              PetscReal ds[3], d[3], r2;
              if (j == i && sh[0] == 0 && sh[1] == 0 && sh[2] == 0) continue;
              for (int k = 0; k < 3; k++) ds[k] = s[3 * j + k] + sh[k] - s[3 * i + k];
              for (int k = 0; k < 3; k++) d[k] = ds[0] * g->box[k] + ds[1] * g->box[3 + k] + ds[2] * g->box[6 + k];
              r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
              if (r2 < rc2) {
                PetscCall(CheckPair(comm, i, j, PetscSqrtReal(r2), rmin));
                PetscCall(PairPush(&buf, j, d));
              }
            }
          }
      nl->start[i + 1] = buf.n;
    }
    PetscCall(PetscFree3(head, next, cid));
  } else {
    PetscInt na[3];
    for (int k = 0; k < 3; k++) na[k] = (PetscInt)PetscCeilReal(rcut / w[k]) + 1;
    for (PetscInt i = 0; i < n; i++) {
      for (PetscInt j = 0; j < n; j++) {
        PetscReal ds0[3];
        for (int k = 0; k < 3; k++) { ds0[k] = s[3 * j + k] - s[3 * i + k]; ds0[k] -= PetscFloorReal(ds0[k] + 0.5); }
        for (PetscInt a = -na[0]; a <= na[0]; a++)
          for (PetscInt b = -na[1]; b <= na[1]; b++)
            for (PetscInt c = -na[2]; c <= na[2]; c++) {
              PetscReal ds[3] = {ds0[0] + a, ds0[1] + b, ds0[2] + c}, d[3], r2;
              for (int k = 0; k < 3; k++) d[k] = ds[0] * g->box[k] + ds[1] * g->box[3 + k] + ds[2] * g->box[6 + k];
              r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
              if (r2 < 1e-20 && i == j) continue;
              if (r2 < rc2) {
                PetscCall(CheckPair(comm, i, j, PetscSqrtReal(r2), rmin));
                PetscCall(PairPush(&buf, j, d));
              }
            }
      }
      nl->start[i + 1] = buf.n;
    }
  }
  nl->j = buf.j; nl->d = buf.d;
  if (!nl->j) { PetscCall(PetscMalloc1(1, &nl->j)); PetscCall(PetscMalloc1(3, &nl->d)); }
  PetscCall(PetscFree(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBNeighDestroy(SgTBNeigh *nl)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(nl->start));
  PetscCall(PetscFree(nl->j));
  PetscCall(PetscFree(nl->d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Diamond lattice, conventional cubic cell of side a (8 atoms), nx x ny x nz cells; atoms ordered
   cell by cell so that consecutive atoms are spatially close. */
PetscErrorCode SgTBDiamond(PetscReal a, PetscInt nx, PetscInt ny, PetscInt nz, SgTBGeom *g)
{
  static const PetscReal b[8][3] = {{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0}, {.25, .25, .25}, {.25, .75, .75}, {.75, .25, .75}, {.75, .75, .25}};
  PetscInt k = 0;

  PetscFunctionBegin;
  g->n = 8 * nx * ny * nz;
  PetscCall(PetscMalloc1(3 * g->n, &g->x));
  for (PetscInt i = 0; i < nx; i++)
    for (PetscInt j = 0; j < ny; j++)
      for (PetscInt l = 0; l < nz; l++)
        for (int m = 0; m < 8; m++, k++) {
          g->x[3 * k] = a * (i + b[m][0]); g->x[3 * k + 1] = a * (j + b[m][1]); g->x[3 * k + 2] = a * (l + b[m][2]);
        }
  for (int q = 0; q < 9; q++) g->box[q] = 0;
  g->box[0] = a * nx; g->box[4] = a * ny; g->box[8] = a * nz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBGeomDestroy(SgTBGeom *g)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(g->x));
  g->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Spatial clusters: a grid of boxes in fractional coordinates holding about `target` atoms each;
   Lass et al. combine block columns of nearby atoms so that they share one submatrix. */
PetscErrorCode SgTBSpatialClusters(const SgTBGeom *g, PetscInt target, PetscInt *clus)
{
  PetscReal inv[9], w[3], vol;
  PetscInt  nb[3], *map, nmap, id = 0;

  PetscFunctionBegin;
  PetscCall(BoxInverse(PETSC_COMM_SELF, g->box, inv, w));
  vol = w[0] * w[1] * w[2]; /* only a scale: the bins follow the cell shape */
  for (int k = 0; k < 3; k++) {
    PetscReal side = PetscCbrtReal(vol * (PetscReal)target / (PetscReal)PetscMax(g->n, 1));
    nb[k] = PetscMax(1, (PetscInt)PetscFloorReal(w[k] / side + 0.5));
  }
  nmap = nb[0] * nb[1] * nb[2];
  PetscCall(PetscMalloc1(nmap, &map));
  for (PetscInt c = 0; c < nmap; c++) map[c] = -1;
  for (PetscInt i = 0; i < g->n; i++) {
    PetscInt c[3];
    for (int k = 0; k < 3; k++) {
      PetscReal v = g->x[3 * i] * inv[k] + g->x[3 * i + 1] * inv[3 + k] + g->x[3 * i + 2] * inv[6 + k];
      v -= PetscFloorReal(v);
      c[k] = PetscMin((PetscInt)(v * nb[k]), nb[k] - 1);
    }
    PetscInt cc = (c[0] * nb[1] + c[1]) * nb[2] + c[2];
    if (map[cc] < 0) map[cc] = id++;
    clus[i] = map[cc];
  }
  PetscCall(PetscFree(map));
  PetscFunctionReturn(PETSC_SUCCESS);
}
