#!/usr/bin/python3
"""An independent reference for imported DeePMD-kit models: evaluates a DeePMD-kit v3 serialized
se_e2_a energy model (.yaml) with PyTorch autograd, written from DeePMD-kit's documented dpmodel
semantics (no surge code), and writes DeePMD-kit's testcase format (atomic energies, forces, atomic
virials of the configurations of a testcase file) for test_deepmd_interop to compare against.

    dp_reference.py variants FIXTURE.yaml OUTDIR   write model variants of the fixture (below)
    dp_reference.py eval TESTCASE.yaml MODEL.yaml [MODEL.yaml ...]   writes MODEL_ref.yaml beside each

Variants of DeePMD-kit's deeppot_sea.yaml that no DeePMD-kit fixture covers: embedding nets per type
pair (type_one_side false: net of centre ti, neighbour tt at ti + ntypes*tt, each made different),
the other activation functions, exclude_types, per-slot davg/dstd, a non-zero out_bias.
"""
import copy
import math
import random
import sys

import torch
import yaml

torch.set_default_dtype(torch.float64)


def arrays(x):
    if isinstance(x, dict):
        if x.get("@class") == "np.ndarray":
            return torch.tensor(x["value"], dtype=torch.float64)
        return {k: arrays(v) for k, v in x.items()}
    if isinstance(x, list):
        return [arrays(v) for v in x]
    return x


def act(name, z):
    name = name.lower()
    if name == "tanh":
        return torch.tanh(z)
    if name in ("gelu", "gelu_tf"):
        return 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
    if name == "relu":
        return torch.relu(z)
    if name == "softplus":
        return torch.nn.functional.softplus(z)
    if name == "sigmoid":
        return torch.sigmoid(z)
    if name in ("linear", "none"):
        return z
    raise ValueError(name)


def net(layers, x):
    for L in layers:
        v = L["@variables"]
        w, b, idt = v["w"], v["b"], v.get("idt")
        y = act(L["activation_function"], x @ w + b)
        if idt is not None:
            y = y * idt
        if L["resnet"] and w.shape[1] == w.shape[0]:
            y = y + x
        elif L["resnet"] and w.shape[1] == 2 * w.shape[0]:
            y = y + torch.cat([x, x], -1)
        x = y
    return x


def switch(r, rs, rc):
    if r < rs:
        return 1.0 + 0 * r
    if r >= rc:
        return 0 * r
    u = (r - rs) / (rc - rs)
    return u**3 * (-6 * u**2 + 15 * u - 10) + 1


def evaluate(model, coord, atype, box):
    d, f = model["descriptor"], model["fitting"]
    nt, sel = len(model["type_map"]), d["sel"]
    rc, rs = d["rcut"], d["rcut_smth"]
    sec = [sum(sel[:t]) for t in range(nt + 1)]
    nnei, n = sec[-1], len(atype)
    davg, dstd = d["@variables"]["davg"], d["@variables"]["dstd"]
    excl = set()
    for p in d.get("exclude_types", []) + model.get("pair_exclude_types", []):
        excl.add((p[0], p[1]))
        excl.add((p[1], p[0]))
    nets = d["embeddings"]["networks"]
    x = torch.tensor(coord).reshape(n, 3)
    ext = []  # (original atom, shift vector)
    shifts = [(0, 0, 0)]
    if box is not None:
        L = [box[0], box[4], box[8]]
        x = x - torch.floor(x / torch.tensor(L)) * torch.tensor(L)
        shifts = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    for s in shifts:
        for j in range(n):
            ext.append((j, s))
    pos = [x[j] + (torch.tensor(s) * torch.tensor([box[0], box[4], box[8]]) if box is not None else 0) for j, s in ext]
    pairs, energies = [], []
    for i in range(n):
        ti = atype[i]
        rows = torch.zeros(nnei, 4)
        real = [False] * nnei
        for tt in range(nt):
            cand = []
            for k, (j, s) in enumerate(ext):
                if atype[j] != tt or (j == i and s == (0, 0, 0)):
                    continue
                r = float(torch.linalg.norm(pos[k] - x[i]))
                if r < rc:
                    cand.append((r, k))
            cand.sort()
            assert len(cand) <= sel[tt], "sel overflow"
            for q, (_, k) in enumerate(cand):
                rij = (pos[k] - x[i]).clone().requires_grad_(True)
                pairs.append((i, ext[k][0], rij))
                r = torch.linalg.norm(rij)
                sw = switch(r, rs, rc)
                rows = rows.index_put((torch.tensor(sec[tt] + q),), torch.cat([(sw / r).reshape(1), sw / r * rij / r]))
                real[sec[tt] + q] = True
        if d["type"] in ("se_r", "se_e2_r"):  # radial column only; D = sum_j G(rn_j) / (5 nnei), padding included
            rn = (rows[:, :1] - davg[ti]) / dstd[ti]
            Dv = 0
            for tt in range(nt):
                idx = tt if d.get("type_one_side", True) else ti + nt * tt
                Dv = Dv + net(nets[idx]["layers"], rn[sec[tt]:sec[tt + 1]]).sum(0)
            D = Dv / (5.0 * nnei)
            e = net(f["nets"]["networks"][ti]["layers"], D)[0] + f["@variables"]["bias_atom_e"][ti][0]
            ob = model.get("@variables", {}).get("out_bias")
            energies.append(e + ob[0][ti][0] if ob is not None else e)
            continue
        rn = (rows - davg[ti]) / dstd[ti]
        T = torch.zeros(nets[0]["neuron"][-1], 4)
        for tt in range(nt):
            idx = tt if d["type_one_side"] else ti + nt * tt
            blk = rn[sec[tt]:sec[tt + 1]]
            if (ti, tt) in excl:
                mask = torch.tensor([0.0 if real[sec[tt] + q] else 1.0 for q in range(sel[tt])])
                blk = blk * mask[:, None]
            G = net(nets[idx]["layers"], blk[:, :1])
            T = T + G.T @ blk
        T = T / nnei
        D = (T @ T[: d["axis_neuron"]].T).reshape(-1)
        e = net(f["nets"]["networks"][ti]["layers"], D)[0] + f["@variables"]["bias_atom_e"][ti][0]
        ob = model.get("@variables", {}).get("out_bias")
        if ob is not None:
            e = e + ob[0][ti][0]
        energies.append(e)
    E = sum(energies)
    grads = torch.autograd.grad(E, [p[2] for p in pairs], allow_unused=True)
    F = torch.zeros(n, 3)
    AV = torch.zeros(n, 9)
    for (i, j, rij), g in zip(pairs, grads):
        if g is None:
            continue
        F[j] -= g
        F[i] += g
        AV[j] -= torch.outer(g, rij.detach()).reshape(9)
    return [float(e) for e in energies], F.reshape(-1).tolist(), AV.reshape(-1).tolist()


def variants(fixture, outdir):
    base = yaml.safe_load(open(fixture))
    rng = random.Random(7)

    def perturb(tree, scale):
        if isinstance(tree, dict):
            if tree.get("@class") == "np.ndarray":
                def walk(v):
                    return [walk(u) for u in v] if isinstance(v, list) else v * (1 + scale * rng.uniform(-1, 1))
                tree["value"] = walk(tree["value"])
                return
            for v in tree.values():
                perturb(v, scale)
        elif isinstance(tree, list):
            for v in tree:
                perturb(v, scale)

    def save(name, m):
        yaml.safe_dump(m, open(f"{outdir}/{name}.yaml", "w"))

    # type pairs: ntypes^2 nets, each its own (perturbed) copy of the neighbour type's one-side net
    m = copy.deepcopy(base)
    d = m["model"]["descriptor"]
    one = d["embeddings"]["networks"]
    nt = len(one)
    pair = []
    for idx in range(nt * nt):
        tt = idx // nt
        n = copy.deepcopy(one[tt])
        perturb(n, 0.3)
        pair.append(n)
    d["embeddings"]["networks"] = pair
    d["embeddings"]["ndim"] = 2
    d["type_one_side"] = False
    save("pairs", m)
    # activations (descriptor and fitting differ), out_bias
    for a, fa in (("gelu", "softplus"), ("sigmoid", "relu"), ("softplus", "gelu"), ("linear", "tanh")):
        m = copy.deepcopy(base)
        d, f = m["model"]["descriptor"], m["model"]["fitting"]
        d["activation_function"] = a
        for n in d["embeddings"]["networks"]:
            n["activation_function"] = a
            for L in n["layers"]:
                L["activation_function"] = a
        f["activation_function"] = fa
        for n in f["nets"]["networks"]:
            n["activation_function"] = fa
            for L in n["layers"][:-1]:
                L["activation_function"] = fa
        m["model"]["@variables"]["out_bias"]["value"] = [[[0.25], [-0.5]]]
        save(f"act_{a}_{fa}", m)
    # exclude_types: O-H pairs, in the descriptor; H-H in the model's pair_exclude_types
    m = copy.deepcopy(base)
    m["model"]["descriptor"]["exclude_types"] = [[0, 1]]
    m["model"]["pair_exclude_types"] = [[1, 1]]
    save("excl", m)
    # per-slot statistics
    m = copy.deepcopy(base)
    perturb(m["model"]["descriptor"]["@variables"]["davg"], 0.2)
    perturb(m["model"]["descriptor"]["@variables"]["dstd"], 0.2)
    save("slots", m)


def main():
    if sys.argv[1] == "variants":
        variants(sys.argv[2], sys.argv[3])
        return
    tc = yaml.safe_load(open(sys.argv[2]))
    for path in sys.argv[3:]:
        model = arrays(yaml.safe_load(open(path))["model"])
        out = {"type_map": tc["type_map"], "results": []}
        for blk in tc["results"][:2]:
            e, f, v = evaluate(model, blk["coord"], blk["atype"], blk.get("box"))
            out["results"].append({"coord": blk["coord"], "atype": blk["atype"], "box": blk.get("box"), "atomic_energy": e, "force": f, "atomic_virial": v})
        yaml.safe_dump(out, open(path[: -len(".yaml")] + "_ref.yaml", "w"))


if __name__ == "__main__":
    main()
