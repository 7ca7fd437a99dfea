/* Density matrix by the submatrix method (M. Lass, R. Schade, T. D. Kuehne, C. Plessl, "A submatrix-
   based method for approximate matrix function evaluation in the quantum chemistry code CP2K",
   SC20) and, as its special case with one submatrix holding everything, by dense diagonalisation.

   For a cluster C of block columns (atoms, or molecules), the submatrix is A restricted to the block
   rows R_C that are non-zero in those columns of the pattern (pattern.c); it is solved densely
   (subsolve.c: A_C = Z L Z^T, or the pair A_C c = l S_C c for a non-orthogonal basis) and only the
   columns of C of Z f(L) Z^T are kept.  Submatrices are dealt to ranks by the 2 n^3 cost model
   (largest first, to the least loaded rank) and solved independently; the chemical potential couples
   them only through the eigenvalues and weights (mu.c).

   One pass at zero electronic temperature.  Storing every submatrix's eigenvectors until the global
   chemical potential is known costs sum n^2 memory (1 GB for 6,144 water atoms).  Instead each
   submatrix takes its columns at once, at its own mid-gap mu0 (the level where its weighted count
   reaches its share of the electrons), and keeps only its eigenvalues, weights and the two levels
   lo < mu0 <= hi either side.  Step occupations at the global mu equal those at mu0 exactly when
   lo < mu <= hi; the few submatrices where that fails (a level between mu0 and mu) are solved again.
   With kT > 0 the occupations depend on mu continuously and the factors are kept until mu is known. */
#include "sgtb.h"
#include "pattern.h"
#include "subsolve.h"
#include <time.h>

/* CPU seconds of this process: the phase profile stays meaningful on a shared, loaded machine where
   wall time mostly measures the share of a core the process got. */
static PetscReal Cpu(void) { return (PetscReal)clock() / CLOCKS_PER_SEC; }

typedef struct {       /* one submatrix held on this rank */
  PetscInt   c;        /* cluster id */
  PetscInt   nr, *rows;/* block rows R_C, sorted */
  PetscInt  *roff;     /* nr: first function of block row t inside the submatrix (kept blocks last) */
  PetscInt   n, m;     /* dimension, kept functions */
  PetscInt   voff;     /* where its block columns start in dm->val */
  SgTBSub    e;        /* eigenvalues and weights (and the factors while they are needed) */
  PetscBool  solved, stored;
  PetscReal  lo, hi;   /* kT = 0: levels either side of the mu its columns were taken at */
  PetscReal  eb, ne, ent;
} Sub;

/* Positions of the submatrix's functions (pos[global function] = row in the submatrix, -1 = not). */
static void SetPos(const Sub *u, const SgTBBlocks *b, PetscInt *pos, PetscBool on)
{
  for (PetscInt t = 0; t < u->nr; t++)
    for (PetscInt r = b->off[u->rows[t]]; r < b->off[u->rows[t] + 1]; r++) pos[r] = on ? u->roff[t] + r - b->off[u->rows[t]] : -1;
}

/* Dense n x n submatrix M of the gathered rows (sub, subrow: row of global function r in sub). */
static PetscErrorCode Assemble(const Sub *u, const SgTBBlocks *b, Mat sub, const PetscInt *subrow, const PetscInt *pos, PetscReal *M)
{
  PetscInt n = u->n;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(M, (size_t)n * n));
  for (PetscInt t = 0; t < u->nr; t++)
    for (PetscInt r = b->off[u->rows[t]]; r < b->off[u->rows[t] + 1]; r++) {
      PetscInt nc; const PetscInt *cols; const PetscScalar *v;
      PetscCall(MatGetRow(sub, subrow[r], &nc, &cols, &v));
      for (PetscInt q = 0; q < nc; q++) if (pos[cols[q]] >= 0) M[(size_t)pos[cols[q]] * n + pos[r]] = PetscRealPart(v[q]);
      PetscCall(MatRestoreRow(sub, subrow[r], &nc, &cols, &v));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Kept columns Pk (n x m) into the block columns of dm->val: block (IB, J) column-major. */
static void Scatter(const Sub *u, const SgTBBlocks *b, const PetscInt *cs, const PetscInt *cm, const PetscReal *Pk, SgTBDensity *dm)
{
  PetscInt q0 = 0, nval = u->voff, n = u->n;
  for (PetscInt k = cs[u->c]; k < cs[u->c + 1]; k++) {
    PetscInt J = cm[k], bj = b->off[J + 1] - b->off[J];
    for (PetscInt t = 0; t < u->nr; t++) {
      PetscInt IB = u->rows[t], bi = b->off[IB + 1] - b->off[IB];
      for (PetscInt cc = 0; cc < bj; cc++)
        for (PetscInt rr = 0; rr < bi; rr++) dm->val[nval++] = Pk[(size_t)(q0 + cc) * n + u->roff[t] + rr];
    }
    q0 += bj;
  }
}

/* A chemical potential mu0 for the submatrix alone, and the levels lo < mu0 <= hi either side of it:
   the widest gap between consecutive levels where the weighted count 2 sum_{k' <= k} w_k' is within
   half an electron of the submatrix's share (the count reaches the share inside the occupied band,
   whose remaining levels carry almost no weight on the cluster, so the nearest count is no guide);
   the level nearest the share if the count never comes that close. */
static void LocalMu(const SgTBSub *e, PetscReal share, PetscReal *mu0, PetscReal *lo, PetscReal *hi)
{
  PetscInt  kbest = -1, n = e->n;
  PetscReal c = 0, best = PetscAbsReal(share), gbest = -1;
  for (PetscInt k = -1; k < n; k++) { /* k: the highest occupied level (-1: none) */
    if (k >= 0) c += 2 * e->w[k];
    PetscReal g = (k < 0 || k + 1 >= n) ? PETSC_MAX_REAL : e->lam[k + 1] - e->lam[k];
    if (PetscAbsReal(c - share) <= 0.5) {
      if (gbest < 0 || g > gbest) { gbest = g; kbest = k; }
    } else if (gbest < 0 && PetscAbsReal(c - share) < best) { best = PetscAbsReal(c - share); kbest = k; }
  }
  *lo = kbest >= 0 ? e->lam[kbest] : PETSC_MIN_REAL;
  *hi = kbest + 1 < n ? e->lam[kbest + 1] : PETSC_MAX_REAL;
  *mu0 = kbest < 0 ? e->lam[0] - 1 : (kbest + 1 < n ? 0.5 * (*lo + *hi) : *lo + 1);
}

/* Solve one submatrix (A, S gathered) and, unless its factors are kept (kT > 0), take its columns:
   mode 1 at f = l^p, mode 0 at mu (mu_given) or at its own mid-gap. */
static PetscErrorCode SolveOne(Sub *u, const SgTBBlocks *b, const PetscInt *cs, const PetscInt *cm, Mat subA, Mat subS, const PetscInt *subrow, PetscInt *pos, const SgTBDMOptions *o, PetscInt mode, PetscReal p, PetscReal share, PetscBool mu_given, PetscReal mu, SgTBDensity *dm, PetscReal *teig, PetscReal *tcol)
{
  PetscInt   n = u->n, m = u->m;
  PetscReal *A, *S = NULL, *Pk = NULL, *f, t0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1((size_t)n * n, &A));
  PetscCall(PetscMalloc1(n, &f));
  if (subS) PetscCall(PetscMalloc1((size_t)n * n, &S));
  SetPos(u, b, pos, PETSC_TRUE);
  PetscCall(Assemble(u, b, subA, subrow, pos, A));
  if (subS) PetscCall(Assemble(u, b, subS, subrow, pos, S));
  SetPos(u, b, pos, PETSC_FALSE);
  if (u->solved) PetscCall(SgTBSubDestroy(&u->e));
  t0 = Cpu();
  if (mode == 0 && o->sign == SG_TB_SIGN_NS) {
    /* P_C = (I + sign(mu - A_C))/2 in full; band energy and count from the kept columns */
    PetscCall(PetscMemzero(&u->e, sizeof(u->e))); /* no levels: mu is given */
    PetscCall(PetscMalloc1((size_t)n * m, &Pk));
    PetscCall(PetscArraycpy(Pk, A + (size_t)(n - m) * n, (size_t)n * m)); /* kept columns of A */
    PetscCall(SgTBSubNewtonSchulz(n, A, mu));
    *teig += Cpu() - t0; t0 = Cpu();
    u->eb = u->ne = 0;
    for (PetscInt q = 0; q < m; q++)
      for (PetscInt r = 0; r < n; r++) {
        PetscReal a = Pk[(size_t)q * n + r];
        Pk[(size_t)q * n + r] = A[(size_t)(n - m + q) * n + r];
        u->eb += 2 * Pk[(size_t)q * n + r] * a;
      }
    for (PetscInt q = 0; q < m; q++) u->ne += 2 * Pk[(size_t)q * n + n - m + q];
    PetscCall(PetscFree(A));
  } else {
    PetscCall(SgTBSubSolve(n, m, A, S, o->precision == SG_TB_SINGLE && mode == 0 ? PETSC_TRUE : PETSC_FALSE, &u->e)); /* takes A, S */
    *teig += Cpu() - t0; t0 = Cpu();
    u->stored = (mode == 0 && o->kT > 0) ? PETSC_TRUE : PETSC_FALSE;
    if (!u->stored) {
      if (mode == 1) {
        for (PetscInt k = 0; k < n; k++) {
          PetscCheck(u->e.lam[k] > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "Matrix power %g needs a positive definite matrix (overlap S): submatrix eigenvalue %g; check the S file", (double)p, (double)u->e.lam[k]);
          f[k] = PetscPowReal(u->e.lam[k], p);
        }
      } else {
        PetscReal mu0;
        LocalMu(&u->e, share, &mu0, &u->lo, &u->hi);
        if (mu_given) mu0 = mu;
        for (PetscInt k = 0; k < n; k++) f[k] = SgTBOcc(u->e.lam[k], mu0, 0);
      }
      PetscCall(PetscMalloc1((size_t)n * m, &Pk));
      PetscCall(SgTBSubColumns(&u->e, f, Pk, &u->eb, &u->ne));
      PetscCall(SgTBSubFreeFactors(&u->e));
    }
  }
  if (!u->stored) Scatter(u, b, cs, cm, Pk, dm);
  u->solved = PETSC_TRUE;
  *tcol += Cpu() - t0;
  PetscCall(PetscFree(Pk));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Columns of a submatrix whose factors were kept, at the final mu (Fermi occupations). */
static PetscErrorCode StoredColumns(Sub *u, const SgTBBlocks *b, const PetscInt *cs, const PetscInt *cm, PetscReal mu, PetscReal kT, SgTBDensity *dm)
{
  PetscInt   n = u->n, m = u->m;
  PetscReal *Pk, *f;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2((size_t)n * m, &Pk, n, &f));
  u->ent = 0;
  for (PetscInt k = 0; k < n; k++) {
    f[k] = SgTBOcc(u->e.lam[k], mu, kT);
    if (f[k] > 0 && f[k] < 1) u->ent += -2 * u->e.w[k] * (f[k] * PetscLogReal(f[k]) + (1 - f[k]) * PetscLogReal(1 - f[k]));
  }
  PetscCall(SgTBSubColumns(&u->e, f, Pk, &u->eb, &u->ne));
  PetscCall(SgTBSubFreeFactors(&u->e));
  Scatter(u, b, cs, cm, Pk, dm);
  u->stored = PETSC_FALSE;
  PetscCall(PetscFree2(Pk, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SubFree(PetscInt ns, Sub *s)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < ns; i++) {
    PetscCall(PetscFree(s[i].rows)); PetscCall(PetscFree(s[i].roff));
    if (s[i].solved) PetscCall(SgTBSubDestroy(&s[i].e));
  }
  PetscCall(PetscFree(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Clusters: cs (nclus+1) and members cm, from the cluster id of every block. */
static PetscErrorCode Clusters(PetscInt nblk, const PetscInt *cl, PetscInt *nclus, PetscInt **cs, PetscInt **cm)
{
  PetscInt nc = 0, *q;

  PetscFunctionBegin;
  for (PetscInt J = 0; J < nblk; J++) nc = PetscMax(nc, cl[J] + 1);
  PetscCall(PetscCalloc1(nc + 1, cs));
  PetscCall(PetscMalloc1(nblk, cm));
  for (PetscInt J = 0; J < nblk; J++) (*cs)[cl[J] + 1]++;
  for (PetscInt c = 0; c < nc; c++) (*cs)[c + 1] += (*cs)[c];
  PetscCall(PetscMalloc1(nc, &q));
  for (PetscInt c = 0; c < nc; c++) q[c] = (*cs)[c];
  for (PetscInt J = 0; J < nblk; J++) (*cm)[q[cl[J]]++] = J;
  PetscCall(PetscFree(q));
  *nclus = nc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mode 0: density matrix (mu by bisection or Newton-Schulz); mode 1: spectral power p.  S (may be
   NULL): the overlap of a non-orthogonal basis, solved as the pair (A, S) on every submatrix. */
static PetscErrorCode SubmatrixCompute(Mat A, Mat S, const SgTBBlocks *b, const PetscInt *clus_in, const SgTBDMOptions *o, PetscInt mode, PetscReal p, SgTBDensity *dm)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt rank, size;
  PetscInt    nblk = b->nblk, N = b->off[nblk], *gs, *gi, *ps, *pi, nclus, *cs, *cm, *owner, *mark, *pos, ns = 0, *cl;
  PetscReal  *cost, *load, t0 = MPI_Wtime(), c0 = Cpu(), tw = c0, teig = 0, tpat = 0, tgat = 0, tmu = 0, tcol = 0;
  Sub        *s = NULL;
  PetscBool   dense = (o->method == SG_TB_DENSE) ? PETSC_TRUE : PETSC_FALSE, ns_sign = (mode == 0 && o->sign == SG_TB_SIGN_NS) ? PETSC_TRUE : PETSC_FALSE;
  PetscInt    maxits = dense ? 0 : o->pattern_its, it;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (ns_sign) {
    PetscCheck(o->mu_set, comm, PETSC_ERR_USER_INPUT, "The Newton-Schulz sign method needs the chemical potential (option mu, e.g. from a previous run with the eigendecomposition sign method): bisection on eigenvalues is only available with sign eig");
    PetscCheck(o->kT == 0, comm, PETSC_ERR_USER_INPUT, "The Newton-Schulz sign method gives step occupations: use kt 0 or the eigendecomposition sign method");
    PetscCheck(!S, comm, PETSC_ERR_USER_INPUT, "The Newton-Schulz sign method works on an orthogonal basis: use overlap orthogonalise (S^-1/2 H S^-1/2) or the eigendecomposition sign method");
  }
  PetscCheck(!(mode == 0 && o->precision == SG_TB_SINGLE && dense), comm, PETSC_ERR_USER_INPUT, "precision single is for the submatrix method (its McWeeny refinement of all columns would cost more than the double-precision diagonalisation): use precision double with method dense");
  PetscCheck(!(mode == 0 && o->precision == SG_TB_SINGLE && (o->kT > 0 || ns_sign)), comm, PETSC_ERR_USER_INPUT, "precision single refines the columns by a McWeeny step, which needs step occupations and the eigendecomposition sign method: use kt 0 and sign eig, or precision double");
  PetscCall(PetscMemzero(dm, sizeof(*dm)));
  dm->nblk = nblk;
  PetscCall(PetscMalloc1(nblk, &cl));
  for (PetscInt J = 0; J < nblk; J++) cl[J] = dense ? 0 : (clus_in ? clus_in[J] : J / PetscMax(1, o->cluster));
  PetscCall(Clusters(nblk, cl, &nclus, &cs, &cm));
  PetscCall(PetscFree(cl));
  /* pattern: the filtered graph of A (and S) (dense: everything) */
  PetscCall(SgTBBlockGraph(A, S, b, dense ? 0 : o->eps_filter, &gs, &gi));
  if (dense) {
    PetscCall(PetscMalloc1(nblk + 1, &ps)); PetscCall(PetscMalloc1(nblk * nblk, &pi));
    for (PetscInt J = 0; J <= nblk; J++) ps[J] = J * nblk;
    for (PetscInt k = 0; k < nblk * nblk; k++) pi[k] = k % nblk;
  } else {
    PetscCall(PetscMalloc1(nblk + 1, &ps)); PetscCall(PetscMalloc1(gs[nblk], &pi));
    PetscCall(PetscArraycpy(ps, gs, nblk + 1)); PetscCall(PetscArraycpy(pi, gi, gs[nblk]));
  }
  PetscCall(PetscCalloc1(nblk, &mark));
  PetscCall(PetscMalloc1(N, &pos));
  for (PetscInt k = 0; k < N; k++) pos[k] = -1;
  PetscCall(PetscMalloc3(nclus, &cost, nclus, &owner, size, &load));

  for (it = 0;; it++) {
    PetscInt **crows, *cnr;
    PetscReal  totflops = 0, eb = 0, ent = 0, ne = 0;
    /* submatrix rows per cluster and the 2 n^3 cost model */
    PetscCall(PetscMalloc2(nclus, &crows, nclus, &cnr));
    dm->maxn = 0;
    for (PetscInt c = 0; c < nclus; c++) {
      PetscInt n = 0;
      PetscCall(SgTBClusterRows(cs[c + 1] - cs[c], cm + cs[c], ps, pi, mark, &cnr[c], &crows[c]));
      for (PetscInt k = 0; k < cnr[c]; k++) n += b->off[crows[c][k] + 1] - b->off[crows[c][k]];
      cost[c] = 2.0 * (PetscReal)n * n * n;
      totflops += cost[c];
      dm->maxn = PetscMax(dm->maxn, n);
    }
    dm->flops = totflops; dm->nsub = nclus;
    /* largest first to the least loaded rank (identical on every rank) */
    {
      PetscInt  *ord;
      PetscReal *cc;
      PetscCall(PetscMalloc2(nclus, &ord, nclus, &cc));
      for (PetscInt c = 0; c < nclus; c++) { ord[c] = c; cc[c] = cost[c]; }
      PetscCall(PetscSortRealWithArrayInt(nclus, cc, ord)); /* ascending; dealt from the end */
      for (int q = 0; q < size; q++) load[q] = 0;
      for (PetscInt k = nclus - 1; k >= 0; k--) {
        PetscInt c = ord[k], best = 0;
        for (int q = 1; q < size; q++) if (load[q] < load[best]) best = q;
        owner[c] = best; load[best] += cost[c];
      }
      PetscCall(PetscFree2(ord, cc));
    }
    /* this rank's submatrices: rows (kept blocks last), and the layout of their block columns */
    PetscCall(SubFree(ns, s));
    ns = 0;
    for (PetscInt c = 0; c < nclus; c++) if (owner[c] == rank) ns++;
    PetscCall(PetscCalloc1(ns, &s));
    PetscCall(PetscFree(dm->mine)); PetscCall(PetscFree(dm->cstart)); PetscCall(PetscFree(dm->crow)); PetscCall(PetscFree(dm->cvoff)); PetscCall(PetscFree(dm->val));
    PetscCall(PetscCalloc1(nblk, &dm->mine));
    PetscCall(PetscCalloc1(nblk + 1, &dm->cstart));
    {
      PetscInt i = 0, nval = 0;
      for (PetscInt c = 0; c < nclus; c++) {
        Sub     *u;
        PetscInt n = 0;
        if (owner[c] != rank) { PetscCall(PetscFree(crows[c])); continue; }
        u = &s[i++];
        u->c = c; u->nr = cnr[c]; u->rows = crows[c]; crows[c] = NULL;
        PetscCall(PetscMalloc1(u->nr, &u->roff));
        for (PetscInt k = cs[c]; k < cs[c + 1]; k++) mark[cm[k]] = 1;
        for (PetscInt t = 0; t < u->nr; t++) if (!mark[u->rows[t]]) { u->roff[t] = n; n += b->off[u->rows[t] + 1] - b->off[u->rows[t]]; }
        u->m = 0;
        for (PetscInt k = cs[c]; k < cs[c + 1]; k++) { /* kept blocks last, in member order */
          PetscInt J = cm[k], t = 0;
          while (u->rows[t] != J) t++; /* a block's own row is always in its pattern */
          u->roff[t] = n + u->m; u->m += b->off[J + 1] - b->off[J];
          mark[J] = 0;
          dm->mine[J] = PETSC_TRUE; dm->cstart[J + 1] = u->nr;
        }
        u->n = n + u->m;
        u->voff = nval;
        nval += u->n * u->m;
      }
      for (PetscInt J = 0; J < nblk; J++) dm->cstart[J + 1] += dm->cstart[J];
      PetscCall(PetscMalloc1(dm->cstart[nblk] + 1, &dm->crow));
      PetscCall(PetscMalloc1(dm->cstart[nblk] + 1, &dm->cvoff));
      PetscCall(PetscMalloc1(nval + 1, &dm->val));
      for (i = 0; i < ns; i++) {
        Sub     *u = &s[i];
        PetscInt off = u->voff;
        for (PetscInt k = cs[u->c]; k < cs[u->c + 1]; k++) {
          PetscInt J = cm[k], bj = b->off[J + 1] - b->off[J];
          for (PetscInt t = 0; t < u->nr; t++) {
            dm->crow[dm->cstart[J] + t] = u->rows[t]; dm->cvoff[dm->cstart[J] + t] = off;
            off += (b->off[u->rows[t] + 1] - b->off[u->rows[t]]) * bj;
          }
        }
      }
    }
    PetscCall(PetscFree2(crows, cnr));
    tpat += Cpu() - tw; tw = Cpu();
    /* gather the rows this rank needs in one call per matrix; solve */
    {
      IS       isr, isc;
      Mat     *subA, *subS = NULL;
      PetscInt nneed = 0, *need, *subrow;
      PetscReal share = o->nelec / N, te0 = teig, tc0 = tcol;
      for (PetscInt i = 0; i < ns; i++) for (PetscInt t = 0; t < s[i].nr; t++) mark[s[i].rows[t]] = 1;
      for (PetscInt IB = 0; IB < nblk; IB++) if (mark[IB]) nneed += b->off[IB + 1] - b->off[IB];
      PetscCall(PetscMalloc1(nneed, &need));
      PetscCall(PetscMalloc1(N, &subrow));
      nneed = 0;
      for (PetscInt IB = 0; IB < nblk; IB++) if (mark[IB]) { for (PetscInt r = b->off[IB]; r < b->off[IB + 1]; r++) { subrow[r] = nneed; need[nneed++] = r; } mark[IB] = 0; }
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneed, need, PETSC_OWN_POINTER, &isr));
      PetscCall(ISCreateStride(PETSC_COMM_SELF, N, 0, 1, &isc));
      PetscCall(MatCreateSubMatrices(A, 1, &isr, &isc, MAT_INITIAL_MATRIX, &subA));
      if (S) PetscCall(MatCreateSubMatrices(S, 1, &isr, &isc, MAT_INITIAL_MATRIX, &subS));
      PetscCall(ISDestroy(&isr)); PetscCall(ISDestroy(&isc));
      for (PetscInt i = 0; i < ns; i++) PetscCall(SolveOne(&s[i], b, cs, cm, subA[0], subS ? subS[0] : NULL, subrow, pos, o, mode, p, share * s[i].m, ns_sign, o->mu, dm, &teig, &tcol));
      tgat += Cpu() - tw - (teig - te0) - (tcol - tc0); tw = Cpu();
      /* chemical potential; columns of the kept factors, or again where a level lies between */
      dm->nredo = 0;
      if (mode == 0) {
        if (ns_sign) dm->mu = o->mu;
        else {
          SgTBSub **e;
          PetscCall(PetscMalloc1(ns + 1, &e));
          for (PetscInt i = 0; i < ns; i++) e[i] = &s[i].e;
          PetscCall(SgTBFindMu(comm, ns, e, o, dense, &dm->mu));
          PetscCall(PetscFree(e));
        }
        tmu += Cpu() - tw; tw = Cpu(); te0 = teig; tc0 = tcol;
        for (PetscInt i = 0; i < ns && !ns_sign; i++) {
          if (s[i].stored) PetscCall(StoredColumns(&s[i], b, cs, cm, dm->mu, o->kT, dm));
          else if (!(s[i].lo < dm->mu && dm->mu <= s[i].hi)) {
            PetscCall(SolveOne(&s[i], b, cs, cm, subA[0], subS ? subS[0] : NULL, subrow, pos, o, mode, p, 0, PETSC_TRUE, dm->mu, dm, &teig, &tcol));
            dm->nredo++;
          }
        }
        tgat += Cpu() - tw - (teig - te0) - (tcol - tc0); tw = Cpu();
      }
      PetscCall(PetscFree(subrow));
      PetscCall(MatDestroySubMatrices(1, &subA));
      if (subS) PetscCall(MatDestroySubMatrices(1, &subS));
    }
    for (PetscInt i = 0; i < ns; i++) { eb += s[i].eb; ent += s[i].ent; ne += s[i].ne; }
    {
      PetscReal g[3] = {eb, ent, ne};
      PetscInt  r = dm->nredo;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 3, MPIU_REAL, MPIU_SUM, comm));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPIU_INT, MPI_SUM, comm));
      dm->ebandsum = g[0]; dm->entropy = -o->kT * g[1]; dm->nelec = g[2]; dm->nredo = r;
    }
    if (it >= maxits) break;
    {
      PetscBool changed;
      PetscCall(SgTBPatternRefine(comm, b, dm, o->eps_filter, gs, gi, mark, &ps, &pi, &changed));
      if (o->verbose) PetscCall(PetscPrintf(comm, "  submatrix pattern pass %" PetscInt_FMT ": largest submatrix %" PetscInt_FMT ", 2n^3 model %.3g flop, pattern %s\n", it, dm->maxn, (double)dm->flops, changed ? "grew" : "converged"));
      tpat += Cpu() - tw; tw = Cpu();
      if (!changed) break;
    }
  }
  dm->its = it;
  if (mode == 0) PetscCheck(PetscAbsReal(dm->nelec - o->nelec) <= PetscMax(o->nelec_tol, 1e-6 * o->nelec), comm, PETSC_ERR_USER_INPUT, "The chemical potential cannot reach the electron count %g: the submatrix density matrix holds %.8g electrons at mu = %g eV (tolerance nelec_tol %g); lower eps_filter, raise pattern_its, or set an electronic temperature (option kt)", (double)o->nelec, (double)dm->nelec, (double)dm->mu, (double)o->nelec_tol);
  PetscCall(SubFree(ns, s));
  PetscCall(PetscFree(cs)); PetscCall(PetscFree(cm));
  PetscCall(PetscFree(gs)); PetscCall(PetscFree(gi)); PetscCall(PetscFree(ps)); PetscCall(PetscFree(pi));
  PetscCall(PetscFree(mark)); PetscCall(PetscFree(pos));
  PetscCall(PetscFree3(cost, owner, load));
  dm->t_eig = teig; dm->t_pattern = tpat; dm->t_gather = tgat; dm->t_mu = tmu; dm->t_cols = tcol;
  dm->t_total = MPI_Wtime() - t0; dm->t_cpu = Cpu() - c0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDensityCompute(Mat A, const SgTBBlocks *b, const PetscInt *clus, const SgTBDMOptions *o, SgTBDensity *dm)
{
  PetscFunctionBegin;
  PetscCall(SubmatrixCompute(A, NULL, b, clus, o, 0, 0, dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDensityComputePair(Mat H, Mat S, const SgTBBlocks *b, const PetscInt *clus, const SgTBDMOptions *o, SgTBDensity *dm)
{
  PetscFunctionBegin;
  PetscCall(SubmatrixCompute(H, S, b, clus, o, 0, 0, dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDensityGetBlock(const SgTBDensity *dm, const SgTBBlocks *b, PetscInt IB, PetscInt J, const PetscReal **blk)
{
  PetscInt lo = dm->cstart[J], hi = dm->cstart[J + 1];

  PetscFunctionBegin;
  (void)b;
  *blk = NULL;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (dm->crow[mid] < IB) lo = mid + 1; else hi = mid;
  }
  if (lo < dm->cstart[J + 1] && dm->crow[lo] == IB) *blk = dm->val + dm->cvoff[lo];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Assemble the held block columns into an MPIAIJ matrix with A's layout, symmetrised (P + P^T)/2
   (the submatrix columns are not exactly symmetric). */
PetscErrorCode SgTBDensityToMat(MPI_Comm comm, const SgTBDensity *dm, const SgTBBlocks *b, Mat A, Mat *P)
{
  Mat      T, Pt;
  PetscInt m, nn;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &nn));
  {
    /* exact preallocation: every rank counts what it will insert in every row (diagonal / off-diagonal
       part by the column ownership), the counts are summed, each rank keeps its rows */
    PetscInt  N = b->off[dm->nblk], c0, c1, r0, r1, *cnt, *dnz, *onz;
    PetscCall(MatGetOwnershipRangeColumn(A, &c0, &c1));
    PetscCall(MatGetOwnershipRange(A, &r0, &r1));
    PetscCall(PetscCalloc1(2 * N, &cnt));
    for (PetscInt J = 0; J < dm->nblk; J++) {
      if (!dm->mine[J]) continue;
      for (PetscInt e = dm->cstart[J]; e < dm->cstart[J + 1]; e++) {
        PetscInt IB = dm->crow[e];
        for (PetscInt c = b->off[J]; c < b->off[J + 1]; c++)
          for (PetscInt r = b->off[IB]; r < b->off[IB + 1]; r++) cnt[2 * r + ((c >= c0 && c < c1) ? 0 : 1)]++;
      }
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, cnt, (PetscMPIInt)(2 * N), MPIU_INT, MPI_SUM, comm));
    PetscCall(PetscMalloc2(r1 - r0, &dnz, r1 - r0, &onz));
    for (PetscInt r = r0; r < r1; r++) { dnz[r - r0] = PetscMin(cnt[2 * r], c1 - c0); onz[r - r0] = PetscMin(cnt[2 * r + 1], N - (c1 - c0)); }
    PetscCall(MatCreateAIJ(comm, m, nn, PETSC_DETERMINE, PETSC_DETERMINE, 0, dnz, 0, onz, &T));
    PetscCall(PetscFree2(dnz, onz));
    PetscCall(PetscFree(cnt));
  }
  PetscCall(MatSetOption(T, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(T, MAT_ROW_ORIENTED, PETSC_FALSE));
  for (PetscInt J = 0; J < dm->nblk; J++) {
    if (!dm->mine[J]) continue;
    for (PetscInt e = dm->cstart[J]; e < dm->cstart[J + 1]; e++) {
      PetscInt IB = dm->crow[e], bi = b->off[IB + 1] - b->off[IB], bj = b->off[J + 1] - b->off[J], ri[64], cj[64];
      PetscCheck(bi <= 64 && bj <= 64, comm, PETSC_ERR_SUP, "Blocks larger than 64 functions");
      for (PetscInt q = 0; q < bi; q++) ri[q] = b->off[IB] + q;
      for (PetscInt q = 0; q < bj; q++) cj[q] = b->off[J] + q;
      PetscCall(MatSetValues(T, bi, ri, bj, cj, dm->val + dm->cvoff[e], INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(T, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(T, MAT_FINAL_ASSEMBLY));
  PetscCall(MatTranspose(T, MAT_INITIAL_MATRIX, &Pt));
  PetscCall(MatAXPY(Pt, 1.0, T, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatScale(Pt, 0.5));
  PetscCall(MatDestroy(&T));
  *P = Pt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBDensityDestroy(SgTBDensity *dm)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(dm->mine)); PetscCall(PetscFree(dm->cstart)); PetscCall(PetscFree(dm->crow)); PetscCall(PetscFree(dm->cvoff)); PetscCall(PetscFree(dm->val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SgTBSubmatrixPower(Mat S, const SgTBBlocks *b, const SgTBDMOptions *o, PetscReal p, Mat *X)
{
  SgTBDensity dm;

  PetscFunctionBegin;
  PetscCall(SubmatrixCompute(S, NULL, b, NULL, o, 1, p, &dm));
  PetscCall(SgTBDensityToMat(PetscObjectComm((PetscObject)S), &dm, b, S, X));
  PetscCall(SgTBDensityDestroy(&dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
