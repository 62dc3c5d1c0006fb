// SPDX-License-Identifier: MIT
/*
 * leap-observe: prints the page-fault events the leap BPF observer sees for
 * the given processes and cgroups, libbpf-tools style, then a summary.
 *
 *   leap-observe [--pid PID]... [--cgroup PATH]... [--duration S] [--count N]
 *                [--json] [--thread-deltas] [--hook auto|fentry|tracepoint]
 *
 * Its maps are pinned under /sys/fs/bpf/leap while it runs (so
 * `bpftool map dump pinned /sys/fs/bpf/leap/stats` shows live counters)
 * and unpinned when it exits, on SIGINT and SIGTERM too.  Beside a running
 * leap-agent, which owns that directory, it pins under
 * /sys/fs/bpf/leap-observe-PID instead and says so.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leap_event.h"
#include "observer.h"

#define MAX_TARGETS 64

static struct env {
	__u32 pids[MAX_TARGETS];
	int n_pids;
	const char *cgroups[MAX_TARGETS];
	int n_cgroups;
	double duration;
	unsigned long long count;
	bool json;
	bool thread_deltas;
	bool quiet;
	bool verbose;
	bool prog_stats;
	enum leap_hook hook;
	__u32 ring_bytes;
	__u32 wakeup_bytes;
	bool no_wake_major;
	unsigned int poll_interval_ms;
	const char *pin_dir;
} env;

static volatile sig_atomic_t exiting;

/* What the event callback tallies. */
static struct tally {
	unsigned long long events, major, swapin_io;
	__u64 start_ns;
} tally;

const char *argp_program_version = "leap-observe 0.1";
static const char doc[] =
	"Print the page faults (swap-ins) of processes and cgroups as the leap BPF\n"
	"observer sees them, then a summary line.\n"
	"\n"
	"EXAMPLES:\n"
	"  leap-observe --pid 1234                 # faults of process 1234\n"
	"  leap-observe --cgroup /sys/fs/cgroup/unified/app --duration 10\n"
	"  leap-observe --pid 1234 --json --count 1000";

enum {
	OPT_POLL_INTERVAL = 1000,
	OPT_PROG_STATS,
	OPT_PIN_DIR,
	OPT_WAKEUP,
	OPT_NO_WAKE_MAJOR,
};

static const struct argp_option opts[] = {
	{"pid", 'p', "PID", 0, "Watch this process (repeatable)", 0},
	{"cgroup", 'c', "PATH", 0,
	 "Watch this cgroup v2 directory and the cgroups below it (repeatable; "
	 "relative paths are taken under the cgroup2 mount)",
	 0},
	{"duration", 'd', "S", 0, "Stop after S seconds", 0},
	{"count", 'n', "N", 0, "Stop after N events", 0},
	{"json", 'j', NULL, 0, "One JSON object per line", 0},
	{"thread-deltas", 't', NULL, 0, "Deltas per thread instead of per process", 0},
	{"hook", 'H', "auto|fentry|tracepoint", 0, "Hook set (default auto)", 0},
	{"ring-size", 'r', "BYTES", 0,
	 "Ring buffer size: power of two >= page size, K/M suffixes (default 1M)", 0},
	{"wakeup-bytes", OPT_WAKEUP, "BYTES", 0,
	 "Wake the reader for non-major events once per BYTES of events (default 4K; "
	 "1 = whenever the reader has caught up)",
	 0},
	{"no-wake-on-major", OPT_NO_WAKE_MAJOR, NULL, 0,
	 "Major faults do not wake the reader at once (fewer wake-ups, later events)", 0},
	{"quiet", 'q', NULL, 0, "No per-event lines, only the summary", 0},
	{"poll-interval", OPT_POLL_INTERVAL, "MS", 0,
	 "Sleep MS between ring buffer reads (a deliberately slow consumer)", 0},
	{"prog-stats", OPT_PROG_STATS, NULL, 0,
	 "Enable BPF run-time stats and print them per program at the end", 0},
	{"pin-dir", OPT_PIN_DIR, "DIR", 0, "Pin directory (default " LEAP_PIN_DIR ")", 0},
	{"verbose", 'v', NULL, 0, "Verbose debug output (libbpf too)", 0},
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

static int parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		*out <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		*out <<= 20;
		end++;
		break;
	}
	return *end ? -1 : 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long long v;
	char *end;

	switch (key) {
	case 'p':
		if (env.n_pids >= MAX_TARGETS)
			argp_error(state, "too many --pid (max %d)", MAX_TARGETS);
		if (parse_u64(arg, &v) || v == 0 || v > INT_MAX)
			argp_error(state, "invalid pid: %s", arg);
		env.pids[env.n_pids++] = (__u32)v;
		break;
	case 'c':
		if (env.n_cgroups >= MAX_TARGETS)
			argp_error(state, "too many --cgroup (max %d)", MAX_TARGETS);
		env.cgroups[env.n_cgroups++] = arg;
		break;
	case 'd':
		errno = 0;
		env.duration = strtod(arg, &end);
		if (errno || end == arg || *end || env.duration <= 0)
			argp_error(state, "invalid duration: %s", arg);
		break;
	case 'n':
		if (parse_u64(arg, &env.count) || env.count == 0)
			argp_error(state, "invalid count: %s", arg);
		break;
	case 'j':
		env.json = true;
		break;
	case 't':
		env.thread_deltas = true;
		break;
	case 'H':
		if (!strcmp(arg, "auto"))
			env.hook = LEAP_HOOK_AUTO;
		else if (!strcmp(arg, "fentry"))
			env.hook = LEAP_HOOK_FENTRY;
		else if (!strcmp(arg, "tracepoint"))
			env.hook = LEAP_HOOK_TRACEPOINT;
		else
			argp_error(state, "invalid hook: %s (auto, fentry or tracepoint)",
				   arg);
		break;
	case 'r':
		if (parse_u64(arg, &v) || v == 0 || v > (1ULL << 30))
			argp_error(state, "invalid ring size: %s", arg);
		env.ring_bytes = (__u32)v;
		break;
	case OPT_WAKEUP:
		if (parse_u64(arg, &v) || v == 0 || v > (1ULL << 30))
			argp_error(state, "invalid wakeup bytes: %s", arg);
		env.wakeup_bytes = (__u32)v;
		break;
	case OPT_NO_WAKE_MAJOR:
		env.no_wake_major = true;
		break;
	case 'q':
		env.quiet = true;
		break;
	case OPT_POLL_INTERVAL:
		if (parse_u64(arg, &v) || v > 60000)
			argp_error(state, "invalid poll interval: %s", arg);
		env.poll_interval_ms = (unsigned int)v;
		break;
	case OPT_PROG_STATS:
		env.prog_stats = true;
		break;
	case OPT_PIN_DIR:
		env.pin_dir = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		argp_usage(state);
		break;
	case ARGP_KEY_END:
		if (!env.n_pids && !env.n_cgroups)
			argp_error(state, "nothing to watch: give --pid and/or --cgroup");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void log_cb(void *ctx, enum leap_log_level level, const char *msg)
{
	(void)ctx;
	if (level > LEAP_LOG_WARN && !env.verbose)
		return;
	fprintf(stderr, "leap-observe: %s\n", msg);
}

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static const char *flags_str(__u32 f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", f & LEAP_EV_MAJOR ? "M" : "-",
		 f & LEAP_EV_SWAP ? "S" : "-", f & LEAP_EV_WRITE ? "W" : "-",
		 f & LEAP_EV_SWAPIN_IO ? "I" : "-", f & LEAP_EV_FENTRY ? "F" : "-");
	return buf;
}

static int on_event(void *ctx, const struct leap_event *e)
{
	double t;
	char fl[8];

	(void)ctx;
	if (env.count && tally.events >= env.count)
		return -ECANCELED; /* already have them all */
	tally.events++;
	if (e->flags & LEAP_EV_MAJOR)
		tally.major++;
	if (e->flags & LEAP_EV_SWAPIN_IO)
		tally.swapin_io++;
	if (!env.quiet) {
		t = e->ts_ns >= tally.start_ns ? (double)(e->ts_ns - tally.start_ns) / 1e9
					       : 0.0;
		if (env.json) {
			printf("{\"time\":%.6f,\"ts_ns\":%llu,\"tgid\":%u,\"tid\":%u,"
			       "\"cgroup_id\":%llu,\"addr\":\"0x%llx\",\"delta\":%lld,"
			       "\"flags\":%u,\"major\":%s,\"swap_offset\":%lld,\"swap_"
			       "type\":%u,"
			       "\"latency_ns\":%llu}\n",
			       t, (unsigned long long)e->ts_ns, e->tgid, e->tid,
			       (unsigned long long)e->cgroup_id,
			       (unsigned long long)e->addr, (long long)e->delta, e->flags,
			       e->flags & LEAP_EV_MAJOR ? "true" : "false",
			       e->swap_offset == LEAP_NO_SWAP_OFFSET
				       ? -1LL
				       : (long long)e->swap_offset,
			       e->swap_type, (unsigned long long)e->latency_ns);
		} else {
			printf("%-12.6f %-7u %-7u 0x%-14llx %-9lld %-9.1f %s", t, e->tgid,
			       e->tid, (unsigned long long)e->addr, (long long)e->delta,
			       (double)e->latency_ns / 1000.0,
			       flags_str(e->flags, fl, sizeof(fl)));
			if (e->swap_offset != LEAP_NO_SWAP_OFFSET)
				printf(" %u:%llu", e->swap_type,
				       (unsigned long long)e->swap_offset);
			putchar('\n');
		}
	}
	if (env.count && tally.events >= env.count) {
		exiting = 1;
		return -ECANCELED; /* negative: libbpf stops reading the ring */
	}
	return 0;
}

/* Alive and not a zombie. */
static bool pid_alive(__u32 pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	}
	fclose(f);
	return alive;
}

/* The cgroup2 mount point, for relative --cgroup paths. */
static int cgroup2_mount(char *buf, size_t len)
{
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static int resolve_cgroup(const char *arg, __u64 *id)
{
	char path[PATH_MAX + 256], mnt[PATH_MAX];

	if (arg[0] != '/' && access(arg, F_OK) != 0 &&
	    cgroup2_mount(mnt, sizeof(mnt)) == 0) {
		if (snprintf(path, sizeof(path), "%s/%s", mnt, arg) >= (int)sizeof(path))
			return leap_cgroup_id_from_path(arg, id);
		return leap_cgroup_id_from_path(path, id);
	}
	return leap_cgroup_id_from_path(arg, id);
}

static void print_summary(struct leap_observer *obs, double secs)
{
	struct leap_cg_stats s;

	leap_observer_stats_sum(obs, &s);
	if (env.json)
		printf("{\"summary\":{\"hook\":\"%s\",\"seconds\":%.3f,\"events\":%llu,"
		       "\"major\":%llu,\"swapin_io\":%llu,\"faults\":%llu,\"swapin_"
		       "misses\":%llu,"
		       "\"events_sent\":%llu,\"events_dropped\":%llu}}\n",
		       leap_observer_hook_name(obs), secs, tally.events, tally.major,
		       tally.swapin_io, (unsigned long long)s.faults,
		       (unsigned long long)s.swapin_misses,
		       (unsigned long long)s.events_sent,
		       (unsigned long long)s.events_dropped);
	else
		printf("# summary: hook=%s seconds=%.3f events=%llu major=%llu "
		       "swapin_io=%llu "
		       "faults=%llu swapin_misses=%llu events_sent=%llu "
		       "events_dropped=%llu\n",
		       leap_observer_hook_name(obs), secs, tally.events, tally.major,
		       tally.swapin_io, (unsigned long long)s.faults,
		       (unsigned long long)s.swapin_misses,
		       (unsigned long long)s.events_sent,
		       (unsigned long long)s.events_dropped);
}

static void print_prog_stats(struct leap_observer *obs)
{
	struct leap_prog_stats ps[8];
	int n = leap_observer_prog_stats(obs, ps, 8);

	for (int i = 0; i < n; i++)
		fprintf(stderr,
			"# prog %-16s run_cnt=%llu run_time_ns=%llu avg_ns=%.1f "
			"recursion_misses=%llu\n",
			ps[i].name, (unsigned long long)ps[i].run_cnt,
			(unsigned long long)ps[i].run_time_ns,
			ps[i].run_cnt ? (double)ps[i].run_time_ns / (double)ps[i].run_cnt
				      : 0.0,
			(unsigned long long)ps[i].recursion_misses);
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = doc,
	};
	struct leap_observer_opts oo = {};
	struct leap_observer *obs = NULL;
	struct sigaction sa = {};
	__u64 cg_ids[MAX_TARGETS];
	__u64 deadline = 0, t0;
	__u32 slot = 0;
	char own_pin_dir[PATH_MAX];
	pid_t owner;
	int err, i;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 1;

	/* Fail fast, before loading anything, on bad targets. */
	for (i = 0; i < env.n_cgroups; i++) {
		if (resolve_cgroup(env.cgroups[i], &cg_ids[i]))
			return 1; /* the library printed why */
	}
	for (i = 0; i < env.n_pids; i++) {
		if (!pid_alive(env.pids[i])) {
			fprintf(stderr, "leap-observe: pid %u: no such process\n",
				env.pids[i]);
			return 1;
		}
	}

	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	oo.hook = env.hook;
	oo.ringbuf_bytes = env.ring_bytes;
	oo.wakeup_bytes = env.wakeup_bytes;
	oo.no_wake_on_major = env.no_wake_major;
	/* Beside a running agent (which owns LEAP_PIN_DIR), pin under a
	 * directory of our own, so an operator can watch a live system. */
	if (!env.pin_dir && (owner = leap_observer_pin_owner(NULL))) {
		snprintf(own_pin_dir, sizeof(own_pin_dir), "%s-observe-%d", LEAP_PIN_DIR,
			 (int)getpid());
		env.pin_dir = own_pin_dir;
		fprintf(stderr,
			"leap-observe: %s belongs to a running agent (pid %d); pinning "
			"under %s\n",
			LEAP_PIN_DIR, (int)owner, own_pin_dir);
	}
	oo.pin_dir = env.pin_dir;
	oo.libbpf_debug = env.verbose;
	oo.log = log_cb;
	oo.on_event = on_event;
	err = leap_observer_open(&oo, &obs);
	if (err)
		return 1;
	if (env.prog_stats && leap_observer_enable_prog_stats(obs))
		goto out_err;

	for (i = 0; i < env.n_cgroups; i++) {
		struct leap_target t = {.stats_slot = slot++, .flags = LEAP_TGT_EVENTS};

		if (env.thread_deltas)
			t.flags |= LEAP_TGT_THREAD_DELTAS;
		if (leap_observer_add_cgroup(obs, cg_ids[i], &t))
			goto out_err;
	}
	for (i = 0; i < env.n_pids; i++) {
		struct leap_target t = {.stats_slot = slot++, .flags = LEAP_TGT_EVENTS};

		if (env.thread_deltas)
			t.flags |= LEAP_TGT_THREAD_DELTAS;
		if (leap_observer_add_pid(obs, env.pids[i], &t))
			goto out_err;
	}

	t0 = tally.start_ns = now_ns();
	if (env.duration > 0)
		deadline = t0 + (__u64)(env.duration * 1e9);
	fprintf(stderr,
		"leap-observe: attached, hook=%s, watching %d pid(s) and %d cgroup(s)\n",
		leap_observer_hook_name(obs), env.n_pids, env.n_cgroups);
	if (!env.quiet && !env.json)
		printf("%-12s %-7s %-7s %-16s %-9s %-9s %s\n", "TIME(s)", "TGID", "TID",
		       "ADDR", "DELTA", "LAT(us)", "FLAGS");
	fflush(stdout);

	while (!exiting) {
		err = leap_observer_poll(obs, 100);
		if (err == -ECANCELED && exiting)
			break; /* --count reached */
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "leap-observe: polling the ring buffer: %s\n",
				strerror(-err));
			goto out_err;
		}
		if (deadline && now_ns() >= deadline)
			break;
		if (env.n_pids && !env.n_cgroups) {
			bool any = false;

			for (i = 0; i < env.n_pids && !any; i++)
				any = pid_alive(env.pids[i]);
			if (!any)
				break; /* everything we watch is gone */
		}
		if (env.poll_interval_ms && !exiting)
			usleep(env.poll_interval_ms * 1000u);
	}
	if (!(env.count && tally.events >= env.count))
		leap_observer_consume(obs); /* what is left in the ring */

	print_summary(obs, (double)(now_ns() - t0) / 1e9);
	if (env.prog_stats)
		print_prog_stats(obs);
	fflush(stdout);
	leap_observer_close(obs);
	return 0;

out_err:
	leap_observer_close(obs);
	return 1;
}
