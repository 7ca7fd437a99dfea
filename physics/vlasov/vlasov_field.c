/* Poisson solve: continuous finite elements in the configuration part of the DG space, by FFT.

   phi_h is continuous and, in each cell, a polynomial of the configuration basis (nodal Lagrange
   basis of the same family and order, generated in kernels/). Weak form on the periodic box:
     int grad phi_h . grad w = int (rho_h - <rho_h>) w    for every continuous w,
   E_h = -grad phi_h is then exactly a member of the configuration DG space, and with p >= 2
   (v^2 in the basis) the semi-discrete scheme conserves kinetic + field energy exactly (Cheng,
   Gamba & Morrison, J. Sci. Comput. 2013; Juno et al. JCP 2018): the energy error is the time
   integrator's alone.

   On a uniform periodic grid the FE system is block-circulant: the unknowns of a cell are its
   "components" (the nodes it owns: lower-left vertex, lower/left edge nodes, interior nodes) and a
   local node a of cell e is component fecomp[a] of cell e + feshift[a]. FFTW (r2c, FFTW_ESTIMATE so
   runs are reproducible) diagonalises it into ncomp x ncomp complex systems, one per wavenumber,
   whose inverses are computed once at set-up. The zero wavenumber has the constants as null space:
   the uniform neutralising background makes the load orthogonal to it, and we add 1 1^T to fix
   the gauge. The configuration arrays are small and replicated, so every rank solves the same
   problem and gets the same field bit for bit. */
#include "vlasov.h"

#define SG_VLASOV_SYMBOL_RTOL 1e-13

/* In-place inverse of an n x n complex matrix (Gauss-Jordan, partial pivoting). *singular: a pivot
   of magnitude <= tiny, where the inverse would be round-off (the matrix is then left unfinished). */
static PetscErrorCode ComplexInverse(PetscInt n, double *ar, double *ai, double tiny, PetscBool *singular)
{
  double   *br, *bi;
  PetscInt *piv;

  PetscFunctionBegin;
  *singular = PETSC_FALSE;
  PetscCall(PetscMalloc3(n * n, &br, n * n, &bi, n, &piv));
  for (PetscInt i = 0; i < n * n; i++) { br[i] = 0; bi[i] = 0; }
  for (PetscInt i = 0; i < n; i++) br[i * n + i] = 1;
  for (PetscInt c = 0; c < n; c++) {
    PetscInt p = c;
    double   best = -1;
    for (PetscInt r = c; r < n; r++) {
      double mag = ar[r * n + c] * ar[r * n + c] + ai[r * n + c] * ai[r * n + c];
      if (mag > best) { best = mag; p = r; }
    }
    if (!(best > tiny * tiny)) { /* squared magnitudes */
      *singular = PETSC_TRUE;
      break;
    }
    for (PetscInt k = 0; k < n; k++) {
      double t;
      t = ar[c * n + k]; ar[c * n + k] = ar[p * n + k]; ar[p * n + k] = t;
      t = ai[c * n + k]; ai[c * n + k] = ai[p * n + k]; ai[p * n + k] = t;
      t = br[c * n + k]; br[c * n + k] = br[p * n + k]; br[p * n + k] = t;
      t = bi[c * n + k]; bi[c * n + k] = bi[p * n + k]; bi[p * n + k] = t;
    }
    double pr = ar[c * n + c], pi = ai[c * n + c], den = pr * pr + pi * pi;
    double ir = pr / den, ii = -pi / den;
    for (PetscInt k = 0; k < n; k++) {
      double xr = ar[c * n + k], xi = ai[c * n + k];
      ar[c * n + k] = xr * ir - xi * ii; ai[c * n + k] = xr * ii + xi * ir;
      xr = br[c * n + k]; xi = bi[c * n + k];
      br[c * n + k] = xr * ir - xi * ii; bi[c * n + k] = xr * ii + xi * ir;
    }
    for (PetscInt r = 0; r < n; r++) {
      if (r == c) continue;
      double fr = ar[r * n + c], fi = ai[r * n + c];
      for (PetscInt k = 0; k < n; k++) {
        ar[r * n + k] -= fr * ar[c * n + k] - fi * ai[c * n + k];
        ai[r * n + k] -= fr * ai[c * n + k] + fi * ar[c * n + k];
        br[r * n + k] -= fr * br[c * n + k] - fi * bi[c * n + k];
        bi[r * n + k] -= fr * bi[c * n + k] + fi * br[c * n + k];
      }
    }
  }
  for (PetscInt i = 0; i < n * n && !*singular; i++) { ar[i] = br[i]; ai[i] = bi[i]; }
  PetscCall(PetscFree3(br, bi, piv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovFieldSetUp(SgVlasov *v)
{
  const SgVlasovKernels *K  = v->kern;
  const PetscInt         nc = K->ncomp, nl = v->npx, cd = v->cdim;
  PetscReal              J  = 1, *Kp, kscale = 0;
  int                    dims[2], h1;
  PetscBool              singular;

  PetscFunctionBegin;
  if (v->field == SG_VLASOV_FIELD_NONE) PetscFunctionReturn(PETSC_SUCCESS); /* maxwell: the initial E is a Poisson solution */
  if (cd == 3) PetscFunctionReturn(PETSC_SUCCESS); /* 3x: maxwell only, from a uniform charge (E = 0 + the plane wave; vlasov.c refuses the rest) */
  for (PetscInt d = 0; d < cd; d++) J *= 0.5 * v->dxc[d];
  h1 = (int)(v->Nx[0] / 2 + 1);
  if (cd == 1) { dims[0] = (int)v->Nx[0]; v->nhat = h1; }
  else { dims[0] = (int)v->Nx[1]; dims[1] = (int)v->Nx[0]; v->nhat = (PetscInt)h1 * v->Nx[1]; }
  v->fft_r = fftw_alloc_real((size_t)(nc * v->ncx));
  v->fft_c = fftw_alloc_complex((size_t)(nc * v->nhat));
  PetscCheck(v->fft_r && v->fft_c, PETSC_COMM_SELF, PETSC_ERR_MEM, "FFTW could not allocate the Poisson work arrays");
  v->plan_f = fftw_plan_many_dft_r2c((int)cd, dims, (int)nc, v->fft_r, NULL, 1, (int)v->ncx, v->fft_c, NULL, 1, (int)v->nhat, FFTW_ESTIMATE);
  v->plan_b = fftw_plan_many_dft_c2r((int)cd, dims, (int)nc, v->fft_c, NULL, 1, (int)v->nhat, v->fft_r, NULL, 1, (int)v->ncx, FFTW_ESTIMATE);
  PetscCheck(v->plan_f && v->plan_b, PETSC_COMM_SELF, PETSC_ERR_LIB, "FFTW could not plan the %" PetscInt_FMT "-D Poisson transforms", cd);
  /* physical element stiffness */
  PetscCall(PetscMalloc1(nl * nl, &Kp));
  for (PetscInt a = 0; a < nl * nl; a++) {
    Kp[a] = 0;
    for (PetscInt d = 0; d < cd; d++) Kp[a] += J * (2 / v->dxc[d]) * (2 / v->dxc[d]) * K->feK[d * nl * nl + a];
  }
  for (PetscInt a = 0; a < nl; a++) kscale = PetscMax(kscale, Kp[a * nl + a]); /* the stiffness's scale */
  PetscCall(PetscMalloc2(v->nhat * nc * nc, &v->kinv_re, v->nhat * nc * nc, &v->kinv_im));
  for (PetscInt h = 0; h < v->nhat; h++) {
    PetscReal th[2] = {0, 0};
    double   *ar = v->kinv_re + h * nc * nc, *ai = v->kinv_im + h * nc * nc;
    th[0] = 2 * PETSC_PI * (h % h1) / v->Nx[0];
    if (cd == 2) th[1] = 2 * PETSC_PI * (h / h1) / v->Nx[1];
    for (PetscInt i = 0; i < nc * nc; i++) ar[i] = ai[i] = 0;
    for (PetscInt a = 0; a < nl; a++)
      for (PetscInt b = 0; b < nl; b++) {
        PetscReal ph = 0;
        for (PetscInt d = 0; d < cd; d++) ph += th[d] * (K->feshift[b * cd + d] - K->feshift[a * cd + d]);
        ar[K->fecomp[a] * nc + K->fecomp[b]] += Kp[a * nl + b] * PetscCosReal(ph);
        ai[K->fecomp[a] * nc + K->fecomp[b]] += Kp[a * nl + b] * PetscSinReal(ph);
      }
    if (h == 0) /* K(0) itself may be 0 */
      for (PetscInt i = 0; i < nc * nc; i++) ar[i] += kscale;
    /* Mathematically never singular (the zero wavenumber's null space is fixed above). To round-off it
       is where a wavenumber's symbol falls below SG_VLASOV_SYMBOL_RTOL of the stiffness's scale: when
       the cells' widths differ so much that one direction's stiffness is lost beside the other's (a
       fuzzed deck, y from 0 to 2^31 beside x to 15.7: a symbol 4e-18 of the scale, exactly 0 in an
       -O1 build). Legitimate grids stay far above it: the smallest symbol is ~ (2 pi / N)^2 of the
       scale times the squared width ratio. */
    PetscCall(ComplexInverse(nc, ar, ai, SG_VLASOV_SYMBOL_RTOL * kscale, &singular));
    if (singular) {
      PetscReal wmin = v->dxc[0], wmax = v->dxc[0];
      for (PetscInt d = 1; d < cd; d++) {
        wmin = PetscMin(wmin, v->dxc[d]);
        wmax = PetscMax(wmax, v->dxc[d]);
      }
      PetscCall(PetscFree(Kp));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "vlasov: the field solve is singular to round-off at configuration wavenumber %" PetscInt_FMT " of %" PetscInt_FMT ": the configuration cells are %g to %g wide (ratio %g); use cells of comparable widths (vlasov_lower, vlasov_upper, vlasov_cells)", h, v->nhat, (double)wmin, (double)wmax, (double)(wmax / wmin));
    }
  }
  PetscCall(PetscFree(Kp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovFieldDestroy(SgVlasov *v)
{
  PetscFunctionBegin;
  if (v->plan_f) fftw_destroy_plan(v->plan_f);
  if (v->plan_b) fftw_destroy_plan(v->plan_b);
  if (v->fft_r) fftw_free(v->fft_r);
  if (v->fft_c) fftw_free(v->fft_c);
  v->plan_f = v->plan_b = NULL; v->fft_r = NULL; v->fft_c = NULL;
  PetscCall(PetscFree2(v->kinv_re, v->kinv_im));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscInt Wrap(PetscInt i, PetscInt n) { return i >= n ? i - n : (i < 0 ? i + n : i); }

/* Solve for E from the replicated charge density v->rho. */
static PetscErrorCode SolvePoisson(SgVlasov *v)
{
  const SgVlasovKernels *K  = v->kern;
  const PetscInt         nc = K->ncomp, nl = v->npx, cd = v->cdim, nx = v->Nx[0], ny = cd > 1 ? v->Nx[1] : 1;
  PetscReal              J = 1, mean = 0, phi_a[64], phi_k[64];

  PetscFunctionBegin;
  for (PetscInt d = 0; d < cd; d++) J *= 0.5 * v->dxc[d];
  for (PetscInt e = 0; e < v->ncx; e++) mean += v->rho[e * nl];
  mean /= v->ncx;
  for (PetscInt i = 0; i < nc * v->ncx; i++) v->fft_r[i] = 0;
  for (PetscInt ey = 0; ey < ny; ey++)
    for (PetscInt ex = 0; ex < nx; ex++) {
      const PetscInt   e = ey * nx + ex;
      const PetscReal *r = v->rho + e * nl;
      for (PetscInt a = 0; a < nl; a++) {
        PetscReal L = -mean * K->feC[a]; /* uniform background: only the m = 0 mode */
        for (PetscInt m = 0; m < nl; m++) L += K->feC[m * nl + a] * r[m];
        PetscInt tx = Wrap(ex + K->feshift[a * cd], nx), ty = cd > 1 ? Wrap(ey + K->feshift[a * cd + 1], ny) : 0;
        v->fft_r[K->fecomp[a] * v->ncx + ty * nx + tx] += J * L;
      }
    }
  fftw_execute(v->plan_f);
  double *fc = (double *)v->fft_c; /* interleaved re, im (fftw_complex layout) */
  for (PetscInt h = 0; h < v->nhat; h++) {
    double rr[16], ri[16];
    for (PetscInt c = 0; c < nc; c++) { rr[c] = fc[2 * (c * v->nhat + h)]; ri[c] = fc[2 * (c * v->nhat + h) + 1]; }
    const double *ar = v->kinv_re + h * nc * nc, *ai = v->kinv_im + h * nc * nc;
    for (PetscInt c = 0; c < nc; c++) {
      double ur = 0, ui = 0;
      for (PetscInt b = 0; b < nc; b++) {
        ur += ar[c * nc + b] * rr[b] - ai[c * nc + b] * ri[b];
        ui += ar[c * nc + b] * ri[b] + ai[c * nc + b] * rr[b];
      }
      fc[2 * (c * v->nhat + h)]     = ur / v->ncx;
      fc[2 * (c * v->nhat + h) + 1] = ui / v->ncx;
    }
  }
  fftw_execute(v->plan_b);
  for (PetscInt ey = 0; ey < ny; ey++)
    for (PetscInt ex = 0; ex < nx; ex++) {
      const PetscInt e = ey * nx + ex;
      for (PetscInt a = 0; a < nl; a++) {
        PetscInt tx = Wrap(ex + K->feshift[a * cd], nx), ty = cd > 1 ? Wrap(ey + K->feshift[a * cd + 1], ny) : 0;
        phi_a[a] = v->fft_r[K->fecomp[a] * v->ncx + ty * nx + tx];
      }
      for (PetscInt k = 0; k < nl; k++) {
        phi_k[k] = 0;
        for (PetscInt a = 0; a < nl; a++) phi_k[k] += K->feC[k * nl + a] * phi_a[a];
      }
      for (PetscInt d = 0; d < cd; d++) {
        PetscReal *Ed = v->E + (e * cd + d) * nl;
        for (PetscInt m = 0; m < nl; m++) {
          PetscReal s = 0;
          for (PetscInt k = 0; k < nl; k++) s += K->feD[(d * nl + m) * nl + k] * phi_k[k];
          Ed[m] = -(2 / v->dxc[d]) * s;
        }
      }
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Field from the distributions f[] of all species: charge density (summed over every rank),
   Poisson solve, then each species' acceleration (q/m) E and its bound max |acc| per cell. */
PetscErrorCode SgVlasovComputeField(SgSolver solver, Vec f[])
{
  SgVlasov      *v  = (SgVlasov *)solver->data;
  const PetscInt nl = v->npx, cd = v->cdim;
  MPI_Comm       comm = PetscObjectComm((PetscObject)solver);

  PetscFunctionBegin;
  if (v->field == SG_VLASOV_FIELD_NONE) PetscFunctionReturn(PETSC_SUCCESS);
  if (v->field == SG_VLASOV_FIELD_MAXWELL && v->em_ready) { /* E, B are state: only the bounds of the current field */
    SgVlasovMaxwellBounds(v);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cd == 3) { /* no 3-D Poisson solver: the deck's charge is uniform (checked at set-up), so the initial E is 0 */
    PetscCall(PetscArrayzero(v->E, v->ncx * cd * nl));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(v->ev_field, 0, 0, 0, 0));
  PetscCall(PetscArrayzero(v->work, v->ncx * nl));
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies   *s = &v->sp[is];
    const PetscScalar *fa;
    PetscReal          fac = s->charge;
    PetscInt           nloc;
    for (PetscInt j = 0; j < v->vdim; j++) fac *= 0.5 * s->dx[cd + j] * PETSC_SQRT2;
    PetscCall(VecGetArrayRead(f[is], &fa));
    PetscCall(VecGetLocalSize(f[is], &nloc));
    /* owned cells in storage order: DMDA axes (x fastest), then folded dims */
    PetscInt ncell = 0;
    SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
      const PetscScalar *fc = fa + idx * v->np;
      PetscReal         *r  = v->work + cx * nl;
      (void)n;
      for (PetscInt m = 0; m < nl; m++) r[m] += fac * fc[v->kofm[m]];
      ncell = idx + 1;
    });
    PetscCheck(ncell * v->np == nloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Moment loop size mismatch");
    PetscCall(VecRestoreArrayRead(f[is], &fa));
  }
  PetscCall(MPIU_Allreduce(v->work, v->rho, (PetscMPIInt)(v->ncx * nl), MPIU_REAL, MPIU_SUM, comm));
  PetscCall(SolvePoisson(v));
  /* acceleration and its bound: |Phi_m| <= prod_d sqrt((2 n_d + 1)/2) on the cell */
  for (PetscInt is = 0; is < v->nspecies; is++) {
    SgVlasovSpecies *s = &v->sp[is];
    for (PetscInt e = 0; e < v->ncx; e++)
      for (PetscInt j = 0; j < cd; j++) {
        PetscReal bound = 0;
        for (PetscInt m = 0; m < nl; m++) {
          PetscReal a = s->qbym * v->E[(e * cd + j) * nl + m], mx = 1;
          for (PetscInt d = 0; d < cd; d++) mx *= PetscSqrtReal(0.5 * (2 * v->kern->alphax[m * cd + d] + 1));
          s->acc[(e * cd + j) * nl + m] = a;
          bound += PetscAbsReal(a) * mx;
        }
        s->tau[e * cd + j] = bound;
      }
  }
  PetscCall(PetscLogEventEnd(v->ev_field, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscReal SgVlasovFieldEnergy(SgVlasov *v)
{
  PetscReal J = 1, W = 0;
  if (v->field == SG_VLASOV_FIELD_MAXWELL && v->em_ready) {
    PetscReal Wc[SG_VLASOV_EM_NC];
    SgVlasovMaxwellEnergies(v, v->emcur, Wc);
    for (PetscInt i = 0; i < SG_VLASOV_EM_NC; i++) W += Wc[i];
    return W;
  }
  for (PetscInt d = 0; d < v->cdim; d++) J *= 0.5 * v->dxc[d];
  for (PetscInt i = 0; i < v->ncx * v->cdim * v->npx; i++) W += v->E[i] * v->E[i];
  return 0.5 * J * W;
}
