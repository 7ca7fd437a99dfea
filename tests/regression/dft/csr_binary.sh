#!/usr/bin/env bash
# CP2K's BINARY T form of KS_CSR_WRITE / S_CSR_WRITE (Fortran unformatted records, one per entry:
# tests/data/cp2k/README.md). The overlap CP2K wrote in binary (full matrix, 17 digits) against the
# shipped text form (upper triangle, 14 digits) of the same matrix: the same band energy to the
# printed digits (10 significant; the matrices differ by the text's rounding, 5e-15) on 1 and 2 ranks;
# a truncated file and a damaged record marker refused with one line naming the record.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
B=$root/tests/data/cp2k/water32-S.binary.csr
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
head -c 100000 "$B" > cut.csr                 # ends inside record 4167
/usr/bin/python3 -c "
d = bytearray(open('$B', 'rb').read()); d[24 * 99] = 17   # record 100's leading marker
open('marker.csr', 'wb').write(d)"
e() { grep -o "E = [-0-9.e+]*" "$1" | head -1 | awk '{print $3}'; }
D="$root/inputs/dft/water_csr.yaml -dft_ks_csr $root/inputs/dft/water32-KS.csr"
$SURGE run $D -sim_output text -dft_s_csr $root/inputs/dft/water32-S.csr > text.log 2>&1
$SURGE run $D -sim_output bin -dft_s_csr "$B" > bin.log 2>&1
et=$(e text.log); eb=$(e bin.log)
echo "water (32 H2O): S as text $et, S as CP2K BINARY T $eb"
[ -n "$et" ] && [ "$et" = "$eb" ] || { echo "FAIL: energies differ"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec -n 2 --oversubscribe $SURGE run $D -sim_output bin2 -dft_s_csr "$B" > bin2.log 2>&1
e2=$(e bin2.log); echo "binary on 2 ranks $e2"
[ "$e2" = "$eb" ] || { echo "FAIL: 2 ranks differ"; exit 1; }
for c in "cut:record 4167: the file ends inside a record" "marker:record 100: not a CP2K BINARY T record"; do
  f=${c%%:*} want=${c#*:}
  if $SURGE run $D -sim_output $f -dft_s_csr $f.csr > $f.log 2>&1; then echo "FAIL: $f.csr accepted"; exit 1; fi
  cat $f.log
  [ "$(grep -c . $f.log)" = 1 ] && grep -q "surge: error: $f.csr: $want" $f.log || { echo "FAIL: $f message"; exit 1; }
  [ ! -e $f.h5 ] || { echo "FAIL: a refused run wrote $f.h5"; exit 1; }
done
echo PASS
