/* What `surge model` does with Deep Potential model files, as DeePMD-kit's dp tools do:
     test     RMSE/MAE of energy, force, virial on md_frames datasets (dp test; -detail files as dp test -d)
     compress the tabulated embedding stored with the model (dp compress): the table is rebuilt on load
     info     what the model is (dp's model summary)
     devi     model deviation of K models over an H5MD trajectory, DeePMD-kit's model_devi.out columns
   The test programs call the same functions. */
#include <math.h>
#include <string.h>
#include "deepmd_train.h"
#include "sgdeepmd.h"
#include "sgh5md.h"
#include "sgsys.h"
#include "sgwrite.h"

PetscErrorCode SgDeepmdModelTest(MPI_Comm comm, const char model[], PetscInt ndata, const char *const data[], const char detail[], PetscReal compress_step)
{
  SgDPModel      m;
  SgDPTestResult r;
  char(*files)[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCheck(ndata >= 1, comm, PETSC_ERR_USER_INPUT, "surge model test MODEL DATA.h5 ...: give at least one md_frames dataset (surge dataset import makes one from DeePMD-kit directories)");
  PetscCall(SgInputRegister(model, SG_PATH_IN)); /* the data files are registered by SgDPTest */
  PetscCall(SgDPModelLoad(model, &m));
  if (compress_step > 0) PetscCall(SgDeepmdCompress(m, compress_step, 0.5));
  PetscCall(PetscMalloc1(ndata, &files));
  for (PetscInt i = 0; i < ndata; i++) PetscCall(PetscStrncpy(files[i], data[i], PETSC_MAX_PATH_LEN));
  PetscCall(SgDPTest(m, ndata, (const char(*)[PETSC_MAX_PATH_LEN])files, 0, detail, comm, &r));
  PetscCall(SgDPTestPrint(comm, &r));
  PetscCall(PetscFree(files));
  PetscCall(SgDPModelDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelCompress(MPI_Comm comm, const char model[], const char out[], PetscReal step, PetscReal rmin)
{
  SgDPModel   m;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(SgDPCheckOutput(comm, 1, &model, out, SG_FILE_MODEL));
  PetscCall(SgDPModelLoad(model, &m));
  PetscCall(SgDeepmdCompress(m, step, rmin));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0 writes; its failure (a full disk) is every rank's, one line */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = SgDPModelSave(m, out);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscCall(PetscPrintf(comm, "surge model compress: %s -> %s (embedding tabulated with step %g from r = %g to the cutoff %g; %" PetscInt_FMT " intervals per net)\n", model, out, (double)step, (double)rmin, (double)m->cfg.rcut, m->tab.n));
  PetscCall(SgDPModelDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelInfo(MPI_Comm comm, const char model[])
{
  SgDPModel         m;
  const SgDPConfig *c;
  long              np;
  char              sel[128] = "", tm[256] = "", emb[64] = "", fit[64] = "";

  PetscFunctionBegin;
  PetscCall(SgDPModelLoad(model, &m));
  c = &m->cfg;
  SgNN(sgnn_params_count(m->P, &np));
  for (PetscInt t = 0; t < c->ntypes; t++) {
    char w[40];
    PetscCall(PetscSNPrintf(w, sizeof w, "%s%" PetscInt_FMT, t ? ", " : "", c->sel[t]));
    PetscCall(PetscStrlcat(sel, w, sizeof sel));
    PetscCall(PetscSNPrintf(w, sizeof w, "%s%s", t ? ", " : "", c->type_map[t]));
    PetscCall(PetscStrlcat(tm, w, sizeof tm));
  }
  for (PetscInt l = 0; l < c->nemb; l++) {
    char w[16];
    PetscCall(PetscSNPrintf(w, sizeof w, "%s%" PetscInt_FMT, l ? ", " : "", c->emb[l]));
    PetscCall(PetscStrlcat(emb, w, sizeof emb));
  }
  for (PetscInt l = 0; l < c->nfit; l++) {
    char w[16];
    PetscCall(PetscSNPrintf(w, sizeof w, "%s%" PetscInt_FMT, l ? ", " : "", c->fit[l]));
    PetscCall(PetscStrlcat(fit, w, sizeof fit));
  }
  PetscCall(PetscPrintf(comm, "%s: Deep Potential %s (surge model version 1)\n", model, c->radial ? "se_e2_r" : "se_e2_a"));
  PetscCall(PetscPrintf(comm, "  type_map       [%s]\n  rcut           %g (smooth from %g)\n  sel            [%s]\n", tm, (double)c->rcut, (double)c->rcut_smth, sel));
  PetscCall(PetscPrintf(comm, "  embedding      [%s], axis_neuron %" PetscInt_FMT ", %" PetscInt_FMT " nets (%s), resnet_dt %s\n", emb, c->axis, SgDPNumEmbed(c), c->type_pair ? "one per type pair, type_one_side false" : "one per neighbour type, type_one_side true", c->emb_resnet_dt ? "true" : "false"));
  PetscCall(PetscPrintf(comm, "  fitting        [%s], resnet_dt %s\n  parameters     %ld\n", fit, c->fit_resnet_dt ? "true" : "false", np));
  PetscCall(PetscPrintf(comm, "  activation     %s (embedding), %s (fitting)\n", SgDPActNames[c->act], SgDPActNames[c->fit_act]));
  if (SgDPHasExclusions(c)) {
    char ex[256] = "";
    for (PetscInt a = 0; a < c->ntypes; a++)
      for (PetscInt b = a; b < c->ntypes; b++)
        if (c->excl[a][b]) {
          char w[48];
          PetscCall(PetscSNPrintf(w, sizeof w, "%s[%s, %s]", ex[0] ? ", " : "", c->type_map[a], c->type_map[b]));
          PetscCall(PetscStrlcat(ex, w, sizeof ex));
        }
    PetscCall(PetscPrintf(comm, "  exclude_types  [%s]\n", ex));
  }
  for (PetscInt t = 0; t < c->ntypes; t++) PetscCall(PetscPrintf(comm, "  bias_atom_e    %-4s %.10g\n", c->type_map[t], (double)m->bias[t]));
  if (m->tab.on) PetscCall(PetscPrintf(comm, "  compressed     table step %g from r = %g (%" PetscInt_FMT " intervals per net)\n", (double)m->tab.step, (double)m->tab.rmin, m->tab.n));
  else PetscCall(PetscPrintf(comm, "  compressed     no (surge model compress makes a tabulated copy)\n"));
  PetscCall(SgDPModelDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One frame: forces and virials of every model, then DeePMD-kit's deviations (dp model_devi):
   virial: per component the ensemble's standard deviation / N, max/min/avg over the 9 components;
   force: per atom sqrt(<|F_i - <F_i>|^2>), max/min/avg over atoms. */
static PetscErrorCode FrameDeviation(PetscInt K, SgDPModel *models, PetscInt n, const PetscReal *x, const PetscInt *type, const PetscReal *box, PetscReal *F, PetscReal devi[6])
{
  PetscReal V[9 * 64], e;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < K; k++) PetscCall(SgDeepmdCompute(models[k], n, x, type, box, &e, F + 3 * n * k, V + 9 * k, NULL));
  devi[0] = 0;
  devi[1] = PETSC_MAX_REAL;
  devi[2] = 0;
  for (int q = 0; q < 9; q++) {
    PetscReal m = 0, s = 0, d;
    for (PetscInt k = 0; k < K; k++) m += V[9 * k + q] / K;
    for (PetscInt k = 0; k < K; k++) s += PetscSqr(V[9 * k + q] - m) / K;
    d = sqrt(s) / n;
    devi[0] = PetscMax(devi[0], d);
    devi[1] = PetscMin(devi[1], d);
    devi[2] += d / 9;
  }
  devi[3] = 0;
  devi[4] = PETSC_MAX_REAL;
  devi[5] = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal mean[3] = {0, 0, 0}, s = 0, d;
    for (PetscInt k = 0; k < K; k++)
      for (int a = 0; a < 3; a++) mean[a] += F[3 * n * k + 3 * i + a] / K;
    for (PetscInt k = 0; k < K; k++)
      for (int a = 0; a < 3; a++) s += PetscSqr(F[3 * n * k + 3 * i + a] - mean[a]) / K;
    d = sqrt(s);
    devi[3] = PetscMax(devi[3], d);
    devi[4] = PetscMin(devi[4], d);
    devi[5] += d / n;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteDevi(const char out[], const SgH5MDFrames *fr, const PetscReal *rows)
{
  SgTextFile tf;
  FILE      *fp;

  PetscFunctionBegin;
  PetscCall(SgTextFileOpen("the output", out, SG_FILE_MODEL_DEVI, "#", PETSC_FALSE, &tf));
  PetscCall(SgTextFileGetFILE(tf, &fp));
  fprintf(fp, "#%11s %18s %18s %18s %18s %18s %18s\n", "step", "max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f");
  for (PetscInt f = 0; f < fr->F; f++) {
    const PetscReal *d = rows + 6 * f;
    fprintf(fp, "%12ld %18.6e %18.6e %18.6e %18.6e %18.6e %18.6e\n", fr->step[f], (double)d[0], (double)d[1], (double)d[2], (double)d[3], (double)d[4], (double)d[5]);
  }
  PetscCall(SgTextFileClose(&tf)); /* flush, fsync, rename; a short write removes the temporary */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelDevi(MPI_Comm comm, PetscInt K, const char *const models[], const char traj[], const char out[])
{
  SgDPModel   *m;
  SgH5MDFrames fr;
  PetscInt    *tmap;
  PetscReal   *F, *rows;
  PetscMPIInt  rank, size;

  PetscFunctionBegin;
  PetscCheck(K >= 2 && K <= 64, comm, PETSC_ERR_USER_INPUT, "surge model devi MODEL1 MODEL2 [...] TRAJ.h5md OUT: the deviation needs 2 to 64 models, got %" PetscInt_FMT, K);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SgInputRegister(traj, SG_PATH_IN));
  PetscCall(SgDPCheckOutput(comm, K, models, out, SG_FILE_MODEL_DEVI)); /* before any work */
  PetscCall(SgH5MDReadFrames(traj, PETSC_FALSE, &fr)); /* checked before anything is written */
  PetscCall(PetscMalloc1(K, &m));
  for (PetscInt k = 0; k < K; k++) PetscCall(SgDPModelLoad(models[k], &m[k]));
  /* trajectory species -> model types by name (identity where the trajectory has no names) */
  PetscCall(PetscMalloc1(fr.N, &tmap));
  for (PetscInt i = 0; i < fr.N; i++) {
    PetscInt t = fr.species[i], hit = -1;
    for (PetscInt q = 0; q < m[0]->cfg.ntypes && t < fr.ntypes; q++)
      if (!strcmp(fr.names[t], m[0]->cfg.type_map[q])) hit = q;
    if (hit < 0) hit = t;
    PetscCheck(hit >= 0 && hit < m[0]->cfg.ntypes, comm, PETSC_ERR_USER_INPUT, "surge model devi: atom %" PetscInt_FMT " of %s has type %s, which is not in the type map of %s", i, traj, t < fr.ntypes ? fr.names[t] : "?", models[0]);
    tmap[i] = hit;
  }
  for (PetscInt k = 1; k < K; k++)
    for (PetscInt t = 0; t < m[0]->cfg.ntypes; t++) PetscCheck(!strcmp(m[k]->cfg.type_map[t], m[0]->cfg.type_map[t]), comm, PETSC_ERR_USER_INPUT, "surge model devi: %s and %s have different type maps", models[0], models[k]);
  /* frames are shared round-robin among the ranks; rank 0 writes them in order */
  PetscCall(PetscMalloc2(3 * fr.N * K, &F, 6 * (size_t)fr.F, &rows));
  PetscCall(PetscArrayzero(rows, 6 * (size_t)fr.F));
  for (PetscInt f = rank; f < fr.F; f += size) PetscCall(FrameDeviation(K, m, fr.N, fr.coord + 3 * (size_t)fr.N * f, tmap, fr.box + 9 * f, F, rows + 6 * f));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, rows, (PetscMPIInt)(6 * fr.F), MPIU_REAL, MPIU_SUM, comm));
  { /* rank 0 writes DeePMD-kit's columns through the write path (its first line marks the kind, as MD's
       model_devi file does); a failure there is every rank's, one line */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = WriteDevi(out, &fr, rows);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscCall(PetscPrintf(comm, "surge model devi: %" PetscInt_FMT " frames of %s, %" PetscInt_FMT " models -> %s\n", fr.F, traj, K, out));
  PetscCall(PetscFree2(F, rows));
  PetscCall(PetscFree(tmap));
  for (PetscInt k = 0; k < K; k++) PetscCall(SgDPModelDestroy(&m[k]));
  PetscCall(PetscFree(m));
  PetscCall(SgH5MDFramesDestroy(&fr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
