/* Radial distribution function g(r) on [0, rc) (rc: the provider's cutoff), sampled from the
   neighbour lists every md_rdf_every steps after md_rdf_start.  Normalisation as LAMMPS's
   compute rdf: g_k = (ordered pairs in shell k) / (N rho 4/3 pi (r_{k+1}^3 - r_k^3)), rho = N/V,
   averaged over samples; bin k is centred at (k + 1/2) rc / nbins. With md_rdf_types [a, b], only pairs
   (i of type a, j of type b) count and the ideal-gas count is N_a (N_b - delta_ab) / V per unit volume,
   as LAMMPS's compute rdf with type pairs (it excludes an atom's pair with itself). */
#include "mdimpl.h"

PetscErrorCode SgMDRDFSample(SgMD *md)
{
  SgMDDomain *dom = md->dom;
  SgMDNeigh  *nb  = &md->neigh;
  PetscReal   rc = md->cutoff, dr = rc / md->rdf_nbins, w = nb->half ? 2.0 : 1.0;
  PetscInt    a = md->rdf_types[0], b = md->rdf_types[1];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    const PetscInt *l = nb->list + nb->first[i];
    for (PetscInt k = 0; k < nb->num[i]; k++) {
      PetscInt  j  = l[k];
      PetscReal dx = dom->x[3 * i] - dom->x[3 * j], dy = dom->x[3 * i + 1] - dom->x[3 * j + 1], dz = dom->x[3 * i + 2] - dom->x[3 * j + 2];
      PetscReal r  = PetscSqrtReal(dx * dx + dy * dy + dz * dz);
      if (r >= rc) continue;
      if (a < 0) md->rdf_hist[(PetscInt)(r / dr)] += w;
      else { /* ordered pairs (i in a, j in b): a half list holds each pair once */
        PetscInt ti = dom->type[i], tj = dom->type[j];
        PetscReal c = (ti == a && tj == b) + (nb->half ? (ti == b && tj == a) : 0);
        md->rdf_hist[(PetscInt)(r / dr)] += c;
      }
    }
  }
  md->rdf_nsamples++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Global g(r) (collective); g[nbins] on every rank. */
PetscErrorCode SgMDRDFResult(SgMD *md, PetscReal g[])
{
  PetscReal dr = md->cutoff / md->rdf_nbins, na = md->N, rho = md->N / md->dom->box.volume; /* centres, partner density */

  PetscFunctionBegin;
  if (md->rdf_types[0] >= 0) { /* N_a (N_b - delta_ab) */
    PetscReal cnt[2] = {0, 0};
    for (PetscInt i = 0; i < md->dom->nlocal; i++)
      for (int k = 0; k < 2; k++) cnt[k] += md->dom->type[i] == md->rdf_types[k];
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, cnt, 2, MPIU_REAL, MPIU_SUM, md->dom->comm));
    na  = cnt[0];
    rho = (cnt[1] - (md->rdf_types[0] == md->rdf_types[1])) / md->dom->box.volume;
  }
  PetscCall(MPIU_Allreduce(md->rdf_hist, g, md->rdf_nbins, MPIU_REAL, MPIU_SUM, md->dom->comm));
  for (PetscInt k = 0; k < md->rdf_nbins; k++) {
    PetscReal r0 = k * dr, r1 = (k + 1) * dr, shell = 4.0 / 3.0 * PETSC_PI * (r1 * r1 * r1 - r0 * r0 * r0);
    g[k] = md->rdf_nsamples && na * rho > 0 ? g[k] / (md->rdf_nsamples * na * rho * shell) : 0.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
