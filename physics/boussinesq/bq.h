/* Private header of the Boussinesq (Rayleigh-Benard) solver: the solver's data and the functions its
   files share. Units and equations: see bq_solver.c and README.md.

   Representation. x is Fourier (FFTW), z is Chebyshev collocation on the n Gauss-Lobatto points
   z_j = Lz (1 - cos(pi j / (n-1))) / 2, j = 0 (bottom wall) .. n-1 (top wall). A field f(x, z) is
   held as coefficients C_m(z_j), m = 0 .. nk-1 (nk = nx/2, the Nyquist mode is dropped), with
   f = C_0 + 2 Re sum_{m>=1} C_m exp(i k_m x), k_m = 2 pi m / Lx. An array of such coefficients is a
   column-major n x (2 nk) real matrix: column 2m is Re C_m, column 2m+1 is Im C_m, so that
   z-derivatives of all modes are one matrix product and a mode's real and imaginary parts are the
   two right-hand sides of one real LAPACK solve (every z-operator is real).

   Variables: the streamfunction psi (u = -dpsi/dz, w = dpsi/dx, so div u = 0 identically) for
   m >= 1, the mean flow u0(z) (the m = 0 part of u, which psi cannot carry), and the buoyancy b. */
#pragma once
#include <complex.h> /* before fftw3.h: fftw_complex is then double complex */
#include <fftw3.h>
#include <petscdmda.h>
#include <petscblaslapack.h>
#include "sgsolverimpl.h"

#define BQ_MAX_STAGES 5

typedef enum { BQ_NOSLIP, BQ_FREESLIP } BqWalls;

/* IMEX Runge-Kutta tableau in Dedalus' form M dX/dt + L X = F(X): stage i solves
   (M + dt H_ii L) X_i = M X_0 + dt sum_{j<i} (A_ij F(X_j) - H_ij L X_j). */
typedef struct {
  const char *name;
  PetscInt    stages, order;
  PetscReal   A[BQ_MAX_STAGES][BQ_MAX_STAGES], H[BQ_MAX_STAGES][BQ_MAX_STAGES], c[BQ_MAX_STAGES];
} BqTableau;

typedef struct {
  /* options */
  PetscReal Ra, Pr, Lx, Lz, cfl, max_dt, dt_threshold, noise;
  PetscInt  nx, nz, scheme, walls, out_nz, seed;
  PetscBool conductive;
  /* derived */
  PetscReal    nu, kappa;
  PetscInt     n, nk, mx, ncol;      /* z points, kept x modes, padded x points, 2 nk */
  BqTableau    tab;
  PetscReal   *z, *wq, *D, *D2, *D3; /* nodes, Clenshaw-Curtis weights, D, D^2, D^3 (n x n col-major) */
  PetscReal   *Iout;                 /* out_nz x n interpolation to the uniform cell-centred z grid */
  /* MPI: the state is replicated; z rows [j0, j1) transform on this rank, modes [m0, m1) solve here */
  MPI_Comm     comm;
  PetscMPIInt  size, rank;
  PetscInt     j0, j1, m0, m1;
  PetscMPIInt *rcount, *rdispl, *mcount, *mdispl;
  /* implicit operators of the own modes, LU-factored for dt_fact (0: not factored) */
  PetscReal    dt_fact, hfact;
  PetscReal   *Lb, *Lp, *Lu;         /* LU factors: b (n x n per mode), psi (per mode), u0 */
  PetscBLASInt *pb, *pp, *pu;        /* pivots */
  PetscReal   *Pp;                   /* LU of the pressure Poisson operator per own mode (lazy) */
  PetscBLASInt *ppiv;
  /* state and stages */
  PetscReal   *psi, *b, *u0;
  PetscReal   *Fp[BQ_MAX_STAGES], *Fb[BQ_MAX_STAGES], *Fu[BQ_MAX_STAGES];
  PetscReal   *LXp[BQ_MAX_STAGES], *LXb[BQ_MAX_STAGES], *LXu[BQ_MAX_STAGES];
  PetscReal   *MXp, *MXb, *MXu;      /* M X_0 of the step */
  /* transforms: one 1-D plan per direction, executed row by row (identical arithmetic on any
     rank count); aligned row buffers */
  fftw_plan      c2r_pad, r2c_pad, c2r_out;
  fftw_complex  *cbuf;
  double        *rbuf;
  PetscReal     *work[10];           /* n x ncol scratch arrays */
  PetscReal     *rows;               /* row-major nonlinear terms of all rows (n x 3 ncol) */
  /* log events: transforms (FFTs and products of the advection rows), z-derivative products,
     gathers, implicit solves, factorisations, M X / L X */
  PetscLogEvent ev_fft, ev_dz, ev_gather, ev_solve, ev_factor, ev_lin;
  /* time step control */
  PetscReal dt_held;
  PetscInt  nsteps, nfactor;
  /* diagnostics */
  PetscInt  d_nub, d_nut, d_nuv, d_ke, d_epsu, d_epsb, d_div, d_nueu, d_nueb, d_bmid;
  PetscReal last[16];
  /* output */
  DM  da;
  Vec vout;
} Bq;

/* k_m = 2 pi m / Lx */
static inline PetscReal Wavenumber(const Bq *bq, PetscInt m) { return 2 * PETSC_PI * m / bq->Lx; }

/* bq_cheb.c: Chebyshev-Gauss-Lobatto grid, differentiation, quadrature, interpolation */
PETSC_INTERN PetscErrorCode SgBqChebSetUp(Bq *);
/* bq_imex.c */
PETSC_INTERN PetscErrorCode SgBqTableauGet(PetscInt scheme, BqTableau *);
PETSC_INTERN const char *const SgBqSchemes[];
/* bq_modes.c: the per-mode z-operators, their factorisation for a dt, solves */
PETSC_INTERN PetscErrorCode SgBqFactor(Bq *, PetscReal dt_h);
PETSC_INTERN PetscErrorCode SgBqApplyML(Bq *, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, PetscReal *Mp, PetscReal *Mb, PetscReal *Mu, PetscReal *Lp, PetscReal *Lb, PetscReal *Lu);
PETSC_INTERN PetscErrorCode SgBqSolve(Bq *, PetscReal *rp, PetscReal *rb, PetscReal *ru);
PETSC_INTERN PetscErrorCode SgBqPressure(Bq *, const PetscReal *Nu, const PetscReal *Nw, PetscReal *p);
/* bq_transform.c: spectral <-> physical rows, the dealiased nonlinear terms */
PETSC_INTERN PetscErrorCode SgBqDz(Bq *, PetscInt order, const PetscReal *f, PetscReal *df, PetscInt j0, PetscInt j1);
PETSC_INTERN PetscErrorCode SgBqIkx(Bq *, const PetscReal *f, PetscReal *g, PetscInt j0, PetscInt j1);
PETSC_INTERN PetscErrorCode SgBqNonlinear(Bq *, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, PetscReal *Fp, PetscReal *Fb, PetscReal *Fu);
PETSC_INTERN PetscErrorCode SgBqMomentumAdvection(Bq *, PetscReal *Nu, PetscReal *Nw);
PETSC_INTERN PetscErrorCode SgBqMaxRates(Bq *, PetscReal *adv, PetscReal *N2);
PETSC_INTERN PetscErrorCode SgBqVelocity(Bq *, PetscInt j0, PetscInt j1, PetscReal *U, PetscReal *W, PetscReal *Uz, PetscReal *Wz);
PETSC_INTERN PetscErrorCode SgBqGatherModes(Bq *, PetscReal *a);
PETSC_INTERN PetscErrorCode SgBqToPhysicalRow(Bq *, const PetscReal *f, PetscInt ld, PetscInt j, PetscReal shift, PetscBool padded, double *out);
/* bq_diag.c */
PETSC_INTERN PetscErrorCode SgBqDiagnose(SgSolver, PetscReal, PetscReal[]);
PETSC_INTERN PetscErrorCode SgBqWriteFields(SgSolver, SgOutput);
