/* sgpar.h -- data-parallel training for surge's NN engine (surrogates/nn).
 *
 * Gradient sum over the ranks of a communicator with bucketed non-blocking
 * allreduce overlapped with backward: the parameter slab's gradient is cut
 * into buckets (contiguous slab ranges, last layers first); the engine's
 * grad-ready hook reports each finished parameter during sgnn_backward, and
 * a bucket whose parameters are all final starts its MPI_Iallreduce while
 * backward continues with earlier layers.
 *
 * Exactness with unequal local batches: each rank's loss must be the SUM
 * over its local samples (not the mean); sgpar_dp_end divides the summed
 * gradient by the global sample count, so the result is the gradient of the
 * global mean loss no matter how samples are split (SOLAR-style loaders give
 * ranks different counts).
 *
 *   sgpar_dp_create(comm, P, bucket_bytes, &dp);
 *   loop: sgnn_params_zero_grad(P); sgpar_dp_begin(dp, local_count);
 *         loss = sum of local losses; sgnn_backward(loss);
 *         sgpar_dp_end(dp, &global_count); optimizer step
 *
 * Depends on MPI and surrogates/nn only. Buckets start in a fixed order
 * (every rank issues the same collectives in the same order even if its
 * hooks fire differently, e.g. a rank with no samples skips backward). */
#ifndef SGPAR_H
#define SGPAR_H
#include "sgnn.h"
#include <mpi.h>

typedef struct SgparDP_ *SgparDP;

int sgpar_dp_create(MPI_Comm comm, SgnnParams P, size_t bucket_bytes, SgparDP *dp);
int sgpar_dp_begin(SgparDP dp, long local_count);
int sgpar_dp_end(SgparDP dp, long *global_count);
/* divide = 0: sgpar_dp_end only sums. For a loss that already carries 1/(global sample count) (the
 * loader gives it before the step), e.g. the Deep Potential's: its gradient must stay bit for bit what
 * the serial code computes, and x/n summed differs from (sum x)/n in the last bit. Default 1. */
int sgpar_dp_set_divide(SgparDP dp, int divide);
/* buckets started before sgpar_dp_end ran, in the last step (overlap achieved) */
int sgpar_dp_overlapped(SgparDP dp);
int sgpar_dp_nbuckets(SgparDP dp);
void sgpar_dp_destroy(SgparDP *dp);
const char *sgpar_last_error(void);

/* ---- spatial / hybrid parallelism (grid.c, halo.c, spatial.c) -------------
 * A process grid P = data_groups x spatial_ranks: the ranks of one data group
 * share each sample, whose grid is cut along one spatial axis (2 = D, 3 = H,
 * 4 = W of [N,C,D,H,W]) into contiguous slabs, one per spatial rank, of any
 * (uneven, >= 1 plane) sizes. Layers below take and return the local slab and
 * its split; they are built from the engine's own ops and recorded on its
 * tape, with two communicating ops of their own (halo exchange, allreduce)
 * whose backward passes communicate too, so sgnn_backward gives exact input
 * gradients. Weight gradients are local partial sums: reduce them over the
 * whole grid communicator with sgpar_dp (each rank's loss is the sum over its
 * slab; count samples once per data group: sgpar_grid_sample_count).
 * Backward must run on every rank of a spatial group in the same tape order
 * (the same model code does that), and every rank's loss must reach its whole
 * tape (a rank with nothing to contribute adds 0 x a sum of its output). CPU
 * backend only (MPI on host memory). SgTrainer builds the grid from
 * -PREFIX_data_groups / -PREFIX_spatial_ranks (surrogates/train/grid.c). */
typedef struct SgparGrid_ *SgparGrid;
/* data_groups * spatial_ranks must equal the size of comm; rank r is spatial
 * rank r % spatial_ranks of data group r / spatial_ranks */
int sgpar_grid_create(MPI_Comm comm, int data_groups, int spatial_ranks, SgparGrid *g);
void sgpar_grid_destroy(SgparGrid *g);
MPI_Comm sgpar_grid_comm(SgparGrid g);         /* all ranks (weight-gradient sum) */
MPI_Comm sgpar_grid_spatial_comm(SgparGrid g); /* the ranks sharing my samples */
MPI_Comm sgpar_grid_data_comm(SgparGrid g);    /* my spatial position in every data group */
int sgpar_grid_spatial_rank(SgparGrid g);
int sgpar_grid_spatial_size(SgparGrid g);
int sgpar_grid_data_group(SgparGrid g);
int sgpar_grid_data_groups(SgparGrid g);
/* the count to give sgpar_dp_begin on the grid communicator: local_count on
 * spatial rank 0, 0 elsewhere (a sample split over ranks counts once) */
long sgpar_grid_sample_count(SgparGrid g, long local_count);

/* this rank's slab of a global extent along one axis */
typedef struct {
  int axis;      /* 2, 3 or 4 */
  int global;    /* extent of the whole sample along axis */
  int offset, n; /* my planes [offset, offset + n) */
  int min_n;     /* smallest slab along this axis (halo widths are checked against it) */
  int gcd;       /* greatest common divisor of the slab sizes: pooling by f is local iff f divides it */
  int lo, hi;    /* spatial ranks of my neighbours along the axis (MPI_PROC_NULL at the sample's edges) */
} SgparAxisSplit;
/* a sample's partition over the spatial ranks: along one axis, or two (a 2-D
 * layout of spatial ranks) */
typedef struct {
  int naxes; /* 1 or 2 */
  SgparAxisSplit ax[2];
} SgparSplit;
/* one axis over all spatial ranks. counts == NULL: as even as possible (the
 * first global % size ranks get one more); else counts[spatial_rank] planes
 * each, all >= 1, summing to global */
int sgpar_split_create(SgparGrid g, int axis, int global, const int *counts, SgparSplit *s);
/* two axes: the spatial ranks as a ranks[0] x ranks[1] layout (spatial rank
 * r = r0 * ranks[1] + r1); axes[k] cut into ranks[k] slabs as above */
int sgpar_split2_create(SgparGrid g, const int ranks[2], const int axes[2], const int global[2], const int *const counts[2],
                        SgparSplit *s);

/* Differentiable communication (recorded on the tape):
 * sgpar_halo: x [..n..] -> [..h + n + h..] along s->axis: h planes of each
 *   neighbour's slab on either side (zeros beyond the sample's edge);
 *   backward sends the halo's gradient back and adds it to the owner's planes.
 * begin/end split it so compute can run while the planes travel. */
typedef struct SgparHalo_ *SgparHalo;
int sgpar_halo_begin(SgparGrid g, const SgparAxisSplit *s, SgnnTensor x, int h, SgparHalo *hx);
/* the alias of x that compute overlapping the exchange must read: its backward node completes the
 * backward exchange after everything computed from it (borrowed, valid until sgpar_halo_end) */
SgnnTensor sgpar_halo_source(SgparHalo hx);
/* y -> an alias of y whose forward and backward call MPI_Testall on the exchange in flight: put one
 * after each piece of interior compute, so Open MPI moves rendezvous messages meanwhile */
int sgpar_halo_progress(SgparHalo hx, SgnnTensor y, SgnnTensor *out);
/* -> [..2h..]: the lower halo then the upper halo; frees *hx */
int sgpar_halo_end(SgparHalo *hx, SgnnTensor *halos);
int sgpar_halo(SgparGrid g, const SgparAxisSplit *s, SgnnTensor x, int h, SgnnTensor *out);
/* sum of x over the ranks of comm (every rank gets it); backward: the sum of
 * the output gradients (each rank's loss uses the replicated result) */
int sgpar_allreduce_sum(MPI_Comm comm, SgnnTensor x, SgnnTensor *out);

/* Partitioned layers on the local slab x [N,C,..] with split s.
 * conv3d: stride 1 and padding (k-1)/2 (odd k) along each split axis, so the
 * output keeps the split; any kernel/stride/padding on the other axes. With
 * one split axis the halo travels while the interior planes are convolved;
 * with two, the halos are exchanged axis after axis (the second exchange
 * carries the first's planes, so the corners arrive too), then convolved. */
int sgpar_conv3d(SgparGrid g, const SgparSplit *s, SgnnTensor x, SgnnTensor w, SgnnTensor bias, const int stride[3],
                 const int pad[3], SgnnTensor *out);
/* batch norm (training mode) with statistics over N and the whole sample:
 * reduced over the spatial group, and over the data groups too when
 * across_data; running_mean/var (may be NULL) updated as sgnn_batch_norm does */
int sgpar_batch_norm(SgparGrid g, SgnnTensor x, SgnnTensor gamma, SgnnTensor beta, SgnnTensor running_mean,
                     SgnnTensor running_var, int across_data, double momentum, double eps, SgnnTensor *out);
/* max-pooling with kernel = stride = k: every slab's offset and size along
 * each split axis must be multiples of k[axis-2] (then pooling is local); *so
 * gets the output's split (may be s) */
int sgpar_maxpool3d(const SgparSplit *s, SgnnTensor x, const int k[3], SgparSplit *so, SgnnTensor *out);
int sgpar_upsample_nearest3d(const SgparSplit *s, SgnnTensor x, const int factor[3], SgparSplit *so,
                             SgnnTensor *out);
/* channel concatenation of skip connections: all splits must be equal */
int sgpar_concat(int n, const SgparSplit *s, SgnnTensor *xs, SgnnTensor *out);
/* the whole sample on every spatial rank (for decoders that need global
 * context, e.g. interpolation at query points anywhere): each slab is placed
 * in a zero tensor of the full extent and the spatial group sums them, so the
 * backward is the sum of the ranks' gradients restricted to each slab. Every
 * spatial rank then holds the same tensor: a loss computed from it on every
 * rank counts S times, so weight it by 1/S (or compute it on one rank). */
int sgpar_gather(SgparGrid g, const SgparSplit *s, SgnnTensor x, SgnnTensor *out);

/* Overlap: a one-axis convolution convolves the interior output planes in `chunks` pieces while the
 * halo travels, testing the exchange between pieces, forward and backward (default 4); 0: blocking
 * (wait for the halo, then one convolution of the padded slab). The results are the same to round-off. */
int sgpar_grid_set_overlap(SgparGrid g, int chunks);

/* Timeline: with tracing on, the partitioned layers record per layer (conv or batch norm, numbered in
 * call order from 0) the span of a convolution's forward and of its backward (halo node to anchor),
 * the waits for halos, and the batch-norm allreduces; times from MPI_Wtime. on = 1 clears and starts,
 * 0 stops; the events stay readable until the next start or the grid's destruction. */
enum { SGPAR_EV_CONV_FWD, SGPAR_EV_HALO_WAIT_FWD, SGPAR_EV_CONV_BWD, SGPAR_EV_HALO_WAIT_BWD, SGPAR_EV_ALLREDUCE_FWD, SGPAR_EV_ALLREDUCE_BWD, SGPAR_EV_NKINDS };
typedef struct {
  int layer, kind;
  double t0, t1;
} SgparTraceEvent;
int sgpar_grid_trace(SgparGrid g, int on);
int sgpar_grid_trace_events(SgparGrid g, const SgparTraceEvent **ev, int *n);
const char *sgpar_trace_kind_name(int kind);

/* test-only fault injection, to show the tests detect a missing exchange:
 * SGPAR_FAULT_BWD_HALO drops the backward halo exchange, SGPAR_FAULT_BN_REDUCE
 * the batch-norm statistics reduction. Never set outside tests. */
enum { SGPAR_FAULT_BWD_HALO = 1, SGPAR_FAULT_BN_REDUCE = 2 };
void sgpar_test_set_fault(int mask);
int sgpar_test_fault(void);
#endif
