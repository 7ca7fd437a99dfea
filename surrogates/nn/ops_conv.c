/* ops_conv.c -- 3-d convolution as im2col + GEMM (1-d and 2-d by size-1
 * dims). im2col and col2im are linear and adjoint to each other, so each is
 * the other's backward, and conv3d = reshape(W) x im2col(x) + bias inherits
 * first and second derivatives from matmul/im2col with no extra code. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

static int geom(const char *op, SgnnTensor x5, int N, int C, const int dhw[3], const int k[3], const int s[3],
                const int p[3], SgnnConvGeom *g)
{
  (void)x5;
  SGNN_CHECK(k && s && p, SGNN_ERR_ARG, "%s: NULL kernel/stride/padding", op);
  g->N = N;
  g->C = C;
  g->r0 = g->r1 = 0;
  g->D = dhw[0];
  g->H = dhw[1];
  g->W = dhw[2];
  int *o[3] = {&g->Do, &g->Ho, &g->Wo};
  for (int i = 0; i < 3; i++) {
    SGNN_CHECK(k[i] >= 1 && s[i] >= 1 && p[i] >= 0, SGNN_ERR_ARG,
               "%s: kernel %d, stride %d, padding %d on axis %d (need k>=1, s>=1, p>=0)", op, k[i], s[i], p[i], i);
    g->k[i] = k[i];
    g->s[i] = s[i];
    g->p[i] = p[i];
    int span = dhw[i] + 2 * p[i] - k[i];
    SGNN_CHECK(span >= 0, SGNN_ERR_SHAPE, "%s: kernel %d larger than padded extent %d on axis %d", op, k[i],
               dhw[i] + 2 * p[i], i);
    *o[i] = span / s[i] + 1;
  }
  return 0;
}

static int im2col_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  const int *is = n->in_shape[0];
  return sgnn_col2im3d(g, is[1], is + 2, n->ip, n->ip + 3, n->ip + 6, &gin[0]);
}

/* The tail im2col3d and col2im3d share: after the backend kernel (status rc) filled o, free it on
   failure, else record the node with its geometry (kernel, stride, padding: what either backward
   needs to run the other op) and hand o out. */
static int layout_finish(int rc, SgnnTensor o, const char *name, SgnnTensor in, SgnnBackwardFn bw, const int k[3], const int stride[3],
                         const int pad[3], SgnnTensor *out)
{
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, name, 1, &in, bw);
  if (n)
    for (int i = 0; i < 3; i++) {
      n->ip[i] = k[i];
      n->ip[3 + i] = stride[i];
      n->ip[6 + i] = pad[i];
    }
  *out = o;
  return 0;
}

int sgnn_im2col3d(SgnnTensor x, const int k[3], const int stride[3], const int pad[3], SgnnTensor *out)
{
  SGNN_CHECK(x && out, SGNN_ERR_ARG, "im2col3d: NULL argument");
  SGNN_CHECK(x->ndim == 5, SGNN_ERR_SHAPE, "im2col3d: input must be [N,C,D,H,W], got %s", SHP(x));
  SgnnConvGeom g;
  SGNN_TRY(geom("im2col3d", x, x->shape[0], x->shape[1], x->shape + 2, k, stride, pad, &g));
  int shape[3] = {g.C * k[0] * k[1] * k[2], g.N, g.Do * g.Ho * g.Wo};
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(x), x->dtype, 3, shape, 0, &o));
  SgnnBackend *be = sgnn_be(x);
  int rc = be->im2col ? be->im2col(x->dtype, &g, sgnn_ptr(x), sgnn_ptr(o)) : sgnn_k_missing(be, "im2col");
  return layout_finish(rc, o, "im2col3d", x, im2col_bw, k, stride, pad, out);
}

static int col2im_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  (void)cg;
  if (!need[0]) return 0;
  return sgnn_im2col3d(g, n->ip, n->ip + 3, n->ip + 6, &gin[0]);
}

int sgnn_col2im3d(SgnnTensor cols, int C, const int in_dhw[3], const int k[3], const int stride[3], const int pad[3],
                  SgnnTensor *out)
{
  SGNN_CHECK(cols && out && in_dhw, SGNN_ERR_ARG, "col2im3d: NULL argument");
  SgnnConvGeom g;
  SGNN_CHECK(cols->ndim == 3, SGNN_ERR_SHAPE, "col2im3d: columns must be [C*K,N,S], got %s", SHP(cols));
  SGNN_TRY(geom("col2im3d", cols, cols->shape[1], C, in_dhw, k, stride, pad, &g));
  SGNN_CHECK(cols->shape[0] == C * k[0] * k[1] * k[2] && cols->shape[2] == g.Do * g.Ho * g.Wo, SGNN_ERR_SHAPE,
             "col2im3d: columns %s do not match C=%d, kernel %dx%dx%d, output %dx%dx%d", SHP(cols), C, k[0], k[1], k[2],
             g.Do, g.Ho, g.Wo);
  int shape[5] = {g.N, C, in_dhw[0], in_dhw[1], in_dhw[2]};
  SgnnTensor o;
  SGNN_TRY(sgnn_tensor_new(sgnn_be(cols), cols->dtype, 5, shape, 1, &o)); /* col2im accumulates */
  SgnnBackend *be = sgnn_be(cols);
  int rc = be->col2im ? be->col2im(cols->dtype, &g, sgnn_ptr(cols), sgnn_ptr(o)) : sgnn_k_missing(be, "col2im");
  return layout_finish(rc, o, "col2im3d", cols, col2im_bw, k, stride, pad, out);
}

/* ---- conv3d: a fused node ---------------------------------------------
 * Forward and the create_graph=off backward stream each sample's columns in
 * chunks of output rows through a reused buffer of about 1 MiB (tunable with
 * the environment variable SGNN_CONV_CHUNK_BYTES), so im2col writes and the
 * GEMM reads stay in cache; a whole-batch column matrix streamed ~100 MB per
 * step through memory on the benchmark shapes. With create_graph the
 * backward is built from im2col/col2im/matmul, which are differentiable, so
 * double backward through a conv works. */
typedef struct {
  SgnnConvGeom g1; /* geometry of ONE sample */
  int N, Co, CK, S;
} ConvDims;

static void conv_dims(SgnnTensor x, const int *wshape, const int *st, const int *pd, ConvDims *c)
{
  SgnnConvGeom *g = &c->g1;
  g->N = 1;
  g->r0 = g->r1 = 0;
  g->C = x->shape[1];
  g->D = x->shape[2];
  g->H = x->shape[3];
  g->W = x->shape[4];
  for (int i = 0; i < 3; i++) {
    g->k[i] = wshape[2 + i];
    g->s[i] = st[i];
    g->p[i] = pd[i];
  }
  g->Do = (g->D + 2 * pd[0] - g->k[0]) / st[0] + 1;
  g->Ho = (g->H + 2 * pd[1] - g->k[1]) / st[1] + 1;
  g->Wo = (g->W + 2 * pd[2] - g->k[2]) / st[2] + 1;
  c->N = x->shape[0];
  c->Co = wshape[0];
  c->CK = g->C * g->k[0] * g->k[1] * g->k[2];
  c->S = g->Do * g->Ho * g->Wo;
}

/* Winograd F(2x2x2, 3x3x3) (conv_winograd.c) for 3x3x3 stride-1 convs on
 * the CPU backend when both channel counts are >= 16 (forward, input
 * gradient and weight gradient): one vector of channels or more, where its
 * 3.4x fewer multiply-adds pay for the transforms (32->64 channels, 4x16x16,
 * batch 8, one thread: forward 2.8 ms vs 5.7 ms direct, weight gradient 3.5
 * vs 6.2 ms; docs/nn.md); with fewer channels (the 4-channel first layer)
 * the direct kernels win. SGNN_CONV_WINOGRAD=0/1 forces it off/on (tests
 * use both). */
static int use_winograd(SgnnBackend *be, const int *k, const int *st, const int *pd, int cin, int cout)
{
  if (be != sgnn_backend_cpu()) return 0;
  for (int i = 0; i < 3; i++)
    if (k[i] != 3 || st[i] != 1 || pd[i] > 2) return 0;
  const char *e = getenv("SGNN_CONV_WINOGRAD");
  if (e && *e == '0') return 0;
  if (e && *e == '1') return 1;
  return cin >= 16 && cout >= 16;
}

/* direct convolution (conv_direct.c) for every other stride-1 conv on the
 * CPU backend, and for every stride-1 weight gradient; for the input
 * gradient it also needs padding <= kernel - 1 (the gradient is a conv of g
 * padded by k - 1 - p). It beat im2col+GEMM on every pass of the benchmark
 * block (docs/nn.md). SGNN_CONV_DIRECT=0 turns it off (im2col+GEMM);
 * Winograd, where chosen, takes precedence. */
static int use_direct(SgnnBackend *be, const int *k, const int *st, const int *pd, int for_dx)
{
  if (be != sgnn_backend_cpu()) return 0;
  for (int i = 0; i < 3; i++)
    if (st[i] != 1 || (for_dx && pd[i] > k[i] - 1)) return 0;
  const char *e = getenv("SGNN_CONV_DIRECT");
  return !(e && *e == '0');
}

/* SGNN_CONV_CHUNK_BYTES overrides the working-set sizes (tests set it tiny
 * to exercise the multi-chunk paths); 0 = defaults */
static size_t chunk_env(void)
{
  const char *env = getenv("SGNN_CONV_CHUNK_BYTES");
  return env && atol(env) > 0 ? (size_t)atol(env) : 0;
}

static int rows_per_chunk(const ConvDims *c, size_t es)
{
  size_t target = chunk_env() ? chunk_env() : ((size_t)1 << 20);
  size_t per_row = (size_t)c->CK * c->g1.Wo * es;
  long rows = (long)(target / (per_row ? per_row : 1)), all = (long)c->g1.Do * c->g1.Ho;
  return (int)(rows < 1 ? 1 : (rows > all ? all : rows));
}

/* copy/add a [Co, Sc] block between a contiguous buffer and columns
 * [off, off+Sc) of a [Co, S] matrix; add_bias: dst = src + bias[co] */
static int block_io(SgnnBackend *be, SgnnDType dt, int Co, int S, int off, int Sc, const void *src, int src_strided,
                    void *dst, const void *bias)
{
  SgnnIter it;
  int sh[2] = {Co, Sc};
  size_t es = sgnn_esize(dt);
  sgnn_iter_init(&it, 2, sh);
  if (src_strided) {
    it.sa[3] = S;
    src = (const char *)src + (size_t)off * es;
  } else {
    it.so[3] = S;
    dst = (char *)dst + (size_t)off * es;
  }
  if (!bias) return be->copy_strided(dt, &it, src, dst);
  it.sb[3] = 1;
  it.sb[4] = 0;
  return be->binary(SGNN_B_ADD, dt, &it, src, bias, dst);
}

/* graph-building backward (create_graph): differentiable ops only */
static int conv_bw_graph(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, const ConvDims *c)
{
  SgnnTensor x = n->saved[0], w = n->saved[1];
  const int *k = n->ip, *st = n->ip + 3, *pd = n->ip + 6;
  int rc = 0, perm[3] = {1, 0, 2};
  int g3s[3] = {c->N, c->Co, c->S}, g2s[2] = {c->Co, c->N * c->S}, wms[2] = {c->Co, c->CK};
  SgnnTensor g3 = NULL, gp = NULL, g2 = NULL, cols = NULL, c2 = NULL, dw = NULL, wm = NULL, dc = NULL, dc3 = NULL;
  SGNN_TRYG(sgnn_reshape(g, 3, g3s, &g3));
  SGNN_TRYG(sgnn_permute(g3, perm, &gp)); /* [Co, N, S] */
  SGNN_TRYG(sgnn_reshape(gp, 2, g2s, &g2));
  if (need[1]) {
    int cs[2] = {c->CK, c->N * c->S};
    SGNN_TRYG(sgnn_im2col3d(x, k, st, pd, &cols));
    SGNN_TRYG(sgnn_reshape(cols, 2, cs, &c2));
    SGNN_TRYG(sgnn_matmul(g2, c2, 0, 1, &dw)); /* [Co, CK] */
    SGNN_TRYG(sgnn_reshape(dw, 5, n->in_shape[1], &gin[1]));
  }
  if (need[0]) {
    int d3[3] = {c->CK, c->N, c->S};
    SGNN_TRYG(sgnn_reshape(w, 2, wms, &wm));
    SGNN_TRYG(sgnn_matmul(wm, g2, 1, 0, &dc)); /* [CK, N*S] */
    SGNN_TRYG(sgnn_reshape(dc, 3, d3, &dc3));
    SGNN_TRYG(sgnn_col2im3d(dc3, c->g1.C, n->in_shape[0] + 2, k, st, pd, &gin[0]));
  }
  if (n->nin > 2 && need[2]) {
    int bs[4] = {c->Co, 1, 1, 1};
    SgnnTensor t = NULL;
    SGNN_TRYG(sgnn_sum_to(g, 4, bs, &t));
    rc = sgnn_reshape(t, 1, &c->Co, &gin[2]);
    sgnn_tensor_free(&t);
  }
done:
  sgnn_tensor_free(&g3);
  sgnn_tensor_free(&gp);
  sgnn_tensor_free(&g2);
  sgnn_tensor_free(&cols);
  sgnn_tensor_free(&c2);
  sgnn_tensor_free(&dw);
  sgnn_tensor_free(&wm);
  sgnn_tensor_free(&dc);
  sgnn_tensor_free(&dc3);
  return rc;
}

static int conv_bw(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int cg)
{
  SgnnTensor x = n->saved[0], w = n->saved[1];
  SGNN_CHECK(x && w, SGNN_ERR_STATE, "backward of 'conv3d': saved inputs already freed (backward twice?)");
  ConvDims c;
  conv_dims(x, w->shape, n->ip + 3, n->ip + 6, &c);
  if (cg) return conv_bw_graph(n, g, need, gin, &c);
  SgnnBackend *be = sgnn_be(x);
  SgnnDType dt = x->dtype;
  size_t es = sgnn_esize(dt);
  long xs = (long)c.g1.C * c.g1.D * c.g1.H * c.g1.W, gs = (long)c.Co * c.S;
  int rows = rows_per_chunk(&c, es), rc = 0, Wo = c.g1.Wo, nrow = c.g1.Do * c.g1.Ho;
  int cshape[2] = {c.CK, rows * Wo}, tshape[2] = {c.Co, rows * Wo};
  SgnnTensor scratch = NULL, tmp = NULL;
  if (!be->im2col || !be->col2im) return sgnn_k_missing(be, "im2col/col2im");
  int wino = need[0] && use_winograd(be, w->shape + 2, n->ip + 3, n->ip + 6, c.Co, c.g1.C); /* input gradient */
  int dw_wino = need[1] && use_winograd(be, w->shape + 2, n->ip + 3, n->ip + 6, c.g1.C, c.Co);
  int dx_direct = need[0] && !wino && use_direct(be, w->shape + 2, n->ip + 3, n->ip + 6, 1);
  int dw_direct = need[1] && !dw_wino && use_direct(be, w->shape + 2, n->ip + 3, n->ip + 6, 0);
  int do_dx = need[0] && !wino && !dx_direct, do_dw = need[1] && !dw_wino && !dw_direct;
  if (do_dx || do_dw) { /* column buffers only for the im2col paths */
    SGNN_TRYG(sgnn_tensor_new(be, dt, 2, cshape, 0, &scratch));
    SGNN_TRYG(sgnn_tensor_new(be, dt, 2, tshape, 0, &tmp));
  }
  int db_fused = (dw_direct || dw_wino) && n->nin > 2 && need[2]; /* bias gradient in the same pass over g */
  if (need[1]) SGNN_TRYG(sgnn_tensor_new(be, dt, 5, w->shape, 1, &gin[1]));
  if (db_fused) SGNN_TRYG(sgnn_tensor_new(be, dt, 1, &c.Co, 1, &gin[2]));
  if (need[0]) /* direct and Winograd write every element */
    SGNN_TRYG(sgnn_tensor_new(be, dt, 5, x->shape, !(dx_direct || wino), &gin[0]));
  if (dw_wino) {
    SgnnWinogradArgs wa = {.dt = dt, .N = c.N, .C = c.g1.C, .D = c.g1.D, .H = c.g1.H, .W = c.g1.W, .Co = c.Co,
                           .pad = {n->ip[6], n->ip[7], n->ip[8]}, .x = sgnn_ptr(x), .y = sgnn_ptr(g),
                           .dw = sgnn_ptr(gin[1]), .db = db_fused ? sgnn_ptr(gin[2]) : NULL};
    SGNN_TRYG(sgnn_winograd_conv3_dw(&wa));
  }
  if (dw_direct) {
    SgnnDirectArgs da = {.dt = dt, .N = c.N, .C = c.g1.C, .D = c.g1.D, .H = c.g1.H, .W = c.g1.W, .Co = c.Co,
                         .k = {c.g1.k[0], c.g1.k[1], c.g1.k[2]}, .pad = {n->ip[6], n->ip[7], n->ip[8]},
                         .x = sgnn_ptr(x), .y = sgnn_ptr(g), .dw = sgnn_ptr(gin[1]),
                         .db = db_fused ? sgnn_ptr(gin[2]) : NULL};
    SGNN_TRYG(sgnn_direct_conv3_dw(&da));
  }
  if (wino || dx_direct) { /* dX = stride-1 conv of g with flipped, transposed W and padding k - 1 - p */
    size_t nw = (size_t)c.CK * c.Co;
    char *wf = malloc(nw * es);
    if (!wf) {
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d backward: out of memory");
      goto done;
    }
    int K = c.CK / c.g1.C;
    /* typed loops: a memcpy of es bytes per element was ~0.3 ms of serial time per call */
#define FLIP(T)                                                                                                          \
  for (int co = 0; co < c.Co; co++)                                                                                     \
    for (int ci = 0; ci < c.g1.C; ci++)                                                                                 \
      for (int t = 0; t < K; t++)                                                                                       \
        ((T *)wf)[((size_t)ci * c.Co + co) * K + t] = ((const T *)sgnn_ptr(w))[((size_t)co * c.g1.C + ci) * K + (K - 1 - t)];
    if (dt == SGNN_F64) FLIP(double) else FLIP(float)
#undef FLIP
    if (dx_direct) {
      SgnnDirectArgs da = {.dt = dt, .N = c.N, .C = c.Co, .D = c.g1.Do, .H = c.g1.Ho, .W = c.g1.Wo, .Co = c.g1.C,
                           .k = {c.g1.k[0], c.g1.k[1], c.g1.k[2]},
                           .pad = {c.g1.k[0] - 1 - n->ip[6], c.g1.k[1] - 1 - n->ip[7], c.g1.k[2] - 1 - n->ip[8]},
                           .x = sgnn_ptr(g), .w = wf, .y = sgnn_ptr(gin[0])};
      rc = sgnn_direct_conv3(&da);
      free(wf);
      if (rc) goto done;
    } else {
    SgnnWinogradArgs wa = {.dt = dt, .N = c.N, .C = c.Co, .D = c.g1.Do, .H = c.g1.Ho, .W = c.g1.Wo, .Co = c.g1.C,
                           .pad = {2 - n->ip[6], 2 - n->ip[7], 2 - n->ip[8]}, .x = sgnn_ptr(g), .w = wf,
                           .bias = NULL, .y = sgnn_ptr(gin[0])};
    rc = sgnn_winograd_conv3(&wa);
    free(wf);
    if (rc) goto done;
    }
  }
  for (int i = 0; i < c.N && !rc && (do_dx || do_dw); i++) {
    const char *xi = (const char *)sgnn_ptr(x) + i * xs * es, *gi = (const char *)sgnn_ptr(g) + i * gs * es;
    for (int q0 = 0; q0 < nrow && !rc; q0 += rows) {
      int q1 = q0 + rows < nrow ? q0 + rows : nrow, Sc = (q1 - q0) * Wo;
      SgnnConvGeom gc = c.g1;
      gc.r0 = q0;
      gc.r1 = q1;
      const void *gblk = gi;
      if (Sc != c.S) { /* this chunk's columns of g_i, made contiguous */
        rc = block_io(be, dt, c.Co, c.S, q0 * Wo, Sc, gi, 1, sgnn_ptr(tmp), NULL);
        gblk = sgnn_ptr(tmp);
      }
      if (!rc && do_dw) { /* dW += g_chunk cols_chunk^T */
        rc = be->im2col(dt, &gc, xi, sgnn_ptr(scratch));
        if (!rc) rc = be->gemm(dt, 0, 1, c.Co, c.CK, Sc, 1.0, gblk, 0, sgnn_ptr(scratch), 0, 1.0, sgnn_ptr(gin[1]), 0, 1);
      }
      if (!rc && do_dx) { /* dX_i += col2im(W^T g_chunk) */
        rc = be->gemm(dt, 1, 0, c.CK, Sc, c.Co, 1.0, sgnn_ptr(w), 0, gblk, 0, 0.0, sgnn_ptr(scratch), 0, 1);
        if (!rc) rc = be->col2im(dt, &gc, sgnn_ptr(scratch), (char *)sgnn_ptr(gin[0]) + i * xs * es);
      }
    }
  }
  if (rc) goto done;
  if (n->nin > 2 && need[2] && !db_fused) {
    int bs[4] = {c.Co, 1, 1, 1};
    SgnnTensor t = NULL;
    SGNN_TRYG(sgnn_sum_to(g, 4, bs, &t));
    rc = sgnn_reshape(t, 1, &c.Co, &gin[2]);
    sgnn_tensor_free(&t);
  }
done:
  sgnn_tensor_free(&scratch);
  sgnn_tensor_free(&tmp);
  return rc;
}

int sgnn_conv3d(SgnnTensor x, SgnnTensor w, SgnnTensor bias, const int stride[3], const int pad[3], SgnnTensor *out)
{
  SGNN_CHECK(x && w && out && stride && pad, SGNN_ERR_ARG, "conv3d: NULL argument");
  SGNN_TRY(sgnn_check_pair("conv3d", x, w));
  SGNN_CHECK(x->ndim == 5 && w->ndim == 5 && w->shape[1] == x->shape[1], SGNN_ERR_SHAPE,
             "conv3d: x %s and w %s (expected x [N,C,D,H,W], w [Co,C,kd,kh,kw])", SHP(x), SHP(w));
  if (bias) {
    SGNN_TRY(sgnn_check_pair("conv3d", x, bias));
    SGNN_CHECK(bias->ndim == 1 && bias->shape[0] == w->shape[0], SGNN_ERR_SHAPE, "conv3d: bias %s for w %s", SHP(bias),
               SHP(w));
  }
  SgnnConvGeom chk;
  SGNN_TRY(geom("conv3d", x, x->shape[0], x->shape[1], x->shape + 2, w->shape + 2, stride, pad, &chk));
  ConvDims c;
  conv_dims(x, w->shape, stride, pad, &c);
  SgnnBackend *be = sgnn_be(x);
  if (!be->im2col) return sgnn_k_missing(be, "im2col");
  SgnnDType dt = x->dtype;
  size_t es = sgnn_esize(dt);
  long xs = (long)c.g1.C * c.g1.D * c.g1.H * c.g1.W, ys = (long)c.Co * c.S;
  int rows = rows_per_chunk(&c, es), Wo = c.g1.Wo, nrow = c.g1.Do * c.g1.Ho, rc = 0;
  int oshape[5] = {c.N, c.Co, c.g1.Do, c.g1.Ho, c.g1.Wo}, cshape[2] = {c.CK, rows * Wo}, tshape[2] = {c.Co, rows * Wo};
  SgnnTensor o = NULL, scratch = NULL, tmp = NULL;
  SGNN_TRYG(sgnn_tensor_new(be, dt, 5, oshape, 0, &o));
  if (use_winograd(be, w->shape + 2, stride, pad, c.g1.C, c.Co)) {
    SgnnWinogradArgs wa = {.dt = dt, .N = c.N, .C = c.g1.C, .D = c.g1.D, .H = c.g1.H, .W = c.g1.W, .Co = c.Co,
                           .pad = {pad[0], pad[1], pad[2]}, .x = sgnn_ptr(x), .w = sgnn_ptr(w),
                           .bias = bias ? sgnn_ptr(bias) : NULL, .y = sgnn_ptr(o)};
    SGNN_TRYG(sgnn_winograd_conv3(&wa));
  } else if (use_direct(be, w->shape + 2, stride, pad, 0)) {
    SgnnDirectArgs da = {.dt = dt, .N = c.N, .C = c.g1.C, .D = c.g1.D, .H = c.g1.H, .W = c.g1.W, .Co = c.Co,
                         .k = {w->shape[2], w->shape[3], w->shape[4]}, .pad = {pad[0], pad[1], pad[2]},
                         .x = sgnn_ptr(x), .w = sgnn_ptr(w), .bias = bias ? sgnn_ptr(bias) : NULL, .y = sgnn_ptr(o)};
    SGNN_TRYG(sgnn_direct_conv3(&da));
  } else {
  SGNN_TRYG(sgnn_tensor_new(be, dt, 2, cshape, 0, &scratch));
  SGNN_TRYG(sgnn_tensor_new(be, dt, 2, tshape, 0, &tmp));
  for (int i = 0; i < c.N && !rc; i++) {
    char *yi = (char *)sgnn_ptr(o) + i * ys * es;
    for (int q0 = 0; q0 < nrow && !rc; q0 += rows) {
      int q1 = q0 + rows < nrow ? q0 + rows : nrow, Sc = (q1 - q0) * Wo;
      SgnnConvGeom gc = c.g1;
      gc.r0 = q0;
      gc.r1 = q1;
      rc = be->im2col(dt, &gc, (const char *)sgnn_ptr(x) + i * xs * es, sgnn_ptr(scratch));
      if (!rc) rc = be->gemm(dt, 0, 0, c.Co, Sc, c.CK, 1.0, sgnn_ptr(w), 0, sgnn_ptr(scratch), 0, 0.0, sgnn_ptr(tmp), 0, 1);
      /* place the [Co, Sc] block (plus bias) into y_i [Co, S] */
      if (!rc) rc = block_io(be, dt, c.Co, c.S, q0 * Wo, Sc, sgnn_ptr(tmp), 0, yi, bias ? sgnn_ptr(bias) : NULL);
    }
  }
  }
  if (rc) goto done;
  SgnnTensor in[3] = {x, w, bias};
  SgnnNode *n = sgnn_record(o, "conv3d", bias ? 3 : 2, in, conv_bw);
  if (n) {
    for (int i = 0; i < 3; i++) {
      n->ip[i] = w->shape[2 + i];
      n->ip[3 + i] = stride[i];
      n->ip[6 + i] = pad[i];
    }
    sgnn_node_save(n, 0, x);
    sgnn_node_save(n, 1, w);
  }
  *out = o;
  o = NULL;
done:
  sgnn_tensor_free(&o);
  sgnn_tensor_free(&scratch);
  sgnn_tensor_free(&tmp);
  return rc;
}
