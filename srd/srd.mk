# srd/: libsrd, the engine.  One translation unit (srd/unity/srd_unity.c
# includes every module) so that the packet path inlines across modules;
# compiled with hidden visibility, so that only srd.h's SRD_EXPORT symbols
# leave the shared library.  srd/ includes nothing outside itself.

SRD_SRCS := $(sort $(wildcard srd/*.c))
SRD_HDRS := $(wildcard srd/*.h srd/include/srd/*.h)
LIBSRD_A := $(OUT)/lib/libsrd.a
LIBSRD_SO := $(OUT)/lib/libsrd.so.$(VERSION)

$(OUT)/obj/srd/%.o: DIR_CFLAGS = -fvisibility=hidden -Isrd/include

$(LIBSRD_A): $(OUT)/obj/srd/unity/srd_unity.o
	$(archive)

$(LIBSRD_SO): $(OUT)/obj/srd/unity/srd_unity.o
	$(call say,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libsrd.so.$(SOVERSION) $(SANFLAGS) \
		-o $@ $^
	$(Q)ln -sf libsrd.so.$(VERSION) $(OUT)/lib/libsrd.so.$(SOVERSION)
	$(Q)ln -sf libsrd.so.$(SOVERSION) $(OUT)/lib/libsrd.so

# srd.pc is made by `make install` from srd/srd.pc.in for the PREFIX,
# LIBDIR and INCLUDEDIR given to it (the top Makefile's install rule).

lib: $(LIBSRD_A) $(LIBSRD_SO)
INSTALL_LIB += $(LIBSRD_A) $(LIBSRD_SO)
INSTALL_INC += srd:srd/include/srd/srd.h
INSTALL_PC += srd/srd.pc.in

# libsrd may reference only these outside symbols: no clock, socket,
# thread, printf or malloc (shared/style.md 2.1).
PURITY_ALLOW := memcpy memmove memset memcmp abort __assert_fail \
	__stack_chk_fail

check-purity: $(LIBSRD_A)
	$(Q)nm -u --format=posix $< | awk 'NF >= 2 && $$2 == "U" {print $$1}' \
		| sort -u > $(OUT)/purity.undef; \
	nm --defined-only --format=posix $< | awk 'NF >= 2 {print $$1}' \
		| sort -u > $(OUT)/purity.def; \
	bad=$$(comm -23 $(OUT)/purity.undef $(OUT)/purity.def | \
		grep -vxF $(foreach s,$(PURITY_ALLOW),-e $(s)) || true); \
	if [ -n "$$bad" ]; then \
		echo "check-purity: libsrd references symbols outside the allow-list:"; \
		echo "$$bad" | sed 's/^/    /'; exit 1; \
	else echo "  PURE   libsrd links only: $$(comm -23 $(OUT)/purity.undef \
		$(OUT)/purity.def | tr '\n' ' ')"; fi
