#!/usr/bin/python3
"""Written fields p, b, u, w (physics/boussinesq): the steady Ra = 1e4 rolls (no-slip and free-slip) must satisfy the
steady Boussinesq equations when evaluated from the written uniform-grid fields alone.

The fields are interpolated to 400 cell-centred z points (output_nz) and written on the nx = 32 x
points; here x-derivatives are taken by FFT (exact for the kept modes) and z-derivatives by
fourth-order central differences (error ~ h^4 f^(5) ~ 1e-7 at h = 1/400) at points away from the
walls. The residuals of
  x-momentum  u u_x + w u_z + p_x - nu lap u,
  z-momentum  u w_x + w w_z + p_z - b - nu lap w,
  continuity  u_x + w_z,   buoyancy  u b_x + w b_z - kappa lap b
must be < 1e-4 of the largest term of their equation (the state is steady to ~1e-8 per unit time).
This checks the pressure recovery (Poisson problem with its Neumann data), the interpolation to the
output grid, the grid placement written to the XDMF (cell centres) and the sign conventions."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import numpy as np

work = st.workdir("boussinesq_fields")
NZ = 400
Ra, Pr, Lx = 1e4, 1.0, 2.0
nu, kappa = 1 / math.sqrt(Ra / Pr), 1 / math.sqrt(Ra * Pr)
h = 1.0 / NZ


def dz(f):  # fourth order, rows 2 .. nz-3
    return (f[:-4] - 8 * f[1:-3] + 8 * f[3:-1] - f[4:]) / (12 * h)


def dzz(f):
    return (-f[:-4] + 16 * f[1:-3] - 30 * f[2:-2] + 16 * f[3:-1] - f[4:]) / (12 * h * h)


for walls in ("noslip", "freeslip"):
    cells = "32,25" if walls == "noslip" else "64,33"  # free-slip rolls are faster (Nu 4.99 vs 2.65): finer grid
    st.surge(["run", st.deck("boussinesq/rb_ra1e4.yaml"), "-boussinesq_walls", walls, "-boussinesq_cells", cells, "-sim_t_end", "150" if walls == "noslip" else "80", "-boussinesq_output_nz", str(NZ), "-sim_output", walls], work)
    path = os.path.join(work, walls + ".h5")
    F = {k: st.last_field(path, k) for k in "pbuw"}
    nzo, nx = F["b"].shape
    st.check((nzo, nx) == (NZ, int(cells.split(",")[0])), f"{walls}: fields are (z, x) = {F['b'].shape}")
    k = 2 * np.pi * np.fft.rfftfreq(nx, d=Lx / nx)

    def dx(f, order=1):
        return np.fft.irfft((1j * k) ** order * np.fft.rfft(f, axis=1), n=nx, axis=1)

    I = slice(2, -2)
    p, b, u, w = F["p"], F["b"], F["u"], F["w"]
    eqs = {
        "x-momentum": [u[I] * dx(u)[I], w[I] * dz(u), dx(p)[I], -nu * (dx(u, 2)[I] + dzz(u))],
        "z-momentum": [u[I] * dx(w)[I], w[I] * dz(w), dz(p), -b[I], -nu * (dx(w, 2)[I] + dzz(w))],
        "continuity": [dx(u)[I], dz(w)],
        "buoyancy": [u[I] * dx(b)[I], w[I] * dz(b), -kappa * (dx(b, 2)[I] + dzz(b))],
    }
    for name, terms in eqs.items():
        res = np.abs(sum(terms)).max()
        scale = max(np.abs(t).max() for t in terms)
        st.check(res < 1e-4 * scale, f"{walls} {name}: residual {res:.2e} of largest term {scale:.2e} (< 1e-4)")
    st.check(abs(p.mean()) < 1e-3 * np.abs(p).max(), f"{walls} pressure gauge: mean {p.mean():.1e} ~ 0 (uniform-grid mean of a zero-volume-mean field)")
