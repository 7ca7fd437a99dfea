#!/bin/bash
# bundle.sh -- pack build/tests/test_bench_grid with what it needs to run on a machine that has no
# PETSc and no MPI (such as a GPU box with 16 cores; docs/parallel.md, "the bar met by the encoder,
# here and on 16 cores"):
#   tests/bench/parallel/device/bundle.sh [DIR]      (default .devbundle, at the repository root)
# DIR gets bench.tar.gz: the binary; petsc_shim.c built as libpetsc_real.so.3.18 (the PETSc
# calls and variables the benchmark uses); every shared library the binary, Open MPI's mpiexec and its plugins
# load, except the C runtime's (libc, libm, libstdc++, libgcc_s: the host's newer ones serve); Open
# MPI's plugin, PMIx and help-file trees at their Debian paths. run.sh beside this file unpacks and
# runs it there: copy DIR to that machine (list DIR in .git/info/exclude to keep it out of git).
set -e
cd "$(dirname "$0")/../../../.."
DIR=${1:-.devbundle}
B=build/tests/test_bench_grid
[ -x $B ] || make -s $B
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
mkdir -p $S/b/lib $S/b/bin $S/b/root
PETSC_INC=$(pkg-config --cflags PETSc 2>/dev/null || echo -I/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/include)
mpicc -O2 -shared -fPIC $PETSC_INC tests/bench/parallel/device/petsc_shim.c -Wl,-soname,libpetsc_real.so.3.18 \
  -o $S/b/lib/libpetsc_real.so.3.18
cp $B $S/b/bin/
ORTE=$(readlink -f "$(command -v mpiexec)")
cp "$ORTE" $S/b/bin/mpiexec
ompi=/usr/lib/x86_64-linux-gnu/openmpi
pmix=/usr/lib/x86_64-linux-gnu/pmix2
# shared libraries: of the binary (with the shim in place of PETSc), of mpiexec and of every plugin
{ LD_LIBRARY_PATH=$S/b/lib ldd $B; ldd "$ORTE"; for f in $ompi/lib/openmpi3/*.so $pmix/lib/pmix/*.so; do ldd $f; done; } 2>/dev/null |
  awk '/=>/ && $3 ~ /^\// {print $1, $3}' | sort -u |
  grep -v -E '^(libc|libm|libresolv|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so|^ld-linux|^libpetsc_real' |
  while read -r name path; do cp -L "$path" $S/b/lib/"$name"; done
for d in $ompi $pmix /usr/share/openmpi /usr/share/pmix /etc/openmpi /etc/pmix; do
  [ -e $d ] && mkdir -p $S/b/root$(dirname $d) && cp -a $d $S/b/root$d
done
mkdir -p $DIR
tar -C $S -czf $DIR/bench.tar.gz b
cp tests/bench/parallel/device/run.sh $DIR/
echo "bundle.sh: $DIR/bench.tar.gz $(du -h $DIR/bench.tar.gz | cut -f1) ($(ls $S/b/lib | wc -l) libraries)"
