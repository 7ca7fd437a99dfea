#!/bin/bash
# Every file `surge model` and the deepmd trainer write goes through the one write path
# (io/include/sgwrite.h): import/export (.h5, .dp, .yaml), compress, devi, model test -detail and the
# trainer's test_detail. For each writer:
#   input    the output is one of the command's inputs (same name, hard link or symlink): refused;
#   foreign  an existing file that is not surge's output of that kind (a DeePMD-kit-written .dp
#            included): refused, the file byte-identical;
#   own      surge's earlier output of the same kind is replaced;
#   full     a disk that fills at the commit (SURGE_TEST_ENOSPC=1, io/h5/write.c), on 1 and 2 ranks:
#            the earlier file byte-identical;
# each refusal or failure is exactly one `surge: error:` line, exit status 1, and no PATH.tmp left.
set -e
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
FIX=tests/data/deepmd_kit
D=build/tmp/deepmd_write_path
rm -rf $D; mkdir -p $D
# fail WANT FILE CMD...: CMD must fail with one error line containing WANT, FILE unchanged, no FILE.tmp
fail() {
  local want=$1 file=$2; shift 2
  local before=absent
  [ -e "$file" ] && before=$(md5sum < "$file")
  if "$@" > $D/out.log 2> $D/err.log; then echo "FAIL: accepted: $*"; cat $D/out.log $D/err.log; exit 1; fi
  if [ "$(grep -c '^surge: error:' $D/err.log)" != 1 ] || ! grep -q "^surge: error: .*$want" $D/err.log; then
    echo "FAIL: $*: expected one 'surge: error: ...$want' line, got:"; cat $D/err.log; exit 1
  fi
  local after=absent
  [ -e "$file" ] && after=$(md5sum < "$file")
  [ "$before" = "$after" ] || { echo "FAIL: $*: $file changed"; exit 1; }
  if compgen -G "$D/*.tmp*" > /dev/null; then echo "FAIL: $*: left $(ls $D/*.tmp*)"; exit 1; fi
  echo "      $(grep '^surge: error:' $D/err.log | cut -c1-150)"
}
$SURGE model import $FIX/deeppot_sea.yaml $D/sea.h5 > /dev/null
build/tests/test_deepmd_train data $D > /dev/null
$SURGE train inputs/deepmd/pair.yaml -deepmd_data $D/pair_train.h5 -deepmd_valid_data $D/pair_valid.h5 \
  -deepmd_numb_steps 5 -train_output $D/m3 > /dev/null
$SURGE train inputs/deepmd/pair.yaml -deepmd_data $D/pair_train.h5 -deepmd_valid_data $D/pair_valid.h5 \
  -deepmd_numb_steps 5 -deepmd_seed 7 -train_output $D/m7 > /dev/null
build/tests/test_deepmd_tool xyz $D/pair_valid.h5 0 2 $D/pair.xyz
$SURGE run inputs/deepmd/pair_md.yaml -md_read_xyz $D/pair.xyz -md_deepmd_models $D/m3.h5 -sim_max_steps 10 \
  -md_traj_file $D/traj.h5md -md_traj_every 5 -sim_output $D/md > /dev/null

# own outputs are replaced (a second run over the first)
for i in 1 2; do
  $SURGE model export $D/sea.h5 $D/sea.dp > /dev/null
  $SURGE model export $D/sea.h5 $D/sea.yaml > /dev/null
  $SURGE model import $D/sea.yaml $D/back.h5 > /dev/null
  $SURGE model compress $D/m3.h5 $D/m3c.h5 > /dev/null
  $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/devi.out > /dev/null
  $SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/det > /dev/null
done
cmp $D/sea.h5 $D/back.h5
mark() { # FILE LINE1: the write path's kind line
  [ "$(head -1 $1)" = "$2" ] || { echo "FAIL: $1 begins '$(head -1 $1 | cut -c1-60)', not '$2'"; exit 1; }
}
mark $D/sea.yaml '# surge-file: deepmd-kit model'
mark $D/devi.out '# surge-file: model deviation'
head -2 $D/devi.out | tail -1 | grep -q '^#       step         max_devi_v' || { echo "FAIL: devi.out lost DeePMD-kit's header"; exit 1; }
for x in e e_peratom f v v_peratom; do mark $D/det.$x.out '# surge-file: dp test detail'; done   # the pair data have virials
echo "ok    own outputs replaced; kind marks in .yaml, devi and detail files; export -> import identical"

# the output is an input
ln -f $D/m3.h5 $D/hard.dp
ln -sf pair_valid.h5 $D/link.e.out
fail "an input of this run" $D/m3.h5 $SURGE model compress $D/m3.h5 $D/m3.h5
fail "an input of this run" $D/m3.h5 $SURGE model export $D/m3.h5 $D/hard.dp
fail "an input of this run" $D/m7.h5 $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/m7.h5
fail "an input of this run" $D/traj.h5md $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/traj.h5md
fail "an input of this run" $D/pair_valid.h5 $SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/link
cp $FIX/deeppot_sea.yaml $D/in.yaml
ln -f $D/in.yaml $D/in_link.h5
fail "an input of this run" $D/in.yaml $SURGE model import $D/in.yaml $D/in_link.h5
echo "ok    an output that is an input (name, hard link, symlink) refused"

# foreign files: someone else's, and DeePMD-kit's own .dp (json not written by surge)
echo "my notes" > $D/notes.yaml
echo "my notes" > $D/notes.out
echo "my notes" > $D/notes.h5
/usr/bin/python3 - $D/dpkit.dp <<'PY'
import sys, json, h5py, numpy as np   # what DeePMD-kit's save_dp_model writes (h5py, json attribute)
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("variable_0000", data=np.zeros(3))
    f.attrs["json"] = json.dumps({"software": "deepmd-kit", "model": {"w": "variable_0000"}})
PY
cp $D/det.f.out $D/own.f.out
echo "my notes" > $D/fdet.f.out
fail "not a file surge wrote" $D/notes.yaml $SURGE model export $D/sea.h5 $D/notes.yaml
fail "not a file surge wrote" $D/dpkit.dp $SURGE model export $D/sea.h5 $D/dpkit.dp
fail "not a file surge wrote" $D/notes.h5 $SURGE model import $FIX/deeppot_sea.yaml $D/notes.h5
fail "not a file surge wrote" $D/notes.h5 $SURGE model compress $D/m3.h5 $D/notes.h5
fail "not a file surge wrote" $D/notes.out $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/notes.out
fail "not a file surge wrote" $D/fdet.f.out $SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/fdet
[ ! -e $D/fdet.e.out ]   # refused before the first file was written
cp $D/devi.out $D/other.f.out   # surge's file, of another kind
fail "is a surge model deviation, not a dp test detail" $D/other.f.out $SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/other
# the trainer checks its test_detail files before the first step (no model written either)
fail "not a file surge wrote" $D/fdet.f.out $SURGE train inputs/deepmd/pair.yaml -deepmd_data $D/pair_train.h5 \
  -deepmd_valid_data $D/pair_valid.h5 -deepmd_numb_steps 5 -deepmd_test_detail $D/fdet -train_output $D/never
[ ! -e $D/never.h5 ]
$SURGE model export $D/sea.h5 $D/notes.yaml -overwrite > /dev/null   # the user's word replaces it
mark $D/notes.yaml '# surge-file: deepmd-kit model'
echo "ok    foreign files (text, HDF5, DeePMD-kit's .dp) refused and untouched; -overwrite replaces"

# a disk that fills at the commit: the earlier file stays whole, on 1 and 2 ranks
for run in "" "$MPI"; do
  fail "disk full" $D/sea.dp env SURGE_TEST_ENOSPC=1 $run $SURGE model export $D/sea.h5 $D/sea.dp
  fail "disk full" $D/sea.yaml env SURGE_TEST_ENOSPC=1 $run $SURGE model export $D/sea.h5 $D/sea.yaml
  fail "disk full" $D/back.h5 env SURGE_TEST_ENOSPC=1 $run $SURGE model import $D/sea.yaml $D/back.h5
  fail "disk full" $D/m3c.h5 env SURGE_TEST_ENOSPC=1 $run $SURGE model compress $D/m3.h5 $D/m3c.h5
  fail "disk full" $D/devi.out env SURGE_TEST_ENOSPC=1 $run $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/devi.out
  cp $D/det.e_peratom.out $D/keep.e_peratom
  fail "disk full" $D/det.e.out env SURGE_TEST_ENOSPC=1 $run $SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/det
  cmp $D/det.e_peratom.out $D/keep.e_peratom   # the files after the failed one are not committed either
done
echo "ok    disk full at the commit: earlier files byte-identical, no .tmp, one error line (1 and 2 ranks)"
echo PASS
