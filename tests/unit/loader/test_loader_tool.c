/* A loader configured only through options, as a trainer's deck would (section `loader:`):
     test_loader_tool -loader_files A.h5,B.h5 -loader_batch_size 16 -loader_epochs 2 ...
   Runs every batch, checks each epoch delivers every sample once and every delivered row of every
   field is byte-identical to a plain SgDatasetReadField of that sample from its file, prints the
   view and a summary line "SUMMARY samples=... hits=... planned=... bytes_checked=...". Errors (bad
   files, bad options) exit nonzero with the message; loader_errors.py checks those messages. */
#include "sgloader.h"
#include "sgsys.h"

int main(int argc, char **argv)
{
  SgLoader      l;
  SgLoaderBatch b;
  PetscBool     done;
  int64_t       n = 0, N, hits, planned, checked = 0, *foff;
  char         *seen = NULL, *fnames[64], row[1 << 16];
  PetscInt      nfiles = 64, nf;
  SgDataset     ds[64];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(SgLoaderCreate(PETSC_COMM_WORLD, &l));
  PetscCall(SgLoaderSetFromOptions(l));
  PetscCall(SgLoaderSetUp(l));
  PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(SgLoaderGetNumSamples(l, &N));
  PetscCall(PetscCalloc1(N, &seen));
  /* the same files, opened independently, for plain per-sample reads */
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-loader_files", fnames, &nfiles, NULL));
  PetscCall(PetscCalloc1(nfiles + 1, &foff));
  for (PetscInt i = 0; i < nfiles; i++) {
    int64_t n;
    PetscCall(SgDatasetOpen(PETSC_COMM_SELF, fnames[i], SG_DATASET_READ, &ds[i]));
    PetscCall(SgDatasetGetNumSamples(ds[i], &n));
    foff[i + 1] = foff[i] + n;
  }
  PetscCall(SgLoaderGetNumFields(l, &nf));
  for (;;) {
    PetscCall(SgLoaderNext(l, &b, &done));
    if (done) break;
    if (b.batch == 0) PetscCall(PetscArrayzero(seen, N));
    for (PetscInt i = 0; i < b.nlocal; i++) {
      PetscCheck(!seen[b.ids[i]], PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld twice in epoch %d", (long long)b.ids[i], (int)b.epoch);
      seen[b.ids[i]] = 1;
      {
        PetscInt fi = 0;
        while (b.ids[i] >= foff[fi + 1]) fi++;
        for (PetscInt f = 0; f < nf; f++) {
          const char *name;
          SgDType     dt;
          int64_t     re;
          size_t      rb;
          PetscCall(SgLoaderGetFieldInfo(l, f, &name, &dt, &re));
          rb = (size_t)re * SgDTypeSize(dt);
          PetscCall(SgDatasetReadField(ds[fi], name, b.ids[i] - foff[fi], 1, dt, row));
          PetscCheck(!memcmp(row, (const char *)b.data[f] + i * rb, rb), PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld field %s: delivered bytes differ from a plain read of %s", (long long)b.ids[i], name, fnames[fi]);
          checked += (int64_t)rb;
        }
      }
    }
    n += b.nlocal;
  }
  PetscCall(SgLoaderGetStats(l, &hits, NULL, NULL, NULL, NULL));
  PetscCall(SgLoaderGetPlannedHits(l, &planned, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "SUMMARY samples=%lld hits=%lld planned=%lld nsamples=%lld bytes_checked=%lld\n", (long long)n, (long long)hits, (long long)planned, (long long)N, (long long)checked));
  for (PetscInt i = 0; i < nfiles; i++) {
    PetscCall(SgDatasetClose(&ds[i]));
    PetscCall(PetscFree(fnames[i]));
  }
  PetscCall(PetscFree(foff));
  PetscCall(PetscFree(seen));
  PetscCall(SgLoaderDestroy(&l));
  PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, NULL));
  PetscCall(PetscFinalize());
  return 0;
}
