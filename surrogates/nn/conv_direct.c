/* conv_direct.c -- direct stride-1 3-d convolution and its weight gradient
 * on host memory, with no im2col: the CPU backend's default for stride-1
 * convs (ops_conv.c picks it; SGNN_CONV_DIRECT=0 turns it off).
 *
 * Why: with few input channels (the 4-channel first layer of a
 * MeshfreeFlowNet block) im2col inflates the input 27x and the GEMM is thin;
 * the measured step spent ~14% in im2col alone and ~20% more in small or
 * badly-shaped GEMMs, and Winograd's transforms cost more than the
 * multiplications they save at 32-64 channels (docs/nn.md has the numbers).
 * Here the input is copied once into a zero-padded buffer and every output
 * is an FMA chain read straight from it.
 *
 * Vectorisation (GCC/Clang vector extensions, 64-byte vectors: 16 f32 or
 * 8 f64 lanes; one register with AVX-512, split by the compiler on AVX2/SSE
 * -- slower there, still correct).
 * Forward: lanes along the output's W axis (NCDHW keeps it contiguous, so
 * nothing is re-laid-out); register tile of RB output rows x CB output
 * channels, so each input-vector load feeds CB FMAs and each broadcast
 * weight RB FMAs (the blocking of Zhang, Franchetti & Low, "High Performance
 * Zero-Memory Overhead Direct Convolutions", ICML 2018). Bias is the
 * accumulators' initial value.
 * Weight gradient: lanes along output channels (g transposed once to
 * [N,Do,Ho,Wo,Co]); tile of CV channel vectors x TBN kernel taps, each tap
 * value a broadcast from the padded input, summed over every position of
 * every sample (one reduction for the whole batch).
 * Row, lane, channel and tap remainders are handled by zero padding (and
 * masked stores), so the inner loops have no bounds checks.
 * Threads (parallel.c): forward over (sample, channel block), weight
 * gradient over input channels -- disjoint outputs, no reductions. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

static long rup(long a, long b) { return (a + b - 1) / b * b; }

#define DC_COMMON(T, IT, SUF)                                                                                         \
  typedef T V_##SUF __attribute__((vector_size(64)));                                                                 \
  typedef IT IT_##SUF;                                                                                                \
  typedef T U_##SUF __attribute__((vector_size(64), aligned(sizeof(T)), may_alias));                                  \
  enum { VL_##SUF = 64 / sizeof(T) };                                                                                 \
  static inline V_##SUF ld_##SUF(const T *p) { return *(const U_##SUF *)p; }                                          \
  /* xp [N*C][Dp][Hp][Wr] = x zero-padded by pad on the low side, every                                               \
   * element written once (no separate memset); items: the N*C planes */                                              \
  typedef struct {                                                                                                    \
    const T *x;                                                                                                       \
    T *xp;                                                                                                            \
    int D, H, W, Dp, Hp, Wr, pad[3];                                                                                  \
  } Pad_##SUF;                                                                                                        \
  static void pad_rows_##SUF(void *ctx, int i0, int i1)                                                               \
  {                                                                                                                   \
    const Pad_##SUF *P = ctx;                                                                                         \
    const int D = P->D, H = P->H, W = P->W, Hp = P->Hp, Wr = P->Wr, p2 = P->pad[2];                                   \
    for (long nc = i0; nc < i1; nc++)                                                                                 \
      for (int zz = 0; zz < P->Dp; zz++)                                                                              \
        for (int yy = 0; yy < Hp; yy++) {                                                                             \
          T *row = P->xp + ((nc * P->Dp + zz) * Hp + yy) * Wr;                                                        \
          int z = zz - P->pad[0], y = yy - P->pad[1];                                                                 \
          if (z < 0 || z >= D || y < 0 || y >= H) {                                                                   \
            for (int i = 0; i < Wr; i++) row[i] = 0;                                                                  \
            continue;                                                                                                 \
          }                                                                                                           \
          const T *src = P->x + ((nc * D + z) * H + y) * (long)W;                                                     \
          for (int i = 0; i < p2; i++) row[i] = 0;                                                                    \
          for (int i = 0; i < W; i++) row[p2 + i] = src[i];                                                           \
          for (int i = p2 + W; i < Wr; i++) row[i] = 0;                                                               \
        }                                                                                                             \
  }                                                                                                                   \
  static void pad_in_##SUF(const T *x, long NC, int D, int H, int W, const int pad[3], int Dp, int Hp,                \
                           int Wr, T *xp)                                                                             \
  {                                                                                                                   \
    Pad_##SUF P = {.x = x, .xp = xp, .D = D, .H = H, .W = W, .Dp = Dp, .Hp = Hp, .Wr = Wr,                            \
                   .pad = {pad[0], pad[1], pad[2]}};                                                                  \
    sgnn_parallel_for((int)NC, pad_rows_##SUF, &P);                                                                   \
  }                                                                                                                   \
  /* gT [n][s][Coq] = g [n][co][s] (channels past Co zero), VL x VL blocks                                            \
   * transposed in registers by log2(VL) butterfly stages of two-input                                                \
   * shuffles (stage h swaps the off-diagonal h x h blocks of row pairs                                               \
   * i, i+h); items: samples */                                                                                       \
  typedef struct {                                                                                                    \
    const T *g;                                                                                                       \
    T *gT, *db; /* db: NULL, or per-sample bias-gradient sums [N][Coq] (sum of g over positions) */                   \
    int Co, Coq;                                                                                                      \
    long S;                                                                                                           \
  } Tr_##SUF;                                                                                                         \
  static void transpose_##SUF(void *ctx, int n0, int n1)                                                              \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    typedef IT_##SUF M __attribute__((vector_size(64)));                                                              \
    const Tr_##SUF *P = ctx;                                                                                          \
    const int Co = P->Co, Coq = P->Coq;                                                                               \
    const long S = P->S;                                                                                              \
    M lo[VL], hi[VL]; /* masks per stage h (indexed by h) */                                                          \
    for (int h = 1; h < VL; h *= 2)                                                                                   \
      for (int l = 0; l < VL; l++) {                                                                                  \
        lo[h][l] = (l & h) ? VL + l - h : l;                                                                          \
        hi[h][l] = (l & h) ? VL + l : l + h;                                                                          \
      }                                                                                                               \
    V_##SUF bacc[Coq / VL]; /* bias gradient: after the transpose a block's rows are positions, so their */           \
    for (int n = n0; n < n1; n++) {   /* sum is a vector of per-channel sums, no extra pass over g */                 \
      for (int c = 0; c < Coq / VL; c++) bacc[c] = (V_##SUF){};                                                       \
      for (long s0 = 0; s0 < S; s0 += VL)                                                                             \
        for (int c0 = 0; c0 < Coq; c0 += VL) {                                                                        \
          V_##SUF r[VL];                                                                                              \
          int ns = S - s0 < VL ? (int)(S - s0) : VL;                                                                  \
          for (int i = 0; i < VL; i++) {                                                                              \
            const T *src = P->g + ((long)n * Co + c0 + i) * S + s0;                                                   \
            if (c0 + i >= Co)                                                                                         \
              r[i] = (V_##SUF){};                                                                                     \
            else if (ns == VL)                                                                                        \
              r[i] = ld_##SUF(src);                                                                                   \
            else                                                                                                      \
              for (int l = 0; l < VL; l++) r[i][l] = l < ns ? src[l] : (T)0;                                          \
          }                                                                                                           \
          for (int h = VL / 2; h >= 1; h /= 2)                                                                        \
            for (int i = 0; i < VL; i++)                                                                              \
              if (!(i & h)) {                                                                                         \
                V_##SUF a = r[i], b = r[i + h];                                                                       \
                r[i] = __builtin_shuffle(a, b, lo[h]);                                                                \
                r[i + h] = __builtin_shuffle(a, b, hi[h]);                                                            \
              }                                                                                                       \
          if (P->db) { /* rows past ns are zero */                                                                    \
            V_##SUF t = r[0];                                                                                         \
            for (int i = 1; i < VL; i++) t += r[i];                                                                   \
            bacc[c0 / VL] += t;                                                                                       \
          }                                                                                                           \
          for (int i = 0; i < ns; i++) *(U_##SUF *)(P->gT + ((long)n * S + s0 + i) * Coq + c0) = r[i];                \
        }                                                                                                             \
      if (P->db)                                                                                                      \
        for (int c = 0; c < Coq; c++) P->db[(long)n * Coq + c] = bacc[c / VL][c % VL];                                \
    }                                                                                                                 \
  }                                                                                                                   \
  typedef struct {                                                                                                    \
    const T *xp, *wt, *bias;                                                                                          \
    const long *off;                                                                                                  \
    T *y;                                                                                                             \
    int C, Co, Coq, K, Do, Ho, Wo, Wq, Hp, Wr;                                                                        \
    long Sp;                                                                                                          \
    void (*kern)(void *, int, int); /* the tile kernel, items = sample x channel block */                             \
    int nb;                         /* channel blocks per sample */                                                   \
  } Fwd_##SUF;

#define FWD_KERNEL(T, SUF, RB, CB)                                                                                    \
  /* items i = n * (Coq / CB) + channel block. Row tiles run over the                                                 \
   * flattened (z, y) output rows, so a tile may span two z planes (each row                                          \
   * has its own offset) and only the last tile is partial: RB need not                                               \
   * divide Ho. Rows past the end re-read the last row and are not stored. */                                         \
  static void fwdk_##SUF##_##RB##x##CB(void *ctx, int i0, int i1)                                                     \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const Fwd_##SUF *F = ctx;                                                                                         \
    const int C = F->C, Co = F->Co, K = F->K, Do = F->Do, Ho = F->Ho, Wo = F->Wo, Wq = F->Wq;                         \
    const int Hp = F->Hp, Wr = F->Wr, nb = F->Coq / CB, nrow = Do * Ho;                                               \
    const long Sp = F->Sp, Sy = (long)Do * Ho * Wo;                                                                   \
    for (int i = i0; i < i1; i++) {                                                                                   \
      const int n = i / nb, cb = i % nb * CB;                                                                         \
      for (int q0 = 0; q0 < nrow; q0 += RB)                                                                           \
        for (int x0 = 0; x0 < Wq; x0 += VL) {                                                                         \
          V_##SUF acc[RB][CB];                                                                                        \
          long ro[RB];                                                                                                \
          for (int r = 0; r < RB; r++) {                                                                              \
            int q = q0 + r < nrow ? q0 + r : nrow - 1;                                                                \
            ro[r] = ((long)(q / Ho) * Hp + q % Ho) * Wr + x0;                                                         \
          }                                                                                                           \
          for (int c = 0; c < CB; c++) {                                                                              \
            T b = F->bias && cb + c < Co ? F->bias[cb + c] : (T)0;                                                    \
            for (int r = 0; r < RB; r++) acc[r][c] = (V_##SUF){} + b;                                                 \
          }                                                                                                           \
          const T *xb = F->xp + (long)n * C * Sp;                                                                     \
          const T *wb = F->wt + (long)cb * C * K;                                                                     \
          for (int ci = 0; ci < C; ci++, xb += Sp)                                                                    \
            for (int t = 0; t < K; t++, wb += CB) {                                                                   \
              const T *xr = xb + F->off[t];                                                                           \
              V_##SUF v[RB];                                                                                          \
              _Pragma("GCC unroll 8") for (int r = 0; r < RB; r++) v[r] = ld_##SUF(xr + ro[r]);                       \
              _Pragma("GCC unroll 8") for (int c = 0; c < CB; c++)                                                    \
                _Pragma("GCC unroll 8") for (int r = 0; r < RB; r++) acc[r][c] += v[r] * wb[c];                       \
            }                                                                                                         \
          int nx = Wo - x0 < VL ? Wo - x0 : VL;                                                                       \
          for (int c = 0; c < CB && cb + c < Co; c++)                                                                 \
            for (int r = 0; r < RB && q0 + r < nrow; r++) {                                                           \
              T *dst = F->y + ((long)n * Co + cb + c) * Sy + (long)(q0 + r) * Wo + x0;                                \
              if (nx == VL)                                                                                           \
                *(U_##SUF *)dst = acc[r][c];                                                                          \
              else                                                                                                    \
                for (int l = 0; l < nx; l++) dst[l] = acc[r][c][l];                                                   \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
  }

#define FWD_DEFINE(T, SUF)                                                                                            \
  FWD_KERNEL(T, SUF, 4, 6)                                                                                            \
  FWD_KERNEL(T, SUF, 3, 8)                                                                                            \
  /* whole samples per claim: the threads then share no input sample, each sample's padded input                      \
   * is read into one core's cache (claims of single channel blocks made both cores fetch it) */                      \
  static void fwd_samples_##SUF(void *ctx, int n0, int n1)                                                            \
  {                                                                                                                   \
    const Fwd_##SUF *F = ctx;                                                                                         \
    F->kern(ctx, n0 * F->nb, n1 * F->nb);                                                                             \
  }                                                                                                                   \
  static int fwd_##SUF(const SgnnDirectArgs *A)                                                                       \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const int N = A->N, C = A->C, Co = A->Co, k0 = A->k[0], k1 = A->k[1], k2 = A->k[2];                               \
    const int Do = A->D + 2 * A->pad[0] - k0 + 1, Ho = A->H + 2 * A->pad[1] - k1 + 1;                                 \
    const int Wo = A->W + 2 * A->pad[2] - k2 + 1, K = k0 * k1 * k2;                                                   \
    /* register tiles (rows x channels, 24 accumulators): 3x8 when it pads the                                        \
     * channels less than 4x6 (32 channels: 4x6 computes 36), else 4x6, which                                         \
     * loads one vector fewer per 24 FMAs. 4x4 measured 1.5x slower. */                                               \
    const int CB = rup(Co, 8) < rup(Co, 6) || Co % 8 == 0 ? 8 : 6;                                                    \
    const int Wq = (int)rup(Wo, VL), Coq = (int)rup(Co, CB);                                                          \
    const int Dp = Do + k0 - 1, Hp = Ho + k1 - 1, Wr = Wq + k2 - 1;                                                   \
    const long Sp = (long)Dp * Hp * Wr;                                                                               \
    const T *w = A->w;                                                                                                \
    const size_t bx = sizeof(T) * N * C * Sp, bw = sizeof(T) * Coq * C * K, bo = sizeof(long) * K;                    \
    T *xp = sgnn_scratch(bx, 0), *wt = sgnn_scratch(bw, 1); /* pad_in writes every element of xp */                   \
    long *off = sgnn_scratch(bo, 0);                                                                                  \
    if (!xp || !wt || !off) {                                                                                         \
      sgnn_scratch_free(xp, bx), sgnn_scratch_free(wt, bw), sgnn_scratch_free(off, bo);                               \
      return sgnn_seterr(SGNN_ERR_MEM, "conv3d (direct): out of memory");                                             \
    }                                                                                                                 \
    pad_in_##SUF(A->x, (long)N * C, A->D, A->H, A->W, A->pad, Dp, Hp, Wr, xp);                                        \
    /* wt [Coq/CB][C][K][CB]: a tile's CB weights of one tap are contiguous */                                        \
    for (int co = 0; co < Co; co++)                                                                                   \
      for (int ci = 0; ci < C; ci++)                                                                                  \
        for (int t = 0; t < K; t++)                                                                                   \
          wt[(((long)(co / CB) * C + ci) * K + t) * CB + co % CB] = w[((long)co * C + ci) * K + t];                   \
    for (int dz = 0, t = 0; dz < k0; dz++)                                                                            \
      for (int dy = 0; dy < k1; dy++)                                                                                 \
        for (int dx = 0; dx < k2; dx++) off[t++] = ((long)dz * Hp + dy) * Wr + dx;                                    \
    Fwd_##SUF F = {.xp = xp, .wt = wt, .bias = A->bias, .off = off, .y = A->y, .C = C, .Co = Co, .Coq = Coq,          \
                   .K = K, .Do = Do, .Ho = Ho, .Wo = Wo, .Wq = Wq, .Hp = Hp, .Wr = Wr, .Sp = Sp};                     \
    F.kern = CB == 8 ? fwdk_##SUF##_3x8 : fwdk_##SUF##_4x6;                                                           \
    F.nb   = Coq / CB;                                                                                                \
    if (N >= 2 * sgnn_num_threads()) sgnn_parallel_for(N, fwd_samples_##SUF, &F);                                     \
    else sgnn_parallel_for(N * F.nb, F.kern, &F); /* few samples: share out channel blocks too */                     \
    sgnn_scratch_free(xp, bx), sgnn_scratch_free(wt, bw), sgnn_scratch_free(off, bo);                                 \
    return 0;                                                                                                         \
  }

/* Weight-gradient tile: CV output-channel vectors x TBN kernel taps, all
 * loads aligned vectors or scalar broadcasts. Positions go in chunks of ry
 * rows whose g fits in L1 while every (ci, tap group) sweeps them; the
 * tiles are parked in am[ci][tap][CV] between chunks. Items: input channels. */
#define DW_KERNEL(T, SUF, CV, TBN)                                                                                    \
  static void dwk_##SUF##_##CV##x##TBN(void *ctx, int c0, int c1)                                                     \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const Dw_##SUF *P = ctx;                                                                                          \
    const int N = P->N, C = P->C, Kq = P->Kq, Do = P->Do, Ho = P->Ho, Wo = P->Wo, Coq = P->Coq;                       \
    const int cob = P->cob, Hp = P->Hp, Wr = P->Wr, ry = P->ry;                                                       \
    const long Sp = P->Sp;                                                                                            \
    for (int n = 0; n < N; n++)                                                                                       \
      for (int z = 0; z < Do; z++)                                                                                    \
        for (int y0 = 0; y0 < Ho; y0 += ry) {                                                                         \
          int y1 = y0 + ry < Ho ? y0 + ry : Ho;                                                                       \
          for (int ci = c0; ci < c1; ci++)                                                                            \
            for (int t0 = P->t_lo; t0 < P->t_hi; t0 += TBN) {                                                         \
              V_##SUF acc[CV][TBN], *ap = P->am + ((long)ci * Kq + t0) * CV;                                          \
              for (int j = 0; j < TBN; j++)                                                                           \
                for (int v = 0; v < CV; v++) acc[v][j] = ap[j * CV + v];                                              \
              long o[TBN];                                                                                            \
              for (int j = 0; j < TBN; j++) o[j] = P->off[t0 + j];                                                    \
              for (int y = y0; y < y1; y++) {                                                                         \
                const T *gr = P->gT + (((long)n * Do + z) * Ho + y) * Wo * Coq + cob;                                 \
                const T *xr = P->xp + ((long)n * C + ci) * Sp + ((long)z * Hp + y) * Wr;                              \
                for (int x = 0; x < Wo; x++, gr += Coq, xr++) {                                                       \
                  V_##SUF gv[CV];                                                                                     \
                  _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++) gv[v] = *(const V_##SUF *)(gr + v * VL);       \
                  _Pragma("GCC unroll 16") for (int j = 0; j < TBN; j++) {                                            \
                    T b = xr[o[j]];                                                                                   \
                    _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++) acc[v][j] += gv[v] * b;                      \
                  }                                                                                                   \
                }                                                                                                     \
              }                                                                                                       \
              for (int j = 0; j < TBN; j++)                                                                           \
                for (int v = 0; v < CV; v++) ap[j * CV + v] = acc[v][j];                                              \
            }                                                                                                         \
        }                                                                                                             \
  }

#define DW_DEFINE(T, SUF)                                                                                             \
  typedef struct {                                                                                                    \
    const T *gT, *xp;                                                                                                 \
    const long *off;                                                                                                  \
    V_##SUF *am;                                                                                                      \
    int N, C, Kq, Do, Ho, Wo, Coq, cob, Hp, Wr, ry, t_lo, t_hi; /* taps [t_lo, t_hi) */                               \
    long Sp;                                                                                                          \
  } Dw_##SUF;                                                                                                         \
  DW_KERNEL(T, SUF, 1, 14)                                                                                            \
  DW_KERNEL(T, SUF, 2, 9)                                                                                             \
  DW_KERNEL(T, SUF, 4, 6)                                                                                             \
  DW_KERNEL(T, SUF, 4, 3)                                                                                             \
  static int dw_##SUF(const SgnnDirectArgs *A)                                                                        \
  {                                                                                                                   \
    enum { VL = VL_##SUF };                                                                                           \
    const int N = A->N, C = A->C, Co = A->Co, k0 = A->k[0], k1 = A->k[1], k2 = A->k[2];                               \
    const int Do = A->D + 2 * A->pad[0] - k0 + 1, Ho = A->H + 2 * A->pad[1] - k1 + 1;                                 \
    const int Wo = A->W + 2 * A->pad[2] - k2 + 1, K = k0 * k1 * k2;                                                   \
    const int cv = Co > 2 * VL ? 4 : Co > VL ? 2 : 1, tb = cv == 4 ? 6 : cv == 2 ? 9 : 14;                            \
    /* 4-vector tiles: groups of 6 taps (4x7 spills one of its 28 accumulators                                        \
     * with 32 registers), the remainder in groups of 3: 27 taps = 4x6 + 3 */                                         \
    const int Kmain = cv == 4 ? K / 6 * 6 : (int)rup(K, tb);                                                          \
    const int Kq = cv == 4 ? Kmain + (int)rup(K - Kmain, 3) : Kmain, Coq = (int)rup(Co, cv * VL);                     \
    const int Dp = Do + k0 - 1, Hp = Ho + k1 - 1, Wr = Wo + k2 - 1;                                                   \
    const long Sp = (long)Dp * Hp * Wr, S = (long)Do * Ho * Wo;                                                       \
    const T *g = A->y;                                                                                                \
    T *dw = A->dw;                                                                                                    \
    const size_t bx = sizeof(T) * N * C * Sp, bg = sizeof(T) * N * S * Coq;                                           \
    const size_t ba = sizeof(V_##SUF) * C * Kq * cv, bo = sizeof(long) * Kq, bd = sizeof(T) * N * Coq;                \
    T *xp = sgnn_scratch(bx, 0), *gT = sgnn_scratch(bg, 0); /* pad_in writes every element of xp */                   \
    V_##SUF *am = sgnn_scratch(ba, 0);                                                                                \
    long *off = sgnn_scratch(bo, 1); /* taps past K read offset 0 and are dropped */                                  \
    T *dbp = A->db ? sgnn_scratch(bd, 0) : NULL;                                                                      \
    if (!xp || !gT || !am || !off || (A->db && !dbp)) {                                                               \
      sgnn_scratch_free(xp, bx), sgnn_scratch_free(gT, bg), sgnn_scratch_free(am, ba);                                \
      sgnn_scratch_free(off, bo), sgnn_scratch_free(dbp, bd);                                                         \
      return sgnn_seterr(SGNN_ERR_MEM, "conv3d weight gradient (direct): out of memory");                             \
    }                                                                                                                 \
    pad_in_##SUF(A->x, (long)N * C, A->D, A->H, A->W, A->pad, Dp, Hp, Wr, xp);                                        \
    Tr_##SUF tr = {.g = g, .gT = gT, .db = dbp, .Co = Co, .Coq = Coq, .S = S};                                        \
    sgnn_parallel_for(N, transpose_##SUF, &tr);                                                                       \
    if (A->db) /* bias gradient from the transpose's per-sample sums, summed in sample order */                       \
      for (int co = 0; co < Co; co++) {                                                                               \
        T s = 0;                                                                                                      \
        for (int n = 0; n < N; n++) s += dbp[(long)n * Coq + co];                                                     \
        ((T *)A->db)[co] += s;                                                                                        \
      }                                                                                                               \
                                                                                                                      \
    for (int dz = 0, t = 0; dz < k0; dz++)                                                                            \
      for (int dy = 0; dy < k1; dy++)                                                                                 \
        for (int dx = 0; dx < k2; dx++) off[t++] = ((long)dz * Hp + dy) * Wr + dx;                                    \
    int ry = (int)((16 << 10) / ((long)Wo * cv * VL * sizeof(T))); /* rows of g per chunk: 16 KiB */                  \
    if (ry < 1) ry = 1;                                                                                               \
    Dw_##SUF P = {.gT = gT, .xp = xp, .off = off, .am = am, .N = N, .C = C, .Kq = Kq, .Do = Do, .Ho = Ho,             \
                  .Wo = Wo, .Coq = Coq, .Hp = Hp, .Wr = Wr, .ry = ry, .Sp = Sp};                                      \
    /* a claim's input channels share each L1 chunk of g: 2 claims per thread stream g 2x per thread,                 \
     * where the default grain (1-2 channels) streamed all of it once per claim */                                    \
    const int nt = sgnn_num_threads(), cgrain = (C + 2 * nt - 1) / (2 * nt);                                          \
    for (int cob = 0; cob < Coq; cob += cv * VL) {                                                                    \
      P.cob = cob;                                                                                                    \
      memset(am, 0, sizeof(V_##SUF) * (size_t)C * Kq * cv);                                                           \
      P.t_lo = 0;                                                                                                     \
      P.t_hi = Kmain;                                                                                                 \
      sgnn_parallel_for_grain(C, cgrain, cv == 4 ? dwk_##SUF##_4x6 : cv == 2 ? dwk_##SUF##_2x9 : dwk_##SUF##_1x14, &P); \
      if (Kq > Kmain) {                                                                                               \
        P.t_lo = Kmain;                                                                                               \
        P.t_hi = Kq;                                                                                                  \
        sgnn_parallel_for_grain(C, cgrain, dwk_##SUF##_4x3, &P);                                                      \
      }                                                                                                               \
      for (int ci = 0; ci < C; ci++)                                                                                  \
        for (int t = 0; t < K; t++)                                                                                   \
          for (int v = 0; v < cv; v++) {                                                                              \
            const V_##SUF a = am[((long)ci * Kq + t) * cv + v];                                                       \
            for (int l = 0; l < VL && cob + v * VL + l < Co; l++)                                                     \
              dw[((long)(cob + v * VL + l) * C + ci) * K + t] += a[l];                                                \
          }                                                                                                           \
    }                                                                                                                 \
    sgnn_scratch_free(xp, bx), sgnn_scratch_free(gT, bg), sgnn_scratch_free(am, ba);                                  \
    sgnn_scratch_free(off, bo), sgnn_scratch_free(dbp, bd);                                                           \
    return 0;                                                                                                         \
  }

DC_COMMON(float, int, f)
DC_COMMON(double, long long, d)
FWD_DEFINE(float, f)
FWD_DEFINE(double, d)
DW_DEFINE(float, f)
DW_DEFINE(double, d)

int sgnn_direct_conv3(const SgnnDirectArgs *a) { return a->dt == SGNN_F64 ? fwd_d(a) : fwd_f(a); }
int sgnn_direct_conv3_dw(const SgnnDirectArgs *a) { return a->dt == SGNN_F64 ? dw_d(a) : dw_f(a); }
