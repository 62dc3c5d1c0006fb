// SPDX-License-Identifier: MIT
/*
 * leap-agent: Leap's majority-trend prefetcher for swapped memory on a stock
 * kernel.  Subcommands:
 *   attach  watch cgroups / pids until SIGINT or SIGTERM (SIGHUP reloads)
 *   run     run a command in a fresh memory-limited cgroup under a policy
 *   stats   live per-cgroup counters from the pinned stats map
 *   status  kernel features found and the running agent, if any
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/agent.h"
#include "agent/caps.h"
#include "agent/cgroup.h"
#include "agent/config.h"
#include "agent/stats_cmd.h"
#include "leap/size.h"

#define STATE_DIR    AGENT_STATE_DIR
#define STATE_FILE   AGENT_STATE_FILE
#define PAGE_CLUSTER "/proc/sys/vm/page-cluster"

const char *argp_program_version = "leap-agent 0.1";
const char *argp_program_bug_address = "the leap issue tracker";

/* ---- options shared by attach and run ----------------------------------- */

enum {
	OPT_HOOK = 1000,
	OPT_RINGBUF,
	OPT_KERNEL_RA,
	OPT_BPF_STATS,
	OPT_MEMLIMIT,
	OPT_POLICY,
	OPT_JSON,
	OPT_INTERVAL,
	OPT_BACKEND,
	OPT_BACKEND_DEV,
	OPT_BACKEND_INTO,
	OPT_KEEP_RUNNING,
	OPT_CGROUP_EXACT,
	OPT_METRICS_TEXTFILE,
	OPT_COLD_BEHIND,
};

struct opts {
	const char *config_path;
	const char *cgroups[AGENT_MAX_TARGETS];
	bool cgroup_exact[AGENT_MAX_TARGETS];
	int ncgroups;
	const char *metrics_textfile;
	uint32_t pids[AGENT_MAX_TARGETS];
	int npids;
	bool keep_running; /* attach: stay up with no targets (a service) */
	enum leap_hook hook;
	unsigned ring_kb;
	bool kernel_ra_off;   /* --kernel-readahead off */
	bool kernel_ra_defer; /* --kernel-readahead defer */
	const char *backend_sock;
	const char *backend_dev;
	bool backend_cache_only; /* --backend-into cache */
	bool backend_into_given; /* --backend-into named: no fallback */
	bool bpf_stats;
	bool verbose;
	uint64_t mem_limit;
	int policy;	  /* -1: from config */
	long cold_behind; /* --cold-behind; -1: from config */
	const char *json_path;
	bool json;
	double interval;
	char **cmd;
};

static const struct argp_option common_opts[] = {
	{"config", 'c', "FILE", 0, "Policy file (INI; see README)", 0},
	{"hook", OPT_HOOK, "auto|fentry|tracepoint", 0,
	 "Fault hooks (default auto: fentry where the kernel allows it)", 0},
	{"ringbuf-kb", OPT_RINGBUF, "KB", 0, "BPF ring buffer size (power of two)", 0},
	{"kernel-readahead", OPT_KERNEL_RA, "keep|defer|off", 0,
	 "keep: Linux's swap readahead stays on; Leap leaves the streams it serves to it "
	 "when they write or find zero-filled swap entries, and prefetches past it on "
	 "other read streams.  defer: Leap leaves every "
	 "stream it serves to it.  off: set vm.page-cluster=0 while running so Leap "
	 "alone prefetches (restored at exit).  Default: keep",
	 0},
	{"cold-behind", OPT_COLD_BEHIND, "PAGES", 0,
	 "Give MADV_COLD to the pages a fill (a read-modify-write stream the kernel's "
	 "readahead serves) went past PAGES pages ago, so that reclaim takes them "
	 "first (Leap's eager eviction); 0: never.  Overrides the policy file's "
	 "cold_behind.  Default 256",
	 0},
	{"bpf-stats", OPT_BPF_STATS, NULL, 0,
	 "Measure BPF run time per event (bpf_enable_stats)", 0},
	{"backend", OPT_BACKEND, "SOCKET", 0,
	 "Backend mode: push the swap slots of the engine's windows to this leap-swapd "
	 "control socket (the engine runs on virtual addresses; slots come from "
	 "/proc/PID/pagemap)",
	 0},
	{"backend-dev", OPT_BACKEND_DEV, "DEV", 0,
	 "The swap block device leap-swapd serves (e.g. /dev/loop0); with --backend", 0},
	{"backend-into", OPT_BACKEND_INTO, "swapcache|cache", 0,
	 "With --backend: swapcache (default) also process_madvises the pushed pages, "
	 "so the kernel reads them from leap-swapd's cache into its swap cache and the "
	 "fault is minor; cache only pushes (the fault stays major, served from "
	 "leap-swapd's cache)",
	 0},
	{"verbose", 'v', NULL, 0, "Log more", 0},
	{},
};

static const struct argp_option attach_opts[] = {
	{"cgroup", 'g', "PATH", 0,
	 "Watch this cgroup v2 directory and every cgroup below it, present or future "
	 "(repeatable; the deepest watched cgroup's policy applies)",
	 0},
	{"cgroup-exact", OPT_CGROUP_EXACT, "PATH", 0,
	 "Watch this cgroup only, not its descendants (repeatable)", 0},
	{"metrics-textfile", OPT_METRICS_TEXTFILE, "PATH", 0,
	 "Write Prometheus metrics to PATH every second, atomically (for "
	 "node_exporter's textfile collector)",
	 0},
	{"pid", 'p', "PID", 0, "Watch this process (repeatable)", 0},
	{"keep-running", OPT_KEEP_RUNNING, NULL, 0,
	 "Stay attached when there is nothing (left) to watch: the service's form, "
	 "whose default config names no target yet",
	 0},
	{},
};

static const struct argp_option run_opts[] = {
	{"memory-limit", OPT_MEMLIMIT, "SIZE", 0,
	 "Memory limit of the command's cgroup (e.g. 64M)", 0},
	{"policy", OPT_POLICY, "leap|observe|off", 0,
	 "Policy for the command (overrides the config's [default] mode)", 0},
	{"json", OPT_JSON, "PATH", 0, "Write a JSON summary to PATH", 0},
	{},
};

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	struct opts *o = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case 'c':
		o->config_path = arg;
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_HOOK:
		if (!strcmp(arg, "auto"))
			o->hook = LEAP_HOOK_AUTO;
		else if (!strcmp(arg, "fentry"))
			o->hook = LEAP_HOOK_FENTRY;
		else if (!strcmp(arg, "tracepoint"))
			o->hook = LEAP_HOOK_TRACEPOINT;
		else
			argp_error(state,
				   "--hook takes auto, fentry or tracepoint, not '%s'",
				   arg);
		break;
	case OPT_RINGBUF:
		v = strtoul(arg, &end, 10);
		if (*end || v < 4 || v > (1u << 20) || (v & (v - 1)))
			argp_error(
				state,
				"--ringbuf-kb must be a power of two from 4 to 1048576");
		o->ring_kb = (unsigned)v;
		break;
	case OPT_KERNEL_RA:
		if (strcmp(arg, "keep") && strcmp(arg, "defer") && strcmp(arg, "off"))
			argp_error(
				state,
				"--kernel-readahead takes keep, defer or off, not '%s'",
				arg);
		o->kernel_ra_off = !strcmp(arg, "off");
		o->kernel_ra_defer = !strcmp(arg, "defer");
		break;
	case OPT_COLD_BEHIND:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v > (1u << 20))
			argp_error(state,
				   "--cold-behind takes a page count up to 1048576 (0: "
				   "off), not '%s'",
				   arg);
		o->cold_behind = (long)v;
		break;
	case OPT_BPF_STATS:
		o->bpf_stats = true;
		break;
	case OPT_BACKEND:
		o->backend_sock = arg;
		break;
	case OPT_BACKEND_DEV:
		o->backend_dev = arg;
		break;
	case OPT_BACKEND_INTO:
		if (strcmp(arg, "swapcache") && strcmp(arg, "cache"))
			argp_error(state, "--backend-into takes swapcache or cache");
		o->backend_cache_only = !strcmp(arg, "cache");
		o->backend_into_given = true;
		break;
	case ARGP_KEY_END:
		if (!o->backend_sock != !o->backend_dev)
			argp_error(state, "--backend and --backend-dev go together");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_attach(int key, char *arg, struct argp_state *state)
{
	struct opts *o = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input; /* common options */
		return 0;
	case 'g':
	case OPT_CGROUP_EXACT:
		if (o->ncgroups == AGENT_MAX_TARGETS)
			argp_error(state, "too many --cgroup");
		o->cgroup_exact[o->ncgroups] = key == OPT_CGROUP_EXACT;
		o->cgroups[o->ncgroups++] = arg;
		return 0;
	case OPT_METRICS_TEXTFILE:
		if (!*arg || arg[strlen(arg) - 1] == '/')
			argp_error(state,
				   "--metrics-textfile needs a file name, not '%s'", arg);
		o->metrics_textfile = arg;
		return 0;
	case 'p':
		v = strtoul(arg, &end, 10);
		if (*end || v == 0 || v > 0x3fffffff)
			argp_error(state, "--pid takes a process id, not '%s'", arg);
		if (o->npids == AGENT_MAX_TARGETS)
			argp_error(state, "too many --pid");
		o->pids[o->npids++] = (uint32_t)v;
		return 0;
	case OPT_KEEP_RUNNING:
		o->keep_running = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	default:
		return parse_common(key, arg, state);
	}
}

static error_t parse_run(int key, char *arg, struct argp_state *state)
{
	struct opts *o = state->input;
	enum agent_mode m;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input; /* common options */
		return 0;
	case OPT_MEMLIMIT:
		if (leap_parse_size(arg, &o->mem_limit) || o->mem_limit < (1 << 20))
			argp_error(state,
				   "--memory-limit needs a size of at least 1M, not '%s'",
				   arg);
		return 0;
	case OPT_POLICY:
		if (agent_mode_parse(arg, &m))
			argp_error(state, "--policy takes leap, observe or off, not '%s'",
				   arg);
		o->policy = (int)m;
		return 0;
	case OPT_JSON:
		o->json_path = arg;
		return 0;
	case ARGP_KEY_ARGS:
		o->cmd = state->argv + state->next;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "give the command to run after --");
		return 0;
	default:
		return parse_common(key, arg, state);
	}
}

/* ---- signals ----------------------------------------------------------- */

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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- vm.page-cluster while running, and the guardian ------------------- */

static char saved_page_cluster[16];

static int page_cluster_off(void)
{
	FILE *f = fopen(PAGE_CLUSTER, "re");

	if (!f || !fgets(saved_page_cluster, sizeof(saved_page_cluster), f)) {
		if (f)
			fclose(f);
		saved_page_cluster[0] = '\0';
		return -errno;
	}
	fclose(f);
	f = fopen(PAGE_CLUSTER, "we");
	if (!f)
		return -errno;
	fputs("0\n", f);
	return fclose(f) ? -errno : 0;
}

static void page_cluster_restore(void)
{
	FILE *f;

	if (!saved_page_cluster[0])
		return;
	f = fopen(PAGE_CLUSTER, "we");
	if (f) {
		fputs(saved_page_cluster, f);
		fclose(f);
	}
	saved_page_cluster[0] = '\0';
}

/*
 * The guardian undoes the agent's changes to the system (its cgroups,
 * vm.page-cluster) once the agent is gone, however it goes: it is forked
 * while the agent still has every capability and waits for its end of a
 * pipe to close, which happens on a clean exit and on a crash alike.  The
 * agent itself keeps no capability to remove cgroups (their parents are
 * mode 0555) once it has dropped its capabilities.
 */
struct guardian {
	pid_t pid;
	int fd; /* write end; closing it releases the guardian */
};

static int guardian_start(struct guardian *g, struct run_cgroup *cg)
{
	int p[2];
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (g->pid == 0) {
		/* Ctrl-C reaches the whole process group: outlive it. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		page_cluster_restore();
		if (cg)
			run_cgroup_destroy(cg);
		_exit(0);
	}
	close(p[0]);
	g->fd = p[1];
	return 0;
}

static void guardian_finish(struct guardian *g)
{
	if (g->pid <= 0)
		return;
	close(g->fd);
	waitpid(g->pid, NULL, 0);
	g->pid = 0;
}

/* ---- state file for `status` ------------------------------------------- */

/* Named counters into a JSON object. */
struct u64_field {
	const char *name;
	uint64_t v;
};

static void add_u64s(json_object *o, const struct u64_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, f[i].name, json_object_new_uint64(f[i].v));
}

static const char *prefetch_path(const struct agent *a)
{
	if (a->be && a->be->fd < 0)
		return "off (leap-swapd link lost)";
	if (a->be)
		return a->be_swapcache ? "leap-swapd+swapcache" : "leap-swapd";
	return a->prefetch_ok ? "process_madvise" : "off";
}

/*
 * Reaction latency histograms, one per stats slot in use: bounds, then
 * per-bucket (not cumulative) counts, the last one above every bound.
 */
static json_object *state_reaction(const struct agent *a)
{
	json_object *h = json_object_new_object(), *slots = json_object_new_object();
	json_object *bounds = json_object_new_array();

	for (int i = 0; i < AGENT_LAT_BUCKETS; i++)
		json_object_array_add(bounds,
				      json_object_new_int((int)agent_lat_bounds_us[i]));
	json_object_object_add(h, "bounds_us", bounds);
	for (uint32_t k = 0; k < LEAP_STATS_SLOTS; k++) {
		json_object *sl, *counts;
		bool used = a->lat_sum_us[k] != 0;
		char key[16];

		for (int i = 0; !used && i < a->ntargets; i++)
			used = a->targets[i].slot == k;
		if (!used)
			continue;
		sl = json_object_new_object();
		counts = json_object_new_array();
		for (int i = 0; i <= AGENT_LAT_BUCKETS; i++)
			json_object_array_add(counts,
					      json_object_new_uint64(a->lat_hist[k][i]));
		json_object_object_add(sl, "counts", counts);
		json_object_object_add(sl, "sum_us",
				       json_object_new_uint64(a->lat_sum_us[k]));
		snprintf(key, sizeof(key), "%u", k);
		json_object_object_add(slots, key, sl);
	}
	json_object_object_add(h, "slots", slots);
	return h;
}

/* Targets, with the cgroups matched under each (status, stats). */
static json_object *state_targets(struct agent *a)
{
	json_object *ts = json_object_new_array();

	for (int i = 0; i < a->ntargets; i++) {
		const struct agent_target *tg = &a->targets[i];
		json_object *t = json_object_new_object();
		bool cg = tg->kind == TARGET_CGROUP;

		json_object_object_add(t, "kind",
				       json_object_new_string(cg ? "cgroup" : "pid"));
		json_object_object_add(t, "target", json_object_new_string(tg->path));
		json_object_object_add(
			t, "mode",
			json_object_new_string(agent_mode_name(tg->policy.mode)));
		json_object_object_add(t, "stream",
				       json_object_new_string(leap_stream_key_name(
					       tg->policy.params.key)));
		json_object_object_add(t, "cold_behind",
				       json_object_new_int((int)tg->policy.cold_behind));
		json_object_object_add(t, "stats_slot",
				       json_object_new_int((int)tg->slot));
		if (cg) {
			json_object *ls = json_object_new_array();

			json_object_object_add(t, "match",
					       json_object_new_string(tg->policy.exact
									      ? "exact"
									      : "tree"));
			json_object_object_add(t, "cgroup_id",
					       json_object_new_uint64(tg->cgroup_id));
			json_object_object_add(
				t, "state",
				json_object_new_string(tg->gone ? "removed"
								: "watching"));
			for (int j = 0; j < a->leaves.n; j++) {
				const struct agent_leaf *f = &a->leaves.v[j];
				json_object *l;

				if (tg->gone || f->target_id != tg->cgroup_id || !f->path)
					continue;
				l = json_object_new_object();
				json_object_object_add(l, "cgroup_id",
						       json_object_new_uint64(f->id));
				json_object_object_add(l, "path",
						       json_object_new_string(f->path));
				json_object_array_add(ls, l);
			}
			json_object_object_add(t, "leaves", ls);
		}
		json_object_array_add(ts, t);
	}
	return ts;
}

static bool g_bpf_stats; /* --bpf-stats: BPF run time is measured */

/*
 * The agent's own counters, for `stats` and the metrics export (which
 * read them from the state file): the BPF map holds only what BPF and
 * the per-target prefetch counts share.
 */
static json_object *state_agent(struct agent *a)
{
	json_object *o = json_object_new_object();
	struct rusage ru;
	const struct u64_field f[] = {
		{"events", a->c.events},
		{"events_ignored", a->c.ignored},
		{"swap_faults", a->c.swap_faults},
		{"hits", a->c.hits},
		{"late_prefetches", a->c.late},
		{"lookaheads", a->c.lookaheads},
		{"nested_stride_windows", a->c.nested_strides},
		{"prefetched", a->c.prefetched},
		{"prefetch_syscalls", a->pf.stats.willneed.calls},
		{"prefetch_not_swapped", a->pf.stats.not_swapped},
		{"cold_behind_pages", a->pf.stats.cold_pages},
		{"processes_exited", a->c.exited},
	};

	add_u64s(o, f, sizeof(f) / sizeof(f[0]));
	getrusage(RUSAGE_SELF, &ru);
	json_object_object_add(o, "cpu_user_s",
			       json_object_new_double((double)ru.ru_utime.tv_sec +
						      ru.ru_utime.tv_usec / 1e6));
	json_object_object_add(o, "cpu_system_s",
			       json_object_new_double((double)ru.ru_stime.tv_sec +
						      ru.ru_stime.tv_usec / 1e6));
	json_object_object_add(o, "prefetch_syscall_cpu_s",
			       json_object_new_double(a->pf.stats.willneed.cpu_ns / 1e9));
	if (g_bpf_stats) {
		struct leap_prog_stats ps[16];
		json_object *progs = json_object_new_object();
		int n = leap_observer_prog_stats(a->obs, ps, 16);

		for (int i = 0; i < n; i++) {
			json_object *p = json_object_new_object();

			json_object_object_add(p, "run_time_ns",
					       json_object_new_uint64(ps[i].run_time_ns));
			json_object_object_add(p, "run_cnt",
					       json_object_new_uint64(ps[i].run_cnt));
			json_object_object_add(progs, ps[i].name, p);
		}
		json_object_object_add(o, "bpf_progs", progs);
	}
	if (a->be) {
		const struct u64_field b[] = {
			{"backend_queued", a->be->st.queued},
			{"backend_dropped", a->be->st.dropped},
			{"backend_out_of_range", a->be->st.out_of_range},
			{"backend_errors", a->be->st.errors},
			{"backend_ambiguous", a->c.ambiguous},
		};

		add_u64s(o, b, sizeof(b) / sizeof(b[0]));
	}
	return o;
}

/*
 * /run/leap/agent.json: what `status` and `stats` show beyond the pinned
 * maps.  Rewritten (atomically) at start and every second, with the
 * counters; caps NULL keeps the last ones given.
 */
static void write_state(struct agent *a, const char *caps)
{
	static char caps_kept[256];
	json_object *o = json_object_new_object();

	if (caps)
		snprintf(caps_kept, sizeof(caps_kept), "%s", caps);
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "hook",
			       json_object_new_string(leap_observer_hook_name(a->obs)));
	json_object_object_add(o, "prefetch", json_object_new_string(prefetch_path(a)));
	json_object_object_add(
		o, "prefetch_reason",
		json_object_new_string(a->prefetch_why ? a->prefetch_why : ""));
	json_object_object_add(o, "capabilities", json_object_new_string(caps_kept));
	if (a->be)
		json_object_object_add(o, "backend_socket",
				       json_object_new_string(a->be->path));
	json_object_object_add(o, "targets", state_targets(a));
	json_object_object_add(o, "agent", state_agent(a));
	json_object_object_add(o, "reaction", state_reaction(a));
	mkdir(STATE_DIR, 0755);
	if (json_object_to_file_ext(STATE_FILE ".tmp", o, JSON_C_TO_STRING_PRETTY) == 0)
		rename(STATE_FILE ".tmp", STATE_FILE);
	json_object_put(o);
	a->state_dirty = false;
}

/* ---- common set-up ------------------------------------------------------- */

static void log_cb(void *ctx, enum leap_log_level level, const char *msg)
{
	bool verbose = ctx != NULL;

	if (level <= LEAP_LOG_WARN || (verbose && level <= LEAP_LOG_INFO))
		fprintf(stderr, "leap-agent: %s\n", msg);
}

/* What the command line sets over every policy of the file. */
static void apply_overrides(const struct opts *o, struct agent_config *cfg)
{
	if (o->cold_behind < 0)
		return;
	cfg->def.cold_behind = (uint32_t)o->cold_behind;
	for (int i = 0; i < cfg->ncgroups; i++)
		cfg->cgroups[i].policy.cold_behind = (uint32_t)o->cold_behind;
}

static int load_config(const struct opts *o, struct agent_config *cfg)
{
	char err[1024];

	if (!o->config_path) {
		agent_config_default(cfg);
	} else if (agent_config_load(o->config_path, cfg, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		return -1;
	}
	apply_overrides(o, cfg);
	return 0;
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
static int start_backend(struct agent *a, const struct opts *o)
{
	char err[512];
	int rc;

	if (!o->backend_sock)
		return 0;
	a->be = calloc(1, sizeof(*a->be));
	if (!a->be)
		return -ENOMEM;
	rc = backend_open(a->be, o->backend_sock, o->backend_dev, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "leap-agent: backend: %s\n", err);
		free(a->be);
		a->be = NULL;
		return rc;
	}
	backend_stat(a->be, "hits", &a->be_hits0);
	a->be_swapcache = !o->backend_cache_only;
	if (a->be_swapcache && !a->prefetch_ok) {
		/* Kernels before 5.15 refuse WILLNEED: the cache alone still works. */
		fprintf(stderr, "leap-agent: %s: %s\n", a->prefetch_why,
			o->backend_into_given ? "--backend-into swapcache needs it; use "
						"--backend-into cache"
					      : "pushing to leap-swapd's cache only "
						"(--backend-into cache)");
		if (o->backend_into_given)
			return -ENOTSUP;
		a->be_swapcache = false;
	}
	return 0;
}

static void stop_backend(struct agent *a)
{
	if (!a->be)
		return;
	backend_close(a->be);
	free(a->be);
	a->be = NULL;
}

static int start_observer(struct agent *a, const struct opts *o)
{
	struct leap_observer_opts oo = {
		.backend_dev = a->be ? a->be->kdev : 0,
		.hook = o->hook,
		.ringbuf_bytes = (o->ring_kb ? o->ring_kb : a->config.ring_kb) * 1024u,
		/* Only misses, hits and swap faults reach us; misses and hits on
		 * a look-ahead marker wake us at once, the rest in batches. */
		.swap_events_only = true,
		.wake_delta_max = wake_delta_max(&a->config),
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
	agent_attach_observer(a, a->obs);
	g_bpf_stats = o->bpf_stats;
	if (o->bpf_stats)
		leap_observer_enable_prog_stats(a->obs);
	return 0;
}

/*
 * Backend mode on addresses reads swap slots from /proc/PID/pagemap, which
 * shows them only through a file opened with CAP_SYS_ADMIN (swapslot.h):
 * open the pid targets' files now, before the capabilities go.  Processes
 * that can appear later (cgroup targets, or targets still to come) need
 * the capability kept: returns whether to keep it.
 */
static bool preopen_targets(struct agent *a, bool more_later)
{
	bool keep = more_later;

	if (!a->be)
		return false;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];
		int rc;

		if (t->kind != TARGET_PID) {
			keep = true;
			continue;
		}
		rc = prefetch_preopen(&a->pf, t->tgid);
		if (rc)
			fprintf(stderr, "leap-agent: pid %u: /proc/%u/pagemap: %s\n",
				t->tgid, t->tgid, strerror(-rc));
	}
	return keep;
}

/* Keeps the agent's capabilities to the minimum; says what it kept. */
static void drop_caps(char *caps, size_t len, bool keep_sys_admin)
{
	int rc = agent_drop_caps(caps, len, keep_sys_admin);

	if (rc) {
		snprintf(caps, len, "unchanged (drop failed: %s)", strerror(-rc));
		fprintf(stderr, "leap-agent: warning: could not drop capabilities: %s\n",
			strerror(-rc));
	}
}

static double bpf_ns_per_event(struct agent *a)
{
	struct leap_prog_stats ps[16];
	uint64_t ns = 0, cnt = 0, sent;
	struct leap_cg_stats sum;
	int n = leap_observer_prog_stats(a->obs, ps, 16);

	for (int i = 0; i < n; i++) {
		ns += ps[i].run_time_ns;
		cnt += ps[i].run_cnt;
	}
	agent_totals(a, &sum);
	sent = sum.faults;
	/* Per user fault: all programs that run for one fault, together. */
	return sent ? (double)ns / (double)sent : (cnt ? (double)ns / (double)cnt : 0);
}

/* CPU time of the agent, user and system (process_madvise's page
 * allocation and swap-read submission count as system time). */
struct cpu_time {
	double user, sys;
};

static struct cpu_time cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct cpu_time){
		.user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		.sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	};
}

static struct cpu_time cpu_since(struct cpu_time t0)
{
	struct cpu_time t = cpu_now();

	return (struct cpu_time){.user = t.user - t0.user, .sys = t.sys - t0.sys};
}

static double per_event_us(double seconds, uint64_t events)
{
	return events ? seconds * 1e6 / (double)events : 0;
}

/* The summary both subcommands print when they stop. */

static void add_rates(json_object *o, const struct leap_cg_stats *s, bool backend)
{
	double acc, cov;

	agent_rates(s, backend, &acc, &cov);
	json_object_object_add(o, "accuracy", json_object_new_double(acc));
	json_object_object_add(o, "coverage", json_object_new_double(cov));
}

static json_object *summary(struct agent *a, double wall_s, struct cpu_time cpu,
			    bool bpf_stats)
{
	struct leap_cg_stats s;
	json_object *o = json_object_new_object();
	double own_cpu = cpu.user + cpu.sys - a->pf.stats.willneed.cpu_ns / 1e9;

	if (own_cpu < 0)
		own_cpu = 0;
	if (a->be) {
		a->be_hits1 = a->be_hits0;
		if (a->be->fd >= 0)
			backend_stat(a->be, "hits", &a->be_hits1);
	}
	agent_totals(a, &s);
	json_object_object_add(o, "wall_s", json_object_new_double(wall_s));
	json_object_object_add(o, "hook",
			       json_object_new_string(leap_observer_hook_name(a->obs)));
	{
		const struct u64_field f[] = {
			{"faults", s.faults},
			{"swapin_misses", s.swapin_misses},
			{"prefetched", s.prefetches},
			{"hits", s.prefetch_hits},
			{"prefetch_wasted", s.prefetch_wasted},
			{"events_sent", s.events_sent},
			{"events_dropped", s.events_dropped},
			{"events", a->c.events},
			{"events_ignored", a->c.ignored},
			{"swap_faults", a->c.swap_faults},
			{"late_prefetches", a->c.late},
			{"lookaheads", a->c.lookaheads},
			{"nested_stride_windows", a->c.nested_strides},
			{"held_for_kernel_readahead", a->c.held_kernel_ra},
			{"windows_beyond_kernel_readahead", a->c.beyond_kernel_ra},
			{"zero_filled_misses", a->c.zero_misses},
			{"quiet_sets", a->c.quiet_sets},
			{"quiet_lifts", a->c.quiet_lifts},
			{"prefetch_syscalls", a->pf.stats.willneed.calls},
			{"prefetch_not_swapped", a->pf.stats.not_swapped},
			{"prefetch_record_calls", a->pf.stats.record_calls},
			{"pagemap_scans", a->pf.pagemap.scans},
			{"pagemap_reads", a->pf.pagemap.reads},
			{"prefetch_map_errors", a->pf.stats.map_errors},
			{"cold_behind_pages", a->pf.stats.cold_pages},
		};

		add_u64s(o, f, sizeof(f) / sizeof(f[0]));
	}
	add_rates(o, &s, agent_pushes_only(a));
	json_object_object_add(o, "prefetch_via",
			       json_object_new_string(prefetch_path(a)));
	if (a->be) {
		const struct u64_field f[] = {
			{"backend_queued", a->be->st.queued},
			{"backend_dropped", a->be->st.dropped},
			{"backend_out_of_range", a->be->st.out_of_range},
			{"backend_errors", a->be->st.errors},
			{"backend_ambiguous", a->c.ambiguous},
			{"backend_cache_hits", a->be_hits1 - a->be_hits0},
			{"backend_other_device", a->be->st.other_device},
			{"backend_left_to_kernel", a->be->st.left_to_kernel},
			{"backend_no_offset", a->be->st.no_offset},
			{"backend_type_votes", a->be->st.type_votes},
			{"backend_type_switches", a->be->st.type_switches},
		};

		add_u64s(o, f, sizeof(f) / sizeof(f[0]));
		json_object_object_add(o, "backend_swap_type",
				       json_object_new_int(a->be->swap_type));
	}
	json_object_object_add(
		o, "agent_cpu_us_per_event",
		json_object_new_double(per_event_us(cpu.user + cpu.sys, a->c.events)));
	json_object_object_add(
		o, "agent_user_us_per_event",
		json_object_new_double(per_event_us(cpu.user, a->c.events)));
	/* What the kernel did inside process_madvise for the windows (page
	 * allocation, memcg charge and its reclaim, read submission) apart
	 * from the agent's own work: issue #10 asks for the latter. */
	json_object_object_add(o, "prefetch_syscall_cpu_s",
			       json_object_new_double(a->pf.stats.willneed.cpu_ns / 1e9));
	json_object_object_add(
		o, "prefetch_syscall_wall_s",
		json_object_new_double(a->pf.stats.willneed.wall_ns / 1e9));
	json_object_object_add(o, "cold_syscall_cpu_s",
			       json_object_new_double(a->pf.stats.cold.cpu_ns / 1e9));
	json_object_object_add(o, "cold_syscalls",
			       json_object_new_uint64(a->pf.stats.cold.calls));
	json_object_object_add(
		o, "agent_own_cpu_us_per_event",
		json_object_new_double(per_event_us(own_cpu, a->c.events)));
	json_object_object_add(o, "reaction_p50_us",
			       json_object_new_double(agent_latency_us(a, 50)));
	json_object_object_add(o, "reaction_p99_us",
			       json_object_new_double(agent_latency_us(a, 99)));
	if (bpf_stats) {
		struct leap_prog_stats ps[16];
		json_object *progs = json_object_new_object();
		int n = leap_observer_prog_stats(a->obs, ps, 16);

		json_object_object_add(o, "bpf_ns_per_fault",
				       json_object_new_double(bpf_ns_per_event(a)));
		/* Per program: where the BPF time goes. */
		for (int i = 0; i < n; i++) {
			json_object *p = json_object_new_object();

			json_object_object_add(p, "run_cnt",
					       json_object_new_uint64(ps[i].run_cnt));
			json_object_object_add(
				p, "ns_per_run",
				json_object_new_double(
					ps[i].run_cnt ? (double)ps[i].run_time_ns /
								(double)ps[i].run_cnt
						      : 0));
			json_object_object_add(progs, ps[i].name, p);
		}
		json_object_object_add(o, "bpf_progs", progs);
	}
	return o;
}

static void print_summary(json_object *o)
{
	fprintf(stderr,
		"leap-agent: wall %.2fs  faults %s  swap-in misses %s  prefetched %s  "
		"hits %s  "
		"accuracy %.1f%%  coverage %.1f%%  dropped %s  reaction p50 %.0fus p99 "
		"%.0fus\n",
		json_object_get_double(json_object_object_get(o, "wall_s")),
		json_object_get_string(json_object_object_get(o, "faults")),
		json_object_get_string(json_object_object_get(o, "swapin_misses")),
		json_object_get_string(json_object_object_get(o, "prefetched")),
		json_object_get_string(json_object_object_get(o, "hits")),
		100 * json_object_get_double(json_object_object_get(o, "accuracy")),
		100 * json_object_get_double(json_object_object_get(o, "coverage")),
		json_object_get_string(json_object_object_get(o, "events_dropped")),
		json_object_get_double(json_object_object_get(o, "reaction_p50_us")),
		json_object_get_double(json_object_object_get(o, "reaction_p99_us")));
}

/* Waits for events until *stop, ticking once a second; child: see run. */
static void event_loop(struct agent *a, pid_t child, int *child_status,
		       const struct opts *o)
{
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
			struct agent_config fresh;
			char err[1024];

			got_reload = 0;
			if (!o->config_path) {
				fprintf(stderr,
					"leap-agent: SIGHUP: no --config to reload\n");
			} else if (agent_config_load(o->config_path, &fresh, err,
						     sizeof(err))) {
				fprintf(stderr,
					"leap-agent: reload refused, keeping the old "
					"policy: %s\n",
					err);
			} else {
				apply_overrides(o, &fresh);
				agent_apply_config(a, &fresh);
				fprintf(stderr, "leap-agent: reloaded %s\n",
					o->config_path);
			}
		}
		if (mono_ns() - last_tick > 1000000000ULL) {
			last_tick = mono_ns();
			agent_tick(a, last_tick);
			write_state(a, NULL); /* counters for stats, every second */
			if (o->metrics_textfile) {
				char err[512];

				if (agent_metrics_textfile(o->metrics_textfile, err,
							   sizeof(err)) &&
				    !textfile_warned++)
					fprintf(stderr, "leap-agent: metrics: %s\n", err);
			}
			if (child <= 0 && a->ntargets == 0 && !o->keep_running) {
				fprintf(stderr, "leap-agent: every target has exited\n");
				break;
			}
		}
		if (child > 0 && waitpid(child, child_status, WNOHANG) == child)
			break;
	}
	leap_observer_consume(a->obs); /* what the last faults left behind */
}

/* ---- attach ------------------------------------------------------------ */

static int cmd_attach(int argc, char **argv)
{
	static const struct argp_child children[] = {{NULL, 0, NULL, 0}};
	struct argp common = {common_opts, parse_common, NULL, NULL, NULL, NULL, NULL};
	struct argp_child kids[] = {{&common, 0, "Common options:", 0}, children[0]};
	struct argp argp = {
		attach_opts,
		parse_attach,
		NULL,
		"Watch cgroups and processes and prefetch their swapped pages.\v"
		"Targets come from --cgroup, --pid and the config's [cgroup PATH] "
		"sections.  SIGINT/SIGTERM detach and remove the pins; SIGHUP reloads "
		"the config (a bad file keeps the old policy; new [cgroup] sections "
		"take a restart).  Without --keep-running the agent exits 0 when no "
		"target is left.",
		kids,
		NULL,
		NULL};
	struct opts o = {.policy = -1, .cold_behind = -1};
	struct guardian guard = {0};
	struct agent_config cfg;
	struct agent *a;
	char err[1024], caps[256];
	struct cpu_time cpu0;
	double t0;
	int rc = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	if (load_config(&o, &cfg))
		return 1;
	if (o.ncgroups + o.npids + cfg.ncgroups == 0 && !o.keep_running) {
		fprintf(stderr,
			"leap-agent: nothing to watch: give --cgroup PATH, --pid PID or "
			"[cgroup PATH] sections in --config\n");
		return 2;
	}
	a = calloc(1, sizeof(*a));
	if (!a || agent_init(a, &cfg)) {
		fprintf(stderr, "leap-agent: out of memory\n");
		free(a);
		return 1;
	}
	a->hold_all_kernel_ra = o.kernel_ra_defer;
	if (o.kernel_ra_off && page_cluster_off())
		fprintf(stderr, "leap-agent: warning: could not set vm.page-cluster\n");
	if (guardian_start(&guard, NULL))
		page_cluster_restore();
	install_signals();
	if (start_backend(a, &o) || start_observer(a, &o))
		goto out;
	for (int i = 0; i < cfg.ncgroups; i++)
		if (agent_add_cgroup(a, cfg.cgroups[i].path, &cfg.cgroups[i].policy, err,
				     sizeof(err))) {
			fprintf(stderr, "leap-agent: %s\n", err);
			goto out;
		}
	for (int i = 0; i < o.ncgroups; i++)
		if (agent_add_cgroup_opts(a, o.cgroups[i],
					  agent_config_policy_for(&cfg, o.cgroups[i]),
					  o.cgroup_exact[i], err, sizeof(err))) {
			fprintf(stderr, "leap-agent: %s\n", err);
			goto out;
		}
	for (int i = 0; i < o.npids; i++)
		if (agent_add_pid(a, o.pids[i], &cfg.def, err, sizeof(err))) {
			fprintf(stderr, "leap-agent: %s\n", err);
			goto out;
		}
	if (!a->prefetch_ok && !a->be)
		fprintf(stderr, "leap-agent: %s: observing only\n", a->prefetch_why);
	drop_caps(caps, sizeof(caps), preopen_targets(a, o.keep_running));
	write_state(a, caps);
	fprintf(stderr,
		"leap-agent: attached to %d target(s), hook %s, prefetch %s, caps %s\n",
		a->ntargets, leap_observer_hook_name(a->obs), prefetch_path(a), caps);
	if (a->ntargets == 0)
		fprintf(stderr,
			"leap-agent: nothing to watch yet: add [cgroup PATH] sections to "
			"%s "
			"and restart the agent\n",
			o.config_path ? o.config_path : "a --config file");
	t0 = (double)mono_ns() / 1e9;
	cpu0 = cpu_now();
	event_loop(a, 0, NULL, &o);
	{
		json_object *s = summary(a, (double)mono_ns() / 1e9 - t0, cpu_since(cpu0),
					 o.bpf_stats);

		print_summary(s);
		json_object_put(s);
	}
	rc = 0;
out:
	unlink(STATE_FILE);
	/* A stopped agent's metrics must not be scraped as if live. */
	if (o.metrics_textfile)
		unlink(o.metrics_textfile);
	leap_observer_close(a->obs);
	stop_backend(a);
	agent_fini(a);
	free(a);
	guardian_finish(&guard);
	return rc;
}

/* ---- run ------------------------------------------------------------------ */

/*
 * The OOM killer took a process of the command: say so, since a bare
 * "killed by signal 9" hides it.  The count is the cgroup's own (v1
 * memory.oom_control, v2 memory.events: kills of its tasks by any OOM
 * killer).  The kernel log's OOM report names the task whose allocation
 * invoked the killer: the program's own fault, or the agent's
 * process_madvise(MADV_WILLNEED), whose swap-ins are charged to the same
 * cgroup (mm/swap_state.c __read_swap_cache_async ->
 * mem_cgroup_swapin_charge_folio) and, on memcg v1, may run the OOM killer
 * like any other charge.  Seen here with swap to spare and with or without
 * the agent (README, Known limits).
 */
static void report_oom_kills(uint64_t kills, uint64_t limit)
{
	fprintf(stderr, "leap-agent: the OOM killer killed %llu process%s of the command",
		(unsigned long long)kills, kills == 1 ? "" : "es");
	if (limit)
		fprintf(stderr, " (--memory-limit %llu MiB)",
			(unsigned long long)(limit >> 20));
	fprintf(stderr, "; the kernel log names the task whose allocation invoked it\n");
}

static int cmd_run(int argc, char **argv)
{
	struct argp common = {common_opts, parse_common, NULL, NULL, NULL, NULL, NULL};
	struct argp_child kids[] = {{&common, 0, "Common options:", 0},
				    {NULL, 0, NULL, 0}};
	struct argp argp = {
		run_opts,
		parse_run,
		"-- CMD [ARGS...]",
		"Run CMD in a fresh cgroup (with --memory-limit) under a policy and "
		"report what it did.\vExits with CMD's exit status (128+N if killed "
		"by signal N).  --policy off runs the same set-up without prefetching, "
		"for a fair A/B.",
		kids,
		NULL,
		NULL};
	struct opts o = {.policy = -1, .cold_behind = -1};
	struct agent_config cfg;
	struct agent_policy pol;
	struct guardian guard = {0};
	struct run_cgroup cg;
	struct agent *a = NULL;
	char err[1024], caps[256], name[64];
	/* go: the parent releases the command; ex: closed by its exec */
	int go[2] = {-1, -1}, ex[2] = {-1, -1}, status = 0, rc = 1;
	pid_t child = -1;
	struct cpu_time cpu0 = {0};
	double t0 = 0, wall;
	uint64_t oom_kills = 0;
	bool oom_known;

	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &o))
		return 2;
	if (load_config(&o, &cfg))
		return 1;
	pol = cfg.def;
	if (o.policy >= 0)
		pol.mode = (enum agent_mode)o.policy;
	snprintf(name, sizeof(name), "leap-run-%d", getpid());
	if (run_cgroup_create(&cg, name, o.mem_limit, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		return 1;
	}
	if (o.kernel_ra_off && page_cluster_off())
		fprintf(stderr, "leap-agent: warning: could not set vm.page-cluster\n");
	if (guardian_start(&guard, &cg)) {
		perror("leap-agent: fork");
		page_cluster_restore();
		run_cgroup_destroy(&cg);
		return 1;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		perror("leap-agent: pipe");
		goto out;
	}
	child = fork();
	if (child < 0) {
		perror("leap-agent: fork");
		goto out;
	}
	if (child == 0) {
		char c;

		/* Wait until the parent has put us in the cgroup and attached. */
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(o.cmd[0], o.cmd);
		fprintf(stderr, "leap-agent: cannot run %s: %s\n", o.cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(go[0]);
	go[0] = -1;
	close(ex[1]);
	ex[1] = -1;
	if (run_cgroup_enter(&cg, child)) {
		fprintf(stderr, "leap-agent: cannot move the command into %s\n", cg.v2);
		goto out;
	}
	a = calloc(1, sizeof(*a));
	if (!a || agent_init(a, &cfg)) {
		fprintf(stderr, "leap-agent: out of memory\n");
		goto out;
	}
	a->hold_all_kernel_ra = o.kernel_ra_defer;
	install_signals();
	if (start_backend(a, &o) || start_observer(a, &o))
		goto out;
	if (agent_add_cgroup(a, cg.v2, &pol, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		goto out;
	}
	if (pol.mode == AGENT_MODE_LEAP && !a->prefetch_ok && !a->be)
		fprintf(stderr, "leap-agent: %s: observing only\n", a->prefetch_why);
	if (!a->be) {
		drop_caps(caps, sizeof(caps), false);
		write_state(a, caps);
	}
	t0 = (double)mono_ns() / 1e9;
	cpu0 = cpu_now();
	if (write(go[1], "g", 1) != 1)
		goto out;
	close(go[1]);
	go[1] = -1;
	if (a->be) {
		/*
		 * A pagemap file reads the mm its process had when it was
		 * opened (fs/proc/base.c proc_mem_open): open the command's
		 * after its exec, which closes the O_CLOEXEC pipe, and before
		 * the capabilities go.  Processes it starts later are opened
		 * without them: their slots are not shown, and the agent says so.
		 */
		char c;

		while (read(ex[0], &c, 1) < 0 && errno == EINTR)
			;
		close(ex[0]);
		ex[0] = -1;
		if (prefetch_preopen(&a->pf, (uint32_t)child))
			fprintf(stderr, "leap-agent: pid %d: cannot open its pagemap\n",
				child);
		drop_caps(caps, sizeof(caps), false);
		write_state(a, caps);
	}
	event_loop(a, child, &status, &o);
	if (got_stop) {
		/* Interrupted: stop the command too, then report. */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	child = -1;
	wall = (double)mono_ns() / 1e9 - t0;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	oom_known = run_cgroup_oom_kills(&cg, &oom_kills) == 0;
	if (oom_known && oom_kills)
		report_oom_kills(oom_kills, o.mem_limit);
	{
		json_object *s = summary(a, wall, cpu_since(cpu0), o.bpf_stats);

		json_object_object_add(s, "policy",
				       json_object_new_string(agent_mode_name(pol.mode)));
		json_object_object_add(s, "memory_limit",
				       json_object_new_uint64(o.mem_limit));
		json_object_object_add(s, "exit_status", json_object_new_int(rc));
		if (oom_known)
			json_object_object_add(s, "oom_kills",
					       json_object_new_uint64(oom_kills));
		print_summary(s);
		if (o.json_path &&
		    json_object_to_file_ext(o.json_path, s, JSON_C_TO_STRING_PRETTY))
			fprintf(stderr, "leap-agent: cannot write %s: %s\n", o.json_path,
				json_util_get_last_err());
		json_object_put(s);
	}
out:
	if (go[1] >= 0)
		close(go[1]); /* an unreleased child reads EOF and exits 127 */
	for (int i = 0; i < 2; i++)
		if (ex[i] >= 0)
			close(ex[i]);
	if (child > 0)
		waitpid(child, NULL, 0);
	unlink(STATE_FILE);
	if (a) {
		leap_observer_close(a->obs);
		stop_backend(a);
		agent_fini(a);
		free(a);
	}
	guardian_finish(&guard); /* removes the cgroup, restores page-cluster */
	return rc;
}

/* ---- status ------------------------------------------------------------ */

static int cmd_status(int argc, char **argv)
{
	struct argp argp = {
		NULL, NULL,
		NULL, "Kernel features leap uses, and the running agent if there is one.",
		NULL, NULL,
		NULL};
	struct leap_observer_opts oo = {
		.hook = LEAP_HOOK_AUTO, .no_pin = true, .log = log_cb};
	struct leap_observer *obs = NULL;
	struct utsname u;
	struct stat st;
	const char *why = "";
	json_object *state;
	int rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	uname(&u);
	printf("kernel:            %s %s\n", u.release, u.machine);
	printf("btf:               %s\n",
	       stat("/sys/kernel/btf/vmlinux", &st) ? "missing (CO-RE needs it)" : "yes");
	printf("ring buffer:       %s\n",
	       libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1 ? "yes" : "no");
	rc = leap_observer_open(&oo, &obs);
	if (rc) {
		printf("hook path:         none (%s)\n", strerror(-rc));
	} else {
		printf("hook path:         %s\n", leap_observer_hook_name(obs));
		printf("window records:    %s\n",
		       leap_observer_map_fd(obs, "record") >= 0
			       ? "leap_record program"
			       : "map batches (no syscall BPF programs before 5.14, or "
				 "the verifier refused leap_record)");
	}
	leap_observer_close(obs);
	printf("pagemap filter:    %s\n",
	       pagemap_scan_supported() ? "PAGEMAP_SCAN"
					: "pread (no PAGEMAP_SCAN: kernel < 6.7)");
	printf("process_madvise:   %s\n",
	       prefetch_probe_willneed(&why) ? "WILLNEED supported" : why);
	state = json_object_from_file(STATE_FILE);
	if (!state) {
		printf("agent:             not running\n");
		return 0;
	}
	{
		int pid = json_object_get_int(json_object_object_get(state, "pid"));
		bool alive = pid > 0 && kill(pid, 0) == 0;
		json_object *ts = json_object_object_get(state, "targets");

		printf("agent:             pid %d%s\n", pid,
		       alive ? "" : " (stale state file: not running)");
		printf("agent hook:        %s\n",
		       json_object_get_string(json_object_object_get(state, "hook")));
		printf("agent prefetch:    %s\n",
		       json_object_get_string(json_object_object_get(state, "prefetch")));
		printf("agent caps:        %s\n",
		       json_object_get_string(
			       json_object_object_get(state, "capabilities")));
		for (size_t i = 0; i < json_object_array_length(ts); i++) {
			json_object *t = json_object_array_get_idx(ts, i);

			json_object *m = json_object_object_get(t, "match");
			json_object *ls = json_object_object_get(t, "leaves");

			printf("target:            %s %s mode=%s stream=%s slot=%d",
			       json_object_get_string(json_object_object_get(t, "kind")),
			       json_object_get_string(
				       json_object_object_get(t, "target")),
			       json_object_get_string(json_object_object_get(t, "mode")),
			       json_object_get_string(
				       json_object_object_get(t, "stream")),
			       json_object_get_int(
				       json_object_object_get(t, "stats_slot")));
			if (m)
				printf(" match=%s %s", json_object_get_string(m),
				       json_object_get_string(
					       json_object_object_get(t, "state")));
			printf("\n");
			/* the cgroups under it whose tasks faulted since attach */
			for (size_t j = 0; ls && j < json_object_array_length(ls); j++)
				printf("  matched cgroup:  %s\n",
				       json_object_get_string(json_object_object_get(
					       json_object_array_get_idx(ls, j),
					       "path")));
		}
	}
	json_object_put(state);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "Usage: leap-agent COMMAND [OPTIONS]\n\n"
		   "Leap's majority-trend prefetcher for swapped memory, on a stock "
		   "kernel.\n\n"
		   "Commands:\n"
		   "  attach  watch cgroups or processes and prefetch for them\n"
		   "  run     run a command in a memory-limited cgroup under a policy\n"
		   "  stats   live per-cgroup counters\n"
		   "  status  kernel features found and the running agent\n\n"
		   "'leap-agent COMMAND --help' describes each.\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"attach", cmd_attach},
		    {"run", cmd_run},
		    {"stats", agent_cmd_stats},
		    {"status", cmd_status}};

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		puts(argp_program_version);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			/* argp sees "leap-agent CMD" as the program name. */
			char prog[64];

			snprintf(prog, sizeof(prog), "leap-agent %s", cmds[i].name);
			argv[1] = prog;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "leap-agent: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
