"""Checkpoint on a signal (issue 36, item 6): a `surge run` that receives SIGUSR1 or SIGTERM (what a
batch system sends before or at a time limit: Slurm's --signal=USR1@T, its SIGTERM at the limit)
writes a checkpoint at the next step boundary, exits 0 with one line saying how to continue, and
its restart ends bit for bit where an uninterrupted run ends (diagnostics and the final field; the
heat solver's restart is bit-identical, tests/regression/core/restart_finished_test.py).
1 rank (the signal to surge) and 2 ranks (the signal to mpiexec, which forwards SIGUSR1
to the ranks; the ranks agree on the step)."""
import os
import re
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

N = 10000  # steps of the whole run (decay2d: dt 2.8e-4, ~1 s on 1 rank); the signal comes after the first progress line
args = [deck("heat/decay2d.yaml"), "-sim_t_end", "100", "-sim_max_steps", str(N), "-sim_field_every", "1000", "-sim_progress_every", "200"]
# mpiexec given SIGTERM forwarded it late (step 16808 of 20000 in one try): with mpiexec use SIGUSR1 (docs/cluster.md)
for ranks, sig in ((1, signal.SIGUSR1), (2, signal.SIGUSR1), (1, signal.SIGTERM)):
    name = signal.Signals(sig).name
    tag = f"{ranks} rank(s), {name}"
    w = workdir(f"core_stop_signal_{ranks}_{name}")
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [SURGE, "run", *args, "-sim_output", "a"]
    p = subprocess.Popen(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = ""
    for line in p.stdout:  # the loop is running once a progress line is out
        out += line
        if line.startswith("step "):
            os.kill(p.pid, sig)
            break
    out += p.stdout.read()
    rc = p.wait(timeout=300)
    stops = [l for l in out.splitlines() if l.startswith("surge: stopped by")]
    check(rc == 0 and len(stops) == 1 and name in stops[0] and "-restart a.chk.h5" in stops[0], f"{tag}: exit {rc} and one line: {stops}")
    step = int(re.search(r"at step (\d+)", stops[0]).group(1))
    check(0 < step < N, f"{tag}: stopped at step {step} of {N}")
    rc2, out2 = surge(["run", *args, "-sim_output", "a", "-restart", "a.chk.h5"], w, ranks=ranks)
    check(f"Restarted from a.chk.h5 at step {step}" in out2, f"{tag}: the restart continues from step {step}")
    surge(["run", *args, "-sim_output", "b"], w, ranks=ranks)
    ga, gb = diagnostics(f"{w}/a.h5"), diagnostics(f"{w}/b.h5")
    check(same_arrays(ga, gb) and len(gb["step"]) == N + 1, f"{tag}: stopped + restarted == uninterrupted, diagnostics bit for bit ({len(gb['step'])} records)")
    check(np.array_equal(last_field(f"{w}/a.h5", "u"), last_field(f"{w}/b.h5", "u")), f"{tag}: final field bit for bit")
