# SPDX-License-Identifier: MIT
# leap-sim (trace-driven prefetcher simulator) and leap-tracegen; docs/sim.md.
SIM_DIR := $(OUTPUT)/sim
SIM_HDRS := $(wildcard tools/sim/*.h)
# The model without its output code: what the unit tests link.
SIM_CORE_SRCS := $(filter-out tools/sim/report.c tools/sim/patterns.c,\
	$(wildcard tools/sim/*.c))
SIM_CORE_OBJS := $(patsubst tools/sim/%.c,$(SIM_DIR)/%.o,$(SIM_CORE_SRCS))
SIM_JSON_CFLAGS := $(CFG_JSON_CFLAGS)
SIM_JSON_LIBS := $(CFG_JSON_LIBS)

$(SIM_DIR)/%.o: tools/sim/%.c $(SIM_HDRS) $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SIM_JSON_CFLAGS) -Itools -c $< -o $@

$(SIM_DIR)/tools/%.o: tools/%.c $(SIM_HDRS) $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SIM_JSON_CFLAGS) -Itools -c $< -o $@

$(BIN)/leap-sim: $(SIM_DIR)/tools/leap-sim.o $(SIM_CORE_OBJS) $(SIM_DIR)/report.o $(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(SIM_JSON_LIBS) -lm

$(BIN)/leap-tracegen: $(SIM_DIR)/tools/leap-tracegen.o $(SIM_DIR)/patterns.o $(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ -lm

ALL_BINS += $(BIN)/leap-sim $(BIN)/leap-tracegen

# Unit tests: the model's sources are compiled into the test (plain and
# sanitized); the Makefile's test rule does not know them, so list them as
# prerequisites here to rebuild the tests when they change.
UNIT_SRC_test_sim := $(SIM_CORE_SRCS)
$(OUTPUT)/tests/test_sim $(OUTPUT)/tests-san/test_sim: $(SIM_CORE_SRCS) $(SIM_HDRS)

# `make bench-sim`: events/s and a side-by-side table for the standard
# patterns (the lead hangs it under `make bench`).
.PHONY: bench-sim
bench-sim: $(BIN)/leap-sim $(BIN)/leap-tracegen
	bash tools/sim/bench.sh $(BIN) $(SIM_DIR)/bench
