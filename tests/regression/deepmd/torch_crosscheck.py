#!/usr/bin/env python3
"""Independent cross-check of a surge Deep Potential model file against PyTorch.

Reads the HDF5 model file (config attributes, parameter slab, davg/dstd, bias) with h5py, rebuilds
the se_e2_a model in PyTorch from the published formulas (its own brute-force periodic neighbour
search, environment matrix, embedding/fitting nets, autograd forces), evaluates a frame of an
md_frames dataset, and compares with the energy and forces of surge's C API
(build/tests/test_deepmd_tool energy); embedding nets per neighbour type or per type pair, as the file
says. Asserts |dE| < 1e-9 |E| and max |dF| < 1e-9 eV/A: two codes,
one model. usage: torch_crosscheck.py MODEL.h5 DATA.h5 FRAME"""
import subprocess, sys, h5py, numpy as np, torch

torch.set_default_dtype(torch.float64)
model, data, frame = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(model, "r") as f:
    A = {k: f.attrs[k] for k in f.attrs}
    slab = np.asarray(f["params"][()], dtype=np.float64)  # f32 on disk after a float32 training
    davg = torch.tensor(f["davg"][()]); dstd = torch.tensor(f["dstd"][()]); bias = f["bias_atom_e"][()]
with h5py.File(data, "r") as f:
    x = torch.tensor(f["samples/coord"][frame], dtype=torch.float64).reshape(-1, 3)
    box = np.asarray(f["samples/box"][frame], dtype=np.float64).reshape(3, 3)
    types = np.asarray(f["static/type"][()], dtype=int)
rc, rs = float(A["rcut"]), float(A["rcut_smth"]); sel = [int(s) for s in A["sel"]]
emb = [int(s) for s in A["neuron"]]; fit = [int(s) for s in A["fitting_neuron"]]; M2 = int(A["axis_neuron"])
rdt_e, rdt_f = int(A["resnet_dt_embedding"]), int(A["resnet_dt_fitting"])
ntypes = len(sel); nnei = sum(sel); sec = np.cumsum([0] + sel); N = len(types); M = emb[-1]
# type_one_side 1: one embedding net per neighbour type; 0: one per (centre, neighbour) type pair,
# stored centre-major (DeePMD-kit's type_one_side); files written before the attribute: 1
one_side = int(A.get("type_one_side", 1))

off = 0
def take(*shape):
    global off
    n = int(np.prod(shape)); t = torch.tensor(slab[off:off + n]).reshape(shape); off += n; return t
enets = []
for t in range(ntypes if one_side else ntypes * ntypes):
    layers, i = [], 1
    for o in emb:
        W, b = take(o, i), take(o)
        res = 1 if o == i else (2 if o == 2 * i else 0)
        idt = take(o) if (rdt_e and res) else None
        layers.append((W, b, idt, res)); i = o
    enets.append(layers)
fnets = []
for t in range(ntypes):
    layers, i = [], M * M2
    for l, o in enumerate(fit + [1]):
        W, b = take(o, i), take(o)
        res = 1 if (0 < l < len(fit) and o == i) else 0
        idt = take(o) if (res and rdt_f) else None
        layers.append((W, b, idt, res, l < len(fit))); i = o
    fnets.append(layers)
assert off == len(slab), "parameter count mismatch"

def net(layers, h):
    for L in layers:
        W, b, idt, res = L[:4]; act = L[4] if len(L) > 4 else True
        z = h @ W.T + b
        if not act: return z
        a = torch.tanh(z) * (idt if idt is not None else 1)
        h = h + a if res == 1 else (torch.cat([h, h], -1) + a if res == 2 else a)
    return h

x.requires_grad_()
inv = np.linalg.inv(box)
shifts = [np.array([i, j, k]) @ box for i in range(-2, 3) for j in range(-2, 3) for k in range(-2, 3)]
E = 0
for a in range(N):
    c = types[a]
    rows = [[] for _ in range(ntypes)]
    for b in range(N):
        for s in shifts:
            d = x[b] + torch.tensor(s) - x[a]
            r = float(d.norm())
            if 1e-9 < r < rc: rows[types[b]].append((r, d))
    R = torch.zeros(nnei, 4)
    parts = []
    for t in range(ntypes):
        lst = sorted(rows[t], key=lambda p: p[0])[:sel[t]]
        block = []
        for r, d in lst:
            rr = d.norm(); u = (rr - rs) / (rc - rs)
            sw = torch.where(rr < rs, torch.ones(()), u ** 3 * (-6 * u ** 2 + 15 * u - 10) + 1)
            s = sw / rr
            block.append(torch.cat([s.reshape(1), s * d / rr]))
        block += [torch.zeros(4)] * (sel[t] - len(lst))
        parts.append(torch.stack(block))
    Rn = (torch.cat(parts) - davg[c]) / dstd[c]
    T = 0
    for t in range(ntypes):
        Rt = Rn[sec[t]:sec[t + 1]]
        T = T + net(enets[t if one_side else c * ntypes + t], Rt[:, :1]).T @ Rt
    T = T / nnei
    D = (T @ T[:M2].T).reshape(1, -1)
    E = E + net(fnets[c], D)[0, 0] + float(bias[c])
F = -torch.autograd.grad(E, x)[0]
out = subprocess.run(["build/tests/test_deepmd_tool", "energy", model, data, str(frame), "1", "build/tmp/deepmd_xcheck_f.txt"], capture_output=True, text=True, check=True)
Ec = float(out.stdout.split()[0]); Fc = np.loadtxt("build/tmp/deepmd_xcheck_f.txt")
dE = abs(Ec - float(E)); dF = np.abs(Fc - F.numpy()).max()
print(f"surge C API E = {Ec:.10f}, PyTorch E = {float(E):.10f}: |dE| {dE:.2e} eV; max |dF| {dF:.2e} eV/A (max |F| {np.abs(Fc).max():.3f})")
ok = dE < 1e-9 * abs(Ec) and dF < 1e-9
print("PASS" if ok else "FAIL"); sys.exit(0 if ok else 1)
