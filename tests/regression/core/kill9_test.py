"""kill -9 at random moments (fixed seed) during a checkpointing vlasov run, a checkpointing md run
and an ensemble; then the same command is rerun (from the checkpoint if one exists: -restart; the
ensemble resumes by itself). The results must equal an uninterrupted run bit for bit, and no stale
*.tmp file may remain (a killed run's half-written checkpoint or XDMF is removed by the next run).
Usage: kill9_test.py [TRIALS per kind, default 6]"""
import glob
import os
import random
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 6
rng = random.Random(20261125)


# not results: what the process measured about itself (wall clock, speed, and how many times it
# rebuilt its neighbour list, which a restart does once more), and the provenance (date, command)
NOT_RESULTS = ("provenance", "report/md_atom_steps_per_s", "report/md_loop_time", "report/md_neighbor_builds")


def datasets(path, skip=NOT_RESULTS):
    """Every dataset's values except those that are not results."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and not name.startswith(skip):
                out[name] = obj[()]
        f.visititems(visit)
    return out


# md: the trajectory (positions, velocities, forces, kinetic energy) continues bit for bit, but the
# potential-energy and virial sums run over atoms in storage order, and a restarted run stores its
# atoms in another order until the next neighbour-list sort (pre-existing; physics/md): those sums
# (and the H5MD observables built from them)
# agree to round-off, 1e-12 relative (measured: 1-2 ulp).
ROUNDOFF = ("diagnostics/pe", "diagnostics/etotal", "diagnostics/econserved", "diagnostics/pressure")


def same(a, b, roundoff=()):
    if a.keys() != b.keys():
        return False, f"datasets differ: {sorted(set(a) ^ set(b))[:5]}"
    for k in a:
        if k in roundoff:
            if a[k].shape != b[k].shape or np.abs(a[k] - b[k]).max() > 1e-12 * np.abs(a[k]).max():
                return False, f"{k} differs beyond round-off"
        elif not np.array_equal(a[k], b[k]):
            return False, f"{k} differs"
    return True, ""


def timed(cmd, cwd):
    t0 = time.time()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.time() - t0


def killed_at(cmd, cwd, when, after=None):
    """Start cmd, wait until the file pattern `after` exists (if given), then `when` seconds, kill -9."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while after and not glob.glob(os.path.join(cwd, after)) and p.poll() is None:
        time.sleep(0.005)
    time.sleep(when)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return True
    return False


kinds = {
    "vlasov": (["run", deck("vlasov/landau.yaml"), "-sim_checkpoint_every", "50", "-sim_field_every", "200"], "run"),
    "md": (["run", deck("md/lj_nve.yaml"), "-sim_max_steps", "500", "-sim_checkpoint_every", "20", "-md_traj_every", "50"], "run"),
    "ensemble": (["ensemble", deck("heat/ensemble2d.yaml"), "-ensemble_members", "24", "-heat_cells", "64,48"], "ensemble"),
}
total_killed = 0
for kind, (args, job) in kinds.items():
    w = workdir(f"core_kill9_{kind}")
    traj = lambda b: ["-md_traj_file", f"{b}.h5md"] if kind == "md" else []
    ref_args = args + (["-sim_output", "ref"] if job == "run" else ["-ensemble_output", "ref"]) + traj("ref")
    wall = timed([SURGE] + ref_args, w)
    ref = datasets(f"{w}/ref.h5" if job == "run" else f"{w}/ref.h5")
    killed = resumed = 0
    for t in range(trials):
        base = f"k{t}"
        targs = args + (["-sim_output", base] if job == "run" else ["-ensemble_output", base]) + traj(base)
        # even trials: any moment after start-up (MPI, PETSc: the first fifth); odd trials: a random
        # moment after the first checkpoint or finished member, so every kind is killed mid-run too
        first = f"{base}.chk.h5" if job == "run" else f"{base}.members/*.done"
        if t % 2 == 0:
            when = rng.uniform(0.2 * wall, wall)
            killed += killed_at([SURGE] + targs, w, when)
        else:
            when = rng.uniform(0, 0.5 * wall)
            killed += killed_at([SURGE] + targs, w, when, after=first)
        rerun = targs + (["-restart", f"{base}.chk.h5"] if job == "run" and os.path.exists(f"{w}/{base}.chk.h5") else [])
        rc, out = surge(rerun, w)
        resumed += "-restart" in rerun or ("already done" in out and " 0 already done" not in out)
        ok, why = same(ref, datasets(f"{w}/{base}.h5"), ROUNDOFF if kind == "md" else ())
        if ok and kind == "md":
            ha, hb = datasets(f"{w}/ref.h5md", ("h5md",)), datasets(f"{w}/{base}.h5md", ("h5md",))
            ok, why = same(ha, hb, [k for k in ha if k.startswith("observables/") and k.endswith("/value")])
        check(ok, f"{kind} trial {t}: killed {when:.2f}s {'after its first checkpoint/member' if t % 2 else 'after start'} (run {wall:.2f}s), rerun{' from the checkpoint' if '-restart' in rerun else ''}: results bit-identical {why}")
        stale = glob.glob(f"{w}/{base}*.tmp") + glob.glob(f"{w}/{base}*/*.tmp")
        check(not stale, f"{kind} trial {t}: no stale .tmp files ({stale})")
    total_killed += killed
    print(f"{kind}: {trials} trials, {killed} killed while running, {resumed} continued from a checkpoint or done members")
    check(resumed >= 1, f"{kind}: at least one trial continued an interrupted run ({resumed})")
check(total_killed >= trials, f"{total_killed} of {3 * trials} trials were killed mid-run (the rest finished first)")
