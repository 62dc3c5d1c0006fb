// SPDX-License-Identifier: MIT
/* Shared-memory mappings of a process, from /proc/PID/maps (vmas.h). */
#include <stdio.h>
#include <stdlib.h>
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
	out->pgoff = off >> PAGE_SHIFT;
	/* Every process that maps the object names it so: one shmem file
	 * (a MAP_SHARED | MAP_ANONYMOUS region shared across fork is one
	 * "/dev/zero (deleted)" inode; its offset is the page index). */
	out->object = 0;
	if (out->shmem) {
		out->object = (unsigned long long)ino ^ ((unsigned long long)major << 52 |
							 (unsigned long long)minor << 32);
		if (!out->object)
			out->object = 1;
	}
	return true;
}

static int vmas_add(struct proc_vmas *m, const struct vma_range *r)
{
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 256;
		struct vma_range *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return -1;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = *r;
	m->shmem += r->shmem;
	return 0;
}

static int vmas_read(struct proc_vmas *m, uint32_t tgid, uint64_t now_ns)
{
	char path[64], line[4352];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	f = fopen(path, "re");
	m->read_ns = now_ns;
	if (!f)
		return -1;
	m->n = 0;
	m->shmem = 0;
	while (fgets(line, sizeof(line), f)) {
		struct vma_range r;

		/* A long path: the rest of its line is not another mapping. */
		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (vmas_parse_line(line, &r) && vmas_add(m, &r))
			break; /* out of memory: what was read stands */
	}
	fclose(f);
	m->read = true;
	m->reads++;
	return 0;
}

/* The mapping that holds page, as last read; NULL when none. */
static const struct vma_range *lookup(const struct proc_vmas *m, uint64_t page)
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
			return &m->v[mid];
	}
	return NULL;
}

/* The mapping of page, maps read again as vmas_shmem() says; NULL when
 * none is known. */
static const struct vma_range *find(struct proc_vmas *m, uint32_t tgid, uint64_t page,
				    uint64_t now_ns)
{
	uint64_t age = now_ns - m->read_ns;
	const struct vma_range *found = m->read ? lookup(m, page) : NULL;
	uint64_t gap_wait = m->shmem ? VMAS_REREAD_NS : VMAS_MAX_AGE_NS;

	if (found && age < VMAS_MAX_AGE_NS)
		return found;
	if (!found && m->read && age < gap_wait)
		return NULL;
	if (vmas_read(m, tgid, now_ns))
		return NULL;
	return lookup(m, page);
}

int vmas_shmem(struct proc_vmas *m, uint32_t tgid, uint64_t page, uint64_t now_ns)
{
	const struct vma_range *r = find(m, tgid, page, now_ns);

	return r ? r->shmem : -1;
}

bool vmas_shmem_at(struct proc_vmas *m, uint32_t tgid, uint64_t page, uint64_t now_ns,
		   struct vma_range *out)
{
	const struct vma_range *r = find(m, tgid, page, now_ns);

	if (!r || !r->shmem)
		return false;
	*out = *r;
	return true;
}

void vmas_free(struct proc_vmas *m)
{
	free(m->v);
	*m = (struct proc_vmas){0};
}
