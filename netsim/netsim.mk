# netsim/: the simulator, in four layers (docs/architecture.md).
#
#   impair/    the one impairment model (sans-I/O, seeded): libimpair
#   core/      event list, links, queues, switches, topologies, faults,
#              traffic; opaque packets, never srd/: libnetsim
#   wire/      two libsrd endpoints on an impaired in-memory wire in
#              virtual time (srd-loopback's): libsrdwire
#   hosts/     the transports inside netsim hosts (the srd/ engine, the
#              TCP model) and scenario/ (INI files, the runner, reports,
#              sweeps): libsrdsim
#
# Each layer's DIR_CFLAGS names the folders it may include.  scenario/ is
# srd-sim's front end and the one part of netsim/ that uses tools/lib
# (libsrdtool: the value parser, the JSON writer, the percentiles);
# hosts/, in the same library, is compiled without it.

IMPAIR_SRCS := $(sort $(wildcard netsim/impair/*.c))
NETSIM_SRCS := $(sort $(wildcard netsim/core/*.c))
WIRE_SRCS := $(sort $(wildcard netsim/wire/*.c))
SIM_SRCS := $(sort $(wildcard netsim/hosts/*.c netsim/scenario/*.c))
SIM_HDRS := $(wildcard netsim/*/*.h netsim/core/include/netsim/*.h)

LIBIMPAIR_A := $(OUT)/lib/libimpair.a
LIBNETSIM_A := $(OUT)/lib/libnetsim.a
LIBWIRE_A := $(OUT)/lib/libsrdwire.a
LIBSIM_A := $(OUT)/lib/libsrdsim.a

# Include paths per layer (also used by the tests and tools above them).
IMPAIR_INC := -Inetsim/impair
# netsim's API is netsim/core/include/netsim/ (<netsim/netsim.h>); the
# headers beside the sources are the core's own.
NETSIM_INC := -Inetsim/core/include -Inetsim/core $(IMPAIR_INC)
WIRE_INC := -Isrd/include -Inetsim/wire $(IMPAIR_INC)
HOSTS_INC := -Isrd/include $(NETSIM_INC) -Inetsim/hosts
SIM_INC := $(HOSTS_INC) -Inetsim/scenario -Itools/lib $(INIH_CFLAGS) \
	$(PCAP_CFLAGS)

$(OUT)/obj/netsim/impair/%.o: DIR_CFLAGS = $(IMPAIR_INC)
$(OUT)/obj/netsim/core/%.o: DIR_CFLAGS = $(NETSIM_INC)
$(OUT)/obj/netsim/wire/%.o: DIR_CFLAGS = $(WIRE_INC)
$(OUT)/obj/netsim/hosts/%.o: DIR_CFLAGS = $(HOSTS_INC)
$(OUT)/obj/netsim/scenario/%.o: DIR_CFLAGS = $(SIM_INC)

$(LIBIMPAIR_A): $(IMPAIR_SRCS:%.c=$(OUT)/obj/%.o)
	$(archive)
$(LIBNETSIM_A): $(NETSIM_SRCS:%.c=$(OUT)/obj/%.o)
	$(archive)
$(LIBWIRE_A): $(WIRE_SRCS:%.c=$(OUT)/obj/%.o)
	$(archive)
$(LIBSIM_A): $(SIM_SRCS:%.c=$(OUT)/obj/%.o)
	$(archive)

# What a program that runs scenarios links, in order: libsrdtool after
# libsrdsim, whose scenario/ calls it.  A recursive variable: LIBTOOL_A is
# tools/tools.mk's, read after this file.  A program links SIM_LINK
# without naming LIBTOOL_A before it ($^ keeps only the first of a
# repeated prerequisite, which would put libsrdtool before libsrdsim).
SIM_LINK = $(LIBSIM_A) $(LIBTOOL_A) $(LIBNETSIM_A) $(LIBIMPAIR_A) $(LIBSRD_A)
SIM_LDLIBS := $(INIH_LIBS) $(PCAP_LIBS) -lm
WIRE_LINK := $(LIBWIRE_A) $(LIBIMPAIR_A) $(LIBSRD_A)

.PHONY: netsim
netsim: $(LIBIMPAIR_A) $(LIBNETSIM_A) $(LIBWIRE_A) $(LIBSIM_A)
lib: netsim
