/* SST grid: cell areas and face conductances on the sphere, the land mask, the divergence-free flow. */
#include "sst.h"

/* Idealised continents: ellipses in (longitude, latitude) degrees, centre and semi-axes. Shapes are
   a caricature of the real ones (Americas, Africa, Eurasia, Australia, Greenland) so that the basins
   and their coasts resemble the real ocean's; the polar caps (sea ice, |lat| > cap_lat) are land. */
static const PetscReal Continents[][4] = {
  {258, 48, 34, 20}, /* North America */
  {283, 20, 12, 10}, /* Central America */
  {296, -16, 16, 27}, /* South America */
  {19, 4, 21, 31},   /* Africa */
  {82, 50, 66, 22},  /* Eurasia */
  {105, 18, 20, 10}, /* South-East Asia */
  {134, -25, 18, 11}, /* Australia */
  {318, 72, 12, 9},  /* Greenland */
};

/* elliptic radius of (lon, lat) degrees in continent c: < 1 inside */
static PetscReal Radius(PetscInt c, PetscReal lon, PetscReal lat)
{
  PetscReal dl = PetscFmodReal(lon - Continents[c][0] + 540.0, 360.0) - 180.0;
  return PetscSqrtReal(PetscSqr(dl / Continents[c][2]) + PetscSqr((lat - Continents[c][1]) / Continents[c][3]));
}

PetscReal SgSstLat(const Sst *s, PetscReal j) { return -0.5 * PETSC_PI + j * s->dlat; }

static PetscBool LandAt(const Sst *s, PetscReal lon, PetscReal lat)
{
  if (s->land == SST_LAND_NONE) return PETSC_FALSE;
  if (PetscAbsReal(lat) > s->cap_lat) return PETSC_TRUE;
  if (s->land == SST_LAND_CAPS) return PETSC_FALSE;
  for (size_t c = 0; c < sizeof Continents / sizeof Continents[0]; c++)
    if (Radius((PetscInt)c, lon, lat) < 1) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Land at cell (i, j); rows beyond the poles count as land (no flux) */
PetscBool SgSstIsLand(const Sst *s, PetscInt i, PetscInt j)
{
  PetscInt ii = ((i % s->nlon) + s->nlon) % s->nlon;
  if (j < 0 || j >= s->nlat) return PETSC_TRUE;
  return LandAt(s, (ii + 0.5) * 360.0 / s->nlon, SgSstLat(s, j + 0.5) * 180.0 / PETSC_PI);
}

/* Smooth taper in [0, 1]: 0 on and near land, 1 far from it (about 6 degrees of transition), so the
   tapered streamfunction has no jumps next to the coasts. */
static PetscReal Taper(const Sst *s, PetscReal lon, PetscReal lat)
{
  PetscReal f = 1;
  if (s->land == SST_LAND_NONE) return 1;
  f *= PetscMax(0, PetscTanhReal((s->cap_lat - PetscAbsReal(lat)) / 6.0));
  if (s->land == SST_LAND_CAPS) return f;
  for (size_t c = 0; c < sizeof Continents / sizeof Continents[0]; c++) {
    PetscReal r = Radius((PetscInt)c, lon, lat);
    f *= r <= 1 ? 0 : PetscTanhReal((r - 1) / 0.25);
  }
  return f;
}

/* land among the grid's cells; rows beyond a pole are no cells (the pole corners take the analytic
   value, which is the same at every pole corner, so the zero-length pole faces carry nothing) */
static PetscBool LandCell(const Sst *s, PetscInt i, PetscInt j) { return (PetscBool)(j >= 0 && j < s->nlat && SgSstIsLand(s, i, j)); }

/* The streamfunction at the corner north-east of cell (i, j), km^2/day. psi = 0 wherever a corner
   touches a land cell, which closes every coast. */
static PetscReal Psi(const Sst *s, PetscInt i, PetscInt j)
{
  PetscReal lat = SgSstLat(s, j + 1), lon = (i + 1) * s->dlon, U = s->speed * s->radius, v;
  if (LandCell(s, i, j) || LandCell(s, i + 1, j) || LandCell(s, i, j + 1) || LandCell(s, i + 1, j + 1)) return 0;
  switch (s->flow) {
  case SST_FLOW_SOLID: /* u = speed cos(lat): rigid rotation at speed / a rad/day */
    return -U * PetscSinReal(lat);
  case SST_FLOW_GYRES: /* zonal jets (trade winds west, westerlies east) closed into gyres by the coasts */
    v = -U * (PetscSinReal(lat) - 0.6 * PetscSinReal(3 * lat)) * PetscCosReal(lat);
    return v * Taper(s, lon * 180.0 / PETSC_PI, lat * 180.0 / PETSC_PI);
  default:
    return 0;
  }
}

PetscErrorCode SgSstGridSetUp(Sst *s)
{
  const PetscReal a = s->radius;

  PetscFunctionBegin;
  s->dlon = 2 * PETSC_PI / s->nlon;
  s->dlat = PETSC_PI / s->nlat;
  PetscCall(PetscMalloc3(s->nlat, &s->area, s->nlat, &s->dx_e, s->nlat, &s->dy_n));
  for (PetscInt j = 0; j < s->nlat; j++) {
    PetscReal lo = SgSstLat(s, j), hi = SgSstLat(s, j + 1), mid = SgSstLat(s, j + 0.5);
    s->area[j] = a * a * s->dlon * (PetscSinReal(hi) - PetscSinReal(lo));
    /* east face: length a dlat, centres a cos(lat) dlon apart */
    s->dx_e[j] = s->kappa * (a * s->dlat) / (a * PetscCosReal(mid) * s->dlon);
    /* north face: length a cos(lat_{j+1/2}) dlon, centres a dlat apart; the pole faces carry nothing */
    s->dy_n[j] = j < s->nlat - 1 ? s->kappa * (a * PetscCosReal(hi) * s->dlon) / (a * s->dlat) : 0;
  }
  PetscCall(DMDAGetCorners(s->da, &s->xs, &s->ys, NULL, &s->xm, &s->ym, NULL));
  PetscCall(PetscMalloc5((s->xm + 1) * s->ym, &s->U, s->xm * (s->ym + 1), &s->V, (s->xm + 1) * s->ym, &s->Ge, s->xm * (s->ym + 1), &s->Gn, s->xm * s->ym, &s->ocean));
  for (PetscInt j = 0; j < s->ym; j++)
    for (PetscInt i = 0; i <= s->xm; i++) { /* east face of cell (gi, gj) */
      PetscInt  gi = s->xs + i - 1, gj = s->ys + j, k = j * (s->xm + 1) + i;
      PetscBool open = (PetscBool)(!SgSstIsLand(s, gi, gj) && !SgSstIsLand(s, gi + 1, gj));
      s->U[k]  = -(Psi(s, gi, gj) - Psi(s, gi, gj - 1));
      s->Ge[k] = open ? s->dx_e[gj] : 0;
    }
  for (PetscInt j = 0; j <= s->ym; j++)
    for (PetscInt i = 0; i < s->xm; i++) { /* north face of cell (gi, gj) */
      PetscInt  gi = s->xs + i, gj = s->ys + j - 1, k = j * s->xm + i;
      PetscBool open = (PetscBool)(gj >= 0 && gj < s->nlat - 1 && !SgSstIsLand(s, gi, gj) && !SgSstIsLand(s, gi, gj + 1));
      s->V[k]  = gj >= 0 && gj < s->nlat - 1 ? Psi(s, gi, gj) - Psi(s, gi - 1, gj) : 0;
      s->Gn[k] = open ? s->dy_n[gj] : 0;
    }
  for (PetscInt j = 0; j < s->ym; j++)
    for (PetscInt i = 0; i < s->xm; i++) s->ocean[j * s->xm + i] = (PetscBool)!SgSstIsLand(s, s->xs + i, s->ys + j);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgSstMaxDivergence(Sst *s, MPI_Comm comm, PetscReal *maxdiv)
{
  PetscReal m = 0;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < s->ym; j++)
    for (PetscInt i = 0; i < s->xm; i++) {
      PetscReal d = s->U[j * (s->xm + 1) + i + 1] - s->U[j * (s->xm + 1) + i] + s->V[(j + 1) * s->xm + i] - s->V[j * s->xm + i];
      if (s->ocean[j * s->xm + i]) m = PetscMax(m, PetscAbsReal(d) / s->area[s->ys + j]);
    }
  PetscCallMPI(MPI_Allreduce(&m, maxdiv, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
