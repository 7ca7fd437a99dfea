/* The "md" SgSolver: options, set-up, one time step, diagnostics, report.

   Deck section `md:` (options -md_*).  Units (md_units): lj (reduced) or metal (A, eV, ps, amu,
   K, bar), exactly LAMMPS's.  The starting structure comes from exactly one of
     md_lattice fcc|bcc|diamond  (+ md_lattice_cells nx,ny,nz and md_lattice_density [lj, number
                                  density] or md_lattice_constant [length], md_lattice_type NAME)
     md_read_xyz FILE            extended XYZ (Lattice="..." in the comment line)
     md_read_data FILE           LAMMPS data file (atomic style)
   Masses: md_mass (one per type), else the element's standard mass in metal units (an unknown
   element is an error), else 1 in lj units.  Velocities: md_velocity_temperature with md_seed.
   Integrator: md_ensemble nve|langevin|nhc with md_temperature, md_damp, md_nhc_chain.
   Forces: md_forces NAME (a registered provider: lj built in).  Neighbour lists: md_skin,
   md_neigh_every, md_neigh_delay, md_neigh_check, md_newton (half lists + reverse communication;
   default full lists, which make runs on any rank count bit-identical).
   Output: thermo lines every md_thermo_every steps on rank 0; diagnostics temperature, pe, ke,
   etotal, pressure, econserved (per atom in lj units unless md_thermo_norm false, as LAMMPS);
   H5MD trajectory md_traj_file every md_traj_every steps; with an ensemble force provider the
   model deviation (DeePMD-kit's model_devi.out) every md_model_devi_every steps. */
#include "sgsolverimpl.h"
#include "mdimpl.h"
#include "sgcheckpoint.h"
#include "sgoutput.h"
#include "sgh5md.h"
#include "sgwrite.h"

static const char *const ensembles[] = {"nve", "langevin", "nhc"};
static const char *const unitnames[] = {"lj", "metal"};
static const char *const lattices[]  = {"none", "fcc", "bcc", "diamond"};

typedef struct {
  SgMD           md;
  PetscLogDouble wall;      /* time spent in steps */
  PetscInt       nsteps;    /* steps in this run (for the rate) */
  PetscBool      files_open; /* trajectory and model-deviation files: opened by the first step or record */
} SolverData;

static PetscErrorCode MDSetFromOptions(SgSolver solver, PetscOptionItems *PetscOptionsObject)
{
  SgMD       *md = &((SolverData *)solver->data)->md;
  MPI_Comm    comm = PetscObjectComm((PetscObject)solver);
  PetscInt    iunits = 0, ilat = 0, iens = 0, cells[3] = {4, 4, 4}, nc = 3, nm = SG_MD_MAX_TYPES, seed = 12345;
  PetscReal   rho = 0.8442, alat = 0, T0 = 0, masses[SG_MD_MAX_TYPES];
  PetscBool   setrho, seta, setcells, setxyz, setdata, setmass, setT;
  char        xyz[PETSC_MAX_PATH_LEN] = "", data[PETSC_MAX_PATH_LEN] = "", ltype[16] = "", pname[64] = "lj";
  SgMDSystem *sys = &md->sys;

  PetscFunctionBegin;
  for (PetscInt t = 0; t < SG_MD_MAX_TYPES; t++) masses[t] = 1.0;
  PetscOptionsHeadBegin(PetscOptionsObject, "Molecular dynamics (md) options");
  PetscCall(SgOptionsEList("-units", "unit system, as LAMMPS defines it", unitnames, 2, unitnames[0], &iunits, NULL));
  PetscCall(SgMDUnitsSet(unitnames[iunits], &md->units));
  /* structure */
  PetscCall(SgOptionsEList("-lattice", "build the start structure on a lattice", lattices, 4, lattices[0], &ilat, NULL));
  PetscCall(SgOptionsIntArray("-lattice_cells", "unit cells along a, b, c", cells, &nc, &setcells, 1, 100000));
  PetscCall(SgOptionsReal("-lattice_density", "number density fixing the lattice constant (lj units)", "1/length^3", rho, &rho, &setrho, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal("-lattice_constant", "cubic lattice constant", md->units.u_length, alat, &alat, &seta, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsString("-lattice_type", "atom type (element symbol in metal units) of lattice atoms", ltype, ltype, sizeof ltype, NULL));
  PetscCall(SgOptionsPath("-read_xyz", "read the structure from an extended XYZ file", SG_PATH_IN, xyz, xyz, sizeof xyz, &setxyz));
  PetscCall(SgOptionsPath("-read_data", "read the structure from a LAMMPS data file (atom_style atomic)", SG_PATH_IN, data, data, sizeof data, &setdata));
  PetscCheck((ilat > 0) + setxyz + setdata == 1, comm, PETSC_ERR_USER_INPUT, "md: give exactly one start structure: md_lattice (fcc, bcc, diamond), md_read_xyz or md_read_data (got %d)", (int)((ilat > 0) + setxyz + setdata));
  PetscCheck(!(ilat > 0) || nc == 3 || !setcells, comm, PETSC_ERR_USER_INPUT, "md_lattice_cells: give three counts (nx,ny,nz), got %" PetscInt_FMT, nc);
  PetscCall(SgMDSystemDestroy(sys));
  PetscCall(PetscMemzero(sys, sizeof(*sys)));
  if (ilat > 0) {
    PetscMPIInt nb = ilat == 1 ? 4 : ilat == 2 ? 2 : 8;
    PetscInt    t;
    PetscCheck(!(setrho && seta), comm, PETSC_ERR_USER_INPUT, "md: give md_lattice_density or md_lattice_constant, not both");
    if (!seta) {
      PetscCheck(md->units.style == SG_MD_UNITS_LJ || setrho, comm, PETSC_ERR_USER_INPUT, "md_lattice_constant: required in %s units", md->units.name);
      alat = PetscPowReal(nb / rho, 1.0 / 3.0); /* LAMMPS lj-unit lattice: density sets a */
    }
    /* 3 coordinates per atom are indexed by PetscInt; ~100 bytes per coordinate covers positions,
       velocities, forces, ids and the neighbour list of a dense liquid (~40 neighbours per atom) */
    PetscCall(SgCheckCount(comm, "-md_lattice_cells", "atom coordinates (3 per atom)", 3.0 * nb * (PetscReal)cells[0] * (PetscReal)cells[1] * (PetscReal)cells[2], 100));
    PetscCall(SgMDSystemLattice(lattices[ilat], alat, cells, sys));
    if (!ltype[0]) PetscCall(PetscStrncpy(ltype, md->units.style == SG_MD_UNITS_LJ ? "1" : "", sizeof ltype));
    PetscCheck(ltype[0], comm, PETSC_ERR_USER_INPUT, "md_lattice_type: name the element of the lattice atoms (e.g. Si) in metal units");
    PetscCall(SgMDSystemTypeIndex(sys, ltype, &t));
  } else if (setxyz) PetscCall(SgMDReadXYZ(comm, xyz, sys));
  else PetscCall(SgMDReadLammpsData(comm, data, sys));
  /* masses */
  PetscCall(SgOptionsRealArray("-mass", "mass per atom type (in type order)", md->units.u_mass, masses, &nm, &setmass, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCheck(!setmass || nm == sys->ntypes, comm, PETSC_ERR_USER_INPUT, "md_mass: %" PetscInt_FMT " values for %" PetscInt_FMT " atom types; give one per type", nm, sys->ntypes);
  for (PetscInt t = 0; t < sys->ntypes; t++) {
    if (setmass) { sys->mass[t] = masses[t]; sys->hasmass[t] = PETSC_TRUE; }
    if (sys->hasmass[t]) continue;
    if (md->units.style == SG_MD_UNITS_LJ) sys->mass[t] = 1.0;
    else {
      PetscBool found;
      PetscCall(SgMDElementMass(sys->tname[t], &sys->mass[t], &found));
      PetscCheck(found, comm, PETSC_ERR_USER_INPUT, "md: unknown element '%s' (atom type %" PetscInt_FMT "): not in the element table; give its mass with md_mass or fix the symbol", sys->tname[t], t + 1);
    }
  }
  md->ntypes = sys->ntypes;
  for (PetscInt t = 0; t < sys->ntypes; t++) {
    md->mass[t] = sys->mass[t];
    PetscCall(PetscStrncpy(md->tname[t], sys->tname[t], sizeof(md->tname[t])));
  }
  md->N = sys->n;
  /* velocities */
  PetscCall(SgOptionsReal("-velocity_temperature", "draw initial velocities at this temperature (0: keep the file's or zero)", md->units.u_temperature, T0, &T0, &setT, 0, PETSC_MAX_REAL));
  PetscCall(SgOptionsInt("-seed", "random seed (velocities, Langevin noise)", seed, &seed, NULL, 0, PETSC_MAX_INT));
  md->seed = (uint64_t)seed;
  if (T0 > 0 || !sys->v) PetscCall(SgMDSystemVelocities(sys, &md->units, T0, md->seed)); /* T0 = 0 keeps the file's velocities */
  /* integrator */
  md->dt = md->units.dt;
  PetscCall(SgOptionsReal("-dt", "time step", md->units.u_time, md->dt, &md->dt, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsEList("-ensemble", "integrator: nve (velocity Verlet), langevin (BAOAB), nhc (Nose-Hoover chain)", ensembles, 3, ensembles[0], &iens, NULL));
  md->ens     = (SgMDEnsemble)iens;
  md->Ttarget = T0;
  PetscCall(SgOptionsReal("-temperature", "thermostat target temperature", md->units.u_temperature, md->Ttarget, &md->Ttarget, NULL, 0, PETSC_MAX_REAL));
  md->damp = 100 * md->dt;
  PetscCall(SgOptionsReal("-damp", "thermostat time constant (Langevin 1/friction; NHC period tau)", md->units.u_time, md->damp, &md->damp, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  md->nchain = 3;
  PetscCall(SgOptionsInt("-nhc_chain", "Nose-Hoover chain length", md->nchain, &md->nchain, NULL, 1, 10));
  {
    const char *const baros[] = {"none", "berendsen"};
    PetscInt          ib      = 0;
    PetscCall(SgOptionsEList("-barostat", "pressure control (isotropic)", baros, 2, baros[0], &ib, NULL));
    md->baro    = ib == 1 ? PETSC_TRUE : PETSC_FALSE;
    md->Ptarget = 0;
    md->pdamp   = 1000 * md->dt;
    md->modulus = 10.0; /* LAMMPS fix press/berendsen default */
    PetscCall(SgOptionsReal("-pressure", "barostat target pressure", md->units.u_pressure, md->Ptarget, &md->Ptarget, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCall(SgOptionsReal("-pdamp", "barostat time constant", md->units.u_time, md->pdamp, &md->pdamp, NULL, PETSC_SMALL, PETSC_MAX_REAL));
    PetscCall(SgOptionsReal("-modulus", "bulk modulus in the Berendsen scaling (LAMMPS's modulus)", md->units.u_pressure, md->modulus, &md->modulus, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  }
  PetscCheck(md->ens == SG_MD_NVE || md->Ttarget > 0, comm, PETSC_ERR_USER_INPUT, "md_temperature: the %s thermostat needs a target temperature > 0", ensembles[iens]);
  /* neighbour lists */
  md->neigh.skin = md->units.style == SG_MD_UNITS_LJ ? 0.3 : 2.0; /* LAMMPS defaults */
  PetscCall(SgOptionsReal("-skin", "neighbour-list skin", md->units.u_length, md->neigh.skin, &md->neigh.skin, NULL, 0, PETSC_MAX_REAL));
  md->neigh.every = 1; md->neigh.delay = 0; md->neigh.check = PETSC_TRUE; md->neigh.half = PETSC_FALSE;
  PetscCall(SgOptionsInt("-neigh_every", "consider a neighbour-list rebuild every K steps", md->neigh.every, &md->neigh.every, NULL, 1, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-neigh_delay", "no rebuild before K steps since the last one", md->neigh.delay, &md->neigh.delay, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsBool("-neigh_check", "rebuild only if some atom moved more than skin/2", md->neigh.check, &md->neigh.check, NULL));
  PetscCall(SgOptionsBool("-newton", "half neighbour lists with Newton's third law and reverse communication (faster; 1- and P-rank runs then agree to round-off instead of bitwise)", md->neigh.half, &md->neigh.half, NULL));
  md->min_dist = md->units.style == SG_MD_UNITS_LJ ? 0.5 : 0.5;
  PetscCall(SgOptionsReal("-min_distance", "atoms closer than this at start are an input error", md->units.u_length, md->min_dist, &md->min_dist, NULL, 0, PETSC_MAX_REAL));
  /* output */
  md->thermo_every = 100;
  PetscCall(SgOptionsInt("-thermo_every", "print a thermo line every K steps (0: never)", md->thermo_every, &md->thermo_every, NULL, 0, PETSC_MAX_INT));
  md->norm = md->units.style == SG_MD_UNITS_LJ ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(SgOptionsBool("-thermo_norm", "energies per atom (LAMMPS default: yes in lj, no in metal units)", md->norm, &md->norm, NULL));
  md->traj_every = 0;
  PetscCall(SgOptionsPath("-traj_file", "H5MD trajectory file", SG_PATH_OUT, md->traj_file, md->traj_file, sizeof md->traj_file, NULL));
  PetscCall(SgOptionsInt("-traj_every", "trajectory frame every K steps (0: none)", md->traj_every, &md->traj_every, NULL, 0, PETSC_MAX_INT));
  md->traj_pos = md->traj_vel = md->traj_frc = PETSC_TRUE;
  PetscCall(SgOptionsBool("-traj_velocities", "write velocities to the trajectory", md->traj_vel, &md->traj_vel, NULL));
  PetscCall(SgOptionsBool("-traj_forces", "write forces to the trajectory", md->traj_frc, &md->traj_frc, NULL));
  PetscCheck(!md->traj_every || md->traj_file[0], comm, PETSC_ERR_USER_INPUT, "md_traj_every = %" PetscInt_FMT " needs md_traj_file (the H5MD file name)", md->traj_every);
  if (md->traj_file[0] && !md->traj_every) md->traj_every = 100;
  md->rdf_nbins = 100;
  PetscCall(SgOptionsInt("-rdf_every", "sample g(r) every K steps (0: never)", md->rdf_every, &md->rdf_every, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-rdf_start", "first step at which g(r) is sampled (skip equilibration)", md->rdf_start, &md->rdf_start, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsInt("-rdf_bins", "g(r) bins on [0, cutoff)", md->rdf_nbins, &md->rdf_nbins, NULL, 1, 100000));
  PetscCall(SgOptionsPath("-rdf_file", "write g(r) as text (r g) at the end of the run", SG_PATH_OUT, md->rdf_file, md->rdf_file, sizeof md->rdf_file, NULL));
  PetscCheck(!md->rdf_file[0] || md->rdf_every, comm, PETSC_ERR_USER_INPUT, "md_rdf_file needs md_rdf_every > 0");
  {
    char    *tn[2] = {NULL, NULL};
    PetscInt nt = 2;
    PetscBool set;
    md->rdf_types[0] = md->rdf_types[1] = -1;
    PetscCall(SgOptionsStringArray("-rdf_types", "g(r) between atoms of these two types only (names, e.g. [O, O]; default: all atoms)", tn, &nt, &set));
    if (set) {
      PetscCheck(nt == 2, comm, PETSC_ERR_USER_INPUT, "md_rdf_types takes two type names (e.g. [O, H]), got %" PetscInt_FMT, nt);
      for (int k = 0; k < 2; k++) {
        for (PetscInt t = 0; t < md->ntypes; t++)
          if (!strcmp(tn[k], md->tname[t])) md->rdf_types[k] = t;
        PetscCheck(md->rdf_types[k] >= 0, comm, PETSC_ERR_USER_INPUT, "md_rdf_types: no atom type '%s' in this system", tn[k]);
      }
    }
    for (int k = 0; k < 2; k++) PetscCall(PetscFree(tn[k]));
  }
  /* force provider (reads its own options, e.g. md_lj_*) */
  PetscCall(SgOptionsString("-forces", "force provider for the md.forces slot (lj; tb; a surrogate type such as deepmd)", pname, pname, sizeof pname, NULL));
  PetscCall(SgForcesProviderDestroy(&md->prov));
  {
    SgForcesProviderInfo info = {comm, md->units.name, md->units.boltz, md->ntypes, (const char(*)[16])md->tname, md->mass, "md_", PetscOptionsObject, md};
    PetscCall(SgForcesProviderCreate(pname, &info, &md->prov));
  }
  PetscCall(PetscStrncpy(md->provname, pname, sizeof md->provname));
  /* runtime swap: a second provider the md.forces slot may serve calls with (docs/swap.md) */
  {
    char      sname[64] = "";
    PetscBool sset;
    PetscCall(SgOptionsString("-surrogate", "a second force provider the md.forces slot may swap in (see md_swap_policy)", sname, sname, sizeof sname, &sset));
    PetscCall(SgForcesProviderDestroy(&md->sprov));
    md->has_sur = sset && sname[0] ? PETSC_TRUE : PETSC_FALSE;
    if (md->has_sur) {
      SgForcesProviderInfo info = {comm, md->units.name, md->units.boltz, md->ntypes, (const char(*)[16])md->tname, md->mass, "md_", PetscOptionsObject, md};
      PetscCall(SgForcesProviderCreate(sname, &info, &md->sprov));
      PetscCall(PetscStrncpy(md->sprovname, sname, sizeof md->sprovname));
    }
    {
      const SgSolverRunInfo *run;
      /* default <sim output>.retrain.h5 (the run's output base; md.retrain.h5 outside a run) */
      PetscCall(SgSolverGetRunInfo(solver, &run));
      PetscCall(PetscSNPrintf(md->retrain_file, sizeof md->retrain_file, "%s.retrain.h5", run->output[0] ? run->output : "md"));
      PetscCall(SgOptionsPath("-retrain_file", "md_frames dataset receiving the solver's frames that the swap policy flagged (default: <sim output>.retrain.h5)", SG_PATH_OUT, md->retrain_file, md->retrain_file, sizeof md->retrain_file, NULL));
    }
  }
  /* DeePMD-kit's model_devi.out (LAMMPS pair_style deepmd ... out_freq N out_file F), which DP-GEN reads */
  PetscCall(PetscStrncpy(md->devi_file, "model_devi.out", sizeof md->devi_file));
  PetscCall(SgOptionsInt("-model_devi_every", "write the ensemble's model deviation every K steps (0: never), DeePMD-kit's model_devi.out format; needs a provider with several models (deepmd_models: [m1, m2, ...])", md->devi_every, &md->devi_every, NULL, 0, PETSC_MAX_INT));
  PetscCall(SgOptionsPath("-model_devi_file", "model deviation file (text: step, max/min/avg virial deviation per atom, max/min/avg force deviation)", SG_PATH_OUT, md->devi_file, md->devi_file, sizeof md->devi_file, NULL));
  md->devi_prov = NULL;
  if (md->devi_every) {
    md->devi_prov = md->has_sur && md->sprov.model_devi ? &md->sprov : (md->prov.model_devi ? &md->prov : NULL);
    PetscCheck(md->devi_prov, comm, PETSC_ERR_USER_INPUT, "md_model_devi_every needs a force provider with a model ensemble: md: {forces: deepmd, deepmd_models: [m1.h5, m2.h5, ...]} (or as md_surrogate); '%s'%s%s has none", md->provname, md->has_sur ? " / " : "", md->has_sur ? md->sprovname : "");
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ThermoLine(SgSolver solver, PetscBool header)
{
  SgMD     *md = &((SolverData *)solver->data)->md;
  PetscReal T, ke, pe, p, ec, sc;

  PetscFunctionBegin;
  PetscCall(SgMDThermo(md, &T, &ke, &pe, &p, &ec));
  sc = md->norm ? 1.0 / md->N : 1.0;
  if (header) { /* the column names with their units (LAMMPS's units style; energies per atom when md_thermo_norm) */
    char        c[7][48];
    const char *per = md->norm ? "/atom" : "";
    PetscCall(PetscSNPrintf(c[0], sizeof c[0], "Temp[%s]", md->units.style == SG_MD_UNITS_LJ ? "epsilon/k_B" : md->units.u_temperature));
    PetscCall(PetscSNPrintf(c[1], sizeof c[1], "PotEng[%s%s]", md->units.u_energy, per));
    PetscCall(PetscSNPrintf(c[2], sizeof c[2], "KinEng[%s%s]", md->units.u_energy, per));
    PetscCall(PetscSNPrintf(c[3], sizeof c[3], "TotEng[%s%s]", md->units.u_energy, per));
    PetscCall(PetscSNPrintf(c[4], sizeof c[4], "Press[%s]", md->units.style == SG_MD_UNITS_LJ ? "epsilon/sigma^3" : md->units.u_pressure));
    PetscCall(PetscSNPrintf(c[5], sizeof c[5], "Econserved[%s%s]", md->units.u_energy, per));
    PetscCall(PetscSNPrintf(c[6], sizeof c[6], "Volume[%s^3]", md->units.u_length));
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)solver), "md thermo: %10s %14s %18s %18s %18s %16s %18s %14s\n", "Step", c[0], c[1], c[2], c[3], c[4], c[5], c[6]));
  }
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)solver), "md thermo: %10" PetscInt_FMT " %14.10g %18.12g %18.12g %18.12g %16.10g %18.12g %14.10g\n", md->step, (double)T, (double)(pe * sc), (double)(ke * sc), (double)((pe + ke) * sc), (double)p, (double)(ec * sc), (double)md->dom->box.volume));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TrajFrame(SgSolver solver, PetscReal t)
{
  SgMD       *md  = &((SolverData *)solver->data)->md;
  SgMDDomain *dom = md->dom;
  PetscInt    off, cnt;
  PetscReal  *buf, *blk;

  PetscFunctionBegin;
  if (!md->h5md) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgMDEnsureEnergy(md)); /* the frame carries what an md_frames sample needs */
  PetscCall(PetscMalloc1(3 * dom->nlocal + 1, &buf));
  PetscCall(SgH5MDBeginFrame((SgH5MD)md->h5md, md->step, t, dom->box.h));
  PetscCall(SgH5MDWriteObservable((SgH5MD)md->h5md, "potential_energy", 1, &md->pe, md->units.u_energy));
  PetscCall(SgH5MDWriteObservable((SgH5MD)md->h5md, "virial", 9, md->virial, md->units.u_energy));
  for (int q = 0; q < 4; q++) {
    const char *name = q == 0 ? "position" : q == 1 ? "velocity" : q == 2 ? "force" : "image";
    if ((q == 1 && !md->traj_vel) || (q == 2 && !md->traj_frc)) continue;
    for (PetscInt i = 0; i < 3 * dom->nlocal; i++) buf[i] = q == 0 ? dom->x[i] : q == 1 ? dom->v[i] : q == 2 ? dom->f[i] : (PetscReal)dom->img[i];
    PetscCall(SgMDDomainToIdBlocks(dom, md->N, 3, buf, &off, &cnt, &blk));
    PetscCall(SgH5MDWriteFrameData((SgH5MD)md->h5md, name, off, cnt, blk));
    PetscCall(PetscFree(blk));
  }
  PetscCall(SgH5MDEndFrame((SgH5MD)md->h5md));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDSetUp(SgSolver solver)
{
  SgMD     *md = &((SolverData *)solver->data)->md;
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);
  PetscReal cutghost;
  const char *dn[7] = {"temperature", "pe", "ke", "etotal", "pressure", "econserved", "volume"};

  PetscFunctionBegin;
  md->cutoff       = md->has_sur ? PetscMax(md->prov.cutoff, md->sprov.cutoff) : md->prov.cutoff;
  md->neigh.cutneigh = md->cutoff + md->neigh.skin;
  cutghost         = md->neigh.cutneigh;
  /* With the minimum-image reach 2 (rc + skin) <= thickness, every pair within the cutoff is seen
     through exactly one periodic image: the full lists stay duplicate-free and id-ordered. */
  for (int d = 0; d < 3; d++)
    PetscCheck(md->sys.box.thick[d] >= 2 * cutghost, comm, PETSC_ERR_USER_INPUT,
               "md: the cell is %g %s thick along %c but must be at least 2 (cutoff + skin) = 2 (%g + %g) = %g; use more unit cells (md_lattice_cells) or a smaller cutoff/skin",
               (double)md->sys.box.thick[d], md->units.u_length, "abc"[d], (double)md->cutoff, (double)md->neigh.skin, (double)(2 * cutghost));
  PetscCall(SgMDDomainCreate(comm, &md->sys.box, cutghost, &md->dom));
  PetscCall(SgMDDomainDistribute(md->dom, &md->sys));
  {
    PetscInt nl = md->dom->nlocal, ng;
    PetscCall(MPIU_Allreduce(&nl, &ng, 1, MPIU_INT, MPI_SUM, comm));
    PetscCheck(ng == md->N, comm, PETSC_ERR_PLIB, "md: %" PetscInt_FMT " of %" PetscInt_FMT " atoms distributed", ng, md->N);
  }
  PetscCall(SgMDSystemDestroy(&md->sys));
  PetscCall(SgMDNeighSetUp(&md->neigh, md->dom));
  md->dof = 3 * md->N - 3;
  md->eflag = md->baro; /* the barostat needs the virial every step: no separate energy pass */
  if (md->rdf_every) PetscCall(PetscCalloc1(md->rdf_nbins, &md->rdf_hist));
  if (md->ens == SG_MD_NHC) {
    PetscReal kT = md->units.boltz * md->Ttarget;
    for (PetscInt k = 0; k < md->nchain; k++) {
      md->Qeta[k] = (k == 0 ? md->dof : 1) * kT * md->damp * md->damp;
      md->eta[k] = md->peta[k] = 0;
    }
  }
  PetscCall(PetscLogEventRegister("MDForce", SG_SOLVER_CLASSID, &md->ev_force));
  PetscCall(PetscLogEventRegister("MDNeigh", SG_SOLVER_CLASSID, &md->ev_neigh));
  PetscCall(PetscLogEventRegister("MDComm", SG_SOLVER_CLASSID, &md->ev_comm));
  PetscCall(SgSlotCreate("md.forces", &md->slot));
  PetscCall(SgSlotSetForcesProvider(md->slot, md->provname, md->prov.fn, md->prov.ctx));
  if (md->has_sur) PetscCall(SgSlotSetForcesSurrogate(md->slot, md->sprovname, md->sprov.fn, md->sprov.uncertainty, md->sprov.ctx));
  /* md_swap_policy, md_swap_use, ... (read always: a swap option without md_surrogate is an error) */
  PetscCall(SgSlotSetFromOptions(md->slot, comm, "md_"));
  PetscCall(SgSolverDeclareSlot(solver, md->slot));
  md->neigh.since = 0;
  md->fstep       = md->step;
  PetscCall(SgMDNeighUpdate(md, PETSC_TRUE));
  PetscCall(SgMDCheckOverlap(md));
  md->energy_step = -1;
  PetscCall(SgMDComputeForces(md));
  for (int k = 0; k < 7; k++) {
    const char *u = k == 0 ? md->units.u_temperature : k == 4 ? md->units.u_pressure : md->units.u_energy;
    char        uu[64];
    if (k == 6) PetscCall(PetscSNPrintf(uu, sizeof uu, "%s^3", md->units.u_length));
    else PetscCall(PetscSNPrintf(uu, sizeof uu, "%s%s", u, (k >= 1 && k != 4 && md->norm) ? "/atom" : ""));
    PetscCall(SgSolverAddDiagnostic(solver, dn[k], uu, &md->idiag[k]));
  }
  if (md->has_sur) {
    PetscCall(SgSolverAddDiagnostic(solver, "surrogate_served", "", &md->idiag[7]));
    PetscCall(SgSolverAddDiagnostic(solver, "uncertainty", md->units.style == SG_MD_UNITS_LJ ? "epsilon/sigma" : "eV/A", &md->idiag[8]));
  }
  PetscCall(SgSolverSetProgressDiagnostic(solver, md->idiag[3]));
  PetscCall(PetscInfo(solver, "md: %" PetscInt_FMT " atoms, processor grid %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "\n", md->N, md->dom->pgrid[0], md->dom->pgrid[1], md->dom->pgrid[2]));
  PetscCall(PetscPrintf(comm, "md: %" PetscInt_FMT " atoms, %" PetscInt_FMT " types, %s units, forces '%s' (cutoff %g, skin %g, %s lists), %s, dt %g, ranks %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "\n", md->N, md->ntypes, md->units.name, md->provname,
                        (double)md->cutoff, (double)md->neigh.skin, md->neigh.half ? "half (Newton)" : "full", ensembles[md->ens], (double)md->dt, md->dom->pgrid[0], md->dom->pgrid[1], md->dom->pgrid[2]));
  if (md->has_sur) PetscCall(PetscPrintf(comm, "md: surrogate '%s' (cutoff %g, %s) may serve the md.forces slot; retraining frames go to %s\n", md->sprovname, (double)md->sprov.cutoff, md->sprov.uncertainty ? "with an uncertainty estimate" : "no uncertainty estimate", md->retrain_file));
  {
    const SgSolverRunInfo *run;
    PetscCall(SgSolverGetRunInfo(solver, &run));
    md->restarting = run->restarting;
    /* a restarted run prints its first thermo line after the state is read (restart op) */
    if (md->thermo_every && !md->restarting) PetscCall(ThermoLine(solver, PETSC_TRUE));
  }
  { /* the files MDOpenFiles will write: their paths are checked now, before any output exists */
    if (md->traj_every) PetscCall(SgWriteCheck(comm, "-md_traj_file", md->traj_file, SG_FILE_TRAJECTORY));
    if (md->devi_every) PetscCall(SgWriteCheck(comm, "-md_model_devi_file", md->devi_file, SG_FILE_MODEL_DEVI));
    if (md->rdf_file[0]) PetscCall(SgWriteCheck(comm, "-md_rdf_file", md->rdf_file, SG_FILE_RDF));
    /* rank 0 alone creates the retraining dataset at the first flagged frame: a refusal then (an
       input of the run, a foreign file) ended rank 0 while the others waited (a two-rank hang) */
    if (md->has_sur) PetscCall(SgWriteCheck(comm, "-md_retrain_file", md->retrain_file, SG_FILE_DATASET));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The model deviation file goes through the write path (sgwrite.h): rank 0 writes DEVI.tmp, which
   holds the committed file's records and is renamed over DEVI with the run's set at each of its
   commits, so the file on disk always ends at the checkpoint on disk (or is the earlier run's, whole) and
   a crash or a full disk never leaves it cut short. A restarted run starts DEVI.tmp from the
   committed file less the lines past the checkpoint's step. */
static PetscErrorCode ModelDeviOpen(SgMD *md, PetscBool cont)
{
  SgTextFile tf;

  PetscFunctionBegin;
  PetscCall(SgTextFileOpen("-md_model_devi_file", md->devi_file, SG_FILE_MODEL_DEVI, "#", cont, &tf));
  md->devi_tf = tf;
  PetscCall(SgTextFileGetFILE(tf, &md->devi_fp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The model deviation file is a member of the run's set (sgwrite.h SgWriteMemberRegister): at each
   of the run's commits rank 0 closes DEVI.tmp, the run renames it with its set (all or none), and
   rank 0 continues in a new DEVI.tmp from the committed file. Rank 0's failures are agreed (one line
   on every rank; the other ranks waited in the next collective before: a two-rank hang). */
static PetscErrorCode ModelDeviMemberClose(void *ctx, char tmp[], char path[], size_t len)
{
  SgMD          *md = (SgMD *)ctx;
  SgTextFile     tf = (SgTextFile)md->devi_tf;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  md->devi_tf = NULL;
  md->devi_fp = NULL;
  PetscCall(SgAgreeBegin());
  ierr = SgTextFileFinish(&tf, tmp, path, len);
  PetscCall(SgAgreeEnd(md->dom->comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModelDeviMemberResume(void *ctx)
{
  SgMD          *md   = (SgMD *)ctx;
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  PetscCall(SgAgreeBegin());
  if (!md->dom->rank) ierr = ModelDeviOpen(md, PETSC_TRUE);
  PetscCall(SgAgreeEnd(md->dom->comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ModelDeviRestart(SgMD *md)
{
  char  line[512];
  FILE *in;

  PetscFunctionBegin;
  PetscCall(ModelDeviOpen(md, PETSC_FALSE)); /* the kind mark; the committed lines follow */
  in = fopen(md->devi_file, "r");
  if (!in) { /* the interrupted run wrote none: a new file */
    fprintf(md->devi_fp, "#%11s %18s %18s %18s %18s %18s %18s\n", "step", "max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  while (in && fgets(line, sizeof line, in)) {
    long long step;
    if (strstr(line, "surge-file:")) continue;
    if (line[0] != '#' && sscanf(line, "%lld", &step) == 1 && step > md->step) continue;
    fputs(line, md->devi_fp);
  }
  fclose(in);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The trajectory and model-deviation files are created (or, for a restarted run, cut back to the
   checkpoint's step) only when the run writes its first step or record: set-up only checks, so a
   run refused after it (an unknown option, a bad output path) leaves the files of an earlier run
   untouched. */
static PetscErrorCode MDOpenFiles(SgSolver solver)
{
  SolverData *sd = (SolverData *)solver->data;
  SgMD       *md = &sd->md;
  MPI_Comm    comm = PetscObjectComm((PetscObject)solver);

  PetscFunctionBegin;
  if (sd->files_open) PetscFunctionReturn(PETSC_SUCCESS);
  sd->files_open = PETSC_TRUE;
  if (md->has_sur) PetscCall(SgMDRetrainJoinRunSet(md)); /* the retraining frames: committed with the run's set */
  if (md->devi_every) { /* a restarted run appends (its checkpoint step's line is already there) */
    if (!md->dom->rank) {
      if (md->restarting) PetscCall(ModelDeviRestart(md));
      else PetscCall(ModelDeviOpen(md, PETSC_FALSE));
      if (!md->restarting) fprintf(md->devi_fp, "#%11s %18s %18s %18s %18s %18s %18s\n", "step", "max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f");
    }
    PetscCall(SgWriteMemberRegister(md, ModelDeviMemberClose, ModelDeviMemberResume)); /* committed with the run's set */
    if (!md->restarting) PetscCall(SgMDModelDeviWrite(md));
  }
  if (md->traj_every) {
    SgH5MD h;
    PetscInt *sp, off, cnt;
    PetscReal *buf, *blk;
    /* a restarted run continues the trajectory file without the frames past the checkpoint; a
       fresh run starts a new file */
    PetscCall(SgH5MDCreate(comm, md->traj_file, md->N, md->units.u_length, md->units.u_time, md->restarting, &h));
    md->h5md = h;
    PetscCall(SgH5MDJoinRunSet(h)); /* committed with the run's set */
    if (md->restarting) {
      PetscCall(SgH5MDTruncate((SgH5MD)md->h5md, md->step));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscMalloc1(md->dom->nlocal + 1, &buf));
    for (PetscInt i = 0; i < md->dom->nlocal; i++) buf[i] = md->dom->type[i];
    PetscCall(SgMDDomainToIdBlocks(md->dom, md->N, 1, buf, &off, &cnt, &blk));
    PetscCall(PetscMalloc1(cnt + 1, &sp));
    for (PetscInt i = 0; i < cnt; i++) sp[i] = (PetscInt)blk[i];
    PetscCall(SgH5MDWriteSpecies(h, off, cnt, sp, md->ntypes, (const char(*)[16])md->tname, md->mass));
    PetscCall(PetscFree(sp));
    PetscCall(PetscFree(blk));
    PetscCall(PetscFree(buf));
    PetscCall(TrajFrame(solver, 0.0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDTimeStep(SgSolver solver, PetscReal t, PetscReal *dtmax)
{
  SgMD *md = &((SolverData *)solver->data)->md;
  PetscFunctionBegin;
  *dtmax = md->dt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDStep(SgSolver solver, PetscReal t, PetscReal dt)
{
  SolverData    *sd = (SolverData *)solver->data;
  SgMD          *md = &sd->md;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(MDOpenFiles(solver));
  PetscCall(PetscTime(&t0));
  PetscCall(SgMDIntegrate(md, dt));
  PetscCall(PetscTime(&t1));
  sd->wall += t1 - t0;
  sd->nsteps++;
  if (md->thermo_every && md->step % md->thermo_every == 0) PetscCall(ThermoLine(solver, PETSC_FALSE));
  if (md->traj_every && md->step % md->traj_every == 0) PetscCall(TrajFrame(solver, t + dt));
  if (md->devi_every && md->step % md->devi_every == 0) PetscCall(SgMDModelDeviWrite(md));
  if (md->rdf_every && md->step >= md->rdf_start && md->step % md->rdf_every == 0) PetscCall(SgMDRDFSample(md));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDDiagnose(SgSolver solver, PetscReal t, PetscReal v[])
{
  SgMD     *md = &((SolverData *)solver->data)->md;
  PetscReal T, ke, pe, p, ec, sc;

  PetscFunctionBegin;
  PetscCall(MDOpenFiles(solver));
  PetscCall(SgMDThermo(md, &T, &ke, &pe, &p, &ec));
  sc = md->norm ? 1.0 / md->N : 1.0;
  v[md->idiag[0]] = T;
  v[md->idiag[1]] = pe * sc;
  v[md->idiag[2]] = ke * sc;
  v[md->idiag[3]] = (pe + ke) * sc;
  v[md->idiag[4]] = p;
  v[md->idiag[5]] = ec * sc;
  v[md->idiag[6]] = md->dom->box.volume;
  if (md->has_sur) {
    v[md->idiag[7]] = md->served_sur ? 1.0 : 0.0;
    v[md->idiag[8]] = md->uncertainty;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Per-atom state in id order, 16 values: x3 v3 f3 xbuild3 img3 type.  The neighbour list is rebuilt on restart from the positions of its last build
   (xbuild), which reproduces the same list, hence the same force summation order: the continued
   run is bit-identical to an uninterrupted one. */
#define NSTATE 16
static PetscErrorCode MDCheckpointIO(SgSolver solver, SgCheckpoint chk)
{
  SolverData      *sd = (SolverData *)solver->data;
  SgMD            *md = &sd->md;
  SgMDDomain      *dom = md->dom;
  MPI_Comm         comm = PetscObjectComm((PetscObject)solver);
  SgCheckpointMode mode;
  PetscInt         off, cnt;
  PetscReal       *buf, *blk, sc[8 + 20], cell[22], slotstate[SG_SLOT_NSTATE];
  Vec              V;

  PetscFunctionBegin;
  PetscCall(SgCheckpointGetMode(chk, &mode));
  PetscCall(SgCheckpointLayoutString(chk, "md_units", md->units.name));
  PetscCall(SgCheckpointLayoutString(chk, "md_forces", md->provname));
  PetscCall(SgCheckpointLayoutString(chk, "md_ensemble", ensembles[md->ens]));
  PetscCall(SgCheckpointLayoutInt(chk, "md_atoms", md->N));
  PetscCall(SgCheckpointLayoutInt(chk, "md_types", md->ntypes));
  PetscCall(SgCheckpointLayoutInt(chk, "md_nhc_chain", md->nchain));
  PetscCall(SgCheckpointLayoutInt(chk, "md_newton", (PetscInt)md->neigh.half));
  PetscCall(SgCheckpointLayoutReal(chk, "md_cutneigh", md->neigh.cutneigh));
  PetscCall(SgCheckpointLayoutString(chk, "md_barostat", md->baro ? "berendsen" : "none"));
  off = (PetscInt)(((long long)md->N * dom->rank) / dom->size);
  cnt = (PetscInt)(((long long)md->N * (dom->rank + 1)) / dom->size) - off;
  PetscCall(VecCreateMPI(comm, NSTATE * cnt, NSTATE * md->N, &V));
  if (mode == SG_CHECKPOINT_WRITE) {
    PetscReal ebath = 0;
    PetscCall(SgMDEnsureEnergy(md));
    PetscCall(PetscMalloc1(NSTATE * dom->nlocal + 1, &buf));
    for (PetscInt i = 0; i < dom->nlocal; i++) {
      PetscReal *b = &buf[NSTATE * i];
      for (int k = 0; k < 3; k++) {
        b[k] = dom->x[3 * i + k]; b[3 + k] = dom->v[3 * i + k]; b[6 + k] = dom->f[3 * i + k];
        b[9 + k] = dom->xbuild[3 * i + k]; b[12 + k] = (PetscReal)dom->img[3 * i + k];
      }
      b[15] = (PetscReal)dom->type[i];
    }
    PetscCall(SgMDDomainToIdBlocks(dom, md->N, NSTATE, buf, &off, &cnt, &blk));
    {
      PetscScalar *a;
      PetscCall(VecGetArray(V, &a));
      PetscCall(PetscArraycpy(a, blk, NSTATE * cnt));
      PetscCall(VecRestoreArray(V, &a));
    }
    PetscCall(SgCheckpointWriteVec(chk, "md_atoms", V));
    PetscCall(PetscFree(blk));
    PetscCall(PetscFree(buf));
    PetscCall(MPIU_Allreduce(&md->ebath, &ebath, 1, MPIU_REAL, MPIU_SUM, comm));
    sc[0] = md->step; sc[1] = md->neigh.since; sc[2] = md->neigh.nbuilds; sc[3] = md->neigh.ndangerous;
    sc[4] = md->pe; sc[5] = ebath; sc[6] = md->eswitch; sc[7] = 0;
    for (int k = 0; k < 9; k++) sc[8 + k] = md->virial[k];
    for (int k = 0; k < 10; k++) sc[17 + k] = k < md->nchain ? md->eta[k] : 0;
    PetscCall(SgCheckpointWriteReals(chk, "md_scalars", 27, sc));
    PetscCall(SgCheckpointWriteReals(chk, "md_nhc_v", 10, md->peta));
    for (int k = 0; k < 9; k++) cell[k] = dom->box.h[k];
    for (int k = 0; k < 3; k++) cell[9 + k] = dom->box.lo[k];
    cell[12] = md->neigh.dilation;
    for (int k = 0; k < 9; k++) cell[13 + k] = md->neigh.hbuild[k];
    PetscCall(SgCheckpointWriteReals(chk, "md_cell", 22, cell));
    PetscCall(SgSlotGetState(md->slot, slotstate));
    PetscCall(SgCheckpointWriteReals(chk, "md_slot", SG_SLOT_NSTATE, slotstate));
  } else {
    PetscReal         *all;
    PetscMPIInt       *rc, *rd;
    const PetscScalar *a;
    PetscCall(SgCheckpointReadVec(chk, "md_atoms", V));
    PetscCall(SgCheckpointReadReals(chk, "md_cell", 22, cell));
    PetscCall(SgCheckpointReadReals(chk, "md_slot", SG_SLOT_NSTATE, slotstate)); /* swap counts continue */
    PetscCall(SgSlotSetState(md->slot, slotstate));
    /* the list is rebuilt exactly as it was built: in the cell of that build, from the positions
       of that build; then the current cell (a barostat changes it) is put back */
    PetscCall(SgMDBoxSet(&dom->box, &cell[9], &cell[13]));
    PetscCall(SgMDNeighSetUp(&md->neigh, dom));
    /* every rank sees all atoms (O(N) once) and keeps those whose build-time position it owns */
    PetscCall(PetscMalloc1(NSTATE * md->N, &all));
    PetscCall(PetscMalloc2(dom->size, &rc, dom->size, &rd));
    for (PetscMPIInt r = 0; r < dom->size; r++) {
      PetscInt o = (PetscInt)(((long long)md->N * r) / dom->size), c = (PetscInt)(((long long)md->N * (r + 1)) / dom->size) - o;
      rc[r] = (PetscMPIInt)(NSTATE * c);
      rd[r] = (PetscMPIInt)(NSTATE * o);
    }
    PetscCall(VecGetArrayRead(V, &a));
    PetscCallMPI(MPI_Allgatherv(a, rc[dom->rank], MPIU_REAL, all, rc, rd, MPIU_REAL, comm));
    PetscCall(VecRestoreArrayRead(V, &a));
    {
      SgMDSystem s;
      PetscCall(PetscMemzero(&s, sizeof s));
      s.n = md->N;
      PetscCall(PetscMalloc1(3 * s.n, &s.x));
      PetscCall(PetscMalloc1(3 * s.n, &s.v));
      PetscCall(PetscMalloc1(s.n, &s.type));
      for (PetscInt i = 0; i < s.n; i++) {
        for (int k = 0; k < 3; k++) { s.x[3 * i + k] = all[NSTATE * i + 9 + k]; s.v[3 * i + k] = 0; }
        s.type[i] = (PetscInt)all[NSTATE * i + 15];
      }
      PetscCall(SgMDDomainDistribute(dom, &s));
      PetscCall(SgMDSystemDestroy(&s));
    }
    /* the list exactly as it was built: same positions, same ghosts, same order */
    PetscCall(SgMDDomainBorders(dom));
    PetscCall(SgMDNeighBuild(&md->neigh, dom));
    for (PetscInt i = 0; i < dom->nlocal; i++) {
      const PetscReal *b = &all[NSTATE * (dom->id[i] - 1)];
      for (int k = 0; k < 3; k++) {
        dom->x[3 * i + k] = b[k]; dom->v[3 * i + k] = b[3 + k]; dom->f[3 * i + k] = b[6 + k];
        dom->xbuild[3 * i + k] = b[9 + k]; dom->img[3 * i + k] = (PetscInt)b[12 + k];
      }
    }
    {
      PetscCall(SgMDBoxSet(&dom->box, &cell[9], cell));
      md->neigh.dilation = cell[12];
      for (int k = 0; k < 6; k++) {
        SgMDSwap *sw = &dom->swap[k];
        for (int e = 0; e < 3; e++) sw->shift[e] = sw->doshift ? (k % 2 == 0 ? 1.0 : -1.0) * dom->box.h[3 * (k / 2) + e] : 0.0;
      }
    }
    PetscCall(SgMDDomainForward(dom));
    PetscCall(PetscFree(all));
    PetscCall(PetscFree2(rc, rd));
    PetscCall(SgCheckpointReadReals(chk, "md_scalars", 27, sc));
    PetscCall(SgCheckpointReadReals(chk, "md_nhc_v", 10, md->peta));
    md->step = (PetscInt)sc[0]; md->neigh.since = (PetscInt)sc[1]; md->neigh.nbuilds = (PetscInt)sc[2]; md->neigh.ndangerous = (PetscInt)sc[3];
    md->pe = sc[4]; md->ebath = dom->rank == 0 ? sc[5] : 0.0;
    md->eswitch = sc[6]; /* 0 in checkpoints written before it was kept */
    for (int k = 0; k < 9; k++) md->virial[k] = sc[8 + k];
    for (int k = 0; k < 10; k++) md->eta[k] = sc[17 + k];
    md->energy_step = md->step;
    md->fstep       = md->step;
    if (md->thermo_every) PetscCall(ThermoLine(solver, PETSC_TRUE));
  }
  PetscCall(VecDestroy(&V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The g(r) table (rank 0). */
static PetscErrorCode RDFWriteRoot(SgMD *md, const PetscReal g[])
{
  SgTextFile tf;
  FILE      *fp;

  PetscFunctionBegin;
  PetscCall(SgTextFileOpen("-md_rdf_file", md->rdf_file, SG_FILE_RDF, "#", PETSC_FALSE, &tf));
  PetscCall(SgTextFileGetFILE(tf, &fp));
  if (md->rdf_types[0] >= 0) fprintf(fp, "# g(r) of %s-%s pairs, %d atoms, %d samples; columns: r (bin centre, %s), g\n", md->tname[md->rdf_types[0]], md->tname[md->rdf_types[1]], (int)md->N, (int)md->rdf_nsamples, md->units.u_length);
  else fprintf(fp, "# g(r) of %d atoms, %d samples; columns: r (bin centre, %s), g\n", (int)md->N, (int)md->rdf_nsamples, md->units.u_length);
  for (PetscInt k = 0; k < md->rdf_nbins; k++) fprintf(fp, "%.6f %.8f\n", (double)((k + 0.5) * md->cutoff / md->rdf_nbins), (double)g[k]);
  { /* committed with the run's last set */
    char tmp[PETSC_MAX_PATH_LEN + 32], path[PETSC_MAX_PATH_LEN + 32];
    PetscCall(SgTextFileFinish(&tf, tmp, path, sizeof tmp));
    PetscCall(SgWriteMemberAdd(tmp, path));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDReport(SgSolver solver, SgOutput out)
{
  SolverData *sd = (SolverData *)solver->data;
  SgMD       *md = &sd->md;
  MPI_Comm    comm = PetscObjectComm((PetscObject)solver);
  PetscReal   T, ke, pe, p, ec, rate, wall;

  PetscFunctionBegin;
  /* the trajectory and model deviation files are committed with the run's last set (CommitSet) */
  PetscCall(SgMDThermo(md, &T, &ke, &pe, &p, &ec));
  PetscCall(MPIU_Allreduce(&sd->wall, &wall, 1, MPIU_REAL, MPIU_MAX, comm));
  rate = wall > 0 ? (PetscReal)md->N * sd->nsteps / wall : 0;
  PetscCall(PetscPrintf(comm, "md: %" PetscInt_FMT " steps of %" PetscInt_FMT " atoms in %.4f s (loop time) = %.4g atom-steps/s; %" PetscInt_FMT " neighbour-list builds, %" PetscInt_FMT " dangerous\n", sd->nsteps, md->N, (double)wall, (double)rate, md->neigh.nbuilds, md->neigh.ndangerous));
  if (md->has_sur) {
    PetscInt  ns, nu, nsw, nrej;
    PetscReal frac, v[6];
    PetscCall(SgSlotGetCounts(md->slot, &ns, &nu, &nsw, &nrej));
    frac = ns + nu > 0 ? (PetscReal)nu / (ns + nu) : 0;
    PetscCall(PetscPrintf(comm, "md swap: %s (solver) served %" PetscInt_FMT " force evaluations, %s (surrogate) %" PetscInt_FMT " (fraction %.4f); %" PetscInt_FMT " switches, %" PetscInt_FMT " surrogate answers rejected; %" PetscInt_FMT " frames appended to %s\n", md->provname, ns, md->sprovname, nu, (double)frac, nsw, nrej, md->nretrain, md->nretrain ? md->retrain_file : "(none)"));
    v[0] = ns; v[1] = nu; v[2] = nsw; v[3] = nrej; v[4] = frac; v[5] = md->nretrain;
    if (out) {
      PetscCall(SgOutputWriteReport(out, "md_swap_solver_calls", "", 1, &v[0]));
      PetscCall(SgOutputWriteReport(out, "md_swap_surrogate_calls", "", 1, &v[1]));
      PetscCall(SgOutputWriteReport(out, "md_swap_switches", "", 1, &v[2]));
      PetscCall(SgOutputWriteReport(out, "md_swap_rejected", "", 1, &v[3]));
      PetscCall(SgOutputWriteReport(out, "md_swap_surrogate_fraction", "", 1, &v[4]));
      PetscCall(SgOutputWriteReport(out, "md_swap_retrain_frames", "", 1, &v[5]));
    }
  }
  if (md->rdf_every) {
    PetscReal *g;
    PetscCall(PetscMalloc1(md->rdf_nbins, &g));
    PetscCall(SgMDRDFResult(md, g));
    if (out) PetscCall(SgOutputWriteReport(out, "md_rdf", "", md->rdf_nbins, g));
    if (md->rdf_file[0]) { /* rank 0 writes; its failure is agreed (one line on every rank, no hang) */
      PetscErrorCode ierr;
      PetscCall(SgAgreeBegin());
      ierr = md->dom->rank ? PETSC_SUCCESS : RDFWriteRoot(md, g);
      PetscCall(SgAgreeEnd(comm, ierr));
    }
    PetscCall(PetscFree(g));
  }
  if (out) {
    PetscReal v[3] = {wall, rate, (PetscReal)md->neigh.nbuilds};
    PetscCall(SgOutputWriteReport(out, "md_loop_time", "s", 1, &v[0]));
    PetscCall(SgOutputWriteReport(out, "md_atom_steps_per_s", "1/s", 1, &v[1]));
    PetscCall(SgOutputWriteReport(out, "md_neighbor_builds", "", 1, &v[2]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Training samples: "md_frames" are the trajectory frames (H5MD, positions and forces) written to
   path every md_traj_every steps (100 unless the deck sets it). */
static PetscErrorCode MDContribute(SgSolver solver, const char kind[], const char path[], PetscBool *can)
{
  PetscFunctionBegin;
  *can = strcmp(kind, "md_frames") ? PETSC_FALSE : PETSC_TRUE;
  if (*can && path) {
    SgMD *md = &((SolverData *)solver->data)->md;
    PetscCall(PetscStrncpy(md->traj_file, path, sizeof md->traj_file));
    if (!md->traj_every) md->traj_every = 100;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDView(SgSolver solver, PetscViewer viewer)
{
  SgMD *md = &((SolverData *)solver->data)->md;
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  md: %" PetscInt_FMT " atoms, %s units, forces %s, %s\n", md->N, md->units.name, md->provname, ensembles[md->ens]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDDestroy(SgSolver solver)
{
  SgMD *md = &((SolverData *)solver->data)->md;

  PetscFunctionBegin;
  if (md->h5md) {
    SgH5MD h = (SgH5MD)md->h5md;
    PetscCall(SgH5MDDestroy(&h));
  }
  PetscCall(SgForcesProviderDestroy(&md->prov));
  PetscCall(SgForcesProviderDestroy(&md->sprov));
  PetscCall(SgMDRetrainClose(md));
  if (md->devi_every) SgWriteMemberUnregister(md);
  if (md->devi_tf) { /* an error ended the run: the file keeps what the last checkpoint committed */
    SgTextFile tf = (SgTextFile)md->devi_tf;
    PetscCall(SgTextFileDiscard(&tf));
  }
  /* the slot was declared to the solver, which destroys it */
  PetscCall(SgMDNeighDestroy(&md->neigh));
  PetscCall(SgMDDomainDestroy(&md->dom));
  PetscCall(SgMDSystemDestroy(&md->sys));
  PetscCall(PetscFree(md->rdf_hist));
  PetscCall(PetscFree(md->fscratch));
  PetscCall(PetscFree(solver->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode SgSolverCreate_MD(SgSolver solver)
{
  SolverData *sd;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sd));
  solver->data                = sd;
  solver->ops->setfromoptions = MDSetFromOptions;
  solver->ops->setup          = MDSetUp;
  solver->ops->timestep       = MDTimeStep;
  solver->ops->step           = MDStep;
  solver->ops->diagnose       = MDDiagnose;
  solver->ops->checkpoint     = MDCheckpointIO;
  solver->ops->contribute     = MDContribute;
  solver->ops->report         = MDReport;
  solver->ops->view           = MDView;
  solver->ops->destroy        = MDDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
