#!/usr/bin/python3
"""MeshfreeFlowNet swapped in for the fine solve (figures, not pass/fail; docs/mffn.md "Swap").

All runs on inputs/mffn/superres.yaml (Ra = 1e5, coarse 64 x 17, fine fields on 128 x 32 every 0.25
up to t = 4, seed 23) in one script, one rank each, one BLAS thread:
  fine_solve   the slot served by its own provider, a 128 x 33 fine solve of each 0.25 segment from the
               coarse state (the reference of every error below);
  mffn         MeshfreeFlowNet serves (the deck);
  trilinear    trilinear interpolation of the same block (mffn baseline trilinear);
  coarse_eval  the coarse solution itself evaluated on the fine grid (a "fine solve" on the coarse grid:
               superres cells 64 x 17; spectral interpolation of the coarse run);
  adaptive     inputs/mffn/superres_adaptive.yaml (MFFN while its PDE residual is in the band);
  coarse       the coarse run alone (no slot), and fine: a plain 128 x 33 run (step 2^-8) over the
               same time — what the swap replaces.
Cost: CPU seconds of each process (user + sys; the machine is shared, so wall times are also printed)
and ratios to the fine run in the same script. Errors against fine_solve: Nusselt number and kinetic
energy of the fine fields (max over the 17 answers of |x - x_ref| / max |x_ref|), the KE spectrum
(mean over the answers after t = 0 of sum_m |E_m - E_ref,m| / sum_m E_ref,m), and the fields b, u, w (RMS error /
RMS of the reference, over the written snapshots). Writes build/bench-mffn-swap/swap.json and
docs/mffn_swap.png (with --plot)."""
import json
import os
import resource
import subprocess
import sys
import time

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.path.join(ROOT, "bin", "surge")
DECK = os.path.join(ROOT, "inputs", "mffn", "superres.yaml")
ADAPT = os.path.join(ROOT, "inputs", "mffn", "superres_adaptive.yaml")
MODEL = os.path.join(ROOT, "inputs", "mffn", "models", "mffn_rb_superres.h5")
WORK = os.path.join(ROOT, "build", "bench-mffn-swap")
os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", SGNN_NUM_THREADS="1")

for need in (SURGE, MODEL):
    if not os.path.exists(need):
        sys.exit(f"swap.py: {need} is missing: build surge (make) / rebuild the model (inputs/mffn/models/make_models.sh)")
os.makedirs(WORK, exist_ok=True)


def plain_deck():
    """The deck without its field.superres slot (and the model it names): the plain coarse run."""
    import yaml
    d = yaml.safe_load(open(DECK))
    for k in ("superres", "mffn"):
        d["boussinesq"].pop(k)
    path = os.path.join(WORK, "plain.yaml")
    yaml.safe_dump(d, open(path, "w"))
    return path


def run(name, deck, *args):
    """surge run; returns (cpu seconds, wall seconds)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    model = ["-boussinesq_mffn_model", MODEL] if deck != PLAIN else []
    p = subprocess.run([SURGE, "run", deck, "-sim_output", name, *model, *args], cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    open(os.path.join(WORK, name + ".log"), "w").write(p.stdout)
    if p.returncode:
        sys.exit(f"swap.py: run {name} failed:\n{p.stdout[-2000:]}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall


def series(name):
    with h5py.File(os.path.join(WORK, name + ".h5"), "r") as f:
        r = {k: f["report"]["superres_" + k][()] for k in ("time", "nu_volume", "kinetic_energy", "ke_spectrum", "by_surrogate", "uncertainty")}
        r["spec"] = r["ke_spectrum"].reshape(len(r["time"]), -1)
        r["fields"] = {c: [f["fields"][c + "_fine"][k][()] for k in sorted(f["fields"][c + "_fine"], key=int)] for c in "buw"}
    return r


PLAIN = plain_deck()
runs = {}
runs["fine_solve"] = run("fine_solve", DECK, "-boussinesq_superres_swap_use", "solver")
runs["mffn"] = run("mffn", DECK)
runs["trilinear"] = run("trilinear", DECK, "-boussinesq_mffn_baseline", "trilinear")
runs["coarse_eval"] = run("coarse_eval", DECK, "-boussinesq_superres_swap_use", "solver", "-boussinesq_superres_cells", "64,17", "-boussinesq_superres_output_nx", "128", "-boussinesq_superres_factor", "2,2")
runs["adaptive"] = run("adaptive", ADAPT)
# MFFN on every block with its uncertainty evaluated (an adaptive band nothing exceeds): the residual
# against the error of each answer
runs["mffn_unc"] = run("mffn_unc", ADAPT, "-boussinesq_superres_swap_trust_lo", "1e9", "-boussinesq_superres_swap_trust_hi", "1e9")
runs["coarse"] = run("coarse", PLAIN)
runs["fine"] = run("fine", PLAIN, "-boussinesq_cells", "128,33", "-boussinesq_output_nz", "32", "-boussinesq_max_dt", "0.00390625", "-sim_field_every", "64", "-sim_diag_every", "64")

ref = series("fine_solve")
out = {"cost": {k: {"cpu_s": round(v[0], 3), "wall_s": round(v[1], 3), "cpu_ratio_to_fine": round(v[0] / runs["fine"][0], 4)} for k, v in runs.items()}, "error": {}}
for name in ("mffn", "trilinear", "coarse_eval", "adaptive", "mffn_unc"):
    s = series(name)
    e = {}
    for q in ("nu_volume", "kinetic_energy"):
        e[q] = float(np.abs(s[q] - ref[q]).max() / np.abs(ref[q]).max())
    live = ref["kinetic_energy"] > 0  # t = 0: the flow is at rest
    e["ke_spectrum"] = float(np.mean(np.abs(s["spec"][live] - ref["spec"][live]).sum(1) / ref["spec"][live].sum(1)))
    for c in "buw":
        num = sum(np.sum((a - b) ** 2) for a, b in zip(s["fields"][c], ref["fields"][c]))
        den = sum(np.sum(b ** 2) for b in ref["fields"][c])
        e[c + "_rms_rel"] = float(np.sqrt(num / den))
    e["surrogate_answers"] = int(s["by_surrogate"].sum())
    e["answers"] = int(len(s["time"]))
    e["uncertainty"] = [round(float(u), 5) for u in s["uncertainty"]]
    e["b_rms_rel_per_answer"] = [round(float(np.sqrt(np.sum((a - b) ** 2) / np.sum(b ** 2))), 5) for a, b in zip(s["fields"]["b"], ref["fields"]["b"])]
    out["error"][name] = e
json.dump(out, open(os.path.join(WORK, "swap.json"), "w"), indent=1)
print(f"{'run':12s} {'cpu s':>8s} {'wall s':>8s} {'cpu / fine':>10s}")
for k, v in out["cost"].items():
    print(f"{k:12s} {v['cpu_s']:8.2f} {v['wall_s']:8.2f} {v['cpu_ratio_to_fine']:10.3f}")
print(f"\n{'vs fine_solve':12s} {'Nu':>9s} {'KE':>9s} {'spectrum':>9s} {'b rms':>9s} {'u rms':>9s} {'w rms':>9s} {'by sur.':>8s}")
for k, e in out["error"].items():
    print(f"{k:12s} {e['nu_volume']:9.2e} {e['kinetic_energy']:9.2e} {e['ke_spectrum']:9.2e} {e['b_rms_rel']:9.2e} {e['u_rms_rel']:9.2e} {e['w_rms_rel']:9.2e} {e['surrogate_answers']:4d}/{e['answers']}")
print("\nmffn per answer: mean |PDE residual|", out["error"]["mffn_unc"]["uncertainty"])
print("                 b rms error / rms  ", out["error"]["mffn_unc"]["b_rms_rel_per_answer"])
print("adaptive per answer: by the surrogate", [int(x) for x in series("adaptive")["by_surrogate"]])

if "--plot" in sys.argv:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 4, figsize=(19, 4))
    styles = {"fine_solve": "k-", "mffn": "r--", "trilinear": "b:", "coarse_eval": "g-."}
    for name, sty in styles.items():
        s = series(name)
        ax[0].plot(s["time"], s["nu_volume"], sty, label=name)
        ax[1].plot(s["time"], s["kinetic_energy"], sty, label=name)
        m = np.arange(s["spec"].shape[1])
        ax[2].loglog(m[1:], s["spec"][-1, 1:], sty, label=name)
    ax[0].set(xlabel="t", ylabel="Nu of the fine fields", title="Nusselt number")
    ax[1].set(xlabel="t", ylabel="KE", title="kinetic energy")
    ax[2].set(xlabel="x-mode m", ylabel="E_m", title="KE spectrum at t = 4")
    ax[0].legend()
    eu = out["error"]["mffn_unc"]
    ax[3].plot(eu["uncertainty"][1:], eu["b_rms_rel_per_answer"][1:], "ro")
    import yaml
    hi = yaml.safe_load(open(ADAPT))["boussinesq"]["superres"]["swap_trust_hi"]
    ax[3].axvline(hi, color="k", ls=":", label="adaptive trust_hi")
    ax[3].set(xlabel="MFFN mean |PDE residual|", ylabel="b rms error / rms (vs fine solve)", title="uncertainty vs error per answer")
    ax[3].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, "docs", "mffn_swap.png"), dpi=90)
    print("wrote docs/mffn_swap.png")
