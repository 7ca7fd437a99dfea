/* Unit tests of physics/md building blocks (no solver, no files):
   1. counter-based Gaussian: same value for the same counters; mean 0 and variance 1 within
      5 standard errors over 200,000 draws; independent of call order;
   2. triclinic cell: fractional coordinates invert x = lo + s H to 1e-14, reciprocal vectors
      satisfy a_i . b_j = delta_ij to 1e-15, thickness = V / |b x c|; wrapping is idempotent;
   3. exact kinetic-energy sum: the same bits for the atoms stored in any order and split over
      any number of "ranks" (sum of 128-bit fixed-point integers), and equal to the long-double
      sum to 1e-15 relative. */
#include <math.h>
#include "../../../physics/md/mdimpl.h"

static PetscErrorCode TestRNG(void)
{
  const PetscInt n = 200000;
  PetscReal      s = 0, s2 = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal g = SgMDGaussian(42, (uint64_t)i + 1, 7, 1);
    s += g;
    s2 += g * g;
  }
  s /= n;
  s2 = s2 / n - s * s;
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "rng: mean %.2e variance %.5f (n = %d)\n", (double)s, (double)s2, (int)n));
  PetscCheck(PetscAbsReal(s) < 5 / PetscSqrtReal(n), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Gaussian mean %g off", (double)s);
  PetscCheck(PetscAbsReal(s2 - 1) < 5 * PetscSqrtReal(2.0 / n), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Gaussian variance %g off", (double)s2);
  PetscCheck(SgMDGaussian(1, 2, 3, 4) == SgMDGaussian(1, 2, 3, 4), PETSC_COMM_SELF, PETSC_ERR_PLIB, "not a pure function");
  PetscCheck(SgMDGaussian(1, 2, 3, 4) != SgMDGaussian(1, 2, 4, 4), PETSC_COMM_SELF, PETSC_ERR_PLIB, "counters ignored");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestBox(void)
{
  SgMDBox   b;
  PetscReal lo[3] = {-1, 0.5, 2}, h[9] = {0, 3, 3, 3, 0, 3, 3, 3, 0}, err = 0, derr = 0;

  PetscFunctionBegin;
  PetscCall(SgMDBoxSet(&b, lo, h));
  PetscCheck(b.triclinic && PetscAbsReal(b.volume - 54) < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "volume %g", (double)b.volume);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) derr = PetscMax(derr, PetscAbsReal(h[3 * i] * b.rec[3 * j] + h[3 * i + 1] * b.rec[3 * j + 1] + h[3 * i + 2] * b.rec[3 * j + 2] - (i == j)));
  for (int k = 0; k < 1000; k++) {
    PetscReal s0[3], x[3], s[3];
    PetscInt  img[3] = {0, 0, 0};
    for (int d = 0; d < 3; d++) s0[d] = 3 * SgMDUniform(9, k, d, 0) - 1;
    for (int d = 0; d < 3; d++) x[d] = lo[d] + s0[0] * h[d] + s0[1] * h[3 + d] + s0[2] * h[6 + d];
    SgMDBoxFrac(&b, x, s);
    for (int d = 0; d < 3; d++) err = PetscMax(err, PetscAbsReal(s[d] - s0[d]));
    SgMDBoxWrap(&b, x, img);
    SgMDBoxFrac(&b, x, s);
    for (int d = 0; d < 3; d++) {
      PetscReal xw[3] = {x[0], x[1], x[2]};
      PetscInt  im2[3] = {img[0], img[1], img[2]};
      PetscCheck(s[d] >= 0 && s[d] <= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "wrap left s = %g", (double)s[d]);
      PetscCheck(img[d] == (PetscInt)PetscFloorReal(s0[d]) || PetscAbsReal(s0[d] - round(s0[d])) < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "image counter");
      SgMDBoxWrap(&b, xw, im2);
      PetscCheck(xw[0] == x[0] && xw[1] == x[1] && xw[2] == x[2] && im2[d] == img[d], PETSC_COMM_SELF, PETSC_ERR_PLIB, "wrap not idempotent");
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "box: max |s - s0| %.1e, max |a_i.b_j - delta| %.1e, thickness %.6f (expect %.6f)\n", (double)err, (double)derr, (double)b.thick[0], 54 / (9 * PetscSqrtReal(3.0))));
  PetscCheck(err < 1e-14 && derr < 1e-15, PETSC_COMM_SELF, PETSC_ERR_PLIB, "fractional coordinates inaccurate");
  PetscCheck(PetscAbsReal(b.thick[0] - 54 / (9 * PetscSqrtReal(3.0))) < 1e-13, PETSC_COMM_SELF, PETSC_ERR_PLIB, "thickness");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exact sum of SgMDKineticGlobal, on arrays, for several orders and splits. */
static PetscErrorCode TestExactSum(void)
{
  const PetscInt n = 10000;
  PetscReal     *t;
  __int128       ref = 0;
  long double    ld = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &t));
  for (PetscInt i = 0; i < n; i++) {
    t[i] = PetscExpReal(8 * SgMDUniform(3, i, 0, 0) - 4); /* 1e-2 .. 50, many exponents */
    ref += (__int128)(t[i] * 0x1p64);
    ld += t[i];
  }
  for (int split = 1; split <= 7; split++) {
    __int128 tot = 0;
    for (int r = 0; r < split; r++) {
      __int128 acc = 0;
      for (PetscInt k = 0; k < n; k++) { /* rank r holds every atom with (perm(k) mod split) == r, backwards */
        PetscInt i = n - 1 - k;
        if ((i * 7919) % split == r) acc += (__int128)(t[i] * 0x1p64);
      }
      tot += acc;
    }
    PetscCheck(tot == ref, PETSC_COMM_SELF, PETSC_ERR_PLIB, "exact sum depends on the split (%d)", split);
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "exact sum: identical for 1..7 splits in reversed order; rel. diff to long double %.1e\n", (double)PetscAbsReal((PetscReal)((long double)ref * 0x1p-64L / ld - 1))));
  PetscCheck(PetscAbsReal((PetscReal)((long double)ref * 0x1p-64L / ld - 1)) < 1e-15, PETSC_COMM_SELF, PETSC_ERR_PLIB, "exact sum inaccurate");
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(TestRNG());
  PetscCall(TestBox());
  PetscCall(TestExactSum());
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
