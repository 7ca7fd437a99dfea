"""Driver + output on the reference heat solver: exact discrete solution, conservation, XDMF,
1 vs 2 ranks, and bit-identical restart."""
import os
import sys
import xml.etree.ElementTree as ET
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_heat")
d = deck("heat/decay2d.yaml")
surge(["run", d, "-sim_output", "one"], w)
g = diagnostics(f"{w}/one.h5")

# FTCS multiplies the mode by g per step exactly; the solver tracks that product, so the field
# must equal it to round-off: 1e-13 absolute on an O(1) field after ~70 steps.
check(g["discrete_error"].max() < 1e-13, f"field equals the exact discrete solution (max err {g['discrete_error'].max():.2e})")
# The mean (k = 0 mode) is untouched by the stencil: conserved to round-off.
check(np.abs(g["mean"] - 0.5).max() < 1e-14, f"mean conserved to round-off ({np.abs(g['mean'] - 0.5).max():.1e})")
# Scheme vs continuum decay rate: O(h^2 + dt) agreement; at 32x24 cells the gap is ~1%.
rate = report(f"{w}/one.h5", "decay_rate")
check(abs(rate[0] / rate[1] - 1) < 0.02, f"decay rate {rate[0]:.4f} within 2% of kappa|k|^2 = {rate[1]:.4f}")
check(g["time"][-1] == 0.02 and g["step"][0] == 0, "diagnostics span t = 0 .. t_end")

# XDMF sidecar parses and points at datasets that exist with the declared shape.
root = ET.parse(f"{w}/one.xmf").getroot()
items = [di for di in root.iter("DataItem") if di.get("Format") == "HDF"]
check(len(items) >= 2, f"xmf lists {len(items)} snapshots")
with h5py.File(f"{w}/one.h5", "r") as f:
    for di in items:
        path = di.text.split(":")[1]
        shape = tuple(int(x) for x in di.get("Dimensions").split())
        check(path in f and f[path].shape == shape, f"xmf item {path} exists with shape {shape}")

# 2 ranks: same diagnostics to round-off. Sums are reduced in a different order, so allow 1e-14.
surge(["run", d, "-sim_output", "two"], w, ranks=2)
g2 = diagnostics(f"{w}/two.h5")
for k in ("mode_amplitude", "l2", "mean"):
    err = np.abs(g2[k] - g[k]).max()
    check(err < 1e-14, f"1 vs 2 ranks agree on {k} ({err:.1e})")
f1, f2 = last_field(f"{w}/one.h5", "u"), last_field(f"{w}/two.h5", "u")
check(np.array_equal(f1, f2), "1 vs 2 ranks: final field identical bit for bit (stencil has no reductions)")

# Restart: stop at step 30, continue from the checkpoint; must match the uninterrupted run exactly.
surge(["run", d, "-sim_output", "rst", "-sim_max_steps", "30"], w)
surge(["run", d, "-sim_output", "rst", "-restart", "rst.chk.h5"], w)
gr = diagnostics(f"{w}/rst.h5")
check(len(gr["time"]) == len(g["time"]), f"restarted run has {len(gr['time'])} records like the uninterrupted one")
check(same_arrays(gr, g), "restarted diagnostics bit-identical")
check(np.array_equal(last_field(f"{w}/rst.h5", "u"), f1), "restarted final field bit-identical")

# Restart from a checkpoint of a different deck: refused, naming what differs.
rc, out = surge(["run", d, "-sim_output", "other", "-heat_cells", "16,24", "-restart", "rst.chk.h5"], w, expect_ok=False)
check("heat_cells_0" in out and "32" in out and "16" in out, "restart from another deck names the differing quantity")
# A truncated checkpoint is refused with a clear message.
with open(f"{w}/rst.chk.h5", "rb") as f:
    data = f.read()
with open(f"{w}/trunc.chk.h5", "wb") as f:
    f.write(data[: len(data) // 3])
rc, out = surge(["run", d, "-sim_output", "rst2", "-restart", "trunc.chk.h5"], w, expect_ok=False)
check("trunc.chk.h5" in out and ("truncated" in out or "damaged" in out), "truncated checkpoint refused with a clear message")
with open(f"{w}/foreign.h5", "wb") as f:
    f.write(b"not an hdf5 file at all" * 10)
rc, out = surge(["run", d, "-sim_output", "rst3", "-restart", "foreign.h5"], w, expect_ok=False)
check("not an HDF5 file" in out, "foreign file refused")
rc, out = surge(["info", "one.h5"], w)
check("diagnostics/mode_amplitude" in out and "provenance" in out, "surge info lists the output's contents")
