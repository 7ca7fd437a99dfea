/* Neural architecture search over the stacked-LSTM space: aging (regularised) evolution (Real, Aggarwal,
   Huang, Le, AAAI 2019) and random search, run asynchronously on MPI ranks in the decentralised form
   of Egele et al.'s AgE (DeepHyper): every rank is a worker with its own copy of the population.

   A rank's loop: take in the results other ranks have sent (non-blocking probes); claim the next
   evaluation id from a shared counter (MPI_Fetch_and_op on a window of rank 0: one-sided, rank 0 need
   not take part); propose a candidate -- random while the rank knows fewer than `population`
   results (and always for random search), else the best of `sample` members drawn from the
   `population` most recent results it knows, mutated; train it on PETSC_COMM_SELF (SgPodLstmFit);
   log it (naslog.c), save its weights, send its result to every other rank (MPI_Isend) and go on.
   No rank waits for another's candidate; the only wait is the final exchange, when the budget is
   spent. Random draws come from (seed, evaluation id): a search is reproducible on one rank; on
   several its outcome depends on which results have arrived when a rank proposes, as in any
   asynchronous search.

   Resume: every rank reads the logs at the start; the evaluations found count towards the budget,
   their ids are not reused, they seed the population; a candidate that was in training when the run
   was killed is simply lost (it was never logged). */
#include <errno.h>
#include <sys/stat.h>
#include "sgpodlstm.h"
#include "sgtrainer.h"
#include "sgsys.h"

#define TAG_RESULT 4242

typedef struct {
  PetscInt       n, cap;
  SgPodLstmEval *e;
} Known;

static PetscErrorCode KnownAdd(Known *k, const SgPodLstmEval *e)
{
  PetscFunctionBegin;
  if (k->n == k->cap) {
    k->cap = PetscMax(64, 2 * k->cap);
    PetscCall(PetscRealloc(sizeof(SgPodLstmEval) * k->cap, &k->e));
  }
  k->e[k->n++] = *e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every result that has arrived (never blocks) */
static PetscErrorCode Drain(MPI_Comm comm, Known *k, PetscInt *received)
{
  PetscFunctionBegin;
  for (;;) {
    int        flag;
    MPI_Status st;
    PetscReal  buf[SG_PODLSTM_EVAL_NREAL];
    SgPodLstmEval e;
    PetscCallMPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, comm, &flag, &st));
    if (!flag) break;
    PetscCallMPI(MPI_Recv(buf, SG_PODLSTM_EVAL_NREAL, MPIU_REAL, st.MPI_SOURCE, TAG_RESULT, comm, MPI_STATUS_IGNORE));
    SgPodLstmEvalUnpack(buf, &e);
    PetscCall(KnownAdd(k, &e));
    (*received)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the next candidate of evaluation `id` from what this rank knows */
static PetscErrorCode Propose(const SgPodLstmSearchConfig *c, const Known *k, PetscInt id, SgPodLstmArch *a)
{
  const uint64_t key = 4 * (uint64_t)id;

  PetscFunctionBegin;
  if (c->type == SG_PODLSTM_SEARCH_RANDOM || k->n < c->population) PetscCall(SgPodLstmArchRandom(&c->space, c->seed, key, a));
  else {
    const SgPodLstmEval *pop = k->e + (k->n - c->population); /* the population: the most recent results */
    PetscInt             best = -1, chosen[64], nchosen = 0;
    PetscInt             S    = PetscMin(c->sample, PetscMin(c->population, 64));
    for (uint64_t draw = 0; nchosen < S; draw++) { /* S distinct members, uniformly */
      PetscInt  m   = (PetscInt)(SgRandomUniform(c->seed, key + 1, draw) * c->population) % c->population;
      PetscBool dup = PETSC_FALSE;
      for (PetscInt q = 0; q < nchosen; q++) dup = (PetscBool)(dup || chosen[q] == m);
      if (!dup) chosen[nchosen++] = m;
    }
    for (PetscInt q = 0; q < nchosen; q++)
      if (best < 0 || pop[chosen[q]].r2 > pop[best].r2) best = chosen[q];
    PetscCall(SgPodLstmArchMutate(&c->space, &pop[best].arch, c->seed, key + 2, a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* train one candidate; a diverged training is a failed candidate (R2 = -1e30), not a failed search */
static PetscErrorCode Evaluate(const SgPodLstmSearchConfig *c, SgnnBackend *be, PetscInt id, const SgPodLstmArch *a, SgPodLstmEval *e)
{
  SgPodLstmNet       net;
  SgPodLstmFitConfig fc = c->fit;
  SgPodLstmFitResult fr = {-1e30, 0, 0};
  PetscErrorCode     ierr;
  char               path[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  PetscCall(SgPodLstmNetCreate(a, c->fit.K, c->fit.L, c->fit.head, be, SGNN_F64, &net));
  PetscCall(SgPodLstmNetInit(net, (unsigned long long)(c->seed * 1000003ULL + (uint64_t)id)));
  fc.seed  = c->seed * 7919ULL + (uint64_t)id;
  fc.quiet = PETSC_TRUE;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = SgPodLstmFit(PETSC_COMM_SELF, net, &fc, &fr);
  PetscCall(PetscPopErrorHandler());
  if (ierr) fr.r2 = -1e30;
  e->id = id;
  e->arch = *a;
  e->r2 = fr.r2;
  e->epochs = fr.epochs;
  e->seconds = fr.seconds;
  PetscCall(SgPodLstmNetNumParams(net, &e->nparams));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/cand_%" PetscInt_FMT ".h5", c->logdir, id));
  PetscCall(SgPodLstmWeightsWrite(path, a, c->fit.K, net));
  PetscCall(SgPodLstmNetDestroy(&net));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmSearch(MPI_Comm comm0, const SgPodLstmSearchConfig *c, SgnnBackend *be, SgPodLstmSearchResult *res)
{
  MPI_Comm     comm;
  PetscMPIInt  rank, size;
  Known        k = {0, 0, NULL};
  PetscInt     nstart = 0, session = 0, id0 = 0, mine = 0, received = 0, total, nsend = 0;
  PetscReal    offset = 0, busy = 0, t0, tloop, wall;
  long        *counter;
  MPI_Win      win;
  MPI_Request *req = NULL;
  PetscReal   *bufs = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(res, sizeof *res));
  PetscCallMPI(MPI_Comm_dup(comm0, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (!rank) {
    int e = mkdir(c->logdir, 0777) ? errno : 0;
    PetscCheck(!e || e == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "podlstm: cannot create the search log directory %s: %s", c->logdir, strerror(e));
  }
  PetscCallMPI(MPI_Barrier(comm));
  { /* resume: what the logs hold (all ranks read before any rank appends) */
    SgPodLstmEval *old;
    PetscCall(SgPodLstmLogRead(comm, c->logdir, c->fingerprint, &nstart, &old));
    for (PetscInt i = 0; i < nstart; i++) {
      PetscCall(KnownAdd(&k, &old[i]));
      session = PetscMax(session, old[i].session + 1);
      id0     = PetscMax(id0, old[i].id + 1);
      offset  = PetscMax(offset, old[i].t_end);
    }
    PetscCall(PetscFree(old));
  }
  res->resumed = nstart;
  if (nstart) PetscCall(PetscPrintf(comm, "podlstm search: resuming from %s: %" PetscInt_FMT " evaluations logged (session %" PetscInt_FMT ")\n", c->logdir, nstart, session));
  PetscCallMPI(MPI_Win_allocate(rank ? 0 : (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &counter, &win));
  if (!rank) *counter = (long)id0;
  /* send buffers and requests for as many evaluations as the budget allows this rank */
  PetscCall(PetscMalloc2((size_t)(c->evaluations + 1) * SG_PODLSTM_EVAL_NREAL, &bufs, (size_t)(c->evaluations + 1) * size, &req));
  PetscCallMPI(MPI_Barrier(comm));
  t0 = MPI_Wtime();
  for (;;) {
    long          one = 1, idl;
    PetscInt      id;
    SgPodLstmArch a;
    SgPodLstmEval e;
    PetscReal     ts;
    PetscCall(Drain(comm, &k, &received));
    PetscCallMPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    PetscCallMPI(MPI_Fetch_and_op(&one, &idl, MPI_LONG, 0, 0, MPI_SUM, win));
    PetscCallMPI(MPI_Win_unlock(0, win));
    id = (PetscInt)idl;
    if (nstart + (id - id0) >= c->evaluations) break;
    PetscCall(Propose(c, &k, id, &a));
    ts = MPI_Wtime() - t0;
    PetscCall(Evaluate(c, be, id, &a, &e));
    e.rank = rank;
    e.session = session;
    e.t_start = offset + ts;
    e.t_end = offset + MPI_Wtime() - t0;
    busy += e.t_end - e.t_start;
    PetscCall(SgPodLstmLogAppend(c->logdir, rank, c->fingerprint, &e));
    PetscCall(KnownAdd(&k, &e));
    mine++;
    if (size > 1) { /* the result to every other rank, without waiting; the buffer lives until the final Waitall */
      PetscReal *b = bufs + (mine - 1) * SG_PODLSTM_EVAL_NREAL;
      SgPodLstmEvalPack(&e, b);
      for (PetscMPIInt r = 0; r < size; r++)
        if (r != rank) PetscCallMPI(MPI_Isend(b, SG_PODLSTM_EVAL_NREAL, MPIU_REAL, r, TAG_RESULT, comm, &req[nsend++]));
    }
    if (c->verbose) {
      char s[256];
      PetscCall(SgPodLstmArchToString(&a, s, sizeof s));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "podlstm search [rank %d] %4" PetscInt_FMT "  %-32s R2 %8.5f  %3" PetscInt_FMT " epochs %6" PetscInt_FMT " weights %6.1f s\n", (int)rank, id, s, (double)e.r2, e.epochs, e.nparams, (double)e.seconds));
    }
  }
  tloop = MPI_Wtime() - t0;
  /* the final exchange: every result of this session reaches every rank */
  PetscCallMPI(MPI_Allreduce(&mine, &total, 1, MPIU_INT, MPI_SUM, comm));
  while (received < total - mine) {
    PetscReal     buf[SG_PODLSTM_EVAL_NREAL];
    SgPodLstmEval e;
    PetscCallMPI(MPI_Recv(buf, SG_PODLSTM_EVAL_NREAL, MPIU_REAL, MPI_ANY_SOURCE, TAG_RESULT, comm, MPI_STATUS_IGNORE));
    SgPodLstmEvalUnpack(buf, &e);
    PetscCall(KnownAdd(&k, &e));
    received++;
  }
  if (nsend) PetscCallMPI(MPI_Waitall((PetscMPIInt)nsend, req, MPI_STATUSES_IGNORE));
  PetscCall(PetscFree2(bufs, req));
  PetscCallMPI(MPI_Win_free(&win));
  PetscCallMPI(MPI_Allreduce(&tloop, &wall, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscCall(PetscMalloc1(size, &res->rank_busy));
  PetscCallMPI(MPI_Allgather(&busy, 1, MPIU_REAL, res->rank_busy, 1, MPIU_REAL, comm));
  res->wall = wall;
  res->busy = 0;
  for (PetscMPIInt r = 0; r < size; r++) res->busy += res->rank_busy[r];
  res->utilisation = wall > 0 ? res->busy / (size * wall) : 0;
  /* the same list on every rank: sorted by completion time */
  {
    SgPodLstmEval *tmp;
    PetscCall(PetscMalloc1(k.n + 1, &tmp));
    PetscCall(PetscArraycpy(tmp, k.e, k.n));
    for (PetscInt i = 1; i < k.n; i++) { /* insertion sort by (t_end, id): lists are short */
      SgPodLstmEval x = tmp[i];
      PetscInt      j = i - 1;
      while (j >= 0 && (tmp[j].t_end > x.t_end || (tmp[j].t_end == x.t_end && tmp[j].id > x.id))) {
        tmp[j + 1] = tmp[j];
        j--;
      }
      tmp[j + 1] = x;
    }
    res->n = k.n;
    res->evals = tmp;
  }
  PetscCall(PetscFree(k.e));
  PetscCallMPI(MPI_Comm_free(&comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmSearchResultFree(SgPodLstmSearchResult *r)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(r->evals));
  PetscCall(PetscFree(r->rank_busy));
  PetscFunctionReturn(PETSC_SUCCESS);
}
