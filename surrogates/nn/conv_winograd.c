/* conv_winograd.c -- 3x3x3, stride-1 convolution by Winograd's minimal
 * filtering F(2x2x2, 3x3x3) (Lavin & Gray 2016), CPU backend.
 *
 * Each 2x2x2 output tile needs 4^3 = 64 multiplications per input/output
 * channel pair instead of 27*8 = 216: the channel sums become 64 independent
 * GEMMs  M[xi] (Co x T) = U[xi] (Co x C) x V[xi] (C x T)  over tiles T, with
 *   U = G g G^T   (weights, 3 -> 4 per axis),
 *   V = B^T d B   (4x4x4 input patches),
 *   y = A^T M A   (4 -> 2 per axis).
 * 1-d matrices (correlation, as CNNs use):
 *   B^T d = (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
 *   G g   = (g0, (g0 + g1 + g2)/2, (g0 - g1 + g2)/2, g2)
 *   A^T m = (m0 + m1 + m2, m1 - m2 - m3)
 * Tiles are processed in chunks small enough for V and M to stay in cache.
 * Used by conv3d's forward and its input gradient (a stride-1 conv of the
 * output gradient with flipped, transposed weights and padding 2 - p). */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

#define WL 16 /* tiles per vectorised transform: one AVX-512 register of f32 */

/* apply a 1-d transform along one axis of a 4x4x4 (or 4x4x3, ...) block */
#define WG_DEFINE(T, SUF)                                                                               \
  static void wg_weight_##SUF(const T *g, T *u) /* g[3][3][3] -> u[4][4][4] */                         \
  {                                                                                                   \
    T a[4][3][3], b[4][4][3];                                                                         \
    for (int j = 0; j < 3; j++)                                                                       \
      for (int k = 0; k < 3; k++) {                                                                   \
        T g0 = g[(0 * 3 + j) * 3 + k], g1 = g[(1 * 3 + j) * 3 + k], g2 = g[(2 * 3 + j) * 3 + k];      \
        a[0][j][k] = g0, a[1][j][k] = (g0 + g1 + g2) / 2, a[2][j][k] = (g0 - g1 + g2) / 2, a[3][j][k] = g2; \
      }                                                                                               \
    for (int i = 0; i < 4; i++)                                                                       \
      for (int k = 0; k < 3; k++) {                                                                   \
        T g0 = a[i][0][k], g1 = a[i][1][k], g2 = a[i][2][k];                                          \
        b[i][0][k] = g0, b[i][1][k] = (g0 + g1 + g2) / 2, b[i][2][k] = (g0 - g1 + g2) / 2, b[i][3][k] = g2; \
      }                                                                                               \
    for (int i = 0; i < 4; i++)                                                                       \
      for (int j = 0; j < 4; j++) {                                                                   \
        T g0 = b[i][j][0], g1 = b[i][j][1], g2 = b[i][j][2];                                          \
        T *o = u + (i * 4 + j) * 4;                                                                   \
        o[0] = g0, o[1] = (g0 + g1 + g2) / 2, o[2] = (g0 - g1 + g2) / 2, o[3] = g2;                   \
      }                                                                                               \
  }                                                                                                   \
  /* transforms vectorised across WL tiles ("lanes"): rows of WL values */   \
  static inline void bt_##SUF(T *r0, T *r1, T *r2, T *r3)                                            \
  {                                                                                                   \
    for (int l = 0; l < WL; l++) {                                                                    \
      T d0 = r0[l], d1 = r1[l], d2 = r2[l], d3 = r3[l];                                               \
      r0[l] = d0 - d2, r1[l] = d1 + d2, r2[l] = d2 - d1, r3[l] = d1 - d3;                             \
    }                                                                                                 \
  }                                                                                                   \
  static inline void at_##SUF(const T *r0, const T *r1, const T *r2, const T *r3, T *o0, T *o1)       \
  {                                                                                                   \
    for (int l = 0; l < WL; l++) {                                                                    \
      o0[l] = r0[l] + r1[l] + r2[l];                                                                  \
      o1[l] = r1[l] - r2[l] - r3[l];                                                                  \
    }                                                                                                 \
  }                                                                                                   \
  static void wg_input_##SUF(T d[64][WL]) /* B^T along k, j, i */                                     \
  {                                                                                                   \
    for (int b = 0; b < 64; b += 4) bt_##SUF(d[b], d[b + 1], d[b + 2], d[b + 3]);                      \
    for (int i = 0; i < 4; i++)                                                                       \
      for (int k = 0; k < 4; k++) {                                                                   \
        int b = i * 16 + k;                                                                           \
        bt_##SUF(d[b], d[b + 4], d[b + 8], d[b + 12]);                                                \
      }                                                                                               \
    for (int b = 0; b < 16; b++) bt_##SUF(d[b], d[b + 16], d[b + 32], d[b + 48]);                      \
  }                                                                                                   \
  static void wg_output_##SUF(T m[64][WL], T o[8][WL]) /* A^T along k, j, i */                        \
  {                                                                                                   \
    T a[32][WL], b[16][WL];                                                                           \
    for (int ij = 0; ij < 16; ij++)                                                                   \
      at_##SUF(m[4 * ij], m[4 * ij + 1], m[4 * ij + 2], m[4 * ij + 3], a[2 * ij], a[2 * ij + 1]);     \
    /* a[(i*4+j)*2+k] -> b[(i*2+j)*2+k] */                                                            \
    for (int i = 0; i < 4; i++)                                                                       \
      for (int k = 0; k < 2; k++)                                                                     \
        at_##SUF(a[(i * 4 + 0) * 2 + k], a[(i * 4 + 1) * 2 + k], a[(i * 4 + 2) * 2 + k], a[(i * 4 + 3) * 2 + k], \
                 b[(i * 2 + 0) * 2 + k], b[(i * 2 + 1) * 2 + k]);                                      \
    /* b[(i*2+j)*2+k] -> o[(i*2+j)*2+k] with i in {0,1} */                                            \
    for (int jk = 0; jk < 4; jk++) at_##SUF(b[jk], b[4 + jk], b[8 + jk], b[12 + jk], o[jk], o[4 + jk]); \
  }                                                                                                   \
  static int wg_conv_##SUF(const SgnnWinogradArgs *A)                                                 \
  {                                                                                                   \
    const int N = A->N, C = A->C, D = A->D, H = A->H, W = A->W, Co = A->Co;                           \
    const int Do = D + 2 * A->pad[0] - 2, Ho = H + 2 * A->pad[1] - 2, Wo = W + 2 * A->pad[2] - 2;       \
    const int tD = (Do + 1) / 2, tH = (Ho + 1) / 2, tW = (Wo + 1) / 2;                                \
    const long T_all = (long)N * tD * tH * tW, Sx = (long)D * H * W, Sy = (long)Do * Ho * Wo;          \
    const T *x = A->x, *w = A->w, *bias = A->bias;                                                    \
    T *y = A->y;                                                                                      \
    long Tc = (long)((A->chunk_bytes ? A->chunk_bytes : (2u << 20)) / (64 * (size_t)(C + Co) * sizeof(T))); \
    Tc = (Tc + WL - 1) / WL * WL;                                                                     \
    if (Tc < WL) Tc = WL;                                                                             \
    if (Tc > T_all) Tc = T_all;                                                                       \
    /* zero-padded copy of x covering every tile's 4x4x4 patch: the gathers      \
     * below then need no bounds checks (with D = 4 and pad 1 no tile of the   \
     * benchmark is interior, and the checked path cost ~30% of the step) */   \
    const int Dp = 2 * tD + 2, Hp = 2 * tH + 2, Wp = 2 * tW + 2;                                      \
    const long Sp = (long)Dp * Hp * Wp;                                                               \
    T *U = malloc(sizeof(T) * 64 * (size_t)Co * C), *V = malloc(sizeof(T) * 64 * (size_t)C * Tc);     \
    T *M = malloc(sizeof(T) * 64 * (size_t)Co * Tc), u[64];                                           \
    T *xp = calloc((size_t)N * C * Sp, sizeof(T));                                                    \
    /* outputs land in whole 2x2x2 tiles of a padded buffer (no bounds checks),   \
     * then the valid region is copied out with the bias */                    \
    const int Dq = 2 * tD, Hq = 2 * tH, Wq = 2 * tW;                                                  \
    const long Sq = (long)Dq * Hq * Wq;                                                               \
    T *yp = malloc(sizeof(T) * (size_t)N * Co * Sq);                                                  \
    int rc = 0;                                                                                       \
    if (!U || !V || !M || !xp || !yp) {                                                               \
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d (winograd): out of memory");                            \
      goto done;                                                                                      \
    }                                                                                                 \
    for (long nc = 0; nc < (long)N * C; nc++)                                                         \
      for (int zz = 0; zz < Dp; zz++) {                                                               \
        int sz = zz - A->pad[0];                                                                      \
        if (sz < 0 || sz >= D) continue;                                                              \
        for (int yy = 0; yy < Hp; yy++) {                                                             \
          int sy = yy - A->pad[1];                                                                    \
          if (sy < 0 || sy >= H) continue;                                                            \
          const T *src = x + nc * Sx + ((long)sz * H + sy) * W;                                       \
          T *dst = xp + nc * Sp + ((long)zz * Hp + yy) * Wp;                                          \
          for (int xx = 0; xx < Wp; xx++) {                                                           \
            int sx = xx - A->pad[2];                                                                  \
            dst[xx] = sx >= 0 && sx < W ? src[sx] : (T)0;                                             \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
    for (int co = 0; co < Co; co++)                                                                   \
      for (int c = 0; c < C; c++) {                                                                   \
        wg_weight_##SUF(w + ((long)co * C + c) * 27, u);                                              \
        for (int xi = 0; xi < 64; xi++) U[((long)xi * Co + co) * C + c] = u[xi];                      \
      }                                                                                               \
    for (long t0 = 0; t0 < T_all && !rc; t0 += Tc) {                                                  \
      long nt = T_all - t0 < Tc ? T_all - t0 : Tc;                                                    \
      for (long tb = 0; tb < nt; tb += WL) { /* V[xi][c][t], WL tiles at a time */                    \
        int nl = nt - tb < WL ? (int)(nt - tb) : WL;                                                  \
        long base[WL]; /* patch origin of each lane's tile in xp, channel 0 */                        \
        for (int l = 0; l < WL; l++) {                                                                \
          long tt = t0 + tb + (l < nl ? l : 0);                                                       \
          int tw = (int)(tt % tW), th = (int)(tt / tW % tH), td = (int)(tt / ((long)tW * tH) % tD);    \
          long n = tt / ((long)tW * tH * tD);                                                         \
          base[l] = n * C * Sp + ((long)(2 * td) * Hp + 2 * th) * Wp + 2 * tw;                        \
        }                                                                                             \
        for (int c = 0; c < C; c++) {                                                                 \
          T d[64][WL];                                                                                \
          const T *xc = xp + (long)c * Sp;                                                            \
          for (int i = 0; i < 4; i++) /* branch-free gathers (lanes past nl repeat tile 0) */         \
            for (int j = 0; j < 4; j++)                                                               \
              for (int k = 0; k < 4; k++) {                                                           \
                long off = ((long)i * Hp + j) * Wp + k;                                               \
                T *dq = d[(i * 4 + j) * 4 + k];                                                       \
                for (int l = 0; l < WL; l++) dq[l] = xc[base[l] + off];                               \
              }                                                                                       \
          wg_input_##SUF(d);                                                                          \
          for (int xi = 0; xi < 64; xi++) { /* fixed-length copies inline (memcpy calls cost 12%) */    \
            T *dst = V + ((long)xi * C + c) * nt + tb;                                                \
            if (nl == WL)                                                                             \
              for (int l = 0; l < WL; l++) dst[l] = d[xi][l];                                         \
            else                                                                                      \
              for (int l = 0; l < nl; l++) dst[l] = d[xi][l];                                         \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
      rc = sgnn_cpu_gemm(A->dt, 0, 0, Co, (int)nt, C, 1.0, U, (long)Co * C, V, (long)C * nt, 0.0, M,  \
                         (long)Co * nt, 64);                                                          \
      if (rc) break;                                                                                  \
      for (long tb = 0; tb < nt; tb += WL) { /* y = A^T M A, WL tiles at a time */                    \
        int nl = nt - tb < WL ? (int)(nt - tb) : WL;                                                  \
        long ob[WL]; /* tile origin of each lane in yp, output channel 0 */                           \
        for (int l = 0; l < nl; l++) {                                                                \
          long tt = t0 + tb + l;                                                                      \
          int tw = (int)(tt % tW), th = (int)(tt / tW % tH), td = (int)(tt / ((long)tW * tH) % tD);    \
          long n = tt / ((long)tW * tH * tD);                                                         \
          ob[l] = n * Co * Sq + ((long)(2 * td) * Hq + 2 * th) * Wq + 2 * tw;                         \
        }                                                                                             \
        for (int co = 0; co < Co; co++) {                                                             \
          T m[64][WL], o[8][WL];                                                                      \
          for (int xi = 0; xi < 64; xi++) {                                                           \
            const T *src = M + ((long)xi * Co + co) * nt + tb;                                        \
            if (nl == WL)                                                                             \
              for (int l = 0; l < WL; l++) m[xi][l] = src[l];                                         \
            else                                                                                      \
              for (int l = 0; l < WL; l++) m[xi][l] = l < nl ? src[l] : (T)0;                         \
          }                                                                                           \
          wg_output_##SUF(m, o);                                                                      \
          T *yc = yp + (long)co * Sq;                                                                 \
          for (int q = 0; q < 8; q++) {                                                               \
            long off = ((long)(q >> 2) * Hq + (q >> 1 & 1)) * Wq + (q & 1);                           \
            for (int l = 0; l < nl; l++) yc[ob[l] + off] = o[q][l];                                   \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
    for (long nc = 0; nc < (long)N * Co && !rc; nc++) { /* valid region + bias */                 \
      T bv = bias ? bias[nc % Co] : (T)0;                                                             \
      for (int oz = 0; oz < Do; oz++)                                                                 \
        for (int oy = 0; oy < Ho; oy++) {                                                             \
          const T *src = yp + nc * Sq + ((long)oz * Hq + oy) * Wq;                                    \
          T *dst = y + nc * Sy + ((long)oz * Ho + oy) * Wo;                                           \
          for (int ox = 0; ox < Wo; ox++) dst[ox] = src[ox] + bv;                                     \
        }                                                                                             \
    }                                                                                                 \
  done:                                                                                               \
    free(yp);                                                                                         \
    free(U);                                                                                          \
    free(V);                                                                                          \
    free(M);                                                                                          \
    free(xp);                                                                                         \
    return rc;                                                                                        \
  }

WG_DEFINE(float, f)
WG_DEFINE(double, d)

int sgnn_winograd_conv3(const SgnnWinogradArgs *A)
{
  return A->dt == SGNN_F64 ? wg_conv_d(A) : wg_conv_f(A);
}
