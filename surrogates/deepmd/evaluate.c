/* A model against labelled frames: DeePMD-kit's `dp test` (RMSEs of energy, force, virial; with a
   prefix also its detail files) and
   `dp change-bias` (refit the per-type energy bias to the frames' energies). */
#include <math.h>
#include <stdio.h>
#include "deepmd_train.h"
#include "sgdeepmd.h"
#include "sgdataset.h"
#include "sgsys.h"
#include "sgwrite.h"

/* DeePMD-kit's `dp test -d PREFIX` detail files: per system (file) a header line "# FILE: columns"
   and one row per frame (energies, virials) or per atom (forces), labels then predictions. */
static const char *const detail_ext[5] = {"e.out", "e_peratom.out", "f.out", "v.out", "v_peratom.out"};
static const char *const detail_cols[5] = {"data_e pred_e", "data_e pred_e", "data_fx data_fy data_fz pred_fx pred_fy pred_fz",
                                           "data_vxx data_vxy data_vxz data_vyx data_vyy data_vyz data_vzx data_vzy data_vzz pred_vxx pred_vxy pred_vxz pred_vyx pred_vyy pred_vyz pred_vzx pred_vzy pred_vzz",
                                           "data_vxx data_vxy data_vxz data_vyx data_vyy data_vyz data_vzx data_vzy data_vzz pred_vxx pred_vxy pred_vxz pred_vyx pred_vyy pred_vyz pred_vzx pred_vzy pred_vzz"};

/* The detail files go through the write path (io/include/sgwrite.h): checked on every rank before the
   first frame (SgDPTestDetailCheck), written by rank 0 to PREFIX.*.tmp, each beginning with the line
   "# surge-file: dp test detail" (a comment to DeePMD-kit's readers and numpy.loadtxt), and renamed
   over the earlier files only when the whole test has run; on any failure the temporaries are
   removed and the earlier files stay as they were. */
PetscErrorCode SgDPTestDetailCheck(MPI_Comm comm, const char prefix[])
{
  PetscFunctionBegin;
  for (int k = 0; k < 5; k++) {
    char fn[PETSC_MAX_PATH_LEN];
    PetscCall(PetscSNPrintf(fn, sizeof fn, "%s.%s", prefix, detail_ext[k]));
    PetscCall(SgWriteCheck(comm, "the dp test detail prefix", fn, SG_FILE_DP_DETAIL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rank 0: open the five temporaries (the virial ones are discarded at the end if no file had virials) */
static PetscErrorCode DetailOpen(const char prefix[], SgTextFile tf[5])
{
  PetscFunctionBegin;
  for (int k = 0; k < 5; k++) {
    char fn[PETSC_MAX_PATH_LEN];
    PetscCall(PetscSNPrintf(fn, sizeof fn, "%s.%s", prefix, detail_ext[k]));
    PetscCall(SgTextFileOpen("the dp test detail prefix", fn, SG_FILE_DP_DETAIL, "#", PETSC_FALSE, &tf[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rank 0 appends a block of frames: E[nb][2] (label, prediction), F[nb][3N][2], V[nb][9][2] */
static PetscErrorCode DetailWrite(SgTextFile tf[5], const char file[], PetscBool header, PetscBool hv, PetscInt N, PetscInt nb, const PetscReal *E, const PetscReal *F, const PetscReal *V)
{
  PetscFunctionBegin;
  for (int k = 0; k < (hv ? 5 : 3); k++) {
    FILE *fp;
    PetscCall(SgTextFileGetFILE(tf[k], &fp));
    if (header) fprintf(fp, "# %s: %s\n", file, detail_cols[k]);
    for (PetscInt f = 0; f < nb; f++) {
      if (k <= 1) fprintf(fp, "%.12e %.12e\n", E[2 * f] / (k ? N : 1), E[2 * f + 1] / (k ? N : 1));
      else if (k == 2)
        for (PetscInt i = 0; i < N; i++) {
          const PetscReal *q = F + (size_t)f * 6 * N + 6 * i;
          fprintf(fp, "%.12e %.12e %.12e %.12e %.12e %.12e\n", q[0], q[2], q[4], q[1], q[3], q[5]);
        }
      else {
        const PetscReal *q = V + 18 * f;
        for (int c = 0; c < 2; c++)
          for (int j = 0; j < 9; j++) fprintf(fp, "%.12e%s", q[2 * j + c] / (k == 4 ? N : 1), c == 1 && j == 8 ? "\n" : " ");
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rank 0: commit the files written (the virial ones only if some file had virials), or remove all */
static PetscErrorCode DetailClose(SgTextFile tf[5], PetscBool anyv, PetscBool ok)
{
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  for (int k = 0; k < 5; k++) {
    if (ok && !ierr && (k < 3 || anyv)) ierr = SgTextFileClose(&tf[k]);
    else PetscCall(SgTextFileDiscard(&tf[k]));
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Test(SgDPModel m, PetscInt nfiles, const char (*files)[PETSC_MAX_PATH_LEN], PetscInt maxframes, const char detail[], SgTextFile tf[5], PetscBool *anyv, MPI_Comm comm, SgDPTestResult *r)
{
  const PetscInt BLK = 32; /* frames per block of detail output (gathered on rank 0) */
  PetscMPIInt    rank, size;
  PetscReal      acc[8] = {0}; /* sum dE^2, |dE|, dE^2/N^2, |dE|/N, dF^2, |dF|, dV^2, dV^2/N^2 */
  PetscInt       counted = 0, N = 0, nfr = 0, ncomp = 0;
  int64_t        quota[16], total = 0;
  PetscBool      allv = PETSC_TRUE;
  SgDPFrames     fr[16];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SgDPModelSync(m));
  /* maxframes > 0: that many frames in all, shared among the files in proportion to their sizes (at
     least one each), so every validation system is seen; 0: all frames */
  PetscCheck(nfiles <= 16, comm, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: dp test on %" PetscInt_FMT " files; at most 16", nfiles);
  for (PetscInt fi = 0; fi < nfiles; fi++) { /* each file opened once for all its frames */
    PetscCall(SgDPFramesOpen(m, files[fi], &fr[fi]));
    quota[fi] = fr[fi].nf;
    total += quota[fi];
  }
  if (maxframes > 0 && total > maxframes)
    for (PetscInt fi = 0; fi < nfiles; fi++) quota[fi] = PetscMin(quota[fi], PetscMax(1, (quota[fi] * (int64_t)maxframes) / total));
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    const PetscInt *type = fr[fi].type;
    const PetscBool hv   = fr[fi].has_virial;
    int64_t         nf   = fr[fi].nf;
    PetscReal      *x, box[9], e, *fl, *fp, v[9], vp[9], ep, *DE = NULL, *DF = NULL, *DV = NULL;
    N = fr[fi].N;
    allv = (PetscBool)(allv && hv);
    PetscCall(PetscMalloc3(3 * N, &x, 3 * N, &fl, 3 * N, &fp));
    if (detail && detail[0]) PetscCall(PetscMalloc3(2 * BLK, &DE, (size_t)6 * N * BLK, &DF, 18 * BLK, &DV));
    nf = PetscMin(nf, quota[fi]);
    for (int64_t k0 = 0; k0 < nf; k0 += BLK) {
      PetscInt nb = 0;
      if (DE) {
        PetscCall(PetscArrayzero(DE, 2 * BLK));
        PetscCall(PetscArrayzero(DF, (size_t)6 * N * BLK));
        PetscCall(PetscArrayzero(DV, 18 * BLK));
      }
      for (int64_t k = k0; k < k0 + BLK && k < nf; k++, counted++, nb++) {
        if (counted % size != rank) continue;
        PetscCall(SgDPFramesRead(&fr[fi], k, 1, x, box, &e, fl, v));
        PetscCall(SgDeepmdCompute(m, N, x, type, SgDPBoxIsZero(box) ? NULL : box, &ep, fp, vp, NULL));
        acc[0] += (ep - e) * (ep - e);
        acc[1] += PetscAbsReal(ep - e);
        acc[2] += (ep - e) * (ep - e) / ((PetscReal)N * N);
        acc[3] += PetscAbsReal(ep - e) / N;
        for (PetscInt q = 0; q < 3 * N; q++) {
          acc[4] += (fp[q] - fl[q]) * (fp[q] - fl[q]);
          acc[5] += PetscAbsReal(fp[q] - fl[q]);
        }
        if (hv)
          for (int q = 0; q < 9; q++) acc[6] += (vp[q] - v[q]) * (vp[q] - v[q]), acc[7] += (vp[q] - v[q]) * (vp[q] - v[q]) / ((PetscReal)N * N);
        nfr++;
        ncomp += 3 * N;
        if (DE) { /* this rank's rows of the block; the others stay zero and the sum gathers them */
          PetscInt f = (PetscInt)(k - k0);
          DE[2 * f] = e;
          DE[2 * f + 1] = ep;
          for (PetscInt q = 0; q < 3 * N; q++) {
            DF[(size_t)6 * N * f + 2 * q] = fl[q];
            DF[(size_t)6 * N * f + 2 * q + 1] = fp[q];
          }
          if (hv)
            for (int q = 0; q < 9; q++) DV[18 * f + 2 * q] = v[q], DV[18 * f + 2 * q + 1] = vp[q];
        }
      }
      if (DE) {
        PetscCallMPI(MPI_Reduce(rank ? DE : MPI_IN_PLACE, DE, (PetscMPIInt)(2 * nb), MPIU_REAL, MPIU_SUM, 0, comm));
        PetscCallMPI(MPI_Reduce(rank ? DF : MPI_IN_PLACE, DF, (PetscMPIInt)(6 * N * nb), MPIU_REAL, MPIU_SUM, 0, comm));
        PetscCallMPI(MPI_Reduce(rank ? DV : MPI_IN_PLACE, DV, (PetscMPIInt)(18 * nb), MPIU_REAL, MPIU_SUM, 0, comm));
        if (!rank) PetscCall(DetailWrite(tf, files[fi], (PetscBool)(k0 == 0), hv, N, nb, DE, DF, DV));
        if (hv) *anyv = PETSC_TRUE;
      }
    }
    PetscCall(PetscFree3(x, fl, fp));
    PetscCall(PetscFree3(DE, DF, DV));
    PetscCall(SgDPFramesClose(&fr[fi]));
  }
  {
    PetscReal cnt[2] = {(PetscReal)nfr, (PetscReal)ncomp};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, acc, 8, MPIU_REAL, MPIU_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPIU_REAL, MPIU_SUM, comm));
    r->nframes = (PetscInt)cnt[0];
    r->natoms = N;
    PetscReal F = PetscMax(cnt[0], 1), C = PetscMax(cnt[1], 1);
    r->e_rmse = sqrt(acc[0] / F);
    r->e_mae = acc[1] / F;
    r->e_rmse_atom = sqrt(acc[2] / F);
    r->e_mae_atom = acc[3] / F;
    r->f_rmse = sqrt(acc[4] / C);
    r->f_mae = acc[5] / C;
    r->has_virial = allv;
    r->v_rmse = sqrt(acc[6] / (9 * F));
    r->v_rmse_atom = sqrt(acc[7] / (9 * F));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTest(SgDPModel m, PetscInt nfiles, const char (*files)[PETSC_MAX_PATH_LEN], PetscInt maxframes, const char detail[], MPI_Comm comm, SgDPTestResult *r)
{
  SgTextFile     tf[5] = {NULL, NULL, NULL, NULL, NULL};
  PetscBool      anyv  = PETSC_FALSE, out = (PetscBool)(detail && detail[0]);
  PetscMPIInt    rank;
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (out) {
    for (PetscInt fi = 0; fi < nfiles; fi++) PetscCall(SgInputRegister(files[fi], SG_PATH_IN));
    PetscCall(SgDPTestDetailCheck(comm, detail));
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = DetailOpen(detail, tf);
    if (ierr) PetscCall(DetailClose(tf, PETSC_FALSE, PETSC_FALSE));
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  ierr = Test(m, nfiles, files, maxframes, out ? detail : NULL, tf, &anyv, comm, r);
  if (ierr) { /* nothing half-written is left behind */
    if (!rank && out) PetscCall(DetailClose(tf, PETSC_FALSE, PETSC_FALSE));
    PetscCall(ierr);
  }
  if (out) {
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = DetailClose(tf, anyv, PETSC_TRUE);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDPTestPrint(MPI_Comm comm, const SgDPTestResult *r)
{
  PetscFunctionBegin;
  PetscCall(PetscPrintf(comm, "# number of test data : %" PetscInt_FMT " frames of %" PetscInt_FMT " atoms\n", r->nframes, r->natoms));
  PetscCall(PetscPrintf(comm, "Energy MAE         : %e eV\nEnergy RMSE        : %e eV\n", r->e_mae, r->e_rmse));
  PetscCall(PetscPrintf(comm, "Energy MAE/Natoms  : %e eV\nEnergy RMSE/Natoms : %e eV\n", r->e_mae_atom, r->e_rmse_atom));
  PetscCall(PetscPrintf(comm, "Force  MAE         : %e eV/A\nForce  RMSE        : %e eV/A\n", r->f_mae, r->f_rmse));
  if (r->has_virial) PetscCall(PetscPrintf(comm, "Virial RMSE        : %e eV\nVirial RMSE/Natoms : %e eV\n", r->v_rmse, r->v_rmse_atom));
  else PetscCall(PetscPrintf(comm, "Virial RMSE        : (no virial labels)\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DeePMD-kit's `dp change-bias` (mode change): shift the per-type energy bias of a trained model by
   the least-squares fit of its energy residuals E_label - E_model on the frames of `files`, so the
   model's mean energy error on them vanishes. Forces and virials do not depend on the bias. Each rank
   evaluates every size-th frame; the residuals are summed into one array (a sum with zeros: exact),
   so every rank solves the same system and 1 and 2 ranks give the same bias bit for bit. */
PetscErrorCode SgDPChangeBias(SgDPModel m, PetscInt nfiles, const char (*files)[PETSC_MAX_PATH_LEN], MPI_Comm comm)
{
  const PetscInt T = m->cfg.ntypes;
  PetscMPIInt    rank, size;
  int64_t        nftot = 0, f = 0;
  PetscReal     *counts, *res, *natoms, delta[SG_DP_MAXT], old[SG_DP_MAXT], before = 0, after = 0;
  SgDPFrames     fr[16];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(nfiles >= 1, comm, PETSC_ERR_USER_INPUT, "deepmd: change_bias: no data to fit the bias on: set deepmd: {data: [frames.h5, ...]}");
  PetscCheck(nfiles <= 16, comm, PETSC_ERR_ARG_OUTOFRANGE, "deepmd: change_bias on %" PetscInt_FMT " files; at most 16", nfiles);
  for (PetscInt fi = 0; fi < nfiles; fi++) { /* each file opened once for all its frames */
    PetscCall(SgDPFramesOpen(m, files[fi], &fr[fi]));
    nftot += fr[fi].nf;
  }
  PetscCheck(nftot > 0, comm, PETSC_ERR_USER_INPUT, "deepmd: change_bias: the data files hold no frames");
  PetscCall(PetscCalloc3((size_t)nftot * T, &counts, nftot, &res, nftot, &natoms));
  PetscCall(SgDPModelSync(m));
  for (PetscInt fi = 0; fi < nfiles; fi++) {
    const PetscInt *type = fr[fi].type, N = fr[fi].N;
    const int64_t   nf   = fr[fi].nf;
    PetscReal      *x, *fp, box[9], e, ep;
    PetscCall(PetscMalloc2(3 * N, &x, 3 * N, &fp));
    for (int64_t k = 0; k < nf; k++, f++) {
      natoms[f] = N; /* every rank fills the compositions; the residuals only for its own frames */
      for (PetscInt i = 0; i < N; i++) counts[f * T + type[i]] += 1;
      if (f % size != rank) continue;
      PetscCall(SgDPFramesRead(&fr[fi], k, 1, x, box, &e, NULL, NULL));
      PetscCheck(isfinite(e), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "deepmd: change_bias: frame %" PetscInt64_FMT " of %s has energy %g: fix or drop that frame", (PetscInt64)k, files[fi], (double)e);
      PetscCall(SgDeepmdCompute(m, N, x, type, SgDPBoxIsZero(box) ? NULL : box, &ep, fp, NULL, NULL));
      res[f] = e - ep;
    }
    PetscCall(PetscFree2(x, fp));
    PetscCall(SgDPFramesClose(&fr[fi]));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, res, (PetscMPIInt)nftot, MPIU_REAL, MPIU_SUM, comm));
  PetscCall(SgDPPerTypeFit(T, (PetscInt)nftot, counts, res, delta));
  for (int64_t q = 0; q < nftot; q++) {
    PetscReal shift = 0;
    for (PetscInt t = 0; t < T; t++) shift += counts[q * T + t] * delta[t];
    before += PetscSqr(res[q] / natoms[q]);
    after += PetscSqr((res[q] - shift) / natoms[q]);
  }
  for (PetscInt t = 0; t < T; t++) {
    old[t] = m->bias[t];
    m->bias[t] += delta[t];
  }
  PetscCall(PetscPrintf(comm, "deepmd: change_bias on %" PetscInt64_FMT " frames of %s%s: energy RMSE/atom %.6e -> %.6e eV\n", (PetscInt64)nftot, files[0], nfiles > 1 ? ", ..." : "", sqrt(before / nftot), sqrt(after / nftot)));
  for (PetscInt t = 0; t < T; t++) PetscCall(PetscPrintf(comm, "deepmd: type %s: bias_atom_e %.9f -> %.9f (shift %+.6e eV)\n", m->cfg.type_map[t], (double)old[t], (double)m->bias[t], (double)delta[t]));
  PetscCall(PetscFree3(counts, res, natoms));
  PetscFunctionReturn(PETSC_SUCCESS);
}
