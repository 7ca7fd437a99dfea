#!/usr/bin/env bash
# Writes the man page surge.1 (troff) from surge's own option tables: the jobs (surge --help) and,
# per solver and trainer, the options a deck of that kind reads (surge run|train DECK -help, the
# same text the option getters print, with units, ranges and defaults). make install runs it.
# Usage: manpage.sh SURGE_BINARY INPUTS_DIR > surge.1
set -eu
surge=$(realpath "$1")
inputs=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
esc() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'; }
version=$("$surge" --version | awk '{print $2}')
cat <<HEAD
.TH SURGE 1 "" "surge $version" "User Commands"
.SH NAME
surge \- simulation with in-process neural surrogates (PETSc solvers, Deep Potential, MeshfreeFlowNet, POD-LSTM)
.SH SYNOPSIS
.nf
HEAD
"$surge" --help | sed -n '/^usage:/,$p' | sed 's/^usage: //; s/^       //' | esc
echo ".fi"
echo ".SH DESCRIPTION"
echo ".nf"
"$surge" --help | sed '/^usage:/,$d' | esc
echo ".fi"
echo ".SH OPTIONS"
echo "A deck is YAML; each section is an option prefix: \\fBsim: {t_end: 20}\\fR is \\fB-sim_t_end 20\\fR; the command line beats the deck."
echo "The options below are those of one example deck per solver and per trainer (the decks ship in share/surge/inputs);"
echo "\\fBsurge run DECK -help\\fR lists those of any deck, \\fB-help_petsc\\fR adds PETSc's generic ones."
for spec in "run vlasov/landau.yaml" "run heat/decay2d.yaml" "run md/ar_metal.yaml" "run dft/si64.yaml" \
            "run boussinesq/rb_ra1e4.yaml" "run sst/small.yaml" "ensemble heat/ensemble2d.yaml" \
            "train deepmd/pair.yaml" "train mffn/small.yaml" "train podlstm/sst_small.yaml"; do
  set -- $spec
  echo ".SS surge $1 $2"
  echo ".nf"
  (cd "$tmp" && "$surge" "$1" "$inputs/$2" -help 2>/dev/null) | sed '1,3d' | grep -v '^surge: .*nothing was' | esc || true
  echo ".fi"
done
cat <<'TAIL'
.SH FILES
BASE.h5 (output), BASE.xmf (XDMF sidecar when the run writes fields), BASE.chk.h5 (checkpoint).
.SH SEE ALSO
README.md and docs/ of the source tree: docs/run.md, docs/errors.md, docs/ensemble.md, docs/train.md.
TAIL
