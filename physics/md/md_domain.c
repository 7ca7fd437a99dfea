/* MPI spatial domain decomposition (the scheme of LAMMPS's Comm/Domain classes, Plimpton,
   J. Comput. Phys. 117, 1 (1995)), written for a general triclinic cell in fractional coordinates:
   - the cell is cut into pgrid[0] x pgrid[1] x pgrid[2] sub-domains, equal in fractional
     coordinates; an atom belongs to the rank whose sub-domain holds its wrapped position;
   - ghost atoms are gathered in 6 swaps (x left/right, then y, then z); each swap forwards the
     atoms, owned or received in an earlier dimension, that lie within cutghost (as a fractional
     distance cutghost * |b_d|) of the sub-domain face; crossing the periodic boundary adds +/- the
     cell vector.  Corner and edge ghosts arrive through the chain of swaps.  With one rank in a
     direction the swap is a copy to itself, so 1 rank and P ranks run the same code;
   - the swaps are recorded, so each step only positions travel (forward) and, for Newton
     providers, forces travel back (reverse);
   - atoms migrate only at neighbour-list rebuilds, at most one sub-domain per direction.
   Ghost coordinates are x_owner + shift_1 + shift_2 ... added in the same order on any rank
   count, so a given periodic image has bit-identical coordinates for 1 and P ranks. */
#include "mdimpl.h"

#define NPACK_ATOM 11 /* x3 v3 type id img3 */
#define NPACK_GHOST 5 /* x3 type id */

static PetscMPIInt RankOf(const SgMDDomain *dom, const PetscInt c[3])
{
  return (PetscMPIInt)(c[0] + dom->pgrid[0] * (c[1] + dom->pgrid[1] * c[2]));
}

/* Processor grid minimising the sub-domain surface (communication volume), subject to every
   sub-domain being at least cutghost thick (a ghost then comes from a direct neighbour). */
static PetscErrorCode ChooseGrid(SgMDDomain *dom)
{
  PetscReal best = PETSC_MAX_REAL;
  PetscInt  P    = dom->size;

  PetscFunctionBegin;
  dom->pgrid[0] = -1;
  for (PetscInt px = 1; px <= P; px++) {
    if (P % px) continue;
    for (PetscInt py = 1; py <= P / px; py++) {
      PetscInt pz, p[3];
      PetscReal area, t[3];
      if ((P / px) % py) continue;
      pz = P / px / py;
      p[0] = px; p[1] = py; p[2] = pz;
      for (int d = 0; d < 3; d++) t[d] = dom->box.thick[d] / p[d];
      if (t[0] < dom->cutghost || t[1] < dom->cutghost || t[2] < dom->cutghost) continue;
      area = t[0] * t[1] + t[1] * t[2] + t[0] * t[2];
      if (area < best * (1 - 1e-12)) {
        best = area;
        for (int d = 0; d < 3; d++) dom->pgrid[d] = p[d];
      }
    }
  }
  PetscCheck(dom->pgrid[0] > 0, dom->comm, PETSC_ERR_USER_INPUT,
             "md: %d ranks cannot split the cell (thickness %g %g %g) into sub-domains at least cutoff+skin = %g thick; run on fewer ranks or use a larger system",
             (int)P, (double)dom->box.thick[0], (double)dom->box.thick[1], (double)dom->box.thick[2], (double)dom->cutghost);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainCreate(MPI_Comm comm, const SgMDBox *box, PetscReal cutghost, SgMDDomain **domp)
{
  SgMDDomain *dom;
  PetscInt    r;

  PetscFunctionBegin;
  PetscCall(PetscNew(&dom));
  dom->comm     = comm;
  dom->box      = *box;
  dom->cutghost = cutghost;
  PetscCallMPI(MPI_Comm_rank(comm, &dom->rank));
  PetscCallMPI(MPI_Comm_size(comm, &dom->size));
  PetscCall(ChooseGrid(dom));
  r             = dom->rank;
  dom->coord[0] = r % dom->pgrid[0];
  dom->coord[1] = (r / dom->pgrid[0]) % dom->pgrid[1];
  dom->coord[2] = r / (dom->pgrid[0] * dom->pgrid[1]);
  for (int d = 0; d < 3; d++) {
    PetscInt c[3];
    dom->sublo[d] = (PetscReal)dom->coord[d] / dom->pgrid[d];
    dom->subhi[d] = (PetscReal)(dom->coord[d] + 1) / dom->pgrid[d];
    for (int dir = 0; dir < 2; dir++) {
      for (int e = 0; e < 3; e++) c[e] = dom->coord[e];
      c[d] = (c[d] + (dir ? 1 : dom->pgrid[d] - 1)) % dom->pgrid[d];
      dom->nbr[d][dir] = RankOf(dom, c);
    }
  }
  *domp = dom;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainDestroy(SgMDDomain **domp)
{
  SgMDDomain *dom = *domp;

  PetscFunctionBegin;
  if (!dom) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(dom->x));
  PetscCall(PetscFree(dom->v));
  PetscCall(PetscFree(dom->f));
  PetscCall(PetscFree(dom->xbuild));
  PetscCall(PetscFree(dom->type));
  PetscCall(PetscFree(dom->id));
  PetscCall(PetscFree(dom->img));
  for (int k = 0; k < 6; k++) PetscCall(PetscFree(dom->swap[k].sendlist));
  PetscCall(PetscFree(dom->buf));
  PetscCall(PetscFree(dom->rbuf));
  PetscCall(PetscFree(dom));
  *domp = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Realloc(void **p, size_t oldbytes, size_t newbytes)
{
  void *q;
  PetscFunctionBegin;
  PetscCall(PetscMalloc(newbytes, &q));
  if (*p) {
    PetscCall(PetscMemcpy(q, *p, oldbytes));
    PetscCall(PetscFree(*p));
  }
  *p = q;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainGrow(SgMDDomain *dom, PetscInt nneed)
{
  PetscInt o = dom->nmax, n;

  PetscFunctionBegin;
  if (nneed <= dom->nmax) PetscFunctionReturn(PETSC_SUCCESS);
  n = PetscMax(nneed, (PetscInt)(1.5 * o) + 64);
  PetscCall(Realloc((void **)&dom->x, 3 * o * sizeof(PetscReal), 3 * n * sizeof(PetscReal)));
  PetscCall(Realloc((void **)&dom->v, 3 * o * sizeof(PetscReal), 3 * n * sizeof(PetscReal)));
  PetscCall(Realloc((void **)&dom->f, 3 * o * sizeof(PetscReal), 3 * n * sizeof(PetscReal)));
  PetscCall(Realloc((void **)&dom->xbuild, 3 * o * sizeof(PetscReal), 3 * n * sizeof(PetscReal)));
  PetscCall(Realloc((void **)&dom->type, o * sizeof(PetscInt), n * sizeof(PetscInt)));
  PetscCall(Realloc((void **)&dom->id, o * sizeof(PetscInt), n * sizeof(PetscInt)));
  PetscCall(Realloc((void **)&dom->img, 3 * o * sizeof(PetscInt), 3 * n * sizeof(PetscInt)));
  dom->nmax = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Grow a buffer keeping its contents (migration packs into it while it grows). */
static PetscErrorCode BufGrow(PetscReal **buf, PetscInt *nbuf, PetscInt need)
{
  PetscFunctionBegin;
  if (need > *nbuf) {
    PetscInt n = PetscMax(need, 2 * (*nbuf));
    PetscCall(Realloc((void **)buf, (size_t)(*nbuf) * sizeof(PetscReal), (size_t)n * sizeof(PetscReal)));
    *nbuf = n;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* owner coordinate of fractional s in direction d (clamped: s may round to exactly 1.0) */
static inline PetscInt OwnerCoord(const SgMDDomain *dom, int d, PetscReal s)
{
  PetscInt c = (PetscInt)PetscFloorReal(s * dom->pgrid[d]);
  return PetscMin(PetscMax(c, 0), dom->pgrid[d] - 1);
}

/* Whether fractional coordinates s lie in (-lim, 1 + lim) in every direction: false for NaN/Inf. Wrapping
   counts whole box lengths in a PetscInt image and the owner is an integer of s, so a position far
   outside (or not a number) must be refused before either is formed. */
static PetscBool FracWithin(const PetscReal s[3], PetscReal lim)
{
  for (int d = 0; d < 3; d++)
    if (!(s[d] > -lim && s[d] < 1 + lim)) return PETSC_FALSE;
  return PETSC_TRUE;
}

PetscErrorCode SgMDDomainDistribute(SgMDDomain *dom, const SgMDSystem *sys)
{
  PetscFunctionBegin;
  dom->nlocal = dom->nghost = 0;
  for (PetscInt i = 0; i < sys->n; i++) { /* every rank sees the whole system: the check is collective */
    PetscReal s[3];
    SgMDBoxFrac(&dom->box, &sys->x[3 * i], s);
    PetscCheck(FracWithin(s, 1e6), dom->comm, PETSC_ERR_USER_INPUT, "md: atom %" PetscInt_FMT " is at (%g, %g, %g), not a number or more than 1e6 box lengths from the box: check the structure file", i + 1, (double)sys->x[3 * i], (double)sys->x[3 * i + 1], (double)sys->x[3 * i + 2]);
  }
  for (PetscInt i = 0; i < sys->n; i++) {
    PetscReal x[3] = {sys->x[3 * i], sys->x[3 * i + 1], sys->x[3 * i + 2]}, s[3];
    PetscInt  img[3] = {0, 0, 0}, n;
    SgMDBoxWrap(&dom->box, x, img);
    SgMDBoxFrac(&dom->box, x, s);
    if (OwnerCoord(dom, 0, s[0]) != dom->coord[0] || OwnerCoord(dom, 1, s[1]) != dom->coord[1] || OwnerCoord(dom, 2, s[2]) != dom->coord[2]) continue;
    PetscCall(SgMDDomainGrow(dom, dom->nlocal + 1));
    n = dom->nlocal++;
    for (int k = 0; k < 3; k++) {
      dom->x[3 * n + k]   = x[k];
      dom->v[3 * n + k]   = sys->v ? sys->v[3 * i + k] : 0.0;
      dom->img[3 * n + k] = img[k];
      dom->f[3 * n + k]   = 0.0;
    }
    dom->type[n] = sys->type[i];
    dom->id[n]   = i + 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Exchange variable-length buffers with the neighbours of one swap direction. */
static PetscErrorCode Exchange(SgMDDomain *dom, PetscMPIInt to, PetscMPIInt from, const PetscReal *sbuf, PetscInt ns, PetscReal **rbuf, PetscInt *nrbuf, PetscInt *nr, int tag)
{
  PetscFunctionBegin;
  if (to == dom->rank && from == dom->rank) {
    PetscCall(BufGrow(rbuf, nrbuf, ns + 1));
    PetscCall(PetscArraycpy(*rbuf, sbuf, ns));
    *nr = ns;
  } else {
    PetscCallMPI(MPI_Sendrecv(&ns, 1, MPIU_INT, to, tag, nr, 1, MPIU_INT, from, tag, dom->comm, MPI_STATUS_IGNORE));
    PetscCall(BufGrow(rbuf, nrbuf, *nr + 1));
    PetscCallMPI(MPI_Sendrecv(sbuf, (PetscMPIInt)ns, MPIU_REAL, to, tag + 1, *rbuf, (PetscMPIInt)*nr, MPIU_REAL, from, tag + 1, dom->comm, MPI_STATUS_IGNORE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainMigrate(SgMDDomain *dom)
{
  PetscInt bad = 0, gbad, far = 0, gfar;

  PetscFunctionBegin;
  dom->nghost = 0;
  for (PetscInt i = 0; i < dom->nlocal; i++) { /* wrapped at the last build: a stable step moves an atom a fraction of the skin */
    PetscReal s[3];
    SgMDBoxFrac(&dom->box, &dom->x[3 * i], s);
    if (FracWithin(s, 1)) SgMDBoxWrap(&dom->box, &dom->x[3 * i], &dom->img[3 * i]);
    else far++; /* left as it is: the run stops below */
  }
  PetscCall(MPIU_Allreduce(&far, &gfar, 1, MPIU_INT, MPI_SUM, dom->comm));
  PetscCheck(gfar == 0, dom->comm, PETSC_ERR_USER_INPUT, "md: %" PetscInt_FMT " atoms moved more than a box length between neighbour-list builds, or their positions are not numbers; the run is unstable: reduce md_dt", gfar);
  for (int d = 0; d < 3; d++) {
    if (dom->pgrid[d] == 1) continue;
    for (int dir = 0; dir < 2; dir++) {
      PetscInt ns = 0, nr = 0, P = dom->pgrid[d];
      /* pack atoms whose owner lies in direction dir, removing them (last atom fills the hole) */
      for (PetscInt i = 0; i < dom->nlocal;) {
        PetscReal s[3];
        PetscInt  delta;
        SgMDBoxFrac(&dom->box, &dom->x[3 * i], s);
        delta = (OwnerCoord(dom, d, s[d]) - dom->coord[d] + P) % P;
        if (delta == 0 || (dir == 0 && delta != P - 1) || (dir == 1 && delta == P - 1)) { i++; continue; }
        if (delta != 1 && delta != P - 1) bad++;
        PetscCall(BufGrow(&dom->buf, &dom->nbuf, NPACK_ATOM * (ns + 1)));
        {
          PetscReal *b = &dom->buf[NPACK_ATOM * ns++];
          PetscInt   l = dom->nlocal - 1;
          for (int k = 0; k < 3; k++) {
            b[k]     = dom->x[3 * i + k];
            b[3 + k] = dom->v[3 * i + k];
            b[8 + k] = (PetscReal)dom->img[3 * i + k];
          }
          b[6] = (PetscReal)dom->type[i];
          b[7] = (PetscReal)dom->id[i];
          for (int k = 0; k < 3; k++) {
            dom->x[3 * i + k]   = dom->x[3 * l + k];
            dom->v[3 * i + k]   = dom->v[3 * l + k];
            dom->img[3 * i + k] = dom->img[3 * l + k];
          }
          dom->type[i] = dom->type[l];
          dom->id[i]   = dom->id[l];
          dom->nlocal--;
        }
      }
      PetscCall(Exchange(dom, (PetscMPIInt)dom->nbr[d][dir], (PetscMPIInt)dom->nbr[d][1 - dir], dom->buf, NPACK_ATOM * ns, &dom->rbuf, &dom->nrbuf, &nr, 100 + 2 * (2 * d + dir)));
      nr /= NPACK_ATOM;
      PetscCall(SgMDDomainGrow(dom, dom->nlocal + nr));
      for (PetscInt k = 0; k < nr; k++) {
        PetscReal *b = &dom->rbuf[NPACK_ATOM * k];
        PetscInt   n = dom->nlocal++;
        for (int e = 0; e < 3; e++) {
          dom->x[3 * n + e]   = b[e];
          dom->v[3 * n + e]   = b[3 + e];
          dom->img[3 * n + e] = (PetscInt)b[8 + e];
        }
        dom->type[n] = (PetscInt)b[6];
        dom->id[n]   = (PetscInt)b[7];
      }
    }
  }
  PetscCall(MPIU_Allreduce(&bad, &gbad, 1, MPIU_INT, MPI_SUM, dom->comm));
  PetscCheck(gbad == 0, dom->comm, PETSC_ERR_USER_INPUT, "md: %" PetscInt_FMT " atoms moved further than one sub-domain between neighbour-list builds; the run is unstable: reduce md_dt or rebuild more often (md_neigh_every, md_neigh_check)", gbad);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainBorders(SgMDDomain *dom)
{
  PetscFunctionBegin;
  dom->nghost = 0;
  for (int d = 0; d < 3; d++) {
    PetscReal cutfrac = dom->cutghost / dom->box.thick[d];
    PetscInt  nlast   = dom->nlocal + dom->nghost;
    for (int dir = 0; dir < 2; dir++) {
      SgMDSwap *sw = &dom->swap[2 * d + dir];
      PetscInt  ns = 0, nr;
      sw->sendproc = dom->nbr[d][dir];
      sw->recvproc = dom->nbr[d][1 - dir];
      sw->doshift  = (dir == 0 && dom->coord[d] == 0) || (dir == 1 && dom->coord[d] == dom->pgrid[d] - 1);
      for (int e = 0; e < 3; e++) sw->shift[e] = sw->doshift ? (dir == 0 ? 1.0 : -1.0) * dom->box.h[3 * d + e] : 0.0;
      for (PetscInt i = 0; i < nlast; i++) {
        PetscReal s[3];
        SgMDBoxFrac(&dom->box, &dom->x[3 * i], s);
        if (dir == 0 ? (s[d] < dom->sublo[d] + cutfrac) : (s[d] >= dom->subhi[d] - cutfrac)) {
          if (ns >= sw->maxsend) {
            PetscInt *nl;
            sw->maxsend = PetscMax(2 * sw->maxsend, 1024);
            PetscCall(PetscMalloc1(sw->maxsend, &nl));
            if (ns) PetscCall(PetscArraycpy(nl, sw->sendlist, ns));
            PetscCall(PetscFree(sw->sendlist));
            sw->sendlist = nl;
          }
          sw->sendlist[ns++] = i;
        }
      }
      sw->nsend = ns;
      PetscCall(BufGrow(&dom->buf, &dom->nbuf, NPACK_GHOST * ns + 1));
      for (PetscInt k = 0; k < ns; k++) {
        PetscInt   i = sw->sendlist[k];
        PetscReal *b = &dom->buf[NPACK_GHOST * k];
        for (int e = 0; e < 3; e++) b[e] = sw->doshift ? dom->x[3 * i + e] + sw->shift[e] : dom->x[3 * i + e];
        b[3] = (PetscReal)dom->type[i];
        b[4] = (PetscReal)dom->id[i];
      }
      PetscCall(Exchange(dom, (PetscMPIInt)sw->sendproc, (PetscMPIInt)sw->recvproc, dom->buf, NPACK_GHOST * ns, &dom->rbuf, &dom->nrbuf, &nr, 200 + 2 * (2 * d + dir)));
      nr /= NPACK_GHOST;
      sw->nrecv     = nr;
      sw->firstrecv = dom->nlocal + dom->nghost;
      PetscCall(SgMDDomainGrow(dom, sw->firstrecv + nr));
      for (PetscInt k = 0; k < nr; k++) {
        PetscReal *b = &dom->rbuf[NPACK_GHOST * k];
        PetscInt   n = sw->firstrecv + k;
        for (int e = 0; e < 3; e++) dom->x[3 * n + e] = b[e];
        dom->type[n] = (PetscInt)b[3];
        dom->id[n]   = (PetscInt)b[4];
      }
      dom->nghost += nr;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainForward(SgMDDomain *dom)
{
  PetscFunctionBegin;
  for (int k = 0; k < 6; k++) {
    SgMDSwap  *sw = &dom->swap[k];
    PetscReal *x  = dom->x;
    if (sw->sendproc == dom->rank && sw->recvproc == dom->rank) {
      PetscReal *xr = &x[3 * sw->firstrecv];
      if (sw->doshift) {
        for (PetscInt j = 0; j < sw->nsend; j++) {
          PetscInt i = sw->sendlist[j];
          xr[3 * j] = x[3 * i] + sw->shift[0]; xr[3 * j + 1] = x[3 * i + 1] + sw->shift[1]; xr[3 * j + 2] = x[3 * i + 2] + sw->shift[2];
        }
      } else {
        for (PetscInt j = 0; j < sw->nsend; j++) {
          PetscInt i = sw->sendlist[j];
          xr[3 * j] = x[3 * i]; xr[3 * j + 1] = x[3 * i + 1]; xr[3 * j + 2] = x[3 * i + 2];
        }
      }
    } else {
      PetscCall(BufGrow(&dom->buf, &dom->nbuf, 3 * sw->nsend + 1));
      for (PetscInt j = 0; j < sw->nsend; j++) {
        PetscInt i = sw->sendlist[j];
        for (int e = 0; e < 3; e++) dom->buf[3 * j + e] = sw->doshift ? x[3 * i + e] + sw->shift[e] : x[3 * i + e];
      }
      PetscCallMPI(MPI_Sendrecv(dom->buf, (PetscMPIInt)(3 * sw->nsend), MPIU_REAL, (PetscMPIInt)sw->sendproc, 300 + k, &x[3 * sw->firstrecv], (PetscMPIInt)(3 * sw->nrecv), MPIU_REAL, (PetscMPIInt)sw->recvproc, 300 + k, dom->comm, MPI_STATUS_IGNORE));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainReverse(SgMDDomain *dom)
{
  PetscFunctionBegin;
  PetscCall(SgMDDomainReverseArray(dom, dom->f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f[3*(nlocal+nghost)]: any per-atom vector laid out like dom->f (e.g. one model's forces of an ensemble) */
PetscErrorCode SgMDDomainReverseArray(SgMDDomain *dom, PetscReal *f)
{
  PetscFunctionBegin;
  for (int k = 5; k >= 0; k--) {
    SgMDSwap  *sw = &dom->swap[k];
    PetscReal *src;
    if (sw->sendproc == dom->rank && sw->recvproc == dom->rank) {
      src = &f[3 * sw->firstrecv];
    } else {
      PetscCall(BufGrow(&dom->rbuf, &dom->nrbuf, 3 * sw->nsend + 1));
      PetscCallMPI(MPI_Sendrecv(&f[3 * sw->firstrecv], (PetscMPIInt)(3 * sw->nrecv), MPIU_REAL, (PetscMPIInt)sw->recvproc, 400 + k, dom->rbuf, (PetscMPIInt)(3 * sw->nsend), MPIU_REAL, (PetscMPIInt)sw->sendproc, 400 + k, dom->comm, MPI_STATUS_IGNORE));
      src = dom->rbuf;
    }
    for (PetscInt j = 0; j < sw->nsend; j++) {
      PetscInt i = sw->sendlist[j];
      f[3 * i] += src[3 * j]; f[3 * i + 1] += src[3 * j + 1]; f[3 * i + 2] += src[3 * j + 2];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* id-ordered blocks: rank r holds ids (0-based) [N r / P, N (r+1) / P) */
static inline PetscMPIInt BlockOf(PetscInt id0, PetscInt N, PetscMPIInt P)
{
  PetscMPIInt r = (PetscMPIInt)(((long long)id0 * P) / N);
  while (r > 0 && id0 < (PetscInt)(((long long)N * r) / P)) r--;
  while (r < P - 1 && id0 >= (PetscInt)(((long long)N * (r + 1)) / P)) r++;
  return r;
}

PetscErrorCode SgMDDomainToIdBlocks(SgMDDomain *dom, PetscInt N, PetscInt nper, const PetscReal *vals, PetscInt *off, PetscInt *cnt, PetscReal **out)
{
  PetscMPIInt P = dom->size, *sc, *rc, *sd, *rd;
  PetscReal  *sbuf, *rbuf;
  PetscInt    nrecv = 0, *pos;

  PetscFunctionBegin;
  *off = (PetscInt)(((long long)N * dom->rank) / P);
  *cnt = (PetscInt)(((long long)N * (dom->rank + 1)) / P) - *off;
  PetscCall(PetscCalloc4(P, &sc, P, &rc, P + 1, &sd, P + 1, &rd));
  PetscCall(PetscMalloc1(P + 1, &pos));
  for (PetscInt i = 0; i < dom->nlocal; i++) sc[BlockOf(dom->id[i] - 1, N, P)] += (PetscMPIInt)(nper + 1);
  PetscCallMPI(MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, dom->comm));
  for (PetscMPIInt r = 0; r < P; r++) {
    sd[r + 1] = sd[r] + sc[r];
    rd[r + 1] = rd[r] + rc[r];
  }
  nrecv = rd[P];
  PetscCall(PetscMalloc1(sd[P] + 1, &sbuf));
  PetscCall(PetscMalloc1(nrecv + 1, &rbuf));
  for (PetscMPIInt r = 0; r < P; r++) pos[r] = sd[r];
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscMPIInt r = BlockOf(dom->id[i] - 1, N, P);
    sbuf[pos[r]++] = (PetscReal)dom->id[i];
    for (PetscInt k = 0; k < nper; k++) sbuf[pos[r]++] = vals[nper * i + k];
  }
  PetscCallMPI(MPI_Alltoallv(sbuf, sc, sd, MPIU_REAL, rbuf, rc, rd, MPIU_REAL, dom->comm));
  PetscCall(PetscMalloc1(nper * (*cnt) + 1, out));
  PetscCheck(nrecv == (nper + 1) * (*cnt), PETSC_COMM_SELF, PETSC_ERR_PLIB, "md: id blocks: received %" PetscInt_FMT " values for %" PetscInt_FMT " atoms (lost or duplicated atoms)", nrecv, *cnt);
  for (PetscInt k = 0; k < nrecv; k += nper + 1) {
    PetscInt id0 = (PetscInt)rbuf[k] - 1 - *off;
    for (PetscInt e = 0; e < nper; e++) (*out)[nper * id0 + e] = rbuf[k + 1 + e];
  }
  PetscCall(PetscFree(sbuf));
  PetscCall(PetscFree(rbuf));
  PetscCall(PetscFree(pos));
  PetscCall(PetscFree4(sc, rc, sd, rd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDDomainFromIdBlocks(SgMDDomain *dom, PetscInt N, PetscInt nper, const PetscReal *in, PetscReal *vals)
{
  PetscMPIInt P = dom->size, *sc, *rc, *sd, *rd;
  PetscInt   *sid, *rid, *pos, off, *perm;
  PetscReal  *sval, *rval;

  PetscFunctionBegin;
  off = (PetscInt)(((long long)N * dom->rank) / P);
  PetscCall(PetscCalloc4(P, &sc, P, &rc, P + 1, &sd, P + 1, &rd));
  PetscCall(PetscMalloc1(P + 1, &pos));
  for (PetscInt i = 0; i < dom->nlocal; i++) sc[BlockOf(dom->id[i] - 1, N, P)]++;
  PetscCallMPI(MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, dom->comm));
  for (PetscMPIInt r = 0; r < P; r++) {
    sd[r + 1] = sd[r] + sc[r];
    rd[r + 1] = rd[r] + rc[r];
  }
  PetscCall(PetscMalloc2(sd[P] + 1, &sid, dom->nlocal + 1, &perm));
  PetscCall(PetscMalloc1(rd[P] + 1, &rid));
  for (PetscMPIInt r = 0; r < P; r++) pos[r] = sd[r];
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscMPIInt r = BlockOf(dom->id[i] - 1, N, P);
    perm[pos[r]] = i;
    sid[pos[r]++] = dom->id[i];
  }
  PetscCallMPI(MPI_Alltoallv(sid, sc, sd, MPIU_INT, rid, rc, rd, MPIU_INT, dom->comm));
  PetscCall(PetscMalloc1(nper * rd[P] + 1, &sval));
  PetscCall(PetscMalloc1(nper * sd[P] + 1, &rval));
  for (PetscInt k = 0; k < rd[P]; k++)
    for (PetscInt e = 0; e < nper; e++) sval[nper * k + e] = in[nper * (rid[k] - 1 - off) + e];
  for (PetscMPIInt r = 0; r < P; r++) {
    sc[r] *= nper; rc[r] *= nper; sd[r] *= nper; rd[r] *= nper;
  }
  PetscCallMPI(MPI_Alltoallv(sval, rc, rd, MPIU_REAL, rval, sc, sd, MPIU_REAL, dom->comm));
  for (PetscInt k = 0; k < dom->nlocal; k++)
    for (PetscInt e = 0; e < nper; e++) vals[nper * perm[k] + e] = rval[nper * k + e];
  PetscCall(PetscFree2(sid, perm));
  PetscCall(PetscFree(rid));
  PetscCall(PetscFree(sval));
  PetscCall(PetscFree(rval));
  PetscCall(PetscFree(pos));
  PetscCall(PetscFree4(sc, rc, sd, rd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Isotropic dilation about the cell origin (barostat): the cell, the owned atoms
   (not their positions at the last list build: the skin check scales those by the accumulated
   dilation, and restarts rebuild the list from them exactly), and the periodic shifts
   of the recorded ghost swaps, so that the next forward communication places ghosts correctly.
   Fractional coordinates are unchanged, so ownership and ghost membership are too. */
PetscErrorCode SgMDDomainDilate(SgMDDomain *dom, PetscReal mu)
{
  PetscReal h[9];

  PetscFunctionBegin;
  for (int k = 0; k < 9; k++) h[k] = mu * dom->box.h[k];
  PetscCall(SgMDBoxSet(&dom->box, dom->box.lo, h));
  for (PetscInt i = 0; i < dom->nlocal; i++)
    for (int e = 0; e < 3; e++) {
      dom->x[3 * i + e] = dom->box.lo[e] + mu * (dom->x[3 * i + e] - dom->box.lo[e]);
    }
  for (int k = 0; k < 6; k++) {
    SgMDSwap *sw = &dom->swap[k];
    int       d = k / 2, dir = k % 2;
    for (int e = 0; e < 3; e++) sw->shift[e] = sw->doshift ? (dir == 0 ? 1.0 : -1.0) * dom->box.h[3 * d + e] : 0.0;
  }
  for (int d = 0; d < 3; d++)
    PetscCheck(dom->box.thick[d] / dom->pgrid[d] >= dom->cutghost, dom->comm, PETSC_ERR_USER_INPUT,
               "md: the barostat shrank the sub-domains below cutoff + skin = %g (cell thickness %g over %" PetscInt_FMT " ranks along %c); run on fewer ranks or a larger system",
               (double)dom->cutghost, (double)dom->box.thick[d], dom->pgrid[d], "abc"[d]);
  PetscFunctionReturn(PETSC_SUCCESS);
}
