/* DeePMD-kit's own inference fixtures (tests/data/deepmd_kit, LGPL-3.0) against surge's evaluation
   of the imported model:

     test_deepmd_interop fixture MODEL.h5 TESTCASE.yaml [TOL]

   MODEL.h5 is the fixture model imported by `surge model import`; TESTCASE.yaml holds DeePMD-kit's
   reference atomic energies, forces and atomic virials (blocks: periodic box, no box). Every value
   must agree to TOL (default 1e-10 absolute: DeePMD-kit's own EPSILON for double precision in its
   C++ inference tests). On several ranks the centres are dealt round-robin to the ranks, each rank
   evaluates its centres among all atoms and their periodic images (built here, independently of
   surge's SgDPImages), and the forces and atomic virials on images are folded onto their atoms and
   summed over ranks: the domain split MD uses. Prints the largest absolute and relative deviation
   of each quantity. */
#include <math.h>
#include "sgdeepmd.h"
#include "sgtree.h"
#include "sgh5file.h"

static PetscErrorCode Reals(SgTree blk, const char key[], PetscInt n, PetscReal *v)
{
  SgTree l = SgTreeGet(blk, key);

  PetscFunctionBegin;
  PetscCheck(l && l->kind == SG_TREE_LIST && l->n == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "testcase: %s should be a list of %" PetscInt_FMT " numbers", key, n);
  for (PetscInt q = 0; q < n; q++) {
    SgTree x = l->items[q];
    PetscCheck(x->kind == SG_TREE_REAL || x->kind == SG_TREE_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "testcase: %s[%" PetscInt_FMT "] is not a number", key, q);
    v[q] = x->kind == SG_TREE_REAL ? x->r : (PetscReal)x->i;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void Dev(const char *what, PetscInt n, const PetscReal *got, const PetscReal *ref, PetscReal *maxabs, PetscReal *maxrel)
{
  *maxabs = 0;
  *maxrel = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal d = fabs(got[i] - ref[i]);
    *maxabs = PetscMax(*maxabs, d);
    if (ref[i] != 0) *maxrel = PetscMax(*maxrel, d / fabs(ref[i]));
  }
  (void)what;
}

static PetscErrorCode Block(SgDeepmd m, SgTree blk, PetscInt b, PetscReal tol, PetscInt *fails)
{
  SgTree      at = SgTreeGet(blk, "atype"), bx = SgTreeGet(blk, "box");
  PetscInt    n, nall, nown = 0, *type, *tall, *orig;
  PetscReal  *x, *xall, *eref, *fref, *vref, box[9], *e, *f, *fa, *av, *ava, *el, E, V[9], rc;
  PetscMPIInt rank, size;
  PetscBool   pbc = (PetscBool)(bx && bx->kind == SG_TREE_LIST);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(at && at->kind == SG_TREE_LIST, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "testcase: block %" PetscInt_FMT " has no atype", b);
  n = at->n;
  PetscCall(PetscMalloc5(n, &type, 3 * n, &x, n, &eref, 3 * n, &fref, 9 * n, &vref));
  for (PetscInt i = 0; i < n; i++) type[i] = (PetscInt)at->items[i]->i;
  PetscCall(Reals(blk, "coord", 3 * n, x));
  PetscCall(Reals(blk, "atomic_energy", n, eref));
  PetscCall(Reals(blk, "force", 3 * n, fref));
  PetscCall(Reals(blk, "atomic_virial", 9 * n, vref));
  PetscCall(SgDeepmdGetInfo(m, &rc, NULL, NULL, NULL));
  /* all atoms, then (periodic) their images shifted by -1..1 cells: enough when every cell length is
     at least rcut (checked); orig[k] = the atom that atom k images */
  nall = pbc ? 27 * n : n;
  PetscCall(PetscMalloc4(3 * nall, &xall, nall, &tall, nall, &orig, n, &el));
  if (pbc) {
    PetscCall(Reals(blk, "box", 9, box));
    for (int a = 0; a < 3; a++)
      for (int c = 0; c < 3; c++) PetscCheck(a == c || box[3 * a + c] == 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "test: orthorhombic boxes only");
    for (int a = 0; a < 3; a++) PetscCheck(box[4 * a] >= rc, PETSC_COMM_SELF, PETSC_ERR_SUP, "test: box length %g < rcut %g", (double)box[4 * a], (double)rc);
  }
  /* order: this rank's centres first, then the other atoms, then the images */
  PetscInt k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (PetscInt i = 0; i < n; i++) {
      if ((i % size == rank) != (pass == 0)) continue;
      for (int a = 0; a < 3; a++) {
        PetscReal v = x[3 * i + a];
        if (pbc) v -= box[4 * a] * floor(v / box[4 * a]);
        xall[3 * k + a] = v;
      }
      tall[k] = type[i];
      orig[k] = i;
      k++;
      if (pass == 0) nown++;
    }
  if (pbc)
    for (int s = 1; s < 27; s++) {
      int sh[3] = {s % 3 == 2 ? -1 : s % 3, (s / 3) % 3 == 2 ? -1 : (s / 3) % 3, s / 9 == 2 ? -1 : s / 9};
      for (PetscInt q = 0; q < n; q++, k++) {
        for (int a = 0; a < 3; a++) xall[3 * k + a] = xall[3 * q + a] + sh[a] * box[4 * a];
        tall[k] = tall[q];
        orig[k] = orig[q];
      }
    }
  PetscCall(PetscMalloc5(n, &e, 3 * n, &f, 3 * nall, &fa, 9 * n, &av, 9 * nall, &ava));
  PetscCall(SgDeepmdComputeGhostsAtomic(m, nown, nall, xall, tall, &E, fa, V, el, ava));
  PetscCall(PetscArrayzero(e, n));
  PetscCall(PetscArrayzero(f, 3 * n));
  PetscCall(PetscArrayzero(av, 9 * n));
  for (PetscInt i = 0; i < nown; i++) e[orig[i]] = el[i];
  for (PetscInt q = 0; q < nall; q++) {
    for (int a = 0; a < 3; a++) f[3 * orig[q] + a] += fa[3 * q + a];
    for (int a = 0; a < 9; a++) av[9 * orig[q] + a] += ava[9 * q + a];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, e, (PetscMPIInt)n, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f, (PetscMPIInt)(3 * n), MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, av, (PetscMPIInt)(9 * n), MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, V, 9, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  {
    PetscReal ea, er, fa_, fr, va, vr, vt = 0, esum = 0, eref_sum = 0;
    Dev("e", n, e, eref, &ea, &er);
    Dev("f", 3 * n, f, fref, &fa_, &fr);
    Dev("v", 9 * n, av, vref, &va, &vr);
    for (PetscInt i = 0; i < n; i++) {
      esum += e[i];
      eref_sum += eref[i];
    }
    for (int a = 0; a < 3; a++) /* the atomic virials sum to the virial's transpose */
      for (int c = 0; c < 3; c++) {
        PetscReal s = 0;
        for (PetscInt i = 0; i < n; i++) s += av[9 * i + 3 * a + c];
        vt = PetscMax(vt, fabs(s - V[3 * c + a]));
      }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "block %" PetscInt_FMT " (%s, %" PetscInt_FMT " atoms, %d rank(s)): atomic energy max |d| %.2e (rel %.2e), force %.2e (rel %.2e), atomic virial %.2e (rel %.2e); total energy %.12f vs %.12f; sum of atomic virials - virial^T %.1e\n", b, pbc ? "periodic" : "no box", n, size, (double)ea, (double)er, (double)fa_, (double)fr, (double)va, (double)vr, (double)esum, (double)eref_sum, (double)vt));
    if (!(ea <= tol && fa_ <= tol && va <= tol && vt <= 1e-12)) (*fails)++;
  }
  PetscCall(PetscFree5(e, f, fa, av, ava));
  PetscCall(PetscFree4(xall, tall, orig, el));
  PetscCall(PetscFree5(type, x, eref, fref, vref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  SgDeepmd  m;
  SgTree    tc, res, tm;
  char     *text;
  size_t    len;
  PetscReal tol   = 1e-10;
  PetscInt  fails = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  if (argc == 4 && !strcmp(argv[1], "mkdp")) { /* mkdp OUT.dp JSON: an HDF5 file with that root attribute json (bad-input tests) */
    SgH5File f;
    PetscCall(SgH5FileCreate(argv[2], SG_FILE_MODEL, &f));
    PetscCall(SgH5FileWriteAttrText(f, "/", "json", argv[3]));
    PetscCall(SgH5FileClose(&f));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCheck(argc >= 4 && !strcmp(argv[1], "fixture"), PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: test_deepmd_interop fixture MODEL.h5 TESTCASE.yaml [TOL] | mkdp OUT.dp JSON");
  if (argc > 4) tol = atof(argv[4]);
  PetscCall(SgDeepmdLoad(argv[2], &m));
  PetscCall(SgTreeReadText(argv[3], 1 << 24, &text, &len));
  PetscCall(SgTreeParseYAML(argv[3], text, len, &tc));
  PetscCall(PetscFree(text));
  tm = SgTreeGet(tc, "type_map");
  for (PetscInt t = 0; tm && t < tm->n; t++) {
    const char *name;
    PetscCall(SgDeepmdGetTypeName(m, t, &name));
    PetscCheck(!strcmp(name, tm->items[t]->s), PETSC_COMM_WORLD, PETSC_ERR_FILE_UNEXPECTED, "type %" PetscInt_FMT " is %s in the model, %s in the testcase", t, name, tm->items[t]->s);
  }
  res = SgTreeGet(tc, "results");
  PetscCheck(res && res->kind == SG_TREE_LIST && res->n >= 2, PETSC_COMM_WORLD, PETSC_ERR_FILE_UNEXPECTED, "testcase: no results list");
  for (PetscInt b = 0; b < 2; b++) PetscCall(Block(m, res->items[b], b + 1, tol, &fails));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s (tolerance %g)\n", fails ? "FAIL" : "ok", argv[3], (double)tol));
  PetscCall(SgTreeDestroy(&tc));
  PetscCall(SgDeepmdDestroy(&m));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
