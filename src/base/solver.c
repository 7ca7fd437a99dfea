/* SgSolver: the generic part of every solver (life cycle, registry, declared diagnostics/slots). */
#include <string.h>
#include "sgsolverimpl.h"
#include "sgslot.h"

PetscClassId      SG_SOLVER_CLASSID;
PetscFunctionList SgSolverList;
PetscLogEvent     SG_SOLVER_Step, SG_SOLVER_Diagnose, SG_SOLVER_Output, SG_SOLVER_Checkpoint;
static PetscBool  SgSolverPackageInitialized;

static PetscErrorCode SgSolverFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&SgSolverList));
  SgSolverPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverInitializePackage(void)
{
  PetscFunctionBegin;
  if (SgSolverPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  SgSolverPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("SgSolver", &SG_SOLVER_CLASSID));
  PetscCall(PetscLogEventRegister("SgSolverStep", SG_SOLVER_CLASSID, &SG_SOLVER_Step));
  PetscCall(PetscLogEventRegister("SgSolverDiagnose", SG_SOLVER_CLASSID, &SG_SOLVER_Diagnose));
  PetscCall(PetscLogEventRegister("SgSolverOutput", SG_SOLVER_CLASSID, &SG_SOLVER_Output));
  PetscCall(PetscLogEventRegister("SgSolverCheckpt", SG_SOLVER_CLASSID, &SG_SOLVER_Checkpoint));
  PetscCall(PetscRegisterFinalize(SgSolverFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverRegister(const char name[], PetscErrorCode (*create)(SgSolver))
{
  PetscFunctionBegin;
  PetscCall(SgSolverInitializePackage());
  PetscCall(PetscFunctionListAdd(&SgSolverList, name, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverCreate(MPI_Comm comm, SgSolver *solver)
{
  SgSolver s;

  PetscFunctionBegin;
  PetscValidPointer(solver, 2);
  PetscCall(SgSolverInitializePackage());
  PetscCall(PetscHeaderCreate(s, SG_SOLVER_CLASSID, "SgSolver", "Physics solver", "SgSolver", comm, SgSolverDestroy, SgSolverView));
  s->progress_diag = -1;
  *solver          = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverSetType(SgSolver s, SgSolverType type)
{
  PetscErrorCode (*create)(SgSolver);
  PetscBool match;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)s, type, &match));
  if (match) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFunctionListFind(SgSolverList, type, &create));
  if (!create) {
    char known[512];
    PetscCall(SgFunctionListNames(SgSolverList, known, sizeof known));
    SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "Unknown solver type '%s' (option -sim_solver); this build has: %s", type, known);
  }
  PetscCheck(!s->data, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "SgSolverSetType() may be called once per solver");
  PetscCall(PetscObjectChangeTypeName((PetscObject)s, type));
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)s, type));
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)s, "_"));
  PetscCall((*create)(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetType(SgSolver s, SgSolverType *type)
{
  PetscFunctionBegin;
  *type = ((PetscObject)s)->type_name;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverSetFromOptions(SgSolver s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SOLVER_CLASSID, 1);
  PetscCheck(((PetscObject)s)->type_name, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "Set the solver type (option -sim_solver) before SgSolverSetFromOptions()");
  PetscObjectOptionsBegin((PetscObject)s);
  if (s->ops->setfromoptions) PetscCall((*s->ops->setfromoptions)(s, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverSetUp(SgSolver s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SOLVER_CLASSID, 1);
  if (s->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  if (s->ops->setup) PetscCall((*s->ops->setup)(s));
  s->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetTimeStep(SgSolver s, PetscReal t, PetscReal *dtmax)
{
  PetscFunctionBegin;
  *dtmax = PETSC_MAX_REAL;
  if (s->ops->timestep) PetscCall((*s->ops->timestep)(s, t, dtmax));
  PetscCheck(*dtmax > 0 && !PetscIsInfOrNanReal(*dtmax), PetscObjectComm((PetscObject)s), PETSC_ERR_NOT_CONVERGED, "Solver %s returned a stable time step of %g at t = %g: the state is probably corrupt (NaN or blow-up)", ((PetscObject)s)->type_name, (double)*dtmax, (double)t);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverStep(SgSolver s, PetscReal t, PetscReal dt)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->step, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Solver type %s cannot step", ((PetscObject)s)->type_name);
  PetscCall(PetscLogEventBegin(SG_SOLVER_Step, s, 0, 0, 0));
  PetscCall((*s->ops->step)(s, t, dt));
  PetscCall(PetscLogEventEnd(SG_SOLVER_Step, s, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverDiagnose(SgSolver s, PetscReal t, PetscReal values[])
{
  PetscFunctionBegin;
  if (!s->ndiag || !s->ops->diagnose) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(SG_SOLVER_Diagnose, s, 0, 0, 0));
  PetscCall((*s->ops->diagnose)(s, t, values));
  PetscCall(PetscLogEventEnd(SG_SOLVER_Diagnose, s, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverWriteFields(SgSolver s, SgOutput out)
{
  PetscFunctionBegin;
  if (!s->ops->writefields) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(SG_SOLVER_Output, s, 0, 0, 0));
  PetscCall((*s->ops->writefields)(s, out));
  PetscCall(PetscLogEventEnd(SG_SOLVER_Output, s, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverCheckpoint(SgSolver s, SgCheckpoint chk)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->checkpoint, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Solver type %s cannot write checkpoints: set sim checkpoint_every to 0", ((PetscObject)s)->type_name);
  PetscCall(PetscLogEventBegin(SG_SOLVER_Checkpoint, s, 0, 0, 0));
  PetscCall((*s->ops->checkpoint)(s, chk));
  PetscCall(PetscLogEventEnd(SG_SOLVER_Checkpoint, s, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverRestart(SgSolver s, SgCheckpoint chk)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->checkpoint, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "Solver type %s cannot restart from a checkpoint", ((PetscObject)s)->type_name);
  PetscCall((*s->ops->checkpoint)(s, chk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverContribute(SgSolver s, const char kind[], const char path[])
{
  PetscBool can = PETSC_FALSE;

  PetscFunctionBegin;
  if (s->ops->contribute) PetscCall((*s->ops->contribute)(s, kind, path, &can));
  PetscCheck(can, PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "Solver type %s cannot contribute %s samples", ((PetscObject)s)->type_name, kind);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverTypeContributes(SgSolverType type, const char kind[], PetscBool *can)
{
  SgSolver s;

  PetscFunctionBegin;
  *can = PETSC_FALSE;
  PetscCall(SgSolverCreate(PETSC_COMM_SELF, &s));
  PetscCall(SgSolverSetType(s, type));
  if (s->ops->contribute) PetscCall((*s->ops->contribute)(s, kind, NULL, can));
  PetscCall(SgSolverDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverReport(SgSolver s, SgOutput out)
{
  PetscFunctionBegin;
  if (s->ops->report) PetscCall((*s->ops->report)(s, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverView(SgSolver s, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)s), &viewer));
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)s, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (iascii) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    if (s->nslots) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "slots:"));
      for (PetscInt i = 0; i < s->nslots; i++) {
        const char *name;
        PetscCall(SgSlotGetName(s->slots[i], &name));
        PetscCall(PetscViewerASCIIPrintf(viewer, " %s", name));
      }
      PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    }
    if (s->ops->view) PetscCall((*s->ops->view)(s, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverDestroy(SgSolver *s)
{
  PetscFunctionBegin;
  if (!*s) PetscFunctionReturn(PETSC_SUCCESS);
  PetscValidHeaderSpecific(*s, SG_SOLVER_CLASSID, 1);
  if (--((PetscObject)(*s))->refct > 0) {
    *s = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((*s)->ops->destroy) PetscCall((*(*s)->ops->destroy)(*s));
  for (PetscInt i = 0; i < (*s)->ndiag; i++) {
    PetscCall(PetscFree((*s)->diag_name[i]));
    PetscCall(PetscFree((*s)->diag_units[i]));
  }
  for (PetscInt i = 0; i < (*s)->nslots; i++) PetscCall(SgSlotDestroy(&(*s)->slots[i]));
  PetscCall(PetscHeaderDestroy(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverAddDiagnostic(SgSolver s, const char name[], const char units[], PetscInt *index)
{
  PetscFunctionBegin;
  PetscCheck(s->ndiag < SG_SOLVER_MAX_DIAG, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "At most %d diagnostics per solver", SG_SOLVER_MAX_DIAG);
  for (PetscInt i = 0; i < s->ndiag; i++) PetscCheck(strcmp(s->diag_name[i], name), PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG, "Diagnostic '%s' declared twice", name);
  PetscCall(PetscStrallocpy(name, &s->diag_name[s->ndiag]));
  PetscCall(PetscStrallocpy(units ? units : "", &s->diag_units[s->ndiag]));
  if (index) *index = s->ndiag;
  s->ndiag++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetDiagnostics(SgSolver s, PetscInt *n, const char *const **names, const char *const **units)
{
  PetscFunctionBegin;
  if (n) *n = s->ndiag;
  if (names) *names = (const char *const *)s->diag_name;
  if (units) *units = (const char *const *)s->diag_units;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverSetProgressDiagnostic(SgSolver s, PetscInt index)
{
  PetscFunctionBegin;
  PetscCheck(index >= -1 && index < s->ndiag, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE, "Progress diagnostic %" PetscInt_FMT " not declared", index);
  s->progress_diag = index;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetProgressDiagnostic(SgSolver s, PetscInt *index)
{
  PetscFunctionBegin;
  *index = s->progress_diag;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverDeclareSlot(SgSolver s, SgSlot slot)
{
  PetscFunctionBegin;
  PetscCheck(s->nslots < SG_SOLVER_MAX_SLOTS, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "At most %d slots per solver", SG_SOLVER_MAX_SLOTS);
  s->slots[s->nslots++] = slot;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetSlot(SgSolver s, const char name[], SgSlot *slot)
{
  PetscFunctionBegin;
  *slot = NULL;
  for (PetscInt i = 0; i < s->nslots; i++) {
    const char *sn;
    PetscCall(SgSlotGetName(s->slots[i], &sn));
    if (!strcmp(sn, name)) *slot = s->slots[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverSetRunInfo(SgSolver s, const SgSolverRunInfo *run)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SOLVER_CLASSID, 1);
  s->run = *run;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverGetRunInfo(SgSolver s, const SgSolverRunInfo **run)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(s, SG_SOLVER_CLASSID, 1);
  *run = &s->run;
  PetscFunctionReturn(PETSC_SUCCESS);
}
