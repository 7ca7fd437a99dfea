/* Structure readers (rank 0 reads, everyone gets the system by broadcast; a parse error is
   broadcast too, so every rank fails with the same message):
   - extended XYZ (the ASE/ QUIP convention): line 1 atom count, line 2 key=value pairs with
     Lattice="ax ay az bx by bz cx cy cz" (required: the cell is periodic) and optionally
     Properties=species:S:1:pos:R:3[:velo:R:3|vel:R:3|...] (default species:S:1:pos:R:3);
     then one line per atom.  Types are the species names, in order of first appearance.
   - LAMMPS data files, atom_style atomic: header counts "N atoms", "T atom types", box lines
     "xlo xhi", "ylo yhi", "zlo zhi", optional "xy xz yz" (restricted triclinic: a = (lx,0,0),
     b = (xy,ly,0), c = (xz,yz,lz)); sections Masses, Atoms (id type x y z [ix iy iz]),
     Velocities (id vx vy vz).  Ids must be 1..N; types are named "1".."T". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "mdimpl.h"

typedef struct {
  int  code;
  char msg[512];
} ParseErr;

#define FAIL(...) do { e->code = 1; snprintf(e->msg, sizeof e->msg, __VA_ARGS__); goto done; } while (0)

static int ReadLine(FILE *fp, char *buf, size_t n)
{
  if (!fgets(buf, (int)n, fp)) return 0;
  return 1;
}

static PetscErrorCode ParseXYZ(const char file[], SgMDSystem *s, ParseErr *e)
{
  FILE     *fp = fopen(file, "r");
  char      line[4096], *p;
  long      n;
  int       ncol = 0, cspec = -1, cpos = -1, cvel = -1;
  PetscReal h[9], lo[3] = {0, 0, 0};

  PetscFunctionBegin;
  if (!fp) FAIL("md_read_xyz: cannot open '%s'", file);
  if (!ReadLine(fp, line, sizeof line) || sscanf(line, "%ld", &n) != 1 || n < 1) FAIL("md_read_xyz: %s line 1 must hold the number of atoms", file);
  if (!ReadLine(fp, line, sizeof line)) FAIL("md_read_xyz: %s has no comment line", file);
  p = strstr(line, "Lattice=\"");
  if (!p) p = strstr(line, "lattice=\"");
  if (!p || sscanf(p + 9, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &h[0], &h[1], &h[2], &h[3], &h[4], &h[5], &h[6], &h[7], &h[8]) != 9) FAIL("md_read_xyz: %s line 2 needs Lattice=\"ax ay az bx by bz cx cy cz\" (periodic cell)", file);
  p = strstr(line, "Properties=");
  if (p) {
    char *q = p + 11, *end = q;
    while (*end && !isspace((unsigned char)*end)) end++;
    *end = 0;
    while (*q) {
      char name[64], typ[8];
      int  cnt;
      if (sscanf(q, "%63[^:]:%7[^:]:%d", name, typ, &cnt) != 3) FAIL("md_read_xyz: %s: cannot parse Properties near '%s'", file, q);
      if (!strcmp(name, "species")) cspec = ncol;
      else if (!strcmp(name, "pos")) cpos = ncol;
      else if (!strcmp(name, "velo") || !strcmp(name, "vel") || !strcmp(name, "velocities")) cvel = ncol;
      ncol += cnt;
      for (int k = 0; k < 3 && *q; k++) { while (*q && *q != ':') q++; if (*q) q++; }
    }
  } else { cspec = 0; cpos = 1; ncol = 4; }
  if (cspec < 0 || cpos < 0) FAIL("md_read_xyz: %s: Properties must contain species:S:1 and pos:R:3", file);
  s->n = n;
  if (PetscMalloc1(3 * n, &s->x) || PetscMalloc1(n, &s->type)) FAIL("md_read_xyz: out of memory");
  if (cvel >= 0 && PetscMalloc1(3 * n, &s->v)) FAIL("md_read_xyz: out of memory");
  for (long i = 0; i < n; i++) {
    char *tok[64], *save = NULL;
    int   nt = 0;
    if (!ReadLine(fp, line, sizeof line)) FAIL("md_read_xyz: %s ends after %ld of %ld atoms", file, i, n);
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 64; t = strtok_r(NULL, " \t\r\n", &save)) tok[nt++] = t;
    if (nt < ncol) FAIL("md_read_xyz: %s line %ld has %d columns, Properties say %d", file, i + 3, nt, ncol);
    if (SgMDSystemTypeIndex(s, tok[cspec], &s->type[i])) FAIL("md_read_xyz: %s: more than %d species", file, SG_MD_MAX_TYPES);
    for (int k = 0; k < 3; k++) {
      char *end;
      s->x[3 * i + k] = strtod(tok[cpos + k], &end);
      if (*end) FAIL("md_read_xyz: %s line %ld: '%s' is not a number", file, i + 3, tok[cpos + k]);
      if (cvel >= 0) s->v[3 * i + k] = strtod(tok[cvel + k], NULL);
    }
  }
  if (SgMDBoxSet(&s->box, lo, h)) FAIL("md_read_xyz: %s: the Lattice vectors have no positive volume", file);
done:
  if (fp) fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ParseData(const char file[], SgMDSystem *s, ParseErr *e)
{
  FILE     *fp = fopen(file, "r");
  char      line[4096];
  long      n = -1, ntypes = -1, lno = 0;
  double    xlo = 0, xhi = -1, ylo = 0, yhi = -1, zlo = 0, zhi = -1, xy = 0, xz = 0, yz = 0;
  PetscReal h[9], lo[3];
  char     *seen = NULL;

  PetscFunctionBegin;
  if (!fp) FAIL("md_read_data: cannot open '%s'", file);
  ReadLine(fp, line, sizeof line); /* title */
  lno = 1;
  /* header */
  while (ReadLine(fp, line, sizeof line)) {
    char *c = strchr(line, '#'), word[64] = "";
    double a, b, d;
    lno++;
    if (c) *c = 0;
    if (sscanf(line, " %63s", word) != 1) continue;
    if (strstr(line, "atom types")) { if (sscanf(line, "%ld", &ntypes) != 1) FAIL("md_read_data: %s line %ld: bad 'atom types'", file, lno); }
    else if (strstr(line, "atoms")) { if (sscanf(line, "%ld", &n) != 1) FAIL("md_read_data: %s line %ld: bad 'atoms'", file, lno); }
    else if (strstr(line, "xlo xhi")) sscanf(line, "%lf %lf", &xlo, &xhi);
    else if (strstr(line, "ylo yhi")) sscanf(line, "%lf %lf", &ylo, &yhi);
    else if (strstr(line, "zlo zhi")) sscanf(line, "%lf %lf", &zlo, &zhi);
    else if (strstr(line, "xy xz yz")) { if (sscanf(line, "%lf %lf %lf", &a, &b, &d) == 3) { xy = a; xz = b; yz = d; } }
    else if (isalpha((unsigned char)word[0])) break; /* first section keyword */
    else if (strstr(line, "bonds") || strstr(line, "angles") || strstr(line, "dihedrals") || strstr(line, "impropers") || strstr(line, "types")) FAIL("md_read_data: %s line %ld: molecular topology is not supported (atom_style atomic only)", file, lno);
  }
  if (n < 1 || ntypes < 1) FAIL("md_read_data: %s needs 'N atoms' and 'T atom types' header lines", file);
  if (ntypes > SG_MD_MAX_TYPES) FAIL("md_read_data: %s has %ld atom types; at most %d are supported", file, ntypes, SG_MD_MAX_TYPES);
  if (!(xhi > xlo && yhi > ylo && zhi > zlo)) FAIL("md_read_data: %s needs xlo xhi, ylo yhi, zlo zhi lines with hi > lo", file);
  s->n = n;
  if (PetscMalloc1(3 * n, &s->x) || PetscMalloc1(n, &s->type) || PetscCalloc1(n, &seen)) FAIL("md_read_data: out of memory");
  for (long t = 0; t < ntypes; t++) {
    char nm[24];
    PetscInt idx;
    snprintf(nm, sizeof nm, "%ld", t + 1);
    SgMDSystemTypeIndex(s, nm, &idx);
  }
  /* sections: `line` holds the first keyword */
  for (;;) {
    char word[64] = "";
    sscanf(line, " %63s", word);
    if (!strcmp(word, "Masses")) {
      ReadLine(fp, line, sizeof line); lno++;
      for (long k = 0; k < ntypes; k++) {
        long t; double m;
        if (!ReadLine(fp, line, sizeof line) || sscanf(line, "%ld %lf", &t, &m) != 2) FAIL("md_read_data: %s: Masses section ends early (line %ld)", file, lno);
        lno++;
        if (t < 1 || t > ntypes) FAIL("md_read_data: %s line %ld: unknown atom type %ld (the file declares %ld)", file, lno, t, ntypes);
        s->mass[t - 1] = m; s->hasmass[t - 1] = PETSC_TRUE;
      }
    } else if (!strcmp(word, "Atoms")) {
      ReadLine(fp, line, sizeof line); lno++;
      for (long k = 0; k < n; k++) {
        long id, t; double x, y, z;
        if (!ReadLine(fp, line, sizeof line) || sscanf(line, "%ld %ld %lf %lf %lf", &id, &t, &x, &y, &z) != 5) FAIL("md_read_data: %s: Atoms section ends early or has a bad line (line %ld; expected 'id type x y z')", file, lno + 1);
        lno++;
        if (id < 1 || id > n || seen[id - 1]) FAIL("md_read_data: %s line %ld: atom id %ld is out of 1..%ld or repeated", file, lno, id, n);
        if (t < 1 || t > ntypes) FAIL("md_read_data: %s line %ld: unknown atom type %ld (the file declares %ld atom types)", file, lno, t, ntypes);
        seen[id - 1] = 1;
        s->type[id - 1] = t - 1;
        s->x[3 * (id - 1)] = x; s->x[3 * (id - 1) + 1] = y; s->x[3 * (id - 1) + 2] = z;
      }
    } else if (!strcmp(word, "Velocities")) {
      ReadLine(fp, line, sizeof line); lno++;
      if (!s->v && PetscCalloc1(3 * n, &s->v)) FAIL("md_read_data: out of memory");
      for (long k = 0; k < n; k++) {
        long id; double a, b, c;
        if (!ReadLine(fp, line, sizeof line) || sscanf(line, "%ld %lf %lf %lf", &id, &a, &b, &c) != 4) FAIL("md_read_data: %s: Velocities section ends early (line %ld)", file, lno + 1);
        lno++;
        if (id < 1 || id > n) FAIL("md_read_data: %s line %ld: atom id %ld out of range", file, lno, id);
        s->v[3 * (id - 1)] = a; s->v[3 * (id - 1) + 1] = b; s->v[3 * (id - 1) + 2] = c;
      }
    } else if (word[0]) FAIL("md_read_data: %s line %ld: section '%s' is not supported (Masses, Atoms, Velocities)", file, lno, word);
    /* next keyword */
    word[0] = 0;
    while (ReadLine(fp, line, sizeof line)) {
      lno++;
      if (sscanf(line, " %63s", word) == 1) break;
    }
    if (feof(fp) && !word[0]) break;
    if (!word[0]) break;
  }
  for (long i = 0; i < n; i++) if (!seen[i]) FAIL("md_read_data: %s: atom id %ld is missing from the Atoms section", file, i + 1);
  lo[0] = xlo; lo[1] = ylo; lo[2] = zlo;
  h[0] = xhi - xlo; h[1] = 0; h[2] = 0;
  h[3] = xy; h[4] = yhi - ylo; h[5] = 0;
  h[6] = xz; h[7] = yz; h[8] = zhi - zlo;
  if (SgMDBoxSet(&s->box, lo, h)) FAIL("md_read_data: %s: bad cell", file);
done:
  if (fp) fclose(fp);
  PetscFree(seen);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Read(MPI_Comm comm, const char file[], SgMDSystem *s, PetscBool xyz)
{
  PetscMPIInt rank;
  ParseErr    e = {0, ""};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    if (xyz) PetscCall(ParseXYZ(file, s, &e));
    else PetscCall(ParseData(file, s, &e));
    PetscCall(PetscPopErrorHandler());
  }
  PetscCallMPI(MPI_Bcast(&e, sizeof e, MPI_BYTE, 0, comm));
  PetscCheck(!e.code, comm, PETSC_ERR_USER_INPUT, "%s", e.msg);
  PetscCall(SgMDSystemBcast(comm, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDReadXYZ(MPI_Comm comm, const char file[], SgMDSystem *s)
{
  PetscFunctionBegin;
  PetscCall(Read(comm, file, s, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgMDReadLammpsData(MPI_Comm comm, const char file[], SgMDSystem *s)
{
  PetscFunctionBegin;
  PetscCall(Read(comm, file, s, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
