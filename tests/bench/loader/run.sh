#!/usr/bin/env bash
# Loader benchmark (issue 6): figures, not pass/fail. Run from the repository root after `make tests`.
#
# A synthetic md_frames dataset (water-sized frames: 192 atoms, f32 coord/force/box/energy, 4.6 KB
# per frame, schema-default chunks) four times larger than the loader's buffer is read for several
# epochs in one fixed shuffled order by
#   (a) SgLoader with default settings (Belady buffer of 1/4 of the data, read-ahead 8 batches, I/O thread and one helper
#       reader thread, raw reads), plus two variants: no buffer, and read-ahead off;
#   (b) naive per-sample HDF5 reads (one H5Dread per field per sample, default chunk cache);
#   (c) PyTorch's DataLoader over h5py (num_workers 0 and 2), same batches;
#   (d) the storage floor: the same rows at their byte offsets with no HDF5 and no buffer (pread on two
#       threads with read-ahead, as the loader reads; io_uring, a batch per submission) and a
#       sequential O_DIRECT scan of the file (bandwidth, ignores the shuffle).
# Every reader drops the file from the page cache before every epoch (posix_fadvise DONTNEED), so
# epochs read from storage. Prints samples/s, ratios and hit rates; writes results.txt and a plot
# into $DIR. The machine is shared: each reader runs LOADER_BENCH_REPEAT times (default 2), rounds
# interleaved, and the report takes each reader's best. Environment: LOADER_BENCH_N (frames,
# default 50000), LOADER_BENCH_EPOCHS (4), LOADER_BENCH_REPEAT (2), LOADER_BENCH_DIR (build/bench/loader).
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s build/tests/test_loader_bench >/dev/null || { echo "bench loader: cannot build build/tests/test_loader_bench (run ./configure first)"; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
BIN=build/tests/test_loader_bench
DIR=${LOADER_BENCH_DIR:-build/bench/loader}
N=${LOADER_BENCH_N:-50000}
E=${LOADER_BENCH_EPOCHS:-4}
REP=${LOADER_BENCH_REPEAT:-2}
BATCH=64
SEED=1
PY=/usr/bin/python3
mkdir -p "$DIR"
F=$DIR/frames.h5
R=$DIR/results.txt
[ -x $BIN ] || { echo "build first: make tests"; exit 2; }
. tests/bench/require.sh
bench_require_py loader torch python3-torch
bench_require_py loader h5py python3-h5py
bench_require_py loader matplotlib python3-matplotlib # report.py's figure

$BIN create "$F" "$N" 192
SIZE=$(stat -c %s "$F")
BUDGET=$((SIZE / 4))
echo "dataset: $N frames, $SIZE bytes ($((SIZE / 1048576)) MiB); loader buffer $BUDGET bytes (1/4); batch $BATCH; $E epochs; page cache dropped every epoch" | tee "$R"
echo "DATASET n=$N bytes=$SIZE budget=$BUDGET batch=$BATCH epochs=$E" >> "$R"
run() { tag=$1; echo "== $tag"; shift; "$@" 2>&1 | tee -a "$R.log" | grep -E '^(RESULT|CURVE)' | sed "s/^RESULT/RESULT tag=$tag/" | tee -a "$R"; }
: > "$R.log"
for rep in $(seq 1 "$REP"); do
  echo "---- round $rep of $REP ($(uptime | sed 's/.*load/load/'))" | tee -a "$R"
  run loader $BIN loader "$F" $BATCH $E $SEED $BUDGET 4 "$DIR/seq.bin"
  run loader_nobuffer $BIN loader "$F" $BATCH $E $SEED 0 4 "$DIR/seq0.bin"
  run loader_noreadahead $BIN loader "$F" $BATCH $E $SEED $BUDGET 4 "$DIR/seq1.bin" -loader_readahead 0
  cmp -s "$DIR/seq.bin" "$DIR/seq0.bin" && cmp -s "$DIR/seq.bin" "$DIR/seq1.bin" && echo "sequence identical for all buffer/read-ahead settings" | tee -a "$R"
  run naive $BIN naive "$F" $BATCH $E "$DIR/seq.bin"
  for m in pread uring seq; do run raw_$m $BIN raw "$F" $BATCH $E "$DIR/seq.bin" $m; done
  run torch_w0 $PY tests/bench/loader/torch_reader.py "$F" $BATCH $E "$DIR/seq.bin" 0
  run torch_w2 $PY tests/bench/loader/torch_reader.py "$F" $BATCH $E "$DIR/seq.bin" 2
done
run curve $BIN curve "$F" $BATCH $E $SEED
$PY tests/bench/loader/report.py "$R" "$DIR/loader_bench.png"
