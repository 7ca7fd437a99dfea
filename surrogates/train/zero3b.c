/* ZeRO stage 3 by buckets (-PREFIX_shard 3 -PREFIX_shard_bucket_bytes B > 0): within a step only the
   parameter buckets in use, and the next one being fetched, are whole on a rank.

   The parameters are grouped into buckets of consecutive parameters (whole tensors, in the order the
   surrogate added them), each closed once it holds >= B bytes. Between steps a rank keeps only its block
   of the slab, in memory exposed as an MPI window. Within a step every parameter view addresses its
   bucket (sgnn_params_bucket_bind), and every use of a view calls Fill (through the engine's sgnn_ptr),
   which makes the bucket resident by reading its values from the owners' blocks with MPI_Rget under a
   passive lock held for the trainer's life (MPI_Win_lock_all). No other rank makes a matching call, so
   the order and number of fills may differ between ranks: the Deep Potential's loss uses a layer in its
   forward, in the reverse pass of its force and again in the loss's backward, as often as its batch
   asks, and a rank with no frames fills nothing. (A two-sided gather issued on first use would deadlock
   there: the ranks would not issue the same collectives.)

   Residency: at most Z3B_INUSE buckets filled and touched, plus one being fetched ahead. A fill frees
   the least recently used bucket first: three because the engine op that reads the most parameters
   (the LSTM cell: W_ih, W_hh and the bias) may hold three bucket pointers at once. After a fill the
   bucket expected next is fetched with MPI_Rget and completed at its first use: that is the overlap of
   communication with compute. One such read is in flight at a time.

   Which bucket comes next. A step repeats the previous one's uses (the same model and loss), so each
   step records its sequence of uses (the bucket of each use, a repeat of the same bucket once) and the
   next step replays it: at each use it looks ahead in the previous step's sequence, from the same
   position, for the first use of a bucket that is not whole, and fetches it, making room by freeing the
   least recently used bucket that is not used before it (if every one is, it tries again at the next
   use). Why uses and not fills: which uses fill depends on what is resident, which the fetching ahead
   itself changes, so a record of fills goes out of step with the next step's fills (measured on the
   Deep Potential: replaying the previous step's fills fetched 85% ahead, its uses 98.7%). The Deep
   Potential needs it: its forward goes through the embedding nets twice and then the fitting nets,
   and the force's reverse pass and the loss's backward go back through them by type, every other
   bucket: 33% of its fills were fetched ahead with the guess below. The first step, and uses past the
   end of a record that was full, use the guess: the next bucket in the direction of travel (k+1 after
   k-1 -> k, k-1 after k+1 -> k), at fills only. The record: one int array of 2 x Z3B_USES x the
   model's tensors (this step's uses and the previous step's), allocated at set-up; a step without
   uses (an empty local batch) keeps the previous record. Only when values arrive changes, never which
   values: a bucket's values are its owners' blocks either way.

   Consistency: weights do not change within a step; all of a rank's reads are completed before its
   gradient sync (Drain), so no owner updates its block while a read of it is in flight (the update
   follows the reduce-scatter, which needs every rank's contribution); after the update each owner
   makes its block visible (MPI_Win_sync) and the ranks meet at a barrier before the next step reads it.

   Bytes: each fill counts what it reads from other ranks ((bucket - own part) x b); the rank's own part
   is copied from its block. Memory: the largest resident set, measured, into z3peak. */
#include "sgtrainerimpl.h"
#include "sgsys.h"

#define Z3B_INUSE 3
#define Z3B_USES  8  /* uses recorded per tensor of the model, per step (the Deep Potential: 82 uses of 26 tensors) */
#define Z3B_LOOK  64 /* uses looked ahead for the next bucket to fetch (a bound on the scan, not on the fetch) */

struct _SgTrainerZ3b {
  int          nb, *state, prev, dir, ahead; /* state: 0 absent, 1 resident, 2 being fetched; ahead: the bucket being fetched (-1: none) */
  long        *lo, *n, *touch, clock;
  MPI_Win      win;
  MPI_Datatype dt;
  MPI_Request *req;  /* per bucket: one request per owner (at most N) */
  int         *nreq; /* per bucket */
  size_t       es;
  double       cur, fills, bytes; /* resident bytes now; fills and bytes read from others (counters) */
  double       hits;              /* fills whose bucket had been fetched ahead (the overlap working) */
  double       wpeak;             /* the largest resident bytes of buckets seen */
  int         *rec, cap;          /* the order of uses: 2 x cap ints, cap = Z3B_USES x tensors */
  int         *now, *last;        /* into rec: this step's uses, the previous step's */
  int          use, lastk;        /* this step's position in the sequence (-1: no use yet), the bucket of its use */
  int          nlast, full;       /* the previous step's record: its length (0: none, guess), and whether uses were left out */
  double       rfills, rhits;     /* fills and those fetched ahead in the steps that replayed (counters) */
};

PetscErrorCode SgTrainerOptionsShardBucket(PetscOptionItems *PetscOptionsObject, PetscInt *bytes)
{
  PetscFunctionBegin;
  PetscCall(SgOptionsInt("-shard_bucket_bytes", "shard 2 and 3: the gradient by buckets of consecutive tensors, each closed at >= this many bytes (bytes), each summed one-sidedly into its owners' blocks and freed once backward has finished it (each rank keeps its block of the gradient); shard 3: the parameters too, each bucket read one-sidedly from the owners' blocks at first use, at most 3 in use plus 1 fetched ahead whole on a rank within a step. 0: whole slabs (the gradient reduce-scattered after backward; at stage 3 the parameters all-gathered at the start of each step)", *bytes, bytes, NULL, 0, PETSC_MAX_INT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetShardBucket(SgTrainer t, PetscInt bytes)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  t->z3bucket = bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgTrainerZero3Bucketed(SgTrainer t) { return (PetscBool)(t->shard == 3 && t->z3b); }

static int Count(struct _SgTrainerZ3b *b, int s)
{
  int c = 0;
  for (int k = 0; k < b->nb; k++) c += b->state[k] == s;
  return c;
}

/* whether bucket v is used before position q of the previous step's sequence (from this step's position on) */
static PetscBool UsedBefore(struct _SgTrainerZ3b *b, int v, int q)
{
  for (int i = b->use + 1; i < q; i++)
    if (b->last[i] == v) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Free the least recently used buckets other than keep until fewer than Z3B_INUSE are resident; q >= 0:
   only those the replayed sequence does not use before its position q (*room false if too few such) */
static PetscErrorCode Evict(SgTrainer t, int keep, int q, PetscBool *room)
{
  struct _SgTrainerZ3b *b = t->z3b;

  PetscFunctionBegin;
  if (room) *room = PETSC_TRUE;
  while (Count(b, 1) >= Z3B_INUSE) {
    int v = -1;
    for (int k = 0; k < b->nb; k++)
      if (b->state[k] == 1 && k != keep && (v < 0 || b->touch[k] < b->touch[v]) && (q < 0 || !UsedBefore(b, k, q))) v = k;
    if (v < 0) {
      if (room) *room = PETSC_FALSE;
      break;
    }
    SgCallNN(sgnn_params_bucket_free(t->P, v));
    b->state[v] = 0;
    b->cur -= (double)b->n[v] * (double)b->es;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads of bucket k from its owners started (its own part copied now); the requests in b->req[k]. */
static PetscErrorCode Start(SgTrainer t, int k)
{
  struct _SgTrainerZ3b *b = t->z3b;
  void                 *mem;
  PetscMPIInt           size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
  PetscCallMPI(MPI_Comm_rank(t->sync->comm, &rank));
  SgCallNN(sgnn_params_bucket_alloc(t->P, k, &mem));
  b->cur += (double)b->n[k] * (double)b->es;
  b->wpeak = PetscMax(b->wpeak, b->cur);
  b->nreq[k] = 0;
  for (PetscMPIInt r = 0; r < size; r++) {
    long lo = PetscMax(b->lo[k], (long)t->zdispl[r]), hi = PetscMin(b->lo[k] + b->n[k], (long)t->zdispl[r] + t->zcount[r]);
    if (hi <= lo) continue;
    char *dst = (char *)mem + (size_t)(lo - b->lo[k]) * b->es;
    if (r == rank) PetscCall(PetscArraycpy(dst, (char *)t->z3block + (size_t)(lo - t->zdispl[r]) * b->es, (size_t)(hi - lo) * b->es));
    else {
      PetscCallMPI(MPI_Rget(dst, (PetscMPIInt)(hi - lo), b->dt, r, (MPI_Aint)(lo - t->zdispl[r]), (PetscMPIInt)(hi - lo), b->dt, b->win, &b->req[(size_t)k * size + b->nreq[k]]));
      b->nreq[k]++;
      b->bytes += (double)(hi - lo) * (double)b->es;
      t->zbytes += (double)(hi - lo) * (double)b->es; /* the step's bytes (zero.c) */
    }
  }
  b->fills++;
  if (b->nlast) b->rfills++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Complete(SgTrainer t, int k)
{
  struct _SgTrainerZ3b *b = t->z3b;
  PetscMPIInt           size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
  if (b->nreq[k]) PetscCallMPI(MPI_Waitall(b->nreq[k], &b->req[(size_t)k * size], MPI_STATUSES_IGNORE));
  b->nreq[k] = 0;
  b->state[k] = 1;
  if (b->ahead == k) b->ahead = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fetch ahead (one read in flight at a time): the next bucket not whole in the previous step's
   sequence; without a record (the first step) or past the end of a full one, at a fill (k), the next in
   the direction of travel. */
static PetscErrorCode Ahead(SgTrainer t, int k, PetscBool fill)
{
  struct _SgTrainerZ3b *b = t->z3b;
  int                   nx = -1, q = -1;
  PetscBool             room;

  PetscFunctionBegin;
  if (b->ahead >= 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (b->nlast && b->use + 1 < b->nlast) {
    int end = PetscMin(b->nlast, b->use + 1 + Z3B_LOOK);
    for (int i = b->use + 1; i < end && nx < 0; i++)
      if (b->state[b->last[i]] == 0) {
        nx = b->last[i];
        q  = i;
      }
  } else if ((!b->nlast || b->full) && fill) nx = k + b->dir;
  if (nx < 0 || nx >= b->nb || b->state[nx] != 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Evict(t, k, q, &room));
  if (!room) PetscFunctionReturn(PETSC_SUCCESS); /* every resident bucket is used before it: again at the next use */
  PetscCall(Start(t, nx));
  b->state[nx] = 2;
  b->ahead     = nx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FillP(SgTrainer t, int k)
{
  struct _SgTrainerZ3b *b = t->z3b;

  PetscFunctionBegin;
  b->touch[k] = ++b->clock;
  if (k != b->lastk) { /* the sequence of uses, a repeat of the same bucket once */
    b->use++;
    b->lastk = k;
    if (b->use < b->cap) b->now[b->use] = k;
  }
  if (b->state[k] == 1) {
    if (b->nlast) PetscCall(Ahead(t, k, PETSC_FALSE)); /* replaying: a fetch that found no room at the last use may find it now */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(Evict(t, k, -1, NULL));
  if (b->state[k] == 2) {
    b->hits++;
    if (b->nlast) b->rhits++;
  }
  if (b->state[k] == 0) PetscCall(Start(t, k));
  PetscCall(Complete(t, k));
  b->dir  = b->prev >= 0 && k < b->prev ? -1 : 1;
  b->prev = k;
  PetscCall(Ahead(t, k, PETSC_TRUE)); /* the next one, fetched while this one is used */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the engine's hook (sgnn_ptr): a nonzero return aborts there, so say why first */
static int Fill(void *ctx, int k)
{
  PetscErrorCode ierr = FillP((SgTrainer)ctx, k);
  if (ierr) (void)PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, ierr, PETSC_ERROR_REPEAT, "filling parameter bucket %d", k);
  return (int)ierr;
}

/* The buckets, the window over this rank's block (replacing zero3.c's buffer) and the lock. */
PetscErrorCode SgTrainerZero3BucketSetUp(SgTrainer t)
{
  struct _SgTrainerZ3b *b;
  SgnnTensor            v  = sgnn_params_values(t->P);
  int                  *first;
  PetscMPIInt           size, rank;
  void                 *base;

  PetscFunctionBegin;
  if (t->shard != 3 || t->z3bucket <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(t->sync->comm, &size));
  PetscCallMPI(MPI_Comm_rank(t->sync->comm, &rank));
  PetscCall(PetscNew(&b));
  b->es = sgnn_tensor_dtype(v) == SGNN_F32 ? sizeof(float) : sizeof(double);
  b->dt = sgnn_tensor_dtype(v) == SGNN_F32 ? MPI_FLOAT : MPI_DOUBLE;
  b->prev = -1;
  PetscCall(SgTrainerShardBucketGroups(t, b->es, &b->nb, &first)); /* each closed once it holds >= the option's bytes (zerograd.c) */
  SgCallNN(sgnn_params_bucket_setup(t->P, b->nb, first, Fill, t));
  PetscCall(PetscFree(first));
  PetscCall(PetscCalloc5(b->nb, &b->state, b->nb, &b->lo, b->nb, &b->n, b->nb, &b->touch, b->nb, &b->nreq));
  PetscCall(PetscMalloc1((size_t)b->nb * size, &b->req));
  b->cap = Z3B_USES * sgnn_params_num(t->P);
  PetscCall(PetscMalloc1(2 * (size_t)b->cap, &b->rec));
  b->now   = b->rec;
  b->last  = b->rec + b->cap;
  b->use   = -1;
  b->lastk = -1;
  b->ahead = -1;
  for (int k = 0; k < b->nb; k++) SgCallNN(sgnn_params_bucket_range(t->P, k, &b->lo[k], &b->n[k]));
  /* the block in window memory: the buffer zero3.c allocated is replaced */
  PetscCallMPI(MPI_Win_allocate((MPI_Aint)t->z3n * (MPI_Aint)b->es, (PetscMPIInt)b->es, MPI_INFO_NULL, t->sync->comm, &base, &b->win));
  PetscCall(PetscArraycpy((char *)base, (char *)t->z3block, (size_t)t->z3n * b->es));
  PetscCall(PetscFree(t->z3block));
  t->z3block = base;
  PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, b->win));
  PetscCallMPI(MPI_Win_sync(b->win));
  PetscCallMPI(MPI_Barrier(t->sync->comm));
  t->z3b = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerZero3BucketDestroy(SgTrainer t)
{
  struct _SgTrainerZ3b *b = t->z3b;

  PetscFunctionBegin;
  if (!b) PetscFunctionReturn(PETSC_SUCCESS);
  SgCallNN(sgnn_params_bucket_setup(t->P, 0, NULL, NULL, NULL)); /* the model outlives the trainer: no fill may call it again */
  PetscCallMPI(MPI_Win_unlock_all(b->win));
  PetscCallMPI(MPI_Win_free(&b->win)); /* frees the block too */
  t->z3block = NULL;
  PetscCall(PetscFree5(b->state, b->lo, b->n, b->touch, b->nreq));
  PetscCall(PetscFree(b->req));
  PetscCall(PetscFree(b->rec));
  PetscCall(PetscFree(t->z3b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a step: the views to their (absent) buckets; nothing is read until a use. */
PetscErrorCode SgTrainerZero3BucketBegin(SgTrainer t)
{
  struct _SgTrainerZ3b *b = t->z3b;

  PetscFunctionBegin;
  SgCallNN(sgnn_params_bucket_bind(t->P, 1));
  b->prev = -1;
  b->dir  = 1;
  if (b->use >= 0) { /* the step before used buckets: its sequence is the one to replay */
    int *x   = b->last;
    b->last  = b->now;
    b->now   = x;
    b->nlast = PetscMin(b->use + 1, b->cap);
    b->full  = b->use + 1 > b->cap;
  }
  b->use   = -1;
  b->lastk = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After backward, before the gradient sync: every read of this rank completed, every bucket freed. */
PetscErrorCode SgTrainerZero3BucketDrain(SgTrainer t)
{
  struct _SgTrainerZ3b *b = t->z3b;

  PetscFunctionBegin;
  if (!SgTrainerZero3Bucketed(t)) PetscFunctionReturn(PETSC_SUCCESS);
  for (int k = 0; k < b->nb; k++) {
    if (b->state[k] == 2) PetscCall(Complete(t, k)); /* and no read in flight (b->ahead) */
    if (b->state[k] == 1) {
      SgCallNN(sgnn_params_bucket_free(t->P, k));
      b->state[k] = 0;
      b->cur -= (double)b->n[k] * (double)b->es;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the update of the block (in the window): visible to the others before anyone reads it. */
PetscErrorCode SgTrainerZero3BucketPublish(SgTrainer t)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Win_sync(t->z3b->win));
  PetscCallMPI(MPI_Barrier(t->sync->comm));
  PetscCallMPI(MPI_Win_sync(t->z3b->win));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The views back to the value slab (the caller fills it: a whole gather for the monitor, checkpoints
   and the end of training). */
PetscErrorCode SgTrainerZero3BucketUnbind(SgTrainer t)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerZero3BucketDrain(t));
  SgCallNN(sgnn_params_bucket_bind(t->P, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* counters: buckets, fills, bytes read from others, the largest resident bucket bytes, the bucket
   bytes resident now */
void SgTrainerZero3BucketStats(SgTrainer t, int *nb, double *fills, double *bytes, double *wpeak, double *cur)
{
  struct _SgTrainerZ3b *b = t->z3b;
  if (nb) *nb = b ? b->nb : 0;
  if (fills) *fills = b ? b->fills : 0;
  if (bytes) *bytes = b ? b->bytes : 0;
  if (wpeak) *wpeak = b ? b->wpeak : 0;
  if (cur) *cur = b ? b->cur : 0;
}

PetscErrorCode SgTrainerGetShardBucketStats(SgTrainer t, PetscInt *nbuckets, PetscReal *fills, PetscReal *bytes_read, PetscReal *ahead)
{
  int    nb;
  double f, by;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  SgTrainerZero3BucketStats(t, &nb, &f, &by, NULL, NULL);
  if (nbuckets) *nbuckets = nb;
  if (fills) *fills = f;
  if (bytes_read) *bytes_read = by;
  if (ahead) *ahead = t->z3b ? t->z3b->hits : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerGetShardBucketReplayStats(SgTrainer t, PetscReal *fills, PetscReal *ahead)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  if (fills) *fills = t->z3b ? t->z3b->rfills : 0;
  if (ahead) *ahead = t->z3b ? t->z3b->rhits : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the bytes of bucket k (k < nb), for the start-up line's bound */
double SgTrainerZero3BucketBytes(SgTrainer t, int k) { return t->z3b && k >= 0 && k < t->z3b->nb ? (double)t->z3b->n[k] * (double)t->z3b->es : 0; }
