#!/bin/bash
# run.sh -- the scaling runs of tests/bench/parallel/run.sh on a machine without PETSc and MPI, from
# the bundle that bundle.sh made (bench.tar.gz beside this script); figures, not pass/fail.
#   DIR/run.sh [ROUNDS] [RESULTS]          (default 3 rounds, results to ./results.txt)
# Open MPI runs from the bundle, relocated by OPAL_PREFIX and PMIX_* (nothing is written outside /tmp);
# where that cannot start two ranks and the machine has an mpiexec of its own, that one runs with the
# bundle's other libraries (Open MPI 4.1 keeps its ABI). Each rank is bound to its own core: on a machine
# with more cores than ranks no core is shared, unlike on the 2-vCPU VM.
set -u
D=$(cd "$(dirname "$0")" && pwd)
R=${1:-3}
RES=${2:-results.txt}
W=/tmp/sgbench
rm -rf $W && mkdir -p $W && tar -C $W -xzf $D/bench.tar.gz || { echo "run.sh: cannot unpack $D/bench.tar.gz"; exit 2; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=$W/b/bin/test_bench_grid
M="mpiexec --bind-to core --map-by core -n"
smoke() { $M 2 $B stack 1 2 2 16 16 16 -steps 1 2>&1 | grep -q '^RESULT'; }
P=$W/b/root/usr/lib/x86_64-linux-gnu/pmix2
export PATH=$W/b/bin:$PATH LD_LIBRARY_PATH=$W/b/lib OPAL_PREFIX=$W/b/root/usr OPAL_SYSCONFDIR=$W/b/root/etc/openmpi \
       PMIX_PREFIX=$P PMIX_LIBDIR=$P/lib PMIX_PKGLIBDIR=$P/lib/pmix HWLOC_PLUGINS_PATH=/nonexistent
mode="Open MPI of the bundle (Debian 12's 4.1)"
if ! smoke; then
  $M 2 $B stack 1 2 2 16 16 16 -steps 1 2>&1 | tail -5
  unset OPAL_PREFIX OPAL_SYSCONFDIR PMIX_PREFIX PMIX_LIBDIR PMIX_PKGLIBDIR
  export PATH=${PATH#$W/b/bin:}
  mkdir -p $W/b/lib0
  for f in $W/b/lib/*; do
    case ${f##*/} in libmpi*|libopen-*|libpmix*|libhwloc*|libevent*|libfabric*|libuc[pmst]*|libpsm*|libibverbs*|librdmacm*|libnl-*|libefa*) ;;
      *) ln -s "$f" $W/b/lib0/ ;; esac
  done
  export LD_LIBRARY_PATH=$W/b/lib0
  command -v mpiexec > /dev/null && smoke || { echo "run.sh: neither the bundle's nor this machine's Open MPI starts 2 ranks"; ldd $B | grep 'not found'; exit 2; }
  mode="this machine's Open MPI ($(mpiexec --version | head -1))"
fi
CONFIGS=(
  "1 mffn 1 1 2 64 64 64" "2 mffn 2 1 2 64 64 64" "2 mffn 1 2 2 64 64 64" "2 mffn 1 2 2 64 64 64 -chunks 0"
  "1 mffn 1 1 2 8 64 64" "2 mffn 2 1 2 8 64 64" "2 mffn 1 2 2 8 64 64" "2 mffn 1 2 2 8 64 64 -chunks 0"
  "1 mffn 1 1 1 8 64 64" "2 mffn 2 1 2 8 64 64"
  "1 stack 1 1 2 64 64 64" "2 stack 2 1 2 64 64 64" "2 stack 1 2 2 64 64 64" "2 stack 1 2 2 64 64 64 -chunks 0"
)
: > $RES
echo "# $(nproc --all) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), ranks bound to cores; $mode" | tee -a $RES
for r in $(seq 1 $R); do
  echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a $RES
  for c in "${CONFIGS[@]}"; do
    set -- $c
    n=$1; shift
    $M $n $B "$@" -steps 3 | grep '^RESULT' | sed "s/\$/ round=$r/" | tee -a $RES
  done
done
