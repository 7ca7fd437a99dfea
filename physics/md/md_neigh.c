/* Verlet neighbour lists (Verlet 1967) built from cell ("bin") lists, with a skin so that a list
   serves several steps (Allen & Tildesley, Computer Simulation of Liquids, 2nd ed., sec. 5.3).

   Bins form a GLOBAL grid in fractional coordinates, nbin[d] = floor(thickness_d / (cutneigh/2)),
   so a bin is at least cutneigh/2 thick and the stencil reaches +/-2 bins (pruned to bins that can
   hold a neighbour in an orthorhombic cell).  Within a bin atoms are kept in global-id order and
   the stencil is visited in a fixed order: the neighbours of an atom come in an order fixed by
   the positions and ids alone, so a full list, and therefore the force summation on every atom,
   is the same for any number of ranks.  That is what makes 1- and P-rank trajectories
   bit-identical with full lists.
   Half lists keep the pair (i, j) only where id_j > id_i (any image): every pair is counted once
   in the whole machine; the ghost's share goes back to its owner by reverse communication. */
#include "mdimpl.h"

PetscErrorCode SgMDNeighDestroy(SgMDNeigh *nb)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(nb->stencil));
  PetscCall(PetscFree2(nb->binhead, nb->bincount));
  PetscCall(PetscFree(nb->binatoms));
  PetscCall(PetscFree2(nb->first, nb->num));
  PetscCall(PetscFree(nb->list));
  PetscCall(PetscFree(nb->pack));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define SG_MD_MAX_BINS 4194304.0 /* 2^22 bins: 32 MB of bin heads and counts */

PetscErrorCode SgMDNeighSetUp(SgMDNeigh *nb, const SgMDDomain *dom)
{
  const SgMDBox *box = &dom->box;
  PetscReal      bw[3];

  PetscFunctionBegin;
  PetscReal      want[3], ext = 1, scale = 1;

  /* Bins of width >= cutneigh/2 (so the +/-2 stencil reaches cutneigh), as many as fit, but at most
     SG_MD_MAX_BINS per sub-domain: a dilute system (a huge lattice constant) would otherwise ask for
     more bins than memory or PetscInt hold. Wider bins stay correct, only slower. */
  for (int d = 0; d < 3; d++) {
    want[d] = PetscMax(1, PetscFloorReal(box->thick[d] / (0.5 * nb->cutneigh)));
    ext *= want[d] * (dom->subhi[d] - dom->sublo[d] + 2 * dom->cutghost / box->thick[d]) + 5;
  }
  if (ext > SG_MD_MAX_BINS) scale = PetscPowReal(SG_MD_MAX_BINS / ext, 1.0 / 3.0);
  for (int d = 0; d < 3; d++) {
    PetscReal cutfrac = dom->cutghost / box->thick[d];
    nb->nbin[d]       = (PetscInt)PetscMax(1, PetscFloorReal(want[d] * scale));
    bw[d]             = box->thick[d] / nb->nbin[d];
    /* two spare bins each side: every atom within cutghost of the sub-domain lands in
       [2, bext-3], so the +/-2 stencil never leaves the array */
    nb->blo[d]        = (PetscInt)PetscFloorReal((dom->sublo[d] - cutfrac) * nb->nbin[d]) - 2;
    nb->bext[d]       = (PetscInt)PetscFloorReal((dom->subhi[d] + cutfrac) * nb->nbin[d]) + 2 - nb->blo[d] + 1;
  }
  /* The stencil is stored as up to 25 rows along a (x-fastest bin numbering makes a row of bins
     one contiguous range of binned atoms): stencil[2s] is the first bin of row s relative to the
     atom's bin, stencil[2s+1] its length (5 bins, or 3 when the row's outer bins cannot hold a
     neighbour in an orthorhombic cell); rows that cannot hold one are dropped. */
  PetscCall(PetscFree(nb->stencil));
  PetscCall(PetscMalloc1(50, &nb->stencil));
  nb->nstencil = 0;
  for (int k = -2; k <= 2; k++)
    for (int j = -2; j <= 2; j++) {
      PetscReal dy = PetscMax(0, PetscAbsInt(j) - 1) * bw[1], dz = PetscMax(0, PetscAbsInt(k) - 1) * bw[2], c2 = nb->cutneigh * nb->cutneigh;
      PetscInt  ri = 2;
      if (!box->triclinic) {
        if (dy * dy + dz * dz >= c2) continue;
        if (bw[0] * bw[0] + dy * dy + dz * dz >= c2) ri = 1;
      }
      nb->stencil[2 * nb->nstencil]     = -ri + nb->bext[0] * (j + nb->bext[1] * k);
      nb->stencil[2 * nb->nstencil + 1] = 2 * ri + 1;
      nb->nstencil++;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscInt BinOf(const SgMDNeigh *nb, const SgMDBox *box, const PetscReal *x)
{
  PetscReal s[3];
  PetscInt  c[3];
  SgMDBoxFrac(box, x, s);
  for (int d = 0; d < 3; d++) {
    c[d] = (PetscInt)PetscFloorReal(s[d] * nb->nbin[d]) - nb->blo[d];
    c[d] = PetscMin(PetscMax(c[d], 2), nb->bext[d] - 3); /* keep the +/-2 stencil inside the array */
  }
  return c[0] + nb->bext[0] * (c[1] + nb->bext[1] * c[2]);
}

PetscErrorCode SgMDNeighBuild(SgMDNeigh *nb, SgMDDomain *dom)
{
  PetscInt   ntot = dom->nlocal + dom->nghost, nbins = nb->bext[0] * nb->bext[1] * nb->bext[2], *bin, used = 0;
  PetscReal  cs = nb->cutneigh * nb->cutneigh;
  const PetscReal *x = dom->x;
  const PetscInt  *id = dom->id;

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) PetscCheck(nb->bext[d] >= 5, PETSC_COMM_SELF, PETSC_ERR_PLIB, "md: bin grid too small");
  if (nbins > nb->nbinalloc) {
    PetscCall(PetscFree2(nb->binhead, nb->bincount));
    nb->nbinalloc = nbins;
    PetscCall(PetscMalloc2(nbins + 1, &nb->binhead, nbins, &nb->bincount));
  }
  if (ntot > nb->binatomalloc) {
    PetscCall(PetscFree(nb->binatoms));
    nb->binatomalloc = (PetscInt)(1.2 * ntot) + 16;
    PetscCall(PetscMalloc1(2 * nb->binatomalloc, &nb->binatoms));
  }
  bin = nb->binatoms + nb->binatomalloc; /* second half: bin of each atom */
  PetscCall(PetscArrayzero(nb->bincount, nbins));
  for (PetscInt i = 0; i < ntot; i++) {
    bin[i] = BinOf(nb, &dom->box, &x[3 * i]);
    nb->bincount[bin[i]]++;
  }
  nb->binhead[0] = 0;
  for (PetscInt b = 0; b < nbins; b++) nb->binhead[b + 1] = nb->binhead[b] + nb->bincount[b];
  PetscCall(PetscArrayzero(nb->bincount, nbins));
  for (PetscInt i = 0; i < ntot; i++) {
    PetscInt b = bin[i], p = nb->binhead[b] + nb->bincount[b]++;
    /* insertion by global id keeps each bin sorted (bins hold a handful of atoms) */
    while (p > nb->binhead[b] && id[nb->binatoms[p - 1]] > id[i]) {
      nb->binatoms[p] = nb->binatoms[p - 1];
      p--;
    }
    nb->binatoms[p] = i;
  }
  if (dom->nlocal > nb->nfirstalloc) {
    PetscCall(PetscFree2(nb->first, nb->num));
    nb->nfirstalloc = (PetscInt)(1.2 * dom->nlocal) + 16;
    PetscCall(PetscMalloc2(nb->nfirstalloc, &nb->first, nb->nfirstalloc, &nb->num));
  }
  /* coordinates copied in bin order: the candidate loop below streams through memory */
  if (ntot > nb->npackalloc) {
    PetscCall(PetscFree(nb->pack));
    nb->npackalloc = (PetscInt)(1.2 * ntot) + 16;
    PetscCall(PetscMalloc1(4 * nb->npackalloc, &nb->pack));
  }
  for (PetscInt p = 0; p < ntot; p++) {
    PetscInt j = nb->binatoms[p];
    nb->pack[4 * p] = x[3 * j]; nb->pack[4 * p + 1] = x[3 * j + 1]; nb->pack[4 * p + 2] = x[3 * j + 2];
    nb->pack[4 * p + 3] = (PetscReal)id[j];
  }
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscInt  b = bin[i], cand = 0, n = 0, *l;
    PetscReal xi = x[3 * i], yi = x[3 * i + 1], zi = x[3 * i + 2], idi = (PetscReal)id[i];
    const PetscReal *pk = nb->pack;
    for (PetscInt s = 0; s < nb->nstencil; s++) cand += nb->binhead[b + nb->stencil[2 * s] + nb->stencil[2 * s + 1]] - nb->binhead[b + nb->stencil[2 * s]];
    if (used + cand > nb->nlistalloc) {
      PetscInt *nl, na = PetscMax((PetscInt)(1.5 * nb->nlistalloc), used + cand + 1024);
      PetscCall(PetscMalloc1(na, &nl));
      if (used) PetscCall(PetscArraycpy(nl, nb->list, used));
      PetscCall(PetscFree(nb->list));
      nb->list = nl;
      nb->nlistalloc = na;
    }
    l = nb->list + used;
    for (PetscInt s = 0; s < nb->nstencil; s++) {
      PetscInt bb = b + nb->stencil[2 * s], p0 = nb->binhead[bb], p1 = nb->binhead[bb + nb->stencil[2 * s + 1]];
      /* branch-free append: always store, advance only for a neighbour (acceptance ~30%: a
         branch would mispredict often); j == i is excluded by its id */
      if (nb->half) {
        for (PetscInt p = p0; p < p1; p++) {
          PetscReal dx = xi - pk[4 * p], dy = yi - pk[4 * p + 1], dz = zi - pk[4 * p + 2];
          l[n] = nb->binatoms[p];
          n += (dx * dx + dy * dy + dz * dz < cs) & (pk[4 * p + 3] > idi);
        }
      } else {
        for (PetscInt p = p0; p < p1; p++) {
          PetscReal dx = xi - pk[4 * p], dy = yi - pk[4 * p + 1], dz = zi - pk[4 * p + 2];
          l[n] = nb->binatoms[p];
          n += (dx * dx + dy * dy + dz * dz < cs) & (pk[4 * p + 3] != idi);
        }
      }
    }
    nb->first[i] = used;
    nb->num[i]   = n;
    used += n;
  }
  for (PetscInt i = 0; i < dom->nlocal; i++)
    for (int k = 0; k < 3; k++) dom->xbuild[3 * i + k] = x[3 * i + k];
  nb->nbuilds++;
  nb->since    = 0;
  nb->dilation = 1.0;
  for (int k = 0; k < 9; k++) nb->hbuild[k] = dom->box.h[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rebuild when `every` steps have passed and (with check) some atom moved more than skin/2 since
   the last build: then no pair can have come from outside cutneigh to inside the cutoff. */
PetscErrorCode SgMDNeighDecide(SgMDNeigh *nb, SgMDDomain *dom, PetscBool *rebuild)
{
  PetscInt  flag = 0, gflag;
  PetscReal dl   = PetscAbsReal(1.0 - nb->dilation) * nb->cutneigh; /* pair-distance change from cell scaling */
  PetscReal tr   = PetscSqr(PetscMax(0.5 * nb->skin - dl, 0.0));

  PetscFunctionBegin;
  *rebuild = PETSC_FALSE;
  if (dl > 0.25 * nb->skin) { /* the cell changed by more than a quarter skin: rebuild now */
    *rebuild = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (nb->since < nb->every || nb->since < nb->delay) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscReal d2 = 0;
    for (int e = 0; e < 3; e++) { /* motion relative to the build position carried along by the cell scaling */
      PetscReal dd = dom->x[3 * i + e] - (dom->box.lo[e] + nb->dilation * (dom->xbuild[3 * i + e] - dom->box.lo[e]));
      d2 += dd * dd;
    }
    if (d2 > tr) { flag = 1; break; }
  }
  PetscCall(MPIU_Allreduce(&flag, &gflag, 1, MPIU_INT, MPI_MAX, dom->comm));
  if (nb->check) *rebuild = gflag ? PETSC_TRUE : PETSC_FALSE;
  else {
    *rebuild = PETSC_TRUE;
    if (gflag) nb->ndangerous++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reorder the owned atoms by bin (after migration, before the ghost exchange) so that atoms close
   in space are close in memory: the force loop's gathers then hit cache.  Storage order never
   enters the results (lists are ordered by bin and id), so this is free for reproducibility. */
PetscErrorCode SgMDNeighSortAtoms(SgMDNeigh *nb, SgMDDomain *dom)
{
  PetscInt   n = dom->nlocal, nbins = nb->bext[0] * nb->bext[1] * nb->bext[2], *key, *cnt, *perm;
  PetscReal *r;
  PetscInt  *q;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(n + 1, &key, nbins + 1, &cnt, n + 1, &perm));
  PetscCall(PetscArrayzero(cnt, nbins + 1));
  for (PetscInt i = 0; i < n; i++) {
    key[i] = BinOf(nb, &dom->box, &dom->x[3 * i]);
    cnt[key[i] + 1]++;
  }
  for (PetscInt b = 0; b < nbins; b++) cnt[b + 1] += cnt[b];
  for (PetscInt i = 0; i < n; i++) perm[cnt[key[i]]++] = i; /* perm[new] = old */
  PetscCall(PetscMalloc2(3 * n + 1, &r, 3 * n + 1, &q));
  for (int a = 0; a < 2; a++) {
    PetscReal *arr = a == 0 ? dom->x : dom->v;
    for (PetscInt k = 0; k < n; k++) for (int e = 0; e < 3; e++) r[3 * k + e] = arr[3 * perm[k] + e];
    PetscCall(PetscArraycpy(arr, r, 3 * n));
  }
  for (PetscInt k = 0; k < n; k++) for (int e = 0; e < 3; e++) q[3 * k + e] = dom->img[3 * perm[k] + e];
  PetscCall(PetscArraycpy(dom->img, q, 3 * n));
  for (PetscInt k = 0; k < n; k++) q[k] = dom->type[perm[k]];
  PetscCall(PetscArraycpy(dom->type, q, n));
  for (PetscInt k = 0; k < n; k++) q[k] = dom->id[perm[k]];
  PetscCall(PetscArraycpy(dom->id, q, n));
  PetscCall(PetscFree2(r, q));
  PetscCall(PetscFree3(key, cnt, perm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
