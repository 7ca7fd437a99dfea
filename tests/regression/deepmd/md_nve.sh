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
# the interrupted run wrote past the checkpoint and ends with the uninterrupted run's file; (e) the
# model's sel is never exceeded silently: the same structure squeezed to 0.82 of its size (more
# neighbours within rcut than sel [16, 28]) warns once at the first force call and once at the end
# with the neighbours dropped and the most seen (the same on 1 and 2 ranks); the 60-step runs of (d),
# within sel, print no such line. (The 200-step run of (a)-(c) heats up until an atom has 34 B
# neighbours, beyond sel 28 of inputs/deepmd/pair.yaml: it warns, rightly.)
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
# (e) neighbours beyond sel: reported, not silent
/usr/bin/python3 - $D/pair.xyz $D/pair_dense.xyz <<'PY'
import re, sys
L = open(sys.argv[1]).read().splitlines()
s = 0.82  # box 8.2 >= cutoff + skin; about 1.8x the neighbours within rcut
out = [L[0], re.sub(r'Lattice="([^"]*)"', lambda m: 'Lattice="' + " ".join(f"{float(v) * s:.10f}" for v in m.group(1).split()) + '"', L[1])]
out += [" ".join([l.split()[0]] + [f"{float(v) * s:.10f}" for v in l.split()[1:4]]) for l in L[2:]]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
SEL="-md_read_xyz $D/pair_dense.xyz -sim_max_steps 10 -md_thermo_every 0"
$SURGE run inputs/deepmd/pair_md.yaml $SEL -sim_output $D/sel1 > $D/sel1.log 2>&1
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE run inputs/deepmd/pair_md.yaml $SEL -sim_output $D/sel2 > $D/sel2.log 2>&1
/usr/bin/python3 - $D <<'PY'
import re, sys
d = sys.argv[1]
def lines(f):
    return [l for l in open(f"{d}/{f}") if "beyond the model's sel" in l]
w1, w2 = lines("sel1.log"), lines("sel2.log")
print("".join(w1).strip())
pat = r"over the run (\d+) neighbours .* in (\d+) of (\d+) force evaluations; most neighbours around one atom: A (\d+) \(sel 16\), B (\d+) \(sel 28\)"
m1, m2 = (re.search(pat, w[-1]) if len(w) == 2 else None for w in (w1, w2))
ok = bool(m1 and m2) and "so far" in w1[0] and "so far" in w2[0] and "retrain with sel" in w1[-1]
ok = ok and m1.groups() == m2.groups() and int(m1.group(1)) > 0 and int(m1.group(3)) == 11 and max(int(m1.group(4)) - 16, int(m1.group(5)) - 28) > 0
quiet = [f for f in ("devi1.log", "devi2.log") if [l for l in open(f"{d}/{f}") if "beyond the model's sel" in l]]
print(f"squeezed: 1 rank {m1.groups() if m1 else w1}, 2 ranks {m2.groups() if m2 else w2}; runs within sel that warned: {quiet}")
ok = ok and not quiet
print("PASS" if ok else "FAIL"); sys.exit(0 if ok else 1)
PY
