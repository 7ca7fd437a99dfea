/* 1 rank vs all ranks: the submatrix method distributes its submatrices over the ranks (2 n^3 cost
   model) and gathers the rows it needs from the MPIAIJ Hamiltonian; the dense path, the submatrix
   path and the md.forces provider (atoms split between ranks as an MD domain decomposition would)
   must give the same energy and forces on PETSC_COMM_WORLD as on PETSC_COMM_SELF: |dE| < 1e-9 eV,
   |dF| < 1e-9 eV/A (round-off: only the order of the sums changes).  Run under $MPIEXEC. */
#include "sgtb.h"

static PetscReal Rand(unsigned long long *s) { *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; return ((*s >> 11) * (1.0 / 9007199254740992.0)) - 0.5; }

int main(int argc, char **argv)
{
  SgTBModel     m;
  SgTBGeom      g;
  SgTBDMOptions o;
  SgTBEnergy    E1, E2;
  PetscReal    *f1, *f2, de, df;
  PetscMPIInt   rank, size;
  unsigned long long seed = 99;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "Si", &m));
  PetscCall(SgTBDiamond(5.43, 2, 2, 2, &g));
  for (PetscInt k = 0; k < 3 * g.n; k++) g.x[k] += 0.1 * Rand(&seed);
  PetscCall(PetscMalloc2(3 * g.n, &f1, 3 * g.n, &f2));
  for (int method = 0; method < 2; method++) {
    PetscCall(SgTBDMOptionsDefault(&o));
    o.method = (SgTBMethod)method; o.pattern_its = 1; o.cluster = 4;
    PetscCall(SgTBCompute(PETSC_COMM_SELF, &m, &g, &o, &E1, f1, NULL, NULL));
    PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &E2, f2, NULL, NULL));
    de = PetscAbsReal(E1.etot - E2.etot); df = 0;
    for (PetscInt k = 0; k < 3 * g.n; k++) df = PetscMax(df, PetscAbsReal(f1[k] - f2[k]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s on 1 vs %d ranks: E = %.10f eV, |dE| = %.2e eV, max |dF| = %.2e eV/A\n", method ? "submatrix" : "dense", size, (double)E2.etot, (double)de, (double)df));
    PetscCheck(de < 1e-9 && df < 1e-9, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "1-rank and %d-rank results differ", size);
  }
  /* provider: each rank owns a contiguous share of the atoms (plus a fake ghost to check it is ignored) */
  {
    SgTB           tb;
    SgForcesInput  in = {0};
    SgForcesOutput out;
    PetscInt       a0 = (g.n * rank) / size, a1 = (g.n * (rank + 1)) / size, *type;
    PetscReal      e;
    PetscCall(PetscOptionsSetValue(NULL, "-mpitest_method", "submatrix"));
    PetscCall(PetscOptionsSetValue(NULL, "-mpitest_pattern_its", "1"));
    PetscCall(PetscOptionsSetValue(NULL, "-mpitest_cluster", "4"));
    PetscCall(SgTBCreate(PETSC_COMM_WORLD, "mpitest_", &tb));
    PetscCall(PetscCalloc1(a1 - a0 + 1, &type));
    in.n = a1 - a0; in.nghost = 1; in.x = g.x + 3 * a0; in.type = type;
    for (int q = 0; q < 9; q++) in.box[q] = g.box[q];
    PetscCall(PetscMalloc1(3 * (in.n + 1), &out.f));
    PetscCall(SgTBComputeForces(tb, &in, &out));
    e = out.energy;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
    df = 0;
    for (PetscInt k = 0; k < 3 * in.n; k++) df = PetscMax(df, PetscAbsReal(out.f[k] - f1[3 * a0 + k]));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &df, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "provider on %d ranks: |dE| = %.2e eV, max |dF| = %.2e eV/A\n", size, (double)PetscAbsReal(e - E1.etot), (double)df));
    PetscCheck(PetscAbsReal(e - E1.etot) < 1e-9 && df < 1e-9, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "provider differs from the serial computation");
    PetscCall(PetscFree(out.f)); PetscCall(PetscFree(type));
    PetscCall(SgTBDestroy(&tb));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFree2(f1, f2));
  PetscCall(SgTBGeomDestroy(&g));
  PetscCall(PetscFinalize());
  return 0;
}
