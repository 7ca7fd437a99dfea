/* The md.forces slot kind: (positions, types, box) -> energy, forces, virial.

   Its signature (SgForcesFn), its provider description (SgForcesProvider: the function plus what an
   MD engine must know to call it) and its provider registry live here, in the core, so that every
   module meets the others only through this header:
     - a solver's own providers register by name: the MD engine's "lj" (physics/md), tight binding's
       "tb" (physics/dft), at start-up in src/cli/register.c;
     - a surrogate type that can serve md.forces (e.g. "deepmd") is not registered here at all: asking
       for a name that is no registered provider but a registered SgSurrogate type creates that
       surrogate and asks it for its provider (SgSurrogateGetForcesProvider).
   The deck chooses by name: md: {forces: lj}, md: {forces: tb}, md: {forces: deepmd, deepmd_models: [...]},
   and md: {surrogate: deepmd} for a second provider that a swap policy may switch to.

   Units are the MD solver's (LAMMPS "lj" or "metal" conventions). */
#pragma once
#include <petscsys.h>
#include "sgsys.h"

typedef struct _p_SgSurrogate *SgSurrogate;

/* n local atoms (owned atoms first, then nghost ghost atoms), x[3*(n+nghost)] positions,
   type[n+nghost], box[9] row-major cell vectors (a, b, c as rows). Outputs: *energy of the owned
   atoms' interactions (summed over ranks by the caller), f[3*(n+nghost)] forces (ghost forces are
   reverse-communicated by the caller when the provider uses Newton's third law), virial[9]
   (sum of -r_ij (x) f_ij convention as in LAMMPS, energy units). */
typedef struct {
  PetscInt         n, nghost;
  const PetscReal *x;
  const PetscInt  *type;
  PetscReal        box[9];
  /* Optional (NULL: fold ghosts yourself): adds the ghost rows of f[3*(n+nghost)] onto the owned atoms
     they image, on whichever rank owns them -- the MD engine's reverse communication, for code that
     needs complete per-atom forces outside the force call (an uncertainty estimate). Collective. */
  PetscErrorCode (*fold_ghosts)(void *fold_ctx, PetscReal *f);
  void            *fold_ctx;
} SgForcesInput;
typedef struct {
  PetscReal  energy;
  PetscReal *f;
  PetscReal  virial[9];
} SgForcesOutput;
typedef PetscErrorCode (*SgForcesFn)(void *ctx, const SgForcesInput *, SgForcesOutput *);
/* Uncertainty of a provider for the same input: *deviation is the max over this rank's owned atoms
   of the force deviation (e.g. DeePMD-kit's model deviation: max_i sqrt(<|F_i - <F_i>|^2>) over an
   ensemble of models), in force units. The slot reduces it over ranks. */
typedef PetscErrorCode (*SgForcesUncertaintyFn)(void *ctx, const SgForcesInput *, PetscReal *deviation);

/* What a provider's constructor is told. It is called inside the MD solver's options block, so it may
   read its own options with the SgOptions* getters (PetscOptionsObject is passed for that). */
typedef struct {
  MPI_Comm          comm;
  const char       *units;        /* "lj" or "metal" (LAMMPS conventions) */
  PetscReal         boltz;        /* kB in energy/temperature of those units */
  PetscInt          ntypes;
  const char      (*tname)[16];   /* type names: element symbols where the input gave them */
  const PetscReal  *mass;         /* per type, mass units */
  const char       *prefix;       /* options prefix of the calling solver, "md_" */
  PetscOptionItems *PetscOptionsObject;
  void             *engine;       /* the calling engine's internals (its own providers use its neighbour list) */
} SgForcesProviderInfo;

typedef struct {
  char       name[64];
  SgForcesFn fn;
  void      *ctx;
  PetscReal  cutoff;  /* interaction range, length units: ghost atoms are exchanged out to cutoff + skin */
  PetscBool  newton;  /* fn writes forces on ghosts (reverse-communicated by the engine) */
  PetscErrorCode (*destroy)(void *ctx);
  PetscBool  lazy_energy; /* the engine's own use only: energy/virial computed only when asked for */
  /* Optional: an estimate of this provider's force error for the same input, which the adaptive swap
     policy needs (e.g. the model deviation of K >= 2 Deep Potentials). */
  SgForcesUncertaintyFn uncertainty;
  /* Optional: the model deviation record of an ensemble provider at the same input, DeePMD-kit's
     model_devi.out columns (collective on comm; all ranks get it): devi = {max, min, avg over the 9
     components of the virial deviation / N; max, min, avg over all atoms of the force deviation}. */
  PetscErrorCode (*model_devi)(void *ctx, const SgForcesInput *, MPI_Comm comm, PetscReal devi[6]);
  SgSurrogate surrogate; /* set when a surrogate serves: the provider owns it */
} SgForcesProvider;

typedef PetscErrorCode (*SgForcesProviderCreateFn)(const SgForcesProviderInfo *, SgForcesProvider *);
PETSC_EXTERN PetscErrorCode SgForcesProviderRegister(const char name[], SgForcesProviderCreateFn);
/* A provider by name: a registered provider, else a surrogate type that serves md.forces. */
PETSC_EXTERN PetscErrorCode SgForcesProviderCreate(const char name[], const SgForcesProviderInfo *, SgForcesProvider *);
PETSC_EXTERN PetscErrorCode SgForcesProviderDestroy(SgForcesProvider *);
/* comma-separated names that SgForcesProviderCreate accepts (providers, then md.forces-capable surrogates) */
PETSC_EXTERN PetscErrorCode SgForcesProviderNames(char names[], size_t len);
