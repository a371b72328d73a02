# tpu-pod-sim: every entry point. `make help` lists the targets.
#
# Conventions (docs/architecture.md, "Build"):
#   - a Verilated top T is rtl/T.sv with its shim csim/vmodel/T_shim.cpp (exports T_new());
#   - C sources in csim/<layer>/ and fw/ form build/libtpusim.a; csim/cli/tpusim.c is the CLI's main;
#   - tests/test_*.c are Criterion suites, one binary each, named by their subject (docs/testing.md);
#     the suites in ONCE_SUITES run once, every other once per reset seed in SEEDS, and those in
#     MODEL_SUITES again under each model of MODELS.
# Everything generated lands under build/ (traces under waves/), none of it committed.

SHELL      := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
# Build in parallel on every core (models verilate and compile independently).
MAKEFLAGS  += --jobs=$(shell nproc) --output-sync=target
# Keep intermediate objects so relinks do not recompile.
.SECONDARY:

BUILD      := build
ABS_BUILD  := $(abspath $(BUILD))
SEEDS      ?= 1 2 3

# Debian 12 packages the project needs (`make deps`).
DEB_PACKAGES := verilator g++ gcc make zlib1g-dev pkg-config libcriterion-dev libsystemc-dev \
                gtkwave python3-numpy python3-matplotlib ccache xvfb imagemagick iverilog valgrind \
                clang libclang-rt-14-dev python3-sklearn openmpi-bin libopenmpi-dev libjansson-dev \
                python3-torch python3-torchvision python3-onnx protobuf-c-compiler libprotobuf-c-dev

CC         := gcc
CXX        := g++
VERILATOR  := verilator
PY         := /usr/bin/python3
# ccache makes model rebuilds cheap when it is there; everything works without it. Looked up
# when a recipe runs (not when the Makefile is read), so `make deps sim` uses the ccache that
# deps has just installed.
CCACHE      = $(shell command -v ccache 2>/dev/null)

# Includes name their layer: "chip/chip.h" (csim/<layer>/), "fw/hal.h" (the project root).
CFLAGS     := -std=c11 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -Icsim -I. -I$(BUILD)/gen -MMD -MP
VLT_ROOT   := /usr/share/verilator/include
VLT_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -faligned-new -fcf-protection=none \
                -Wno-unused-parameter -Wno-sign-compare -Wno-unused-variable -Wno-shadow \
                -I$(VLT_ROOT) -I$(VLT_ROOT)/vltstd -Icsim \
                -DVM_COVERAGE=0 -DVM_SC=0 -DVM_TRACE=1 -DVM_TRACE_FST=1 -DVM_TRACE_VCD=0
SHIM_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -isystem $(VLT_ROOT) -isystem $(VLT_ROOT)/vltstd -Icsim -I. \
                 -DVM_TRACE=1 -DVM_TRACE_FST=1
# --assert: the RTL's assertions (docs/architecture.md, "Assertions") run in every model.
VFLAGS     := --cc --trace-fst --x-assign unique --x-initial unique -O3 --timescale 1ns/1ns \
              -Wall --assert -y rtl
# Open MPI (csim/util/dist.c, mpirun -np R build/tpusim ...): looked up when used, so that
# `make deps` can install it first.
MPI_CFLAGS  = $(shell pkg-config --cflags ompi-c 2>/dev/null)
LDLIBS      = -lz -ljansson -lpthread -latomic -lm $(shell pkg-config --libs ompi-c 2>/dev/null)

# ---------------------------------------------------------------- sources
# The chip's command format lives in one table, fw/isa.def; its RTL package is generated from it.
ISA_PKG    := $(BUILD)/gen/chip_isa_pkg.sv
# The layouts of the chip's HBM port, counters and observation words live in rtl/chip_obs.def;
# their RTL package is generated from it (the C side includes the table).
OBS_PKG    := $(BUILD)/gen/chip_obs_pkg.sv
GEN_PKGS   := $(ISA_PKG) $(OBS_PKG)
RTL_PKGS   := $(GEN_PKGS) $(sort $(wildcard rtl/*_pkg.sv))
RTL_ALL    := $(GEN_PKGS) $(sort $(wildcard rtl/*.sv))
RTL_MODULES := $(filter-out $(RTL_PKGS),$(RTL_ALL))
# Parameterised tops are verilated once per size; the others once.
MXU_SIZES  ?= 4x4 8x8 16x16 32x32 4x8 8x4 128x128
MXU_ACC_DEPTH = $(if $(filter 128x128,$(1)),8192,4096)
NOC_VCS    ?= 2 4
# Router loops stay loops: compact code runs faster than the unrolled form here.
NOC_VFLAGS ?= --unroll-count 1
NOC_OPT_FAST ?= -O2
# A chip size is RxC (one core with one MXU), RxCxM (M MXUs per core), RxC[xM]cK (K cores).
CHIP_SIZES ?= 4x4 16x16 128x128 4x4x2 4x4x2c2
VARIANT_TOPS := mxu_top noc_router chip_top
SHIMS      := $(filter-out $(patsubst %,csim/vmodel/%_shim.cpp,$(VARIANT_TOPS)),$(sort $(wildcard csim/vmodel/*_shim.cpp)))
TOPS       := $(patsubst csim/vmodel/%_shim.cpp,%,$(SHIMS))
MXU_MODELS := $(foreach s,$(MXU_SIZES),mxu_top_$(s))
NOC_MODELS := $(foreach v,$(NOC_VCS),noc_router_v$(v))
CHIP_MODELS := $(foreach s,$(CHIP_SIZES),chip_top_$(s))
LIB_C      := $(filter-out csim/cli/tpusim.c,$(sort $(wildcard csim/*/*.c fw/*.c)))
LIB_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_C)) \
              $(patsubst %.cpp,$(BUILD)/obj/%.o,$(SHIMS)) $(BUILD)/obj/csim/vmodel/vmodel.o \
              $(foreach m,$(MXU_MODELS) $(NOC_MODELS) $(CHIP_MODELS),$(BUILD)/obj/csim/vmodel/$(m)_shim.o)
MODEL_LIBS := $(foreach t,$(TOPS) $(MXU_MODELS) $(NOC_MODELS) $(CHIP_MODELS),$(BUILD)/vlt/$(t)/V$(t)__ALL.a)
VLT_RT     := $(BUILD)/vlt/runtime/libverilated.a
TEST_SRCS  := $(sort $(wildcard tests/test_*.c))
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TPUSIM     := $(BUILD)/tpusim
TPUSIM_SC  := $(BUILD)/tpusim_sc
VMODEL_HDRS := csim/vmodel/vmodel_impl.hpp csim/vmodel/vmodel.h
# The sanitizer and fuzzer builds (rules below): the C sources again, with other flags.
LIB_CXX_OBJS := $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_C)),$(LIB_OBJS))
SAN        := $(BUILD)/san
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_TESTS  := $(patsubst tests/%.c,$(SAN)/tests/%,$(TEST_SRCS))
FUZZ       := $(BUILD)/fuzz
FUZZ_CC    := clang
FUZZ_CXX   := clang++
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZERS    := npy cli cmdprog digits
FUZZ_BINS  := $(patsubst %,$(FUZZ)/fuzz_%,$(FUZZERS))
REPLAY_BINS := $(patsubst %,$(BUILD)/tests/replay_%,$(FUZZERS))
SAN_REPLAY_BINS := $(patsubst %,$(SAN)/tests/replay_%,$(FUZZERS))

# ---------------------------------------------------------------- tool checks
# `make deps sim` (or `make deps test`): deps must finish before anything that needs a tool
# starts, and Make runs goals in parallel (--jobs above). Everything that needs a tool waits
# for deps when deps is one of the goals; without deps a missing tool gets the message below.
AFTER_DEPS := $(filter deps,$(MAKECMDGOALS))
check-build-tools check-test-tools check-fuzz-tools lint view test check-waves check-layers check-functions memcheck screenshot: | $(AFTER_DEPS)

# $(call need,TOOL): fail with a clear message when TOOL is missing.
need = @command -v $(1) >/dev/null 2>&1 || { echo "error: '$(1)' is not installed; run 'make deps' to install it" >&2; exit 127; }
need_pkg = @pkg-config --exists $(1) 2>/dev/null || { echo "error: the '$(1)' library (Debian package $(2)) is not installed; run 'make deps' to install it" >&2; exit 127; }

.PHONY: check-layers check-functions check-waves memcheck help deps sim test lint bench waves view screenshot clean check-build-tools check-test-tools \
        sanitize fuzz soak check-fuzz-tools

help: ## List the targets
	@echo "tpu-pod-sim: a cycle-accurate TPU pod model (SystemVerilog + Verilator + C firmware)"
	@echo
	@echo "Quick start:  make deps sim   then   make test"
	@echo
	@grep -hE '^[a-z][a-zA-Z_-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{ printf "  %-12s %s\n", $$1, $$2 }'
	@echo
	@echo "Variables: SEEDS=\"$(SEEDS)\" (reset-randomisation seeds for the RTL test runs)"

deps: ## Install every Debian package the project needs (non-interactive; quick when done)
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEB_PACKAGES)) packages are installed"; exit 0; fi; \
	echo "deps: installing:" $$missing; \
	sudo=""; if [ "$$(id -u)" != 0 ]; then command -v sudo >/dev/null || { echo "error: installing packages needs root or sudo" >&2; exit 1; }; sudo=sudo; fi; \
	$$sudo apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing

sim: $(TPUSIM) ## Build and run the default simulation: an MLP trains on the digits on a 4x4 slice (DP along X, MP along Y), checked bit-exact every step
	$(TPUSIM) train --pod 4x4 --dp 4 --mp 4 --mxu 16x16 --batch 128 --steps 60 --lr 0.5 --seed 1 --trace-chip 5 --trace waves/train.fst --trace-steps 3

# Which runs a suite gets is decided here, not by its name (docs/testing.md). The suites that
# run chips: each runs again with the fast model, with the lockstep check, and with the fast
# model on three threads (scripts/run_tests.sh, TPU_MODEL, TPU_THREADS).
MODELS     ?= fast check fast/3
CHIP_SUITES := test_chip test_cmdq test_dma test_vec test_gemm test_chip_mxus test_chip_cores
MODEL_SUITES := $(CHIP_SUITES) test_pod test_rdma test_collective test_line_sum test_train test_randprog test_profile
# The suites that run once, not once per seed: pure C (no RTL, so the seed changes nothing but
# their data) and the long single-seed soak.
ONCE_SUITES := test_arith_golden test_golden_checks test_hbm test_isa test_mxu_fast test_mxu_golden test_npy test_outputs test_vec_fast \
               test_vec_golden test_noc_soak

test: lint check-layers check-functions $(TEST_BINS) $(REPLAY_BINS) $(TPUSIM) $(TPUSIM_SC) $(BUILD)/tests/pod_probe ## Build and run every test (Criterion suites under SEEDS, the chip suites again on the fast model and in lockstep), lint, the layer, wave-session and memory checks, the fuzz corpus, training against numpy
	@MODELS="$(MODELS)" MODEL_SUITES="$(MODEL_SUITES)" ONCE_SUITES="$(ONCE_SUITES)" scripts/run_tests.sh "$(SEEDS)" $(TEST_BINS)
	@scripts/replay_corpus.sh $(BUILD)/tests $(FUZZERS)
	@scripts/check_waves.sh $(BUILD)/wavecheck
	@scripts/memcheck.sh $(TPUSIM) $(BUILD)/tests/test_tpusim_cli
	@scripts/memcheck.sh $(TPUSIM) $(BUILD)/tests/test_train_cli
	@tests/train_numpy_test.sh

sanitize: $(SAN_TESTS) $(SAN_REPLAY_BINS) $(SAN)/tpusim $(TPUSIM_SC) ## Build the C harness, firmware and tests with ASan and UBSan and run every suite (one seed; the chip suites again on the fast model) and the fuzz corpus
	@TPUSIM=$(SAN)/tpusim LSAN_OPTIONS=suppressions=$(abspath scripts/lsan.supp) MODELS=fast \
	  MODEL_SUITES="$(MODEL_SUITES)" ONCE_SUITES="$(ONCE_SUITES)" scripts/run_tests.sh "1" $(SAN_TESTS)
	@scripts/replay_corpus.sh $(SAN)/tests $(FUZZERS)

FUZZ_TIME ?= 60
fuzz: $(FUZZ_BINS) ## Run each libFuzzer harness for FUZZ_TIME seconds (default 60): .npy reader, command lines, command programs
	@scripts/fuzz.sh $(FUZZ) $(FUZZ_TIME) $(FUZZERS)

SOAK_PROGRAMS ?= 100000
soak: $(TPUSIM) $(FUZZ_BINS) ## The long runs: SOAK_PROGRAMS random program sets (default 100,000), LOCKSTEP sets (default 10,000) each in lockstep on four chip and pod shapes, 10^6 fuzzed .npy inputs, a minute of each fuzzer
	@scripts/soak.sh $(TPUSIM) $(FUZZ) $(SOAK_PROGRAMS)

.PHONY: mutants
mutants: $(OBS_PKG) $(BUILD)/tests/test_noc_fast $(patsubst %,$(BUILD)/tests/%,$(CHIP_SUITES)) $(BUILD)/tests/test_pod_threads $(BUILD)/tests/pod_probe $(TPUSIM) ## Plant one-bit and one-cycle errors in each fast model (the router, the chip's units) and in the pod's threads and MPI ranks, and check the lockstep or the comparisons catch each; plant one violation per RTL assertion class and check the assertion fires (not part of 'make test')
	@scripts/mutants.sh $(BUILD) "$(CC) $(CFLAGS)" "$(CXX)" "$(LINK_LIBS) $$(pkg-config --libs criterion) $(LDLIBS)"
	@scripts/mutants_chip.sh $(BUILD) "$(CC) $(CFLAGS)" "$(CXX)" "$(LINK_LIBS) $(LDLIBS)" "$$(pkg-config --libs criterion)" "$(CHIP_SUITES)"
	@scripts/mutants_pod.sh $(BUILD) "$(CC) $(CFLAGS)" "$(CXX)" "$(LINK_LIBS) $(LDLIBS)" "$$(pkg-config --libs criterion)"
	@scripts/mutants_rtl.sh $(BUILD) $(VERILATOR) "$(VFLAGS)" "$(call CHIP_GFLAGS,4x4)" "$(CXX)" "$(LINK_LIBS) $(LDLIBS)"

memcheck: $(TPUSIM) $(BUILD)/tests/test_tpusim_cli ## Run the CLI tests with tpusim under valgrind: no leaks, no memory errors (part of 'make test')
	@scripts/memcheck.sh $(TPUSIM) $(BUILD)/tests/test_tpusim_cli

check-layers: ## Check that every C include names its layer and no layer includes one above it (part of 'make test')
	$(call need,python3)
	@scripts/check_layers.py

check-functions: ## Check that no C or C++ function in csim/ or fw/ is over 120 lines (part of 'make test')
	$(call need,python3)
	@scripts/function_lengths.py --max 120

check-waves: $(TPUSIM) ## Check that every .gtkw session's signals exist in a fresh trace (part of 'make test')
	@scripts/check_waves.sh $(BUILD)/wavecheck

lint: $(GEN_PKGS) ## Verilator -Wall lint of every RTL module; waivers live in rtl/lint.vlt
	$(call need,$(VERILATOR))
	@for f in $(RTL_MODULES); do \
	  m=$$(basename $$f .sv); \
	  $(VERILATOR) --lint-only -Wall -y rtl rtl/lint.vlt $(RTL_PKGS) $$f --top-module $$m || { echo "lint: $$f has warnings" >&2; exit 1; }; \
	done; echo "lint: $(words $(RTL_MODULES)) modules, 0 warnings"

WAVE ?= mxu
waves: $(TPUSIM) ## Run the scenarios with FST traces into waves/ (mxu.fst, arith.fst)
	$(TPUSIM) gemm --level mxu --mxu 4x4 --m 6 --k 9 --n 7 --seed 1 --trace waves/mxu.fst
	$(TPUSIM) dot --n 16 --seed 1 --trace waves/arith.fst
	$(TPUSIM) net --pod 4x4 --rate 0.4 --packet-flits 2 --warmup 20 --cycles 200 --trace waves/router.fst --trace-node 5 >/dev/null
	$(TPUSIM) gemm --mxu 4x4 --m 6 --k 9 --n 7 --seed 1 --trace waves/chip.fst >/dev/null
	@echo "waves: wrote waves/{mxu,arith,router,chip}.fst; 'make view [WAVE=arith|router|chip]' opens one"

view: ## Open a trace from 'make waves' (or 'make sim': WAVE=train) in GTKWave with its session (WAVE=mxu|arith|router|chip|step|train)
	$(call need,gtkwave)
	@test -f waves/$(WAVE).fst || { echo "error: waves/$(WAVE).fst does not exist; run 'make waves' first" >&2; exit 1; }
	scripts/view.sh waves/$(WAVE).fst waves/$(WAVE).gtkw

screenshot: waves ## Render the waveform sessions to docs/img/ (Xvfb)
	$(call need,xvfb-run)
	$(call need,import)
	scripts/screenshot.sh waves/mxu.fst waves/mxu.gtkw docs/img/waves_mxu.png
	scripts/screenshot.sh waves/arith.fst waves/arith.gtkw docs/img/waves_arith.png
	scripts/screenshot.sh waves/router.fst waves/router.gtkw docs/img/waves_router.png
	scripts/screenshot.sh waves/chip.fst waves/chip.gtkw docs/img/waves_chip.png
	$(TPUSIM) step --pod 4x4 --mxu 16x16 --m 128 --k 128 --n 128 --algo torus2d --seed 1 --trace-chip 5 --trace waves/step.fst >/dev/null
	scripts/screenshot.sh waves/step.fst waves/step.gtkw docs/img/waves_step.png
	$(TPUSIM) train --pod 4x4 --dp 4 --mp 4 --mxu 16x16 --batch 128 --steps 3 --seed 1 --trace-chip 5 --trace waves/train.fst >/dev/null
	scripts/screenshot.sh waves/train.fst waves/train.gtkw docs/img/waves_train.png

bench: $(TPUSIM) $(TPUSIM_SC) ## Run the benchmarks (results under build/bench/)
	@mkdir -p $(BUILD)/bench
	scripts/bench.sh $(BUILD)/bench

clean: ## Remove build products and traces
	rm -rf $(BUILD) waves/*.fst

# ---------------------------------------------------------------- build rules
# The RTL package of the command format, generated from fw/isa.def (docs/isa.md).
$(BUILD)/tools/gen_chip_isa_pkg: scripts/gen_chip_isa_pkg.c fw/isa.def | check-build-tools
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -I. $< -o $@
$(ISA_PKG): $(BUILD)/tools/gen_chip_isa_pkg
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@
# The RTL package of the port layouts, generated from rtl/chip_obs.def (docs/architecture.md).
$(BUILD)/tools/gen_chip_obs_pkg: scripts/gen_chip_obs_pkg.c rtl/chip_obs.def | check-build-tools
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -I. $< -o $@
$(OBS_PKG): $(BUILD)/tools/gen_chip_obs_pkg
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@

# The machine presets (csim/pod/machines/*.json) built into the binary (docs/machines.md).
MACHINE_PRESETS := $(sort $(wildcard csim/pod/machines/*.json))
$(BUILD)/gen/machine_presets.h: scripts/gen_machine_presets.py $(MACHINE_PRESETS)
	@mkdir -p $(dir $@)
	$(PY) scripts/gen_machine_presets.py $@ $(MACHINE_PRESETS)
$(BUILD)/obj/csim/pod/machine.o $(BUILD)/san/obj/csim/pod/machine.o $(BUILD)/fuzz/obj/csim/pod/machine.o: $(BUILD)/gen/machine_presets.h

check-build-tools:
	$(call need,$(VERILATOR))
	$(call need,$(CC))
	$(call need,$(CXX))
	$(call need_pkg,zlib,zlib1g-dev)
	$(call need_pkg,jansson,libjansson-dev)
	$(call need_pkg,ompi-c,libopenmpi-dev)
	$(call need_pkg,systemc,libsystemc-dev)

check-test-tools:
	$(call need_pkg,criterion,libcriterion-dev)

check-fuzz-tools:
	$(call need,$(FUZZ_CC))
	@test -n "$$($(FUZZ_CC) -print-file-name=libclang_rt.fuzzer-x86_64.a | grep /)" || { echo "error: libFuzzer (Debian package libclang-rt-14-dev) is not installed; run 'make deps'" >&2; exit 127; }

# One Verilator run and one library per top. All RTL is a prerequisite: a change anywhere
# re-verilates (cheap: seconds), and ccache skips unchanged C++.
define VERILATED_TOP
$(BUILD)/vlt/$(1)/V$(1)__ALL.a: rtl/$(1).sv $(RTL_ALL) rtl/lint.vlt Makefile | check-build-tools
	@mkdir -p $(ABS_BUILD)/vlt/$(1)
	$(VERILATOR) $(VFLAGS) $$(VFLAGS_$(1)) --Mdir $(ABS_BUILD)/vlt/$(1) --prefix V$(1) --top-module $(1) rtl/lint.vlt $(RTL_PKGS) rtl/$(1).sv
	+$(MAKE) -s -C $(BUILD)/vlt/$(1) -f V$(1).mk V$(1)__ALL.a OPT_FAST=-O2 OPT_SLOW=-O1 OBJCACHE=$$(CCACHE) >/dev/null
	@touch $$@  # the sub-make leaves an unchanged archive old: stamp it, or every make redoes it

# A shim includes its model's generated header, so the model comes first.
$(BUILD)/obj/csim/vmodel/$(1)_shim.o: csim/vmodel/$(1)_shim.cpp $(BUILD)/vlt/$(1)/V$(1)__ALL.a $(VMODEL_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CCACHE) $(CXX) $(SHIM_CXXFLAGS) -isystem $(BUILD)/vlt/$(1) -c $$< -o $$@
endef
$(foreach t,$(TOPS),$(eval $(call VERILATED_TOP,$(t))))

# The MXU, one model per size RxC: build/vlt/mxu_top_RxC/, shim object mxu_top_RxC_shim.o.
mxu_r = $(word 1,$(subst x, ,$(1)))
mxu_c = $(word 2,$(subst x, ,$(1)))
chip_rcm = $(word 1,$(subst c, ,$(1)))
chip_k = $(or $(word 2,$(subst c, ,$(1))),1)
chip_m = $(or $(word 3,$(subst x, ,$(call chip_rcm,$(1)))),1)
chip_c = $(word 2,$(subst x, ,$(call chip_rcm,$(1))))
chip_base = $(call mxu_r,$(1))x$(call chip_c,$(1))
define MXU_VARIANT
$(BUILD)/vlt/mxu_top_$(1)/Vmxu_top_$(1)__ALL.a: $(RTL_ALL) rtl/lint.vlt Makefile | check-build-tools
	@mkdir -p $(ABS_BUILD)/vlt/mxu_top_$(1)
	$(VERILATOR) $(VFLAGS) -GRows=$(call mxu_r,$(1)) -GCols=$(call mxu_c,$(1)) -GAccDepth=$(call MXU_ACC_DEPTH,$(1)) \
	  --Mdir $(ABS_BUILD)/vlt/mxu_top_$(1) --prefix Vmxu_top_$(1) --top-module mxu_top rtl/lint.vlt $(RTL_PKGS) rtl/mxu_top.sv
	+$(MAKE) -s -C $(BUILD)/vlt/mxu_top_$(1) -f Vmxu_top_$(1).mk Vmxu_top_$(1)__ALL.a OPT_FAST=-O2 OPT_SLOW=-O1 OBJCACHE=$$(CCACHE) >/dev/null
	@touch $$@  # the sub-make leaves an unchanged archive old: stamp it, or every make redoes it

$(BUILD)/obj/csim/vmodel/mxu_top_$(1)_shim.o: csim/vmodel/mxu_top_shim.cpp $(BUILD)/vlt/mxu_top_$(1)/Vmxu_top_$(1)__ALL.a $(VMODEL_HDRS) csim/vmodel/mxu_top.h
	@mkdir -p $$(dir $$@)
	$$(CCACHE) $(CXX) $(SHIM_CXXFLAGS) -isystem $(BUILD)/vlt/mxu_top_$(1) -DMXU_ROWS=$(call mxu_r,$(1)) -DMXU_COLS=$(call mxu_c,$(1)) \
	  -DMXU_ACC_DEPTH=$(call MXU_ACC_DEPTH,$(1)) -DMXU_CLASS=Vmxu_top_$(1) -DMXU_HEADER='"Vmxu_top_$(1).h"' -DMXU_NEW=mxu_top_new_$(1) -c $$< -o $$@
endef
$(foreach s,$(MXU_SIZES),$(eval $(call MXU_VARIANT,$(s))))

# The router, one model per VC count: build/vlt/noc_router_vV/, shim noc_router_vV_shim.o.
define NOC_VARIANT
$(BUILD)/vlt/noc_router_v$(1)/Vnoc_router_v$(1)__ALL.a: $(RTL_ALL) rtl/lint.vlt Makefile | check-build-tools
	@mkdir -p $(ABS_BUILD)/vlt/noc_router_v$(1)
	$(VERILATOR) $(VFLAGS) $(NOC_VFLAGS) -GNumVcs=$(1) --Mdir $(ABS_BUILD)/vlt/noc_router_v$(1) --prefix Vnoc_router_v$(1) \
	  --top-module noc_router rtl/lint.vlt $(RTL_PKGS) rtl/noc_router.sv
	+$(MAKE) -s -C $(BUILD)/vlt/noc_router_v$(1) -f Vnoc_router_v$(1).mk Vnoc_router_v$(1)__ALL.a OPT_FAST=$(NOC_OPT_FAST) OPT_SLOW=-O1 OBJCACHE=$$(CCACHE) >/dev/null
	@touch $$@  # the sub-make leaves an unchanged archive old: stamp it, or every make redoes it

$(BUILD)/obj/csim/vmodel/noc_router_v$(1)_shim.o: csim/vmodel/noc_router_shim.cpp $(BUILD)/vlt/noc_router_v$(1)/Vnoc_router_v$(1)__ALL.a $(VMODEL_HDRS) csim/vmodel/noc_router.h
	@mkdir -p $$(dir $$@)
	$$(CCACHE) $(CXX) $(SHIM_CXXFLAGS) -isystem $(BUILD)/vlt/noc_router_v$(1) -DNOC_VCS=$(1) -DNOC_CLASS=Vnoc_router_v$(1) \
	  -DNOC_HEADER='"Vnoc_router_v$(1).h"' -DNOC_NEW=noc_router_new_v$(1) -c $$< -o $$@
endef
$(foreach v,$(NOC_VCS),$(eval $(call NOC_VARIANT,$(v))))

$(BUILD)/gen/noc_variants.h: FORCE
	@mkdir -p $(dir $@)
	@{ echo "/* generated by the Makefile from NOC_VCS: NOC_VARIANT(vcs) */"; \
	  $(foreach v,$(NOC_VCS),echo "NOC_VARIANT($(v))";) } > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/csim/vmodel/noc_router.o: $(BUILD)/gen/noc_variants.h

# The chip, one model per MXU size. VMEM: 4 MiB at 4x4 (262144 lines of 16 bytes), 8 MiB at
# 16x16 (131072 of 64), 16 MiB at 128x128 (32768 of 512, TPU v3's size); collectives keep
# their buffers there. 32768 commands per queue.
CHIP_VMEM_LINES = $(if $(filter 128x128,$(call chip_base,$(1))),32768,$(if $(filter 16x16,$(call chip_base,$(1))),131072,262144))
CHIP_QUEUE_DEPTH = 32768
# The chip's parameters for Verilator, per chip size (also scripts/mutants_rtl.sh's).
CHIP_GFLAGS = -GRows=$(call mxu_r,$(1)) -GCols=$(call chip_c,$(1)) -GAccDepth=$(call MXU_ACC_DEPTH,$(call chip_base,$(1))) \
  -GVmemLines=$(call CHIP_VMEM_LINES,$(1)) -GQueueDepth=$(CHIP_QUEUE_DEPTH) -GMxus=$(call chip_m,$(1)) -GCores=$(call chip_k,$(1))
define CHIP_VARIANT
$(BUILD)/vlt/chip_top_$(1)/Vchip_top_$(1)__ALL.a: $(RTL_ALL) rtl/lint.vlt Makefile | check-build-tools
	@mkdir -p $(ABS_BUILD)/vlt/chip_top_$(1)
	$(VERILATOR) $(VFLAGS) $(call CHIP_GFLAGS,$(1)) \
	  --Mdir $(ABS_BUILD)/vlt/chip_top_$(1) --prefix Vchip_top_$(1) --top-module chip_top rtl/lint.vlt $(RTL_PKGS) rtl/chip_top.sv
	+$(MAKE) -s -C $(BUILD)/vlt/chip_top_$(1) -f Vchip_top_$(1).mk Vchip_top_$(1)__ALL.a OPT_FAST=-O2 OPT_SLOW=-O1 OBJCACHE=$$(CCACHE) >/dev/null
	@touch $$@  # the sub-make leaves an unchanged archive old: stamp it, or every make redoes it

$(BUILD)/obj/csim/vmodel/chip_top_$(1)_shim.o: csim/vmodel/chip_top_shim.cpp $(BUILD)/vlt/chip_top_$(1)/Vchip_top_$(1)__ALL.a $(VMODEL_HDRS) csim/vmodel/chip_top.h csim/vmodel/noc_router.h fw/isa.h fw/isa.def rtl/chip_obs.def
	@mkdir -p $$(dir $$@)
	$$(CCACHE) $(CXX) $(SHIM_CXXFLAGS) -isystem $(BUILD)/vlt/chip_top_$(1) -DCHIP_ROWS=$(call mxu_r,$(1)) -DCHIP_COLS=$(call chip_c,$(1)) \
	  -DCHIP_ACC_DEPTH=$(call MXU_ACC_DEPTH,$(call chip_base,$(1))) -DCHIP_VMEM_LINES=$(call CHIP_VMEM_LINES,$(1)) -DCHIP_QUEUE_DEPTH=$(CHIP_QUEUE_DEPTH) \
	  -DCHIP_MXUS=$(call chip_m,$(1)) -DCHIP_CORES=$(call chip_k,$(1)) \
	  -DCHIP_CLASS=Vchip_top_$(1) -DCHIP_HEADER='"Vchip_top_$(1).h"' -DCHIP_NEW=chip_top_new_$(1) -c $$< -o $$@
endef
$(foreach s,$(CHIP_SIZES),$(eval $(call CHIP_VARIANT,$(s))))

$(BUILD)/gen/chip_variants.h: FORCE
	@mkdir -p $(dir $@)
	@{ echo "/* generated by the Makefile from CHIP_SIZES: CHIP_VARIANT(name, rows, cols, acc_depth, vmem_lines, queue_depth, mxus, cores) */"; \
	  $(foreach s,$(CHIP_SIZES),echo "CHIP_VARIANT($(s), $(call mxu_r,$(s)), $(call chip_c,$(s)), $(call MXU_ACC_DEPTH,$(call chip_base,$(s))), $(call CHIP_VMEM_LINES,$(s)), $(CHIP_QUEUE_DEPTH), $(call chip_m,$(s)), $(call chip_k,$(s)))";) } > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/csim/vmodel/chip_top.o: $(BUILD)/gen/chip_variants.h

# The list of MXU sizes built into this binary, for csim/vmodel/mxu_top.c.
# Rewritten only when MXU_SIZES changes, so it stays a cheap prerequisite.
$(BUILD)/gen/mxu_variants.h: FORCE
	@mkdir -p $(dir $@)
	@{ echo "/* generated by the Makefile from MXU_SIZES: MXU_VARIANT(rows, cols, acc_depth) */"; \
	  $(foreach s,$(MXU_SIZES),echo "MXU_VARIANT($(call mxu_r,$(s)), $(call mxu_c,$(s)), $(call MXU_ACC_DEPTH,$(s)))";) } > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:
$(BUILD)/obj/csim/vmodel/mxu_top.o: $(BUILD)/gen/mxu_variants.h

# The Verilator runtime, built once and shared by every model in a binary.
VLT_RT_SRCS := verilated.cpp verilated_fst_c.cpp verilated_threads.cpp
$(VLT_RT): | check-build-tools
	@mkdir -p $(dir $@)
	for s in $(VLT_RT_SRCS); do $(CCACHE) $(CXX) $(VLT_CXXFLAGS) -c $(VLT_ROOT)/$$s -o $(dir $@)$${s%.cpp}.o; done
	ar rcs $@ $(patsubst %.cpp,$(dir $@)%.o,$(VLT_RT_SRCS))

$(BUILD)/obj/%.o: %.c | check-build-tools
	@mkdir -p $(dir $@)
	$(CCACHE) $(CC) $(CFLAGS) -c $< -o $@

# Only dist.c includes mpi.h.
$(BUILD)/obj/csim/util/dist.o $(SAN)/obj/csim/util/dist.o $(FUZZ)/obj/csim/util/dist.o: CFLAGS += $(MPI_CFLAGS)

$(BUILD)/obj/csim/vmodel/vmodel.o: csim/vmodel/vmodel.cpp $(VMODEL_HDRS) | check-build-tools
	@mkdir -p $(dir $@)
	$(CCACHE) $(CXX) $(SHIM_CXXFLAGS) -c $< -o $@

$(BUILD)/libtpusim.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

LINK_LIBS := $(BUILD)/libtpusim.a $(MODEL_LIBS) $(VLT_RT)

$(TPUSIM): $(BUILD)/obj/csim/cli/tpusim.o $(LINK_LIBS)
	$(CXX) -o $@ $< $(LINK_LIBS) $(LDLIBS)

# The fuzz harnesses without libFuzzer: replay the corpus (tests/fuzz/replay_main.c).
$(BUILD)/tests/replay_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay_main.o $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $(filter %.o,$^) $(LINK_LIBS) $(LDLIBS)

# A pod run for the MPI tests that the command line cannot ask for (tests/test_pod_mpi.c).
$(BUILD)/tests/pod_probe: $(BUILD)/obj/tests/pod_probe.o $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $< $(LINK_LIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LINK_LIBS) | check-test-tools
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $< $(LINK_LIBS) $$(pkg-config --libs criterion) $(LDLIBS)

# ---------------------------------------------------------------- reference models (docs/models.md)
# PyTorch (Debian's python3-torch, python3-torchvision, python3-onnx) exports the reference
# models to ONNX with random weights from fixed seeds (scripts/export_models.py, the modules in
# scripts/model_zoo.py); each NAME.onnx is written last, after NAME_input.npy and
# NAME_output.npy, so the .onnx stands for all three.
MODELS_DIR    := $(BUILD)/models
MODEL_SCRIPTS := scripts/export_models.py scripts/model_zoo.py
SMALL_MODELS  := cnn_small transformer_small transformer_small_opset17
BIG_MODELS    := resnet50 bert_base
.PHONY: models models-small check-model-tools
models-small: $(patsubst %,$(MODELS_DIR)/%.onnx,$(SMALL_MODELS)) ## Export the small test models (a CNN, a 2-layer transformer, its opset-17 variant) from PyTorch to build/models
models: models-small $(patsubst %,$(MODELS_DIR)/%.onnx,$(BIG_MODELS)) ## Export every reference model (also ResNet-50 and BERT-base: about 5 minutes and 450 MB) from PyTorch to build/models
$(MODELS_DIR)/%.onnx: $(MODEL_SCRIPTS) | check-model-tools
	$(PY) scripts/export_models.py --out $(MODELS_DIR) --only $*
check-model-tools: | $(AFTER_DEPS)
	@$(PY) -c 'import torch, torchvision, onnx' 2>/dev/null || { echo "error: $(PY) cannot import torch, torchvision and onnx (Debian packages python3-torch python3-torchvision python3-onnx); run 'make deps' to install them" >&2; exit 127; }

# ---------------------------------------------------------------- SystemC (docs/systemc.md)
# csim/sc/: the chip and a slice of chips as SystemC modules with TLM-2.0 sockets (C++17 against
# Debian's libsystemc-dev, pkg-config systemc and tlm), over libtpusim.a; tpusim_sc_main.cpp is
# the example host, build/tpusim_sc. tests/test_systemc.c runs it against tpusim.
SC_SRCS    := $(sort $(wildcard csim/sc/*.cpp))
SC_OBJS    := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(SC_SRCS))
SC_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra -Werror -Icsim -I. -I$(BUILD)/gen -MMD -MP \
              $(shell pkg-config --cflags systemc tlm 2>/dev/null)
$(BUILD)/obj/csim/sc/%.o: csim/sc/%.cpp | check-build-tools
	@mkdir -p $(dir $@)
	$(CCACHE) $(CXX) $(SC_CXXFLAGS) -c $< -o $@
$(TPUSIM_SC): $(SC_OBJS) $(LINK_LIBS)
	$(CXX) -o $@ $(SC_OBJS) $(LINK_LIBS) $$(pkg-config --libs systemc) $(LDLIBS)
$(BUILD)/tests/test_systemc: | $(TPUSIM_SC)

# ---------------------------------------------------------------- sanitizer and fuzzer builds
# The C sources (harness, firmware, tests, command line) built again with other flags into
# their own tree; the C++ objects (Verilated models, their shims, the Verilator runtime) are
# the normal build's, unsanitised. docs/robustness.md.
$(SAN)/obj/%.o: %.c | check-build-tools
	@mkdir -p $(dir $@)
	$(CCACHE) $(CC) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(SAN)/libtpusim.a: $(patsubst %.c,$(SAN)/obj/%.o,$(LIB_C)) $(LIB_CXX_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(SAN)/tpusim: $(SAN)/obj/csim/cli/tpusim.o $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT)
	$(CXX) $(SAN_FLAGS) -o $@ $< $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT) $(LDLIBS)
$(SAN)/tests/replay_%: $(SAN)/obj/tests/fuzz/fuzz_%.o $(SAN)/obj/tests/fuzz/replay_main.o $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT)
	$(CXX) $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT) $(LDLIBS)
$(SAN)/tests/%: $(SAN)/obj/tests/%.o $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT) | check-test-tools
	@mkdir -p $(dir $@)
	$(CXX) $(SAN_FLAGS) -o $@ $< $(SAN)/libtpusim.a $(MODEL_LIBS) $(VLT_RT) $$(pkg-config --libs criterion) $(LDLIBS)

# libFuzzer harnesses (tests/fuzz/fuzz_NAME.c), built with clang: coverage, ASan, UBSan.
$(FUZZ)/obj/%.o: %.c | check-build-tools check-fuzz-tools
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS) $(FUZZ_FLAGS) -c $< -o $@
$(FUZZ)/libtpusim.a: $(patsubst %.c,$(FUZZ)/obj/%.o,$(LIB_C)) $(LIB_CXX_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(FUZZ)/fuzz_%: $(FUZZ)/obj/tests/fuzz/fuzz_%.o $(FUZZ)/libtpusim.a $(MODEL_LIBS) $(VLT_RT)
	$(FUZZ_CXX) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ)/libtpusim.a $(MODEL_LIBS) $(VLT_RT) $(LDLIBS)

-include $(shell find $(BUILD)/obj $(SAN)/obj $(FUZZ)/obj -name '*.d' 2>/dev/null)
