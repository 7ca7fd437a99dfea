"""`surge train` stops on a signal (issue 36): SIGUSR1 or SIGTERM (a batch system's warning before a
time limit, or its SIGTERM at the limit) is noted, the ranks agree at the next step boundary, the
trainer writes its checkpoint (BASE.chk.h5 of -train_output when the run has no save_ckpt) and surge
exits 0 with one line naming it and the -deepmd_restart to continue with; no model file is written.
The restart from that checkpoint ends with the model an uninterrupted training writes, bit for bit
(every dataset of the model file: the Deep Potential's restart is bit-identical, docs/deepmd.md).
A Deep Potential (inputs/deepmd/pair.yaml, 150 steps: the signal goes at the first progress line, step
10, and the stop comes at the next step boundary) on 1 rank (SIGUSR1, SIGTERM to surge) and on
2 ranks (SIGUSR1 to mpiexec, which forwards it); MeshfreeFlowNet (SgTrainer's own checkpoint) on 1
rank with save_ckpt set. The uninterrupted reference is trained once per (surrogate, rank count) and
shared by the cases that need it."""
import os
import re
import signal
import subprocess
import sys
import h5py
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("train_stop_signal")
subprocess.run([os.path.join(ROOT, "build", "tests", "test_deepmd_train"), "data", w], check=True, stdout=subprocess.DEVNULL)


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def interrupt(cmd, sig, tag):
    """Run cmd, send sig once the first progress line is out, return (exit code, output)."""
    p = subprocess.Popen(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = ""
    for line in p.stdout:
        out += line
        if re.match(r"\s+\d+\s+\S", line):  # a progress line: the loop runs
            os.kill(p.pid, sig)
            break
    out += p.stdout.read()
    rc = p.wait(timeout=300)
    return rc, out


reference = {}  # (name, ranks) -> the uninterrupted run's model datasets


def case(ranks, sig, args, name, restart_opt, ckpt, nsteps):
    tag = f"{name}, {ranks} rank(s), {signal.Signals(sig).name}"
    for f in ("a.h5", "b.h5", ckpt):
        if os.path.exists(f"{w}/{f}"):
            os.remove(f"{w}/{f}")
    pre = [*MPIEXEC] if ranks == 2 else []
    rc, out = interrupt(pre + [SURGE, "train", *args, "-train_output", "a"], sig, tag)
    stops = [l for l in out.splitlines() if l.startswith("surge: stopped by")]
    check(rc == 0 and len(stops) == 1 and signal.Signals(sig).name in stops[0] and f"{restart_opt} {ckpt}" in stops[0],
          f"{tag}: exit {rc} and one line: {stops or out[-1500:]}")
    step = int(re.search(r"after step (\d+)", stops[0]).group(1))
    check(0 < step < nsteps, f"{tag}: stopped after step {step} of {nsteps}")
    check(os.path.exists(f"{w}/{ckpt}") and not os.path.exists(f"{w}/a.h5") and "Wrote model" not in out,
          f"{tag}: checkpoint {ckpt} written, no model")
    rc2, out2 = surge(["train", *args, "-train_output", "a", restart_opt, ckpt], w, ranks=ranks)
    check(re.search(rf"restart\w* .*{step}", out2) is not None, f"{tag}: the restart continues after step {step}")
    if (name, ranks) not in reference:
        surge(["train", *args, "-train_output", "b"], w, ranks=ranks)
        reference[(name, ranks)] = datasets(f"{w}/b.h5")
    a, b = datasets(f"{w}/a.h5"), reference[(name, ranks)]
    check(same_arrays(a, b), f"{tag}: stopped + restarted == uninterrupted, {len(b)} datasets of the model bit for bit")


N = 150
dp = [deck("deepmd/pair.yaml"), "-deepmd_data", f"{w}/pair_train.h5", "-deepmd_valid_data", f"{w}/pair_valid.h5",
      "-deepmd_numb_steps", str(N), "-deepmd_disp_freq", "10", "-deepmd_lcurve", "lc.txt"]
for ranks, sig in ((1, signal.SIGUSR1), (2, signal.SIGUSR1), (1, signal.SIGTERM)):
    case(ranks, sig, dp, "deepmd", "-deepmd_restart", "a.chk.h5", N)

# MeshfreeFlowNet: SgTrainer's own checkpoint format, written to the run's save_ckpt
subprocess.run([SURGE, "ensemble", deck("boussinesq/ensemble_small.yaml"), "-ensemble_output", "rb_small"], cwd=w, check=True, stdout=subprocess.DEVNULL)
M = 20
mf = [deck("mffn/small.yaml"), "-mffn_data", "rb_small.h5", "-mffn_numb_steps", str(M), "-mffn_disp_freq", "2", "-mffn_points", "64",
      "-mffn_lcurve", "", "-mffn_save_ckpt", "ck.h5"]
case(1, signal.SIGUSR1, mf, "mffn", "-mffn_restart", "ck.h5", M)
