# transports/: the real-network backends behind one message API
# (transports/xport.h): udp (libsrd over UDP with io_uring, needs liburing;
# a build without it leaves udp out and says so at its end) and tcp
# (kernel TCP), and fabric (libfabric RDM endpoints, needs libfabric; left
# out the same way without it).  transports/cuda stages CUDA device
# memory in front of any of them (compiled with CUDA's headers when found).  The udp backend's impairments are netsim/impair's model.

XPORT_SRCS := transports/xport.c transports/tcp/xport_tcp.c \
	$(sort $(wildcard transports/cuda/*.c))
ifeq ($(HAVE_URING),1)
XPORT_SRCS += $(sort $(wildcard transports/udp/*.c))
endif
ifeq ($(HAVE_FABRIC),1)
XPORT_SRCS += $(sort $(wildcard transports/fabric/*.c))
endif
LIBXPORT_A := $(OUT)/lib/libxport.a
XPORT_INC := -Isrd/include -Itransports -Inetsim/impair $(URING_CFLAGS) \
	$(FABRIC_CFLAGS) $(CUDA_CFLAGS)
# -ldl: libcudart is loaded at run time (transports/cuda/xcuda.c).
XPORT_LDLIBS := $(URING_LIBS) $(FABRIC_LIBS) -ldl -lpthread -lm
XPORT_LINK := $(LIBXPORT_A) $(LIBIMPAIR_A) $(LIBSRD_A)

$(OUT)/obj/transports/%.o: DIR_CFLAGS = $(XPORT_INC)

# The archive depends on the configuration: a backend that drops out
# must leave it too.
$(LIBXPORT_A): $(XPORT_SRCS:%.c=$(OUT)/obj/%.o) $(CONFIG_MK)
	$(archive)

.PHONY: transports
transports: $(LIBXPORT_A)
lib: transports
