/* Deep Potential benchmarks (figures, not pass/fail); driven by tests/bench/deepmd/bench.sh.
     mkmodel DATA.h5 OUT.h5 [small|pair]         a water-sized model with random weights (pair: type_one_side false)
     infer  MODEL.h5 DATA.h5 NREP NSTEPS [STEP]  inference us/step/atom on frame 0 replicated
                                               NREPxNREPxNREP, plain and (STEP > 0) tabulated; peak RSS
     train  DATA.h5 NSTEPS BATCH [small|f32]   training steps/s (frames/s) of the water model (f32: float32 graph):
                                               the loss dp_torch.py times (DeePMD-kit's water start prefactors,
                                               0.02/N dE^2 + 1000/(3N) |dF|^2), each step timed alone, the
                                               median of steps 2..NSTEPS reported as dp_torch.py does
     parts  DATA.h5                            time of the training-step parts (graph, grad, backward) */
#include <stdlib.h>
#include <sys/resource.h>
#include "../../unit/deepmd/dptest_common.h"
#include "sgdataset.h"

static PetscErrorCode ReadFrame(const char *path, PetscInt *N, PetscReal **x, PetscInt **type, PetscReal box[9], PetscReal *E, PetscReal **f)
{
  SgDataset ds;
  int64_t   n = 0;
  int32_t  *t;

  PetscFunctionBeginUser;
  PetscCall(SgDatasetOpen(PETSC_COMM_SELF, path, SG_DATASET_READ, &ds));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, NULL));
  PetscCall(PetscMalloc1(n, &t));
  PetscCall(SgDatasetReadStatic(ds, "type", SG_DTYPE_I32, &n, t));
  *N = (PetscInt)n;
  PetscCall(PetscMalloc3(3 * n, x, n, type, 3 * n, f));
  for (int64_t i = 0; i < n; i++) (*type)[i] = t[i];
  PetscCall(SgDatasetReadField(ds, "coord", 0, 1, SG_DTYPE_F64, *x));
  PetscCall(SgDatasetReadField(ds, "box", 0, 1, SG_DTYPE_F64, box));
  PetscCall(SgDatasetReadField(ds, "energy", 0, 1, SG_DTYPE_F64, E));
  PetscCall(SgDatasetReadField(ds, "force", 0, 1, SG_DTYPE_F64, *f));
  PetscCall(SgDatasetClose(&ds));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void WaterConfig(SgDPConfig *c, PetscBool small)
{
  PetscMemzero(c, sizeof *c);
  c->ntypes = 2;
  strcpy(c->type_map[0], "O");
  strcpy(c->type_map[1], "H");
  c->rcut = 6;
  c->rcut_smth = 0.5;
  c->sel[0] = 46;
  c->sel[1] = 92;
  c->nemb = 3;
  c->emb[0] = 25;
  c->emb[1] = 50;
  c->emb[2] = 100;
  c->axis = 16;
  c->nfit = 3;
  c->fit[0] = c->fit[1] = c->fit[2] = 240;
  c->fit_resnet_dt = PETSC_TRUE;
  if (small) {
    c->emb[0] = 10;
    c->emb[1] = 20;
    c->emb[2] = 40;
    c->axis = 8;
    c->fit[0] = c->fit[1] = c->fit[2] = 120;
  }
}

int main(int argc, char **argv)
{
  PetscInt   N, *type;
  PetscReal *x, *f, box[9], E;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 3, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "usage: see the file header");
  if (!strcmp(argv[1], "mkmodel")) { /* mkmodel DATA.h5 OUT.h5 [small|pair]: water config, data statistics, random weights */
    SgDPConfig c;
    SgDPModel  m;
    PetscCall(ReadFrame(argv[2], &N, &x, &type, box, &E, &f));
    WaterConfig(&c, (PetscBool)(argc > 4 && !strcmp(argv[4], "small")));
    c.type_pair = (PetscBool)(argc > 4 && !strcmp(argv[4], "pair")); /* embedding nets per type pair */
    PetscCall(DPRandomModel(&c, 1, N, x, type, box, &m));
    PetscCall(SgDPModelSave(m, argv[3]));
    PetscCall(SgDPModelDestroy(&m));
  } else if (!strcmp(argv[1], "infer")) {
    SgDPModel m;
    PetscInt  rep = atoi(argv[4]), ns = atoi(argv[5]), Nr;
    PetscReal tplain = 0, step = argc > 6 ? atof(argv[6]) : 0, *xr, *fr, br[9], e, v[9];
    PetscInt *tr;
    PetscCall(SgDPModelLoad(argv[2], &m));
    PetscCall(ReadFrame(argv[3], &N, &x, &type, box, &E, &f));
    Nr = N * rep * rep * rep;
    PetscCall(PetscMalloc3(3 * Nr, &xr, Nr, &tr, 3 * Nr, &fr));
    for (int a = 0, k = 0; a < rep; a++)
      for (int b = 0; b < rep; b++)
        for (int c = 0; c < rep; c++)
          for (PetscInt i = 0; i < N; i++, k++) {
            for (int q = 0; q < 3; q++) xr[3 * k + q] = x[3 * i + q] + a * box[q] + b * box[3 + q] + c * box[6 + q];
            tr[k] = type[i];
          }
    for (int q = 0; q < 9; q++) br[q] = box[q] * rep;
    PetscReal *fplain, eplain = 0;
    PetscCall(PetscMalloc1(3 * Nr, &fplain));
    for (int pass = 0; pass < (step > 0 ? 2 : 1); pass++) {
      if (pass == 1) PetscCall(SgDeepmdCompress(m, step, 0.5));
      PetscCall(SgDeepmdCompute(m, Nr, xr, tr, br, &e, fr, v, NULL)); /* warm-up */
      double t0 = MPI_Wtime();
      for (int s = 0; s < ns; s++) PetscCall(SgDeepmdCompute(m, Nr, xr, tr, br, &e, fr, v, NULL));
      double        dt = (MPI_Wtime() - t0) / ns;
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      PetscReal dmax = 0;
      if (!pass) {
        PetscCall(PetscArraycpy(fplain, fr, 3 * Nr));
        eplain = e;
      } else
        for (PetscInt k = 0; k < 3 * Nr; k++) dmax = PetscMax(dmax, PetscAbsReal(fr[k] - fplain[k]));
      if (pass) PetscCall(PetscPrintf(PETSC_COMM_SELF, "tabulated vs nets: max |dF| %.3e eV/A, |dE|/atom %.3e eV; speed-up x%.2f\n", dmax, PetscAbsReal(e - eplain) / Nr, tplain / dt));
      else tplain = dt;
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "infer %s atoms %" PetscInt_FMT " : %.3f us/step/atom  (%.4f s/step)  E/atom %.6f  peak RSS %.1f MiB\n", pass ? "tabulated" : "plain    ", Nr, 1e6 * dt / Nr, dt, e / Nr, ru.ru_maxrss / 1024.0));
    }
    PetscCall(SgDPModelDestroy(&m));
  } else if (!strcmp(argv[1], "train") || !strcmp(argv[1], "parts")) {
    SgDPConfig c;
    SgDPModel  m;
    SgDPBatch  bt;
    PetscBool  parts = (PetscBool)!strcmp(argv[1], "parts");
    PetscInt   ns = parts ? 3 : atoi(argv[3]), B = parts ? 1 : atoi(argv[4]);
    PetscCall(ReadFrame(argv[2], &N, &x, &type, box, &E, &f));
    WaterConfig(&c, (PetscBool)(argc > 5 && !strcmp(argv[5], "small")));
    if (argc > 5 && !strcmp(argv[5], "f32")) c.precision = 32;
    PetscCall(DPRandomModel(&c, 1, N, x, type, box, &m));
    PetscCall(SgDPBatchAlloc(&m->cfg, B, N, &bt));
    PetscCall(PetscArraycpy(bt.type, type, N));
    SgnnOptimConfig oc;
    SgnnOptim       o;
    sgnn_optim_defaults(SGNN_ADAM, &oc);
    oc.lr = 1e-3;
    SgNN(sgnn_optim_create(m->P, &oc, &o));
    double tenv = 0, tfwd = 0, tbwd = 0, *tstep;
    PetscCall(PetscMalloc1(ns, &tstep));
    for (int s = 0; s < ns; s++) {
      double     ta = MPI_Wtime();
      SgnnTensor Et, Ft, El, Fl, dE, dF, sq, se, sf, le, lf, loss;
      for (int b = 0; b < B; b++) PetscCall(SgDPBatchSetFrame(m, &bt, b, x, box));
      double tb = MPI_Wtime();
      PetscCall(SgDPGraph(m, &bt, PETSC_FALSE, 1, &Et, &Ft, NULL));
      int sB[1] = {(int)B}, sF[2] = {(int)(B * N), 3};
      PetscReal *fl, *el;
      PetscCall(PetscMalloc2(3 * B * N, &fl, B, &el));
      for (int b = 0; b < B; b++) PetscCall(PetscArraycpy(fl + 3 * N * b, f, 3 * N));
      for (int b = 0; b < B; b++) el[b] = E;
      SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 1, sB, el, &El));
      SgNN(sgnn_tensor_from_f64(m->be, SgDPDType(m), 2, sF, fl, &Fl));
      PetscCall(PetscFree2(fl, el));
      /* the energy and the force term of DeePMD-kit's ener loss, as surrogates/deepmd/train.c builds them */
      SgNN(sgnn_sub(Et, El, &dE));
      SgNN(sgnn_mul(dE, dE, &sq));
      SgNN(sgnn_sum(sq, 0, NULL, 0, &se));
      sgnn_tensor_free(&sq);
      SgNN(sgnn_affine(se, 0.02 / N / B, 0.0, &le));
      SgNN(sgnn_sub(Ft, Fl, &dF));
      SgNN(sgnn_mul(dF, dF, &sq));
      SgNN(sgnn_sum(sq, 0, NULL, 0, &sf));
      SgNN(sgnn_affine(sf, 1000.0 / (3.0 * N) / B, 0.0, &lf));
      SgNN(sgnn_add(le, lf, &loss));
      double tc = MPI_Wtime();
      SgNN(sgnn_params_zero_grad(m->P));
      SgNN(sgnn_backward(loss));
      SgNN(sgnn_optim_step(o));
      double td = MPI_Wtime();
      tstep[s] = td - ta;
      if (s > 0 || ns == 1) {
        tenv += tb - ta;
        tfwd += tc - tb;
        tbwd += td - tc;
      }
      SgnnTensor *all[] = {&Et, &Ft, &El, &Fl, &dE, &dF, &sq, &se, &sf, &le, &lf, &loss};
      for (int q = 0; q < 12; q++) sgnn_tensor_free(all[q]);
    }
    /* the median of steps 2..ns (the first step sizes the engine's buffers; dp_torch.py skips it too) */
    PetscInt nt = ns > 1 ? ns - 1 : 1;
    double  *tt = ns > 1 ? tstep + 1 : tstep, dt;
    PetscCall(PetscSortReal(nt, tt));
    dt = nt % 2 ? tt[nt / 2] : 0.5 * (tt[nt / 2 - 1] + tt[nt / 2]);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "train %s%s batch %" PetscInt_FMT ": %.3f s/step, %.3f frames/s (median of %" PetscInt_FMT " steps after the first; energy + force loss; means: env %.3f, forward+forces %.3f, backward+adam %.3f s/step)\n", argc > 5 && strcmp(argv[5], "f32") ? argv[5] : "full", m->cfg.precision == 32 ? " f32" : "", B, dt, B / dt, nt, tenv / nt, tfwd / nt, tbwd / nt));
    PetscCall(PetscFree(tstep));
    sgnn_optim_destroy(&o);
    PetscCall(SgDPBatchFree(&bt));
    PetscCall(SgDPModelDestroy(&m));
  }
  PetscCall(PetscFinalize());
  return 0;
}
