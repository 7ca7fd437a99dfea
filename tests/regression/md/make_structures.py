#!/usr/bin/python3
"""Writes the same fcc LJ crystal (rho* = 0.8442) in several representations, for the reader and
triclinic tests, and prints the exact static lattice energy per atom (direct sum over lattice
vectors within the cutoff, shifted LJ, rc = 2.5):
  cubic.xyz      conventional cubic cell 6x6x6 (864 atoms), extended XYZ
  cubic.data     the same as a LAMMPS data file (orthorhombic)
  prim.xyz       primitive rhombohedral cell a/2 (0,1,1), (1,0,1), (1,1,0), 7x7x7 (343 atoms),
                 general triclinic cell vectors (not LAMMPS-aligned), extended XYZ
  prim.data      the same crystal rotated into LAMMPS's restricted triclinic form (a along x,
                 b in the xy plane) with xy xz yz tilts, LAMMPS data file"""
import numpy as np
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
a = (4 / 0.8442) ** (1 / 3)
basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]]) * a


def write_xyz(name, H, X, species="1", comment=""):
    with open(f"{out}/{name}", "w") as f:
        f.write(f"{len(X)}\n")
        f.write('Lattice="%s" Properties=species:S:1:pos:R:3 %s\n' % (" ".join("%.16g" % v for v in H.ravel()), comment))
        for x in X:
            f.write("%s %.16g %.16g %.16g\n" % (species, *x))


def write_data(name, lo, H, X):
    assert abs(H[0, 1]) < 1e-14 and abs(H[0, 2]) < 1e-14 and abs(H[1, 2]) < 1e-14
    with open(f"{out}/{name}", "w") as f:
        f.write("LAMMPS data file written by make_structures.py\n\n%d atoms\n1 atom types\n\n" % len(X))
        f.write("%.16g %.16g xlo xhi\n%.16g %.16g ylo yhi\n%.16g %.16g zlo zhi\n" % (lo[0], lo[0] + H[0, 0], lo[1], lo[1] + H[1, 1], lo[2], lo[2] + H[2, 2]))
        if abs(H[1, 0]) + abs(H[2, 0]) + abs(H[2, 1]) > 0:
            f.write("%.16g %.16g %.16g xy xz yz\n" % (H[1, 0], H[2, 0], H[2, 1]))
        f.write("\nMasses\n\n1 1.0\n\nAtoms # atomic\n\n")
        for i, x in enumerate(X):
            f.write("%d 1 %.16g %.16g %.16g\n" % (i + 1, *x))


n = 6
cells = np.array([[i, j, k] for k in range(n) for j in range(n) for i in range(n)], float) * a
X = (cells[:, None, :] + basis[None, :, :]).reshape(-1, 3)
H = np.eye(3) * n * a
write_xyz("cubic.xyz", H, X)
write_data("cubic.data", np.zeros(3), H, X)

m = 7
P = 0.5 * a * np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], float)
idx = np.array([[i, j, k] for k in range(m) for j in range(m) for i in range(m)], float)
Xp = idx @ P
Hp = m * P
write_xyz("prim.xyz", Hp, Xp)
# rotate into LAMMPS form: QR of H^T gives H = L Q^T with L lower triangular (rows a, b, c)
Q, R = np.linalg.qr(Hp.T)
S = np.diag(np.sign(np.diag(R)))
Q, R = Q @ S, S @ R
L = R.T                      # rows: a=(ax,0,0), b=(bx,by,0), c=(cx,cy,cz)
Xl = Xp @ Q                  # same rotation applied to the atoms
write_data("prim.data", np.zeros(3), L, Xl)

# exact lattice sum per atom
rc = 2.5
shift = 4 * (rc ** -12 - rc ** -6)
r = np.arange(-4, 5)
R = np.array([[i, j, k] for i in r for j in r for k in r], float) @ P
d = np.linalg.norm(R, axis=1)
d = d[(d > 0) & (d < rc)]
e = 0.5 * np.sum(4 * (d ** -12 - d ** -6) - shift)
print("%.15g" % e)
