/* POD-LSTM's data: one time series of field snapshots from field_snapshots datasets (surge ensemble of
   the sst or boussinesq solver), its state vectors split over the ranks by rows, the periods, the
   scaled POD coefficients and their windows.

   Periods (Maulik et al.: train on the first 427 weeks, test on the next 700): after `skip`
   snapshots (spin-up), ntrain snapshots train -- the last nvalid of them validate (early stopping,
   the search's objective) -- and ntest test. The POD and the min-max scaling see the training period
   only: nothing of the test period leaks into them (the tutorial behind the paper fits its scaler on
   all data). */
#include "sgpodlstm.h"
#include "sgdataset.h"
#include "sgtrainer.h"
#include "sgsys.h"
#include "sgnpy.h"

/* rows [lo, hi) of the concatenated state that field f covers */
static void FieldRange(const SgPodLstmData *D, PetscInt f, PetscInt *lo, PetscInt *hi)
{
  *lo = 0;
  for (PetscInt g = 0; g < f; g++) *lo += D->fsize[g];
  *hi = *lo + D->fsize[f];
}

/* Pass 2: this rank's rows of every kept snapshot (global sample first + j), read in blocks of
   samples; every value is checked finite as it is read, naming the file, field, row and entry. */
static PetscErrorCode ReadRows(SgPodLstmData *D, const char *const files[], PetscInt nfields, const char *const fields[], const PetscInt file_of[], const PetscInt row_of[], int64_t first)
{
  const PetscInt blk  = 32;
  PetscInt       maxf = 0;
  PetscReal     *buf;

  PetscFunctionBegin;
  for (PetscInt f = 0; f < nfields; f++) maxf = PetscMax(maxf, D->fsize[f]);
  PetscCall(PetscMalloc1((size_t)blk * maxf, &buf));
  for (PetscInt j0 = 0; j0 < D->nsnap;) {
    int64_t   g  = first + j0;
    PetscInt  fi = file_of[g], r0 = row_of[g], nb = 0;
    SgDataset ds;
    while (j0 + nb < D->nsnap && nb < blk && file_of[g + nb] == fi) nb++; /* a block within one file */
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    for (PetscInt f = 0; f < nfields; f++) {
      PetscInt lo, hi, a, b;
      FieldRange(D, f, &lo, &hi);
      a = PetscMax(D->rstart, lo);
      b = PetscMin(D->rstart + D->nlocal, hi);
      if (a >= b) continue;
      PetscCall(SgDatasetReadField(ds, fields[f], r0, nb, SG_DTYPE_F64, buf));
      for (PetscInt k = 0; k < nb; k++)
        for (PetscInt i = a; i < b; i++) {
          const PetscReal v = buf[(size_t)k * D->fsize[f] + (i - lo)];
          PetscCheck(!PetscIsInfOrNanReal(v), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "podlstm: %s: field '%s' is NaN or Inf at sample %" PetscInt_FMT ", entry %" PetscInt_FMT ": the data must be finite (regenerate it, or choose skip/ntrain/ntest around the damaged samples)", files[fi], fields[f], r0 + k, i - lo);
          D->X[(size_t)(j0 + k) * D->nlocal + (i - D->rstart)] = v;
        }
    }
    PetscCall(SgDatasetClose(&ds));
    j0 += nb;
  }
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool IsNpy(const char path[])
{
  size_t n = strlen(path);
  return (PetscBool)(n > 4 && !strcmp(path + n - 4, ".npy"));
}

/* Coefficient series: .npy files [modes][steps] (e.g. the POD coefficients of NOAA OI SST v2 of the
   paper), one after the other in time, snapshots `dt` apart; the state is the coefficient vector, one
   field "a" of `modes` entries (the POD of a full-rank series of a few entries is a rotation). */
static PetscErrorCode LoadNpy(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscReal dt, PetscInt skip, PetscInt ntrain, PetscInt *ntest, PetscReal **all, SgPodLstmData *D)
{
  PetscInt nm = 0, nt = 0;

  PetscFunctionBegin;
  *all = NULL;
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    SgNpyInfo info;
    void     *v;
    PetscCheck(IsNpy(files[fi]), comm, PETSC_ERR_USER_INPUT, "podlstm: %s: data of coefficient series are .npy files only (do not mix them with datasets)", files[fi]);
    PetscCall(SgNpyRead(files[fi], &info, &v));
    PetscCheck(info.ndim == 2 && info.esize == 8 && info.shape[0] >= 1 && info.shape[0] <= 1024 && info.shape[1] >= 1, comm, PETSC_ERR_USER_INPUT, "podlstm: %s: a coefficient series must be a float64 array [modes][steps] with 1 to 1024 modes (this one: %d dimensions, %d-byte values, %" PetscInt64_FMT " rows)", files[fi], info.ndim, info.esize, (PetscInt64)info.shape[0]);
    PetscCheck(!fi || info.shape[0] == nm, comm, PETSC_ERR_USER_INPUT, "podlstm: %s has %" PetscInt64_FMT " modes but %s has %" PetscInt_FMT ": give series of the same modes", files[fi], (PetscInt64)info.shape[0], files[0], nm);
    nm = (PetscInt)info.shape[0];
    PetscCall(PetscRealloc(sizeof(PetscReal) * (size_t)nm * (nt + info.shape[1]), all));
    for (int64_t j = 0; j < info.shape[1]; j++)
      for (PetscInt k = 0; k < nm; k++) {
        const PetscReal x = ((const double *)v)[k * info.shape[1] + j];
        PetscCheck(!PetscIsInfOrNanReal(x), comm, PETSC_ERR_USER_INPUT, "podlstm: %s: mode %" PetscInt_FMT " is NaN or Inf at step %" PetscInt64_FMT ": the data must be finite", files[fi], k, (PetscInt64)j);
        (*all)[(size_t)(nt + j) * nm + k] = x;
      }
    nt += (PetscInt)info.shape[1];
    PetscCall(PetscFree(v));
  }
  if (!*ntest) *ntest = nt - skip - ntrain;
  PetscCheck(ntrain >= 1 && *ntest >= 1 && skip + ntrain + *ntest <= nt, comm, PETSC_ERR_USER_INPUT, "podlstm: skip %" PetscInt_FMT " + ntrain %" PetscInt_FMT " + ntest %" PetscInt_FMT " steps, but the coefficient series have %" PetscInt_FMT ": lower them", skip, ntrain, *ntest, nt);
  D->nfields = 1;
  PetscCall(PetscStrncpy(D->field[0], "a", sizeof D->field[0]));
  D->fsize[0] = nm;
  D->fshape[0][0] = 1;
  D->fshape[0][1] = nm;
  D->nsnap = ntrain + *ntest;
  D->ntrain = ntrain;
  D->ntest = *ntest;
  D->dt = dt;
  PetscCall(PetscMalloc1(D->nsnap, &D->time));
  for (PetscInt j = 0; j < D->nsnap; j++) D->time[j] = (skip + j) * dt;
  D->n      = nm;
  D->nlocal = PETSC_DECIDE;
  PetscCall(PetscSplitOwnership(comm, &D->nlocal, &D->n));
  PetscCallMPI(MPI_Scan(&D->nlocal, &D->rstart, 1, MPIU_INT, MPI_SUM, comm));
  D->rstart -= D->nlocal;
  PetscCall(PetscMalloc1((size_t)D->nlocal * D->nsnap + 1, &D->X));
  for (PetscInt j = 0; j < D->nsnap; j++)
    for (PetscInt i = 0; i < D->nlocal; i++) D->X[(size_t)j * D->nlocal + i] = (*all)[(size_t)(skip + j) * nm + D->rstart + i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* entries that vary over the training period (land does not), and the scale of each field */
static PetscErrorCode ActiveAndScale(SgPodLstmData *D, PetscInt ntrain)
{
  MPI_Comm       comm    = D->comm;
  const PetscInt nfields = D->nfields;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(D->nlocal, &D->active));
  {
    PetscReal loc[SG_PODLSTM_MAXFIELDS + 1] = {0}, glob[SG_PODLSTM_MAXFIELDS + 1];
    PetscInt  na = 0;
    for (PetscInt i = 0; i < D->nlocal; i++) {
      PetscReal mn = PETSC_MAX_REAL, mx = -PETSC_MAX_REAL, s = 0, s2 = 0;
      PetscInt  f  = 0, lo, hi;
      for (PetscInt j = 0; j < ntrain; j++) {
        PetscReal v = D->X[(size_t)j * D->nlocal + i];
        mn = PetscMin(mn, v);
        mx = PetscMax(mx, v);
        s += v;
        s2 += v * v;
      }
      D->active[i] = (PetscBool)(mx > mn);
      na += D->active[i];
      while (FieldRange(D, f, &lo, &hi), D->rstart + i >= hi) f++;
      loc[f] += s2 - s * s / ntrain; /* sum of squared anomalies */
    }
    PetscCallMPI(MPI_Allreduce(&na, &D->nactive, 1, MPIU_INT, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(loc, glob, (PetscMPIInt)nfields, MPIU_REAL, MPIU_SUM, comm));
    PetscCheck(D->nactive > 0, comm, PETSC_ERR_USER_INPUT, "podlstm: the data does not change over the training period: nothing to forecast");
    for (PetscInt f = 0; f < nfields; f++) {
      PetscInt lo, hi;
      FieldRange(D, f, &lo, &hi);
      /* one field: its own units; several: each divided by its RMS anomaly, so each weighs alike in the POD */
      D->fscale[f] = nfields == 1 || glob[f] <= 0 ? 1 : PetscSqrtReal(glob[f] / ((PetscReal)ntrain * D->fsize[f]));
      for (PetscInt i = PetscMax(lo, D->rstart); i < PetscMin(hi, D->rstart + D->nlocal); i++)
        for (PetscInt j = 0; j < D->nsnap; j++) D->X[(size_t)j * D->nlocal + (i - D->rstart)] /= D->fscale[f];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmDataLoad(MPI_Comm comm, PetscInt nfiles, const char *const files[], PetscInt nfields, const char *const fields[], PetscInt member, PetscInt skip, PetscInt ntrain, PetscInt ntest, PetscReal valid_fraction, PetscReal npy_dt, SgPodLstmData *D)
{
  int64_t   total = 0, first = -1, count = 0, *mem = NULL;
  PetscReal *tall = NULL;
  PetscInt  *file_of = NULL, *row_of = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(D, sizeof *D));
  D->comm    = comm;
  if (nfiles >= 1 && IsNpy(files[0])) {
    PetscCall(LoadNpy(comm, nfiles, files, npy_dt, skip, ntrain, &ntest, &tall, D));
    D->nvalid = (PetscInt)PetscFloorReal(valid_fraction * ntrain + 0.5);
    PetscCall(PetscFree(tall));
    PetscCall(ActiveAndScale(D, ntrain));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  D->nfields = nfields;
  PetscCheck(nfields >= 1 && nfields <= SG_PODLSTM_MAXFIELDS, comm, PETSC_ERR_USER_INPUT, "podlstm: %" PetscInt_FMT " fields: give 1 to %d (podlstm: {fields: [T]})", nfields, SG_PODLSTM_MAXFIELDS);
  PetscCheck(nfiles >= 1, comm, PETSC_ERR_USER_INPUT, "podlstm: no data: set podlstm: {data: [sst_weekly.h5]} (field_snapshots from surge ensemble, e.g. inputs/sst/ensemble_weekly.yaml)");
  /* pass 1: shapes, sample counts, times and members of every file */
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    SgDataset ds;
    int64_t   n;
    PetscInt  id;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, files[fi], SG_DATASET_READ, &ds));
    PetscCall(SgDatasetGetNumSamples(ds, &n));
    if (fi == 0) { /* the physics the data was made with, for the model to record */
      char *deck = NULL, *phys = NULL;
      PetscCall(SgDatasetGetProvenance(ds, "physics", &phys)); /* surge ensemble's record: the options after overrides */
      if (phys && phys[0]) PetscCall(PetscStrncpy(D->physics, phys, sizeof D->physics));
      else { /* a dataset written before the record: the deck's text */
        PetscCall(SgDatasetGetProvenance(ds, "deck", &deck));
        PetscCall(SgPodLstmPhysicsFromDeck(deck, D->physics, sizeof D->physics));
      }
      PetscCall(PetscFree(phys));
      PetscCall(PetscFree(deck));
    }
    for (PetscInt f = 0; f < nfields; f++) {
      PetscInt        rd;
      const PetscInt *rs;
      int64_t         re;
      PetscCall(SgDatasetFindField(ds, fields[f], &id));
      PetscCheck(id >= 0, comm, PETSC_ERR_USER_INPUT, "podlstm: %s has no field '%s' (podlstm fields must name fields of the dataset: surge info %s)", files[fi], fields[f], files[fi]);
      PetscCall(SgDatasetGetFieldInfo(ds, id, NULL, NULL, &rd, &rs, &re));
      if (fi == 0) {
        PetscCall(PetscStrncpy(D->field[f], fields[f], sizeof D->field[f]));
        D->fsize[f]     = (PetscInt)re;
        D->fshape[f][0] = rd >= 2 ? rs[0] : 1;
        D->fshape[f][1] = rd >= 2 ? rs[1] : (PetscInt)re;
      }
      PetscCheck(re == D->fsize[f], comm, PETSC_ERR_USER_INPUT, "podlstm: field '%s' has %" PetscInt64_FMT " values per sample in %s but %" PetscInt_FMT " in %s: all data must share one grid", fields[f], (PetscInt64)re, files[fi], D->fsize[f], files[0]);
    }
    PetscCall(SgDatasetFindField(ds, "time", &id));
    PetscCheck(id >= 0, comm, PETSC_ERR_USER_INPUT, "podlstm: %s has no field 'time': POD-LSTM needs a time series (a dataset of surge ensemble)", files[fi]);
    PetscCall(PetscRealloc(sizeof(PetscReal) * (total + n), &tall));
    PetscCall(PetscRealloc(sizeof(int64_t) * (total + n), &mem));
    PetscCall(PetscRealloc(sizeof(PetscInt) * (total + n), &file_of));
    PetscCall(PetscRealloc(sizeof(PetscInt) * (total + n), &row_of));
    if (n) PetscCall(SgDatasetReadField(ds, "time", 0, n, SG_DTYPE_F64, tall + total));
    PetscCall(SgDatasetFindField(ds, "member", &id));
    for (int64_t i = 0; i < n; i++) {
      mem[total + i] = 0;
      file_of[total + i] = fi;
      row_of[total + i] = (PetscInt)i;
    }
    if (id >= 0 && n) PetscCall(SgDatasetReadField(ds, "member", 0, n, SG_DTYPE_I64, mem + total));
    PetscCall(SgDatasetClose(&ds));
    total += n;
  }
  /* the member's samples: one contiguous run in file order */
  if (member < 0 && total) member = (PetscInt)mem[0];
  for (int64_t i = 0; i < total; i++)
    if (mem[i] == member) {
      if (first < 0) first = i;
      PetscCheck(i == first + count, comm, PETSC_ERR_USER_INPUT, "podlstm: the samples of member %" PetscInt_FMT " are not contiguous in the data: give one member's time series", member);
      count++;
    }
  PetscCheck(count > skip, comm, PETSC_ERR_USER_INPUT, "podlstm: member %" PetscInt_FMT " has %" PetscInt64_FMT " snapshots, not more than skip = %" PetscInt_FMT, member, (PetscInt64)count, skip);
  if (!ntest) ntest = (PetscInt)(count - skip - ntrain);
  PetscCheck(ntrain >= 1 && ntest >= 1 && skip + ntrain + ntest <= count, comm, PETSC_ERR_USER_INPUT, "podlstm: skip %" PetscInt_FMT " + ntrain %" PetscInt_FMT " + ntest %" PetscInt_FMT " snapshots, but member %" PetscInt_FMT " of the data has %" PetscInt64_FMT ": lower them", skip, ntrain, ntest, member, (PetscInt64)count);
  D->nsnap  = ntrain + ntest;
  D->ntrain = ntrain;
  D->ntest  = ntest;
  D->nvalid = (PetscInt)PetscFloorReal(valid_fraction * ntrain + 0.5);
  PetscCall(PetscMalloc1(D->nsnap, &D->time));
  for (PetscInt j = 0; j < D->nsnap; j++) D->time[j] = tall[first + skip + j];
  D->dt = D->nsnap > 1 ? D->time[1] - D->time[0] : 0;
  for (PetscInt j = 1; j < D->nsnap; j++) PetscCheck(PetscAbsReal(D->time[j] - D->time[j - 1] - D->dt) <= 1e-9 * PetscAbsReal(D->dt) && D->dt > 0, comm, PETSC_ERR_USER_INPUT, "podlstm: snapshot %" PetscInt_FMT " of member %" PetscInt_FMT " is %g after the previous one, not %g: POD-LSTM needs uniformly spaced snapshots", skip + j, member, (double)(D->time[j] - D->time[j - 1]), (double)D->dt);
  /* pass 2: this rank's rows of every kept snapshot, read in blocks of samples */
  for (PetscInt f = 0; f < nfields; f++) D->n += D->fsize[f];
  D->nlocal = PETSC_DECIDE;
  PetscCall(PetscSplitOwnership(comm, &D->nlocal, &D->n));
  PetscCallMPI(MPI_Scan(&D->nlocal, &D->rstart, 1, MPIU_INT, MPI_SUM, comm));
  D->rstart -= D->nlocal;
  PetscCall(SgCheckCount(comm, "-podlstm_ntrain", "snapshot values on this rank", (PetscReal)D->nlocal * D->nsnap, sizeof(PetscReal)));
  PetscCall(PetscMalloc1((size_t)D->nlocal * D->nsnap, &D->X));
  { /* a rank's rows are its own: a bad value or an unreadable block is agreed over the ranks */
    PetscErrorCode ierr;
    PetscCall(SgAgreeBegin());
    ierr = ReadRows(D, files, nfields, fields, file_of, row_of, first + skip);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscCall(PetscFree(tall));
  PetscCall(PetscFree(mem));
  PetscCall(PetscFree(file_of));
  PetscCall(PetscFree(row_of));
  PetscCall(ActiveAndScale(D, ntrain));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmDataFree(SgPodLstmData *D)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(D->time));
  PetscCall(PetscFree(D->X));
  PetscCall(PetscFree(D->active));
  PetscCall(PetscFree(D->harm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmSeriesCreate(const SgPodLstmData *D, PetscInt K, PetscInt L, const PetscReal coef[], SgPodLstmSeries *S)
{
  const PetscInt nfit = D->ntrain - D->nvalid;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(S, sizeof *S));
  S->K = K;
  S->L = L;
  S->nsnap = D->nsnap;
  /* validation R2 compares each target with its mean over the validation windows: with one window it
     is undefined (every epoch scores -inf and early stopping keeps the first epoch), hence L + 1 */
  PetscCheck(nfit >= 2 * L && D->nvalid >= L + 1 && D->ntest >= L, D->comm, PETSC_ERR_USER_INPUT, "podlstm: windows of %" PetscInt_FMT " + %" PetscInt_FMT " steps need at least %" PetscInt_FMT " training, %" PetscInt_FMT " validation (2 validation windows) and %" PetscInt_FMT " test snapshots (have %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT "): lower -podlstm_window, raise -podlstm_valid_fraction or use more data", L, L, 2 * L, L + 1, L, nfit, D->nvalid, D->ntest);
  PetscCall(PetscMalloc4(K, &S->lo, K, &S->hi, D->nsnap * K, &S->s, D->nsnap * K, &S->a));
  PetscCall(PetscArraycpy(S->a, coef, D->nsnap * K));
  for (PetscInt k = 0; k < K; k++) {
    S->lo[k] = PETSC_MAX_REAL;
    S->hi[k] = -PETSC_MAX_REAL;
    for (PetscInt j = 0; j < D->ntrain; j++) {
      S->lo[k] = PetscMin(S->lo[k], coef[j * K + k]);
      S->hi[k] = PetscMax(S->hi[k], coef[j * K + k]);
    }
    if (S->hi[k] <= S->lo[k]) S->hi[k] = S->lo[k] + 1;
    for (PetscInt j = 0; j < D->nsnap; j++) S->s[j * K + k] = (coef[j * K + k] - S->lo[k]) / (S->hi[k] - S->lo[k]);
  }
  /* a window starting at s has its targets in [s + L, s + 2L) */
  S->s_tr0 = 0;
  S->ntr = nfit - 2 * L + 1;
  S->s_va0 = nfit - L;
  S->nva = D->nvalid - L + 1;
  S->s_te0 = D->ntrain - L;
  S->nte = D->ntest - L + 1;
  S->R = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmSeriesSetRollout(SgPodLstmSeries *S, PetscInt R)
{
  const PetscInt nfit = S->s_va0 + S->L, ntr = nfit - (R + 1) * S->L + 1;

  PetscFunctionBegin;
  PetscCheck(R >= 1 && ntr >= 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "podlstm: rollout %" PetscInt_FMT " needs %" PetscInt_FMT " fitting snapshots for one training window (have %" PetscInt_FMT "): lower -podlstm_rollout", R, (R + 1) * S->L, nfit);
  PetscCheck(S->nva - (R - 1) * S->L >= 2, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "podlstm: rollout %" PetscInt_FMT " leaves %" PetscInt_FMT " validation windows of %" PetscInt_FMT " steps (need 2; they validate the rollout): lower -podlstm_rollout or raise -podlstm_valid_fraction", R, S->nva - (R - 1) * S->L, (R + 1) * S->L);
  S->R   = R;
  S->ntr = ntr;
  PetscCall(PetscFree2(S->fG, S->fg));
  if (S->Vs) PetscCall(SgPodLstmVARFree(S->Vs));
  PetscCall(PetscFree(S->Vs));
  if (S->fb && S->V->nq) { /* a quadratic base: not affine; the rollout's loss iterates it on
       scaled coefficients (SgPodLstmNetSetPolyBase) */
    PetscCall(PetscNew(&S->Vs));
    PetscCall(SgPodLstmVARScaled(S->V, S->lo, S->hi, S->Vs));
  } else if (S->fb) { /* the scaling and the VAR are affine, so is the base's forecast of a scaled
       window: fg is the forecast of the scaled window 0, column j of fG that of unit vector j less fg
       (the rollout's loss applies it to forecasts fed back, SgPodLstmNetRolloutLoss, and the free-run
       selection to the network's own iteration); (LK)^2 values */
    const PetscInt n = S->L * S->K;
    PetscReal     *x, *a;
    PetscCall(PetscMalloc2(n * n, &S->fG, n, &S->fg));
    PetscCall(PetscMalloc2(n, &x, n, &a));
    for (PetscInt j = -1; j < n; j++) {
      PetscReal *f = j < 0 ? S->fg : x; /* x is free once unscaled into a */
      for (PetscInt i = 0; i < n; i++) a[i] = S->lo[i % S->K] + (i == j ? 1 : 0) * (S->hi[i % S->K] - S->lo[i % S->K]);
      SgPodLstmVARIterate(S->V, S->L, a, f);
      for (PetscInt i = 0; i < n; i++) f[i] = (f[i] - S->lo[i % S->K]) / (S->hi[i % S->K] - S->lo[i % S->K]);
      if (j >= 0)
        for (PetscInt i = 0; i < n; i++) S->fG[i * n + j] = f[i] - S->fg[i];
    }
    PetscCall(PetscFree2(x, a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgPodLstmSeriesWindow(const SgPodLstmSeries *S, PetscInt s, PetscReal x[], PetscReal y[])
{
  const PetscInt n = S->L * S->K;
  for (PetscInt i = 0; i < n; i++) {
    if (x) x[i] = S->s[s * S->K + i];
    if (y) y[i] = S->s[(s + S->L) * S->K + i] - (S->fb ? S->fb[(size_t)s * n + i] : 0);
  }
}

PetscErrorCode SgPodLstmSeriesSetBase(SgPodLstmSeries *S, const SgPodLstmVARModel *V)
{
  const PetscInt n = S->L * S->K, nw = S->nsnap - 2 * S->L + 1;

  PetscFunctionBegin;
  PetscCall(PetscFree(S->fb));
  S->V = V && V->p ? V : NULL;
  if (!S->V) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1((size_t)nw * n, &S->fb));
  for (PetscInt w = 0; w < nw; w++) {
    PetscReal *f = S->fb + (size_t)w * n;
    SgPodLstmVARIterate(V, S->L, S->a + w * S->K, f);
    for (PetscInt i = 0; i < n; i++) f[i] = (f[i] - S->lo[i % S->K]) / (S->hi[i % S->K] - S->lo[i % S->K]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SgPodLstmSeriesUnscale(const SgPodLstmSeries *S, PetscInt n, const PetscReal s[], PetscReal a[])
{
  for (PetscInt j = 0; j < n; j++)
    for (PetscInt k = 0; k < S->K; k++) a[j * S->K + k] = S->lo[k] + s[j * S->K + k] * (S->hi[k] - S->lo[k]);
}

PetscErrorCode SgPodLstmSeriesWriteWindows(MPI_Comm comm, const SgPodLstmSeries *S, const char path[])
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    SgDataset  ds;
    PetscInt   shape[2] = {S->L, S->K}, yshape[2] = {S->R * S->L, S->K}, n = S->L * S->K, ny = S->R * n;
    PetscReal *x, *y;
    PetscCall(SgDatasetCreateAs(PETSC_COMM_SELF, path, "field_snapshots", SG_FILE_WINDOWS, PETSC_TRUE, &ds));
    PetscCall(SgDatasetSetProvenance(ds, "", S->fb ? "podlstm: training windows of scaled POD coefficients (x: L steps in, y: the next L less the base's forecast of them)" : "podlstm: training windows of scaled POD coefficients (x: L steps in, y: the next L)"));
    PetscCall(SgDatasetDefineField(ds, "x", SG_DTYPE_F64, 2, shape, "scaled POD coefficient", 0));
    PetscCall(SgDatasetDefineField(ds, "y", SG_DTYPE_F64, 2, yshape, "scaled POD coefficient", 0));
    PetscCall(PetscMalloc2(S->ntr * n, &x, S->ntr * ny, &y));
    for (PetscInt w = 0; w < S->ntr; w++) {
      SgPodLstmSeriesWindow(S, S->s_tr0 + w, x + w * n, y + w * ny);
      for (PetscInt i = n; i < ny; i++) y[w * ny + i] = S->s[(S->s_tr0 + w + S->L) * S->K + i]; /* the rollout's later windows (no base) */
    }
    PetscCall(SgDatasetAppendBegin(ds, S->ntr));
    PetscCall(SgDatasetAppendField(ds, "x", SG_DTYPE_F64, x));
    PetscCall(SgDatasetAppendField(ds, "y", SG_DTYPE_F64, y));
    PetscCall(SgDatasetAppendCommit(ds));
    PetscCall(SgDatasetClose(&ds));
    PetscCall(PetscFree2(x, y));
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmSeriesFree(SgPodLstmSeries *S)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(S->lo, S->hi, S->s, S->a));
  PetscCall(PetscFree(S->fb));
  PetscCall(PetscFree2(S->fG, S->fg));
  if (S->Vs) PetscCall(SgPodLstmVARFree(S->Vs));
  PetscCall(PetscFree(S->Vs));
  PetscFunctionReturn(PETSC_SUCCESS);
}
