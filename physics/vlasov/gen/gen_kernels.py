#!/usr/bin/python3
"""Generate the modal DG kernels of physics/vlasov (run by `make kernels`).

Design after Hakim & Juno (SC20) and gkylzero: the solution in each phase-space cell is expanded
in an orthonormal modal basis on the reference cell [-1,1]^d; every volume and surface term of the
Vlasov equation is an integral of a product of polynomials, computed here exactly and emitted as
unrolled C with numeric constants (alias-free, matrix-free, quadrature-free).

Bases. Both the serendipity and the tensor space are spanned by the monomials eta^alpha of a
downward-closed set of multi-indices alpha (tensor: max alpha_i <= p; serendipity: superlinear
degree <= p, Arnold & Awanou 2011). Gram-Schmidt of such a set gives exactly the products of
normalised Legendre polynomials L_n = sqrt((2n+1)/2) P_n, so every multi-dimensional integral
factorises into 1D integrals of Legendre polynomials. Those are computed exactly (sympy rationals);
a product coefficient is r*sqrt(s) with r, s exact fractions, rounded once when emitted.

Emitted per (cdim, vdim, family, p):
  vol      streaming + acceleration volume term
  surfx_d  streaming flux through a face normal to x_d (upwind weights cL, cR, penalty c0)
  surfv_j  acceleration flux through a face normal to v_j (penalty tau; tau=0 is central)
  tables   multi-indices of the phase and configuration bases, and the continuous finite-element
           tables of the Poisson solve (nodal basis, reference stiffness, shifts/components).

Usage: gen_kernels.py OUTDIR
"""
import sys, os, itertools
from fractions import Fraction as Fr
import sympy as sp

ETA = sp.Symbol('eta')
MAXN = 5


def legendre(n):
    return sp.Poly(sp.legendre(n, ETA), ETA)


P = [legendre(n) for n in range(MAXN + 2)]
DP = [p.diff(ETA) for p in P]
X = sp.Poly(ETA, ETA)


def integ(poly):
    q = poly.integrate()
    return Fr(str(q.eval(1) - q.eval(-1)))


# 1D tables over unnormalised Legendre P_n; normalisation sqrt((2n+1)/2) is applied per factor.
def nrm2(n):
    return Fr(2 * n + 1, 2)


_cache = {}


def t1(kind, *idx):
    key = (kind,) + idx
    if key in _cache:
        return _cache[key]
    if kind == 'I3':   # int P_a P_b P_c
        a, b, c = idx; v = integ(P[a] * P[b] * P[c])
    elif kind == 'D2':  # int P_a' P_b
        a, b = idx; v = integ(DP[a] * P[b])
    elif kind == 'D3':  # int P_a' P_b P_c
        a, b, c = idx; v = integ(DP[a] * P[b] * P[c])
    elif kind == 'E1':  # int P_a eta P_b
        a, b = idx; v = integ(P[a] * X * P[b])
    elif kind == 'DE1':  # int P_a' eta P_b
        a, b = idx; v = integ(DP[a] * X * P[b])
    elif kind == 'DD':  # int P_a' P_b'
        a, b = idx; v = integ(DP[a] * DP[b])
    elif kind == 'I2':
        a, b = idx; v = integ(P[a] * P[b])
    else:
        raise ValueError(kind)
    _cache[key] = v
    return v


class C:
    """Exact coefficient r*sqrt(s)."""
    __slots__ = ('r', 's')

    def __init__(self, r, s=Fr(1)):
        self.r, self.s = Fr(r), Fr(s)

    def __mul__(self, o):
        return C(self.r * o.r, self.s * o.s)

    def val(self):
        return float(self.r) * (float(self.s) ** 0.5) if self.r else 0.0


def Lval(n, x):  # normalised Legendre at x = +-1
    return C(Fr(x) ** n, nrm2(n))


def basis_set(d, p, fam):
    out = []
    for a in itertools.product(range(p + 1), repeat=d):
        if fam == 'tensor':
            ok = True
        else:
            ok = sum(ai for ai in a if ai >= 2) <= p
        if ok:
            out.append(a)
    out.sort(key=lambda a: (sum(a), [-x for x in a]))
    return out


def emit_keyed(bym):
    """['KEY*(sum)', ...] for the groups of terms bym[KEY], and their flop count."""
    inner, nfl = [], 0
    for key in sorted(bym):
        e = emit_sum(bym[key])
        if e:
            inner.append('%s*(%s)' % (key, e)); nfl += 2 * len(bym[key]) + 1
    return inner, nfl


def levi(i, j, k):
    """Levi-Civita symbol eps_ijk of three indices in 0..2."""
    return (i - j) * (j - k) * (k - i) // 2


def fmt(x):
    s = repr(float(x))
    return s


def emit_sum(terms):
    """terms: list of (coef float, factor string). Returns C expression."""
    parts = []
    for c, s in terms:
        if c == 0.0:
            continue
        if c == 1.0:
            parts.append('+' + s)
        elif c == -1.0:
            parts.append('-' + s)
        elif c < 0:
            parts.append('-%s*%s' % (fmt(-c), s))
        else:
            parts.append('+%s*%s' % (fmt(c), s))
    if not parts:
        return None
    e = ''.join(parts)
    return e[1:] if e[0] == '+' else e


# GCC 12.2 with -march=native on this AVX-512 machine miscompiles some of these straight-line
# kernels in its SLP vectoriser when it uses 512-bit vectors (wrong results at -O2/-O3, found by
# tests/unit/vlasov/test_vlasov_kernels.c, which runs on the library's own objects). With 256-bit
# vectors the results are right (checked for all 15 sets and several random inputs) and the kernels
# are 10-30% faster than with SLP off, so ask for 256-bit vectors in these files.
SLP_GUARD = """#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC target("prefer-vector-width=256") /* GCC 12 SLP + 512-bit vectors miscompiles these kernels */
#endif
"""


V4 = 'SgVlasovV4'  # vector of LANES doubles (vlasov_kernels.h)


class Gen:
    def __init__(self, cdim, vdim, fam, p):
        self.cdim, self.vdim, self.fam, self.p = cdim, vdim, fam, p
        self.pdim = cdim + vdim
        self.B = basis_set(self.pdim, p, fam)
        self.idx = {a: i for i, a in enumerate(self.B)}
        self.Bx = basis_set(cdim, p, fam)
        self.idxx = {a: i for i, a in enumerate(self.Bx)}
        self.tag = '%dx%dv_%s_p%d' % (cdim, vdim, 'ser' if fam == 'serendipity' else 'tensor', p)
        self.nflops = {}

    def face_set(self, d):
        fs = sorted({a[:d] + a[d + 1:] for a in self.B}, key=lambda a: (sum(a), [-x for x in a]))
        return fs, {a: i for i, a in enumerate(fs)}

    def stream_terms(self, ak):
        """Streaming volume terms of test function ak: (2/dx_d) int dpsi_k/deta_d (w_v + dv/2 eta_v) f."""
        cd, pd, B = self.cdim, self.pdim, self.B
        exprs, nfl = [], 0
        for d in range(cd):
            v = cd + d
            t0, t1_ = [], []
            for l, al in enumerate(B):
                # w term: D2 in d, delta elsewhere
                if all(ak[i] == al[i] for i in range(pd) if i != d):
                    c = C(t1('D2', ak[d], al[d]), nrm2(ak[d]) * nrm2(al[d]))
                    t0.append((c.val(), 'f[%d]' % l))
                # h term: D2 in d, E1 in v, delta elsewhere
                if all(ak[i] == al[i] for i in range(pd) if i != d and i != v):
                    c = C(t1('D2', ak[d], al[d]) * t1('E1', ak[v], al[v]),
                          nrm2(ak[d]) * nrm2(al[d]) * nrm2(ak[v]) * nrm2(al[v]))
                    t1_.append((c.val(), 'f[%d]' % l))
            e0, e1 = emit_sum(t0), emit_sum(t1_)
            if e0:
                exprs.append('sw%d*(%s)' % (d, e0)); nfl += 2 * len(t0)
            if e1:
                exprs.append('sh%d*(%s)' % (d, e1)); nfl += 2 * len(t1_)
        return exprs, nfl

    def vol_scales(self, L, nacc, T='double'):
        """Scale factors of the volume kernels: streaming in x_d, (2/dx_d) int dpsi_k/deta_d
        (w_v + dv/2 eta_v) f, and 2/dv_j for the first nacc acceleration directions."""
        cd = self.cdim
        for d in range(cd):
            v = cd + d
            if T == 'double':
                L.append('  const double sw%d = 2.0*w[%d]/dxv[%d], sh%d = dxv[%d]/dxv[%d];' % (d, v, d, d, v, d))
            else:
                L.append('  const %s sw%d = 2.0*w[%d]/dxv[%d];' % (T, d, v, d))
                L.append('  const double sh%d = dxv[%d]/dxv[%d];' % (d, v, d))
        for j in range(nacc):
            L.append('  const double rv%d = 2.0/dxv[%d];' % (j, cd + j))

    # ---- volume ------------------------------------------------------------------------------
    def gen_vol(self):
        cd, pd, B = self.cdim, self.pdim, self.B
        L = []
        L.append('void sg_vlasov_vol_%s(const double *restrict w, const double *restrict dxv, '
                 'const double *restrict acc, const double *restrict f, double *restrict out)\n{' % self.tag)
        self.vol_scales(L, cd)
        nfl = 0
        for k, ak in enumerate(B):
            exprs, n = self.stream_terms(ak)
            nfl += n
            # acceleration in v_j (j < cdim): (2/dv_j) int dpsi_k/deta_vj (sum_m acc_jm Phi_m) f
            for j in range(cd):
                v = cd + j
                bym = {}
                for l, al in enumerate(B):
                    if not all(ak[i] == al[i] for i in range(cd, pd) if i != v):
                        continue
                    dv = t1('D2', ak[v], al[v])
                    if dv == 0:
                        continue
                    for m, am in enumerate(self.Bx):
                        r = dv
                        s = nrm2(ak[v]) * nrm2(al[v])
                        for i in range(cd):
                            r *= t1('I3', ak[i], am[i], al[i])
                            s *= nrm2(ak[i]) * nrm2(am[i]) * nrm2(al[i])
                            if r == 0:
                                break
                        if r != 0:
                            bym.setdefault(m, []).append((C(r, s).val(), 'f[%d]' % l))
                inner = []
                for m in sorted(bym):
                    e = emit_sum(bym[m])
                    if e:
                        inner.append('acc[%d]*(%s)' % (j * len(self.Bx) + m, e)); nfl += 2 * len(bym[m]) + 1
                if inner:
                    exprs.append('rv%d*(%s)' % (j, '+'.join(inner)))
            if exprs:
                L.append('  out[%d] += %s;' % (k, '+'.join(exprs)))
        L.append('}\n')
        self.nflops['vol'] = nfl
        return '\n'.join(L)

    # ---- trace helper --------------------------------------------------------------------------
    def traces(self, d, fs, fidx, L, side, src, dst, T='double'):
        """dst[face] = trace of src at eta_d = side (+1 or -1)."""
        acc = {}
        for k, ak in enumerate(self.B):
            b = fidx[ak[:d] + ak[d + 1:]]
            acc.setdefault(b, []).append((Lval(ak[d], side).val(), '%s[%d]' % (src, k)))
        n = 0
        for b in range(len(fs)):
            L.append('  const %s %s%d = %s;' % (T, dst, b, emit_sum(acc[b])))
            n += 2 * len(acc[b])
        return n

    def scatter(self, d, fidx, L, G):
        nfl = 0
        for k, ak in enumerate(self.B):
            b = fidx[ak[:d] + ak[d + 1:]]
            lp = Lval(ak[d], 1).val()
            lm = Lval(ak[d], -1).val()
            L.append('  outL[%d] -= %s*%s%d; outR[%d] += %s*%s%d;' % (k, fmt(lp), G, b, k, fmt(lm), G, b))
            nfl += 4
        return nfl

    # ---- streaming surface --------------------------------------------------------------------
    def gen_surfx(self, d, lanes=False):
        """lanes: the SIMD form (SgVlasovV4: LANES faces at once, coefficients interleaved by lane),
        same arithmetic per lane; outL/outR must come zeroed (the caller adds them to the cells)."""
        cd = self.cdim
        v = cd + d
        fs, fidx = self.face_set(d)
        vf = v - 1  # index of v_d within the face multi-index (d < v removed)
        T = V4 if lanes else 'double'
        L = []
        if lanes:
            L.append('void sg_vlasov_surfx%d_%s_v4(const %s *restrict w, const double *restrict dxv, const %s *restrict cw, '
                     'const %s *restrict fL, const %s *restrict fR, %s *restrict outL, %s *restrict outR)\n{' % (d, self.tag, T, T, T, T, T, T))
            L.append('  const %s cL = cw[0], cR = cw[1], c0 = cw[2];' % T)
        else:
            L.append('void sg_vlasov_surfx%d_%s(const double *restrict w, const double *restrict dxv, double cL, double cR, '
                     'double c0, const double *restrict fL, const double *restrict fR, double *restrict outL, double *restrict outR)\n{' % (d, self.tag))
        nfl = self.traces(d, fs, fidx, L, 1, 'fL', 'l', T)
        nfl += self.traces(d, fs, fidx, L, -1, 'fR', 'r', T)
        if lanes:
            L.append('  const double rx = 2.0/dxv[%d], hv = 0.5*dxv[%d];' % (d, v))
            L.append('  const %s wv = w[%d], hc0 = 0.5*c0;' % (T, v))
        else:
            L.append('  const double rx = 2.0/dxv[%d], wv = w[%d], hv = 0.5*dxv[%d], hc0 = 0.5*c0;' % (d, v, v))
        for b in range(len(fs)):
            L.append('  const %s a%d = cL*l%d + cR*r%d, j%d = r%d - l%d;' % (T, b, b, b, b, b, b))
            nfl += 4
        for b, ab in enumerate(fs):
            terms = []
            for g, ag in enumerate(fs):
                if all(ab[i] == ag[i] for i in range(len(ab)) if i != vf):
                    c = C(t1('E1', ab[vf], ag[vf]), nrm2(ab[vf]) * nrm2(ag[vf])).val()
                    if c:
                        terms.append((c, 'a%d' % g))
            e = emit_sum(terms)
            L.append('  const %s G%d = rx*(wv*a%d%s - hc0*j%d);' % (T, b, b, (' + hv*(%s)' % e) if e else '', b))
            nfl += 5 + 2 * len(terms)
        nfl += self.scatter(d, fidx, L, 'G')
        L.append('}\n')
        self.nflops[('surfx%d' % d) + ('_v4' if lanes else '')] = nfl
        return '\n'.join(L)

    # ---- acceleration surface -----------------------------------------------------------------
    def gen_surfv(self, j):
        cd = self.cdim
        v = cd + j
        fs, fidx = self.face_set(v)
        L = []
        L.append('void sg_vlasov_surfv%d_%s(const double *restrict dxv, const double *restrict acc, double tau, '
                 'const double *restrict fL, const double *restrict fR, double *restrict outL, double *restrict outR)\n{' % (j, self.tag))
        nfl = self.traces(v, fs, fidx, L, 1, 'fL', 'l')
        nfl += self.traces(v, fs, fidx, L, -1, 'fR', 'r')
        L.append('  const double rv = 2.0/dxv[%d], ht = 0.5*tau;' % v)
        for b in range(len(fs)):
            L.append('  const double a%d = 0.5*(l%d + r%d), j%d = r%d - l%d;' % (b, b, b, b, b, b))
            nfl += 3
        for b, ab in enumerate(fs):
            bym = {}
            for g, ag in enumerate(fs):
                if not all(ab[i] == ag[i] for i in range(cd, len(ab))):
                    continue
                for m, am in enumerate(self.Bx):
                    r, s = Fr(1), Fr(1)
                    for i in range(cd):
                        r *= t1('I3', ab[i], am[i], ag[i])
                        s *= nrm2(ab[i]) * nrm2(am[i]) * nrm2(ag[i])
                        if r == 0:
                            break
                    if r != 0:
                        bym.setdefault(m, []).append((C(r, s).val(), 'a%d' % g))
            inner = []
            for m in sorted(bym):
                e = emit_sum(bym[m])
                inner.append('acc[%d]*(%s)' % (m, e)); nfl += 2 * len(bym[m]) + 1
            L.append('  const double G%d = rv*(%s - ht*j%d);' % (b, '+'.join(inner) if inner else '0.0', b))
            nfl += 3
        nfl += self.scatter(v, fidx, L, 'G')
        L.append('}\n')
        self.nflops['surfv%d' % j] = nfl
        return '\n'.join(L)

    # ---- Vlasov-Maxwell: Lorentz force ---------------------------------------------------------
    # alpha_j = (q/m)(E_j + (v x B)_j) for every velocity direction j < vdim. In a cell,
    # v_k = w_k + h_k eta_k (h = dv/2), so alpha_j = sum_m Phi_m(x) [A_jm + sum_{k != j} A_jkm eta_k]
    # with A_jm = qm (E_jm + sum_{k,l} eps_jkl w_k B_lm) and A_jkm = qm sum_l eps_jkl h_k B_lm
    # (velocity components k >= vdim are zero). alpha_j does not depend on v_j, so it is continuous
    # across a v_j face and div_v alpha = 0. The kernels form these coefficients from em =
    # [Ex, Ey, Ez, Bx, By, Bz] (each npx configuration coefficients) and then integrate exactly.
    def lorentz_coefs(self, L, only=None, T='double'):
        cd, vd, nx = self.cdim, self.vdim, len(self.Bx)
        L.append('  const %s *E = em, *Bf = em + %d;' % (T, 3 * nx))
        L.append('  (void)Bf; (void)w;')
        nfl = 0
        for j in range(vd):
            if only is not None and j != only:
                continue
            for m in range(nx):
                terms = ['E[%d]' % (j * nx + m)]
                for k in range(vd):
                    for l in range(3):
                        e = levi(j, k, l)
                        if e:
                            terms.append('%sw[%d]*Bf[%d]' % ('+' if e > 0 else '-', cd + k, l * nx + m)); nfl += 2
                L.append('  const %s A%d_%d = qm*(%s);' % (T, j, m, ''.join([terms[0]] + terms[1:]))); nfl += 1
            for k in range(vd):
                if k == j:
                    continue
                for m in range(nx):
                    terms = []
                    for l in range(3):
                        e = levi(j, k, l)
                        if e:
                            terms.append('%sBf[%d]' % ('+' if e > 0 else '-', l * nx + m))
                    if terms:
                        t = ''.join(terms)
                        L.append('  const %s A%d_%d_%d = qm*0.5*dxv[%d]*(%s);' % (T, j, k, m, cd + k, t[1:] if t[0] == '+' else t)); nfl += 3
        return nfl

    def lorentz_has(self, j, k):
        return any(levi(j, k, l) for l in range(3)) and k != j

    def lorentz_pair(self, j, ak, al, vel, r0, s0, sym, bym):
        """Exact coefficients of the pair of basis functions (ak, al) against Phi_m (config) times 1 or
        eta_k (the v x B part): r0*sqrt(s0) is the factor of the v_j position already integrated;
        vel lists (position in the multi-indices, velocity direction k) of the other velocity positions.
        Appends (coefficient, sym) to bym[A-name]."""
        cd = self.cdim
        for kk in [None] + [kk for kk in range(self.vdim) if self.lorentz_has(j, kk)]:
            r, s = r0, s0
            for pos, kv in vel:
                if kk is not None and kv == kk:
                    r *= t1('E1', ak[pos], al[pos]); s *= nrm2(ak[pos]) * nrm2(al[pos])
                elif ak[pos] != al[pos]:
                    r = 0
                if r == 0:
                    break
            if r == 0:
                continue
            for m, am in enumerate(self.Bx):
                rr, ss = r, s
                for i in range(cd):
                    rr *= t1('I3', ak[i], am[i], al[i])
                    ss *= nrm2(ak[i]) * nrm2(am[i]) * nrm2(al[i])
                    if rr == 0:
                        break
                if rr != 0:
                    key = ('A%d_%d' % (j, m)) if kk is None else ('A%d_%d_%d' % (j, kk, m))
                    bym.setdefault(key, []).append((C(rr, ss).val(), sym))

    def gen_volem(self):
        """SIMD form only (SgVlasovV4: LANES cells at once, coefficients interleaved by lane)."""
        cd, vd, pd, B = self.cdim, self.vdim, self.pdim, self.B
        T = V4
        L = []
        L.append('void sg_vlasov_volem_%s_v4(const %s *restrict w, const double *restrict dxv, double qm, '
                 'const %s *restrict em, const %s *restrict f, %s *restrict out)\n{' % (self.tag, T, T, T, T))
        self.vol_scales(L, vd, T)
        nfl = self.lorentz_coefs(L, None, T)
        for k, ak in enumerate(B):
            exprs, n = self.stream_terms(ak)
            nfl += n
            for j in range(vd):
                v = cd + j
                bym = {}
                vel = [(i, i - cd) for i in range(cd, pd) if i != v]
                for l, al in enumerate(B):
                    dv = t1('D2', ak[v], al[v])
                    if dv != 0:
                        self.lorentz_pair(j, ak, al, vel, dv, nrm2(ak[v]) * nrm2(al[v]), 'f[%d]' % l, bym)
                inner, n = emit_keyed(bym)
                nfl += n
                if inner:
                    exprs.append('rv%d*(%s)' % (j, '+'.join(inner)))
            if exprs:
                L.append('  out[%d] += %s;' % (k, '+'.join(exprs)))
        L.append('}\n')
        self.nflops['volem'] = nfl
        return '\n'.join(L)

    def gen_surfvem(self, j):
        """SIMD form only (SgVlasovV4: LANES faces at once); outL/outR must come zeroed."""
        cd, vd = self.cdim, self.vdim
        v = cd + j
        fs, fidx = self.face_set(v)
        T = V4
        L = []
        L.append('void sg_vlasov_surfvem%d_%s_v4(const %s *restrict w, const double *restrict dxv, double qm, '
                 'const %s *restrict em, const %s *restrict tau, const %s *restrict fL, const %s *restrict fR, '
                 '%s *restrict outL, %s *restrict outR)\n{' % (j, self.tag, T, T, T, T, T, T, T))
        nfl = self.lorentz_coefs(L, j, T)
        nfl += self.traces(v, fs, fidx, L, 1, 'fL', 'l', T)
        nfl += self.traces(v, fs, fidx, L, -1, 'fR', 'r', T)
        L.append('  const double rv = 2.0/dxv[%d];' % v)
        L.append('  const %s ht = 0.5*tau[0];' % T)
        for b in range(len(fs)):
            L.append('  const %s a%d = 0.5*(l%d + r%d), j%d = r%d - l%d;' % (T, b, b, b, b, b, b))
            nfl += 3

        def fi(i):  # phase dim i -> index in the face multi-index
            return i if i < v else i - 1
        vel = [(fi(i), i - cd) for i in range(cd, cd + vd) if i != v]
        for b, ab in enumerate(fs):
            bym = {}
            for g, ag in enumerate(fs):
                self.lorentz_pair(j, ab, ag, vel, Fr(1), Fr(1), 'a%d' % g, bym)
            inner, n = emit_keyed(bym)
            nfl += n
            L.append('  const %s G%d = rv*(%s - ht*j%d);' % (T, b, '+'.join(inner) if inner else '0.0', b))
            nfl += 3
        nfl += self.scatter(v, fidx, L, 'G')
        L.append('}\n')
        self.nflops['surfvem%d' % j] = nfl
        return '\n'.join(L)

    # ---- Maxwell's equations in the configuration DG space ----------------------------------------
    # dE/dt = c^2 curl B - J, dB/dt = -curl E (eps0 = 1, mu0 = 1/c^2 in these units), in the perfectly
    # hyperbolic form that cleans the divergence errors (Munz et al., JCP 161, 2000; the form Gkeyll
    # uses): two more potentials phi, psi (components 6, 7) with speed factors chi, gam,
    #   dE/dt - c^2 curl B + chi c^2 grad phi = -J,   dB/dt + curl E + gam grad psi = 0,
    #   dphi/dt + chi div E = chi rho,                 dpsi/dt + gam c^2 div B = 0
    # (chi = gam = 0: Maxwell's equations, phi and psi stay zero). As du/dt + d_d F_d = 0, the flux along
    # x_d of E_i is -c^2 eps_idk B_k + chi c^2 delta_id phi; of B_i: eps_idk E_k + gam delta_id psi; of phi:
    # chi E_d; of psi: gam c^2 B_d. Face flux: central average minus tau/2 times the jump (tau = c: the
    # exact Riemann solver (Roe flux) of this linear system, whose |A| is c on the tangential
    # components, chi c on (E_d, phi) and gam c on (B_d, psi); tau = 0: central, which conserves the
    # discrete energy (1/2) int (|E|^2 + c^2 |B|^2 + c^2 phi^2 + psi^2) apart from the sources).
    def gen_maxwell(self):
        cd, Bx = self.cdim, self.Bx
        nx = len(Bx)
        ctag = '%s_%s' % (self.tag, 'mx')
        out = []

        def flux(i, d, src):  # list of (sign, factor name or None, component) for the flux of comp i along d
            t = []
            if i == 6:
                return [(1, 'chi', d)]
            if i == 7:
                return [(1, 'gc2', 3 + d)]
            for k in range(3):
                e = levi(i % 3, d, k)
                if not e:
                    continue
                if i < 3:   # E_i: -c^2 eps_idk B_k
                    t.append((-e, 'c2', 3 + k))
                else:       # B_i: eps_idk E_k
                    t.append((e, None, k))
            if i == d:
                t.append((1, 'xc2', 6))
            if i == 3 + d:
                t.append((1, 'gam', 7))
            return t
        L = ['static void maxwell_vol_%s(const double *restrict dx, double c, double chi, double gam, const double *restrict em, double *restrict out)\n{' % ctag,
             '  const double c2 = c*c, xc2 = chi*c2, gc2 = gam*c2;',
             '  (void)xc2; (void)gc2;']
        nfl = 0
        for d in range(cd):
            L.append('  const double rx%d = 2.0/dx[%d];' % (d, d))
        for i in range(8):
            for k, ak in enumerate(Bx):
                exprs = []
                for d in range(cd):
                    terms = []
                    for l, al in enumerate(Bx):
                        if not all(ak[q] == al[q] for q in range(cd) if q != d):
                            continue
                        cc = C(t1('D2', ak[d], al[d]), nrm2(ak[d]) * nrm2(al[d])).val()
                        if cc == 0:
                            continue
                        for sg, fac, comp in flux(i, d, 'em'):
                            sym = 'em[%d]' % (comp * nx + l)
                            if fac:
                                sym = fac + '*' + sym
                            terms.append((sg * cc, sym)); nfl += 3
                    e = emit_sum(terms)
                    if e:
                        exprs.append('rx%d*(%s)' % (d, e))
                if exprs:
                    L.append('  out[%d] += %s;' % (i * nx + k, '+'.join(exprs)))
        L.append('}\n')
        out.append('\n'.join(L))
        flm = [nfl]
        for d in range(cd):
            fs = sorted({a[:d] + a[d + 1:] for a in Bx}, key=lambda a: (sum(a), [-x for x in a]))
            fidx = {a: q for q, a in enumerate(fs)}
            L = ['static void maxwell_surf%d_%s(const double *restrict dx, double c, double chi, double gam, double tau, const double *restrict emL, '
                 'const double *restrict emR, double *restrict outL, double *restrict outR)\n{' % (d, ctag),
                 '  const double c2 = c*c, xc2 = chi*c2, gc2 = gam*c2, rx = 2.0/dx[%d], ht = 0.5*tau, htx = ht*chi, htg = ht*gam;' % d,
                 '  (void)xc2; (void)gc2;']
            nfl = 0
            # penalty factor of each component's jump: tangential E, B: ht; (E_d, phi): ht chi; (B_d, psi): ht gam
            pen = {i: ('htx' if i in (d, 6) else 'htg' if i in (3 + d, 7) else 'ht') for i in range(8)}
            used = {comp for q in range(8) for _, _, comp in flux(q, d, None)}
            for i in range(8):
                for side, src, dst in ((1, 'emL', 'l'), (-1, 'emR', 'r')):
                    acc = {}
                    for k, ak in enumerate(Bx):
                        acc.setdefault(fidx[ak[:d] + ak[d + 1:]], []).append((Lval(ak[d], side).val(), '%s[%d]' % (src, i * nx + k)))
                    for b in range(len(fs)):
                        L.append('  const double %s%d_%d = %s;' % (dst, i, b, emit_sum(acc[b]))); nfl += 2 * len(acc[b])
                if i in used:
                    for b in range(len(fs)):
                        L.append('  const double a%d_%d = 0.5*(l%d_%d + r%d_%d);' % (i, b, i, b, i, b)); nfl += 2
            for i in range(8):
                for b in range(len(fs)):
                    terms = []
                    for sg, fac, comp in flux(i, d, None):
                        terms.append('%s%sa%d_%d' % ('+' if sg > 0 else '-', fac + '*' if fac else '', comp, b)); nfl += 2
                    expr = ''.join(terms)
                    if expr[0] == '+':
                        expr = expr[1:]
                    expr += ' - %s*(r%d_%d - l%d_%d)' % (pen[i], i, b, i, b); nfl += 3
                    L.append('  const double G%d_%d = rx*(%s);' % (i, b, expr))
            for i in range(8):
                for k, ak in enumerate(Bx):
                    b = fidx[ak[:d] + ak[d + 1:]]
                    L.append('  outL[%d] -= %s*G%d_%d; outR[%d] += %s*G%d_%d;' % (i * nx + k, fmt(Lval(ak[d], 1).val()), i, b,
                                                                               i * nx + k, fmt(Lval(ak[d], -1).val()), i, b)); nfl += 4
            L.append('}\n')
            out.append('\n'.join(L))
            flm.append(nfl)
        return out, ctag, flm

    def gen_em_all(self):
        parts = ['/* Generated by physics/vlasov/gen/gen_kernels.py -- do not edit. */',
                 '#include "vlasov_kernels.h"', SLP_GUARD]
        parts.append(self.gen_volem())
        for d in range(self.cdim):
            parts.append(self.gen_surfx(d, lanes=True))
        for j in range(self.vdim):
            parts.append(self.gen_surfvem(j))
        mx, ctag, flm = self.gen_maxwell()
        parts.extend(mx)
        t = self.tag
        sx = ', '.join('sg_vlasov_surfx%d_%s_v4' % (d, t) for d in range(self.cdim))
        sv = ', '.join('sg_vlasov_surfvem%d_%s_v4' % (j, t) for j in range(self.vdim))
        ms = ', '.join('maxwell_surf%d_%s' % (d, ctag) for d in range(self.cdim))
        fl = self.nflops
        parts.append('const SgVlasovEMKernels sg_vlasov_em_kernels_%s = {\n  %d, %d, %d, %d,\n'
                     '  sg_vlasov_volem_%s_v4,\n  {%s},\n  {%s},\n  maxwell_vol_%s,\n  {%s},\n  %d, {%s}, {%s}, %d, {%s}\n};\n' % (
                         t, self.cdim, self.vdim, 0 if self.fam == 'serendipity' else 1, self.p,
                         t, sx, sv, ctag, ms, fl['volem'], ', '.join(str(fl['surfx%d_v4' % d]) for d in range(self.cdim)),
                         ', '.join(str(fl['surfvem%d' % j]) for j in range(self.vdim)),
                         flm[0], ', '.join(str(x) for x in flm[1:])))
        return '\n'.join(parts)

    # ---- continuous FE tables for the Poisson solve ---------------------------------------------
    def fem_tables(self):
        cd, p = self.cdim, self.p
        pts = [Fr(-1) + Fr(2 * i, p) for i in range(p + 1)]
        nodes = []
        for ij in itertools.product(range(p + 1), repeat=cd):
            if self.fam == 'serendipity' and cd == 2 and p >= 2:
                interior = [0 < i < p for i in ij]
                if all(interior):
                    continue
            nodes.append(ij)
        assert len(nodes) == len(self.Bx), (self.tag, len(nodes), len(self.Bx))
        # V[a][k] = psi_k(node_a), orthonormal psi; C = V^-1 so N_a = sum_k C[k][a] psi_k.
        def psi(k, ij):
            val = sp.Integer(1)
            for i in range(cd):
                n = self.Bx[k][i]
                val *= sp.sqrt(sp.Rational(2 * n + 1, 2)) * sp.legendre(n, sp.Rational(pts[ij[i]].numerator, pts[ij[i]].denominator))
            return val
        V = sp.Matrix(len(nodes), len(self.Bx), lambda a, k: psi(k, nodes[a]))
        Cm = sp.simplify(V.inv())
        # component and shift of each local node: the node's owner cell is the one whose lower corner
        # it sits at, so index p wraps to 0 in the next cell.
        comps = sorted({tuple(i % p for i in ij) for ij in nodes})
        cidx = {c: i for i, c in enumerate(comps)}
        shift = [[1 if i == p else 0 for i in ij] for ij in nodes]
        comp = [cidx[tuple(i % p for i in ij)] for ij in nodes]
        # reference stiffness per direction: Kd[a][b] = int dN_a/deta_d dN_b/deta_d
        nb = len(self.Bx)
        G = []
        for d in range(cd):
            M = sp.zeros(nb, nb)
            for k, ak in enumerate(self.Bx):
                for l, al in enumerate(self.Bx):
                    r = t1('DD', ak[d], al[d])
                    s = nrm2(ak[d]) * nrm2(al[d])
                    for i in range(cd):
                        if i != d:
                            r *= t1('I2', ak[i], al[i]); s *= nrm2(ak[i]) * nrm2(al[i])
                    if r:
                        M[k, l] = sp.Rational(r.numerator, r.denominator) * sp.sqrt(sp.Rational(s.numerator, s.denominator))
            G.append(sp.simplify(Cm.T * M * Cm))
        # Dd[m][k] = int psi_m dpsi_k/deta_d (modal derivative matrix)
        D = []
        for d in range(cd):
            M = [[0.0] * nb for _ in range(nb)]
            for m, am in enumerate(self.Bx):
                for k, ak in enumerate(self.Bx):
                    r = t1('D2', ak[d], am[d])
                    s = nrm2(ak[d]) * nrm2(am[d])
                    for i in range(cd):
                        if i != d:
                            r *= t1('I2', ak[i], am[i]); s *= nrm2(ak[i]) * nrm2(am[i])
                    M[m][k] = C(r, s).val()
            D.append(M)
        return dict(nodes=nodes, C=[[float(Cm[k, a]) for a in range(len(nodes))] for k in range(nb)],
                    K=[[[float(G[d][a, b]) for b in range(nb)] for a in range(nb)] for d in range(cd)],
                    D=D, shift=shift, comp=comp, ncomp=len(comps))

    def gen_all(self):
        parts = ['/* Generated by physics/vlasov/gen/gen_kernels.py -- do not edit. */',
                 '#include "vlasov_kernels.h"', SLP_GUARD]
        parts.append(self.gen_vol())
        for d in range(self.cdim):
            parts.append(self.gen_surfx(d))
        for j in range(self.cdim):
            parts.append(self.gen_surfv(j))
        fe = self.fem_tables()
        t = self.tag
        np_, nx = len(self.B), len(self.Bx)
        def arr(name, typ, vals):
            return 'static const %s %s_%s[] = {%s};' % (typ, name, t, ', '.join(str(v) if typ == 'int' else fmt(v) for v in vals))
        parts.append(arr('alpha', 'int', [x for a in self.B for x in a]))
        parts.append(arr('alphax', 'int', [x for a in self.Bx for x in a]))
        parts.append(arr('feC', 'double', [x for row in fe['C'] for x in row]))
        parts.append(arr('feK', 'double', [x for Kd in fe['K'] for row in Kd for x in row]))
        parts.append(arr('feD', 'double', [x for Dd in fe['D'] for row in Dd for x in row]))
        parts.append(arr('feshift', 'int', [x for s in fe['shift'] for x in s]))
        parts.append(arr('fecomp', 'int', fe['comp']))
        sx = ', '.join('sg_vlasov_surfx%d_%s' % (d, t) for d in range(self.cdim))
        sv = ', '.join('sg_vlasov_surfv%d_%s' % (d, t) for d in range(self.cdim))
        fl = self.nflops
        parts.append('const SgVlasovKernels sg_vlasov_kernels_%s = {\n  %d, %d, %d, %d, %d, %d,\n'
                     '  alpha_%s, alphax_%s,\n  sg_vlasov_vol_%s,\n  {%s},\n  {%s},\n'
                     '  %d, feC_%s, feK_%s, feD_%s, feshift_%s, fecomp_%s,\n  %d, {%s}, {%s}\n};\n' % (
                         t, self.cdim, self.vdim, 0 if self.fam == 'serendipity' else 1, self.p, np_, nx,
                         t, t, t, sx, sv, fe['ncomp'], t, t, t, t, t,
                         fl['vol'], ', '.join(str(fl['surfx%d' % d]) for d in range(self.cdim)),
                         ', '.join(str(fl['surfv%d' % d]) for d in range(self.cdim))))
        return '\n'.join(parts)


# What is generated: kept to sizes that compile in seconds (see docs/vlasov.md).
CONFIGS = [
    (1, 1, 'serendipity', 1), (1, 1, 'serendipity', 2), (1, 1, 'serendipity', 3),
    (1, 1, 'tensor', 2), (1, 1, 'tensor', 3),
    (1, 2, 'serendipity', 1), (1, 2, 'serendipity', 2), (1, 2, 'tensor', 2),
    (1, 3, 'serendipity', 1), (1, 3, 'serendipity', 2),
    (2, 2, 'serendipity', 1), (2, 2, 'serendipity', 2), (2, 2, 'tensor', 2),
    (2, 3, 'serendipity', 1), (2, 3, 'serendipity', 2),
    (3, 3, 'serendipity', 1),
]

# Vlasov-Maxwell sets (Lorentz force + Maxwell kernels), kept to what the tests verify.
EM_CONFIGS = [
    (1, 1, 'serendipity', 1), (1, 1, 'serendipity', 2),
    (1, 2, 'serendipity', 1), (1, 2, 'serendipity', 2),
    (1, 3, 'serendipity', 1), (1, 3, 'serendipity', 2),
    (2, 2, 'serendipity', 1), (2, 2, 'serendipity', 2),
    (2, 3, 'serendipity', 1), (2, 3, 'serendipity', 2),
    (3, 3, 'serendipity', 1),
]


def write_list(fn, typ, prefix, names):
    """The NULL-terminated table PREFIX_list[] of the generated sets."""
    with open(fn, 'w') as fh:
        fh.write('/* Generated by physics/vlasov/gen/gen_kernels.py -- do not edit. */\n')
        fh.write('#include "vlasov_kernels.h"\n\n')
        for n in names:
            fh.write('extern const %s %s_%s;\n' % (typ, prefix, n))
        fh.write('\nconst %s *const %s_list[] = {\n' % (typ, prefix[:-1] if prefix.endswith('s') else prefix))
        for n in names:
            fh.write('  &%s_%s,\n' % (prefix, n))
        fh.write('  NULL\n};\n')


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'kernels')
    os.makedirs(outdir, exist_ok=True)
    names = []
    for cfg in CONFIGS:
        g = Gen(*cfg)
        src = g.gen_all()
        fn = os.path.join(outdir, 'vlasov_kernels_%s.c' % g.tag)
        with open(fn, 'w') as fh:
            fh.write(src)
        names.append(g.tag)
        print('%-24s Np=%3d  flops vol=%d surf=%s' % (g.tag, len(g.B), g.nflops['vol'],
              [g.nflops[k] for k in sorted(g.nflops) if k != 'vol']))
    write_list(os.path.join(outdir, 'vlasov_kernel_list.c'), 'SgVlasovKernels', 'sg_vlasov_kernels', names)
    emnames = []
    for cfg in EM_CONFIGS:
        g = Gen(*cfg)
        src = g.gen_em_all()
        with open(os.path.join(outdir, 'vlasov_em_kernels_%s.c' % g.tag), 'w') as fh:
            fh.write(src)
        emnames.append(g.tag)
        print('%-24s em flops vol=%d surfv=%s' % (g.tag, g.nflops['volem'], [g.nflops[k] for k in sorted(g.nflops) if k.startswith('surfvem')]))
    write_list(os.path.join(outdir, 'vlasov_em_kernel_list.c'), 'SgVlasovEMKernels', 'sg_vlasov_em_kernels', emnames)


if __name__ == '__main__':
    main()
