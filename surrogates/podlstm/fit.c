/* Training one POD-LSTM network through SgTrainer (the one pipeline of every surrogate): the loss is
   the mean squared error of the L x K scaled outputs of a window (summed over the local windows; the
   trainer divides by the global count), Adam at a constant rate (the paper's) or a schedule
   (-podlstm_lr_schedule), one validation per epoch on the validation windows,
   early stopping after `patience` epochs without a better validation R^2, the best weights kept
   (Keras' EarlyStopping with restore_best_weights, as the paper's DeepHyper runs use). With free_run
   (not in the paper) early stopping keeps only weights whose own free run stays on the training
   attractor (FreeRunStays): model selection by free runs, Vlachas et al. (Neural Networks 126, 2020). */
#include "sgpodlstm.h"
#include "sgtrainer.h"
#include "sgrng.h"

typedef struct {
  SgPodLstmNet              net;
  const SgPodLstmFitConfig *c;
  PetscReal                 best, *best_w, *yhat;
  PetscInt                  since, epochs, best_epoch;
  long                      np;
  PetscReal                *bq; /* [L K] a polynomial base's forecast of one window (ValidR2) */
  PetscBool                 best_stays; /* with free_run: the kept weights' free run stays */
  PetscInt                  left;       /* with free_run: better epochs passed over (their runs left) */
} Fit;

PetscReal SgPodLstmR2(PetscInt n, PetscInt m, const PetscReal y[], const PetscReal yhat[])
{
  PetscReal res = 0, tot = 0;
  for (PetscInt e = 0; e < m; e++) {
    PetscReal mean = 0;
    for (PetscInt w = 0; w < n; w++) mean += y[w * m + e];
    mean /= n;
    for (PetscInt w = 0; w < n; w++) {
      res += PetscSqr(y[w * m + e] - yhat[w * m + e]);
      tot += PetscSqr(y[w * m + e] - mean);
    }
  }
  return tot > 0 ? 1 - res / tot : (res > 0 ? -PETSC_MAX_REAL : 1);
}

static void AddBase(const SgPodLstmFitConfig *, const PetscReal[], PetscReal[], PetscReal[]);

/* input_noise: the local batch's inputs plus Gaussian noise of standard deviation input_noise (scaled
   units), a pure function of (seed, epoch, the window's global id, the element): the same on any number
   of ranks. The targets stay the truth: for a residual network the first window's target (the truth less
   the base's forecast of the clean input) becomes the truth less the base's forecast of the noisy one,
   which is what the network must add to that base for the served forecast to be the truth. */
static PetscErrorCode NoisyBatch(Fit *F, const SgLoaderBatch *b, PetscReal x[], PetscReal y[])
{
  const SgPodLstmFitConfig *c = F->c;
  const PetscInt            m = c->L * c->K, ny = PetscMax(1, c->rollout) * m;
  const PetscReal          *x0 = (const PetscReal *)b->data[0], *y0 = (const PetscReal *)b->data[1];
  PetscReal                *t;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(m, &t));
  PetscCall(PetscArraycpy(y, y0, b->nlocal * ny));
  for (PetscInt w = 0; w < b->nlocal; w++) {
    const uint64_t key = SgRngSplitMix64(c->seed * 0x9E3779B97F4A7C15ULL + 0x6E6F697365ULL) ^ ((uint64_t)b->epoch << 40) ^ ((uint64_t)b->ids[w] << 12);
    for (PetscInt i = 0; i < m; i++) {
      const uint64_t r1 = SgRngSplitMix64(key + 2 * (uint64_t)i), r2 = SgRngSplitMix64(key + 2 * (uint64_t)i + 1);
      const double   u1 = ((double)(r1 >> 11) + 1.0) * 0x1.0p-53, u2 = (double)(r2 >> 11) * 0x1.0p-53;
      x[w * m + i] = x0[w * m + i] + c->input_noise * SgRngBoxMuller(u1, u2);
    }
    if (c->residual && (c->base_scaled || c->base_G)) { /* y += base(clean x) - base(noisy x) */
      PetscReal *yw = y + w * ny;
      AddBase(c, x0 + w * m, F->bq, yw);
      for (PetscInt i = 0; i < m; i++) t[i] = 0;
      AddBase(c, x + w * m, F->bq, t);
      for (PetscInt i = 0; i < m; i++) yw[i] -= t[i];
    }
  }
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sum over the local windows of mean((yhat - y)^2) over their L K values (with a rollout, over the R
   windows forecast from the network's own forecasts: R L K values); sums: that sum, windows */
static PetscErrorCode Loss(SgTrainer tr, void *ctx, PetscInt stream, const SgLoaderBatch *b, const SgTrainerStepInfo *info, SgnnTensor *loss, PetscReal sums[])
{
  Fit       *F = (Fit *)ctx;
  PetscInt   R = PetscMax(1, F->c->rollout);
  int        shape[3] = {(int)b->nlocal, (int)F->c->L, (int)F->c->K}, yshape[3] = {(int)b->nlocal, (int)(R * F->c->L), (int)F->c->K};
  SgnnTensor x, y;
  double     v;
  PetscReal *xn = NULL, *yn = NULL;

  PetscFunctionBegin;
  if (F->c->input_noise > 0) {
    PetscCall(PetscMalloc2(b->nlocal * F->c->L * F->c->K, &xn, b->nlocal * R * F->c->L * F->c->K, &yn));
    PetscCall(NoisyBatch(F, b, xn, yn));
  }
  SgCallNN(sgnn_tensor_from_f64(F->net->be, F->net->dt, 3, shape, xn ? xn : (const double *)b->data[0], &x));
  SgCallNN(sgnn_tensor_from_f64(F->net->be, F->net->dt, 3, yshape, yn ? yn : (const double *)b->data[1], &y));
  PetscCall(PetscFree2(xn, yn));
  PetscCall(SgPodLstmNetRolloutLoss(F->net, x, y, R, loss));
  SgCallNN(sgnn_tensor_item(*loss, &v));
  sums[0] += v;
  sums[1] += b->nlocal;
  sgnn_tensor_free(&x);
  sgnn_tensor_free(&y);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add the base's forecast of the scaled window x [L K] to o (a residual network's output), as served */
static void AddBase(const SgPodLstmFitConfig *c, const PetscReal x[], PetscReal bq[], PetscReal o[])
{
  const PetscInt m = c->L * c->K;

  if (c->base_scaled) { /* a polynomial base on scaled coefficients */
    SgPodLstmVARIterate(c->base_scaled, c->L, x, bq);
    for (PetscInt i = 0; i < m; i++) o[i] += bq[i];
  } else
    for (PetscInt i = 0; i < m; i++) {
      PetscReal b = c->base_g[i];
      for (PetscInt j = 0; j < m; j++) b += c->base_G[i * m + j] * x[j];
      o[i] += b;
    }
}

/* Does the network's free run stay on the fitting period's attractor? Its own window-to-window
   iteration (each forecast, plus the base's for a residual network, is the next input: what the
   field.advance slot serves) of free_run snapshots from 4 starts spread over the fitting period, the 4
   as one batch; SgPodLstmFreeRunStays on each (the test of quad_free_run). A run is abandoned at its
   first non-finite value. Scaled coefficients throughout: the test is invariant under the scaling. */
static PetscErrorCode FreeRunStays(Fit *F, PetscBool *stays)
{
  const SgPodLstmFitConfig *c = F->c;
  const PetscInt            K = c->K, L = c->L, m = L * K, nw = (c->free_run + L - 1) / L, NS = 4;
  const PetscBool           base = (PetscBool)(c->residual && (c->base_scaled || c->base_G));
  PetscReal                *in, *out, *run;

  PetscFunctionBegin;
  *stays = PETSC_TRUE;
  PetscCall(PetscMalloc3(NS * m, &in, NS * m, &out, NS * nw * m, &run));
  for (PetscInt st = 0; st < NS; st++) { /* the L snapshots before s0, as QuadFreeRunStays' starts */
    const PetscInt s0 = PetscMax(L, c->nfit - st * (c->nfit / NS));
    PetscCall(PetscArraycpy(in + st * m, c->fit_s + (s0 - L) * K, m));
  }
  for (PetscInt w = 0; w < nw && *stays; w++) {
    PetscCall(SgPodLstmNetPredict(F->net, NS, L, in, out));
    for (PetscInt st = 0; st < NS; st++) {
      if (base) AddBase(c, in + st * m, F->bq, out + st * m);
      for (PetscInt i = 0; i < m; i++)
        if (PetscIsInfOrNanReal(out[st * m + i])) *stays = PETSC_FALSE;
      PetscCall(PetscArraycpy(run + (st * nw + w) * m, out + st * m, m));
    }
    PetscCall(PetscArraycpy(in, out, NS * m)); /* the forecast is the next input */
  }
  for (PetscInt st = 0; st < NS && *stays; st++) *stays = SgPodLstmFreeRunStays(c->fit_s, K, c->nfit, run + st * nw * m, c->free_run);
  PetscCall(PetscFree3(in, out, run));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The validation R^2: of the one-window forecasts, or with a rollout of the R windows forecast as the
   loss does (each fed back; a residual network's plus its base's, compared with the truth after the
   first window) -- early stopping then keeps the weights best at what the training minimises */
static PetscErrorCode ValidR2(Fit *F, PetscReal *r2)
{
  const SgPodLstmFitConfig *c = F->c;
  const PetscInt            m = c->L * c->K, R = PetscMax(1, c->rollout), n = c->nvalid_r, ny = R * m;
  PetscReal                *in, *out;

  PetscFunctionBegin;
  if (R == 1 || !c->vyr) {
    PetscCall(SgPodLstmNetPredict(F->net, c->nvalid, c->L, c->vx, F->yhat));
    *r2 = SgPodLstmR2(c->nvalid, m, c->vy, F->yhat);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc2(n * m, &in, n * m, &out));
  PetscCall(PetscArraycpy(in, c->vx, n * m));
  for (PetscInt r = 0; r < R; r++) {
    PetscCall(SgPodLstmNetPredict(F->net, n, c->L, in, out));
    for (PetscInt w = 0; w < n; w++) {
      PetscReal *x = in + w * m, *o = out + w * m, *y = F->yhat + w * ny + r * m;
      for (PetscInt i = 0; i < m; i++) y[i] = o[i];
      if (c->base_G || c->base_scaled) { /* the base's forecast of the window fed in */
        AddBase(c, x, F->bq, o);
        if (r > 0)
          for (PetscInt i = 0; i < m; i++) y[i] = o[i];
      }
    }
    PetscCall(PetscArraycpy(in, out, n * m)); /* the forecast is the next input */
  }
  *r2 = SgPodLstmR2(n, ny, c->vyr, F->yhat);
  PetscCall(PetscFree2(in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* once per epoch: training MSE, validation R^2 (the same on every rank: the validation windows and
   the weights are replicated), early stopping */
static PetscErrorCode Monitor(SgTrainer tr, void *ctx, PetscInt step, const PetscReal sums[], PetscReal cols[])
{
  Fit      *F = (Fit *)ctx;
  PetscReal r2;
  PetscBool stays = PETSC_TRUE;

  PetscFunctionBegin;
  F->epochs++;
  PetscCall(ValidR2(F, &r2));
  cols[0] = sums[1] > 0 ? sums[0] / sums[1] : NAN;
  cols[1] = r2;
  /* with free_run: a better R^2 counts only if the free run stays, and a staying epoch replaces kept
     weights whose run left whatever its R^2 (model selection by free runs, Vlachas et al. 2020) */
  if (F->c->free_run && (r2 > F->best || !F->best_stays || F->best_epoch < 0)) PetscCall(FreeRunStays(F, &stays));
  if (F->best_epoch < 0 || (stays && !F->best_stays) || (stays == F->best_stays && r2 > F->best)) {
    F->best = r2;
    F->best_epoch = F->epochs;
    F->best_stays = stays;
    F->since = 0;
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(F->net->P), F->best_w));
  } else {
    if (r2 > F->best) F->left++; /* better, but its free run left the attractor */
    if (++F->since >= F->c->patience) {
      char why[96];
      PetscCall(PetscSNPrintf(why, sizeof why, "early stop: validation R2 not better than %.5f (epoch %" PetscInt_FMT ") for %" PetscInt_FMT " epochs", (double)F->best, F->best_epoch, F->c->patience));
      PetscCall(SgTrainerRequestStop(tr, why));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmFit(MPI_Comm comm, SgPodLstmNet net, const SgPodLstmFitConfig *c, SgPodLstmFitResult *res)
{
  Fit             F = {net, c, -PETSC_MAX_REAL, NULL, NULL, 0, 0, -1, 0, NULL};
  SgTrainer       tr;
  SgTrainerOps    ops = {Loss, NULL, Monitor, NULL};
  const char     *cols[2] = {"mse_train", "r2_valid"}, *fields[2] = {"x", "y"};
  SgnnOptimConfig oc;
  SgnnLRSchedule  sc = {0};
  PetscMPIInt     size;
  PetscInt        per_epoch;
  double          t0 = MPI_Wtime();
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(!c->free_run || (c->fit_s && c->nfit >= c->free_run && c->nfit >= c->L), comm, PETSC_ERR_USER_INPUT, "podlstm: free_run %" PetscInt_FMT " snapshots: give 0 (no free-run selection) or at most the %" PetscInt_FMT " fitting snapshots", c->free_run, c->nfit);
  PetscCheck((!c->free_run && c->input_noise <= 0) || !c->residual || c->base_scaled || c->base_G, comm, PETSC_ERR_PLIB, "podlstm: free_run or input_noise on a residual network needs its base on scaled coefficients");
  PetscCheck(c->ntrain >= 1 && c->nvalid >= 1, comm, PETSC_ERR_USER_INPUT, "podlstm: %" PetscInt_FMT " training and %" PetscInt_FMT " validation windows: need at least one of each", c->ntrain, c->nvalid);
  per_epoch = (c->ntrain + c->batch - 1) / c->batch;
  SgCallNN(sgnn_params_count(net->P, &F.np));
  PetscCall(PetscMalloc3(F.np, &F.best_w, PetscMax(c->nvalid, c->nvalid_r * PetscMax(1, c->rollout)) * c->L * c->K, &F.yhat, c->L * c->K, &F.bq));
  if (c->residual) { /* the output layer starts at zero: the untrained network adds nothing to the base,
                        and it is the first candidate of early stopping (a network that never beats the
                        base on the validation windows ends as the base) */
    SgCallNN(sgnn_tensor_fill(net->Wout, 0.0));
    SgCallNN(sgnn_tensor_fill(net->bout, 0.0));
    PetscCall(ValidR2(&F, &F.best));
    if (c->free_run) PetscCall(FreeRunStays(&F, &F.best_stays));
    F.best_epoch = 0;
    SgCallNN(sgnn_tensor_to_f64(sgnn_params_values(net->P), F.best_w));
  }
  PetscCall(SgTrainerCreate(comm, &tr));
  PetscCall(SgTrainerSetName(tr, "podlstm"));
  PetscCall(SgTrainerSetModel(tr, net->P));
  PetscCall(SgTrainerSetOps(tr, &ops, &F));
  PetscCall(SgTrainerSetMetrics(tr, 2, 2, cols, "# step mse_train r2_valid lr wall_s"));
  PetscCall(SgTrainerSetFields(tr, 2, fields));
  PetscCall(SgTrainerAddStream(tr, 1, &c->windows, c->ntrain, NULL));
  PetscCall(SgTrainerSetBatchSize(tr, c->batch));
  PetscCall(SgTrainerSetSeed(tr, c->seed));
  PetscCall(SgTrainerSetNumSteps(tr, c->max_epochs * per_epoch));
  if (c->optim) oc = *c->optim;
  else sgnn_optim_defaults(SGNN_ADAM, &oc);
  oc.lr = c->lr;
  sc.kind = c->schedule;
  sc.lr0 = c->lr;
  sc.lr_min = c->schedule == SGNN_LR_CONST ? 0 : PetscMin(c->lr_min, c->lr);
  if (c->schedule == SGNN_LR_COSINE) sc.decay_steps = c->max_epochs * per_epoch; /* lr_min at the last epoch */
  if (c->schedule == SGNN_LR_EXP) {
    sc.decay_steps = c->decay_epochs * per_epoch;
    sc.decay_rate = c->decay_rate;
  }
  PetscCall(SgTrainerSetOptimizer(tr, &oc));
  PetscCall(SgTrainerSetShard(tr, c->shard, c->compress, c->cub_sync));
  PetscCall(SgTrainerSetSdp4bit(tr, c->sdp_node));
  PetscCall(SgTrainerSetShardBucket(tr, c->shard_bucket));
  if (c->grad_open > 0) PetscCall(SgTrainerSetShardGradOpen(tr, c->grad_open));
  PetscCall(SgTrainerSetOptionsPrefix(tr, "podlstm_")); /* its refusals name -podlstm_shard etc. */
  PetscCall(SgTrainerSetSchedule(tr, &sc));
  PetscCall(SgTrainerSetMonitorFrequency(tr, per_epoch));
  if (c->lcurve) PetscCall(SgTrainerSetLCurve(tr, c->lcurve));
  PetscCall(SgTrainerSetQuiet(tr, c->quiet));
  PetscCall(SgTrainerSetSyncType(tr, "allreduce", 0)); /* small models: one message beats buckets */
  if (c->residual && c->base_G && PetscMax(1, c->rollout) > 1) { /* the base in the rollout's loss */
    const int nlk = (int)(c->L * c->K), sG[2] = {nlk, nlk};
    SgCallNN(sgnn_tensor_from_f64(net->be, net->dt, 2, sG, c->base_G, &net->baseW));
    SgCallNN(sgnn_tensor_from_f64(net->be, net->dt, 1, &nlk, c->base_g, &net->baseb));
  }
  if (c->residual && c->base_scaled && PetscMax(1, c->rollout) > 1) PetscCall(SgPodLstmNetSetPolyBase(net, c->base_scaled));
  ierr = SgTrainerTrain(tr);
  sgnn_tensor_free(&net->baseW); /* NULL again: prediction adds the base outside the network */
  sgnn_tensor_free(&net->baseb);
  PetscCall(SgPodLstmNetSetPolyBase(net, NULL));
  PetscCall(SgTrainerDestroy(&tr));
  PetscCall(ierr);
  SgCallNN(sgnn_tensor_set_f64(sgnn_params_values(net->P), F.best_w)); /* the best epoch's weights */
  res->r2      = F.best;
  res->epochs  = F.epochs;
  res->best_epoch = F.best_epoch;
  res->free_stays = F.best_stays;
  res->free_left  = F.left;
  res->seconds = MPI_Wtime() - t0;
  PetscCall(PetscFree3(F.best_w, F.yhat, F.bq));
  PetscFunctionReturn(PETSC_SUCCESS);
}
