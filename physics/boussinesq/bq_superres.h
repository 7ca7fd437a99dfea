/* The field.superres slot of the Boussinesq solver: private data shared by bq_superres.c (options,
   blocks, the slot calls, checkpoint, report), bq_finesolve.c (the solver's own provider, a fine
   solve of the block's segment) and bq_srdiag.c (diagnostics and fields of the fine answer).

   Grids (all uniform, cell-centred like the solver's own output):
     fine output  nxo x nzo points: x_i = (i + 1/2) Lx / nxo, z_j = (j + 1/2) Lz / nzo — the grid of
                  the fine fields and diagnostics, the grid a fine run writes;
     block        the fine output grid subsampled by (fz, fx) from its first point:
                  z_k = (fz k + 1/2) Lz / nzo, x_i = (fx i + 1/2) Lx / nxo (nzo/fz x nxo/fx points) —
                  MeshfreeFlowNet's low-res input is made this way from fine data, so the coarse
                  solution sampled there is what it was trained to read;
   and in time: a block holds the coarse solution at T block times D apart (t = k D). */
#pragma once
#include "bq.h"
#include "sgslot.h"

struct _n_BqSuperres {
  /* options */
  PetscInt                cells[2];  /* fine solve nx, nz (Chebyshev points); cells[0] = 0: off */
  PetscInt                out[2];    /* fine output nxo, nzo */
  PetscInt                factor[2]; /* block subsampling fz, fx */
  PetscReal               dt;        /* block spacing D */
  PetscInt                T;         /* snapshots per block */
  PetscReal               cfl, max_dt;
  char                    surname[64];
  SgFieldSuperresProvider sur;
  SgSlot                  slot;
  /* the fine solve (bq_finesolve.c) */
  Bq                     *fine;
  /* blocks: the last nb (<= T) block snapshots, oldest first: time, coarse state, block values */
  PetscInt                nb, next;  /* held; index of the next block time next D */
  PetscInt                Zb, Xb, nstate;
  PetscReal              *btime, *bstate, *bval, *blk, *zb, *xb, tb[2];
  SgBqGridEval            beval;
  /* fine output: this rank's rows [r0, r1) of the nzo rows */
  PetscReal              *zo, *xo, *fv; /* fv [4][(r1 - r0) nxo]: the answer at time ftime */
  PetscReal               ftime;
  PetscInt                r0, r1;
  DM                      da;
  Vec                     vout;
  fftw_plan               r2c;
  double                 *row;
  fftw_complex           *spec;
  /* per evaluation: t, served by the surrogate, uncertainty, Nu, KE, KE spectrum [nko] */
  PetscInt                ns, cap, nko;
  PetscReal              *ser;
  PetscInt                d_nu, d_ke, d_sur; /* the solver's diagnostics holding the last evaluation */
};

#define BQ_SR_WIDTH(sr) (5 + (sr)->nko)

/* bq_finesolve.c */
PETSC_INTERN PetscErrorCode SgBqFineCreate(Bq *coarse, BqSuperres *);
PETSC_INTERN PetscErrorCode SgBqSuperresByFineSolve(void *ctx, const SgFieldSuperresInput *, SgFieldSuperresOutput *);
/* bq_srdiag.c */
PETSC_INTERN PetscErrorCode SgBqSuperresDiagSetUp(Bq *, BqSuperres *);
PETSC_INTERN PetscErrorCode SgBqSuperresRecord(Bq *, BqSuperres *, PetscReal t, PetscBool by_surrogate, PetscReal uncertainty);
PETSC_INTERN PetscErrorCode SgBqSuperresWriteFine(Bq *, BqSuperres *, SgOutput);
