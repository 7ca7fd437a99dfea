#!/usr/bin/python3
"""DeePMD-kit import/export of the real DFT water data (tests/data/water_dft), checked against numpy.

1. import data_0..3 into one md_frames file; frame count (400 = 80+160+80+80) and every value of
   coord/box/energy/force must equal numpy's np.load of the .npy files EXACTLY (float32 stored as
   float32: no rounding is allowed, so the tolerance is zero); type, type_map, member ids as well.
2. export data_1 (two sets of 80) with set size 80: every file is byte-identical to the original
   (same .npy header text and padding as numpy writes, same raw files).
3. round trip: export the 400-frame file, import it again: all arrays equal bit for bit.
4. bad .npy inputs (big-endian, Fortran order, int64, truncated) are rejected with a message naming
   the file and the problem.
Usage: water_import.py TOOL WATER_DIR
"""
import filecmp, os, shutil, subprocess, sys, tempfile
import numpy as np
import h5py

tool, water = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="sg_water_")
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(*args, expect_ok=True):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(f"{tool} {' '.join(args)} failed")
    return p


dirs = [f"{water}/data_{k}" for k in range(4)]
a_h5 = f"{tmp}/all.h5"
run("import", a_h5, *dirs)

# 1. values against numpy
ref = {k: [] for k in ("coord", "box", "energy", "force")}
members = []
for d, sysdir in enumerate(dirs):
    for s in sorted(x for x in os.listdir(sysdir) if x.startswith("set.")):
        e = np.load(f"{sysdir}/{s}/energy.npy")
        for k in ref:
            ref[k].append(np.load(f"{sysdir}/{s}/{k}.npy"))
        members.append(np.full(len(e), d, dtype=np.int64))
types = np.loadtxt(f"{dirs[0]}/type.raw", dtype=np.int32)
tmap = open(f"{dirs[0]}/type_map.raw").read().split()
with h5py.File(a_h5, "r") as f:
    n = int(f.attrs["nsamples"])
    check(n == 400, f"frame count {n} == 400 (80+160+80+80)")
    check(int(f.attrs["surge_dataset_version"]) == 1, "schema version 1")
    check(f.attrs["kind"] in (b"md_frames", "md_frames"), "kind md_frames")
    for k in ref:
        r = np.concatenate(ref[k])
        h = f["samples"][k][:n]
        if k in ("coord", "force"):
            check(h.shape == (n, 192, 3), f"{k} shape {h.shape} == (400,192,3)")
            r = r.reshape(n, 192, 3)
        elif k == "box":
            check(h.shape == (n, 9), f"box shape {h.shape}")
        check(h.dtype == r.dtype == np.float32, f"{k} stays float32 ({h.dtype})")
        check(np.array_equal(h, r), f"{k} equals numpy exactly (max |diff| {np.max(np.abs(h.astype(float) - r.astype(float))):.3g})")
    check(np.array_equal(f["static"]["type"][:], types), "type equals type.raw")
    check([x.decode() for x in f["static"]["type_map"][:]] == tmap, f"type_map {tmap}")
    check(np.array_equal(f["samples"]["member"][:n], np.concatenate(members)), "member id = source directory index")
    check(f["samples"]["coord"].chunks[0] >= 1 and f["samples"]["coord"].maxshape[0] is None, "chunked, unlimited leading dimension")

# 2. byte-identical export of data_1 (two sets of 80 frames)
d1 = f"{tmp}/d1.h5"
run("import", d1, dirs[1])
run("export", d1, f"{tmp}/d1_exp", "80")
same = True
for rel in ["type.raw", "type_map.raw"] + [f"set.00{s}/{k}.npy" for s in (0, 1) for k in ("coord", "box", "energy", "force")]:
    eq = filecmp.cmp(f"{dirs[1]}/{rel}", f"{tmp}/d1_exp/{rel}", shallow=False)
    same &= eq
    if not eq:
        print("  differs:", rel)
check(same, "export of data_1 is byte-identical to the original files (10 files)")

# 3. round trip of the 400-frame file
run("export", a_h5, f"{tmp}/all_exp")
b_h5 = f"{tmp}/back.h5"
run("import", b_h5, f"{tmp}/all_exp")
with h5py.File(a_h5, "r") as fa, h5py.File(b_h5, "r") as fb:
    for k in ("coord", "box", "energy", "force"):
        x, y = fa["samples"][k][:], fb["samples"][k][:]
        check(x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"round trip {k}: bit for bit")
    check(fa["static"]["type"][:].tobytes() == fb["static"]["type"][:].tobytes(), "round trip type")
    check(list(fa["static"]["type_map"][:]) == list(fb["static"]["type_map"][:]), "round trip type_map")
e = np.load(f"{tmp}/all_exp/set.000/coord.npy")
check(e.shape == (400, 576) and e.dtype == np.float32, f"numpy reads the export: {e.shape} {e.dtype}")

# 4. bad inputs
bad_cases = {
    "big-endian": (lambda a: a.astype(">f4"), "'>f4' is not supported"),
    "fortran": (lambda a: np.asfortranarray(a), "Fortran order"),
    "int64": (lambda a: a.astype(np.int64), "'<i8' is not supported"),
}
for name, (conv, msg) in bad_cases.items():
    bd = f"{tmp}/bad_{name}"
    shutil.copytree(dirs[0], bd)
    os.chmod(f"{bd}/set.000", 0o755)
    a = np.load(f"{bd}/set.000/coord.npy").reshape(80, 576)
    if name == "fortran":
        a = a.reshape(80, 576)
    path = f"{bd}/set.000/coord.npy"
    os.chmod(path, 0o644)
    np.save(path, conv(a))
    p = run("import", f"{tmp}/bad.h5", bd, expect_ok=False)
    check(p.returncode != 0 and msg in p.stderr and "coord.npy" in p.stderr, f"{name} coord.npy rejected naming the file: '{msg}'")
bd = f"{tmp}/bad_trunc"
shutil.copytree(dirs[0], bd)
os.chmod(f"{bd}/set.000", 0o755)
os.chmod(f"{bd}/set.000/force.npy", 0o644)
os.truncate(f"{bd}/set.000/force.npy", 100000)
p = run("import", f"{tmp}/bad.h5", bd, expect_ok=False)
check(p.returncode != 0 and "force.npy" in p.stderr and "truncated" in p.stderr, "truncated force.npy rejected")

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(fails)} failures")
sys.exit(1 if fails else 0)
