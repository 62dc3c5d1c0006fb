// SPDX-License-Identifier: MIT
/* Set-up, event loop and tear-down shared by attach and run (session.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "clock.h"
#include "hooks.h"
#include "memflush.h"
#include "metrics.h"
#include "session.h"
#include "state.h"

/* ---- signals ------------------------------------------------------------------ */

static volatile sig_atomic_t got_stop, got_reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_reload = 1;
	else if (sig != SIGCHLD) /* SIGCHLD only interrupts the wait */
		got_stop = sig;
}

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	/* No SA_RESTART: the ring buffer wait returns -EINTR promptly. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool session_interrupted(void)
{
	return got_stop != 0;
}

/* ---- set-up --------------------------------------------------------------------- */

static void log_cb(void *ctx, enum leap_log_level level, const char *msg)
{
	bool verbose = ctx != NULL;

	if (level <= LEAP_LOG_WARN || (verbose && level <= LEAP_LOG_INFO))
		fprintf(stderr, "leap-agent: %s\n", msg);
}

int session_config(struct session *s, const struct agent_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	return agent_opts_load_config(o, &s->cfg);
}

int session_guard(struct session *s, struct run_cgroup *cg)
{
	int rc;

	if (s->o->kernel_ra_off && page_cluster_off())
		fprintf(stderr, "leap-agent: warning: could not set vm.page-cluster\n");
	rc = guardian_start(&s->guard, cg);
	if (rc)
		page_cluster_restore();
	return rc;
}

/* The largest trend any policy accepts: farther faults need no wake-up. */
static uint64_t wake_delta_max(const struct agent_config *c)
{
	uint64_t m = c->def.params.max_delta;

	for (int i = 0; i < c->ncgroups; i++) {
		uint64_t d = c->cgroups[i].policy.params.max_delta;

		if (d == 0 || m == 0)
			return 0; /* a policy without a cap: wake for every miss */
		m = d > m ? d : m;
	}
	return m;
}

/* Backend mode: the link to leap-swapd, opened while we may still open the
 * device (its size) and before the observer (which needs its dev_t). */
static int start_backend(struct agent *a, const struct agent_opts *o)
{
	char err[512];
	int rc;

	if (!o->backend_sock)
		return 0;
	a->ex.be = calloc(1, sizeof(*a->ex.be));
	if (!a->ex.be)
		return -ENOMEM;
	rc = backend_open(a->ex.be, o->backend_sock, o->backend_dev, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "leap-agent: backend: %s\n", err);
		free(a->ex.be);
		a->ex.be = NULL;
		return rc;
	}
	backend_stat(a->ex.be, "hits", &a->ex.be_hits0);
	a->ex.be_swapcache = !o->backend_cache_only;
	if (a->ex.be_swapcache && !a->ex.prefetch_ok) {
		/* Kernels before 5.15 refuse WILLNEED: the cache alone still works. */
		fprintf(stderr, "leap-agent: %s: %s\n", a->ex.prefetch_why,
			o->backend_into_given ? "--backend-into swapcache needs it; use "
						"--backend-into cache"
					      : "pushing to leap-swapd's cache only "
						"(--backend-into cache)");
		if (o->backend_into_given)
			return -ENOTSUP;
		a->ex.be_swapcache = false;
	}
	return 0;
}

static void stop_backend(struct agent *a)
{
	if (!a->ex.be)
		return;
	backend_close(a->ex.be);
	free(a->ex.be);
	a->ex.be = NULL;
}

static int start_observer(struct agent *a, const struct agent_opts *o)
{
	struct leap_observer_opts oo = {
		.backend_dev = a->ex.be ? a->ex.be->kdev : 0,
		.hook = o->hook,
		.ringbuf_bytes = (o->ring_kb ? o->ring_kb : a->config.ring_kb) * 1024u,
		/* Only misses, hits and swap faults reach us; misses and hits on
		 * a look-ahead marker wake us at once, the rest in batches. */
		.swap_events_only = true,
		.wake_delta_max = wake_delta_max(&a->config),
		.arm_on_swap = !o->fault_hooks_always,
		.wake_when_busy = o->wakeups_always,
		.count_swap_cache_hits = o->swap_cache_hits,
		.log = log_cb,
		.log_ctx = o->verbose ? (void *)1 : NULL,
		.on_event = agent_on_event,
		.event_ctx = a,
	};
	int rc;

	/* Round the config's ring size to a power of two. */
	while (oo.ringbuf_bytes & (oo.ringbuf_bytes - 1))
		oo.ringbuf_bytes &= oo.ringbuf_bytes - 1;
	rc = leap_observer_open(&oo, &a->obs);
	if (rc) {
		fprintf(stderr, "leap-agent: cannot load the BPF observer: %s%s\n",
			strerror(-rc),
			rc == -EPERM   ? " (run as root)"
			: rc == -EBUSY ? " (another leap-agent is running)"
				       : "");
		return rc;
	}
	a->swap_cache_hits = o->swap_cache_hits; /* the core's config */
	rc = agent_attach_observer(a, a->obs, o->record_path);
	if (rc)
		return rc;
	a->verbose = o->verbose;
	a->bpf_stats = o->bpf_stats;
	if (o->bpf_stats) {
		leap_observer_enable_prog_stats(a->obs);
		a->host_faults0 = host_faults_now();
	}
	return 0;
}

/* Whether the config sets a pages-per-second budget anywhere. */
static bool config_has_budget(const struct agent_config *c)
{
	if (c->prefetch_rate || c->def.prefetch_rate)
		return true;
	for (int i = 0; i < c->ncgroups; i++)
		if (c->cgroups[i].policy.prefetch_rate)
			return true;
	return false;
}

/* The workers that issue windows: --workers, else [agent] workers, else a
 * quarter of the CPUs (issuer.h).  Budgets are the workers' to keep: a
 * config with one and no workers asked for gets one. */
static int start_issuer(struct agent *a, const struct agent_opts *o)
{
	bool budget = config_has_budget(&a->config);
	unsigned n = o->workers >= 0			       ? (unsigned)o->workers
		     : a->config.workers == AGENT_WORKERS_AUTO ? issuer_default_workers()
							       : a->config.workers;
	int rc;

	if (n == 0 && budget) {
		if (o->workers < 0 && a->config.workers == AGENT_WORKERS_AUTO)
			n = 1;
		else
			fprintf(stderr, "leap-agent: warning: prefetch_rate is kept by "
					"the workers; with none it is not applied\n");
	}
	rc = agent_start_issuer(a, n);

	if (rc)
		fprintf(stderr, "leap-agent: cannot start %u prefetch workers: %s\n", n,
			strerror(-rc));
	return rc ? -1 : 0;
}

int session_start(struct session *s)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a || agent_init(a, &s->cfg, !s->o->prefetch_cpu_any)) {
		fprintf(stderr, "leap-agent: out of memory\n");
		free(a);
		return -1;
	}
	s->a = a;
	a->hold_all_kernel_ra = s->o->kernel_ra_defer;
	install_signals();
	return start_backend(a, s->o) || start_observer(a, s->o) ? -1 : 0;
}

void session_warn_observing(const struct session *s)
{
	if (!s->a->ex.prefetch_ok && !s->a->ex.be)
		fprintf(stderr, "leap-agent: %s: observing only\n",
			s->a->ex.prefetch_why);
}

/*
 * The prefetch workers start only after the drop: capabilities are per
 * thread (capset(2) sets the caller's; libcap's cap_set_proc() is that
 * call unless the program is linked with libpsx), and a thread keeps the
 * sets it was created with.  Workers started before it kept all of root's
 * (CapEff 000001fffeffffff beside the main thread's 0000008000880000).
 * So does the thread that reads the targets' memory.stat (memflush.h).
 */
int session_drop_caps(struct session *s, bool keep_sys_admin)
{
	int rc = agent_drop_caps(s->caps, sizeof(s->caps), keep_sys_admin);

	if (rc) {
		snprintf(s->caps, sizeof(s->caps), "unchanged (drop failed: %s)",
			 strerror(-rc));
		fprintf(stderr, "leap-agent: warning: could not drop capabilities: %s\n",
			strerror(-rc));
	}
	state_write(s->a, s->caps);
	rc = memflush_start(&s->a->memflush);
	if (rc)
		fprintf(stderr, "leap-agent: warning: no thread for memory.stat: %s\n",
			strerror(-rc));
	return start_issuer(s->a, s->o);
}

void session_clock_start(struct session *s)
{
	s->t0_ns = mono_ns();
	s->cpu0 = cpu_now();
}

/* ---- the loop ---------------------------------------------------------------------- */

static void reload(struct session *s)
{
	struct agent_config fresh;
	char err[1024];

	if (!s->o->config_path) {
		fprintf(stderr, "leap-agent: SIGHUP: no --config to reload\n");
	} else if (agent_config_load(s->o->config_path, &fresh, err, sizeof(err))) {
		fprintf(stderr,
			"leap-agent: reload refused, keeping the old policy: %s\n", err);
	} else {
		agent_opts_override(s->o, &fresh);
		agent_apply_config(s->a, &fresh);
		fprintf(stderr, "leap-agent: reloaded %s\n", s->o->config_path);
	}
}

/* Once a second: housekeeping, the state file, the metrics textfile.
 * Whether to go on. */
static bool tick(struct session *s, pid_t child, unsigned *textfile_warned)
{
	struct agent *a = s->a;

	agent_tick(a, mono_ns());
	state_write(a, s->caps); /* counters for stats, every second */
	if (s->o->metrics_textfile) {
		char err[512];

		if (agent_metrics_textfile(s->o->metrics_textfile, err, sizeof(err)) &&
		    !(*textfile_warned)++)
			fprintf(stderr, "leap-agent: metrics: %s\n", err);
	}
	if (child <= 0 && a->ntargets == 0 && !s->o->keep_running) {
		fprintf(stderr, "leap-agent: every target has exited\n");
		return false;
	}
	return true;
}

void session_loop(struct session *s, pid_t child, int *child_status)
{
	struct agent *a = s->a;
	uint64_t last_tick = mono_ns();
	unsigned textfile_warned = 0;

	while (!got_stop) {
		int rc = leap_observer_poll(a->obs, 100);

		/* The observer wakes us only for major faults or a backlog: a quiet
		 * timeout may still leave minor-fault events (hits) to read. */
		if (rc == 0)
			rc = leap_observer_consume(a->obs);
		if (rc < 0 && rc != -EINTR) {
			fprintf(stderr, "leap-agent: ring buffer: %s\n", strerror(-rc));
			break;
		}
		if (got_reload) {
			got_reload = 0;
			reload(s);
		}
		hooks_disarm_if_idle(a, mono_ns());
		/* A target stood down or came back, the hooks came on or off:
		 * status shows it now, not at the next tick. */
		if (a->state_dirty)
			state_write(a, s->caps);
		if (mono_ns() - last_tick > 1000000000ULL) {
			last_tick = mono_ns();
			if (!tick(s, child, &textfile_warned))
				break;
		}
		if (child > 0 && waitpid(child, child_status, WNOHANG) == child)
			break;
	}
	leap_observer_consume(a->obs); /* what the last faults left behind */
}

json_object *session_summary(struct session *s)
{
	return summary_build(s->a, (double)(mono_ns() - s->t0_ns) / 1e9,
			     cpu_since(s->cpu0));
}

void session_end(struct session *s)
{
	state_remove();
	/* A stopped agent's metrics must not be scraped as if live. */
	if (s->o->metrics_textfile)
		unlink(s->o->metrics_textfile);
	if (s->a) {
		agent_stop_issuer(s->a); /* the workers use the observer's maps */
		leap_observer_close(s->a->obs);
		stop_backend(s->a);
		agent_fini(s->a);
		free(s->a);
		s->a = NULL;
	}
	guardian_finish(&s->guard);
}
