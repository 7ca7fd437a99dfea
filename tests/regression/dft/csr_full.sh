#!/usr/bin/env bash
# CP2K's KS_CSR_WRITE / S_CSR_WRITE write the FULL matrix unless UPPER_TRIANGULAR T is given. From the
# shipped upper-triangle water matrices this test makes the full files CP2K writes by default (rows in
# order, both triangles, the same 14-digit values) and requires: the same band energy to the last
# printed digit, on 1 and 2 ranks; a perturbed mirror entry refused with one line naming the entry, the line and the
# tolerance; a missing mirror refused naming the entry.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$root/inputs/dft" "$tmp" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
for name in ("water32-KS.csr", "water32-S.csr"):
    ent = {}
    for line in open(f"{src}/{name}"):
        a, b, v = line.split()
        ent[(int(a), int(b))] = v
        ent[(int(b), int(a))] = v
    keys = sorted(ent)
    with open(f"{dst}/{name}", "w") as f:
        f.writelines(f"{a:8d}{b:8d} {ent[(a, b)]}\n" for a, b in keys)
    if name.endswith("KS.csr"):  # one mirror entry off by 1e-6 Hartree (1e-6 of the largest entry); one missing
        bad = [k for k in keys if k[0] > k[1]][10]
        with open(f"{dst}/asym-KS.csr", "w") as f:
            for a, b in keys:
                v = ent[(a, b)]
                if (a, b) == bad:
                    v = repr(float(v) + 1e-6)
                f.write(f"{a:8d}{b:8d} {v}\n")
        miss = [k for k in keys if k[0] > k[1]][20]
        with open(f"{dst}/nomirror-KS.csr", "w") as f:
            f.writelines(f"{a:8d}{b:8d} {ent[(a, b)]}\n" for a, b in keys if (a, b) != miss)
        print(f"perturbed ({bad[0]},{bad[1]}), dropped ({miss[0]},{miss[1]})")
PY
cd "$tmp"
e() { grep -o "E = [-0-9.e+]*" "$1" | head -1 | awk '{print $3}'; }
$SURGE run $root/inputs/dft/water_csr.yaml -sim_output up -dft_ks_csr $root/inputs/dft/water32-KS.csr -dft_s_csr $root/inputs/dft/water32-S.csr > up.log 2>&1
$SURGE run $root/inputs/dft/water_csr.yaml -sim_output full -dft_ks_csr water32-KS.csr -dft_s_csr water32-S.csr > full.log 2>&1
eu=$(e up.log); ef=$(e full.log)
echo "water (32 H2O): upper triangle $eu, full matrix $ef"
[ -n "$eu" ] && [ "$eu" = "$ef" ] || { echo "FAIL: energies differ"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec -n 2 --oversubscribe $SURGE run $root/inputs/dft/water_csr.yaml -sim_output full2 -dft_ks_csr water32-KS.csr -dft_s_csr water32-S.csr > full2.log 2>&1
e2=$(e full2.log); echo "full matrix on 2 ranks $e2"
[ "$e2" = "$ef" ] || { echo "FAIL: 2 ranks differ"; exit 1; }
if $SURGE run $root/inputs/dft/water_csr.yaml -sim_output asym -dft_ks_csr asym-KS.csr -dft_s_csr water32-S.csr > asym.log 2>&1; then echo "FAIL: asymmetric matrix accepted"; exit 1; fi
cat asym.log
grep -q "surge: error: asym-KS.csr:[0-9]*: the matrix is not symmetric: entry" asym.log || { echo "FAIL: asymmetry message"; exit 1; }
[ ! -e asym.h5 ] || { echo "FAIL: a refused run wrote asym.h5"; exit 1; }
if $SURGE run $root/inputs/dft/water_csr.yaml -sim_output nm -dft_ks_csr nomirror-KS.csr -dft_s_csr water32-S.csr > nm.log 2>&1; then echo "FAIL: missing mirror accepted"; exit 1; fi
cat nm.log
grep -q "has no mirror" nm.log || { echo "FAIL: missing-mirror message"; exit 1; }
echo PASS
