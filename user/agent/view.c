// SPDX-License-Identifier: MIT
/* The running agent as seen from outside (view.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "state.h"
#include "view.h"

int view_load(struct agent_view *v, char *err, size_t errlen)
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
	v->state = state_read();
	v->pushes_only = state_pushes_only(v->state);
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
			v->leaves[v->nleaves++] = (struct view_leaf){
				.id = key,
				.slot = lf.stats_slot,
				.path = state_leaf_path(v->state, key)};
		}
		close(lfd);
	}
	if (cgroup2_mount(v->cg2root, sizeof(v->cg2root)))
		v->cg2root[0] = '\0';
	return 0;
}

void view_free(struct agent_view *v)
{
	json_object_put(v->state);
	free(v->leaves);
	v->leaves = NULL;
}

const char *view_cgroup_name(const struct agent_view *v, const char *path)
{
	size_t n = strlen(v->cg2root);

	if (!path)
		return "";
	if (n && !strncmp(path, v->cg2root, n) && (path[n] == '/' || !path[n]))
		return path[n] ? path + n : "/";
	return path;
}
