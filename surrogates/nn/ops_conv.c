/* ops_conv.c -- 3-d convolution as im2col + GEMM (1-d and 2-d by size-1
 * dims). im2col and col2im are linear and adjoint to each other, so each is
 * the other's backward, and conv3d = reshape(W) x im2col(x) + bias inherits
 * first and second derivatives from matmul/im2col with no extra code. */
#include "sgnn_impl.h"

static int geom(const char *op, SgnnTensor x5, int N, int C, const int dhw[3], const int k[3], const int s[3],
                const int p[3], SgnnConvGeom *g)
{
  (void)x5;
  SGNN_CHECK(k && s && p, SGNN_ERR_ARG, "%s: NULL kernel/stride/padding", op);
  g->N = N;
  g->C = C;
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
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "im2col3d", 1, &x, im2col_bw);
  if (n)
    for (int i = 0; i < 3; i++) {
      n->ip[i] = k[i];
      n->ip[3 + i] = stride[i];
      n->ip[6 + i] = pad[i];
    }
  *out = o;
  return 0;
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
  SGNN_TRY(sgnn_tensor_new(sgnn_be(cols), cols->dtype, 5, shape, 0, &o));
  SgnnBackend *be = sgnn_be(cols);
  int rc = be->col2im ? be->col2im(cols->dtype, &g, sgnn_ptr(cols), sgnn_ptr(o)) : sgnn_k_missing(be, "col2im");
  if (rc) {
    sgnn_tensor_free(&o);
    return rc;
  }
  SgnnNode *n = sgnn_record(o, "col2im3d", 1, &cols, col2im_bw);
  if (n)
    for (int i = 0; i < 3; i++) {
      n->ip[i] = k[i];
      n->ip[3 + i] = stride[i];
      n->ip[6 + i] = pad[i];
    }
  *out = o;
  return 0;
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
  const int *k = w->shape + 2;
  int rc = 0, Co = w->shape[0], N = x->shape[0];
  SgnnTensor cols = NULL, c2 = NULL, wm = NULL, y = NULL, y3 = NULL, yp = NULL, y5 = NULL, b4 = NULL;
  SGNN_TRYG(sgnn_im2col3d(x, k, stride, pad, &cols)); /* [C*K, N, S] */
  int S = cols->shape[2], cs[2] = {cols->shape[0], N * S}, wshape[2] = {Co, cols->shape[0]};
  SGNN_TRYG(sgnn_reshape(cols, 2, cs, &c2));
  SGNN_TRYG(sgnn_reshape(w, 2, wshape, &wm));
  SGNN_TRYG(sgnn_matmul(wm, c2, 0, 0, &y)); /* [Co, N*S]: one GEMM for the batch */
  sgnn_tensor_free(&cols);                  /* the graph keeps it while backward needs it */
  sgnn_tensor_free(&c2);
  int s3[3] = {Co, N, S}, perm[3] = {1, 0, 2};
  SGNN_TRYG(sgnn_reshape(y, 3, s3, &y3));
  SGNN_TRYG(sgnn_permute(y3, perm, &yp)); /* [N, Co, S] */
  int D = x->shape[2] + 2 * pad[0], H = x->shape[3] + 2 * pad[1], W = x->shape[4] + 2 * pad[2];
  int oshape[5] = {N, Co, (D - k[0]) / stride[0] + 1, (H - k[1]) / stride[1] + 1, (W - k[2]) / stride[2] + 1};
  SGNN_TRYG(sgnn_reshape(yp, 5, oshape, &y5));
  if (bias) {
    int bshape[4] = {Co, 1, 1, 1};
    SGNN_TRYG(sgnn_reshape(bias, 4, bshape, &b4));
    SGNN_TRYG(sgnn_add(y5, b4, out));
  } else {
    *out = sgnn_tensor_ref(y5);
  }
done:
  sgnn_tensor_free(&cols);
  sgnn_tensor_free(&c2);
  sgnn_tensor_free(&y3);
  sgnn_tensor_free(&yp);
  sgnn_tensor_free(&wm);
  sgnn_tensor_free(&y);
  sgnn_tensor_free(&y5);
  sgnn_tensor_free(&b4);
  return rc;
}
