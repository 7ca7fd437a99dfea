/* Dougherty / Lenard-Bernstein collisions (collisions: lbo), self-collisions only:
     d f/dt = ... + nu div_v [ (v - u) f + vt^2 grad_v f ],
   u and vt^2 the flow and thermal speed^2 of f. Conservative DG form after Hakim et al. (JPP 2020,
   "Conservative DG schemes for nonlinear Dougherty-Fokker-Planck collision operators"); our code.

   Velocity directions are treated one at a time (the operator is a sum over v_j). Per velocity cell
   and test function psi the weak form is
     nu { [psi G^] - int psi' (v - u) f + vt^2 ( -[psi' f^] + int psi'' f ) },
   the diffusion integrated by parts twice. Faces: drag (v_f - u) f_up, upwind with the plain flow
   M1/M0 (the direction of the drag); diffusion G^ = vt^2 ({f_v} + (p+1)^2/dv [f]) and f^ = {f}
   (symmetric interior penalty); the outer velocity faces carry no flux (G^ = 0) and f^ is the
   inner trace there. The operator is linear in (u_j, vt^2): R = R0 - sum_j u_j R_uj + vt^2 R_T.
   u and vt^2 are not the plain moments of f: they solve the vdim + 1 linear equations "the discrete
   momentum and energy of R vanish" (summed over the velocity grid and ranks; built from velocity
   sums of f, SystemRow, so the operator itself is evaluated once per cell), so the boundary
   terms (f at the outer velocity faces, the p = 1 representation of v^2) enter them and number,
   momentum and energy are conserved to round-off; number is conserved by the flux form itself.

   Configuration dependence: the operator is applied at the p + 2 Gauss nodes x_q of each
   configuration cell to the velocity-space polynomial f(x_q, v) (a tensor Legendre polynomial of
   degree <= p per direction in each velocity cell) and projected back on the phase basis by the
   same quadrature (tensor Gauss nodes when cdim > 1). The conservation holds node by node, so it
   holds after the projection (the cell totals are the projection on the constant).
   Folded velocity dimensions (1x3v, 2x2v, 2x3v: kept whole in each DMDA point's dof) need nothing
   special: a neighbour along a folded dimension lies in the same DMDA point, SgVlasovCellOffset
   finds it, and the velocity sums run over the owned cells and the ranks as for the DMDA axes.
   Limits: (p+1)^vdim <= 27 and (p+2)^cdim configuration nodes <= LBO_NQ. */
#include "vlasov.h"

#define LBO_NV  27 /* (p+1)^vdim: p <= 2 with vdim 3 */
#define LBO_NQ  27 /* (p+2)^cdim configuration quadrature nodes: 2x p <= 3, 3x p = 1 */
#define LBO_NPX 27 /* configuration basis functions: 3x p = 2 tensor at most */
/* velocity sums per configuration node (CellSums): M0, M1_j, M2, then 5 per direction from LBO_RJ */
#define LBO_NRAW(vd)  (2 + 6 * (vd))
#define LBO_RJ(vd, j) (2 + (vd) + 5 * (j))

static PetscReal dLeg(PetscInt n, PetscReal x)
{
  const PetscReal c = PetscSqrtReal((2 * n + 1) / 2.0);
  if (n == 1) return c;
  if (n == 2) return c * 3 * x;
  if (n == 3) return c * (7.5 * x * x - 1.5);
  return 0;
}

static PetscReal d2Leg(PetscInt n, PetscReal x)
{
  const PetscReal c = PetscSqrtReal((2 * n + 1) / 2.0);
  if (n == 2) return c * 3;
  if (n == 3) return c * 15 * x;
  return 0;
}

typedef struct {
  PetscInt  p1, nvt, str[3];
  PetscReal A[4][4], B[4][4], C[4][4], Lp[4], Lm[4], dLp[4], dLm[4];
} LboRef;

static void RefSetUp(PetscInt p, PetscInt vdim, LboRef *r)
{
  PetscReal xq[8], wq[8];
  r->p1  = p + 1;
  r->nvt = 1;
  for (PetscInt j = 0; j < vdim; j++) {
    r->str[j] = r->nvt;
    r->nvt *= r->p1;
  }
  SgVlasovGaussLegendre(p + 3, xq, wq);
  for (PetscInt a = 0; a <= p; a++) {
    r->Lp[a]  = SgVlasovLegendre(a, 1);
    r->Lm[a]  = SgVlasovLegendre(a, -1);
    r->dLp[a] = dLeg(a, 1);
    r->dLm[a] = dLeg(a, -1);
    for (PetscInt b = 0; b <= p; b++) {
      r->A[a][b] = r->B[a][b] = r->C[a][b] = 0;
      for (PetscInt q = 0; q < p + 3; q++) {
        PetscReal lb = SgVlasovLegendre(b, xq[q]);
        r->A[a][b] += wq[q] * dLeg(a, xq[q]) * lb;
        r->B[a][b] += wq[q] * dLeg(a, xq[q]) * xq[q] * lb;
        r->C[a][b] += wq[q] * d2Leg(a, xq[q]) * lb;
      }
    }
  }
}

/* Face between a lower cell (line coefficients gl, stride st) and an upper one (gu) at v = vf:
   drag flux pieces (F0 = vf f_up, Fu = f_up), diffusion flux FT = {f_v} + pen [f], and fh = {f}. */
static void Face(const LboRef *r, const PetscReal *gl, const PetscReal *gu, PetscInt st, PetscReal h, PetscReal vf, PetscReal u0, PetscReal pen, PetscReal *F0, PetscReal *Fu, PetscReal *FT, PetscReal *fh)
{
  PetscReal fl = 0, fu = 0, dl = 0, du = 0;
  for (PetscInt b = 0; b < r->p1; b++) {
    fl += gl[b * st] * r->Lp[b];
    fu += gu[b * st] * r->Lm[b];
    dl += gl[b * st] * r->dLp[b];
    du += gu[b * st] * r->dLm[b];
  }
  PetscReal up = vf > u0 ? fu : fl; /* drag speed -(v - u): from above where v > u */
  *F0 = vf * up;
  *Fu = up;
  *FT = 0.5 * (dl + du) / h + pen * (fu - fl);
  *fh = 0.5 * (fl + fu);
}

typedef struct {
  SgVlasov        *v;
  SgVlasovSpecies *s;
  LboRef           r;
  const PetscInt  *vidx;     /* [np] tensor velocity index of each phase basis function */
  PetscReal        phi[LBO_NQ][LBO_NPX], wx[LBO_NQ];
  PetscInt         nq;
  PetscReal        lm[4][3];   /* SgVlasovLegendreMoment(a, q) */
  PetscInt         mdir[LBO_NV]; /* tensor index i: -1 all degrees 0, j the one direction of nonzero degree, -2 more than one */
} LboCtx;

/* The moment tables of TensorMoments: int L_a eta^0 = 0 for a > 0, so only the indices with at most
   one nonzero degree carry number, momentum or energy (4 of the 8 at 3v, p = 1); the others are
   skipped instead of multiplied by zero (the moments took half of an LBO step, profiled). */
static void MomentSetUp(LboCtx *c)
{
  const PetscInt vd = c->v->vdim;
  for (PetscInt a = 0; a < 4; a++)
    for (PetscInt q = 0; q < 3; q++) c->lm[a][q] = SgVlasovLegendreMoment(a, q);
  for (PetscInt i = 0; i < c->r.nvt; i++) {
    c->mdir[i] = -1;
    for (PetscInt j = 0; j < vd; j++)
      if ((i / c->r.str[j]) % c->r.p1) c->mdir[i] = c->mdir[i] == -1 ? j : -2;
  }
}

/* Velocity slice at configuration node q of the cell with coefficients fc. */
static void Slice(const LboCtx *c, const PetscScalar *fc, PetscInt q, PetscReal *G)
{
  for (PetscInt i = 0; i < c->r.nvt; i++) G[i] = 0;
  for (PetscInt k = 0; k < c->v->np; k++) G[c->vidx[k]] += fc[k] * c->phi[q][c->v->mofk[k]];
}

/* The operator pieces of one velocity cell (global index n[], neighbours' slices Gn[2j] below,
   Gn[2j+1] above, NULL at the outer boundary): R0, Ru[j], RT as tensor coefficients (no nu). */
static void CellOperator(const LboCtx *c, const PetscInt n[], const PetscReal *G, PetscReal *const Gn[], PetscReal u0[], PetscReal *R0, PetscReal Ru[][LBO_NV], PetscReal *RT)
{
  const SgVlasov        *v = c->v;
  const SgVlasovSpecies *s = c->s;
  const LboRef          *r = &c->r;
  const PetscInt         cd = v->cdim, p1 = r->p1;

  for (PetscInt i = 0; i < r->nvt; i++) {
    R0[i] = RT[i] = 0;
    for (PetscInt j = 0; j < v->vdim; j++) Ru[j][i] = 0;
  }
  for (PetscInt j = 0; j < v->vdim; j++) {
    const PetscInt  d = cd + j, st = r->str[j];
    const PetscReal h = 0.5 * s->dx[d], w = s->lower[d] + (n[d] + 0.5) * s->dx[d], pen = p1 * p1 / s->dx[d];
    for (PetscInt base = 0; base < r->nvt; base++) {
      PetscReal F0[2] = {0, 0}, Fu[2] = {0, 0}, FT[2] = {0, 0}, fh[2] = {0, 0};
      if ((base / st) % p1) continue; /* one line along v_j per base: its faces serve every degree a */
      for (PetscInt side = 0; side < 2; side++) { /* faces: below (side 0) and above (side 1) */
        const PetscReal *gn = Gn[2 * j + side];
        if (gn) {
          if (side) Face(r, G + base, gn + base, st, h, w + h, u0[j], pen, &F0[1], &Fu[1], &FT[1], &fh[1]);
          else Face(r, gn + base, G + base, st, h, w - h, u0[j], pen, &F0[0], &Fu[0], &FT[0], &fh[0]);
        } else
          for (PetscInt b = 0; b < p1; b++) fh[side] += G[base + b * st] * (side ? r->Lp[b] : r->Lm[b]);
      }
      for (PetscInt a = 0; a < p1; a++) {
        const PetscInt i  = base + a * st;
        PetscReal      r0 = 0, ru = 0, rt = 0;
        for (PetscInt b = 0; b < p1; b++) { /* volume terms */
          const PetscReal g = G[base + b * st];
          r0 -= g * (w * r->A[a][b] + h * r->B[a][b]);
          ru -= g * r->A[a][b];
          rt += g * r->C[a][b] / h;
        }
        for (PetscInt side = 0; side < 2; side++) {
          const PetscReal sg = side ? 1 : -1, La = side ? r->Lp[a] : r->Lm[a], dLa = (side ? r->dLp[a] : r->dLm[a]) / h;
          r0 += sg * La * F0[side];
          ru += sg * La * Fu[side];
          rt += sg * (La * FT[side] - dLa * fh[side]);
        }
        R0[i] += r0 / h;
        Ru[j][i] += ru / h;
        RT[i] += rt / h;
      }
    }
  }
}

/* Velocity moments of tensor coefficients R on the cell n[]: mom[0] number, mom[1+j] momentum,
   mom[1+vdim] int |v|^2 (exact integrals of the Legendre polynomials). */
static void TensorMoments(const LboCtx *c, const PetscInt n[], const PetscReal *R, PetscReal mom[])
{
  const SgVlasov        *v = c->v;
  const SgVlasovSpecies *s = c->s;
  const PetscInt         vd = v->vdim, cd = v->cdim;
  PetscReal              Jv = 1, w[3], h[3];

  for (PetscInt j = 0; j < vd; j++) {
    h[j] = 0.5 * s->dx[cd + j];
    w[j] = s->lower[cd + j] + (n[cd + j] + 0.5) * s->dx[cd + j];
    Jv *= h[j];
  }
  for (PetscInt m = 0; m < vd + 2; m++) mom[m] = 0;
  for (PetscInt i = 0; i < c->r.nvt; i++) {
    const PetscInt dir = c->mdir[i];
    if (dir == -2 || R[i] == 0) continue;
    const PetscReal L00 = c->lm[0][0];
    if (dir == -1) {
      PetscReal p0 = Jv * R[i];
      for (PetscInt j = 0; j < vd; j++) p0 *= L00;
      mom[0] += p0;
    }
    for (PetscInt j = dir == -1 ? 0 : dir; j < (dir == -1 ? vd : dir + 1); j++) {
      const PetscInt a    = (i / c->r.str[j]) % c->r.p1;
      PetscReal      rest = Jv * R[i];
      for (PetscInt k = 0; k < vd; k++)
        if (k != j) rest *= L00;
      const PetscReal q0 = c->lm[a][0], q1 = c->lm[a][1], q2 = c->lm[a][2];
      mom[1 + j] += rest * (w[j] * q0 + h[j] * q1);
      mom[1 + vd] += rest * (w[j] * w[j] * q0 + 2 * w[j] * h[j] * q1 + h[j] * h[j] * q2);
    }
  }
}

/* The velocity sums of one cell's slice G at a node that the conservation system is built from
   (layout LBO_RAW: M0, M1_j, M2 = int |v|^2 f, then per direction j: the face integrals of f over the
   upper and the lower outer face, the cell-centre weighted int f and int v_j f, and the sum of the
   cell's two face integrals). A face integral of the cell's trace needs only the line of G with all
   other degrees 0 (int L_b = sqrt 2 delta_b0 across the face). */
static void CellSums(const LboCtx *c, const PetscInt n[], const PetscReal *G, PetscReal *raw)
{
  const SgVlasov        *v = c->v;
  const SgVlasovSpecies *s = c->s;
  const PetscInt         vd = v->vdim, cd = v->cdim;
  PetscReal              mom[5], h[3];

  TensorMoments(c, n, G, mom);
  for (PetscInt m = 0; m < vd + 2; m++) raw[m] += mom[m];
  for (PetscInt j = 0; j < vd; j++) h[j] = 0.5 * s->dx[cd + j];
  for (PetscInt j = 0; j < vd; j++) {
    const PetscInt  d = cd + j, st = c->r.str[j];
    const PetscReal w = s->lower[d] + (n[d] + 0.5) * s->dx[d];
    PetscReal       face = 1, up = 0, lo = 0, *rj = raw + LBO_RJ(vd, j);
    for (PetscInt k = 0; k < vd; k++)
      if (k != j) face *= h[k] * c->lm[0][0];
    for (PetscInt a = 0; a < c->r.p1; a++) {
      up += G[a * st] * c->r.Lp[a];
      lo += G[a * st] * c->r.Lm[a];
    }
    up *= face;
    lo *= face;
    if (n[d] == s->N[d] - 1) rj[0] += up;
    if (n[d] == 0) rj[1] += lo;
    rj[2] += w * mom[0];
    rj[3] += w * mom[1 + j];
    rj[4] += up + lo;
  }
}

/* Row m (momentum j = m < vdim, energy m = vdim) of the conservation system at one node from the
   velocity sums raw (CellSums over the whole velocity grid): the momentum and energy of R0, R_uj and
   R_T. They are the weak form of CellOperator with the test function v_k or |v|^2 (in the test space,
   so the moment of R equals it), summed over the cells: the face terms of single-valued fluxes
   telescope, the outer faces carry G^ = 0, and what remains is
     momentum k:  R0: -M1_k,  R_uj: -delta_jk M0,  R_T: -(F_k(upper face) - F_k(lower face));
     energy, p >= 2 (|v|^2 in the space: d_j psi = 2 v_j, d_j^2 psi = 2):
                  R0: -2 M2,  R_uj: -2 M1_j,  R_T: sum_j 2 M0 - 2 (v_max F_j(upper) - v_min F_j(lower));
     energy, p = 1 (the projection of v_j^2 on a cell is 2 w v_j - w^2 + h^2/3, w the cell centre:
                  continuous across faces, slope 2 w jumping by -2 dv at every interior face):
                  R0: -2 sum_j W1_j,  R_uj: -2 W0_j,
                  R_T: sum_j 2 dv (sum of {f} over the interior faces) - 2 w_last F_j(upper) + 2 w_first F_j(lower).
   So one sweep of cheap cell sums replaces a sweep of CellOperator (the operator is computed once,
   for the output); the two agree to round-off (the telescoped sums are exact identities). */
static void SystemRow(const LboCtx *c, const PetscReal *raw, PetscInt m, PetscReal *r0, PetscReal ru[3], PetscReal *rt)
{
  const SgVlasov        *v = c->v;
  const SgVlasovSpecies *s = c->s;
  const PetscInt         vd = v->vdim, cd = v->cdim;

  if (m < vd) {
    const PetscReal *rm = raw + LBO_RJ(vd, m);
    *r0                 = -raw[1 + m];
    for (PetscInt j = 0; j < vd; j++) ru[j] = j == m ? -raw[0] : 0;
    *rt = -(rm[0] - rm[1]);
    return;
  }
  *r0 = 0;
  *rt = 0;
  for (PetscInt j = 0; j < vd; j++) {
    const PetscInt   d = cd + j;
    const PetscReal *rj = raw + LBO_RJ(vd, j), vlo = s->lower[d], vhi = s->lower[d] + s->N[d] * s->dx[d];
    if (v->order >= 2) {
      ru[j] = -2 * raw[1 + j];
      *rt += 2 * raw[0] - 2 * (vhi * rj[0] - vlo * rj[1]);
    } else {
      const PetscReal inner = 0.5 * rj[4] - 0.5 * (rj[0] + rj[1]); /* sum of {f} over the interior faces */
      *r0 -= 2 * rj[3];
      ru[j] = -2 * rj[2];
      *rt += 2 * s->dx[d] * inner - 2 * (vhi - 0.5 * s->dx[d]) * rj[0] + 2 * (vlo + 0.5 * s->dx[d]) * rj[1];
    }
  }
  if (v->order >= 2) *r0 = -2 * raw[1 + vd];
}

/* Solve the small dense system A x = b (n <= 4) by Gaussian elimination with partial pivoting. */
static PetscBool SmallSolve(PetscInt n, PetscReal A[4][4], PetscReal b[4], PetscReal x[4])
{
  for (PetscInt k = 0; k < n; k++) {
    PetscInt piv = k;
    for (PetscInt i = k + 1; i < n; i++)
      if (PetscAbsReal(A[i][k]) > PetscAbsReal(A[piv][k])) piv = i;
    if (A[piv][k] == 0) return PETSC_FALSE;
    for (PetscInt j = 0; j < n; j++) {
      PetscReal t = A[k][j];
      A[k][j]     = A[piv][j];
      A[piv][j]   = t;
    }
    PetscReal t = b[k];
    b[k]        = b[piv];
    b[piv]      = t;
    for (PetscInt i = k + 1; i < n; i++) {
      PetscReal f = A[i][k] / A[k][k];
      for (PetscInt j = k; j < n; j++) A[i][j] -= f * A[k][j];
      b[i] -= f * b[k];
    }
  }
  for (PetscInt k = n - 1; k >= 0; k--) {
    PetscReal sum = b[k];
    for (PetscInt j = k + 1; j < n; j++) sum -= A[k][j] * x[j];
    x[k] = sum / A[k][k];
  }
  return PETSC_TRUE;
}

/* Visit the owned cells with the slices of the cell and its velocity neighbours at every node
   (v and s: the solver data and species in scope, as SG_VLASOV_FOR_OWNED needs them by name). */
#define LBO_FOR_CELLS(c, fl, ...) \
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, { \
    PetscInt   off_; \
    PetscReal  Gc_[LBO_NQ][LBO_NV], Gnb_[6][LBO_NQ][LBO_NV], *Gn_[LBO_NQ][6]; \
    PetscCall(SgVlasovCellOffset((c)->s, n, PETSC_TRUE, &off_)); \
    for (PetscInt q_ = 0; q_ < (c)->nq; q_++) Slice((c), (fl) + off_, q_, Gc_[q_]); \
    for (PetscInt j_ = 0; j_ < (c)->v->vdim; j_++) \
      for (PetscInt sd_ = 0; sd_ < 2; sd_++) { \
        PetscInt nn_[6] = {n[0], n[1], n[2], n[3], n[4], n[5]}, d_ = (c)->v->cdim + j_, o_; \
        nn_[d_] += sd_ ? 1 : -1; \
        for (PetscInt q_ = 0; q_ < (c)->nq; q_++) Gn_[q_][2 * j_ + sd_] = NULL; \
        if (nn_[d_] < 0 || nn_[d_] >= (c)->s->N[d_]) continue; \
        PetscCall(SgVlasovCellOffset((c)->s, nn_, PETSC_TRUE, &o_)); \
        for (PetscInt q_ = 0; q_ < (c)->nq; q_++) { \
          Slice((c), (fl) + o_, q_, Gnb_[2 * j_ + sd_][q_]); \
          Gn_[q_][2 * j_ + sd_] = Gnb_[2 * j_ + sd_][q_]; \
        } \
      } \
    __VA_ARGS__ \
  })

/* r += nu C(x) for species s (collisions: lbo). Also records s->lbo_rate, the largest
   explicit-stability rate nu ((2p+1) |v - u|/dv + 2 (p+1)^4 vt^2 / dv^2) over the nodes. */
PetscErrorCode SgVlasovLBORHS(SgSolver solver, SgVlasovSpecies *s, Vec x, Vec r)
{
  SgVlasov          *v = (SgVlasov *)solver->data;
  LboCtx             c;
  const PetscInt     vd = v->vdim, p = v->order, nr = LBO_NRAW(vd);
  PetscReal          xg[8], wg[8], *u0 = v->lbo_u0, *sys = v->lbo_sys, *coef = v->lbo_coef;
  const PetscScalar *fl;
  PetscScalar       *out;
  MPI_Comm           comm = PetscObjectComm((PetscObject)solver);

  PetscFunctionBegin;
  c.v    = v;
  c.s    = s;
  c.vidx = v->lbo_vidx;
  c.nq   = PetscPowInt(p + 2, v->cdim);
  RefSetUp(p, vd, &c.r);
  MomentSetUp(&c);
  SgVlasovGaussLegendre(p + 2, xg, wg);
  for (PetscInt q = 0; q < c.nq; q++) { /* tensor nodes, the first configuration direction fastest */
    c.wx[q] = 1;
    for (PetscInt d = 0; d < v->cdim; d++) c.wx[q] *= wg[(q / PetscPowInt(p + 2, d)) % (p + 2)];
    for (PetscInt m = 0; m < v->npx; m++) {
      c.phi[q][m] = 1;
      for (PetscInt d = 0; d < v->cdim; d++) c.phi[q][m] *= SgVlasovLegendre(v->kern->alphax[m * v->cdim + d], xg[(q / PetscPowInt(p + 2, d)) % (p + 2)]);
    }
  }
  PetscCall(DMGlobalToLocal(s->da, x, INSERT_VALUES, s->floc));
  PetscCall(VecGetArrayRead(s->floc, &fl));
  /* 1. the velocity sums at the nodes (CellSums), summed over the ranks: the plain flow M1/M0 that
        picks the drag's upwind side, and the conservation system sum R0 - sum_j u_j R_uj + vt^2 R_T = 0
        (momentum j, energy; SystemRow) */
  PetscCall(PetscArrayzero(v->lbo_work, v->ncx * c.nq * nr));
  SG_VLASOV_FOR_OWNED(v, s, idx, n, cx, {
    PetscInt off;
    PetscCall(SgVlasovCellOffset(s, n, PETSC_TRUE, &off));
    for (PetscInt q = 0; q < c.nq; q++) {
      PetscReal G[LBO_NV];
      Slice(&c, fl + off, q, G);
      CellSums(&c, n, G, v->lbo_work + (cx * c.nq + q) * nr);
    }
    (void)idx;
  });
  PetscCall(MPIU_Allreduce(v->lbo_work, sys, (PetscMPIInt)(v->ncx * c.nq * nr), MPIU_REAL, MPIU_SUM, comm));
  for (PetscInt i = 0; i < v->ncx * c.nq; i++) {
    PetscCheck(sys[i * nr] > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "collisions lbo: species %s has density %g <= 0 at a node of configuration cell %" PetscInt_FMT ": no flow or temperature; refine the grid or lower nu", s->name, (double)sys[i * nr], i / c.nq);
    for (PetscInt j = 0; j < vd; j++) u0[i * vd + j] = sys[i * nr + 1 + j] / sys[i * nr];
  }
  s->lbo_rate = 0;
  for (PetscInt i = 0; i < v->ncx * c.nq; i++) {
    PetscReal A[4][4], b[4], sol[4] = {0, 0, 0, 0}, vmax = 0, dvmin = PETSC_MAX_REAL;
    for (PetscInt m = 0; m < vd + 1; m++) {
      PetscReal r0, ru[3], rt;
      SystemRow(&c, sys + i * nr, m, &r0, ru, &rt);
      b[m] = -r0;
      for (PetscInt j = 0; j < vd; j++) A[m][j] = -ru[j];
      A[m][vd] = rt;
    }
    PetscCheck(SmallSolve(vd + 1, A, b, sol), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "collisions lbo: species %s: singular conservation system at a node of configuration cell %" PetscInt_FMT "; refine the velocity grid", s->name, i / c.nq);
    PetscCheck(sol[vd] > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "collisions lbo: species %s has temperature %g <= 0 at a node of configuration cell %" PetscInt_FMT ": refine the velocity grid or widen the box", s->name, (double)sol[vd], i / c.nq);
    for (PetscInt j = 0; j <= vd; j++) coef[i * (vd + 1) + j] = sol[j];
    for (PetscInt j = 0; j < vd; j++) {
      vmax  = PetscMax(vmax, s->vmax[j] + PetscAbsReal(sol[j]));
      dvmin = PetscMin(dvmin, s->dx[v->cdim + j]);
    }
    s->lbo_rate = PetscMax(s->lbo_rate, s->nu * vd * ((2 * p + 1) * vmax / dvmin + 2 * PetscPowRealInt(p + 1, 4) * sol[vd] / (dvmin * dvmin)));
  }
  /* 3. r += nu sum_q w_q phi_m(x_q) (R0 - u.Ru + vt^2 RT) */
  PetscCall(VecGetArray(r, &out));
  LBO_FOR_CELLS(&c, fl, {
    PetscScalar *oc = out + idx * v->np;
    for (PetscInt q = 0; q < c.nq; q++) {
      PetscReal        R0[LBO_NV], Ru[3][LBO_NV], RT[LBO_NV], R[LBO_NV];
      const PetscReal *cf = coef + (cx * c.nq + q) * (vd + 1);
      CellOperator(&c, n, Gc_[q], Gn_[q], u0 + (cx * c.nq + q) * vd, R0, Ru, RT);
      for (PetscInt i = 0; i < c.r.nvt; i++) {
        R[i] = R0[i] + cf[vd] * RT[i];
        for (PetscInt j = 0; j < vd; j++) R[i] -= cf[j] * Ru[j][i];
      }
      for (PetscInt k = 0; k < v->np; k++) oc[k] += s->nu * c.wx[q] * c.phi[q][v->mofk[k]] * R[v->lbo_vidx[k]];
    }
  });
  PetscCall(VecRestoreArray(r, &out));
  PetscCall(VecRestoreArrayRead(s->floc, &fl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovLBOSetUp(SgSolver solver, SgVlasov *v)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)solver);
  const PetscInt nq = PetscPowInt(v->order + 2, v->cdim), vd = v->vdim, nr = LBO_NRAW(vd);

  PetscFunctionBegin;
  PetscCheck(nq <= LBO_NQ && v->npx <= LBO_NPX, comm, PETSC_ERR_USER_INPUT, "collisions lbo: order %" PetscInt_FMT " in %" PetscInt_FMT " configuration dimensions is beyond the operator's tables; use a lower order", v->order, v->cdim);
  PetscCheck(PetscPowInt(v->order + 1, vd) <= LBO_NV, comm, PETSC_ERR_USER_INPUT, "collisions lbo: order %" PetscInt_FMT " with vdim %" PetscInt_FMT " is beyond the operator's tables; use a lower order", v->order, vd);
  PetscCall(PetscMalloc5(v->ncx * nq * vd, &v->lbo_u0, v->ncx * nq * nr, &v->lbo_sys, v->ncx * nq * nr, &v->lbo_work, v->ncx * nq * (vd + 1), &v->lbo_coef, v->np, &v->lbo_vidx));
  for (PetscInt k = 0; k < v->np; k++) {
    PetscInt i = 0, st = 1;
    for (PetscInt j = 0; j < vd; j++) {
      i += v->kern->alpha[k * v->pdim + v->cdim + j] * st;
      st *= v->order + 1;
    }
    v->lbo_vidx[k] = i;
  }
  for (PetscInt is = 0; is < v->nspecies; is++) { /* first stability rate, for the first time step */
    SgVlasovSpecies *s = &v->sp[is];
    if (s->nu == 0) continue;
    PetscCall(VecZeroEntries(s->fM));
    PetscCall(SgVlasovLBORHS(solver, s, s->f, s->fM));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgVlasovLBODestroy(SgVlasov *v)
{
  PetscFunctionBegin;
  PetscCall(PetscFree5(v->lbo_u0, v->lbo_sys, v->lbo_work, v->lbo_coef, v->lbo_vidx));
  PetscFunctionReturn(PETSC_SUCCESS);
}
