# SRD emulator and simulator: the one build entry point.
#
#   make              libraries, tools and tests (under build/)
#   make test         run the tests
#   make test-all     what CI runs: dependencies, -Werror build, tests,
#                     the ASan/UBSan build of the tests, a bounded fuzz run,
#                     the purity and format checks
#   make demo         dependencies, then the srd-loopback and srd-sim
#                     demonstrations
#   make bench        the benchmarks (ratios against peers; not pass/fail)
#   make figures      rewrite the figures README.md and docs/ quote from the
#                     commands that print them (tools/figures.py)
#   make fuzz         libFuzzer targets (clang) for FUZZ_SECONDS each
#   make fuzz-cover   the corpus reducers (test/fuzz/README.md)
#   make install      PREFIX=/usr/local DESTDIR=  (docs/architecture.md)
#   make SAN=1 ...    everything with AddressSanitizer and UBSan (build/san)
#   make V=1 ...      show the commands
#   make deps         install the Debian packages the build needs
#   make WITHOUT=liburing   build as if an optional package were missing
#
# Each folder's build is in its own fragment (srd/srd.mk, netsim/netsim.mk,
# transports/transports.mk, tools/tools.mk, test/test.mk, docs/docs.mk);
# this file holds the flags, the one compile rule, the configuration and
# the one install rule.

.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDARY:
SHELL := /bin/bash

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/srd
CC ?= cc
CLANG ?= clang
CLANG_FORMAT ?= clang-format
SAN ?= 0
WERROR ?= 0
V ?= 0
FUZZ_SECONDS ?= 60
FUZZ_SECONDS_CI ?= 30
WITHOUT ?=

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

# ---------------------------------------------------------------------------
# Configuration: what pkg-config finds, recorded in $(OUT)/config.mk and
# $(OUT)/config.h (tools/configure.sh rewrites them only when they change).
# Code that differs by configuration includes config.h, so the dependency
# files rebuild exactly it; archives and links depend on config.mk.  The
# targets that install packages first (demo, test-all) configure in a
# make started after the install, never before it.

NO_CONFIG_GOALS := deps demo test-all clean help format format-check
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
CONFIG_RC := $(shell tools/configure.sh $(OUT) "$(WITHOUT)" >&2; echo $$?)
ifneq ($(CONFIG_RC),0)
$(error tools/configure.sh failed)
endif
include $(OUT)/config.mk
endif
CONFIG_MK := $(OUT)/config.mk

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2 -g
CFLAGS_COMMON := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -MMD -MP
APP_CFLAGS := $(CFLAGS_COMMON) -D_DEFAULT_SOURCE -I$(OUT)
LDFLAGS_APP := $(SANFLAGS)

# The compiler and its flags are part of the configuration too: a change
# (OPT=, WERROR=1, another CC) rewrites this stamp, which every object
# depends on, so that no object keeps flags it was not built with.
FLAGS_STAMP := $(OUT)/flags.stamp
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
FLAGS_NOW := $(CC) $(APP_CFLAGS) $(LDFLAGS_APP)
$(shell mkdir -p $(OUT) && { echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_STAMP) || \
	echo '$(FLAGS_NOW)' > $(FLAGS_STAMP); })
endif

# The one compile rule.  Each fragment sets what its folder may include
# with a pattern-specific DIR_CFLAGS (the more specific pattern wins), so
# that a layer cannot include a layer above it.
$(OUT)/obj/%.o: %.c $(FLAGS_STAMP)
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(APP_CFLAGS) $(DIR_CFLAGS) -c $< -o $@

# archive: the recipe of every static library.
define archive
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)
endef

# link: the recipe of every program; LINK_LIBS is set per target.
define link
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_APP) -o $@ $(filter %.o %.a,$^) $(LINK_LIBS)
endef

.PHONY: all lib tools tests test test-all demo bench fuzz fuzz-build \
	fuzz-cover install uninstall clean deps check-purity format \
	format-check help man figures figures-check

all: lib tools tests man
	@$(if $(MISSING),$(foreach m,$(MISSING),echo "build: without $(m): \
		$(MISSING_WHY_$(m))";) echo "build: make deps installs it; make then rebuilds what it changes",true)

help:
	@sed -n '1,/^$$/p' Makefile | sed -e '/^$$/d' -e 's/^# \{0,1\}//'

include srd/srd.mk
include netsim/netsim.mk
include transports/transports.mk
include tools/tools.mk
include test/test.mk
include docs/docs.mk

ifneq ($(MISSING_REQUIRED),)
$(error missing packages:$(MISSING_REQUIRED); `make deps` installs them)
endif

# ---------------------------------------------------------------------------
# Entry points that install packages first: the build after them is a new
# make, so that it configures with what was just installed.

# make deps CUDA=1 also installs CUDA (srd-perf -m cuda) from Debian's
# non-free component (about 2 GB; CI does).
deps:
	$(Q)./tools/install-deps.sh $(if $(filter 1,$(CUDA)),--cuda)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./tools/demo.sh $(OUT)/bin

test-all: deps
	$(Q)$(MAKE) --no-print-directory WERROR=1 all
	$(Q)$(MAKE) --no-print-directory WERROR=1 check-purity format-check
	$(Q)$(MAKE) --no-print-directory WERROR=1 test
	$(Q)$(MAKE) --no-print-directory WERROR=1 SAN=1 test
	$(Q)$(MAKE) --no-print-directory WERROR=1 fuzz FUZZ_SECONDS=$(FUZZ_SECONDS_CI)
	@echo "test-all: everything passed"

# ---------------------------------------------------------------------------
# Checks

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)

format-check:
	$(Q)$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRCS) && \
		echo "  FORMAT clang-format clean"

# The figures the docs quote: each marked with the command that prints it
# (tools/figures.py); `make figures` rewrites them, figures-check (and
# test/tools/test_figures.sh under make test) fails when one differs.
FIGURE_DOCS = README.md $(sort $(wildcard docs/*.md))

figures: tools
	$(Q)python3 tools/figures.py --update --bin $(OUT)/bin $(FIGURE_DOCS)

figures-check: tools
	$(Q)python3 tools/figures.py --check --bin $(OUT)/bin $(FIGURE_DOCS)

# ---------------------------------------------------------------------------
# Install: the one rule.  Fragments add to INSTALL_BIN (programs),
# INSTALL_LIB (libraries), INSTALL_INC (headers, as DIR:FILE pairs under
# INCLUDEDIR), INSTALL_PC (pkg-config templates NAME.pc.in, filled in
# here for this PREFIX, LIBDIR and INCLUDEDIR),
# INSTALL_MAN (man pages), INSTALL_DOC (files for $(DOCDIR)) and
# INSTALL_SHARE (DIR:FILE pairs under $(DATADIR)/srd).

install: lib tools man
	$(call say,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	$(Q)install -m 755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/
	$(Q)for f in $(INSTALL_LIB); do \
		case $$f in *.a) m=644 ;; *) m=755 ;; esac; \
		install -m $$m $$f $(DESTDIR)$(LIBDIR)/; done
	$(Q)ln -sf libsrd.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsrd.so.$(SOVERSION)
	$(Q)ln -sf libsrd.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsrd.so
	$(Q)for p in $(INSTALL_INC); do \
		install -d $(DESTDIR)$(INCLUDEDIR)/$${p%%:*} && \
		install -m 644 $${p#*:} $(DESTDIR)$(INCLUDEDIR)/$${p%%:*}/; done
	$(Q)for t in $(INSTALL_PC); do \
		sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
			-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
			$$t > $(DESTDIR)$(LIBDIR)/pkgconfig/$$(basename $$t .in); done
	$(Q)for m in $(INSTALL_MAN); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	$(Q)for p in $(INSTALL_SHARE); do \
		install -d $(DESTDIR)$(DATADIR)/srd/$${p%%:*} && \
		install -m 644 $${p#*:} $(DESTDIR)$(DATADIR)/srd/$${p%%:*}/; done
	$(Q)install -d $(DESTDIR)$(DOCDIR)
	$(Q)install -m 644 $(INSTALL_DOC) $(DESTDIR)$(DOCDIR)/

uninstall:
	$(Q)rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_BIN))) \
		$(addprefix $(DESTDIR)$(LIBDIR)/,$(notdir $(INSTALL_LIB))) \
		$(DESTDIR)$(LIBDIR)/libsrd.so $(DESTDIR)$(LIBDIR)/libsrd.so.$(SOVERSION) \
		$(addprefix $(DESTDIR)$(LIBDIR)/pkgconfig/,$(notdir $(INSTALL_PC:.in=)))
	$(Q)for p in $(INSTALL_INC); do \
		rm -f $(DESTDIR)$(INCLUDEDIR)/$${p%%:*}/$$(basename $${p#*:}); done
	$(Q)for m in $(INSTALL_MAN); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$(basename $$m); done
	$(Q)rm -rf $(DESTDIR)$(DATADIR)/srd $(DESTDIR)$(DOCDIR)
	$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/srd 2>/dev/null || true

clean:
	$(call say,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
