#!/usr/bin/python3
"""Resolution convergence of a nonlinear steady state (physics/boussinesq): exponential in z and x.

Steady rolls at Ra = 1e4, Pr = 1, no-slip, 2 x 1 (rb_ra1e4.yaml, run to t = 300, where the state
has stopped changing: successive diagnostics agree to ~1e-14). Two translation-invariant measures
(the rolls may settle at any x position): the Nusselt number at the bottom wall and the mean
profile <b>_x(z) (mode 0 of the checkpointed b, evaluated on 100 uniform points through its
Chebyshev interpolant), each against a finer grid:
  z: nz = 13, 17, 21, 25 at nx = 32 against nz = 41;   x: nx = 8, 12, 16, 20 at nz = 25 against nx = 48.
Measured (profile): z 2.9e-4, 2.5e-5, 2.0e-6, 1.1e-7 (ratios 12, 12, 19 per 4 points); x 1.2e-3,
8.2e-5, 3.7e-6, 1.0e-7 (ratios 14, 23, 36). Spectral convergence means the error falls by a
factor that does not shrink as the grid grows (algebraic order p would give ((n+4)/n)^p, falling:
for p = 4 from 2.9 to 1.8 over these grids). Asserted: every ratio > 6 (Nu in z: 8.7 at the coarsest step), each ratio at least 0.8
times the previous one, and the finest error < 1e-5 (measured 1.8e-6 for Nu in z), for both measures in both directions."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import h5py
import numpy as np

work = st.workdir("boussinesq_resolution")
ZU = (np.arange(100) + 0.5) / 100


def run(nx, nz):
    out = f"r{nx}x{nz}"
    st.surge(["run", st.deck("boussinesq/rb_ra1e4.yaml"), "-boussinesq_cells", f"{nx},{nz}", "-sim_t_end", "300", "-sim_output", out], work)
    d = st.diagnostics(os.path.join(work, out + ".h5"))
    st.check(abs(d["nu_bottom"][-1] - d["nu_bottom"][-2]) < 1e-11, f"{nx} x {nz}: steady (last change of Nu {abs(d['nu_bottom'][-1] - d['nu_bottom'][-2]):.1e})")
    with h5py.File(os.path.join(work, out + ".chk.h5"), "r") as f:
        b0 = f["values/boussinesq_b"][()].reshape(-1, nz)[0]  # column-major nz x 2nk: column 0 = mode 0
    z = np.sin(0.5 * np.pi * np.arange(nz) / (nz - 1)) ** 2  # the solver's Chebyshev-Gauss-Lobatto nodes
    prof = np.polynomial.chebyshev.chebval(2 * ZU - 1, np.polynomial.chebyshev.chebfit(2 * z - 1, b0, nz - 1))
    return d["nu_bottom"][-1], prof


def series(name, grids, ref):
    nu_r, pr_r = run(*ref)
    res = [run(*g) for g in grids]
    for what, errs in [("Nu", [abs(nu - nu_r) for nu, _ in res]), ("<b>(z)", [np.abs(p - pr_r).max() for _, p in res])]:
        ratios = [errs[i] / errs[i + 1] for i in range(len(errs) - 1)]
        ok = min(ratios) > 6 and all(ratios[i + 1] > 0.8 * ratios[i] for i in range(len(ratios) - 1)) and errs[-1] < 1e-5
        st.check(ok, f"{name}: {what} errors " + ", ".join(f"{e:.2e}" for e in errs) + " -> ratios " + ", ".join(f"{r:.1f}" for r in ratios)
                 + " (> 6, not falling: exponential convergence)")


series("z (nx = 32, nz = 13..25 vs 41)", [(32, n) for n in (13, 17, 21, 25)], (32, 41))
series("x (nz = 25, nx = 8..20 vs 48)", [(n, 25) for n in (8, 12, 16, 20)], (48, 25))
