#!/usr/bin/python3
"""MeshfreeFlowNet's training step in PyTorch on a GPU, for the step-time comparison of docs/nn.md
"Surrogates on a GPU" (tests/bench/nn/surrogates_cuda.sh runs it): figures, not pass/fail.

  torch_cuda.py MODEL.h5 T,Z,X POINTS BATCH STEPS [cpu THREADS]

MODEL.h5: a model surge trained (`surge train ... -train_output NAME`); the network is torch_ref.py's
MFFN (surrogates/mffn/model.c op for op, checked there against surge's loss and gradient to round-off)
built from its weights and configuration. One step = what surge's trainer does per global batch: for
each of BATCH low-res crops of T x Z x X (4 channels, random normal: the time of a step does not depend
on the values) the L1 + 0.0125 x PDE-residual loss (double backward) at POINTS random query points,
summed; backward; Adam. float64, as surge's MFFN. Prints the median time of steps 2..STEPS, each timed
to its end (torch.cuda.synchronize). 'cpu THREADS' runs the same on the CPU with THREADS threads.
On a GPU it needs torch >= 2.0 (torch.set_default_device)."""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.getcwd(), "tests", "bench", "mffn"))  # torch_ref.py when this file travels alone
from torch_ref import MFFN  # noqa: E402  (re-executes this script in tests/bench/engine_env.sh's environment)

import torch  # noqa: E402


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    path, dims = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
    P, B, N = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    cpu = len(sys.argv) > 6 and sys.argv[6] == "cpu"
    dev = "cpu" if cpu else "cuda"
    if cpu:
        torch.set_num_threads(int(sys.argv[7]))
    elif not torch.cuda.is_available():
        sys.exit("torch_cuda.py: torch %s sees no CUDA device" % torch.__version__)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(dev)
    elif not cpu:
        sys.exit("torch_cuda.py: torch %s has no set_default_device (needs >= 2.0)" % torch.__version__)
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(1)
    net = MFFN(path, exact_softplus=False)
    opt = torch.optim.Adam(net.params, lr=1e-3)
    hi = torch.tensor([d - 1 for d in dims], dtype=torch.float64)
    crops = [(torch.randn(1, 4, *dims), torch.rand(P, 3) * hi, torch.randn(P, 4)) for _ in range(2 * B)]
    times = []
    for step in range(N):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = 0
        for b in range(B):
            x, pts, tgt = crops[(step * B + b) % len(crops)]
            loss = loss + net.loss(x, pts, tgt, 0.0125)[0]
        loss.backward()
        opt.step()
        if not cpu:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    where = "%d CPU threads" % torch.get_num_threads() if cpu else torch.cuda.get_device_name()
    print(f"torch mffn {os.path.basename(path)} crops {B} x {'x'.join(map(str, dims))}, {P} points: "
          f"{statistics.median(times[1:]):.4f} s/step (median of {N - 1} steps; first {times[0]:.3f} s; "
          f"{sum(p.numel() for p in net.params)} weights; torch {torch.__version__}, {where})")


if __name__ == "__main__":
    main()
