#!/usr/bin/env python3
"""Write one frame of a DeePMD-kit system directory as an extended XYZ file for `md: {read_xyz: ...}`,
replicated NX x NY x NZ times (the MD engine needs a cell at least 2 (cutoff + skin) thick in every
direction: the 12.44 Å water box holds rcut 6 Å with a skin up to 0.22 Å; a larger skin needs copies).

  water_frame.py SYSTEM_DIR FRAME NX NY NZ OUT.xyz
  e.g. inputs/deepmd/water_frame.py tests/data/water_dft/data_3 0 1 1 1 inputs/deepmd/water_192.xyz

Coordinates are written as stored (float32 in the .npy files, printed with 9 significant digits: exact)."""
import sys, os
import numpy as np

if len(sys.argv) != 7:
    sys.exit(__doc__)
sysdir, frame, reps, out = sys.argv[1], int(sys.argv[2]), [int(a) for a in sys.argv[3:6]], sys.argv[6]
names = open(os.path.join(sysdir, "type_map.raw")).read().split()
types = np.loadtxt(os.path.join(sysdir, "type.raw"), dtype=int).ravel()
coord = np.load(os.path.join(sysdir, "set.000", "coord.npy"))
box = np.load(os.path.join(sysdir, "set.000", "box.npy"))
if not 0 <= frame < len(coord):
    sys.exit(f"water_frame.py: frame {frame} out of range: {sysdir} holds {len(coord)} frames")
x = coord[frame].astype(np.float64).reshape(-1, 3)
h = box[frame].astype(np.float64).reshape(3, 3)  # rows: cell vectors
pos, typ = [], []
for i in range(reps[0]):
    for j in range(reps[1]):
        for k in range(reps[2]):
            pos.append(x + i * h[0] + j * h[1] + k * h[2])
            typ.append(types)
pos, typ = np.concatenate(pos), np.concatenate(typ)
H = h * np.array(reps)[:, None]
with open(out, "w") as f:
    f.write(f"{len(pos)}\n")
    f.write('Lattice="%s" Properties=species:S:1:pos:R:3 source="%s frame %d replicated %dx%dx%d"\n'
            % (" ".join("%.9g" % v for v in H.ravel()), sysdir, frame, *reps))
    for t, p in zip(typ, pos):
        f.write("%s %.9g %.9g %.9g\n" % (names[t], p[0], p[1], p[2]))
