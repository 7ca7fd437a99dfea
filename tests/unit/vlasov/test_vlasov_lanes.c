/* The lane batches of the Vlasov-Maxwell sweeps (physics/vlasov/vlasov_lanes.c): a partial batch, as
   every sweep ends with when its cell or face count is not a multiple of SG_VLASOV_LANES, must give
   each queued cell exactly what it gets in a full batch, and touch nothing else.

   Why a unit test: the last cells of a sweep lie at the upper corner of the velocity box, where a
   Maxwellian the solver accepts (the box holds 5 vt beyond the drift) is at most exp(-12.5 vdim) of
   its peak, and most test decks' cell counts are multiples of 4. Dropping the last lane of every
   partial batch passed vlasov_maxwell_parallel even with cell counts chosen to leave partial batches
   of different sizes on 1 and 2 ranks.

   For every generated kernel set, with random cell data: four cells in a full batch give the
   reference outputs; then the first n = 1, 2, 3 of them are queued and flushed. Each of the n cells
   must get the reference output bit for bit (a lane's arithmetic is the same whatever the other
   lanes hold), the outputs of the cells not queued must keep their sentinel, and the batch must be
   empty afterwards. Volume outputs replace the cell's RHS; face outputs are added to it, so the face
   outputs start from random values and the sum is compared. Runs in a few milliseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../../physics/vlasov/vlasov.h"

#define LANES  SG_VLASOV_LANES
#define SENTRY 12345.0 /* the value an output no lane may touch keeps */

static double Uniform(unsigned long long *state) /* reproducible on every machine (splitmix64) */
{
  unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 * 2 - 1;
}

typedef struct {
  double *f[LANES], *g[LANES]; /* volume: f; faces: f (left), g (right) */
  double *em[LANES];
  double  w[6][LANES], prm[3][LANES];
  double *out[LANES][2], *ref[LANES][2]; /* [cell][left, right]: what the batch writes, the reference */
} Cells;

static int failures = 0;

static void Fill(double *a, int n, unsigned long long *state)
{
  for (int i = 0; i < n; i++) a[i] = Uniform(state);
}

/* Queues the first n cells into b as the sweeps do (vlasov_rhs.c, QueueCell / QueueFace). */
static void Queue(const SgVlasov *v, SgVlasovLaneBatch *b, Cells *c, int n, int face)
{
  for (int l = 0; l < n; l++) {
    b->fL[l] = c->f[l];
    b->fR[l] = face ? c->g[l] : NULL;
    b->oL[l] = c->out[l][0];
    b->oR[l] = face ? c->out[l][1] : NULL;
    b->em[l] = c->em[l];
    for (PetscInt i = 0; i < v->pdim; i++) b->w[i][l] = c->w[i][l];
    for (int i = 0; i < 3; i++) b->prm[i][l] = c->prm[i][l];
  }
  b->n = n;
}

/* Sets every output: the first n to start (volume: the sweep's stale RHS, faces: what the other
   faces added), the rest to the sentinel. */
static void ResetOutputs(const SgVlasov *v, Cells *c, int n, unsigned long long seed)
{
  for (int l = 0; l < LANES; l++) {
    for (int side = 0; side < 2; side++) {
      unsigned long long state = seed + (unsigned long long)(2 * l + side);
      if (l < n) Fill(c->out[l][side], (int)v->np, &state);
      else
        for (PetscInt k = 0; k < v->np; k++) c->out[l][side][k] = SENTRY;
    }
  }
}

static void Compare(const SgVlasov *v, const Cells *c, int n, int face, const char *what)
{
  int bad = 0;
  for (int l = 0; l < LANES; l++) {
    for (int side = 0; side < (face ? 2 : 1); side++) {
      for (PetscInt k = 0; k < v->np; k++) {
        const double got = c->out[l][side][k];
        const double want = l < n ? c->ref[l][side][k] : SENTRY;
        if (memcmp(&got, &want, sizeof got)) bad++;
      }
    }
  }
  if (bad) {
    printf("FAIL  %dx%dv p=%d %s, batch of %d: %d output entries differ from the full batch's (or a lane not queued was written)\n", v->cdim, v->vdim, v->order, what, n, bad);
    failures++;
  }
}

static void CheckSet(const SgVlasovKernels *kern, const SgVlasovEMKernels *emk)
{
  SgVlasov           v;
  SgVlasovSpecies    s;
  SgVlasovLaneBatch  b;
  Cells              c;
  unsigned long long state = 20261129ULL;
  const int          failures_before = failures;
  const int          np = kern->np, nem = SG_VLASOV_EM_NC * kern->npx;

  memset(&v, 0, sizeof v);
  memset(&s, 0, sizeof s);
  memset(&b, 0, sizeof b);
  v.cdim = emk->cdim;
  v.vdim = emk->vdim;
  v.order = emk->p;
  v.family = emk->family;
  v.pdim = v.cdim + v.vdim;
  v.np = np;
  v.npx = kern->npx;
  v.emk = emk;
  s.qbym = -1;
  for (PetscInt i = 0; i < v.pdim; i++) s.dx[i] = 0.1 + 0.05 * (double)i;
  for (int l = 0; l < LANES; l++) {
    c.f[l] = malloc(sizeof(double) * (size_t)np);
    c.g[l] = malloc(sizeof(double) * (size_t)np);
    c.em[l] = malloc(sizeof(double) * (size_t)nem);
    Fill(c.f[l], np, &state);
    Fill(c.g[l], np, &state);
    Fill(c.em[l], nem, &state);
    for (int i = 0; i < 6; i++) c.w[i][l] = Uniform(&state);
    c.prm[0][l] = 0.5 + 0.5 * Uniform(&state); /* x faces: cL, cR, c0; v faces: tau >= 0 */
    c.prm[1][l] = 0.5 + 0.5 * Uniform(&state);
    c.prm[2][l] = Uniform(&state);
    for (int side = 0; side < 2; side++) {
      c.out[l][side] = malloc(sizeof(double) * (size_t)np);
      c.ref[l][side] = malloc(sizeof(double) * (size_t)np);
    }
  }
  for (int op = -1; op < v.pdim; op++) { /* -1: volume; d >= 0: the faces normal to phase direction d */
    const int         face = op >= 0;
    const char *const what = !face ? "volume" : op < v.cdim ? "x face" : "v face";
    const unsigned long long seed = 1000ULL * (unsigned long long)(op + 2);

    /* the reference: a full batch runs as soon as its last lane is queued */
    ResetOutputs(&v, &c, LANES, seed);
    Queue(&v, &b, &c, LANES - 1, face);
    if (face) SgVlasovLanesFace(&v, &s, op, &b, PETSC_FALSE);
    else SgVlasovLanesVolume(&v, &s, &b, PETSC_FALSE);
    if (b.n != LANES - 1) {
      printf("FAIL  %dx%dv p=%d %s: a batch of %d ran before it was full or flushed\n", v.cdim, v.vdim, v.order, what, LANES - 1);
      failures++;
    }
    Queue(&v, &b, &c, LANES, face);
    if (face) SgVlasovLanesFace(&v, &s, op, &b, PETSC_FALSE);
    else SgVlasovLanesVolume(&v, &s, &b, PETSC_FALSE);
    if (b.n != 0) {
      printf("FAIL  %dx%dv p=%d %s: a full batch did not run\n", v.cdim, v.vdim, v.order, what);
      failures++;
    }
    for (int l = 0; l < LANES; l++)
      for (int side = 0; side < 2; side++) memcpy(c.ref[l][side], c.out[l][side], sizeof(double) * (size_t)np);
    /* the partial batches, flushed as the end of a sweep flushes them */
    for (int n = 1; n < LANES; n++) {
      ResetOutputs(&v, &c, n, seed);
      Queue(&v, &b, &c, n, face);
      if (face) SgVlasovLanesFace(&v, &s, op, &b, PETSC_TRUE);
      else SgVlasovLanesVolume(&v, &s, &b, PETSC_TRUE);
      if (b.n != 0) {
        printf("FAIL  %dx%dv p=%d %s: a flushed batch of %d was left queued\n", v.cdim, v.vdim, v.order, what, n);
        failures++;
      }
      Compare(&v, &c, n, face, what);
    }
  }
  for (int l = 0; l < LANES; l++) {
    free(c.f[l]);
    free(c.g[l]);
    free(c.em[l]);
    for (int side = 0; side < 2; side++) {
      free(c.out[l][side]);
      free(c.ref[l][side]);
    }
  }
  if (failures == failures_before)
    printf("ok    %dx%dv p=%d: partial lane batches (1..%d of %d) equal the full batch lane by lane, volume and %d face directions\n", emk->cdim, emk->vdim, emk->p, LANES - 1, LANES,
         emk->cdim + emk->vdim);
}

int main(void)
{
  int sets = 0;
  for (const SgVlasovEMKernels *const *e = sg_vlasov_em_kernel_list; *e; e++) {
    const SgVlasovKernels *kern = NULL;
    for (const SgVlasovKernels *const *k = sg_vlasov_kernel_list; *k; k++)
      if ((*k)->cdim == (*e)->cdim && (*k)->vdim == (*e)->vdim && (*k)->family == (*e)->family && (*k)->p == (*e)->p) kern = *k;
    if (!kern) {
      printf("FAIL  no Vlasov kernel set beside the %dx%dv p=%d Maxwell set\n", (*e)->cdim, (*e)->vdim, (*e)->p);
      failures++;
      continue;
    }
    CheckSet(kern, *e);
    sets++;
  }
  if (sets == 0) {
    printf("FAIL  no Vlasov-Maxwell kernel sets\n");
    failures++;
  }
  printf("%s  %d kernel sets\n", failures ? "FAIL" : "PASS", sets);
  return failures ? 1 : 0;
}
