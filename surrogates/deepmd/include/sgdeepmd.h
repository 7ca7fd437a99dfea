/* Deep Potential (DeepPot-SE, se_e2_a) surrogate: public in-process API (docs/deepmd.md).

   In the spirit of DeePMD-kit's C API (DeepPot::compute): load a model file, then
     compute(coords, types, box) -> energy, forces, virial
   Units are those of the training data (metal: Angstrom, eV, eV/Angstrom, virial in eV).
   Virial convention: -sum_ij r_ij (x) dE/dr_ij (= sum_i x_i (x) F_i for a periodic system; LAMMPS').

   The surrogate type "deepmd" (SgSurrogateCreate_DeepMD) trains and saves these models
   (surge train) and serves md.forces (md: {forces: deepmd} or {surrogate: deepmd}: SgDeepmdForcesProviderCreate)
   from one model or, with K > 1 models, from the first one and reports the ensemble's max force
   deviation through SgDeepmdForcesUncertainty (DeePMD-kit's model deviation). */
#pragma once
#include <petscsys.h>
#include "sgcompat.h"
#include "sgforces.h"

typedef struct _SgDPModel *SgDeepmd;

PETSC_EXTERN PetscErrorCode SgDeepmdLoad(const char path[], SgDeepmd *);
PETSC_EXTERN PetscErrorCode SgDeepmdDestroy(SgDeepmd *);
/* Periodic box (rows a, b, c; any triclinic cell) or box == NULL for an open cluster.
   f[3n]; virial[9] (may be NULL); eatom[n] per-atom energies (may be NULL). */
PETSC_EXTERN PetscErrorCode SgDeepmdCompute(SgDeepmd, PetscInt n, const PetscReal x[], const PetscInt type[], const PetscReal box[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[]);
/* Open system with explicit ghosts: energy of atoms 0..n-1 whose neighbours are any of the nall
   atoms; forces on all nall atoms (ghost forces belong to their owners: Newton's third law). */
PETSC_EXTERN PetscErrorCode SgDeepmdComputeGhosts(SgDeepmd, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], PetscReal *energy, PetscReal f[], PetscReal virial[]);
/* the same with the atomic energies of the n centres (eatom[n]) and DeePMD-kit's atomic virials of all
   nall atoms (avirial[nall][9], row-major; summed over atoms it is the transpose of virial) */
PETSC_EXTERN PetscErrorCode SgDeepmdComputeGhostsAtomic(SgDeepmd, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[], PetscReal avirial[]);
/* the same on a neighbour list the caller gives (a KIM simulator's, say) instead of surge's cell-list
   search: the candidates of centre i (< n) are nbr[nboff[i] .. nboff[i+1]-1], indices into the nall
   atoms; entries at or beyond the cutoff and i itself are passed over, a neighbour within the cutoff
   that the list omits is not seen. NULL nboff: search as SgDeepmdComputeGhostsAtomic. */
PETSC_EXTERN PetscErrorCode SgDeepmdComputeNeighbors(SgDeepmd, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], const PetscInt nboff[], const PetscInt nbr[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[], PetscReal avirial[]);
/* Tabulate the embedding nets ("compressed" model): quintic Hermite pieces of width `step` in the
   normalised input, from r = rmin (length units) to the cutoff; beyond the table the nets are used. */
PETSC_EXTERN PetscErrorCode SgDeepmdCompress(SgDeepmd, PetscReal step, PetscReal rmin);
PETSC_EXTERN PetscErrorCode SgDeepmdGetInfo(SgDeepmd, PetscReal *rcut, PetscInt *ntypes, const char **type_name0, PetscInt *nparams);
PETSC_EXTERN PetscErrorCode SgDeepmdGetTypeName(SgDeepmd, PetscInt t, const char **name);

/* Model deviation of an ensemble of K models (DeePMD-kit's dp model_devi): per atom
   sigma_i = sqrt(<|F_i|^2> - |<F_i>|^2) over the models; max_devi_f = max_i sigma_i,
   avg_devi_f = mean_i sigma_i. fmean[3n] (may be NULL) gets the ensemble mean force. */
PETSC_EXTERN PetscErrorCode SgDeepmdModelDeviation(PetscInt K, SgDeepmd models[], PetscInt n, const PetscReal x[], const PetscInt type[], const PetscReal box[], PetscReal *max_devi_f, PetscReal *avg_devi_f, PetscReal fmean[]);

/* md.forces provider context (the MD provider "deepmd" makes one; so can the lead's swap code):
   K models; forces come from model 0 (DeePMD-kit's convention), the uncertainty is the ensemble. */
typedef struct {
  PetscInt  K;
  SgDeepmd *models;
  PetscInt *tmap;  /* md type -> model type */
  PetscInt  cap;
  PetscInt *tbuf;
  PetscReal *fbuf;
  /* neighbours beyond model 0's sel (dropped, nearest kept, as DeePMD-kit does): summed over the
     ranks of comm at each force call (MPI_COMM_NULL: this process only); warned once, summed up at
     the end of the run */
  MPI_Comm   comm;
  PetscInt64 sel_dropped, sel_calls, sel_over, sel_local;
  PetscInt  *sel_maxseen;
  PetscBool  sel_warned;
} SgDeepmdForces;
PETSC_EXTERN PetscErrorCode SgDeepmdForcesCreate(PetscInt K, const char *const paths[], SgDeepmdForces **);
PETSC_EXTERN PetscErrorCode SgDeepmdForcesDestroy(void *ctx);
/* SgForcesFn: owned atoms 0..n-1 are centres, ghosts are neighbours; forces on ghosts are written
   (the caller reverse-communicates them), energy is that of the owned atoms. */
PETSC_EXTERN PetscErrorCode SgDeepmdForcesFn(void *ctx, const SgForcesInput *, SgForcesOutput *);
/* SgForcesUncertaintyFn: max over owned atoms of the ensemble force deviation (needs K >= 2). An owned
   atom's force includes the terms computed as ghosts: each model's ghost forces are folded onto their
   owners through in->fold_ghosts (the MD engine's reverse communication, so 1 and P ranks agree), or,
   without it, onto the periodic images found on this rank (exact for a single-rank caller). */
PETSC_EXTERN PetscErrorCode SgDeepmdForcesUncertainty(void *ctx, const SgForcesInput *, PetscReal *deviation);
/* DeePMD-kit's model deviation record (its model_devi.out columns after the step) over all ranks of
   comm: devi = {max, min, avg of eps_V,ab = std_k(V_ab)/N over the 9 virial components; max, min,
   avg over the atoms of eps_F,i = sqrt(<|F_i - <F_i>|^2>)} (needs K >= 2; forces folded as above). */
PETSC_EXTERN PetscErrorCode SgDeepmdForcesModelDevi(void *ctx, const SgForcesInput *, MPI_Comm comm, PetscReal devi[6]);

/* The md.forces provider of the "deepmd" surrogate: reads <prefix>deepmd_models (forces from the first
   model, the model deviation of all of them as uncertainty when K >= 2) and <prefix>deepmd_compress*. */
PETSC_EXTERN PetscErrorCode SgDeepmdForcesProviderCreate(const SgForcesProviderInfo *, SgForcesProvider *);

/* `surge model` (surrogates/deepmd/modeltools.c), as DeePMD-kit's dp tools: test (dp test; detail:
   NULL or the prefix of dp test -d files; compress_step > 0 tabulates first), compress (a model file
   with its embedding tabulated), info, devi (model deviation of K models over an H5MD trajectory,
   written as model_devi.out). Collective on comm. */
PETSC_EXTERN PetscErrorCode SgDeepmdModelTest(MPI_Comm, const char model[], PetscInt ndata, const char *const data[], const char detail[], PetscReal compress_step);
PETSC_EXTERN PetscErrorCode SgDeepmdModelCompress(MPI_Comm, const char model[], const char out[], PetscReal step, PetscReal rmin);
PETSC_EXTERN PetscErrorCode SgDeepmdModelInfo(MPI_Comm, const char model[]);
/* DeePMD-kit's backend-independent serialized model (dp convert-backend's .dp / .yaml), both ways
   (interop.c; mapping table in docs/deepmd.md): import writes a surge model file, export the DeePMD-kit
   file chosen by the suffix. Collective; every rank reads, rank 0 writes. */
PETSC_EXTERN PetscErrorCode SgDeepmdModelImport(MPI_Comm, const char in[], const char out[]);
PETSC_EXTERN PetscErrorCode SgDeepmdModelExport(MPI_Comm, const char in[], const char out[]);
/* a DeePMD-kit .dp/.yaml model read straight into memory (no file written) */
PETSC_EXTERN PetscErrorCode SgDeepmdReadDeePMDKit(const char in[], SgDeepmd *);
PETSC_EXTERN PetscErrorCode SgDeepmdModelDevi(MPI_Comm, PetscInt K, const char *const models[], const char traj[], const char out[]);
