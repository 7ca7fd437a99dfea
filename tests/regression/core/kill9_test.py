"""kill -9 at random moments (fixed seed) during a checkpointing vlasov run, a checkpointing md run
and an ensemble; then the same command is rerun (from the checkpoint if one exists: -restart; the
ensemble resumes by itself). The results must equal an uninterrupted run bit for bit, and no stale
*.tmp file may remain (a killed run's half-written checkpoint or XDMF is removed by the next run).
Kill moments cycle through three kinds: any moment after start-up, a random moment after the first
checkpoint, and the first write into the output right after the k-th checkpoint's commit (k random):
the moment an output edited in place is half-way through an HDF5 append.
A run (reference, killed, restarted) must never write its committed files (BASE.h5, BASE.xmf,
BASE.chk.h5) in place -- they are replaced by rename only (inotify: no write under those names), and
the BASE.h5 a kill leaves must be readable by h5py. HDF5 promises nothing for a file killed mid-write:
an in-place append killed at the wrong moment left a BASE.h5 the restart could not open for writing
(PETSC_ERR_LIB in SgOutputReopen, seen under the sanitizers).
Usage: kill9_test.py [TRIALS per kind, default 6]"""
import glob
import os
import random
import re
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


def stamp(path):
    try:
        st = os.stat(path)
        return (st.st_ino, st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        return None


def after_commit(p, cwd, base, k):
    """Wait for the k-th commit of BASE.chk.h5 (its inode changes: a rename), then for the first write
    into the output after it (BASE.h5.tmp, or BASE.h5 itself where it is edited in place)."""
    chk = os.path.join(cwd, f"{base}.chk.h5")
    last = stamp(chk)
    while k > 0 and p.poll() is None:
        now = stamp(chk)
        if now and now != last:
            k -= 1
            last = now
        time.sleep(0.0005)
    outs = [os.path.join(cwd, f"{base}.h5.tmp"), os.path.join(cwd, f"{base}.h5")]
    first = [stamp(o) for o in outs]
    while p.poll() is None and [stamp(o) for o in outs] == first:
        time.sleep(0.0002)


def killed_at(cmd, cwd, when, after=None, commit=None):
    """Start cmd, wait until the file pattern `after` exists (if given), then `when` seconds, kill -9;
    commit=(base, k): kill at the first output write after the k-th checkpoint commit instead."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if commit:
        after_commit(p, cwd, *commit)
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
    committed = lambda b: [f"{b}.h5", f"{b}.xmf", f"{b}.chk.h5"] if job == "run" else []
    watch = InPlaceWatch(w, committed("ref"))
    wall = timed([SURGE] + ref_args, w)
    check(not watch.edited(), f"{kind}: the uninterrupted run wrote no committed file in place ({watch.edited()})")
    ref = datasets(f"{w}/ref.h5" if job == "run" else f"{w}/ref.h5")
    killed = resumed = 0
    for t in range(trials):
        base = f"k{t}"
        targs = args + (["-sim_output", base] if job == "run" else ["-ensemble_output", base]) + traj(base)
        # trials cycle: any moment after start-up (MPI, PETSc: the first fifth); a random moment after
        # the first checkpoint or finished member, so every kind is killed mid-run too; (runs) the
        # first write after the k-th checkpoint's commit, k = 1..3
        first = f"{base}.chk.h5" if job == "run" else f"{base}.members/*.done"
        watch = InPlaceWatch(w, committed(base))
        mode = t % 3 if job == "run" else t % 2
        if mode == 0:
            when = rng.uniform(0.2 * wall, wall)
            killed += killed_at([SURGE] + targs, w, when)
            how = "after start"
        elif mode == 1:
            when = rng.uniform(0, 0.5 * wall)
            killed += killed_at([SURGE] + targs, w, when, after=first)
            how = "after its first checkpoint/member"
        else:
            when, k = 0.0, rng.randint(1, 3)
            killed += killed_at([SURGE] + targs, w, 0.0, commit=(base, k))
            how = f"at the first output write after checkpoint commit {k}"
        if job == "run" and os.path.exists(f"{w}/{base}.h5"):
            try:
                datasets(f"{w}/{base}.h5")
                readable = ""
            except Exception as e:
                readable = str(e).splitlines()[0]
            check(not readable, f"{kind} trial {t}: the {base}.h5 the kill left is readable by h5py {readable}")
        rerun = targs + (["-restart", f"{base}.chk.h5"] if job == "run" and os.path.exists(f"{w}/{base}.chk.h5") else [])
        rc, out = surge(rerun, w)
        check(not watch.edited(), f"{kind} trial {t}: the killed and the continued run wrote no committed file in place ({watch.edited()})")
        watch.close()
        resumed += "-restart" in rerun or ("already done" in out and " 0 already done" not in out)
        ok, why = same(ref, datasets(f"{w}/{base}.h5"), ROUNDOFF if kind == "md" else ())
        if ok and kind == "md":
            ha, hb = datasets(f"{w}/ref.h5md", ("h5md",)), datasets(f"{w}/{base}.h5md", ("h5md",))
            ok, why = same(ha, hb, [k for k in ha if k.startswith("observables/") and k.endswith("/value")])
        check(ok, f"{kind} trial {t}: killed {when:.2f}s {how} (run {wall:.2f}s), rerun{' from the checkpoint' if '-restart' in rerun else ''}: results bit-identical {why}")
        # surge's temporaries (PATH.tmp, PATH.tmp.PID) and MPI-IO's own files beside them (OMPIO's PATH-J-P.lock,
        # PATH.locktest.R: issue 36; surge selects ROMIO, which makes none)
        stale = [f for f in glob.glob(f"{w}/{base}*") + glob.glob(f"{w}/{base}*/*") if re.search(r"\.tmp(\.\d+)?$|-\d+-\d+\.lock$|\.locktest\.\d+$", f)]
        check(not stale, f"{kind} trial {t}: no stale .tmp files ({stale})")
    total_killed += killed
    print(f"{kind}: {trials} trials, {killed} killed while running, {resumed} continued from a checkpoint or done members")
    check(resumed >= 1, f"{kind}: at least one trial continued an interrupted run ({resumed})")
check(total_killed >= trials, f"{total_killed} of {3 * trials} trials were killed mid-run (the rest finished first)")
