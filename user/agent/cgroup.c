// SPDX-License-Identifier: MIT
/*
 * Cgroup set-up for `leap-agent run`.  Mount points come from
 * /proc/self/mountinfo, never assumed: this machine has cgroup v1
 * controllers under /sys/fs/cgroup and a controller-less cgroup2 at
 * /sys/fs/cgroup/unified, while pure-v2 systems have both at /sys/fs/cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "observer.h"

/* mountinfo: id parent maj:min root mountpoint opts - fstype source superopts */
static int find_mount(const char *fstype, const char *superopt, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], type[64], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2)
			continue;
		if (strcmp(type, fstype))
			continue;
		if (superopt) {
			/* exact word match in the comma list */
			char *tok, *save = NULL;
			int found = 0;

			for (tok = strtok_r(opts, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				found |= strcmp(tok, superopt) == 0;
			if (!found)
				continue;
		}
		snprintf(out, len, "%s", mnt);
		rc = 0;
	}
	fclose(f);
	return rc;
}

int cgroup2_mount(char *out, size_t len)
{
	return find_mount("cgroup2", NULL, out, len);
}

int cgroup1_memory_mount(char *out, size_t len)
{
	return find_mount("cgroup", "memory", out, len);
}

static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int file_has_word(const char *dir, const char *file, const char *word)
{
	char path[PATH_MAX + 64], buf[1024], *tok, *save = NULL;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		for (tok = strtok_r(buf, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			found |= strcmp(tok, word) == 0;
	fclose(f);
	return found;
}

int read_keyed(const char *dir, const char *file, const char *key, uint64_t *val)
{
	char path[PATH_MAX + 64], name[64];
	unsigned long long v;
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (rc && fscanf(f, "%63s %llu", name, &v) == 2)
		if (strcmp(name, key) == 0) {
			*val = v;
			rc = 0;
		}
	fclose(f);
	return rc;
}

int run_cgroup_create(struct run_cgroup *cg, const char *name, uint64_t limit, char *err,
		      size_t errlen)
{
	char root[PATH_MAX], v1root[PATH_MAX], val[32];
	bool v2_memory;
	__u64 id;
	int rc;

	memset(cg, 0, sizeof(*cg));
	if (cgroup2_mount(root, sizeof(root))) {
		snprintf(err, errlen,
			 "no cgroup2 hierarchy mounted (the BPF filter needs one)");
		return -ENOENT;
	}
	v2_memory = file_has_word(root, "cgroup.controllers", "memory");
	snprintf(cg->v2, sizeof(cg->v2), "%.*s/%s", (int)(sizeof(cg->v2) - 64), root,
		 name);
	if (mkdir(cg->v2, 0755)) {
		rc = -errno;
		snprintf(err, errlen, "mkdir %s: %s", cg->v2, strerror(errno));
		cg->v2[0] = '\0';
		return rc;
	}
	rc = leap_cgroup_id_from_path(cg->v2, &id);
	if (rc) {
		snprintf(err, errlen, "cgroup id of %s: %s", cg->v2, strerror(-rc));
		goto fail;
	}
	cg->id = id;
	if (!limit)
		return 0;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)limit);
	if (v2_memory) {
		/* The parent must delegate memory to its children. */
		write_file(root, "cgroup.subtree_control", "+memory");
		rc = write_file(cg->v2, "memory.max", val);
		if (rc) {
			snprintf(err, errlen, "%s/memory.max: %s", cg->v2, strerror(-rc));
			goto fail;
		}
		return 0;
	}
	if (cgroup1_memory_mount(v1root, sizeof(v1root))) {
		snprintf(err, errlen,
			 "no memory controller: cgroup2 at %s lacks it and no v1 memory "
			 "hierarchy "
			 "is mounted",
			 root);
		rc = -ENOENT;
		goto fail;
	}
	snprintf(cg->v1_mem, sizeof(cg->v1_mem), "%.*s/%s",
		 (int)(sizeof(cg->v1_mem) - 64), v1root, name);
	if (mkdir(cg->v1_mem, 0755)) {
		rc = -errno;
		snprintf(err, errlen, "mkdir %s: %s", cg->v1_mem, strerror(errno));
		cg->v1_mem[0] = '\0';
		goto fail;
	}
	rc = write_file(cg->v1_mem, "memory.limit_in_bytes", val);
	if (rc) {
		snprintf(err, errlen, "%s/memory.limit_in_bytes: %s", cg->v1_mem,
			 strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	run_cgroup_destroy(cg);
	return rc;
}

int run_cgroup_enter(const struct run_cgroup *cg, pid_t pid)
{
	char val[32];
	int rc;

	snprintf(val, sizeof(val), "%d", (int)pid);
	rc = write_file(cg->v2, "cgroup.procs", val);
	if (!rc && cg->v1_mem[0])
		rc = write_file(cg->v1_mem, "cgroup.procs", val);
	return rc;
}

int run_cgroup_oom_kills(const struct run_cgroup *cg, uint64_t *kills)
{
	if (cg->v1_mem[0])
		return read_keyed(cg->v1_mem, "memory.oom_control", "oom_kill", kills);
	/* memory.events exists only where the v2 memory controller is on. */
	return read_keyed(cg->v2, "memory.events", "oom_kill", kills);
}

int run_cgroup_major_faults(const struct run_cgroup *cg, uint64_t *faults)
{
	if (cg->v1_mem[0])
		return read_keyed(cg->v1_mem, "memory.stat", "pgmajfault", faults);
	return read_keyed(cg->v2, "memory.stat", "pgmajfault", faults);
}

/* Kills every task listed in dir/cgroup.procs; returns how many were left. */
static int kill_all(const char *dir)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int pid, n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		n++;
	}
	fclose(f);
	return n;
}

static void remove_dir(const char *dir)
{
	/* A killed task leaves the cgroup asynchronously: retry briefly. */
	for (int i = 0; i < 200 && rmdir(dir) && errno == EBUSY; i++) {
		kill_all(dir);
		usleep(10000);
	}
}

void run_cgroup_destroy(struct run_cgroup *cg)
{
	if (cg->v1_mem[0]) {
		kill_all(cg->v1_mem);
		remove_dir(cg->v1_mem);
		cg->v1_mem[0] = '\0';
	}
	if (cg->v2[0]) {
		kill_all(cg->v2);
		remove_dir(cg->v2);
		cg->v2[0] = '\0';
	}
}
