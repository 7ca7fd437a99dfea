/* End-of-run report: fits of the field-energy history against the kinetic dispersion relation,
   the free-streaming error, and the final conserved quantities (printed with %.17g so runs on
   different rank counts can be compared digit by digit).

   Fits (field energy W(t) recorded at the start of every step):
   - landau: for a single damped mode E ~ e^{gamma t} cos(omega t + phi), W ~ e^{2 gamma t} cos^2, so
     successive maxima of W are pi/omega apart and ln W at the maxima grows like 2 gamma t. Maxima
     are located by a parabola through ln W at three samples; gamma and omega come from a least
     squares line through the maxima and their mean spacing (as in gkylzero's regression tests).
   - growth: least-squares slope of ln W over the window, gamma = slope / 2. */
#include "vlasov.h"

PetscErrorCode SgVlasovHistoryAppend(SgVlasov *v, PetscReal t, PetscReal W)
{
  PetscFunctionBegin;
  if (v->nhist == v->chist) {
    PetscReal *nt, *nw;
    PetscInt   nc = v->chist ? 2 * v->chist : 4096;
    PetscCall(PetscMalloc2(nc, &nt, nc, &nw));
    if (v->nhist) {
      PetscCall(PetscArraycpy(nt, v->hist_t, v->nhist));
      PetscCall(PetscArraycpy(nw, v->hist_W, v->nhist));
    }
    PetscCall(PetscFree2(v->hist_t, v->hist_W));
    v->hist_t = nt; v->hist_W = nw; v->chist = nc;
  }
  v->hist_t[v->nhist] = t;
  v->hist_W[v->nhist] = W;
  v->nhist++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void LineFit(PetscInt n, const PetscReal x[], const PetscReal y[], PetscReal *slope)
{
  PetscReal sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (PetscInt i = 0; i < n; i++) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i]; }
  *slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static PetscErrorCode FitLandau(MPI_Comm comm, SgVlasov *v, PetscReal *gamma, PetscReal *omega, PetscInt *npeaks)
{
  PetscReal *tp, *lp;
  PetscInt   n = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(v->nhist, &tp, v->nhist, &lp));
  for (PetscInt i = 1; i + 1 < v->nhist; i++) {
    if (v->hist_t[i] < v->fit_window[0] || v->hist_t[i] > v->fit_window[1]) continue;
    if (!(v->hist_W[i] > v->hist_W[i - 1] && v->hist_W[i] >= v->hist_W[i + 1])) continue;
    PetscReal x0 = v->hist_t[i - 1], x1 = v->hist_t[i], x2 = v->hist_t[i + 1];
    PetscReal y0 = PetscLogReal(v->hist_W[i - 1]), y1 = PetscLogReal(v->hist_W[i]), y2 = PetscLogReal(v->hist_W[i + 1]);
    /* vertex of the parabola through the three points (Newton divided differences) */
    PetscReal d01 = (y1 - y0) / (x1 - x0), d12 = (y2 - y1) / (x2 - x1), c2 = (d12 - d01) / (x2 - x0);
    if (c2 >= 0) continue;
    PetscReal xv = 0.5 * (x0 + x1) - 0.5 * d01 / c2;
    tp[n]        = xv;
    lp[n]        = y0 + d01 * (xv - x0) + c2 * (xv - x0) * (xv - x1);
    n++;
  }
  *npeaks = n;
  if (n < 3) { /* the run itself is fine: say why there is no fit instead of failing */
    PetscCall(PetscPrintf(comm, "vlasov fit landau: only %" PetscInt_FMT " field-energy maxima in the window [%g, %g]; a fit needs 3: widen vlasov_fit_window or run longer (sim t_end)\n", n, (double)v->fit_window[0], (double)v->fit_window[1]));
    PetscCall(PetscFree2(tp, lp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  LineFit(n, tp, lp, gamma);
  *gamma *= 0.5;
  *omega = PETSC_PI * (n - 1) / (tp[n - 1] - tp[0]);
  PetscCall(PetscFree2(tp, lp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FitGrowth(MPI_Comm comm, SgVlasov *v, PetscReal *gamma, PetscInt *npts)
{
  PetscReal *t, *l;
  PetscInt   n = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(v->nhist, &t, v->nhist, &l));
  for (PetscInt i = 0; i < v->nhist; i++) {
    if (v->hist_t[i] < v->fit_window[0] || v->hist_t[i] > v->fit_window[1] || !(v->hist_W[i] > 0)) continue;
    t[n] = v->hist_t[i]; l[n] = PetscLogReal(v->hist_W[i]); n++;
  }
  *npts = n;
  if (n < 2) {
    PetscCall(PetscPrintf(comm, "vlasov fit growth: no field-energy samples in the window [%g, %g]: adjust vlasov_fit_window or sim t_end\n", (double)v->fit_window[0], (double)v->fit_window[1]));
    PetscCall(PetscFree2(t, l));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  LineFit(n, t, l, gamma);
  *gamma *= 0.5;
  PetscCall(PetscFree2(t, l));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovReport(SgSolver solver, SgOutput out)
{
  SgVlasov          *v    = (SgVlasov *)solver->data;
  MPI_Comm           comm = PetscObjectComm((PetscObject)solver);
  PetscInt           nd;
  const char *const *names;
  PetscReal         *vals;

  PetscFunctionBegin;
  if (v->fit == SG_VLASOV_FIT_LANDAU || v->fit == SG_VLASOV_FIT_GROWTH) {
    PetscReal wr, wi, g = 0, w = 0, val[2];
    PetscInt  n = 0;
    wr = v->fit_root[0];
    wi = v->fit_root[1];
    if (v->fit_coll)
      PetscCall(PetscPrintf(comm, "vlasov fit: theory is the collisional root (%s, nu = %g): omega = %.9f, gamma = %.9f; collisionless root omega = %.9f, gamma = %.9f\n", v->collisions == 2 ? "lbo" : "bgk", (double)v->sp[0].nu, (double)wr, (double)wi, (double)v->fit_root0[0], (double)v->fit_root0[1]));
    if (v->fit == SG_VLASOV_FIT_LANDAU) {
      PetscCall(FitLandau(comm, v, &g, &w, &n));
      if (n < 3) goto final;
      PetscCall(PetscPrintf(comm, "vlasov fit landau: %" PetscInt_FMT " field-energy maxima in t = [%g, %g]\n", n, (double)v->fit_window[0], (double)PetscMin(v->fit_window[1], v->hist_t[v->nhist - 1])));
      PetscCall(PetscPrintf(comm, "vlasov fit landau: gamma measured %.6f  theory %.6f  (rel. error %.2e)\n", (double)g, (double)wi, (double)PetscAbsReal((g - wi) / wi)));
      PetscCall(PetscPrintf(comm, "vlasov fit landau: omega measured %.6f  theory %.6f  (rel. error %.2e)\n", (double)w, (double)wr, (double)PetscAbsReal((w - wr) / wr)));
      val[0] = w; val[1] = wr;
      PetscCall(SgOutputWriteReport(out, "omega_measured_theory", "omega_pe", 2, val));
    } else {
      PetscCall(FitGrowth(comm, v, &g, &n));
      if (n < 2) goto final;
      PetscCall(PetscPrintf(comm, "vlasov fit growth: %" PetscInt_FMT " samples in t = [%g, %g]; theory root omega = %.6f %+.6fi\n", n, (double)v->fit_window[0], (double)PetscMin(v->fit_window[1], v->hist_t[v->nhist - 1]), (double)wr, (double)wi));
      PetscCall(PetscPrintf(comm, "vlasov fit growth: gamma measured %.6f  theory %.6f  (rel. error %.2e)\n", (double)g, (double)wi, (double)PetscAbsReal((g - wi) / wi)));
    }
    val[0] = g; val[1] = wi;
    PetscCall(SgOutputWriteReport(out, "gamma_measured_theory", "omega_pe", 2, val));
  }
  if (v->exact == 2) {
    PetscReal err, om, val[2];
    PetscCall(SgVlasovPlaneWaveError(v, v->t_now, &err, &om));
    PetscCall(PetscPrintf(comm, "vlasov exact planewave: relative L2 error %.10e at t = %g\n", (double)err, (double)v->t_now));
    PetscCall(PetscPrintf(comm, "vlasov exact planewave: omega measured %.12f  theory c k = %.12f  (rel. error %.2e)\n", (double)om, (double)(v->c_light * PetscAbsReal(v->em_k[0])), (double)PetscAbsReal(om / (v->c_light * PetscAbsReal(v->em_k[0])) - 1)));
    PetscCall(SgOutputWriteReport(out, "planewave_l2_error", "", 1, &err));
    val[0] = om; val[1] = v->c_light * PetscAbsReal(v->em_k[0]);
    PetscCall(SgOutputWriteReport(out, "planewave_omega_measured_theory", "omega_pe", 2, val));
  } else if (v->exact) {
    PetscReal err;
    PetscCall(SgVlasovFreeStreamError(v, &v->sp[0], v->t_now, comm, &err));
    PetscCall(PetscPrintf(comm, "vlasov exact freestream: relative L2 error %.10e at t = %g\n", (double)err, (double)v->t_now));
    PetscCall(SgOutputWriteReport(out, "freestream_l2_error", "", 1, &err));
  }
final:
  if (v->collisions) /* how far each colliding species is from the Maxwellian of its moments */
    for (PetscInt is = 0; is < v->nspecies; is++) {
      PetscReal dist;
      if (v->sp[is].nu == 0) continue;
      if (v->cdim == 3) { /* the corrected Maxwellian (BGK's projection) is built for cdim <= 2 */
        PetscCall(PetscPrintf(comm, "vlasov lbo: %s: distance to the Maxwellian of its moments not computed in 3x (no 3x Maxwellian projection)\n", v->sp[is].name));
        continue;
      }
      PetscCall(SgVlasovMaxwellianDistance(solver, &v->sp[is], &dist));
      PetscCall(PetscPrintf(comm, "vlasov %s: %s: relative L2 distance to the Maxwellian of its moments %.6e at t = %g\n", v->collisions == 2 ? "lbo" : "bgk", v->sp[is].name, (double)dist, (double)v->t_now));
    }
  /* final conserved quantities and their drift since t = 0 */
  PetscCall(SgSolverGetDiagnostics(solver, &nd, &names, NULL));
  PetscCall(PetscMalloc1(nd, &vals));
  PetscCall(SgVlasovDiagnose(solver, v->t_now, vals));
  { /* a quantity that starts at zero (momentum of a symmetric plasma: round-off) has no relative
       change: it is reported by its absolute change. "Zero" = below 1e-10 of the largest diagnostic. */
    PetscReal scale = 0;
    for (PetscInt i = 0; i < nd; i++) scale = PetscMax(scale, PetscAbsReal(v->diag0[i]));
    for (PetscInt i = 0; i < nd; i++) {
      PetscBool zero = PetscAbsReal(v->diag0[i]) <= 1e-10 * scale ? PETSC_TRUE : PETSC_FALSE;
      PetscReal chg  = zero ? vals[i] - v->diag0[i] : (vals[i] - v->diag0[i]) / PetscAbsReal(v->diag0[i]);
      PetscCall(PetscPrintf(comm, "vlasov final: %-16s %.17g  (%s change %.3e)\n", names[i], (double)vals[i], zero ? "absolute" : "relative", (double)chg));
    }
  }
  PetscCall(PetscFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}
