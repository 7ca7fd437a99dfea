"""Restarting a finished run (issue 15, item 2), for heat and vlasov, on 1 and 2 ranks:
- with the same end it says the run is already complete and changes no file (byte-identical);
- with a raised -sim_max_steps it continues, bit-identical to a run that went there directly (no
  step is truncated at the old end, so the step sequence is the same);
- with a raised -sim_t_end it continues without duplicating the last record or snapshot, and the
  heat report is right again (it printed 0 instead of ~199 before the fix)."""
import hashlib
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *


def sums(w, base):
    out = {}
    for suffix in (".h5", ".xmf", ".chk.h5"):
        with open(f"{w}/{base}{suffix}", "rb") as f:
            out[suffix] = hashlib.sha256(f.read()).hexdigest()
    return out


def snapshots(path):
    with h5py.File(path, "r") as f:
        return sorted((n, float(np.ravel(f["fields"][n][k].attrs["time"])[0])) for n in f["fields"] for k in f["fields"][n])


cases = [("heat", "heat/decay2d.yaml", ["-sim_field_every", "10"], "u"),
         ("vlasov", "vlasov/landau.yaml", ["-sim_t_end", "2", "-sim_field_every", "50"], "f_elc")]
for name, dk, extra, field in cases:
    for ranks in (1, 2):
        w = workdir(f"core_restart_finished_{name}_{ranks}")
        d = deck(dk)
        tag = f"{name}, {ranks} rank(s)"
        # finished run, restarted with the same end: "already complete", every file unchanged
        surge(["run", d, "-sim_output", "a", "-sim_max_steps", "40", *extra], w, ranks=ranks)
        before = sums(w, "a")
        for _ in range(2):
            rc, out = surge(["run", d, "-sim_output", "a", "-sim_max_steps", "40", "-restart", "a.chk.h5", *extra], w, ranks=ranks)
            check("already complete" in out, f"{tag}: restart of a finished run says it is already complete")
        check(sums(w, "a") == before, f"{tag}: two restarts of a finished run leave .h5, .xmf and .chk.h5 byte-identical")
        # raised max_steps: continues, bit-identical to the direct run
        surge(["run", d, "-sim_output", "a", "-sim_max_steps", "80", "-restart", "a.chk.h5", *extra], w, ranks=ranks)
        surge(["run", d, "-sim_output", "b", "-sim_max_steps", "80", *extra], w, ranks=ranks)
        ga, gb = diagnostics(f"{w}/a.h5"), diagnostics(f"{w}/b.h5")
        check(same_arrays(ga, gb), f"{tag}: 40 steps + restart to 80 == 80 steps, diagnostics bit-identical ({len(gb['step'])} records)")
        check(np.array_equal(last_field(f"{w}/a.h5", field), last_field(f"{w}/b.h5", field)), f"{tag}: final field bit-identical")
        # the first run's final snapshot (step 40) stays; nothing is written twice
        sa, sb = snapshots(f"{w}/a.h5"), snapshots(f"{w}/b.h5")
        check(len(sa) == len(set(sa)) and set(sb) <= set(sa), f"{tag}: snapshots {len(sa)} (direct run {len(sb)}), none duplicated")
    # raised t_end (heat only: its report depends on the whole history)
    if name == "heat":
        w = workdir("core_restart_finished_heat_tend")
        d = deck(dk)
        surge(["run", d, "-sim_output", "c"], w)
        rc, out = surge(["run", d, "-sim_output", "c", "-restart", "c.chk.h5", "-sim_t_end", "0.04"], w)
        g = diagnostics(f"{w}/c.h5")
        check(np.all(np.diff(g["time"]) > 0) and np.all(np.diff(g["step"]) > 0), f"heat: continued to t_end 0.04, {len(g['time'])} records, no duplicate")
        check(abs(g["time"][-1] - 0.04) < 1e-15, "heat: continued run ends at the new t_end")
        t = snapshots(f"{w}/c.h5")
        check(len(t) == len(set(t)), f"heat: {len(t)} snapshots, none duplicated")
        rate = report(f"{w}/c.h5", "decay_rate")
        # same tolerance as core_heat_driver: O(h^2 + dt) scheme error ~1% at 32x24 cells
        check(abs(rate[0] / rate[1] - 1) < 0.02, f"heat: decay rate after the continued run {rate[0]:.2f} within 2% of theory {rate[1]:.2f}")

# A restart onto a set whose commit was killed (issue 33): SURGE_TEST_KILL_COMMIT=6 ends the first run
# by SIGKILL right after the 6th member rename of its set commits -- the final commit at step 4 has
# renamed h5, xmf and chk.h5 in, but not yet dropped the earlier set's .prev.tmp names. The restart
# must take the output's lock and put the earlier set (step 2) back before it reads r.chk.h5; read
# first, it continues from step 4's checkpoint over step 2's output. Continued to step 6 it must equal
# the run that went to step 6 directly, bit for bit, and leave no .prev.tmp.
for ranks in (1, 2):
    w = workdir(f"core_restart_killed_commit_{ranks}")
    d = deck("heat/decay2d.yaml")
    args = ["run", d, "-sim_field_every", "2", "-sim_checkpoint_every", "2"]
    os.environ["SURGE_TEST_KILL_COMMIT"] = "6"
    rc, out = surge(args + ["-sim_output", "k", "-sim_max_steps", "4"], w, ranks=ranks, expect_ok=False)
    del os.environ["SURGE_TEST_KILL_COMMIT"]
    left = sorted(f for f in os.listdir(w) if f.endswith(".prev.tmp"))
    check(len(left) == 3, f"{ranks} rank(s): the killed commit left the earlier set's second names ({left})")
    rc, out = surge(args + ["-sim_output", "k", "-sim_max_steps", "6", "-restart", "k.chk.h5"], w, ranks=ranks)
    check("Restarted from k.chk.h5 at step 2," in out, f"{ranks} rank(s): the restart continues from the earlier set's checkpoint (step 2)")
    surge(args + ["-sim_output", "direct", "-sim_max_steps", "6"], w, ranks=ranks)
    gk, gd = diagnostics(f"{w}/k.h5"), diagnostics(f"{w}/direct.h5")
    check(same_arrays(gk, gd), f"{ranks} rank(s): killed commit + restart to 6 == 6 steps directly, diagnostics bit-identical ({len(gd['step'])} records)")
    check(np.array_equal(last_field(f"{w}/k.h5", "u"), last_field(f"{w}/direct.h5", "u")), f"{ranks} rank(s): final field bit-identical")
    check(not any(f.endswith(".prev.tmp") or f.endswith(".none.tmp") for f in os.listdir(w)), f"{ranks} rank(s): no .prev.tmp/.none.tmp left")

# A restart with an option that changes the result is refused with one line naming it, old and new
# value (the checkpoint records the run's options: src/base/fingerprint.c SgConfigList); a budget or
# output-cadence option may change (above), and so may the spelling of a number (1.0 vs 1). One rank
# here: the catalogue refuses the same case on 2 ranks.
for ranks in (1,):
    w = workdir(f"core_restart_options_{ranks}")
    d = deck("heat/decay2d.yaml")
    surge(["run", d, "-sim_output", "o", "-sim_max_steps", "4"], w, ranks=ranks)
    before = sums(w, "o")
    for extra, says in ((["-heat_amplitude", "2"], "-heat_amplitude was 1, now 2"), (["-sim_dt", "1e-5"], "-sim_dt is set now (1e-05)")):
        rc, out = surge(["run", d, "-sim_output", "o", "-sim_max_steps", "8", "-restart", "o.chk.h5", *extra], w, ranks=ranks, expect_ok=False)
        lines = [l for l in out.splitlines() if l.startswith("surge: error:")]
        check(len(lines) == 1 and says in lines[0] and "Traceback" not in out and "PETSC ERROR" not in out, f"{ranks} rank(s): restart with {' '.join(extra)} refused in one line naming it: {lines[:1]}")
    check(sums(w, "o") == before, f"{ranks} rank(s): the refused restarts leave .h5, .xmf and .chk.h5 byte-identical")
    surge(["run", d, "-sim_output", "o", "-sim_max_steps", "8", "-restart", "o.chk.h5", "-heat_amplitude", "1", "-sim_field_every", "3"], w, ranks=ranks)
