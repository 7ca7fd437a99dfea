/* Batches of SG_VLASOV_LANES cells (or faces) for the SIMD Vlasov-Maxwell kernels.

   The generated Vlasov-Maxwell kernels (kernels/vlasov_kernels.h) evaluate SG_VLASOV_LANES cells at
   once, one cell per SIMD lane: with scalar straight-line kernels the p=2 sets ran at 4-5 GFLOP/s on
   one core, a quarter of what the core does with 4-wide vectors, because a compiler's SLP pass finds
   little to pack in one cell's irregular sums while the same sum over four cells packs perfectly.
   The sweeps (vlasov_rhs.c) queue cells or faces here; a full batch is interleaved by lane into
   SgVlasovV4 arrays, evaluated, and its outputs are added back to the cells one lane after the other
   (two faces of a batch may update the same cell). A partial batch at the end of a sweep fills its
   empty lanes with a copy of lane 0 and drops their outputs. */
#include "vlasov.h"
#if defined(__AVX__)
  #include <immintrin.h>
#endif

/* Under AddressSanitizer the per-access checks made Interleave and Deinterleave (nothing but loads
   and stores) half of a sanitized Vlasov-Maxwell run, while the kernels, whose temporaries stay in
   registers, hardly slowed. So in a sanitized build these two copy loops are not instrumented;
   instead CheckRegion tests each row they touch once per call, every byte of it, and reports an
   invalid one as the instrumented access would have (halting the run). Elsewhere it is nothing. */
#if defined(__SANITIZE_ADDRESS__)
  #include <sanitizer/asan_interface.h>
  #define SG_LANES_ROWS_CHECKED_BY_CALLER __attribute__((no_sanitize("address", "undefined")))
static void CheckRegion(const void *p, size_t bytes, int is_write)
{
  void *bad = __asan_region_is_poisoned((void *)p, bytes);
  if (bad) __asan_report_error(__builtin_return_address(0), __builtin_frame_address(0), __builtin_frame_address(0), bad, is_write, bytes);
}
#else
  #define SG_LANES_ROWS_CHECKED_BY_CALLER
static inline void CheckRegion(const void *p, size_t bytes, int is_write)
{
  (void)p;
  (void)bytes;
  (void)is_write;
}
#endif

#define LN SG_VLASOV_LANES
#define MAXNP  SG_VLASOV_LANES_MAXNP /* checked when the kernels are selected (vlasov.c) */
#define MAXNPX SG_VLASOV_LANES_MAXNPX

/* The 4x4 transpose of rows a, b, c, d (four doubles each) in place; it is its own inverse. (Registers
   only: uninstrumented like its callers, so that a sanitized build can inline it.) */
#if defined(__AVX__) && SG_VLASOV_LANES == 4
static inline SG_LANES_ROWS_CHECKED_BY_CALLER void Transpose4(__m256d *a, __m256d *b, __m256d *c, __m256d *d)
{
  const __m256d t0 = _mm256_unpacklo_pd(*a, *b), t1 = _mm256_unpackhi_pd(*a, *b);
  const __m256d t2 = _mm256_unpacklo_pd(*c, *d), t3 = _mm256_unpackhi_pd(*c, *d);
  *a = _mm256_permute2f128_pd(t0, t2, 0x20);
  *b = _mm256_permute2f128_pd(t1, t3, 0x20);
  *c = _mm256_permute2f128_pd(t0, t2, 0x31);
  *d = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#define SG_LANES_AVX 1
#else
#define SG_LANES_AVX 0
#endif

/* dst[k][c] = src[c][k] for k < n, c < LN */
static SG_LANES_ROWS_CHECKED_BY_CALLER void InterleaveRows(PetscInt n, const double *const src[LN], SgVlasovV4 *dst)
{
  PetscInt k = 0;
#if SG_LANES_AVX
  for (; k + 4 <= n; k += 4) {
    __m256d r0 = _mm256_loadu_pd(src[0] + k), r1 = _mm256_loadu_pd(src[1] + k), r2 = _mm256_loadu_pd(src[2] + k), r3 = _mm256_loadu_pd(src[3] + k);
    Transpose4(&r0, &r1, &r2, &r3);
    _mm256_store_pd((double *)&dst[k], r0);
    _mm256_store_pd((double *)&dst[k + 1], r1);
    _mm256_store_pd((double *)&dst[k + 2], r2);
    _mm256_store_pd((double *)&dst[k + 3], r3);
  }
#endif
  for (; k < n; k++)
    for (PetscInt c = 0; c < LN; c++) dst[k][c] = src[c][k];
}

/* dst[c][k] += src[k][c] (or =, when assign) for k < n and the first nl lanes, one lane after the
   other: two lanes may point at the same cell. */
static SG_LANES_ROWS_CHECKED_BY_CALLER void DeinterleaveRows(PetscInt n, PetscInt nl, const SgVlasovV4 *src, double *const dst[LN], PetscBool assign)
{
  PetscInt k = 0;
#if SG_LANES_AVX
  for (; k + 4 <= n; k += 4) {
    __m256d r[4] = {_mm256_load_pd((const double *)&src[k]), _mm256_load_pd((const double *)&src[k + 1]), _mm256_load_pd((const double *)&src[k + 2]),
                    _mm256_load_pd((const double *)&src[k + 3])};
    Transpose4(&r[0], &r[1], &r[2], &r[3]);
    for (PetscInt c = 0; c < nl; c++) _mm256_storeu_pd(dst[c] + k, assign ? r[c] : _mm256_add_pd(_mm256_loadu_pd(dst[c] + k), r[c]));
  }
#endif
  for (; k < n; k++)
    for (PetscInt c = 0; c < nl; c++) dst[c][k] = assign ? src[k][c] : dst[c][k] + src[k][c];
}

static void Interleave(PetscInt n, const double *const src[LN], SgVlasovV4 *dst)
{
  for (PetscInt c = 0; c < LN; c++) CheckRegion(src[c], (size_t)n * sizeof(double), 0);
  CheckRegion(dst, (size_t)n * sizeof(SgVlasovV4), 1);
  InterleaveRows(n, src, dst);
}

static void Deinterleave(PetscInt n, PetscInt nl, const SgVlasovV4 *src, double *const dst[LN], PetscBool assign)
{
  CheckRegion(src, (size_t)n * sizeof(SgVlasovV4), 0);
  for (PetscInt c = 0; c < nl; c++) CheckRegion(dst[c], (size_t)n * sizeof(double), 1);
  DeinterleaveRows(n, nl, src, dst, assign);
}

static void Pad(SgVlasovLaneBatch *b)
{
  for (PetscInt c = b->n; c < LN; c++) {
    b->fL[c] = b->fL[0];
    b->fR[c] = b->fR[0];
    b->em[c] = b->em[0];
    for (PetscInt i = 0; i < 6; i++) b->w[i][c] = b->w[i][0];
    for (PetscInt i = 0; i < 3; i++) b->prm[i][c] = b->prm[i][0];
  }
}

static void EmAndW(const SgVlasov *v, const SgVlasovLaneBatch *b, SgVlasovV4 *wv, SgVlasovV4 *emv)
{
  for (PetscInt i = 0; i < 6; i++) memcpy(&wv[i], b->w[i], sizeof(SgVlasovV4));
  Interleave(SG_VLASOV_EM_NC * v->npx, b->em, emv);
}

/* Queues cell (f, out, w, em) for the volume kernel; evaluates the batch when full (or when flush is
   set, with what is queued). The kernel's output replaces out (the sweep clears the RHS here). */
void SgVlasovLanesVolume(const SgVlasov *v, const SgVlasovSpecies *s, SgVlasovLaneBatch *b, PetscBool flush)
{
  SgVlasovV4 wv[6], emv[SG_VLASOV_EM_NC * MAXNPX], fv[MAXNP], ov[MAXNP];
  const PetscInt np = v->np;

  if (b->n == 0 || (b->n < LN && !flush)) return;
  Pad(b);
  EmAndW(v, b, wv, emv);
  Interleave(np, b->fL, fv);
  memset(ov, 0, (size_t)np * sizeof(SgVlasovV4));
  v->emk->vol4(wv, s->dx, s->qbym, emv, fv, ov);
  Deinterleave(np, b->n, ov, b->oL, PETSC_TRUE);
  b->n = 0;
}

/* Queues face (fL, fR, oL, oR, w, em, prm) of phase direction d for its surface kernel: x_d faces
   take prm = {cL, cR, c0}, v_j faces prm[0] = tau. Evaluates the batch when full (or on flush). */
void SgVlasovLanesFace(const SgVlasov *v, const SgVlasovSpecies *s, PetscInt d, SgVlasovLaneBatch *b, PetscBool flush)
{
  SgVlasovV4 wv[6], emv[SG_VLASOV_EM_NC * MAXNPX], prm[3], fLv[MAXNP], fRv[MAXNP], oLv[MAXNP], oRv[MAXNP];
  const PetscInt np = v->np;

  if (b->n == 0 || (b->n < LN && !flush)) return;
  Pad(b);
  for (PetscInt i = 0; i < 3; i++) memcpy(&prm[i], b->prm[i], sizeof(SgVlasovV4));
  Interleave(np, b->fL, fLv);
  Interleave(np, b->fR, fRv);
  memset(oLv, 0, (size_t)np * sizeof(SgVlasovV4));
  memset(oRv, 0, (size_t)np * sizeof(SgVlasovV4));
  if (d < v->cdim) {
    for (PetscInt i = 0; i < 6; i++) memcpy(&wv[i], b->w[i], sizeof(SgVlasovV4));
    v->emk->surfx4[d](wv, s->dx, prm, fLv, fRv, oLv, oRv);
  } else {
    EmAndW(v, b, wv, emv);
    v->emk->surfv4[d - v->cdim](wv, s->dx, s->qbym, emv, prm, fLv, fRv, oLv, oRv);
  }
  Deinterleave(np, b->n, oLv, b->oL, PETSC_FALSE);
  Deinterleave(np, b->n, oRv, b->oR, PETSC_FALSE);
  b->n = 0;
}
