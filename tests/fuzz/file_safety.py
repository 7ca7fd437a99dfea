#!/usr/bin/env python3
"""File-safety fuzzer for the one write path (io/include/sgwrite.h, docs/run.md "Files surge writes").

  file_safety.py paths    every output option (found in -help: "[output path]", "[output base name]")
                          of a representative job per kind -- a heat run, a Deep Potential training,
                          a heat ensemble -- and `surge model compress`'s output, pointed at each of
                          the run's inputs and at a foreign file of each kind, on 1 and 2 ranks
  file_safety.py diskfull a full disk (a 2 MiB tmpfs where mounting works, else the write path's
                          injected ENOSPC, SURGE_TEST_ENOSPC) over earlier complete outputs: a run's
                          h5/xmf/chk set, a training's checkpoint, learning curve and model, 1 and 2 ranks
  file_safety.py concurrent two runs on one output name at once
  file_safety.py writers  the writers routed through the write path last (issue 33): the MD H5MD
                          trajectory (-md_traj_file) and `surge dataset export`'s DeePMD-kit
                          directory, pointed at an input of the run and at foreign files (1 and 2
                          ranks), a fresh write (kind marked, no temporary), a disk full at the
                          export's commit (injected ENOSPC: no DIR, no DIR.tmp)

Every case asserts: each file that existed before is byte-identical afterwards (except a file of the
same kind the option is meant to replace, which is never a target here), no *.tmp is left, and the
outcome is success or exactly one 'surge: error:' line (no PETSc traceback, no signal, no hang).
"""
import glob
import h5py
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SURGE = os.path.join(ROOT, "bin", "surge")
W = os.path.join(ROOT, "build", "tmp", "file_safety")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def run(args, ranks=1, cwd=W, env=None, timeout=120):
    cmd = ([SURGE] if ranks == 1 else ["mpiexec", "-n", str(ranks), "--oversubscribe", SURGE]) + args
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "hang", ""


def snapshot(d):
    out = {}
    for dirpath, _, files in os.walk(d):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def judge(label, rc, out, before, d=W, allow_success=True):
    errs = [l for l in out.splitlines() if l.startswith("surge: error:")]
    bad = []
    if rc == "hang":
        bad.append("hang (timeout)")
    elif rc != 0:
        if len(errs) != 1:
            bad.append(f"exit {rc} with {len(errs)} 'surge: error:' lines")
        if "PETSC ERROR" in out:
            bad.append("PETSc traceback")
        if rc < 0 or rc > 128:
            bad.append(f"signal/abort status {rc}")
    elif not allow_success:
        bad.append("exit 0 where a refusal was expected")
    after = snapshot(d)
    for p, h in before.items():
        # BASE.lock is the run's own flock file, no data: one left by a killed run is taken over and
        # removed by the next (diskfull() checks that a failed run leaves none)
        if after.get(p) != h and not p.endswith(".lock"):
            bad.append(f"{os.path.relpath(p, d)} {'removed' if p not in after else 'changed'}")
    tmps = [os.path.relpath(p, d) for p in after if p.endswith(".tmp") or ".tmp." in os.path.basename(p)]
    if tmps:
        bad.append(f"temporaries left: {tmps}")
    if bad:
        failures.append(f"{label}: {'; '.join(bad)}" + (f"\n    | {errs[0] if errs else out.strip().splitlines()[-1:] }" if out else ""))
    return errs[0] if errs else ("ok" if rc == 0 else "?")


def output_options(args):
    rc, out = run(args + ["-help"])
    opts = {}
    for line in out.splitlines():
        line = line.strip()
        for tag, role in (("[output path]", "file"), ("[output base name]", "base")):
            if line.endswith(tag) or tag + " " in line:
                opts[line.split()[0]] = role
    return opts


def setup():
    shutil.rmtree(W, ignore_errors=True)
    os.makedirs(W)
    shutil.copy(os.path.join(ROOT, "inputs/heat/decay2d.yaml"), f"{W}/heat.yaml")
    shutil.copy(os.path.join(ROOT, "inputs/heat/ensemble2d.yaml"), f"{W}/ens.yaml")
    shutil.copy(os.path.join(ROOT, "inputs/deepmd/pair.yaml"), f"{W}/pair.yaml")
    shutil.copy(os.path.join(ROOT, "inputs/deepmd/models/water.dp"), f"{W}/foreign_dp.h5")  # HDF5, not surge's
    with open(f"{W}/notes.txt", "w") as f:
        f.write("the user's own notes\n")
    subprocess.run([os.path.join(ROOT, "build/tests/test_deepmd_train"), "data", W], check=True, capture_output=True)
    # surge files of each kind, none of them an input of the runs below
    rc, out = run(["run", "heat.yaml", "-sim_output", "runout", "-sim_max_steps", "4"])
    assert rc == 0, out
    rc, out = run(["ensemble", "ens.yaml", "-ensemble_output", "dataset"])
    assert rc == 0, out
    shutil.rmtree(f"{W}/dataset.members")
    rc, out = run(["train", "pair.yaml", "-deepmd_data", "pair_train.h5", "-deepmd_valid_data", "pair_valid.h5",
                   "-deepmd_numb_steps", "4", "-train_output", "model", "-deepmd_lcurve", "lcurve.txt",
                   "-deepmd_save_freq", "2", "-deepmd_save_ckpt", "ckpt.h5"])
    assert rc == 0, out


# What each target is, so that a target of the option's own kind (which it may replace) is skipped.
TARGETS = {"heat.yaml": "deck", "pair.yaml": "deck", "pair_train.h5": "dataset", "pair_valid.h5": "dataset",
           "notes.txt": "foreign", "foreign_dp.h5": "foreign", "dataset.h5": "dataset", "model.h5": "model",
           "runout.h5": "run output", "runout.chk.h5": "run checkpoint", "ckpt.h5": "training checkpoint",
           "lcurve.txt": "learning curve"}
KIND = {"-sim_output": "run output", "-train_output": "model", "-deepmd_lcurve": "learning curve",
        "-deepmd_save_ckpt": "training checkpoint", "-deepmd_test_detail": "dp test detail",
        "-ensemble_output": "dataset"}


def paths():
    jobs = [("run", ["run", "heat.yaml", "-sim_max_steps", "3"], ["heat.yaml"]),
            ("train", ["train", "pair.yaml", "-deepmd_data", "pair_train.h5", "-deepmd_valid_data", "pair_valid.h5",
                       "-deepmd_numb_steps", "2", "-deepmd_save_freq", "1"], ["pair.yaml", "pair_train.h5", "pair_valid.h5"]),
            ("ensemble", ["ensemble", "ens.yaml", "-ensemble_members", "2"], ["ens.yaml"])]
    ncase = 0
    for name, args, inputs in jobs:
        opts = output_options(args)
        assert opts, f"{name}: no output options found in -help (SgOptionsPath lost?)"
        for opt, role in sorted(opts.items()):
            for target, kind in TARGETS.items():
                if kind == KIND.get(opt):
                    continue  # the option's own kind: replacing it is what the option is for
                if role == "base":
                    if not target.endswith(".h5"):
                        continue  # BASE.h5 cannot be a .yaml/.txt file
                    value = target[:-3]
                else:
                    value = target
                for ranks in (1, 2):
                    before = snapshot(W)
                    rc, out = run(args + [opt, value], ranks)
                    msg = judge(f"{name} {opt} {value} ({ranks} rank(s))", rc, out, before)
                    ncase += 1
                    if target in inputs and rc == 0:
                        failures.append(f"{name} {opt} {value}: an input of the run was accepted as an output")
                    for f in glob.glob(f"{W}/*.members"):
                        if not f.startswith(f"{W}/dataset"):
                            shutil.rmtree(f)
    # surge model compress IN OUT: OUT over each kind of file
    for target, kind in TARGETS.items():
        if kind == "model":
            continue
        before = snapshot(W)
        rc, out = run(["model", "compress", "model.h5", target])
        judge(f"model compress model.h5 {target}", rc, out, before, allow_success=False)
        ncase += 1
    print(f"file-safety paths: {ncase} cases")


def writers():
    ncase = 0
    shutil.copy(os.path.join(ROOT, "inputs/md/lj_nve.yaml"), f"{W}/md.yaml")
    os.makedirs(f"{W}/userdir", exist_ok=True)
    with open(f"{W}/userdir/type.raw", "w") as f:
        f.write("0\n0\n")  # a user's DeePMD-kit system: never written into
    md = ["run", "md.yaml", "-sim_max_steps", "4", "-md_traj_every", "2", "-md_lattice_cells", "4,4,4", "-sim_output", "mdrun"]
    # the MD trajectory over the deck (the run's input), a text file, another code's HDF5, other surge kinds
    for target in ("md.yaml", "notes.txt", "foreign_dp.h5", "runout.h5", "dataset.h5", "lcurve.txt"):
        for ranks in (1, 2):
            shutil.copy(os.path.join(ROOT, "inputs/md/lj_nve.yaml"), f"{W}/md.yaml")  # cases independent: a destroyed deck is reported once
            before = snapshot(W)
            rc, out = run(md + ["-md_traj_file", target], ranks)
            judge(f"md -md_traj_file {target} ({ranks} rank(s))", rc, out, before, allow_success=False)
            ncase += 1
    # a fresh trajectory: written, marked as surge's, no temporary; a rerun replaces it (same kind)
    for ranks in (1, 2):
        shutil.copy(os.path.join(ROOT, "inputs/md/lj_nve.yaml"), f"{W}/md.yaml")
        before = snapshot(W)
        rc, out = run(md + ["-md_traj_file", "traj.h5md"], ranks)
        judge(f"md -md_traj_file traj.h5md, fresh ({ranks} rank(s))", rc, out, {k: v for k, v in before.items() if "mdrun" not in k and "traj.h5md" not in k})
        ncase += 1

        got, frames = "(no file)", 0
        if os.path.exists(f"{W}/traj.h5md"):
            with h5py.File(f"{W}/traj.h5md", "r") as h:
                got = h.attrs.get("surge_file", b"")
                got = got.decode() if isinstance(got, bytes) else str(got)
                frames = h["particles/all/position/value"].shape[0]
        if rc != 0 or got != "md trajectory" or frames != 3:
            failures.append(f"md fresh trajectory ({ranks} rank(s)): exit {rc}, surge_file '{got}', {frames} frames (expected 0, 'md trajectory', 3)")
    # surge dataset export IN DIR: DIR an input, a file, a directory that holds files
    for target in ("pair_train.h5", "notes.txt", "userdir", "userdir/"):
        for ranks in (1, 2):
            before = snapshot(W)
            rc, out = run(["dataset", "export", "pair_train.h5", target], ranks)
            judge(f"dataset export pair_train.h5 {target} ({ranks} rank(s))", rc, out, before, allow_success=False)
            ncase += 1
    # a fresh export (into a new and into an empty directory), and a full disk at its commit
    os.makedirs(f"{W}/emptydir", exist_ok=True)
    for target, ranks in (("exported", 1), ("emptydir", 2)):
        before = snapshot(W)
        rc, out = run(["dataset", "export", "pair_train.h5", target], ranks)
        judge(f"dataset export pair_train.h5 {target}, fresh ({ranks} rank(s))", rc, out, before)
        ncase += 1
        if rc != 0 or not os.path.exists(f"{W}/{target}/set.000/force.npy") or os.path.exists(f"{W}/{target}.tmp"):
            failures.append(f"dataset export into {target}: exit {rc}, set.000/force.npy {'present' if os.path.exists(f'{W}/{target}/set.000/force.npy') else 'missing'}")
        shutil.rmtree(f"{W}/{target}")
    for ranks in (1, 2):
        before = snapshot(W)
        rc, out = run(["dataset", "export", "pair_train.h5", "full"], ranks, env=dict(ENV, SURGE_TEST_ENOSPC="1"))
        judge(f"dataset export, disk full at the commit ({ranks} rank(s))", rc, out, before, allow_success=False)
        ncase += 1
        if os.path.exists(f"{W}/full") or os.path.exists(f"{W}/full.tmp"):
            failures.append(f"dataset export, disk full ({ranks} rank(s)): full/ or full.tmp/ left behind")
            shutil.rmtree(f"{W}/full", ignore_errors=True)
            shutil.rmtree(f"{W}/full.tmp", ignore_errors=True)
    print(f"file-safety writers: {ncase} cases")


def diskfull():
    d = f"{W}/full"
    os.makedirs(d, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", d], capture_output=True).returncode == 0
    try:
        shutil.copy(f"{W}/heat.yaml", d)
        for f in ("pair.yaml", "pair_train.h5", "pair_valid.h5"):
            shutil.copy(f"{W}/{f}", d)
        ncase = 0
        # a complete earlier run output (small), then a run that cannot fit (or whose commit fails)
        rc, out = run(["run", "heat.yaml", "-sim_output", "r", "-sim_max_steps", "3"], cwd=d)
        assert rc == 0, out
        big = ["-heat_cells", "256,256", "-sim_max_steps", "5", "-sim_field_every", "1"]
        for ranks in (1, 2):
            # "tmpfs, unchecked": the room check passes (SURGE_TEST_NO_ROOM_CHECK, as a file system
            # that does not say), so the disk fills inside H5Dcreate2 on rank 0 while rank 1 waits
            # in HDF5's barrier: the lone failing rank ends the job (after SURGE_ERROR_AGREE_SECONDS)
            for how in (["tmpfs", "tmpfs, unchecked"] if mounted else []) + ["enospc"]:
                env = dict(ENV, SURGE_TEST_ENOSPC="2") if how == "enospc" else ENV
                if how == "tmpfs, unchecked":
                    env = dict(ENV, SURGE_TEST_NO_ROOM_CHECK="1", SURGE_ERROR_AGREE_SECONDS="2")
                before = snapshot(d)
                rc, out = run(["run", "heat.yaml", "-sim_output", "r"] + (big if how.startswith("tmpfs") else ["-sim_max_steps", "5"]), ranks, cwd=d, env=env)
                label = f"disk full ({how}): run over a complete output ({ranks} rank(s))"
                judge(label, rc, out, before, d, allow_success=False)
                # the failure is agreed, not an abort: the job released its lock and MPI ended quietly
                if os.path.exists(f"{d}/r.lock"):
                    failures.append(f"{label}: r.lock left (the job did not end through its error path)")
                if "MPI_ABORT" in out or "ORTE_ERROR_LOG" in out:
                    failures.append(f"{label}: the job was aborted (MPI_ABORT / ORTE_ERROR_LOG in the output)")
                ncase += 1
        # training: checkpoint, learning curve and model over earlier complete ones
        tr = ["train", "pair.yaml", "-deepmd_data", "pair_train.h5", "-deepmd_valid_data", "pair_valid.h5", "-deepmd_numb_steps", "4",
              "-deepmd_save_freq", "2", "-deepmd_save_ckpt", "ckpt.h5", "-deepmd_lcurve", "lc.txt", "-train_output", "m"]
        rc, out = run(tr, cwd=d)
        assert rc == 0, out
        # commits in order: the checkpoint at step 2, the learning curve, the model; a failure of the
        # k-th leaves the k-th and later files whole (the earlier ones were legitimately replaced)
        replaced = {"1": [], "2": ["ckpt.h5"], "3": ["ckpt.h5", "lc.txt"]}
        for ranks in (1, 2):
            for k in ("1", "2", "3"):
                before = {p: h for p, h in snapshot(d).items() if os.path.basename(p) not in replaced[k]}
                rc, out = run(tr + ["-deepmd_seed", "5"], ranks, cwd=d, env=dict(ENV, SURGE_TEST_ENOSPC=k), timeout=60)
                judge(f"disk full (enospc at commit {k}): training over complete files ({ranks} rank(s))", rc, out, before, d, allow_success=False)
                ncase += 1
        print(f"file-safety disk full: {ncase} cases ({'2 MiB tmpfs and ' if mounted else ''}injected ENOSPC)")
    finally:
        if mounted:
            subprocess.run(["umount", d])


def concurrent():
    d = f"{W}/conc"
    os.makedirs(d, exist_ok=True)
    shutil.copy(f"{W}/heat.yaml", d)
    args = [SURGE, "run", "heat.yaml", "-sim_output", "same", "-heat_cells", "64,64"]
    for rnd in range(3):
        ps = [subprocess.Popen(args, cwd=d, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
        outs = [(p.wait(timeout=120), p.stdout.read()) for p in ps]
        for rc, out in outs:
            judge(f"concurrent runs on one output (round {rnd})", rc, out, {}, d)
        assert any(rc == 0 for rc, _ in outs) or failures, "neither concurrent run finished"
        rc, out = run(["info", "same.h5"], cwd=d)
        if rc != 0:
            failures.append(f"concurrent round {rnd}: same.h5 is not a readable output afterwards: {out.strip()[-200:]}")
        rc, out = run(["run", "heat.yaml", "-sim_output", "same", "-heat_cells", "64,64", "-restart", "same.chk.h5"], cwd=d)
        if rc != 0:
            failures.append(f"concurrent round {rnd}: same.chk.h5 does not restart into same.h5: {out.strip()[-300:]}")
    print("file-safety concurrent: 3 rounds of 2 runs")


if __name__ == "__main__":
    what = sys.argv[1:] or ["paths", "diskfull", "concurrent"]
    setup()
    for w in what:
        globals()[w]()
    for f in failures:
        print("FAIL:", f)
    print(f"file-safety: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
