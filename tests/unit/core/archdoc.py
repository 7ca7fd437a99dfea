#!/usr/bin/env python3
"""docs/architecture.md stays true of the tree: every folder under physics/, surrogates/, io/, src/ is
named in it (as physics/sst, or in the io/ line of the layer diagram as 'sst'), and it names no PETSc
object PETSc 3.18 lacks (PetscRegressor came in 3.21). Usage: archdoc.py [ROOT]"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
doc = open(os.path.join(ROOT, "docs", "architecture.md")).read()
# io/'s folders are named in the io/ entry of the layer diagram (from its "io/" line to "src/base")
m = re.search(r"\n\s+io/\s(.*?)\n\s+src/base", doc, re.S)
io_entry = m.group(1) if m else ""
bad = []
for top in ("physics", "surrogates", "io", "src"):
    for d in sorted(os.listdir(os.path.join(ROOT, top))):
        if not os.path.isdir(os.path.join(ROOT, top, d)) or d in ("build", "tests") or d.startswith("."):
            continue
        if f"{top}/{d}" not in doc and not (top == "io" and re.search(rf"\b{d}\b", io_entry)):
            bad.append(f"archdoc: {top}/{d} is not in docs/architecture.md: add it to the layer diagram")
for word in ("PetscRegressor",):
    if word in doc:
        bad.append(f"archdoc: docs/architecture.md names {word}, which PETSc 3.18 does not have")
for b in bad:
    print(b)
print(f"archdoc: {len(bad)} problems")
sys.exit(1 if bad else 0)
