#!/usr/bin/python3
"""Linear onset of Rayleigh-Benard convection (physics/boussinesq).

For each wall type, two small-amplitude runs bracket the critical Rayleigh number (Ra_c (1 -+ 2%))
in a box one critical wavelength wide (nx = 4: the modes 0 and 1 only). The growth rate of the
x-mode 1 (|b_1| at mid-depth, fitted as ln|b_1| linear in t after the faster modes have decayed)
changes sign between them; the linear interpolation of the two rates in Ra locates the sign change,
which must lie within 0.5% of theory:
  free-slip: Ra_c = 27 pi^4 / 4 = 657.511 at k = pi / sqrt 2 (Rayleigh 1916; Chandrasekhar,
             Hydrodynamic and Hydromagnetic Stability, 1961, sec. 15),
  no-slip:   Ra_c = 1707.762 at k = 3.117 (Chandrasekhar 1961, table III; Reid & Harris 1958).
Near onset the rate is linear in Ra (to O(dRa^2), 0.04% at +-2% here); the time discretisation
(RK443, dt = 0.1 against rates ~0.006 per free-fall time) and the 17-point Chebyshev grid add far
less (the eigenvalue converges exponentially in nz) — the 0.5% tolerance is the issue's.
Free-slip with Pr = 1 also has the growth rate in closed form: in free-fall units
(s + nu q^2)(s + kappa q^2) q^2 = k^2 with nu = kappa = Ra^-1/2, q^2 = k^2 + pi^2, so
s = k/q - q^2/sqrt(Ra); the measured rates must match it to 1e-3 relative (RK443 at dt = 0.1 leaves
~1e-5)."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import numpy as np

work = st.workdir("boussinesq_onset")
cases = {
    "freeslip": (27 * math.pi**4 / 4, math.pi / math.sqrt(2)),
    "noslip": (1707.762, 3.117),
}
T_END, T_FIT = 240.0, 60.0
for walls, (rac, k) in cases.items():
    lx = 2 * math.pi / k
    rates = []
    ras = [rac * 0.98, rac * 1.02]
    for ra in ras:
        out = f"{walls}_{ra:.3f}"
        st.surge(["run", st.deck("boussinesq/onset.yaml"), "-boussinesq_walls", walls, "-boussinesq_rayleigh", repr(ra),
                  "-boussinesq_length", f"{lx!r},1", "-sim_t_end", repr(T_END), "-sim_output", out], work)
        d = st.diagnostics(os.path.join(work, out + ".h5"))
        t, a = d["time"], d["b_mode1"]
        sel = t >= T_FIT
        st.check(np.all(a[sel] > 0), f"{walls} Ra {ra:.2f}: mode-1 amplitude positive in the fit window")
        rate = np.polyfit(t[sel], np.log(a[sel]), 1)[0]
        # the fit must be a clean exponential: the residual of ln|b_1| stays tiny
        resid = np.max(np.abs(np.log(a[sel]) - np.polyval(np.polyfit(t[sel], np.log(a[sel]), 1), t[sel])))
        st.check(resid < 1e-3, f"{walls} Ra {ra:.2f}: ln|b_1| linear in t (max residual {resid:.2e} < 1e-3), rate {rate:.6e}")
        rates.append(rate)
        if walls == "freeslip":
            q2 = k * k + math.pi**2
            exact = k / math.sqrt(q2) - q2 / math.sqrt(ra)
            st.check(abs(rate / exact - 1) < 1e-3, f"free-slip Ra {ra:.2f}: rate {rate:.6e} vs exact {exact:.6e} (rel. {abs(rate / exact - 1):.1e} < 1e-3)")
    st.check(rates[0] < 0 < rates[1], f"{walls}: decay below and growth above Ra_c ({rates[0]:.4e}, {rates[1]:.4e})")
    ra0 = ras[0] - rates[0] * (ras[1] - ras[0]) / (rates[1] - rates[0])
    err = ra0 / rac - 1
    st.check(abs(err) < 0.005, f"{walls}: sign change at Ra = {ra0:.3f}, theory {rac:.3f} (error {100 * err:+.4f}% < 0.5%)")
