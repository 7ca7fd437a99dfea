"""Hostile input files for the bad-input catalogue (issue 33, "everything read is validated before it
is trusted"): copies of the repository's model files and of a training checkpoint and dataset with
one thing wrong each -- an attribute far outside what any model has (a 2^30-wide latent, K = -3,
L = 0 or 1e5, a million channels), a NaN or Inf in weights, optimizer moments, normalisation or
coordinates, a truncated copy, a file of another kind. Each is written to OUTDIR/NAME; the catalogue
(bad_input_catalogue.sh) runs surge on every one and asserts one "surge: error:" line.
Usage: hostile_files.py ROOT OUTDIR [CHECKPOINT DATASET SSTDATA]"""
import shutil
import sys

import h5py
import numpy as np

root, out = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
models = {
    "mffn": f"{root}/inputs/mffn/models/mffn_rb_superres.h5",
    "podlstm": f"{root}/inputs/podlstm/models/rb4_podlstm.h5",
    "deepmd": f"{root}/inputs/deepmd/models/water.h5",
}


def variant(src, name, edit):
    dst = f"{out}/{name}.h5"
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(f)


def setattr_(key, value, dtype=None):
    def edit(f):
        old = f.attrs[key]
        dt = dtype or (old.dtype if hasattr(old, "dtype") else None)
        f.attrs.create(key, np.asarray(value, dtype=dt) if dt is not None else value)
    return edit


def poke(dset, index, value):
    def edit(f):
        x = f[dset]
        a = x[...]
        a.flat[index] = value
        x[...] = a
    return edit


def shorten(dset, n):
    def edit(f):
        a = f[dset][...]
        del f[dset]
        f.create_dataset(dset, data=a.flat[:n])
    return edit


M, P, D = models["mffn"], models["podlstm"], models["deepmd"]
# MeshfreeFlowNet
variant(M, "mffn_latent", setattr_("latent", [1 << 30]))
variant(M, "mffn_channels", setattr_("channels", [8, 1000000, 32]))
variant(M, "mffn_inch", setattr_("in_channels", [-3]))
variant(M, "mffn_imnet0", setattr_("imnet", [64, 0, 16]))
variant(M, "mffn_pool0", setattr_("pool", [0] * 6))
variant(M, "mffn_factor", setattr_("factor", [1, 0, 2]))
variant(M, "mffn_neck", setattr_("neck_div", [0]))
variant(M, "mffn_nu", setattr_("nu", np.nan))
variant(M, "mffn_std", setattr_("std", [1, 0, 1, 1]))
variant(M, "mffn_nanw", poke("params", 100, np.nan))
variant(M, "mffn_infw", poke("params", 5, np.inf))
variant(M, "mffn_short", shorten("params", 1000))
# POD-LSTM
variant(P, "podlstm_K", setattr_("K", -3))
variant(P, "podlstm_L0", setattr_("L", 0))
variant(P, "podlstm_L", setattr_("L", 100000))
variant(P, "podlstm_n", setattr_("n", 1 << 30))
variant(P, "podlstm_fsize", setattr_("fsize", [1 << 30, 2304, 2304, 2304]))
variant(P, "podlstm_dt", setattr_("dt", np.nan))
variant(P, "podlstm_sigma", setattr_("sigma", [1, 1, np.nan, 1, 1]))
variant(P, "podlstm_modes", poke("modes", 77, np.nan))
variant(P, "podlstm_mean", poke("mean", 3, np.inf))
variant(P, "podlstm_nanw", poke("params_1", 1000, np.nan))
variant(P, "podlstm_short", shorten("params_0", 100))
variant(P, "podlstm_archs", setattr_("archs", "L80 L32;garbage;L1000000"))
# Deep Potential
variant(D, "deepmd_neuron", setattr_("neuron", [25, 1000000, 100]))
variant(D, "deepmd_sel", setattr_("sel", [-1, 92]))
variant(D, "deepmd_rcut", setattr_("rcut", np.nan))
variant(D, "deepmd_rcut0", setattr_("rcut", 0.0))
variant(D, "deepmd_axis", setattr_("axis_neuron", 1 << 30))
variant(D, "deepmd_nanw", poke("params", 4242, np.nan))
variant(D, "deepmd_davg", poke("davg", 1, np.nan))
variant(D, "deepmd_dstd", poke("dstd", 0, 0.0))
variant(D, "deepmd_short", shorten("params", 1000))
# truncated copies and other kinds
for k, src in models.items():
    with open(src, "rb") as a, open(f"{out}/{k}_trunc.h5", "wb") as b:
        b.write(a.read(4096))
if extra:  # a training checkpoint (NaN in weights, moments; negative second moment), data with NaN
    ck, ds, sst = extra
    variant(ck, "ck_nanw", poke("params/values", 100, np.nan))
    variant(ck, "ck_nanm", poke("optim/m", 7, np.nan))
    variant(ck, "ck_infv", poke("optim/v", 9, np.inf))
    variant(ck, "ck_negv", poke("optim/v", 11, -1.0))
    variant(ck, "ck_step", lambda f: f["optim"].attrs.create("step", -5.0))
    with open(ck, "rb") as a, open(f"{out}/ck_trunc.h5", "wb") as b:
        b.write(a.read(3000))

    def nan_field(name, index):
        def edit(f):
            x = f[f"samples/{name}"]
            a = x[index]
            a.flat[17] = np.nan
            x[index] = a
        return edit
    variant(ds, "rb_nan", nan_field("b", 3))
    variant(sst, "sst_nan", nan_field("T", 50))
