/* Shared helpers of the deepmd unit tests: a small random model and random water-like frames. */
#pragma once
#include <math.h>
#include <petscsys.h>
#include "../../../surrogates/deepmd/deepmd.h"
#include "../../../surrogates/deepmd/deepmd_train.h"
#include "sgdeepmd.h"

static inline double DPUniform(unsigned long long *s)
{
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((*s >> 11) & ((1ULL << 53) - 1)) / (double)(1ULL << 53);
}

static inline void DPSmallConfig(SgDPConfig *c)
{
  PetscMemzero(c, sizeof *c);
  c->ntypes = 2;
  strcpy(c->type_map[0], "O");
  strcpy(c->type_map[1], "H");
  c->rcut = 4.0;
  c->rcut_smth = 1.0;
  c->sel[0] = 24;
  c->sel[1] = 48;
  c->nemb = 3;
  c->emb[0] = 8;
  c->emb[1] = 16;
  c->emb[2] = 32;
  c->axis = 4;
  c->nfit = 3;
  c->fit[0] = c->fit[1] = c->fit[2] = 24;
  c->emb_resnet_dt = PETSC_FALSE;
  c->fit_resnet_dt = PETSC_TRUE;
  c->seed = 1;
}

/* n atoms (first third O), random in box (triclinic tilt), no pair closer than dmin */
static inline void DPRandomFrame(unsigned long long *s, PetscInt n, const double box[9], double dmin, double *x, PetscInt *type)
{
  for (PetscInt i = 0; i < n; i++) {
    type[i] = i < n / 3 ? 0 : 1;
    for (int tries = 0;; tries++) {
      double f[3] = {DPUniform(s), DPUniform(s), DPUniform(s)};
      for (int q = 0; q < 3; q++) x[3 * i + q] = f[0] * box[q] + f[1] * box[3 + q] + f[2] * box[6 + q];
      int ok = 1;
      for (PetscInt j = 0; j < i && ok; j++) {
        /* minimum image in fractional space is overkill here: boxes are near-orthorhombic */
        double d2 = 0;
        for (int q = 0; q < 3; q++) {
          double d = x[3 * i + q] - x[3 * j + q], L = box[4 * q];
          d -= L * round(d / L);
          d2 += d * d;
        }
        ok = d2 > dmin * dmin;
      }
      if (ok || tries > 1000) break;
    }
  }
}

/* statistics from a few frames, then random weights */
static inline PetscErrorCode DPRandomModel(const SgDPConfig *c, PetscInt nf, PetscInt n, const double *xs, const PetscInt *type, const double *box, SgDPModel *m)
{
  SgDPStats st;
  PetscFunctionBeginUser;
  PetscCall(SgDPModelCreate(c, m));
  PetscCall(SgDPStatsBegin(&st));
  for (PetscInt f = 0; f < nf; f++) PetscCall(SgDPStatsAddFrame(*m, &st, n, xs + 3 * n * f, type, box));
  PetscCall(SgDPStatsEnd(*m, &st, PETSC_COMM_SELF));
  PetscCall(SgDPModelInitWeights(*m, 12345));
  (*m)->bias[0] = -0.5;
  (*m)->bias[1] = -0.25;
  PetscFunctionReturn(PETSC_SUCCESS);
}
