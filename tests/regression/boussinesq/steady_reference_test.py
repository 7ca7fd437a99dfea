#!/usr/bin/python3
"""The solver's steady rolls against an independent steady solver (physics/boussinesq).

steady_rolls.py finds steady rolls by Newton's method on the steady equations (numpy; no time
stepping, no code shared with the solver; see its docstring). Three checks:
1. The reference itself against a published value: Blankenbach et al. (Geophys. J. Int. 98, 1989)
   case 1a, Nu = 4.884409 (Ra = 1e4, infinite Pr: Pr = 1e4 here, free-slip, 2 x 1 periodic = their
   unit box mirrored): measured 4.8844022 (1.4e-6; the solver's own value in boussinesq_nusselt is
   the same), asserted 1e-5.
2. Pr = 1, Ra = 1e4, 2 x 1, no-slip and free-slip: the time-stepped solution at t = 300 (32 x 25)
   against the Newton solution with the same modes (M = 16) and points (nz = 25). Both discretise
   the same equations with the same modes and nodes, so they agree to the remaining time drift:
   measured |dNu| 1.5e-13 (no-slip) and 3e-12 (free-slip), kinetic energy likewise; asserted 1e-9
   relative. A wrong term, coefficient or boundary condition in either would show at O(1e-3).
Published values for these Pr = 1 set-ups are discussed in docs/boussinesq.md."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
import surgetest as st
import steady_rolls as sr

work = st.workdir("boussinesq_steady_reference")

s, q = sr.solve(1e4, 1e4, 2, 16, 25, "freeslip")
nu = s.nusselt(q)[0]
st.check(abs(nu / 4.884409 - 1) < 1e-5, f"Newton reference, Blankenbach 1a: Nu = {nu:.7f} vs 4.884409 (rel. {abs(nu / 4.884409 - 1):.1e} < 1e-5)")
vrms = math.sqrt(2 * s.kinetic_energy(q)) / s.kappa
st.check(abs(vrms / 42.864947 - 1) < 1e-5, f"Newton reference, Blankenbach 1a: v_rms = {vrms:.5f} vs 42.864947 (rel. {abs(vrms / 42.864947 - 1):.1e} < 1e-5)")

for walls in ("noslip", "freeslip"):
    s, q = sr.solve(1e4, 1, 2, 16, 25, walls)
    nb, nt = s.nusselt(q)
    ke = s.kinetic_energy(q)
    st.surge(["run", st.deck("boussinesq/rb_ra1e4.yaml"), "-boussinesq_walls", walls, "-sim_t_end", "300", "-sim_output", walls], work)
    d = st.diagnostics(os.path.join(work, walls + ".h5"))
    for name, ref, val in [("Nu bottom", nb, d["nu_bottom"][-1]), ("Nu top", nt, d["nu_top"][-1]), ("kinetic energy", ke, d["kinetic_energy"][-1])]:
        rel = abs(val / ref - 1)
        st.check(rel < 1e-9 and nb > 2, f"Pr = 1, Ra = 1e4, {walls}: {name} {val:.12g} (solver, 32 x 25) vs {ref:.12g} (Newton, M = 16, nz = 25): rel. {rel:.1e} < 1e-9")
