// SPDX-License-Identifier: MIT
/*
 * leap-touch: a tiny page-touching workload for the observer's system test.
 *
 *   leap-touch SIZE_MB PASSES [GO_FILE [THREADS [MODE]]]
 *
 * Maps SIZE_MB of anonymous memory and writes every page (under a memcg
 * limit smaller than that, most of it is swapped out), prints "filled",
 * waits until GO_FILE exists (if given), then reads every page
 * sequentially PASSES times, split over THREADS threads (default 1, each
 * walking its own contiguous share), prints "done" and exits 0.
 * MODE "load" (default) reads with loads; "syscall" hands each page to
 * pwrite() on a memfd instead, so the kernel takes the faults in kernel
 * mode (copy_from_user).
 */
#include <pthread.h>
#include <string.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct part {
	volatile unsigned char *base;
	size_t pages;
	long page;
	int passes;
	int fd; /* >= 0: syscall mode */
	unsigned long sum;
};

static void *walk(void *arg)
{
	struct part *p = arg;

	for (int pass = 0; pass < p->passes; pass++)
		for (size_t i = 0; i < p->pages; i++) {
			const volatile unsigned char *a = p->base + i * (size_t)p->page;

			if (p->fd >= 0)
				p->sum += (unsigned long)pwrite(p->fd, (const void *)a,
								64, 0);
			else
				p->sum += *a;
		}
	return NULL;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size, pages;
	unsigned char *mem;
	int passes, threads = 1, fd = -1;
	const char *go = NULL;
	struct part parts[64];
	pthread_t tids[64];

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s SIZE_MB PASSES [GO_FILE [THREADS [load|syscall]]]\n",
			argv[0]);
		return 2;
	}
	size = strtoull(argv[1], NULL, 0) << 20;
	passes = atoi(argv[2]);
	if (argc > 3 && argv[3][0])
		go = argv[3];
	if (argc > 4)
		threads = atoi(argv[4]);
	if (argc > 5 && !strcmp(argv[5], "syscall")) {
		fd = memfd_create("leap-touch", 0);
		if (fd < 0) {
			perror("leap-touch: memfd_create");
			return 1;
		}
	}
	if (!size || passes < 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "leap-touch: bad arguments\n");
		return 2;
	}
	pages = size / (size_t)page;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (mem == MAP_FAILED) {
		perror("leap-touch: mmap");
		return 1;
	}
	madvise(mem, size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		mem[i * (size_t)page] = (unsigned char)(i | 1);
	printf("filled\n");
	fflush(stdout);

	if (go) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++)
			nanosleep(&ts, NULL);
	}

	for (int t = 0; t < threads; t++) {
		size_t share = pages / (size_t)threads;

		parts[t] = (struct part){.base = mem + (size_t)t * share * (size_t)page,
					 .pages = share,
					 .page = page,
					 .passes = passes,
					 .fd = fd};
		if (threads == 1) {
			walk(&parts[t]);
		} else if (pthread_create(&tids[t], NULL, walk, &parts[t])) {
			fprintf(stderr, "leap-touch: pthread_create failed\n");
			return 1;
		}
	}
	if (threads > 1)
		for (int t = 0; t < threads; t++)
			pthread_join(tids[t], NULL);
	printf("done\n");
	fflush(stdout);
	return 0;
}
