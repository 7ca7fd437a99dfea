/* Collisional Landau root: the linear electrostatic mode of one Maxwellian species (density n,
   thermal speed vt, no drift, k along x, 1x1v) with the self-collision operators of this module,
   linearised about that Maxwellian — the theory `fit: landau` compares with when collisions are on.
   Velocities are scaled by vt (kt = k vt, wp^2 = n q^2/m); g(v) = delta f / n.

   BGK with the conserving Maxwellian (Bhatnagar, Gross & Krook 1954): the collision term is
   nu (dn + du v + dT (v^2 - 1)/2 - g) M(v), so with Omega = omega + i nu
     (Omega - kt v) g = [(wp^2/kt) dn v + i nu (dn + du v + dT (v^2 - 1)/2)] M,
   and the density, momentum and second moment of g give three linear equations in (dn, du, dT)
   with the integrals I_j = int v^j M/(Omega - kt v) dv (Landau contour):
   I_0 = -Z(zeta)/(sqrt2 kt), zeta = Omega/(sqrt2 kt), I_{j+1} = (Omega I_j - mu_j)/kt with the
   Maxwellian's moments mu = 1, 0, 1, 0. The dispersion relation is their 3x3 determinant = 0; at
   nu = 0 it is 1 + (wp^2/kt^2)(1 + zeta Z) = 0, the collisionless relation of vlasov_dispersion.c.

   Dougherty / LBO (Lenard & Bernstein 1958; Dougherty 1964): with g = sum_m d_m He_m(v) M / sqrt(m!)
   (probabilists' Hermite polynomials) the operator nu d_v[(v - u) g + vt^2 d_v g] is diagonal,
   -nu m d_m, except that the flow and temperature corrections cancel it on m = 1, 2 (momentum and
   energy are conserved). Streaming couples m to m +- 1 and the field enters m = 1:
     omega d_m = -i nu_m d_m + kt (sqrt(m) d_{m-1} + sqrt(m+1) d_{m+1}) + delta_{m1} (wp^2/kt) d_0,
   nu_m = nu m for m >= 3, 0 below (the same system with nu_m = nu is BGK). Eliminating m >= 2 by
   the continued fraction r_m = d_m/d_{m-1} = kt sqrt(m)/(omega + i nu_m - kt sqrt(m+1) r_{m+1})
   (truncated at m = NH, r_{NH+1} = 0; the collisional cut-off m ~ (kt/nu)^(2/3) makes it converge,
   checked against 2 NH) and using d_1 = (omega/kt) d_0 gives
     D(omega) = (omega/kt)(omega - kt sqrt2 r_2) - kt - wp^2/kt = 0
   (Ng, Bhattacharjee & Skiff, PRL 83, 1999 use this Hermite form for the Lenard-Bernstein case).

   Roots: complex secant iteration, continued in nu from the collisionless root in 8 steps. */
#include <complex.h>
#include "vlasov.h"

#define NH 20000

typedef struct {
  PetscInt lbo;
  double   kt, wp2, nu;
  PetscInt nh;
} CollDisp;

static double complex DispLBO(const CollDisp *c, double complex w)
{
  double complex r = 0;
  for (PetscInt m = c->nh; m >= 2; m--) {
    const double num = m >= 3 ? c->nu * m : 0;
    r                = c->kt * sqrt((double)m) / (w + I * num - c->kt * sqrt((double)m + 1) * r);
  }
  return (w / c->kt) * (w - c->kt * sqrt(2.0) * r) - c->kt - c->wp2 / c->kt;
}

static double complex DispBGK(const CollDisp *c, double complex w)
{
  const double complex Om = w + I * c->nu, zeta = Om / (sqrt(2.0) * c->kt);
  const double         mu[4] = {1, 0, 1, 0};
  double complex       Ij[5], A[3][3];
  double               wr, wi;

  SgVlasovFaddeeva(creal(zeta), cimag(zeta), &wr, &wi);
  Ij[0] = -(I * sqrt(M_PI) * (wr + I * wi)) / (sqrt(2.0) * c->kt);
  for (PetscInt j = 0; j < 4; j++) Ij[j + 1] = (Om * Ij[j] - mu[j]) / c->kt;
  /* row r: moment r of g (r = 0 density, 1 momentum, 2 second moment = dT + dn) minus the unknowns */
  for (PetscInt r = 0; r < 3; r++) {
    A[r][0] = (c->wp2 / c->kt) * Ij[r + 1] + I * c->nu * Ij[r];
    A[r][1] = I * c->nu * Ij[r + 1];
    A[r][2] = I * c->nu * 0.5 * (Ij[r + 2] - Ij[r]);
  }
  A[0][0] -= 1;
  A[1][1] -= 1;
  A[2][0] -= 1;
  A[2][2] -= 1;
  return A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) + A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
}

static double complex Disp(const CollDisp *c, double complex w)
{
  return c->lbo ? DispLBO(c, w) : DispBGK(c, w);
}

static PetscBool Secant(const CollDisp *c, double complex *w)
{
  double complex w0 = *w, w1 = *w * (1 + 1e-4) + 1e-6, f0 = Disp(c, w0), f1 = Disp(c, w1);
  for (PetscInt it = 0; it < 100; it++) {
    if (f1 == f0) break;
    double complex w2 = w1 - f1 * (w1 - w0) / (f1 - f0);
    w0 = w1;
    f0 = f1;
    w1 = w2;
    f1 = Disp(c, w1);
    if (cabs(w1 - w0) < 1e-14 * (1 + cabs(w1))) {
      *w = w1;
      return PETSC_TRUE;
    }
  }
  return PETSC_FALSE;
}

PetscErrorCode SgVlasovCollisionalRoot(SgVlasov *v, PetscReal *omega_r, PetscReal *gamma)
{
  SgVlasovSpecies *s = &v->sp[0];
  CollDisp         c;
  double complex   w;
  PetscReal        w0r, g0;

  PetscFunctionBegin;
  PetscCheck(v->cdim == 1 && v->vdim == 1 && v->nspecies == 1 && s->ncomp == 1 && s->comp[0].drift[0] == 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
             "vlasov_fit with collisions compares with the collisional root of one non-drifting Maxwellian species in 1x1v (this deck: %" PetscInt_FMT "x%" PetscInt_FMT "v, %" PetscInt_FMT " species, %" PetscInt_FMT " Maxwellian(s), drift %g); set fit: none",
             v->cdim, v->vdim, v->nspecies, s->ncomp, (double)s->comp[0].drift[0]);
  PetscCall(SgVlasovDispersionRoot(v, s->k, &w0r, &g0));
  c.lbo = v->collisions == 2 ? 1 : 0;
  c.kt  = PetscAbsReal(s->k[0]) * s->comp[0].vt;
  c.wp2 = s->comp[0].density * s->charge * s->charge / s->mass;
  c.nh  = NH;
  w     = w0r + I * g0;
  for (PetscInt j = 1; j <= 8; j++) { /* continuation in nu from the collisionless root */
    c.nu = s->nu * j / 8.0;
    PetscCheck(Secant(&c, &w), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit landau: the collisional root (nu = %g) was not found from the collisionless one; set fit: none", (double)c.nu);
  }
  if (c.lbo) { /* the Hermite truncation: the root must not move when NH doubles */
    double complex w2 = w;
    c.nh = 2 * NH;
    PetscCheck(Secant(&c, &w2) && cabs(w2 - w) < 1e-9 * cabs(w), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov_fit landau: the LBO root at nu = %g is not converged in %d Hermite modes (nu too small); set fit: none", (double)s->nu, NH);
  }
  *omega_r = creal(w);
  *gamma   = cimag(w);
  PetscFunctionReturn(PETSC_SUCCESS);
}
