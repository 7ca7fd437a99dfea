/* CP2K matrices: SCC-DFTB water (CP2K 2023.1, 32 H2O, 9.8528 A cell; final KS and S written with
   &KS_CSR_WRITE/&S_CSR_WRITE, see inputs/dft/cp2k/).  Blocks = molecules (6 functions: O s,p + 2 H s),
   8 electrons per molecule.  The dense path (exact S^(-1/2), one submatrix) is the reference; the
   submatrix method (S^(-1/2) and sign both by submatrices) at eps_filter 1e-4, 1e-5, 1e-6 must agree
   to 1 meV/atom at 1e-5 (CP2K's own methods differ by ~0.03 meV/atom at 1e-5) and improve with eps.
   Options: -ks FILE -s FILE -block_size 6 -nelec_per_block 8 -n N (expected size: size checks),
   -cluster m (molecules per submatrix), -neps k (only the first k eps_filter values, no assertions). */
#include "sgtb.h"

int main(int argc, char **argv)
{
  char          ks[PETSC_MAX_PATH_LEN] = "inputs/dft/water32-KS.csr", sf[PETSC_MAX_PATH_LEN] = "inputs/dft/water32-S.csr";
  PetscInt      bs = 6, n = -1, natb = 3, cluster = 1, neps = 3;
  PetscReal     neb = 8, eps[3] = {1e-4, 1e-5, 1e-6}, err[3], Ed;
  Mat           H, S;
  SgTBBlocks    b;
  SgTBDMOptions o;
  SgTBDensity   dm;
  PetscInt      N;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ks", ks, sizeof ks, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-s", sf, sizeof sf, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-block_size", &bs, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-nelec_per_block", &neb, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cluster", &cluster, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-neps", &neps, NULL));
  PetscCall(SgTBReadCSR(PETSC_COMM_WORLD, ks, n, &H));
  PetscCall(MatGetSize(H, &N, NULL));
  PetscCall(SgTBReadCSR(PETSC_COMM_WORLD, sf, N, &S));
  PetscCheck(N % bs == 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Matrix size %" PetscInt_FMT " is not a multiple of the block size %" PetscInt_FMT, N, bs);
  b.nblk = N / bs;
  PetscCall(PetscMalloc1(b.nblk + 1, &b.off));
  for (PetscInt k = 0; k <= b.nblk; k++) b.off[k] = k * bs;
  PetscCall(SgTBDMOptionsDefault(&o));
  o.nelec = neb * b.nblk; o.nelec_tol = 1e-3 * b.nblk;
  PetscCall(SgTBNonOrthogonalEnergy(H, S, &b, &o, &Ed, &dm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " functions, %" PetscInt_FMT " molecules: dense band energy %.8f Ha-units (CP2K's), mu %.5f, sign step %.2f s\n", N, b.nblk, (double)Ed, (double)dm.mu, (double)dm.t_total));
  PetscCall(SgTBDensityDestroy(&dm));
  for (int e = 0; e < neps; e++) {
    PetscReal Es;
    o.method = SG_TB_SUBMATRIX; o.eps_filter = eps[e]; o.cluster = cluster; o.pattern_its = 0;
    PetscCall(SgTBNonOrthogonalEnergy(H, S, &b, &o, &Es, &dm));
    err[e] = PetscAbsReal(Es - Ed) / (natb * b.nblk) * 27.211386 * 1e3; /* CP2K matrices are in Hartree */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "eps_filter %.0e: |dE| = %.5f meV/atom, largest submatrix %" PetscInt_FMT ", %.2f s\n", (double)eps[e], (double)err[e], dm.maxn, (double)dm.t_total));
    PetscCall(SgTBDensityDestroy(&dm));
  }
  if (neps < 3) { PetscCall(PetscPrintf(PETSC_COMM_WORLD, "(fewer than 3 eps_filter values: no assertions)\n")); PetscCall(PetscFinalize()); return 0; }
  PetscCheck(err[1] <= 1.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "error at eps_filter 1e-5 is %.4f meV/atom > 1", (double)err[1]);
  /* noise floor 1e-4 meV/atom: below it the three results are all exact to round-off */
  PetscCheck(err[1] <= err[0] + 1e-4 && err[2] <= err[1] + 1e-4, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "error does not decrease with eps_filter");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFree(b.off));
  PetscCall(MatDestroy(&H)); PetscCall(MatDestroy(&S));
  PetscCall(PetscFinalize());
  return 0;
}
