/* Maxwell's equations in the configuration DG space (field: maxwell), after Juno et al. (JCP 2018).

     dE/dt = c^2 curl B - J,   dB/dt = -curl E,   J = sum_s q_s int v f_s dv,

   in the units of vlasov.h with eps0 = 1 (so mu0 = 1/c^2): time 1/omega_pe, velocity in the deck's
   velocity unit v0 (v_th,e in the electrostatic decks; c is given in that unit), length v0/omega_pe,
   E in m_e v0 omega_pe / e, B in m_e omega_pe / e (so v x B has the units of E). Field energy
   (1/2) int (|E|^2 + c^2 |B|^2) dx, particle energy sum_s m_s/2 int |v|^2 f_s.

   E and B have all three components whatever cdim (fields are uniform along the missing directions)
   and live in the configuration basis of the phase-space basis, so the current, a velocity moment of
   f, is an exact member of that space: J_m = q sum_cells prod_j (dv_j/2) [w_i sqrt2^vdim f_(m,0) +
   (dv_i/2) sqrt2^(vdim-1) sqrt(2/3) f_(m,eta_i)]. With the central face flux (mflux: central) the
   semi-discrete Maxwell-Vlasov system conserves particle + field energy for p >= 2 (Juno et al.
   2018, who pair central Maxwell fluxes with any Vlasov flux); the upwind flux (tau = c on the
   tangential components, the exact Riemann solution of this linear system) dissipates field energy.

   The arrays are replicated (the field problem is small): every rank sums its part of the current,
   MPI_Allreduce, and every rank advances the same field. The initial E is the Poisson solution of
   the initial charge (Gauss's law holds at t = 0; Ampere's law with the exact current keeps it
   semi-discretely up to the DG divergence error, which is not cleaned), plus the deck's plane wave
   E0 cos(k.x), B0 cos(k.x). */
#include "vlasov.h"

PetscErrorCode SgVlasovMaxwellSetUp(SgSolver solver, SgVlasov *v)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)solver);
  const PetscInt nem  = v->ncx * SG_VLASOV_EM_NS * v->npx;

  PetscFunctionBegin;
  PetscCheck(v->npx <= 32, comm, PETSC_ERR_PLIB, "Maxwell kernels with %" PetscInt_FMT " configuration basis functions: MaxwellOperator's one-cell buffer holds 32", v->npx);
  PetscCall(PetscCalloc4(nem, &v->em, nem, &v->em1, nem, &v->em2, nem, &v->emrhs));
  /* the field joins the species in the shared SSP-RK3 step as one more (replicated, per-rank) vector */
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nem, v->em, &v->emv[0]));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nem, v->em1, &v->emv[1]));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nem, v->em2, &v->emv[2]));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nem, v->emrhs, &v->emv[3]));
  PetscCall(PetscCalloc3(v->ncx * 4 * v->npx, &v->cur, v->ncx * SG_VLASOV_EM_NC, &v->embound, nem, &v->emdiv));
  PetscCall(PetscMalloc1(3 * v->npx, &v->k1ofm));
  for (PetscInt j = 0; j < 3; j++)
    for (PetscInt m = 0; m < v->npx; m++) {
      v->k1ofm[j * v->npx + m] = -1;
      if (j >= v->vdim) continue;
      for (PetscInt k = 0; k < v->np; k++) {
        PetscBool match = PETSC_TRUE;
        for (PetscInt d = 0; d < v->pdim; d++) {
          PetscInt want = d < v->cdim ? v->kern->alphax[m * v->cdim + d] : (d == v->cdim + j ? 1 : 0);
          if (v->kern->alpha[k * v->pdim + d] != want) match = PETSC_FALSE;
        }
        if (match) v->k1ofm[j * v->npx + m] = k;
      }
    }
  PetscCheck(v->emk, comm, PETSC_ERR_PLIB, "Vlasov-Maxwell kernels not selected");
  v->emcur = v->em;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovMaxwellDestroy(SgVlasov *v)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < 4; i++) PetscCall(VecDestroy(&v->emv[i]));
  PetscCall(PetscFree4(v->em, v->em1, v->em2, v->emrhs));
  PetscCall(PetscFree3(v->cur, v->embound, v->emdiv));
  PetscCall(PetscFree(v->k1ofm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |Phi_m| <= prod_d sqrt((2 n_d + 1)/2) on the cell: a bound of each component on each cell, for the
   upwind penalty and the time step. */
void SgVlasovMaxwellBounds(SgVlasov *v)
{
  const PetscInt nl = v->npx, cd = v->cdim;
  for (PetscInt e = 0; e < v->ncx; e++)
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) {
      PetscReal b = 0;
      for (PetscInt m = 0; m < nl; m++) {
        PetscReal mx = 1;
        for (PetscInt d = 0; d < cd; d++) mx *= PetscSqrtReal(0.5 * (2 * v->kern->alphax[m * cd + d] + 1));
        b += PetscAbsReal(v->emcur[(e * SG_VLASOV_EM_NS + i) * nl + m]) * mx;
      }
      v->embound[e * SG_VLASOV_EM_NC + i] = b;
    }
}

/* Plane wave of the deck, E0 cos(k.x) and B0 cos(k.x), L2-projected on the configuration basis,
   shifted by xs along x (xs = c t gives the exact vacuum solution of a wave moving along +x). */
static void ProjectWave(SgVlasov *v, PetscReal xs, PetscInt e, PetscReal out[SG_VLASOV_EM_NC][16])
{
  const PetscInt cd = v->cdim, nq = 8;
  PetscReal      xq[8], wq[8];
  PetscInt       ex = e % v->Nx[0], ey = cd > 1 ? (e / v->Nx[0]) % v->Nx[1] : 0, ez = cd > 2 ? e / (v->Nx[0] * v->Nx[1]) : 0;

  SgVlasovGaussLegendre(nq, xq, wq);
  for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++)
    for (PetscInt m = 0; m < v->npx; m++) out[i][m] = 0;
  for (PetscInt qa = 0; qa < nq; qa++)
    for (PetscInt qb = 0; qb < (cd > 1 ? nq : 1); qb++)
      for (PetscInt qc = 0; qc < (cd > 2 ? nq : 1); qc++) {
        PetscReal x = v->lower[0] + (ex + 0.5 + 0.5 * xq[qa]) * v->dxc[0] - xs, ph = v->em_k[0] * x, wgt = wq[qa];
        if (cd > 1) {
          ph += v->em_k[1] * (v->lower[1] + (ey + 0.5 + 0.5 * xq[qb]) * v->dxc[1]);
          wgt *= wq[qb];
        }
        if (cd > 2) {
          ph += v->em_k[2] * (v->lower[2] + (ez + 0.5 + 0.5 * xq[qc]) * v->dxc[2]);
          wgt *= wq[qc];
        }
        PetscReal cs = PetscCosReal(ph);
        for (PetscInt m = 0; m < v->npx; m++) {
          PetscReal phi = wgt * SgVlasovLegendre(v->kern->alphax[m * cd], xq[qa]) * (cd > 1 ? SgVlasovLegendre(v->kern->alphax[m * cd + 1], xq[qb]) : 1) * (cd > 2 ? SgVlasovLegendre(v->kern->alphax[m * cd + 2], xq[qc]) : 1);
          for (PetscInt i = 0; i < 3; i++) {
            out[i][m] += phi * v->em_E0[i] * cs;
            out[3 + i][m] += phi * v->em_B0[i] * cs;
          }
        }
      }
}

/* t = 0: E from the Poisson solve of the initial charge (SgVlasovComputeField's Poisson path fills
   v->E), plus the plane wave; B = the plane wave. */
PetscErrorCode SgVlasovMaxwellInit(SgSolver solver)
{
  SgVlasov      *v  = (SgVlasov *)solver->data;
  const PetscInt nl = v->npx, cd = v->cdim;
  PetscReal      wave[SG_VLASOV_EM_NC][16];

  PetscFunctionBegin;
  for (PetscInt e = 0; e < v->ncx; e++) {
    PetscReal *em = v->em + e * SG_VLASOV_EM_NS * nl; /* phi, psi start at zero (calloc) */
    ProjectWave(v, 0, e, wave);
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++)
      for (PetscInt m = 0; m < nl; m++) em[i * nl + m] = wave[i][m] + (i < cd ? v->E[(e * cd + i) * nl + m] : 0);
  }
  v->emcur    = v->em;
  v->em_ready = PETSC_TRUE;
  SgVlasovMaxwellBounds(v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Current density J and charge density rho - <rho> (the uniform neutralising background removed) of
   the distributions f[], summed over ranks, into v->cur [ncx][4][npx]. */
static PetscErrorCode CurrentCharge(SgSolver solver, Vec f[])
{
  SgVlasov      *v  = (SgVlasov *)solver->data;
  const PetscInt nl = v->npx, cd = v->cdim;
  MPI_Comm       comm = PetscObjectComm((PetscObject)solver);
  PetscReal      bg   = 0;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(v->work, v->ncx * 4 * nl));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies   *s = &v->sp[is];
    const PetscScalar *fa;
    PetscReal          fac = s->charge, s0 = PetscPowReal(PETSC_SQRT2, (PetscReal)v->vdim), s1 = PetscPowReal(PETSC_SQRT2, (PetscReal)(v->vdim - 1)) * PetscSqrtReal(2.0 / 3.0);
    if (s->charge == 0) continue;
    for (PetscInt j = 0; j < v->vdim; j++) fac *= 0.5 * s->dx[cd + j];
    PetscCall(VecGetArrayRead(f[is], &fa));
    SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
      const PetscScalar *fc = fa + idx * v->np;
      for (PetscInt j = 0; j < v->vdim; j++) {
        PetscInt   d = cd + j;
        PetscReal  w = s->lower[d] + (n[d] + 0.5) * s->dx[d], h = 0.5 * s->dx[d];
        PetscReal *J = v->work + (cx * 4 + j) * nl;
        for (PetscInt m = 0; m < nl; m++) {
          PetscInt k1 = v->k1ofm[j * nl + m];
          J[m] += fac * (w * s0 * fc[v->kofm[m]] + (k1 >= 0 ? h * s1 * fc[k1] : 0));
        }
      }
      PetscReal *R = v->work + (cx * 4 + 3) * nl; /* charge density: the source of phi and the Gauss-law diagnostic */
      for (PetscInt m = 0; m < nl; m++) R[m] += fac * s0 * fc[v->kofm[m]];
    });
    PetscCall(VecRestoreArrayRead(f[is], &fa));
  }
  PetscCall(MPIU_Allreduce(v->work, v->cur, (PetscMPIInt)(v->ncx * 4 * nl), MPIU_REAL, MPIU_SUM, comm));
  /* the uniform neutralising background: minus the mean charge (conserved; recomputed, so restarts need nothing) */
  for (PetscInt e = 0; e < v->ncx; e++) bg += v->cur[(e * 4 + 3) * nl];
  bg /= v->ncx;
  for (PetscInt e = 0; e < v->ncx; e++) v->cur[(e * 4 + 3) * nl] -= bg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Maxwell operator of em (volume, then each face once; periodic: the face below cell 0 is the one
   above N-1) added to rhs, which holds the sources. With one cell along a direction both sides of
   its face are the same cell: the face kernel's outputs are restrict pointers that must not alias
   (they did, and a 2x run with one cell in y went wrong), so the lower side goes to a zeroed
   buffer that is then added to the cell. */
static void MaxwellOperator(SgVlasov *v, PetscReal c, PetscReal chi, PetscReal gam, PetscReal tau, const PetscReal *em, PetscReal *rhs)
{
  const SgVlasovEMKernels *K  = v->emk;
  const PetscInt           nc = SG_VLASOV_EM_NS * v->npx, cd = v->cdim;
  PetscReal                self[SG_VLASOV_EM_NS * 32];

  for (PetscInt e = 0; e < v->ncx; e++) K->mvol(v->dxc, c, chi, gam, em + e * nc, rhs + e * nc);
  for (PetscInt d = 0; d < cd; d++) {
    const PetscInt nx = v->Nx[0], ny = cd > 1 ? v->Nx[1] : 1, nz = cd > 2 ? v->Nx[2] : 1;
    for (PetscInt ez = 0; ez < nz; ez++)
      for (PetscInt ey = 0; ey < ny; ey++)
        for (PetscInt ex = 0; ex < nx; ex++) {
          PetscInt e[3] = {ex, ey, ez}, nn[3] = {nx, ny, nz}, eL = (ez * ny + ey) * nx + ex, eR;
          e[d] = (e[d] + 1) % nn[d];
          eR = (e[2] * ny + e[1]) * nx + e[0];
          if (eL != eR) K->msurf[d](v->dxc, c, chi, gam, tau, em + eL * nc, em + eR * nc, rhs + eL * nc, rhs + eR * nc);
          else {
            for (PetscInt i = 0; i < nc; i++) self[i] = 0;
            K->msurf[d](v->dxc, c, chi, gam, tau, em + eL * nc, em + eR * nc, self, rhs + eR * nc);
            for (PetscInt i = 0; i < nc; i++) rhs[eL * nc + i] += self[i];
          }
        }
  }
}

/* Current density of the distributions f[] (all ranks), then rhs = Maxwell operator(em) - J (+ chi rho). */
PetscErrorCode SgVlasovMaxwellRHS(SgSolver solver, Vec f[], const PetscReal *em, PetscReal *rhs)
{
  SgVlasov       *v  = (SgVlasov *)solver->data;
  const PetscInt  nl = v->npx, nc = SG_VLASOV_EM_NS * nl;
  const PetscReal tau = v->mflux ? v->c_light : 0;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(v->ev_field, 0, 0, 0, 0));
  PetscCall(CurrentCharge(solver, f));
  /* Maxwell operator: volume, then each face once (periodic: the face below cell 0 is the one above N-1) */
  for (PetscInt e = 0; e < v->ncx; e++) {
    PetscReal *o = rhs + e * nc;
    for (PetscInt i = 0; i < nc; i++) o[i] = 0;
    for (PetscInt j = 0; j < 3; j++)
      for (PetscInt m = 0; m < nl; m++) o[j * nl + m] = -v->cur[(e * 4 + j) * nl + m];
    for (PetscInt m = 0; m < nl; m++) o[6 * nl + m] = v->clean_chi * v->cur[(e * 4 + 3) * nl + m];
  }
  MaxwellOperator(v, v->c_light, v->clean_chi, v->clean_gam, tau, em, rhs);
  PetscCall(PetscLogEventEnd(v->ev_field, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Divergence errors of the field em for the distributions f[] (diagnostics): the L2 norms of
   div_h E - rho and div_h B, with div_h the DG divergence of the central flux (the operator of the
   cleaning equations: with c = chi = gam = 1, tau = 0 and no sources, the phi row of the Maxwell
   operator is -div_h E and the psi row -div_h B). Also (1/2) int (c^2 phi^2 + psi^2), the energy the
   cleaning potentials hold. Collective (the charge is summed over ranks). */
PetscErrorCode SgVlasovMaxwellDivergence(SgSolver solver, Vec f[], const PetscReal *em, PetscReal *divE, PetscReal *divB, PetscReal *Wclean)
{
  SgVlasov       *v  = (SgVlasov *)solver->data;
  const PetscInt  nl = v->npx, nc = SG_VLASOV_EM_NS * nl;
  PetscReal       J = 1, sE = 0, sB = 0, sW = 0;

  PetscFunctionBegin;
  PetscCall(CurrentCharge(solver, f));
  PetscCall(PetscArrayzero(v->emdiv, v->ncx * nc));
  MaxwellOperator(v, 1, 1, 1, 0, em, v->emdiv);
  for (PetscInt d = 0; d < v->cdim; d++) J *= 0.5 * v->dxc[d];
  for (PetscInt e = 0; e < v->ncx; e++)
    for (PetscInt m = 0; m < nl; m++) {
      sE += PetscSqr(-v->emdiv[e * nc + 6 * nl + m] - v->cur[(e * 4 + 3) * nl + m]);
      sB += PetscSqr(v->emdiv[e * nc + 7 * nl + m]);
      sW += PetscSqr(v->c_light * em[e * nc + 6 * nl + m]) + PetscSqr(em[e * nc + 7 * nl + m]);
    }
  *divE   = PetscSqrtReal(J * sE);
  *divB   = PetscSqrtReal(J * sB);
  *Wclean = 0.5 * J * sW;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* (1/2) int E_i^2 dx for i < 3 and (c^2/2) int B_i^2 dx (orthonormal basis: sums of squares). */
void SgVlasovMaxwellEnergies(SgVlasov *v, const PetscReal *em, PetscReal W[SG_VLASOV_EM_NC])
{
  PetscReal J = 1;
  for (PetscInt d = 0; d < v->cdim; d++) J *= 0.5 * v->dxc[d];
  for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) W[i] = 0;
  for (PetscInt e = 0; e < v->ncx; e++)
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++)
      for (PetscInt m = 0; m < v->npx; m++) W[i] += PetscSqr(em[(e * SG_VLASOV_EM_NS + i) * v->npx + m]);
  for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) W[i] *= 0.5 * J * (i < 3 ? 1 : v->c_light * v->c_light);
}

/* Vacuum plane wave (exact: planewave): relative L2 error of (E, cB) against the initial wave moved
   by c t along x, and the frequency from the phase of the k-mode of the wave's leading component:
   a_hat(t) = int a(x) e^{-i k x} dx turns by -omega t, unwrapped with the theory omega = c k. */
PetscErrorCode SgVlasovPlaneWaveError(SgVlasov *v, PetscReal t, PetscReal *relerr, PetscReal *omega)
{
  const PetscInt nl = v->npx, cd = v->cdim, nq = 8;
  PetscReal      wave[SG_VLASOV_EM_NC][16], e2 = 0, n2 = 0, xq[8], wq[8], re[2] = {0, 0}, im[2] = {0, 0};
  PetscInt       lead = 0;

  PetscFunctionBegin;
  for (PetscInt i = 1; i < 3; i++)
    if (PetscAbsReal(v->em_E0[i]) > PetscAbsReal(v->em_E0[lead])) lead = i;
  SgVlasovGaussLegendre(nq, xq, wq);
  for (PetscInt e = 0; e < v->ncx; e++) {
    const PetscReal *em = v->em + e * SG_VLASOV_EM_NS * nl;
    ProjectWave(v, v->c_light * t, e, wave);
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) {
      PetscReal sc = i < 3 ? 1 : v->c_light;
      for (PetscInt m = 0; m < nl; m++) {
        e2 += PetscSqr(sc * (em[i * nl + m] - wave[i][m]));
        n2 += PetscSqr(sc * wave[i][m]);
      }
    }
    if (cd == 1)
      for (PetscInt q = 0; q < nq; q++) {
        PetscReal x = v->lower[0] + (e + 0.5 + 0.5 * xq[q]) * v->dxc[0], a = 0, ph = v->em_k[0] * x;
        for (PetscInt m = 0; m < nl; m++) a += em[lead * nl + m] * SgVlasovLegendre(v->kern->alphax[m], xq[q]);
        re[0] += wq[q] * a * PetscCosReal(ph);
        im[0] -= wq[q] * a * PetscSinReal(ph);
      }
  }
  *relerr = PetscSqrtReal(e2 / n2);
  *omega  = 0;
  if (cd == 1 && t > 0) {
    PetscReal th = -PetscAtan2Real(im[0], re[0]), wt = v->c_light * PetscAbsReal(v->em_k[0]) * t;
    /* th = omega t modulo 2 pi: take the branch nearest the theory */
    th += 2 * PETSC_PI * round((wt - th) / (2 * PETSC_PI));
    *omega = th / t;
  }
  (void)re[1]; (void)im[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}
