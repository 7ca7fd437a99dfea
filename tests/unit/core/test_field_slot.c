/* The field slot kinds field.superres and field.advance (sgfield.h) through SgSlot (sgslot.h), with toy
   providers whose answers are known exactly:
     field.superres  solver g_c(t, z, x) = c + t + 2 z + 3 x at every query point, surrogate 1.5 g
     field.advance   solver: each next snapshot = last + (t_next - t_last), surrogate: + 2 (t_next - t_last)
   and a scripted uncertainty per call and per rank. Checks, for both kinds: who serves each call under
   the static, schedule and adaptive policies (the adaptive decision is global over ranks), the flags,
   the counts, the switch flag of every call, rejection of NaN answers, the one-call "surrogate
   unavailable" hold, check_every, the state round trip (a slot restored from SgSlotGetState continues
   exactly as the uninterrupted one), the refusals (adaptive without an estimate, a call of the wrong
   kind), and a surrogate type serving field.superres through SgSurrogate (SgFieldSuperresProviderCreate).
   Exact comparisons: the providers are sums and products of small binary fractions (no round-off). */
#include "sgslot.h"
#include "sgsurrogateimpl.h"

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_PLIB, __VA_ARGS__); \
  } while (0)

typedef struct {
  const PetscReal *dev; /* uncertainty of call k on this rank */
  PetscInt         k, nan_at, nunc;
} Ctx;

/* ---------- field.superres toys ---------- */
static PetscReal G(PetscInt c, const PetscReal pt[3]) { return (PetscReal)c + pt[0] + 2 * pt[1] + 3 * pt[2]; }

static PetscErrorCode SrSolver(void *ctx, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  PetscInt n = SgFieldQueryCount(in->query);
  (void)ctx;
  for (PetscInt q = 0; q < n; q++) {
    PetscReal pt[3];
    SgFieldQueryPoint(in->query, q, pt);
    for (PetscInt c = 0; c < in->coarse->nch; c++) out->v[c * n + q] = G(c, pt);
  }
  return PETSC_SUCCESS;
}

static PetscErrorCode SrSurrogate(void *ctx, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  Ctx     *x = (Ctx *)ctx;
  PetscInt n = SgFieldQueryCount(in->query);
  for (PetscInt q = 0; q < n; q++) {
    PetscReal pt[3];
    SgFieldQueryPoint(in->query, q, pt);
    for (PetscInt c = 0; c < in->coarse->nch; c++) out->v[c * n + q] = 1.5 * G(c, pt);
  }
  if (x->k == x->nan_at) out->v[n - 1] = NAN;
  return PETSC_SUCCESS;
}

static PetscErrorCode SrUncertainty(void *ctx, const SgFieldSuperresInput *in, PetscReal *u)
{
  Ctx *x = (Ctx *)ctx;
  (void)in;
  *u = x->dev[x->k];
  x->nunc++;
  return PETSC_SUCCESS;
}

/* ---------- field.advance toys ---------- */
static PetscErrorCode AdvStep(const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out, PetscReal rate)
{
  const SgFieldBlock *h = in->history;
  PetscInt            nsp = h->n[1] * h->n[2], H = h->n[0];
  PetscReal           tl = h->coord[0][H - 1];
  for (PetscInt c = 0; c < h->nch; c++)
    for (PetscInt k = 0; k < in->nnext; k++)
      for (PetscInt i = 0; i < nsp; i++) out->v[(c * in->nnext + k) * nsp + i] = h->v[(c * H + H - 1) * nsp + i] + rate * (in->tnext[k] - tl);
  return PETSC_SUCCESS;
}
static PetscErrorCode AdvSolver(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  (void)ctx;
  return AdvStep(in, out, 1);
}
static PetscErrorCode AdvSurrogate(void *ctx, const SgFieldAdvanceInput *in, SgFieldAdvanceOutput *out)
{
  Ctx *x = (Ctx *)ctx;
  PetscCall(AdvStep(in, out, 2));
  if (x->k == x->nan_at) out->v[0] = INFINITY;
  return PETSC_SUCCESS;
}
static PetscErrorCode AdvUncertainty(void *ctx, const SgFieldAdvanceInput *in, PetscReal *u)
{
  Ctx *x = (Ctx *)ctx;
  (void)in;
  *u = x->dev[x->k];
  x->nunc++;
  return PETSC_SUCCESS;
}

/* ---------- one toy problem of each kind ---------- */
static const char *const chan[2] = {"b", "w"};
static const PetscReal   tco[2] = {0.5, 1.0}, zco[2] = {0.25, 0.75}, xco[4] = {0, 1, 2, 3};
static const PetscReal   qpts[3 * 3] = {0.5, 0.25, 0, 0.75, 0.5, 1.5, 1.0, 0.75, 3.25};

/* Call k of the slot (either kind): returns who served, the flag, and checks the values are exactly
   the server's. `avail` false holds the surrogate back for this call. */
static PetscErrorCode Call(SgSlot slot, Ctx *c, PetscInt k, PetscBool avail, PetscInt *served, PetscInt *flagged, PetscInt *switched)
{
  const char *kind;
  PetscBool   s, fl, sw, rej;
  PetscReal   v[64];

  PetscFunctionBegin;
  c->k = k;
  PetscCall(SgSlotSetStep(slot, k));
  if (!avail) PetscCall(SgSlotSetSurrogateAvailable(slot, PETSC_FALSE, "history too short (test)"));
  PetscCall(SgSlotGetName(slot, &kind));
  if (!strcmp(kind, "field.superres")) {
    PetscReal            block[2 * 2 * 2 * 4];
    SgFieldBlock         b = {2, chan, {2, 2, 4}, {tco, zco, xco}, {0, 0, 0}, {0, 1, 4}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, block};
    SgFieldQuery         q = {PETSC_FALSE, 3, qpts, {0, 0, 0}, {NULL, NULL, NULL}};
    SgFieldSuperresInput in = {&b, &q};
    SgFieldSuperresOutput out = {v};
    for (PetscInt i = 0; i < 32; i++) block[i] = i;
    PetscCall(SgSlotFieldSuperres(slot, &in, &out));
    PetscCall(SgSlotGetLastCall(slot, &s, &fl, NULL));
    for (PetscInt ch = 0; ch < 2; ch++)
      for (PetscInt p = 0; p < 3; p++) CHECK(v[ch * 3 + p] == (s ? 1.5 : 1.0) * G(ch, &qpts[3 * p]), "superres call %" PetscInt_FMT ": value %g is not the %s's", k, (double)v[ch * 3 + p], s ? "surrogate" : "solver");
  } else {
    PetscReal           hist[2 * 2 * 2 * 4], tn[3] = {1.5, 2.0, 2.5};
    SgFieldBlock        h = {2, chan, {2, 2, 4}, {tco, zco, xco}, {0, 0, 0}, {0, 1, 4}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, hist};
    SgFieldAdvanceInput in = {&h, 3, tn};
    SgFieldAdvanceOutput out = {v};
    for (PetscInt i = 0; i < 32; i++) hist[i] = i;
    PetscCall(SgSlotFieldAdvance(slot, &in, &out));
    PetscCall(SgSlotGetLastCall(slot, &s, &fl, NULL));
    for (PetscInt ch = 0; ch < 2; ch++)
      for (PetscInt n = 0; n < 3; n++)
        for (PetscInt i = 0; i < 8; i++) {
          PetscReal want = hist[(ch * 2 + 1) * 8 + i] + (s ? 2 : 1) * (tn[n] - 1.0);
          CHECK(v[(ch * 3 + n) * 8 + i] == want, "advance call %" PetscInt_FMT ": value %g is not the %s's (%g)", k, (double)v[(ch * 3 + n) * 8 + i], s ? "surrogate" : "solver", (double)want);
        }
  }
  PetscCall(SgSlotGetLastSwitch(slot, &sw, &rej));
  *served = s;
  *flagged = fl;
  *switched = sw;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NewSlot(const char kind[], Ctx *c, PetscBool with_unc, SgSlot *slot)
{
  PetscFunctionBegin;
  PetscCall(SgSlotCreate(kind, slot));
  if (!strcmp(kind, "field.superres")) {
    PetscCall(SgSlotSetFieldSuperresProvider(*slot, "fine", SrSolver, c));
    PetscCall(SgSlotSetFieldSuperresSurrogate(*slot, "toy", SrSurrogate, with_unc ? SrUncertainty : NULL, c));
  } else {
    PetscCall(SgSlotSetFieldAdvanceProvider(*slot, "stepper", AdvSolver, c));
    PetscCall(SgSlotSetFieldAdvanceSurrogate(*slot, "toy", AdvSurrogate, with_unc ? AdvUncertainty : NULL, c));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every policy on one kind. */
static PetscErrorCode TestKind(const char kind[], PetscMPIInt rank, PetscMPIInt size)
{
  /* rank 0's and rank 1's uncertainties: they differ at call 4, where only rank 1 is unsure */
  const PetscReal dev0[10] = {0.01, 0.10, 0.30, 0.01, 0.01, 0.01, 0.01, 0.01, 0.30, 0.01};
  const PetscReal dev1[10] = {0.01, 0.10, 0.30, 0.01, 0.40, 0.01, 0.01, 0.01, 0.30, 0.01};
  Ctx             c = {.dev = rank ? dev1 : dev0, .nan_at = -1};
  SgSlot          slot;
  PetscInt        served[10], flagged[10], switched[10], ns, nu, nsw, nrej;
  char            pre[64];

  PetscFunctionBegin;
  /* static: the surrogate serves every call; one call held back (unavailable) goes to the solver,
     two switches (there and back) */
  PetscCall(NewSlot(kind, &c, PETSC_TRUE, &slot));
  PetscCall(PetscSNPrintf(pre, sizeof pre, "st_%c_", kind[6]));
  PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
  PetscCall(SgSlotSetPolicy(slot, SG_SWAP_STATIC, PETSC_TRUE, 0, 0, 0, 1e3));
  for (PetscInt k = 0; k < 4; k++) PetscCall(Call(slot, &c, k, k != 2, &served[k], &flagged[k], &switched[k]));
  for (PetscInt k = 0; k < 4; k++) CHECK(served[k] == (k != 2) && switched[k] == (k >= 2), "%s static: call %" PetscInt_FMT " served %" PetscInt_FMT " switched %" PetscInt_FMT, kind, k, served[k], switched[k]);
  PetscCall(SgSlotGetCounts(slot, &ns, &nu, &nsw, &nrej));
  CHECK(ns == 1 && nu == 3 && nsw == 2 && nrej == 0 && c.nunc == 0, "%s static counts %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " (uncertainty evaluated %" PetscInt_FMT " times)", kind, ns, nu, nsw, nrej, c.nunc);
  PetscCall(SgSlotDestroy(&slot));

  /* schedule: the solver until step 3 */
  PetscCall(NewSlot(kind, &c, PETSC_FALSE, &slot));
  PetscCall(PetscSNPrintf(pre, sizeof pre, "sc_%c_", kind[6]));
  PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
  PetscCall(SgSlotSetPolicy(slot, SG_SWAP_SCHEDULE, PETSC_FALSE, 3, 0, 0, 1e3));
  for (PetscInt k = 0; k < 6; k++) PetscCall(Call(slot, &c, k, PETSC_TRUE, &served[k], &flagged[k], &switched[k]));
  for (PetscInt k = 0; k < 6; k++) CHECK(served[k] == (k >= 3) && switched[k] == (k == 3) && !flagged[k], "%s schedule: call %" PetscInt_FMT, kind, k);
  PetscCall(SgSlotGetCounts(slot, &ns, &nu, &nsw, &nrej));
  CHECK(ns == 3 && nu == 3 && nsw == 1 && nrej == 0, "%s schedule counts %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT, kind, ns, nu, nsw, nrej);
  PetscCall(SgSlotDestroy(&slot));

  /* adaptive, trust band [0.05, 0.15]: sure -> surrogate; band -> surrogate flagged; unsure -> solver
     flagged; call 4 is unsure on rank 1 only, so every rank uses the solver there; NaN at call 6 ->
     rejected, the solver serves, flagged. Run 0..9 uninterrupted, then 0..4 + state + 5..9 on a new
     slot: the same servers, flags, switches and counts. */
  {
    const PetscInt want1[10] = {1, 1, 0, 1, 0, 1, 0, 1, 0, 1}, want_single[10] = {1, 1, 0, 1, 1, 1, 0, 1, 0, 1};
    const PetscInt flag1[10] = {0, 1, 1, 0, 1, 0, 1, 0, 1, 0}, flag_single[10] = {0, 1, 1, 0, 0, 0, 1, 0, 1, 0};
    const PetscInt *want = size > 1 ? want1 : want_single, *flag = size > 1 ? flag1 : flag_single;
    PetscInt        counts[2][4], srv2[10], flg2[10], sw2[10];
    PetscReal       state[SG_SLOT_NSTATE];
    for (int pass = 0; pass < 2; pass++) {
      c.nan_at = 6;
      PetscCall(NewSlot(kind, &c, PETSC_TRUE, &slot));
      PetscCall(PetscSNPrintf(pre, sizeof pre, "ad_%c_", kind[6]));
      PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
      PetscCall(SgSlotSetPolicy(slot, SG_SWAP_ADAPTIVE, PETSC_FALSE, 0, 0.05, 0.15, 1e3));
      for (PetscInt k = 0; k < 10; k++) {
        if (pass == 1 && k == 5) { /* checkpoint and restart into a fresh slot */
          PetscCall(SgSlotGetState(slot, state));
          PetscCall(SgSlotDestroy(&slot));
          PetscCall(NewSlot(kind, &c, PETSC_TRUE, &slot));
          PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
          PetscCall(SgSlotSetPolicy(slot, SG_SWAP_ADAPTIVE, PETSC_FALSE, 0, 0.05, 0.15, 1e3));
          PetscCall(SgSlotSetState(slot, state));
        }
        PetscCall(Call(slot, &c, k, PETSC_TRUE, pass ? &srv2[k] : &served[k], pass ? &flg2[k] : &flagged[k], pass ? &sw2[k] : &switched[k]));
      }
      PetscCall(SgSlotGetCounts(slot, &counts[pass][0], &counts[pass][1], &counts[pass][2], &counts[pass][3]));
      PetscCall(SgSlotDestroy(&slot));
    }
    for (PetscInt k = 0; k < 10; k++) {
      CHECK(served[k] == want[k], "%s adaptive: call %" PetscInt_FMT " served by %s", kind, k, served[k] ? "surrogate" : "solver");
      CHECK(flagged[k] == flag[k], "%s adaptive: call %" PetscInt_FMT " flag %" PetscInt_FMT ", expected %" PetscInt_FMT, kind, k, flagged[k], flag[k]);
      CHECK(switched[k] == (k > 0 && want[k] != want[k - 1]), "%s adaptive: call %" PetscInt_FMT " switch flag %" PetscInt_FMT, kind, k, switched[k]);
      CHECK(srv2[k] == served[k] && flg2[k] == flagged[k] && sw2[k] == switched[k], "%s adaptive: the restored slot differs at call %" PetscInt_FMT, kind, k);
    }
    CHECK(counts[0][3] == 1 && counts[0][2] == (size > 1 ? 8 : 6) && counts[0][0] + counts[0][1] == 10, "%s adaptive counts: solver %" PetscInt_FMT " surrogate %" PetscInt_FMT " switches %" PetscInt_FMT " rejected %" PetscInt_FMT, kind, counts[0][0], counts[0][1], counts[0][2], counts[0][3]);
    for (int q = 0; q < 4; q++) CHECK(counts[1][q] == counts[0][q], "%s adaptive: count %d of the restored slot %" PetscInt_FMT " != %" PetscInt_FMT, kind, q, counts[1][q], counts[0][q]);
  }

  /* adaptive with check_every 3: the uncertainty at steps 0, 3, 6, 9 only; restored mid-way (after call
     4) the slot keeps the decision of the check at step 3 */
  {
    const PetscReal devc[10] = {0.01, 0.30, 0.30, 0.01, 0.40, 0.01, 0.30, 0.01, 0.01, 0.01};
    const PetscInt  want[10] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 1};
    PetscReal       state[SG_SLOT_NSTATE];
    c.dev = devc;
    c.nan_at = -1;
    c.nunc = 0;
    PetscCall(NewSlot(kind, &c, PETSC_TRUE, &slot));
    PetscCall(PetscSNPrintf(pre, sizeof pre, "ev_%c_", kind[6]));
    PetscCall(PetscOptionsSetValue(NULL, "-ev_a_swap_policy", "adaptive")); /* both kinds' prefixes: ev_a_ (field.advance) ... */
    PetscCall(PetscOptionsSetValue(NULL, "-ev_s_swap_policy", "adaptive")); /* ... and ev_s_ (field.superres) */
    PetscCall(PetscOptionsSetValue(NULL, "-ev_a_swap_check_every", "3"));
    PetscCall(PetscOptionsSetValue(NULL, "-ev_s_swap_check_every", "3"));
    PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
    for (PetscInt k = 0; k < 10; k++) {
      if (k == 5) {
        PetscCall(SgSlotGetState(slot, state));
        PetscCall(SgSlotDestroy(&slot));
        PetscCall(NewSlot(kind, &c, PETSC_TRUE, &slot));
        PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, pre));
        PetscCall(SgSlotSetState(slot, state));
      }
      PetscCall(Call(slot, &c, k, PETSC_TRUE, &served[k], &flagged[k], &switched[k]));
      CHECK(served[k] == want[k], "%s check_every: call %" PetscInt_FMT " served by %s", kind, k, served[k] ? "surrogate" : "solver");
    }
    CHECK(c.nunc == 4, "%s check_every 3 over 10 calls: %" PetscInt_FMT " uncertainty evaluations, expected 4", kind, c.nunc);
    PetscCall(SgSlotDestroy(&slot));
  }

  /* adaptive without an uncertainty estimate is refused (a user error); a call of the other kind is an error */
  PetscCall(NewSlot(kind, &c, PETSC_FALSE, &slot));
  PetscCall(PetscOptionsSetValue(NULL, "-bad_swap_policy", "adaptive"));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  {
    PetscErrorCode ierr = SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "bad_");
    PetscErrorCode ierr2;
    PetscReal      f[3];
    SgForcesInput  fin = {.n = 0};
    SgForcesOutput fout = {.f = f};
    ierr2 = SgSlotComputeForces(slot, &fin, &fout);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_USER_INPUT, "%s: adaptive without uncertainty must be refused (got %d)", kind, (int)ierr);
    CHECK(ierr2 == PETSC_ERR_ARG_WRONG, "%s: an md.forces call on this slot must be refused (got %d)", kind, (int)ierr2);
  }
  PetscCall(SgSlotDestroy(&slot));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: static (with a held-back call), schedule, adaptive (global decision, rejection, state round trip), check_every (restored mid-way), refusals: ok\n", kind));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- a surrogate type that serves field.superres (test-only) ---------- */
typedef struct {
  PetscReal scale;
} ToySur;

static PetscErrorCode ToyServe(void *ctx, const SgFieldSuperresInput *in, SgFieldSuperresOutput *out)
{
  ToySur  *t = (ToySur *)ctx;
  PetscInt n = SgFieldQueryCount(in->query);
  for (PetscInt q = 0; q < n; q++) {
    PetscReal pt[3];
    SgFieldQueryPoint(in->query, q, pt);
    for (PetscInt c = 0; c < in->coarse->nch; c++) out->v[c * n + q] = t->scale * G(c, pt);
  }
  return PETSC_SUCCESS;
}

static PetscErrorCode ToyProvider(SgSurrogate s, const SgFieldProviderInfo *info, SgFieldSuperresProvider *p)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  ToySur           *t                  = (ToySur *)s->data;

  PetscFunctionBegin;
  PetscCheck(info->nparam == 1 && !strcmp(info->param_name[0], "rayleigh") && info->param[0] == 1e5, info->comm, PETSC_ERR_USER_INPUT, "toy: made for Ra = 1e5");
  if (PetscOptionsObject) PetscCall(SgOptionsReal("-toy_scale", "scale of the toy's answers", "", t->scale, &t->scale, NULL, 0, 10));
  p->fn               = ToyServe;
  p->ctx              = t;
  p->block_nt         = 2;
  p->block_spacing[0] = 0.5;
  PetscCall(PetscStrncpy(p->uncertainty_units, "none", sizeof p->uncertainty_units));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ToyDestroy(SgSurrogate s)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ToyCreate(SgSurrogate s)
{
  ToySur *t;

  PetscFunctionBegin;
  PetscCall(PetscNew(&t));
  t->scale                 = 2;
  s->data                  = t;
  s->ops->superresprovider = ToyProvider;
  s->ops->destroy          = ToyDestroy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSurrogateType(void)
{
  const char *const     pn[1] = {"rayleigh"};
  const PetscReal       pv[1] = {1e5};
  SgFieldProviderInfo   info  = {PETSC_COMM_WORLD, 2, chan, 1, pn, pv, {0, 0, 0}, {0, 1, 4}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "", NULL};
  SgFieldSuperresProvider p;
  PetscBool             serves;
  char                  names[256];
  PetscErrorCode        ierr;

  PetscFunctionBegin;
  PetscCall(SgSurrogateRegister("toy_superres", ToyCreate));
  PetscCall(SgSurrogateTypeServes("toy_superres", "field.superres", &serves));
  CHECK(serves, "toy_superres must serve field.superres");
  PetscCall(SgSurrogateTypeServes("toy_superres", "field.advance", &serves));
  CHECK(!serves, "toy_superres must not serve field.advance");
  PetscCall(SgSurrogateTypeNamesServing("field.superres", names, sizeof names));
  CHECK(!strcmp(names, "toy_superres"), "surrogate types serving field.superres: '%s'", names);
  PetscCall(SgSurrogateTypeNamesServing("field.advance", names, sizeof names));
  CHECK(!strcmp(names, "(none)"), "surrogate types serving field.advance: '%s'", names);
  PetscCall(SgFieldSuperresProviderCreate("toy_superres", &info, &p));
  CHECK(p.surrogate && p.block_nt == 2 && !strcmp(p.name, "toy_superres"), "provider from the surrogate type");
  {
    SgSlot                slot;
    PetscReal             block[2 * 2 * 2 * 4] = {0}, v[6];
    SgFieldBlock          b  = {2, chan, {2, 2, 4}, {tco, zco, xco}, {0, 0, 0}, {0, 1, 4}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, block};
    SgFieldQuery          q  = {PETSC_FALSE, 3, qpts, {0, 0, 0}, {NULL, NULL, NULL}};
    SgFieldSuperresInput  in = {&b, &q};
    SgFieldSuperresOutput out = {v};
    PetscCall(SgSlotCreate("field.superres", &slot));
    PetscCall(SgSlotSetFieldSuperresProvider(slot, "fine", SrSolver, NULL));
    PetscCall(SgSlotSetFieldSuperresSurrogate(slot, p.name, p.fn, p.uncertainty, p.ctx));
    PetscCall(SgSlotSetFromOptions(slot, PETSC_COMM_WORLD, "toy_"));
    PetscCall(SgSlotSetPolicy(slot, SG_SWAP_STATIC, PETSC_TRUE, 0, 0, 0, 1e3));
    PetscCall(SgSlotFieldSuperres(slot, &in, &out));
    for (PetscInt ch = 0; ch < 2; ch++)
      for (PetscInt k = 0; k < 3; k++) CHECK(v[ch * 3 + k] == 2 * G(ch, &qpts[3 * k]), "the surrogate type's answer");
    PetscCall(SgSlotDestroy(&slot));
  }
  PetscCall(SgFieldSuperresProviderDestroy(&p));
  /* a type that does not serve the kind, and an unknown type: one user error each */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  {
    SgFieldAdvanceProvider a;
    ierr = SgFieldAdvanceProviderCreate("toy_superres", &info, &a);
    CHECK(ierr == PETSC_ERR_USER_INPUT, "toy_superres as a field.advance provider must be refused (got %d)", (int)ierr);
    ierr = SgFieldSuperresProviderCreate("nosuch", &info, &p);
    CHECK(ierr == PETSC_ERR_USER_INPUT, "an unknown surrogate type must be refused (got %d)", (int)ierr);
  }
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surrogate type serving field.superres: found by kind, provider created and served through the slot, refusals: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The helpers of sgfield.h */
static PetscErrorCode TestHelpers(void)
{
  const PetscReal tt[3] = {0, 0.25, 0.5}, zz[2] = {0, 1}, xx[3] = {0, 1, 2.5};
  PetscReal       vals[2 * 3 * 2 * 3], pt[3], h;
  PetscBool       uni;
  SgFieldBlock    b = {2, chan, {3, 2, 3}, {tt, zz, xx}, {0, 0, 0}, {0, 1, 3}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, vals};
  SgFieldQuery    q = {PETSC_TRUE, 0, NULL, {3, 2, 3}, {tt, zz, xx}};
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 36; i++) vals[i] = i;
  CHECK(SgFieldBlockSize(&b) == 36 && SgFieldQueryCount(&q) == 18, "sizes");
  CHECK(SgFieldBlockChannel(&b, "w") == 1 && SgFieldBlockChannel(&b, "p") == -1, "channel lookup");
  SgFieldQueryPoint(&q, 2 * 6 + 1 * 3 + 2, pt); /* t index 2, z 1, x 2 */
  CHECK(pt[0] == 0.5 && pt[1] == 1 && pt[2] == 2.5, "grid query point (%g, %g, %g)", (double)pt[0], (double)pt[1], (double)pt[2]);
  PetscCall(SgFieldBlockSpacing(&b, 0, 1e-12, &uni, &h));
  CHECK(uni && h == 0.25, "t spacing");
  PetscCall(SgFieldBlockSpacing(&b, 2, 1e-12, &uni, &h));
  CHECK(!uni, "x is not uniform");
  PetscCall(SgFieldBlockCheck(PETSC_COMM_WORLD, "test", &b));
  vals[20] = NAN;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = SgFieldBlockCheck(PETSC_COMM_WORLD, "test", &b);
  PetscCall(PetscPopErrorHandler());
  CHECK(ierr == PETSC_ERR_ARG_WRONG, "a NaN in a block must be found");
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank, size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(TestHelpers());
  PetscCall(TestKind("field.superres", rank, size));
  PetscCall(TestKind("field.advance", rank, size));
  PetscCall(TestSurrogateType());
  PetscCall(PetscFinalize());
  return 0;
}
