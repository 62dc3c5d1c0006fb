// SPDX-License-Identifier: MIT
/*
 * The classic registration-cache bug, proved absent: register a buffer,
 * munmap it, map new memory at the same address, look it up: with the
 * userfaultfd monitor it must be a miss (a new registration), and the
 * checking backend verifies that the handle returned belongs to the mapping
 * that is there now.  Without the monitor the same sequence hits the stale
 * registration and the checker catches it (the control: the check can fail).
 *
 * The checking backend records, per handle, what "the NIC" would be bound
 * to: the mapping's inode (each buffer here is its own memfd, so a new
 * mapping has a new inode; anonymous memory has inode 0) and a tag the test
 * writes at the start of each new buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine_test.h"
#include "leap/reg.h"

#define PG   4096ULL
#define NBUF (16 * PG)

struct checker {
	uint64_t ino[64], tag[64], addr[64];
	uint64_t next;
};

/* The inode of the mapping holding addr (from /proc/self/maps), or -1. */
static int64_t mapping_inode(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int64_t ino = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, inode;
		char perms[8], dev[16];

		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu", &lo, &hi, perms, &off,
			   dev, &inode) == 6 &&
		    addr >= lo && addr < hi) {
			ino = (int64_t)inode;
			break;
		}
	}
	fclose(f);
	return ino;
}

static int chk_reg(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key)
{
	struct checker *c = ctx;
	int64_t ino = mapping_inode(addr);

	if (ino < 0 || c->next >= 64 || len == 0)
		return -EFAULT;
	c->ino[c->next] = (uint64_t)ino;
	c->tag[c->next] = *(volatile uint64_t *)(uintptr_t)addr;
	c->addr[c->next] = addr;
	key->handle = c->next++;
	key->lkey = key->rkey = (uint32_t)key->handle;
	return 0;
}

static void chk_dereg(void *ctx, const struct leap_reg_span *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
}

/* Does handle h belong to the memory mapped at its address now? */
static bool chk_current(struct checker *c, uint64_t h)
{
	int64_t ino = mapping_inode(c->addr[h]);

	return ino >= 0 && (uint64_t)ino == c->ino[h] &&
	       *(volatile uint64_t *)(uintptr_t)c->addr[h] == c->tag[h];
}

static int new_memfd(void)
{
	int fd = memfd_create("leap-reg-test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, NBUF), 0);
	return fd;
}

/*
 * A tagged buffer over fd (its own memfd, shared) or anonymous (fd < 0),
 * anywhere (at NULL), at a free address (MAP_FIXED_NOREPLACE), or replacing
 * what is there in one step (replace: MAP_FIXED).  Takes fd.
 */
static void *map_at(void *at, int fd, bool replace, uint64_t tag)
{
	int flags = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
	void *p;

	if (at)
		flags |= replace ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	p = mmap(at, NBUF, PROT_READ | PROT_WRITE, flags, fd, 0);
	assert_true(p != MAP_FAILED);
	if (at)
		assert_ptr_equal(p, at);
	if (fd >= 0)
		close(fd);
	memset(p, 0x5a, NBUF);
	*(uint64_t *)p = tag;
	return p;
}

static void *map_buf(void *at, bool memfd, uint64_t tag)
{
	return map_at(at, memfd ? new_memfd() : -1, false, tag);
}

static void noop_range(void *arg, uint64_t addr, uint64_t len)
{
	(void)arg;
	(void)addr;
	(void)len;
}

static struct leap_reg_monitor *start_monitor(void)
{
	struct leap_reg_monitor *m = NULL;
	int err = leap_reg_monitor_start(&m);

	if (err == -EPERM && geteuid() != 0) {
		/* Only without root and vm.unprivileged_userfaultfd = 0. */
		return NULL;
	}
	assert_int_equal(err, 0);
	{
		/* Warm the monitor thread up: its first event makes sanitizer
		 * runtimes map per-thread memory, which could land in the hole
		 * a test's munmap leaves before the test maps it again.  The
		 * munmap returns only once the thread has read the event. */
		struct leap_reg_watch w;
		void *p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		assert_true(p != MAP_FAILED);
		leap_reg_monitor_hooks(m, &w);
		assert_int_equal(w.watch(w.ctx, (uintptr_t)p, PG), 0);
		munmap(p, PG);
		assert_int_equal(leap_reg_monitor_events(m), 1);
		w.drain(w.ctx, noop_range, NULL);
	}
	return m;
}

/*
 * New memory at the registered buffer's address, with and without the
 * monitor: munmap then mmap there (replace = false), or mmap(MAP_FIXED) over
 * it in one step (replace = true; the kernel unmaps the old memory inside).
 */
static void stale_after_remap(bool memfd, bool monitored, bool replace)
{
	struct leap_reg_config cfg = {.policy = LEAP_REG_MRRC, .page_size = PG};
	struct checker chk = {0};
	struct leap_reg_ops ops = {chk_reg, chk_dereg, &chk};
	struct leap_reg_monitor *m = NULL;
	struct leap_reg_cache *c = leap_reg_cache_new(&cfg, &ops);
	struct leap_reg_ref ref;
	struct leap_reg_stats st;
	void *buf;

	assert_non_null(c);
	if (monitored) {
		struct leap_reg_watch w;

		m = start_monitor();
		if (!m) {
			leap_reg_cache_free(c);
			skip();
		}
		leap_reg_monitor_hooks(m, &w);
		leap_reg_cache_set_watch(c, &w);
	}
	buf = map_buf(NULL, memfd, 1111);
	assert_int_equal(leap_reg_get(c, (uintptr_t)buf, NBUF, &ref), 0);
	assert_int_equal(ref.cls, LEAP_REG_MISS);
	assert_true(chk_current(&chk, ref.segs[0].key.handle));
	leap_reg_put(c, &ref);

	if (replace) {
		assert_ptr_equal(map_at(buf, memfd ? new_memfd() : -1, true, 2222), buf);
	} else {
		int fd = memfd ? new_memfd() : -1; /* before the hole opens */

		assert_int_equal(munmap(buf, NBUF), 0);
		assert_ptr_equal(map_at(buf, fd, false, 2222), buf);
	}

	assert_int_equal(leap_reg_get(c, (uintptr_t)buf + 100, PG, &ref), 0);
	if (monitored) {
		assert_int_equal(ref.cls, LEAP_REG_MISS);
		assert_int_equal(ref.segs[0].key.handle, 1);
		assert_true(chk_current(&chk, ref.segs[0].key.handle));
		leap_reg_cache_stats(c, &st);
		assert_int_equal(st.invalidations, 1);
		assert_true(leap_reg_monitor_events(m) >= 1);
	} else {
		/* the bug the monitor prevents, caught by the checker */
		assert_int_equal(ref.cls, LEAP_REG_CONTAINED);
		assert_false(chk_current(&chk, ref.segs[0].key.handle));
	}
	leap_reg_put(c, &ref);
	leap_reg_cache_free(c);
	leap_reg_monitor_stop(m);
	munmap(buf, NBUF);
}

static void test_remap_memfd(void **state)
{
	(void)state;
	stale_after_remap(true, true, false);
	stale_after_remap(true, true, true);
}

static void test_remap_anon(void **state)
{
	(void)state;
	stale_after_remap(false, true, false);
	stale_after_remap(false, true, true);
}

static void test_control_without_monitor(void **state)
{
	(void)state;
	stale_after_remap(true, false, false);
	stale_after_remap(false, false, false);
	stale_after_remap(true, false, true);
	stale_after_remap(false, false, true);
}

/*
 * madvise(MADV_DONTNEED) discards anonymous pages (the next touch maps fresh
 * zero pages): the cached registration must go; mremap moves the memory
 * away: likewise.  An unmap of memory the cache never registered changes
 * nothing, and a write to watched memory never blocks on the monitor.
 */
static void test_dontneed_and_mremap(void **state)
{
	struct leap_reg_config cfg = {.policy = LEAP_REG_MRRC, .page_size = PG};
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_reg_monitor *m = start_monitor();
	struct leap_reg_cache *c;
	struct leap_reg_watch w;
	struct leap_reg_ref ref;
	struct leap_reg_stats st;
	char *buf, *other, *moved;
	(void)state;

	if (!m)
		skip();
	leap_reg_fake_init(&fake, PG);
	leap_reg_fake_ops(&fake, &ops);
	c = leap_reg_cache_new(&cfg, &ops);
	assert_non_null(c);
	leap_reg_monitor_hooks(m, &w);
	leap_reg_cache_set_watch(c, &w);
	buf = map_buf(NULL, false, 1);
	other = map_buf(NULL, false, 2);

	assert_int_equal(leap_reg_get(c, (uintptr_t)buf, 4 * PG, &ref), 0);
	leap_reg_put(c, &ref);
	assert_int_equal(leap_reg_get(c, (uintptr_t)buf + 8 * PG, 4 * PG, &ref), 0);
	leap_reg_put(c, &ref);
	buf[100] = 7; /* watched, writable: must not block */
	munmap(other, NBUF);
	assert_int_equal(madvise(buf + PG, PG, MADV_DONTNEED), 0);
	assert_int_equal(leap_reg_get(c, (uintptr_t)buf, 4 * PG, &ref), 0);
	assert_int_equal(ref.cls, LEAP_REG_MISS);
	leap_reg_put(c, &ref);
	assert_int_equal(leap_reg_get(c, (uintptr_t)buf + 8 * PG, 4 * PG, &ref), 0);
	assert_int_equal(ref.cls, LEAP_REG_HIT); /* untouched by the madvise */
	leap_reg_put(c, &ref);

	moved = mremap(buf + 8 * PG, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		       map_buf(NULL, false, 3));
	assert_true(moved != MAP_FAILED);
	leap_reg_poll(c);
	leap_reg_cache_stats(c, &st);
	assert_int_equal(st.invalidations, 2);
	assert_int_equal(st.entries, 1);
	assert_int_equal(fake.pinned_bytes, 4 * PG);

	leap_reg_cache_free(c);
	leap_reg_monitor_stop(m);
	assert_int_equal(fake.errors, 0);
	assert_int_equal(fake.pinned_bytes, 0);
	leap_reg_fake_fini(&fake);
	munmap(buf, NBUF);
	munmap(moved, NBUF);
}

/*
 * A range the monitor cannot watch (nothing is mapped there; UFFDIO_REGISTER
 * fails) is served uncached: used once, deregistered at put.
 */
static void test_unwatchable_uncached(void **state)
{
	struct leap_reg_config cfg = {.policy = LEAP_REG_MRRC, .page_size = PG};
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_reg_monitor *m = start_monitor();
	struct leap_reg_cache *c;
	struct leap_reg_watch w;
	struct leap_reg_ref ref;
	struct leap_reg_stats st;
	char *buf;
	(void)state;

	if (!m)
		skip();
	leap_reg_fake_init(&fake, PG);
	leap_reg_fake_ops(&fake, &ops);
	c = leap_reg_cache_new(&cfg, &ops);
	assert_non_null(c);
	leap_reg_monitor_hooks(m, &w);
	leap_reg_cache_set_watch(c, &w);
	buf = map_buf(NULL, false, 1);
	munmap(buf, NBUF);
	assert_int_equal(leap_reg_get(c, (uintptr_t)buf, 4 * PG, &ref), 0);
	leap_reg_put(c, &ref);
	leap_reg_cache_stats(c, &st);
	assert_int_equal(st.uncached, 1);
	assert_int_equal(st.entries, 0);
	assert_int_equal(fake.pinned_bytes, 0);
	leap_reg_cache_free(c);
	leap_reg_monitor_stop(m);
	leap_reg_fake_fini(&fake);
}

/*
 * Randomized, with the real kernel: a reserved area of NSLOT pages where
 * pages are replaced by new memory (mmap MAP_FIXED), taken away (PROT_NONE
 * mapped over them), or discarded (MADV_DONTNEED), while ranges of mapped
 * pages are looked up.  Every page carries a tag written whenever it gets
 * new contents; the backend records each registered page's tag ("what the
 * NIC pinned") and refuses unmapped pages like ibv_reg_mr would.  Every
 * lookup's segments must carry the current tags: a stale registration would
 * show the old ones.
 */
#define NSLOT 192

struct pagechk {
	char *area;
	bool mapped[NSLOT];
	uint64_t next_tag;
	uint64_t *tags[4096];
	uint64_t addr[4096], npages[4096];
	uint64_t next, live;
};

static uint64_t page_index(const struct pagechk *pc, uint64_t addr)
{
	return (addr - (uintptr_t)pc->area) / PG;
}

static int pc_reg(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key)
{
	struct pagechk *pc = ctx;
	uint64_t first = page_index(pc, addr), n = len / PG;

	if (addr < (uintptr_t)pc->area || first + n > NSLOT || pc->next >= 4096)
		return -EFAULT;
	for (uint64_t i = 0; i < n; i++)
		if (!pc->mapped[first + i])
			return -EFAULT;
	pc->tags[pc->next] = malloc(n * sizeof(uint64_t));
	assert_non_null(pc->tags[pc->next]);
	for (uint64_t i = 0; i < n; i++)
		pc->tags[pc->next][i] =
			*(volatile uint64_t *)(pc->area + (first + i) * PG);
	pc->addr[pc->next] = addr;
	pc->npages[pc->next] = n;
	key->handle = pc->next++;
	pc->live++;
	return 0;
}

static void pc_dereg(void *ctx, const struct leap_reg_span *s, size_t n)
{
	struct pagechk *pc = ctx;

	for (size_t i = 0; i < n; i++) {
		assert_non_null(pc->tags[s[i].key.handle]);
		free(pc->tags[s[i].key.handle]);
		pc->tags[s[i].key.handle] = NULL;
		pc->live--;
	}
}

static void pc_retag(struct pagechk *pc, uint64_t first, uint64_t n)
{
	for (uint64_t i = first; i < first + n; i++)
		*(uint64_t *)(pc->area + i * PG) = ++pc->next_tag;
}

static void random_with_kernel(enum leap_reg_policy policy)
{
	struct leap_reg_config cfg = {
		.policy = policy, .page_size = PG, .max_entries = 24, .max_segs = 4};
	struct pagechk *pc = calloc(1, sizeof(*pc));
	struct leap_reg_ops ops = {pc_reg, pc_dereg, pc};
	struct leap_reg_monitor *m = start_monitor();
	struct leap_reg_cache *c;
	struct leap_reg_watch w;
	struct leap_reg_stats st;
	unsigned seed = 4242;
	uint64_t lookups = 0;

	assert_non_null(pc);
	if (!m) {
		free(pc);
		skip();
	}
	pc->area = mmap(NULL, NSLOT * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pc->area != MAP_FAILED);
	c = leap_reg_cache_new(&cfg, &ops);
	assert_non_null(c);
	leap_reg_monitor_hooks(m, &w);
	leap_reg_cache_set_watch(c, &w);
	for (int step = 0; step < 4000; step++) {
		uint64_t first = (uint64_t)rand_r(&seed) % NSLOT;
		uint64_t n = 1 + (uint64_t)rand_r(&seed) % 12;
		unsigned op = (unsigned)rand_r(&seed) % 100;
		bool all_mapped = true;

		if (first + n > NSLOT)
			n = NSLOT - first;
		for (uint64_t i = first; i < first + n; i++)
			all_mapped &= pc->mapped[i];
		if (op < 70 && all_mapped) {
			uint64_t off = (uint64_t)rand_r(&seed) % 64;
			uint64_t addr = (uintptr_t)pc->area + first * PG + off;
			struct leap_reg_ref ref;

			assert_int_equal(leap_reg_get(c, addr, n * PG - off, &ref), 0);
			for (unsigned k = 0; k < ref.nsegs; k++) {
				uint64_t h = ref.segs[k].key.handle;
				uint64_t p0 = page_index(pc, ref.segs[k].addr);
				uint64_t p1 = page_index(pc, ref.segs[k].addr +
								     ref.segs[k].len - 1);
				uint64_t rfirst = page_index(pc, pc->addr[h]);

				assert_non_null(pc->tags[h]);
				for (uint64_t p = p0; p <= p1; p++)
					assert_int_equal(pc->tags[h][p - rfirst],
							 *(volatile uint64_t *)(pc->area +
										p * PG));
			}
			leap_reg_put(c, &ref);
			lookups++;
		} else if (op < 80) {
			char *p = mmap(pc->area + first * PG, n * PG,
				       PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			assert_ptr_equal(p, pc->area + first * PG);
			for (uint64_t i = first; i < first + n; i++)
				pc->mapped[i] = true;
			pc_retag(pc, first, n);
		} else if (op < 90) {
			char *p = mmap(pc->area + first * PG, n * PG, PROT_NONE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			assert_ptr_equal(p, pc->area + first * PG);
			for (uint64_t i = first; i < first + n; i++)
				pc->mapped[i] = false;
		} else if (all_mapped) {
			assert_int_equal(
				madvise(pc->area + first * PG, n * PG, MADV_DONTNEED), 0);
			pc_retag(pc, first, n);
		}
	}
	leap_reg_cache_stats(c, &st);
	assert_true(lookups > 500);
	assert_true(st.hits + st.contained > 50);
	assert_true(policy == LEAP_REG_LRU || st.overlaps > 10);
	assert_true(st.invalidations > 50);
	leap_reg_cache_free(c);
	leap_reg_monitor_stop(m);
	assert_int_equal(pc->live, 0);
	munmap(pc->area, NSLOT * PG);
	free(pc);
}

static void test_random_with_kernel_mrrc(void **state)
{
	(void)state;
	random_with_kernel(LEAP_REG_MRRC);
}

static void test_random_with_kernel_lru(void **state)
{
	(void)state;
	random_with_kernel(LEAP_REG_LRU);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remap_memfd),
		cmocka_unit_test(test_remap_anon),
		cmocka_unit_test(test_control_without_monitor),
		cmocka_unit_test(test_dontneed_and_mremap),
		cmocka_unit_test(test_unwatchable_uncached),
		cmocka_unit_test(test_random_with_kernel_mrrc),
		cmocka_unit_test(test_random_with_kernel_lru),
	};

	return cmocka_run_group_tests_name("reg_monitor", tests, NULL, NULL);
}
