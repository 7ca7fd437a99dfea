#!/usr/bin/python3
"""The field slots of physics/boussinesq (docs/boussinesq.md "Field slots") on inputs/boussinesq/slots.yaml
(Ra = 1e5 from noise, 64 x 17, fixed step 2^-7 so every time is an exact binary fraction).

field.advance
  1. The slot in the loop, served by the solver (advance dt 0.25, 2 snapshots per call): the final
     diagnostics (17 digits), the final fields and the checkpointed state equal the plain run's bit
     for bit, on 1 and on 2 ranks (the provider steps the solver with the same steps).
  2. Restart: 1 time unit, checkpoint, -restart to 2: the same bits as the straight run.
  3. A surrogate (the test-only persistence "advance_persist" of build/tests/test_bq_slots) with the
     schedule policy at call 3: calls 0-2 by the solver, 3-7 by the surrogate, one switch logged and
     counted; from t = 0.75 on the state stands still (every later b snapshot equals the one at 0.75
     to 1e-14: the surrogate's snapshot imported as the state and exported again).
     On the written grid (advance grid output) the imported snapshot is the surrogate's to the
     interpolation's accuracy (b 2e-3, w 5e-3 relative), and the solver-served run is the plain one.
  4. The adaptive policy with its sawtooth uncertainty (k mod 4)/4, band [0.3, 0.6]: call 0 is held back
     (the surrogate needs 2 snapshots, the history has 1), then exactly the calls whose uncertainty
     is <= 0.6 go to the surrogate; a restart in the middle continues the same record and counts.
field.superres
  5. Fine solve on the coarse grid itself (cells 64 x 17, output 16, factor 1): the fine fields equal the
     coarse run's written fields at every snapshot to 1e-13 relative (a fine solve of each 0.25
     segment from the coarse state reproduces it), and the coarse run is bit-identical to the plain one.
  6. Fine solve 128 x 33 -> 128 x 32: the coarse run is unchanged (bits); the KE spectrum sums to the
     KE to 1e-12 (Parseval); the fine diagnostics are close to the coarse run's (Nu 1e-3, KE 2e-2
     relative: the same flow, resolved finer over 0.25); a restart at t = 1 gives the same series and
     the same fine fields bit for bit; 2 ranks equal 1 rank to 1e-12 (series), 1e-11 (fine fields).
  7. Bad input: a superres surrogate without superres cells, advance together with superres, and
     advance with a fixed sim dt are refused with one line each."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import h5py
import numpy as np

work = st.workdir("boussinesq_slots")
DECK = st.deck("boussinesq/slots.yaml")
TESTBIN = os.path.join(st.ROOT, "build", "tests", "test_bq_slots")
ADV = ["-boussinesq_advance_dt", "0.25", "-boussinesq_advance_snapshots", "2"]
SR = ["-boussinesq_superres_cells", "128,33", "-boussinesq_superres_output_nz", "32", "-boussinesq_superres_dt", "0.25"]


def finals(log):
    return [l for l in log.splitlines() if l.startswith("boussinesq final")]


def fields(path, name):
    with h5py.File(path, "r") as f:
        g = f["fields"][name]
        return {float(g[k].attrs["time"]): g[k][()] for k in g}


def state(path):
    with h5py.File(path, "r") as f:
        return b"".join(f["values/boussinesq_" + v][()].tobytes() for v in ("psi", "b", "u0"))


def test_run(args, ranks=1, expect_ok=True):
    cmd = (st.MPIEXEC if ranks == 2 else []) + [TESTBIN, DECK] + args
    p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        st.fail(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    return p.stdout


# 1. advance served by the solver = the plain run, bit for bit
plain_log = {}
for ranks in (1, 2):
    _, plain = st.surge(["run", DECK, "-sim_output", f"plain{ranks}"], work, ranks)
    plain_log[ranks] = plain
    _, slot = st.surge(["run", DECK, "-sim_output", f"adv{ranks}", *ADV], work, ranks)
    st.check(finals(plain) == finals(slot) and len(finals(plain)) == 10, f"{ranks} rank(s): advance slot served by the solver: final diagnostics equal the plain run's (17 digits)")
    a, b = fields(os.path.join(work, f"plain{ranks}.h5"), "b"), fields(os.path.join(work, f"adv{ranks}.h5"), "b")
    st.check(a[2.0].tobytes() == b[2.0].tobytes(), f"{ranks} rank(s): final b field bit-identical")
    st.check(state(os.path.join(work, f"plain{ranks}.chk.h5")) == state(os.path.join(work, f"adv{ranks}.chk.h5")), f"{ranks} rank(s): checkpointed psi, b, u0 bit-identical")
    st.check("advance: boussinesq (solver) served 4 calls" in slot, "4 calls of 2 snapshots served by the solver")

# 2. advance restart
st.surge(["run", DECK, "-sim_output", "advr", *ADV, "-sim_t_end", "1"], work)
_, rest = st.surge(["run", DECK, "-sim_output", "advr", *ADV, "-restart", "advr.chk.h5"], work)
_, full = st.surge(["run", DECK, "-sim_output", "advf", *ADV], work)
st.check(finals(rest) == finals(full) and state(os.path.join(work, "advr.chk.h5")) == state(os.path.join(work, "advf.chk.h5")), "advance: restart at t = 1 continues bit for bit (diagnostics and state)")

# 3. persistence surrogate, schedule at call 3
PERSIST = ["-boussinesq_advance_dt", "0.25", "-boussinesq_advance_surrogate", "advance_persist", "-sim_field_every", "1"]
log = test_run(["-sim_output", "sched", *PERSIST, "-boussinesq_advance_swap_policy", "schedule", "-boussinesq_advance_swap_step", "3"])
st.check("field.advance: step 3: boussinesq -> advance_persist (schedule: switch at step 3)" in log, "the switch at call 3 is logged")
st.check("advance: boussinesq (solver) served 3 calls, advance_persist (surrogate) 5 (fraction 0.6250); 1 switches" in log, "counts: 3 solver, 5 surrogate calls, 1 switch")
with h5py.File(os.path.join(work, "sched.h5"), "r") as f:
    counts = [f["report"][k][()][0] for k in ("advance_solver_calls", "advance_surrogate_calls", "advance_switches", "advance_rejected")]
st.check(counts == [3, 5, 1, 0], f"/report/advance_*: {counts}")
B = fields(os.path.join(work, "sched.h5"), "b")
ref = B[0.75]
dev = max(np.abs(B[t] - ref).max() for t in B if t > 0.75) / np.abs(ref).max()
st.check(dev < 1e-14 and np.abs(B[0.5] - ref).max() > 1e-4, f"persistence from t = 0.75: later b equal to {dev:.1e} (the solver's step before differs)")

# 3b. the same on the written grid (advance grid output: snapshots on 64 x 16, read back by 6-point
# Lagrange interpolation in z): the state after the surrogate's first call is its snapshot to the
# interpolation's accuracy (measured b 6.6e-4, w 2.2e-3 relative), then stands still exactly; the
# solver-served run is still the plain one bit for bit (exporting reads the state)
log = test_run(["-sim_output", "schedo", *PERSIST, "-boussinesq_advance_grid", "output", "-boussinesq_advance_swap_policy", "schedule", "-boussinesq_advance_swap_step", "3"])
Bo, Wo = fields(os.path.join(work, "schedo.h5"), "b"), fields(os.path.join(work, "schedo.h5"), "w")
eb = np.abs(Bo[1.0] - Bo[0.75]).max() / np.abs(Bo[0.75]).max()
ew = np.abs(Wo[1.0] - Wo[0.75]).max() / np.abs(Wo[0.75]).max()
still = all(Bo[t].tobytes() == Bo[1.0].tobytes() for t in Bo if t > 1.0)
st.check(eb < 2e-3 and ew < 5e-3 and still, f"grid output: the imported snapshot differs from the surrogate's by b {eb:.1e}, w {ew:.1e} (interpolation in z), then the state stands still")
_, go = st.surge(["run", DECK, "-sim_output", "advgo", *ADV, "-boussinesq_advance_grid", "output"], work)
st.check(finals(go) == finals(plain_log[1]), "grid output, served by the solver: bit-identical to the plain run")

# 4. adaptive, held-back first call, restart
ADA = [*PERSIST, "-boussinesq_advance_swap_policy", "adaptive", "-boussinesq_advance_swap_trust_lo", "0.3", "-boussinesq_advance_swap_trust_hi", "0.6"]
log = test_run(["-sim_output", "ada", *ADA])
# uncertainty of call k (newest snapshot at t = 0.25 k): (k mod 4)/4; call 0 held back
want = [0] + [1 if (k % 4) / 4 <= 0.6 else 0 for k in range(1, 8)]
nsur = sum(want)
st.check(f"advance: boussinesq (solver) served {8 - nsur} calls, advance_persist (surrogate) {nsur}" in log, f"adaptive: surrogate calls {nsur} of 8 (call 0 held back, calls with (k mod 4)/4 > 0.6 to the solver)")
st.check("field.advance: step 3: advance_persist -> boussinesq (uncertainty 0.75, trust band [0.3, 0.6])" in log, "the switch at call 3 is logged with its uncertainty")
test_run(["-sim_output", "adar", *ADA, "-sim_t_end", "1"])
log2 = test_run(["-sim_output", "adar", *ADA, "-restart", "adar.chk.h5"])
counts = lambda out: [l for l in out.splitlines() if l.startswith("advance:")]
st.check(finals(log2) == finals(log) and counts(log) == counts(log2), "adaptive: restart at t = 1 gives the same final diagnostics and counts")

# 5. superres on the coarse grid itself
_, plain = st.surge(["run", DECK, "-sim_output", "plain"], work)
_, ident = st.surge(["run", DECK, "-sim_output", "ident", "-boussinesq_superres_cells", "64,17", "-boussinesq_superres_output_nz", "16", "-boussinesq_superres_dt", "0.25", "-boussinesq_superres_factor", "1,1"], work)
st.check(finals(plain) == finals(ident)[:10], "superres: the coarse run is bit-identical to the plain run")
for c in "pbuw":
    A, F = fields(os.path.join(work, "ident.h5"), c), fields(os.path.join(work, "ident.h5"), c + "_fine")
    err = max(np.abs(A[t] - F[t]).max() for t in A) / max(np.abs(A[t]).max() for t in A)
    st.check(len(A) == len(F) == 9 and err < 1e-13, f"superres fine solve on the coarse grid: {c}_fine = {c} at all 9 snapshots to {err:.1e}")

# 6. superres 128 x 33
_, sr = st.surge(["run", DECK, "-sim_output", "sr", *SR], work)
st.check(finals(plain) == finals(sr)[:10], "superres 128 x 33: the coarse run is bit-identical to the plain run")
rep = {k: st.report(os.path.join(work, "sr.h5"), "superres_" + k) for k in ("time", "nu_volume", "kinetic_energy", "ke_spectrum", "by_surrogate")}
spec = rep["ke_spectrum"].reshape(len(rep["time"]), -1)
st.check(len(rep["time"]) == 9 and spec.shape[1] == 65, f"9 answers, spectra of 65 modes")
st.check(np.abs(spec.sum(1) - rep["kinetic_energy"]).max() <= 1e-12 * rep["kinetic_energy"].max(), "KE spectrum sums to KE (Parseval)")
D = st.diagnostics(os.path.join(work, "sr.h5"))
idx = [np.argmin(np.abs(D["time"] - t)) for t in rep["time"]]
dnu = np.abs(rep["nu_volume"] - D["nu_volume"][idx]).max() / D["nu_volume"].max()
dke = np.abs(rep["kinetic_energy"] - D["kinetic_energy"][idx]).max() / D["kinetic_energy"].max()
st.check(dnu < 1e-3 and dke < 2e-2, f"fine diagnostics vs the coarse run's at the same times: Nu {dnu:.1e}, KE {dke:.1e} (relative to their maxima)")
st.surge(["run", DECK, "-sim_output", "srr", *SR, "-sim_t_end", "1"], work)
st.surge(["run", DECK, "-sim_output", "srr", *SR, "-restart", "srr.chk.h5"], work)
same = all((st.report(os.path.join(work, "srr.h5"), "superres_" + k) == rep[k]).all() for k in ("time", "nu_volume", "kinetic_energy", "ke_spectrum"))
Fa, Fb = fields(os.path.join(work, "sr.h5"), "b_fine"), fields(os.path.join(work, "srr.h5"), "b_fine")
same_f = all(Fa[t].tobytes() == Fb[t].tobytes() for t in Fa if t > 1)
st.check(same and same_f, "superres: restart at t = 1: the series and the later fine fields bit for bit")
st.surge(["run", DECK, "-sim_output", "sr2", *SR], work, ranks=2)
r2 = {k: st.report(os.path.join(work, "sr2.h5"), "superres_" + k) for k in ("nu_volume", "kinetic_energy", "ke_spectrum")}
d2 = max(np.abs(r2[k] - rep[k]).max() / np.abs(rep[k]).max() for k in r2)
F2 = fields(os.path.join(work, "sr2.h5"), "u_fine")
Fu = fields(os.path.join(work, "sr.h5"), "u_fine")
d2f = max(np.abs(F2[t] - Fu[t]).max() for t in Fu) / max(np.abs(Fu[t]).max() for t in Fu)
st.check(d2 < 1e-12 and d2f < 1e-11, f"superres: 2 ranks = 1 rank: series to {d2:.1e}, u_fine to {d2f:.1e} (each rank evaluates its own rows: BLAS blocks them differently)")

# 7. bad input
for args, msg in ((["-boussinesq_superres_surrogate", "mffn"], "needs the slot on"),
                  ([*ADV, *SR], "cannot both be in the loop"),
                  ([*ADV, "-sim_dt", "0.0078125"], "so sim dt (0.0078125) cannot be set")):
    rc, out = st.surge(["run", DECK, "-sim_output", "bad", *args], work, expect_ok=False)
    lines = [l for l in out.splitlines() if l.startswith("surge: error:")]
    st.check(rc == 1 and len(lines) == 1 and msg in lines[0] and not os.path.exists(os.path.join(work, "bad.h5")), f"refused with one line: {lines[0] if lines else out[-200:]}")
print("boussinesq slots: all checks passed")
