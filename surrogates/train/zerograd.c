/* ZeRO stages 2 and 3 with the gradient by buckets (-PREFIX_shard 2|3 -PREFIX_shard_bucket_bytes B > 0):
   within a step a rank holds its block of the summed gradient (Psi/N values) and only the gradient
   buckets that backward is still accumulating, as DeepSpeed's stage 2 reduces gradient buckets while
   backward produces them and keeps its own partition (Rajbhandari et al., SC20, P_os+g).

   The buckets are zero3b.c's grouping (consecutive whole tensors, each closed at >= B bytes). During
   backward every parameter's gradient view addresses its bucket (sgnn_params_grad_bucket_bind); the
   bucket's memory is allocated and zeroed at its first accumulation (the engine's fill hook, called
   on every use of a view). The engine's grad-ready hook says when a parameter's gradient is final
   (all its contributions accumulated); when every parameter of a bucket is final, or will receive
   nothing this step, the bucket's values are added into their owners' blocks and its memory is freed.
   The gradient slab itself has no memory from set-up to the end of training.

   Why one-sided (MPI_Raccumulate with MPI_SUM into a window over each rank's block, under a passive
   MPI_Win_lock_all held for the trainer's life) and not a nonblocking reduce-scatter per bucket: the
   order in which buckets become final depends on the model and the batch (the Deep Potential uses a
   layer in its forward, in its force's reverse pass and in the loss's backward, and a rank whose batch
   leaves a type's sub-network unused finishes other buckets first), and a rank with an empty local
   batch issues no backward at all. Collectives issued in that order would differ between ranks and
   deadlock; an accumulate needs no matching call from the owner. (zero3b.c reads its parameters
   one-sidedly for the same reason.) A bucket nobody accumulated into holds zeros and is not sent.

   Ordering within a step: each bucket's accumulates are completed locally (MPI_Waitall) before its
   memory is freed; that wait is deferred while backward goes on (tested at every bucket opening, waited
   for when the bucket opens again or its slot is needed: a bucket in flight holds its memory, so it counts
   against the open limit; all at the drain); after backward every rank completes its accumulates at their targets
   (MPI_Win_flush_all) and the ranks meet at a barrier, after which each owner's block holds the sum
   (MPI_Win_sync) and the optimizer updates from it. The owner zeroes its block after the update,
   before the collective that follows every update (stage 2's all-gather, stage 3's publish barrier),
   so no rank's next accumulate reaches a block that is still being read.

   Round-off: summing two ranks' values is one IEEE addition (0 + a + b = a + b, in either order), so
   on 2 ranks this equals the reduce-scatter bit for bit; on 3 ranks and more the order in which the
   accumulates arrive sets the summation order, so it equals stage 2 to round-off; so does a bucket sent
   early as partial sums (more buckets open than the limit, below), on any rank count.

   Bytes: each rank sends (bucket - its own part) x b per bucket sum it sends, (N-1)/N b Psi a step in
   all when every bucket has a gradient and none is sent early, as the reduce-scatter. Memory: the block
   (b Psi/N) and the most bucket bytes open at once (at most the largest buckets, as many as the open limit), measured per step. */
#include "sgtrainerimpl.h"
#include "sgsys.h"
#include <limits.h>

/* At most N gradient buckets open at once (-PREFIX_shard_grad_open_buckets N, default 3): opening one
   more first sends the partial sum of the least recently used open bucket to its owners (an early
   flush; the bucket opens again, zeroed, if backward accumulates into it again, and is sent again when
   final). A model whose backward finishes its tensors in order never reaches it; one whose tensors all
   stay open to the end of backward (the Deep Potential: its loss differentiates its forces) trades
   bytes for memory here, as zero3b.c's parameter buckets do (3 in use there). N = 1 holds the least
   (the block + the largest bucket) and sends the most partial sums; one engine op accumulates into one
   gradient at a time, so 1 always suffices. */
PetscErrorCode SgTrainerOptionsShardGradOpen(PetscOptionItems *PetscOptionsObject, PetscInt *open)
{
  PetscFunctionBegin;
  PetscCall(SgOptionsInt("-shard_grad_open_buckets", "shard 2 and 3 with -shard_bucket_bytes > 0: the most gradient buckets open at once during backward (buckets); opening one more first sends the least recently used one's partial sum to its owners early. The gradient held is at most this rank's block + the N largest buckets; fewer open buckets cost bytes (more partial sums) on a model whose tensors stay open to the end of backward", *open, open, NULL, 1, PETSC_MAX_INT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetShardGradOpen(SgTrainer t, PetscInt open)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  PetscCheck(open >= 1, PetscObjectComm((PetscObject)t), PETSC_ERR_USER_INPUT, "%s: %" PetscInt_FMT " open gradient buckets (shard_grad_open_buckets): backward accumulates into one bucket at a time, so at least 1 must be open: give 1 or more (default 3)", t->name, open);
  t->zgb_open = open;
  PetscFunctionReturn(PETSC_SUCCESS);
}

struct _SgTrainerZgb {
  int            nb, np, *state; /* state: 0 absent, 1 accumulating, 2 sent this step */
  int            open;           /* the most buckets open at once (t->zgb_open) */
  long          *touch, clock;   /* each open bucket's last use, for the flush */
  int           *pb, *nready, *nparam;
  char          *involved, *ready;
  int            sweeping;
  long          *lo, *n;
  MPI_Win        win;
  MPI_Datatype   dt;
  MPI_Request   *req;    /* per bucket, one per owner (nb x size): a sent bucket's accumulates in flight */
  int           *nreq;   /* per bucket: its requests in flight (0: none; its memory is freed once they complete) */
  int            size;
  size_t         es;
  void          *block; /* this rank's block of the summed gradient (window memory) */
  long           bn;    /* its length */
  double         cur, peak, steppeak; /* bucket bytes open now, the most in any step, in this step */
  double         sends, sent;         /* buckets sent, bytes sent to the other ranks (counters) */
  double         flushes;             /* of the sends, partial sums sent early (more than `open` open) */
  double         flushbytes;          /* their bytes, whole buckets (the model's input: tests/bench/train/optmodel.py) */
  PetscErrorCode err;                 /* a failure inside the engine's hook, raised after backward */
};

/* zero3b.c's grouping: consecutive whole tensors, a bucket closed once it holds >= B bytes. first[]
   has nb + 1 entries; the caller frees it. */
PetscErrorCode SgTrainerShardBucketGroups(SgTrainer t, size_t es, int *nb, int **first)
{
  int np = sgnn_params_num(t->P);

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(np + 1, first));
  (*first)[0] = 0;
  *nb         = 0;
  for (int i = 0; i < np; i++) {
    long n = sgnn_tensor_numel(sgnn_params_get(t->P, i));
    if (i + 1 == np || (double)(sgnn_params_offset(t->P, i) + n - sgnn_params_offset(t->P, (*first)[*nb])) * (double)es >= (double)t->z3bucket) (*first)[++*nb] = i + 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgTrainerGradBucketed(SgTrainer t) { return (PetscBool)(t->zgb != NULL); }

/* Bucket k's accumulates in flight completed locally (the origin buffer may go) and its memory freed;
   wait: block until they are, else only if they already are (MPI_Testall) */
static PetscErrorCode Complete(SgTrainer t, int k, PetscBool wait)
{
  struct _SgTrainerZgb *g = t->zgb;
  int                   done = 1;

  PetscFunctionBegin;
  if (!g->nreq[k]) PetscFunctionReturn(PETSC_SUCCESS);
  if (wait) PetscCallMPI(MPI_Waitall(g->nreq[k], g->req + (size_t)k * (size_t)g->size, MPI_STATUSES_IGNORE));
  else PetscCallMPI(MPI_Testall(g->nreq[k], g->req + (size_t)k * (size_t)g->size, &done, MPI_STATUSES_IGNORE));
  if (!done) PetscFunctionReturn(PETSC_SUCCESS);
  g->nreq[k] = 0;
  SgCallNN(sgnn_params_grad_bucket_free(t->P, k));
  g->cur -= (double)g->n[k] * (double)g->es;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bucket k's values added into their owners' blocks (itself included: a local add would race with
   the others' accumulates) and left in flight (Complete frees it); final: no more accumulation
   this step (state 2), else a partial sum (state 0: it may open again). */
static PetscErrorCode SendAs(SgTrainer t, int k, PetscBool final)
{
  struct _SgTrainerZgb *g = t->zgb;
  PetscMPIInt           size, rank, nr = 0;
  char                 *mem;

  PetscFunctionBegin;
  if (g->state[k] == 1) {
    PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
    PetscCallMPI(MPI_Comm_rank(t->sync->comm, &rank));
    mem = (char *)sgnn_params_grad_bucket_mem(t->P, k);
    for (PetscMPIInt r = 0; r < size; r++) {
      long lo = PetscMax(g->lo[k], (long)t->zdispl[r]), hi = PetscMin(g->lo[k] + g->n[k], (long)t->zdispl[r] + t->zcount[r]);
      if (hi <= lo) continue;
      PetscCallMPI(MPI_Raccumulate(mem + (size_t)(lo - g->lo[k]) * g->es, (PetscMPIInt)(hi - lo), g->dt, r, (MPI_Aint)(lo - t->zdispl[r]), (PetscMPIInt)(hi - lo), g->dt, MPI_SUM, g->win, &g->req[(size_t)k * (size_t)g->size + (size_t)nr++]));
      if (r != rank) {
        g->sent += (double)(hi - lo) * (double)g->es;
        t->zbytes += (double)(hi - lo) * (double)g->es; /* the step's bytes (zero.c) */
      }
    }
    g->nreq[k] = nr; /* completed later (Complete), while backward goes on: the memory stays until then */
    g->sends++;
    if (!final) {
      g->flushes++;
      g->flushbytes += (double)g->n[k] * (double)g->es;
    }
  }
  g->state[k] = final ? 2 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Send(SgTrainer t, int k)
{
  PetscFunctionBegin;
  PetscCall(SendAs(t, k, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before bucket k opens: the least recently used open buckets' partial sums sent until fewer than
   g->open are open (one engine op accumulates into one gradient at a time, so k is the only one in use) */
static PetscErrorCode Flush(SgTrainer t, int k)
{
  struct _SgTrainerZgb *g = t->zgb;

  PetscFunctionBegin;
  PetscCall(Complete(t, k, PETSC_TRUE)); /* k's own earlier partial sum, if still in flight: its memory is reused */
  for (int j = 0; j < g->nb; j++) PetscCall(Complete(t, j, PETSC_FALSE)); /* those done meanwhile */
  for (;;) {
    int open = 0, v = -1, f = -1;
    for (int j = 0; j < g->nb; j++) {
      if (g->nreq[j]) { /* in flight: it holds its memory, so it takes a slot */
        open++;
        if (f < 0 || g->touch[j] < g->touch[f]) f = j;
      } else if (g->state[j] == 1) {
        open++;
        if (j != k && (v < 0 || g->touch[j] < g->touch[v])) v = j;
      }
    }
    if (open < g->open || (v < 0 && f < 0)) break;
    if (f >= 0) PetscCall(Complete(t, f, PETSC_TRUE)); /* a slot by waiting for the oldest send, before sending early */
    else PetscCall(SendAs(t, v, PETSC_FALSE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MarkReady(SgTrainer t, int i)
{
  struct _SgTrainerZgb *g = t->zgb;
  int                   k = g->pb[i];

  PetscFunctionBegin;
  if (g->ready[i]) PetscFunctionReturn(PETSC_SUCCESS);
  g->ready[i] = 1;
  if (++g->nready[k] == g->nparam[k]) PetscCall(Send(t, k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The engine's grad-ready hook: final 0 announces a parameter that will receive a gradient, final 1
   says its gradient is complete. At the first final one the sweep has started, and a parameter nobody
   announced receives nothing this step (dp.c's rule). */
static PetscErrorCode ReadyP(SgTrainer t, SgnnTensor leaf, int final)
{
  struct _SgTrainerZgb *g = t->zgb;
  int                   i = sgnn_params_index(t->P, leaf);

  PetscFunctionBegin;
  if (i < 0) PetscFunctionReturn(PETSC_SUCCESS); /* an input that requires a gradient, not a parameter */
  if (!final) {
    g->involved[i] = 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!g->sweeping) {
    g->sweeping = 1;
    for (int j = 0; j < g->np; j++)
      if (!g->involved[j]) PetscCall(MarkReady(t, j));
  }
  PetscCall(MarkReady(t, i));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void Ready(SgnnTensor leaf, int final, void *ctx)
{
  SgTrainer t = (SgTrainer)ctx;
  if (!t->zgb->err) t->zgb->err = ReadyP(t, leaf, final); /* the hook returns nothing: raised at the sync's end */
}

/* The engine's fill hook on a gradient bucket: zeroed memory at its first accumulation. A bucket whose
   sum was already sent must not be accumulated into again (its contribution would be lost). */
static int Fill(void *ctx, int k)
{
  SgTrainer             t = (SgTrainer)ctx;
  struct _SgTrainerZgb *g = t->zgb;
  void                 *mem;

  g->touch[k] = ++g->clock;
  if (g->state[k] == 1) return 0;
  if (g->state[k] == 2) {
    (void)PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_PLIB, PETSC_ERROR_INITIAL, "gradient bucket %d accumulated into after its sum was sent to its owners", k);
    return (int)PETSC_ERR_PLIB;
  }
  {
    PetscErrorCode ierr = Flush(t, k);
    if (ierr) return (int)ierr;
  }
  if (sgnn_params_grad_bucket_alloc(t->P, k, &mem)) return (int)PETSC_ERR_MEM;
  memset(mem, 0, (size_t)g->n[k] * g->es); /* shard >= 2 runs on the host (zero.c) */
  g->state[k] = 1;
  g->cur += (double)g->n[k] * (double)g->es;
  g->steppeak = PetscMax(g->steppeak, g->cur);
  return 0;
}

/* The buckets, the window over this rank's block of the gradient, the lock; the slab's memory freed. */
PetscErrorCode SgTrainerGradBucketSetUp(SgTrainer t)
{
  struct _SgTrainerZgb *g;
  SgnnTensor            v = sgnn_params_values(t->P);
  int                  *first;
  PetscMPIInt           size, rank;

  PetscFunctionBegin;
  if (t->shard < 2 || t->z3bucket <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
  PetscCallMPI(MPI_Comm_rank(t->sync->comm, &rank));
  PetscCall(PetscNew(&g));
  g->es = sgnn_tensor_dtype(v) == SGNN_F32 ? sizeof(float) : sizeof(double);
  g->dt = sgnn_tensor_dtype(v) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE;
  g->np = sgnn_params_num(t->P);
  g->open = (int)PetscMin(t->zgb_open, (PetscInt)INT_MAX);
  PetscCall(SgTrainerShardBucketGroups(t, g->es, &g->nb, &first));
  SgCallNN(sgnn_params_grad_bucket_setup(t->P, g->nb, first, Fill, t));
  PetscCall(PetscCalloc5(g->nb, &g->state, g->np, &g->pb, g->nb, &g->nready, g->nb, &g->nparam, g->np, &g->involved));
  PetscCall(PetscCalloc5(g->np, &g->ready, g->nb, &g->lo, g->nb, &g->n, (size_t)size * (size_t)g->nb, &g->req, g->nb, &g->touch));
  PetscCall(PetscCalloc1(g->nb, &g->nreq));
  g->size = size;
  for (int k = 0; k < g->nb; k++) {
    long hi = first[k + 1] < g->np ? sgnn_params_offset(t->P, first[k + 1]) : sgnn_tensor_numel(v);
    g->lo[k] = sgnn_params_offset(t->P, first[k]);
    g->n[k]  = hi - g->lo[k];
    g->nparam[k] = first[k + 1] - first[k];
    for (int i = first[k]; i < first[k + 1]; i++) g->pb[i] = k;
  }
  PetscCall(PetscFree(first));
  g->bn = t->zcount[rank];
  PetscCallMPI(MPI_Win_allocate((MPI_Aint)g->bn * (MPI_Aint)g->es, (PetscMPIInt)g->es, MPI_INFO_NULL, t->sync->comm, &g->block, &g->win));
  PetscCall(PetscMemzero(g->block, (size_t)g->bn * g->es));
  PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, g->win));
  PetscCallMPI(MPI_Win_sync(g->win));
  PetscCallMPI(MPI_Barrier(t->sync->comm));
  if (sgnn_params_resident(t->P, 1)) SgCallNN(sgnn_params_release(t->P, 1)); /* the buckets and the block hold the gradient now */
  t->zgb = g;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The gradient slab back (zeroed), for whoever uses the model after training. */
PetscErrorCode SgTrainerGradBucketRestore(SgTrainer t)
{
  PetscFunctionBegin;
  if (!t->zgb || sgnn_params_resident(t->P, 1)) PetscFunctionReturn(PETSC_SUCCESS);
  SgCallNN(sgnn_params_acquire(t->P, 1));
  SgCallNN(sgnn_params_zero_grad(t->P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGradBucketDestroy(SgTrainer t)
{
  struct _SgTrainerZgb *g = t->zgb;

  PetscFunctionBegin;
  if (!g) PetscFunctionReturn(PETSC_SUCCESS);
  SgCallNN(sgnn_params_grad_bucket_setup(t->P, 0, NULL, NULL, NULL)); /* the model outlives the trainer */
  PetscCall(SgTrainerGradBucketRestore(t));
  PetscCallMPI(MPI_Win_unlock_all(g->win));
  PetscCallMPI(MPI_Win_free(&g->win)); /* frees the block too */
  PetscCall(PetscFree5(g->state, g->pb, g->nready, g->nparam, g->involved));
  PetscCall(PetscFree5(g->ready, g->lo, g->n, g->req, g->touch));
  PetscCall(PetscFree(g->nreq));
  PetscCall(PetscFree(t->zgb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the sync of stages 2 and 3 by gradient buckets ---- */
static PetscErrorCode Begin_GradBuckets(SgTrainerSync s, PetscInt nlocal)
{
  SgTrainer             t = (SgTrainer)s->data;
  struct _SgTrainerZgb *g = t->zgb;

  PetscFunctionBegin;
  for (int k = 0; k < g->nb; k++) {
    g->state[k]  = 0;
    g->nready[k] = 0;
  }
  for (int i = 0; i < g->np; i++) g->involved[i] = g->ready[i] = 0;
  g->sweeping = 0;
  g->steppeak = 0;
  g->err      = PETSC_SUCCESS;
  SgCallNN(sgnn_params_grad_bucket_bind(t->P, 1));
  sgnn_set_grad_ready_hook(Ready, t);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After backward (or none, on a rank with an empty batch): what is left sent, every rank's sums
   arrived, the block scaled as the reduce-scatter's. Collective. */
static PetscErrorCode End_GradBuckets(SgTrainerSync s, PetscInt nglobal)
{
  SgTrainer             t = (SgTrainer)s->data;
  struct _SgTrainerZgb *g = t->zgb;

  PetscFunctionBegin;
  sgnn_set_grad_ready_hook(NULL, NULL);
  PetscCall(g->err);
  for (int k = 0; k < g->nb; k++)
    if (g->state[k] != 2) PetscCall(Send(t, k)); /* a bucket whose parameters backward never finished (or an empty batch: none open) */
  for (int k = 0; k < g->nb; k++) PetscCall(Complete(t, k, PETSC_TRUE)); /* every send of this step completed locally, memory freed */
  SgCallNN(sgnn_params_grad_bucket_bind(t->P, 0));
  PetscCallMPI(MPI_Win_flush_all(g->win)); /* this rank's sums are in their owners' blocks */
  PetscCallMPI(MPI_Barrier(s->comm));      /* and every rank's */
  PetscCallMPI(MPI_Win_sync(g->win));
  g->peak = PetscMax(g->peak, g->steppeak);
  if (s->scaling == SG_TRAINER_LOSS_SUM) SgTrainerScaleBlock(g->block, g->bn, g->es, 1.0 / (double)nglobal); /* as the reduce-scatter's sync (zero.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncCreate_GradBuckets(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerSyncSetEndOnly(s, End_GradBuckets, "gradient buckets (ZeRO stages 2 and 3 by buckets): each bucket added one-sidedly into its owners' blocks when backward has finished it, then freed"));
  s->begin = Begin_GradBuckets;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The update's gradient: this rank's block. After the update: zeroed for the next step (the caller's
   next collective orders it before any other rank's accumulate). */
void *SgTrainerGradBucketBlock(SgTrainer t) { return t->zgb ? t->zgb->block : NULL; }

PetscErrorCode SgTrainerGradBucketReset(SgTrainer t)
{
  PetscFunctionBegin;
  if (!t->zgb) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMemzero(t->zgb->block, (size_t)t->zgb->bn * t->zgb->es));
  PetscCallMPI(MPI_Win_sync(t->zgb->win));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bytes: the block, the bucket bytes open now, the most open in any step; the buckets and the bound
   on the open ones (the `open` largest: the start-up line) */
void SgTrainerGradBucketMem(SgTrainer t, double *block, double *cur, double *peak, int *nb, double *bound)
{
  struct _SgTrainerZgb *g = t->zgb;
  if (block) *block = g ? (double)g->bn * (double)g->es : 0;
  if (cur) *cur = g ? g->cur : 0;
  if (peak) *peak = g ? g->peak : 0;
  if (nb) *nb = g ? g->nb : 0;
  if (bound) { /* the sum of the `open` largest buckets: take the largest not yet taken, `open` times (nb is small) */
    char *taken = NULL;
    *bound = 0;
    if (!g || PetscCalloc1(g->nb, &taken)) return;
    for (int j = 0; j < PetscMin(g->open, g->nb); j++) {
      int v = -1;
      for (int k = 0; k < g->nb; k++)
        if (!taken[k] && (v < 0 || g->n[k] > g->n[v])) v = k;
      taken[v] = 1;
      *bound += (double)g->n[v] * (double)g->es;
    }
    (void)PetscFree(taken);
  }
}

int SgTrainerGradBucketOpenLimit(SgTrainer t) { return t->zgb ? t->zgb->open : (int)t->zgb_open; }

double SgTrainerGradBucketFlushes(SgTrainer t) { return t->zgb ? t->zgb->flushes : 0; }

double SgTrainerGradBucketFlushBytes(SgTrainer t) { return t->zgb ? t->zgb->flushbytes : 0; }

PetscErrorCode SgTrainerGetShardGradStats(SgTrainer t, PetscInt *nbuckets, PetscReal *peak_bytes, PetscReal *sends, PetscReal *bytes_sent)
{
  struct _SgTrainerZgb *g;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  g = t->zgb;
  if (nbuckets) *nbuckets = g ? g->nb : 0;
  if (peak_bytes) *peak_bytes = g ? g->peak : 0;
  if (sends) *sends = g ? g->sends : 0;
  if (bytes_sent) *bytes_sent = g ? g->sent : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
