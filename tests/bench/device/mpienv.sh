# mpienv.sh -- sourced by the scripts that run a pack.sh archive on a machine without PETSc and MPI:
#   . mpienv.sh; sg_unpack ARCHIVE DIR; sg_mpi DIR 'SMOKE COMMAND'
# sg_unpack unpacks the archive into DIR (emptied first). sg_mpi points PATH and LD_LIBRARY_PATH at it
# and runs Open MPI from the archive, relocated by OPAL_PREFIX and PMIX_* (nothing is written outside
# DIR); where the smoke command (run by eval, e.g. a 2-rank start) fails with it and the machine has an
# mpiexec of its own, that one runs with the archive's other libraries (Open MPI 4.1 keeps its ABI).
# Call the binaries by their paths under DIR/b/bin. sg_mpi sets SG_MPI_MODE to the Open MPI in use and
# returns non-zero when neither starts.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

sg_unpack() {
  rm -rf "$2" && mkdir -p "$2" && tar -C "$2" -xf "$1" || { echo "mpienv.sh: cannot unpack $1"; return 2; }
}

sg_mpi() {
  local W=$1 smoke=$2 P=$1/b/root/usr/lib/x86_64-linux-gnu/pmix2 f
  export PATH=$W/b/bin:$PATH LD_LIBRARY_PATH=$W/b/lib OPAL_PREFIX=$W/b/root/usr OPAL_SYSCONFDIR=$W/b/root/etc/openmpi \
         PMIX_PREFIX=$P PMIX_LIBDIR=$P/lib PMIX_PKGLIBDIR=$P/lib/pmix HWLOC_PLUGINS_PATH=/nonexistent
  SG_MPI_MODE="Open MPI of the archive (Debian 12's 4.1)"
  eval "$smoke" && return 0
  echo "mpienv.sh: the archive's Open MPI does not start; trying this machine's"
  unset OPAL_PREFIX OPAL_SYSCONFDIR PMIX_PREFIX PMIX_LIBDIR PMIX_PKGLIBDIR
  export PATH=${PATH#$W/b/bin:}
  mkdir -p $W/b/lib0
  for f in $W/b/lib/*; do
    case ${f##*/} in libmpi*|libopen-*|libpmix*|libhwloc*|libevent*|libfabric*|libuc[pmst]*|libpsm*|libibverbs*|librdmacm*|libnl-*|libefa*) ;;
      *) ln -sf "$f" $W/b/lib0/ ;; esac
  done
  export LD_LIBRARY_PATH=$W/b/lib0
  command -v mpiexec > /dev/null && eval "$smoke" || { echo "mpienv.sh: neither the archive's nor this machine's Open MPI starts"; return 2; }
  SG_MPI_MODE="this machine's Open MPI ($(mpiexec --version | head -1))"
}
