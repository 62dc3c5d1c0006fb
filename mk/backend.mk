# SPDX-License-Identifier: MIT
# Remote swap backend (docs/backend.md): the wire protocol (user/wire),
# leap-memd memory servers (user/memd), the client library with striping,
# replication and reconnect (user/memclient), leap-swapd (user/swapd), and
# the protocol's libFuzzer target (tests/fuzz).
BACKEND_DIR := $(OUTPUT)/backend
WIRE_HDRS := include/leap/wire.h $(wildcard user/wire/*.h)
WIRE_SRCS := $(wildcard user/wire/*.c)
WIRE_OBJS := $(patsubst user/%.c,$(BACKEND_DIR)/%.o,$(WIRE_SRCS))
# libcrypto (OpenSSL) for HMAC-SHA256 and the CSPRNG.
CRYPTO_LIBS := $(or $(shell pkg-config --libs libcrypto 2>/dev/null),-lcrypto)

$(BACKEND_DIR)/wire/%.o: user/wire/%.c $(WIRE_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iuser/wire -c $< -o $@

UNIT_SRC_test_wire := $(WIRE_SRCS)
UNIT_LIBS_test_wire := $(CRYPTO_LIBS)
$(OUTPUT)/tests/test_wire $(OUTPUT)/tests-san/test_wire: $(WIRE_SRCS) $(WIRE_HDRS)

# ---- libFuzzer target: built when clang's fuzzer runtime is there
# (libclang-rt-14-dev); tests/sys/fuzz.t runs it for a bounded time. ----
FUZZ_BIN := $(BACKEND_DIR)/fuzz_wire
FUZZ_RT := $(wildcard $(shell $(CLANG) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$(shell uname -m).a)
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
