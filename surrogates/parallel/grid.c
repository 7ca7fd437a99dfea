/* grid.c -- the process grid P = data_groups x spatial_ranks and the split of
 * a sample's extent over the spatial ranks (see sgpar.h). */
#include "sgpar_impl.h"
#include <stdlib.h>
#include <string.h>

struct SgparTrace_ {
  int on, layer, n, cap;
  SgparTraceEvent *ev;
};

struct SgparGrid_ {
  MPI_Comm comm, spatial, data, stats;
  int srank, ssize, dgroup, ngroups;
  int chunks; /* interior pieces of an overlapped convolution (0: blocking) */
  SgparTrace trace;
};

int sgpar_grid_create(MPI_Comm comm, int data_groups, int spatial_ranks, SgparGrid *out)
{
  int size, rank;
  if (!out) return sgpar_fail(SGNN_ERR_ARG, "sgpar_grid_create: NULL argument");
  *out = NULL;
  MPICHK(MPI_Comm_size(comm, &size));
  MPICHK(MPI_Comm_rank(comm, &rank));
  if (data_groups < 1 || spatial_ranks < 1 || (long)data_groups * spatial_ranks != size)
    return sgpar_fail(SGNN_ERR_ARG,
                      "process grid %d data groups x %d spatial ranks does not cover the %d ranks of the communicator "
                      "(their product must equal it)",
                      data_groups, spatial_ranks, size);
  SgparGrid g = calloc(1, sizeof *g);
  if (!g) return sgpar_fail(SGNN_ERR_MEM, "sgpar_grid_create: out of memory");
  g->ssize = spatial_ranks;
  g->ngroups = data_groups;
  g->srank = rank % spatial_ranks;
  g->dgroup = rank / spatial_ranks;
  g->chunks = 4;
  /* own duplicates: the halo messages and reductions never match a user's;
   * batch-norm statistics over all ranks run inside backward, while the
   * gradient buckets' allreduces on g->comm are in flight: their own communicator */
  g->comm = g->spatial = g->data = g->stats = MPI_COMM_NULL;
  int e = MPI_Comm_dup(comm, &g->comm);
  if (!e) e = MPI_Comm_dup(comm, &g->stats);
  if (!e) e = MPI_Comm_split(comm, g->dgroup, g->srank, &g->spatial);
  if (!e) e = MPI_Comm_split(comm, g->srank, g->dgroup, &g->data);
  if (e) {
    sgpar_grid_destroy(&g);
    return sgpar_fail(SGNN_ERR_BACKEND, "sgpar_grid_create: MPI error %d creating the grid's communicators", e);
  }
  *out = g;
  return 0;
}

void sgpar_grid_destroy(SgparGrid *pg)
{
  SgparGrid g = pg ? *pg : NULL;
  if (!g) return;
  MPI_Comm *c[4] = {&g->comm, &g->spatial, &g->data, &g->stats};
  for (int i = 0; i < 4; i++)
    if (*c[i] != MPI_COMM_NULL) MPI_Comm_free(c[i]);
  free(g->trace.ev);
  free(g);
  *pg = NULL;
}

MPI_Comm sgpar_grid_comm(SgparGrid g) { return g->comm; }
MPI_Comm sgpar_grid_spatial_comm(SgparGrid g) { return g->spatial; }
MPI_Comm sgpar_grid_data_comm(SgparGrid g) { return g->data; }
MPI_Comm sgpar_grid_stats_comm(SgparGrid g) { return g->stats; }
int sgpar_grid_spatial_rank(SgparGrid g) { return g->srank; }
int sgpar_grid_spatial_size(SgparGrid g) { return g->ssize; }
int sgpar_grid_data_group(SgparGrid g) { return g->dgroup; }
int sgpar_grid_data_groups(SgparGrid g) { return g->ngroups; }
long sgpar_grid_sample_count(SgparGrid g, long local_count) { return g->srank == 0 ? local_count : 0; }

int sgpar_grid_set_overlap(SgparGrid g, int chunks)
{
  if (!g || chunks < 0) return sgpar_fail(SGNN_ERR_ARG, "sgpar_grid_set_overlap: %d interior pieces (0: blocking, >= 1)", chunks);
  g->chunks = chunks;
  return 0;
}
int sgpar_grid_overlap_chunks(SgparGrid g) { return g->chunks; }

/* ---- the timeline of a step -------------------------------------------------------------------- */
SgparTrace *sgpar_grid_trace_ptr(SgparGrid g) { return g ? &g->trace : NULL; }

int sgpar_grid_trace(SgparGrid g, int on)
{
  if (!g) return sgpar_fail(SGNN_ERR_ARG, "sgpar_grid_trace: NULL grid");
  if (on) {
    g->trace.n = 0;
    g->trace.layer = -1;
  }
  g->trace.on = on != 0;
  return 0;
}

int sgpar_grid_trace_events(SgparGrid g, const SgparTraceEvent **ev, int *n)
{
  if (!g || !ev || !n) return sgpar_fail(SGNN_ERR_ARG, "sgpar_grid_trace_events: NULL argument");
  *ev = g->trace.ev;
  *n = g->trace.n;
  return 0;
}

const char *sgpar_trace_kind_name(int kind)
{
  static const char *names[SGPAR_EV_NKINDS] = {"conv_fwd", "halo_wait_fwd", "conv_bwd", "halo_wait_bwd", "allreduce_fwd", "allreduce_bwd"};
  return kind >= 0 && kind < SGPAR_EV_NKINDS ? names[kind] : "?";
}

void sgpar_trace_add(SgparTrace *t, int layer, int kind, double t0, double t1)
{
  if (!t || !t->on) return;
  if (t->n == t->cap) { /* a failed growth drops the event: the trace is a diagnostic */
    int cap = t->cap ? 2 * t->cap : 256;
    SgparTraceEvent *e = realloc(t->ev, (size_t)cap * sizeof *e);
    if (!e) return;
    t->ev = e;
    t->cap = cap;
  }
  t->ev[t->n++] = (SgparTraceEvent){layer, kind, t0, t1};
}

int sgpar_trace_layer(SgparTrace *t) { return t ? t->layer : -1; }
int sgpar_trace_new_layer(SgparTrace *t) { return t ? ++t->layer : -1; }

static int gcd_int(int a, int b)
{
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* the slab of line position c of P along axis; neighbours lo/hi are given by the caller */
static int split_line(int P, int c, int axis, int global, const int *counts, SgparAxisSplit *s)
{
  if (axis < 2 || axis > 4)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split axis %d: must be 2, 3 or 4 (D, H or W of [N,C,D,H,W])", axis);
  if (global < P)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split: extent %d on axis %d is smaller than the %d spatial ranks", global,
                      axis, P);
  s->axis = axis;
  s->global = global;
  long sum = 0;
  int mn = global, gcd = 0;
  for (int i = 0; i < P; i++) {
    int n = counts ? counts[i] : global / P + (i < global % P); /* even: the first global % P get one more */
    if (n < 1)
      return sgpar_fail(SGNN_ERR_ARG, "spatial split: slab %d gets %d planes on axis %d (each needs >= 1)", i, n, axis);
    if (i == c) {
      s->offset = (int)sum;
      s->n = n;
    }
    sum += n;
    if (n < mn) mn = n;
    gcd = gcd_int(gcd, n);
  }
  if (sum != global)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split: counts sum to %ld planes, the extent on axis %d is %d", sum, axis,
                      global);
  s->min_n = mn;
  s->gcd = gcd;
  return 0;
}

int sgpar_split_create(SgparGrid g, int axis, int global, const int *counts, SgparSplit *s)
{
  if (!g || !s) return sgpar_fail(SGNN_ERR_ARG, "sgpar_split_create: NULL argument");
  int P = g->ssize, r = g->srank;
  memset(s, 0, sizeof *s);
  s->naxes = 1;
  s->ax[0].lo = r > 0 ? r - 1 : MPI_PROC_NULL;
  s->ax[0].hi = r < P - 1 ? r + 1 : MPI_PROC_NULL;
  return split_line(P, r, axis, global, counts, &s->ax[0]);
}

int sgpar_split2_create(SgparGrid g, const int ranks[2], const int axes[2], const int global[2], const int *const counts[2],
                        SgparSplit *s)
{
  if (!g || !s || !ranks || !axes || !global) return sgpar_fail(SGNN_ERR_ARG, "sgpar_split2_create: NULL argument");
  if (ranks[0] < 1 || ranks[1] < 1 || ranks[0] * ranks[1] != g->ssize)
    return sgpar_fail(SGNN_ERR_ARG, "spatial layout %d x %d does not cover the %d spatial ranks (their product must equal it)",
                      ranks[0], ranks[1], g->ssize);
  if (axes[0] == axes[1]) return sgpar_fail(SGNN_ERR_ARG, "spatial split: both split axes are %d", axes[0]);
  int c[2] = {g->srank / ranks[1], g->srank % ranks[1]}, step[2] = {ranks[1], 1};
  memset(s, 0, sizeof *s);
  s->naxes = 2;
  for (int k = 0; k < 2; k++) {
    s->ax[k].lo = c[k] > 0 ? g->srank - step[k] : MPI_PROC_NULL;
    s->ax[k].hi = c[k] < ranks[k] - 1 ? g->srank + step[k] : MPI_PROC_NULL;
    int rc = split_line(ranks[k], c[k], axes[k], global[k], counts ? counts[k] : NULL, &s->ax[k]);
    if (rc) return rc;
  }
  return 0;
}
