#!/bin/bash
# bundle.sh -- pack bin/surge (with PETSc, SLEPc, HDF5, Open MPI and every library they load:
# tests/bench/device/pack.sh) to run the architecture search on a machine that has none of them, such
# as a GPU box with 16 cores (docs/podlstm.md, "The search on 16 cores"):
#   tests/bench/podlstm/device/bundle.sh [DIR]      (default .devbundle/podlstm, at the repository root:
#                                                    beside, not over, the parallel benchmark's bundle)
# DIR gets surge.tar.xz (~38 MB) and the scripts that run it there; on that machine, in a copy of the
# repository (the decks are read from inputs/): bash DIR/run.sh OUTDIR [EVALUATIONS]. List DIR in
# .git/info/exclude to keep it out of git; copy only DIR (the whole .devbundle may exceed what a lent
# machine takes).
set -e
cd "$(dirname "$0")/../../../.."
DIR=${1:-.devbundle/podlstm}
make -s bin/surge > /dev/null
mkdir -p $DIR
tests/bench/device/pack.sh $DIR/surge.tar.xz bin/surge
cp tests/bench/podlstm/device/run.sh tests/bench/device/mpienv.sh $DIR/
