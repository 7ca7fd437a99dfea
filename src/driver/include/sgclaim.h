/* Claims on ensemble members shared by several jobs (claim.c says how they work). */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"

/* Create the claim path atomically; got says whether this process holds it now. A stale claim
   (owner on this host gone, or untouched for stale seconds) is taken over. owner (may be NULL)
   receives the holder's line when the claim is someone else's. Not collective. */
PETSC_EXTERN PetscErrorCode SgClaimTry(const char path[], PetscReal stale, PetscBool *got, char owner[], size_t len);
PETSC_EXTERN void           SgClaimRelease(const char path[]);

/* While a claim is held: touch it every `every` seconds from a thread, so others see it alive. */
typedef struct _n_SgClaimBeat *SgClaimBeat;
PETSC_EXTERN PetscErrorCode SgClaimBeatStart(const char path[], PetscReal every, SgClaimBeat *);
PETSC_EXTERN PetscErrorCode SgClaimBeatStop(SgClaimBeat *);
