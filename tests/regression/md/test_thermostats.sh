#!/usr/bin/env bash
# Thermostats reach their target: LJ liquid (864 atoms), target T* = 1.5, dt 0.0025, 2400 steps,
# mean temperature over t >= 1.5 tau within 2% of the target.  Fluctuations: sigma_T/T ~
# sqrt(2/(3N)) = 2.8% per sample, ~90 samples of which ~40 independent (damp 0.1): standard error
# ~0.5% (long runs show no time-step bias of BAOAB's kinetic temperature at the 0.3% level, see
# docs/md.md).
#  - Langevin (BAOAB), started cold (T = 0.1): also E + E_bath (energy given to the bath) must stay
#    within 2e-3 epsilon/atom of its start: the bookkeeping of the O-step is exact up to the
#    integrator's own error.
#  - Nose-Hoover chain, started hot (T = 3): the extended energy must be conserved to 1e-3/atom.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
check() { # log, name, econs tolerance
  /usr/bin/python3 - "$@" <<'PY'
import sys, statistics as st
log, name, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = [l.split() for l in open(log) if l.startswith("md thermo:") and l.split()[2] != "Step"]
T = [float(r[3]) for r in rows if int(r[2]) * 0.0025 >= 1.5]
ec = [float(r[8]) for r in rows]
m, de = st.mean(T), max(abs(x - ec[0]) for x in ec)
print(f"{name}: <T> = {m:.4f} over {len(T)} samples (target 1.5, {100*(m/1.5-1):+.2f}%), sigma_T = {st.stdev(T):.3f}; max |Econs - Econs0| = {de:.2e}/atom (tol {tol})")
assert abs(m / 1.5 - 1) < 0.02, f"{name}: mean temperature off target"
assert de < tol, f"{name}: conserved quantity drifts"
PY
}
common="-md_dt 0.0025 -sim_max_steps 2400 -md_thermo_every 20 -md_damp 0.1"
"$SURGE" run "$root/inputs/md/lj_langevin.yaml" -sim_output l $common -md_ensemble langevin -md_velocity_temperature 0.1 > l.log
check l.log langevin 2e-3
"$SURGE" run "$root/inputs/md/lj_langevin.yaml" -sim_output n $common -md_ensemble nhc -md_velocity_temperature 3.0 > n.log
check n.log nhc 1e-3
