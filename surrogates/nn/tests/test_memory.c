/* test_memory.c -- the storage counters are exact, and backward releases
 * intermediates as it passes them: after backward the memory held by a
 * still-alive loss is back near the inputs' size, and the peak during
 * backward stays within a few activations of the forward's footprint. */
#include "testutil.h"

int main(int argc, char **argv)
{
  SgnnBackend *be = t_backend(argc, argv);
  size_t base = sgnn_mem_current(be);
  int s[2] = {256, 256};
  size_t bytes = 256 * 256 * 8;
  SgnnTensor x;
  OK(sgnn_tensor_zeros(be, SGNN_F64, 2, s, &x));
  CHECK(sgnn_mem_current(be) - base == bytes, "allocation counted exactly: %zu", sgnn_mem_current(be) - base);
  OK(sgnn_tensor_fill(x, 0.1));
  OK(sgnn_tensor_set_requires_grad(x, 1));

  /* a chain of 20 tanh's; the caller drops each handle at once, so only the
   * graph keeps what backward needs (tanh saves its output) */
  const int L = 20;
  SgnnTensor h = sgnn_tensor_ref(x), loss;
  for (int i = 0; i < L; i++) {
    SgnnTensor t;
    OK(sgnn_tanh(h, &t));
    sgnn_tensor_free(&h);
    h = t;
  }
  OK(sgnn_sum(h, 0, NULL, 0, &loss));
  sgnn_tensor_free(&h);
  size_t held = sgnn_mem_current(be) - base;
  CHECK(held >= (size_t)(L + 1) * bytes && held < (size_t)(L + 2) * bytes,
        "forward graph holds input + %d activations: %.1f activations", L, (double)held / bytes);
  sgnn_mem_reset_peak(be);
  OK(sgnn_backward(loss));
  size_t after = sgnn_mem_current(be) - base, peak = sgnn_mem_peak(be) - base;
  /* left: x, x.grad (and a few bytes for the loss) */
  CHECK(after < 2 * bytes + 4096, "after backward only input and its grad remain: %.2f activations", (double)after / bytes);
  /* at most two gradient buffers are alive next to the shrinking graph */
  CHECK(peak <= held + 2 * bytes, "backward peak %.1f activations over a forward of %.1f", (double)peak / bytes,
        (double)held / bytes);
  sgnn_tensor_free(&loss);

  /* create_graph keeps the forward graph: a second differentiation works */
  SgnnTensor y, l2, g, gs;
  OK(sgnn_tanh(x, &y));
  OK(sgnn_sum(y, 0, NULL, 0, &l2));
  OK(sgnn_grad(1, &l2, NULL, 1, &x, 1, &g));
  OK(sgnn_sum(g, 0, NULL, 0, &gs));
  SgnnTensor hx;
  OK(sgnn_grad(1, &gs, NULL, 1, &x, 0, &hx));
  double v[1];
  int one[1] = {0};
  (void)one;
  double *hv = malloc(bytes);
  OK(sgnn_tensor_to_f64(hx, hv));
  v[0] = hv[0];
  double t = tanh(0.1);
  CHECK(fabs(v[0] - (-2 * t * (1 - t * t))) < 1e-15, "second derivative of tanh through the kept graph: %g", v[0]);
  free(hv);
  SgnnTensor *all[] = {&y, &l2, &g, &gs, &hx, &x};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) sgnn_tensor_free(all[i]);
  CHECK(sgnn_mem_current(be) == base, "everything released: %zu bytes left", sgnn_mem_current(be) - base);
  return t_summary("test_memory");
}
