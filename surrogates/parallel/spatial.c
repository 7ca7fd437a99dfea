/* spatial.c -- spatially partitioned layers on a sample's local slab (see
 * sgpar.h): conv3d with halo exchange overlapped with the interior, batch
 * norm with reduced statistics, max-pooling, nearest upsampling and channel
 * concatenation. All are compositions of the engine's ops and the two
 * communicating ops of halo.c, so the engine's tape differentiates them. */
#include "sgpar_impl.h"
#include <stdlib.h>
#include <string.h>

/* One split axis. Planes 0..h-1 and n-h..n-1 of the output need the
 * neighbours' planes; the n-2h planes between need only local data and are
 * convolved while the halo travels, in `chunks` pieces with a progress node
 * after each (MPI_Testall forward and backward: Open MPI moves rendezvous
 * messages only inside MPI calls). The two edge convolutions then see (halo,
 * 2h own planes), the exact input window of those output planes. Slabs thinner
 * than 2h+1 planes, and chunks 0 (blocking), wait for the halo and convolve
 * (halo, slab, halo). p2 is the padding with 0 on the split axis (the halo is
 * its padding). Everything reads the halo's anchored alias of x, so in backward
 * the halo's gradient travels while the interior's backward runs too. */
#define SGPAR_MAXCHUNKS 64

/* Output planes [o0, o1) along axis a of the convolution of xa, whose padding along a is the halo
 * (input planes [o0 - h, o1 + h) are read), passed through a progress node of the exchange H in
 * flight (so it moves forward and backward while this piece computes). */
static int conv_piece(SgparHalo H, SgnnTensor xa, int a, int h, int o0, int o1, SgnnTensor w, SgnnTensor bias,
                      const int stride[3], const int p2[3], SgnnTensor *out)
{
  SgnnTensor in = NULL, y = NULL;
  int rc = 0;
  if (sgnn_slice(xa, a, o0 - h, o1 + h, &in) || sgnn_conv3d(in, w, bias, stride, p2, &y))
    rc = sgpar_fail(SGNN_ERR_BACKEND, "sgpar_conv3d: %s", sgnn_last_error());
  if (!rc) rc = sgpar_halo_progress(H, y, out);
  sgnn_tensor_free(&in);
  sgnn_tensor_free(&y);
  return rc;
}

static int conv_overlap(SgparGrid g, const SgparAxisSplit *s, int h, SgnnTensor x, SgnnTensor w, SgnnTensor bias,
                        const int stride[3], const int p2[3], SgnnTensor *out)
{
  int a = s->axis, n = s->n, rc, K = sgpar_grid_overlap_chunks(g), ni = n - 2 * h;
  SgparHalo H;
  SgnnTensor xa = NULL, hl = NULL, lo = NULL, hi = NULL, e0 = NULL, e1 = NULL, c0 = NULL, c1 = NULL, parts[SGPAR_MAXCHUNKS + 2] = {NULL};
  if (K > SGPAR_MAXCHUNKS) K = SGPAR_MAXCHUNKS;
  if (ni < 1) K = 0;
  if (K > ni) K = ni;
  rc = sgpar_halo_begin(g, s, x, h, &H);
  if (rc) return rc;
  xa = sgnn_tensor_ref(sgpar_halo_source(H));
  for (int j = 0; j < K; j++) {
    rc = conv_piece(H, xa, a, h, h + ni * j / K, h + ni * (j + 1) / K, w, bias, stride, p2, &parts[1 + j]);
    if (rc) { /* still complete the exchange the neighbours take part in */
      SgnnTensor dummy = NULL;
      sgpar_halo_end(&H, &dummy);
      sgnn_tensor_free(&dummy);
      goto done;
    }
  }
  rc = sgpar_halo_end(&H, &hl);
  if (rc) goto done;
  NNTRYG("sgpar_conv3d", sgnn_slice(hl, a, 0, h, &lo));
  NNTRYG("sgpar_conv3d", sgnn_slice(hl, a, h, 2 * h, &hi));
  if (K > 0) {
    SgnnTensor l2[2], u2[2];
    NNTRYG("sgpar_conv3d", sgnn_slice(xa, a, 0, 2 * h, &e0));
    NNTRYG("sgpar_conv3d", sgnn_slice(xa, a, n - 2 * h, n, &e1));
    l2[0] = lo;
    l2[1] = e0;
    u2[0] = e1;
    u2[1] = hi;
    NNTRYG("sgpar_conv3d", sgnn_concat(2, l2, a, &c0));
    NNTRYG("sgpar_conv3d", sgnn_concat(2, u2, a, &c1));
    NNTRYG("sgpar_conv3d", sgnn_conv3d(c0, w, bias, stride, p2, &parts[0]));
    NNTRYG("sgpar_conv3d", sgnn_conv3d(c1, w, bias, stride, p2, &parts[K + 1]));
    NNTRYG("sgpar_conv3d", sgnn_concat(K + 2, parts, a, out));
  } else {
    SgnnTensor p3[3] = {lo, xa, hi};
    NNTRYG("sgpar_conv3d", sgnn_concat(3, p3, a, &c0));
    NNTRYG("sgpar_conv3d", sgnn_conv3d(c0, w, bias, stride, p2, out));
  }
done:;
  SgnnTensor *tmp[] = {&xa, &hl, &lo, &hi, &e0, &e1, &c0, &c1};
  for (size_t j = 0; j < sizeof tmp / sizeof *tmp; j++) sgnn_tensor_free(tmp[j]);
  for (int j = 0; j < K + 2; j++) sgnn_tensor_free(&parts[j]);
  return rc;
}

/* Two split axes A, B (halo widths hA, hB >= 1). The halo along A travels while the deep interior
 * (output planes at least hA, hB from every slab face) is convolved in `chunks` pieces along A; then
 * the halo along B -- sent from the slab padded with A's halo, so the corner blocks come with it,
 * as in the blocking path -- travels while the two A-edge strips of the B-interior are convolved
 * (they need A's halo, which has arrived, but not B's); then the two B-edge strips (the full padded
 * A extent). The output is assembled as [B-edge | [A-edge | interior | A-edge] | B-edge]. The
 * messages and their order are those of the blocking path, forward and backward (the engine runs
 * the tape in reverse: B's gradient travels during the A-edge strips' backward, A's during the
 * interior's), so a neighbour that takes the blocking path (a thin slab) still matches. */
static int conv_overlap2(SgparGrid g, const SgparSplit *s, const int h[2], SgnnTensor x, SgnnTensor w, SgnnTensor bias,
                         const int stride[3], const int p2[3], SgnnTensor *out)
{
  const SgparAxisSplit *sa = &s->ax[0], *sb = &s->ax[1];
  int A = sa->axis, B = sb->axis, hA = h[0], hB = h[1], nA = sa->n, nB = sb->n, niA = nA - 2 * hA, rc;
  int K = sgpar_grid_overlap_chunks(g);
  SgparHalo HA = NULL, HB = NULL;
  SgnnTensor xa = NULL, hlA = NULL, loA = NULL, hiA = NULL, xpA = NULL, xb = NULL, hlB = NULL, loB = NULL,
             hiB = NULL, t0 = NULL, t1 = NULL, band = NULL, in = NULL, eb[2] = {NULL, NULL},
             parts[SGPAR_MAXCHUNKS + 2] = {NULL};
  if (K > SGPAR_MAXCHUNKS) K = SGPAR_MAXCHUNKS;
  if (K > niA) K = niA;
  rc = sgpar_halo_begin(g, sa, x, hA, &HA);
  if (rc) return rc;
  xa = sgnn_tensor_ref(sgpar_halo_source(HA));
  /* the deep interior, in K pieces along A, while A's halo travels */
  for (int j = 0; j < K && !rc; j++) rc = conv_piece(HA, xa, A, hA, hA + niA * j / K, hA + niA * (j + 1) / K, w, bias, stride, p2, &parts[1 + j]);
  { /* complete A's exchange even after an error: the neighbours take part in it */
    int e = sgpar_halo_end(&HA, &hlA);
    if (!rc) rc = e;
  }
  if (rc) goto done;
  NNTRYG("sgpar_conv3d", sgnn_slice(hlA, A, 0, hA, &loA));
  NNTRYG("sgpar_conv3d", sgnn_slice(hlA, A, hA, 2 * hA, &hiA));
  {
    SgnnTensor p3[3] = {loA, xa, hiA};
    NNTRYG("sgpar_conv3d", sgnn_concat(3, p3, A, &xpA)); /* [hA + nA + hA] along A */
  }
  rc = sgpar_halo_begin(g, sb, xpA, hB, &HB);
  if (rc) goto done;
  xb = sgnn_tensor_ref(sgpar_halo_source(HB));
  /* the A-edge strips of the B-interior (input: 2 hA + hA planes of the padded slab), while B's halo travels */
  for (int e = 0; e < 2 && !rc; e++) { /* output planes [a0, a0 + hA) = planes [a0 + hA, a0 + 2 hA) of the padded slab */
    int a0 = e ? nA - hA : 0;
    rc = conv_piece(HB, xb, A, hA, a0 + hA, a0 + 2 * hA, w, bias, stride, p2, &parts[e ? K + 1 : 0]);
  }
  {
    int e = sgpar_halo_end(&HB, &hlB);
    if (!rc) rc = e;
  }
  if (rc) goto done;
  NNTRYG("sgpar_conv3d", sgnn_concat(K + 2, parts, A, &band)); /* output B-interior, all of A */
  NNTRYG("sgpar_conv3d", sgnn_slice(hlB, B, 0, hB, &loB));
  NNTRYG("sgpar_conv3d", sgnn_slice(hlB, B, hB, 2 * hB, &hiB));
  /* the B-edge strips over the padded A extent: (halo, 2 hB own planes) and (2 hB own planes, halo) */
  NNTRYG("sgpar_conv3d", sgnn_slice(xb, B, 0, 2 * hB, &t0));
  NNTRYG("sgpar_conv3d", sgnn_slice(xb, B, nB - 2 * hB, nB, &t1));
  for (int e = 0; e < 2; e++) {
    SgnnTensor c2[2] = {e ? t1 : loB, e ? hiB : t0};
    NNTRYG("sgpar_conv3d", sgnn_concat(2, c2, B, &in));
    NNTRYG("sgpar_conv3d", sgnn_conv3d(in, w, bias, stride, p2, &eb[e]));
    sgnn_tensor_free(&in);
  }
  {
    SgnnTensor p3[3] = {eb[0], band, eb[1]};
    NNTRYG("sgpar_conv3d", sgnn_concat(3, p3, B, out));
  }
done:;
  SgnnTensor *tmp[] = {&xa, &hlA, &loA, &hiA, &xpA, &xb, &hlB, &loB, &hiB, &t0, &t1, &band, &in, &eb[0], &eb[1]};
  for (size_t j = 0; j < sizeof tmp / sizeof *tmp; j++) sgnn_tensor_free(tmp[j]);
  for (int j = 0; j < K + 2; j++) sgnn_tensor_free(&parts[j]);
  return rc;
}

int sgpar_conv3d(SgparGrid g, const SgparSplit *s, SgnnTensor x, SgnnTensor w, SgnnTensor bias, const int stride[3],
                 const int pad[3], SgnnTensor *out)
{
  int rc = sgpar_check_slab("sgpar_conv3d", s, x);
  if (rc) return rc;
  if (!g || !w || !stride || !pad || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_conv3d: NULL argument");
  if (sgnn_tensor_ndim(w) != 5) return sgpar_fail(SGNN_ERR_SHAPE, "sgpar_conv3d: weight must be [Co,Ci,kd,kh,kw]");
  int h[2] = {0, 0}, p2[3] = {pad[0], pad[1], pad[2]}, any = 0;
  for (int k = 0; k < s->naxes; k++) {
    int a = s->ax[k].axis, i = a - 2, kk = sgnn_tensor_shape(w)[a];
    if (stride[i] != 1 || kk % 2 == 0 || pad[i] != (kk - 1) / 2)
      return sgpar_fail(SGNN_ERR_UNSUPPORTED,
                        "sgpar_conv3d: along the split axis %d the convolution must keep the extent (odd kernel, "
                        "stride 1, padding (k-1)/2); got kernel %d, stride %d, padding %d",
                        a, kk, stride[i], pad[i]);
    h[k] = (kk - 1) / 2;
    p2[i] = 0; /* the halo is the padding along a split axis */
    any |= h[k] > 0;
  }
  if (!any || sgpar_grid_spatial_size(g) == 1) {
    NNCHK("sgpar_conv3d", sgnn_conv3d(x, w, bias, stride, pad, out));
    return 0;
  }
  SgparTrace *trace = sgpar_grid_trace_ptr(g);
  int layer = sgpar_trace_new_layer(trace);
  double t0 = MPI_Wtime();
  if (s->naxes == 1) {
    rc = conv_overlap(g, &s->ax[0], h[0], x, w, bias, stride, p2, out);
    sgpar_trace_add(trace, layer, SGPAR_EV_CONV_FWD, t0, MPI_Wtime());
    return rc;
  }
  /* two axes, both with a halo and slabs thick enough for an interior: overlapped */
  if (h[0] && h[1] && sgpar_grid_overlap_chunks(g) > 0 && s->ax[0].n > 2 * h[0] && s->ax[1].n > 2 * h[1]) {
    rc = conv_overlap2(g, s, h, x, w, bias, stride, p2, out);
    sgpar_trace_add(trace, layer, SGPAR_EV_CONV_FWD, t0, MPI_Wtime());
    return rc;
  }
  /* blocking: halo along the first, then along the second on the padded
   * slab (it carries the first halo's planes: the corners arrive too) */
  SgnnTensor xp = sgnn_tensor_ref(x);
  for (int k = 0; k < 2 && !rc; k++) {
    SgnnTensor t = NULL;
    if (!h[k]) continue;
    rc = sgpar_halo(g, &s->ax[k], xp, h[k], &t);
    sgnn_tensor_free(&xp);
    xp = t;
  }
  if (!rc && sgnn_conv3d(xp, w, bias, stride, p2, out)) rc = sgpar_fail(SGNN_ERR_BACKEND, "sgpar_conv3d: %s", sgnn_last_error());
  sgnn_tensor_free(&xp);
  sgpar_trace_add(trace, layer, SGPAR_EV_CONV_FWD, t0, MPI_Wtime());
  return rc;
}

/* sum over N and the spatial axes, keeping [1,C,1,1,1]; reduced over comm unless local */
static int channel_sum(MPI_Comm comm, SgparTrace *trace, int layer, int local, SgnnTensor x, SgnnTensor *out)
{
  static const int axes[4] = {0, 2, 3, 4};
  SgnnTensor s;
  NNCHK("sgpar_batch_norm", sgnn_sum(x, 4, axes, 1, &s));
  if (local) {
    *out = s;
    return 0;
  }
  int rc = sgpar_allreduce_sum_traced(comm, trace, layer, s, out);
  sgnn_tensor_free(&s);
  return rc;
}

/* y = (x - mean) / sqrt(var + eps) * gamma + beta with the mean and the
 * (biased) variance of each channel over every rank's values: two passes
 * (mean, then squared deviations), each one allreduce, as the serial
 * sgnn_batch_norm normalises with the biased variance. */
int sgpar_batch_norm(SgparGrid g, SgnnTensor x, SgnnTensor gamma, SgnnTensor beta, SgnnTensor running_mean,
                     SgnnTensor running_var, int across_data, double momentum, double eps, SgnnTensor *out)
{
  if (!g || !x || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_batch_norm: NULL argument");
  if (sgnn_tensor_ndim(x) != 5) return sgpar_fail(SGNN_ERR_SHAPE, "sgpar_batch_norm: input must be [N,C,D,H,W]");
  if (eps < 0) return sgpar_fail(SGNN_ERR_ARG, "sgpar_batch_norm: negative eps %g", eps);
  MPI_Comm comm = across_data ? sgpar_grid_stats_comm(g) : sgpar_grid_spatial_comm(g);
  int local = (sgpar_test_fault() & SGPAR_FAULT_BN_REDUCE) != 0; /* test-only: statistics of the slab alone */
  int C = sgnn_tensor_shape(x)[1], cs[5] = {1, C, 1, 1, 1}, rc = 0;
  long cnt = sgnn_tensor_numel(x) / C, M = cnt;
  if (!local) MPICHK(MPI_Allreduce(&cnt, &M, 1, MPI_LONG, MPI_SUM, comm));
  if (M < 2) return sgpar_fail(SGNN_ERR_SHAPE, "sgpar_batch_norm: training needs more than one value per channel, got %ld", M);
  SgnnTensor S1 = NULL, mean = NULL, xc = NULL, sq = NULL, S2 = NULL, ve = NULL, inv = NULL, xh = NULL, gr = NULL,
             y = NULL, br = NULL;
  SgparTrace *trace = sgpar_grid_trace_ptr(g);
  int layer = sgpar_trace_new_layer(trace);
  rc = channel_sum(comm, trace, layer, local, x, &S1);
  if (rc) goto done;
  NNTRYG("sgpar_batch_norm", sgnn_affine(S1, 1.0 / (double)M, 0.0, &mean));
  NNTRYG("sgpar_batch_norm", sgnn_sub(x, mean, &xc));
  NNTRYG("sgpar_batch_norm", sgnn_mul(xc, xc, &sq));
  rc = channel_sum(comm, trace, layer, local, sq, &S2);
  if (rc) goto done;
  NNTRYG("sgpar_batch_norm", sgnn_affine(S2, 1.0 / (double)M, eps, &ve));
  NNTRYG("sgpar_batch_norm", sgnn_pow(ve, -0.5, &inv));
  NNTRYG("sgpar_batch_norm", sgnn_mul(xc, inv, &xh));
  if (gamma) {
    NNTRYG("sgpar_batch_norm", sgnn_reshape(gamma, 5, cs, &gr));
    NNTRYG("sgpar_batch_norm", sgnn_mul(xh, gr, &y));
  } else
    y = sgnn_tensor_ref(xh);
  if (beta) {
    NNTRYG("sgpar_batch_norm", sgnn_reshape(beta, 5, cs, &br));
    NNTRYG("sgpar_batch_norm", sgnn_add(y, br, out));
  } else
    *out = sgnn_tensor_ref(y);
  if (running_mean && running_var) { /* statistics are not part of the graph; torch's convention */
    double *hm = malloc(sizeof(double) * 4 * C);
    if (!hm) {
      rc = sgpar_fail(SGNN_ERR_MEM, "sgpar_batch_norm: out of memory");
      goto done;
    }
    double *hv = hm + C, *rm = hv + C, *rv = rm + C;
    int bad = sgnn_tensor_to_f64(mean, hm) || sgnn_tensor_to_f64(S2, hv) || sgnn_tensor_to_f64(running_mean, rm) ||
              sgnn_tensor_to_f64(running_var, rv);
    for (int c = 0; !bad && c < C; c++) {
      rm[c] = (1 - momentum) * rm[c] + momentum * hm[c];
      rv[c] = (1 - momentum) * rv[c] + momentum * (hv[c] / (double)M) * (double)M / (double)(M - 1);
    }
    if (!bad) bad = sgnn_tensor_set_f64(running_mean, rm) || sgnn_tensor_set_f64(running_var, rv);
    free(hm);
    if (bad) rc = sgpar_fail(SGNN_ERR_BACKEND, "sgpar_batch_norm: running statistics: %s", sgnn_last_error());
  }
done:
  if (rc) sgnn_tensor_free(out);
  SgnnTensor *tmp[] = {&S1, &mean, &xc, &sq, &S2, &ve, &inv, &xh, &gr, &y, &br};
  for (size_t j = 0; j < sizeof tmp / sizeof *tmp; j++) sgnn_tensor_free(tmp[j]);
  return rc;
}

/* a split scaled by num/den on every split axis (pooling: 1/f, upsampling: f/1) */
static void scale_split(const SgparSplit *s, const int *num, const int *den, SgparSplit *so)
{
  SgparSplit t = *s;
  for (int k = 0; k < s->naxes; k++) {
    SgparAxisSplit *q = &t.ax[k];
    int i = q->axis - 2;
    q->global = q->global / den[i] * num[i];
    q->offset = q->offset / den[i] * num[i];
    q->n = q->n / den[i] * num[i];
    q->min_n = q->min_n / den[i] * num[i];
    q->gcd = q->gcd / den[i] * num[i];
  }
  *so = t;
}

int sgpar_maxpool3d(const SgparSplit *s, SgnnTensor x, const int k[3], SgparSplit *so, SgnnTensor *out)
{
  static const int ones[3] = {1, 1, 1};
  int rc = sgpar_check_slab("sgpar_maxpool3d", s, x);
  if (rc) return rc;
  if (!k || !so || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_maxpool3d: NULL argument");
  for (int j = 0; j < s->naxes; j++) {
    const SgparAxisSplit *q = &s->ax[j];
    int f = k[q->axis - 2];
    /* gcd is the same on every rank: all ranks accept or all refuse */
    if (f < 1 || q->gcd % f)
      return sgpar_fail(SGNN_ERR_UNSUPPORTED,
                        "sgpar_maxpool3d: pooling window %d along split axis %d does not divide every slab (their gcd "
                        "is %d); choose slab sizes that are multiples of %d",
                        f, q->axis, q->gcd, f);
  }
  NNCHK("sgpar_maxpool3d", sgnn_maxpool3d(x, k, k, out));
  scale_split(s, ones, k, so);
  return 0;
}

int sgpar_upsample_nearest3d(const SgparSplit *s, SgnnTensor x, const int factor[3], SgparSplit *so, SgnnTensor *out)
{
  static const int ones[3] = {1, 1, 1};
  int rc = sgpar_check_slab("sgpar_upsample_nearest3d", s, x);
  if (rc) return rc;
  if (!factor || !so || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_upsample_nearest3d: NULL argument");
  /* nearest copies of each plane stay on the plane's owner: no communication */
  NNCHK("sgpar_upsample_nearest3d", sgnn_upsample_nearest3d(x, factor, out));
  scale_split(s, factor, ones, so);
  return 0;
}

int sgpar_concat(int n, const SgparSplit *s, SgnnTensor *xs, SgnnTensor *out)
{
  if (n < 1 || !s || !xs || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_concat: bad arguments");
  for (int i = 0; i < n; i++) {
    int rc = sgpar_check_slab("sgpar_concat", &s[i], xs[i]);
    if (rc) return rc;
    int same = s[i].naxes == s[0].naxes;
    for (int k = 0; same && k < s[0].naxes; k++) {
      const SgparAxisSplit *p = &s[i].ax[k], *q = &s[0].ax[k];
      same = p->axis == q->axis && p->global == q->global && p->offset == q->offset && p->n == q->n;
    }
    if (!same) return sgpar_fail(SGNN_ERR_SHAPE, "sgpar_concat: input %d is split differently from input 0", i);
  }
  NNCHK("sgpar_concat", sgnn_concat(n, xs, 1, out));
  return 0;
}

int sgpar_gather(SgparGrid g, const SgparSplit *s, SgnnTensor x, SgnnTensor *out)
{
  int rc = sgpar_check_slab("sgpar_gather", s, x);
  if (rc) return rc;
  if (!g || !out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_gather: NULL argument");
  /* an allreduce of zero-padded slabs moves S times the bytes of an
   * allgather, but its backward (allreduce, then the pad's adjoint: a slice)
   * comes from the two ops' own backward passes */
  SgnnTensor t = sgnn_tensor_ref(x);
  for (int k = 0; k < s->naxes; k++) {
    const SgparAxisSplit *q = &s->ax[k];
    SgnnTensor p;
    if (sgnn_pad_axis(t, q->axis, q->offset, q->global - q->offset - q->n, &p)) {
      sgnn_tensor_free(&t);
      return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_gather: %s", sgnn_last_error());
    }
    sgnn_tensor_free(&t);
    t = p;
  }
  rc = sgpar_allreduce_sum(sgpar_grid_spatial_comm(g), t, out);
  sgnn_tensor_free(&t);
  return rc;
}
