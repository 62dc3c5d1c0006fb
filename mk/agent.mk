# leap-agent: the daemon that runs the engine on real faults.
AGENT_SRCS := $(wildcard user/agent/*.c)
AGENT_OBJS := $(patsubst user/agent/%.c,$(OUTPUT)/agent/%.o,$(AGENT_SRCS))

UNIT_SRC_test_config := user/agent/config.c
UNIT_LIBS_test_config := -linih
UNIT_SRC_test_prefetch := user/agent/prefetch.c
