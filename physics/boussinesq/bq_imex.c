/* IMEX Runge-Kutta tableaux: Ascher, Ruuth & Spiteri, "Implicit-explicit Runge-Kutta methods for
   time-dependent partial differential equations", Appl. Numer. Math. 25 (1997) 151-167:
   RK222 is their (2,2,2) scheme (section 2.6, gamma = 1 - 1/sqrt 2), RK443 their (4,4,3) scheme
   (section 2.8); both are the ones Dedalus offers under these names. The implicit parts are
   L-stable and stiffly accurate, and the first stage is explicit, so the algebraic rows (boundary
   conditions, M = 0 there) are satisfied at every stage. Stage 0 is the start of the step. */
#include "bq.h"

const char *const SgBqSchemes[] = {"RK222", "RK443"};

PetscErrorCode SgBqTableauGet(PetscInt scheme, BqTableau *t)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(t, sizeof *t));
  t->name = SgBqSchemes[scheme];
  if (scheme == 0) {
    const PetscReal g = 1 - 1 / PetscSqrtReal(2.0), d = 1 - 1 / (2 * g);
    t->stages = 2;
    t->order  = 2;
    t->c[1]   = g;
    t->c[2]   = 1;
    t->A[1][0] = g;
    t->A[2][0] = d;
    t->A[2][1] = 1 - d;
    t->H[1][1] = g;
    t->H[2][1] = 1 - g;
    t->H[2][2] = g;
  } else {
    static const PetscReal A[5][5] = {
      {0, 0, 0, 0, 0},
      {1. / 2, 0, 0, 0, 0},
      {11. / 18, 1. / 18, 0, 0, 0},
      {5. / 6, -5. / 6, 1. / 2, 0, 0},
      {1. / 4, 7. / 4, 3. / 4, -7. / 4, 0}
    };
    static const PetscReal H[5][5] = {
      {0, 0, 0, 0, 0},
      {0, 1. / 2, 0, 0, 0},
      {0, 1. / 6, 1. / 2, 0, 0},
      {0, -1. / 2, 1. / 2, 1. / 2, 0},
      {0, 3. / 2, -3. / 2, 1. / 2, 1. / 2}
    };
    static const PetscReal c[5] = {0, 1. / 2, 2. / 3, 1. / 2, 1};
    t->stages = 4;
    t->order  = 3;
    for (int i = 0; i < 5; i++) {
      t->c[i] = c[i];
      for (int j = 0; j < 5; j++) {
        t->A[i][j] = A[i][j];
        t->H[i][j] = H[i][j];
      }
    }
  }
  /* every implicit diagonal is the same, so one factorisation per dt serves all stages */
  for (PetscInt i = 2; i <= t->stages; i++) PetscCheck(t->H[i][i] == t->H[1][1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "tableau %s: unequal implicit diagonal", t->name);
  PetscFunctionReturn(PETSC_SUCCESS);
}
