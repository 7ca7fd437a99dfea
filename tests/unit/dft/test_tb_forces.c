/* Verification of the orthogonal TB models and the dense path:
   1. Xu carbon: the published cubic tails join the main functions (|jump| < 1e-5 relative).
   2. Kwon silicon, diamond: the energy minimum lies at a = 5.43 +- 0.05 A (the model is fitted to
      the LDA/experimental lattice constant 5.43 A), found from E(a) at 5.30..5.56 A.
   3. Forces F = -Tr(P dH/dR) - dE_rep/dR against central finite differences of the energy on a
      distorted 64-atom Si cell and an 64-atom diamond C cell (random displacements 0.1 A):
      |F - F_fd| < 2e-4 eV/A (FD step 1e-4 A; the O(h^2) error is ~1e-7, the rest is round-off).
   4. Virial: W = -dE/d(strain) against finite differences of a homogeneous strain (rel. 1e-4).
   5. With Fermi occupations (kT = 0.1 eV) 3. and 4. hold for the Mermin free energy E - TS.
   Usage: test_tb_forces  (any rank count; the dense path runs on one rank per submatrix). */
#include "sgtb.h"

static PetscReal Rand(unsigned long long *s) { *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; return ((*s >> 11) * (1.0 / 9007199254740992.0)) - 0.5; }

static PetscErrorCode FDCheck(const char *el, PetscReal a, PetscReal kT, PetscReal *maxerr, PetscReal *virerr)
{
  SgTBModel     m;
  SgTBGeom      g;
  SgTBDMOptions o;
  SgTBEnergy    E, Ep, Em;
  PetscReal    *f, W[9], h = 1e-4;
  unsigned long long seed = 12345;

  PetscFunctionBegin;
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, el, &m));
  PetscCall(SgTBDiamond(a, 2, 2, 2, &g));
  for (PetscInt k = 0; k < 3 * g.n; k++) g.x[k] += 0.2 * Rand(&seed);
  PetscCall(SgTBDMOptionsDefault(&o));
  o.kT = kT;
  PetscCall(PetscMalloc1(3 * g.n, &f));
  PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &E, f, W, NULL));
  *maxerr = 0;
  for (PetscInt t = 0; t < 12; t++) {
    PetscInt  k = (t * 37 + 5) % (3 * g.n);
    PetscReal x0 = g.x[k], fd;
    g.x[k] = x0 + h; PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &Ep, NULL, NULL, NULL));
    g.x[k] = x0 - h; PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &Em, NULL, NULL, NULL));
    g.x[k] = x0;
    fd = -(Ep.etot - Em.etot) / (2 * h);
    *maxerr = PetscMax(*maxerr, PetscAbsReal(fd - f[k]));
  }
  /* virial: scale the whole cell along x by (1 + e): dE/de = -W_xx */
  {
    PetscReal e = 1e-5, xs[3 * 64 * 8], box0[9], dEde;
    PetscCall(PetscArraycpy(xs, g.x, 3 * g.n)); PetscCall(PetscArraycpy(box0, g.box, 9));
    for (int s = -1; s <= 1; s += 2) {
      for (PetscInt i = 0; i < g.n; i++) g.x[3 * i] = xs[3 * i] * (1 + s * e);
      for (int r = 0; r < 3; r++) g.box[3 * r] = box0[3 * r] * (1 + s * e);
      PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, s > 0 ? &Ep : &Em, NULL, NULL, NULL));
    }
    PetscCall(PetscArraycpy(g.x, xs, 3 * g.n)); PetscCall(PetscArraycpy(g.box, box0, 9));
    dEde = (Ep.etot - Em.etot) / (2 * e);
    *virerr = PetscAbsReal(dEde + W[0]) / PetscMax(1.0, PetscAbsReal(W[0]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: E = %.8f eV (%.6f eV/atom, mu %.4f eV), W_xx = %.6f eV, -dE/de = %.6f eV\n", el, (double)E.etot, (double)(E.etot / g.n), (double)E.mu, (double)W[0], (double)-dEde));
  }
  PetscCall(PetscFree(f));
  PetscCall(SgTBGeomDestroy(&g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgTBModel     m;
  SgTBDMOptions o;
  PetscReal     err, verr, emin = PETSC_MAX_REAL, amin = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* 1. carbon tails */
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "C", &m));
  {
    PetscReal V1[4], V2[4], dV[4], p1, p2, dp;
    SgTBModelHop(&m, m.r1 - 1e-9, V1, dV); SgTBModelHop(&m, m.r1 + 1e-9, V2, dV);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "C hopping tail jump at r1: %.3e (rel)\n", (double)PetscAbsReal((V1[0] - V2[0]) / V1[0])));
    PetscCheck(PetscAbsReal((V1[0] - V2[0]) / V1[0]) < 1e-5, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "C hopping tail does not join");
    SgTBModelPhi(&m, m.d1 - 1e-9, &p1, &dp); SgTBModelPhi(&m, m.d1 + 1e-9, &p2, &dp);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "C phi tail jump at d1: %.3e (rel)\n", (double)PetscAbsReal((p1 - p2) / p1)));
    PetscCheck(PetscAbsReal((p1 - p2) / p1) < 1e-4, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "C phi tail does not join");
  }
  /* 2. silicon lattice constant */
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "Si", &m));
  PetscCall(SgTBDMOptionsDefault(&o));
  for (PetscReal a = 5.30; a <= 5.5601; a += 0.02) {
    SgTBGeom   g;
    SgTBEnergy E;
    PetscCall(SgTBDiamond(a, 2, 2, 2, &g));
    PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &E, NULL, NULL, NULL));
    if (E.etot < emin) { emin = E.etot; amin = a; }
    PetscCall(SgTBGeomDestroy(&g));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Si diamond: minimum of E(a) at a = %.2f A, E = %.5f eV/atom\n", (double)amin, (double)(emin / 64)));
  PetscCheck(PetscAbsReal(amin - 5.43) <= 0.05, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Si lattice constant %.3f is not 5.43 +- 0.05 A: parameters wrong", (double)amin);
  /* 3, 4. forces and virial */
  PetscCall(FDCheck("Si", 5.43, 0, &err, &verr));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Si: max |F - F_fd| = %.3e eV/A, virial rel. error %.3e\n", (double)err, (double)verr));
  PetscCheck(err < 2e-4 && verr < 1e-4, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Si forces/virial disagree with finite differences");
  PetscCall(FDCheck("C", 3.567, 0, &err, &verr));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "C: max |F - F_fd| = %.3e eV/A, virial rel. error %.3e\n", (double)err, (double)verr));
  PetscCheck(err < 2e-4 && verr < 1e-4, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "C forces/virial disagree with finite differences");
  /* Fermi occupations: the forces are the derivative of the Mermin free energy E - TS */
  PetscCall(FDCheck("Si", 5.43, 0.1, &err, &verr));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Si, kT = 0.1 eV: max |F - F_fd(E - TS)| = %.3e eV/A, virial rel. error %.3e\n", (double)err, (double)verr));
  PetscCheck(err < 2e-4 && verr < 1e-4, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Fermi-smeared forces disagree with finite differences of the free energy");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
