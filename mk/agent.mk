# SPDX-License-Identifier: MIT
# leap-agent: the daemon that runs the engine on real faults.
AGENT_SRCS := $(wildcard user/agent/*.c)
AGENT_OBJS := $(patsubst user/agent/%.c,$(OUTPUT)/agent/%.o,$(AGENT_SRCS))

UNIT_SRC_test_config := user/agent/config.c
UNIT_LIBS_test_config := -linih
UNIT_SRC_test_prefetch := user/agent/prefetch.c user/agent/pagemap.c user/agent/vmas.c \
	user/agent/procs.c user/agent/caps.c
UNIT_LIBS_test_prefetch = $(LIBBPF_LIBS) -lcap
UNIT_SRC_test_vmas := user/agent/vmas.c
UNIT_SRC_test_procs := user/agent/procs.c user/agent/vmas.c user/agent/pagemap.c user/agent/caps.c
UNIT_LIBS_test_procs := -lcap
UNIT_SRC_test_placement := user/agent/placement.c
UNIT_LIBS_test_placement := -Iuser/agent
UNIT_SRC_test_replay := user/agent/recording.c
UNIT_LIBS_test_replay := -Iuser/agent -lz
# The recordings it replays (tools/record-traces.sh).
$(OUTPUT)/tests/test_replay $(OUTPUT)/tests-san/test_replay: $(wildcard tests/data/recordings/*)
UNIT_SRC_test_issuer := user/agent/issuer.c user/agent/prefetch.c user/agent/pagemap.c user/agent/placement.c \
	user/agent/vmas.c user/agent/procs.c user/agent/caps.c
UNIT_LIBS_test_issuer = -Iuser/agent -Iuser $(LIBBPF_LIBS) -pthread -lcap

AGENT_CFLAGS = $(OBSERVER_CFLAGS) -Iuser -Iuser/agent

$(OUTPUT)/agent/%.o: user/agent/%.c $(wildcard user/agent/*.h) $(LIB_HDRS) user/observer.h \
		| $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@

$(BIN)/leap-agent: user/leap-agent.c $(AGENT_OBJS) $(OBSERVER_OBJS) $(LIBLEAP) \
		$(wildcard user/agent/*.h) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(AGENT_CFLAGS) $< $(AGENT_OBJS) $(OBSERVER_OBJS) -o $@ -pthread \
		$(LIBLEAP) $(OBSERVER_LIBS) -linih -ljson-c -lcap -lz

ALL_BINS += $(BIN)/leap-agent

UNIT_SRC_test_backend := user/agent/backend.c user/agent/swapslot.c user/agent/swapra.c
UNIT_SRC_test_swapslot := user/agent/swapslot.c user/agent/swapra.c
UNIT_SRC_test_swapra := user/agent/swapra.c
UNIT_LIBS_test_backend := -lpthread
