#!/usr/bin/env bash
# Benchmark of physics/dft (figures, never pass/fail on time). From the repository root:
#   bash tests/bench/dft/run.sh [--quick] [--cp2k]
# 1. Time per density-matrix evaluation of diamond Si (Kwon TB) by the submatrix method, 512 -> 8192
#    atoms (cluster 8, pattern of H), 1 rank; fitted exponent t ~ N^p.  8192 atoms again on 2 ranks.
# 2. Dense diagonalisation (LAPACK dsyevd) at 512 and 1000 atoms; crossover size from the fits.
# 3. --cp2k: CP2K 2023.1 LS_SCF NEWTONSCHULZ (EPS_FILTER 1e-5) on SCC-DFTB water, 96 and 768 atoms, vs
#    our submatrix and dense methods on the KS/S matrices CP2K wrote (tests/bench/dft/cp2k_water.sh 1 2;
#    the full scaling to 6,144 atoms, hours with CP2K: bash tests/bench/dft/cp2k_water.sh).
# Writes tests/bench/dft/scaling.dat and prints the figures; docs/dft.md quotes them.
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
if [ "${1:-}" = "--cp2k" ] || [ "${2:-}" = "--cp2k" ]; then
  bench_require_cmd dft cp2k.psmp cp2k
  bench_require_file dft /usr/share/cp2k/DFTB/scc/scc_parameter cp2k-data
fi
make -s build/tests/test_bench_submatrix >/dev/null || { echo "bench dft: cannot build build/tests/test_bench_submatrix (run ./configure first)"; exit 2; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=${BENCH_BIN:-build/tests/test_bench_submatrix}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
out=tests/bench/dft/scaling.dat
sizes="4,4,4 5,5,5 8,8,4 8,8,8 16,8,8"
[ "${1:-}" = "--quick" ] && sizes="4,4,4 8,8,4"
echo "# natoms method ranks seconds_dm seconds_eig maxdim E_per_atom N_per_atom" > $out
for s in $sizes; do
  IFS=, read nx ny nz <<< "$s"
  r=$($B -nx $nx -ny $ny -nz $nz -method submatrix -cluster 8 -reps 2 | grep BENCH)
  echo "$r" | awk '{print $2, $3, 1, $4, $5, $6, $7, $8}' | tee -a $out
done
r=$($MPIEXEC $B -nx 16 -ny 8 -nz 8 -method submatrix -cluster 8 -reps 2 | grep BENCH) && echo "$r" | awk '{print $2, $3, 2, $4, $5, $6, $7, $8}' | tee -a $out
r=$($B -nx 3 -ny 3 -nz 3 -method submatrix -cluster 8 -reps 2 | grep BENCH)
echo "$r" | awk '{print $2, $3, 1, $4, $5, $6, $7, $8}' | tee -a $out
for s in 2,2,2 3,3,3 4,4,4; do
  IFS=, read nx ny nz <<< "$s"
  r=$($B -nx $nx -ny $ny -nz $nz -method dense -reps 2 | grep BENCH)
  echo "$r" | awk '{print $2, $3, 1, $4, $5, $6, $7, $8}' | tee -a $out
done
/usr/bin/python3 - "$out" <<'PY'
import sys, math
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
sub = sorted((int(r[0]), float(r[3])) for r in rows if r[1] == 'submatrix' and r[2] == '1' and int(r[0]) >= 512)
subsmall = sorted((int(r[0]), float(r[3])) for r in rows if r[1] == 'submatrix' and r[2] == '1')
den = sorted((int(r[0]), float(r[3])) for r in rows if r[1] == 'dense')
def fit(p):
    xs = [math.log(n) for n, _ in p]; ys = [math.log(t) for _, t in p]
    mx, my = sum(xs)/len(xs), sum(ys)/len(ys)
    a = sum((x-mx)*(y-my) for x, y in zip(xs, ys)) / sum((x-mx)**2 for x in xs)
    return a, math.exp(my - a*mx)
a, c = fit(sub)
print(f"submatrix: t = {c:.3e} * N^{a:.3f} s  (N = {sub[0][0]}..{sub[-1][0]} atoms; bar: exponent <= 1.1)")
for n, t in sub: print(f"  N = {n:5d}: {t:8.3f} s per density matrix, {1e3*t/n:.3f} ms/atom")
two = [(int(r[0]), float(r[3])) for r in rows if r[1] == 'submatrix' and r[2] == '2']
if two:
    one = dict(sub).get(two[0][0])
    if one: print(f"  N = {two[0][0]} on 2 ranks: {two[0][1]:.3f} s (speed-up {one/two[0][1]:.2f}x over 1 rank)")
if len(den) >= 2:
    ad, cd = fit(den[:2])
    print(f"dense: {', '.join(f'N = {n}: {t:.2f} s' for n, t in den)}; exponent {ad:.2f} between the two smallest")
    # crossover: dense through its two smallest points against the submatrix cost per atom at the
    # smallest submatrix size (linear): cd N^ad = (t/N) N
    n0, t0 = subsmall[0]
    nx = ((t0 / n0) / cd) ** (1.0 / (ad - 1))
    print(f"crossover (dense slower beyond): N = {nx:.0f} atoms")
PY
if [ "${1:-}" = "--cp2k" ] || [ "${2:-}" = "--cp2k" ]; then bash tests/bench/dft/cp2k_water.sh 1 2; fi
