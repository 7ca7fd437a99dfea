/* NVE molecular dynamics of silicon with TB forces through the md.forces provider (SgTBCreate /
   SgTBComputeForces), using a velocity-Verlet loop of this test's own:
   64 atoms (2x2x2 diamond cells, a = 5.43 A), velocities drawn at 2000 K (equipartition brings
   the cell to ~1000 K), dt = 1 fs, 1 ps (1000 steps), Fermi smearing kT = 0.05 eV (the conserved
   quantity is then the Mermin free energy + kinetic energy; the forces are its exact derivative).
   Asserts: the largest deviation of the total energy from its initial value over 1 ps is below
   2 meV/atom (velocity Verlet fluctuates as dt^2; drift would show up as growth), and the mean
   temperature over the second half is 1000 +- 300 K.  Units: metal (A, eV, ps, amu).
   Options: -steps N (default 1000), -dt (ps). */
#include "sgtb.h"

#define MVV2E 1.0364269e-4 /* amu A^2/ps^2 -> eV */
#define KB    8.617333e-5  /* eV/K */

static PetscReal Gauss(unsigned long long *s)
{
  PetscReal u1, u2;
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; u1 = ((*s >> 11) + 1.0) / 9007199254740993.0;
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; u2 = (*s >> 11) / 9007199254740992.0;
  return PetscSqrtReal(-2 * PetscLogReal(u1)) * PetscCosReal(2 * PETSC_PI * u2);
}

int main(int argc, char **argv)
{
  SgTB           tb;
  SgTBGeom       g;
  SgForcesInput  in = {0};
  SgForcesOutput out;
  PetscInt      *type, steps = 1000;
  PetscReal     *v, *f, mass = 28.0855, dt = 0.001, E0 = 0, maxdev = 0, Tsum = 0, T0 = 2000;
  PetscInt       nT = 0;
  unsigned long long seed = 4242;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &steps, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-dt", &dt, NULL));
  PetscCall(PetscOptionsSetValue(NULL, "-nve_elements", "Si"));
  PetscCall(PetscOptionsSetValue(NULL, "-nve_kt", "0.05"));
  PetscCall(SgTBCreate(PETSC_COMM_WORLD, "nve_", &tb));
  PetscCall(SgTBDiamond(5.43, 2, 2, 2, &g));
  PetscCall(PetscMalloc3(3 * g.n, &v, 3 * g.n, &f, g.n, &type));
  for (PetscInt i = 0; i < g.n; i++) type[i] = 0;
  {
    PetscReal p[3] = {0, 0, 0}, ke = 0, s;
    for (PetscInt k = 0; k < 3 * g.n; k++) v[k] = Gauss(&seed) * PetscSqrtReal(KB * T0 / (mass * MVV2E));
    for (PetscInt i = 0; i < g.n; i++) for (int k = 0; k < 3; k++) p[k] += v[3 * i + k] / g.n;
    for (PetscInt i = 0; i < g.n; i++) for (int k = 0; k < 3; k++) v[3 * i + k] -= p[k];
    for (PetscInt k = 0; k < 3 * g.n; k++) ke += 0.5 * mass * v[k] * v[k] * MVV2E;
    s = PetscSqrtReal(T0 / (2 * ke / (3 * (g.n - 1) * KB)));
    for (PetscInt k = 0; k < 3 * g.n; k++) v[k] *= s;
  }
  in.n = g.n; in.nghost = 0; in.x = g.x; in.type = type;
  for (int q = 0; q < 9; q++) in.box[q] = g.box[q];
  out.f = f;
  PetscCall(SgTBComputeForces(tb, &in, &out));
  for (PetscInt st = 0; st <= steps; st++) {
    PetscReal ke = 0, epot, etot, T;
    if (st > 0) {
      for (PetscInt k = 0; k < 3 * g.n; k++) { v[k] += 0.5 * dt * f[k] / (mass * MVV2E); g.x[k] += dt * v[k]; }
      PetscCall(SgTBComputeForces(tb, &in, &out));
      for (PetscInt k = 0; k < 3 * g.n; k++) v[k] += 0.5 * dt * f[k] / (mass * MVV2E);
    }
    epot = out.energy;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &epot, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
    for (PetscInt k = 0; k < 3 * g.n; k++) ke += 0.5 * mass * v[k] * v[k] * MVV2E;
    etot = epot + ke;
    T = 2 * ke / (3 * (g.n - 1) * KB);
    if (st == 0) E0 = etot;
    maxdev = PetscMax(maxdev, PetscAbsReal(etot - E0));
    if (st >= steps / 2) { Tsum += T; nT++; }
    if (st % 100 == 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "step %5" PetscInt_FMT " t %.3f ps  T %7.1f K  Epot %.6f  Etot %.6f eV  |Etot-E0| %.2e eV/atom\n", st, (double)(st * dt), (double)T, (double)epot, (double)etot, (double)(PetscAbsReal(etot - E0) / g.n)));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max |Etot - E0| over %.3f ps: %.3e eV/atom; mean T (second half) %.1f K\n", (double)(steps * dt), (double)(maxdev / g.n), (double)(Tsum / nT)));
  PetscCheck(maxdev / g.n < 2e-3, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NVE energy not conserved: %.3e eV/atom", (double)(maxdev / g.n));
  PetscCheck(PetscAbsReal(Tsum / nT - 1000) < 300, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "mean temperature %.1f K is not near 1000 K", (double)(Tsum / nT));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(SgTBDestroy(&tb));
  PetscCall(PetscFree3(v, f, type));
  PetscCall(SgTBGeomDestroy(&g));
  PetscCall(PetscFinalize());
  return 0;
}
