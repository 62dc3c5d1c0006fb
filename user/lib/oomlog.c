// SPDX-License-Identifier: MIT
/* Whose allocation invoked an OOM kill (leap/oomlog.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leap/oomlog.h"

void leap_oomlog_init(struct leap_oomlog *l)
{
	memset(l, 0, sizeof(*l));
}

/* Copies at most len bytes of src into dst (size cap), terminated. */
static void copy_span(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The decimal after key in msg, or 0. */
static int32_t number_after(const char *msg, const char *key)
{
	const char *at = strstr(msg, key);

	return at ? (int32_t)strtol(at + strlen(key), NULL, 10) : 0;
}

/* ",oom_memcg=PATH," of the oom-kill line: PATH may hold no comma
 * (cgroup names may, but then the line is ambiguous anyway). */
static void read_memcg(struct leap_oom_kill *k, const char *msg)
{
	const char *at = strstr(msg, ",oom_memcg=");
	const char *end;

	if (!at)
		return;
	at += strlen(",oom_memcg=");
	end = strchr(at, ',');
	copy_span(k->memcg, sizeof(k->memcg), at, end ? (size_t)(end - at) : strlen(at));
}

/* "Killed process PID (COMM) ...": the victim; false if not that line. */
static bool read_victim(struct leap_oom_kill *k, const char *msg)
{
	const char *at = strstr(msg, "Killed process ");
	const char *open, *close;

	if (!at)
		return false;
	at += strlen("Killed process ");
	k->victim_pid = (int32_t)strtol(at, NULL, 10);
	open = strchr(at, '(');
	close = open ? strstr(open, ") ") : NULL;
	if (!close)
		close = open ? strrchr(open, ')') : NULL;
	if (open && close)
		copy_span(k->victim, sizeof(k->victim), open + 1,
			  (size_t)(close - open - 1));
	return true;
}

bool leap_oomlog_feed(struct leap_oomlog *l, const char *msg, struct leap_oom_kill *kill)
{
	const char *inv = strstr(msg, " invoked oom-killer:");

	if (inv) {
		memset(&l->cur, 0, sizeof(l->cur));
		copy_span(l->cur.invoker, sizeof(l->cur.invoker), msg,
			  (size_t)(inv - msg));
		l->in_report = true;
		return false;
	}
	/* dump_stack()'s first line: the invoking thread. */
	if (l->in_report && !l->cur.invoker_pid && strncmp(msg, "CPU: ", 5) == 0) {
		l->cur.invoker_pid = number_after(msg, " PID: ");
		return false;
	}
	if (strncmp(msg, "oom-kill:", 9) == 0) {
		read_memcg(&l->cur, msg);
		return false;
	}
	/* "Memory cgroup out of memory: Killed process ..." (or "Out of
	 * memory: ..."); not "oom_reaper: reaped process". */
	if (strstr(msg, "out of memory: Killed process ") ||
	    strstr(msg, "Out of memory: Killed process ")) {
		if (!read_victim(&l->cur, msg))
			return false;
		*kill = l->cur;
		memset(&l->cur, 0, sizeof(l->cur));
		l->in_report = false;
		return true;
	}
	return false;
}

bool leap_oomlog_memcg_has(const char *memcg, const char *name)
{
	size_t n = strlen(name);

	if (!n)
		return false;
	for (const char *p = memcg; (p = strstr(p, name)) != NULL; p++) {
		bool starts = p == memcg || p[-1] == '/';
		bool ends = p[n] == '\0' || p[n] == '/';

		if (starts && ends)
			return true;
	}
	return false;
}
