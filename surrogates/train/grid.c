/* SgTrainer's process grid: data groups x spatial ranks (surrogates/parallel, docs/parallel.md).

   The loaders of a trainer run on the grid's data communicator (one rank per data group with the same
   spatial position), so a global batch is split over the data groups only and every spatial rank of
   a group gets the same sample ids in the same order: each loader's plan is a pure function of the
   seed, the batch size, the data and the number of data groups. The surrogate takes the grid
   (SgTrainerGetProcessGrid) to cut each sample over the spatial ranks of its group; the "hybrid"
   gradient sync sums the weight gradients over the whole grid and counts each sample once. */
#include "sgtrainerimpl.h"
#include "sgsys.h"

PetscErrorCode SgTrainerCheckProcessGrid(MPI_Comm comm, const char prefix[], PetscInt G, PetscInt S, PetscInt *Gout)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(S >= 1 && G >= 0, comm, PETSC_ERR_USER_INPUT, "-%sdata_groups %" PetscInt_FMT " and -%sspatial_ranks %" PetscInt_FMT ": both must be at least 1", prefix, G, prefix, S);
  if (!G) {
    PetscCheck(size % S == 0, comm, PETSC_ERR_USER_INPUT, "-%sspatial_ranks %" PetscInt_FMT " does not divide the %d ranks of the run: -%sdata_groups x -%sspatial_ranks must equal the rank count (mpiexec -n)", prefix, S, size, prefix, prefix);
    G = size / S;
  }
  PetscCheck(G * S == size, comm, PETSC_ERR_USER_INPUT, "-%sdata_groups %" PetscInt_FMT " x -%sspatial_ranks %" PetscInt_FMT " = %" PetscInt_FMT " ranks, but the run has %d: make their product the rank count (mpiexec -n %" PetscInt_FMT ", or change the two options)", prefix, G, prefix, S, G * S, size, G * S);
  if (Gout) *Gout = G;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetProcessGrid(SgTrainer t, PetscInt G, PetscInt S)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: the process grid must be set before SgTrainerSetUp()");
  t->dgroups = G;
  t->sranks  = S;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerOptionsGrid(PetscOptionItems *PetscOptionsObject, PetscInt *G, PetscInt *S)
{
  PetscFunctionBegin;
  if (*S < 1) *S = 1;
  PetscCall(SgOptionsInt("-data_groups", "Data-parallel groups of the process grid (0: ranks / spatial_ranks); data_groups x spatial_ranks = ranks", *G, G, NULL, 0, 1 << 24));
  PetscCall(SgOptionsInt("-spatial_ranks", "Ranks sharing each sample, split spatially (halo exchange; docs/parallel.md); 1: data parallelism only", *S, S, NULL, 1, 1 << 24));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGridSetUp(SgTrainer t)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)t);
  char     prefix[80];
  PetscInt G;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, sizeof prefix, "%s_", t->name));
  PetscCall(SgTrainerCheckProcessGrid(comm, prefix, t->dgroups, t->sranks < 1 ? 1 : t->sranks, &G));
  t->dgroups = G;
  t->sranks  = t->sranks < 1 ? 1 : t->sranks;
  SgCallPar(sgpar_grid_create(comm, (int)t->dgroups, (int)t->sranks, &t->grid));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGridDescribe(SgTrainer t, char buf[], size_t len)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)t), &size));
  if (t->sranks <= 1) PetscCall(PetscSNPrintf(buf, len, "%d", size));
  else PetscCall(PetscSNPrintf(buf, len, "%d = %" PetscInt_FMT " data groups x %" PetscInt_FMT " spatial ranks", size, t->dgroups, t->sranks));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetProcessGrid(SgTrainer t, SgparGrid *g)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(t->grid, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "%s: no process grid before SgTrainerSetUp()", t->name);
  *g = t->grid;
  PetscFunctionReturn(PETSC_SUCCESS);
}
