#!/usr/bin/env python3
"""O-O radial distribution function of liquid water: the DFT frames of DeePMD-kit's water data against
the g(r) that `surge run inputs/deepmd/water_nvt.yaml` writes (md_rdf_file, md_rdf_types [O, O]).

  water_gr.py MD_RDF.txt PLOT.png [SYSTEM_DIR ...]     (default: tests/data/water_dft/data_0..3)

The DFT g(r) is computed here, independently of surge, by numpy over every frame: all O-O distances
by the minimum-image convention (exact below half the smallest cell thickness, 6.22 Å for the 12.44 Å
box), histogrammed on the MD file's bins, normalised as the MD engine and LAMMPS's compute rdf do:
g_k = pairs_k / (frames N_O (N_O - 1)/V 4/3 pi (r_{k+1}^3 - r_k^3)) for ordered pairs.
Prints the first-peak position and height of both (bin centre of the maximum, and a parabola through
the maximum and its two neighbours), and the RMS and max |Δg| over r in [2.0 Å, rmax); for scale, the
same between the first and the second half of the DFT systems (their own sampling noise)."""
import sys, os, glob
import numpy as np


def dft_gr(dirs, edges):
    hist, norm = np.zeros(len(edges) - 1), 0.0
    for d in dirs:
        names = open(os.path.join(d, "type_map.raw")).read().split()
        types = np.loadtxt(os.path.join(d, "type.raw"), dtype=int).ravel()
        O = types == names.index("O")
        for s in sorted(glob.glob(os.path.join(d, "set.*"))):
            coord = np.load(os.path.join(s, "coord.npy")).astype(np.float64)
            box = np.load(os.path.join(s, "box.npy")).astype(np.float64)
            for c, b in zip(coord, box):
                h = b.reshape(3, 3)
                x = c.reshape(-1, 3)[O]
                n = len(x)
                dx = x[:, None, :] - x[None, :, :]
                frac = dx @ np.linalg.inv(h)
                frac -= np.round(frac)
                r = np.linalg.norm(frac @ h, axis=-1)[~np.eye(n, dtype=bool)]  # ordered pairs
                hist += np.histogram(r, bins=edges)[0]
                norm += n * (n - 1) / abs(np.linalg.det(h))
    shell = 4.0 / 3.0 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    return hist / (norm * shell)


def first_peak(r, g, rmin=2.0):
    k = np.argmax(np.where(r > rmin, g, -1))
    a, b, c = g[k - 1], g[k], g[k + 1]
    dr = r[1] - r[0]
    den = a - 2 * b + c
    off = 0.5 * (a - c) / den if den != 0 else 0.0  # vertex of the parabola, in bins
    return r[k], g[k], r[k] + off * dr, b - 0.25 * (a - c) * off


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mdfile, png = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = sys.argv[3:] or [os.path.join(here, "..", "..", "tests", "data", "water_dft", f"data_{i}") for i in range(4)]
    md = np.loadtxt(mdfile)
    r, gmd = md[:, 0], md[:, 1]
    dr = 2 * r[0]
    edges = np.arange(len(r) + 1) * dr
    gdft = dft_gr(dirs, edges)
    head = open(mdfile).readline().strip()
    print(f"MD  ({mdfile}: {head.lstrip('# ')})")
    print(f"DFT ({len(dirs)} systems: {', '.join(os.path.basename(os.path.normpath(d)) for d in dirs)}), bins {dr:.4f} Å up to {edges[-1]:.3f} Å")
    for name, g in (("DFT", gdft), ("MD ", gmd)):
        rk, gk, rp, gp = first_peak(r, g)
        print(f"{name} first O-O peak: bin {rk:.3f} Å g {gk:.3f}; parabola {rp:.3f} Å g {gp:.3f}")
    m = r >= 2.0
    d = gmd[m] - gdft[m]
    print(f"MD - DFT over r in [2.0, {edges[-1]:.2f}) Å: RMS {np.sqrt(np.mean(d * d)):.4f}, max |Δg| {np.abs(d).max():.4f} at r = {r[m][np.argmax(np.abs(d))]:.3f} Å")
    if len(dirs) >= 2:  # the DFT data's own sampling noise: its first half of systems against the second
        h = len(dirs) // 2
        dh = dft_gr(dirs[:h], edges)[m] - dft_gr(dirs[h:], edges)[m]
        print(f"DFT noise scale: systems {', '.join(os.path.basename(os.path.normpath(x)) for x in dirs[:h])} against the rest: RMS {np.sqrt(np.mean(dh * dh)):.4f}, max |Δg| {np.abs(dh).max():.4f}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(r, gdft, "k-", lw=1.6, label="DFT frames (data_0..3, 400 frames, numpy)")
    ax.plot(r, gmd, "C3--", lw=1.4, label="DP NVT 300 K (surge md, shipped model)")
    ax.set_xlabel("r (Å)")
    ax.set_ylabel("g$_{OO}$(r)")
    ax.set_xlim(2.0, edges[-1])
    ax.axhline(1.0, color="0.7", lw=0.6)
    ax.legend(frameon=False)
    ax.set_title("Liquid water, O-O radial distribution function")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
