#!/usr/bin/python3
"""A per-layer performance model of hybrid data x spatial training (issue 18, docs/parallel.md).

  perfmodel.py layers FILE          write the layers of every benchmarked configuration (local shapes)
                                    for `test_bench_grid layers FILE` to time
  perfmodel.py model RESULTS OUT    summarise the measured scaling, predict every measured step from the
                                    model, then predict strong and weak scaling to 1,024 ranks for a
                                    512^3 sample and choose the (data x spatial) split of each layer;
                                    writes OUT/scaling.png, OUT/model_1024.png and OUT/timeline.png

The model, after Dryden et al. (IPDPS 2019, section IV) and Oyama et al. (TPDS 2021): a step is the sum
over the layers of
  compute   the layer's measured forward + backward time at its local shape (test_bench_grid layers:
            one process, or two side by side, which is the rate a rank gets when both compute);
  halo      a 3^3 convolution split over spatial ranks exchanges h = 1 plane per neighbour forward and
            backward: alpha + beta * bytes, hidden behind the interior convolution (the overlap of
            sgpar_conv3d: exposed = max(0, exchange - interior compute)), fully exposed when blocking;
  batchnorm five small allreduces per layer over the spatial group (count, mean and variance forward,
            their adjoints backward): latency only;
  gradient  the bucketed allreduce of the weights over all ranks, started during backward: the last
            bucket (<= 1 MiB, the first layers' weights) is exposed.
Every synchronisation also waits for the partner rank. On this shared 2-core machine that wait is
measured directly (`pingpong`: a blocking allreduce after a given amount of compute, at 0.02, 0.2 and
2 ms) and interpolated in log(compute since the last synchronisation); on a dedicated cluster it is
alpha. Nothing is fitted to the step times the model predicts.
"""
import math
import os
import re
import sys
from collections import defaultdict

MFFN_CH = (16, 32, 64, 128, 256)
MFFN_POOL = ((1, 2, 2), (1, 2, 2), (2, 2, 2), (2, 2, 2))
BUCKET = 1 << 20

# ---- architectures: (op, c1, c2, k, (d, h, w), dtype) at local shapes -----------------------------------


def resblock(L, ci, co, d, dt, neck=4):
    nk = max(1, co // neck)
    L += [("conv", ci, nk, 1, d, dt), ("bnrelu", nk, 0, 0, d, dt), ("conv", nk, nk, 3, d, dt), ("bnrelu", nk, 0, 0, d, dt),
          ("conv", nk, co, 1, d, dt), ("bn", co, 0, 0, d, dt), ("convb", ci, co, 1, d, dt), ("addrelu", co, co, 0, d, dt)]


def mffn_layers(T, Z, X, zsplit=1, ch=MFFN_CH, pools=MFFN_POOL, latent=32, dt="f64", split_axis=1):
    """the MeshfreeFlowNet encoder (surrogates/mffn/model.c) on a crop [4, T, Z, X] cut along z"""
    d0 = [T, Z, X]
    d0[split_axis] //= zsplit
    dims = [tuple(d0)]
    for p in pools:
        dims.append(tuple(dims[-1][a] // p[a] for a in range(3)))
    L = [("convb_in", 4, ch[0], 3, dims[0], dt)]  # on the network's input: no input gradient
    for l in range(len(pools)):
        L.append(("pool", ch[l], 0, pools[l][0], dims[l], dt))
        resblock(L, ch[l], ch[l + 1], dims[l + 1], dt)
    for l in reversed(range(len(pools))):
        L.append(("upcat", ch[l + 1], ch[l], pools[l][0], dims[l + 1], dt))
        resblock(L, ch[l + 1] + ch[l], ch[l], dims[l], dt)
    L += [("convb", ch[0], latent, 1, dims[0], dt), ("sumsq", latent, 0, 0, dims[0], dt)]
    return L


def stack_layers(D, H, W, S=1, dt="f32"):
    d = (D // S, H, W)
    L = []
    for i in range(3):  # the first convolution reads the network's input: no input gradient
        L += [("convb_in" if i == 0 else "convb", 8, 8, 3, d, dt), ("relu", 8, 0, 0, d, dt)]
    return L + [("sumsq", 8, 0, 0, d, dt)]


def layers_of(model, dims, S):
    if model == "stack":
        return stack_layers(*dims, S=S)
    return mffn_layers(*dims, zsplit=S)


def key(l):
    op, c1, c2, k, d, dt = l
    return f"{op},{dt},{c1},{c2},{k},{d[0]},{d[1]},{d[2]}"


# the benchmarked configurations (run.sh): model, G, S, batch, dims, chunks
def bench_shapes():
    out = set()
    for model, dims in (("stack", (64, 64, 64)), ("stack", (128, 64, 64)), ("mffn", (8, 64, 64)), ("mffn", (8, 128, 64)),
                        ("mffn", (64, 64, 64))):
        for S in (1, 2):
            for l in layers_of(model, dims, S):
                out.add(key(l))
    return sorted(out)


# ---- reading the results ------------------------------------------------------------------------------------


def parse(path):
    runs, layers, comm = [], defaultdict(dict), defaultdict(list)
    loads = []
    for line in open(path):
        if line.startswith("# round"):
            loads.append(float(line.split()[4]))
        if not line.startswith("RESULT"):
            continue
        kv = dict(t.split("=", 1) for t in line.split()[1:])
        if "model" in kv:
            runs.append(kv)
        elif "layer" in kv:
            layers[int(kv["ranks"])][kv["layer"]] = float(kv["time"])
        elif "comm" in kv:
            comm[kv["comm"]].append(kv)
    return runs, layers, comm, loads


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def config_of(r):
    return (r["model"], int(r["G"]), int(r["S"]), int(r["batch"]), r["dims"], int(r["chunks"]))


# ---- the model on this machine -------------------------------------------------------------------------------


class Machine:
    def __init__(self, layers, comm):
        self.layers = layers
        p2p = sorted((int(c["bytes"]), float(c["time"])) for c in comm["p2p"])
        ar = sorted((int(c["bytes"]), float(c["time"])) for c in comm["allreduce"])
        # alpha from the smallest messages, beta from the largest (past the eager limit)
        self.alpha = median([t for b, t in p2p if b <= 512] or [1e-6])
        self.beta = (p2p[-1][1] - self.alpha) / p2p[-1][0] if p2p else 1e-10
        self.ar_alpha = median([t for b, t in ar if b <= 512] or [1e-6])
        self.ar_beta = (ar[-1][1] - self.ar_alpha) / ar[-1][0] if ar else 1e-10
        self.sync = sorted((float(c["compute"]), max(float(c["time"]), 0.0)) for c in comm["sync"])

    def wait(self, since):
        """the extra wait of a synchronisation after `since` seconds of compute (measured, log-interpolated)"""
        if not self.sync:
            return 0.0
        s = self.sync
        if since <= s[0][0]:
            return s[0][1]
        if since >= s[-1][0]:
            return s[-1][1]
        for (c0, w0), (c1, w1) in zip(s, s[1:]):
            if c0 <= since <= c1:
                f = math.log(since / c0) / math.log(c1 / c0)
                return w0 + f * (w1 - w0)
        return s[-1][1]

    def t(self, l, procs):
        """forward + backward time of a layer for a rank of a run with `procs` processes on 2 cores"""
        k = key(l)
        if procs <= 1:
            return self.layers[1][k]
        t2 = self.layers[2][k]
        return t2 * procs / 2 if procs > 2 else t2  # more processes than cores share them


def esize(dt):
    return 4 if dt == "f32" else 8


def predict(mach, model, G, S, batch, dims, chunks, nweights):
    """the step time of a configuration, and its parts"""
    procs = G * S
    nloc = -(-batch // G)
    L = layers_of(model, dims, S)
    comp = sum(mach.t(l, procs) for l in L) * nloc
    halo = bn = 0.0
    if S > 1:
        for l in L:
            op, c1, c2, k, d, dt = l
            tl = mach.t(l, procs)
            if op.startswith("conv") and k == 3:
                plane = d[1] * d[2] if model == "stack" else d[0] * d[2]  # stack: split along D; mffn: along z
                n = d[0] if model == "stack" else d[1]
                xb = mach.alpha + mach.beta * c1 * plane * esize(dt)
                for part, frac in (("fwd", 1 / 3), ("bwd", 2 / 3)):  # forward and backward exchanges
                    exch = xb + mach.wait(tl * frac)
                    interior = tl * frac * max(0, n - 2) / n if chunks > 0 else 0.0
                    halo += max(0.0, exch - interior) * nloc
            elif op in ("bnrelu", "bn"):
                bn += 5 * (mach.ar_alpha + mach.wait(tl / 3)) * nloc
    grad = 0.0
    if procs > 1:
        wbytes = nweights * (4 if model == "stack" else 8)
        grad = mach.ar_alpha + mach.ar_beta * min(wbytes, BUCKET) + mach.wait(comp)
    return comp + halo + bn + grad, dict(compute=comp, halo=halo, bn=bn, grad=grad)


# ---- the model at scale: a 512^3 sample on up to 1,024 ranks -------------------------------------------------
# Assumptions (stated in docs/parallel.md): compute from this machine's measured per-layer rates (1 rank),
# for a rank that is one core of this machine ("core") or 100 times faster ("accelerator", about a V100's
# float64 rate against this core's measured convolution rate); a cluster network of alpha = 2 us,
# beta = 1 / 12.5 GB/s (100 Gb/s), ring allreduce 2 log2(P) alpha + 2 (P-1)/P bytes beta, halo messages
# alpha + bytes beta; no waiting for descheduled partners; 16 GiB per rank for the stored activations.
NET_ALPHA, NET_BETA, MEM = 2e-6, 1 / 12.5e9, 16 * 2**30


def rate_tables(mach):
    """per-op throughput from the 1-rank layer times: conv MACs/s by kernel size, elementwise bytes/s"""
    conv, elem = defaultdict(list), defaultdict(list)
    for k, t in mach.layers[1].items():
        op, dt, c1, c2, kk, d0, d1, d2 = k.split(",")
        c1, c2, kk, v = int(c1), int(c2), int(kk), int(d0) * int(d1) * int(d2)
        if dt != "f64" or t <= 0:
            continue
        if op.endswith("_in"):
            continue  # forward and weight gradient only
        if op.startswith("conv"):
            conv[kk].append(3.0 * c1 * c2 * kk**3 * v / t)
        else:
            elem[op].append((c1 + c2) * v * 8 / t)
    return {k: median(v) for k, v in conv.items()}, {k: median(v) for k, v in elem.items()}


def big_layers(n=512):
    return mffn_layers(n, n, n, pools=((2, 2, 2),) * 4, dt="f64")


def layer_time(l, crates, erates, vol_frac, speed=1.0):
    op, c1, c2, k, d, dt = l
    v = d[0] * d[1] * d[2] * vol_frac
    if op.startswith("conv"):  # forward, input gradient (not for the network's input), weight gradient
        return (2.0 if op.endswith("_in") else 3.0) * c1 * c2 * k**3 * v / crates[k] / speed
    return (c1 + c2) * v * 8 / erates.get(op, median(list(erates.values()))) / speed


def axes_of(S):
    """S spatial ranks as a 2-D layout s1 x s2 (as even as possible), cutting z and x"""
    s1 = 2 ** (int(math.log2(S)) // 2)
    return s1, S // s1


def layer_cost(l, G, S, B, crates, erates, speed):
    """one layer's time per step with B samples over G groups of S spatial ranks"""
    op, c1, c2, k, d, dt = l
    nloc = -(-B // G)
    s1, s2 = axes_of(S)
    if d[1] < s1 or d[2] < s2:
        return math.inf
    t = layer_time(l, crates, erates, 1.0 / S, speed) * nloc
    if S > 1 and op.startswith("conv") and k == 3:
        a = (d[0] * d[2] / s2 * (s1 > 1) + d[0] * d[1] / s1 * (s2 > 1)) * c1 * 8  # one plane per neighbour
        exch = 2 * (2 * NET_ALPHA + a * NET_BETA) * nloc  # forward and backward, both sides at once
        interior = t * max(0.0, 1 - 2 * (s1 / d[1] + s2 / d[2]))  # the planes that need no halo
        t += max(0.0, exch - interior)
    if S > 1 and op in ("bnrelu", "bn"):
        t += 5 * 2 * math.log2(S) * NET_ALPHA * nloc
    return t


def activation_bytes(L, S, nloc):
    return sum((l[1] + l[2]) * l[4][0] * l[4][1] * l[4][2] * 8 for l in L) / S * nloc


def plan(L, B, P, crates, erates, nweights, speed, per_layer=True, only=None):
    """the best (G, S) for the whole network (uniform) or for each layer, or None if nothing fits.
    Memory per rank is the stored activations of its samples' slabs (the same for any split with
    G S = P and G dividing B; a pure data split needs a whole sample per rank)."""
    cands = [(G, P // G) for G in range(1, min(B, P) + 1) if P % G == 0 and B % G == 0]
    if only == "data":
        cands = [c for c in cands if c[1] == 1]
    if only == "spatial":
        cands = [c for c in cands if c[0] == 1]
    cands = [(G, S) for G, S in cands if activation_bytes(L, S, -(-B // G)) <= MEM]
    if not cands:
        return None
    # a layer may also run on a subset of the ranks (G S dividing P, the others idle for it), which
    # pays off where halos and latencies outweigh the compute (the coarse levels, Dryden et al.)
    sub = [(G, S) for G in range(1, min(B, P) + 1) if B % G == 0 for S in (2**i for i in range(0, 11)) if G * S <= P and P % (G * S) == 0]
    grad_exposed = 2 * math.log2(P) * NET_ALPHA + 2 * (P - 1) / P * min(nweights * 8, BUCKET) * NET_BETA if P > 1 else 0.0
    if not per_layer:
        best = min(((sum(layer_cost(l, G, S, B, crates, erates, speed) for l in L), (G, S)) for G, S in cands), key=lambda x: x[0])
        return (best[0] + grad_exposed, [best[1]] * len(L)) if best[0] < math.inf else None
    # per layer: dynamic programming over the layers; changing the split between two layers
    # redistributes the activations (an all-to-all of this rank's share, forward and backward)
    A = activation_bytes(L, 1, 1)
    states = {c: (layer_cost(L[0], *c, B, crates, erates, speed), [c]) for c in sub if activation_bytes(L[:1], c[1], -(-B // c[0])) <= MEM * activation_bytes(L[:1], 1, 1) / A}
    for l in L[1:]:
        vol = l[1] * l[4][0] * l[4][1] * l[4][2] * 8 * B / P
        redist = 2 * (math.sqrt(P) * NET_ALPHA + vol * NET_BETA)
        new = {}
        for c in sub:
            if activation_bytes([l], c[1], -(-B // c[0])) > MEM * activation_bytes([l], 1, 1) / A * 4:
                continue  # a layer may take up to 4 times its share of the memory
            cost = layer_cost(l, *c, B, crates, erates, speed)
            t0, path = min(((t + (redist if c0 != c else 0.0), p) for c0, (t, p) in states.items()), key=lambda x: x[0])
            new[c] = (t0 + cost, path + [c])
        states = new
    if not states:
        return None
    t, path = min(states.values(), key=lambda x: x[0])
    mem = sum(activation_bytes([l], c[1], -(-B // c[0])) for l, c in zip(L, path))
    if mem > MEM:  # the plan's activations do not fit: the best uniform one stands
        return plan(L, B, P, crates, erates, nweights, speed, per_layer=False, only=only)
    return (t + grad_exposed, path) if t < math.inf else None


def at_scale(mach, nweights):
    crates, erates = rate_tables(mach)
    L = big_layers()
    Ps = [2**i for i in range(0, 11)]
    A = activation_bytes(L, 1, 1)
    print(f"\nat scale: the MeshfreeFlowNet encoder (widths 16..256, poolings 2x2x2) on 512^3 samples, float64; measured rates "
          f"(conv 3^3 {crates.get(3, 0)/1e9:.1f} GMAC/s, 1^3 {crates.get(1, 0)/1e9:.1f} GMAC/s per core); network alpha "
          f"{NET_ALPHA*1e6:.0f} us, {1/NET_BETA/1e9:.1f} GB/s; {MEM/2**30:.0f} GiB per rank; a sample's activations {A/2**30:.0f} GiB")
    curves, choice = {}, {}
    scen = {"strong": lambda P: 4, "weak": lambda P: max(1, P // 32)}
    for speed, rank in ((1.0, "core"), (100.0, "accelerator")):
        serial = sum(layer_time(l, crates, erates, 1.0, speed) for l in L)
        print(f"rank = {rank}: one sample's step on one rank (memory aside) {serial:.3g} s")
        for sc, Bf in scen.items():
            for strat in ("data", "spatial", "uniform", "per-layer"):
                vals, base = [], None
                for P in Ps:
                    B = Bf(P)
                    r = plan(L, B, P, crates, erates, nweights, speed, per_layer=strat == "per-layer", only={"data": "data", "spatial": "spatial"}.get(strat))
                    if sc == "weak" and P < 32:
                        r = None
                    if r and sc == "weak" and base is None:
                        base = r[0]
                    vals.append(None if not r else serial * B / (P * r[0]) if sc == "strong" else base / r[0])
                    if r and strat == "per-layer" and P == 1024:
                        choice[(rank, sc)] = (r, B)
                curves[(rank, sc, strat)] = vals
            print(f"  {sc:6s} ({'4 samples, T1 / (P T_P)' if sc == 'strong' else '1 sample per 32 ranks, T_32 / T_P'}), ranks " + " ".join(f"{P:>6d}" for P in Ps))
            for strat in ("data", "spatial", "uniform", "per-layer"):
                print(f"    {strat:9s}" + " " * 38 + " ".join(f"{100*v:5.1f}%" if v else "     -" for v in curves[(rank, sc, strat)]))
    for (rank, sc), ((t, path), B) in choice.items():
        print(f"per-layer choice, {rank} ranks, {sc} scaling, 1,024 ranks, {B} samples (step {t:.3g} s): data groups x spatial ranks per layer")
        runs, prev = [], None
        for l, c in zip(L, path):
            tag = f"{l[0]}@{l[4][0]}^3"
            if c != prev:
                runs.append([tag, tag, c, 1])
            else:
                runs[-1][1] = tag
                runs[-1][3] += 1
            prev = c
        for first, last, c, n in runs:
            print(f"  {n:2d} layers {first:>14s} .. {last:<14s} {c[0]:4d} x {c[1]:4d}")
    return Ps, curves


# ---- main --------------------------------------------------------------------------------------------------------


def efficiency_rows(model, base, deep=None):
    """the efficiencies the benchmark reports: (name, one-rank configuration, configuration on p cores, p),
    configurations as config_of gives them; strong T1 / (p T2), weak (p = 1) T1 / T2"""
    c = lambda G, S, B, dims, chunks=4: (model, G, S, B, dims, chunks)  # noqa: E731
    return [("strong, batch 2, data 2x1", c(1, 1, 2, base), c(2, 1, 2, base), 2),
            ("strong, batch 2, spatial 1x2", c(1, 1, 2, base), c(1, 2, 2, base), 2),
            ("strong, batch 2, spatial 1x2 blocking", c(1, 1, 2, base), c(1, 2, 2, base, 0), 2),
            ("strong, one sample, spatial 1x2", c(1, 1, 1, base), c(1, 2, 1, base), 2),
            ("weak, data 2x1 (1 -> 2 samples)", c(1, 1, 1, base), c(2, 1, 2, base), 1),
            (f"weak, spatial 1x2 ({base} -> {deep})", c(1, 1, 1, base), c(1, 2, 1, deep), 1),
            ("strong, batch 4, hybrid 2x2", c(1, 1, 4, base), c(2, 2, 4, base), 2)]


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "layers":
        with open(sys.argv[2], "w") as f:
            f.write("# op dtype c1 c2 k d h w (perfmodel.py layers)\n")
            for k in bench_shapes():
                f.write(" ".join(k.split(",")) + "\n")
        return
    if len(sys.argv) < 4 or sys.argv[1] != "model":
        sys.exit(__doc__)
    runs, layers, comm, loads = parse(sys.argv[2])
    out = sys.argv[3]
    mach = Machine(layers, comm)
    groups = defaultdict(list)
    weights = {}
    for r in runs:
        groups[config_of(r)].append(float(r["median"]))
        weights[r["model"]] = int(r["weights"])
    med = {c: median(v) for c, v in groups.items()}
    print(f"load average at the rounds: {', '.join(f'{x:.1f}' for x in loads)}")
    print(f"alpha-beta: p2p alpha {mach.alpha*1e6:.2f} us, beta {1/mach.beta/1e9:.2f} GB/s; allreduce alpha {mach.ar_alpha*1e6:.2f} us; "
          f"wait of a synchronisation after 0.02/0.2/2 ms of compute: {', '.join(f'{w*1e3:.2f}' for c, w in mach.sync)} ms")

    # measured scaling and the model's prediction of every configuration
    print("\nconfiguration                               measured: median (spread of rounds)  model (s)   error   [compute halo bn grad]")
    errs, inside = [], 0
    for c in sorted(med):
        model, G, S, B, dims, chunks = c
        d = tuple(int(x) for x in dims.split("x"))
        try:
            pt, parts = predict(mach, model, G, S, B, d, chunks, weights[model])
        except KeyError:
            continue
        e = (pt - med[c]) / med[c]
        lo, hi = min(groups[c]), max(groups[c])
        errs.append(abs(e))
        inside += lo <= pt <= hi
        print(f"{model:5s} {G}x{S} batch {B} {dims:9s} {'blocking' if chunks == 0 else 'overlap ':8s} {med[c]:8.3f} ({lo:.3f}-{hi:.3f})  {pt:12.3f}  {100*e:+6.1f}%   "
              f"[{parts['compute']:.3f} {parts['halo']:.3f} {parts['bn']:.3f} {parts['grad']:.3f}]")
    if errs:
        print(f"model vs measured: median |error| {100*median(errs):.1f}%, largest {100*max(errs):.1f}%, "
              f"{sum(e <= 0.15 for e in errs)} of {len(errs)} within 15%, {inside} inside the spread of the rounds")

    print("\nefficiency on 2 cores (strong: T1 / (2 T2); weak: T1 / T2; hybrid 2x2: 4 processes on 2 cores)")
    eff = {}
    for model, base, deep in (("stack", "64x64x64", "128x64x64"), ("mffn", "8x64x64", "8x128x64"), ("mffn", "64x64x64", None)):
        label = model if model == "stack" or base == "8x64x64" else f"{model} {base}"
        for name, c1, c2, p in efficiency_rows(model, base, deep):
            t1, t2 = med.get(c1), med.get(c2)
            if t1 and t2:
                eff[(label, name)] = t1 / (p * t2)
                print(f"  {label:14s} {name:45s} {t1:7.3f} s -> {t2:7.3f} s   {100*t1/(p*t2):5.1f}%")

    Ps, curves = at_scale(mach, weights.get("mffn", 562032))
    write_figures(out, eff, curves, Ps, f"load {max(loads):.1f}" if loads else "load ?")


def write_figures(out, eff, curves, Ps, load):
    """load: the largest load average during the rounds, shown with the measured points."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("perfmodel.py: matplotlib missing: no figures")
        return
    fig, axs = plt.subplots(1, 2, figsize=(12, 6.2))
    styles = {"data": "o", "spatial": "s", "uniform": "^", "per-layer": "D"}
    for ax, sc in zip(axs, ("strong", "weak")):
        for rank, ls in (("core", "--"), ("accelerator", "-")):
            for strat in ("spatial", "uniform", "per-layer"):
                xs = [P for P, v in zip(Ps, curves[(rank, sc, strat)]) if v]
                ys = [100 * v for v in curves[(rank, sc, strat)] if v]
                if xs:
                    ax.semilogx(xs, ys, ls + styles[strat], base=2, ms=4, label=f"model, {rank} ranks: {strat}")
        ax.set_xlabel("ranks")
        ax.set_ylabel("parallel efficiency (%)")
        ax.set_ylim(0, 110)
        ax.set_xlim(1, 2048)
        ax.grid(alpha=0.3)
        ax.set_title(f"{sc} scaling, MFFN encoder, 512$^3$ samples" + (" (4 samples)" if sc == "strong" else " (1 sample / 32 ranks)"), fontsize=10)
    axs[1].semilogx([128], [96.8], "k*", ms=12, base=2, label="MeshfreeFlowNet (SC20): 96.8%, 128 GPUs")
    for (model, name), e in eff.items():
        if name.startswith("weak, data"):
            axs[1].semilogx([2], [100 * e], "x", ms=9, base=2, label=f"measured here ({load}): {model}, data 2x1")
        if name.startswith("strong, batch 2, data"):
            axs[0].semilogx([2], [100 * e], "x", ms=9, base=2, label=f"measured here ({load}): {model}, data 2x1")
    for ax in axs:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "model_1024.png"), dpi=110)
    plt.close(fig)
    # timeline of one step (written by run.sh with -trace)
    for name in ("stack", "mffn"):
        files = [os.path.join(out, f"timeline_{name}.{r}") for r in (0, 1)]
        if not all(os.path.exists(f) for f in files):
            continue
        fig, ax = plt.subplots(figsize=(12, 2.6))
        colors = {"conv_fwd": "#9ecae1", "conv_bwd": "#3182bd", "halo_wait_fwd": "#e6550d", "halo_wait_bwd": "#a63603",
                  "allreduce_fwd": "#31a354", "allreduce_bwd": "#006d2c"}
        for r, f in enumerate(files):
            for line in open(f):
                w = line.split()
                if not w or w[0] not in ("event", "phase"):
                    continue
                t0, t1 = float(w[3]), float(w[4])
                if w[0] == "phase":
                    ax.broken_barh([(t0, t1 - t0)], (r - 0.45, 0.1), color={"forward": "#bbbbbb", "backward": "#777777", "sync": "#000000"}[w[2]])
                else:
                    y = r - 0.3 if w[2].startswith("conv") else r + 0.05
                    ax.broken_barh([(t0, max(t1 - t0, 1e-5))], (y, 0.3), color=colors.get(w[2], "k"))
        ax.set_yticks([0, 1])
        ax.set_yticklabels(["rank 0", "rank 1"])
        ax.set_xlabel("seconds from the step's start")
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=c, label=k) for k, c in colors.items()] + [Patch(color="#777777", label="phase: fwd / bwd / grad sync")],
                  fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.35))
        ax.set_title(f"one training step, {name}, 1 x 2 spatial ranks (layers' spans above, waits below)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"timeline_{name}.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
