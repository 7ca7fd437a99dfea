#!/usr/bin/env bash
# CP2K (Debian cp2k 2023.1) LS_SCF on SCC-DFTB water vs our submatrix method on the same matrices.
#   [MAXSCF=2] [CLUSTER=8] bash tests/bench/dft/cp2k_water.sh [NREP]   (NREP=1: 96 atoms, NREP=2: 768 atoms; default 1)
# For each CP2K sign method (NEWTONSCHULZ, SUBMATRIX) at EPS_FILTER 1e-5 it runs the SCF on 1 rank,
# takes the average time of CP2K's routine density_matrix_sign (one density matrix from a KS matrix)
# from its timing report, and then times our evaluation (S^-1/2 and the sign function, both by
# submatrices, eps_filter 1e-5, molecular blocks) on the KS and S matrices CP2K wrote, with the
# dense result as the accuracy reference.  Prints core-ms per atom and the energy errors.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
NREP=${1:-1}
SURGE=${SURGE:-$root/bin/surge}
command -v cp2k.psmp > /dev/null || { echo "cp2k not installed (apt-get install cp2k): skipped"; exit 0; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
natoms=$((96 * NREP * NREP * NREP))
cp $root/inputs/dft/cp2k/water32.xyz $w/
for sign in NEWTONSCHULZ SUBMATRIX; do
  sed -e "s/\${NREP}/$NREP/g; s#\${DFTBDIR}#/usr/share/cp2k/DFTB/scc#; s/\${EPS}/1.0E-5/; s/\${SIGN}/$sign/; s/\${MAXSCF}/${MAXSCF:-2}/" $root/inputs/dft/cp2k/water_ls.inp | grep -v '^@SET' > $w/$sign.inp
  (cd $w && cp2k.psmp -i $sign.inp -o $sign.out)
  t=$(awk '$1 == "density_matrix_sign" {print $6 / $2; exit}' $w/$sign.out)
  e=$(grep "ENERGY| Total FORCE_EVAL" $w/$sign.out | awk '{print $NF}')
  echo "CP2K $sign: $t s per density matrix ($(awk -v t=$t -v n=$natoms 'BEGIN{printf "%.2f", 1e3*t/n}') core-ms/atom), E = $e Ha"
  eval "t_$sign=$t"
done
ks=$(ls $w/*KS*.csr | head -1); s=$(ls $w/*-S_*.csr | head -1)
cd $w
$SURGE run $root/inputs/dft/water_csr.yaml -sim_output d -dft_ks_csr $ks -dft_s_csr $s -dft_method dense > d.log
$SURGE run $root/inputs/dft/water_csr.yaml -sim_output s -dft_ks_csr $ks -dft_s_csr $s -dft_cluster ${CLUSTER:-8} > s.log
ed=$(grep -o "E = [-0-9.e+]*" d.log | awk '{print $3}'); es=$(grep -o "E = [-0-9.e+]*" s.log | awk '{print $3}')
td=$(grep -o "[0-9.]* s (dense)" d.log | awk '{print $1}'); ts=$(grep -o "[0-9.]* s (submatrix)" s.log | awk '{print $1}')
awk -v ed=$ed -v es=$es -v td=$td -v ts=$ts -v n=$natoms -v tns=$t_NEWTONSCHULZ -v tsm=$t_SUBMATRIX 'BEGIN {
  printf "surge dense: %.3f s (%.2f core-ms/atom); surge submatrix eps 1e-5: %.3f s (%.2f core-ms/atom), |dE| vs dense %.4f meV/atom\n", td, 1e3*td/n, ts, 1e3*ts/n, (es-ed<0?ed-es:es-ed)*27211.386/n;
  printf "ratio CP2K time / surge submatrix time: NEWTONSCHULZ %.2f, SUBMATRIX %.2f (> 1: surge faster)\n", tns/ts, tsm/ts }'
