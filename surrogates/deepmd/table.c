/* Tabulated embedding ("compressed" model, after DeePMD-kit's dp compress): each embedding output
   G_m(x) becomes a quintic on every interval of a uniform grid in the normalised input x, matched
   to the net's value, first and second derivative at both ends (quintic Hermite), so value and
   derivative are C^1/C^2 across knots and the error is O(h^6 G^(6)). Range: x from the value at
   r = rcut (s = 0; also the padding rows) to the value at r = rmin; outside it the net serves. */
#include <math.h>
#include "deepmd.h"
#include "sgdeepmd.h"

PetscErrorCode SgDeepmdCompress(SgDeepmd m, PetscReal step, PetscReal rmin)
{
  const SgDPConfig *c = &m->cfg;
  PetscInt          M = c->emb[c->nemb - 1], maxw = 1;
  PetscReal         lo = PETSC_MAX_REAL, hi = -PETSC_MAX_REAL, sw, dsw;

  PetscFunctionBegin;
  PetscCheck(step > 0 && rmin > 0 && rmin < c->rcut, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd compress: need step > 0 (got %g) and 0 < rmin (%g) < rcut", (double)step, (double)rmin);
  PetscCheck(!m->sdavg, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "deepmd compress: this imported model has per-slot davg/dstd (DeePMD-kit's [ntypes, nnei, 4] statistics differ between slots); the table is built for per-type statistics: use the model uncompressed");
  SgDPSwitch(rmin, c->rcut_smth, c->rcut, &sw, &dsw);
  for (PetscInt t = 0; t < c->ntypes; t++) { /* the input range over all centre types */
    PetscReal a = (0 - m->davg[t][0]) / m->dstd[t][0], b = (sw / rmin - m->davg[t][0]) / m->dstd[t][0];
    lo = PetscMin(lo, PetscMin(a, b));
    hi = PetscMax(hi, PetscMax(a, b));
  }
  lo -= step;
  hi += step;
  for (PetscInt l = 0; l < c->nemb; l++) maxw = PetscMax(maxw, c->emb[l]);
  m->tab.x0 = lo;
  m->tab.h = step;
  m->tab.n = (PetscInt)ceil((hi - lo) / step);
  PetscInt   np = m->tab.n + 1;
  PetscReal *xs, *G, *dG, *d2G, *work, h = step;
  PetscCall(PetscMalloc5(np, &xs, np * M, &G, np * M, &dG, np * M, &d2G, 6 * np * maxw, &work));
  for (PetscInt i = 0; i < np; i++) xs[i] = lo + i * step;
  for (PetscInt t = 0; t < SgDPNumEmbed(c); t++) { /* every embedding net over the same range */
    PetscCall(PetscFree(m->tab.c[t]));
    PetscCall(PetscMalloc1((size_t)m->tab.n * M * 6, &m->tab.c[t]));
    SgDPEmbedEval(&m->enet[t], np, xs, 2, G, dG, d2G, work);
    for (PetscInt i = 0; i < m->tab.n; i++)
      for (PetscInt q = 0; q < M; q++) {
        PetscReal  y0 = G[i * M + q], y1 = G[(i + 1) * M + q], v0 = dG[i * M + q], v1 = dG[(i + 1) * M + q];
        PetscReal  a0 = d2G[i * M + q], a1 = d2G[(i + 1) * M + q], *cc = m->tab.c[t] + ((size_t)i * M + q) * 6;
        /* p(s) = c0 + c1 s + ... + c5 s^5 on [0,h] with p,p',p'' given at both ends */
        PetscReal dy = y1 - y0 - v0 * h - 0.5 * a0 * h * h, dv = v1 - v0 - a0 * h, da = a1 - a0;
        cc[0] = y0;
        cc[1] = v0;
        cc[2] = 0.5 * a0;
        cc[3] = (10 * dy - 4 * dv * h + 0.5 * da * h * h) / (h * h * h);
        cc[4] = (-15 * dy + 7 * dv * h - da * h * h) / (h * h * h * h);
        cc[5] = (6 * dy - 3 * dv * h + 0.5 * da * h * h) / (h * h * h * h * h);
      }
  }
  m->tab.on = PETSC_TRUE;
  m->tab.step = step;
  m->tab.rmin = rmin;
  PetscCall(PetscFree5(xs, G, dG, d2G, work));
  PetscFunctionReturn(PETSC_SUCCESS);
}
