#!/usr/bin/python3
"""The small MeshfreeFlowNet-style ensemble (inputs/boussinesq/ensemble_small.yaml): 2 seeds, p, b,
u, w every 0.25 time units on a uniform (z, x) grid, one field_snapshots dataset.

Checks: the dataset opens through surge info (the validation the loader uses) with kind
field_snapshots and 18 samples of [16, 64]; sample times are k/4 for each member (to 1e-12: t is a sum of steps); the
two members start from different noise (distinct seeds) on the same conductive profile; b stays
within the wall values up to a small overshoot (|b| < 0.5 + 2 x noise); the file written by 2 ranks
(two groups of 1) equals the 1-rank file field by field, bit for bit."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import surgetest as st
import h5py
import numpy as np

deck = st.deck("boussinesq/ensemble_small.yaml")
data = {}
for ranks in (1, 2):
    work = st.workdir(f"boussinesq_ensemble_{ranks}")
    st.surge(["ensemble", deck], work, ranks=ranks)
    path = os.path.join(work, "ensemble_small_ensemble.h5")
    _, info = st.surge(["info", path], work)
    st.check("kind field_snapshots, 18 committed samples" in info, f"{ranks} rank(s): surge info reads the dataset (field_snapshots, 18 samples)")
    with h5py.File(path, "r") as f:
        data[ranks] = {k: f["samples"][k][()] for k in ("p", "b", "u", "w", "time", "member")}
d = data[1]
st.check(all(d[k].shape == (18, 16, 64) for k in "pbuw"), "p, b, u, w are [18, 16, 64] = [member x time, z, x]")
st.check(np.array_equal(d["member"], np.repeat([0, 1], 9)) and np.allclose(d["time"], np.tile(np.arange(9) / 4, 2), rtol=0, atol=1e-12),
         "samples: members 0, 1, times 0, 0.25, ..., 2 (to the round-off of summing dt)")
diff0 = np.abs(d["b"][0] - d["b"][9]).max()
st.check(diff0 > 1e-2, f"members start from different noise (max |b0 - b1| at t = 0: {diff0:.3f})")
st.check(np.abs(d["b"]).max() < 0.5 + 0.2, f"b within the wall values (max |b| = {np.abs(d['b']).max():.3f})")
same = all(d[k].tobytes() == data[2][k].tobytes() for k in d)
st.check(same, "1 and 2 ranks write identical samples")
