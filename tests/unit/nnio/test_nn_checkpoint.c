/* NN training checkpoints: a run interrupted at step K, restored from its HDF5 checkpoint into a
   freshly built (differently initialised) model, finishes bit-identical to the uninterrupted run.
   Covers the parameter slab, Adam's moments and step, the LR schedule position and the RNG that
   draws minibatches, in f64 and f32, on 1 and 2 ranks (every rank restores; rank 0 writes). Also: a
   checkpoint of another architecture is refused. */
#include <glob.h>
#include <math.h>
#include "sgnncheckpoint.h"
#include <unistd.h>

#define NN(call) \
  do { \
    if ((call) != 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, sgnn_last_error()); \
  } while (0)

typedef struct {
  SgnnParams P;
  SgnnTensor W[3], B[3];
  SgnnOptim  o;
  SgnnRng    batch_rng;
  long       step;
} Model;

enum { NT = 128, BATCH = 16 };
static double xt[2 * NT], yt[NT];

static PetscErrorCode Build(SgnnBackend *be, SgnnDType dt, unsigned long long init_seed, int hidden, Model *m)
{
  int     dims[4] = {2, hidden, hidden, 1};
  SgnnRng r;
  SgnnOptimConfig c;

  PetscFunctionBegin;
  NN(sgnn_params_create(be, dt, &m->P));
  for (int l = 0; l < 3; l++) {
    int  ws[2] = {dims[l + 1], dims[l]}, bs[1] = {dims[l + 1]};
    char n[16];
    snprintf(n, sizeof n, "W%d", l);
    NN(sgnn_params_add(m->P, n, 2, ws, &m->W[l]));
    snprintf(n, sizeof n, "b%d", l);
    NN(sgnn_params_add(m->P, n, 1, bs, &m->B[l]));
  }
  NN(sgnn_params_setup(m->P));
  sgnn_rng_init(&r, init_seed);
  for (int l = 0; l < 3; l++) NN(sgnn_init_xavier_uniform(m->W[l], 1.0, &r));
  sgnn_optim_defaults(SGNN_ADAM, &c);
  NN(sgnn_optim_create(m->P, &c, &m->o));
  sgnn_rng_init(&m->batch_rng, 99);
  m->step = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void Free(Model *m)
{
  sgnn_optim_destroy(&m->o);
  sgnn_params_destroy(&m->P);
}

/* One Adam step on a random minibatch drawn with the model's RNG; returns the loss. */
static PetscErrorCode Step(SgnnBackend *be, SgnnDType dt, Model *m, double *loss)
{
  const SgnnLRSchedule sched = {.kind = SGNN_LR_EXP, .lr0 = 5e-3, .decay_rate = 0.5, .decay_steps = 10, .lr_min = 1e-5};
  double     xb[2 * BATCH], yb[BATCH];
  int        xs[2] = {BATCH, 2}, ys[2] = {BATCH, 1};
  SgnnTensor X, Y, h, z, L;

  PetscFunctionBegin;
  for (int i = 0; i < BATCH; i++) {
    int k = (int)(sgnn_rng_uniform(&m->batch_rng) * NT);
    xb[2 * i] = xt[2 * k];
    xb[2 * i + 1] = xt[2 * k + 1];
    yb[i] = yt[k];
  }
  NN(sgnn_tensor_from_f64(be, dt, 2, xs, xb, &X));
  NN(sgnn_tensor_from_f64(be, dt, 2, ys, yb, &Y));
  h = sgnn_tensor_ref(X);
  for (int l = 0; l < 3; l++) {
    NN(sgnn_linear(h, m->W[l], m->B[l], &z));
    sgnn_tensor_free(&h);
    if (l < 2) {
      NN(sgnn_tanh(z, &h));
      sgnn_tensor_free(&z);
    } else h = z;
  }
  NN(sgnn_mse_loss(h, Y, &L));
  NN(sgnn_params_zero_grad(m->P));
  NN(sgnn_backward(L));
  NN(sgnn_optim_set_lr(m->o, sgnn_lr_at(&sched, m->step)));
  NN(sgnn_optim_step(m->o));
  NN(sgnn_tensor_item(L, loss));
  m->step++;
  sgnn_tensor_free(&h);
  sgnn_tensor_free(&L);
  sgnn_tensor_free(&X);
  sgnn_tensor_free(&Y);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static SgNNState State(Model *m, const char **keys, const char **vals)
{
  SgNNState s = {.nconfig = 1, .config_keys = keys, .config_values = vals, .params = m->P, .optim = m->o, .nrng = 1, .rng = &m->batch_rng, .step = &m->step};
  return s;
}

int main(int argc, char **argv)
{
  SgnnBackend *be;
  const int    K = 12, N = 30;
  const char  *keys[1] = {"architecture"}, *vals[1] = {"mlp 2-16-16-1 tanh"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  NN(sgnn_backend_get("cpu", &be));
  for (int i = 0; i < NT; i++) {
    xt[2 * i]     = -3 + 6.0 * i / NT;
    xt[2 * i + 1] = 3 * sin(1.7 * i);
    yt[i]         = sin(xt[2 * i]) * cos(xt[2 * i + 1]);
  }
  for (int d = 0; d < 2; d++) {
    SgnnDType dt = d ? SGNN_F32 : SGNN_F64;
    Model     a, b;
    double    la[N], lb[N];
    long      n;

    /* uninterrupted */
    PetscCall(Build(be, dt, 7, 16, &a));
    for (int s = 0; s < N; s++) PetscCall(Step(be, dt, &a, &la[s]));
    /* interrupted at K, checkpointed, restored into a model initialised from another seed */
    PetscCall(Build(be, dt, 7, 16, &b));
    for (int s = 0; s < K; s++) PetscCall(Step(be, dt, &b, &lb[s]));
    {
      SgNNState st = State(&b, keys, vals);
      PetscCall(SgNNCheckpointWrite(PETSC_COMM_WORLD, "nnchk.h5", &st));
    }
    Free(&b);
    PetscCall(Build(be, dt, 12345, 16, &b));
    {
      SgNNState   st = State(&b, keys, vals);
      char        arch[64];
      PetscMPIInt rank;
      /* on 2 ranks, a slow rank 1: the read must still restore this checkpoint, not the one rank 0
         writes next (rank 0 alone writes, and would otherwise run ahead and rename the f32 one over it) */
      PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
      if (rank == 1) usleep(300000);
      PetscCall(SgNNCheckpointReadConfig(PETSC_COMM_WORLD, "nnchk.h5", "architecture", arch, sizeof arch));
      PetscCheck(!strcmp(arch, vals[0]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "config round trip: '%s'", arch);
      PetscCall(SgNNCheckpointRead(PETSC_COMM_WORLD, "nnchk.h5", &st));
    }
    PetscCheck(b.step == K && sgnn_optim_steps(b.o) == K, PETSC_COMM_SELF, PETSC_ERR_PLIB, "restored step %ld / optimizer step %ld, expected %d", b.step, sgnn_optim_steps(b.o), K);
    for (int s = K; s < N; s++) PetscCall(Step(be, dt, &b, &lb[s]));
    /* exact equality: the same operations on the same bits in the same order */
    for (int s = 0; s < N; s++) PetscCheck(la[s] == lb[s], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: loss at step %d differs after resume: %.17g vs %.17g", d ? "f32" : "f64", s, la[s], lb[s]);
    NN(sgnn_params_count(a.P, &n));
    {
      double *pa, *pb;
      PetscCall(PetscMalloc2(n, &pa, n, &pb));
      NN(sgnn_tensor_to_f64(sgnn_params_values(a.P), pa));
      NN(sgnn_tensor_to_f64(sgnn_params_values(b.P), pb));
      for (long i = 0; i < n; i++) PetscCheck(pa[i] == pb[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: parameter %ld differs after resume", d ? "f32" : "f64", i);
      PetscCall(PetscFree2(pa, pb));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: resumed at step %d of %d: losses and %ld parameters bit-identical (final loss %.6g)\n", d ? "f32" : "f64", K, N, n, la[N - 1]));
    Free(&a);
    Free(&b);
  }
  { /* another architecture: refused, naming what differs */
    Model          c;
    SgNNState      st;
    PetscErrorCode ierr;
    PetscCall(Build(be, SGNN_F32, 7, 8, &c));
    st = State(&c, keys, vals);
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = SgNNCheckpointRead(PETSC_COMM_WORLD, "nnchk.h5", &st);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr == PETSC_ERR_USER_INPUT, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a checkpoint of another architecture must be refused (got %d)", (int)ierr);
    Free(&c);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "checkpoint of another architecture refused\n"));
  }
  { /* the write path (sgwrite.h): a checkpoint over a file surge did not write is refused at the write
       itself (not only by a trainer's set-up check), the file is byte-identical, no .tmp is left */
    const char  text[] = "the user's notes, not a checkpoint\n";
    char        back[64] = "";
    Model       c;
    SgNNState   st;
    FILE       *fp;
    size_t      nr = 0;
    PetscMPIInt rank;
    PetscErrorCode ierr;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (!rank) {
      fp = fopen("nnchk_foreign.txt", "w");
      PetscCheck(fp && fputs(text, fp) >= 0 && !fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write nnchk_foreign.txt");
    }
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(Build(be, SGNN_F64, 7, 16, &c));
    st = State(&c, keys, vals);
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = SgNNCheckpointWrite(PETSC_COMM_WORLD, "nnchk_foreign.txt", &st);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr == PETSC_ERR_FILE_OPEN, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a checkpoint over a foreign file must be refused (got %d)", (int)ierr);
    if (!rank) {
      fp = fopen("nnchk_foreign.txt", "r");
      if (fp) {
        nr = fread(back, 1, sizeof back - 1, fp);
        fclose(fp);
      }
      PetscCheck(nr == strlen(text) && !memcmp(back, text, nr), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the foreign file was changed by a refused checkpoint write");
      {
        glob_t g; /* PATH.tmp.PID (sgwrite.h SgWriteTempName) or the old PATH.tmp */
        int    left = glob("nnchk_foreign.txt.tmp*", 0, NULL, &g) == 0;
        globfree(&g);
        PetscCheck(!left, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a refused checkpoint write left nnchk_foreign.txt.tmp*");
      }
    }
    Free(&c);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "checkpoint over a foreign file refused, the file byte-identical, no temporary\n"));
  }
  PetscCall(PetscFinalize());
  return 0;
}
