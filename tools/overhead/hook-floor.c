// SPDX-License-Identifier: MIT
/*
 * hook-floor: loads and attaches the empty programs of hook-floor.bpf.o
 * (path in argv[1]; only those named after it, if any) and holds them
 * until SIGINT or SIGTERM.  Prints "attached" on stderr once they run.
 *
 *   hook-floor OBJECT.bpf.o [PROGRAM...]
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: hook-floor OBJECT.bpf.o [PROGRAM...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return 1;
	bpf_object__for_each_program(prog, obj)
	{
		bool wanted = argc == 2;

		for (int i = 2; i < argc; i++)
			wanted |= !strcmp(argv[i], bpf_program__name(prog));
		bpf_program__set_autoload(prog, wanted);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "hook-floor: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
	{
		if (!bpf_program__autoload(prog))
			continue;
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "hook-floor: cannot attach %s\n",
				bpf_program__name(prog));
			return 1;
		}
		n++;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "hook-floor: attached %d programs\n", n);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return 0;
}
