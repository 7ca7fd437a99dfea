/* Time integration.  Forces f are current on entry (computed at the end of the previous step).
   - nve:      velocity Verlet (Swope et al., J. Chem. Phys. 76, 637 (1982)), symplectic, so the
               energy error is bounded and scales as dt^2.
   - langevin: BAOAB splitting (Leimkuhler & Matthews, Appl. Math. Res. Express 2013, 34): kick,
               half drift, exact Ornstein-Uhlenbeck velocity update with friction 1/damp, half
               drift, force, kick.  Noise from the counter-based generator with counters
               (seed, atom id, step, component): the same on any number of ranks.  The kinetic
               energy the O-step removes is accumulated so E + E_bath is a conserved check.
   - nhc:      Nose-Hoover chain (Martyna, Klein, Tuckerman, J. Chem. Phys. 97, 2635 (1992)),
               Trotter-factorised as in Martyna et al., Mol. Phys. 87, 1117 (1996) (one
               Suzuki-Yoshida stage, as LAMMPS fix nvt's default): Q_1 = dof kB T tau^2,
               Q_k = kB T tau^2, tau = md_damp. Conserved: E + sum Q vxi^2/2 + dof kT xi_1 + kT sum xi_k. */
#include "mdimpl.h"

static void Kick(SgMD *md, PetscReal h)
{
  SgMDDomain *dom = md->dom;
  PetscReal   c[SG_MD_MAX_TYPES];
  for (PetscInt t = 0; t < md->ntypes; t++) c[t] = h * md->units.ftm2v / md->mass[t];
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscReal ci = c[dom->type[i]];
    dom->v[3 * i] += ci * dom->f[3 * i];
    dom->v[3 * i + 1] += ci * dom->f[3 * i + 1];
    dom->v[3 * i + 2] += ci * dom->f[3 * i + 2];
  }
}

static void Drift(SgMD *md, PetscReal h)
{
  SgMDDomain *dom = md->dom;
  for (PetscInt i = 0; i < 3 * dom->nlocal; i++) dom->x[i] += h * dom->v[i];
}

PetscReal SgMDKineticLocal(SgMD *md)
{
  SgMDDomain *dom = md->dom;
  PetscReal   ke = 0;
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    const PetscReal *v = &dom->v[3 * i];
    ke += md->mass[dom->type[i]] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  }
  return 0.5 * md->units.mvv2e * ke;
}

/* Global kinetic energy, summed EXACTLY: each atom's m v^2 becomes a 128-bit fixed-point integer
   (2^-64 resolution; truncation is deterministic), integers add associatively, so the total does
   not depend on the storage order of atoms or on the number of ranks.  The Nose-Hoover chain feeds
   this sum back into the velocities: with a floating-point sum, 1- and P-rank runs (or a restarted
   run, whose atoms are stored in another order) would drift apart at round-off. */
PetscErrorCode SgMDKineticGlobal(SgMD *md, PetscReal *ke)
{
  SgMDDomain *dom = md->dom;
  __int128    acc = 0, *all;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    const PetscReal *v = &dom->v[3 * i];
    acc += (__int128)(md->mass[dom->type[i]] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) * 0x1p64);
  }
  PetscCall(PetscMalloc1(dom->size, &all));
  PetscCallMPI(MPI_Allgather(&acc, (PetscMPIInt)sizeof acc, MPI_BYTE, all, (PetscMPIInt)sizeof acc, MPI_BYTE, dom->comm));
  acc = 0;
  for (PetscMPIInt r = 0; r < dom->size; r++) acc += all[r];
  PetscCall(PetscFree(all));
  *ke = 0.5 * md->units.mvv2e * ((PetscReal)acc * 0x1p-64);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Exact OU step for every velocity component; returns the kinetic energy it removed (local). */
static PetscReal OStep(SgMD *md, PetscReal dt)
{
  SgMDDomain *dom = md->dom;
  PetscReal   c1 = PetscExpReal(-dt / md->damp), c2 = PetscSqrtReal(1.0 - c1 * c1), ke0 = SgMDKineticLocal(md);
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    PetscReal sd = c2 * PetscSqrtReal(md->units.boltz * md->Ttarget / (md->mass[dom->type[i]] * md->units.mvv2e));
    for (int k = 0; k < 3; k++) dom->v[3 * i + k] = c1 * dom->v[3 * i + k] + sd * SgMDGaussian(md->seed, (uint64_t)dom->id[i], (uint64_t)md->step, (uint64_t)k);
  }
  return ke0 - SgMDKineticLocal(md);
}

/* Half step (dt/2) of the thermostat chain, scaling the particle velocities. */
static PetscErrorCode NHCHalf(SgMD *md, PetscReal dt)
{
  SgMDDomain *dom = md->dom;
  PetscInt    M = md->nchain;
  PetscReal   kT = md->units.boltz * md->Ttarget, *Q = md->Qeta, *vx = md->peta, ke2, G, s;
  PetscReal   dt2 = 0.5 * dt, dt4 = 0.25 * dt, dt8 = 0.125 * dt;

  PetscFunctionBegin;
  PetscCall(SgMDKineticGlobal(md, &ke2));
  ke2 *= 2.0;
  G = (M > 1) ? (Q[M - 2] * vx[M - 2] * vx[M - 2] - kT) / Q[M - 1] : (ke2 - md->dof * kT) / Q[0];
  vx[M - 1] += G * dt4;
  for (PetscInt k = M - 2; k >= 0; k--) {
    vx[k] *= PetscExpReal(-vx[k + 1] * dt8);
    G = (k == 0 ? ke2 - md->dof * kT : Q[k - 1] * vx[k - 1] * vx[k - 1] - kT) / Q[k];
    vx[k] += G * dt4;
    vx[k] *= PetscExpReal(-vx[k + 1] * dt8);
  }
  s = PetscExpReal(-vx[0] * dt2);
  for (PetscInt i = 0; i < 3 * dom->nlocal; i++) dom->v[i] *= s;
  ke2 *= s * s;
  for (PetscInt k = 0; k < M; k++) md->eta[k] += vx[k] * dt2;
  for (PetscInt k = 0; k < M - 1; k++) {
    vx[k] *= PetscExpReal(-vx[k + 1] * dt8);
    G = (k == 0 ? ke2 - md->dof * kT : Q[k - 1] * vx[k - 1] * vx[k - 1] - kT) / Q[k];
    vx[k] += G * dt4;
    vx[k] *= PetscExpReal(-vx[k + 1] * dt8);
  }
  G = (M > 1) ? (Q[M - 2] * vx[M - 2] * vx[M - 2] - kT) / Q[M - 1] : (ke2 - md->dof * kT) / Q[0];
  vx[M - 1] += G * dt4;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Berendsen barostat (Berendsen et al., J. Chem. Phys. 81, 3684 (1984)), isotropic, as LAMMPS's
   fix press/berendsen: after each step the cell and the positions are scaled by
   mu = [1 - (dt / pdamp) (P0 - P) / B]^(1/3), B the bulk modulus parameter.  It relaxes the
   pressure to P0 exponentially; it does not sample the NPT ensemble exactly (volume fluctuations
   are suppressed) - use it to equilibrate a density. */
static PetscErrorCode Berendsen(SgMD *md, PetscReal dt)
{
  PetscReal T, ke, pe, P, ec, mu;

  PetscFunctionBegin;
  PetscCall(SgMDThermo(md, &T, &ke, &pe, &P, &ec));
  mu = PetscCbrtReal(1.0 - dt / md->pdamp * (md->Ptarget - P) / md->modulus);
  PetscCheck(mu > 0.9 && mu < 1.1, md->dom->comm, PETSC_ERR_USER_INPUT, "md: the Berendsen barostat would scale the cell by %g in one step (P = %g, target %g): increase md_pdamp or md_modulus", (double)mu, (double)P, (double)md->Ptarget);
  PetscCall(SgMDDomainDilate(md->dom, mu));
  md->neigh.dilation *= mu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDIntegrate(SgMD *md, PetscReal dt)
{
  PetscFunctionBegin;
  md->fstep = md->step + 1; /* the force call below evaluates the configuration of the next step */
  md->hkick = 0.5 * dt;     /* and a half kick with its forces follows it (every ensemble) */
  switch (md->ens) {
  case SG_MD_NVE:
    Kick(md, 0.5 * dt);
    Drift(md, dt);
    PetscCall(SgMDNeighUpdate(md, PETSC_FALSE));
    PetscCall(SgMDComputeForces(md));
    Kick(md, 0.5 * dt);
    break;
  case SG_MD_LANGEVIN:
    Kick(md, 0.5 * dt);
    Drift(md, 0.5 * dt);
    md->ebath += OStep(md, dt);
    Drift(md, 0.5 * dt);
    PetscCall(SgMDNeighUpdate(md, PETSC_FALSE));
    PetscCall(SgMDComputeForces(md));
    Kick(md, 0.5 * dt);
    break;
  case SG_MD_NHC:
    PetscCall(NHCHalf(md, dt));
    Kick(md, 0.5 * dt);
    Drift(md, dt);
    PetscCall(SgMDNeighUpdate(md, PETSC_FALSE));
    PetscCall(SgMDComputeForces(md));
    Kick(md, 0.5 * dt);
    PetscCall(NHCHalf(md, dt));
    break;
  }
  md->step++;
  if (md->baro) PetscCall(Berendsen(md, dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Thermodynamic state (collective): LAMMPS's definitions, dof = 3N - 3 (momentum conserved).
   econs: the quantity the integrator conserves (NVE: E; Langevin: E + bath; NHC: extended H), plus
   the energy jumps at md.forces provider switches (each provider's dynamics conserves its own E; a
   switch changes E by the two providers' difference at that configuration: md_forces.c). */
PetscErrorCode SgMDThermo(SgMD *md, PetscReal *T, PetscReal *ke, PetscReal *pe, PetscReal *p, PetscReal *econs)
{
  PetscReal glob[2], kT = md->units.boltz * md->Ttarget;

  PetscFunctionBegin;
  PetscCall(SgMDEnsureEnergy(md));
  PetscCall(SgMDKineticGlobal(md, &glob[0]));
  PetscCall(MPIU_Allreduce(&md->ebath, &glob[1], 1, MPIU_REAL, MPIU_SUM, md->dom->comm));
  *ke = glob[0];
  *pe = md->pe;
  *T  = md->dof > 0 ? 2.0 * glob[0] / (md->dof * md->units.boltz) : 0.0;
  *p  = (md->dof * md->units.boltz * (*T) + md->virial[0] + md->virial[4] + md->virial[8]) / (3.0 * md->dom->box.volume) * md->units.nktv2p;
  *econs = *ke + *pe + md->eswitch;
  if (md->ens == SG_MD_LANGEVIN) *econs += glob[1];
  if (md->ens == SG_MD_NHC) {
    for (PetscInt k = 0; k < md->nchain; k++) *econs += 0.5 * md->Qeta[k] * md->peta[k] * md->peta[k] + (k == 0 ? md->dof * kT : kT) * md->eta[k];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
