/* ks: the Kuramoto-Sivashinsky equation u_t + u u_x + u_xx + u_xxxx = 0 on a periodic domain [0, L),
   pseudo-spectral in space (FFTW r2c/c2r, 2/3-rule dealiasing of u u_x), ETDRK4 in time (Kassam and
   Trefethen 2005, SIAM J. Sci. Comput. 26:1214). Nondimensional units throughout. The 1-D state is
   small, so every rank holds and advances the whole of it identically (no communication); the
   distributed Vec exists only to write fields through io/. */
#pragma once
#include <complex.h>
#include <fftw3.h>
#include <petscdmda.h>
#include "sgsolverimpl.h"

typedef double _Complex KsCplx;

typedef struct {
  PetscInt  N, nk;       /* grid points (even), Fourier modes of r2c: N/2 + 1 */
  PetscReal h;           /* step the coefficients below were computed for (0: none yet) */
  KsCplx   *E, *E2, *Q, *f1, *f2, *f3;
  KsCplx   *ik;          /* -i k / 2 times the 2/3 mask: the dealiased derivative of u^2 / 2, negated */
  PetscReal *lin;        /* k^2 - k^4 */
  KsCplx   *Nv, *Na, *Nb, *Nc, *a, *b, *c, *tk; /* stage scratch */
  double   *x;           /* physical scratch */
  fftw_plan fwd, bwd;
} KsEtd;

PETSC_INTERN PetscErrorCode KsEtdCreate(PetscInt N, PetscReal L, KsEtd **);
PETSC_INTERN PetscErrorCode KsEtdStep(KsEtd *, KsCplx *v, PetscReal h);
PETSC_INTERN PetscErrorCode KsEtdToPhysical(KsEtd *, const KsCplx *v, double *u);
PETSC_INTERN PetscErrorCode KsEtdDestroy(KsEtd **);
