#!/usr/bin/python3
"""MeshfreeFlowNet's training step on surge's NN engine against the same network in PyTorch (Debian's
python3-torch 1.13, CPU): figures, not pass/fail (docs/mffn.md "Training cost" and "Against PyTorch 1.13").

  torch_ref.py [--config deck|paper] [--points P] [--steps N]

1. build/tests/test_bench_mffn builds the model (the configuration below), times N training steps on
   one crop 4 x 16 x 16 with P query points (gamma 0.0125: L1 + PDE residual by double backward; and
   gamma 0), and dumps the model file, the crop and its first step's loss and gradient;
2. here the same network is built in torch from that model file (its weights in the slab order of
   SgMFFNCreate), the loss and the gradient of the same crop are computed and compared with surge's
   (they must agree to round-off: the same function, the same derivative), then N steps are timed;
3. the ratio surge / torch of the CPU time per step (one thread each: both processes run with
   OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=1 -- this script re-executes itself with them, since PyTorch's
   GEMMs are OpenBLAS's and a second OpenBLAS thread would add its CPU seconds to torch's -- plus
   torch.set_num_threads(1), and the allocator settings of tests/bench/engine_env.sh; float64 both;
   CPU seconds of each process, not wall time: the machine is shared).

configs: deck = inputs/mffn/ra1e6.yaml (U-Net 16 32 64, two [1,2,2] poolings, latent 32, ImNet
128 64 32, BN scale/shift only, residual); paper = the paper's (16..256, four poolings, latent 32,
ImNet 512 256 128 64 32, BN with batch statistics)."""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from engine_env import same_env  # noqa: E402

same_env(1)  # before torch and OpenBLAS are loaded

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as Fn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BENCH = os.path.join(ROOT, "build", "tests", "test_bench_mffn")
CONFIGS = {"deck": ["-channels", "16,32,64", "-pool", "1,2,2,1,2,2", "-latent", "32", "-imnet", "128,64,32", "-batchnorm", "0", "-residual", "1"],
           "paper": []}


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


class MFFN:
    """the network of surrogates/mffn/model.c, op for op"""

    def __init__(self, path, exact_softplus):
        with h5py.File(path, "r") as f:
            a = f.attrs
            self.ch = list(a["channels"])
            self.nl = len(self.ch) - 1
            self.pool = np.array(a["pool"]).reshape(-1, 3) if self.nl else np.zeros((0, 3), int)
            def one(k):  # a 1-element attribute as a scalar (numpy >= 2 refuses int() of a 1-d array)
                return np.asarray(a[k]).reshape(-1)[0]
            self.latent, self.neck = int(one("latent")), int(one("neck_div"))
            self.mlp = list(a["imnet"])
            self.bn = bool(one("batchnorm"))
            self.residual = bool(one("residual")) if "residual" in a else False
            self.nu, self.kappa = float(one("nu")), float(one("kappa"))
            self.scale, self.mean, self.std = [np.array(a[k], float) for k in ("scale", "mean", "std")]
            slab = torch.tensor(f["params"][()])
        self.exact = exact_softplus
        self.params, off = [], 0

        def take(*shape):
            nonlocal off
            n = int(np.prod(shape))
            t = slab[off:off + n].reshape(*shape).clone().requires_grad_(True)
            off += n
            self.params.append(t)
            return t

        def block(ci, co):
            nk = max(1, co // self.neck)
            return dict(w1=take(nk, ci, 1, 1, 1), g1=take(nk), b1=take(nk), w2=take(nk, nk, 3, 3, 3), g2=take(nk), b2=take(nk),
                        w3=take(co, nk, 1, 1, 1), g3=take(co), b3=take(co), ws=take(co, ci, 1, 1, 1), bs=take(co))

        self.in_w, self.in_b = take(self.ch[0], 4, 3, 3, 3), take(self.ch[0])
        self.down = [block(self.ch[l], self.ch[l + 1]) for l in range(self.nl)]
        self.up = {}
        for l in range(self.nl - 1, -1, -1):
            self.up[l] = block(self.ch[l + 1] + self.ch[l], self.ch[l])
        self.out_w, self.out_b = take(self.latent, self.ch[0], 1, 1, 1), take(self.latent)
        lat = self.latent + (4 if self.residual else 0)
        self.W, self.B = [], []
        for k in range(len(self.mlp) + 1):
            nin = (self.mlp[k - 1] if k else 0) + 3 + lat
            nout = self.mlp[k] if k < len(self.mlp) else 4
            self.W.append(take(nout, nin))
            self.B.append(take(nout))
        assert off == slab.numel(), (off, slab.numel())

    def convbn(self, x, w, g, b, pad, relu):
        c = Fn.conv3d(x, w, None, 1, pad)
        if not self.bn or c.numel() == c.shape[1]:
            n = c * g.view(1, -1, 1, 1, 1) + b.view(1, -1, 1, 1, 1)
        else:
            n = Fn.batch_norm(c, None, None, g, b, training=True, momentum=0.1, eps=1e-5)
        return Fn.relu(n) if relu else n

    def res(self, r, x):
        a = self.convbn(x, r["w1"], r["g1"], r["b1"], 0, True)
        b = self.convbn(a, r["w2"], r["g2"], r["b2"], 1, True)
        c = self.convbn(b, r["w3"], r["g3"], r["b3"], 0, False)
        return Fn.relu(c + Fn.conv3d(x, r["ws"], r["bs"]))

    def encode(self, x):
        skip = [Fn.conv3d(x, self.in_w, self.in_b, 1, 1)]
        for l in range(self.nl):
            k = tuple(int(v) for v in self.pool[l])
            skip.append(self.res(self.down[l], Fn.max_pool3d(skip[l], k, k)))
        h = skip[self.nl]
        for l in range(self.nl - 1, -1, -1):
            k = tuple(int(v) for v in self.pool[l])
            u = h.repeat_interleave(k[0], 2).repeat_interleave(k[1], 3).repeat_interleave(k[2], 4)
            h = self.res(self.up[l], torch.cat([u, skip[l]], 1))
        lat = Fn.conv3d(h, self.out_w, self.out_b)
        return torch.cat([lat, x], 1) if self.residual else lat

    def softplus(self, z):
        if self.exact:  # the engine's formula, for the equality check
            return torch.where(z > 0, z + torch.log1p(torch.exp(-z.abs())), torch.log1p(torch.exp(-z.abs())))
        return Fn.softplus(z)

    def decode(self, lat, pts):
        L, dims = lat.shape[1], lat.shape[2:]
        P = pts.shape[0]
        d = torch.tensor(dims)
        i0 = torch.minimum(torch.clamp(torch.floor(pts.detach()).long(), min=0), d - 2)  # [P, 3]
        off = torch.tensor([[(q >> 2) & 1, (q >> 1) & 1, q & 1] for q in range(8)])  # [8, 3]
        cor = i0[:, None, :] + off[None]  # [P, 8, 3]
        idx = (cor[..., 0] * dims[1] + cor[..., 1]) * dims[2] + cor[..., 2]
        codes = lat.reshape(L, -1).t()[idx.reshape(-1)]  # [8P, L]
        rel = (pts[:, None, :] - cor.to(pts.dtype)).reshape(-1, 3)
        in0 = torch.cat([rel, codes], 1)
        h = None
        for k in range(len(self.W)):
            x = in0 if k == 0 else torch.cat([h, in0], 1)
            z = Fn.linear(x, self.W[k], self.B[k])
            h = self.softplus(z) if k < len(self.W) - 1 else z
        y = h
        if self.residual:
            y = y + codes[:, self.latent:self.latent + 4]
        f = (pts - i0.to(pts.dtype))[:, None, :]  # [P, 1, 3]
        fac = torch.where(off[None].bool(), f, 1 - f)  # [P, 8, 3]
        w = fac[..., 0:1] * fac[..., 1:2] * fac[..., 2:3]
        return (y.reshape(P, 8, 4) * w).sum(1)

    def residuals(self, out, pts):
        d1, d2, val = {}, {}, {}
        for c in range(4):
            val[c] = out[:, c] * self.std[c] + self.mean[c]
            g = torch.autograd.grad(out[:, c].sum(), pts, create_graph=True)[0]
            for k in range(3):
                if c > 0 and k > 0:
                    h = torch.autograd.grad(g[:, k].sum(), pts, create_graph=True)[0]
                    d2[c, k] = h[:, k] * (self.std[c] / self.scale[k] ** 2)
                d1[c, k] = g[:, k] * (self.std[c] / self.scale[k])
        P_, B_, U_, W_ = 0, 1, 2, 3

        def transport(q, diff):
            return d1[q, 0] + val[U_] * d1[q, 2] + val[W_] * d1[q, 1] - diff * d2[q, 1] - diff * d2[q, 2]
        r0 = transport(B_, self.kappa)
        r1 = transport(U_, self.nu) + d1[P_, 2]
        r2 = transport(W_, self.nu) + d1[P_, 1] - val[B_]
        r3 = d1[U_, 2] + d1[W_, 1]
        return torch.stack([r0, r1, r2, r3], 1)

    def loss(self, x, pts, tgt, gamma):
        pts = pts.clone().requires_grad_(True)
        out = self.decode(self.encode(x), pts)
        reg = (out - tgt).abs().mean()
        if gamma > 0:
            pde = self.residuals(out, pts).abs().mean()
            return reg + gamma * pde, reg, pde
        return reg, reg, torch.zeros(())


def main():
    cfg, P, N = arg("--config", "deck"), int(arg("--points", "512")), int(arg("--steps", "3"))
    if not os.path.exists(BENCH):
        sys.exit("torch_ref.py: build/tests/test_bench_mffn is missing: make tests")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([BENCH, str(P), str(N), *CONFIGS[cfg], "-dump", d], check=True, stdout=subprocess.PIPE, text=True).stdout
        print(out.strip())
        m = re.search(r"gamma 0.0125: loss ([\d.]+) s \+ backward ([\d.]+) s = ([\d.]+) s/crop; gamma 0: ([\d.]+) \+ ([\d.]+) = ([\d.]+)", out)
        if not m:
            sys.exit("torch_ref.py: test_bench_mffn printed no timing line: stopping rather than printing a ratio of nothing")
        ours = [float(v) for v in m.groups()]
        net = MFFN(os.path.join(d, "model.h5"), exact_softplus=True)
        raw = np.fromfile(os.path.join(d, "crop.f64"))
        x = torch.tensor(raw[:4 * 4 * 16 * 16]).reshape(1, 4, 4, 16, 16)
        pts = torch.tensor(raw[4 * 4 * 16 * 16:4 * 4 * 16 * 16 + 3 * P]).reshape(P, 3)
        tgt = torch.tensor(raw[4 * 4 * 16 * 16 + 3 * P:]).reshape(P, 4)
        ref = np.fromfile(os.path.join(d, "ref.f64"))
    net.scale = net.scale  # the dumped physics
    loss, reg, pde = net.loss(x, pts, tgt, 0.0125)
    loss.backward()
    g = torch.cat([p.grad.reshape(-1) for p in net.params]).numpy()
    eloss = abs(loss.item() - ref[0]) / abs(ref[0])
    egrad = np.abs(g - ref[3:]).max() / np.abs(ref[3:]).max()
    print(f"same network: loss surge {ref[0]:.15e} torch {loss.item():.15e} (relative difference {eloss:.1e}; regression {reg.item():.6e}, PDE {pde.item():.6e}); "
          f"gradient of {g.size} weights: max difference / max |gradient| {egrad:.1e}")
    if eloss > 1e-10 or egrad > 1e-8:
        sys.exit("torch_ref.py: the torch network is not surge's: the timing comparison would be meaningless")
    net.exact = False  # torch's own softplus kernel for the timing
    res = {}
    for gamma in (0.0125, 0.0):
        tl = tb = 0
        for it in range(N + 1):
            for p in net.params:
                p.grad = None
            t0 = time.process_time()
            loss = net.loss(x, pts, tgt, gamma)[0]
            t1 = time.process_time()
            loss.backward()
            t2 = time.process_time()
            if it:
                tl, tb = tl + t1 - t0, tb + t2 - t1
        res[gamma] = (tl / N, tb / N)
    print(f"torch {torch.__version__} (1 thread): gamma 0.0125: loss {res[0.0125][0]:.4f} s + backward {res[0.0125][1]:.4f} s = {sum(res[0.0125]):.4f} s/crop; "
          f"gamma 0: {res[0.0][0]:.4f} + {res[0.0][1]:.4f} = {sum(res[0.0]):.4f} s/crop")
    print(f"ratio surge / torch (CPU time per training step, {cfg} configuration, {P} points): gamma 0.0125: {ours[2] / sum(res[0.0125]):.2f} "
          f"(loss {ours[0] / res[0.0125][0]:.2f}, backward {ours[1] / res[0.0125][1]:.2f}); gamma 0: {ours[5] / sum(res[0.0]):.2f}")


if __name__ == "__main__":
    main()
