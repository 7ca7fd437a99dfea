/* POD-LSTM serving the field.advance slot (sgfield.h): the last L snapshots of the solver's history ->
   the next K <= L snapshots, forecast by the model's best network; the uncertainty is the spread of
   the model's top-k networks (SgPodLstmModelAdvance).

   Grids. The model was trained on the dataset's grid: per field fshape = [nz, nx] points at the cell
   centres of the domain, z = (k + 1/2) Lz / nz, x = (i + 1/2) Lx / nx (surge's field output). A history
   block may come on another grid of the same domain (boussinesq hands its native grid: x_i = i Lx /
   nx, the Chebyshev nodes in z). Then each snapshot goes to the model grid by the block's own
   interpolants -- trigonometric in the periodic x, the polynomial through the block's z nodes
   (barycentric; exact for the solver's Chebyshev representation) -- and each forecast back by the
   trigonometric interpolant in x and local cubic Lagrange interpolation in z (4 nearest model points;
   beyond the outermost cell centres it extrapolates half a cell to the walls). Same grid: no
   interpolation. A one-dimensional block (KS) must be on the model's grid: refused otherwise.

   Options, in the solver's options block: <prefix>podlstm_model FILE. (Re-synchronisation every M
   snapshots is the solver's business: it holds the surrogate back with SgSlotSetSurrogateAvailable,
   and checkpoints the count; sst: {advance: {resync_every: M}}.) */
#include "sgpodlstm.h"
#include "sgsurrogateimpl.h"
#include "sgfield.h"
#include "sgtrainer.h"

typedef struct {
  MPI_Comm       comm;
  SgPodLstmModel M;
  PetscInt       nch, chfield[SG_FIELD_MAX_CHANNELS];
  PetscInt       nzb, nxb, nzm, nxm; /* block and model grids (all fields share one grid) */
  PetscBool      same;
  PetscReal     *Zin, *Xin, *Zout, *Xout, *tmp;
  PetscReal     *full, *hist, *next;       /* model states */
  PetscReal      spread, cached_t;          /* the forecast of the history ending at cached_t is cached */
  PetscMPIInt   *cnt, *dsp;
} PodLstmAdvance;

static PetscErrorCode Destroy(void *ctx)
{
  PodLstmAdvance *A = (PodLstmAdvance *)ctx;

  PetscFunctionBegin;
  PetscCall(SgPodLstmModelFree(&A->M));
  PetscCall(PetscFree4(A->Zin, A->Xin, A->Zout, A->Xout));
  PetscCall(PetscFree(A->tmp));
  PetscCall(PetscFree3(A->full, A->hist, A->next));
  PetscCall(PetscFree2(A->cnt, A->dsp));
  PetscCall(PetscFree(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out [nq][nxo] = Z [nq][nzi] F [nzi][nxi] X^T (X [nxo][nxi]) */
static void Map2(PetscInt nq, PetscInt nzi, PetscInt nxi, PetscInt nxo, const PetscReal Z[], const PetscReal F[], const PetscReal X[], PetscReal tmp[], PetscReal out[])
{
  for (PetscInt k = 0; k < nzi; k++) /* tmp = F X^T [nzi][nxo] */
    for (PetscInt i = 0; i < nxo; i++) {
      PetscReal s = 0;
      for (PetscInt j = 0; j < nxi; j++) s += F[k * nxi + j] * X[i * nxi + j];
      tmp[k * nxo + i] = s;
    }
  for (PetscInt q = 0; q < nq; q++)
    for (PetscInt i = 0; i < nxo; i++) {
      PetscReal s = 0;
      for (PetscInt k = 0; k < nzi; k++) s += Z[q * nzi + k] * tmp[k * nxo + i];
      out[q * nxo + i] = s;
    }
}

/* the maps between the block's grid and the model's, built at set-up (GridHook: the solver's grid)
   or, for a solver that does not tell it, for the first block; every later block must be on it */
static PetscErrorCode Grids(PodLstmAdvance *A, const SgFieldBlock *B)
{
  PetscReal zm[4096], xm[4096], Lz = B->hi[1] - B->lo[1], Lx = B->hi[2] - B->lo[2];

  PetscFunctionBegin;
  if (A->Zin) {
    PetscCheck(B->n[1] == A->nzb && B->n[2] == A->nxb, A->comm, PETSC_ERR_ARG_SIZ, "podlstm field.advance: a history of %" PetscInt_FMT " x %" PetscInt_FMT " points after one of %" PetscInt_FMT " x %" PetscInt_FMT, B->n[1], B->n[2], A->nzb, A->nxb);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  A->nzb = B->n[1];
  A->nxb = B->n[2];
  PetscCheck(A->nzm <= 4096 && A->nxm <= 4096, A->comm, PETSC_ERR_USER_INPUT, "podlstm: the model's grid is %" PetscInt_FMT " x %" PetscInt_FMT " (z, x); field.advance serves at most 4096 points per axis: train on a coarser grid", A->nzm, A->nxm);
  PetscCheck(A->nzb <= 1024 && A->nxb <= 4096, A->comm, PETSC_ERR_USER_INPUT, "podlstm: the solver's snapshots have %" PetscInt_FMT " x %" PetscInt_FMT " points (z, x); field.advance by podlstm interpolates from at most 1024 z and 4096 x points: hand a coarser grid (e.g. boussinesq advance: {grid: output} with a smaller output_nz)", A->nzb, A->nxb);
  PetscCheck(B->periodic[2] && !B->periodic[1], A->comm, PETSC_ERR_USER_INPUT, "podlstm field.advance: a block periodic in x and bounded in z is needed (Rayleigh-Benard, SST)");
  /* A line of points (Kuramoto-Sivashinsky) is the solver's own collocation grid: its resolution. A
     model trained at another one learned another discretisation's dynamics, which interpolation
     would hide (a 64-point model on -ks_modes 32 ran on silently). Refused; interpolating between
     one solver's two grids of the same resolution (boussinesq's native and output grids) stays. */
  PetscCheck(A->nzb > 1 || A->nzm > 1 || A->nxb == A->nxm, A->comm, PETSC_ERR_USER_INPUT, "podlstm: the model was trained on snapshots of %" PetscInt_FMT " points; the solver's have %" PetscInt_FMT ": a one-dimensional field is forecast at the resolution it was trained on, not interpolated: run the solver on %" PetscInt_FMT " points (ks: -ks_modes %" PetscInt_FMT ") or train a model on its own data", A->nxm, A->nxb, A->nxm, A->nxm);
  for (PetscInt k = 0; k < A->nzm; k++) zm[k] = B->lo[1] + (k + 0.5) * Lz / A->nzm;
  for (PetscInt i = 0; i < A->nxm; i++) xm[i] = B->lo[2] + (i + 0.5) * Lx / A->nxm;
  A->same = (PetscBool)(A->nzb == A->nzm && A->nxb == A->nxm);
  for (PetscInt k = 0; A->same && k < A->nzm; k++) A->same = (PetscBool)(PetscAbsReal(B->coord[1][k] - zm[k]) <= 1e-12 * Lz);
  for (PetscInt i = 0; A->same && i < A->nxm; i++) A->same = (PetscBool)(PetscAbsReal(B->coord[2][i] - xm[i]) <= 1e-12 * Lx);
  PetscCall(PetscMalloc4(A->nzm * A->nzb, &A->Zin, A->nxm * A->nxb, &A->Xin, A->nzb * A->nzm, &A->Zout, A->nxb * A->nxm, &A->Xout));
  SgPodLstmBaryInterp(A->nzm, zm, A->nzb, B->coord[1], A->Zin);
  SgPodLstmTrigInterp(A->nxm, xm, A->nxb, B->coord[2], Lx, A->Xin);
  SgPodLstmCubicInterp(A->nzb, B->coord[1], A->nzm, zm, A->Zout);
  SgPodLstmTrigInterp(A->nxb, B->coord[2], A->nxm, xm, Lx, A->Xout);
  PetscCall(PetscMalloc1(PetscMax(A->nzb, A->nzm) * PetscMax(A->nxb, A->nxm), &A->tmp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the forecast of the block's last L snapshots into A->next (model states, this rank's rows) */
static PetscErrorCode Forecast(PodLstmAdvance *A, const SgFieldBlock *B)
{
  const SgPodLstmModel *M = &A->M;
  const PetscInt        L = M->L, nt = B->n[0], szb = A->nzb * A->nxb, nl = M->pod->nlocal;

  PetscFunctionBegin;
  PetscCheck(nt >= L, A->comm, PETSC_ERR_ARG_SIZ, "podlstm field.advance: a history of %" PetscInt_FMT " snapshots; the model needs %" PetscInt_FMT, nt, L);
  if (A->cached_t == B->coord[0][nt - 1]) PetscFunctionReturn(PETSC_SUCCESS); /* the uncertainty just computed it */
  for (PetscInt s = 0; s < L; s++) {
    const PetscInt k = nt - L + s;
    for (PetscInt c = 0; c < A->nch; c++) {
      const PetscInt f = A->chfield[c];
      PetscInt       off = 0;
      PetscReal     *dst;
      for (PetscInt g = 0; g < f; g++) off += M->fsize[g];
      dst = A->full + off;
      if (A->same) PetscCall(PetscArraycpy(dst, B->v + (c * nt + k) * szb, szb));
      else Map2(A->nzm, A->nzb, A->nxb, A->nxm, A->Zin, B->v + (c * nt + k) * szb, A->Xin, A->tmp, dst);
      for (PetscInt q = 0; q < M->fsize[f]; q++) dst[q] /= M->fscale[f];
    }
    PetscCall(PetscArraycpy(A->hist + s * nl, A->full + M->pod->rstart, nl));
  }
  PetscCall(SgPodLstmModelAdvance(M, A->hist, A->next, &A->spread));
  A->cached_t = B->coord[0][nt - 1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Advance(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  PodLstmAdvance       *A = (PodLstmAdvance *)ctx;
  const SgPodLstmModel *M = &A->M;
  const SgFieldBlock   *B = in->history;
  const PetscInt        K = in->nnext, nl = M->pod->nlocal;
  PetscInt              szb;

  PetscFunctionBegin;
  PetscCall(Grids(A, B)); /* the first call learns the block's grid */
  szb = A->nzb * A->nxb;
  PetscCheck(K <= M->L, A->comm, PETSC_ERR_ARG_SIZ, "podlstm field.advance: %" PetscInt_FMT " snapshots asked; the model forecasts %" PetscInt_FMT, K, M->L);
  PetscCall(Forecast(A, B));
  A->cached_t = PETSC_MIN_REAL; /* a forecast serves one call */
  for (PetscInt k = 0; k < K; k++) {
    PetscCallMPI(MPI_Allgatherv(A->next + k * nl, (PetscMPIInt)nl, MPIU_REAL, A->full, A->cnt, A->dsp, MPIU_REAL, A->comm));
    for (PetscInt c = 0; c < A->nch; c++) {
      const PetscInt f = A->chfield[c];
      PetscInt       off = 0;
      PetscReal     *dst = out->v + (c * K + k) * szb;
      for (PetscInt g = 0; g < f; g++) off += M->fsize[g];
      for (PetscInt q = 0; q < M->fsize[f]; q++) A->full[off + q] *= M->fscale[f];
      if (A->same) PetscCall(PetscArraycpy(dst, A->full + off, szb));
      else Map2(A->nzb, A->nzm, A->nxm, A->nxb, A->Zout, A->full + off, A->Xout, A->tmp, dst);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GridHook(void *ctx, const SgFieldBlock *grid)
{
  PetscFunctionBegin;
  PetscCall(Grids((PodLstmAdvance *)ctx, grid));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Uncertainty(void *ctx, const SgFieldAdvanceInput *in, PetscReal *unc)
{
  PodLstmAdvance *A = (PodLstmAdvance *)ctx;

  PetscFunctionBegin;
  PetscCall(Grids(A, in->history));
  PetscCall(Forecast(A, in->history));
  *unc = A->spread;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmAdvanceProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldAdvanceProvider *p)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  PodLstmAdvance   *A;
  char              path[PETSC_MAX_PATH_LEN] = "";
  PetscBool         set, readable;
  SgnnBackend      *be;
  PetscMPIInt       size;

  PetscFunctionBegin;
  (void)s;
  PetscCheck(PetscOptionsObject, info->comm, PETSC_ERR_ARG_NULL, "podlstm: the field.advance provider reads its options in the solver's options block");
  PetscCall(PetscNew(&A));
  A->comm = info->comm;
  A->cached_t = PETSC_MIN_REAL;
  PetscCall(SgOptionsPath("-podlstm_model", "field.advance by podlstm: the model file (surge train with surrogate podlstm; shipped: inputs/podlstm/models/)", SG_PATH_IN, path, path, sizeof path, &set));
  PetscCheck(set && path[0], info->comm, PETSC_ERR_USER_INPUT, "podlstm serving field.advance needs its model file: set %spodlstm_model (e.g. boussinesq: {podlstm: {model: inputs/podlstm/models/rb4_podlstm.h5}})", info->prefix);
  PetscCall(PetscTestFile(path, 'r', &readable));
  PetscCheck(readable, info->comm, PETSC_ERR_USER_INPUT, "podlstm: cannot read the model file '%s' (%spodlstm_model)", path, info->prefix);
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgPodLstmModelLoad(info->comm, path, be, &A->M));
  /* used only for what it was trained for: the solver's physics and box, the grid's kind (all at
     set-up, before the first step) */
  PetscCall(SgPodLstmPhysicsCheck(path, A->M.physics, info));
  PetscCheck(info->periodic[2] && !info->periodic[1], info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s serves a domain periodic in x and bounded in z (Rayleigh-Benard, SST); the solver's %s: serve this solver with its own provider (drop %sadvance_surrogate)", path, !info->periodic[2] ? "x is not periodic" : "z is periodic", info->prefix);
  {
    static const char *const forecasts[] = {"best", "mean"};
    PetscInt                 kind        = 0;
    PetscCall(SgOptionsEList("-podlstm_forecast", "field.advance by podlstm: the forecast served: the best searched network's (best), or the mean of the model's top-k networks' (mean: 'POD-LSTM (top-k mean)' in surge train's scores)", forecasts, 2, forecasts[0], &kind, NULL));
    A->M.mean_forecast = (PetscBool)(kind == 1);
  }
  /* every channel the solver hands must be a field of the model, all on one grid */
  A->nch = info->nch;
  for (PetscInt c = 0; c < info->nch; c++) {
    A->chfield[c] = -1;
    for (PetscInt f = 0; f < A->M.nfields; f++)
      if (!strcmp(info->channel[c], A->M.field[f])) A->chfield[c] = f;
    PetscCheck(A->chfield[c] >= 0, info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s does not forecast '%s', a channel the solver's field.advance hands: train on exactly the channels it hands (e.g. podlstm fields: [p, b, u, w])", path, info->channel[c]);
  }
  PetscCheck(info->nch == A->M.nfields, info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s forecasts %" PetscInt_FMT " fields; the solver's field.advance hands %" PetscInt_FMT " channels: train on exactly those", path, A->M.nfields, info->nch);
  A->nzm = A->M.fshape[0][0];
  A->nxm = A->M.fshape[0][1];
  for (PetscInt f = 1; f < A->M.nfields; f++) PetscCheck(A->M.fshape[f][0] == A->nzm && A->M.fshape[f][1] == A->nxm, info->comm, PETSC_ERR_USER_INPUT, "podlstm: model %s holds fields on different grids", path);
  PetscCall(PetscMalloc3(A->M.pod->n, &A->full, A->M.L * A->M.pod->nlocal, &A->hist, A->M.L * A->M.pod->nlocal, &A->next));
  PetscCallMPI(MPI_Comm_size(info->comm, &size));
  PetscCall(PetscMalloc2(size, &A->cnt, size, &A->dsp));
  {
    PetscMPIInt n = (PetscMPIInt)A->M.pod->nlocal;
    PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, A->cnt, 1, MPI_INT, info->comm));
    for (PetscMPIInt r = 0, o = 0; r < size; r++) {
      A->dsp[r] = o;
      o += A->cnt[r];
    }
  }
  p->fn          = Advance;
  p->ctx         = A;
  p->uncertainty = Uncertainty;
  p->grid        = GridHook;
  p->destroy     = Destroy;
  p->history     = A->M.L;
  p->nnext       = A->M.L;
  p->dt          = A->M.dt;
  PetscCall(PetscStrncpy(p->uncertainty_units, "RMS spread of the top-k forecasts, in units of the training RMS anomaly", sizeof p->uncertainty_units));
  PetscCall(PetscStrncpy(p->name, "podlstm", sizeof p->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}
