# SPDX-License-Identifier: MIT
# bench-swap: swap-in prefetch benchmark (tools/bench-swap.sh, docs/bench.md).
# Root only.  Arguments through BENCH_SWAP_ARGS, e.g.
#   make bench-swap BENCH_SWAP_ARGS="--footprint 512 --reps 5"
# The agent is built too when its fragment provides bin/leap-agent.
.PHONY: bench-swap bench-swap-quick bench-backend
BENCH_SWAP_ARGS ?=

bench-swap:
	$(MAKE) $(BIN)/leap-workload $(filter $(BIN)/leap-agent,$(ALL_BINS))
	bash tools/bench-swap.sh $(BENCH_SWAP_ARGS)

bench-swap-quick:
	$(MAKE) $(BIN)/leap-workload $(filter $(BIN)/leap-agent,$(ALL_BINS))
	bash tools/bench-swap.sh --quick $(BENCH_SWAP_ARGS)

# The remote swap backend (docs/backend.md): page-in latency of a
# prefetch-cache hit, a fetch from leap-memd and a file on the root
# filesystem; seq and stride:16 with swap on the backend (rows b, c0, e, ec).
BENCH_BACKEND_ARGS ?=
bench-backend:
	$(MAKE) $(BIN)/leap-workload $(BIN)/leap-memd $(BIN)/leap-swapd \
		$(filter $(BIN)/leap-agent,$(ALL_BINS))
	bash tools/bench-backend.sh $(BENCH_BACKEND_ARGS)

# Real programs (tools/bench-real.sh, docs/bench-real.md).  Root only.
# Without BENCH_REAL_ARGS: the README's table (--readme: interpreters,
# runtimes, SQLite, numpy, PostgreSQL, Redis, GNU sort at 50% of their footprint,
# Linux readahead against leap, medians of 5), written into README.md
# with its raw runs in docs/results/.  With them, any other run:
#   make bench-real BENCH_REAL_ARGS="--programs 'py-stride sqlite' --reps 5"
BENCH_REAL_ARGS ?=
.PHONY: bench-real
bench-real: all
	bash tools/install-deps.sh
	bash tools/bench-real.sh $(or $(BENCH_REAL_ARGS),--readme)
