// SPDX-License-Identifier: MIT
/* `leap-agent status`: the kernel features leap uses, and the running agent. */
#include <argp.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "observer.h"
#include "pagemap.h"
#include "prefetch.h"
#include "state.h"
#include "swapra.h"

static void log_quiet(void *ctx, enum leap_log_level level, const char *msg)
{
	(void)ctx;
	if (level <= LEAP_LOG_WARN)
		fprintf(stderr, "leap-agent: %s\n", msg);
}

/* What this kernel offers, found by loading the observer without pins. */
static void print_kernel(void)
{
	struct leap_observer_opts oo = {
		.hook = LEAP_HOOK_AUTO, .no_pin = true, .log = log_quiet};
	struct leap_observer *obs = NULL;
	const char *why = "";
	struct swapra ra;
	char line[512];
	struct utsname u;
	struct stat st;
	int rc;

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
	swapra_probe(&ra);
	swapra_describe(&ra, line, sizeof(line));
	printf("swap readahead:    %s\n", line);
}

/* outcome = judge: the held epochs' rates against the prefetching ones'. */
static void print_outcome(json_object *o)
{
	json_object *r = o ? state_get(o, STATE_O_RATIOS) : NULL;
	size_t n = r ? json_object_array_length(r) : 0;
	uint64_t dropped;

	if (!o)
		return;
	printf("  outcome:         %s; %" PRIu64 " held epochs, %" PRIu64 " compared",
	       state_str(o, STATE_O_VERDICT, "?"),
	       (uint64_t)json_object_get_uint64(state_get(o, STATE_O_HELD_EPOCHS)),
	       (uint64_t)json_object_get_uint64(state_get(o, STATE_O_COMPARISONS)));
	dropped = json_object_get_uint64(state_get(o, STATE_O_DROPPED));
	if (dropped)
		printf(", %" PRIu64 " dropped (%" PRIu64 " on our windows' lead)",
		       dropped,
		       (uint64_t)json_object_get_uint64(
			       state_get(o, STATE_O_DROPPED_LEAD)));
	if (n) {
		printf(": held ran at");
		for (size_t i = n > 5 ? n - 5 : 0; i < n; i++)
			printf(" %d%%",
			       json_object_get_int(json_object_array_get_idx(r, i)));
		printf(" of the prefetching rate (median %d%%)",
		       json_object_get_int(state_get(o, STATE_O_MEDIAN)));
	}
	printf("\n");
}

static void print_target(json_object *t)
{
	json_object *m = state_get(t, STATE_T_MATCH);
	json_object *ls = state_get(t, STATE_T_LEAVES);

	printf("target:            %s %s mode=%s stream=%s slot=%d",
	       state_str(t, STATE_T_KIND, "?"), state_str(t, STATE_T_TARGET, "?"),
	       state_str(t, STATE_T_MODE, "?"), state_str(t, STATE_T_STREAM, "?"),
	       json_object_get_int(state_get(t, STATE_T_SLOT)));
	if (m)
		printf(" match=%s %s", json_object_get_string(m),
		       state_str(t, STATE_T_STATE, ""));
	printf(" %s\n", state_str(t, STATE_T_PREFETCH, ""));
	if (*state_str(t, STATE_T_WHY, ""))
		printf("  verdict:         %s\n", state_str(t, STATE_T_WHY, ""));
	print_outcome(state_get(t, STATE_T_OUTCOME));
	/* the cgroups under it whose tasks faulted since attach */
	for (size_t j = 0; ls && j < json_object_array_length(ls); j++)
		printf("  matched cgroup:  %s\n",
		       state_str(json_object_array_get_idx(ls, j), STATE_L_PATH, "?"));
}

/* The running agent, from its state file. */
static void print_agent(void)
{
	json_object *st = state_read(), *ts;
	int pid;

	if (!st) {
		printf("agent:             not running\n");
		return;
	}
	pid = json_object_get_int(state_get(st, STATE_PID));
	printf("agent:             pid %d%s\n", pid,
	       pid > 0 && kill(pid, 0) == 0 ? "" : " (stale state file: not running)");
	printf("agent hook:        %s\n", state_str(st, STATE_HOOK, "?"));
	printf("agent prefetch:    %s\n", state_str(st, STATE_PREFETCH, "?"));
	printf("agent caps:        %s\n", state_str(st, STATE_CAPS, "?"));
	printf("agent fault hooks: %s\n", state_str(st, STATE_FAULT_HOOKS, "?"));
	ts = state_get(st, STATE_TARGETS);
	for (size_t i = 0; ts && i < json_object_array_length(ts); i++)
		print_target(json_object_array_get_idx(ts, i));
	json_object_put(st);
}

int do_status(int argc, char **argv)
{
	struct argp argp = {
		NULL, NULL,
		NULL, "Kernel features leap uses, and the running agent if there is one.",
		NULL, NULL,
		NULL};

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	print_kernel();
	print_agent();
	return 0;
}
