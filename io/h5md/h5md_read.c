/* Reading an H5MD trajectory of the md solver back as whole arrays (sgh5md.h: SgH5MDReadFrames). */
#include <string.h>
#include "sgh5md.h"
#include "sgh5file.h"

static const char *const required[] = {"/particles/all/species", "/particles/all/position/value", "/particles/all/force/value", "/particles/all/box/edges/value", "/observables/potential_energy/value", "/observables/virial/value"};
static const char *const why_missing[] = {"", "", " (md: {traj_forces: true} is needed)", "", " (trajectories written before H5MD observables existed: rerun the member)", " (trajectories written before H5MD observables existed: rerun the member)"};

PetscErrorCode SgH5MDReadFrames(const char file[], PetscBool labels, SgH5MDFrames *fr)
{
  SgH5File   f;
  PetscInt   rank;
  PetscInt64 dims[SG_H5_MAXDIM];
  char       attr[16 * 17 + 1], *tok, *save = NULL;
  long      *steps[2];
  int       *sp32;
  PetscInt64 N, F;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fr, sizeof *fr));
  PetscCall(SgH5FileOpen(file, &f));
  for (size_t q = 0; q < sizeof required / sizeof required[0]; q++) {
    if (!labels && (q == 2 || q >= 4)) continue; /* force and observables are labels */
    PetscBool has;
    PetscCall(SgH5FileHas(f, required[q], &has));
    if (!has) {
      PetscCall(SgH5FileClose(&f));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "trajectory %s has no %s%s", file, required[q], why_missing[q]);
    }
  }
  PetscCall(SgH5FileGetDims(f, "/particles/all/position/value", &rank, dims));
  PetscCheck(rank == 3 && dims[2] == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: position/value is not [F][N][3]", file);
  F = dims[0];
  N = dims[1];
  fr->F = (PetscInt)F;
  fr->N = (PetscInt)N;
  /* type names: attribute species_names of /parameters, comma-separated */
  PetscCall(SgH5FileReadAttrString(f, "/parameters", "species_names", attr, sizeof attr));
  PetscCall(PetscMalloc1(16, &fr->names));
  for (tok = strtok_r(attr, ",", &save); tok && fr->ntypes < 16; tok = strtok_r(NULL, ",", &save)) PetscCall(PetscStrncpy(fr->names[fr->ntypes++], tok, 16));
  PetscCall(PetscMalloc1(N, &fr->species));
  PetscCall(PetscMalloc1(N, &sp32));
  PetscCall(SgH5FileRead(f, "/particles/all/species", SG_H5_INT, N, sp32));
  for (PetscInt64 i = 0; i < N; i++) fr->species[i] = sp32[i];
  PetscCall(PetscFree(sp32));
  PetscCall(SgH5FileReadAttrString(f, "/particles/all/position/value", "unit", fr->length_unit, sizeof fr->length_unit));
  PetscCall(PetscMalloc1(3 * N * F, &fr->coord));
  PetscCall(PetscMalloc1(9 * F, &fr->box));
  PetscCall(PetscMalloc1(F, &fr->step));
  PetscCall(SgH5FileRead(f, "/particles/all/position/value", SG_H5_DOUBLE, 3 * N * F, fr->coord));
  PetscCall(SgH5FileRead(f, "/particles/all/box/edges/value", SG_H5_DOUBLE, 9 * F, fr->box));
  PetscCall(SgH5FileRead(f, "/particles/all/position/step", SG_H5_LONG, F, fr->step));
  if (labels) {
    PetscCall(SgH5FileReadAttrString(f, "/observables/potential_energy/value", "unit", fr->energy_unit, sizeof fr->energy_unit));
    PetscCall(PetscMalloc3(3 * N * F, &fr->force, F, &fr->energy, 9 * F, &fr->virial));
    PetscCall(SgH5FileRead(f, "/particles/all/force/value", SG_H5_DOUBLE, 3 * N * F, fr->force));
    PetscCall(SgH5FileRead(f, "/observables/potential_energy/value", SG_H5_DOUBLE, F, fr->energy));
    PetscCall(SgH5FileRead(f, "/observables/virial/value", SG_H5_DOUBLE, 9 * F, fr->virial));
    /* the elements must describe the same frames */
    PetscCall(PetscMalloc2(F, &steps[0], F, &steps[1]));
    PetscCall(SgH5FileRead(f, "/particles/all/force/step", SG_H5_LONG, F, steps[0]));
    PetscCall(SgH5FileRead(f, "/observables/potential_energy/step", SG_H5_LONG, F, steps[1]));
    for (PetscInt64 k = 0; k < F; k++)
      PetscCheck(fr->step[k] == steps[0][k] && fr->step[k] == steps[1][k], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: frame %" PetscInt64_FMT " has steps %ld (position), %ld (force), %ld (potential_energy)", file, k, fr->step[k], steps[0][k], steps[1][k]);
    PetscCall(PetscFree2(steps[0], steps[1]));
  }
  PetscCall(SgH5FileClose(&f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgH5MDFramesDestroy(SgH5MDFrames *fr)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(fr->species));
  PetscCall(PetscFree(fr->names));
  PetscCall(PetscFree(fr->coord));
  PetscCall(PetscFree(fr->box));
  PetscCall(PetscFree(fr->step));
  if (fr->force) PetscCall(PetscFree3(fr->force, fr->energy, fr->virial));
  PetscCall(PetscMemzero(fr, sizeof *fr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
