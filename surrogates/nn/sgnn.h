/* sgnn.h -- public API of surge's neural-network engine (surrogates/nn).
 *
 * A small tensor library with reverse-mode automatic differentiation that can
 * differentiate its own backward pass (double backward), CPU and CUDA backends
 * behind one kernel table, optimizers and a parameter slab.
 *
 * Depends on libc, libm, optionally a CBLAS (OpenBLAS) and optionally CUDA.
 * No PETSc, HDF5 or MPI: this library must build on a bare GPU box.
 *
 * Conventions
 *  - Every function that can fail returns int: 0 (SGNN_OK) or an SGNN_ERR_*
 *    code; sgnn_last_error() then holds a message naming the op and shapes.
 *  - Ops create their result: `int sgnn_op(inputs..., SgnnTensor *out)`.
 *    The caller owns *out and releases it with sgnn_tensor_free(&out).
 *    Releasing a tensor early is always safe: the autodiff graph keeps
 *    exactly what backward still needs (and drops it as soon as it has run).
 *  - Tensors are row-major and contiguous; views (reshape, parameter views
 *    into a slab) share storage with an element offset.
 */
#ifndef SGNN_H
#define SGNN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGNN_MAX_DIMS 5

typedef enum { SGNN_F32 = 0, SGNN_F64 = 1 } SgnnDType;

enum {
  SGNN_OK = 0,
  SGNN_ERR_ARG = 1,         /* bad argument (NULL, out of range) */
  SGNN_ERR_SHAPE = 2,       /* incompatible shapes */
  SGNN_ERR_DTYPE = 3,       /* mixed or unsupported dtypes */
  SGNN_ERR_MEM = 4,         /* allocation failed */
  SGNN_ERR_BACKEND = 5,     /* backend unknown / device error / mixed backends */
  SGNN_ERR_UNSUPPORTED = 6, /* feature not implemented (message says which) */
  SGNN_ERR_STATE = 7        /* wrong call order, e.g. backward twice without retain */
};

typedef struct SgnnBackend_ SgnnBackend;
typedef struct SgnnTensor_ *SgnnTensor;
typedef struct SgnnParams_ *SgnnParams;
typedef struct SgnnOptim_ *SgnnOptim;

/* ---- errors ---------------------------------------------------------- */
const char *sgnn_last_error(void);
void sgnn_clear_error(void);

/* ---- backends (chosen at run time by name: "cpu", "cuda") ---------- */
int sgnn_backend_get(const char *name, SgnnBackend **be);
const char *sgnn_backend_name(const SgnnBackend *be);
int sgnn_backend_available(const char *name); /* 1 if compiled in and usable */
/* Bytes currently allocated for tensor storage on a backend, and the peak
 * since the last reset. Benchmarks report the peak. */
size_t sgnn_mem_current(const SgnnBackend *be);
size_t sgnn_mem_peak(const SgnnBackend *be);
void sgnn_mem_reset_peak(SgnnBackend *be);
/* Where fallback messages go (default stderr); NULL silences them. */
void sgnn_set_log(void (*fn)(const char *msg));

/* ---- tensors ----------------------------------------------------------- */
int sgnn_tensor_zeros(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, SgnnTensor *out);
int sgnn_tensor_full(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, double v, SgnnTensor *out);
/* data is host memory of the tensor's own dtype */
int sgnn_tensor_from_host(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, const void *data,
                          SgnnTensor *out);
/* data is double, converted to dt */
int sgnn_tensor_from_f64(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, const double *data,
                         SgnnTensor *out);
int sgnn_tensor_to_host(SgnnTensor t, void *buf);    /* own dtype */
int sgnn_tensor_to_f64(SgnnTensor t, double *buf);   /* converted */
int sgnn_tensor_set_f64(SgnnTensor t, const double *buf); /* overwrite data in place (no autodiff) */
int sgnn_tensor_item(SgnnTensor t, double *v);       /* single-element tensor */
int sgnn_tensor_fill(SgnnTensor t, double v);        /* in place, no autodiff */
int sgnn_tensor_scale(SgnnTensor t, double a);       /* t *= a in place, no autodiff */
/* raw data pointer (host memory on cpu, device memory on cuda), e.g. for
 * MPI on the gradient slab; valid while t lives */
void *sgnn_tensor_data(SgnnTensor t);
SgnnTensor sgnn_tensor_ref(SgnnTensor t);            /* new reference to the same tensor */
void sgnn_tensor_free(SgnnTensor *t);                /* drop a reference, *t = NULL */
int sgnn_tensor_ndim(SgnnTensor t);
const int *sgnn_tensor_shape(SgnnTensor t);
long sgnn_tensor_numel(SgnnTensor t);
SgnnDType sgnn_tensor_dtype(SgnnTensor t);
SgnnBackend *sgnn_tensor_backend(SgnnTensor t);
int sgnn_tensor_set_requires_grad(SgnnTensor t, int on); /* leaves only */
int sgnn_tensor_requires_grad(SgnnTensor t);
SgnnTensor sgnn_tensor_grad(SgnnTensor t);           /* borrowed; NULL if none */
int sgnn_tensor_detach(SgnnTensor t, SgnnTensor *out); /* shares data, no graph */
int sgnn_tensor_clone(SgnnTensor t, SgnnTensor *out);  /* copies data, no graph */
int sgnn_tensor_to_backend(SgnnTensor t, SgnnBackend *be, SgnnTensor *out); /* copy, no graph */

/* ---- autodiff ---------------------------------------------------------- */
/* Recording is on by default; returns the previous setting. */
int sgnn_set_grad_enabled(int on);
int sgnn_grad_enabled(void);
/* Accumulate d(loss)/d(leaf) into every leaf's grad (loss: one element).
 * The graph's saved tensors are released as backward passes them. */
int sgnn_backward(SgnnTensor loss);
/* Hook for sgnn_backward. Before the sweep it is called once with final=0
 * for every leaf that will receive a gradient; during the sweep, with
 * final=1 as soon as a leaf's gradient is complete (all contributions
 * accumulated) while backward continues with the rest of the tape.
 * Data-parallel training starts the allreduce of a gradient bucket there.
 * Per thread; NULL removes it. */
typedef void (*SgnnGradReadyFn)(SgnnTensor leaf, int final, void *ctx);
void sgnn_set_grad_ready_hook(SgnnGradReadyFn fn, void *ctx);
/* grads[i] = sum_j d(outs[j])/d(ins[i]) . gouts[j]  (gouts may be NULL: ones).
 * create_graph=1 records the backward pass itself so grads[i] can be
 * differentiated again (forces in a loss, PDE residuals); it keeps the
 * forward graph alive. An input the outputs do not depend on gets zeros. */
int sgnn_grad(int nout, SgnnTensor *outs, SgnnTensor *gouts, int nin, SgnnTensor *ins, int create_graph,
              SgnnTensor *grads);

/* ---- ops (all differentiable to second order unless noted) ----------- */
/* numpy broadcasting */
int sgnn_add(SgnnTensor a, SgnnTensor b, SgnnTensor *out);
int sgnn_sub(SgnnTensor a, SgnnTensor b, SgnnTensor *out);
int sgnn_mul(SgnnTensor a, SgnnTensor b, SgnnTensor *out);
int sgnn_div(SgnnTensor a, SgnnTensor b, SgnnTensor *out);
int sgnn_affine(SgnnTensor x, double a, double b, SgnnTensor *out); /* a*x + b */
int sgnn_pow(SgnnTensor x, double p, SgnnTensor *out);              /* x^p (x>0 unless p integer) */
int sgnn_tanh(SgnnTensor x, SgnnTensor *out);
int sgnn_sigmoid(SgnnTensor x, SgnnTensor *out);
int sgnn_relu(SgnnTensor x, SgnnTensor *out);
int sgnn_softplus(SgnnTensor x, SgnnTensor *out);
int sgnn_exp(SgnnTensor x, SgnnTensor *out);
int sgnn_log(SgnnTensor x, SgnnTensor *out);
int sgnn_sqrt(SgnnTensor x, SgnnTensor *out);
int sgnn_abs(SgnnTensor x, SgnnTensor *out);
/* reductions: naxes == 0 reduces over all axes (to a 0-d tensor unless keepdim) */
int sgnn_sum(SgnnTensor x, int naxes, const int *axes, int keepdim, SgnnTensor *out);
int sgnn_mean(SgnnTensor x, int naxes, const int *axes, int keepdim, SgnnTensor *out);
int sgnn_expand(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out); /* broadcast copy */
int sgnn_sum_to(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out); /* adjoint of expand */
/* shape */
int sgnn_reshape(SgnnTensor x, int ndim, const int *shape, SgnnTensor *out); /* view; one -1 allowed */
int sgnn_permute(SgnnTensor x, const int *perm, SgnnTensor *out);
int sgnn_transpose(SgnnTensor x, int d0, int d1, SgnnTensor *out);
int sgnn_slice(SgnnTensor x, int axis, int start, int stop, SgnnTensor *out);
int sgnn_pad_axis(SgnnTensor x, int axis, int before, int after, SgnnTensor *out); /* zero pad; adjoint of slice */
int sgnn_concat(int n, SgnnTensor *xs, int axis, SgnnTensor *out);
/* gather along an axis with host indices (copied) */
int sgnn_index_select(SgnnTensor x, int axis, long n, const long *idx, SgnnTensor *out);
/* out has size dim_size along axis; out[..idx[i]..] += x[..i..] */
int sgnn_scatter_add(SgnnTensor x, int axis, long n, const long *idx, int dim_size, SgnnTensor *out);
/* linear algebra: a [M,K] or [B,M,K] (or transposed by ta), b likewise -> [M,N] / [B,M,N] */
int sgnn_matmul(SgnnTensor a, SgnnTensor b, int ta, int tb, SgnnTensor *out);
/* x [N,in] , W [out,in] (torch layout), bias [out] or NULL -> [N,out] */
int sgnn_linear(SgnnTensor x, SgnnTensor W, SgnnTensor bias, SgnnTensor *out);
/* convolution on [N,C,D,H,W]; 1d/2d by size-1 dims. w [Co,Ci,kd,kh,kw], bias [Co] or NULL */
int sgnn_conv3d(SgnnTensor x, SgnnTensor w, SgnnTensor bias, const int stride[3], const int pad[3],
                SgnnTensor *out);
/* x [N,C,D,H,W] -> columns [C*kd*kh*kw, N, Do*Ho*Wo]; col2im3d is its adjoint */
int sgnn_im2col3d(SgnnTensor x, const int k[3], const int stride[3], const int pad[3], SgnnTensor *out);
int sgnn_col2im3d(SgnnTensor cols, int C, const int in_dhw[3], const int k[3], const int stride[3],
                  const int pad[3], SgnnTensor *out);
int sgnn_maxpool3d(SgnnTensor x, const int k[3], const int stride[3], SgnnTensor *out);
int sgnn_avgpool3d(SgnnTensor x, const int k[3], const int stride[3], SgnnTensor *out);
int sgnn_upsample_nearest3d(SgnnTensor x, const int factor[3], SgnnTensor *out);
/* align_corners=False convention (PyTorch's default), integer factors */
int sgnn_upsample_trilinear3d(SgnnTensor x, const int factor[3], SgnnTensor *out);
/* grid [B,C,D,H,W], pts [B,P,3] in index coordinates (z,y,x), 0 <= z <= D-1 ...
 * -> [B,P,C]; differentiable w.r.t. grid and pts (to second order). */
int sgnn_interp_trilinear(SgnnTensor grid, SgnnTensor pts, SgnnTensor *out);
/* normalisation on [N,C,...]; gamma/beta [C] or NULL */
int sgnn_group_norm(SgnnTensor x, int groups, SgnnTensor gamma, SgnnTensor beta, double eps, SgnnTensor *out);
/* training=1: batch statistics (running_* updated in place if given, torch's
 * momentum convention and unbiased running variance); training=0: running stats */
int sgnn_batch_norm(SgnnTensor x, SgnnTensor gamma, SgnnTensor beta, SgnnTensor running_mean,
                    SgnnTensor running_var, int training, double momentum, double eps, SgnnTensor *out);
/* LSTM cell, torch gate order (i,f,g,o): x [B,I], h,c [B,H], Wih [4H,I], Whh [4H,H], bias [4H] or NULL */
int sgnn_lstm_cell(SgnnTensor x, SgnnTensor h, SgnnTensor c, SgnnTensor Wih, SgnnTensor Whh, SgnnTensor bias,
                   SgnnTensor *h_out, SgnnTensor *c_out);
int sgnn_mse_loss(SgnnTensor pred, SgnnTensor target, SgnnTensor *out);
int sgnn_l1_loss(SgnnTensor pred, SgnnTensor target, SgnnTensor *out);

/* ---- random numbers (counter-based: Philox4x32-10) -------------------- */
typedef struct { unsigned long long seed, counter; } SgnnRng; /* the whole state: save/restore freely */
void sgnn_rng_init(SgnnRng *r, unsigned long long seed);
double sgnn_rng_uniform(SgnnRng *r); /* [0,1) */
double sgnn_rng_normal(SgnnRng *r);
int sgnn_init_uniform(SgnnTensor t, double lo, double hi, SgnnRng *r);
int sgnn_init_normal(SgnnTensor t, double mean, double std, SgnnRng *r);
/* fan_in/fan_out from shape: [out,in,...kernel] (torch layout) */
int sgnn_init_xavier_uniform(SgnnTensor t, double gain, SgnnRng *r);
int sgnn_init_he_normal(SgnnTensor t, SgnnRng *r);

/* ---- parameter slab ---------------------------------------------------- */
/* Declare parameters, then sgnn_params_setup() allocates ONE value slab and
 * ONE gradient slab; each parameter is a view (and its grad a view) into them,
 * so one allreduce or one HDF5 dataset covers the whole model. */
int sgnn_params_create(SgnnBackend *be, SgnnDType dt, SgnnParams *P);
int sgnn_params_add(SgnnParams P, const char *name, int ndim, const int *shape, SgnnTensor *view);
int sgnn_params_setup(SgnnParams P);
int sgnn_params_count(SgnnParams P, long *n);    /* number of scalars */
SgnnTensor sgnn_params_values(SgnnParams P);     /* borrowed 1-d view of the value slab */
SgnnTensor sgnn_params_grads(SgnnParams P);      /* borrowed 1-d view of the gradient slab */
int sgnn_params_zero_grad(SgnnParams P);
int sgnn_params_num(SgnnParams P);
long sgnn_params_offset(SgnnParams P, int i); /* element offset of parameter i in the slabs */
const char *sgnn_params_name(SgnnParams P, int i);
SgnnTensor sgnn_params_get(SgnnParams P, int i);
/* ZeRO stage 3: the memory of the value (which 0) or gradient (1) slab freed, and allocated again
 * (contents undefined); every view stays valid, but must not be used while its slab is released */
int sgnn_params_release(SgnnParams P, int which);
int sgnn_params_acquire(SgnnParams P, int which);
int sgnn_params_resident(SgnnParams P, int which);
/* ZeRO stage 3 by buckets: the parameters grouped into nb buckets of consecutive parameters (bucket k
 * holds parameters first[k] .. first[k+1]-1), each with memory of its own. Bound (bind 1), every
 * parameter view addresses its bucket, and each use of a view first calls fill(ctx, k), which must
 * make bucket k resident (sgnn_params_bucket_alloc and its values; it may free others); unbound
 * (bind 0), the views address the value slab again. The fill is the caller's: the engine does no
 * communication. A new setup replaces the buckets (nb 0: none). */
typedef int (*SgnnBucketFill)(void *ctx, int bucket);
int sgnn_params_bucket_setup(SgnnParams P, int nb, const int *first, SgnnBucketFill fill, void *ctx);
int sgnn_params_bucket_bind(SgnnParams P, int bind);
int sgnn_params_bucket_range(SgnnParams P, int k, long *lo, long *n); /* its values [lo, lo+n) of the slab */
void *sgnn_params_bucket_mem(SgnnParams P, int k);                      /* NULL when absent; no fill */
int sgnn_params_bucket_alloc(SgnnParams P, int k, void **mem);         /* contents undefined */
int sgnn_params_bucket_free(SgnnParams P, int k);
/* ZeRO stages 2 and 3 by buckets: the same for the gradient views (parameter i's gradient, which
 * backward accumulates into). Bound, each gradient view addresses its bucket and each use of it first
 * calls fill(ctx, k), which must make bucket k resident (the caller allocates and zeroes it at its
 * first use, and may refuse a bucket whose sum it has already sent); unbound, the gradient slab. */
int sgnn_params_grad_bucket_setup(SgnnParams P, int nb, const int *first, SgnnBucketFill fill, void *ctx);
int sgnn_params_grad_bucket_bind(SgnnParams P, int bind);
void *sgnn_params_grad_bucket_mem(SgnnParams P, int k);              /* NULL when absent; no fill */
int sgnn_params_grad_bucket_alloc(SgnnParams P, int k, void **mem); /* contents undefined */
int sgnn_params_grad_bucket_free(SgnnParams P, int k);
int sgnn_params_index(SgnnParams P, SgnnTensor view); /* i of parameter view i (the grad-ready hook's leaf), -1 if none */
void sgnn_params_destroy(SgnnParams *P);

/* ---- optimizers, schedules, clipping ------------------------------------ */
typedef enum { SGNN_SGD = 0, SGNN_ADAM = 1, SGNN_ADAMW = 2, SGNN_LION = 3 } SgnnOptimType;
typedef struct {
  SgnnOptimType type;
  double lr;
  double momentum;   /* SGD (0 = plain), torch convention: v = mu v + g; p -= lr v */
  int nesterov;      /* SGD */
  double beta1, beta2, eps; /* Adam/AdamW (beta1,beta2 also Lion) */
  double weight_decay;      /* SGD/Adam: L2 added to g; AdamW/Lion: decoupled */
} SgnnOptimConfig;
void sgnn_optim_defaults(SgnnOptimType type, SgnnOptimConfig *c);
int sgnn_optim_create(SgnnParams P, const SgnnOptimConfig *c, SgnnOptim *o);
/* an optimizer of values [lo, lo+n) of the slab only (state of n values; ZeRO partitions) */
int sgnn_optim_create_range(SgnnParams P, const SgnnOptimConfig *c, long lo, long n, SgnnOptim *o);
int sgnn_optim_set_lr(SgnnOptim o, double lr);
int sgnn_optim_step(SgnnOptim o); /* uses the gradient slab */
/* the same step on the optimizer's range of values held at p (its n values) instead of in the value
 * slab: ZeRO stage 3 by buckets keeps the rank's block outside the slab */
int sgnn_optim_step_at(SgnnOptim o, void *p);
/* the same with the gradient of the range held at g (its n values) instead of in the gradient slab:
 * ZeRO by gradient buckets keeps only the rank's block of the gradient */
int sgnn_optim_step_with(SgnnOptim o, void *p, const void *g);
long sgnn_optim_steps(SgnnOptim o);
/* state for checkpoints: first/second moment slabs (NULL if unused), step */
int sgnn_optim_state(SgnnOptim o, SgnnTensor *m, SgnnTensor *v, long **step);
void sgnn_optim_destroy(SgnnOptim *o);

typedef enum { SGNN_LR_CONST = 0, SGNN_LR_EXP = 1, SGNN_LR_COSINE = 2 } SgnnLRKind;
typedef struct {
  SgnnLRKind kind;
  double lr0;
  long warmup;       /* linear warm-up from lr0/warmup... to lr0 over this many steps */
  double decay_rate; /* EXP: lr0 * decay_rate^(step/decay_steps) */
  long decay_steps;  /* EXP: see above; COSINE: total steps to reach lr_min */
  double lr_min;     /* COSINE floor (EXP: lower clamp) */
} SgnnLRSchedule;
double sgnn_lr_at(const SgnnLRSchedule *s, long step);
/* scale the gradient slab so its global 2-norm is <= max_norm; returns the norm before */
int sgnn_clip_grad_norm(SgnnParams P, double max_norm, double *norm);

#ifdef __cplusplus
}
#endif
#endif
