/* Forecasts to beat and the score every forecast gets: the test RMSE of the reconstructed field.

   A test window w starts at snapshot s = s_te0 + w: its L inputs are true snapshots s .. s+L-1 and its
   L targets s+L .. s+2L-1 lie in the test period. Every method forecasts the targets from what is
   known at s+L-1:
     POD-LSTM / hand-designed LSTM   the network on the scaled coefficients, reconstructed
     VAR(p)                          a vector autoregression of the coefficients, iterated, reconstructed
     POD truth                       the targets' own coefficients reconstructed: the floor of every
                                     POD method (what K modes cannot represent)
     persistence                     the last input snapshot, the full field
     climatology                     the training-period mean of the same phase of the year, full field
   The error is summed over the active entries (those that vary over the training period; land does
   not) of each field, in the field's units, over all windows and leads; one allreduce per method. */
#include "sgpodlstm.h"
#include <petscblaslapack.h>

/* squared errors of one predicted state (this rank's rows, scaled as D->X) against snapshot j, per field and lead */
static void Accumulate(const SgPodLstmData *D, const PetscReal pred[], PetscInt j, PetscInt lead, PetscReal acc[], PetscInt L)
{
  const PetscReal *x = D->X + (size_t)j * D->nlocal;
  PetscInt         f = 0, hi = D->fsize[0];
  for (PetscInt i = 0; i < D->nlocal; i++) {
    while (D->rstart + i >= hi) hi += D->fsize[++f];
    if (D->active[i]) acc[f * L + lead] += PetscSqr((pred[i] - x[i]) * D->fscale[f]);
  }
}

/* count of active entries per field (global) */
static PetscErrorCode ActiveCounts(const SgPodLstmData *D, PetscReal cnt[])
{
  PetscReal loc[SG_PODLSTM_MAXFIELDS] = {0};
  PetscInt  f = 0, hi = D->fsize[0];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < D->nlocal; i++) {
    while (D->rstart + i >= hi) hi += D->fsize[++f];
    loc[f] += D->active[i];
  }
  PetscCallMPI(MPI_Allreduce(loc, cnt, (PetscMPIInt)D->nfields, MPIU_REAL, MPIU_SUM, D->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Finish(const SgPodLstmData *D, const SgPodLstmSeries *S, const char name[], PetscReal acc[], SgPodLstmScores *sc)
{
  const PetscInt L = S->L, m = sc->nmethods;
  PetscReal      cnt[SG_PODLSTM_MAXFIELDS], *g;

  PetscFunctionBegin;
  PetscCheck(m < SG_PODLSTM_MAXMETHODS, D->comm, PETSC_ERR_SUP, "podlstm: more than %d scored methods", SG_PODLSTM_MAXMETHODS);
  PetscCheck(L <= 64, D->comm, PETSC_ERR_SUP, "podlstm: scores of at most 64 leads");
  PetscCall(PetscMalloc1(D->nfields * L, &g));
  PetscCallMPI(MPI_Allreduce(acc, g, (PetscMPIInt)(D->nfields * L), MPIU_REAL, MPIU_SUM, D->comm));
  PetscCall(ActiveCounts(D, cnt));
  PetscCall(PetscStrncpy(sc->method[m], name, sizeof sc->method[m]));
  sc->nfields = D->nfields, sc->L = L, sc->nwindows = S->nte;
  for (PetscInt f = 0; f < D->nfields; f++) {
    PetscReal all = 0;
    for (PetscInt l = 0; l < L; l++) {
      sc->lead[m][f][l] = PetscSqrtReal(g[f * L + l] / (cnt[f] * S->nte));
      all += g[f * L + l];
    }
    sc->rmse[m][f] = PetscSqrtReal(all / (cnt[f] * S->nte * L));
  }
  sc->nmethods++;
  PetscCall(PetscFree(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmScoreCoefficients(const SgPodLstmData *D, SgPOD pod, const SgPodLstmSeries *S, const char name[], const PetscReal ahat[], SgPodLstmScores *sc)
{
  const PetscInt L = S->L, K = S->K;
  PetscReal     *acc, *pred;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(D->nfields * L, &acc, D->nlocal, &pred));
  for (PetscInt w = 0; w < S->nte; w++)
    for (PetscInt l = 0; l < L; l++) {
      PetscCall(SgPODReconstruct(pod, 1, ahat + (w * L + l) * K, pred));
      Accumulate(D, pred, S->s_te0 + w + L + l, l, acc, L);
    }
  PetscCall(Finish(D, S, name, acc, sc));
  PetscCall(PetscFree2(acc, pred));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmScorePersistence(const SgPodLstmData *D, const SgPodLstmSeries *S, SgPodLstmScores *sc)
{
  const PetscInt L = S->L;
  PetscReal     *acc;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(D->nfields * L, &acc));
  for (PetscInt w = 0; w < S->nte; w++)
    for (PetscInt l = 0; l < L; l++) Accumulate(D, D->X + (size_t)(S->s_te0 + w + L - 1) * D->nlocal, S->s_te0 + w + L + l, l, acc, L);
  PetscCall(Finish(D, S, "persistence", acc, sc));
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmScoreClimatology(const SgPodLstmData *D, const SgPodLstmSeries *S, PetscReal year, SgPodLstmScores *sc)
{
  const PetscInt L = S->L, nb = PetscMax(1, (PetscInt)PetscFloorReal(year / D->dt + 0.5));
  PetscReal     *clim, *acc, *cnt;

  PetscFunctionBegin;
  PetscCall(PetscCalloc3((size_t)nb * D->nlocal, &clim, nb, &cnt, D->nfields * L, &acc));
#define BIN(t) (((PetscInt)PetscFloorReal(PetscFmodReal((t), year) / year * nb + 0.5)) % nb)
  for (PetscInt j = 0; j < D->ntrain; j++) { /* the training period only */
    PetscInt b = BIN(D->time[j]);
    cnt[b] += 1;
    for (PetscInt i = 0; i < D->nlocal; i++) clim[(size_t)b * D->nlocal + i] += D->X[(size_t)j * D->nlocal + i];
  }
  for (PetscInt b = 0; b < nb; b++)
    if (cnt[b])
      for (PetscInt i = 0; i < D->nlocal; i++) clim[(size_t)b * D->nlocal + i] /= cnt[b];
  for (PetscInt b = 0; b < nb; b++) /* a phase no training snapshot fell in: the nearest phase that has one */
    for (PetscInt d = 1; !cnt[b] && d <= nb / 2; d++) {
      PetscInt src = cnt[(b + d) % nb] ? (b + d) % nb : cnt[(b - d + nb) % nb] ? (b - d + nb) % nb : -1;
      if (src >= 0)
        for (PetscInt i = 0; i < D->nlocal; i++) clim[(size_t)b * D->nlocal + i] = clim[(size_t)src * D->nlocal + i];
      if (src >= 0) break;
    }
  for (PetscInt w = 0; w < S->nte; w++)
    for (PetscInt l = 0; l < L; l++) {
      PetscInt j = S->s_te0 + w + L + l;
      Accumulate(D, clim + (size_t)BIN(D->time[j]) * D->nlocal, j, l, acc, L);
    }
#undef BIN
  PetscCall(Finish(D, S, "climatology", acc, sc));
  PetscCall(PetscFree3(clim, cnt, acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* least squares of a_t on [1, a_{t-1} .. a_{t-p}] for targets t in [p, nt): W [1 + pK][K] */
static PetscErrorCode FitVAR(const PetscReal a[], PetscInt K, PetscInt p, PetscInt nt, PetscReal W[])
{
  PetscBLASInt q = (PetscBLASInt)(1 + p * K), nrhs = (PetscBLASInt)K, info;
  PetscReal   *G, *x, tr = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(q * q, &G, q, &x));
  PetscCall(PetscArrayzero(W, q * K));
  for (PetscInt t = p; t < nt; t++) {
    x[0] = 1;
    for (PetscInt j = 1; j <= p; j++)
      for (PetscInt k = 0; k < K; k++) x[1 + (j - 1) * K + k] = a[(t - j) * K + k];
    for (PetscInt r = 0; r < q; r++) {
      for (PetscInt c = 0; c < q; c++) G[c * q + r] += x[r] * x[c];
      for (PetscInt k = 0; k < K; k++) W[k * q + r] += x[r] * a[t * K + k]; /* column-major q x K right-hand sides */
    }
  }
  for (PetscInt r = 0; r < q; r++) tr += G[r * q + r];
  for (PetscInt r = 0; r < q; r++) G[r * q + r] += 1e-12 * tr / q; /* keeps the solve defined if a lag is constant */
  LAPACKpotrf_("L", &q, G, &q, &info);
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "podlstm: the VAR(%" PetscInt_FMT ") normal equations are singular (LAPACK potrf info %d)", p, (int)info);
  LAPACKpotrs_("L", &q, &nrhs, G, &q, W, &q, &info);
  PetscCall(PetscFree2(G, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* iterate the VAR L steps from the L true coefficients starting at s: out [L][K] */
static void IterateVAR(const PetscReal a[], PetscInt K, PetscInt L, PetscInt p, const PetscReal W[], PetscInt s, PetscReal out[])
{
  const PetscInt q = 1 + p * K;
  for (PetscInt l = 0; l < L; l++)
    for (PetscInt k = 0; k < K; k++) {
      PetscReal v = W[k * q];
      for (PetscInt j = 1; j <= p; j++) {
        PetscInt         t    = s + L + l - j; /* the lagged step: true input, or an earlier forecast */
        const PetscReal *prev = t < s + L ? a + t * K : out + (t - s - L) * K;
        for (PetscInt kk = 0; kk < K; kk++) v += W[k * q + 1 + (j - 1) * K + kk] * prev[kk];
      }
      out[l * K + k] = v;
    }
}

PetscErrorCode SgPodLstmVARFit(const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], PetscBool whole, SgPodLstmVARModel *V)
{
  const PetscInt K = S->K, L = S->L, nfit = D->ntrain - D->nvalid;
  PetscReal      best = PETSC_MAX_REAL, *f;

  PetscFunctionBegin;
  V->K = K, V->p = 1;
  PetscCall(PetscMalloc1((1 + L * K) * K, &V->W));
  PetscCall(PetscMalloc1(L * K, &f));
  for (PetscInt p = 1; p <= L; p++) { /* the order with the smallest validation error */
    PetscReal e = 0;
    if (nfit - p < 2 * (1 + p * K)) break; /* too few rows for so many unknowns */
    PetscCall(FitVAR(coef, K, p, nfit, V->W));
    for (PetscInt w = 0; w < S->nva; w++) {
      IterateVAR(coef, K, L, p, V->W, S->s_va0 + w, f);
      for (PetscInt i = 0; i < L * K; i++) e += PetscSqr(f[i] - coef[(S->s_va0 + w + L) * K + i]);
    }
    if (e < best) best = e, V->p = p;
  }
  PetscCall(FitVAR(coef, K, V->p, whole ? D->ntrain : nfit, V->W));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgPodLstmVARIterate(const SgPodLstmVARModel *V, PetscInt L, const PetscReal in[], PetscReal out[])
{
  IterateVAR(in, V->K, L, V->p, V->W, 0, out);
}

PetscErrorCode SgPodLstmVARFree(SgPodLstmVARModel *V)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(V->W));
  V->p = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmVAR(const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], PetscInt *order, PetscReal ahat[])
{
  SgPodLstmVARModel V;

  PetscFunctionBegin;
  PetscCall(SgPodLstmVARFit(D, S, coef, PETSC_TRUE, &V)); /* refitted on the whole training period */
  for (PetscInt w = 0; w < S->nte; w++) IterateVAR(coef, S->K, S->L, V.p, V.W, S->s_te0 + w, ahat + w * S->L * S->K);
  *order = V.p;
  PetscCall(SgPodLstmVARFree(&V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmForecastWindows(SgPodLstmNet net, const SgPodLstmSeries *S, PetscInt s0, PetscInt nw, PetscReal ahat[])
{
  const PetscInt n = S->L * S->K;
  PetscReal     *x, *y;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nw * n, &x, nw * n, &y));
  for (PetscInt w = 0; w < nw; w++) SgPodLstmSeriesWindow(S, s0 + w, x + w * n, NULL);
  PetscCall(SgPodLstmNetPredict(net, nw, S->L, x, y));
  if (S->fb) /* a residual network: add the base's forecast (scaled) */
    for (PetscInt w = 0; w < nw; w++)
      for (PetscInt i = 0; i < n; i++) y[w * n + i] += S->fb[(size_t)(s0 + w) * n + i];
  SgPodLstmSeriesUnscale(S, nw * S->L, y, ahat);
  PetscCall(PetscFree2(x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmForecast(SgPodLstmNet net, const SgPodLstmSeries *S, PetscReal ahat[])
{
  PetscFunctionBegin;
  PetscCall(SgPodLstmForecastWindows(net, S, S->s_te0, S->nte, ahat));
  PetscFunctionReturn(PETSC_SUCCESS);
}
