/* Periodic cell: H with rows a, b, c and origin lo.  Fractional coordinates s = (x - lo) H^-1,
   computed with the reciprocal vectors b_d (a_i . b_d = delta_id): b_0 = (b x c)/V etc.
   The distance between the two faces normal to b_d is 1/|b_d|: this "thickness" is what limits
   cutoffs and sub-domain sizes in a triclinic cell (LAMMPS uses the same measure). */
#include "mdimpl.h"

static void cross(const PetscReal *u, const PetscReal *v, PetscReal *w)
{
  w[0] = u[1] * v[2] - u[2] * v[1];
  w[1] = u[2] * v[0] - u[0] * v[2];
  w[2] = u[0] * v[1] - u[1] * v[0];
}

PetscErrorCode SgMDBoxSet(SgMDBox *b, const PetscReal lo[3], const PetscReal h[9])
{
  PetscReal V, bc[3];

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) b->lo[d] = lo[d];
  for (int k = 0; k < 9; k++) b->h[k] = h[k];
  cross(&h[3], &h[6], bc);
  V = h[0] * bc[0] + h[1] * bc[1] + h[2] * bc[2];
  PetscCheck(V > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md: the cell vectors a=(%g %g %g) b=(%g %g %g) c=(%g %g %g) have volume %g; they must be right-handed with positive volume", (double)h[0], (double)h[1], (double)h[2], (double)h[3], (double)h[4], (double)h[5], (double)h[6], (double)h[7], (double)h[8], (double)V);
  b->volume = V;
  cross(&h[3], &h[6], &b->rec[0]);
  cross(&h[6], &h[0], &b->rec[3]);
  cross(&h[0], &h[3], &b->rec[6]);
  for (int k = 0; k < 9; k++) b->rec[k] /= V;
  for (int d = 0; d < 3; d++) b->thick[d] = 1.0 / PetscSqrtReal(b->rec[3 * d] * b->rec[3 * d] + b->rec[3 * d + 1] * b->rec[3 * d + 1] + b->rec[3 * d + 2] * b->rec[3 * d + 2]);
  b->triclinic = (h[1] != 0 || h[2] != 0 || h[3] != 0 || h[5] != 0 || h[6] != 0 || h[7] != 0) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Wrap into [0,1] per fractional direction by whole cell vectors; the image counter keeps the
   unwrapped trajectory recoverable (x_unwrapped = x + img . H).  s = 1.0 is accepted as inside:
   an atom at s = -1e-17 wraps to s = 1 - 1e-17, which may round to 1.0, and must then stay put
   (wrapping must be idempotent, else it would flip between images and owners). */
void SgMDBoxWrap(const SgMDBox *b, PetscReal x[3], PetscInt img[3])
{
  PetscReal s[3];
  SgMDBoxFrac(b, x, s);
  for (int d = 0; d < 3; d++) {
    if (s[d] >= 0.0 && s[d] <= 1.0) continue;
    PetscReal k = PetscFloorReal(s[d]);
    x[0] -= k * b->h[3 * d];
    x[1] -= k * b->h[3 * d + 1];
    x[2] -= k * b->h[3 * d + 2];
    img[d] += (PetscInt)k;
  }
}
