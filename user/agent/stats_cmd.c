// SPDX-License-Identifier: MIT
/*
 * `leap-agent stats` (stats_cmd.h).  Everything is read from outside the
 * agent, so the command works from any root shell and the agent's own
 * textfile export shows exactly what the command shows:
 *  - LEAP_PIN_DIR/stats: per-target counters (BPF and the agent's
 *    prefetch counts), one slot per cgroup target, slot 0 for pid targets;
 *  - LEAP_PIN_DIR/leaves: the cgroups that faulted under each target;
 *  - AGENT_STATE_FILE: target paths and policies, matched cgroups' paths,
 *    the agent's own counters and latency histogram, rewritten every
 *    second by the agent;
 *  - leap-swapd's STATS line over its control socket, in backend mode.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "leap/prom.h"
#include "stats_cmd.h"

void agent_rates(const struct leap_cg_stats *s, bool backend, double *accuracy,
		 double *coverage)
{
	uint64_t faults = s->swapin_misses + (backend ? 0 : s->prefetch_hits);

	*accuracy = s->prefetches ? (double)s->prefetch_hits / (double)s->prefetches : 0;
	*coverage = faults ? (double)s->prefetch_hits / (double)faults : 0;
}

/* ---- what the agent publishes ---------------------------------------------- */

struct leaf_row {
	uint64_t id;
	uint32_t slot;
	const char *path; /* from the state file; NULL if not named yet */
};

struct view {
	json_object *state; /* NULL: no state file */
	struct leap_cg_stats slots[LEAP_STATS_SLOTS];
	bool used[LEAP_STATS_SLOTS];
	struct leaf_row *leaves;
	int nleaves;
	bool backend;
	char cg2root[4096]; /* cgroup2 mount, stripped from labels */
};

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *jstr(json_object *o, const char *key, const char *dflt)
{
	json_object *v = jget(o, key);

	return v ? json_object_get_string(v) : dflt;
}

/* The state file's target owning a stats slot (a cgroup's; NULL for 0). */
static json_object *target_of_slot(const struct view *v, uint32_t slot)
{
	json_object *ts = jget(v->state, "targets");

	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);

		if (!strcmp(jstr(t, "kind", ""), "cgroup") &&
		    json_object_get_int(jget(t, "stats_slot")) == (int)slot)
			return t;
	}
	return NULL;
}

static const char *leaf_path(const struct view *v, uint64_t id)
{
	json_object *ts = jget(v->state, "targets");

	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *ls = jget(json_object_array_get_idx(ts, i), "leaves");

		for (size_t j = 0; ls && j < json_object_array_length(ls); j++) {
			json_object *l = json_object_array_get_idx(ls, j);

			if ((uint64_t)json_object_get_uint64(jget(l, "cgroup_id")) == id)
				return jstr(l, "path", NULL);
		}
	}
	return NULL;
}

static int view_load(struct view *v, char *err, size_t errlen)
{
	int fd, lfd;
	uint64_t key, next, *prev = NULL;

	memset(v, 0, sizeof(*v));
	fd = bpf_obj_get(LEAP_PIN_DIR "/stats");
	if (fd < 0) {
		snprintf(err, errlen, "no running agent (%s/stats: %s)", LEAP_PIN_DIR,
			 strerror(errno));
		return -ENOENT;
	}
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		struct leap_cg_stats *s = &v->slots[k];

		if (bpf_map_lookup_elem(fd, &k, s) == 0 && (s->faults || s->cgroup_id))
			v->used[k] = true;
	}
	close(fd);
	v->state = json_object_from_file(AGENT_STATE_FILE);
	/* Hits are major faults only when pages wait in leap-swapd's cache;
	 * "leap-swapd+swapcache" puts them in the swap cache (minor hits). */
	v->backend = !strcmp(jstr(v->state, "prefetch", ""), "leap-swapd");
	lfd = bpf_obj_get(LEAP_PIN_DIR "/leaves");
	if (lfd >= 0) {
		v->leaves = calloc(LEAP_LEAVES_MAX, sizeof(*v->leaves));
		while (v->leaves && v->nleaves < LEAP_LEAVES_MAX &&
		       bpf_map_get_next_key(lfd, prev, &next) == 0) {
			struct leap_leaf lf;

			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(lfd, &key, &lf))
				continue;
			v->leaves[v->nleaves++] =
				(struct leaf_row){.id = key,
						  .slot = lf.stats_slot,
						  .path = leaf_path(v, key)};
		}
		close(lfd);
	}
	if (cgroup2_mount(v->cg2root, sizeof(v->cg2root)))
		v->cg2root[0] = '\0';
	return 0;
}

static void view_free(struct view *v)
{
	json_object_put(v->state);
	free(v->leaves);
	v->leaves = NULL;
}

/* A cgroup directory as the hierarchy names it: "/a/b" below the mount. */
static const char *cgroup_name(const struct view *v, const char *path)
{
	size_t n = strlen(v->cg2root);

	if (!path)
		return "";
	if (n && !strncmp(path, v->cg2root, n) && (path[n] == '/' || !path[n]))
		return path[n] ? path + n : "/";
	return path;
}

/* ---- text and JSON -------------------------------------------------------------- */

static void print_text(const struct view *v)
{
	printf("%-5s %-10s %12s %12s %12s %10s %12s %12s %12s %8s %8s  %s\n", "slot",
	       "cgroup", "faults", "swapin_miss", "events", "dropped", "prefetched",
	       "hits", "wasted", "acc%", "cov%", "target");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		const struct leap_cg_stats *s = &v->slots[k];
		json_object *t = target_of_slot(v, k);
		double acc, cov;

		if (!v->used[k])
			continue;
		agent_rates(s, v->backend, &acc, &cov);
		printf("%-5u %-10llu %12llu %12llu %12llu %10llu %12llu %12llu %12llu "
		       "%8.1f %8.1f  ",
		       k, (unsigned long long)s->cgroup_id, (unsigned long long)s->faults,
		       (unsigned long long)s->swapin_misses,
		       (unsigned long long)s->events_sent,
		       (unsigned long long)s->events_dropped,
		       (unsigned long long)s->prefetches,
		       (unsigned long long)s->prefetch_hits,
		       (unsigned long long)s->prefetch_wasted, 100 * acc, 100 * cov);
		if (t)
			printf("%s (%s, %s%s)\n", jstr(t, "target", "?"),
			       jstr(t, "match", "?"), jstr(t, "mode", "?"),
			       strcmp(jstr(t, "state", ""), "removed") ? ""
								       : ", removed");
		else
			printf("%s\n", k == 0 ? "(pid targets)" : "?");
		for (int i = 0; i < v->nleaves; i++)
			if (v->leaves[i].slot == k)
				printf("      matched: %s (id %llu)\n",
				       v->leaves[i].path ? v->leaves[i].path
							 : "(not named yet)",
				       (unsigned long long)v->leaves[i].id);
	}
}

static json_object *to_json(const struct view *v)
{
	json_object *arr = json_object_new_array();

	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		const struct leap_cg_stats *s = &v->slots[k];
		json_object *o, *ls, *t = target_of_slot(v, k);
		const struct {
			const char *name;
			uint64_t v;
		} f[] = {
			{"cgroup_id", s->cgroup_id},
			{"faults", s->faults},
			{"swapin_misses", s->swapin_misses},
			{"events_sent", s->events_sent},
			{"events_dropped", s->events_dropped},
			{"prefetches", s->prefetches},
			{"prefetch_hits", s->prefetch_hits},
			{"prefetch_wasted", s->prefetch_wasted},
		};
		double acc, cov;

		if (!v->used[k])
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int((int)k));
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			json_object_object_add(o, f[i].name,
					       json_object_new_uint64(f[i].v));
		agent_rates(s, v->backend, &acc, &cov);
		json_object_object_add(o, "accuracy", json_object_new_double(acc));
		json_object_object_add(o, "coverage", json_object_new_double(cov));
		if (t) {
			json_object_object_add(
				o, "target",
				json_object_new_string(jstr(t, "target", "")));
			json_object_object_add(
				o, "match", json_object_new_string(jstr(t, "match", "")));
			json_object_object_add(
				o, "mode", json_object_new_string(jstr(t, "mode", "")));
			json_object_object_add(
				o, "state", json_object_new_string(jstr(t, "state", "")));
		}
		ls = json_object_new_array();
		for (int i = 0; i < v->nleaves; i++) {
			json_object *l;

			if (v->leaves[i].slot != k)
				continue;
			l = json_object_new_object();
			json_object_object_add(l, "cgroup_id",
					       json_object_new_uint64(v->leaves[i].id));
			json_object_object_add(
				l, "path",
				v->leaves[i].path
					? json_object_new_string(v->leaves[i].path)
					: NULL);
			json_object_array_add(ls, l);
		}
		json_object_object_add(o, "leaves", ls);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* ---- Prometheus ----------------------------------------------------------------- */

/*
 * Per-target counters from struct leap_cg_stats: a new field of the map
 * is one more line here.
 */
static const struct slot_metric {
	const char *name, *help;
	size_t off;
} slot_metrics[] = {
	{"leap_faults_total", "User page faults of the target's tasks.",
	 offsetof(struct leap_cg_stats, faults)},
	{"leap_swapin_misses_total",
	 "Faults that had to read from swap (major faults; in backend mode every "
	 "read of the backend device).",
	 offsetof(struct leap_cg_stats, swapin_misses)},
	{"leap_prefetched_pages_total", "Pages the agent asked to prefetch.",
	 offsetof(struct leap_cg_stats, prefetches)},
	{"leap_prefetch_hits_total", "Faults served by a page the agent prefetched.",
	 offsetof(struct leap_cg_stats, prefetch_hits)},
	{"leap_prefetch_wasted_pages_total",
	 "Prefetched pages read from swap again before use (reclaimed under memory "
	 "pressure).",
	 offsetof(struct leap_cg_stats, prefetch_wasted)},
	{"leap_events_sent_total", "Fault events BPF sent to the agent.",
	 offsetof(struct leap_cg_stats, events_sent)},
	{"leap_events_dropped_total",
	 "Fault events lost because the ring buffer was full.",
	 offsetof(struct leap_cg_stats, events_dropped)},
};

/* The agent's counters in the state file's "agent" object. */
static const struct agent_metric {
	const char *key, *name, *help;
} agent_metrics[] = {
	{"events", "leap_agent_events_total", "Fault events the agent read."},
	{"events_ignored", "leap_agent_events_ignored_total",
	 "Events that were not swap accesses."},
	{"swap_faults", "leap_agent_swap_faults_total",
	 "Swap accesses fed to the prefetch engine."},
	{"late_prefetches", "leap_agent_late_prefetches_total",
	 "Major faults on pages the agent had asked to prefetch (too late)."},
	{"lookaheads", "leap_agent_lookaheads_total",
	 "Prefetch windows issued early by a hit on a look-ahead marker."},
	{"nested_stride_windows", "leap_agent_nested_stride_windows_total",
	 "Prefetch windows along a nested stride (a repeating period of deltas)."},
	{"prefetch_syscalls", "leap_agent_prefetch_syscalls_total",
	 "process_madvise calls made."},
	{"prefetch_not_swapped", "leap_agent_prefetch_not_swapped_pages_total",
	 "Candidate pages skipped because they were not swapped out."},
	{"cold_behind_pages", "leap_agent_cold_behind_pages_total",
	 "Pages behind fills given MADV_COLD (cold_behind)."},
	{"backend_queued", "leap_agent_backend_queued_pages_total",
	 "Pages leap-swapd queued for prefetching."},
	{"backend_dropped", "leap_agent_backend_dropped_pages_total",
	 "Pages leap-swapd dropped because its prefetch queue was full."},
	{"backend_out_of_range", "leap_agent_backend_out_of_range_pages_total",
	 "Candidates beyond the backend device, never sent."},
	{"backend_errors", "leap_agent_backend_errors_total",
	 "Failed commands to leap-swapd."},
	{"backend_ambiguous", "leap_agent_backend_ambiguous_faults_total",
	 "Faults with several backend reads (kernel readahead), not used."},
};

/* leap-swapd STATS keys that are levels, not counts. */
static bool swapd_gauge(const char *key)
{
	static const char *const g[] = {"cache_pages",	    "cached",	"queue",
					"under_replicated", "mr_bytes", "fh_pins"};

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		if (!strcmp(key, g[i]))
			return true;
	return false;
}

/* One request on leap-swapd's control socket: its "OK k=v ..." reply. */
static int swapd_stats(const char *sock, char *buf, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t got = 0;
	int fd, rc = 0;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, "STATS\n", 6) != 6) {
		rc = -errno;
		goto out;
	}
	while (got + 1 < len && !memchr(buf, '\n', got)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0) {
			rc = -ETIMEDOUT;
			goto out;
		}
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0) {
			rc = n ? -errno : -ECONNRESET;
			goto out;
		}
		got += (size_t)n;
		buf[got] = '\0';
	}
	if (strncmp(buf, "OK", 2))
		rc = -EPROTO;
out:
	close(fd);
	return rc;
}

static void prom_swapd(FILE *f, const char *sock)
{
	char reply[4096], *tok, *save = NULL;
	struct prom_label l = {"socket", sock};
	int up = swapd_stats(sock, reply, sizeof(reply)) == 0;

	prom_family(f, "leap_swapd_up", "gauge",
		    "Whether leap-swapd answered STATS on its control socket.");
	prom_sample(f, "leap_swapd_up", &l, 1, up);
	if (!up)
		return;
	for (tok = strtok_r(reply + 2, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(tok, '='), name[160], help[256], *end;
		unsigned long long val;
		bool gauge;

		if (!eq)
			continue;
		*eq = '\0';
		val = strtoull(eq + 1, &end, 10);
		if (*end || !prom_name_ok(tok, false))
			continue;
		gauge = swapd_gauge(tok);
		snprintf(name, sizeof(name), "leap_swapd_%s%s", tok,
			 gauge ? "" : "_total");
		snprintf(help, sizeof(help), "leap-swapd STATS field %s.", tok);
		prom_family(f, name, gauge ? "gauge" : "counter", help);
		prom_sample_u64(f, name, &l, 1, val);
	}
}

static void prom_agent(FILE *f, json_object *ag)
{
	json_object *progs = jget(ag, "bpf_progs");
	struct prom_label mode[1];

	for (size_t i = 0; i < sizeof(agent_metrics) / sizeof(agent_metrics[0]); i++) {
		json_object *v = jget(ag, agent_metrics[i].key);

		if (!v)
			continue;
		prom_family(f, agent_metrics[i].name, "counter", agent_metrics[i].help);
		prom_sample_u64(f, agent_metrics[i].name, NULL, 0,
				json_object_get_uint64(v));
	}
	prom_family(f, "leap_agent_cpu_seconds_total", "counter",
		    "CPU time the agent used, by mode.");
	mode[0] = (struct prom_label){"mode", "user"};
	prom_sample(f, "leap_agent_cpu_seconds_total", mode, 1,
		    json_object_get_double(jget(ag, "cpu_user_s")));
	mode[0] = (struct prom_label){"mode", "system"};
	prom_sample(f, "leap_agent_cpu_seconds_total", mode, 1,
		    json_object_get_double(jget(ag, "cpu_system_s")));
	if (jget(ag, "prefetch_syscall_cpu_s")) {
		prom_family(f, "leap_agent_prefetch_syscall_cpu_seconds_total", "counter",
			    "Agent CPU time spent inside process_madvise (the kernel's "
			    "work for the windows: page allocation, memcg charge and "
			    "reclaim, read submission); part of the system mode.");
		prom_sample(f, "leap_agent_prefetch_syscall_cpu_seconds_total", NULL, 0,
			    json_object_get_double(jget(ag, "prefetch_syscall_cpu_s")));
	}
	if (progs) {
		prom_family(
			f, "leap_bpf_run_seconds_total", "counter",
			"Kernel time spent in each BPF program (attach --bpf-stats).");
		json_object_object_foreach(progs, name, p)
		{
			struct prom_label l = {"program", name};

			prom_sample(f, "leap_bpf_run_seconds_total", &l, 1,
				    json_object_get_uint64(jget(p, "run_time_ns")) / 1e9);
		}
		prom_family(f, "leap_bpf_runs_total", "counter",
			    "Runs of each BPF program (attach --bpf-stats).");
		json_object_object_foreach(progs, name2, p2)
		{
			struct prom_label l = {"program", name2};

			prom_sample_u64(f, "leap_bpf_runs_total", &l, 1,
					json_object_get_uint64(jget(p2, "run_cnt")));
		}
	}
}

#define HIST_MAX 32

/*
 * The reaction latency histogram of stats slot k from the state file;
 * returns the number of bounds, 0 if there is none.
 */
static int slot_histogram(const struct view *v, uint32_t k, double *bounds,
			  uint64_t *counts, double *sum)
{
	json_object *h = jget(v->state, "reaction"), *b = jget(h, "bounds_us");
	json_object *sl, *c;
	size_t n = b ? json_object_array_length(b) : 0;
	char key[16];

	snprintf(key, sizeof(key), "%u", k);
	sl = jget(jget(h, "slots"), key);
	c = jget(sl, "counts");
	if (!n || n >= HIST_MAX || !c || json_object_array_length(c) != n + 1)
		return 0;
	for (size_t j = 0; j < n; j++)
		bounds[j] = json_object_get_int(json_object_array_get_idx(b, j)) / 1e6;
	for (size_t j = 0; j <= n; j++)
		counts[j] = json_object_get_uint64(json_object_array_get_idx(c, j));
	*sum = json_object_get_uint64(jget(sl, "sum_us")) / 1e6;
	return (int)n;
}

/* Labels of a slot: kind and cgroup (empty for the pid targets' slot). */
static void slot_labels(const struct view *v, uint32_t k, struct prom_label l[2],
			char *idbuf, size_t idlen)
{
	json_object *t = target_of_slot(v, k);

	l[0] = (struct prom_label){"kind", k == 0 ? "pid" : "cgroup"};
	if (k == 0) {
		l[1] = (struct prom_label){"cgroup", ""};
	} else if (t) {
		l[1] = (struct prom_label){"cgroup",
					   cgroup_name(v, jstr(t, "target", ""))};
	} else {
		snprintf(idbuf, idlen, "id:%llu",
			 (unsigned long long)v->slots[k].cgroup_id);
		l[1] = (struct prom_label){"cgroup", idbuf};
	}
}

static void write_prom(FILE *f, const struct view *v)
{
	char ids[LEAP_STATS_SLOTS][32];
	struct prom_label lab[LEAP_STATS_SLOTS][2];
	json_object *ts = jget(v->state, "targets");

	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++)
		if (v->used[k])
			slot_labels(v, k, lab[k], ids[k], sizeof(ids[k]));
	for (size_t m = 0; m < sizeof(slot_metrics) / sizeof(slot_metrics[0]); m++) {
		prom_family(f, slot_metrics[m].name, "counter", slot_metrics[m].help);
		for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++)
			if (v->used[k])
				prom_sample_u64(
					f, slot_metrics[m].name, lab[k], 2,
					*(const uint64_t *)((const char *)&v->slots[k] +
							    slot_metrics[m].off));
	}
	prom_family(f, "leap_prefetch_accuracy_ratio", "gauge",
		    "Prefetch hits per prefetched page since the agent started.");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		double acc, cov;

		if (!v->used[k])
			continue;
		agent_rates(&v->slots[k], v->backend, &acc, &cov);
		prom_sample(f, "leap_prefetch_accuracy_ratio", lab[k], 2, acc);
	}
	prom_family(f, "leap_prefetch_coverage_ratio", "gauge",
		    "Prefetch hits per swap access (hits + misses) since the agent "
		    "started.");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		double acc, cov;

		if (!v->used[k])
			continue;
		agent_rates(&v->slots[k], v->backend, &acc, &cov);
		prom_sample(f, "leap_prefetch_coverage_ratio", lab[k], 2, cov);
	}
	prom_family(f, "leap_reaction_latency_seconds", "histogram",
		    "From a fault's entry to the agent issuing the prefetch it "
		    "triggered.");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		double bounds[HIST_MAX], sum;
		uint64_t counts[HIST_MAX + 1];
		int nb;

		if (v->used[k] && (nb = slot_histogram(v, k, bounds, counts, &sum)))
			prom_histogram(f, "leap_reaction_latency_seconds", lab[k], 2,
				       bounds, counts, nb, sum);
	}
	prom_family(f, "leap_target_info", "gauge",
		    "Watched cgroups and their policy (always 1).");
	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		struct prom_label l[4] = {
			{"cgroup", cgroup_name(v, jstr(t, "target", ""))},
			{"mode", jstr(t, "mode", "")},
			{"match", jstr(t, "match", "")},
			{"state", jstr(t, "state", "")},
		};

		if (strcmp(jstr(t, "kind", ""), "cgroup"))
			continue;
		prom_sample(f, "leap_target_info", l, 4, 1);
	}
	prom_family(f, "leap_cgroup_matched_info", "gauge",
		    "Cgroups whose faults counted for a target (always 1).");
	for (int i = 0; i < v->nleaves; i++) {
		json_object *t = target_of_slot(v, v->leaves[i].slot);
		char id[32];
		struct prom_label l[2] = {
			{"cgroup", cgroup_name(v, v->leaves[i].path)},
			{"target", cgroup_name(v, jstr(t, "target", ""))},
		};

		if (!v->leaves[i].path) {
			snprintf(id, sizeof(id), "id:%llu",
				 (unsigned long long)v->leaves[i].id);
			l[0].value = id;
		}
		prom_sample(f, "leap_cgroup_matched_info", l, 2, 1);
	}
	if (v->state) {
		struct prom_label l[2] = {{"hook", jstr(v->state, "hook", "")},
					  {"prefetch", jstr(v->state, "prefetch", "")}};

		prom_family(
			f, "leap_agent_info", "gauge",
			"The running agent's hook path and prefetch path (always 1).");
		prom_sample(f, "leap_agent_info", l, 2, 1);
		prom_agent(f, jget(v->state, "agent"));
		if (jget(v->state, "backend_socket"))
			prom_swapd(f, jstr(v->state, "backend_socket", ""));
	}
}

int agent_metrics_write(FILE *f, char *err, size_t errlen)
{
	struct view *v = malloc(sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	rc = view_load(v, err, errlen);
	if (rc == 0) {
		write_prom(f, v);
		view_free(v);
	}
	free(v);
	return rc;
}

int agent_metrics_textfile(const char *path, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int rc, fd;

	/* Same directory, so the rename is atomic; node_exporter skips names
	 * not ending in .prom, so a half-written file is never read. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return rc;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", tmp, strerror(-rc));
		return rc;
	}
	rc = agent_metrics_write(f, err, errlen);
	if (fflush(f) || ferror(f)) {
		rc = rc ? rc : -EIO;
		snprintf(err, errlen, "writing %s failed", tmp);
	}
	fclose(f);
	if (!rc && rename(tmp, path)) {
		rc = -errno;
		snprintf(err, errlen, "rename to %s: %s", path, strerror(errno));
	}
	if (rc)
		unlink(tmp);
	return rc;
}

/* ---- the subcommand -------------------------------------------------------------- */

enum { FMT_TEXT, FMT_JSON, FMT_PROM };

struct stats_opts {
	int format;
	double interval;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static error_t parse_stats(int key, char *arg, struct argp_state *state)
{
	struct stats_opts *o = state->input;
	char *end;

	switch (key) {
	case 'j':
		o->format = FMT_JSON;
		return 0;
	case 'f':
		if (!strcmp(arg, "text"))
			o->format = FMT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = FMT_JSON;
		else if (!strcmp(arg, "prometheus"))
			o->format = FMT_PROM;
		else
			argp_error(state,
				   "--format takes text, json or prometheus, not '%s'",
				   arg);
		return 0;
	case 'i':
		o->interval = strtod(arg, &end);
		if (*end || o->interval <= 0)
			argp_error(state, "--interval takes seconds > 0");
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int agent_cmd_stats(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{"json", 'j', NULL, 0, "JSON output (same as --format json)", 0},
		{"format", 'f', "text|json|prometheus", 0,
		 "Output format; prometheus is the text exposition format", 0},
		{"interval", 'i', "S", 0, "Repeat every S seconds until interrupted", 0},
		{},
	};
	struct argp argp = {
		opts,
		parse_stats,
		NULL,
		"Per-target counters of the running agent, the cgroups matched under "
		"each target, and (--format prometheus) the agent's own counters.\v"
		"Reads " LEAP_PIN_DIR "/stats, " LEAP_PIN_DIR
		"/leaves and " AGENT_STATE_FILE ".",
		NULL,
		NULL,
		NULL};
	struct stats_opts o = {0};
	struct sigaction sa = {.sa_handler = on_stop};
	char err[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	do {
		struct view *v = malloc(sizeof(*v));

		if (!v || view_load(v, err, sizeof(err))) {
			fprintf(stderr, "leap-agent: %s\n", v ? err : "out of memory");
			free(v);
			return 1;
		}
		if (o.format == FMT_TEXT) {
			print_text(v);
		} else if (o.format == FMT_JSON) {
			json_object *arr = to_json(v);

			printf("%s\n", json_object_to_json_string_ext(
					       arr, JSON_C_TO_STRING_PLAIN));
			json_object_put(arr);
		} else {
			write_prom(stdout, v);
		}
		view_free(v);
		free(v);
		fflush(stdout);
		if (o.interval > 0)
			usleep((useconds_t)(o.interval * 1e6));
	} while (o.interval > 0 && !stop);
	return 0;
}
