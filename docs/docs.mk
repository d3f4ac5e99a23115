# docs/: the man pages.  The tools' pages (section 1) are made by
# help2man(1) from each tool's --help and --version, so they never
# disagree with the program; docs/man/NAME.h2m adds sections where a tool
# has one.  The library's, the scenario format's and the overview page
# are written in roff in docs/man/ (srd.3, srd-scenario.5, srd.7).  The
# docs themselves install under $(DATADIR)/doc/srd.

MAN1_TOOLS := srd-perf srd-sim srd-loopback srd-bench srd-plot udp-baseline \
	netsim-bench
MAN_SRCS := $(wildcard docs/man/*.[357])
MAN_DIR := $(OUT)/man

man_desc_srd-perf := measure SRD over UDP, kernel TCP and raw UDP between hosts
man_desc_srd-sim := run SRD and TCP side by side in a simulated datacenter fabric
man_desc_srd-loopback := two SRD endpoints over an impaired in-memory wire, checked
man_desc_srd-bench := benchmark the packet path of the SRD engine
man_desc_udp-baseline := raw UDP reference figures for srd-perf
man_desc_netsim-bench := benchmark the simulator core
man_desc_srd-plot := draw srd-sim results and size sweeps with gnuplot

ifeq ($(HAVE_HELP2MAN),1)
MAN1_PAGES := $(MAN1_TOOLS:%=$(MAN_DIR)/%.1)
endif

$(MAN_DIR)/%.1: $(BIN)/% $(wildcard docs/man/*.h2m)
	$(call say,MAN,$@)
	@mkdir -p $(@D)
	$(Q)help2man --no-info --version-string=$(VERSION) \
		--name='$(man_desc_$*)' \
		$(if $(wildcard docs/man/$*.h2m),--include=docs/man/$*.h2m) \
		--output=$@ $<

man: $(MAN1_PAGES)
INSTALL_MAN += $(MAN1_PAGES) $(MAN_SRCS)
INSTALL_DOC += README.md $(wildcard docs/*.md)

# srd-coll's page (tools/srd-coll).
man_desc_srd-coll := run shuffle, incast and permutation across many ranks over SRD, TCP or libfabric
ifeq ($(HAVE_HELP2MAN),1)
man: $(MAN_DIR)/srd-coll.1
INSTALL_MAN += $(MAN_DIR)/srd-coll.1
endif
