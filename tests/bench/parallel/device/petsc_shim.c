/* petsc_shim.c -- the eleven PETSc calls build/tests/test_bench_grid makes and the seven PETSc
   variables its code reads (`readelf -r` lists both: JUMP_SLOT and COPY relocations), for
   running that benchmark on a machine without PETSc (e.g. a 16-core GPU box with neither PETSc nor
   MPI; bundle.sh brings Debian's Open MPI along). Built as a shared library with the
   SONAME of Debian's PETSc, it stands in for libpetsc_real.so.3.18 and its ~100 dependencies
   (140 MB, against 21 MB for the bundle with the shim). Only what the benchmark needs: the options it reads (-steps, -chunks,
   -trace: "-name value" on the command line), printing on rank 0, malloc/free, and an error line.
   Never linked into surge or its tests. */
#include <petscsys.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int shim_argc;
static char **shim_argv;

/* read by PETSc's macros: the communicator, PetscFree's hook, and the message counters that its MPI
   wrappers (petsclog.h) increment */
MPI_Comm PETSC_COMM_WORLD = MPI_COMM_NULL;
PetscLogDouble petsc_send_ct, petsc_recv_ct, petsc_send_len, petsc_recv_len, petsc_allreduce_ct;
static PetscErrorCode shim_free(void *p, int line, const char f[], const char file[])
{
  (void)line, (void)f, (void)file;
  free(p);
  return 0;
}
PetscErrorCode (*PetscTrFree)(void *, int, const char[], const char[]) = shim_free;

PetscErrorCode PetscInitialize(int *argc, char ***args, const char file[], const char help[])
{
  (void)file, (void)help;
  int inited;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(argc, args)) return PETSC_ERR_MPI;
  shim_argc = argc ? *argc : 0;
  shim_argv = args ? *args : NULL;
  if (PETSC_COMM_WORLD == MPI_COMM_NULL) PETSC_COMM_WORLD = MPI_COMM_WORLD;
  return 0;
}

PetscErrorCode PetscFinalize(void)
{
  MPI_Finalize();
  return 0;
}

/* the value after "-name" on the command line, or NULL */
static const char *shim_option(const char pre[], const char name[])
{
  char want[256];
  snprintf(want, sizeof want, "-%s%s", pre ? pre : "", name[0] == '-' ? name + 1 : name);
  for (int i = 1; i + 1 < shim_argc; i++)
    if (!strcmp(shim_argv[i], want)) return shim_argv[i + 1];
  return NULL;
}

PetscErrorCode PetscOptionsGetInt(PetscOptions o, const char pre[], const char name[], PetscInt *v, PetscBool *set)
{
  (void)o;
  const char *s = shim_option(pre, name);
  if (set) *set = s ? PETSC_TRUE : PETSC_FALSE;
  if (s) *v = (PetscInt)strtol(s, NULL, 10);
  return 0;
}

PetscErrorCode PetscOptionsGetString(PetscOptions o, const char pre[], const char name[], char str[], size_t len,
                                     PetscBool *set)
{
  (void)o;
  const char *s = shim_option(pre, name);
  if (set) *set = s ? PETSC_TRUE : PETSC_FALSE;
  if (s && len) snprintf(str, len, "%s", s);
  return 0;
}

PetscErrorCode PetscPrintf(MPI_Comm comm, const char fmt[], ...)
{
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank) return 0;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
  return 0;
}

PetscErrorCode PetscSNPrintf(char *s, size_t n, const char fmt[], ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s, n, fmt, ap);
  va_end(ap);
  return 0;
}

PetscErrorCode PetscError(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode n,
                          PetscErrorType p, const char *mess, ...)
{
  (void)comm;
  if (p == PETSC_ERROR_INITIAL && mess) {
    va_list ap;
    va_start(ap, mess);
    fprintf(stderr, "error %d in %s (%s:%d): ", (int)n, func, file, line);
    vfprintf(stderr, mess, ap);
    fprintf(stderr, "\n");
    va_end(ap);
  }
  return n;
}

void PetscMPIErrorString(PetscMPIInt err, char *s)
{
  int len;
  MPI_Error_string(err, s, &len);
}

PetscErrorCode PetscMallocValidate(int line, const char f[], const char file[])
{
  (void)line, (void)f, (void)file;
  return 0;
}

/* PetscMallocA(n, clear, line, func, file, bytes0, ptr0, bytes1, ptr1, ...): each ptr is the address
   of a pointer; every block is its own malloc (PetscFreeA below frees them one by one) */
PetscErrorCode PetscMallocA(int n, PetscBool clear, int line, const char *func, const char *file, size_t bytes,
                            void *ptr, ...)
{
  (void)line, (void)func, (void)file;
  va_list ap;
  va_start(ap, ptr);
  for (int i = 0; i < n; i++) {
    if (i) {
      bytes = va_arg(ap, size_t);
      ptr = va_arg(ap, void *);
    }
    void *b = bytes ? (clear ? calloc(1, bytes) : malloc(bytes)) : NULL;
    if (bytes && !b) {
      va_end(ap);
      return PETSC_ERR_MEM;
    }
    *(void **)ptr = b;
  }
  va_end(ap);
  return 0;
}

PetscErrorCode PetscFreeA(int n, int line, const char *func, const char *file, void *ptr, ...)
{
  (void)line, (void)func, (void)file;
  va_list ap;
  va_start(ap, ptr);
  for (int i = 0; i < n; i++) {
    if (i) ptr = va_arg(ap, void *);
    free(*(void **)ptr);
    *(void **)ptr = NULL;
  }
  va_end(ap);
  return 0;
}
