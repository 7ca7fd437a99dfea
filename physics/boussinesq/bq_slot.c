/* What the two field slots of the solver (field.advance: bq_advance.c, field.superres: bq_superres.c)
   share: the description of the solver a surrogate provider is created with, the sub-stepping of
   the solver to a given time (the end-of-run report of a slot's counts is io/slot's SgSlotReport). */
#include <string.h>
#include "bq.h"
#include "sgslot.h"
#include "sgoutput.h"

static const char *const ParamNames[2] = {"rayleigh", "prandtl"};

void SgBqProviderInfo(Bq *bq, MPI_Comm comm, PetscOptionItems *PetscOptionsObject, PetscReal param[2], SgFieldProviderInfo *info)
{
  memset(info, 0, sizeof *info);
  param[0]                 = bq->Ra;
  param[1]                 = bq->Pr;
  info->comm               = comm;
  info->nch                = SG_BQ_NCH;
  info->channel            = SgBqChannels;
  info->nparam             = 2;
  info->param_name         = ParamNames;
  info->param              = param;
  info->hi[1]              = bq->Lz;
  info->hi[2]              = bq->Lx;
  info->periodic[2]        = PETSC_TRUE;
  info->prefix             = "boussinesq_";
  info->PetscOptionsObject = PetscOptionsObject;
}

/* Step bq from *t to exactly target with its own CFL step (SgBqTimeStepData), the last step
   shortened to land on target. A last step within 1e-9 of the CFL step takes the CFL step itself
   (and *t becomes target): where the steps of a plain run land on target (a fixed step that divides
   the interval, say), the same steps are taken, so the results are the same bit for bit. */
PetscErrorCode SgBqAdvanceTo(Bq *bq, PetscReal *t, PetscReal target)
{
  PetscFunctionBegin;
  while (*t < target) {
    PetscReal h, r = target - *t;
    PetscBool last;
    PetscCall(SgBqTimeStepData(bq, &h));
    last = r <= h * (1 + 1e-9) ? PETSC_TRUE : PETSC_FALSE;
    if (last && r < h * (1 - 1e-9)) h = r;
    PetscCall(SgBqStepData(bq, h));
    *t = last ? target : *t + h;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "<label>: <solver> (solver) served N calls, <surrogate> (surrogate) M (fraction f); S switches, R
   surrogate answers rejected", and /report/<label>_{solver_calls, surrogate_calls, switches, rejected,
   surrogate_fraction}. */
/* Drop the first of n entries of width w (a ring of snapshots, oldest first): entries 1 .. n-1 move
   to 0 .. n-2. */
PetscErrorCode SgBqShiftOut(PetscReal *a, PetscInt n, PetscInt w)
{
  PetscFunctionBegin;
  if (n > 1) PetscCall(PetscArraymove(a, a + w, (n - 1) * w));
  PetscFunctionReturn(PETSC_SUCCESS);
}
