#!/usr/bin/env bash
# MD with the tight-binding provider "tb" (physics/dft) through the md.forces slot: 64 Si atoms,
# NVE from 1000 K, metal units.  Velocity Verlet's energy error over 20 fs must scale as dt^2
# (dt = 1 and 0.5 fs: ratio in [3.2, 4.8]; measured 4.0), which checks the coupling (forces
# consistent with the energy, eV/A -> A/ps^2 conversion, masses).  Fails when no "tb" provider is
# registered (every build registers it: src/cli/register.c).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
if ! "$SURGE" run "$root/inputs/md/si_tb.yaml" -sim_output a -md_dt 0.001 -sim_max_steps 20 -md_thermo_every 1 > a.log 2>&1; then
  if grep -q "no force provider 'tb' is registered" a.log; then echo "FAIL: the tb provider (physics/dft) is not registered in this build"; exit 1; fi
  cat a.log; exit 1
fi
"$SURGE" run "$root/inputs/md/si_tb.yaml" -sim_output b -md_dt 0.0005 -sim_max_steps 40 -md_thermo_every 2 > b.log
e1=$(/usr/bin/python3 "$root/tests/regression/md/energy_error.py" < a.log)
e2=$(/usr/bin/python3 "$root/tests/regression/md/energy_error.py" < b.log)
/usr/bin/python3 - "$e1" "$e2" <<'PY'
import sys
e1, e2 = float(sys.argv[1]), float(sys.argv[2])
print(f"TB Si NVE, max|E-E0| over 20 fs: dt=1 fs {e1:.3e} eV, dt=0.5 fs {e2:.3e} eV (64 atoms), ratio {e1 / e2:.3f} (dt^2 -> 4)")
assert 3.2 <= e1 / e2 <= 4.8, "energy error with TB forces does not scale as dt^2"
PY
