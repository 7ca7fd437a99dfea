/* MeshfreeFlowNet's training loss on one crop (sgmffn.h): the L1 regression of the decoded fields at
   the query points plus gamma times the L1 norm of the Boussinesq residuals there (the paper's
   eq. 4 with its gamma = 0.0125; the residual terms in physical free-fall units, pde.c), each
   equation's residual optionally weighted (not in the paper: -mffn_pde_weights).

   On a crop partitioned over spatial ranks each rank decodes the query points it owns (owner-local
   8-corner decoding, no gather) and its loss is its share: the means over its points times its share
   of the points, so the ranks' losses add up to the crop's. */
#include "sgmffn.h"
#include "sgtrainer.h"

PetscErrorCode SgMFFNCropLoss(SgMFFN m, const SgMFFNPhysics *ph, SgnnTensor lowres, PetscInt P, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], SgnnTensor *loss, PetscReal *reg, PetscReal *pde)
{
  PetscFunctionBegin;
  PetscCall(SgMFFNCropLossPart(m, ph, NULL, lowres, P, P, pts, target, gamma, weight, loss, reg, pde));
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

PetscErrorCode SgMFFNCropLossPart(SgMFFN m, const SgMFFNPhysics *ph, const SgMFFNPart *part, SgnnTensor lowres, PetscInt P, PetscInt Pown, const double pts[], const double target[], PetscReal gamma, const PetscReal weight[4], SgnnTensor *loss, PetscReal *reg, PetscReal *pde)
{
  SgnnTensor        lat, pt, out, tg, lreg, lpde = NULL, res, zero;
  SgMFFNLatentBlock B;
  int               ps[2] = {(int)Pown, 3}, ts[2] = {(int)Pown, SG_MFFN_NCH};
  double            v;

  PetscFunctionBegin;
  PetscCall(SgMFFNEncodePart(m, part, lowres, &lat));
  PetscCall(SgMFFNLatentBlockCreate(m, part, lat, &B));
  *reg = 0, *pde = 0;
  if (!Pown) {
    /* no point here, but the encoder's backward (halo exchanges, batch statistics) is collective:
       the loss must reach every node of this rank's tape, with a zero gradient */
    SgnnTensor s;
    SgCallNN(sgnn_sum(B.t, 0, NULL, 0, &s));
    SgCallNN(sgnn_affine(s, 0, 0, loss));
    sgnn_tensor_free(&s), sgnn_tensor_free(&lat);
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
  if (gamma > 0) {
    SgMFFNJet J;
    PetscCall(SgMFFNDerivatives(ph, out, pt, &J));
    PetscCall(SgMFFNResidualWeighted(ph, &J, weight, &res));
    SgMFFNJetFree(&J);
    SgCallNN(sgnn_tensor_zeros(m->be, m->dt, 2, ts, &zero));
    SgCallNN(sgnn_l1_loss(res, zero, &lpde));
    PetscCall(Share(P, Pown, &lpde));
    SgCallNN(sgnn_tensor_item(lpde, &v));
    *pde = v;
    SgnnTensor sc;
    SgCallNN(sgnn_affine(lpde, gamma, 0, &sc));
    SgCallNN(sgnn_add(lreg, sc, loss));
    sgnn_tensor_free(&sc), sgnn_tensor_free(&res), sgnn_tensor_free(&zero), sgnn_tensor_free(&lpde);
  } else *loss = sgnn_tensor_ref(lreg);
  SgMFFNLatentBlockFree(&B);
  sgnn_tensor_free(&lat), sgnn_tensor_free(&pt), sgnn_tensor_free(&out), sgnn_tensor_free(&tg), sgnn_tensor_free(&lreg);
  PetscFunctionReturn(PETSC_SUCCESS);
}
