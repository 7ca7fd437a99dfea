"""A run that ends in an abort leaves no BASE.log.tmp (issue 36): PETSc's signal handler (a crash:
SIGSEGV here, sent by the test the way a bug would raise it) aborts the job, and before it surge closes
the run log (src/base/init.c, termlog.c): the rank that holds it commits BASE.log, ending with one
"surge: crashed:" line; another rank removes the temporary (the abort ends rank 0 too). 1 rank, and
each of the 2 ranks of a 2-rank run crashing in turn. The crash lands wherever the process is -- often
inside malloc or HDF5 -- so the handler must use async-signal-safe calls only (a first version that
closed the log with fclose deadlocked in free()); each run is repeated 3 times. Only processes this test started are signalled."""
import os
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

args = [deck("heat/decay2d.yaml"), "-sim_t_end", "100", "-sim_max_steps", "1000000", "-sim_progress_every", "200", "-sim_output", "a"]


def crash(ranks, which):
    tag = f"{ranks} rank(s), SIGSEGV to rank pid #{which}"
    w = workdir(f"core_crash_log_{ranks}_{which}")
    p = subprocess.Popen(([*MPIEXEC] if ranks == 2 else []) + [SURGE, "run", *args], cwd=w, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = ""
    for line in p.stdout:  # the loop runs and the log is attached once a progress line is out
        out += line
        if line.startswith("step "):
            break
    if ranks == 1:
        target = p.pid
    else:  # the ranks: the session's surge processes (mpiexec is p.pid)
        ranks_pids = sorted(q for q in session_pids(p.pid) if q != p.pid and open(f"/proc/{q}/comm").read().strip() == "surge")
        check(len(ranks_pids) == 2, f"{tag}: found the 2 ranks {ranks_pids}")
        target = ranks_pids[which]
    os.kill(target, signal.SIGSEGV)
    try:
        out += p.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        kill_job(p)
        fail(f"{tag}: the job did not end within 120 s of the crash (a handler deadlocked?)")
    kill_job(p)  # whatever the abort left of this job
    check(p.returncode != 0, f"{tag}: the job failed (exit {p.returncode})")
    left = sorted(f for f in os.listdir(w) if ".log.tmp" in f)  # BASE.log.tmp.PID (and the old BASE.log.tmp)
    check(not left, f"{tag}: no log temporary left behind {left}")
    if os.path.exists(f"{w}/a.log"):
        text = open(f"{w}/a.log").read()
        check("surge: crashed: caught signal SIGSEGV" in text.splitlines()[-1], f"{tag}: a.log ends with the crash line")
    else:
        check(ranks == 2, f"{tag}: no a.log: the crashing rank removed the temporary rank 0 held (on 1 rank the log must be there)")


for _ in range(3):
    crash(1, 0)
    crash(2, 0)
    crash(2, 1)
