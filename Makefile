# SPDX-License-Identifier: MIT
# leap: top-level build.  Layout follows libbpf-bootstrap: intermediates in
# .output/, binaries in bin/.  Each component adds itself in mk/<name>.mk so
# the pieces stay independent; this file holds only what they share.

OUTPUT := .output
BIN := bin
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(OUTPUT)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

# Build dependencies come from Debian, and the flags some of them need
# (pkg-config, clang's fuzzer runtime) can only be asked for once they are
# installed.  So nothing is probed while make reads the makefiles: the
# probes live in tools/gen-config.sh, which first runs tools/install-deps.sh
# and then writes their answers to $(CONFIG_MK).  That file is included
# below; GNU make remakes an included makefile that is missing or out of
# date before it builds anything, then re-reads everything with the real
# values (GNU make manual, "How Makefiles Are Remade").  A fresh machine
# therefore installs the packages and builds in one `make`.  (Deferred `=`
# variables in recipes would also work, but would run pkg-config once per
# compile and hide a missing package behind a compiler error.)
# $(CONFIG_MK) is remade when dpkg's database changes (a package installed
# or removed), so the recorded flags never outlive the packages.
CONFIG_MK := $(OUTPUT)/config.mk
DPKG_STATUS := $(wildcard /var/lib/dpkg/status)
# Targets ordered after the deps (order-only prerequisite); the name is kept
# for the mk/ fragments.
DEPS_STAMP := $(CONFIG_MK)

# Goals that need no dependencies (and must work on a machine without
# them): `make clean` does not install clang.
NODEPS_GOALS := clean format format-check vm-clean uninstall
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(NODEPS_GOALS),$(MAKECMDGOALS)),)
NO_CONFIG := 1
endif
endif

# Filled in by the mk/*.mk fragments.
ALL_BINS :=
UNIT_TESTS :=
CLEAN_EXTRA :=

.PHONY: all deps check check-unit bench clean format format-check demo
all: # default goal, prerequisites added below

$(CONFIG_MK): tools/install-deps.sh tools/gen-config.sh $(DPKG_STATUS)
	@mkdir -p $(@D)
	bash tools/gen-config.sh $@ $(CLANG)

ifndef NO_CONFIG
include $(CONFIG_MK)
endif

# Installs what is missing even when $(CONFIG_MK) is up to date.
deps:
	bash tools/gen-config.sh $(CONFIG_MK) $(CLANG)

# ---- libleap: the pure engine (no kernel, no I/O) -----------------------
LIB_SRCS := $(wildcard user/lib/*.c)
LIB_OBJS := $(patsubst user/lib/%.c,$(OUTPUT)/lib/%.o,$(LIB_SRCS))
LIB_SAN_OBJS := $(patsubst user/lib/%.c,$(OUTPUT)/lib-san/%.o,$(LIB_SRCS))
LIBLEAP := $(OUTPUT)/libleap.a
LIBLEAP_SAN := $(OUTPUT)/libleap-san.a
LIB_HDRS := $(wildcard include/leap/*.h) $(wildcard include/*.h)

$(OUTPUT)/lib/%.o: user/lib/%.c $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/lib-san/%.o: user/lib/%.c $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(LIBLEAP): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(LIBLEAP_SAN): $(LIB_SAN_OBJS)
	$(AR) rcs $@ $^

# ---- unit tests (cmocka, TAP output), plain and ASan/UBSan --------------
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
UNIT_SAN_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests-san/%,$(UNIT_SRCS))
# Extra objects a unit test links (beyond libleap), set by fragments as
# UNIT_SRC_<test_name> := sources... and UNIT_LIBS_<test_name> := -lfoo
.SECONDEXPANSION:
$(OUTPUT)/tests/%: tests/unit/%.c $$(UNIT_SRC_$$*) $(LIBLEAP) $(LIB_HDRS) tests/unit/*.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit $< $(UNIT_SRC_$*) -o $@ $(LIBLEAP) $(UNIT_LIBS_$*) -lcmocka -lm

$(OUTPUT)/tests-san/%: tests/unit/%.c $$(UNIT_SRC_$$*) $(LIBLEAP_SAN) $(LIB_HDRS) tests/unit/*.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit $< $(UNIT_SRC_$*) -o $@ \
		$(LIBLEAP_SAN) $(UNIT_LIBS_$*) -lcmocka -lm

-include mk/*.mk

all: $(LIBLEAP) $(ALL_BINS)

# `make check`: everything builds, then every test runs under prove with a
# hard per-test timeout (tests/run-tests).  System tests need root and set
# up and tear down their own swap, cgroups and processes.
check: all $(UNIT_BINS) $(UNIT_SAN_BINS)
	bash tests/run-tests $(UNIT_BINS) $(UNIT_SAN_BINS) $(wildcard tests/sys/*.t)

# `make bench`: engine cost, simulator side by side, then real swap (root):
# no prefetch, Linux readahead, leap-agent and the oracle in one run.
bench: all
	$(MAKE) --no-print-directory bench-engine
	$(MAKE) --no-print-directory bench-sim
	$(MAKE) --no-print-directory bench-swap
	$(MAKE) --no-print-directory bench-backend
	$(MAKE) --no-print-directory bench-overhead

check-unit: $(UNIT_BINS) $(UNIT_SAN_BINS)
	bash tests/run-tests $(UNIT_BINS) $(UNIT_SAN_BINS)

format:
	clang-format -i $(shell git ls-files '*.c' '*.h' | grep -v '^vmlinux/')

format-check:
	clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h' | grep -v '^vmlinux/')

clean:
	rm -rf $(OUTPUT) $(BIN) $(CLEAN_EXTRA)
