/* The search space of the paper (Maulik et al., SC20, after DeepHyper's stacked-LSTM space): a chain
   of nlayers variable nodes, each identity or an LSTM of umin..umax units in steps of ustep, each
   with optional skip connections from the two nodes before its input. An architecture is a vector of
   decisions: per layer one operation (2 + (umax - umin)/ustep choices) and up to two skip bits (node
   1 has none, node 2 one: only the input lies before it). Random draws and mutations come from the
   counter-based generator of src/base keyed by (seed, key): reproducible on any number of ranks. */
#include <stdlib.h>
#include "sgpodlstm.h"
#include "sgsys.h"

static PetscInt NumOps(const SgPodLstmSpace *s) { return 2 + (s->umax - s->umin) / s->ustep; } /* identity + the unit counts */
/* skip bits layer i (0-based) may have: sources i-1-b >= 0 */
static PetscInt NumSkips(PetscInt i) { return PetscMin(SG_PODLSTM_NSKIP, PetscMax(0, i)); }
static PetscInt OpUnits(const SgPodLstmSpace *s, PetscInt op) { return op ? s->umin + (op - 1) * s->ustep : 0; }

PetscErrorCode SgPodLstmArchRandom(const SgPodLstmSpace *s, uint64_t seed, uint64_t key, SgPodLstmArch *a)
{
  uint64_t c = 0;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(a, sizeof *a));
  a->nlayers = s->nlayers;
  for (PetscInt i = 0; i < s->nlayers; i++) {
    a->units[i] = OpUnits(s, (PetscInt)(SgRandomUniform(seed, key, c++) * NumOps(s)) % NumOps(s));
    for (PetscInt b = 0; b < NumSkips(i); b++) a->skip[i] |= (SgRandomUniform(seed, key, c++) < 0.5 ? 1 : 0) << b;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Real et al.'s mutation: pick one decision uniformly and give it another value */
PetscErrorCode SgPodLstmArchMutate(const SgPodLstmSpace *s, const SgPodLstmArch *p, uint64_t seed, uint64_t key, SgPodLstmArch *a)
{
  PetscInt ndec = 0, d, i, nops = NumOps(s);

  PetscFunctionBegin;
  *a = *p;
  for (i = 0; i < s->nlayers; i++) ndec += 1 + NumSkips(i);
  d = (PetscInt)(SgRandomUniform(seed, key, 0) * ndec) % ndec;
  for (i = 0; i < s->nlayers; i++) {
    if (d == 0) { /* the operation: one of the nops - 1 others */
      PetscInt cur = a->units[i] ? (a->units[i] - s->umin) / s->ustep + 1 : 0;
      PetscInt nxt = (cur + 1 + (PetscInt)(SgRandomUniform(seed, key, 1) * (nops - 1)) % (nops - 1)) % nops;
      a->units[i] = OpUnits(s, nxt);
      break;
    }
    if (d <= NumSkips(i)) {
      a->skip[i] ^= 1 << (d - 1);
      break;
    }
    d -= 1 + NumSkips(i);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmArchToString(const SgPodLstmArch *a, char buf[], size_t len)
{
  PetscFunctionBegin;
  buf[0] = 0;
  for (PetscInt i = 0; i < a->nlayers; i++) {
    char w[32];
    if (a->units[i]) PetscCall(PetscSNPrintf(w, sizeof w, "%sL%" PetscInt_FMT, i ? " " : "", a->units[i]));
    else PetscCall(PetscSNPrintf(w, sizeof w, "%sI", i ? " " : ""));
    PetscCall(PetscStrlcat(buf, w, len));
    if (a->skip[i]) {
      PetscCall(PetscSNPrintf(w, sizeof w, "+%" PetscInt_FMT, a->skip[i]));
      PetscCall(PetscStrlcat(buf, w, len));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgPodLstmArchCheck(MPI_Comm comm, const SgPodLstmArch *a)
{
  PetscFunctionBegin;
  PetscCheck(a->nlayers >= 1 && a->nlayers <= SG_PODLSTM_MAXLAYERS, comm, PETSC_ERR_USER_INPUT, "podlstm: an architecture of %" PetscInt_FMT " layers: 1 to %d", a->nlayers, SG_PODLSTM_MAXLAYERS);
  for (PetscInt i = 0; i < a->nlayers; i++) {
    PetscCheck(a->units[i] >= 0 && a->units[i] <= 4096, comm, PETSC_ERR_USER_INPUT, "podlstm: layer %" PetscInt_FMT " has %" PetscInt_FMT " LSTM units: 0 (identity) to 4096", i + 1, a->units[i]);
    PetscCheck(a->skip[i] >= 0 && a->skip[i] < (1 << NumSkips(i)), comm, PETSC_ERR_USER_INPUT, "podlstm: layer %" PetscInt_FMT " has skip bits %" PetscInt_FMT ": node %" PetscInt_FMT " can take skips from %" PetscInt_FMT " earlier node(s) only (bits below %d)", i + 1, a->skip[i], i + 1, NumSkips(i), 1 << NumSkips(i));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "L64 I L32+1": whitespace-separated layers */
PetscErrorCode SgPodLstmArchFromString(MPI_Comm comm, const char str[], SgPodLstmArch *a)
{
  const char *p = str;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(a, sizeof *a));
  while (*p) {
    char *end;
    while (*p == ' ' || *p == ',' || *p == '/') p++;
    if (!*p) break;
    PetscCheck(a->nlayers < SG_PODLSTM_MAXLAYERS, comm, PETSC_ERR_USER_INPUT, "podlstm: architecture '%s' has more than %d layers", str, SG_PODLSTM_MAXLAYERS);
    if (*p == 'I') {
      a->units[a->nlayers] = 0;
      p++;
    } else {
      PetscCheck(*p == 'L', comm, PETSC_ERR_USER_INPUT, "podlstm: architecture '%s': layer %" PetscInt_FMT " is neither I (identity) nor L<units> (e.g. 'L64 I L32+1')", str, a->nlayers + 1);
      a->units[a->nlayers] = (PetscInt)strtol(p + 1, &end, 10);
      PetscCheck(end != p + 1 && a->units[a->nlayers] > 0, comm, PETSC_ERR_USER_INPUT, "podlstm: architecture '%s': layer %" PetscInt_FMT " needs a positive unit count after L", str, a->nlayers + 1);
      p = end;
    }
    if (*p == '+') {
      a->skip[a->nlayers] = (PetscInt)strtol(p + 1, &end, 10);
      PetscCheck(end != p + 1, comm, PETSC_ERR_USER_INPUT, "podlstm: architecture '%s': '+' needs the skip bits of layer %" PetscInt_FMT, str, a->nlayers + 1);
      p = end;
    }
    PetscCheck(!*p || *p == ' ' || *p == ',' || *p == '/', comm, PETSC_ERR_USER_INPUT, "podlstm: architecture '%s': unexpected '%c' in layer %" PetscInt_FMT, str, *p, a->nlayers + 1);
    a->nlayers++;
  }
  PetscCall(SgPodLstmArchCheck(comm, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SgPodLstmArchEqual(const SgPodLstmArch *a, const SgPodLstmArch *b)
{
  if (a->nlayers != b->nlayers) return PETSC_FALSE;
  for (PetscInt i = 0; i < a->nlayers; i++)
    if (a->units[i] != b->units[i] || a->skip[i] != b->skip[i]) return PETSC_FALSE;
  return PETSC_TRUE;
}
