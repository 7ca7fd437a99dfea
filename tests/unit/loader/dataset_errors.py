#!/usr/bin/python3
"""Dataset robustness: crash-safe append and clear errors for bad files.

- crash: test_dataset crash writes 4 rows past the 5 committed ones and dies before the commit.
  The file must still open, h5py must see the extra rows on disk (the crash really happened
  mid-append) while nsamples stays 5; test_dataset verify then checks values and re-appends.
- every bad file must make `test_dataset_tool info` (the SgDatasetOpen path the loader uses too)
  exit nonzero with a message naming the file and the problem:
  truncated copy (truncate -s), foreign HDF5, not HDF5 at all, unknown schema version, missing field.
Usage: dataset_errors.py BUILD_DIR
"""
import os, shutil, subprocess, sys, tempfile
import h5py
import numpy as np

bdir = sys.argv[1]
tool = f"{bdir}/test_dataset_tool"
tds = f"{bdir}/test_dataset"
tmp = tempfile.mkdtemp(prefix="sg_dserr_")
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


good = f"{tmp}/good.h5"
p = run(tds, "basic", good)
check(p.returncode == 0, "basic create/append/read")
print(p.stdout, p.stderr[-2000:])

# crash mid-append
crash = f"{tmp}/crash.h5"
shutil.copy(good, crash)
p = run(tds, "crash", crash)
with h5py.File(crash, "r") as f:
    rows, ns = f["samples"]["coord"].shape[0], int(f.attrs["nsamples"])
check(rows == 9 and ns == 5, f"after the crash: {rows} rows on disk, nsamples {ns} (expect 9 and 5)")
p = run(tds, "verify", crash)
print(p.stdout, p.stderr[-2000:])
check(p.returncode == 0, "verify after crash")


def expect_error(path, needles, what):
    p = run(tool, "info", path)
    msg = p.stderr + p.stdout
    ok = p.returncode != 0 and path in msg and all(n in msg for n in needles)
    check(ok, f"{what}: error names the file and says {needles}")
    if not ok:
        print(msg[-1500:])


# truncated copies: cut the file in half and to just past the superblock
for frac in (0.5, 0.02):
    t = f"{tmp}/trunc_{frac}.h5"
    shutil.copy(good, t)
    subprocess.run(["truncate", "-s", str(int(os.path.getsize(good) * frac)), t], check=True)
    expect_error(t, ["truncated"], f"truncated to {frac:.0%}")
t = f"{tmp}/trunc_head.h5"
shutil.copy(good, t)
subprocess.run(["truncate", "-s", "100", t], check=True)
expect_error(t, ["truncated"], "truncated to 100 bytes")

# not HDF5
t = f"{tmp}/text.h5"
open(t, "w").write("hello\n" * 100)
expect_error(t, ["not an HDF5 file"], "text file")

# foreign HDF5 (valid file, not ours)
t = f"{tmp}/foreign.h5"
with h5py.File(t, "w") as f:
    f["x"] = np.arange(10.0)
expect_error(t, ["not a surge dataset", "surge_dataset_version"], "foreign HDF5")

# unknown schema version
t = f"{tmp}/v7.h5"
shutil.copy(good, t)
with h5py.File(t, "r+") as f:
    f.attrs["surge_dataset_version"] = np.int32(7)
expect_error(t, ["schema version 7", "reads version 1"], "unknown version")

# missing field listed in sample_fields
t = f"{tmp}/nofield.h5"
shutil.copy(good, t)
with h5py.File(t, "r+") as f:
    del f["samples"]["force"]
expect_error(t, ["/samples/force is missing"], "missing /samples/force")

# required md_frames field absent from the list too
t = f"{tmp}/nofield2.h5"
shutil.copy(good, t)
with h5py.File(t, "r+") as f:
    del f["samples"]["energy"]
    f.attrs["sample_fields"] = np.bytes_(b"coord,box,force,virial,member,params")
expect_error(t, ["lacks the required field /samples/energy"], "md_frames without energy")

# a field shorter than the committed count
t = f"{tmp}/short.h5"
shutil.copy(good, t)
with h5py.File(t, "r+") as f:
    f.attrs["nsamples"] = np.int64(50)
expect_error(t, ["nsamples says 50"], "nsamples past the rows")

# missing static type
t = f"{tmp}/notype.h5"
shutil.copy(good, t)
with h5py.File(t, "r+") as f:
    del f["static"]["type"]
expect_error(t, ["/static/type"], "missing /static/type")

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(fails)} failures")
sys.exit(1 if fails else 0)
