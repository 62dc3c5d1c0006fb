// SPDX-License-Identifier: MIT
/*
 * leap observer loader library: see observer.h.
 *
 * Start-up: probe the hook set, open the skeleton with only that set's
 * programs autoloaded, set the agent's tgid and the ring size, load,
 * attach, then pin the maps under the pin directory with an owner record
 * so a second instance can tell a live owner from a crash's leftovers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "leap_event.h"
#include "leap_observer.h"
#include "leap_observer.skel.h"
#include "observer.h"
#include "observer_ring.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define LEAP_BPFFS_ROOT "/sys/fs/bpf"

/* Pinned maps, by the name under the pin directory. */
enum { PIN_OWNER, PIN_STATS, PIN_CGROUPS, PIN_PIDS, PIN_LEAVES, PIN_COUNT };
static const char *const pin_names[PIN_COUNT] = {"owner", "stats", "cgroups", "pids",
						 "leaves"};

/* Tracepoint path: leap_memcg_ev, leap_rss_stat (count_swap_cache_hits
 * only), leap_pf_user, leap_pf_kernel. */
#define FAULT_HOOKS 4

struct leap_observer {
	struct leap_observer_bpf *skel;
	enum leap_hook hook;
	struct ring_buffer *rb;
	struct leap_ring_wait *ring_wait; /* NULL: every wake-up asked for */
	struct leap_cg_stats *stats;	  /* mmap of leap_stats */
	size_t stats_len;
	struct leap_issued_slot *issued; /* mmap of leap_issued */
	size_t issued_len;
	int stats_fd; /* bpf_enable_stats() fd, -1 if off */
	leap_observer_event_fn on_event;
	void *event_ctx;
	char pin_dir[PATH_MAX];
	bool pinned[PIN_COUNT];
	bool made_pin_dir;
	/* Arming (opts.arm_on_swap on the tracepoint path): the fault hooks'
	 * links while attached, NULL while not. */
	bool arming;
	struct bpf_link *fault_links[FAULT_HOOKS];
};

/* ---- logging -------------------------------------------------------------- */

/* libbpf's print hook is process-wide, hence these. */
static leap_observer_log_fn g_log;
static void *g_log_ctx;
static bool g_libbpf_debug;
static bool g_libbpf_quiet; /* while probing: failures are expected */

static void leap_log(enum leap_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void leap_log(enum leap_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (g_log) {
		g_log(g_log_ctx, level, msg);
		return;
	}
	if (level <= LEAP_LOG_WARN)
		fprintf(stderr, "leap-observer: %s\n", msg);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum leap_log_level lvl;
	char msg[1024];
	size_t n;

	if (g_libbpf_quiet && level != LIBBPF_DEBUG)
		level = LIBBPF_DEBUG;
	if (level == LIBBPF_DEBUG && !g_libbpf_debug)
		return 0;
	lvl = level == LIBBPF_WARN   ? LEAP_LOG_WARN
	      : level == LIBBPF_INFO ? LEAP_LOG_INFO
				     : LEAP_LOG_DEBUG;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	leap_log(lvl, "%s", msg); /* libbpf prefixes "libbpf: " itself */
	return 0;
}

/* ---- small helpers ---------------------------------------------------------- */

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot; 0 if gone. */
static __u64 proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	__u64 start = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* comm may contain spaces and parens */
	if (!p)
		return 0;
	p++;
	/* p points before field 3; skip to field 22. */
	for (field = 3; field <= 22 && p; field++) {
		while (*p == ' ')
			p++;
		if (field == 22) {
			start = strtoull(p, NULL, 10);
			break;
		}
		p = strchr(p, ' ');
	}
	return start;
}

static int path_join(char *dst, size_t len, const char *dir, const char *name)
{
	int n = snprintf(dst, len, "%s/%s", dir, name);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/* ---- hook probing ----------------------------------------------------------- */

/* Whether shared memory's fault handler can be hooked (fentry path). */
static bool has_shmem_fault(const struct btf *vmlinux)
{
	return vmlinux &&
	       btf__find_by_name_kind(vmlinux, "shmem_fault", BTF_KIND_FUNC) > 0;
}

/* The swap read function of this kernel, or NULL. */
static const char *swap_read_fn(const struct btf *vmlinux)
{
	if (btf__find_by_name_kind(vmlinux, "swap_read_folio", BTF_KIND_FUNC) > 0)
		return "swap_read_folio";
	if (btf__find_by_name_kind(vmlinux, "swap_readpage", BTF_KIND_FUNC) > 0)
		return "swap_readpage";
	return NULL;
}

static void set_autoload(struct leap_observer_bpf *skel, enum leap_hook hook,
			 const char *read_fn, bool backend, bool shmem)
{
	bool fentry = hook == LEAP_HOOK_FENTRY;

	bpf_program__set_autoload(skel->progs.leap_bio_queue, backend);
	bpf_program__set_autoload(skel->progs.leap_bio_queue_q, false);
	bpf_program__set_autoload(skel->progs.leap_pf_user, !fentry);
	bpf_program__set_autoload(skel->progs.leap_pf_kernel, !fentry);
	bpf_program__set_autoload(skel->progs.leap_memcg_ev, !fentry);
	/* On with count_swap_cache_hits only (open_and_load()); never in the
	 * fentry probe, whose kernels may not take it. */
	bpf_program__set_autoload(skel->progs.leap_rss_stat, false);
	bpf_program__set_autoload(skel->progs.leap_swap_entry, fentry);
	bpf_program__set_autoload(skel->progs.leap_swap_exit, fentry);
	/* Shared memory's faults (the tracepoints see every fault). */
	bpf_program__set_autoload(skel->progs.leap_shmem_entry, fentry && shmem);
	bpf_program__set_autoload(skel->progs.leap_shmem_exit, fentry && shmem);
	bpf_program__set_autoload(skel->progs.leap_read_folio,
				  fentry && read_fn &&
					  !strcmp(read_fn, "swap_read_folio"));
	bpf_program__set_autoload(skel->progs.leap_readpage,
				  fentry && read_fn && !strcmp(read_fn, "swap_readpage"));
	bpf_program__set_autoload(skel->progs.leap_record, false);
	bpf_program__set_autoload(skel->progs.leap_arm_bio, false);
}

/*
 * Can the fentry set load and attach here?  Test-loads it alone in a
 * throw-away skeleton.  0 if yes, else -errno with *why filled.
 */
static int probe_fentry(const struct btf *vmlinux, const char *read_fn, char *why,
			size_t len)
{
	struct leap_observer_bpf *skel;
	long page = sysconf(_SC_PAGESIZE);
	struct bpf_map *m;
	int err;

	if (!vmlinux) {
		snprintf(why, len, "no kernel BTF");
		return -EOPNOTSUPP;
	}
	if (btf__find_by_name_kind(vmlinux, "do_swap_page", BTF_KIND_FUNC) <= 0) {
		snprintf(why, len, "do_swap_page is not in the kernel BTF");
		return -EOPNOTSUPP;
	}
	skel = leap_observer_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(why, len, "open: %s", strerror(-err));
		return err;
	}
	set_autoload(skel, LEAP_HOOK_FENTRY, read_fn, false, has_shmem_fault(vmlinux));
	bpf_map__set_autocreate(skel->maps.leap_pending_task, false);
	/* The probe copy needs no real ring and no real tables: preallocating
	 * the LRU maps at full size was a third of `leap-agent run`'s start. */
	bpf_map__set_max_entries(skel->maps.leap_events, (__u32)page);
	bpf_object__for_each_map(m, skel->obj)
	{
		enum bpf_map_type t = bpf_map__type(m);

		if (!bpf_map__is_internal(m) &&
		    (t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_LRU_HASH ||
		     t == BPF_MAP_TYPE_ARRAY))
			bpf_map__set_max_entries(m, 1);
	}
	g_libbpf_quiet = true;
	err = leap_observer_bpf__load(skel);
	if (err) {
		snprintf(why, len, "load: %s", strerror(-err));
	} else {
		err = leap_observer_bpf__attach(skel);
		if (err)
			snprintf(why, len, "attach: %s", strerror(-err));
	}
	g_libbpf_quiet = false;
	leap_observer_bpf__destroy(skel);
	return err;
}

/* Is the memory controller enabled (else count_memcg_events never fires)? */
static bool memcg_enabled(void)
{
	char line[256], name[64];
	unsigned int hier, num, enabled;
	bool on = false;
	FILE *f = fopen("/proc/cgroups", "re");

	if (!f)
		return true; /* cannot tell: let it try */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %u %u %u", name, &hier, &num, &enabled) == 4 &&
		    !strcmp(name, "memory")) {
			on = enabled != 0;
			break;
		}
	}
	fclose(f);
	return on;
}

static int check_tracepoint(const struct btf *vmlinux)
{
	if (vmlinux) {
		if (btf__find_by_name_kind(vmlinux, "btf_trace_page_fault_user",
					   BTF_KIND_TYPEDEF) <= 0) {
			leap_log(LEAP_LOG_ERROR,
				 "tracepoint hooks: this kernel has no "
				 "exceptions/page_fault_user tracepoint (x86 only)");
			return -EOPNOTSUPP;
		}
		if (btf__find_by_name_kind(vmlinux, "btf_trace_count_memcg_events",
					   BTF_KIND_TYPEDEF) <= 0) {
			leap_log(LEAP_LOG_ERROR,
				 "tracepoint hooks: this kernel has no "
				 "memcg/count_memcg_events "
				 "tracepoint (added in ~6.13); use the fentry hooks");
			return -EOPNOTSUPP;
		}
	}
	if (!memcg_enabled()) {
		leap_log(LEAP_LOG_ERROR,
			 "tracepoint hooks: the memory cgroup controller is "
			 "disabled, so count_memcg_events never fires");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * block_bio_queue's arguments: (struct bio *) since ~5.11, (struct
 * request_queue *, struct bio *) before.  The tracepoint's BTF typedef
 * btf_trace_block_bio_queue is void (*)(void *ctx, args...).  1 if the
 * bio is the second argument, 0 if the first, -1 if there is no such
 * tracepoint.
 */
static int bio_queue_has_queue_arg(const struct btf *vmlinux)
{
	const struct btf_type *t;
	int id;

	if (!vmlinux)
		return 0; /* assume a current kernel */
	id = btf__find_by_name_kind(vmlinux, "btf_trace_block_bio_queue",
				    BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(vmlinux, (__u32)id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t)))
		t = btf__type_by_id(vmlinux, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) == 3;
}

/* ---- pinning ----------------------------------------------------------------- */

static int ensure_bpffs(const char *pin_dir)
{
	char parent[PATH_MAX], *slash;
	struct statfs sfs;

	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent) {
		leap_log(LEAP_LOG_ERROR,
			 "pin directory %s: must be a subdirectory of a bpffs", pin_dir);
		return -EINVAL;
	}
	*slash = 0;
	if (statfs(parent, &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (strcmp(parent, LEAP_BPFFS_ROOT) != 0) {
		leap_log(LEAP_LOG_ERROR, "pin directory %s: %s is not a bpffs", pin_dir,
			 parent);
		return -EINVAL;
	}
	if (mkdir(parent, 0755) && errno != EEXIST) {
		leap_log(LEAP_LOG_ERROR, "mkdir %s: %s", parent, strerror(errno));
		return -errno;
	}
	if (mount("bpf", parent, "bpf", 0, "mode=0700")) {
		int err = -errno;

		leap_log(LEAP_LOG_ERROR, "mount -t bpf bpf %s: %s", parent,
			 strerror(-err));
		return err;
	}
	leap_log(LEAP_LOG_INFO, "mounted bpffs at %s", parent);
	return 0;
}

/* Owner of an existing pin directory: its pid if live, 0 if stale/none. */
static pid_t live_owner(const char *pin_dir)
{
	char path[PATH_MAX];
	struct leap_owner owner = {};
	__u32 key = 0;
	int fd;

	if (path_join(path, sizeof(path), pin_dir, pin_names[PIN_OWNER]))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_map_lookup_elem(fd, &key, &owner))
		owner.pid = 0;
	close(fd);
	if (!owner.pid || (pid_t)owner.pid == getpid())
		return 0;
	if (proc_start_time((pid_t)owner.pid) != owner.start_time)
		return 0;
	return (pid_t)owner.pid;
}

pid_t leap_observer_pin_owner(const char *pin_dir)
{
	return live_owner(pin_dir ? pin_dir : LEAP_PIN_DIR);
}

/* Removes everything under a stale pin directory (one level of subdirs). */
static int clear_dir(const char *dir, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (path_join(path, sizeof(path), dir, de->d_name))
			continue;
		if (de->d_type == DT_DIR && depth < 2) {
			clear_dir(path, depth + 1);
			if (rmdir(path) && !err)
				err = -errno;
		} else if (unlink(path) && !err) {
			err = -errno;
		}
	}
	closedir(d);
	return err;
}

static struct bpf_map *pin_map(struct leap_observer *obs, int which)
{
	switch (which) {
	case PIN_OWNER:
		return obs->skel->maps.leap_owner;
	case PIN_STATS:
		return obs->skel->maps.leap_stats;
	case PIN_CGROUPS:
		return obs->skel->maps.leap_cgroups;
	case PIN_LEAVES:
		return obs->skel->maps.leap_leaves;
	default:
		return obs->skel->maps.leap_pids;
	}
}

static void unpin_all(struct leap_observer *obs)
{
	char path[PATH_MAX];

	/* owner last, so a concurrent starter never sees an ownerless half */
	for (int i = PIN_COUNT - 1; i >= 0; i--) {
		if (!obs->pinned[i])
			continue;
		if (!path_join(path, sizeof(path), obs->pin_dir, pin_names[i]) &&
		    unlink(path) && errno != ENOENT)
			leap_log(LEAP_LOG_WARN, "unpin %s: %s", path, strerror(errno));
		obs->pinned[i] = false;
	}
	if (obs->made_pin_dir) {
		if (rmdir(obs->pin_dir) && errno != ENOENT)
			leap_log(LEAP_LOG_WARN, "rmdir %s: %s", obs->pin_dir,
				 strerror(errno));
		obs->made_pin_dir = false;
	}
}

/*
 * Before loading: a bpffs to pin in, no live owner of the pin directory,
 * stale pins of a dead owner removed, the directory ours.
 */
static int pin_prepare(struct leap_observer *obs)
{
	struct stat st;
	pid_t other;
	int err;

	err = ensure_bpffs(obs->pin_dir);
	if (err)
		return err;

	if (stat(obs->pin_dir, &st) == 0) {
		other = live_owner(obs->pin_dir);
		if (other) {
			leap_log(LEAP_LOG_ERROR,
				 "%s is in use by another leap observer (pid %d); stop "
				 "it first",
				 obs->pin_dir, (int)other);
			return -EBUSY;
		}
		err = clear_dir(obs->pin_dir, 1);
		if (err) {
			leap_log(LEAP_LOG_ERROR, "removing stale pins in %s: %s",
				 obs->pin_dir, strerror(-err));
			return err;
		}
		leap_log(LEAP_LOG_INFO, "removed stale pins in %s", obs->pin_dir);
	} else if (mkdir(obs->pin_dir, 0700)) {
		err = -errno;
		leap_log(LEAP_LOG_ERROR, "mkdir %s: %s", obs->pin_dir, strerror(-err));
		return err;
	}
	obs->made_pin_dir = true;
	return 0;
}

/* After attaching: the owner record first, then every map. */
static int pin_all(struct leap_observer *obs)
{
	struct leap_owner owner = {.pid = (__u32)getpid()};
	char path[PATH_MAX];
	__u32 key = 0;
	int err;

	owner.start_time = proc_start_time(getpid());
	owner.hook = obs->hook == LEAP_HOOK_FENTRY ? LEAP_OWNER_HOOK_FENTRY
						   : LEAP_OWNER_HOOK_TRACEPOINT;
	if (bpf_map_update_elem(bpf_map__fd(obs->skel->maps.leap_owner), &key, &owner,
				BPF_ANY)) {
		err = -errno;
		leap_log(LEAP_LOG_ERROR, "writing the owner record: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < PIN_COUNT; i++) {
		err = path_join(path, sizeof(path), obs->pin_dir, pin_names[i]);
		if (!err)
			err = bpf_map__pin(pin_map(obs, i), path);
		if (err) {
			leap_log(LEAP_LOG_ERROR, "pin %s: %s", path, strerror(-err));
			return err;
		}
		obs->pinned[i] = true;
	}
	return 0;
}

/* ---- open / close ------------------------------------------------------------- */

static int ring_sample(void *ctx, void *data, size_t size)
{
	struct leap_observer *obs = ctx;

	if (size < sizeof(struct leap_event) || !obs->on_event)
		return 0;
	return obs->on_event(obs->event_ctx, data);
}

__u32 leap_observer_kdev(unsigned long long rdev)
{
	unsigned int ma = major(rdev), mi = minor(rdev);

	/* include/linux/kdev_t.h: MINORBITS 20, dev_t 32 bits. */
	if (ma >= (1u << 12) || mi >= (1u << 20))
		return 0;
	return (__u32)ma << 20 | mi;
}

static bool power_of_two(__u32 x)
{
	return x && !(x & (x - 1));
}

/*
 * Step 3 of leap_observer_open: opens the skeleton, configures it for
 * obs->hook and opts, and loads it, with the leap_record program or
 * without.  0 or -errno (obs->skel may be set either way).
 */
static int open_and_load(struct leap_observer *obs, const struct leap_observer_opts *opts,
			 const char *read_fn, int bio_q, bool record, bool shmem)
{
	obs->skel = leap_observer_bpf__open();
	if (!obs->skel) {
		int err = -errno;

		leap_log(LEAP_LOG_ERROR, "opening the BPF object: %s", strerror(-err));
		return err;
	}
	set_autoload(obs->skel, obs->hook, read_fn, opts->backend_dev != 0, shmem);
	bpf_program__set_autoload(obs->skel->progs.leap_bio_queue,
				  opts->backend_dev && !bio_q);
	bpf_program__set_autoload(obs->skel->progs.leap_bio_queue_q,
				  opts->backend_dev && bio_q);
	/* Task storage for the tracepoint path's pending faults (see the BPF
	 * side); kernels with the fentry path only may lack it for tracing. */
	obs->skel->rodata->leap_task_pending = obs->hook == LEAP_HOOK_TRACEPOINT;
	bpf_map__set_autocreate(obs->skel->maps.leap_pending_task,
				obs->hook == LEAP_HOOK_TRACEPOINT);
	/* Its pending faults live in task storage there: leap_pending stays
	 * empty (an LRU map is preallocated whole). */
	if (obs->hook == LEAP_HOOK_TRACEPOINT)
		bpf_map__set_max_entries(obs->skel->maps.leap_pending, 1);
	bpf_program__set_autoload(obs->skel->progs.leap_record, record);
	bpf_program__set_autoload(obs->skel->progs.leap_rss_stat,
				  obs->hook == LEAP_HOOK_TRACEPOINT &&
					  opts->count_swap_cache_hits);
	/* Arming: leap_arm_bio asks for the fault hooks, which are attached
	 * on demand (leap_observer_set_armed()), not with the rest. */
	bpf_program__set_autoload(obs->skel->progs.leap_arm_bio, obs->arming);
	bpf_program__set_autoattach(obs->skel->progs.leap_pf_user, !obs->arming);
	bpf_program__set_autoattach(obs->skel->progs.leap_pf_kernel, !obs->arming);
	bpf_program__set_autoattach(obs->skel->progs.leap_memcg_ev, !obs->arming);
	bpf_program__set_autoattach(obs->skel->progs.leap_rss_stat, !obs->arming);
	obs->skel->rodata->leap_backend_dev = opts->backend_dev;
	obs->skel->rodata->leap_agent_tgid =
		opts->self_tgid ? opts->self_tgid : (__u32)getpid();
	if (opts->ringbuf_bytes)
		bpf_map__set_max_entries(obs->skel->maps.leap_events,
					 opts->ringbuf_bytes);
	obs->skel->rodata->leap_wake_major = !opts->no_wake_on_major;
	obs->skel->rodata->leap_swap_events_only = opts->swap_events_only;
	obs->skel->rodata->leap_wake_delta_max = opts->wake_delta_max;
#if defined(__x86_64__)
	/* Why x86-64 only: bpf/leap_observer.bpf.c, leap_reader_busy. */
	obs->skel->rodata->leap_wake_skip_busy = !opts->wake_when_busy;
#endif
	if (opts->wakeup_bytes == LEAP_WAKEUP_ADAPTIVE) {
		obs->skel->rodata->leap_wakeup_bytes =
			0; /* the BPF side's adaptive mode */
	} else if (opts->wakeup_bytes) {
		obs->skel->rodata->leap_wakeup_bytes = opts->wakeup_bytes;
	} else {
		__u32 ring = bpf_map__max_entries(obs->skel->maps.leap_events);

		obs->skel->rodata->leap_wakeup_bytes =
			LEAP_WAKEUP_DEFAULT < ring / 4 ? LEAP_WAKEUP_DEFAULT : ring / 4;
	}

	return leap_observer_bpf__load(obs->skel);
}

int leap_observer_open(const struct leap_observer_opts *opts, struct leap_observer **out)
{
	static const struct leap_observer_opts defaults;
	struct leap_observer *obs;
	struct btf *vmlinux = NULL;
	const char *read_fn = NULL;
	long page = sysconf(_SC_PAGESIZE);
	char why[256] = "";
	int err, bio_q = 0;
	bool record;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!opts)
		opts = &defaults;
	g_log = opts->log;
	g_log_ctx = opts->log_ctx;
	g_libbpf_debug = opts->libbpf_debug;
	libbpf_set_print(libbpf_print);

	if (opts->ringbuf_bytes &&
	    (!power_of_two(opts->ringbuf_bytes) || opts->ringbuf_bytes < (__u32)page)) {
		leap_log(LEAP_LOG_ERROR,
			 "ring buffer size %u: must be a power of two of at least %ld "
			 "bytes",
			 opts->ringbuf_bytes, page);
		return -EINVAL;
	}
	obs = calloc(1, sizeof(*obs));
	if (!obs)
		return -ENOMEM;
	obs->stats_fd = -1;
	obs->on_event = opts->on_event;
	obs->event_ctx = opts->event_ctx;
	snprintf(obs->pin_dir, sizeof(obs->pin_dir), "%s",
		 opts->pin_dir ? opts->pin_dir : LEAP_PIN_DIR);

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		leap_log(LEAP_LOG_WARN, "cannot read the kernel BTF: %s",
			 strerror(errno));
	else
		read_fn = swap_read_fn(vmlinux);

	/* 1. choose the hook set */
	switch (opts->hook) {
	case LEAP_HOOK_FENTRY:
		err = probe_fentry(vmlinux, read_fn, why, sizeof(why));
		if (err) {
			leap_log(LEAP_LOG_ERROR,
				 "fentry hooks are not available on this kernel (%s); "
				 "use the tracepoint hooks",
				 why);
			err = -EOPNOTSUPP;
			goto fail;
		}
		obs->hook = LEAP_HOOK_FENTRY;
		break;
	case LEAP_HOOK_TRACEPOINT:
		obs->hook = LEAP_HOOK_TRACEPOINT;
		break;
	case LEAP_HOOK_AUTO:
		if (probe_fentry(vmlinux, read_fn, why, sizeof(why)) == 0) {
			obs->hook = LEAP_HOOK_FENTRY;
		} else {
			leap_log(LEAP_LOG_INFO,
				 "fentry hooks unavailable (%s): using tracepoints", why);
			obs->hook = LEAP_HOOK_TRACEPOINT;
		}
		break;
	default:
		err = -EINVAL;
		goto fail;
	}
	if (obs->hook == LEAP_HOOK_TRACEPOINT) {
		err = check_tracepoint(vmlinux);
		if (err)
			goto fail;
	}
	/* The fentry hooks run for swap faults only: nothing to arm.  Backend
	 * mode keeps every hook on (its device reads need the open fault). */
	obs->arming = opts->arm_on_swap && obs->hook == LEAP_HOOK_TRACEPOINT &&
		      !opts->backend_dev;
	if (obs->hook == LEAP_HOOK_FENTRY && !read_fn)
		leap_log(LEAP_LOG_INFO,
			 "no swap_read_folio/swap_readpage in the kernel BTF: "
			 "swap reads are not flagged");

	/* 2. the pin directory, before anything is attached */
	if (!opts->no_pin) {
		err = pin_prepare(obs);
		if (err)
			goto fail;
	}

	/* 3. open, configure, load, attach */
	if (opts->backend_dev) {
		int q = bio_queue_has_queue_arg(vmlinux);

		if (q < 0) {
			leap_log(LEAP_LOG_ERROR, "backend mode: this kernel has no "
						 "block/block_bio_queue tracepoint");
			err = -EOPNOTSUPP;
			goto fail;
		}
		bio_q = q;
	}
	/*
	 * The agent's window recorder is a syscall program (5.14+).  A kernel
	 * whose verifier refuses it costs only the program: the agent then
	 * records with BPF_MAP_UPDATE_BATCH, and what else failed, if
	 * anything, shows in the second load.
	 */
	record = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1;
	g_libbpf_quiet = record && !g_libbpf_debug;
	err = open_and_load(obs, opts, read_fn, bio_q, record, has_shmem_fault(vmlinux));
	g_libbpf_quiet = false;
	if (err && record) {
		leap_observer_bpf__destroy(obs->skel);
		obs->skel = NULL;
		err = open_and_load(obs, opts, read_fn, bio_q, false,
				    has_shmem_fault(vmlinux));
		if (!err)
			leap_log(LEAP_LOG_INFO, "this kernel refuses the leap_record "
						"program: windows are recorded with map "
						"batches");
	}
	if (err) {
		if (!obs->skel)
			goto fail;
		leap_log(LEAP_LOG_ERROR, "loading the %s hooks: %s",
			 leap_observer_hook_name(obs), strerror(-err));
		if (err == -EPERM)
			leap_log(LEAP_LOG_ERROR, "loading BPF programs needs root "
						 "(CAP_BPF + CAP_PERFMON)");
		goto fail;
	}
	err = leap_observer_bpf__attach(obs->skel);
	if (err) {
		leap_log(LEAP_LOG_ERROR, "attaching the %s hooks: %s",
			 leap_observer_hook_name(obs), strerror(-err));
		goto fail;
	}

	/* 4. stats mmap and ring buffer */
	obs->stats_len = sizeof(struct leap_cg_stats) * LEAP_STATS_SLOTS;
	obs->stats_len = (obs->stats_len + (size_t)page - 1) & ~((size_t)page - 1);
	obs->stats = mmap(NULL, obs->stats_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  bpf_map__fd(obs->skel->maps.leap_stats), 0);
	if (obs->stats == MAP_FAILED) {
		err = -errno;
		obs->stats = NULL;
		leap_log(LEAP_LOG_ERROR, "mmap of the stats map: %s", strerror(-err));
		goto fail;
	}
	obs->issued_len = sizeof(struct leap_issued_slot) * LEAP_ISSUED_WINDOWS;
	obs->issued = mmap(NULL, obs->issued_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   bpf_map__fd(obs->skel->maps.leap_issued), 0);
	if (obs->issued == MAP_FAILED) {
		err = -errno;
		obs->issued = NULL;
		leap_log(LEAP_LOG_ERROR, "mmap of the issued-window map: %s",
			 strerror(-err));
		goto fail;
	}
	obs->rb = ring_buffer__new(bpf_map__fd(obs->skel->maps.leap_events), ring_sample,
				   obs, NULL);
	if (!obs->rb) {
		err = -errno;
		leap_log(LEAP_LOG_ERROR, "ring buffer: %s", strerror(-err));
		goto fail;
	}
	if (obs->skel->rodata->leap_wake_skip_busy) {
		obs->ring_wait = leap_ring_wait_open(
			obs->rb, bpf_map__fd(obs->skel->maps.leap_events),
			&obs->skel->bss->leap_reader_busy);
		if (!obs->ring_wait) {
			err = -errno;
			leap_log(LEAP_LOG_ERROR,
				 "mmap of the ring buffer's positions: %s",
				 strerror(-err));
			goto fail;
		}
	}

	/* 5. pins */
	if (!opts->no_pin) {
		err = pin_all(obs);
		if (err)
			goto fail;
	}
	btf__free(vmlinux);
	*out = obs;
	return 0;

fail:
	btf__free(vmlinux);
	leap_observer_close(obs);
	return err < 0 ? err : -EINVAL;
}

/* The fault hooks, in the order they attach: the hooks that close or mark
 * a pending fault first, the ones that open it last. */
static struct bpf_program *fault_prog(struct leap_observer *obs, int i)
{
	struct bpf_program *p[FAULT_HOOKS] = {
		obs->skel->progs.leap_memcg_ev, obs->skel->progs.leap_rss_stat,
		obs->skel->progs.leap_pf_user, obs->skel->progs.leap_pf_kernel};

	return p[i];
}

int leap_observer_set_armed(struct leap_observer *obs, bool on)
{
	int err = 0;

	if (!obs || !obs->arming)
		return 0;
	if (!on) {
		__atomic_store_n(&obs->skel->bss->leap_fault_hooks_on, 0,
				 __ATOMIC_SEQ_CST);
		for (int i = FAULT_HOOKS - 1; i >= 0; i--) {
			bpf_link__destroy(obs->fault_links[i]);
			obs->fault_links[i] = NULL;
		}
		return 0;
	}
	for (int i = 0; i < FAULT_HOOKS && !err; i++) {
		if (obs->fault_links[i] || !bpf_program__autoload(fault_prog(obs, i)))
			continue;
		obs->fault_links[i] = bpf_program__attach(fault_prog(obs, i));
		if (!obs->fault_links[i]) {
			err = -errno;
			leap_log(LEAP_LOG_ERROR, "attaching %s: %s",
				 bpf_program__name(fault_prog(obs, i)), strerror(-err));
		}
	}
	if (err) {
		leap_observer_set_armed(obs, false);
		return err;
	}
	__atomic_store_n(&obs->skel->bss->leap_fault_hooks_on, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int leap_observer_set_arming(struct leap_observer *obs, bool on)
{
	struct bpf_link **link;

	if (!obs || !obs->arming)
		return 0;
	link = &obs->skel->links.leap_arm_bio;
	if (!on) {
		bpf_link__destroy(*link);
		*link = NULL;
		return 0;
	}
	if (*link)
		return 0;
	*link = bpf_program__attach(obs->skel->progs.leap_arm_bio);
	if (!*link) {
		int err = -errno;

		leap_log(LEAP_LOG_ERROR, "attaching leap_arm_bio: %s", strerror(-err));
		return err;
	}
	return 0;
}

int leap_observer_arming(const struct leap_observer *obs)
{
	if (!obs || !obs->arming)
		return -1;
	return obs->skel->links.leap_arm_bio != NULL;
}

int leap_observer_armed(const struct leap_observer *obs)
{
	if (!obs || !obs->arming)
		return -1;
	return obs->fault_links[0] != NULL;
}

void leap_observer_close(struct leap_observer *obs)
{
	if (!obs)
		return;
	if (obs->skel)
		leap_observer_set_armed(obs, false);
	unpin_all(obs);
	leap_ring_wait_close(obs->ring_wait);
	ring_buffer__free(obs->rb);
	if (obs->stats)
		munmap(obs->stats, obs->stats_len);
	if (obs->issued)
		munmap(obs->issued, obs->issued_len);
	if (obs->stats_fd >= 0)
		close(obs->stats_fd);
	leap_observer_bpf__destroy(obs->skel); /* detaches and unloads */
	free(obs);
}

const char *leap_observer_hook_name(const struct leap_observer *obs)
{
	return obs && obs->hook == LEAP_HOOK_FENTRY ? "fentry" : "tracepoint";
}

enum leap_hook leap_observer_hook(const struct leap_observer *obs)
{
	return obs->hook;
}

bool leap_observer_counts_swap_cache_hits(const struct leap_observer *obs)
{
	/* Loaded where open_and_load() decided they are counted. */
	return bpf_program__autoload(obs->skel->progs.leap_rss_stat);
}

/* ---- targets ------------------------------------------------------------------- */

static int check_target(const struct leap_target *t)
{
	if (!t)
		return -EINVAL;
	if (t->stats_slot >= LEAP_STATS_SLOTS) {
		leap_log(LEAP_LOG_ERROR, "stats slot %u out of range (max %u)",
			 t->stats_slot, LEAP_STATS_SLOTS - 1);
		return -ERANGE;
	}
	return 0;
}

/*
 * After any change of leap_cgroups or leap_pids: every cgroup BPF resolved
 * to a target before (leap_cg_match), and every task's cached answer
 * (leap_task_state), is resolved again at its next fault.  The map
 * update has completed when the new generation becomes visible.
 */
static void targets_changed(struct leap_observer *obs)
{
	__atomic_fetch_add(&obs->skel->bss->leap_targets_gen, 1, __ATOMIC_SEQ_CST);
}

int leap_observer_add_cgroup(struct leap_observer *obs, __u64 cgroup_id,
			     const struct leap_target *t)
{
	int err = check_target(t);

	if (err)
		return err;
	if (!cgroup_id)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(obs->skel->maps.leap_cgroups), &cgroup_id, t,
				BPF_ANY)) {
		err = -errno;
		leap_log(LEAP_LOG_ERROR, "adding cgroup %llu: %s",
			 (unsigned long long)cgroup_id, strerror(-err));
		return err;
	}
	obs->stats[t->stats_slot].cgroup_id = cgroup_id;
	targets_changed(obs);
	return 0;
}

int leap_observer_remove_cgroup(struct leap_observer *obs, __u64 cgroup_id)
{
	if (bpf_map_delete_elem(bpf_map__fd(obs->skel->maps.leap_cgroups), &cgroup_id))
		return -errno;
	targets_changed(obs);
	return 0;
}

/* Tgid of a task id from /proc, or -errno. */
static long proc_tgid(__u32 pid)
{
	char path[64], line[256];
	long tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = strtol(line + 5, NULL, 10);
			break;
		}
	}
	fclose(f);
	return tgid;
}

int leap_observer_add_pid(struct leap_observer *obs, __u32 tgid,
			  const struct leap_target *t)
{
	long real;
	int err = check_target(t);

	if (err)
		return err;
	if (!tgid || (kill((pid_t)tgid, 0) && errno == ESRCH)) {
		leap_log(LEAP_LOG_ERROR, "pid %u: no such process", tgid);
		return -ESRCH;
	}
	real = proc_tgid(tgid);
	if (real < 0) {
		leap_log(LEAP_LOG_ERROR, "pid %u: no such process", tgid);
		return (int)real;
	}
	if ((__u32)real != tgid) {
		leap_log(LEAP_LOG_ERROR,
			 "pid %u is a thread of process %ld; give the process id", tgid,
			 real);
		return -EINVAL;
	}
	if (bpf_map_update_elem(bpf_map__fd(obs->skel->maps.leap_pids), &tgid, t,
				BPF_ANY)) {
		err = -errno;
		leap_log(LEAP_LOG_ERROR, "adding pid %u: %s", tgid, strerror(-err));
		return err;
	}
	targets_changed(obs); /* tasks cache their answer (leap_task_state) */
	return 0;
}

int leap_observer_remove_pid(struct leap_observer *obs, __u32 tgid)
{
	if (bpf_map_delete_elem(bpf_map__fd(obs->skel->maps.leap_pids), &tgid))
		return -errno;
	targets_changed(obs);
	bpf_map_delete_elem(bpf_map__fd(obs->skel->maps.leap_last), &tgid);
	return 0;
}

int leap_observer_set_quiet(struct leap_observer *obs, __u32 tid, __u64 until_ns)
{
	int fd = bpf_map__fd(obs->skel->maps.leap_quiet);

	if (until_ns == 0)
		return bpf_map_delete_elem(fd, &tid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &tid, &until_ns, BPF_ANY) ? -errno : 0;
}

int leap_cgroup_id_from_path(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h;
	struct statfs sfs;
	struct stat st;
	int mount_id;

	if (!path || !id)
		return -EINVAL;
	if (stat(path, &st)) {
		int err = -errno;

		leap_log(LEAP_LOG_ERROR, "cgroup %s: %s", path, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		leap_log(LEAP_LOG_ERROR, "cgroup %s: not a directory", path);
		return -ENOTDIR;
	}
	if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		leap_log(LEAP_LOG_ERROR, "cgroup %s: not a cgroup2 directory", path);
		return -EINVAL;
	}
	/* The kernfs file handle of a cgroup2 directory is its 64-bit id. */
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0 &&
	    h.fh.handle_bytes == sizeof(__u64)) {
		memcpy(id, h.fh.f_handle, sizeof(__u64));
		return 0;
	}
	/* On 64-bit kernels the inode number is the same id. */
	*id = (__u64)st.st_ino;
	return 0;
}

/* ---- stats and events ------------------------------------------------------------ */

struct leap_cg_stats *leap_observer_stats(struct leap_observer *obs, __u32 slot)
{
	if (!obs || !obs->stats || slot >= LEAP_STATS_SLOTS)
		return NULL;
	return &obs->stats[slot];
}

struct leap_issued_slot *leap_observer_issued(struct leap_observer *obs)
{
	return obs ? obs->issued : NULL;
}

__u8 *leap_observer_pf_regions(struct leap_observer *obs)
{
	return obs && obs->skel->bss ? obs->skel->bss->leap_pf_regions : NULL;
}

void leap_observer_stats_sum(struct leap_observer *obs, struct leap_cg_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!obs || !obs->stats)
		return;
	for (int i = 0; i < LEAP_STATS_SLOTS; i++) {
		const volatile struct leap_cg_stats *s = &obs->stats[i];

		sum->faults += s->faults;
		sum->swapin_misses += s->swapin_misses;
		sum->events_sent += s->events_sent;
		sum->events_dropped += s->events_dropped;
		sum->prefetches += s->prefetches;
		sum->prefetch_hits += s->prefetch_hits;
		sum->prefetch_wasted += s->prefetch_wasted;
		sum->swapin_unarmed += s->swapin_unarmed;
		sum->swap_cache_hits += s->swap_cache_hits;
	}
}

int leap_observer_poll(struct leap_observer *obs, int timeout_ms)
{
	if (obs->ring_wait)
		return leap_ring_wait_poll(obs->ring_wait, timeout_ms);
	return ring_buffer__poll(obs->rb, timeout_ms);
}

void leap_observer_wakeups(const struct leap_observer *obs, __u64 *sent, __u64 *skipped)
{
	struct leap_wake_counts *per_cpu;
	int ncpus = libbpf_num_possible_cpus();
	__u32 zero = 0;

	*sent = *skipped = 0;
	if (!obs || ncpus <= 0)
		return;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return;
	if (!bpf_map__lookup_elem(obs->skel->maps.leap_wake_counts, &zero, sizeof(zero),
				  per_cpu, ncpus * sizeof(*per_cpu), 0)) {
		for (int i = 0; i < ncpus; i++) {
			*sent += per_cpu[i].sent;
			*skipped += per_cpu[i].skipped;
		}
	}
	free(per_cpu);
}

int leap_observer_consume(struct leap_observer *obs)
{
	return ring_buffer__consume(obs->rb);
}

int leap_observer_epoll_fd(const struct leap_observer *obs)
{
	return ring_buffer__epoll_fd(obs->rb);
}

int leap_observer_map_fd(const struct leap_observer *obs, const char *name)
{
	if (!obs || !name)
		return -EINVAL;
	if (!strcmp(name, "cgroups"))
		return bpf_map__fd(obs->skel->maps.leap_cgroups);
	if (!strcmp(name, "pids"))
		return bpf_map__fd(obs->skel->maps.leap_pids);
	if (!strcmp(name, "stats"))
		return bpf_map__fd(obs->skel->maps.leap_stats);
	if (!strcmp(name, "events"))
		return bpf_map__fd(obs->skel->maps.leap_events);
	if (!strcmp(name, "owner"))
		return bpf_map__fd(obs->skel->maps.leap_owner);
	if (!strcmp(name, "prefetched"))
		return bpf_map__fd(obs->skel->maps.leap_prefetched);
	if (!strcmp(name, "issued"))
		return bpf_map__fd(obs->skel->maps.leap_issued);
	if (!strcmp(name, "record")) {
		int fd = bpf_program__fd(obs->skel->progs.leap_record);

		return fd >= 0 ? fd : -ENOENT;
	}
	if (!strcmp(name, "leaves"))
		return bpf_map__fd(obs->skel->maps.leap_leaves);
	if (!strcmp(name, "match"))
		return bpf_map__fd(obs->skel->maps.leap_cg_match);
	return -ENOENT;
}

/* ---- program stats ---------------------------------------------------------------- */

int leap_observer_enable_prog_stats(struct leap_observer *obs)
{
	int fd;

	if (obs->stats_fd >= 0)
		return 0;
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		int err = -errno;

		leap_log(LEAP_LOG_ERROR, "enabling BPF run-time stats: %s",
			 strerror(-err));
		return err;
	}
	obs->stats_fd = fd;
	return 0;
}

int leap_observer_prog_stats(struct leap_observer *obs, struct leap_prog_stats *out,
			     int max)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, obs->skel->obj)
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (n >= max)
			break;
		if (fd < 0)
			continue; /* not loaded (other hook set) */
		if (bpf_program__type(prog) == BPF_PROG_TYPE_SYSCALL)
			continue; /* run by the agent, not on faults */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		memset(&out[n], 0, sizeof(out[n]));
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(prog));
		out[n].prog_id = info.id;
		out[n].run_time_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		out[n].recursion_misses = info.recursion_misses;
		n++;
	}
	return n;
}
