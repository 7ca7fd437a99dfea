/* Phase-space grids: one DMDA per species, replicated configuration-space arrays. See vlasov.h. */
#include "vlasov.h"

PetscErrorCode SgVlasovCellOffset(const SgVlasovSpecies *s, const PetscInt n[], PetscBool ghosted, PetscInt *off)
{
  const PetscInt *st = ghosted ? s->gs : s->s, *w = ghosted ? s->gm : s->m;
  PetscInt        o  = 0, fo = 0;

  PetscFunctionBegin;
  for (PetscInt a = s->dadim - 1; a >= 0; a--) o = o * w[a] + (n[a] - st[a]);
  /* folded dims: the first folded dim runs fastest */
  for (PetscInt f = s->nfd - 1; f >= 0; f--) fo = fo * s->foldN[f] + n[s->dadim + f];
  *off = o * s->bs + fo * (s->bs / s->nfold);
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
    s->foldN[0] = s->foldN[1] = s->foldN[2] = 1;
    for (PetscInt d = s->dadim; d < v->pdim; d++) {
      s->foldN[d - s->dadim] = s->N[d];
      s->nfold *= s->N[d];
    }
    s->nfd = v->pdim - s->dadim;
    s->bs  = v->np * s->nfold;
    for (PetscInt a = 0; a < s->dadim; a++) {
      bt[a] = a < v->cdim ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
      M[a]  = s->N[a];
    }
    if (s->dadim == 2) PetscCall(DMDACreate2d(comm, bt[0], bt[1], DMDA_STENCIL_STAR, M[0], M[1], v->ranks[0], v->ranks[1], s->bs, 1, NULL, NULL, &s->da));
    else PetscCall(DMDACreate3d(comm, bt[0], bt[1], bt[2], DMDA_STENCIL_STAR, M[0], M[1], M[2], v->ranks[0], v->ranks[1], v->ranks[2], s->bs, 1, NULL, NULL, NULL, &s->da));
    PetscCall(DMSetUp(s->da));
    s->s[2] = s->gs[2] = 0; s->m[2] = s->gm[2] = 1;
    PetscCall(DMDAGetCorners(s->da, &s->s[0], &s->s[1], &s->s[2], &s->m[0], &s->m[1], &s->m[2]));
    PetscCall(DMDAGetGhostCorners(s->da, &s->gs[0], &s->gs[1], &s->gs[2], &s->gm[0], &s->gm[1], &s->gm[2]));
    if (s->dadim == 2) { s->s[2] = s->gs[2] = 0; s->m[2] = s->gm[2] = 1; }
    for (PetscInt a = 0; a < s->dadim; a++)
      PetscCheck(s->m[a] >= 1, comm, PETSC_ERR_USER_INPUT, "Species %s: a rank owns no cells along phase dimension %" PetscInt_FMT " (%" PetscInt_FMT " cells): use more cells or fewer ranks", s->name, a, s->N[a]);
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
