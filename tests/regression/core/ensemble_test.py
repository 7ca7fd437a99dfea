"""surge ensemble: sampling, dynamic scheduling on 2 groups, the gathered dataset, resume."""
import glob
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_ensemble")
d = deck("heat/ensemble2d.yaml")
N = 6


def samples(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["nsamples"])
        return {k: f["samples"][k][:n] for k in f["samples"]}


rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, ranks=2)
check(f"{N} members ({N} to run, 0 already done), 2 groups" in out, "2 ranks run 2 groups of one rank")
s2 = samples(f"{w}/two.h5")
check(sorted(set(s2["member"].tolist())) == list(range(N)), "every member contributes samples")
check(np.all(np.diff(s2["member"]) >= 0), "samples are ordered by member, whatever group ran it")

# Latin hypercube: in each parameter, the N members fall one per stratum of [lower, upper).
lo, hi = np.array([0.5, 0.2]), np.array([2.0, 1.0])
first = np.unique(s2["member"], return_index=True)[1]
p = s2["params"][first]
strata = np.floor((p - lo) / (hi - lo) * N).astype(int)
check(all(sorted(strata[:, j]) == list(range(N)) for j in range(2)), "LHS puts one member per stratum in each parameter")

# Each member is an ordinary run; the dataset holds its snapshots unchanged, and the first one is
# the initial condition amplitude x mode, whose grid maximum is |amplitude| x max|cos cos|.
with h5py.File(f"{w}/two.members/member_00000.h5", "r") as f:
    u0 = f["fields/u/0"][()]
check(np.array_equal(s2["u"][0], u0), "dataset sample equals the member's own output bit for bit")
i, j = np.arange(16), np.arange(12)
shape = np.outer(np.cos(2 * np.pi * (j + 0.5) / 12), np.cos(2 * np.pi * (i + 0.5) / 16))
check(abs(np.abs(u0).max() - s2["params"][0, 1] * np.abs(shape).max()) < 1e-14, "member 0 started from its sampled amplitude")

# 1 rank: the same members with the same parameters give the same dataset bit for bit.
surge(["ensemble", d, "-ensemble_output", "one"], w)
s1 = samples(f"{w}/one.h5")
check(same_arrays(s1, s2), "1-rank and 2-rank ensembles give identical datasets")

# Resume: lose two members (markers and files) and the dataset, as if killed mid-run; also leave a
# half-written member file without its marker. The rerun redoes exactly those and nothing else.
for m in (2, 4):
    for f in glob.glob(f"{w}/two.members/member_0000{m}.*"):
        os.remove(f)
os.remove(f"{w}/two.h5")
with open(f"{w}/two.members/member_00004.h5", "wb") as f:
    f.write(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)  # a truncated member file from the "crash"
before = {m: os.path.getmtime(f"{w}/two.members/member_0000{m}.done") for m in (0, 1, 3, 5)}
rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, ranks=2)
check("(2 to run, 4 already done)" in out, "rerun runs only the 2 missing members")
check(all(os.path.getmtime(f"{w}/two.members/member_0000{m}.done") == t for m, t in before.items()), "finished members are not rerun")
s2b = samples(f"{w}/two.h5")
check(same_arrays(s2b, s2), "resumed ensemble's dataset equals the uninterrupted one")
check(not [f for f in os.listdir(w) if f.startswith("two.h5.tmp")], "no temporary dataset left behind")  # two.h5.tmp.PID

# A rerun with every member done leaves the dataset as it is (same inode, bytes, mtime): a new merge
# would only change its creation time, and anything that fingerprints the file's content (a POD-LSTM
# search log over it) would then refuse to resume. docs/podlstm.md repeats README's ensemble command.
st = os.stat(f"{w}/two.h5")
with open(f"{w}/two.h5", "rb") as f:
    bytes_before = f.read()
rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, ranks=2)
st2 = os.stat(f"{w}/two.h5")
with open(f"{w}/two.h5", "rb") as f:
    same_bytes = f.read() == bytes_before
check("(0 to run, 6 already done)" in out and "two.h5 is up to date" in out, "a rerun with every member done says the dataset is up to date")
check((st.st_ino, st.st_mtime_ns) == (st2.st_ino, st2.st_mtime_ns) and same_bytes, "a rerun with every member done leaves the dataset untouched")

# Bad ensemble sections are rejected before anything runs.
rc, out = surge(["ensemble", d, "-ensemble_output", "bad", "-ensemble_lower", "0.5"], w, expect_ok=False)
check("one range per varied option" in out, "mismatched vary/lower counts rejected")
rc, out = surge(["ensemble", d, "-ensemble_output", "bad", "-ensemble_sampler", "grid"], w, expect_ok=False)
check("needs points" in out, "grid sampler without points rejected")
rc, out = surge(["ensemble", d, "-ensemble_output", "bad", "-ensemble_vary", "heat_kapa,heat_amplitude"], w, ranks=2, expect_ok=False)
check("did you mean -heat_kappa" in out, "misspelled varied option is caught with a suggestion")

# The dataset's provenance records the solver's parameters after the command line's overrides (issue
# 33: the deck's text alone gives the deck's mode [1, 1]), less what the members vary: a model trained
# on it records them as what it was trained for (POD-LSTM's trained_physics).
surge(["ensemble", d, "-ensemble_output", "phys", "-ensemble_members", "2", "-heat_mode", "2,1"], w)
with h5py.File(f"{w}/phys.h5", "r") as f:
    rec = f["provenance"].attrs["physics"]
    rec = rec.decode() if isinstance(rec, bytes) else str(rec)
items = dict(kv.split("=", 1) for kv in rec.split(";"))
check(items.get("solver") == "heat" and items.get("mode") == "2,1" and items.get("cells") == "16,12", f"provenance physics has the command line's mode 2,1 and the deck's cells: {rec}")
check("kappa" not in items and "amplitude" not in items, f"the varied options are left out: {rec}")
