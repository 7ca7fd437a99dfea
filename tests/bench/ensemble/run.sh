#!/bin/bash
# surge ensemble throughput with members of uneven cost (inputs/heat/ensemble_uneven.yaml: 16
# members whose cost spans 40x) on 2 ranks = 2 groups. Prints members per hour, the idle fraction
# of the groups with surge's dynamic hand-out, and -- from the per-member times the run recorded in
# its markers -- the idle fraction a static round-robin assignment of the same members would have
# had. Figures, not pass/fail.
set -e
cd "$(dirname "$0")/../../.."
make -s bin/surge >/dev/null || { echo "bench ensemble: cannot build bin/surge (run ./configure first)"; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
W=build/bench/ensemble
rm -rf $W && mkdir -p $W
out=$(cd $W && mpiexec -n 2 --oversubscribe ../../../bin/surge ensemble ../../../inputs/heat/ensemble_uneven.yaml -ensemble_output uneven 2>&1)
echo "$out" | grep "surge ensemble:"
/usr/bin/python3 - $W/uneven.members <<'PY'
import glob, sys
t = {}
for f in glob.glob(f"{sys.argv[1]}/*.done"):
    w = next(l for l in open(f) if not l.startswith("#")).split()  # after the "# surge-file:" line
    t[int(w[1])] = float(w[3])
times = [t[m] for m in sorted(t)]
work = sum(times)
rr = [sum(times[g::2]) for g in range(2)]        # static round-robin: member m on group m % 2
dyn = [0.0, 0.0]
for x in times:                                    # members taken in order by whichever group is free
    g = dyn.index(min(dyn)); dyn[g] += x
print(f"member times: min {min(times):.3f}s, max {max(times):.3f}s (ratio {max(times)/min(times):.1f}), total {work:.2f}s")
print(f"static round-robin: makespan {max(rr):.2f}s, idle fraction {1 - work / (2 * max(rr)):.3f}")
print(f"dynamic hand-out (replayed from the same times): makespan {max(dyn):.2f}s, idle fraction {1 - work / (2 * max(dyn)):.3f}")
PY
