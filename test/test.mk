# test/: the CMocka tests per layer, the fuzz targets (replayed over their
# corpus in every test run; fuzzed with clang's libFuzzer by make fuzz),
# the examples, the tool tests (test/tools/*.sh) and the golden outputs
# (test/golden/).  A test binary is named after its folder:
#   test/srd/test_X.c -> test_X          test/netsim/test_X.c -> test_netsim_X
#   test/sim/test_X.c -> test_sim_X      test/transports/test_X.c -> test_xport_X
#   test/lib/test_X.c -> test_lib_X (tools/lib, libsrdtool)

TEST_INC := -Isrd -Isrd/include -Itest/harness $(CMOCKA_CFLAGS)
HARNESS_OBJS := $(OUT)/obj/test/harness/testutil.o
T := $(OUT)/test

$(OUT)/obj/test/%.o: DIR_CFLAGS = $(TEST_INC)
$(OUT)/obj/test/srd/%.o: DIR_CFLAGS = $(TEST_INC) $(WIRE_INC)
$(OUT)/obj/test/netsim/%.o: DIR_CFLAGS = $(TEST_INC) $(NETSIM_INC)
$(OUT)/obj/test/sim/%.o: DIR_CFLAGS = $(TEST_INC) $(SIM_INC)
$(OUT)/obj/test/transports/%.o: DIR_CFLAGS = $(TEST_INC) $(XPORT_INC)
$(OUT)/obj/test/lib/%.o: DIR_CFLAGS = $(TEST_INC) $(TOOL_INC)
$(OUT)/obj/test/fuzz/%.o: DIR_CFLAGS = -Isrd -Isrd/include
$(OUT)/obj/test/fuzz/fuzz_scenario.o: DIR_CFLAGS = $(SIM_INC)
$(OUT)/obj/test/fuzz/fuzz_sweep.o: DIR_CFLAGS = $(SIM_INC)
$(OUT)/obj/examples/%.o: DIR_CFLAGS = -Isrd/include

SRD_TESTS := $(patsubst test/srd/%.c,$(T)/%,$(sort $(wildcard test/srd/test_*.c)))
NETSIM_TESTS := $(patsubst test/netsim/test_%.c,$(T)/test_netsim_%,$(sort $(wildcard test/netsim/test_*.c)))
SIM_TESTS := $(patsubst test/sim/test_%.c,$(T)/test_sim_%,$(sort $(wildcard test/sim/test_*.c)))
LIB_TESTS := $(patsubst test/lib/test_%.c,$(T)/test_lib_%,$(sort $(wildcard test/lib/test_*.c)))
# test_xport_fabric is built without libfabric too: it then exits 77 (skip)
# and says why.
XPORT_TEST_NAMES := tcp fabric stage
ifeq ($(HAVE_URING),1)
XPORT_TEST_NAMES += udp
endif
XPORT_TESTS := $(XPORT_TEST_NAMES:%=$(T)/test_xport_%)
FUZZ_NAMES := $(patsubst test/fuzz/%.c,%,$(sort $(wildcard test/fuzz/fuzz_*.c)))
REPLAY_TESTS := $(FUZZ_NAMES:%=$(T)/replay_%)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BIN)/example-%,$(wildcard examples/*.c))
TEST_BINS := $(SRD_TESTS) $(NETSIM_TESTS) $(SIM_TESTS) $(XPORT_TESTS) \
	$(LIB_TESTS) $(REPLAY_TESTS)

$(T)/test_netsim_%: LINK_LIBS = $(CMOCKA_LIBS) -lm
$(T)/test_netsim_%: $(OUT)/obj/test/netsim/test_%.o $(HARNESS_OBJS) \
		$(LIBNETSIM_A) $(LIBIMPAIR_A) $(LIBSRD_A)
	$(link)

$(T)/test_sim_%: LINK_LIBS = $(CMOCKA_LIBS) $(SIM_LDLIBS)
$(T)/test_sim_%: $(OUT)/obj/test/sim/test_%.o $(HARNESS_OBJS) $(SIM_LINK)
	$(link)

# test_sim_scn fails the scenario layer's allocations in turn: malloc and
# realloc go through its __wrap_ functions (only the calls linked in).
$(T)/test_sim_scn: LINK_LIBS = $(CMOCKA_LIBS) $(SIM_LDLIBS) \
	-Wl,--wrap=malloc -Wl,--wrap=realloc

$(T)/test_xport_%: LINK_LIBS = $(CMOCKA_LIBS) $(XPORT_LDLIBS)
$(T)/test_xport_%: $(OUT)/obj/test/transports/test_%.o $(HARNESS_OBJS) \
		$(XPORT_LINK) $(CONFIG_MK)
	$(link)

$(T)/test_lib_%: LINK_LIBS = $(CMOCKA_LIBS) $(PCAP_LIBS) -lm
$(T)/test_lib_%: $(OUT)/obj/test/lib/test_%.o $(HARNESS_OBJS) $(LIBTOOL_A) \
		$(LIBSRD_A)
	$(link)

$(T)/replay_fuzz_scenario: LINK_LIBS = $(SIM_LDLIBS)
$(T)/replay_fuzz_scenario: $(OUT)/obj/test/fuzz/fuzz_scenario.o \
		$(OUT)/obj/test/fuzz/replay.o $(SIM_LINK)
	$(link)

$(T)/replay_fuzz_sweep: LINK_LIBS = $(SIM_LDLIBS)
$(T)/replay_fuzz_sweep: $(OUT)/obj/test/fuzz/fuzz_sweep.o \
		$(OUT)/obj/test/fuzz/replay.o $(SIM_LINK)
	$(link)

$(T)/replay_%: $(OUT)/obj/test/fuzz/%.o $(OUT)/obj/test/fuzz/replay.o \
		$(LIBSRD_A)
	$(link)

$(T)/test_%: LINK_LIBS = $(CMOCKA_LIBS) -lm
$(T)/test_%: $(OUT)/obj/test/srd/test_%.o $(HARNESS_OBJS) $(WIRE_LINK)
	$(link)

# Examples link only the public API (the installed library's view).
$(BIN)/example-%: $(OUT)/obj/examples/%.o $(LIBSRD_A)
	$(link)

tests: $(TEST_BINS) $(EXAMPLE_BINS)

# run-tests.sh runs exactly what this configuration built (a test left
# over from another configuration is not run).
test: all
	$(Q)OUT=$(OUT) SAN=$(SAN) TESTS="$(TEST_BINS) $(EXAMPLE_BINS)" \
		./test/run-tests.sh

# ---------------------------------------------------------------------------
# Fuzzing (clang libFuzzer): each target built from the sources it fuzzes.

FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/%)
FUZZ_CFLAGS := -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -Isrd/include -Isrd -D_DEFAULT_SOURCE
COVER_CFLAGS := -std=c11 -O1 -g -fsanitize-coverage=inline-8bit-counters \
	-Isrd/include -Isrd -D_DEFAULT_SOURCE
# The scenario layer's part of libsrdtool: the value parser, the JSON
# writer, the percentiles, the sweeps' statistics, the clock and the pcap
# writer (srd-sim
# --pcap; SIM_LDLIBS links libpcap), not tool_opt.c, which is for
# programs' main().
FUZZ_TOOL_SRCS := tools/lib/tool_parse.c tools/lib/tool_json.c \
	tools/lib/tool_hist.c tools/lib/tool_clock.c tools/lib/srd_pcap.c \
	tools/lib/tool_stats.c
FUZZ_SIM_SRCS := $(SIM_SRCS) $(FUZZ_TOOL_SRCS) $(NETSIM_SRCS) $(IMPAIR_SRCS) \
	$(SRD_SRCS)
FUZZ_SIM_HDRS := $(SIM_HDRS) $(FUZZ_TOOL_SRCS:.c=.h)

$(BUILD)/fuzz/fuzz_scenario: test/fuzz/fuzz_scenario.c $(FUZZ_SIM_SRCS) \
		$(FUZZ_SIM_HDRS) $(SRD_HDRS)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(SIM_INC) -o $@ $< $(FUZZ_SIM_SRCS) \
		$(SIM_LDLIBS)

$(BUILD)/fuzz/cover_fuzz_scenario: test/fuzz/fuzz_scenario.c \
		test/fuzz/cover.c $(FUZZ_SIM_SRCS) $(FUZZ_SIM_HDRS) $(SRD_HDRS)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(COVER_CFLAGS) $(SIM_INC) -o $@ $< test/fuzz/cover.c \
		$(FUZZ_SIM_SRCS) $(SIM_LDLIBS)

$(BUILD)/fuzz/fuzz_sweep: test/fuzz/fuzz_sweep.c $(FUZZ_SIM_SRCS) \
		$(FUZZ_SIM_HDRS) $(SRD_HDRS)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(SIM_INC) -o $@ $< $(FUZZ_SIM_SRCS) \
		$(SIM_LDLIBS)

$(BUILD)/fuzz/cover_fuzz_sweep: test/fuzz/fuzz_sweep.c \
		test/fuzz/cover.c $(FUZZ_SIM_SRCS) $(FUZZ_SIM_HDRS) $(SRD_HDRS)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(COVER_CFLAGS) $(SIM_INC) -o $@ $< test/fuzz/cover.c \
		$(FUZZ_SIM_SRCS) $(SIM_LDLIBS)

$(BUILD)/fuzz/cover_%: test/fuzz/%.c test/fuzz/cover.c $(SRD_SRCS) \
		$(SRD_HDRS) $(wildcard test/fuzz/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(COVER_CFLAGS) -o $@ $< test/fuzz/cover.c $(SRD_SRCS)

$(BUILD)/fuzz/%: test/fuzz/%.c $(SRD_SRCS) $(SRD_HDRS) \
		$(wildcard test/fuzz/*.h)
	$(call say,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(SRD_SRCS)

fuzz-build: $(FUZZ_BINS)
fuzz-cover: $(FUZZ_NAMES:%=$(BUILD)/fuzz/cover_%)

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

# libfakecudart.so: a CUDA runtime with no GPU behind it, with the real
# one's ABI (test/transports/fake_cudart.c), which test_xport_stage and
# test_perf_cuda.sh load through SRD_CUDART where there is no GPU.
FAKE_CUDART := $(T)/libfakecudart.so
$(FAKE_CUDART): $(OUT)/obj/test/transports/fake_cudart.o
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -shared -o $@ $< -lpthread
tests: $(FAKE_CUDART)
