// SPDX-License-Identifier: MIT
/*
 * leap-swapd: a swap device whose pages live in leap-memd servers.  By
 * default it serves one file through FUSE; a loop device with direct I/O
 * over that file is what `swapon` takes (docs/backend.md):
 *
 *   leap-swapd --mount /run/leap-swapd --size 1G --server 127.0.0.1:7480 \
 *              --secret-file /etc/leap/secret &
 *   dev=$(losetup --direct-io=on --show -f /run/leap-swapd/swap)
 *   mkswap "$dev" && swapon "$dev"
 *
 * With --frontend nbd it is the server of a kernel NBD device instead
 * (nbd.c): `leap-swapd --frontend nbd --size 1G ...` prints the /dev/nbdN
 * it serves, which swapon takes directly.  With --frontend ublk (ublk*.c,
 * Linux 6.0+ with ublk_drv) it adds a /dev/ublkbN served through io_uring,
 * one queue per CPU; `--recover N` takes /dev/ublkbN over after a
 * leap-swapd that served it died.
 *
 * Run it outside any memory-limited cgroup (it refuses otherwise): memcg
 * reclaim waits for the swap writeback this daemon does.
 *
 * Exit status: 0 clean stop, 1 failure, 2 bad usage.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "leap/size.h"
#include "swapd.h"

const char *argp_program_version = "leap-swapd 0.1";
const char *argp_program_bug_address = "the leap issue tracker";

#define UBLKQ_MAX 256 /* --ublk-queues (the driver allows 4096, cut to the CPUs) */

static const char doc[] =
	"leap-swapd: a swap device backed by leap-memd servers (FUSE file + loop, "
	"an NBD device or a ublk device).\v"
	"Stops on SIGTERM/SIGINT only while the file is not open (detach the loop "
	"device first) or, with NBD and ublk, while the device is not claimed "
	"(swapoff first); SIGKILL forces it.  A ublk device added with recovery "
	"(the default) outlives a SIGKILLed leap-swapd: its I/O waits until "
	"`leap-swapd --frontend ublk --recover N` (same servers, --size and --dev) "
	"serves /dev/ublkbN again.";

enum {
	OPT_NO_MLOCK = 0x100,
	OPT_STRIPE,
	OPT_RETRY,
	OPT_THREADS,
	OPT_ALLOW_MEMCG,
	OPT_CONTROL,
	OPT_CACHE,
	OPT_FRONTEND,
	OPT_DEVICE,
	OPT_NBD_SOCKET,
	OPT_REG_TRACE,
	OPT_CONNS,
	OPT_WINDOW,
	OPT_FUSE_BG,
	OPT_FUSE_CLONE,
	OPT_REG_CACHE,
	OPT_REG_CACHE_SIZE,
	OPT_UBLK_QUEUES,
	OPT_UBLK_DEPTH,
	OPT_UBLK_BLOCK,
	OPT_UBLK_RECOVERY,
	OPT_RECOVER,
	OPT_STATE,
	OPT_NBD_CONNS,
	OPT_NBD_DEAD,
	OPT_RECONNECT,
};

static const struct argp_option options[] = {
	{"frontend", OPT_FRONTEND, "fuse|nbd|ublk", 0,
	 "fuse (default): a file for a loop device; nbd: a kernel NBD device; ublk: "
	 "a /dev/ublkbN (ublk_drv)",
	 0},
	{"mount", 'm', "DIR", 0, "FUSE mount point (an existing directory; fuse only)",
	 0},
	{"device", OPT_DEVICE, "/dev/nbdN", 0, "NBD device (default: the first free one)",
	 0},
	{"nbd-connections", OPT_NBD_CONNS, "N", 0,
	 "NBD: sockets given to the driver, one hardware queue each (default: the "
	 "number of CPUs, at most 16)",
	 0},
	{"nbd-dead-timeout", OPT_NBD_DEAD, "SECONDS", 0,
	 "NBD: when every connection is dead (leap-swapd killed), the kernel holds "
	 "I/O this long for a --reconnect before failing it (default 120; 0: fail "
	 "at once)",
	 0},
	{"reconnect", OPT_RECONNECT, "/dev/nbdN", 0,
	 "NBD: take over this device, whose leap-swapd died, with fresh sockets "
	 "(NBD_CMD_RECONFIGURE); needs the dead one's --state, servers and size",
	 0},
	{"nbd-socket", OPT_NBD_SOCKET, "FD", 0,
	 "Serve NBD requests on this inherited socket, no device (for tests)", 0},
	{"ublk-queues", OPT_UBLK_QUEUES, "N", 0,
	 "ublk: hardware queues, one thread and io_uring each (default: the CPUs; "
	 "the driver caps it there)",
	 0},
	{"ublk-depth", OPT_UBLK_DEPTH, "N", 0, "ublk: requests per queue (default 64)",
	 0},
	{"ublk-block", OPT_UBLK_BLOCK, "4096|512", 0,
	 "ublk: logical block (default 4096)", 0},
	{"ublk-recovery", OPT_UBLK_RECOVERY, "0|1", 0,
	 "ublk: add the device with user recovery and reissue, so that it survives "
	 "this daemon (default 1)",
	 0},
	{"recover", OPT_RECOVER, "N", 0,
	 "ublk: take over /dev/ublkbN, whose leap-swapd died (START/END_USER_RECOVERY)",
	 0},
	{"size", 'S', "SIZE", 0, "Device size: bytes or K/M/G (required)", 0},
	{"server", 's', "ADDR:PORT", 0, "A leap-memd server (repeat to stripe)", 0},
	{"secret-file", 'k', "FILE", 0, "Shared secret, mode 0600 (required)", 0},
	{"transport", 't', "NAME", 0, "tcp (default) or rdma (RDMA verbs, one-sided)", 0},
	{"replicas", 'r', "R", 0, "Copies of each page: 1 (default) or 2", 0},
	{"dev", 'd', "ID", 0, "Device id on the servers (default 1)", 0},
	{"stripe", OPT_STRIPE, "PAGES", 0, "Stripe unit in pages (default 16)", 0},
	{"retry-ms", OPT_RETRY, "MS", 0, "Retry a lost server this long (default 10000)",
	 0},
	{"threads", OPT_THREADS, "N", 0,
	 "FUSE or NBD worker threads; ublk: workers shared out among the queues, at "
	 "least 2 each (default 16)",
	 0},
	{"conns", OPT_CONNS, "N", 0,
	 "Connections per server (default 2, at most 16): TCP pipelined, RDMA one "
	 "QP each",
	 0},
	{"window", OPT_WINDOW, "N", 0,
	 "TCP: requests in flight per connection (default 32; prefetches at most "
	 "half)",
	 0},
	{"fuse-max-background", OPT_FUSE_BG, "N", 0,
	 "FUSE: asynchronous requests the kernel keeps outstanding (default 64; "
	 "0: libfuse's 12); the congestion threshold is 3/4 of it",
	 0},
	{"fuse-clone-fd", OPT_FUSE_CLONE, "0|1", 0,
	 "FUSE: one /dev/fuse descriptor per worker thread (default 1)", 0},
	{"control", OPT_CONTROL, "PATH", 0,
	 "Control socket (mode 0600) for PREFETCH/STATS; enables the prefetch cache", 0},
	{"cache-pages", OPT_CACHE, "N", 0, "Prefetch cache size in pages (default 4096)",
	 0},
	{"state", OPT_STATE, "FILE", 0,
	 "Keep which pages were written and which replica holds each in FILE "
	 "(created if absent; on a disk filesystem, not tmpfs): a leap-swapd "
	 "restarted after a crash with the same FILE, servers and size serves "
	 "the pages the servers still hold (default: in memory only)",
	 0},
	{"no-mlock", OPT_NO_MLOCK, NULL, 0, "Do not lock memory (not for real swap)", 0},
	{"allow-memcg", OPT_ALLOW_MEMCG, NULL, 0,
	 "Start even inside a memory-limited cgroup (deadlock-prone)", 0},
	{"verbose", 'v', NULL, 0, "FUSE debug output", 0},
	{"reg-cache", OPT_REG_CACHE, "mrrc|lru|mrrc-rank|off", 0,
	 "RDMA: move pages straight into/from FUSE's buffers, registered through "
	 "this registration cache (default off: a copy through a registered "
	 "staging buffer)",
	 0},
	{"reg-cache-size", OPT_REG_CACHE_SIZE, "SIZE", 0,
	 "With --reg-cache: pin at most SIZE (default 64M)", 0},
	{"reg-trace", OPT_REG_TRACE, "FILE", 0,
	 "RDMA: record every RDMA operation's local buffer in FILE (registration "
	 "trace format, for leap-regsim)",
	 0},
	{0},
};

struct args {
	struct leap_mc_config mc;
	const char *mount, *secret_file, *control, *device;
	int nbd_socket;
	bool nbd, ublk;
	struct swapd_ublk_opts ub;
	const char *reconnect;
	unsigned long nbd_conns, nbd_dead;
	unsigned long cache_pages;
	uint64_t size;
	unsigned long threads;
	struct swapd_fuse_opts fuse;
	bool no_mlock, allow_memcg, verbose;
};

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct args *a = st->input;
	unsigned long long v;
	uint64_t v64;

	switch (key) {
	case 'm':
		a->mount = arg;
		break;
	case OPT_FRONTEND:
		if (strcmp(arg, "fuse") && strcmp(arg, "nbd") && strcmp(arg, "ublk"))
			argp_error(st, "--frontend is fuse, nbd or ublk");
		a->nbd = !strcmp(arg, "nbd");
		a->ublk = !strcmp(arg, "ublk");
		break;
	case OPT_UBLK_QUEUES:
		if (leap_parse_uint(arg, 10, UBLKQ_MAX, &v) || v < 1)
			argp_error(st, "--ublk-queues is 1..%d", UBLKQ_MAX);
		a->ub.queues = (unsigned)v;
		break;
	case OPT_UBLK_DEPTH:
		if (leap_parse_uint(arg, 10, 4096, &v) || v < 1)
			argp_error(st, "--ublk-depth is 1..4096");
		a->ub.depth = (unsigned)v;
		break;
	case OPT_UBLK_BLOCK:
		if (leap_parse_uint(arg, 10, 4096, &v) || (v != 512 && v != 4096))
			argp_error(st, "--ublk-block is 4096 or 512");
		a->ub.block = (uint32_t)v;
		break;
	case OPT_UBLK_RECOVERY:
		if (leap_parse_uint(arg, 10, 1, &v))
			argp_error(st, "--ublk-recovery is 0 or 1");
		a->ub.recovery = (int)v;
		break;
	case OPT_RECOVER: {
		const char *p = arg;

		if (!strncmp(p, "/dev/ublkb", 10))
			p += 10;
		if (leap_parse_uint(p, 10, 1 << 20, &v))
			argp_error(st, "bad --recover '%s' (N or /dev/ublkbN)", arg);
		a->ub.recover_id = (int)v;
		break;
	}
	case OPT_DEVICE:
		a->device = arg;
		break;
	case OPT_NBD_SOCKET: {
		int type = 0;
		socklen_t tl = sizeof(type);

		if (leap_parse_uint(arg, 10, 65535, &v) ||
		    getsockopt((int)v, SOL_SOCKET, SO_TYPE, &type, &tl) ||
		    type != SOCK_STREAM)
			argp_error(st, "--nbd-socket: %s is not a stream socket", arg);
		a->nbd_socket = (int)v;
		break;
	}
	case 'S':
		if (leap_parse_size(arg, &v64) || v64 > LEAP_WIRE_MAX_OFFSET ||
		    v64 < 16 * LEAP_WIRE_PAGE_SIZE || v64 % LEAP_WIRE_PAGE_SIZE)
			argp_error(st, "bad --size '%s' (a page multiple, >= 64K)", arg);
		a->size = v64;
		break;
	case 's':
		if (a->mc.nservers >= LEAP_MC_MAX_SERVERS)
			argp_error(st, "at most %d servers", LEAP_MC_MAX_SERVERS);
		a->mc.servers[a->mc.nservers++] = arg;
		break;
	case 'k':
		a->secret_file = arg;
		break;
	case 't':
		a->mc.transport = leap_transport_find(arg);
		if (!a->mc.transport)
			argp_error(st, "unknown transport '%s' (tcp or rdma)", arg);
		break;
	case 'r':
		if (leap_parse_uint(arg, 10, 2, &v) || v < 1)
			argp_error(st, "--replicas is 1 or 2");
		a->mc.replicas = (unsigned)v;
		break;
	case 'd':
		if (leap_parse_uint(arg, 10, UINT32_MAX, &v))
			argp_error(st, "bad --dev '%s'", arg);
		a->mc.dev = (uint32_t)v;
		break;
	case OPT_STRIPE:
		if (leap_parse_uint(arg, 10, 1 << 20, &v) || v < 1)
			argp_error(st, "bad --stripe '%s'", arg);
		a->mc.stripe_pages = (uint32_t)v;
		break;
	case OPT_RETRY:
		if (leap_parse_uint(arg, 10, 3600000, &v) || v < 1)
			argp_error(st, "bad --retry-ms '%s'", arg);
		a->mc.retry_ms = (int)v;
		break;
	case OPT_THREADS:
		if (leap_parse_uint(arg, 10, 64, &v) || v < 1)
			argp_error(st, "--threads is 1..64");
		a->threads = (unsigned long)v;
		break;
	case OPT_CONNS:
		if (leap_parse_uint(arg, 10, LEAP_MC_MAX_CONNS, &v) || v < 1)
			argp_error(st, "--conns is 1..%d", LEAP_MC_MAX_CONNS);
		a->mc.conns = (unsigned)v;
		break;
	case OPT_WINDOW:
		if (leap_parse_uint(arg, 10, 256, &v) || v < 2)
			argp_error(st, "--window is 2..256");
		a->mc.window = (unsigned)v;
		break;
	case OPT_FUSE_BG:
		if (leap_parse_uint(arg, 10, 65535, &v))
			argp_error(st, "--fuse-max-background is 0..65535");
		a->fuse.max_background = (unsigned)v;
		break;
	case OPT_FUSE_CLONE:
		if (leap_parse_uint(arg, 10, 1, &v))
			argp_error(st, "--fuse-clone-fd is 0 or 1");
		a->fuse.clone_fd = (int)v;
		break;
	case OPT_CONTROL:
		a->control = arg;
		break;
	case OPT_CACHE:
		if (leap_parse_uint(arg, 10, 1 << 24, &v) || v < 1)
			argp_error(st, "--cache-pages is 1..16777216");
		a->cache_pages = (unsigned long)v;
		break;
	case OPT_NBD_CONNS:
		if (leap_parse_uint(arg, 10, SWAPD_NBD_MAX_CONNS, &v) || v < 1)
			argp_error(st, "--nbd-connections is 1..%d", SWAPD_NBD_MAX_CONNS);
		a->nbd_conns = (unsigned long)v;
		break;
	case OPT_NBD_DEAD:
		if (leap_parse_uint(arg, 10, 86400, &v))
			argp_error(st, "--nbd-dead-timeout is 0..86400 seconds");
		a->nbd_dead = (unsigned long)v;
		break;
	case OPT_RECONNECT:
		a->reconnect = arg;
		break;
	case OPT_STATE:
		if (!*arg)
			argp_error(st, "--state needs a file name");
		a->mc.state_file = arg;
		break;
	case OPT_NO_MLOCK:
		a->no_mlock = true;
		break;
	case OPT_REG_TRACE:
		a->mc.reg_trace = arg;
		break;
	case OPT_REG_CACHE:
		if (!leap_mc_reg_cache_ok(arg))
			argp_error(st, "--reg-cache is mrrc, lru, mrrc-rank or off");
		a->mc.reg_cache = arg;
		break;
	case OPT_REG_CACHE_SIZE:
		if (leap_parse_size(arg, &a->mc.reg_cache_bytes) ||
		    a->mc.reg_cache_bytes < LEAP_WIRE_PAGE_SIZE)
			argp_error(st, "bad --reg-cache-size '%s'", arg);
		break;
	case OPT_ALLOW_MEMCG:
		a->allow_memcg = true;
		break;
	case 'v':
		a->verbose = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!a->size || !a->mc.nservers || !a->secret_file)
			argp_error(st, "--size, --server and --secret-file are required");
		if (!a->nbd && !a->ublk && !a->mount)
			argp_error(st, "--mount is required with the FUSE frontend");
		if ((a->nbd || a->ublk) && a->mount)
			argp_error(st, "--mount is for the FUSE frontend");
		if (!a->ublk && (a->ub.queues || a->ub.depth || a->ub.block ||
				 a->ub.recovery >= 0 || a->ub.recover_id >= 0))
			argp_error(st,
				   "--ublk-* and --recover are for the ublk frontend");
		/* Without the dead daemon's record of which pages were written
		 * where (--state), only one copy can be trusted after a restart:
		 * a replica that missed a write would be read as current. */
		if (a->ub.recover_id >= 0 && a->mc.replicas > 1 && !a->mc.state_file)
			argp_error(st, "--recover with --replicas 2 needs the --state "
				       "FILE of the leap-swapd that died");
		if (!a->nbd && (a->device || a->nbd_socket >= 0 || a->reconnect))
			argp_error(st, "--device, --reconnect and --nbd-socket are for "
				       "the NBD frontend");
		if (!!a->device + (a->nbd_socket >= 0) + !!a->reconnect > 1)
			argp_error(st, "one of --device, --reconnect, --nbd-socket");
		/* Without the dead daemon's record every page the kernel swapped
		 * out would read as zeros. */
		if (a->reconnect && !a->mc.state_file)
			argp_error(st, "--reconnect needs the --state FILE of the "
				       "leap-swapd that died");
		if (a->mc.replicas > a->mc.nservers)
			argp_error(st, "--replicas 2 needs two servers");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ublk: one queue per CPU, depth 64, --threads workers shared out among
 * the queues (at least 2 each, so a queue serves requests in parallel). */
static void ublk_defaults(struct args *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned per;

	if (!a->ub.queues)
		a->ub.queues = cpus < 1		  ? 1
			       : cpus > UBLKQ_MAX ? UBLKQ_MAX
						  : (unsigned)cpus;
	if (!a->ub.depth)
		a->ub.depth = 64;
	if (!a->ub.block)
		a->ub.block = 4096;
	if (a->ub.recovery < 0)
		a->ub.recovery = 1;
	a->ub.max_io = 128 << 10;
	per = (unsigned)(a->threads + a->ub.queues - 1) / a->ub.queues;
	a->ub.workers = per < 2 ? 2 : per;
}

int main(int argc, char **argv)
{
	static struct args a = {
		.mc = {.replicas = 1, .dev = 1, .log_prefix = "leap-swapd"},
		.threads = 16,
		.fuse = {.max_background = 64, .clone_fd = 1},
		.cache_pages = 4096,
		.nbd_socket = -1,
		.ub = {.recovery = -1, .recover_id = -1},
		.nbd_dead = 120,
	};
	struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	static uint8_t secret[LEAP_SECRET_MAX];
	static struct swapd sd;
	char err[512];
	long slen;
	int rc;

	argp_err_exit_status = 2;
	setvbuf(stderr, NULL, _IOLBF, 0);
	/* libfuse sizes its worker stacks from FUSE_THREAD_STACK (fuse_loop_mt.c,
	 * fuse_start_thread); mlockall would lock glibc's default 8 MiB for
	 * each of them.  Before any thread exists (setenv is not thread-safe). */
	setenv("FUSE_THREAD_STACK", "524288", 0);
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	if (swapd_in_limited_memcg(err, sizeof(err)) && !a.allow_memcg) {
		fprintf(stderr,
			"leap-swapd: refusing to run in a memory-limited cgroup (%s): "
			"its "
			"reclaim would wait for this daemon's own swap I/O; start it "
			"outside\n",
			err);
		return 1;
	}
	/* Before connecting anywhere: say at once when NBD cannot work here. */
	if (a.nbd && a.nbd_socket < 0 && swapd_nbd_probe(err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: --frontend nbd: %s\n", err);
		return 1;
	}
	if (a.ublk && swapd_ublk_probe(err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: --frontend ublk: %s\n", err);
		return 1;
	}
	if (a.ublk)
		ublk_defaults(&a);
	slen = leap_secret_load(a.secret_file, secret, sizeof(secret), err, sizeof(err));
	if (slen < 0) {
		fprintf(stderr, "leap-swapd: %s\n", err);
		return 1;
	}
	a.mc.secret = secret;
	a.mc.secret_len = (size_t)slen;
	a.mc.dev_pages = a.size / LEAP_WIRE_PAGE_SIZE;
	/* A recovered device's pages were written by the dead daemon.  With
	 * its --state, memclient knows which and where; without, count every
	 * page as written, so a page the server lacks is an error, not zeros
	 * (one replica only, checked above). */
	if (a.ub.recover_id >= 0 && !a.mc.state_file)
		a.mc.existing = 1;
	sd.size = a.size;
	sd.verbose = a.verbose;
	pthread_mutex_init(&sd.bounce_lock, NULL);
	pthread_mutex_init(&sd.stat_lock, NULL);
	/* Everything the I/O path needs is allocated here, before locking. */
	sd.bounce_len = 256 << 10;
	sd.bounce = malloc(sd.bounce_len + LEAP_WIRE_PAGE_SIZE);
	sd.mc = leap_mc_open(&a.mc, err, sizeof(err));
	if (!sd.mc || !sd.bounce) {
		fprintf(stderr, "leap-swapd: %s\n", sd.mc ? "out of memory" : err);
		return 1;
	}
	if (leap_mc_check_capacity(sd.mc, err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: refusing to start: %s\n", err);
		leap_mc_close(sd.mc);
		return 1;
	}
	if (a.control && (pcache_init(&sd.cache, (uint32_t)a.cache_pages) ||
			  swapd_ctl_start(&sd, a.control, err, sizeof(err)))) {
		fprintf(stderr, "leap-swapd: %s\n",
			sd.cache.cap ? err : "no memory for the cache");
		leap_mc_close(sd.mc);
		return 1;
	}
	if (swapd_harden(a.no_mlock, err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: %s\n", err);
		swapd_ctl_stop(&sd);
		leap_mc_close(sd.mc);
		return 1;
	}
	if (a.ublk) {
		rc = swapd_ublk_run(&sd, &a.ub);
	} else if (a.nbd) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		struct swapd_nbd_opts no = {
			.device = a.reconnect ? a.reconnect : a.device,
			.sock_fd = a.nbd_socket,
			.nthreads = (int)a.threads,
			.connections = a.nbd_conns		    ? (int)a.nbd_conns
				       : ncpu < 1		    ? 1
				       : ncpu > SWAPD_NBD_MAX_CONNS ? SWAPD_NBD_MAX_CONNS
								    : (int)ncpu,
			.dead_timeout_s = (unsigned)a.nbd_dead,
			.reconnect = a.reconnect != NULL,
		};

		rc = swapd_nbd_run(&sd, &no);
	} else {
		rc = swapd_fuse_run(&sd, a.mount, (int)a.threads, &a.fuse);
	}
	swapd_ctl_stop(&sd);
	swapd_print_stats(&sd, stderr);
	leap_mc_close(sd.mc);
	if (sd.cache.cap)
		pcache_fini(&sd.cache);
	free(sd.bounce);
	return rc;
}
