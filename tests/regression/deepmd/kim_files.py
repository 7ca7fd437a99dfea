"""Helpers of kim.sh (surge's Deep Potential in LAMMPS through the KIM API).
  setup XYZ TYPES EVAL.txt DATA.lmp   an extended-XYZ frame (orthogonal Lattice) as the input of
                                      `test_deepmd_tool eval` and as a LAMMPS data file (types 1.. in TYPES order)
  compare REF.txt LOG DUMP VOLUME     LAMMPS's step-0 PotEng, pressure (-> virial) and forces against the C API's
  sim REF.txt SIM.txt                 kim_sim's energy, virial, forces, particle energies and virials against the C API's
  omit EVAL.txt OUT.txt               atom 0 and its nearest neighbour J: prints "0 J", writes EVAL.txt without atom J
  omitcheck SIM.txt SIMOMIT.txt REFNOJ.txt I J   kim_sim with J left out of I's list against the prediction
  nve LOG                             TotEng and PotEng ranges of a LAMMPS thermo table (TotEng column 4)
  surge_nve LOG                       the same from `surge run` md thermo lines"""
import sys
import numpy as np

NKTV2P = 1.6021765e6  # LAMMPS metal: eV/A^3 -> bar


def setup(xyz, types, out_eval, out_data):
    tmap = types.split(",")
    L = open(xyz).read().split("\n")
    n = int(L[0])
    lat = [float(v) for v in L[1].split('Lattice="')[1].split('"')[0].split()]
    assert all(lat[k] == 0 for k in (1, 2, 3, 5, 6, 7)), "orthogonal boxes only"
    at = [l.split() for l in L[2:2 + n]]
    with open(out_eval, "w") as f:
        f.write(f"{n}\n" + " ".join(repr(v) for v in lat) + "\n")
        for a in at:
            f.write(f"{tmap.index(a[0])} {a[1]} {a[2]} {a[3]}\n")
    with open(out_data, "w") as f:
        f.write(f"surge KIM test: {xyz}\n\n{n} atoms\n{len(tmap)} atom types\n\n")
        f.write(f"0 {lat[0]!r} xlo xhi\n0 {lat[4]!r} ylo yhi\n0 {lat[8]!r} zlo zhi\n\nAtoms # atomic\n\n")
        for i, a in enumerate(at):
            f.write(f"{i + 1} {tmap.index(a[0]) + 1} {a[1]} {a[2]} {a[3]}\n")


def thermo(log):
    """rows of the thermo table(s) of a LAMMPS log: list of dicts"""
    rows, keys = [], None
    for l in open(log):
        w = l.split()
        if w and w[0] == "Step":
            keys = w
        elif keys and len(w) == len(keys):
            try:
                rows.append(dict(zip(keys, map(float, w))))
            except ValueError:
                keys = None
        elif keys:
            keys = None
    return rows


def compare(ref, log, dump, tol=1e-10):
    lines = open(ref).read().split("\n")
    e = float(lines[0])
    v = np.array(lines[1].split(), float).reshape(3, 3)
    F = np.loadtxt(ref, skiprows=2)[:, :3]
    r = thermo(log)[0]
    d = np.loadtxt(dump, skiprows=9)
    f = d[np.argsort(d[:, 0]), 1:4]
    vol = r["Volume"]
    w = {k: r[k] * vol / NKTV2P for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz")}  # T = 0 in step 0 (no velocities)
    wref = {"Pxx": v[0, 0], "Pyy": v[1, 1], "Pzz": v[2, 2], "Pxy": v[0, 1], "Pxz": v[0, 2], "Pyz": v[1, 2]}
    de = abs(r["PotEng"] - e) / abs(e)
    df = np.abs(f - F).max() / np.abs(F).max()
    dv = max(abs(w[k] - wref[k]) for k in w) / np.abs(v).max()
    print(f"  PotEng {r['PotEng']:.12f} vs C API {e:.12f}: rel {de:.1e}; forces max|dF|/max|F| {df:.1e}; "
          f"virial max|dW|/max|W| {dv:.1e} (pressure printed to 17 digits)")
    return de < tol and df < tol and dv < tol


def sim(ref, out, tol=1e-10):
    lines, got = open(ref).read().split("\n"), open(out).read().split("\n")
    e, e2 = float(lines[0]), float(got[0])
    v = np.array(lines[1].split(), float).reshape(3, 3)
    w = np.array(got[1].split(), float)
    wref = np.array([v[0, 0], v[1, 1], v[2, 2], v[1, 2], v[0, 2], v[0, 1]])
    A, B = np.loadtxt(ref, skiprows=2), np.loadtxt(out, skiprows=2)
    de = abs(e2 - e) / abs(e)
    dv = np.abs(w - wref).max() / np.abs(wref).max()
    df = np.abs(A[:, :3] - B[:, :3]).max() / np.abs(A[:, :3]).max()
    dp = np.abs(A[:, 3] - B[:, 3]).max() / np.abs(A[:, 3]).max()
    # per-particle virials (partialParticleVirial) against the C API's atomic virials (3x3 row-major ->
    # Voigt, symmetrised), and their sum against the virial
    a = A[:, 4:13].reshape(-1, 3, 3)
    pref = np.stack([a[:, 0, 0], a[:, 1, 1], a[:, 2, 2], (a[:, 1, 2] + a[:, 2, 1]) / 2, (a[:, 0, 2] + a[:, 2, 0]) / 2, (a[:, 0, 1] + a[:, 1, 0]) / 2], 1)
    dpv = np.abs(B[:, 4:10] - pref).max() / np.abs(pref).max()
    dsum = np.abs(B[:, 4:10].sum(0) - w).max() / np.abs(w).max()
    print(f"  KIM simulator, open cluster: energy rel {de:.1e}; virial (Voigt) {dv:.1e}; forces {df:.1e}; particle energies {dp:.1e}; "
          f"particle virials {dpv:.1e} (their sum - virial {dsum:.1e})")
    return de < tol and dv < tol and df < tol and dp < tol and dpv < tol and dsum < tol


def omit(evaltxt, out):
    L = open(evaltxt).read().split("\n")
    n = int(L[0])
    x = np.array([[float(v) for v in l.split()[1:4]] for l in L[2:2 + n]])
    d = np.linalg.norm(x - x[0], axis=1)
    d[0] = np.inf
    j = int(np.argmin(d))
    with open(out, "w") as f:
        f.write(f"{n - 1}\n{L[1]}\n" + "\n".join(L[2 + k] for k in range(n) if k != j) + "\n")
    print(f"0 {j}")


def omitcheck(full, omitted, refnoj, i, j, tol=1e-10):
    """A model on the simulator's list sees atom i without j: only i's energy changes, to what the C API
    gives i with atom j removed from the cluster (i's energy depends on its own neighbours only)."""
    i, j = int(i), int(j)
    e, eo = float(open(full).readline()), float(open(omitted).readline())
    pe, peo = np.loadtxt(full, skiprows=2)[:, 3], np.loadtxt(omitted, skiprows=2)[:, 3]
    ei_noj = np.loadtxt(refnoj, skiprows=2)[i if i < j else i - 1, 3]
    pred = e - pe[i] + ei_noj
    de = abs(eo - pred) / abs(e)
    others = np.delete(np.abs(peo - pe), i).max() / np.abs(pe).max()
    dip = abs(peo[i] - ei_noj) / abs(ei_noj)
    print(f"  KIM simulator, J={j} left out of the neighbour list of atom {i}: energy moves by {eo - e:.6e} eV; "
          f"vs predicted (e_{i} of the cluster without atom {j}: {ei_noj - pe[i]:.6e} eV): rel {de:.1e}; "
          f"e_{i} {dip:.1e}; other particle energies {others:.1e} (tol {tol:g}; the move must exceed 1e-6 relative)")
    return de < tol and dip < tol and others < tol and abs(eo - e) > 1e-6 * abs(e)


def nve_ranges(pe, et):
    return max(pe) - min(pe), max(et) - min(et), et[-1] - et[0]


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "setup":
        setup(*sys.argv[2:6])
    elif cmd == "compare":
        sys.exit(0 if compare(*sys.argv[2:5]) else 1)
    elif cmd == "sim":
        sys.exit(0 if sim(*sys.argv[2:4]) else 1)
    elif cmd == "omit":
        omit(*sys.argv[2:4])
    elif cmd == "omitcheck":
        sys.exit(0 if omitcheck(*sys.argv[2:7]) else 1)
    elif cmd in ("nve", "surge_nve"):
        if cmd == "nve":
            rows = thermo(sys.argv[2])
            pe, et, steps = [r["PotEng"] for r in rows], [r["TotEng"] for r in rows], [r["Step"] for r in rows]
        else:
            rows = [l.split() for l in open(sys.argv[2]) if l.startswith("md thermo:") and l.split()[2] != "Step"]
            steps, pe, et = [float(r[2]) for r in rows], [float(r[4]) for r in rows], [float(r[6]) for r in rows]
        a, b, c = nve_ranges(pe, et)
        print(f"{int(steps[-1])} {a:.6f} {b:.6f} {c:.6f}")
