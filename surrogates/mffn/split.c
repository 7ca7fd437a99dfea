/* How the mffn surrogate cuts its crops over the spatial ranks of the trainer's process grid (issue
   18, docs/parallel.md): deck keys split_axes (one or two of t, z, x), split_layout (ranks along each
   of two axes) and split_counts (low-res planes of each slab; default: as even as possible). Every
   check depends only on numbers all ranks share, so a bad split is refused on every rank with one
   line, before any data is read. */
#include "sgmffndata.h"
#include "sgtrainer.h"
#include "sgsys.h"

static const char *const axname[3] = {"t", "z", "x"};

PetscErrorCode SgMFFNSplitOptions(PetscOptionItems *PetscOptionsObject, SgMFFNSplitSpec *sp)
{
  char     *names[4];
  PetscInt  n = 4;
  PetscBool set;

  PetscFunctionBegin;
  if (!sp->naxes) {
    sp->naxes = 1;
    sp->axes[0] = 3;
  } /* z */
  PetscCall(SgOptionsStringArray("-split_axes", "Axes of the low-res crop cut over the spatial ranks: one or two of t, z, x (with spatial_ranks > 1)", names, &n, &set));
  if (set) {
    PetscCheck(n >= 1 && n <= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_axes has %" PetscInt_FMT " entries: give one or two of t, z, x", n);
    sp->naxes = n;
    for (PetscInt i = 0; i < n; i++) {
      sp->axes[i] = -1;
      for (int k = 0; k < 3; k++)
        if (!strcmp(names[i], axname[k])) sp->axes[i] = 2 + k;
      PetscCheck(sp->axes[i] > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_axes entry '%s': use t, z or x", names[i]);
      PetscCall(PetscFree(names[i]));
    }
    PetscCheck(n == 1 || sp->axes[0] != sp->axes[1], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_axes names %s twice", axname[sp->axes[0] - 2]);
  }
  n = 2;
  PetscCall(SgOptionsIntArray("-split_layout", "Spatial ranks along each of two split axes (their product = spatial_ranks); default: the most even factorisation", sp->layout, &n, &set, 1, 1 << 20));
  PetscCheck(!set || n == 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_layout takes 2 values, got %" PetscInt_FMT, n);
  n = SG_MFFN_MAXSPLIT;
  PetscCall(SgOptionsIntArray("-split_counts", "Low-res planes of each slab along the split axis (two axes: the first axis's, then the second's); default: as even as possible", sp->counts, &n, &set, 1, 1 << 20));
  sp->ncounts = set ? n : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNPartCreate(SgparGrid g, const SgMFFNSplitSpec *sp, const PetscInt lo[3], const PetscInt mult[3], SgMFFNPart *part)
{
  MPI_Comm comm = sgpar_grid_comm(g);
  int      S = sgpar_grid_spatial_size(g), ranks[2], axes[2], global[2], cnt[2][SG_MFFN_MAXSPLIT], rc;
  int     *cp[2] = {NULL, NULL};

  PetscFunctionBegin;
  part->grid = g;
  for (PetscInt k = 0; k < sp->naxes; k++) {
    axes[k] = (int)sp->axes[k];
    global[k] = (int)lo[sp->axes[k] - 2];
  }
  if (sp->naxes == 1 || S == 1) {
    ranks[0] = S;
    ranks[1] = 1;
  } else if (sp->layout[0] > 0) {
    ranks[0] = (int)sp->layout[0];
    ranks[1] = (int)sp->layout[1];
  } else { /* the most even factorisation, the smaller factor first */
    ranks[0] = 1;
    for (int f = 1; f * f <= S; f++)
      if (S % f == 0) ranks[0] = f;
    ranks[1] = S / ranks[0];
  }
  PetscCheck(ranks[0] * ranks[1] == S, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_layout %d x %d does not make the %d spatial ranks (-mffn_spatial_ranks)", ranks[0], ranks[1], S);
  if (sp->ncounts) {
    PetscInt need = S == 1 ? 1 : sp->naxes == 1 ? S : ranks[0] + ranks[1];
    PetscCheck(sp->ncounts == need, comm, PETSC_ERR_USER_INPUT, "mffn: -mffn_split_counts has %" PetscInt_FMT " entries; %d spatial ranks split along %s need %" PetscInt_FMT " (one per slab%s)", sp->ncounts, S, sp->naxes == 1 || S == 1 ? axname[axes[0] - 2] : "two axes", need, sp->naxes == 2 && S > 1 ? " of each axis, the first axis's first" : "");
    for (int k = 0, i = 0; k < (S == 1 ? 1 : sp->naxes); k++) {
      for (int r = 0; r < ranks[k]; r++) cnt[k][r] = (int)sp->counts[i++];
      cp[k] = cnt[k];
    }
  }
  if (sp->naxes == 1 || S == 1) rc = sgpar_split_create(g, axes[0], global[0], cp[0], &part->split);
  else rc = sgpar_split2_create(g, ranks, axes, global, (const int *const *)cp, &part->split);
  PetscCheck(!rc, comm, PETSC_ERR_USER_INPUT, "mffn: the crop's low-res grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (t, z, x) cannot be cut as asked (-mffn_split_axes, -mffn_split_layout, -mffn_split_counts): %s", lo[0], lo[1], lo[2], sgpar_last_error());
  for (int k = 0; k < part->split.naxes; k++) {
    const SgparAxisSplit *q = &part->split.ax[k];
    PetscCheck(q->gcd % mult[q->axis - 2] == 0, comm, PETSC_ERR_USER_INPUT, "mffn: every slab along %s must be a multiple of the poolings' %" PetscInt_FMT " in %s (pooling stays on its rank), but the slabs' gcd is %d: change -mffn_split_counts, -mffn_spatial_ranks or -mffn_crop", axname[q->axis - 2], mult[q->axis - 2], axname[q->axis - 2], q->gcd);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
