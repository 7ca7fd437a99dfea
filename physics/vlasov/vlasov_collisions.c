/* BGK collisions (collisions: bgk): d f_s/dt = ... + nu_s (f_M[f_s] - f_s), self-collisions only.

   f_M is the Maxwellian whose *discrete* moments equal those of f: density n, momentum n u and
   second moment int |v|^2 f dv, each as a polynomial of the configuration basis (cell by cell).
   The projection of a Maxwellian on a finite velocity grid has moments that differ from the ones
   it was built with (truncation at the box, the polynomial space), so the moments used to build it
   are corrected iteratively (as gkylzero's corrected Maxwellian): M <- M + (M_target - M[P(f_M(M))])
   until the projection's moments match to 1e-13 relative. With those moments equal, the BGK term
   conserves particle number, momentum and energy to round-off (the collision term's moments vanish).

   Projection: at each Gauss node x_q of a configuration cell, f_M is a product of 1D Gaussians in
   v_j, so its L2 projection on the phase basis is sum_q w_q Phi_m(x_q) n(x_q) prod_j g_j[alpha_j],
   with g_j the 1D Legendre projections of the Gaussian on each velocity cell (Gauss quadrature,
   8 points). Moments of a velocity cell use exact integrals int L_n eta^q (q <= 2).

   Velocity space may be split over ranks: the moments are summed over all ranks (MPI_Allreduce of
   the replicated configuration arrays), as the charge density is. */
#include "vlasov.h"

#define NQV 8


/* The Legendre moments of each phase basis function, lm[k][0 .. 1 + 4 vdim): the product of its
   zeroth velocity moments, then per direction j the other directions' zeroth moments and its own
   moments of eta^0, eta^1, eta^2 (Moments' factors). */
static void LegendreMomentTable(const SgVlasov *v, PetscReal *lm)
{
  const PetscInt cd = v->cdim, pd = v->pdim, vd = v->vdim, nlm = 1 + 4 * vd;

  for (PetscInt k = 0; k < v->np; k++) {
    const PetscInt *a  = v->kern->alpha + k * pd;
    PetscReal      *lk = lm + k * nlm, p0 = 1;
    for (PetscInt j = 0; j < vd; j++) p0 *= SgVlasovLegendreMoment(a[cd + j], 0);
    lk[0] = p0;
    for (PetscInt j = 0; j < vd; j++) {
      PetscReal rest = 1;
      for (PetscInt i = 0; i < vd; i++)
        if (i != j) rest *= SgVlasovLegendreMoment(a[cd + i], 0);
      lk[1 + 4 * j]     = rest;
      lk[1 + 4 * j + 1] = SgVlasovLegendreMoment(a[cd + j], 0);
      lk[1 + 4 * j + 2] = SgVlasovLegendreMoment(a[cd + j], 1);
      lk[1 + 4 * j + 3] = SgVlasovLegendreMoment(a[cd + j], 2);
    }
  }
}

/* Moments of the distribution g (owned cells) of species s as configuration coefficients, summed
   over ranks: out[cx][0..nmom) = {n_m, (n u_j)_m for j < vdim, (int |v|^2 g)_m}, nmom = vdim + 2.
   The Legendre moments of each basis function depend on its velocity indices only: they are
   tabulated at set-up (v->bgk_lm, LegendreMomentTable), so the cell loop multiplies table entries in
   the order it always did. */
static PetscErrorCode Moments(SgSolver solver, SgVlasovSpecies *s, Vec g, PetscReal *out)
{
  SgVlasov          *v  = (SgVlasov *)solver->data;
  const PetscInt     nl = v->npx, nm = v->vdim + 2, cd = v->cdim, vd = v->vdim, nlm = 1 + 4 * vd;
  const PetscScalar *fa;
  PetscReal          Jv = 1, *lm = v->bgk_lm;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < vd; j++) Jv *= 0.5 * s->dx[cd + j];
  PetscCall(PetscArrayzero(v->bgk_work, v->ncx * nm * nl));
  PetscCall(VecGetArrayRead(g, &fa));
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
    const PetscScalar *fc = fa + idx * v->np;
    PetscReal         *o  = v->bgk_work + cx * nm * nl, w[3], h[3];
    for (PetscInt j = 0; j < vd; j++) {
      w[j] = s->lower[cd + j] + (n[cd + j] + 0.5) * s->dx[cd + j];
      h[j] = 0.5 * s->dx[cd + j];
    }
    for (PetscInt k = 0; k < v->np; k++) {
      const PetscReal *lk = lm + k * nlm;
      const PetscInt   m  = v->mofk[k];
      PetscReal        w0 = Jv * fc[k];
      if (w0 == 0) continue;
      o[m] += w0 * lk[0];
      for (PetscInt j = 0; j < vd; j++) {
        const PetscReal rest = lk[1 + 4 * j], q0 = lk[1 + 4 * j + 1], q1 = lk[1 + 4 * j + 2], q2 = lk[1 + 4 * j + 3];
        o[(1 + j) * nl + m] += w0 * rest * (w[j] * q0 + h[j] * q1);
        o[(1 + vd) * nl + m] += w0 * rest * (w[j] * w[j] * q0 + 2 * w[j] * h[j] * q1 + h[j] * h[j] * q2);
      }
    }
  });
  PetscCall(VecRestoreArrayRead(g, &fa));
  PetscCall(MPIU_Allreduce(v->bgk_work, out, (PetscMPIInt)(v->ncx * nm * nl), MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)solver)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Projection of the Maxwellian with moments mom (layout of Moments) on the owned cells, into fM.
   The 1D factors g_j (exponentials: nearly all of the cost) depend on the configuration node and on
   the velocity cell in direction j only, not on the other velocity indices: they are tabulated per
   owned configuration cell and node for every velocity cell (v->bgk_g), each Gaussian value once
   for all Legendre indices, then each phase cell is a product of table entries. The sums are the same, in the same order, as evaluating g_j per phase
   cell: the result does not change by a bit. */
static PetscErrorCode ProjectMaxwellian(SgSolver solver, SgVlasovSpecies *s, const PetscReal *mom, Vec fM)
{
  SgVlasov      *v  = (SgVlasov *)solver->data;
  const PetscInt nl = v->npx, nm = v->vdim + 2, cd = v->cdim, pd = v->pdim, p = v->order, vd = v->vdim;
  const PetscInt nqx = p + 2, nqy = cd > 1 ? nqx : 1, nq = nqx * nqy;
  const PetscInt lo1 = cd > 1 ? s->lo[1] : 0, hi1 = cd > 1 ? s->lo[1] + s->len[1] : 1;
  PetscInt       goff[3], gstride = 0;
  PetscReal      xq[NQV], wq[NQV], Lq[4][NQV], xg[NQV], wg[NQV], Lg[4][NQV];
  PetscReal     *G = v->bgk_g, *D = v->bgk_dens, *phi = v->bgk_phi;
  PetscScalar   *fa;

  PetscFunctionBegin;
  SgVlasovGaussLegendre(NQV, xq, wq);
  SgVlasovGaussLegendre(nqx, xg, wg);
  for (PetscInt a = 0; a <= p; a++) {
    for (PetscInt q = 0; q < NQV; q++) Lq[a][q] = SgVlasovLegendre(a, xq[q]);
    for (PetscInt q = 0; q < nqx; q++) Lg[a][q] = SgVlasovLegendre(a, xg[q]);
  }
  /* table layout: G[(cx * nq + q) * gstride + goff[j] + nv * (p + 1) + a] */
  for (PetscInt j = 0; j < vd; j++) {
    goff[j] = gstride;
    gstride += s->N[cd + j] * (p + 1);
  }
  /* phi[q][m]: the configuration basis at node q, weight folded in */
  for (PetscInt qa = 0; qa < nqx; qa++)
    for (PetscInt qb = 0; qb < nqy; qb++)
      for (PetscInt m = 0; m < nl; m++) phi[(qa * nqy + qb) * nl + m] = Lg[v->kern->alphax[m * cd]][qa] * (cd > 1 ? Lg[v->kern->alphax[m * cd + 1]][qb] : 1);
  /* the owned configuration cells (x, then y: a DMDA axis' owned range, or all cells when folded) */
  for (PetscInt i1 = lo1; i1 < hi1; i1++)
    for (PetscInt i0 = s->lo[0]; i0 < s->lo[0] + s->len[0]; i0++) {
      const PetscInt   cx = SG_VLASOV_CX(v, i0, i1, 0);
      const PetscReal *mc = mom + cx * nm * nl;
      for (PetscInt qa = 0; qa < nqx; qa++)
        for (PetscInt qb = 0; qb < nqy; qb++) {
          const PetscInt   q  = qa * nqy + qb;
          const PetscReal *ph = phi + q * nl;
          PetscReal        M[5] = {0, 0, 0, 0, 0}, *Gq = G + (cx * nq + q) * gstride;
          for (PetscInt c = 0; c < nm; c++)
            for (PetscInt m = 0; m < nl; m++) M[c] += mc[c * nl + m] * ph[m];
          PetscReal dens = M[0], u2 = 0, u[3] = {0, 0, 0};
          PetscCheck(dens > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "collisions bgk: species %s has density %g <= 0 in configuration cell %" PetscInt_FMT ": no Maxwellian; refine the grid or lower nu", s->name, (double)dens, cx);
          for (PetscInt j = 0; j < vd; j++) {
            u[j] = M[1 + j] / dens;
            u2 += u[j] * u[j];
          }
          PetscReal vt2 = (M[1 + vd] / dens - u2) / vd;
          PetscCheck(vt2 > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "collisions bgk: species %s has temperature %g <= 0 in configuration cell %" PetscInt_FMT ": no Maxwellian; refine the velocity grid", s->name, (double)vt2, cx);
          D[cx * nq + q] = dens;
          for (PetscInt j = 0; j < vd; j++) {
            const PetscInt d = cd + j;
            for (PetscInt nv = 0; nv < s->N[d]; nv++) {
              PetscReal ex[NQV]; /* the Gaussian at the cell's nodes, shared by every Legendre index */
              for (PetscInt k = 0; k < NQV; k++) {
                PetscReal vv = s->lower[d] + (nv + 0.5 + 0.5 * xq[k]) * s->dx[d] - u[j];
                ex[k] = PetscExpReal(-0.5 * vv * vv / vt2);
              }
              for (PetscInt a = 0; a <= p; a++) {
                PetscReal sum = 0;
                for (PetscInt k = 0; k < NQV; k++) sum += wq[k] * Lq[a][k] * ex[k];
                Gq[goff[j] + nv * (p + 1) + a] = sum / PetscSqrtReal(2 * PETSC_PI * vt2);
              }
            }
          }
        }
    }
  PetscCall(VecGetArray(fM, &fa));
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
    PetscScalar *fc = fa + idx * v->np;
    for (PetscInt k = 0; k < v->np; k++) fc[k] = 0;
    for (PetscInt qa = 0; qa < nqx; qa++)
      for (PetscInt qb = 0; qb < nqy; qb++) {
        const PetscInt   q   = qa * nqy + qb;
        const PetscReal  wgt = wg[qa] * (cd > 1 ? wg[qb] : 1), dens = D[cx * nq + q], *ph = phi + q * nl;
        const PetscReal *Gq  = G + (cx * nq + q) * gstride;
        for (PetscInt k = 0; k < v->np; k++) {
          const PetscInt *al = v->kern->alpha + k * pd;
          PetscReal       t  = wgt * ph[v->mofk[k]] * dens;
          for (PetscInt j = 0; j < vd; j++) t *= Gq[goff[j] + n[cd + j] * (p + 1) + al[cd + j]];
          fc[k] += t;
        }
      }
  });
  PetscCall(VecRestoreArray(fM, &fa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fM = the Maxwellian with the discrete moments of g (iterated; see the top of the file). */
PetscErrorCode SgVlasovCorrectedMaxwellian(SgSolver solver, SgVlasovSpecies *s, Vec g, Vec fM, PetscInt *iters, PetscReal *err)
{
  SgVlasov      *v  = (SgVlasov *)solver->data;
  const PetscInt nt = v->ncx * (v->vdim + 2) * v->npx;
  PetscReal     *tgt = v->bgk_tgt, *cur = v->bgk_cur, *got = v->bgk_got, scale[5] = {0, 0, 0, 0, 0}, e = 0;
  PetscInt       it;

  PetscFunctionBegin;
  PetscCall(Moments(solver, s, g, tgt));
  for (PetscInt i = 0; i < nt; i++) cur[i] = tgt[i];
  /* error scale per moment: its largest coefficient (momenta: the density x the velocity box) */
  for (PetscInt i = 0; i < nt; i++) {
    PetscInt c = (i / v->npx) % (v->vdim + 2);
    scale[c] = PetscMax(scale[c], PetscAbsReal(tgt[i]));
  }
  for (PetscInt j = 0; j < v->vdim; j++) scale[1 + j] = PetscMax(scale[1 + j], scale[0] * s->vmax[j]);
  for (it = 0; it < 100; it++) {
    PetscCall(ProjectMaxwellian(solver, s, cur, fM));
    PetscCall(Moments(solver, s, fM, got));
    e = 0;
    for (PetscInt i = 0; i < nt; i++) {
      PetscInt c = (i / v->npx) % (v->vdim + 2);
      e = PetscMax(e, PetscAbsReal(tgt[i] - got[i]) / scale[c]);
      cur[i] += tgt[i] - got[i];
    }
    if (e < 1e-14) break;
  }
  PetscCheck(e < 1e-10, PetscObjectComm((PetscObject)solver), PETSC_ERR_USER_INPUT, "collisions bgk: the Maxwellian of species %s does not reach the moments of f (relative error %g after 100 corrections): the velocity grid does not resolve it; refine or widen the velocity box", s->name, (double)e);
  if (iters) *iters = it + 1;
  if (err) *err = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r += nu (f_M[x] - x) for every colliding species (x: the stage's distributions). */
PetscErrorCode SgVlasovCollisionsRHS(SgSolver solver, Vec x[], Vec r[])
{
  SgVlasov *v = (SgVlasov *)solver->data;

  PetscFunctionBegin;
  if (v->collisions == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(v->ev_coll, 0, 0, 0, 0));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    if (s->nu == 0) continue;
    if (v->collisions == 2) {
      PetscCall(SgVlasovLBORHS(solver, s, x[is], r[is]));
      continue;
    }
    PetscCall(SgVlasovCorrectedMaxwellian(solver, s, x[is], s->fM, NULL, NULL));
    PetscCall(VecAXPBYPCZ(r[is], s->nu, -s->nu, 1.0, s->fM, x[is]));
  }
  PetscCall(PetscLogEventEnd(v->ev_coll, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovCollisionsSetUp(SgSolver solver, SgVlasov *v)
{
  const PetscInt nt = v->ncx * (v->vdim + 2) * v->npx;

  PetscFunctionBegin;
  if (v->collisions == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventRegister("VlasovCollisions", SG_SOLVER_CLASSID, &v->ev_coll));
  PetscCall(PetscMalloc4(nt, &v->bgk_tgt, nt, &v->bgk_cur, nt, &v->bgk_got, nt, &v->bgk_work));
  { /* ProjectMaxwellian's tables: per configuration cell and node, the density and the 1D factors */
    const PetscInt nq = (v->order + 2) * (v->cdim > 1 ? v->order + 2 : 1);
    PetscInt       ng = 0;
    for (PetscInt is = 0; is < v->nspecies; is++) {
      PetscInt n = 0;
      for (PetscInt j = 0; j < v->vdim; j++) n += v->sp[is].N[v->cdim + j] * (v->order + 1);
      ng = PetscMax(ng, n);
    }
    PetscCall(PetscMalloc4(v->ncx * nq * ng, &v->bgk_g, v->ncx * nq, &v->bgk_dens, nq * v->npx, &v->bgk_phi, v->np * (1 + 4 * v->vdim), &v->bgk_lm));
    LegendreMomentTable(v, v->bgk_lm);
  }
  PetscCall(PetscMalloc1(v->np, &v->mofk));
  for (PetscInt k = 0; k < v->np; k++) {
    v->mofk[k] = -1;
    for (PetscInt m = 0; m < v->npx; m++) {
      PetscBool eq = PETSC_TRUE;
      for (PetscInt d = 0; d < v->cdim; d++)
        if (v->kern->alpha[k * v->pdim + d] != v->kern->alphax[m * v->cdim + d]) eq = PETSC_FALSE;
      if (eq) v->mofk[k] = m;
    }
  }
  for (PetscInt is = 0; is < v->nspecies; is++)
    if (v->sp[is].nu > 0) PetscCall(VecDuplicate(v->sp[is].f, &v->sp[is].fM));
  if (v->collisions == 2) PetscCall(SgVlasovLBOSetUp(solver, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovCollisionsDestroy(SgVlasov *v)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(v->bgk_tgt, v->bgk_cur, v->bgk_got, v->bgk_work));
  PetscCall(PetscFree4(v->bgk_g, v->bgk_dens, v->bgk_phi, v->bgk_lm));
  if (v->collisions == 2) PetscCall(SgVlasovLBODestroy(v));
  PetscCall(PetscFree(v->mofk));
  for (PetscInt is = 0; is < v->nspecies; is++) PetscCall(VecDestroy(&v->sp[is].fM));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Relative L2 distance between f and the Maxwellian of its moments (the state BGK relaxes to). */
PetscErrorCode SgVlasovMaxwellianDistance(SgSolver solver, SgVlasovSpecies *s, PetscReal *dist)
{
  PetscReal a, b;

  PetscFunctionBegin;
  PetscCall(SgVlasovCorrectedMaxwellian(solver, s, s->f, s->fM, NULL, NULL));
  PetscCall(VecNorm(s->f, NORM_2, &b));
  PetscCall(VecAXPY(s->fM, -1.0, s->f));
  PetscCall(VecNorm(s->fM, NORM_2, &a));
  *dist = a / b;
  PetscFunctionReturn(PETSC_SUCCESS);
}
