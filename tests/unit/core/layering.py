#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked by name on every #include of the tree.

Layers: src/base <- io <- physics/*, surrogates/* <- src/driver <- src/cli. A file may include headers of
its own module and of the layers below it; physics and surrogates never include each other, one physics
module never includes another, surrogates/nn needs nothing but libc/libm/BLAS/CUDA, and <hdf5.h> is
included in io/ alone. The Makefile's per-layer include paths make a violation fail to compile; this
test names it. Usage: layering.py [ROOT]  (exit 1 and one line per violation)."""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SKIP = ("build", ".git", "tests", "bin")
inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def module_of(rel):
    """The layer and module of a path: ('base', 'base'), ('io', 'io'), ('physics', 'md'), ..."""
    p = rel.split(os.sep)
    if p[0] == "src":
        return (p[1], p[1])  # base, driver, cli
    if p[0] in ("physics", "surrogates"):
        return (p[0], p[1])
    return (p[0], p[0])


# every header of the tree by file name -> its module(s)
headers = {}
sources = []
for d, dirs, files in os.walk(ROOT):
    rel_d = os.path.relpath(d, ROOT)
    if rel_d.split(os.sep)[0] in SKIP or "/build" in rel_d or rel_d.endswith("/tests") or "/tests/" in rel_d + "/":
        dirs[:] = []
        continue
    for f in files:
        rel = os.path.normpath(os.path.join(rel_d, f))
        if f.endswith((".h", ".cuh")):
            headers.setdefault(f, set()).add(module_of(rel))
        if f.endswith((".c", ".h", ".cu", ".cuh")):
            sources.append(rel)

ORDER = {"base": 0, "io": 1, "physics": 2, "surrogates": 2, "driver": 3, "cli": 4}
SHARED_SURROGATE_LIBS = {"nn", "parallel", "train"}  # libraries every surrogate builds on


def allowed(src, dst):
    (sl, sm), (dl, dm) = src, dst
    if src == dst:
        return True
    if sl == "surrogates" and sm == "nn":
        return False  # the engine depends on nothing of ours
    if dl == "surrogates" and dm == "nn":
        return sl in ("io", "surrogates", "cli")  # io/nn stores the engine's checkpoints
    if sl in ("physics", "surrogates") and dl in ("physics", "surrogates"):
        return sl == "surrogates" and dl == "surrogates" and dm in SHARED_SURROGATE_LIBS
    if sl == "cli":
        return True
    return ORDER.get(dl, 99) < ORDER.get(sl, -1)


bad = []
for rel in sorted(sources):
    src = module_of(rel)
    text = open(os.path.join(ROOT, rel), errors="replace").read()
    for kind, name in inc_re.findall(text):
        base = os.path.basename(name)
        if kind == "<":
            if (base == "hdf5.h" or re.match(r"H5[A-Za-z]*\.h$", base)) and src[0] != "io":
                bad.append(f"{rel}: includes <{name}>: HDF5 belongs to io/ (use sgh5file.h, sgdataset.h, ...)")
            if src == ("surrogates", "nn") and (base.startswith("petsc") or base in ("mpi.h", "hdf5.h")):
                bad.append(f"{rel}: includes <{name}>: surrogates/nn depends on no PETSc, MPI or HDF5")
            continue
        owners = headers.get(base)
        if not owners:
            continue  # generated or relative to the file itself (kernels/, ../h5/...): same module
        if name.startswith("../") and any(o[0] == src[0] for o in owners):
            continue  # a private header of a sibling folder of the same layer
        if not any(allowed(src, o) for o in owners):
            o = sorted(owners)[0]
            bad.append(f"{rel}: includes \"{name}\" of {o[0]}/{o[1]}: {src[0]}/{src[1]} may not depend on it")

for b in bad:
    print("layering:", b)
print(f"layering: {len(sources)} files, {len(bad)} forbidden includes")
sys.exit(1 if bad else 0)
