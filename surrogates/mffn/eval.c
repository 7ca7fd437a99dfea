/* Held-out evaluation of the mffn surrogate against the high-res truth, with trilinear interpolation
   of the same low-res input as the baseline (the paper's first baseline, section V). */
#include "sgmffndata.h"
#include "sgtrainer.h"
#include <math.h>

/* Crop id of D (points drawn from seed, as the trainer's held-out check draws them): the model's answers
   and trilinear interpolation of the same low-res input at its P points, out[0] and out[1], both [P, 4]
   normalised; pt [P, 3] the points, recording derivatives when grad (for the PDE residuals). low, pts,
   tgt are the caller's buffers (SgMFFNDataCrop). */
PetscErrorCode SgMFFNCropAnswers(SgMFFN m, const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt P, uint64_t seed, int64_t id, PetscBool grad, double *low, double *pts, double *tgt, SgnnTensor *pt, SgnnTensor out[2])
{
  int        ls[5] = {1, SG_MFFN_NCH, (int)(crop[0] / factor[0]), (int)(crop[1] / factor[1]), (int)(crop[2] / factor[2])}, ps[2] = {(int)P, 3}, p3[3] = {1, (int)P, 3}, os[2] = {(int)P, SG_MFFN_NCH};
  SgnnTensor x, lat, pt3, o3;

  PetscFunctionBegin;
  PetscCall(SgMFFNDataCrop(D, crop, factor, P, seed, -1, id, low, pts, tgt));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 5, ls, low, &x));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, ps, pts, pt));
  if (grad) SgCallNN(sgnn_tensor_set_requires_grad(*pt, 1));
  PetscCall(SgMFFNEncode(m, x, &lat));
  PetscCall(SgMFFNDecode(m, lat, *pt, &out[0]));
  SgCallNN(sgnn_reshape(*pt, 3, p3, &pt3));
  SgCallNN(sgnn_interp_trilinear(x, pt3, &o3)); /* [1, P, 4]; a residual model's baseline exactly (mffn_grad 3b) */
  SgCallNN(sgnn_reshape(o3, 2, os, &out[1]));
  sgnn_tensor_free(&x);
  sgnn_tensor_free(&lat);
  sgnn_tensor_free(&pt3);
  sgnn_tensor_free(&o3);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNEvaluate(SgMFFN m, const SgMFFNPhysics *ph, const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt ncrops, PetscInt P, uint64_t seed, SgMFFNEval *E)
{
  PetscInt lo[3], nlo;
  double  *low, *pts, *tgt, *pred[2], *truth, tmin[SG_MFFN_NCH], tmax[SG_MFFN_NCH], tsum[SG_MFFN_NCH] = {0}, ae[2][SG_MFFN_NCH] = {{0}}, se[2][SG_MFFN_NCH] = {{0}}, st[SG_MFFN_NCH] = {0}, pde[2][4] = {{0}};
  long     N = (long)ncrops * P;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(E, sizeof *E));
  for (int k = 0; k < 3; k++) lo[k] = crop[k] / factor[k];
  nlo = lo[0] * lo[1] * lo[2];
  PetscCall(PetscMalloc6(SG_MFFN_NCH * nlo, &low, 3 * P, &pts, SG_MFFN_NCH * P, &tgt, SG_MFFN_NCH * N, &pred[0], SG_MFFN_NCH * N, &pred[1], SG_MFFN_NCH * N, &truth));
  for (PetscInt i = 0; i < ncrops; i++) {
    SgnnTensor pt, out[2];
    PetscCall(SgMFFNCropAnswers(m, D, crop, factor, P, seed, (int64_t)i * D->nsamp / ncrops, PETSC_TRUE, low, pts, tgt, &pt, out));
    for (int q = 0; q < 2; q++) {
      SgCallNN(sgnn_tensor_to_f64(out[q], pred[q] + (long)i * P * SG_MFFN_NCH));
      PetscCall(SgMFFNResidualSums(ph, out[q], pt, P, pde[q]));
      sgnn_tensor_free(&out[q]);
    }
    PetscCall(PetscArraycpy(truth + (long)i * P * SG_MFFN_NCH, tgt, SG_MFFN_NCH * P));
    sgnn_tensor_free(&pt);
  }
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    tmin[c] = PETSC_MAX_REAL;
    tmax[c] = -PETSC_MAX_REAL;
  }
  for (long j = 0; j < N; j++) /* physical units */
    for (int c = 0; c < SG_MFFN_NCH; c++) {
      double t = ph->mean[c] + ph->std[c] * truth[SG_MFFN_NCH * j + c];
      tmin[c] = PetscMin(tmin[c], t);
      tmax[c] = PetscMax(tmax[c], t);
      tsum[c] += t;
      for (int q = 0; q < 2; q++) {
        double e = ph->std[c] * (pred[q][SG_MFFN_NCH * j + c] - truth[SG_MFFN_NCH * j + c]);
        ae[q][c] += fabs(e);
        se[q][c] += e * e;
      }
    }
  for (long j = 0; j < N; j++)
    for (int c = 0; c < SG_MFFN_NCH; c++) {
      double t = ph->mean[c] + ph->std[c] * truth[SG_MFFN_NCH * j + c] - tsum[c] / N;
      st[c] += t * t;
    }
  for (int q = 0; q < 2; q++) {
    for (int c = 0; c < SG_MFFN_NCH; c++) {
      E->nmae[q][c] = ae[q][c] / N / (tmax[c] - tmin[c]);
      E->r2[q][c] = 1 - se[q][c] / st[c];
    }
    for (int e = 0; e < 4; e++) E->pde[q][e] = pde[q][e] / N;
  }
  E->ncrops = ncrops;
  E->npoints = P;
  PetscCall(PetscFree6(low, pts, tgt, pred[0], pred[1], truth));
  PetscFunctionReturn(PETSC_SUCCESS);
}
