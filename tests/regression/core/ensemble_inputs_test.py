"""surge ensemble reuses a finished member only if the files the deck reads are the same (issue 33,
"provenance that decides reuse"): the fingerprint of a member holds the content of every input file
an option names (src/driver/ensemble.c, FoldFile), not only the option text.

A 2-member LJ ensemble starts from a structure file (md read_xyz: start.xyz, written next to the deck
and found there, as a deck's relative input path is). Asserts: a rerun on 1 rank reuses the 2-rank
members (the identity does not depend on the rank count); the structure edited in one coordinate,
with its size and mtime put back as they were (what cp -p or rsync -t can leave), is refused on 2
ranks with one 'surge: error:' line, exit 1, the dataset untouched; the original content back: reused
again; touched only (new mtime, same bytes): reused; edited with -ensemble_rerun_stale: both members
rerun and the dataset's first frame is the edited structure."""
import hashlib
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("core_ensemble_inputs")
os.makedirs(f"{w}/case")
a, n = (4 / 0.8442) ** (1 / 3), 4  # fcc at the LJ liquid density, 4^3 cells: 256 atoms, wider than 2 (cutoff + skin)
base = np.array([[0, 0, 0], [.5, .5, 0], [.5, 0, .5], [0, .5, .5]])
x = np.array([(np.array([i, j, k]) + b) * a for i in range(n) for j in range(n) for k in range(n) for b in base])


def write_xyz(pos):
    with open(f"{w}/case/start.xyz", "w") as f:
        f.write(f"{len(pos)}\nLattice=\"{n * a:.10f} 0 0 0 {n * a:.10f} 0 0 0 {n * a:.10f}\" Properties=species:S:1:pos:R:3\n")
        for p in pos:
            f.write("Ar %.10f %.10f %.10f\n" % tuple(p))


write_xyz(x)
with open(f"{w}/case/ens.yaml", "w") as f:
    f.write("""sim: {solver: md, max_steps: 10}
md:
  units: lj
  read_xyz: start.xyz
  velocity_temperature: 1.0
  seed: 1
  dt: 0.005
  ensemble: langevin
  temperature: 1.0
  damp: 0.5
  forces: lj
  lj_cutoff: 2.5
  thermo_every: 0
  traj_every: 5
  traj_file: ens.h5md
ensemble: {members: 2, sampler: lhs, seed: 3, vary: [md_temperature], lower: [0.8], upper: [2.0], seed_option: md_seed, contribute: md_frames}
""")
E = ["ensemble", "case/ens.yaml", "-ensemble_output", "e"]
xyz = f"{w}/case/start.xyz"


def sha(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


rc, out = surge(E, w, ranks=2)
check("(2 to run, 0 already done)" in out, "2 ranks run both members")
rc, out = surge(E, w)
check("(0 to run, 2 already done)" in out, "1 rank reuses the 2-rank members: the same files, the same fingerprint")

st, ds = os.stat(xyz), sha(f"{w}/e.h5")
y = x.copy()
y[0, 0] += 0.01  # "0.0000000000" -> "0.0100000000": same size
write_xyz(y)
os.utime(xyz, ns=(st.st_atime_ns, st.st_mtime_ns))
check(os.path.getsize(xyz) == st.st_size and os.stat(xyz).st_mtime_ns == st.st_mtime_ns, "the edit keeps the size and mtime")
rc, out = surge(E, w, ranks=2, expect_ok=False)
lines = [l for l in out.splitlines() if l.startswith("surge: error:")]
check(rc == 1 and len(lines) == 1 and "was computed with other" in lines[0] and "the files it reads" in lines[0], f"an edited input file is refused with one line on 2 ranks: {lines}")
check("PETSC ERROR" not in out and "MPI_ABORT" not in out, "no traceback")
check(sha(f"{w}/e.h5") == ds, "the dataset is untouched")

write_xyz(x)
os.utime(xyz, ns=(st.st_atime_ns, st.st_mtime_ns))
rc, out = surge(E, w)
check("(0 to run, 2 already done)" in out, "the original content back: the members are reused")
os.utime(xyz)  # now
rc, out = surge(E, w)
check("(0 to run, 2 already done)" in out, "a new mtime with the same bytes keeps the members (content, not timestamps)")

write_xyz(y)
rc, out = surge(E + ["-ensemble_rerun_stale"], w, ranks=2)
check("(2 to run, 0 already done)" in out, "-ensemble_rerun_stale reruns both members")
with h5py.File(f"{w}/e.h5", "r") as f:
    c0 = f["samples/coord"][0]
check(abs(c0[0, 0] - 0.01) < 1e-9 and abs(c0[1, 0] - x[1, 0]) < 1e-9, f"the dataset's first frame starts from the edited structure: atom 0 x = {c0[0, 0]}")
