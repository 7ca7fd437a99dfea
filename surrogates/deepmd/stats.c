/* Data statistics of DeePMD-kit: environment-matrix mean/std per centre type (davg/dstd, padding
   rows included, angular std pooled over x,y,z) and the per-type energy bias by least squares. */
#include <math.h>
#include "deepmd.h"
#include "deepmd_train.h"

PetscErrorCode SgDPStatsBegin(SgDPStats *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof *s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPStatsAddFrame(SgDPModel m, SgDPStats *s, PetscInt N, const PetscReal *x, const PetscInt *type, const PetscReal *box)
{
  const SgDPConfig *c = &m->cfg;
  PetscInt          nall = N, *tall = (PetscInt *)type, *map = NULL;
  PetscReal        *xall = (PetscReal *)x;
  SgDPEnv           env  = {0};

  PetscFunctionBegin;
  if (box) PetscCall(SgDPImages(N, x, type, box, c->rcut, &nall, &xall, &tall, &map));
  PetscCall(SgDPEnvBuild(c, N, nall, xall, tall, &env));
  for (PetscInt i = 0; i < N; i++) {
    PetscInt t = type[i], tn = 0;
    for (PetscInt q = 0; q < c->nnei; q++) {
      static const PetscReal zero[4] = {0, 0, 0, 0};
      const PetscReal       *R       = env.env + 4 * (i * c->nnei + q);
      while (q >= c->sec[tn + 1]) tn++;
      if (c->excl[t][tn]) R = zero; /* an excluded pair's rows count as zero rows, as DeePMD-kit's statistics apply its exclusion mask */
      s->sr[t] += R[0];
      s->sr2[t] += R[0] * R[0];
      s->sa[t] += (R[1] + R[2] + R[3]) / 3;
      s->sa2[t] += (R[1] * R[1] + R[2] * R[2] + R[3] * R[3]) / 3;
      s->n[t] += 1;
    }
  }
  if (env.overflow > s->overflow) s->overflow = env.overflow;
  PetscCall(SgDPEnvFree(&env));
  if (box) PetscCall(PetscFree3(xall, tall, map));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscReal Std(PetscReal s2, PetscReal s, PetscReal n, PetscReal rcut)
{
  if (n == 0) return 1.0 / rcut;
  PetscReal v = sqrt(PetscMax(0.0, s2 / n - (s / n) * (s / n)));
  return v < 1e-2 ? 1e-2 : v; /* DeePMD-kit's floor */
}

PetscErrorCode SgDPStatsEnd(SgDPModel m, SgDPStats *s, MPI_Comm comm)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s->sr, 5 * SG_DP_MAXT, MPIU_REAL, MPIU_SUM, comm)); /* sr..n are contiguous */
  for (PetscInt t = 0; t < m->cfg.ntypes; t++) {
    m->davg[t][0] = s->n[t] ? s->sr[t] / s->n[t] : 0;
    m->davg[t][1] = m->davg[t][2] = m->davg[t][3] = 0;
    m->dstd[t][0]                                 = Std(s->sr2[t], s->sr[t], s->n[t], m->cfg.rcut);
    m->dstd[t][1] = m->dstd[t][2] = m->dstd[t][3] = Std(s->sa2[t], s->sa[t], s->n[t], m->cfg.rcut);
    if (m->cfg.radial) m->dstd[t][1] = m->dstd[t][2] = m->dstd[t][3] = 1; /* se_e2_r uses the radial column only (DeePMD-kit stores it alone) */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Least squares E_f = sum_t count_t(f) out_t over nf frames of T types (the energy bias, and the
   bias shift of change_bias fitted to residuals); with a fixed composition the system is rank
   deficient and, like numpy's lstsq that DeePMD-kit uses, we return the minimum-norm solution
   (tiny ridge). */
PetscErrorCode SgDPPerTypeFit(PetscInt T, PetscInt nf, const PetscReal *counts, const PetscReal *E, PetscReal out[])
{
  PetscReal A[SG_DP_MAXT][SG_DP_MAXT + 1] = {{0}}, tr = 0;

  PetscFunctionBegin;
  PetscCheck(T >= 1 && T <= SG_DP_MAXT, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: %" PetscInt_FMT " types; at most %d", T, SG_DP_MAXT);
  for (PetscInt f = 0; f < nf; f++)
    for (PetscInt a = 0; a < T; a++) {
      for (PetscInt b = 0; b < T; b++) A[a][b] += counts[f * T + a] * counts[f * T + b];
      A[a][T] += counts[f * T + a] * E[f];
    }
  for (PetscInt a = 0; a < T; a++) tr += A[a][a];
  for (PetscInt a = 0; a < T; a++) A[a][a] += 1e-12 * tr + 1e-300;
  for (PetscInt k = 0; k < T; k++) { /* Gauss-Jordan on the SPD normal equations */
    PetscReal p = A[k][k];
    for (PetscInt j = k; j <= T; j++) A[k][j] /= p;
    for (PetscInt i = 0; i < T; i++)
      if (i != k) {
        PetscReal q = A[i][k];
        for (PetscInt j = k; j <= T; j++) A[i][j] -= q * A[k][j];
      }
  }
  for (PetscInt a = 0; a < T; a++) out[a] = A[a][T];
  PetscFunctionReturn(PETSC_SUCCESS);
}
