"""Steady Rayleigh-Benard rolls by Newton's method: an independent reference for physics/boussinesq.

Shares no code and no algorithm with the solver: no time stepping, the steady equations are solved
directly (numpy, dense Newton). What the two have in common is only the problem and the kind of
discretisation (Fourier x Chebyshev), so they must agree to the accuracy of the grids.

Problem (free-fall units, as the solver): kappa = (Ra Pr)^-1/2, nu = (Ra/Pr)^-1/2, 0 <= z <= 1,
periodic in x with period Lx, b = 1/2 - z + theta with theta = 0 at both walls,
    nu lap^2 psi + d(theta)/dx - (u . grad) lap psi = 0,     kappa lap theta - u . grad b = 0,
u = -dpsi/dz, w = dpsi/dx, walls no-slip (psi = dpsi/dz = 0) or free-slip (psi = d2psi/dz2 = 0).
A roll pair is symmetric under x -> -x (theta even, psi odd), so
    psi = sum_{m=1}^{M-1} 2 p_m(z) sin(k_m x),  theta = t_0(z) + sum_{m=1}^{M-1} 2 t_m(z) cos(k_m x),
k_m = 2 pi m / Lx: the symmetry removes the translation invariance (the Jacobian is regular) and
the mean flow (odd u has zero x-mean). Galerkin in x (products on 3M points: no aliasing of the
kept modes), collocation in z on Chebyshev-Gauss-Lobatto points (Trefethen, Spectral Methods in
MATLAB, 2000, cheb.m) with the boundary conditions replacing the equations of the wall rows (psi:
rows 0, 1, n-2, n-1). The residual is R(q) = A q + B(q, q) with B bilinear, so the Newton matrix
A + B(., q) + B(q, .) is exact, built column by column from B.

Nusselt number: Nu = -d<b>_x/dz at the wall = 1 - t_0'(0).
Usage: python3 steady_rolls.py RA PR LX M NZ [noslip|freeslip]   (prints Nu)"""
import sys

import numpy as np


def cheb(n):
    """Chebyshev-Gauss-Lobatto points on [0, 1] (z_0 = 0 bottom) and the differentiation matrix."""
    N = n - 1
    x = np.cos(np.pi * np.arange(n) / N)  # 1 .. -1
    c = np.ones(n)
    c[0] = c[-1] = 2
    c *= (-1.0) ** np.arange(n)
    X = np.tile(x, (n, 1)).T
    dX = X - X.T
    D = np.outer(c, 1 / c) / (dX + np.eye(n))
    D -= np.diag(D.sum(axis=1))
    z = (1 - x) / 2  # z = 0 at j = 0
    return z, -2 * D  # d/dz = -2 d/dx


class Rolls:
    def __init__(self, Ra, Pr, Lx, M, nz, walls="noslip"):
        self.Ra, self.Pr, self.Lx, self.M, self.n, self.walls = Ra, Pr, Lx, M, nz, walls
        self.kappa, self.nu = (Ra * Pr) ** -0.5, (Ra / Pr) ** -0.5
        self.z, self.D = cheb(nz)
        self.D2 = self.D @ self.D
        self.D3 = self.D2 @ self.D
        self.D4 = self.D3 @ self.D
        self.k = 2 * np.pi * np.arange(M) / Lx
        self.Nx = 3 * M  # physical points of the products
        self.np_ = nz * (M - 1)  # p_m, m = 1 .. M-1
        self.size = self.np_ + nz * M

    def split(self, q):
        """q -> p[..., z, m] (m = 0 .. M-1, p_0 = 0), t[..., z, m]."""
        lead = q.shape[:-1]
        p = np.zeros(lead + (self.n, self.M))
        p[..., 1:] = q[..., : self.np_].reshape(lead + (self.n, self.M - 1))
        t = q[..., self.np_ :].reshape(lead + (self.n, self.M))
        return p, t

    def phys(self, c):
        """complex coefficients c[..., z, m] of f = c_0 + 2 Re sum c_m e^{i k x} -> values on Nx points"""
        F = np.zeros(c.shape[:-1] + (self.Nx // 2 + 1,), complex)
        F[..., : self.M] = c * self.Nx
        return np.fft.irfft(F, self.Nx, axis=-1)

    def coef(self, g):
        return np.fft.rfft(g, axis=-1)[..., : self.M] / self.Nx

    def dz(self, f):
        return np.einsum("ij,...jm->...im", self.D, f)

    def advect(self, p, s, t):
        """B(q_a, q_b): psi of a advects lap psi of b (vorticity) and theta of b -> sin coefficients
        of (u_a . grad) lap psi_b and cos coefficients of (u_a . grad) theta_b."""
        ik = 1j * self.k
        pa = -1j * p  # psi_a = 2 Re(-i p e^{ikx}) = 2 p sin
        u = self.phys(-self.dz(pa))
        w = self.phys(ik * pa)
        zb = self.dz(self.dz(-1j * s)) - self.k**2 * (-1j * s)  # lap psi_b
        Jv = u * self.phys(ik * zb) + w * self.phys(self.dz(zb))
        Jt = u * self.phys(ik * t) + w * self.phys(self.dz(t))
        return -self.coef(Jv).imag, self.coef(Jt).real  # sin coefficient s = -Im, cos = Re

    def linear(self, p, t):
        """A q and the buoyancy source terms of the linear part (without boundary rows)."""
        k2 = self.k**2
        D2p = np.einsum("ij,...jm->...im", self.D2, p)
        D4p = np.einsum("ij,...jm->...im", self.D4, p)
        Rv = self.nu * (D4p - 2 * k2 * D2p + k2**2 * p) - self.k * t  # d(theta)/dx: sin coefficient -k t
        Rt = self.kappa * (np.einsum("ij,...jm->...im", self.D2, t) - k2 * t)
        # the conductive gradient: - w db/dz with db/dz = -1 + theta_z gives + w: cos coefficient of
        # w = 2 k p cos is k p
        Rt = Rt + self.k * p
        return Rv, Rt

    def bc(self, Rv, Rt, p, t):
        n = self.n
        Rt[..., 0, :], Rt[..., n - 1, :] = t[..., 0, :], t[..., n - 1, :]
        Rv[..., 0, :], Rv[..., n - 1, :] = p[..., 0, :], p[..., n - 1, :]
        Dp = self.D if self.walls == "noslip" else self.D2
        Rv[..., 1, :] = np.einsum("j,...jm->...m", Dp[0], p)
        Rv[..., n - 2, :] = np.einsum("j,...jm->...m", Dp[n - 1], p)
        return Rv, Rt

    def pack(self, Rv, Rt):
        lead = Rv.shape[:-2]
        return np.concatenate([Rv[..., 1:].reshape(lead + (-1,)), Rt.reshape(lead + (-1,))], axis=-1)

    def residual(self, q):
        p, t = self.split(q)
        Rv, Rt = self.linear(p, t)
        Nv, Nt = self.advect(p, p, t)
        return self.pack(*self.bc(Rv - Nv, Rt - Nt, p, t))

    def jacobian(self, q, chunk=256):
        p0, t0 = self.split(q)
        J = np.empty((self.size, self.size))
        for c0 in range(0, self.size, chunk):
            E = np.zeros((min(chunk, self.size - c0), self.size))
            E[np.arange(E.shape[0]), c0 + np.arange(E.shape[0])] = 1
            p, t = self.split(E)
            Rv, Rt = self.linear(p, t)
            Av, At = self.advect(p, p0[None], t0[None])  # B(e, q)
            Bv, Bt = self.advect(p0[None], p, t)  # B(q, e)
            J[:, c0 : c0 + E.shape[0]] = self.pack(*self.bc(Rv - Av - Bv, Rt - At - Bt, p, t)).T
        return J

    def guess(self, amp_t=0.1, amp_p=0.03):
        p = np.zeros((self.n, self.M))
        t = np.zeros((self.n, self.M))
        p[:, 1] = amp_p * np.sin(np.pi * self.z) ** (2 if self.walls == "noslip" else 1)
        t[:, 1] = amp_t * np.sin(np.pi * self.z)
        return np.concatenate([p[:, 1:].ravel(), t.ravel()])

    def interpolate(self, other_q, other):
        """q of another grid (other: Rolls) interpolated to this one: continuation in resolution."""
        p, t = other.split(other_q)
        P = np.zeros((self.n, self.M))
        T = np.zeros((self.n, self.M))
        m = min(self.M, other.M)
        # z: Chebyshev interpolation through the polynomial (barycentric via numpy's polyfit in cos)
        V = np.polynomial.chebyshev.chebvander(1 - 2 * other.z, other.n - 1)
        W = np.polynomial.chebyshev.chebvander(1 - 2 * self.z, other.n - 1)
        P[:, :m] = W @ np.linalg.solve(V, p[:, :m])
        T[:, :m] = W @ np.linalg.solve(V, t[:, :m])
        return np.concatenate([P[:, 1:].ravel(), T.ravel()])

    def newton(self, q, tol=1e-11, maxit=40, verbose=False):
        """Newton's method with the conduction state q = 0 deflated (Farrell, Birkisson & Funke,
        SIAM J. Sci. Comput. 37, 2015): the iteration solves m(q) R(q) = 0, m = 1/|q|^2 + 1, whose
        Newton step is the plain step d scaled by 1 / (1 - grad(m).d / m), so it cannot converge to
        q = 0 from a poor start; backtracking on |m R|."""
        def merit(q, r):
            return (1 / (q @ q) + 1) * np.abs(r).max()

        r = self.residual(q)
        for it in range(maxit):
            nr = np.abs(r).max()
            if verbose:
                print(f"  Newton {it}: max|R| = {nr:.3e}, Nu = {self.nusselt(q)[0]:.8f}", flush=True)
            if nr < tol:
                return q
            d = np.linalg.solve(self.jacobian(q), -r)
            qq = q @ q
            m, g = 1 / qq + 1, -2 * q / qq**2
            d /= 1 - (g @ d) / m
            lam, f0 = 1.0, merit(q, r)
            while lam > 1e-4:
                qn = q + lam * d
                rn = self.residual(qn)
                if merit(qn, rn) < f0:
                    break
                lam /= 2
            q, r = qn, rn
        raise RuntimeError(f"Newton did not converge: max|R| = {np.abs(r).max():.3e}")

    def nusselt(self, q):
        p, t = self.split(q)
        return 1 - self.D[0] @ t[:, 0], 1 - self.D[-1] @ t[:, 0]  # bottom, top

    def kinetic_energy(self, q):
        """<u^2 + w^2>/2 (volume mean; Parseval in x, Clenshaw-Curtis in z)."""
        p, _ = self.split(q)
        u, w = -self.dz(p), self.k * p
        e = 2 * (u[:, 1:] ** 2 + w[:, 1:] ** 2).sum(axis=1)  # (2p sin)^2 has x-mean 2 p^2
        return 0.5 * cc_weights(self.n) @ e


def cc_weights(n):
    """Clenshaw-Curtis weights on the n Chebyshev-Gauss-Lobatto points of [0, 1] (exact for
    polynomials of degree n - 1), from the Chebyshev moments."""
    N = n - 1
    j = np.arange(n)
    T = np.cos(np.pi * np.outer(np.arange(n), j) / N)  # T_k(x_j)
    mom = np.array([2 / (1 - k * k) if k % 2 == 0 else 0.0 for k in range(n)])  # int_{-1}^{1} T_k
    # interpolation: f = sum_k a_k T_k with a_k = (2/N) sum_j'' f_j T_k(x_j) (halved ends and k = 0, N)
    c = np.ones(n)
    c[0] = c[-1] = 0.5
    A = (2 / N) * T * c[None, :]
    A[0] *= 0.5
    A[-1] *= 0.5
    return 0.5 * (mom @ A)  # dz = dx / 2


def solve(Ra, Pr, Lx, M, nz, walls="noslip", steps=None, verbose=False):
    """Steady rolls at Ra by continuation from 5000 (or the given Ra list); returns (Rolls, q)."""
    path = steps or [r for r in (5e3, 1e4, 3e4, 1e5, 3e5, 1e6) if r < Ra] + [Ra]
    q, prev = None, None
    for r in path:
        s = Rolls(r, Pr, Lx, M, nz, walls)
        q = s.guess() if q is None else s.interpolate(q, prev)
        q = s.newton(q, verbose=verbose)
        prev = s
    return prev, q


if __name__ == "__main__":
    Ra, Pr, Lx, M, nz = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    walls = sys.argv[6] if len(sys.argv) > 6 else "noslip"
    s, q = solve(Ra, Pr, Lx, M, nz, walls, verbose=True)
    nb, nt = s.nusselt(q)
    print(f"Ra {Ra:g} Pr {Pr:g} Lx {Lx:g} {walls} M {M} nz {nz}: Nu bottom {nb:.10f} top {nt:.10f}")
