# SPDX-License-Identifier: MIT
# Memory registration for RDMA (docs/registration.md): the registration
# cache (MRRC and the LRU pin-down baseline), the fake cost-model backend,
# the userfaultfd unmap monitor, Firehose (server and client), the
# registration trace format and generator (user/reg -> libleapreg), and the
# trace-driven comparison tool leap-regsim.
REG_DIR := $(OUTPUT)/reg
REG_HDRS := include/leap/reg.h include/leap/firehose.h include/leap/regtrace.h \
	$(wildcard user/reg/*.h)
REG_SRCS := $(wildcard user/reg/*.c)
REG_OBJS := $(patsubst user/reg/%.c,$(REG_DIR)/%.o,$(REG_SRCS))
LIBLEAPREG := $(OUTPUT)/libleapreg.a

$(REG_DIR)/%.o: user/reg/%.c $(REG_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iuser/reg -pthread -c $< -o $@

$(LIBLEAPREG): $(REG_OBJS)
	$(AR) rcs $@ $^

$(BIN)/leap-regsim: tools/leap-regsim.c $(LIBLEAPREG) $(LIBLEAP) $(REG_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LIBLEAPREG) $(LIBLEAP) -pthread -lm

ALL_BINS += $(BIN)/leap-regsim
all: $(LIBLEAPREG)

# Unit tests compile the sources in (plain and ASan/UBSan).
REG_TESTS := test_reg_cache test_reg_monitor test_firehose test_regtrace
$(foreach t,$(REG_TESTS),$(eval UNIT_SRC_$(t) := $(REG_SRCS)))
$(foreach t,$(REG_TESTS),$(eval UNIT_LIBS_$(t) := -Iuser/reg -pthread))
$(foreach t,$(REG_TESTS),$(OUTPUT)/tests/$(t) $(OUTPUT)/tests-san/$(t)): $(REG_HDRS)
