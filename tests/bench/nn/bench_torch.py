#!/usr/bin/python3
"""bench_torch.py -- the same four training steps as bench_nn.c in PyTorch
(CPU). Usage: bench_torch.py BENCH [steps] ; prints "BENCH median_ms - maxrss_MB".
Threads: torch.set_num_threads(int(env SGNN_BENCH_THREADS)) (run.sh sets it,
and OPENBLAS_NUM_THREADS, to the same value for both engines).
SGNN_BENCH_DEVICE=cuda runs on the GPU (run_cuda.sh); each step ends by reading
the loss, which waits for the device, as bench_nn.c does."""
import os, resource, sys, time
import torch

name = sys.argv[1] if len(sys.argv) > 1 else "dp"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
torch.set_num_threads(int(os.environ.get("SGNN_BENCH_THREADS", "1")))
torch.manual_seed(1)
dev = torch.device(os.environ.get("SGNN_BENCH_DEVICE", "cpu"))
if dev.type != "cpu":
    torch.set_default_device(dev)  # torch >= 2.0; Debian's 1.13 runs the CPU path only
mse = torch.nn.functional.mse_loss

def mlp(dims, dtype):
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1], dtype=dtype))
        if i < len(dims) - 2:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)

if name == "dp":
    model = mlp([1600, 240, 240, 240, 1], torch.float64)
    X = torch.randn(192, 1600, dtype=torch.float64); Y = torch.randn(192, 1, dtype=torch.float64)
    def loss(): return mse(model(X), Y)
elif name == "conv":
    model = torch.nn.Sequential(torch.nn.Conv3d(4, 32, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv3d(32, 64, 3, padding=1), torch.nn.ReLU())
    X = torch.randn(8, 4, 4, 16, 16); Y = torch.randn(8, 64, 4, 16, 16)
    def loss(): return mse(model(X), Y)
elif name == "lstm":
    class M(torch.nn.Module):
        def __init__(s):
            super().__init__()
            s.lstm = torch.nn.LSTM(5, 64, num_layers=2, batch_first=True)
            s.head = torch.nn.Linear(64, 1)
        def forward(s, x):
            out, _ = s.lstm(x)
            return s.head(out[:, -1])
    model = M()
    X = torch.randn(32, 8, 5); Y = torch.randn(32, 1)
    def loss(): return mse(model(X), Y)
elif name == "force":
    model = mlp([3, 64, 64, 1], torch.float64)
    X = torch.randn(256, 3, dtype=torch.float64, requires_grad=True)
    Y = torch.randn(256, 3, dtype=torch.float64)
    def loss():
        E = model(X)
        g, = torch.autograd.grad(E.sum(), X, create_graph=True)
        return mse(-g, Y)
else:
    sys.exit("unknown benchmark " + name)

opt = torch.optim.Adam(model.parameters(), lr=1e-3)
ts = []
for it in range(-3, steps):
    t0 = time.perf_counter()
    L = loss()
    opt.zero_grad()
    L.backward()
    opt.step()
    L.item()
    dt = time.perf_counter() - t0
    if it >= 0:
        ts.append(dt)
ts.sort()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("%s %.3f - %.1f" % (name, 1e3 * ts[len(ts) // 2], rss))
