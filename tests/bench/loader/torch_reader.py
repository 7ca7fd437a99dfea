#!/usr/bin/python3
"""Baseline (c) of the loader benchmark: PyTorch's DataLoader over h5py.

Reads FILE in exactly the sequence the SgLoader delivered (SEQ: uint32 ids, epochs*N, batch by
batch), with the same batch size: a map-style Dataset whose __getitem__ reads one frame's four
fields with h5py, the DataLoader's default collate, a batch sampler that replays our batches.
Drops FILE from the page cache before every epoch, like the C readers.
Usage: torch_reader.py FILE BATCH EPOCHS SEQ NUM_WORKERS
Prints: RESULT method=torch_wK samples=... seconds=... rate=...
"""
import os, sys, time
import numpy as np
import h5py
import torch
from torch.utils.data import DataLoader, Dataset

path, B, E, seqpath, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
FIELDS = ("coord", "box", "energy", "force")


class Frames(Dataset):
    def __init__(self, path):
        self.path, self.f = path, None
        with h5py.File(path, "r") as f:
            self.n = int(f.attrs["nsamples"])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.f is None:  # opened lazily: one handle per worker process
            self.f = h5py.File(self.path, "r")
            self.d = [self.f["samples"][k] for k in FIELDS]
        return tuple(torch.from_numpy(np.asarray(d[i])) for d in self.d)


def drop(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


ds = Frames(path)
N = ds.n
seq = np.fromfile(seqpath, dtype=np.uint32)
assert seq.size >= E * N, "sequence file too short"
torch.set_num_threads(1)
n, chk = 0, 0.0
t0 = time.time()
for e in range(E):
    ep = seq[e * N:(e + 1) * N]
    batches = [ep[s:s + B].tolist() for s in range(0, N, B)]
    drop(path)
    dl = DataLoader(ds, batch_sampler=batches, num_workers=workers, persistent_workers=False)
    for coord, box, energy, force in dl:
        n += coord.shape[0]
        chk += float(energy[0])
t = time.time() - t0
print(f"RESULT method=torch_w{workers} samples={n} seconds={t:.3f} rate={n / t:.1f} check={chk:g}")
