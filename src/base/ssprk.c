/* SSP-RK3 step shared by the explicit solvers (sgssprk.h). */
#include "sgssprk.h"

const PetscReal SgSSPRK3StageTime[3] = {0, 1, 0.5};
const PetscReal SgSSPRK3Weight[3]    = {1.0 / 6.0, 1.0 / 6.0, 2.0 / 3.0};

PetscErrorCode SgSSPRK3Step(PetscInt n, Vec u[], Vec w1[], Vec w2[], Vec r[], PetscReal t, PetscReal dt, SgSSPRK3RHS rhs, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(rhs(ctx, 0, t, u, r));
  for (PetscInt i = 0; i < n; i++) PetscCall(VecWAXPY(w1[i], dt, r[i], u[i]));
  PetscCall(rhs(ctx, 1, t + SgSSPRK3StageTime[1] * dt, w1, r));
  for (PetscInt i = 0; i < n; i++) {
    Vec tmp;
    /* the stage lands in r, which is read in the same pass; swapping saves a copy */
    PetscCall(VecAXPBYPCZ(r[i], 0.75, 0.25, 0.25 * dt, u[i], w1[i]));
    tmp   = w2[i];
    w2[i] = r[i];
    r[i]  = tmp;
  }
  PetscCall(rhs(ctx, 2, t + SgSSPRK3StageTime[2] * dt, w2, r));
  for (PetscInt i = 0; i < n; i++) PetscCall(VecAXPBYPCZ(u[i], 2.0 / 3.0, 2.0 * dt / 3.0, 1.0 / 3.0, w2[i], r[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}
