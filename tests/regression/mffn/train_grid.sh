#!/bin/bash
# surge train of MeshfreeFlowNet on process grids (issue 18, docs/parallel.md): each crop cut over the
# spatial ranks of its data group (halo exchanges, batch statistics of the whole crop, owner-local
# decoding of the query points), each spatial rank reading only its window of the data. Asserts:
#  1. 6 steps of inputs/mffn/small.yaml (crops 4 x 16 x 48 -> low-res 2 x 8 x 12, 64 query points, the
#     PDE loss on) end with weights within 1e-9 (relative to the largest) of the 1-rank run on
#       1 x 2 spatial ranks, x cut unevenly 8 + 4;   1 x 3, x cut 4 + 4 + 4 (odd);
#       2 data groups x 2 spatial ranks, z cut 4 + 4 (hybrid);   1 x 4, z x x cut (4 + 4) x (8 + 4);
#     only summation orders differ (measured ~2e-13); a lost halo or batch statistic is off by O(1e-3);
#     and reading the data crop by crop from the file (-mffn_data_read crops) gives the same bits as
#     holding it in memory, on 1 rank and on the 2 x 2 grid;
#     and with the gradient terms (-mffn_grad_weight 0.5 -mffn_grad_energy_weight 0.5 -mffn_thermal_energy_weight 0.5
#     -mffn_heat_flux_weight 0.5 -mffn_vorticity_energy_weight 0.5) 2 data groups end within 1e-9 of
#     its 1-rank run (a lost or doubled gradient target is off by O(1e-3));
#     and the stream-function decoder (-mffn_stream_function 1) on 1 x 2 spatial ranks (x cut 8 + 4) and
#     2 data groups x 2 spatial ranks ends within 1e-9 of its 1-rank run;
#  2. the progress lines (losses summed over the ranks) equal the 1-rank run's to their 5 printed digits;
#  3. a grid that does not cover the ranks, slabs that are not multiples of the poolings, and the
#     velocity-gradient term or a residual stream-function model on spatial ranks (not implemented) are each refused with one
#     "surge: error:" line naming the options, exit 1, no model file.
set -e
cd "$(dirname "$0")/../../.."
ROOT=$PWD
SURGE=${SURGE:-$ROOT/bin/surge}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
M="mpiexec --oversubscribe -n"
D=build/tmp/mffn_train_grid
rm -rf $D && mkdir -p $D && cd $D
$SURGE ensemble $ROOT/inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_small > ens.log
A="$ROOT/inputs/mffn/small.yaml -mffn_numb_steps 6 -mffn_disp_freq 3 -mffn_points 64 -mffn_crop 4,16,48 -mffn_lcurve"
$SURGE train $A one.lc -train_output one > one.log
run() { # name ranks options... (against the 1-rank run $REF, default one)
  local name=$1 n=$2 ref=${REF:-one}; shift 2
  $M $n $SURGE train $A $name.lc -train_output $name "$@" > $name.log
  # test_mffn compare decides (exit status): same architecture and relative difference <= 1e-9
  local cmp; cmp=$($ROOT/build/tests/test_mffn compare $ref.h5 $name.h5 1e-9) || { echo "FAIL: $name vs 1 rank: $cmp (tolerance 1e-9)"; exit 1; }
  echo "1. $name ($(grep -o '[0-9]* rank(s) = .*' $name.log)): weights vs 1 rank: $cmp"
  cmp <(grep -v '^#' $ref.lc | awk '{print $1, $2, $3, $4, $5}') <(grep -v '^#' $name.lc | awk '{print $1, $2, $3, $4, $5}') > /dev/null || { echo "FAIL: $name's progress lines differ"; cat $ref.lc $name.lc; exit 1; }
}
run sp2 2 -mffn_spatial_ranks 2 -mffn_split_axes x -mffn_split_counts 8,4
run sp3 3 -mffn_spatial_ranks 3 -mffn_split_axes x
run hy4 4 -mffn_data_groups 2 -mffn_spatial_ranks 2
run zx4 4 -mffn_spatial_ranks 4 -mffn_split_axes z,x -mffn_split_layout 2,2 -mffn_split_counts 4,4,8,4
grep "reads z" sp2.log | sed 's/^/   /'
# the data read crop by crop from the file (-mffn_data_read crops) trains to the same bits as the data
# held in memory, on 1 rank and on the 2 x 2 grid of z x x slabs
run onecr 1 -mffn_data_read crops
run zx4cr 4 -mffn_spatial_ranks 4 -mffn_split_axes z,x -mffn_split_layout 2,2 -mffn_split_counts 4,4,8,4 -mffn_data_read crops
for p in "one onecr" "zx4 zx4cr"; do
  set -- $p
  cmp=$($ROOT/build/tests/test_mffn compare $1.h5 $2.h5) || { echo "FAIL: reading crops changed the training ($2 vs $1: $cmp)"; exit 1; }
  echo "1. $2 (reading crops) vs $1 (in memory): $cmp"
  grep -q "reading the data crop by crop" $2.log || { echo "FAIL: $2 does not say it reads crops"; cat $2.log; exit 1; }
done
# the gradient terms on 2 data groups against their own 1-rank run
$SURGE train $A onegw.lc -train_output onegw -mffn_grad_weight 0.5 -mffn_grad_energy_weight 0.5 -mffn_thermal_energy_weight 0.5 -mffn_heat_flux_weight 0.5 -mffn_vorticity_energy_weight 0.5 > onegw.log
grep -q "l1_grad energy_grad energy_b flux_wb enstrophy" onegw.lc || { echo "FAIL: the learning curve has no l1_grad, energy_grad, energy_b, flux_wb, enstrophy columns"; head -2 onegw.lc; exit 1; }
cmp=$($ROOT/build/tests/test_mffn compare one.h5 onegw.h5 --changed) || { echo "FAIL: -mffn_grad_weight 0.5 did not change the training ($cmp)"; exit 1; }
REF=onegw run dp2gw 2 -mffn_data_groups 2 -mffn_grad_weight 0.5 -mffn_grad_energy_weight 0.5 -mffn_thermal_energy_weight 0.5 -mffn_heat_flux_weight 0.5 -mffn_vorticity_energy_weight 0.5
# the stream-function decoder against its own 1-rank run
$SURGE train $A onesf.lc -train_output onesf -mffn_stream_function 1 > onesf.log
cmp=$($ROOT/build/tests/test_mffn compare one.h5 onesf.h5 --other-architecture) || { echo "FAIL: -mffn_stream_function 1 did not change the architecture ($cmp)"; exit 1; }
REF=onesf run sp2sf 2 -mffn_spatial_ranks 2 -mffn_split_axes x -mffn_split_counts 8,4 -mffn_stream_function 1
REF=onesf run hy4sf 4 -mffn_data_groups 2 -mffn_spatial_ranks 2 -mffn_stream_function 1
echo "2. progress lines of every grid = the 1-rank run's: $(grep -v '^#' one.lc | tail -1 | awk '{print "loss", $4, "at step", $1}')"
refused() { # "fragment the line must hold" name ranks options...
  local want=$1 name=$2 n=$3; shift 3
  if $M $n $SURGE train $A $name.lc -train_output $name "$@" > $name.log 2>&1; then echo "FAIL: $name accepted"; exit 1; fi
  local line; line=$(grep "^surge: error:" $name.log | head -1)
  echo "3. $line"
  [ "$(grep -c '^surge: error:' $name.log)" = 1 ] && [ ! -e $name.h5 ] || { echo "FAIL: $name: not one clear line"; cat $name.log; exit 1; }
  [[ "$line" == *"$want"* ]] || { echo "FAIL: the $name refusal does not say \"$want\""; exit 1; }
}
refused "-mffn_data_groups 3 x -mffn_spatial_ranks 2" badgrid 2 -mffn_data_groups 3 -mffn_spatial_ranks 2
refused "-mffn_split_counts" badsplit 2 -mffn_spatial_ranks 2 -mffn_split_axes x -mffn_split_counts 6,6
refused "-mffn_heat_flux_weight or -mffn_vorticity_energy_weight with -mffn_spatial_ranks 2" gwsp 2 -mffn_spatial_ranks 2 -mffn_heat_flux_weight 0.5
refused "-mffn_stream_function with -mffn_residual on -mffn_spatial_ranks 2" sfressp 2 -mffn_spatial_ranks 2 -mffn_stream_function 1 -mffn_residual 1
echo PASS
