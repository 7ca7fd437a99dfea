#!/usr/bin/env python3
"""Layers talk through APIs, never through the global options database (docs/architecture.md).

Every option surge reads goes through SgOptions* (src/base/options.c: catalogue, typed parse, range
check) inside the reader's own PetscOptionsBegin block. A direct PetscOptionsGet*/PetscOptionsHasName
call outside src/base/options.c reads some other layer's option behind its back (md deciding "am I
restarting?" from -restart truncated model_devi.out on a restart that came another way): run facts
travel in SgSolverRunInfo instead. The allow-list below names the few that stay, with the reason.
Usage: options_db.py [ROOT]  (exit 1 and one line per direct read)."""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CALL = re.compile(r"\bPetscOptions(Get[A-Za-z]+|HasName)\s*\(")
ALLOW = {
    "src/base/options.c": "the SgOptions getters themselves",
    # the driver layer peeks at its own -sim_solver (read by sim.c, the same layer) to validate an
    # ensemble's contribution before any member is built
    "src/driver/ensemble.c": "the driver's own -sim_solver, before the members exist and for the dataset's physics record",
    # PETSc's own -no_signal_handler: surge's crash handler (which commits or removes BASE.log.tmp)
    # replaces PETSc's, so it must stay out exactly when the user turned PETSc's off
    "src/base/init.c": "PETSc's generic -no_signal_handler, read as PetscInitialize reads it",
    # the fingerprint of a job's effective configuration hashes every option (the deck after the
    # command line's overrides) to decide whether earlier work may be reused; it reads no value for use
    "src/base/fingerprint.c": "the whole database, hashed (SgConfigFingerprint) or recorded as provenance (SgConfigRecord)",
}
bad = []
for top in ("src", "io", "physics", "surrogates"):
    for d, dirs, files in os.walk(os.path.join(ROOT, top)):
        parts = os.path.relpath(d, ROOT).split("/")
        if "build" in parts or "tests" in parts:
            dirs[:] = []
            continue
        for f in files:
            if not f.endswith((".c", ".h", ".cu")):
                continue
            rel = os.path.relpath(os.path.join(d, f), ROOT)
            if rel in ALLOW:
                continue
            for n, line in enumerate(open(os.path.join(d, f), errors="replace"), 1):
                m = CALL.search(line)
                if m:
                    bad.append(f"{rel}:{n}: PetscOptions{m.group(1)} reads the options database directly: use SgOptions* in the module's own block, or take the value through an API (SgSolverRunInfo)")
for b in bad:
    print("options_db:", b)
print(f"options_db: {len(bad)} direct reads of the options database outside {', '.join(sorted(ALLOW))}")
sys.exit(1 if bad else 0)
