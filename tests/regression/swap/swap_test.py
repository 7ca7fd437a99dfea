"""Runtime swap of MD forces (docs/swap.md): policies, rejection, retraining frames, 1 vs 2 ranks.

Solver: the built-in "lj" provider. Surrogate: the test-only provider "lj_scaled" of
build/tests/test_md_swap (tests/unit/md/test_md_swap.c): LJ forces/energy/virial x (1 + delta),
delta = 0.01; uncertainty(step) = (step mod 10) / 10 exactly; NaN forces at chosen steps.
256-atom LJ liquid, 60 NVE steps, trajectory (positions, forces) every step.

Bit-for-bit comparisons are exact (tolerance 0): with full neighbour lists the same provider on
the same configuration performs the same floating-point operations, so a step served by a
provider must reproduce the run that only has that provider. The independent check of the
retraining frames recomputes LJ forces/energy/virial with numpy (minimum image, all pairs):
agreement to 1e-9 relative (summation order differs only)."""
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import *

w = workdir("swap")
d = os.path.join(ROOT, "tests", "regression", "swap", "lj_liquid.yaml")
EXE = os.path.join(ROOT, "build", "tests", "test_md_swap")
SUR = ["-md_surrogate", "lj_scaled"]
NSTEP = 60


def run(name, args, ranks=1, expect_ok=True):
    cmd = ([*MPIEXEC] if ranks == 2 else []) + [EXE, d, "-sim_output", name, "-md_traj_file", name + ".h5md"] + args
    p = subprocess.run(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if expect_ok and p.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    if not expect_ok and p.returncode == 0:
        fail(f"{' '.join(cmd)} should have failed:\n{p.stdout[-3000:]}")
    return p.stdout


def traj(name, q):
    with h5py.File(f"{w}/{name}.h5md", "r") as f:
        return f[f"particles/all/{q}/value"][()]


def diag(name):
    return diagnostics(f"{w}/{name}.h5")


def rep(name, key):
    return float(report(f"{w}/{name}.h5", key)[0])


def frames(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["nsamples"])
        return {k: f["samples"][k][:n] for k in f["samples"]}


steps = np.arange(NSTEP + 1)

# Reference runs with one provider each.
run("solver", [])
run("sur", ["-md_forces", "lj_scaled"])
xs, xu = traj("solver", "position"), traj("sur", "position")
check(not np.array_equal(xs[-1], xu[-1]), "the surrogate's trajectory differs from the solver's (the test can tell them apart)")

# static: the named provider serves every step, bit for bit.
run("static_solver", SUR + ["-md_swap_policy", "static", "-md_swap_use", "solver"])
check(np.array_equal(traj("static_solver", "position"), xs), "static/solver: trajectory equals the solver-only run bit for bit")
check((diag("static_solver")["surrogate_served"] == 0).all(), "static/solver: surrogate_served = 0 at every step")
run("static_sur", SUR + ["-md_swap_policy", "static", "-md_swap_use", "surrogate"])
check(np.array_equal(traj("static_sur", "position"), xu), "static/surrogate: trajectory equals the surrogate-only run bit for bit")
check((diag("static_sur")["surrogate_served"] == 1).all(), "static/surrogate: surrogate_served = 1 at every step")

# schedule: solver until step 25, surrogate from step 25 (the forces of configuration 25 on).
run("sched", SUR + ["-md_swap_policy", "schedule", "-md_swap_step", "25"])
ds = diag("sched")
check(np.array_equal(ds["surrogate_served"], (ds["step"] >= 25).astype(float)), "schedule: served by the surrogate exactly from step 25")
x = traj("sched", "position")
check(np.array_equal(x[:26], xs[:26]) and not np.array_equal(x[26], xs[26]), "schedule: positions equal the solver run through step 25 and leave it at step 26")
check(rep("sched", "md_swap_switches") == 1 and rep("sched", "md_swap_surrogate_calls") == 36, "schedule: one switch, 36 surrogate calls (steps 25..60)")

# Newton flag per call: a surrogate that declares newton and leaves force on ghost images (moved
# from their owners) must get its ghost forces reverse-communicated, while the solver's (full-list
# lj) calls are not. Same trajectory as the plain providers up to round-off ((f - 0.5) + 0.5).
run("newton_sur", SUR + ["-md_swap_policy", "static", "-md_swap_use", "surrogate", "-md_swaptest_newton"])
dx = np.abs(traj("newton_sur", "position") - xu).max()
check(dx < 1e-9, f"static/surrogate with a Newton surrogate: trajectory equals the surrogate-only run to {dx:.1e} (< 1e-9; a dropped ghost force would be 0.5)")
run("newton_sched", SUR + ["-md_swap_policy", "schedule", "-md_swap_step", "25", "-md_swaptest_newton"])
xn = traj("newton_sched", "position")
dx = np.abs(xn - x).max()
check(np.array_equal(xn[:26], xs[:26]) and dx < 1e-9, f"schedule with a Newton surrogate: solver steps bit-identical, surrogate steps equal the plain run to {dx:.1e}")

# adaptive with trust band [0.3, 0.7] on uncertainty (s mod 10)/10, and a NaN answer at step 13.
ADA = SUR + ["-md_swap_policy", "adaptive", "-md_swap_trust_lo", "0.3", "-md_swap_trust_hi", "0.7", "-md_swaptest_nan_steps", "13"]
out1 = run("ada1", ADA)
da = diag("ada1")
unc = (steps % 10) / 10.0
check(np.abs(da["uncertainty"] - unc).max() < 1e-15, "adaptive: recorded uncertainty is the provider's (s mod 10)/10")
want = ((unc <= 0.7) & (steps != 13)).astype(float)
check(np.array_equal(da["surrogate_served"], want), "adaptive: surrogate serves iff uncertainty <= trust_hi, except the rejected NaN step 13")
nswitch = int(np.sum(want[1:] != want[:-1]))
check(rep("ada1", "md_swap_solver_calls") == (want == 0).sum() and rep("ada1", "md_swap_surrogate_calls") == want.sum()
      and rep("ada1", "md_swap_switches") == nswitch and rep("ada1", "md_swap_rejected") == 1,
      f"adaptive: report counts {int((want == 0).sum())} solver / {int(want.sum())} surrogate calls, {nswitch} switches, 1 rejected")
check("step 13: surrogate lj_scaled returned NaN/Inf" in out1, "the rejected NaN answer is logged")
check(abs(rep("ada1", "md_swap_surrogate_fraction") - want.mean()) < 1e-12, f"adaptive: surrogate fraction {want.mean():.4f} reported")

# Retraining frames: exactly the solver-served flagged steps (uncertainty > trust_hi, or rejected).
flagged = np.where((unc > 0.7) | (steps == 13))[0]
fr = frames(f"{w}/ada1.retrain.h5")
check(len(fr["energy"]) == len(flagged) == rep("ada1", "md_swap_retrain_frames"), f"{len(flagged)} retraining frames appended (steps {list(flagged)})")
fa, xa = traj("ada1", "force"), traj("ada1", "position")
check(np.array_equal(fr["force"], fa[flagged]) and np.array_equal(fr["coord"], xa[flagged]), "retraining frames equal the trajectory's positions and forces of those steps bit for bit")


def lj(x, box, rc=2.5):
    L = np.diag(box.reshape(3, 3))
    dx = x[:, None, :] - x[None, :, :]
    dx -= L * np.round(dx / L)
    r2 = (dx ** 2).sum(-1)
    np.fill_diagonal(r2, np.inf)
    m = r2 < rc * rc
    ir6 = np.where(m, 1 / r2 ** 3, 0)
    fp = np.where(m, 24 * ir6 * (2 * ir6 - 1) / r2, 0)
    f = (fp[..., None] * dx).sum(1)
    e = 0.5 * np.where(m, 4 * ir6 * (ir6 - 1) - 4 * rc ** -6 * (rc ** -6 - 1), 0).sum()
    W = 0.5 * np.einsum("ij,ija,ijb->ab", fp, dx, dx)
    return e, f, W


errs = []
for k in range(len(flagged)):
    e, f, W = lj(fr["coord"][k], fr["box"][k])
    errs.append(max(np.abs(fr["force"][k] - f).max() / np.abs(f).max(), abs(fr["energy"][k] - e) / abs(e), np.abs(fr["virial"][k].reshape(3, 3) - W).max() / np.abs(W).max()))
    scaled = np.abs(fr["force"][k] - 1.01 * f).max() / np.abs(f).max()
    check(scaled > 1e-3, f"frame {k} (step {flagged[k]}) is not the surrogate's answer (relative distance to 1.01 F_LJ {scaled:.1e})") if k == 0 else None
check(max(errs) < 1e-9, f"retraining frames hold the solver's (LJ) forces, energy and virial: max relative error vs numpy {max(errs):.1e} < 1e-9")
k13 = list(flagged).index(13)
e, f, W = lj(xa[13], fr["box"][k13])
check(np.abs(fa[13] - f).max() / np.abs(f).max() < 1e-9, "the NaN step 13 ran on the solver's forces")
with h5py.File(f"{w}/ada1.retrain.h5", "r") as h:
    check(h.attrs["kind"] in (b"md_frames", "md_frames") and list(h["static/type"][()]) == [0] * 256, "retraining file is an md_frames dataset with the run's types")
    u = {k: h["samples"][k].attrs["units"] for k in ("coord", "force")}
    u = {k: v.decode() if isinstance(v, bytes) else v for k, v in u.items()}
    check(u == {"coord": "sigma", "force": "epsilon/sigma"}, f"frames of an LJ-unit run are labelled in LJ units: {u}")

# 1 vs 2 ranks: the same decisions and, with full lists, the same frames bit for bit.
run("ada2", ADA, ranks=2)
d2 = diag("ada2")
check(np.array_equal(d2["surrogate_served"], da["surrogate_served"]) and np.array_equal(d2["uncertainty"], da["uncertainty"]), "2 ranks take the same swap decisions as 1 rank")
fr2 = frames(f"{w}/ada2.retrain.h5")
check(all(np.array_equal(fr2[q], fr[q]) for q in ("coord", "force", "box")), "2-rank retraining frames: positions, forces, box equal the 1-rank ones bit for bit")
# energy and virial are sums over ranks of per-rank partial sums: another summation order
rel = max(np.abs(fr2[q] - fr[q]).max() / np.abs(fr[q]).max() for q in ("energy", "virial"))
check(rel < 1e-13, f"2-rank energy/virial equal the 1-rank ones to {rel:.1e} relative (< 1e-13: summation order over ranks)")
check(np.array_equal(traj("ada2", "position"), xa), "2-rank adaptive trajectory equals the 1-rank one bit for bit")

# Misconfigurations are refused with a clear message.
o = run("bad1", ["-md_swap_policy", "adaptive"], expect_ok=False)
check("needs a surrogate" in o, "a swap policy without md_surrogate is refused")
o = run("bad2", ["-md_surrogate", "lj", "-md_swap_policy", "adaptive"], expect_ok=False)
check("needs an uncertainty estimate" in o, "adaptive with a surrogate that has no uncertainty estimate is refused")
