#!/usr/bin/env python3
"""docs/deepmd_water.png from the water run (inputs/deepmd/water_run.sh): learning curve (validation
RMSEs on data_3 during training; restarts with init_model appended, dotted lines) and parity plots of
the final model on data_3.  usage: plot_water.py DIR OUT.png [LCURVE[:FRAMES_PER_STEP[:MAX_STEP]] ...]
(default DIR/water_lcurve.txt); several lcurves are stages continued with init_model, in order. The x
axis counts training frames (a 2-rank run trains 2 frames per step; MAX_STEP keeps a stage's lines up
to the checkpoint the next stage started from). The parity files DIR/water_parity.{e_peratom,f}.out
are dp test detail files (DeePMD-kit's format: test_deepmd_tool dptest MODEL -detail DIR/water_parity
DATA, or surge train's deepmd_test_detail); PARITY=PREFIX picks another model's."""
import sys, numpy as np, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
pre = sys.argv[1] if len(sys.argv) > 1 else "build/deepmd"
out = sys.argv[2] if len(sys.argv) > 2 else "docs/deepmd_water.png"
import os
lc = None; stages = []
for spec in sys.argv[3:] or [f"{pre}/water_lcurve.txt"]:   # stages (init_model continuations) in order
    p = spec.split(":"); c = np.loadtxt(p[0]); fps = float(p[1]) if len(p) > 1 else 1.0
    if len(p) > 2: c = c[c[:, 0] <= float(p[2])]
    for i in range(1, len(c)):   # a restart (-deepmd_restart) appends with its own wall clock from 0
        if c[i, 6] < c[i - 1, 6]: c[i:, 6] += c[i - 1, 6]
    c[:, 0] *= fps
    if lc is None: lc = c; continue
    stages.append(lc[-1, 0]); c[:, 0] += lc[-1, 0]; c[:, 6] += lc[-1, 6]; lc = np.vstack([lc, c])
par = os.environ.get("PARITY", f"{pre}/water_parity")   # another model's parity files: PARITY=prefix
e = np.loadtxt(f"{par}.e_peratom.out")                      # per frame: label, prediction (eV/atom)
f = np.loadtxt(f"{par}.f.out"); f = np.stack([f[:, :3].ravel(), f[:, 3:].ravel()], axis=1)  # components
fig, ax = plt.subplots(1, 3, figsize=(15, 4.4))
a = ax[0]; b = a.twinx()
def smooth(y, w=25):  # running mean over w progress lines (each validates on a few frames only)
    k = np.ones(w) / w
    return np.convolve(np.pad(y, (w // 2, w - 1 - w // 2), mode="edge"), k, mode="valid")
a.semilogy(lc[:, 0], 1e3 * lc[:, 1], "C0-", lw=0.4, alpha=0.35)
a.semilogy(lc[:, 0], 1e3 * smooth(lc[:, 1]), "C0-", label="energy RMSE/atom (valid; running mean)")
a.semilogy(lc[:, 0], 1e3 * smooth(lc[:, 2]), "C0:", label="energy RMSE/atom (train batches)")
b.semilogy(lc[:, 0], 1e3 * lc[:, 3], "C1-", lw=0.4, alpha=0.35)
b.semilogy(lc[:, 0], 1e3 * smooth(lc[:, 3]), "C1-", label="force RMSE (valid; running mean)")
b.semilogy(lc[:, 0], 1e3 * smooth(lc[:, 4]), "C1:", label="force RMSE (train batches)")
a.axhline(1.0, color="C0", lw=0.8, ls="--"); b.axhline(40, color="C1", lw=0.8, ls="--")
a.set_ylim(0.5, 300); b.set_ylim(20, 1200)
for x0 in stages: a.axvline(x0, color="gray", lw=0.5, ls=":")
a.set_xlabel("training frames"); a.set_ylabel("energy RMSE (meV/atom)", color="C0")
b.set_ylabel("force RMSE (meV/Å)", color="C1")
a.set_title(f"learning curve ({lc[-1,6]/60:.0f} min wall); dashed: DeePMD-kit level", fontsize=9)
h1, l1 = a.get_legend_handles_labels(); h2, l2 = b.get_legend_handles_labels(); a.legend(h1 + h2, l1 + l2, fontsize=7)
rm = 1e3 * np.sqrt(np.mean((e[:, 1] - e[:, 0]) ** 2))  # (e still in eV here)
e0 = e[:, 0].mean(); e = 1e3 * (e - e0)
ax[1].plot(e[:, 0], e[:, 1], ".", ms=4); lo, hi = e.min(), e.max(); ax[1].plot([lo, hi], [lo, hi], "k-", lw=0.5)
ax[1].set_xlabel(f"DFT energy per atom − {e0:.4f} eV (meV)"); ax[1].set_ylabel("Deep Potential (meV)")
dm = e[:, 1] - e[:, 0]   # meV/atom: a constant offset (mean) and the scatter about it
ax[1].set_title(f"data_3 energies: RMSE {rm:.2f} meV/atom\n(offset {dm.mean():+.2f}, scatter {dm.std():.2f})", fontsize=10)
rf = 1e3 * np.sqrt(np.mean((f[:, 1] - f[:, 0]) ** 2))
ax[2].plot(f[:, 0], f[:, 1], ",", alpha=0.3); lo, hi = f.min(), f.max(); ax[2].plot([lo, hi], [lo, hi], "k-", lw=0.5)
ax[2].set_xlabel("DFT force component (eV/Å)"); ax[2].set_ylabel("Deep Potential (eV/Å)")
ax[2].set_title(f"data_3 forces: RMSE {rf:.1f} meV/Å")
plt.tight_layout(); plt.savefig(out, dpi=110)
print(f"wrote {out}: energy RMSE {rm:.3f} meV/atom, force RMSE {rf:.1f} meV/A")
