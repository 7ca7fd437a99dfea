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
