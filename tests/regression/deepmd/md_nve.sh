#!/bin/bash
# MD driven by a Deep Potential through the md.forces provider "deepmd" (surge run, NVE, 128 atoms).
# Asserts: (a) the step-0 potential energy equals the C API's energy of the same structure to 1e-8
# relative (the provider sees owned atoms + ghosts and returns ghost forces for the engine's reverse
# communication; the C API builds periodic images itself: two routes to one number); (b) energy
# conservation: over 200 velocity-Verlet steps in which the potential energy drops by ~90 eV (the
# unrelaxed structure heats up), the total energy wanders by less than 1% of that drop -- forces
# inconsistent with the energy would show up here at O(100%); (c) the same run on 2 ranks (domain
# decomposition: ghosts from the neighbour rank, ghost forces reverse-communicated) prints the same
# PotEng and TotEng at step 200 to 1e-8 relative; (d) with a second model, md_model_devi_every writes
# DeePMD-kit's model_devi.out (header, 7 columns, a line every 10 steps from step 0, max >= avg >= min),
# the same on 2 ranks to 1e-8 relative, and a run restarted from its step-30 checkpoint drops a line
# the interrupted run wrote past the checkpoint and ends with the uninterrupted run's file.
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
# (d) model deviation output
[ -s $D/pair_model_s7.h5 ] || $SURGE train inputs/deepmd/pair.yaml -deepmd_seed 7 -deepmd_numb_steps 100 -train_output $D/pair_model_s7 > $D/s7.log
DV="-md_deepmd_models $D/pair_model.h5,$D/pair_model_s7.h5 -md_model_devi_every 10 -sim_max_steps 60 -md_thermo_every 0"
$SURGE run inputs/deepmd/pair_md.yaml $DV -md_model_devi_file $D/devi1.out -sim_output $D/devi1 > $D/devi1.log
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE run inputs/deepmd/pair_md.yaml $DV -md_model_devi_file $D/devi2.out -sim_output $D/devi2 > $D/devi2.log
$SURGE run inputs/deepmd/pair_md.yaml $DV -sim_max_steps 30 -md_model_devi_file $D/devir.out -sim_output $D/devir > $D/devir1.log
echo "          40   9.9e+09   9.9e+09   9.9e+09   9.9e+09   9.9e+09   9.9e+09" >> $D/devir.out  # as if written after the checkpoint
$SURGE run inputs/deepmd/pair_md.yaml $DV -md_model_devi_file $D/devir.out -sim_output $D/devir -restart $D/devir.chk.h5 > $D/devir2.log
/usr/bin/python3 - $D <<'PY'
import sys, numpy as np
d = sys.argv[1]
# the write path's kind mark ('# surge-file: model deviation') comes first, then DeePMD-kit's header
lines = open(f"{d}/devi1.out").read().splitlines()
hdr = lines[1].split() if lines and "surge-file: model deviation" in lines[0] else []
a, b, r = (np.loadtxt(f"{d}/{n}.out", ndmin=2) for n in ("devi1", "devi2", "devir"))
print("header:", " ".join(hdr))
print(f"{len(a)} records, steps {a[:, 0].astype(int).tolist()}; max_devi_f {a[:, 4].min():.4f}..{a[:, 4].max():.4f} eV/A")
ok = hdr == ["#", "step", "max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f"]
ok &= a.shape == (7, 7) and (a[:, 0] == np.arange(0, 61, 10)).all()
ok &= bool((a[:, 1] >= a[:, 3]).all() and (a[:, 3] >= a[:, 2]).all() and (a[:, 4] >= a[:, 6]).all() and (a[:, 6] >= a[:, 5]).all() and (a[:, 5] > 0).all())
d2 = np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)) if a.shape == b.shape else np.inf
dr = np.max(np.abs(a - r) / np.maximum(np.abs(a), 1e-300)) if a.shape == r.shape else np.inf
print(f"2 ranks vs 1: max rel. diff {d2:.1e}; restarted at step 30 vs uninterrupted: {dr:.1e} ({len(r)} records)")
ok &= d2 < 1e-8 and dr < 1e-8
print("PASS" if ok else "FAIL"); sys.exit(0 if ok else 1)
PY
