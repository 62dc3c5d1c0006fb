/* SPDX-License-Identifier: MIT */
/* leap-agent's policy file: INI, parsed with libinih. */
#ifndef LEAP_AGENT_CONFIG_H
#define LEAP_AGENT_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "leap/engine.h"

enum agent_mode {
	AGENT_MODE_LEAP = 0, /* observe and prefetch */
	AGENT_MODE_OBSERVE,  /* observe, run the engine, count, never prefetch */
	AGENT_MODE_OFF,	     /* not watched at all */
};

struct agent_policy {
	enum agent_mode mode;
	struct leap_params params;
	/* Cgroup targets: only the cgroup itself (match = exact), not the
	 * tree below it (match = tree, the default). */
	bool exact;
	/* Pages a fill the kernel's readahead serves went past this many
	 * pages ago get MADV_COLD (0: never); mode leap only. */
	uint32_t cold_behind;
	/* Mode leap: stand down where prefetching costs more than it saves
	 * (include/leap/cost.h); false: prefetch whatever it costs. */
	bool stand_down;
	/* With stand_down: also where held epochs show its windows do not make
	 * it faster (include/leap/outcome.h; outcome = judge). */
	bool judge_outcome;
	/* Pages per second this target's windows may take; 0: no cap. */
	uint32_t prefetch_rate;
};

#define AGENT_DEFAULT_COLD_BEHIND 256u
/* memcg_flush_ms: why and how often, user/agent/memflush.h. */
#define AGENT_MEMCG_FLUSH_MS 50u
/* outcome = judge by default (docs/agent.md, "Judged by the outcome"). */
#define AGENT_DEFAULT_JUDGE_OUTCOME true
/* Pages per MADV_COLD call, at least: each call costs ~16 us and ~0.16 us
 * a page (a fill's TLB flush included); 64 made it 0.8 us of the agent's
 * CPU per event on CPython's random scan, 256 0.4. */
#define AGENT_COLD_CHUNK 256u
/* Misses of a kernel-readahead-served stream taken as served again
 * without a pagemap read (leap_decide(), served_gap()). */
#define AGENT_KRA_TRUST 3u

#define AGENT_MAX_CGROUP_POLICIES 64
#define AGENT_WORKERS_AUTO	  (~0u)

struct agent_cgroup_policy {
	char path[PATH_MAX]; /* cgroup v2 directory */
	struct agent_policy policy;
	int line; /* where its section starts, for messages */
};

struct agent_config {
	struct agent_policy def; /* [default]: pids and cgroups without a section */
	struct agent_cgroup_policy cgroups[AGENT_MAX_CGROUP_POLICIES];
	int ncgroups;
	/* [agent] */
	unsigned ring_kb;	 /* BPF ring buffer size */
	unsigned streams;	 /* stream table capacity */
	unsigned idle_timeout_s; /* streams idle this long are dropped */
	/* Threads that issue windows (issuer.h); 0: the event thread itself;
	 * AGENT_WORKERS_AUTO: issuer_default_workers(). */
	unsigned workers;
	/* Windows one target may have waiting for a worker (1..64): the
	 * oldest is dropped past it (issuer.h). */
	unsigned queue_depth;
	unsigned prefetch_rate; /* pages/s for all targets together; 0: no cap */
	/* How often a target's memory.stat is read while it swaps in, so that
	 * reclaim sees its LRU lists as they are (memflush.h); 0: never. */
	unsigned memcg_flush_ms;
	/* Shared regions several processes read upwards at once followed
	 * where the data is (include/leap/sweep.h); default on. */
	bool sweeps;
};

void agent_config_default(struct agent_config *c);
/*
 * Parses path into *c (defaults first).  On error returns -1 and writes
 * "FILE:LINE: reason" to err; *c is then unspecified, so callers parse into
 * a scratch copy and keep their old config (SIGHUP reload).
 */
int agent_config_load(const char *path, struct agent_config *c, char *err, size_t errlen);
/* Same, from a string (tests); name is used in messages. */
int agent_config_parse_string(const char *text, const char *name, struct agent_config *c,
			      char *err, size_t errlen);
/* The policy for a cgroup path, or the default. */
const struct agent_policy *agent_config_policy_for(const struct agent_config *c,
						   const char *cgroup_path);
const char *agent_mode_name(enum agent_mode m);
int agent_mode_parse(const char *s, enum agent_mode *out);

#endif
