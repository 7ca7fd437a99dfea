/* md.forces from Deep Potential models: the provider the "deepmd" surrogate serves, and its functions.
   Deck:  md: {forces: deepmd, deepmd_models: [m0.h5, m1.h5, ...], deepmd_compress: true}
   Forces come from the first model (as DeePMD-kit's LAMMPS pair style does with several models);
   with K >= 2 models SgDeepmdForcesUncertainty gives the max force deviation (model deviation). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include "deepmd.h"
#include "sgdeepmd.h"
#include "sgforces.h"

static PetscErrorCode Ensure(SgDeepmdForces *c, PetscInt nall)
{
  PetscFunctionBegin;
  if (nall > c->cap) {
    PetscInt *tm = c->tmap;
    c->tmap      = NULL;
    PetscCall(PetscFree(c->tbuf));
    PetscCall(PetscFree(c->fbuf));
    PetscCall(PetscMalloc1(nall, &c->tbuf));
    PetscCall(PetscMalloc1(3 * nall * (c->K + 1), &c->fbuf));
    c->tmap = tm;
    c->cap  = nall;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesCreate(PetscInt K, const char *const paths[], SgDeepmdForces **ctx)
{
  SgDeepmdForces *c;

  PetscFunctionBegin;
  PetscCheck(K >= 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: no model files given");
  PetscCall(PetscNew(&c));
  c->K    = K;
  c->comm = MPI_COMM_NULL;
  PetscCall(PetscMalloc1(K, &c->models));
  for (PetscInt k = 0; k < K; k++) {
    PetscCall(SgDeepmdLoad(paths[k], &c->models[k]));
    PetscCheck(c->models[k]->cfg.ntypes == c->models[0]->cfg.ntypes, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: models %s and %s have different type maps", paths[0], paths[k]);
  }
  *ctx = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Neighbours beyond sel: DeePMD-kit (and LAMMPS's pair style deepmd) keep the nearest sel of each
   type and drop the rest, with a warning ("neighbor list length of type T is not enough"); the model
   never saw such environments and its energy is no longer smooth at rcut there. Reported the same
   way: one line the first time, the totals at the end; the fix is a larger sel and retraining. */
static void SelLine(SgDeepmdForces *c, const char *when)
{
  SgDeepmd m = c->models[0];
  char     seen[512] = "";
  size_t   k         = 0;

  for (PetscInt t = 0; t < m->cfg.ntypes && k < sizeof seen; t++) k += (size_t)snprintf(seen + k, sizeof seen - k, "%s%s %" PetscInt_FMT " (sel %" PetscInt_FMT ")", t ? ", " : "", m->cfg.type_map[t], c->sel_maxseen[t], m->cfg.sel[t]);
  (void)PetscPrintf(c->comm == MPI_COMM_NULL ? PETSC_COMM_SELF : c->comm,
                    "deepmd: warning: %s %" PetscInt64_FMT " neighbours within rcut %g beyond the model's sel were dropped (the nearest sel kept, as DeePMD-kit does) in %" PetscInt64_FMT " of %" PetscInt64_FMT " force evaluations; most neighbours around one atom: %s: forces there are not the trained model's; retrain with sel at least those counts (dp neighbor-stat)\n",
                    when, c->sel_dropped, (double)m->cfg.rcut, c->sel_over, c->sel_calls, seen);
}

static PetscErrorCode SelCount(SgDeepmdForces *c)
{
  SgDeepmd   m = c->models[0];
  PetscInt64 now;

  PetscFunctionBegin;
  if (!c->sel_maxseen) PetscCall(PetscCalloc1(m->cfg.ntypes, &c->sel_maxseen));
  now = m->sel_dropped - c->sel_local;
  c->sel_local = m->sel_dropped;
  for (PetscInt t = 0; t < m->cfg.ntypes; t++) c->sel_maxseen[t] = m->sel_maxseen[t];
  if (c->comm != MPI_COMM_NULL) { /* every rank evaluates forces at every step: in step with the others */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &now, 1, MPIU_INT64, MPI_SUM, c->comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c->sel_maxseen, (PetscMPIInt)m->cfg.ntypes, MPIU_INT, MPI_MAX, c->comm));
  }
  c->sel_calls++;
  c->sel_dropped += now;
  c->sel_over += now > 0;
  if (now && !c->sel_warned) SelLine(c, "so far");
  c->sel_warned = c->sel_warned || now;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesDestroy(void *ctx)
{
  SgDeepmdForces *c = (SgDeepmdForces *)ctx;

  PetscFunctionBegin;
  if (c->sel_dropped) SelLine(c, "over the run");
  PetscCall(PetscFree(c->sel_maxseen));
  for (PetscInt k = 0; k < c->K; k++) PetscCall(SgDeepmdDestroy(&c->models[k]));
  PetscCall(PetscFree(c->models));
  PetscCall(PetscFree(c->tbuf));
  PetscCall(PetscFree(c->fbuf));
  PetscCall(PetscFree(c->tmap));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MapTypes(SgDeepmdForces *c, const SgForcesInput *in)
{
  PetscInt nall = in->n + in->nghost;

  PetscFunctionBegin;
  PetscCall(Ensure(c, nall));
  for (PetscInt i = 0; i < nall; i++) c->tbuf[i] = c->tmap ? c->tmap[in->type[i]] : in->type[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesFn(void *ctx, const SgForcesInput *in, SgForcesOutput *out)
{
  SgDeepmdForces *c = (SgDeepmdForces *)ctx;

  PetscFunctionBegin;
  PetscCall(MapTypes(c, in));
  PetscCall(SgDeepmdComputeGhosts(c->models[0], in->n, in->n + in->nghost, in->x, c->tbuf, &out->energy, out->f, out->virial));
  PetscCall(SelCount(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ghost -> owned atom that it images (same wrapped fractional coordinates), or -1 */
typedef struct {
  long long k[3];
  PetscInt  i;
} Key;
static int KeyCmp(const void *a, const void *b)
{
  const Key *p = a, *q = b;
  for (int d = 0; d < 3; d++)
    if (p->k[d] != q->k[d]) return p->k[d] < q->k[d] ? -1 : 1;
  return 0;
}
static void FracKey(const PetscReal inv[9], const PetscReal *x, long long k[3])
{
  const long long Q = 1000000;
  for (int q = 0; q < 3; q++) {
    PetscReal s = x[0] * inv[q] + x[1] * inv[3 + q] + x[2] * inv[6 + q];
    s -= floor(s);
    k[q] = ((long long)llround(s * Q)) % Q;
  }
}

/* Every model's forces on the owned atoms (ghost rows folded onto their owners), F[K][3n], and this
   rank's share of every model's virial, V[K][9]; sigma[n] the force deviation of each owned atom. */
static PetscErrorCode EnsembleForces(SgDeepmdForces *c, const SgForcesInput *in, PetscReal *F, PetscReal *V, PetscReal *sigma)
{
  PetscInt  n = in->n, nall = in->n + in->nghost, *owner;
  PetscReal e, inv[9];
  Key      *keys;

  PetscFunctionBegin;
  PetscCheck(c->K >= 2, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd: the model deviation needs >= 2 models (md deepmd_models lists %" PetscInt_FMT ")", c->K);
  PetscCall(MapTypes(c, in));
  PetscCall(PetscMalloc2(nall, &owner, n, &keys));
  if (in->fold_ghosts) { /* the engine folds each model's ghost forces onto their owners, on any rank */
    for (PetscInt k = 0; k < c->K; k++) {
      PetscCall(SgDeepmdComputeGhosts(c->models[k], n, nall, in->x, c->tbuf, &e, c->fbuf, V + 9 * k));
      PetscCall(in->fold_ghosts(in->fold_ctx, c->fbuf));
      PetscCall(PetscArraycpy(F + 3 * n * k, c->fbuf, 3 * n));
    }
  } else { /* fold ghost forces onto the owned atoms they image (periodic images on this rank) */
    const PetscReal *a = in->box, *b = in->box + 3, *cc = in->box + 6;
    PetscReal        cr[9], vol;
    cr[0] = b[1] * cc[2] - b[2] * cc[1];
    cr[1] = b[2] * cc[0] - b[0] * cc[2];
    cr[2] = b[0] * cc[1] - b[1] * cc[0];
    cr[3] = cc[1] * a[2] - cc[2] * a[1];
    cr[4] = cc[2] * a[0] - cc[0] * a[2];
    cr[5] = cc[0] * a[1] - cc[1] * a[0];
    cr[6] = a[1] * b[2] - a[2] * b[1];
    cr[7] = a[2] * b[0] - a[0] * b[2];
    cr[8] = a[0] * b[1] - a[1] * b[0];
    vol   = a[0] * cr[0] + a[1] * cr[1] + a[2] * cr[2];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) inv[3 * j + i] = vol != 0 ? cr[3 * i + j] / vol : 0;
    for (PetscInt i = 0; i < n; i++) {
      FracKey(inv, in->x + 3 * i, keys[i].k);
      keys[i].i = i;
    }
    qsort(keys, n, sizeof(Key), KeyCmp);
    for (PetscInt g = 0; g < nall; g++) {
      Key q, *hit;
      if (g < n || vol == 0) {
        owner[g] = g < n ? g : -1;
        continue;
      }
      FracKey(inv, in->x + 3 * g, q.k);
      hit      = bsearch(&q, keys, n, sizeof(Key), KeyCmp);
      owner[g] = hit ? hit->i : -1;
    }
    for (PetscInt k = 0; k < c->K; k++) {
      PetscReal *f = c->fbuf, *Fk = F + 3 * n * k;
      PetscCall(SgDeepmdComputeGhosts(c->models[k], n, nall, in->x, c->tbuf, &e, f, V + 9 * k));
      PetscCall(PetscArrayzero(Fk, 3 * n));
      for (PetscInt g = 0; g < nall; g++)
        if (owner[g] >= 0)
          for (int q = 0; q < 3; q++) Fk[3 * owner[g] + q] += f[3 * g + q];
    }
  }
  for (PetscInt i = 0; i < n; i++) { /* two-pass variance: sigma_i^2 = <|F_i - <F_i>|^2> */
    PetscReal m[3] = {0, 0, 0}, s = 0;
    for (PetscInt k = 0; k < c->K; k++)
      for (int q = 0; q < 3; q++) m[q] += F[3 * n * k + 3 * i + q] / c->K;
    for (PetscInt k = 0; k < c->K; k++)
      for (int q = 0; q < 3; q++) s += PetscSqr(F[3 * n * k + 3 * i + q] - m[q]) / c->K;
    sigma[i] = sqrt(s);
  }
  PetscCall(PetscFree2(owner, keys));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesUncertainty(void *ctx, const SgForcesInput *in, PetscReal *dev)
{
  SgDeepmdForces *c = (SgDeepmdForces *)ctx;
  PetscReal      *F, *V, *sigma, mx = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(3 * in->n * c->K, &F, 9 * c->K, &V, in->n, &sigma));
  PetscCall(EnsembleForces(c, in, F, V, sigma));
  for (PetscInt i = 0; i < in->n; i++) mx = PetscMax(mx, sigma[i]);
  *dev = mx;
  PetscCall(PetscFree3(F, V, sigma));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesModelDevi(void *ctx, const SgForcesInput *in, MPI_Comm comm, PetscReal devi[6])
{
  SgDeepmdForces *c = (SgDeepmdForces *)ctx;
  PetscReal      *F, *V, *sigma, loc[3] = {0, PETSC_MAX_REAL, 0}, mx, mn, sum[2], N;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(3 * in->n * c->K, &F, 9 * c->K, &V, in->n, &sigma));
  PetscCall(EnsembleForces(c, in, F, V, sigma));
  for (PetscInt i = 0; i < in->n; i++) {
    loc[0] = PetscMax(loc[0], sigma[i]);
    loc[1] = PetscMin(loc[1], sigma[i]);
    loc[2] += sigma[i];
  }
  PetscCallMPI(MPI_Allreduce(&loc[0], &mx, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&loc[1], &mn, 1, MPIU_REAL, MPIU_MIN, comm));
  sum[0] = loc[2];
  sum[1] = (PetscReal)in->n;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPIU_REAL, MPIU_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, V, (PetscMPIInt)(9 * c->K), MPIU_REAL, MPIU_SUM, comm)); /* each model's whole virial */
  N = sum[1];
  devi[0] = 0;
  devi[1] = PETSC_MAX_REAL;
  devi[2] = 0;
  for (int q = 0; q < 9; q++) {
    PetscReal m = 0, s = 0, e;
    for (PetscInt k = 0; k < c->K; k++) m += V[9 * k + q] / c->K;
    for (PetscInt k = 0; k < c->K; k++) s += PetscSqr(V[9 * k + q] - m) / c->K;
    e = sqrt(s) / N;
    devi[0] = PetscMax(devi[0], e);
    devi[1] = PetscMin(devi[1], e);
    devi[2] += e / 9;
  }
  devi[3] = mx;
  devi[4] = mn;
  devi[5] = sum[0] / N;
  PetscCall(PetscFree3(F, V, sigma));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ProviderDestroy(void *ctx)
{
  PetscFunctionBegin;
  PetscCall(SgDeepmdForcesDestroy(ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgDeepmdForcesProviderCreate(const SgForcesProviderInfo *info, SgForcesProvider *p)
{
  PetscOptionItems *PetscOptionsObject = info->PetscOptionsObject;
  char             *paths[16];
  PetscInt          K = 16;
  PetscBool         set, compress = PETSC_FALSE;
  PetscReal         step = 0.01, rmin = 0.5;
  SgDeepmdForces   *c;
  char              first[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(SgOptionsPathArray("-deepmd_models", "Deep Potential model files (HDF5); forces from the first, deviation from all", SG_PATH_IN, paths, &K, &set));
  PetscCheck(set && K >= 1, info->comm, PETSC_ERR_USER_INPUT, "md forces 'deepmd' needs model files: md: {deepmd_models: [model.h5, ...]}");
  PetscCall(SgOptionsBool("-deepmd_compress", "Tabulate the embedding nets (compressed model)", compress, &compress, NULL));
  PetscCall(SgOptionsReal("-deepmd_compress_step", "Table step in the normalised embedding input", "", step, &step, NULL, 1e-5, 1));
  PetscCall(SgOptionsReal("-deepmd_compress_rmin", "Smallest distance the table covers (the nets serve below)", "length", rmin, &rmin, NULL, 1e-3, 100));
  PetscCall(SgDeepmdForcesCreate(K, (const char *const *)paths, &c));
  c->comm = info->comm;
  PetscCall(PetscStrncpy(first, paths[0], sizeof first)); /* named in a refusal below */
  for (PetscInt k = 0; k < K; k++) PetscCall(PetscFree(paths[k]));
  if (compress)
    for (PetscInt k = 0; k < K; k++) PetscCall(SgDeepmdCompress(c->models[k], step, rmin));
  /* md type -> model type by element name; by index for the numbered types of a LAMMPS data file
   ("1", "2": LAMMPS's pair_coeff order). A named species the type map lacks is outside what the
   model was trained for: refused, as the other surrogates refuse another Ra or box. */
  PetscCall(PetscMalloc1(info->ntypes, &c->tmap));
  for (PetscInt t = 0; t < info->ntypes; t++) {
    PetscInt hit = -1;
    for (PetscInt q = 0; q < c->models[0]->cfg.ntypes; q++)
      if (!strcmp(info->tname[t], c->models[0]->cfg.type_map[q])) hit = q;
    if (hit < 0 && !isdigit((unsigned char)info->tname[t][0])) {
      char known[256] = "";
      for (PetscInt q = 0; q < c->models[0]->cfg.ntypes; q++) {
        if (q) PetscCall(PetscStrlcat(known, ", ", sizeof known));
        PetscCall(PetscStrlcat(known, c->models[0]->cfg.type_map[q], sizeof known));
      }
      PetscCall(PetscFree(c->tmap));
      SETERRQ(info->comm, PETSC_ERR_USER_INPUT, "deepmd: the system has %s atoms but model %s was trained on %s only: name the atoms as in its type map, or use a model trained on %s", info->tname[t], first, known, info->tname[t]);
    }
    if (hit < 0) {
      PetscCheck(t < c->models[0]->cfg.ntypes, info->comm, PETSC_ERR_USER_INPUT, "deepmd: md type %s (%" PetscInt_FMT ") is not in the model's type map", info->tname[t], t);
      hit = t;
    }
    c->tmap[t] = hit;
  }
  PetscCall(PetscStrncpy(p->name, "deepmd", sizeof p->name));
  p->fn     = SgDeepmdForcesFn;
  p->ctx    = c;
  p->cutoff = 0;
  for (PetscInt k = 0; k < K; k++) p->cutoff = PetscMax(p->cutoff, c->models[k]->cfg.rcut);
  p->newton  = PETSC_TRUE;
  p->destroy = ProviderDestroy;
  /* with an ensemble the model deviation is the uncertainty the adaptive swap policy reads */
  p->uncertainty = K >= 2 ? SgDeepmdForcesUncertainty : NULL;
  p->model_devi  = K >= 2 ? SgDeepmdForcesModelDevi : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
