/* grid.c -- the process grid P = data_groups x spatial_ranks and the split of
 * a sample's extent over the spatial ranks (see sgpar.h). */
#include "sgpar_impl.h"
#include <stdlib.h>

struct SgparGrid_ {
  MPI_Comm comm, spatial, data, stats;
  int srank, ssize, dgroup, ngroups;
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
  /* own duplicates: the halo messages and reductions never match a user's */
  MPICHK(MPI_Comm_dup(comm, &g->comm));
  /* batch-norm statistics over all ranks run inside backward, while the
   * gradient buckets' allreduces on g->comm are in flight: their own communicator */
  MPICHK(MPI_Comm_dup(comm, &g->stats));
  MPICHK(MPI_Comm_split(comm, g->dgroup, g->srank, &g->spatial));
  MPICHK(MPI_Comm_split(comm, g->srank, g->dgroup, &g->data));
  *out = g;
  return 0;
}

void sgpar_grid_destroy(SgparGrid *pg)
{
  SgparGrid g = pg ? *pg : NULL;
  if (!g) return;
  MPI_Comm_free(&g->comm);
  MPI_Comm_free(&g->spatial);
  MPI_Comm_free(&g->data);
  MPI_Comm_free(&g->stats);
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

static int gcd_int(int a, int b)
{
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

int sgpar_split_create(SgparGrid g, int axis, int global, const int *counts, SgparSplit *s)
{
  if (!g || !s) return sgpar_fail(SGNN_ERR_ARG, "sgpar_split_create: NULL argument");
  if (axis < 2 || axis > 4)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split axis %d: must be 2, 3 or 4 (D, H or W of [N,C,D,H,W])", axis);
  int P = g->ssize, r = g->srank;
  if (global < P)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split: extent %d on axis %d is smaller than the %d spatial ranks", global,
                      axis, P);
  s->axis = axis;
  s->global = global;
  long sum = 0;
  int mn = global, gcd = 0;
  for (int i = 0; i < P; i++) {
    int c = counts ? counts[i] : global / P + (i < global % P); /* even: the first global % P get one more */
    if (c < 1)
      return sgpar_fail(SGNN_ERR_ARG, "spatial split: spatial rank %d gets %d planes on axis %d (each needs >= 1)", i, c,
                        axis);
    if (i == r) {
      s->offset = (int)sum;
      s->n = c;
    }
    sum += c;
    if (c < mn) mn = c;
    gcd = gcd_int(gcd, c);
  }
  if (sum != global)
    return sgpar_fail(SGNN_ERR_ARG, "spatial split: counts sum to %ld planes, the extent on axis %d is %d", sum, axis,
                      global);
  s->min_n = mn;
  s->gcd = gcd;
  return 0;
}
