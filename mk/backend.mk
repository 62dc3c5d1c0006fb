# SPDX-License-Identifier: MIT
# Remote swap backend (docs/backend.md): the wire protocol (user/wire),
# leap-memd memory servers (user/memd), the client library with striping,
# replication and reconnect (user/memclient), leap-swapd (user/swapd), and
# the protocol's libFuzzer target (tests/fuzz).
BACKEND_DIR := $(OUTPUT)/backend
WIRE_HDRS := include/leap/wire.h $(wildcard user/wire/*.h)
# The RDMA transport's registration cache (zero-copy) and leap-memd's
# Firehose come from the registration library (user/reg, mk/reg.mk): its
# sources are part of the wire library.
WIRE_SRCS := $(wildcard user/wire/*.c) $(wildcard user/reg/*.c)
WIRE_OBJS := $(patsubst user/%.c,$(BACKEND_DIR)/%.o,$(WIRE_SRCS))
WIRE_REG_HDRS := include/leap/reg.h include/leap/firehose.h include/leap/regtrace.h \
	$(wildcard user/reg/*.h)
# libcrypto (OpenSSL) for HMAC-SHA256 and the CSPRNG.
# (pkg-config's answers come from $(CONFIG_MK): Makefile, tools/gen-config.sh.)
CRYPTO_LIBS := $(CFG_CRYPTO_LIBS)
# rdma-core (libibverbs, librdmacm) for the RDMA verbs transport
# (user/wire/rdma.c); linked everywhere the wire library is.
RDMA_LIBS := $(CFG_RDMA_LIBS)
WIRE_LIBS := -Iuser/reg $(CRYPTO_LIBS) $(RDMA_LIBS) -pthread

$(BACKEND_DIR)/wire/%.o: user/wire/%.c $(WIRE_HDRS) $(WIRE_REG_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iuser/wire -c $< -o $@

$(BACKEND_DIR)/reg/%.o: user/reg/%.c $(WIRE_REG_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iuser/reg -pthread -c $< -o $@

UNIT_SRC_test_wire := $(WIRE_SRCS)
UNIT_LIBS_test_wire := $(WIRE_LIBS)
$(OUTPUT)/tests/test_wire $(OUTPUT)/tests-san/test_wire: $(WIRE_SRCS) $(WIRE_HDRS)

# ---- libFuzzer target: built when clang's fuzzer runtime is there
# (libclang-rt-14-dev); tests/sys/fuzz.t runs it for a bounded time. ----
FUZZ_BIN := $(BACKEND_DIR)/fuzz_wire
FUZZ_RT := $(CFG_FUZZ_RT)
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	$(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude

$(FUZZ_BIN): tests/fuzz/fuzz_wire.c user/wire/wire.c $(WIRE_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) tests/fuzz/fuzz_wire.c user/wire/wire.c -o $@

.PHONY: fuzz
fuzz: $(FUZZ_BIN)
ifneq ($(FUZZ_RT),)
all: $(FUZZ_BIN)
endif

# ---- leap-memd ----
MEMD_SRCS := $(wildcard user/memd/*.c)
MEMD_OBJS := $(patsubst user/%.c,$(BACKEND_DIR)/%.o,$(MEMD_SRCS))
MEMD_CFLAGS := -Iuser/wire -Iuser/memd

$(BACKEND_DIR)/memd/%.o: user/memd/%.c $(WIRE_HDRS) user/memd/memd.h user/memd/fh.h \
		include/leap/firehose.h include/leap/reg.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MEMD_CFLAGS) -c $< -o $@

$(BIN)/leap-memd: $(MEMD_OBJS) $(WIRE_OBJS) $(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(WIRE_LIBS) -pthread

# ---- memclient library and leap-memctl ----
# The library, split by job (user/memclient/memclient_int.h says which file
# does what); leap-memctl.c is a program of its own.
MEMCLIENT_SRCS := $(addprefix user/memclient/,memclient.c conn.c stream.c onesided.c \
	server_io.c read.c replica.c pipe.c pstate.c)
MEMCLIENT_OBJS := $(patsubst user/%.c,$(BACKEND_DIR)/%.o,$(MEMCLIENT_SRCS))
MEMCLIENT_CFLAGS := -Iuser/wire -Iuser/memclient

$(BACKEND_DIR)/memclient/%.o: user/memclient/%.c $(WIRE_HDRS) user/memclient/memclient.h user/memclient/pipe.h \
		user/memclient/pstate.h user/memclient/memclient_int.h \
		| $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MEMCLIENT_CFLAGS) -pthread -c $< -o $@

$(BIN)/leap-memctl: $(BACKEND_DIR)/memclient/leap-memctl.o $(MEMCLIENT_OBJS) $(WIRE_OBJS) \
		$(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ -pthread $(WIRE_LIBS)

ALL_BINS += $(BIN)/leap-memd $(BIN)/leap-memctl

UNIT_SRC_test_wire_store := user/memd/store.c $(MEMCLIENT_SRCS) $(WIRE_SRCS)
UNIT_LIBS_test_wire_store := -Iuser/wire -Iuser/memd -Iuser/memclient -Iuser/reg -pthread \
	$(WIRE_LIBS)
$(OUTPUT)/tests/test_wire_store $(OUTPUT)/tests-san/test_wire_store: user/memd/memd.h \
	user/memclient/memclient.h user/memclient/memclient_int.h

# The --state file's header and page checks, and the file itself.
UNIT_SRC_test_pstate := user/memclient/pstate.c
UNIT_LIBS_test_pstate := -Iuser/memclient
$(OUTPUT)/tests/test_pstate $(OUTPUT)/tests-san/test_pstate: user/memclient/pstate.h

# ---- leap-swapd: FUSE frontend over memclient ----
FUSE_CFLAGS := $(CFG_FUSE_CFLAGS)
FUSE_LIBS := $(CFG_FUSE_LIBS) -lpthread
# liburing (io_uring) for the ublk frontend's control and queue rings.
URING_LIBS := $(CFG_URING_LIBS)
SWAPD_SRCS := $(wildcard user/swapd/*.c)
SWAPD_OBJS := $(patsubst user/%.c,$(BACKEND_DIR)/%.o,$(SWAPD_SRCS))
SWAPD_CFLAGS := -Iuser/wire -Iuser/memclient -Iuser/swapd $(FUSE_CFLAGS) $(CFG_URING_CFLAGS)

$(BACKEND_DIR)/swapd/%.o: user/swapd/%.c $(WIRE_HDRS) user/memclient/memclient.h \
		$(wildcard user/swapd/*.h) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SWAPD_CFLAGS) -pthread -c $< -o $@

$(BIN)/leap-swapd: $(SWAPD_OBJS) $(MEMCLIENT_OBJS) $(WIRE_OBJS) $(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(FUSE_LIBS) $(URING_LIBS) -pthread $(WIRE_LIBS)

ALL_BINS += $(BIN)/leap-swapd

UNIT_SRC_test_wire_cache := user/swapd/cache.c
UNIT_LIBS_test_wire_cache := -Iuser/swapd -pthread
$(OUTPUT)/tests/test_wire_cache $(OUTPUT)/tests-san/test_wire_cache: user/swapd/cache.h

# ---- RDMA transport: latency against TCP in a soft-RoCE guest (root) ----
.PHONY: rdma-latency
rdma-latency: $(BIN)/leap-memd $(BIN)/leap-swapd $(BIN)/leap-memctl
	bash tests/vm/rdma-latency.sh $(RDMA_KERNEL)

# leap-workload rows b, c, e over RDMA and over TCP in the same guest.
.PHONY: bench-rdma
bench-rdma: all
	bash tests/vm/rdma-bench.sh $(or $(RDMA_KERNEL),6.1) $(BENCH_RDMA_ARGS)

UNIT_SRC_test_wire_rdma := $(WIRE_SRCS)
UNIT_LIBS_test_wire_rdma := -Iuser/wire $(WIRE_LIBS)
$(OUTPUT)/tests/test_wire_rdma $(OUTPUT)/tests-san/test_wire_rdma: $(WIRE_SRCS) $(WIRE_HDRS)

# tests/sys/rdma.t's probe of the access gate (runs in the guest).
RDMA_GATE := $(OUTPUT)/sys-helpers/leap-rdma-gate
$(RDMA_GATE): tests/sys/helpers/leap-rdma-gate.c $(WIRE_OBJS) $(WIRE_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iuser/wire $< $(WIRE_OBJS) -o $@ $(WIRE_LIBS)
all: $(RDMA_GATE)

UNIT_SRC_test_ublk_proto := user/swapd/ublk_proto.c
UNIT_LIBS_test_ublk_proto := -Iuser/swapd
$(OUTPUT)/tests/test_ublk_proto $(OUTPUT)/tests-san/test_ublk_proto: user/swapd/ublk_proto.h

UNIT_SRC_test_nbd_proto := user/swapd/nbd_proto.c
UNIT_LIBS_test_nbd_proto := -Iuser/swapd
$(OUTPUT)/tests/test_nbd_proto $(OUTPUT)/tests-san/test_nbd_proto: user/swapd/nbd_proto.h

# Firehose in leap-memd through the wire, with a fake transport.
UNIT_SRC_test_memd_fh := user/memd/fh.c $(WIRE_SRCS)
UNIT_LIBS_test_memd_fh := -Iuser/wire -Iuser/memd -Iuser/reg -pthread $(WIRE_LIBS)
$(OUTPUT)/tests/test_memd_fh $(OUTPUT)/tests-san/test_memd_fh: user/memd/fh.h \
	include/leap/firehose.h
