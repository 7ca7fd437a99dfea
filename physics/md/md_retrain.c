/* Retraining frames of the runtime swap (docs/swap.md): a step that the swap policy flagged and the
   solver served (adaptive policy above trust_hi, or a surrogate answer rejected as NaN/Inf/too
   large) is a configuration the surrogate does not know well, labelled by the reference. The whole
   frame is gathered to rank 0 in global-id order and appended to an md_frames dataset
   (io/dataset, schema docs/datasets.md) with the crash-safe append: positions (wrapped into the
   cell), box, potential energy, forces, virial, in the MD run's units; types and type names are
   the dataset's statics. The file is created on the first flagged frame, in a temporary that is a
   member of the run's set (sgwrite.h SgWriteMemberRegister): each commit of the run renames it with
   BASE.h5/.chk.h5, all or none, so the frames on disk are those up to the checkpoint on disk. Frames
   after a commit (and those of a restarted run) go to a staged copy of the committed file
   (SgDatasetOpenStaged): the committed file is never written in place. */
#include <stddef.h>
#include "mdimpl.h"
#include "sgdataset.h"
#include "sgwrite.h"

#define NPER 7 /* x y z fx fy fz type */

/* Rank 0: append the gathered frame (all, id order) to the retraining dataset, creating it first. */
static PetscErrorCode RetrainAppendRoot(SgMD *md, const PetscReal *all)
{
  SgMDDomain *dom    = md->dom;
  PetscInt    N      = md->N;
  SgDataset   ds     = (SgDataset)md->retrain;
  PetscReal  *coord  = NULL, *force = NULL, energy = md->pe;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(3 * N, &coord, 3 * N, &force));
  for (PetscInt i = 0; i < N; i++)
    for (int k = 0; k < 3; k++) {
      coord[3 * i + k] = all[NPER * i + k];
      force[3 * i + k] = all[NPER * i + 3 + k];
    }
  if (!ds) {
    PetscBool exists = PETSC_FALSE;
    if (md->restarting || md->retrain_cont) PetscCall(PetscTestFile(md->retrain_file, 'r', &exists));
    if (exists) PetscCall(SgDatasetOpenStaged(PETSC_COMM_SELF, md->retrain_file, &ds));
    else {
      PetscInt   *type;
      const char *names[SG_MD_MAX_TYPES];
      char        src[PETSC_MAX_PATH_LEN + 128];
      PetscCall(PetscMalloc1(N, &type));
      for (PetscInt i = 0; i < N; i++) type[i] = (PetscInt)all[NPER * i + 6];
      for (PetscInt t = 0; t < md->ntypes; t++) names[t] = md->tname[t];
      PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, md->retrain_file, PETSC_TRUE, N, type, md->ntypes, names, SG_DTYPE_F64, PETSC_TRUE, -1, NULL, &ds));
      if (md->units.style != SG_MD_UNITS_METAL) PetscCall(SgDatasetSetMDFramesUnits(ds, md->units.u_length, md->units.u_energy));
      PetscCall(PetscSNPrintf(src, sizeof src, "surge md: frames served by the solver '%s' where the swap policy flagged surrogate '%s' (%s units)", md->provname, md->sprovname, md->units.name));
      PetscCall(SgDatasetSetProvenance(ds, NULL, src));
      PetscCall(PetscFree(type));
    }
    md->retrain = ds;
  }
  PetscCall(SgDatasetAppendBegin(ds, 1));
  PetscCall(SgDatasetAppendField(ds, "coord", SG_DTYPE_F64, coord));
  PetscCall(SgDatasetAppendField(ds, "box", SG_DTYPE_F64, dom->box.h));
  PetscCall(SgDatasetAppendField(ds, "energy", SG_DTYPE_F64, &energy));
  PetscCall(SgDatasetAppendField(ds, "force", SG_DTYPE_F64, force));
  PetscCall(SgDatasetAppendField(ds, "virial", SG_DTYPE_F64, md->virial));
  PetscCall(SgDatasetAppendCommit(ds));
  PetscCall(PetscFree2(coord, force));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDRetrainFrame(SgMD *md)
{
  PetscErrorCode ierr;
  SgMDDomain    *dom = md->dom;
  PetscInt     off, cnt, N = md->N;
  PetscReal   *buf, *blk, *all = NULL;
  PetscMPIInt *rc = NULL, *rd = NULL, mycnt;

  PetscFunctionBegin;
  /* the solver served this configuration: its energy and virial (re-run if it skipped them) */
  PetscCall(SgMDEnsureEnergy(md));
  PetscCall(PetscMalloc1(NPER * dom->nlocal + 1, &buf));
  for (PetscInt i = 0; i < dom->nlocal; i++) {
    for (int k = 0; k < 3; k++) {
      buf[NPER * i + k]     = dom->x[3 * i + k];
      buf[NPER * i + 3 + k] = dom->f[3 * i + k];
    }
    buf[NPER * i + 6] = (PetscReal)dom->type[i];
  }
  PetscCall(SgMDDomainToIdBlocks(dom, N, NPER, buf, &off, &cnt, &blk));
  PetscCall(PetscFree(buf));
  mycnt = (PetscMPIInt)(NPER * cnt);
  if (!dom->rank) {
    PetscCall(PetscMalloc1(NPER * N, &all));
    PetscCall(PetscMalloc2(dom->size, &rc, dom->size, &rd));
  }
  PetscCallMPI(MPI_Gather(&mycnt, 1, MPI_INT, rc, 1, MPI_INT, 0, dom->comm));
  if (!dom->rank) {
    rd[0] = 0;
    for (PetscMPIInt r = 1; r < dom->size; r++) rd[r] = rd[r - 1] + rc[r - 1];
  }
  PetscCallMPI(MPI_Gatherv(blk, mycnt, MPIU_REAL, all, rc, rd, MPIU_REAL, 0, dom->comm));
  PetscCall(PetscFree(blk));
  /* rank 0 writes alone: its failure (a full disk at the commit) is agreed, not a two-rank hang */
  PetscCall(SgAgreeBegin());
  ierr = dom->rank ? PETSC_SUCCESS : RetrainAppendRoot(md, all);
  PetscCall(SgAgreeEnd(dom->comm, ierr));
  if (!dom->rank) {
    PetscCall(PetscFree(all));
    PetscCall(PetscFree2(rc, rd));
  }
  md->nretrain++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run's commit: rank 0 closes the temporary (if a frame came since the last commit) for the set's
   one commit; its failure is agreed. */
/* The member's ctx is &md->retrain_joined (md itself is the model-deviation file's). */
static SgMD *MemberMD(void *ctx) { return (SgMD *)((char *)ctx - offsetof(SgMD, retrain_joined)); }

static PetscErrorCode RetrainMemberClose(void *ctx, char tmp[], char path[], size_t len)
{
  SgMD          *md = MemberMD(ctx);
  SgDataset      ds = (SgDataset)md->retrain;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  md->retrain = NULL;
  PetscCall(SgAgreeBegin());
  ierr = SgDatasetFinish(&ds, tmp, path, len);
  PetscCall(SgAgreeEnd(md->dom->comm, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a commit the run goes on: the next flagged frame continues the committed file. */
static PetscErrorCode RetrainMemberResume(void *ctx)
{
  SgMD *md = MemberMD(ctx);

  PetscFunctionBegin;
  md->retrain_cont = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDRetrainJoinRunSet(SgMD *md)
{
  PetscFunctionBegin;
  if (md->retrain_joined) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgWriteMemberRegister(&md->retrain_joined, RetrainMemberClose, RetrainMemberResume));
  md->retrain_joined = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver goes away: a temporary still open belongs to a run an error ended (the run's commits
   closed it otherwise), so it is removed and the committed file stays as the last checkpoint left it. */
PetscErrorCode SgMDRetrainClose(SgMD *md)
{
  PetscFunctionBegin;
  if (md->retrain_joined) SgWriteMemberUnregister(&md->retrain_joined);
  md->retrain_joined = PETSC_FALSE;
  if (md->retrain) {
    SgDataset ds = (SgDataset)md->retrain;
    char      tmp[PETSC_MAX_PATH_LEN + 32], path[PETSC_MAX_PATH_LEN + 32];
    md->retrain = NULL;
    PetscCall(SgDatasetFinish(&ds, tmp, path, sizeof tmp));
    if (tmp[0]) PetscCall(SgWriteDiscard(tmp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
