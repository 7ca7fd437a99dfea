#!/usr/bin/env bash
# Checkpoint/restart continues bit-identically: a run of 100 steps against a run of 50 steps
# restarted from its checkpoint to step 100.  H5MD trajectories (positions, velocities, forces,
# box, every 25 steps) must be identical with tolerance 0, for the Langevin (random stream keyed by
# step) and Nose-Hoover chain (thermostat state) integrators, with the Berendsen barostat (the
# cell changes), and for a restart on 2 ranks from a
# 1-rank checkpoint (the neighbour list is rebuilt from the positions of its last build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
MPIEXEC=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
deck=$root/inputs/md/lj_langevin.yaml
for ens in langevin nhc; do
  o="-md_ensemble $ens -md_traj_every 25 -md_thermo_every 0 -md_velocity_temperature 1.2"
  "$SURGE" run $deck -sim_output full_$ens -md_traj_file full_$ens.h5md -sim_max_steps 100 $o > full_$ens.log
  "$SURGE" run $deck -sim_output part_$ens -md_traj_file part_$ens.h5md -sim_max_steps 50 $o > part_$ens.log
  if [ $ens = nhc ]; then cp part_$ens.chk.h5 part2.chk.h5; cp part_$ens.h5md part2.h5md; cp part_$ens.h5 part2.h5; fi
  "$SURGE" run $deck -sim_output part_$ens -md_traj_file part_$ens.h5md -sim_max_steps 100 -restart part_$ens.chk.h5 $o > rest_$ens.log
  for q in position velocity force box/edges; do
    h5diff full_$ens.h5md part_$ens.h5md /particles/all/$q/value /particles/all/$q/value \
      || { echo "FAIL: $ens restart: $q differs"; exit 1; }
  done
  h5diff full_$ens.h5md part_$ens.h5md /particles/all/position/step /particles/all/position/step \
    || { echo "FAIL: $ens restart: frame steps differ (frames lost or duplicated)"; exit 1; }
  echo "$ens: 50 + restart 50 steps == 100 steps, bit-identical (5 frames)"
done
# Berendsen barostat: the cell changes every step; the list is rebuilt in the cell of its build
o="-md_traj_every 25 -md_thermo_every 0 -md_pdamp 0.05"
npt=$root/inputs/md/lj_npt.yaml
"$SURGE" run $npt -sim_output fb -md_traj_file fb.h5md -sim_max_steps 100 $o > fb.log
"$SURGE" run $npt -sim_output pb -md_traj_file pb.h5md -sim_max_steps 50 $o > pb.log
"$SURGE" run $npt -sim_output pb -md_traj_file pb.h5md -sim_max_steps 100 -restart pb.chk.h5 $o > pb2.log
for q in position velocity force box/edges; do
  h5diff fb.h5md pb.h5md /particles/all/$q/value /particles/all/$q/value || { echo "FAIL: barostat restart: $q differs"; exit 1; }
done
echo "langevin + berendsen: 50 + restart 50 steps == 100 steps, bit-identical (cell included)"
$MPIEXEC "$SURGE" run $deck -sim_output part2 -md_traj_file part2.h5md -sim_max_steps 100 -restart part2.chk.h5 \
  -md_ensemble nhc -md_traj_every 25 -md_thermo_every 0 -md_velocity_temperature 1.2 > rest2.log
for q in position velocity force; do
  h5diff full_nhc.h5md part2.h5md /particles/all/$q/value /particles/all/$q/value \
    || { echo "FAIL: 2-rank restart from a 1-rank checkpoint: $q differs"; exit 1; }
done
echo "nhc: 1-rank checkpoint continued on 2 ranks: bit-identical"
