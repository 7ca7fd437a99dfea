"""Helpers for surge's scripted tests: run the binary, read its HDF5 output, assert with reasons.

Tests run from the repository root (tests/runner.sh does that); each uses its own scratch folder
under tests/logs/work/ so that parallel runs of different tests never share files."""
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SURGE = os.environ.get("SURGE", os.path.join(ROOT, "bin", "surge"))
MPIEXEC = shlex.split(os.environ.get("MPIEXEC", "mpiexec -n 2 --oversubscribe"))
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def workdir(name):
    """A fresh scratch folder for one test."""
    d = os.path.join(ROOT, "tests", "logs", "work", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def deck(name):
    return os.path.join(ROOT, "inputs", name)


def surge(args, cwd, ranks=1, expect_ok=True):
    """Run surge; return (returncode, stdout+stderr). Fails the test on an unexpected outcome."""
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [SURGE] + list(args)
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if expect_ok and p.returncode != 0:
        fail(f"surge {' '.join(args)} failed (rc {p.returncode}){first_error(p.stdout)}:\n{p.stdout[-3000:]}")
    if not expect_ok and p.returncode == 0:
        fail(f"surge {' '.join(args)} succeeded but should have failed:\n{p.stdout[-3000:]}")
    return p.returncode, p.stdout


def first_error(out):
    """The first line of out that reports an error (the cause: a traceback's tail is its last frames,
    which can cut the message off), as ' -- first error: LINE', or ''."""
    for line in out.splitlines():
        if "error" in line.lower():
            return f" -- first error: {line.strip()}"
    return ""


class InPlaceWatch:
    """Writes made in place to the files `names` of `folder` (Linux inotify, IN_MODIFY by name): a
    file committed by rename is never written under its final name, so any event for one is an edit
    of a committed file. An event names the file by the name it has when the write happens, so a
    temporary written and then renamed is not reported. Use: w = InPlaceWatch(dir, names); run;
    w.edited() -> the names written in place; w.close(). With names=None and mask=IN_CREATE it
    reports every name created in the folder instead."""

    IN_MODIFY = 0x2
    IN_CREATE = 0x100

    def __init__(self, folder, names, mask=IN_MODIFY):
        import ctypes
        import ctypes.util
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.names = None if names is None else set(names)
        self.mask = mask
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0 or self.libc.inotify_add_watch(self.fd, folder.encode(), mask) < 0:
            raise OSError(ctypes.get_errno(), "inotify")
        self.seen = set()

    def edited(self):
        import struct
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            i = 0
            while i + 16 <= len(buf):
                _, mask, _, n = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + n].split(b"\0", 1)[0].decode()
                if mask & self.mask and (self.names is None or name in self.names):
                    self.seen.add(name)
                i += 16 + n
        return sorted(self.seen)

    def close(self):
        os.close(self.fd)


def diagnostics(path):
    with h5py.File(path, "r") as f:
        return {k: f["diagnostics"][k][()] for k in f["diagnostics"]}


def report(path, name):
    with h5py.File(path, "r") as f:
        return f["report"][name][()]


def last_field(path, name):
    with h5py.File(path, "r") as f:
        g = f["fields"][name]
        k = max(int(s) for s in g)
        return g[str(k)][()]


def session_pids(sid):
    """Every live process of session sid (field 6 of /proc/PID/stat, after the command's parentheses)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited while we looked
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(d))
    return pids


def kill_job(p, timeout=60):
    """kill -9 a whole job started with Popen(..., start_new_session=True) and wait until it is gone.

    Open MPI's mpiexec puts each rank in a process group of its own, so killing mpiexec's group
    leaves the ranks running until they notice; a batch system kills them all. So do we: every process
    of the session, again until none is left (a rank still holding an HDF5 file open would make the
    next run's file creation fail on the file lock)."""
    t0 = time.time()
    while True:
        pids = session_pids(p.pid)
        if not pids:
            break
        if time.time() - t0 > timeout:
            fail(f"processes {pids} of the killed job are still alive after {timeout} s")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    p.wait()


def same_arrays(a, b):
    """a and b (dicts of arrays) hold the same non-empty set of names, every array non-empty and
    equal bit for bit (shape included). all() over an empty dict is True: an output that lost its
    records must not pass a bit-for-bit comparison."""
    return (len(b) > 0 and set(a) == set(b) and all(np.size(b[k]) > 0 for k in b)
            and all(np.array_equal(a[k], b[k]) for k in b))


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok:", msg)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
