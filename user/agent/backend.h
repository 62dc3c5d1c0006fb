/* SPDX-License-Identifier: MIT */
/*
 * leap-agent's link to leap-swapd in backend mode: the swap slots of the
 * engine's windows (from pagemap, user/agent/execute.c backend_push) go to
 * leap-swapd's prefetch cache through its control socket
 * (user/swapd/control.c: "PREFETCH SLOT..." -> "OK queued=N dropped=M");
 * and which swap type the device is.
 */
#ifndef LEAP_AGENT_BACKEND_H
#define LEAP_AGENT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "swapslot.h"

/* Pagemap entries of candidates remembered to confirm the swap type. */
#define BACKEND_NOTES 4096
/* Slots in a row that backend mode into the swap cache leaves to the
 * kernel's own (merged) reads instead of pushing (swapslot_drop_runs). */
#define BACKEND_MERGED_RUN 8
/* Reply wait for one command; leap-swapd answers after queueing only. */
#define BACKEND_TIMEOUT_MS 2000

struct backend_stats {
	uint64_t commands;	 /* PREFETCH lines sent */
	uint64_t queued;	 /* slots leap-swapd queued */
	uint64_t dropped;	 /* slots it dropped (its queue was full) */
	uint64_t out_of_range;	 /* candidates beyond the device: never sent */
	uint64_t errors;	 /* failed commands (the link is then closed) */
	uint64_t other_device;	 /* candidates swapped to another swap area */
	uint64_t no_offset;	 /* swapped candidates pagemap showed without a slot */
	uint64_t left_to_kernel; /* slots in runs, read by process_madvise alone */
	uint64_t type_votes;	 /* device reads that confirmed a candidate's type */
	uint64_t type_switches;	 /* times the evidence changed the swap type */
};

/* A candidate's swap entry as pagemap showed it (to check the type). */
struct backend_note {
	uint64_t page;
	uint64_t offset;
	uint32_t tgid;
	uint32_t type;
};

/* PREFETCH commands sent and not yet answered (backend_prefetch_async). */
#define BACKEND_ASYNC_MAX 64
/* Unread reply bytes kept between calls: a few dozen short lines. */
#define BACKEND_RBUF 4096

struct backend {
	int fd;		    /* control socket, -1 once broken */
	char path[108];	    /* for messages */
	uint32_t kdev;	    /* the swap device, kernel dev_t encoding */
	char dev[64];	    /* its path, for messages */
	uint64_t dev_pages; /* slots 1..dev_pages-1 are valid (0: swap header) */
	int swap_type;	    /* the device's swap type (position in /proc/swaps) */
	struct swapslot_votes votes;
	struct backend_note *notes; /* direct-mapped by page */
	struct backend_stats st;
	/* Replies still owed: the slot count of each command, oldest first. */
	uint32_t async_m[BACKEND_ASYNC_MAX];
	uint32_t async_head, async_n;
	char rbuf[BACKEND_RBUF]; /* reply bytes read, not yet a whole line */
	size_t rlen;
};

/*
 * Connects to leap-swapd's control socket and checks that dev is a block
 * device in use as swap; 0, or -errno with a reason in err.
 */
int backend_open(struct backend *b, const char *sock_path, const char *dev, char *err,
		 size_t errlen);
void backend_close(struct backend *b);

/*
 * Pushes these slots (device page indices) to the prefetch cache; out of
 * range ones are skipped (the control protocol refuses a whole batch for
 * one bad slot).  Returns
 * slots queued (>= 0) or -errno when the link broke (then closed: later
 * calls return -ENOTCONN).
 */
int backend_prefetch(struct backend *b, const uint64_t *slots, uint32_t n);

/*
 * The same without waiting for leap-swapd's reply: the command goes out,
 * its reply is read and counted (st.queued, st.dropped; st.errors for a
 * refused batch) by a later call, before any command that waits.  For
 * backend mode into the swap cache, where process_madvise has issued the
 * window already and nobody needs the count: a round trip through
 * leap-swapd's control thread per window delayed the agent's next event.
 * Returns the slots sent, or -errno when the link broke.
 */
int backend_prefetch_async(struct backend *b, const uint64_t *slots, uint32_t n);

/*
 * Remembers that pagemap showed (type, offset) for page of tgid, and, on a
 * read of device slot dev_off by a fault on page, checks it against what
 * was remembered: evidence of which swap type is the device's (swapslot.h:
 * /proc/swaps order is wrong after swapoff left a hole).  confirm returns
 * true when it changed b->swap_type.
 */
void backend_note(struct backend *b, uint32_t tgid, uint64_t page, uint32_t type,
		  uint64_t offset);
bool backend_confirm(struct backend *b, uint32_t tgid, uint64_t page, uint64_t dev_off);

/*
 * One counter from leap-swapd's STATS line (e.g. "hits"); 0 and *v set, or
 * -errno (-ENOENT: no such key).
 */
int backend_stat(struct backend *b, const char *key, uint64_t *v);

/* Pure helpers, unit-tested. */
/* Formats "PREFETCH s1 s2 ...\n" into buf; bytes written, or 0 if too small. */
size_t backend_format_prefetch(char *buf, size_t len, const uint64_t *slots, uint32_t n);
/* Parses "OK queued=N dropped=M"; 0, or -EPROTO (an "ERR ..." line too). */
int backend_parse_reply(const char *line, uint64_t *queued, uint64_t *dropped);
/* Value of key=value in a STATS reply; 0 or -ENOENT / -EPROTO. */
int backend_parse_stat(const char *line, const char *key, uint64_t *v);

#endif
