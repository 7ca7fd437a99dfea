/* Kinetic (Vlasov-Poisson) dispersion relation of a sum of drifting Maxwellians, for the theory
   values the end-of-run report and the tests compare with.

     eps(omega, k) = 1 + sum_{s,c} (n_c q_s^2 / m_s) / (k^2 vt_c^2) [1 + zeta_c Z(zeta_c)] = 0,
     zeta_c = (omega - k.u_c) / (sqrt(2) |k| vt_c),   Z(zeta) = i sqrt(pi) w(zeta),

   (units of vlasov.h; the neutralising background does not respond). w is the Faddeeva function,
   evaluated with Weideman's rational expansion (SIAM J. Numer. Anal. 31, 1994, N = 32 terms,
   ~1e-13 in the upper half plane) and continued to Im z < 0 by w(z) = 2 exp(-z^2) - w(-z).
   Roots by Newton's method from a grid of starting points; the least damped (most unstable) one
   is the mode that dominates the field energy at late times. */
#include <complex.h>
#include "vlasov.h"

#define WN 32

typedef struct {
  double a[WN], L;
} Weideman;

static void WeidemanSetUp(Weideman *wd)
{
  const int M = 2 * WN, M2 = 2 * M;
  double    f[4 * WN];
  wd->L = sqrt(WN / sqrt(2.0));
  f[0]  = 0;
  for (int n = 1; n < M2; n++) {
    double k = n - M, th = k * M_PI / M, t = wd->L * tan(0.5 * th);
    f[n] = exp(-t * t) * (wd->L * wd->L + t * t);
  }
  /* a = real(fft(fftshift(f)))/M2, keep entries 1..N reversed (a[0] multiplies Z^(N-1)) */
  for (int q = 1; q <= WN; q++) {
    double s = 0;
    for (int n = 0; n < M2; n++) s += f[(n + M) % M2] * cos(2 * M_PI * q * n / M2);
    wd->a[WN - q] = s / M2;
  }
}

static double complex FaddeevaUpper(const Weideman *wd, double complex z)
{
  const double   L = wd->L;
  double complex Z = (L + I * z) / (L - I * z), p = 0;
  for (int i = 0; i < WN; i++) p = p * Z + wd->a[i];
  return 2 * p / ((L - I * z) * (L - I * z)) + (1 / sqrt(M_PI)) / (L - I * z);
}

static double complex Faddeeva(const Weideman *wd, double complex z)
{
  if (cimag(z) >= 0) return FaddeevaUpper(wd, z);
  return 2 * cexp(-z * z) - FaddeevaUpper(wd, -z);
}

void SgVlasovFaddeeva(double zr, double zi, double *wr, double *wi)
{
  Weideman wd;
  WeidemanSetUp(&wd);
  double complex w = Faddeeva(&wd, zr + I * zi);
  *wr = creal(w);
  *wi = cimag(w);
}

static double complex Epsilon(const Weideman *wd, SgVlasov *v, const PetscReal k[], double complex omega)
{
  double kk = 0;
  for (PetscInt d = 0; d < v->cdim; d++) kk += k[d] * k[d];
  double         kmag = sqrt(kk);
  double complex eps  = 1;
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    for (PetscInt c = 0; c < s->ncomp; c++) {
      double ku = 0, vt = s->comp[c].vt;
      for (PetscInt d = 0; d < v->cdim; d++) ku += k[d] * s->comp[c].drift[d];
      double complex zeta = (omega - ku) / (sqrt(2.0) * kmag * vt);
      double complex Z    = I * sqrt(M_PI) * Faddeeva(wd, zeta);
      eps += s->comp[c].density * s->charge * s->charge / s->mass / (kk * vt * vt) * (1 + zeta * Z);
    }
  }
  return eps;
}

PetscErrorCode SgVlasovDispersionRoot(SgVlasov *v, const PetscReal k[], PetscReal *omega_r, PetscReal *gamma)
{
  PetscBool found = PETSC_FALSE;
  double    best_i = -1e300, best_r = 0;
  Weideman  wd;

  PetscFunctionBegin;
  WeidemanSetUp(&wd);
  for (int a = 0; a <= 12; a++)
    for (int b = 0; b <= 8; b++) {
      double complex w = 0.25 * a + I * (-0.6 + 0.2 * b);
      int            it;
      for (it = 0; it < 100; it++) {
        double complex e = Epsilon(&wd, v, k, w), h = 1e-7 * (1 + cabs(w));
        double complex de = (Epsilon(&wd, v, k, w + h) - Epsilon(&wd, v, k, w - h)) / (2 * h);
        if (de == 0) break;
        double complex dw = e / de;
        w -= dw;
        if (cabs(dw) < 1e-14 * (1 + cabs(w))) break;
        if (cabs(w) > 50 || cimag(w) < -3) break;
      }
      if (cabs(w) > 50 || cimag(w) < -3 || creal(w) < -1e-9) continue;
      if (cabs(Epsilon(&wd, v, k, w)) > 1e-9) continue;
      if (cimag(w) > best_i + 1e-9 || (fabs(cimag(w) - best_i) <= 1e-9 && creal(w) < best_r)) {
        best_i = cimag(w);
        best_r = creal(w);
        found  = PETSC_TRUE;
      }
    }
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit: no root of the kinetic dispersion relation for this deck's distribution and k = %g: the fit has no theory to compare with; set fit: none or change the species", (double)k[0]);
  *omega_r = PetscAbsReal(best_r) < 1e-10 ? 0 : best_r;
  *gamma   = best_i;
  PetscFunctionReturn(PETSC_SUCCESS);
}
