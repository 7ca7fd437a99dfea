/* backend.c -- the backend registry (chosen at run time by name), storage
 * allocation with the current/peak memory counters, and visible CPU
 * fallbacks for kernels a backend does not provide. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

int sgnn_backend_available(const char *name)
{
  if (!name) return 0;
  if (!strcmp(name, "cpu")) return 1;
  if (!strcmp(name, "cuda")) return sgnn_backend_cuda() != NULL;
  return 0;
}

int sgnn_backend_get(const char *name, SgnnBackend **be)
{
  SGNN_CHECK(name && be, SGNN_ERR_ARG, "sgnn_backend_get: NULL argument");
  if (!strcmp(name, "cpu")) {
    *be = sgnn_backend_cpu();
    return 0;
  }
  if (!strcmp(name, "cuda")) {
    *be = sgnn_backend_cuda();
    SGNN_CHECK(*be, SGNN_ERR_BACKEND, "backend 'cuda' is not available: %s", sgnn_cuda_unavailable_reason());
    return 0;
  }
  return sgnn_seterr(SGNN_ERR_BACKEND, "sgnn_backend_get: unknown backend '%s' (known: cpu, cuda)", name);
}

const char *sgnn_backend_name(const SgnnBackend *be) { return be ? be->name : "(null)"; }
size_t sgnn_mem_current(const SgnnBackend *be) { return be ? be->mem_cur : 0; }
size_t sgnn_mem_peak(const SgnnBackend *be) { return be ? be->mem_peak : 0; }
void sgnn_mem_reset_peak(SgnnBackend *be)
{
  if (be) be->mem_peak = be->mem_cur;
}

/* counters are shared by all threads using a backend: atomic updates */
void *sgnn_be_alloc(SgnnBackend *be, size_t bytes)
{
  void *p = be->alloc(bytes ? bytes : 1);
  if (!p) return NULL;
  size_t cur = __atomic_add_fetch(&be->mem_cur, bytes, __ATOMIC_RELAXED);
  size_t peak = __atomic_load_n(&be->mem_peak, __ATOMIC_RELAXED);
  while (cur > peak && !__atomic_compare_exchange_n(&be->mem_peak, &peak, cur, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return p;
}

void sgnn_be_free(SgnnBackend *be, void *p, size_t bytes)
{
  if (!p) return;
  be->free(p, bytes);
  __atomic_sub_fetch(&be->mem_cur, bytes, __ATOMIC_RELAXED);
}

int sgnn_k_missing(SgnnBackend *be, const char *kernel)
{
  return sgnn_seterr(SGNN_ERR_UNSUPPORTED, "backend '%s' has no kernel '%s' and no CPU fallback for it", be->name,
                     kernel);
}

/* Fallback: copy the operand to the host, run the CPU kernel, copy back.
 * Logged once per kernel so a slow path is never silent. */
int sgnn_k_maxpool_idx(SgnnBackend *be, SgnnDType dt, const SgnnConvGeom *g, const void *x, long *idx)
{
  static int warned;
  SgnnBackend *cpu = sgnn_backend_cpu();
  if (be->maxpool_idx) return be->maxpool_idx(dt, g, x, idx);
  if (!warned++) sgnn_logmsg("sgnn: backend '%s' lacks kernel 'maxpool_idx'; running it on the CPU", be->name);
  size_t nx = (size_t)g->N * g->C * g->D * g->H * g->W * sgnn_esize(dt);
  size_t ni = (size_t)g->N * g->C * g->Do * g->Ho * g->Wo * sizeof(long);
  void *hx = malloc(nx);
  long *hi = malloc(ni);
  int rc = SGNN_ERR_MEM;
  if (hx && hi && !(rc = be->d2h(hx, x, nx)) && !(rc = cpu->maxpool_idx(dt, g, hx, hi))) rc = be->h2d(idx, hi, ni);
  free(hx);
  free(hi);
  if (rc == SGNN_ERR_MEM) return sgnn_seterr(rc, "maxpool3d: out of host memory in CPU fallback");
  return rc;
}
