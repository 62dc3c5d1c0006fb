/* SPDX-License-Identifier: MIT */
/* placeholder */
#ifndef LEAP_REGTRACE_H
#define LEAP_REGTRACE_H
#endif
