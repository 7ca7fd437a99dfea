/* Patterns of the submatrix method: the filtered block graph of the input matrices, the rows of a
   cluster's submatrix, and the refinement of the column patterns from the density matrix.

   Pattern.  CP2K applies the method to the orthogonalised Kohn-Sham matrix whose elements decay, so
   the filtered matrix itself gives the pattern.  An orthogonal TB Hamiltonian is strictly short
   ranged (its pattern is only the neighbour shells) while the density matrix decays slowly, so the
   pattern of column J can be refined: P is computed, its blocks with Frobenius norm below eps_filter
   are dropped, the remaining rows are grown by one hop of the filtered graph, and the process is
   repeated until the pattern no longer changes (at most pattern_its times).  At the fixed point every
   dropped block of the density matrix is below eps_filter.  For a pair (H, S) the graph is the union
   of the filtered graphs of both. */
#include "pattern.h"

static PetscInt BlockOf(const SgTBBlocks *b, PetscInt r)
{
  PetscInt lo = 0, hi = b->nblk; /* off[lo] <= r < off[hi] */
  while (hi - lo > 1) { PetscInt mid = (lo + hi) / 2; if (b->off[mid] <= r) lo = mid; else hi = mid; }
  return lo;
}

static int CmpInt(const void *a, const void *b) { PetscInt x = *(const PetscInt *)a, y = *(const PetscInt *)b; return x < y ? -1 : x > y; }

/* Global block graph of A after filtering blocks with Frobenius norm < eps (diagonal always kept). */
static PetscErrorCode BlockGraphOne(Mat A, const SgTBBlocks *b, PetscReal eps, PetscInt **gs, PetscInt **gi)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  PetscInt    r0, r1, nt = 0, cap = 1024, *tI, *tJ, nblk = b->nblk;
  PetscReal  *tv, *acc;
  PetscInt   *mark, *list, nl;
  PetscMPIInt size, *cnt, *dsp, ntm;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetOwnershipRange(A, &r0, &r1));
  PetscCall(PetscMalloc3(cap, &tI, cap, &tJ, cap, &tv));
  PetscCall(PetscMalloc3(nblk, &acc, nblk, &mark, nblk, &list));
  for (PetscInt J = 0; J < nblk; J++) { mark[J] = 0; acc[J] = 0; }
  for (PetscInt r = r0; r < r1;) {
    PetscInt IB = BlockOf(b, r), rend = PetscMin(b->off[IB + 1], r1);
    nl = 0;
    for (; r < rend; r++) {
      PetscInt ncols; const PetscInt *cols; const PetscScalar *v;
      PetscCall(MatGetRow(A, r, &ncols, &cols, &v));
      for (PetscInt k = 0; k < ncols; k++) {
        PetscInt J = BlockOf(b, cols[k]);
        if (!mark[J]) { mark[J] = 1; list[nl++] = J; }
        acc[J] += PetscRealPart(v[k] * v[k]);
      }
      PetscCall(MatRestoreRow(A, r, &ncols, &cols, &v));
    }
    for (PetscInt k = 0; k < nl; k++) {
      PetscInt J = list[k];
      if (nt == cap) {
        PetscInt *nI, *nJ; PetscReal *nv;
        PetscCall(PetscMalloc3(2 * cap, &nI, 2 * cap, &nJ, 2 * cap, &nv));
        PetscCall(PetscArraycpy(nI, tI, nt)); PetscCall(PetscArraycpy(nJ, tJ, nt)); PetscCall(PetscArraycpy(nv, tv, nt));
        PetscCall(PetscFree3(tI, tJ, tv));
        tI = nI; tJ = nJ; tv = nv; cap *= 2;
      }
      tI[nt] = IB; tJ[nt] = J; tv[nt] = acc[J]; nt++;
      mark[J] = 0; acc[J] = 0;
    }
  }
  /* gather all triplets (blocks split between ranks appear twice and are summed) */
  PetscCall(PetscMalloc2(size, &cnt, size + 1, &dsp));
  PetscCall(PetscMPIIntCast(nt, &ntm));
  PetscCallMPI(MPI_Allgather(&ntm, 1, MPI_INT, cnt, 1, MPI_INT, comm));
  dsp[0] = 0;
  for (int p = 0; p < size; p++) dsp[p + 1] = dsp[p] + cnt[p];
  {
    PetscInt *aI, *aJ, tot = dsp[size], *cntI;
    PetscReal *av;
    PetscCall(PetscMalloc3(tot, &aI, tot, &aJ, tot, &av));
    PetscCallMPI(MPI_Allgatherv(tI, ntm, MPIU_INT, aI, cnt, dsp, MPIU_INT, comm));
    PetscCallMPI(MPI_Allgatherv(tJ, ntm, MPIU_INT, aJ, cnt, dsp, MPIU_INT, comm));
    PetscCallMPI(MPI_Allgatherv(tv, ntm, MPIU_REAL, av, cnt, dsp, MPIU_REAL, comm));
    /* CSR by IB with duplicates merged */
    PetscCall(PetscCalloc1(nblk + 1, &cntI));
    for (PetscInt k = 0; k < tot; k++) cntI[aI[k] + 1]++;
    for (PetscInt IB = 0; IB < nblk; IB++) cntI[IB + 1] += cntI[IB];
    {
      PetscInt *pos, *oJ; PetscReal *ov;
      PetscCall(PetscMalloc3(nblk, &pos, tot, &oJ, tot, &ov));
      for (PetscInt IB = 0; IB < nblk; IB++) pos[IB] = cntI[IB];
      for (PetscInt k = 0; k < tot; k++) { oJ[pos[aI[k]]] = aJ[k]; ov[pos[aI[k]]] = av[k]; pos[aI[k]]++; }
      PetscCall(PetscMalloc1(nblk + 1, gs));
      PetscCall(PetscMalloc1(tot + nblk, gi));
      (*gs)[0] = 0;
      for (PetscInt IB = 0; IB < nblk; IB++) {
        PetscInt k0 = cntI[IB], k1 = cntI[IB + 1], q = (*gs)[IB];
        nl = 0;
        for (PetscInt k = k0; k < k1; k++) {
          if (!mark[oJ[k]]) { mark[oJ[k]] = 1; list[nl++] = oJ[k]; }
          acc[oJ[k]] += ov[k];
        }
        if (!mark[IB]) { mark[IB] = 1; list[nl++] = IB; acc[IB] = 1; } /* the diagonal block is always there */
        for (PetscInt k = 0; k < nl; k++) {
          PetscInt J = list[k];
          if (J == IB || PetscSqrtReal(acc[J]) >= eps) (*gi)[q++] = J;
          mark[J] = 0; acc[J] = 0;
        }
        qsort(*gi + (*gs)[IB], q - (*gs)[IB], sizeof(PetscInt), CmpInt);
        (*gs)[IB + 1] = q;
      }
      PetscCall(PetscFree3(pos, oJ, ov));
    }
    PetscCall(PetscFree(cntI));
    PetscCall(PetscFree3(aI, aJ, av));
  }
  PetscCall(PetscFree2(cnt, dsp));
  PetscCall(PetscFree3(tI, tJ, tv));
  PetscCall(PetscFree3(acc, mark, list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Union of the column patterns of the cluster's blocks. */
PetscErrorCode SgTBClusterRows(PetscInt nb, const PetscInt *members, const PetscInt *ps, const PetscInt *pi, PetscInt *mark, PetscInt *nr, PetscInt **rows)
{
  PetscInt cnt = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nb; k++)
    for (PetscInt q = ps[members[k]]; q < ps[members[k] + 1]; q++)
      if (!mark[pi[q]]) { mark[pi[q]] = 1; cnt++; }
  PetscCall(PetscMalloc1(cnt, rows));
  cnt = 0;
  for (PetscInt k = 0; k < nb; k++)
    for (PetscInt q = ps[members[k]]; q < ps[members[k] + 1]; q++)
      if (mark[pi[q]] == 1) { mark[pi[q]] = 2; (*rows)[cnt++] = pi[q]; }
  for (PetscInt k = 0; k < cnt; k++) mark[(*rows)[k]] = 0;
  qsort(*rows, cnt, sizeof(PetscInt), CmpInt);
  *nr = cnt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Union of two sorted block graphs (CSR by block row). */
static PetscErrorCode GraphUnion(PetscInt nblk, const PetscInt *as, const PetscInt *ai, const PetscInt *bs, const PetscInt *bi, PetscInt **gs, PetscInt **gi)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nblk + 1, gs));
  PetscCall(PetscMalloc1(as[nblk] + bs[nblk] + 1, gi));
  (*gs)[0] = 0;
  for (PetscInt IB = 0; IB < nblk; IB++) {
    PetscInt p = as[IB], q = bs[IB], k = (*gs)[IB];
    while (p < as[IB + 1] || q < bs[IB + 1]) {
      PetscInt x = p < as[IB + 1] ? ai[p] : PETSC_MAX_INT, y = q < bs[IB + 1] ? bi[q] : PETSC_MAX_INT;
      (*gi)[k++] = PetscMin(x, y);
      if (x <= y) p++;
      if (y <= x) q++;
    }
    (*gs)[IB + 1] = k;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBBlockGraph(Mat A, Mat S, const SgTBBlocks *b, PetscReal eps, PetscInt **gs, PetscInt **gi)
{
  PetscInt *as, *ai, *bs, *bi;

  PetscFunctionBegin;
  PetscCall(BlockGraphOne(A, b, eps, gs, gi));
  if (!S) PetscFunctionReturn(PETSC_SUCCESS);
  as = *gs; ai = *gi;
  PetscCall(BlockGraphOne(S, b, eps, &bs, &bi));
  PetscCall(GraphUnion(b->nblk, as, ai, bs, bi, gs, gi));
  PetscCall(PetscFree(as)); PetscCall(PetscFree(ai)); PetscCall(PetscFree(bs)); PetscCall(PetscFree(bi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Refine the column patterns (ps, pi; replaced): keep the blocks of the density matrix held here
   with norm >= eps (and the diagonal), grow them by one hop of the graph (gs, gi), gather from all
   ranks.  changed: whether any column pattern differs from the previous one. */
PetscErrorCode SgTBPatternRefine(MPI_Comm comm, const SgTBBlocks *b, const SgTBDensity *dm, PetscReal eps, const PetscInt *gs, const PetscInt *gi, PetscInt *mark, PetscInt **ps_io, PetscInt **pi_io, PetscBool *changed_out)
{
  PetscInt    nblk = b->nblk, *ps = *ps_io, *pi = *pi_io;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscInt   *loc, nloc = 0, cap = 0, changed = 0;
  PetscMPIInt *cnt, *dsp, nlm;
  for (PetscInt J = 0; J < nblk; J++) if (dm->mine[J]) cap += 2 + (dm->cstart[J + 1] - dm->cstart[J]) * 64;
  PetscCall(PetscMalloc1(cap + 1, &loc));
  for (PetscInt J = 0; J < nblk; J++) {
    PetscInt bj = b->off[J + 1] - b->off[J], h = nloc + 1, cnt2 = 0;
    if (!dm->mine[J]) continue;
    loc[nloc] = J;
    for (PetscInt e = dm->cstart[J]; e < dm->cstart[J + 1]; e++) {
      PetscInt IB = dm->crow[e], bi = b->off[IB + 1] - b->off[IB];
      PetscReal nrm = 0;
      for (PetscInt q = 0; q < bi * bj; q++) nrm += dm->val[dm->cvoff[e] + q] * dm->val[dm->cvoff[e] + q];
      if (PetscSqrtReal(nrm) < eps && IB != J) continue;
      for (PetscInt g = gs[IB]; g < gs[IB + 1]; g++)
        if (!mark[gi[g]]) {
          mark[gi[g]] = 1;
          if (h + 2 + cnt2 > cap) { cap = 2 * (h + 2 + cnt2); PetscCall(PetscRealloc(sizeof(PetscInt) * (cap + 1), &loc)); }
          loc[h + 1 + cnt2++] = gi[g];
        }
    }
    loc[h] = cnt2;
    for (PetscInt q = 0; q < cnt2; q++) mark[loc[h + 1 + q]] = 0;
    qsort(loc + h + 1, cnt2, sizeof(PetscInt), CmpInt);
    nloc = h + 1 + cnt2;
  }
  PetscCall(PetscMalloc2(size, &cnt, size + 1, &dsp));
  PetscCall(PetscMPIIntCast(nloc, &nlm));
  PetscCallMPI(MPI_Allgather(&nlm, 1, MPI_INT, cnt, 1, MPI_INT, comm));
  dsp[0] = 0;
  for (int q = 0; q < size; q++) dsp[q + 1] = dsp[q] + cnt[q];
  {
    PetscInt *all, *nps, *npi, tot = 0;
    PetscCall(PetscMalloc1(dsp[size] + 1, &all));
    PetscCallMPI(MPI_Allgatherv(loc, nlm, MPIU_INT, all, cnt, dsp, MPIU_INT, comm));
    PetscCall(PetscCalloc1(nblk + 1, &nps));
    for (PetscInt k = 0; k < dsp[size];) { nps[all[k] + 1] = all[k + 1]; tot += all[k + 1]; k += 2 + all[k + 1]; }
    for (PetscInt J = 0; J < nblk; J++) nps[J + 1] += nps[J];
    PetscCall(PetscMalloc1(tot + 1, &npi));
    for (PetscInt k = 0; k < dsp[size];) { PetscCall(PetscArraycpy(npi + nps[all[k]], all + k + 2, all[k + 1])); k += 2 + all[k + 1]; }
    for (PetscInt J = 0; J < nblk && !changed; J++) {
      if (nps[J + 1] - nps[J] != ps[J + 1] - ps[J]) { changed = 1; break; }
      for (PetscInt q = 0; q < nps[J + 1] - nps[J]; q++) if (npi[nps[J] + q] != pi[ps[J] + q]) { changed = 1; break; }
    }
    PetscCall(PetscFree(ps)); PetscCall(PetscFree(pi));
    ps = nps; pi = npi;
    PetscCall(PetscFree(all));
  }
  PetscCall(PetscFree2(cnt, dsp));
  PetscCall(PetscFree(loc));
  *ps_io = ps; *pi_io = pi;
  *changed_out = changed ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
