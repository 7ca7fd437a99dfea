/* The ENSO index that heats the eastern equatorial Pacific pattern of the sst forcing (enso_amp x
   index, degC/day), advanced over each step of the solver. Two models (sst: {enso: ...}):

   oscillator (linear): (x, y) a damped rotation of period enso_period and damping time enso_damp
     driven by white noise, advanced exactly in distribution; unit stationary variance. Gaussian and
     linear: its best forecast is linear.

   recharge (nonlinear): the recharge oscillator of Jin (1997, J. Atmos. Sci. 54, 811) for the
   eastern-Pacific SST anomaly T (K) and the thermocline-depth (heat-content) anomaly h, with the
   seasonal growth rate, deterministic nonlinearities and state-dependent noise of its extended
   nonlinear forms (Levine and Jin 2017, Clim. Dyn. 48, 2275; Jin et al. 2020, AGU monograph 253,
   ch. 9; Han, Fedorov and Vialard 2025, "Realistic ENSO dynamics requires a damped nonlinear
   recharge oscillator"), rates per month (a twelfth of the year):

     dT/dt = R(t) T + F1 h + bT T^2 - cT T^3 + sigmaT (1 + B T H(T)) xi_T
     dh/dt = -eps h - F2 T - bh T^2 + sigmaH xi_h,  R(t) = R0 + Ra cos(2 pi (t - enso_growth_peak) / year)

   with t counted from January 1 (the sst model's day 0). The seasonal growth rate locks the events to
   the calendar (Stein et al. 2014, J. Climate 27, 5285): the variance of T peaks about a season after
   R does; enso_growth_peak (day 250, early September, when the Bjerknes feedback is strong) puts that
   peak in December, as observed (with R peaking on April 1 it came in June-July). bT > 0 and B > 0
   make El Nino stronger than La Nina (positive skewness), bh the discharge after it. Defaults: Han et al.'s realistic damped regime (R0 0.05, Ra 0.16, F1 0.14, F2 0.16,
   eps 0.13, bT 0.02, cT 0.001, bh 0.03, sigmaT = sigmaH = 0.2, B 0.4: period about 4.4 years, linear
   decay time about 2 years, std(T) about 0.9 K). Euler-Maruyama (Ito) over the solver's step, as
   Han et al. integrate it (their step 0.01 month; the solver's is 0.014 month on the 1-degree grid).
   The index is T in K; at set-up the pair is spun up from rest over enso_spinup years ending at
   t = 0, so a run starts in the oscillator's stationary regime (enso_init is added to T then: with
   no noise and no spin-up, a deterministic trajectory the tests compare with an ODE solver).

   Noise: standard normals from (seed, stream, k) (sst_forcing.c), the same on every rank. */
#include "sst.h"

const char *const SgSstEnsoModels[] = {"oscillator", "recharge"};

/* one Euler-Maruyama step of the recharge oscillator from t over dt (days) with standard normals n */
static void RechargeStep(const Sst *s, PetscReal t, PetscReal dt, const PetscReal n[2], PetscReal *T, PetscReal *h)
{
  const SstRecharge *r  = &s->ro;
  const PetscReal    mo = s->year / 12, a = dt / mo, sq = PetscSqrtReal(a), x = *T, y = *h;
  const PetscReal    R  = r->R0 + r->Ra * PetscCosReal(2 * PETSC_PI * (t - r->peak) / s->year);

  *T = x + a * (R * x + r->F1 * y + r->bT * x * x - r->cT * x * x * x) + r->sT * sq * n[0] * (1 + (x > 0 ? r->B * x : 0));
  *h = y + a * (-r->eps * y - r->F2 * x - r->bh * x * x) + r->sH * sq * n[1];
}

PetscErrorCode SgSstEnsoSetUp(Sst *s)
{
  PetscFunctionBegin;
  if (s->enso_model == SST_ENSO_OSCILLATOR) { /* start in the stationary distribution */
    s->ex = SgSstNormal(s->seed, 2, (uint64_t)SST_MAX_WEATHER);
    s->ey = SgSstNormal(s->seed, 2, (uint64_t)SST_MAX_WEATHER + 1);
  } else { /* spin up from rest, steps of a quarter day, ending at t = 0; noise stream 3 */
    const PetscInt  n  = (PetscInt)PetscCeilReal(s->ro.spinup * s->year / 0.25);
    const PetscReal dt = n ? s->ro.spinup * s->year / n : 0;
    s->ex = 0;
    s->ey = 0;
    for (PetscInt k = 0; k < n; k++) {
      PetscReal z[2] = {SgSstNormal(s->seed, 3, 2 * (uint64_t)k), SgSstNormal(s->seed, 3, 2 * (uint64_t)k + 1)};
      RechargeStep(s, -s->ro.spinup * s->year + k * dt, dt, z, &s->ex, &s->ey);
    }
    s->ex += s->ro.T0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the index over [t, t + dt] with the step's noise stream */
PetscErrorCode SgSstEnsoAdvance(Sst *s, PetscReal t, PetscReal dt, uint64_t stream)
{
  PetscReal z[2] = {SgSstNormal(s->seed, stream, SST_MAX_WEATHER), SgSstNormal(s->seed, stream, SST_MAX_WEATHER + 1)};

  PetscFunctionBegin;
  if (s->enso_model == SST_ENSO_OSCILLATOR) {
    PetscReal r = PetscExpReal(-dt / s->e_damp), q = PetscSqrtReal(1 - r * r), w = 2 * PETSC_PI * dt / s->e_period;
    PetscReal x = r * (PetscCosReal(w) * s->ex - PetscSinReal(w) * s->ey), y = r * (PetscSinReal(w) * s->ex + PetscCosReal(w) * s->ey);
    s->ex = x + q * z[0];
    s->ey = y + q * z[1];
  } else RechargeStep(s, t, dt, z, &s->ex, &s->ey);
  PetscFunctionReturn(PETSC_SUCCESS);
}
