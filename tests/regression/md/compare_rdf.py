#!/usr/bin/python3
"""Compare two g(r) text files (columns r g): same bins required.

Usage: compare_rdf.py OURS REF MAXABS RMS
Asserts max |g - g_ref| <= MAXABS and the RMS difference <= RMS over all bins, and that the first
peak position agrees to one bin. Prints the figures (they go into docs/md.md)."""
import sys
import numpy as np

ours, ref = (np.loadtxt(f, comments="#") for f in sys.argv[1:3])
maxabs_tol, rms_tol = float(sys.argv[3]), float(sys.argv[4])
if ours.shape != ref.shape or np.abs(ours[:, 0] - ref[:, 0]).max() > 1e-5:
    sys.exit(f"bins differ: {ours.shape} vs {ref.shape}")
d = ours[:, 1] - ref[:, 1]
maxabs, rms = np.abs(d).max(), np.sqrt(np.mean(d * d))
p_ours, p_ref = ours[np.argmax(ours[:, 1]), 0], ref[np.argmax(ref[:, 1]), 0]
dr = ref[1, 0] - ref[0, 0]
print(f"g(r): max|dg| = {maxabs:.4f} at r = {ours[np.argmax(np.abs(d)), 0]:.4f} (tol {maxabs_tol}), rms dg = {rms:.4f} (tol {rms_tol}); "
      f"first peak {p_ours:.4f} (ours) vs {p_ref:.4f} (LAMMPS), height {ours[:, 1].max():.4f} vs {ref[:, 1].max():.4f}")
ok = maxabs <= maxabs_tol and rms <= rms_tol and abs(p_ours - p_ref) <= 1.01 * dr
sys.exit(0 if ok else 1)
