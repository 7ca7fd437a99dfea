/* The building blocks of physics/boussinesq, each against exact values:
   - Chebyshev-Gauss-Lobatto differentiation D, D^2, D^3 on [0, Lz] exact for polynomials of degree
     < n (the collocation space), tolerance 1e-9 relative to the largest derivative value (D's norm
     grows like n^2: round-off ~ n^2 eps per application);
   - Clenshaw-Curtis weights integrate z^k exactly for k < n (1e-13);
   - the interpolation to the uniform output grid is exact for polynomials of degree < n (1e-13
     relative to the largest value);
   - the IMEX tableaux satisfy the order conditions of Ascher, Ruuth & Spiteri (1997): for RK222 the
     explicit, implicit and coupling conditions of order 2; for RK443 those of order 3 (sum b = 1,
     sum b c = 1/2, sum b c^2 = 1/3, b A c = 1/6 for each part and the mixed products), with
     b = the last row (stiffly accurate form) and c the row sums, to 1e-14. */
#include <math.h>
#include "../../../physics/boussinesq/bq.h"

static int Check(const char *what, double err, double tol)
{
  int bad = !(err <= tol);
  printf("%s %-58s error %.2e (tol %.0e)\n", bad ? "FAIL" : "ok  ", what, err, tol);
  return bad;
}

/* p(z) = sum_k a_k z^k and its derivatives */
static double Poly(const double *a, int deg, double z, int der)
{
  double s = 0;
  for (int k = der; k <= deg; k++) {
    double c = a[k];
    for (int d = 0; d < der; d++) c *= (k - d);
    s += c * pow(z, k - der);
  }
  return s;
}

static int Grid(int n, double Lz)
{
  Bq     bq;
  int    bad = 0, deg = n - 1;
  double a[64], errD[3] = {0, 0, 0}, scale[3] = {0, 0, 0}, errI = 0, errQ = 0;
  char   what[128];

  PetscCall(PetscMemzero(&bq, sizeof bq));
  bq.n = n; bq.Lz = Lz; bq.out_nz = 2 * n + 3;
  PetscCall(SgBqChebSetUp(&bq));
  for (int k = 0; k <= deg; k++) a[k] = cos(1.0 + k) / (1 + k); /* a fixed generic polynomial */
  for (int d = 1; d <= 3; d++) {
    const PetscReal *M = d == 1 ? bq.D : d == 2 ? bq.D2 : bq.D3;
    for (int i = 0; i < n; i++) {
      double s = 0, exact = Poly(a, deg, bq.z[i], d);
      for (int j = 0; j < n; j++) s += M[i + j * n] * Poly(a, deg, bq.z[j], 0);
      errD[d - 1] = fmax(errD[d - 1], fabs(s - exact));
      scale[d - 1] = fmax(scale[d - 1], fabs(exact));
    }
  }
  for (int d = 0; d < 3; d++) {
    snprintf(what, sizeof what, "n = %d, Lz = %g: D^%d exact on degree %d", n, Lz, d + 1, deg);
    bad += Check(what, errD[d] / scale[d], 1e-9);
  }
  for (int k = 0; k <= deg; k++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += bq.wq[j] * pow(bq.z[j] / Lz, k);
    errQ = fmax(errQ, fabs(s / Lz - 1.0 / (k + 1)));
  }
  snprintf(what, sizeof what, "n = %d: Clenshaw-Curtis exact for z^k, k <= %d", n, deg);
  bad += Check(what, errQ, 1e-13);
  double pmax = 0;
  for (int m = 0; m < bq.out_nz; m++) {
    double s = 0, zo = (m + 0.5) * Lz / bq.out_nz;
    for (int j = 0; j < n; j++) s += bq.Iout[m + j * bq.out_nz] * Poly(a, deg, bq.z[j], 0);
    errI = fmax(errI, fabs(s - Poly(a, deg, zo, 0)));
    pmax = fmax(pmax, fabs(Poly(a, deg, zo, 0)));
  }
  errI /= pmax; /* relative: on [0, 2.5] the test polynomial reaches ~1e11 */
  snprintf(what, sizeof what, "n = %d: interpolation to %d uniform points exact", n, (int)bq.out_nz);
  bad += Check(what, errI, 1e-13);
  PetscCall(PetscFree5(bq.z, bq.wq, bq.D, bq.D2, bq.D3));
  PetscCall(PetscFree(bq.Iout));
  return bad;
}

static int Tableau(int scheme)
{
  BqTableau t;
  int       bad = 0, s;
  double    e[8] = {0};
  char      what[128];

  PetscCall(SgBqTableauGet(scheme, &t));
  s = (int)t.stages;
  /* weights b_j = last row (stiffly accurate), nodes c_i = row sums, stages 0..s */
  const double *bE = t.A[s], *bI = t.H[s];
  double sE = 0, sI = 0, cE[BQ_MAX_STAGES], cI[BQ_MAX_STAGES];
  for (int i = 0; i <= s; i++) {
    cE[i] = cI[i] = 0;
    for (int j = 0; j <= s; j++) { cE[i] += t.A[i][j]; cI[i] += t.H[i][j]; }
    e[0] = fmax(e[0], fabs(cE[i] - cI[i])); /* same nodes for both parts */
  }
  for (int j = 0; j <= s; j++) { sE += bE[j]; sI += bI[j]; }
  e[1] = fmax(fabs(sE - 1), fabs(sI - 1));
  {
    double o2[4] = {0, 0, 0, 0}; /* b.c for (E,I) x (E,I) combinations collapse to one c */
    for (int j = 0; j <= s; j++) { o2[0] += bE[j] * cE[j]; o2[1] += bI[j] * cI[j]; }
    e[2] = fmax(fabs(o2[0] - 0.5), fabs(o2[1] - 0.5));
  }
  if (t.order >= 3) {
    double b_c2[2] = {0, 0}, bAc[2][2][2] = {{{0}}};
    for (int j = 0; j <= s; j++) { b_c2[0] += bE[j] * cE[j] * cE[j]; b_c2[1] += bI[j] * cI[j] * cI[j]; }
    for (int p = 0; p < 2; p++)        /* outer weights: E or I */
      for (int q = 0; q < 2; q++) {    /* inner matrix: E or I */
        const double *bb = p ? bI : bE;
        for (int i = 0; i <= s; i++)
          for (int j = 0; j <= s; j++) bAc[p][q][0] += bb[i] * (q ? t.H[i][j] : t.A[i][j]) * cE[j];
      }
    e[3] = fmax(fabs(b_c2[0] - 1.0 / 3), fabs(b_c2[1] - 1.0 / 3));
    for (int p = 0; p < 2; p++)
      for (int q = 0; q < 2; q++) e[4] = fmax(e[4], fabs(bAc[p][q][0] - 1.0 / 6));
  }
  snprintf(what, sizeof what, "%s: explicit and implicit nodes equal", t.name);
  bad += Check(what, e[0], 1e-14);
  snprintf(what, sizeof what, "%s: order 1 (sum b = 1, both parts)", t.name);
  bad += Check(what, e[1], 1e-14);
  snprintf(what, sizeof what, "%s: order 2 (b.c = 1/2, both parts)", t.name);
  bad += Check(what, e[2], 1e-14);
  if (t.order >= 3) {
    snprintf(what, sizeof what, "%s: order 3 (b.c^2 = 1/3, both parts)", t.name);
    bad += Check(what, e[3], 1e-14);
    snprintf(what, sizeof what, "%s: order 3 (b A c = 1/6, all 4 couplings)", t.name);
    bad += Check(what, e[4], 1e-14);
  }
  return bad;
}

int main(int argc, char **argv)
{
  int bad = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  bad += Grid(9, 1.0);
  bad += Grid(25, 1.0);
  bad += Grid(33, 2.5);
  bad += Tableau(0);
  bad += Tableau(1);
  PetscCall(PetscFinalize());
  printf("%s\n", bad ? "FAILED" : "all passed");
  return bad ? 1 : 0;
}
