/* The PDE side of MeshfreeFlowNet's loss (sgmffn.h): derivatives of the decoded fields with respect
   to the query coordinates by the engine's double backward, converted to physical units, and the
   residuals of the Boussinesq equations of physics/boussinesq (docs/boussinesq.md) in free-fall
   units.

   Units, where the reference implementation slipped (issue 17): a query coordinate l_k moves one
   latent index per step, so d/dX_k = (1 / scale_k) d/dl_k with scale_k = (subsampling factor) x
   (grid spacing) in physical units, for t as well as z and x -- the pressure gradient included; the
   fields are de-normalised (x std_c) before any product is formed; nu and kappa come from Ra and Pr
   (nu = 1e-3 at Ra = 1e6, Pr = 1). */
#include "sgmffn.h"
#include "sgtrainer.h"

/* a [P,1] times a constant */
static PetscErrorCode Scaled(SgnnTensor x, double a, double b, SgnnTensor *out)
{
  PetscFunctionBegin;
  SgCallNN(sgnn_affine(x, a, b, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNDerivatives(const SgMFFNPhysics *ph, SgnnTensor out, SgnnTensor pts, SgMFFNJet *J)
{
  const int *os = sgnn_tensor_shape(out);
  int        P = os[0], C = os[1];
  double    *mask;

  PetscFunctionBegin;
  PetscCheck(C == SG_MFFN_NCH, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "mffn: the PDE residual needs the 4 channels p, b, u, w (got %d)", C);
  PetscCall(PetscMemzero(J, sizeof *J));
  PetscCall(PetscCalloc1((size_t)P * C, &mask));
  for (int c = 0; c < C; c++) {
    SgnnTensor v, g, gout;
    SgCallNN(sgnn_slice(out, 1, c, c + 1, &v));
    PetscCall(Scaled(v, ph->std[c], ph->mean[c], &J->val[c]));
    sgnn_tensor_free(&v);
    /* d(sum_p out[p, c]) / d pts = the per-point gradient: points do not interact in the decoder */
    PetscCall(PetscArrayzero(mask, (size_t)P * C));
    for (int p = 0; p < P; p++) mask[p * C + c] = 1;
    SgCallNN(sgnn_tensor_from_f64(sgnn_tensor_backend(out), sgnn_tensor_dtype(out), 2, os, mask, &gout));
    SgCallNN(sgnn_grad(1, &out, &gout, 1, &pts, 1, &g));
    sgnn_tensor_free(&gout);
    for (int k = 0; k < 3; k++) {
      SgCallNN(sgnn_slice(g, 1, k, k + 1, &v));
      if (c > 0 && k > 0) { /* b, u, w: second derivatives in z and x */
        SgnnTensor h, hk;
        SgCallNN(sgnn_grad(1, &v, NULL, 1, &pts, 1, &h));
        SgCallNN(sgnn_slice(h, 1, k, k + 1, &hk));
        PetscCall(Scaled(hk, ph->std[c] / (ph->scale[k] * ph->scale[k]), 0, &J->d2[c][k - 1]));
        sgnn_tensor_free(&h);
        sgnn_tensor_free(&hk);
      }
      PetscCall(Scaled(v, ph->std[c] / ph->scale[k], 0, &J->d1[c][k]));
      sgnn_tensor_free(&v);
    }
    sgnn_tensor_free(&g);
  }
  PetscCall(PetscFree(mask));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgMFFNJetFree(SgMFFNJet *J)
{
  for (int c = 0; c < SG_MFFN_NCH; c++) {
    sgnn_tensor_free(&J->val[c]);
    for (int k = 0; k < 3; k++) sgnn_tensor_free(&J->d1[c][k]);
    for (int k = 0; k < 2; k++) sgnn_tensor_free(&J->d2[c][k]);
  }
}

/* acc += a * b (acc NULL: acc = a * b) */
static PetscErrorCode MulAdd(SgnnTensor *acc, SgnnTensor a, SgnnTensor b)
{
  SgnnTensor t, s;

  PetscFunctionBegin;
  SgCallNN(sgnn_mul(a, b, &t));
  if (!*acc) *acc = t;
  else {
    SgCallNN(sgnn_add(*acc, t, &s));
    sgnn_tensor_free(&t);
    sgnn_tensor_free(acc);
    *acc = s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* acc += a * x */
static PetscErrorCode AxpyT(SgnnTensor *acc, double a, SgnnTensor x)
{
  SgnnTensor t, s;

  PetscFunctionBegin;
  SgCallNN(sgnn_affine(x, a, 0, &t));
  SgCallNN(sgnn_add(*acc, t, &s));
  sgnn_tensor_free(&t);
  sgnn_tensor_free(acc);
  *acc = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

enum { CP = 0, CB = 1, CU = 2, CW = 3, KT = 0, KZ = 1, KX = 2 };

/* q_t + u q_x + w q_z - diff (q_xx + q_zz) for the transported channel q */
static PetscErrorCode Transport(const SgMFFNJet *J, int q, double diff, SgnnTensor *r)
{
  PetscFunctionBegin;
  *r = sgnn_tensor_ref(J->d1[q][KT]);
  PetscCall(MulAdd(r, J->val[CU], J->d1[q][KX]));
  PetscCall(MulAdd(r, J->val[CW], J->d1[q][KZ]));
  PetscCall(AxpyT(r, -diff, J->d2[q][0]));
  PetscCall(AxpyT(r, -diff, J->d2[q][1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNResidual(const SgMFFNPhysics *ph, const SgMFFNJet *J, SgnnTensor *res)
{
  PetscFunctionBegin;
  PetscCall(SgMFFNResidualWeighted(ph, J, NULL, res));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNResidualWeighted(const SgMFFNPhysics *ph, const SgMFFNJet *J, const PetscReal weight[4], SgnnTensor *res)
{
  SgnnTensor r[4];

  PetscFunctionBegin;
  PetscCall(Transport(J, CB, ph->kappa, &r[0]));
  PetscCall(Transport(J, CU, ph->nu, &r[1]));
  PetscCall(AxpyT(&r[1], 1, J->d1[CP][KX]));
  PetscCall(Transport(J, CW, ph->nu, &r[2]));
  PetscCall(AxpyT(&r[2], 1, J->d1[CP][KZ]));
  PetscCall(AxpyT(&r[2], -1, J->val[CB]));
  SgCallNN(sgnn_add(J->d1[CU][KX], J->d1[CW][KZ], &r[3]));
  for (int e = 0; weight && e < 4; e++)
    if (weight[e] != 1) {
      SgnnTensor s;
      SgCallNN(sgnn_affine(r[e], weight[e], 0, &s));
      sgnn_tensor_free(&r[e]);
      r[e] = s;
    }
  SgCallNN(sgnn_concat(4, r, 1, res));
  for (int i = 0; i < 4; i++) sgnn_tensor_free(&r[i]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMFFNResidualSums(const SgMFFNPhysics *ph, SgnnTensor out, SgnnTensor pts, PetscInt P, double acc[4])
{
  SgMFFNJet  J;
  SgnnTensor r;
  double    *v;

  PetscFunctionBegin;
  PetscCall(SgMFFNDerivatives(ph, out, pts, &J));
  PetscCall(SgMFFNResidual(ph, &J, &r));
  PetscCall(PetscMalloc1(4 * P, &v));
  SgCallNN(sgnn_tensor_to_f64(r, v));
  for (PetscInt p = 0; p < P; p++)
    for (int e = 0; e < 4; e++) acc[e] += PetscAbsReal(v[4 * p + e]);
  PetscCall(PetscFree(v));
  sgnn_tensor_free(&r);
  SgMFFNJetFree(&J);
  PetscFunctionReturn(PETSC_SUCCESS);
}
