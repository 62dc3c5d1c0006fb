/* SPDX-License-Identifier: MIT */
/*
 * One agent's life, as attach and run share it: the policy file, the
 * guardian, the agent with its backend link and BPF observer, dropping
 * capabilities, the event loop, the summary, and tear-down.  The
 * subcommands add their targets and, for run, the command.
 */
#ifndef LEAP_AGENT_SESSION_H
#define LEAP_AGENT_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "agent.h"
#include "guardian.h"
#include "options.h"
#include "summary.h"

struct session {
	const struct agent_opts *o;
	struct agent_config cfg;
	struct agent *a; /* NULL until session_start() */
	struct guardian guard;
	char caps[256]; /* the capabilities kept, for status */
	uint64_t t0_ns; /* session_clock_start() */
	struct cpu_time cpu0;
};

/* Loads the policy file (with the command line's overrides); 0 or -1. */
int session_config(struct session *s, const struct agent_opts *o);
/*
 * vm.page-cluster off when asked, and the guardian that restores it and
 * removes cg (run's cgroup; NULL for attach) once the agent is gone.
 */
int session_guard(struct session *s, struct run_cgroup *cg);
/* The agent, its signal handlers, the backend link and the observer;
 * 0 or -1 after saying why.  No prefetch worker yet: session_drop_caps(). */
int session_start(struct session *s);
/* Prints a warning when the agent will observe only. */
void session_warn_observing(const struct session *s);
/* Drops the capabilities the agent no longer needs, publishes the state
 * file and starts the prefetch workers, which inherit the dropped sets.
 * keep_sys_admin: backend mode reads pagemaps of processes still to come.
 * 0, or -1 when the workers could not start (said). */
int session_drop_caps(struct session *s, bool keep_sys_admin);
/* The wall and CPU clocks of the summary start now. */
void session_clock_start(struct session *s);
/*
 * Handles events until SIGINT/SIGTERM, child's exit (child > 0: its
 * status into *child_status), or (no child, without --keep-running) no
 * target left.  SIGHUP reloads the policy file.
 */
void session_loop(struct session *s, pid_t child, int *child_status);
/* Whether SIGINT or SIGTERM ended the loop. */
bool session_interrupted(void);
/* The summary since session_clock_start(); the caller owns it. */
json_object *session_summary(struct session *s);
/* Removes what the session published, closes the observer and the backend
 * link, frees the agent and lets the guardian undo its changes. */
void session_end(struct session *s);

#endif
