/* physics/dft: orthogonal sp3 tight binding (Si: Kwon et al. 1994, C: Xu et al. 1992), the dense
   (LAPACK) and submatrix (Lass et al., SC20) density-matrix methods, energies and forces, a reader
   for CP2K CSR matrices, and the md.forces provider "tb".

   Units: Angstrom, eV, eV/Angstrom (LAMMPS "metal").  Spin-degenerate occupations: every orbital holds
   two electrons, the density matrix P has eigenvalues in [0, 1] and E_band = 2 Tr(P H).
   Orbital order inside an atom block: s, px, py, pz.  Boxes: cell vectors a, b, c as rows of box[9];
   always periodic (Gamma point of the supercell: H_ij sums the hoppings to all images of j).
   Depends on: PETSc (Mat MPIAIJ), LAPACK/BLAS, src/base/include (options, slots). Nothing else. */
#pragma once
#include <petscmat.h>
#include "sgslot.h" /* with the md.forces kind, sgforces.h */

/* ---- model ----------------------------------------------------------------------------------- */
typedef struct {
  char      elem[4];
  PetscReal nval;          /* valence electrons per atom */
  PetscReal Es, Ep;        /* on-site energies, eV */
  PetscReal r0;            /* reference distance of the hopping scaling, Angstrom */
  PetscReal V0[4];         /* ss sigma, sp sigma, pp sigma, pp pi at r0, eV */
  PetscReal n, nc[4], rc[4];
  PetscInt  tail;          /* 0: smooth quintic switch on [r1, rcut]; 1: cubic tail polynomials */
  PetscReal r1, rcut;      /* hopping tail start and cutoff, Angstrom */
  PetscReal ht[4];         /* cubic tail of s(r) (tail 1) */
  PetscReal phi0, d0, m, mc, dc, d1, dcut; /* repulsive pair function phi(r) */
  PetscReal pt[4];         /* cubic tail of phi(r) (tail 1) */
  PetscReal f[5];          /* embedding polynomial E_rep,i = sum_k f[k] x^k, x = sum_j phi(r_ij) */
  PetscReal rmin;          /* closer than this the atoms overlap: error */
} SgTBModel;

PETSC_EXTERN PetscErrorCode SgTBModelGet(MPI_Comm, const char elem[], SgTBModel *);
/* Radial functions and their r-derivatives. */
PETSC_EXTERN void SgTBModelHop(const SgTBModel *, PetscReal r, PetscReal V[4], PetscReal dV[4]);
PETSC_EXTERN void SgTBModelPhi(const SgTBModel *, PetscReal r, PetscReal *phi, PetscReal *dphi);
PETSC_EXTERN void SgTBModelEmbed(const SgTBModel *, PetscReal x, PetscReal *f, PetscReal *df);
/* Slater-Koster s,p block h[a*4+b] (a on the atom at the origin, b on the atom at d) and its
   derivatives dh[k][a*4+b] with respect to d_k. */
PETSC_EXTERN void SgTBSlaterKoster(const PetscReal d[3], const PetscReal V[4], const PetscReal dV[4], PetscReal h[16], PetscReal dh[3][16]);

/* ---- geometry and neighbour list ------------------------------------------------------------- */
typedef struct {
  PetscInt   n;        /* atoms (all ranks hold all of them: TB systems are small enough) */
  PetscReal *x;        /* 3n, Angstrom */
  PetscReal  box[9];   /* rows a, b, c */
} SgTBGeom;

typedef struct {       /* full list: every ordered pair (i, j, image) with |d| < rcut, d = x_j + L - x_i */
  PetscInt   n, *start, *j;
  PetscReal *d;        /* 3 per entry */
} SgTBNeigh;

/* Fails with a clear error on overlapping atoms (closer than rmin) and degenerate boxes. */
PETSC_EXTERN PetscErrorCode SgTBNeighBuild(MPI_Comm, const SgTBGeom *, PetscReal rcut, PetscReal rmin, SgTBNeigh *);
PETSC_EXTERN PetscErrorCode SgTBNeighDestroy(SgTBNeigh *);
PETSC_EXTERN PetscErrorCode SgTBDiamond(PetscReal a, PetscInt nx, PetscInt ny, PetscInt nz, SgTBGeom *);
PETSC_EXTERN PetscErrorCode SgTBGeomDestroy(SgTBGeom *);

/* ---- block structure shared by the density-matrix methods ------------------------------------- */
typedef struct {
  PetscInt  nblk;      /* blocks (atoms or molecules) */
  PetscInt *off;       /* nblk+1 basis-function offsets */
} SgTBBlocks;

/* Assemble the TB Hamiltonian as a MATMPIAIJ (rows distributed by atoms, block size 4). */
PETSC_EXTERN PetscErrorCode SgTBHamiltonian(MPI_Comm, const SgTBModel *, const SgTBGeom *, const SgTBNeigh *, Mat *);

/* ---- density matrix ------------------------------------------------------------------------- */
typedef enum { SG_TB_DENSE = 0, SG_TB_SUBMATRIX = 1 } SgTBMethod;
typedef enum { SG_TB_SIGN_EIG = 0, SG_TB_SIGN_NS = 1 } SgTBSign;
typedef enum { SG_TB_DOUBLE = 0, SG_TB_SINGLE = 1 } SgTBPrecision;
/* Non-orthogonal basis (CP2K matrices): the submatrix method on the pair (H, S) (generalised
   eigenproblem per submatrix, P in the non-orthogonal basis directly), or on S^-1/2 H S^-1/2 as
   CP2K's LS_SCF does (S^-1/2 by submatrices too). */
typedef enum { SG_TB_OVERLAP_PAIR = 0, SG_TB_OVERLAP_ORTHOGONALISE = 1 } SgTBOverlap;

typedef struct {
  SgTBMethod method;
  SgTBSign   sign;         /* submatrix sign evaluation: eigendecomposition or Newton-Schulz */
  PetscReal  eps_filter;   /* submatrix: blocks of P (and of H) with Frobenius norm below are dropped */
  PetscInt   pattern_its;  /* submatrix: max pattern refinements (0 = pattern of H only, as in CP2K) */
  PetscInt   cluster;      /* submatrix: target atoms per cluster (block columns sharing a submatrix) */
  PetscReal  kT;           /* electronic temperature (Fermi), eV; 0 = step occupations */
  PetscReal  nelec;        /* electrons */
  PetscReal  nelec_tol;    /* allowed |N(mu) - nelec|, per atom in options, total inside SgTBDensityCompute */
  SgTBPrecision precision; /* submatrix factorisations in double, or single with a McWeeny refinement */
  SgTBOverlap   overlap;   /* non-orthogonal basis: pair (H, S) or S^-1/2 H S^-1/2 */
  PetscReal  mu;           /* Newton-Schulz: chemical potential to use (from the previous eigen step) */
  PetscBool  mu_set;
  PetscBool  verbose;
} SgTBDMOptions;

/* The density matrix, held as block columns: each rank holds the columns of its clusters.
   col_start/col_rows: for block column J held here, the block rows IB present; the values are
   dense blocks (rows of IB) x (cols of J), column-major inside each (IB,J) block, stored in val. */
typedef struct {
  PetscInt   nblk;
  PetscBool *mine;          /* nblk: is column J held on this rank */
  PetscInt  *cstart;        /* nblk+1 into crow/cvoff */
  PetscInt  *crow;          /* block rows */
  PetscInt  *cvoff;         /* offset of block (crow, J) in val */
  PetscReal *val;
  PetscReal  mu, ebandsum, entropy, nelec;  /* mu (eV), 2 Tr(PH), -TS term (eV, <= 0), 2 Tr P */
  PetscReal  t_total, t_cpu;                /* wall seconds; CPU seconds of this rank */
  PetscReal  t_pattern, t_gather, t_eig, t_mu, t_cols; /* CPU seconds of this rank by phase: pattern and
                                               layout, gathering the submatrices, factorisations,
                                               chemical potential, kept columns */
  PetscReal  t_orth;                        /* CPU seconds forming S^-1/2 H S^-1/2 (orthogonalise) */
  PetscInt   nsub, maxn;                    /* submatrices evaluated globally, largest dimension */
  PetscReal  flops;                         /* 2 n^3 cost model summed over submatrices */
  PetscInt   its;                           /* pattern refinements used */
  PetscInt   nredo;                         /* submatrices solved again (a level between their own
                                               mid-gap and the global mu, kT = 0) */
} SgTBDensity;

/* Compute P for the symmetric MPIAIJ matrix A with the given blocks.  clus (optional, may be NULL):
   cluster id of every block (0..nclus-1); default: consecutive groups of opt->cluster blocks. */
PETSC_EXTERN PetscErrorCode SgTBDensityCompute(Mat A, const SgTBBlocks *, const PetscInt *clus, const SgTBDMOptions *, SgTBDensity *);
/* The same for a non-orthogonal basis: H c = e S c on every submatrix (the pair restricted to its
   rows); P is the density matrix in that basis (2 Tr(P S) electrons, band energy 2 Tr(P H)). */
PETSC_EXTERN PetscErrorCode SgTBDensityComputePair(Mat H, Mat S, const SgTBBlocks *, const PetscInt *clus, const SgTBDMOptions *, SgTBDensity *);
PETSC_EXTERN PetscErrorCode SgTBDensityGetBlock(const SgTBDensity *, const SgTBBlocks *, PetscInt IB, PetscInt J, const PetscReal **blk);
PETSC_EXTERN PetscErrorCode SgTBDensityToMat(MPI_Comm, const SgTBDensity *, const SgTBBlocks *, Mat A, Mat *P);
PETSC_EXTERN PetscErrorCode SgTBDensityDestroy(SgTBDensity *);
/* Generic spectral function of a symmetric matrix through the same submatrix machinery (used for
   S^(-1/2)): power p applied to the eigenvalues (must be positive). Result as an MPIAIJ matrix. */
PETSC_EXTERN PetscErrorCode SgTBSubmatrixPower(Mat S, const SgTBBlocks *, const SgTBDMOptions *, PetscReal p, Mat *X);

/* Spatial clusters of about `target` atoms (grid boxes); returns cluster ids per atom. */
PETSC_EXTERN PetscErrorCode SgTBSpatialClusters(const SgTBGeom *, PetscInt target, PetscInt *clus);

/* ---- energy and forces ----------------------------------------------------------------------- */
typedef struct {
  PetscReal eband, erep, entropy, etot; /* eV; etot = eband + erep - T S (Mermin free energy if kT > 0) */
  PetscReal mu;
} SgTBEnergy;

/* Total energy and (if f != NULL) forces f[3n] and virial[9] (W = -sum d (x) dE/dd, eV) from P. */
PETSC_EXTERN PetscErrorCode SgTBEnergyForces(MPI_Comm, const SgTBModel *, const SgTBGeom *, const SgTBNeigh *, const SgTBDensity *, SgTBEnergy *, PetscReal *f, PetscReal virial[9]);
/* One-shot: neighbour list, H, P, energy and forces. */
PETSC_EXTERN PetscErrorCode SgTBCompute(MPI_Comm, const SgTBModel *, const SgTBGeom *, const SgTBDMOptions *, SgTBEnergy *, PetscReal *f, PetscReal virial[9], SgTBDensity *dm_out);

/* ---- CP2K CSR matrices (non-orthogonal H, S) ------------------------------------------------ */
/* Read a CP2K `&KS_CSR_WRITE` / `&S_CSR_WRITE` text file (row col value, 1-based, upper triangle) into
   a symmetric MPIAIJ of size n (n <= 0: from the file's largest index).  Size mismatches are errors. */
PETSC_EXTERN PetscErrorCode SgTBReadCSR(MPI_Comm, const char file[], PetscInt n, Mat *);
/* Band energy 2 Tr(P H) for non-orthogonal H, S: by the pair (H, S) on every submatrix, or through
   S^(-1/2) H S^(-1/2) (both by submatrices), as o->overlap says.  dm->t_orth: the time forming
   S^-1/2 H S^-1/2 (0 for the pair). */
PETSC_EXTERN PetscErrorCode SgTBNonOrthogonalEnergy(Mat H, Mat S, const SgTBBlocks *, const SgTBDMOptions *, PetscReal *eband, SgTBDensity *dm);

/* ---- options -------------------------------------------------------------------------------- */
/* Read the density-matrix options with the given prefix (e.g. "tb_" or "dft_"). */
PETSC_EXTERN PetscErrorCode SgTBDMOptionsSetFromOptions(MPI_Comm, const char prefix[], SgTBDMOptions *);
PETSC_EXTERN PetscErrorCode SgTBDMOptionsDefault(SgTBDMOptions *);
/* The same inside an open options block (PetscOptionsBegin or a solver's setfromoptions). */
PETSC_EXTERN PetscErrorCode SgTBDMOptionsRead(PetscOptionItems *, SgTBDMOptions *);

/* ---- md.forces provider "tb" ---------------------------------------------------------------- */
typedef struct _n_SgTB *SgTB;
/* Options (prefix + name): elements (MD type index -> element, e.g. "Si"), and the density-matrix
   options above. */
PETSC_EXTERN PetscErrorCode SgTBCreate(MPI_Comm, const char prefix[], SgTB *);
/* As SgTBCreate, with the default of the elements option given (e.g. the MD type names). */
PETSC_EXTERN PetscErrorCode SgTBCreateWithElements(MPI_Comm, const char prefix[], const char elements[], SgTB *);
/* The md.forces provider "tb" (physics/dft/mdtb.c; registered in src/cli/register.c). */
PETSC_EXTERN PetscErrorCode SgForcesProviderCreate_TB(const SgForcesProviderInfo *, SgForcesProvider *);
/* SgForcesFn: ctx is the SgTB.  Owned atoms of all ranks are gathered (TB is not local); the energy
   is returned on rank 0 of the communicator (0 elsewhere) so that the caller's sum is the total;
   owned atoms get their forces, ghosts get zero (no reverse communication needed). */
PETSC_EXTERN PetscErrorCode SgTBComputeForces(void *ctx, const SgForcesInput *, SgForcesOutput *);
PETSC_EXTERN PetscErrorCode SgTBDestroy(SgTB *);

/* Standalone solver type "dft" (single-point energy and forces). */
PETSC_EXTERN PetscErrorCode SgSolverCreate_DFT(SgSolver);
