/* One force evaluation as the MD engine performs it (the providers and their registry are the core's
   md.forces slot kind, sgforces.h):
   zero forces -> provider (through the slot, which counts calls and may later swap in a
   surrogate) -> reverse communication of ghost forces for Newton providers -> global sums of
   energy and virial. */
#include "mdimpl.h"

/* After a provider has filled dom->f: ghost forces back to their owners when that provider used
   Newton's third law, then global energy and virial (skipped when a lazy provider was not asked
   for them: energy_step = -1 then says they are stale). */
static PetscErrorCode Finish(SgMD *md, const SgForcesProvider *p, const SgForcesOutput *out)
{
  SgMDDomain *dom = md->dom;
  PetscReal   loc[10], glob[10];

  PetscFunctionBegin;
  if (p->newton) {
    PetscCall(PetscLogEventBegin(md->ev_comm, 0, 0, 0, 0));
    PetscCall(SgMDDomainReverse(dom));
    PetscCall(PetscLogEventEnd(md->ev_comm, 0, 0, 0, 0));
  }
  if (p->lazy_energy && !md->eflag) {
    md->energy_step = -1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  loc[0] = out->energy;
  for (int k = 0; k < 9; k++) loc[1 + k] = out->virial[k];
  PetscCall(MPIU_Allreduce(loc, glob, 10, MPIU_REAL, MPIU_SUM, dom->comm));
  md->pe = glob[0];
  for (int k = 0; k < 9; k++) md->virial[k] = glob[1 + k];
  md->energy_step = md->fstep;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FoldGhosts(void *ctx, PetscReal *f)
{
  PetscFunctionBegin;
  PetscCall(SgMDDomainReverseArray((SgMDDomain *)ctx, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The provider's view of the current configuration: owned atoms, ghosts, cell, ghost folding. */
static void FillInput(SgMD *md, SgForcesInput *in)
{
  SgMDDomain *dom = md->dom;

  in->fold_ghosts = FoldGhosts;
  in->fold_ctx    = dom;
  in->n      = dom->nlocal;
  in->nghost = dom->nghost;
  in->x      = dom->x;
  in->type   = dom->type;
  for (int k = 0; k < 9; k++) in->box[k] = dom->box.h[k];
}

static PetscErrorCode Prepare(SgMD *md, SgForcesInput *in, SgForcesOutput *out)
{
  SgMDDomain *dom = md->dom;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(dom->f, 3 * (dom->nlocal + dom->nghost)));
  FillInput(md, in);
  out->energy = 0;
  out->f      = dom->f;
  for (int k = 0; k < 9; k++) out->virial[k] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Energy (global) and forces (ghost rows folded onto their owners) of provider p at the current
   configuration into f[3 (nlocal + nghost)], energy computed whatever md->eflag says; the trajectory's
   forces dom->f and the thermo state are left as they are. */
static PetscErrorCode EvalProvider(SgMD *md, const SgForcesProvider *p, PetscReal *f, PetscReal *energy)
{
  SgMDDomain    *dom = md->dom;
  PetscReal     *keep = dom->f;
  PetscBool      eflag = md->eflag;
  SgForcesInput  in;
  SgForcesOutput out;

  PetscFunctionBegin;
  dom->f    = f;
  md->eflag = PETSC_TRUE;
  PetscCall(Prepare(md, &in, &out));
  PetscCall(PetscLogEventBegin(md->ev_force, 0, 0, 0, 0));
  PetscCall(p->fn(p->ctx, &in, &out));
  PetscCall(PetscLogEventEnd(md->ev_force, 0, 0, 0, 0));
  if (p->newton) PetscCall(SgMDDomainReverse(dom));
  PetscCall(MPIU_Allreduce(&out.energy, energy, 1, MPIU_REAL, MPIU_SUM, dom->comm));
  md->eflag = eflag;
  dom->f    = keep;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At a switch of md.forces provider the energy the dynamics conserves changes from the outgoing
   provider's to the incoming one's. econserved carries on across it by adding their difference at
   the switch configuration as each would report it after the half kick that follows this force call
   (h = md->hkick, v the velocities before it):
     [KE(v + h F_out/m) + U_out] - [KE(v + h F_in/m) + U_in]
   so econserved is continuous at the switch to round-off, not just to O(h |F_out - F_in| v). The
   outgoing provider is evaluated once more (directly, not through the slot: the swap statistics
   count trajectory calls), one extra evaluation per switch. */
static PetscErrorCode SwitchEnergy(SgMD *md)
{
  SgMDDomain *dom = md->dom;
  PetscInt    n   = 3 * (dom->nlocal + dom->nghost);
  PetscBool   switched, rejected;
  PetscReal   uout, loc = 0, dke;

  PetscFunctionBegin;
  PetscCall(SgSlotGetLastSwitch(md->slot, &switched, &rejected));
  if (!switched) PetscFunctionReturn(PETSC_SUCCESS);
  if (rejected) { /* the outgoing provider is the surrogate, whose answer here was garbage */
    PetscCall(PetscPrintf(dom->comm, "md: step %" PetscInt_FMT ": the outgoing surrogate's answer at this switch was rejected: econserved jumps here\n", md->fstep));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SgMDEnsureEnergy(md)); /* U_in (a lazy provider skipped it) */
  if (n > md->nfscratch) {
    PetscCall(PetscFree(md->fscratch));
    md->nfscratch = n + 64;
    PetscCall(PetscMalloc1(md->nfscratch, &md->fscratch));
  }
  PetscCall(EvalProvider(md, md->served_sur ? &md->prov : &md->sprov, md->fscratch, &uout));
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscReal c = md->hkick * md->units.ftm2v / md->mass[dom->type[i]];
    for (int a = 0; a < 3; a++) {
      PetscReal v = dom->v[3 * i + a], vo = v + c * md->fscratch[3 * i + a], vi = v + c * dom->f[3 * i + a];
      loc += md->mass[dom->type[i]] * (vo * vo - vi * vi);
    }
  }
  PetscCall(MPIU_Allreduce(&loc, &dke, 1, MPIU_REAL, MPIU_SUM, dom->comm));
  md->eswitch += uout - md->pe + 0.5 * md->units.mvv2e * dke;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The force evaluation that drives the trajectory, at the configuration of step md->fstep: the
   slot's policy picks the provider (the solver's, or the surrogate). A solver-served call that the
   policy flagged (adaptive above trust_hi, or a rejected surrogate answer) is kept for retraining. */
PetscErrorCode SgMDComputeForces(SgMD *md)
{
  SgForcesInput  in;
  SgForcesOutput out;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(md->ev_force, 0, 0, 0, 0));
  PetscCall(Prepare(md, &in, &out));
  PetscCall(SgSlotSetStep(md->slot, md->fstep));
  PetscCall(SgSlotComputeForces(md->slot, &in, &out));
  PetscCall(PetscLogEventEnd(md->ev_force, 0, 0, 0, 0));
  md->served_sur = PETSC_FALSE;
  md->flagged    = PETSC_FALSE;
  md->uncertainty = -1;
  if (md->has_sur) PetscCall(SgSlotGetLastCall(md->slot, &md->served_sur, &md->flagged, &md->uncertainty));
  PetscCall(Finish(md, md->served_sur ? &md->sprov : &md->prov, &out));
  if (md->has_sur) PetscCall(SwitchEnergy(md));
  if (md->has_sur && md->flagged && !md->served_sur) PetscCall(SgMDRetrainFrame(md));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Energy and virial of the current configuration (step md->fstep) for thermo output, diagnostics
   and retraining frames.  Providers that skip them on ordinary steps are re-run here into scratch
   forces - the provider that served this configuration, called directly (not through the slot, so
   the swap statistics count trajectory evaluations only): the forces that drive the trajectory
   are never recomputed, so the trajectory does not depend on the output cadence. */
PetscErrorCode SgMDEnsureEnergy(SgMD *md)
{
  SgMDDomain              *dom = md->dom;
  PetscReal               *f   = dom->f;
  PetscInt                 n   = 3 * (dom->nlocal + dom->nghost);
  const SgForcesProvider *p   = md->served_sur ? &md->sprov : &md->prov;
  SgForcesInput            in;
  SgForcesOutput           out;
  PetscBool                eflag = md->eflag;

  PetscFunctionBegin;
  if (md->energy_step == md->fstep) PetscFunctionReturn(PETSC_SUCCESS);
  if (n > md->nfscratch) {
    PetscCall(PetscFree(md->fscratch));
    md->nfscratch = n + 64;
    PetscCall(PetscMalloc1(md->nfscratch, &md->fscratch));
  }
  dom->f    = md->fscratch;
  md->eflag = PETSC_TRUE;
  PetscCall(Prepare(md, &in, &out));
  PetscCall(PetscLogEventBegin(md->ev_force, 0, 0, 0, 0));
  PetscCall(p->fn(p->ctx, &in, &out));
  PetscCall(PetscLogEventEnd(md->ev_force, 0, 0, 0, 0));
  PetscCall(Finish(md, p, &out));
  md->eflag = eflag;
  dom->f    = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called once per step after the drift: either rebuild (migrate, ghosts, lists) or only refresh
   ghost positions. */
PetscErrorCode SgMDNeighUpdate(SgMD *md, PetscBool force)
{
  PetscBool rebuild = force;

  PetscFunctionBegin;
  md->neigh.since++;
  if (!rebuild) PetscCall(SgMDNeighDecide(&md->neigh, md->dom, &rebuild));
  if (rebuild) {
    PetscCall(PetscLogEventBegin(md->ev_neigh, 0, 0, 0, 0));
    if (md->neigh.dilation != 1.0) PetscCall(SgMDNeighSetUp(&md->neigh, md->dom)); /* bins follow the cell */
    PetscCall(SgMDDomainMigrate(md->dom));
    PetscCall(SgMDNeighSortAtoms(&md->neigh, md->dom));
    PetscCall(SgMDDomainBorders(md->dom));
    PetscCall(SgMDNeighBuild(&md->neigh, md->dom));
    PetscCall(PetscLogEventEnd(md->ev_neigh, 0, 0, 0, 0));
  } else {
    PetscCall(PetscLogEventBegin(md->ev_comm, 0, 0, 0, 0));
    PetscCall(SgMDDomainForward(md->dom));
    PetscCall(PetscLogEventEnd(md->ev_comm, 0, 0, 0, 0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Overlapping atoms make the forces blow up on the first step: refuse them, naming the pair. */
PetscErrorCode SgMDCheckOverlap(SgMD *md)
{
  SgMDDomain *dom = md->dom;
  SgMDNeigh  *nb  = &md->neigh;
  PetscReal   loc[3] = {PETSC_MAX_REAL, 0, 0}, glob[3];
  PetscMPIInt rank;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < dom->nlocal; i++)
    for (PetscInt k = 0; k < nb->num[i]; k++) {
      PetscInt  j  = nb->list[nb->first[i] + k];
      PetscReal dx = dom->x[3 * i] - dom->x[3 * j], dy = dom->x[3 * i + 1] - dom->x[3 * j + 1], dz = dom->x[3 * i + 2] - dom->x[3 * j + 2], r2 = dx * dx + dy * dy + dz * dz;
      if (r2 < loc[0]) { loc[0] = r2; loc[1] = dom->id[i]; loc[2] = dom->id[j]; }
    }
  PetscCall(MPIU_Allreduce(loc, glob, 1, MPIU_REAL, MPIU_MIN, dom->comm));
  PetscCallMPI(MPI_Comm_rank(dom->comm, &rank));
  {
    PetscInt mine = (loc[0] == glob[0]) ? rank : PETSC_MAX_INT, who;
    PetscCall(MPIU_Allreduce(&mine, &who, 1, MPIU_INT, MPI_MIN, dom->comm));
    PetscCallMPI(MPI_Bcast(loc, 3, MPIU_REAL, (PetscMPIInt)who, dom->comm));
  }
  PetscCheck(loc[0] >= md->min_dist * md->min_dist, dom->comm, PETSC_ERR_USER_INPUT,
             "md: atoms %d and %d overlap: distance %g %s is below md_min_distance = %g; fix the input structure (duplicate atoms?) or lower md_min_distance",
             (int)loc[1], (int)loc[2], (double)PetscSqrtReal(loc[0]), md->units.u_length, (double)md->min_dist);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DeePMD-kit's model_devi.out record of the current configuration from the ensemble provider
   md->devi_prov (collective): step, then max/min/avg virial deviation, max/min/avg force deviation,
   rank 0 writes the line. The trajectory's forces are not touched. */
PetscErrorCode SgMDModelDeviWrite(SgMD *md)
{
  SgForcesInput in;
  PetscReal     d[6];

  PetscFunctionBegin;
  FillInput(md, &in);
  PetscCall(PetscLogEventBegin(md->ev_force, 0, 0, 0, 0));
  PetscCall(md->devi_prov->model_devi(md->devi_prov->ctx, &in, md->dom->comm, d));
  PetscCall(PetscLogEventEnd(md->ev_force, 0, 0, 0, 0));
  if (md->devi_fp) {
    fprintf(md->devi_fp, "%12" PetscInt_FMT " %18.6e %18.6e %18.6e %18.6e %18.6e %18.6e\n", md->step, (double)d[0], (double)d[1], (double)d[2], (double)d[3], (double)d[4], (double)d[5]);
    fflush(md->devi_fp);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
