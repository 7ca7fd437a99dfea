#!/usr/bin/env python3
"""Every benchmark checks for its reference before it measures (README, "What the commands install").

A shell script under tests/bench that runs a reference code - LAMMPS (lmp), CP2K (cp2k.psmp) - or a
Python script importing PyTorch or matplotlib, directly or through a tests/bench/*.py it starts, must
call the matching `bench_require_cmd ... lmp|cp2k.psmp` / `bench_require_py ... torch|matplotlib` of
tests/bench/require.sh, so that without the reference it stops with one line naming
`./configure --with-bench` rather than printing columns of nothing or a Python traceback.
Usage: bench_refs.py [ROOT]  (exit 1 and one line per missing check)."""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CMDS = {"lmp": re.compile(r"(^|[\s;|&(])lmp\s"), "cp2k.psmp": re.compile(r"(^|[\s;|&(])cp2k\.psmp\s")}
MODS = ("torch", "matplotlib")
py_re = re.compile(r"([A-Za-z0-9_./${}-]+\.py)\b")
imp_re = {m: re.compile(rf"^\s*(import|from)\s+{m}\b", re.M) for m in MODS}


def code_lines(text):
    """The script without comments and without the require lines themselves."""
    out = []
    for line in text.splitlines():
        s = line.split("#", 1)[0] if not line.lstrip().startswith("#!") else ""
        if "bench_require_" not in s:
            out.append(s)
    return "\n".join(out)


# scripts whose reference is not a Debian package, each checking it with its own message
EXEMPT = {"tests/bench/nn/run_cuda.sh": "a CUDA build of torch from $PYTHON (Debian's is CPU-only), checked at its start",
          "tests/bench/nn/surrogates_cuda.sh": "the GPU machine's own CUDA build of torch (Debian's is CPU-only): without it one line says the PyTorch columns are left out"}

bad, n = [], 0
for sh in sorted(glob.glob(os.path.join(ROOT, "tests", "bench", "**", "*.sh"), recursive=True)):
    rel = os.path.relpath(sh, ROOT)
    if rel == "tests/bench/require.sh" or rel in EXEMPT:
        continue
    n += 1
    text = open(sh, errors="replace").read()
    code = code_lines(text)
    need = set()
    for cmd, rx in CMDS.items():
        if any(rx.search(line) for line in code.splitlines()):
            need.add(("cmd", cmd))
    for tok in set(py_re.findall(code)):
        name = os.path.basename(tok)
        for cand in (os.path.join(ROOT, tok), os.path.join(os.path.dirname(sh), name)):
            if "$" not in cand and os.path.isfile(cand):
                src = open(cand, errors="replace").read()
                need |= {("py", m) for m in MODS if imp_re[m].search(src)}
                break
    for kind, what in sorted(need):
        if not re.search(rf"bench_require_{kind}\s+\S+\s+{re.escape(what)}\b", text):
            bad.append(f"{rel}: uses {what} but never calls bench_require_{kind} ... {what} (tests/bench/require.sh)")

for b in bad:
    print("bench_refs:", b)
print(f"bench_refs: {n} benchmark scripts, {len(bad)} without their reference check")
sys.exit(1 if bad else 0)
