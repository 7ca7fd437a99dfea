#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked on every #include of the tree by the file it names.

Layers: src/base <- io <- physics/*, surrogates/* <- src/driver <- src/cli. A file may include headers of
its own module and of the layers below it; physics and surrogates never include each other, one physics
module never includes another, surrogates/nn needs nothing but libc/libm/BLAS/CUDA, and HDF5's headers
(hdf5*.h, H5*.h) are included in io/ alone.

Every #include is resolved to the file it names, as the compiler would find it: "name" relative to the
including file first, then the project's include folders; <name> in the project's include folders (a
project header must be included with quotes: <...> would hide it from this check's first step and from
-iquote). Then, on the file found:
  - its module must be one the including module may depend on (the rules above);
  - surrogates/nn may include the libc-only headers of src/base (LIBC_ONLY: sgrng.h, the counter-based
    random numbers), which themselves include no project header and nothing of PETSc/MPI/HDF5/libyaml;
  - a header outside an include/ folder is private to its module (io/ is one module: its folders share
    io/h5/h5util.h), except the flat public headers of the libraries without include/ folders
    (PUBLIC_FLAT); so a private *impl.h is used only inside its own module.
The Makefile's per-layer -I paths already make a forbidden "name" fail to compile; "../x/y.h" they cannot
stop, so `make` runs this script before it links (build/layering.ok) and make check runs it again.
Usage: layering.py [ROOT]  (exit 1 and one line per violation)."""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TOP = ("src", "io", "physics", "surrogates")
inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
HDF5_RE = re.compile(r"(hdf5[A-Za-z0-9_]*|H5[A-Za-z0-9_]*)\.h$")
# public headers of the two libraries that keep them at their top (their own Makefiles, -I of the folder)
PUBLIC_FLAT = {"surrogates/nn/sgnn.h", "surrogates/nn/sgnn_op.h", "surrogates/nn/vmath.h", "surrogates/parallel/sgpar.h"}
# header-only, libc-only headers of src/base that the engine (surrogates/nn) may include too: the one copy
# of the counter-based random numbers. They may include system headers only.
LIBC_ONLY = {"src/base/include/sgrng.h"}


def module_of(rel):
    """The layer and module of a path: ('base', 'base'), ('io', 'io'), ('physics', 'md'), ..."""
    p = rel.split("/")
    if p[0] == "src":
        return (p[1], p[1])  # base, driver, cli
    if p[0] in ("physics", "surrogates"):
        return (p[0], p[1])
    return (p[0], p[0])


def skipped(rel):
    p = rel.split("/")
    return "build" in p or "tests" in p or "gen" in p


sources = []
for top in TOP:
    for d, dirs, files in os.walk(os.path.join(ROOT, top)):
        rel_d = os.path.relpath(d, ROOT)
        if skipped(rel_d):
            dirs[:] = []
            continue
        sources += [os.path.join(rel_d, f) for f in files if f.endswith((".c", ".h", ".cu", ".cuh"))]

# the project's include folders: every include/ folder, and the flat libraries' folders
INC_DIRS = sorted({os.path.relpath(d, ROOT) for top in TOP for d in glob.glob(os.path.join(ROOT, top, "**", "include"), recursive=True)
                   if not skipped(os.path.relpath(d, ROOT))}) + ["surrogates/nn", "surrogates/parallel"]


def resolve(rel, kind, name):
    """The project file an include names (relative to ROOT), or None for a system header."""
    cands = ([os.path.join(os.path.dirname(rel), name)] if kind == '"' else []) + [os.path.join(d, name) for d in INC_DIRS]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(ROOT, c)):
            return c
    return None


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


def public(rel):
    return "include" in rel.split("/") or rel in PUBLIC_FLAT


def check(rel, kind, name):
    """The violations of one #include of file rel."""
    src = module_of(rel)
    base = os.path.basename(name)
    shown = f"<{name}>" if kind == "<" else f'"{name}"'
    out = []
    if HDF5_RE.match(base) and src[0] != "io":
        out.append(f"{rel}: includes {shown}: HDF5 belongs to io/ (use sgh5file.h, sgdataset.h, ...)")
    if src == ("surrogates", "nn") and (base.startswith(("petsc", "slepc", "yaml")) or base == "mpi.h" or HDF5_RE.match(base)):
        out.append(f"{rel}: includes {shown}: surrogates/nn depends on no PETSc, MPI, HDF5 or libyaml")
    if rel in LIBC_ONLY and (base.startswith(("petsc", "slepc", "yaml")) or base == "mpi.h" or HDF5_RE.match(base)):
        out.append(f"{rel}: includes {shown}: a libc-only header (surrogates/nn includes it) includes system headers of libc only")
    dst = resolve(rel, kind, name)
    if dst is None:
        return out  # a system header
    if rel in LIBC_ONLY:
        out.append(f"{rel}: includes {shown} ({dst}): a libc-only header (surrogates/nn includes it) includes no project header")
        return out
    if src == ("surrogates", "nn") and dst in LIBC_ONLY:
        return out  # the one exception to "the engine depends on nothing of ours"
    if kind == "<":
        out.append(f"{rel}: includes <{name}>, the project header {dst}: include project headers with quotes")
    to = module_of(dst)
    if not allowed(src, to):
        out.append(f"{rel}: includes {shown} ({dst}) of {to[0]}/{to[1]}: {src[0]}/{src[1]} may not depend on it")
    elif to != src and not public(dst):
        out.append(f"{rel}: includes {shown} ({dst}), a private header of {to[0]}/{to[1]}: use the module's public header")
    return out


bad = []
for rel in sorted(sources):
    text = open(os.path.join(ROOT, rel), errors="replace").read()
    for kind, name in inc_re.findall(text):
        bad += check(rel, kind, name)

for b in bad:
    print("layering:", b)
print(f"layering: {len(sources)} files, {len(bad)} forbidden includes")
sys.exit(1 if bad else 0)
