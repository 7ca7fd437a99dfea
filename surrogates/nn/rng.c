/* rng.c -- counter-based random numbers (Philox4x32-10, Salmon et al. SC'11, from
 * src/base/include/sgrng.h)
 * and seeded initialisers. The entire state is (seed, counter): saving those
 * two integers in a checkpoint and restoring them reproduces the stream
 * exactly, on any machine, independent of threads or call history. */
#include "sgnn_impl.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "../../src/base/include/sgrng.h" /* Philox, Box-Muller: libc-only, shared with the C layers */

void sgnn_rng_init(SgnnRng *r, unsigned long long seed)
{
  r->seed = seed;
  r->counter = 0;
}

static uint64_t next64(SgnnRng *r)
{
  uint64_t c = r->counter++;
  uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
  uint32_t key[2] = {(uint32_t)r->seed, (uint32_t)(r->seed >> 32)};
  uint32_t out[4];
  SgRngPhilox4x32(ctr, key, out);
  return (uint64_t)out[0] << 32 | out[1];
}

double sgnn_rng_uniform(SgnnRng *r) { return (double)(next64(r) >> 11) * 0x1.0p-53; }

double sgnn_rng_normal(SgnnRng *r)
{
  double u1 = sgnn_rng_uniform(r);
  double u2 = sgnn_rng_uniform(r);
  return SgRngBoxMuller(1.0 - u1, u2); /* 1-u1 in (0,1] */
}

static int fill(SgnnTensor t, SgnnRng *r, int normal, double a, double b)
{
  SGNN_CHECK(t && r, SGNN_ERR_ARG, "init: NULL argument");
  double *h = malloc(sizeof(double) * (size_t)(t->numel + 1));
  SGNN_CHECK(h, SGNN_ERR_MEM, "init: out of memory for %s", SHP(t));
  for (long i = 0; i < t->numel; i++) h[i] = normal ? a + b * sgnn_rng_normal(r) : a + (b - a) * sgnn_rng_uniform(r);
  int rc = sgnn_tensor_set_f64(t, h);
  free(h);
  return rc;
}

int sgnn_init_uniform(SgnnTensor t, double lo, double hi, SgnnRng *r) { return fill(t, r, 0, lo, hi); }
int sgnn_init_normal(SgnnTensor t, double mean, double std, SgnnRng *r) { return fill(t, r, 1, mean, std); }

/* torch convention: weight [out, in, kernel...] */
static void fans(SgnnTensor t, double *fin, double *fout)
{
  if (t->ndim < 2) {
    *fin = *fout = t->ndim ? t->shape[0] : 1;
    return;
  }
  double rf = 1;
  for (int d = 2; d < t->ndim; d++) rf *= t->shape[d];
  *fin = t->shape[1] * rf;
  *fout = t->shape[0] * rf;
}

int sgnn_init_xavier_uniform(SgnnTensor t, double gain, SgnnRng *r)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "init_xavier_uniform: NULL tensor");
  double fi, fo;
  fans(t, &fi, &fo);
  double bound = gain * sqrt(6.0 / (fi + fo));
  return fill(t, r, 0, -bound, bound);
}

int sgnn_init_he_normal(SgnnTensor t, SgnnRng *r)
{
  SGNN_CHECK(t, SGNN_ERR_ARG, "init_he_normal: NULL tensor");
  double fi, fo;
  fans(t, &fi, &fo);
  return fill(t, r, 1, 0.0, sqrt(2.0 / fi));
}
