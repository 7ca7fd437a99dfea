/* Right-hand side of the semi-discrete Vlasov equation, SSP-RK3 step and CFL time step.

   The RHS is two sweeps over the owned cells (so -log_view can split the cost): the volume sweep
   calls the generated volume kernel once per cell; the surface sweep visits every face once per
   direction. A face between two owned cells updates both; a face to a ghost cell (another rank's
   cell, or the periodic image) updates only the owned side, and the owner of the other side
   computes the same flux from the same data, so the update stays conservative to round-off.
   Along a folded dimension (kept whole in the dof, see vlasov.h) each cell computes its lower face
   and updates both sides; a folded configuration dimension is periodic there (the lower face of
   cell 0 is the upper face of cell N-1). Outer velocity faces carry no flux (zero-flux boundary). */
#include "vlasov.h"
#include "sgssprk.h"

typedef struct {
  PetscInt gstr[6], ostr[6]; /* strides (doubles) of one cell step along each phase dimension */
} Strides;

static void GetStrides(const SgVlasov *v, const SgVlasovSpecies *s, Strides *st)
{
  PetscInt g = s->bs, o = s->bs;
  for (PetscInt a = 0; a < s->dadim; a++) {
    st->gstr[s->ax[a]] = g; st->ostr[s->ax[a]] = o;
    g *= s->gm[a]; o *= s->m[a];
  }
  g = o = v->np;
  for (PetscInt f = 0; f < s->nfd; f++) {
    st->gstr[s->fdim[f]] = g; st->ostr[s->fdim[f]] = o;
    g *= s->foldN[f]; o *= s->foldN[f];
  }
}

/* Iterate over owned cells with incremental offsets (the loop itself is a measurable part of the
   RHS for small kernels): sets n[] (global cell indices), w[] (cell centres), cx (configuration
   cell), goff/ooff (offsets of the cell's coefficients in the ghosted / owned arrays). */
#define FOR_OWNED_CELLS(v, s, n, w, cx, goff, ooff, ...)                                                                                  \
  do {                                                                                                                                       \
    const PetscInt fn0_ = (s)->nfd > 0 ? (s)->foldN[0] : 1, fn1_ = (s)->nfd > 1 ? (s)->foldN[1] : 1, da_ = (s)->dadim;                     \
    const PetscInt fn2_ = (s)->nfd > 2 ? (s)->foldN[2] : 1, a0_ = (s)->ax[0], a1_ = (s)->ax[1], a2_ = (s)->ax[2];                          \
    const PetscInt d0_ = (s)->nfd > 0 ? (s)->fdim[0] : 0, d1_ = (s)->nfd > 1 ? (s)->fdim[1] : 0, d2_ = (s)->nfd > 2 ? (s)->fdim[2] : 0;   \
    for (PetscInt i2_ = (s)->s[2]; i2_ < (s)->s[2] + (s)->m[2]; i2_++) {                                                                    \
      if (da_ > 2) { n[a2_] = i2_; w[a2_] = (s)->lower[a2_] + (i2_ + 0.5) * (s)->dx[a2_]; }                                                 \
      for (PetscInt i1_ = (s)->s[1]; i1_ < (s)->s[1] + (s)->m[1]; i1_++) {                                                                  \
        PetscInt g_ = (((i2_ - (s)->gs[2]) * (s)->gm[1] + (i1_ - (s)->gs[1])) * (s)->gm[0] + ((s)->s[0] - (s)->gs[0])) * (s)->bs;            \
        PetscInt o_ = ((i2_ - (s)->s[2]) * (s)->m[1] + (i1_ - (s)->s[1])) * (s)->m[0] * (s)->bs;                                             \
        n[a1_] = i1_;                                                                                                                        \
        w[a1_] = (s)->lower[a1_] + (i1_ + 0.5) * (s)->dx[a1_];                                                                               \
        for (PetscInt i0_ = (s)->s[0]; i0_ < (s)->s[0] + (s)->m[0]; i0_++, g_ += (s)->bs, o_ += (s)->bs) {                                   \
          n[a0_] = i0_;                                                                                                                      \
          w[a0_] = (s)->lower[a0_] + (i0_ + 0.5) * (s)->dx[a0_];                                                                             \
          goff = g_; ooff = o_;                                                                                                              \
          for (PetscInt f2_ = 0; f2_ < fn2_; f2_++) {                                                                                        \
            if ((s)->nfd > 2) { n[d2_] = f2_; w[d2_] = (s)->lower[d2_] + (f2_ + 0.5) * (s)->dx[d2_]; }                                       \
            for (PetscInt f1_ = 0; f1_ < fn1_; f1_++) {                                                                                      \
              if ((s)->nfd > 1) { n[d1_] = f1_; w[d1_] = (s)->lower[d1_] + (f1_ + 0.5) * (s)->dx[d1_]; }                                     \
              for (PetscInt f0_ = 0; f0_ < fn0_; f0_++, goff += (v)->np, ooff += (v)->np) {                                                  \
                if ((s)->nfd > 0) { n[d0_] = f0_; w[d0_] = (s)->lower[d0_] + (f0_ + 0.5) * (s)->dx[d0_]; }                                   \
                cx = SG_VLASOV_CX(v, n[0], n[1], n[2]);                                                                                      \
                __VA_ARGS__                                                                                                                  \
              }                                                                                                                              \
            }                                                                                                                                \
          }                                                                                                                                  \
        }                                                                                                                                    \
      }                                                                                                                                      \
    }                                                                                                                                        \
  } while (0)

/* Vlasov-Maxwell: queue one face of phase direction d (vlasov_lanes.c); em is NULL for x faces */
static inline void QueueFace(const SgVlasov *v, const SgVlasovSpecies *s, PetscInt d, SgVlasovLaneBatch *b, const double *fL, const double *fR, double *oL, double *oR,
                             const double *em, const PetscReal w[], const PetscReal prm[3])
{
  const PetscInt c = b->n;
  /* the batch runs when full: fetch its rows now, so that the loads overlap the work in between */
  for (PetscInt k = 0; k < v->np; k += 8) {
    __builtin_prefetch(fL + k);
    __builtin_prefetch(fR + k);
    __builtin_prefetch(oL + k, 1);
    __builtin_prefetch(oR + k, 1);
  }
  b->fL[c] = fL;
  b->fR[c] = fR;
  b->oL[c] = oL;
  b->oR[c] = oR;
  b->em[c] = em;
  for (PetscInt i = 0; i < v->pdim; i++) b->w[i][c] = w[i];
  for (PetscInt i = 0; i < 3; i++) b->prm[i][c] = prm[i];
  b->n++;
  SgVlasovLanesFace(v, s, d, b, PETSC_FALSE);
}

/* Vlasov-Maxwell: queue one cell for the volume kernel (vlasov_lanes.c), as QueueFace a face */
static inline void QueueCell(const SgVlasov *v, const SgVlasovSpecies *s, SgVlasovLaneBatch *b, const double *f, double *o, const double *em, const PetscReal w[])
{
  const PetscInt c = b->n;
  for (PetscInt k = 0; k < v->np; k += 8) {
    __builtin_prefetch(f + k);
    __builtin_prefetch(o + k, 1);
  }
  b->fL[c] = f;
  b->oL[c] = o;
  b->em[c] = em;
  for (PetscInt i = 0; i < v->pdim; i++) b->w[i][c] = w[i];
  b->n++;
  SgVlasovLanesVolume(v, s, b, PETSC_FALSE);
}

PetscErrorCode SgVlasovRHS(SgVlasov *v, SgVlasovSpecies *s, Vec f, Vec rhs)
{
  const SgVlasovKernels *K = v->kern;
  const PetscScalar     *fl;
  PetscScalar           *out;
  PetscInt               n[6] = {0, 0, 0, 0, 0, 0}, cx, goff, ooff;
  PetscReal              w[6];
  Strides                st;
  double                 scratch[256];
  const PetscInt         nax = v->cdim * v->npx, nem = SG_VLASOV_EM_NS * v->npx;
  const SgVlasovEMKernels *EK = v->field == SG_VLASOV_FIELD_MAXWELL ? v->emk : NULL;

  PetscFunctionBegin;
  PetscCall(DMGlobalToLocal(s->da, f, INSERT_VALUES, s->floc));
  PetscCall(VecGetArrayRead(s->floc, &fl));
  PetscCall(VecGetArray(rhs, &out));
  GetStrides(v, s, &st);
  PetscCall(PetscArrayzero(scratch, 256));

  PetscCall(PetscLogEventBegin(v->ev_vol, 0, 0, 0, 0));
  /* the volume sweep also clears the cell's RHS (saves a separate pass over the vector) */
  if (EK) { /* Vlasov-Maxwell: SG_VLASOV_LANES cells per kernel call (vlasov_lanes.c) */
    SgVlasovLaneBatch vb;
    PetscCall(PetscMemzero(&vb, sizeof(vb)));
    FOR_OWNED_CELLS(v, s, n, w, cx, goff, ooff, { QueueCell(v, s, &vb, fl + goff, out + ooff, v->emcur + cx * nem, w); });
    SgVlasovLanesVolume(v, s, &vb, PETSC_TRUE);
  } else
    FOR_OWNED_CELLS(v, s, n, w, cx, goff, ooff, {
      for (PetscInt k_ = 0; k_ < v->np; k_++) out[ooff + k_] = 0;
      K->vol(w, s->dx, s->acc + cx * nax, fl + goff, out + ooff);
    });
  PetscCall(PetscLogFlops((PetscLogDouble)(EK ? EK->flops_vol : K->flops_vol) * s->m[0] * s->m[1] * s->m[2] * s->nfold));
  PetscCall(PetscLogEventEnd(v->ev_vol, 0, 0, 0, 0));

  PetscCall(PetscLogEventBegin(v->ev_surf, 0, 0, 0, 0));
  {
    /* one pass over the cells, all face directions per cell (the cell's data stay in cache) */
    PetscInt          ndir = 0, dirs[6];
    PetscLogDouble    nf[6] = {0, 0, 0, 0, 0, 0};
    SgVlasovLaneBatch fb[6]; /* Vlasov-Maxwell: a queue of faces per direction (vlasov_lanes.c) */
    PetscCall(PetscMemzero(fb, sizeof(fb)));
    for (PetscInt d = 0; d < v->pdim; d++)
      if (d < v->cdim || d - v->cdim < v->cdim || EK) dirs[ndir++] = d; /* electrostatic: no acceleration along v_j, j >= cdim */
    FOR_OWNED_CELLS(v, s, n, w, cx, goff, ooff, {
      const double *fc = fl + goff;
      double       *oc = out + ooff;
      for (PetscInt q = 0; q < ndir; q++) {
        const PetscInt  d = dirs[q], a = s->aofd[d];
        const PetscBool isx = d < v->cdim ? PETSC_TRUE : PETSC_FALSE, axis = a >= 0 ? PETSC_TRUE : PETSC_FALSE;
        /* the lower neighbour: the previous cell, or (folded periodic dimension, n = 0) the last one.
           With one cell that is the cell itself: the kernels' outputs are restrict pointers and must
           not alias, so the face is then computed twice, as lower and as upper face, each call
           updating the cell on one side only (as a DMDA axis does with its periodic ghost copy). */
        const PetscBool wrap  = (!axis && isx && n[d] == 0) ? PETSC_TRUE : PETSC_FALSE;
        const PetscBool self  = (wrap && s->N[d] == 1) ? PETSC_TRUE : PETSC_FALSE;
        const PetscBool lower = (n[d] > 0 || isx) ? PETSC_TRUE : PETSC_FALSE;
        const PetscBool upper = (self || (axis && n[d] == s->s[a] + s->m[a] - 1 && (isx || n[d] < s->N[d] - 1))) ? PETSC_TRUE : PETSC_FALSE;
        if (!lower && !upper) continue;
        const double *fL = wrap ? fc + (s->N[d] - 1) * st.gstr[d] : fc - st.gstr[d];
        double       *oL = self ? scratch : (wrap ? oc + (s->N[d] - 1) * st.ostr[d] : ((!axis || n[d] - 1 >= s->s[a]) ? oc - st.ostr[d] : scratch));
        if (isx) {
          const PetscInt  vd = v->cdim + d;
          const PetscReal hv = 0.5 * s->dx[vd], wv = w[vd];
          PetscReal       cL = 0.5, cR = 0.5, c0 = 0;
          if (v->flux == 0) {
            if (wv >= hv * (1 - 1e-10)) { cL = 1; cR = 0; }
            else if (wv <= -hv * (1 - 1e-10)) { cL = 0; cR = 1; }
            else c0 = PetscAbsReal(wv) + hv;
          }
          if (EK) {
            const PetscReal prm[3] = {cL, cR, c0};
            if (lower) QueueFace(v, s, d, &fb[q], fL, fc, oL, oc, NULL, w, prm);
            if (upper) QueueFace(v, s, d, &fb[q], fc, self ? fc : fc + st.gstr[d], oc, scratch, NULL, w, prm);
          } else {
            if (lower) K->surfx[d](w, s->dx, cL, cR, c0, fL, fc, oL, oc);
            if (upper) K->surfx[d](w, s->dx, cL, cR, c0, fc, self ? fc : fc + st.gstr[d], oc, scratch);
          }
        } else if (EK) {
          /* Lorentz force: |alpha_j| <= |q/m| (|E_j| + sum_{k,l} |eps_jkl| |v_k| |B_l|) on the cell (upwind penalty) */
          const PetscInt   j  = d - v->cdim;
          const PetscReal *bd = v->embound + cx * SG_VLASOV_EM_NC;
          PetscReal        tau = 0;
          if (v->flux == 0) {
            tau = bd[j];
            for (PetscInt k = 0; k < v->vdim; k++)
              if (k != j) tau += (PetscAbsReal(w[v->cdim + k]) + 0.5 * s->dx[v->cdim + k]) * bd[3 + 3 - j - k];
            tau *= PetscAbsReal(s->qbym);
          }
          const PetscReal prm[3] = {tau, 0, 0};
          if (lower) QueueFace(v, s, d, &fb[q], fL, fc, oL, oc, v->emcur + cx * nem, w, prm);
          if (upper) QueueFace(v, s, d, &fb[q], fc, fc + st.gstr[d], oc, scratch, v->emcur + cx * nem, w, prm);
        } else {
          const PetscInt  j   = d - v->cdim;
          const double   *acc = s->acc + cx * nax + j * v->npx;
          const PetscReal tau = v->flux == 0 ? s->tau[cx * v->cdim + j] : 0;
          if (lower) K->surfv[j](s->dx, acc, tau, fL, fc, oL, oc);
          if (upper) K->surfv[j](s->dx, acc, tau, fc, fc + st.gstr[d], oc, scratch);
        }
        nf[q] += (lower ? 1 : 0) + (upper ? 1 : 0);
      }
    });
    if (EK)
      for (PetscInt q = 0; q < ndir; q++) SgVlasovLanesFace(v, s, dirs[q], &fb[q], PETSC_TRUE);
    for (PetscInt q = 0; q < ndir; q++) {
      const PetscInt d = dirs[q];
      PetscCall(PetscLogFlops(nf[q] * (d < v->cdim ? K->flops_surfx[d] : (EK ? EK->flops_surfv[d - v->cdim] : K->flops_surfv[d - v->cdim]))));
    }
  }
  PetscCall(PetscLogEventEnd(v->ev_surf, 0, 0, 0, 0));
  PetscCall(VecRestoreArray(rhs, &out));
  PetscCall(VecRestoreArrayRead(s->floc, &fl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode EnsureField(SgSolver solver, PetscReal t)
{
  SgVlasov *v = (SgVlasov *)solver->data;
  Vec       f[SG_VLASOV_MAX_SPECIES];

  PetscFunctionBegin;
  if (v->field_valid && v->field_t == t) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt s = 0; s < v->nspecies; s++) f[s] = v->sp[s].f;
  PetscCall(SgVlasovComputeField(solver, f));
  v->field_valid = PETSC_TRUE;
  v->field_t     = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dt = cfl / max over cells of sum_d (2p+1) |a_d|_max / dx_d (streaming and acceleration). */
PetscErrorCode SgVlasovTimeStep(SgSolver solver, PetscReal t, PetscReal *dtmax)
{
  SgVlasov *v    = (SgVlasov *)solver->data;
  PetscReal fmax = 0, c = 2 * v->order + 1;

  PetscFunctionBegin;
  PetscCall(EnsureField(solver, t));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s  = &v->sp[is];
    PetscReal        fx = 0, fv = 0;
    for (PetscInt d = 0; d < v->cdim; d++) fx += c * s->vmax[d] / s->dx[d];
    for (PetscInt cx = 0; cx < v->ncx; cx++) {
      PetscReal a = 0;
      if (v->field == SG_VLASOV_FIELD_MAXWELL) {
        const PetscReal *bd = v->embound + cx * SG_VLASOV_EM_NC;
        for (PetscInt j = 0; j < v->vdim; j++) {
          PetscReal aj = bd[j];
          for (PetscInt k = 0; k < v->vdim; k++)
            if (k != j) aj += s->vmax[k] * bd[3 + 3 - j - k];
          a += c * PetscAbsReal(s->qbym) * aj / s->dx[v->cdim + j];
        }
      } else
        for (PetscInt j = 0; j < v->cdim; j++) a += c * s->tau[cx * v->cdim + j] / s->dx[v->cdim + j];
      fv = PetscMax(fv, a);
    }
    fmax = PetscMax(fmax, fx + fv + (v->collisions == 2 ? s->lbo_rate : s->nu)); /* BGK: explicit relaxation, nu dt <= cfl; LBO: drag and diffusion */
  }
  if (v->field == SG_VLASOV_FIELD_MAXWELL) { /* light waves: (2p+1) c / dx per configuration direction; cleaning waves move at chi c, gam c */
    PetscReal fm = 0, cmax = v->c_light * PetscMax(1, PetscMax(v->clean_chi, v->clean_gam));
    for (PetscInt d = 0; d < v->cdim; d++) fm += c * cmax / v->dxc[d];
    fmax = PetscMax(fmax, fm);
  }
  *dtmax = fmax > 0 ? v->cfl / fmax : PETSC_MAX_REAL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One SSP-RK3 stage's right-hand side (sgssprk.h) of all species: the field from the stage's
   distributions first (at stage 0 the current one, recorded in the energy history), then each L(f).
   With field: maxwell the field (E, B) is one more vector of the step (x[nspecies], replicated on
   every rank): its right-hand side is Maxwell's operator minus the current of the stage's f. */
static PetscErrorCode StageRHS(void *ctx, PetscInt stage, PetscReal t, Vec x[], Vec r[])
{
  SgSolver       solver = (SgSolver)ctx;
  SgVlasov      *v      = (SgVlasov *)solver->data;
  const PetscInt ns     = v->nspecies;

  PetscFunctionBegin;
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(x[ns], &a));
    v->emcur = (PetscReal *)a; /* a Vec over our own array: the pointer stays valid */
    PetscCall(VecRestoreArrayRead(x[ns], &a));
  }
  if (stage == 0) {
    PetscCall(EnsureField(solver, t));
    if (v->field == 0) PetscCall(SgVlasovHistoryAppend(v, t, SgVlasovFieldEnergy(v)));
    if (v->field == SG_VLASOV_FIELD_MAXWELL) {
      PetscReal W[SG_VLASOV_EM_NC];
      SgVlasovMaxwellEnergies(v, v->emcur, W);
      PetscCall(SgVlasovHistoryAppend(v, t, v->fit_field ? W[3] + W[4] + W[5] : W[0] + W[1] + W[2]));
    }
  } else PetscCall(SgVlasovComputeField(solver, x));
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    PetscScalar *ra;
    PetscCall(VecGetArray(r[ns], &ra));
    PetscCall(SgVlasovMaxwellRHS(solver, x, v->emcur, ra));
    PetscCall(VecRestoreArray(r[ns], &ra));
  }
  for (PetscInt is = 0; is < ns; is++) PetscCall(SgVlasovRHS(v, &v->sp[is], x[is], r[is]));
  PetscCall(SgVlasovCollisionsRHS(solver, x, r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovStep(SgSolver solver, PetscReal t, PetscReal dt)
{
  SgVlasov *v = (SgVlasov *)solver->data;
  Vec       f[SG_VLASOV_MAX_SPECIES + 1], f1[SG_VLASOV_MAX_SPECIES + 1], f2[SG_VLASOV_MAX_SPECIES + 1], rhs[SG_VLASOV_MAX_SPECIES + 1];
  PetscInt  n = v->nspecies;

  PetscFunctionBegin;
  for (PetscInt is = 0; is < v->nspecies; is++) {
    f[is]   = v->sp[is].f;
    f1[is]  = v->sp[is].f1;
    f2[is]  = v->sp[is].f2;
    rhs[is] = v->sp[is].rhs;
  }
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    f[n]   = v->emv[0];
    f1[n]  = v->emv[1];
    f2[n]  = v->emv[2];
    rhs[n] = v->emv[3];
    n++;
  }
  PetscCall(SgSSPRK3Step(n, f, f1, f2, rhs, t, dt, StageRHS, solver));
  for (PetscInt is = 0; is < v->nspecies; is++) { /* the step may have exchanged the work vectors */
    v->sp[is].f2  = f2[is];
    v->sp[is].rhs = rhs[is];
  }
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    v->emv[2] = f2[v->nspecies];
    v->emv[3] = rhs[v->nspecies];
  }
  v->emcur       = v->em;
  v->field_valid = PETSC_FALSE;
  v->t_now       = t + dt;
  PetscFunctionReturn(PETSC_SUCCESS);
}
