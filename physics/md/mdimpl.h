/* physics/md: classical molecular dynamics (the "md" SgSolver type). Private definitions.

   What this folder holds (one concept per file):
     md_units.c      LAMMPS "lj" and "metal" unit systems (conversion constants)
     md_box.c        periodic orthorhombic/triclinic cell, fractional coordinates, wrapping
     md_rng.c        counter-based random numbers (velocities, Langevin): depend on (seed, atom id,
                     step), never on the rank count or the order atoms are stored in
     md_system.c     the global starting configuration: lattice builders (fcc, bcc, diamond),
                     element/mass tables, velocities from a temperature
     md_readers.c    extended XYZ and LAMMPS data file readers
     md_domain.c     MPI spatial decomposition: processor grid, migration, ghost atoms,
                     forward (positions) and reverse (forces) communication
     md_neigh.c      cell (bin) lists and Verlet neighbour lists with skin, automatic rebuild
     md_lj.c         the "lj" force provider (cut and shifted, Lorentz-Berthelot mixing)
     md_forces.c     the force-provider registry behind the md.forces slot
     md_integrate.c  velocity Verlet (NVE), Langevin (BAOAB) and Nose-Hoover chain (NVT)
     md_thermo.c     temperature, energies, pressure
     md_io.c         H5MD trajectory and checkpoint/restart glue
     md_solver.c     the SgSolver glue: options, setup, step, diagnostics, report
   It depends on src/ (core) and io/ only; other force fields meet it through the md.forces slot.

   Conventions.  Positions are Cartesian, row vectors; the cell is H with rows a, b, c (LAMMPS
   restricted triclinic is not required: any right-handed a, b, c works) and origin lo, so
   x = lo + s0 a + s1 b + s2 c with fractional s in [0,1)^3 for wrapped atoms.  Global atom ids
   run 1..N.  Units follow LAMMPS exactly (md_units.c).  The virial is W_ab = sum over pairs of
   (x_i - x_j)_a f_ij,b (f_ij: force on i from j), LAMMPS's sign: repulsion gives positive
   pressure P = (dof kB T + tr W) / (3 V). */
#pragma once
#include <petscsys.h>
#include "sgsolver.h"
#include "sgslot.h" /* and the md.forces kind, sgforces.h */

/* ---------------------------------------------------------------- units (md_units.c) */
typedef enum { SG_MD_UNITS_LJ, SG_MD_UNITS_METAL } SgMDUnitStyle;
typedef struct {
  SgMDUnitStyle style;
  const char   *name;
  PetscReal     boltz;  /* kB in energy/temperature */
  PetscReal     mvv2e;  /* mass*velocity^2 -> energy */
  PetscReal     ftm2v;  /* force/mass -> velocity/time */
  PetscReal     nktv2p; /* energy/volume -> pressure */
  PetscReal     dt;     /* LAMMPS default time step */
  const char   *u_length, *u_energy, *u_time, *u_mass, *u_temperature, *u_pressure;
} SgMDUnits;
PETSC_INTERN PetscErrorCode SgMDUnitsSet(const char name[], SgMDUnits *);

/* ---------------------------------------------------------------- box (md_box.c) */
typedef struct {
  PetscReal lo[3];
  PetscReal h[9];     /* rows: a, b, c */
  PetscReal rec[9];   /* rows: reciprocal vectors b_d with a_i . b_d = delta_id */
  PetscReal thick[3]; /* distance between opposite faces: 1/|b_d| */
  PetscReal volume;
  PetscBool triclinic;
} SgMDBox;
PETSC_INTERN PetscErrorCode SgMDBoxSet(SgMDBox *, const PetscReal lo[3], const PetscReal h[9]);
static inline void SgMDBoxFrac(const SgMDBox *b, const PetscReal x[3], PetscReal s[3])
{
  PetscReal d0 = x[0] - b->lo[0], d1 = x[1] - b->lo[1], d2 = x[2] - b->lo[2];
  s[0] = b->rec[0] * d0 + b->rec[1] * d1 + b->rec[2] * d2;
  s[1] = b->rec[3] * d0 + b->rec[4] * d1 + b->rec[5] * d2;
  s[2] = b->rec[6] * d0 + b->rec[7] * d1 + b->rec[8] * d2;
}
/* Wrap one atom into the cell, updating its image counters. */
PETSC_INTERN void SgMDBoxWrap(const SgMDBox *, PetscReal x[3], PetscInt img[3]);

/* ---------------------------------------------------------------- rng (md_rng.c) */
PETSC_INTERN uint64_t  SgMDHash4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);
PETSC_INTERN PetscReal SgMDUniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);  /* (0,1) */
PETSC_INTERN PetscReal SgMDGaussian(uint64_t seed, uint64_t a, uint64_t b, uint64_t c); /* N(0,1) */

/* ---------------------------------------------------------------- global system (md_system.c) */
#define SG_MD_MAX_TYPES 16
typedef struct {
  PetscInt   n;          /* atoms */
  PetscReal *x;          /* [3n], ids are 1 + index */
  PetscReal *v;          /* [3n] or NULL */
  PetscInt  *type;       /* [n], 0-based */
  PetscInt   ntypes;
  char       tname[SG_MD_MAX_TYPES][16];
  PetscReal  mass[SG_MD_MAX_TYPES];
  PetscBool  hasmass[SG_MD_MAX_TYPES];
  SgMDBox    box;
} SgMDSystem;
PETSC_INTERN PetscErrorCode SgMDSystemDestroy(SgMDSystem *);
PETSC_INTERN PetscErrorCode SgMDSystemLattice(const char style[], PetscReal a, const PetscInt cells[3], SgMDSystem *);
/* type index for a name, adding it if new (error past SG_MD_MAX_TYPES) */
PETSC_INTERN PetscErrorCode SgMDSystemTypeIndex(SgMDSystem *, const char name[], PetscInt *);
/* Standard atomic mass (amu) of an element symbol; found = false if unknown. */
PETSC_INTERN PetscErrorCode SgMDElementMass(const char sym[], PetscReal *mass, PetscBool *found);
/* Velocities from temperature T: v_i,k = sqrt(kB T / m_i) g(seed, id, k), COM momentum removed,
   rescaled to exactly T with dof = 3N - 3.  Uses only global data: independent of rank count. */
PETSC_INTERN PetscErrorCode SgMDSystemVelocities(SgMDSystem *, const SgMDUnits *, PetscReal T, uint64_t seed);
PETSC_INTERN PetscErrorCode SgMDReadXYZ(MPI_Comm, const char file[], SgMDSystem *);
PETSC_INTERN PetscErrorCode SgMDReadLammpsData(MPI_Comm, const char file[], SgMDSystem *);
PETSC_INTERN PetscErrorCode SgMDSystemBcast(MPI_Comm, SgMDSystem *);

/* ---------------------------------------------------------------- local atoms + domain (md_domain.c) */
typedef struct {
  PetscInt  sendproc, recvproc; /* ranks */
  PetscInt  nsend, *sendlist, maxsend;
  PetscReal shift[3];
  PetscBool doshift;
  PetscInt  nrecv, firstrecv;
} SgMDSwap;

typedef struct {
  MPI_Comm  comm;
  PetscMPIInt rank, size;
  PetscInt  pgrid[3], coord[3], nbr[3][2]; /* neighbour ranks, [d][0]=left [d][1]=right */
  PetscReal sublo[3], subhi[3];            /* fractional sub-domain */
  SgMDBox   box;
  PetscReal cutghost;                      /* provider cutoff + skin */
  /* atoms: owned [0,nlocal), ghosts [nlocal, nlocal+nghost) */
  PetscInt   nlocal, nghost, nmax;
  PetscReal *x, *v, *f, *xbuild;
  PetscInt  *type, *id, *img;
  SgMDSwap   swap[6];
  PetscReal *buf; PetscInt nbuf;          /* communication buffers */
  PetscReal *rbuf; PetscInt nrbuf;
} SgMDDomain;
PETSC_INTERN PetscErrorCode SgMDDomainCreate(MPI_Comm, const SgMDBox *, PetscReal cutghost, SgMDDomain **);
PETSC_INTERN PetscErrorCode SgMDDomainDestroy(SgMDDomain **);
/* Keep the atoms of the global system that fall in this sub-domain. */
PETSC_INTERN PetscErrorCode SgMDDomainDistribute(SgMDDomain *, const SgMDSystem *);
/* Wrap owned atoms into the cell and send those that left the sub-domain to their new owner. */
PETSC_INTERN PetscErrorCode SgMDDomainMigrate(SgMDDomain *);
/* Build the ghost-atom exchange pattern and receive ghosts (called after migration). */
PETSC_INTERN PetscErrorCode SgMDDomainBorders(SgMDDomain *);
/* Ghost positions <- owners' positions (+ periodic shifts), same pattern as the last Borders. */
PETSC_INTERN PetscErrorCode SgMDDomainForward(SgMDDomain *);
/* Owned forces += forces accumulated on their ghost images (Newton's third law providers). */
PETSC_INTERN PetscErrorCode SgMDDomainReverse(SgMDDomain *);
PETSC_INTERN PetscErrorCode SgMDDomainReverseArray(SgMDDomain *, PetscReal *f);
PETSC_INTERN PetscErrorCode SgMDDomainGrow(SgMDDomain *, PetscInt nneed);
PETSC_INTERN PetscErrorCode SgMDDomainDilate(SgMDDomain *, PetscReal mu);
/* Gather per-atom arrays into id-ordered blocks: rank r gets ids [off_r, off_r + cnt_r) with
   equal blocks; used by H5MD and checkpoints.  vals: nper values per owned atom. out[cnt*nper]. */
PETSC_INTERN PetscErrorCode SgMDDomainToIdBlocks(SgMDDomain *, PetscInt N, PetscInt nper, const PetscReal *vals, PetscInt *off, PetscInt *cnt, PetscReal **out);
/* Inverse: the values for id-block [off, off+cnt) on each rank scattered to the owners of the ids. */
PETSC_INTERN PetscErrorCode SgMDDomainFromIdBlocks(SgMDDomain *, PetscInt N, PetscInt nper, const PetscReal *in, PetscReal *vals);

/* ---------------------------------------------------------------- neighbour lists (md_neigh.c) */
typedef struct {
  PetscReal cutneigh, skin;
  PetscInt  every, delay; PetscBool check;
  PetscBool half;       /* half list (each pair once, Newton) or full list */
  /* bins (global fractional grid) */
  PetscInt  nbin[3], blo[3], bext[3], nstencil, *stencil;
  PetscInt *binhead, *bincount, *binatoms, nbinalloc, binatomalloc;
  /* the list: CSR over owned atoms */
  PetscInt *first, *num, *list, nlistalloc, nfirstalloc;
  PetscReal *pack; PetscInt npackalloc; /* x, y, z, id of binned atoms, in bin order */
  PetscInt  nbuilds, since;  /* builds so far, steps since last build */
  PetscInt  ndangerous;      /* rebuilds where an atom had moved more than skin/2 with check off */
  PetscReal dilation;        /* cell scale factor since the last build (barostat), 1 without */
  PetscReal hbuild[9];       /* the cell at the last build */
} SgMDNeigh;
PETSC_INTERN PetscErrorCode SgMDNeighSetUp(SgMDNeigh *, const SgMDDomain *);
PETSC_INTERN PetscErrorCode SgMDNeighBuild(SgMDNeigh *, SgMDDomain *);
PETSC_INTERN PetscErrorCode SgMDNeighDestroy(SgMDNeigh *);
PETSC_INTERN PetscErrorCode SgMDNeighSortAtoms(SgMDNeigh *, SgMDDomain *);
/* Does any atom (on any rank) need a rebuild?  Collective. */
PETSC_INTERN PetscErrorCode SgMDNeighDecide(SgMDNeigh *, SgMDDomain *, PetscBool *rebuild);

/* ---------------------------------------------------------------- LJ (md_lj.c) */
PETSC_EXTERN PetscErrorCode SgForcesProviderCreate_LJ(const SgForcesProviderInfo *, SgForcesProvider *);

/* ---------------------------------------------------------------- the MD object (md_solver.c) */
typedef enum { SG_MD_NVE, SG_MD_LANGEVIN, SG_MD_NHC } SgMDEnsemble;
typedef struct {
  SgMDUnits   units;
  SgMDSystem  sys;        /* global start configuration (freed after setup) */
  SgMDDomain *dom;
  SgMDNeigh   neigh;
  SgForcesProvider prov;   /* the solver's provider (md_forces), the reference */
  SgForcesProvider sprov;  /* the surrogate the slot may swap in (md_surrogate), if any */
  PetscBool   has_sur;
  SgSlot      slot;
  char        provname[64], sprovname[64];
  PetscReal   cutoff;       /* max of both providers' ranges: ghosts and lists serve either */
  /* what served the last force evaluation of the trajectory (SgSlotGetLastCall) */
  PetscBool   served_sur, flagged;
  PetscReal   uncertainty;
  /* retraining frames: solver-served flagged steps, gathered to rank 0 and appended */
  char        retrain_file[PETSC_MAX_PATH_LEN];
  PetscBool   restarting;   /* the run continues from a checkpoint (SgSolverRunInfo): files append */
  void       *retrain;      /* SgDataset on rank 0, created on first use */
  PetscBool   retrain_cont; /* a committed retrain_file of this run exists: the next frame continues it */
  PetscBool   retrain_joined; /* a member of the run's set (SgMDRetrainJoinRunSet) */
  PetscInt    nretrain;
  /* integrator */
  SgMDEnsemble ens;
  PetscReal   dt, Ttarget, damp;
  uint64_t    seed;
  PetscInt    nchain;
  PetscBool   baro;           /* Berendsen isotropic pressure control */
  PetscReal   Ptarget, pdamp, modulus;
  PetscReal   eta[10], peta[10], Qeta[10];  /* NHC positions, momenta, masses */
  PetscReal   min_dist;
  /* state */
  PetscInt    step;         /* steps taken */
  PetscInt    fstep;        /* step of the configuration being evaluated (step + 1 inside a step) */
  PetscInt    N;            /* global atoms */
  PetscReal   mass[SG_MD_MAX_TYPES];
  PetscInt    ntypes;
  char        tname[SG_MD_MAX_TYPES][16];
  PetscReal   pe, virial[9]; /* from the last force evaluation (global sums) */
  PetscBool   eflag;         /* the next force evaluation must produce energy and virial */
  PetscInt    energy_step;   /* step at which pe/virial are valid (-1: none) */
  PetscReal  *fscratch; PetscInt nfscratch;
  PetscReal   ebath;         /* energy exchanged with the Langevin bath (for a conserved quantity) */
  PetscReal   eswitch;       /* sum of the energy jumps at md.forces provider switches (outgoing -
                                incoming provider at the switch configuration; global): econserved adds it */
  PetscReal   hkick;         /* the half kick that follows the trajectory's force call (0 at set-up) */
  PetscInt    dof;
  /* output */
  PetscInt    thermo_every;
  PetscBool   norm;
  PetscInt    traj_every;
  char        traj_file[PETSC_MAX_PATH_LEN];
  PetscInt    devi_every;    /* model_devi.out (DeePMD-kit's format) every devi_every steps, 0: off */
  char        devi_file[PETSC_MAX_PATH_LEN];
  FILE       *devi_fp;       /* rank 0: devi_tf's stream (DEVI.tmp, committed at checkpoints and the end) */
  void       *devi_tf;       /* rank 0: the SgTextFile of the write path */
  const SgForcesProvider *devi_prov; /* the ensemble provider that gives it */
  PetscBool   traj_pos, traj_vel, traj_frc;
  void       *h5md;
  PetscInt    idiag[10];
  PetscInt    rdf_every, rdf_start, rdf_nbins, rdf_nsamples;
  PetscInt    rdf_types[2]; /* g_ab(r) of these two types; -1: all atoms */
  PetscReal  *rdf_hist;
  char        rdf_file[PETSC_MAX_PATH_LEN];
  PetscLogEvent ev_force, ev_neigh, ev_comm;
} SgMD;

PETSC_INTERN PetscErrorCode SgMDComputeForces(SgMD *);
PETSC_INTERN PetscErrorCode SgMDEnsureEnergy(SgMD *);
PETSC_INTERN PetscErrorCode SgMDModelDeviWrite(SgMD *);
PETSC_INTERN PetscErrorCode SgMDIntegrate(SgMD *, PetscReal dt);
PETSC_INTERN PetscErrorCode SgMDThermo(SgMD *, PetscReal *T, PetscReal *ke, PetscReal *pe, PetscReal *p, PetscReal *econs);
PETSC_INTERN PetscErrorCode SgMDNeighUpdate(SgMD *, PetscBool force);
PETSC_INTERN PetscErrorCode SgMDCheckOverlap(SgMD *);
PETSC_INTERN PetscReal      SgMDKineticLocal(SgMD *);
PETSC_INTERN PetscErrorCode SgMDKineticGlobal(SgMD *, PetscReal *);
PETSC_INTERN PetscErrorCode SgMDRDFSample(SgMD *);
/* md_retrain.c: append the current (solver-served, flagged) frame to md->retrain_file; collective. */
PETSC_INTERN PetscErrorCode SgMDRetrainFrame(SgMD *);
PETSC_INTERN PetscErrorCode SgMDRetrainClose(SgMD *);
PETSC_INTERN PetscErrorCode SgMDRetrainJoinRunSet(SgMD *);
PETSC_INTERN PetscErrorCode SgMDRDFResult(SgMD *, PetscReal g[]);
