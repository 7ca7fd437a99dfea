/* heat: periodic diffusion u_t = kappa lap(u), FTCS on a DMDA. See README.md for why it exists.

   Units: any consistent set (length L, time T, kappa in L^2/T). Grid: cell-centred, N_d points over
   [0, L_d). Stability: dt <= h_min^2 / (2 d kappa) for FTCS in d dimensions; the step taken is
   cfl times that bound. */
#include <petscdmda.h>
#include "sgsolverimpl.h"
#include "sgoutput.h"
#include "sgcheckpoint.h"

typedef struct {
  PetscInt  dim, n[3], mode[3];
  PetscReal L[3], h[3], kappa, cfl, amplitude, offset;
  DM        da;
  Vec       u, ul, lap;
  PetscInt  d_mean, d_l2, d_amp, d_err;
  PetscReal gfactor_log; /* sum over steps of log g: the exact discrete amplitude is A exp(.) */
  PetscReal t_last;
} Heat;

static PetscErrorCode HeatSetFromOptions(SgSolver s, PetscOptionItems *PetscOptionsObject)
{
  Heat     *h = (Heat *)s->data;
  PetscInt  nn = 3, nl = 3, nm = 3;
  PetscBool set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "heat: periodic diffusion reference solver");
  PetscCall(SgOptionsIntArray("-cells", "Grid points per dimension (1-3 entries; the count sets the dimension)", h->n, &nn, &set, 4, 1 << 20));
  if (set) h->dim = nn;
  PetscCall(SgOptionsRealArray("-length", "Box length per dimension", "length units", h->L, &nl, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-kappa", "Diffusivity", "length^2/time", h->kappa, &h->kappa, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-cfl", "Fraction of the FTCS stability limit h^2/(2 d kappa) used as step", "", h->cfl, &h->cfl, NULL, PETSC_SMALL, 1.0));
  PetscCall(SgOptionsIntArray("-mode", "Integer wave numbers of the initial Fourier mode, per dimension", h->mode, &nm, NULL, 0, 1 << 20));
  PetscCall(SgOptionsReal("-amplitude", "Amplitude of the initial mode", "", h->amplitude, &h->amplitude, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-offset", "Constant added to the initial mode (the conserved mean)", "", h->offset, &h->offset, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscOptionsHeadEnd();
  {
    PetscReal cells = 1;
    for (PetscInt d = 0; d < h->dim; d++) cells *= (PetscReal)h->n[d];
    PetscCall(SgCheckCount(PetscObjectComm((PetscObject)s), "-heat_cells", "grid cells", cells, 3 * sizeof(PetscScalar))); /* u, its ghosted copy, the Laplacian */
  }
  for (PetscInt d = 0; d < h->dim; d++)
    PetscCheck(2 * h->mode[d] < h->n[d], PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "heat mode[%" PetscInt_FMT "] = %" PetscInt_FMT " is not resolved by %" PetscInt_FMT " cells (need 2 mode < cells)", d, h->mode[d], h->n[d]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The initial mode: offset + A prod_d cos(k_d x_d), k_d = 2 pi m_d / L_d. */
static PetscReal Mode(Heat *h, const PetscInt idx[])
{
  PetscReal v = h->amplitude;
  for (PetscInt d = 0; d < h->dim; d++) v *= PetscCosReal(2 * PETSC_PI * h->mode[d] * (idx[d] + 0.5) / h->n[d]);
  return h->offset + v;
}

static PetscErrorCode HeatSetUp(SgSolver s)
{
  Heat       *h = (Heat *)s->data;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  PetscScalar *a;
  PetscInt    xs[3] = {0, 0, 0}, xm[3] = {1, 1, 1};

  PetscFunctionBegin;
  for (PetscInt d = 0; d < h->dim; d++) h->h[d] = h->L[d] / h->n[d];
  if (h->dim == 1) PetscCall(DMDACreate1d(comm, DM_BOUNDARY_PERIODIC, h->n[0], 1, 1, NULL, &h->da));
  else if (h->dim == 2) PetscCall(DMDACreate2d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, h->n[0], h->n[1], PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &h->da));
  else PetscCall(DMDACreate3d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, h->n[0], h->n[1], h->n[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &h->da));
  PetscCall(DMSetUp(h->da));
  PetscCall(DMCreateGlobalVector(h->da, &h->u));
  PetscCall(VecDuplicate(h->u, &h->lap));
  PetscCall(DMCreateLocalVector(h->da, &h->ul));
  PetscCall(DMDAGetCorners(h->da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(VecGetArray(h->u, &a));
  for (PetscInt k = 0, p = 0; k < (h->dim > 2 ? xm[2] : 1); k++)
    for (PetscInt j = 0; j < (h->dim > 1 ? xm[1] : 1); j++)
      for (PetscInt i = 0; i < xm[0]; i++, p++) {
        PetscInt idx[3] = {xs[0] + i, xs[1] + j, xs[2] + k};
        a[p]            = Mode(h, idx);
      }
  PetscCall(VecRestoreArray(h->u, &a));
  PetscCall(SgSolverAddDiagnostic(s, "mean", "u units", &h->d_mean));
  PetscCall(SgSolverAddDiagnostic(s, "l2", "u units", &h->d_l2));
  PetscCall(SgSolverAddDiagnostic(s, "mode_amplitude", "u units", &h->d_amp));
  PetscCall(SgSolverAddDiagnostic(s, "discrete_error", "u units", &h->d_err));
  PetscCall(SgSolverSetProgressDiagnostic(s, h->d_amp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatTimeStep(SgSolver s, PetscReal t, PetscReal *dt)
{
  Heat     *h = (Heat *)s->data;
  PetscReal inv = 0;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < h->dim; d++) inv += 2 * h->kappa / (h->h[d] * h->h[d]);
  *dt = h->cfl / inv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatStep(SgSolver s, PetscReal t, PetscReal dt)
{
  Heat              *h = (Heat *)s->data;
  const PetscScalar *ul;
  PetscScalar       *lap;
  PetscInt           xs[3] = {0, 0, 0}, xm[3] = {1, 1, 1}, gxs[3] = {0, 0, 0}, gxm[3] = {1, 1, 1};
  PetscReal          c[3], g = 1;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < h->dim; d++) {
    c[d] = h->kappa * dt / (h->h[d] * h->h[d]);
    g -= 4 * c[d] * PetscSqr(PetscSinReal(PETSC_PI * h->mode[d] / h->n[d]));
  }
  PetscCheck(g > 0, PetscObjectComm((PetscObject)s), PETSC_ERR_USER_INPUT, "heat: step %g too large for mode (amplification %g <= 0): lower heat cfl", (double)dt, (double)g);
  h->gfactor_log += PetscLogReal(g);
  PetscCall(DMGlobalToLocal(h->da, h->u, INSERT_VALUES, h->ul));
  PetscCall(DMDAGetCorners(h->da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMDAGetGhostCorners(h->da, &gxs[0], &gxs[1], &gxs[2], &gxm[0], &gxm[1], &gxm[2]));
  PetscCall(VecGetArrayRead(h->ul, &ul));
  PetscCall(VecGetArray(h->lap, &lap));
  {
    const PetscInt sy = gxm[0], sz = gxm[0] * (h->dim > 1 ? gxm[1] : 1);
    const PetscInt stride[3] = {1, sy, sz};
    for (PetscInt k = 0, p = 0; k < (h->dim > 2 ? xm[2] : 1); k++)
      for (PetscInt j = 0; j < (h->dim > 1 ? xm[1] : 1); j++)
        for (PetscInt i = 0; i < xm[0]; i++, p++) {
          PetscInt  q = (xs[0] - gxs[0] + i) + (h->dim > 1 ? (xs[1] - gxs[1] + j) * sy : 0) + (h->dim > 2 ? (xs[2] - gxs[2] + k) * sz : 0);
          PetscReal v = 0;
          for (PetscInt d = 0; d < h->dim; d++) v += c[d] * (ul[q - stride[d]] - 2 * ul[q] + ul[q + stride[d]]);
          lap[p] = v;
        }
  }
  PetscCall(VecRestoreArray(h->lap, &lap));
  PetscCall(VecRestoreArrayRead(h->ul, &ul));
  PetscCall(VecAXPY(h->u, 1.0, h->lap));
  h->t_last = t + dt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Diagnostics: mean (conserved exactly up to round-off), L2 norm, the projected mode amplitude,
   and the max deviation from the exact discrete solution offset + A exp(sum log g) * mode. */
static PetscErrorCode HeatDiagnose(SgSolver s, PetscReal t, PetscReal v[])
{
  Heat              *h = (Heat *)s->data;
  const PetscScalar *a;
  PetscInt           xs[3] = {0, 0, 0}, xm[3] = {1, 1, 1}, N = 1;
  PetscReal          loc[3] = {0, 0, 0}, glob[3], amp = PetscExpReal(h->gfactor_log), norm = 1;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < h->dim; d++) {
    N *= h->n[d];
    norm *= h->mode[d] ? 0.5 : 1.0; /* mean of cos^2 over the grid */
  }
  PetscCall(DMDAGetCorners(h->da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(VecGetArrayRead(h->u, &a));
  for (PetscInt k = 0, p = 0; k < (h->dim > 2 ? xm[2] : 1); k++)
    for (PetscInt j = 0; j < (h->dim > 1 ? xm[1] : 1); j++)
      for (PetscInt i = 0; i < xm[0]; i++, p++) {
        PetscInt  idx[3] = {xs[0] + i, xs[1] + j, xs[2] + k};
        PetscReal shape  = (Mode(h, idx) - h->offset) / (h->amplitude ? h->amplitude : 1);
        PetscReal exact  = h->offset + h->amplitude * amp * shape;
        loc[0] += a[p];
        loc[1] += (a[p] - h->offset) * shape;
        loc[2] = PetscMax(loc[2], PetscAbsReal(a[p] - exact));
      }
  PetscCall(VecRestoreArrayRead(h->u, &a));
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Allreduce(&loc[2], &glob[2], 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  PetscCall(VecNorm(h->u, NORM_2, &v[h->d_l2]));
  v[h->d_l2] /= PetscSqrtReal((PetscReal)N);
  v[h->d_mean] = glob[0] / N;
  v[h->d_amp]  = glob[1] / (N * norm);
  v[h->d_err]  = glob[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatWriteFields(SgSolver s, SgOutput out)
{
  Heat     *h = (Heat *)s->data;
  PetscReal lo[3] = {0, 0, 0};

  PetscFunctionBegin;
  PetscCall(SgOutputWriteField(out, "u", h->u, lo, h->L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What fixes the state's layout: stored on write, compared on restart. */
static PetscErrorCode HeatLayout(Heat *h, SgCheckpoint chk)
{
  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutInt(chk, "heat_dim", h->dim));
  for (PetscInt d = 0; d < h->dim; d++) {
    char name[32];
    PetscCall(PetscSNPrintf(name, sizeof name, "heat_cells_%" PetscInt_FMT, d));
    PetscCall(SgCheckpointLayoutInt(chk, name, h->n[d]));
    PetscCall(PetscSNPrintf(name, sizeof name, "heat_length_%" PetscInt_FMT, d));
    PetscCall(SgCheckpointLayoutReal(chk, name, h->L[d]));
  }
  PetscCall(SgCheckpointLayoutReal(chk, "heat_kappa", h->kappa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Writes or restores the state, as the checkpoint was opened. */
static PetscErrorCode HeatCheckpoint(SgSolver s, SgCheckpoint chk)
{
  Heat *h = (Heat *)s->data;

  PetscFunctionBegin;
  PetscCall(HeatLayout(h, chk));
  PetscCall(SgCheckpointVec(chk, "u", h->u));
  PetscCall(SgCheckpointReals(chk, "heat_glog", 1, &h->gfactor_log));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatReport(SgSolver s, SgOutput out)
{
  Heat     *h = (Heat *)s->data;
  PetscReal k2 = 0, rate[2];

  PetscFunctionBegin;
  for (PetscInt d = 0; d < h->dim; d++) k2 += PetscSqr(2 * PETSC_PI * h->mode[d] / h->L[d]);
  rate[0] = h->t_last > 0 ? -h->gfactor_log / h->t_last : 0; /* measured by the scheme */
  rate[1] = h->kappa * k2;                                   /* continuous theory */
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s), "heat: mode decay rate %.6e (scheme) vs %.6e (kappa |k|^2)\n", (double)rate[0], (double)rate[1]));
  PetscCall(SgOutputWriteReport(out, "decay_rate", "1/time: [scheme, theory]", 2, rate));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatDestroy(SgSolver s)
{
  Heat *h = (Heat *)s->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&h->u));
  PetscCall(VecDestroy(&h->ul));
  PetscCall(VecDestroy(&h->lap));
  PetscCall(DMDestroy(&h->da));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_Heat(SgSolver s)
{
  Heat *h;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  h->dim = 1;
  h->n[0] = h->n[1] = h->n[2] = 32;
  h->L[0] = h->L[1] = h->L[2] = 1.0;
  h->mode[0] = 1;
  h->kappa = 1.0;
  h->cfl = 0.9;
  h->amplitude = 1.0;
  s->data = h;
  s->ops->setfromoptions = HeatSetFromOptions;
  s->ops->setup          = HeatSetUp;
  s->ops->timestep       = HeatTimeStep;
  s->ops->step           = HeatStep;
  s->ops->diagnose       = HeatDiagnose;
  s->ops->writefields    = HeatWriteFields;
  s->ops->checkpoint     = HeatCheckpoint;
  s->ops->report         = HeatReport;
  s->ops->destroy        = HeatDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
