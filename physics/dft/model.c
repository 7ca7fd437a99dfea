/* Orthogonal sp3 tight-binding models: parameters and radial functions.

   Silicon: I. Kwon, R. Biswas, C. Z. Wang, K. M. Ho, C. M. Soukoulis, "Transferable tight-binding
   models for silicon", Phys. Rev. B 49, 7242 (1994), Tables I and II:
     E_s = -5.25, E_p = 1.20 eV; V(r0) = -2.038 (ss sigma), 1.745 (sp sigma), 2.75 (pp sigma),
     -1.075 (pp pi) eV; r0 = 2.360352 A; n = 2; n_c = 9.5, 8.5, 7.5, 7.5; r_c = 3.4, 3.55, 3.7, 3.7 A;
     repulsion phi(r) = (r0/r)^m exp{m[-(r/d_c)^m_c + (r0/d_c)^m_c]}, m = 6.8755, m_c = 13.017,
     d_c = 3.66995 A; E_rep = sum_i f(sum_j phi(r_ij)), f(x) = C1 x + C2 x^2 + C3 x^3 + C4 x^4 with
     C1 = 2.1604385, C2 = -0.1384393, C3 = 5.8398423e-3, C4 = -8.0263577e-5 eV.
     Cutoff: the paper joins a short polynomial tail before r_m = 4.16 A; we multiply the hoppings and
     phi by a C2-smooth quintic switch on [3.260176, 4.16] A instead (as TightBinding.jl does), which
     keeps energy and forces continuous for MD.  Cross-checked against ELSES and TightBinding.jl.
   Carbon: C. H. Xu, C. Z. Wang, C. T. Chan, K. M. Ho, J. Phys.: Condens. Matter 4, 6047 (1992):
     E_s = -2.99, E_p = 3.71 eV; V(r0) = -5.0, 4.7, 5.5, -1.55 eV; s(r) = (r0/r)^n exp{n[-(r/r_c)^n_c
     + (r0/r_c)^n_c]}, n = 2, n_c = 6.5, r_c = 2.18 A, r0 = 1.536329 A, for r < r1 = 2.45 A, then the
     cubic tail t(r) = sum c_k (r - r1)^k, c = 6.7392620074314e-3, -8.1885359517898e-2,
     0.1932365259144, 0.3542874332380, zero beyond r_m = 2.6 A.  phi(r) = phi0 (d0/r)^m exp{m[-(r/d_c)^m_c
     + (d0/d_c)^m_c]}, phi0 = 8.18555 eV, m = 3.30304, m_c = 8.6655, d_c = 2.1052 A, d0 = 1.64 A, for
     r < d1 = 2.57 A, then cubic tail 2.2504290109e-8, -1.4408640561e-6, 2.1043303374e-5,
     6.6024390226e-5, zero beyond 2.6 A.  f(x) = sum_{k=0..4} c_k x^k, c = -2.5909765118191,
     0.5721151498619, -1.7896349903996e-3, 2.3539221516757e-5, -1.24251169551587e-7.
   The tails join the main functions to about 1e-6 (checked in tests/unit/dft/test_tb_model.c). */
#include "sgtb.h"

PetscErrorCode SgTBModelGet(MPI_Comm comm, const char elem[], SgTBModel *m)
{
  PetscBool si, c;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  PetscCall(PetscStrcmp(elem, "Si", &si));
  PetscCall(PetscStrcmp(elem, "C", &c));
  PetscCheck(si || c, comm, PETSC_ERR_USER_INPUT, "Unknown element '%s' for tight binding: the models are Si (Kwon et al. 1994) and C (Xu et al. 1992)", elem);
  if (si) {
    const PetscReal V0[4] = {-2.038, 1.745, 2.75, -1.075}, nc[4] = {9.5, 8.5, 7.5, 7.5}, rc[4] = {3.4, 3.55, 3.7, 3.7};
    PetscCall(PetscStrcpy(m->elem, "Si"));
    m->Es = -5.25; m->Ep = 1.20; m->r0 = 2.360352; m->n = 2.0;
    for (int k = 0; k < 4; k++) { m->V0[k] = V0[k]; m->nc[k] = nc[k]; m->rc[k] = rc[k]; }
    m->tail = 0; m->r1 = 3.260176; m->rcut = 4.16;
    m->phi0 = 1.0; m->d0 = m->r0; m->m = 6.8755; m->mc = 13.017; m->dc = 3.66995; m->d1 = m->r1; m->dcut = m->rcut;
    m->f[0] = 0; m->f[1] = 2.1604385; m->f[2] = -0.1384393; m->f[3] = 5.8398423e-3; m->f[4] = -8.0263577e-5;
    m->rmin = 1.2;
  } else {
    const PetscReal V0[4] = {-5.0, 4.7, 5.5, -1.55};
    const PetscReal ht[4] = {6.7392620074314e-3, -8.1885359517898e-2, 0.1932365259144, 0.3542874332380};
    const PetscReal pt[4] = {2.2504290109e-8, -1.4408640561e-6, 2.1043303374e-5, 6.6024390226e-5};
    PetscCall(PetscStrcpy(m->elem, "C"));
    m->Es = -2.99; m->Ep = 3.71; m->r0 = 1.536329; m->n = 2.0;
    for (int k = 0; k < 4; k++) { m->V0[k] = V0[k]; m->nc[k] = 6.5; m->rc[k] = 2.18; m->ht[k] = ht[k]; m->pt[k] = pt[k]; }
    m->tail = 1; m->r1 = 2.45; m->rcut = 2.6;
    m->phi0 = 8.18555; m->d0 = 1.64; m->m = 3.30304; m->mc = 8.6655; m->dc = 2.1052; m->d1 = 2.57; m->dcut = 2.6;
    m->f[0] = -2.5909765118191; m->f[1] = 0.5721151498619; m->f[2] = -1.7896349903996e-3; m->f[3] = 2.3539221516757e-5; m->f[4] = -1.24251169551587e-7;
    m->rmin = 0.8;
  }
  m->nval = 4.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Quintic switch: 1 at r <= r1, 0 at r >= rc, C2 continuous. */
static inline void Switch(PetscReal r, PetscReal r1, PetscReal rc, PetscReal *s, PetscReal *ds)
{
  if (r <= r1) { *s = 1; *ds = 0; return; }
  if (r >= rc) { *s = 0; *ds = 0; return; }
  PetscReal t = (r - r1) / (rc - r1), t2 = t * t;
  *s  = 1 - t2 * t * (10 - 15 * t + 6 * t2);
  *ds = -30 * t2 * (1 - 2 * t + t2) / (rc - r1);
}

/* GSP-type scaling (r0/r)^n exp{n[-(r/rc)^nc + (r0/rc)^nc]} and its derivative. */
static inline void GSP(PetscReal r, PetscReal r0, PetscReal n, PetscReal nc, PetscReal rc, PetscReal *s, PetscReal *ds)
{
  PetscReal a = PetscPowReal(r / rc, nc), b = PetscPowReal(r0 / rc, nc);
  *s  = PetscPowReal(r0 / r, n) * PetscExpReal(n * (b - a));
  *ds = -(*s) * (n / r) * (1 + nc * a);
}

static inline void Cubic(const PetscReal c[4], PetscReal x, PetscReal *t, PetscReal *dt)
{
  *t  = c[0] + x * (c[1] + x * (c[2] + x * c[3]));
  *dt = c[1] + x * (2 * c[2] + x * 3 * c[3]);
}

void SgTBModelHop(const SgTBModel *m, PetscReal r, PetscReal V[4], PetscReal dV[4])
{
  if (r >= m->rcut) { for (int k = 0; k < 4; k++) V[k] = dV[k] = 0; return; }
  if (m->tail == 0) {
    PetscReal sw, dsw, s, ds;
    Switch(r, m->r1, m->rcut, &sw, &dsw);
    for (int k = 0; k < 4; k++) {
      GSP(r, m->r0, m->n, m->nc[k], m->rc[k], &s, &ds);
      V[k] = m->V0[k] * s * sw; dV[k] = m->V0[k] * (ds * sw + s * dsw);
    }
  } else {
    PetscReal s, ds;
    if (r < m->r1) GSP(r, m->r0, m->n, m->nc[0], m->rc[0], &s, &ds);
    else Cubic(m->ht, r - m->r1, &s, &ds);
    for (int k = 0; k < 4; k++) { V[k] = m->V0[k] * s; dV[k] = m->V0[k] * ds; }
  }
}

void SgTBModelPhi(const SgTBModel *m, PetscReal r, PetscReal *phi, PetscReal *dphi)
{
  if (r >= m->dcut) { *phi = *dphi = 0; return; }
  if (m->tail == 0) {
    PetscReal sw, dsw, s, ds;
    Switch(r, m->d1, m->dcut, &sw, &dsw);
    GSP(r, m->d0, m->m, m->mc, m->dc, &s, &ds);
    *phi = m->phi0 * s * sw; *dphi = m->phi0 * (ds * sw + s * dsw);
  } else {
    PetscReal s, ds;
    if (r < m->d1) { GSP(r, m->d0, m->m, m->mc, m->dc, &s, &ds); s *= m->phi0; ds *= m->phi0; }
    else Cubic(m->pt, r - m->d1, &s, &ds);
    *phi = s; *dphi = ds;
  }
}

void SgTBModelEmbed(const SgTBModel *m, PetscReal x, PetscReal *f, PetscReal *df)
{
  const PetscReal *c = m->f;
  *f  = c[0] + x * (c[1] + x * (c[2] + x * (c[3] + x * c[4])));
  *df = c[1] + x * (2 * c[2] + x * (3 * c[3] + x * 4 * c[4]));
}

/* Slater-Koster two-centre integrals for s, p (Slater & Koster, Phys. Rev. 94, 1498 (1954)), written
   with the unit vector u = d/r:  ss = V0, s-p_a = u_a V1, p_a-s = -u_a V1,
   p_a-p_b = u_a u_b (V2 - V3) + delta_ab V3.  Derivatives by the chain rule with
   du_a/dd_k = (delta_ak - u_a u_k)/r and dV/dd_k = V' u_k. */
void SgTBSlaterKoster(const PetscReal d[3], const PetscReal V[4], const PetscReal dV[4], PetscReal h[16], PetscReal dh[3][16])
{
  PetscReal r = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), u[3] = {d[0] / r, d[1] / r, d[2] / r};
  h[0] = V[0];
  for (int a = 0; a < 3; a++) {
    h[1 + a] = u[a] * V[1]; h[(1 + a) * 4] = -u[a] * V[1];
    for (int b = 0; b < 3; b++) h[(1 + a) * 4 + 1 + b] = u[a] * u[b] * (V[2] - V[3]) + (a == b ? V[3] : 0);
  }
  if (!dh) return;
  for (int k = 0; k < 3; k++) {
    PetscReal du[3];
    for (int a = 0; a < 3; a++) du[a] = ((a == k ? 1 : 0) - u[a] * u[k]) / r;
    dh[k][0] = dV[0] * u[k];
    for (int a = 0; a < 3; a++) {
      PetscReal sp = du[a] * V[1] + u[a] * dV[1] * u[k];
      dh[k][1 + a] = sp; dh[k][(1 + a) * 4] = -sp;
      for (int b = 0; b < 3; b++)
        dh[k][(1 + a) * 4 + 1 + b] = (du[a] * u[b] + u[a] * du[b]) * (V[2] - V[3]) + u[a] * u[b] * (dV[2] - dV[3]) * u[k] + (a == b ? dV[3] * u[k] : 0);
    }
  }
}
