/* SgSlot: a swappable operator a solver exposes, with a typed signature.

   A slot has providers: the solver's own and, later, surrogates; a swap policy chooses which one
   serves each call. This header fixes the signatures; the solver's own provider is set with
   SgSlotSetProvider. The policy machinery (static/schedule/adaptive) is added with the surrogates.

   Signatures:
     "md.forces"      (positions, types, box) -> energy, forces, virial
     "field.advance"  (state history) -> next state
     "field.superres" (coarse block) -> values at points */
#pragma once
#include <petscsys.h>
#include "sgsolver.h"

/* md.forces: n local atoms (owned atoms first, then nghost ghost atoms), x[3*(n+nghost)] positions,
   type[n+nghost], box[9] row-major cell vectors (a, b, c as rows). Outputs: *energy of the owned
   atoms' interactions (summed over ranks by the caller), f[3*(n+nghost)] forces (ghost forces are
   reverse-communicated by the caller when the provider uses Newton's third law), virial[9]
   (sum of -r_ij (x) f_ij convention as in LAMMPS, energy units). Units are the solver's. */
typedef struct {
  PetscInt         n, nghost;
  const PetscReal *x;
  const PetscInt  *type;
  PetscReal        box[9];
} SgForcesInput;
typedef struct {
  PetscReal  energy;
  PetscReal *f;
  PetscReal  virial[9];
} SgForcesOutput;
typedef PetscErrorCode (*SgForcesFn)(void *ctx, const SgForcesInput *, SgForcesOutput *);
/* Uncertainty of an md.forces provider for the same input: *deviation is the max over this rank's
   owned atoms of the force deviation (e.g. DeePMD-kit's model deviation: max_i sqrt(<|F_i - <F_i>|^2>)
   over an ensemble of models), in force units. The slot reduces it over ranks. */
typedef PetscErrorCode (*SgForcesUncertaintyFn)(void *ctx, const SgForcesInput *, PetscReal *deviation);

PETSC_EXTERN PetscErrorCode SgSlotCreate(const char name[], SgSlot *);
PETSC_EXTERN PetscErrorCode SgSlotGetName(SgSlot, const char **);
/* Set the provider named pname (e.g. "lj", "tb", "deepmd"); fn's type must match the signature. */
PETSC_EXTERN PetscErrorCode SgSlotSetProvider(SgSlot, const char pname[], void (*fn)(void), void *ctx);
PETSC_EXTERN PetscErrorCode SgSlotGetProvider(SgSlot, const char **pname, void (**fn)(void), void **ctx);
/* Serve one md.forces call with the current provider; counts calls per provider. */
PETSC_EXTERN PetscErrorCode SgSlotComputeForces(SgSlot, const SgForcesInput *, SgForcesOutput *);
PETSC_EXTERN PetscErrorCode SgSlotDestroy(SgSlot *);
