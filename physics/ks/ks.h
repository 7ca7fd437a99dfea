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
#include "sgcheckpoint.h"
#include "sgoutput.h"

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

typedef struct _n_KsAdvance KsAdvance; /* ks_advance.c: the field.advance slot */

/* the solver (ks_solver.c) */
typedef struct {
  PetscInt   N, lyap_every, seed;
  PetscReal  L, dt, amplitude, offset, eps, lyap_start;
  PetscBool  lyap;
  KsEtd     *etd;
  KsCplx    *v, *w; /* the state and the perturbed trajectory, as r2c transforms */
  double    *u;
  PetscReal  st[4]; /* steps taken, sum of logs, time spanned by the sum, time of the last step */
  DM         da;
  Vec        U;
  PetscInt   d_mean, d_energy, d_max, d_lyap;
  KsAdvance *adv;
} Ks;

/* one ETDRK4 step of the state (and of the Lyapunov pair) from t to t + dt */
PETSC_INTERN PetscErrorCode KsStepOnce(SgSolver, PetscReal t, PetscReal dt);

/* ks_advance.c: the field.advance slot (docs/ks.md) */
PETSC_INTERN PetscErrorCode KsAdvanceSetFromOptions(SgSolver, PetscOptionItems *);
PETSC_INTERN PetscErrorCode KsAdvanceSetUp(SgSolver);
PETSC_INTERN PetscBool      KsAdvanceOn(const Ks *);
PETSC_INTERN PetscReal      KsAdvanceSegment(const Ks *);
PETSC_INTERN PetscErrorCode KsAdvanceStep(SgSolver, PetscReal t, PetscReal dt);
PETSC_INTERN PetscErrorCode KsAdvanceCheckpoint(SgSolver, SgCheckpoint);
PETSC_INTERN PetscErrorCode KsAdvanceReport(SgSolver, SgOutput);
PETSC_INTERN PetscErrorCode KsAdvanceDestroy(Ks *);
