/* backend_cudaload.c -- "cuda" in the library every program links. The CUDA backend
 * (backend_cuda.cu) is a plugin, libsgnn_cuda.so, built where nvcc and cuBLAS exist, and opened
 * here on the first request for "cuda". Why not linked into the programs: cuBLAS and the CUDA
 * runtime cost every process about 0.3 s and 210 MB of resident memory at start (a program that
 * links them and returns at once, measured on this project's 2-core machine), and a binary linked
 * with them does not start at all on a node without them. Opened on demand, only a run that asks
 * for cuda pays, and one on a node without CUDA is told why.
 * Found by the dynamic linker's search from the calling program: its RUNPATH (the Makefile sets
 * $ORIGIN/../lib for an installed surge and the build tree's plugin folder), LD_LIBRARY_PATH, or
 * the path in SGNN_CUDA_PLUGIN. */
#include "sgnn_impl.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static int state; /* 0 not tried, 1 ready, -1 unusable */
static SgnnBackend *cuda_be;
static char why[768];

SgnnBackend *sgnn_backend_cuda(void)
{
  if (state == 0) {
    const char *path = getenv("SGNN_CUDA_PLUGIN");
    void *h;
    state = -1;
    if (!path || !path[0]) path = "libsgnn_cuda.so";
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      if (e && strstr(e, "No such file"))
        snprintf(why, sizeof why, "this build has no CUDA backend (%s not found: it is built when configure finds nvcc and cuBLAS)", path);
      else snprintf(why, sizeof why, "the CUDA backend %s cannot be loaded: %s", path, e ? e : "(no reason given)");
    } else {
      SgnnCudaPluginOpen open_fn;
      const char *w = "the plugin gave no reason";
      *(void **)&open_fn = dlsym(h, "sgnn_cuda_plugin_open");
      if (!open_fn) snprintf(why, sizeof why, "%s is not surge's CUDA backend (no sgnn_cuda_plugin_open)", path);
      else if ((cuda_be = open_fn(SGNN_CUDA_PLUGIN_ABI, sgnn_seterr, &w))) state = 1;
      else snprintf(why, sizeof why, "%s", w);
    }
  }
  return state == 1 ? cuda_be : NULL;
}

const char *sgnn_cuda_unavailable_reason(void) { return state == 1 ? "" : why; }
