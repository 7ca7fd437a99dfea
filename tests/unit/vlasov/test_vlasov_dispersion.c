/* The kinetic dispersion relation used by the Vlasov report (physics/vlasov/vlasov_dispersion.c):
   - Faddeeva w(z) against tabulated values (Abramowitz & Stegun 7.1; Dawson's integral), 1e-12;
   - the Landau root at k lambda_D = 0.5 against the literature value omega = 1.415661888604536
     - 0.153359466909605 i (e.g. Canosa 1973; gkylzero regression), 1e-9;
   - the symmetric two-stream root in the cold limit against the closed form
     gamma^2 = (sqrt(8 x^2 + 1) - 1)/2 - x^2, x = k u (thermal correction O(vt^2) ~ 1e-3 at vt = 0.02). */
#include "../../../physics/vlasov/vlasov.h"

static int Check(const char *what, double got, double want, double tol)
{
  int bad = !(fabs(got - want) <= tol);
  printf("%s %-40s got %.15g want %.15g (tol %.1e)\n", bad ? "FAIL" : "ok  ", what, got, want, tol);
  return bad;
}

int main(int argc, char **argv)
{
  SgVlasov *v;
  double    wr, wi;
  PetscReal k[2] = {0.5, 0}, om, ga;
  int       bad = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  SgVlasovFaddeeva(1.0, 0.0, &wr, &wi);
  bad += Check("Re w(1) = exp(-1)", wr, exp(-1.0), 1e-12);
  bad += Check("Im w(1) = 2/sqrt(pi) D(1)", wi, 2 / sqrt(M_PI) * 0.5380795069127684, 1e-12);
  SgVlasovFaddeeva(0.0, 1.0, &wr, &wi);
  bad += Check("w(i) = e erfc(1)", wr, exp(1.0) * erfc(1.0), 1e-12);
  SgVlasovFaddeeva(0.0, -1.0, &wr, &wi); /* continuation: w(-i) = 2 e - w(i) */
  bad += Check("w(-i) = 2e - e erfc(1)", wr, 2 * exp(1.0) - exp(1.0) * erfc(1.0), 1e-12);

  PetscCall(PetscNew(&v));
  v->cdim = 1; v->vdim = 1; v->nspecies = 1;
  v->sp[0].charge = -1; v->sp[0].mass = 1; v->sp[0].ncomp = 1;
  v->sp[0].comp[0].density = 1; v->sp[0].comp[0].vt = 1;
  PetscCall(SgVlasovDispersionRoot(v, k, &om, &ga));
  bad += Check("Landau k=0.5: omega", om, 1.415661888604536, 1e-9);
  bad += Check("Landau k=0.5: gamma", ga, -0.153359466909605, 1e-9);

  v->sp[0].ncomp = 2;
  for (int c = 0; c < 2; c++) { v->sp[0].comp[c].density = 0.5; v->sp[0].comp[c].vt = 0.02; v->sp[0].comp[c].drift[0] = c ? -1 : 1; }
  PetscCall(SgVlasovDispersionRoot(v, k, &om, &ga));
  double x = 0.5, cold = sqrt(0.5 * (sqrt(8 * x * x + 1) - 1) - x * x);
  bad += Check("cold two-stream k u = 0.5: gamma", ga, cold, 2e-3 * cold);
  bad += Check("cold two-stream: omega_r", om, 0.0, 1e-8);
  PetscCall(PetscFree(v));
  printf("%s\n", bad ? "FAILED" : "all dispersion checks passed");
  PetscCall(PetscFinalize());
  return bad ? 1 : 0;
}
