/* backend_nocuda.c -- linked when the library is built without nvcc, so that
 * asking for "cuda" fails with a clear message instead of a link error. */
#include "sgnn_impl.h"
SgnnBackend *sgnn_backend_cuda(void) { return NULL; }
