#!/usr/bin/python3
"""summary.py -- efficiencies from results files of device/run.sh or ../run.sh (any number, rounds pooled):
   tests/bench/parallel/device/summary.py RESULTS [RESULTS ...]
Strong T1 / (2 T2), weak T1 / T2, from the median step time of each configuration over all rounds,
from the best (smallest) one (a shared machine's other work only ever adds time: the convention of
tests/bench/nn/run.sh), and the range of the ratio taken round by round."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from perfmodel import config_of, efficiency_rows, median  # noqa: E402

times, by_round = defaultdict(list), defaultdict(dict)
for n, path in enumerate(sys.argv[1:]):
    for line in open(path):
        if line.startswith("#"):
            print(line.rstrip()) if "cores" in line or "round" in line else None
        if not line.startswith("RESULT"):
            continue
        kv = dict(t.split("=", 1) for t in line.split()[1:])
        if "model" not in kv:  # run.sh's layer and ping-pong lines
            continue
        c = config_of(kv)
        times[c].append(float(kv["median"]))
        by_round[(n, kv["round"])][c] = float(kv["median"])
if not times:
    sys.exit("summary.py: no RESULT lines in " + " ".join(sys.argv[1:]))
rounds = len(by_round)
print(f"\nefficiency on 2 ranks, {rounds} rounds: from the medians | from the best times | [range of the per-round ratios]")
for model, dims in (("mffn", "64x64x64"), ("mffn", "8x64x64"), ("stack", "64x64x64")):
    for name, c1, c2, p in efficiency_rows(model, dims):
        if c1 not in times or c2 not in times:
            continue
        t1, t2 = median(times[c1]), median(times[c2])
        per = [r[c1] / (p * r[c2]) for r in by_round.values() if c1 in r and c2 in r]
        b1, b2 = min(times[c1]), min(times[c2])
        print(f"  {model} {dims:9s} {name:40s} {t1:7.3f} s -> {t2:7.3f} s  {100 * t1 / (p * t2):6.1f}%"
              f" | {b1:7.3f} s -> {b2:7.3f} s  {100 * b1 / (p * b2):6.1f}%  [{100 * min(per):.1f}-{100 * max(per):.1f}%]")
