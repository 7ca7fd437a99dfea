#!/usr/bin/env bash
# Maxwell's equations in DG (field: maxwell), vacuum plane wave Ey = cos(x - c t), Bz = Ey/c, one
# period (inputs/vlasov/planewave.yaml; the species is uncharged, so there is no current).
#  1. convergence: relative L2 error against the L2 projection of the exact wave, N = 16 -> 32 cells,
#     order >= p+1 - 0.15 for p = 1, 2 and both face fluxes (measured central: p=1 2.08, p=2 4.2;
#     DG superconverges towards the projection for p = 2);
#  2. dispersion omega = c k from the phase of the k-mode: relative error < 1e-6 at p = 2, N = 16
#     (measured 2.2e-7);
#  3. central flux: the field energy is conserved up to the SSP-RK3 error, which is third order in dt
#     (halving cfl: ratio in [6, 10], measured 8.0); the upwind flux dissipates it (> 10x central).
source "$(dirname "$0")/common.sh"
scratch maxwell_wave
D=$DECKS/planewave.yaml
err() { awk '/relative L2 error/ {print $7}' "$1"; }
for fl in central upwind; do
  for p in 1 2; do
    for N in 16 32; do
      $SURGE run $D -vlasov_order $p -vlasov_cells $N,5 -vlasov_maxwell_flux $fl -sim_output w_${fl}_${p}_$N > w_${fl}_${p}_$N.log 2>&1 || { tail -20 w_${fl}_${p}_$N.log; exit 1; }
    done
    e1=$(err w_${fl}_${p}_16.log); e2=$(err w_${fl}_${p}_32.log)
    ord=$(awk -v a=$e1 -v b=$e2 'BEGIN{print log(a/b)/log(2)}')
    echo "      $fl p=$p: L2 error $e1 -> $e2"
    check "$fl p=$p order (p+1 = $((p + 1)))" "$ord" ">" $(awk -v p=$p 'BEGIN{print p+1-0.15}')
  done
done
check "omega/(c k) - 1, p=2 N=16 central" "$(awk '/omega measured/ {print $14}' w_central_2_16.log | tr -d ')')" "<" 1e-6
$SURGE run $D -vlasov_cfl 0.25 -sim_output half > half.log 2>&1 || { tail -20 half.log; exit 1; }
d1=$(drift w_central_2_16.log field_energy); d2=$(drift half.log field_energy)
echo "      central field-energy drift: cfl 0.5 $d1, cfl 0.25 $d2"
check "central field-energy drift (cfl 0.5)" "$d1" "<" 1e-6
r=$(awk -v a=$d1 -v b=$d2 'BEGIN{print a/b}')
check "central drift ratio when dt halves > 6" "$r" ">" 6
check "central drift ratio when dt halves < 10 (third order: 8)" "$r" "<" 10
check "upwind loses more field energy than central x10" "$(awk -v a=$(drift w_upwind_2_16.log field_energy) -v b=$d1 'BEGIN{a=a<0?-a:a; b=b<0?-b:b; print a/b}')" ">" 10
