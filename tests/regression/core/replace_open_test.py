"""Replacing a file that another process has open (a viewer, an analysis script, a rank of a killed
job still running): the new run writes a new file and the reader keeps reading the old one.
Before: HDF5's H5F_ACC_TRUNC truncated the old file under the reader, then failed on HDF5's file lock
(a PETSc traceback; the old data gone, the new file not written). Checked for the three fresh-create
paths: a run's output (1 and 2 ranks), `surge dataset import -overwrite`, an MD run's H5MD
trajectory."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_replace_open")


def replaced_under_reader(path, rerun, what, probe, expect_new):
    """Open path with h5py (HDF5's shared lock), rerun writing different content, then check that the
    reader still sees the old content in full and that the new file holds the new content."""
    with h5py.File(os.path.join(w, path), "r") as f:
        before = probe(f)
        rc, out = rerun()
        check(rc == 0, f"{what}: the run that replaces {path} succeeds while a reader holds it open")
        check(probe(f) == before, f"{what}: the reader still reads the old file in full ({before[0]} rows)")
    with h5py.File(os.path.join(w, path), "r") as f:
        got = probe(f)
        check(got[0] == expect_new, f"{what}: the new {path} is complete ({got[0]} rows, expected {expect_new})")


def diag(f):
    t = f["diagnostics/time"][()]
    return (int(t.shape[0]), float(np.sum(t)))


heat = ["run", deck("heat/decay2d.yaml"), "-sim_output", "h"]
for ranks in (1, 2):
    surge(heat + ["-sim_max_steps", "20"], w)
    replaced_under_reader("h.h5", lambda: surge(heat + ["-sim_max_steps", "10"], w, ranks=ranks), f"run output on {ranks} rank(s)", diag, 11)

data = os.path.join(ROOT, "tests", "data", "water_dft")
surge(["dataset", "import", "set.h5", os.path.join(data, "data_0")], w)
replaced_under_reader("set.h5", lambda: surge(["dataset", "import", "set.h5", os.path.join(data, "data_3"), "-overwrite"], w),
                      "dataset import -overwrite", lambda f: (int(f.attrs["nsamples"]), float(np.sum(f["samples/coord"][()]))), 80)

md = ["run", deck("md/ar_metal.yaml"), "-sim_output", "m", "-md_traj_file", "m.h5md", "-md_traj_every", "1"]
surge(md + ["-sim_max_steps", "8"], w)


def traj(f):
    s = f["particles/all/position/step"][()]
    return (int(s.shape[0]), float(np.sum(f["particles/all/position/value"][()])))


replaced_under_reader("m.h5md", lambda: surge(md + ["-sim_max_steps", "3"], w), "H5MD trajectory", traj, 4)
print("replace-open checks passed")
