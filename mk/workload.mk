# SPDX-License-Identifier: MIT
# leap-workload: synthetic self-verifying swap workload (tools/leap-workload.c).
WORKLOAD_BIN := $(BIN)/leap-workload
WORKLOAD_OBJ := $(OUTPUT)/workload/leap-workload.o
ALL_BINS += $(WORKLOAD_BIN)

$(WORKLOAD_OBJ): tools/leap-workload.c $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -pthread $(CFG_JSON_CFLAGS) -c $< -o $@

$(WORKLOAD_BIN): $(WORKLOAD_OBJ) $(LIBLEAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WORKLOAD_OBJ) -o $@ $(LIBLEAP) -pthread $(CFG_JSON_LIBS)
