#!/usr/bin/env bash
# 1 rank vs 2 ranks. The state is replicated; rank r transforms the z rows and solves the x-modes
# of its share, then rows and modes are gathered. Per row and per mode the arithmetic is the same
# on any rank count except the BLAS products of the z-derivatives (row blocks of D), whose blocking
# may differ: the runs must agree to round-off. Compared: every final diagnostic (relative 1e-10)
# and the final state (max difference relative to max |b|, 1e-10), for the no-slip Ra = 1e4 deck
# through roll growth (t = 40, 400+ steps), a free-slip RK443 run, and an uneven split (nx = 6:
# 3 modes, nz = 17 rows on 2 ranks).
source "$(dirname "$0")/common.sh"
scratch mpi_compare
cases=(
  "noslip|$DECKS/rb_ra1e4.yaml -sim_t_end 40"
  "freeslip|$DECKS/rb_ra1e4.yaml -sim_t_end 20 -boussinesq_walls freeslip -boussinesq_scheme RK443"
  "uneven|$DECKS/rb_ra1e4.yaml -sim_t_end 20 -boussinesq_cells 6,17 -boussinesq_length 1.5,1"
)
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  run r1_$name.log $SURGE run $args -sim_output r1_$name -sim_field_every 0
  run r2_$name.log $MPIEXEC $SURGE run $args -sim_output r2_$name -sim_field_every 0
  grep -q "on 2 rank(s)" r2_$name.log || { echo "FAIL  $name: not run on 2 ranks"; exit 1; }
  paste <(grep "boussinesq final:" r1_$name.log) <(grep "boussinesq final:" r2_$name.log) | awk -v n=$name '
    $3 != $7 || $4 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || $8 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ { bad++; print "not comparable:", $0 }
    { a=$4; b=$8; d=a-b; d=d<0?-d:d; s=a<0?-a:a; r=(s>1e-300)?d/s:d; if ($3=="max_div") r=0; if (r>m) {m=r; k=$3} c++ }
    END { printf "%s: %d diagnostics, max relative difference %.3e (%s)\n", n, c, m, k; exit (c>=10 && !bad && m<1e-10)?0:1 }' \
    || { echo "FAIL  $name: diagnostics differ"; exit 1; }
  /usr/bin/python3 - r1_$name.chk.h5 r2_$name.chk.h5 <<'PY' || exit 1
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r") for f in sys.argv[1:3])
scale = np.abs(a["values/boussinesq_b"][()]).max()
d = max(np.abs(a["values/boussinesq_" + v][()] - b["values/boussinesq_" + v][()]).max() for v in ("psi", "b", "u0"))
print(f"  final state: max difference {d:.3e} (relative {d / scale:.3e})")
sys.exit(0 if d / scale < 1e-10 else 1)
PY
done
echo "ok    1 and 2 ranks agree to round-off"
