/* Unit systems, exactly as LAMMPS defines them (src/update.cpp, "units" command docs):
     lj:    reduced units, sigma = epsilon = m = kB = 1; time tau = sigma sqrt(m/epsilon);
            default dt 0.005 tau.
     metal: length Angstrom, energy eV, time ps, mass g/mol (amu), temperature K, pressure bar;
            kB = 8.617343e-5 eV/K, mvv2e = 1.0364269e-4 (amu A^2/ps^2 -> eV),
            nktv2p = 1.6021765e6 (eV/A^3 -> bar); default dt 0.001 ps.
   Using LAMMPS's (slightly dated) constants keeps our numbers comparable to its to all digits. */
#include "mdimpl.h"

PetscErrorCode SgMDUnitsSet(const char name[], SgMDUnits *u)
{
  PetscBool lj, metal;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(name, "lj", &lj));
  PetscCall(PetscStrcmp(name, "metal", &metal));
  PetscCheck(lj || metal, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "md_units: unknown unit system '%s'; use lj or metal", name);
  if (lj) {
    *u = (SgMDUnits){SG_MD_UNITS_LJ, "lj", 1.0, 1.0, 1.0, 1.0, 0.005, "sigma", "epsilon", "tau", "m", "epsilon/kB", "epsilon/sigma^3"};
  } else {
    *u = (SgMDUnits){SG_MD_UNITS_METAL, "metal", 8.617343e-5, 1.0364269e-4, 1.0 / 1.0364269e-4, 1.6021765e6, 0.001, "Angstrom", "eV", "ps", "g/mol", "K", "bar"};
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
