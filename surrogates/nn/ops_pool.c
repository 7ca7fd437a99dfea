/* ops_pool.c -- pooling, upsampling and point interpolation, all built from
 * differentiable primitives so they have first and second derivatives:
 *   max pool     = index_select at the window argmax (indices are constant)
 *   avg pool     = mean over the im2col window axis
 *   nearest up   = index_select
 *   trilinear up = three separable 1-d blends of two index_selects each
 *   interp at points = 8 corner gathers weighted by products of the
 *                  fractional coordinates (differentiable in grid and points) */
#include "sgnn_impl.h"
#include <math.h>
#include <stdlib.h>

static int check5(const char *op, SgnnTensor x, const int *a, const int *b)
{
  SGNN_CHECK(x && a && b, SGNN_ERR_ARG, "%s: NULL argument", op);
  SGNN_CHECK(x->ndim == 5, SGNN_ERR_SHAPE, "%s: input must be [N,C,D,H,W], got %s", op, SHP(x));
  for (int i = 0; i < 3; i++)
    SGNN_CHECK(a[i] >= 1 && b[i] >= 1, SGNN_ERR_ARG, "%s: kernel/stride/factor %d,%d on axis %d must be >= 1", op, a[i],
               b[i], i);
  return 0;
}

int sgnn_maxpool3d(SgnnTensor x, const int k[3], const int stride[3], SgnnTensor *out)
{
  SGNN_TRY(check5("maxpool3d", x, k, stride));
  SGNN_CHECK(out, SGNN_ERR_ARG, "maxpool3d: NULL output");
  SgnnConvGeom g = {.N = x->shape[0], .C = x->shape[1], .D = x->shape[2], .H = x->shape[3], .W = x->shape[4]};
  int *o[3] = {&g.Do, &g.Ho, &g.Wo};
  for (int i = 0; i < 3; i++) {
    SGNN_CHECK(k[i] <= x->shape[2 + i], SGNN_ERR_SHAPE, "maxpool3d: kernel %d exceeds extent %d of %s on axis %d", k[i],
               x->shape[2 + i], SHP(x), 2 + i);
    g.k[i] = k[i];
    g.s[i] = stride[i];
    *o[i] = (x->shape[2 + i] - k[i]) / stride[i] + 1;
  }
  long nout = (long)g.N * g.C * g.Do * g.Ho * g.Wo;
  SgnnIndex *ix;
  SGNN_TRY(sgnn_index_create(sgnn_be(x), nout, NULL, &ix));
  int rc = sgnn_k_maxpool_idx(sgnn_be(x), x->dtype, &g, sgnn_ptr(x), ix->dev);
  SgnnTensor flat = NULL, y = NULL;
  int fs[1] = {(int)x->numel}, os[5] = {g.N, g.C, g.Do, g.Ho, g.Wo};
  if (!rc) rc = sgnn_reshape(x, 1, fs, &flat);
  if (!rc) rc = sgnn_index_select_ix(flat, 0, ix, &y);
  if (!rc) rc = sgnn_reshape(y, 5, os, out);
  sgnn_tensor_free(&flat);
  sgnn_tensor_free(&y);
  sgnn_index_release(&ix);
  return rc;
}

int sgnn_avgpool3d(SgnnTensor x, const int k[3], const int stride[3], SgnnTensor *out)
{
  SGNN_TRY(check5("avgpool3d", x, k, stride));
  SGNN_CHECK(out, SGNN_ERR_ARG, "avgpool3d: NULL output");
  int pad[3] = {0, 0, 0}, rc = 0, ax = 1, perm[3] = {1, 0, 2};
  SgnnTensor cols = NULL, c4 = NULL, m = NULL, mp = NULL;
  SGNN_TRYG(sgnn_im2col3d(x, k, stride, pad, &cols)); /* [C*K, N, S] */
  int s4[4] = {x->shape[1], k[0] * k[1] * k[2], x->shape[0], cols->shape[2]};
  SGNN_TRYG(sgnn_reshape(cols, 4, s4, &c4));
  SGNN_TRYG(sgnn_mean(c4, 1, &ax, 0, &m)); /* [C, N, S] */
  SGNN_TRYG(sgnn_permute(m, perm, &mp));
  int os[5] = {x->shape[0], x->shape[1], (x->shape[2] - k[0]) / stride[0] + 1, (x->shape[3] - k[1]) / stride[1] + 1,
               (x->shape[4] - k[2]) / stride[2] + 1};
  SGNN_TRYG(sgnn_reshape(mp, 5, os, out));
done:
  sgnn_tensor_free(&cols);
  sgnn_tensor_free(&c4);
  sgnn_tensor_free(&m);
  sgnn_tensor_free(&mp);
  return rc;
}

int sgnn_upsample_nearest3d(SgnnTensor x, const int f[3], SgnnTensor *out)
{
  SGNN_TRY(check5("upsample_nearest3d", x, f, f));
  SGNN_CHECK(out, SGNN_ERR_ARG, "upsample_nearest3d: NULL output");
  int D = x->shape[2], H = x->shape[3], W = x->shape[4];
  int Do = D * f[0], Ho = H * f[1], Wo = W * f[2];
  long so = (long)Do * Ho * Wo, q = 0;
  long *idx = malloc(sizeof(long) * (size_t)so);
  SGNN_CHECK(idx, SGNN_ERR_MEM, "upsample_nearest3d: out of memory");
  for (int a = 0; a < Do; a++)
    for (int b = 0; b < Ho; b++)
      for (int c = 0; c < Wo; c++) idx[q++] = ((long)(a / f[0]) * H + b / f[1]) * W + c / f[2];
  int s2[2] = {x->shape[0] * x->shape[1], D * H * W}, os[5] = {x->shape[0], x->shape[1], Do, Ho, Wo}, rc = 0;
  SgnnTensor x2 = NULL, y = NULL;
  SGNN_TRYG(sgnn_reshape(x, 2, s2, &x2));
  SGNN_TRYG(sgnn_index_select(x2, 1, so, idx, &y));
  SGNN_TRYG(sgnn_reshape(y, 5, os, out));
done:
  free(idx);
  sgnn_tensor_free(&x2);
  sgnn_tensor_free(&y);
  return rc;
}

/* 1-d linear resampling of axis `ax` of x4 [NC,D,H,W] by integer factor f,
 * align_corners=False: source coordinate (o+0.5)/f-0.5 clamped below at 0 */
static int lerp_axis(SgnnTensor x4, int ax, int f, SgnnTensor *out)
{
  int n = x4->shape[ax], no = n * f, rc = 0;
  long *i0 = malloc(sizeof(long) * no), *i1 = malloc(sizeof(long) * no);
  double *w0 = malloc(sizeof(double) * no), *w1 = malloc(sizeof(double) * no);
  SgnnTensor a = NULL, b = NULL, wa = NULL, wb = NULL, ta = NULL, tb = NULL;
  if (!i0 || !i1 || !w0 || !w1) {
    rc = sgnn_seterr(SGNN_ERR_MEM, "upsample_trilinear3d: out of memory");
    goto done;
  }
  for (int o = 0; o < no; o++) {
    double s = (o + 0.5) / f - 0.5;
    if (s < 0) s = 0;
    int j = (int)floor(s);
    if (j > n - 1) j = n - 1;
    double l = s - j;
    i0[o] = j;
    i1[o] = j + 1 < n ? j + 1 : n - 1;
    w0[o] = 1 - l;
    w1[o] = l;
  }
  int ws[4] = {1, 1, 1, 1};
  ws[ax] = no;
  SGNN_TRYG(sgnn_tensor_from_f64(sgnn_be(x4), x4->dtype, 4, ws, w0, &wa));
  SGNN_TRYG(sgnn_tensor_from_f64(sgnn_be(x4), x4->dtype, 4, ws, w1, &wb));
  SGNN_TRYG(sgnn_index_select(x4, ax, no, i0, &a));
  SGNN_TRYG(sgnn_index_select(x4, ax, no, i1, &b));
  SGNN_TRYG(sgnn_mul(a, wa, &ta));
  SGNN_TRYG(sgnn_mul(b, wb, &tb));
  SGNN_TRYG(sgnn_add(ta, tb, out));
done:
  free(i0);
  free(i1);
  free(w0);
  free(w1);
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  sgnn_tensor_free(&wa);
  sgnn_tensor_free(&wb);
  sgnn_tensor_free(&ta);
  sgnn_tensor_free(&tb);
  return rc;
}

int sgnn_upsample_trilinear3d(SgnnTensor x, const int f[3], SgnnTensor *out)
{
  SGNN_TRY(check5("upsample_trilinear3d", x, f, f));
  SGNN_CHECK(out, SGNN_ERR_ARG, "upsample_trilinear3d: NULL output");
  int s4[4] = {x->shape[0] * x->shape[1], x->shape[2], x->shape[3], x->shape[4]}, rc = 0;
  SgnnTensor cur = NULL, nxt = NULL;
  SGNN_TRYG(sgnn_reshape(x, 4, s4, &cur));
  for (int ax = 3; ax >= 1; ax--) {
    SGNN_TRYG(lerp_axis(cur, ax, f[ax - 1], &nxt));
    sgnn_tensor_free(&cur);
    cur = nxt;
    nxt = NULL;
  }
  int os[5] = {x->shape[0], x->shape[1], x->shape[2] * f[0], x->shape[3] * f[1], x->shape[4] * f[2]};
  SGNN_TRYG(sgnn_reshape(cur, 5, os, out));
done:
  sgnn_tensor_free(&cur);
  sgnn_tensor_free(&nxt);
  return rc;
}

int sgnn_interp_trilinear(SgnnTensor grid, SgnnTensor pts, SgnnTensor *out)
{
  SGNN_CHECK(grid && pts && out, SGNN_ERR_ARG, "interp_trilinear: NULL argument");
  SGNN_TRY(sgnn_check_pair("interp_trilinear", grid, pts));
  SGNN_CHECK(grid->ndim == 5 && pts->ndim == 3 && pts->shape[2] == 3 && pts->shape[0] == grid->shape[0], SGNN_ERR_SHAPE,
             "interp_trilinear: grid %s, points %s (expected grid [B,C,D,H,W], points [B,P,3])", SHP(grid), SHP(pts));
  int B = grid->shape[0], C = grid->shape[1], P = pts->shape[1], rc = 0;
  int ext[3] = {grid->shape[2], grid->shape[3], grid->shape[4]};
  long S = (long)ext[0] * ext[1] * ext[2], BP = (long)B * P;
  double *hp = malloc(sizeof(double) * BP * 3), *base = malloc(sizeof(double) * BP * 3);
  long *idx = malloc(sizeof(long) * BP);
  SgnnTensor tb = NULL, t = NULL, gp = NULL, g2 = NULL, acc = NULL, td[3] = {0}, om[3] = {0};
  if (!hp || !base || !idx) {
    rc = sgnn_seterr(SGNN_ERR_MEM, "interp_trilinear: out of memory");
    goto done;
  }
  SGNN_TRYG(sgnn_tensor_to_f64(pts, hp));
  /* cell corner below each point; points outside extrapolate linearly from
   * the boundary cell (no clamping of the weights) */
  for (long i = 0; i < BP * 3; i++) {
    int d = (int)(i % 3), n = ext[d];
    double c = floor(hp[i]);
    if (c > n - 2) c = n - 2;
    if (c < 0) c = 0;
    base[i] = c;
  }
  int ps[3] = {B, P, 3};
  SGNN_TRYG(sgnn_tensor_from_f64(sgnn_be(pts), pts->dtype, 3, ps, base, &tb));
  SGNN_TRYG(sgnn_sub(pts, tb, &t)); /* fractional position, differentiable in pts */
  int s2[2] = {(int)BP, 1};
  for (int d = 0; d < 3; d++) {
    SgnnTensor sl = NULL;
    SGNN_TRYG(sgnn_slice(t, 2, d, d + 1, &sl));
    rc = sgnn_reshape(sl, 2, s2, &td[d]);
    sgnn_tensor_free(&sl);
    if (rc) goto done;
    SGNN_TRYG(sgnn_affine(td[d], -1.0, 1.0, &om[d]));
  }
  int perm[5] = {0, 2, 3, 4, 1}, gs[2] = {(int)(B * S), C};
  SGNN_TRYG(sgnn_permute(grid, perm, &gp));
  SGNN_TRYG(sgnn_reshape(gp, 2, gs, &g2));
  for (int corner = 0; corner < 8; corner++) {
    int cz = corner >> 2 & 1, cy = corner >> 1 & 1, cx = corner & 1;
    for (long i = 0; i < BP; i++) {
      long b = i / P;
      int z = (int)base[3 * i] + (ext[0] > 1 ? cz : 0), y = (int)base[3 * i + 1] + (ext[1] > 1 ? cy : 0),
          x = (int)base[3 * i + 2] + (ext[2] > 1 ? cx : 0);
      idx[i] = b * S + ((long)z * ext[1] + y) * ext[2] + x;
    }
    SgnnTensor v = NULL, w1 = NULL, w2 = NULL, term = NULL, s = NULL;
    rc = sgnn_index_select(g2, 0, BP, idx, &v);
    if (!rc) rc = sgnn_mul(cz ? td[0] : om[0], cy ? td[1] : om[1], &w1);
    if (!rc) rc = sgnn_mul(w1, cx ? td[2] : om[2], &w2);
    if (!rc) rc = sgnn_mul(v, w2, &term);
    if (!rc && acc) rc = sgnn_add(acc, term, &s);
    if (!rc) {
      if (acc) {
        sgnn_tensor_free(&acc);
        acc = s;
      } else {
        acc = sgnn_tensor_ref(term);
      }
    }
    sgnn_tensor_free(&v);
    sgnn_tensor_free(&w1);
    sgnn_tensor_free(&w2);
    sgnn_tensor_free(&term);
    if (rc) goto done;
  }
  int os[3] = {B, P, C};
  SGNN_TRYG(sgnn_reshape(acc, 3, os, out));
done:
  free(hp);
  free(base);
  free(idx);
  sgnn_tensor_free(&tb);
  sgnn_tensor_free(&t);
  sgnn_tensor_free(&gp);
  sgnn_tensor_free(&g2);
  sgnn_tensor_free(&acc);
  for (int d = 0; d < 3; d++) {
    sgnn_tensor_free(&td[d]);
    sgnn_tensor_free(&om[d]);
  }
  return rc;
}
