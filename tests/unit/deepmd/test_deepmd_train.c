/* Deep Potential training, model files, tabulation and model deviation (asserted).

   Data: frames labelled by a known potential -- Morse pairs per type pair, cosine-tapered to zero
   between 2.5 and 3.0 A -- 16 atoms (1/3 type A, 2/3 type B) in a periodic 5 A box, written as
   md_frames datasets and read back through the loader, exactly the `surge train` path.

   mode fit (one rank):
     1. training (DeePMD-kit loss and schedule) brings the validation force RMSE below 30% of the
        RMS force (the untrained model scores ~100%; a model that learned nothing cannot pass);
     2. model file round trip: save, load, and the loaded model predicts bit-identical E, F, virial;
     3. tabulated embedding (step 0.002): forces match the nets to 1e-6 eV/A;
     4. model deviation: two copies of one model deviate by exactly 0; the trained and the untrained
        model deviate by the value computed by hand from their forces; the md.forces uncertainty
        function (owned atoms + ghosts, as MD calls it) gives the same value to 1e-10, and its
        model_devi.out record (max/min/avg virial and force deviation) equals the hand values;
     5. checkpoints: the save_freq checkpoint after step 4 of 6 equals a 4-step run, and `restart`
        from a step-4 checkpoint for steps 5-6 equals the uninterrupted 6-step run, bit for bit; a
        plain model file is refused as a restart point;
     6. float32 training: the same accuracy class as float64; its model file stores the weights as f32
        (exact) and reads back bit-identical predictions;
     7. change_bias (dp change-bias): afterwards the mean energy residual on the fitted frames is 0
        (fixed composition: the least-squares shift removes exactly the mean), the energy RMSE is no
        larger, forces are unchanged bit for bit, and a model whose bias was shifted by hand first
        ends with the same energies (the fit only depends on the residuals);
     8. two systems (16 atoms with 1/3 A, 24 atoms with 1/2 A: different sizes and compositions)
        in one run: the energy bias is the exact least-squares per-type fit over both compositions
        (solved here independently), the model learns both (force RMSE below 30 % of the RMS force
        on each validation set, and on the 24-atom set below that of the model trained on the
        16-atom system alone), and `restart` after step 4 of 6 is bit-identical;
     9. a NaN force label and a NaN weight stop training with clear errors before any update or
        checkpoint.
   mode mpi (two ranks): six training steps with a global batch of 2 frames from the two systems on 2
     ranks equal the same steps on one rank (rank 0 alone, PETSC_COMM_SELF) to 1e-12 relative in every
     parameter.
   mode zero (1, 2 or 3 ranks; issue 38): the deck's ZeRO stage (SgDPTrainOpts.shard, -deepmd_shard):
     six steps of batch 3 at stage 1 equal stage 0 bit for bit, stage 2 to 1e-12 relative (the
     reduce-scatter may add in another order); a stage-2 checkpoint at step 3 (the surrogate's own file,
     Adam's moments written block by block) restarted at stage 1 equals stage 0 to 1e-12, and the same
     file with a NaN in the last rank's block is refused by every rank; the stage
     reaches the trainer (stage 1 with plain SGD refused); on 2-3 ranks lion_cub's momentum-sync
     interval reaches it (every step and never give different weights). Stage 3 (parameters partitioned
     between steps) with a checkpoint at step 3 (the weights gathered from the blocks) equals stage 0
     to 1e-12, and that checkpoint restarted at stage 0 too; that stage-3 run reads its parameters by
     buckets (-deepmd_shard_bucket_bytes 8: one per tensor, 26), and so does the run of global batch 2
     on 3 ranks (one rank without frames reads nothing, and no rank waits for it); both hold their
     gradient by buckets too, and the stage-2 run with its checkpoint by gradient buckets of >= 2 KiB
     (zerograd.c: 7 buckets, 2 open at once by -deepmd_shard_grad_open_buckets, as the trainer's
     start-up line must state; the rank without frames sends nothing). The stage-3 run by buckets of 8
     fetches ahead (zero3b.c) at least 95% of its fills in the steps that replay the step before's uses,
     on the rank with the fewest (the trainer's end-of-run line, read through PetscVFPrintf; the guess
     of the first step fetched 33%). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "dptest_common.h"
#include "sgdataset.h"
#include "../../lib/sgtesth5damage.h"

enum { NA = 16 };
static const double BOXL = 5.0;

static double Pair(int ti, int tj, double r, double *dv)
{
  double r0 = (ti + tj == 0) ? 1.6 : (ti + tj == 1 ? 1.2 : 1.4), D = ti + tj == 1 ? 0.6 : 0.3, a = 2.0;
  double e = exp(-a * (r - r0)), V = D * ((1 - e) * (1 - e) - 1), dV = D * 2 * (1 - e) * a * e, s = 1, ds = 0;
  if (r > 3.0) {
    s = 0;
    ds = 0;
  } else if (r > 2.5) {
    s = 0.5 * (1 + cos(M_PI * (r - 2.5) / 0.5));
    ds = -0.5 * M_PI / 0.5 * sin(M_PI * (r - 2.5) / 0.5);
  }
  *dv = dV * s + V * ds;
  return V * s;
}

/* energy, forces f[3n] and virial of n atoms in a periodic cubic box of side L */
static double Label(PetscInt n, double L, const double *x, const PetscInt *t, double *f, double *vir)
{
  double E = 0;
  for (int k = 0; k < 3 * n; k++) f[k] = 0;
  for (int k = 0; k < 9; k++) vir[k] = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double d[3], r2 = 0, dv;
      for (int q = 0; q < 3; q++) {
        d[q] = x[3 * j + q] - x[3 * i + q];
        d[q] -= L * round(d[q] / L);
        r2 += d[q] * d[q];
      }
      double r = sqrt(r2);
      if (r >= 3.0) continue;
      E += Pair(t[i], t[j], r, &dv);
      for (int q = 0; q < 3; q++) {
        f[3 * j + q] -= dv * d[q] / r;
        f[3 * i + q] += dv * d[q] / r;
        for (int p = 0; p < 3; p++) vir[3 * p + q] -= d[p] * dv * d[q] / r;
      }
    }
  return E;
}

/* nf frames of n atoms (the first nA of type A) in a cubic box of side L; frame nan_frame (if >= 0)
   gets a NaN force component */
static PetscErrorCode MakeSystemNaN(const char *path, int nf, unsigned long long seed, PetscInt n, PetscInt nA, double L, int nan_frame)
{
  SgDataset   ds;
  PetscInt   *t, *tt;
  const char *tm[2] = {"A", "B"};
  double      box[9] = {L, 0, 0, 0, L, 0, 0, 0, L}, *x, *f, v[9], E;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc4(n, &t, n, &tt, 3 * n, &x, 3 * n, &f));
  for (int i = 0; i < n; i++) t[i] = i < nA ? 0 : 1;
  PetscCall(SgDatasetCreateMDFrames(PETSC_COMM_SELF, path, PETSC_TRUE, n, t, 2, tm, SG_DTYPE_F64, PETSC_TRUE, -1, NULL, &ds));
  for (int k = 0; k < nf; k++) {
    DPRandomFrame(&seed, n, box, 1.0, x, tt);
    E = Label(n, L, x, t, f, v);
    if (k == nan_frame) f[7] = NAN;
    PetscCall(SgDatasetAppendBegin(ds, 1));
    PetscCall(SgDatasetAppendField(ds, "coord", SG_DTYPE_F64, x));
    PetscCall(SgDatasetAppendField(ds, "box", SG_DTYPE_F64, box));
    PetscCall(SgDatasetAppendField(ds, "energy", SG_DTYPE_F64, &E));
    PetscCall(SgDatasetAppendField(ds, "force", SG_DTYPE_F64, f));
    PetscCall(SgDatasetAppendField(ds, "virial", SG_DTYPE_F64, v));
    PetscCall(SgDatasetAppendCommit(ds));
  }
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscFree4(t, tt, x, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MakeSystem(const char *path, int nf, unsigned long long seed, PetscInt n, PetscInt nA, double L) { return MakeSystemNaN(path, nf, seed, n, nA, L, -1); }
static PetscErrorCode MakeData(const char *path, int nf, unsigned long long seed) { return MakeSystem(path, nf, seed, NA, NA / 3, BOXL); }

static void Config(SgDPConfig *c)
{
  PetscMemzero(c, sizeof *c);
  c->ntypes = 2;
  strcpy(c->type_map[0], "A");
  strcpy(c->type_map[1], "B");
  c->rcut = 3.5;
  c->rcut_smth = 2.0;
  c->sel[0] = 16;
  c->sel[1] = 28;
  c->nemb = 3;
  c->emb[0] = 8;
  c->emb[1] = 16;
  c->emb[2] = 32;
  c->axis = 4;
  c->nfit = 2;
  c->fit[0] = c->fit[1] = 32;
  c->fit_resnet_dt = PETSC_TRUE;
}

static void Opts(SgDPTrainOpts *o, const char *dir, PetscInt steps, PetscInt batch)
{
  PetscMemzero(o, sizeof *o);
  o->nfiles = 1;
  o->nvalid = 1;
  snprintf(o->files[0], PETSC_MAX_PATH_LEN, "%s/pair_train.h5", dir);
  snprintf(o->valid[0], PETSC_MAX_PATH_LEN, "%s/pair_valid.h5", dir);
  o->numb_steps = steps;
  o->batch_size = batch;
  o->disp_freq = steps;
  o->decay_steps = 50;
  o->stat_frames = 20;
  o->valid_frames = 0;
  o->seed = 3;
  o->start_lr = 5e-3;
  o->stop_lr = 1e-4;
  o->start_pref_e = 0.02;
  o->limit_pref_e = 1;
  o->start_pref_f = 1000;
  o->limit_pref_f = 1;
  o->start_pref_v = 0.02;
  o->limit_pref_v = 1;
}

/* mean and RMS of E_label - E_model over the frames of a file */
static PetscErrorCode EnergyResiduals(SgDPModel m, const char *path, double *mean, double *rms)
{
  SgDataset ds;
  int64_t   nf;
  PetscInt  t[NA];

  PetscFunctionBeginUser;
  for (int i = 0; i < NA; i++) t[i] = i < NA / 3 ? 0 : 1;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetGetNumSamples(ds, &nf));
  *mean = *rms = 0;
  for (int64_t k = 0; k < nf; k++) {
    double x[3 * NA], box[9], f[3 * NA], e, ep;
    PetscCall(SgDatasetReadField(ds, "coord", k, 1, SG_DTYPE_F64, x));
    PetscCall(SgDatasetReadField(ds, "box", k, 1, SG_DTYPE_F64, box));
    PetscCall(SgDatasetReadField(ds, "energy", k, 1, SG_DTYPE_F64, &e));
    PetscCall(SgDeepmdCompute(m, NA, x, t, box, &ep, f, NULL, NULL));
    *mean += (e - ep) / nf;
    *rms += (e - ep) * (e - ep) / nf;
  }
  *rms = sqrt(*rms);
  PetscCall(SgDatasetClose(&ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* `restart`: the 6-step run of oa (lr decaying every 2 steps) writes its checkpoint `ckpt` after step
   4; a run restarted from it for steps 5-6 must end bit-identical to the uninterrupted one (weights,
   Adam moments and step, data position). *eq: E and F of the two on frame x equal bit for bit. */
static PetscErrorCode RestartMatches(const SgDPConfig *c, SgDPTrainOpts oa, const char *ckpt, const double *x, const PetscInt *t, const double *box, PetscBool *eq)
{
  SgDPModel     ma, mb;
  SgDPTrainOpts ob;
  double        ea, eb, fa[3 * NA], fb[3 * NA];

  PetscFunctionBeginUser;
  oa.numb_steps = 6;
  oa.nvalid = 0;
  oa.decay_steps = 2;
  oa.save_freq = 4;
  PetscCall(PetscStrncpy(oa.save_ckpt, ckpt, sizeof oa.save_ckpt));
  ob = oa;
  ob.save_freq = 0;
  ob.save_ckpt[0] = 0;
  PetscCall(PetscStrncpy(ob.restart, ckpt, sizeof ob.restart));
  PetscCall(SgDPModelCreate(c, &ma));
  PetscCall(SgDPModelInitWeights(ma, 5));
  PetscCall(SgDPTrain(ma, &oa, PETSC_COMM_SELF));
  PetscCall(SgDPModelLoad(ob.restart, &mb));
  PetscCall(SgDPTrain(mb, &ob, PETSC_COMM_SELF));
  PetscCall(SgDeepmdCompute(ma, NA, x, t, box, &ea, fa, NULL, NULL));
  PetscCall(SgDeepmdCompute(mb, NA, x, t, box, &eb, fb, NULL, NULL));
  *eq = (PetscBool)(!memcmp(&ea, &eb, sizeof ea) && !memcmp(fa, fb, sizeof fa));
  PetscCall(SgDPModelDestroy(&ma));
  PetscCall(SgDPModelDestroy(&mb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The trainer's end-of-run figure for the fills fetched ahead in the steps that replayed the step
   before's order of uses (zero3b.c; percent of the rank with the fewest, printed by rank 0; -1 until
   printed), and the open gradient buckets its start-up line states (zerograd.c; -1 until printed).
   The figures are read from what the trainer prints, so the test checks what users see. */
static double replay_pct = -1;
static int    open_buckets = -1;
static PetscErrorCode (*vfprintf_prev)(FILE *, const char[], va_list);
static PetscErrorCode ReadReplayLine(FILE *fd, const char fmt[], va_list ap)
{
  const char *key = "order of uses: ";
  char        line[2048];
  const char *p;
  va_list     aq;

  va_copy(aq, ap);
  (void)vsnprintf(line, sizeof line, fmt, aq);
  va_end(aq);
  p = strstr(line, key);
  if (p && sscanf(p + strlen(key), "%lf", &replay_pct) != 1) replay_pct = -1;
  for (p = strstr(line, "at most "); p; p = strstr(p + 1, "at most ")) { /* "... + at most N open buckets, ..." */
    int  n;
    char w[8];
    if (sscanf(p, "at most %d open %7[a-z]", &n, w) == 2 && !strcmp(w, "buckets")) open_buckets = n;
  }
  return vfprintf_prev(fd, fmt, ap);
}

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n")); \
      fails++; \
    } \
  } while (0)

int main(int argc, char **argv)
{
  PetscMPIInt rank, size;
  PetscInt    fails = 0;
  const char *dir;
  char        path[PETSC_MAX_PATH_LEN];

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: %s fit|mpi|zero|data TMPDIR", argv[0]);
  dir = argv[2];
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (!rank) {
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair_train.h5", dir));
    PetscCall(MakeData(path, 48, 11));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair_valid.h5", dir));
    PetscCall(MakeData(path, 16, 12));
    /* a second system: 24 atoms, half of them A, at about the same density */
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair24_train.h5", dir));
    PetscCall(MakeSystem(path, 48, 13, 24, 12, 5.72));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair24_valid.h5", dir));
    PetscCall(MakeSystem(path, 16, 14, 24, 12, 5.72));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (!strcmp(argv[1], "data")) { /* only write the datasets (for the surge train deck test) */
  } else if (!strcmp(argv[1], "fit")) {
    SgDPConfig     c;
    SgDPTrainOpts  o;
    SgDPModel      m, m0, ml;
    SgDPTestResult r0, r;
    double         t0 = MPI_Wtime();
    Config(&c);
    Opts(&o, dir, 600, 2);
    PetscCall(SgDPModelCreate(&c, &m));
    PetscCall(SgDPModelInitWeights(m, 5));
    PetscCall(SgDPModelCreate(&c, &m0)); /* an untrained copy with the same statistics, for 4. */
    PetscCall(SgDPModelInitWeights(m0, 5));
    PetscCall(SgDPTest(m, 1, (const char(*)[PETSC_MAX_PATH_LEN])o.valid, 0, NULL, PETSC_COMM_SELF, &r0));
    PetscCall(SgDPTrain(m, &o, PETSC_COMM_SELF));
    PetscCall(SgDPTest(m, 1, (const char(*)[PETSC_MAX_PATH_LEN])o.valid, 0, NULL, PETSC_COMM_SELF, &r));
    PetscCall(SgDPTestPrint(PETSC_COMM_SELF, &r));
    /* the RMS force of the validation labels: the RMSE of a zero-force model */
    double frms = 0, x[3 * NA], box[9] = {BOXL, 0, 0, 0, BOXL, 0, 0, 0, BOXL};
    PetscInt t[NA];
    {
      SgDataset ds;
      double   *fl;
      PetscCall(PetscMalloc1(16 * 3 * NA, &fl));
      PetscCall(SgDatasetOpen(PETSC_COMM_SELF, o.valid[0], SG_DATASET_READ, &ds));
      PetscCall(SgDatasetReadField(ds, "force", 0, 16, SG_DTYPE_F64, fl));
      PetscCall(SgDatasetReadField(ds, "coord", 0, 1, SG_DTYPE_F64, x));
      PetscCall(SgDatasetClose(&ds));
      for (int k = 0; k < 16 * 3 * NA; k++) frms += fl[k] * fl[k];
      frms = sqrt(frms / (16 * 3 * NA));
      PetscCall(PetscFree(fl));
      for (int i = 0; i < NA; i++) t[i] = i < NA / 3 ? 0 : 1;
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "1. force RMSE %.4f eV/A = %.1f%% of the RMS force %.4f (untrained: %.1f%%); energy RMSE/atom %.4f eV; %.1f s\n", r.f_rmse, 100 * r.f_rmse / frms, frms, 100 * r0.f_rmse / frms, r.e_rmse_atom, MPI_Wtime() - t0));
    CHECK(r.f_rmse < 0.30 * frms, "training on the pair potential: force RMSE %g is not below 30%% of the RMS force %g", r.f_rmse, frms);
    /* 2. round trip */
    double e1, e2, f1[3 * NA], f2[3 * NA], v1[9], v2[9];
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair_model.h5", dir));
    PetscCall(SgDPModelSave(m, path));
    PetscCall(SgDPModelLoad(path, &ml));
    PetscCall(SgDeepmdCompute(m, NA, x, t, box, &e1, f1, v1, NULL));
    PetscCall(SgDeepmdCompute(ml, NA, x, t, box, &e2, f2, v2, NULL));
    PetscBool same = (PetscBool)(!memcmp(&e1, &e2, sizeof e1) && !memcmp(f1, f2, sizeof f1) && !memcmp(v1, v2, sizeof v1));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "2. save/load round trip: %s (E %.15f vs %.15f)\n", same ? "bit-identical" : "DIFFERENT", e1, e2));
    CHECK(same, "model file round trip changed the predictions");
    /* 3. tabulation */
    double ft[3 * NA], et, vt[9], df = 0;
    PetscCall(SgDeepmdCompress(ml, 0.002, 0.5));
    PetscCall(SgDeepmdCompute(ml, NA, x, t, box, &et, ft, vt, NULL));
    for (int k = 0; k < 3 * NA; k++) df = PetscMax(df, fabs(ft[k] - f1[k]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "3. tabulated (%" PetscInt_FMT " intervals) vs nets: max |dF| %.2e eV/A, |dE| %.2e eV\n", ml->tab.n, df, fabs(et - e1)));
    CHECK(df < 1e-6, "tabulated forces differ from the nets by %g eV/A", df);
    /* 4. model deviation */
    SgDeepmdForces fc;
    SgDeepmd       two[2] = {m, m}, pair[2] = {m, m0};
    double         mx, av, fa[3 * NA], fb[3 * NA], ea, ref = 0;
    PetscCall(SgDeepmdModelDeviation(2, two, NA, x, t, box, &mx, &av, NULL));
    CHECK(mx == 0, "two copies of one model deviate by %g", mx);
    PetscCall(SgDeepmdModelDeviation(2, pair, NA, x, t, box, &mx, &av, NULL));
    PetscCall(SgDeepmdCompute(m, NA, x, t, box, &ea, fa, NULL, NULL));
    PetscCall(SgDeepmdCompute(m0, NA, x, t, box, &ea, fb, NULL, NULL));
    for (int i = 0; i < NA; i++) {
      double d2 = 0;
      for (int q = 0; q < 3; q++) d2 += PetscSqr(0.5 * (fa[3 * i + q] - fb[3 * i + q]));
      ref = PetscMax(ref, sqrt(d2)); /* K = 2: sigma = |F1 - F2| / 2 */
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "4. model deviation: identical models 0, trained vs untrained max_devi_f %.6f (by hand %.6f)\n", mx, ref));
    CHECK(fabs(mx - ref) < 1e-10 * ref, "model deviation %g differs from the hand value %g", mx, ref);
    { /* the md.forces uncertainty function (owned atoms + periodic ghosts, as the MD engine calls it) */
      PetscInt      nall, *tall, *map;
      PetscReal    *xall, dev;
      SgForcesInput in = {0}; /* no fold_ghosts: the function folds periodic images itself */
      PetscCall(SgDPImages(NA, x, t, box, m->cfg.rcut, &nall, &xall, &tall, &map));
      in.n = NA;
      in.nghost = nall - NA;
      in.x = xall;
      in.type = tall;
      for (int q = 0; q < 9; q++) in.box[q] = box[q];
      PetscCall(PetscMemzero(&fc, sizeof fc));
      fc.K = 2;
      fc.models = pair;
      PetscCall(SgDeepmdForcesUncertainty(&fc, &in, &dev));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "   md.forces uncertainty (ghosts folded onto owners): %.6f\n", dev));
      CHECK(fabs(dev - mx) < 1e-10 * mx, "SgDeepmdForcesUncertainty %g differs from SgDeepmdModelDeviation %g", dev, mx);
      { /* model_devi.out record (DeePMD-kit's columns) against the two models' forces and virials by hand:
           K = 2, so each deviation is |y1 - y2| / 2; the virial's is divided by the atom count */
        PetscReal d[6], va[9], vb[9], ref[6] = {0, PETSC_MAX_REAL, 0, 0, PETSC_MAX_REAL, 0}, err = 0, e;
        PetscCall(SgDeepmdForcesModelDevi(&fc, &in, PETSC_COMM_SELF, d));
        PetscCall(SgDeepmdCompute(m, NA, x, t, box, &e, fa, va, NULL));
        PetscCall(SgDeepmdCompute(m0, NA, x, t, box, &e, fb, vb, NULL));
        for (int q = 0; q < 9; q++) {
          PetscReal dv = 0.5 * fabs(va[q] - vb[q]) / NA;
          ref[0] = PetscMax(ref[0], dv);
          ref[1] = PetscMin(ref[1], dv);
          ref[2] += dv / 9;
        }
        for (int i = 0; i < NA; i++) {
          PetscReal d2 = 0;
          for (int q = 0; q < 3; q++) d2 += PetscSqr(0.5 * (fa[3 * i + q] - fb[3 * i + q]));
          ref[3] = PetscMax(ref[3], sqrt(d2));
          ref[4] = PetscMin(ref[4], sqrt(d2));
          ref[5] += sqrt(d2) / NA;
        }
        for (int k = 0; k < 6; k++) err = PetscMax(err, fabs(d[k] - ref[k]) / fabs(ref[k]));
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "   model_devi record: devi_v max/min/avg %.6f %.6f %.6f, devi_f %.6f %.6f %.6f (by hand: max rel. diff %.1e)\n", d[0], d[1], d[2], d[3], d[4], d[5], err));
        CHECK(err < 1e-10, "model_devi record differs from the hand values by %g (relative)", err);
      }
      PetscCall(PetscFree(fc.tbuf));
      PetscCall(PetscFree(fc.fbuf));
      PetscCall(PetscFree3(xall, tall, map));
    }
    /* 5. periodic checkpoint: a 6-step run with save_freq 4 writes the model after step 4, equal to the
       final model of a 4-step run (same seed, data order and learning rate: both stay in the first
       decay interval) */
    {
      SgDPModel      ma, mb, mc;
      SgDPTrainOpts  oa, ob;
      double         ea, eb, fa[3 * NA], fb[3 * NA];
      Opts(&oa, dir, 6, 2);
      Opts(&ob, dir, 4, 2);
      oa.nvalid = ob.nvalid = 0;
      oa.save_freq = 4;
      PetscCall(PetscSNPrintf(oa.save_ckpt, sizeof oa.save_ckpt, "%s/pair_ckpt.h5", dir));
      PetscCall(SgDPModelCreate(&c, &ma));
      PetscCall(SgDPModelInitWeights(ma, 5));
      PetscCall(SgDPModelCreate(&c, &mb));
      PetscCall(SgDPModelInitWeights(mb, 5));
      PetscCall(SgDPTrain(ma, &oa, PETSC_COMM_SELF));
      PetscCall(SgDPTrain(mb, &ob, PETSC_COMM_SELF));
      PetscCall(SgDPModelLoad(oa.save_ckpt, &mc));
      PetscCall(SgDeepmdCompute(mc, NA, x, t, box, &ea, fa, NULL, NULL));
      PetscCall(SgDeepmdCompute(mb, NA, x, t, box, &eb, fb, NULL, NULL));
      PetscBool eq = (PetscBool)(!memcmp(&ea, &eb, sizeof ea) && !memcmp(fa, fb, sizeof fa));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "5. checkpoint after step 4 of 6 vs a 4-step run: %s\n", eq ? "bit-identical" : "DIFFERENT"));
      CHECK(eq, "save_freq checkpoint differs from the model trained for that many steps (E %.15f vs %.15f)", ea, eb);
      PetscCall(SgDPModelDestroy(&ma));
      PetscCall(SgDPModelDestroy(&mb));
      PetscCall(SgDPModelDestroy(&mc));
    }
    /* 5b. restart: a 6-step run (lr decaying every 2 steps, batch 2) that wrote its checkpoint after
       step 4, continued with `restart` for steps 5-6, ends bit-identical to the uninterrupted run
       (weights, Adam moments and step, data position all restored); a plain model file is refused */
    {
      SgDPModel      mb;
      SgDPTrainOpts  oa;
      PetscBool      eq;
      PetscErrorCode ierr;
      Opts(&oa, dir, 6, 2);
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair_restart.h5", dir));
      PetscCall(RestartMatches(&c, oa, path, x, t, box, &eq));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "5b. 6 steps vs 4 steps + restart for 2: %s\n", eq ? "bit-identical" : "DIFFERENT"));
      CHECK(eq, "restart from the step-4 checkpoint differs from the uninterrupted run");
      oa.nvalid = 0;
      PetscCall(PetscSNPrintf(oa.restart, sizeof oa.restart, "%s/pair_model.h5", dir)); /* no training state */
      PetscCall(SgDPModelLoad(oa.restart, &mb));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = SgDPTrain(mb, &oa, PETSC_COMM_SELF);
      PetscCall(PetscPopErrorHandler());
      CHECK(ierr == PETSC_ERR_FILE_UNEXPECTED, "restart from a plain model file: error %d, expected a clear refusal", (int)ierr);
      PetscCall(SgDPModelDestroy(&mb));
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/pair_model.h5", dir)); /* 7. reads the model saved in 2. */
    }
    /* 6. float32 training (precision: float32) from the same start: the same accuracy class. The two
       runs part ways at round-off and then follow different paths, so only the outcome is compared:
       force RMSE below 30 % of the RMS force and within 25 % of the float64 run's. */
    {
      SgDPConfig     c32 = c;
      SgDPModel      m32;
      SgDPTestResult r32;
      double         t32 = MPI_Wtime();
      c32.precision = 32;
      PetscCall(SgDPModelCreate(&c32, &m32));
      PetscCall(SgDPModelInitWeights(m32, 5));
      PetscCall(SgDPTrain(m32, &o, PETSC_COMM_SELF));
      PetscCall(SgDPTest(m32, 1, (const char(*)[PETSC_MAX_PATH_LEN])o.valid, 0, NULL, PETSC_COMM_SELF, &r32));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "6. float32 training: force RMSE %.4f eV/A (float64 %.4f), energy RMSE/atom %.4f eV; %.1f s\n", r32.f_rmse, r.f_rmse, r32.e_rmse_atom, MPI_Wtime() - t32));
      CHECK(r32.f_rmse < 0.30 * frms && fabs(r32.f_rmse - r.f_rmse) < 0.25 * r.f_rmse, "float32 training: force RMSE %g (float64 %g, RMS force %g)", r32.f_rmse, r.f_rmse, frms);
      /* its weights are exact in f32, so the model file stores them as f32 (the shipped water model is
         4.1 instead of 8.2 MB) and reads back the same model: bit-identical predictions, and the file is
         smaller than the float64 model of 2. by at least 4 bytes per parameter less 10 % (HDF5 headers) */
      {
        char        p32[PETSC_MAX_PATH_LEN];
        SgDPModel   ml32;
        double      ea, eb, fa[3 * NA], fb[3 * NA];
        long        np;
        struct stat s32, s64;
        PetscCall(PetscSNPrintf(p32, sizeof p32, "%s/pair_model32.h5", dir));
        PetscCall(SgDPModelSave(m32, p32));
        PetscCall(SgDPModelLoad(p32, &ml32));
        PetscCall(SgDeepmdCompute(m32, NA, x, t, box, &ea, fa, NULL, NULL));
        PetscCall(SgDeepmdCompute(ml32, NA, x, t, box, &eb, fb, NULL, NULL));
        SgNN(sgnn_params_count(m32->P, &np));
        CHECK(!stat(p32, &s32) && !stat(path, &s64), "cannot stat %s or %s", p32, path);
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "6. float32 model file: %ld bytes against %ld for float64 (%ld parameters); round trip %s\n", (long)s32.st_size, (long)s64.st_size, np, !memcmp(&ea, &eb, sizeof ea) && !memcmp(fa, fb, sizeof fa) ? "bit-identical" : "DIFFERENT"));
        CHECK(!memcmp(&ea, &eb, sizeof ea) && !memcmp(fa, fb, sizeof fa), "float32 model file round trip changed the predictions");
        CHECK((double)(s64.st_size - s32.st_size) >= 0.9 * 4 * np, "float32 model file %ld bytes, float64 %ld: parameters not stored in f32", (long)s32.st_size, (long)s64.st_size);
        PetscCall(SgDPModelDestroy(&ml32));
      }
      PetscCall(SgDPModelDestroy(&m32));
    }
    /* 7. change_bias on the training frames, of the model saved in 2. and of a copy whose bias was
       moved by hand (+0.37 eV for A, -0.21 eV for B: -0.46 eV per frame) */
    {
      SgDPModel mb, mc;
      double    mean0, rms0, mean1, rms1, meanc, rmsc, eb, ec, fb[3 * NA], fc2[3 * NA];
      PetscCall(SgDPModelLoad(path, &mb));
      PetscCall(SgDPModelLoad(path, &mc));
      mc->bias[0] += 0.37;
      mc->bias[1] -= 0.21;
      PetscCall(EnergyResiduals(mb, o.files[0], &mean0, &rms0));
      PetscCall(SgDPChangeBias(mb, 1, (const char(*)[PETSC_MAX_PATH_LEN])o.files, PETSC_COMM_SELF));
      PetscCall(SgDPChangeBias(mc, 1, (const char(*)[PETSC_MAX_PATH_LEN])o.files, PETSC_COMM_SELF));
      PetscCall(EnergyResiduals(mb, o.files[0], &mean1, &rms1));
      PetscCall(EnergyResiduals(mc, o.files[0], &meanc, &rmsc));
      PetscCall(SgDeepmdCompute(mb, NA, x, t, box, &eb, fb, NULL, NULL));
      PetscCall(SgDeepmdCompute(mc, NA, x, t, box, &ec, fc2, NULL, NULL));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "7. change_bias: mean energy residual %.3e -> %.3e eV, RMSE %.6f -> %.6f eV; from a bias moved by 0.46 eV/frame: E differs by %.2e eV\n", mean0, mean1, rms0, rms1, fabs(eb - ec)));
      /* round-off: residuals are ~1e-1 eV sums over 48 frames of energies ~1e1 eV */
      CHECK(fabs(mean1) < 1e-10 && fabs(meanc) < 1e-10, "after change_bias the mean energy residual is %g (%g for the moved copy), expected 0", mean1, meanc);
      CHECK(rms1 <= rms0 * (1 + 1e-12), "change_bias raised the energy RMSE from %g to %g", rms0, rms1);
      CHECK(fabs(eb - ec) < 1e-10, "change_bias depends on the starting bias: E %.12f vs %.12f", eb, ec);
      CHECK(!memcmp(fb, f1, sizeof fb), "change_bias changed the forces");
      PetscCall(SgDPModelDestroy(&mb));
      PetscCall(SgDPModelDestroy(&mc));
    }
    /* 8. two systems in one run */
    {
      SgDPModel      m2;
      SgDPTrainOpts  o2;
      SgDPTestResult r2a, r2b, r1b;
      char           vb[1][PETSC_MAX_PATH_LEN];
      double         frmsb = 0, A[2][3] = {{0}}, bias[2];
      double         t2 = MPI_Wtime();
      Opts(&o2, dir, 600, 2);
      o2.nfiles = 2;
      PetscCall(PetscSNPrintf(o2.files[1], sizeof o2.files[1], "%s/pair24_train.h5", dir));
      PetscCall(PetscSNPrintf(vb[0], sizeof vb[0], "%s/pair24_valid.h5", dir));
      /* the least-squares per-type energies over all training frames of both systems, by hand */
      for (int fi = 0; fi < 2; fi++) {
        SgDataset ds;
        int64_t   nf;
        double    nAB[2] = {fi ? 12 : NA / 3, fi ? 12 : NA - NA / 3}, e;
        PetscCall(SgDatasetOpen(PETSC_COMM_SELF, o2.files[fi], SG_DATASET_READ, &ds));
        PetscCall(SgDatasetGetNumSamples(ds, &nf));
        for (int64_t k = 0; k < nf; k++) {
          PetscCall(SgDatasetReadField(ds, "energy", k, 1, SG_DTYPE_F64, &e));
          for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++) A[a][b] += nAB[a] * nAB[b];
            A[a][2] += nAB[a] * e;
          }
        }
        PetscCall(SgDatasetClose(&ds));
      }
      {
        double det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
        bias[0] = (A[0][2] * A[1][1] - A[0][1] * A[1][2]) / det;
        bias[1] = (A[0][0] * A[1][2] - A[1][0] * A[0][2]) / det;
      }
      {
        SgDataset ds;
        double   *fl;
        PetscCall(PetscMalloc1(16 * 3 * 24, &fl));
        PetscCall(SgDatasetOpen(PETSC_COMM_SELF, vb[0], SG_DATASET_READ, &ds));
        PetscCall(SgDatasetReadField(ds, "force", 0, 16, SG_DTYPE_F64, fl));
        PetscCall(SgDatasetClose(&ds));
        for (int k = 0; k < 16 * 3 * 24; k++) frmsb += fl[k] * fl[k];
        frmsb = sqrt(frmsb / (16 * 3 * 24));
        PetscCall(PetscFree(fl));
      }
      PetscCall(SgDPModelCreate(&c, &m2));
      PetscCall(SgDPModelInitWeights(m2, 5));
      PetscCall(SgDPTrain(m2, &o2, PETSC_COMM_SELF));
      PetscCall(SgDPTest(m2, 1, (const char(*)[PETSC_MAX_PATH_LEN])o2.valid, 0, NULL, PETSC_COMM_SELF, &r2a));
      PetscCall(SgDPTest(m2, 1, (const char(*)[PETSC_MAX_PATH_LEN])vb, 0, NULL, PETSC_COMM_SELF, &r2b));
      PetscCall(SgDPTest(m, 1, (const char(*)[PETSC_MAX_PATH_LEN])vb, 0, NULL, PETSC_COMM_SELF, &r1b));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "8. two systems: bias A %.6f B %.6f (least squares by hand %.6f %.6f); force RMSE on the 16-atom set %.4f (%.1f%%), on the 24-atom set %.4f (%.1f%%; the 16-atom-only model: %.4f); %.1f s\n",
                            (double)m2->bias[0], (double)m2->bias[1], bias[0], bias[1], r2a.f_rmse, 100 * r2a.f_rmse / frms, r2b.f_rmse, 100 * r2b.f_rmse / frmsb, r1b.f_rmse, MPI_Wtime() - t2));
      CHECK(fabs(m2->bias[0] - bias[0]) < 1e-8 * (1 + fabs(bias[0])) && fabs(m2->bias[1] - bias[1]) < 1e-8 * (1 + fabs(bias[1])), "two systems: bias %g %g, least squares %g %g", (double)m2->bias[0], (double)m2->bias[1], bias[0], bias[1]);
      CHECK(r2a.f_rmse < 0.30 * frms && r2b.f_rmse < 0.30 * frmsb, "two systems: force RMSE %g (RMS %g) and %g (RMS %g)", r2a.f_rmse, frms, r2b.f_rmse, frmsb);
      CHECK(r2b.f_rmse < r1b.f_rmse, "two systems: on the 24-atom set %g, no better than the 16-atom-only model's %g", r2b.f_rmse, r1b.f_rmse);
      /* restart with two systems */
      {
        PetscBool eq;
        char      ck[PETSC_MAX_PATH_LEN];
        PetscCall(PetscSNPrintf(ck, sizeof ck, "%s/pair2sys_restart.h5", dir));
        PetscCall(RestartMatches(&c, o2, ck, x, t, box, &eq));
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "   two systems, 6 steps vs 4 steps + restart for 2: %s\n", eq ? "bit-identical" : "DIFFERENT"));
        CHECK(eq, "two systems: restart differs from the uninterrupted run");
      }
      PetscCall(SgDPModelDestroy(&m2));
    }
    /* 9. bad data and divergence stop the run before any update or checkpoint: a NaN force label in
       frame 5 of a file (error naming the frame), and a NaN weight (the loss is not finite) */
    {
      SgDPModel      mn;
      SgDPTrainOpts  on;
      PetscErrorCode ierr1, ierr2;
      PetscBool      ck;
      long           np;
      double        *w;
      Opts(&on, dir, 8, 2);
      on.nvalid = 0;
      on.save_freq = 1;
      PetscCall(PetscSNPrintf(on.files[0], sizeof on.files[0], "%s/pair_nan.h5", dir));
      PetscCall(PetscSNPrintf(on.save_ckpt, sizeof on.save_ckpt, "%s/pair_nan_ckpt.h5", dir));
      (void)remove(on.save_ckpt);
      PetscCall(MakeSystemNaN(on.files[0], 8, 21, NA, NA / 3, BOXL, 5));
      PetscCall(SgDPModelCreate(&c, &mn));
      PetscCall(SgDPModelInitWeights(mn, 5));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr1 = SgDPTrain(mn, &on, PETSC_COMM_SELF);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgDPModelDestroy(&mn));
      { /* checkpoints written before the bad frame came up hold finite weights */
        PetscBool ck1, finite = PETSC_TRUE;
        PetscCall(PetscTestFile(on.save_ckpt, 'r', &ck1));
        if (ck1) {
          PetscCall(SgDPModelLoad(on.save_ckpt, &mn));
          SgNN(sgnn_params_count(mn->P, &np));
          PetscCall(PetscMalloc1(np, &w));
          SgNN(sgnn_tensor_to_f64(sgnn_params_values(mn->P), w));
          for (long q = 0; q < np; q++) finite = (PetscBool)(finite && isfinite(w[q]));
          PetscCall(PetscFree(w));
          PetscCall(SgDPModelDestroy(&mn));
        }
        CHECK(finite, "a checkpoint of the run stopped on a NaN label holds non-finite weights");
        (void)remove(on.save_ckpt);
      }
      /* a NaN weight, finite data */
      Opts(&on, dir, 8, 2);
      on.nvalid = 0;
      on.save_freq = 1;
      PetscCall(PetscSNPrintf(on.save_ckpt, sizeof on.save_ckpt, "%s/pair_nan_ckpt.h5", dir));
      PetscCall(SgDPModelCreate(&c, &mn));
      PetscCall(SgDPModelInitWeights(mn, 5));
      SgNN(sgnn_params_count(mn->P, &np));
      PetscCall(PetscMalloc1(np, &w));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(mn->P), w));
      w[np / 2] = NAN;
      SgNN(sgnn_tensor_set_f64(sgnn_params_values(mn->P), w));
      PetscCall(PetscFree(w));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr2 = SgDPTrain(mn, &on, PETSC_COMM_SELF);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgDPModelDestroy(&mn));
      PetscCall(PetscTestFile(on.save_ckpt, 'r', &ck));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "9. NaN force label: error %d (expected %d); NaN weight: error %d (expected %d), checkpoint written: %s\n", (int)ierr1, (int)PETSC_ERR_FILE_UNEXPECTED, (int)ierr2, (int)PETSC_ERR_NOT_CONVERGED, ck ? "yes" : "no"));
      CHECK(ierr1 == PETSC_ERR_FILE_UNEXPECTED, "a NaN label: error %d, expected a clear refusal", (int)ierr1);
      CHECK(ierr2 == PETSC_ERR_NOT_CONVERGED, "a NaN weight: error %d, expected the divergence error", (int)ierr2);
      CHECK(!ck, "a checkpoint was written by a run whose loss was not finite at its first step");
    }
    PetscCall(SgDPModelDestroy(&m));
    PetscCall(SgDPModelDestroy(&m0));
    PetscCall(SgDPModelDestroy(&ml));
  } else if (!strcmp(argv[1], "mpi")) {
    SgDPConfig    c;
    SgDPTrainOpts o;
    SgDPModel     ms = NULL, mp;
    long          np;
    Config(&c);
    Opts(&o, dir, 6, 2);
    o.nvalid = 0;
    o.nfiles = 2;
    PetscCall(PetscSNPrintf(o.files[1], sizeof o.files[1], "%s/pair24_train.h5", dir));
    if (!rank) { /* serial reference on rank 0 alone */
      PetscCall(SgDPModelCreate(&c, &ms));
      PetscCall(SgDPModelInitWeights(ms, 5));
      PetscCall(SgDPTrain(ms, &o, PETSC_COMM_SELF));
    }
    PetscCall(SgDPModelCreate(&c, &mp));
    PetscCall(SgDPModelInitWeights(mp, 5));
    PetscCall(SgDPTrain(mp, &o, PETSC_COMM_WORLD));
    if (!rank) {
      double *a, *b, err = 0, moved = 0;
      SgDPModel m0;
      SgNN(sgnn_params_count(mp->P, &np));
      PetscCall(PetscMalloc2(np, &a, np, &b));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(ms->P), a));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(mp->P), b));
      for (long k = 0; k < np; k++) err = PetscMax(err, fabs(a[k] - b[k]) / (1e-3 + fabs(a[k])));
      PetscCall(SgDPModelCreate(&c, &m0));
      PetscCall(SgDPModelInitWeights(m0, 5));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(m0->P), b));
      for (long k = 0; k < np; k++) moved = PetscMax(moved, fabs(a[k] - b[k]));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "mpi: %d ranks vs 1 rank after 6 steps (two systems): max relative parameter difference %.2e (parameters moved by up to %.2e)\n", size, err, moved));
      CHECK(size == 2, "run this mode on 2 ranks");
      CHECK(err < 1e-12 && moved > 1e-4, "2-rank training differs from 1-rank: %g (moved %g)", err, moved);
      PetscCall(PetscFree2(a, b));
      PetscCall(SgDPModelDestroy(&m0));
      PetscCall(SgDPModelDestroy(&ms));
    }
    PetscCall(SgDPModelDestroy(&mp));
    PetscCallMPI(MPI_Bcast(&fails, 1, MPIU_INT, 0, PETSC_COMM_WORLD));
  }
  else if (!strcmp(argv[1], "zero")) { /* issue 38: the ZeRO stages through the deepmd options (SgDPTrainOpts.shard) */
    SgDPConfig    c;
    SgDPTrainOpts o, ob;
    SgDPModel     m;
    long          np = 0;
    double       *w[6] = {NULL}, moved = 0;
    char          ckpt[PETSC_MAX_PATH_LEN], ckpt3[PETSC_MAX_PATH_LEN];
    const int     stage[6] = {0, 1, 2, 1, 3, 0};
    Config(&c);
    Opts(&o, dir, 6, 3); /* batch 3 of two systems: local batches 3 / 1+2 / 1+1+1 */
    o.nvalid = 0;
    o.nfiles = 2;
    PetscCall(PetscSNPrintf(o.files[1], sizeof o.files[1], "%s/pair24_train.h5", dir));
    PetscCall(PetscSNPrintf(ckpt, sizeof ckpt, "%s/zero_ckpt_%d.h5", dir, size));
    PetscCall(PetscSNPrintf(ckpt3, sizeof ckpt3, "%s/zero_ckpt3_%d.h5", dir, size));
    for (int k = 0; k < 6; k++) { /* stages 0, 1, 2 (checkpoint at step 3), stage 1 restarted from it, stage 3 (checkpoint at 3), stage 0 restarted from that */
      o.shard = stage[k];
      o.shard_bucket = k == 4 ? 8 : (k == 2 ? 2048 : 0); /* stage 3 by buckets of one tensor each (zero3b.c and the gradient's, zerograd.c); stage 2 by gradient buckets of >= 2 KiB */
      o.grad_open = k == 2 ? 2 : 0; /* stage 2: 2 of its 7 gradient buckets open at once (-deepmd_shard_grad_open_buckets; 0: the trainer's 3) */
      o.save_freq = k == 2 || k == 4 ? 3 : 0;
      o.save_ckpt[0] = 0;
      o.restart[0] = 0;
      if (k == 2 || k == 4) PetscCall(PetscStrncpy(o.save_ckpt, k == 2 ? ckpt : ckpt3, sizeof o.save_ckpt));
      if (k == 3 || k == 5) PetscCall(PetscStrncpy(o.restart, k == 3 ? ckpt : ckpt3, sizeof o.restart));
      ob = o;
      if (k != 3 && k != 5) {
        PetscCall(SgDPModelCreate(&c, &m));
        PetscCall(SgDPModelInitWeights(m, 5));
      } else PetscCall(SgDPModelLoad(o.restart, &m));
      if (k == 2 || k == 4) { /* the trainer's lines (ReadReplayLine): stage 2's open buckets, stage 3's replayed steps */
        vfprintf_prev = PetscVFPrintf;
        PetscVFPrintf = ReadReplayLine;
      }
      PetscCall(SgDPTrain(m, &ob, PETSC_COMM_WORLD));
      if (k == 2) {
        PetscVFPrintf = vfprintf_prev;
        if (!rank) CHECK(open_buckets == 2, "stage 2 by buckets with grad_open 2: the trainer states %d open gradient buckets (-1: not printed): the option does not reach it", open_buckets);
      }
      if (k == 4) {
        PetscVFPrintf = vfprintf_prev;
        /* 26 buckets, 75 fills a step: at most 74 of 75 (98.7%), the first fill of a step is read at its
           use; the guess in bucket order fetched 33% (docs/parallel.md) */
        if (!rank) CHECK(replay_pct >= 95, "stage 3 by buckets on %d ranks: %.1f%% of the fills fetched ahead in the steps that replayed the step before's uses (-1: not printed): want >= 95%%", size, replay_pct);
      }
      SgNN(sgnn_params_count(m->P, &np));
      PetscCall(PetscMalloc1(np, &w[k]));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), w[k]));
      PetscCall(SgDPModelDestroy(&m));
    }
    PetscCall(SgDPModelCreate(&c, &m));
    PetscCall(SgDPModelInitWeights(m, 5));
    { /* how far training moved the weights (the comparisons below are meaningful only if it did) */
      double *w0;
      PetscCall(PetscMalloc1(np, &w0));
      SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), w0));
      for (long i = 0; i < np; i++) moved = PetscMax(moved, fabs(w0[i] - w[0][i]));
      PetscCall(PetscFree(w0));
    }
    PetscCall(SgDPModelDestroy(&m));
    for (int k = 1; k < 6; k++) {
      const char *what[6] = {"", "stage 1", "stage 2", "stage 2 checkpoint at 3, restarted at stage 1", "stage 3", "stage 3 checkpoint at 3, restarted at stage 0"};
      double      err     = 0;
      for (long i = 0; i < np; i++) err = PetscMax(err, fabs(w[k][i] - w[0][i]) / (1e-3 + fabs(w[0][i])));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero: %d rank(s), %ld weights: %s vs stage 0 after 6 steps: max relative difference %.2e (moved %.2e)\n", size, np, what[k], err, moved));
      /* stage 1: the same gradient and the same elementwise update: bit for bit; stage 2 and the
         restart: the reduce-scatter adds the ranks' blocks in another order than the allreduce */
      if (k == 1) CHECK(err == 0, "stage 1 differs from stage 0 on %d ranks: %g", size, err);
      else CHECK(err < 1e-12, "%s differs from stage 0 on %d ranks: %g", what[k], size, err);
    }
    CHECK(moved > 1e-4, "training did not move the weights (%g)", moved);
    { /* the stage-2 checkpoint with a NaN in the last rank's block of Adam's second moment: read by blocks
         (SgTrainerReadMoments), every rank refuses the restart naming it, none trains on */
      char           bad[PETSC_MAX_PATH_LEN], want[64];
      const char    *text = NULL;
      PetscErrorCode ierr;
      PetscCall(PetscSNPrintf(bad, sizeof bad, "%s/zero_ckpt_nan_%d.h5", dir, size));
      PetscCall(SgTestDamagedCopy(PETSC_COMM_WORLD, ckpt, bad, "training/adam_v", (hsize_t)(np - 1), NAN));
      PetscCall(PetscSNPrintf(want, sizeof want, "training/adam_v[%ld] is NaN", np - 1));
      ob = o;
      ob.shard = 1;
      ob.shard_bucket = 0;
      ob.save_freq = 0;
      ob.save_ckpt[0] = 0;
      PetscCall(PetscStrncpy(ob.restart, bad, sizeof ob.restart));
      PetscCall(SgDPModelLoad(bad, &m));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = SgDPTrain(m, &ob, PETSC_COMM_WORLD);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgDPModelDestroy(&m));
      if (ierr) (void)PetscErrorMessage(ierr, NULL, (char **)&text);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero: a NaN at training/adam_v[%ld] (the last rank's block): every rank refuses (%s)\n", np - 1, text ? text : ""));
      CHECK(ierr && text && strstr(text, want), "rank %d: a restart from a checkpoint whose %s: error %d '%s'; want every rank to refuse it naming the value", rank, want, (int)ierr, text ? text : "");
    }
    { /* the stage reaches the trainer: stage 1 with plain SGD (no optimizer state to shard) is refused */
      PetscErrorCode ierr;
      ob = o;
      ob.restart[0] = 0;
      ob.shard = 1;
      sgnn_optim_defaults(SGNN_SGD, &ob.oc);
      PetscCall(SgDPModelCreate(&c, &m));
      PetscCall(SgDPModelInitWeights(m, 5));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = SgDPTrain(m, &ob, PETSC_COMM_WORLD);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgDPModelDestroy(&m));
      CHECK(ierr == PETSC_ERR_USER_INPUT, "deepmd with shard 1 and plain SGD was not refused (%d)", (int)ierr);
    }
    if (size == 3) { /* global batch 2 on 3 ranks: one rank has no frame in every step and still takes part
                        in stage 3's gather and reduce-scatter; stage 3 = stage 0 as above */
      double *we[2], err = 0;
      for (int k = 0; k < 2; k++) {
        ob = o;
        ob.restart[0] = 0;
        ob.save_freq = 0;
        ob.save_ckpt[0] = 0;
        ob.batch_size = 2;
        ob.shard = k ? 3 : 0;
        ob.shard_bucket = k ? 2048 : 0; /* by buckets: the rank without frames reads none, and no rank waits for it */
        PetscCall(SgDPModelCreate(&c, &m));
        PetscCall(SgDPModelInitWeights(m, 5));
        PetscCall(SgDPTrain(m, &ob, PETSC_COMM_WORLD));
        PetscCall(PetscMalloc1(np, &we[k]));
        SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), we[k]));
        PetscCall(SgDPModelDestroy(&m));
      }
      for (long i = 0; i < np; i++) err = PetscMax(err, fabs(we[1][i] - we[0][i]) / (1e-3 + fabs(we[0][i])));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero: batch 2 on 3 ranks (one rank without a frame each step): stage 3 vs stage 0 max relative difference %.2e\n", err));
      CHECK(err < 1e-12, "stage 3 with an empty local batch differs from stage 0 on 3 ranks: %g", err);
      PetscCall(PetscFree(we[0]));
      PetscCall(PetscFree(we[1]));
    }
    if (size > 1) { /* sdp4bit's node size reaches the trainer (SgDPTrainOpts.sdp_node, -deepmd_sdp4bit_node_ranks):
                       a node of size + 1 ranks does not divide the ranks and is refused at set-up */
      PetscErrorCode ierr;
      ob = o;
      ob.restart[0] = 0;
      ob.shard = 3;
      PetscCall(PetscStrncpy(ob.compress, "sdp4bit", sizeof ob.compress));
      ob.sdp_node = size + 1;
      PetscCall(SgDPModelCreate(&c, &m));
      PetscCall(SgDPModelInitWeights(m, 5));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = SgDPTrain(m, &ob, PETSC_COMM_WORLD);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgDPModelDestroy(&m));
      CHECK(ierr == PETSC_ERR_USER_INPUT, "deepmd with sdp4bit_node_ranks %d on %d ranks was not refused (%d): the node size does not reach the trainer", size + 1, size, (int)ierr);
    }
    if (size > 1) { /* lion_cub's momentum sync reaches the trainer (SgDPTrainOpts.cub_sync, -deepmd_lion_cub_sync):
                       averaged every step or never, the ranks' votes differ after the first step */
      double *wc[2], dc = 0;
      for (int k = 0; k < 2; k++) {
        ob = o;
        ob.restart[0] = 0;
        ob.shard = 0;
        sgnn_optim_defaults(SGNN_LION, &ob.oc);
        PetscCall(PetscStrncpy(ob.compress, "lion_cub", sizeof ob.compress));
        ob.cub_sync = k ? 0 : 1;
        PetscCall(SgDPModelCreate(&c, &m));
        PetscCall(SgDPModelInitWeights(m, 5));
        PetscCall(SgDPTrain(m, &ob, PETSC_COMM_WORLD));
        PetscCall(PetscMalloc1(np, &wc[k]));
        SgNN(sgnn_tensor_to_f64(sgnn_params_values(m->P), wc[k]));
        PetscCall(SgDPModelDestroy(&m));
      }
      for (long i = 0; i < np; i++) dc = PetscMax(dc, fabs(wc[0][i] - wc[1][i]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero: lion_cub on %d ranks, momenta averaged every step vs never: weights differ by up to %.3e after 6 steps\n", size, dc));
      CHECK(dc > 0, "deepmd lion_cub: cub_sync 1 and 0 give the same weights: the interval does not reach the trainer");
      PetscCall(PetscFree(wc[0]));
      PetscCall(PetscFree(wc[1]));
    }
    for (int k = 0; k < 6; k++) PetscCall(PetscFree(w[k]));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (%d failures)\n", fails ? "FAILED" : "PASSED", (int)fails));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
