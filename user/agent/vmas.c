// SPDX-License-Identifier: MIT
/* Shared-memory mappings of a process, from /proc/PID/maps (vmas.h). */
#include <stdio.h>
#include <string.h>

#include "vmas.h"

#define PAGE_SHIFT 12

bool vmas_parse_line(const char *line, struct vma_range *out)
{
	unsigned long long start, end, off, ino;
	unsigned int major, minor;
	char perms[8];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
		   &major, &minor, &ino, &n) < 7 ||
	    end <= start || strlen(perms) < 4)
		return false;
	out->start = start >> PAGE_SHIFT;
	out->end = end >> PAGE_SHIFT;
	/* A file on an anonymous device (major 0) mapped shared: shmem.
	 * /proc, sysfs and the like are major 0 too, but are not mapped
	 * shared by the programs leap watches, and never swap. */
	out->shmem = perms[3] == 's' && major == 0 && ino != 0 && line[n] == '/';
	return true;
}

static int vmas_read(struct proc_vmas *m, uint32_t tgid)
{
	char path[64], line[4352];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	m->n = 0;
	while (fgets(line, sizeof(line), f) && m->n < VMAS_MAX) {
		struct vma_range r;

		/* A long path: the rest of its line is not another mapping. */
		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (vmas_parse_line(line, &r))
			m->v[m->n++] = r;
	}
	fclose(f);
	m->read = true;
	m->reads++;
	return 0;
}

static int lookup(const struct proc_vmas *m, uint64_t page)
{
	uint32_t lo = 0, hi = m->n;

	/* maps lists mappings in address order. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (page < m->v[mid].start)
			hi = mid;
		else if (page >= m->v[mid].end)
			lo = mid + 1;
		else
			return m->v[mid].shmem;
	}
	return -1;
}

int vmas_shmem(struct proc_vmas *m, uint32_t tgid, uint64_t page)
{
	int found = m->read ? lookup(m, page) : -1;

	if (found >= 0)
		return found;
	if (vmas_read(m, tgid))
		return -1;
	return lookup(m, page);
}
