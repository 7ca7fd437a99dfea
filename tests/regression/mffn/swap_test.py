#!/usr/bin/python3
"""MeshfreeFlowNet swapped in for the fine solve: the decks inputs/mffn/superres.yaml and
superres_adaptive.yaml as a user runs them from the repository root, with the shipped model
(inputs/mffn/models/mffn_rb_superres.h5). docs/mffn.md "Swap" has the measured numbers.

  1. The deck: 17 answers on the 128 x 32 grid; the first (t = 0: one coarse snapshot, the model needs
     two) by the fine solve, the 16 others by mffn: one switch, logged ("fine_solve -> mffn") and
     counted in /report/superres_*; p_fine ... w_fine written with every snapshot (17, 32 x 128).
  2. Against the fine solve serving the same deck (swap_use solver): the coarse run is bit-identical
     (who serves the fine fields does not touch it), and the fine diagnostics of mffn are within the
     tolerances the measurements justify (docs/mffn.md: max relative errors Nu 0.020, KE 0.018, KE
     spectrum 0.031 with the shipped residual model): Nu and KE 0.05, spectrum 0.06 -- a broken swap
     (a normalisation, an axis, an offset) is off by O(1), the first landing's model (0.096, 0.083,
     0.069) fails them; and they are not the fine solve's (> 1e-3: mffn really served).
  3. 2 ranks (each decodes its own rows) = 1 rank: series and fine fields to 1e-10.
  4. Restart at t = 2 continues the series bit for bit.
  5. Adaptive deck (band [0.006, 0.008] on the mean |PDE residual|): an answer after t = 0 is mffn's
     exactly when its recorded uncertainty is <= 0.008; both providers serve (the residual is high in
     the first answer's transient and grows again as the flow develops: measured 0.014, then 0.0044 ..
     0.0099), every switch is logged, and the counts in /report add up.
  6. The Ra = 1e6 deck (inputs/mffn/superres_ra1e6.yaml with the model inputs/mffn/models/mffn_rb_ra1e6.h5),
     short (t = 0 .. 4): answers every 1.0 on 256 x 64 from blocks of 4 coarse snapshots; t = 0, 1, 2
     by the fine solve (fewer than 4 held), t = 3, 4 by mffn, one switch. Against the fine solve serving:
     the coarse run bit-identical; mffn's Nu and KE at t = 3, 4 within 0.05 relative (measured 0.013 at
     most with the shipped model, its velocity projected as the deck asks: the convection's onset, which
     the model's training crops hold little of; a wrong axis, spacing or normalisation is off by O(1)) and not the fine
     solve's. The fine solve of a 4-snapshot block starts one block time before the asked time, so its
     answers are those of 2-snapshot blocks bit for bit (not a 3-unit solve from the block's first time)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import h5py
import numpy as np

work = st.workdir("mffn_swap")
DECK, ADAPT = "inputs/mffn/superres.yaml", "inputs/mffn/superres_adaptive.yaml"


def run(args, ranks=1):
    """surge run from the repository root (the decks name the model relative to it)."""
    cmd = (st.MPIEXEC if ranks == 2 else []) + [st.SURGE, "run", *args]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, cwd=st.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, env=env)
    if p.returncode:
        st.fail(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    return p.stdout


def out(name):
    return os.path.join(work, name)


def series(name):
    with h5py.File(out(name) + ".h5", "r") as f:
        return {k: f["report"]["superres_" + k][()] for k in ("time", "nu_volume", "kinetic_energy", "ke_spectrum", "by_surrogate", "uncertainty", "solver_calls", "surrogate_calls", "switches")}


def fine(name, c):
    with h5py.File(out(name) + ".h5", "r") as f:
        g = f["fields"][c + "_fine"]
        return [g[k][()] for k in sorted(g, key=int)]


# 1. the deck
log = run([DECK, "-sim_output", out("mffn")])
s = series("mffn")
st.check(len(s["time"]) == 17 and list(s["by_surrogate"]) == [0] + [1] * 16, "17 answers: t = 0 by the fine solve, then mffn")
st.check("field.superres: step 32: fine_solve -> mffn (static)" in log and (s["solver_calls"][0], s["surrogate_calls"][0], s["switches"][0]) == (1, 16, 1), "one switch, logged and counted (1 fine solve, 16 mffn)")
B = fine("mffn", "b")
st.check(len(B) == 17 and B[0].shape == (32, 128), f"b_fine written 17 times on 32 x 128 (z, x)")

# 2. against the fine solve
log_s = run([DECK, "-sim_output", out("fs"), "-boussinesq_superres_swap_use", "solver"])
r = series("fs")
coarse = lambda l: [x for x in l.splitlines() if x.startswith("boussinesq final") and "superres" not in x]


def same_coarse(la, lb, what):
    """the coarse run's final diagnostics (17 digits) equal; an empty list (no line printed) fails"""
    a, b = coarse(la), coarse(lb)
    st.check(len(a) > 0 and a == b, f"{what}the coarse run is bit-identical whoever serves the fine fields ({len(a)} 'boussinesq final' lines, {len(b)} with the fine solve)")


def same_series(x, y, keys):
    return all(np.array_equal(x[k], y[k]) for k in keys)


same_coarse(log, log_s, "")
live = r["kinetic_energy"] > 0
spec = lambda q: q["ke_spectrum"].reshape(len(q["time"]), -1)[live]
e_nu = np.abs(s["nu_volume"] - r["nu_volume"]).max() / np.abs(r["nu_volume"]).max()
e_ke = np.abs(s["kinetic_energy"] - r["kinetic_energy"]).max() / np.abs(r["kinetic_energy"]).max()
e_sp = np.mean(np.abs(spec(s) - spec(r)).sum(1) / spec(r).sum(1))
st.check(e_nu < 0.05 and e_ke < 0.05 and e_sp < 0.06, f"mffn vs the fine solve: Nu {e_nu:.3f}, KE {e_ke:.3f}, spectrum {e_sp:.3f} (tolerances 0.05, 0.05, 0.06)")
st.check(min(e_nu, e_ke, e_sp) > 1e-3, "and they are mffn's own answers, not the fine solve's")

# 3. 2 ranks
run([DECK, "-sim_output", out("mffn2")], ranks=2)
s2 = series("mffn2")
d = max(np.abs(s2[k] - s[k]).max() / np.abs(s[k]).max() for k in ("nu_volume", "kinetic_energy", "ke_spectrum"))
B2 = fine("mffn2", "u")
U = fine("mffn", "u")
st.check(len(B2) == len(U) == 17, f"2 ranks: u_fine written {len(B2)} times, 1 rank {len(U)} (17 each)")
df = max(np.abs(a - b).max() for a, b in zip(B2, U)) / max(np.abs(b).max() for b in U)
st.check(d < 1e-10 and df < 1e-10, f"2 ranks = 1 rank: series to {d:.1e}, u_fine to {df:.1e}")

# 4. restart
run([DECK, "-sim_output", out("mr"), "-sim_t_end", "2"])
run([DECK, "-sim_output", out("mr"), "-restart", out("mr") + ".chk.h5"])
sr = series("mr")
st.check(same_series(sr, s, ("time", "nu_volume", "kinetic_energy", "ke_spectrum", "by_surrogate")), "restart at t = 2: the series bit for bit")

# 5. adaptive
log_a = run([ADAPT, "-sim_output", out("ada")])
a = series("ada")
want = [0] + [1 if u <= 0.008 else 0 for u in a["uncertainty"][1:]]
nsw = sum(1 for i in range(1, len(want)) if want[i] != want[i - 1])
st.check(list(a["by_surrogate"]) == want and 0 < sum(want) < 16, f"adaptive: mffn served exactly the {sum(want)} answers with mean |PDE residual| <= 0.008; the fine solve the other {17 - sum(want)}")
st.check(log_a.count("field.superres: step") == nsw == a["switches"][0] and a["solver_calls"][0] + a["surrogate_calls"][0] == 17, f"adaptive: {nsw} switches logged and counted, counts add up to 17")
# 6. Ra = 1e6
D6 = "inputs/mffn/superres_ra1e6.yaml"
log6 = run([D6, "-sim_output", out("r6"), "-sim_t_end", "4"])
s6 = series("r6")
st.check(np.allclose(s6["time"], [0, 1, 2, 3, 4], rtol=0, atol=1e-12) and list(s6["by_surrogate"]) == [0, 0, 0, 1, 1] and (s6["solver_calls"][0], s6["surrogate_calls"][0], s6["switches"][0]) == (3, 2, 1),
         "Ra = 1e6: answers at t = 0 .. 4, the fine solve for the first three (blocks of < 4), mffn for t = 3, 4, one switch")
st.check(fine("r6", "w")[0].shape == (64, 256), "w_fine on 64 x 256 (z, x)")
log6s = run([D6, "-sim_output", out("r6s"), "-sim_t_end", "4", "-boussinesq_superres_swap_use", "solver"])
r6 = series("r6s")
same_coarse(log6, log6s, "Ra = 1e6: ")
e6 = max((np.abs(s6[q] - r6[q]) / np.abs(r6[q]))[3:].max() for q in ("nu_volume", "kinetic_energy"))
st.check(1e-4 < e6 < 0.05, f"Ra = 1e6: mffn's Nu and KE at t = 3, 4 within {e6:.4f} of the fine solve's (tolerance 0.05), and mffn's own")
run([D6, "-sim_output", out("r6s2"), "-sim_t_end", "4", "-boussinesq_superres_swap_use", "solver", "-boussinesq_superres_snapshots", "2"])
r62 = series("r6s2")
st.check(same_series(r62, r6, ("nu_volume", "kinetic_energy", "ke_spectrum")), "Ra = 1e6: the fine solve of 4-snapshot blocks = of 2-snapshot blocks, bit for bit (one segment back)")
print("mffn swap: all checks passed")
