"""Jobs sharing one ensemble directory (issue 36, item 6; src/driver/claim.c, docs/cluster.md):
- two `surge ensemble` processes started at once on the same deck and -ensemble_output (one on 2
  ranks, one on 1 rank: a job array's tasks) run every member exactly once between them, and the
  dataset holds every member once;
- a claim left by a process of this host that is gone is taken over at once;
- a claim of a live job elsewhere (another host, refreshed) is respected: the member is skipped, no
  dataset is written, the line says why; once that claim is older than -ensemble_claim_stale it is
  taken over and the dataset is written."""
import os
import re
import socket
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

M = 16
# t_end 0.5: a member takes ~0.45 s here, so one process alone needs ~7 s for the 16, longer than the
# other's start (mpiexec ~1 s); with 0.05 (0.03 s a member) the 1-rank job finished every member before
# the 2-rank one had started on an idle machine and "both jobs did work" failed by chance
args = ["ensemble", deck("heat/ensemble2d.yaml"), "-ensemble_members", str(M), "-ensemble_output", "shared", "-sim_t_end", "0.5"]


def member_lines(out):
    return [int(x) for x in re.findall(r"member +(\d+) done in", out)]


def dataset_members(path):
    with h5py.File(path, "r") as f:
        g = f["samples"] if "samples" in f else f
        return g["member"][()]


w = workdir("core_ensemble_claims")
procs = []
for ranks in (2, 1):
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [SURGE, *args]
    procs.append(subprocess.Popen(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
outs = [p.communicate(timeout=600)[0] for p in procs]
check(all(p.returncode == 0 for p in procs), f"both processes end with 0 ({[p.returncode for p in procs]})")
ran = [member_lines(o) for o in outs]
allran = sorted(ran[0] + ran[1])
skipped = sum(len(re.findall(r"skipped: claimed by", o)) for o in outs)
check(allran == list(range(M)), f"every member ran exactly once: job A {len(ran[0])}, job B {len(ran[1])} members ({skipped} claims found taken)")
check(len(ran[0]) > 0 and len(ran[1]) > 0, "both jobs did work")
check(not [f for f in os.listdir(f"{w}/shared.members") if f.endswith(".claim")], "no claim left behind")
mem = dataset_members(f"{w}/shared.h5")
check(sorted(set(mem.tolist())) == list(range(M)) and np.all(np.diff(mem) >= 0), f"shared.h5 holds every member once, in order ({len(mem)} samples)")

# a claim whose owner on this host is gone: taken over at once
host = socket.gethostname()
dead = subprocess.Popen(["true"])
dead.wait()
for m in (3, 7):
    for f in os.listdir(f"{w}/shared.members"):
        if f.startswith(f"member_{m:05d}."):
            os.unlink(f"{w}/shared.members/{f}")
with open(f"{w}/shared.members/member_00003.claim", "w") as f:
    f.write(f"host {host} pid {dead.pid} job -\n")
# a live claim of another host (refreshed now): respected
with open(f"{w}/shared.members/member_00007.claim", "w") as f:
    f.write("host node-elsewhere pid 12345 job 99_1\n")
os.unlink(f"{w}/shared.h5")
rc, out = surge(args + ["-ensemble_claim_stale", "60"], w)
check(member_lines(out) == [3], f"the dead owner's claim on member 3 was taken over; member 7 was not run ({member_lines(out)})")
check("member     7 skipped: claimed by host node-elsewhere pid 12345 job 99_1" in out, "the skip names the claim's owner")
check("1 member(s) not done yet" in out and not os.path.exists(f"{w}/shared.h5"), "no dataset while a member is claimed elsewhere")
# the other job's claim ages past -ensemble_claim_stale (killed at its time limit): taken over
old = time.time() - 3600
os.utime(f"{w}/shared.members/member_00007.claim", (old, old))
rc, out = surge(args + ["-ensemble_claim_stale", "60"], w)
check(member_lines(out) == [7] and "wrote shared.h5" in out, "a claim older than claim_stale is taken over and the dataset written")
check(sorted(set(dataset_members(f"{w}/shared.h5").tolist())) == list(range(M)), "the dataset holds every member")
