/* Diagnostics (exact moments of the DG solution), field output, checkpoint and restart.

   All moments are exact integrals of the polynomial solution: with v_j = w_j + (dv_j/2) eta_j,
   int psi_k v_j^q deta only involves 1D integrals of Legendre polynomials against eta^q, q <= 2. */
#include "vlasov.h"

/* int_{-1}^{1} L_n(eta) eta^q deta for n <= 3, q <= 2 (L_n normalised Legendre). */
PetscReal SgVlasovLegendreMoment(PetscInt n, PetscInt q)
{
  if (n == 0 && q == 0) return PETSC_SQRT2;
  if (n == 0 && q == 2) return PETSC_SQRT2 / 3;
  if (n == 1 && q == 1) return PetscSqrtReal(1.5) * 2.0 / 3.0;
  if (n == 2 && q == 2) return PetscSqrtReal(2.5) * 4.0 / 15.0;
  return 0;
}

/* c[q][k] = int psi_k eta_d^q over the reference cell, for phase dimension d */
static void MomentWeights(const SgVlasov *v, PetscInt d, PetscReal c[3][256])
{
  for (PetscInt q = 0; q < 3; q++)
    for (PetscInt k = 0; k < v->np; k++) {
      PetscReal val = 1;
      for (PetscInt e = 0; e < v->pdim; e++) val *= SgVlasovLegendreMoment(v->kern->alpha[k * v->pdim + e], e == d ? q : 0);
      c[q][k] = val;
    }
}

PetscErrorCode SgVlasovDeclareDiagnostics(SgSolver solver)
{
  SgVlasov         *v = (SgVlasov *)solver->data;
  char              name[96];
  const char *const comp[3] = {"x", "y", "z"};

  PetscFunctionBegin;
  for (PetscInt s = 0; s < v->nspecies; s++) {
    PetscCall(PetscSNPrintf(name, sizeof name, "number_%s", v->sp[s].name));
    PetscCall(SgSolverAddDiagnostic(solver, name, "n_0 lambda_D^cdim", &v->di_number[s]));
  }
  for (PetscInt j = 0; j < v->vdim; j++) {
    PetscCall(PetscSNPrintf(name, sizeof name, "momentum_%s", comp[j]));
    PetscCall(SgSolverAddDiagnostic(solver, name, "m_e v_th,e n_0 lambda_D^cdim", &v->di_mom[j]));
  }
  PetscCall(SgSolverAddDiagnostic(solver, "kinetic_energy", "n_0 T_e lambda_D^cdim", &v->di_ke));
  PetscCall(SgSolverAddDiagnostic(solver, "field_energy", "n_0 T_e lambda_D^cdim", &v->di_fe));
  PetscCall(SgSolverAddDiagnostic(solver, "total_energy", "n_0 T_e lambda_D^cdim", &v->di_te));
  PetscCall(SgSolverAddDiagnostic(solver, "l2_f", "(sum_s int f_s^2 dx dv)", &v->di_l2));
  PetscCall(SgSolverAddDiagnostic(solver, "min_f", "(f, sampled at cell corners [and centres])", &v->di_minf));
  if (v->collisions) { /* kinetic energy per velocity direction: temperature anisotropy */
    const char *const kn[3] = {"kinetic_energy_x", "kinetic_energy_y", "kinetic_energy_z"};
    for (PetscInt j = 0; j < v->vdim; j++) PetscCall(SgSolverAddDiagnostic(solver, kn[j], "n_0 m_e v0^2 (v0/omega_pe)^cdim", &v->di_kej[j]));
  }
  if (v->field == SG_VLASOV_FIELD_MAXWELL) { /* field energy per component: (1/2) int E_i^2, (c^2/2) int B_i^2 */
    const char *const en[SG_VLASOV_EM_NC] = {"energy_Ex", "energy_Ey", "energy_Ez", "energy_Bx", "energy_By", "energy_Bz"};
    PetscCall(SgSolverAddDiagnostic(solver, "electric_energy", "n_0 m_e v0^2 (v0/omega_pe)^cdim", &v->di_fe_e));
    PetscCall(SgSolverAddDiagnostic(solver, "magnetic_energy", "n_0 m_e v0^2 (v0/omega_pe)^cdim", &v->di_fe_b));
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) PetscCall(SgSolverAddDiagnostic(solver, en[i], "n_0 m_e v0^2 (v0/omega_pe)^cdim", &v->di_emc[i]));
    /* constraint errors ||div_h E - rho||_2, ||div_h B||_2 and the cleaning potentials' energy (issue 39) */
    PetscCall(SgSolverAddDiagnostic(solver, "div_E_error", "e n_0 (v0/omega_pe)^(cdim/2)", &v->di_divE));
    PetscCall(SgSolverAddDiagnostic(solver, "div_B_error", "m_e omega_pe^2/(e v0) (v0/omega_pe)^(cdim/2)", &v->di_divB));
    PetscCall(SgSolverAddDiagnostic(solver, "cleaning_energy", "n_0 m_e v0^2 (v0/omega_pe)^cdim", &v->di_clean));
  }
  PetscCall(SgSolverSetProgressDiagnostic(solver, v->di_fe));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Smallest value of f over all species, sampled in each cell at the points {-1, 1}^pdim (p = 1) or
   {-1, 0, 1}^pdim (p >= 2) of the reference cell. DG does not keep f >= 0, so this reports how negative
   the solution went. For p = 1 the polynomial is multilinear in each cell and its minimum lies at a
   corner, so the value is the exact minimum; for p >= 2 it is a sample (corners, face and cell centres). */
static PetscErrorCode MinF(SgVlasov *v, MPI_Comm comm, PetscReal *minf)
{
  const PetscReal eta[3] = {-1, 1, 0};
  PetscInt        nq = v->order > 1 ? 3 : 2, npts = 1;
  PetscReal      *tab, loc = PETSC_MAX_REAL;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < v->pdim; d++) npts *= nq;
  PetscCall(PetscMalloc1(npts * v->np, &tab));
  for (PetscInt q = 0; q < npts; q++)
    for (PetscInt k = 0; k < v->np; k++) {
      PetscReal val = 1;
      PetscInt  r   = q;
      for (PetscInt d = 0; d < v->pdim; d++) {
        val *= SgVlasovLegendre(v->kern->alpha[k * v->pdim + d], eta[r % nq]);
        r /= nq;
      }
      tab[q * v->np + k] = val;
    }
  for (PetscInt is = 0; is < v->nspecies; is++) {
    const PetscScalar *fa;
    PetscInt           nloc;
    PetscCall(VecGetLocalSize(v->sp[is].f, &nloc));
    PetscCall(VecGetArrayRead(v->sp[is].f, &fa));
    for (PetscInt c = 0; c < nloc / v->np; c++)
      for (PetscInt q = 0; q < npts; q++) {
        PetscReal fq = 0;
        for (PetscInt k = 0; k < v->np; k++) fq += tab[q * v->np + k] * fa[c * v->np + k];
        loc = PetscMin(loc, fq);
      }
    PetscCall(VecRestoreArrayRead(v->sp[is].f, &fa));
  }
  PetscCall(PetscFree(tab));
  PetscCall(MPIU_Allreduce(&loc, minf, 1, MPIU_REAL, MPIU_MIN, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovDiagnose(SgSolver solver, PetscReal t, PetscReal values[])
{
  SgVlasov *v    = (SgVlasov *)solver->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);
  PetscReal loc[SG_VLASOV_MAX_SPECIES + 9], glob[SG_VLASOV_MAX_SPECIES + 9];
  PetscReal (*c)[3][256];
  Vec       f[SG_VLASOV_MAX_SPECIES];
  PetscInt  ns = v->nspecies, nv = ns + v->vdim + 2 + (v->collisions ? v->vdim : 0); /* number, momentum, ke, l2[, ke_j] */

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(v->ev_moments, 0, 0, 0, 0));
  PetscCall(PetscMalloc1(v->pdim, &c));
  for (PetscInt d = 0; d < v->pdim; d++) MomentWeights(v, d, c[d]);
  for (PetscInt i = 0; i < nv; i++) loc[i] = 0;
  for (PetscInt is = 0; is < ns; is++) {
    SgVlasovSpecies   *s = &v->sp[is];
    const PetscScalar *fa;
    PetscReal          J = 1;
    for (PetscInt d = 0; d < v->pdim; d++) J *= 0.5 * s->dx[d];
    PetscCall(VecGetArrayRead(s->f, &fa));
    SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
            const PetscScalar *fc   = fa + idx * v->np;
            PetscReal          num = 0, l2 = 0;
            (void)cx;
            for (PetscInt k = 0; k < v->np; k++) { num += c[0][0][k] * fc[k]; l2 += fc[k] * fc[k]; }
            loc[is] += J * num;
            loc[ns + v->vdim + 1] += J * l2;
            for (PetscInt j = 0; j < v->vdim; j++) {
              PetscInt  d = v->cdim + j;
              PetscReal w = s->lower[d] + (n[d] + 0.5) * s->dx[d], h = 0.5 * s->dx[d], m1 = 0, m2 = 0;
              for (PetscInt k = 0; k < v->np; k++) {
                m1 += fc[k] * (w * c[d][0][k] + h * c[d][1][k]);
                m2 += fc[k] * (w * w * c[d][0][k] + 2 * w * h * c[d][1][k] + h * h * c[d][2][k]);
              }
              loc[ns + j] += s->mass * J * m1;
              loc[ns + v->vdim] += 0.5 * s->mass * J * m2;
              if (v->collisions) loc[ns + v->vdim + 2 + j] += 0.5 * s->mass * J * m2;
            }
    });
    PetscCall(VecRestoreArrayRead(s->f, &fa));
    f[is] = s->f;
  }
  PetscCall(PetscFree(c));
  PetscCall(MPIU_Allreduce(loc, glob, (PetscMPIInt)nv, MPIU_REAL, MPIU_SUM, comm));
  PetscCall(PetscLogEventEnd(v->ev_moments, 0, 0, 0, 0));
  PetscCall(SgVlasovComputeField(solver, f));
  v->field_valid = PETSC_TRUE;
  v->field_t     = t;
  for (PetscInt is = 0; is < ns; is++) values[v->di_number[is]] = glob[is];
  for (PetscInt j = 0; j < v->vdim; j++) values[v->di_mom[j]] = glob[ns + j];
  values[v->di_ke] = glob[ns + v->vdim];
  values[v->di_fe] = SgVlasovFieldEnergy(v);
  values[v->di_te] = values[v->di_ke] + values[v->di_fe];
  values[v->di_l2] = glob[ns + v->vdim + 1];
  PetscCall(MinF(v, comm, &values[v->di_minf]));
  if (v->collisions)
    for (PetscInt j = 0; j < v->vdim; j++) values[v->di_kej[j]] = glob[ns + v->vdim + 2 + j];
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    PetscReal W[SG_VLASOV_EM_NC];
    SgVlasovMaxwellEnergies(v, v->emcur, W);
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) values[v->di_emc[i]] = W[i];
    values[v->di_fe_e] = W[0] + W[1] + W[2];
    values[v->di_fe_b] = W[3] + W[4] + W[5];
    PetscCall(SgVlasovMaxwellDivergence(solver, f, v->emcur, &values[v->di_divE], &values[v->di_divB], &values[v->di_clean]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Cell averages over each configuration cell of the moments of species s, summed over all ranks:
   out[cx*nm + 0] = n, [1 + j] = m int v_j f dv (momentum density), [1 + vdim] = m/2 int |v|^2 f dv
   (kinetic energy density); nm = vdim + 2. Exact integrals of the DG solution (MomentWeights). */
static PetscErrorCode SpeciesMoments(SgSolver solver, SgVlasovSpecies *s, PetscReal *out)
{
  SgVlasov          *v  = (SgVlasov *)solver->data;
  const PetscInt     nm = v->vdim + 2;
  const PetscScalar *fa;
  PetscReal          J = 1, Vx = 1, (*c)[3][256], *loc;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < v->pdim; d++) J *= 0.5 * s->dx[d];
  for (PetscInt d = 0; d < v->cdim; d++) Vx *= s->dx[d];
  PetscCall(PetscMalloc1(v->pdim, &c));
  for (PetscInt d = 0; d < v->pdim; d++) MomentWeights(v, d, c[d]);
  PetscCall(PetscCalloc1(v->ncx * nm, &loc));
  PetscCall(VecGetArrayRead(s->f, &fa));
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
          const PetscScalar *fc = fa + idx * v->np;
          PetscReal         *o  = loc + cx * nm, num = 0;
          for (PetscInt k = 0; k < v->np; k++) num += c[0][0][k] * fc[k];
          o[0] += J / Vx * num;
          for (PetscInt j = 0; j < v->vdim; j++) {
            PetscInt  d = v->cdim + j;
            PetscReal w = s->lower[d] + (n[d] + 0.5) * s->dx[d], h = 0.5 * s->dx[d], m1 = 0, m2 = 0;
            for (PetscInt k = 0; k < v->np; k++) {
              m1 += fc[k] * (w * c[d][0][k] + h * c[d][1][k]);
              m2 += fc[k] * (w * w * c[d][0][k] + 2 * w * h * c[d][1][k] + h * h * c[d][2][k]);
            }
            o[1 + j] += s->mass * J / Vx * m1;
            o[1 + v->vdim] += 0.5 * s->mass * J / Vx * m2;
          }
  });
  PetscCall(VecRestoreArrayRead(s->f, &fa));
  PetscCall(MPIU_Allreduce(loc, out, (PetscMPIInt)(v->ncx * nm), MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)solver)));
  PetscCall(PetscFree(loc));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Writes density_<species>, momentum_<x|y|z>_<species>, energy_<species> and Ex[, Ey] (cell averages
   on the configuration grid), and for 1x1v the
   cell averages of each f on the phase-space grid. */
PetscErrorCode SgVlasovWriteFields(SgSolver solver, SgOutput out)
{
  SgVlasov *v    = (SgVlasov *)solver->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);
  PetscReal lo[3], hi[3], c0 = PetscPowReal(2.0, -0.5 * v->cdim), *dens;
  Vec       g;
  char      name[96];
  PetscInt  xs[3] = {0, 0, 0}, xm[3] = {1, 1, 1};
  Vec       f[SG_VLASOV_MAX_SPECIES];

  PetscFunctionBegin;
  if (!v->dac) {
    if (v->cdim == 1) PetscCall(DMDACreate1d(comm, DM_BOUNDARY_PERIODIC, v->Nx[0], 1, 0, NULL, &v->dac));
    else if (v->cdim == 2) PetscCall(DMDACreate2d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, v->Nx[0], v->Nx[1], PETSC_DECIDE, PETSC_DECIDE, 1, 0, NULL, NULL, &v->dac));
    else PetscCall(DMDACreate3d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, v->Nx[0], v->Nx[1], v->Nx[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 0, NULL, NULL, NULL, &v->dac));
    PetscCall(DMSetUp(v->dac));
  }
  PetscCall(DMDAGetCorners(v->dac, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  if (v->cdim == 1) { xs[1] = 0; xm[1] = 1; }
  if (v->cdim < 3) { xs[2] = 0; xm[2] = 1; }
  for (PetscInt d = 0; d < v->cdim; d++) { lo[d] = v->lower[d]; hi[d] = v->upper[d]; }
  PetscCall(PetscMalloc1(v->ncx * (v->vdim + 2), &dens));
  PetscCall(DMGetGlobalVector(v->dac, &g));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    const PetscInt    nm    = v->vdim + 2;
    const char *const cn[3] = {"x", "y", "z"};
    PetscCall(SpeciesMoments(solver, &v->sp[is], dens));
    for (PetscInt q = 0; q < nm; q++) {
      PetscScalar *a;
      PetscCall(VecGetArray(g, &a));
      for (PetscInt l = 0, i = 0; l < xm[2]; l++)
        for (PetscInt j = 0; j < xm[1]; j++)
          for (PetscInt k = 0; k < xm[0]; k++, i++) a[i] = dens[SG_VLASOV_CX(v, xs[0] + k, xs[1] + j, xs[2] + l) * nm + q];
      PetscCall(VecRestoreArray(g, &a));
      if (q == 0) PetscCall(PetscSNPrintf(name, sizeof name, "density_%s", v->sp[is].name));
      else if (q <= v->vdim) PetscCall(PetscSNPrintf(name, sizeof name, "momentum_%s_%s", cn[q - 1], v->sp[is].name));
      else PetscCall(PetscSNPrintf(name, sizeof name, "energy_%s", v->sp[is].name));
      PetscCall(SgOutputWriteField(out, name, g, lo, hi));
    }
    f[is] = v->sp[is].f;
  }
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    const char *const En[SG_VLASOV_EM_NC] = {"Ex", "Ey", "Ez", "Bx", "By", "Bz"};
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) {
      PetscScalar *a;
      PetscCall(VecGetArray(g, &a));
      for (PetscInt l = 0, q = 0; l < xm[2]; l++)
        for (PetscInt j = 0; j < xm[1]; j++)
          for (PetscInt k = 0; k < xm[0]; k++, q++) a[q] = c0 * v->em[(SG_VLASOV_CX(v, xs[0] + k, xs[1] + j, xs[2] + l) * SG_VLASOV_EM_NS + i) * v->npx];
      PetscCall(VecRestoreArray(g, &a));
      PetscCall(SgOutputWriteField(out, En[i], g, lo, hi));
    }
  }
  if (v->field == 0) {
    const char *const En[2] = {"Ex", "Ey"};
    PetscCall(SgVlasovComputeField(solver, f));
    for (PetscInt d = 0; d < v->cdim; d++) {
      PetscScalar *a;
      PetscCall(VecGetArray(g, &a));
      for (PetscInt j = 0, i = 0; j < xm[1]; j++)
        for (PetscInt k = 0; k < xm[0]; k++, i++) a[i] = c0 * v->E[(((xs[1] + j) * v->Nx[0] + xs[0] + k) * v->cdim + d) * v->npx];
      PetscCall(VecRestoreArray(g, &a));
      PetscCall(SgOutputWriteField(out, En[d], g, lo, hi));
    }
  }
  PetscCall(DMRestoreGlobalVector(v->dac, &g));
  PetscCall(PetscFree(dens));
  if (v->cdim == 1 && v->vdim == 1) {
    for (PetscInt is = 0; is < v->nspecies; is++) {
      SgVlasovSpecies   *s = &v->sp[is];
      const PetscScalar *fa;
      PetscScalar       *a;
      if (!v->daf[is]) {
        const PetscInt *lx, *ly;
        PetscInt        px, py;
        PetscCall(DMDAGetInfo(s->da, NULL, NULL, NULL, NULL, &px, &py, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        PetscCall(DMDAGetOwnershipRanges(s->da, &lx, &ly, NULL));
        PetscCall(DMDACreate2d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, s->N[0], s->N[1], px, py, 1, 0, lx, ly, &v->daf[is]));
        PetscCall(DMSetUp(v->daf[is]));
      }
      PetscCall(DMGetGlobalVector(v->daf[is], &g));
      PetscCall(VecGetArray(g, &a));
      PetscCall(VecGetArrayRead(s->f, &fa));
      for (PetscInt i = 0; i < s->m[0] * s->m[1]; i++) a[i] = 0.5 * fa[i * v->np];
      PetscCall(VecRestoreArrayRead(s->f, &fa));
      PetscCall(VecRestoreArray(g, &a));
      PetscCall(PetscSNPrintf(name, sizeof name, "f_%s", s->name));
      PetscCall(SgOutputWriteField(out, name, g, s->lower, s->upper));
      PetscCall(DMRestoreGlobalVector(v->daf[is], &g));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Checkpoint: the layout (phase space, basis, grids, species) and each f, plus the field-energy
   history the end-of-run fit needs, so a restarted run reports what the uninterrupted one does. */
static PetscErrorCode Layout(SgVlasov *v, SgCheckpoint chk)
{
  char      key[96];
  PetscBool reading, has = PETSC_FALSE, same;

  PetscFunctionBegin;
  PetscCall(SgCheckpointLayoutInt(chk, "vlasov_cdim", v->cdim));
  PetscCall(SgCheckpointLayoutInt(chk, "vlasov_vdim", v->vdim));
  PetscCall(SgCheckpointLayoutInt(chk, "vlasov_order", v->order));
  PetscCall(SgCheckpointLayoutInt(chk, "vlasov_basis", v->family));
  PetscCall(SgCheckpointLayoutInt(chk, "vlasov_nspecies", v->nspecies));
  if (v->field == SG_VLASOV_FIELD_MAXWELL) PetscCall(SgCheckpointLayoutInt(chk, "vlasov_field", v->field));
  if (v->collisions) PetscCall(SgCheckpointLayoutInt(chk, "vlasov_collisions", v->collisions));
  /* the stored f is in the DMDA's natural order, which depends on the split dimensions (not on the
     ranks per axis): a restart must split the same dimensions */
  PetscCall(SgVlasovSplitNames(v, key, sizeof key));
  PetscCall(SgCheckpointIsReading(chk, &reading));
  if (reading) PetscCall(SgCheckpointLayoutHas(chk, "vlasov_split_dims", &has));
  if (!reading || has) PetscCall(SgCheckpointLayoutString(chk, "vlasov_split_dims", key));
  else { /* written before the split was recorded (surge up to 2026-11-28): always the first min(pdim, 3) dims */
    const char *const names[6] = {"x", "y", "z", "vx", "vy", "vz"};
    char              legacy[96] = "", option[96] = "";
    for (PetscInt a = 0; a < PetscMin(v->pdim, 3); a++) {
      const char *name = names[a < v->cdim ? a : 3 + a - v->cdim];
      PetscCall(PetscStrlcat(legacy, a ? ", " : "", sizeof legacy));
      PetscCall(PetscStrlcat(legacy, name, sizeof legacy));
      PetscCall(PetscStrlcat(option, a ? "," : "", sizeof option));
      PetscCall(PetscStrlcat(option, name, sizeof option));
    }
    PetscCall(PetscStrcmp(key, legacy, &same));
    PetscCheck(same, PetscObjectComm((PetscObject)v->sp[0].da), PETSC_ERR_USER_INPUT, "The restart file was written by an earlier surge, which split the dimensions [%s]; this run splits [%s] (the default now follows the cell counts): continue it with -vlasov_split_dims %s (deck: split_dims: [%s])", legacy, key, option, option);
  }
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    PetscCall(PetscSNPrintf(key, sizeof key, "vlasov_species_%" PetscInt_FMT, is));
    PetscCall(SgCheckpointLayoutString(chk, key, s->name));
    for (PetscInt d = 0; d < v->pdim; d++) {
      PetscCall(PetscSNPrintf(key, sizeof key, "vlasov_%s_cells_%" PetscInt_FMT, s->name, d));
      PetscCall(SgCheckpointLayoutInt(chk, key, s->N[d]));
      PetscCall(PetscSNPrintf(key, sizeof key, "vlasov_%s_lower_%" PetscInt_FMT, s->name, d));
      PetscCall(SgCheckpointLayoutReal(chk, key, s->lower[d]));
      PetscCall(PetscSNPrintf(key, sizeof key, "vlasov_%s_upper_%" PetscInt_FMT, s->name, d));
      PetscCall(SgCheckpointLayoutReal(chk, key, s->upper[d]));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Writes or restores the state, as the checkpoint was opened. */
PetscErrorCode SgVlasovCheckpoint(SgSolver solver, SgCheckpoint chk)
{
  SgVlasov *v = (SgVlasov *)solver->data;
  char      key[96];
  PetscInt  n = v->nhist;
  PetscBool reading;

  PetscFunctionBegin;
  PetscCall(SgCheckpointIsReading(chk, &reading));
  PetscCall(Layout(v, chk));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    PetscCall(PetscSNPrintf(key, sizeof key, "f_%s", v->sp[is].name));
    PetscCall(SgCheckpointVec(chk, key, v->sp[is].f));
  }
  PetscCall(SgCheckpointReals(chk, "vlasov_t", 1, &v->t_now));
  if (v->field == SG_VLASOV_FIELD_MAXWELL) { /* E and B are state (replicated: every rank holds the same) */
    PetscCall(SgCheckpointReals(chk, "vlasov_em", v->ncx * SG_VLASOV_EM_NS * v->npx, v->em));
    v->emcur = v->em;
  }
  if (v->collisions == 2) { /* the LBO stability rate of the last stage sets the next time step */
    PetscReal rate[SG_VLASOV_MAX_SPECIES];
    for (PetscInt is = 0; is < v->nspecies; is++) rate[is] = v->sp[is].lbo_rate;
    PetscCall(SgCheckpointReals(chk, "vlasov_lbo_rate", v->nspecies, rate));
    for (PetscInt is = 0; is < v->nspecies; is++) v->sp[is].lbo_rate = rate[is];
  }
  PetscCall(SgCheckpointReals(chk, "vlasov_diag0", solver->ndiag, v->diag0));
  PetscCall(SgCheckpointInts(chk, "vlasov_nhist", 1, &n));
  if (reading && n) { /* room for the history of the rest of the run */
    PetscCall(PetscFree2(v->hist_t, v->hist_W));
    v->chist = n + 1024;
    PetscCall(PetscMalloc2(v->chist, &v->hist_t, v->chist, &v->hist_W));
  }
  if (n) {
    PetscCall(SgCheckpointReals(chk, "vlasov_hist_t", n, v->hist_t));
    PetscCall(SgCheckpointReals(chk, "vlasov_hist_W", n, v->hist_W));
  }
  if (reading) {
    v->nhist       = n;
    v->field_valid = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
