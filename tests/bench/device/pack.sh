#!/bin/bash
# pack.sh -- pack binaries with what they need to run on a machine that has no PETSc and no MPI (such as
# a GPU box with 16 cores) into one archive; mpienv.sh beside this file sets them up there.
#   tests/bench/device/pack.sh ARCHIVE [-l LIB]... BINARY...
# ARCHIVE (.tar.xz, as small as xz makes it: a lent machine takes at most 64 MiB with the repository)
# holds b/bin: the binaries and Open MPI's mpiexec; b/lib: each -l LIB (taking the place of the system's
# library of that name, e.g. a stand-in for PETSc) and every shared library the binaries, mpiexec and
# Open MPI's plugins load, except the C runtime's (libc, libm, libstdc++, libgcc_s:
# the host's newer ones serve); b/root: Open MPI's plugin, PMIx and help-file trees at their Debian paths.
# Run from anywhere; the paths given are taken as they are.
set -e
[ $# -ge 2 ] || { echo "usage: pack.sh ARCHIVE [-l LIB]... BINARY..."; exit 2; }
OUTF=$(realpath -m "$1"); shift
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
mkdir -p $S/b/lib $S/b/bin $S/b/root
while [ "$1" = -l ]; do cp -L "$2" $S/b/lib/; shift 2; done
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
mkdir -p "$(dirname "$OUTF")"
XZ_OPT="-9e -T0" tar -C $S -cJf "$OUTF" b
echo "pack.sh: $OUTF $(du -h "$OUTF" | cut -f1) ($(ls $S/b/lib | wc -l) libraries)"
