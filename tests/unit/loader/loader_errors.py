#!/usr/bin/python3
"""The loader configured from options, and its errors on bad input.

- a good run from options alone (-loader_files, batch, epochs, buffer): every sample once per epoch
  and every row equal to a plain read (checked inside the tool), 80 frames x 3 epochs, hits ==
  planned > 0; the four water systems as four files in one loader, three I/O configurations;
- each bad input stops SgLoaderSetUp with a message naming the file and the problem: truncated copy
  (truncate -s), foreign HDF5, unknown schema version, missing field, missing file, and two files
  whose fields differ; bad options name the option (out of range, misspelled key).
Usage: loader_errors.py BUILD_DIR WATER_DIR
"""
import os, shutil, subprocess, sys, tempfile
import h5py
import numpy as np

bdir, water = sys.argv[1], sys.argv[2]
tool = f"{bdir}/test_loader_tool"
tmp = tempfile.mkdtemp(prefix="sg_lderr_")
fails = []


def check(cond, what, out=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)
        print(out[-1500:])


def run(*args):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


w0 = f"{tmp}/w0.h5"
subprocess.run([f"{bdir}/test_dataset_tool", "import", w0, f"{water}/data_0"], check=True, capture_output=True)
small = f"{tmp}/small.h5"
subprocess.run([f"{bdir}/test_dataset", "basic", small], check=True, capture_output=True)

rc, out = run("-loader_files", w0, "-loader_batch_size", "16", "-loader_epochs", "3", "-loader_buffer_mb", "0.5", "-loader_seed", "5")
summ = dict(x.split("=") for x in out.split("SUMMARY")[-1].split()) if "SUMMARY" in out else {}
check(rc == 0 and summ.get("samples") == "240" and summ.get("hits") == summ.get("planned") and int(summ.get("hits", 0)) > 0,
      f"options-only run: {summ}", out)


# four files (the four water systems) in one loader, with and without helper threads and raw reads:
# every row of every field must equal a plain read of its file (checked inside the tool)
ws = []
for k in range(4):
    ws.append(f"{tmp}/w{k}.h5")
    subprocess.run([f"{bdir}/test_dataset_tool", "import", ws[-1], f"{water}/data_{k}"], check=True, capture_output=True)
for extra in ([], ["-loader_io_threads", "1", "-loader_raw", "false", "-loader_prefetch", "0"], ["-loader_io_threads", "3", "-loader_readahead", "3"]):
    rc, out = run("-loader_files", ",".join(ws), "-loader_batch_size", "24", "-loader_epochs", "2", "-loader_buffer_mb", "0.4", *extra)
    summ = dict(x.split("=") for x in out.split("SUMMARY")[-1].split()) if "SUMMARY" in out else {}
    check(rc == 0 and summ.get("samples") == "800" and int(summ.get("bytes_checked", 0)) == 800 * 4656,
          f"4 files {' '.join(extra) or '(defaults)'}: 800 samples, {summ.get('bytes_checked')} bytes equal to plain reads", out)


def expect(args, needles, what):
    rc, out = run(*args)
    ok = rc != 0 and all(n in out for n in needles)
    check(ok, f"{what}: error says {needles}", out)


t = f"{tmp}/trunc.h5"
shutil.copy(w0, t)
subprocess.run(["truncate", "-s", str(os.path.getsize(w0) // 2), t], check=True)
expect(["-loader_files", t], [t, "truncated"], "truncated file")

t = f"{tmp}/foreign.h5"
with h5py.File(t, "w") as f:
    f["data"] = np.zeros(5)
expect(["-loader_files", t], [t, "not a surge dataset"], "foreign HDF5")

t = f"{tmp}/v9.h5"
shutil.copy(w0, t)
with h5py.File(t, "r+") as f:
    f.attrs["surge_dataset_version"] = np.int32(9)
expect(["-loader_files", t], [t, "schema version 9"], "unknown version")

t = f"{tmp}/noforce.h5"
shutil.copy(w0, t)
with h5py.File(t, "r+") as f:
    del f["samples"]["force"]
expect(["-loader_files", t], [t, "/samples/force is missing"], "missing field")

expect(["-loader_files", f"{tmp}/nope.h5"], [f"{tmp}/nope.h5", "cannot read the dataset file"], "missing file")
expect(["-loader_files", f"{w0},{small}"], [small, "different type or shape"], "files with different fields")
expect(["-loader_files", w0, "-loader_batch_size", "0"], ["-loader_batch_size", "0"], "batch size 0")
expect(["-loader_files", w0, "-loader_batchsize", "8"], ["loader_batchsize", "loader_batch_size"], "misspelled option")

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(fails)} failures")
sys.exit(1 if fails else 0)
