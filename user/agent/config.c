// SPDX-License-Identifier: MIT
/*
 * Policy file parser.  Example:
 *
 *   [agent]
 *   ring_kb = 4096
 *   workers = 2          ; threads issuing windows (0: the event thread)
 *   queue_depth = 64     ; windows a target may have waiting for them (1-64)
 *   prefetch_rate = 0    ; pages/s all targets may prefetch (0: no cap)
 *   memcg_flush_ms = 50  ; a swapping target's memory.stat read this often
 *                        ; (memflush.h; 0: never)
 *   sweeps = on          ; shared regions read by several processes at once
 *                        ; followed where the data is (leap/sweep.h) | off
 *   [default]
 *   mode = leap          ; leap | observe | off
 *   hsize = 32
 *   lanes = 4            ; streams interleaved in one process followed apart
 *   [cgroup /sys/fs/cgroup/unified/db.slice]
 *   mode = observe       ; the slice and every cgroup below it ...
 *   [cgroup /sys/fs/cgroup/unified/db.slice/pg.service]
 *   pw_max = 64          ; ... but the most specific section wins here;
 *                        ; unset keys come from [default], wherever it is
 *   match = exact        ; tree (default) | exact: this cgroup only
 *   cold_behind = 0      ; pages behind a fill made cold (0: off)
 *   prefetch_rate = 20000 ; pages/s this target may prefetch (0: no cap)
 *   stand_down = never   ; auto (default): stop where prefetching costs more
 *                        ; than it saves (include/leap/cost.h) | never
 *   outcome = judge      ; judge | off: with stand_down, also stop where held
 *                        ; epochs run as fast (include/leap/outcome.h)
 *
 * libinih does the lexing; the handler validates every key and value and
 * remembers the first error with its line, so a bad file is refused with a
 * precise message instead of being half applied.
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "issuer.h" /* the workers' and queues' limits */

enum key_bit {
	K_MODE = 1 << 0,
	K_HSIZE = 1 << 1,
	K_NSPLIT = 1 << 2,
	K_PW_MAX = 1 << 3,
	K_MAX_DELTA = 1 << 4,
	K_STREAM = 1 << 5,
	K_FLAVOR = 1 << 6,
	K_MATCH = 1 << 7,
	K_COLD_BEHIND = 1 << 8,
	K_STAND_DOWN = 1 << 9,
	K_RATE = 1 << 10,
	K_OUTCOME = 1 << 11,
	K_LANES = 1 << 12,
};

struct parse_state {
	struct agent_config *c;
	unsigned set[AGENT_MAX_CGROUP_POLICIES]; /* keys given per cgroup section */
	char section[PATH_MAX + 16];
	int line; /* current line, counted by the reader */
	const char *name;
	char *err;
	size_t errlen;
	int failed;
};

static const char *const mode_names[] = {"leap", "observe", "off"};

const char *agent_mode_name(enum agent_mode m)
{
	return (unsigned)m < 3 ? mode_names[m] : "?";
}

int agent_mode_parse(const char *s, enum agent_mode *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*out = (enum agent_mode)i;
			return 0;
		}
	return -1;
}

void agent_config_default(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->def.mode = AGENT_MODE_LEAP;
	leap_params_default(&c->def.params);
	c->def.cold_behind = AGENT_DEFAULT_COLD_BEHIND;
	c->def.stand_down = true;
	c->def.judge_outcome = AGENT_DEFAULT_JUDGE_OUTCOME;
	c->ring_kb = 4096;
	c->streams = 4096;
	c->idle_timeout_s = 60;
	c->workers = AGENT_WORKERS_AUTO;
	c->queue_depth = ISSUER_QUEUE_MAX;
	c->memcg_flush_ms = AGENT_MEMCG_FLUSH_MS;
	c->sweeps = true;
}

static int fail(struct parse_state *st, const char *fmt, const char *a, const char *b)
{
	if (!st->failed) {
		char msg[512];

		snprintf(msg, sizeof(msg), fmt, a, b);
		snprintf(st->err, st->errlen, "%s:%d: %s", st->name, st->line, msg);
		st->failed = 1;
	}
	return 0; /* tells inih to report this line */
}

/* Unsigned in [lo, hi]; the whole string must be a number. */
static int parse_uint(const char *v, unsigned long long lo, unsigned long long hi,
		      unsigned long long *out)
{
	char *end;
	unsigned long long x;

	if (*v == '-' || *v == '\0')
		return -1;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int set_policy_key(struct parse_state *st, struct agent_policy *p, unsigned *mask,
			  const char *key, const char *v)
{
	unsigned long long x;

	if (strcmp(key, "mode") == 0) {
		if (agent_mode_parse(v, &p->mode))
			return fail(st, "mode must be leap, observe or off, not '%s'%s",
				    v, "");
		*mask |= K_MODE;
	} else if (strcmp(key, "hsize") == 0) {
		if (parse_uint(v, 2, LEAP_HSIZE_MAX, &x))
			return fail(st, "hsize must be 2..256, not '%s'%s", v, "");
		p->params.hsize = (uint32_t)x;
		*mask |= K_HSIZE;
	} else if (strcmp(key, "nsplit") == 0) {
		if (parse_uint(v, 1, LEAP_HSIZE_MAX, &x))
			return fail(st, "nsplit must be 1..256, not '%s'%s", v, "");
		p->params.nsplit = (uint32_t)x;
		*mask |= K_NSPLIT;
	} else if (strcmp(key, "pw_max") == 0) {
		if (parse_uint(v, 1, LEAP_PW_LIMIT, &x))
			return fail(st, "pw_max must be 1..1024, not '%s'%s", v, "");
		p->params.pw_max = (uint32_t)x;
		*mask |= K_PW_MAX;
	} else if (strcmp(key, "max_delta") == 0) {
		if (parse_uint(v, 0, 1ULL << 40, &x))
			return fail(st,
				    "max_delta must be 0 (no cap) or a page count, not "
				    "'%s'%s",
				    v, "");
		p->params.max_delta = x;
		*mask |= K_MAX_DELTA;
	} else if (strcmp(key, "lanes") == 0) {
		if (parse_uint(v, 1, LEAP_LANES_MAX, &x))
			return fail(st,
				    "lanes must be 1 (one history per stream key) to 8, "
				    "not '%s'%s",
				    v, "");
		p->params.lanes = (uint32_t)x;
		*mask |= K_LANES;
	} else if (strcmp(key, "cold_behind") == 0) {
		if (parse_uint(v, 0, 1u << 20, &x))
			return fail(st,
				    "cold_behind must be 0 (off) or a page count up to "
				    "1048576, not '%s'%s",
				    v, "");
		p->cold_behind = (uint32_t)x;
		*mask |= K_COLD_BEHIND;
	} else if (strcmp(key, "stream") == 0) {
		if (leap_stream_key_parse(v, &p->params.key))
			return fail(
				st,
				"stream must be process, thread or cgroup, not '%s'%s", v,
				"");
		*mask |= K_STREAM;
	} else if (strcmp(key, "match") == 0) {
		if (strcmp(v, "tree") && strcmp(v, "exact"))
			return fail(st, "match must be tree or exact, not '%s'%s", v, "");
		p->exact = strcmp(v, "exact") == 0;
		*mask |= K_MATCH;
	} else if (strcmp(key, "prefetch_rate") == 0) {
		if (parse_uint(v, 0, 1u << 30, &x))
			return fail(
				st,
				"prefetch_rate must be 0 (no cap) or pages per second, "
				"not '%s'%s",
				v, "");
		p->prefetch_rate = (uint32_t)x;
		*mask |= K_RATE;
	} else if (strcmp(key, "stand_down") == 0) {
		if (strcmp(v, "auto") && strcmp(v, "never"))
			return fail(st, "stand_down must be auto or never, not '%s'%s", v,
				    "");
		p->stand_down = strcmp(v, "auto") == 0;
		*mask |= K_STAND_DOWN;
	} else if (strcmp(key, "outcome") == 0) {
		if (strcmp(v, "judge") && strcmp(v, "off"))
			return fail(st, "outcome must be judge or off, not '%s'%s", v,
				    "");
		p->judge_outcome = strcmp(v, "judge") == 0;
		*mask |= K_OUTCOME;
	} else if (strcmp(key, "flavor") == 0) {
		if (leap_flavor_parse(v, &p->params.flavor))
			return fail(st, "flavor must be ours or paper, not '%s'%s", v,
				    "");
		*mask |= K_FLAVOR;
	} else {
		return fail(st, "unknown key '%s' in [%s]", key, st->section);
	}
	return 1;
}

static int set_agent_key(struct parse_state *st, const char *key, const char *v)
{
	static const struct {
		const char *name;
		unsigned long long lo, hi;
		size_t off;
	} keys[] = {
		{"ring_kb", 64, 1 << 20, offsetof(struct agent_config, ring_kb)},
		{"streams", 1, 1 << 20, offsetof(struct agent_config, streams)},
		{"idle_timeout_s", 1, 86400,
		 offsetof(struct agent_config, idle_timeout_s)},
		{"workers", 0, ISSUER_WORKERS_MAX,
		 offsetof(struct agent_config, workers)},
		{"queue_depth", 1, ISSUER_QUEUE_MAX,
		 offsetof(struct agent_config, queue_depth)},
		{"prefetch_rate", 0, 1 << 30,
		 offsetof(struct agent_config, prefetch_rate)},
		{"memcg_flush_ms", 0, 10000,
		 offsetof(struct agent_config, memcg_flush_ms)},
	};
	unsigned long long x;

	if (strcmp(key, "sweeps") == 0) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			return fail(st, "bad value '%s' for sweeps (on or off)%s", v, "");
		st->c->sweeps = strcmp(v, "on") == 0;
		return 1;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(key, keys[i].name))
			continue;
		if (parse_uint(v, keys[i].lo, keys[i].hi, &x)) {
			char what[128];

			snprintf(what, sizeof(what), "%s (a number from %llu to %llu)",
				 key, keys[i].lo, keys[i].hi);
			return fail(st, "bad value '%s' for %s", v, what);
		}
		*(unsigned *)((char *)st->c + keys[i].off) = (unsigned)x;
		return 1;
	}
	return fail(st, "unknown key '%s' in [%s]", key, "agent");
}

/* A new section header was seen: classify it. */
static int enter_section(struct parse_state *st, const char *section)
{
	struct agent_config *c = st->c;

	snprintf(st->section, sizeof(st->section), "%s", section);
	if (strcmp(section, "agent") == 0 || strcmp(section, "default") == 0)
		return 1;
	if (strncmp(section, "cgroup ", 7) == 0) {
		const char *path = section + 7;

		while (*path == ' ')
			path++;
		if (*path != '/')
			return fail(st, "cgroup section needs an absolute path: [%s]%s",
				    section, "");
		size_t len = strlen(path);

		if (len >= PATH_MAX)
			return fail(st, "cgroup path too long in [%s]%s", "cgroup", "");
		for (int i = 0; i < c->ncgroups; i++)
			if (strcmp(c->cgroups[i].path, path) == 0)
				return fail(st, "duplicate section [%s]%s", section, "");
		if (c->ncgroups == AGENT_MAX_CGROUP_POLICIES)
			return fail(st, "more than %s cgroup sections%s", "64", "");
		memcpy(c->cgroups[c->ncgroups].path, path, len + 1);
		c->cgroups[c->ncgroups].line = st->line;
		c->ncgroups++;
		return 1;
	}
	return fail(st, "unknown section [%s] (expected agent, default or cgroup PATH)%s",
		    section, "");
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	struct agent_config *c = st->c;

	/* Sections were classified by the reader (see read_line). */
	(void)section;
	if (st->failed)
		return 0;
	if (st->section[0] == '\0')
		return fail(st, "'%s' outside any section (start with [default])%s", name,
			    "");
	if (strcmp(st->section, "agent") == 0)
		return set_agent_key(st, name, value);
	if (strcmp(st->section, "default") == 0) {
		unsigned ignored = 0;

		return set_policy_key(st, &c->def, &ignored, name, value);
	}
	return set_policy_key(st, &c->cgroups[c->ncgroups - 1].policy,
			      &st->set[c->ncgroups - 1], name, value);
}

/* Gives every cgroup policy the [default] values it did not set itself. */
static void inherit_defaults(struct parse_state *st)
{
	struct agent_config *c = st->c;

	for (int i = 0; i < c->ncgroups; i++) {
		struct agent_policy *p = &c->cgroups[i].policy;
		const struct agent_policy *d = &c->def;
		unsigned m = st->set[i];

		if (!(m & K_MODE))
			p->mode = d->mode;
		if (!(m & K_HSIZE))
			p->params.hsize = d->params.hsize;
		if (!(m & K_NSPLIT))
			p->params.nsplit = d->params.nsplit;
		if (!(m & K_PW_MAX))
			p->params.pw_max = d->params.pw_max;
		if (!(m & K_MAX_DELTA))
			p->params.max_delta = d->params.max_delta;
		if (!(m & K_LANES))
			p->params.lanes = d->params.lanes;
		if (!(m & K_STREAM))
			p->params.key = d->params.key;
		if (!(m & K_FLAVOR))
			p->params.flavor = d->params.flavor;
		if (!(m & K_MATCH))
			p->exact = d->exact;
		if (!(m & K_COLD_BEHIND))
			p->cold_behind = d->cold_behind;
		if (!(m & K_STAND_DOWN))
			p->stand_down = d->stand_down;
		if (!(m & K_OUTCOME))
			p->judge_outcome = d->judge_outcome;
		if (!(m & K_RATE))
			p->prefetch_rate = d->prefetch_rate;
	}
}

static int validate(struct parse_state *st)
{
	struct agent_config *c = st->c;
	const char *why;

	if (leap_params_validate(&c->def.params, &why)) {
		snprintf(st->err, st->errlen, "%s: [default]: %s", st->name, why);
		return -1;
	}
	for (int i = 0; i < c->ncgroups; i++)
		if (leap_params_validate(&c->cgroups[i].policy.params, &why)) {
			snprintf(st->err, st->errlen, "%s:%d: [cgroup %s]: %s", st->name,
				 c->cgroups[i].line, c->cgroups[i].path, why);
			return -1;
		}
	return 0;
}

/*
 * Line-counting reader.  It also classifies section headers itself: the
 * Debian build of libinih calls the handler only for keys, so an empty or
 * misspelt section would otherwise pass unnoticed.  Header syntax as inih
 * reads it: '[' after leading blanks, the name runs to the first ']'.
 */
static void see_section(struct parse_state *st, const char *line)
{
	char name[sizeof(st->section)];
	const char *end;
	size_t n;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '[' || !(end = strchr(line, ']')))
		return;
	n = (size_t)(end - line - 1);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, line + 1, n);
	name[n] = '\0';
	enter_section(st, name);
}

struct line_reader {
	struct parse_state *st;
	const char *text; /* string input */
	FILE *f;	  /* or file input */
};

static char *read_line(char *buf, int size, void *stream)
{
	struct line_reader *r = stream;
	char *got;

	if (r->f) {
		got = fgets(buf, size, r->f);
	} else {
		const char *nl;
		size_t n;

		if (!*r->text)
			return NULL;
		nl = strchr(r->text, '\n');
		n = nl ? (size_t)(nl - r->text + 1) : strlen(r->text);
		if (n >= (size_t)size)
			n = (size_t)size - 1;
		memcpy(buf, r->text, n);
		buf[n] = '\0';
		r->text += n;
		got = buf;
	}
	if (!got || r->st->failed)
		return NULL; /* stop at the first error */
	r->st->line++;
	see_section(r->st, got);
	return r->st->failed ? NULL : got;
}

static int parse(struct line_reader *r, const char *name, struct agent_config *c,
		 char *err, size_t errlen)
{
	struct parse_state st = {.c = c, .name = name, .err = err, .errlen = errlen};
	int rc;

	r->st = &st;
	agent_config_default(c);
	rc = ini_parse_stream(read_line, r, handler, &st);
	if (st.failed)
		return -1;
	if (rc != 0) {
		snprintf(err, errlen,
			 "%s:%d: syntax error (expected [section] or key = value)", name,
			 rc);
		return -1;
	}
	inherit_defaults(&st);
	return validate(&st);
}

int agent_config_parse_string(const char *text, const char *name, struct agent_config *c,
			      char *err, size_t errlen)
{
	struct line_reader r = {.text = text};

	return parse(&r, name, c, err, errlen);
}

int agent_config_load(const char *path, struct agent_config *c, char *err, size_t errlen)
{
	struct line_reader r = {0};
	int rc;

	r.f = fopen(path, "re");
	if (!r.f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = parse(&r, path, c, err, errlen);
	fclose(r.f);
	return rc;
}

const struct agent_policy *agent_config_policy_for(const struct agent_config *c,
						   const char *cgroup_path)
{
	for (int i = 0; cgroup_path && i < c->ncgroups; i++)
		if (strcmp(c->cgroups[i].path, cgroup_path) == 0)
			return &c->cgroups[i].policy;
	return &c->def;
}
