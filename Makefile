# SRD emulator and simulator: the one build entry point.
#
#   make              library, tools and tests (under build/)
#   make test         run the tests
#   make test-all     what CI runs: dependencies, -Werror build, tests,
#                     the ASan/UBSan build of the tests, a bounded fuzz run,
#                     the purity and format checks
#   make demo         the srd-loopback and srd-sim demonstrations
#   make bench        the engine benchmark (not a pass/fail test)
#   make fuzz         libFuzzer targets (clang) for FUZZ_SECONDS each
#   make fuzz-cover   the corpus reducers (test/fuzz/README.md)
#   make install      PREFIX=/usr/local DESTDIR=
#   make SAN=1 ...    everything with AddressSanitizer and UBSan (build/san)
#   make V=1 ...      show the commands
#   make deps         install the Debian packages the build needs

.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDARY:
SHELL := /bin/bash

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
CC ?= cc
CLANG ?= clang
CLANG_FORMAT ?= clang-format
SAN ?= 0
WERROR ?= 0
V ?= 0
FUZZ_SECONDS ?= 60

VERSION := 0.1.0
SOVERSION := 0

ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

BUILD := build
ifeq ($(SAN),1)
OUT := $(BUILD)/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
else
OUT := $(BUILD)
SANFLAGS :=
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2 -g
CFLAGS_COMMON := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -MMD -MP
LIB_CFLAGS := $(CFLAGS_COMMON) -fvisibility=hidden -Isrd/include
APP_CFLAGS := $(CFLAGS_COMMON) -D_DEFAULT_SOURCE -Isrd/include \
	-Itransports/loop -Itransports/pcap
LDFLAGS_APP := $(SANFLAGS)

CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# ---------------------------------------------------------------------------
# Sources

LIB_SRCS := $(sort $(wildcard srd/*.c))
# The library is one translation unit (srd/unity/srd_unity.c includes
# every module) so that the packet path inlines across modules.
LIB_OBJS := $(OUT)/obj/srd/unity/srd_unity.o
LOOP_SRCS := transports/loop/srd_loop.c
LOOP_OBJS := $(LOOP_SRCS:%.c=$(OUT)/obj/%.o)
# pcap captures (libpcap), for the tools that write them.
PCAP_OBJS := $(OUT)/obj/transports/pcap/srd_pcap.o
PCAP_LIBS := $(shell pkg-config --libs libpcap 2>/dev/null || echo -lpcap)

LIBA := $(OUT)/lib/libsrd.a
LIBSO := $(OUT)/lib/libsrd.so.$(VERSION)

TOOLS := srd-loopback srd-bench
TOOL_BINS := $(TOOLS:%=$(OUT)/bin/%)
EXAMPLES := $(patsubst examples/%.c,%,$(wildcard examples/*.c))
EXAMPLE_BINS := $(EXAMPLES:%=$(OUT)/bin/example-%)

TEST_SRCS := $(sort $(wildcard test/srd/test_*.c))
TEST_BINS := $(TEST_SRCS:test/srd/%.c=$(OUT)/test/%)
TEST_HARNESS := test/harness/testutil.c
TEST_HARNESS_OBJS := $(TEST_HARNESS:%.c=$(OUT)/obj/%.o)

FUZZ_SRCS := $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRCS:test/fuzz/%.c=%)
FUZZ_REPLAY_BINS := $(FUZZ_NAMES:%=$(OUT)/test/replay_%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/%)

.PHONY: all lib tools tests test test-all demo bench fuzz fuzz-build \
	fuzz-cover install uninstall clean deps check-purity format format-check \
	help

all: lib tools tests

lib: $(LIBA) $(LIBSO) $(OUT)/lib/srd.pc
tools: $(TOOL_BINS) $(EXAMPLE_BINS)
tests: $(TEST_BINS) $(FUZZ_REPLAY_BINS)

help:
	@sed -n '2,16p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------------------
# Library

$(OUT)/obj/srd/%.o: srd/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSO): $(LIB_OBJS)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libsrd.so.$(SOVERSION) $(SANFLAGS) \
		-o $@ $^
	$(Q)ln -sf libsrd.so.$(VERSION) $(OUT)/lib/libsrd.so.$(SOVERSION)
	$(Q)ln -sf libsrd.so.$(SOVERSION) $(OUT)/lib/libsrd.so

$(OUT)/lib/srd.pc: srd/srd.pc.in Makefile
	$(call say,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
		$< > $@

# ---------------------------------------------------------------------------
# Tools and the loop wire

$(OUT)/obj/transports/%.o: transports/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(APP_CFLAGS) -c $< -o $@

$(OUT)/obj/tools/%.o: tools/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(APP_CFLAGS) -c $< -o $@

$(OUT)/bin/%: $(OUT)/obj/tools/%.o $(LOOP_OBJS) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ -lm

$(OUT)/bin/srd-loopback: $(OUT)/obj/tools/srd-loopback.o $(LOOP_OBJS) \
		$(PCAP_OBJS) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ -lm $(PCAP_LIBS)

# Examples link only the public API (the shared library's view).
$(OUT)/bin/example-%: examples/%.c $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_COMMON) -Isrd/include $(LDFLAGS_APP) -o $@ $< $(LIBA)

# ---------------------------------------------------------------------------
# Tests

$(OUT)/obj/test/%.o: test/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(APP_CFLAGS) -Isrd -Itest/harness $(CMOCKA_CFLAGS) -c $< -o $@

$(OUT)/test/test_%: $(OUT)/obj/test/srd/test_%.o $(TEST_HARNESS_OBJS) \
		$(LOOP_OBJS) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(CMOCKA_LIBS) -lm

# The fuzz targets, built with gcc and a main() that replays the corpus.
$(OUT)/test/replay_%: $(OUT)/obj/test/fuzz/%.o $(OUT)/obj/test/fuzz/replay.o \
		$(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^

test: all
	$(Q)OUT=$(OUT) SAN=$(SAN) ./test/run-tests.sh

# ---------------------------------------------------------------------------
# netsim: the discrete-event fabric simulator (libnetsim), its unit tests
# and its benchmark (docs/netsim.md).  netsim moves opaque packets and never
# includes srd/ headers, so its objects are compiled without -Isrd/include.
# The tests link the CMocka harness (which uses libsrd for its seed
# helpers' header) like the srd tests do; their binaries are named
# test_netsim_<module> so that run-tests.sh runs them with the others.
# netsim-bench is built, never run, by `make`: run it by hand.

NETSIM_SRCS := $(sort $(wildcard netsim/*.c))
NETSIM_OBJS := $(NETSIM_SRCS:%.c=$(OUT)/obj/%.o)
NETSIM_LIBA := $(OUT)/lib/libnetsim.a
NETSIM_CFLAGS := $(CFLAGS_COMMON) -Inetsim
NETSIM_TEST_SRCS := $(sort $(wildcard test/netsim/test_*.c))
NETSIM_TEST_BINS := $(NETSIM_TEST_SRCS:test/netsim/test_%.c=$(OUT)/test/test_netsim_%)
NETSIM_BENCH := $(OUT)/bin/netsim-bench

.PHONY: netsim
netsim: $(NETSIM_LIBA) $(NETSIM_BENCH) $(NETSIM_TEST_BINS)
lib: $(NETSIM_LIBA)
tools: $(NETSIM_BENCH)
tests: $(NETSIM_TEST_BINS)

$(OUT)/obj/netsim/%.o: netsim/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(NETSIM_CFLAGS) -c $< -o $@

$(NETSIM_LIBA): $(NETSIM_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/obj/test/netsim/%.o: test/netsim/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(APP_CFLAGS) -Inetsim -Isrd -Itest/harness $(CMOCKA_CFLAGS) \
		-c $< -o $@

$(OUT)/test/test_netsim_%: $(OUT)/obj/test/netsim/test_%.o \
		$(TEST_HARNESS_OBJS) $(NETSIM_LIBA) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(CMOCKA_LIBS) -lm

$(OUT)/obj/tools/netsim-bench.o: tools/netsim-bench.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(NETSIM_CFLAGS) -D_DEFAULT_SOURCE -c $< -o $@

$(NETSIM_BENCH): $(OUT)/obj/tools/netsim-bench.o $(NETSIM_LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ -lm

# ---------------------------------------------------------------------------
# transports/ and srd-perf (issue 4; docs/transports.md): the message API
# (transports/xport.h), the srd backend (libsrd over UDP with io_uring,
# transports/uring/, needs liburing through pkg-config: without it the
# backend, srd-perf's -t srd and its tests are left out, and the build says
# so), the kernel TCP backend (transports/tcp/), srd-perf, udp-baseline (the
# raw UDP figures `make bench` compares against), their tests
# (test/transports/test_<x>.c -> test_xport_<x>) and the bench script.
# Objects go under $(OUT)/obj/xport/ so that the loop wire's rule above
# does not apply to them.

HAVE_URING := $(shell pkg-config --exists liburing 2>/dev/null && echo 1)
URING_CFLAGS := $(shell pkg-config --cflags liburing 2>/dev/null)
URING_LIBS := $(shell pkg-config --libs liburing 2>/dev/null)
XPORT_SRCS := transports/xport.c transports/tcp/xport_tcp.c \
	transports/uring/impair.c
XPORT_TEST_NAMES := impair tcp
ifeq ($(HAVE_URING),1)
XPORT_SRCS += transports/uring/xport_uring.c
XPORT_TEST_NAMES += uring
XPORT_DEFS :=
else
XPORT_DEFS := -DXPORT_NO_URING
URING_LIBS :=
$(info transports: liburing not found (make deps installs liburing-dev); \
	building without the srd backend and its tests)
endif
XPORT_OBJS := $(XPORT_SRCS:%.c=$(OUT)/obj/xport/%.o)
XPORT_LIBA := $(OUT)/lib/libxport.a
XPORT_CFLAGS := $(CFLAGS_COMMON) -Isrd/include -Itransports \
	-Itransports/uring $(URING_CFLAGS) $(XPORT_DEFS)
XPORT_TOOLS := $(OUT)/bin/srd-perf $(OUT)/bin/udp-baseline
XPORT_TEST_BINS := $(XPORT_TEST_NAMES:%=$(OUT)/test/test_xport_%)

.PHONY: transports bench-transports install-perf
transports: $(XPORT_LIBA) $(XPORT_TOOLS) $(XPORT_TEST_BINS)
lib: $(XPORT_LIBA)
tools: $(XPORT_TOOLS)
tests: $(XPORT_TEST_BINS)

$(OUT)/obj/xport/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(XPORT_CFLAGS) -c $< -o $@

$(XPORT_LIBA): $(XPORT_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/bin/srd-perf: $(OUT)/obj/xport/tools/srd-perf.o $(XPORT_LIBA) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(URING_LIBS) -lpthread -lm

$(OUT)/bin/udp-baseline: $(OUT)/obj/xport/tools/udp-baseline.o
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ -lpthread -lm

$(OUT)/obj/test/transports/%.o: test/transports/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(XPORT_CFLAGS) -Isrd -Itest/harness $(CMOCKA_CFLAGS) \
		-c $< -o $@

$(OUT)/test/test_xport_%: $(OUT)/obj/test/transports/test_%.o \
		$(TEST_HARNESS_OBJS) $(XPORT_LIBA) $(LIBA)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(CMOCKA_LIBS) $(URING_LIBS) \
		-lpthread -lm

# The side-by-side ratios of issue 4 (srd-perf -t srd against kernel TCP,
# raw UDP and, when installed, libfabric's udp;ofi_rxd); a report, not a
# pass/fail test.  Runs before the engine benchmark.
bench: bench-transports
bench-transports: $(XPORT_TOOLS)
	$(Q)./tools/bench-transports.sh $(OUT)/bin

install: install-perf
install-perf: $(XPORT_TOOLS)
	$(Q)install -d $(DESTDIR)$(BINDIR)
	$(Q)install -m 755 $(OUT)/bin/srd-perf $(DESTDIR)$(BINDIR)/

# ---------------------------------------------------------------------------
# The simulator's transports and srd-sim (issue 3; docs/netsim.md,
# docs/scenarios.md): libsrdsim (transports/sim/: the unmodified SRD engine
# driven in netsim hosts, the TCP model, scenario files, the runner and its
# reports), the srd-sim and srd-plot tools, their tests
# (test/sim/test_<x>.c -> test_sim_<x>; test/tools/test_srd_sim*.sh) and
# the scenario parser's fuzz target.  Scenario files are read with libinih
# (Debian libinih-dev); srd-plot draws with gnuplot (gnuplot-nox).
# Objects go under $(OUT)/obj/sim/ so that no other pattern rule applies.

SIM_SRCS := $(sort $(wildcard transports/sim/*.c))
SIM_OBJS := $(SIM_SRCS:%.c=$(OUT)/obj/sim/%.o)
SIM_LIBA := $(OUT)/lib/libsrdsim.a
INIH_CFLAGS := $(shell pkg-config --cflags inih 2>/dev/null)
INIH_LIBS := $(shell pkg-config --libs inih 2>/dev/null || echo -linih)
SIM_CFLAGS := $(CFLAGS_COMMON) -D_DEFAULT_SOURCE -Isrd/include -Inetsim \
	-Itransports/sim $(INIH_CFLAGS)
SIM_LIBS := $(SIM_LIBA) $(NETSIM_LIBA) $(LIBA)
SIM_LDLIBS := $(INIH_LIBS) -lm
SIM_TEST_SRCS := $(sort $(wildcard test/sim/test_*.c))
SIM_TEST_BINS := $(SIM_TEST_SRCS:test/sim/test_%.c=$(OUT)/test/test_sim_%)
SIM_TOOLS := $(OUT)/bin/srd-sim $(OUT)/bin/srd-plot

.PHONY: sim demo-sim
sim: $(SIM_LIBA) $(SIM_TOOLS) $(SIM_TEST_BINS)
lib: $(SIM_LIBA)
tools: $(SIM_TOOLS)
tests: $(SIM_TEST_BINS)

$(OUT)/obj/sim/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SIM_CFLAGS) -c $< -o $@

$(SIM_LIBA): $(SIM_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/bin/srd-sim: $(OUT)/obj/sim/tools/srd-sim.o $(SIM_LIBS)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(SIM_LDLIBS)

$(OUT)/bin/srd-plot: tools/srd-plot
	$(call say,GEN,$@)
	@mkdir -p $(@D)
	$(Q)install -m 755 $< $@

$(OUT)/obj/test/sim/%.o: test/sim/%.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SIM_CFLAGS) -Isrd -Itest/harness $(CMOCKA_CFLAGS) -c $< -o $@

$(OUT)/test/test_sim_%: $(OUT)/obj/test/sim/test_%.o $(TEST_HARNESS_OBJS) \
		$(SIM_LIBS)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(CMOCKA_LIBS) $(SIM_LDLIBS)

# The scenario parser's fuzz target links the simulator's libraries.
$(OUT)/obj/test/fuzz/fuzz_scenario.o: test/fuzz/fuzz_scenario.c
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SIM_CFLAGS) -c $< -o $@

$(OUT)/test/replay_fuzz_scenario: $(OUT)/obj/test/fuzz/fuzz_scenario.o \
		$(OUT)/obj/test/fuzz/replay.o $(SIM_LIBS)
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $^ $(SIM_LDLIBS)

$(BUILD)/fuzz/fuzz_scenario: test/fuzz/fuzz_scenario.c $(SIM_SRCS) \
		$(NETSIM_SRCS) $(LIB_SRCS) $(wildcard transports/sim/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Inetsim -Itransports/sim $(INIH_CFLAGS) \
		-o $@ $< $(SIM_SRCS) $(NETSIM_SRCS) $(LIB_SRCS) $(SIM_LDLIBS)

$(BUILD)/fuzz/cover_fuzz_scenario: test/fuzz/fuzz_scenario.c \
		test/fuzz/cover.c $(SIM_SRCS) $(NETSIM_SRCS) $(LIB_SRCS) \
		$(wildcard transports/sim/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(COVER_CFLAGS) -Inetsim -Itransports/sim $(INIH_CFLAGS) \
		-o $@ $< test/fuzz/cover.c $(SIM_SRCS) $(NETSIM_SRCS) $(LIB_SRCS) \
		$(SIM_LDLIBS)

# The flagship comparison alone (make demo runs it after the loopback
# demonstrations).
demo-sim: $(SIM_TOOLS)
	$(Q)./tools/demo-sim.sh $(OUT)/bin

# The simulator's speed (issue 3): a report, not a pass/fail test.
bench: bench-sim
.PHONY: bench-sim
bench-sim: $(OUT)/bin/srd-sim
	$(Q)$(OUT)/bin/srd-sim bench

install: install-sim
.PHONY: install-sim
install-sim: $(SIM_TOOLS)
	$(Q)install -d $(DESTDIR)$(BINDIR)
	$(Q)install -m 755 $(SIM_TOOLS) $(DESTDIR)$(BINDIR)/

# ---------------------------------------------------------------------------
# Fuzzing (clang libFuzzer)

FUZZ_CFLAGS := -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -Isrd/include -Isrd -D_DEFAULT_SOURCE

$(BUILD)/fuzz/%: test/fuzz/%.c $(LIB_SRCS) $(wildcard srd/*.h test/fuzz/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRCS)

fuzz-build: $(FUZZ_BINS)

# cover_<target>: the target with test/fuzz/cover.c, which picks a small
# set of inputs covering the edges of a larger one (test/fuzz/README.md).
COVER_CFLAGS := -std=c11 -O1 -g -fsanitize-coverage=inline-8bit-counters \
	-Isrd/include -Isrd -D_DEFAULT_SOURCE
FUZZ_COVER_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/cover_%)

$(BUILD)/fuzz/cover_%: test/fuzz/%.c test/fuzz/cover.c $(LIB_SRCS) \
		$(wildcard srd/*.h test/fuzz/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(COVER_CFLAGS) -o $@ $< test/fuzz/cover.c $(LIB_SRCS)

fuzz-cover: $(FUZZ_COVER_BINS)

fuzz: fuzz-build
	$(Q)for f in $(FUZZ_NAMES); do \
		mkdir -p $(BUILD)/fuzz/corpus-$$f && \
		echo "  FUZZ   $$f for $(FUZZ_SECONDS) s" && \
		dict=$$([ -f test/fuzz/$$f.dict ] && echo -dict=test/fuzz/$$f.dict); \
		$(BUILD)/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 $$dict \
			$(BUILD)/fuzz/corpus-$$f test/fuzz/corpus/$$f \
			> $(BUILD)/fuzz/$$f.log 2>&1 || \
			{ tail -n 60 $(BUILD)/fuzz/$$f.log; exit 1; }; \
		grep -E 'stat::number_of_executed_units|stat::new_units_added' \
			$(BUILD)/fuzz/$$f.log | sed 's/^/         /'; \
	done

# ---------------------------------------------------------------------------
# Benchmarks, demo

bench: $(OUT)/bin/srd-bench
	$(Q)$(OUT)/bin/srd-bench

demo: deps all
	$(Q)./tools/demo.sh $(OUT)/bin

# ---------------------------------------------------------------------------
# Checks

# libsrd may reference only these outside symbols: no clock, socket,
# thread, printf or malloc (shared/style.md 2.1).
PURITY_ALLOW := memcpy memmove memset memcmp abort __assert_fail \
	__stack_chk_fail

check-purity: $(LIBA)
	$(Q)nm -u --format=posix $(LIBA) | awk 'NF >= 2 && $$2 == "U" {print $$1}' \
		| sort -u > $(OUT)/purity.undef; \
	nm --defined-only --format=posix $(LIBA) | awk 'NF >= 2 {print $$1}' \
		| sort -u > $(OUT)/purity.def; \
	bad=$$(comm -23 $(OUT)/purity.undef $(OUT)/purity.def | \
		grep -vxF $(foreach s,$(PURITY_ALLOW),-e $(s)) || true); \
	if [ -n "$$bad" ]; then \
		echo "check-purity: libsrd references symbols outside the allow-list:"; \
		echo "$$bad" | sed 's/^/    /'; exit 1; \
	else echo "  PURE   libsrd links only: $$(comm -23 $(OUT)/purity.undef \
		$(OUT)/purity.def | tr '\n' ' ')"; fi

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)

format-check:
	$(Q)$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRCS) && \
		echo "  FORMAT clang-format clean"

deps:
	$(Q)./tools/install-deps.sh

test-all: deps
	$(Q)$(MAKE) --no-print-directory WERROR=1 all
	$(Q)$(MAKE) --no-print-directory WERROR=1 check-purity format-check
	$(Q)$(MAKE) --no-print-directory WERROR=1 test
	$(Q)$(MAKE) --no-print-directory WERROR=1 SAN=1 test
	$(Q)$(MAKE) --no-print-directory WERROR=1 fuzz FUZZ_SECONDS=$(FUZZ_SECONDS_CI)
	@echo "test-all: everything passed"

FUZZ_SECONDS_CI ?= 30

# ---------------------------------------------------------------------------
# Install

install: lib tools
	$(call say,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR)/srd $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(BINDIR)
	$(Q)install -m 644 srd/include/srd/srd.h $(DESTDIR)$(INCLUDEDIR)/srd/
	$(Q)install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libsrd.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsrd.so.$(SOVERSION)
	$(Q)ln -sf libsrd.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsrd.so
	$(Q)install -m 644 $(OUT)/lib/srd.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	$(Q)install -m 755 $(TOOL_BINS) $(DESTDIR)$(BINDIR)/

uninstall:
	$(Q)rm -f $(DESTDIR)$(INCLUDEDIR)/srd/srd.h $(DESTDIR)$(LIBDIR)/libsrd.* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/srd.pc \
		$(TOOLS:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(BINDIR)/srd-perf \
		$(DESTDIR)$(BINDIR)/srd-sim $(DESTDIR)$(BINDIR)/srd-plot
	$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/srd 2>/dev/null || true

clean:
	$(call say,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
