/* MeshfreeFlowNet's training loss on one crop (sgmffn.h): the L1 regression of the decoded fields at
   the query points plus gamma times the L1 norm of the Boussinesq residuals there (the paper's
   eq. 4 with its gamma = 0.0125; the residual terms in physical free-fall units, pde.c). */
#include "sgmffn.h"
#include "sgtrainer.h"

PetscErrorCode SgMFFNCropLoss(SgMFFN m, const SgMFFNPhysics *ph, SgnnTensor lowres, PetscInt P, const double pts[], const double target[], PetscReal gamma, SgnnTensor *loss, PetscReal *reg, PetscReal *pde)
{
  SgnnTensor lat, pt, out, tg, lreg, lpde = NULL, res, zero;
  int        ps[2] = {(int)P, 3}, ts[2] = {(int)P, SG_MFFN_NCH};
  double     v;

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, ps, pts, &pt));
  SgCallNN(sgnn_tensor_set_requires_grad(pt, 1));
  PetscCall(SgMFFNEncode(m, lowres, &lat));
  PetscCall(SgMFFNDecode(m, lat, pt, &out));
  SgCallNN(sgnn_tensor_from_f64(m->be, m->dt, 2, ts, target, &tg));
  SgCallNN(sgnn_l1_loss(out, tg, &lreg));
  SgCallNN(sgnn_tensor_item(lreg, &v));
  *reg = v, *pde = 0;
  if (gamma > 0) {
    SgMFFNJet J;
    PetscCall(SgMFFNDerivatives(ph, out, pt, &J));
    PetscCall(SgMFFNResidual(ph, &J, &res));
    SgMFFNJetFree(&J);
    SgCallNN(sgnn_tensor_zeros(m->be, m->dt, 2, ts, &zero));
    SgCallNN(sgnn_l1_loss(res, zero, &lpde));
    SgCallNN(sgnn_tensor_item(lpde, &v));
    *pde = v;
    SgnnTensor sc;
    SgCallNN(sgnn_affine(lpde, gamma, 0, &sc));
    SgCallNN(sgnn_add(lreg, sc, loss));
    sgnn_tensor_free(&sc), sgnn_tensor_free(&res), sgnn_tensor_free(&zero), sgnn_tensor_free(&lpde);
  } else *loss = sgnn_tensor_ref(lreg);
  sgnn_tensor_free(&lat), sgnn_tensor_free(&pt), sgnn_tensor_free(&out), sgnn_tensor_free(&tg), sgnn_tensor_free(&lreg);
  PetscFunctionReturn(PETSC_SUCCESS);
}
