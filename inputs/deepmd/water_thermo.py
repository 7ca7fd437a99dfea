#!/usr/bin/env python3
"""Is an NVT run canonical at its target temperature? Reads the `md thermo:` lines of a surge MD log
(the output of `surge run inputs/deepmd/water_nvt.yaml`) and prints, over steps >= START:
  - the mean temperature with its standard error from block averages (10 blocks: successive thermo
    lines are correlated, so the naive error would be too small),
  - the standard deviation of the instantaneous temperature against the canonical value
    sigma_T = T0 sqrt(2 / N_f), N_f = 3 N - 3 degrees of freedom (total momentum fixed), the
    fluctuation of the kinetic temperature in the canonical ensemble (a velocity-rescaling thermostat
    would give ~0, a broken one too large),
  - the drift of the conserved quantity (Econserved: energy plus the thermostat's) per atom and ps.

  water_thermo.py LOG NATOMS T0 DT_PS START_STEP"""
import sys
import numpy as np

if len(sys.argv) != 6:
    sys.exit(__doc__)
log, n, T0, dt, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rows, cols = [], None
for line in open(log):
    if not line.startswith("md thermo:"):
        continue
    f = line.split()[2:]
    if f[0] == "Step":
        cols = [c.split("[")[0] for c in f]  # names without their units: Temp[K] -> Temp
    else:
        rows.append([float(v) for v in f])
if cols is None or not rows:
    sys.exit(f"water_thermo.py: no 'md thermo:' lines in {log}")
a = np.array(rows)
step, T, Ec = a[:, cols.index("Step")], a[:, cols.index("Temp")], a[:, cols.index("Econserved")]
m = step >= start
T, Ec, step = T[m], Ec[m], step[m]
nb = 10
blocks = np.array([b.mean() for b in np.array_split(T, nb)])
sem = blocks.std(ddof=1) / np.sqrt(nb)
nf = 3 * n - 3
sig_c = T0 * np.sqrt(2.0 / nf)
sig = T.std(ddof=1)
# error of the measured sigma: block standard deviations
bsig = np.array([b.std(ddof=1) for b in np.array_split(T, nb)])
drift = np.polyfit(step * dt, Ec, 1)[0] / n
print(f"{len(T)} thermo samples, steps {int(step[0])}..{int(step[-1])} ({(step[-1] - step[0]) * dt:.2f} ps)")
print(f"mean T {T.mean():.1f} K +- {sem:.1f} (block standard error) against the target {T0:.1f} K: {T.mean() - T0:+.1f} K = {(T.mean() - T0) / sem:+.1f} standard errors")
print(f"sigma_T {sig:.1f} K +- {bsig.std(ddof=1) / np.sqrt(nb):.1f} against canonical T0 sqrt(2/N_f) = {sig_c:.1f} K (N_f = {nf}): ratio {sig / sig_c:.2f}")
print(f"Econserved drift {drift * 1e3:+.3f} meV/atom/ps (range {1e3 * (Ec.max() - Ec.min()) / n:.3f} meV/atom)")
