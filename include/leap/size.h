/* SPDX-License-Identifier: MIT */
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

#endif
