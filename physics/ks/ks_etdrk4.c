/* ETDRK4 for v_t = lin v + N(v), v the unnormalised r2c transform of u, lin = k^2 - k^4 (diagonal),
   N(v) = -(i k / 2) FFT(u^2) with the modes 3 m >= N zeroed (2/3 rule: the retained modes of u^2 are
   then free of aliases).

   The scheme (Cox and Matthews 2002, in the form of Kassam and Trefethen 2005, eq. 2.5 and 2.6):
     a = E2 v + Q N(v);  b = E2 v + Q N(a);  c = E2 a + Q (2 N(b) - N(v));
     v <- E v + f1 N(v) + 2 f2 (N(a) + N(b)) + f3 N(c),
   E = exp(h lin), E2 = exp(h lin / 2). The functions Q, f1, f2, f3 of z = h lin suffer cancellation
   for small |z|; Kassam and Trefethen evaluate each as the mean of its values on a circle of radius 1
   about z (Cauchy's integral formula: the function is analytic there), which is accurate to round-off
   for every z. We take M = 64 points on the full circle and keep the real part (the mean is real for
   real z). */
#include "ks.h"

#define KS_CONTOUR 64

static PetscErrorCode Coefficients(KsEtd *e, PetscReal h)
{
  PetscFunctionBegin;
  for (PetscInt m = 0; m < e->nk; m++) {
    const PetscReal z = h * e->lin[m];
    KsCplx          q = 0, s1 = 0, s2 = 0, s3 = 0;
    for (PetscInt j = 0; j < KS_CONTOUR; j++) {
      const KsCplx r  = z + cexp(2 * PETSC_PI * I * (j + 0.5) / KS_CONTOUR);
      const KsCplx er = cexp(r), r3 = r * r * r;
      q += (cexp(r / 2) - 1) / r;
      s1 += (-4 - r + er * (4 - 3 * r + r * r)) / r3;
      s2 += (2 + r + er * (r - 2)) / r3;
      s3 += (-4 - 3 * r - r * r + er * (4 - r)) / r3;
    }
    e->E[m]  = PetscExpReal(z);
    e->E2[m] = PetscExpReal(z / 2);
    e->Q[m]  = h * creal(q) / KS_CONTOUR;
    e->f1[m] = h * creal(s1) / KS_CONTOUR;
    e->f2[m] = h * creal(s2) / KS_CONTOUR;
    e->f3[m] = h * creal(s3) / KS_CONTOUR;
  }
  e->h = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsEtdCreate(PetscInt N, PetscReal L, KsEtd **ep)
{
  KsEtd *e;

  PetscFunctionBegin;
  PetscCall(PetscNew(&e));
  e->N  = N;
  e->nk = N / 2 + 1;
  /* fftw_malloc: the same alignment on every rank, so FFTW_ESTIMATE picks the same codelets and the
     replicated state stays identical bit for bit */
  e->x = (double *)fftw_malloc(sizeof(double) * N);
  {
    KsCplx **arr[] = {&e->E, &e->E2, &e->Q, &e->f1, &e->f2, &e->f3, &e->ik, &e->Nv, &e->Na, &e->Nb, &e->Nc, &e->a, &e->b, &e->c, &e->tk};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) *arr[i] = (KsCplx *)fftw_malloc(sizeof(KsCplx) * e->nk);
  }
  PetscCall(PetscMalloc1(e->nk, &e->lin));
  for (PetscInt m = 0; m < e->nk; m++) {
    const PetscReal k = 2 * PETSC_PI * m / L;
    e->lin[m]         = k * k - k * k * k * k;
    e->ik[m]          = 3 * m < N ? -0.5 * I * k : 0; /* also zeroes the Nyquist mode's derivative */
  }
  e->fwd = fftw_plan_dft_r2c_1d((int)N, e->x, (fftw_complex *)e->tk, FFTW_ESTIMATE);
  e->bwd = fftw_plan_dft_c2r_1d((int)N, (fftw_complex *)e->tk, e->x, FFTW_ESTIMATE);
  PetscCheck(e->fwd && e->bwd, PETSC_COMM_SELF, PETSC_ERR_LIB, "ks: FFTW could not plan a transform of %" PetscInt_FMT " points", N);
  *ep = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* u = inverse transform of v (normalised); v is not changed */
PetscErrorCode KsEtdToPhysical(KsEtd *e, const KsCplx *v, double *u)
{
  PetscFunctionBegin;
  for (PetscInt m = 0; m < e->nk; m++) e->tk[m] = v[m];
  fftw_execute(e->bwd); /* c2r overwrites tk */
  for (PetscInt j = 0; j < e->N; j++) u[j] = e->x[j] / e->N;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = N(v) */
static PetscErrorCode Nonlinear(KsEtd *e, const KsCplx *v, KsCplx *out)
{
  PetscFunctionBegin;
  PetscCall(KsEtdToPhysical(e, v, e->x));
  for (PetscInt j = 0; j < e->N; j++) e->x[j] = e->x[j] * e->x[j];
  fftw_execute(e->fwd);
  for (PetscInt m = 0; m < e->nk; m++) out[m] = e->ik[m] * e->tk[m];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsEtdStep(KsEtd *e, KsCplx *v, PetscReal h)
{
  PetscFunctionBegin;
  if (h != e->h) PetscCall(Coefficients(e, h)); /* the driver may shorten the last step */
  PetscCall(Nonlinear(e, v, e->Nv));
  for (PetscInt m = 0; m < e->nk; m++) e->a[m] = e->E2[m] * v[m] + e->Q[m] * e->Nv[m];
  PetscCall(Nonlinear(e, e->a, e->Na));
  for (PetscInt m = 0; m < e->nk; m++) e->b[m] = e->E2[m] * v[m] + e->Q[m] * e->Na[m];
  PetscCall(Nonlinear(e, e->b, e->Nb));
  for (PetscInt m = 0; m < e->nk; m++) e->c[m] = e->E2[m] * e->a[m] + e->Q[m] * (2 * e->Nb[m] - e->Nv[m]);
  PetscCall(Nonlinear(e, e->c, e->Nc));
  for (PetscInt m = 0; m < e->nk; m++) v[m] = e->E[m] * v[m] + e->f1[m] * e->Nv[m] + 2 * e->f2[m] * (e->Na[m] + e->Nb[m]) + e->f3[m] * e->Nc[m];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KsEtdDestroy(KsEtd **ep)
{
  KsEtd *e = *ep;

  PetscFunctionBegin;
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  fftw_destroy_plan(e->fwd);
  fftw_destroy_plan(e->bwd);
  fftw_free(e->x);
  {
    KsCplx *arr[] = {e->E, e->E2, e->Q, e->f1, e->f2, e->f3, e->ik, e->Nv, e->Na, e->Nb, e->Nc, e->a, e->b, e->c, e->tk};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) fftw_free(arr[i]);
  }
  PetscCall(PetscFree(e->lin));
  PetscCall(PetscFree(*ep));
  PetscFunctionReturn(PETSC_SUCCESS);
}
