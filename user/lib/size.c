// SPDX-License-Identifier: MIT
/* Byte counts with binary suffixes, shared by every command line. */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "leap/size.h"

int leap_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (shift) {
		end++;
		if (!strcasecmp(end, "ib") || !strcasecmp(end, "b"))
			end = "";
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int leap_parse_uint(const char *s, int base, unsigned long long max,
		    unsigned long long *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts a sign and leading blanks: a count has neither. */
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}
