/* The command line's helpers (src/cli): help printing. */
#pragma once
#include "sgsys.h"

/* Before SgInitialize: route PETSc's help printing through surge's filter (unless -help_petsc);
   returns the help text to give PetscInitialize (NULL when filtered). */
PETSC_EXTERN const char *SgHelpBegin(int argc, char **argv, const char usage[]);
/* After the deck is read: print surge's header (when -help is given) and let option help through. */
PETSC_EXTERN PetscErrorCode SgHelpOpen(const char job[], const char deck[]);
