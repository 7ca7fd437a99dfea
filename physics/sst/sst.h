/* Private header of the sea-surface-temperature solver (physics/sst): the data and the functions its
   files share. Equations, units and discretisation: sst_solver.c and README.md.

   Grid. nlon x nlat cells of a regular longitude-latitude grid on a sphere of radius a: cell (i, j)
   spans longitudes [i, i+1) dlon and latitudes [-90 + j dlat, -90 + (j+1) dlat] (degrees); j = 0 is
   the southernmost row. A DMDA (periodic in longitude, ghosted in latitude) distributes the cells;
   the pole faces have zero length and carry no flux.

   Flow. A streamfunction psi given at cell corners defines the volume flux through every face
   (east face: -(psi_NE - psi_SE), north face: psi_NE - psi_NW), so the discrete divergence of every
   cell is zero identically, and psi = 0 at every corner that touches land, so no face between ocean
   and land carries flux. Both hold for any psi: the analytic psi is tapered to zero near land only to
   keep the coastal currents smooth. */
#pragma once
#include <petscdmda.h>
#include "sgsolverimpl.h"

#define SST_MAX_WEATHER 64

typedef struct _n_SstAdvance SstAdvance; /* the field.advance slot (sst_advance.c) */

typedef enum { SST_LAND_CONTINENTS, SST_LAND_CAPS, SST_LAND_NONE } SstLand;
typedef enum { SST_FLOW_GYRES, SST_FLOW_SOLID, SST_FLOW_NONE } SstFlow;
typedef enum { SST_INIT_EQUILIBRIUM, SST_INIT_HARMONIC } SstInit;
typedef enum { SST_ENSO_OSCILLATOR, SST_ENSO_RECHARGE } SstEnsoModel;

/* the nonlinear recharge oscillator of the ENSO index (sst_enso.c): rates per month (year / 12) */
typedef struct {
  PetscReal R0, Ra, peak, F1, F2, eps, bT, cT, bh, sT, sH, B, spinup, T0; /* peak in days, spinup in years, T0 in K */
} SstRecharge;

typedef struct {
  /* options */
  PetscInt  nlon, nlat, land, flow, init, nweather, seed, harmonic_m;
  PetscReal radius, kappa, speed, tau, relax_season, cfl, year, t_polar, t_equator, season_amp, season_peak;
  PetscReal w_amp, w_time, e_amp, e_period, e_damp, amplitude, cap_lat;
  PetscInt  enso_model;
  SstRecharge ro;
  /* geometry: global latitude rows */
  PetscReal dlon, dlat;          /* radians */
  PetscReal *area;               /* [nlat] cell area, km^2 */
  PetscReal *dx_e;               /* [nlat] diffusive conductance kappa L / d of an east face, km^2/day */
  PetscReal *dy_n;               /* [nlat] the same for the north face of row j (0 for j = nlat-1) */
  /* local faces (owned cells + the west/south neighbour's face), km^2/day */
  PetscInt   xs, ys, xm, ym;
  PetscReal *U;                  /* [(xm+1) ym] east-face volume flux of cells i = xs-1 .. xs+xm-1 */
  PetscReal *V;                  /* [xm (ym+1)] north-face volume flux of rows j = ys-1 .. ys+ym-1 */
  PetscReal *Ge, *Gn;            /* the same layout: diffusive conductance, 0 across closed faces */
  PetscBool *ocean;              /* [xm ym] owned cells */
  PetscReal *wmode;              /* [nweather xm ym] weather patterns at owned cells */
  PetscReal *enso;               /* [xm ym] ENSO forcing pattern at owned cells */
  PetscReal *forcing;            /* [xm ym] weather + ENSO forcing of the current step, degC/day */
  DM         da;
  Vec        T, Tl, R, T1, T2;   /* state, ghosted copy, stage right-hand side, RK stages */
  /* stochastic state (replicated; drawn from (seed, step)) */
  PetscReal  a[SST_MAX_WEATHER]; /* weather amplitudes, Ornstein-Uhlenbeck, unit variance */
  PetscReal  ex, ey;             /* ENSO index: the linear oscillator (unit variance per component) or T (K), h of the recharge oscillator */
  PetscInt   nsteps;
  /* heat budget: integral of the sources since t = 0, and the heat at t = 0 (degC km^2) */
  PetscReal  sources, heat0, absheat0, last_t;
  /* the exact solution, when one exists (harmonic initial state, no land, no forcing) */
  PetscBool  exact;
  PetscInt   d_mean, d_heat, d_budget, d_enso, d_err, d_amp;
  SstAdvance *adv;
} Sst;

/* sst_grid.c: geometry, land, flow */
PETSC_INTERN PetscBool      SgSstIsLand(const Sst *, PetscInt i, PetscInt j);
PETSC_INTERN PetscReal      SgSstLat(const Sst *, PetscReal j); /* radians at (fractional) row j */
PETSC_INTERN PetscErrorCode SgSstGridSetUp(Sst *);
/* max over owned ocean cells of |discrete divergence| / area, 1/day (zero up to round-off) */
PETSC_INTERN PetscErrorCode SgSstMaxDivergence(Sst *, MPI_Comm, PetscReal *);
/* sst_forcing.c: equilibrium temperature, stochastic weather and ENSO */
PETSC_INTERN PetscReal      SgSstTeq(const Sst *, PetscReal lat, PetscReal t);
PETSC_INTERN PetscErrorCode SgSstForcingSetUp(Sst *);
PETSC_INTERN PetscErrorCode SgSstForcingEvaluate(Sst *);
PETSC_INTERN PetscErrorCode SgSstForcingAdvance(Sst *, PetscReal t, PetscReal dt);
PETSC_INTERN PetscReal      SgSstNormal(PetscInt seed, uint64_t stream, uint64_t k);
/* sst_enso.c: the ENSO index */
PETSC_INTERN const char *const SgSstEnsoModels[];
PETSC_INTERN PetscErrorCode SgSstEnsoSetUp(Sst *);
PETSC_INTERN PetscErrorCode SgSstEnsoAdvance(Sst *, PetscReal t, PetscReal dt, uint64_t stream);
/* sst_diag.c: diagnostics and the exact solution */
PETSC_INTERN PetscErrorCode SgSstExact(const Sst *, PetscInt i, PetscInt j, PetscReal t, PetscReal *v, PetscReal *shape);
/* sum of area x T over the ocean, the mean, and the sum of area x |T| (the scale of round-off) */
PETSC_INTERN PetscErrorCode SgSstHeat(Sst *, Vec, MPI_Comm, PetscReal *heat, PetscReal *mean, PetscReal *absheat);
PETSC_INTERN PetscErrorCode SgSstDiagnose(SgSolver, PetscReal, PetscReal[]);
/* sst_solver.c: one SSP-RK3 step, and the largest stable step */
PETSC_INTERN PetscErrorCode SgSstStep(SgSolver, PetscReal t, PetscReal dt);
PETSC_INTERN PetscErrorCode SgSstStableStep(SgSolver, PetscReal *dt);
/* sst_advance.c: the field.advance slot */
PETSC_INTERN PetscErrorCode SgSstAdvanceSetFromOptions(SgSolver, PetscOptionItems *);
PETSC_INTERN PetscErrorCode SgSstAdvanceSetUp(SgSolver);
PETSC_INTERN PetscErrorCode SgSstAdvanceStep(SgSolver, PetscReal t, PetscReal dt);
PETSC_INTERN PetscErrorCode SgSstAdvanceCheckpoint(SgSolver, SgCheckpoint);
PETSC_INTERN PetscErrorCode SgSstAdvanceReport(SgSolver, SgOutput);
PETSC_INTERN PetscErrorCode SgSstAdvanceDestroy(Sst *);
PETSC_INTERN PetscBool      SgSstAdvanceOn(const Sst *);
PETSC_INTERN PetscReal      SgSstAdvanceSegment(const Sst *);
