// SPDX-License-Identifier: MIT
/* Prometheus text of the running agent (metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "counters.h"
#include "leap/prom.h"
#include "metrics.h"
#include "state.h"

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

/* Each worker's busy time and the windows queued now (agent_workers_json). */
static void prom_workers(FILE *f, json_object *ag)
{
	json_object *depth = state_get(ag, STATE_A_QUEUE_DEPTH);
	size_t n = state_workers(ag);

	if (n) {
		prom_family(f, "leap_agent_worker_busy_seconds_total", "counter",
			    "Time each worker spent issuing windows.");
		for (size_t i = 0; i < n; i++) {
			char id[24]; /* a size_t's digits */
			struct prom_label l = {"worker", id};

			snprintf(id, sizeof(id), "%zu", i);
			prom_sample(f, "leap_agent_worker_busy_seconds_total", &l, 1,
				    state_worker_busy_s(ag, i));
		}
	}
	if (depth) {
		prom_family(f, "leap_agent_queue_depth", "gauge",
			    "Windows waiting for a worker now, all targets.");
		prom_sample_u64(f, "leap_agent_queue_depth", NULL, 0,
				json_object_get_uint64(depth));
	}
}

/* The agent's own counters (the counter table, from the state file's
 * agent object), its CPU time and its BPF programs' run time. */
static void prom_agent(FILE *f, json_object *ag)
{
	json_object *progs = state_get(ag, STATE_A_BPF_PROGS);
	struct prom_label mode[1];

	for (size_t i = 0; i < agent_ncounters; i++) {
		const struct agent_counter *c = &agent_counters[i];
		json_object *v = state_get(ag, c->key);

		if (c->src == COUNTER_SLOT || !v)
			continue;
		prom_family(f, c->prom, "counter", c->help);
		prom_sample_u64(f, c->prom, NULL, 0, json_object_get_uint64(v));
	}
	prom_family(f, "leap_agent_cpu_seconds_total", "counter",
		    "CPU time the agent used, by mode.");
	mode[0] = (struct prom_label){"mode", "user"};
	prom_sample(f, "leap_agent_cpu_seconds_total", mode, 1,
		    json_object_get_double(state_get(ag, STATE_A_CPU_USER)));
	mode[0] = (struct prom_label){"mode", "system"};
	prom_sample(f, "leap_agent_cpu_seconds_total", mode, 1,
		    json_object_get_double(state_get(ag, STATE_A_CPU_SYSTEM)));
	prom_workers(f, ag);
	if (state_get(ag, STATE_A_PREFETCH_CPU)) {
		prom_family(f, "leap_agent_prefetch_syscall_cpu_seconds_total", "counter",
			    "Agent CPU time spent inside process_madvise (the kernel's "
			    "work for the windows: page allocation, memcg charge and "
			    "reclaim, read submission); part of the system mode.");
		prom_sample(f, "leap_agent_prefetch_syscall_cpu_seconds_total", NULL, 0,
			    json_object_get_double(state_get(ag, STATE_A_PREFETCH_CPU)));
	}
	if (progs) {
		prom_family(
			f, "leap_bpf_run_seconds_total", "counter",
			"Kernel time spent in each BPF program (attach --bpf-stats).");
		json_object_object_foreach(progs, name, p)
		{
			struct prom_label l = {"program", name};

			prom_sample(
				f, "leap_bpf_run_seconds_total", &l, 1,
				json_object_get_uint64(state_get(p, STATE_A_RUN_TIME)) /
					1e9);
		}
		prom_family(f, "leap_bpf_runs_total", "counter",
			    "Runs of each BPF program (attach --bpf-stats).");
		json_object_object_foreach(progs, name2, p2)
		{
			struct prom_label l = {"program", name2};

			prom_sample_u64(
				f, "leap_bpf_runs_total", &l, 1,
				json_object_get_uint64(state_get(p2, STATE_A_RUN_CNT)));
		}
	}
}

#define HIST_MAX 32

/* Labels of a slot: kind and cgroup (empty for the pid targets' slot). */
static void slot_labels(const struct agent_view *v, uint32_t k, struct prom_label l[2],
			char *idbuf, size_t idlen)
{
	json_object *t = state_target_of_slot(v->state, k);

	l[0] = (struct prom_label){"kind", k == 0 ? "pid" : "cgroup"};
	if (k == 0) {
		l[1] = (struct prom_label){"cgroup", ""};
	} else if (t) {
		l[1] = (struct prom_label){
			"cgroup", view_cgroup_name(v, state_str(t, STATE_T_TARGET, ""))};
	} else {
		snprintf(idbuf, idlen, "id:%llu",
			 (unsigned long long)v->slots[k].cgroup_id);
		l[1] = (struct prom_label){"cgroup", idbuf};
	}
}

/* Per-target ratios, defined once (counters.h agent_rates). */
static void prom_rates(FILE *f, const struct agent_view *v, struct prom_label lab[][2])
{
	static const char *const name[2] = {"leap_prefetch_accuracy_ratio",
					    "leap_prefetch_coverage_ratio"};
	static const char *const help[2] = {
		"Prefetch hits per prefetched page since the agent started.",
		"Prefetch hits per swap access (hits + misses) since the agent started."};

	for (int r = 0; r < 2; r++) {
		prom_family(f, name[r], "gauge", help[r]);
		for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
			double rate[2];

			if (!v->used[k])
				continue;
			agent_rates(&v->slots[k], v->pushes_only, &rate[0], &rate[1]);
			prom_sample(f, name[r], lab[k], 2, rate[r]);
		}
	}
}

void agent_metrics_print(FILE *f, const struct agent_view *v)
{
	char ids[LEAP_STATS_SLOTS][32];
	struct prom_label lab[LEAP_STATS_SLOTS][2];
	json_object *ts = state_get(v->state, STATE_TARGETS);

	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++)
		if (v->used[k])
			slot_labels(v, k, lab[k], ids[k], sizeof(ids[k]));
	for (size_t m = 0; m < agent_ncounters; m++) {
		const struct agent_counter *c = &agent_counters[m];

		if (c->src != COUNTER_SLOT)
			continue;
		prom_family(f, c->prom, "counter", c->help);
		for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++)
			if (v->used[k])
				prom_sample_u64(f, c->prom, lab[k], 2,
						agent_counter_of_slot(&v->slots[k], c));
	}
	prom_rates(f, v, lab);
	prom_family(f, "leap_reaction_latency_seconds", "histogram",
		    "From a fault's entry to the agent issuing the prefetch it "
		    "triggered.");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		double bounds[HIST_MAX], sum;
		uint64_t counts[HIST_MAX + 1];
		int nb;

		if (v->used[k] &&
		    (nb = state_histogram(v->state, k, bounds, counts, &sum, HIST_MAX)))
			prom_histogram(f, "leap_reaction_latency_seconds", lab[k], 2,
				       bounds, counts, nb, sum);
	}
	prom_family(f, "leap_target_info", "gauge",
		    "Watched cgroups and their policy (always 1).");
	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		struct prom_label l[4] = {
			{"cgroup", view_cgroup_name(v, state_str(t, STATE_T_TARGET, ""))},
			{"mode", state_str(t, STATE_T_MODE, "")},
			{"match", state_str(t, STATE_T_MATCH, "")},
			{"state", state_str(t, STATE_T_STATE, "")},
		};

		if (strcmp(state_str(t, STATE_T_KIND, ""), "cgroup"))
			continue;
		prom_sample(f, "leap_target_info", l, 4, 1);
	}
	prom_family(f, "leap_target_standing_down", "gauge",
		    "1 while the agent stands down for a watched cgroup: prefetching "
		    "there cost more than it saved, or nothing was worth prefetching "
		    "(the reason: leap-agent status).");
	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		struct prom_label l = {
			"cgroup", view_cgroup_name(v, state_str(t, STATE_T_TARGET, ""))};

		if (strcmp(state_str(t, STATE_T_KIND, ""), "cgroup"))
			continue;
		prom_sample(f, "leap_target_standing_down", &l, 1,
			    !strcmp(state_str(t, STATE_T_PREFETCH, ""), "standing down"));
	}
	prom_family(f, "leap_cgroup_matched_info", "gauge",
		    "Cgroups whose faults counted for a target (always 1).");
	for (int i = 0; i < v->nleaves; i++) {
		json_object *t = state_target_of_slot(v->state, v->leaves[i].slot);
		char id[32];
		struct prom_label l[2] = {
			{"cgroup", view_cgroup_name(v, v->leaves[i].path)},
			{"target", view_cgroup_name(v, state_str(t, STATE_T_TARGET, ""))},
		};

		if (!v->leaves[i].path) {
			snprintf(id, sizeof(id), "id:%llu",
				 (unsigned long long)v->leaves[i].id);
			l[0].value = id;
		}
		prom_sample(f, "leap_cgroup_matched_info", l, 2, 1);
	}
	if (v->state) {
		struct prom_label l[2] = {
			{"hook", state_str(v->state, STATE_HOOK, "")},
			{"prefetch", state_str(v->state, STATE_PREFETCH, "")}};

		prom_family(
			f, "leap_agent_info", "gauge",
			"The running agent's hook path and prefetch path (always 1).");
		prom_sample(f, "leap_agent_info", l, 2, 1);
		prom_agent(f, state_get(v->state, STATE_AGENT));
		if (state_get(v->state, STATE_BACKEND_SOCKET))
			prom_swapd(f, state_str(v->state, STATE_BACKEND_SOCKET, ""));
	}
}

int agent_metrics_write(FILE *f, char *err, size_t errlen)
{
	struct agent_view *v = malloc(sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	rc = view_load(v, err, errlen);
	if (rc == 0) {
		agent_metrics_print(f, v);
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
