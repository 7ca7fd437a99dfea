/* Force providers for the "md" solver's md.forces slot (public: other modules register here).

   A provider is a function with the SgForcesFn signature of src/include/sgslot.h plus what the MD
   engine must know to call it: its interaction range (ghost atoms are exchanged out to
   cutoff + skin) and whether it returns forces on ghost atoms that must be added back to their
   owners (Newton's third law across sub-domains).  The deck chooses one by name:
       md: {forces: lj}        (built in)      md: {forces: tb}   (physics/dft registers "tb")
   A module adds a provider with SgMDForceProviderRegister(name, create) before the run starts
   (src/cli/register.c is the place); asking for a name nobody registered is an error that lists
   the registered names.

   The create function is called inside the md solver's options block, so it may read its own
   options with the SgOptions* getters (PetscOptionsObject is passed for that), after the atom
   types are known.  Every call of fn gets all owned atoms first, then the ghost atoms (periodic
   images and neighbours' atoms) within cutoff + skin of the sub-domain; box[] is the full cell.

   Runtime swap: md_surrogate NAME creates a second provider the same way; the md.forces slot's
   swap policy (md_swap_policy ..., docs/swap.md) picks one of the two for every evaluation. The
   ghost range is the larger of the two cutoffs; the engine applies the Newton flag of whichever
   provider served the call. */
#pragma once
#include <petscsys.h>
#include "sgslot.h"

typedef struct {
  MPI_Comm          comm;
  const char       *units;        /* "lj" or "metal" (LAMMPS conventions) */
  PetscReal         boltz;        /* kB in energy/temperature of those units */
  PetscInt          ntypes;
  const char      (*tname)[16];   /* type names: element symbols where the input gave them */
  const PetscReal  *mass;         /* per type, mass units */
  const char       *prefix;       /* options prefix of the md solver, "md_" */
  PetscOptionItems *PetscOptionsObject;
  void             *engine;       /* MD internals (the built-in providers use its neighbour list) */
} SgMDForceInfo;

typedef struct {
  char       name[64];
  SgForcesFn fn;
  void      *ctx;
  PetscReal  cutoff;  /* interaction range, length units */
  PetscBool  newton;  /* fn writes forces on ghosts (reverse-communicated by the engine) */
  PetscErrorCode (*destroy)(void *ctx);
  PetscBool  lazy_energy; /* built-in use only: energy/virial computed only when asked for */
  /* Optional (NULL by default): an estimate of this provider's force error for the same input,
     which the adaptive swap policy needs when the provider is md_surrogate (e.g. the deepmd
     provider's model deviation with K >= 2 models). Set it in the create function. */
  SgForcesUncertaintyFn uncertainty;
  /* Optional: the model deviation record of an ensemble provider at the same input, DeePMD-kit's
     model_devi.out columns (collective on comm; all ranks get it): devi = {max, min, avg over the 9
     components of the virial deviation / N; max, min, avg over all atoms of the force deviation}.
     md_model_devi_every writes it. */
  PetscErrorCode (*model_devi)(void *ctx, const SgForcesInput *, MPI_Comm comm, PetscReal devi[6]);
} SgMDForceProvider;

typedef PetscErrorCode (*SgMDForceProviderCreateFn)(const SgMDForceInfo *, SgMDForceProvider *);
PETSC_EXTERN PetscErrorCode SgMDForceProviderRegister(const char name[], SgMDForceProviderCreateFn);
PETSC_EXTERN PetscErrorCode SgMDForceProviderCreate(const char name[], const SgMDForceInfo *, SgMDForceProvider *);
/* comma-separated registered names */
PETSC_EXTERN PetscErrorCode SgMDForceProviderNames(char names[], size_t len);
