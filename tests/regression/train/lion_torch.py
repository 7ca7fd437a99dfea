#!/usr/bin/python3
"""Reference for -train_optimizer lion (tests/unit/train/test_trainer_zero.c, mode lion).

Reads DIR/lion_data.txt (x0 x1 x2 y per sample), DIR/lion_init.txt (the initial parameter slab:
w1 [3,5] row-major, b1 [5], w2 [5,1], b2 [1]) and DIR/lion_traj.txt (surge's slab after each of 20
steps), runs the same 20 full-batch steps in PyTorch (float64) with Lion written here from Chen et
al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 2 (torch 1.13 has no Lion):
    c = sign(beta1 m + (1 - beta1) g);  p <- p - lr (c + wd p);  m <- beta2 m + (1 - beta2) g
with lr 0.01, beta1 0.8, beta2 0.95, wd 0.1 (the test's options), on the loss
1/2 sum (tanh(x W1 + b1) W2 + b2 - y)^2 / n, and requires max |p_surge - p_torch| < 1e-12 at every
step. Exit 0 when they agree, 1 otherwise."""
import sys
import numpy as np
import torch

torch.set_default_dtype(torch.float64)
d = sys.argv[1]
data = np.loadtxt(f"{d}/lion_data.txt")
init = np.loadtxt(f"{d}/lion_init.txt")
traj = np.loadtxt(f"{d}/lion_traj.txt")
x, y = torch.tensor(data[:, :3]), torch.tensor(data[:, 3:4])
lr, b1, b2, wd, n = 0.01, 0.8, 0.95, 0.1, len(data)
shapes = [(3, 5), (5,), (5, 1), (1,)]
params, o = [], 0
for s in shapes:
    k = int(np.prod(s))
    params.append(torch.tensor(init[o:o + k].reshape(s), requires_grad=True))
    o += k
mom = [torch.zeros_like(p) for p in params]
worst = 0.0
for step in range(20):
    for p in params:
        p.grad = None
    w1, c1, w2, c2 = params
    loss = 0.5 * ((torch.tanh(x @ w1 + c1) @ w2 + c2 - y) ** 2).sum() / n
    loss.backward()
    with torch.no_grad():
        for p, m in zip(params, mom):
            g = p.grad
            c = torch.sign(b1 * m + (1 - b1) * g)
            p.sub_(lr * (c + wd * p))
            m.mul_(b2).add_((1 - b2) * g)
    flat = torch.cat([p.detach().reshape(-1) for p in params]).numpy()
    diff = np.abs(flat - traj[step]).max()
    worst = max(worst, diff)
    if diff >= 1e-12:
        print(f"FAIL: step {step + 1}: surge's Lion differs from the PyTorch reference by {diff:.3g} (want < 1e-12)")
        sys.exit(1)
print(f"PASS: 20 Lion steps (26 weights, loss {loss.item():.6g}): surge = PyTorch reference to {worst:.3g} (< 1e-12)")
