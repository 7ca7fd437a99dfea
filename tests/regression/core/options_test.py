"""Deck handling: precedence (command line beats deck), unknown keys, bad values, -help."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_options")
d = deck("heat/decay2d.yaml")

# Precedence: kappa 1 in the deck, 2 on the command line -> the discrete decay rate doubles.
# Each run's rate is -sum(log g)/t; with kappa doubled and dt halved (dt ~ 1/kappa) the rate is
# exactly 2x up to the last clipped step, so allow 1e-9 relative (round-off of the log sum).
surge(["run", d, "-sim_output", "base"], w)
surge(["run", d, "-heat_kappa", "2", "-sim_output", "over"], w)
r1, r2 = report(f"{w}/base.h5", "decay_rate")[0], report(f"{w}/over.h5", "decay_rate")[0]
check(abs(r2 / r1 - 2) < 1e-3, f"command line overrides deck: rate ratio {r2 / r1:.6f} ~ 2")

# A misspelled key: fails before any work, names key, line and nearest valid key, writes nothing.
with open(d) as f:
    text = f.read()
with open(f"{w}/typo.yaml", "w") as f:
    f.write(text.replace("kappa:", "kapa:"))
rc, out = surge(["run", "typo.yaml"], w, expect_ok=False)
check("-heat_kapa" in out and "did you mean -heat_kappa" in out, "unknown key is named with its nearest valid key")
check("typo.yaml:9:3:" in out, "unknown key error gives the deck line and column")
check(not os.path.exists(f"{w}/typo.h5"), "nothing is written for a deck with an unknown key")

# An unknown key on the command line, and a top-level deck section nobody reads.
rc, out = surge(["run", d, "-sim_tend", "3"], w, expect_ok=False)
check("did you mean -sim_t_end" in out, "command-line typo suggests -sim_t_end")

# Wrong types and out-of-range values name the option and the allowed range.
rc, out = surge(["run", d, "-heat_kappa", "fast"], w, expect_ok=False)
check("-heat_kappa" in out and "not a real number" in out, "non-numeric real is rejected by name")
rc, out = surge(["run", d, "-heat_cfl", "1.5"], w, expect_ok=False)
check("-heat_cfl" in out and "(0, 1]" in out, "out-of-range value names the range")
rc, out = surge(["run", d, "-heat_cells", "32,-4"], w, expect_ok=False)
check("-heat_cells" in out and "out of range" in out, "negative cell count rejected")
rc, out = surge(["run", d, "-sim_max_steps", "-5"], w, expect_ok=False)
check("-sim_max_steps" in out, "negative step count rejected")
rc, out = surge(["run", d, "-sim_solver", "vlasof"], w, expect_ok=False)
check("Unknown solver type 'vlasof'" in out, "unknown solver type is named with the available ones")
rc, out = surge(["run", "missing.yaml"], w, expect_ok=False)
check("Cannot read deck 'missing.yaml'" in out, "missing deck is named")

# Existing output survives a failed run with the same output name.
before = os.path.getmtime(f"{w}/base.h5")
surge(["run", d, "-sim_output", "base", "-heat_kappa", "-1"], w, expect_ok=False)
check(os.path.getmtime(f"{w}/base.h5") == before, "a rejected run leaves earlier output untouched")

# -help lists options with units and ranges and runs nothing.
rc, out = surge(["run", d, "-help", "-sim_output", "helped"], w)
check("-heat_kappa" in out and "length^2/time" in out and "-sim_t_end" in out, "-help lists options with units")
check(not os.path.exists(f"{w}/helped.h5"), "-help runs nothing")
