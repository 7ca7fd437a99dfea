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
#endif
