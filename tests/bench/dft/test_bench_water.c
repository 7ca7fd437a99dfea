/* Benchmark driver (prints figures, never fails on time): density matrices of SCC-DFTB water from the
   Kohn-Sham and overlap matrices CP2K wrote (tests/bench/dft/cp2k_water.sh).  -overlap orthogonalise:
   S^-1/2 is formed once (per geometry, as CP2K's ls_scf_init_matrix_S), then every evaluation forms
   S^-1/2 H S^-1/2 and its sign function; -overlap pair: every evaluation solves the pair (H, S) per
   submatrix (dense: one generalised eigenproblem of everything, LAPACK potrf + sygst + sytrd + stedc,
   and P formed in full).  -reps evaluations of one density matrix from the KS matrix; medians.
   Prints one line:
     BENCH natoms method/overlap/precision eps wall_s cpu_s E_band_Ha t_orth t_pattern t_gather t_eig
           t_mu t_cols maxdim nsub nredo cpu_rank_min cpu_rank_max
   wall_s: median wall seconds; cpu_s: median CPU seconds summed over the ranks (on a loaded machine
   wall time mostly measures the share of a core the process got); t_*: CPU seconds by phase, summed
   over the ranks, of the last evaluation; cpu_rank_min/max: the least and most CPU seconds one rank
   spent outside the chemical potential's reductions in the last evaluation (the load balance).
   Options: -ks FILE -s FILE, -method dense|submatrix, -overlap pair|orthogonalise, -precision
   double|single, -eps e, -cluster m, -reps r, -block_size 6, -nelec_per_block 8. */
#include <time.h>
#include "sgtb.h"

static int       CmpReal(const void *a, const void *b) { PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b; return x < y ? -1 : x > y; }
static PetscReal Cpu(void) { return (PetscReal)clock() / CLOCKS_PER_SEC; }

int main(int argc, char **argv)
{
  char          ks[PETSC_MAX_PATH_LEN] = "", sf[PETSC_MAX_PATH_LEN] = "", meth[32] = "submatrix", ov[32] = "pair", prec[32] = "double";
  PetscInt      bs = 6, reps = 3, N;
  PetscReal     neb = 8, *t, *tc, ph[6] = {0}, E = 0, rk[2] = {0, 0};
  Mat           H, S, X = NULL;
  SgTBBlocks    b;
  SgTBDMOptions o;
  SgTBDensity   dm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ks", ks, sizeof ks, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-s", sf, sizeof sf, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", meth, sizeof meth, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-overlap", ov, sizeof ov, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-precision", prec, sizeof prec, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-block_size", &bs, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-nelec_per_block", &neb, NULL));
  PetscCheck(ks[0] && sf[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "test_bench_water needs -ks FILE and -s FILE (CP2K KS_CSR_WRITE / S_CSR_WRITE output)");
  PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "-reps must be at least 1");
  PetscCall(SgTBDMOptionsDefault(&o));
  o.method    = strcmp(meth, "dense") ? SG_TB_SUBMATRIX : SG_TB_DENSE;
  o.overlap   = strcmp(ov, "pair") ? SG_TB_OVERLAP_ORTHOGONALISE : SG_TB_OVERLAP_PAIR;
  o.precision = strcmp(prec, "single") ? SG_TB_DOUBLE : SG_TB_SINGLE;
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
  if (o.overlap == SG_TB_OVERLAP_ORTHOGONALISE) {
    PetscReal tx = MPI_Wtime();
    PetscCall(SgTBSubmatrixPower(S, &b, &o, -0.5, &X));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "S^-1/2 (once per geometry, not timed below): %.3f s\n", (double)(MPI_Wtime() - tx)));
  }
  PetscCall(PetscMalloc2(reps, &t, reps, &tc));
  for (PetscInt r = 0; r < reps; r++) {
    Mat       Ho = NULL;
    PetscReal t0 = MPI_Wtime(), c0 = Cpu(), to = 0;
    if (X) {
      PetscCall(MatPtAP(H, X, MAT_INITIAL_MATRIX, 2.0, &Ho));
      to = Cpu() - c0;
      PetscCall(SgTBDensityCompute(Ho, &b, NULL, &o, &dm));
    } else PetscCall(SgTBDensityComputePair(H, S, &b, NULL, &o, &dm));
    t[r]  = MPI_Wtime() - t0;
    tc[r] = Cpu() - c0;
    {
      PetscReal g[7] = {tc[r], to, dm.t_pattern, dm.t_gather, dm.t_eig, dm.t_mu, dm.t_cols};
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 7, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
      rk[0] = -(tc[r] - dm.t_mu); rk[1] = tc[r] - dm.t_mu; /* waiting in the reductions of mu spins the CPU */
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, rk, 2, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
      rk[0] = -rk[0];
      tc[r] = g[0];
      for (int q = 0; q < 6; q++) ph[q] = g[q + 1];
    }
    E = dm.ebandsum;
    if (r < reps - 1) PetscCall(SgTBDensityDestroy(&dm));
    PetscCall(MatDestroy(&Ho));
  }
  qsort(t, reps, sizeof *t, CmpReal);
  qsort(tc, reps, sizeof *tc, CmpReal);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "BENCH %" PetscInt_FMT " %s/%s/%s %.1e %.4f %.4f %.10f %.4f %.4f %.4f %.4f %.4f %.4f %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %.4f %.4f\n", 3 * b.nblk, meth, ov, prec, (double)o.eps_filter, (double)t[reps / 2], (double)tc[reps / 2], (double)E, (double)ph[0], (double)ph[1], (double)ph[2], (double)ph[3], (double)ph[4], (double)ph[5], dm.maxn, dm.nsub, dm.nredo, (double)rk[0], (double)rk[1]));
  PetscCall(SgTBDensityDestroy(&dm));
  PetscCall(PetscFree2(t, tc));
  PetscCall(PetscFree(b.off));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&S));
  PetscCall(PetscFinalize());
  return 0;
}
