/* SgSolver type "vlasov": options, set-up, view and destroy. Units and conventions: vlasov.h. */
#include "vlasov.h"

static const char *const family_names[] = {"serendipity", "tensor"};
static const char *const flux_names[]   = {"upwind", "central"};
static const char *const field_names[]  = {"poisson", "none", "maxwell"};
static const char *const mflux_names[]  = {"central", "upwind"};
static const char *const fitf_names[]   = {"electric", "magnetic"};
static const char *const coll_names[]   = {"none", "bgk", "lbo"};
static const char *const fit_names[]    = {"none", "landau", "growth"};
static const char *const exact_names[]  = {"none", "freestream", "planewave"};
static const char *const init_names[]   = {"maxwellian", "twostream", "bumpontail", "tophat"};

/* SSP-RK3 stability limit of p-th order DG for |a| dt / dx (Cockburn & Shu, J. Sci. Comput. 16,
   2001, table 2.2: 0.409, 0.209, 0.130), times (2p+1) because our cfl is defined with the DG
   frequency (2p+1) sum_d |a_d| / dx_d, like gkylzero's. */
static PetscReal CflLimit(PetscInt p)
{
  const PetscReal c[4] = {1.0, 0.409, 0.209, 0.130};
  return (2 * p + 1) * c[p];
}

static PetscErrorCode SpeciesOptions(PetscOptionItems *PetscOptionsObject, SgVlasov *v, SgVlasovSpecies *s)
{
  char      opt[128];
  PetscInt  n, idx;
  PetscBool set;
  PetscReal drift[3] = {0, 0, 0};

  PetscFunctionBegin;
#define OPT(key) (PetscSNPrintf(opt, sizeof opt, "-%s_" key, s->name), opt)
  s->charge = -1; s->mass = 1;
  PetscCall(SgOptionsReal(OPT("charge"), "Charge of the species", "e", s->charge, &s->charge, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal(OPT("mass"), "Mass of the species", "m_e", s->mass, &s->mass, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  s->qbym = s->charge / s->mass;
  s->nu   = 0;
  if (v->collisions) {
    PetscCall(SgOptionsReal(OPT("nu"), "Collision frequency of the species (self-collisions; collisions: bgk or lbo)", "omega_pe", s->nu, &s->nu, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCheck(s->nu >= 0 && PetscIsNormalReal(s->nu + 1), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "vlasov_%s_nu = %g: a collision frequency must be >= 0 (units omega_pe)", s->name, (double)s->nu);
  }
  idx = 0;
  PetscCall(SgOptionsEList(OPT("init"), "Initial distribution: maxwellian, twostream (two counter-drifting Maxwellians, +-drift), bumpontail, or tophat (uniform on |v_j - drift_j| < tophat_width_j, plus an optional Maxwellian bump)", init_names, 4, init_names[0], &idx, NULL));
  s->init = (SgVlasovInit)idx;
  PetscReal density = 1, vt = 1, pert = 0;
  PetscCall(SgOptionsReal(OPT("density"), "Mean density", "n_0", density, &density, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  PetscCall(SgOptionsReal(OPT("vt"), "Thermal speed sqrt(T/m) of each Maxwellian", "v_th,e", vt, &vt, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  n = 3;
  PetscCall(SgOptionsRealArray(OPT("drift"), "Drift velocity (twostream: beam velocities are +-drift)", "v_th,e", drift, &n, &set, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCheck(!set || n == v->vdim, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT,
             "Option -vlasov_%s_drift has %" PetscInt_FMT " entries; give one per velocity dimension (vdim = %" PetscInt_FMT ")", s->name, n, v->vdim);
  PetscCall(SgOptionsReal(OPT("perturbation"), "Relative amplitude of the density perturbation cos(k.x)", NULL, pert, &pert, NULL, -1.0, 1.0));
  s->pert = pert;
  s->k[0] = s->k[1] = s->k[2] = 0;
  n       = 3;
  PetscCall(SgOptionsRealArray(OPT("k"), "Wavenumber of the density perturbation, one per configuration dimension", "1/lambda_D", s->k, &n, &set, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCheck(!set || n == v->cdim, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "Option -vlasov_%s_k has %" PetscInt_FMT " entries; give one per configuration dimension (cdim = %" PetscInt_FMT ")", s->name, n, v->cdim);
  PetscReal bfrac = 0.1, bdrift = 4.5, bvt = 0.5, width[3] = {1, 1, 1};
  if (s->init == SG_VLASOV_INIT_TOPHAT) {
    PetscInt  nw = 3;
    PetscBool sw;
    bfrac = 0;
    PetscCall(SgOptionsRealArray(OPT("tophat_width"), "Half-width of the top-hat along each velocity direction (init tophat), one per velocity dimension", "v_th,e", width, &nw, &sw, PETSC_SMALL, PETSC_MAX_REAL));
    PetscCheck(!sw || nw == v->vdim, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "Option -vlasov_%s_tophat_width has %" PetscInt_FMT " entries; give one half-width per velocity dimension (vdim = %" PetscInt_FMT ")", s->name, nw, v->vdim);
  }
  if (s->init == SG_VLASOV_INIT_BUMPONTAIL || s->init == SG_VLASOV_INIT_TOPHAT) {
    PetscCall(SgOptionsReal(OPT("bump_fraction"), "Fraction of the density in the bump (bumpontail)", NULL, bfrac, &bfrac, NULL, 0.0, 1.0));
    PetscCall(SgOptionsReal(OPT("bump_drift"), "Drift of the bump along vx (bumpontail)", "v_th,e", bdrift, &bdrift, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCall(SgOptionsReal(OPT("bump_vt"), "Thermal speed of the bump (bumpontail)", "v_th,e", bvt, &bvt, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  }
  switch (s->init) {
  case SG_VLASOV_INIT_MAXWELLIAN:
    s->ncomp = 1;
    s->comp[0].density = density; s->comp[0].vt = vt;
    for (PetscInt j = 0; j < 3; j++) s->comp[0].drift[j] = drift[j];
    break;
  case SG_VLASOV_INIT_TWOSTREAM:
    s->ncomp = 2;
    for (PetscInt c = 0; c < 2; c++) {
      s->comp[c].density = 0.5 * density; s->comp[c].vt = vt;
      for (PetscInt j = 0; j < 3; j++) s->comp[c].drift[j] = (c ? -1 : 1) * drift[j];
    }
    break;
  case SG_VLASOV_INIT_BUMPONTAIL:
    s->ncomp = 2;
    s->comp[0].density = (1 - bfrac) * density; s->comp[0].vt = vt;
    s->comp[1].density = bfrac * density; s->comp[1].vt = bvt;
    for (PetscInt j = 0; j < 3; j++) { s->comp[0].drift[j] = drift[j]; s->comp[1].drift[j] = j ? drift[j] : bdrift; }
    break;
  case SG_VLASOV_INIT_TOPHAT: /* the top-hat, and the bump when bump_fraction > 0 */
    s->ncomp = bfrac > 0 ? 2 : 1;
    s->comp[0].density = (1 - bfrac) * density; s->comp[0].vt = vt;
    s->comp[0].tophat  = PETSC_TRUE;
    s->comp[1].density = bfrac * density; s->comp[1].vt = bvt;
    for (PetscInt j = 0; j < 3; j++) { s->comp[0].drift[j] = drift[j]; s->comp[0].width[j] = width[j]; s->comp[1].drift[j] = j ? drift[j] : bdrift; }
    break;
  }
  /* optional per-species velocity box (default: the global one) */
  for (PetscInt d = 0; d < 6; d++) { s->lower[d] = v->lower[d]; s->upper[d] = v->upper[d]; s->N[d] = v->cells[d]; }
  {
    PetscReal lo[3], hi[3];
    PetscInt  nl = 3, nh = 3;
    for (PetscInt j = 0; j < 3; j++) { lo[j] = v->lower[v->cdim + j]; hi[j] = v->upper[v->cdim + j]; } /* defaults shown by -help */
    PetscBool sl, sh;
    PetscCall(SgOptionsRealArray(OPT("vlower"), "Lower velocity bounds of this species (default: the global lower)", "v_th,e", lo, &nl, &sl, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCall(SgOptionsRealArray(OPT("vupper"), "Upper velocity bounds of this species (default: the global upper)", "v_th,e", hi, &nh, &sh, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCheck(!sl || nl == v->vdim, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "Option -vlasov_%s_vlower needs %" PetscInt_FMT " entries (vdim)", s->name, v->vdim);
    PetscCheck(!sh || nh == v->vdim, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "Option -vlasov_%s_vupper needs %" PetscInt_FMT " entries (vdim)", s->name, v->vdim);
    for (PetscInt j = 0; j < v->vdim; j++) {
      if (sl) s->lower[v->cdim + j] = lo[j];
      if (sh) s->upper[v->cdim + j] = hi[j];
    }
  }
#undef OPT
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetFromOptions_Vlasov(SgSolver solver, PetscOptionItems *PetscOptionsObject)
{
  SgVlasov *v    = (SgVlasov *)solver->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);
  PetscInt  n, idx;
  PetscBool set;
  char      species[256] = "elc";

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Vlasov-Poisson DG solver (units: lambda_D, 1/omega_pe, v_th,e; see docs/vlasov.md)");
  v->cdim = 1; v->vdim = 1;
  PetscCall(SgOptionsInt("-cdim", "Configuration-space dimensions (periodic; 3 only with field: maxwell or none, 3x3v p=1)", v->cdim, &v->cdim, NULL, 1, 3));
  PetscCall(SgOptionsInt("-vdim", "Velocity-space dimensions (>= cdim)", v->vdim, &v->vdim, NULL, 1, 3));
  PetscCheck(v->vdim >= v->cdim, comm, PETSC_ERR_USER_INPUT, "vlasov_vdim = %" PetscInt_FMT " < vlasov_cdim = %" PetscInt_FMT ": the electric field has cdim components and needs as many velocity directions; set vdim >= cdim", v->vdim, v->cdim);
  v->pdim = v->cdim + v->vdim;
  n       = 6;
  for (PetscInt d = 0; d < 6; d++) v->cells[d] = 16;
  PetscCall(SgOptionsIntArray("-cells", "Cells per phase-space dimension: x [y] vx [vy] [vz]", v->cells, &n, &set, PETSC_MIN_INT, PETSC_MAX_INT));
  PetscCheck(set && n == v->pdim, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_cells needs %" PetscInt_FMT " entries (cdim + vdim = %" PetscInt_FMT "+%" PetscInt_FMT "), got %" PetscInt_FMT ": e.g. cells: [32, 32] for 1x1v", v->pdim, v->cdim, v->vdim, set ? n : 0);
  for (PetscInt d = 0; d < v->pdim; d++)
    PetscCheck(v->cells[d] >= 1, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_cells: entry %" PetscInt_FMT " = %" PetscInt_FMT " is not a positive cell count; every dimension needs at least 1 cell (periodic directions at least 3 per rank)", d, v->cells[d]);
  {
    PetscInt nr = 3;
    PetscBool sr;
    v->ranks[0] = v->ranks[1] = v->ranks[2] = PETSC_DECIDE;
    PetscCall(SgOptionsIntArray("-ranks", "MPI ranks along each split phase dimension (split_dims, in phase order; product = number of ranks); default: PETSc decides", v->ranks, &nr, &sr, 1, PETSC_MAX_INT));
    PetscCheck(!sr || nr == PetscMin(v->pdim, 3), comm, PETSC_ERR_USER_INPUT, "Option -vlasov_ranks needs %" PetscInt_FMT " entries (one per decomposed phase axis), got %" PetscInt_FMT, PetscMin(v->pdim, 3), nr);
    if (sr) {
      PetscMPIInt size;
      PetscInt    prod = 1;
      PetscCallMPI(MPI_Comm_size(comm, &size));
      for (PetscInt a = 0; a < nr; a++) prod *= v->ranks[a];
      PetscCheck(prod == size, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_ranks: the product of the entries is %" PetscInt_FMT " but the run has %d ranks", prod, size);
    }
  }
  {
    const char *const dnames[6] = {"x", "y", "z", "vx", "vy", "vz"};
    char             *sd[8];
    PetscInt          nsd = 8, nax = PetscMin(v->pdim, 3);
    PetscBool         ss;
    PetscCall(SgOptionsStringArray("-split_dims", "Phase dimensions the MPI decomposition splits (the DMDA axes), e.g. x,vx,vy: exactly min(cdim+vdim, 3) names of x [y] [z] vx [vy] [vz]; the others are kept whole on every rank. Default: the ones with the most cells, ties to the earlier", sd, &nsd, &ss));
    v->split_set = ss;
    if (ss) {
      PetscBool used[6] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
      char      bad[64] = "";
      PetscInt  nbad = 0, rep = -1;
      for (PetscInt i = 0; i < nsd; i++) {
        PetscInt d = -1;
        for (PetscInt e = 0; e < 6; e++) {
          PetscBool eq;
          PetscCall(PetscStrcmp(sd[i], dnames[e], &eq));
          if (eq && e < 3 && e < v->cdim) d = e;
          if (eq && e >= 3 && e - 3 < v->vdim) d = v->cdim + e - 3;
        }
        if (d < 0 && !nbad++) PetscCall(PetscStrncpy(bad, sd[i], sizeof bad));
        else if (d >= 0 && used[d] && rep < 0) rep = d;
        else if (d >= 0) used[d] = PETSC_TRUE;
      }
      for (PetscInt i = 0; i < nsd; i++) PetscCall(PetscFree(sd[i]));
      PetscCheck(!nbad, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_split_dims: '%s' is not a phase dimension of this %" PetscInt_FMT "x%" PetscInt_FMT "v run; use names from x%s%s, vx%s%s", bad, v->cdim, v->vdim, v->cdim > 1 ? ", y" : "", v->cdim > 2 ? ", z" : "", v->vdim > 1 ? ", vy" : "",
                 v->vdim > 2 ? ", vz" : "");
      PetscCheck(rep < 0, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_split_dims names phase dimension %s twice: name each split dimension once", dnames[rep < v->cdim ? rep : 3 + rep - v->cdim]);
      PetscCheck(nsd == nax, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_split_dims has %" PetscInt_FMT " names: a %" PetscInt_FMT "x%" PetscInt_FMT "v run splits exactly %" PetscInt_FMT " phase dimensions (at most 3: the DMDA is 2-D or 3-D), e.g. split_dims: [x, vx%s]", nsd, v->cdim, v->vdim, nax, nax > 2 ? ", vy" : "");
      for (PetscInt d = 0, a = 0; d < v->pdim; d++)
        if (used[d]) v->split[a++] = d;
    }
  }
  n = 6;
  PetscCall(SgOptionsRealArray("-lower", "Lower bounds of the phase-space box: x [y] vx [vy] [vz]", "lambda_D, v_th,e", v->lower, &n, &set, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCheck(set && n == v->pdim, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_lower needs %" PetscInt_FMT " entries (cdim + vdim)", v->pdim);
  n = 6;
  PetscCall(SgOptionsRealArray("-upper", "Upper bounds of the phase-space box: x [y] vx [vy] [vz]", "lambda_D, v_th,e", v->upper, &n, &set, PETSC_MIN_REAL, PETSC_MAX_REAL));
  PetscCheck(set && n == v->pdim, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_upper needs %" PetscInt_FMT " entries (cdim + vdim)", v->pdim);
  for (PetscInt d = 0; d < v->pdim; d++)
    PetscCheck(v->upper[d] > v->lower[d], comm, PETSC_ERR_USER_INPUT, "vlasov_upper[%" PetscInt_FMT "] = %g is not above vlasov_lower[%" PetscInt_FMT "] = %g", d, (double)v->upper[d], d, (double)v->lower[d]);
  /* the kernels multiply cell widths and their inverse squares (Poisson stiffness, Jacobians): a
     width outside [1e-100, 1e100] over- or underflows them to a singular field solve or a zero step */
  for (PetscInt d = 0; d < v->pdim; d++) {
    PetscReal dx = (v->upper[d] - v->lower[d]) / v->cells[d];
    PetscCheck(dx >= 1e-100 && dx <= 1e100, comm, PETSC_ERR_USER_INPUT, "vlasov_lower/upper[%" PetscInt_FMT "] = [%g, %g] with %" PetscInt_FMT " cells gives a cell width of %g, outside [1e-100, 1e100]: give a box of physical size (units lambda_D, v_th,e)", d, (double)v->lower[d], (double)v->upper[d], v->cells[d], (double)dx);
  }
  idx = 0;
  PetscCall(SgOptionsEList("-basis", "Modal basis family", family_names, 2, family_names[0], &idx, NULL));
  v->family = idx;
  v->order  = 2;
  PetscCall(SgOptionsInt("-order", "Polynomial order p of the basis", v->order, &v->order, NULL, 1, 3));
  idx = 0;
  PetscCall(SgOptionsEList("-flux", "Numerical flux: upwind (dissipative) or central", flux_names, 2, flux_names[0], &idx, NULL));
  v->flux = idx;
  idx = 0;
  PetscCall(SgOptionsEList("-field", "Field model: poisson (self-consistent electrostatic E), none (free streaming) or maxwell (E and B from Maxwell's equations with the plasma current)", field_names, 3, field_names[0], &idx, NULL));
  v->field = idx;
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    PetscBool cset;
    PetscInt  ne = 3, nb = 3, nk = 3;
    v->c_light = 1;
    PetscCall(SgOptionsReal("-c", "Speed of light (field: maxwell), in the deck's velocity unit (eps0 = 1, mu0 = 1/c^2; see docs/vlasov.md)", "velocity unit", v->c_light, &v->c_light, &cset, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCheck(v->c_light > 0 && PetscIsNormalReal(v->c_light), comm, PETSC_ERR_USER_INPUT, "vlasov_c = %g: the speed of light must be a positive number (in the deck's velocity unit, e.g. c: 1)", (double)v->c_light);
    idx = 0;
    PetscCall(SgOptionsEList("-maxwell_flux", "Face flux of Maxwell's equations: central (conserves field energy) or upwind (dissipative)", mflux_names, 2, mflux_names[0], &idx, NULL));
    v->mflux     = idx;
    v->clean_chi = 0;
    v->clean_gam = 0;
    PetscCall(SgOptionsReal("-maxwell_clean_E", "Divergence cleaning of Gauss's law (div E = rho): speed factor chi of the potential phi, which carries the error away at chi c (0: off; e.g. 1)", "c", v->clean_chi, &v->clean_chi, NULL, 0, 100));
    PetscCall(SgOptionsReal("-maxwell_clean_B", "Divergence cleaning of div B = 0: speed factor gamma of the potential psi, which carries the error away at gamma c (0: off; e.g. 1)", "c", v->clean_gam, &v->clean_gam, NULL, 0, 100));
    for (PetscInt i = 0; i < 3; i++) v->em_E0[i] = v->em_B0[i] = 0;
    v->em_k[0] = v->em_k[1] = v->em_k[2] = 0;
    PetscCall(SgOptionsRealArray("-maxwell_E0", "Initial electric plane wave E0 cos(k.x), added to the Poisson field of the initial charge: [Ex, Ey, Ez]", "m_e v0 omega_pe / e", v->em_E0, &ne, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCall(SgOptionsRealArray("-maxwell_B0", "Initial magnetic plane wave B0 cos(k.x): [Bx, By, Bz]", "m_e omega_pe / e", v->em_B0, &nb, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    PetscCall(SgOptionsRealArray("-maxwell_k", "Wavenumber of the initial plane wave, one per configuration dimension", "omega_pe / v0", v->em_k, &nk, NULL, PETSC_MIN_REAL, PETSC_MAX_REAL));
    idx = 0;
    PetscCall(SgOptionsEList("-fit_field", "Energy the end-of-run fit follows (field: maxwell): electric (1/2 int |E|^2) or magnetic (c^2/2 int |B|^2)", fitf_names, 2, fitf_names[0], &idx, NULL));
    v->fit_field = idx;
  }
  v->cfl   = 0.9;
  PetscCall(SgOptionsReal("-cfl", "CFL number: dt = cfl / max sum_d (2p+1)|a_d|/dx_d; the SSP-RK3 limit is 1.23 (p=1), 1.04 (p=2), 0.91 (p=3)", NULL, v->cfl, &v->cfl, NULL, PETSC_SMALL, PETSC_MAX_REAL));
  idx = 0;
  PetscCall(SgOptionsEList("-fit", "End-of-run fit of the field energy: landau (damping rate + frequency from peaks), growth (exponential growth rate)", fit_names, 3, fit_names[0], &idx, NULL));
  v->fit           = idx;
  v->fit_window[0] = 0; v->fit_window[1] = PETSC_MAX_REAL;
  n                = 2;
  PetscCall(SgOptionsRealArray("-fit_window", "Time window [t0, t1] of the fit", "1/omega_pe", v->fit_window, &n, &set, 0, PETSC_MAX_REAL));
  PetscCheck(!set || (n == 2 && v->fit_window[1] > v->fit_window[0]), comm, PETSC_ERR_USER_INPUT, "Option -vlasov_fit_window needs two increasing times [t0, t1]");
  idx = 0;
  PetscCall(SgOptionsEList("-exact", "Compare with an exact solution at the end: freestream (field none, 1x1v) or planewave (field maxwell, uncharged species: the vacuum wave moved by c t along x)", exact_names, 3, exact_names[0], &idx, NULL));
  v->exact = idx;
  idx = 0;
  PetscCall(SgOptionsEList("-collisions", "Collision operator: none, bgk (relaxation to the Maxwellian with the same discrete moments) or lbo (Dougherty / Lenard-Bernstein drag and diffusion); frequency NAME_nu per species", coll_names, 3, coll_names[0], &idx, NULL));
  v->collisions = idx;
  PetscCall(SgOptionsString("-species", "Comma-separated species names; each reads options -vlasov_NAME_*", species, species, sizeof species, NULL));
  {
    char *tok, *save;
    v->nspecies = 0;
    for (tok = strtok_r(species, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      while (*tok == ' ') tok++;
      PetscCheck(v->nspecies < SG_VLASOV_MAX_SPECIES, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_species: at most %d species", SG_VLASOV_MAX_SPECIES);
      PetscCall(PetscStrncpy(v->sp[v->nspecies].name, tok, sizeof v->sp[0].name));
      v->nspecies++;
    }
    PetscCheck(v->nspecies > 0, comm, PETSC_ERR_USER_INPUT, "Option -vlasov_species is empty: name at least one species, e.g. species: elc");
  }
  for (PetscInt s = 0; s < v->nspecies; s++) PetscCall(SpeciesOptions(PetscOptionsObject, v, &v->sp[s]));
  PetscOptionsHeadEnd();

  /* choices that need the whole picture */
  PetscCall(SgVlasovChooseSplit(comm, v));
  PetscCheck(v->cfl <= CflLimit(v->order), comm, PETSC_ERR_USER_INPUT,
             "vlasov_cfl = %g is above the SSP-RK3 stability limit %.3f of order-%" PetscInt_FMT " DG (Cockburn & Shu 2001: |a| dt/dx <= %.3f, our cfl includes the factor 2p+1 = %" PetscInt_FMT "); use cfl <= %.2f",
             (double)v->cfl, (double)CflLimit(v->order), v->order, (double)(CflLimit(v->order) / (2 * v->order + 1)), 2 * v->order + 1, (double)(PetscFloorReal(100 * CflLimit(v->order)) / 100));
  v->kern = NULL;
  for (const SgVlasovKernels *const *k = sg_vlasov_kernel_list; *k; k++)
    if ((*k)->cdim == v->cdim && (*k)->vdim == v->vdim && (*k)->family == v->family && (*k)->p == v->order) v->kern = *k;
  if (!v->kern) {
    char avail[1024] = "";
    for (const SgVlasovKernels *const *k = sg_vlasov_kernel_list; *k; k++)
      if ((*k)->cdim == v->cdim && (*k)->vdim == v->vdim) {
        char one[64];
        PetscCall(PetscSNPrintf(one, sizeof one, " %s p=%d", family_names[(*k)->family], (*k)->p));
        PetscCall(PetscStrlcat(avail, one, sizeof avail));
      }
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "No generated kernels for %" PetscInt_FMT "x%" PetscInt_FMT "v %s p=%" PetscInt_FMT "; available for this phase space:%s (add the case to physics/vlasov/gen/gen_kernels.py and run make kernels)", v->cdim, v->vdim,
            family_names[v->family], v->order, avail[0] ? avail : " none");
  }
  v->np  = v->kern->np;
  v->npx = v->kern->npx;
  {
    PetscReal unknowns = (PetscReal)v->np, vectors = 0;
    for (PetscInt d = 0; d < v->pdim; d++) unknowns *= (PetscReal)v->cells[d];
    /* per species: f, two Runge-Kutta stages, the right-hand side and a ghosted copy; a colliding
       species also holds f_M (vlasov_collisions.c: the Maxwellian or LBO's set-up scratch) */
    for (PetscInt s = 0; s < v->nspecies; s++) vectors += v->collisions && v->sp[s].nu > 0 ? 6 : 5;
    PetscCall(SgCheckCount(comm, "-vlasov_cells", "phase-space unknowns per species", unknowns, vectors * sizeof(PetscScalar)));
  }
  if (v->cdim == 3) { /* 3x: no 3-D Poisson solver, BGK projection or dispersion fits yet (LBO: any cdim) */
    PetscCheck(v->field != SG_VLASOV_FIELD_POISSON, comm, PETSC_ERR_USER_INPUT, "vlasov_cdim 3 has no Poisson solver: use field: maxwell (or none)");
    PetscCheck(v->collisions != 1 && v->fit == 0 && v->exact == 0, comm, PETSC_ERR_USER_INPUT, "vlasov_cdim 3 runs without BGK collisions, fit and exact (set collisions: none or lbo, fit: none, exact: none)");
    for (PetscInt s = 0; s < v->nspecies && v->field == SG_VLASOV_FIELD_MAXWELL; s++) /* field none: a perturbation needs no field */
      PetscCheck(v->sp[s].pert == 0, comm, PETSC_ERR_USER_INPUT, "vlasov_cdim 3 starts from E = 0 (no Poisson solve of the initial charge): species %s needs perturbation: 0 (seed the run with maxwell_E0/maxwell_B0)", v->sp[s].name);
  }
  PetscCheck(v->exact != 1 || (v->field == 1 && v->cdim == 1 && v->vdim == 1 && v->nspecies == 1), comm, PETSC_ERR_USER_INPUT, "vlasov_exact freestream needs field: none, a 1x1v phase space and one species");
  PetscCheck(v->fit == 0 || v->field != SG_VLASOV_FIELD_NONE, comm, PETSC_ERR_USER_INPUT, "vlasov_fit needs a self-consistent field (field: poisson or maxwell)");
  v->emk = NULL;
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    for (const SgVlasovEMKernels *const *k = sg_vlasov_em_kernel_list; *k; k++)
      if ((*k)->cdim == v->cdim && (*k)->vdim == v->vdim && (*k)->family == v->family && (*k)->p == v->order) v->emk = *k;
    if (!v->emk) {
      char avail[1024] = "";
      for (const SgVlasovEMKernels *const *k = sg_vlasov_em_kernel_list; *k; k++) {
        char one[64];
        PetscCall(PetscSNPrintf(one, sizeof one, " %dx%dv %s p=%d", (*k)->cdim, (*k)->vdim, family_names[(*k)->family], (*k)->p));
        PetscCall(PetscStrlcat(avail, one, sizeof avail));
      }
      SETERRQ(comm, PETSC_ERR_USER_INPUT, "No generated Vlasov-Maxwell kernels for %" PetscInt_FMT "x%" PetscInt_FMT "v %s p=%" PetscInt_FMT " (field: maxwell); available:%s (add the case to EM_CONFIGS in physics/vlasov/gen/gen_kernels.py and run make kernels)", v->cdim, v->vdim, family_names[v->family], v->order, avail);
    }
    PetscCheck(v->np <= SG_VLASOV_LANES_MAXNP && v->npx <= SG_VLASOV_LANES_MAXNPX, comm, PETSC_ERR_SUP, "Vlasov-Maxwell kernels with %" PetscInt_FMT " phase / %" PetscInt_FMT " configuration DOF per cell exceed the lane buffers of vlasov_lanes.c (%d / %d): raise SG_VLASOV_LANES_MAXNP(X) in vlasov.h", v->np, v->npx, SG_VLASOV_LANES_MAXNP, SG_VLASOV_LANES_MAXNPX);
  }
  PetscCheck(v->exact != 2 || v->field == SG_VLASOV_FIELD_MAXWELL, comm, PETSC_ERR_USER_INPUT, "vlasov_exact planewave needs field: maxwell");
  if (v->exact == 2) {
    PetscBool uncharged = PETSC_TRUE;
    for (PetscInt s = 0; s < v->nspecies; s++)
      if (v->sp[s].charge != 0) uncharged = PETSC_FALSE;
    PetscCheck(uncharged && v->cdim == 1, comm, PETSC_ERR_USER_INPUT, "vlasov_exact planewave is the vacuum solution: it needs cdim 1 and uncharged species (charge: 0)");
    PetscCheck(PetscAbsReal(v->em_B0[2] - v->em_E0[1] / v->c_light) <= 1e-12 * (PetscAbsReal(v->em_E0[1]) + 1e-300) + 1e-300 && PetscAbsReal(v->em_B0[1] + v->em_E0[2] / v->c_light) <= 1e-12 * (PetscAbsReal(v->em_E0[2]) + 1e-300) + 1e-300 && v->em_E0[0] == 0 && v->em_B0[0] == 0,
               comm, PETSC_ERR_USER_INPUT, "vlasov_exact planewave compares with a wave moving along +x: it needs maxwell_E0 = [0, Ey, Ez] and maxwell_B0 = [0, -Ez/c, Ey/c]");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid must hold and resolve every Maxwellian component: the velocity box reaches at least
   5 thermal speeds beyond each drift (f/f_max < 4e-6 at the wall, so zero flux is harmless), and a
   velocity cell is no wider than 2 thermal speeds. */
static PetscErrorCode CheckVelocityGrid(MPI_Comm comm, SgVlasov *v, SgVlasovSpecies *s)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < s->ncomp; c++)
    for (PetscInt j = 0; j < v->vdim; j++) {
      PetscInt  d  = v->cdim + j;
      PetscReal vt = s->comp[c].vt, u = s->comp[c].drift[j];
      if (s->comp[c].tophat) { /* projected exactly (vlasov_init.c) at any width: it only has to lie inside the box */
        PetscReal a = s->comp[c].width[j];
        PetscCheck(s->lower[d] <= u - a && s->upper[d] >= u + a, comm, PETSC_ERR_USER_INPUT, "Species %s: velocity box [%g, %g] in v%" PetscInt_FMT " does not hold its top-hat [%g, %g] (drift %g, tophat_width %g); widen vlasov_lower/upper or narrow the top-hat", s->name,
                   (double)s->lower[d], (double)s->upper[d], j, (double)(u - a), (double)(u + a), (double)u, (double)a);
        continue;
      }
      PetscCheck(s->lower[d] <= u - 5 * vt && s->upper[d] >= u + 5 * vt, comm, PETSC_ERR_USER_INPUT,
                 "Species %s: velocity box [%g, %g] in v%" PetscInt_FMT " does not hold its Maxwellian (drift %g, vt %g): the box must reach 5 vt beyond the drift, i.e. [%g, %g]; widen vlasov_lower/upper (or %s_vlower/vupper)",
                 s->name, (double)s->lower[d], (double)s->upper[d], j, (double)u, (double)vt, (double)(u - 5 * vt), (double)(u + 5 * vt), s->name);
      PetscReal dv = (s->upper[d] - s->lower[d]) / s->N[d];
      PetscCheck(dv <= 2 * vt, comm, PETSC_ERR_USER_INPUT, "Species %s: velocity cells of width %g in v%" PetscInt_FMT " cannot resolve a Maxwellian of vt = %g (need width <= 2 vt): raise the velocity cell count to at least %" PetscInt_FMT, s->name, (double)dv, j, (double)vt,
                 (PetscInt)PetscCeilReal((s->upper[d] - s->lower[d]) / (2 * vt)));
    }
  /* the perturbation must be periodic on the box */
  for (PetscInt d = 0; d < v->cdim; d++) {
    PetscReal L = s->upper[d] - s->lower[d], nmode = s->k[d] * L / (2 * PETSC_PI);
    PetscCheck(PetscAbsReal(nmode - round(nmode)) < 1e-6, comm, PETSC_ERR_USER_INPUT, "Species %s: k[%" PetscInt_FMT "] = %g is not a multiple of 2 pi / L = %g (box length %g): the perturbation would not be periodic; set the box length to 2 pi n / k", s->name, d, (double)s->k[d], (double)(2 * PETSC_PI / L), (double)L);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUp_Vlasov(SgSolver solver)
{
  SgVlasov *v    = (SgVlasov *)solver->data;
  MPI_Comm  comm = PetscObjectComm((PetscObject)solver);

  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("VlasovVolume", SG_SOLVER_CLASSID, &v->ev_vol));
  PetscCall(PetscLogEventRegister("VlasovSurface", SG_SOLVER_CLASSID, &v->ev_surf));
  PetscCall(PetscLogEventRegister("VlasovField", SG_SOLVER_CLASSID, &v->ev_field));
  PetscCall(PetscLogEventRegister("VlasovMoments", SG_SOLVER_CLASSID, &v->ev_moments));
  for (PetscInt s = 0; s < v->nspecies; s++) PetscCall(CheckVelocityGrid(comm, v, &v->sp[s]));
  for (PetscInt s = 0; s < v->nspecies; s++)
    PetscCheck(v->fit == 0 || v->sp[s].init != SG_VLASOV_INIT_TOPHAT, comm, PETSC_ERR_USER_INPUT, "vlasov_fit compares with the dispersion root of Maxwellians, and species %s is a top-hat (init tophat): set fit: none", v->sp[s].name);
  if (v->fit != 0) { /* the fit compares with the dispersion root at the perturbation's k: find it now, not after the run */
    PetscReal k2 = 0;
    for (PetscInt d = 0; d < v->cdim; d++) k2 += PetscSqr(v->sp[0].k[d]);
    if (v->field == SG_VLASOV_FIELD_MAXWELL && v->fit_field == 1) k2 = 1; /* the magnetic fit follows the deck's maxwell_k mode */
    PetscCheck(k2 > 0 && (v->sp[0].pert != 0 || (v->field == SG_VLASOV_FIELD_MAXWELL && v->fit_field == 1)), comm, PETSC_ERR_USER_INPUT, "vlasov_fit %s needs a perturbed mode: set vlasov_%s_k (e.g. k: [0.5]) and vlasov_%s_perturbation (e.g. 1e-4), or fit: none", fit_names[v->fit], v->sp[0].name, v->sp[0].name);
    if (v->field == SG_VLASOV_FIELD_MAXWELL && v->fit_field == 1) { /* transverse (Weibel) root: magnetic energy */
      v->fit_root[0] = 0;
      PetscCall(SgVlasovWeibelRoot(v, v->em_k[0], &v->fit_root[1]));
    } else PetscCall(SgVlasovDispersionRoot(v, v->sp[0].k, &v->fit_root[0], &v->fit_root[1]));
    v->fit_root0[0] = v->fit_root[0];
    v->fit_root0[1] = v->fit_root[1];
    v->fit_coll     = PETSC_FALSE;
    for (PetscInt s = 0; s < v->nspecies; s++)
      if (v->sp[s].nu > 0 && !(v->field == SG_VLASOV_FIELD_MAXWELL && v->fit_field == 1)) v->fit_coll = PETSC_TRUE;
    if (v->fit_coll) PetscCall(SgVlasovCollisionalRoot(v, &v->fit_root[0], &v->fit_root[1])); /* collisions change the root */
  }
  PetscCall(SgVlasovSetUpGrid(solver, v));
  PetscCall(SgVlasovFieldSetUp(v));
  for (PetscInt s = 0; s < v->nspecies; s++) PetscCall(SgVlasovProject(v, &v->sp[s], v->sp[s].f));
  if (v->field == SG_VLASOV_FIELD_MAXWELL) {
    Vec f[SG_VLASOV_MAX_SPECIES];
    for (PetscInt s = 0; s < v->nspecies; s++) f[s] = v->sp[s].f;
    PetscCall(SgVlasovMaxwellSetUp(solver, v));
    PetscCall(SgVlasovComputeField(solver, f)); /* Poisson solve of the initial charge: E at t = 0 */
    PetscCall(SgVlasovMaxwellInit(solver));
  }
  PetscCall(SgVlasovCollisionsSetUp(solver, v));
  PetscCall(SgVlasovLayoutReport(solver, v));
  PetscCall(SgVlasovDeclareDiagnostics(solver));
  v->t_now = 0;
  PetscCall(SgVlasovDiagnose(solver, 0, v->diag0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode View_Vlasov(SgSolver solver, PetscViewer viewer)
{
  SgVlasov *v = (SgVlasov *)solver->data;
  PetscBool iascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "Vlasov DG: %" PetscInt_FMT "x%" PetscInt_FMT "v, %s p=%" PetscInt_FMT " (%" PetscInt_FMT " basis functions), %s flux, field %s, cfl %g\n", v->cdim, v->vdim, family_names[v->family], v->order, v->np, flux_names[v->flux],
                                   field_names[v->field], (double)v->cfl));
  if (v->field == SG_VLASOV_FIELD_MAXWELL) PetscCall(PetscViewerASCIIPrintf(viewer, "  Maxwell: c = %g, %s flux, divergence cleaning chi = %g, gamma = %g\n", (double)v->c_light, mflux_names[v->mflux], (double)v->clean_chi, (double)v->clean_gam));
  for (PetscInt s = 0; s < v->nspecies; s++) {
    SgVlasovSpecies *sp = &v->sp[s];
    PetscCall(PetscViewerASCIIPrintf(viewer, "  species %s: q %g m %g init %s, cells", sp->name, (double)sp->charge, (double)sp->mass, init_names[sp->init]));
    for (PetscInt d = 0; d < v->pdim; d++) PetscCall(PetscViewerASCIIPrintf(viewer, " %" PetscInt_FMT, sp->N[d]));
    if (sp->da) {
      PetscInt px, py, pz;
      char     list[64];
      PetscCall(DMDAGetInfo(sp->da, NULL, NULL, NULL, NULL, &px, &py, &pz, NULL, NULL, NULL, NULL, NULL, NULL));
      PetscCall(SgVlasovSplitNames(v, list, sizeof list));
      PetscCall(PetscViewerASCIIPrintf(viewer, ", split dims [%s], ranks per axis %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT, list, px, py, pz));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy_Vlasov(SgSolver solver)
{
  SgVlasov *v = (SgVlasov *)solver->data;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < v->nspecies; s++) {
    SgVlasovSpecies *sp = &v->sp[s];
    PetscCall(VecDestroy(&sp->f)); PetscCall(VecDestroy(&sp->f1)); PetscCall(VecDestroy(&sp->f2));
    PetscCall(VecDestroy(&sp->rhs)); PetscCall(VecDestroy(&sp->floc));
    PetscCall(PetscFree2(sp->acc, sp->tau));
    PetscCall(DMDestroy(&sp->da));
    PetscCall(DMDestroy(&v->daf[s]));
  }
  PetscCall(DMDestroy(&v->dac));
  PetscCall(SgVlasovFieldDestroy(v));
  PetscCall(SgVlasovMaxwellDestroy(v));
  PetscCall(SgVlasovCollisionsDestroy(v));
  PetscCall(PetscFree(v->kofm));
  PetscCall(PetscFree3(v->rho, v->E, v->work));
  PetscCall(PetscFree2(v->hist_t, v->hist_W));
  PetscCall(PetscFree(solver->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSolverCreate_Vlasov(SgSolver solver)
{
  SgVlasov *v;

  PetscFunctionBegin;
  PetscCall(PetscNew(&v));
  solver->data                = v;
  solver->ops->setfromoptions = SetFromOptions_Vlasov;
  solver->ops->setup          = SetUp_Vlasov;
  solver->ops->timestep       = SgVlasovTimeStep;
  solver->ops->step           = SgVlasovStep;
  solver->ops->diagnose       = SgVlasovDiagnose;
  solver->ops->writefields    = SgVlasovWriteFields;
  solver->ops->checkpoint     = SgVlasovCheckpoint;
  solver->ops->report         = SgVlasovReport;
  solver->ops->view           = View_Vlasov;
  solver->ops->destroy        = Destroy_Vlasov;
  PetscFunctionReturn(PETSC_SUCCESS);
}
