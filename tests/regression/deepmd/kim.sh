#!/bin/bash
# surge's Deep Potential in stock Debian LAMMPS through the KIM API (surrogates/deepmd/kim, docs/deepmd.md).
# The items are installed by `make kim-install` into a temporary environment collection
# (KIM_API_*_DIR under build/tmp/kim: nothing of the system or the user collection is touched) and
# kim-api-collections-management must list them. Asserts:
# (a) step 0 of `pair_style kim` (1 rank, and 2 ranks: padding atoms from the other rank, their forces
#     reverse-communicated) equals the C API (SgDeepmdCompute, periodic images built by surge; the same
#     evaluator `surge model test` and surge MD use) on 64 H2O: PotEng, every force component and the
#     virial (from LAMMPS's pressure at T=0) to 1e-10 relative (the issue's bar; measured ~1e-14, the
#     round-off of a different summation order). Models: the shipped water model (SURGE_DP_water), and
#     DeePMD-kit's own fixtures imported by `surge model import` (se_e2_a one-side, se_e2_r type-pair),
#     built into parameterized models by `make kim-model`.
# (c) KIM's virial and particle energies, which LAMMPS's step 0 does not take from the model (it uses
#     f.r): a minimal KIM simulator (kim_sim.c), open cluster, full neighbour list, vs the C API to 1e-10,
#     per-particle virials included (and LAMMPS' compute stress/atom summed = its pressure virial);
#     with one pair left out of the simulator's neighbour list, the energy moves as predicted (c2).
# (b) NVE from rest with the tabulated water model: LAMMPS+KIM and `surge run` MD (same model file, same
#     start, velocity Verlet, dt 0.5 fs) print the same PotEng/TotEng every 10 steps for 200 steps to
#     1e-8 relative (both are velocity Verlet on the same forces; differences are round-off grown by the
#     dynamics), and over 1000 LAMMPS steps the total energy stays within 2% of the potential-energy
#     change (forces inconsistent with the energy, a dropped neighbour or lost ghost forces, give O(100%));
#     the same within 0.1% over 1000 steps of 0.1 fs with the imported DeePMD-kit se_e2_a fixture.
# LAMMPS runs in build/tmp/kim (the KIM API writes its kim.log into the working directory).
# SKIP (exit 77) when the KIM API development files or LAMMPS with its KIM package are absent.
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
PY=/usr/bin/python3
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
H=tests/regression/deepmd/kim_files.py
# Under make check-sanitize build/ is the ASan + UBSan build: a KIM item with ASan cannot be dlopen'ed
# by a plain LAMMPS. What this guards is the normal build's, which make check runs.
if [ "${SURGE_SANITIZED:-0}" = 1 ]; then
  echo "SKIP: the KIM model is tested against the normal build in make check, not the sanitized one"
  exit 77
fi
pkg-config --exists libkim-api || { echo "SKIP: the KIM API (Debian libkim-api-dev) is not installed: ./configure --install-deps"; exit 77; }
command -v lmp > /dev/null && lmp -h | grep -qw KIM || { echo "SKIP: LAMMPS with the KIM package (Debian lammps) is not installed: ./configure --install-deps"; exit 77; }
[ -s build/kim/SURGE_DP__MD/libkim-api-model-driver.so ] || { echo "FAIL: build/kim was not built (make kim)"; exit 1; }
D=$PWD/build/tmp/kim
rm -rf $D   # a clean start: surge refuses to overwrite its outputs of an earlier run
mkdir -p $D/col/md $D/col/pm
export KIM_API_MODEL_DRIVERS_DIR=$D/col/md KIM_API_PORTABLE_MODELS_DIR=$D/col/pm OPENBLAS_NUM_THREADS=1
make -s kim-install
$SURGE model import tests/data/deepmd_kit/deeppot_sea.yaml $D/sea.h5 > /dev/null
$SURGE model import tests/data/deepmd_kit/deeppot-r.yaml $D/r.h5 > /dev/null
$SURGE model compress inputs/deepmd/models/water.h5 $D/water_c.h5 > /dev/null
for m in sea r water_c; do make -s kim-model KIM_MODEL_NAME=SURGE_DP_$m KIM_MODEL_FILE=$D/$m.h5 KIM_OUT=$D/col/pm > /dev/null; done
kim-api-collections-management list > $D/list.txt
for item in SURGE_DP__MD SURGE_DP_water SURGE_DP_sea SURGE_DP_r SURGE_DP_water_c; do
  grep -q "^	$item\$" $D/list.txt || { echo "FAIL: kim-api-collections-management does not list $item"; exit 1; }
done
echo "kim-api-collections-management lists SURGE_DP__MD, SURGE_DP_water, SURGE_DP_sea, SURGE_DP_r, SURGE_DP_water_c"
$PY $H setup inputs/deepmd/water_192.xyz O,H $D/w.txt $D/w.data
cat > $D/head.lmp <<'LMP'
units metal
atom_style atomic
boundary p p p
read_data ${data}
mass 1 15.999
mass 2 1.008
pair_style kim ${model}
pair_coeff * * O H
LMP
cat > $D/step0.lmp <<'LMP'
include head.lmp
thermo_style custom step pe pxx pyy pzz pxy pxz pyz vol
thermo_modify format float %.17g
dump d all custom 1 ${dump} id fx fy fz
dump_modify d format float %.17g
run 0
LMP
ok=1
for m in water sea r; do
  f=$D/$m.h5
  [ $m = water ] && f=inputs/deepmd/models/water.h5
  build/tests/test_deepmd_tool eval $f $D/w.txt $D/ref_$m.txt
  for np in 1 2; do
    run="lmp"
    [ $np = 2 ] && run="$MPI lmp"
    (cd $D && $run -in step0.lmp -var data w.data -var model SURGE_DP_$m -var dump f_${m}_$np.dump -log step0_${m}_$np.log > /dev/null)
    echo "SURGE_DP_$m, $np rank(s):"
    $PY $H compare $D/ref_$m.txt $D/step0_${m}_$np.log $D/f_${m}_$np.dump || ok=0
  done
done
# (a2) per-particle virials through LAMMPS (compute stress/atom: KIM's partialParticleVirial, the
#     padding particles' folded onto their owners by LAMMPS) summed over the atoms = the pressure's
#     virial (LAMMPS takes that from f.r, independently of the model's virials), 1 and 2 ranks
cat > $D/sa.lmp <<'LMP'
include head.lmp
compute sa all stress/atom NULL virial
compute ss all reduce sum c_sa[1] c_sa[2] c_sa[3] c_sa[4] c_sa[5] c_sa[6]
thermo_style custom step pe pxx pyy pzz pxy pxz pyz vol c_ss[1] c_ss[2] c_ss[3] c_ss[4] c_ss[5] c_ss[6]
thermo_modify format float %.17g
run 0
LMP
for np in 1 2; do
  run="lmp"
  [ $np = 2 ] && run="$MPI lmp"
  (cd $D && $run -in sa.lmp -var data w.data -var model SURGE_DP_water -log sa_$np.log > /dev/null)
  $PY - $D/sa_$np.log $np <<'PY' || ok=0
import sys
lines = open(sys.argv[1]).read().split("\n")
row = [float(v) for v in lines[[i for i, l in enumerate(lines) if l.split()[:1] == ["Step"]][0] + 1].split()]
p, vol, ss = row[2:8], row[8], row[9:15]
err = max(abs(a - b * vol) for a, b in zip(ss, p)) / max(abs(b * vol) for b in p)
print(f"SURGE_DP_water, {sys.argv[2]} rank(s): sum of compute stress/atom (KIM particle virials) vs pressure x volume: max rel. diff {err:.1e} (tol 1e-10)")
sys.exit(0 if err < 1e-10 else 1)
PY
done
# (c) the virial and the particle energies, which LAMMPS's step 0 does not take from the model: a
#     minimal KIM simulator (kim_sim.c), open cluster, against the C API to 1e-10 relative
cc -O2 tests/regression/deepmd/kim_sim.c $(pkg-config --cflags --libs libkim-api) -o $D/kim_sim
for m in water r; do
  f=$D/$m.h5
  [ $m = water ] && f=inputs/deepmd/models/water.h5
  build/tests/test_deepmd_tool eval $f $D/w.txt $D/refopen_$m.txt open
  (cd $D && ./kim_sim SURGE_DP_$m w.txt sim_$m.txt)
  echo "SURGE_DP_$m:"
  $PY $H sim $D/refopen_$m.txt $D/sim_$m.txt || ok=0
done
# (c2) the model runs on the neighbour list the simulator gives: kim_sim leaves atom J (the nearest
#     neighbour of atom 0) out of atom 0's list only; then atom 0's energy must be the one it has in the
#     cluster without atom J (C API, surge's own search) and every other particle energy unchanged. A
#     model that searched the particles itself would see J and give the full energy.
read I J < <($PY $H omit $D/w.txt $D/w_noj.txt)
build/tests/test_deepmd_tool eval inputs/deepmd/models/water.h5 $D/w_noj.txt $D/refopen_noj.txt open
(cd $D && ./kim_sim SURGE_DP_water w.txt sim_omit.txt $I $J)
$PY $H omitcheck $D/sim_water.txt $D/sim_omit.txt $D/refopen_noj.txt $I $J || ok=0
# (b) NVE from rest: LAMMPS+KIM and surge MD, the tabulated water model
cat > $D/nve.lmp <<'LMP'
include head.lmp
timestep 0.0005
fix 1 all nve
thermo_style custom step pe ke etotal
thermo_modify format float %.15g
thermo 10
run 1000
LMP
(cd $D && lmp -in nve.lmp -var data w.data -var model SURGE_DP_water_c -log nve.log > /dev/null)
cp inputs/deepmd/water_192.xyz $D/
$SURGE run inputs/deepmd/water_nvt.yaml -md_ensemble nve -md_velocity_temperature 0 -sim_max_steps 200 -md_thermo_every 10 \
  -md_rdf_file $D/surge_nve_gr.txt -md_deepmd_models $D/water_c.h5 -md_deepmd_compress false -sim_output $D/surge_nve > $D/surge_nve.log
$PY - $D/nve.log $D/surge_nve.log $ok <<'PY' || exit 1
import sys
sys.path.insert(0, "tests/regression/deepmd")
from kim_files import thermo
lmp = thermo(sys.argv[1])
sg = {int(r[2]): (float(r[4]), float(r[6])) for r in (l.split() for l in open(sys.argv[2]) if l.startswith("md thermo:") and l.split()[2] != "Step")}
ok = sys.argv[3] == "1"
dmax = 0
for r in lmp:
    s = int(r["Step"])
    if s in sg:
        dmax = max(dmax, abs(r["PotEng"] - sg[s][0]) / abs(sg[s][0]), abs(r["TotEng"] - sg[s][1]) / abs(sg[s][1]))
n = len([r for r in lmp if int(r["Step"]) in sg])
print(f"NVE from rest, LAMMPS+KIM vs surge MD: {n} thermo lines (steps 0..{max(sg)}), max rel. diff of PotEng/TotEng {dmax:.1e}")
ok &= n == 21 and dmax < 1e-8
pe, et = [r["PotEng"] for r in lmp], [r["TotEng"] for r in lmp]
drop, wander = max(pe) - min(pe), max(et) - min(et)
print(f"LAMMPS+KIM NVE, {int(lmp[-1]['Step'])} steps: PotEng range {drop:.4f} eV, TotEng range {wander:.5f} eV ({100 * wander / drop:.2f}% of it)")
ok &= int(lmp[-1]["Step"]) == 1000 and wander < 0.02 * drop
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
# (b') the same conservation with an imported DeePMD-kit model: the se_e2_a fixture (deeppot_sea), 1000
# LAMMPS steps from rest. The fixture is untrained (its forces vary on a far shorter scale than a water
# model's), so it takes dt 0.1 fs: at 0.5 fs velocity Verlet itself does not conserve its energy. Bar:
# the total energy within 0.1 % of the potential-energy change (measured 8.9e-7 of it).
sed 's/^timestep 0.0005/timestep 0.0001/' $D/nve.lmp > $D/nve_sea.lmp
(cd $D && lmp -in nve_sea.lmp -var data w.data -var model SURGE_DP_sea -log nve_sea.log > /dev/null)
$PY - $D/nve_sea.log <<'PY' || exit 1
import sys
sys.path.insert(0, "tests/regression/deepmd")
from kim_files import thermo
lmp = thermo(sys.argv[1])
pe, et = [r["PotEng"] for r in lmp], [r["TotEng"] for r in lmp]
drop, wander = max(pe) - min(pe), max(et) - min(et)
print(f"LAMMPS+KIM NVE with the imported DeePMD-kit se_e2_a fixture, {int(lmp[-1]['Step'])} steps of 0.1 fs: PotEng range {drop:.4f} eV, TotEng range {wander:.2e} eV ({100 * wander / drop:.1e}% of it)")
ok = int(lmp[-1]["Step"]) == 1000 and drop > 0 and wander < 1e-3 * drop  # measured 8.9e-7 of it; forces 2 % too large give 2 %
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
