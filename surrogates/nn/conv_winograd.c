/* conv_winograd.c -- 3x3x3, stride-1 convolution and its weight gradient by
 * Winograd's minimal filtering F(2x2x2, 3x3x3) (Lavin & Gray, "Fast
 * Algorithms for Convolutional Neural Networks", CVPR 2016), CPU backend:
 * the default for 3^3 stride-1 convs with >= 16 input and output channels
 * (ops_conv.c chooses; the input gradient is a forward conv of the output
 * gradient with flipped, transposed weights and padding 2 - p).
 *
 * Forward: each 2x2x2 output tile costs 4^3 = 64 multiply-adds per
 * input/output channel pair instead of 8 * 27 = 216:
 *   U[xi] = G w G^T     weights, 3 -> 4 per axis            [64][Cq][Coq]
 *   V[xi] = B^T d B     the tile's 4x4x4 input patch        [64][tile][Cq]
 *   M[xi] = V[xi] U[xi] 64 independent channel contractions
 *   y     = A^T M A     4 -> 2 per axis
 * with the 1-d matrices (correlation, as CNNs use)
 *   B^T d = (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
 *   G g   = (g0, (g0 + g1 + g2)/2, (g0 - g1 + g2)/2, g2)
 *   A^T m = (m0 + m1 + m2, m1 - m2 - m3).
 * Weight gradient: y = A^T (G w . B^T d) is linear in w, so per tile
 * dL/dw = G^T (B^T d . A dy): the same input transform, the output gradient
 * expanded by A (dy0, dy0 + dy1, dy0 - dy1, -dy1) per axis, products summed
 * over every tile of the batch (the 64 contractions now run over tiles), and
 * G^T m = (m0 + (m1 + m2)/2, (m1 - m2)/2, (m1 + m2)/2 + m3) per axis once at
 * the end. The bias gradient is the sum of dy, which is element (1,1,1) of
 * the expanded tile.
 *
 * Layout (after the blocked N-d Winograd of Jia, Zlateski, Durand & Li,
 * "Optimizing N-dimensional, Winograd-based convolution for manycore CPUs",
 * PPoPP 2018): channels are the vector lanes. Inputs are copied once into
 * zero-padded channels-last buffers (VL x VL blocks transposed in
 * registers), so a tile's patch is aligned vector loads and the transforms
 * are vector adds; the contractions are register-blocked kernels over blocks
 * of tiles whose transformed data stay in L2; the forward output returns to
 * NCDHW through one more transposing pass. The weight gradient's tiles are
 * split into a fixed number of groups, each with its own partial sum, added
 * in group order: the result does not depend on the thread count. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

enum {
  WG_TB = 12,    /* forward: tiles per block = accumulator rows of the register tile */
  WG_TBW = 32,   /* weight gradient: tiles per block (the contraction length per accumulator load) */
  WG_GROUPS = 8, /* weight gradient: tile groups with their own partial sums (fixed: results are thread-independent) */
};

/* geometry shared by the passes: outputs Do x Ho x Wo in tD x tH x tW tiles of 2x2x2 */
typedef struct {
  int N, C, Cq, D, H, W, Co, Coq, pad[3], Do, Ho, Wo, tD, tH, tW, Dp, Hp, Wp, Dq, Hq, Wq;
  long T_all; /* tiles in the batch */
} WgGeom;

static void wg_geom(const SgnnWinogradArgs *A, int VL, WgGeom *g)
{
  *g = (WgGeom){.N = A->N, .C = A->C, .D = A->D, .H = A->H, .W = A->W, .Co = A->Co,
                .pad = {A->pad[0], A->pad[1], A->pad[2]}};
  g->Cq = (g->C + VL - 1) / VL * VL;
  g->Coq = (g->Co + VL - 1) / VL * VL;
  g->Do = g->D + 2 * g->pad[0] - 2;
  g->Ho = g->H + 2 * g->pad[1] - 2;
  g->Wo = g->W + 2 * g->pad[2] - 2;
  g->tD = (g->Do + 1) / 2;
  g->tH = (g->Ho + 1) / 2;
  g->tW = (g->Wo + 1) / 2;
  g->Dp = 2 * g->tD + 2, g->Hp = 2 * g->tH + 2, g->Wp = 2 * g->tW + 2; /* padded input covering every patch */
  g->Dq = 2 * g->tD, g->Hq = 2 * g->tH, g->Wq = 2 * g->tW;             /* whole output tiles */
  g->T_all = (long)g->N * g->tD * g->tH * g->tW;
}

/* per-xi stride of the transformed blocks (elements): n rounded up to an odd number of 64-byte lines, so
 * the 64 rows a transform writes or reads do not share L1 sets (at a multiple of 4 KiB apart they did:
 * the weight gradient's 32-tile blocks ran 30% slower) */
static long wg_stride(long n, int VL) { return ((n + VL - 1) / VL | 1) * VL; }

/* tile t = ((n tD + td) tH + th) tW + tw: sample and origin (2td, 2th, 2tw) */
static void wg_tile(const WgGeom *g, long t, int *n, int *z, int *y, int *x)
{
  *x = 2 * (int)(t % g->tW), *y = 2 * (int)(t / g->tW % g->tH), *z = 2 * (int)(t / ((long)g->tW * g->tH) % g->tD);
  *n = (int)(t / ((long)g->tW * g->tH * g->tD));
}

#define WG_DEFINE(T, IT, SUF)                                                                                         \
  typedef T V_##SUF __attribute__((vector_size(64)));                                                                 \
  typedef T U_##SUF __attribute__((vector_size(64), aligned(sizeof(T)), may_alias));                                  \
  enum { VL_##SUF = 64 / sizeof(T) };                                                                                 \
  /* r[i][l] <- r[l][i] in registers: log2(VL) butterfly stages, stage h swapping the off-diagonal h x h              \
   * blocks of row pairs (i, i + h) with two-input shuffles */                                                        \
  static inline void vtr_##SUF(V_##SUF *r)                                                                            \
  {                                                                                                                   \
    enum { VL = VL_##SUF, LG = VL == 16 ? 4 : 3 };                                                                    \
    typedef IT M __attribute__((vector_size(64)));                                                                    \
    _Pragma("GCC unroll 4") for (int st = 0; st < LG; st++) { /* fully unrolled: the masks are constants */           \
      const int h = VL >> (st + 1);                                                                                   \
      M lo, hi;                                                                                                       \
      _Pragma("GCC unroll 16") for (int l = 0; l < VL; l++) {                                                         \
        lo[l] = (l & h) ? VL + l - h : l;                                                                             \
        hi[l] = (l & h) ? VL + l : l + h;                                                                             \
      }                                                                                                               \
      _Pragma("GCC unroll 16") for (int i = 0; i < VL; i++)                                                           \
        if (!(i & h)) {                                                                                               \
          V_##SUF a = r[i], b = r[i + h];                                                                             \
          r[i] = __builtin_shuffle(a, b, lo);                                                                         \
          r[i + h] = __builtin_shuffle(a, b, hi);                                                                     \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  /* u[4][4][4] = G g G^T for g[3][3][3], lanes = output channels */                                                  \
  static void wg_weight_##SUF(const V_##SUF *g, V_##SUF *u)                                                           \
  {                                                                                                                   \
    V_##SUF a[4][3][3], b[4][4][3];                                                                                   \
    for (int j = 0; j < 3; j++)                                                                                       \
      for (int k = 0; k < 3; k++) {                                                                                   \
        V_##SUF g0 = g[(0 * 3 + j) * 3 + k], g1 = g[(1 * 3 + j) * 3 + k], g2 = g[(2 * 3 + j) * 3 + k];                \
        a[0][j][k] = g0, a[1][j][k] = (g0 + g1 + g2) * (T)0.5, a[2][j][k] = (g0 - g1 + g2) * (T)0.5, a[3][j][k] = g2; \
      }                                                                                                               \
    for (int i = 0; i < 4; i++)                                                                                       \
      for (int k = 0; k < 3; k++) {                                                                                   \
        V_##SUF g0 = a[i][0][k], g1 = a[i][1][k], g2 = a[i][2][k];                                                    \
        b[i][0][k] = g0, b[i][1][k] = (g0 + g1 + g2) * (T)0.5, b[i][2][k] = (g0 - g1 + g2) * (T)0.5, b[i][3][k] = g2; \
      }                                                                                                               \
    for (int i = 0; i < 4; i++)                                                                                       \
      for (int j = 0; j < 4; j++) {                                                                                   \
        V_##SUF g0 = b[i][j][0], g1 = b[i][j][1], g2 = b[i][j][2], *o = u + (i * 4 + j) * 4;                          \
        o[0] = g0, o[1] = (g0 + g1 + g2) * (T)0.5, o[2] = (g0 - g1 + g2) * (T)0.5, o[3] = g2;                         \
      }                                                                                                               \
  }                                                                                                                   \
  /* B^T on 4 vectors at stride s of d, in place */                                                                   \
  static inline void bt_##SUF(V_##SUF *d, int s)                                                                      \
  {                                                                                                                   \
    V_##SUF d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];                                                       \
    d[0] = d0 - d2, d[s] = d1 + d2, d[2 * s] = d2 - d1, d[3 * s] = d1 - d3;                                           \
  }                                                                                                                   \
  /* V[xi * sx + c0 .. + VL) for the tile whose patch starts at xq[org] (channels-last, Cq per position) */           \
  static inline void wg_input_##SUF(const WgGeom *g, const T *xq, long org, int c0, T *V, long sx)                    \
  {                                                                                                                   \
    V_##SUF d[64];                                                                                                    \
    for (int i = 0; i < 4; i++)                                                                                       \
      for (int jj = 0; jj < 4; jj++)                                                                                  \
        for (int k = 0; k < 4; k++) {                                                                                 \
          const long p = org + ((long)i * g->Hp + jj) * g->Wp + k;                                                    \
          d[(i * 4 + jj) * 4 + k] = *(const V_##SUF *)(xq + p * g->Cq + c0);                                          \
        }                                                                                                             \
    for (int r = 0; r < 64; r += 4) bt_##SUF(d + r, 1);                                                               \
    for (int i = 0; i < 4; i++)                                                                                       \
      for (int k = 0; k < 4; k++) bt_##SUF(d + i * 16 + k, 4);                                                        \
    for (int r = 0; r < 16; r++) bt_##SUF(d + r, 16);                                                                 \
    for (int xi = 0; xi < 64; xi++) *(V_##SUF *)(V + xi * sx + c0) = d[xi];                                           \
  }                                                                                                                   \
  /* dst [N][Dp][Hp][Wp][Cq] = src [N][C][D][H][W] shifted by pad, zero elsewhere (channels past C too);              \
   * VL channels x VL positions transposed in registers; items: (n, zz) planes */                                     \
  typedef struct {                                                                                                    \
    const T *src;                                                                                                     \
    T *dst;                                                                                                           \
    int C, Cq, D, H, W, Dp, Hp, Wp, pad[3];                                                                           \
  } Pack_##SUF;                                                                                                       \
  static void wg_pack_##SUF(void *ctx, int i0, int i1)                                                                \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const Pack_##SUF *P = ctx;                                                                                        \
    const int C = P->C, Cq = P->Cq, D = P->D, H = P->H, W = P->W, Hp = P->Hp, Wp = P->Wp, p2 = P->pad[2];             \
    const long S = (long)D * H * W;                                                                                   \
    for (int i = i0; i < i1; i++) {                                                                                   \
      const int n = i / P->Dp, z = i % P->Dp - P->pad[0];                                                             \
      T *plane = P->dst + (long)i * Hp * Wp * Cq;                                                                     \
      for (int yy = 0; yy < Hp; yy++) {                                                                               \
        T *row = plane + (long)yy * Wp * Cq;                                                                          \
        const int y = yy - P->pad[1];                                                                                 \
        if (z < 0 || z >= D || y < 0 || y >= H) {                                                                     \
          memset(row, 0, sizeof(T) * (size_t)Wp * Cq);                                                                \
          continue;                                                                                                   \
        }                                                                                                             \
        const T *src = P->src + (long)n * C * S + ((long)z * H + y) * W;                                              \
        const int nw = W < Wp - p2 ? W : Wp - p2; /* source positions that land in the row */                         \
        memset(row, 0, sizeof(T) * (size_t)p2 * Cq);                                                                  \
        memset(row + (long)(p2 + nw) * Cq, 0, sizeof(T) * (size_t)(Wp - p2 - nw) * Cq);                               \
        for (int c0 = 0; c0 < Cq; c0 += VL)                                                                           \
          for (int x0 = 0; x0 < nw; x0 += VL) {                                                                       \
            V_##SUF r[VL];                                                                                            \
            const int nx = nw - x0 < VL ? nw - x0 : VL;                                                               \
            for (int c = 0; c < VL; c++) {                                                                            \
              const T *s = src + (long)(c0 + c) * S + x0;                                                             \
              if (c0 + c >= C) r[c] = (V_##SUF){};                                                                    \
              else if (nx == VL) r[c] = *(const U_##SUF *)s;                                                          \
              else                                                                                                    \
                for (int l = 0; l < VL; l++) r[c][l] = l < nx ? s[l] : (T)0;                                          \
            }                                                                                                         \
            vtr_##SUF(r);                                                                                             \
            for (int l = 0; l < nx; l++) *(V_##SUF *)(row + (long)(p2 + x0 + l) * Cq + c0) = r[l];                    \
          }                                                                                                           \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  static void wg_pack_run_##SUF(const T *src, T *dst, int N, int C, int Cq, int D, int H, int W, int Dp, int Hp,      \
                                int Wp, const int pad[3])                                                             \
  {                                                                                                                   \
    Pack_##SUF P = {.src = src, .dst = dst, .C = C, .Cq = Cq, .D = D, .H = H, .W = W, .Dp = Dp, .Hp = Hp, .Wp = Wp,   \
                    .pad = {pad[0], pad[1], pad[2]}};                                                                 \
    sgnn_parallel_for(N * Dp, wg_pack_##SUF, &P);                                                                     \
  }                                                                                                                   \
  /* M[xi][t][cb .. cb + CV*VL) = sum_c V[xi][t][c] U[xi][c][..]: 12 tiles x CV vectors of accumulators */            \
  WG_GEMM(T, SUF, 2)                                                                                                  \
  WG_GEMM(T, SUF, 1)                                                                                                  \
  typedef struct {                                                                                                    \
    WgGeom g;                                                                                                         \
    const T *U, *bias, *xq;                                                                                           \
    T *yq, *y;                                                                                                        \
    int oom; /* set by a worker whose scratch allocation failed */                                                    \
  } Fw_##SUF;                                                                                                         \
  /* forward, items: blocks of WG_TB tiles; V and M of a block in scratch */                                          \
  static void wg_tiles_##SUF(void *ctx, int b0, int b1)                                                               \
  {                                                                                                                   \
    enum { VL = VL_##SUF, TB = WG_TB };                                                                               \
    Fw_##SUF *P = ctx;                                                                                                \
    const WgGeom *g = &P->g;                                                                                          \
    const int Cq = g->Cq, Coq = g->Coq;                                                                               \
    const long sV = wg_stride(TB * Cq, VL), sM = wg_stride(TB * Coq, VL);                                             \
    const size_t bv = sizeof(T) * 64 * sV, bm = sizeof(T) * 64 * sM;                                                  \
    T *Vb = sgnn_scratch(bv, 0), *Mb = sgnn_scratch(bm, 0);                                                           \
    if (!Vb || !Mb) {                                                                                                 \
      sgnn_scratch_free(Vb, bv), sgnn_scratch_free(Mb, bm);                                                           \
      P->oom = 1; /* checked by the caller */                                                                         \
      return;                                                                                                         \
    }                                                                                                                 \
    for (int b = b0; b < b1; b++) {                                                                                   \
      const long t0 = (long)b * TB;                                                                                   \
      const int nt = g->T_all - t0 < TB ? (int)(g->T_all - t0) : TB;                                                  \
      int tn[TB], tz[TB], ty[TB], tx[TB];                                                                             \
      for (int j = 0; j < TB; j++) /* lanes past nt repeat the last tile and are not stored */                        \
        wg_tile(g, t0 + (j < nt ? j : nt - 1), tn + j, tz + j, ty + j, tx + j);                                       \
      for (int j = 0; j < TB; j++)                                                                                    \
        for (int c0 = 0; c0 < Cq; c0 += VL) {                                                                         \
          const long org = (((long)tn[j] * g->Dp + tz[j]) * g->Hp + ty[j]) * g->Wp + tx[j];                           \
          wg_input_##SUF(g, P->xq, org, c0, Vb + (long)j * Cq, sV);                                                   \
        }                                                                                                             \
      int cb = 0;                                                                                                     \
      for (; cb + 2 * VL <= Coq; cb += 2 * VL) wg_gemm_##SUF##_2(Vb, sV, P->U, Mb, sM, Cq, Coq, cb);                  \
      if (cb < Coq) wg_gemm_##SUF##_1(Vb, sV, P->U, Mb, sM, Cq, Coq, cb);                                             \
      for (int j = 0; j < nt; j++) /* output transform (+ bias) into yq [N][Dq][Hq][Wq][Coq] */                       \
        for (int c0 = 0; c0 < Coq; c0 += VL) {                                                                        \
          V_##SUF m[64], a[32], e[16], bv0 = {};                                                                      \
          if (P->bias)                                                                                                \
            for (int l = 0; l < VL && c0 + l < g->Co; l++) bv0[l] = P->bias[c0 + l];                                  \
          for (int xi = 0; xi < 64; xi++) m[xi] = *(const V_##SUF *)(Mb + xi * sM + (long)j * Coq + c0);              \
          for (int r = 0; r < 16; r++) { /* along x: m[r*4 + k] -> a[r*2 + k'] */                                     \
            a[2 * r] = m[4 * r] + m[4 * r + 1] + m[4 * r + 2];                                                        \
            a[2 * r + 1] = m[4 * r + 1] - m[4 * r + 2] - m[4 * r + 3];                                                \
          }                                                                                                           \
          for (int i = 0; i < 4; i++) /* along y: a[(i*4 + jj)*2 + k] -> e[(i*2 + j')*2 + k] */                       \
            for (int k = 0; k < 2; k++) {                                                                             \
              const V_##SUF *s = a + i * 8 + k;                                                                       \
              e[(i * 2) * 2 + k] = s[0] + s[2] + s[4];                                                                \
              e[(i * 2 + 1) * 2 + k] = s[2] - s[4] - s[6];                                                            \
            }                                                                                                         \
          for (int q = 0; q < 4; q++) { /* along z: e[i*4 + q] -> outputs (z', q) */                                  \
            V_##SUF o0 = e[q] + e[4 + q] + e[8 + q] + bv0, o1 = e[4 + q] - e[8 + q] - e[12 + q] + bv0;                \
            long p0 = (((long)tn[j] * g->Dq + tz[j]) * g->Hq + ty[j] + (q >> 1)) * g->Wq + tx[j] + (q & 1);           \
            *(V_##SUF *)(P->yq + p0 * Coq + c0) = o0;                                                                 \
            *(V_##SUF *)(P->yq + (p0 + (long)g->Hq * g->Wq) * Coq + c0) = o1;                                         \
          }                                                                                                           \
        }                                                                                                             \
    }                                                                                                                 \
    sgnn_scratch_free(Vb, bv), sgnn_scratch_free(Mb, bm);                                                             \
  }                                                                                                                   \
  /* y [n][co][z][y][:] = yq [n][z][y][:][co] (valid region), VL x VL blocks transposed in registers;                 \
   * items: (n, z, y) output rows */                                                                                  \
  static void wg_unpack_##SUF(void *ctx, int i0, int i1)                                                              \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const Fw_##SUF *P = ctx;                                                                                          \
    const WgGeom *g = &P->g;                                                                                          \
    const int Co = g->Co, Coq = g->Coq, Wo = g->Wo, Wq = g->Wq;                                                       \
    const long S = (long)g->Do * g->Ho * Wo;                                                                          \
    for (int i = i0; i < i1; i++) {                                                                                   \
      const int n = i / (g->Do * g->Ho), z = i / g->Ho % g->Do, y = i % g->Ho;                                        \
      const T *src = P->yq + (((long)n * g->Dq + z) * g->Hq + y) * Wq * Coq;                                          \
      T *dst = P->y + (long)n * Co * S + ((long)z * g->Ho + y) * Wo;                                                  \
      for (int x0 = 0; x0 < Wo; x0 += VL)                                                                             \
        for (int c0 = 0; c0 < Co; c0 += VL) {                                                                         \
          V_##SUF r[VL];                                                                                              \
          for (int l = 0; l < VL; l++)                                                                                \
            r[l] = x0 + l < Wq ? *(const V_##SUF *)(src + (long)(x0 + l) * Coq + c0) : (V_##SUF){};                   \
          vtr_##SUF(r);                                                                                               \
          const int nx = Wo - x0 < VL ? Wo - x0 : VL;                                                                 \
          for (int c = 0; c < VL && c0 + c < Co; c++) {                                                               \
            T *d = dst + (long)(c0 + c) * S + x0;                                                                     \
            if (nx == VL) *(U_##SUF *)d = r[c];                                                                       \
            else                                                                                                      \
              for (int l = 0; l < nx; l++) d[l] = r[c][l];                                                            \
          }                                                                                                           \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  static int wg_conv_##SUF(const SgnnWinogradArgs *A)                                                                 \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    Fw_##SUF P = {.bias = A->bias, .y = A->y};                                                                        \
    wg_geom(A, VL, &P.g);                                                                                             \
    const WgGeom *g = &P.g;                                                                                           \
    const int Cq = g->Cq, Coq = g->Coq, C = g->C, Co = g->Co;                                                         \
    const size_t bu = sizeof(T) * 64 * Cq * Coq, bx = sizeof(T) * g->N * g->Dp * g->Hp * g->Wp * Cq;                  \
    const size_t by = sizeof(T) * g->N * g->Dq * g->Hq * g->Wq * Coq;                                                 \
    T *U = sgnn_scratch(bu, 0), *xq = sgnn_scratch(bx, 0), *yq = sgnn_scratch(by, 0);                                 \
    int rc = 0;                                                                                                       \
    if (!U || !xq || !yq) {                                                                                           \
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d (winograd): out of memory");                                             \
      goto done;                                                                                                      \
    }                                                                                                                 \
    P.U = U, P.xq = xq, P.yq = yq;                                                                                    \
    /* U[xi][c][co]: VL output channels at a time (zero past Co); rows of padded input channels zero */               \
    for (int xi = 0; xi < 64 && Cq > C; xi++)                                                                         \
      memset(U + ((long)xi * Cq + C) * Coq, 0, sizeof(T) * (size_t)(Cq - C) * Coq);                                   \
    for (int c = 0; c < C; c++) {                                                                                     \
      V_##SUF w[27], u[64];                                                                                           \
      for (int c0 = 0; c0 < Coq; c0 += VL) {                                                                          \
        for (int t = 0; t < 27; t++) {                                                                                \
          w[t] = (V_##SUF){};                                                                                         \
          for (int l = 0; l < VL && c0 + l < Co; l++) w[t][l] = ((const T *)A->w)[((long)(c0 + l) * C + c) * 27 + t]; \
        }                                                                                                             \
        wg_weight_##SUF(w, u);                                                                                        \
        for (int xi = 0; xi < 64; xi++) *(V_##SUF *)(U + ((long)xi * Cq + c) * Coq + c0) = u[xi];                     \
      }                                                                                                               \
    }                                                                                                                 \
    wg_pack_run_##SUF(A->x, xq, g->N, C, Cq, g->D, g->H, g->W, g->Dp, g->Hp, g->Wp, g->pad);                          \
    const long nblk = (g->T_all + WG_TB - 1) / WG_TB;                                                                 \
    const int nt = sgnn_num_threads();                                                                                \
    sgnn_parallel_for_grain((int)nblk, (int)((nblk + 2 * nt - 1) / (2 * nt)), wg_tiles_##SUF, &P);                    \
    if (P.oom) {                                                                                                      \
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d (winograd): out of memory");                                             \
      goto done;                                                                                                      \
    }                                                                                                                 \
    sgnn_parallel_for(g->N * g->Do * g->Ho, wg_unpack_##SUF, &P);                                                     \
  done:                                                                                                               \
    sgnn_scratch_free(U, bu), sgnn_scratch_free(xq, bx), sgnn_scratch_free(yq, by);                                   \
    return rc;                                                                                                        \
  }                                                                                                                   \
  /* weight gradient: M[xi][c][cb ..] += sum over the block's tiles of V[xi][t][c] Gh[xi][t][cb ..];                  \
   * 8 input channels x CV vectors of output channels, accumulators loaded and stored once per block */               \
  WG_DWGEMM(T, SUF, 2)                                                                                                \
  WG_DWGEMM(T, SUF, 1)                                                                                                \
  typedef struct {                                                                                                    \
    WgGeom g;                                                                                                         \
    const T *xq, *gq;                                                                                                 \
    T *Mp, *dbp; /* per group: partial M [64][Cq][Coq] and bias-gradient sums [Coq] */                                \
    int ngroups, oom;                                                                                                 \
  } Dw_##SUF;                                                                                                         \
  /* items: tile groups (fixed split of the tile blocks, independent of the thread count) */                          \
  static void wg_dw_tiles_##SUF(void *ctx, int g0, int g1)                                                            \
  {                                                                                                                   \
    enum { VL = VL_##SUF, TB = WG_TBW };                                                                              \
    Dw_##SUF *P = ctx;                                                                                                \
    const WgGeom *g = &P->g;                                                                                          \
    const int Cq = g->Cq, Coq = g->Coq;                                                                               \
    const long nblk = (g->T_all + TB - 1) / TB;                                                                       \
    const long sV = wg_stride(TB * Cq, VL), sG = wg_stride(TB * Coq, VL);                                             \
    const size_t bv = sizeof(T) * 64 * sV, bg = sizeof(T) * 64 * sG;                                                  \
    T *Vb = sgnn_scratch(bv, 0), *Gb = sgnn_scratch(bg, 0);                                                           \
    if (!Vb || !Gb) {                                                                                                 \
      sgnn_scratch_free(Vb, bv), sgnn_scratch_free(Gb, bg);                                                           \
      P->oom = 1;                                                                                                     \
      return;                                                                                                         \
    }                                                                                                                 \
    for (int grp = g0; grp < g1; grp++) {                                                                             \
      T *M = P->Mp + (long)grp * 64 * Cq * Coq, *db = P->dbp + (long)grp * Coq;                                       \
      memset(db, 0, sizeof(T) * (size_t)Coq);                                                                         \
      const long bfirst = nblk * grp / P->ngroups;                                                                    \
      for (long b = bfirst; b < nblk * (grp + 1) / P->ngroups; b++) {                                                 \
        const long t0 = b * TB;                                                                                       \
        const int nt = g->T_all - t0 < TB ? (int)(g->T_all - t0) : TB;                                                \
        for (int j = 0; j < TB; j++) {                                                                                \
          if (j >= nt) { /* past the last tile: zero rows contribute nothing */                                       \
            for (int xi = 0; xi < 64; xi++) {                                                                         \
              memset(Vb + xi * sV + (long)j * Cq, 0, sizeof(T) * (size_t)Cq);                                         \
              memset(Gb + xi * sG + (long)j * Coq, 0, sizeof(T) * (size_t)Coq);                                       \
            }                                                                                                         \
            continue;                                                                                                 \
          }                                                                                                           \
          int tn, tz, ty, tx;                                                                                         \
          wg_tile(g, t0 + j, &tn, &tz, &ty, &tx);                                                                     \
          for (int c0 = 0; c0 < Cq; c0 += VL)                                                                         \
            wg_input_##SUF(g, P->xq, (((long)tn * g->Dp + tz) * g->Hp + ty) * g->Wp + tx, c0, Vb + (long)j * Cq, sV); \
          for (int c0 = 0; c0 < Coq; c0 += VL) { /* Gh = A dy A^T over the tile's 2x2x2 output gradient */            \
            V_##SUF e[2][2][4], f[2][4][4];                                                                           \
            for (int a = 0; a < 2; a++)                                                                               \
              for (int bb = 0; bb < 2; bb++) {                                                                        \
                const long p = (((long)tn * g->Dq + tz + a) * g->Hq + ty + bb) * g->Wq + tx;                          \
                const V_##SUF g0 = *(const V_##SUF *)(P->gq + p * Coq + c0);                                          \
                const V_##SUF g1 = *(const V_##SUF *)(P->gq + (p + 1) * Coq + c0);                                    \
                e[a][bb][0] = g0, e[a][bb][1] = g0 + g1, e[a][bb][2] = g0 - g1, e[a][bb][3] = -g1;                    \
              }                                                                                                       \
            for (int a = 0; a < 2; a++)                                                                               \
              for (int k = 0; k < 4; k++) {                                                                           \
                V_##SUF g0 = e[a][0][k], g1 = e[a][1][k];                                                             \
                f[a][0][k] = g0, f[a][1][k] = g0 + g1, f[a][2][k] = g0 - g1, f[a][3][k] = -g1;                        \
              }                                                                                                       \
            for (int jj = 0; jj < 4; jj++)                                                                            \
              for (int k = 0; k < 4; k++) {                                                                           \
                V_##SUF g0 = f[0][jj][k], g1 = f[1][jj][k], h[4] = {g0, g0 + g1, g0 - g1, -g1};                       \
                for (int i = 0; i < 4; i++)                                                                           \
                  *(V_##SUF *)(Gb + ((i * 4 + jj) * 4 + k) * sG + (long)j * Coq + c0) = h[i];                         \
              }                                                                                                       \
            *(V_##SUF *)(db + c0) += f[0][1][1] + f[1][1][1]; /* element (1,1,1): the tile's sum of dy */             \
          }                                                                                                           \
        }                                                                                                             \
        int cb = 0;                                                                                                   \
        for (; cb + 2 * VL <= Coq; cb += 2 * VL) wg_dwgemm_##SUF##_2(Vb, sV, Gb, sG, M, Cq, Coq, cb, b == bfirst);    \
        if (cb < Coq) wg_dwgemm_##SUF##_1(Vb, sV, Gb, sG, M, Cq, Coq, cb, b == bfirst);                               \
      }                                                                                                               \
    }                                                                                                                 \
    sgnn_scratch_free(Vb, bv), sgnn_scratch_free(Gb, bg);                                                             \
  }                                                                                                                   \
  static int wg_dw_##SUF(const SgnnWinogradArgs *A)                                                                   \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    Dw_##SUF P = {.oom = 0};                                                                                          \
    wg_geom(A, VL, &P.g);                                                                                             \
    const WgGeom *g = &P.g;                                                                                           \
    const int Cq = g->Cq, Coq = g->Coq, C = g->C, Co = g->Co;                                                         \
    const long nblk = (g->T_all + WG_TBW - 1) / WG_TBW;                                                               \
    /* fixed by the sizes alone; partial sums capped at 64 MiB in all (one group at least) */                         \
    const long per = (long)sizeof(T) * 64 * Cq * Coq, fit = ((long)64 << 20) / per;                                   \
    P.ngroups = (int)(nblk < WG_GROUPS ? nblk : WG_GROUPS);                                                           \
    if (fit < P.ngroups) P.ngroups = fit < 1 ? 1 : (int)fit;                                                          \
    const size_t bx = sizeof(T) * g->N * g->Dp * g->Hp * g->Wp * Cq;                                                  \
    const size_t bgq = sizeof(T) * g->N * g->Dq * g->Hq * g->Wq * Coq;                                                \
    const size_t bm = sizeof(T) * P.ngroups * 64 * Cq * Coq, bd = sizeof(T) * P.ngroups * Coq;                        \
    T *xq = sgnn_scratch(bx, 0), *gq = sgnn_scratch(bgq, 0), *Mp = sgnn_scratch(bm, 0), *dbp = sgnn_scratch(bd, 0);   \
    int rc = 0;                                                                                                       \
    if (!xq || !gq || !Mp || !dbp) {                                                                                  \
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d weight gradient (winograd): out of memory");                             \
      goto done;                                                                                                      \
    }                                                                                                                 \
    P.xq = xq, P.gq = gq, P.Mp = Mp, P.dbp = dbp;                                                                     \
    const int nopad[3] = {0, 0, 0};                                                                                   \
    wg_pack_run_##SUF(A->x, xq, g->N, C, Cq, g->D, g->H, g->W, g->Dp, g->Hp, g->Wp, g->pad);                          \
    wg_pack_run_##SUF(A->y, gq, g->N, Co, Coq, g->Do, g->Ho, g->Wo, g->Dq, g->Hq, g->Wq, nopad);                      \
    sgnn_parallel_for_grain(P.ngroups, 1, wg_dw_tiles_##SUF, &P);                                                     \
    if (P.oom) {                                                                                                      \
      rc = sgnn_seterr(SGNN_ERR_MEM, "conv3d weight gradient (winograd): out of memory");                             \
      goto done;                                                                                                      \
    }                                                                                                                 \
    /* dw[co][c][t] += G^T (sum of the groups' M, in group order) G, VL output channels at a time */                  \
    for (int c = 0; c < C; c++)                                                                                       \
      for (int c0 = 0; c0 < Coq; c0 += VL) {                                                                          \
        V_##SUF m[64], a[4][4][3], b[4][3][3];                                                                        \
        for (int xi = 0; xi < 64; xi++) {                                                                             \
          m[xi] = *(const V_##SUF *)(Mp + ((long)xi * Cq + c) * Coq + c0);                                            \
          for (int grp = 1; grp < P.ngroups; grp++)                                                                   \
            m[xi] += *(const V_##SUF *)(Mp + (((long)grp * 64 + xi) * Cq + c) * Coq + c0);                            \
        }                                                                                                             \
        for (int i = 0; i < 4; i++) /* along x */                                                                     \
          for (int j = 0; j < 4; j++) {                                                                               \
            const V_##SUF *s = m + (i * 4 + j) * 4;                                                                   \
            a[i][j][0] = s[0] + (s[1] + s[2]) * (T)0.5, a[i][j][1] = (s[1] - s[2]) * (T)0.5;                          \
            a[i][j][2] = (s[1] + s[2]) * (T)0.5 + s[3];                                                               \
          }                                                                                                           \
        for (int i = 0; i < 4; i++) /* along y */                                                                     \
          for (int k = 0; k < 3; k++) {                                                                               \
            V_##SUF s0 = a[i][0][k], s1 = a[i][1][k], s2 = a[i][2][k], s3 = a[i][3][k];                               \
            b[i][0][k] = s0 + (s1 + s2) * (T)0.5, b[i][1][k] = (s1 - s2) * (T)0.5;                                    \
            b[i][2][k] = (s1 + s2) * (T)0.5 + s3;                                                                     \
          }                                                                                                           \
        for (int j = 0; j < 3; j++) /* along z, then out to dw[co][c][t] */                                           \
          for (int k = 0; k < 3; k++) {                                                                               \
            V_##SUF s0 = b[0][j][k], s1 = b[1][j][k], s2 = b[2][j][k], s3 = b[3][j][k];                               \
            V_##SUF r[3] = {s0 + (s1 + s2) * (T)0.5, (s1 - s2) * (T)0.5, (s1 + s2) * (T)0.5 + s3};                    \
            for (int i = 0; i < 3; i++)                                                                               \
              for (int l = 0; l < VL && c0 + l < Co; l++)                                                             \
                ((T *)A->dw)[((long)(c0 + l) * C + c) * 27 + (i * 3 + j) * 3 + k] += r[i][l];                         \
          }                                                                                                           \
      }                                                                                                               \
    if (A->db)                                                                                                        \
      for (int co = 0; co < Co; co++) {                                                                               \
        T s = 0;                                                                                                      \
        for (int grp = 0; grp < P.ngroups; grp++) s += dbp[(long)grp * Coq + co];                                     \
        ((T *)A->db)[co] += s;                                                                                        \
      }                                                                                                               \
  done:                                                                                                               \
    sgnn_scratch_free(xq, bx), sgnn_scratch_free(gq, bgq), sgnn_scratch_free(Mp, bm), sgnn_scratch_free(dbp, bd);     \
    return rc;                                                                                                        \
  }

#define WG_GEMM(T, SUF, CV)                                                                                           \
  static void wg_gemm_##SUF##_##CV(const T *Vb, long sV, const T *U, T *Mb, long sM, int Cq, int Coq, int cb)         \
  {                                                                                                                   \
    enum { VL = VL_##SUF, TB = WG_TB };                                                                               \
    for (int xi = 0; xi < 64; xi++) {                                                                                 \
      const T *vb = Vb + xi * sV, *ub = U + (long)xi * Cq * Coq + cb;                                                 \
      V_##SUF acc[TB][CV];                                                                                            \
      for (int j = 0; j < TB; j++)                                                                                    \
        for (int v = 0; v < CV; v++) acc[j][v] = (V_##SUF){};                                                         \
      for (int c = 0; c < Cq; c++, ub += Coq) {                                                                       \
        V_##SUF u[CV];                                                                                                \
        _Pragma("GCC unroll 2") for (int v = 0; v < CV; v++) u[v] = *(const V_##SUF *)(ub + v * VL);                  \
        _Pragma("GCC unroll 12") for (int j = 0; j < TB; j++) {                                                       \
          const T s = vb[(long)j * Cq + c];                                                                           \
          _Pragma("GCC unroll 2") for (int v = 0; v < CV; v++) acc[j][v] += s * u[v];                                 \
        }                                                                                                             \
      }                                                                                                               \
      T *mb = Mb + xi * sM + cb;                                                                                      \
      for (int j = 0; j < TB; j++)                                                                                    \
        for (int v = 0; v < CV; v++) *(V_##SUF *)(mb + (long)j * Coq + v * VL) = acc[j][v];                           \
    }                                                                                                                 \
  }

#define WG_DWGEMM(T, SUF, CV)                                                                                         \
  static void wg_dwgemm_##SUF##_##CV(const T *Vb, long sV, const T *Gb, long sG, T *M, int Cq, int Coq, int cb,       \
                                     int first) /* first block of a group: M starts from zero, unread */              \
  {                                                                                                                   \
    enum { VL = VL_##SUF, TB = WG_TBW, RC = 8 };                                                                      \
    for (int xi = 0; xi < 64; xi++)                                                                                   \
      for (int c0 = 0; c0 < Cq; c0 += RC) { /* Cq is a multiple of VL >= 8 */                                         \
        T *mp = M + ((long)xi * Cq + c0) * Coq + cb;                                                                  \
        V_##SUF acc[RC][CV];                                                                                          \
        for (int r = 0; r < RC; r++)                                                                                  \
          for (int v = 0; v < CV; v++)                                                                                \
            acc[r][v] = first ? (V_##SUF){} : *(const V_##SUF *)(mp + (long)r * Coq + v * VL);                        \
        const T *vb = Vb + xi * sV + c0, *gb = Gb + xi * sG + cb;                                                     \
        for (int t = 0; t < TB; t++, vb += Cq, gb += Coq) {                                                           \
          V_##SUF u[CV];                                                                                              \
          _Pragma("GCC unroll 2") for (int v = 0; v < CV; v++) u[v] = *(const V_##SUF *)(gb + v * VL);                \
          _Pragma("GCC unroll 8") for (int r = 0; r < RC; r++) {                                                      \
            const T s = vb[r];                                                                                        \
            _Pragma("GCC unroll 2") for (int v = 0; v < CV; v++) acc[r][v] += s * u[v];                               \
          }                                                                                                           \
        }                                                                                                             \
        for (int r = 0; r < RC; r++)                                                                                  \
          for (int v = 0; v < CV; v++) *(V_##SUF *)(mp + (long)r * Coq + v * VL) = acc[r][v];                         \
      }                                                                                                               \
  }

WG_DEFINE(float, int, f)
WG_DEFINE(double, long long, d)

int sgnn_winograd_conv3(const SgnnWinogradArgs *A) { return A->dt == SGNN_F64 ? wg_conv_d(A) : wg_conv_f(A); }
int sgnn_winograd_conv3_dw(const SgnnWinogradArgs *A) { return A->dt == SGNN_F64 ? wg_dw_d(A) : wg_dw_f(A); }
