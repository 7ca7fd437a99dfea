/* Checks every generated DG kernel (physics/vlasov/kernels) against an independent evaluation of
   the same weak-form integrals by Gauss-Legendre quadrature, for random cell data.

   The generator integrates products of Legendre polynomials exactly (sympy rationals); here the
   integrals are evaluated numerically with enough points to be exact for the polynomial degree
   (nq = p + 2 per dimension integrates degree 2p + 3 >= 3p exactly for p <= 3), so the two must
   agree to round-off. Tolerance: 1e-12 relative to the largest entry (sums of up to a few hundred
   O(1) terms). Also checks the tables: orthonormality is implicit in the projection of the
   nodal FE basis (feC must invert the nodal Vandermonde matrix). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "../../../physics/vlasov/kernels/vlasov_kernels.h"

static double Leg(int n, double x) /* normalised Legendre */
{
  double p0 = 1, p1 = x, p2;
  if (n == 0) return sqrt(0.5);
  for (int k = 2; k <= n; k++) { p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k; p0 = p1; p1 = p2; }
  return sqrt(0.5 * (2 * n + 1)) * p1;
}
static double DLeg(int n, double x) /* derivative, by the identity (1-x^2) P_n' = n (P_{n-1} - x P_n) */
{
  if (n == 0) return 0;
  double h = 1e-6; /* not used at the nodes +-1; central difference would lose digits, so exact: */
  (void)h;
  double pn = Leg(n, x) / sqrt(0.5 * (2 * n + 1)), pm = Leg(n - 1, x) / sqrt(0.5 * (2 * n - 1));
  return sqrt(0.5 * (2 * n + 1)) * n * (pm - x * pn) / (1 - x * x);
}
static void Gauss(int n, double *x, double *w)
{
  for (int i = 0; i < n; i++) {
    double z = cos(M_PI * (i + 0.75) / (n + 0.5)), dp = 1;
    for (int it = 0; it < 100; it++) {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= n; k++) { double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k; p0 = p1; p1 = p2; }
      dp = n * (z * p1 - p0) / (z * z - 1);
      double dz = p1 / dp;
      z -= dz;
      if (fabs(dz) < 1e-16) break;
    }
    x[i] = z; w[i] = 2 / ((1 - z * z) * dp * dp);
  }
}
static double rnd(void) { return 2.0 * rand() / RAND_MAX - 1; }

static double Psi(const int *alpha, int pdim, const double *eta)
{
  double v = 1;
  for (int d = 0; d < pdim; d++) v *= Leg(alpha[d], eta[d]);
  return v;
}
static double Eval(const SgVlasovKernels *K, const double *f, const double *eta)
{
  int    pdim = K->cdim + K->vdim;
  double s    = 0;
  for (int k = 0; k < K->np; k++) s += f[k] * Psi(K->alpha + k * pdim, pdim, eta);
  return s;
}
static double Acc(const SgVlasovKernels *K, const double *acc, int j, const double *eta)
{
  double s = 0;
  for (int m = 0; m < K->npx; m++) s += acc[j * K->npx + m] * Psi(K->alphax + m * K->cdim, K->cdim, eta);
  return s;
}

/* iterate over the nq^dim tensor points; returns 0 when done */
static int Next(int *idx, int dim, int nq)
{
  for (int d = 0; d < dim; d++) {
    if (++idx[d] < nq) return 1;
    idx[d] = 0;
  }
  return 0;
}

static int CheckSet(const SgVlasovKernels *K)
{
  const int cd = K->cdim, pd = K->cdim + K->vdim, np = K->np, nq = K->p + 2;
  double    xq[8], wq[8], w[6], dx[6], f[256], fL[256], fR[256], acc[64], out[256], ref[256], oL[256], oR[256], rL[256], rR[256];
  double    err = 0, scale = 0;

  Gauss(nq, xq, wq);
  for (int k = 0; k < np; k++) { f[k] = rnd(); fL[k] = rnd(); fR[k] = rnd(); }
  for (int i = 0; i < cd * K->npx; i++) acc[i] = rnd();
  for (int d = 0; d < pd; d++) { dx[d] = 0.3 + 0.1 * d + 0.05 * rnd(); w[d] = 2 * rnd(); }

  /* volume */
  for (int k = 0; k < np; k++) { out[k] = 0; ref[k] = 0; }
  K->vol(w, dx, acc, f, out);
  {
    int idx[6] = {0, 0, 0, 0, 0, 0};
    do {
      double eta[6], wt = 1;
      for (int d = 0; d < pd; d++) { eta[d] = xq[idx[d]]; wt *= wq[idx[d]]; }
      double fv = Eval(K, f, eta);
      for (int k = 0; k < np; k++) {
        const int *a = K->alpha + k * pd;
        double     s = 0;
        for (int d = 0; d < cd; d++) {
          int    v  = cd + d;
          double dd = DLeg(a[d], eta[d]);
          for (int e = 0; e < pd; e++) if (e != d) dd *= Leg(a[e], eta[e]);
          s += 2 / dx[d] * dd * (w[v] + 0.5 * dx[v] * eta[v]) * fv;
        }
        for (int j = 0; j < cd; j++) {
          int    v  = cd + j;
          double dd = DLeg(a[v], eta[v]);
          for (int e = 0; e < pd; e++) if (e != v) dd *= Leg(a[e], eta[e]);
          s += 2 / dx[v] * dd * Acc(K, acc, j, eta) * fv;
        }
        ref[k] += wt * s;
      }
    } while (Next(idx, pd, nq));
  }
  for (int k = 0; k < np; k++) { err = fmax(err, fabs(out[k] - ref[k])); scale = fmax(scale, fabs(ref[k])); }
  if (err > 1e-12 * scale) { printf("  volume: max error %.3e (scale %.3e)\n", err, scale); return 1; }

  /* surfaces: x_d (random upwind weights) and v_j (random penalty) */
  for (int dir = 0; dir < 2 * cd; dir++) {
    int    d = dir < cd ? dir : cd + (dir - cd);
    double cL = rnd(), cR = rnd(), c0 = fabs(rnd()), tau = fabs(rnd());
    for (int k = 0; k < np; k++) { oL[k] = oR[k] = rL[k] = rR[k] = 0; }
    if (dir < cd) K->surfx[dir](w, dx, cL, cR, c0, fL, fR, oL, oR);
    else K->surfv[dir - cd](dx, acc + (dir - cd) * K->npx, tau, fL, fR, oL, oR); /* component j */
    int idx[6] = {0, 0, 0, 0, 0, 0};
    do {
      double etaL[6], etaR[6], wt = 1;
      for (int e = 0, q = 0; e < pd; e++) {
        if (e == d) { etaL[e] = 1; etaR[e] = -1; continue; }
        etaL[e] = etaR[e] = xq[idx[q]]; wt *= wq[idx[q]]; q++;
      }
      double a = Eval(K, fL, etaL), b = Eval(K, fR, etaR), F;
      if (dir < cd) F = (w[cd + dir] + 0.5 * dx[cd + dir] * etaL[cd + dir]) * (cL * a + cR * b) - 0.5 * c0 * (b - a);
      else F = Acc(K, acc, dir - cd, etaL) * 0.5 * (a + b) - 0.5 * tau * (b - a);
      for (int k = 0; k < np; k++) {
        rL[k] -= wt * 2 / dx[d] * Psi(K->alpha + k * pd, pd, etaL) * F;
        rR[k] += wt * 2 / dx[d] * Psi(K->alpha + k * pd, pd, etaR) * F;
      }
    } while (Next(idx, pd - 1, nq));
    err = scale = 0;
    for (int k = 0; k < np; k++) {
      err   = fmax(err, fmax(fabs(oL[k] - rL[k]), fabs(oR[k] - rR[k])));
      scale = fmax(scale, fmax(fabs(rL[k]), fabs(rR[k])));
    }
    if (err > 1e-12 * scale) { printf("  surface dir %d: max error %.3e (scale %.3e)\n", dir, err, scale); return 1; }
  }

  /* FE tables: nodal basis N_a = sum_k feC[k][a] Phi_k must satisfy sum_a N_a = 1 (partition of unity) */
  {
    double maxdev = 0, eta[3] = {0.3, -0.7, 0.45};
    double s = 0;
    for (int a = 0; a < K->npx; a++)
      for (int k = 0; k < K->npx; k++) s += K->feC[k * K->npx + a] * Psi(K->alphax + k * cd, cd, eta);
    maxdev = fabs(s - 1);
    if (maxdev > 1e-13) { printf("  FE basis is not a partition of unity: %.3e\n", maxdev); return 1; }
  }
  return 0;
}

int main(void)
{
  int nfail = 0, nset = 0;
  srand(12345);
  for (const SgVlasovKernels *const *k = sg_vlasov_kernel_list; *k; k++) {
    int bad = CheckSet(*k);
    printf("%s %dx%dv %s p=%d (np=%d)\n", bad ? "FAIL" : "ok  ", (*k)->cdim, (*k)->vdim, (*k)->family ? "tensor" : "serendipity", (*k)->p, (*k)->np);
    nfail += bad;
    nset++;
  }
  printf("%d kernel sets checked against quadrature, %d failed\n", nset, nfail);
  return nfail ? 1 : 0;
}
