/* Benchmark driver (prints figures, never fails on time): density matrices of SCC-DFTB water from the
   Kohn-Sham and overlap matrices CP2K wrote (tests/bench/dft/cp2k_water.sh).  S^-1/2 is formed once
   (per geometry, as CP2K's ls_scf_init_matrix_S); then -reps evaluations of one density matrix from
   the KS matrix (orthogonalisation + sign function), timed by phase; the median is reported.
   Prints one line:
     BENCH natoms method eps median_s min_s E_band_Ha t_orth t_pattern t_gather t_eig t_mu t_cols maxdim nsub
   Options: -ks FILE -s FILE, -method dense|submatrix, -eps e, -cluster m, -reps r, -block_size 6,
   -nelec_per_block 8. */
#include "sgtb.h"

static int CmpReal(const void *a, const void *b) { PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv)
{
  char          ks[PETSC_MAX_PATH_LEN] = "", sf[PETSC_MAX_PATH_LEN] = "", meth[32] = "submatrix";
  PetscInt      bs = 6, reps = 3, N;
  PetscReal     neb = 8, *t, ph[6] = {0}, E = 0, tx;
  Mat           H, S, X;
  SgTBBlocks    b;
  SgTBDMOptions o;
  SgTBDensity   dm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ks", ks, sizeof ks, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-s", sf, sizeof sf, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", meth, sizeof meth, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-block_size", &bs, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-nelec_per_block", &neb, NULL));
  PetscCheck(ks[0] && sf[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "test_bench_water needs -ks FILE and -s FILE (CP2K KS_CSR_WRITE / S_CSR_WRITE output)");
  PetscCall(SgTBDMOptionsDefault(&o));
  o.method = strcmp(meth, "dense") ? SG_TB_SUBMATRIX : SG_TB_DENSE;
  o.pattern_its = 0; o.cluster = 1;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cluster", &o.cluster, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-eps", &o.eps_filter, NULL));
  PetscCall(SgTBReadCSR(PETSC_COMM_WORLD, ks, -1, &H));
  PetscCall(MatGetSize(H, &N, NULL));
  PetscCall(SgTBReadCSR(PETSC_COMM_WORLD, sf, N, &S));
  PetscCheck(N % bs == 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Matrix size %" PetscInt_FMT " is not a multiple of the block size %" PetscInt_FMT, N, bs);
  b.nblk = N / bs;
  PetscCall(PetscMalloc1(b.nblk + 1, &b.off));
  for (PetscInt k = 0; k <= b.nblk; k++) b.off[k] = k * bs;
  o.nelec = neb * b.nblk; o.nelec_tol = 1e-3 * b.nblk;
  tx = MPI_Wtime();
  PetscCall(SgTBSubmatrixPower(S, &b, &o, -0.5, &X));
  tx = MPI_Wtime() - tx;
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt r = 0; r < reps; r++) {
    Mat Ho;
    PetscReal t0 = MPI_Wtime();
    PetscCall(MatPtAP(H, X, MAT_INITIAL_MATRIX, 2.0, &Ho));
    PetscReal to = MPI_Wtime() - t0;
    PetscCall(SgTBDensityCompute(Ho, &b, NULL, &o, &dm));
    t[r] = MPI_Wtime() - t0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    ph[0] += to / reps; ph[1] += dm.t_pattern / reps; ph[2] += dm.t_gather / reps; ph[3] += dm.t_eig / reps; ph[4] += dm.t_mu / reps; ph[5] += dm.t_cols / reps;
    E = dm.ebandsum;
    if (r < reps - 1) PetscCall(SgTBDensityDestroy(&dm));
    PetscCall(MatDestroy(&Ho));
  }
  qsort(t, reps, sizeof *t, CmpReal);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "S^-1/2 (once per geometry): %.3f s\n", (double)tx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "BENCH %" PetscInt_FMT " %s %.1e %.4f %.4f %.10f %.4f %.4f %.4f %.4f %.4f %.4f %" PetscInt_FMT " %" PetscInt_FMT "\n", 3 * b.nblk, meth, (double)o.eps_filter, (double)t[reps / 2], (double)t[0], (double)E, (double)ph[0], (double)ph[1], (double)ph[2], (double)ph[3], (double)ph[4], (double)ph[5], dm.maxn, dm.nsub));
  PetscCall(SgTBDensityDestroy(&dm));
  PetscCall(PetscFree(t));
  PetscCall(PetscFree(b.off));
  PetscCall(MatDestroy(&X)); PetscCall(MatDestroy(&H)); PetscCall(MatDestroy(&S));
  PetscCall(PetscFinalize());
  return 0;
}
