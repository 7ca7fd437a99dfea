/* SST forcing: the seasonal equilibrium temperature the mixed layer relaxes to, stochastic weather
   and an ENSO index (sst_enso.c).

   Every random number is drawn from (seed, step, index) by the counter-based generator of
   src/base, and the stochastic state is replicated on every rank: a run gives the same forcing on
   any number of ranks, and a restart (which stores the state and the step count) continues it. */
#include "sst.h"
#include "sgrng.h"

/* Radiative-equilibrium surface temperature, degC: warm equator, cold poles, and a seasonal swing
   that is antisymmetric about the equator (northern summer peaks at day season_peak of the year). */
PetscReal SgSstTeq(const Sst *s, PetscReal lat, PetscReal t)
{
  PetscReal c = PetscCosReal(lat);
  return s->t_polar + (s->t_equator - s->t_polar) * c * c + s->season_amp * PetscSinReal(lat) * PetscCosReal(2 * PETSC_PI * (t - s->season_peak) / s->year);
}

/* a standard normal number from (seed, stream, k) by Box-Muller */
PetscReal SgSstNormal(PetscInt seed, uint64_t stream, uint64_t k)
{
  PetscReal u1 = 1 - SgRandomUniform((uint64_t)seed, stream, 2 * k); /* in (0, 1] */
  PetscReal u2 = SgRandomUniform((uint64_t)seed, stream, 2 * k + 1);
  return SgRngBoxMuller(u1, u2);
}

/* Streams of the generator: 1 the weather patterns, 2 the initial amplitudes, 3 the spin-up of the
   recharge oscillator, 8 + step the noise of a step. */
PetscErrorCode SgSstForcingSetUp(Sst *s)
{
  const PetscInt n = s->xm * s->ym;

  PetscFunctionBegin;
  PetscCall(PetscCalloc3(PetscMax(1, s->nweather) * n, &s->wmode, n, &s->enso, n, &s->forcing));
  for (PetscInt k = 0; k < s->nweather; k++) {
    /* a large-scale pattern cos(m lon + th) cos(lat) cos(l lat + ch), wave numbers 1..8 in longitude
       and 1..6 in latitude, random phases; its area mean square is about 1/8, hence the factor 2 sqrt 2 */
    PetscInt  m  = 1 + (PetscInt)(8 * SgRandomUniform((uint64_t)s->seed, 1, 4 * k));
    PetscInt  l  = 1 + (PetscInt)(6 * SgRandomUniform((uint64_t)s->seed, 1, 4 * k + 1));
    PetscReal th = 2 * PETSC_PI * SgRandomUniform((uint64_t)s->seed, 1, 4 * k + 2);
    PetscReal ch = 2 * PETSC_PI * SgRandomUniform((uint64_t)s->seed, 1, 4 * k + 3);
    for (PetscInt j = 0; j < s->ym; j++) {
      PetscReal lat = SgSstLat(s, s->ys + j + 0.5);
      for (PetscInt i = 0; i < s->xm; i++) {
        PetscReal lon = (s->xs + i + 0.5) * s->dlon;
        s->wmode[k * n + j * s->xm + i] = 2 * PETSC_SQRT2 * PetscCosReal(m * lon + th) * PetscCosReal(lat) * PetscCosReal(l * lat + ch);
      }
    }
    s->a[k] = SgSstNormal(s->seed, 2, (uint64_t)k); /* start in the stationary distribution */
  }
  /* ENSO: a tongue along the equator in the eastern Pacific, 1 at its centre (235E, 0N) */
  for (PetscInt j = 0; j < s->ym; j++) {
    PetscReal lat = SgSstLat(s, s->ys + j + 0.5) * 180 / PETSC_PI;
    for (PetscInt i = 0; i < s->xm; i++) {
      PetscReal lon = (s->xs + i + 0.5) * 360.0 / s->nlon, dl = PetscFmodReal(lon - 235 + 540, 360) - 180;
      s->enso[j * s->xm + i] = PetscExpReal(-PetscSqr(dl / 45) - PetscSqr(lat / 12));
    }
  }
  PetscCall(SgSstEnsoSetUp(s)); /* sst_enso.c */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The forcing held during the next step, degC/day: w_amp / sqrt(N) sum_k a_k W_k + e_amp x P. */
PetscErrorCode SgSstForcingEvaluate(Sst *s)
{
  const PetscInt  n = s->xm * s->ym;
  const PetscReal w = s->nweather ? s->w_amp / PetscSqrtReal((PetscReal)s->nweather) : 0;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < n; p++) s->forcing[p] = s->e_amp * s->ex * s->enso[p];
  for (PetscInt k = 0; k < s->nweather; k++) {
    const PetscReal  c = w * s->a[k];
    const PetscReal *m = s->wmode + k * n;
    for (PetscInt p = 0; p < n; p++) s->forcing[p] += c * m[p];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Advance the stochastic state over [t, t + dt]: each weather amplitude is an Ornstein-Uhlenbeck
   process of correlation time w_time advanced exactly in distribution (unit stationary variance);
   the ENSO index as sst_enso.c says. */
PetscErrorCode SgSstForcingAdvance(Sst *s, PetscReal t, PetscReal dt)
{
  const uint64_t stream = 8 + (uint64_t)s->nsteps;

  PetscFunctionBegin;
  if (s->nweather) {
    PetscReal r = PetscExpReal(-dt / s->w_time), q = PetscSqrtReal(1 - r * r);
    for (PetscInt k = 0; k < s->nweather; k++) s->a[k] = r * s->a[k] + q * SgSstNormal(s->seed, stream, (uint64_t)k);
  }
  PetscCall(SgSstEnsoAdvance(s, t, dt, stream));
  s->nsteps++;
  PetscFunctionReturn(PETSC_SUCCESS);
}
