#!/usr/bin/env bash
# Vlasov-Maxwell in three configuration dimensions (3x3v serendipity p = 1; issue 39), on the Weibel
# deck's physics (two beams +-0.3 c, vt = 0.1, c = 1, a seed B cos(k x), central fluxes), fixed dt so
# grids of different shape take the same steps:
#  - 3x3v uniform in y and z (2 cells each, Ly = Lz = 1) = the 1x3v p = 1 run: every final diagnostic
#    to 1e-12 (the y and z fluxes of uniform data cancel; only summation order differs);
#  - the same problem turned by the cyclic permutations x -> y -> z -> x and x -> z -> y -> x (k along
#    y or z, beams along v_z or v_x, seed B_x or B_y): number, energies, l2 and min f equal the x run
#    to 1e-12 of the quantity (of the total energy for the field energies, some of which are ~1e-11)
#    with the field components permuted alike (checks every x_d and v_j kernel and every
#    Maxwell face direction);
#  - split dimensions (docs/vlasov.md "Which dimensions are split"): the 1-rank runs use the default
#    rule (the largest dimensions: vx, vy, vz here, so x, y, z are folded and periodic inside the
#    dof). The z run again on 2 ranks with a forced configuration split (split_dims x, y, z; z cut)
#    and with a forced velocity split (split_dims z, vx, vy; vx cut, so the current and charge are
#    summed over velocity ranks): every final diagnostic to 1e-12 of the energy scale (sums are
#    reordered, nothing else: the differences are ~1e-14);
#  - 1x3v with a forced split of vz (folded under the former rule; split_dims x, vy, vz, vz cut, 2
#    ranks) = the 1-rank run to 1e-12, and its restart (2 steps, then -restart to 3) identical bit
#    for bit; restarting a checkpoint with other split dimensions is refused (the stored f is in
#    the split's order).
# ~7 s of CPU (the set-up's configuration projection is done once per configuration cell).
source "$(dirname "$0")/common.sh"
scratch maxwell_3d
L=15.707963267948966
W="$DECKS/weibel.yaml -sim_t_end 1e9 -sim_field_every 0 -vlasov_fit none -vlasov_order 1 -vlasov_vdim 3 -sim_dt 0.05 -sim_max_steps 3"
X="$W -vlasov_cdim 3 -vlasov_lower 0,0,0,-1,-1,-1"
$SURGE run $W -vlasov_cells 6,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05 -sim_output a1 > a1.log 2>&1 || { tail -20 a1.log; exit 1; }
$SURGE run $X -vlasov_cells 6,2,2,10,10,10 -vlasov_upper $L,1,1,1,1,1 -vlasov_maxwell_k 0.4,0,0 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05 -sim_output a3 > a3.log 2>&1 || { tail -20 a3.log; exit 1; }
same_final a1.log a3.log "3x3v (uniform in y, z) vs 1x3v"
E=$(final a3.log total_energy)
# x -> y -> z -> x: k along y, beams along v_z, seed B_x
$SURGE run $X -vlasov_cells 2,6,2,10,10,10 -vlasov_upper 1,$L,1,1,1,1 -vlasov_maxwell_k 0,0.4,0 -vlasov_elc_drift 0,0,0.3 -vlasov_maxwell_B0 0.05,0,0 -sim_output y3 > y3.log 2>&1 || { tail -20 y3.log; exit 1; }
# x -> z -> y -> x: k along z, beams along v_x, seed B_y
$SURGE run $X -vlasov_cells 2,2,6,10,10,10 -vlasov_upper 1,1,$L,1,1,1 -vlasov_maxwell_k 0,0,0.4 -vlasov_elc_drift 0.3,0,0 -vlasov_maxwell_B0 0,0.05,0 -sim_output z3 > z3.log 2>&1 || { tail -20 z3.log; exit 1; }
for k in "number_elc number_elc number_elc" "kinetic_energy kinetic_energy kinetic_energy" "total_energy total_energy total_energy" \
         "magnetic_energy magnetic_energy magnetic_energy" "electric_energy electric_energy electric_energy" "l2_f l2_f l2_f" "min_f min_f min_f" \
         "energy_Bz energy_Bx energy_By" "energy_Ex energy_Ey energy_Ez" "energy_Ey energy_Ez energy_Ex" "energy_By energy_Bz energy_Bx"; do
  set -- $k
  a=$(final a3.log $1); b=$(final y3.log $2); c=$(final z3.log $3)
  sc=1e-300; case $1 in energy_*|electric_energy|magnetic_energy) sc=$E;; esac
  for pair in "y3:$b:$2" "z3:$c:$3"; do
    IFS=: read -r run val name <<< "$pair"
    check "turned ($run): $1 vs $name (relative difference)" "$(awk -v a=$a -v b=$val -v e=$sc 'BEGIN{d=a-b; s=a<0?-a:a; s=s>e?s:e; printf "%.3e", d/s}')" "<" 1e-12
  done
done
# the z run again on 2 ranks (the 1-rank reference is z3 itself): configuration split, velocity split
Z="$X -vlasov_cells 2,2,6,10,10,10 -vlasov_upper 1,1,$L,1,1,1 -vlasov_maxwell_k 0,0,0.4 -vlasov_elc_drift 0.3,0,0 -vlasov_maxwell_B0 0,0.05,0"
$MPIEXEC $SURGE run $Z -vlasov_split_dims x,y,z -vlasov_ranks 1,1,2 -sim_output r2 > r2.log 2>&1 || { tail -20 r2.log; exit 1; }
ranks_equal z3.log r2.log "3x3v z split (split_dims x,y,z)"
$MPIEXEC $SURGE run $Z -vlasov_split_dims z,vx,vy -vlasov_ranks 1,2,1 -sim_output rv > rv.log 2>&1 || { tail -20 rv.log; exit 1; }
ranks_equal z3.log rv.log "3x3v vx split (split_dims z,vx,vy)"
# 1x3v, vz split (folded under the former rule), and its restart under that split
V="$W -vlasov_cells 6,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05 -vlasov_split_dims x,vy,vz -vlasov_ranks 1,1,2"
$MPIEXEC $SURGE run $V -sim_output b2 > b2.log 2>&1 || { tail -20 b2.log; exit 1; }
ranks_equal a1.log b2.log "1x3v vz split (split_dims x,vy,vz)"
$MPIEXEC $SURGE run $V -sim_max_steps 2 -sim_output bp > bp1.log 2>&1 || { tail -20 bp1.log; exit 1; }
cp bp.chk.h5 bp2.chk.h5
$MPIEXEC $SURGE run $V -sim_output bp -restart bp2.chk.h5 > bp2.log 2>&1 || { tail -20 bp2.log; exit 1; }
diff <(grep "vlasov final" b2.log) <(grep "vlasov final" bp2.log) || { echo "FAIL  restart under split_dims x,vy,vz differs"; exit 1; }
h5dump -d /state/f_elc b2.chk.h5 > fa.txt && h5dump -d /state/f_elc bp.chk.h5 > fb.txt && grep -q DATA fa.txt && cmp <(grep -v HDF5 fa.txt) <(grep -v HDF5 fb.txt) || { echo "FAIL  checkpointed f differs after restart"; exit 1; }
echo "ok    1x3v vz split: restart at step 2 of 3: final diagnostics and f identical bit for bit"
rc=0; $SURGE run $V -vlasov_split_dims x,vx,vy -vlasov_ranks 1,1,1 -sim_output bq -restart bp2.chk.h5 > bq.log 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "^surge: error:.*vlasov_split_dims" bq.log || { echo "FAIL  restart with other split dims not refused"; tail -3 bq.log; exit 1; }
echo "ok    restart with other split dims refused: $(grep '^surge: error:' bq.log | cut -c1-150)"
# a checkpoint of an earlier surge (no vlasov_split_dims record: it always split the first three phase
# dimensions, here x, vx, vy) continues under that split bit for bit as if recorded, and under today's
# default for these cells (vx, vy, vz) is refused in one line naming the option that continues it
A="$W -vlasov_cells 6,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05"
$SURGE run $A -vlasov_split_dims x,vx,vy -sim_max_steps 2 -sim_output old > old1.log 2>&1 || { tail -20 old1.log; exit 1; }
cp old.chk.h5 rec2.chk.h5
cp old.h5 rec.h5
cp old.chk.h5 old2.chk.h5
/usr/bin/python3 - old2.chk.h5 <<'PY' || { echo "FAIL  could not make the earlier checkpoint"; exit 1; }
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    held = []
    f.visititems(lambda n, o: held.append(o) if "vlasov_split_dims" in o.attrs else None)
    assert len(held) == 1, held
    del held[0].attrs["vlasov_split_dims"]
PY
$SURGE run $A -vlasov_split_dims x,vx,vy -sim_output rec -restart rec2.chk.h5 > rec.log 2>&1 || { tail -20 rec.log; exit 1; }
$SURGE run $A -vlasov_split_dims x,vx,vy -sim_output old -restart old2.chk.h5 > old2.log 2>&1 || { tail -20 old2.log; exit 1; }
grep -q "vlasov final" old2.log && diff <(grep "vlasov final" rec.log) <(grep "vlasov final" old2.log) || { echo "FAIL  the earlier checkpoint continued differently"; exit 1; }
rc=0; $SURGE run $A -sim_output od -restart old2.chk.h5 > od.log 2>&1 || rc=$?
[ $rc = 1 ] && [ "$(grep -c '^surge: error:' od.log)" = 1 ] && grep -q "^surge: error:.*earlier surge.*-vlasov_split_dims x,vx,vy" od.log || { echo "FAIL  the earlier checkpoint under another split not refused in one line"; tail -3 od.log; exit 1; }
echo "ok    an earlier surge's checkpoint (no split record): continued under x, vx, vy bit for bit; under the default refused: $(grep '^surge: error:' od.log | cut -c1-120)"
