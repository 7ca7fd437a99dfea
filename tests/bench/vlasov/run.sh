#!/usr/bin/env bash
# Vlasov DG kernel benchmark (figures, not pass/fail). One rank, one thread.
#
# For 1x1v p=2, 1x2v p=2, 2x2v p=1, 2x2v p=2 serendipity and Vlasov-Maxwell 1x3v p=2 (with and
# without BGK collisions) it runs a few steps with -log_view
# and reports, from the PETSc events VlasovVolume / VlasovSurface / VlasovField:
#   - time per phase-space cell per RHS evaluation (volume + surface), cell-RHS/s and DOF-RHS/s,
#   - the split of a step between volume, surface, field solve and the rest (RK vector ops, ghosts),
#   - the kernels' flop rate (flops counted by the generator) against DGEMM measured here, and their
#     memory traffic against the triad bandwidth measured here (roofs from test_vlasov_roof),
#   - the ratio to gkylzero's per-cell figures on this kind of machine (the anchors page of the design notes).
# Vlasov-Maxwell 2x3v p=1 and p=2 as well (gkylzero 6.2 and 17 us per cell), and 3x3v p=1 (23 us).
# Usage: tests/bench/vlasov/run.sh   (after make tests); ONLY=vm2x3v runs only the cases whose name
# starts with ONLY (and skips the demo deck); REPS=N repetitions, the fastest counts; SURGE=path
# benchmarks another build. The four Vlasov-Poisson cases always run (also under ONLY): they
# calibrate the machine's speed now against the day surge and gkylzero were timed side by side
# (column "cal", see below); CAL=0 skips them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
(cd "$ROOT" && make -s bin/surge build/tests/test_vlasov_roof >/dev/null) || { echo "bench vlasov: cannot build bin/surge and test_vlasov_roof (run ./configure first)"; exit 2; }
SURGE=${SURGE:-$ROOT/bin/surge}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$ROOT/build/bench-vlasov; rm -rf "$W"; mkdir -p "$W"; cd "$W"
D=$ROOT/inputs/vlasov; L=12.566370614359172
"$ROOT/build/tests/test_vlasov_roof" > roof.txt
cat roof.txt
REPS=${REPS:-3} # the machine is shared: every case runs REPS times and the fastest run counts
CAL=${CAL:-1}
run() { # name np cells gkyl_ns args...
  local name=$1 np=$2 cells=$3 gk=$4; shift 4
  [[ "$name" == "${ONLY:-}"* ]] || { [ "$CAL" = 1 ] && [[ "$name" != vm* ]]; } || return 0
  for r in $(seq $REPS); do
    "$SURGE" run "$@" -sim_field_every 0 -sim_diag_every 100000000 -vlasov_fit none -log_view -sim_output "$name" > "$name.$r.log" 2>&1 ||
      { grep "surge: error" "$name.$r.log"; echo "bench vlasov: case $name failed (log: $W/$name.$r.log)"; exit 1; }
  done
  echo "$name $np $cells $gk" > "$name.meta"
}
run 1x1v_p2 8 4096 170 $D/landau.yaml -vlasov_cells 64,64 -sim_max_steps 300
run 1x2v_p2 20 4096 390 $D/landau.yaml -vlasov_vdim 2 -vlasov_cells 16,16,16 -vlasov_lower 0,-6,-6 -vlasov_upper $L,6,6 -sim_max_steps 60
run 2x2v_p1 16 16384 870 $D/landau2d.yaml -vlasov_order 1 -vlasov_cells 8,8,16,16 -sim_max_steps 30
run 2x2v_p2 48 16384 2900 $D/landau2d.yaml -vlasov_order 2 -vlasov_cells 8,8,16,16 -sim_max_steps 10
# Vlasov-Maxwell 1x3v p=2 (gkylzero 2.9 us per
# cell for its Vlasov-Maxwell update), collisionless, with BGK and with LBO
VM="$D/weibel.yaml -vlasov_vdim 3 -vlasov_cells 8,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper 15.707963267948966,1,1,1 -vlasov_elc_drift 0,0.3,0"
run vm1x3v_p2 48 8000 2900 $VM -sim_max_steps 10
run vm1x3v_p2_bgk 48 8000 2900 $VM -vlasov_collisions bgk -vlasov_elc_nu 0.05 -sim_max_steps 3
run vm1x3v_p2_lbo 48 8000 2900 $VM -vlasov_collisions lbo -vlasov_elc_nu 0.05 -sim_max_steps 3
# Vlasov-Maxwell 2x3v (the Weibel physics with a y direction): gkylzero 6.2 us (p=1), 17 us (p=2)
VM2="$D/weibel.yaml -vlasov_cdim 2 -vlasov_vdim 3 -vlasov_lower 0,0,-1,-1,-1 -vlasov_upper 15.707963267948966,6,1,1,1 -vlasov_maxwell_k 0.4,0 -vlasov_elc_drift 0,0.3,0"
run vm2x3v_p1 32 16000 6200 $VM2 -vlasov_order 1 -vlasov_cells 4,4,10,10,10 -sim_max_steps 6
run vm2x3v_p2 112 8000 17000 $VM2 -vlasov_order 2 -vlasov_cells 4,2,10,10,10 -sim_max_steps 3
run vm2x3v_p1_bgk 32 16000 6200 $VM2 -vlasov_order 1 -vlasov_cells 4,4,10,10,10 -vlasov_collisions bgk -vlasov_elc_nu 0.05 -sim_max_steps 2
run vm2x3v_p1_lbo 32 16000 6200 $VM2 -vlasov_order 1 -vlasov_cells 4,4,10,10,10 -vlasov_collisions lbo -vlasov_elc_nu 0.05 -sim_max_steps 2
# Vlasov-Maxwell 3x3v p=1 (the Weibel physics with y and z directions; all of v folded on each rank):
# gkylzero 23 us per cell
VM3="$D/weibel.yaml -vlasov_cdim 3 -vlasov_vdim 3 -vlasov_order 1 -vlasov_lower 0,0,0,-1,-1,-1 -vlasov_upper 15.707963267948966,6,6,1,1,1 -vlasov_maxwell_k 0.4,0,0 -vlasov_elc_drift 0,0.3,0"
run vm3x3v_p1 64 16000 23000 $VM3 -vlasov_cells 4,2,2,10,10,10 -sim_max_steps 3
run vm3x3v_p1_lbo 64 16000 23000 $VM3 -vlasov_cells 4,2,2,10,10,10 -vlasov_collisions lbo -vlasov_elc_nu 0.05 -sim_max_steps 1
# the demo problem end to end: gkylzero runs it (32x32, p=2) at 4.45 s for 8489 steps = 0.524 ms/step
[ -n "${ONLY:-}" ] || for r in $(seq $REPS); do "$SURGE" run $D/landau.yaml -sim_field_every 0 -sim_output demo > demo.$r.log 2>&1; done
/usr/bin/python3 - <<'PY'
import re, glob
roof = dict(l.split()[:2] for l in open('roof.txt'))
bw, gf = float(roof['triad_GBs']), float(roof['dgemm_GFlops'])
def ev1(log, name):
    for l in open(log):
        f = l.split()
        if f and f[0] == name:
            return int(f[1]), float(f[3]), float(f[5])  # count, time, flops
    if name == 'VlasovCollisions': return 0, 0.0, 0.0  # collisionless run
    raise SystemExit('no event %s in %s' % (name, log))
def ev(name_prefix, name):  # fastest repetition, judged by the whole step time
    logs = sorted(glob.glob(name_prefix + '.*.log'))
    best = min(logs, key=lambda l: ev1(l, 'SgSolverStep')[1])
    return ev1(best, name)
# Machine speed now: gkylzero's figures were taken on a quiet machine, this one is shared. On
# 2026-11-25 surge's Vlasov-Poisson update was timed side by side with gkylzero's (ANCHORS.md, load
# 0.6-0.8): 1x1v p=2 42 ns, 1x2v p=2 89, 2x2v p=1 122, 2x2v p=2 494 ns per cell-RHS. Their kernels
# are unchanged since (generated 2026-11-21; the sweep around them gained the velocity split on
# 11-29), so the geometric mean of (time now / time then) over these cases estimates how much slower
# this machine runs now on the same kind of code; "cal" divides our time by it. (It replaces a DGEMM
# probe, "adj", that read 10-52 GFLOP/s on this machine within a day: a BLAS call's speed under
# sharing says little about these kernels'.)
ref1125 = {'1x1v_p2': 42.0, '1x2v_p2': 89.0, '2x2v_p1': 122.0, '2x2v_p2': 494.0}
def cellns(name, cells):
    n, tv, _ = ev(name, 'VlasovVolume'); _, ts, _ = ev(name, 'VlasovSurface')
    return 1e9 * (tv + ts) / (n * cells)
import math
slow = [cellns(k, int(open(k + '.meta').read().split()[2])) / v for k, v in ref1125.items() if glob.glob(k + '.meta')]
load = math.exp(sum(math.log(x) for x in slow) / len(slow)) if slow else float('nan')
print('\n%-8s %5s %7s | %8s %8s %8s | %9s %9s | %6s %6s %6s %6s | %7s %7s | %6s %6s' % (
    'case', 'DOF', 'cells', 'vol ns', 'surf ns', 'ns/cell', 'cell/s', 'DOF/s', 'vol%', 'surf%', 'fld%', 'rest%',
    'GF/s', 'GB/s', 'gkyl', 'cal'))
coll = []
for meta in sorted(glob.glob('*.meta')):
    name, np_, cells, gk = open(meta).read().split(); np_, cells, gk = int(np_), int(cells), float(gk)
    log = name
    n, tv, fv = ev(log, 'VlasovVolume'); _, ts, fs = ev(log, 'VlasovSurface'); _, tf, _ = ev(log, 'VlasovField')
    _, tstep, _ = ev(log, 'SgSolverStep'); _, tc, _ = ev(log, 'VlasovCollisions')
    cr = n * cells  # cell-RHS evaluations
    coll.append('%-14s collisions %5.1f%% of a step, %8.1f ns per cell-RHS; memory %d B per phase-space cell (%d vectors of %d DOF)' % (
        name, 100 * tc / tstep, 1e9 * tc / cr, (6 if tc else 5) * 8 * np_, 6 if tc else 5, np_))
    ns = 1e9 * (tv + ts) / cr
    # minimum memory traffic of the two sweeps: read f, read+write rhs, per sweep (doubles)
    gbs = 6 * np_ * 8 * cr / (tv + ts) / 1e9
    cal = '%5.2fx' % (load * gk / ns) if slow else '    -'  # CAL=0: no VP cases, no calibration
    print('%-8s %5d %7d | %8.1f %8.1f %8.1f | %9.3g %9.3g | %5.1f%% %5.1f%% %5.1f%% %5.1f%% | %7.2f %7.2f | %5.2fx %s' % (
        name, np_, cells, 1e9 * tv / cr, 1e9 * ts / cr, ns, 1e9 / ns, np_ * 1e9 / ns,
        100 * tv / tstep, 100 * ts / tstep, 100 * tf / tstep, 100 * (tstep - tv - ts - tf) / tstep,
        (fv + fs) / (tv + ts) / 1e9, gbs, gk / ns, cal))
print('(rest% includes the collision operator; its share and the memory per cell:)')
for l in coll: print(l)
print('\nroofs measured now: triad %.2f GB/s, DGEMM %.2f GFLOP/s (one core)' % (bw, gf))
print('GF/s = kernel flops (generator count) / kernel time; GB/s = 6 np doubles per cell-RHS / kernel time;')
print('gkyl = gkylzero ns per cell-RHS (ANCHORS.md; 2x2v: its hybrid p=1 basis, 24 DOF) / ours: >1 means we are faster;')
if slow:
    print('cal = the same ratio with our time divided by the machine slow-down %.2f = geometric mean of (Vlasov-Poisson ns now / on 2026-11-25)' % load)
    print('    over %d case(s): %s' % (len(slow), ' '.join('%.2f' % x for x in slow)))
else:
    print('cal: not computed (CAL=0: the Vlasov-Poisson calibration cases did not run)')
def demo(fn):
    t = open(fn).read()
    return int(re.findall(r'step\s+(\d+)\s+t', t)[-1]), float(re.findall(r'wall ([0-9.]+)s', t)[-1]), t
if not glob.glob('demo.*.log'): raise SystemExit(0)  # ONLY= set: no demo run
steps, wall, txt = min((demo(f) for f in glob.glob('demo.*.log')), key=lambda x: x[1])
print('\ndemo deck (Landau 32x32 p=2, t=25): %d steps in %.2f s wall = %.3f ms/step; gkylzero 0.524 ms/step -> %.2fx (cal %.2fx)' % (
    steps, wall, 1e3 * wall / steps, 0.524 / (1e3 * wall / steps), load * 0.524 / (1e3 * wall / steps)))
for l in txt.splitlines():
    if 'fit landau: gamma' in l or 'fit landau: omega' in l: print(l)
PY
