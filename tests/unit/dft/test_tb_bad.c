/* Bad input must fail with a clear message (tests/lists/dft.list checks the exit status, 95 or 79, and the words):
   -case overlap : two Si atoms 0.5 A apart                    -> "Overlapping atoms"
   -case element : element "Xx"                                 -> "Unknown element"
   -case csr     : CSR file read with the wrong expected size   -> "does not match"
   -case nelec   : more electrons than the basis holds          -> "cannot be reached"
   -case partial : dense, kT = 0, odd electron count            -> "cannot reach the electron count" */
#include "sgtb.h"

int main(int argc, char **argv)
{
  char          c[32] = "";
  SgTBModel     m;
  SgTBGeom      g;
  SgTBDMOptions o;
  SgTBEnergy    E;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", c, sizeof c, NULL));
  PetscCall(SgTBDMOptionsDefault(&o));
  PetscCall(SgTBDiamond(5.43, 2, 2, 2, &g));
  if (!strcmp(c, "element")) PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "Xx", &m));
  PetscCall(SgTBModelGet(PETSC_COMM_WORLD, "Si", &m));
  if (!strcmp(c, "overlap")) { g.x[3] = g.x[0] + 0.5; g.x[4] = g.x[1]; g.x[5] = g.x[2]; }
  if (!strcmp(c, "nelec")) o.nelec = 8 * g.n + 2;
  if (!strcmp(c, "partial")) o.nelec = 4 * g.n + 1;
  if (!strcmp(c, "csr")) {
    Mat H;
    PetscCall(SgTBReadCSR(PETSC_COMM_WORLD, "inputs/dft/water32-KS.csr", 100, &H));
    PetscCall(MatDestroy(&H));
  }
  PetscCall(SgTBCompute(PETSC_COMM_WORLD, &m, &g, &o, &E, NULL, NULL, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "no error raised for case '%s'\n", c));
  PetscCall(SgTBGeomDestroy(&g));
  PetscCall(PetscFinalize());
  return 1;
}
