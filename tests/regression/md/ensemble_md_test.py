"""surge ensemble with contribute md_frames (docs/ensemble.md): 4 LJ members (Langevin, LHS over
md_temperature x md_lattice_density), every H5MD trajectory frame becomes an md_frames sample.

Asserts: 1 and 2 ranks give identical datasets (bit for bit: each member runs on one rank either
way); every sample equals its member's H5MD frame (positions, forces, box, observables) bit for
bit, in member order; the box follows each member's sampled density (L = 4 (4/rho)^(1/3), 1e-12);
the energies are the LJ energies of the stored positions (numpy, minimum image, 1e-9 relative);
resume after losing members redoes only those and reproduces the dataset; members whose atom
types differ and non-MD decks are refused with a clear message."""
import glob
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("md_ensemble")
d = deck("md/lj_ensemble.yaml")
M, F, N = 4, 5, 256


def samples(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["nsamples"])
        s = {k: f["samples"][k][:n] for k in f["samples"]}
        s["type"] = f["static/type"][()]
        s["type_map"] = [x.decode() if isinstance(x, bytes) else x for x in f["static/type_map"][()]]
        return s


rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, ranks=2)
check(f"{M} members ({M} to run, 0 already done), 2 groups" in out, "2 ranks run 2 groups of one rank")
s2 = samples(f"{w}/two.h5")
check(len(s2["energy"]) == M * F and list(s2["member"]) == sorted(list(range(M)) * F), f"{M} members x {F} frames, in member order")
check(s2["type_map"] == ["1"] and (s2["type"] == 0).all() and s2["coord"].shape == (M * F, N, 3), "types and type map from the trajectories")
with h5py.File(f"{w}/two.h5", "r") as f:
    units = {k: f["samples"][k].attrs["units"] for k in ("coord", "energy", "force", "virial")}
    units = {k: v.decode() if isinstance(v, bytes) else v for k, v in units.items()}
check(units == {"coord": "sigma", "energy": "epsilon", "force": "epsilon/sigma", "virial": "epsilon"},
      f"LJ-unit members label the fields in LJ units, not the metal default: {units}")

# every sample is its member's H5MD frame, bit for bit
same = True
for m in range(M):
    with h5py.File(f"{w}/two.members/member_{m:05d}.h5md", "r") as f:
        h = {"coord": f["particles/all/position/value"][()], "force": f["particles/all/force/value"][()],
             "box": f["particles/all/box/edges/value"][()].reshape(-1, 9),
             "energy": f["observables/potential_energy/value"][()], "virial": f["observables/virial/value"][()]}
    sel = s2["member"] == m
    same &= all(np.array_equal(s2[k][sel], h[k]) for k in h)
check(same, "samples equal the members' H5MD frames (positions, forces, box, energy, virial) bit for bit")

# members differ in density: the cubic box edge is 4 cells x (4 / rho)^(1/3)
rho = s2["params"][:, 1]
L = 4 * (4 / rho) ** (1 / 3)
check(np.abs(s2["box"][:, 0] - L).max() < 1e-12 and np.ptp(s2["box"][:, 0]) > 0.05, f"box follows each member's density (edges {L.min():.3f}..{L.max():.3f})")


def lj_energy(x, Lb, rc=2.5):
    dx = x[:, None, :] - x[None, :, :]
    dx -= Lb * np.round(dx / Lb)
    r2 = (dx ** 2).sum(-1)
    np.fill_diagonal(r2, np.inf)
    ir6 = np.where(r2 < rc * rc, 1 / r2 ** 3, 0)
    return 0.5 * np.where(r2 < rc * rc, 4 * ir6 * (ir6 - 1) - 4 * rc ** -6 * (rc ** -6 - 1), 0).sum()


err = max(abs(lj_energy(s2["coord"][k], s2["box"][k, 0]) - s2["energy"][k]) / abs(s2["energy"][k]) for k in range(0, M * F, 3))
check(err < 1e-9, f"energies are the LJ energies of the stored positions (max relative error {err:.1e})")

# 1 rank: the same dataset bit for bit
surge(["ensemble", d, "-ensemble_output", "one"], w)
s1 = samples(f"{w}/one.h5")
check(same_arrays(s1, s2), "1-rank and 2-rank md_frames datasets are identical")

# resume: lose members 1 and 3 and the dataset; member 3's trajectory is left truncated
for m in (1, 3):
    for p in glob.glob(f"{w}/two.members/member_0000{m}.*"):
        os.remove(p)
os.remove(f"{w}/two.h5")
with open(f"{w}/two.members/member_00003.h5md", "wb") as fp:
    fp.write(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, ranks=2)
check("(2 to run, 2 already done)" in out, "rerun runs only the 2 missing members")
s2b = samples(f"{w}/two.h5")
check(same_arrays(s2b, s2), "resumed md_frames dataset equals the uninterrupted one")

# members must share their atoms: give member 2 another type and merge again (all members done)
with h5py.File(f"{w}/two.members/member_00002.h5md", "r+") as f:
    sp = f["particles/all/species"]
    a = sp[()]
    a[0] = 1
    sp[...] = a
    f["parameters"].attrs.modify("species_names", np.bytes_("1,2"))
os.remove(f"{w}/two.h5")
rc, out = surge(["ensemble", d, "-ensemble_output", "two"], w, expect_ok=False)
check("needs the same atoms in the same order in every member" in out, "members with different atom types are refused, naming the member")
check(not os.path.exists(f"{w}/two.h5"), "no dataset is published when the merge fails")

rc, out = surge(["ensemble", deck("heat/ensemble2d.yaml"), "-ensemble_output", "bad", "-ensemble_contribute", "md_frames"], w, expect_ok=False)
check("solver must be md" in out, "contribute md_frames on a non-MD deck is refused")
