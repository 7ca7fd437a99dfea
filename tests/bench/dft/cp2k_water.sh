#!/usr/bin/env bash
# Where the submatrix method pays: one density matrix of SCC-DFTB liquid water from its Kohn-Sham
# matrix, by CP2K 2023.1 LS_SCF NEWTONSCHULZ (Debian cp2k), by surge's submatrix method and by surge's
# dense diagonalisation, on the same matrices, 96 to 6,144 atoms, 1 rank each, niced.
#   bash tests/bench/dft/cp2k_water.sh [SIZE ...]
#   SIZE: N (N x N x N) or AxBxC replications of CP2K's 32-H2O cell (9.8528 A); default
#         "1 2x1x1 2x2x1 2 2x2x3 3 4" = 96, 192, 384, 768, 1,152, 2,592, 6,144 atoms.
# Environment: EPS (EPS_FILTER of CP2K and eps_filter of surge, 1e-5), PRECISION (surge submatrix
#   factorisations, single), REPS (surge repetitions, median, 3), MAXSCF (CP2K SCF steps, 2),
#   RANKS (surge ranks, 1), DENSE_MAX (largest atom count for surge dense, 6144), ERR_MAX (largest
#   atom count for CP2K's reference run at EPS_FILTER 1e-9, 768), WORK (kept CP2K outputs and
#   matrices, build/bench/dft_water; CP2K is rerun only where its output is missing, or with FORCE=1).
# Per size:
#  1. CP2K (1 rank): time per density matrix = the average of its routine density_matrix_sign (wall:
#     S^-1/2 (KS - mu S) S^-1/2, the sign iteration, P = S^-1/2 (I - sign)/2 S^-1/2 and the mu
#     search; S^-1/2 itself is made once per geometry, ls_scf_init_matrix_S, and not counted); CPU
#     estimate = CP2K's user+sys time x (density_matrix_sign wall / CP2K wall) / calls.  It writes
#     the final KS and S matrices (CSR).
#  2. Equal error: the error of a density matrix is the energy it gives minus the exact one, per
#     atom.  CP2K: the first SCF energy (the density matrix of the same initial-guess KS matrix) at
#     EPS_FILTER $EPS minus the one at EPS_FILTER 1e-9 (idempotent to 4e-9: exact), sizes up to
#     ERR_MAX.  surge: 2 Tr(P H) of the submatrix P minus that of the dense P, on CP2K's KS and S.
#  3. surge (bench driver build/tests/test_bench_water): dense = the generalised eigenproblem of the
#     whole pair (H, S) with P formed; submatrix = the pair per molecule, eps_filter $EPS, $PRECISION.
#     Median wall and CPU seconds of $REPS evaluations (dense above 3,000 atoms: one).
# Prints a table and the ratios; updates tests/bench/dft/water_scaling.dat (the rows of the sizes measured
# now are replaced, the others kept; surge rows on RANKS > 1 are labelled _rN) (plot: plot_water.py).
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/tests/bench/require.sh"
DFTB=/usr/share/cp2k/DFTB/scc
bench_require_cmd dft/cp2k_water.sh cp2k.psmp cp2k
bench_require_file dft/cp2k_water.sh $DFTB/scc_parameter cp2k-data
make -s -C "$root" bin/surge build/tests/test_bench_water > /dev/null || { echo "cp2k_water.sh: cannot build build/tests/test_bench_water (run ./configure first)" >&2; exit 2; }
SIZES=${*:-1 2x1x1 2x2x1 2 2x2x3 3 4}
EPS=${EPS:-1e-5} PREC=${PRECISION:-single} REPS=${REPS:-3} MAXSCF=${MAXSCF:-2} RANKS=${RANKS:-1}
DENSE_MAX=${DENSE_MAX:-6144} ERR_MAX=${ERR_MAX:-768}
WORK=${WORK:-$root/build/bench/dft_water}
mkdir -p "$WORK"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=$root/build/tests/test_bench_water
dat=$root/tests/bench/dft/water_scaling.dat
fail() { echo "cp2k_water.sh: $*" >&2; exit 1; }
surge() { if [ "$RANKS" -gt 1 ]; then nice -n 5 mpiexec -n "$RANKS" --oversubscribe "$B" "$@"; else nice -n 5 "$B" "$@"; fi; }
# cp2k TAG NX NY NZ EPS MAXSCF WRITE: run CP2K unless its finished output is kept
cp2k() {
  local tag=$1
  if [ -n "${FORCE:-}" ] || ! grep -q "PROGRAM ENDED" "$WORK/$tag.out" 2> /dev/null; then
    sed -e "s/\${NX}/$2/g; s/\${NY}/$3/g; s/\${NZ}/$4/g; s#\${DFTBDIR}#$DFTB#; s/\${EPS}/$5/; s/\${SIGN}/NEWTONSCHULZ/; s/\${MAXSCF}/$6/; s/PROJECT water/PROJECT $tag/" \
      "$root/inputs/dft/cp2k/water_ls.inp" > "$WORK/$tag.inp"
    [ "$7" = 1 ] || sed -i '/&PRINT/,/&END PRINT/d' "$WORK/$tag.inp"
    cp "$root/inputs/dft/cp2k/water32.xyz" "$WORK/"
    echo "  running: (cd $WORK && nice -n 5 cp2k.psmp -i $tag.inp -o $tag.out)" >&2
    (cd "$WORK" && /usr/bin/time -f "%U %S %e" -o "$tag.cpu" nice -n 5 cp2k.psmp -i "$tag.inp" -o "$tag.out") || fail "CP2K failed: see $WORK/$tag.out"
  fi
}
scf1() { awk '$1 == "SCF" && $2 == 1 {print $3; exit}' "$WORK/$1.out"; }
new=$(mktemp); trap 'rm -f "$new"' EXIT
sfx=; [ "$RANKS" -le 1 ] || sfx=_r$RANKS
printf "%7s | %-28s | %9s | %9s | %-s\n" atoms method "wall s" "CPU s" "|dE| meV/atom vs exact"
for size in $SIZES; do
  case $size in *x*x*) IFS=x read nx ny nz <<< "$size" ;; *) nx=$size ny=$size nz=$size ;; esac
  n=$((96 * nx * ny * nz)) tag=w${nx}x${ny}x${nz}
  cp2k "$tag-ns" $nx $ny $nz "$EPS" "$MAXSCF" 1
  out=$WORK/$tag-ns.out
  read calls tdm <<< "$(awk '$1 == "density_matrix_sign" {print $2, $6; exit}' "$out")"
  twall=$(awk '$1 == "CP2K" && $2 == 1 {print $6; exit}' "$out")
  [ -n "${tdm:-}" ] && [ -n "${twall:-}" ] && [ -s "$WORK/$tag-ns.cpu" ] || fail "no density_matrix_sign timing in $out (the CP2K run did not finish?)"
  read wns cns <<< "$(awk -v c=$calls -v t=$tdm -v w=$twall '{print t / c, ($1 + $2) * t / w / c}' "$WORK/$tag-ns.cpu")"
  awk -v w=$wns 'BEGIN { exit !(w > 0) }' || fail "CP2K's density_matrix_sign time in $out is not positive"
  errns=-
  if [ $n -le "$ERR_MAX" ]; then
    cp2k "$tag-ref" $nx $ny $nz 1e-9 1 0
    e1=$(scf1 "$tag-ns") e0=$(scf1 "$tag-ref")
    [ -n "$e1" ] && [ -n "$e0" ] || fail "no first SCF energy in $out or $WORK/$tag-ref.out"
    errns=$(awk -v a=$e1 -v b=$e0 -v n=$n 'BEGIN { d = a - b; printf "%.5f", (d < 0 ? -d : d) / n * 27211.386 }')
  fi
  printf "%7d | %-28s | %9.3f | %9.3f | %s\n" $n "CP2K NEWTONSCHULZ $EPS" "$wns" "$cns" "$errns (vs EPS_FILTER 1e-9)"
  echo "$n cp2k_ns $wns $cns $errns" >> "$new"
  ks=$WORK/$tag-ns-KS_SPIN_1-1_0.csr s=$WORK/$tag-ns-S_SPIN_1-1_0.csr
  [ -s "$ks" ] && [ -s "$s" ] || fail "CP2K wrote no KS/S matrices ($ks)"
  ed=
  if [ $n -le "$DENSE_MAX" ]; then
    dr=$REPS; [ $n -le 3000 ] || dr=1 # dense at 6,144 atoms: ~15 CPU minutes, once
    r=$(surge -ks "$ks" -s "$s" -method dense -reps "$dr" | grep '^BENCH') || fail "surge dense failed on $ks"
    read wd cdn ed <<< "$(echo "$r" | awk '{print $5, $6, $7}')"
    printf "%7d | %-28s | %9.3f | %9.3f | %s\n" $n "surge dense" "$wd" "$cdn" "0 (the reference)"
    echo "$n surge_dense$sfx $wd $cdn 0" >> "$new"
  fi
  r=$(surge -ks "$ks" -s "$s" -eps "$EPS" -precision "$PREC" -reps "$REPS" | grep '^BENCH') || fail "surge submatrix failed on $ks"
  read ws cs es maxn <<< "$(echo "$r" | awk '{print $5, $6, $7, $14}')"
  errs=$( [ -n "$ed" ] && awk -v a=$es -v b=$ed -v n=$n 'BEGIN { d = a - b; printf "%.5f", (d < 0 ? -d : d) / n * 27211.386 }' || echo -)
  printf "%7d | %-28s | %9.3f | %9.3f | %s\n" $n "surge submatrix $EPS $PREC" "$ws" "$cs" "$errs (vs dense; largest submatrix $maxn)"
  echo "$n surge_submatrix$sfx $ws $cs $errs" >> "$new"
  awk -v a=$wns -v b=$ws -v c=$cns -v d=$cs 'BEGIN { printf "        CP2K NEWTONSCHULZ / surge submatrix: %.1fx (wall), %.1fx (CPU)\n", a / b, c / d }'
  [ -z "$ed" ] || awk -v a=$wd -v b=$ws -v c=$cdn -v d=$cs 'BEGIN { printf "        surge dense / surge submatrix:        %.2fx (wall), %.2fx (CPU)\n", a / b, c / d }'
done
# the rows measured now replace those of the same size and method
{
  echo "# natoms method wall_s cpu_s err_meV_per_atom   (tests/bench/dft/cp2k_water.sh, last run $(date -u +%F): EPS $EPS, surge $PREC; err - = not measured)"
  { awk 'NR == FNR {seen[$1 " " $2] = 1; next} !/^#/ && !(($1 " " $2) in seen)' "$new" "$dat" 2> /dev/null || true; cat "$new"; } | sort -n -k1,1 -s
} > "$dat.tmp" && mv "$dat.tmp" "$dat"
# crossover of dense and submatrix (CPU): log-log interpolation between the bracketing sizes
/usr/bin/python3 - "$dat" <<'PY'
import sys, math
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
d = {int(r[0]): float(r[3]) for r in rows if r[1] == 'surge_dense'}
s = {int(r[0]): float(r[3]) for r in rows if r[1] == 'surge_submatrix'}
n = sorted(set(d) & set(s))
for a, b in zip(n, n[1:]):
    ra, rb = math.log(d[a] / s[a]), math.log(d[b] / s[b])
    if ra < 0 <= rb:
        x = math.exp(math.log(a) + (math.log(b) - math.log(a)) * (-ra) / (rb - ra))
        print(f"crossover (CPU): the submatrix method is faster than dense from {x:.0f} atoms (between {a} and {b})")
        break
else:
    print("crossover (CPU): " + ("submatrix faster at every size measured" if n and d[n[0]] > s[n[0]] else "not within the sizes measured"))
PY
echo "wrote $dat"
