/* sgnn_op.h -- the engine's public interface for ops defined outside it.
 *
 * An op whose backward cannot be composed from public ops (surrogates/parallel's
 * halo exchange and allreduce talk to other ranks in backward) records its own
 * node on the tape. This header is all such an op may use: node recording and
 * saved tensors, uninitialised results and views, and the engine's error
 * reporting. The engine's structures stay private (sgnn_impl.h, included only
 * inside surrogates/nn; tests/unit/core/layering.py enforces it). */
#ifndef SGNN_OP_H
#define SGNN_OP_H

#include "sgnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors: set the message sgnn_last_error() returns, return code -------- */
int sgnn_seterr(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define SGNN_CHECK(cond, code, ...)                                                                     \
  do {                                                                                                \
    if (!(cond)) return sgnn_seterr((code), __VA_ARGS__);                                              \
  } while (0)
#define SGNN_TRY(call)                                                                                  \
  do {                                                                                                \
    int sgnn_rc_ = (call);                                                                            \
    if (sgnn_rc_) return sgnn_rc_;                                                                    \
  } while (0)

/* shape to text for messages (a small rotating set of static buffers) */
const char *sgnn_shape_str(int ndim, const int *shape);

/* ---- results ---------------------------------------------------------------- */
/* a fresh tensor on backend be (zeroed if zero), or a view of base's storage */
int sgnn_tensor_new(SgnnBackend *be, SgnnDType dt, int ndim, const int *shape, int zero, SgnnTensor *out);
int sgnn_tensor_view(SgnnTensor base, long offset, int ndim, const int *shape, SgnnTensor *out);

/* ---- the tape ------------------------------------------------------------ */
typedef struct SgnnNode SgnnNode;
/* Compute gin[i] for inputs with need[i]; g is the gradient of the output.
 * Runs with recording on iff create_graph, so a backward written with sgnn_*
 * ops is itself differentiable. */
typedef int (*SgnnBackwardFn)(SgnnNode *n, SgnnTensor g, const int *need, SgnnTensor *gin, int create_graph);
/* Attach a node to a fresh result if recording and any input needs grad.
 * Returns the node (to save tensors on) or NULL. */
SgnnNode *sgnn_record(SgnnTensor out, const char *name, int nin, SgnnTensor *in, SgnnBackwardFn bw);
void sgnn_node_save(SgnnNode *n, int slot, SgnnTensor t);
/* what backward reads: a saved tensor (borrowed), the shape of input i */
SgnnTensor sgnn_node_saved(SgnnNode *n, int slot);
const int *sgnn_node_in_shape(SgnnNode *n, int i);

#ifdef __cplusplus
}
#endif
#endif
