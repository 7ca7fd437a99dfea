/* SSP-RK3 (Shu & Osher, J. Comput. Phys. 77, 439 (1988)): the one copy of the three-stage,
   third-order strong-stability-preserving Runge-Kutta step that the explicit solvers share
   (physics/vlasov, physics/sst).

   Why not PETSc's TSSSP: its third-order scheme (rks3) has s = n^2 >= 4 stages, so it is another
   method with another stability limit (the verified CFL limits in docs/vlasov.md are those of the
   three-stage scheme); and our solvers need what a TS right-hand side does not give: the Vlasov
   solver advances several species vectors coupled through one field solve per stage, and the SST
   solver integrates its sources with the stages' weights. */
#pragma once
#include <petscvec.h>
#include "sgcompat.h"

/* Stage times (as fractions of dt) and quadrature weights of the scheme: c = (0, 1, 1/2),
   b = (1/6, 1/6, 2/3). A solver that integrates a quantity alongside the state uses these. */
PETSC_EXTERN const PetscReal SgSSPRK3StageTime[3];
PETSC_EXTERN const PetscReal SgSSPRK3Weight[3];

/* r[i] = L(x)[i] for all n vectors at once (stage 0, 1, 2 at time t + c[stage] dt): a coupled
   system (species sharing a field) solves its coupling from all of x before any r. */
typedef PetscErrorCode (*SgSSPRK3RHS)(void *ctx, PetscInt stage, PetscReal t, Vec x[], Vec r[]);

/* One step of n coupled vectors u[] from t to t + dt, each stage one fused vector update:
     w1 = u + dt L(u)
     w2 = 3/4 u + 1/4 w1 + dt/4 L(w1)    (computed in r, whose vector then changes place with w2)
     u  = 1/3 u + 2/3 w2 + 2 dt/3 L(w2)
   w1, w2, r are work vectors shaped like u. On return w2[i] and r[i] may have exchanged their
   vectors: a caller that keeps them elsewhere stores the arrays' entries back. */
PETSC_EXTERN PetscErrorCode SgSSPRK3Step(PetscInt n, Vec u[], Vec w1[], Vec w2[], Vec r[], PetscReal t, PetscReal dt, SgSSPRK3RHS rhs, void *ctx);
