/* MeshfreeFlowNet's training loss on one crop (sgmffn.h): the L1 regression of the decoded fields at
   the query points plus gamma times the L1 norm of the Boussinesq residuals there (the paper's
   eq. 4 with its gamma = 0.0125; the residual terms in physical free-fall units, pde.c), each
   equation's residual optionally weighted (not in the paper: -mffn_pde_weights), plus optionally
   grad_weight[0] times the L1 misfit of the velocity gradients (a Sobolev term), grad_weight[1]
   times the mismatch of their mean square (the crop's viscous dissipation), grad_weight[2] that of
   the buoyancy gradients' (its thermal dissipation), grad_weight[3] the mismatch of the mean of
   w b (its convective heat flux) and grad_weight[4] that of the mean square vorticity (its
   enstrophy), none in the paper.

   On a crop partitioned over spatial ranks each rank decodes the query points it owns (owner-local
   8-corner decoding, no gather) and its loss is its share: the means over its points times its share
   of the points, so the ranks' losses add up to the crop's. */
#include "sgmffn.h"
#include "sgtrainer.h"

PetscErrorCode SgMFFNCropLoss(SgMFFN m, const SgMFFNPhysics *ph, SgnnTensor lowres, PetscInt P, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], SgnnTensor *loss, PetscReal *reg, PetscReal *pde)
{
  PetscFunctionBegin;
  PetscCall(SgMFFNCropLossPart(m, ph, NULL, lowres, P, P, pts, target, gamma, weight, NULL, NULL, loss, reg, pde, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a mean over this rank's Pown points as its share of the mean over the crop's P: x Pown / P */
static PetscErrorCode Share(PetscInt P, PetscInt Pown, SgnnTensor *t)
{
  SgnnTensor s;

  PetscFunctionBegin;
  if (Pown == P) PetscFunctionReturn(PETSC_SUCCESS); /* the whole crop: the serial arithmetic */
  SgCallNN(sgnn_affine(*t, (double)Pown / (double)P, 0, &s));
  sgnn_tensor_free(t);
  *t = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |mean of the squares of g [Pown, n] - mean of the squares of the targets t [Pown][n]|: the mismatch
   of the crop's gradient energy */
static PetscErrorCode EnergyMismatch(SgnnTensor g, PetscInt Pown, int n, const double *t, SgnnTensor *energy)
{
  SgnnTensor sq, e, de;
  double     et = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n * Pown; i++) et += t[i] * t[i];
  SgCallNN(sgnn_mul(g, g, &sq));
  SgCallNN(sgnn_sum(sq, 0, NULL, 0, &e));
  SgCallNN(sgnn_affine(e, 1.0 / (n * Pown), -et / (n * Pown), &de));
  SgCallNN(sgnn_abs(de, energy));
  sgnn_tensor_free(&sq);
  sgnn_tensor_free(&e);
  sgnn_tensor_free(&de);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |mean (w b) - mean (w* b*)| / (std_w std_b) over the points: the mismatch of the crop's convective
   heat flux (the Nusselt number's <w b>), decoded (the jet's physical values) against the targets */
static PetscErrorCode FluxMismatch(const SgMFFNPhysics *ph, const SgMFFNJet *J, PetscInt Pown, const double target[], SgnnTensor *flux)
{
  const double sc = 1.0 / (Pown * ph->std[1] * ph->std[3]);
  SgnnTensor   wb, s, d;
  double       ft = 0;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < Pown; p++) ft += (ph->mean[3] + ph->std[3] * target[SG_MFFN_NCH * p + 3]) * (ph->mean[1] + ph->std[1] * target[SG_MFFN_NCH * p + 1]);
  SgCallNN(sgnn_mul(J->val[3], J->val[1], &wb));
  SgCallNN(sgnn_sum(wb, 0, NULL, 0, &s));
  SgCallNN(sgnn_affine(s, sc, -ft * sc, &d));
  SgCallNN(sgnn_abs(d, flux));
  sgnn_tensor_free(&wb);
  sgnn_tensor_free(&s);
  sgnn_tensor_free(&d);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |mean om^2 - mean om*^2| over the points, om = (u_z - w_x) h / (2 sqrt(std_u std_w)) with
   h = sqrt(scale_z scale_x): the mismatch of the crop's enstrophy. Why beside the gradient energy:
   the answer's velocity is projected onto divergence-free fields before use (project.c), which
   removes a gradient field grad phi; that removes (div u)^2 from the mean square velocity gradient
   but leaves the vorticity as it is (curl grad phi = 0), and for a divergence-free field the mean
   square vorticity over a domain periodic in x with no-slip walls equals the mean square velocity
   gradient (over a crop, up to boundary terms). So matching the enstrophy matches the viscous
   dissipation of the projected answer, where matching
   the gradient energy counts the divergent part the projection takes away. The scale makes it the
   gradient energy's size (that term averages 4 squares) when std_u = std_w and scale_z = scale_x.
   grad: the targets [Pown][SG_MFFN_NGRAD], normalised per latent index step. */
static PetscErrorCode VorticityMismatch(const SgMFFNPhysics *ph, const SgMFFNJet *J, PetscInt Pown, const double grad[], SgnnTensor *enstrophy)
{
  const double h  = PetscSqrtReal(ph->scale[1] * ph->scale[2]);
  const double sc = h / (2 * PetscSqrtReal(ph->std[2] * ph->std[3]));
  SgnnTensor   uz, wx, om;
  double      *t;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(Pown, &t));
  for (PetscInt p = 0; p < Pown; p++) { /* the targets back to physical u_z, w_x, then scaled */
    const double *g = &grad[SG_MFFN_NGRAD * p];
    t[p]            = sc * (g[0] * ph->std[2] / ph->scale[1] - g[3] * ph->std[3] / ph->scale[2]);
  }
  SgCallNN(sgnn_affine(J->d1[2][1], sc, 0, &uz));
  SgCallNN(sgnn_affine(J->d1[3][2], -sc, 0, &wx));
  SgCallNN(sgnn_add(uz, wx, &om));
  PetscCall(EnergyMismatch(om, Pown, 1, t, enstrophy));
  sgnn_tensor_free(&uz);
  sgnn_tensor_free(&wx);
  sgnn_tensor_free(&om);
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The gradient terms, in normalised units per latent index step (the jet's physical derivatives
   times scale_k / std_c), over the points: l1 = mean |d out_c / d l_k - grad| over (u_z, u_x, w_z,
   w_x); energy (NULL: not wanted) = |mean (d out_c / d l_k)^2 - mean grad^2| over the same, the
   mismatch of the crop's gradient energy -- its viscous dissipation up to a constant -- which a
   point-wise fit leaves low wherever the high-res detail is not predictable from the low-res input
   (a conditional mean is smoother than any one realisation); thermal (NULL: not wanted) the same
   over (b_z, b_x), the crop's thermal dissipation. grad: [Pown][SG_MFFN_NGRAD]. */
static PetscErrorCode GradientTerms(const SgMFFNPhysics *ph, const SgMFFNJet *J, PetscInt Pown, const double grad[], SgnnTensor *l1, SgnnTensor *energy, SgnnTensor *thermal)
{
  const int  ch[3] = {2, 3, 1}; /* u, w, b: grad's order */
  SgnnTensor d[6] = {NULL, NULL, NULL, NULL, NULL, NULL}, vel, tg;
  int        gs[2] = {(int)Pown, 4};
  double    *tv, *tb;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(4 * Pown, &tv, 2 * Pown, &tb));
  for (PetscInt p = 0; p < Pown; p++) {
    for (int i = 0; i < 4; i++) tv[4 * p + i] = grad[SG_MFFN_NGRAD * p + i];
    for (int i = 0; i < 2; i++) tb[2 * p + i] = grad[SG_MFFN_NGRAD * p + 4 + i];
  }
  for (int c = 0; c < (thermal ? 3 : 2); c++) /* b's gradients only for the thermal term */
    for (int k = 1; k <= 2; k++) SgCallNN(sgnn_affine(J->d1[ch[c]][k], ph->scale[k] / ph->std[ch[c]], 0, &d[2 * c + k - 1]));
  SgCallNN(sgnn_concat(4, d, 1, &vel));
  SgCallNN(sgnn_tensor_from_f64(sgnn_tensor_backend(vel), sgnn_tensor_dtype(vel), 2, gs, tv, &tg));
  SgCallNN(sgnn_l1_loss(vel, tg, l1));
  if (energy) PetscCall(EnergyMismatch(vel, Pown, 4, tv, energy));
  if (thermal) {
    SgnnTensor b;
    SgCallNN(sgnn_concat(2, d + 4, 1, &b));
    PetscCall(EnergyMismatch(b, Pown, 2, tb, thermal));
    sgnn_tensor_free(&b);
  }
  for (int i = 0; i < 6; i++) sgnn_tensor_free(&d[i]);
  sgnn_tensor_free(&vel);
  sgnn_tensor_free(&tg);
  PetscCall(PetscFree2(tv, tb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNCropLossPart(SgMFFN m, const SgMFFNPhysics *ph, const SgMFFNPart *part, SgnnTensor lowres, PetscInt P, PetscInt Pown, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], const double grad[], const PetscReal grad_weight[SG_MFFN_NGW], SgnnTensor *loss, PetscReal *reg, PetscReal *pde, PetscReal gterm[SG_MFFN_NGW])
{
  SgnnTensor        lat, pt, out, tg, lreg, res, zero;
  SgMFFNLatentBlock B;
  int               ps[2] = {(int)Pown, 3}, ts[2] = {(int)Pown, SG_MFFN_NCH};
  double            v;
  PetscBool         gw = PETSC_FALSE;

  PetscFunctionBegin;
  for (int i = 0; grad_weight && i < SG_MFFN_NGW; i++) gw = (PetscBool)(gw || grad_weight[i] > 0);
  PetscCall(SgMFFNEncodePart(m, part, lowres, &lat));
  PetscCall(SgMFFNLatentBlockCreate(m, part, lat, &B));
  *reg = 0;
  *pde = 0;
  for (int i = 0; gterm && i < SG_MFFN_NGW; i++) gterm[i] = 0;
  PetscCheck(!gw || grad, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "mffn: gradient weights without gradient targets");
  if (!Pown) {
    /* no point here, but the encoder's backward (halo exchanges, batch statistics) is collective:
       the loss must reach every node of this rank's tape, with a zero gradient */
    SgnnTensor s;
    SgCallNN(sgnn_sum(B.t, 0, NULL, 0, &s));
    SgCallNN(sgnn_affine(s, 0, 0, loss));
    sgnn_tensor_free(&s);
    sgnn_tensor_free(&lat);
    SgMFFNLatentBlockFree(&B);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, ps, pts, &pt));
  SgCallNN(sgnn_tensor_set_requires_grad(pt, 1));
  PetscCall(SgMFFNDecodeBlock(m, &B, pt, &out));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, ts, target, &tg));
  SgCallNN(sgnn_l1_loss(out, tg, &lreg));
  PetscCall(Share(P, Pown, &lreg));
  SgCallNN(sgnn_tensor_item(lreg, &v));
  *reg = v;
  *loss = sgnn_tensor_ref(lreg);
  if (gamma > 0 || gw) {
    SgMFFNJet  J;
    SgnnTensor terms[1 + SG_MFFN_NGW] = {NULL}; /* the PDE term, then the terms beyond the paper's */
    PetscReal  w[1 + SG_MFFN_NGW]     = {gamma};
    PetscReal *val[1 + SG_MFFN_NGW]   = {pde};
    for (int i = 0; i < SG_MFFN_NGW; i++) w[1 + i] = gw ? grad_weight[i] : 0, val[1 + i] = gterm ? &gterm[i] : NULL;
    PetscCall(SgMFFNDerivatives(ph, out, pt, &J));
    if (gamma > 0) {
      SgCallNN(sgnn_tensor_zeros(m->be, m->dt, 2, ts, &zero));
      PetscCall(SgMFFNResidualWeighted(ph, &J, weight, &res));
      SgCallNN(sgnn_l1_loss(res, zero, &terms[0]));
      sgnn_tensor_free(&res);
      sgnn_tensor_free(&zero);
    }
    if (gw) PetscCall(GradientTerms(ph, &J, Pown, grad, &terms[1], w[2] > 0 ? &terms[2] : NULL, w[3] > 0 ? &terms[3] : NULL));
    if (w[4] > 0) PetscCall(FluxMismatch(ph, &J, Pown, target, &terms[4]));
    if (w[5] > 0) PetscCall(VorticityMismatch(ph, &J, Pown, grad, &terms[5]));
    SgMFFNJetFree(&J);
    for (int i = 0; i < 1 + SG_MFFN_NGW; i++) {
      SgnnTensor sc, sum;
      if (!terms[i]) continue;
      PetscCall(Share(P, Pown, &terms[i]));
      SgCallNN(sgnn_tensor_item(terms[i], &v));
      if (val[i]) *val[i] = v;
      if (!(w[i] > 0)) { /* monitored only: the l1 misfit beside the energy term */
        sgnn_tensor_free(&terms[i]);
        continue;
      }
      SgCallNN(sgnn_affine(terms[i], w[i], 0, &sc));
      SgCallNN(sgnn_add(*loss, sc, &sum));
      sgnn_tensor_free(&sc);
      sgnn_tensor_free(loss);
      sgnn_tensor_free(&terms[i]);
      *loss = sum;
    }
  }
  SgMFFNLatentBlockFree(&B);
  sgnn_tensor_free(&lat);
  sgnn_tensor_free(&pt);
  sgnn_tensor_free(&out);
  sgnn_tensor_free(&tg);
  sgnn_tensor_free(&lreg);
  PetscFunctionReturn(PETSC_SUCCESS);
}
