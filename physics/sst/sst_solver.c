/* sst: a forced advection-diffusion model of sea-surface temperature on a longitude-latitude grid,
   the data source of the POD-LSTM surrogate (the synthetic counterpart of the NOAA OI SST weekly data
   of Maulik et al., SC20).

     dT/dt + div(u T) = div(kappa grad T) + r(lat, t) (Teq(lat, t) - T) + F_weather + F_enso   (ocean)

   on a sphere of radius a, T fixed at 0 on land (no flux through coasts).
   Units: length km, time days, temperature degC; kappa km^2/day, speeds km/day.
   - u: a steady divergence-free flow from a streamfunction (zonal jets closed into gyres by the
     continents), or rigid rotation, or none (sst.h: why it is divergence-free cell by cell).
   - Teq: warm equator, cold poles, a seasonal swing antisymmetric about the equator (period `year`);
     r = (1 + relax_season sin(lat) cos(2 pi (t - season_peak)/year)) / tau: the mixed layer is shallow
     in summer (anomalies damp fast) and deep in winter (they persist), as in the real ocean.
   - F_weather: nweather large-scale patterns with Ornstein-Uhlenbeck amplitudes (5-day memory);
     F_enso: an equatorial eastern-Pacific pattern times an ENSO index: a noise-driven damped linear
     oscillator (4 years), or the nonlinear recharge oscillator (sst_enso.c).
   Finite volumes, second order: centred advective fluxes, two-point diffusive fluxes, each face's
   flux computed once from the same operands on both sides, so heat is conserved to round-off; the
   change of the total heat equals the integral of the sources (the budget diagnostic checks it).
   Time: SSP-RK3 (Shu-Osher), the stochastic forcing held over a step. */
#include "sst.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"
#include "sgssprk.h"

static const char *const Lands[] = {"continents", "caps", "none"};
static const char *const Flows[] = {"gyres", "solid", "none"};
static const char *const Inits[] = {"equilibrium", "harmonic"};

static PetscErrorCode SstSetFromOptions(SgSolver sv, PetscOptionItems *PetscOptionsObject)
{
  Sst      *s    = (Sst *)sv->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)sv);
  PetscInt  cells[2] = {s->nlon, s->nlat}, n2 = 2;
  PetscBool set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "sst: forced advection-diffusion sea-surface temperature (km, days, degC)");
  PetscCall(SgOptionsIntArray("-cells", "Grid [nlon, nlat]: cells in longitude and latitude (1 degree: 360, 180)", cells, &n2, &set, 4, 1 << 16));
  PetscCheck(!set || n2 == 2, comm, PETSC_ERR_USER_INPUT, "-sst_cells needs two entries [nlon, nlat], got %" PetscInt_FMT, n2);
  PetscCall(SgOptionsReal("-radius", "Radius of the sphere", "km", s->radius, &s->radius, NULL, 1, 1e6));
  PetscCall(SgOptionsReal("-kappa", "Horizontal eddy diffusivity (130 km^2/day = 1500 m^2/s)", "km^2/day", s->kappa, &s->kappa, NULL, 0, 1e8));
  PetscCall(SgOptionsEList("-flow", "Steady flow: gyres (zonal jets closed by the coasts), solid (rigid rotation u = speed cos(lat)), none", Flows, 3, Flows[s->flow], &s->flow, NULL));
  PetscCall(SgOptionsReal("-speed", "Velocity scale of the flow", "km/day", s->speed, &s->speed, NULL, 0, 1e6));
  PetscCall(SgOptionsEList("-land", "Land mask: continents (idealised Americas, Africa, Eurasia, Australia, Greenland and polar caps), caps (polar caps only), none (an ocean planet)", Lands, 3, Lands[s->land], &s->land, NULL));
  PetscCall(SgOptionsReal("-cap_lat", "Latitude beyond which the polar caps (sea ice) are land", "degrees", s->cap_lat, &s->cap_lat, NULL, 10, 90));
  PetscCall(SgOptionsReal("-relax_time", "Relaxation time of T towards the equilibrium temperature (0: no relaxation)", "days", s->tau, &s->tau, NULL, 0, 1e9));
  PetscCall(SgOptionsReal("-relax_season", "Seasonal modulation of the relaxation rate: (1 + relax_season sin(lat) cos(2 pi (t - season_peak)/year)) / relax_time (shallow summer, deep winter mixed layers)", "", s->relax_season, &s->relax_season, NULL, 0, 0.99));
  PetscCall(SgOptionsReal("-t_equator", "Annual-mean equilibrium temperature at the equator", "degC", s->t_equator, &s->t_equator, NULL, -100, 100));
  PetscCall(SgOptionsReal("-t_polar", "Annual-mean equilibrium temperature at the poles", "degC", s->t_polar, &s->t_polar, NULL, -100, 100));
  PetscCall(SgOptionsReal("-season_amp", "Seasonal amplitude of the equilibrium temperature, times sin(lat)", "degC", s->season_amp, &s->season_amp, NULL, 0, 100));
  PetscCall(SgOptionsReal("-season_peak", "Day of the year on which the northern equilibrium temperature peaks", "days", s->season_peak, &s->season_peak, NULL, 0, 1e4));
  PetscCall(SgOptionsReal("-year", "Length of the seasonal cycle", "days", s->year, &s->year, NULL, 1, 1e6));
  PetscCall(SgOptionsInt("-weather_modes", "Number of large-scale stochastic weather patterns", s->nweather, &s->nweather, NULL, 0, SST_MAX_WEATHER));
  PetscCall(SgOptionsReal("-weather_amp", "RMS heating of the weather forcing", "degC/day", s->w_amp, &s->w_amp, NULL, 0, 1e3));
  PetscCall(SgOptionsReal("-weather_time", "Correlation time of the weather amplitudes", "days", s->w_time, &s->w_time, NULL, 1e-3, 1e6));
  PetscCall(SgOptionsEList("-enso", "ENSO index: oscillator (linear, noise-driven damped rotation) or recharge (nonlinear recharge oscillator: seasonal growth rate, El Nino/La Nina asymmetry, state-dependent noise)", SgSstEnsoModels, 2, SgSstEnsoModels[s->enso_model], &s->enso_model, NULL));
  PetscCall(SgOptionsReal("-enso_amp", "Heating of the ENSO pattern per unit of the index (oscillator: unit variance; recharge: 1 K of T)", "degC/day", s->e_amp, &s->e_amp, NULL, 0, 1e3));
  PetscCall(SgOptionsReal("-enso_period", "oscillator: period of the ENSO oscillator", "days", s->e_period, &s->e_period, NULL, 1, 1e7));
  PetscCall(SgOptionsReal("-enso_damp", "oscillator: damping time of the ENSO oscillator", "days", s->e_damp, &s->e_damp, NULL, 1, 1e7));
  PetscCall(SgOptionsReal("-enso_growth", "recharge: annual-mean growth rate R0 of T", "1/month", s->ro.R0, &s->ro.R0, NULL, -10, 10));
  PetscCall(SgOptionsReal("-enso_growth_season", "recharge: seasonal amplitude Ra of the growth rate, R = R0 + Ra cos(2 pi (t - enso_growth_peak) / year) (phase locking)", "1/month", s->ro.Ra, &s->ro.Ra, NULL, 0, 10));
  PetscCall(SgOptionsReal("-enso_growth_peak", "recharge: day of the year on which the growth rate peaks (the variance of T peaks about a season later)", "days", s->ro.peak, &s->ro.peak, NULL, 0, 1e4));
  PetscCall(SgOptionsReal("-enso_f1", "recharge: F1, the effect of the heat content h on T", "1/month", s->ro.F1, &s->ro.F1, NULL, 0, 10));
  PetscCall(SgOptionsReal("-enso_f2", "recharge: F2, the discharge of h by T", "1/month", s->ro.F2, &s->ro.F2, NULL, 0, 10));
  PetscCall(SgOptionsReal("-enso_eps", "recharge: damping rate eps of h", "1/month", s->ro.eps, &s->ro.eps, NULL, 0, 10));
  PetscCall(SgOptionsReal("-enso_bt", "recharge: quadratic term bT T^2 of dT/dt (El Nino stronger than La Nina)", "1/(K month)", s->ro.bT, &s->ro.bT, NULL, -10, 10));
  PetscCall(SgOptionsReal("-enso_ct", "recharge: cubic damping cT T^3 of dT/dt", "1/(K^2 month)", s->ro.cT, &s->ro.cT, NULL, 0, 10));
  PetscCall(SgOptionsReal("-enso_bh", "recharge: quadratic discharge bh T^2 of dh/dt", "1/(K month)", s->ro.bh, &s->ro.bh, NULL, -10, 10));
  PetscCall(SgOptionsReal("-enso_sigma_t", "recharge: noise amplitude of T", "K/month^(1/2)", s->ro.sT, &s->ro.sT, NULL, 0, 100));
  PetscCall(SgOptionsReal("-enso_sigma_h", "recharge: noise amplitude of h", "1/month^(1/2)", s->ro.sH, &s->ro.sH, NULL, 0, 100));
  PetscCall(SgOptionsReal("-enso_mult", "recharge: state-dependent noise, sigma_T (1 + B T) for T > 0 (westerly wind bursts in El Nino)", "1/K", s->ro.B, &s->ro.B, NULL, 0, 100));
  PetscCall(SgOptionsReal("-enso_spinup", "recharge: years the oscillator is spun up from rest before t = 0", "years", s->ro.spinup, &s->ro.spinup, NULL, 0, 1000));
  PetscCall(SgOptionsReal("-enso_init", "recharge: added to T at t = 0, after the spin-up (with no noise and no spin-up: a deterministic trajectory)", "K", s->ro.T0, &s->ro.T0, NULL, -100, 100));
  PetscCall(SgOptionsInt("-seed", "Seed of the weather patterns and of all noise (ensembles vary it)", s->seed, &s->seed, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsEList("-init", "Initial state: equilibrium (Teq at t = 0), harmonic (amplitude Y with Y = sin(lat) for harmonic_m 0, cos(m lon) cos^m(lat) otherwise: spherical harmonics, for tests)", Inits, 2, Inits[s->init], &s->init, NULL));
  PetscCall(SgOptionsInt("-harmonic_m", "Zonal wave number of the harmonic initial state", s->harmonic_m, &s->harmonic_m, NULL, 0, 64));
  PetscCall(SgOptionsReal("-amplitude", "Amplitude of the harmonic initial state", "degC", s->amplitude, &s->amplitude, NULL, -1e6, 1e6));
  PetscCall(SgOptionsReal("-cfl", "Fraction of the SSP-RK3 stability bound sqrt(3) / max(Gershgorin radius) used as the step", "", s->cfl, &s->cfl, NULL, PETSC_SMALL, 1));
  PetscCall(SgSstAdvanceSetFromOptions(sv, PetscOptionsObject));
  PetscOptionsHeadEnd();
  s->nlon = cells[0];
  s->nlat = cells[1];
  PetscCheck(2 * s->harmonic_m < s->nlon, comm, PETSC_ERR_USER_INPUT, "-sst_harmonic_m %" PetscInt_FMT " is not resolved by %" PetscInt_FMT " longitudes (need 2 m < nlon)", s->harmonic_m, s->nlon);
  PetscCall(SgCheckCount(comm, "-sst_cells", "grid cells", (PetscReal)s->nlon * s->nlat, (8 + s->nweather) * sizeof(PetscReal)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y(lon, lat) of the harmonic initial state and its degree l (eigenvalue -l(l+1)/a^2 of the Laplacian) */
static PetscReal Harmonic(const Sst *s, PetscReal lon, PetscReal lat)
{
  return s->harmonic_m ? PetscCosReal(s->harmonic_m * lon) * PetscPowRealInt(PetscCosReal(lat), s->harmonic_m) : PetscSinReal(lat);
}

/* the exact solution at cell (i, j) and time t, and the shape it decays from (amplitude x Y carried
   by the rigid rotation): diffusion multiplies the harmonic by exp(-l(l+1) kappa t / a^2), the
   rotation shifts its longitude by omega t, and the two commute */
PetscErrorCode SgSstExact(const Sst *s, PetscInt i, PetscInt j, PetscReal t, PetscReal *v, PetscReal *shape)
{
  PetscReal l = PetscMax(1, s->harmonic_m), omega = s->flow == SST_FLOW_SOLID ? s->speed / s->radius : 0;
  PetscFunctionBegin;
  *shape = s->amplitude * Harmonic(s, (i + 0.5) * s->dlon - omega * t, SgSstLat(s, j + 0.5));
  *v     = PetscExpReal(-l * (l + 1) * s->kappa * t / PetscSqr(s->radius)) * *shape;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SstSetUp(SgSolver sv)
{
  Sst        *s    = (Sst *)sv->data;
  MPI_Comm    comm = PetscObjectComm((PetscObject)sv);
  PetscScalar **T;
  PetscReal   mean;

  PetscFunctionBegin;
  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_GHOSTED, DMDA_STENCIL_STAR, s->nlon, s->nlat, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &s->da));
  PetscCall(DMSetUp(s->da));
  PetscCall(DMCreateGlobalVector(s->da, &s->T));
  PetscCall(VecDuplicate(s->T, &s->R));
  PetscCall(VecDuplicate(s->T, &s->T1));
  PetscCall(VecDuplicate(s->T, &s->T2));
  PetscCall(DMCreateLocalVector(s->da, &s->Tl));
  PetscCall(SgSstGridSetUp(s));
  PetscCall(SgSstForcingSetUp(s));
  s->exact = (PetscBool)(s->init == SST_INIT_HARMONIC && s->land == SST_LAND_NONE && s->flow != SST_FLOW_GYRES && s->tau == 0 && (s->w_amp == 0 || !s->nweather) && s->e_amp == 0);
  PetscCall(DMDAVecGetArray(s->da, s->T, &T));
  for (PetscInt j = s->ys; j < s->ys + s->ym; j++)
    for (PetscInt i = s->xs; i < s->xs + s->xm; i++) {
      PetscReal lat = SgSstLat(s, j + 0.5), v;
      if (SgSstIsLand(s, i, j)) v = 0;
      else if (s->init == SST_INIT_EQUILIBRIUM) v = SgSstTeq(s, lat, 0);
      else v = s->amplitude * Harmonic(s, (i + 0.5) * s->dlon, lat);
      T[j][i] = v;
    }
  PetscCall(DMDAVecRestoreArray(s->da, s->T, &T));
  PetscCall(SgSstHeat(s, s->T, comm, &s->heat0, &mean, &s->absheat0));
  PetscCall(SgSolverAddDiagnostic(sv, "mean", "area-weighted ocean mean temperature, degC", &s->d_mean));
  PetscCall(SgSolverAddDiagnostic(sv, "heat", "sum over ocean cells of area x T, degC km^2", &s->d_heat));
  PetscCall(SgSolverAddDiagnostic(sv, "budget_residual", "heat - heat(0) - time integral of the sources, degC km^2 (round-off)", &s->d_budget));
  PetscCall(SgSolverAddDiagnostic(sv, "enso", "ENSO index: the linear oscillator's x (unit variance) or the recharge oscillator's T (K)", &s->d_enso));
  if (s->exact) {
    PetscCall(SgSolverAddDiagnostic(sv, "exact_error", "max over cells of |T - exact solution|, degC", &s->d_err));
    PetscCall(SgSolverAddDiagnostic(sv, "harmonic_amplitude", "area-weighted projection of T on the (rotated) initial harmonic, degC", &s->d_amp));
  }
  PetscCall(SgSolverSetProgressDiagnostic(sv, s->d_mean));
  PetscCall(SgSstAdvanceSetUp(sv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Largest stable step: the linear operator's eigenvalues lie, by Gershgorin, within |z| <= r_i =
   2 d_i + a_i + r_max of each cell (d: diffusive conductances over area, a: half the advective face
   fluxes over area; the diagonal's advective part vanishes with the divergence); SSP-RK3 is stable in
   the left half-disc of radius sqrt(3). */
PetscErrorCode SgSstStableStep(SgSolver sv, PetscReal *dt)
{
  Sst      *s = (Sst *)sv->data;
  PetscReal rmax = s->tau > 0 ? (1 + s->relax_season) / s->tau : 0, r = rmax, g;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < s->ym; j++)
    for (PetscInt i = 0; i < s->xm; i++) {
      PetscInt  e = j * (s->xm + 1) + i, n = j * s->xm + i;
      PetscReal A = s->area[s->ys + j];
      PetscReal d = (s->Ge[e] + s->Ge[e + 1] + s->Gn[n] + s->Gn[n + s->xm]) / A;
      PetscReal a = 0.5 * (PetscAbsReal(s->U[e]) + PetscAbsReal(s->U[e + 1]) + PetscAbsReal(s->V[n]) + PetscAbsReal(s->V[n + s->xm])) / A;
      if (s->ocean[n]) r = PetscMax(r, 2 * d + a + rmax);
    }
  PetscCallMPI(MPI_Allreduce(&r, &g, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)sv)));
  *dt = g > 0 ? s->cfl * PetscSqrtReal(3.0) / g : PETSC_MAX_REAL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the driver's step: the stable step, or one field.advance segment (K snapshots) when the slot is in the loop */
static PetscErrorCode SstTimeStep(SgSolver sv, PetscReal t, PetscReal *dt)
{
  Sst *s = (Sst *)sv->data;

  PetscFunctionBegin;
  if (SgSstAdvanceOn(s)) *dt = SgSstAdvanceSegment(s);
  else PetscCall(SgSstStableStep(sv, dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* flux from the west (south) cell lo to the east (north) cell hi through one face */
static inline PetscReal FaceFlux(PetscReal U, PetscReal G, PetscReal lo, PetscReal hi) { return 0.5 * U * (lo + hi) - G * (hi - lo); }

/* R = dT/dt at time t for the state X; *src = sum over owned ocean cells of area x sources */
static PetscErrorCode Rhs(Sst *s, Vec X, PetscReal t, Vec R, PetscReal *src)
{
  const PetscScalar **x;
  PetscScalar       **r;
  PetscReal           acc = 0;

  PetscFunctionBegin;
  PetscCall(DMGlobalToLocal(s->da, X, INSERT_VALUES, s->Tl));
  PetscCall(DMDAVecGetArrayRead(s->da, s->Tl, &x));
  PetscCall(DMDAVecGetArray(s->da, R, &r));
  for (PetscInt j = 0; j < s->ym; j++) {
    const PetscInt  gj  = s->ys + j;
    const PetscReal A   = s->area[gj], lat = SgSstLat(s, gj + 0.5), teq = s->tau > 0 ? SgSstTeq(s, lat, t) : 0;
    const PetscReal rate = s->tau > 0 ? (1 + s->relax_season * PetscSinReal(lat) * PetscCosReal(2 * PETSC_PI * (t - s->season_peak) / s->year)) / s->tau : 0;
    for (PetscInt i = 0; i < s->xm; i++) {
      const PetscInt  gi = s->xs + i, e = j * (s->xm + 1) + i, n = j * s->xm + i;
      const PetscReal c  = x[gj][gi];
      PetscReal       net, q;
      if (!s->ocean[n]) {
        r[gj][gi] = 0;
        continue;
      }
      net = FaceFlux(s->U[e + 1], s->Ge[e + 1], c, x[gj][gi + 1]) - FaceFlux(s->U[e], s->Ge[e], x[gj][gi - 1], c) + FaceFlux(s->V[n + s->xm], s->Gn[n + s->xm], c, x[gj + 1][gi]) - FaceFlux(s->V[n], s->Gn[n], x[gj - 1][gi], c);
      q   = s->forcing[n] + rate * (teq - c);
      r[gj][gi] = -net / A + q;
      acc += A * q;
    }
  }
  PetscCall(DMDAVecRestoreArray(s->da, R, &r));
  PetscCall(DMDAVecRestoreArrayRead(s->da, s->Tl, &x));
  *src = acc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One SSP-RK3 stage (sgssprk.h): the right-hand side, and the stage's source integral kept for the
   heat budget. */
typedef struct {
  Sst      *s;
  PetscReal q[3];
} StageCtx;

static PetscErrorCode StageRHS(void *ctx, PetscInt stage, PetscReal t, Vec x[], Vec r[])
{
  StageCtx *c = (StageCtx *)ctx;

  PetscFunctionBegin;
  PetscCall(Rhs(c->s, x[0], t, r[0], &c->q[stage]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SSP-RK3; the forcing is evaluated once, from the stochastic state at t, and the sources' integral
   is accumulated with the method's weights. */
PetscErrorCode SgSstStep(SgSolver sv, PetscReal t, PetscReal dt)
{
  Sst      *s = (Sst *)sv->data;
  StageCtx  c = {s, {0, 0, 0}};
  PetscReal g[3];

  PetscFunctionBegin;
  PetscCall(SgSstForcingEvaluate(s));
  PetscCall(SgSSPRK3Step(1, &s->T, &s->T1, &s->T2, &s->R, t, dt, StageRHS, &c));
  PetscCallMPI(MPI_Allreduce(c.q, g, 3, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)sv)));
  for (PetscInt k = 0; k < 3; k++) s->sources += dt * SgSSPRK3Weight[k] * g[k];
  PetscCall(SgSstForcingAdvance(s, t, dt));
  s->last_t = t + dt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SstStep(SgSolver sv, PetscReal t, PetscReal dt)
{
  PetscFunctionBegin;
  if (SgSstAdvanceOn((Sst *)sv->data)) PetscCall(SgSstAdvanceStep(sv, t, dt));
  else PetscCall(SgSstStep(sv, t, dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SstWriteFields(SgSolver sv, SgOutput out)
{
  Sst      *s     = (Sst *)sv->data;
  PetscReal lo[2] = {0, -90}, hi[2] = {360, 90};

  PetscFunctionBegin;
  PetscCall(SgOutputWriteField(out, "T", s->T, lo, hi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SstCheckpoint(SgSolver sv, SgCheckpoint chk)
{
  Sst      *s = (Sst *)sv->data;
  PetscReal st[7 + SST_MAX_WEATHER];

  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutInt(chk, "sst_nlon", s->nlon));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_nlat", s->nlat));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_land", s->land));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_flow", s->flow));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_weather_modes", s->nweather));
  PetscCall(SgCheckpointLayoutInt(chk, "sst_seed", s->seed));
  PetscCall(SgCheckpointLayoutString(chk, "sst_enso", SgSstEnsoModels[s->enso_model]));
  PetscCall(SgCheckpointLayoutReal(chk, "sst_kappa", s->kappa));
  PetscCall(SgCheckpointLayoutReal(chk, "sst_speed", s->speed));
  PetscCall(SgCheckpointVec(chk, "T", s->T));
  st[0] = s->ex;
  st[1] = s->ey;
  st[2] = (PetscReal)s->nsteps;
  st[3] = s->sources;
  st[4] = s->heat0;
  st[5] = s->last_t;
  st[6] = s->absheat0;
  for (PetscInt k = 0; k < s->nweather; k++) st[7 + k] = s->a[k];
  PetscCall(SgCheckpointReals(chk, "sst_state", 7 + s->nweather, st));
  s->ex = st[0];
  s->ey = st[1];
  s->nsteps = (PetscInt)st[2];
  s->sources = st[3];
  s->heat0 = st[4];
  s->last_t = st[5];
  s->absheat0 = st[6];
  for (PetscInt k = 0; k < s->nweather; k++) s->a[k] = st[7 + k];
  PetscCall(SgSstAdvanceCheckpoint(sv, chk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The end-of-run report: the flow's divergence (zero up to round-off by construction), and for a
   harmonic state with a known solution the decay rate measured from its amplitude against theory. */
static PetscErrorCode SstReport(SgSolver sv, SgOutput out)
{
  Sst      *s    = (Sst *)sv->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)sv);
  PetscReal div, heat, mean, habs;

  PetscFunctionBegin;
  PetscCall(SgSstMaxDivergence(s, comm, &div));
  PetscCall(SgOutputWriteReport(out, "max_divergence", "1/day: max |discrete divergence| / area over ocean cells", 1, &div));
  PetscCall(SgSstHeat(s, s->T, comm, &heat, &mean, &habs));
  {
    PetscReal rel = (heat - s->heat0 - s->sources) / PetscMax(PetscMax(s->absheat0, habs), PETSC_SMALL);
    PetscCall(PetscPrintf(comm, "sst: mean T %.4f degC; heat budget residual %.3e (relative); max |div u| %.3e /day\n", (double)mean, (double)rel, (double)div));
    PetscCall(SgOutputWriteReport(out, "budget_relative", "(heat - heat0 - sources) / max(sum area |T0|, sum area |T|)", 1, &rel));
  }
  if (s->exact && s->last_t > 0) {
    PetscReal v[SG_SOLVER_MAX_DIAG], rate[2], l = PetscMax(1, s->harmonic_m);
    PetscCall(SgSstDiagnose(sv, s->last_t, v));
    rate[0] = -PetscLogReal(v[s->d_amp] / s->amplitude) / s->last_t;
    rate[1] = l * (l + 1) * s->kappa / PetscSqr(s->radius);
    PetscCall(PetscPrintf(comm, "sst: harmonic decay rate %.6e (scheme) vs %.6e (l(l+1) kappa / a^2) per day; max error %.3e degC\n", (double)rate[0], (double)rate[1], (double)v[s->d_err]));
    PetscCall(SgOutputWriteReport(out, "decay_rate", "1/day: [scheme, theory]", 2, rate));
  }
  PetscCall(SgSstAdvanceReport(sv, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SstDestroy(SgSolver sv)
{
  Sst *s = (Sst *)sv->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&s->T));
  PetscCall(VecDestroy(&s->Tl));
  PetscCall(VecDestroy(&s->R));
  PetscCall(VecDestroy(&s->T1));
  PetscCall(VecDestroy(&s->T2));
  PetscCall(DMDestroy(&s->da));
  PetscCall(PetscFree3(s->area, s->dx_e, s->dy_n));
  PetscCall(PetscFree5(s->U, s->V, s->Ge, s->Gn, s->ocean));
  PetscCall(PetscFree3(s->wmode, s->enso, s->forcing));
  PetscCall(SgSstAdvanceDestroy(s));
  PetscCall(PetscFree(sv->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_SST(SgSolver sv)
{
  Sst *s;

  PetscFunctionBegin;
  PetscCall(PetscNew(&s));
  s->nlon = 360;
  s->nlat = 180;
  s->radius = 6371;
  s->kappa = 130;
  s->speed = 10;
  s->cap_lat = 75;
  s->tau = 60;
  s->relax_season = 0.8;
  s->t_equator = 28;
  s->t_polar = -1.8;
  s->season_amp = 6;
  s->season_peak = 220;
  s->year = 365.25;
  s->nweather = 24;
  s->w_amp = 0.05;
  s->w_time = 5;
  s->e_amp = 0.025;
  s->e_period = 1461;
  s->e_damp = 500;
  s->ro = (SstRecharge){0.05, 0.16, 250, 0.14, 0.16, 0.13, 0.02, 0.001, 0.03, 0.2, 0.2, 0.4, 20, 0}; /* Han, Fedorov and Vialard (2025) */
  s->seed = 1;
  s->amplitude = 1;
  s->cfl = 0.9;
  sv->data                = s;
  sv->ops->setfromoptions = SstSetFromOptions;
  sv->ops->setup          = SstSetUp;
  sv->ops->timestep       = SstTimeStep;
  sv->ops->step           = SstStep;
  sv->ops->diagnose       = SgSstDiagnose;
  sv->ops->writefields    = SstWriteFields;
  sv->ops->checkpoint     = SstCheckpoint;
  sv->ops->report         = SstReport;
  sv->ops->destroy        = SstDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
