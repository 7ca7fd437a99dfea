/* Files written beside a run's set, committed with it (sgwrite.h, SgWriteMember*): an MD run's
   trajectory, model-deviation file, g(r) table and retraining dataset describe the same state as
   the run's BASE.h5/.xmf/.chk.h5. Each was once renamed into place on its own, before the set: a
   crash between those renames left the trajectory of checkpoint N+1 beside the checkpoint of N, and a
   restart from N then found frames it would write again. Here a writer that keeps a staged temporary
   registers itself; the run's commit (src/driver/sim.c CommitSet) asks every registered writer to
   close its temporary, renames all of them in the one SgWriteSetCommitErrno of the set (all or
   none, and a killed commit is undone for every member: writeset.c's journal), then asks them to
   continue. A one-shot file (the g(r) table, written once at the end) is added as a closed
   temporary. The list is per process: a process runs one SgSim at a time (ensemble members run one
   after another in a process), and the writers register in the same order on every rank, so the
   collective close/continue calls match across ranks. */
#include <string.h>
#include "sgwrite.h"

#define SG_MEMBER_NAME (PETSC_MAX_PATH_LEN + 32)

typedef struct {
  void *ctx; /* NULL: a one-shot closed temporary */
  PetscErrorCode (*close)(void *, char[], char[], size_t);
  PetscErrorCode (*resume)(void *);
  char tmp[SG_MEMBER_NAME], path[SG_MEMBER_NAME]; /* rank 0's names after close; "" when nothing to commit */
} Member;

static Member      members[SG_WRITE_MAX_MEMBERS];
static int         nmembers;
static const char *tmps[SG_WRITE_MAX_MEMBERS], *paths[SG_WRITE_MAX_MEMBERS];

PetscErrorCode SgWriteMemberRegister(void *ctx, PetscErrorCode (*close)(void *, char[], char[], size_t), PetscErrorCode (*resume)(void *))
{
  PetscFunctionBegin;
  PetscCheck(nmembers < SG_WRITE_MAX_MEMBERS, PETSC_COMM_SELF, PETSC_ERR_SUP, "more than %d files written beside the run's set", SG_WRITE_MAX_MEMBERS);
  PetscCall(PetscMemzero(&members[nmembers], sizeof members[nmembers]));
  members[nmembers].ctx    = ctx;
  members[nmembers].close  = close;
  members[nmembers].resume = resume;
  nmembers++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgWriteMemberUnregister(void *ctx)
{
  for (int i = 0; i < nmembers; i++)
    if (members[i].ctx == ctx) {
      memmove(&members[i], &members[i + 1], (size_t)(nmembers - i - 1) * sizeof members[0]);
      nmembers--;
      return;
    }
}

PetscErrorCode SgWriteMemberAdd(const char tmp[], const char path[])
{
  PetscFunctionBegin;
  PetscCheck(nmembers < SG_WRITE_MAX_MEMBERS, PETSC_COMM_SELF, PETSC_ERR_SUP, "more than %d files written beside the run's set", SG_WRITE_MAX_MEMBERS);
  PetscCall(PetscMemzero(&members[nmembers], sizeof members[nmembers]));
  PetscCall(PetscStrncpy(members[nmembers].tmp, tmp, sizeof members[nmembers].tmp));
  PetscCall(PetscStrncpy(members[nmembers].path, path, sizeof members[nmembers].path));
  nmembers++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgWriteMembersClose(int *n, const char *const **tmp, const char *const **path)
{
  int k = 0;

  PetscFunctionBegin;
  for (int i = 0; i < nmembers; i++) {
    if (members[i].ctx) {
      members[i].tmp[0] = members[i].path[0] = 0;
      PetscCall(members[i].close(members[i].ctx, members[i].tmp, members[i].path, sizeof members[i].tmp));
    }
    if (!members[i].tmp[0]) continue;
    tmps[k]  = members[i].tmp;
    paths[k] = members[i].path;
    k++;
  }
  *n    = k;
  *tmp  = tmps;
  *path = paths;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the set commit: the one-shot files are in place (or gone with a failed commit). */
static void DropOneShots(void)
{
  int k = 0;

  for (int i = 0; i < nmembers; i++)
    if (members[i].ctx) members[k++] = members[i];
  nmembers = k;
}

PetscErrorCode SgWriteMembersResume(PetscBool more)
{
  PetscFunctionBegin;
  DropOneShots();
  for (int i = 0; i < nmembers && more; i++) PetscCall(members[i].resume(members[i].ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgWriteMembersDiscard(void)
{
  for (int i = 0; i < nmembers; i++)
    if (!members[i].ctx && members[i].tmp[0]) (void)SgWriteDiscard(members[i].tmp);
  DropOneShots();
}
