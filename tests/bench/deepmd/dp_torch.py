#!/usr/bin/env python3
"""The same Deep Potential (se_e2_a, DeePMD-kit water hyper-parameters) in PyTorch on CPU, for the
training-throughput comparison in tests/bench/deepmd/bench.sh. Same maths as surrogates/deepmd:
C^2 switch s(r)=sw(r)/r, rows s[1,x/r,y/r,z/r], per-type davg/dstd, embedding nets per neighbour type
with residual doubling, D = T T<^T / nnei^2, fitting nets per centre type with timestep residuals,
forces by autograd (create_graph) and a force+energy loss, Adam, float64 (f32: float32).
cuda: every tensor on the GPU (torch >= 2.0: torch.set_default_device), each step timed to its end
(torch.cuda.synchronize); docs/nn.md "Surrogates on a GPU" (tests/bench/nn/surrogates_cuda.sh).
usage: dp_torch.py COORD.npy BOX.npy ENERGY.npy FORCE.npy TYPE.raw NSTEPS [small] [f32] [cuda]"""
import sys, time, numpy as np, torch

torch.set_num_threads(1)
flags = sys.argv[7:]
small, f32, cuda = "small" in flags, "f32" in flags, "cuda" in flags
if cuda:
    torch.set_default_device("cuda")
dt, npdt = (torch.float32, np.float32) if f32 else (torch.float64, np.float64)
torch.set_default_dtype(dt)
coord, box, energy, force = (np.load(sys.argv[i]).astype(npdt) for i in range(1, 5))
types = np.loadtxt(sys.argv[5], dtype=int)
nsteps = int(sys.argv[6])
N = len(types); rc, rs, sel = 6.0, 0.5, [46, 92]
emb = [10, 20, 40] if small else [25, 50, 100]; M2 = 8 if small else 16
fit = [120] * 3 if small else [240] * 3
nnei = sum(sel); sec = np.cumsum([0] + sel)

def nlist_of(x, b):
    """extended atoms (images within rc) and per-type sorted neighbour lists, as envmat.c"""
    # in float64 whatever the model's precision: in float32 the image (0,0,0) of an atom, computed by a
    # larger matrix product than the atom itself, lay ~1e-7 from it (> the 1e-8 cut), became its own
    # neighbour at r = 0 and made every f32 loss NaN
    x = x.astype(np.float64); b = b.astype(np.float64)
    inv = np.linalg.inv(b); s = x @ inv; s -= np.floor(s)
    ext, mp = [], []
    for i in (-1, 0, 1):
        for j in (-1, 0, 1):
            for k in (-1, 0, 1):
                ext.append((s + [i, j, k]) @ b); mp.append(np.arange(N))
    ext = np.concatenate(ext); mp = np.concatenate(mp); xw = s @ b
    shift = ext - xw[mp]
    nl = -np.ones((N, nnei), dtype=np.int64)
    for a in range(N):
        d = np.linalg.norm(ext - xw[a], axis=1)
        for t in range(2):
            c = np.where((d < rc) & (d > 1e-8) & (types[mp] == t))[0]
            c = c[np.argsort(d[c], kind="stable")][:sel[t]]
            nl[a, sec[t]:sec[t] + len(c)] = c
    return mp, shift, nl

def switch(r):
    u = ((r - rs) / (rc - rs)).clamp(0, 1)
    return torch.where(r < rs, torch.ones_like(r), u**3 * (-6 * u**2 + 15 * u - 10) + 1) * (r < rc)

def envmat(x, mp, shift, nl):
    ext = x[mp] + shift.to(x.dtype)
    safe = nl.clamp(min=0)
    rij = ext[safe] - x[:, None, :]
    mask = (nl >= 0)[..., None]
    rij = torch.where(mask, rij, torch.full_like(rij, rc + 1.0))
    r = rij.norm(dim=-1, keepdim=True)
    s = switch(r) / r
    return torch.cat([s, s * rij / r], dim=-1) * mask

def lin(i, o):
    W = torch.randn(o, i) / (i + o) ** 0.5; b = torch.randn(o)
    return [W.requires_grad_(), b.requires_grad_()]

class DP:
    def __init__(self):
        self.e = [[lin(i, o) for i, o in zip([1] + emb[:-1], emb)] for _ in range(2)]
        self.f = []
        for _ in range(2):
            layers, ins = [], emb[-1] * M2
            for o in fit:
                W, b = lin(ins, o); idt = (0.1 + 0.001 * torch.randn(o)).requires_grad_()
                layers.append((W, b, idt if o == ins else None)); ins = o
            layers.append((*lin(ins, 1), None)); self.f.append(layers)
        self.params = [p for net in self.e for l in net for p in l] + [p for net in self.f for l in net for p in l if p is not None]
    def embed(self, t, h):
        for W, b in self.e[t]:
            a = torch.tanh(h @ W.T + b)
            h = h + a if W.shape[0] == W.shape[1] else (torch.cat([h, h], -1) + a if W.shape[0] == 2 * W.shape[1] else a)
        return h
    def fitting(self, t, h):
        for k, (W, b, idt) in enumerate(self.f[t]):
            if k == len(self.f[t]) - 1: return h @ W.T + b
            a = torch.tanh(h @ W.T + b)
            h = h + idt * a if idt is not None else a

def energy_of(model, x, mp, shift, nl, davg, dstd, bias):
    R = envmat(x, mp, shift, nl)
    tt = torch.as_tensor(types)
    Rn = (R - davg[tt][:, None, :]) / dstd[tt][:, None, :]
    T = 0
    for t in range(2):
        Rt = Rn[:, sec[t]:sec[t + 1]]
        G = model.embed(t, Rt[..., :1])
        T = T + G.transpose(1, 2) @ Rt
    T = T / nnei
    D = (T @ T[:, :M2].transpose(1, 2)).reshape(N, -1)
    E = 0
    for t in range(2):
        idx = np.where(types == t)[0]
        E = E + (model.fitting(t, D[idx]) + bias[t]).sum()
    return E

torch.manual_seed(1)
model = DP()
b0 = box[0].reshape(3, 3)
frames = [nlist_of(coord[k].reshape(N, 3), box[k].reshape(3, 3)) for k in range(min(4, len(coord)))]
# statistics as DeePMD-kit (padding included), energy bias: fixed composition -> min-norm lstsq
with torch.no_grad():
    R = envmat(torch.as_tensor(coord[0].reshape(N, 3)), *(torch.as_tensor(a) for a in frames[0]))
davg = torch.zeros(2, 4); dstd = torch.ones(2, 4)
for t in range(2):
    d = R[types == t].reshape(-1, 4)
    davg[t, 0] = d[:, 0].mean(); dstd[t, 0] = max(d[:, 0].std(unbiased=False).item(), 1e-2)
    dstd[t, 1:] = max((d[:, 1:] ** 2).mean().sqrt().item(), 1e-2)
cnt = np.bincount(types, minlength=2).astype(float)
bias = torch.as_tensor(np.linalg.lstsq(np.tile(cnt, (len(energy), 1)), energy.astype(float), rcond=None)[0]).to(dt)
opt = torch.optim.Adam(model.params, lr=1e-3)
times = []
for step in range(nsteps):
    k = step % len(frames)
    t0 = time.perf_counter()
    x = torch.as_tensor(coord[k].reshape(N, 3)).requires_grad_()
    mp, shift, nl = (torch.as_tensor(a) for a in frames[k])
    E = energy_of(model, x, mp, shift, nl, davg, dstd, bias)
    F = -torch.autograd.grad(E, x, create_graph=True)[0]
    loss = 0.02 / N * (E - float(energy[k])) ** 2 + 1000 / (3 * N) * ((F - torch.as_tensor(force[k].reshape(N, 3))) ** 2).sum()
    opt.zero_grad(); loss.backward(); opt.step()
    if cuda:
        torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
t = np.median(times[1:]) if len(times) > 1 else times[0]
where = torch.cuda.get_device_name() if cuda else "1 thread"
print(f"torch {'small' if small else 'full'}{' f32' if f32 else ''} batch 1: {t:.4f} s/step, {1/t:.3f} frames/s (median of {len(times)-1} steps, torch {torch.__version__}, {where}); loss at the last step {loss.item():.6e}")
