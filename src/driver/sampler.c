/* Parameter samplers for ensembles: grid, uniform random, Latin hypercube (McKay, Beckman and
   Conover, Technometrics 21 (1979) 239). All draw from the counter-based generator, so the points
   depend only on (seed, member, parameter), never on the number of ranks. */
#include "sgensemble.h"

const char *const SgSamplerTypes[] = {"grid", "uniform", "lhs", "SgSamplerType", "SG_SAMPLER_", NULL};

PetscErrorCode SgSamplerUnitPoints(SgSamplerType type, PetscInt members, PetscInt d, const PetscInt points[], uint64_t seed, PetscReal u[])
{
  PetscFunctionBegin;
  switch (type) {
  case SG_SAMPLER_GRID: {
    PetscInt total = 1;
    for (PetscInt j = 0; j < d; j++) total *= points[j];
    PetscCheck(total == members, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "Grid sampler: ensemble points multiply to %" PetscInt_FMT " but ensemble members is %" PetscInt_FMT, total, members);
    for (PetscInt m = 0; m < members; m++) {
      PetscInt rest = m;
      for (PetscInt j = 0; j < d; j++) {
        u[m * d + j] = ((rest % points[j]) + 0.5) / points[j];
        rest /= points[j];
      }
    }
  } break;
  case SG_SAMPLER_UNIFORM:
    for (PetscInt m = 0; m < members; m++)
      for (PetscInt j = 0; j < d; j++) u[m * d + j] = SgRandomUniform(seed, (uint64_t)j, (uint64_t)m);
    break;
  case SG_SAMPLER_LHS: {
    /* per parameter: a seeded permutation of the N strata (Fisher-Yates), one point per stratum */
    PetscInt *perm;
    PetscCall(PetscMalloc1(members, &perm));
    for (PetscInt j = 0; j < d; j++) {
      for (PetscInt m = 0; m < members; m++) perm[m] = m;
      for (PetscInt m = members - 1; m > 0; m--) {
        PetscInt k = (PetscInt)(SgRandomBits(seed, 1000 + (uint64_t)j, (uint64_t)m) % (uint64_t)(m + 1));
        PetscInt t = perm[m];
        perm[m]    = perm[k];
        perm[k]    = t;
      }
      for (PetscInt m = 0; m < members; m++) u[m * d + j] = (perm[m] + SgRandomUniform(seed, (uint64_t)j, (uint64_t)m)) / members;
    }
    PetscCall(PetscFree(perm));
  } break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
