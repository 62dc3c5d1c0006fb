// SPDX-License-Identifier: MIT
/* Registration traces: the text format and the synthetic generators
 * (include/leap/regtrace.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leap/regtrace.h"

static int parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno || end == s || (*end && !isspace((unsigned char)*end)))
		return -1;
	*out = v;
	*p = end;
	return 0;
}

int leap_regtrace_parse(const char *line, struct leap_regtrace_rec *rec)
{
	const char *p = line;
	uint64_t client = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n' || *p == '#')
		return 0;
	if ((*p != 'r' && *p != 'u') || (p[1] != ' ' && p[1] != '\t'))
		return -1;
	rec->op = *p == 'r' ? LEAP_REGTRACE_REF : LEAP_REGTRACE_UNMAP;
	p++;
	if (parse_u64(&p, &rec->addr) || parse_u64(&p, &rec->len))
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p && *p != '\n') {
		if (rec->op != LEAP_REGTRACE_REF || parse_u64(&p, &client) ||
		    client >= LEAP_REGTRACE_MAX_CLIENTS)
			return -1;
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p)
			return -1;
	}
	if (!rec->len || rec->addr + rec->len < rec->addr)
		return -1;
	rec->client = (uint32_t)client;
	return 1;
}

int leap_regtrace_format(const struct leap_regtrace_rec *rec, char *buf, size_t len)
{
	int n;

	if (rec->op == LEAP_REGTRACE_REF && rec->client)
		n = snprintf(buf, len, "r 0x%" PRIx64 " %" PRIu64 " %" PRIu32 "\n",
			     rec->addr, rec->len, rec->client);
	else
		n = snprintf(buf, len, "%c 0x%" PRIx64 " %" PRIu64 "\n", (char)rec->op,
			     rec->addr, rec->len);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

static const char *const kind_names[] = {"repeat",  "sliding", "random",
					 "overlap", "clients", "unmap"};

int leap_regtrace_kind_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof(kind_names) / sizeof(kind_names[0])); i++)
		if (!strcmp(name, kind_names[i]))
			return i;
	return -1;
}

const char *leap_regtrace_kind_name(enum leap_regtrace_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k]
									: "?";
}

/* splitmix64: small, seedable, good enough for workloads */
static uint64_t rnd(struct leap_regtrace_gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct leap_regtrace_gen *g, uint64_t n)
{
	return n ? rnd(g) % n : 0;
}

int leap_regtrace_gen_init(struct leap_regtrace_gen *g)
{
	uint64_t slot;

	if (!g->ops)
		g->ops = 100000;
	if (!g->space)
		g->space = 1ULL << 30;
	if (!g->base)
		g->base = 0x10000000;
	if (!g->max_len)
		g->max_len = 256 * 1024;
	if (!g->page)
		g->page = 4096;
	if (!g->buffers)
		g->buffers = 256;
	if (!g->clients)
		g->clients = 4;
	if (!g->seed)
		g->seed = 1;
	g->done = g->pos = 0;
	g->rng = g->seed;
	g->buf_addr = g->buf_len = NULL;
	if ((unsigned)g->kind > LEAP_GEN_UNMAP || (g->page & (g->page - 1)) ||
	    g->max_len < g->page || g->max_len > g->space / 2 ||
	    g->base + g->space < g->base || g->clients > LEAP_REGTRACE_MAX_CLIENTS ||
	    g->buffers > 1u << 20)
		return -1;
	/* buffers: one per slot, half a slot long at most, in its middle so
	 * the overlap kind can grow them either way */
	slot = g->space / g->buffers / g->page * g->page;
	if (slot < 2 * g->page)
		return -1;
	g->buf_addr = calloc(g->buffers, sizeof(uint64_t));
	g->buf_len = calloc(g->buffers, sizeof(uint64_t));
	if (!g->buf_addr || !g->buf_len) {
		leap_regtrace_gen_free(g);
		return -1;
	}
	for (uint32_t i = 0; i < g->buffers; i++) {
		uint64_t maxl = g->max_len < slot / 2 ? g->max_len : slot / 2;
		uint64_t len = (1 + below(g, maxl / g->page)) * g->page;

		g->buf_len[i] = len > maxl ? maxl : len;
		g->buf_addr[i] = g->base + i * slot + (slot / 4) / g->page * g->page;
	}
	return 0;
}

void leap_regtrace_gen_free(struct leap_regtrace_gen *g)
{
	free(g->buf_addr);
	free(g->buf_len);
	g->buf_addr = g->buf_len = NULL;
}

/* Skewed choice: half the time from the hottest eighth. */
static uint32_t pick_buffer(struct leap_regtrace_gen *g)
{
	if (rnd(g) & 1)
		return (uint32_t)below(g, g->buffers / 8 + 1);
	return (uint32_t)below(g, g->buffers);
}

bool leap_regtrace_gen_next(struct leap_regtrace_gen *g, struct leap_regtrace_rec *rec)
{
	uint32_t b;

	if (g->done >= g->ops)
		return false;
	g->done++;
	rec->op = LEAP_REGTRACE_REF;
	rec->client = 0;
	switch (g->kind) {
	case LEAP_GEN_REPEAT:
	case LEAP_GEN_UNMAP:
		b = pick_buffer(g);
		rec->addr = g->buf_addr[b];
		rec->len = g->buf_len[b];
		if (g->kind == LEAP_GEN_UNMAP && below(g, 100) < 2)
			rec->op = LEAP_REGTRACE_UNMAP; /* freed; mapped again later */
		break;
	case LEAP_GEN_SLIDING: {
		uint64_t step = g->max_len / 4 / g->page * g->page;

		rec->len = g->max_len;
		rec->addr = g->base + g->pos;
		g->pos += step ? step : g->page;
		if (g->pos + g->max_len > g->space)
			g->pos = 0;
		break;
	}
	case LEAP_GEN_RANDOM:
		rec->len = 1 + below(g, g->max_len);
		rec->addr = g->base + below(g, g->space - rec->len);
		break;
	case LEAP_GEN_OVERLAP: {
		uint64_t len, grow;

		b = pick_buffer(g);
		len = g->buf_len[b];
		grow = (1 + below(g, len / g->page / 2 + 1)) * g->page;
		switch (below(g, 4)) {
		case 0: /* whole */
			rec->addr = g->buf_addr[b];
			rec->len = len;
			break;
		case 1: /* a part */
			rec->addr = g->buf_addr[b] + below(g, len);
			rec->len = 1 + below(g, g->buf_addr[b] + len - rec->addr);
			break;
		case 2: /* grown downwards */
			rec->addr = g->buf_addr[b] - grow;
			rec->len = len + grow;
			break;
		default: /* grown upwards, unaligned end */
			rec->addr = g->buf_addr[b];
			rec->len = len + grow - below(g, g->page);
			break;
		}
		break;
	}
	case LEAP_GEN_CLIENTS: {
		uint32_t c = (uint32_t)below(g, g->clients);
		uint64_t hot = g->space / g->clients;

		rec->client = c;
		rec->len = 1 + below(g, g->max_len);
		if (c == 0 || hot < 8 * g->max_len) {
			/* streams through all the memory, far past its share */
			if (g->pos + rec->len > g->space)
				g->pos = 0;
			rec->addr = g->base + g->pos;
			g->pos += rec->len;
		} else {
			/* a hot set of 8 max_len windows in the client's slice */
			rec->addr =
				g->base + c * hot + below(g, 8 * g->max_len - rec->len);
		}
		break;
	}
	}
	return true;
}
