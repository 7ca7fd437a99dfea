/* Benchmark driver (prints figures, never fails on time): one density-matrix evaluation of diamond
   silicon (Kwon TB, a = 5.43 A, 8 nx ny nz atoms, displacements +-0.05 A) by the dense or the
   submatrix method.  Prints one line:  BENCH natoms method seconds_dm seconds_eig maxdim E/atom N/atom
   Options: -nx -ny -nz, -method dense|submatrix, -cluster m, -pattern_its k, -eps e, -reps r. */
#include "sgtb.h"

static PetscReal Rand(unsigned long long *s) { *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; return ((*s >> 11) * (1.0 / 9007199254740992.0)) - 0.5; }

int main(int argc, char **argv)
{
  SgTBModel     m;
  SgTBGeom      g;
  SgTBDMOptions o;
  SgTBNeigh     nl;
  SgTBBlocks    b;
  Mat           H;
  PetscInt      nx = 4, ny = 4, nz = 4, reps = 1, *clus = NULL;
  PetscReal     best = PETSC_MAX_REAL, beig = 0;
  char          meth[32] = "submatrix";
  unsigned long long seed = 5;
  SgTBDensity   dm;
  SgTBEnergy    E;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nx", &nx, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ny", &ny, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nz", &nz, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", meth, sizeof meth, NULL));
  PetscCall(SgTBDMOptionsDefault(&o));
  o.method = strcmp(meth, "dense") ? SG_TB_SUBMATRIX : SG_TB_DENSE;
  o.pattern_its = 0;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cluster", &o.cluster, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-pattern_its", &o.pattern_its, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-eps", &o.eps_filter, NULL));
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "Si", &m));
  PetscCall(SgTBDiamond(5.43, nx, ny, nz, &g));
  for (PetscInt k = 0; k < 3 * g.n; k++) g.x[k] += 0.1 * Rand(&seed);
  PetscCall(SgTBNeighBuild(PETSC_COMM_WORLD, &g, PetscMax(m.rcut, m.dcut), m.rmin, &nl));
  PetscCall(SgTBHamiltonian(PETSC_COMM_WORLD, &m, &g, &nl, &H));
  b.nblk = g.n;
  PetscCall(PetscMalloc1(g.n + 1, &b.off));
  for (PetscInt i = 0; i <= g.n; i++) b.off[i] = 4 * i;
  o.nelec = 4.0 * g.n; o.nelec_tol = 1e-3 * g.n;
  if (o.method == SG_TB_SUBMATRIX && o.cluster > 1) {
    PetscCall(PetscMalloc1(g.n, &clus));
    PetscCall(SgTBSpatialClusters(&g, o.cluster, clus));
  }
  for (PetscInt r = 0; r < reps; r++) {
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(SgTBDensityCompute(H, &b, clus, &o, &dm));
    if (dm.t_total < best) { best = dm.t_total; beig = dm.t_eig; }
    if (r < reps - 1) PetscCall(SgTBDensityDestroy(&dm));
  }
  {
    PetscInt nmine = 0;
    for (PetscInt J = 0; J < dm.nblk; J++) nmine += dm.mine[J];
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "  rank-local: %" PetscInt_FMT " block columns, eigensolver %.3f s\n", nmine, (double)dm.t_eig));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  }
  PetscCall(SgTBEnergyForces(PETSC_COMM_WORLD, &m, &g, &nl, &dm, &E, NULL, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "BENCH %" PetscInt_FMT " %s %.4f %.4f %" PetscInt_FMT " %.8f %.6f\n", g.n, meth, (double)best, (double)beig, dm.maxn, (double)(E.etot / g.n), (double)(dm.nelec / g.n)));
  PetscCall(SgTBDensityDestroy(&dm));
  PetscCall(PetscFree(clus)); PetscCall(PetscFree(b.off));
  PetscCall(MatDestroy(&H)); PetscCall(SgTBNeighDestroy(&nl)); PetscCall(SgTBGeomDestroy(&g));
  PetscCall(PetscFinalize());
  return 0;
}
