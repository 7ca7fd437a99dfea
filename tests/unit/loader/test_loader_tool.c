/* A loader configured only through options, as a trainer's deck would (section `loader:`):
     test_loader_tool -loader_files A.h5,B.h5 -loader_batch_size 16 -loader_epochs 2 ...
   Runs every batch, checks each epoch delivers every sample once, prints the view and a summary
   line "SUMMARY samples=... hits=... planned=...". Errors (bad files, bad options) exit nonzero
   with the message; loader_errors.py checks those messages. */
#include "sgloader.h"
#include "sgsys.h"

int main(int argc, char **argv)
{
  SgLoader      l;
  SgLoaderBatch b;
  PetscBool     done;
  int64_t       n = 0, N, hits, planned;
  char         *seen = NULL;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(SgLoaderCreate(PETSC_COMM_WORLD, &l));
  PetscCall(SgLoaderSetFromOptions(l));
  PetscCall(SgLoaderSetUp(l));
  PetscCall(SgLoaderView(l, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(SgLoaderGetNumSamples(l, &N));
  PetscCall(PetscCalloc1(N, &seen));
  for (;;) {
    PetscCall(SgLoaderNext(l, &b, &done));
    if (done) break;
    if (b.batch == 0) PetscCall(PetscArrayzero(seen, N));
    for (PetscInt i = 0; i < b.nlocal; i++) {
      PetscCheck(!seen[b.ids[i]], PETSC_COMM_SELF, PETSC_ERR_PLIB, "sample %lld twice in epoch %d", (long long)b.ids[i], (int)b.epoch);
      seen[b.ids[i]] = 1;
    }
    n += b.nlocal;
  }
  PetscCall(SgLoaderGetStats(l, &hits, NULL, NULL, NULL, NULL));
  PetscCall(SgLoaderGetPlannedHits(l, &planned, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "SUMMARY samples=%lld hits=%lld planned=%lld nsamples=%lld\n", (long long)n, (long long)hits, (long long)planned, (long long)N));
  PetscCall(PetscFree(seen));
  PetscCall(SgLoaderDestroy(&l));
  PetscCall(SgOptionsCheckUnused(PETSC_COMM_WORLD, NULL));
  PetscCall(PetscFinalize());
  return 0;
}
