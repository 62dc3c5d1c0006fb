// SPDX-License-Identifier: MIT
/* Policy parameters: defaults, validation and names. */
#include <string.h>

#include "leap/engine.h"

void leap_params_default(struct leap_params *p)
{
	p->hsize = LEAP_DEFAULT_HSIZE;
	p->nsplit = LEAP_DEFAULT_NSPLIT;
	p->pw_max = LEAP_DEFAULT_PW_MAX;
	p->max_delta = LEAP_DEFAULT_MAX_DELTA;
	p->flavor = LEAP_FLAVOR_OURS;
	p->key = LEAP_KEY_PROCESS;
	p->lanes = LEAP_DEFAULT_LANES;
}

int leap_params_validate(const struct leap_params *p, const char **why)
{
	const char *err = NULL;

	if (p->hsize < 2 || p->hsize > LEAP_HSIZE_MAX)
		err = "hsize must be between 2 and 256";
	else if (p->nsplit < 1 || p->nsplit > p->hsize)
		err = "nsplit must be between 1 and hsize";
	else if (p->pw_max < 1 || p->pw_max > LEAP_PW_LIMIT)
		err = "pw_max must be between 1 and 1024";
	else if (p->flavor != LEAP_FLAVOR_OURS && p->flavor != LEAP_FLAVOR_PAPER)
		err = "unknown flavor";
	else if (p->key != LEAP_KEY_PROCESS && p->key != LEAP_KEY_THREAD &&
		 p->key != LEAP_KEY_CGROUP)
		err = "unknown stream key";
	else if (p->lanes < 1 || p->lanes > LEAP_LANES_MAX)
		err = "lanes must be between 1 and 8";
	if (why)
		*why = err;
	return err ? -1 : 0;
}

static const char *const flavor_names[] = {
	[LEAP_FLAVOR_OURS] = "ours",
	[LEAP_FLAVOR_PAPER] = "paper",
};

static const char *const key_names[] = {
	[LEAP_KEY_PROCESS] = "process",
	[LEAP_KEY_THREAD] = "thread",
	[LEAP_KEY_CGROUP] = "cgroup",
};

const char *leap_flavor_name(enum leap_flavor f)
{
	return (unsigned)f < 2 ? flavor_names[f] : "?";
}

const char *leap_stream_key_name(enum leap_stream_key k)
{
	return (unsigned)k < 3 ? key_names[k] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

int leap_flavor_parse(const char *s, enum leap_flavor *out)
{
	int i = lookup(flavor_names, 2, s);

	if (i < 0)
		return -1;
	*out = (enum leap_flavor)i;
	return 0;
}

int leap_stream_key_parse(const char *s, enum leap_stream_key *out)
{
	int i = lookup(key_names, 3, s);

	if (i < 0)
		return -1;
	*out = (enum leap_stream_key)i;
	return 0;
}
