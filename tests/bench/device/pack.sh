#!/bin/bash
# pack.sh -- pack binaries with what they need to run on a machine that has no PETSc and no MPI (such as
# a GPU box with 16 cores) into one archive; mpienv.sh beside this file sets them up there.
#   tests/bench/device/pack.sh ARCHIVE [-s] [-l LIB]... BINARY...
# ARCHIVE (.tar.xz, as small as xz makes it: a lent machine takes at most 64 MiB with the repository)
# holds b/bin: the binaries and Open MPI's mpiexec; b/lib: each -l LIB (taking the place of the system's
# library of that name, e.g. a stand-in for PETSc) and every shared library the binaries, mpiexec and
# Open MPI's plugins load, except the C runtime's (libc, libm, libstdc++, libgcc_s:
# the host's newer ones serve); b/root: Open MPI's plugin, PMIx and help-file trees at their Debian paths.
# -s (slim, for a single-node run where the archive must be small): strip the binaries and the -l
# libraries; leave out Open MPI's network-fabric (OFI, UCX, PSM, verbs), OpenSHMEM and Slurm/Flux
# plugins and then every library that nothing left loads (checked with ldd, listed); where OpenBLAS
# exports every symbol of LAPACK, liblapack.so.3 becomes a link to libopenblas.so.0 (Debian's
# OpenBLAS LAPACK is the same code; the loader sees one file); and the libraries of LEFT_OUT_LIBS below
# (PETSc's external solvers and partitioners, SLEPc's PARPACK, X11, HDF5's S3 driver's curl and
# OpenSSL, with everything only they load: ~60 MB, ~10 MB of xz) are replaced by stand-ins of the same
# SONAME that define every symbol the rest imports from them (same symbol versions) as a function
# that stops the program with "surge bundle: SYMBOL of LIB was left out of this bundle". Such a bundle
# serves runs that call none of them (the NN trainings of tests/bench/nn/surrogates_cuda.sh; a
# PETSc solve with -pc_type hypre would stop with that line). ldd -r must still resolve every
# library and symbol of the binaries, and ldd every library of the kept plugins, inside b/lib, else
# pack.sh stops.
# Run from anywhere; the paths given are taken as they are.
set -e
[ $# -ge 2 ] || { echo "usage: pack.sh ARCHIVE [-s] [-l LIB]... BINARY..."; exit 2; }
OUTF=$(realpath -m "$1"); shift
SLIM=0
[ "$1" = -s ] && { SLIM=1; shift; }
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
mkdir -p $S/b/lib $S/b/bin $S/b/root
LEFT_OUT_LIBS="libHYPRE-2.26.0.so libspqr.so.2 libumfpack.so.5 libamd.so.2 libcholmod.so.3 libklu.so.1 libdmumps-5.5.so
  libscalapack-openmpi.so.2.2 libsuperlu.so.5 libsuperlu_dist.so.8 libtrilinos_ml.so.13.2 libptscotch-7.0.so libX11.so.6
  libparpack.so.2 libcurl.so.4 libcrypto.so.3"
standin() { # standin N (in b/lib): see -s above; the real library is in $S/real
  local n=$1 c=$S/standin.c v=$S/standin.map a b t sym name ver
  nm -D --undefined-only ../bin/* $(ls *.so* | grep -v -x -F -f <(printf '%s\n' $LEFT_OUT_LIBS)) 2>/dev/null |
    awk 'NF >= 2 {sub(/@.*/, "", $NF); print $NF}' | sort -u > $S/undef
  printf '#include <stdio.h>\n#include <stdlib.h>\nstatic void left_out(const char *s) { fprintf(stderr, "surge bundle: %%s of %s was left out of this bundle\\n", s); abort(); }\n' "$n" > $c
  : > $S/vers
  nm -D --defined-only -S --with-symbol-versions $S/real/$n | awk 'NF >= 3' | while read -r a b t sym; do
    [ -z "$sym" ] && { sym=$t; t=$b; b=0; }
    name=${sym%%@*}; ver=${sym#*@}; ver=${ver#@}; [ "$ver" = "$sym" ] && ver=""
    grep -qxF "$name" $S/undef || continue
    case $t in
      T|W|i) echo "void $name(void) { left_out(\"$name\"); }" >> $c ;;
      *) echo "char $name[0x$b + 1];" >> $c ;;  # data: zeroed, of its size
    esac
    if [ -n "$ver" ]; then echo "$ver $name" >> $S/vers; fi  # (an && list here would end the loop with 1 under set -e)
  done
  : > $v
  for ver in $(cut -d' ' -f1 $S/vers | sort -u); do
    echo "$ver { global: $(awk -v V=$ver '$1 == V {printf "%s; ", $2}' $S/vers) };" >> $v
  done
  rm -f $n
  gcc -w -shared -fPIC -o $n -Wl,-soname,$n $([ -s $v ] && echo -Wl,--version-script=$v) $c
  echo "pack.sh -s: $n replaced by a stand-in ($(grep -c left_out $c) symbols)"
}
slim() { # slim B: see -s above
  local B=$1 M=$1/root$ompi/lib/openmpi3 f n
  strip --strip-unneeded $B/bin/* $B/lib/*.so* 2>/dev/null || true
  mkdir -p $S/real && cp -a $B/lib/. $S/real/
  (cd $B/lib && for n in $LEFT_OUT_LIBS; do if [ -f $n ]; then standin $n; fi; done)
  (cd $M && rm -f mca_atomic_* mca_btl_ofi.so mca_btl_openib.so mca_mtl_* mca_osc_ucx.so mca_pml_ucx.so mca_pml_cm.so \
    mca_spml_* mca_sshmem_* mca_memheap_* mca_scoll_* mca_*_slurm.so mca_*_flux.so mca_schizo_jsm.so mca_ras_gridengine.so)
  { for f in $B/bin/* $M/*.so $B/root$pmix/lib/pmix/*.so; do LD_LIBRARY_PATH=$B/lib ldd $f; done; } 2>/dev/null |
    awk '/=>/{print $1}' | sort -u > $S/needed
  for f in $B/lib/*; do
    n=${f##*/}
    grep -qxF "$n" $S/needed || [[ " $KEEP " == *" $n "* ]] || [ -L "$f" ] || { echo "pack.sh -s: leaving out $n (nothing left loads it)"; rm -f "$f"; }
  done
  if [ -f $B/lib/liblapack.so.3 ] && [ -f $B/lib/libopenblas.so.0 ] &&
     [ -z "$(comm -23 <(nm -D --defined-only $B/lib/liblapack.so.3 | awk '$2=="T"{print $3}' | sort) \
                      <(nm -D --defined-only $B/lib/libopenblas.so.0 | awk '$2=="T"{print $3}' | sort))" ]; then
    rm $B/lib/liblapack.so.3 && ln -s libopenblas.so.0 $B/lib/liblapack.so.3 && echo "pack.sh -s: liblapack.so.3 -> libopenblas.so.0"
  fi
  # binaries: every library and symbol; plugins: every library (their symbols come from the process)
  if { for f in $B/bin/*; do LD_LIBRARY_PATH=$B/lib ldd -r $f; done
       for f in $M/*.so; do LD_LIBRARY_PATH=$B/lib ldd $f; done; } 2>&1 | grep -E "not found|undefined symbol|no version"; then
    echo "pack.sh -s: a library above is missing after slimming: stopping"; exit 2
  fi
}
KEEP=""
while [ "$1" = -l ]; do cp -L "$2" $S/b/lib/; KEEP="$KEEP ${2##*/}"; shift 2; done
BINS=("$@")
for f in "${BINS[@]}"; do [ -x "$f" ] || { echo "pack.sh: $f is not an executable (build it first)"; exit 2; }; cp "$f" $S/b/bin/; done
ORTE=$(readlink -f "$(command -v mpiexec)")
cp "$ORTE" $S/b/bin/mpiexec
ompi=/usr/lib/x86_64-linux-gnu/openmpi
pmix=/usr/lib/x86_64-linux-gnu/pmix2
{ for f in "${BINS[@]}"; do LD_LIBRARY_PATH=$S/b/lib ldd "$f"; done; ldd "$ORTE"
  for f in $ompi/lib/openmpi3/*.so $pmix/lib/pmix/*.so; do ldd $f; done; } 2>/dev/null |
  awk '/=>/ && $3 ~ /^\// {print $1, $3}' | sort -u |
  grep -v -E '^(libc|libm|libresolv|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so|^ld-linux' |
  while read -r name path; do [ -e $S/b/lib/"$name" ] || cp -L "$path" $S/b/lib/"$name"; done
for d in $ompi $pmix /usr/share/openmpi /usr/share/pmix /etc/openmpi /etc/pmix; do
  [ -e $d ] && mkdir -p $S/b/root$(dirname $d) && cp -a $d $S/b/root$d
done
rm -rf $S/b/root$ompi/include $S/b/root$pmix/include  # headers: not needed to run, and 7 MB
[ $SLIM = 1 ] && slim $S/b
mkdir -p "$(dirname "$OUTF")"
XZ_OPT="-9e -T0" tar -C $S -cJf "$OUTF" b
echo "pack.sh: $OUTF $(du -h "$OUTF" | cut -f1) ($(ls $S/b/lib | wc -l) libraries)"
