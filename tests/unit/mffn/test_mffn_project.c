/* The divergence-free projection of a super-resolved velocity (surrogates/mffn/project.c).

     1. A random (u, w) on 2 levels of 13 x 16 and 13 x 15 (even and odd nx: with and without a Nyquist
        mode): the projected field's discrete divergence (spectral d_x u + fourth-order D w) is zero to
        round-off (1e-12 of the input's, which is O(1/h)).
     2. Idempotent: projecting the projected field changes it by < 1e-12 relative.
     3. Orthogonal: what the projection removes is orthogonal on the grid to what it keeps,
        |<Pv, v - Pv>| < 1e-12 |v|^2 (the least-squares property).
     4. A smooth divergence-free field (psi = sin(2 pi x / Lx + 0.3) sin^2(pi z) + cos(4 pi x / Lx)
        z^3 (1 - z), plus a mean flow u0 = z^2, on cell-centred rows of [0, 1], Lx = 2, 32 columns)
        changes by O(h^4): the largest change falls >= 12x from 32 to 64 rows (16x for fourth order;
        a second-order D gives 4x and fails it), and at 64 rows is < 1e-5 of the field.
     5. Refusals: 4 rows (the stencils need 5), a non-positive spacing (PETSC_ERR_ARG_*). */
#include <math.h>
#include "sgmffn.h"
#include "sgnn.h"

#include "../../lib/sgtestcheck.h"

static PetscReal Dot(PetscInt n, const PetscReal *a, const PetscReal *b)
{
  PetscReal s = 0;
  for (PetscInt i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static PetscReal MaxAbs(PetscInt n, const PetscReal *a)
{
  PetscReal s = 0;
  for (PetscInt i = 0; i < n; i++) s = PetscMax(s, PetscAbsReal(a[i]));
  return s;
}

/* tests 1-3 on a random field of nt x nz x nx */
static PetscErrorCode RandomField(PetscInt nt, PetscInt nz, PetscInt nx)
{
  const PetscInt  n = nt * nz * nx;
  const PetscReal hz = 1.0 / nz, Lx = 2;
  SgMFFNProjector P;
  SgnnRng         r;
  PetscReal      *v, *pv, *ppv, *div, d0, d1, idem, orth;

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(2 * n, &v, 2 * n, &pv, 2 * n, &ppv, n, &div));
  sgnn_rng_init(&r, 5);
  for (PetscInt i = 0; i < 2 * n; i++) v[i] = sgnn_rng_normal(&r);
  PetscCall(SgMFFNProjectorCreate(nz, nx, hz, Lx, &P));
  PetscCall(SgMFFNProjectorDivergence(P, nt, v, v + n, div));
  d0 = MaxAbs(n, div);
  PetscCall(PetscArraycpy(pv, v, 2 * n));
  PetscCall(SgMFFNProjectorApply(P, nt, pv, pv + n));
  PetscCall(SgMFFNProjectorDivergence(P, nt, pv, pv + n, div));
  d1 = MaxAbs(n, div);
  PetscCall(PetscArraycpy(ppv, pv, 2 * n));
  PetscCall(SgMFFNProjectorApply(P, nt, ppv, ppv + n));
  for (PetscInt i = 0; i < 2 * n; i++) ppv[i] -= pv[i];
  idem = MaxAbs(2 * n, ppv) / MaxAbs(2 * n, pv);
  for (PetscInt i = 0; i < 2 * n; i++) ppv[i] = v[i] - pv[i];
  orth = PetscAbsReal(Dot(2 * n, pv, ppv)) / Dot(2 * n, v, v);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ": 1. max |div| %.2e -> %.2e; 2. P(Pv) - Pv %.1e relative; 3. <Pv, v - Pv> / |v|^2 %.1e; |Pv|^2 / |v|^2 %.3f\n", nt, nz, nx, (double)d0, (double)d1,
                        (double)idem, (double)orth, (double)(Dot(2 * n, pv, pv) / Dot(2 * n, v, v))));
  CHECK(d0 > 1 && d1 <= 1e-12 * d0, "%" PetscInt_FMT " columns: divergence %g before, %g after the projection", nx, (double)d0, (double)d1);
  CHECK(idem <= 1e-12, "%" PetscInt_FMT " columns: the projection is not idempotent (%g)", nx, (double)idem);
  CHECK(orth <= 1e-12, "%" PetscInt_FMT " columns: the removed part is not orthogonal to the kept one (%g)", nx, (double)orth);
  PetscCall(SgMFFNProjectorDestroy(&P));
  PetscCall(PetscFree4(v, pv, ppv, div));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* test 4: the largest change of the smooth divergence-free field on nz rows, relative to its size */
static PetscErrorCode SmoothChange(PetscInt nz, PetscReal *change)
{
  const PetscInt  nx = 32, n = nz * nx;
  const PetscReal Lx = 2, hz = 1.0 / nz, k1 = 2 * PETSC_PI / Lx;
  SgMFFNProjector P;
  PetscReal      *u, *w, *u0, *w0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(n, &u, n, &w, n, &u0, n, &w0));
  for (PetscInt i = 0; i < nz; i++)
    for (PetscInt j = 0; j < nx; j++) {
      const PetscReal z = (i + 0.5) * hz, x = j * Lx / nx, s = PetscSinReal(PETSC_PI * z);
      /* psi = sin(k1 x + 0.3) s^2 + cos(2 k1 x) z^3 (1 - z); u = psi_z + z^2, w = -psi_x */
      u0[i * nx + j] = PetscSinReal(k1 * x + 0.3) * 2 * PETSC_PI * s * PetscCosReal(PETSC_PI * z) + PetscCosReal(2 * k1 * x) * (3 * z * z - 4 * z * z * z) + z * z;
      w0[i * nx + j] = -(k1 * PetscCosReal(k1 * x + 0.3) * s * s - 2 * k1 * PetscSinReal(2 * k1 * x) * z * z * z * (1 - z));
    }
  PetscCall(PetscArraycpy(u, u0, n));
  PetscCall(PetscArraycpy(w, w0, n));
  PetscCall(SgMFFNProjectorCreate(nz, nx, hz, Lx, &P));
  PetscCall(SgMFFNProjectorApply(P, 1, u, w));
  for (PetscInt i = 0; i < n; i++) {
    u[i] -= u0[i];
    w[i] -= w0[i];
  }
  *change = PetscMax(MaxAbs(n, u), MaxAbs(n, w)) / PetscMax(MaxAbs(n, u0), MaxAbs(n, w0));
  PetscCall(SgMFFNProjectorDestroy(&P));
  PetscCall(PetscFree4(u, w, u0, w0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscReal c32, c64;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(RandomField(2, 13, 16));
  PetscCall(RandomField(2, 13, 15));
  PetscCall(SmoothChange(32, &c32));
  PetscCall(SmoothChange(64, &c64));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "4. a smooth divergence-free field changes by %.2e (32 rows), %.2e (64 rows): ratio %.1f (fourth order: 16)\n", (double)c32, (double)c64, (double)(c32 / c64)));
  CHECK(c32 / c64 >= 12 && c64 < 1e-5, "smooth divergence-free field: change %g at 32 rows, %g at 64 (want a ratio >= 12 and < 1e-5)", (double)c32, (double)c64);
  {
    SgMFFNProjector P = NULL;
    PetscErrorCode  e1, e2;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    e1 = SgMFFNProjectorCreate(4, 16, 0.25, 1, &P);
    e2 = SgMFFNProjectorCreate(8, 16, 0, 1, &P);
    PetscCall(PetscPopErrorHandler());
    CHECK(e1 == PETSC_ERR_ARG_SIZ && e2 == PETSC_ERR_ARG_OUTOFRANGE && !P, "refusals: 4 rows %d, spacing 0 %d", (int)e1, (int)e2);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "5. refused: 4 rows, z spacing 0\n"));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
