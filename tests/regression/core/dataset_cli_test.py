"""surge dataset import/export and surge info on the real DFT water frames (DeePMD-kit format)."""
import glob
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_dataset_cli")
water = os.path.join(ROOT, "tests", "data", "water_dft")
dirs = [os.path.join(water, f"data_{i}") for i in (0, 3)]

surge(["dataset", "import", "water.h5", *dirs], w)
ref = [np.concatenate([np.load(f) for f in sorted(glob.glob(f"{d}/set.*/force.npy"))]) for d in dirs]
with h5py.File(f"{w}/water.h5", "r") as f:
    n = int(f.attrs["nsamples"])
    force = f["samples/force"][:n]
check(n == sum(len(r) for r in ref), f"import keeps every frame ({n})")
check(np.array_equal(force.reshape(n, -1), np.concatenate(ref).reshape(n, -1)), "imported forces equal the .npy files bit for bit")

rc, out = surge(["info", "water.h5"], w)
check("md_frames" in out and f"{n} committed samples" in out and "type_map: O H" in out, "surge info summarises a dataset")

surge(["dataset", "export", "water.h5", "out", "-set_size", "50"], w)
sets = sorted(glob.glob(f"{w}/out/set.*"))
check(len(sets) == (n + 49) // 50, f"export writes {len(sets)} sets of at most 50 frames")
exported = np.concatenate([np.load(f"{s}/force.npy") for s in sets])
check(np.array_equal(exported.reshape(n, -1), force.reshape(n, -1)), "exported forces equal the dataset's")
check(open(f"{w}/out/type_map.raw").read().split() == ["O", "H"], "type_map.raw written")

rc, out = surge(["dataset", "import", "water.h5", dirs[0]], w, expect_ok=False)
check("-overwrite" in out, "import refuses to replace an existing dataset and names -overwrite")
rc, out = surge(["dataset", "import", "again.h5", os.path.join(water, "no_such_dir")], w, expect_ok=False)
check("type.raw" in out, "a directory without type.raw is refused by name")
rc, out = surge(["dataset", "frobnicate"], w, expect_ok=False)
check("unknown verb" in out, "unknown dataset verb refused")
