/* tape.c -- reverse-mode autodiff.
 *
 * Every op run while recording appends a node to the tape: a monotonically
 * increasing sequence number plus edges to the nodes (or leaves) of its
 * inputs. Ownership runs from outputs to inputs (a result owns its node, a
 * node its input nodes), so dropping a result frees the part of the tape only
 * it needed. backward() collects the nodes reachable from the outputs and
 * visits them in decreasing sequence number, which is a valid reverse
 * topological order because an op is always recorded after its inputs.
 *
 * Double backward: with create_graph, node backward functions run with
 * recording on. They are written with sgnn_* ops, so the gradient they
 * produce is itself a recorded result that can be differentiated again. */
#include "sgnn_impl.h"
#include <stdlib.h>
#include <string.h>

static _Thread_local int grad_on = 1;
static _Thread_local long seq_counter;
static _Thread_local long mark_counter;
static _Thread_local int record_failed; /* an op result lost its node (OOM) */
static _Thread_local SgnnGradReadyFn ready_fn;
static _Thread_local void *ready_ctx;

void sgnn_set_grad_ready_hook(SgnnGradReadyFn fn, void *ctx)
{
  ready_fn = fn;
  ready_ctx = ctx;
}

/* one contribution to leaf L has been dealt with (accumulated or skipped) */
static void leaf_done(SgnnTensor L)
{
  if (--L->pending == 0 && ready_fn) ready_fn(L, 1, ready_ctx);
}

int sgnn_set_grad_enabled(int on)
{
  int prev = grad_on;
  grad_on = on ? 1 : 0;
  return prev;
}
int sgnn_grad_enabled(void) { return grad_on; }
int sgnn_recording(void) { return grad_on; }

SgnnNode *sgnn_record(SgnnTensor out, const char *name, int nin, SgnnTensor *in, SgnnBackwardFn bw)
{
  int any = 0;
  if (!grad_on) return NULL;
  for (int i = 0; i < nin; i++)
    if (in[i] && in[i]->requires_grad) any = 1;
  if (!any) return NULL;
  SgnnNode *n = calloc(1, sizeof *n);
  if (n) {
    n->edge = calloc((size_t)nin, sizeof *n->edge);
    n->in_ndim = calloc((size_t)nin, sizeof *n->in_ndim);
    n->in_shape = calloc((size_t)nin, sizeof *n->in_shape);
  }
  if (!n || !n->edge || !n->in_ndim || !n->in_shape) {
    /* the result would silently be a constant: remember, so the next
     * backward/grad refuses to return wrong gradients */
    if (n) {
      free(n->edge);
      free(n->in_ndim);
      free(n->in_shape);
      free(n);
    }
    record_failed = 1;
    return NULL;
  }
  n->name = name;
  n->seq = ++seq_counter;
  n->refcount = 1;
  n->nin = nin;
  n->backward = bw;
  n->dtype = out->dtype;
  n->out_ndim = out->ndim;
  memcpy(n->out_shape, out->shape, sizeof n->out_shape);
  for (int i = 0; i < nin; i++) {
    SgnnTensor t = in[i];
    if (!t) continue;
    n->in_ndim[i] = t->ndim;
    memcpy(n->in_shape[i], t->shape, sizeof n->in_shape[i]);
    if (!t->requires_grad) continue;
    if (t->node) {
      n->edge[i].fn = t->node;
      t->node->refcount++;
    } else {
      n->edge[i].leaf = sgnn_tensor_ref(t);
    }
  }
  out->node = n;
  out->requires_grad = 1;
  return n;
}

void sgnn_node_save(SgnnNode *n, int slot, SgnnTensor t)
{
  if (!n) return;
  sgnn_tensor_free(&n->saved[slot]);
  n->saved[slot] = sgnn_tensor_ref(t);
}

SgnnTensor sgnn_node_saved(SgnnNode *n, int slot) { return n && slot >= 0 && slot < SGNN_MAX_SAVED ? n->saved[slot] : NULL; }
const int *sgnn_node_in_shape(SgnnNode *n, int i) { return n && i >= 0 && i < n->nin ? n->in_shape[i] : NULL; }

/* Saving the output itself would be a reference cycle (output -> node ->
 * output). Keep a node-less alias of its data instead and rebuild a
 * differentiable handle on demand (PyTorch's SavedVariable does the same). */
void sgnn_node_save_output(SgnnNode *n, SgnnTensor out)
{
  if (!n) return;
  sgnn_tensor_free(&n->out_alias);
  if (sgnn_tensor_view(out, 0, out->ndim, out->shape, &n->out_alias)) n->out_alias = NULL;
}

SgnnTensor sgnn_node_output(SgnnNode *n, int create_graph)
{
  if (!n->out_alias) return NULL;
  if (!create_graph) return sgnn_tensor_ref(n->out_alias);
  SgnnTensor t;
  if (sgnn_tensor_view(n->out_alias, 0, n->out_alias->ndim, n->out_alias->shape, &t)) return NULL;
  t->node = n;
  n->refcount++;
  t->requires_grad = 1;
  return t;
}

static void node_drop_saved(SgnnNode *n)
{
  for (int i = 0; i < SGNN_MAX_SAVED; i++) sgnn_tensor_free(&n->saved[i]);
  sgnn_tensor_free(&n->out_alias);
  sgnn_index_release(&n->ix);
}

/* Releasing a long chain recursively could overflow the stack (an RNN over
 * many steps); use an explicit work list instead. */
void sgnn_node_release(SgnnNode **np)
{
  SgnnNode *n = *np;
  *np = NULL;
  if (!n || --n->refcount > 0) return;
  size_t cap = 64, top = 0;
  SgnnNode **stack = malloc(cap * sizeof *stack);
  stack[top++] = n;
  while (top) {
    SgnnNode *m = stack[--top];
    for (int i = 0; i < m->nin; i++) {
      sgnn_tensor_free(&m->edge[i].leaf);
      SgnnNode *f = m->edge[i].fn;
      if (f && --f->refcount == 0) {
        if (top == cap) stack = realloc(stack, (cap *= 2) * sizeof *stack);
        stack[top++] = f;
      }
    }
    node_drop_saved(m);
    sgnn_tensor_free(&m->gacc);
    free(m->edge);
    free(m->in_ndim);
    free(m->in_shape);
    free(m);
  }
  free(stack);
}

int sgnn_accumulate(SgnnTensor *acc, SgnnTensor g, int create_graph)
{
  if (!*acc) {
    *acc = sgnn_tensor_ref(g);
    return 0;
  }
  SgnnTensor a = *acc;
  /* in place only when nobody else can see the buffer */
  if (!create_graph && !a->requires_grad && a->refcount == 1 && a->st->refcount == 1 && sgnn_same_shape(a, g)) {
    SgnnIter it;
    sgnn_iter_init(&it, a->ndim, a->shape);
    return sgnn_be(a)->binary(SGNN_B_ADD, a->dtype, &it, sgnn_ptr(a), sgnn_ptr(g), sgnn_ptr(a));
  }
  SgnnTensor s;
  SGNN_TRY(sgnn_add(a, g, &s));
  sgnn_tensor_free(acc);
  *acc = s;
  return 0;
}

static int cmp_seq_desc(const void *x, const void *y)
{
  const SgnnNode *a = *(SgnnNode *const *)x, *b = *(SgnnNode *const *)y;
  return (a->seq < b->seq) - (a->seq > b->seq);
}

/* The engine. Mode A (nin > 0): gradients w.r.t. ins[] returned in grads[].
 * Mode B (nin == 0): accumulate into every reachable leaf's ->grad. */
static int run_backward(int nout, SgnnTensor *outs, SgnnTensor *gouts, int nin, SgnnTensor *ins, int create_graph,
                        SgnnTensor *grads)
{
  int rc = 0, prev = grad_on;
  long mark = ++mark_counter;
  if (record_failed) {
    record_failed = 0;
    return sgnn_seterr(SGNN_ERR_MEM, "backward: an op could not record its graph node (out of memory); "
                                     "gradients would be wrong");
  }
  size_t cap = 64, nn = 0, top = 0, scap = 64;
  SgnnNode **nodes = malloc(cap * sizeof *nodes), **stack = malloc(scap * sizeof *stack);
  SGNN_CHECK(nodes && stack, SGNN_ERR_MEM, "backward: out of memory");

  /* 1. collect reachable nodes */
  for (int j = 0; j < nout; j++) {
    SgnnNode *r = outs[j]->node;
    if (r && r->mark != mark) {
      r->mark = mark;
      stack[top++] = r;
    }
    while (top) {
      SgnnNode *m = stack[--top];
      if (nn == cap) nodes = realloc(nodes, (cap *= 2) * sizeof *nodes);
      nodes[nn++] = m;
      for (int i = 0; i < m->nin; i++) {
        SgnnNode *f = m->edge[i].fn;
        if (f && f->mark != mark) {
          f->mark = mark;
          if (top == scap) stack = realloc(stack, (scap *= 2) * sizeof *stack);
          stack[top++] = f;
        }
      }
    }
  }
  qsort(nodes, nn, sizeof *nodes, cmp_seq_desc);

  /* 2. which nodes lead to a wanted input (inputs first: increasing seq) */
  for (size_t k = nn; k-- > 0;) {
    SgnnNode *m = nodes[k];
    m->needed = 0;
    for (int i = 0; i < m->nin && !m->needed; i++) {
      if (m->edge[i].fn && m->edge[i].fn->needed) m->needed = 1;
      SgnnTensor L = m->edge[i].leaf;
      if (L) {
        if (nin == 0) m->needed = 1;
        for (int q = 0; q < nin; q++)
          if (ins[q] == L) m->needed = 1;
      }
      for (int q = 0; q < nin; q++)
        if (ins[q]->node && ins[q]->node == m->edge[i].fn) m->needed = 1;
    }
  }

  /* leaves' outstanding contributions, for the grad-ready hook */
  if (nin == 0)
    for (size_t k = 0; k < nn; k++)
      for (int i = 0; i < nodes[k]->nin; i++)
        if (nodes[k]->edge[i].leaf) nodes[k]->edge[i].leaf->pending = 0;
  if (nin == 0)
    for (size_t k = 0; k < nn; k++)
      for (int i = 0; i < nodes[k]->nin; i++) {
        SgnnTensor L = nodes[k]->edge[i].leaf;
        if (L && ++L->pending == 1 && ready_fn) ready_fn(L, 0, ready_ctx);
      }

  /* 3. seed */
  grad_on = create_graph;
  for (int j = 0; j < nout; j++) {
    SgnnTensor g = gouts ? gouts[j] : NULL, one = NULL;
    if (!g) {
      SGNN_TRYG(sgnn_tensor_full(sgnn_be(outs[j]), outs[j]->dtype, outs[j]->ndim, outs[j]->shape, 1.0, &one));
      g = one;
    } else if (!sgnn_same_shape(g, outs[j])) {
      rc = sgnn_seterr(SGNN_ERR_SHAPE, "grad: grad_output %s does not match output %s", SHP(g), SHP(outs[j]));
      goto done;
    }
    /* an output that is itself one of the inputs */
    for (int q = 0; q < nin; q++)
      if (ins[q] == outs[j]) SGNN_TRYG(sgnn_accumulate(&grads[q], g, create_graph));
    if (outs[j]->node) rc = sgnn_accumulate(&outs[j]->node->gacc, g, create_graph);
    sgnn_tensor_free(&one);
    if (rc) goto done;
  }

  /* 4. sweep the tape backwards */
  for (size_t k = 0; k < nn; k++) {
    SgnnNode *m = nodes[k];
    SgnnTensor g = m->gacc;
    m->gacc = NULL;
    for (int q = 0; q < nin; q++)
      if (g && ins[q]->node == m) SGNN_TRYG(sgnn_accumulate(&grads[q], g, create_graph));
    if (!g || !m->needed) {
      sgnn_tensor_free(&g);
      if (nin == 0)
        for (int i = 0; i < m->nin; i++)
          if (m->edge[i].leaf) leaf_done(m->edge[i].leaf);
      continue;
    }
    int need_stack[8], *need = m->nin <= 8 ? need_stack : malloc(m->nin * sizeof(int));
    SgnnTensor gin_stack[8] = {0}, *gin = m->nin <= 8 ? gin_stack : calloc(m->nin, sizeof(SgnnTensor));
    for (int i = 0; i < m->nin; i++) {
      SgnnEdge *e = &m->edge[i];
      need[i] = 0;
      if (e->fn) {
        need[i] = e->fn->needed;
        for (int q = 0; q < nin; q++)
          if (ins[q]->node == e->fn) need[i] = 1;
      }
      if (e->leaf) {
        if (nin == 0) need[i] = 1;
        for (int q = 0; q < nin; q++)
          if (ins[q] == e->leaf) need[i] = 1;
      }
    }
    rc = m->backward(m, g, need, gin, create_graph);
    sgnn_tensor_free(&g);
    for (int i = 0; i < m->nin && !rc; i++) {
      if (!need[i] || !gin[i]) continue;
      if (gin[i]->ndim != m->in_ndim[i] || memcmp(gin[i]->shape, m->in_shape[i], sizeof(int) * gin[i]->ndim)) {
        rc = sgnn_seterr(SGNN_ERR_SHAPE, "backward of '%s': gradient %s for input %d of shape %s (engine bug)",
                         m->name, SHP(gin[i]), i, sgnn_shape_str(m->in_ndim[i], m->in_shape[i]));
        break;
      }
      SgnnEdge *e = &m->edge[i];
      if (e->fn) {
        rc = sgnn_accumulate(&e->fn->gacc, gin[i], create_graph);
      } else if (e->leaf && nin == 0) {
        SgnnTensor L = e->leaf;
        if (!L->grad) {
          rc = sgnn_zeros_like(L, &L->grad);
          if (rc) break;
        }
        SgnnIter it;
        sgnn_iter_init(&it, L->ndim, L->shape);
        rc = sgnn_be(L)->binary(SGNN_B_ADD, L->dtype, &it, sgnn_ptr(L->grad), sgnn_ptr(gin[i]), sgnn_ptr(L->grad));
      } else if (e->leaf) {
        for (int q = 0; q < nin && !rc; q++)
          if (ins[q] == e->leaf) rc = sgnn_accumulate(&grads[q], gin[i], create_graph);
      }
    }
    for (int i = 0; i < m->nin; i++) sgnn_tensor_free(&gin[i]);
    if (nin == 0 && !rc)
      for (int i = 0; i < m->nin; i++)
        if (m->edge[i].leaf) leaf_done(m->edge[i].leaf);
    if (need != need_stack) free(need);
    if (gin != gin_stack) free(gin);
    if (rc) goto done;
    /* the node has run: what only it needed can go now, unless the caller
     * asked for a graph (then the recorded backward may need it again) */
    if (!create_graph) node_drop_saved(m);
  }

done:
  grad_on = prev;
  for (size_t k = 0; k < nn; k++) sgnn_tensor_free(&nodes[k]->gacc);
  free(nodes);
  free(stack);
  return rc;
}

int sgnn_backward(SgnnTensor loss)
{
  SGNN_CHECK(loss, SGNN_ERR_ARG, "backward: NULL loss");
  SGNN_CHECK(loss->numel == 1, SGNN_ERR_SHAPE, "backward: loss must have one element, got %s", SHP(loss));
  SGNN_CHECK(loss->node, SGNN_ERR_STATE, "backward: loss %s does not depend on anything that requires grad",
             SHP(loss));
  return run_backward(1, &loss, NULL, 0, NULL, 0, NULL);
}

int sgnn_grad(int nout, SgnnTensor *outs, SgnnTensor *gouts, int nin, SgnnTensor *ins, int create_graph,
              SgnnTensor *grads)
{
  SGNN_CHECK(nout > 0 && outs && nin > 0 && ins && grads, SGNN_ERR_ARG, "grad: empty or NULL arguments");
  for (int j = 0; j < nout; j++) {
    SGNN_CHECK(outs[j], SGNN_ERR_ARG, "grad: output %d is NULL", j);
    if (gouts && gouts[j]) SGNN_TRY(sgnn_check_pair("grad", outs[j], gouts[j]));
  }
  for (int q = 0; q < nin; q++) {
    SGNN_CHECK(ins[q], SGNN_ERR_ARG, "grad: input %d is NULL", q);
    SGNN_CHECK(ins[q]->requires_grad, SGNN_ERR_STATE, "grad: input %d %s does not require grad", q, SHP(ins[q]));
    grads[q] = NULL;
  }
  int rc = run_backward(nout, outs, gouts, nin, ins, create_graph, grads);
  for (int q = 0; q < nin && !rc; q++)
    if (!grads[q]) rc = sgnn_zeros_like(ins[q], &grads[q]);
  if (rc)
    for (int q = 0; q < nin; q++) sgnn_tensor_free(&grads[q]);
  return rc;
}
