/* Density-matrix options shared by the "dft" solver and the "tb" force provider. */
#include "sgtb.h"
#include "sgsys.h"

PetscErrorCode SgTBDMOptionsDefault(SgTBDMOptions *o)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(o, sizeof(*o)));
  o->method      = SG_TB_DENSE;
  o->sign        = SG_TB_SIGN_EIG;
  o->precision   = SG_TB_DOUBLE;
  o->overlap     = SG_TB_OVERLAP_ORTHOGONALISE;
  o->eps_filter  = 1e-5;
  o->pattern_its = 12;
  o->cluster     = 8;
  o->kT          = 0;
  o->nelec       = -1;
  o->nelec_tol   = 1e-3;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDMOptionsRead(PetscOptionItems *PetscOptionsObject, SgTBDMOptions *o)
{
  const char *methods[] = {"dense", "submatrix"}, *signs[] = {"eig", "newton_schulz"}, *precs[] = {"double", "single"}, *overlaps[] = {"pair", "orthogonalise"};
  PetscInt    im = o->method, is = o->sign, ip = o->precision, io = o->overlap;

  PetscFunctionBegin;
  PetscCall(SgOptionsEList("-method", "Density matrix: dense diagonalisation (LAPACK) or the submatrix method", methods, 2, methods[im], &im, NULL));
  PetscCall(SgOptionsEList("-precision", "Submatrix factorisations: double, or single (LAPACK ssyevd, twice the speed) with a McWeeny refinement of the kept columns (kt 0 only)", precs, 2, precs[ip], &ip, NULL));
  PetscCall(SgOptionsEList("-overlap", "Non-orthogonal basis (CP2K matrices): submatrices of the pair (H, S), or of S^-1/2 H S^-1/2 as CP2K", overlaps, 2, overlaps[io], &io, NULL));
  PetscCall(SgOptionsEList("-sign", "Submatrix sign function: eigendecomposition (dsyevd) or Newton-Schulz (needs mu)", signs, 2, signs[is], &is, NULL));
  PetscCall(SgOptionsReal("-eps_filter", "Submatrix method: drop blocks of H and P with Frobenius norm below this", "eV or dimensionless", o->eps_filter, &o->eps_filter, NULL, 0, 1));
  PetscCall(SgOptionsInt("-pattern_its", "Submatrix method: pattern refinements (0 = pattern of filtered H, as CP2K)", o->pattern_its, &o->pattern_its, NULL, 0, 100));
  PetscCall(SgOptionsInt("-cluster", "Submatrix method: atoms per cluster of block columns sharing one submatrix", o->cluster, &o->cluster, NULL, 1, 100000));
  PetscCall(SgOptionsReal("-kt", "Electronic temperature k_B T (Fermi occupations); 0 = step", "eV", o->kT, &o->kT, NULL, 0, 10));
  PetscCall(SgOptionsReal("-nelec", "Number of electrons (negative: neutral, 4 per atom)", "electrons", o->nelec, &o->nelec, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-nelec_tol", "Allowed mismatch of the electron count, per atom (submatrix counts are approximate)", "electrons/atom", o->nelec_tol, &o->nelec_tol, NULL, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-mu", "Chemical potential for the Newton-Schulz sign method", "eV", o->mu, &o->mu, &o->mu_set, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsBool("-verbose", "Print submatrix pattern passes", o->verbose, &o->verbose, NULL));
  o->method = (SgTBMethod)im;
  o->sign   = (SgTBSign)is;
  o->precision = (SgTBPrecision)ip;
  o->overlap   = (SgTBOverlap)io;
  /* refused combinations, here so that they stop a run before it writes anything */
  PetscCheck(!(o->precision == SG_TB_SINGLE && o->method == SG_TB_DENSE), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "precision single is for the submatrix method (its McWeeny refinement of all columns would cost more than the double-precision diagonalisation): use precision double with method dense");
  PetscCheck(!(o->precision == SG_TB_SINGLE && (o->kT > 0 || o->sign == SG_TB_SIGN_NS)), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "precision single refines the columns by a McWeeny step, which needs step occupations and the eigendecomposition sign method: use kt 0 and sign eig, or precision double");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDMOptionsSetFromOptions(MPI_Comm comm, const char prefix[], SgTBDMOptions *o)
{
  PetscFunctionBegin;
  PetscOptionsBegin(comm, prefix, "Tight-binding density matrix", NULL);
  PetscCall(SgTBDMOptionsRead(PetscOptionsObject, o));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}
