#!/usr/bin/python3
"""A performance model of SgTrainer's data-parallel options (issue 38; docs/parallel.md, "The options at
scale"): plain data parallelism, ZeRO stages 1, 2 and 3 (surge's stage 3 gathers the whole slab once per
step), Lion Cub's 1-bit votes (all-gathered, or summed by the low-bit vote allreduce), SDP4Bit (stage 2 in 4
bits, sdp4bit.c; at stage 3 its gradient half, the weights gathered exactly), and, for comparison, DeepSpeed's per-layer stage 3, which surge does not implement.

  optmodel.py RESULTS     predict every 2-rank run of tests/bench/train/options.sh from its 1-rank runs
                          and this machine's ping-pong, compare with the measured steps; then the model
                          at scale
  optmodel.py             the model at scale only
  optmodel.py -figure PNG [RESULTS]   the same, and the figure of docs/parallel.md

A step on N ranks, global batch B, Psi parameters of b bytes, is
  compute   forward + backward of ceil(B/N) samples at the rate a rank gets: on one rank the measured
            1-rank time of B samples x ceil(B/N)/B; on N ranks the rate of two 1-rank runs side by side
            (each rank a core of this 2-core machine), N/cores times slower where ranks share cores;
  update    the optimizer on the rank's parameters: Psi (stage 0, Lion Cub) or the block Psi/N (stages
            1-3), at the measured 1-rank rate per parameter; Lion Cub adds counting the N votes of every
            parameter at the rate its 1-rank run measures for one vote;
  comm      the collectives the trainer issues, with the bytes it counts (ring-optimal volumes):
            allreduce 2 log2(N) a + 2 (N-1)/N S b, reduce-scatter and all-gather log2(N) a + (N-1)/N S b,
            all-gather of s bytes per rank log2(N) a + (N-1) s b (Thakur, Rabenseifner & Gropp, IJHPCA
            19(1), 2005: recursive halving/doubling latency with ring bandwidth). The gradient allreduce of
            stages 0 and 1 is bucketed and started during backward (SgTrainer's `bucketed` sync), so only
            what outlasts backward is exposed, at least the last bucket (1 MiB); everything else (stage 2's
            reduce-scatter, the all-gathers after the update, Lion Cub's votes) is exposed.
Nothing is fitted to the 2-rank steps it predicts. On one node the collectives move a few MB through
shared memory (2-7 % of a step), so the 2-rank check tests the compute, update and byte terms; the
network terms at scale rest on the formulas above and the quoted link figures.
"""
import math
import re
import sys

BUCKET = 1 << 20

# ---- bytes and memory per rank ------------------------------------------------------------------------------


def lion_cub_bits(N):
    """bits per parameter of the vote counts in Lion Cub's quantized allreduce: a sum of N votes in
    {-1, +1} takes N + 1 values"""
    return max(1, math.ceil(math.log2(N + 1)))


def vote_message(psi, N):
    """bytes of the vote allreduce's message as surge packs it (surrogates/train/vote.c): counters of
    lion_cub_bits(N) bits, floor(64 / bits) to a 64-bit word (a counter never straddles two words)"""
    return 8 * math.ceil(psi / (64 // lion_cub_bits(N)))


def collectives(opt, psi, b, N, M=10, early=0.0, fills=None):
    """the collectives of one step: list of (kind, bytes S, exposed-or-overlapped); kinds: ar (allreduce of
    S bytes), rs / ag (reduce-scatter / all-gather of a whole S-byte slab), agb (all-gather of S bytes from
    every rank), as SgTrainer issues them (zero.c, lioncub.c) or as the paper designs would. By buckets
    (adam2b, adam3b): early = the whole-bucket bytes of the gradient's partial sums a rank sends early per
    step (more buckets open than -shard_grad_open_buckets allows; 0 for a network whose backward finishes
    its tensors in order), fills = the whole-bucket bytes of the parameter buckets a rank reads per step
    (None: each layer read for forward and again for backward)"""
    S = b * psi
    if N == 1:
        return []
    if opt in ("adam0", "lion0"):
        return [("ar", S, "overlap")]
    if opt == "adam1":
        return [("ar", S, "overlap"), ("ag", S, "exposed")]
    if opt == "adam2":
        return [("rs", S, "exposed"), ("ag", S, "exposed")]
    if opt == "adam3":  # surge's stage 3 (zero3.c): the whole slab all-gathered before the step, the gradient reduce-scattered
        return [("ag", S, "exposed"), ("rs", S, "exposed")]
    if opt == "zero3":  # DeepSpeed's stage 3: each layer all-gathered for forward and again for backward (prefetched)
        return [("ag", S, "overlap"), ("ag", S, "overlap"), ("rs", S, "exposed")]
    if opt == "adam2b":  # stage 2 by gradient buckets (zerograd.c): each bucket added one-sidedly into its owners'
        # blocks when backward has finished it, (bucket - own part) per sum: the reduce-scatter's bytes, + the
        # partial sums sent early; then the all-gather after the update
        return [("rs", S + early, "exposed"), ("ag", S, "exposed")]
    if opt == "adam3b":  # surge's stage 3 by buckets (zero3b.c): each bucket read one-sidedly at its use, the next
        # fetched ahead; a plain network reads each layer for forward and again for backward (the Deep
        # Potential, whose loss differentiates its forward, ~3 times: docs/parallel.md); the gradient by buckets
        # as adam2b (zerograd.c), no all-gather after the update
        reads = [("ag", S, "overlap"), ("ag", S, "overlap")] if fills is None else [("ag", fills, "overlap")]
        return reads + [("rs", S + early, "exposed")]
    sync = [("ar", S / M, "exposed")] if M else []  # the momenta averaged every M steps, per step
    if opt == "lioncub":
        return [("agb", math.ceil(psi / 8), "exposed")] + sync
    if opt == "lioncub_vote":  # -compress lion_cub_allreduce: the low-bit allreduce of the votes (vote.c)
        return [("ar", vote_message(psi, N), "exposed")] + sync
    if opt == "sdp4bit":  # stage 2, sdp4bit.c with one rank a node (-sdp4bit_node_ranks 1): the gradient in 4 bits +
        # a float32 scale per 128 values (Hadamard-smoothed), the weight differences in 4 bits + one per 2048
        return [("rs", psi * (0.5 + 4 / 128), "exposed"), ("ag", psi * (0.5 + 4 / 2048), "exposed")]
    if opt == "sdp4bit3":  # stage 3 + sdp4bit: the exact gather before the step, the 4-bit gradient reduce-scatter
        return [("ag", S, "exposed"), ("rs", psi * (0.5 + 4 / 128), "exposed")]
    raise ValueError(opt)


def ring_bytes(kind, S, N):
    """bytes a rank sends on average in a bandwidth-optimal collective (what SgTrainer counts)"""
    return {"ar": 2 * (N - 1) / N * S, "rs": (N - 1) / N * S, "ag": (N - 1) / N * S, "agb": (N - 1) * S}[kind]


def sent_per_step(opt, psi, b, N, M=10, **kw):
    return sum(ring_bytes(k, S, N) for k, S, _ in collectives(opt, psi, b, N, M, **kw))


def memory(opt, psi, b, N, buckets=None):
    """weights + gradients + optimizer state per rank, in bytes, as surge allocates them (stage 2 keeps
    the whole gradient slab: the engine's backward writes it; surge's stage 3 at the peak of a step: the
    gathered slab, the rank's block, the gradient slab; between steps it keeps (b + K) Psi/N). sdp4bit's
    working copies (sdp4bit.c): at stage 2 the weights as float64 (8 Psi), the rank's block as its exact
    weights, its old weights (b Psi/N each) and its difference (8 Psi/N), and the gradient as float64 (8
    Psi); at stage 3 only the gradient as float64, during a step on more than one rank. By buckets: the blocks
    + the bucket bytes whole at once (buckets: the bound the trainer states, rank-count independent: the 3
    largest open gradient buckets, + at stage 3 the 4 largest parameter buckets; None: each bucket 1% of
    the model)"""
    K = b if opt.startswith("lion") else 2 * b
    if opt == "adam2b":  # the weights, the gradient's block + the open buckets, the state's block
        return b * psi + (b + K) * psi / N + (3 * b * psi / 100 if buckets is None else buckets)
    if opt == "adam3b":  # the weights' block + 4 parameter buckets, the gradient's block + 3 open buckets, the state's block
        return (2 * b + K) * psi / N + (7 * b * psi / 100 if buckets is None else buckets)
    return {"adam0": 2 * b * psi + K * psi, "lion0": 2 * b * psi + K * psi, "adam1": 2 * b * psi + K * psi / N,
            "adam2": 2 * b * psi + K * psi / N,
            "adam3": 2 * b * psi + (b + K) * psi / N, "zero3": (2 * b + K) * psi / N, "lioncub": 3 * b * psi,
            "lioncub_vote": 3 * b * psi,
            "sdp4bit": 2 * b * psi + K * psi / N + 8 * psi + (2 * b + 8) * psi / N + 8 * psi,
            "sdp4bit3": 2 * b * psi + (b + K) * psi / N + (8 * psi if N > 1 else 0)}[opt]


# ---- time ---------------------------------------------------------------------------------------------------


def coll_time(kind, S, N, alpha, beta):
    lg = math.log2(N)
    if kind == "ar":
        return 2 * lg * alpha + 2 * (N - 1) / N * S * beta
    if kind in ("rs", "ag"):
        return lg * alpha + (N - 1) / N * S * beta
    return lg * alpha + (N - 1) * S * beta  # agb


def step_time(opt, psi, b, N, nloc, t_sample, t_bwd, upd_rate, vote_rate, alpha, beta, M=10, **kw):
    """(total, parts) of a step with nloc samples per rank; t_sample: forward + backward of one sample at
    the rate a rank gets, t_bwd: backward of the rank's samples"""
    comp = t_sample * nloc
    block = psi if opt in ("adam0", "lion0", "lioncub", "lioncub_vote") else psi / N
    upd = upd_rate * block
    if opt == "lioncub":  # every rank counts the N votes of every parameter
        upd += vote_rate * psi * N
    elif opt == "lioncub_vote":  # the allreduce sums the votes; one count per parameter to unpack
        upd += vote_rate * psi
    comm = 0.0
    for kind, S, how in collectives(opt, psi, b, N, M, **kw):
        t = coll_time(kind, S, N, alpha, beta)
        if how == "overlap":
            last = coll_time(kind, min(S, BUCKET), N, alpha, beta)
            t = max(last, t - t_bwd)
        comm += t
    return comp + upd + comm, dict(compute=comp, update=upd, comm=comm)


# ---- validation against options.sh ----------------------------------------------------------------------------


def parse(path):
    runs, pp, side, cores = {}, {}, [], 2
    for line in open(path):
        if not line.startswith("RESULT"):
            continue
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        if "cores" in kv:
            cores = int(kv["cores"])
        elif "side" in kv:
            side.append(float(kv["loss"]) + float(kv["backward"]))
        elif "opt" in kv:
            runs.setdefault((kv["opt"], int(kv["ranks"])), []).append(kv)
        elif kv.get("comm") == "p2p":
            pp[int(kv["bytes"])] = float(kv["time"])
    return runs, pp, side, cores


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def validate(path):
    runs, pp, side, cores = parse(path)
    big = [s for s in pp if s >= 1 << 18]
    beta = median([(pp[s] - pp[8]) / s for s in big]) if big and 8 in pp else 1 / 10e9
    alpha = pp.get(8, 1e-6)
    print(f"this machine (shared memory, ping-pong): alpha {alpha*1e6:.2f} us, {1/beta/1e9:.2f} GB/s")
    g = lambda o, n, k: median([float(r[k]) for r in runs[(o, n)]])  # noqa: E731
    psi = int(runs[("adam0", 1)][0]["psi"])
    b = 4  # the water model is float32
    B = int(runs[("adam0", 1)][0].get("batch", 4))
    upd = {o: g(o, 1, "update") / psi for o in ("adam0", "lion0") if (o, 1) in runs}
    vote = max(0.0, g("lioncub", 1, "update") - g("lion0", 1, "update")) / psi if ("lioncub", 1) in runs else 0.0  # one vote per parameter
    # (lioncub_vote's unpacking of one count per parameter is modelled at the same rate)
    print(f"Deep Potential, water: {psi} float{8*b} parameters, global batch {B}; medians of {len(runs[('adam0', 1)])} rounds")
    print(f"{'option':9s} {'ranks':>5s} {'bytes/step':>11s} {'counted':>9s} {'mem KiB':>8s} {'counted':>8s} "
          f"{'measured ms':>11s} {'model ms':>9s} {'error':>7s}   model: compute + update + comm (ms)")
    errs = []
    t_side = median(side) if side else None
    for o in ("adam0", "adam1", "adam2", "adam3", "adam2b", "adam3b", "lion0", "lioncub", "lioncub_vote", "sdp4bit", "sdp4bit3"):
        if (o, 1) not in runs:  # results of options.sh before an option was added, or left out by ONLY
            continue
        base = "lion0" if o.startswith("lion") else "adam0"
        fb = g(o, 1, "loss") + g(o, 1, "backward")
        bshare = g(o, 1, "backward") / fb
        bucketed = o in ("adam2b", "adam3b")
        K = 2 * b
        for N in (1, 2, 4):
            if (o, N) not in runs:
                continue
            meas = g(o, N, "step")
            other = g(o, 1, "step") - fb - g(o, 1, "update") - g(o, 1, "sync")  # the rest of a 1-rank step
            ts = fb / B if N == 1 or t_side is None else t_side * max(1.0, N / cores)  # more ranks than cores share them
            nloc = math.ceil(B / N)
            kw, mkw = {}, {}
            counted = float(runs[(o, N)][0]["sent_kib"] or "nan")
            if bucketed:
                # from the 1-rank run of the option (what its buckets and the model's backward do, not the
                # rank count): the partial sums' whole-bucket bytes per step (the Deep Potential's backward
                # sweeps its batch's frames together: the same partial sums on 1 and 2 ranks, measured 29 Nov)
                # and the parameter fills per step (each taken as an average bucket, Psi/nbuckets); the bucket
                # bytes held at once; the buckets' own cost inside backward (fills, accumulates, zeroing) as
                # the 1-rank compute's ratio to plain's
                kw["early"] = 1024 * g(o, 1, "early_kib")
                if o == "adam3b":
                    kw["fills"] = g(o, 1, "fills") / g(o, 1, "nbuckets") * b * psi
                mkw["buckets"] = 1024 * g(o, 1, "mem_kib") - (2 * b + K) * psi
                if N > 1 and t_side is not None:
                    ts *= fb / (g(base, 1, "loss") + g(base, 1, "backward"))
                # what the trainer counted: the gradient buckets' bytes (partial sums included) + the
                # all-gather (stage 2) or the fills' reads (stage 3)
                counted = g(o, N, "grad_sent_kib") + (g(o, N, "fill_read_kib") if o == "adam3b" else (N - 1) / N * b * psi / 1024)
            # M = 10 as the run; the start-up line counts a step between momentum syncs (M = 0)
            t, parts = step_time(o, psi, b, N, nloc, ts, ts * nloc * bshare, upd[base], vote, alpha, beta, M=10, **kw)
            t += other
            e = t / meas - 1
            if N > 1:
                errs.append(abs(e))
            print(f"{o:9s} {N:5d} {sent_per_step(o, psi, b, N, M=0, **kw)/1024:9.1f} K {counted:7.1f} K "
                  f"{memory(o, psi, b, N, **mkw)/1024:8.0f} {float(runs[(o, N)][0]['mem_kib'] or 'nan'):8.0f} {1e3*meas:11.1f} {1e3*t:9.1f} {100*e:+6.1f}%"
                  f"   {1e3*parts['compute']:.1f} + {1e3*parts['update']:.2f} + {1e3*parts['comm']:.2f}")
            if bucketed:
                print(f"{'':15s} by buckets: partial sums {kw['early']/1024:.1f} K of whole buckets a step (counted on this rank count "
                      f"{g(o, N, 'early_kib'):.1f}), gradient buckets open at most {float(runs[(o, N)][0]['open_peak_kib']):.1f} K"
                      + (f", fills {kw['fills']/1024:.1f} K whole a step read (counted: {g(o, N, 'fills'):.1f} fills, {g(o, N, 'fill_read_kib'):.1f} K from others)" if o == "adam3b" else ""))
    if errs:
        print(f"2- and 4-rank steps within 15%: {sum(e <= 0.15 for e in errs)} of {len(errs)} (median |error| {100*median(errs):.1f}%)")


# ---- at scale -------------------------------------------------------------------------------------------------
# Links (one rank per port, non-blocking fat tree): 10 and 25 Gb Ethernet at line rate with a TCP MPI
# latency of 20 / 10 us; InfiniBand HDR 200 Gb/s (25 GB/s) with 1 us.
NETS = (("10 GbE", 20e-6, 1 / 1.25e9), ("25 GbE", 10e-6, 1 / 3.125e9), ("IB HDR", 1e-6, 1 / 25e9))
OPTS = (("adam0", "plain data parallel (Adam)"), ("adam1", "ZeRO 1"), ("adam2", "ZeRO 2"), ("adam2b", "ZeRO 2 by gradient buckets (surge)"),
        ("adam3", "ZeRO 3, whole slab per step"), ("lioncub", "Lion Cub, all-gather of bits"),
        ("zero3", "ZeRO 3 per layer (DeepSpeed)"), ("adam3b", "ZeRO 3 by buckets (surge)"),
        ("lioncub_vote", "Lion Cub, vote allreduce"), ("sdp4bit", "SDP4Bit, 4-bit (one rank a node)"),
        ("sdp4bit3", "ZeRO 3 + SDP4Bit's 4-bit gradients"))
# Models, float64, one rank = one accelerator (100x this machine's core, as the hybrid model above):
#  MeshfreeFlowNet at the paper's size: 562,032 weights; 3.39 s per crop on one core with the PDE loss,
#   backward 2.11 s (docs/mffn.md), so 34 / 21 ms on an accelerator rank; one crop per rank (weak scaling).
#  A 1e8-parameter network: 6 Psi flops per sample point (forward 2, backward 4) for 2,048 points per rank
#   (4 crops x 512, the paper's batch of points) at 3.9 Tflop/s (half a V100's float64 peak).
# The optimizer: 2.5 ns per parameter on this core (Adam, options.sh), 100x faster on the accelerator;
# Lion Cub's vote counting the same per vote.
UPDATE = 2.5e-9 / 100
MODELS = (("MFFN paper size", 562032, 8, 3.39 / 100, 2.11 / 100),
          ("1e8 parameters", 100_000_000, 8, 6e8 * 2048 / 3.9e12, 4e8 * 2048 / 3.9e12))
RANKS = (8, 32, 128, 512, 1024)


def at_scale():
    print("\nat scale: one accelerator per rank, weak scaling (one crop / 2,048 points per rank and step)")
    for name, psi, b, fb, bwd in MODELS:
        print(f"\n{name}: {psi:,} float64 parameters, compute {1e3*fb:.1f} ms per step (backward {1e3*bwd:.1f})")
        print(f"  per rank at {RANKS[-1]} ranks, MiB of weights + gradients + optimizer state | MiB sent per step at ranks " + " ".join(f"{P:>7d}" for P in RANKS))
        for o, label in OPTS:
            print(f"    {label:34s} {memory(o, psi, b, RANKS[-1])/2**20:9.3g} |" + " ".join(f"{sent_per_step(o, psi, b, P)/2**20:7.2f}" for P in RANKS))
        for net, alpha, beta in NETS:
            print(f"  {net}: step ms (compute / step) at ranks " + " ".join(f"{P:>13d}" for P in RANKS))
            for o, label in OPTS:
                row = []
                for P in RANKS:
                    t, _ = step_time(o, psi, b, P, 1, fb, bwd, UPDATE, UPDATE, alpha, beta)
                    row.append(f"{1e3*t:.1f} ({100*fb/t:.0f}%)")
                print(f"    {label:34s}" + " ".join(f"{r:>13s}" for r in row))


def figure(path):
    """efficiency (compute / step) against ranks for the 1e8-parameter model on the three networks"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    name, psi, b, fb, bwd = MODELS[1]
    Ps = [2**i for i in range(3, 11)]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, (net, alpha, beta) in zip(axes, NETS):
        for o, label in OPTS:
            eff = [100 * fb / step_time(o, psi, b, P, 1, fb, bwd, UPDATE, UPDATE, alpha, beta)[0] for P in Ps]
            ax.plot(Ps, eff, "--" if "(n" in label else "-", marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{name}, {net}")
        ax.set_xlabel("ranks (one accelerator each, weak scaling)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("compute / step time (%)")
    axes[2].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main():
    args = sys.argv[1:]
    fig = None
    if len(args) >= 2 and args[0] == "-figure":
        fig = args[1]
        args = args[2:]
    if args:
        validate(args[0])
    at_scale()
    if fig:
        figure(fig)


if __name__ == "__main__":
    main()
