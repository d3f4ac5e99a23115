# tools/: the programs, and tools/lib/ (libsrdtool), the parts they share.
# A tool is tools/NAME.c, or tools/NAME/*.c when it has several files.
# Every tool is built against the layers it names here and nothing else.

TOOLLIB_SRCS := $(sort $(wildcard tools/lib/*.c))
LIBTOOL_A := $(OUT)/lib/libsrdtool.a
TOOL_INC := -Itools/lib $(PCAP_CFLAGS)

# The lib reports the Makefile's VERSION (tool_opt.c: --version).
$(OUT)/obj/tools/lib/%.o: DIR_CFLAGS = -Isrd/include $(TOOL_INC) \
	-DSRD_VERSION=\"$(VERSION)\"
$(OUT)/obj/tools/lib/tool_opt.o: Makefile
$(OUT)/obj/tools/%.o: DIR_CFLAGS = -Isrd/include $(TOOL_INC) $(WIRE_INC) \
	$(SIM_INC) $(XPORT_INC)

$(LIBTOOL_A): $(TOOLLIB_SRCS:%.c=$(OUT)/obj/%.o)
	$(archive)

tool_objs = $(patsubst %.c,$(OUT)/obj/%.o,$(wildcard tools/$(1).c tools/$(1)/*.c))

BIN := $(OUT)/bin
TOOL_PROGS := srd-loopback srd-bench srd-sim netsim-bench udp-baseline
TOOL_PROGS += srd-perf
TOOL_BINS := $(TOOL_PROGS:%=$(BIN)/%) $(BIN)/srd-plot

$(BIN)/srd-loopback: LINK_LIBS = $(PCAP_LIBS) -lm
$(BIN)/srd-loopback: $(call tool_objs,srd-loopback) $(LIBTOOL_A) $(WIRE_LINK)
	$(link)

$(BIN)/srd-bench: LINK_LIBS = -lm
$(BIN)/srd-bench: $(call tool_objs,srd-bench) $(LIBTOOL_A) $(LIBSRD_A)
	$(link)

$(BIN)/srd-sim: LINK_LIBS = $(SIM_LDLIBS)
$(BIN)/srd-sim: $(call tool_objs,srd-sim) $(SIM_LINK)
	$(link)

$(BIN)/netsim-bench: LINK_LIBS = -lm
$(BIN)/netsim-bench: $(call tool_objs,netsim-bench) $(LIBTOOL_A) \
		$(LIBNETSIM_A) $(LIBIMPAIR_A)
	$(link)

$(BIN)/udp-baseline: LINK_LIBS = -lpthread -lm
$(BIN)/udp-baseline: $(call tool_objs,udp-baseline) $(LIBTOOL_A)
	$(link)

$(BIN)/srd-perf: LINK_LIBS = $(XPORT_LDLIBS) $(PCAP_LIBS)
$(BIN)/srd-perf: $(call tool_objs,srd-perf) $(LIBTOOL_A) $(XPORT_LINK) \
		$(CONFIG_MK)
	$(link)

# srd-plot is a shell script: its --version is the Makefile's VERSION,
# and the build's copy knows where the source tree's gnuplot script is
# (an installed one finds share/srd/gnuplot/srd-plot.gp first).
$(BIN)/srd-plot: tools/srd-plot Makefile
	$(call say,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sed -e 's/^version=.*/version=$(VERSION)/' \
		-e 's|^srcgp=.*|srcgp=$(abspath tools/plot/srd-plot.gp)|' $< > $@.tmp && \
		chmod 755 $@.tmp && mv $@.tmp $@

tools: $(TOOL_BINS)
lib: $(LIBTOOL_A)
INSTALL_BIN += $(TOOL_BINS)
INSTALL_SHARE += wireshark:tools/wireshark/srd.lua gnuplot:tools/plot/srd-plot.gp
INSTALL_SHARE += $(foreach f,$(wildcard scenarios/*.ini),scenarios:$(f))
INSTALL_SHARE += $(foreach f,$(wildcard scenarios/cdf/*),scenarios/cdf:$(f))

# The side-by-side ratios (srd-perf -t udp against kernel TCP, raw UDP
# and, when installed, libfabric's udp;ofi_rxd), the simulator's speed and
# the engine's: reports, not pass/fail tests.
.PHONY: bench-transports bench-veth bench-sim bench-engine demo-sim
bench: bench-transports bench-veth bench-sim bench-engine
bench-transports: $(BIN)/srd-perf $(BIN)/udp-baseline
	$(Q)./tools/bench-transports.sh $(BIN)
# Between two network namespaces over a veth at MTU 1500 and 9001 (root).
bench-veth: $(BIN)/srd-perf
	$(Q)./tools/bench-veth.sh $(BIN)
bench-sim: $(BIN)/srd-sim
	$(Q)$(BIN)/srd-sim bench
bench-engine: $(BIN)/srd-bench
	$(Q)$(BIN)/srd-bench

# The flagship comparison alone (make demo runs it after the loopback
# demonstrations).
demo-sim: $(BIN)/srd-sim $(BIN)/srd-plot
	$(Q)./tools/demo-sim.sh $(BIN)

# srd-coll: multi-rank workloads (shuffle, incast, permutation) over the
# transports, ranks started by mpirun or a host list; MPI (ompi-c) only
# for the bootstrap, and only where tools/configure.sh found it.
tools: $(BIN)/srd-coll
INSTALL_BIN += $(BIN)/srd-coll
$(OUT)/obj/tools/srd-coll/boot_mpi.o: DIR_CFLAGS = -Isrd/include $(TOOL_INC) \
	$(XPORT_INC) $(MPI_CFLAGS)
$(BIN)/srd-coll: LINK_LIBS = $(XPORT_LDLIBS) $(MPI_LIBS)
$(BIN)/srd-coll: $(call tool_objs,srd-coll) $(LIBTOOL_A) $(XPORT_LINK) \
		$(CONFIG_MK)
	$(link)
