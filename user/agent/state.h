/* SPDX-License-Identifier: MIT */
/*
 * The running agent's state file, AGENT_STATE_FILE: what `status`, `stats`
 * and the metrics export show beyond the pinned BPF maps (targets and
 * their policies, matched cgroups' paths, the agent's counters and
 * reaction histogram).  Its one writer and its readers live in state.c;
 * its keys are named here and nowhere else.
 */
#ifndef LEAP_AGENT_STATE_H
#define LEAP_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define AGENT_STATE_DIR	 "/run/leap"
#define AGENT_STATE_FILE AGENT_STATE_DIR "/agent.json"

/* Top level. */
#define STATE_PID	      "pid"
#define STATE_HOOK	      "hook"
#define STATE_PREFETCH	      "prefetch"	/* agent_prefetch_via() */
#define STATE_PREFETCH_REASON "prefetch_reason" /* why prefetching is off */
#define STATE_PUSHES_ONLY     "pushes_only"	/* agent_pushes_only() */
#define STATE_CAPS	      "capabilities"
#define STATE_FAULT_HOOKS     "fault_hooks" /* hooks_state() */
#define STATE_BACKEND_SOCKET  "backend_socket"
#define STATE_TARGETS	      "targets"	 /* array of targets */
#define STATE_AGENT	      "agent"	 /* counters.h, CPU times, BPF program stats */
#define STATE_REACTION	      "reaction" /* histograms: bounds_us, slots */
/* A target. */
#define STATE_T_KIND	    "kind" /* "cgroup" or "pid" */
#define STATE_T_TARGET	    "target"
#define STATE_T_MODE	    "mode"
#define STATE_T_STREAM	    "stream"
#define STATE_T_COLD_BEHIND "cold_behind"
#define STATE_T_SLOT	    "stats_slot"
#define STATE_T_MATCH	    "match"	/* cgroup: "exact" or "tree" */
#define STATE_T_CGROUP_ID   "cgroup_id" /* cgroup */
#define STATE_T_STATE	    "state"	/* cgroup: "watching" or "removed" */
#define STATE_T_LEAVES	    "leaves"	/* cgroup: [{cgroup_id, path}] */
#define STATE_T_PREFETCH    "prefetch"	/* "prefetching" or "standing down" */
#define STATE_T_WHY	    "why"	/* the last verdict (cost.h), or "" */
/* outcome = judge: the target's outcome judge since its last probe
 * (outcome.h), an object of the STATE_O_ keys */
#define STATE_T_OUTCOME	    "outcome"
#define STATE_L_PATH	    "path"
#define STATE_O_VERDICT	    "verdict" /* leap_outcome_verdict_name() */
#define STATE_O_HELD_EPOCHS "held_epochs"
#define STATE_O_COMPARISONS "comparisons"
/* held epochs not compared (a gap in the swap accesses, too few pages,
 * our windows' lead in the held epoch), and of them those for the lead */
#define STATE_O_DROPPED	     "dropped"
#define STATE_O_DROPPED_LEAD "dropped_for_lead"
#define STATE_O_RATIOS	     "ratios_pct" /* [...], the last LEAP_OUTCOME_JUDGED_MAX */
#define STATE_O_MEDIAN	     "median_pct"
/* The agent object beyond the counters. */
#define STATE_A_CPU_USER     "cpu_user_s"
#define STATE_A_CPU_SYSTEM   "cpu_system_s"
#define STATE_A_PREFETCH_CPU "prefetch_syscall_cpu_s"
#define STATE_A_BPF_PROGS    "bpf_progs" /* {name: {run_time_ns, run_cnt}} */
#define STATE_A_RUN_TIME     "run_time_ns"
#define STATE_A_RUN_CNT	     "run_cnt"
#define STATE_A_WORKER_BUSY  "worker_busy_ns_each" /* [ns] per worker */
#define STATE_A_QUEUE_DEPTH  "queue_depth"	   /* windows queued now */
/* The reaction histograms. */
#define STATE_R_BOUNDS "bounds_us"
#define STATE_R_SLOTS  "slots" /* {"slot": {counts, sum_us}} */
#define STATE_R_COUNTS "counts"
#define STATE_R_SUM    "sum_us"

struct agent;

/*
 * Writes the state file atomically (a temporary file renamed over it):
 * at start and every second while the agent runs.  caps: the capabilities
 * the agent kept.
 */
void state_write(struct agent *a, const char *caps);
/* The targets as the state file shows them (summaries carry them too). */
json_object *state_targets_json(const struct agent *a);
/* Removes it: a stopped agent's state must not look live. */
void state_remove(void);

/* The state file, parsed; NULL when there is none (no agent running). */
json_object *state_read(void);
/* o[key], or NULL (o may be NULL). */
json_object *state_get(json_object *o, const char *key);
/* o[key] as a string, or dflt. */
const char *state_str(json_object *o, const char *key, const char *dflt);
/* The agent object's workers: how many, and worker i's busy time in
 * seconds (agent_workers_json()). */
size_t state_workers(json_object *ag);
double state_worker_busy_s(json_object *ag, size_t i);
/* Whether a hit is a major fault (backend mode pushing to leap-swapd only). */
bool state_pushes_only(json_object *st);
/* The cgroup target owning a stats slot (NULL for slot 0, the pids'). */
json_object *state_target_of_slot(json_object *st, uint32_t slot);
/* The path of a matched cgroup, or NULL when not named yet. */
const char *state_leaf_path(json_object *st, uint64_t id);
/*
 * The reaction histogram of slot k: up to max bounds (seconds) into
 * bounds, max + 1 counts (the last above every bound) and the sum in
 * seconds.  The number of bounds, 0 when there is none.
 */
int state_histogram(json_object *st, uint32_t k, double *bounds, uint64_t *counts,
		    double *sum, int max);

#endif
