/* Training of the Deep Potential as DeePMD-kit does it (ener loss, se_e2_a):
     loss = pe/N <dE^2> + pf/(3N) <|dF|^2> + pv/(9N) <|dW|^2>       (<> over the frames of a batch)
     p(lr) = p_limit (1 - lr/lr0) + p_start lr/lr0                   (prefactors follow the LR)
     lr(step) = lr0 * decay_rate^floor(step/decay_steps), decay_rate = (stop_lr/lr0)^(decay_steps/numb_steps)
   with Adam. Data come from md_frames files through the SOLAR-style loader; over MPI every rank
   computes the gradient SUM of its local frames divided by the GLOBAL frame count, and one
   allreduce of the parameter-gradient slab gives exactly the serial gradient (up to the order of
   the floating-point sum). Statistics (davg/dstd from the first stat_frames frames of each system, the energy
   bias by least squares on all training energies) are computed identically on every rank.
   Checkpoints (save_freq/save_ckpt, and at a max_time stop) also hold the step, Adam's moments and
   the ranks, so `restart` continues a run bit for bit: the loader resumes at the same global batch.
   Systems (DeePMD-kit's term): data files with the same atom list form one system, with its own
   loader; files of different sizes or compositions are different systems. Each step draws its batch
   from one system, chosen with probability proportional to its frame count (DeePMD-kit's default
   prob_sys_size) by a hash of (seed, step): the same on every rank and after a restart. */
#include <math.h>
#include "deepmd_train.h"
#include "sgdeepmd.h"
#include "sgloader.h"
#include "sgdataset.h"
#include "sgsys.h"

static PetscErrorCode ToDouble(SgDType dt, const void *src, size_t n, PetscReal *dst)
{
  PetscFunctionBegin;
  if (dt == SG_DTYPE_F32)
    for (size_t i = 0; i < n; i++) dst[i] = ((const float *)src)[i];
  else if (dt == SG_DTYPE_F64)
    for (size_t i = 0; i < n; i++) dst[i] = ((const double *)src)[i];
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "deepmd: float field expected");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* davg/dstd from the first stat_frames frames of each system (sysof[file]), the energy bias from all
   frames of all files */
static PetscErrorCode Statistics(SgDPModel m, const SgDPTrainOpts *o, const PetscInt *sysof)
{
  SgDPStats  st;
  PetscInt   nftot = 0, used[16] = {0};
  PetscReal *counts = NULL, *E = NULL;

  PetscFunctionBegin;
  PetscCall(SgDPStatsBegin(&st));
  for (PetscInt fi = 0; fi < o->nfiles; fi++) {
    PetscInt  *t, n;
    PetscBool  hv;
    int64_t    nf;
    PetscReal *x, box[9];
    PetscCall(SgDPReadTypes(m, o->files[fi], &n, &t, &hv, &nf));
    PetscCall(PetscMalloc1(3 * n, &x));
    for (int64_t k = 0; k < nf && used[sysof[fi]] < o->stat_frames; k++, used[sysof[fi]]++) {
      PetscCall(SgDPReadFrames(o->files[fi], k, 1, n, PETSC_FALSE, x, box, NULL, NULL, NULL));
      PetscCall(SgDPStatsAddFrame(m, &st, n, x, t, SgDPBoxIsZero(box) ? NULL : box));
    }
    /* energies and compositions for the bias */
    PetscCall(PetscRealloc(sizeof(PetscReal) * (nftot + nf), &E));
    PetscCall(PetscRealloc(sizeof(PetscReal) * (nftot + nf) * m->cfg.ntypes, &counts));
    PetscCall(SgDPReadFrames(o->files[fi], 0, nf, n, PETSC_FALSE, NULL, NULL, E + nftot, NULL, NULL));
    for (int64_t k = 0; k < nf; k++) PetscCheck(isfinite(E[nftot + k]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: training frame %" PetscInt64_FMT " of %s has energy %g: remove or fix that frame", (PetscInt64)k, o->files[fi], (double)E[nftot + k]);
    for (int64_t k = 0; k < nf; k++) {
      for (PetscInt q = 0; q < m->cfg.ntypes; q++) counts[(nftot + k) * m->cfg.ntypes + q] = 0;
      for (PetscInt i = 0; i < n; i++) counts[(nftot + k) * m->cfg.ntypes + t[i]] += 1;
    }
    nftot += (PetscInt)nf;
    PetscCall(PetscFree(x));
    PetscCall(PetscFree(t));
  }
  PetscCall(SgDPStatsEnd(m, &st, PETSC_COMM_SELF));
  if (st.overflow) PetscCall(PetscInfo(NULL, "deepmd: up to %" PetscInt_FMT " neighbours beyond sel were dropped in the statistics frames\n", st.overflow));
  PetscCheck(!st.overflow, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: a neighbour section overflows by %" PetscInt_FMT " atoms: raise deepmd_sel (DeePMD-kit drops them, which breaks the smoothness at rcut)", st.overflow);
  PetscCall(SgDPPerTypeFit(m->cfg.ntypes, nftot, counts, E, m->bias));
  PetscCall(PetscFree(E));
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* model + training state after `step` steps (rank 0 writes; the moments are replicated) */
static PetscErrorCode SaveCheckpoint(SgDPModel m, SgnnOptim opt, const char path[], PetscInt step, PetscMPIInt size, int64_t frames, PetscInt systems)
{
  SgDPTrainState ts = {0};
  SgnnTensor     mt, vt;
  long          *os;

  PetscFunctionBegin;
  SgNN(sgnn_params_count(m->P, &ts.n));
  SgNN(sgnn_optim_state(opt, &mt, &vt, &os));
  ts.step = step, ts.optim_step = *os, ts.ranks = size, ts.frames = (long)frames, ts.systems = systems;
  PetscCall(PetscMalloc2(ts.n, &ts.m, ts.n, &ts.v));
  SgNN(sgnn_tensor_to_f64(mt, ts.m));
  SgNN(sgnn_tensor_to_f64(vt, ts.v));
  PetscCall(SgDPModelSaveCheckpoint(m, path, &ts)); /* written to a temporary file, then renamed */
  PetscCall(PetscFree2(ts.m, ts.v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One system: the data files that share an atom list, with its loader and batch buffers. */
typedef struct {
  PetscInt   N, *type, nfiles, nsteps; /* nsteps: steps of the schedule that draw from this system */
  const char *files[16];
  int64_t    fileframes[16];            /* frames of each file (sample ids run through the files in order) */
  int64_t    nframes;
  SgLoader   ld;
  SgDPBatch  bt;
  PetscInt   Bcap;
  PetscReal *xb, *fb, *vb, *eb, *boxb;
} System;

/* The system that step `step` draws its batch from (0 with one system). */
static PetscInt SystemOfStep(const System *sys, PetscInt nsys, int64_t ntot, uint64_t seed, PetscInt step)
{
  uint64_t key[2] = {seed, (uint64_t)step};
  double   u;
  int64_t  acc = 0;

  if (nsys == 1) return 0;
  u = (double)(SgHash64(key, sizeof key, 0x5eed5) >> 11) * 0x1p-53 * (double)ntot;
  for (PetscInt k = 0; k < nsys; k++) {
    acc += sys[k].nframes;
    if (u < (double)acc) return k;
  }
  return nsys - 1;
}

/* Group the files into systems by atom list. */
static PetscErrorCode FindSystems(SgDPModel m, const SgDPTrainOpts *o, System *sys, PetscInt *nsys, PetscInt *sysof, PetscBool *hv, int64_t *ntot)
{
  PetscFunctionBegin;
  *nsys = 0, *hv = PETSC_TRUE, *ntot = 0;
  for (PetscInt fi = 0; fi < o->nfiles; fi++) {
    PetscInt *t, n, k;
    PetscBool v;
    int64_t   nf;
    PetscCall(SgDPReadTypes(m, o->files[fi], &n, &t, &v, &nf));
    for (k = 0; k < *nsys; k++) {
      PetscBool same = (PetscBool)(n == sys[k].N);
      for (PetscInt i = 0; same && i < n; i++) same = (PetscBool)(t[i] == sys[k].type[i]);
      if (same) break;
    }
    if (k == *nsys) {
      PetscCall(PetscMemzero(&sys[k], sizeof sys[k]));
      sys[k].N = n, sys[k].type = t, (*nsys)++;
    } else PetscCall(PetscFree(t));
    sys[k].fileframes[sys[k].nfiles] = nf;
    sys[k].files[sys[k].nfiles++]    = o->files[fi];
    sys[k].nframes += nf;
    sysof[fi] = k;
    *hv = (PetscBool)(*hv && v);
    *ntot += nf;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DestroySystems(System *sys, PetscInt nsys)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < nsys; k++) {
    PetscCall(PetscFree5(sys[k].xb, sys[k].fb, sys[k].vb, sys[k].eb, sys[k].boxb));
    if (sys[k].Bcap) PetscCall(SgDPBatchFree(&sys[k].bt));
    PetscCall(PetscFree(sys[k].type));
    PetscCall(SgLoaderDestroy(&sys[k].ld)); /* joins its I/O threads */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Labels and coordinates of the local batch must be finite: a NaN in the data would silently turn
   every weight into NaN. Collective: every rank stops with the same message naming the first bad frame. */
static PetscErrorCode CheckBatchFinite(const System *S, const SgLoaderBatch *b, PetscBool hv, MPI_Comm comm)
{
  const PetscInt N = S->N;
  int64_t        bad = INT64_MAX, gbad;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < b->nlocal && bad == INT64_MAX; k++) {
    PetscBool ok = (PetscBool)isfinite(S->eb[k]);
    for (PetscInt q = 0; ok && q < 3 * N; q++) ok = (PetscBool)(isfinite(S->xb[3 * N * k + q]) && isfinite(S->fb[3 * N * k + q]));
    for (int q = 0; ok && hv && q < 9; q++) ok = (PetscBool)isfinite(S->vb[9 * k + q]);
    for (int q = 0; ok && q < 9; q++) ok = (PetscBool)isfinite(S->boxb[9 * k + q]);
    if (!ok) bad = b->ids[k];
  }
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPI_INT64_T, MPI_MIN, comm));
  if (gbad != INT64_MAX) {
    int64_t  id = gbad;
    PetscInt f  = 0;
    while (f < S->nfiles - 1 && id >= S->fileframes[f]) id -= S->fileframes[f++];
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "deepmd: training frame %" PetscInt64_FMT " of %s has a non-finite coordinate, box, energy, force or virial: remove or fix that frame (nothing was trained on it)", (PetscInt64)id, S->files[f]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTrain(SgDPModel m, const SgDPTrainOpts *o, MPI_Comm comm)
{
  PetscMPIInt     rank, size;
  PetscInt        nfields, nsys = 0, sysof[16];
  PetscBool       hv = PETSC_TRUE;
  int64_t         ntot = 0;
  System          sys[16];
  SgnnOptimConfig oc;
  SgnnOptim       opt;
  long            np;
  PetscReal       decay;
  PetscInt        step0 = 0;
  SgDPTrainState  rs  = {0};
  FILE           *lc = NULL;
  double          t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(!o->save_freq || o->save_ckpt[0], comm, PETSC_ERR_USER_INPUT, "deepmd: save_freq %" PetscInt_FMT " needs a file: set deepmd: {save_ckpt: model_ckpt.h5}", o->save_freq);
  PetscCheck(o->nfiles >= 1, comm, PETSC_ERR_USER_INPUT, "deepmd: no training data: set deepmd: {data: [file.h5, ...]} (md_frames datasets; 'surge dataset import-deepmd' converts DeePMD-kit directories)");
  PetscCall(FindSystems(m, o, sys, &nsys, sysof, &hv, &ntot));
  for (PetscInt step = 0; step < o->numb_steps; step++) sys[SystemOfStep(sys, nsys, ntot, (uint64_t)o->seed, step)].nsteps++;
  if (!o->init_model[0] && !o->restart[0]) PetscCall(Statistics(m, o, sysof)); /* else keep the loaded model's davg/dstd/bias */
  PetscCall(SgDPModelSync(m));
  if (nsys == 1) PetscCall(PetscPrintf(comm, "deepmd: %" PetscInt64_FMT " training frames of %" PetscInt_FMT " atoms in %" PetscInt_FMT " file(s)%s; %d rank(s)\n", (PetscInt64)ntot, sys[0].N, o->nfiles, hv ? " with virials" : "", size));
  else {
    PetscCall(PetscPrintf(comm, "deepmd: %" PetscInt64_FMT " training frames in %" PetscInt_FMT " systems (a batch comes from one system, chosen in proportion to its frames)%s; %d rank(s)\n", (PetscInt64)ntot, nsys, hv ? " with virials" : "", size));
    for (PetscInt k = 0; k < nsys; k++) PetscCall(PetscPrintf(comm, "deepmd:   system %" PetscInt_FMT ": %" PetscInt64_FMT " frames of %" PetscInt_FMT " atoms (%s%s), %" PetscInt_FMT " of the %" PetscInt_FMT " steps\n", k, (PetscInt64)sys[k].nframes, sys[k].N, sys[k].files[0], sys[k].nfiles > 1 ? ", ..." : "", sys[k].nsteps, o->numb_steps));
  }
  for (PetscInt t = 0; t < m->cfg.ntypes; t++)
    PetscCall(PetscPrintf(comm, "deepmd: type %s: davg %.5f dstd %.5f %.5f  bias_atom_e %.6f\n", m->cfg.type_map[t], (double)m->davg[t][0], (double)m->dstd[t][0], (double)m->dstd[t][1], (double)m->bias[t]));
  if (!hv && (o->start_pref_v > 0 || o->limit_pref_v > 0)) PetscCall(PetscPrintf(comm, "deepmd: the data have no virials: virial prefactors ignored\n"));
  SgNN(sgnn_params_count(m->P, &np));
  if (o->restart[0]) {
    PetscCall(SgDPTrainStateRead(o->restart, np, &rs));
    PetscCheck(rs.ranks == size, comm, PETSC_ERR_USER_INPUT, "deepmd: restart: %s was written by a run on %" PetscInt_FMT " rank(s), this one has %d; the data stream differs. Restart on %" PetscInt_FMT " rank(s), or use init_model for a new run from its weights", o->restart, rs.ranks, size, rs.ranks);
    PetscCheck(rs.step < o->numb_steps, comm, PETSC_ERR_USER_INPUT, "deepmd: restart: %s is at step %ld, numb_steps is %" PetscInt_FMT ": nothing left to do (raise numb_steps to train on with the same schedule)", o->restart, rs.step, o->numb_steps);
    step0 = (PetscInt)rs.step;
    if (rs.frames >= 0 && (rs.frames != (long)ntot || rs.systems != nsys))
      PetscCall(PetscPrintf(comm, "deepmd: restart: WARNING: %s was written by a run on %ld training frames in %" PetscInt_FMT " system(s), this one has %" PetscInt64_FMT " in %" PetscInt_FMT ": the schedule and Adam continue, the order of the data does not\n", o->restart, rs.frames, rs.systems, (PetscInt64)ntot, nsys));
  }

  /* loaders: one per system, each started at the number of batches it delivered before step0 */
  {
    const char *fields[5] = {"coord", "box", "energy", "force", "virial"};
    PetscInt    before[16] = {0};
    for (PetscInt step = 0; step < step0; step++) before[SystemOfStep(sys, nsys, ntot, (uint64_t)o->seed, step)]++;
    nfields = hv ? 5 : 4;
    for (PetscInt k = 0; k < nsys; k++) {
      PetscInt epochs = (PetscInt)((sys[k].nsteps * (int64_t)o->batch_size + sys[k].nframes - 1) / sys[k].nframes) + 1;
      PetscCall(SgLoaderCreate(comm, &sys[k].ld));
      PetscCall(SgLoaderSetFiles(sys[k].ld, sys[k].nfiles, sys[k].files));
      PetscCall(SgLoaderSetFields(sys[k].ld, nfields, fields));
      PetscCall(SgLoaderSetBatchSize(sys[k].ld, o->batch_size));
      PetscCall(SgLoaderSetEpochs(sys[k].ld, epochs));
      PetscCall(SgLoaderSetSeed(sys[k].ld, (uint64_t)o->seed + 1000003ULL * (uint64_t)k));
      PetscCall(SgLoaderSetStartBatch(sys[k].ld, before[k])); /* one global batch per step */
      PetscCall(SgLoaderSetUp(sys[k].ld));
    }
  }
  sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = o->start_lr;
  SgNN(sgnn_optim_create(m->P, &oc, &opt));
  if (o->restart[0]) {
    SgnnTensor mt, vt;
    long      *os;
    SgNN(sgnn_optim_state(opt, &mt, &vt, &os));
    SgNN(sgnn_tensor_set_f64(mt, rs.m));
    SgNN(sgnn_tensor_set_f64(vt, rs.v));
    *os = rs.optim_step;
    PetscCall(PetscFree2(rs.m, rs.v));
  }
  decay = pow(o->stop_lr / o->start_lr, (double)o->decay_steps / (double)o->numb_steps);
  if (o->restart[0]) PetscCall(PetscPrintf(comm, "deepmd: restarting from %s after step %" PetscInt_FMT " of %" PetscInt_FMT " (lr %.4g)\n", o->restart, step0, o->numb_steps, (double)(o->start_lr * pow(decay, (double)(step0 / o->decay_steps)))));
  if (!rank && o->lcurve[0]) { /* a restart appends, like DeePMD-kit's */
    lc = fopen(o->lcurve, step0 ? "a" : "w");
    PetscCheck(lc, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "deepmd: cannot write lcurve file %s", o->lcurve);
    if (!step0) fprintf(lc, "# step rmse_e_val(eV/atom) rmse_e_trn(eV/atom) rmse_f_val(eV/A) rmse_f_trn(eV/A) lr wall_s\n");
  }
  PetscCall(PetscPrintf(comm, "%8s %12s %12s %12s %12s %10s %8s\n", "step", "rmse_e_val", "rmse_e_trn", "rmse_f_val", "rmse_f_trn", "lr", "wall_s"));
  PetscReal trn[4] = {0, 0, 0, 0}; /* sum dE^2/N^2, sum dF^2, frames and force components since the last display */
  for (PetscInt step = step0; step < o->numb_steps; step++) {
    System       *S = &sys[SystemOfStep(sys, nsys, ntot, (uint64_t)o->seed, step)];
    const PetscInt N = S->N;
    SgLoaderBatch b;
    PetscBool     done;
    PetscReal     lr = o->start_lr * pow(decay, (double)(step / o->decay_steps)), fr = lr / o->start_lr;
    PetscReal     pe = o->limit_pref_e * (1 - fr) + o->start_pref_e * fr, pf = o->limit_pref_f * (1 - fr) + o->start_pref_f * fr;
    PetscReal     pv = hv ? o->limit_pref_v * (1 - fr) + o->start_pref_v * fr : 0;
    PetscBool     diverged = PETSC_FALSE;
    PetscCall(SgLoaderNext(S->ld, &b, &done));
    PetscCheck(!done, comm, PETSC_ERR_PLIB, "deepmd: loader ran out of batches at step %" PetscInt_FMT, step);
    SgNN(sgnn_params_zero_grad(m->P));
    if (b.nlocal > 0) {
      PetscInt   B = b.nlocal;
      SgDType    dt;
      int64_t    re;
      SgDPBatch *bt = &S->bt;
      if (B > S->Bcap) {
        if (S->Bcap) PetscCall(SgDPBatchFree(bt));
        PetscCall(PetscFree5(S->xb, S->fb, S->vb, S->eb, S->boxb));
        PetscCall(SgDPBatchAlloc(&m->cfg, B, N, bt));
        PetscCall(PetscMalloc5(3 * N * B, &S->xb, 3 * N * B, &S->fb, 9 * B, &S->vb, B, &S->eb, 9 * B, &S->boxb));
        S->Bcap = B;
      }
      bt->B = B;
      PetscCall(PetscArraycpy(bt->type, S->type, N));
      PetscCall(SgLoaderGetFieldInfo(S->ld, 0, NULL, &dt, &re));
      PetscCall(ToDouble(dt, b.data[0], (size_t)B * 3 * N, S->xb));
      PetscCall(SgLoaderGetFieldInfo(S->ld, 1, NULL, &dt, &re));
      PetscCall(ToDouble(dt, b.data[1], (size_t)B * 9, S->boxb));
      PetscCall(SgLoaderGetFieldInfo(S->ld, 2, NULL, &dt, &re));
      PetscCall(ToDouble(dt, b.data[2], (size_t)B, S->eb));
      PetscCall(SgLoaderGetFieldInfo(S->ld, 3, NULL, &dt, &re));
      PetscCall(ToDouble(dt, b.data[3], (size_t)B * 3 * N, S->fb));
      if (hv) {
        PetscCall(SgLoaderGetFieldInfo(S->ld, 4, NULL, &dt, &re));
        PetscCall(ToDouble(dt, b.data[4], (size_t)B * 9, S->vb));
      }
      for (PetscInt k = 0; k < B; k++) PetscCall(SgDPBatchSetFrame(m, bt, k, S->xb + 3 * N * k, SgDPBoxIsZero(S->boxb + 9 * k) ? NULL : S->boxb + 9 * k));
      SgnnTensor E, F, V = NULL, El, Fl, Vl, dE, dF, dV, s2, t, loss, acc;
      int        sB[1] = {(int)B}, sF[2] = {(int)(B * N), 3}, sV[2] = {(int)B, 9};
      PetscCall(SgDPGraph(m, bt, (PetscBool)(pv > 0), 1, &E, &F, &V));
      SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 1, sB, S->eb, &El));
      SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sF, S->fb, &Fl));
      SgNN(sgnn_sub(E, El, &dE));
      SgNN(sgnn_sub(F, Fl, &dF));
      SgNN(sgnn_mul(dE, dE, &s2));
      SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
      sgnn_tensor_free(&s2);
      {
        double v;
        SgNN(sgnn_tensor_item(t, &v));
        trn[0] += v / ((double)N * N);
        if (!isfinite(v)) diverged = PETSC_TRUE;
      }
      SgNN(sgnn_affine(t, pe / N / b.nglobal, 0.0, &loss));
      sgnn_tensor_free(&t);
      SgNN(sgnn_mul(dF, dF, &s2));
      SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
      sgnn_tensor_free(&s2);
      {
        double v;
        SgNN(sgnn_tensor_item(t, &v));
        trn[1] += v;
        if (!isfinite(v)) diverged = PETSC_TRUE;
      }
      SgNN(sgnn_affine(t, pf / (3.0 * N) / b.nglobal, 0.0, &s2));
      sgnn_tensor_free(&t);
      SgNN(sgnn_add(loss, s2, &acc));
      sgnn_tensor_free(&s2);
      sgnn_tensor_free(&loss);
      loss = acc;
      if (V) {
        SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sV, S->vb, &Vl));
        SgNN(sgnn_sub(V, Vl, &dV));
        SgNN(sgnn_mul(dV, dV, &s2));
        SgNN(sgnn_sum(s2, 0, NULL, 0, &t));
        sgnn_tensor_free(&s2);
        SgNN(sgnn_affine(t, pv / (9.0 * N) / b.nglobal, 0.0, &s2));
        SgNN(sgnn_add(loss, s2, &acc));
        sgnn_tensor_free(&loss);
        loss = acc;
        SgnnTensor *fr2[] = {&t, &s2, &Vl, &dV, &V};
        for (int q = 0; q < 5; q++) sgnn_tensor_free(fr2[q]);
      }
      SgNN(sgnn_backward(loss));
      SgnnTensor *fr1[] = {&E, &F, &El, &Fl, &dE, &dF, &loss};
      for (int q = 0; q < 7; q++) sgnn_tensor_free(fr1[q]);
      trn[2] += B, trn[3] += 3.0 * N * B;
    }
    /* before the update: data with NaN/Inf, or a loss that is no longer finite, stop the run here
       (collective), so no checkpoint or model with NaN weights is written */
    {
      PetscErrorCode ierr = CheckBatchFinite(S, &b, hv, comm); /* collective; the message names the frame */
      int            d    = diverged ? 1 : 0;
      if (!ierr) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_INT, MPI_MAX, comm));
      if (ierr || d) { /* stop the loaders' I/O threads before returning the error */
        if (lc) fclose(lc);
        sgnn_optim_destroy(&opt);
        PetscCall(DestroySystems(sys, nsys));
        PetscCall(ierr);
        SETERRQ(comm, PETSC_ERR_NOT_CONVERGED, "deepmd: the loss is not finite at step %" PetscInt_FMT " (lr %g): training diverged; the weights of the last checkpoint%s%s are intact: continue from it (restart) with a smaller start_lr, or check the model's statistics", step + 1, (double)lr, o->save_ckpt[0] ? " " : "", o->save_ckpt[0] ? o->save_ckpt : " (none written: set save_freq/save_ckpt)");
      }
    }
    if (size > 1) {
      /* in place on the gradient slab (host memory: the model lives on the CPU backend), in its own
         precision: a float32 model sends half the bytes and skips two conversions per step */
      SgnnTensor gs = sgnn_params_grads(m->P);
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sgnn_tensor_data(gs), (PetscMPIInt)np, sgnn_tensor_dtype(gs) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, comm));
    }
    SgNN(sgnn_optim_set_lr(opt, lr));
    SgNN(sgnn_optim_step(opt));
    PetscBool last = (PetscBool)(step == o->numb_steps - 1), stop = PETSC_FALSE;
    if (o->max_time > 0) {
      PetscInt s = (MPI_Wtime() - t0) > o->max_time;
      PetscCallMPI(MPI_Bcast(&s, 1, MPIU_INT, 0, comm));
      stop = (PetscBool)s;
    }
    if ((step + 1) % o->disp_freq == 0 || last || stop) {
      SgDPTestResult r = {0};
      PetscReal      tr[4];
      PetscCallMPI(MPI_Allreduce(trn, tr, 4, MPIU_REAL, MPIU_SUM, comm));
      PetscCall(SgDPModelSync(m));
      if (o->nvalid) PetscCall(SgDPTest(m, o->nvalid, o->valid, o->valid_frames, NULL, comm, &r));
      PetscReal ret = sqrt(tr[0] / PetscMax(tr[2], 1)), rft = sqrt(tr[1] / PetscMax(tr[3], 1));
      char ev[16] = "n/a", fv[16] = "n/a"; /* no validation data: no validation figures (not zeros) */
      if (o->nvalid) {
        PetscCall(PetscSNPrintf(ev, sizeof ev, "%.4e", (double)r.e_rmse_atom));
        PetscCall(PetscSNPrintf(fv, sizeof fv, "%.4e", (double)r.f_rmse));
      }
      PetscCall(PetscPrintf(comm, "%8" PetscInt_FMT " %12s %12.4e %12s %12.4e %10.3e %8.1f\n", step + 1, ev, ret, fv, rft, lr, MPI_Wtime() - t0));
      if (lc) {
        fprintf(lc, "%" PetscInt_FMT " %.6e %.6e %.6e %.6e %.4e %.2f\n", step + 1, o->nvalid ? r.e_rmse_atom : NAN, ret, o->nvalid ? r.f_rmse : NAN, rft, lr, MPI_Wtime() - t0);
        fflush(lc);
      }
      trn[0] = trn[1] = trn[2] = trn[3] = 0;
    }
    if (o->save_ckpt[0] && ((o->save_freq > 0 && (step + 1) % o->save_freq == 0 && !last) || stop)) { /* the end is saved by the caller */
      PetscCall(SgDPModelSync(m));
      if (!rank) PetscCall(SaveCheckpoint(m, opt, o->save_ckpt, step + 1, size, ntot, nsys));
    }
    if (stop) {
      PetscCall(PetscPrintf(comm, "deepmd: stopping after %" PetscInt_FMT " steps: max_time %g s reached\n", step + 1, (double)o->max_time));
      break;
    }
  }
  if (lc) fclose(lc);
  PetscCall(SgDPModelSync(m));
  sgnn_optim_destroy(&opt);
  PetscCall(DestroySystems(sys, nsys));
  PetscCall(PetscPrintf(comm, "deepmd: training took %.1f s\n", MPI_Wtime() - t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
