/* The gain of a residual model's learned correction (not in the paper), fitted on training crops
   after training and folded into ImNet's last layer.

   A residual model answers trilinear interpolation of its input plus a learned correction r. Trained
   by L1 regression with the PDE and crop-energy terms, r comes out smaller than the part of the truth it
   predicts: on held-out Rayleigh-Benard data the least-squares scale of the velocity correction,
   sum r.t / sum r.r with t = truth - trilinear, was 1.05-1.29 (docs/mffn.md, "The correction's gain"),
   and the velocity-gradient energy fell 5-6 % short. The gain here is that least-squares scale, fitted
   on the training data (crops drawn as the held-out evaluation draws them, SgMFFNCropAnswers), one for p,
   one for b and one shared by u and w (a common scale keeps the correction's direction, so the
   divergence-free projection, linear, commutes with it). Folding it into the last layer (row c of its
   weight and its bias times the gain) makes the model decode trilinear + gain * r exactly, with no new
   parameter and no change to the model file. */
#include "sgmffndata.h"
#include "sgtrainer.h"

static const int gain_group[SG_MFFN_NCH] = {0, 1, 2, 2}; /* p, b, velocity (u and w) */

PetscErrorCode SgMFFNCorrectionGain(SgMFFN m, const SgMFFNData *D, const PetscInt crop[3], const PetscInt factor[3], PetscInt ncrops, PetscInt P, uint64_t seed, PetscReal gain[SG_MFFN_NGAIN])
{
  PetscInt lo[3], nlo;
  double  *low, *pts, *tgt, *out, *base, rt[SG_MFFN_NGAIN] = {0}, rr[SG_MFFN_NGAIN] = {0};

  PetscFunctionBegin;
  PetscCheck(m->cfg.residual && !m->cfg.stream, PETSC_COMM_SELF, PETSC_ERR_SUP, "mffn: the correction's gain needs a residual model without stream_function (-mffn_residual 1 -mffn_stream_function 0)");
  PetscCheck(ncrops > 0 && P > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: the correction's gain needs at least one crop and one point (%" PetscInt_FMT " crops, %" PetscInt_FMT " points)", ncrops, P);
  for (int k = 0; k < 3; k++) lo[k] = crop[k] / factor[k];
  nlo = lo[0] * lo[1] * lo[2];
  PetscCall(PetscMalloc5(SG_MFFN_NCH * nlo, &low, 3 * P, &pts, SG_MFFN_NCH * P, &tgt, SG_MFFN_NCH * P, &out, SG_MFFN_NCH * P, &base));
  for (PetscInt i = 0; i < ncrops; i++) {
    SgnnTensor pt, y[2];
    PetscCall(SgMFFNCropAnswers(m, D, crop, factor, P, seed, (int64_t)i * D->nsamp / ncrops, PETSC_FALSE, low, pts, tgt, &pt, y));
    SgCallNN(sgnn_tensor_to_f64(y[0], out));
    SgCallNN(sgnn_tensor_to_f64(y[1], base)); /* trilinear: a residual model's baseline */
    for (PetscInt j = 0; j < SG_MFFN_NCH * P; j++) {
      double r = out[j] - base[j], t = tgt[j] - base[j];
      int    g = gain_group[j % SG_MFFN_NCH];
      rt[g] += r * t;
      rr[g] += r * r;
    }
    sgnn_tensor_free(&pt);
    sgnn_tensor_free(&y[0]);
    sgnn_tensor_free(&y[1]);
  }
  for (int g = 0; g < SG_MFFN_NGAIN; g++) gain[g] = rr[g] > 0 ? rt[g] / rr[g] : 1; /* no correction at all: nothing to scale */
  PetscCall(PetscFree5(low, pts, tgt, out, base));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNScaleCorrection(SgMFFN m, const PetscReal gain[SG_MFFN_NGAIN])
{
  SgnnTensor W = m->mlp_w[m->cfg.nmlp], b = m->mlp_b[m->cfg.nmlp];
  long       nw = sgnn_tensor_numel(W), nb = sgnn_tensor_numel(b);
  double    *w, *v;

  PetscFunctionBegin;
  PetscCheck(m->cfg.residual && !m->cfg.stream, PETSC_COMM_SELF, PETSC_ERR_SUP, "mffn: the correction's gain needs a residual model without stream_function");
  PetscCheck(nb == SG_MFFN_NCH && nw % nb == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "mffn: ImNet's last layer has %ld outputs, not %d", nb, SG_MFFN_NCH);
  for (int g = 0; g < SG_MFFN_NGAIN; g++) PetscCheck(PetscIsNormalReal(gain[g]), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mffn: correction gain %d is %g; it must be finite and not zero", g, (double)gain[g]);
  PetscCall(PetscMalloc2(nw, &w, nb, &v));
  SgCallNN(sgnn_tensor_to_f64(W, w));
  SgCallNN(sgnn_tensor_to_f64(b, v));
  for (long c = 0; c < nb; c++) { /* W is [out, in]: row c feeds output channel c */
    for (long k = 0; k < nw / nb; k++) w[c * (nw / nb) + k] *= gain[gain_group[c]];
    v[c] *= gain[gain_group[c]];
  }
  SgCallNN(sgnn_tensor_set_f64(W, w));
  SgCallNN(sgnn_tensor_set_f64(b, v));
  PetscCall(PetscFree2(w, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
