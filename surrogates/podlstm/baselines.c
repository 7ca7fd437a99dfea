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

/* the sums of one predicted state (this rank's rows, scaled as D->X) against snapshot j, per field and
   lead: acc[(c nfields + f) L + lead], c = 0: squared error; with a harmonic climatology c = 1, 2, 3:
   f'o', f'^2, o'^2 of the anomalies (prediction and truth less the climatology at the truth's time) */
#define ACC_SUMS 4
static void Accumulate(const SgPodLstmData *D, const PetscReal pred[], PetscInt j, PetscInt lead, PetscReal acc[], PetscInt L)
{
  const PetscReal *x = D->X + (size_t)j * D->nlocal;
  const PetscInt   F = D->nfields;
  PetscInt         f = 0, hi = D->fsize[0];
  PetscReal        h[2 * 16 + 1];
  if (D->nharm) SgPodLstmHarmonics(D, D->time[j], h);
  for (PetscInt i = 0; i < D->nlocal; i++) {
    while (D->rstart + i >= hi) hi += D->fsize[++f];
    if (!D->active[i]) continue;
    acc[f * L + lead] += PetscSqr((pred[i] - x[i]) * D->fscale[f]);
    if (D->nharm) {
      PetscReal c = 0, fa, oa;
      for (PetscInt q = 0; q < D->nharm; q++) c += D->harm[(size_t)i * D->nharm + q] * h[q];
      fa = (pred[i] - c) * D->fscale[f];
      oa = (x[i] - c) * D->fscale[f];
      acc[(1 * F + f) * L + lead] += fa * oa;
      acc[(2 * F + f) * L + lead] += fa * fa;
      acc[(3 * F + f) * L + lead] += oa * oa;
    }
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
  PetscCall(PetscMalloc1(ACC_SUMS * D->nfields * L, &g));
  PetscCallMPI(MPI_Allreduce(acc, g, (PetscMPIInt)(ACC_SUMS * D->nfields * L), MPIU_REAL, MPIU_SUM, D->comm));
  PetscCall(ActiveCounts(D, cnt));
  PetscCall(PetscStrncpy(sc->method[m], name, sizeof sc->method[m]));
  sc->nfields = D->nfields;
  sc->L = L;
  sc->nwindows = S->nte;
  for (PetscInt f = 0; f < D->nfields; f++) {
    PetscReal all = 0;
    for (PetscInt l = 0; l < L; l++) {
      sc->lead[m][f][l] = PetscSqrtReal(g[f * L + l] / (cnt[f] * S->nte));
      all += g[f * L + l];
    }
    sc->rmse[m][f] = PetscSqrtReal(all / (cnt[f] * S->nte * L));
    sc->has_acc = (PetscBool)(D->nharm > 0);
    if (D->nharm) {
      const PetscInt F = D->nfields;
      PetscReal      s[3] = {0, 0, 0};
      for (PetscInt l = 0; l < L; l++) {
        for (PetscInt c = 0; c < 3; c++) s[c] += g[((c + 1) * F + f) * L + l];
        sc->acc[m][f][l] = g[(1 * F + f) * L + l] / PetscSqrtReal(g[(2 * F + f) * L + l] * g[(3 * F + f) * L + l] + 1e-300);
      }
      sc->accall[m][f] = s[0] / PetscSqrtReal(s[1] * s[2] + 1e-300);
      if (s[1] <= 1e-20 * s[2]) { /* a forecast without anomalies (the climatology): its correlation is 0, not that of round-off */
        sc->accall[m][f] = 0;
        for (PetscInt l = 0; l < L; l++) sc->acc[m][f][l] = 0;
      }
    }
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
  PetscCall(PetscCalloc2(ACC_SUMS * D->nfields * L, &acc, D->nlocal, &pred));
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
  PetscCall(PetscCalloc1(ACC_SUMS * D->nfields * L, &acc));
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
  if (D->nharm) { /* the harmonic climatology: in phase at any time */
    PetscReal h[2 * 16 + 1], *pred;
    char      name[64];
    PetscCall(PetscCalloc2(ACC_SUMS * D->nfields * L, &acc, D->nlocal, &pred));
    for (PetscInt w = 0; w < S->nte; w++)
      for (PetscInt l = 0; l < L; l++) {
        const PetscInt j = S->s_te0 + w + L + l;
        SgPodLstmHarmonics(D, D->time[j], h);
        for (PetscInt i = 0; i < D->nlocal; i++) {
          pred[i] = 0;
          for (PetscInt q = 0; q < D->nharm; q++) pred[i] += D->harm[(size_t)i * D->nharm + q] * h[q];
        }
        Accumulate(D, pred, j, l, acc, L);
      }
    PetscCall(PetscSNPrintf(name, sizeof name, "climatology (%" PetscInt_FMT " annual harmonics)", (D->nharm - 1) / 2));
    PetscCall(Finish(D, S, name, acc, sc));
    PetscCall(PetscFree2(acc, pred));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscCalloc3((size_t)nb * D->nlocal, &clim, nb, &cnt, ACC_SUMS * D->nfields * L, &acc));
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

/* solve the normal equations (G + ridge mean(diag G) I) W = R in place (G q x q column-major, R q x nrhs
   column-major -> W); SolveNormal's ridge of 1e-12 keeps them defined if a regressor is constant */
static PetscErrorCode SolveNormalRidge(PetscInt q0, PetscInt nrhs0, PetscReal G[], PetscReal W[], PetscReal ridge, const char what[])
{
  PetscBLASInt q = (PetscBLASInt)q0, nrhs = (PetscBLASInt)nrhs0, info;
  PetscReal    tr = 0;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < q0; r++) tr += G[r * q0 + r];
  for (PetscInt r = 0; r < q0; r++) G[r * q0 + r] += ridge * tr / q0;
  LAPACKpotrf_("L", &q, G, &q, &info);
  PetscCheck(!info, PETSC_COMM_SELF, PETSC_ERR_LIB, "podlstm: the %s normal equations are singular (LAPACK potrf info %d)", what, (int)info);
  LAPACKpotrs_("L", &q, &nrhs, G, &q, W, &q, &info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SolveNormal(PetscInt q, PetscInt nrhs, PetscReal G[], PetscReal W[], const char what[])
{
  PetscFunctionBegin;
  PetscCall(SolveNormalRidge(q, nrhs, G, W, 1e-12, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add x x^T to G and x y^T to R (q regressors, nrhs targets, column-major) */
static void AddRow(PetscInt q, PetscInt nrhs, const PetscReal x[], const PetscReal y[], PetscReal G[], PetscReal R[])
{
  for (PetscInt r = 0; r < q; r++) {
    for (PetscInt c = 0; c < q; c++) G[c * q + r] += x[r] * x[c];
    for (PetscInt k = 0; k < nrhs; k++) R[k * q + r] += x[r] * y[k];
  }
}

void SgPodLstmHarmonics(const SgPodLstmData *D, PetscReal t, PetscReal h[])
{
  h[0] = 1;
  for (PetscInt i = 1; 2 * i < D->nharm; i++) {
    h[2 * i - 1] = PetscCosReal(2 * PETSC_PI * i * t / D->year);
    h[2 * i]     = PetscSinReal(2 * PETSC_PI * i * t / D->year);
  }
}

PetscErrorCode SgPodLstmHarmonicsFit(SgPodLstmData *D, PetscInt H, PetscReal year)
{
  const PetscInt q = 2 * H + 1;
  PetscReal      h[2 * 16 + 1], *G;

  PetscFunctionBegin;
  PetscCheck(H >= 0 && H <= 16 && year > 0, D->comm, PETSC_ERR_USER_INPUT, "podlstm: harmonics %" PetscInt_FMT " of a year of %g: give 0 to 16 harmonics and year > 0", H, (double)year);
  PetscCall(PetscFree(D->harm));
  D->nharm = q;
  D->year = year;
  PetscCall(PetscCalloc1(q * q, &G));
  PetscCall(PetscCalloc1((size_t)D->nlocal * q + 1, &D->harm));
  /* one Gram matrix for every entry: the regressors are the same; right-hand sides per entry */
  for (PetscInt j = 0; j < D->ntrain; j++) {
    SgPodLstmHarmonics(D, D->time[j], h);
    for (PetscInt r = 0; r < q; r++) {
      for (PetscInt c = 0; c < q; c++) G[c * q + r] += h[r] * h[c];
      for (PetscInt i = 0; i < D->nlocal; i++) D->harm[(size_t)i * q + r] += h[r] * D->X[(size_t)j * D->nlocal + i];
    }
  }
  if (D->nlocal) PetscCall(SolveNormal(q, D->nlocal, G, D->harm, "harmonic climatology"));
  PetscCall(PetscFree(G));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the regressors of step t: [1, a_{t-1} .. a_{t-p}, a_{t-1}[i] a_{t-1}[j] (i <= j) if nq]; lag j
   of step t is lag(j) */
#define VAR_ROW(x, K, p, nq, lag) \
  do { \
    x[0] = 1; \
    for (PetscInt j_ = 1; j_ <= (p); j_++) \
      for (PetscInt k_ = 0; k_ < (K); k_++) x[1 + (j_ - 1) * (K) + k_] = (lag(j_))[k_]; \
    if (nq) \
      for (PetscInt i_ = 0, c_ = 1 + (p) * (K); i_ < (K); i_++) \
        for (PetscInt k_ = i_; k_ < (K); k_++) x[c_++] = (lag(1))[i_] * (lag(1))[k_]; \
  } while (0)

/* least squares of a_t on its regressors (VAR_ROW) for targets t in [p, nt): W [1 + pK + nq][K] */
static PetscErrorCode FitVAR(const PetscReal a[], PetscInt K, PetscInt p, PetscInt nq, PetscReal ridge, PetscInt nt, PetscReal W[])
{
  const PetscInt q = 1 + p * K + nq;
  PetscReal     *G, *x;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(q * q, &G, q, &x));
  PetscCall(PetscArrayzero(W, q * K));
  for (PetscInt t = p; t < nt; t++) {
#define LAG_A(j) (a + (t - (j)) * K)
    VAR_ROW(x, K, p, nq, LAG_A);
#undef LAG_A
    AddRow(q, K, x, a + t * K, G, W); /* column-major q x K right-hand sides */
  }
  PetscCall(SolveNormalRidge(q, K, G, W, ridge, nq ? "quadratic regression" : "VAR"));
  PetscCall(PetscFree2(G, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* iterate the model L steps from the L true coefficients starting at s: out [L][K] (the sum in the
   order of the regressors, VAR_ROW) */
static void IterateVAR(const PetscReal a[], PetscInt K, PetscInt L, PetscInt p, PetscInt nq, const PetscReal W[], PetscInt s, PetscReal out[])
{
  const PetscInt q = 1 + p * K + nq;
#define LAG_F(j) ((s + L + l - (j)) < s + L ? a + (s + L + l - (j)) * K : out + (l - (j)) * K)
  for (PetscInt l = 0; l < L; l++)
    for (PetscInt k = 0; k < K; k++) {
      PetscReal v = W[k * q];
      for (PetscInt j = 1; j <= p; j++) { /* the lagged step: a true input, or an earlier forecast */
        const PetscReal *prev = LAG_F(j);
        for (PetscInt kk = 0; kk < K; kk++) v += W[k * q + 1 + (j - 1) * K + kk] * prev[kk];
      }
      if (nq) {
        const PetscReal *x = LAG_F(1);
        for (PetscInt i = 0, r = 1 + p * K; i < K; i++)
          for (PetscInt m = i; m < K; m++, r++) v += W[k * q + r] * (x[i] * x[m]);
      }
      out[l * K + k] = v;
    }
#undef LAG_F
}

PetscErrorCode SgPodLstmVARFit(const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], PetscBool whole, SgPodLstmVARModel *V)
{
  const PetscInt K = S->K, L = S->L, nfit = D->ntrain - D->nvalid;
  PetscReal      best = PETSC_MAX_REAL, *f;

  PetscFunctionBegin;
  V->K = K;
  V->p = 1;
  PetscCall(PetscMalloc1((1 + L * K) * K, &V->W));
  PetscCall(PetscMalloc1(L * K, &f));
  for (PetscInt p = 1; p <= L; p++) { /* the order with the smallest validation error */
    PetscReal e = 0;
    if (nfit - p < 2 * (1 + p * K)) break; /* too few rows for so many unknowns */
    PetscCall(FitVAR(coef, K, p, 0, 1e-12, nfit, V->W));
    for (PetscInt w = 0; w < S->nva; w++) {
      IterateVAR(coef, K, L, p, 0, V->W, S->s_va0 + w, f);
      for (PetscInt i = 0; i < L * K; i++) e += PetscSqr(f[i] - coef[(S->s_va0 + w + L) * K + i]);
    }
    if (e < best) {
      best = e;
      V->p = p;
    }
  }
  PetscCall(FitVAR(coef, K, V->p, 0, 1e-12, whole ? D->ntrain : nfit, V->W));
  V->nq = 0;
  V->ridge = 1e-12;
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Is a free run f [nfree][K] on the attractor of the fitting series a [nfit][K]? Bounded: every
   coefficient within the fitting period's range widened by half its width on each side (a diverging
   iteration leaves it within a few steps and grows without bound; the truth stays inside by
   construction). Not collapsed: every mode's standard deviation over the run's second half at least
   half the fitting period's (a map that decays to a fixed point or a small cycle has left the attractor
   as surely as one that blows up). Both tests are invariant under a per-mode affine scaling, so scaled
   and unscaled coefficients give the same answer. Vlachas et al. (Neural Networks 126, 2020) and Pathak
   et al. (Chaos 27, 2017) judge surrogates of chaotic systems by such free runs, not only by short-lead
   error. */
PetscBool SgPodLstmFreeRunStays(const PetscReal a[], PetscInt K, PetscInt nfit, const PetscReal f[], PetscInt nfree)
{
  for (PetscInt k = 0; k < K; k++) {
    PetscReal      lo = PETSC_MAX_REAL, hi = -PETSC_MAX_REAL, m = 0, v = 0, mf = 0, vf = 0;
    const PetscInt h = nfree / 2, nh = nfree - h;

    for (PetscInt t = 0; t < nfit; t++) {
      lo = PetscMin(lo, a[t * K + k]);
      hi = PetscMax(hi, a[t * K + k]);
      m += a[t * K + k] / nfit;
    }
    for (PetscInt t = 0; t < nfit; t++) v += PetscSqr(a[t * K + k] - m) / nfit;
    for (PetscInt t = 0; t < nfree; t++) {
      const PetscReal x = f[t * K + k];
      if (PetscIsInfOrNanReal(x) || x < lo - 0.5 * (hi - lo) || x > hi + 0.5 * (hi - lo)) return PETSC_FALSE;
      if (t >= h) mf += x / nh;
    }
    for (PetscInt t = h; t < nfree; t++) vf += PetscSqr(f[t * K + k] - mf) / nh;
    if (vf < 0.25 * v) return PETSC_FALSE; /* standard deviation below half the truth's */
  }
  return PETSC_TRUE;
}

/* Do the free runs of a quadratic regression W (p lags) stay on the training data's attractor
   (SgPodLstmFreeRunStays)? nfree steps from each of 4 starts spread over the fitting period (a map at
   the edge of stability survives one start and leaves from another: on KS L = 22 a check from one
   start let through a ridge whose run from the test period left after 40 Lyapunov times). f: [nfree][K]
   work. */
static PetscBool QuadFreeRunStays(const PetscReal a[], PetscInt K, PetscInt nfit, PetscInt p, PetscInt nq, const PetscReal W[], PetscInt nfree, PetscReal f[])
{
  for (PetscInt st = 0; st < 4; st++) {
    const PetscInt s0 = nfit - st * (nfit / 4); /* the run's history: the p rows before s0 */

    if (s0 < p) continue;
    IterateVAR(a, K, nfree, p, nq, W, s0 - nfree, f); /* only rows s0 - p .. s0 - 1 are read */
    if (!SgPodLstmFreeRunStays(a, K, nfit, f, nfree)) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

PetscErrorCode SgPodLstmQuadFit(const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], PetscBool whole, PetscInt nfree, SgPodLstmVARModel *V)
{
  const PetscInt  K = S->K, L = S->L, nfit = D->ntrain - D->nvalid, nq = K * (K + 1) / 2;
  const PetscReal ridges[] = {1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0}; /* the KS study's list (ks_study.py) */
  /* with a free-run check: 4 per decade from 1e-6 to 1 (the stable band of KS L = 22 is a factor ~2 wide
     near 5e-3, docs/podlstm.md, between ridges that diverge and ridges that collapse to a fixed point) */
  const PetscInt  nr   = nfree ? 25 : (PetscInt)(sizeof ridges / sizeof ridges[0]);
  PetscReal       best = PETSC_MAX_REAL, *f, *g;
  PetscInt        ntried = 0, nstay = 0; /* candidates fitted, and those whose free run stays */

  PetscFunctionBegin;
  PetscCheck(nfit - 1 >= 2 * (1 + K + nq), D->comm, PETSC_ERR_USER_INPUT, "podlstm: base quadratic has at least %" PetscInt_FMT " regressors per coefficient (1 + pK + K(K+1)/2, K = %" PetscInt_FMT " modes, p = 1 lag) but only %" PetscInt_FMT " fitting snapshots (the training period less its validation part): give at least %" PetscInt_FMT " (raise -podlstm_ntrain or lower -podlstm_modes)", 1 + K + nq, K, nfit, 2 * (1 + K + nq) + 1);
  PetscCheck(S->nva >= 1, D->comm, PETSC_ERR_USER_INPUT, "podlstm: base quadratic chooses its lags and ridge on the validation windows and there are none: raise -podlstm_valid_fraction or -podlstm_ntrain");
  PetscCheck(nfree == 0 || (nfree >= 4 && nfree <= nfit), D->comm, PETSC_ERR_USER_INPUT, "podlstm: quad_free_run %" PetscInt_FMT " snapshots: give 0 (no free-run check) or 4 to the %" PetscInt_FMT " fitting snapshots", nfree, nfit);
  V->K = K;
  V->p = 1;
  V->nq = nq;
  V->ridge = ridges[0];
  PetscCall(PetscMalloc1((1 + L * K + nq) * K, &V->W));
  PetscCall(PetscMalloc2(L * K, &f, nfree * K + 1, &g));
  for (PetscInt p = 1; p <= L; p++) { /* the lags and ridge of the smallest validation error */
    if (nfit - p < 2 * (1 + p * K + nq)) break; /* too few rows for so many unknowns */
    for (PetscInt r = 0; r < nr; r++) {
      const PetscReal ridge = nfree ? PetscPowReal(10.0, -6 + 0.25 * r) : ridges[r];
      PetscReal       e     = 0;
      PetscCall(FitVAR(coef, K, p, nq, ridge, nfit, V->W));
      ntried++;
      if (nfree && !QuadFreeRunStays(coef, K, nfit, p, nq, V->W, nfree, g)) continue;
      nstay++;
      for (PetscInt w = 0; w < S->nva; w++) {
        IterateVAR(coef, K, L, p, nq, V->W, S->s_va0 + w, f);
        for (PetscInt i = 0; i < L * K; i++) e += PetscSqr(f[i] - coef[(S->s_va0 + w + L) * K + i]);
      }
      if (!PetscIsInfOrNanReal(e) && e < best) {
        best = e;
        V->p = p;
        V->ridge = ridge;
      }
    }
  }
  PetscCall(PetscFree2(f, g));
  PetscCheck(!nfree || nstay, D->comm, PETSC_ERR_USER_INPUT, "podlstm: base quadratic: none of the %" PetscInt_FMT " lags and ridges keeps a free run of %" PetscInt_FMT " snapshots on the training attractor (bounded, not collapsed): use quad_free_run 0 or base var", ntried, nfree);
  PetscCheck(best < PETSC_MAX_REAL, D->comm, PETSC_ERR_USER_INPUT, "podlstm: base quadratic diverges on the validation windows with every lag and ridge: use base var");
  PetscCall(FitVAR(coef, K, V->p, nq, V->ridge, whole ? D->ntrain : nfit, V->W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a = lo + d s (d = hi - lo) in V's regressors; each output divided by d and less lo / d */
PetscErrorCode SgPodLstmVARScaled(const SgPodLstmVARModel *V, const PetscReal lo[], const PetscReal hi[], SgPodLstmVARModel *Vs)
{
  const PetscInt K = V->K, p = V->p, nq = V->nq, q = 1 + p * K + nq;

  PetscFunctionBegin;
  *Vs = *V;
  PetscCall(PetscCalloc1(q * K, &Vs->W));
  for (PetscInt k = 0; k < K; k++) {
    const PetscReal *w  = V->W + k * q;
    PetscReal       *ws = Vs->W + k * q, c = w[0] - lo[k];
    for (PetscInt j = 1; j <= p; j++)
      for (PetscInt m = 0; m < K; m++) {
        c += w[1 + (j - 1) * K + m] * lo[m];
        ws[1 + (j - 1) * K + m] += w[1 + (j - 1) * K + m] * (hi[m] - lo[m]);
      }
    for (PetscInt i = 0, r = 1 + p * K; nq && i < K; i++) /* (lo_i + d_i s_i)(lo_m + d_m s_m) */
      for (PetscInt m = i; m < K; m++, r++) {
        c += w[r] * lo[i] * lo[m];
        ws[1 + i] += w[r] * (hi[i] - lo[i]) * lo[m];
        ws[1 + m] += w[r] * lo[i] * (hi[m] - lo[m]);
        ws[r] = w[r] * (hi[i] - lo[i]) * (hi[m] - lo[m]);
      }
    ws[0] = c;
    for (PetscInt r = 0; r < q; r++) ws[r] /= hi[k] - lo[k];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgPodLstmVARIterate(const SgPodLstmVARModel *V, PetscInt L, const PetscReal in[], PetscReal out[])
{
  IterateVAR(in, V->K, L, V->p, V->nq, V->W, 0, out);
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
  for (PetscInt w = 0; w < S->nte; w++) IterateVAR(coef, S->K, S->L, V.p, 0, V.W, S->s_te0 + w, ahat + w * S->L * S->K);
  *order = V.p;
  PetscCall(SgPodLstmVARFree(&V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmLIM(const SgPodLstmData *D, const SgPodLstmSeries *S, const PetscReal coef[], PetscInt *order, PetscReal fvar[], PetscReal fmap[])
{
  const PetscInt K = S->K, L = S->L, nh = D->nharm, q = 1 + L * K + nh - 1;
  PetscReal      h[2 * 16 + 1], *C, *Gh, *G, *anom, *clim, *x, *Wl;
  SgPodLstmVARModel V;

  PetscFunctionBegin;
  PetscCheck(nh > 0, D->comm, PETSC_ERR_ORDER, "podlstm: the LIM baselines need the harmonic climatology (podlstm: {harmonics: 3})");
  PetscCall(PetscCalloc5(nh * nh, &Gh, nh * K, &C, (size_t)D->nsnap * K, &anom, (size_t)D->nsnap * K, &clim, q, &x));
  /* the coefficients' harmonic climatology, least squares over the training period */
  for (PetscInt j = 0; j < D->ntrain; j++) {
    SgPodLstmHarmonics(D, D->time[j], h);
    AddRow(nh, K, h, coef + j * K, Gh, C);
  }
  PetscCall(SolveNormal(nh, K, Gh, C, "coefficient climatology"));
  for (PetscInt j = 0; j < D->nsnap; j++) {
    SgPodLstmHarmonics(D, D->time[j], h);
    for (PetscInt k = 0; k < K; k++) {
      clim[j * K + k] = 0;
      for (PetscInt r = 0; r < nh; r++) clim[j * K + k] += C[k * nh + r] * h[r];
      anom[j * K + k] = coef[j * K + k] - clim[j * K + k];
    }
  }
  /* (a) climatology + VAR of the anomalies */
  PetscCall(SgPodLstmVARFit(D, S, anom, PETSC_TRUE, &V));
  for (PetscInt w = 0; w < S->nte; w++) {
    PetscReal *o = fvar + w * L * K;
    SgPodLstmVARIterate(&V, L, anom + (S->s_te0 + w) * K, o);
    for (PetscInt i = 0; i < L * K; i++) o[i] += clim[(S->s_te0 + w + L) * K + i];
  }
  *order = V.p;
  PetscCall(SgPodLstmVARFree(&V));
  /* (b) per lead: the anomaly at s + L + l from [1, the L anomalies of the window, the target's season] */
  PetscCall(PetscMalloc2(q * q, &G, q * K, &Wl));
  for (PetscInt l = 0; l < L; l++) {
    PetscCall(PetscArrayzero(G, q * q));
    PetscCall(PetscArrayzero(Wl, q * K));
    for (PetscInt s = 0; s + 2 * L <= D->ntrain; s++) { /* windows whose targets lie in the training period */
      x[0] = 1;
      PetscCall(PetscArraycpy(x + 1, anom + s * K, L * K));
      SgPodLstmHarmonics(D, D->time[s + L + l], h);
      for (PetscInt r = 1; r < nh; r++) x[L * K + r] = h[r];
      AddRow(q, K, x, anom + (s + L + l) * K, G, Wl);
    }
    PetscCall(SolveNormal(q, K, G, Wl, "LIM map"));
    for (PetscInt w = 0; w < S->nte; w++) {
      const PetscInt s = S->s_te0 + w;
      x[0] = 1;
      PetscCall(PetscArraycpy(x + 1, anom + s * K, L * K));
      SgPodLstmHarmonics(D, D->time[s + L + l], h);
      for (PetscInt r = 1; r < nh; r++) x[L * K + r] = h[r];
      for (PetscInt k = 0; k < K; k++) {
        PetscReal v = clim[(s + L + l) * K + k];
        for (PetscInt r = 0; r < q; r++) v += Wl[k * q + r] * x[r];
        fmap[(w * L + l) * K + k] = v;
      }
    }
  }
  PetscCall(PetscFree2(G, Wl));
  PetscCall(PetscFree5(Gh, C, anom, clim, x));
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
