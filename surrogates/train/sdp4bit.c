/* -PREFIX_compress sdp4bit: ~4-bit communication on top of ZeRO stage 2 (issue 38).

   After SDP4Bit (Jia et al., NeurIPS 2024, "SDP4Bit: Toward 4-bit Communication Quantization in
   Sharded Data Parallelism for LLM Training"). Our own code, from the paper's description:

   qWD, the parameter all-gather. Rank r owns block r of the slab and keeps its exact weights there
   (the "master" block, b Psi/N bytes more per rank); every rank holds the replicated weights x,
   which are what forward and backward see. After the optimizer has updated the master block, the
   owner sends d = master - x (its block) quantized to 4 bits; every rank, the owner included, adds
   the dequantized d to its x from the same packed bytes by the same arithmetic, so the ranks keep
   identical weights bit for bit (the test checks it). Because d is taken against x and not against
   the previous master, the quantization error of one step is part of the next step's difference:
   that is the paper's error feedback on the weights: x never drifts from the master by more than
   half a quantization step of the last difference, however many steps it runs.

   TLq-HS, the gradient reduce-scatter. The ranks form nodes of G consecutive ranks (M = N/G nodes;
   G: -PREFIX_sdp4bit_node_ranks, 0 = the ranks that share memory, as the paper's intra/inter-node
   split). Rank r = n G + l (node n, local index l) must end with the sum of block r over all ranks.
     level 1, inside a node, 8 bits: rank (n,l) sends to (n,l') the blocks (m,l') of every node m of
       its own gradient, 8-bit quantized; (n,l') adds what it receives to its own (exact) values: it
       holds the node's partial sums of the blocks of local index l';
     level 2, between nodes, 4 bits with the Hadamard smoother: (n,l) sends to (m,l) the node's partial
       sum of block (m,l), each group of 128 values rotated by the orthonormal Hadamard matrix
       H/sqrt(128) (it spreads an outlier over its group, so the group's scale is not set by one
       value) and quantized to 4 bits; (m,l) adds the dequantized sums, rotates them back (H/sqrt(128)
       is its own inverse) and adds its own node's exact partial sum.
   With G = N (one node) only level 1 runs (8 bits), with G = 1 only level 2 (4 bits). Both levels are
   MPI_Alltoallv of packed bytes on sub-communicators. The gradient has no error feedback (the paper's
   TLq-HS has none: the 8-bit first level and the smoother keep the error small; it is unbiased to
   round-off in expectation only through the smoother's spreading, not by construction).

   The quantizer (shared by both): groups of g consecutive values of a chunk (the last group of a
   chunk may be shorter), symmetric: scale s = max |x| / qmax stored as float32, code q =
   round(x / s) in [-qmax, qmax] (qmax 7 for 4 bits, 127 for 8 bits), value q s. A chunk of n values
   is ceil(n/g) scales (4 bytes each, first) then the codes: 4 bits two a byte (value i in the low
   nibble of byte i/2 if i is even, the high one if odd, two's complement), or one byte each.
   Group sizes: weights 2048 (4 bits: 0.5 + 4/2048 bytes a value), gradients 128 (4 bits: 0.53 bytes
   a value, 8 bits: 1.03), the paper's defaults; the smoother acts on whole groups of 128 only (the
   last, shorter group of a chunk is quantized as it is).

   Bytes counted: what this rank hands to MPI for other ranks in one step: (N-1) x its packed weight
   block (a direct all-gather; averaged over the ranks this equals the ring's (N-1)/N x all blocks)
   plus its two all-to-alls' messages. Against stage 2 in float32 (a reduce-scatter and an all-gather,
   2 (N-1)/N 4 Psi), G = 1 sends about 8/(0.531 + 0.502) = 7.7x fewer bytes, G = N 8/(1.03 + 0.502) =
   5.2x fewer (15.5x and 10.4x against float64). On 1 rank nothing is sent and nothing quantized:
   the step is stage 2's exactly.

   At ZeRO stage 3 only TLq-HS runs: qWD adds the differences to the previous whole weights x, which
   every rank keeps at stage 2 and stage 3 frees between steps (keeping x, Psi doubles, would cost more
   than stage 3 saves), so the weights are gathered exactly by stage 3's all-gather before the step
   (zero3.c), the optimizer steps the rank's block as without sdp4bit, and g (the gradient as doubles)
   exists only inside the step's sync. */
#include "sgtrainerimpl.h"
#include "sgsys.h"
#include <math.h>

#define SDP_WGROUP 2048 /* weights: values a scale (the paper's default) */
#define SDP_GGROUP 128  /* gradients: values a scale and the Hadamard smoother's size (a power of 2) */

struct _SgTrainerSdp4bit {
  PetscInt    G;            /* ranks a node */
  MPI_Comm    intra, inter; /* the ranks of my node (by local index); the ranks of my local index (by node) */
  double     *x, *d, *g;    /* the slab as doubles (weights), my block's difference, the gradient as doubles */
  void       *master;       /* my block's exact weights (the slab's precision) */
  void       *xold;         /* my block of x before the optimizer step */
  PetscBool   init;         /* master set from x (at the first update: after any restart has set x) */
  double      gbytes;       /* this step's gradient bytes (the sync counts them, the update adds them) */
};

size_t SgTrainerQuantBytes(long n, int bits, long g)
{
  if (n <= 0) return 0;
  return 4 * (size_t)((n + g - 1) / g) + (size_t)((n * bits + 7) / 8);
}

/* the largest code of a bits-wide symmetric quantizer */
static int QMax(int bits) { return (1 << (bits - 1)) - 1; }

PetscErrorCode SgTrainerQuantPack(const double x[], long n, int bits, long g, unsigned char buf[])
{
  long           ng = (n + g - 1) / g;
  unsigned char *code = buf + 4 * ng;
  int            qmax = QMax(bits);

  PetscFunctionBegin;
  PetscCheck(bits == 4 || bits == 8, PETSC_COMM_SELF, PETSC_ERR_SUP, "sdp4bit: %d-bit codes: 4 or 8", bits);
  if (bits == 4) PetscCall(PetscArrayzero(code, (n + 1) / 2));
  for (long k = 0; k < ng; k++) {
    long   lo = k * g, hi = PetscMin(n, lo + g);
    double amax = 0;
    float  s;
    for (long i = lo; i < hi; i++) amax = PetscMax(amax, fabs(x[i]));
    if (!(amax <= 1e300)) amax = NAN; /* inf or NaN: the group decodes as NaN, the trainer's check stops */
    s = (float)(amax / qmax);
    memcpy(buf + 4 * k, &s, 4); /* the scales first, unaligned */
    for (long i = lo; i < hi; i++) {
      int q = 0;
      if (s > 0 && isfinite(s)) {
        double r = nearbyint(x[i] / (double)s);
        q = r > qmax ? qmax : (r < -qmax ? -qmax : (int)r);
      }
      if (bits == 8) code[i] = (unsigned char)(signed char)q;
      else code[i >> 1] |= (unsigned char)(((unsigned)q & 0xFu) << (4 * (i & 1)));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerQuantUnpackAdd(const unsigned char buf[], long n, int bits, long g, double y[])
{
  long                 ng = (n + g - 1) / g;
  const unsigned char *code = buf + 4 * ng;

  PetscFunctionBegin;
  for (long k = 0; k < ng; k++) {
    long  lo = k * g, hi = PetscMin(n, lo + g);
    float s;
    memcpy(&s, buf + 4 * k, 4);
    for (long i = lo; i < hi; i++) {
      int q;
      if (bits == 8) q = (signed char)code[i];
      else q = (int)(((code[i >> 1] >> (4 * (i & 1))) & 0xFu) ^ 8u) - 8;
      y[i] += (double)q * (double)s; /* exact in double (a float times a small integer) */
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x <- H x / sqrt(g) on every whole group of g values (g a power of 2; a shorter last group is left
   alone); the fast Walsh-Hadamard butterflies, its own inverse to round-off */
PetscErrorCode SgTrainerHadamard(double x[], long n, long g)
{
  double c = 1 / sqrt((double)g);

  PetscFunctionBegin;
  PetscCheck(g > 0 && !(g & (g - 1)), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "sdp4bit: Hadamard group %ld is not a power of 2", g);
  for (long lo = 0; lo + g <= n; lo += g) {
    double *y = x + lo;
    for (long h = 1; h < g; h <<= 1)
      for (long i = 0; i < g; i += 2 * h)
        for (long j = i; j < i + h; j++) {
          double a = y[j], b = y[j + h];
          y[j]     = a + b;
          y[j + h] = a - b;
        }
    for (long j = 0; j < g; j++) y[j] *= c;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the two-level reduce-scatter (TLq-HS) ---- */

/* the bytes rank (n,l) sends at level 1 to local index l2 (all nodes' blocks of l2) */
static size_t Level1Bytes(const PetscMPIInt count[], int G, int M, int l2)
{
  size_t b = 0;
  for (int m = 0; m < M; m++) b += SgTrainerQuantBytes(count[m * G + l2], 8, SDP_GGROUP);
  return b;
}

PetscErrorCode SgTrainerSdp4bitReduceScatter(MPI_Comm intra, MPI_Comm inter, const PetscMPIInt count[], const PetscMPIInt displ[], double g[], double *bytes)
{
  PetscMPIInt    G, M, l, n, *sc, *sd, *rc, *rd;
  unsigned char *sb = NULL, *rb = NULL;
  size_t         ns = 0, nr = 0, sent = 0;
  double        *acc;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(intra, &G));
  PetscCallMPI(MPI_Comm_rank(intra, &l));
  PetscCallMPI(MPI_Comm_size(inter, &M));
  PetscCallMPI(MPI_Comm_rank(inter, &n));
  PetscCall(PetscMalloc4(PetscMax(G, M), &sc, PetscMax(G, M), &sd, PetscMax(G, M), &rc, PetscMax(G, M), &rd));
  if (G > 1) { /* level 1: 8 bits inside the node */
    for (int q = 0; q < G; q++) {
      size_t s = q == l ? 0 : Level1Bytes(count, G, M, q), r = q == l ? 0 : Level1Bytes(count, G, M, l);
      PetscCheck(ns + s < PETSC_MPI_INT_MAX && nr + r < PETSC_MPI_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "sdp4bit: a gradient message over 2 GiB");
      sd[q] = (PetscMPIInt)ns;
      sc[q] = (PetscMPIInt)s;
      rd[q] = (PetscMPIInt)nr;
      rc[q] = (PetscMPIInt)r;
      ns += s;
      nr += r;
    }
    PetscCall(PetscMalloc2(ns + 1, &sb, nr + 1, &rb));
    for (int q = 0; q < G; q++) {
      unsigned char *p = sb + sd[q];
      if (q == l) continue;
      for (int m = 0; m < M; m++) {
        int r = m * G + q;
        PetscCall(SgTrainerQuantPack(g + displ[r], count[r], 8, SDP_GGROUP, p));
        p += SgTrainerQuantBytes(count[r], 8, SDP_GGROUP);
      }
    }
    PetscCallMPI(MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, intra));
    for (int q = 0; q < G; q++) { /* the senders in rank order, added to my own exact values */
      const unsigned char *p = rb + rd[q];
      if (q == l) continue;
      for (int m = 0; m < M; m++) {
        int r = m * G + l;
        PetscCall(SgTrainerQuantUnpackAdd(p, count[r], 8, SDP_GGROUP, g + displ[r]));
        p += SgTrainerQuantBytes(count[r], 8, SDP_GGROUP);
      }
    }
    sent += ns;
    PetscCall(PetscFree2(sb, rb));
  }
  if (M > 1) { /* level 2: 4 bits with the Hadamard smoother between nodes */
    int    me = n * G + l;
    size_t bm = SgTrainerQuantBytes(count[me], 4, SDP_GGROUP);
    ns = nr = 0;
    for (int m = 0; m < M; m++) {
      size_t s = m == n ? 0 : SgTrainerQuantBytes(count[m * G + l], 4, SDP_GGROUP), r = m == n ? 0 : bm;
      PetscCheck(ns + s < PETSC_MPI_INT_MAX && nr + r < PETSC_MPI_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "sdp4bit: a gradient message over 2 GiB");
      sd[m] = (PetscMPIInt)ns;
      sc[m] = (PetscMPIInt)s;
      rd[m] = (PetscMPIInt)nr;
      rc[m] = (PetscMPIInt)r;
      ns += s;
      nr += r;
    }
    PetscCall(PetscMalloc2(ns + 1, &sb, nr + 1, &rb));
    {
      long mx = 0;
      for (int m = 0; m < M; m++) mx = PetscMax(mx, count[m * G + l]);
      PetscCall(PetscMalloc1(mx + 1, &acc));
    }
    for (int m = 0; m < M; m++) {
      int r = m * G + l;
      if (m == n) continue;
      PetscCall(PetscArraycpy(acc, g + displ[r], count[r]));
      PetscCall(SgTrainerHadamard(acc, count[r], SDP_GGROUP));
      PetscCall(SgTrainerQuantPack(acc, count[r], 4, SDP_GGROUP, sb + sd[m]));
    }
    PetscCallMPI(MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, inter));
    PetscCall(PetscArrayzero(acc, count[me]));
    for (int m = 0; m < M; m++)
      if (m != n) PetscCall(SgTrainerQuantUnpackAdd(rb + rd[m], count[me], 4, SDP_GGROUP, acc));
    PetscCall(SgTrainerHadamard(acc, count[me], SDP_GGROUP)); /* back from the rotated values */
    for (long i = 0; i < count[me]; i++) g[displ[me] + i] += acc[i];
    sent += ns;
    PetscCall(PetscFree(acc));
    PetscCall(PetscFree2(sb, rb));
  }
  PetscCall(PetscFree4(sc, sd, rc, rd));
  *bytes = (double)sent;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- qWD: the quantized weight differences, all-gathered ---- */
PetscErrorCode SgTrainerSdp4bitAllGather(MPI_Comm comm, const PetscMPIInt count[], const PetscMPIInt displ[], const double d[], double x[], double *bytes)
{
  PetscMPIInt    size, rank, *bc, *bd;
  unsigned char *all;
  size_t         tot = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc2(size, &bc, size, &bd));
  for (int r = 0; r < size; r++) {
    size_t b = SgTrainerQuantBytes(count[r], 4, SDP_WGROUP);
    PetscCheck(tot + b < PETSC_MPI_INT_MAX, comm, PETSC_ERR_SUP, "sdp4bit: the packed weights exceed 2 GiB");
    bd[r] = (PetscMPIInt)tot;
    bc[r] = (PetscMPIInt)b;
    tot += b;
  }
  PetscCall(PetscMalloc1(tot + 1, &all));
  PetscCall(SgTrainerQuantPack(d, count[rank], 4, SDP_WGROUP, all + bd[rank]));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, bc, bd, MPI_BYTE, comm));
  /* every block from the gathered bytes, the owner's own too: the same decode on every rank */
  for (int r = 0; r < size; r++) PetscCall(SgTrainerQuantUnpackAdd(all + bd[r], count[r], 4, SDP_WGROUP, x + displ[r]));
  *bytes = (double)(size - 1) * (double)bc[rank];
  PetscCall(PetscFree(all));
  PetscCall(PetscFree2(bc, bd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the trainer's side ---- */
static size_t ESz(SgnnTensor v) { return sgnn_tensor_dtype(v) == SGNN_F32 ? sizeof(float) : sizeof(double); }

static void SlabAsReals(SgnnTensor v, long lo, long n, double out[])
{
  if (sgnn_tensor_dtype(v) == SGNN_F32) {
    const float *p = (const float *)sgnn_tensor_data(v) + lo;
    for (long i = 0; i < n; i++) out[i] = p[i];
  } else memcpy(out, (const double *)sgnn_tensor_data(v) + lo, (size_t)n * sizeof(double));
}

static void SlabFromDoubles(SgnnTensor v, long lo, long n, const double in[])
{
  if (sgnn_tensor_dtype(v) == SGNN_F32) {
    float *p = (float *)sgnn_tensor_data(v) + lo;
    for (long i = 0; i < n; i++) p[i] = (float)in[i];
  } else memcpy((double *)sgnn_tensor_data(v) + lo, in, (size_t)n * sizeof(double));
}

PetscErrorCode SgTrainerOptionsSdp4bit(PetscOptionItems *PetscOptionsObject, PetscInt *node_ranks)
{
  PetscFunctionBegin;
  PetscCall(SgOptionsInt("-sdp4bit_node_ranks", "compress sdp4bit: ranks a node for its two gradient levels (8 bits inside a node, 4 bits with a Hadamard smoother between nodes; a divisor of the ranks); 0: the ranks that share memory; 1: every rank its own node (4 bits between all)", *node_ranks, node_ranks, NULL, 0, PETSC_MAX_INT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSetSdp4bit(SgTrainer t, PetscInt node_ranks)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(t, SG_TRAINER_CLASSID, 1);
  PetscCheck(!t->setupcalled, PetscObjectComm((PetscObject)t), PETSC_ERR_ORDER, "SgTrainer: settings must come before SgTrainerSetUp()");
  t->sdp_node = node_ranks;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The nodes (G) and their communicators; collective. */
PetscErrorCode SgTrainerSdp4bitSetUp(SgTrainer t, const char p[])
{
  MPI_Comm    comm = t->sync->comm;
  PetscMPIInt size, rank, G;
  PetscInt    node = t->sdp_node;
  long        psi  = sgnn_tensor_numel(sgnn_params_values(t->P));

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(node >= 0, comm, PETSC_ERR_USER_INPUT, "%ssdp4bit_node_ranks %" PetscInt_FMT ": give the ranks a node (1: every rank its own node, 4-bit gradients only), or 0 for the ranks that share memory", p, node);
  if (!node) { /* the ranks that share memory, if every node has as many */
    MPI_Comm    sh;
    PetscMPIInt s, mn, mx;
    PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &sh));
    PetscCallMPI(MPI_Comm_size(sh, &s));
    PetscCallMPI(MPI_Comm_free(&sh));
    PetscCallMPI(MPI_Allreduce(&s, &mn, 1, MPI_INT, MPI_MIN, comm));
    PetscCallMPI(MPI_Allreduce(&s, &mx, 1, MPI_INT, MPI_MAX, comm));
    PetscCheck(mn == mx, comm, PETSC_ERR_USER_INPUT, "%scompress sdp4bit: the nodes hold %d to %d ranks; its two levels need equal nodes: set %ssdp4bit_node_ranks (a divisor of %d; 1: 4-bit gradients between all ranks)", p, mn, mx, p, size);
    node = mn;
  }
  PetscCheck(size % node == 0, comm, PETSC_ERR_USER_INPUT, "%ssdp4bit_node_ranks %" PetscInt_FMT " does not divide the %d ranks: use a divisor (1: 4-bit gradients between all ranks)", p, node, size);
  G = (PetscMPIInt)node;
  PetscCall(PetscNew(&t->sdp));
  t->sdp->G = G;
  PetscCallMPI(MPI_Comm_split(comm, rank / G, rank % G, &t->sdp->intra));
  PetscCallMPI(MPI_Comm_split(comm, rank % G, rank / G, &t->sdp->inter));
  if (t->shard == 3) PetscFunctionReturn(PETSC_SUCCESS); /* no replicated x to keep; g is allocated by each step's sync */
  PetscCall(PetscMalloc1(psi, &t->sdp->x));
  PetscCall(PetscMalloc1(PetscMax(t->zcount[rank], 1), &t->sdp->d));
  PetscCall(PetscMalloc1(psi, &t->sdp->g));
  PetscCall(PetscMalloc2(PetscMax(t->zcount[rank], 1) * ESz(sgnn_params_values(t->P)), (char **)&t->sdp->master, PetscMax(t->zcount[rank], 1) * ESz(sgnn_params_values(t->P)), (char **)&t->sdp->xold));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSdp4bitDestroy(SgTrainer t)
{
  PetscFunctionBegin;
  if (!t->sdp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_free(&t->sdp->intra));
  PetscCallMPI(MPI_Comm_free(&t->sdp->inter));
  PetscCall(PetscFree(t->sdp->x));
  PetscCall(PetscFree(t->sdp->d));
  PetscCall(PetscFree(t->sdp->g));
  if (t->sdp->master) PetscCall(PetscFree2(t->sdp->master, t->sdp->xold));
  PetscCall(PetscFree(t->sdp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt SgTrainerSdp4bitNodeRanks(SgTrainer t) { return t->sdp ? t->sdp->G : 0; }

/* The working copies this rank allocates besides the engine's slabs, in bytes: w[0] with the
   weights (stage 2: x, Psi doubles; d, a block of doubles; the master block and x's old block in the
   slab's precision), w[1] with the gradient (the slab as Psi doubles: kept at stage 2, allocated by
   each step's sync and freed after it at stage 3). 0 on 1 rank (nothing is quantized there) only
   for g at stage 3; the stage-2 buffers are allocated whatever the rank count. */
void SgTrainerSdp4bitWorkBytes(SgTrainer t, double w[2])
{
  double psi = (double)sgnn_tensor_numel(sgnn_params_values(t->P)), e = (double)ESz(sgnn_params_values(t->P)), n;
  int    rank;

  w[0] = w[1] = 0;
  if (!t->sdp) return;
  MPI_Comm_rank(t->sync->comm, &rank);
  n    = (double)PetscMax(t->zcount[rank], 1);
  w[1] = t->shard == 3 && t->zn == 1 ? 0 : 8 * psi; /* stage 3 on 1 rank: the sync sends nothing and allocates nothing */
  if (t->shard == 2) w[0] = 8 * psi + 8 * n + 2 * e * n;
}

/* this step's gradient bytes (the sync counted them), taken (stage 3 adds them at its update) */
double SgTrainerSdp4bitTakeGradBytes(SgTrainer t)
{
  double b = t->sdp ? t->sdp->gbytes : 0;
  if (t->sdp) t->sdp->gbytes = 0;
  return b;
}

/* The update: the optimizer on the master block, the difference to x quantized and all-gathered,
   added to x on every rank. Counts the step's bytes (the gradient's were counted by the sync). */
PetscErrorCode SgTrainerSdp4bitUpdate(SgTrainer t)
{
  MPI_Comm    comm = t->sync->comm;
  SgnnTensor  v    = sgnn_params_values(t->P);
  size_t      e    = ESz(v);
  PetscMPIInt size, rank;
  long        lo, n, psi = sgnn_tensor_numel(v);
  char       *blk;
  double      wb = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (size == 1) { /* nothing to send: stage 2's step */
    SgCallNN(sgnn_optim_step(t->opt));
    t->zsteps++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  lo  = t->zdispl[rank];
  n   = t->zcount[rank];
  blk = (char *)sgnn_tensor_data(v) + (size_t)lo * e;
  if (!t->sdp->init) { /* every rank starts from the same weights: the master is x */
    PetscCall(PetscArraycpy((char *)t->sdp->master, blk, n * e));
    t->sdp->init = PETSC_TRUE;
  }
  PetscCall(PetscArraycpy((char *)t->sdp->xold, blk, n * e));
  PetscCall(PetscArraycpy(blk, (char *)t->sdp->master, n * e)); /* the optimizer steps the exact weights */
  SgCallNN(sgnn_optim_step(t->opt));
  PetscCall(PetscArraycpy((char *)t->sdp->master, blk, n * e));
  PetscCall(PetscArraycpy(blk, (char *)t->sdp->xold, n * e)); /* x again: it moves by the sent difference only */
  SlabAsReals(v, 0, psi, t->sdp->x);
  for (long i = 0; i < n; i++) {
    double m = e == sizeof(float) ? ((float *)t->sdp->master)[i] : ((double *)t->sdp->master)[i];
    t->sdp->d[i] = m - t->sdp->x[lo + i];
  }
  PetscCall(SgTrainerSdp4bitAllGather(comm, t->zcount, t->zdispl, t->sdp->d, t->sdp->x, &wb));
  SlabFromDoubles(v, 0, psi, t->sdp->x);
  t->zbytes += wb + t->sdp->gbytes;
  t->sdp->gbytes = 0;
  t->zsteps++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the gradient sync: the two-level reduce-scatter; this rank's block of the slab gets the sum */
static PetscErrorCode End_Sdp4bit(SgTrainerSync s, PetscInt nglobal)
{
  SgTrainer   t  = (SgTrainer)s->data;
  SgnnTensor  gt = sgnn_params_grads(s->P);
  PetscMPIInt size, rank;
  long        lo, n;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
  lo = t->zdispl[rank];
  n  = t->zcount[rank];
  if (size > 1) {
    if (t->shard == 3) PetscCall(PetscMalloc1(sgnn_tensor_numel(gt), &t->sdp->g)); /* only during the step: stage 3 keeps no whole-slab buffer between steps */
    SlabAsReals(gt, 0, sgnn_tensor_numel(gt), t->sdp->g);
    PetscCall(SgTrainerSdp4bitReduceScatter(t->sdp->intra, t->sdp->inter, t->zcount, t->zdispl, t->sdp->g, &t->sdp->gbytes));
    SlabFromDoubles(gt, lo, n, t->sdp->g + lo);
    if (t->shard == 3) PetscCall(PetscFree(t->sdp->g));
  }
  if (s->scaling == SG_TRAINER_LOSS_SUM) { /* as stage 2's reduce-scatter: x = a x on the block */
    double a = 1.0 / (double)nglobal;
    if (ESz(gt) == sizeof(float)) {
      float *x = (float *)sgnn_tensor_data(gt) + lo;
      for (long i = 0; i < n; i++) x[i] = (float)(a * x[i] + 0.0);
    } else {
      double *x = (double *)sgnn_tensor_data(gt) + lo;
      for (long i = 0; i < n; i++) x[i] = a * x[i] + 0.0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTrainerSyncCreate_Sdp4bit(SgTrainerSync s)
{
  PetscFunctionBegin;
  PetscCall(SgTrainerSyncSetEndOnly(s, End_Sdp4bit, "sdp4bit sync (ZeRO stage 2 or 3): the gradient reduce-scattered in two levels, 8 bits inside a node, 4 bits with a Hadamard smoother between nodes"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The bytes rank `rank` sends in one step (see the top of the file), from the blocks alone: the
   summary's figure and the test's formula */
double SgTrainerSdp4bitStepBytes(long psi, PetscMPIInt size, PetscMPIInt rank, PetscInt G)
{
  if (size <= 1) return 0;
  return (double)(size - 1) * (double)SgTrainerQuantBytes(psi * (rank + 1) / size - psi * rank / size, 4, SDP_WGROUP) + SgTrainerSdp4bitGradBytes(psi, size, rank, G);
}

/* the gradient's part alone (stage 3 gathers the weights exactly) */
double SgTrainerSdp4bitGradBytes(long psi, PetscMPIInt size, PetscMPIInt rank, PetscInt G)
{
  double b = 0;
  int    M, l, n;
  if (size <= 1) return 0;
  M = size / (int)G;
  l = rank % (int)G;
  n = rank / (int)G;
  for (int q = 0; q < G; q++)
    for (int m = 0; m < M && q != l; m++) {
      int r = m * (int)G + q;
      b += (double)SgTrainerQuantBytes(psi * (r + 1) / size - psi * r / size, 8, SDP_GGROUP);
    }
  for (int m = 0; m < M; m++)
    if (m != n) {
      int r = m * (int)G + l;
      b += (double)SgTrainerQuantBytes(psi * (r + 1) / size - psi * r / size, 4, SDP_GGROUP);
    }
  return b;
}
