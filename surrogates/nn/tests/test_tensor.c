/* test_tensor.c -- forward values of the ops against independent reference
 * computations (naive loops, closed forms, PyTorch conventions), tensor and
 * slab semantics, and the error messages of bad inputs. The gradient checks
 * only prove backward matches forward; this file proves forward is right. */
#include "testutil.h"

static SgnnBackend *BE;

static SgnnTensor mk(SgnnDType dt, int nd, const int *s, const double *v)
{
  SgnnTensor t;
  OK(sgnn_tensor_from_f64(BE, dt, nd, s, v, &t));
  return t;
}
static double *host(SgnnTensor t)
{
  double *h = malloc(sizeof(double) * (sgnn_tensor_numel(t) + 1));
  OK(sgnn_tensor_to_f64(t, h));
  return h;
}
static double urand(SgnnRng *r) { return 2 * sgnn_rng_uniform(r) - 1; }

static void test_basics(void)
{
  int s[2] = {2, 3};
  double v[6] = {1, 2, 3, 4, 5, 6.1};
  SgnnTensor a = mk(SGNN_F32, 2, s, v), r;
  double *h = host(a);
  CHECK(fabs(h[5] - (double)6.1f) == 0 && h[0] == 1, "f32 round trip");
  free(h);
  int rs[2] = {3, -1};
  OK(sgnn_reshape(a, 2, rs, &r));
  CHECK(sgnn_tensor_shape(r)[1] == 2, "reshape infers -1");
  double w[6] = {9, 9, 9, 9, 9, 9};
  OK(sgnn_tensor_set_f64(a, w));
  h = host(r);
  CHECK(h[3] == 9, "reshape is a view sharing storage");
  free(h);
  sgnn_tensor_free(&r);
  sgnn_tensor_free(&a);
  CHECK(a == NULL, "free clears the handle");

  /* errors name the op and the shapes */
  int s1[2] = {3, 4}, s2[1] = {5};
  SgnnTensor x, y, z = NULL;
  OK(sgnn_tensor_zeros(BE, SGNN_F64, 2, s1, &x));
  OK(sgnn_tensor_zeros(BE, SGNN_F64, 1, s2, &y));
  int rc = sgnn_add(x, y, &z);
  CHECK(rc == SGNN_ERR_SHAPE && strstr(sgnn_last_error(), "add") && strstr(sgnn_last_error(), "[3,4]") &&
            strstr(sgnn_last_error(), "[5]"),
        "broadcast error message: %d '%s'", rc, sgnn_last_error());
  rc = sgnn_matmul(x, x, 0, 0, &z);
  CHECK(rc == SGNN_ERR_SHAPE && strstr(sgnn_last_error(), "matmul"), "matmul shape error: '%s'", sgnn_last_error());
  SgnnTensor f;
  OK(sgnn_tensor_zeros(BE, SGNN_F32, 2, s1, &f));
  rc = sgnn_mul(x, f, &z);
  CHECK(rc == SGNN_ERR_DTYPE && strstr(sgnn_last_error(), "f32"), "dtype error: '%s'", sgnn_last_error());
  int big[6] = {1, 1, 1, 1, 1, 1};
  rc = sgnn_tensor_zeros(BE, SGNN_F64, 6, big, &z);
  CHECK(rc == SGNN_ERR_SHAPE, "6-d tensor refused: '%s'", sgnn_last_error());
  long bad = 7;
  rc = sgnn_index_select(x, 1, 1, &bad, &z);
  CHECK(rc == SGNN_ERR_ARG && strstr(sgnn_last_error(), "out of range"), "index range: '%s'", sgnn_last_error());
  SgnnBackend *nb;
  rc = sgnn_backend_get("tpu", &nb);
  CHECK(rc == SGNN_ERR_BACKEND && strstr(sgnn_last_error(), "tpu"), "unknown backend: '%s'", sgnn_last_error());
  if (!sgnn_backend_available("cuda")) {
    rc = sgnn_backend_get("cuda", &nb);
    CHECK(rc == SGNN_ERR_BACKEND && strstr(sgnn_last_error(), "cuda"), "cuda absent: '%s'", sgnn_last_error());
  }
  /* backward twice without a graph is an error, not garbage */
  OK(sgnn_tensor_set_requires_grad(x, 1));
  SgnnTensor t, l;
  OK(sgnn_tanh(x, &t));
  OK(sgnn_sum(t, 0, NULL, 0, &l));
  OK(sgnn_backward(l));
  rc = sgnn_backward(l);
  CHECK(rc == SGNN_ERR_STATE, "second backward refused: %d '%s'", rc, sgnn_last_error());
  rc = sgnn_tensor_set_requires_grad(t, 1);
  CHECK(rc == SGNN_ERR_STATE, "requires_grad on a result refused");
  sgnn_tensor_free(&t);
  sgnn_tensor_free(&l);
  /* gradient w.r.t. an intermediate result: d(sum y^2)/dy = 2y */
  SgnnTensor yy, y2, sy, gy;
  OK(sgnn_tanh(x, &yy));
  OK(sgnn_mul(yy, yy, &y2));
  OK(sgnn_sum(y2, 0, NULL, 0, &sy));
  OK(sgnn_grad(1, &sy, NULL, 1, &yy, 0, &gy));
  double *hy = host(yy), *hg = host(gy), e = 0;
  for (int i = 0; i < 12; i++) e = fmax(e, fabs(hg[i] - 2 * hy[i]));
  CHECK(e == 0, "grad w.r.t. a non-leaf: err %g", e);
  free(hy);
  free(hg);
  SgnnTensor *tt[] = {&yy, &y2, &sy, &gy, &x, &y, &f};
  for (int i = 0; i < 7; i++) sgnn_tensor_free(tt[i]);
}

static void test_slab(void)
{
  SgnnParams P;
  SgnnTensor W, b;
  int sw[2] = {3, 2}, sb[1] = {3};
  OK(sgnn_params_create(BE, SGNN_F64, &P));
  OK(sgnn_params_add(P, "W", 2, sw, &W));
  OK(sgnn_params_add(P, "b", 1, sb, &b));
  CHECK(sgnn_params_add(P, "b", 1, sb, &b) == SGNN_ERR_ARG, "duplicate parameter name refused");
  SgnnTensor early = NULL;
  CHECK(sgnn_tanh(W, &early) == SGNN_ERR_STATE && strstr(sgnn_last_error(), "params_setup"),
        "parameter used before setup is an error, not a crash: '%s'", sgnn_last_error());
  OK(sgnn_params_setup(P));
  long n;
  OK(sgnn_params_count(P, &n));
  CHECK(n == 9, "slab holds 9 scalars, got %ld", n);
  double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  OK(sgnn_tensor_set_f64(sgnn_params_values(P), v));
  double *hb = host(b);
  CHECK(hb[0] == 7 && hb[2] == 9, "parameter b is a view at offset 6 of the slab");
  free(hb);
  /* gradients land in the gradient slab */
  int sx[2] = {4, 2};
  double xv[8] = {1, 0, 0, 1, 1, 1, 2, -1};
  SgnnTensor x = mk(SGNN_F64, 2, sx, xv), y, l;
  OK(sgnn_linear(x, W, b, &y));
  OK(sgnn_sum(y, 0, NULL, 0, &l));
  OK(sgnn_params_zero_grad(P));
  OK(sgnn_backward(l));
  double *g = host(sgnn_params_grads(P));
  /* dl/dW[o,i] = sum_n x[n,i] = (4, 1); dl/db = 4 */
  CHECK(g[0] == 4 && g[1] == 1 && g[4] == 4 && g[5] == 1 && g[6] == 4 && g[8] == 4, "slab gradient values");
  free(g);
  sgnn_tensor_free(&x);
  sgnn_tensor_free(&y);
  sgnn_tensor_free(&l);
  sgnn_params_destroy(&P);
}

/* conv3d against a direct 7-loop convolution */
static int conv_W = 4; /* input width; one case uses 37 (> 2*16 Winograd tiles per row, odd) */
static void test_conv_forward(SgnnDType dt, double tol, int C, int Co, const int *k, const int *st, const int *pd)
{
  SgnnRng r;
  sgnn_rng_init(&r, 5);
  int N = 2, D = 3, H = 5, W = conv_W;
  int xs[5] = {N, C, D, H, W}, ws[5] = {Co, C, k[0], k[1], k[2]}, bs[1] = {Co};
  long nx = (long)N * C * D * H * W, nw = (long)Co * C * k[0] * k[1] * k[2];
  double *x = malloc(nx * 8), *w = malloc(nw * 8), b[16];
  for (int i = 0; i < Co; i++) b[i] = 0.3 - 0.1 * i;
  for (long i = 0; i < nx; i++) x[i] = urand(&r);
  for (long i = 0; i < nw; i++) w[i] = urand(&r);
  SgnnTensor X = mk(dt, 5, xs, x), Wt = mk(dt, 5, ws, w), B = mk(dt, 1, bs, b), Y;
  OK(sgnn_conv3d(X, Wt, B, st, pd, &Y));
  const int *ys = sgnn_tensor_shape(Y);
  int Do = (D + 2 * pd[0] - k[0]) / st[0] + 1, Ho = (H + 2 * pd[1] - k[1]) / st[1] + 1, Wo = (W + 2 * pd[2] - k[2]) / st[2] + 1;
  CHECK(ys[2] == Do && ys[3] == Ho && ys[4] == Wo, "conv3d output shape %d %d %d", ys[2], ys[3], ys[4]);
  double *y = host(Y), err = 0;
  for (int n = 0; n < N; n++)
    for (int o = 0; o < Co; o++)
      for (int a = 0; a < Do; a++)
        for (int bb = 0; bb < Ho; bb++)
          for (int c = 0; c < Wo; c++) {
            double s = b[o];
            for (int i = 0; i < C; i++)
              for (int p = 0; p < k[0]; p++)
                for (int q = 0; q < k[1]; q++)
                  for (int u = 0; u < k[2]; u++) {
                    int id = a * st[0] - pd[0] + p, ih = bb * st[1] - pd[1] + q, iw = c * st[2] - pd[2] + u;
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    s += w[(((o * C + i) * k[0] + p) * k[1] + q) * k[2] + u] * x[(((n * C + i) * D + id) * H + ih) * W + iw];
                  }
            err = fmax(err, fabs(s - y[(((n * Co + o) * Do + a) * Ho + bb) * Wo + c]));
          }
  CHECK(err < tol, "conv3d forward vs direct loop (%s, C=%d Co=%d k=%d%d%d): max err %.3g", dt == SGNN_F64 ? "f64" : "f32",
        C, Co, k[0], k[1], k[2], err);
  if (getenv("SGNN_TEST_VERBOSE")) printf("conv forward C=%d Co=%d: err %.3g\n", C, Co, err);
  free(y);
  free(x);
  free(w);
  sgnn_tensor_free(&X);
  sgnn_tensor_free(&Wt);
  sgnn_tensor_free(&B);
  sgnn_tensor_free(&Y);
}

/* conv3d forward AND backward (dX, dW, db through sgnn_grad with a random
 * output cotangent R) against 7-loop references, under each algorithm the
 * engine picks from: "direct" (conv_direct.c; SGNN_CONV_WINOGRAD=0),
 * "direct3" (the same on 3 threads), "gemm" (SGNN_CONV_DIRECT=0 and
 * SGNN_CONV_WINOGRAD=0: im2col+GEMM), "wino" (SGNN_CONV_WINOGRAD=1: Winograd
 * forward and input gradient, direct weight gradient) and "auto" (no
 * variable set: the engine's own choice, Winograd for 3x3x3 with >= 16
 * channels each way). Shapes cover every remainder of
 * the direct kernels' tiles (rows % 4, W % 16 and % 8, Co % 6, Co % 16 and
 * % 8 for the 1/2/4-vector weight-gradient tiles, taps % 7/9/14) and a
 * padding larger than k-1 (input gradient falls back to col2im).
 * Error = max |engine - reference| / max(1, max |reference|) per output.
 * f64 tol 1e-12: sums of <= ~1000 O(1) products, rounding ~1e-14.
 * f32 tol 3e-5: the same sums at eps 6e-8 accumulate to at most ~1e-5 in
 * the worst observed order, Winograd's transforms add a few roundings. */
static void test_conv_algos(SgnnDType dt, double tol, const char *algo, int N, int C, int Co, int D, int H, int W,
                            const int *k, const int *pd)
{
  setenv("SGNN_CONV_DIRECT", strcmp(algo, "gemm") ? "1" : "0", 1);
  if (!strcmp(algo, "direct3")) setenv("SGNN_NUM_THREADS", "3", 1); /* threaded split, odd thread count */
  setenv("SGNN_CONV_WINOGRAD", strcmp(algo, "wino") ? "0" : "1", 1);
  if (!strcmp(algo, "auto")) {
    unsetenv("SGNN_CONV_DIRECT");
    unsetenv("SGNN_CONV_WINOGRAD");
  }
  const int st[3] = {1, 1, 1};
  SgnnRng r;
  sgnn_rng_init(&r, 11);
  int Do = D + 2 * pd[0] - k[0] + 1, Ho = H + 2 * pd[1] - k[1] + 1, Wo = W + 2 * pd[2] - k[2] + 1;
  int xs[5] = {N, C, D, H, W}, ws[5] = {Co, C, k[0], k[1], k[2]}, bs[1] = {Co}, ys[5] = {N, Co, Do, Ho, Wo};
  long nx = (long)N * C * D * H * W, nw = (long)Co * C * k[0] * k[1] * k[2], ny = (long)N * Co * Do * Ho * Wo;
  double *x = malloc(nx * 8), *w = malloc(nw * 8), *b = malloc(Co * 8), *R = malloc(ny * 8);
  double *yr = calloc(ny, 8), *dxr = calloc(nx, 8), *dwr = calloc(nw, 8), *dbr = calloc(Co, 8);
  for (long i = 0; i < nx; i++) x[i] = urand(&r);
  for (long i = 0; i < nw; i++) w[i] = urand(&r);
  for (int i = 0; i < Co; i++) b[i] = urand(&r);
  for (long i = 0; i < ny; i++) R[i] = urand(&r);
  for (int n = 0; n < N; n++)
    for (int o = 0; o < Co; o++)
      for (int a = 0; a < Do; a++)
        for (int bb = 0; bb < Ho; bb++)
          for (int c = 0; c < Wo; c++) {
            long yi = (((long)(n * Co + o) * Do + a) * Ho + bb) * Wo + c;
            double s = b[o];
            dbr[o] += R[yi];
            for (int i = 0; i < C; i++)
              for (int p = 0; p < k[0]; p++)
                for (int q = 0; q < k[1]; q++)
                  for (int u = 0; u < k[2]; u++) {
                    int id = a - pd[0] + p, ih = bb - pd[1] + q, iw = c - pd[2] + u;
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    long wi = (((long)(o * C + i) * k[0] + p) * k[1] + q) * k[2] + u;
                    long xi = (((long)(n * C + i) * D + id) * H + ih) * W + iw;
                    s += w[wi] * x[xi];
                    dxr[xi] += w[wi] * R[yi];
                    dwr[wi] += x[xi] * R[yi];
                  }
            yr[yi] = s;
          }
  SgnnTensor X = mk(dt, 5, xs, x), Wt = mk(dt, 5, ws, w), B = mk(dt, 1, bs, b), G = mk(dt, 5, ys, R), Y;
  OK(sgnn_tensor_set_requires_grad(X, 1));
  OK(sgnn_tensor_set_requires_grad(Wt, 1));
  OK(sgnn_tensor_set_requires_grad(B, 1));
  OK(sgnn_conv3d(X, Wt, B, st, pd, &Y));
  SgnnTensor ins[3] = {X, Wt, B}, gr[3] = {NULL, NULL, NULL};
  OK(sgnn_grad(1, &Y, &G, 3, ins, 0, gr));
  const double *ref[4] = {yr, dxr, dwr, dbr};
  SgnnTensor got[4] = {Y, gr[0], gr[1], gr[2]};
  const long cnt[4] = {ny, nx, nw, Co};
  const char *what[4] = {"y", "dX", "dW", "db"};
  for (int j = 0; j < 4; j++) {
    double *h = host(got[j]), err = 0, scale = 1;
    for (long i = 0; i < cnt[j]; i++) scale = fmax(scale, fabs(ref[j][i]));
    for (long i = 0; i < cnt[j]; i++) err = fmax(err, fabs(h[i] - ref[j][i]) / scale);
    CHECK(err < tol, "conv3d %s (%s, %s, N=%d C=%d Co=%d %dx%dx%d k=%d%d%d p=%d%d%d) vs loops: err %.3g", what[j], algo,
          dt == SGNN_F64 ? "f64" : "f32", N, C, Co, D, H, W, k[0], k[1], k[2], pd[0], pd[1], pd[2], err);
    if (getenv("SGNN_TEST_VERBOSE"))
      printf("conv %s %s %s C=%d Co=%d W=%d: err %.3g\n", algo, what[j], dt == SGNN_F64 ? "f64" : "f32", C, Co, W, err);
    free(h);
  }
  for (int j = 0; j < 3; j++) sgnn_tensor_free(&gr[j]);
  sgnn_tensor_free(&X);
  sgnn_tensor_free(&Wt);
  sgnn_tensor_free(&B);
  sgnn_tensor_free(&G);
  sgnn_tensor_free(&Y);
  free(x);
  free(w);
  free(b);
  free(R);
  free(yr);
  free(dxr);
  free(dwr);
  free(dbr);
  unsetenv("SGNN_CONV_DIRECT");
  unsetenv("SGNN_CONV_WINOGRAD");
  unsetenv("SGNN_NUM_THREADS");
}

static void test_conv_algo_cases(void)
{
  static const struct {
    int N, C, Co, D, H, W, k[3], p[3];
  } cs[] = {
      {2, 4, 32, 4, 16, 16, {3, 3, 3}, {1, 1, 1}}, /* the benchmark's first layer, smaller batch */
      {1, 3, 9, 3, 5, 19, {3, 3, 3}, {1, 0, 2}},   /* row/lane/channel remainders, asymmetric padding */
      {2, 5, 20, 2, 6, 5, {3, 2, 3}, {1, 1, 0}},   /* non-cubic kernel: 18 taps; 2-vector dW tile (f32) */
      {1, 2, 35, 3, 4, 9, {2, 3, 1}, {0, 1, 0}},   /* 6 taps; 4-vector dW tile, Co % 6 != 0 */
      {1, 2, 3, 3, 3, 4, {1, 1, 3}, {2, 0, 1}},    /* padding 2 > k-1 on axis 0: dX falls back to col2im */
      {2, 8, 9, 3, 5, 4, {3, 3, 3}, {1, 1, 1}},    /* several Winograd tiles along every axis */
      {1, 17, 20, 3, 5, 7, {3, 3, 3}, {1, 2, 0}},  /* Winograd by default: channels past a vector, odd extents */
  };
  const char *algos[5] = {"direct", "direct3", "gemm", "wino", "auto"};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (int a = 0; a < 5; a++) {
      int cubic = cs[i].k[0] == 3 && cs[i].k[1] == 3 && cs[i].k[2] == 3;
      if (a == 3 && (!cubic || cs[i].p[0] > 2)) continue; /* Winograd: 3x3x3 only */
      test_conv_algos(SGNN_F64, 1e-12, algos[a], cs[i].N, cs[i].C, cs[i].Co, cs[i].D, cs[i].H, cs[i].W, cs[i].k,
                      cs[i].p);
      test_conv_algos(SGNN_F32, 3e-5, algos[a], cs[i].N, cs[i].C, cs[i].Co, cs[i].D, cs[i].H, cs[i].W, cs[i].k,
                      cs[i].p);
    }
}

static void test_pool_upsample(void)
{
  /* 1x1x1x2x4 input */
  int xs[5] = {1, 1, 1, 2, 4};
  double x[8] = {1, 5, 2, 0, -1, 3, 7, 4};
  SgnnTensor X = mk(SGNN_F64, 5, xs, x), Y;
  int k[3] = {1, 2, 2};
  OK(sgnn_maxpool3d(X, k, k, &Y));
  double *y = host(Y);
  CHECK(y[0] == 5 && y[1] == 7, "maxpool values %g %g", y[0], y[1]);
  free(y);
  sgnn_tensor_free(&Y);
  OK(sgnn_avgpool3d(X, k, k, &Y));
  y = host(Y);
  CHECK(fabs(y[0] - 2) < 1e-15 && fabs(y[1] - 3.25) < 1e-15, "avgpool values %g %g", y[0], y[1]);
  free(y);
  sgnn_tensor_free(&Y);
  int f[3] = {1, 1, 2};
  OK(sgnn_upsample_nearest3d(X, f, &Y));
  y = host(Y);
  CHECK(y[0] == 1 && y[1] == 1 && y[2] == 5 && y[15] == 4, "nearest upsampling");
  free(y);
  sgnn_tensor_free(&Y);
  sgnn_tensor_free(&X);
  /* trilinear, align_corners=False: [0,1] x2 -> [0, .25, .75, 1] (PyTorch) */
  int ls[5] = {1, 1, 1, 1, 2};
  double lv[2] = {0, 1};
  X = mk(SGNN_F64, 5, ls, lv);
  OK(sgnn_upsample_trilinear3d(X, f, &Y));
  y = host(Y);
  CHECK(fabs(y[0]) < 1e-15 && fabs(y[1] - 0.25) < 1e-15 && fabs(y[2] - 0.75) < 1e-15 && fabs(y[3] - 1) < 1e-15,
        "trilinear upsampling %g %g %g %g", y[0], y[1], y[2], y[3]);
  free(y);
  sgnn_tensor_free(&Y);
  sgnn_tensor_free(&X);
}

/* interpolation reproduces a trilinear function exactly, and grid values at nodes */
static void test_interp(void)
{
  int D = 3, H = 4, W = 5, gs[5] = {1, 2, D, H, W}, ps[3] = {1, 4, 3};
  double g[2 * 60];
  for (int c = 0; c < 2; c++)
    for (int z = 0; z < D; z++)
      for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) g[((c * D + z) * H + y) * W + x] = c ? z * y * x : 1 + 2 * z - y + 0.5 * x;
  double p[12] = {0.3, 1.7, 2.2, 2, 3, 4, 1.5, 0.25, 3.9, 0, 0, 0};
  SgnnTensor G = mk(SGNN_F64, 5, gs, g), P = mk(SGNN_F64, 3, ps, p), Y;
  OK(sgnn_interp_trilinear(G, P, &Y));
  double *y = host(Y), err = 0;
  for (int i = 0; i < 4; i++) {
    double z = p[3 * i], yy = p[3 * i + 1], x = p[3 * i + 2];
    err = fmax(err, fabs(y[2 * i] - (1 + 2 * z - yy + 0.5 * x)));
    err = fmax(err, fabs(y[2 * i + 1] - z * yy * x));
  }
  CHECK(err < 1e-13, "interp_trilinear reproduces trilinear functions: err %.3g", err);
  free(y);
  sgnn_tensor_free(&Y);
  sgnn_tensor_free(&G);
  sgnn_tensor_free(&P);
}

static void test_norms(void)
{
  SgnnRng r;
  sgnn_rng_init(&r, 9);
  int xs[3] = {3, 4, 5};
  double x[60];
  for (int i = 0; i < 60; i++) x[i] = 3 + 2 * urand(&r);
  SgnnTensor X = mk(SGNN_F64, 3, xs, x), Y;
  OK(sgnn_group_norm(X, 2, NULL, NULL, 0.0, &Y));
  double *y = host(Y), worst = 0;
  for (int n = 0; n < 3; n++)
    for (int g = 0; g < 2; g++) {
      double m = 0, v = 0;
      for (int i = 0; i < 10; i++) m += y[n * 20 + g * 10 + i] / 10;
      for (int i = 0; i < 10; i++) v += pow(y[n * 20 + g * 10 + i] - m, 2) / 10;
      worst = fmax(worst, fmax(fabs(m), fabs(v - 1)));
    }
  CHECK(worst < 1e-12, "group norm gives zero mean, unit variance per group: %.3g", worst);
  free(y);
  sgnn_tensor_free(&Y);
  int cs[1] = {4};
  double zero[4] = {0, 0, 0, 0}, one[4] = {1, 1, 1, 1};
  SgnnTensor rm = mk(SGNN_F64, 1, cs, zero), rv = mk(SGNN_F64, 1, cs, one);
  OK(sgnn_batch_norm(X, NULL, NULL, rm, rv, 1, 0.1, 0.0, &Y));
  y = host(Y);
  double *hm = host(rm), *hv = host(rv);
  worst = 0;
  for (int c = 0; c < 4; c++) {
    double m = 0, v = 0, mx = 0, vx = 0;
    for (int n = 0; n < 3; n++)
      for (int s = 0; s < 5; s++) {
        m += y[n * 20 + c * 5 + s] / 15;
        mx += x[n * 20 + c * 5 + s] / 15;
      }
    for (int n = 0; n < 3; n++)
      for (int s = 0; s < 5; s++) {
        v += pow(y[n * 20 + c * 5 + s] - m, 2) / 15;
        vx += pow(x[n * 20 + c * 5 + s] - mx, 2) / 14;
      }
    worst = fmax(worst, fmax(fabs(m), fabs(v - 1)));
    worst = fmax(worst, fabs(hm[c] - 0.1 * mx));
    worst = fmax(worst, fabs(hv[c] - (0.9 + 0.1 * vx)));
  }
  CHECK(worst < 1e-12, "batch norm statistics and running averages: %.3g", worst);
  free(y);
  free(hm);
  free(hv);
  sgnn_tensor_free(&Y);
  sgnn_tensor_free(&rm);
  sgnn_tensor_free(&rv);
  sgnn_tensor_free(&X);
}

static double sig(double v) { return 1 / (1 + exp(-v)); }

static void test_lstm(void)
{
  SgnnRng r;
  sgnn_rng_init(&r, 11);
  int B = 2, I = 3, H = 2;
  double x[6], h[4], c[4], wi[24], wh[16], b[8];
  for (int i = 0; i < 6; i++) x[i] = urand(&r);
  for (int i = 0; i < 4; i++) {
    h[i] = urand(&r);
    c[i] = urand(&r);
  }
  for (int i = 0; i < 24; i++) wi[i] = urand(&r);
  for (int i = 0; i < 16; i++) wh[i] = urand(&r);
  for (int i = 0; i < 8; i++) b[i] = urand(&r);
  int xs[2] = {B, I}, hs[2] = {B, H}, wis[2] = {4 * H, I}, whs[2] = {4 * H, H}, bs[1] = {4 * H};
  SgnnTensor X = mk(SGNN_F64, 2, xs, x), Hh = mk(SGNN_F64, 2, hs, h), Cc = mk(SGNN_F64, 2, hs, c);
  SgnnTensor Wi = mk(SGNN_F64, 2, wis, wi), Wh = mk(SGNN_F64, 2, whs, wh), Bb = mk(SGNN_F64, 1, bs, b), ho, co;
  OK(sgnn_lstm_cell(X, Hh, Cc, Wi, Wh, Bb, &ho, &co));
  double *hh = host(ho), *cc = host(co), err = 0;
  for (int n = 0; n < B; n++)
    for (int j = 0; j < H; j++) {
      double gate[4];
      for (int q = 0; q < 4; q++) {
        int row = q * H + j;
        double s = b[row];
        for (int i = 0; i < I; i++) s += wi[row * I + i] * x[n * I + i];
        for (int i = 0; i < H; i++) s += wh[row * H + i] * h[n * H + i];
        gate[q] = s;
      }
      double cn = sig(gate[1]) * c[n * H + j] + sig(gate[0]) * tanh(gate[2]);
      double hn = sig(gate[3]) * tanh(cn);
      err = fmax(err, fmax(fabs(cn - cc[n * H + j]), fabs(hn - hh[n * H + j])));
    }
  CHECK(err < 1e-14, "lstm cell vs hand computation: %.3g", err);
  free(hh);
  free(cc);
  SgnnTensor all[8] = {X, Hh, Cc, Wi, Wh, Bb, ho, co};
  for (int i = 0; i < 8; i++) sgnn_tensor_free(&all[i]);
}

static void test_unary_values(void)
{
  int s[1] = {4};
  double x[4] = {-30, -0.5, 0.7, 40};
  SgnnTensor X = mk(SGNN_F64, 1, s, x), Y;
  OK(sgnn_softplus(X, &Y));
  double *y = host(Y), err = 0;
  for (int i = 0; i < 4; i++) err = fmax(err, fabs(y[i] - log1p(exp(x[i]))) / fmax(1e-300, log1p(exp(x[i]))));
  CHECK(err < 1e-14 && y[3] == 40, "softplus is accurate and does not overflow: %.3g", err);
  free(y);
  sgnn_tensor_free(&Y);
  { /* the vectorised kernel (vmath.h sg_softplus) against libm's log1p(exp(x)) on a sweep: measured 3 ulp
       at most (6.7e-16 relative); 1e-15 allows that and fails a lost term or a wrong ln2 split (>= 1e-12) */
    enum { NS = 20001 };
    int ns[1] = {NS};
    double *xs = malloc(NS * sizeof *xs), e2 = 0;
    for (int i = 0; i < NS; i++) xs[i] = -700 + 750.0 * i / (NS - 1) + 1e-3 * sin(i); /* irregular: every branch and reduction */
    SgnnTensor XS = mk(SGNN_F64, 1, ns, xs), YS;
    OK(sgnn_softplus(XS, &YS));
    double *ys = host(YS);
    for (int i = 0; i < NS; i++) e2 = fmax(e2, fabs(ys[i] - log1p(exp(xs[i]))) / log1p(exp(xs[i])));
    CHECK(e2 < 1e-15, "softplus over [-700, 50] within a few ulp of log1p(exp(x)): %.3g", e2);
    free(ys);
    free(xs);
    sgnn_tensor_free(&XS);
    sgnn_tensor_free(&YS);
    double xt[2] = {-800, -708.5};
    int n2[1] = {2};
    XS = mk(SGNN_F64, 1, n2, xt);
    OK(sgnn_softplus(XS, &YS));
    ys = host(YS);
    CHECK(ys[0] >= 0 && ys[0] < 1e-300 && ys[1] >= 0 && ys[1] < 1e-300, "softplus far below 0 is 0 (to 1e-300), never negative or NaN: %g %g", ys[0], ys[1]);
    free(ys);
    sgnn_tensor_free(&XS);
    sgnn_tensor_free(&YS);
  }
  OK(sgnn_sigmoid(X, &Y));
  y = host(Y);
  CHECK(fabs(y[1] - sig(-0.5)) < 1e-15 && y[0] > 0 && y[3] == 1.0, "sigmoid values");
  free(y);
  sgnn_tensor_free(&Y);
  int ms[2] = {2, 2};
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  SgnnTensor A = mk(SGNN_F64, 2, ms, a), Bm = mk(SGNN_F64, 2, ms, b), C;
  OK(sgnn_matmul(A, Bm, 0, 1, &C)); /* A B^T = [[17,23],[39,53]] */
  y = host(C);
  CHECK(y[0] == 17 && y[1] == 23 && y[2] == 39 && y[3] == 53, "matmul A B^T values");
  free(y);
  SgnnTensor L;
  OK(sgnn_mse_loss(A, Bm, &L));
  CHECK(t_item(L) == 16, "mse value");
  sgnn_tensor_free(&L);
  OK(sgnn_l1_loss(A, Bm, &L));
  CHECK(t_item(L) == 4, "l1 value");
  sgnn_tensor_free(&L);
  sgnn_tensor_free(&C);
  sgnn_tensor_free(&A);
  sgnn_tensor_free(&Bm);
  sgnn_tensor_free(&X);
}

/* grad-ready hook: each parameter fires once, last layer first, and its
 * gradient is already final when it fires */
static struct {
  SgnnTensor who[8];
  double first[8];
  int n;
} fired;
static int announced;
static void on_ready(SgnnTensor leaf, int final, void *ctx)
{
  (void)ctx;
  if (!final) {
    CHECK(fired.n == 0, "announcements come before any completion");
    announced++;
    return;
  }
  double *h = host(sgnn_tensor_grad(leaf));
  fired.who[fired.n] = leaf;
  fired.first[fired.n++] = h[0];
  free(h);
}
static void test_ready_hook(void)
{
  SgnnParams P;
  SgnnTensor W0, b0, W1, b1;
  int s0[2] = {4, 3}, s1[1] = {4}, s2[2] = {2, 4}, s3[1] = {2}, xs[2] = {5, 3};
  OK(sgnn_params_create(BE, SGNN_F64, &P));
  OK(sgnn_params_add(P, "W0", 2, s0, &W0));
  OK(sgnn_params_add(P, "b0", 1, s1, &b0));
  OK(sgnn_params_add(P, "W1", 2, s2, &W1));
  OK(sgnn_params_add(P, "b1", 1, s3, &b1));
  OK(sgnn_params_setup(P));
  SgnnRng r;
  sgnn_rng_init(&r, 4);
  OK(sgnn_init_normal(sgnn_params_values(P), 0, 1, &r));
  SgnnTensor x, h, a, y, y2, L;
  OK(sgnn_tensor_zeros(BE, SGNN_F64, 2, xs, &x));
  OK(sgnn_init_normal(x, 0, 1, &r));
  OK(sgnn_linear(x, W0, b0, &h));
  OK(sgnn_tanh(h, &a));
  OK(sgnn_linear(a, W1, b1, &y));
  OK(sgnn_mul(y, y, &y2));
  OK(sgnn_sum(y2, 0, NULL, 0, &L));
  OK(sgnn_params_zero_grad(P));
  fired.n = 0;
  sgnn_set_grad_ready_hook(on_ready, NULL);
  OK(sgnn_backward(L));
  sgnn_set_grad_ready_hook(NULL, NULL);
  CHECK(fired.n == 4 && announced == 4, "4 parameters announced and fired, got %d, %d", announced, fired.n);
  int pos[4] = {-1, -1, -1, -1};
  SgnnTensor ps[4] = {W0, b0, W1, b1};
  for (int i = 0; i < fired.n; i++)
    for (int k = 0; k < 4; k++)
      if (fired.who[i] == ps[k]) {
        double *g = host(sgnn_tensor_grad(ps[k]));
        CHECK(g[0] == fired.first[i], "gradient of parameter %d final when its hook fired", k);
        free(g);
        pos[k] = i;
      }
  CHECK(pos[2] >= 0 && pos[0] >= 0 && pos[2] < pos[0] && pos[3] < pos[1], "last layer ready first: %d %d %d %d", pos[0],
        pos[1], pos[2], pos[3]);
  SgnnTensor *all[] = {&x, &h, &a, &y, &y2, &L};
  for (int i = 0; i < 6; i++) sgnn_tensor_free(all[i]);
  sgnn_params_destroy(&P);
}

/* Every CPU conv path must give bit-identical values and gradients for 1 and 3 threads: forward
 * tiles/outputs are independent, the direct weight gradient splits by input channel, and the Winograd
 * weight gradient sums its tiles in a fixed number of groups added in group order (conv_winograd.c). */
static void test_conv_threads(void)
{
  const int xs[5] = {3, 20, 5, 6, 9}, ws[5] = {24, 20, 3, 3, 3}, bs[1] = {24}, st[3] = {1, 1, 1}, pd[3] = {1, 1, 1};
  const long nx = 3L * 20 * 5 * 6 * 9, nw = 24L * 20 * 27;
  double *x = malloc(sizeof(double) * nx), *w = malloc(sizeof(double) * nw), b[24];
  SgnnRng r;
  sgnn_rng_init(&r, 9);
  for (long i = 0; i < nx; i++) x[i] = urand(&r);
  for (long i = 0; i < nw; i++) w[i] = urand(&r);
  for (int i = 0; i < 24; i++) b[i] = urand(&r);
  for (int a = 0; a < 2; a++) { /* a = 0: the default choice (Winograd here); 1: direct */
    double *out[2][4];
    const long cnt[4] = {3L * 24 * 5 * 6 * 9, nx, nw, 24};
    for (int k = 0; k < 2; k++) {
      setenv("SGNN_NUM_THREADS", k ? "3" : "1", 1);
      setenv("SGNN_CONV_WINOGRAD", a ? "0" : "", 1);
      SgnnTensor X = mk(SGNN_F32, 5, xs, x), Wt = mk(SGNN_F32, 5, ws, w), B = mk(SGNN_F32, 1, bs, b), Y, Y2, L;
      SgnnTensor ins[3] = {X, Wt, B}, gr[3] = {NULL, NULL, NULL};
      for (int j = 0; j < 3; j++) OK(sgnn_tensor_set_requires_grad(ins[j], 1));
      OK(sgnn_conv3d(X, Wt, B, st, pd, &Y));
      OK(sgnn_mul(Y, Y, &Y2)); /* loss = sum y^2: the output gradient 2y differs everywhere */
      OK(sgnn_sum(Y2, 0, NULL, 0, &L));
      OK(sgnn_grad(1, &L, NULL, 3, ins, 0, gr));
      SgnnTensor got[4] = {Y, gr[0], gr[1], gr[2]};
      for (int j = 0; j < 4; j++) out[k][j] = host(got[j]);
      SgnnTensor fr[8] = {X, Wt, B, Y, Y2, L, gr[0], gr[1]};
      for (int j = 0; j < 8; j++) sgnn_tensor_free(&fr[j]);
      sgnn_tensor_free(&gr[2]);
    }
    const char *what[4] = {"y", "dX", "dW", "db"};
    for (int j = 0; j < 4; j++) {
      long bad = 0;
      for (long i = 0; i < cnt[j]; i++) bad += memcmp(&out[0][j][i], &out[1][j][i], sizeof(double)) != 0;
      CHECK(bad == 0, "conv3d (%s) %s differs between 1 and 3 threads in %ld of %ld values", a ? "direct" : "default",
            what[j], bad, cnt[j]);
    }
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 4; j++) free(out[k][j]);
  }
  unsetenv("SGNN_NUM_THREADS");
  unsetenv("SGNN_CONV_WINOGRAD");
  free(x);
  free(w);
}

/* Element-wise ops longer than two SGNN_PIECEs run in pieces on the threads (backend_cpu.c, ops_loss.c):
 * values and gradients must be bit-identical for 1 and 3 threads (element-wise: the same arithmetic;
 * the MSE sum: pieces summed in piece order whatever the thread count), and the MSE must agree with a
 * plain double sum to rounding (f32 inputs: tol 1e-12 relative; the sum is in double). */
static void test_threaded_elementwise(void)
{
  const long n = 5 * 32768 + 123; /* 5 pieces of SGNN_PIECE = 32768 (sgnn_impl.h) and a partial one */
  int sh[1] = {(int)n};
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), ref = 0;
  SgnnRng r;
  sgnn_rng_init(&r, 5);
  for (long i = 0; i < n; i++) {
    a[i] = urand(&r);
    b[i] = urand(&r);
  }
  double *out[2][5];
  for (int k = 0; k < 2; k++) {
    setenv("SGNN_NUM_THREADS", k ? "3" : "1", 1);
    SgnnTensor A = mk(SGNN_F32, 1, sh, a), B = mk(SGNN_F32, 1, sh, b), R, T, L, g[2] = {NULL, NULL};
    OK(sgnn_tensor_set_requires_grad(A, 1));
    OK(sgnn_relu(A, &R));
    OK(sgnn_tanh(R, &T));
    OK(sgnn_mse_loss(T, B, &L));
    SgnnTensor ins[2] = {A, R};
    OK(sgnn_grad(1, &L, NULL, 2, ins, 0, g));
    out[k][0] = host(R);
    out[k][1] = host(T);
    out[k][2] = host(L);
    out[k][3] = host(g[0]);
    out[k][4] = host(g[1]);
    SgnnTensor fr[7] = {A, B, R, T, L, g[0], g[1]};
    for (int j = 0; j < 7; j++) sgnn_tensor_free(&fr[j]);
  }
  unsetenv("SGNN_NUM_THREADS");
  const long cnt[5] = {n, n, 1, n, n};
  const char *what[5] = {"relu", "tanh", "mse", "d/dx", "d/drelu"};
  for (int j = 0; j < 5; j++) {
    long bad = 0;
    for (long i = 0; i < cnt[j]; i++) bad += memcmp(&out[0][j][i], &out[1][j][i], sizeof(double)) != 0;
    CHECK(bad == 0, "threaded element-wise: %s differs between 1 and 3 threads in %ld of %ld values", what[j], bad, cnt[j]);
  }
  ref = 0;
  for (long i = 0; i < n; i++) {
    double t = (double)(float)out[0][1][i] - (double)(float)b[i];
    ref += t * t;
  }
  ref /= (double)n;
  CHECK(fabs(out[0][2][0] - ref) <= 1e-6 * ref, "threaded mse %.9g vs plain double sum %.9g", out[0][2][0], ref);
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 5; j++) free(out[k][j]);
  free(a);
  free(b);
}

int main(int argc, char **argv)
{
  BE = t_backend(argc, argv);
  sgnn_set_log(NULL);
  test_basics();
  test_slab();
  test_ready_hook();
  {
    const int k1[3] = {3, 2, 3}, s1[3] = {1, 2, 1}, p1[3] = {1, 0, 1}, k3[3] = {3, 3, 3}, s3[3] = {1, 1, 1},
              p3[3] = {1, 0, 2};
    test_conv_forward(SGNN_F64, 1e-13, 3, 2, k1, s1, p1); /* im2col + GEMM path */
    test_conv_forward(SGNN_F32, 1e-5, 3, 2, k1, s1, p1);  /* 54-term f32 sums of O(1) values */
    /* 3x3x3 stride 1 with >= 8 channels: the direct path by default (and
     * Winograd in test_conv_algo_cases); Winograd's transforms add a few
     * roundings (216-term sums of O(1) values: f32 2e-5) */
    test_conv_forward(SGNN_F64, 1e-12, 8, 9, k3, s3, p3);
    test_conv_forward(SGNN_F32, 2e-5, 8, 9, k3, s3, p3);
    const int p4[3] = {1, 1, 1};
    conv_W = 37;
    test_conv_forward(SGNN_F64, 1e-12, 8, 8, k3, s3, p4);
    conv_W = 4;
  }
  SgnnBackend *cpu = NULL;
  if (!sgnn_backend_get("cpu", &cpu) && BE == cpu) test_conv_algo_cases(); /* CPU algorithms; others have one */
  test_pool_upsample();
  test_interp();
  test_norms();
  test_lstm();
  test_unary_values();
  if (!sgnn_backend_get("cpu", &cpu) && BE == cpu) test_threaded_elementwise();
  if (!sgnn_backend_get("cpu", &cpu) && BE == cpu) test_conv_threads();
  return t_summary("test_tensor");
}
