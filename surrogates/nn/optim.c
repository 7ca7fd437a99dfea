/* optim.c -- SGD (momentum, Nesterov), Adam, AdamW, Lion over the parameter
 * slab (one fused kernel call per step), learning-rate schedules and
 * global-norm gradient clipping. Conventions follow PyTorch's optimizers so
 * hyper-parameters transfer. */
#include "sgnn_impl.h"
#include <math.h>
#include <stdlib.h>

struct SgnnOptim_ {
  SgnnParams P;
  SgnnOptimConfig c;
  SgnnTensor m, v;
  long step;
  long lo, n; /* the range of the slab it updates (ZeRO: a rank's partition); the whole slab by default */
};

void sgnn_optim_defaults(SgnnOptimType type, SgnnOptimConfig *c)
{
  c->type = type;
  c->lr = type == SGNN_LION ? 1e-4 : 1e-3;
  c->momentum = 0;
  c->nesterov = 0;
  c->beta1 = 0.9;
  c->beta2 = type == SGNN_LION ? 0.99 : 0.999;
  c->eps = 1e-8;
  c->weight_decay = type == SGNN_ADAMW ? 1e-2 : 0;
}

int sgnn_optim_create(SgnnParams P, const SgnnOptimConfig *c, SgnnOptim *op)
{
  SGNN_CHECK(P && sgnn_params_values(P), SGNN_ERR_STATE, "optim_create: params not set up");
  return sgnn_optim_create_range(P, c, 0, sgnn_tensor_numel(sgnn_params_values(P)), op);
}

/* The optimizer of values [lo, lo+n) of the slab only: its moments have n elements and its step
   touches nothing outside the range (ZeRO stage 1/2: each data-parallel rank owns one range). The
   elementwise update is the same code as for the whole slab, so a range gives the same bits. */
int sgnn_optim_create_range(SgnnParams P, const SgnnOptimConfig *c, long lo, long n, SgnnOptim *op)
{
  SGNN_CHECK(P && c && op, SGNN_ERR_ARG, "optim_create: NULL argument");
  SgnnTensor vals = sgnn_params_values(P);
  SGNN_CHECK(vals, SGNN_ERR_STATE, "optim_create: params not set up");
  SGNN_CHECK(lo >= 0 && n >= 1 && lo + n <= vals->numel && n <= 2147483647L, SGNN_ERR_ARG, "optim_create: range [%ld, %ld) outside the slab of %ld values", lo, lo + n, vals->numel);
  SGNN_CHECK(c->type >= SGNN_SGD && c->type <= SGNN_LION, SGNN_ERR_ARG, "optim_create: unknown type %d", (int)c->type);
  SGNN_CHECK(c->lr >= 0 && c->weight_decay >= 0, SGNN_ERR_ARG, "optim_create: lr %g, weight_decay %g must be >= 0", c->lr,
             c->weight_decay);
  if (c->type != SGNN_SGD)
    SGNN_CHECK(c->beta1 >= 0 && c->beta1 < 1 && c->beta2 >= 0 && c->beta2 < 1, SGNN_ERR_ARG,
               "optim_create: betas (%g, %g) must lie in [0,1)", c->beta1, c->beta2);
  SGNN_CHECK(!c->nesterov || c->momentum > 0, SGNN_ERR_ARG, "optim_create: Nesterov needs momentum > 0");
  SgnnOptim o = calloc(1, sizeof *o);
  SGNN_CHECK(o, SGNN_ERR_MEM, "optim_create: out of memory");
  o->P = P;
  o->c = *c;
  o->lo = lo;
  o->n = n;
  int rc = 0, shape[1] = {(int)n};
  int need_m = c->type != SGNN_SGD || c->momentum > 0, need_v = c->type == SGNN_ADAM || c->type == SGNN_ADAMW;
  if (need_m) rc = sgnn_tensor_zeros(sgnn_be(vals), vals->dtype, 1, shape, &o->m);
  if (!rc && need_v) rc = sgnn_tensor_zeros(sgnn_be(vals), vals->dtype, 1, shape, &o->v);
  if (rc) {
    sgnn_optim_destroy(&o);
    return rc;
  }
  *op = o;
  return 0;
}

int sgnn_optim_set_lr(SgnnOptim o, double lr)
{
  SGNN_CHECK(o && lr >= 0, SGNN_ERR_ARG, "optim_set_lr: bad optimizer or lr %g", lr);
  o->c.lr = lr;
  return 0;
}

int sgnn_optim_step(SgnnOptim o)
{
  SGNN_CHECK(o, SGNN_ERR_ARG, "optim_step: NULL optimizer");
  SgnnTensor p = sgnn_params_values(o->P);
  return sgnn_optim_step_at(o, (char *)sgnn_ptr(p) + (size_t)o->lo * sgnn_esize(p->dtype));
}

int sgnn_optim_step_at(SgnnOptim o, void *pv)
{
  SGNN_CHECK(o && pv, SGNN_ERR_ARG, "optim_step: NULL optimizer or values");
  SgnnTensor g = sgnn_params_grads(o->P);
  return sgnn_optim_step_with(o, pv, (char *)sgnn_ptr(g) + (size_t)o->lo * sgnn_esize(g->dtype));
}

int sgnn_optim_step_with(SgnnOptim o, void *pv, const void *gv)
{
  SGNN_CHECK(o && pv && gv, SGNN_ERR_ARG, "optim_step: NULL optimizer, values or gradient");
  SgnnTensor p = sgnn_params_values(o->P);
  long t = o->step + 1;
  SgnnOptimArgs a = {.type = o->c.type,
                     .dtype = p->dtype,
                     .n = o->n,
                     .p = pv,
                     .g = gv,
                     .m = o->m ? sgnn_ptr(o->m) : NULL,
                     .v = o->v ? sgnn_ptr(o->v) : NULL,
                     .lr = o->c.lr,
                     .b1 = o->c.beta1,
                     .b2 = o->c.beta2,
                     .eps = o->c.eps,
                     .wd = o->c.weight_decay,
                     .momentum = o->c.momentum,
                     .bc1 = 1.0 - pow(o->c.beta1, (double)t),
                     .bc2 = 1.0 - pow(o->c.beta2, (double)t),
                     .nesterov = o->c.nesterov,
                     .first = o->step == 0};
  SgnnBackend *be = sgnn_be(p);
  SGNN_CHECK(be->optim, SGNN_ERR_UNSUPPORTED, "optim_step: backend '%s' has no optimizer kernel", be->name);
  SGNN_TRY(be->optim(&a));
  o->step = t;
  return 0;
}

long sgnn_optim_steps(SgnnOptim o) { return o ? o->step : -1; }

int sgnn_optim_state(SgnnOptim o, SgnnTensor *m, SgnnTensor *v, long **step)
{
  SGNN_CHECK(o, SGNN_ERR_ARG, "optim_state: NULL optimizer");
  if (m) *m = o->m;
  if (v) *v = o->v;
  if (step) *step = &o->step;
  return 0;
}

void sgnn_optim_destroy(SgnnOptim *op)
{
  if (!op || !*op) return;
  sgnn_tensor_free(&(*op)->m);
  sgnn_tensor_free(&(*op)->v);
  free(*op);
  *op = NULL;
}

double sgnn_lr_at(const SgnnLRSchedule *s, long step)
{
  if (s->warmup > 0 && step < s->warmup) return s->lr0 * (double)(step + 1) / (double)s->warmup;
  long t = step - (s->warmup > 0 ? s->warmup : 0);
  switch (s->kind) {
  case SGNN_LR_EXP: { /* staircase, as DeePMD-kit: lr0 * rate^floor(t/decay_steps) */
    double lr = s->lr0 * pow(s->decay_rate, (double)(t / (s->decay_steps > 0 ? s->decay_steps : 1)));
    return lr > s->lr_min ? lr : s->lr_min;
  }
  case SGNN_LR_COSINE: {
    double f = s->decay_steps > 0 ? (double)(t < s->decay_steps ? t : s->decay_steps) / (double)s->decay_steps : 1.0;
    return s->lr_min + 0.5 * (s->lr0 - s->lr_min) * (1.0 + cos(M_PI * f));
  }
  default: return s->lr0;
  }
}

int sgnn_clip_grad_norm(SgnnParams P, double max_norm, double *norm)
{
  SgnnTensor g = sgnn_params_grads(P);
  SGNN_CHECK(g, SGNN_ERR_STATE, "clip_grad_norm: params not set up");
  SGNN_CHECK(max_norm > 0, SGNN_ERR_ARG, "clip_grad_norm: max_norm %g must be > 0", max_norm);
  double ss;
  SgnnBackend *be = sgnn_be(g);
  SGNN_TRY(be->sumsq(g->dtype, g->numel, sgnn_ptr(g), &ss));
  double nrm = sqrt(ss);
  if (norm) *norm = nrm;
  if (nrm > max_norm) /* torch's 1e-6 keeps the scale finite for tiny norms */
    SGNN_TRY(be->unary(SGNN_U_AFFINE, g->dtype, g->numel, sgnn_ptr(g), sgnn_ptr(g), max_norm / (nrm + 1e-6), 0.0));
  return 0;
}
