# SPDX-License-Identifier: MIT
# bench-overhead: what watching faults costs programs that never swap
# (tools/bench-overhead.sh, docs/bench-overhead.md).  Root only.
#   make bench-overhead BENCH_OVERHEAD_ARGS="--reps 7"
OVERHEAD_DIR := $(OUTPUT)/overhead
OVERHEAD_BINS := $(OVERHEAD_DIR)/fault-touch $(OVERHEAD_DIR)/hook-floor \
	$(OVERHEAD_DIR)/hook-floor.bpf.o
BENCH_OVERHEAD_ARGS ?=

$(OVERHEAD_DIR)/fault-touch: tools/overhead/fault-touch.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@

$(OVERHEAD_DIR)/hook-floor.bpf.o: tools/overhead/hook-floor.bpf.c vmlinux/$(ARCH)/vmlinux.h \
		| $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OVERHEAD_DIR)/hook-floor: tools/overhead/hook-floor.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIBBPF_CFLAGS) $< -o $@ $(LIBBPF_LIBS)

all: $(OVERHEAD_BINS)

.PHONY: bench-overhead
bench-overhead: all
	bash tools/bench-overhead.sh $(BENCH_OVERHEAD_ARGS)
