/* The POD-LSTM model file and the model's forecast (SgPodLstmModelAdvance).

   File (HDF5 through SgH5File, written to PATH.tmp and renamed): attributes of "/": surge_model =
   "podlstm", version, K, L, n, fields (comma-separated), fsize, fshape, fscale, dt, lo, hi (the
   scaler), sigma, energy_total, archs (';'-separated, best first); datasets /mean [n], /modes [K][n],
   /params_i [np_i]; for residual networks (base: var, quadratic) /var_weights [K][1 + pK + nq] (the
   base's W, see SgPodLstmVARModel) with attributes var_order p, var_quadratic nq (0: a VAR), ridge; /fallback_var (the same form) when the networks lost
   to that VAR on validation and it serves instead (fallback: baseline); optionally /search/... (every evaluation of the
   search) and /scores/... (test RMSE per method, field and lead; acc_lead: anomaly correlations). */
#include "sgpodlstm.h"
#include "sgh5file.h"
#include "sgtrainer.h"

#define SG_PODLSTM_FILE_VERSION 1

/* this rank's rows -> the whole vector on rank 0 */
static PetscErrorCode Gather(SgPOD pod, const PetscReal loc[], PetscReal all[])
{
  PetscMPIInt size, rank, *cnt = NULL, *dsp = NULL, n = (PetscMPIInt)pod->nlocal;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(pod->comm, &size));
  PetscCallMPI(MPI_Comm_rank(pod->comm, &rank));
  if (!rank) PetscCall(PetscMalloc2(size, &cnt, size, &dsp));
  PetscCallMPI(MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, pod->comm));
  if (!rank)
    for (PetscMPIInt r = 0, o = 0; r < size; r++) dsp[r] = o, o += cnt[r];
  PetscCallMPI(MPI_Gatherv(loc, n, MPIU_REAL, all, cnt, dsp, MPIU_REAL, 0, pod->comm));
  if (!rank) PetscCall(PetscFree2(cnt, dsp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteSearch(SgH5File f, const SgPodLstmSearchResult *sr)
{
  PetscInt64 d[2] = {sr->n, 0};
  PetscReal *v;
  char      *archs;
  size_t     len = 64 * (size_t)(sr->n + 1);

  PetscFunctionBegin;
  PetscCall(SgH5FileCreateGroup(f, "search"));
  PetscCall(PetscMalloc2(SG_PODLSTM_EVAL_NREAL * (sr->n + 1), &v, len, &archs));
  archs[0] = 0;
  for (PetscInt i = 0; i < sr->n; i++) {
    char s[256];
    SgPodLstmEvalPack(&sr->evals[i], v + i * SG_PODLSTM_EVAL_NREAL);
    PetscCall(SgPodLstmArchToString(&sr->evals[i].arch, s, sizeof s));
    PetscCall(PetscStrlcat(archs, i ? ";" : "", len));
    PetscCall(PetscStrlcat(archs, s, len));
  }
  d[1] = SG_PODLSTM_EVAL_NREAL;
  if (sr->n) PetscCall(SgH5FileWrite(f, "search/evals", SG_H5_DOUBLE, 2, d, v));
  PetscCall(SgH5FileWriteAttrString(f, "search", "columns", "id rank session epochs nparams nlayers (units skip) x 8 r2 t_start t_end seconds"));
  PetscCall(SgH5FileWriteAttrString(f, "search", "archs", archs));
  PetscCall(SgH5FileWriteAttr(f, "search", "wall", SG_H5_DOUBLE, 0, &sr->wall));
  PetscCall(SgH5FileWriteAttr(f, "search", "utilisation", SG_H5_DOUBLE, 0, &sr->utilisation));
  PetscCall(PetscFree2(v, archs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteScores(SgH5File f, const SgPodLstmScores *sc)
{
  PetscInt64 d[3] = {sc->nmethods, sc->nfields, sc->L};
  PetscReal *rm, *ld;
  char       names[SG_PODLSTM_MAXMETHODS * 66] = "";

  PetscFunctionBegin;
  PetscCall(SgH5FileCreateGroup(f, "scores"));
  PetscCall(PetscMalloc2(sc->nmethods * sc->nfields, &rm, sc->nmethods * sc->nfields * sc->L, &ld));
  for (PetscInt m = 0; m < sc->nmethods; m++) {
    PetscCall(PetscStrlcat(names, m ? ";" : "", sizeof names));
    PetscCall(PetscStrlcat(names, sc->method[m], sizeof names));
    for (PetscInt fi = 0; fi < sc->nfields; fi++) {
      rm[m * sc->nfields + fi] = sc->rmse[m][fi];
      for (PetscInt l = 0; l < sc->L; l++) ld[(m * sc->nfields + fi) * sc->L + l] = sc->lead[m][fi][l];
    }
  }
  PetscCall(SgH5FileWriteAttrString(f, "scores", "methods", names));
  PetscCall(SgH5FileWriteAttr(f, "scores", "windows", SG_H5_INT, 0, &(int){(int)sc->nwindows}));
  PetscCall(SgH5FileWrite(f, "scores/rmse", SG_H5_DOUBLE, 2, d, rm));
  PetscCall(SgH5FileWrite(f, "scores/rmse_lead", SG_H5_DOUBLE, 3, d, ld));
  if (sc->has_acc) { /* anomaly correlations per lead (the harmonic climatology's anomalies) */
    for (PetscInt m = 0; m < sc->nmethods; m++)
      for (PetscInt fi = 0; fi < sc->nfields; fi++)
        for (PetscInt l = 0; l < sc->L; l++) ld[(m * sc->nfields + fi) * sc->L + l] = sc->acc[m][fi][l];
    PetscCall(SgH5FileWrite(f, "scores/acc_lead", SG_H5_DOUBLE, 3, d, ld));
  }
  PetscCall(PetscFree2(rm, ld));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a diverged training writes no model: every net's weights finite */
static PetscErrorCode CheckWeights(const SgPodLstmModel *M, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt m = 0; m < M->nmodels; m++) {
    PetscInt   np;
    PetscReal *w;
    PetscCall(SgPodLstmNetNumParams(M->nets[m], &np));
    PetscCall(PetscMalloc1(np, &w));
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(M->nets[m]->P), w));
    PetscCall(SgTrustWeights("podlstm", path, np, w));
    PetscCall(PetscFree(w));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a VAR or quadratic regression (SgPodLstmVARModel): W as [K][1 + pK + nq], var_order p, var_quadratic nq, ridge */
static PetscErrorCode WriteVAR(SgH5File f, const char name[], const SgPodLstmVARModel *V, const char meaning[])
{
  PetscInt64 dv[2] = {V->K, 1 + V->p * V->K + V->nq};

  PetscFunctionBegin;
  PetscCall(SgH5FileWrite(f, name, SG_H5_DOUBLE, 2, dv, V->W));
  PetscCall(SgH5FileWriteAttr(f, name, "var_order", SG_H5_INT, 0, &(int){(int)V->p}));
  PetscCall(SgH5FileWriteAttr(f, name, "var_quadratic", SG_H5_INT, 0, &(int){(int)V->nq}));
  PetscCall(SgH5FileWriteAttr(f, name, "ridge", SG_H5_DOUBLE, 0, &V->ridge));
  PetscCall(SgH5FileWriteAttrString(f, name, "meaning", meaning));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmModelSave(MPI_Comm comm, const SgPodLstmModel *M, const char path[], const SgPodLstmScores *sc, const SgPodLstmSearchResult *sr)
{
  PetscMPIInt rank;
  PetscReal  *mean = NULL, *modes = NULL;
  PetscInt    n = M->pod->n, K = M->K;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0's nets are the ones written: its refusal is every rank's (src/base/agree.c) */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = CheckWeights(M, path);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  if (!rank) PetscCall(PetscMalloc2(n, &mean, (size_t)K * n, &modes));
  PetscCall(Gather(M->pod, M->pod->mean, mean));
  for (PetscInt k = 0; k < K; k++) PetscCall(Gather(M->pod, M->pod->phi + k * M->pod->nlocal, modes ? modes + (size_t)k * n : NULL));
  if (!rank) {
    SgH5File   f;
    char       fields[SG_PODLSTM_MAXFIELDS * 66] = "", archs[SG_PODLSTM_MAXMODELS * 260] = "";
    int        iv[2 * SG_PODLSTM_MAXFIELDS], ver = SG_PODLSTM_FILE_VERSION;
    PetscInt64 d[2] = {n, 0};
    for (PetscInt fi = 0; fi < M->nfields; fi++) {
      PetscCall(PetscStrlcat(fields, fi ? "," : "", sizeof fields));
      PetscCall(PetscStrlcat(fields, M->field[fi], sizeof fields));
    }
    for (PetscInt m = 0; m < M->nmodels; m++) {
      char s[256];
      PetscCall(SgPodLstmArchToString(&M->nets[m]->arch, s, sizeof s));
      PetscCall(PetscStrlcat(archs, m ? ";" : "", sizeof archs));
      PetscCall(PetscStrlcat(archs, s, sizeof archs));
    }
    PetscCall(SgH5FileCreate(path, SG_FILE_MODEL, &f));
    PetscCall(SgH5FileWriteAttrString(f, "/", "surge_model", "podlstm"));
    PetscCall(SgH5FileWriteAttr(f, "/", "version", SG_H5_INT, 0, &ver));
    PetscCall(SgH5FileWriteAttr(f, "/", "K", SG_H5_INT, 0, &(int){(int)K}));
    PetscCall(SgH5FileWriteAttr(f, "/", "L", SG_H5_INT, 0, &(int){(int)M->L}));
    PetscCall(SgH5FileWriteAttrString(f, "/", "head", SgPodLstmHeads[M->head]));
    PetscCall(SgH5FileWriteAttr(f, "/", "n", SG_H5_LONG, 0, &(long){(long)n}));
    PetscCall(SgH5FileWriteAttrString(f, "/", "fields", fields));
    for (PetscInt fi = 0; fi < M->nfields; fi++) iv[fi] = (int)M->fsize[fi];
    PetscCall(SgH5FileWriteAttr(f, "/", "fsize", SG_H5_INT, M->nfields, iv));
    for (PetscInt fi = 0; fi < M->nfields; fi++) {
      iv[2 * fi] = (int)M->fshape[fi][0];
      iv[2 * fi + 1] = (int)M->fshape[fi][1];
    }
    PetscCall(SgH5FileWriteAttr(f, "/", "fshape", SG_H5_INT, 2 * M->nfields, iv));
    PetscCall(SgH5FileWriteAttr(f, "/", "fscale", SG_H5_DOUBLE, M->nfields, M->fscale));
    PetscCall(SgH5FileWriteAttr(f, "/", "dt", SG_H5_DOUBLE, 0, &M->dt));
    PetscCall(SgH5FileWriteAttr(f, "/", "lo", SG_H5_DOUBLE, K, M->lo));
    PetscCall(SgH5FileWriteAttr(f, "/", "hi", SG_H5_DOUBLE, K, M->hi));
    PetscCall(SgH5FileWriteAttr(f, "/", "sigma", SG_H5_DOUBLE, K, M->pod->sigma));
    PetscCall(SgH5FileWriteAttr(f, "/", "energy_total", SG_H5_DOUBLE, 0, &M->pod->total));
    PetscCall(SgH5FileWriteAttrString(f, "/", "archs", archs));
    if (M->physics[0]) PetscCall(SgH5FileWriteAttrString(f, "/", "trained_physics", M->physics));
    PetscCall(SgH5FileWrite(f, "mean", SG_H5_DOUBLE, 1, d, mean));
    d[0] = K;
    d[1] = n;
    PetscCall(SgH5FileWrite(f, "modes", SG_H5_DOUBLE, 2, d, modes));
    for (PetscInt m = 0; m < M->nmodels; m++) {
      PetscInt   np;
      PetscReal *w;
      char       name[32];
      PetscCall(SgPodLstmNetNumParams(M->nets[m], &np));
      PetscCall(PetscMalloc1(np, &w));
      SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(M->nets[m]->P), w));
      PetscCall(PetscSNPrintf(name, sizeof name, "params_%" PetscInt_FMT, m));
      d[0] = np;
      PetscCall(SgH5FileWrite(f, name, SG_H5_DOUBLE, 1, d, w));
      PetscCall(PetscFree(w));
    }
    if (M->base.p) PetscCall(WriteVAR(f, "var_weights", &M->base, M->base.nq ? "the networks forecast the residual on this quadratic regression: a_t = W[k][0] + sum_j sum_k' W[k][1 + (j-1) K + k'] a_{t-j}[k'] (j = 1..var_order) + sum_{i<=i'} W[k][1 + var_order K + c(i,i')] a_{t-1}[i] a_{t-1}[i'] (c: the row-major order of the upper triangle; var_quadratic = K(K+1)/2 such terms, ridge: its ridge)" : "the networks forecast the residual on this VAR: a_t = W[k][0] + sum_j sum_k' W[k][1 + (j-1) K + k'] a_{t-j}[k'], j = 1..var_order"));
    if (M->fallback.p) PetscCall(WriteVAR(f, "fallback_var", &M->fallback, "the networks lost to this baseline (a VAR, or with var_quadratic > 0 the quadratic regression) on the validation windows and the model serves it instead (fallback: baseline); W as var_weights"));
    if (sr) PetscCall(WriteSearch(f, sr));
    if (sc) PetscCall(WriteScores(f, sc));
    PetscCall(SgH5FileClose(&f));
    PetscCall(PetscFree2(mean, modes));
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a VAR stored as `name` [K][1 + pK] with attribute var_order p, if the file has it */
static PetscErrorCode ReadVAR(MPI_Comm comm, SgH5File f, const char path[], const char name[], PetscInt k, PetscInt L, SgPodLstmVARModel *V)
{
  PetscBool has;
  int       p, nq = 0;

  PetscFunctionBegin;
  PetscCall(SgH5FileHas(f, name, &has));
  if (!has) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SgH5FileReadAttr(f, name, "var_order", SG_H5_INT, 1, &p, NULL));
  PetscCheck(p >= 1 && p <= L, comm, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s: %s var_order %d is not in 1..%" PetscInt_FMT, path, name, p, L);
  PetscCall(SgH5FileHasAttr(f, name, "var_quadratic", &has)); /* files before base quadratic: a VAR */
  if (has) PetscCall(SgH5FileReadAttr(f, name, "var_quadratic", SG_H5_INT, 1, &nq, NULL));
  PetscCheck(nq == 0 || nq == k * (k + 1) / 2, comm, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s: %s var_quadratic %d: 0 (a VAR) or K(K+1)/2 = %" PetscInt_FMT " (a quadratic regression)", path, name, nq, k * (k + 1) / 2);
  V->p = p;
  V->K = k;
  V->nq = nq;
  V->ridge = 0;
  PetscCall(SgH5FileHasAttr(f, name, "ridge", &has));
  if (has) PetscCall(SgH5FileReadAttr(f, name, "ridge", SG_H5_DOUBLE, 1, &V->ridge, NULL));
  PetscCall(PetscMalloc1((size_t)(1 + p * k + nq) * k, &V->W));
  PetscCall(SgH5FileRead(f, name, SG_H5_DOUBLE, (PetscInt64)(1 + p * k + nq) * k, V->W));
  for (PetscInt i = 0; i < (1 + p * k + nq) * k; i++) PetscCheck(!PetscIsInfOrNanReal(V->W[i]), comm, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s: %s holds NaN or Inf: retrain the model", path, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmModelLoad(MPI_Comm comm, const char path[], SgnnBackend *be, SgPodLstmModel *M)
{
  SgH5File  f;
  char      kind[32], fields[SG_PODLSTM_MAXFIELDS * 66], archs[SG_PODLSTM_MAXMODELS * 260], *tok, *save;
  int       iv[2 * SG_PODLSTM_MAXFIELDS], ver, k, L;
  long      nl;
  PetscInt  n, nlocal = PETSC_DECIDE, rstart, cnt;
  PetscReal *all;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(M, sizeof *M));
  PetscCall(SgH5FileOpen(path, &f));
  PetscCall(SgH5FileReadAttrString(f, "/", "surge_model", kind, sizeof kind));
  PetscCheck(!strcmp(kind, "podlstm"), comm, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s is a '%s' model file, not a POD-LSTM one", path, kind);
  PetscCall(SgH5FileReadAttr(f, "/", "version", SG_H5_INT, 1, &ver, NULL));
  PetscCheck(ver == SG_PODLSTM_FILE_VERSION, comm, PETSC_ERR_FILE_UNEXPECTED, "podlstm: %s has model file version %d; this surge reads %d", path, ver, SG_PODLSTM_FILE_VERSION);
  PetscCall(SgH5FileReadAttr(f, "/", "K", SG_H5_INT, 1, &k, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "L", SG_H5_INT, 1, &L, NULL));
  PetscCall(SgH5FileReadAttr(f, "/", "n", SG_H5_LONG, 1, &nl, NULL));
  { /* sizes before anything is allocated from them (K modes, a window of L, n state entries) */
    PetscInt kk = k, LL = L, nn = (PetscInt)PetscMin(nl, (long)PETSC_MAX_INT);
    PetscCall(SgTrustInt(path, "K (POD modes)", 1, &kk, 1, 4096));
    PetscCall(SgTrustInt(path, "L (window)", 1, &LL, 1, 4096));
    PetscCheck(nl >= 1 && nl <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: n = %ld state entries is outside [1, %d]: the file is damaged or not written by surge; retrain or copy it again", path, nl, PETSC_MAX_INT);
    PetscCall(SgCheckCount(PETSC_COMM_SELF, path, "POD mode values (K x n)", (PetscReal)k * (PetscReal)nn, 2 * sizeof(PetscReal)));
  }
  M->K = k;
  M->L = L;
  n = (PetscInt)nl;
  PetscCall(SgH5FileReadAttrString(f, "/", "head", kind, sizeof kind));
  M->head = strcmp(kind, "window") ? SG_PODLSTM_HEAD_STEP : SG_PODLSTM_HEAD_WINDOW;
  PetscCall(SgH5FileReadAttrString(f, "/", "fields", fields, sizeof fields));
  for (tok = strtok_r(fields, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) PetscCall(PetscStrncpy(M->field[M->nfields++], tok, sizeof M->field[0]));
  PetscCall(SgH5FileReadAttr(f, "/", "fsize", SG_H5_INT, SG_PODLSTM_MAXFIELDS, iv, &cnt));
  PetscCheck(cnt == M->nfields, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %" PetscInt_FMT " field sizes for %" PetscInt_FMT " fields: the file is damaged", path, cnt, M->nfields);
  {
    PetscInt64 sum = 0;
    for (PetscInt fi = 0; fi < cnt; fi++) M->fsize[fi] = iv[fi];
    PetscCall(SgTrustInt(path, "fsize", cnt, M->fsize, 1, PETSC_MAX_INT));
    for (PetscInt fi = 0; fi < cnt; fi++) sum += M->fsize[fi];
    PetscCheck(sum == nl, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: the field sizes add up to %" PetscInt64_FMT " but n = %ld: the file is damaged", path, sum, nl);
  }
  PetscCall(SgH5FileReadAttr(f, "/", "fshape", SG_H5_INT, 2 * SG_PODLSTM_MAXFIELDS, iv, &cnt));
  for (PetscInt fi = 0; fi < cnt / 2; fi++) {
    M->fshape[fi][0] = iv[2 * fi];
    M->fshape[fi][1] = iv[2 * fi + 1];
  }
  PetscCall(SgH5FileReadAttr(f, "/", "fscale", SG_H5_DOUBLE, SG_PODLSTM_MAXFIELDS, M->fscale, &cnt));
  PetscCall(SgH5FileReadAttr(f, "/", "dt", SG_H5_DOUBLE, 1, &M->dt, NULL));
  {
    PetscBool has;
    M->physics[0] = 0;
    PetscCall(SgH5FileHasAttr(f, "/", "trained_physics", &has)); /* models written before it lack it */
    if (has) PetscCall(SgH5FileReadAttrString(f, "/", "trained_physics", M->physics, sizeof M->physics));
  }
  PetscCall(SgTrustReal(path, "fscale", M->nfields, M->fscale, 1e-300, 1e300));
  PetscCall(SgTrustReal(path, "dt", 1, &M->dt, 1e-300, 1e300));
  PetscCall(PetscMalloc2(k, &M->lo, k, &M->hi));
  PetscCall(SgH5FileReadAttr(f, "/", "lo", SG_H5_DOUBLE, k, M->lo, &cnt));
  PetscCall(SgH5FileReadAttr(f, "/", "hi", SG_H5_DOUBLE, k, M->hi, &cnt));
  PetscCall(SgTrustReal(path, "lo", k, M->lo, -1e300, 1e300));
  PetscCall(SgTrustReal(path, "hi", k, M->hi, -1e300, 1e300));
  PetscCall(PetscSplitOwnership(comm, &nlocal, &n));
  PetscCallMPI(MPI_Scan(&nlocal, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  rstart -= nlocal;
  PetscCall(SgPODCreate(comm, nlocal, k, &M->pod));
  PetscCall(SgH5FileReadAttr(f, "/", "sigma", SG_H5_DOUBLE, k, M->pod->sigma, &cnt));
  PetscCall(SgH5FileReadAttr(f, "/", "energy_total", SG_H5_DOUBLE, 1, &M->pod->total, NULL));
  PetscCall(SgTrustReal(path, "sigma", k, M->pod->sigma, 0, 1e300));
  PetscCall(SgTrustReal(path, "energy_total", 1, &M->pod->total, 0, 1e300));
  PetscCall(PetscMalloc1((size_t)k * n, &all));
  PetscCall(SgH5FileRead(f, "mean", SG_H5_DOUBLE, n, all));
  PetscCall(SgTrustReal(path, "mean", n, all, -1e300, 1e300));
  PetscCall(PetscArraycpy(M->pod->mean, all + rstart, nlocal));
  PetscCall(SgH5FileRead(f, "modes", SG_H5_DOUBLE, (PetscInt64)k * n, all));
  PetscCall(SgTrustReal(path, "modes", (PetscInt64)k * n, all, -1e300, 1e300));
  for (PetscInt q = 0; q < k; q++) PetscCall(PetscArraycpy(M->pod->phi + q * nlocal, all + (size_t)q * n + rstart, nlocal));
  PetscCall(PetscFree(all));
  PetscCall(ReadVAR(comm, f, path, "var_weights", k, L, &M->base));    /* residual networks: their base */
  PetscCall(ReadVAR(comm, f, path, "fallback_var", k, L, &M->fallback)); /* a VAR served instead of the networks */
  PetscCall(SgH5FileReadAttrString(f, "/", "archs", archs, sizeof archs));
  for (tok = strtok_r(archs, ";", &save); tok && M->nmodels < SG_PODLSTM_MAXMODELS; tok = strtok_r(NULL, ";", &save)) {
    SgPodLstmArch a;
    PetscInt      np;
    PetscReal    *w;
    char          name[32];
    PetscCall(SgPodLstmArchFromString(comm, tok, &a));
    PetscCall(SgPodLstmNetCreate(&a, k, L, M->head, be, SGNN_F64, &M->nets[M->nmodels]));
    PetscCall(SgPodLstmNetNumParams(M->nets[M->nmodels], &np));
    PetscCall(PetscMalloc1(np, &w));
    PetscCall(PetscSNPrintf(name, sizeof name, "params_%" PetscInt_FMT, M->nmodels));
    PetscCall(SgH5FileRead(f, name, SG_H5_DOUBLE, np, w));
    PetscCall(SgTrustReal(path, name, np, w, -PETSC_MAX_REAL, PETSC_MAX_REAL));
    SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(M->nets[M->nmodels]->P), w));
    PetscCall(PetscFree(w));
    M->nmodels++;
  }
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmModelFree(SgPodLstmModel *M)
{
  PetscFunctionBegin;
  for (PetscInt m = 0; m < M->nmodels; m++) PetscCall(SgPodLstmNetDestroy(&M->nets[m]));
  PetscCall(SgPODDestroy(&M->pod));
  PetscCall(PetscFree2(M->lo, M->hi));
  PetscCall(SgPodLstmVARFree(&M->base));
  PetscCall(SgPodLstmVARFree(&M->fallback));
  M->nmodels = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmModelAdvance(const SgPodLstmModel *M, const PetscReal hist[], PetscReal next[], PetscReal *spread)
{
  const PetscInt K = M->K, L = M->L, nm = M->nmodels;
  PetscReal     *a, *x, *y, *mean, *fb, s2 = 0;

  PetscFunctionBegin;
  if (M->fallback.p) { /* the networks lost to this VAR on validation: it serves, one forecast, no spread */
    PetscCall(PetscMalloc2(L * K, &a, L * K, &y));
    PetscCall(SgPODProject(M->pod, L, hist, a));
    SgPodLstmVARIterate(&M->fallback, L, a, y);
    PetscCall(SgPODReconstruct(M->pod, L, y, next));
    *spread = 0;
    PetscCall(PetscFree2(a, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(nm >= 1, M->pod->comm, PETSC_ERR_ORDER, "podlstm: the model has no network");
  PetscCall(PetscMalloc5(L * K, &a, L * K, &x, nm * L * K, &y, L * K, &mean, L * K, &fb));
  PetscCall(SgPODProject(M->pod, L, hist, a));
  for (PetscInt i = 0; i < L * K; i++) x[i] = (a[i] - M->lo[i % K]) / (M->hi[i % K] - M->lo[i % K]);
  if (M->base.p) { /* residual networks: the base's forecast, scaled as the series' (SgPodLstmSeriesSetBase) */
    SgPodLstmVARIterate(&M->base, L, a, fb);
    for (PetscInt i = 0; i < L * K; i++) fb[i] = (fb[i] - M->lo[i % K]) / (M->hi[i % K] - M->lo[i % K]);
  }
  for (PetscInt m = 0; m < nm; m++) {
    PetscCall(SgPodLstmNetPredict(M->nets[m], 1, L, x, y + m * L * K));
    for (PetscInt i = 0; i < L * K; i++) y[m * L * K + i] = M->lo[i % K] + (y[m * L * K + i] + (M->base.p ? fb[i] : 0)) * (M->hi[i % K] - M->lo[i % K]);
  }
  for (PetscInt i = 0; i < L * K; i++) {
    mean[i] = 0;
    for (PetscInt m = 0; m < nm; m++) mean[i] += y[m * L * K + i] / nm;
    for (PetscInt m = 0; m < nm; m++) s2 += PetscSqr(y[m * L * K + i] - mean[i]);
  }
  /* the modes are orthonormal: the spread of the reconstructed states is that of the coefficients */
  *spread = PetscSqrtReal(s2 / ((PetscReal)nm * L * M->pod->n));
  PetscCall(SgPODReconstruct(M->pod, L, M->mean_forecast ? mean : y, next)); /* the mean's, or the best network's */
  PetscCall(PetscFree5(a, x, y, mean, fb));
  PetscFunctionReturn(PETSC_SUCCESS);
}
