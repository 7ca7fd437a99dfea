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
#include "vmath.h" /* surrogates/nn: branch-free vectorisable tanh (a few ulp) */

const char *const SgDPActNames[] = {"tanh", "gelu", "relu", "softplus", "sigmoid", "linear"};

void SgDPActivate(PetscInt fn, PetscReal z, PetscReal *a, PetscReal *d1, PetscReal *d2)
{
  switch (fn) {
  case SG_DP_TANH:
    *a = sg_tanh(z);
    *d1 = 1 - *a * *a;
    *d2 = -2 * *a * *d1;
    break;
  case SG_DP_GELU: {
    const PetscReal c = 0.7978845608028654, k = 0.044715; /* sqrt(2/pi) */
    PetscReal       u = c * (z + k * z * z * z), du = c * (1 + 3 * k * z * z), d2u = c * 6 * k * z, t = tanh(u), s = 1 - t * t;
    *a  = 0.5 * z * (1 + t);
    *d1 = 0.5 * (1 + t) + 0.5 * z * s * du;
    *d2 = s * du + 0.5 * z * (s * d2u - 2 * t * s * du * du);
  } break;
  case SG_DP_RELU:
    *a = z > 0 ? z : 0;
    *d1 = z > 0 ? 1 : 0;
    *d2 = 0;
    break;
  case SG_DP_SOFTPLUS: { /* stable: max(z,0) + log(1 + exp(-|z|)) */
    PetscReal e = exp(-fabs(z)), sg = z > 0 ? 1 / (1 + e) : e / (1 + e);
    *a = (z > 0 ? z : 0) + log1p(e);
    *d1 = sg;
    *d2 = sg * (1 - sg);
  } break;
  case SG_DP_SIGMOID: {
    PetscReal e = exp(-fabs(z)), sg = z > 0 ? 1 / (1 + e) : e / (1 + e);
    *a = sg;
    *d1 = sg * (1 - sg);
    *d2 = *d1 * (1 - 2 * sg);
  } break;
  default:
    *a = z;
    *d1 = 1;
    *d2 = 0;
  }
}

/* G, dG, d2G: [npt][M] (dG, d2G may be NULL when order is lower) */
void SgDPEmbedEval(const SgDPNet *net, PetscInt npt, const PetscReal *x, PetscInt order, PetscReal *G, PetscReal *dG, PetscReal *d2G, PetscReal *work)
{
  PetscInt maxw = 1;
  for (PetscInt l = 0; l < net->nl; l++) maxw = PetscMax(maxw, net->l[l].out);
  size_t     sz = (size_t)npt * maxw;
  PetscReal *h[3], *z[3], *own = NULL;
  if (!work) work = own = malloc(sizeof(PetscReal) * 6 * sz);
  for (int k = 0; k < 3; k++) {
    h[k] = work + k * sz;
    z[k] = work + (3 + k) * sz;
  }
  PetscInt in = 1;
  for (PetscInt p = 0; p < npt; p++) {
    h[0][p] = x[p];
    h[1][p] = 1;
    h[2][p] = 0;
  }
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
        PetscReal a, da, dda, s = L->idt ? L->idt[o] : 1;
        PetscReal a1 = 0, a2 = 0;
        if (L->fn == SG_DP_TANH) {
          a = sg_tanh(z0[o] + L->b[o]);
          da = 1 - a * a;
          if (order >= 1) a1 = da * z1[o];
          if (order >= 2) a2 = da * (z2[o] - 2 * a * z1[o] * z1[o]);
        } else {
          SgDPActivate(L->fn, z0[o] + L->b[o], &a, &da, &dda);
          if (order >= 1) a1 = da * z1[o];
          if (order >= 2) a2 = da * z2[o] + dda * z1[o] * z1[o];
        }
        z0[o] = s * a;
        z1[o] = s * a1;
        z2[o] = s * a2;
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
  if (order >= 1 && dG) memcpy(dG, h[1], sizeof(PetscReal) * npt * in);
  if (order >= 2 && d2G) memcpy(d2G, h[2], sizeof(PetscReal) * npt * in);
  free(own);
}

/* Fitting net on nr descriptors at once (rows of d, each `in` long): energies e[nr] and, if gd,
   dE/dd [nr][in]. BLAS-3 over the rows: the weights are read once per batch, not once per atom.
   work: 2 * nr * sum(widths) + 2 * nr * maxw */
static void FitBatch(const SgDPNet *net, PetscInt nr, const PetscReal *d, PetscReal *e, PetscReal *gd, PetscReal *work)
{
  PetscReal *act[SG_DP_MAXL + 2], *hs[SG_DP_MAXL + 2], *w = work;
  PetscInt   in = net->l[0].in, maxw = 1;
  hs[0] = (PetscReal *)d;
  for (PetscInt l = 0; l < net->nl - 1; l++) {
    const SgDPLayer *L = &net->l[l];
    maxw               = PetscMax(maxw, PetscMax(L->in, L->out));
    act[l] = w;
    w += nr * L->out;
    hs[l + 1] = w;
    w += nr * L->out;
    for (PetscInt r = 0; r < nr; r++) memcpy(act[l] + r * L->out, L->b, sizeof(PetscReal) * L->out);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr, (int)L->out, (int)L->in, 1.0, hs[l], (int)L->in, L->W, (int)L->in, 1.0, act[l], (int)L->out);
    for (PetscInt r = 0; r < nr; r++) {
      PetscReal *a = act[l] + r * L->out, *h = hs[l + 1] + r * L->out, *hp = hs[l] + r * L->in;
      for (PetscInt o = 0; o < L->out; o++) { /* a[] keeps the activation's derivative for the backward pass */
        PetscReal v, d1, d2;
        if (L->fn == SG_DP_TANH) {
          v = sg_tanh(a[o]);
          d1 = 1 - v * v;
        } else SgDPActivate(L->fn, a[o], &v, &d1, &d2);
        a[o] = d1;
        h[o] = (L->idt ? L->idt[o] : 1) * v + (L->res ? hp[o] : 0);
      }
    }
    in = L->out;
  }
  const SgDPLayer *F = &net->l[net->nl - 1];
  cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nr, (int)in, 1.0, hs[net->nl - 1], (int)in, F->W, 1, 0.0, e, 1);
  for (PetscInt r = 0; r < nr; r++) e[r] += F->b[0];
  if (!gd) return;
  maxw = PetscMax(maxw, net->l[0].in);
  PetscReal *g = w, *tmp = w + nr * maxw, *buf = w + 2 * nr * maxw;
  for (PetscInt r = 0; r < nr; r++) memcpy(g + r * in, F->W, sizeof(PetscReal) * in);
  for (PetscInt l = net->nl - 2; l >= 0; l--) {
    const SgDPLayer *L   = &net->l[l];
    PetscReal       *dst = l == 0 ? gd : buf;
    for (PetscInt r = 0; r < nr; r++)
      for (PetscInt o = 0; o < L->out; o++) {
        tmp[r * L->out + o] = g[r * L->out + o] * (L->idt ? L->idt[o] : 1) * act[l][r * L->out + o];
      }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)L->in, (int)L->out, 1.0, tmp, (int)L->out, L->W, (int)L->in, 0.0, dst, (int)L->in);
    if (L->res)
      for (PetscInt r = 0; r < nr * L->in; r++) dst[r] += g[r];
    if (l > 0) memcpy(g, dst, sizeof(PetscReal) * nr * L->in);
  }
}

/* Tabulated embedding net t: value and derivative; points outside the table use the net. */
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
  PetscFunctionBegin;
  PetscCall(SgDPEvalOpenAtomic(m, n, nall, x, type, NULL, NULL, energy, f, virial, eatom, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* avir [nall][9] (may be NULL): DeePMD-kit's atomic virial, -sum over the centres i that have atom j
   as a neighbour of (dE/dr_ij)_a (r_ij)_c at [9j + 3a + c]; summed over atoms it is the virial's
   transpose (DeePMD-kit's pt backend: F_j (x) x_j plus its correction sum_i x_i (x) dE_i/dx_j).
   nboff/nbr: the neighbour list the caller gives (CSR, SgDPEnvBuildRange), or NULL to search. */
PetscErrorCode SgDPEvalOpenAtomic(SgDPModel m, PetscInt n, PetscInt nall, const PetscReal *x, const PetscInt *type, const PetscInt *nboff, const PetscInt *nbr, PetscReal *energy, PetscReal *f, PetscReal virial[9], PetscReal *eatom, PetscReal *avir)
{
  const SgDPConfig *c = &m->cfg;
  SgDPEnv           env = {0};
  const PetscInt    CH = 64; /* centres per chunk: bounds memory for any n, feeds BLAS-3 */
  PetscInt          nnei = c->nnei, M = c->emb[c->nemb - 1], M2 = c->axis, MD = SgDPDescDim(c), maxw = 1, fw = 0, maxsel = 0;
  PetscReal        *xs, *G, *dG, *work, *fwork, *T, *gT, *D, *gD, *Dc, *gDc, *ec, *Rn, E = 0;
  PetscInt         *rows, *start, *nreal;
  PetscReal        *Gpad, *dGpad;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < c->nemb; l++) maxw = PetscMax(maxw, c->emb[l]);
  for (PetscInt l = 0; l < c->nfit; l++) fw += 2 * c->fit[l], maxw = PetscMax(maxw, c->fit[l]);
  maxw = PetscMax(maxw, MD);
  for (PetscInt t = 0; t < c->ntypes; t++) maxsel = PetscMax(maxsel, c->sel[t]);
  PetscCall(PetscMalloc5(CH * nnei, &xs, CH * nnei * M, &G, CH * nnei * M, &dG, 6 * CH * maxsel * maxw, &work, CH * (fw + 3 * maxw), &fwork));
  PetscCall(PetscMalloc5(CH * M * 4, &T, CH * M * 4, &gT, CH * MD, &D, CH * MD, &gD, CH * nnei * 4, &Rn));
  PetscCall(PetscMalloc4(CH * MD, &Dc, CH * MD, &gDc, CH, &ec, CH, &rows));
  PetscCall(PetscMalloc4(SG_DP_MAXT * CH, &start, SG_DP_MAXT * CH, &nreal, SG_DP_MAXT * SG_DP_MAXT * M, &Gpad, M, &dGpad));
  PetscCall(PetscArrayzero(f, 3 * nall));
  if (avir) PetscCall(PetscArrayzero(avir, 9 * nall));
  for (int k = 0; k < 9; k++) virial[k] = 0;
  for (PetscInt c0 = 0; c0 < n; c0 += CH) {
    PetscInt nc = PetscMin(CH, n - c0);
    PetscCall(SgDPEnvBuildRange(c, c0, nc, nall, x, type, nboff, nbr, &env));
    m->sel_dropped += env.dropped; /* DeePMD-kit keeps the nearest sel too; the MD provider reports it */
    for (PetscInt t = 0; t < c->ntypes; t++) m->sel_maxseen[t] = PetscMax(m->sel_maxseen[t], env.maxcnt[t]);
    for (PetscInt i = 0; i < nc; i++) {
      PetscInt         ci = type[c0 + i];
      const PetscReal *R = env.env + 4 * i * nnei, *davg = m->davg[ci], *dstd = m->dstd[ci];
      PetscReal       *rn = Rn + 4 * i * nnei;
      if (m->sdavg) { /* per-slot statistics of an imported model */
        const PetscReal *sa = m->sdavg + 4 * ci * nnei, *sd = m->sdstd + 4 * ci * nnei;
        for (PetscInt s = 0; s < 4 * nnei; s++) rn[s] = (R[s] - sa[s]) / sd[s];
      } else
        for (PetscInt s = 0; s < nnei; s++)
          for (int k = 0; k < 4; k++) rn[4 * s + k] = (R[4 * s + k] - davg[k]) / dstd[k];
    }
    /* embedding of the real neighbours of the chunk, one net at a time, compact rows
       [t][i][first nreal slots] (with type pairs the centres of one type together, so each net
       gets one contiguous run of rows); padding rows all share x = -davg/dstd of the centre type,
       so their embedding is computed once per (centre type, neighbour type) */
    for (PetscInt t = 0; t < c->ntypes; t++) {
      PetscInt   o = c->sec[t], k = c->sel[t], cnt = 0;
      PetscReal *xt = xs + nc * o, *Gt = G + (size_t)nc * o * M, *dGt = dG + (size_t)nc * o * M;
      for (PetscInt ct = 0; ct < (c->type_pair ? c->ntypes : 1); ct++) {
        PetscInt e = SgDPEmbedIndex(c, ct, t), cnt0 = cnt;
        for (PetscInt i = 0; i < nc; i++) {
          if (c->type_pair && type[c0 + i] != ct) continue;
          start[t * CH + i] = cnt;
          for (PetscInt s = 0; s < k && env.nlist[i * nnei + o + s] >= 0; s++) xt[cnt++] = Rn[4 * (i * nnei + o + s)];
          nreal[t * CH + i] = cnt - start[t * CH + i];
        }
        if (m->tab.on) EmbedTable(m, e, cnt - cnt0, xt + cnt0, Gt + cnt0 * M, dGt + cnt0 * M, work);
        else SgDPEmbedEval(&m->enet[e], cnt - cnt0, xt + cnt0, 1, Gt + cnt0 * M, dGt + cnt0 * M, NULL, work);
      }
      for (PetscInt ct = 0; ct < c->ntypes; ct++) {
        PetscReal xp = (0 - m->davg[ct][0]) / m->dstd[ct][0];
        PetscInt  e  = SgDPEmbedIndex(c, ct, t);
        if (m->tab.on) EmbedTable(m, e, 1, &xp, Gpad + (ct * c->ntypes + t) * M, dGpad, work);
        else SgDPEmbedEval(&m->enet[e], 1, &xp, 0, Gpad + (ct * c->ntypes + t) * M, NULL, NULL, work);
      }
    }
    /* se_e2_r: D_i = (sum_t sum_slots G) / (5 nnei), padding slots included (DeePMD-kit's se_r
       scales its descriptor by 1/5) */
    if (c->radial)
      for (PetscInt i = 0; i < nc; i++) {
        PetscReal *Di = D + MD * i;
        PetscInt   ci = type[c0 + i];
        PetscArrayzero(Di, M);
        for (PetscInt t = 0; t < c->ntypes; t++) {
          PetscInt o = c->sec[t], nr = nreal[t * CH + i], npad = c->sel[t] - nr;
          const PetscReal *g = G + ((size_t)nc * o + start[t * CH + i]) * M;
          for (PetscInt s = 0; s < nr; s++)
            for (PetscInt q = 0; q < M; q++) Di[q] += g[s * M + q];
          if (npad && m->sdavg) {
            PetscInt e = SgDPEmbedIndex(c, ci, t);
            for (PetscInt sl = nr; sl < c->sel[t]; sl++) {
              const PetscReal *rp = Rn + 4 * (i * nnei + o + sl);
              if (m->tab.on) EmbedTable(m, e, 1, rp, Gpad, dGpad, work);
              else SgDPEmbedEval(&m->enet[e], 1, rp, 0, Gpad, NULL, NULL, work);
              for (PetscInt q = 0; q < M; q++) Di[q] += Gpad[q];
            }
          } else if (npad)
            for (PetscInt q = 0; q < M; q++) Di[q] += npad * Gpad[(ci * c->ntypes + t) * M + q];
        }
        for (PetscInt q = 0; q < M; q++) Di[q] /= 5.0 * nnei;
      }
    /* T_i = sum_t (G_ti^T Rn_ti + npad G_pad Rn_pad^T) / nnei,  D_i = T_i T_i<^T */
    for (PetscInt i = 0; i < nc && !c->radial; i++) {
      PetscReal *Ti = T + 4 * M * i;
      PetscInt   ci = type[c0 + i];
      PetscArrayzero(Ti, 4 * M);
      for (PetscInt t = 0; t < c->ntypes; t++) {
        PetscInt o = c->sec[t], k = c->sel[t], nr = nreal[t * CH + i], npad = k - nr;
        /* real rows are the first nr slots of the section: Rn rows i*nnei+o .. +nr; the neighbours
           of an excluded type pair keep their slots but contribute zero rows */
        if (nr && !c->excl[ci][t]) cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, 4, (int)nr, 1.0 / nnei, G + ((size_t)nc * o + start[t * CH + i]) * M, (int)M, Rn + 4 * (i * nnei + o), 4, 1.0, Ti, 4);
        if (npad && m->sdavg) { /* per-slot statistics: each padding slot has its own constant row */
          PetscInt e = SgDPEmbedIndex(c, ci, t);
          for (PetscInt sl = nr; sl < k; sl++) {
            const PetscReal *rp = Rn + 4 * (i * nnei + o + sl);
            if (m->tab.on) EmbedTable(m, e, 1, rp, Gpad, dGpad, work);
            else SgDPEmbedEval(&m->enet[e], 1, rp, 0, Gpad, NULL, NULL, work);
            for (PetscInt q = 0; q < M; q++)
              for (int kk = 0; kk < 4; kk++) Ti[4 * q + kk] += Gpad[q] * rp[kk] / nnei;
          }
        } else if (npad) {
          const PetscReal *gp = Gpad + (ci * c->ntypes + t) * M, *rp = Rn + 4 * (i * nnei + o + nr);
          for (PetscInt q = 0; q < M; q++)
            for (int kk = 0; kk < 4; kk++) Ti[4 * q + kk] += (PetscReal)npad / nnei * gp[q] * rp[kk];
        }
      }
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)M2, 4, 1.0, Ti, 4, Ti, 4, 0.0, D + MD * i, (int)M2);
    }
    /* fitting nets, batched over the chunk's centres of each type */
    for (PetscInt t = 0; t < c->ntypes; t++) {
      PetscInt nr = 0;
      for (PetscInt i = 0; i < nc; i++)
        if (type[c0 + i] == t) rows[nr++] = i;
      if (!nr) continue;
      for (PetscInt r = 0; r < nr; r++) memcpy(Dc + MD * r, D + MD * rows[r], sizeof(PetscReal) * MD);
      FitBatch(&m->fnet[t], nr, Dc, ec, gDc, fwork);
      for (PetscInt r = 0; r < nr; r++) {
        PetscReal ei = ec[r] + m->bias[t];
        E += ei;
        if (eatom) eatom[c0 + rows[r]] = ei;
        memcpy(gD + MD * rows[r], gDc + MD * r, sizeof(PetscReal) * MD);
      }
    }
    /* back to the environment: dE/dT = gD T< + (gD^T T)_{m<M2}, then dE/dRn, dE/dr_ij, forces */
    for (PetscInt i = 0; i < nc; i++) {
      PetscInt         ci = type[c0 + i], ai = c0 + i;
      const PetscReal *dstd = m->dstd[ci], *Ti = T + 4 * M * i, *gDi = gD + MD * i;
      PetscReal       *gTi  = gT + 4 * M * i;
      if (c->radial) { /* dE/dx_ij = gD . dG/dx / (5 nnei): carried in gT's first column, the rest 0 */
        PetscArrayzero(gTi, 4 * M);
        for (PetscInt q = 0; q < M; q++) gTi[4 * q] = gDi[q] / 5.0;
      } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, 4, (int)M2, 1.0, gDi, (int)M2, Ti, 4, 0.0, gTi, 4);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M2, 4, (int)M, 1.0, gDi, (int)M2, Ti, 4, 1.0, gTi, 4);
      }
      for (PetscInt t = 0; t < c->ntypes; t++) {
        PetscInt o = c->sec[t];
        if (c->excl[ci][t]) continue; /* zero rows: no force */
        for (PetscInt s = 0; s < nreal[t * CH + i]; s++) { /* padding rows are constants: no force */
          PetscInt         q = i * nnei + o + s, j = env.nlist[q];
          const PetscReal *g = G + ((size_t)nc * o + start[t * CH + i] + s) * M, *dg = dG + ((size_t)nc * o + start[t * CH + i] + s) * M, *rn = Rn + 4 * q, *dR = env.denv + 12 * q, *d = env.rij + 3 * q;
          PetscReal        gR0 = 0, gR1 = 0, gR2 = 0, gR3 = 0, gx = 0;
          for (PetscInt p = 0; p < M; p++) {
            PetscReal t0 = gTi[4 * p], t1 = gTi[4 * p + 1], t2 = gTi[4 * p + 2], t3 = gTi[4 * p + 3];
            gR0 += g[p] * t0;
            gR1 += g[p] * t1;
            gR2 += g[p] * t2;
            gR3 += g[p] * t3;
            gx += dg[p] * (rn[0] * t0 + rn[1] * t1 + rn[2] * t2 + rn[3] * t3);
          }
          if (c->radial) { /* D depends on the row only through G(Rn_0) */
            gR0 = gR1 = gR2 = gR3 = gx = 0;
            for (PetscInt p = 0; p < M; p++) gx += dg[p] * gTi[4 * p];
          }
          PetscReal gR[4] = {gR0 + gx, gR1, gR2, gR3}, gv[3] = {0, 0, 0};
          const PetscReal *sd = m->sdstd ? m->sdstd + 4 * (ci * nnei + o + s) : dstd;
          for (int kk = 0; kk < 4; kk++) {
            PetscReal w = gR[kk] / (nnei * sd[kk]);
            for (int a = 0; a < 3; a++) gv[a] += w * dR[3 * kk + a];
          }
          for (int a = 0; a < 3; a++) {
            f[3 * j + a] -= gv[a];
            f[3 * ai + a] += gv[a];
            for (int b = 0; b < 3; b++) virial[3 * a + b] -= d[a] * gv[b];
          }
          if (avir)
            for (int a = 0; a < 3; a++)
              for (int b = 0; b < 3; b++) avir[9 * j + 3 * a + b] -= gv[a] * d[b];
        }
      }
    }
  }
  *energy = E;
  PetscCall(PetscFree5(xs, G, dG, work, fwork));
  PetscCall(PetscFree5(T, gT, D, gD, Rn));
  PetscCall(PetscFree4(Dc, gDc, ec, rows));
  PetscCall(PetscFree4(start, nreal, Gpad, dGpad));
  PetscCall(SgDPEnvFree(&env));
  PetscFunctionReturn(PETSC_SUCCESS);
}
