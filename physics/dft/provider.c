/* The md.forces provider "tb": tight-binding energy, forces and virial for the MD engine.

   TB is not a local potential (the density matrix couples every atom to its surroundings through
   the electronic structure), so the owned atoms of all ranks are gathered, the whole system is
   solved (dense or submatrix, distributed over the ranks of the communicator), and each rank keeps
   the forces of its own atoms.  Ghost atoms are ignored on input and get zero force.  The energy
   and virial are returned on rank 0 only, so that the caller's sum over ranks is the total.
   Options (prefix, e.g. "tb_"): elements (element of each MD type, e.g. "Si" or "Si,C"), and the
   density-matrix options (method, eps_filter, kt, ...).  Units: metal (A, eV). */
#include "sgtb.h"
#include "sgsys.h"

struct _n_SgTB {
  MPI_Comm      comm;
  SgTBModel     model[8];
  PetscInt      ntypes;
  SgTBDMOptions o;
  PetscInt      ncalls;
};

PetscErrorCode SgTBCreate(MPI_Comm comm, const char prefix[], SgTB *tb)
{
  PetscFunctionBegin;
  PetscCall(SgTBCreateWithElements(comm, prefix, "Si", tb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBCreateWithElements(MPI_Comm comm, const char prefix[], const char elements[], SgTB *tb)
{
  SgTB      t;
  char      buf[256];
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(buf, elements, sizeof buf));
  PetscCall(PetscNew(&t));
  t->comm = comm;
  PetscOptionsBegin(comm, prefix, "Tight-binding force provider", NULL);
  PetscCall(SgOptionsString("-elements", "Element of each atom type, comma separated (Si: Kwon 1994, C: Xu 1992)", buf, buf, sizeof buf, &set));
  PetscCall(SgTBDMOptionsDefault(&t->o));
  PetscCall(SgTBDMOptionsRead(PetscOptionsObject, &t->o));
  PetscOptionsEnd();
  {
    char *tok = buf, *c;
    t->ntypes = 0;
    while (tok && *tok) {
      c = strchr(tok, ',');
      if (c) *c = 0;
      PetscCheck(t->ntypes < 8, comm, PETSC_ERR_USER_INPUT, "Option %selements: at most 8 types", prefix ? prefix : "");
      PetscCall(SgTBModelGet(comm, tok, &t->model[t->ntypes]));
      t->ntypes++;
      tok = c ? c + 1 : NULL;
    }
  }
  *tb = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBComputeForces(void *ctx, const SgForcesInput *in, SgForcesOutput *out)
{
  SgTB         t = (SgTB)ctx;
  PetscMPIInt  rank, size, nm, *cnt, *dsp, *cnt3, *dsp3;
  PetscInt     type0 = -1, ntot;
  SgTBGeom     g;
  SgTBEnergy   E;
  PetscReal   *f, W[9];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(t->comm, &rank));
  PetscCallMPI(MPI_Comm_size(t->comm, &size));
  for (PetscInt i = 0; i < in->n; i++) {
    PetscCheck(in->type[i] >= 0 && in->type[i] < t->ntypes, t->comm, PETSC_ERR_USER_INPUT, "Atom type %" PetscInt_FMT " has no element in the tb provider's elements option (%" PetscInt_FMT " given)", in->type[i], t->ntypes);
    if (type0 < 0) type0 = in->type[i];
    PetscCheck(!strcmp(t->model[in->type[i]].elem, t->model[type0].elem), t->comm, PETSC_ERR_SUP, "Mixed elements (%s and %s): the Kwon and Xu models have no cross parameters", t->model[in->type[i]].elem, t->model[type0].elem);
  }
  {
    PetscInt tmax = type0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tmax, 1, MPIU_INT, MPI_MAX, t->comm));
    if (type0 < 0) type0 = tmax;
    PetscCheck(tmax >= 0 && !strcmp(t->model[type0].elem, t->model[tmax].elem), t->comm, PETSC_ERR_SUP, "Mixed elements across ranks: not supported by the TB models");
  }
  PetscCall(PetscMalloc4(size, &cnt, size + 1, &dsp, size, &cnt3, size + 1, &dsp3));
  PetscCall(PetscMPIIntCast(in->n, &nm));
  PetscCallMPI(MPI_Allgather(&nm, 1, MPI_INT, cnt, 1, MPI_INT, t->comm));
  dsp[0] = dsp3[0] = 0;
  for (int p = 0; p < size; p++) { dsp[p + 1] = dsp[p] + cnt[p]; cnt3[p] = 3 * cnt[p]; dsp3[p + 1] = 3 * dsp[p + 1]; }
  ntot = dsp[size];
  g.n = ntot;
  PetscCall(PetscMalloc1(3 * ntot, &g.x));
  PetscCall(PetscMalloc1(3 * ntot, &f));
  PetscCallMPI(MPI_Allgatherv(in->x, 3 * nm, MPIU_REAL, g.x, cnt3, dsp3, MPIU_REAL, t->comm));
  for (int q = 0; q < 9; q++) g.box[q] = in->box[q];
  PetscCall(SgTBCompute(t->comm, &t->model[type0], &g, &t->o, &E, f, W, NULL));
  PetscCall(PetscArrayzero(out->f, 3 * (in->n + in->nghost)));
  PetscCall(PetscArraycpy(out->f, f + 3 * dsp[rank], 3 * in->n));
  out->energy = rank == 0 ? E.etot : 0;
  for (int q = 0; q < 9; q++) out->virial[q] = rank == 0 ? W[q] : 0;
  t->ncalls++;
  PetscCall(PetscFree(g.x));
  PetscCall(PetscFree(f));
  PetscCall(PetscFree4(cnt, dsp, cnt3, dsp3));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDestroy(SgTB *tb)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(*tb));
  PetscFunctionReturn(PETSC_SUCCESS);
}
