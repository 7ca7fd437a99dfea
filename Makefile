# surge top-level build. Run ./configure first (it writes config.mk).
#
#   make            build/libsurge.a and bin/surge
#   make check      build everything, run every test list (tests/lists/*.list); ends "N passed, N failed, N skipped"
#   make check-docs every command of README.md and docs/*.md from a copy of the clone (shortened; ~2 min)
#   make check-sanitize  the same suite built with ASan + UBSan into build-san/ and bin-san/ (tests/sanitize.sh)
#   make demo       run the README demo deck (Landau damping)
#   make bench      run the benchmarks in tests/bench (figures, not pass/fail)
#   make kernels    regenerate generated code (DG kernels); needs python3 + sympy
#
# Every .c file under src/ io/ physics/ surrogates/ goes into libsurge (surrogates/nn has its own
# Makefile so it builds without PETSc/HDF5/MPI). Every tests/**/test_*.c is a program of its own.
# A folder may add a module.mk with extra rules; it is included below.

ifeq ($(wildcard config.mk),)
$(error config.mk is missing: run ./configure (or ./configure --install-deps) first)
endif
include config.mk

BUILD   := build
BIN     := bin
NN_DIR  := surrogates/nn
CFLAGS  ?= $(OPTFLAGS) -std=gnu11 -Wall -Wno-unused-function -fno-math-errno -pthread
# libyaml reads the decks (src/base/deck.c); a config.mk written before it was probed lacks the line
YAML_LIBS ?= -lyaml
# Jansson reads and writes JSON (src/base/tree.c: DeePMD-kit .dp model dictionaries)
JSON_LIBS ?= -ljansson
# SLEPc (the POD of surrogates/podlstm); a config.mk written before it was probed lacks the lines
SLEPC_CFLAGS ?= $(shell pkg-config --cflags SLEPc 2>/dev/null)
SLEPC_LIBS   ?= $(shell pkg-config --libs-only-L SLEPc 2>/dev/null) -lslepc_real
LDLIBS  := $(SLEPC_LIBS) $(PETSC_LIBS) $(HDF5_LIBS) $(FFTW_LIBS) $(BLAS_LIBS) $(YAML_LIBS) $(JSON_LIBS) -lm -pthread

MAIN_SRC := src/cli/main.c
LIB_SRCS := $(filter-out $(MAIN_SRC),$(shell find src io physics surrogates -name '*.c' \
              -not -path '$(NN_DIR)/*' -not -path '*/kim/*' -not -path '*/gen/*' -not -path '*/build/*' -not -path '*/tests/*' | sort))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(shell find tests -name 'test_*.c' | sort)
TEST_BINS := $(foreach t,$(TEST_SRCS),$(BUILD)/tests/$(notdir $(t:.c=)))
LIBSURGE := $(BUILD)/libsurge.a

# The NN engine is a separate, dependency-free library (its own Makefile); surge links it. Its CUDA
# backend is a plugin, libsgnn_cuda.so, built where configure found nvcc and cuBLAS (config.mk's NVCC;
# ./configure --with-cuda=no or `make NVCC=` leave it out) and opened only when -nn_backend cuda asks
# for it (surrogates/nn/backend_cudaload.c says why it is not linked in). The programs find it through
# their RUNPATH: next to an installed surge ($ORIGIN/../lib) or in the build tree.
NN_ARCHIVE := $(NN_DIR)/$(BUILD)/libsgnn.a
NN_PLUGIN  := $(if $(NVCC),plugin)
LDLIBS     := $(NN_ARCHIVE) $(LDLIBS) -ldl
BIN_RPATH   = -Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../$(NN_DIR)/$(BUILD)/cuda'
TEST_RPATH  = -Wl,-rpath,'$$ORIGIN/../../$(NN_DIR)/$(BUILD)/cuda'

# Include paths by layer (docs/architecture.md): src/base <- io <- physics/*, surrogates/* <- src/driver
# <- src/cli. A file is compiled with the public headers of its own module and of the layers below it
# only, so a forbidden #include does not compile; <hdf5.h> is on the path of io/ alone. The NN engine
# (surrogates/nn, no dependencies) is a library io/nn and the surrogates use. tests/unit/core/
# layering.py checks every include by the file it resolves to ("../" ones too); the build runs it
# ($(BUILD)/layering.ok below) and make check runs it again.
BASE_INC   := -Isrc/base/include $(PETSC_CFLAGS) $(YAML_CFLAGS) $(JSON_CFLAGS)
IO_PUB_INC := -Iio/include $(patsubst %,-I%,$(wildcard io/*/include))
NN_INC     := -I$(NN_DIR)
IO_INC     := $(BASE_INC) $(IO_PUB_INC) $(NN_INC) $(HDF5_CFLAGS)
module_inc  = -I$(word 1,$(subst /, ,$1))/$(word 2,$(subst /, ,$1))/include
PHYS_INC    = $(BASE_INC) $(IO_PUB_INC) $(call module_inc,$1) $(FFTW_CFLAGS) $(BLAS_CFLAGS)
SURR_INC    = $(BASE_INC) $(IO_PUB_INC) $(call module_inc,$1) $(NN_INC) -Isurrogates/parallel -Isurrogates/train/include $(BLAS_CFLAGS) $(SLEPC_CFLAGS)
DRIVER_INC := $(BASE_INC) $(IO_PUB_INC) -Isrc/driver/include
CLI_INC    := $(DRIVER_INC) $(patsubst %,-I%,$(wildcard physics/*/include surrogates/*/include)) $(NN_INC) -Isurrogates/parallel
TEST_INC   := $(CLI_INC) $(HDF5_CFLAGS) $(FFTW_CFLAGS) $(BLAS_CFLAGS)
layer_inc   = $(if $(filter src/base/%,$1),$(BASE_INC),$(if $(filter io/%,$1),$(IO_INC),$(if $(filter physics/%,$1),$(call PHYS_INC,$1),$(if $(filter surrogates/%,$1),$(call SURR_INC,$1),$(if $(filter src/driver/%,$1),$(DRIVER_INC),$(CLI_INC))))))

.PHONY: all check check-docs check-sanitize demo bench kernels clean tests nn-lib install pic-lib
all: $(BIN)/surge

-include $(wildcard src/*/module.mk io/*/module.mk physics/*/module.mk surrogates/*/module.mk)

nn-lib:
	$(MAKE) -C $(NN_DIR) NVCC="$(NVCC)" lib $(NN_PLUGIN)
# (an empty recipe, not none: make then looks at the archive's time again after the sub-make, so what
# links it is relinked in the same make when the engine changed)
$(NN_ARCHIVE): nn-lib ;

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(call layer_inc,$<) -MMD -MP -c $< -o $@

# The layering check runs before the library is archived: the -I paths cannot stop a quoted "../x/y.h",
# tests/unit/core/layering.py resolves every include to its file and fails the build on a forbidden one.
LAYER_FILES := $(shell find src io physics surrogates \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) \
                 -not -path '*/build*' -not -path '*/tests/*' -not -path '*/gen/*')
$(BUILD)/layering.ok: tests/unit/core/layering.py $(LAYER_FILES)
	@mkdir -p $(@D)
	@python3 tests/unit/core/layering.py . > $@.log || { cat $@.log; echo "build stopped: forbidden #include (docs/architecture.md, layering)"; exit 1; }
	@touch $@

$(LIBSURGE): $(LIB_OBJS) | $(BUILD)/layering.ok
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $(LIB_OBJS)

$(BIN)/surge: $(BUILD)/src/cli/main.o $(LIBSURGE) $(NN_ARCHIVE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BUILD)/src/cli/main.o $(LIBSURGE) $(LDLIBS) $(BIN_RPATH) -o $@

# A test program may sit anywhere under tests/; its binary is named after its file.
define test_rule
$(BUILD)/tests/$(notdir $(1:.c=)): $(1) $(LIBSURGE) $(NN_ARCHIVE)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(TEST_INC) -MMD -MP $$< $(LIBSURGE) $$(LDLIBS) $$(TEST_RPATH) -o $$@
endef
$(foreach t,$(TEST_SRCS),$(eval $(call test_rule,$(t))))

tests: $(BIN)/surge $(TEST_BINS)
	$(MAKE) -C $(NN_DIR) tests
ifneq ($(NVCC),)
	@echo "nvcc found: compiling the CUDA backend of surrogates/nn (it runs only where a GPU is: make -C $(NN_DIR) check-cuda)"
	$(MAKE) -C $(NN_DIR) cuda
endif

check: tests
	@tests/runner.sh tests/lists/*.list

# Every command in README.md and docs/*.md, run from a copy of the tracked files with the shortenings
# of tests/regression/core/doc_commands_test.py (~2 min on 2 idle cores: not part of make check,
# which checks only that every doc command is classified).
check-docs: tests
	@tests/runner.sh tests/doc_commands.list

# ASan + UBSan: a second build (build-san/, bin-san/, surrogates/nn/build-san/; the normal build is
# untouched) and the whole suite run against it with halt_on_error=1 (tests/sanitize.sh says why
# leak detection is off and which options it sets).
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check-sanitize:
	$(MAKE) BUILD=build-san BIN=bin-san CC="$(CC) $(SAN_FLAGS)" OPTFLAGS="-O1 -g" NVCC= tests
	@tests/sanitize.sh

# The demo deck: linear Landau damping; it ends by printing the fitted rate next to theory.
DEMO_DECK := inputs/vlasov/landau.yaml
demo: bin/surge
	@mkdir -p build/demo
	cd build/demo && ../../bin/surge run ../../$(DEMO_DECK)

bench: tests
	@for b in tests/bench/*/run.sh; do echo "== $$b"; bash $$b || exit 1; done

# make install PREFIX=DIR: bin/surge; libsurge.a and libsgnn.a (the NN engine it uses), with the CUDA
# plugin libsgnn_cuda.so where it is built; libsurge.so
# (the library and the NN engine in one, from position-independent objects built in build-pic/: the
# default objects are PIE and cannot go into a shared library); the public headers in
# include/surge/; lib/pkgconfig/surge.pc; the example decks with their models in share/surge/inputs;
# the man page share/man/man1/surge.1, written from surge's own option tables (src/cli/manpage.sh);
# the KIM model for LAMMPS where it is built, in lib/kim-api/ (surrogates/deepmd/module.mk, docs/deepmd.md).
PREFIX  ?= /usr/local
DESTDIR ?=
PIC     := build-pic
PUB_HDRS = $(wildcard src/base/include/*.h io/include/*.h io/*/include/*.h src/driver/include/*.h \
             physics/*/include/*.h surrogates/*/include/*.h) src/cli/sgcli.h $(NN_DIR)/sgnn.h
# (a phony step, not a rule for $(PIC)/libsurge.a: the sub-make builds that with the ordinary rule)
pic-lib:
	$(MAKE) BUILD=$(PIC) BIN=$(PIC)/bin CFLAGS="$(CFLAGS) -fPIC" $(PIC)/libsurge.a
$(PIC)/libsurge.so: pic-lib $(NN_ARCHIVE)
	$(CC) -shared -Wl,-soname,libsurge.so.0 -o $@ -Wl,--whole-archive $(PIC)/libsurge.a $(NN_ARCHIVE) -Wl,--no-whole-archive $(filter-out $(NN_ARCHIVE),$(LDLIBS)) -Wl,-rpath,'$$ORIGIN'
install: $(BIN)/surge $(LIBSURGE) $(NN_ARCHIVE)
	$(MAKE) $(PIC)/libsurge.so
	@d=$(DESTDIR)$(PREFIX); set -e; \
	install -d $$d/bin $$d/lib/pkgconfig $$d/include/surge $$d/share/surge $$d/share/man/man1; \
	install -m 755 $(BIN)/surge $$d/bin/surge; \
	install -m 644 $(LIBSURGE) $(NN_ARCHIVE) $$d/lib/; \
	install -m 755 $(PIC)/libsurge.so $$d/lib/libsurge.so.0; ln -sf libsurge.so.0 $$d/lib/libsurge.so; \
	$(if $(NVCC),install -m 755 $(NN_DIR)/$(BUILD)/cuda/libsgnn_cuda.so $$d/lib/;) \
	install -m 644 $(PUB_HDRS) $$d/include/surge/; \
	rm -rf $$d/share/surge/inputs; cp -r inputs $$d/share/surge/inputs; \
	src/cli/manpage.sh $(BIN)/surge inputs > $$d/share/man/man1/surge.1; \
	$(call KIM_PREFIX_INSTALL,$$d); \
	{ echo "prefix=$(PREFIX)"; echo 'libdir=$${prefix}/lib'; echo 'includedir=$${prefix}/include/surge'; echo; \
	  echo "Name: surge"; echo "Description: simulation with in-process neural surrogates (PETSc solvers, NN engine)"; \
	  echo "Version: $$($(BIN)/surge --version | awk '{print $$2}')"; \
	  echo 'Cflags: -I$${includedir} $(strip $(PETSC_CFLAGS) $(HDF5_CFLAGS) $(BLAS_CFLAGS) $(YAML_CFLAGS))'; \
	  echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lsurge $(strip $(filter-out $(NN_ARCHIVE),$(LDLIBS)))'; \
	  echo 'Libs.private: -lsgnn'; } > $$d/lib/pkgconfig/surge.pc; \
	echo "installed surge into $$d (bin, lib, include/surge, lib/pkgconfig/surge.pc, share/surge/inputs, share/man/man1/surge.1, lib/kim-api where built)"

clean:
	rm -rf $(BUILD) $(PIC) bin build-san bin-san tests/logs
	$(MAKE) -C $(NN_DIR) clean

-include $(LIB_OBJS:.o=.d) $(BUILD)/src/cli/main.d
# the tests' header dependencies too (tests/lib/*.h, the headers of the layers they test): a changed
# header rebuilds the tests that include it
-include $(addsuffix .d,$(TEST_BINS))
