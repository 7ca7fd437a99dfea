"""Figure for docs/dft.md from tests/bench/dft/water_scaling.dat (written by cp2k_water.sh): time per
density matrix of SCC-DFTB water against atoms for CP2K NEWTONSCHULZ, surge's submatrix method and
surge's dense diagonalisation (CPU and wall seconds), the dense/submatrix crossover marked, and the
energy error of each method per atom.
Usage: /usr/bin/python3 tests/bench/dft/plot_water.py   (from the repository root)"""
import math
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [l.split() for l in open("tests/bench/dft/water_scaling.dat") if not l.startswith("#")]
label = {"cp2k_ns": "CP2K 2023.1 NEWTONSCHULZ", "surge_submatrix": "surge submatrix", "surge_dense": "surge dense"}
style = {"cp2k_ns": "o-", "surge_submatrix": "s-", "surge_dense": "^-"}
data = {m: sorted((int(r[0]), float(r[2]), float(r[3]), r[4]) for r in rows if r[1] == m) for m in label}


def crossover(i):
    """Atoms where dense and submatrix cost the same (entry i: 1 wall, 2 CPU), log-log interpolation."""
    d = {x[0]: x[i] for x in data["surge_dense"]}
    s = {x[0]: x[i] for x in data["surge_submatrix"]}
    n = sorted(set(d) & set(s))
    for a, b in zip(n, n[1:]):
        ra, rb = math.log(d[a] / s[a]), math.log(d[b] / s[b])
        if ra < 0 <= rb:
            return math.exp(math.log(a) + (math.log(b) - math.log(a)) * (-ra) / (rb - ra))
    return None


fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
for k, (i, what) in enumerate([(2, "CPU"), (1, "wall")]):
    a = ax[k]
    for m in label:
        if data[m]:
            a.loglog([x[0] for x in data[m]], [x[i] for x in data[m]], style[m], label=label[m])
    x = crossover(i)
    if x:
        a.axvline(x, ls="--", color="gray", lw=0.8)
        a.text(x * 1.1, min(v[i] for v in data["surge_dense"]), f"crossover:\ndense = submatrix\nat {x:.0f} atoms", fontsize=8, color="dimgray")
    c = {v[0]: v[i] for v in data["cp2k_ns"]}
    s = {v[0]: v[i] for v in data["surge_submatrix"]}
    big = max(set(c) & set(s))
    a.annotate(f"CP2K / surge submatrix\n= {c[big] / s[big]:.0f}x at {big} atoms", (big, s[big]), textcoords="offset points", xytext=(-120, 30), fontsize=8, arrowprops=dict(arrowstyle="->", lw=0.6))
    a.set_xlabel("atoms (SCC-DFTB liquid water)")
    a.set_ylabel(f"{what} seconds per density matrix")
    a.set_title(f"{what} time, 1 rank each, EPS_FILTER 1e-5")
    a.legend(fontsize=8, loc="upper left")
a = ax[2]
for m in ("cp2k_ns", "surge_submatrix"):
    pts = [(x[0], float(x[3])) for x in data[m] if x[3] not in ("-", "0")]
    if pts:
        a.semilogx(*zip(*pts), style[m], label=label[m] + (" (vs EPS_FILTER 1e-9)" if m == "cp2k_ns" else " (vs dense)"))
a.set_ylim(bottom=0)
a.set_xlabel("atoms")
a.set_ylabel("|E - E_exact| (meV/atom)")
a.set_title("Energy error of the density matrix")
a.legend(fontsize=8)
fig.tight_layout()
fig.savefig("docs/dft_water.png", dpi=110)
print("wrote docs/dft_water.png")
