# Helpers for the Vlasov regression tests (sourced). Each test runs in its own scratch directory
# under build/ and reads the numbers the solver's end-of-run report prints (%.17g).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
SURGE=${SURGE:-$ROOT/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
DECKS=$ROOT/inputs/vlasov

scratch() { # scratch NAME: fresh directory, cd into it
  local d=$ROOT/build/test-vlasov/$1
  rm -rf "$d"; mkdir -p "$d"; cd "$d"
}
# field LOGFILE PATTERN N: the N-th whitespace field of the first line matching PATTERN
field() { grep -m1 -- "$2" "$1" | awk -v n="$3" '{print $n}'; }
# final LOGFILE NAME: final value of diagnostic NAME; drift LOGFILE NAME: its relative change
final() { awk -v k="$2" '$1=="vlasov" && $2=="final:" && $3==k {print $4}' "$1"; }
drift() { awk -v k="$2" '$1=="vlasov" && $2=="final:" && $3==k {gsub(/\)/,"",$7); print $7}' "$1"; }
# check WHAT VALUE OP LIMIT: awk comparison of |VALUE| against LIMIT, prints and fails on violation
check() {
  local what=$1 val=$2 op=$3 lim=$4
  # a missing or non-numeric value (report line absent, nan) is a failure, never a silent 0
  if ! [[ "$val" =~ ^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; then echo "FAIL  $what: no numeric value ('$val')"; exit 1; fi
  if awk -v v="$val" -v l="$lim" -v op="$op" 'BEGIN{a=v<0?-v:v; ok=(op=="<")?(a<l):(a>l); exit ok?0:1}'; then
    echo "ok    $what = $val ($op $lim)"
  else
    echo "FAIL  $what = $val (want |value| $op $lim)"; exit 1
  fi
}
# aniso_rate LOGFILE T: decay rate of kinetic_energy_y - kinetic_energy_x over [0, T] (initial values
# recovered from the final ones and their relative change)
aniso_rate() {
  awk -v T="$2" '$3=="kinetic_energy_x"{x=$4; gsub(/\)/,"",$7); x0=x/(1+$7)} $3=="kinetic_energy_y"{y=$4; gsub(/\)/,"",$7); y0=y/(1+$7)}
                 END{print -log((y-x)/(y0-x0))/T}' "$1"
}
# same_final A.log B.log WHAT: the final diagnostics of two runs agree to 1e-12 (relative, absolute below 1)
same_final() {
  paste <(grep "vlasov final:" "$1") <(grep "vlasov final:" "$2") | awk -v what="$3" '
    { a=$4; b=$11; d=a-b; d=d<0?-d:d; s=(a<0?-a:a); s=s>1?s:1; r=d/s; if (r>m) {m=r; k=$3} c++ }
    END { printf "%s: %d diagnostics, max difference %.3e (%s)\n", what, c, m, k; exit (c>=9 && m<1e-12)?0:1 }' || { echo "FAIL  $3"; exit 1; }
}
# conserved LOGFILE NOTE DIRS...: number_elc and kinetic_energy relative drift and momentum_DIR absolute
# change < 1e-12 (NOTE names the energy scale the absolute momentum is compared with)
conserved() {
  local log=$1 note=$2; shift 2
  check "number drift" "$(drift $log number_elc)" "<" 1e-12
  check "energy drift" "$(drift $log kinetic_energy)" "<" 1e-12
  for j in "$@"; do check "momentum_$j change (absolute; $note)" "$(drift $log momentum_$j)" "<" 1e-12; done
}
# ranks_equal R1.log R2.log NAME: the same final diagnostics (names, at least 14) on 1 and 2 ranks, each
# within 1e-12 of max(|value|, |total_energy of R1|) (sums are reordered across ranks, nothing else)
ranks_equal() {
  local etot; etot=$(final "$1" total_energy)
  paste <(grep "vlasov final:" "$1") <(grep "vlasov final:" "$2") | awk -v n="$3" -v E="$etot" '
    $3 != $10 || $4 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || $11 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ { bad++; print "not comparable:", $0 }
    { a=$4; b=$11; d=a-b; d=d<0?-d:d; s=(a<0?-a:a); E=E<0?-E:E; r=d/(s>E?s:E); if (r>m) {m=r; k=$3} c++ }
    END { printf "%s: %d diagnostics, max difference %.3e of the energy scale (%s)\n", n, c, m, k;
          exit (c>=14 && !bad && m<1e-12)?0:1 }' || { echo "FAIL $3: 1 vs 2 ranks"; exit 1; }
}
# growth_vs_root LABEL LOG...: each run's fitted growth rate ('gamma measured G theory T') within 2 %
# (the issue's tolerance) of the dispersion root the report prints
growth_vs_root() {
  local label=$1 f g th; shift
  for f in "$@"; do
    grep "gamma measured" $f
    g=$(awk '/gamma measured/ {print $6}' $f); th=$(awk '/gamma measured/ {print $8}' $f)
    check "$label gamma ($f) vs transverse root $th, relative" "$(awk -v g=$g -v t=$th 'BEGIN{print (g-t)/t}')" "<" 0.02
  done
}
