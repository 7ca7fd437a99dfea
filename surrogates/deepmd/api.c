/* The in-process inference API (sgdeepmd.h) over the hand-written evaluator of infer.c. */
#include <math.h>
#include "deepmd.h"
#include "sgdeepmd.h"

PetscErrorCode SgDeepmdLoad(const char path[], SgDeepmd *m)
{
  PetscFunctionBegin;
  PetscCall(SgDPModelLoad(path, m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdDestroy(SgDeepmd *m)
{
  PetscFunctionBegin;
  PetscCall(SgDPModelDestroy(m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdGetInfo(SgDeepmd m, PetscReal *rcut, PetscInt *ntypes, const char **t0, PetscInt *np)
{
  long n;

  PetscFunctionBegin;
  if (rcut) *rcut = m->cfg.rcut;
  if (ntypes) *ntypes = m->cfg.ntypes;
  if (t0) *t0 = m->cfg.type_map[0];
  SgNN(sgnn_params_count(m->P, &n));
  if (np) *np = (PetscInt)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdGetTypeName(SgDeepmd m, PetscInt t, const char **name)
{
  PetscFunctionBegin;
  PetscCheck(t >= 0 && t < m->cfg.ntypes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: type %" PetscInt_FMT " out of range", t);
  *name = m->cfg.type_map[t];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdComputeGhosts(SgDeepmd m, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], PetscReal *energy, PetscReal f[], PetscReal virial[])
{
  PetscReal v[9];

  PetscFunctionBegin;
  PetscCall(SgDPEvalOpen(m, n, nall, x, type, energy, f, v, NULL));
  if (virial)
    for (int k = 0; k < 9; k++) virial[k] = v[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdComputeGhostsAtomic(SgDeepmd m, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[], PetscReal avirial[])
{
  PetscFunctionBegin;
  PetscCall(SgDeepmdComputeNeighbors(m, n, nall, x, type, NULL, NULL, energy, f, virial, eatom, avirial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdComputeNeighbors(SgDeepmd m, PetscInt n, PetscInt nall, const PetscReal x[], const PetscInt type[], const PetscInt nboff[], const PetscInt nbr[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[], PetscReal avirial[])
{
  PetscReal v[9];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nall; i++) PetscCheck(type[i] >= 0 && type[i] < m->cfg.ntypes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: atom %" PetscInt_FMT " has type %" PetscInt_FMT "; the model has %" PetscInt_FMT " types", i, type[i], m->cfg.ntypes);
  for (PetscInt i = 0; nboff && i < n; i++) PetscCheck(nboff[i] >= 0 && nboff[i + 1] >= nboff[i], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: the neighbour list's offsets of atom %" PetscInt_FMT " (%" PetscInt_FMT ", %" PetscInt_FMT ") do not increase", i, nboff[i], nboff[i + 1]);
  PetscCall(SgDPEvalOpenAtomic(m, n, nall, x, type, nboff, nbr, energy, f, v, eatom, avirial));
  if (virial)
    for (int k = 0; k < 9; k++) virial[k] = v[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdCompute(SgDeepmd m, PetscInt n, const PetscReal x[], const PetscInt type[], const PetscReal box[], PetscReal *energy, PetscReal f[], PetscReal virial[], PetscReal eatom[])
{
  PetscReal v[9];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCheck(type[i] >= 0 && type[i] < m->cfg.ntypes, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: atom %" PetscInt_FMT " has type %" PetscInt_FMT "; the model has %" PetscInt_FMT " types", i, type[i], m->cfg.ntypes);
  if (!box) {
    PetscCall(SgDPEvalOpen(m, n, n, x, type, energy, f, v, eatom));
  } else {
    PetscInt   nall, *tall, *map;
    PetscReal *xall, *fall;
    PetscCall(SgDPImages(n, x, type, box, m->cfg.rcut, &nall, &xall, &tall, &map));
    PetscCall(PetscMalloc1(3 * nall, &fall));
    PetscCall(SgDPEvalOpen(m, n, nall, xall, tall, energy, fall, v, eatom));
    PetscCall(PetscArrayzero(f, 3 * n));
    for (PetscInt k = 0; k < nall; k++)
      for (int a = 0; a < 3; a++) f[3 * map[k] + a] += fall[3 * k + a];
    PetscCall(PetscFree(fall));
    PetscCall(PetscFree3(xall, tall, map));
  }
  if (virial)
    for (int k = 0; k < 9; k++) virial[k] = v[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelDeviation(PetscInt K, SgDeepmd models[], PetscInt n, const PetscReal x[], const PetscInt type[], const PetscReal box[], PetscReal *maxd, PetscReal *avgd, PetscReal fmean[])
{
  PetscReal *f, *s1, *s2, e, mx = 0, av = 0;

  PetscFunctionBegin;
  PetscCheck(K >= 2, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: model deviation needs at least 2 models, got %" PetscInt_FMT, K);
  PetscCall(PetscMalloc3(3 * n, &f, 3 * n, &s1, n, &s2));
  PetscCall(PetscArrayzero(s1, 3 * n));
  PetscCall(PetscArrayzero(s2, n));
  for (PetscInt k = 0; k < K; k++) {
    PetscCall(SgDeepmdCompute(models[k], n, x, type, box, &e, f, NULL, NULL));
    for (PetscInt i = 0; i < n; i++) {
      for (int a = 0; a < 3; a++) s1[3 * i + a] += f[3 * i + a] / K;
      s2[i] += (f[3 * i] * f[3 * i] + f[3 * i + 1] * f[3 * i + 1] + f[3 * i + 2] * f[3 * i + 2]) / K;
    }
  }
  for (PetscInt i = 0; i < n; i++) {
    PetscReal m2 = s1[3 * i] * s1[3 * i] + s1[3 * i + 1] * s1[3 * i + 1] + s1[3 * i + 2] * s1[3 * i + 2];
    PetscReal d  = sqrt(PetscMax(0.0, s2[i] - m2));
    mx           = PetscMax(mx, d);
    av += d / n;
  }
  if (fmean) PetscCall(PetscArraycpy(fmean, s1, 3 * n));
  *maxd = mx;
  if (avgd) *avgd = av;
  PetscCall(PetscFree3(f, s1, s2));
  PetscFunctionReturn(PETSC_SUCCESS);
}
