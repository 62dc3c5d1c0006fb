/* SPDX-License-Identifier: MIT */
/* Numbers from command lines and config files. */
#ifndef LEAP_SIZE_H
#define LEAP_SIZE_H

#include <stdint.h>

/*
 * Parses a byte count: decimal digits with an optional K, M, G or T suffix
 * (powers of 1024, either case), optionally followed by "iB" or "B"
 * ("64M", "2GiB", "512kb", "4096").  0 on success, -1 on anything else
 * (sign, garbage, overflow).
 */
int leap_parse_size(const char *s, uint64_t *out);

/*
 * Parses a whole unsigned number in the given strtoull base (0: decimal,
 * 0x hex or 0 octal) that is at most max.  0 on success, -1 otherwise.
 */
int leap_parse_uint(const char *s, int base, unsigned long long max,
		    unsigned long long *out);

#endif
