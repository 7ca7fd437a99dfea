/* Is a process of this host gone? The write path (io/h5/write.c, io/h5/lock.c) and ensemble claims
   (src/driver/claim.c) remove or take over what a process left only when it no longer runs.

   kill(pid, 0) failing with ESRCH says the process does not exist. A process that was killed but not
   yet reaped by its parent is a zombie: kill(pid, 0) still succeeds, yet it has closed every file
   and will never write again. In a container whose first process does not reap orphans (docker
   without --init), or under a parent that died with it (timeout -s KILL kills itself too), a killed
   job stays a zombie indefinitely, and its temporaries would never be cleaned. So a zombie counts as
   gone: /proc/PID/stat's state field (after the last ')' of the command name, which may itself hold
   spaces and parentheses) is 'Z'. Where /proc is not mounted only ESRCH counts. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sgsys.h"

static PetscBool Zombie(long pid)
{
  char        path[64], stat[512];
  const char *close;
  size_t      n;
  FILE       *fp;

  (void)snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if (!(fp = fopen(path, "r"))) return PETSC_FALSE;
  n = fread(stat, 1, sizeof stat - 1, fp);
  fclose(fp);
  stat[n] = 0;
  close   = strrchr(stat, ')');
  return close && close[1] == ' ' && close[2] == 'Z' ? PETSC_TRUE : PETSC_FALSE;
}

PetscBool SgProcessGone(long pid)
{
  if (pid <= 0) return PETSC_FALSE;
  if (kill((pid_t)pid, 0)) return errno == ESRCH ? PETSC_TRUE : PETSC_FALSE; /* EPERM: it exists (another user's) */
  return Zombie(pid);
}
