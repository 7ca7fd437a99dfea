/* The global starting configuration, identical on every rank before distribution: lattice
   builders, the element-mass table, velocities from a temperature.

   Lattices (conventional cubic cells, lattice constant a, basis in fractions of a):
     fcc 4 atoms, bcc 2 atoms, diamond 8 atoms (fcc + fcc shifted by (1/4,1/4,1/4)).
   Atom ids follow the loop order cell z, y, x, basis (ids are 1 + index). */
#include "mdimpl.h"

PetscErrorCode SgMDSystemDestroy(SgMDSystem *s)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(s->x));
  PetscCall(PetscFree(s->v));
  PetscCall(PetscFree(s->type));
  s->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDSystemTypeIndex(SgMDSystem *s, const char name[], PetscInt *t)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < s->ntypes; k++) {
    PetscBool eq;
    PetscCall(PetscStrcmp(s->tname[k], name, &eq));
    if (eq) { *t = k; PetscFunctionReturn(PETSC_SUCCESS); }
  }
  PetscCheck(s->ntypes < SG_MD_MAX_TYPES, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md: more than %d atom types (at '%s')", SG_MD_MAX_TYPES, name);
  PetscCall(PetscStrncpy(s->tname[s->ntypes], name, sizeof(s->tname[0])));
  s->hasmass[s->ntypes] = PETSC_FALSE;
  *t = s->ntypes++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Standard atomic weights (IUPAC 2013, abridged to 4-5 significant figures) of the elements an MD
   user of this code is likely to meet; extend as needed. */
static const struct { const char *sym; double m; } elements[] = {
  {"H", 1.008},   {"He", 4.0026}, {"Li", 6.94},   {"Be", 9.0122}, {"B", 10.81},   {"C", 12.011},
  {"N", 14.007},  {"O", 15.999},  {"F", 18.998},  {"Ne", 20.180}, {"Na", 22.990}, {"Mg", 24.305},
  {"Al", 26.982}, {"Si", 28.085}, {"P", 30.974},  {"S", 32.06},   {"Cl", 35.45},  {"Ar", 39.948},
  {"K", 39.098},  {"Ca", 40.078}, {"Ti", 47.867}, {"V", 50.942},  {"Cr", 51.996}, {"Mn", 54.938},
  {"Fe", 55.845}, {"Co", 58.933}, {"Ni", 58.693}, {"Cu", 63.546}, {"Zn", 65.38},  {"Ga", 69.723},
  {"Ge", 72.630}, {"As", 74.922}, {"Kr", 83.798}, {"Zr", 91.224}, {"Nb", 92.906}, {"Mo", 95.95},
  {"Pd", 106.42}, {"Ag", 107.87}, {"Sn", 118.71}, {"Xe", 131.29}, {"Ta", 180.95}, {"W", 183.84},
  {"Pt", 195.08}, {"Au", 196.97}, {"Pb", 207.2}};

PetscErrorCode SgMDElementMass(const char sym[], PetscReal *m, PetscBool *found)
{
  PetscFunctionBegin;
  *found = PETSC_FALSE;
  for (size_t k = 0; k < sizeof(elements) / sizeof(elements[0]); k++) {
    PetscBool eq;
    PetscCall(PetscStrcmp(elements[k].sym, sym, &eq));
    if (eq) { *m = elements[k].m; *found = PETSC_TRUE; break; }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDSystemLattice(const char style[], PetscReal a, const PetscInt cells[3], SgMDSystem *s)
{
  static const PetscReal fcc[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  static const PetscReal bcc[2][3] = {{0, 0, 0}, {0.5, 0.5, 0.5}};
  PetscReal              basis[8][3], lo[3] = {0, 0, 0}, h[9] = {0};
  PetscInt               nb = 0, n;
  PetscBool              isfcc, isbcc, isdia;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(style, "fcc", &isfcc));
  PetscCall(PetscStrcmp(style, "bcc", &isbcc));
  PetscCall(PetscStrcmp(style, "diamond", &isdia));
  PetscCheck(isfcc || isbcc || isdia, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md_lattice: unknown lattice '%s'; use fcc, bcc or diamond", style);
  PetscCheck(a > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md_lattice_constant: %g must be positive", (double)a);
  for (int d = 0; d < 3; d++) PetscCheck(cells[d] >= 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md_lattice_cells: %" PetscInt_FMT " cells in direction %d; need at least 1", cells[d], d);
  if (isfcc || isdia) {
    for (int k = 0; k < 4; k++) for (int d = 0; d < 3; d++) basis[nb + k][d] = fcc[k][d];
    nb += 4;
  }
  if (isdia) {
    for (int k = 0; k < 4; k++) for (int d = 0; d < 3; d++) basis[nb + k][d] = fcc[k][d] + 0.25;
    nb += 4;
  }
  if (isbcc) {
    for (int k = 0; k < 2; k++) for (int d = 0; d < 3; d++) basis[nb + k][d] = bcc[k][d];
    nb += 2;
  }
  PetscCheck(3.0 * nb * (PetscReal)cells[0] * (PetscReal)cells[1] * (PetscReal)cells[2] <= (PetscReal)PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md_lattice_cells: %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " cells hold more atoms than PetscInt can index", cells[0], cells[1], cells[2]);
  n = nb * cells[0] * cells[1] * cells[2];
  s->n = n;
  PetscCall(PetscMalloc1(3 * n, &s->x));
  PetscCall(PetscCalloc1(n, &s->type));
  s->v = NULL;
  n = 0;
  for (PetscInt k = 0; k < cells[2]; k++)
    for (PetscInt j = 0; j < cells[1]; j++)
      for (PetscInt i = 0; i < cells[0]; i++)
        for (PetscInt b = 0; b < nb; b++) {
          s->x[3 * n + 0] = (i + basis[b][0]) * a;
          s->x[3 * n + 1] = (j + basis[b][1]) * a;
          s->x[3 * n + 2] = (k + basis[b][2]) * a;
          n++;
        }
  h[0] = cells[0] * a;
  h[4] = cells[1] * a;
  h[8] = cells[2] * a;
  PetscCall(SgMDBoxSet(&s->box, lo, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDSystemVelocities(SgMDSystem *s, const SgMDUnits *u, PetscReal T, uint64_t seed)
{
  PetscReal p[3] = {0, 0, 0}, M = 0, twoke = 0;
  PetscInt  dof = 3 * s->n - 3;

  PetscFunctionBegin;
  PetscCall(PetscFree(s->v));
  PetscCall(PetscCalloc1(3 * s->n, &s->v));
  if (T <= 0 || s->n < 2) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < s->n; i++) {
    PetscReal m = s->mass[s->type[i]], sd = PetscSqrtReal(u->boltz * T / (m * u->mvv2e));
    for (int k = 0; k < 3; k++) {
      s->v[3 * i + k] = sd * SgMDGaussian(seed, (uint64_t)(i + 1), 0xfee1, (uint64_t)k);
      p[k] += m * s->v[3 * i + k];
    }
    M += m;
  }
  for (PetscInt i = 0; i < s->n; i++) {
    PetscReal m = s->mass[s->type[i]];
    for (int k = 0; k < 3; k++) {
      s->v[3 * i + k] -= p[k] / M;
      twoke += m * s->v[3 * i + k] * s->v[3 * i + k];
    }
  }
  {
    PetscReal Tnow = twoke * u->mvv2e / (dof * u->boltz), sc = PetscSqrtReal(T / Tnow);
    for (PetscInt i = 0; i < 3 * s->n; i++) s->v[i] *= sc;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDSystemBcast(MPI_Comm comm, SgMDSystem *s)
{
  PetscMPIInt rank;
  PetscInt    hasv;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Bcast(&s->n, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&s->ntypes, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(s->tname, sizeof(s->tname), MPI_CHAR, 0, comm));
  PetscCallMPI(MPI_Bcast(s->mass, SG_MD_MAX_TYPES, MPIU_REAL, 0, comm));
  PetscCallMPI(MPI_Bcast(s->hasmass, sizeof(s->hasmass), MPI_BYTE, 0, comm));
  PetscCallMPI(MPI_Bcast(&s->box, sizeof(s->box), MPI_BYTE, 0, comm));
  hasv = s->v ? 1 : 0;
  PetscCallMPI(MPI_Bcast(&hasv, 1, MPIU_INT, 0, comm));
  if (rank) {
    PetscCall(PetscMalloc1(3 * s->n, &s->x));
    PetscCall(PetscMalloc1(s->n, &s->type));
    if (hasv) PetscCall(PetscMalloc1(3 * s->n, &s->v));
  }
  PetscCallMPI(MPI_Bcast(s->x, 3 * s->n, MPIU_REAL, 0, comm));
  PetscCallMPI(MPI_Bcast(s->type, s->n, MPIU_INT, 0, comm));
  if (hasv) PetscCallMPI(MPI_Bcast(s->v, 3 * s->n, MPIU_REAL, 0, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
