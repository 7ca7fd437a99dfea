/* The mffn surrogate serving field.superres (surrogates/mffn/superres.c), through the slot kind's
   own entry point SgFieldSuperresProviderCreate("mffn", ...), on a tiny model (widths 2 3 4, two
   [1,2,2] poolings, latent 3, ImNet 5 4, BN without batch statistics) saved to DIR with the physics of
   inputs/mffn (Ra = 1e5, Pr = 1; latent steps 0.25, 0.0625, 0.0625 in t, z, x) and a block of 2 x 8 x 16
   (t, z, x) points, x periodic with period 1. Run on 1 and 2 ranks (each rank asks for its own points).

     1. The network's answer at 40 points (inside, between the last and the first x column, at x
        shifted by +-1 period, and in the extrapolation band above the last z row) equals a reference
        computed here independently: the block normalised with the model's statistics, wrapped by 2
        points on each side of x, SgMFFNEncode, SgMFFNDecode at latent coordinates computed from the
        physical ones, de-normalised (1e-13 relative). Checks the normalisation, the halo, the periodic
        mapping and the extrapolation band.
     2. A block answered after an uncertainty call (the encoding cached) equals a fresh provider's
        answer bit for bit.
     3. The trilinear baseline (mffn baseline trilinear) reproduces a field linear in t and z and
        periodic piecewise linear in x exactly at block points and cell midpoints, across the periodic
        seam too (1e-13).
     4. The uncertainty (mean |PDE residual| over 256 points) is finite, positive, the same on every
        rank (it is reduced), and on 2 ranks equals what one rank alone computes to 1e-12.
     6. `mffn project`: each rank asks for its own rows of a grid (1 x 12 x 32, x spanning the
        period); u, w equal the whole grid answered unprojected on one rank and projected by
        SgMFFNProjector (1e-12), p, b are untouched; scattered points are refused (PETSC_ERR_ARG_WRONG).
     5. Refusals: a block whose t spacing is not the model's, a point outside the extrapolation band,
        channels in another order (PETSC_ERR_ARG_*), and a solver whose Rayleigh number is not the
        model's, or a missing model file (PETSC_ERR_USER_INPUT, at creation). */
#include <math.h>
#include "sgmffn.h"
#include "sgtrainer.h"
#include "sgsurrogate.h"

PETSC_EXTERN PetscErrorCode SgSurrogateCreate_MFFN(SgSurrogate);

#include "../../lib/sgtestcheck.h"

#define T  2
#define Z  8
#define X  16
#define NQ 40
static const char *const Chan[4] = {"p", "b", "u", "w"}, *const Swapped[4] = {"b", "p", "u", "w"};
static const char *const Pname[2] = {"rayleigh", "prandtl"};
static PetscReal tc[T], zc[Z], xc[X], vals[4 * T * Z * X];

static PetscErrorCode Provider(MPI_Comm comm, PetscReal Ra, const char *baseline, SgFieldSuperresProvider *p, PetscErrorCode *err)
{
  PetscReal           par[2] = {Ra, 1};
  SgFieldProviderInfo info   = {comm, 4, Chan, 2, Pname, par, {0, 0, 0}, {0, 1, 1}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, "boussinesq_", NULL};

  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_baseline", baseline));
  PetscOptionsBegin(comm, "boussinesq_", "test", "test");
  info.PetscOptionsObject = PetscOptionsObject;
  if (err) {
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    *err = SgFieldSuperresProviderCreate("mffn", &info, p);
    PetscCall(PetscPopErrorHandler());
  } else PetscCall(SgFieldSuperresProviderCreate("mffn", &info, p));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgMFFNConfig  c;
  SgMFFN        m;
  SgMFFNPhysics ph;
  SgnnBackend  *be;
  SgnnRng       r;
  PetscInt      fac[3] = {1, 2, 2};
  PetscMPIInt   rank, size;
  char          path[PETSC_MAX_PATH_LEN];
  PetscReal     q[3 * NQ], ref[4 * NQ], v1[4 * NQ], v2[4 * NQ], unc;
  PetscInt      nq = 0, mine[NQ];
  SgFieldSuperresProvider p, p2;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_mffn_superres DIR");
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(SgSurrogateRegister("mffn", SgSurrogateCreate_MFFN));
  /* the model file (rank 0 writes it) */
  PetscCall(SgMFFNConfigDefault(&c));
  c.nlevels = 2;
  c.channels[0] = 2;
  c.channels[1] = 3;
  c.channels[2] = 4;
  c.neck_div = 2;
  c.latent = 3;
  c.nmlp = 2;
  c.mlp[0] = 5;
  c.mlp[1] = 4;
  c.batchnorm = PETSC_FALSE;
  c.pool[0][0] = 1;
  c.pool[0][1] = 2;
  c.pool[0][2] = 2;
  c.pool[1][0] = 1;
  c.pool[1][1] = 2;
  c.pool[1][2] = 2;
  SgCallNN(sgnn_backend_get("cpu", &be));
  PetscCall(SgMFFNCreate(&c, be, SGNN_F64, &m));
  PetscCall(SgMFFNInitWeights(m, 7));
  PetscCall(PetscMemzero(&ph, sizeof ph)); /* the box (ph.length) is not set here: 0 = not recorded, not stack garbage */
  ph.nu = ph.kappa = 1 / PetscSqrtReal(1e5);
  ph.scale[0] = 0.25;
  ph.scale[1] = 0.0625;
  ph.scale[2] = 0.0625;
  for (int k = 0; k < 4; k++) {
    ph.mean[k] = 0.1 * k - 0.1;
    ph.std[k] = 0.2 + 0.1 * k;
  }
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/sr_model.h5", argv[1]));
  if (!rank) PetscCall(SgMFFNSave(m, &ph, fac, path));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_model", path));
  PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_residual_points", "256"));
  /* the block: random values, period 1 in x */
  sgnn_rng_init(&r, 3);
  for (int i = 0; i < T; i++) tc[i] = 1 + 0.25 * i;
  for (int k = 0; k < Z; k++) zc[k] = 0.5 / 32 + 0.0625 * k;
  for (int i = 0; i < X; i++) xc[i] = 0.5 / 64 + 0.0625 * i;
  for (int i = 0; i < 4 * T * Z * X; i++) vals[i] = ph.mean[i / (T * Z * X)] + ph.std[i / (T * Z * X)] * sgnn_rng_normal(&r);
  /* query points: random inside, in the seam cell, shifted by a period, above the last row */
  for (int j = 0; j < NQ; j++) {
    double t = 1 + 0.25 * sgnn_rng_uniform(&r), z = zc[0] + (zc[Z - 1] - zc[0]) * sgnn_rng_uniform(&r), x = sgnn_rng_uniform(&r);
    if (j % 5 == 1) x = xc[X - 1] + 0.0625 * sgnn_rng_uniform(&r); /* between the last column and the first + 1 */
    if (j % 5 == 2) x += (j % 2 ? 1 : -1);                      /* another period */
    if (j % 5 == 3) z = zc[Z - 1] + 0.0625 * 0.9 * sgnn_rng_uniform(&r); /* extrapolation band (< 1 cell) */
    q[3 * j] = t;
    q[3 * j + 1] = z;
    q[3 * j + 2] = x;
  }
  { /* 1. the reference, computed here: normalise, wrap by 2, encode, decode, de-normalise */
    const int Xe = X + 4, shape[5] = {1, 4, T, Z, Xe}, ps[2] = {NQ, 3};
    double     *xb, lat[3 * NQ], o[4 * NQ];
    SgnnTensor  xt, L, pt, y;
    PetscCall(PetscMalloc1(4 * T * Z * Xe, &xb));
    for (int ch = 0; ch < 4; ch++)
      for (int k = 0; k < T * Z; k++)
        for (int i = 0; i < Xe; i++) xb[(ch * T * Z + k) * Xe + i] = (vals[(ch * T * Z + k) * X + ((i - 2) % X + X) % X] - ph.mean[ch]) / ph.std[ch];
    for (int j = 0; j < NQ; j++) {
      double lx = fmod((q[3 * j + 2] - xc[0]) / 0.0625, X);
      lat[3 * j]     = (q[3 * j] - tc[0]) / 0.25;
      lat[3 * j + 1] = (q[3 * j + 1] - zc[0]) / 0.0625;
      lat[3 * j + 2] = (lx < 0 ? lx + X : lx) + 2;
    }
    m->extrapolate = 1;
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 5, shape, xb, &xt));
    PetscCall(SgMFFNEncode(m, xt, &L));
    SgCallNN(sgnn_tensor_from_f64(be, SGNN_F64, 2, ps, lat, &pt));
    PetscCall(SgMFFNDecode(m, L, pt, &y));
    SgCallNN(sgnn_tensor_to_f64(y, o));
    for (int j = 0; j < NQ; j++)
      for (int ch = 0; ch < 4; ch++) ref[ch * NQ + j] = ph.mean[ch] + ph.std[ch] * o[4 * j + ch];
    sgnn_tensor_free(&xt);
    sgnn_tensor_free(&L);
    sgnn_tensor_free(&pt);
    sgnn_tensor_free(&y);
    PetscCall(PetscFree(xb));
  }
  { /* this rank's points: j = rank, rank + size, ... */
    PetscReal qq[3 * NQ];
    SgFieldBlock         B   = {4, Chan, {T, Z, X}, {tc, zc, xc}, {0, 0, 0}, {0, 1, 1}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, vals};
    SgFieldQuery         Q   = {PETSC_FALSE, 0, qq, {0, 0, 0}, {NULL, NULL, NULL}};
    SgFieldSuperresInput in  = {&B, &Q};
    SgFieldSuperresOutput o1 = {v1}, o2 = {v2};
    double               e = 0, scale = 0, ug;
    for (int j = rank; j < NQ; j += size) {
      for (int k = 0; k < 3; k++) qq[3 * nq + k] = q[3 * j + k];
      mine[nq++] = j;
    }
    Q.npoints = nq;
    PetscCall(Provider(PETSC_COMM_WORLD, 1e5, "none", &p, NULL));
    PetscCall(p.uncertainty(p.ctx, &in, &unc)); /* encodes and caches */
    PetscCall(p.fn(p.ctx, &in, &o1));
    for (PetscInt a = 0; a < nq; a++)
      for (int ch = 0; ch < 4; ch++) e = PetscMax(e, PetscAbsReal(v1[ch * nq + a] - ref[ch * NQ + mine[a]])), scale = PetscMax(scale, PetscAbsReal(ref[ch * NQ + mine[a]]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] 1. answer at %" PetscInt_FMT " points (seam, other periods, extrapolation band) vs the reference: %.2e relative\n", rank, nq, e / scale));
    CHECK(e <= 1e-13 * scale, "the provider's answer differs from the reference by %g", e / scale);
    PetscCall(Provider(PETSC_COMM_WORLD, 1e5, "none", &p2, NULL));
    PetscCall(p2.fn(p2.ctx, &in, &o2));
    CHECK(!memcmp(v1, v2, 4 * nq * sizeof *v1), "a cached encoding answers differently from a fresh one");
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "2. answer with the cached encoding = a fresh provider's: %s\n", memcmp(v1, v2, 4 * nq * sizeof *v1) ? "DIFFERENT" : "bit-identical"));
    /* 4. uncertainty */
    PetscCallMPI(MPI_Allreduce(&unc, &ug, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "4. uncertainty (mean |PDE residual| over 256 points): %.17g\n", (double)unc));
    CHECK(unc > 0 && !PetscIsInfOrNanReal(unc) && ug == unc, "uncertainty %g (max over ranks %g)", (double)unc, (double)ug);
    if (size > 1) { /* the same on one rank alone: the points are spread over the ranks and summed */
      SgFieldSuperresProvider ps;
      PetscReal               u1;
      PetscCall(Provider(PETSC_COMM_SELF, 1e5, "none", &ps, NULL));
      PetscCall(ps.uncertainty(ps.ctx, &in, &u1));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "4. ... on one rank alone: %.17g (relative difference %.1e)\n", (double)u1, (double)(PetscAbsReal(u1 - unc) / u1)));
      CHECK(PetscAbsReal(u1 - unc) <= 1e-12 * u1, "uncertainty on %d ranks %g, on one %g", size, (double)unc, (double)u1);
      PetscCall(SgFieldSuperresProviderDestroy(&ps));
    }
    { /* 5. refusals of blocks and points */
      PetscReal      tb[T] = {1, 1.3}, bad[3] = {1.1, zc[Z - 1] + 0.0625 * 1.5, 0.3}, vv[4];
      SgFieldBlock   B2 = B, B3 = B;
      SgFieldQuery   Q1 = {PETSC_FALSE, 1, bad, {0, 0, 0}, {NULL, NULL, NULL}};
      SgFieldSuperresInput i2 = {&B2, &Q}, i3 = {&B, &Q1}, i4 = {&B3, &Q};
      PetscErrorCode e2, e3, e4;
      SgFieldSuperresOutput ov = {v2}, o4 = {vv};
      B2.coord[0] = tb;
      B3.channel  = Swapped;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      e2 = p2.fn(p2.ctx, &i2, &ov);
      e3 = p2.fn(p2.ctx, &i3, &o4);
      e4 = p2.fn(p2.ctx, &i4, &ov);
      PetscCall(PetscPopErrorHandler());
      CHECK(e2 == PETSC_ERR_ARG_WRONG && e3 == PETSC_ERR_ARG_OUTOFRANGE && e4 == PETSC_ERR_ARG_WRONG, "refusals: t spacing %d, point outside the band %d, channel order %d", (int)e2, (int)e3, (int)e4);
    }
    PetscCall(SgFieldSuperresProviderDestroy(&p));
    PetscCall(SgFieldSuperresProviderDestroy(&p2));
  }
  { /* 3. trilinear baseline on a field linear in t, z and periodic piecewise linear in x */
    PetscReal g[X], qq[3 * 3 * 4 * 4], out[4 * 48], e = 0;
    PetscInt  n = 0;
    for (int i = 0; i < X; i++) g[i] = sgnn_rng_normal(&r);
    for (int ch = 0; ch < 4; ch++)
      for (int it = 0; it < T; it++)
        for (int k = 0; k < Z; k++)
          for (int i = 0; i < X; i++) vals[((ch * T + it) * Z + k) * X + i] = 0.3 * ch + (1 + ch) * tc[it] - 2 * zc[k] + (ch + 1) * g[i];
    for (int it = 0; it < 3; it++)
      for (int k = 0; k < 4; k++)
        for (int i = 0; i < 4; i++, n++) { /* block points and midpoints; x midpoints include the seam */
          qq[3 * n]     = 1 + 0.125 * it;
          qq[3 * n + 1] = zc[2 * k] + (k % 2) * 0.03125;
          qq[3 * n + 2] = i < 3 ? xc[5 * i] + (i % 2) * 0.03125 : xc[X - 1] + 0.03125 + 1; /* the seam, a period on */
        }
    {
      SgFieldBlock          B = {4, Chan, {T, Z, X}, {tc, zc, xc}, {0, 0, 0}, {0, 1, 1}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, vals};
      SgFieldQuery          Q = {PETSC_FALSE, n, qq, {0, 0, 0}, {NULL, NULL, NULL}};
      SgFieldSuperresInput  in = {&B, &Q};
      SgFieldSuperresOutput o = {out};
      PetscCall(Provider(PETSC_COMM_WORLD, 1e5, "trilinear", &p, NULL));
      PetscCall(p.fn(p.ctx, &in, &o));
      for (PetscInt a = 0; a < n; a++) {
        double lx = (qq[3 * a + 2] - xc[0]) / 0.0625, gx;
        int    i0;
        lx = fmod(lx, X);
        i0 = (int)floor(lx);
        gx = g[i0] + (lx - i0) * (g[(i0 + 1) % X] - g[i0]);
        for (int ch = 0; ch < 4; ch++) e = PetscMax(e, PetscAbsReal(out[ch * n + a] - (0.3 * ch + (1 + ch) * qq[3 * a] - 2 * qq[3 * a + 1] + (ch + 1) * gx)));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "3. trilinear baseline at %" PetscInt_FMT " block points and midpoints (seam included): error %.2e\n", n, e));
      CHECK(e < 1e-13, "trilinear baseline error %g", e);
      PetscCall(SgFieldSuperresProviderDestroy(&p));
    }
  }
  { /* 6. project: this rank's rows of a 1 x 12 x 32 grid against the whole grid answered unprojected on
       one rank and projected here by SgMFFNProjector */
    enum { NZQ = 12, NXQ = 32, NG = NZQ * NXQ };
    const PetscInt r0 = rank * NZQ / size, r1 = (rank + 1) * NZQ / size, nl = (r1 - r0) * NXQ;
    PetscReal      tq[1] = {1.1}, zq[NZQ], xq[NXQ], all[4 * NG], mineq[4 * NG], e = 0, sc = 0, pt[3] = {1.1, 0.1, 0.2};
    PetscBool      pb = PETSC_TRUE;
    SgMFFNProjector P;
    SgFieldSuperresProvider pp;
    PetscErrorCode e1;
    for (int k = 0; k < NZQ; k++) zq[k] = zc[0] + 0.03125 * k;
    for (int j = 0; j < NXQ; j++) xq[j] = 0.01 + j / (PetscReal)NXQ;
    {
      SgFieldBlock          B  = {4, Chan, {T, Z, X}, {tc, zc, xc}, {0, 0, 0}, {0, 1, 1}, {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE}, vals};
      SgFieldQuery          Qa = {PETSC_TRUE, 0, NULL, {1, NZQ, NXQ}, {tq, zq, xq}}, Qm = {PETSC_TRUE, 0, NULL, {1, r1 - r0, NXQ}, {tq, zq + r0, xq}}, Qs = {PETSC_FALSE, 1, pt, {0, 0, 0}, {NULL, NULL, NULL}};
      SgFieldSuperresInput  ia = {&B, &Qa}, im = {&B, &Qm}, is = {&B, &Qs};
      SgFieldSuperresOutput oa = {all}, om = {mineq}, os = {mineq + 3 * NG};
      PetscCall(Provider(PETSC_COMM_SELF, 1e5, "none", &p, NULL));
      PetscCall(p.fn(p.ctx, &ia, &oa));
      PetscCall(SgFieldSuperresProviderDestroy(&p));
      PetscCall(SgMFFNProjectorCreate(NZQ, NXQ, 0.03125, 1, &P));
      PetscCall(SgMFFNProjectorApply(P, 1, all + 2 * NG, all + 3 * NG));
      PetscCall(SgMFFNProjectorDestroy(&P));
      PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_project", "true"));
      PetscCall(Provider(PETSC_COMM_WORLD, 1e5, "none", &pp, NULL));
      PetscCall(pp.fn(pp.ctx, &im, &om));
      for (PetscInt a = 0; a < nl; a++) {
        pb = pb && mineq[a] == all[r0 * NXQ + a] && mineq[nl + a] == all[NG + r0 * NXQ + a];
        for (int ch = 2; ch < 4; ch++) e = PetscMax(e, PetscAbsReal(mineq[ch * nl + a] - all[ch * NG + r0 * NXQ + a])), sc = PetscMax(sc, PetscAbsReal(all[ch * NG + r0 * NXQ + a]));
      }
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      e1 = pp.fn(pp.ctx, &is, &os);
      PetscCall(PetscPopErrorHandler());
      PetscCall(SgFieldSuperresProviderDestroy(&pp));
      PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_project", "false"));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] 6. project: rows %" PetscInt_FMT "..%" PetscInt_FMT " of 12 x 32: u, w vs the whole grid projected on one rank %.1e relative, p, b %s; scattered points refused: %s\n", rank, r0, r1 - 1, (double)(e / sc), pb ? "unchanged (bit-identical)" : "CHANGED", e1 == PETSC_ERR_ARG_WRONG ? "yes" : "NO"));
    CHECK(e <= 1e-12 * sc && pb && e1 == PETSC_ERR_ARG_WRONG, "project: u, w differ by %g relative, p/b unchanged %d, scattered query error %d", (double)(e / sc), (int)pb, (int)e1);
  }
  { /* 5. refusals at creation */
    PetscErrorCode e1, e2;
    PetscCall(Provider(PETSC_COMM_WORLD, 1e6, "none", &p, &e1));
    PetscCall(PetscOptionsSetValue(NULL, "-boussinesq_mffn_model", "/nonexistent/model.h5"));
    PetscCall(Provider(PETSC_COMM_WORLD, 1e5, "none", &p, &e2));
    CHECK(e1 == PETSC_ERR_USER_INPUT && e2 == PETSC_ERR_USER_INPUT, "refusals at creation: Ra %d, missing file %d", (int)e1, (int)e2);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "5. refused: block t spacing, point outside the band, channel order, Ra 1e6 vs the model's 1e5, missing model file\n"));
  }
  PetscCall(SgMFFNDestroy(&m));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fails ? "FAIL" : "PASS"));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
