/* The Deep Potential as an autodiff graph (surrogates/nn) for training: energies of a batch of
   frames, forces as -dE/dx through the environment matrix (sgnn_grad with create_graph, so a force
   loss can be differentiated w.r.t. the weights), virials. The environment matrix itself and its
   derivative w.r.t. r_ij are computed in C (envmat.c) and enter as constants: forces are the linear
   map  dE/dr_ij = sum_k dE/dRn_ijk dRn_ijk/dr_ij,  F = -(scatter_j - sum_i). Same maths as infer.c. */
#include "deepmd.h"

PetscErrorCode SgDPBatchAlloc(const SgDPConfig *c, PetscInt B, PetscInt N, SgDPBatch *b)
{
  size_t s = (size_t)B * N * c->nnei;

  PetscFunctionBegin;
  b->B = B;
  b->N = N;
  b->chunk = 0;
  PetscCall(PetscMalloc6(N, &b->type, 4 * s, &b->envn, 12 * s, &b->denvn, 3 * s, &b->rij, s, &b->jidx, (size_t)B * N * c->ntypes, &b->nreal));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPBatchFree(SgDPBatch *b)
{
  PetscFunctionBegin;
  PetscCall(PetscFree6(b->type, b->envn, b->denvn, b->rij, b->jidx, b->nreal));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPBatchSetFrame(SgDPModel m, SgDPBatch *bt, PetscInt b, const PetscReal *x, const PetscReal *box)
{
  const SgDPConfig *c = &m->cfg;
  PetscInt          N = bt->N, nnei = c->nnei, nall, *tall = NULL, *map = NULL;
  PetscReal        *xall = NULL;
  SgDPEnv           env  = {0};

  PetscFunctionBegin;
  if (box) PetscCall(SgDPImages(N, x, bt->type, box, c->rcut, &nall, &xall, &tall, &map));
  PetscCall(SgDPEnvBuild(c, N, box ? nall : N, box ? xall : x, box ? tall : bt->type, &env));
  for (PetscInt i = 0; i < N; i++) {
    PetscInt ci = bt->type[i];
    for (PetscInt t = 0; t < c->ntypes; t++) {
      PetscInt k = 0;
      while (k < c->sel[t] && env.nlist[i * nnei + c->sec[t] + k] >= 0) k++;
      bt->nreal[((size_t)b * N + i) * c->ntypes + t] = k;
    }
    for (PetscInt s = 0; s < nnei; s++) {
      size_t   q = ((size_t)b * N + i) * nnei + s, e = (size_t)i * nnei + s;
      PetscInt j = env.nlist[e];
      for (int k = 0; k < 4; k++) {
        bt->envn[4 * q + k] = (env.env[4 * e + k] - m->davg[ci][k]) / m->dstd[ci][k];
        for (int a = 0; a < 3; a++) bt->denvn[12 * q + 3 * k + a] = env.denv[12 * e + 3 * k + a] / m->dstd[ci][k];
      }
      if (c->radial) { /* se_e2_r: rows [Rn_0, 1, 0, 0], so that T's column 1 is the sum of the
                          embeddings (G^T row); columns 1-3 are constants (no force) */
        bt->envn[4 * q + 1] = 1;
        bt->envn[4 * q + 2] = bt->envn[4 * q + 3] = 0;
        for (int k = 1; k < 4; k++)
          for (int a = 0; a < 3; a++) bt->denvn[12 * q + 3 * k + a] = 0;
      }
      for (int a = 0; a < 3; a++) bt->rij[3 * q + a] = env.rij[3 * e + a];
      bt->jidx[q] = (long)b * N + (j < 0 ? i : (box ? map[j] : j));
    }
  }
  PetscCall(SgDPEnvFree(&env));
  if (box) PetscCall(PetscFree3(xall, tall, map));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define FREE(t) sgnn_tensor_free(&(t))

/* DeePMD-kit's activation functions as graph ops, each differentiable twice (the force loss
   differentiates through a backward pass): tanh, gelu in its tanh form
   0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) (DeePMD-kit's "gelu"; infer.c SgDPActivate is the
   hand-written twin), relu, softplus log(1 + e^z), sigmoid, linear. z is consumed. */
static PetscErrorCode Activate(PetscInt fn, SgnnTensor z, SgnnTensor *out)
{
  PetscFunctionBegin;
  switch (fn) {
  case SG_DP_TANH:
    SgNN(sgnn_tanh(z, out));
    break;
  case SG_DP_RELU:
    SgNN(sgnn_relu(z, out));
    break;
  case SG_DP_SOFTPLUS:
    SgNN(sgnn_softplus(z, out));
    break;
  case SG_DP_SIGMOID:
    SgNN(sgnn_sigmoid(z, out));
    break;
  case SG_DP_GELU: {
    SgnnTensor z3, kz3, u, t, h;
    SgNN(sgnn_pow(z, 3.0, &z3));
    SgNN(sgnn_affine(z3, 0.044715, 0.0, &kz3));
    FREE(z3);
    SgNN(sgnn_add(z, kz3, &u));
    FREE(kz3);
    SgNN(sgnn_affine(u, 0.7978845608028654, 0.0, &t)); /* sqrt(2/pi) */
    FREE(u);
    SgNN(sgnn_tanh(t, &u));
    FREE(t);
    SgNN(sgnn_affine(u, 0.5, 0.5, &h));
    FREE(u);
    SgNN(sgnn_mul(z, h, out));
    FREE(h);
  } break;
  default: /* linear: the pre-activation itself */
    *out = z;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  FREE(z);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one dense layer with DeePMD-kit's residual rules; fn < 0: no activation (the output layer);
   consumes nothing, returns a new h */
static PetscErrorCode Layer(SgnnTensor h, SgnnTensor W, SgnnTensor b, SgnnTensor idt, PetscInt res, PetscInt fn, SgnnTensor *out)
{
  SgnnTensor z, a;

  PetscFunctionBegin;
  SgNN(sgnn_linear(h, W, b, &z));
  if (fn < 0) {
    *out = z;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(Activate(fn, z, &a));
  if (idt) {
    SgNN(sgnn_mul(a, idt, &z));
    FREE(a);
    a = z;
  }
  if (res == 1) {
    SgNN(sgnn_add(h, a, out));
    FREE(a);
  } else if (res == 2) { /* a + [h, h]: a as [n, 2, in] plus h as [n, 1, in] broadcast (no copy of [h, h]) */
    SgnnTensor a3, h3, s3;
    int        n = sgnn_tensor_shape(h)[0], in = sgnn_tensor_shape(h)[1], sa[3] = {n, 2, in}, sh[3] = {n, 1, in}, so[2] = {n, 2 * in};
    SgNN(sgnn_reshape(a, 3, sa, &a3));
    SgNN(sgnn_reshape(h, 3, sh, &h3));
    SgNN(sgnn_add(a3, h3, &s3));
    FREE(a3);
    FREE(h3);
    FREE(a);
    SgNN(sgnn_reshape(s3, 2, so, out));
    FREE(s3);
  } else *out = a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* atoms per block of the embedding graph: bt->chunk, or about 2 MiB of the widest layer's rows */
static int EmbeddingChunk(const SgDPBatch *bt, int nnei, int M, size_t es)
{
  if (bt->chunk > 0) return (int)bt->chunk;
  int n = (int)((2u << 20) / ((size_t)nnei * M * es));
  return n < 1 ? 1 : n;
}

/* embedding net e (SgDPEmbedIndex) on the rows of x [n, 1] -> G [n, M]; x is not consumed */
static PetscErrorCode Embed(SgDPModel m, PetscInt e, SgnnTensor x, SgnnTensor *G)
{
  SgnnTensor h = x;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < m->cfg.nemb; l++) {
    SgnnTensor hn;
    PetscCall(Layer(h, m->eW[e][l], m->eb[e][l], m->eidt[e][l], m->enet[e].l[l].res, m->cfg.act, &hn));
    if (h != x) FREE(h);
    h = hn;
  }
  *G = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The padding term of T = G^T Rn over an atom's empty neighbour slots. An empty slot of a centre of
   type ct holds the constant row Rp = -davg[ct]/dstd[ct] (normalised like a real row, as DeePMD-kit
   does), so all of them embed to the same G(Rp_0) and contribute npad * G(Rp_0)^T Rp: one embedding
   row per (centre type, neighbour type) instead of one per empty slot (about a third of all slots in
   liquid water). Constant in the coordinates: no force, but it carries weight gradients. NULL when
   the batch has no empty slot. */
static PetscErrorCode PaddingTerm(SgDPModel m, const SgDPBatch *bt, SgnnTensor *Pad)
{
  const SgDPConfig *c = &m->cfg;
  const int         A = (int)(bt->B * bt->N), nt = (int)c->ntypes, M = (int)c->emb[c->nemb - 1];
  PetscReal        *w, xp[SG_DP_MAXT], rp[4 * SG_DP_MAXT];
  SgnnTensor        X, Rp;

  PetscFunctionBegin;
  *Pad = NULL;
  for (int ct = 0; ct < nt; ct++)
    for (int k = 0; k < 4; k++) rp[4 * ct + k] = c->radial && k ? (k == 1) : (0 - m->davg[ct][k]) / m->dstd[ct][k]; /* se_e2_r: [Rp_0, 1, 0, 0] as SgDPBatchSetFrame */
  for (int ct = 0; ct < nt; ct++) xp[ct] = rp[4 * ct];
  {
    int sx[2] = {nt, 1}, sr[3] = {nt, 1, 4};
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sx, xp, &X));
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 3, sr, rp, &Rp));
  }
  PetscCall(PetscMalloc1((size_t)A * nt, &w));
  for (PetscInt t = 0; t < c->ntypes; t++) {
    long npad = 0;
    PetscCall(PetscArrayzero(w, (size_t)A * nt));
    for (int a = 0; a < A; a++) {
      PetscInt e = c->sel[t] - bt->nreal[(size_t)a * nt + t];
      w[(size_t)a * nt + bt->type[a % bt->N]] = (PetscReal)e;
      npad += e;
    }
    if (!npad) continue;
    SgnnTensor G, G3, P, P2, W, pt;
    int        s3[3] = {nt, M, 1}, s2[2] = {nt, 4 * M}, sw[2] = {A, nt};
    if (!c->type_pair) PetscCall(Embed(m, t, X, &G));
    else { /* row ct through the net of the pair (ct, t) */
      SgnnTensor Gc[SG_DP_MAXT];
      for (int ct = 0; ct < nt; ct++) {
        SgnnTensor Xc;
        SgNN(sgnn_slice(X, 0, ct, ct + 1, &Xc));
        PetscCall(Embed(m, SgDPEmbedIndex(c, ct, t), Xc, &Gc[ct]));
        FREE(Xc);
      }
      SgNN(sgnn_concat(nt, Gc, 0, &G));
      for (int ct = 0; ct < nt; ct++) FREE(Gc[ct]);
    }
    SgNN(sgnn_reshape(G, 3, s3, &G3));
    FREE(G);
    SgNN(sgnn_mul(G3, Rp, &P)); /* [nt, M, 4]: G(Rp_0) Rp^T per centre type */
    FREE(G3);
    SgNN(sgnn_reshape(P, 2, s2, &P2));
    FREE(P);
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sw, w, &W));
    SgNN(sgnn_matmul(W, P2, 0, 0, &pt)); /* [A, 4M]: row a = npad(a) P[type a] */
    FREE(W);
    FREE(P2);
    if (!*Pad) *Pad = pt;
    else {
      SgnnTensor sum;
      SgNN(sgnn_add(*Pad, pt, &sum));
      FREE(*Pad);
      FREE(pt);
      *Pad = sum;
    }
  }
  PetscCall(PetscFree(w));
  FREE(X);
  FREE(Rp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* T = G^T Rn per atom, [A, M, 4] (not yet divided by nnei): the embedding nets of the real
   neighbours plus the padding term of the empty slots. */
static PetscErrorCode EnvTerm(SgDPModel m, const SgDPBatch *bt, SgnnTensor Rn, SgnnTensor *Tout)
{
  const SgDPConfig *c = &m->cfg;
  int               A = (int)(bt->B * bt->N), nnei = (int)c->nnei, M = (int)c->emb[c->nemb - 1];
  SgnnTensor        T = NULL, Pad;
  long             *ridx;

  PetscFunctionBegin;
  /* The embedding nets and T = G^T R run over blocks of atoms (their neighbour rows): each block's
     tensors (~2 MiB) stay in L2 through the chains of element-wise ops of the forward and both
     backward passes, where whole-frame tensors (20 MB for the 26,496 neighbour rows of a water frame)
     streamed through memory: the water training step is ~15 % faster (docs/deepmd.md). Each atom's
     T is computed within one block, so E and F do not depend on the blocking.
     Only real neighbours are embedded: their rows are gathered from the block's slots, embedded, and
     scattered back into the slots (zeros at empty slots) for the batched product G^T R; the empty
     slots enter through PaddingTerm. */
  const int   chunk = EmbeddingChunk(bt, nnei, M, m->cfg.precision == 32 ? 4 : 8);
  const int   nchunk = (A + chunk - 1) / chunk;
  PetscInt    maxsel = 0;
  SgnnTensor *Tc;
  for (PetscInt t = 0; t < c->ntypes; t++) maxsel = PetscMax(maxsel, c->sel[t]);
  PetscCall(PetscCalloc1(nchunk, &Tc));
  PetscCall(PetscMalloc1((size_t)chunk * maxsel, &ridx));
  for (int k = 0; k < nchunk; k++) {
    const int  a0 = k * chunk, a1 = a0 + chunk < A ? a0 + chunk : A, nA = a1 - a0;
    SgnnTensor Rk;
    SgNN(sgnn_slice(Rn, 0, a0, a1, &Rk));
    for (PetscInt t = 0; t < c->ntypes; t++) {
      SgnnTensor Rt, xt, xs, Gs = NULL, G, Tt;
      int        sel = (int)c->sel[t];
      SgNN(sgnn_slice(Rk, 1, (int)c->sec[t], (int)c->sec[t + 1], &Rt));
      SgNN(sgnn_slice(Rt, 2, 0, 1, &xt));
      {
        int s[2] = {nA * sel, 1};
        SgNN(sgnn_reshape(xt, 2, s, &xs));
      }
      FREE(xt);
      /* one embedding net for all centres, or one per centre type (type pairs): each embeds the
         real rows of its centres, scattered into the block's slots and summed */
      for (PetscInt ct = 0; ct < (c->type_pair ? c->ntypes : 1); ct++) {
        SgnnTensor xr, Gr, Gp;
        long       nr = 0;
        for (int a = a0; a < a1; a++)
          if ((!c->type_pair || bt->type[a % bt->N] == ct) && !c->excl[bt->type[a % bt->N]][t]) /* excluded pairs: zero rows (infer.c) */
            for (PetscInt s = 0; s < bt->nreal[(size_t)a * c->ntypes + t]; s++) ridx[nr++] = (long)(a - a0) * sel + s;
        if (!nr) continue;
        SgNN(sgnn_index_select(xs, 0, nr, ridx, &xr));
        PetscCall(Embed(m, SgDPEmbedIndex(c, ct, t), xr, &Gr));
        FREE(xr);
        SgNN(sgnn_scatter_add(Gr, 0, nr, ridx, nA * sel, &Gp));
        FREE(Gr);
        if (!Gs) Gs = Gp;
        else {
          SgnnTensor sum;
          SgNN(sgnn_add(Gs, Gp, &sum));
          FREE(Gs);
          FREE(Gp);
          Gs = sum;
        }
      }
      FREE(xs);
      if (!Gs) { /* only empty slots: PaddingTerm */
        FREE(Rt);
        continue;
      }
      {
        int s[3] = {nA, sel, M};
        SgNN(sgnn_reshape(Gs, 3, s, &G));
      }
      FREE(Gs);
      SgNN(sgnn_matmul(G, Rt, 1, 0, &Tt)); /* [nA, M, 4] */
      FREE(G);
      FREE(Rt);
      if (!Tc[k]) Tc[k] = Tt;
      else {
        SgnnTensor s;
        SgNN(sgnn_add(Tc[k], Tt, &s));
        FREE(Tc[k]);
        FREE(Tt);
        Tc[k] = s;
      }
    }
    if (!Tc[k]) { /* a block of atoms without neighbours */
      int s[3] = {nA, M, 4};
      SgNN(sgnn_tensor_zeros(m->be, SgDPDType(m), 3, s, &Tc[k]));
    }
    FREE(Rk);
  }
  PetscCall(PetscFree(ridx));
  if (nchunk == 1) T = Tc[0];
  else {
    SgNN(sgnn_concat(nchunk, Tc, 0, &T));
    for (int k = 0; k < nchunk; k++) FREE(Tc[k]);
  }
  PetscCall(PetscFree(Tc));
  PetscCall(PaddingTerm(m, bt, &Pad));
  if (Pad) {
    SgnnTensor P3, Tp;
    int        s[3] = {A, M, 4};
    SgNN(sgnn_reshape(Pad, 3, s, &P3));
    FREE(Pad);
    SgNN(sgnn_add(T, P3, &Tp));
    FREE(T);
    FREE(P3);
    T = Tp;
  }
  *Tout = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Energies per frame [B] from T: descriptor D = (T/nnei) (T</nnei)^T per atom (se_e2_r: T's column 1
   over 5 nnei), the fitting net of
   each atom's type on its rows, the type's bias, summed over the atoms of each frame. Consumes T. */
static PetscErrorCode FrameEnergies(SgDPModel m, const SgDPBatch *bt, SgnnTensor T, SgnnTensor *Eout)
{
  const SgDPConfig *c = &m->cfg;
  int               A = (int)(bt->B * bt->N), nnei = (int)c->nnei, M = (int)c->emb[c->nemb - 1], M2 = (int)c->axis, B = (int)bt->B;
  SgnnTensor        E = NULL, Ts, T2, D, Df;
  long             *idx, *fr;
  int               sd[2] = {A, M * M2};

  PetscFunctionBegin;
  if (c->radial) { /* se_e2_r: D = (sum of the embeddings) / (5 nnei) = T[:, :, 1] / (5 nnei) */
    SgnnTensor T1;
    sd[1] = M;
    SgNN(sgnn_slice(T, 2, 1, 2, &T1));
    FREE(T);
    SgNN(sgnn_affine(T1, 1.0 / (5.0 * nnei), 0.0, &D));
    FREE(T1);
  } else {
    SgNN(sgnn_affine(T, 1.0 / nnei, 0.0, &Ts));
    FREE(T);
    SgNN(sgnn_slice(Ts, 1, 0, M2, &T2));
    SgNN(sgnn_matmul(Ts, T2, 0, 1, &D));
    FREE(Ts);
    FREE(T2);
  }
  SgNN(sgnn_reshape(D, 2, sd, &Df));
  FREE(D);
  PetscCall(PetscMalloc2(A, &idx, A, &fr));
  for (PetscInt t = 0; t < c->ntypes; t++) {
    long nc = 0;
    for (int a = 0; a < A; a++)
      if (bt->type[a % bt->N] == t) {
        idx[nc] = a;
        fr[nc] = a / bt->N;
        nc++;
      }
    if (!nc) continue;
    SgnnTensor h, e1, e0, eb, Et;
    SgNN(sgnn_index_select(Df, 0, nc, idx, &h));
    for (PetscInt l = 0; l <= c->nfit; l++) {
      SgnnTensor hn;
      PetscCall(Layer(h, m->fW[t][l], m->fb[t][l], m->fidt[t][l], m->fnet[t].l[l].res, l < c->nfit ? c->fit_act : -1, &hn));
      FREE(h);
      h = hn;
    }
    int s1[1] = {(int)nc};
    SgNN(sgnn_reshape(h, 1, s1, &e1));
    FREE(h);
    SgNN(sgnn_affine(e1, 1.0, m->bias[t], &e0));
    FREE(e1);
    SgNN(sgnn_scatter_add(e0, 0, nc, fr, B, &eb));
    FREE(e0);
    if (!E) E = eb;
    else {
      SgNN(sgnn_add(E, eb, &Et));
      FREE(E);
      FREE(eb);
      E = Et;
    }
  }
  FREE(Df);
  PetscCall(PetscFree2(idx, fr));
  *Eout = E;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Forces [A, 3] = -dE/dx and virials [B, 9] through the environment matrix: dE/dRn by sgnn_grad
   (create_graph: differentiable again, for the force loss), dE/dr_ij = sum_k dE/dRn_ijk dRn_ijk/dr_ij,
   F = sum over an atom's own rows - scatter onto the neighbours. */
static PetscErrorCode ForcesVirials(SgDPModel m, const SgDPBatch *bt, SgnnTensor E, SgnnTensor Rn, PetscBool want_virial, int create_graph, SgnnTensor *Fout, SgnnTensor *Vout)
{
  int        A = (int)(bt->B * bt->N), nnei = (int)m->cfg.nnei, B = (int)bt->B, ax = 1;
  SgnnTensor g, g3, DR, pr, Gv, sj, Gv3, si, F;

  PetscFunctionBegin;
  SgNN(sgnn_grad(1, &E, NULL, 1, &Rn, create_graph, &g));
  {
    int s3[3] = {A * nnei, 4, 1}, sd[3] = {A * nnei, 4, 3};
    SgNN(sgnn_reshape(g, 3, s3, &g3));
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 3, sd, bt->denvn, &DR));
  }
  FREE(g);
  SgNN(sgnn_mul(g3, DR, &pr));
  FREE(g3);
  FREE(DR);
  SgNN(sgnn_sum(pr, 1, &ax, 0, &Gv)); /* [A*nnei, 3] = dE/dr_ij */
  FREE(pr);
  if (Fout) {
    SgNN(sgnn_scatter_add(Gv, 0, (long)A * nnei, bt->jidx, A, &sj));
    int s3[3] = {A, nnei, 3};
    SgNN(sgnn_reshape(Gv, 3, s3, &Gv3));
    SgNN(sgnn_sum(Gv3, 1, &ax, 0, &si));
    FREE(Gv3);
    SgNN(sgnn_sub(si, sj, &F));
    FREE(si);
    FREE(sj);
    *Fout = F;
  }
  if (Vout && want_virial) {
    SgnnTensor r, G13, rg, rg3, Vs, V;
    int        sr[3] = {A * nnei, 3, 1}, sg[3] = {A * nnei, 1, 3}, sv[3] = {B, (A / B) * nnei, 9};
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 3, sr, bt->rij, &r));
    SgNN(sgnn_reshape(Gv, 3, sg, &G13));
    SgNN(sgnn_mul(r, G13, &rg));
    FREE(r);
    FREE(G13);
    SgNN(sgnn_reshape(rg, 3, sv, &rg3));
    FREE(rg);
    SgNN(sgnn_sum(rg3, 1, &ax, 0, &Vs));
    FREE(rg3);
    SgNN(sgnn_affine(Vs, -1.0, 0.0, &V));
    FREE(Vs);
    *Vout = V;
  } else if (Vout) *Vout = NULL;
  FREE(Gv);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPGraph(SgDPModel m, SgDPBatch *bt, PetscBool want_virial, int create_graph, SgnnTensor *Eout, SgnnTensor *Fout, SgnnTensor *Vout)
{
  int        A = (int)(bt->B * bt->N), nnei = (int)m->cfg.nnei;
  SgnnTensor Rn, T = NULL, E = NULL;

  PetscFunctionBegin;
  /* the training graph has per-type statistics; an imported DeePMD-kit model with per-slot ones is
     evaluated (infer.c) but not trained. se_e2_r with exclude_types is refused when a model is
     built or imported (DeePMD-kit embeds the zeroed rows there). */
  PetscCheck(!m->sdavg, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: this model (per-slot davg/dstd) can be evaluated but not trained by surge: training needs per-type davg/dstd");
  {
    int s[3] = {A, nnei, 4};
    SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 3, s, bt->envn, &Rn));
    SgNN(sgnn_tensor_set_requires_grad(Rn, 1));
  }
  PetscCall(EnvTerm(m, bt, Rn, &T));
  PetscCall(FrameEnergies(m, bt, T, &E));
  if (Fout || Vout) PetscCall(ForcesVirials(m, bt, E, Rn, want_virial, create_graph, Fout, Vout));
  FREE(Rn);
  *Eout = E;
  PetscFunctionReturn(PETSC_SUCCESS);
}
