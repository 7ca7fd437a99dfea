/* Phase-space grids: one DMDA per species, replicated configuration-space arrays. See vlasov.h. */
#include "vlasov.h"

/* Offset (doubles) of the coefficients of the phase cell with global indices n[6] (by phase
   dimension) in the owned or ghosted array of species s. */
PetscErrorCode SgVlasovCellOffset(const SgVlasovSpecies *s, const PetscInt n[], PetscBool ghosted, PetscInt *off)
{
  const PetscInt *st = ghosted ? s->gs : s->s, *w = ghosted ? s->gm : s->m;
  PetscInt        o  = 0, fo = 0;

  PetscFunctionBegin;
  for (PetscInt a = s->dadim - 1; a >= 0; a--) o = o * w[a] + (n[s->ax[a]] - st[a]);
  /* folded dims: the first folded dim runs fastest */
  for (PetscInt f = s->nfd - 1; f >= 0; f--) fo = fo * s->foldN[f] + n[s->fdim[f]];
  *off = o * s->bs + fo * (s->bs / s->nfold);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The DMDA axes (split dimensions) of every species, chosen before anything is allocated.
   Default: the min(pdim, 3) phase dimensions with the most cells, ties to the earlier dimension in
   the order x, y, z, vx, vy, vz. This is the choice that admits the most ranks (the product of the
   split dimensions' cells bounds the rank count) and, for a given rank count, cuts the largest
   dimensions (the least ghost data per owned cell); with equal cell counts it is the former rule
   (the first min(pdim, 3) dimensions). -vlasov_split_dims forces the choice; either way a rank
   count the split dimensions cannot hold (ranks per axis <= cells along it) is refused here. */
PetscErrorCode SgVlasovSplitNames(const SgVlasov *v, char list[], size_t len)
{
  const char *const names[6] = {"x", "y", "z", "vx", "vy", "vz"};

  PetscFunctionBegin;
  list[0] = 0;
  for (PetscInt a = 0; a < PetscMin(v->pdim, 3); a++) {
    PetscCall(PetscStrlcat(list, a ? ", " : "", len));
    PetscCall(PetscStrlcat(list, names[v->split[a] < v->cdim ? v->split[a] : 3 + v->split[a] - v->cdim], len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovChooseSplit(MPI_Comm comm, SgVlasov *v)
{
  const PetscInt    nax      = PetscMin(v->pdim, 3);
  PetscMPIInt       size;
  PetscBool         fits = PETSC_FALSE;
  char              list[64] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (!v->split_set) {
    PetscBool taken[6] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
    for (PetscInt a = 0; a < nax; a++) {
      PetscInt best = -1;
      for (PetscInt d = 0; d < v->pdim; d++)
        if (!taken[d] && (best < 0 || v->cells[d] > v->cells[best])) best = d;
      taken[best] = PETSC_TRUE;
    }
    for (PetscInt d = 0, a = 0; d < v->pdim; d++)
      if (taken[d]) v->split[a++] = d;
  }
  PetscCall(SgVlasovSplitNames(v, list, sizeof list));
  /* a rank count the DMDA can hold: a factorisation size = p0 p1 p2 with p_a <= cells along axis a */
  if (v->ranks[0] != PETSC_DECIDE) {
    fits = PETSC_TRUE;
    for (PetscInt a = 0; a < nax; a++)
      if (v->ranks[a] > v->cells[v->split[a]]) fits = PETSC_FALSE;
  } else {
    const PetscInt N0 = v->cells[v->split[0]], N1 = v->cells[v->split[1]], N2 = nax > 2 ? v->cells[v->split[2]] : 1;
    for (PetscInt p0 = 1; p0 <= PetscMin(N0, size) && !fits; p0++)
      for (PetscInt p1 = 1; p1 <= PetscMin(N1, size / p0) && !fits; p1++)
        if (size % (p0 * p1) == 0 && size / (p0 * p1) <= N2) fits = PETSC_TRUE;
  }
  PetscCheck(fits, comm, PETSC_ERR_USER_INPUT, "vlasov: %d ranks do not fit the split dimensions [%s] (%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " cells, each rank needs at least one cell along each): use fewer ranks, more cells, or other split_dims", (int)size, list,
             v->cells[v->split[0]], v->cells[v->split[1]], nax > 2 ? v->cells[v->split[2]] : 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovSetUpGrid(SgSolver solver, SgVlasov *v)
{
  MPI_Comm               comm = PetscObjectComm((PetscObject)solver);
  const SgVlasovKernels *K    = v->kern;

  PetscFunctionBegin;
  v->ncx = 1;
  for (PetscInt d = 0; d < v->cdim; d++) {
    v->Nx[d]  = v->cells[d];
    v->dxc[d] = (v->upper[d] - v->lower[d]) / v->Nx[d];
    v->ncx *= v->Nx[d];
  }
  PetscCall(PetscMalloc3(v->ncx * v->npx, &v->rho, v->ncx * v->cdim * v->npx, &v->E, v->ncx * 4 * v->npx, &v->work)); /* work: also the 3 current components and the charge (maxwell) */
  PetscCall(PetscArrayzero(v->E, v->ncx * v->cdim * v->npx));
  /* phase index of each configuration basis function (velocity degrees 0) */
  PetscCall(PetscMalloc1(v->npx, &v->kofm));
  for (PetscInt m = 0; m < v->npx; m++) {
    v->kofm[m] = -1;
    for (PetscInt k = 0; k < v->np; k++) {
      PetscBool match = PETSC_TRUE;
      for (PetscInt d = 0; d < v->pdim; d++) {
        PetscInt want = d < v->cdim ? K->alphax[m * v->cdim + d] : 0;
        if (K->alpha[k * v->pdim + d] != want) match = PETSC_FALSE;
      }
      if (match) v->kofm[m] = k;
    }
    PetscCheck(v->kofm[m] >= 0, comm, PETSC_ERR_PLIB, "Kernel tables inconsistent: configuration basis function %" PetscInt_FMT " not in the phase basis", m);
  }
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    DMBoundaryType   bt[3];
    PetscInt         M[3] = {1, 1, 1};

    for (PetscInt d = 0; d < v->pdim; d++) s->dx[d] = (s->upper[d] - s->lower[d]) / s->N[d];
    for (PetscInt j = 0; j < v->vdim; j++) s->vmax[j] = PetscMax(PetscAbsReal(s->lower[v->cdim + j]), PetscAbsReal(s->upper[v->cdim + j]));
    s->dadim    = PetscMin(v->pdim, 3);
    s->nfold    = 1;
    s->nfd      = 0;
    s->foldN[0] = s->foldN[1] = s->foldN[2] = 1;
    s->ax[2]    = -1;
    for (PetscInt d = 0; d < 6; d++) s->aofd[d] = -1;
    for (PetscInt a = 0; a < s->dadim; a++) {
      s->ax[a]          = v->split[a];
      s->aofd[v->split[a]] = a;
    }
    for (PetscInt d = 0; d < v->pdim; d++) {
      if (s->aofd[d] >= 0) continue;
      s->fdim[s->nfd]  = d;
      s->foldN[s->nfd] = s->N[d];
      s->nfold *= s->N[d];
      s->nfd++;
    }
    s->bs = v->np * s->nfold;
    for (PetscInt a = 0; a < s->dadim; a++) {
      bt[a] = s->ax[a] < v->cdim ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
      M[a]  = s->N[s->ax[a]];
    }
    if (s->dadim == 2) PetscCall(DMDACreate2d(comm, bt[0], bt[1], DMDA_STENCIL_STAR, M[0], M[1], v->ranks[0], v->ranks[1], s->bs, 1, NULL, NULL, &s->da));
    else PetscCall(DMDACreate3d(comm, bt[0], bt[1], bt[2], DMDA_STENCIL_STAR, M[0], M[1], M[2], v->ranks[0], v->ranks[1], v->ranks[2], s->bs, 1, NULL, NULL, NULL, &s->da));
    PetscCall(DMSetUp(s->da));
    s->s[2] = s->gs[2] = 0; s->m[2] = s->gm[2] = 1;
    PetscCall(DMDAGetCorners(s->da, &s->s[0], &s->s[1], &s->s[2], &s->m[0], &s->m[1], &s->m[2]));
    PetscCall(DMDAGetGhostCorners(s->da, &s->gs[0], &s->gs[1], &s->gs[2], &s->gm[0], &s->gm[1], &s->gm[2]));
    if (s->dadim == 2) { s->s[2] = s->gs[2] = 0; s->m[2] = s->gm[2] = 1; }
    for (PetscInt a = 0; a < s->dadim; a++)
      PetscCheck(s->m[a] >= 1, comm, PETSC_ERR_USER_INPUT, "Species %s: a rank owns no cells along phase dimension %" PetscInt_FMT " (%" PetscInt_FMT " cells): use more cells or fewer ranks", s->name, s->ax[a], s->N[s->ax[a]]);
    for (PetscInt d = 0; d < v->pdim; d++) {
      s->lo[d]  = s->aofd[d] >= 0 ? s->s[s->aofd[d]] : 0;
      s->len[d] = s->aofd[d] >= 0 ? s->m[s->aofd[d]] : s->N[d];
    }
    PetscCall(DMCreateGlobalVector(s->da, &s->f));
    PetscCall(PetscObjectSetName((PetscObject)s->f, s->name));
    PetscCall(VecDuplicate(s->f, &s->f1));
    PetscCall(VecDuplicate(s->f, &s->f2));
    PetscCall(VecDuplicate(s->f, &s->rhs));
    PetscCall(DMCreateLocalVector(s->da, &s->floc));
    PetscCall(PetscMalloc2(v->ncx * v->cdim * v->npx, &s->acc, v->ncx * v->cdim, &s->tau));
    PetscCall(PetscArrayzero(s->acc, v->ncx * v->cdim * v->npx));
    PetscCall(PetscArrayzero(s->tau, v->ncx * v->cdim));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One line at set-up: the split dimensions, the ranks per split axis and the distribution memory of
   the fullest rank (per species: f, two Runge-Kutta stages, the right-hand side, the BGK Maxwellian
   when there is one, and the ghosted copy), so a user sees what a rank holds. */
PetscErrorCode SgVlasovLayoutReport(SgSolver solver, SgVlasov *v)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);
  PetscReal mine = 0, most = 0, cells = 0;
  PetscInt  p[3] = {1, 1, 1};
  char      list[64], rk[64];

  PetscFunctionBegin;
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    PetscInt         nown, nghost;
    PetscCall(VecGetLocalSize(s->f, &nown));
    PetscCall(VecGetLocalSize(s->floc, &nghost));
    mine += (PetscReal)sizeof(PetscScalar) * ((4 + (s->fM ? 1 : 0)) * (PetscReal)nown + (PetscReal)nghost);
    if (!is) {
      cells = (PetscReal)nown / v->np;
      PetscCall(DMDAGetInfo(s->da, NULL, NULL, NULL, NULL, &p[0], &p[1], &p[2], NULL, NULL, NULL, NULL, NULL, NULL));
    }
  }
  PetscCall(MPIU_Allreduce(&mine, &most, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscCall(SgVlasovSplitNames(v, list, sizeof list));
  if (v->pdim > 2) PetscCall(PetscSNPrintf(rk, sizeof rk, "%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, p[0], p[1], p[2]));
  else PetscCall(PetscSNPrintf(rk, sizeof rk, "%" PetscInt_FMT " x %" PetscInt_FMT, p[0], p[1]));
  PetscCall(PetscPrintf(comm, "vlasov: split dims [%s], ranks per split dim %s, distribution memory %.4g MiB on the fullest rank (%.0f B per owned phase cell on rank 0)\n", list, rk, (double)(most / 1048576.0), (double)(mine / cells)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
