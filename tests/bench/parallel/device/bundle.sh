#!/bin/bash
# bundle.sh -- pack build/tests/test_bench_grid with what it needs to run on a machine that has no
# PETSc and no MPI (such as a GPU box with 16 cores; docs/parallel.md, "the bar met by the encoder,
# here and on 16 cores"):
#   tests/bench/parallel/device/bundle.sh [DIR]      (default .devbundle, at the repository root)
# DIR gets bench.tar.xz (tests/bench/device/pack.sh: the binary, Open MPI, every library they load, with
# petsc_shim.c built as libpetsc_real.so.3.18 standing in for PETSc: the calls and variables the benchmark
# uses) and the scripts that run it there (run.sh). Copy DIR to that machine (list DIR in
# .git/info/exclude to keep it out of git) and run DIR/run.sh.
set -e
cd "$(dirname "$0")/../../../.."
DIR=${1:-.devbundle}
B=build/tests/test_bench_grid
[ -x $B ] || make -s $B
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
PETSC_INC=$(pkg-config --cflags PETSc 2>/dev/null || echo -I/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/include)
mpicc -O2 -shared -fPIC $PETSC_INC tests/bench/parallel/device/petsc_shim.c -Wl,-soname,libpetsc_real.so.3.18 \
  -o $S/libpetsc_real.so.3.18
mkdir -p $DIR
tests/bench/device/pack.sh $DIR/bench.tar.xz -l $S/libpetsc_real.so.3.18 $B
cp tests/bench/parallel/device/run.sh tests/bench/device/mpienv.sh $DIR/
