#!/usr/bin/python3
"""Steady convection: Nusselt numbers against a published benchmark, and the exact relations.

1. Blankenbach et al., Geophys. J. Int. 98 (1989) 23-38, case 1a (Ra = 1e4, infinite Pr, free-slip
   box of aspect ratio 1 = half of our periodic 2 x 1 roll pair): Nu = 4.884409, v_rms = 42.864947
   (thermal units). We run Pr = 1e4 (inertia O(1/Pr)) on 32 x 25; the wall and volume Nusselt
   numbers and v_rms must match to 1e-4 relative (measured: ~1e-6; 16 x 17 would miss by 1e-3).
2. The exact relations of Rayleigh-Benard convection (Shraiman & Siggia 1990): in a steady state
   Nu_bottom = Nu_top = Nu_volume = 1 + <nu |grad u|^2>/kappa = <|grad b|^2> (Lz = 1, jump 1).
   Checked on that run and on the Pr = 1 no-slip Ra = 1e4 deck, to 1e-4 (the issue asks 1%; a
   resolved steady state gives ~1e-6, so 1e-4 still catches a wrong factor or boundary term).
3. div u = 0: the streamfunction form makes it exact; the diagnostic evaluates du/dx spectrally and
   dw/dz by collocation on the physical w (a second path), so it shows round-off: < 1e-10."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st

work = st.workdir("boussinesq_nusselt")
NUS = ["nu_bottom", "nu_top", "nu_volume", "nu_eps_viscous", "nu_eps_thermal"]


def final(out):
    d = st.diagnostics(os.path.join(work, out + ".h5"))
    return {k: v[-1] for k, v in d.items()}


st.surge(["run", st.deck("boussinesq/blankenbach.yaml"), "-sim_output", "b1a"], work)
f = final("b1a")
kappa = 1 / math.sqrt(1e4 * 1e4)
for k in ["nu_bottom", "nu_top", "nu_volume"]:
    st.check(abs(f[k] / 4.884409 - 1) < 1e-4, f"Blankenbach 1a: {k} = {f[k]:.7f} vs 4.884409 (rel. {abs(f[k] / 4.884409 - 1):.1e} < 1e-4)")
vrms = math.sqrt(2 * f["kinetic_energy"]) / kappa
st.check(abs(vrms / 42.864947 - 1) < 1e-4, f"Blankenbach 1a: v_rms = {vrms:.6f} vs 42.864947 (rel. {abs(vrms / 42.864947 - 1):.1e} < 1e-4)")

st.surge(["run", st.deck("boussinesq/rb_ra1e4.yaml"), "-sim_output", "pr1"], work)
for name, out in [("Blankenbach 1a", "b1a"), ("Pr=1 no-slip Ra=1e4", "pr1")]:
    f = final(out)
    ref = f["nu_volume"]
    spread = max(abs(f[k] / ref - 1) for k in NUS)
    st.check(spread < 1e-4, f"{name}: " + ", ".join(f"{k} {f[k]:.7f}" for k in NUS) + f" agree (max rel. spread {spread:.1e} < 1e-4)")
    st.check(f["max_div"] < 1e-10, f"{name}: max |div u| = {f['max_div']:.1e} < 1e-10")
    st.check(f["nu_volume"] > 2, f"{name}: convecting (Nu = {f['nu_volume']:.4f} > 2)")
