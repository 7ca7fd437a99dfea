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

/* Transverse (Weibel) mode of counter-streaming Maxwellians, k along x (1x, or 2x with k_y = 0), E = E_y, B = B_z, purely
   growing omega = i gamma. Linearising the Vlasov-Maxwell system (units of vlasov_maxwell.c) for
   components with density n_c, thermal speed vt_c and drift u_c along y gives
     D(omega) = omega^2 - c^2 k^2 - sum_c w_c^2 [1 - ((vt_c^2 + u_c^2)/vt_c^2) (1 + zeta_c Z(zeta_c))] = 0,
   w_c^2 = n_c q^2/m, zeta_c = omega/(sqrt2 k vt_c) (Weibel 1959; Davidson's review in the Handbook
   of Plasma Physics, 1983; for an isotropic plasma it reduces to omega^2 = c^2 k^2 - w^2 zeta Z).
   For omega = i gamma, zeta Z(zeta) = -sqrt(pi) y erfcx(y) with y = gamma/(sqrt2 k vt) (w(iy) is
   real), so D is real; D(0+) > 0 when the plasma is unstable and D -> -inf, so the root is
   bracketed and found by bisection to round-off. Drifts along k are not part of this relation:
   they are refused. */
static double WeibelD(SgVlasov *v, double k, double g)
{
  double D = -g * g - v->c_light * v->c_light * k * k;
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    for (PetscInt c = 0; c < s->ncomp; c++) {
      double vt = s->comp[c].vt, u = v->vdim > 1 ? s->comp[c].drift[1] : 0, y = g / (sqrt(2.0) * k * vt), wr, wi;
      SgVlasovFaddeeva(0, y, &wr, &wi);
      double zZ = -sqrt(M_PI) * y * wr;
      D -= s->comp[c].density * s->charge * s->charge / s->mass * (1 - (vt * vt + u * u) / (vt * vt) * (1 + zZ));
    }
  }
  return D;
}

PetscErrorCode SgVlasovWeibelRoot(SgVlasov *v, PetscReal k, PetscReal *gamma)
{
  double lo = 1e-12, hi = 10;

  PetscFunctionBegin;
  /* In 2x the same relation holds when k lies along x (maxwell_k = [k, 0]): the mode is uniform in y,
     so the linear problem is the 1x one (vz, if any, enters only through the Maxwellian's integral). */
  PetscCheck(k > 0 && v->vdim >= 2 && (v->cdim == 1 || v->em_k[1] == 0), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit_field magnetic compares with the transverse (Weibel) root: it needs vdim >= 2, maxwell_k > 0 along x (the mode of the initial B) and, in 2x, maxwell_k = [k, 0]");
  for (PetscInt is = 0; is < v->nspecies; is++)
    for (PetscInt c = 0; c < v->sp[is].ncomp; c++)
      PetscCheck(v->sp[is].comp[c].drift[0] == 0 && (v->vdim < 3 || v->sp[is].comp[c].drift[2] == 0), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit_field magnetic: the Weibel relation here has drifts along vy only; species %s has a drift along vx or vz", v->sp[is].name);
  PetscCheck(WeibelD(v, k, lo) > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit_field magnetic: the plasma is Weibel-stable at k = %g (no growing transverse root): set fit: none", (double)k);
  while (WeibelD(v, k, hi) > 0) hi *= 2;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    if (WeibelD(v, k, mid) > 0) lo = mid;
    else hi = mid;
  }
  *gamma = 0.5 * (lo + hi);
  PetscFunctionReturn(PETSC_SUCCESS);
}
