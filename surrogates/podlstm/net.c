/* An architecture of the search space as a network of the NN engine.

   Node 0 is the input sequence [B, L, K]. Layer i maps node i-1 to its output o_i: an LSTM (the
   engine's fused cell, PyTorch gate order, one bias, zero initial state) returning all L hidden
   states, or the identity. Node i is o_i, or, with skip connections, ReLU(o_i + sum_s P_s node_s)
   with a linear projection P_s (no bias) of each skip source to o_i's width -- DeepHyper's
   "AddByProjecting" merge of the paper's search space. The head (sgpodlstm.h) maps the last node to
   the L x K outputs: per step (output step t depends on input steps <= t) or from the whole window. */
#include "sgpodlstm.h"
#include "sgtrainer.h" /* SgCallNN */

const char *const SgPodLstmHeads[] = {"step", "window"};

static PetscErrorCode AddParam(SgPodLstmNet n, const char *fmt, PetscInt i, int r, int c, SgnnTensor *t)
{
  char name[64];
  int  shape[2] = {r, c};

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof name, fmt, i));
  SgCallNN(sgnn_params_add(n->P, name, c ? 2 : 1, shape, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetCreate(const SgPodLstmArch *a, PetscInt K, PetscInt L, SgPodLstmHead head, SgnnBackend *be, SgnnDType dt, SgPodLstmNet *out)
{
  SgPodLstmNet n;

  PetscFunctionBegin;
  PetscCall(SgPodLstmArchCheck(PETSC_COMM_SELF, a));
  PetscCall(PetscNew(&n));
  n->arch = *a;
  n->K = K;
  n->L = L;
  n->head = head;
  n->be = be;
  n->dt = dt;
  SgCallNN(sgnn_params_create(be, dt, &n->P));
  n->width[0] = K;
  for (PetscInt i = 1; i <= a->nlayers; i++) {
    PetscInt H = a->units[i - 1], In = n->width[i - 1];
    n->width[i] = H ? H : In;
    if (H) {
      PetscCall(AddParam(n, "lstm%d.Wih", i, (int)(4 * H), (int)In, &n->Wih[i - 1]));
      PetscCall(AddParam(n, "lstm%d.Whh", i, (int)(4 * H), (int)H, &n->Whh[i - 1]));
      PetscCall(AddParam(n, "lstm%d.b", i, (int)(4 * H), 0, &n->b[i - 1]));
    }
    for (PetscInt s = 0; s < SG_PODLSTM_NSKIP; s++)
      if (a->skip[i - 1] >> s & 1) {
        char fmt[32];
        PetscCall(PetscSNPrintf(fmt, sizeof fmt, "skip%%d.from%d", (int)(i - 2 - s)));
        PetscCall(AddParam(n, fmt, i, (int)n->width[i], (int)n->width[i - 2 - s], &n->proj[i - 1][s]));
      }
  }
  if (head == SG_PODLSTM_HEAD_STEP) {
    PetscCall(AddParam(n, "out.W%d", 0, (int)K, (int)n->width[a->nlayers], &n->Wout));
    PetscCall(AddParam(n, "out.b%d", 0, (int)K, 0, &n->bout));
  } else {
    PetscCall(AddParam(n, "out.W%d", 1, (int)(L * K), (int)(L * n->width[a->nlayers]), &n->Wout));
    PetscCall(AddParam(n, "out.b%d", 1, (int)(L * K), 0, &n->bout));
  }
  SgCallNN(sgnn_params_setup(n->P));
  *out = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetInit(SgPodLstmNet n, unsigned long long seed)
{
  SgnnRng r;

  PetscFunctionBegin;
  sgnn_rng_init(&r, seed);
  for (PetscInt i = 0; i < n->arch.nlayers; i++) {
    PetscInt H = n->arch.units[i];
    if (H) {
      PetscReal bound = 1 / PetscSqrtReal((PetscReal)H), *b;
      SgCallNN(sgnn_init_uniform(n->Wih[i], -bound, bound, &r));
      SgCallNN(sgnn_init_uniform(n->Whh[i], -bound, bound, &r));
      SgCallNN(sgnn_init_uniform(n->b[i], -bound, bound, &r));
      PetscCall(PetscMalloc1(4 * H, &b));
      SgCallNN(sgnn_tensor_to_f64(n->b[i], b));
      for (PetscInt k = H; k < 2 * H; k++) b[k] += 1; /* forget gate: remember by default */
      SgCallNN(sgnn_tensor_set_f64(n->b[i], b));
      PetscCall(PetscFree(b));
    }
    for (PetscInt s = 0; s < SG_PODLSTM_NSKIP; s++)
      if (n->proj[i][s]) SgCallNN(sgnn_init_xavier_uniform(n->proj[i][s], 1.0, &r));
  }
  SgCallNN(sgnn_init_xavier_uniform(n->Wout, 1.0, &r));
  SgCallNN(sgnn_tensor_fill(n->bout, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x [B, L, I] -> all hidden states [B, L, H] of one LSTM layer */
static PetscErrorCode LstmSequence(SgPodLstmNet n, PetscInt i, SgnnTensor x, SgnnTensor *out)
{
  const int  B = sgnn_tensor_shape(x)[0], L = sgnn_tensor_shape(x)[1], In = sgnn_tensor_shape(x)[2], H = (int)n->arch.units[i];
  int        s2[2] = {B, H}, s2i[2] = {B, In}, s3[3] = {B, 1, H};
  SgnnTensor h, c, hs[64];

  PetscFunctionBegin;
  PetscCheck(L <= 64, PETSC_COMM_SELF, PETSC_ERR_SUP, "podlstm: windows of at most 64 steps (got %d)", L);
  SgCallNN(sgnn_tensor_zeros(n->be, n->dt, 2, s2, &h));
  SgCallNN(sgnn_tensor_zeros(n->be, n->dt, 2, s2, &c));
  for (int t = 0; t < L; t++) {
    SgnnTensor xs, xt, h2, c2;
    SgCallNN(sgnn_slice(x, 1, t, t + 1, &xs));
    SgCallNN(sgnn_reshape(xs, 2, s2i, &xt));
    SgCallNN(sgnn_lstm_cell(xt, h, c, n->Wih[i], n->Whh[i], n->b[i], &h2, &c2));
    sgnn_tensor_free(&xs);
    sgnn_tensor_free(&xt);
    sgnn_tensor_free(&h);
    sgnn_tensor_free(&c);
    h = h2;
    c = c2;
    SgCallNN(sgnn_reshape(h, 3, s3, &hs[t]));
  }
  SgCallNN(sgnn_concat(L, hs, 1, out));
  for (int t = 0; t < L; t++) sgnn_tensor_free(&hs[t]);
  sgnn_tensor_free(&h);
  sgnn_tensor_free(&c);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a linear map of every step: x [B, L, I], W [O, I] -> [B, L, O] */
static PetscErrorCode StepLinear(SgnnTensor x, SgnnTensor W, SgnnTensor bias, SgnnTensor *out)
{
  const int  B = sgnn_tensor_shape(x)[0], L = sgnn_tensor_shape(x)[1], In = sgnn_tensor_shape(x)[2], O = sgnn_tensor_shape(W)[0];
  int        f[2] = {B * L, In}, s3[3] = {B, L, O};
  SgnnTensor xf, y;

  PetscFunctionBegin;
  SgCallNN(sgnn_reshape(x, 2, f, &xf));
  SgCallNN(sgnn_linear(xf, W, bias, &y));
  SgCallNN(sgnn_reshape(y, 3, s3, out));
  sgnn_tensor_free(&xf);
  sgnn_tensor_free(&y);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetForward(SgPodLstmNet n, SgnnTensor x, SgnnTensor *y)
{
  SgnnTensor node[SG_PODLSTM_MAXLAYERS + 1] = {NULL};

  PetscFunctionBegin;
  PetscCheck(sgnn_tensor_ndim(x) == 3 && sgnn_tensor_shape(x)[2] == n->K, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "podlstm: network input must be [B, L, %" PetscInt_FMT "]", n->K);
  node[0] = sgnn_tensor_ref(x);
  for (PetscInt i = 0; i < n->arch.nlayers; i++) {
    SgnnTensor o;
    if (n->arch.units[i]) PetscCall(LstmSequence(n, i, node[i], &o));
    else o = sgnn_tensor_ref(node[i]);
    if (n->arch.skip[i]) { /* ReLU(o + sum of projected skip sources) */
      for (PetscInt s = 0; s < SG_PODLSTM_NSKIP; s++)
        if (n->proj[i][s]) {
          SgnnTensor p, sum;
          PetscCall(StepLinear(node[i - 1 - s], n->proj[i][s], NULL, &p));
          SgCallNN(sgnn_add(o, p, &sum));
          sgnn_tensor_free(&o);
          sgnn_tensor_free(&p);
          o = sum;
        }
      SgCallNN(sgnn_relu(o, &node[i + 1]));
      sgnn_tensor_free(&o);
    } else node[i + 1] = o;
  }
  if (n->head == SG_PODLSTM_HEAD_STEP) PetscCall(StepLinear(node[n->arch.nlayers], n->Wout, n->bout, y));
  else { /* [B, L, W] -> [B, L W] -> [B, L K] */
    const int  B = sgnn_tensor_shape(x)[0], L = sgnn_tensor_shape(x)[1];
    int        f[2] = {B, (int)(L * n->width[n->arch.nlayers])}, s3[3] = {B, L, (int)n->K};
    SgnnTensor flat, o;
    PetscCheck(L == n->L, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "podlstm: the window head was built for %" PetscInt_FMT " steps, the input has %d", n->L, L);
    SgCallNN(sgnn_reshape(node[n->arch.nlayers], 2, f, &flat));
    SgCallNN(sgnn_linear(flat, n->Wout, n->bout, &o));
    SgCallNN(sgnn_reshape(o, 3, s3, y));
    sgnn_tensor_free(&flat);
    sgnn_tensor_free(&o);
  }
  for (PetscInt i = 0; i <= n->arch.nlayers; i++) sgnn_tensor_free(&node[i]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* yh + baseW flat(in) + baseb: the base's (affine) forecast of the window `in` added to the network's */
static PetscErrorCode AddBase(SgPodLstmNet n, SgnnTensor in, SgnnTensor yh, SgnnTensor *full)
{
  const int  B = sgnn_tensor_shape(in)[0];
  int        f[2] = {B, (int)(n->L * n->K)}, s3[3] = {B, (int)n->L, (int)n->K};
  SgnnTensor xf, bf, b3;

  PetscFunctionBegin;
  SgCallNN(sgnn_reshape(in, 2, f, &xf));
  SgCallNN(sgnn_linear(xf, n->baseW, n->baseb, &bf));
  SgCallNN(sgnn_reshape(bf, 3, s3, &b3));
  SgCallNN(sgnn_add(yh, b3, full));
  sgnn_tensor_free(&xf);
  sgnn_tensor_free(&bf);
  sgnn_tensor_free(&b3);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetSetPolyBase(SgPodLstmNet n, const SgPodLstmVARModel *V)
{
  PetscFunctionBegin;
  sgnn_tensor_free(&n->baseQW);
  sgnn_tensor_free(&n->baseQb);
  n->baseQp = n->baseQnq = 0;
  if (!V) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(V->K == n->K && V->p >= 1 && V->p <= n->L, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "podlstm: a base of %" PetscInt_FMT " modes and %" PetscInt_FMT " lags for a network of %" PetscInt_FMT " modes and a window of %" PetscInt_FMT, V->K, V->p, n->K, n->L);
  {
    const PetscInt q = 1 + V->p * V->K + V->nq;
    const int      sW[2] = {(int)V->K, (int)(q - 1)}, K = (int)V->K;
    PetscReal     *w, *b;
    PetscCall(PetscMalloc2(V->K * (q - 1), &w, V->K, &b));
    for (PetscInt k = 0; k < V->K; k++) { /* V->W [q][K] column-major: column k is output k */
      b[k] = V->W[k * q];
      for (PetscInt r = 1; r < q; r++) w[k * (q - 1) + r - 1] = V->W[k * q + r];
    }
    SgCallNN(sgnn_tensor_from_f64(n->be, n->dt, 2, sW, w, &n->baseQW));
    SgCallNN(sgnn_tensor_from_f64(n->be, n->dt, 1, &K, b, &n->baseQb));
    PetscCall(PetscFree2(w, b));
  }
  n->baseQp  = V->p;
  n->baseQnq = V->nq;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* yh + the polynomial base iterated L steps from the window `in` [B, L, K] on the tape: each step's
   regressors [x_{t-1}, .., x_{t-p}, x_{t-1}[i] x_{t-1}[j] (i <= j)] (a true input or an earlier
   step of this forecast) through sgnn_linear(baseQW, baseQb): SgPodLstmVARIterate's model */
static PetscErrorCode AddPolyBase(SgPodLstmNet n, SgnnTensor in, SgnnTensor yh, SgnnTensor *full)
{
  const int  B = sgnn_tensor_shape(in)[0], L = (int)n->L, K = (int)n->K, p = (int)n->baseQp;
  const int  s2[2] = {B, K}, sc[3] = {B, K, 1}, sr[3] = {B, 1, K}, sq[2] = {B, K * K}, s3[3] = {B, 1, K};
  SgnnTensor row[128], feat[130], f, o, fc;
  long      *iu = NULL;

  PetscFunctionBegin;
  PetscCheck(L <= 64 && p <= 64, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "podlstm: a polynomial base on the tape takes windows and lags up to 64");
  if (n->baseQnq) { /* the upper triangle of the K x K products, row-major (numpy's triu_indices) */
    PetscCall(PetscMalloc1(n->baseQnq, &iu));
    for (PetscInt i = 0, c = 0; i < K; i++)
      for (PetscInt j = i; j < K; j++) iu[c++] = i * K + j;
  }
  for (int t = 0; t < L; t++) { /* the window's rows as [B, K] */
    SgnnTensor sl;
    SgCallNN(sgnn_slice(in, 1, t, t + 1, &sl));
    SgCallNN(sgnn_reshape(sl, 2, s2, &row[t]));
    sgnn_tensor_free(&sl);
  }
  for (int l = 0; l < L; l++) {
    int nf = 0;
    for (int j = 1; j <= p; j++) feat[nf++] = sgnn_tensor_ref(row[L + l - j]);
    if (n->baseQnq) {
      SgnnTensor c, r, outer, flat;
      SgCallNN(sgnn_reshape(row[L + l - 1], 3, sc, &c));
      SgCallNN(sgnn_reshape(row[L + l - 1], 3, sr, &r));
      SgCallNN(sgnn_mul(c, r, &outer)); /* [B, K, K] by broadcasting */
      SgCallNN(sgnn_reshape(outer, 2, sq, &flat));
      SgCallNN(sgnn_index_select(flat, 1, (long)n->baseQnq, iu, &feat[nf++]));
      sgnn_tensor_free(&c);
      sgnn_tensor_free(&r);
      sgnn_tensor_free(&outer);
      sgnn_tensor_free(&flat);
    }
    SgCallNN(sgnn_concat(nf, feat, 1, &f));
    SgCallNN(sgnn_linear(f, n->baseQW, n->baseQb, &row[L + l]));
    for (int i = 0; i < nf; i++) sgnn_tensor_free(&feat[i]);
    sgnn_tensor_free(&f);
  }
  for (int l = 0; l < L; l++) SgCallNN(sgnn_reshape(row[L + l], 3, s3, &feat[l]));
  SgCallNN(sgnn_concat(L, feat, 1, &o)); /* [B, L, K] */
  SgCallNN(sgnn_add(yh, o, &fc));
  *full = fc;
  for (int l = 0; l < L; l++) sgnn_tensor_free(&feat[l]);
  for (int t = 0; t < 2 * L; t++) sgnn_tensor_free(&row[t]);
  sgnn_tensor_free(&o);
  PetscCall(PetscFree(iu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetRolloutLoss(SgPodLstmNet n, SgnnTensor x, SgnnTensor y, PetscInt R, SgnnTensor *loss)
{
  const int  L = (int)n->L;
  SgnnTensor in = sgnn_tensor_ref(x), total = NULL;

  PetscFunctionBegin;
  PetscCheck(R >= 1 && sgnn_tensor_ndim(y) == 3 && sgnn_tensor_shape(y)[1] == R * L, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "podlstm: a rollout of %" PetscInt_FMT " windows needs targets of %" PetscInt_FMT " steps", R, R * n->L);
  for (PetscInt r = 0; r < R; r++) {
    SgnnTensor yh, yr, d, d2, s, acc;
    PetscCall(SgPodLstmNetForward(n, in, &yh));
    SgCallNN(sgnn_slice(y, 1, (int)r * L, (int)(r + 1) * L, &yr));
    if ((n->baseW || n->baseQW) && R > 1) { /* residual network: the first window's target is the residual;
                                 the forecast fed back is the network's plus the base's of the window fed in */
      SgnnTensor full;
      if (n->baseQW) PetscCall(AddPolyBase(n, in, yh, &full));
      else PetscCall(AddBase(n, in, yh, &full));
      if (r == 0) SgCallNN(sgnn_sub(yh, yr, &d));
      else SgCallNN(sgnn_sub(full, yr, &d));
      sgnn_tensor_free(&yh);
      yh = full;
    } else SgCallNN(sgnn_sub(yh, yr, &d));
    SgCallNN(sgnn_mul(d, d, &d2));
    SgCallNN(sgnn_sum(d2, 0, NULL, 0, &s));
    if (total) {
      SgCallNN(sgnn_add(total, s, &acc));
      sgnn_tensor_free(&total);
      total = acc;
    } else total = sgnn_tensor_ref(s);
    sgnn_tensor_free(&in);
    in = yh; /* the forecast is the next input: the tape keeps the path back through it */
    sgnn_tensor_free(&yr);
    sgnn_tensor_free(&d);
    sgnn_tensor_free(&d2);
    sgnn_tensor_free(&s);
  }
  SgCallNN(sgnn_affine(total, 1.0 / (R * n->L * n->K), 0.0, loss));
  sgnn_tensor_free(&total);
  sgnn_tensor_free(&in);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetPredict(SgPodLstmNet n, PetscInt B, PetscInt L, const PetscReal x[], PetscReal y[])
{
  int        shape[3] = {(int)B, (int)L, (int)n->K};
  int        was      = sgnn_set_grad_enabled(0);
  SgnnTensor xt, yt;

  PetscFunctionBegin;
  SgCallNN(sgnn_tensor_from_f64(n->be, n->dt, 3, shape, x, &xt));
  PetscCall(SgPodLstmNetForward(n, xt, &yt));
  SgCallNN(sgnn_tensor_to_f64(yt, y));
  sgnn_tensor_free(&xt);
  sgnn_tensor_free(&yt);
  sgnn_set_grad_enabled(was);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetNumParams(SgPodLstmNet n, PetscInt *np)
{
  long c;

  PetscFunctionBegin;
  SgCallNN(sgnn_params_count(n->P, &c));
  *np = (PetscInt)c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmNetDestroy(SgPodLstmNet *n)
{
  PetscFunctionBegin;
  if (!*n) PetscFunctionReturn(PETSC_SUCCESS);
  sgnn_tensor_free(&(*n)->baseW);
  sgnn_tensor_free(&(*n)->baseb);
  sgnn_tensor_free(&(*n)->baseQW);
  sgnn_tensor_free(&(*n)->baseQb);
  sgnn_params_destroy(&(*n)->P);
  PetscCall(PetscFree(*n));
  PetscFunctionReturn(PETSC_SUCCESS);
}
