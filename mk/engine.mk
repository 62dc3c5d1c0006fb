# SPDX-License-Identifier: MIT
# Engine tools: the per-event cost benchmark.
$(BIN)/leap-bench-engine: tools/leap-bench-engine.c $(LIBLEAP) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LIBLEAP)

ALL_BINS += $(BIN)/leap-bench-engine

.PHONY: bench-engine
bench-engine: $(BIN)/leap-bench-engine
	$(BIN)/leap-bench-engine
