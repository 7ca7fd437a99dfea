/* DeePMD-kit interoperability: `surge model import IN.dp|IN.yaml OUT.h5` and `surge model export
   IN.h5 OUT.dp|OUT.yaml`, between surge's model file and DeePMD-kit v3's backend-independent
   serialized model (what `dp convert-backend` reads and writes). The dictionary layout was learnt from
   deepmd-kit's deepmd/dpmodel (descriptor/se_e2_a.py, fitting/general_fitting.py, utils/network.py,
   atomic_model/base_atomic_model.py); no code was copied. The mapping table is in docs/deepmd.md.

   What matters for exact evaluation:
   * layers store w as [in, out] (x W + b); surge stores W as [out, in] (torch layout): transposed;
   * a layer is y = r(x) + idt * act(x W + b), r the identity (out = in) or [x, x] (out = 2 in) when
     resnet is set; idt exists only where r does (use_timestep);
   * embedding nets with type_one_side false are indexed (centre ti, neighbour tt) -> ti + ntypes * tt
     (NetworkCollection._convert_key); surge indexes ti * ntypes + tt;
   * E_i = fit(D_i) + bias_atom_e[c] + out_bias[0][c][0] (out_std does not enter the energy);
   * davg/dstd are [ntypes, nnei, 4]; equal rows within a type are surge's per-type form, otherwise
     kept per slot (exact);
   * exclude_types (descriptor) and pair_exclude_types (model): the pair's neighbours give zero rows.
   Anything else that changes the energy (other descriptors or fittings, fparam/aparam, spin, atom
   exclusions, compressed tables, env_protection) is refused with a line naming the key. */
#include <math.h>
#include <string.h>
#include "deepmd.h"
#include "sgdeepmd.h"
#include "sgdpfile.h"
#include "sgh5file.h"
#include "sgtree.h"
#include "sgwrite.h"
#include "sgsys.h"

#define SG_DP_TEXT_MAX (1L << 30) /* a YAML model of 1 GiB is far above any Deep Potential */

/* ---- reading ---------------------------------------------------------------------------------- */
typedef struct {
  const char *file;
} Ctx;

static PetscErrorCode Need(Ctx *x, SgTree d, const char path[], const char key[], SgTreeKind kind, SgTree *out)
{
  SgTree v = SgTreeGet(d, key);
  static const char *names[] = {"null", "a boolean", "an integer", "a number", "a string", "a list", "a mapping", "an array"};

  PetscFunctionBegin;
  PetscCheck(v, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: key %s.%s is missing (not a DeePMD-kit energy model, or a damaged file)", x->file, path, key);
  if (kind == SG_TREE_REAL && v->kind == SG_TREE_INT) {
    v->kind = SG_TREE_REAL;
    v->r    = (double)v->i;
  }
  PetscCheck(v->kind == kind, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s should be %s", x->file, path, key, names[kind]);
  *out = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NeedStr(Ctx *x, SgTree d, const char path[], const char key[], const char want[])
{
  SgTree v;

  PetscFunctionBegin;
  PetscCall(Need(x, d, path, key, SG_TREE_STRING, &v));
  PetscCheck(!strcmp(v->s, want), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s is '%s': surge evaluates '%s' only", x->file, path, key, v->s, want);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a key that must be absent, null, false, 0 or empty: otherwise the model needs what surge lacks */
static PetscErrorCode Unset(Ctx *x, SgTree d, const char path[], const char key[], const char what[])
{
  SgTree    v = SgTreeGet(d, key);
  PetscBool set;

  PetscFunctionBegin;
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  set = (PetscBool)((v->kind == SG_TREE_BOOL && v->b) || (v->kind == SG_TREE_INT && v->i) || (v->kind == SG_TREE_REAL && v->r != 0) || ((v->kind == SG_TREE_LIST || v->kind == SG_TREE_DICT) && v->n) || v->kind == SG_TREE_STRING || v->kind == SG_TREE_ARRAY);
  PetscCheck(!set, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s is set: surge cannot evaluate %s exactly; the model is not imported", x->file, path, key, what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IntList(Ctx *x, SgTree d, const char path[], const char key[], PetscInt cap, PetscInt v[], PetscInt *n)
{
  SgTree l;

  PetscFunctionBegin;
  PetscCall(Need(x, d, path, key, SG_TREE_LIST, &l));
  PetscCheck(l->n >= 1 && l->n <= cap, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s has %" PetscInt_FMT " entries; surge takes 1..%" PetscInt_FMT, x->file, path, key, l->n, cap);
  for (PetscInt q = 0; q < l->n; q++) {
    PetscCheck(l->items[q]->kind == SG_TREE_INT && l->items[q]->i >= 1 && l->items[q]->i <= 100000, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s[%" PetscInt_FMT "] should be a positive integer", x->file, path, key, q);
    v[q] = (PetscInt)l->items[q]->i;
  }
  *n = l->n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Activation(Ctx *x, SgTree d, const char path[], const char key[], PetscInt *fn)
{
  SgTree v;

  PetscFunctionBegin;
  PetscCall(Need(x, d, path, key, SG_TREE_STRING, &v));
  *fn = -1;
  for (PetscInt q = 0; q < SG_DP_NACT; q++)
    if (!strcasecmp(v->s, SgDPActNames[q])) *fn = q;
  if (!strcasecmp(v->s, "none") || !strcasecmp(v->s, "gelu_tf")) *fn = strcasecmp(v->s, "none") ? SG_DP_GELU : SG_DP_LINEAR;
  PetscCheck(*fn >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s is '%s': surge evaluates tanh, gelu, relu, softplus, sigmoid and linear", x->file, path, key, v->s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* an array of exactly the given shape, finite */
static PetscErrorCode Arr(Ctx *x, SgTree d, const char path[], const char key[], PetscInt rank, const PetscInt64 dims[], const double **v)
{
  SgTree a;

  PetscFunctionBegin;
  PetscCall(Need(x, d, path, key, SG_TREE_ARRAY, &a));
  PetscBool ok = (PetscBool)(a->rank == rank);
  for (PetscInt k = 0; ok && k < rank; k++) ok = (PetscBool)(a->dims[k] == dims[k]);
  if (!ok) {
    char want[64] = "", got[64] = "";
    for (PetscInt k = 0; k < rank; k++) PetscCall(PetscSNPrintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", k ? ", " : "", (long long)dims[k]));
    for (PetscInt k = 0; k < a->rank; k++) PetscCall(PetscSNPrintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", k ? ", " : "", (long long)a->dims[k]));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s has shape [%s], the model's sizes need [%s]", x->file, path, key, got, want);
  }
  for (PetscInt64 i = 0; i < a->numel; i++) PetscCheck(isfinite(a->data[i]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s holds a non-finite value (NaN or Inf) at element %lld", x->file, path, key, (long long)i);
  *v = a->data;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* b and idt are raveled by DeePMD-kit (its TensorFlow backend writes b as [1, out]): any shape with
   out values */
static PetscErrorCode Vec(Ctx *x, SgTree d, const char path[], const char key[], PetscInt64 n, const double **v)
{
  SgTree a;

  PetscFunctionBegin;
  PetscCall(Need(x, d, path, key, SG_TREE_ARRAY, &a));
  PetscCheck(a->numel == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s has %lld values, the model's sizes need %lld", x->file, path, key, (long long)a->numel, (long long)n);
  PetscCall(Arr(x, d, path, key, a->rank, a->dims, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One net of a NetworkCollection into surge's slab at *off: layer shapes, residual and timestep
   as surge's net of this place has them (else refused), W transposed. */
static PetscErrorCode Net(Ctx *x, SgTree net, const char path[], PetscInt nl, const PetscInt *ins, const PetscInt *outs, const PetscBool *res, const PetscBool *idt, const PetscInt *fn, double *slab, long *off)
{
  SgTree layers;
  char   lp[160];

  PetscFunctionBegin;
  PetscCall(Need(x, net, path, "layers", SG_TREE_LIST, &layers));
  PetscCheck(layers->n == nl, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.layers has %" PetscInt_FMT " layers, the neuron list needs %" PetscInt_FMT, x->file, path, layers->n, nl);
  for (PetscInt l = 0; l < nl; l++) {
    SgTree      L = layers->items[l], vars, rs, ts, bs;
    PetscInt    in = ins[l], out = outs[l], f;
    PetscInt64  dw[2] = {in, out};
    const double *w, *b, *it;
    PetscCall(PetscSNPrintf(lp, sizeof lp, "%s.layers[%" PetscInt_FMT "]", path, l));
    PetscCheck(L->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s is not a mapping", x->file, lp);
    PetscCall(Need(x, L, lp, "@variables", SG_TREE_DICT, &vars));
    PetscCall(Need(x, L, lp, "bias", SG_TREE_BOOL, &bs));
    PetscCheck(bs->b, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.bias is false: surge's layers have biases", x->file, lp);
    PetscCall(Need(x, L, lp, "resnet", SG_TREE_BOOL, &rs));
    PetscCall(Need(x, L, lp, "use_timestep", SG_TREE_BOOL, &ts));
    PetscCall(Activation(x, L, lp, "activation_function", &f));
    PetscBool dres = (PetscBool)(rs->b && (out == in || out == 2 * in));
    PetscCheck(dres == res[l], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s (%" PetscInt_FMT " -> %" PetscInt_FMT ") %s a residual connection where surge's net %s: the layer widths cannot be expressed", x->file, lp, in, out, dres ? "has" : "has no", res[l] ? "has one" : "has none");
    PetscCheck((PetscBool)ts->b == idt[l], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.use_timestep is %s where surge's net %s a timestep", x->file, lp, ts->b ? "true" : "false", idt[l] ? "has" : "has no");
    PetscCheck(f == fn[l], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.activation_function %s differs from its net's %s", x->file, lp, SgDPActNames[f], SgDPActNames[fn[l]]);
    PetscCall(Arr(x, vars, lp, "w", 2, dw, &w));
    PetscCall(Vec(x, vars, lp, "b", out, &b));
    for (PetscInt o = 0; o < out; o++)
      for (PetscInt i = 0; i < in; i++) slab[*off + o * in + i] = w[i * out + o];
    *off += in * out;
    PetscCall(PetscArraycpy(slab + *off, b, out));
    *off += out;
    if (idt[l]) {
      PetscCall(Vec(x, vars, lp, "idt", out, &it));
      PetscCall(PetscArraycpy(slab + *off, it, out));
      *off += out;
    } else {
      SgTree iv = SgTreeGet(vars, "idt");
      PetscCheck(!iv || iv->kind == SG_TREE_NULL, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s holds an idt without use_timestep", x->file, lp);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Networks(Ctx *x, SgTree owner, const char path[], const char key[], PetscInt ndim, PetscInt ntypes, SgTree *nets)
{
  SgTree coll, nd, nt;
  char   cp[96];

  PetscFunctionBegin;
  PetscCall(Need(x, owner, path, key, SG_TREE_DICT, &coll));
  PetscCall(PetscSNPrintf(cp, sizeof cp, "%s.%s", path, key));
  PetscCall(Need(x, coll, cp, "ndim", SG_TREE_INT, &nd));
  PetscCheck(nd->i == ndim, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.ndim is %lld; surge needs %" PetscInt_FMT " (mixed-type nets are not evaluated)", x->file, cp, nd->i, ndim);
  PetscCall(Need(x, coll, cp, "ntypes", SG_TREE_INT, &nt));
  PetscCheck(nt->i == ntypes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.ntypes is %lld, the type_map has %" PetscInt_FMT, x->file, cp, nt->i, ntypes);
  PetscCall(Need(x, coll, cp, "networks", SG_TREE_LIST, nets));
  PetscInt want = ndim == 2 ? ntypes * ntypes : ntypes;
  PetscCheck((*nets)->n == want, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.networks has %" PetscInt_FMT " nets, %" PetscInt_FMT " expected", x->file, cp, (*nets)->n, want);
  for (PetscInt q = 0; q < want; q++) PetscCheck((*nets)->items[q]->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.networks[%" PetscInt_FMT "] is empty: a net cleared by exclude_types (import the model before excluding, or use type_one_side)", x->file, cp, q);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Exclusions(Ctx *x, SgTree d, const char path[], const char key[], SgDPConfig *c)
{
  SgTree l = SgTreeGet(d, key);

  PetscFunctionBegin;
  if (!l || l->kind == SG_TREE_NULL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(l->kind == SG_TREE_LIST, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s should be a list of type pairs", x->file, path, key);
  for (PetscInt q = 0; q < l->n; q++) {
    SgTree p = l->items[q];
    PetscCheck(p->kind == SG_TREE_LIST && p->n == 2 && p->items[0]->kind == SG_TREE_INT && p->items[1]->kind == SG_TREE_INT && p->items[0]->i >= 0 && p->items[0]->i < c->ntypes && p->items[1]->i >= 0 && p->items[1]->i < c->ntypes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s.%s[%" PetscInt_FMT "] should be a pair of types in 0..%" PetscInt_FMT, x->file, path, key, q, c->ntypes - 1);
    c->excl[p->items[0]->i][p->items[1]->i] = c->excl[p->items[1]->i][p->items[0]->i] = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the dictionary (as read from .yaml or .dp) -> a surge model */
static PetscErrorCode FromTree(const char file[], SgTree root, SgDPModel *out)
{
  Ctx        X = {file}, *x = &X;
  SgTree     model, desc, fit, v, tm, dvars, fvars, mvars, enets, fnets, mds;
  SgDPConfig c;
  SgDPModel  m;
  PetscInt   n, nt;
  long       np, off = 0;
  double    *slab;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof c));
  PetscCheck(root->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not a mapping: no DeePMD-kit model", file);
  model = SgTreeGet(root, "model");
  PetscCheck(model && model->kind == SG_TREE_DICT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no 'model' mapping: not a DeePMD-kit serialized model (dp convert-backend writes one)", file);
  v = SgTreeGet(model, "type");
  if (v) PetscCall(NeedStr(x, model, "model", "type", "standard")); /* zbl, linear_ener, spin, frozen ... */
  PetscCall(Need(x, model, "model", "descriptor", SG_TREE_DICT, &desc));
  PetscCall(Need(x, model, "model", "fitting", SG_TREE_DICT, &fit));
  PetscCall(Need(x, desc, "model.descriptor", "type", SG_TREE_STRING, &v));
  PetscCheck(!strcmp(v->s, "se_e2_a") || !strcmp(v->s, "se_r") || !strcmp(v->s, "se_e2_r"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor.type is '%s': surge imports se_e2_a and se_e2_r (se_r) models", file, v->s);
  c.radial = (PetscBool)strcmp(v->s, "se_e2_a");
  PetscCall(NeedStr(x, fit, "model.fitting", "type", "ener"));
  PetscCall(Unset(x, model, "model", "atom_exclude_types", "atom exclusions"));
  PetscCall(Unset(x, model, "model", "preset_out_bias", "a preset output bias"));
  PetscCall(Unset(x, desc, "model.descriptor", "spin", "spin models"));
  PetscCall(Unset(x, desc, "model.descriptor", "env_protection", "a protected environment matrix"));
  PetscCall(Unset(x, desc, "model.descriptor", "compress", "a compressed model's tables"));
  PetscCall(Unset(x, fit, "model.fitting", "spin", "spin models"));
  PetscCall(Unset(x, fit, "model.fitting", "numb_fparam", "frame parameters (fparam)"));
  PetscCall(Unset(x, fit, "model.fitting", "numb_aparam", "atomic parameters (aparam)"));
  PetscCall(Unset(x, fit, "model.fitting", "dim_case_embd", "case embeddings"));
  PetscCall(Unset(x, fit, "model.fitting", "exclude_types", "fitting atom exclusions"));
  PetscCall(Unset(x, fit, "model.fitting", "atom_ener", "fixed atomic energies (atom_ener)"));
  PetscCall(Unset(x, fit, "model.fitting", "mixed_types", "one fitting net for all types"));
  PetscCall(Unset(x, fit, "model.fitting", "use_aparam_as_mask", "aparam masks"));
  PetscCall(Unset(x, fit, "model.fitting", "layer_name", "shared fitting layers"));
  /* type map */
  PetscCall(Need(x, model, "model", "type_map", SG_TREE_LIST, &tm));
  PetscCheck(tm->n >= 1 && tm->n <= SG_DP_MAXT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.type_map has %" PetscInt_FMT " types; surge takes 1..%d", file, tm->n, SG_DP_MAXT);
  c.ntypes = nt = tm->n;
  for (PetscInt t = 0; t < nt; t++) {
    PetscCheck(tm->items[t]->kind == SG_TREE_STRING && strlen(tm->items[t]->s) >= 1 && strlen(tm->items[t]->s) < 16 && !strchr(tm->items[t]->s, ','), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.type_map[%" PetscInt_FMT "] should be an element name of 1-15 characters", file, t);
    PetscCall(PetscStrncpy(c.type_map[t], tm->items[t]->s, sizeof c.type_map[t]));
  }
  /* descriptor */
  PetscCall(Need(x, desc, "model.descriptor", "rcut", SG_TREE_REAL, &v));
  c.rcut = v->r;
  PetscCall(Need(x, desc, "model.descriptor", "rcut_smth", SG_TREE_REAL, &v));
  c.rcut_smth = v->r;
  PetscCheck(isfinite(c.rcut) && isfinite(c.rcut_smth) && c.rcut > 0 && c.rcut_smth >= 0 && c.rcut_smth < c.rcut, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor: need 0 <= rcut_smth < rcut", file);
  PetscCall(IntList(x, desc, "model.descriptor", "sel", SG_DP_MAXT, c.sel, &n));
  PetscCheck(n == nt, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor.sel has %" PetscInt_FMT " entries for %" PetscInt_FMT " types", file, n, nt);
  PetscCall(IntList(x, desc, "model.descriptor", "neuron", SG_DP_MAXL, c.emb, &c.nemb));
  if (c.radial) c.axis = 1; /* no second factor: D is the mean embedding */
  else {
    PetscCall(Need(x, desc, "model.descriptor", "axis_neuron", SG_TREE_INT, &v));
    c.axis = (PetscInt)v->i;
  }
  PetscCheck(c.axis >= 1 && c.axis <= c.emb[c.nemb - 1], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor.axis_neuron %lld is outside 1..%" PetscInt_FMT, file, v->i, c.emb[c.nemb - 1]);
  PetscCall(Need(x, desc, "model.descriptor", "resnet_dt", SG_TREE_BOOL, &v));
  c.emb_resnet_dt = v->b;
  PetscCall(Need(x, desc, "model.descriptor", "type_one_side", SG_TREE_BOOL, &v));
  c.type_pair = (PetscBool)!v->b;
  PetscCall(Activation(x, desc, "model.descriptor", "activation_function", &c.act));
  PetscCall(Exclusions(x, desc, "model.descriptor", "exclude_types", &c));
  PetscCall(Exclusions(x, model, "model", "pair_exclude_types", &c));
  /* se_r embeds an excluded neighbour's zeroed row (G(0) != 0): not the zero contribution surge gives */
  PetscCheck(!c.radial || !SgDPHasExclusions(&c), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor.exclude_types with se_r: surge cannot evaluate it exactly; the model is not imported", file);
  /* fitting */
  PetscCall(IntList(x, fit, "model.fitting", "neuron", SG_DP_MAXL, c.fit, &c.nfit));
  PetscCall(Need(x, fit, "model.fitting", "resnet_dt", SG_TREE_BOOL, &v));
  c.fit_resnet_dt = v->b;
  PetscCall(Activation(x, fit, "model.fitting", "activation_function", &c.fit_act));
  v = SgTreeGet(fit, "dim_out");
  PetscCheck(!v || (v->kind == SG_TREE_INT && v->i == 1), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.fitting.dim_out is not 1: not an energy fitting", file);
  v = SgTreeGet(fit, "dim_descrpt");
  PetscCheck(!v || (v->kind == SG_TREE_INT && v->i == SgDPDescDim(&c)), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.fitting.dim_descrpt is not the descriptor's width %" PetscInt_FMT, file, SgDPDescDim(&c));
  /* seed: kept when the file's model_def_script has one (surge writes it there) */
  mds = SgTreeGet(root, "model_def_script");
  if (mds && mds->kind == SG_TREE_DICT) {
    SgTree dd = SgTreeGet(mds, "descriptor"), s = dd ? SgTreeGet(dd, "seed") : NULL;
    if (s && s->kind == SG_TREE_INT && s->i >= 0 && s->i < PETSC_MAX_INT) c.seed = (PetscInt)s->i;
  }
  PetscCall(SgDPModelCreate(&c, &m));
  const SgDPConfig *cc = &m->cfg;
  /* weights, in the order SgDPModelCreate declares them */
  PetscCall(Networks(x, desc, "model.descriptor", "embeddings", cc->type_pair ? 2 : 1, nt, &enets));
  PetscCall(Networks(x, fit, "model.fitting", "nets", 1, nt, &fnets));
  SgNN(sgnn_params_count(m->P, &np));
  PetscCall(PetscMalloc1(np, &slab));
  for (PetscInt e = 0; e < SgDPNumEmbed(cc); e++) {
    PetscInt  ins[SG_DP_MAXL], fn[SG_DP_MAXL], in = 1, dpi = cc->type_pair ? (e / nt) + nt * (e % nt) : e;
    PetscBool res[SG_DP_MAXL], idt[SG_DP_MAXL];
    char      np_[96];
    for (PetscInt l = 0; l < cc->nemb; l++) {
      ins[l] = in;
      fn[l] = cc->act;
      res[l] = (PetscBool)(cc->emb[l] == in || cc->emb[l] == 2 * in);
      idt[l] = (PetscBool)(res[l] && cc->emb_resnet_dt);
      in     = cc->emb[l];
    }
    PetscCall(PetscSNPrintf(np_, sizeof np_, "model.descriptor.embeddings.networks[%" PetscInt_FMT "]", dpi));
    PetscCall(Net(x, enets->items[dpi], np_, cc->nemb, ins, cc->emb, res, idt, fn, slab, &off));
  }
  for (PetscInt t = 0; t < nt; t++) {
    PetscInt  ins[SG_DP_MAXL + 1], outs[SG_DP_MAXL + 1], fn[SG_DP_MAXL + 1], in = SgDPDescDim(cc);
    PetscBool res[SG_DP_MAXL + 1], idt[SG_DP_MAXL + 1];
    char      np_[96];
    for (PetscInt l = 0; l <= cc->nfit; l++) {
      outs[l] = l < cc->nfit ? cc->fit[l] : 1;
      ins[l] = in;
      fn[l] = l < cc->nfit ? cc->fit_act : SG_DP_LINEAR;
      res[l] = (PetscBool)(l > 0 && l < cc->nfit && outs[l] == in); /* surge's fitting residuals */
      idt[l] = (PetscBool)(res[l] && cc->fit_resnet_dt);
      in     = outs[l];
    }
    PetscCall(PetscSNPrintf(np_, sizeof np_, "model.fitting.nets.networks[%" PetscInt_FMT "]", t));
    PetscCall(Net(x, fnets->items[t], np_, cc->nfit + 1, ins, outs, res, idt, fn, slab, &off));
  }
  PetscCheck(off == np, PETSC_COMM_SELF, PETSC_ERR_PLIB, "deepmd import: %ld of %ld parameters filled", off, np);
  SgNN(sgnn_tensor_set_f64(sgnn_params_values(m->P), slab));
  PetscCall(PetscFree(slab));
  PetscCall(SgDPModelSync(m));
  /* statistics: [ntypes, nnei, 4]; equal slots within a type -> per-type form, else per slot */
  {
    PetscInt64    ds[3] = {nt, cc->nnei, cc->radial ? 1 : 4};
    const double *da, *dd;
    double       *ea = NULL, *ed = NULL;
    PetscBool     uniform = PETSC_TRUE;
    PetscCall(Need(x, desc, "model.descriptor", "@variables", SG_TREE_DICT, &dvars));
    PetscCall(Arr(x, dvars, "model.descriptor.@variables", "davg", 3, ds, &da));
    PetscCall(Arr(x, dvars, "model.descriptor.@variables", "dstd", 3, ds, &dd));
    if (cc->radial) { /* se_r's one column -> surge's rows of 4 (the angular columns unused: 0 and 1) */
      PetscCall(PetscMalloc2(nt * cc->nnei * 4, &ea, nt * cc->nnei * 4, &ed));
      for (PetscInt64 q = 0; q < nt * cc->nnei; q++) {
        ea[4 * q] = da[q];
        ed[4 * q] = dd[q];
        for (int k = 1; k < 4; k++) {
          ea[4 * q + k] = 0;
          ed[4 * q + k] = 1;
        }
      }
      da = ea;
      dd = ed;
      ds[2] = 4;
    }
    for (PetscInt64 i = 0; i < ds[0] * ds[1] * 4; i++) PetscCheck(dd[i] != 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: model.descriptor.@variables.dstd has a zero at element %lld", file, (long long)i);
    for (PetscInt t = 0; t < nt; t++)
      for (PetscInt s = 1; s < cc->nnei; s++)
        for (int k = 0; k < 4; k++) {
          size_t a = 4 * (t * cc->nnei + s) + k, a0 = 4 * t * cc->nnei + k;
          if (da[a] != da[a0] || dd[a] != dd[a0]) uniform = PETSC_FALSE;
        }
    if (uniform) {
      for (PetscInt t = 0; t < nt; t++)
        for (int k = 0; k < 4; k++) m->davg[t][k] = da[4 * t * cc->nnei + k], m->dstd[t][k] = dd[4 * t * cc->nnei + k];
    } else {
      PetscCall(PetscMalloc2(ds[0] * ds[1] * 4, &m->sdavg, ds[0] * ds[1] * 4, &m->sdstd));
      PetscCall(PetscArraycpy(m->sdavg, da, ds[0] * ds[1] * 4));
      PetscCall(PetscArraycpy(m->sdstd, dd, ds[0] * ds[1] * 4));
    }
    PetscCall(PetscFree2(ea, ed));
  }
  /* energy bias: bias_atom_e [ntypes, 1] of the fitting + out_bias [1, ntypes, 1] of the model */
  {
    PetscInt64    d2[2] = {nt, 1}, d3[3] = {1, nt, 1};
    const double *be, *ob;
    PetscCall(Need(x, fit, "model.fitting", "@variables", SG_TREE_DICT, &fvars));
    PetscCall(Arr(x, fvars, "model.fitting.@variables", "bias_atom_e", 2, d2, &be));
    mvars = SgTreeGet(model, "@variables");
    if (mvars && SgTreeGet(mvars, "out_bias")) {
      PetscCall(Arr(x, mvars, "model.@variables", "out_bias", 3, d3, &ob));
      for (PetscInt t = 0; t < nt; t++) m->bias[t] = be[t] + ob[t];
    } else
      for (PetscInt t = 0; t < nt; t++) m->bias[t] = be[t];
  }
  *out = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Suffix(const char *p, const char *s)
{
  size_t a = strlen(p), b = strlen(s);
  return (PetscBool)(a > b && !strcasecmp(p + a - b, s));
}

PetscErrorCode SgDeepmdReadDeePMDKit(const char in[], SgDeepmd *out)
{
  SgTree root;

  PetscFunctionBegin;
  if (Suffix(in, ".dp")) PetscCall(SgDPFileRead(in, &root));
  else if (Suffix(in, ".yaml") || Suffix(in, ".yml")) {
    char  *text;
    size_t len;
    PetscCall(SgTreeReadText(in, SG_DP_TEXT_MAX, &text, &len));
    PetscCall(SgTreeParseYAML(in, text, len, &root));
    PetscCall(PetscFree(text));
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "surge model import: %s: give a DeePMD-kit model ending in .dp or .yaml (dp convert-backend writes them)", in);
  PetscCall(FromTree(in, root, out));
  PetscCall(SgTreeDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- writing ---------------------------------------------------------------------------------- */
static PetscErrorCode Strings(SgTree d, const char key[], PetscInt n, char names[][16])
{
  SgTree l, s;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_LIST, &l));
  for (PetscInt q = 0; q < n; q++) {
    PetscCall(SgTreeListAdd(l, SG_TREE_STRING, &s));
    PetscCall(PetscStrallocpy(names[q], &s->s));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Ints(SgTree d, const char key[], PetscInt n, const PetscInt *v)
{
  SgTree l, s;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_LIST, &l));
  for (PetscInt q = 0; q < n; q++) {
    PetscCall(SgTreeListAdd(l, SG_TREE_INT, &s));
    s->i = v[q];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Pairs(SgTree d, const char key[], const SgDPConfig *c)
{
  SgTree l, p, s;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(d, key, SG_TREE_LIST, &l));
  for (PetscInt a = 0; a < c->ntypes; a++)
    for (PetscInt b = a; b < c->ntypes; b++)
      if (c->excl[a][b]) {
        PetscCall(SgTreeListAdd(l, SG_TREE_LIST, &p));
        PetscCall(SgTreeListAdd(p, SG_TREE_INT, &s));
        s->i = a;
        PetscCall(SgTreeListAdd(p, SG_TREE_INT, &s));
        s->i = b;
      }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LayerTree(SgTree layers, const SgDPLayer *L, PetscBool resnet)
{
  SgTree      y, vars;
  PetscInt64  dw[2] = {L->in, L->out}, db[1] = {L->out};
  double     *w;
  const char *an = L->act ? SgDPActNames[L->fn] : "none";

  PetscFunctionBegin;
  PetscCall(SgTreeListAdd(layers, SG_TREE_DICT, &y));
  PetscCall(SgTreeDictAddString(y, "@class", "Layer"));
  PetscCall(SgTreeDictAdd(y, "@variables", SG_TREE_DICT, &vars));
  PetscCall(PetscMalloc1(L->in * L->out, &w));
  for (PetscInt o = 0; o < L->out; o++)
    for (PetscInt i = 0; i < L->in; i++) w[i * L->out + o] = L->W[o * L->in + i];
  PetscCall(SgTreeDictAddArray(vars, "b", "float64", 1, db, L->b));
  if (L->idt) PetscCall(SgTreeDictAddArray(vars, "idt", "float64", 1, db, L->idt));
  else PetscCall(SgTreeDictAddNull(vars, "idt"));
  PetscCall(SgTreeDictAddArray(vars, "w", "float64", 2, dw, w));
  PetscCall(PetscFree(w));
  PetscCall(SgTreeDictAddInt(y, "@version", 1));
  PetscCall(SgTreeDictAddString(y, "activation_function", an));
  PetscCall(SgTreeDictAddBool(y, "bias", PETSC_TRUE));
  PetscCall(SgTreeDictAddString(y, "precision", "float64"));
  PetscCall(SgTreeDictAddBool(y, "resnet", resnet));
  PetscCall(SgTreeDictAddBool(y, "use_timestep", L->idt ? PETSC_TRUE : PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Collection(SgTree owner, const char key[], const char type[], PetscInt ndim, PetscInt nt, SgTree *nets)
{
  SgTree coll;

  PetscFunctionBegin;
  PetscCall(SgTreeDictAdd(owner, key, SG_TREE_DICT, &coll));
  PetscCall(SgTreeDictAddString(coll, "@class", "NetworkCollection"));
  PetscCall(SgTreeDictAddInt(coll, "@version", 1));
  PetscCall(SgTreeDictAddInt(coll, "ndim", ndim));
  PetscCall(SgTreeDictAddString(coll, "network_type", type));
  PetscCall(SgTreeDictAdd(coll, "networks", SG_TREE_LIST, nets));
  PetscCall(SgTreeDictAddInt(coll, "ntypes", nt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a surge model -> the dictionary DeePMD-kit's dpmodel deserialises (the keys of its v3 files) */
static PetscErrorCode ToTree(SgDPModel m, SgTree *out)
{
  const SgDPConfig *c = &m->cfg;
  PetscInt          nt = c->ntypes, nnei = c->nnei;
  SgTree            root, model, vars, desc, fit, nets, net, layers, envm, mds, dd, ff, l;
  PetscInt64        d3[3] = {1, nt, 1}, ds[3] = {nt, nnei, c->radial ? 1 : 4}, d2[2] = {nt, 1};
  const PetscInt    nk = c->radial ? 1 : 4; /* columns of the statistics */
  double           *buf;

  PetscFunctionBegin;
  PetscCall(SgTreeCreate(SG_TREE_DICT, &root));
  PetscCall(SgTreeDictAddString(root, "software", "surge"));
  PetscCall(SgTreeDictAddString(root, "version", "surge deepmd model version 1"));
  PetscCall(SgTreeDictAdd(root, "@variables", SG_TREE_DICT, &vars));
  PetscCall(SgTreeDictAddString(root, "backend", "surge"));
  PetscCall(SgTreeDictAdd(root, "model", SG_TREE_DICT, &model));
  PetscCall(SgTreeDictAddString(model, "@class", "Model"));
  PetscCall(SgTreeDictAdd(model, "@variables", SG_TREE_DICT, &vars));
  PetscCall(PetscCalloc1(PetscMax(nt * nnei * 4, 2 * nt), &buf));
  PetscCall(SgTreeDictAddArray(vars, "out_bias", "float64", 3, d3, buf)); /* the bias lives in bias_atom_e */
  for (PetscInt t = 0; t < nt; t++) buf[t] = 1;
  PetscCall(SgTreeDictAddArray(vars, "out_std", "float64", 3, d3, buf));
  PetscCall(SgTreeDictAddInt(model, "@version", 2));
  PetscCall(SgTreeDictAdd(model, "atom_exclude_types", SG_TREE_LIST, &l));
  /* descriptor */
  PetscCall(SgTreeDictAdd(model, "descriptor", SG_TREE_DICT, &desc));
  PetscCall(SgTreeDictAddString(desc, "@class", "Descriptor"));
  PetscCall(SgTreeDictAdd(desc, "@variables", SG_TREE_DICT, &vars));
  for (int w = 0; w < 2; w++) {
    for (PetscInt t = 0; t < nt; t++)
      for (PetscInt s = 0; s < nnei; s++)
        for (int k = 0; k < nk; k++) {
          size_t a = 4 * (t * nnei + s) + k, b = nk * (t * nnei + s) + k;
          if (m->sdavg) buf[b] = w ? m->sdstd[a] : m->sdavg[a];
          else buf[b] = w ? m->dstd[t][k] : m->davg[t][k];
        }
    PetscCall(SgTreeDictAddArray(vars, w ? "dstd" : "davg", "float64", 3, ds, buf));
  }
  PetscCall(SgTreeDictAddInt(desc, "@version", 2));
  PetscCall(SgTreeDictAddString(desc, "activation_function", SgDPActNames[c->act]));
  if (!c->radial) PetscCall(SgTreeDictAddInt(desc, "axis_neuron", c->axis));
  PetscCall(Collection(desc, "embeddings", "embedding_network", c->type_pair ? 2 : 1, nt, &nets));
  for (PetscInt dpi = 0; dpi < SgDPNumEmbed(c); dpi++) { /* DeePMD-kit's order: (ti, tt) at ti + nt * tt */
    PetscInt       e = c->type_pair ? (dpi % nt) * nt + dpi / nt : dpi;
    const SgDPNet *N = &m->enet[e];
    PetscCall(SgTreeListAdd(nets, SG_TREE_DICT, &net));
    PetscCall(SgTreeDictAddString(net, "@class", "EmbeddingNetwork"));
    PetscCall(SgTreeDictAddInt(net, "@version", 2));
    PetscCall(SgTreeDictAddString(net, "activation_function", SgDPActNames[c->act]));
    PetscCall(SgTreeDictAddBool(net, "bias", PETSC_TRUE));
    PetscCall(SgTreeDictAddInt(net, "in_dim", 1));
    PetscCall(SgTreeDictAdd(net, "layers", SG_TREE_LIST, &layers));
    for (PetscInt q = 0; q < N->nl; q++) PetscCall(LayerTree(layers, &N->l[q], PETSC_TRUE));
    PetscCall(Ints(net, "neuron", c->nemb, c->emb));
    PetscCall(SgTreeDictAddString(net, "precision", "float64"));
    PetscCall(SgTreeDictAddBool(net, "resnet_dt", c->emb_resnet_dt));
  }
  PetscCall(SgTreeDictAdd(desc, "env_mat", SG_TREE_DICT, &envm));
  PetscCall(SgTreeDictAddReal(envm, "rcut", c->rcut));
  PetscCall(SgTreeDictAddReal(envm, "rcut_smth", c->rcut_smth));
  PetscCall(SgTreeDictAddReal(desc, "env_protection", 0.0));
  PetscCall(Pairs(desc, "exclude_types", c));
  PetscCall(Ints(desc, "neuron", c->nemb, c->emb));
  PetscCall(SgTreeDictAddString(desc, "precision", "float64"));
  PetscCall(SgTreeDictAddReal(desc, "rcut", c->rcut));
  PetscCall(SgTreeDictAddReal(desc, "rcut_smth", c->rcut_smth));
  PetscCall(SgTreeDictAddBool(desc, "resnet_dt", c->emb_resnet_dt));
  PetscCall(Ints(desc, "sel", nt, c->sel));
  PetscCall(SgTreeDictAddBool(desc, "set_davg_zero", PETSC_FALSE));
  PetscCall(SgTreeDictAddNull(desc, "spin"));
  PetscCall(SgTreeDictAddBool(desc, "trainable", PETSC_TRUE));
  PetscCall(SgTreeDictAddString(desc, "type", c->radial ? "se_r" : "se_e2_a"));
  PetscCall(Strings(desc, "type_map", nt, (char(*)[16])c->type_map));
  PetscCall(SgTreeDictAddBool(desc, "type_one_side", c->type_pair ? PETSC_FALSE : PETSC_TRUE));
  /* fitting */
  PetscCall(SgTreeDictAdd(model, "fitting", SG_TREE_DICT, &fit));
  PetscCall(SgTreeDictAddString(fit, "@class", "Fitting"));
  PetscCall(SgTreeDictAdd(fit, "@variables", SG_TREE_DICT, &vars));
  PetscCall(SgTreeDictAddNull(vars, "aparam_avg"));
  PetscCall(SgTreeDictAddNull(vars, "aparam_inv_std"));
  PetscCall(SgTreeDictAddArray(vars, "bias_atom_e", "float64", 2, d2, m->bias));
  PetscCall(SgTreeDictAddNull(vars, "fparam_avg"));
  PetscCall(SgTreeDictAddNull(vars, "fparam_inv_std"));
  PetscCall(SgTreeDictAddInt(fit, "@version", 2));
  PetscCall(SgTreeDictAddString(fit, "activation_function", SgDPActNames[c->fit_act]));
  PetscCall(SgTreeDictAddNull(fit, "atom_ener"));
  PetscCall(SgTreeDictAddInt(fit, "dim_descrpt", SgDPDescDim(c)));
  PetscCall(SgTreeDictAddInt(fit, "dim_out", 1));
  PetscCall(SgTreeDictAdd(fit, "exclude_types", SG_TREE_LIST, &l));
  PetscCall(SgTreeDictAddNull(fit, "layer_name"));
  PetscCall(SgTreeDictAddBool(fit, "mixed_types", PETSC_FALSE));
  PetscCall(Collection(fit, "nets", "fitting_network", 1, nt, &nets));
  for (PetscInt t = 0; t < nt; t++) {
    const SgDPNet *N = &m->fnet[t];
    PetscCall(SgTreeListAdd(nets, SG_TREE_DICT, &net));
    PetscCall(SgTreeDictAddString(net, "@class", "FittingNetwork"));
    PetscCall(SgTreeDictAddInt(net, "@version", 1));
    PetscCall(SgTreeDictAddString(net, "activation_function", SgDPActNames[c->fit_act]));
    PetscCall(SgTreeDictAddBool(net, "bias_out", PETSC_TRUE));
    PetscCall(SgTreeDictAddInt(net, "in_dim", SgDPDescDim(c)));
    PetscCall(SgTreeDictAdd(net, "layers", SG_TREE_LIST, &layers));
    for (PetscInt q = 0; q < N->nl; q++) PetscCall(LayerTree(layers, &N->l[q], q < N->nl - 1 ? PETSC_TRUE : PETSC_FALSE));
    PetscCall(Ints(net, "neuron", c->nfit, c->fit));
    PetscCall(SgTreeDictAddInt(net, "out_dim", 1));
    PetscCall(SgTreeDictAddString(net, "precision", "float64"));
    PetscCall(SgTreeDictAddBool(net, "resnet_dt", c->fit_resnet_dt));
  }
  PetscCall(Ints(fit, "neuron", c->nfit, c->fit));
  PetscCall(SgTreeDictAddInt(fit, "ntypes", nt));
  PetscCall(SgTreeDictAddInt(fit, "numb_aparam", 0));
  PetscCall(SgTreeDictAddInt(fit, "numb_fparam", 0));
  PetscCall(SgTreeDictAddString(fit, "precision", "float64"));
  PetscCall(SgTreeDictAddNull(fit, "rcond"));
  PetscCall(SgTreeDictAddBool(fit, "resnet_dt", c->fit_resnet_dt));
  PetscCall(SgTreeDictAddNull(fit, "spin"));
  PetscCall(SgTreeDictAddBool(fit, "tot_ener_zero", PETSC_FALSE));
  PetscCall(SgTreeDictAdd(fit, "trainable", SG_TREE_LIST, &l));
  for (PetscInt q = 0; q <= c->nfit; q++) {
    SgTree b;
    PetscCall(SgTreeListAdd(l, SG_TREE_BOOL, &b));
    b->b = PETSC_TRUE;
  }
  PetscCall(SgTreeDictAddString(fit, "type", "ener"));
  PetscCall(Strings(fit, "type_map", nt, (char(*)[16])c->type_map));
  PetscCall(SgTreeDictAddBool(fit, "use_aparam_as_mask", PETSC_FALSE));
  PetscCall(SgTreeDictAddString(fit, "var_name", "energy"));
  PetscCall(Pairs(model, "pair_exclude_types", c));
  PetscCall(SgTreeDictAddNull(model, "preset_out_bias"));
  PetscCall(SgTreeDictAddNull(model, "rcond"));
  PetscCall(SgTreeDictAddString(model, "type", "standard"));
  PetscCall(Strings(model, "type_map", nt, (char(*)[16])c->type_map));
  /* the input DeePMD-kit would train this model from (dp convert-backend keeps it as the model's script) */
  PetscCall(SgTreeDictAdd(root, "model_def_script", SG_TREE_DICT, &mds));
  PetscCall(Strings(mds, "type_map", nt, (char(*)[16])c->type_map));
  PetscCall(SgTreeDictAdd(mds, "descriptor", SG_TREE_DICT, &dd));
  PetscCall(SgTreeDictAddString(dd, "type", c->radial ? "se_e2_r" : "se_e2_a"));
  PetscCall(Ints(dd, "sel", nt, c->sel));
  PetscCall(SgTreeDictAddReal(dd, "rcut_smth", c->rcut_smth));
  PetscCall(SgTreeDictAddReal(dd, "rcut", c->rcut));
  PetscCall(Ints(dd, "neuron", c->nemb, c->emb));
  PetscCall(SgTreeDictAddBool(dd, "resnet_dt", c->emb_resnet_dt));
  if (!c->radial) PetscCall(SgTreeDictAddInt(dd, "axis_neuron", c->axis));
  PetscCall(SgTreeDictAddBool(dd, "type_one_side", c->type_pair ? PETSC_FALSE : PETSC_TRUE));
  PetscCall(SgTreeDictAddString(dd, "activation_function", SgDPActNames[c->act]));
  PetscCall(Pairs(dd, "exclude_types", c));
  PetscCall(SgTreeDictAddString(dd, "precision", "float64"));
  PetscCall(SgTreeDictAddInt(dd, "seed", c->seed));
  PetscCall(SgTreeDictAdd(mds, "fitting_net", SG_TREE_DICT, &ff));
  PetscCall(SgTreeDictAddString(ff, "type", "ener"));
  PetscCall(Ints(ff, "neuron", c->nfit, c->fit));
  PetscCall(SgTreeDictAddBool(ff, "resnet_dt", c->fit_resnet_dt));
  PetscCall(SgTreeDictAddString(ff, "activation_function", SgDPActNames[c->fit_act]));
  PetscCall(SgTreeDictAddString(ff, "precision", "float64"));
  PetscCall(SgTreeDictAddInt(ff, "seed", c->seed));
  PetscCall(PetscFree(buf));
  *out = root;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* surge's fitting nets have residuals only between equal hidden widths after the first layer;
   DeePMD-kit's have them wherever widths are equal or double: refuse what DeePMD-kit would read
   as another net */
static PetscErrorCode CheckExportable(SgDPModel m, const char in[])
{
  const SgDPConfig *c = &m->cfg;
  PetscInt          w = SgDPDescDim(c);

  PetscFunctionBegin;
  for (PetscInt l = 0; l < c->nfit; l++) {
    PetscBool surge = (PetscBool)(l > 0 && c->fit[l] == w), dp = (PetscBool)(c->fit[l] == w || c->fit[l] == 2 * w);
    PetscCheck(surge == dp, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "surge model export: %s: fitting layer %" PetscInt_FMT " (%" PetscInt_FMT " -> %" PetscInt_FMT ") would get a residual connection in DeePMD-kit that it has not here", in, l, w, c->fit[l]);
    w = c->fit[l];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The files of a model command through the write path (io/include/sgwrite.h), checked on every rank
   before anything is read or computed: the input is registered, so an output that is the input (by
   name, link or inode) is refused, and an existing output is replaced only when it is surge's file of
   the same kind (-overwrite for someone else's). */
PetscErrorCode SgDPCheckOutput(MPI_Comm comm, PetscInt nin, const char *const in[], const char out[], const char kind[])
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < nin; k++) PetscCall(SgInputRegister(in[k], SG_PATH_IN));
  PetscCall(SgWriteCheck(comm, "the output", out, kind));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DeePMD-kit's .yaml through the write path: PATH.tmp, its first line the comment "# surge-file:
   deepmd-kit model" (YAML ignores it; it marks the file as surge's), committed by a rename */
static PetscErrorCode WriteYAML(const char out[], SgTree t)
{
  char      *text;
  size_t     len, put;
  SgTextFile tf;
  FILE      *fp;

  PetscFunctionBegin;
  PetscCall(SgTreeEmitYAML(t, &text, &len));
  PetscCall(SgTextFileOpen("the output", out, SG_FILE_DP, "#", PETSC_FALSE, &tf));
  PetscCall(SgTextFileGetFILE(tf, &fp));
  put = fwrite(text, 1, len, fp);
  PetscCall(PetscFree(text));
  if (put != len) {
    PetscCall(SgTextFileDiscard(&tf));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s (disk full?); the earlier file (if any) is unchanged", out);
  }
  PetscCall(SgTextFileClose(&tf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelImport(MPI_Comm comm, const char in[], const char out[])
{
  SgDPModel   m;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCheck(Suffix(out, ".h5"), comm, PETSC_ERR_USER_INPUT, "surge model import IN.dp|IN.yaml OUT.h5: the output is a surge model file ending in .h5, got %s", out);
  PetscCall(SgDPCheckOutput(comm, 1, &in, out, SG_FILE_MODEL));
  PetscCall(SgDeepmdReadDeePMDKit(in, &m)); /* every rank reads: a bad file is refused on all of them alike */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0 writes; its failure (a full disk) is every rank's, one line */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) ierr = SgDPModelSave(m, out);
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  {
    char tm[SG_DP_MAXT * 18] = "";
    for (PetscInt t = 0; t < m->cfg.ntypes; t++) {
      if (t) PetscCall(PetscStrlcat(tm, ", ", sizeof tm));
      PetscCall(PetscStrlcat(tm, m->cfg.type_map[t], sizeof tm));
    }
    PetscCall(PetscPrintf(comm, "surge model import: %s -> %s (%s, type_map [%s], rcut %g, %s embedding nets, activation %s/%s%s%s)\n", in, out, m->cfg.radial ? "se_e2_r" : "se_e2_a", tm, (double)m->cfg.rcut, m->cfg.type_pair ? "type-pair" : "one-side", SgDPActNames[m->cfg.act], SgDPActNames[m->cfg.fit_act], m->sdavg ? ", per-slot davg/dstd" : "", SgDPHasExclusions(&m->cfg) ? ", exclude_types" : ""));
  }
  PetscCall(SgDPModelDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdModelExport(MPI_Comm comm, const char in[], const char out[])
{
  SgDPModel   m;
  SgTree      t = NULL;
  PetscMPIInt rank;
  PetscBool   dp = Suffix(out, ".dp"), yaml = (PetscBool)(Suffix(out, ".yaml") || Suffix(out, ".yml"));

  PetscFunctionBegin;
  PetscCheck(dp || yaml, comm, PETSC_ERR_USER_INPUT, "surge model export IN.h5 OUT.dp|OUT.yaml: the output format is chosen by its suffix (.dp or .yaml), got %s", out);
  PetscCall(SgDPCheckOutput(comm, 1, &in, out, SG_FILE_DP));
  PetscCall(SgDPModelLoad(in, &m));
  PetscCall(CheckExportable(m, in));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* rank 0 writes; its failure (a full disk) is every rank's, one line */
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(SgAgreeBegin());
    if (!rank) {
      ierr = ToTree(m, &t);
      if (!ierr) ierr = dp ? SgDPFileWrite(out, t) : WriteYAML(out, t);
      if (t) PetscCall(SgTreeDestroy(&t));
    }
    PetscCall(SgAgreeEnd(comm, ierr));
  }
  PetscCall(PetscPrintf(comm, "surge model export: %s -> %s (DeePMD-kit %s, %s, %" PetscInt_FMT " types)%s\n", in, out, dp ? ".dp" : ".yaml", m->cfg.radial ? "se_r" : "se_e2_a", m->cfg.ntypes, m->tab.on ? "; the tabulation is not exported (dp compress makes DeePMD-kit's own)" : ""));
  PetscCall(SgDPModelDestroy(&m));
  PetscFunctionReturn(PETSC_SUCCESS);
}
