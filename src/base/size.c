/* Sizes a deck asks for: checked before anything is allocated, so a grid or an atom count that
   cannot be held is one clear error naming the option and the memory it would need, instead of a
   signed overflow, a PETSc "too large for 32 bit indices" traceback, or a crash. */
#include <unistd.h>
#include "sgsys.h"

PetscErrorCode SgCheckCount(MPI_Comm comm, const char option[], const char items[], PetscReal count, PetscReal bytes_per_item)
{
  PetscMPIInt size;
  PetscReal   need, per_rank, phys = 0;
  long        pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  /* counts are products computed in floating point by the caller: exact for anything that fits,
     and an overflowing product shows up as a huge (or infinite) value rather than wrapping */
  need     = count * bytes_per_item;
  per_rank = need / size;
  if (pages > 0 && page > 0) phys = (PetscReal)pages * (PetscReal)page;
  PetscCheck(!PetscIsInfOrNanReal(count) && count >= 0, comm, PETSC_ERR_USER_INPUT, "%s: the number of %s is not a finite count: check the option", option, items);
  PetscCheck(count <= (PetscReal)PETSC_MAX_INT, comm, PETSC_ERR_USER_INPUT, "%s asks for %.4g %s: more than this build's index limit %d (PETSc 32-bit indices), and %.3g GiB of memory (%.3g GiB per rank on %d ranks): reduce %s", option, (double)count, items, PETSC_MAX_INT,
             (double)(need / 1073741824.0), (double)(per_rank / 1073741824.0), (int)size, option);
  PetscCheck(phys <= 0 || per_rank <= phys, comm, PETSC_ERR_USER_INPUT, "%s asks for %.4g %s: they would need %.3g GiB of memory (%.3g GiB per rank on %d ranks) but this machine has %.3g GiB: reduce %s or run on more ranks", option, (double)count, items, (double)(need / 1073741824.0),
             (double)(per_rank / 1073741824.0), (int)size, (double)(phys / 1073741824.0), option);
  PetscFunctionReturn(PETSC_SUCCESS);
}
