"""Helpers for surge's scripted tests: run the binary, read its HDF5 output, assert with reasons.

Tests run from the repository root (tests/runner.sh does that); each uses its own scratch folder
under tests/logs/work/ so that parallel runs of different tests never share files."""
import os
import shlex
import shutil
import subprocess
import sys

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
        fail(f"surge {' '.join(args)} failed (rc {p.returncode}):\n{p.stdout[-3000:]}")
    if not expect_ok and p.returncode == 0:
        fail(f"surge {' '.join(args)} succeeded but should have failed:\n{p.stdout[-3000:]}")
    return p.returncode, p.stdout


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


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok:", msg)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
