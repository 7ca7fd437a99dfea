/* The solver's field.superres slot (sgfield.h, grids in bq_superres.h): the run is coarse, and the
   fine fields and their diagnostics are served by the slot.

   With boussinesq: {superres: {cells: [NX, NZ], output_nz: NZO, ...}} the solver records the coarse
   solution at the block times t = k D (its steps are shortened to land on them) and, at each, asks
   the slot for the fine fields p, b, u, w on the fine output grid at that time, from the block of
   the last T block snapshots. Who serves is the swap policy (boussinesq_superres_swap_*, sgslot.h;
   the slot's step is the solver's step count): the solver's own provider "fine_solve" (a fine
   solve of the block's segment, bq_finesolve.c) or a surrogate (superres: {surrogate: mffn}).
   While fewer than T snapshots are held (the start of the run) the fine solve serves.
   Each answer gives the fine diagnostics (bq_srdiag.c): the solver's diagnostics superres_nu_volume,
   superres_kinetic_energy and superres_by_surrogate hold those of the latest answer; the whole series
   (with the kinetic-energy spectrum) goes to /report/superres_*; the fine fields are written as
   p_fine, b_fine, u_fine, w_fine with every field snapshot (a snapshot between block times is served
   on demand by the fine solve from the last block time). The held blocks, the series and the slot's
   counts are checkpointed, so a restart continues bit for bit. */
#include "bq_superres.h"
#include "sgslotio.h"
#include "sgcheckpoint.h"
#include "sgoutput.h"
#include <math.h>

PetscBool SgBqSuperresOn(const Bq *bq) { return bq->sr && bq->sr->cells[0] > 0 ? PETSC_TRUE : PETSC_FALSE; }

PetscErrorCode SgBqSuperresSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Bq         *bq   = (Bq *)s->data;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  BqSuperres *sr;
  PetscInt    n;
  PetscBool   set, fset, dset, tset;

  PetscFunctionBegin;
  if (!bq->sr) PetscCall(PetscNew(&bq->sr));
  sr = bq->sr;
  n  = 2;
  PetscCall(SgOptionsIntArray("-superres_cells", "field.superres: grid [nx, nz] of the fine solve (the solver's own provider); setting it turns the slot on: the run is coarse and the fine fields come from the slot", sr->cells, &n, &set, 4, 1 << 16));
  PetscCheck(!set || n == 2, comm, PETSC_ERR_USER_INPUT, "boussinesq superres cells needs two entries [nx, nz], got %" PetscInt_FMT, n);
  if (!set) sr->cells[0] = sr->cells[1] = 0;
  if (!sr->out[0]) sr->out[0] = sr->cells[0];
  if (!sr->out[1]) sr->out[1] = sr->cells[1];
  PetscCall(SgOptionsInt("-superres_output_nx", "field.superres: uniform cell-centred x points of the fine fields (default: the fine solve's nx)", sr->out[0], &sr->out[0], NULL, 2, 1 << 16));
  PetscCall(SgOptionsInt("-superres_output_nz", "field.superres: uniform cell-centred z points of the fine fields (default: the fine solve's nz)", sr->out[1], &sr->out[1], NULL, 1, 1 << 16));
  PetscCall(SgOptionsReal("-superres_dt", "field.superres: spacing D of the block times t = k D (default: what the surrogate was made for)", "free-fall times", sr->dt, &sr->dt, &dset, 0, 1e6));
  PetscCall(SgOptionsInt("-superres_snapshots", "field.superres: block snapshots T handed to the provider (default: what the surrogate needs, else 2)", sr->T, &sr->T, &tset, 1, 64));
  n = 2;
  PetscCall(SgOptionsIntArray("-superres_factor", "field.superres: [fz, fx] the block grid is the fine output grid subsampled by (default: the surrogate's, else the fine/coarse ratio)", sr->factor, &n, &fset, 1, 1 << 12));
  PetscCheck(!fset || n == 2, comm, PETSC_ERR_USER_INPUT, "boussinesq superres factor needs two entries [fz, fx], got %" PetscInt_FMT, n);
  if (!sr->cfl) sr->cfl = bq->cfl;
  if (!sr->max_dt) sr->max_dt = bq->max_dt;
  PetscCall(SgOptionsReal("-superres_cfl", "field.superres: CFL number of the fine solve (default: the coarse one's)", "", sr->cfl, &sr->cfl, NULL, PETSC_SMALL, 10));
  PetscCall(SgOptionsReal("-superres_max_dt", "field.superres: largest step of the fine solve (default: the coarse one's)", "free-fall times", sr->max_dt, &sr->max_dt, NULL, PETSC_SMALL, 1e3));
  PetscCall(SgOptionsString("-superres_surrogate", "field.superres: surrogate type that may serve the slot (e.g. mffn; swap policy: superres_swap_policy)", sr->surname, sr->surname, sizeof sr->surname, NULL));
  PetscCall(SgFieldSuperresProviderDestroy(&sr->sur));
  if (!SgBqSuperresOn(bq)) {
    PetscCheck(!sr->surname[0], comm, PETSC_ERR_USER_INPUT, "boussinesq superres surrogate %s needs the slot on: set boussinesq: {superres: {cells: [NX, NZ]}} (the fine grid)", sr->surname);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(!SgBqAdvanceOn(bq), comm, PETSC_ERR_USER_INPUT, "boussinesq: the field.superres and field.advance slots cannot both be in the loop of one run; drop advance dt or superres cells");
  PetscCheck(sr->out[0] % 2 == 0, comm, PETSC_ERR_USER_INPUT, "boussinesq superres output_nx %" PetscInt_FMT " must be even (the KE spectrum runs to nx/2)", sr->out[0]);
  PetscCheck(sr->cells[0] % 2 == 0 && sr->cells[1] >= 6, comm, PETSC_ERR_USER_INPUT, "boussinesq superres cells [%" PetscInt_FMT ", %" PetscInt_FMT "]: nx must be even and nz >= 6 (as boussinesq cells)", sr->cells[0], sr->cells[1]);
  /* before anything is allocated: the fine solve's two dense n x n factors per x-mode (as the
     coarse solve's), and the fine fields (4 channels, the answer, the written copy, the diagnostics) */
  PetscCall(SgCheckCount(comm, "-boussinesq_superres_cells", "fine-solve operator entries", 2.0 * sr->cells[1] * (PetscReal)sr->cells[1] * PetscCeilReal(0.5 * sr->cells[0]), 8));
  PetscCall(SgCheckCount(comm, "-boussinesq_superres_output_nx/nz", "fine field values", 3.0 * SG_BQ_NCH * sr->out[0] * (PetscReal)sr->out[1], 8));
  if (sr->surname[0]) {
    SgFieldProviderInfo info;
    PetscReal           par[2];
    SgBqProviderInfo(bq, comm, PetscOptionsObject, par, &info);
    PetscCall(SgFieldSuperresProviderCreate(sr->surname, &info, &sr->sur));
    if (!dset && sr->sur.block_spacing[0] > 0) sr->dt = sr->sur.block_spacing[0];
    if (!tset && sr->sur.block_nt > 0) sr->T = sr->sur.block_nt;
    for (int a = 0; a < 2 && !fset; a++) {
      const PetscReal h = (a ? bq->Lx / sr->out[0] : bq->Lz / sr->out[1]), want = sr->sur.block_spacing[2 - a];
      if (want > 0) {
        sr->factor[a] = (PetscInt)floor(want / h + 0.5);
        PetscCheck(sr->factor[a] >= 1 && PetscAbsReal(sr->factor[a] * h - want) <= 1e-9 * want, comm, PETSC_ERR_USER_INPUT, "boussinesq superres: surrogate %s reads blocks %g apart in %s; the fine output grid's spacing %g does not divide it: choose superres cells/output_nz accordingly", sr->surname, (double)want, a ? "x" : "z", (double)h);
      }
    }
    for (int a = 0; a < 2 && fset; a++) { /* a factor given by hand must give the surrogate its grid: checked here, not at its first call mid-run */
      const PetscReal h = (a ? bq->Lx / sr->out[0] : bq->Lz / sr->out[1]), want = sr->sur.block_spacing[2 - a];
      PetscCheck(want <= 0 || PetscAbsReal(sr->factor[a] * h - want) <= 1e-9 * want, comm, PETSC_ERR_USER_INPUT, "boussinesq superres factor %" PetscInt_FMT " in %s gives blocks %g apart, but surrogate %s reads blocks %g apart: set superres: {factor: [%" PetscInt_FMT ", %" PetscInt_FMT "]} or leave it out", sr->factor[a], a ? "x" : "z", (double)(sr->factor[a] * h), sr->surname, (double)want,
                 sr->sur.block_spacing[1] > 0 ? (PetscInt)floor(sr->sur.block_spacing[1] / (bq->Lz / sr->out[1]) + 0.5) : sr->factor[0], sr->sur.block_spacing[2] > 0 ? (PetscInt)floor(sr->sur.block_spacing[2] / (bq->Lx / sr->out[0]) + 0.5) : sr->factor[1]);
    }
    PetscCheck(sr->dt > 0 && (sr->sur.block_spacing[0] <= 0 || PetscAbsReal(sr->dt - sr->sur.block_spacing[0]) <= 1e-9 * sr->dt), comm, PETSC_ERR_USER_INPUT, "boussinesq superres dt %g: surrogate %s reads blocks %g apart in time; set superres: {dt: %g}", (double)sr->dt, sr->surname, (double)sr->sur.block_spacing[0], (double)sr->sur.block_spacing[0]);
  }
  if (!sr->T) sr->T = 2;
  for (int a = 0; a < 2; a++)
    if (!sr->factor[a]) { /* the fine/coarse ratio when it is whole, else 1 */
      const PetscInt fo = sr->out[1 - a], co = a ? bq->nx : bq->out_nz;
      sr->factor[a] = fo % co == 0 ? fo / co : 1;
    }
  PetscCheck(sr->dt > 0, comm, PETSC_ERR_USER_INPUT, "boussinesq superres: set the block spacing superres: {dt: D} (free-fall times; no surrogate sets it)");
  PetscCheck(sr->out[1] % sr->factor[0] == 0 && sr->out[0] % sr->factor[1] == 0, comm, PETSC_ERR_USER_INPUT, "boussinesq superres factor [%" PetscInt_FMT ", %" PetscInt_FMT "] does not divide the fine output grid %" PetscInt_FMT " x %" PetscInt_FMT " (nz x nx)", sr->factor[0], sr->factor[1], sr->out[1], sr->out[0]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarse solution now, as block snapshot slot i: state and values on the block grid. */
static PetscErrorCode Snapshot(Bq *bq, PetscInt i, PetscReal t)
{
  BqSuperres    *sr = bq->sr;
  const PetscInt S = bq->n * bq->ncol, nbv = sr->Zb * sr->Xb;
  PetscReal     *st = sr->bstate + i * sr->nstate;

  PetscFunctionBegin;
  sr->btime[i] = t;
  PetscCall(PetscArraycpy(st, bq->psi, S));
  PetscCall(PetscArraycpy(st + S, bq->b, S));
  PetscCall(PetscArraycpy(st + 2 * S, bq->u0, bq->n));
  PetscCall(SgBqFieldCoefficients(bq, bq->fc));
  for (PetscInt c = 0; c < SG_BQ_NCH; c++) PetscCall(SgBqGridEvalApply(bq, &sr->beval, bq->fc[c], 0, sr->Zb, sr->bval + (i * SG_BQ_NCH + c) * nbv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ask the slot for the fine fields at t from the nblk snapshots in slots i0 .. i0 + nblk - 1. With
   ondemand, t is no block time: the surrogate is held back, the answer is not recorded. */
static PetscErrorCode Evaluate(Bq *bq, PetscInt i0, PetscInt nblk, PetscReal t, PetscBool ondemand)
{
  BqSuperres           *sr  = bq->sr;
  const PetscInt        nbv = sr->Zb * sr->Xb;
  PetscBool             sur;
  PetscReal             unc;
  char                  why[128] = "";
  SgFieldBlock          B;
  SgFieldQuery          q;
  SgFieldSuperresInput  in;
  SgFieldSuperresOutput out = {sr->fv};

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nblk; i++)
    for (PetscInt c = 0; c < SG_BQ_NCH; c++) PetscCall(PetscArraycpy(sr->blk + (c * nblk + i) * nbv, sr->bval + ((i0 + i) * SG_BQ_NCH + c) * nbv, nbv));
  B  = (SgFieldBlock){SG_BQ_NCH, SgBqChannels, {nblk, sr->Zb, sr->Xb}, {sr->btime + i0, sr->zb, sr->xb}, {0, 0, 0}, {0, bq->Lz, bq->Lx}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, sr->blk};
  sr->tb[0] = t;
  q  = (SgFieldQuery){PETSC_TRUE, 0, NULL, {1, sr->r1 - sr->r0, sr->out[0]}, {sr->tb, sr->zo + sr->r0, sr->xo}};
  in = (SgFieldSuperresInput){&B, &q};
  if (sr->sur.fn) {
    if (ondemand) PetscCall(PetscSNPrintf(why, sizeof why, "t = %g is no block time", (double)t));
    else if (nblk < sr->T) PetscCall(PetscSNPrintf(why, sizeof why, "block of %" PetscInt_FMT " of %" PetscInt_FMT " snapshots", nblk, sr->T));
    PetscCall(SgSlotSetSurrogateAvailable(sr->slot, why[0] ? PETSC_FALSE : PETSC_TRUE, why));
  }
  PetscCall(SgSlotSetStep(sr->slot, bq->nsteps));
  PetscCall(SgSlotFieldSuperres(sr->slot, &in, &out));
  PetscCall(SgSlotGetLastCall(sr->slot, &sur, NULL, &unc));
  if (!ondemand) PetscCall(SgBqSuperresRecord(bq, sr, t, sur, unc));
  sr->ftime = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block time reached: shift the held snapshots, add this one, evaluate. */
static PetscErrorCode BlockTime(Bq *bq, PetscReal t)
{
  BqSuperres *sr = bq->sr;

  PetscFunctionBegin;
  if (sr->nb == sr->T) {
    PetscCall(SgBqShiftOut(sr->btime, sr->T, 1));
    PetscCall(SgBqShiftOut(sr->bstate, sr->T, sr->nstate));
    PetscCall(SgBqShiftOut(sr->bval, sr->T, SG_BQ_NCH * sr->Zb * sr->Xb));
    sr->nb--;
  }
  PetscCall(Snapshot(bq, sr->nb++, t));
  PetscCall(Evaluate(bq, 0, sr->nb, t, PETSC_FALSE));
  sr->next++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresSetUp(SgSolver s)
{
  Bq         *bq   = (Bq *)s->data;
  BqSuperres *sr   = bq->sr;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBegin;
  PetscCall(SgSlotCreate("field.superres", &sr->slot));
  PetscCall(SgSlotSetFieldSuperresProvider(sr->slot, "fine_solve", SgBqSuperresByFineSolve, bq));
  if (sr->sur.fn) PetscCall(SgSlotSetFieldSuperresSurrogate(sr->slot, sr->sur.name, sr->sur.fn, sr->sur.uncertainty, sr->sur.ctx));
  /* boussinesq_superres_swap_* (read always: a swap option without superres_surrogate is an error) */
  PetscCall(SgSlotSetFromOptions(sr->slot, comm, "boussinesq_superres_"));
  PetscCall(SgSolverDeclareSlot(s, sr->slot));
  if (!SgBqSuperresOn(bq)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgBqFineCreate(bq, sr));
  sr->Zb     = sr->out[1] / sr->factor[0];
  sr->Xb     = sr->out[0] / sr->factor[1];
  sr->nstate = 2 * bq->n * bq->ncol + bq->n;
  PetscCall(PetscCalloc4(sr->T + 1, &sr->btime, (sr->T + 1) * sr->nstate, &sr->bstate, (sr->T + 1) * SG_BQ_NCH * sr->Zb * sr->Xb, &sr->bval, (sr->T + 1) * SG_BQ_NCH * sr->Zb * sr->Xb, &sr->blk));
  PetscCall(PetscMalloc2(sr->Zb, &sr->zb, sr->Xb, &sr->xb));
  for (PetscInt k = 0; k < sr->Zb; k++) sr->zb[k] = (sr->factor[0] * k + 0.5) * bq->Lz / sr->out[1];
  for (PetscInt i = 0; i < sr->Xb; i++) sr->xb[i] = (sr->factor[1] * i + 0.5) * bq->Lx / sr->out[0];
  PetscCall(SgBqGridEvalCreate(bq, sr->Zb, sr->zb, sr->Xb, sr->xb, &sr->beval));
  PetscCall(SgBqSuperresDiagSetUp(bq, sr));
  PetscCall(SgSolverAddDiagnostic(s, "superres_nu_volume", "Nusselt number 1 + Lz <w b> / kappa of the latest field.superres answer (fine grid)", &sr->d_nu));
  PetscCall(SgSolverAddDiagnostic(s, "superres_kinetic_energy", "<(u^2 + w^2)/2> of the latest field.superres answer (fine grid), free-fall velocity^2", &sr->d_ke));
  PetscCall(SgSolverAddDiagnostic(s, "superres_by_surrogate", "1 if the surrogate served the latest field.superres answer, 0 if the fine solve did", &sr->d_sur));
  PetscCall(BlockTime(bq, 0)); /* t = 0 */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarse step: the CFL step, shortened to land on the next block time. */
PetscErrorCode SgBqSuperresTimeStep(Bq *bq, PetscReal t, PetscReal *dt)
{
  BqSuperres     *sr = bq->sr;
  const PetscReal r  = sr->next * sr->dt - t;

  PetscFunctionBegin;
  PetscCall(SgBqTimeStepData(bq, dt));
  if (r > 0 && r < *dt * (1 - 1e-9)) *dt = r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresAfterStep(Bq *bq, PetscReal t)
{
  BqSuperres *sr = bq->sr;

  PetscFunctionBegin;
  sr->tb[1] = t;
  if (t >= sr->next * sr->dt - 1e-9 * sr->dt) PetscCall(BlockTime(bq, sr->next * sr->dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresWriteFields(Bq *bq, SgOutput out)
{
  BqSuperres     *sr = bq->sr;
  const PetscReal t  = sr->tb[1];

  PetscFunctionBegin;
  if (PetscAbsReal(t - sr->ftime) > 1e-9 * sr->dt) { /* between block times: the fine solve from the last one */
    PetscCall(Snapshot(bq, sr->nb, t));           /* the spare slot after the held ones */
    PetscCall(Evaluate(bq, sr->nb - 1, 2, t, PETSC_TRUE));
  }
  PetscCall(SgBqSuperresWriteFine(bq, sr, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgBqSuperresDiagnose(const Bq *bq, PetscReal v[])
{
  const BqSuperres *sr = bq->sr;
  const PetscReal  *e  = sr->ser + (sr->ns - 1) * BQ_SR_WIDTH(sr);

  v[sr->d_nu]  = e[3];
  v[sr->d_ke]  = e[4];
  v[sr->d_sur] = e[1];
}

PetscErrorCode SgBqSuperresCheckpoint(SgSolver s, SgCheckpoint chk)
{
  Bq         *bq = (Bq *)s->data;
  BqSuperres *sr = bq->sr;
  PetscReal   sc[5], st[SG_SLOT_NSTATE];
  PetscBool   reading;

  PetscFunctionBegin;
  if (!SgBqSuperresOn(bq)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgCheckpointIsReading(chk, &reading));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_nx", sr->cells[0]));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_nz", sr->cells[1]));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_output_nz", sr->out[1]));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_factor_z", sr->factor[0]));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_factor_x", sr->factor[1]));
  PetscCall(SgCheckpointLayoutInt(chk, "boussinesq_superres_snapshots", sr->T));
  PetscCall(SgCheckpointLayoutReal(chk, "boussinesq_superres_dt", sr->dt));
  sc[0] = sr->nb;
  sc[1] = sr->next;
  sc[2] = sr->ns;
  sc[3] = sr->tb[1];
  sc[4] = sr->ftime;
  if (!reading) PetscCall(SgSlotGetState(sr->slot, st));
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_scalars", 5, sc));
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_slot", SG_SLOT_NSTATE, st));
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_block_time", sr->T, sr->btime));
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_block_state", sr->T * sr->nstate, sr->bstate));
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_block_values", sr->T * SG_BQ_NCH * sr->Zb * sr->Xb, sr->bval));
  if (reading) {
    PetscInt ns = (PetscInt)sc[2];
    sr->nb = (PetscInt)sc[0];
    sr->next = (PetscInt)sc[1];
    sr->tb[1] = sc[3];
    sr->ftime = sc[4];
    PetscCall(SgSlotSetState(sr->slot, st));
    if (ns > sr->cap) {
      PetscCall(PetscFree(sr->ser));
      sr->cap = ns;
      PetscCall(PetscCalloc1(sr->cap * BQ_SR_WIDTH(sr), &sr->ser));
    }
    sr->ns = ns;
  }
  PetscCall(SgCheckpointReals(chk, "boussinesq_superres_series", sr->ns * BQ_SR_WIDTH(sr), sr->ser));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresReport(SgSolver s, SgOutput out)
{
  Bq              *bq = (Bq *)s->data;
  BqSuperres      *sr = bq->sr;
  const PetscInt   W  = BQ_SR_WIDTH(sr);
  const char      *name[5] = {"superres_time", "superres_by_surrogate", "superres_uncertainty", "superres_nu_volume", "superres_kinetic_energy"};
  const char      *unit[5] = {"free-fall times", "1: surrogate, 0: fine solve", "the surrogate's uncertainty units (-1: not evaluated)", "", "free-fall velocity^2"};
  PetscReal       *col;
  PetscInt         nsur = 0;

  PetscFunctionBegin;
  if (!SgBqSuperresOn(bq)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgSlotReport(bq->comm, sr->slot, "superres", "fine_solve", sr->surname, out));
  PetscCall(PetscMalloc1(PetscMax(sr->ns * sr->nko, 1), &col));
  for (int k = 0; k < 5; k++) {
    for (PetscInt i = 0; i < sr->ns; i++) col[i] = sr->ser[i * W + k];
    if (out) PetscCall(SgOutputWriteReport(out, name[k], unit[k], sr->ns, col));
  }
  for (PetscInt i = 0; i < sr->ns; i++) {
    nsur += sr->ser[i * W + 1] != 0;
    for (PetscInt m = 0; m < sr->nko; m++) col[i * sr->nko + m] = sr->ser[i * W + 5 + m];
  }
  if (out) PetscCall(SgOutputWriteReport(out, "superres_ke_spectrum", "[evaluation][m]: kinetic energy in x-wavenumber k_m = 2 pi m / Lx, m = 0 .. nx_fine/2 (sums to superres_kinetic_energy)", sr->ns * sr->nko, col));
  PetscCall(PetscFree(col));
  PetscCall(PetscPrintf(bq->comm, "superres: %" PetscInt_FMT " answers on the %" PetscInt_FMT " x %" PetscInt_FMT " grid (every %g; blocks of %" PetscInt_FMT " snapshots on %" PetscInt_FMT " x %" PetscInt_FMT "), %" PetscInt_FMT " by the surrogate; the last: Nu %.6g, KE %.6g\n", sr->ns, sr->out[0], sr->out[1], (double)sr->dt, sr->T, sr->Xb, sr->Zb, nsur, (double)sr->ser[(sr->ns - 1) * W + 3], (double)sr->ser[(sr->ns - 1) * W + 4]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgBqSuperresDestroy(Bq *bq)
{
  BqSuperres *sr = bq->sr;

  PetscFunctionBegin;
  if (!sr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgFieldSuperresProviderDestroy(&sr->sur));
  if (sr->fine) {
    PetscCall(SgBqDestroyData(sr->fine));
    PetscCall(PetscFree(sr->fine));
  }
  if (sr->btime) {
    PetscCall(PetscFree4(sr->btime, sr->bstate, sr->bval, sr->blk));
    PetscCall(PetscFree2(sr->zb, sr->xb));
    PetscCall(SgBqGridEvalDestroy(&sr->beval));
  }
  if (sr->zo) {
    PetscCall(PetscFree2(sr->zo, sr->xo));
    PetscCall(PetscFree(sr->fv));
    PetscCall(VecDestroy(&sr->vout));
    PetscCall(DMDestroy(&sr->da));
    fftw_destroy_plan(sr->r2c);
    fftw_free(sr->row);
    fftw_free(sr->spec);
  }
  PetscCall(PetscFree(sr->ser));
  PetscCall(PetscFree(bq->sr)); /* the slot is the solver's (declared), destroyed with it */
  PetscFunctionReturn(PETSC_SUCCESS);
}
