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
#include "sgfield.h"

#define BQ_MAX_STAGES 5
#define SG_BQ_NCH     4 /* the fields p, b, u, w, in this order (SgBqChannels) */

typedef struct _n_BqAdvance  BqAdvance;  /* bq_advance.c: the field.advance slot */
typedef struct _n_BqSuperres BqSuperres; /* bq_superres.c: the field.superres slot */

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
  fftw_plan      c2r_pad, r2c_pad, c2r_out, r2c_out;
  fftw_complex  *cbuf;
  double        *rbuf;
  PetscReal     *work[10];           /* n x ncol scratch arrays */
  PetscReal     *rows;               /* row-major nonlinear terms of all rows (n x 3 ncol) */
  PetscReal     *fc[SG_BQ_NCH];      /* coefficient arrays of p, b, u, w for export (n x ncol each) */
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
  /* the field slots (NULL when the run does not use them) */
  BqAdvance  *adv;
  BqSuperres *sr;
} Bq;

/* Evaluation of coefficient arrays on a tensor grid (zq[nz], xq[nx]) of any points: bq_state.c */
typedef struct {
  PetscInt   nz, nx;
  PetscReal *Iz;      /* nz x n barycentric interpolation */
  PetscReal *cs, *sn; /* nx x nk: (m ? 2 : 1) cos / sin (k_m x_i) */
  PetscReal *g;       /* scratch nz x ncol */
} SgBqGridEval;

/* k_m = 2 pi m / Lx */
static inline PetscReal Wavenumber(const Bq *bq, PetscInt m) { return 2 * PETSC_PI * m / bq->Lx; }

/* bq_core.c: set-up from the options, CFL step, one IMEX step, destruction (of the data, not bq) */
PETSC_INTERN PetscErrorCode SgBqSetUpData(Bq *, MPI_Comm);
PETSC_INTERN PetscErrorCode SgBqRegisterEvents(Bq *);
PETSC_INTERN PetscErrorCode SgBqTimeStepData(Bq *, PetscReal *dt);
PETSC_INTERN PetscErrorCode SgBqStepData(Bq *, PetscReal dt);
PETSC_INTERN PetscErrorCode SgBqDestroyData(Bq *);
/* bq_cheb.c: Chebyshev-Gauss-Lobatto grid, differentiation, quadrature, interpolation */
PETSC_INTERN PetscErrorCode SgBqChebSetUp(Bq *);
PETSC_INTERN void           SgBqChebInterpMatrix(const Bq *, PetscInt m, const PetscReal zo[], PetscReal *Imat);
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
/* bq_state.c: the state as fields p, b, u, w and back (see the file's comment) */
PETSC_INTERN const char *const SgBqChannels[SG_BQ_NCH];
PETSC_INTERN PetscErrorCode SgBqFieldCoefficients(Bq *, PetscReal *c[SG_BQ_NCH]);
PETSC_INTERN PetscErrorCode SgBqGridEvalCreate(Bq *, PetscInt nz, const PetscReal zq[], PetscInt nx, const PetscReal xq[], SgBqGridEval *);
PETSC_INTERN PetscErrorCode SgBqGridEvalApply(Bq *, SgBqGridEval *, const PetscReal *f, PetscInt j0, PetscInt j1, PetscReal *out);
PETSC_INTERN PetscErrorCode SgBqGridEvalDestroy(SgBqGridEval *);
PETSC_INTERN PetscReal      SgBqEvalPoint(const Bq *, const PetscReal *f, PetscReal z, PetscReal x, PetscReal *Irow);
/* the native grid: v[4][n][nx] at x_i = i Lx / nx, z_j the Chebyshev nodes */
PETSC_INTERN PetscErrorCode SgBqExportNative(Bq *, PetscReal *v);
PETSC_INTERN PetscErrorCode SgBqImportNative(Bq *, const PetscReal *v);
/* the written grid: v[4][out_nz][nx] at x_i = (i + 1/2) Lx / nx, z_k = (k + 1/2) Lz / out_nz (import: O(h^6) in z) */
PETSC_INTERN PetscErrorCode SgBqExportOutput(Bq *, PetscReal *v);
PETSC_INTERN PetscErrorCode SgBqImportOutput(Bq *, const PetscReal *v);
/* the state (psi, b, u0 on from's grid) onto to's grid */
PETSC_INTERN PetscErrorCode SgBqInterpolateState(const Bq *from, const PetscReal *psi, const PetscReal *b, const PetscReal *u0, Bq *to);
/* bq_slot.c: what the field slots share */
PETSC_INTERN void           SgBqProviderInfo(Bq *, MPI_Comm, PetscOptionItems *, PetscReal param[2], SgFieldProviderInfo *);
PETSC_INTERN PetscErrorCode SgBqAdvanceTo(Bq *, PetscReal *t, PetscReal target);
PETSC_INTERN PetscErrorCode SgBqShiftOut(PetscReal *a, PetscInt n, PetscInt w);
/* bq_advance.c: the field.advance slot (docs/boussinesq.md) */
PETSC_INTERN PetscErrorCode SgBqAdvanceSetFromOptions(SgSolver, PetscOptionItems *);
PETSC_INTERN PetscErrorCode SgBqAdvanceSetUp(SgSolver);
PETSC_INTERN PetscErrorCode SgBqAdvanceStep(SgSolver, PetscReal t, PetscReal dt);
PETSC_INTERN PetscErrorCode SgBqAdvanceCheckpoint(SgSolver, SgCheckpoint);
PETSC_INTERN PetscErrorCode SgBqAdvanceReport(SgSolver, SgOutput);
PETSC_INTERN PetscErrorCode SgBqAdvanceDestroy(Bq *);
PETSC_INTERN PetscBool      SgBqAdvanceOn(const Bq *);
PETSC_INTERN PetscReal      SgBqAdvanceSegment(const Bq *); /* the driver's step: K advance_dt */
/* bq_superres.c: the field.superres slot (docs/boussinesq.md) */
PETSC_INTERN PetscBool      SgBqSuperresOn(const Bq *);
PETSC_INTERN PetscErrorCode SgBqSuperresSetFromOptions(SgSolver, PetscOptionItems *);
PETSC_INTERN PetscErrorCode SgBqSuperresSetUp(SgSolver);
PETSC_INTERN PetscErrorCode SgBqSuperresTimeStep(Bq *, PetscReal t, PetscReal *dt);
PETSC_INTERN PetscErrorCode SgBqSuperresAfterStep(Bq *, PetscReal t);
PETSC_INTERN PetscErrorCode SgBqSuperresWriteFields(Bq *, SgOutput);
PETSC_INTERN void           SgBqSuperresDiagnose(const Bq *, PetscReal v[]);
PETSC_INTERN PetscErrorCode SgBqSuperresCheckpoint(SgSolver, SgCheckpoint);
PETSC_INTERN PetscErrorCode SgBqSuperresReport(SgSolver, SgOutput);
PETSC_INTERN PetscErrorCode SgBqSuperresDestroy(Bq *);
/* bq_diag.c */
PETSC_INTERN PetscErrorCode SgBqDiagnose(SgSolver, PetscReal, PetscReal[]);
PETSC_INTERN PetscErrorCode SgBqWriteFields(SgSolver, SgOutput);
