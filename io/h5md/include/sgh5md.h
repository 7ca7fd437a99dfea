/* SgH5MD: an H5MD 1.1 trajectory writer (de Buyl, Colberg, Hoefling, Comput. Phys. Commun. 185,
   1546 (2014); https://nongnu.org/h5md/h5md.html), parallel HDF5 (MPI-IO, collective writes).

   Layout written:
     /h5md                       attribute version = [1, 1]; groups author, creator (name, version)
     /particles/all/box          attributes dimension = 3, boundary = ["periodic" x3]
     /particles/all/box/edges    time-dependent: step[F], time[F], value[F][3][3] (cell vectors as rows)
     /particles/all/position     time-dependent: step[F], time[F], value[F][N][3]   (wrapped positions)
     /particles/all/velocity     ditto
     /particles/all/force        ditto
     /particles/all/image        ditto, int32 (periodic image counters: unwrapped = x + image . box)
     /particles/all/species      [N] int32, atom type (0-based); /particles/all/mass [N]
     /parameters/species_names   attribute: the type names in order
     /observables/<name>         time-dependent: step[F], time[F], value[F] (scalars) or value[F][n]
                                 (md writes potential_energy (total, energy units) and virial
                                 [F][9], W_ab row-major, energy units, LAMMPS's sign)
   Rows are in global atom-id order (row k = atom id k + 1).  Each rank writes the contiguous id
   block [off, off + cnt) it holds.  All calls are collective.

   The file goes through the write path (sgwrite.h, kind SG_FILE_TRAJECTORY, the root attribute
   surge_file): Create checks it (not an input of the run, not a file of another kind unless
   -overwrite) and writes FILE.tmp -- with append, a copy of the earlier trajectory -- and Commit
   renames FILE.tmp over FILE (md calls it at every checkpoint and at the end of the run, so FILE
   always ends at a checkpoint or is the earlier run's, whole). Destroy without Commit removes the
   temporary (an error ended the run). */
#pragma once
#include <petscsys.h>

typedef struct _n_SgH5MD *SgH5MD;

/* append: continue an existing trajectory of surge's (restart); otherwise a new one. */
PETSC_EXTERN PetscErrorCode SgH5MDCreate(MPI_Comm, const char file[], PetscInt natoms, const char length_unit[], const char time_unit[], PetscBool append, SgH5MD *);
PETSC_EXTERN PetscErrorCode SgH5MDWriteSpecies(SgH5MD, PetscInt off, PetscInt cnt, const PetscInt species[], PetscInt ntypes, const char (*names)[16], const PetscReal mass_of_type[]);
PETSC_EXTERN PetscErrorCode SgH5MDBeginFrame(SgH5MD, PetscInt step, PetscReal time, const PetscReal box[9]);
/* name: position, velocity, force (doubles) or image (stored as int32); data[cnt][3] */
PETSC_EXTERN PetscErrorCode SgH5MDWriteFrameData(SgH5MD, const char name[], PetscInt off, PetscInt cnt, const PetscReal data[]);
/* An observable of the current frame (after BeginFrame; rank 0's values are written): n = 1 gives
   value[F], n > 1 value[F][n]. unit may be NULL. */
PETSC_EXTERN PetscErrorCode SgH5MDWriteObservable(SgH5MD, const char name[], PetscInt n, const PetscReal value[], const char unit[]);
PETSC_EXTERN PetscErrorCode SgH5MDEndFrame(SgH5MD);
/* Drop frames with step > laststep (a restarted run rewrites its own future). */
PETSC_EXTERN PetscErrorCode SgH5MDTruncate(SgH5MD, PetscInt laststep);
/* Close FILE.tmp and rename it over FILE (collective); reopen: continue writing (a checkpoint). */
PETSC_EXTERN PetscErrorCode SgH5MDCommit(SgH5MD, PetscBool reopen);
/* Or commit it with the run's set (sgwrite.h SgWriteMemberRegister): at each of the run's commits
   FILE.tmp is closed, renamed in the set's one commit (all or none) and continued from the committed
   file; SgH5MDDestroy leaves the set. Collective. */
PETSC_EXTERN PetscErrorCode SgH5MDJoinRunSet(SgH5MD);
/* Append to the trajectory `older` (a file this run committed earlier) the frames `committed` has beyond
   it, so it holds what `committed` holds (h5md_catchup.c; one process, serial HDF5). 0 or -1: an
   element either file lacks, or an HDF5 failure (the caller then copies the whole file). */
PETSC_EXTERN int SgH5MDCatchUp(const char committed[], const char older[]);
PETSC_EXTERN PetscErrorCode SgH5MDDestroy(SgH5MD *);

/* Reading a whole trajectory back (one process): positions, boxes, steps and species always; with
   labels (to turn an MD run into training samples) also force and the potential_energy and virial
   observables, which must then exist and describe the same steps. Arrays are in file order:
   coord/force [F][N][3], box/virial [F][9], energy [F], step [F]; species [N]; names[ntypes]; units
   from the H5MD "unit" attributes (energy_unit only with labels). Without labels force, energy and
   virial are NULL. */
typedef struct {
  PetscInt   N, F, ntypes;
  PetscInt  *species;
  char     (*names)[16];
  PetscReal *coord, *force, *box, *energy, *virial;
  long      *step;
  char       length_unit[64], energy_unit[64];
} SgH5MDFrames;
PETSC_EXTERN PetscErrorCode SgH5MDReadFrames(const char file[], PetscBool labels, SgH5MDFrames *);
PETSC_EXTERN PetscErrorCode SgH5MDFramesDestroy(SgH5MDFrames *);
