/* Total energy and forces of the orthogonal TB model from a density matrix.

   E = 2 Tr(P H) + E_rep (- T S with Fermi occupations: the Mermin free energy, whose derivative is
   the force below).  With the full neighbour list, E_band = 2 sum_J sum_(J,IB,L) Tr(P_IJ h_JI(d)),
   d = x_I + L - x_J, and the Hellmann-Feynman force at fixed P is
     F = -2 sum Tr(P_IJ dh/dd) (dd/dx),
   exact for the dense (variational) P.  For the submatrix P this is the force of the same expression
   with the approximate P held fixed: P is not stationary, so F misses the term -2 Tr(dP/dx H), whose
   size follows the density-matrix error (eps_filter); it is tested against finite differences.
   Each rank takes the block columns J it holds, so the forces are summed over ranks.
   E_rep = sum_i f(sum_j phi(r_ij)) (embedding form of both Kwon and Xu).
   Virial W = -sum over pair terms d (x) dE/dd (positive for repulsion), eV. */
#include "sgtb.h"

PetscErrorCode SgTBEnergyForces(MPI_Comm comm, const SgTBModel *m, const SgTBGeom *g, const SgTBNeigh *nl, const SgTBDensity *dm, SgTBEnergy *E, PetscReal *f, PetscReal virial[9])
{
  PetscMPIInt rank, size;
  PetscReal   erep = 0, W[9] = {0};
  PetscInt    n = g->n, i0, i1;
  SgTBBlocks  b = {n, NULL};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (f) PetscCall(PetscArrayzero(f, 3 * n));
  /* band-structure forces from the held block columns */
  if (f) {
    for (PetscInt J = 0; J < n; J++) {
      if (!dm->mine[J]) continue;
      for (PetscInt p = nl->start[J]; p < nl->start[J + 1]; p++) {
        PetscInt         IB = nl->j[p];
        const PetscReal *d = nl->d + 3 * p, *blk;
        PetscReal        V[4], dV[4], h[16], dh[3][16], r = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), gk[3];
        PetscCall(SgTBDensityGetBlock(dm, &b, IB, J, &blk));
        PetscCheck(blk, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Density block (%" PetscInt_FMT ",%" PetscInt_FMT ") of a Hamiltonian neighbour is missing from the pattern", IB, J);
        SgTBModelHop(m, r, V, dV);
        SgTBSlaterKoster(d, V, dV, h, dh);
        for (int k = 0; k < 3; k++) {
          PetscReal s = 0;
          for (int q = 0; q < 16; q++) s += blk[q] * dh[k][q]; /* blk[a*4+b] = P[I_b, J_a], dh[a*4+b] */
          gk[k] = 2 * s;
        }
        for (int k = 0; k < 3; k++) { f[3 * IB + k] -= gk[k]; f[3 * J + k] += gk[k]; }
        for (int a = 0; a < 3; a++) for (int c = 0; c < 3; c++) W[a * 3 + c] -= d[a] * gk[c];
      }
    }
  }
  /* repulsion: atoms split evenly over ranks */
  i0 = (n * rank) / size; i1 = (n * (rank + 1)) / size;
  for (PetscInt i = i0; i < i1; i++) {
    PetscReal x = 0, fe, dfe;
    for (PetscInt p = nl->start[i]; p < nl->start[i + 1]; p++) {
      const PetscReal *d = nl->d + 3 * p;
      PetscReal        ph, dph;
      SgTBModelPhi(m, PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), &ph, &dph);
      x += ph;
    }
    SgTBModelEmbed(m, x, &fe, &dfe);
    erep += fe;
    if (!f) continue;
    for (PetscInt p = nl->start[i]; p < nl->start[i + 1]; p++) {
      const PetscReal *d = nl->d + 3 * p;
      PetscReal        ph, dph, r = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), gk[3];
      PetscInt         j = nl->j[p];
      SgTBModelPhi(m, r, &ph, &dph);
      for (int k = 0; k < 3; k++) gk[k] = dfe * dph * d[k] / r;
      for (int k = 0; k < 3; k++) { f[3 * j + k] -= gk[k]; f[3 * i + k] += gk[k]; }
      for (int a = 0; a < 3; a++) for (int c = 0; c < 3; c++) W[a * 3 + c] -= d[a] * gk[c];
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &erep, 1, MPIU_REAL, MPIU_SUM, comm));
  if (f) {
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f, 3 * n, MPIU_REAL, MPIU_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, W, 9, MPIU_REAL, MPIU_SUM, comm));
    if (virial) for (int q = 0; q < 9; q++) virial[q] = W[q];
  }
  E->eband   = dm->ebandsum;
  E->entropy = dm->entropy;
  E->erep    = erep;
  E->etot    = E->eband + E->erep + E->entropy;
  E->mu      = dm->mu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBCompute(MPI_Comm comm, const SgTBModel *m, const SgTBGeom *g, const SgTBDMOptions *o_in, SgTBEnergy *E, PetscReal *f, PetscReal virial[9], SgTBDensity *dm_out)
{
  SgTBNeigh     nl;
  Mat           H;
  SgTBBlocks    b;
  SgTBDensity   dm;
  SgTBDMOptions o = *o_in;
  PetscInt     *clus = NULL;

  PetscFunctionBegin;
  PetscCall(SgTBNeighBuild(comm, g, PetscMax(m->rcut, m->dcut), m->rmin, &nl));
  PetscCall(SgTBHamiltonian(comm, m, g, &nl, &H));
  b.nblk = g->n;
  PetscCall(PetscMalloc1(g->n + 1, &b.off));
  for (PetscInt i = 0; i <= g->n; i++) b.off[i] = 4 * i;
  if (o.nelec <= 0) o.nelec = m->nval * g->n;
  o.nelec_tol *= g->n; /* per atom in the options */
  if (o.method == SG_TB_SUBMATRIX && o.cluster > 1) {
    PetscCall(PetscMalloc1(g->n, &clus));
    PetscCall(SgTBSpatialClusters(g, o.cluster, clus));
  }
  PetscCall(SgTBDensityCompute(H, &b, clus, &o, &dm));
  PetscCall(SgTBEnergyForces(comm, m, g, &nl, &dm, E, f, virial));
  if (dm_out) *dm_out = dm;
  else PetscCall(SgTBDensityDestroy(&dm));
  PetscCall(PetscFree(clus));
  PetscCall(PetscFree(b.off));
  PetscCall(MatDestroy(&H));
  PetscCall(SgTBNeighDestroy(&nl));
  PetscFunctionReturn(PETSC_SUCCESS);
}
