# surrogates/deepmd/kim: the KIM API model driver SURGE_DP__MD and the parameterized model
# SURGE_DP_water (the shipped water model embedded), for LAMMPS `pair_style kim` and every other KIM
# simulator (docs/deepmd.md, "LAMMPS through the KIM API"). Built by `make` when the KIM API's
# development files are there (Debian libkim-api-dev; ./configure --install-deps installs them);
# without them `make` prints a note and the KIM tests are counted as skipped.
#   make kim             build/kim/SURGE_DP__MD/libkim-api-model-driver.so, build/kim/SURGE_DP_water/...
#   make kim-model KIM_MODEL_NAME=NAME KIM_MODEL_FILE=MODEL.h5 [KIM_OUT=DIR]
#                        another parameterized model on the same driver (any file `surge model` accepts)
#   make kim-install     copy the items into the user collection of kim-api-collections-management, or
#                        into $KIM_API_MODEL_DRIVERS_DIR / $KIM_API_PORTABLE_MODELS_DIR when set
#   make install PREFIX=DIR  also copies them into DIR/lib/kim-api/{model-drivers,portable-models}
# The driver holds the surge library (position-independent objects of build-pic/, `make pic-lib`): a
# KIM item is loaded by dlopen into the simulator and must not need surge at run time.
KIM_CFLAGS := $(shell pkg-config --cflags libkim-api 2>/dev/null)
KIM_LIBS   := $(shell pkg-config --libs libkim-api 2>/dev/null)
KIM_BUILD  := $(BUILD)/kim
KIM_SRC    := surrogates/deepmd/kim
KIM_DRIVER := $(KIM_BUILD)/SURGE_DP__MD/libkim-api-model-driver.so
KIM_WATER  := $(KIM_BUILD)/SURGE_DP_water/libkim-api-portable-model.so
CXX        ?= g++
.PHONY: kim kim-model kim-install

ifneq ($(KIM_LIBS),)
# only with the normal build: under make check-sanitize (BUILD=build-san, CC with ASan) the pic-lib step
# would compile sanitized objects into build-pic/, which make install and this driver share (the KIM
# test is skipped there)
ifeq ($(BUILD),build)
all tests: kim
endif
kim: $(KIM_DRIVER) $(KIM_WATER)

$(KIM_BUILD)/driver.o: $(KIM_SRC)/driver.c surrogates/deepmd/include/sgdeepmd.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC $(call SURR_INC,surrogates/deepmd/x) $(KIM_CFLAGS) -c $< -o $@
$(KIM_BUILD)/schema_driver.o: $(KIM_SRC)/schema.cpp
	@mkdir -p $(@D)
	$(CXX) -O2 -fPIC $(KIM_CFLAGS) -DSG_KIM_DRIVER=1 -DSG_KIM_ITEM=SURGE_DP__MD -c $< -o $@
# relinked after pic-lib (a phony step that rebuilds only what changed) so the driver follows the library
$(KIM_DRIVER): $(KIM_BUILD)/driver.o $(KIM_BUILD)/schema_driver.o $(NN_ARCHIVE) pic-lib
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(KIM_BUILD)/driver.o $(KIM_BUILD)/schema_driver.o $(PIC)/libsurge.a $(LDLIBS) $(KIM_LIBS) -lstdc++ -Wl,--no-undefined
$(KIM_WATER): $(KIM_SRC)/schema.cpp inputs/deepmd/models/water.h5 $(BIN)/surge
	$(MAKE) --no-print-directory kim-model KIM_MODEL_NAME=SURGE_DP_water KIM_MODEL_FILE=inputs/deepmd/models/water.h5

KIM_OUT ?= $(KIM_BUILD)
kim-model:
	@test -n "$(KIM_MODEL_NAME)" -a -s "$(KIM_MODEL_FILE)" || { echo "surge: error: make kim-model needs KIM_MODEL_NAME=NAME and KIM_MODEL_FILE=MODEL.h5 (an existing surge model file)"; exit 1; }
	@$(BIN)/surge model info $(KIM_MODEL_FILE) > /dev/null || { echo "surge: error: $(KIM_MODEL_FILE) is not a model surge can evaluate (surge model info says why)"; exit 1; }
	@mkdir -p $(KIM_OUT)/$(KIM_MODEL_NAME)
	$(CXX) -O2 -fPIC -shared $(KIM_CFLAGS) -DSG_KIM_DRIVER=0 -DSG_KIM_ITEM=$(KIM_MODEL_NAME) \
	  -DSG_KIM_PARAM=$(abspath $(KIM_MODEL_FILE)) -DSG_KIM_PARAM_BASE=$(notdir $(KIM_MODEL_FILE)) \
	  $(KIM_SRC)/schema.cpp -o $(KIM_OUT)/$(KIM_MODEL_NAME)/libkim-api-portable-model.so $(KIM_LIBS)

# the user collection's folders, as kim-api-collections-management reports them
KIM_USER_DIR = $(shell kim-api-collections-management list 2>/dev/null | awk '/^User Collection/{u=1} u && /^$(1):/{gsub(/\x27/,"",$$3); print $$3; exit}')
# shell: copy every built item (build/kim/NAME/lib*.so) into the collection folders $(1) (model
# drivers) and $(2) (portable models), each under a temporary name then renamed
KIM_COPY = for kf in $(KIM_BUILD)/*/lib*.so; do \
	  case $$kf in *model-driver.so) t=$(1) ;; *) t=$(2) ;; esac; \
	  n=$$(basename $$(dirname $$kf)); install -d $$t/$$n; install -m 755 $$kf $$t/$$n/.$$(basename $$kf).tmp; mv -f $$t/$$n/.$$(basename $$kf).tmp $$t/$$n/$$(basename $$kf); \
	  echo "kim-install: $$n -> $$t/$$n"; done
kim-install: kim
	@md="$${KIM_API_MODEL_DRIVERS_DIR:-$(call KIM_USER_DIR,Model Drivers)}"; pm="$${KIM_API_PORTABLE_MODELS_DIR:-$(call KIM_USER_DIR,Portable Models)}"; \
	test -n "$$md" -a -n "$$pm" || { echo "surge: error: cannot find the KIM user collection (kim-api-collections-management list); set KIM_API_MODEL_DRIVERS_DIR and KIM_API_PORTABLE_MODELS_DIR"; exit 1; }; \
	set -e; $(call KIM_COPY,$$md,$$pm)
# make install PREFIX=DIR puts the built items into DIR/lib/kim-api/model-drivers and
# DIR/lib/kim-api/portable-models: a KIM "environment collection" once KIM_API_MODEL_DRIVERS_DIR and
# KIM_API_PORTABLE_MODELS_DIR name those folders (docs/deepmd.md); nothing outside DIR is touched
install: kim
KIM_PREFIX_INSTALL = $(call KIM_COPY,$(1)/lib/kim-api/model-drivers,$(1)/lib/kim-api/portable-models)
else
kim kim-model kim-install:
	@echo "note: the KIM API (libkim-api-dev) was not found: the KIM model for LAMMPS (surrogates/deepmd/kim) is not built; ./configure --install-deps installs it"
KIM_PREFIX_INSTALL = echo "note: the KIM API (libkim-api-dev) was not found: no KIM model for LAMMPS installed"
endif
