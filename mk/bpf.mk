# SPDX-License-Identifier: MIT
# ---- BPF observer: CO-RE object, skeleton, loader library, leap-observe ----
# libbpf-bootstrap style: the .bpf.o is compiled against the checked-in
# vmlinux/<arch>/vmlinux.h (tools/gen-vmlinux.sh), bpftool turns it into a
# skeleton header, user/observer.c embeds that.
#
# For other fragments (the agent): link $(OBSERVER_OBJS) and $(OBSERVER_LIBS),
# compile with $(OBSERVER_CFLAGS), and depend on $(OBSERVER_OBJS).

BPF_CFLAGS := -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) \
	-Ivmlinux/$(ARCH) -Iinclude -Ibpf
# pkg-config's answers come from $(CONFIG_MK) (Makefile, tools/gen-config.sh).
LIBBPF_CFLAGS := $(CFG_LIBBPF_CFLAGS)
LIBBPF_LIBS := $(CFG_LIBBPF_LIBS) -lelf -lz

BPF_OBJ := $(OUTPUT)/leap_observer.bpf.o
BPF_SKEL := $(OUTPUT)/leap_observer.skel.h
BPF_HDRS := $(wildcard bpf/*.h) include/leap_event.h vmlinux/$(ARCH)/vmlinux.h

OBSERVER_CFLAGS := $(LIBBPF_CFLAGS) -Iuser -Ibpf
OBSERVER_OBJS := $(OUTPUT)/observer.o $(OUTPUT)/observer_maps.o $(OUTPUT)/observer_ring.o
OBSERVER_LIBS := $(LIBBPF_LIBS)

$(BPF_OBJ): bpf/leap_observer.bpf.c $(BPF_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BPF_SKEL): $(BPF_OBJ)
	$(BPFTOOL) gen skeleton $< name leap_observer_bpf > $@.tmp
	@mv $@.tmp $@

$(OUTPUT)/observer.o: user/observer.c user/observer.h user/observer_ring.h $(BPF_SKEL) $(BPF_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(OBSERVER_CFLAGS) -c $< -o $@

$(OUTPUT)/observer_maps.o: user/observer_maps.c user/observer.h $(BPF_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(OBSERVER_CFLAGS) -c $< -o $@

$(OUTPUT)/observer_ring.o: user/observer_ring.c user/observer_ring.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(OBSERVER_CFLAGS) -c $< -o $@

$(BIN)/leap-observe: user/leap-observe.c user/observer.h include/leap_event.h \
		$(OBSERVER_OBJS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(OBSERVER_CFLAGS) $< $(OBSERVER_OBJS) -o $@ $(OBSERVER_LIBS)

ALL_BINS += $(BIN)/leap-observe

# System-test helper (tests/sys/observer.t): a small page-touching program.
OBS_TEST_HELPERS := $(OUTPUT)/sys-helpers/leap-touch

$(OUTPUT)/sys-helpers/%: tests/sys/helpers/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ -lpthread

all: $(OBS_TEST_HELPERS)

# mk/*.mk are read in name order, so a fragment read before this one
# (mk/agent.mk) saw OBSERVER_OBJS still empty in its prerequisite list and
# could link before observer.o exists under make -j.  Add the dependency for
# the known users here.
$(BIN)/leap-agent: $(OBSERVER_OBJS)
