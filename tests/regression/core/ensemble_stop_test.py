"""An ensemble stopped by a signal (issue 36, item 6): SIGUSR1 (a batch system's warning before a
time limit) while a member runs -> that member writes its checkpoint at its next step, finished
members stay, no new member starts, exit 0 with one line saying how to continue. The same command
again resumes: the stopped member from its checkpoint (not from t = 0), the finished ones reused by
fingerprint, and the dataset equals an uninterrupted ensemble's bit for bit (heat restarts are
bit-identical, core_stop_signal). 1 rank (signal to surge) and 2 ranks (to mpiexec, which forwards
SIGUSR1; each group of one rank stops its own member). Small heat members, ~1 s each."""
import glob
import os
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

d = deck("heat/ensemble2d.yaml")
# 4 members of 40000 steps (~0.3 s each on an idle core, dt fixed so every member takes as many)
opts = ["-ensemble_members", "4", "-sim_t_end", "0.4", "-sim_dt", "1e-5", "-sim_field_every", "8000", "-sim_checkpoint_every", "100000"]


def samples(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["nsamples"])
        return {k: f["samples"][k][:n] for k in f["samples"]}


for ranks in (1, 2):
    tag = f"{ranks} rank(s)"
    w = workdir(f"core_ensemble_stop_{ranks}")
    surge(["ensemble", d, *opts, "-ensemble_output", "ref"], w, ranks=ranks)
    ref = samples(f"{w}/ref.h5")
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [SURGE, "ensemble", d, *opts, "-ensemble_output", "a"]
    p = subprocess.Popen(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    # the signal once a member is done and another one is claimed (its claim is taken after the
    # ensemble's last look for a signal before it, so the member sees it at its first step or later)
    t0 = time.time()
    while time.time() - t0 < 120 and p.poll() is None:
        names = set(os.listdir(f"{w}/a.members")) if os.path.isdir(f"{w}/a.members") else set()
        running = [n for n in names if n.endswith(".claim") and n[:-6] + ".done" not in names and n.startswith("member_")]
        if any(n.endswith(".done") for n in names) and running:
            time.sleep(0.1)  # into its steps (a member takes ~0.3 s)
            os.kill(p.pid, signal.SIGUSR1)
            break
        time.sleep(0.005)
    out = ""
    out += p.stdout.read()
    rc = p.wait(timeout=300)
    stops = [l for l in out.splitlines() if l.startswith("surge: ensemble stopped by")]
    check(rc == 0 and len(stops) == 1 and "SIGUSR1" in stops[0] and "continue with the same command" in stops[0], f"{tag}: exit {rc} and one line: {stops}\n{out[-2000:]}")
    check(not os.path.exists(f"{w}/a.h5"), f"{tag}: no dataset from a stopped ensemble")
    stopped = sorted(int(os.path.basename(f)[7:12]) for f in glob.glob(f"{w}/a.members/member_*.stop"))
    done = sorted(int(os.path.basename(f)[7:12]) for f in glob.glob(f"{w}/a.members/member_*.done"))
    check(len(stopped) >= 1 and all(os.path.exists(f"{w}/a.members/member_{m:05d}.chk.h5") for m in stopped), f"{tag}: stopped member(s) {stopped} have their checkpoints")
    check(len(done) >= 1 and len(done) + len(stopped) < 4 + 1, f"{tag}: finished members {done} kept")
    check(not glob.glob(f"{w}/a.members/*.tmp"), f"{tag}: no temporary left: {glob.glob(f'{w}/a.members/*.tmp')}")
    mtimes = {m: os.path.getmtime(f"{w}/a.members/member_{m:05d}.done") for m in done}
    rc, out2 = surge(["ensemble", d, *opts, "-ensemble_output", "a"], w, ranks=ranks)
    check(f"({4 - len(done)} to run, {len(done)} already done)" in out2, f"{tag}: the rerun runs only the {4 - len(done)} unfinished members")
    resumed = [l for l in out2.splitlines() if "(resumed from its checkpoint)" in l]
    check(len(resumed) == len(stopped), f"{tag}: {len(stopped)} stopped member(s) resumed from the checkpoint: {resumed}")
    check(all(os.path.getmtime(f"{w}/a.members/member_{m:05d}.done") == t for m, t in mtimes.items()), f"{tag}: finished members are not rerun")
    check(same_arrays(samples(f"{w}/a.h5"), ref), f"{tag}: stopped + resumed ensemble == uninterrupted, dataset bit for bit")
