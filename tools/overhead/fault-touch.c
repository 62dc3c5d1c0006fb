// SPDX-License-Identifier: MIT
/*
 * fault-touch: a fault-bound program that never swaps.  Maps MiB of
 * anonymous memory, writes one byte per page (a first-touch fault each),
 * unmaps it, ROUNDS times; prints the wall time in seconds.  What an
 * allocator, a forking server or a short-lived process does to the page
 * fault path, with nothing else in the way: the cost of watching faults
 * shows here first (tools/bench-overhead.sh, docs/bench-overhead.md).
 *
 *   fault-touch [MiB (256)] [ROUNDS (8)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 8;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = mib << 20;
	double t0 = now_s();

	if (!mib || !rounds) {
		fprintf(stderr, "usage: fault-touch [MiB] [ROUNDS]\n");
		return 2;
	}
	for (unsigned r = 0; r < rounds; r++) {
		/* MAP_POPULATE off and no THP: one fault per 4 KiB page. */
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("fault-touch: mmap");
			return 1;
		}
		madvise(p, len, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < len; off += page)
			p[off] = (char)off;
		munmap(p, len);
	}
	printf("%.4f\n", now_s() - t0);
	return 0;
}
