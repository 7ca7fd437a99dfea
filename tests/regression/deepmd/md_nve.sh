#!/bin/bash
# MD driven by a Deep Potential through the md.forces provider "deepmd" (surge run, NVE, 128 atoms).
# Asserts: (a) the step-0 potential energy equals the C API's energy of the same structure to 1e-8
# relative (the provider sees owned atoms + ghosts and returns ghost forces for the engine's reverse
# communication; the C API builds periodic images itself: two routes to one number); (b) energy
# conservation: over 200 velocity-Verlet steps in which the potential energy drops by ~90 eV (the
# unrelaxed structure heats up), the total energy wanders by less than 1% of that drop -- forces
# inconsistent with the energy would show up here at O(100%); (c) the same run on 2 ranks (domain
# decomposition: ghosts from the neighbour rank, ghost forces reverse-communicated) prints the same
# PotEng and TotEng at step 200 to 1e-8 relative.
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
D=build/tmp/deepmd_deck
mkdir -p $D
if [ ! -s $D/pair_model.h5 ]; then
  build/tests/test_deepmd_train data $D > /dev/null
  $SURGE train inputs/deepmd/pair.yaml > $D/one.log
fi
build/tests/test_deepmd_tool xyz $D/pair_valid.h5 0 2 $D/pair.xyz
eapi=$(build/tests/test_deepmd_tool energy $D/pair_model.h5 $D/pair_valid.h5 0 2)
$SURGE run inputs/deepmd/pair_md.yaml > $D/md.log
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE run inputs/deepmd/pair_md.yaml -sim_output $D/pair_md2 > $D/md2.log
python3 - "$eapi" $D/md.log $D/md2.log <<'PY'
import sys
eapi = float(sys.argv[1])
def last(f):
    r = [l.split() for l in open(f) if l.startswith("md thermo:") and l.split()[2] != "Step"][-1]
    return int(r[2]), float(r[4]), float(r[6])
(s1, p1, e1), (s2, p2, e2) = last(sys.argv[2]), last(sys.argv[3])
print(f"step {s1}: 1 rank PotEng {p1:.10f} TotEng {e1:.10f}; 2 ranks {p2:.10f} {e2:.10f}")
rows = [l.split() for l in open(sys.argv[2]) if l.startswith("md thermo:") and l.split()[2] != "Step"]
steps = [int(r[2]) for r in rows]; pe = [float(r[4]) for r in rows]; et = [float(r[6]) for r in rows]
ok = s1 == s2 and abs(p1 - p2) < 1e-8 * abs(p1) and abs(e1 - e2) < 1e-8 * abs(e1)
d0 = abs(pe[0] - eapi) / abs(eapi)
print(f"step-0 PotEng {pe[0]:.10f} vs C API {eapi:.10f}: rel diff {d0:.2e}")
ok &= d0 < 1e-8
drop = max(pe) - min(pe); wander = max(et) - min(et)
print(f"NVE over {steps[-1]} steps: PotEng range {drop:.3f} eV, TotEng range {wander:.4f} eV ({100*wander/drop:.3f}% of it)")
ok &= drop > 10 and wander < 0.01 * drop
print("PASS" if ok else "FAIL"); sys.exit(0 if ok else 1)
PY
