/* surge's help: its own options first, PETSc's generic ones only on request.

   PETSc prints help through the function pointer PetscHelpPrintf: its generic block ("Options for
   all PETSc programs", PetscDevice, the debugger) during PetscInitialize, then every PetscOptions*
   call prints its option as it is read. SgHelpBegin installs a printer that drops what comes
   before surge's first option (SgHelpOpen, called once the deck is in) and removes PETSc's
   manual-page suffix " (None)", which names no page for surge's options. -help_petsc keeps
   PETSc's printer and its whole output. */
#include <stdarg.h>
#include <string.h>
#include "sgcli.h"

static PetscBool help_open = PETSC_FALSE;

static PetscErrorCode SgHelpPrintf(MPI_Comm comm, const char fmt[], ...)
{
  char    buf[8192];
  char   *p;
  va_list ap;

  if (!help_open) return PETSC_SUCCESS;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  p = strstr(buf, " (None)");
  if (p) memmove(p, p + 7, strlen(p + 7) + 1);
  /* an open default (PETSC_MAX_REAL: no end time, no limit) reads as a number nobody typed */
  p = strstr(buf, " 1.79769e+308>");
  if (p) {
    memcpy(p, " none>", 6);
    memmove(p + 6, p + 14, strlen(p + 14) + 1);
  }
  return PetscPrintf(comm, "%s", buf);
}

const char *SgHelpBegin(int argc, char **argv, const char usage[])
{
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-help_petsc")) return usage; /* PETSc's printer, everything */
  PetscHelpPrintf = SgHelpPrintf;
  return NULL; /* PETSc prints the program's help text with its own printf: SgHelpOpen says it instead */
}

PetscErrorCode SgHelpOpen(const char job[], const char deck[])
{
  PetscBool help;

  PetscFunctionBegin;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help && PetscHelpPrintf == SgHelpPrintf) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surge %s %s: the options this %s reads, by deck section (key: value in the deck is -SECTION_KEY value\n"
                                            "on the command line), each as <current : default> with units and the allowed range.\n"
                                            "PETSc's generic options (debugger, profiling, malloc): add -help_petsc.\n",
                          job, deck, !strcmp(job, "train") ? "training" : job));
  }
  help_open = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
