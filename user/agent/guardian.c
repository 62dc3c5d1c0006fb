// SPDX-License-Identifier: MIT
/* vm.page-cluster while running, and the guardian (guardian.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guardian.h"

#define PAGE_CLUSTER "/proc/sys/vm/page-cluster"

static char saved_page_cluster[16];

int page_cluster_off(void)
{
	FILE *f = fopen(PAGE_CLUSTER, "re");

	if (!f || !fgets(saved_page_cluster, sizeof(saved_page_cluster), f)) {
		if (f)
			fclose(f);
		saved_page_cluster[0] = '\0';
		return -errno;
	}
	fclose(f);
	f = fopen(PAGE_CLUSTER, "we");
	if (!f)
		return -errno;
	fputs("0\n", f);
	return fclose(f) ? -errno : 0;
}

void page_cluster_restore(void)
{
	FILE *f;

	if (!saved_page_cluster[0])
		return;
	f = fopen(PAGE_CLUSTER, "we");
	if (f) {
		fputs(saved_page_cluster, f);
		fclose(f);
	}
	saved_page_cluster[0] = '\0';
}

int guardian_start(struct guardian *g, struct run_cgroup *cg)
{
	int p[2];
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (g->pid == 0) {
		/* Ctrl-C reaches the whole process group: outlive it. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		page_cluster_restore();
		if (cg)
			run_cgroup_destroy(cg);
		_exit(0);
	}
	close(p[0]);
	g->fd = p[1];
	return 0;
}

void guardian_finish(struct guardian *g)
{
	if (g->pid <= 0)
		return;
	close(g->fd);
	waitpid(g->pid, NULL, 0);
	g->pid = 0;
}
