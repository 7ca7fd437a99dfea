/* Hand-written inference of the Deep Potential (no autodiff): energy, forces, virial.

   The embedding nets map one scalar x = Rn_ij[0] to M outputs, so their derivative dG/dx is carried
   forward with the values (forward-mode), which is cheaper than a reverse pass and is exactly what
   the tabulated ("compressed") embedding provides too. The rest is reverse-mode by hand:
     dE/dD (fitting net backward) -> dE/dT = dE/dD T< + [dE/dD^T T]_{m<M2} -> dE/dRn_ij and dE/dG_ij
     -> dE/dr_ij = sum_k dE/dRn_ijk dRn_ijk/dr_ij -> forces and virial. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "deepmd.h"

/* G, dG, d2G: [npt][M] (dG, d2G may be NULL when order is lower) */
void SgDPEmbedEval(const SgDPNet *net, PetscInt npt, const PetscReal *x, PetscInt order, PetscReal *G, PetscReal *dG, PetscReal *d2G, PetscReal *work)
{
  PetscInt maxw = 1;
  for (PetscInt l = 0; l < net->nl; l++) maxw = PetscMax(maxw, net->l[l].out);
  size_t     sz = (size_t)npt * maxw;
  PetscReal *h[3], *z[3], *own = NULL;
  if (!work) work = own = malloc(sizeof(PetscReal) * 6 * sz);
  for (int k = 0; k < 3; k++) h[k] = work + k * sz, z[k] = work + (3 + k) * sz;
  PetscInt in = 1;
  for (PetscInt p = 0; p < npt; p++) h[0][p] = x[p], h[1][p] = 1, h[2][p] = 0;
  for (PetscInt l = 0; l < net->nl; l++) {
    const SgDPLayer *L = &net->l[l];
    PetscInt         out = L->out;
    /* z = h W^T + b (value), z' = h' W^T, z'' = h'' W^T */
    for (int k = 0; k <= order; k++) {
      if (in == 1) {
        for (PetscInt p = 0; p < npt; p++)
          for (PetscInt o = 0; o < out; o++) z[k][p * out + o] = h[k][p] * L->W[o];
      } else cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)npt, (int)out, (int)in, 1.0, h[k], (int)in, L->W, (int)in, 0.0, z[k], (int)out);
    }
    for (PetscInt p = 0; p < npt; p++) {
      PetscReal *z0 = z[0] + p * out, *z1 = z[1] + p * out, *z2 = z[2] + p * out;
      for (PetscInt o = 0; o < out; o++) {
        PetscReal a = tanh(z0[o] + L->b[o]), da = 1 - a * a, s = L->idt ? L->idt[o] : 1;
        PetscReal a1 = 0, a2 = 0;
        if (order >= 1) a1 = da * z1[o];
        if (order >= 2) a2 = da * (z2[o] - 2 * a * z1[o] * z1[o]);
        z0[o] = s * a, z1[o] = s * a1, z2[o] = s * a2;
      }
    }
    /* residual, written into z (the next h) */
    if (L->res)
      for (int k = 0; k <= order; k++)
        for (PetscInt p = 0; p < npt; p++)
          for (PetscInt o = 0; o < out; o++) z[k][p * out + o] += h[k][p * in + (o % in)];
    for (int k = 0; k < 3; k++) {
      PetscReal *t = h[k];
      h[k]         = z[k];
      z[k]         = t;
    }
    in = out;
  }
  memcpy(G, h[0], sizeof(PetscReal) * npt * in);
  if (order >= 1) memcpy(dG, h[1], sizeof(PetscReal) * npt * in);
  if (order >= 2) memcpy(d2G, h[2], sizeof(PetscReal) * npt * in);
  free(own);
}

/* Fitting net: energy of one descriptor d and dE/dd. work: 2*sum(widths) + maxw */
static PetscReal FitEval(const SgDPNet *net, const PetscReal *d, PetscReal *gd, PetscReal *work)
{
  PetscReal *act[SG_DP_MAXL + 2], *hs[SG_DP_MAXL + 2], *w = work;
  PetscInt   in = net->l[0].in;
  hs[0]         = (PetscReal *)d;
  for (PetscInt l = 0; l < net->nl - 1; l++) {
    const SgDPLayer *L = &net->l[l];
    act[l] = w, w += L->out;
    hs[l + 1] = w, w += L->out;
    memcpy(act[l], L->b, sizeof(PetscReal) * L->out);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)L->out, (int)L->in, 1.0, L->W, (int)L->in, hs[l], 1, 1.0, act[l], 1);
    for (PetscInt o = 0; o < L->out; o++) {
      act[l][o]     = tanh(act[l][o]);
      hs[l + 1][o] = (L->idt ? L->idt[o] : 1) * act[l][o] + (L->res ? hs[l][o] : 0);
    }
    in = L->out;
  }
  const SgDPLayer *F = &net->l[net->nl - 1];
  PetscReal        e = F->b[0];
  for (PetscInt i = 0; i < in; i++) e += F->W[i] * hs[net->nl - 1][i];
  if (gd) { /* reverse pass; w has room for three vectors of the widest layer after the activations */
    PetscReal *g = w, *tmp = w + 4096, *buf = w + 8192;
    for (PetscInt i = 0; i < in; i++) g[i] = F->W[i];
    for (PetscInt l = net->nl - 2; l >= 0; l--) {
      const SgDPLayer *L   = &net->l[l];
      PetscReal       *dst = l == 0 ? gd : buf;
      for (PetscInt o = 0; o < L->out; o++) tmp[o] = g[o] * (L->idt ? L->idt[o] : 1) * (1 - act[l][o] * act[l][o]);
      cblas_dgemv(CblasRowMajor, CblasTrans, (int)L->out, (int)L->in, 1.0, L->W, (int)L->in, tmp, 1, 0.0, dst, 1);
      if (L->res)
        for (PetscInt i = 0; i < L->in; i++) dst[i] += g[i];
      if (l > 0) memcpy(g, dst, sizeof(PetscReal) * L->in);
    }
  }
  return e;
}

/* Tabulated embedding: value and derivative; points outside the table use the net. */
static void EmbedTable(const SgDPModel m, PetscInt t, PetscInt npt, const PetscReal *x, PetscReal *G, PetscReal *dG, PetscReal *work)
{
  const SgDPTable *T = &m->tab;
  PetscInt         M = m->cfg.emb[m->cfg.nemb - 1];
  for (PetscInt p = 0; p < npt; p++) {
    PetscReal u = (x[p] - T->x0) / T->h;
    PetscInt  i = (PetscInt)floor(u);
    if (i < 0 || i >= T->n) {
      SgDPEmbedEval(&m->enet[t], 1, x + p, 1, G + p * M, dG + p * M, NULL, work);
      continue;
    }
    PetscReal        s = x[p] - (T->x0 + i * T->h);
    const PetscReal *c = T->c[t] + (size_t)i * M * 6;
    PetscReal       *g = G + p * M, *dg = dG + p * M;
    for (PetscInt q = 0; q < M; q++, c += 6) {
      g[q]  = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))));
      dg[q] = c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])));
    }
  }
}

PetscErrorCode SgDPEvalOpen(SgDPModel m, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, PetscReal *energy, PetscReal *f, PetscReal virial[9], PetscReal *eatom)
{
  const SgDPConfig *c = &m->cfg;
  SgDPEnv           env = {0};
  PetscInt          nnei = c->nnei, M = c->emb[c->nemb - 1], M2 = c->axis, maxw = 1, fw = 0;
  PetscReal        *xs, *G, *dG, *work, *fwork, T[4 * 256], gT[4 * 256], *D, *gD, *gG, *Rn;
  PetscReal         E = 0;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < c->nfit; l++) PetscCheck(c->fit[l] <= 4096, PETSC_COMM_SELF, PETSC_ERR_SUP, "deepmd: fitting width <= 4096 supported");
  PetscCheck(M * M2 <= 4096, PETSC_COMM_SELF, PETSC_ERR_SUP, "deepmd: descriptor size M*axis_neuron <= 4096 supported");
  PetscCheck(M <= 256, PETSC_COMM_SELF, PETSC_ERR_SUP, "deepmd: inference supports embedding width <= 256");
  for (PetscInt l = 0; l < c->nemb; l++) maxw = PetscMax(maxw, c->emb[l]);
  for (PetscInt l = 0; l < c->nfit; l++) fw += 2 * c->fit[l];
  PetscCall(SgDPEnvBuild(c, n, nall, x, type, &env));
  PetscCall(PetscMalloc4(nnei, &xs, nnei * M, &G, nnei * M, &dG, 6 * nnei * maxw, &work));
  PetscCall(PetscMalloc5(fw + 3 * 4096, &fwork, M * M2, &D, M * M2, &gD, M, &gG, 4 * nnei, &Rn));
  PetscCall(PetscArrayzero(f, 3 * nall));
  for (int k = 0; k < 9; k++) virial[k] = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt         ci = type[i];
    const PetscReal *R  = env.env + 4 * i * nnei, *davg = m->davg[ci], *dstd = m->dstd[ci];
    for (PetscInt s = 0; s < nnei; s++)
      for (int k = 0; k < 4; k++) Rn[4 * s + k] = (R[4 * s + k] - davg[k]) / dstd[k];
    for (PetscInt s = 0; s < nnei; s++) xs[s] = Rn[4 * s];
    for (PetscInt t = 0; t < c->ntypes; t++) {
      PetscInt o = c->sec[t], k = c->sel[t];
      if (m->tab.on) EmbedTable(m, t, k, xs + o, G + o * M, dG + o * M, work);
      else SgDPEmbedEval(&m->enet[t], k, xs + o, 1, G + o * M, dG + o * M, NULL, work);
    }
    /* T = G^T Rn / nnei  [M x 4] */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, 4, (int)nnei, 1.0 / nnei, G, (int)M, Rn, 4, 0.0, T, 4);
    /* D = T T<^T [M x M2] */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)M2, 4, 1.0, T, 4, T, 4, 0.0, D, (int)M2);
    PetscReal ei = FitEval(&m->fnet[ci], D, gD, fwork) + m->bias[ci];
    E += ei;
    if (eatom) eatom[i] = ei;
    /* dE/dT = gD T< + (gD^T T)_{m<M2} */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, 4, (int)M2, 1.0, gD, (int)M2, T, 4, 0.0, gT, 4);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M2, 4, (int)M, 1.0, gD, (int)M2, T, 4, 1.0, gT, 4);
    for (PetscInt s = 0; s < nnei; s++) {
      PetscInt j = env.nlist[i * nnei + s];
      if (j < 0) continue; /* padding: constant rows, no force */
      const PetscReal *g = G + s * M, *dg = dG + s * M, *rn = Rn + 4 * s, *dR = env.denv + 12 * (i * nnei + s), *d = env.rij + 3 * (i * nnei + s);
      PetscReal        gR[4] = {0, 0, 0, 0}, gx = 0;
      for (PetscInt q = 0; q < M; q++) {
        PetscReal t0 = gT[4 * q], t1 = gT[4 * q + 1], t2 = gT[4 * q + 2], t3 = gT[4 * q + 3];
        gR[0] += g[q] * t0, gR[1] += g[q] * t1, gR[2] += g[q] * t2, gR[3] += g[q] * t3;
        gx += dg[q] * (rn[0] * t0 + rn[1] * t1 + rn[2] * t2 + rn[3] * t3);
      }
      gR[0] += gx;
      PetscReal gv[3] = {0, 0, 0};
      for (int k = 0; k < 4; k++) {
        PetscReal w = gR[k] / (nnei * dstd[k]);
        for (int a = 0; a < 3; a++) gv[a] += w * dR[3 * k + a];
      }
      for (int a = 0; a < 3; a++) {
        f[3 * j + a] -= gv[a];
        f[3 * i + a] += gv[a];
        for (int b = 0; b < 3; b++) virial[3 * a + b] -= d[a] * gv[b];
      }
    }
  }
  *energy = E;
  PetscCall(PetscFree4(xs, G, dG, work));
  PetscCall(PetscFree5(fwork, D, gD, gG, Rn));
  PetscCall(SgDPEnvFree(&env));
  PetscFunctionReturn(PETSC_SUCCESS);
}
